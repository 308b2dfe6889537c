"""Extended resources backed by DRA, as kube-scheduler's extended/cache_test.go and
extendeddynamicresources_test.go have them: which DeviceClass serves a resource name, the requests and
mappings of the claim made for a pod's containers, and DynamicResources' extension points for a pod asking
for ``example.com/gpu`` on nodes with and without it in their allocatable; in-process, with the real
allocator."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, kinds, objects_pb2
from scheduler.framework import Code, CycleState, DRAManager, NodeInfo, PodInfo, Status
from scheduler.framework.extended_resources import DeviceClassResolver
from scheduler.plugins import dynamicresources
from scheduler.plugins.dynamicresources import CANNOT_ALLOCATE, DynamicResources
from scheduler.plugins.dynamicresources.extended import (
    CANNOT_FIT,
    CANNOT_SCHEDULE,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    requests_and_mappings,
)
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle

NAMESPACE = "default"
POD_NAME = "my-pod"
POD_UID = "1234"
CLASS_NAME = "gpu-class"
GPU = "example.com/gpu"
DRIVER = "some-driver"
WORKER = "worker"
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def make_class(
    name: str = CLASS_NAME, extended: str | None = GPU, created: int = 0
) -> objects_pb2.DeviceClass:
    device_class = builders.device_class(name)
    if extended is not None:
        device_class.spec.extended_resource_name = extended
    device_class.metadata.creation_timestamp.seconds = created
    return device_class


# ------------------------------------------------------------------------------- the class mapping


def test_a_class_serves_its_extended_resource_name_and_its_implicit_name() -> None:
    resolver = DeviceClassResolver()
    for device_class in (make_class("class1", "example.com/gpu1"), make_class("class2", "example.com/gpu2"),
                         make_class("class3", None)):
        resolver.set(device_class)
    served = {name: (found.metadata.name if (found := resolver.get(name)) else None) for name in (
        "example.com/gpu1", "example.com/gpu2", "deviceclass.resource.kubernetes.io/class1",
        "deviceclass.resource.kubernetes.io/class2", "deviceclass.resource.kubernetes.io/class3",
        "example.com/other")}
    assert served == {"example.com/gpu1": "class1", "example.com/gpu2": "class2",
                      "deviceclass.resource.kubernetes.io/class1": "class1",
                      "deviceclass.resource.kubernetes.io/class2": "class2",
                      "deviceclass.resource.kubernetes.io/class3": "class3", "example.com/other": None}


def test_no_classes_serve_nothing() -> None:
    resolver = DeviceClassResolver()
    assert not resolver and resolver.get("example.com/gpu") is None


@pytest.mark.parametrize(
    ("classes", "removed", "expected"),
    [
        ([("old", 1), ("new", 2)], None, "new"),
        ([("new", 2), ("old", 1)], None, "new"),
        ([("b", 1), ("a", 1)], None, "a"),
        ([("old", 1), ("new", 2)], "new", "old"),
        ([("old", 1), ("new", 2)], "old", "new"),
        ([("only", 1)], "only", None),
    ],
    ids=["newest-wins", "newest-wins-whatever-the-order", "lower-name-on-equal-times",
         "deleting-the-winner-promotes-the-next", "deleting-a-loser-keeps-the-winner", "last-one-deleted"],
)
def test_several_classes_naming_one_resource(
    classes: list[tuple[str, int]], removed: str | None, expected: str | None
) -> None:
    resolver = DeviceClassResolver()
    objects = {name: make_class(name, GPU, created) for name, created in classes}
    for device_class in objects.values():
        resolver.set(device_class)
    if removed is not None:
        resolver.remove(objects[removed])
        assert resolver.get(f"deviceclass.resource.kubernetes.io/{removed}") is None
    found = resolver.get(GPU)
    assert (found.metadata.name if found else None) == expected


def test_a_class_renaming_its_resource_gives_up_the_old_name() -> None:
    resolver = DeviceClassResolver()
    resolver.set(make_class("old", GPU, 1))
    resolver.set(make_class("new", GPU, 2))
    resolver.set(make_class("new", "example.com/other", 2))
    served = [resolver.get(name) for name in (GPU, "example.com/other")]
    assert [found.metadata.name if found else None for found in served] == ["old", "new"]
    resolver.set(make_class("old", None, 1))
    assert resolver.get(GPU) is None


def test_the_dra_manager_keeps_the_mapping_from_the_informer() -> None:
    manager = DRAManager()
    manager.device_classes.set(make_class())
    assert manager.extended_resources.get(GPU) is not None
    manager.device_classes.remove(make_class())
    assert manager.extended_resources.get(GPU) is None


# ------------------------------------------------------------------------- requests and mappings


def _pod(
    containers: Sequence[dict[str, str]], inits: Sequence[tuple[dict[str, str], bool]] = ()
) -> objects_pb2.Pod:
    """Containers c0.. with these requests; init containers i0.. (True: a sidecar)."""
    spec: dict[str, Any] = {
        "containers": [builders.container(r, name=f"c{i}") for i, r in enumerate(containers)]}
    if inits:
        spec["initContainers"] = [
            {**builders.container(r, name=f"i{i}"), **({"restartPolicy": "Always"} if side else {})}
            for i, (r, side) in enumerate(inits)]
    return builders.pod(POD_NAME, NAMESPACE, uid=POD_UID, spec=spec)


def _resolver() -> DeviceClassResolver:
    resolver = DeviceClassResolver()
    resolver.set(make_class())
    resolver.set(make_class("other-class", "example.com/other"))
    return resolver


# (pod, the resources the node needs DRA for) -> requests (name, class, count) and mappings
# (container, resource, request), as createRequestsAndMappings makes them.
@pytest.mark.parametrize(
    ("pod", "needed", "requests", "mappings"),
    [
        (_pod([{GPU: "1"}]), ((GPU, 1),), [("container-0-request-0", CLASS_NAME, 1)],
         [("c0", GPU, "container-0-request-0")]),
        (_pod([{"cpu": "1", GPU: "2"}]), ((GPU, 2),), [("container-0-request-1", CLASS_NAME, 2)],
         [("c0", GPU, "container-0-request-1")]),
        (_pod([{GPU: "1"}, {GPU: "2"}]), ((GPU, 3),),
         [("container-0-request-0", CLASS_NAME, 1), ("container-1-request-0", CLASS_NAME, 2)],
         [("c0", GPU, "container-0-request-0"), ("c1", GPU, "container-1-request-0")]),
        (_pod([{GPU: "1", "example.com/other": "1"}]), ((GPU, 1), ("example.com/other", 1)),
         [("container-0-request-0", CLASS_NAME, 1), ("container-0-request-1", "other-class", 1)],
         [("c0", GPU, "container-0-request-0"), ("c0", "example.com/other", "container-0-request-1")]),
        (_pod([{GPU: "1", "example.com/other": "1"}]), (("example.com/other", 1),),
         [("container-0-request-1", "other-class", 1)],
         [("c0", "example.com/other", "container-0-request-1")]),
        (_pod([{GPU: "1"}], [({GPU: "1"}, False)]), ((GPU, 1),),
         [("container-1-request-0", CLASS_NAME, 1)],
         [("c0", GPU, "container-1-request-0"), ("i0", GPU, "container-1-request-0")]),
        (_pod([{GPU: "1"}], [({GPU: "2"}, False)]), ((GPU, 2),),
         [("container-0-request-0", CLASS_NAME, 1), ("container-1-request-0", CLASS_NAME, 1)],
         [("c0", GPU, "container-1-request-0"), ("i0", GPU, "container-1-request-0"),
          ("i0", GPU, "container-0-request-0")]),
        (_pod([{}], [({GPU: "1"}, False), ({GPU: "2"}, False)]), ((GPU, 2),),
         [("container-1-request-0", CLASS_NAME, 2)],
         [("i0", GPU, "container-1-request-0"), ("i1", GPU, "container-1-request-0")]),
        (_pod([{GPU: "1"}], [({GPU: "1"}, True)]), ((GPU, 2),),
         [("container-0-request-0", CLASS_NAME, 1), ("container-1-request-0", CLASS_NAME, 1)],
         [("i0", GPU, "container-0-request-0"), ("c0", GPU, "container-1-request-0")]),
        (_pod([{GPU: "0"}, {GPU: "1"}]), ((GPU, 1),), [("container-1-request-0", CLASS_NAME, 1)],
         [("c1", GPU, "container-1-request-0")]),
    ],
    ids=["one-container", "index-among-the-containers-sorted-resources", "two-containers",
         "two-resources", "only-the-resources-the-node-lacks", "init-container-reuses-a-later-request",
         "init-container-needs-more-than-it-can-reuse", "init-containers-share-the-largest-request",
         "a-sidecar-keeps-its-own-request", "zero-requests-need-nothing"],
)
def test_requests_and_mappings(
    pod: objects_pb2.Pod, needed: tuple[tuple[str, int], ...], requests: list[tuple[str, str, int]],
    mappings: list[tuple[str, str, str]],
) -> None:
    got_requests, got_mappings = requests_and_mappings(pod, needed, _resolver())
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in got_requests] == requests
    assert all(r.exactly.allocation_mode == "ExactCount" for r in got_requests)
    assert [(m.container_name, m.resource_name, m.request_name) for m in got_mappings] == mappings


# ------------------------------------------------------------------------------------- API double


class ExtendedClient:
    """The API calls DynamicResources makes for a pod's extended resources: claims created (a generated
    name, fed to the tracker as the informer would), their status, the pod's status; every write listed
    in order."""

    def __init__(self, manager: DRAManager, pod: objects_pb2.Pod, *, fail_pod_status: bool = False) -> None:
        self.manager = manager
        self.claims: dict[str, objects_pb2.ResourceClaim] = {}
        self.pod = pod
        self.fail_pod_status = fail_pod_status
        self.writes: list[tuple[str, str]] = []
        self.revision = 100
        self.fence = "the leader's fence"
        self.fences: list[Any] = []

    def _next(self) -> str:
        self.revision += 1
        return str(self.revision)

    async def create(self, obj: objects_pb2.ResourceClaim, *, fence: Any = None) -> objects_pb2.ResourceClaim:
        created = objects_pb2.ResourceClaim()
        created.CopyFrom(obj)
        assert not created.metadata.name and created.metadata.generate_name
        created.metadata.name = f"{created.metadata.generate_name}abcde"
        created.metadata.uid = "uid-created"
        created.metadata.resource_version = self._next()
        self.claims[created.metadata.name] = created
        self.fences.append(fence)
        self.writes.append(("create", created.metadata.name))
        self.manager.resource_claims.on_add(created)
        return created

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        if kind == kinds.POD.name:
            return self.pod
        if name not in self.claims:
            raise errors.NotFound(f'resourceclaims "{name}" not found')
        return self.claims[name]

    async def update_status(self, obj: Any) -> Any:
        if isinstance(obj, objects_pb2.Pod):
            self.writes.append(("pod status", obj.metadata.name))
            if self.fail_pod_status:
                raise errors.Forbidden("not allowed")
            self.pod = obj
            return obj
        stored = self.claims[obj.metadata.name]
        if obj.metadata.resource_version != stored.metadata.resource_version:
            raise errors.Conflict("the object has been modified")
        updated = objects_pb2.ResourceClaim()
        updated.CopyFrom(stored)
        updated.status.CopyFrom(obj.status)
        updated.metadata.resource_version = self._next()
        self.claims[obj.metadata.name] = updated
        self.writes.append(("claim status", obj.metadata.name))
        return updated

    async def delete(self, kind: str, name: str, namespace: str = "", **_: Any) -> Any:
        assert kind == kinds.RESOURCE_CLAIM.name
        self.writes.append(("delete", name))
        claim = self.claims.pop(name, None)
        if claim is None:
            raise errors.NotFound(f'resourceclaims "{name}" not found')
        self.manager.resource_claims.on_delete(claim)
        return claim


# ------------------------------------------------------------------------------------ the plugin


def gpu_pod(requests: dict[str, str] | None = None) -> objects_pb2.Pod:
    spec: dict[str, Any] = {"containers": [builders.container(requests or {GPU: "1"}, name="c0")]}
    return builders.pod(POD_NAME, NAMESPACE, uid=POD_UID, spec=spec)


def worker(allocatable: dict[str, str] | None = None, name: str = WORKER) -> NodeInfo:
    return NodeInfo(builders.node(name, labels={"kubernetes.io/hostname": name},
                                  allocatable={**builders.ROOMY, **(allocatable or {})}))


class World:
    def __init__(self, pod: objects_pb2.Pod, *, classes: Sequence[objects_pb2.DeviceClass] = (),
                 devices: Sequence[str] = ("gpu-0",), claims: Sequence[objects_pb2.ResourceClaim] = (),
                 nodes: Sequence[NodeInfo] = (), fail_pod_status: bool = False) -> None:
        self.manager = DRAManager()
        for device_class in classes or (make_class(),):
            self.manager.device_classes.set(device_class)
        if devices:
            self.manager.resource_slices.set(
                builders.resource_slice(f"{WORKER}-{DRIVER}", DRIVER, WORKER, *devices, node_name=WORKER))
        for claim in claims:
            self.manager.resource_claims.on_add(claim)
        self.nodes = list(nodes) or [worker()]
        self.client = ExtendedClient(self.manager, pod, fail_pod_status=fail_pod_status)
        handle = fake_handle(Snapshot(self.nodes), client=self.client, dra_manager=self.manager)
        self.plugin: DynamicResources = dynamicresources.new(None, handle)
        self.pod = PodInfo(pod)
        self.state = CycleState()

    def pre_filter(self) -> Status | None:
        return self.plugin.pre_filter(self.state, self.pod, self.nodes)[1]

    def filter(self, node: NodeInfo | None = None) -> Status | None:
        return self.plugin.filter(self.state, self.pod, node or self.nodes[0])

    def bind(self) -> Status | None:
        async def run() -> Status | None:
            assert self.plugin.reserve(self.state, self.pod, WORKER) is None
            return await self.plugin.pre_bind(self.state, self.pod, WORKER)
        return asyncio.run(run())


def verdict(status: Status | None) -> tuple[Code, str] | None:
    return None if status is None else (status.code, status.message())


def test_a_pod_without_extended_resources_is_skipped() -> None:
    w = World(builders.pod(POD_NAME, NAMESPACE, uid=POD_UID, requests={"cpu": "1"}))
    assert verdict(w.pre_filter()) == (Code.SKIP, "")
    assert w.plugin.sign(w.pod) == ()


def test_a_pod_whose_extended_resources_no_class_serves_is_skipped() -> None:
    w = World(gpu_pod({"example.com/other": "1"}))
    assert verdict(w.pre_filter()) == (Code.SKIP, "")


def test_a_pod_with_a_served_extended_resource_is_never_batched() -> None:
    assert World(gpu_pod()).plugin.sign(PodInfo(gpu_pod())) is None


def test_devices_serve_the_resource_on_a_node_without_it_and_prebind_creates_the_claim() -> None:
    w = World(gpu_pod())
    assert w.pre_filter() is None
    assert w.filter() is None
    assert w.bind() is None
    assert w.client.writes == [("create", "my-pod-extended-resources-abcde"),
                               ("claim status", "my-pod-extended-resources-abcde"), ("pod status", POD_NAME)]
    assert w.client.fences == ["the leader's fence"]
    claim = w.client.claims["my-pod-extended-resources-abcde"]
    assert dict(claim.metadata.annotations) == {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert [(o.kind, o.name, o.uid, o.controller) for o in claim.metadata.owner_references] == [
        ("Pod", POD_NAME, POD_UID, True)]
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in claim.spec.devices.requests] == [
        ("container-0-request-0", CLASS_NAME, 1)]
    assert [(r.request, r.device) for r in claim.status.allocation.devices.results] == [
        ("container-0-request-0", "gpu-0")]
    assert [c.uid for c in claim.status.reserved_for] == [POD_UID]
    status = json_format.MessageToDict(w.client.pod.status.extended_resource_claim_status)
    assert status == {"requestMappings": [{"containerName": "c0", "resourceName": GPU,
                                           "requestName": "container-0-request-0"}],
                      "resourceClaimName": "my-pod-extended-resources-abcde"}
    # The devices count as taken through the claim as written; nothing is left in flight.
    tracker = w.manager.resource_claims
    assert tracker.allocated_devices().devices == {(DRIVER, WORKER, "gpu-0")}
    assert tracker.get(NAMESPACE, "my-pod-extended-resources-abcde") is not None


def test_the_implicit_class_name_is_served() -> None:
    w = World(gpu_pod({f"deviceclass.resource.kubernetes.io/{CLASS_NAME}": "1"}),
              classes=[make_class(extended=None)])
    assert w.pre_filter() is None and w.filter() is None and w.bind() is None
    assert w.client.writes[0][0] == "create"


def test_a_node_advertising_the_resource_leaves_it_to_the_device_plugin() -> None:
    w = World(gpu_pod(), devices=(), nodes=[worker({GPU: "1"})])
    assert w.pre_filter() is None
    assert w.filter() is None
    assert w.bind() is None
    assert w.client.writes == []


def test_a_node_without_devices_does_not_fit() -> None:
    w = World(gpu_pod(), devices=())
    assert w.pre_filter() is None
    status = w.filter()
    assert status is not None and status.code is Code.UNSCHEDULABLE and status.reasons == (CANNOT_ALLOCATE,)


def test_too_few_devices_do_not_fit() -> None:
    w = World(gpu_pod({GPU: "2"}))
    assert w.pre_filter() is None
    status = w.filter()
    assert status is not None and status.reasons == (CANNOT_ALLOCATE,)


def test_a_resource_neither_advertised_nor_served_does_not_fit() -> None:
    w = World(gpu_pod({GPU: "1", "example.com/other": "1"}))
    assert w.pre_filter() is None
    assert verdict(w.filter()) == (UNRESOLVABLE, CANNOT_FIT)


def test_two_pods_in_flight_never_get_one_device() -> None:
    w = World(gpu_pod())
    assert w.pre_filter() is None and w.filter() is None
    assert w.plugin.reserve(w.state, w.pod, WORKER) is None
    other = PodInfo(builders.pod("other", NAMESPACE, uid="5678", spec={
        "containers": [builders.container({GPU: "1"}, name="c0")]}))
    state = CycleState()
    w.plugin.pre_filter(state, other, w.nodes)
    status = w.plugin.filter(state, other, w.nodes[0])
    assert status is not None and status.reasons == (CANNOT_ALLOCATE,)


def _earlier_claim() -> objects_pb2.ResourceClaim:
    claim = builders.resource_claim("my-pod-extended-resources-old", builders.device_request(
        "container-0-request-0", CLASS_NAME), namespace=NAMESPACE)
    claim.metadata.uid, claim.metadata.resource_version = "uid-old", "7"
    claim.metadata.annotations[EXTENDED_RESOURCE_CLAIM_ANNOTATION] = "true"
    claim.metadata.owner_references.add(
        api_version="v1", kind="Pod", name=POD_NAME, uid=POD_UID, controller=True)
    return claim


def test_a_claim_left_from_an_earlier_attempt_is_deleted_and_the_pod_tries_anew() -> None:
    earlier = _earlier_claim()
    w = World(gpu_pod(), claims=[earlier])
    w.client.claims[earlier.metadata.name] = earlier
    assert w.pre_filter() is None
    assert verdict(w.filter()) == (UNRESOLVABLE, CANNOT_SCHEDULE)
    _, status = asyncio.run(w.plugin.post_filter(w.state, w.pod, None))
    assert verdict(status) == (Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
    assert w.client.writes == [("delete", "my-pod-extended-resources-old")]
    # The next attempt starts a claim in memory again.
    w.state = CycleState()
    assert w.pre_filter() is None and w.filter() is None


def test_another_pods_claim_is_not_the_pods() -> None:
    earlier = _earlier_claim()
    earlier.metadata.owner_references[0].uid = "someone-else"
    w = World(gpu_pod(), claims=[earlier])
    assert w.pre_filter() is None and w.filter() is None


def test_unreserve_before_prebind_forgets_the_allocation_in_flight() -> None:
    w = World(gpu_pod())
    w.pre_filter()
    w.filter()

    async def run() -> None:
        assert w.plugin.reserve(w.state, w.pod, WORKER) is None
        assert w.manager.resource_claims.allocated_devices().devices == {(DRIVER, WORKER, "gpu-0")}
        w.plugin.unreserve(w.state, w.pod, WORKER)

    asyncio.run(run())
    assert w.manager.resource_claims.allocated_devices().devices == set()
    assert w.client.writes == []


def test_a_failed_pod_status_write_fails_prebind_and_unreserve_deletes_the_claim() -> None:
    w = World(gpu_pod(), fail_pod_status=True)
    w.pre_filter()
    w.filter()

    async def run() -> Status | None:
        assert w.plugin.reserve(w.state, w.pod, WORKER) is None
        status = await w.plugin.pre_bind(w.state, w.pod, WORKER)
        w.plugin.unreserve(w.state, w.pod, WORKER)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return status

    status = asyncio.run(run())
    assert status is not None and status.code is Code.ERROR
    assert "update pod default/my-pod ExtendedResourceClaimStatus: not allowed" in status.message()
    assert w.client.writes == [("create", "my-pod-extended-resources-abcde"),
                               ("claim status", "my-pod-extended-resources-abcde"), ("pod status", POD_NAME),
                               ("delete", "my-pod-extended-resources-abcde")]
    assert w.client.claims == {}
    assert w.manager.resource_claims.allocated_devices().devices == set()

