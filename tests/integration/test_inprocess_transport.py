"""The in-process transport (``cluster.client.inprocess``) is a fast path of gRPC: a simulation or a replay
through it must come out exactly as through real gRPC on a loopback port, the reference.

Each comparison runs the same input twice in this process, ``in_process=True`` and ``in_process=False``,
and asks for equal results: the conformance cases (tests/conformance/cases, with a case's config when it
has one), the replay of examples/replay/openb-sample, and random small scenarios of nodes, priorities and
pods (a hypothesis property). Equal means the same result JSON (shareIDs included), virtual seconds and
scheduling cycles; the one case whose cycle count over gRPC varies from run to run
(CYCLES_VARY_OVER_GRPC) is held to the rest.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.api.manifest import load_text
from cluster.simulate import Scenario, build_scenario, load_scenario, simulate
from cluster.simulate.replay import replay
from cluster.simulate.trace import load_trace
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "conformance" / "cases"
OPENB_SAMPLE = REPO / "examples" / "replay" / "openb-sample"
#: Wall-clock budget of one simulation (a case takes about a second).
TIMEOUT_S = 120.0


def _case_names() -> list[str]:
    names = sorted(path.name.removesuffix(".yaml") for path in CASES.glob("*.yaml")
                   if not path.name.endswith(".config.yaml"))
    assert names, f"no conformance cases in {CASES}"
    return names


@dataclass(frozen=True)
class Outcome:
    """What a simulation yields that a transport must not change."""

    result: dict[str, Any]
    cycles: int
    virtual_seconds: float


async def _simulate(scenario: Scenario, config_path: str | None, *, in_process: bool) -> Outcome:
    registry = Registry(IN_TREE)
    config = load_config(config_path, registry=registry)
    result = await simulate(scenario, config, registry, timeout_s=TIMEOUT_S, in_process=in_process)
    return Outcome(result.to_json(), result.cycles, result.virtual_seconds)


#: Cases whose cycle count over gRPC depends on real time, with why; their results must still match.
#: Here the victims' deletions, which the scheduler's asynchronous preemption sends during the gang's
#: failed cycle, may reach the scheduler's informer before that cycle requeues the gang (as a move
#: during the cycle, to backoff: one more cycle) or after it (to unschedulable, woken by the deletion),
#: as in kube-scheduler; in process they always arrive after it.
CYCLES_VARY_OVER_GRPC = {"gang_preemption_lowest_first": "asynchronous preemption races the requeue"}


@pytest.mark.parametrize("name", _case_names())
async def test_a_conformance_case_comes_out_the_same_through_both_transports(name: str) -> None:
    scenario = load_scenario([str(CASES / f"{name}.yaml")])
    config = CASES / f"{name}.config.yaml"
    config_path = str(config) if config.exists() else None
    fast = await _simulate(scenario, config_path, in_process=True)
    reference = await _simulate(scenario, config_path, in_process=False)
    assert fast.result["pods"], f"case {name}: no pod in the result"
    if name in CYCLES_VARY_OVER_GRPC:
        reference = dataclasses.replace(reference, cycles=fast.cycles)
    assert fast == reference, f"case {name}: in process {fast}\nover gRPC {reference}"


async def test_the_openb_sample_replays_the_same_through_both_transports() -> None:
    trace = load_trace(str(OPENB_SAMPLE / "nodes.csv"), str(OPENB_SAMPLE / "pods.csv"))
    runs = []
    for in_process in (True, False):
        registry = Registry(IN_TREE)
        runs.append(await replay(trace, load_config(None, registry=registry), registry, name="default",
                                 in_process=in_process))
    fast, reference = runs
    assert fast.records, "the replay recorded no pod"
    assert fast.records == reference.records
    assert fast.samples == reference.samples
    assert (fast.preempted, fast.completed, fast.virtual_seconds) == (
        reference.preempted, reference.completed, reference.virtual_seconds)


#: name -> value of the PriorityClasses a random scenario's pods pick from.
CLASSES = {"low": 10, "mid": 100, "high": 1000}


@dataclass(frozen=True)
class RandomScenario:
    #: Each node's allocatable cpu, in cores.
    nodes: list[int]
    #: Each pod's (cpu request in millicores, PriorityClass, node it is bound to or None).
    pods: list[tuple[int, str, int | None]]

    def yaml(self) -> str:
        docs = [f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\n"
                f"value: {value}\n" for name, value in CLASSES.items()]
        docs += [f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{index}}}\n"
                 f"status: {{allocatable: {{cpu: '{cores}', memory: 8Gi, pods: '110'}}}}\n"
                 for index, cores in enumerate(self.nodes)]
        for index, (milli, klass, node) in enumerate(self.pods):
            bound = f"  nodeName: n{node}\n" if node is not None else ""
            docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{index}}}\nspec:\n{bound}"
                        f"  priorityClassName: {klass}\n"
                        "  containers: [{name: c, image: pause, "
                        f"resources: {{requests: {{cpu: {milli}m}}}}}}]\n")
        return "---\n".join(docs)


@st.composite
def random_scenarios(draw: st.DrawFn) -> RandomScenario:
    nodes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    pods = draw(st.lists(
        st.tuples(st.sampled_from([250, 500, 1000, 2000]), st.sampled_from(sorted(CLASSES)),
                  st.none() | st.integers(0, len(nodes) - 1)),
        min_size=1, max_size=8,
    ))
    return RandomScenario(nodes, pods)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenarios())
def test_random_scenarios_come_out_the_same_through_both_transports(case: RandomScenario) -> None:
    scenario = build_scenario(load_text(case.yaml(), source="random.yaml"))
    fast = asyncio.run(_simulate(scenario, None, in_process=True))
    reference = asyncio.run(_simulate(scenario, None, in_process=False))
    assert len(fast.result["pods"]) == len(case.pods)
    assert fast == reference, f"{case}:\nin process {fast}\nover gRPC {reference}"
