"""`podsched simulate` with Dynamic Resource Allocation's bad references: a claim naming a DeviceClass the
scenario lacks, a pod naming a ResourceClaim or a ResourceClaimTemplate it lacks. None is a scenario
error or a failed run: each pod stays pending, with what the scheduler reports (the plugin's reason for
the missing class; nothing for the missing claims, whose pods wait at the queue's door as in a cluster),
and a claim the controller could not make from a missing template is reported as not made."""

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
status:
  allocatable: {cpu: "4", memory: 16Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: orphan}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: no-such-class}
---
apiVersion: v1
kind: Pod
metadata: {name: class-missing}
spec:
  containers:
  - {name: c, image: pause, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimName: orphan}
---
apiVersion: v1
kind: Pod
metadata: {name: claim-missing}
spec:
  containers:
  - {name: c, image: pause, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimName: nowhere}
---
apiVersion: v1
kind: Pod
metadata: {name: template-missing}
spec:
  containers:
  - {name: c, image: pause, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: nothing}
"""


async def test_missing_class_claim_and_template_leave_pods_pending_with_the_schedulers_word() -> None:
    scenario = build_scenario(load_text(SCENARIO, source="bad.yaml"))
    registry = Registry(IN_TREE)
    result = await simulate(scenario, parse_config(CONFIG, registry=registry), registry, timeout_s=60)
    pods = {pod["name"]: pod for pod in result.to_json()["pods"]}
    assert {name: pod["node"] for name, pod in pods.items()} == {
        "class-missing": None, "claim-missing": None, "template-missing": None}
    assert pods["class-missing"]["reason"].startswith(
        "0/1 nodes are available: request gpu: device class no-such-class does not exist.")
    assert pods["claim-missing"]["reason"] is None and pods["template-missing"]["reason"] is None
    assert [claim["resourceClaim"] for name in ("class-missing", "claim-missing", "template-missing")
            for claim in pods[name]["claims"]] == ["orphan", "nowhere", None]
