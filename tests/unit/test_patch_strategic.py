"""Strategic merge patch applied: apimachinery's own cases on its test type, stated as a test schema of
the same protocol the served kinds' messages answer, then the served kinds through their descriptors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.api import errors, objects_pb2
from cluster.api.convert import to_dict
from cluster.apiserver.http.patch.strategic import (
    FieldSchema,
    PatchSchema,
    Shape,
    apply_strategic_merge_patch,
    message_schema,
)
from tests import builders


class _TableSchema:
    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[str, FieldSchema] = {}

    def field(self, key: str) -> FieldSchema | None:
        return self.fields.get(key)


_SCALAR = FieldSchema(Shape.SCALAR)
#: apimachinery's MergeItem and RetainKeysMergeItem, with their fields' tags.
MERGE_ITEM = _TableSchema("MergeItem")
_RETAIN_KEYS_ITEM = _TableSchema("RetainKeysMergeItem")
MERGE_ITEM.fields.update(
    {
        "name": _SCALAR,
        "value": _SCALAR,
        "other": _SCALAR,
        "mergingList": FieldSchema(Shape.LIST, MERGE_ITEM, "merge", "name"),
        "nonMergingList": FieldSchema(Shape.LIST, MERGE_ITEM),
        "mergingIntList": FieldSchema(Shape.LIST, None, "merge"),
        "nonMergingIntList": FieldSchema(Shape.LIST),
        "mergeItemPtr": FieldSchema(Shape.STRUCT, MERGE_ITEM, "merge", "name"),
        "simpleMap": FieldSchema(Shape.MAP),
        "replacingItem": FieldSchema(Shape.STRUCT, _TableSchema("RawExtension"), "replace"),
        "retainKeysMap": FieldSchema(Shape.STRUCT, _RETAIN_KEYS_ITEM, "retainKeys"),
        "retainKeysMergingList": FieldSchema(Shape.LIST, MERGE_ITEM, "merge,retainKeys", "name"),
    }
)
_RETAIN_KEYS_ITEM.fields.update(
    {
        "name": _SCALAR,
        "value": _SCALAR,
        "other": _SCALAR,
        "simpleMap": FieldSchema(Shape.MAP),
        "mergingIntList": FieldSchema(Shape.LIST, None, "merge"),
        "mergingList": FieldSchema(Shape.LIST, MERGE_ITEM, "merge", "name"),
        "nonMergingList": FieldSchema(Shape.LIST, MERGE_ITEM),
    }
)

_CASES = yaml.safe_load((Path(__file__).parent / "strategic_merge_patch_cases.yaml").read_text())


def _apply(original: dict[str, Any], patch: dict[str, Any], schema: PatchSchema) -> dict[str, Any]:
    return apply_strategic_merge_patch(original, patch, schema)


@pytest.mark.parametrize("case", _CASES, ids=[case["description"] for case in _CASES])
def test_upstream_cases(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(errors.ApiError) as raised:
            _apply(case["original"], case["patch"], MERGE_ITEM)
        assert case["error"] in raised.value.message
        return
    assert _apply(case["original"], case["patch"], MERGE_ITEM) == case["result"]


def test_neither_the_original_nor_the_patch_is_changed() -> None:
    original = {"mergingList": [{"name": "a", "value": "1"}], "simpleMap": {"k": "v"}}
    patch = {"mergingList": [{"name": "a", "value": None}, {"name": "b"}], "simpleMap": {"k": None}}
    before = yaml.safe_load(yaml.safe_dump([original, patch]))
    assert _apply(original, patch, MERGE_ITEM) == {
        "mergingList": [{"name": "a"}, {"name": "b"}],
        "simpleMap": {},
    }
    assert [original, patch] == before


@pytest.mark.parametrize(
    ("original", "patch", "error", "message"),
    [
        # Directives of the wrong form are the request's fault: 400.
        (
            {},
            {"$deleteFromPrimitiveListx/mergingIntList": [1]},
            errors.BadRequest,
            "invalid patch format of primitive list",
        ),
        (
            {"mergingList": []},
            {"$setElementOrderx/mergingList": []},
            errors.BadRequest,
            "invalid patch format of setElementOrder list",
        ),
        ({}, {"$retainKeys": "name"}, errors.BadRequest, "invalid patch format of retainKeys"),
        (
            {},
            {"$retainKeys": ["name"], "value": "x"},
            errors.BadRequest,
            "invalid patch format of retainKeys",
        ),
        # A list of lists: kube-apiserver's generic 422.
        (
            {"mergingIntList": [[1]]},
            {"mergingIntList": [[2]]},
            errors.Invalid,
            "the server rejected our request due to an error in our request",
        ),
        # The rest pass apimachinery's message on as a 500.
        (
            {"mergingList": [{"name": "a"}]},
            {"mergingList": [{"value": "b"}]},
            errors.ApiError,
            "map: map[value:b] does not contain declared merge key: name",
        ),
        (
            {"mergingList": [{"name": "a"}]},
            {"mergingList": [{"name": "a", "$patch": "merge"}]},
            errors.ApiError,
            "merging lists cannot yet be specified in the patch",
        ),
        (
            {"simpleMap": {"a": "b"}},
            {"simpleMap": {"$patch": "keep"}},
            errors.ApiError,
            "unknown patch type: keep in map: map[$patch:keep]",
        ),
        (
            {"mergingList": [{"name": "a"}]},
            {"mergingList": ["b"]},
            errors.ApiError,
            "list element types are not identical",
        ),
    ],
)
def test_malformed_patches_fail_as_kube_apiserver_answers(
    original: dict[str, Any], patch: dict[str, Any], error: type[errors.ApiError], message: str
) -> None:
    with pytest.raises(errors.ApiError) as raised:
        _apply(original, patch, MERGE_ITEM)
    assert type(raised.value) is error
    assert message in raised.value.message


# ------------------------------------------------------------------------------------ served kinds

_POD = message_schema(objects_pb2.Pod.DESCRIPTOR)


def _pod(**spec: Any) -> dict[str, Any]:
    return to_dict(builders.pod("web", spec=spec))


def test_containers_merge_by_name_and_their_env_and_ports_by_their_keys() -> None:
    original = _pod(
        containers=[
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
            },
            {"name": "side", "image": "side:1"},
        ]
    )
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "app:2",
                    "env": [{"name": "B", "value": "3"}],
                    "ports": [{"containerPort": 443}],
                }
            ]
        }
    }
    containers = _apply(original, patch, _POD)["spec"]["containers"]
    # Without $setElementOrder an added item goes before the ones the object alone has, as upstream.
    assert containers == [
        {
            "name": "app",
            "image": "app:2",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
            "ports": [{"containerPort": 443}, {"containerPort": 80, "protocol": "TCP"}],
        },
        {"name": "side", "image": "side:1"},
    ]


def test_a_container_is_deleted_by_its_name_and_args_are_replaced_whole() -> None:
    original = _pod(containers=[{"name": "app", "args": ["a", "b"]}, {"name": "side"}])
    patch = {"spec": {"containers": [{"name": "side", "$patch": "delete"}, {"name": "app", "args": ["c"]}]}}
    assert _apply(original, patch, _POD)["spec"]["containers"] == [{"name": "app", "args": ["c"]}]


def test_tolerations_are_replaced_whole_and_labels_merge_key_by_key() -> None:
    original = to_dict(
        builders.pod(
            "web",
            labels={"app": "web", "tier": "front"},
            spec={"tolerations": [{"key": "a", "operator": "Exists"}]},
        )
    )
    patch = {
        "metadata": {"labels": {"tier": None, "track": "canary"}},
        "spec": {"tolerations": [{"key": "b", "operator": "Exists"}]},
    }
    patched = _apply(original, patch, _POD)
    assert patched["metadata"]["labels"] == {"app": "web", "track": "canary"}
    assert patched["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_cordon_and_taint_a_node() -> None:
    original = to_dict(builders.node("n1", taints=[{"key": "a", "effect": "NoSchedule"}], ready="True"))
    patch = {
        "spec": {"unschedulable": True, "taints": [{"key": "b", "effect": "NoExecute"}]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    patched = _apply(original, patch, message_schema(objects_pb2.Node.DESCRIPTOR))
    assert patched["spec"] == {"unschedulable": True, "taints": [{"key": "b", "effect": "NoExecute"}]}
    assert patched["status"]["conditions"] == [{"type": "Ready", "status": "False"}]


def test_scheduling_gates_are_removed_by_name_and_a_condition_merges_by_type() -> None:
    original = _pod(schedulingGates=[{"name": "a"}, {"name": "b"}])
    original["status"] = {
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    }
    patch = {
        "spec": {
            "$setElementOrder/schedulingGates": [{"name": "b"}],
            "schedulingGates": [{"name": "a", "$patch": "delete"}],
        },
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
    }
    patched = _apply(original, patch, _POD)
    assert patched["spec"]["schedulingGates"] == [{"name": "b"}]
    assert patched["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "True", "reason": "Unschedulable"}
    ]


def test_a_disruption_budgets_selector_is_replaced_whole() -> None:
    original = to_dict(
        builders.pdb("p", min_available=1, selector={"matchLabels": {"app": "a", "tier": "b"}})
    )
    patch = {"spec": {"selector": {"matchLabels": {"app": "c"}}}}
    patched = _apply(original, patch, message_schema(objects_pb2.PodDisruptionBudget.DESCRIPTOR))
    assert patched["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "c"}}}


def test_an_unknown_field_goes_to_the_object_for_the_decoder_to_judge() -> None:
    patched = _apply(_pod(), {"spec": {"bogus": {"x": 1}}, "extra": [1]}, _POD)
    assert patched["spec"]["bogus"] == {"x": 1}
    assert patched["extra"] == [1]


def test_an_unknown_field_that_both_hold_as_objects_is_apimachinerys_error() -> None:
    original = _pod()
    original["spec"]["bogus"] = {"x": 1}
    with pytest.raises(errors.ApiError) as raised:
        _apply(original, {"spec": {"bogus": {"y": 2}}}, _POD)
    assert raised.value.message == 'unable to find api field in struct PodSpec for the json field "bogus"'


def test_deleting_from_an_empty_ordered_list() -> None:
    patch = {
        "$setElementOrder/mergingList": [{"name": "a"}],
        "mergingList": [{"name": "a"}, {"name": "b", "$patch": "delete"}],
    }
    assert _apply({"mergingList": []}, patch, MERGE_ITEM) == {"mergingList": [{"name": "a"}]}


def test_long_lists_merge_in_linear_time() -> None:
    # apimachinery scans lists for every item; a patch of many items must not hold the server for long.
    count = 20000
    original = {"mergingList": [{"name": str(i)} for i in range(count)], "mergingIntList": list(range(count))}
    patch = {
        "$setElementOrder/mergingList": [{"name": str(i)} for i in reversed(range(count))],
        "mergingList": [{"name": str(i), "value": "x"} for i in reversed(range(0, count, 2))],
        "mergingIntList": list(range(count // 2, count + count // 2)),
    }
    patched = _apply(original, patch, MERGE_ITEM)
    assert [item["name"] for item in patched["mergingList"]] == [str(i) for i in reversed(range(count))]
    assert patched["mergingIntList"][:2] == [0, 1] and len(patched["mergingIntList"]) == count + count // 2
