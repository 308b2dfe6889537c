"""The pod garbage collector's decisions without a server: when a missing node's quarantine ends
(`NodeQuarantine`, on given times, so no test waits), how an orphaned pod is marked before it is
deleted (`failed_for_gc`), and the ``--controllers`` list `podsched apiserver` reads."""

from __future__ import annotations

import argparse

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.cli import apiserver as apiserver_cli
from cluster.cli.controllers import parse_controllers
from cluster.controllers.podgc import DEFAULT_QUARANTINE_S, NodeQuarantine, failed_for_gc
from tests.builders import pod

NOW = Timestamp(seconds=1_700_000_000)

#: (time, "suspect" | "clear", node): what the controller tells the quarantine as events arrive.
Step = tuple[float, str, str]


def replay(steps: list[Step], quarantine_s: float = DEFAULT_QUARANTINE_S) -> NodeQuarantine:
    quarantine = NodeQuarantine(quarantine_s)
    for at, action, node in steps:
        if action == "suspect":
            quarantine.suspect(node, at)
        else:
            quarantine.clear(node)
    return quarantine


@pytest.mark.parametrize(
    ("steps", "at", "due"),
    [
        ([(0, "suspect", "f-1")], 39.9, []),
        ([(0, "suspect", "f-1")], 40.0, ["f-1"]),
        ([(0, "suspect", "f-1"), (10, "clear", "f-1")], 100.0, []),
        ([(0, "suspect", "f-1"), (30, "suspect", "f-1")], 40.0, ["f-1"]),
        ([(0, "suspect", "f-1"), (10, "clear", "f-1"), (20, "suspect", "f-1")], 50.0, []),
        ([(0, "suspect", "f-1"), (10, "clear", "f-1"), (20, "suspect", "f-1")], 60.0, ["f-1"]),
        ([(5, "suspect", "b"), (0, "suspect", "a"), (20, "suspect", "c")], 50.0, ["a", "b"]),
        ([(0, "clear", "f-1")], 100.0, []),
    ],
    ids=[
        "orphan-waits-the-quarantine",
        "orphan-collected-after-the-quarantine",
        "node-recreated-within-the-quarantine-keeps-its-pods",
        "the-first-sighting-counts",
        "deleted-again-starts-a-new-quarantine",
        "deleted-again-collected-after-the-new-quarantine",
        "quarantines-end-in-order",
        "a-node-never-suspected",
    ],
)
def test_which_nodes_are_due(steps: list[Step], at: float, due: list[str]) -> None:
    quarantine = replay(steps)
    assert quarantine.due(at) == due
    for node in due:
        assert node not in quarantine
    assert quarantine.due(at) == []


def test_the_next_end_skips_cleared_nodes() -> None:
    quarantine = replay([(0, "suspect", "a"), (1, "suspect", "b"), (2, "clear", "a")])
    assert quarantine.next_end() == 41.0
    quarantine.clear("b")
    assert quarantine.next_end() is None


def test_a_zero_quarantine_is_due_at_once_and_a_negative_one_is_refused() -> None:
    assert replay([(7, "suspect", "f-1")], quarantine_s=0).due(7) == ["f-1"]
    with pytest.raises(ValueError, match="quarantine_s must be 0 or more, got -1"):
        NodeQuarantine(-1)


def running_pod(*conditions: objects_pb2.PodCondition) -> objects_pb2.Pod:
    result = pod("web", "shop", uid="u-1", resource_version="17", node_name="f-1", phase="Running")
    result.status.conditions.extend(conditions)
    return result


@pytest.mark.parametrize("terminating", [False, True], ids=["running", "terminating"])
def test_an_orphan_is_marked_failed_with_a_disruption_target(terminating: bool) -> None:
    pod = running_pod(objects_pb2.PodCondition(type="PodScheduled", status="True"))
    if terminating:
        pod.metadata.deletion_timestamp.CopyFrom(Timestamp(seconds=NOW.seconds + 30))
    marked = failed_for_gc(pod, "f-1", NOW)
    assert marked is not None
    assert marked.status.phase == "Failed"
    assert marked.metadata.resource_version == "17" and marked.metadata.uid == "u-1"
    assert [(c.type, c.status) for c in marked.status.conditions] == [
        ("PodScheduled", "True"), ("DisruptionTarget", "True")]
    target = marked.status.conditions[1]
    assert (target.reason, target.message) == ("DeletionByPodGC", 'node "f-1" no longer exists')
    assert target.last_transition_time == NOW
    assert pod.status.phase == "Running"  # the informer's copy is left alone


def test_an_existing_disruption_target_is_replaced() -> None:
    earlier = Timestamp(seconds=5)
    pod = running_pod(objects_pb2.PodCondition(type="DisruptionTarget", status="True", reason="Other",
                                               last_transition_time=earlier))
    marked = failed_for_gc(pod, "f-1", NOW)
    assert marked is not None
    (target,) = marked.status.conditions
    assert (target.status, target.reason, target.last_transition_time) == ("True", "DeletionByPodGC", earlier)


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_is_deleted_as_it_is(phase: str) -> None:
    pod = running_pod()
    pod.status.phase = phase
    assert failed_for_gc(pod, "f-1", NOW) is None


# -------------------------------------------------------------------------------------- --controllers

#: The storage controllers, last in the table.
STORAGE = ("persistentvolume-binder", "ephemeral-volume", "volume-provisioner")


@pytest.mark.parametrize(
    ("text", "enabled"),
    [
        ("*", ("disruption", "podgc", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
               *STORAGE)),
        ("disruption", ("disruption",)),
        ("podgc", ("podgc",)),
        ("podgc,disruption", ("disruption", "podgc")),
        ("*,-podgc", ("disruption", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
                      *STORAGE)),
        ("-disruption,*", ("podgc", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
                           *STORAGE)),
        ("*,podgc", ("disruption", "podgc", "resourcequota", "podgroup", "leasecandidategc",
                     "resourceclaim", *STORAGE)),
        ("resourcequota", ("resourcequota",)),
        ("*,-podgc,-disruption", ("resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
                                  *STORAGE)),
        ("podgroup", ("podgroup",)),
        ("*,-leasecandidategc", ("disruption", "podgc", "resourcequota", "podgroup", "resourceclaim",
                                 *STORAGE)),
        ("leasecandidategc", ("leasecandidategc",)),
        (" disruption , podgc ", ("disruption", "podgc")),
        ("none", ()),
    ],
)
def test_controllers_list(text: str, enabled: tuple[str, ...]) -> None:
    assert parse_controllers(text) == enabled


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("podgc,garbage", 'unknown controller "garbage" (known: disruption, podgc, resourcequota, podgroup, '
                          'leasecandidategc, resourceclaim, persistentvolume-binder, ephemeral-volume, '
                          'volume-provisioner)'),
        ("-nodelifecycle", 'unknown controller "nodelifecycle"'),
        ("", "an empty name"),
        ("disruption,,podgc", "an empty name"),
        ("none,podgc", "none cannot be combined with other names"),
        ("podgc,-podgc", '"podgc" is both turned on and turned off'),
        ("-podgc", "it turns controllers off but none on: start from all with '*,-podgc', or write none"),
    ],
    ids=["unknown", "unknown-disabled", "empty", "empty-item", "none-and-more", "on-and-off", "only-off"],
)
def test_bad_controllers_list(text: str, error: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        parse_controllers(text)
    message = str(raised.value)
    assert message.startswith(f"invalid --controllers {text!r}: ")
    assert error in message


def apiserver_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="podsched")
    apiserver_cli.register(parser.add_subparsers())
    return parser


def test_the_flags_default_to_every_controller_a_40s_quarantine_and_a_5m_quota_sync() -> None:
    args = apiserver_parser().parse_args(["apiserver"])
    assert args.controllers == (
        "disruption", "podgc", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
        "persistentvolume-binder", "ephemeral-volume", "volume-provisioner")
    assert args.volume_provisioners == ()
    assert args.pod_gc_quarantine == 40.0
    assert args.resource_quota_sync_period == 300.0
    args = apiserver_parser().parse_args(["apiserver", "--controllers=-disruption,*", "--pod-gc-quarantine",
                                          "1.5s", "--resource-quota-sync-period", "2m"])
    assert args.controllers == ("podgc", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
                                "persistentvolume-binder", "ephemeral-volume", "volume-provisioner")
    assert args.pod_gc_quarantine == 1.5
    assert args.resource_quota_sync_period == 120.0


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--controllers", "podgc,bogus"],
         "argument --controllers: invalid --controllers 'podgc,bogus': "
         'unknown controller "bogus" (known: disruption, podgc, resourcequota, podgroup, '
                          'leasecandidategc, resourceclaim, persistentvolume-binder, ephemeral-volume, '
                          'volume-provisioner)'),
        (["--pod-gc-quarantine", "soon"], "invalid duration 'soon'"),
        (["--pod-gc-quarantine=-1s"], "invalid duration '-1s'"),
        (["--resource-quota-sync-period", "often"], "invalid duration 'often'"),
        (["--resource-quota-sync-period", "0s"], "invalid resource quota sync period '0s': must be positive"),
    ],
    ids=["unknown-controller", "not-a-duration", "negative", "sync-not-a-duration", "sync-zero"],
)
def test_bad_flags_are_usage_errors(argv: list[str], error: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        apiserver_parser().parse_args(["apiserver", *argv])
    assert exited.value.code == 2
    assert error in capsys.readouterr().err
