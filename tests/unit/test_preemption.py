"""DefaultPreemption end to end over the real default plugins: eligibility, which nodes are tried, the
minimal victims, PodDisruptionBudgets, the act (deletions, events, nominations) and the messages."""

from __future__ import annotations

import pytest

from cluster.api import errors
from scheduler.config import API_VERSION, KIND, ConfigError, parse_config
from scheduler.framework import Code, PodInfo, PostFilterResult, WaitingPod
from scheduler.plugins.defaultpreemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    DefaultPreemptionArgs,
    new,
)
from tests.builders import PLUGIN_ARGS_PATH, plugin_args
from tests.unit.extender_fakes import FakeExtender
from tests.unit.preemption_util import Cluster, cpu_node, cpu_pod, pdb


def victims_deleted(cluster: Cluster) -> list[str]:
    return sorted(name for _, _, name, _ in cluster.client.deleted)


# ------------------------------------------------------------------------------------- eligibility


async def test_a_pod_with_preemption_policy_never_does_not_preempt() -> None:
    cluster = Cluster([cpu_node("n1", "2")], [cpu_pod("low", "2", 0, node_name="n1")])
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100, never=True))
    assert result is None  # the nomination, if any, stays as it is
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message() == "preemption: " + NOT_ELIGIBLE_NEVER
    assert cluster.client.deleted == []


@pytest.mark.parametrize(
    ("terminating_priority", "eligible"),
    [(0, False), (100, True), (200, True)],
    ids=["lower-priority-victim-terminating", "equal-priority-terminating", "higher-priority-terminating"],
)
async def test_a_pod_waits_while_a_lower_priority_pod_terminates_on_its_nominated_node(
    terminating_priority: int, eligible: bool
) -> None:
    cluster = Cluster(
        [cpu_node("n1", "2")],
        [cpu_pod("going", "1", terminating_priority, node_name="n1", terminating=True),
         cpu_pod("low", "1", 0, node_name="n1")],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100, nominated="n1"))
    if eligible:
        assert status is None and result == PostFilterResult("n1")
    else:
        assert result is None
        assert status is not None and status.message() == "preemption: " + NOT_ELIGIBLE_TERMINATING
        assert cluster.client.deleted == []


async def test_a_pod_whose_nominated_node_became_unresolvable_preempts_again() -> None:
    cluster = Cluster(
        [cpu_node("n1", "2", taint=True), cpu_node("n2", "2")],
        [cpu_pod("going", "1", 0, node_name="n1", terminating=True), cpu_pod("low", "2", 0, node_name="n2")],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "2", 100, nominated="n1"))
    assert status is None and result == PostFilterResult("n2")
    assert victims_deleted(cluster) == ["low"]


# ---------------------------------------------------------------------------------- which nodes


async def test_unresolvable_nodes_are_never_preempted_on() -> None:
    cluster = Cluster(
        [cpu_node("tainted", "4", taint=True), cpu_node("plain", "4")],
        [cpu_pod("t-low", "4", 0, node_name="tainted"),
         cpu_pod("p-low", "3", 5, node_name="plain"), cpu_pod("p-lower", "1", 1, node_name="plain")],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "4", 100))
    assert status is None and result == PostFilterResult("plain")
    assert victims_deleted(cluster) == ["p-low", "p-lower"]


@pytest.mark.parametrize("priority", [100, 101], ids=["equal", "higher"])
async def test_pods_of_equal_or_higher_priority_are_never_victims(priority: int) -> None:
    cluster = Cluster(
        [cpu_node("n1", "2"), cpu_node("n2", "2")],
        [cpu_pod("peer", "2", priority, node_name="n1"),
         cpu_pod("peer-half", "1", priority, node_name="n2"), cpu_pod("low", "1", 0, node_name="n2")],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "2", 100))
    # n2 has a lower-priority pod, but even without it the preemptor does not fit beside the peer.
    assert result == PostFilterResult("")
    assert status is not None and status.message() == (
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod."
    )
    assert cluster.client.deleted == []


async def test_no_candidate_message_counts_every_node() -> None:
    cluster = Cluster(
        [cpu_node("n1", "2"), cpu_node("g1", "2", taint=True), cpu_node("g2", "2", taint=True)],
        [cpu_pod("peer", "2", 100, node_name="n1")],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "2", 100))
    assert result == PostFilterResult("")  # clears an earlier nomination
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message() == (
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )


# ------------------------------------------------------------------------------------- victims


async def test_only_the_fewest_lowest_priority_pods_are_victims() -> None:
    cluster = Cluster(
        [cpu_node("n1", "4")],
        [cpu_pod(f"p{prio}", "1", prio, node_name="n1") for prio in (3, 1, 4, 2)],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "2", 10))
    assert status is None and result == PostFilterResult("n1")
    assert victims_deleted(cluster) == ["p1", "p2"]


async def test_among_equal_priorities_the_most_recently_started_pod_goes() -> None:
    cluster = Cluster(
        [cpu_node("n1", "2")],
        [cpu_pod("old", "1", 1, node_name="n1", start=1000),
         cpu_pod("new", "1", 1, node_name="n1", start=2000)],
    )
    await cluster.preempt(cpu_pod("hi", "1", 10))
    assert victims_deleted(cluster) == ["new"]


@pytest.mark.parametrize(
    ("allowed", "victims", "violations_note"),
    [(0, ["unprotected"], "reprieved first"), (1, ["protected"], "budget allows it: plain priority order")],
    ids=["pdb-protects", "pdb-allows-one"],
)
async def test_pdb_protected_pods_are_reprieved_first(
    allowed: int, victims: list[str], violations_note: str
) -> None:
    cluster = Cluster(
        [cpu_node("n1", "2")],
        [cpu_pod("protected", "1", 1, node_name="n1", labels={"app": "db"}),
         cpu_pod("unprotected", "1", 5, node_name="n1")],
        pdbs=[pdb("db", {"app": "db"}, allowed)],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "1", 10))
    assert status is None and result == PostFilterResult("n1"), violations_note
    assert victims_deleted(cluster) == victims


async def test_the_node_with_fewer_pdb_violations_is_chosen() -> None:
    cluster = Cluster(
        [cpu_node("guarded", "1"), cpu_node("free", "1")],
        [cpu_pod("g", "1", 1, node_name="guarded", labels={"app": "db"}),
         cpu_pod("f", "1", 50, node_name="free")],
        pdbs=[pdb("db", {"app": "db"}, 0)],
    )
    # Without the budget, "guarded" (the lower-priority victim) would win.
    for seed in range(4):
        cluster.client.deleted.clear()
        result, _ = await cluster.preempt(cpu_pod("hi", "1", 100), cluster.plugin(seed=seed))
        assert result == PostFilterResult("free")


# ----------------------------------------------------------------------------------------- act


async def test_the_act_deletes_gracefully_records_events_and_clears_lower_nominations() -> None:
    lower = cpu_pod("lower-nominee", "1", 5, nominated="n1")
    higher = cpu_pod("higher-nominee", "1", 500, nominated="n1")
    cluster = Cluster(
        # The higher-priority nominee keeps its 1 cpu: the preemptor's 4 need every other pod gone.
        [cpu_node("n1", "5")],
        [cpu_pod("a", "2", 1, node_name="n1", grace=5), cpu_pod("b", "1", 2, node_name="n1"),
         cpu_pod("gone", "1", 0, node_name="n1", terminating=True)],
        nominated={"n1": [lower, higher]},
    )
    result, status = await cluster.preempt(cpu_pod("hi", "4", 100))
    assert status is None and result == PostFilterResult("n1")
    # "gone" is already terminating: counted as a victim, but not deleted a second time.
    assert cluster.client.deleted == [("pods", "default", "b", 30), ("pods", "default", "a", 5)]
    message = "Preempted by pod uid-hi on node n1"
    assert sorted(cluster.events.events) == [
        ("a", "Normal", "Preempted", "Preempting", message, "default-scheduler"),
        ("b", "Normal", "Preempted", "Preempting", message, "default-scheduler"),
    ]
    assert [(p.metadata.name, p.status.nominated_node_name) for p in cluster.client.status_updates] == [
        ("lower-nominee", "")
    ]
    assert cluster.nominator.forgotten == ["lower-nominee"]


async def test_a_victim_waiting_at_permit_is_rejected_not_deleted() -> None:
    waiting = cpu_pod("waiting", "1", 0, node_name="n1")
    cluster = Cluster([cpu_node("n1", "1")], [waiting])
    cluster.handle.waiting_pods._add(WaitingPod(PodInfo(waiting), {"Gate": 60.0}, 0.0))
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100))
    assert status is None and result == PostFilterResult("n1")
    assert cluster.client.deleted == []
    rejected = cluster.handle.waiting_pods.get("default/waiting")
    assert rejected is not None and rejected._status is not None
    assert (rejected._status.plugin, rejected._status.message()) == ("DefaultPreemption", "preempted")
    assert [e[0] for e in cluster.events.events] == ["waiting"]


async def test_a_victim_deleted_meanwhile_is_not_an_error() -> None:
    cluster = Cluster([cpu_node("n1", "1")], [cpu_pod("low", "1", 0, node_name="n1")])
    cluster.client.fail_delete = errors.NotFound("pods default/low not found")
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100))
    assert status is None and result == PostFilterResult("n1")


# ---------------------------------------------------------------------------------- extenders


async def test_extenders_that_support_preemption_may_narrow_the_candidates() -> None:
    only_n2 = FakeExtender(preempt=lambda victims: {n: v for n, v in victims.items() if n == "n2"})
    cluster = Cluster(
        [cpu_node("n1", "1"), cpu_node("n2", "1")],
        [cpu_pod("cheap", "1", 0, node_name="n1"), cpu_pod("dear", "1", 50, node_name="n2")],
        extenders=[only_n2],
    )
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100))
    assert only_n2.calls == [("preempt", ["n1", "n2"])]
    assert status is None and result == PostFilterResult("n2")
    assert victims_deleted(cluster) == ["dear"]


async def test_no_candidate_is_left_when_the_extenders_keep_none() -> None:
    cluster = Cluster([cpu_node("n1", "1")], [cpu_pod("cheap", "1", 0, node_name="n1")],
                      extenders=[FakeExtender(preempt=lambda victims: {})])
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100))
    assert result is None and status is not None
    assert status.message() == "preemption: no candidate node for preemption"
    assert victims_deleted(cluster) == []


async def test_a_failing_preemption_extender_fails_preemption() -> None:
    broken = FakeExtender(name="http://x/ext", preempt=lambda victims: dict(victims), error="code 500")
    cluster = Cluster([cpu_node("n1", "1")], [cpu_pod("cheap", "1", 0, node_name="n1")], extenders=[broken])
    result, status = await cluster.preempt(cpu_pod("hi", "1", 100))
    assert result is None and status is not None and status.code is Code.ERROR
    assert status.message() == "preemption: extender http://x/ext: preempt failed: code 500"
    assert victims_deleted(cluster) == []


# --------------------------------------------------------------------------------------- args


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, DefaultPreemptionArgs(10, 100)),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}, DefaultPreemptionArgs(0, 5)),
        ({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, DefaultPreemptionArgs(100, 0)),
    ],
    ids=["defaults", "absolute-only", "percentage-only"],
)
def test_args_defaults(data: dict[str, int], expected: DefaultPreemptionArgs) -> None:
    assert plugin_args("DefaultPreemption", data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"minCandidateNodesPercentage": 101},
         f"{PLUGIN_ARGS_PATH}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
        ({"minCandidateNodesAbsolute": -1},
         f"{PLUGIN_ARGS_PATH}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
         f"{PLUGIN_ARGS_PATH}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
         f"time as minCandidateNodesAbsolute\n{PLUGIN_ARGS_PATH}.minCandidateNodesAbsolute: Invalid value: "
         "0: cannot be zero at the same time as minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": "10"}, "minCandidateNodesPercentage: Invalid value"),
        ({"minCandidateNodes": 1}, f'{PLUGIN_ARGS_PATH}: unknown field "minCandidateNodes"'),
    ],
    ids=["percentage-over-100", "negative-absolute", "both-zero", "not-an-integer", "unknown-field"],
)
def test_args_validation(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        plugin_args("DefaultPreemption", data)
    assert message in str(caught.value)


def test_the_factory_takes_its_args_or_none() -> None:
    cluster = Cluster([cpu_node("n1")])
    configured = plugin_args("DefaultPreemption", {"minCandidateNodesAbsolute": 3})
    assert new(configured, cluster.handle).args == DefaultPreemptionArgs(10, 3)
    assert new(None, cluster.handle).name == "DefaultPreemption"


def _config_with_args(args: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"postFilter": {"enabled": [{"name": "DefaultPreemption"}]}},
            "pluginConfig": [{"name": "DefaultPreemption", "args": args}],
        }],
    }


def test_the_config_reads_the_args_through_the_registry() -> None:
    config = parse_config(_config_with_args({"minCandidateNodesPercentage": 20}))
    assert config.profiles[0].plugin_args["DefaultPreemption"] == DefaultPreemptionArgs(20, 100)
    assert config.profiles[0].plugins.point("postFilter").names() == ["DefaultPreemption"]
    with pytest.raises(ConfigError, match="minCandidateNodesAbsolute: Invalid value: -3"):
        parse_config(_config_with_args({"minCandidateNodesAbsolute": -3}))
