"""Fixtures of the unit tests that talk to the in-process fake API server (test_client_fake_apiserver)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cluster.client import Client
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer, running_fake


@pytest.fixture
async def fake() -> AsyncIterator[FakeApiServer]:
    async with running_fake() as server:
        yield server


@pytest.fixture
async def client(fake: FakeApiServer) -> AsyncIterator[Client]:
    """A client of ``fake`` that retries quickly."""
    async with Client(fake.address, timeout_s=5.0, retry_policy=FAST_RETRIES) as result:
        yield result
