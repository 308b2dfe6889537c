"""When a replica answers a ping of its LeaseCandidate: only a pingTime newer than its renewTime."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from scheduler.leaderelection.candidate import pinged


def _candidate(renew: tuple[int, int], ping: tuple[int, int] | None) -> objects_pb2.LeaseCandidate:
    candidate = objects_pb2.LeaseCandidate()
    candidate.spec.renew_time.seconds, candidate.spec.renew_time.nanos = renew
    if ping is not None:
        candidate.spec.ping_time.seconds, candidate.spec.ping_time.nanos = ping
    return candidate


@pytest.mark.parametrize(("renew", "ping", "expected"), [
    ((100, 0), None, False),
    ((100, 0), (99, 999_999_000), False),
    ((100, 0), (100, 0), False),
    ((100, 0), (100, 1_000), True),
    ((100, 5_000), (101, 0), True),
])
def test_only_a_newer_ping_asks_for_a_renewal(
    renew: tuple[int, int], ping: tuple[int, int] | None, expected: bool
) -> None:
    assert pinged(_candidate(renew, ping)) is expected
