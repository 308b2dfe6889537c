"""JSON patch: RFC 6902's operations through the jsonpatch library, with kube-apiserver's bounds and
errors."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import errors
from cluster.apiserver.http.patch import json_patch
from cluster.apiserver.http.patch.failures import REJECTED
from cluster.apiserver.http.patch.json_patch import apply_json_patch

_DOC = {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"containers": [{"name": "a"}]}}


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        (
            [{"op": "add", "path": "/metadata/labels/tier", "value": "front"}],
            {
                "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
                "spec": {"containers": [{"name": "a"}]},
            },
        ),
        (
            [{"op": "remove", "path": "/metadata/labels"}],
            {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "a"}]}},
        ),
        (
            [
                {"op": "add", "path": "/spec/containers/-", "value": {"name": "b"}},
                {"op": "test", "path": "/spec/containers/1/name", "value": "b"},
                {"op": "move", "from": "/spec/containers/0", "path": "/spec/containers/1"},
            ],
            {
                "metadata": {"name": "web", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "b"}, {"name": "a"}]},
            },
        ),
        (
            [
                {"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"},
                {"op": "replace", "path": "/metadata/labels/app", "value": "api"},
            ],
            {
                "metadata": {"name": "web", "labels": {"app": "api"}, "annotations": {"app": "web"}},
                "spec": {"containers": [{"name": "a"}]},
            },
        ),
        (None, _DOC),
        ([], _DOC),
    ],
)
def test_operations(ops: Any, expected: dict[str, Any]) -> None:
    assert apply_json_patch(_DOC, ops) == expected


def test_the_document_is_not_changed_even_when_a_later_operation_fails() -> None:
    before = repr(_DOC)
    with pytest.raises(errors.Invalid):
        apply_json_patch(
            _DOC,
            [
                {"op": "add", "path": "/metadata/labels/x", "value": "1"},
                {"op": "test", "path": "/metadata/name", "value": "other"},
            ],
        )
    assert repr(_DOC) == before


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/metadata/name", "value": "other"}],
        [{"op": "remove", "path": "/metadata/annotations"}],
        [{"op": "replace", "path": "/status/phase", "value": "Running"}],
        [{"op": "add", "path": "/status/phase", "value": "Running"}],
        [{"op": "frobnicate", "path": "/metadata"}],
        [{"path": "/metadata"}],
        [{"op": "add", "path": "/metadata/x"}],
        [{"op": "add", "path": "metadata", "value": 1}],
    ],
)
def test_an_operation_that_cannot_apply_is_kube_apiservers_generic_422(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(errors.Invalid) as raised:
        apply_json_patch(_DOC, ops)
    assert raised.value.message == REJECTED
    assert raised.value.http_code == 422


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("add", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        (["add"], "json: cannot unmarshal string into Go value of type jsonpatch.Operation"),
        ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
    ],
)
def test_a_body_that_is_not_a_list_of_operations_is_a_400(body: Any, message: str) -> None:
    with pytest.raises(errors.BadRequest) as raised:
        apply_json_patch(_DOC, body)
    assert raised.value.message == message


def test_more_operations_than_kube_apiserver_takes_is_a_413() -> None:
    ops = [{"op": "test", "path": "/metadata/name", "value": "web"}] * (json_patch.MAX_OPERATIONS + 1)
    with pytest.raises(errors.RequestEntityTooLarge) as raised:
        apply_json_patch(_DOC, ops)
    assert raised.value.message == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )
    assert raised.value.http_code == 413
    assert apply_json_patch(_DOC, ops[:-1]) == _DOC


def test_copies_may_not_grow_the_object_beyond_the_bound() -> None:
    big = {"blob": "x" * (1024 * 1024)}
    doubling = [{"op": "copy", "from": "/blob", "path": f"/copy{i}"} for i in range(3)]
    assert len(apply_json_patch(big, doubling[:2])) == 3
    with pytest.raises(errors.Invalid) as raised:
        apply_json_patch(big, doubling)
    assert raised.value.message == REJECTED
