"""kubectl's columns for resource.k8s.io/v1 (a claim's STATE as upstream's resourceClaimState words it)
and the describe sections: a claim's requests, allocation and consumers, a slice's devices with the
claims that hold them, a pod's claims with their names and states."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.kinds import DEVICE_CLASS, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, RESOURCE_SLICE, Kind
from cluster.client import ObjectList
from cluster.printers import catalog, pods, resourceclaims, resourceslices
from cluster.printers.describe import DescribeText
from tests import builders

SHARE_ID = "c7b1ad8e-9a2b-4f0e-8d1c-2f6b3f7a9e10"


class _Claims:
    """A Reader holding some claims (and nothing else)."""

    def __init__(self, *claims: objects_pb2.ResourceClaim) -> None:
        self.claims = list(claims)

    async def list_all(self, kind: Kind[Any], namespace: str = "", *, label_selector: str = "",
                       field_selector: str = "") -> ObjectList:
        items = [c for c in self.claims if kind is RESOURCE_CLAIM and namespace in ("", c.metadata.namespace)]
        return ObjectList(items=items, resource_version="1")


def _claim(name: str = "gpu", *, allocated: bool = False, reserved: bool = False,
           deleted: bool = False) -> objects_pb2.ResourceClaim:
    claim = json_format.ParseDict({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "one", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
            "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'a100'"}}],
            "capacity": {"requests": {"memory": "10Gi"}}}}]}},
    }, objects_pb2.ResourceClaim())
    if allocated:
        json_format.ParseDict({"allocation": {
            "devices": {"results": [{"request": "one", "driver": "gpu.example.com", "pool": "node-1",
                                     "device": "gpu-0", "shareID": SHARE_ID,
                                     "consumedCapacity": {"memory": "10Gi"}}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}, claim.status)
    if reserved:
        claim.status.reserved_for.add(resource="pods", name="web", uid="u1")
    if deleted:
        claim.metadata.deletion_timestamp.seconds = 1
    return claim


@pytest.mark.parametrize(
    ("claim", "state"),
    [
        (_claim(), "pending"),
        (_claim(allocated=True), "allocated"),
        (_claim(allocated=True, reserved=True), "allocated,reserved"),
        (_claim(deleted=True), "deleted"),
        (_claim(allocated=True, reserved=True, deleted=True), "deleted,allocated,reserved"),
    ],
)
def test_claim_state_is_upstreams(claim: objects_pb2.ResourceClaim, state: str) -> None:
    assert resourceclaims.claim_state(claim) == state
    assert catalog.row(RESOURCE_CLAIM, claim, wide=False, all_namespaces=False)[:2] == ["gpu", state]


def test_columns_are_kubectls() -> None:
    assert catalog.header(DEVICE_CLASS, wide=False, all_namespaces=False) == ["NAME", "AGE"]
    assert catalog.header(RESOURCE_CLAIM, wide=False, all_namespaces=True) == ["NAMESPACE", "NAME", "STATE",
                                                                              "AGE"]
    assert catalog.header(RESOURCE_CLAIM_TEMPLATE, wide=False, all_namespaces=False) == ["NAME", "AGE"]
    assert catalog.header(RESOURCE_SLICE, wide=False, all_namespaces=False) == ["NAME", "NODE", "DRIVER",
                                                                               "POOL", "AGE"]
    resource_slice = _slice()
    assert catalog.row(RESOURCE_SLICE, resource_slice, wide=False, all_namespaces=False)[:4] == [
        "node-1-gpu", "node-1", "gpu.example.com", "node-1"]
    resource_slice.spec.ClearField("node_name")
    resource_slice.spec.all_nodes = True
    assert catalog.row(RESOURCE_SLICE, resource_slice, wide=False, all_namespaces=False)[1] == "<none>"


def _describe(printer: Any, reader: Any, obj: Any) -> str:
    text = DescribeText()
    asyncio.run(printer.describe(reader, obj, text))
    return text.render()


def test_a_claim_describes_its_requests_allocation_and_consumers() -> None:
    rendered = _describe(resourceclaims.PRINTER, _Claims(), _claim(allocated=True, reserved=True))
    for expected in ("State:", "allocated,reserved", "Device Class:", "gpu.example.com",
                     "device.attributes['gpu.example.com'].model == 'a100'", "Capacity:", "memory=10Gi",
                     "metadata.name In [node-1]", SHARE_ID, "gpu-0", "Reserved For:", "pods", "web", "u1"):
        assert expected in rendered, expected
    pending = _describe(resourceclaims.PRINTER, _Claims(), _claim())
    assert "Allocation:" in pending and "Reserved For:" in pending


def _slice() -> objects_pb2.ResourceSlice:
    return json_format.ParseDict({
        "metadata": {"name": "node-1-gpu"},
        "spec": {"driver": "gpu.example.com",
                 "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                 "nodeName": "node-1", "devices": [
                     {"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "cores": {"int": 108}},
                      "capacity": {"memory": {"value": "40Gi"}},
                      "taints": [{"key": "example.com/degraded", "effect": "NoSchedule"}]},
                     {"name": "gpu-1", "attributes": {"model": {"string": "a100"}}}]},
    }, objects_pb2.ResourceSlice())


def test_a_slice_describes_its_devices_and_who_holds_them() -> None:
    rendered = _describe(resourceslices.PRINTER, _Claims(_claim(allocated=True)), _slice())
    lines = rendered.splitlines()
    gpu0 = lines.index(next(line for line in lines if line.strip() == "gpu-0:"))
    gpu1 = lines.index(next(line for line in lines if line.strip() == "gpu-1:"))
    held = "\n".join(lines[gpu0:gpu1])
    assert "model=a100" in held and "cores=108" in held and "memory=40Gi" in held
    assert "example.com/degraded:NoSchedule" in held
    assert "default/gpu" in held
    assert "default/gpu" not in "\n".join(lines[gpu1:])


def test_a_pod_describes_its_claims_with_their_names_and_states() -> None:
    pod = builders.pod("web", image="busybox")
    pod.spec.resource_claims.add(name="shared", resource_claim_name="gpu")
    pod.spec.resource_claims.add(name="own", resource_claim_template_name="gpu-template")
    pod.spec.resource_claims.add(name="later", resource_claim_template_name="gpu-template")
    pod.status.resource_claim_statuses.add(name="own", resource_claim_name="web-own-x7k2p")
    rendered = _describe(pods.PRINTER, _Claims(_claim(allocated=True, reserved=True),
                                               _claim("web-own-x7k2p")), pod)
    section = rendered.split("Resource Claims:")[1].splitlines()
    assert section[1].split() == ["Name", "From", "Claim", "State"]
    rows = [line.split() for line in section[2:5]]
    assert rows == [
        ["shared", "claim", "gpu", "allocated,reserved"],
        ["own", "template", "gpu-template", "web-own-x7k2p", "pending"],
        ["later", "template", "gpu-template", "<none>", "not", "created"],
    ]
