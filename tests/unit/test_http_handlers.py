"""The HTTP API's handlers in process: an aiohttp test server over the real verbs on the in-memory store,
requests as kubectl and the official clients send them, answers as kube-apiserver gives them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from cluster.api import errors
from cluster.apiserver.auth.access import Access
from cluster.apiserver.auth.authenticator import UNSECURED
from cluster.apiserver.auth.identity import RequestInfo
from cluster.apiserver.flowcontrol import FlowSchemas
from cluster.apiserver.http.app import FLOW_SCHEMA_HEADER, PRIORITY_LEVEL_HEADER, HttpApi, flow_headers
from cluster.apiserver.metrics import ApiServerMetrics
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.memory import MemoryStore

PODS = "/api/v1/namespaces/default/pods"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
async def http() -> AsyncIterator[TestClient]:
    verbs = Verbs(Storage(MemoryStore()))
    api = HttpApi(verbs, asyncio.Event(), access=Access.unsecured(), gates=(), max_page_size=500,
                  metrics=ApiServerMetrics(), checks={"/readyz": lambda: None})
    async with TestClient(TestServer(api.application("127.0.0.1:0"))) as client:
        yield client


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m"}}}], **spec}}


_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                    "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


async def _json(response: Any) -> Any:
    return json.loads(await response.read())


async def test_create_get_and_list(http: TestClient) -> None:
    created = await http.post(PODS, json=_pod("web"))
    assert created.status == 201
    body = await _json(created)
    assert (body["kind"], body["metadata"]["namespace"], body["status"]["phase"]) == ("Pod", "default",
                                                                                     "Pending")
    got = await _json(await http.get(f"{PODS}/web"))
    assert got["metadata"]["uid"] == body["metadata"]["uid"]
    listed = await _json(await http.get(PODS, params={"labelSelector": "app=web"}))
    assert listed["kind"] == "PodList" and [p["metadata"]["name"] for p in listed["items"]] == ["web"]
    empty = await _json(await http.get("/api/v1/namespaces/other/pods"))
    assert empty["items"] == []  # present when empty: the official clients require it


async def test_a_table_has_kubectls_columns(http: TestClient) -> None:
    await http.post(PODS, json=_pod("web"))
    table = await _json(await http.get(PODS, headers={"Accept": TABLE}))
    assert table["kind"] == "Table"
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:3] == ["web", "0/1", "Pending"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    one = await _json(await http.get(f"{PODS}/web", headers={"Accept": TABLE}))
    assert one["kind"] == "Table" and len(one["rows"]) == 1


async def test_a_stale_update_is_a_conflict_status(http: TestClient) -> None:
    pod = await _json(await http.post(PODS, json=_pod("web")))
    pod["metadata"]["labels"]["tier"] = "front"
    assert (await http.put(f"{PODS}/web", json=pod)).status == 200
    stale = await http.put(f"{PODS}/web", json=pod)
    status = await _json(stale)
    assert stale.status == 409
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "Conflict", 409)
    assert "the object has been modified" in status["message"]


async def test_an_invalid_object_is_422_with_causes(http: TestClient) -> None:
    response = await http.post(PODS, json=_pod("Web"))
    status = await _json(response)
    assert response.status == 422 and status["reason"] == "Invalid"
    assert status["details"]["kind"] == "Pod" and status["details"]["name"] == "Web"
    assert status["details"]["causes"][0]["field"] == "metadata.name"


async def test_strict_field_validation_refuses_and_warn_warns(http: TestClient) -> None:
    typo = _pod("web", nodeSelecter={"a": "b"})
    refused = await http.post(PODS, json=typo, params={"fieldValidation": "Strict"})
    assert refused.status == 400
    assert 'unknown field "spec.nodeSelecter"' in (await _json(refused))["message"]
    warned = await http.post(PODS, json=typo)
    assert warned.status == 201
    assert warned.headers.getall("Warning") == ['299 - "unknown field \\"spec.nodeSelecter\\""']


@pytest.mark.parametrize(("content_type", "patch", "labels"), [
    ("application/merge-patch+json", {"metadata": {"labels": {"tier": "front", "app": None}}},
     {"tier": "front"}),
    ("application/strategic-merge-patch+json", {"metadata": {"labels": {"tier": "front"}}},
     {"app": "web", "tier": "front"}),
    ("application/json-patch+json", [{"op": "add", "path": "/metadata/labels/tier", "value": "front"}],
     {"app": "web", "tier": "front"}),
])
async def test_patch(http: TestClient, content_type: str, patch: Any, labels: dict[str, str]) -> None:
    await http.post(PODS, json=_pod("web"))
    response = await http.patch(f"{PODS}/web", data=json.dumps(patch), headers={"Content-Type": content_type})
    assert response.status == 200
    assert (await _json(response))["metadata"]["labels"] == labels


async def test_a_strategic_patch_merges_containers_by_name(http: TestClient) -> None:
    await http.post(PODS, json=_pod("web"))
    patch = {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    response = await http.patch(f"{PODS}/web", data=json.dumps(patch),
                                headers={"Content-Type": "application/strategic-merge-patch+json"})
    container = (await _json(response))["spec"]["containers"][0]
    assert container["image"] == "nginx:2" and container["resources"]["requests"]["cpu"] == "100m"


async def test_a_patch_of_an_unknown_type_is_415(http: TestClient) -> None:
    await http.post(PODS, json=_pod("web"))
    response = await http.patch(f"{PODS}/web", data="{}", headers={"Content-Type": "text/plain"})
    assert response.status == 415 and (await _json(response))["reason"] == "UnsupportedMediaType"


async def test_a_patch_naming_a_stale_resource_version_is_a_conflict(http: TestClient) -> None:
    first = await _json(await http.post(PODS, json=_pod("web")))
    await http.patch(f"{PODS}/web", data='{"metadata":{"labels":{"a":"b"}}}',
                     headers={"Content-Type": "application/merge-patch+json"})
    patch = {"metadata": {"resourceVersion": first["metadata"]["resourceVersion"], "labels": {"x": "y"}}}
    response = await http.patch(f"{PODS}/web", data=json.dumps(patch),
                                headers={"Content-Type": "application/merge-patch+json"})
    assert response.status == 409


async def test_status_patch_of_a_node(http: TestClient) -> None:
    await http.post("/api/v1/nodes", json=_NODE)
    patch = {"status": {"allocatable": {"cpu": "8"}}}
    response = await http.patch("/api/v1/nodes/n1/status", data=json.dumps(patch),
                                headers={"Content-Type": "application/merge-patch+json"})
    assert response.status == 200
    assert (await _json(response))["status"]["allocatable"]["cpu"] == "8"


async def test_bind_through_the_bindings_collection_and_the_subresource(http: TestClient) -> None:
    await http.post("/api/v1/nodes", json=_NODE)
    for name in ("a", "b"):
        await http.post(PODS, json=_pod(name))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
               "target": {"kind": "Node", "name": "n1"}}
    assert (await http.post("/api/v1/namespaces/default/bindings", json=binding)).status == 201
    binding["metadata"]["name"] = "b"
    assert (await http.post(f"{PODS}/b/binding", json=binding)).status == 201
    again = await http.post(f"{PODS}/b/binding", json=binding)
    assert again.status == 409
    nodes = [(await _json(await http.get(f"{PODS}/{n}")))["spec"]["nodeName"] for n in ("a", "b")]
    assert nodes == ["n1", "n1"]


async def test_eviction_is_refused_while_the_budget_allows_none(http: TestClient) -> None:
    await http.post("/api/v1/nodes", json=_NODE)
    await http.post(PODS, json=_pod("web"))
    await http.post(f"{PODS}/web/binding", json={"metadata": {"name": "web"}, "target": {"name": "n1"}})
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    await http.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb)
    status = {"status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 1,
                         "observedGeneration": 1}}
    await http.patch("/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep/status",
                     data=json.dumps(status), headers={"Content-Type": "application/merge-patch+json"})
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web",
                                                                           "namespace": "default"}}
    refused = await http.post(f"{PODS}/web/eviction", json=eviction)
    body = await _json(refused)
    assert refused.status == 429 and body["reason"] == "TooManyRequests"
    assert body["details"]["causes"][0] == {
        "reason": "DisruptionBudget",
        "message": "The disruption budget keep needs 1 healthy pods and has 1 currently"}


async def test_delete_with_a_uid_precondition(http: TestClient) -> None:
    await http.post(PODS, json=_pod("web"))
    wrong = await http.delete(f"{PODS}/web", json={"preconditions": {"uid": "not-it"}})
    assert wrong.status == 409
    assert "Precondition failed: UID in precondition: not-it" in (await _json(wrong))["message"]
    assert (await http.delete(f"{PODS}/web", params={"gracePeriodSeconds": "0"})).status == 200
    assert (await http.get(f"{PODS}/web")).status == 404


async def test_delete_collection_deletes_what_is_selected(http: TestClient) -> None:
    for name in ("a", "b", "c"):
        await http.post(PODS, json=_pod(name))
    deleted = await _json(await http.delete(PODS, params={"labelSelector": "app in (a,b)"}))
    assert sorted(p["metadata"]["name"] for p in deleted["items"]) == ["a", "b"]
    left = await _json(await http.get(PODS))
    assert [p["metadata"]["name"] for p in left["items"]] == ["c"]


async def _events(response: Any, count: int) -> list[dict[str, Any]]:
    events = []
    while len(events) < count:
        line = await asyncio.wait_for(response.content.readline(), 10)
        assert line, f"the stream ended after {events}"
        events.append(json.loads(line))
    return events


async def test_watch_streams_events_then_ends_at_its_timeout(http: TestClient) -> None:
    created = await _json(await http.post(PODS, json=_pod("a")))
    response = await http.get(PODS, params={"watch": "true", "timeoutSeconds": "2",
                                            "resourceVersion": created["metadata"]["resourceVersion"]})
    assert response.status == 200
    await http.post(PODS, json=_pod("b"))
    (event,) = await _events(response, 1)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "b")
    assert await asyncio.wait_for(response.content.read(), 10) == b""  # the timeout ends it cleanly


async def test_watch_list_ends_its_initial_events_with_a_bookmark(http: TestClient) -> None:
    await http.post(PODS, json=_pod("a"))
    response = await http.get(PODS, params={
        "watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true", "timeoutSeconds": "1"})
    added, bookmark = await _events(response, 2)
    assert (added["type"], added["object"]["metadata"]["name"]) == ("ADDED", "a")
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_watch_list_without_not_older_than_is_invalid(http: TestClient) -> None:
    response = await http.get(PODS, params={"watch": "1", "sendInitialEvents": "true"})
    assert response.status == 422


async def test_a_watch_of_tables_sends_the_columns_once(http: TestClient) -> None:
    created = await _json(await http.post(PODS, json=_pod("a")))
    response = await http.get(PODS, headers={"Accept": TABLE}, params={
        "watch": "true", "timeoutSeconds": "2", "resourceVersion": "0"})
    (first,) = await _events(response, 1)
    assert first["object"]["kind"] == "Table" and first["object"]["columnDefinitions"]
    await http.delete(f"{PODS}/a", params={"gracePeriodSeconds": "0"})
    (second,) = await _events(response, 1)
    assert second["type"] == "DELETED" and second["object"]["columnDefinitions"] is None
    assert created["metadata"]["name"] == second["object"]["rows"][0]["cells"][0]


async def test_events_k8s_io_is_a_view_of_core_events(http: TestClient) -> None:
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"},
             "regarding": {"kind": "Pod", "name": "web", "namespace": "default"}, "note": "hello",
             "reason": "Tested", "type": "Normal", "reportingController": "tests",
             "reportingInstance": "tests-1", "action": "Test", "eventTime": "2026-01-02T03:04:05.000000Z"}
    created = await http.post("/apis/events.k8s.io/v1/namespaces/default/events", json=event)
    assert created.status == 201, await created.text()
    core = await _json(await http.get("/api/v1/namespaces/default/events/e1"))
    assert (core["involvedObject"]["name"], core["message"]) == ("web", "hello")
    listed = await _json(await http.get("/apis/events.k8s.io/v1/namespaces/default/events",
                                        params={"fieldSelector": "regarding.name=web"}))
    assert [(e["apiVersion"], e["note"]) for e in listed["items"]] == [("events.k8s.io/v1", "hello")]


async def test_discovery_is_revalidated_by_its_etag(http: TestClient) -> None:
    first = await http.get("/api/v1")
    assert (await _json(first))["kind"] == "APIResourceList"
    again = await http.get("/api/v1", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status == 304


async def test_openapi_v2_is_json_only(http: TestClient) -> None:
    protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    refused = await http.get("/openapi/v2", headers={"Accept": protobuf})
    assert refused.status == 406
    served = await _json(await http.get("/openapi/v2", headers={"Accept": "application/json"}))
    assert "io.k8s.api.core.v1.Pod" in served["definitions"]


async def test_version_and_health_are_public(http: TestClient) -> None:
    version = await _json(await http.get("/version"))
    assert version["gitVersion"].startswith("v1.")
    assert await (await http.get("/readyz")).text() == "ok"


@pytest.mark.parametrize(("method", "path", "code"), [
    ("GET", "/api/v1/widgets", 404),
    ("PUT", PODS, 405),                         # update needs a name
    ("POST", f"{PODS}/web/status", 405),
    ("GET", f"{PODS}?limit=x", 400),
    ("GET", f"{PODS}?fieldSelector=spec.foo%3Dx", 400),
    ("POST", f"{PODS}?dryRun=Some", 400),
])
async def test_bad_requests(http: TestClient, method: str, path: str, code: int) -> None:
    response = await http.request(method, path)
    assert response.status == code
    assert (await _json(response))["kind"] == "Status"


async def test_a_body_that_is_not_json_is_a_bad_request(http: TestClient) -> None:
    response = await http.post(PODS, data=b"{nope", headers={"Content-Type": "application/json"})
    assert response.status == 400 and (await _json(response))["reason"] == "BadRequest"


async def test_server_side_apply_creates_then_conflicts_with_another_manager(http: TestClient) -> None:
    applied = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    tier: mine\nspec:\n"
               "  containers:\n  - name: c\n    image: nginx\n")
    apply = {"Content-Type": "application/apply-patch+yaml"}
    created = await http.patch(f"{PODS}/web", data=applied, headers=apply,
                               params={"fieldManager": "alice", "force": "false"})
    assert created.status == 201, await created.text()
    entries = (await _json(created))["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("alice", "Apply")]
    other = applied.replace("tier: mine", "tier: theirs")
    conflict = await http.patch(f"{PODS}/web", data=other, headers=apply, params={"fieldManager": "bob"})
    status = await _json(conflict)
    assert conflict.status == 409
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .metadata.labels.tier'
    forced = await http.patch(f"{PODS}/web", data=other, headers=apply,
                              params={"fieldManager": "bob", "force": "true"})
    assert (await _json(forced))["metadata"]["labels"] == {"tier": "theirs"}


async def test_server_side_apply_creates_in_the_urls_namespace(http: TestClient) -> None:
    # The applied configuration names no namespace (as the Python client's and kubectl's need not).
    applied = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n"
               "  containers:\n  - {name: c, image: nginx}\n")
    pods = "/api/v1/namespaces/team/pods"
    created = await http.patch(f"{pods}/web", data=applied, params={"fieldManager": "alice"},
                               headers={"Content-Type": "application/apply-patch+yaml"})
    assert created.status == 201, await created.text()
    assert (await _json(created))["metadata"]["namespace"] == "team"
    assert (await http.get(f"{pods}/web")).status == 200
    assert (await http.get(f"{PODS}/web")).status == 404


async def test_server_side_apply_needs_a_field_manager(http: TestClient) -> None:
    response = await http.patch(f"{PODS}/web", data="kind: Pod\napiVersion: v1\nmetadata: {name: web}\n",
                                headers={"Content-Type": "application/apply-patch+yaml"})
    assert response.status == 422
    assert "fieldManager: Required value" in (await _json(response))["message"]


async def test_every_write_records_its_field_manager(http: TestClient) -> None:
    created = await _json(await http.post(PODS, json=_pod("web"), headers={"User-Agent": "kubectl/v1.37.1"}))
    assert [e["manager"] for e in created["metadata"]["managedFields"]] == ["kubectl"]
    patched = await http.patch(f"{PODS}/web", data='{"metadata":{"labels":{"x":"y"}}}',
                               params={"fieldManager": "labeller"},
                               headers={"Content-Type": "application/merge-patch+json"})
    managers = {e["manager"] for e in (await _json(patched))["metadata"]["managedFields"]}
    assert managers == {"kubectl", "labeller"}


@pytest.mark.parametrize("media_type", ["application/vnd.kubernetes.protobuf", "application/cbor"])
async def test_a_body_in_a_binary_encoding_is_refused_with_415(http: TestClient, media_type: str) -> None:
    # What kubectl's typed clients send (`kubectl create namespace`): the k8s protobuf envelope.
    body = b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace\x12\x08\n\x06\n\x04team\x1a\x00\"\x00"
    refused = await http.post("/api/v1/namespaces", data=body, headers={"Content-Type": media_type})
    assert refused.status == 415
    assert await _json(refused) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the body of the request was in an unknown format - accepted media types include: "
                   "application/json, application/yaml",
        "reason": "UnsupportedMediaType", "code": 415, "details": {"kind": "namespaces"}}


class _Refusing:
    """A request gate that refuses every call as flow control refuses one whose queue is full."""

    def admit(self, user: Any, request: Any, width: int = 1) -> Any:
        raise errors.TooManyRequests("too many requests, please try again later")


async def test_a_request_refused_by_flow_control_is_429_with_retry_after() -> None:
    api = HttpApi(Verbs(Storage(MemoryStore())), asyncio.Event(), access=Access.unsecured(),
                  gates=(_Refusing(),), max_page_size=500, metrics=ApiServerMetrics(), checks={})
    async with TestClient(TestServer(api.application("127.0.0.1:0"))) as client:
        response = await client.get(PODS)
        assert response.status == 429 and response.headers["Retry-After"] == "1"
        assert (await _json(response))["reason"] == "TooManyRequests"


async def test_answers_name_their_flow_schema_and_priority_level_as_kube_apiserver() -> None:
    schemas = FlowSchemas(lambda user, request: False)
    api = HttpApi(Verbs(Storage(MemoryStore())), asyncio.Event(), access=Access.unsecured(), gates=(),
                  max_page_size=500, metrics=ApiServerMetrics(), checks={}, classify=schemas.classify)
    async with TestClient(TestServer(api.application("127.0.0.1:0"))) as client:
        listed = await client.get(PODS)
        missing = await client.get(f"{PODS}/nope")
        watched = await client.get(PODS, params={"watch": "1", "timeoutSeconds": "1"})
        await watched.read()
    expected = flow_headers(schemas.classify(UNSECURED, RequestInfo("list", "pods", namespace="default")))
    for response in (listed, missing, watched):
        assert response.headers[FLOW_SCHEMA_HEADER] == expected[FLOW_SCHEMA_HEADER]
        assert response.headers[PRIORITY_LEVEL_HEADER] == expected[PRIORITY_LEVEL_HEADER]


async def test_without_flow_control_no_flow_headers(http: TestClient) -> None:
    response = await http.get(PODS)
    assert FLOW_SCHEMA_HEADER not in response.headers
