"""managedFields as kube-apiserver keeps them and server-side apply as it answers, from k8s.io/apimachinery's
util/managedfields tests (fieldmanager_test, managedfields_test, capmanagers_test, versioncheck, stripmeta,
conflict_test), on Pods and Nodes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import convert, errors, objects_pb2
from cluster.apiserver.http.apply import managedfields
from cluster.apiserver.http.apply.apply import conflict_error, manager_of, server_side_apply
from cluster.apiserver.http.apply.fieldpath import PathElement
from cluster.apiserver.http.apply.managedfields import record_update
from tests import builders

POD = objects_pb2.Pod.DESCRIPTOR
CSA = "kubectl-client-side-apply"
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
            "spec": spec}


def entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["metadata"].get("managedFields", []))


def owners(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e.get("manager", ""), e["operation"]): e["fieldsV1"] for e in entries(obj)}


def update(live: dict[str, Any], manager: str, now: str, subresource: str = "",
           **changes: Any) -> dict[str, Any]:
    """``live`` with top-level ``changes`` written by ``manager``."""
    return record_update(live, {**live, **changes}, manager, "v1", subresource, now)


def apply(live: dict[str, Any] | None, applied: dict[str, Any], manager: str = "kubectl", force: bool = False,
          now: str = T1) -> dict[str, Any]:
    return server_side_apply(live, applied, manager, force, "v1", POD, now)


# ------------------------------------------------------------------------------------------ managers

@pytest.mark.parametrize(("param", "user_agent", "manager"), [
    ("my-controller", "kubectl/v1.37.1 (linux/amd64) kubernetes/abc", "my-controller"),
    (None, "kubectl-edit/v1.37.1 (linux/amd64) kubernetes/abc", "kubectl-edit"),
    ("", "kubectl-label/v1.37.1 (linux/amd64) kubernetes/abc", "kubectl-label"),
    (None, "OpenAPI-Generator/37.0.2/python", "OpenAPI-Generator"),
    (None, "curl", "curl"),
    (None, "", ""),
])
def test_the_manager_is_the_parameter_or_the_user_agent_s_first_token(
        param: str | None, user_agent: str, manager: str) -> None:
    assert manager_of(param, user_agent) == manager


def test_a_write_without_a_manager_is_recorded_as_unknown() -> None:
    created = record_update(None, pod(nodeName="n"), "", "v1", "", T0)
    assert [e["manager"] for e in entries(created)] == ["unknown"]


# ---------------------------------------------------------------------------------------- updates

def test_a_create_records_an_update_entry_of_the_fields_it_set() -> None:
    new = convert.to_dict(builders.typed(builders.pod("web", labels={"app": "web"}, scheduler_name="custom")))
    created = record_update(None, new, "kubectl-create", "v1", "", T0)
    [entry] = entries(created)
    assert {k: v for k, v in entry.items() if k != "fieldsV1"} == {
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0,
        "fieldsType": "FieldsV1"}
    owned = entry["fieldsV1"]
    assert owned["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert owned["f:spec"]["f:schedulerName"] == {}
    # an empty Go Pod has its containers list (null), so the create adds its items, not the list
    assert owned["f:spec"]["f:containers"] == {'k:{"name":"c"}': {".": {}, "f:name": {}}}
    assert created["spec"] == new["spec"]


def test_the_object_s_identity_is_never_owned() -> None:
    new = pod(nodeName="n")
    new["metadata"].update(uid="u", resourceVersion="5", generation=1, creationTimestamp=T0)
    created = record_update(None, new, "m", "v1", "", T0)
    assert owners(created) == {("m", "Update"): {"f:spec": {"f:nodeName": {}}}}


def test_an_update_that_changes_nothing_leaves_managed_fields_alone() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    again = record_update(created, copy.deepcopy(created), "b", "v1", "", T1)
    assert entries(again) == entries(created)


def test_an_update_takes_the_fields_it_changes_and_drops_emptied_managers() -> None:
    created = record_update(None, pod(nodeName="n", schedulerName="s"), "a", "v1", "", T0)
    changed = update(created, "b", T1, spec={"nodeName": "m", "schedulerName": "s"})
    assert owners(changed) == {("a", "Update"): {"f:spec": {"f:schedulerName": {}}},
                               ("b", "Update"): {"f:spec": {"f:nodeName": {}}}}
    taken = update(changed, "b", T2, spec={"nodeName": "m", "schedulerName": "t"})
    assert owners(taken) == {("b", "Update"): {"f:spec": {"f:nodeName": {}, "f:schedulerName": {}}}}
    assert [e["time"] for e in entries(taken)] == [T2]


def test_taking_fields_over_does_not_touch_the_previous_manager_s_time() -> None:
    created = record_update(None, pod(nodeName="n", schedulerName="s"), "a", "v1", "", T0)
    changed = update(created, "b", T1, spec={"nodeName": "m", "schedulerName": "s"})
    assert {e["manager"]: e["time"] for e in entries(changed)} == {"a": T0, "b": T1}


def test_one_entry_per_manager_operation_version_and_subresource() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    status = update(created, "a", T1, "status", status={"phase": "Running"})
    assert [(e["manager"], e.get("subresource", "")) for e in entries(status)] == [("a", ""), ("a", "status")]
    assert entries(status)[1]["fieldsV1"] == {"f:status": {".": {}, "f:phase": {}}}


def test_an_update_may_set_managed_fields_itself() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    mine = [{"manager": "someone", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:nodeName": {}}}}]
    updated = update(created, "b", T1, metadata={**created["metadata"], "managedFields": mine})
    assert owners(updated) == {("someone", "Apply"): {"f:spec": {"f:nodeName": {}}}}


@pytest.mark.parametrize("reset", [[], [{}]])
def test_an_empty_list_or_one_empty_entry_resets_managed_fields(reset: list[dict[str, Any]]) -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    updated = record_update(created, {**created, "metadata": {**created["metadata"], "managedFields": reset}},
                            "b", "v1", "", T1)
    assert "managedFields" not in updated["metadata"]


def test_invalid_managed_fields_in_an_update_keep_the_live_ones() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    bad = [{"manager": "x", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
    updated = record_update(created, {**created, "metadata": {**created["metadata"], "managedFields": bad}},
                            "b", "v1", "", T1)
    assert entries(updated) == entries(created)


def test_a_subresource_write_ignores_the_managed_fields_it_carries() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    new = {**created, "metadata": {**created["metadata"], "managedFields": []}}
    updated = record_update(created, new, "kubelet", "v1", "status", T1)
    assert entries(updated) == entries(created)


def test_more_than_ten_update_managers_merge_the_oldest_into_ancient_changes() -> None:
    obj = record_update(None, pod(), "m0", "v1", "", T0)
    for i in range(11):
        labels = {**obj["metadata"].get("labels", {}), f"l{i}": "x"}
        obj = update(obj, f"m{i:02}", f"2026-01-01T00:00:{i + 10:02}Z",
                     metadata={**obj["metadata"], "labels": labels})
    managers = [e["manager"] for e in entries(obj)]
    assert len(managers) == 10
    assert "ancient-changes" in managers and "m00" not in managers and "m01" not in managers
    ancient = next(e for e in entries(obj) if e["manager"] == "ancient-changes")
    assert ancient["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:l0": {}, "f:l1": {}}}}
    assert ancient["time"] == "2026-01-01T00:00:11Z"


@pytest.mark.parametrize(("entry", "problem"), [
    ({"manager": "m", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"},
     "operation must be `Apply` or `Update`"),
    ({"manager": "m", "operation": "Update", "fieldsType": "FieldsV1"}, "apiVersion must not be empty"),
    ({"manager": "m", "operation": "Update", "apiVersion": "v1"},
     "missing fieldsType in managed fields entry 0"),
    ({"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"},
     'invalid fieldsType "FieldsV2" in managed fields entry 0'),
    ({"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": []}}, "error decoding set"),
])
def test_malformed_entries_are_named(entry: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("`", ".")):
        managedfields.decode([entry])


def test_entries_are_ordered_by_operation_time_and_manager() -> None:
    managed = managedfields.decode([
        {"manager": "z", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1"},
        {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1"},
        {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1"},
        {"manager": "y", "operation": "Apply", "apiVersion": "v1", "time": T2, "fieldsType": "FieldsV1"},
    ])
    assert [e["manager"] for e in managedfields.encode(managed)] == ["y", "z", "a", "b"]


def test_managed_fields_survive_the_pod_message() -> None:
    created = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    message = objects_pb2.Pod()
    json_format.ParseDict(created, message)
    assert convert.to_dict(message)["metadata"]["managedFields"] == entries(created)


# ------------------------------------------------------------------------------------------- apply

def test_apply_creates_a_missing_object() -> None:
    created = apply(None, pod(nodeName="n", containers=[{"name": "c", "image": "nginx"}]))
    assert created["spec"] == {"nodeName": "n", "containers": [{"name": "c", "image": "nginx"}]}
    assert entries(created) == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}},
                                "f:nodeName": {}}},
    }]


def test_apply_after_an_update_conflicts_with_kube_s_message() -> None:
    live = record_update(None, pod(schedulerName="custom"), CSA, "v1", "", T0)
    with pytest.raises(errors.Conflict) as caught:
        apply(live, pod(schedulerName="other"))
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: '
        ".spec.schedulerName")
    assert caught.value.http_code == 409
    assert caught.value.details is not None
    assert caught.value.details.causes == (errors.StatusCause(
        "FieldManagerConflict", 'conflict with "kubectl-client-side-apply" using v1', ".spec.schedulerName"),)


def test_several_conflicts_are_listed_by_manager() -> None:
    live = record_update(None, pod(schedulerName="s", nodeName="n"), CSA, "v1", "", T0)
    live = apply(live, pod(priority=1), manager="helm")
    with pytest.raises(errors.Conflict) as caught:
        apply(live, pod(schedulerName="x", nodeName="y", priority=2))
    assert caught.value.message == (
        'Apply failed with 3 conflicts: conflicts with "helm":\n'
        "- .spec.priority\n"
        'conflicts with "kubectl-client-side-apply" using v1:\n'
        "- .spec.nodeName\n"
        "- .spec.schedulerName")
    assert caught.value.details is not None
    assert [(c.message, c.field) for c in caught.value.details.causes] == [
        ('conflict with "helm"', ".spec.priority"),
        ('conflict with "kubectl-client-side-apply" using v1', ".spec.nodeName"),
        ('conflict with "kubectl-client-side-apply" using v1', ".spec.schedulerName"),
    ]


def test_a_conflict_names_a_subresource_manager_so() -> None:
    manager = managedfields.identifier("kubelet", "Update", "v1", "status")
    error = conflict_error([(manager, (PathElement.field("status"), PathElement.field("phase")))])
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status" using v1: '
        ".status.phase")


def test_an_apply_owns_no_status_and_leaves_the_status_manager_alone() -> None:
    live = record_update(None, pod(), "a", "v1", "", T0)
    live = update(live, "kubelet", T1, "status", status={"phase": "Running"})
    applied = {key: value for key, value in pod().items() if key != "spec"}
    out = apply(live, {**applied, "status": {"phase": "Failed"}})
    assert owners(out)[("kubelet", "Update")] == {"f:status": {".": {}, "f:phase": {}}}
    assert ("kubectl", "Apply") not in owners(out)


def test_writes_own_nothing_their_strategy_resets() -> None:
    created = record_update(None, {**pod(nodeName="n"), "status": {"phase": "Pending"}}, "a", "v1", "", T0)
    assert owners(created) == {("a", "Update"): {"f:spec": {"f:nodeName": {}}}}
    status = update(created, "kubelet", T1, "status", spec={"nodeName": "other"}, status={"phase": "Running"})
    assert owners(status)[("kubelet", "Update")] == {"f:status": {"f:phase": {}}}


def test_forced_apply_takes_the_field_over() -> None:
    live = record_update(None, pod(schedulerName="custom", nodeName="n"), CSA, "v1", "", T0)
    out = apply(live, pod(schedulerName="other"), force=True)
    assert out["spec"] == {"schedulerName": "other", "nodeName": "n"}
    assert owners(out) == {("kubectl", "Apply"): {"f:spec": {"f:schedulerName": {}}},
                           ("kubectl-client-side-apply", "Update"): {"f:spec": {"f:nodeName": {}}}}


def test_an_update_after_an_apply_moves_ownership() -> None:
    live = apply(None, pod(schedulerName="a", nodeName="n"))
    updated = update(live, "kubectl-edit", T2, spec={"schedulerName": "b", "nodeName": "n"})
    assert owners(updated) == {("kubectl", "Apply"): {"f:spec": {"f:nodeName": {}}},
                               ("kubectl-edit", "Update"): {"f:spec": {"f:schedulerName": {}}}}


def test_apply_removes_what_it_no_longer_applies_unless_another_manager_owns_it() -> None:
    live = apply(None, pod(schedulerName="a", nodeName="n", priority=1))
    live = update(live, "ctl", T2, spec={**live["spec"], "priority": 2})
    out = apply(live, pod(schedulerName="a"))
    assert out["spec"] == {"schedulerName": "a", "priority": 2}


def test_a_no_op_apply_keeps_the_object_and_its_time() -> None:
    live = apply(None, pod(nodeName="n"))
    again = apply(live, pod(nodeName="n"), now=T2)
    assert again == live


def test_apply_refuses_a_missing_field_manager() -> None:
    with pytest.raises(errors.Invalid) as caught:
        apply(None, pod(), manager="")
    assert caught.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')
    assert caught.value.details == errors.StatusDetails(
        group="meta.k8s.io", kind="PatchOptions",
        causes=(errors.StatusCause("FieldValueRequired", "Required value: is required for apply patch",
                                   "fieldManager"),))


def test_apply_refuses_a_field_manager_too_long() -> None:
    with pytest.raises(errors.Invalid, match="fieldManager: Too long: must have at most 128 bytes"):
        apply(None, pod(), manager="m" * 129)


@pytest.mark.parametrize(("api_version", "kind", "printed"), [
    ("apps/v1", "Pod", "apps/v1, Kind=Pod"),
    ("v1", "Node", "/v1, Kind=Node"),
    ("", "", "/, Kind="),
])
def test_apply_refuses_another_type(api_version: str, kind: str, printed: str) -> None:
    applied = {**pod(), "apiVersion": api_version, "kind": kind}
    with pytest.raises(errors.BadRequest) as caught:
        apply(None, applied)
    assert caught.value.message == f"invalid object type: {printed}"


def test_apply_refuses_managed_fields_in_the_body() -> None:
    applied = pod()
    applied["metadata"]["managedFields"] = [{"manager": "test"}]
    with pytest.raises(errors.BadRequest, match=r"^metadata\.managedFields must be nil$"):
        apply(None, applied)


def test_apply_refuses_another_name() -> None:
    live = apply(None, pod(nodeName="n"))
    other = pod()
    other["metadata"]["name"] = "db"
    with pytest.raises(errors.BadRequest) as caught:
        apply(live, other)
    assert caught.value.message == "the name of the object (db) does not match the name on the URL (web)"
    with pytest.raises(errors.BadRequest, match="namespace of the object"):
        server_side_apply(None, pod(), "kubectl", False, "v1", POD, T1, name="web", namespace="prod")


def test_apply_strips_the_object_s_identity_from_its_fields() -> None:
    applied = {key: value for key, value in pod().items() if key != "spec"}
    applied["metadata"].update(uid="u", resourceVersion="1", generation=2, creationTimestamp=T0,
                               selfLink="/x")
    assert "managedFields" not in apply(None, applied)["metadata"]


def test_apply_to_a_node_owns_its_taints_whole() -> None:
    node = convert.to_dict(builders.node("n1", taints=[{"key": "k", "effect": "NoSchedule"}]))
    applied = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
               "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    out = server_side_apply(node, applied, "kubectl", False, "v1", objects_pb2.Node.DESCRIPTOR, T1)
    assert owners(out) == {("kubectl", "Apply"): {"f:spec": {"f:taints": {}}}}


def test_apply_drops_live_managed_fields_it_cannot_read() -> None:
    live = pod(nodeName="n")
    live["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]
    out = apply(live, pod(nodeName="n"))
    assert owners(out) == {("kubectl", "Apply"): {"f:spec": {"f:nodeName": {}}}}


def test_a_replica_set_create_owns_its_template_as_kube_records_a_deployment_s() -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}
    created = record_update(None, rs, "kubectl-create", "apps/v1", "", T0)
    nginx = {".": {}, "f:image": {}, "f:name": {}}
    assert owners(created) == {("kubectl-create", "Update"): {"f:spec": {
        "f:replicas": {}, "f:selector": {},
        "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                       "f:spec": {"f:containers": {'k:{"name":"nginx"}': nginx}}},
    }}}


def test_an_apply_to_the_status_owns_the_status_under_its_subresource() -> None:
    live = record_update(None, pod(nodeName="n"), "a", "v1", "", T0)
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"nodeName": "x"},
               "status": {"phase": "Running"}}
    out = server_side_apply(live, applied, "kubelet", False, "v1", POD, T1, subresource="status")
    [status_entry] = [e for e in entries(out) if e["manager"] == "kubelet"]
    assert status_entry["subresource"] == "status"
    assert status_entry["fieldsV1"] == {"f:status": {"f:phase": {}}}


@pytest.mark.parametrize("body", [["a"], "text", 3])
def test_an_applied_body_that_is_no_object_is_a_bad_request(body: Any) -> None:
    with pytest.raises(errors.BadRequest, match="error decoding YAML"):
        server_side_apply(None, body, "kubectl", False, "v1", POD, T1)
