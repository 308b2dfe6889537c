"""scheduling.k8s.io/v1alpha2 over the HTTP API in process: PodGroups written and read in v1alpha2 are
stored once as v1alpha3 and served in either version, every verb (create, get, list, tables, update,
status, the four patch types, watch) in the shape of the URL's version, as kube-apiserver converts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer

from cluster.apiserver.auth.access import Access
from cluster.apiserver.http.app import HttpApi
from cluster.apiserver.http.openapi import OpenAPI
from cluster.apiserver.metrics import ApiServerMetrics
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.memory import MemoryStore

V1ALPHA2 = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
V1ALPHA3 = "/apis/scheduling.k8s.io/v1alpha3/namespaces/default/podgroups"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
async def http() -> AsyncIterator[TestClient]:
    verbs = Verbs(Storage(MemoryStore()))
    api = HttpApi(verbs, asyncio.Event(), access=Access.unsecured(), gates=(), max_page_size=500,
                  metrics=ApiServerMetrics(), checks={"/readyz": lambda: None})
    async with TestClient(TestServer(api.application("127.0.0.1:0"))) as client:
        # The groups name this Workload's template, which admission requires to exist; written in
        # v1alpha2, it is a Workload served in that version too.
        workload = await client.post(
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads",
            json={"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
                  "metadata": {"name": "training"},
                  "spec": {"podGroupTemplates": [
                      {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}})
        assert workload.status == 201, await workload.text()
        yield client


def _v1alpha2_group(name: str = "workers", mode: str = "PodGroup") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
        "spec": {
            "podGroupTemplateRef": {
                "workload": {"workloadName": "training", "podGroupTemplateName": "workers"}},
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "disruptionMode": mode,
        },
    }


# The API server resolves a group's priority (0 without a class) as it does a pod's.
V1ALPHA2_SPEC = {**_v1alpha2_group()["spec"], "priority": 0}
V1ALPHA3_SPEC = {
    "priority": 0,
    "schedulingPolicy": {"gang": {"minCount": 2}},
    "disruptionMode": {"all": {}},
    "workloadRef": {"workloadName": "training", "templateName": "workers"},
    "preemptionPolicy": "PreemptLowerPriority",
}


async def _json(response: Any) -> Any:
    return json.loads(await response.read())


async def test_a_v1alpha2_create_is_stored_as_v1alpha3_and_read_in_either(http: TestClient) -> None:
    created = await http.post(V1ALPHA2, json=_v1alpha2_group())
    assert created.status == 201, await created.text()
    body = await _json(created)
    assert (body["apiVersion"], body["spec"]) == ("scheduling.k8s.io/v1alpha2", V1ALPHA2_SPEC)
    stored = await _json(await http.get(f"{V1ALPHA3}/workers"))
    assert (stored["apiVersion"], stored["spec"]) == ("scheduling.k8s.io/v1alpha3", V1ALPHA3_SPEC)
    again = await _json(await http.get(f"{V1ALPHA2}/workers"))
    assert again["spec"] == V1ALPHA2_SPEC and again["metadata"]["uid"] == stored["metadata"]["uid"]
    listed = await _json(await http.get(V1ALPHA2))
    assert (listed["kind"], listed["apiVersion"]) == ("PodGroupList", "scheduling.k8s.io/v1alpha2")
    assert [item["spec"] for item in listed["items"]] == [V1ALPHA2_SPEC]
    assert {item["apiVersion"] for item in listed["items"]} == {"scheduling.k8s.io/v1alpha2"}


async def test_v1alpha3_only_fields_are_left_out_of_v1alpha2(http: TestClient) -> None:
    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {**V1ALPHA3_SPEC, "parentCompositePodGroupName": "root",
                      "disruptionMode": {"single": {}}}}
    assert (await http.post(V1ALPHA3, json=group)).status == 201
    served = await _json(await http.get(f"{V1ALPHA2}/g"))
    assert served["spec"] == {**V1ALPHA2_SPEC, "disruptionMode": "Pod"}


async def test_a_table_of_v1alpha2_rows_carries_v1alpha2_objects(http: TestClient) -> None:
    await http.post(V1ALPHA2, json=_v1alpha2_group())
    table = await _json(await http.get(V1ALPHA2, headers={"Accept": TABLE},
                                       params={"includeObject": "Object"}))
    assert table["kind"] == "Table" and table["rows"][0]["cells"][0] == "workers"
    assert table["rows"][0]["object"]["spec"] == V1ALPHA2_SPEC


BAD = [
    ("unsupported mode", {"disruptionMode": "Pods"}, 422,
     'PodGroup.scheduling.k8s.io "workers" is invalid: spec.disruptionMode: Unsupported value: "Pods": '
     'supported values: "Pod", "PodGroup"'),
    ("v1alpha3's struct in v1alpha2", {"disruptionMode": {"all": {}}}, 400,
     'PodGroup in version "v1alpha2" cannot be handled as a PodGroup: spec.disruptionMode: Invalid value: '
     "object: expected a string, got object"),
    ("no workload in the template reference", {"podGroupTemplateRef": {}}, 422,
     'PodGroup.scheduling.k8s.io "workers" is invalid: spec.podGroupTemplateRef: Required value: must '
     "specify one of: `workload`"),
]


@pytest.mark.parametrize(("name", "spec", "code", "message"), BAD, ids=[case[0] for case in BAD])
async def test_bad_v1alpha2_input_is_refused_naming_the_field(
    http: TestClient, name: str, spec: dict[str, Any], code: int, message: str
) -> None:
    group = _v1alpha2_group()
    group["spec"].update(spec)
    response = await http.post(V1ALPHA2, json=group)
    assert response.status == code
    assert (await _json(response))["message"] == message
    assert (await _json(await http.get(V1ALPHA3)))["items"] == []


async def test_a_v1alpha3_field_name_is_unknown_in_v1alpha2(http: TestClient) -> None:
    group = _v1alpha2_group()
    group["spec"]["preemptionPolicy"] = "Never"
    strict = await http.post(V1ALPHA2, json=group, params={"fieldValidation": "Strict"})
    assert strict.status == 400
    assert (await _json(strict))["message"].endswith(
        'strict decoding error: unknown field "spec.preemptionPolicy"')
    warned = await http.post(V1ALPHA2, json=group)
    assert warned.status == 201
    assert warned.headers["Warning"] == '299 - "unknown field \\"spec.preemptionPolicy\\""'
    # The unknown field was dropped: the stored policy is admission's, from the (default) class.
    stored = (await _json(await http.get(f"{V1ALPHA3}/workers")))["spec"]
    assert stored["preemptionPolicy"] == "PreemptLowerPriority"


PATCHES = [
    ("application/json-patch+json",
     [{"op": "test", "path": "/spec/disruptionMode", "value": "PodGroup"},
      {"op": "add", "path": "/metadata/labels", "value": {"tier": "a"}}]),
    ("application/merge-patch+json",
     {"metadata": {"labels": {"tier": "a"}}, "spec": {"disruptionMode": "PodGroup"}}),
    ("application/strategic-merge-patch+json",
     {"metadata": {"labels": {"tier": "a"}},
      "spec": {"podGroupTemplateRef": {"workload": {"podGroupTemplateName": "workers"}}}}),
]


@pytest.mark.parametrize(("content_type", "patch"), PATCHES, ids=[case[0] for case in PATCHES])
async def test_a_patch_applies_to_the_v1alpha2_shape(http: TestClient, content_type: str, patch: Any) -> None:
    await http.post(V1ALPHA2, json=_v1alpha2_group())
    patched = await http.patch(f"{V1ALPHA2}/workers", data=json.dumps(patch),
                               headers={"Content-Type": content_type})
    assert patched.status == 200, await patched.text()
    body = await _json(patched)
    assert (body["metadata"]["labels"], body["spec"]) == ({"tier": "a"}, V1ALPHA2_SPEC)
    stored = await _json(await http.get(f"{V1ALPHA3}/workers"))
    assert (stored["metadata"]["labels"], stored["spec"]) == ({"tier": "a"}, V1ALPHA3_SPEC)


async def test_a_patch_to_a_value_v1alpha3_cannot_hold_is_invalid(http: TestClient) -> None:
    await http.post(V1ALPHA2, json=_v1alpha2_group())
    patched = await http.patch(f"{V1ALPHA2}/workers", data=json.dumps({"spec": {"disruptionMode": "All"}}),
                               headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status == 422
    assert "spec.disruptionMode: Unsupported value: \"All\"" in (await _json(patched))["message"]


async def test_server_side_apply_of_a_v1alpha2_manifest(http: TestClient) -> None:
    apply = {"Content-Type": "application/apply-patch+yaml"}
    applied = yaml.safe_dump(_v1alpha2_group())
    created = await http.patch(f"{V1ALPHA2}/workers", data=applied, headers=apply,
                               params={"fieldManager": "alice"})
    assert created.status == 201, await created.text()
    body = await _json(created)
    assert body["spec"] == V1ALPHA2_SPEC
    [entry] = body["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == (
        "alice", "Apply", "scheduling.k8s.io/v1alpha2")
    assert "f:podGroupTemplateRef" in entry["fieldsV1"]["f:spec"]
    relabelled = _v1alpha2_group()
    relabelled["metadata"]["labels"] = {"tier": "b"}
    again = await http.patch(f"{V1ALPHA2}/workers", data=yaml.safe_dump(relabelled), headers=apply,
                             params={"fieldManager": "alice"})
    assert again.status == 200, await again.text()
    stored = await _json(await http.get(f"{V1ALPHA3}/workers"))
    assert (stored["metadata"]["labels"], stored["spec"]) == ({"tier": "b"}, V1ALPHA3_SPEC)


async def test_status_written_in_v1alpha2(http: TestClient) -> None:
    group = await _json(await http.post(V1ALPHA2, json=_v1alpha2_group()))
    group["status"] = {"conditions": [{
        "type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    updated = await http.put(f"{V1ALPHA2}/workers/status", json=group)
    assert updated.status == 200, await updated.text()
    assert (await _json(updated))["spec"] == V1ALPHA2_SPEC
    stored = await _json(await http.get(f"{V1ALPHA3}/workers"))
    assert [c["reason"] for c in stored["status"]["conditions"]] == ["Unschedulable"]


async def test_a_v1alpha2_watch_streams_v1alpha2_objects(http: TestClient) -> None:
    created = await _json(await http.post(V1ALPHA2, json=_v1alpha2_group("a")))
    response = await http.get(V1ALPHA2, params={"watch": "true", "timeoutSeconds": "2",
                                                "resourceVersion": created["metadata"]["resourceVersion"]})
    assert response.status == 200
    group = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "b"},
             "spec": V1ALPHA3_SPEC}
    await http.post(V1ALPHA3, json=group)
    line = await asyncio.wait_for(response.content.readline(), 10)
    event = json.loads(line)
    assert (event["type"], event["object"]["apiVersion"]) == ("ADDED", "scheduling.k8s.io/v1alpha2")
    assert event["object"]["spec"] == V1ALPHA2_SPEC


async def test_discovery_lists_v1alpha2_after_the_stored_version(http: TestClient) -> None:
    group = await _json(await http.get("/apis/scheduling.k8s.io"))
    versions = [v["version"] for v in group["versions"]]
    assert versions == ["v1", "v1alpha3", "v1alpha2"]
    resources = await _json(await http.get("/apis/scheduling.k8s.io/v1alpha2"))
    assert {r["name"] for r in resources["resources"]} >= {"podgroups", "podgroups/status"}


def test_openapi_describes_v1alpha2_in_its_own_shape() -> None:
    openapi = OpenAPI()
    definitions = openapi.v2["definitions"]
    spec = definitions["io.k8s.api.scheduling.v1alpha2.PodGroupSpec"]["properties"]
    assert spec["disruptionMode"] == {"type": "string"}
    assert spec["podGroupTemplateRef"] == {
        "$ref": "#/definitions/io.k8s.api.scheduling.v1alpha2.PodGroupTemplateReference"}
    assert "preemptionPolicy" not in spec and "workloadRef" not in spec
    assert spec["resourceClaims"]["x-kubernetes-patch-merge-key"] == "name"
    assert spec["schedulingPolicy"] == {
        "$ref": "#/definitions/io.k8s.api.scheduling.v1alpha2.PodGroupSchedulingPolicy"}
    assert definitions["io.k8s.api.scheduling.v1alpha2.WorkloadPodGroupTemplateReference"]["required"] == [
        "workloadName", "podGroupTemplateName"]
    assert definitions["io.k8s.api.scheduling.v1alpha2.PodGroup"]["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.k8s.io", "kind": "PodGroup", "version": "v1alpha2"}]
    v3 = openapi.v3["apis/scheduling.k8s.io/v1alpha2"]
    assert "io.k8s.api.scheduling.v1alpha3.PodGroup" not in v3["components"]["schemas"]
    patch = v3["paths"]["/apis/scheduling.k8s.io/v1alpha2/namespaces/{namespace}/podgroups/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
