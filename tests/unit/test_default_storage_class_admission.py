"""The DefaultStorageClass admission plugin, rows from kube-apiserver's
plugin/pkg/admission/storage/storageclass/setdefault/admission_test.go (TestAdmission) and
storage/util's GetDefaultClass tests: which class a claim created without one gets."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.volumes import BETA_IS_DEFAULT_CLASS_ANNOTATION, BETA_STORAGE_CLASS_ANNOTATION, default_class
from cluster.apiserver.admission.defaultstorageclass import DefaultStorageClass
from tests import builders

EARLY = datetime(2024, 1, 1, tzinfo=UTC)
LATE = datetime(2024, 1, 2, tzinfo=UTC)


def _class(name: str, annotation: str | None = None, *, beta: bool = False,
           created: datetime = EARLY) -> objects_pb2.StorageClass:
    sc = builders.storage_class(name, "kubernetes.io/aws-ebs", created=created)
    if annotation is not None:
        key = BETA_IS_DEFAULT_CLASS_ANNOTATION if beta else "storageclass.kubernetes.io/is-default-class"
        sc.metadata.annotations[key] = annotation
    return sc


DEFAULT1 = _class("default1", "true")
DEFAULT2 = _class("default2", "true")
NEWER_DEFAULT = _class("newer", "true", created=LATE)
BETA_DEFAULT = _class("beta", "true", beta=True)
FALSE_DEFAULT = _class("nondefault1", "false")
NO_DEFAULT = _class("nondefault2")
EMPTY_DEFAULT = _class("nondefault3", "")
NOT_TRUE = _class("nondefault4", "TRUE")


def _claim(
    storage_class: str | None = None, beta_class: str | None = None
) -> objects_pb2.PersistentVolumeClaim:
    annotations = {BETA_STORAGE_CLASS_ANNOTATION: beta_class} if beta_class is not None else {}
    return builders.persistent_volume_claim("claim", "ns", storage_class=storage_class,
                                            annotations=annotations)


@dataclass
class _Page:
    items: list[Any]


@dataclass
class _Cache:
    classes: tuple[objects_pb2.StorageClass, ...]

    async def list(self, selection: Any) -> _Page:
        return _Page(list(self.classes))


@dataclass
class _Context:
    cache: _Cache


@pytest.mark.parametrize(
    ("classes", "claim", "expected"),
    [
        ((FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT, NOT_TRUE), _claim(), None),
        ((DEFAULT1, FALSE_DEFAULT), _claim(), "default1"),
        ((BETA_DEFAULT, FALSE_DEFAULT), _claim(), "beta"),
        # A claim that names a class, even "" (no class at all), keeps it.
        ((DEFAULT1,), _claim(""), ""),
        ((DEFAULT1,), _claim("foo"), "foo"),
        # So does one that names it by the beta annotation.
        ((DEFAULT1,), _claim(beta_class="foo"), None),
        ((), _claim(), None),
        # Several defaults: the newest, and of those created together the name that sorts first.
        ((DEFAULT1, NEWER_DEFAULT), _claim(), "newer"),
        ((DEFAULT2, DEFAULT1), _claim(), "default1"),
    ],
    ids=["no-default", "one-default", "beta-default", "explicit-no-class", "named-class", "beta-annotation",
         "no-classes", "newest-default", "same-time-by-name"],
)
def test_a_claim_without_a_class_gets_the_default(
    classes: tuple[objects_pb2.StorageClass, ...], claim: objects_pb2.PersistentVolumeClaim,
    expected: str | None,
) -> None:
    ctx: Any = _Context(_Cache(classes))
    asyncio.run(DefaultStorageClass().mutate_create(ctx, claim))
    if expected is None:
        assert not claim.spec.HasField("storage_class_name")
    else:
        assert claim.spec.HasField("storage_class_name") and claim.spec.storage_class_name == expected


def test_default_class_is_none_without_a_default() -> None:
    assert default_class([FALSE_DEFAULT, NO_DEFAULT]) is None
    assert default_class([NO_DEFAULT, DEFAULT1]) is DEFAULT1
