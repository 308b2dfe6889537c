"""`podsched simulate` runs pods of the system priority classes in any namespace: the API refuses them
where no quota opens the classes (quota admission's limitedResources), so the simulation gives each
namespace that uses them the quota the API server gives kube-system."""

from __future__ import annotations

from cluster.api.manifest import load_text
from cluster.simulate import build_scenario, simulate
from scheduler.config import parse_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: critical, namespace: shop}
spec:
  priorityClassName: system-cluster-critical
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: by-value}
spec:
  priority: 2000001000
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


async def test_system_class_pods_run_in_any_namespace_of_a_scenario() -> None:
    scenario = build_scenario(load_text(SCENARIO, source="critical.yaml"))
    registry = Registry(IN_TREE)
    result = await simulate(scenario, parse_config(CONFIG, registry=registry), registry, timeout_s=60)
    assert {outcome.key: outcome.node for outcome in result.outcomes} == {
        "shop/critical": "n1", "default/by-value": "n1"
    }
