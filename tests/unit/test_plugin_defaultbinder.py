"""DefaultBinder: binds through the API client; API errors become ERROR statuses."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

from cluster.api import errors
from scheduler.framework import BindPlugin, CycleState, PodInfo
from scheduler.plugins import defaultbinder
from tests.builders import pod
from tests.unit.framework_fakes import Snapshot, fake_handle


def binder(side_effect: Any = None) -> tuple[Any, mock.AsyncMock]:
    client = mock.Mock()
    client.bind = mock.AsyncMock(side_effect=side_effect)
    handle = fake_handle(Snapshot([]), client=client)
    return defaultbinder.new(None, handle), client.bind


async def test_binds_through_the_client() -> None:
    plugin, bind = binder()
    assert isinstance(plugin, BindPlugin)
    status = await plugin.bind(CycleState(), PodInfo(pod(name="web", namespace="shop")), "node-a")
    assert status is None
    bind.assert_awaited_once_with("shop", "web", "node-a")


@pytest.mark.parametrize(
    "error",
    [errors.Conflict('pods "web" is already assigned'), errors.NotFound('pods "web" not found')],
    ids=["conflict", "not-found"],
)
async def test_api_errors_become_error_statuses(error: errors.ApiError) -> None:
    plugin, _ = binder(error)
    status = await plugin.bind(CycleState(), PodInfo(pod(name="web")), "node-a")
    assert status is not None and status.is_error
    assert status.error is error
    assert status.reasons == (error.message,)
