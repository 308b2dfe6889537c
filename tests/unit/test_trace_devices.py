"""A trace's GPUs as DRA devices (`podsched replay --gpus devices`): the nodes' ResourceSlices of shareable
GPUs and the DeviceClass, the pods' ResourceClaims (a share of one device, or whole devices) with the model
restriction as a CEL selector, what the allocator makes of them, what is left alone, and the limits
refused with the node or pod named."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cluster.api import objects_pb2, validation
from cluster.api.dra.cel import compile_device_selector
from cluster.api.manifest import load_paths
from cluster.simulate.trace import Trace, TraceError, devices, load_trace
from cluster.simulate.trace.devices import as_devices
from cluster.simulate.trace.model import GPU_RESOURCE
from scheduler.dra import AllocatedState, Allocator, allocated_state_of, share_ids_from
from scheduler.plugins.helpers import RequiredNodeAffinity
from tests.unit.test_trace_openb import NODE_HEADER, POD_HEADER, write

NODES = [
    "node-g3,128000,786432,2,G3",
    "node-cpu,32000,262144,0,",
    "node-v100,96000,393216,1,V100M32",
]
PODS = [
    "pod-two-models,16000,32768,1,1000,V100M16|V100M32,LS,Running,100,200,100",
    "pod-one-model,1000,1024,2,1000,G3,LS,Running,100,200,100",
    "pod-any,1000,1024,1,500,,BE,Running,100,200,100",
    "pod-cpu,1000,1024,0,0,,BE,Running,100,200,100",
]


def openb(tmp_path: Path, nodes: list[str] = NODES, pods: list[str] = PODS) -> Trace:
    return load_trace(write(tmp_path, "nodes.csv", NODE_HEADER, nodes),
                      write(tmp_path, "pods.csv", POD_HEADER, pods))


def by_name(trace: Trace) -> dict[str, objects_pb2.Pod]:
    return {entry.pod.metadata.name: entry.pod for entry in trace.pods}


def claims(trace: Trace) -> dict[str, objects_pb2.ResourceClaim | None]:
    return {entry.pod.metadata.name: entry.claim for entry in trace.pods}


def test_each_gpu_node_gets_a_slice_of_one_device_per_gpu_and_no_extended_resource(tmp_path: Path) -> None:
    mapped = as_devices(openb(tmp_path))
    classes = [obj for obj in mapped.objects if isinstance(obj, objects_pb2.DeviceClass)]
    slices = {obj.metadata.name: obj for obj in mapped.objects if isinstance(obj, objects_pb2.ResourceSlice)}
    assert [c.metadata.name for c in classes] == ["gpu.podsched.io"]
    assert [s.cel.expression for s in classes[0].spec.selectors] == ['device.driver == "gpu.podsched.io"']
    assert sorted(slices) == ["node-g3", "node-v100"]
    g3 = slices["node-g3"].spec
    assert (g3.driver, g3.node_name, g3.pool.name, g3.pool.resource_slice_count) == (
        "gpu.podsched.io", "node-g3", "node-g3", 1)
    assert [(d.name, d.attributes["model"].string_value) for d in g3.devices] == [
        ("gpu-0", "G3"), ("gpu-1", "G3")]
    # Shareable by thousandths of the GPU: a claim takes 1 to 1000 of them, all when it names no amount.
    # openb gives no GPU memory, so that is the only capacity.
    for device in g3.devices:
        assert device.allow_multiple_allocations
        assert list(device.capacity) == ["milli"]
        milli = device.capacity["milli"]
        assert (milli.value, milli.request_policy.default) == ("1000", "1000")
        policy = milli.request_policy.valid_range
        assert (policy.min, policy.max, policy.step) == ("1", "1000", "1")
    for node in mapped.nodes:
        assert GPU_RESOURCE not in node.status.allocatable and GPU_RESOURCE not in node.status.capacity
        assert validation.validate_object(node) == []
    for obj in [*classes, *slices.values()]:
        assert validation.validate_object(obj) == []


def test_each_gpu_pod_gets_a_claim_of_its_count_with_its_models_as_a_selector(tmp_path: Path) -> None:
    original = openb(tmp_path)
    mapped = as_devices(original)
    pods, made = by_name(mapped), claims(mapped)
    assert made["pod-cpu"] is None and pods["pod-cpu"] == by_name(original)["pod-cpu"]
    for name, count, selectors in [
        ("pod-two-models", 1, ['device.attributes["gpu.podsched.io"].model in ["V100M16", "V100M32"]']),
        ("pod-one-model", 2, ['device.attributes["gpu.podsched.io"].model == "G3"']),
        ("pod-any", 1, []),
    ]:
        claim, pod = made[name], pods[name]
        assert claim is not None
        assert (claim.metadata.name, claim.metadata.namespace) == (name, "default")
        [request] = claim.spec.devices.requests
        assert (request.name, request.exactly.device_class_name, request.exactly.allocation_mode,
                request.exactly.count) == ("gpus", "gpu.podsched.io", "ExactCount", count)
        assert [s.cel.expression for s in request.exactly.selectors] == selectors
        # A share of one GPU asks for that many thousandths of its device; whole GPUs name no amount.
        expected = {"milli": "500"} if name == "pod-any" else {}
        assert dict(request.exactly.capacity.requests) == expected
        assert [(c.name, c.resource_claim_name) for c in pod.spec.resource_claims] == [("gpus", name)]
        [container] = pod.spec.containers
        assert [c.name for c in container.resources.claims] == ["gpus"]
        assert GPU_RESOURCE not in container.resources.requests
        assert GPU_RESOURCE not in container.resources.limits
        assert not pod.spec.HasField("affinity"), "the model restriction moved to the selector"
        assert validation.validate_object(claim) == [] and validation.validate_object(pod) == []
    assert pods["pod-any"].metadata.annotations["replay.podsched.io/gpu-milli"] == "500"


def allocate(trace: Trace, pod: str, done: list[objects_pb2.ResourceClaim]) -> list[tuple[str, str]] | None:
    """Allocates ``pod``'s claim on the trace's one GPU node beside the ``done`` claims: its devices and the
    milli each consumes, None when it does not fit (the allocated claim joins ``done``)."""
    [claim] = [entry.claim for entry in trace.pods if entry.pod.metadata.name == pod]
    assert claim is not None
    [device_class] = [obj for obj in trace.objects if isinstance(obj, objects_pb2.DeviceClass)]
    slices = [obj for obj in trace.objects if isinstance(obj, objects_pb2.ResourceSlice)]
    allocator = Allocator([claim], allocated_state_of(done) if done else AllocatedState(),
                          {device_class.metadata.name: device_class}.get, slices,
                          new_share_id=share_ids_from(random.Random(1)))
    results = allocator.allocate(trace.nodes[0])
    if results is None:
        return None
    allocated = objects_pb2.ResourceClaim()
    allocated.CopyFrom(claim)
    allocated.status.allocation.CopyFrom(results[0])
    done.append(allocated)
    return [(r.device, r.consumed_capacity["milli"]) for r in results[0].devices.results]


def test_shares_fill_a_device_and_a_whole_gpu_takes_only_a_device_nobody_shares(tmp_path: Path) -> None:
    trace = as_devices(openb(tmp_path, nodes=["node-g3,128000,786432,2,G3"], pods=[
        "half-1,1000,1024,1,500,,BE,Running,100,200,100",
        "half-2,1000,1024,1,500,,BE,Running,100,200,100",
        "small,1000,1024,1,300,,BE,Running,100,200,100",
        "whole,1000,1024,1,1000,,BE,Running,100,200,100",
        "pair,1000,1024,2,1000,,BE,Running,100,200,100",
    ]))
    done: list[objects_pb2.ResourceClaim] = []
    assert allocate(trace, "half-1", done) == [("gpu-0", "500")]
    assert allocate(trace, "half-2", done) == [("gpu-0", "500")]
    assert allocate(trace, "small", done) == [("gpu-1", "300")]
    assert allocate(trace, "whole", done) is None, "no device is free of shares"
    assert allocate(trace, "whole", []) == [("gpu-0", "1000")]
    assert allocate(trace, "pair", []) == [("gpu-0", "1000"), ("gpu-1", "1000")]
    whole: list[objects_pb2.ResourceClaim] = []
    allocate(trace, "whole", whole)
    assert allocate(trace, "small", whole) == [("gpu-1", "300")], "no share joins a whole GPU"


def test_the_selector_accepts_the_devices_the_node_affinity_accepted_the_nodes_of(tmp_path: Path) -> None:
    original = openb(tmp_path)
    mapped = as_devices(original)
    slices = [obj for obj in mapped.objects if isinstance(obj, objects_pb2.ResourceSlice)]
    nodes = {node.metadata.name: node for node in original.nodes}
    for entry, pod in zip(mapped.pods, by_name(original).values(), strict=True):
        if entry.claim is None:
            continue
        selectors = entry.claim.spec.devices.requests[0].exactly.selectors
        programs = [compile_device_selector(s.cel.expression) for s in selectors]
        affinity = RequiredNodeAffinity.from_pod(pod)
        for resource_slice in slices:
            device = resource_slice.spec.devices[0]
            device_fits = all(p.matches(resource_slice.spec.driver, device) for p in programs)
            assert device_fits == affinity.matches(nodes[resource_slice.spec.node_name])


def test_a_gpu_node_without_a_model_fails_a_restricted_selector_instead_of_erring(tmp_path: Path) -> None:
    nodes = ("name,cpu,memory,gpu,labels\nbare,8,8Gi,2,\n"
             "v100,8,8Gi,2,nvidia.com/gpu.product=V100;nvidia.com/gpu.memory=16384\n")
    pods = "name,cpu,gpu,node_selector\np,1,1,nvidia.com/gpu.product=V100\nq,1,1,zone=a\n"
    (tmp_path / "n.csv").write_text(nodes)
    (tmp_path / "p.csv").write_text(pods)
    mapped = as_devices(load_trace(str(tmp_path / "n.csv"), str(tmp_path / "p.csv")))
    slices = {obj.metadata.name: obj for obj in mapped.objects if isinstance(obj, objects_pb2.ResourceSlice)}
    assert not slices["bare"].spec.devices[0].attributes
    memory = slices["v100"].spec.devices[0].capacity["memory"]
    # A share takes none of the memory unless it asks, so that the memory does not stop the next share.
    assert (memory.value, memory.request_policy.default, memory.request_policy.valid_range.min) == (
        "16384Mi", "0", "0")
    assert validation.validate_object(slices["v100"]) == []
    p, q = mapped.pods
    assert dict(p.pod.spec.node_selector) == {} and dict(q.pod.spec.node_selector) == {"zone": "a"}
    assert p.claim is not None
    [selector] = p.claim.spec.devices.requests[0].exactly.selectors
    program = compile_device_selector(selector.cel.expression)
    assert not program.matches("gpu.podsched.io", slices["bare"].spec.devices[0])
    assert program.matches("gpu.podsched.io", slices["v100"].spec.devices[0])


def test_an_affinity_of_several_terms_is_left_to_the_node_labels(tmp_path: Path) -> None:
    original = openb(tmp_path, pods=[PODS[0]])
    pod = original.pods[0].pod
    extra = objects_pb2.NodeSelectorTerm()
    extra.match_expressions.add(key="zone", operator="In", values=["a"])
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    required.node_selector_terms.append(extra)
    [entry] = as_devices(original).pods
    assert entry.pod.spec.affinity == pod.spec.affinity
    assert entry.claim is not None and not entry.claim.spec.devices.requests[0].exactly.selectors


def test_more_gpus_than_a_slice_or_a_claim_holds_is_refused_naming_the_node_and_pod(tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text("name,cpu,memory,gpu\nbig,8,8Gi,129\nok,8,8Gi,33\n")
    (tmp_path / "p.csv").write_text("name,cpu,gpu\nsmall,1,32\nhuge,1,33\n")
    loaded = load_trace(str(tmp_path / "n.csv"), str(tmp_path / "p.csv"))
    with pytest.raises(TraceError) as caught:
        as_devices(loaded)
    assert caught.value.problems == [
        "node big: 129 GPUs: a node's devices are published in one ResourceSlice, which holds at most 128",
        f"{tmp_path / 'p.csv'}:3: pod huge: 33 GPUs: a claim is allocated at most 32 devices",
    ]


def test_a_trace_without_gpus_is_unchanged(tmp_path: Path) -> None:
    original = openb(tmp_path, nodes=[NODES[1]], pods=[PODS[3]])
    mapped = as_devices(original)
    assert (mapped.nodes, mapped.pods, mapped.objects) == (original.nodes, original.pods, original.objects)


def test_a_yaml_pod_giving_only_the_gpu_limit_gets_its_claim_and_its_share(tmp_path: Path) -> None:
    # The API server defaults an extended resource's request from its limit, so the scheduler counts it.
    (tmp_path / "nodes.yaml").write_text(
        'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n'
        '  capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2"}\n')
    (tmp_path / "pods.yaml").write_text("---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  annotations: {annotations}\nspec:\n"
        f"  containers:\n  - name: app\n    image: busybox\n"
        f'    resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}\n'
        for name, gpus, annotations in [("half", 1, '{replay.podsched.io/gpu-milli: "500"}'),
                                        ("two", 2, "{}")]))
    mapped = as_devices(load_trace(str(tmp_path / "nodes.yaml"), str(tmp_path / "pods.yaml")))
    half, two = (entry.claim for entry in mapped.pods)
    assert half is not None and two is not None
    assert (half.spec.devices.requests[0].exactly.count,
            dict(half.spec.devices.requests[0].exactly.capacity.requests)) == (1, {"milli": "500"})
    assert two.spec.devices.requests[0].exactly.count == 2
    for entry in mapped.pods:
        assert GPU_RESOURCE not in entry.pod.spec.containers[0].resources.limits


def test_the_shared_gpu_example_publishes_what_the_importer_does() -> None:
    """examples/gpu-share/cluster.yaml writes out the class and slice --gpus devices makes of its node."""
    manifests = load_paths([str(Path(__file__).parents[2] / "examples" / "gpu-share" / "cluster.yaml")])
    [node] = [m.obj for m in manifests if isinstance(m.obj, objects_pb2.Node)]
    [device_class] = [m.obj for m in manifests if isinstance(m.obj, objects_pb2.DeviceClass)]
    [resource_slice] = [m.obj for m in manifests if isinstance(m.obj, objects_pb2.ResourceSlice)]
    assert isinstance(node, objects_pb2.Node)
    assert isinstance(device_class, objects_pb2.DeviceClass)
    assert isinstance(resource_slice, objects_pb2.ResourceSlice)
    made_class, made_slice = devices.device_class(), devices.resource_slice(node, 2)
    assert (device_class.metadata, device_class.spec) == (made_class.metadata, made_class.spec)
    assert (resource_slice.metadata, resource_slice.spec) == (made_slice.metadata, made_slice.spec)
