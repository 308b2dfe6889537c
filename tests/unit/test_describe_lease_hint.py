"""`podsched describe pod` on a pod no scheduler has looked at: what the scheduler Lease says, judged on
the describing machine's clock, and how the hint sits under Events."""

from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.cli.leasehint import no_scheduler_hint
from cluster.printers.describe import DescribeText, events_section

NOW_S = 1_800_000_000.0
QUESTION = 'is "podsched scheduler" running?'


def _lease(holder: str = "vm_1", renewed_s_ago: float | None = 3.0, duration_s: int | None = 15
           ) -> objects_pb2.Lease:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace="kube-system"))
    lease.spec.holder_identity = holder
    if duration_s is not None:
        lease.spec.lease_duration_seconds = duration_s
    if renewed_s_ago is not None:
        renewed = NOW_S - renewed_s_ago
        lease.spec.renew_time.CopyFrom(Timestamp(seconds=int(renewed), nanos=int(renewed % 1 * 1e9)))
    return lease


def test_no_lease_means_no_scheduler_ever_led() -> None:
    assert no_scheduler_hint(None, NOW_S) == (
        f"no scheduler holds the lease kube-system/kube-scheduler (there is no such lease): {QUESTION}")


def test_a_released_lease_has_no_holder() -> None:
    assert no_scheduler_hint(_lease(holder=""), NOW_S) == (
        f"no scheduler holds the lease kube-system/kube-scheduler (released): {QUESTION}")


def test_a_lease_not_renewed_within_its_duration_says_how_long_by_whose_clock() -> None:
    assert no_scheduler_hint(_lease(renewed_s_ago=42.5), NOW_S) == (
        "the lease kube-system/kube-scheduler, held by vm_1, was not renewed for 42s by this machine's clock "
        f"(its duration is 15s): {QUESTION}")


@pytest.mark.parametrize("renewed_s_ago", [0.0, 14.9, 15.0, -30.0], ids=["now", "inside", "edge", "future"])
def test_a_lease_renewed_within_its_duration_gives_no_hint(renewed_s_ago: float) -> None:
    # A renewTime ahead of this clock is another machine's clock running ahead, not a missing scheduler.
    assert no_scheduler_hint(_lease(renewed_s_ago=renewed_s_ago), NOW_S) is None


@pytest.mark.parametrize("lease", [_lease(renewed_s_ago=None), _lease(duration_s=None)],
                         ids=["no-renew-time", "no-duration"])
def test_a_held_lease_that_cannot_be_judged_gives_no_hint(lease: objects_pb2.Lease) -> None:
    assert no_scheduler_hint(lease, NOW_S) is None


def test_the_hint_follows_none_under_events() -> None:
    text = DescribeText()
    text.field("Tolerations", "<none>")
    events_section(text, [], "no scheduler holds the lease kube-system/kube-scheduler (released): ...")
    assert text.render().splitlines()[-1] == (
        "Events:       <none>  (no scheduler holds the lease kube-system/kube-scheduler (released): ...)")


def test_no_hint_leaves_events_none() -> None:
    text = DescribeText()
    events_section(text, [], None)
    assert text.render() == "Events:  <none>\n"
