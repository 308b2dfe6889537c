"""A PATCH body applied by its Content-Type, with kube-apiserver's answers for a body it cannot take and
for a patch that would move the object to another name, namespace or kind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.convert import to_dict
from cluster.apiserver.http.patch.patcher import (
    JSON_PATCH,
    MERGE_PATCH,
    PATCH_TYPES,
    STRATEGIC_MERGE_PATCH,
    apply_patch,
    patch_type,
)
from tests import builders

_POD = objects_pb2.Pod.DESCRIPTOR


def _pod() -> dict[str, Any]:
    data = to_dict(builders.pod("web", "team", labels={"app": "web"}))
    return {"apiVersion": "v1", "kind": "Pod", **data}


def _node() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", **to_dict(builders.node("n1"))}


def _apply(content_type: str, patch: Any, original: dict[str, Any] | None = None) -> dict[str, Any]:
    body = patch if isinstance(patch, bytes) else json.dumps(patch).encode()
    return apply_patch(content_type, original if original is not None else _pod(), body, _POD)


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        (JSON_PATCH, [{"op": "add", "path": "/metadata/labels/tier", "value": "front"}]),
        (MERGE_PATCH, {"metadata": {"labels": {"tier": "front"}}}),
        (STRATEGIC_MERGE_PATCH, {"metadata": {"labels": {"tier": "front"}}}),
        (STRATEGIC_MERGE_PATCH + "; charset=utf-8", {"metadata": {"labels": {"tier": "front"}}}),
    ],
)
def test_each_patch_type_applies(content_type: str, patch: Any) -> None:
    original = _pod()
    patched = _apply(content_type, patch, original)
    assert patched["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert original["metadata"]["labels"] == {"app": "web"}


def test_merge_patch_replaces_a_list_that_strategic_merge_merges() -> None:
    spec = {"spec": {"containers": [{"name": "side"}]}}
    assert [c["name"] for c in _apply(MERGE_PATCH, spec)["spec"]["containers"]] == ["side"]
    assert [c["name"] for c in _apply(STRATEGIC_MERGE_PATCH, spec)["spec"]["containers"]] == ["side", "c"]


def test_patch_type_drops_the_parameters() -> None:
    assert patch_type("application/merge-patch+json; charset=utf-8") == MERGE_PATCH
    assert patch_type(JSON_PATCH) == JSON_PATCH
    assert PATCH_TYPES == {JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH}


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/apply-patch+yaml", "", "text/plain"]
)
def test_another_content_type_is_a_415_naming_the_accepted_ones(content_type: str) -> None:
    with pytest.raises(errors.UnsupportedMediaType) as raised:
        _apply(content_type, {})
    assert raised.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
        "application/apply-patch+yaml"
    )
    assert raised.value.http_code == 415


@pytest.mark.parametrize("content_type", sorted(PATCH_TYPES))
@pytest.mark.parametrize("body", [b"{", b"", b"NaN", b"\xff"])
def test_a_body_that_is_not_json_is_a_400(content_type: str, body: bytes) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        _apply(content_type, body)
    assert raised.value.message == "invalid JSON patch"


@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        (MERGE_PATCH, b"null", "Invalid JSON Patch"),
        (MERGE_PATCH, b'"bar"', "Invalid JSON Patch"),
        (
            STRATEGIC_MERGE_PATCH,
            b"[]",
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            STRATEGIC_MERGE_PATCH,
            b"3",
            "json: cannot unmarshal number into Go value of type map[string]interface {}",
        ),
        (JSON_PATCH, b"{}", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    ],
)
def test_a_json_body_of_the_wrong_shape_is_a_400(content_type: str, body: bytes, message: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        _apply(content_type, body)
    assert raised.value.message == message


def test_a_null_strategic_patch_changes_nothing() -> None:
    assert _apply(STRATEGIC_MERGE_PATCH, b"null") == _pod()


def test_a_result_that_is_not_an_object_is_invalid_at_patch() -> None:
    with pytest.raises(errors.Invalid) as raised:
        _apply(MERGE_PATCH, ["c"])
    assert raised.value.message == (
        ' "" is invalid: patch: Invalid value: "[\\"c\\"]": '
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    )
    assert raised.value.details is not None
    assert [(c.type, c.field) for c in raised.value.details.causes] == [("FieldValueInvalid", "patch")]


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        (MERGE_PATCH, {"metadata": {"name": "other"}}),
        (STRATEGIC_MERGE_PATCH, {"metadata": {"name": "other"}}),
        (JSON_PATCH, [{"op": "replace", "path": "/metadata/name", "value": "other"}]),
    ],
)
def test_renaming_is_a_400(content_type: str, patch: Any) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        _apply(content_type, patch)
    assert raised.value.message == "the name of the object (other) does not match the name on the URL (web)"


def test_removing_the_name_is_a_400() -> None:
    with pytest.raises(errors.BadRequest) as raised:
        _apply(MERGE_PATCH, {"metadata": None})
    assert raised.value.message == "the name of the object () does not match the name on the URL (web)"


def test_another_namespace_is_a_400_and_a_removed_one_is_the_requests() -> None:
    with pytest.raises(errors.BadRequest) as raised:
        _apply(MERGE_PATCH, {"metadata": {"namespace": "other"}})
    assert raised.value.message == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    assert _apply(MERGE_PATCH, {"metadata": {"namespace": None}})["metadata"]["namespace"] == "team"


def test_a_cluster_scoped_objects_namespace_is_cleared() -> None:
    patched = apply_patch(
        MERGE_PATCH, _node(), b'{"metadata":{"namespace":"x"}}', objects_pb2.Node.DESCRIPTOR
    )
    assert "namespace" not in patched["metadata"]


def test_another_kind_is_invalid_for_json_and_merge_patches_and_dropped_by_strategic_merge() -> None:
    with pytest.raises(errors.Invalid) as raised:
        _apply(MERGE_PATCH, {"kind": "Node"})
    assert raised.value.details is not None
    assert [c.field for c in raised.value.details.causes] == ["patch"]
    assert _apply(STRATEGIC_MERGE_PATCH, {"kind": "Node", "apiVersion": "v2"})["kind"] == "Pod"
    assert _apply(MERGE_PATCH, {"kind": None, "apiVersion": None})["apiVersion"] == "v1"


@pytest.mark.parametrize("content_type", sorted(PATCH_TYPES))
@pytest.mark.parametrize("depth", [900, 5000])
def test_a_patch_nested_too_deeply_is_a_400(content_type: str, depth: int) -> None:
    nested = '{"a":' * depth + "1" + "}" * depth
    body = (
        f'[{{"op":"add","path":"/spec/x","value":{nested}}}]'
        if content_type == JSON_PATCH
        else f'{{"spec":{{"x":{nested}}}}}'
    )
    with pytest.raises(errors.BadRequest) as raised:
        _apply(content_type, body.encode())
    assert raised.value.message == "invalid JSON patch: nested too deeply"
