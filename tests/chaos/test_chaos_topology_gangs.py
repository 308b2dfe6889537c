"""Chaos with topology-constrained gangs: gangs that must each be placed whole inside one rack are
submitted while the scheduler's leaders are killed, and judged from the store's own history.

One run (the module fixture ``rack_gang_run``) starts the chaos topology of ``topology.py``, smaller: one
etcd member and one API server (their faults are test_chaos.py's), three scheduler replicas restarted
when they exit, and six nodes labelled into three racks of two (``topology.kubernetes.io/rack``). The
load is gangs only, every one of four pods with ``schedulingConstraints.topology: [{key:
topology.kubernetes.io/rack}]``; three SIGKILLs of the leader are injected while they arrive. Then the
load stops (never inside a gang) and more such gangs fill the nodes to the last place.

Every pod requests the same and each node holds eight, so a rack holds sixteen pods: four gangs. A rack
with four free places can take any gang whole, and every rack's free places are a multiple of four as
long as no gang is split, so with no more pods than places every gang can be placed inside one rack,
however the others lie: a gang still waiting at the end, like a gang split across racks or partly
bound at any revision, is the scheduler's fault.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import POD, POD_GROUP
from tests.chaos import history
from tests.chaos.faults import Failover, leader_fault, wait_bind_after
from tests.chaos.history import Recorded
from tests.chaos.load_thread import submit_all
from tests.chaos.summary import SUMMARY_LINES, failover_lines
from tests.chaos.topology import LOAD_NAMESPACE, RACK_LABEL, TopologySpec, running_topology

pytestmark = [pytest.mark.etcd, pytest.mark.timing, pytest.mark.timeout(300)]

#: 0.75 pods/s of gangs of four: the load lasts 64 s, well past the kills (about 30 s on a 2-core box).
SPEC = TopologySpec(etcd_members=1, apiservers=1, nodes=6, rack_size=2, pod_cpu="500m", load_rate=0.75,
                    gang_fraction=1.0, gang_size=(4, 4), gang_topology_key=RACK_LABEL)
LEADER_KILLS = 3
KILL_BOUND_S = SPEC.lease_duration_s + SPEC.retry_period_s * 1.2 + 1.0
#: How long the last pods may take to be seen, and to be bound after the fill.
DRAIN_TIMEOUT_S = 60.0
SHOWN = 20


@dataclass(frozen=True)
class RackGangRun:
    events: list[Recorded]
    #: Store keys of every pod the load and the fill were told they created.
    submitted: list[str]
    failovers: list[Failover]


def _pods(events: list[Recorded]) -> set[str]:
    return {e.key for e in events if e.key.startswith(POD.key_prefix())}


def _unbound_pods(events: list[Recorded]) -> set[str]:
    return _pods(events) - {b.key for b in history.bindings(events)}


def _keys(names: list[str]) -> list[str]:
    return [POD.key(LOAD_NAMESPACE, name) for name in names]


@pytest.fixture(scope="module")
def rack_gang_run(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[RackGangRun]:
    started = time.monotonic()
    root = tmp_path_factory.mktemp("chaos-rack-gangs")
    with running_topology(SPEC, root) as topology:
        try:
            wait_bind_after(topology, 0)  # the first leader binds a gang
            kills = [leader_fault(topology, signal.SIGKILL, KILL_BOUND_S) for _ in range(LEADER_KILLS)]
            topology.load.stop()
            submitted = _keys(topology.load.submitted())
            topology.recorder.wait_for(lambda events: _pods(events).issuperset(submitted),
                                       "the recorder to see every pod the load created", DRAIN_TIMEOUT_S)
            fill = SPEC.gang_fill(len(_pods(topology.recorder.events())))
            submitted += _keys(submit_all(topology.servers, fill))
            topology.recorder.wait_until(
                lambda events: _pods(events).issuperset(submitted) and not _unbound_pods(events),
                DRAIN_TIMEOUT_S,
            )
            run = RackGangRun(topology.recorder.events(), submitted, kills)
        finally:
            topology.recorder.write(root / "history.txt")
    lines = [*failover_lines(run.failovers, {"SIGKILL": KILL_BOUND_S}),
             f"rack gangs: {len(run.submitted)} pods in gangs of {SPEC.gang_size[0]} on {SPEC.nodes} nodes "
             f"in racks of {SPEC.rack_size} (seed {SPEC.seed}), {time.monotonic() - started:.0f} s"]
    request.config.stash[SUMMARY_LINES] = [*request.config.stash.get(SUMMARY_LINES, []), *lines]
    print("\n" + "\n".join(lines))
    yield run


def _shown(problems: list[str]) -> str:
    more = f"\n... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return "\n".join(problems[:SHOWN]) + more


def _groups(events: list[Recorded]) -> dict[str, objects_pb2.PodGroup]:
    """Every PodGroup of the run as it last stood, by "namespace/name"."""
    groups = {}
    for event in events:
        if event.key.startswith(POD_GROUP.key_prefix()) and isinstance(event.obj, objects_pb2.PodGroup):
            groups[f"{event.obj.metadata.namespace}/{event.obj.metadata.name}"] = event.obj
    return groups


def test_every_gang_is_constrained_to_a_rack_and_bound_whole_in_the_end(rack_gang_run: RackGangRun) -> None:
    groups = _groups(rack_gang_run.events)
    assert len(groups) == SPEC.capacity // SPEC.gang_size[0]
    assert {history.group_topology_key(group) for group in groups.values()} == {RACK_LABEL}
    bound = history.gang_bindings(rack_gang_run.events)
    short = [f"gang {name}: {len(bound.get(name, []))} of its {history.gang_min_count(group)} pods bound"
             for name, group in groups.items() if len(bound.get(name, [])) != history.gang_min_count(group)]
    assert not short, _shown(short)
    problems = history.check_bound_once(rack_gang_run.events, rack_gang_run.submitted)
    assert not problems, _shown(problems)


def test_no_gang_is_ever_partly_bound(rack_gang_run: RackGangRun) -> None:
    problems = history.check_gangs_never_partly_bound(rack_gang_run.events)
    assert not problems, _shown(problems)


def test_no_gang_is_ever_split_across_racks(rack_gang_run: RackGangRun) -> None:
    problems = history.check_gangs_in_one_domain(rack_gang_run.events)
    assert not problems, _shown(problems)


def test_the_gangs_were_bound_by_several_leaders_each_under_its_own_fence(rack_gang_run: RackGangRun) -> None:
    assert len(rack_gang_run.failovers) == LEADER_KILLS
    tenures = {binding.fence for binds in history.gang_bindings(rack_gang_run.events).values()
               for binding in binds}
    assert len(tenures) >= 3, f"every gang was bound under {sorted(tenures)}"
    problems = history.check_fenced_binds(rack_gang_run.events)
    assert not problems, _shown(problems)
