"""Chaos: the HA control plane under real faults, judged from the store's own history.

One run (the module fixture ``chaos_run``) starts the topology of ``topology.py`` (3 etcd members, 2
API servers, 3 scheduler replicas restarted when they exit, 8 nodes, pods submitted throughout, about
half of them in gangs that must be bound all or nothing, the others each claiming a DRA device and a
WaitForFirstConsumer ephemeral volume) and injects, one after the other: ten SIGKILLs of the leader, a
SIGSTOP of the leader past its lease (then SIGCONT), a SIGTERM of the leader, a SIGKILL and restart of
an API server, and of the etcd leader. Then the load stops (never inside a gang), more single pods
(each claiming a device, with no volume) fill the nodes to the last place, and every pod, every gang
whole, must get bound. Each test below judges one property of that run, from the recorder's history
wherever the property is about the store. The run's directory keeps every scheduler process's log
(schedulers/) and the recorded history (history.txt) for a post-mortem.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cluster.api.kinds import PERSISTENT_VOLUME_CLAIM, POD, POD_GROUP
from tests.chaos import history
from tests.chaos.faults import (
    Failover,
    Outage,
    apiserver_outage,
    etcd_outage,
    leader_fault,
    pause_leader,
    wait_bind_after,
)
from tests.chaos.history import Recorded
from tests.chaos.load_thread import submit_all
from tests.chaos.replicas import Life
from tests.chaos.summary import STEP_DOWN, SUMMARY_LINES, failover_lines, outage_line, step_down_line
from tests.chaos.topology import LOAD_NAMESPACE, Topology, TopologySpec, running_topology

# The whole run is one module fixture; it must not be cut short by the default per-test timeout.
pytestmark = [pytest.mark.etcd, pytest.mark.timing, pytest.mark.timeout(420)]

SPEC = TopologySpec()
#: SIGKILLs of the leader in one run (docs/operations.md describes the suite with ten).
LEADER_KILLS = 10
#: The failover bounds: a standby that finds the lease unrenewed for leaseDuration tries within one
#: jittered retryPeriod; a released lease is taken within one jittered retryPeriod. One second of slack
#: covers the write and its delivery to the recorder.
KILL_BOUND_S = SPEC.lease_duration_s + SPEC.retry_period_s * 1.2 + 1.0
RELEASE_BOUND_S = SPEC.retry_period_s * 1.2 + 1.0
BOUNDS = {"SIGKILL": KILL_BOUND_S, "SIGSTOP": KILL_BOUND_S, "SIGTERM": RELEASE_BOUND_S}
#: How long the last pods may take to be seen, and to be bound after the fill.
DRAIN_TIMEOUT_S = 60.0
#: Problems quoted in one assertion message.
SHOWN = 20


@dataclass(frozen=True)
class ChaosRun:
    events: list[Recorded]
    #: Store keys of the pods the load (and the final fill) was told it created.
    submitted: list[str]
    #: Store keys of the gangs' PodGroups the load was told it created.
    gangs: list[str]
    failovers: list[Failover]
    paused: Failover
    terminated: Failover
    outages: list[Outage]
    #: Every scheduler process of the run (exit codes and logs of the ended ones).
    lives: list[Life]
    seconds: float


def _pods(events: list[Recorded]) -> set[str]:
    return {e.key for e in events if e.key.startswith(POD.key_prefix())}


def _unbound_pods(events: list[Recorded]) -> set[str]:
    return _pods(events) - {b.key for b in history.bindings(events)}


def _keys(names: list[str]) -> list[str]:
    return [POD.key(LOAD_NAMESPACE, name) for name in names]


def _group(pod_group_key: str) -> str:
    """A PodGroup's store key as ``gang_bindings`` names the group: "namespace/name"."""
    return "/".join(pod_group_key.rsplit("/", 2)[-2:])


def _scenario(topology: Topology) -> tuple[list[Failover], Failover, Failover, list[Outage]]:
    wait_bind_after(topology, 0)  # the first leader schedules
    kills = [leader_fault(topology, signal.SIGKILL, KILL_BOUND_S) for _ in range(LEADER_KILLS)]
    paused = pause_leader(topology, KILL_BOUND_S)
    terminated = leader_fault(topology, signal.SIGTERM, RELEASE_BOUND_S)
    outages = [apiserver_outage(topology), etcd_outage(topology)]
    return kills, paused, terminated, outages


@pytest.fixture(scope="module")
def chaos_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChaosRun]:
    started = time.monotonic()
    root = tmp_path_factory.mktemp("chaos")
    with running_topology(SPEC, root) as topology:
        try:
            kills, paused, terminated, outages = _scenario(topology)
            topology.load.stop()
            submitted = _keys(topology.load.submitted())
            gangs = [POD_GROUP.key(LOAD_NAMESPACE, name) for name in topology.load.pod_groups()]
            topology.recorder.wait_for(lambda events: _pods(events).issuperset(submitted),
                                       "the recorder to see every pod the load created", DRAIN_TIMEOUT_S)
            # Fill the nodes to the last place (counting what the store holds: a create interrupted by
            # the load's stop may have landed unreported).
            fill = SPEC.fill(len(_pods(topology.recorder.events())))
            submitted += _keys(submit_all(topology.servers, fill))
            # Pods still unbound after the timeout are named by the tests below, with the rest; judged
            # once the recorder holds every pod, or "all bound" could be said before the last arrived.
            topology.recorder.wait_until(
                lambda events: _pods(events).issuperset(submitted) and not _unbound_pods(events),
                DRAIN_TIMEOUT_S,
            )
            run = ChaosRun(topology.recorder.events(), submitted, gangs, kills, paused, terminated, outages,
                           topology.replicas.lives(), time.monotonic() - started)
        finally:
            topology.recorder.write(root / "history.txt")
    lines = [
        *failover_lines([*run.failovers, run.paused, run.terminated], BOUNDS),
        *(outage_line(outage) for outage in run.outages),
        step_down_line(run.lives),
        f"{len(run.submitted)} pods submitted ({len(run.gangs)} gangs, seed {SPEC.seed}), {len(run.events)} "
        f"store events, {len(run.lives)} scheduler processes, {run.seconds:.0f} s",
    ]
    request.config.stash[SUMMARY_LINES] = lines
    print("\n" + "\n".join(lines))
    yield run


def _shown(problems: list[str]) -> str:
    more = f"\n... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return "\n".join(problems[:SHOWN]) + more


def test_every_pod_is_bound_exactly_once_and_never_moves(chaos_run: ChaosRun) -> None:
    assert chaos_run.submitted, "the load submitted nothing"
    problems = history.check_bound_once(chaos_run.events, chaos_run.submitted)
    assert not problems, _shown(problems)


def test_no_node_is_ever_over_allocatable(chaos_run: ChaosRun) -> None:
    problems = history.check_never_over_allocatable(chaos_run.events)
    assert not problems, _shown(problems)


def test_no_gang_is_ever_partly_bound(chaos_run: ChaosRun) -> None:
    """At no revision of the run has a gang some but fewer than its minimum of pods bound, and each gang
    the load submitted ends with all of its pods bound (its minimum is its size)."""
    assert chaos_run.gangs, "the load submitted no gang"
    problems = history.check_gangs_never_partly_bound(chaos_run.events)
    assert not problems, _shown(problems)
    minimum = {e.key: history.gang_min_count(e.obj) for e in chaos_run.events  # type: ignore[arg-type]
               if e.key in chaos_run.gangs}
    bound = history.gang_bindings(chaos_run.events)
    short = [f"gang {key}: {len(bound.get(_group(key), []))} of its {minimum.get(key)} pods bound"
             for key in chaos_run.gangs if len(bound.get(_group(key), [])) != minimum.get(key)]
    assert not short, _shown(short)


def test_no_device_is_ever_allocated_twice(chaos_run: ChaosRun) -> None:
    """At no revision of the run is a device held by two claims' allocations, and at the end every bound
    pod's claim is allocated, reserved for it, on its node: the single pods claimed devices while the
    leaders were killed."""
    claimed = history.claimed_pods(chaos_run.events)
    assert claimed, "the load submitted no pod with a claim"
    problems = history.check_devices_allocated_once(chaos_run.events)
    assert not problems, _shown(problems)
    problems = history.check_claims_on_their_pods_nodes(chaos_run.events)
    assert not problems, _shown(problems)


def test_no_volume_is_ever_bound_to_two_claims(chaos_run: ChaosRun) -> None:
    """At no revision of the run is a PersistentVolume the volume of two bound claims, nor a bound
    claim's volume another claim's: the single pods' WaitForFirstConsumer ephemeral volumes were bound
    (the scheduler choosing the node, the provisioner making the volume, the PV controller binding it)
    while the leaders were killed."""
    claim_keys = {e.key for e in chaos_run.events if e.key.startswith(PERSISTENT_VOLUME_CLAIM.key_prefix())}
    assert claim_keys, "the load made no ephemeral volume's claim"
    problems = history.check_volumes_bound_once(chaos_run.events)
    assert not problems, _shown(problems)


def test_gangs_were_bound_by_several_leaders(chaos_run: ChaosRun) -> None:
    """The gangs were submitted and bound while the leaders were killed: their binds span the tenures of
    several leaders (the fences they were bound under)."""
    bound = history.gang_bindings(chaos_run.events)
    tenures = {binding.fence for binds in bound.values() for binding in binds}
    assert len(tenures) >= 3, f"every gang was bound under {sorted(tenures)}"


def test_the_nodes_end_exactly_full(chaos_run: ChaosRun) -> None:
    """The load and the fill asked for every place on every node, so each node ends with exactly its
    share: nothing was lost, nothing counted twice."""
    per_node = SPEC.capacity // SPEC.nodes
    count: dict[str, int] = {}
    for binding in history.bindings(chaos_run.events):
        count[binding.node] = count.get(binding.node, 0) + 1
    assert len(chaos_run.submitted) == SPEC.capacity
    assert count == {SPEC.node(i).metadata.name: per_node for i in range(SPEC.nodes)}


def test_every_bind_was_made_by_the_leader_of_its_time(chaos_run: ChaosRun) -> None:
    assert len(history.bindings(chaos_run.events)) >= len(chaos_run.submitted)
    problems = history.check_fenced_binds(chaos_run.events)
    assert not problems, _shown(problems)


def test_every_event_was_written_by_the_leader_of_its_time(chaos_run: ChaosRun) -> None:
    """Events included: no event of a term landed after the next term began (the paused leader's
    FailedScheduling about a pod its successor had bound, say)."""
    assert history.event_writes(chaos_run.events), "no scheduler wrote an event"
    problems = history.check_fenced_events(chaos_run.events)
    assert not problems, _shown(problems)


def test_every_failover_is_within_its_bound(chaos_run: ChaosRun) -> None:
    failovers = [*chaos_run.failovers, chaos_run.paused, chaos_run.terminated]
    assert len(chaos_run.failovers) == LEADER_KILLS
    late = [f"{f.kind} of {f.old.identity}: {f.takeover.holder} took over after {f.seconds:.2f} s, bound "
            f"{BOUNDS[f.kind]:.2f} s" for f in failovers if f.seconds > BOUNDS[f.kind]]
    assert not late, "\n".join(late)


def test_a_paused_leader_steps_down_and_none_of_its_writes_lands(chaos_run: ChaosRun) -> None:
    paused = chaos_run.paused
    assert paused.old.exit_code not in (None, 0), f"exit code {paused.old.exit_code}:\n{paused.old.log()}"
    assert STEP_DOWN in paused.old.log(), paused.old.log()
    problems = history.check_no_writes_after(chaos_run.events, paused.old.identity, paused.takeover.revision)
    assert not problems, _shown(problems)


def test_a_terminated_leader_releases_the_lease(chaos_run: ChaosRun) -> None:
    terminated = chaos_run.terminated
    assert terminated.old.exit_code == 0, f"exit code {terminated.old.exit_code}:\n{terminated.old.log()}"
    assert "podsched scheduler: released the lease kube-system/kube-scheduler" in terminated.old.log()
    released = [r for r in history.lease_records(chaos_run.events)
                if r.arrived >= terminated.fault_at and r.revision < terminated.takeover.revision]
    assert [r.holder for r in released][-1:] == [""], "the lease was not released before the takeover"


def test_killing_an_api_server_neither_stops_scheduling_nor_costs_the_lease(chaos_run: ChaosRun) -> None:
    outage = chaos_run.outages[0]
    assert len(outage.holders) == 1, outage_line(outage)
    assert outage.binds > 0, outage_line(outage)


def test_every_scheduler_process_ended_as_its_fault_says(chaos_run: ChaosRun) -> None:
    """SIGKILLed leaders died of the signal; every other process either stepped down (exit 1 after
    "leader election lost": the paused leader, or a leader that could not renew during the etcd
    election) or exited 0 (the SIGTERMed leader, and every replica stopped at the end). Anything else
    is a crash the faults did not cause."""
    killed = {f.old.identity for f in chaos_run.failovers}
    wrong = []
    for life in chaos_run.lives:
        if life.identity in killed:
            ok = life.exit_code == -signal.SIGKILL
        else:
            ok = life.exit_code == 0 or (
                life.exit_code == 1 and STEP_DOWN in life.log()
            )
        if not ok:
            wrong.append(f"{life.identity} exited with {life.exit_code}:\n{life.log()[-3000:]}")
    assert not wrong, "\n".join(wrong)
