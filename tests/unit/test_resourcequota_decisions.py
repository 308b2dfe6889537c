"""The resource quota controller's decisions, without a server: the status a recount gives, and when a
recount is written (at once when it raises or completes usage; a lower one only once the quota has
stayed at one version for the settle time)."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from cluster.controllers.resourcequota import Verdict, counted_status, judge

SETTLE_S = 5.0
NOW = 1000.0


def status(hard: dict[str, str], used: dict[str, str]) -> objects_pb2.ResourceQuotaStatus:
    return objects_pb2.ResourceQuotaStatus(hard=hard, used=used)


def test_the_counted_status_has_the_spec_limits_and_the_count_of_each() -> None:
    quota = objects_pb2.ResourceQuota()
    quota.spec.hard.update({"pods": "10", "count/pods": "12"})
    assert counted_status(quota, 3) == status({"pods": "10", "count/pods": "12"},
                                              {"pods": "3", "count/pods": "3"})
    assert counted_status(objects_pb2.ResourceQuota(), 3) == status({}, {})


P2 = {"pods": "2"}


def used(count: str) -> dict[str, str]:
    return {"pods": count}


@pytest.mark.parametrize(
    ("stored", "counted", "lower_since", "verdict", "wait_s"),
    [
        # The stored status is right: nothing to write.
        (status(P2, used("1")), status(P2, used("1")), None, Verdict.CURRENT, 0.0),
        (status(P2, used("01")), status(P2, used("1")), None, Verdict.CURRENT, 0.0),
        (status({}, {}), status({}, {}), None, Verdict.CURRENT, 0.0),
        # Usage too low (or unknown) is raised at once: never unsafe.
        (status(P2, used("0")), status(P2, used("1")), None, Verdict.WRITE, 0.0),
        (status(P2, {}), status(P2, used("0")), None, Verdict.WRITE, 0.0),
        # Status hard limits behind the spec: written at once.
        (status(P2, used("1")), status({"pods": "3"}, used("1")), None, Verdict.WRITE, 0.0),
        # Usage too high: first seen now, so wait the settle time ...
        (status(P2, used("2")), status(P2, used("1")), None, Verdict.WAIT, SETTLE_S),
        # ... and what is left of it when seen before ...
        (status(P2, used("2")), status(P2, used("1")), NOW - 2.0, Verdict.WAIT, SETTLE_S - 2.0),
        # ... then write it.
        (status(P2, used("2")), status(P2, used("1")), NOW - SETTLE_S, Verdict.WRITE, 0.0),
        (status(P2, used("2")), status(P2, used("0")), NOW - 60.0, Verdict.WRITE, 0.0),
        # A new limit and a lower count together still wait for the lower count to settle.
        (status(P2, used("2")), status({"pods": "2", "count/pods": "2"}, {"pods": "1", "count/pods": "1"}),
         None, Verdict.WAIT, SETTLE_S),
    ],
    ids=["equal", "equal-as-numbers", "no-limits", "raise", "unknown-used", "hard-changed",
         "lower-first-seen", "lower-settling", "lower-settled", "lower-long-ago", "new-limit-and-lower"],
)
def test_judge(
    stored: objects_pb2.ResourceQuotaStatus,
    counted: objects_pb2.ResourceQuotaStatus,
    lower_since: float | None,
    verdict: Verdict,
    wait_s: float,
) -> None:
    assert judge(stored, counted, lower_since, NOW, SETTLE_S) == (verdict, pytest.approx(wait_s))
