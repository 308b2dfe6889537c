"""Properties of preemption end to end, through the `podsched simulate` engine (in-process), over random
small clusters (the seed's model: a preemption removes a subset of the lower-priority pods bound to one
node such that the preemptor becomes feasible there).

Each example: 2-4 nodes of 2-4 cpus; 2-8 running pods of 250m-2 cpus bound where they fit, with
priorities from four PriorityClasses (one of them above every pending pod); 1-2 pending pods of
250m-4 cpus with priorities from three classes (the lowest equal to the top running "low" class);
optionally a PDB with a pinned status over some running pods. Once the simulation is quiescent:

1. no node holds more cpu requests than its allocatable (pods still bound, not deleted); a pending pod
   left unbound (and allowed to preempt) fits on no node even without that node's lower-priority pods;
2. every deleted pod is a victim of a recorded preemption on the node it ran on, whose preemptor had a
   strictly higher priority; no pod of priority >= every pending pod's was deleted; no preemptor with
   ``preemptionPolicy: Never`` preempted;
3. the victim set is minimal: for a preemptor bound at the end on the node it preempted on, adding back
   any single one of its victims to what is bound there at the end overflows the node. (Checked where
   that preemption is the only one on its node, so that nothing else removed pods there afterwards.)

Which preemptor evicted which victims is read from a spy on DefaultPreemption's executor, on the
background path the scheduler uses (kube's ``Preempted by pod <uid> on node <node>`` event carries the
same facts); it does not change behaviour.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cluster.api.manifest import load_text
from cluster.simulate import build_scenario, simulate
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.defaultpreemption.executor import Executor
from scheduler.plugins.registry import IN_TREE

#: name -> (value, preemptionPolicy)
CLASSES: dict[str, tuple[int, str]] = {
    "p10": (10, "PreemptLowerPriority"),
    "p20": (20, "PreemptLowerPriority"),
    "p30": (30, "PreemptLowerPriority"),
    "p100": (100, "PreemptLowerPriority"),
    "p100-never": (100, "Never"),
    "p200": (200, "PreemptLowerPriority"),
    "p1000": (1000, "PreemptLowerPriority"),
}
RUNNING_CLASSES = ("p10", "p20", "p30", "p1000")
PENDING_CLASSES = ("p30", "p100", "p100-never", "p200")
MILLI = 250


@dataclass(frozen=True)
class PodSpec:
    name: str
    milli: int
    klass: str
    node: str | None  # None: pending
    guarded: bool = False

    @property
    def key(self) -> str:
        return f"default/{self.name}"

    @property
    def priority(self) -> int:
        return CLASSES[self.klass][0]

    @property
    def never(self) -> bool:
        return CLASSES[self.klass][1] == "Never"


@dataclass(frozen=True)
class Case:
    nodes: dict[str, int]  # name -> allocatable millicpu
    pods: list[PodSpec]
    #: disruptionsAllowed of the pinned PDB over the pods labelled app=guarded, or None: no PDB.
    pdb_allowed: int | None

    def yaml(self) -> str:
        docs: list[str] = []
        for name, (value, policy) in CLASSES.items():
            docs.append(f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\n"
                        f"value: {value}\npreemptionPolicy: {policy}\n")
        for name, milli in self.nodes.items():
            docs.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
                        f"status: {{allocatable: {{cpu: {milli}m, memory: 16Gi, pods: '110'}}}}\n")
        if self.pdb_allowed is not None:
            guarded = sum(p.guarded for p in self.pods)
            docs.append("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guard}\n"
                        "spec: {maxUnavailable: 1, selector: {matchLabels: {app: guarded}}}\n"
                        f"status: {{disruptionsAllowed: {self.pdb_allowed}, currentHealthy: {guarded}, "
                        f"desiredHealthy: {guarded}, expectedPods: {guarded}}}\n")
        for index, p in enumerate(self.pods):
            node = f"  nodeName: {p.node}\n" if p.node else ""
            start = f"status: {{startTime: '2026-01-01T00:00:{index:02d}Z'}}\n" if p.node else ""
            docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {p.name}, labels: "
                        f"{{app: {'guarded' if p.guarded else 'other'}}}}}\nspec:\n{node}"
                        f"  priorityClassName: {p.klass}\n"
                        "  containers: [{name: c, image: pause, "
                        f"resources: {{requests: {{cpu: {p.milli}m}}}}}}]\n"
                        + start)
        return "---\n".join(docs)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    capacities = draw(st.lists(st.integers(2, 4), min_size=2, max_size=4))
    nodes = {f"n{i}": c * 1000 for i, c in enumerate(capacities)}
    free = dict(nodes)
    pods: list[PodSpec] = []
    running = draw(st.lists(
        st.tuples(st.integers(0, 3), st.integers(2, 8), st.sampled_from(RUNNING_CLASSES), st.booleans()),
        min_size=4, max_size=8))
    for index, (node_index, units, klass, guarded) in enumerate(running):
        milli = units * MILLI
        # Bound within capacity: on the drawn node, else the next one with room, else not at all.
        order = [f"n{(node_index + i) % len(nodes)}" for i in range(len(nodes))]
        node = next((n for n in order if milli <= free[n]), None)
        if node is None:
            continue
        free[node] -= milli
        pods.append(PodSpec(f"r{index}", milli, klass, node, guarded))
    # The first pending pod may preempt everything but p1000 pods; a second one is anything pending.
    pending = [(draw(st.integers(4, 16)), draw(st.sampled_from(("p100", "p200"))))]
    pending += draw(st.lists(st.tuples(st.integers(2, 16), st.sampled_from(PENDING_CLASSES)), max_size=1))
    for index, (units, klass) in enumerate(pending):
        pods.append(PodSpec(f"q{index}", units * MILLI, klass, None))
    pdb_allowed = draw(st.none() | st.integers(0, 1))
    return Case(nodes, pods, pdb_allowed)


@dataclass(frozen=True)
class Preemption:
    preemptor: str
    node: str
    victims: tuple[str, ...]


REGISTRY = Registry(IN_TREE)
CONFIG = load_config(None, registry=REGISTRY)  # kube-scheduler's default profile (with DefaultPreemption)


def run(case: Case) -> tuple[dict[str, Any], list[Preemption]]:
    """Simulate ``case`` (seed 0); every pod's outcome by key, and every preemption in order."""
    preemptions: list[Preemption] = []
    original = Executor.prepare_candidate_async

    async def spy(self: Executor, preemptor: Any, node_name: str, victims: Sequence[Any],
                  component: str, release: Any) -> Any:
        preemptions.append(Preemption(preemptor.key, node_name, tuple(v.key for v in victims)))
        return await original(self, preemptor, node_name, victims, component, release)

    scenario = build_scenario(load_text(case.yaml(), source="property.yaml"))
    # The scheduler preempts asynchronously (scheduler/preemptions.py): the spy is on that path.
    with mock.patch.object(Executor, "prepare_candidate_async", spy):
        result = asyncio.run(simulate(scenario, CONFIG, REGISTRY, seed=0, timeout_s=60))
    return {outcome.key: outcome for outcome in result.outcomes}, preemptions


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_preemption_through_simulate_respects_capacity_priority_and_minimality(case: Case) -> None:
    outcomes, preemptions = run(case)
    specs = {p.key: p for p in case.pods}
    assert set(outcomes) == set(specs)
    for key, outcome in outcomes.items():
        if specs[key].node is not None:
            assert outcome.deleted or outcome.node == specs[key].node, f"{key} moved: {outcome}"
    bound = {key: o.node for key, o in outcomes.items() if not o.deleted and o.node is not None}
    used = Counter[str]()
    for key, node in bound.items():
        used[node] += specs[key].milli
    event(f"preemptions: {len(preemptions)}")

    # 1. Never over allocatable at the end.
    for node, milli in used.items():
        assert milli <= case.nodes[node], f"{node}: {milli}m bound > {case.nodes[node]}m allocatable"

    # 2. Every deletion is a victim of a strictly higher-priority, preempting pod, on the victim's node.
    top_pending = max(p.priority for p in case.pods if p.node is None)
    attributed: dict[str, Preemption] = {}
    for preemption in preemptions:
        preemptor = specs[preemption.preemptor]
        assert not preemptor.never, f"{preemptor.key} has preemptionPolicy Never but preempted"
        assert preemption.victims, f"{preemption} evicts nobody"
        for victim in preemption.victims:
            assert specs[victim].priority < preemptor.priority, f"{victim} is no lower than {preemptor.key}"
            assert outcomes[victim].node == preemption.node, f"{victim} did not run on {preemption.node}"
            attributed.setdefault(victim, preemption)
        final = outcomes[preemption.preemptor]
        if preemption.node not in (final.node, final.nominated_node):
            event("a preemptor ended elsewhere than where it preempted")
    for key, outcome in outcomes.items():
        if outcome.deleted:
            assert key in attributed, f"{key} was deleted by no preemption"
            assert specs[key].priority < top_pending, f"{key} was deleted with priority >= every pending pod"
    for victim in attributed:
        assert outcomes[victim].deleted, f"victim {victim} is still there: {outcomes[victim]}"

    # A pending pod left unbound could not have been placed by preemption either: it was last tried
    # against the final cluster, where no node has room for it even without its lower-priority pods.
    nominated_elsewhere = any(o.nominated_node and o.node is None and not o.deleted
                              for o in outcomes.values())
    for key, outcome in outcomes.items():
        spec = specs[key]
        if spec.node is not None or outcome.deleted or outcome.node is not None:
            continue
        if spec.never or nominated_elsewhere:
            event("an unbound pending pod that may not preempt, or a nomination left")
            continue
        event("an unbound pending pod")
        for node, allocatable in case.nodes.items():
            kept = sum(specs[k].milli for k, n in bound.items()
                       if n == node and specs[k].priority >= spec.priority)
            assert kept + spec.milli > allocatable, (
                f"{key} stayed pending although {node} has room for it once its lower-priority pods go "
                f"({kept}m + {spec.milli}m <= {allocatable}m): {outcome.reason}"
            )

    # 3. Minimality, where the preemption is the only one on its node and its preemptor is bound there.
    per_node = Counter(p.node for p in preemptions)
    for preemption in preemptions:
        final = outcomes[preemption.preemptor]
        if per_node[preemption.node] != 1 or final.deleted or final.node != preemption.node:
            event("minimality not checkable for a preemption")
            continue
        event("minimality checked")
        allocatable = case.nodes[preemption.node]
        for victim in preemption.victims:
            assert used[preemption.node] + specs[victim].milli > allocatable, (
                f"{preemption.preemptor} on {preemption.node} would still fit with {victim} back "
                f"({used[preemption.node]}m + {specs[victim].milli}m <= {allocatable}m): victims "
                f"{preemption.victims} are not minimal"
            )
