"""TaintToleration: Filter on NoSchedule/NoExecute taints, Score by untolerated PreferNoSchedule taints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    FilterPlugin,
    PodInfo,
    QueueingHint,
    ScorePlugin,
)
from scheduler.plugins import tainttoleration
from tests.builders import node, node_info, pod
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.plugin_util import run_score


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str = "", value: str = "", effect: str = "", operator: str = "") -> dict[str, str]:
    out = {"key": key, "value": value, "effect": effect, "operator": operator}
    return {k: v for k, v in out.items() if v}


def with_tolerations(*tolerations: dict[str, str]) -> dict[str, Any]:
    return {"tolerations": list(tolerations)}


# taint_toleration_test.go's TestTaintTolerationFilter.
@pytest.mark.parametrize(
    ("tolerations", "taints", "reason"),
    [
        ((), [taint("dedicated", "user1", "NoSchedule")], "node(s) had untolerated taint {dedicated: user1}"),
        ((tol("dedicated", "user1", "NoSchedule"),), [taint("dedicated", "user1", "NoSchedule")], None),
        (
            (tol("dedicated", "user2", "NoSchedule", "Equal"),),
            [taint("dedicated", "user1", "NoSchedule")],
            "node(s) had untolerated taint {dedicated: user1}",
        ),
        ((tol("foo", effect="NoSchedule", operator="Exists"),), [taint("foo", "bar", "NoSchedule")], None),
        (
            (
                tol("dedicated", "user2", "NoSchedule", "Equal"),
                tol("foo", effect="NoSchedule", operator="Exists"),
            ),
            [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
            None,
        ),
        (
            (tol("foo", "bar", "PreferNoSchedule", "Equal"),),
            [taint("foo", "bar", "NoSchedule")],
            "node(s) had untolerated taint {foo: bar}",
        ),
        ((tol("foo", "bar", operator="Equal"),), [taint("foo", "bar", "NoSchedule")], None),
        (
            (tol("dedicated", "user2", "NoSchedule", "Equal"),),
            [taint("dedicated", "user1", "PreferNoSchedule")],
            None,
        ),
        ((), [taint("dedicated", "user1", "PreferNoSchedule")], None),
        ((), [taint("gone", "", "NoExecute")], "node(s) had untolerated taint {gone: }"),
        ((tol(operator="Exists"),), [taint("a", "b", "NoSchedule"), taint("c", "d", "NoExecute")], None),
    ],
    ids=[
        "no-tolerations-tainted-node",
        "dedicated-user1-tolerated",
        "dedicated-user2-not-tolerated",
        "exists-tolerates",
        "all-taints-tolerated",
        "effect-mismatch",
        "empty-effect-tolerates-all-effects",
        "prefer-no-schedule-ignored-by-filter",
        "prefer-no-schedule-without-tolerations",
        "no-execute-filters",
        "empty-key-exists-tolerates-everything",
    ],
)
def test_filter(
    tolerations: Sequence[dict[str, str]], taints: list[dict[str, str]], reason: str | None
) -> None:
    plugin = tainttoleration.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, FilterPlugin)
    status = plugin.filter(
        CycleState(), PodInfo(pod(spec=with_tolerations(*tolerations))), node_info(node(taints=taints))
    )
    if reason is None:
        assert status is None
    else:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (reason,)


ARM = taint("cpu-type", "arm64", "PreferNoSchedule")
SSD = taint("disk-type", "ssd", "PreferNoSchedule")


# taint_toleration_test.go's TestTaintTolerationScore: untolerated PreferNoSchedule taints counted,
# then normalized in reverse (the node with the most scores 0, nodes with none 100).
@pytest.mark.parametrize(
    ("tolerations", "node_taints", "expected"),
    [
        (
            (tol("foo", "bar", "PreferNoSchedule", "Equal"),),
            [[taint("foo", "bar", "PreferNoSchedule")], [taint("foo", "blah", "PreferNoSchedule")]],
            [100, 0],
        ),
        (
            (
                tol("cpu-type", "arm64", "PreferNoSchedule", "Equal"),
                tol("disk-type", "ssd", "PreferNoSchedule", "Equal"),
            ),
            [[], [ARM], [ARM, SSD]],
            [100, 100, 100],
        ),
        ((tol("foo", "bar", "PreferNoSchedule", "Equal"),), [[], [ARM], [ARM, SSD]], [100, 50, 0]),
        (
            (tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")),
            [[], [taint("cpu-type", "arm64", "NoSchedule")], [ARM, SSD]],
            [100, 100, 0],
        ),
        ((), [[], [ARM]], [100, 0]),
        (
            (tol("cpu-type", "arm64", operator="Equal"),),
            [[ARM], [SSD], [ARM, SSD], [ARM, SSD, ARM]],
            [100, 0, 0, 0],
        ),
        ((), [[ARM], [ARM, SSD], [ARM, SSD, taint("x", "y", "PreferNoSchedule")]], [67, 34, 0]),
    ],
    ids=[
        "tolerated-taint-scores-higher",
        "tolerated-taint-count-does-not-matter",
        "more-untolerated-taints-lower-score",
        "only-prefer-no-schedule-counts",
        "no-taints-no-tolerations",
        "empty-effect-toleration-tolerates-prefer-no-schedule",
        "reverse-normalization-truncates",
    ],
)
def test_score(
    tolerations: Sequence[dict[str, str]], node_taints: list[list[dict[str, str]]], expected: list[int]
) -> None:
    plugin = tainttoleration.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, ScorePlugin)
    infos = [node_info(node(f"node{i}", taints=taints)) for i, taints in enumerate(node_taints)]
    assert run_score(plugin, pod(spec=with_tolerations(*tolerations)), infos) == expected


REJECT_USER1 = node(taints=[taint("dedicated", "user1", "NoSchedule")])
ACCEPT = node(taints=[taint("dedicated", "user2", "NoSchedule")])


# taint_toleration_test.go's TestIsSchedulableAfterNodeChange.
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, REJECT_USER1, QueueingHint.SKIP),
        (None, ACCEPT, QueueingHint.QUEUE),
        (
            REJECT_USER1,
            node(
                taints=[taint("dedicated", "user1", "NoSchedule"), taint("dedicated", "user3", "NoSchedule")]
            ),
            QueueingHint.SKIP,
        ),
        (REJECT_USER1, ACCEPT, QueueingHint.QUEUE),
        (ACCEPT, ACCEPT, QueueingHint.SKIP),
    ],
    ids=[
        "untolerated-node-added",
        "tolerated-node-added",
        "unrelated-change",
        "taint-change",
        "already-tolerated",
    ],
)
def test_node_change_hint(old: Any, new: Any, expected: QueueingHint) -> None:
    (registered,) = tainttoleration.new(None, fake_handle(Snapshot([]))).events_to_register()
    assert ClusterEvent(EventResource.NODE, ActionType.ADD).matches(registered.event)
    assert ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT).matches(registered.event)
    assert registered.hint is not None
    the_pod = pod(spec=with_tolerations(tol("dedicated", "user2", "NoSchedule", "Equal")))
    assert registered.hint(the_pod, old, new) is expected
