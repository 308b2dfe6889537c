"""`podsched simulate` with a GPU-sharing policy: shared GPUs (a ResourceSlice of capacity-sharing
devices, claims asking for milli of one), and the policy's GPU choice in the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.simulate import load_scenario, simulate
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

POLICIES = Path(__file__).resolve().parents[2] / "examples" / "replay" / "fgd"

GPU = """
  - name: gpu-{index}
    allowMultipleAllocations: true
    attributes: {{model: {{string: V100}}}}
    capacity:
      milli: {{value: "1000", requestPolicy: {{default: "1000", validRange: {{min: "1", max: "1000"}}}}}}
"""

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "32", memory: 64Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.podsched.io}
spec: {selectors: [{cel: {expression: device.driver == "gpu.podsched.io"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.podsched.io
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
""" + GPU.format(index=0) + GPU.format(index=1)

SHARED_POD = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}-gpu, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: gpu.podsched.io, capacity: {{requests: {{milli: "{milli}"}}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers:
  - name: c
    image: busybox
    resources: {{requests: {{cpu: "1"}}, claims: [{{name: gpu}}]}}
  resourceClaims: [{{name: gpu, resourceClaimName: {name}-gpu}}]
"""


async def _devices(tmp_path: Path, config: Path | None) -> dict[str, str]:
    """Each pod's device: a takes 300 of gpu-0, b 800 of gpu-1, then c asks 200."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(CLUSTER + "".join(SHARED_POD.format(name=name, milli=milli)
                                          for name, milli in (("a", 300), ("b", 800), ("c", 200))))
    registry = Registry(IN_TREE)
    result = await simulate(load_scenario([str(scenario)]),
                            load_config(None if config is None else str(config), registry=registry), registry,
                            timeout_s=60)
    return {pod["name"]: device["device"] for pod in result.to_json()["pods"]
            for claim in pod.get("claims", ()) for device in claim["devices"]}


@pytest.mark.parametrize("policy", ["gpu-packing", "best-fit", "fgd"])
async def test_a_policy_shares_the_gpu_it_picks(tmp_path: Path, policy: str) -> None:
    # The allocator alone takes the first GPU that holds c (gpu-0, 700 free); the policies give c the
    # least free one that holds it (gpu-1, 200 free): best fit, and for FGD the least fragmenting.
    assert await _devices(tmp_path, None) == {"a": "gpu-0", "b": "gpu-1", "c": "gpu-0"}
    assert await _devices(tmp_path, POLICIES / f"{policy}.yaml") == {"a": "gpu-0", "b": "gpu-1", "c": "gpu-1"}
