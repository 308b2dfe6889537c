"""OpenAPI documents: schemas and operations pinned to upstream's, every served kind and subresource
present, every ``$ref`` resolving, and kubectl's check for server-side field validation (cli-runtime's
queryParamVerifierV3) passing for every kind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.api import objects_pb2, scheduling_v1alpha2_pb2
from cluster.api.kinds import KINDS
from cluster.apiserver.http.openapi import PATCH_TYPES, OpenAPI
from cluster.apiserver.http.schemas import REQUIRED, package_of, refs_of
from cluster.apiserver.http.served import group_versions

CORE = "io.k8s.api.core.v1"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"


@pytest.fixture(scope="module")
def openapi() -> OpenAPI:
    return OpenAPI()


def _v3_schema(openapi: OpenAPI, gv_path: str, name: str) -> dict[str, Any]:
    schema: dict[str, Any] = openapi.v3[gv_path]["components"]["schemas"][name]
    return schema


def _v3_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


@pytest.mark.parametrize(
    ("api_version", "package"),
    [
        ("v1", "io.k8s.api.core.v1"),
        ("apps/v1", "io.k8s.api.apps.v1"),
        ("scheduling.k8s.io/v1alpha3", "io.k8s.api.scheduling.v1alpha3"),
        ("coordination.k8s.io/v1beta1", "io.k8s.api.coordination.v1beta1"),
        ("scheduling.x-k8s.io/v1alpha1", "io.x-k8s.scheduling.v1alpha1"),
    ],
)
def test_definition_packages_are_upstreams(api_version: str, package: str) -> None:
    assert package_of(api_version) == package


def test_pod_and_its_list_carry_their_group_version_kind(openapi: OpenAPI) -> None:
    pod = _v3_schema(openapi, "api/v1", f"{CORE}.Pod")
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["metadata"] == _v3_ref(f"{META}.ObjectMeta")
    assert pod["properties"]["spec"] == _v3_ref(f"{CORE}.PodSpec")
    pod_list = _v3_schema(openapi, "api/v1", f"{CORE}.PodList")
    assert pod_list["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "PodList", "version": "v1"}]
    assert pod_list["required"] == ["items"]
    assert pod_list["properties"]["items"] == {"type": "array", "items": _v3_ref(f"{CORE}.Pod")}
    assert pod_list["properties"]["metadata"] == _v3_ref(f"{META}.ListMeta")


def test_field_types_formats_and_extensions_are_upstreams(openapi: OpenAPI) -> None:
    container = _v3_schema(openapi, "api/v1", f"{CORE}.Container")
    assert container["required"] == ["name"]
    assert container["properties"]["command"] == {
        "type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic",
    }
    assert container["properties"]["ports"] == {
        "type": "array",
        "items": _v3_ref(f"{CORE}.ContainerPort"),
        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "containerPort",
        "x-kubernetes-patch-strategy": "merge",
    }
    spec = _v3_schema(openapi, "api/v1", f"{CORE}.PodSpec")
    assert spec["required"] == ["containers"]
    assert spec["properties"]["nodeSelector"] == {
        "type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic",
    }
    assert spec["properties"]["overhead"] == {
        "type": "object", "additionalProperties": _v3_ref("io.k8s.apimachinery.pkg.api.resource.Quantity"),
    }
    assert spec["properties"]["priority"] == {"type": "integer", "format": "int32"}
    assert spec["properties"]["terminationGracePeriodSeconds"] == {"type": "integer", "format": "int64"}
    node_spec = _v3_schema(openapi, "api/v1", f"{CORE}.NodeSpec")
    assert node_spec["properties"]["unschedulable"] == {"type": "boolean"}
    taint = _v3_schema(openapi, "api/v1", f"{CORE}.Taint")
    assert taint["required"] == ["key", "effect"]
    assert taint["properties"]["timeAdded"] == _v3_ref(f"{META}.Time")
    assert _v3_schema(openapi, "api/v1", f"{META}.LabelSelector")["x-kubernetes-map-type"] == "atomic"
    lease_spec = _v3_schema(openapi, "apis/coordination.k8s.io/v1", "io.k8s.api.coordination.v1.LeaseSpec")
    assert lease_spec["properties"]["renewTime"] == _v3_ref(f"{META}.MicroTime")
    pdb_spec = _v3_schema(openapi, "apis/policy/v1", "io.k8s.api.policy.v1.PodDisruptionBudgetSpec")
    int_or_string = _v3_ref("io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    assert pdb_spec["properties"]["minAvailable"] == int_or_string
    assert pdb_spec["properties"]["selector"]["x-kubernetes-patch-strategy"] == "replace"
    overhead = _v3_schema(openapi, "apis/node.k8s.io/v1", "io.k8s.api.node.v1.Overhead")
    assert "podFixed" in overhead["properties"]


def test_apimachinery_scalars_are_upstreams(openapi: OpenAPI) -> None:
    definitions = openapi.v2["definitions"]
    assert definitions[f"{META}.Time"] == {"type": "string", "format": "date-time"}
    assert definitions[f"{META}.MicroTime"] == {"type": "string", "format": "date-time"}
    assert definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "type": "string", "format": "int-or-string",
    }
    assert definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"] == {"type": "string"}
    assert _v3_schema(openapi, "api/v1", "io.k8s.apimachinery.pkg.api.resource.Quantity") == {
        "oneOf": [{"type": "string"}, {"type": "number"}],
    }


def test_a_type_shared_by_kinds_of_two_groups_keeps_its_upstream_package(openapi: OpenAPI) -> None:
    replica_set_spec = _v3_schema(openapi, "apis/apps/v1", "io.k8s.api.apps.v1.ReplicaSetSpec")
    assert replica_set_spec["properties"]["template"] == _v3_ref(f"{CORE}.PodTemplateSpec")
    assert replica_set_spec["properties"]["selector"] == _v3_ref(f"{META}.LabelSelector")
    scheduling = _v3_schema(openapi, "apis/node.k8s.io/v1", "io.k8s.api.node.v1.Scheduling")
    assert scheduling["properties"]["tolerations"]["items"] == _v3_ref(f"{CORE}.Toleration")


RESOURCE = "io.k8s.api.resource.v1"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def test_dra_schemas_are_upstreams(openapi: OpenAPI) -> None:
    """resource.k8s.io/v1: quantities as Quantity, opaque parameters as RawExtension, upstream's required
    fields and list types, and the pod's claim fields under core/v1's names."""
    gv = "apis/resource.k8s.io/v1"
    capacity = _v3_schema(openapi, gv, f"{RESOURCE}.DeviceCapacity")
    assert capacity["required"] == ["value"]
    assert capacity["properties"]["value"] == _v3_ref(QUANTITY)
    policy = _v3_schema(openapi, gv, f"{RESOURCE}.CapacityRequestPolicy")
    assert policy["properties"]["validValues"]["items"] == _v3_ref(QUANTITY)
    assert _v3_schema(openapi, gv, f"{RESOURCE}.Counter")["properties"]["value"] == _v3_ref(QUANTITY)
    requirements = _v3_schema(openapi, gv, f"{RESOURCE}.CapacityRequirements")
    assert requirements["properties"]["requests"] == {
        "type": "object", "additionalProperties": _v3_ref(QUANTITY)}
    result = _v3_schema(openapi, gv, f"{RESOURCE}.DeviceRequestAllocationResult")
    assert result["required"] == ["request", "driver", "pool", "device"]
    assert result["properties"]["consumedCapacity"]["additionalProperties"] == _v3_ref(QUANTITY)
    assert result["properties"]["shareID"] == {"type": "string"}
    opaque = _v3_schema(openapi, gv, f"{RESOURCE}.OpaqueDeviceConfiguration")
    assert opaque["required"] == ["driver", "parameters"]
    assert opaque["properties"]["parameters"] == _v3_ref("io.k8s.apimachinery.pkg.runtime.RawExtension")
    status = _v3_schema(openapi, gv, f"{RESOURCE}.ResourceClaimStatus")
    assert status["properties"]["reservedFor"] == {
        "type": "array", "items": _v3_ref(f"{RESOURCE}.ResourceClaimConsumerReference"),
        "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge",
    }
    slice_spec = _v3_schema(openapi, gv, f"{RESOURCE}.ResourceSliceSpec")
    assert slice_spec["required"] == ["driver", "pool"]
    assert slice_spec["properties"]["nodeSelector"] == _v3_ref(f"{CORE}.NodeSelector")
    spec = _v3_schema(openapi, "api/v1", f"{CORE}.PodSpec")
    assert spec["properties"]["resourceClaims"]["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    requirements = _v3_schema(openapi, "api/v1", f"{CORE}.ResourceRequirements")
    assert requirements["properties"]["claims"]["items"] == _v3_ref(f"{CORE}.ResourceClaim")
    assert _v3_schema(openapi, "api/v1", f"{CORE}.ResourceClaim")["required"] == ["name"]


def test_pod_group_is_described_in_each_of_its_groups(openapi: OpenAPI) -> None:
    upstream = _v3_schema(
        openapi, "apis/scheduling.k8s.io/v1alpha3", "io.k8s.api.scheduling.v1alpha3.PodGroup"
    )
    assert upstream["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.k8s.io", "kind": "PodGroup", "version": "v1alpha3"}
    ]
    coscheduling = _v3_schema(
        openapi, "apis/scheduling.x-k8s.io/v1alpha1", "io.x-k8s.scheduling.v1alpha1.PodGroup"
    )
    assert coscheduling["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.x-k8s.io", "kind": "PodGroup", "version": "v1alpha1"}
    ]
    assert coscheduling["properties"]["spec"] == _v3_ref("io.x-k8s.scheduling.v1alpha1.PodGroupSpec")


def _all_refs_resolve(document: dict[str, Any], prefix: str, definitions: dict[str, Any]) -> None:
    text = json.dumps(document)
    assert f'"$ref": "{prefix}' in text
    for name in refs_of(document):
        assert name in definitions, name
    assert "#/definitions/" not in text or prefix == "#/definitions/"
    assert "#/components/" not in text or prefix == "#/components/schemas/"


def test_every_ref_resolves(openapi: OpenAPI) -> None:
    _all_refs_resolve(openapi.v2, "#/definitions/", openapi.v2["definitions"])
    for document in openapi.v3.values():
        _all_refs_resolve(document, "#/components/schemas/", document["components"]["schemas"])


def test_every_kind_has_its_schema_in_each_group_version(openapi: OpenAPI) -> None:
    for gv in group_versions():
        schemas = openapi.v3[gv.path]["components"]["schemas"]
        kinds = {
            (entry["group"], entry["version"], entry["kind"])
            for schema in schemas.values()
            for entry in schema.get("x-kubernetes-group-version-kind", ())
        }
        for resource in gv.resources:
            assert (gv.group, gv.version, resource.kind) in kinds, (gv.name, resource.kind)
            assert (gv.group, gv.version, f"{resource.kind}List") in kinds, (gv.name, resource.kind)


def test_every_resource_and_subresource_has_its_operations(openapi: OpenAPI) -> None:
    for gv in group_versions():
        paths = openapi.v3[gv.path]["paths"]
        for resource in gv.resources:
            scope = "/namespaces/{namespace}" if resource.namespaced else ""
            collection = f"/{gv.path}{scope}/{resource.plural}"
            assert set(paths[collection]) == {"get", "post", "delete", "parameters"}
            assert set(paths[f"{collection}/{{name}}"]) == {"get", "put", "patch", "delete", "parameters"}
            for sub in resource.subresources:
                methods = set(paths[f"{collection}/{{name}}/{sub.name}"]) - {"parameters"}
                assert methods == ({"get", "put", "patch"} if sub.name == "status" else {"post"}), sub
    assert len({
        operation["operationId"]
        for item in openapi.v2["paths"].values()
        for key, operation in item.items() if key != "parameters"
    }) == sum(len(item) - 1 for item in openapi.v2["paths"].values())


def test_pod_patch_operation_is_upstreams(openapi: OpenAPI) -> None:
    patch = openapi.v3["api/v1"]["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["operationId"] == "patchCoreV1NamespacedPod"
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod", "version": "v1"}
    assert [p["name"] for p in patch["parameters"]] == ["dryRun", "fieldManager", "fieldValidation", "force"]
    assert all(p["in"] == "query" for p in patch["parameters"])
    assert list(patch["requestBody"]["content"]) == list(PATCH_TYPES)
    assert patch["requestBody"]["content"][PATCH_TYPES[0]]["schema"] == _v3_ref(f"{META}.Patch")
    v2_patch = openapi.v2["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert v2_patch["consumes"] == list(PATCH_TYPES)
    assert v2_patch["parameters"][0] == {
        "name": "body", "in": "body", "required": True, "schema": {"$ref": f"#/definitions/{META}.Patch"},
    }


def test_pod_subresource_operations_are_upstreams(openapi: OpenAPI) -> None:
    paths = openapi.v3["api/v1"]["paths"]
    binding = paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
    assert binding["operationId"] == "createCoreV1NamespacedPodBinding"
    assert binding["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Binding", "version": "v1"}
    assert binding["requestBody"]["content"]["application/json"]["schema"] == _v3_ref(f"{CORE}.Binding")
    eviction = paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert eviction["operationId"] == "createCoreV1NamespacedPodEviction"
    eviction_kind = {"group": "policy", "kind": "Eviction", "version": "v1"}
    assert eviction["x-kubernetes-group-version-kind"] == eviction_kind
    status = paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]
    assert status["put"]["operationId"] == "replaceCoreV1NamespacedPodStatus"
    listing = paths["/api/v1/pods"]["get"]
    assert listing["operationId"] == "listCoreV1PodForAllNamespaces"
    assert "watch" in [p["name"] for p in listing["parameters"]]


def _supports_query_param(document: dict[str, Any], group: str, version: str, kind: str, param: str) -> bool:
    """cli-runtime's supportsQueryParamV3: the first PATCH operation of the GVK decides (map order is
    random in Go, so every such operation must have the parameter)."""
    wanted = {"group": group, "kind": kind, "version": version}
    verdicts = [
        any(p.get("name") == param and p.get("in") == "query" for p in item["patch"].get("parameters", ()))
        for item in document["paths"].values()
        if "patch" in item and item["patch"].get("x-kubernetes-group-version-kind") == wanted
    ]
    assert verdicts, f"Path not found for GVK {wanted}"
    return all(verdicts)


def test_kubectl_finds_server_side_field_validation_for_every_kind(openapi: OpenAPI) -> None:
    for gv in group_versions():
        document = openapi.v3[gv.path]
        for resource in gv.resources:
            assert _supports_query_param(document, gv.group, gv.version, resource.kind, "fieldValidation")
    without = json.loads(json.dumps(openapi.v3["api/v1"]).replace('"fieldValidation"', '"other"'))
    assert not _supports_query_param(without, "", "v1", "Pod", "fieldValidation")


def test_v3_index_names_each_document_by_its_hash(openapi: OpenAPI) -> None:
    index = openapi.document("/openapi/v3")
    assert index is not None
    paths = json.loads(index.body)["paths"]
    assert set(paths) == {gv.path for gv in group_versions()}
    for gv_path, entry in paths.items():
        document = openapi.document(f"/openapi/v3/{gv_path}")
        assert document is not None
        assert entry["serverRelativeURL"] == f"/openapi/v3/{gv_path}?hash={document.digest}"
        assert json.loads(document.body)["openapi"] == "3.0.0"
    v2 = openapi.document("/openapi/v2")
    assert v2 is not None
    assert json.loads(v2.body)["swagger"] == "2.0"
    assert openapi.document("/openapi/v3/apis/apps/v2") is None
    assert set(openapi.paths()) == {"/openapi/v2", "/openapi/v3", *(f"/openapi/v3/{gv}" for gv in paths)}


def test_every_kind_of_the_kinds_table_is_in_the_swagger_document(openapi: OpenAPI) -> None:
    gvks = {
        (entry["group"], entry["version"], entry["kind"])
        for schema in openapi.v2["definitions"].values()
        for entry in schema.get("x-kubernetes-group-version-kind", ())
    }
    for kind in KINDS:
        for api_version in kind.api_versions:
            group, _, version = api_version.rpartition("/")
            assert (group, version, kind.name) in gvks


def test_required_fields_name_real_fields() -> None:
    for message_name, fields in REQUIRED.items():
        message = (objects_pb2.DESCRIPTOR.message_types_by_name.get(message_name)
                   or scheduling_v1alpha2_pb2.DESCRIPTOR.message_types_by_name[message_name])
        json_names = {field.json_name for field in message.fields}
        assert set(fields) <= json_names, message_name
