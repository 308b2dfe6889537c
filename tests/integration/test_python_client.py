"""The official Python client (``kubernetes``) against a real `podsched apiserver` serving the Kubernetes
HTTP API (--http-listen) and a real `podsched scheduler`, on each backend.

The module's cluster runs as `podsched up` runs it: the server enforces leader fencing and the scheduler
elects itself leader in kube-system/kube-scheduler; the server compacts every second, so that a test can
push a resourceVersion out of its history. Tests work in namespaces of their own (``ns``); the client
deserializes every answer into its models, which raise ValueError on a missing required field, so each
call also checks that the server's JSON is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, TypeVar

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import REPO, node_manifest, run_cli, write_yaml
from tests.integration.test_client_informer import COMPACT_FAST, RETAINED_REVISIONS, write_filler
from tests.integration.test_scheduler import SETTLE_TIMEOUT_S
from tests.kubeclients import kubernetes_client

T = TypeVar("T")

NODES = ("node-a", "node-b")
#: A schedulerName no scheduler serves: its pods stay Pending until a test binds them.
UNSERVED_SCHEDULER = "nobody-schedules-this"
#: kube-scheduler's Lease, the one --enforce-leader-fencing takes fences of.
SCHEDULER_LEASE = ("kube-system", "kube-scheduler")
#: The Python candidates' lease duration: short, with room for a renewal slowed by a loaded machine.
LEASE_DURATION_S = 4


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def k8s() -> ModuleType:
    return kubernetes_client()


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server on a store of its own with two nodes, enforcing leader fencing, compacting fast."""
    tmp_path = tmp_path_factory.mktemp("python-client")
    with own_apiserver(backend, tmp_path, extra_args=["--enforce-leader-fencing", *COMPACT_FAST],
                       http_listen="127.0.0.1:0") as server:
        nodes = write_yaml(tmp_path / "nodes.yaml", *(node_manifest(name, cpu="2") for name in NODES))
        result = run_cli(server.address, "apply", "-f", nodes)
        assert result.code == 0, result.stderr
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    """A leader-electing scheduler (kube-system/kube-scheduler, as `podsched up` runs one)."""
    process = SchedulerProcess(
        ["--server", cluster.address, "--metrics-addr", "127.0.0.1:0"], env=cli_env(""), cwd=REPO)
    process.start()
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def unenforced(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server without leader fencing (the default), for the Lease contention the client runs."""
    with own_apiserver(backend, tmp_path_factory.mktemp("unenforced"), name_prefix="unenforced",
                       http_listen="127.0.0.1:0") as server:
        yield server


def api_client_of(k8s: ModuleType, server: ApiServerProcess) -> Any:
    configuration = k8s.client.Configuration()
    assert server.http_url, "the API server does not serve the Kubernetes HTTP API"
    configuration.host = server.http_url
    return k8s.client.ApiClient(configuration)


@pytest.fixture(scope="module")
def api_client(k8s: ModuleType, cluster: ApiServerProcess, scheduler: SchedulerProcess) -> Iterator[Any]:
    with api_client_of(k8s, cluster) as client:
        yield client


@pytest.fixture
def v1(k8s: ModuleType, api_client: Any) -> Any:
    return k8s.client.CoreV1Api(api_client)


# ------------------------------------------------------------------------------------------ helpers


def eventually(probe: Callable[[], T | None], what: str, within: float = SETTLE_TIMEOUT_S) -> T:
    deadline = time.monotonic() + within
    while True:
        result = probe()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g}s waiting for {what}")
        time.sleep(0.1)


def a_pod(k8s: ModuleType, name: str, *, labels: dict[str, str] | None = None,
          scheduler_name: str | None = None, cpu: str = "100m") -> Any:
    m = k8s.client
    return m.V1Pod(
        metadata=m.V1ObjectMeta(name=name, labels=labels),
        spec=m.V1PodSpec(
            scheduler_name=scheduler_name,
            containers=[m.V1Container(
                name="main", image="registry.k8s.io/pause:3.10",
                resources=m.V1ResourceRequirements(requests={"cpu": cpu, "memory": "16Mi"}))],
        ),
    )


def bound_pod(v1: Any, namespace: str, name: str) -> Any:
    def bound() -> Any:
        pod = v1.read_namespaced_pod(name, namespace)
        return pod if pod.spec.node_name else None

    return eventually(bound, f"pod {namespace}/{name} to be bound")


def api_exception(k8s: ModuleType, call: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    """The ApiException ``call`` raises and the metav1.Status of its body."""
    with pytest.raises(k8s.client.ApiException) as raised:
        call()
    status = json.loads(raised.value.body)
    assert status["kind"] == "Status" and status["status"] == "Failure", status
    assert status["code"] == raised.value.status, status
    return raised.value, status


class RecordedContentTypes:
    """The Content-Type of every request the client's REST layer sends (after its own rewriting)."""

    def __init__(self, api_client: Any) -> None:
        self.sent: list[str] = []
        rest = api_client.rest_client
        self._rest = rest
        self._request = rest.request

        def request(method: str, url: str, headers: dict[str, str] | None = None, *args: Any,
                    **kwargs: Any) -> Any:
            response = self._request(method, url, headers, *args, **kwargs)
            self.sent.append((headers or {}).get("Content-Type", ""))
            return response

        rest.request = request

    def restore(self) -> None:
        self._rest.request = self._request


@pytest.fixture
def content_types(api_client: Any) -> Iterator[RecordedContentTypes]:
    recorded = RecordedContentTypes(api_client)
    yield recorded
    recorded.restore()


# -------------------------------------------------------------------- CRUD, watch, list, errors


def test_create_list_read_replace_and_a_stale_replace_conflicts(k8s: ModuleType, v1: Any, ns: str) -> None:
    created = v1.create_namespaced_pod(ns, a_pod(k8s, "web", labels={"app": "web"}))
    assert created.metadata.namespace == ns and created.metadata.uid and created.metadata.resource_version
    assert [p.metadata.name for p in v1.list_namespaced_pod(ns).items] == ["web"]
    pod = bound_pod(v1, ns, "web")
    assert pod.spec.node_name in NODES and pod.metadata.uid == created.metadata.uid

    pod.metadata.labels["tier"] = "front"
    replaced = v1.replace_namespaced_pod("web", ns, pod)
    assert replaced.metadata.labels == {"app": "web", "tier": "front"}
    assert int(replaced.metadata.resource_version) > int(pod.metadata.resource_version)

    # The version it was read at is stale now: kube's 409 with reason Conflict.
    pod.metadata.labels["tier"] = "back"
    error, status = api_exception(k8s, lambda: v1.replace_namespaced_pod("web", ns, pod))
    assert (error.status, error.reason) == (409, "Conflict")
    assert status["reason"] == "Conflict"
    assert status["details"] == {"name": "web", "kind": "pods"}
    assert "the object has been modified" in status["message"]
    assert v1.read_namespaced_pod("web", ns).metadata.labels == {"app": "web", "tier": "front"}


def test_patch_by_strategic_merge_merge_and_json_patch(
    k8s: ModuleType, v1: Any, ns: str, content_types: RecordedContentTypes
) -> None:
    v1.create_namespaced_pod(ns, a_pod(k8s, "patched", labels={"app": "web"},
                                       scheduler_name=UNSERVED_SCHEDULER))

    # A dict body goes as a strategic merge patch (the client's default for objects of built-in kinds).
    patched = v1.patch_namespaced_pod("patched", ns, {"metadata": {"labels": {"tier": "front"}}})
    assert content_types.sent[-1] == "application/strategic-merge-patch+json"
    assert patched.metadata.labels == {"app": "web", "tier": "front"}

    patched = v1.patch_namespaced_pod("patched", ns, {"metadata": {"labels": {"app": None}}},
                                      _content_type="application/merge-patch+json")
    assert content_types.sent[-1] == "application/merge-patch+json"
    assert patched.metadata.labels == {"tier": "front"}

    # A list body goes as a JSON patch.
    patched = v1.patch_namespaced_pod("patched", ns, [
        {"op": "test", "path": "/metadata/labels/tier", "value": "front"},
        {"op": "add", "path": "/metadata/annotations", "value": {"note": "json-patched"}},
    ])
    assert content_types.sent[-1] == "application/json-patch+json"
    assert patched.metadata.annotations == {"note": "json-patched"}

    # A failed test operation applies nothing.
    error, status = api_exception(k8s, lambda: v1.patch_namespaced_pod("patched", ns, [
        {"op": "test", "path": "/metadata/labels/tier", "value": "back"},
        {"op": "remove", "path": "/metadata/annotations"},
    ]))
    assert error.status == 422, status
    assert v1.read_namespaced_pod("patched", ns).metadata.annotations == {"note": "json-patched"}


def test_server_side_apply_with_a_field_manager(
    k8s: ModuleType, v1: Any, ns: str, content_types: RecordedContentTypes
) -> None:
    manifest = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "applied", "labels": {"app": "web"}},
        "spec": {"schedulerName": UNSERVED_SCHEDULER,
                 "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
    }
    applied = v1.patch_namespaced_pod("applied", ns, manifest, field_manager="python-client",
                                      _content_type="application/apply-patch+yaml")
    # The client sends the dict as JSON, which is YAML too.
    assert content_types.sent[-1] == "application/apply-patch+yaml"
    assert applied.metadata.namespace == ns and applied.metadata.labels == {"app": "web"}
    managers = {(entry.manager, entry.operation) for entry in applied.metadata.managed_fields}
    assert ("python-client", "Apply") in managers, managers

    # Another manager applying a field python-client owns conflicts unless it forces.
    taken = {**manifest, "metadata": {"name": "applied", "labels": {"app": "db"}}}
    error, status = api_exception(k8s, lambda: v1.patch_namespaced_pod(
        "applied", ns, taken, field_manager="other", _content_type="application/apply-patch+yaml"))
    assert (error.status, status["reason"]) == (409, "Conflict"), status
    forced = v1.patch_namespaced_pod("applied", ns, taken, field_manager="other", force=True,
                                     _content_type="application/apply-patch+yaml")
    assert forced.metadata.labels == {"app": "db"}


def test_delete_with_a_grace_period(k8s: ModuleType, v1: Any, ns: str) -> None:
    v1.create_namespaced_pod(ns, a_pod(k8s, "leaving"))
    before = bound_pod(v1, ns, "leaving").metadata.resource_version
    deleting = v1.delete_namespaced_pod("leaving", ns, grace_period_seconds=2)
    # A bound pod is marked, not gone: the API server stands in for the kubelet and removes it after its
    # grace; a watch sees the mark, then the deletion.
    assert deleting.metadata.deletion_timestamp is not None
    assert deleting.metadata.deletion_grace_period_seconds == 2
    assert v1.read_namespaced_pod("leaving", ns).metadata.deletion_timestamp is not None
    seen: list[tuple[str, bool]] = []
    watcher = k8s.watch.Watch()
    for event in watcher.stream(v1.list_namespaced_pod, ns, resource_version=before,
                                timeout_seconds=int(SETTLE_TIMEOUT_S)):
        seen.append((event["type"], event["object"].metadata.deletion_timestamp is not None))
        if event["type"] == "DELETED":
            watcher.stop()
    assert seen[0] == ("MODIFIED", True) and seen[-1][0] == "DELETED", seen
    error, status = api_exception(k8s, lambda: v1.read_namespaced_pod("leaving", ns))
    assert error.status == 404, status


def test_watch_sees_the_create_then_the_schedulers_bind_and_resumes(
    k8s: ModuleType, v1: Any, ns: str
) -> None:
    before = v1.list_namespaced_pod(ns).metadata.resource_version
    v1.create_namespaced_pod(ns, a_pod(k8s, "watched"))
    seen: list[tuple[str, str, str]] = []
    watcher = k8s.watch.Watch()
    for event in watcher.stream(v1.list_namespaced_pod, ns, resource_version=before,
                                timeout_seconds=int(SETTLE_TIMEOUT_S)):
        pod = event["object"]
        assert isinstance(pod, k8s.client.V1Pod)
        seen.append((event["type"], pod.spec.node_name or "", pod.metadata.resource_version))
        if pod.spec.node_name:
            watcher.stop()
    assert seen[0][:2] == ("ADDED", ""), seen
    assert seen[-1][0] == "MODIFIED" and seen[-1][1] in NODES, seen

    # From the version of the create on, the watch starts after it: with the bind.
    resumed = k8s.watch.Watch()
    for event in resumed.stream(v1.list_namespaced_pod, ns, resource_version=seen[0][2],
                                timeout_seconds=int(SETTLE_TIMEOUT_S)):
        assert event["type"] == "MODIFIED"
        assert int(event["object"].metadata.resource_version) > int(seen[0][2])
        if event["object"].spec.node_name:
            resumed.stop()
    assert resumed.resource_version == seen[-1][2]


async def test_a_watch_from_a_compacted_version_is_410_gone(
    k8s: ModuleType, v1: Any, api: Client, ns: str
) -> None:
    old = v1.list_namespaced_pod(ns).metadata.resource_version
    await write_filler(api, RETAINED_REVISIONS + 100)

    def expired() -> Any:
        watcher = k8s.watch.Watch()
        try:
            for _ in watcher.stream(v1.list_namespaced_pod, ns, resource_version=old, timeout_seconds=1):
                pass
        except k8s.client.ApiException as exc:
            return exc
        return None

    error = await asyncio.to_thread(eventually, expired, f"resourceVersion {old} to be compacted")
    # With timeout_seconds the client does not retry: it raises what the ERROR event carried.
    assert error.status == 410
    assert error.reason.startswith("Expired: "), error.reason


def test_list_by_label_and_field_selectors_and_in_pages(k8s: ModuleType, v1: Any, ns: str) -> None:
    for index in range(3):
        v1.create_namespaced_pod(ns, a_pod(k8s, f"web-{index}", labels={"app": "web"}))
    v1.create_namespaced_pod(ns, a_pod(k8s, "db", labels={"app": "db"}))
    v1.create_namespaced_pod(
        ns, a_pod(k8s, "waiting", labels={"app": "web"}, scheduler_name=UNSERVED_SCHEDULER))
    bound = {name: bound_pod(v1, ns, name).spec.node_name for name in ("web-0", "web-1", "web-2", "db")}

    def names(**query: Any) -> list[str]:
        return sorted(p.metadata.name for p in v1.list_namespaced_pod(ns, **query).items)

    assert names(label_selector="app=web") == ["waiting", "web-0", "web-1", "web-2"]
    assert names(label_selector="app in (db),app!=web") == ["db"]
    assert names(label_selector="app=web", field_selector="status.phase=Pending") == ["waiting"]
    assert names(field_selector="spec.nodeName=") == ["waiting"]
    on_a = sorted(name for name, node in bound.items() if node == "node-a")
    assert names(field_selector="spec.nodeName=node-a") == on_a
    assert names(field_selector="metadata.name=db") == ["db"]

    pages: list[list[str]] = []
    token = None
    while True:
        page = v1.list_namespaced_pod(ns, limit=2, _continue=token)
        pages.append([p.metadata.name for p in page.items])
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count in (None, 5 - 2 * len(pages))
    assert pages == [["db", "waiting"], ["web-0", "web-1"], ["web-2"]]


def test_errors_are_api_exceptions_with_kubes_status(k8s: ModuleType, v1: Any, ns: str) -> None:
    error, status = api_exception(k8s, lambda: v1.read_namespaced_pod("missing", ns))
    assert (error.status, status["reason"]) == (404, "NotFound")
    assert status["details"] == {"name": "missing", "kind": "pods"}
    assert status["message"] == 'pods "missing" not found'

    v1.create_namespaced_pod(ns, a_pod(k8s, "twice", scheduler_name=UNSERVED_SCHEDULER))
    error, status = api_exception(
        k8s, lambda: v1.create_namespaced_pod(ns, a_pod(k8s, "twice", scheduler_name=UNSERVED_SCHEDULER)))
    assert (error.status, status["reason"]) == (409, "AlreadyExists")
    assert status["message"] == 'pods "twice" already exists'

    error, status = api_exception(k8s, lambda: v1.create_namespaced_pod(ns, a_pod(k8s, "Not_A_Name")))
    assert (error.status, status["reason"]) == (422, "Invalid")
    assert status["details"]["name"] == "Not_A_Name" and status["details"]["kind"] == "Pod"
    causes = status["details"]["causes"]
    assert any(c["field"] == "metadata.name" and c["reason"] == "FieldValueInvalid" for c in causes), causes

    error, status = api_exception(k8s, lambda: v1.list_namespaced_pod(ns, field_selector="spec.bogus=x"))
    assert (error.status, status["reason"]) == (400, "BadRequest")
    assert "spec.bogus" in status["message"]


def test_create_namespaced_binding_binds_a_pod_no_scheduler_owns(k8s: ModuleType, v1: Any, ns: str) -> None:
    m = k8s.client
    v1.create_namespaced_pod(ns, a_pod(k8s, "by-hand", scheduler_name=UNSERVED_SCHEDULER))
    binding = m.V1Binding(metadata=m.V1ObjectMeta(name="by-hand"),
                          target=m.V1ObjectReference(api_version="v1", kind="Node", name="node-b"))
    # kube-apiserver answers a binding with a Status, which the client's V1Binding cannot hold: read raw.
    response = v1.create_namespaced_binding(ns, binding, _preload_content=False)
    assert response.status == 201
    assert json.loads(response.data)["status"] == "Success"
    assert v1.read_namespaced_pod("by-hand", ns).spec.node_name == "node-b"

    # Bound once: a second binding conflicts.
    error, status = api_exception(k8s, lambda: v1.create_namespaced_binding(ns, binding))
    assert (error.status, status["reason"]) == (409, "Conflict"), status


def test_the_scheduled_event_is_listed_by_involved_object(k8s: ModuleType, v1: Any, api_client: Any,
                                                          ns: str) -> None:
    v1.create_namespaced_pod(ns, a_pod(k8s, "announced"))
    node = bound_pod(v1, ns, "announced").spec.node_name

    def scheduled() -> Any:
        events = v1.list_namespaced_event(ns, field_selector="involvedObject.name=announced").items
        return next((e for e in events if e.reason == "Scheduled"), None)

    event = eventually(scheduled, "the Scheduled event")
    assert event.involved_object.kind == "Pod" and event.involved_object.name == "announced"
    assert event.type == "Normal"
    assert event.message == f"Successfully assigned {ns}/announced to {node}"

    events_v1 = k8s.client.EventsV1Api(api_client)
    listed = events_v1.list_namespaced_event(ns, field_selector="regarding.name=announced").items
    scheduled_v1 = [e for e in listed if e.reason == "Scheduled"]
    assert scheduled_v1, listed
    assert scheduled_v1[0].regarding.name == "announced" and scheduled_v1[0].note == event.message
    assert scheduled_v1[0].event_time is not None


# ------------------------------------------------------------------------------- every other kind


def test_every_served_kind_round_trips_through_its_typed_api(
    k8s: ModuleType, api_client: Any, ns: str
) -> None:
    m = k8s.client
    core, apps = m.CoreV1Api(api_client), m.AppsV1Api(api_client)
    scheduling, node = m.SchedulingV1Api(api_client), m.NodeV1Api(api_client)
    policy, coordination = m.PolicyV1Api(api_client), m.CoordinationV1Api(api_client)
    suffix = uuid.uuid4().hex[:8]
    meta = lambda name: m.V1ObjectMeta(name=f"{name}-{suffix}", labels={"app": "kinds"})  # noqa: E731
    selector = m.V1LabelSelector(match_labels={"app": "kinds"})
    template = m.V1PodTemplateSpec(metadata=m.V1ObjectMeta(labels={"app": "kinds"}),
                                   spec=a_pod(k8s, "template").spec)
    # (create, read, body, namespaced): cluster-scoped kinds are created without a namespace argument.
    cases: list[tuple[Callable[..., Any], Callable[..., Any], Any, bool]] = [
        (core.create_node, core.read_node, m.V1Node(metadata=meta("node")), False),
        (core.create_namespace, core.read_namespace, m.V1Namespace(metadata=meta("namespace")), False),
        (scheduling.create_priority_class, scheduling.read_priority_class,
         m.V1PriorityClass(metadata=meta("priority"), value=1000), False),
        (node.create_runtime_class, node.read_runtime_class,
         m.V1RuntimeClass(metadata=meta("runtime"), handler="runc"), False),
        (policy.create_namespaced_pod_disruption_budget, policy.read_namespaced_pod_disruption_budget,
         m.V1PodDisruptionBudget(metadata=meta("pdb"), spec=m.V1PodDisruptionBudgetSpec(
             min_available=1, selector=selector)), True),
        (core.create_namespaced_resource_quota, core.read_namespaced_resource_quota,
         m.V1ResourceQuota(metadata=meta("quota"), spec=m.V1ResourceQuotaSpec(hard={"pods": "10"})), True),
        (coordination.create_namespaced_lease, coordination.read_namespaced_lease,
         m.V1Lease(metadata=meta("lease"),
                   spec=m.V1LeaseSpec(holder_identity="me", lease_duration_seconds=5)), True),
        (core.create_namespaced_service, core.read_namespaced_service,
         m.V1Service(metadata=meta("service"), spec=m.V1ServiceSpec(
             selector={"app": "kinds"}, ports=[m.V1ServicePort(port=80)])), True),
        (apps.create_namespaced_replica_set, apps.read_namespaced_replica_set,
         m.V1ReplicaSet(metadata=meta("rs"), spec=m.V1ReplicaSetSpec(
             replicas=0, selector=selector, template=template)), True),
        (apps.create_namespaced_stateful_set, apps.read_namespaced_stateful_set,
         m.V1StatefulSet(metadata=meta("sts"), spec=m.V1StatefulSetSpec(
             replicas=0, selector=selector, service_name="kinds", template=template)), True),
        (core.create_namespaced_replication_controller, core.read_namespaced_replication_controller,
         m.V1ReplicationController(metadata=meta("rc"), spec=m.V1ReplicationControllerSpec(
             replicas=0, selector={"app": "kinds"}, template=template)), True),
    ]
    # Cluster-scoped objects are deleted at the end: the module's scheduler sees them.
    deleters = [(core.delete_node, "node"), (core.delete_namespace, "namespace"),
                (scheduling.delete_priority_class, "priority"), (node.delete_runtime_class, "runtime")]
    try:
        check_round_trips(cases, ns)
    finally:
        for delete, stem in deleters:
            with contextlib.suppress(m.ApiException):
                delete(f"{stem}-{suffix}")


def test_dra_and_storage_kinds_round_trip_and_a_pods_claims_are_served(
    k8s: ModuleType, api_client: Any, v1: Any, ns: str
) -> None:
    """The DRA kinds (ResourceV1Api) and the storage kinds (StorageV1Api, CoreV1Api) round-trip through
    their typed APIs; then a pod whose claim comes from a template is placed where its device is, and a
    pod whose PersistentVolumeClaim binds to a volume pinned to a node goes there, all read back as the
    client's models."""
    m = k8s.client
    resource, storage = m.ResourceV1Api(api_client), m.StorageV1Api(api_client)
    suffix = uuid.uuid4().hex[:8]
    driver = f"gpu-{suffix}.example.com"
    meta = lambda name: m.V1ObjectMeta(name=f"{name}-{suffix}", labels={"app": "kinds"})  # noqa: E731
    device_class = meta("gpus")
    claim_spec = m.V1ResourceClaimSpec(devices=m.V1DeviceClaim(requests=[m.V1DeviceRequest(
        name="gpu", exactly=m.V1ExactDeviceRequest(device_class_name=device_class.name))]))
    cases: list[tuple[Callable[..., Any], Callable[..., Any], Any, bool]] = [
        (resource.create_device_class, resource.read_device_class, m.V1DeviceClass(
            metadata=device_class, spec=m.V1DeviceClassSpec(selectors=[m.V1DeviceSelector(
                cel=m.V1CELDeviceSelector(expression=f"device.driver == '{driver}'"))])), False),
        (resource.create_resource_slice, resource.read_resource_slice, m.V1ResourceSlice(
            metadata=meta("slice"), spec=m.V1ResourceSliceSpec(
                driver=driver, node_name=NODES[1],
                pool=m.V1ResourcePool(name=NODES[1], generation=1, resource_slice_count=1),
                devices=[m.V1Device(name="gpu-0", attributes={"model": m.V1DeviceAttribute(string="a100")},
                                    capacity={"memory": m.V1DeviceCapacity(value="80Gi")})])), False),
        (resource.create_namespaced_resource_claim_template, resource.read_namespaced_resource_claim_template,
         m.V1ResourceClaimTemplate(metadata=meta("template"), spec=m.V1ResourceClaimTemplateSpec(
             spec=claim_spec)), True),
        (resource.create_namespaced_resource_claim, resource.read_namespaced_resource_claim,
         m.ResourceV1ResourceClaim(metadata=meta("claim"), spec=claim_spec), True),
        (storage.create_storage_class, storage.read_storage_class, m.V1StorageClass(
            metadata=meta("local"), provisioner="kubernetes.io/no-provisioner",
            volume_binding_mode="WaitForFirstConsumer"), False),
        (storage.create_csi_driver, storage.read_csi_driver, m.V1CSIDriver(
            metadata=meta("disk.example.com"), spec=m.V1CSIDriverSpec(attach_required=True)), False),
        (storage.create_csi_node, storage.read_csi_node, m.V1CSINode(
            metadata=meta("csinode"), spec=m.V1CSINodeSpec(drivers=[m.V1CSINodeDriver(
                name="disk.example.com", node_id="n1", allocatable=m.V1VolumeNodeResources(count=8))])),
         False),
        (storage.create_namespaced_csi_storage_capacity, storage.read_namespaced_csi_storage_capacity,
         m.V1CSIStorageCapacity(metadata=meta("capacity"), storage_class_name=f"local-{suffix}",
                                capacity="100Gi"), True),
        (v1.create_persistent_volume, v1.read_persistent_volume, m.V1PersistentVolume(
            metadata=meta("volume"), spec=m.V1PersistentVolumeSpec(
                capacity={"storage": "10Gi"}, access_modes=["ReadWriteOnce"],
                storage_class_name=f"local-{suffix}", local=m.V1LocalVolumeSource(path="/mnt/disk"),
                node_affinity=m.V1VolumeNodeAffinity(required=m.V1NodeSelector(node_selector_terms=[
                    m.V1NodeSelectorTerm(match_expressions=[m.V1NodeSelectorRequirement(
                        key="kubernetes.io/hostname", operator="In", values=[NODES[0]])])])))), False),
        (v1.create_namespaced_persistent_volume_claim, v1.read_namespaced_persistent_volume_claim,
         m.V1PersistentVolumeClaim(metadata=meta("data"), spec=m.V1PersistentVolumeClaimSpec(
             access_modes=["ReadWriteOnce"], storage_class_name=f"local-{suffix}",
             resources=m.V1VolumeResourceRequirements(requests={"storage": "5Gi"}))), True),
    ]
    deleters = [(resource.delete_device_class, "gpus"), (resource.delete_resource_slice, "slice"),
                (storage.delete_storage_class, "local"), (storage.delete_csi_driver, "disk.example.com"),
                (storage.delete_csi_node, "csinode"), (v1.delete_persistent_volume, "volume")]
    try:
        check_round_trips(cases, ns)
        with_device = a_pod(k8s, "with-device")
        with_device.spec.resource_claims = [m.V1PodResourceClaim(
            name="gpu", resource_claim_template_name=f"template-{suffix}")]
        with_volume = a_pod(k8s, "with-volume")
        with_volume.spec.volumes = [m.V1Volume(name="data", persistent_volume_claim=(
            m.V1PersistentVolumeClaimVolumeSource(claim_name=f"data-{suffix}")))]
        v1.create_namespaced_pod(ns, with_device)
        v1.create_namespaced_pod(ns, with_volume)
        assert bound_pod(v1, ns, "with-device").spec.node_name == NODES[1]
        assert bound_pod(v1, ns, "with-volume").spec.node_name == NODES[0]

        def allocated() -> Any:
            pod = v1.read_namespaced_pod("with-device", ns)
            statuses = pod.status.resource_claim_statuses or []
            if not statuses:
                return None
            claim = resource.read_namespaced_resource_claim(statuses[0].resource_claim_name, ns)
            return claim if claim.status and claim.status.allocation else None

        claim = eventually(allocated, "the pod's claim to be allocated")
        [result] = claim.status.allocation.devices.results
        assert (result.driver, result.pool, result.device) == (driver, NODES[1], "gpu-0")
        assert [user.name for user in claim.status.reserved_for] == ["with-device"]

        def bound_claim() -> Any:
            pvc = v1.read_namespaced_persistent_volume_claim(f"data-{suffix}", ns)
            return pvc if pvc.status.phase == "Bound" else None

        bound = eventually(bound_claim, "the PersistentVolumeClaim to be bound")
        assert bound.spec.volume_name == f"volume-{suffix}"
    finally:
        for name in ("with-device", "with-volume"):
            with contextlib.suppress(m.ApiException):
                v1.delete_namespaced_pod(name, ns, grace_period_seconds=0)
        for delete, stem in deleters:
            with contextlib.suppress(m.ApiException):
                delete(f"{stem}-{suffix}")


def test_podgroups_in_v1alpha2_by_the_dynamic_client_and_in_v1alpha3_by_the_typed_api(
    k8s: ModuleType, api_client: Any, ns: str
) -> None:
    """The client has no typed scheduling.k8s.io/v1alpha2 API: its dynamic client (which reads discovery)
    writes and reads v1alpha2, the typed v1alpha3 API reads the same object, and writes in v1alpha3 read
    back in v1alpha2."""
    from kubernetes.dynamic import DynamicClient

    m = k8s.client
    typed = m.SchedulingV1alpha3Api(api_client)
    dynamic = DynamicClient(api_client)
    # The groups name this Workload's template, which must exist first.
    dynamic.resources.get(api_version="scheduling.k8s.io/v1alpha2", kind="Workload").create(
        namespace=ns, body={
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "job"},
            "spec": {"podGroupTemplates": [{"name": "w", "schedulingPolicy": {"gang": {"minCount": 3}}}]}})
    podgroups = dynamic.resources.get(api_version="scheduling.k8s.io/v1alpha2", kind="PodGroup")
    created = podgroups.create(namespace=ns, body={
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "old"},
        "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "job", "podGroupTemplateName": "w"}},
                 "schedulingPolicy": {"gang": {"minCount": 3}}, "disruptionMode": "Pod"},
    })
    assert created.apiVersion == "scheduling.k8s.io/v1alpha2" and created.spec.disruptionMode == "Pod"
    stored = typed.read_namespaced_pod_group("old", ns)
    assert (stored.api_version, stored.spec.workload_ref.template_name) == ("scheduling.k8s.io/v1alpha3", "w")
    assert stored.spec.disruption_mode.single is not None

    typed.create_namespaced_pod_group(ns, m.V1alpha3PodGroup(
        metadata=m.V1ObjectMeta(name="new"),
        spec=m.V1alpha3PodGroupSpec(
            scheduling_policy=m.V1alpha3PodGroupSchedulingPolicy(
                gang=m.V1alpha3GangSchedulingPolicy(min_count=2)),
            disruption_mode=m.V1alpha3DisruptionMode(all={}))))
    served = podgroups.get(name="new", namespace=ns)
    assert served.spec.disruptionMode == "PodGroup"
    # Admission's policy (the default class's) is stored, and is no field of v1alpha2.
    assert typed.read_namespaced_pod_group("new", ns).spec.preemption_policy == "PreemptLowerPriority"
    assert "preemptionPolicy" not in served.to_dict()["spec"]
    assert sorted(item.metadata.name for item in podgroups.get(namespace=ns).items) == ["new", "old"]


def check_round_trips(cases: list[tuple[Callable[..., Any], Callable[..., Any], Any, bool]], ns: str) -> None:
    for create, read, body, namespaced in cases:
        kind = type(body).__name__
        created = create(ns, body) if namespaced else create(body)
        assert type(created) is type(body), kind
        assert created.metadata.name == body.metadata.name and created.metadata.uid, kind
        again = read(body.metadata.name, ns) if namespaced else read(body.metadata.name)
        assert again.metadata.uid == created.metadata.uid, kind
        # A namespace also gets kube's kubernetes.io/metadata.name label.
        assert again.metadata.labels.items() >= {"app": "kinds"}.items(), kind


# ---------------------------------------------------------------------------------- leader election


def contend(k8s: ModuleType, api_client: Any, namespace: str, name: str) -> list[str]:
    """Two candidates of the client's leader election contend for Lease ``namespace/name``, each in its own
    thread with short durations; the first to lead stops renewing (its onstarted_leading returns with an
    error, the client's way to step down) and the other takes over. The identities, in the order they led."""
    from kubernetes.leaderelection import electionconfig, leaderelection
    from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

    led: list[str] = []
    changed = threading.Condition()
    step_down = {"a": threading.Event(), "b": threading.Event()}

    def lead(identity: str) -> None:
        with changed:
            led.append(identity)
            changed.notify_all()
        step_down[identity].wait()
        raise RuntimeError(f"{identity} steps down")

    def run(identity: str) -> None:
        lock = LeaseLock(name, namespace, identity)
        lock.api_instance = k8s.client.CoordinationV1Api(api_client)
        config = electionconfig.Config(
            lock, lease_duration=LEASE_DURATION_S, renew_deadline=2, retry_period=1,
            onstarted_leading=lambda: lead(identity), onstopped_leading=lambda: None)
        leaderelection.LeaderElection(config).run()

    threads = [threading.Thread(target=run, args=(identity,), daemon=True) for identity in step_down]
    for thread in threads:
        thread.start()
    try:
        with changed:
            assert changed.wait_for(lambda: led, SETTLE_TIMEOUT_S), "no candidate led"
            first = led[0]
        # A lease duration later (the leader renewed every second meanwhile) the other still follows.
        time.sleep(LEASE_DURATION_S)
        assert led == [first]
        step_down[first].set()
        with changed:
            assert changed.wait_for(lambda: len(led) == 2, SETTLE_TIMEOUT_S), "nobody took over"
    finally:
        for event in step_down.values():
            event.set()
        for thread in threads:
            thread.join(SETTLE_TIMEOUT_S)
    return led


def elect_on(k8s: ModuleType, server: ApiServerProcess, namespace: str) -> None:
    """``contend`` on ``server``; the Lease it leaves names the second leader."""
    with api_client_of(k8s, server) as client:
        led = contend(k8s, client, namespace, "python-election")
        assert sorted(led) == ["a", "b"]
        lease = k8s.client.CoordinationV1Api(client).read_namespaced_lease("python-election", namespace)
        assert lease.spec.holder_identity == led[1]
        assert lease.spec.lease_duration_seconds == LEASE_DURATION_S
        assert lease.spec.renew_time is not None and lease.spec.acquire_time is not None


def test_leader_election_on_a_lease(
    k8s: ModuleType, cluster: ApiServerProcess, unenforced: ApiServerProcess, ns: str
) -> None:
    # The two elections are on two servers of their own stores, so they run side by side: each is mostly
    # waiting out lease durations.
    with ThreadPoolExecutor(2) as pool:
        elections = {fencing: pool.submit(elect_on, k8s, server, ns)
                     for fencing, server in (("enforced", cluster), ("unenforced", unenforced))}
    for fencing, election in elections.items():
        try:
            election.result()
        except AssertionError as exc:
            raise AssertionError(f"with leader fencing {fencing}: {exc}") from exc


def test_the_schedulers_lease_cannot_be_taken_while_it_is_renewed(
    k8s: ModuleType, api_client: Any, scheduler: SchedulerProcess
) -> None:
    coordination = k8s.client.CoordinationV1Api(api_client)
    namespace, name = SCHEDULER_LEASE

    def held() -> Any:
        try:
            lease = coordination.read_namespaced_lease(name, namespace)
        except k8s.client.ApiException as exc:
            assert exc.status == 404, exc
            return None
        return lease if lease.spec.holder_identity else None

    lease = eventually(held, "the scheduler to hold its Lease")
    assert lease.spec.holder_identity == scheduler.identity
    lease.spec.holder_identity = "python-client"
    error, status = api_exception(k8s, lambda: coordination.replace_namespaced_lease(name, namespace, lease))
    assert (error.status, status["reason"]) == (403, "Forbidden")
    assert f'lease {namespace}/{name} is held by "{scheduler.identity}"' in status["message"]
    assert "--enforce-leader-fencing" in status["message"]
    assert coordination.read_namespaced_lease(name, namespace).spec.holder_identity == scheduler.identity


# --------------------------------------------------------------------------------- version, discovery


def test_version_and_the_group_lists_at_the_clients_paths(k8s: ModuleType, api_client: Any) -> None:
    # The client asks for /version/, /api/ and /apis/ (with the slash), which kube-apiserver serves.
    m = k8s.client
    version = m.VersionApi(api_client).get_code()
    assert (version.major, version.minor) == ("1", "37") and version.git_version.startswith("v1.37.")
    assert m.CoreApi(api_client).get_api_versions().versions == ["v1"]
    groups = {group.name: group for group in m.ApisApi(api_client).get_api_versions().groups}
    assert groups["apps"].preferred_version.group_version == "apps/v1"
    assert "events.k8s.io" in groups and "coordination.k8s.io" in groups
    resources = {r.name for r in m.CoreV1Api(api_client).get_api_resources().resources}
    assert {"pods", "pods/binding", "pods/eviction", "pods/status", "nodes", "events"} <= resources
