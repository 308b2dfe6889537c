"""Continue tokens: they round-trip, stay inside the list they came from, and reject anything else."""

from __future__ import annotations

import base64
import json

import pytest

from cluster.api import errors
from cluster.apiserver import continuation

PREFIX = "/registry/pods/"


@pytest.mark.parametrize(
    ("revision", "key"),
    [(1, "/registry/pods/default/web"), (987654321, "/registry/pods/kube-system/a\x00"), (5, PREFIX + "x")],
    ids=["plain", "after-key-suffix", "short"],
)
def test_round_trip(revision: int, key: str) -> None:
    token = continuation.encode(revision, key, PREFIX)
    assert "=" not in token  # unpadded, URL-safe: safe in a query string, as Kubernetes' tokens are
    assert continuation.decode(token, PREFIX) == continuation.Continuation(revision, key)


def test_the_key_is_relative_to_the_listed_prefix() -> None:
    token = continuation.encode(3, "/registry/pods/default/web", PREFIX)
    document = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert document == {"v": "meta.k8s.io/v1", "rv": 3, "start": "default/web"}
    # The same token continues a list of another prefix only inside that prefix.
    assert continuation.decode(token, "/registry/nodes/").start_key == "/registry/nodes/default/web"


def test_encoding_a_key_outside_the_prefix_is_a_bug() -> None:
    with pytest.raises(ValueError, match=r"outside the listed prefix"):
        continuation.encode(3, "/registry/nodes/n1", PREFIX)


def _token(document: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("not base64 at all!", "not a continue token this server issued"),
        (_token(["a list"]), "not a continue token this server issued"),
        (_token({"v": "other/v9", "rv": 3, "start": "a"}), "not a continue token this server issued"),
        (_token({"v": "meta.k8s.io/v1", "rv": 0, "start": "a"}), "incorrect encoded start resourceVersion"),
        (_token({"v": "meta.k8s.io/v1", "rv": "7", "start": "a"}), "incorrect encoded start resourceVersion"),
        (_token({"v": "meta.k8s.io/v1", "rv": True, "start": "a"}),
         "incorrect encoded start resourceVersion"),
        (_token({"v": "meta.k8s.io/v1", "rv": 7, "start": ""}), "encoded start key missing"),
        (_token({"v": "meta.k8s.io/v1", "rv": 7}), "encoded start key missing"),
    ],
    ids=["garbage", "not-an-object", "wrong-version", "zero-revision", "string-revision", "bool-revision",
         "empty-start", "no-start"],
)
def test_bad_tokens_are_invalid(token: str, problem: str) -> None:
    with pytest.raises(errors.Invalid, match=rf"^continue key is not valid: {problem}"):
        continuation.decode(token, PREFIX)
