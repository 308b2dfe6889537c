"""PodDisruptionBudget status in `podsched simulate` (docs/scenario-format.md: a PDB's given
status.disruptionsAllowed is used as is; otherwise its status is computed from the bound pods, which
all count as Running and healthy). The real engine runs in-process on a real embedded control plane.

One scenario, in two variants: a budget over the lowest-priority running pod, with or without a
pinned status. A preemptor needs one of two running pods' room, and kube-scheduler's victim selection
puts back pods whose eviction would violate a budget first:
- computed (maxUnavailable 1 over its one pod): the disruption controller says 1 disruption allowed, so
  no victim violates anything, the higher-priority pod is put back first and the guarded pod goes;
- pinned (status.disruptionsAllowed 0): the given status stands, the guarded pod is put back first and
  the unguarded one goes.
A second budget, never pinned, follows a pod the simulation binds. The statuses are read from the API
once the simulation is quiescent.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import POD_DISRUPTION_BUDGET
from cluster.api.manifest import load_text
from cluster.simulate import build_scenario, engine, simulate
from cluster.simulate.controlplane import ControlPlane
from scheduler.config import parse_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

SCENARIO = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: lowest}}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: low}}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: high}}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "2", memory: 16Gi}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: n2}}
status: {{allocatable: {{cpu: "1", memory: 16Gi}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: guarded-budget}}
spec:
  maxUnavailable: 1
  selector: {{matchLabels: {{app: guarded}}}}
{guarded_status}---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web-budget, namespace: shop}}
spec:
  minAvailable: 1
  selector: {{matchLabels: {{app: web}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: guarded, labels: {{app: guarded}}}}
spec:
  nodeName: n1
  priorityClassName: lowest
  containers: [{{name: app, image: pause, resources: {{requests: {{cpu: "1"}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: unguarded, labels: {{app: unguarded}}}}
spec:
  nodeName: n1
  priorityClassName: low
  containers: [{{name: app, image: pause, resources: {{requests: {{cpu: "1"}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: web-1, namespace: shop, labels: {{app: web}}}}
spec:
  nodeName: n2
  priorityClassName: high
  containers: [{{name: app, image: pause, resources: {{requests: {{cpu: 500m}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: preemptor}}
spec:
  priorityClassName: high
  containers: [{{name: app, image: pause, resources: {{requests: {{cpu: "1"}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: web-2, namespace: shop, labels: {{app: web}}}}
spec:
  priorityClassName: high
  containers: [{{name: app, image: pause, resources: {{requests: {{cpu: 500m}}}}}}]
"""

PINNED_STATUS = textwrap.dedent("""\
    status:
      disruptionsAllowed: 0
      currentHealthy: 7
      desiredHealthy: 7
      expectedPods: 7
    """)

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"postFilter": {"enabled": [{"name": "DefaultPreemption"}]}}}],
}

#: (expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed, observedGeneration)
Status = tuple[int, int, int, int, int]


def status_of(pdb: objects_pb2.PodDisruptionBudget) -> Status:
    s = pdb.status
    return (s.expected_pods, s.current_healthy, s.desired_healthy, s.disruptions_allowed,
            s.observed_generation)


class StatusReadingDriver(engine.Driver):
    """The engine's own driver, which also reads every PDB from the API once the run is quiescent."""

    statuses: dict[str, Status] = {}

    def __init__(self, plane: ControlPlane, *args: Any, **kwargs: Any) -> None:
        super().__init__(plane, *args, **kwargs)
        self._api = plane.client

    async def run(self) -> None:
        await super().run()
        listed = await self._api.list(POD_DISRUPTION_BUDGET)
        StatusReadingDriver.statuses = {
            f"{pdb.metadata.namespace}/{pdb.metadata.name}": status_of(pdb)  # type: ignore[attr-defined]
            for pdb in listed.items
        }


@pytest.mark.parametrize(
    ("guarded_status", "deleted", "guarded_budget"),
    [
        # The guarded pod was evicted: its budget matches nothing any more, which allows no disruption.
        ("", "unguarded-stays", (0, 0, 0, 0, 1)),
        # Exactly what the scenario gave; observedGeneration 0: the controller never wrote it.
        (PINNED_STATUS, "guarded-stays", (7, 7, 7, 0, 0)),
    ],
    ids=["computed", "pinned"],
)
async def test_pdb_status_is_computed_unless_the_scenario_pins_it(
    monkeypatch: pytest.MonkeyPatch, guarded_status: str, deleted: str, guarded_budget: Status
) -> None:
    monkeypatch.setattr(engine, "Driver", StatusReadingDriver)
    monkeypatch.setattr(StatusReadingDriver, "statuses", {})
    text = SCENARIO.format(guarded_status=guarded_status)
    scenario = build_scenario(load_text(text, source="pdb.yaml"))
    registry = Registry(IN_TREE)
    result = await simulate(scenario, parse_config(CONFIG, registry=registry), registry, timeout_s=60)

    outcomes = {outcome.key: outcome for outcome in result.outcomes}
    evicted, kept = ("default/guarded", "default/unguarded") if deleted == "unguarded-stays" else (
        "default/unguarded", "default/guarded")
    assert (outcomes[evicted].deleted, outcomes[evicted].node) == (True, "n1")
    assert (outcomes[kept].deleted, outcomes[kept].node) == (False, "n1")
    assert outcomes["default/preemptor"].node == "n1"
    assert outcomes["shop/web-2"].node == "n2"
    assert StatusReadingDriver.statuses == {
        "default/guarded-budget": guarded_budget,
        # web-1 ran from the start, web-2 was bound by the simulation: both count, one may go.
        "shop/web-budget": (2, 2, 1, 1, 1),
    }


@pytest.mark.parametrize(
    ("status", "pinned"),
    [("", False), ("status: {}\n", True), ("status: {disruptionsAllowed: 0}\n", True),
     ("status: {disruptionsAllowed: 3}\n", True)],
    ids=["no-status", "empty-status", "zero-allowed", "some-allowed"],
)
def test_a_pdb_that_gives_a_status_is_pinned(status: str, pinned: bool) -> None:
    text = textwrap.dedent("""\
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: budget, namespace: shop}
        spec:
          minAvailable: 1
          selector: {matchLabels: {app: web}}
        """) + status
    scenario = build_scenario(load_text(text, source="pdb.yaml"))
    assert scenario.pinned_pdbs() == (frozenset({"shop/budget"}) if pinned else frozenset())
