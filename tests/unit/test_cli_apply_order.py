"""`podsched apply` writes what a pod refers to before the pod: its claims, their templates, the classes
and the devices they are allocated from."""

from __future__ import annotations

import textwrap

from cluster.api.manifest import load_text
from cluster.cli.apply import _prepare

_DOCS = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: trainer}
    spec:
      containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: one-gpu}
    spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: shared}
    spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: node-1-gpus}
    spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: node-1, resourceSliceCount: 1}}
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.example.com}
    spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
    """)


def test_dra_objects_go_before_the_pods_that_use_them() -> None:
    ordered = [m.kind.name for m in _prepare(load_text(_DOCS, source="dra.yaml"), None)]
    assert ordered == ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "Pod"]
