"""Discovery documents: entries pinned to kube-apiserver's, every served kind and subresource present in
both the aggregated and the unaggregated documents (and the two agreeing as client-go reads them), and the
Accept negotiation that picks between them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from cluster.api.kinds import KINDS
from cluster.apiserver.http.discovery import (
    AGGREGATED_CONTENT_TYPE,
    Discovery,
    aggregated_discovery,
    aggregated_requested,
    api_group_list,
    api_resource_list,
    api_versions,
    storage_version_hash,
)
from cluster.apiserver.http.served import group_versions, served_groups, version_priority

#: client-go's discovery Accept headers (discovery_client.go: AcceptV2, AcceptV2NoPeer, AcceptV1).
V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2_NO_PEER = f"{V2};profile=nopeer"
V1 = "application/json"


def _resource_list(group_version: str) -> dict[str, Any]:
    version = next(gv for gv in group_versions() if gv.name == group_version)
    return api_resource_list(version)


def _entry(group_version: str, name: str) -> dict[str, Any]:
    return next(r for r in _resource_list(group_version)["resources"] if r["name"] == name)


@pytest.mark.parametrize(
    ("group", "version", "kind", "upstream"),
    [
        ("", "v1", "Pod", "xPOwRZ+Yhw8="),
        ("", "v1", "Node", "XwShjMxG9Fs="),
        ("apps", "v1", "ReplicaSet", "P1RzHs8/mWQ="),
        ("coordination.k8s.io", "v1", "Lease", "gqkMMb/YqFM="),
        ("policy", "v1", "PodDisruptionBudget", "EVWiDmWqyJw="),
    ],
)
def test_storage_version_hash_is_upstreams(group: str, version: str, kind: str, upstream: str) -> None:
    assert storage_version_hash(group, version, kind) == upstream


def test_api_versions_names_the_core_version_and_the_server_address() -> None:
    assert api_versions("10.0.0.1:6443") == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}],
    }


def test_api_group_list_prefers_the_stable_version() -> None:
    groups = {group["name"]: group for group in api_group_list()["groups"]}
    assert "" not in groups
    assert groups["scheduling.k8s.io"] == {
        "name": "scheduling.k8s.io",
        "versions": [
            {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"},
            {"groupVersion": "scheduling.k8s.io/v1alpha3", "version": "v1alpha3"},
            {"groupVersion": "scheduling.k8s.io/v1alpha2", "version": "v1alpha2"},
        ],
        "preferredVersion": {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"},
    }
    assert groups["coordination.k8s.io"]["preferredVersion"]["version"] == "v1"
    assert set(groups) == {
        "apps", "coordination.k8s.io", "events.k8s.io", "node.k8s.io", "policy", "resource.k8s.io",
        "scheduling.k8s.io", "scheduling.x-k8s.io", "storage.k8s.io",
    }
    assert groups["resource.k8s.io"]["preferredVersion"] == {
        "groupVersion": "resource.k8s.io/v1", "version": "v1"}


def test_versions_sort_as_kubernetes_prefers_them() -> None:
    versions = ["v1alpha1", "v2", "v1beta2", "v1", "v1beta1", "foo", "v1alpha3"]
    assert sorted(versions, key=version_priority) == [
        "v2", "v1", "v1beta2", "v1beta1", "v1alpha3", "v1alpha1", "foo",
    ]


def test_pods_entry_is_upstreams() -> None:
    assert _entry("v1", "pods") == {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["po"],
        "categories": ["all"],
        "storageVersionHash": "xPOwRZ+Yhw8=",
    }


@pytest.mark.parametrize(
    ("group_version", "name", "entry"),
    [
        ("v1", "pods/binding", {"name": "pods/binding", "singularName": "", "namespaced": True,
                                "kind": "Binding", "verbs": ["create"]}),
        ("v1", "pods/eviction", {"name": "pods/eviction", "singularName": "", "namespaced": True,
                                 "group": "policy", "version": "v1", "kind": "Eviction",
                                 "verbs": ["create"]}),
        ("v1", "pods/status", {"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
                               "verbs": ["get", "patch", "update"]}),
        ("v1", "nodes/status", {"name": "nodes/status", "singularName": "", "namespaced": False,
                                "kind": "Node", "verbs": ["get", "patch", "update"]}),
        ("resource.k8s.io/v1", "resourceclaims/status", {
            "name": "resourceclaims/status", "singularName": "", "namespaced": True, "kind": "ResourceClaim",
            "verbs": ["get", "patch", "update"]}),
    ],
)
def test_subresource_entries_are_upstreams(group_version: str, name: str, entry: dict[str, Any]) -> None:
    assert _entry(group_version, name) == entry


def test_every_kind_is_served_in_each_of_its_versions_with_its_status_subresource() -> None:
    for kind in KINDS:
        for api_version in kind.api_versions:
            names = {entry["name"] for entry in _resource_list(api_version)["resources"]}
            assert kind.plural in names, (kind.name, api_version)
            has_status = "status" in kind.message.DESCRIPTOR.fields_by_name
            assert (f"{kind.plural}/status" in names) == has_status, (kind.name, api_version)
    assert {"namespaces/status", "resourcequotas/status"} <= {
        entry["name"] for entry in _resource_list("v1")["resources"]
    }
    assert _entry("scheduling.x-k8s.io/v1alpha1", "podgroups/status")["kind"] == "PodGroup"
    assert _entry("policy/v1", "poddisruptionbudgets/status")["kind"] == "PodDisruptionBudget"
    leases = _resource_list("coordination.k8s.io/v1")["resources"]
    assert "leases/status" not in {entry["name"] for entry in leases}


def test_resource_k8s_io_serves_the_dra_kinds_with_upstreams_scope() -> None:
    entries = {entry["name"]: entry for entry in _resource_list("resource.k8s.io/v1")["resources"]}
    assert set(entries) == {
        "deviceclasses", "resourceslices", "resourceclaims", "resourceclaims/status",
        "resourceclaimtemplates",
    }
    assert {name: entries[name]["namespaced"] for name in entries if "/" not in name} == {
        "deviceclasses": False, "resourceslices": False, "resourceclaims": True,
        "resourceclaimtemplates": True,
    }
    assert entries["resourceclaims"]["kind"] == "ResourceClaim"
    assert entries["resourceclaims"]["singularName"] == "resourceclaim"


def test_storage_kinds_are_served_with_upstreams_scope_and_short_names() -> None:
    storage = {entry["name"]: entry for entry in _resource_list("storage.k8s.io/v1")["resources"]}
    assert set(storage) == {"storageclasses", "csinodes", "csidrivers", "csistoragecapacities"}
    assert {name: entry["namespaced"] for name, entry in storage.items()} == {
        "storageclasses": False, "csinodes": False, "csidrivers": False, "csistoragecapacities": True,
    }
    assert storage["storageclasses"]["shortNames"] == ["sc"]
    assert _entry("v1", "persistentvolumes")["shortNames"] == ["pv"]
    assert _entry("v1", "persistentvolumes")["namespaced"] is False
    assert _entry("v1", "persistentvolumeclaims")["shortNames"] == ["pvc"]
    assert _entry("v1", "persistentvolumeclaims")["namespaced"] is True
    assert _entry("v1", "persistentvolumeclaims/status")["kind"] == "PersistentVolumeClaim"
    assert _entry("v1", "persistentvolumes/status")["kind"] == "PersistentVolume"


def test_events_are_served_in_events_k8s_io_stored_as_core_events() -> None:
    entry = _entry("events.k8s.io/v1", "events")
    assert entry["kind"] == "Event"
    assert entry["shortNames"] == ["ev"]
    assert entry["storageVersionHash"] == _entry("v1", "events")["storageVersionHash"]


def test_the_all_category_holds_upstreams_workloads() -> None:
    in_all = {
        entry["name"]
        for version in group_versions()
        for entry in api_resource_list(version)["resources"]
        if "all" in entry.get("categories", ())
    }
    assert in_all == {"pods", "services", "replicasets", "statefulsets", "replicationcontrollers"}


def test_aggregated_core_group_pins_pods() -> None:
    document = aggregated_discovery(tuple(g for g in served_groups() if not g.name))
    assert document["kind"] == "APIGroupDiscoveryList"
    assert document["apiVersion"] == "apidiscovery.k8s.io/v2"
    [core] = document["items"]
    assert core["metadata"] == {"creationTimestamp": None}
    [v1] = core["versions"]
    assert v1["version"] == "v1"
    assert v1["freshness"] == "Current"
    pods = next(r for r in v1["resources"] if r["resource"] == "pods")
    assert pods == {
        "resource": "pods",
        "responseKind": {"group": "", "version": "", "kind": "Pod"},
        "scope": "Namespaced",
        "singularResource": "pod",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["po"],
        "categories": ["all"],
        "subresources": [
            {"subresource": "binding", "responseKind": {"group": "", "version": "", "kind": "Binding"},
             "verbs": ["create"]},
            {"subresource": "eviction",
             "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"}, "verbs": ["create"]},
            {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Pod"},
             "verbs": ["get", "patch", "update"]},
        ],
    }
    nodes = next(r for r in v1["resources"] if r["resource"] == "nodes")
    assert nodes["scope"] == "Cluster"


def _split(document: dict[str, Any]) -> dict[str, list[tuple[str, str, bool, tuple[str, ...]]]]:
    """client-go's SplitGroupsAndResources: each group-version's resources as the unaggregated list
    would name them (name, kind, namespaced, verbs)."""
    by_gv: dict[str, list[tuple[str, str, bool, tuple[str, ...]]]] = {}
    for group in document["items"]:
        name = group["metadata"].get("name", "")
        for version in group["versions"]:
            gv = f"{name}/{version['version']}" if name else version["version"]
            entries = by_gv.setdefault(gv, [])
            for resource in version["resources"]:
                assert resource["responseKind"]["kind"], resource
                namespaced = resource["scope"] == "Namespaced"
                entries.append((resource["resource"], resource["responseKind"]["kind"], namespaced,
                                tuple(resource["verbs"])))
                for sub in resource.get("subresources", ()):
                    sub_name = f"{resource['resource']}/{sub['subresource']}"
                    entries.append((sub_name, sub["responseKind"]["kind"], namespaced, tuple(sub["verbs"])))
    return by_gv


def test_aggregated_and_unaggregated_documents_agree() -> None:
    core = tuple(g for g in served_groups() if not g.name)
    named = tuple(g for g in served_groups() if g.name)
    split = _split(aggregated_discovery(core)) | _split(aggregated_discovery(named))
    unaggregated = {
        version.name: [
            (r["name"], r["kind"], r["namespaced"], tuple(r["verbs"]))
            for r in api_resource_list(version)["resources"]
        ]
        for version in group_versions()
    }
    assert split == unaggregated
    assert set(split["scheduling.k8s.io/v1alpha3"]) >= {("podgroups", "PodGroup", True, (
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"))}
    assert any(entry[0] == "podgroups" for entry in split["scheduling.x-k8s.io/v1alpha1"])


@pytest.mark.parametrize(
    ("accept", "aggregated"),
    [
        (f"{V2},{V1}", True),
        (f"{V2_NO_PEER},{V2},{V1}", True),
        (V1, False),
        ("", False),
        ("*/*", False),
        ("application/json, */*", False),
        (f"{V1};q=0.5, {V2}", True),
        (f"{V2};q=0.5, {V1}", False),
        (f"{V2};q=0,{V1}", False),
        ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", False),
        ("application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
         "application/json", False),
        (f"{V2};profile=other,{V1}", False),
        ("application/json;as=Table;v=v1;g=meta.k8s.io, application/json", False),
        (" application/json ; g=apidiscovery.k8s.io ; v=v2 ; as=APIGroupDiscoveryList ", True),
    ],
)
def test_aggregated_requested(accept: str, aggregated: bool) -> None:
    assert aggregated_requested(accept) is aggregated


def test_discovery_picks_the_document_by_path_and_accept() -> None:
    discovery = Discovery("127.0.0.1:6443")
    api = discovery.document("/api", f"{V2},{V1}")
    assert api is not None
    assert api.content_type == AGGREGATED_CONTENT_TYPE
    assert json.loads(api.body)["kind"] == "APIGroupDiscoveryList"
    plain = discovery.document("/api", V1)
    assert plain is not None
    assert plain.content_type == "application/json"
    assert json.loads(plain.body)["kind"] == "APIVersions"
    resources = discovery.document("/api/v1", f"{V2},{V1}")
    assert resources is not None
    assert json.loads(resources.body)["kind"] == "APIResourceList"
    group = discovery.document("/apis/apps", V1)
    assert group is not None
    assert json.loads(group.body)["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    assert discovery.document("/apis/apps/v2", V1) is None
    assert api.etag == f'"{hashlib.sha512(api.body).hexdigest().upper()}"'
    assert "/apis/events.k8s.io/v1" in discovery.paths()
