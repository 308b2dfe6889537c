"""Fencing in the API server: the tenure a Lease records, the refusal of a stale fence and its words, the
server-owned annotations, and fenced writes through the verbs over a real SqliteStore (no network)."""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2, timeutil
from cluster.api.kinds import EVENT, LEASE, NODE, POD
from cluster.apiserver import binding, strategy
from cluster.apiserver.fencing import (
    BOUND_UNDER_FENCE_ANNOTATION,
    FENCING_TOKEN_ANNOTATION,
    Fencing,
    refusal,
    tenure_token,
)
from cluster.apiserver.storage import Storage, revision_of
from cluster.apiserver.verbs import Verbs
from store.base import Guard
from store.sqlite import SqliteStore
from tests.builders import ROOMY, node, pod

NOW = timeutil.from_seconds(1_700_000_000)


def lease(holder: str | None, *, rv: str = "", token: str | None = None) -> objects_pb2.Lease:
    obj = objects_pb2.Lease(
        metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace="kube-system", resource_version=rv)
    )
    if holder is not None:
        obj.spec.holder_identity = holder
    obj.spec.lease_duration_seconds = 15
    if token is not None:
        obj.metadata.annotations[FENCING_TOKEN_ANNOTATION] = token
    return obj


def fence(
    holder: str = "a", token: int = 10, *, namespace: str = "kube-system", name: str = "kube-scheduler"
) -> apiserver_pb2.Fence:
    return apiserver_pb2.Fence(
        lease_namespace=namespace, lease_name=name, holder_identity=holder, token=token
    )


def binding_of(name: str, node_name: str, annotations: dict[str, str] | None = None) -> objects_pb2.Binding:
    return objects_pb2.Binding(
        metadata=objects_pb2.ObjectMeta(name=name, namespace="default", annotations=annotations or {}),
        target=objects_pb2.ObjectReference(kind="Node", name=node_name),
    )


# ------------------------------------------------------------------------------------- tenure token


def test_tenure_token_is_the_annotation_when_present_else_the_resource_version() -> None:
    assert tenure_token(lease("a", rv="42")) == 42
    assert tenure_token(lease("a", rv="57", token="42")) == 42


def test_a_malformed_token_annotation_is_an_internal_error_naming_it() -> None:
    with pytest.raises(
        errors.InternalError,
        match=r"^lease kube-system/kube-scheduler has a malformed podsched.io/fencing-token annotation: "
        r"'x1'$",
    ):
        tenure_token(lease("a", rv="57", token="x1"))


# -------------------------------------------------------------------------------------- refusals

@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        pytest.param(lease("a", rv="10"), None, id="holds-at-acquisition"),
        pytest.param(lease("a", rv="99", token="10"), None, id="holds-after-renewals"),
        pytest.param(
            None,
            'lease kube-system/kube-scheduler does not exist; the fence names holder "a" with token 10',
            id="missing",
        ),
        pytest.param(
            lease("", rv="12"),
            'lease kube-system/kube-scheduler has no holder (released); the fence names holder "a" with '
            "token 10",
            id="released",
        ),
        pytest.param(
            lease(None, rv="12"),
            'lease kube-system/kube-scheduler has no holder (released); the fence names holder "a" with '
            "token 10",
            id="holder-unset",
        ),
        pytest.param(
            lease("b", rv="30", token="20"),
            'lease kube-system/kube-scheduler is held by "b" with token 20; the fence names holder "a" '
            "with token 10",
            id="other-holder",
        ),
        pytest.param(
            lease("a", rv="30"),
            'lease kube-system/kube-scheduler is held by "a" with token 30; the fence names holder "a" '
            "with token 10",
            id="same-holder-later-tenure",
        ),
    ],
)
def test_refusal(stored: objects_pb2.Lease | None, expected: str | None) -> None:
    assert refusal(stored, fence("a", 10)) == expected


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        pytest.param(fence(namespace=""), "fence.leaseNamespace: Required value", id="no-namespace"),
        pytest.param(fence(name=""), "fence.leaseName: Required value", id="no-name"),
        pytest.param(fence(holder=""), "fence.holderIdentity: Required value", id="no-holder"),
        pytest.param(fence(token=0), "fence.token: Invalid value: 0: must be greater than 0", id="zero"),
        pytest.param(fence(token=-3), "fence.token: Invalid value: -3: must be greater than 0", id="neg"),
        pytest.param(
            fence(name="a/b"),
            'fence.leaseName: Invalid value: "a/b": a lowercase RFC 1123 subdomain must consist of',
            id="name-not-a-subdomain",
        ),
        pytest.param(
            fence(namespace="kube.system"),
            'fence.leaseNamespace: Invalid value: "kube.system": must not contain dots',
            id="namespace-not-a-label",
        ),
    ],
)
async def test_a_bad_fence_is_invalid_naming_the_field(
    registry: Storage, bad: apiserver_pb2.Fence, expected: str
) -> None:
    with pytest.raises(errors.Invalid) as raised:
        Fencing(registry).of(bad)
    assert raised.value.message.startswith(f"the fence is invalid: {expected}")


async def test_every_bad_field_of_a_fence_is_named(registry: Storage) -> None:
    with pytest.raises(
        errors.Invalid,
        match=r"^the fence is invalid: \[fence.leaseName: Required value, fence.holderIdentity: Required "
        r"value, fence.token: Invalid value: 0: must be greater than 0\]$",
    ):
        Fencing(registry).of(apiserver_pb2.Fence(lease_namespace="kube-system"))


# ------------------------------------------------------------------------- tenure kept by strategy


def _updated(
    old: objects_pb2.Lease, holder: str, annotations: dict[str, str] | None = None
) -> objects_pb2.Lease:
    new = objects_pb2.Lease()
    new.CopyFrom(old)
    new.metadata.ClearField("annotations")
    new.metadata.annotations.update(annotations or {})
    new.spec.holder_identity = holder
    strategy.prepare_for_update(LEASE, new, old)
    return new


def test_a_renewal_by_the_same_holder_records_the_tenure_token() -> None:
    acquired = lease("a", rv="10")
    renewed = _updated(acquired, "a")
    assert renewed.metadata.annotations[FENCING_TOKEN_ANNOTATION] == "10"
    renewed.metadata.resource_version = "11"
    again = _updated(renewed, "a")
    assert again.metadata.annotations[FENCING_TOKEN_ANNOTATION] == "10"


@pytest.mark.parametrize("holder", ["b", ""], ids=["taken-over", "released"])
def test_a_change_of_holder_starts_a_tenure_without_the_annotation(holder: str) -> None:
    held = lease("a", rv="20", token="10")
    changed = _updated(held, holder, {FENCING_TOKEN_ANNOTATION: "10"})
    assert FENCING_TOKEN_ANNOTATION not in changed.metadata.annotations


def test_reacquiring_a_released_lease_starts_a_new_tenure() -> None:
    released = lease("", rv="30")
    reacquired = _updated(released, "a")
    assert FENCING_TOKEN_ANNOTATION not in reacquired.metadata.annotations


def test_a_client_cannot_write_the_tenure_token_on_update() -> None:
    held = lease("a", rv="20", token="10")
    forged = _updated(held, "a", {FENCING_TOKEN_ANNOTATION: "20", "keep": "me"})
    assert dict(forged.metadata.annotations) == {FENCING_TOKEN_ANNOTATION: "10", "keep": "me"}
    forged_new = _updated(held, "b", {FENCING_TOKEN_ANNOTATION: "20"})
    assert FENCING_TOKEN_ANNOTATION not in forged_new.metadata.annotations


def test_create_drops_the_server_annotations() -> None:
    created = lease("a", token="5")
    created.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = "a@5"
    created.metadata.annotations["mine"] = "kept"
    strategy.prepare_for_create(LEASE, created, NOW, random.Random(0))
    assert dict(created.metadata.annotations) == {"mine": "kept"}


def test_a_pod_update_keeps_the_stored_bound_under_fence_annotation() -> None:
    old = pod("web", node_name="n1", image="busybox")
    old.metadata.resource_version = "8"
    old.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = "a@5"
    dropped = objects_pb2.Pod()
    dropped.CopyFrom(old)
    dropped.metadata.ClearField("annotations")
    strategy.prepare_for_update(POD, dropped, old)
    assert dropped.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] == "a@5"
    forged = objects_pb2.Pod()
    forged.CopyFrom(old)
    forged.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = "z@1"
    strategy.prepare_for_update(POD, forged, old)
    assert forged.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] == "a@5"


# ------------------------------------------------------------------ fenced writes over a real store


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Storage]:
    store = await SqliteStore.open(tmp_path)
    try:
        yield Storage(store)
    finally:
        await store.close()


@pytest.fixture
def verbs(registry: Storage) -> Verbs:
    return Verbs(registry, rng=random.Random(0))


async def _acquire(verbs: Verbs, holder: str) -> int:
    """Create the lease held by ``holder``, or take it over; its new tenure token."""
    current = await verbs.registry.get(LEASE, "kube-system", "kube-scheduler")
    if current is None:
        created = await verbs.create(lease(holder))
        return revision_of(created)
    taken = objects_pb2.Lease()
    taken.CopyFrom(current)
    taken.spec.holder_identity = holder
    updated = await verbs.update(taken)
    return tenure_token(updated)


async def _renew(verbs: Verbs) -> objects_pb2.Lease:
    current = await verbs.registry.require(LEASE, "kube-system", "kube-scheduler")
    renewed = objects_pb2.Lease()
    renewed.CopyFrom(current)
    renewed.spec.renew_time.seconds = renewed.spec.renew_time.seconds + 1
    return await verbs.update(renewed)


async def test_the_token_is_the_acquiring_revision_through_renewals(verbs: Verbs) -> None:
    token = await _acquire(verbs, "a")
    for _ in range(3):
        renewed = await _renew(verbs)
        assert revision_of(renewed) > token
        assert renewed.metadata.annotations[FENCING_TOKEN_ANNOTATION] == str(token)
        assert tenure_token(renewed) == token
    taken = await _acquire(verbs, "b")
    assert taken > token
    stored = await verbs.registry.require(LEASE, "kube-system", "kube-scheduler")
    assert FENCING_TOKEN_ANNOTATION not in stored.metadata.annotations
    assert tenure_token(stored) == revision_of(stored) == taken


async def test_a_guard_pins_the_lease_at_the_revision_read(verbs: Verbs) -> None:
    token = await _acquire(verbs, "a")
    renewed = await _renew(verbs)
    guard = await verbs.fencing.of(fence("a", token)).guard("bind", POD, "default", "web")
    assert guard == Guard(LEASE.key("kube-system", "kube-scheduler"), revision_of(renewed))
    assert verbs.fencing.refused == 0


async def test_a_refusal_is_counted_and_logged_once_with_the_lease_holder_and_tokens(
    verbs: Verbs, caplog: pytest.LogCaptureFixture
) -> None:
    old = await _acquire(verbs, "a")
    new = await _acquire(verbs, "b")
    checked = verbs.fencing.of(fence("a", old))
    expected = (
        f"refused a fenced delete of Pod default/web: lease kube-system/kube-scheduler is held by \"b\" "
        f"with token {new}; the fence names holder \"a\" with token {old}"
    )
    with caplog.at_level(logging.WARNING, logger="cluster.apiserver.fencing"):
        with pytest.raises(errors.Fenced) as raised:
            await checked.guard("delete", POD, "default", "web")
        with pytest.raises(errors.Fenced):
            await checked.guard("bind", NODE, "", "n1")
    assert raised.value.message == expected
    assert verbs.fencing.refused == 2
    lines = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert lines == [
        f"{expected} (1 fenced writes refused so far)",
        "refused a fenced bind of Node n1: lease kube-system/kube-scheduler is held by \"b\" with token "
        f"{new}; the fence names holder \"a\" with token {old} (2 fenced writes refused so far)",
    ]


async def test_a_fenced_bind_stamps_the_tenure_and_ignores_a_forged_stamp(verbs: Verbs) -> None:
    await verbs.create(node("n1", allocatable=ROOMY))
    await verbs.create(pod("fenced", image="busybox"))
    await verbs.create(pod("plain", image="busybox"))
    token = await _acquire(verbs, "a")
    checked = verbs.fencing.of(fence("a", token))
    bound = await binding.bind(
        verbs.registry, binding_of("fenced", "n1", {BOUND_UNDER_FENCE_ANNOTATION: "z@1", "by": "a"}), NOW,
        fence=checked,
    )
    assert bound.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] == f"a@{token}"
    assert bound.metadata.annotations["by"] == "a"
    forged = binding_of("plain", "n1", {BOUND_UNDER_FENCE_ANNOTATION: "z@1"})
    plain = await binding.bind(verbs.registry, forged, NOW)
    assert plain.spec.node_name == "n1"
    assert BOUND_UNDER_FENCE_ANNOTATION not in plain.metadata.annotations


async def test_a_stale_fence_refuses_writes_that_would_change_nothing(verbs: Verbs) -> None:
    """A deposed writer hears that it was deposed even when its write is a no-op: a delete of a pod that
    is already terminating (KEEP), a status it already has."""
    await verbs.create(node("n1", allocatable=ROOMY))
    created = await verbs.create(pod("web", node_name="n1", image="busybox"))
    marked = await verbs.delete(POD, "default", "web", grace_period_seconds=30)
    old = await _acquire(verbs, "a")
    await _acquire(verbs, "b")
    stale = verbs.fencing.of(fence("a", old))
    with pytest.raises(errors.Fenced):
        await verbs.delete(POD, "default", "web", grace_period_seconds=30, fence=stale)
    with pytest.raises(errors.Fenced):
        await verbs.update_status(marked, fence=stale)
    with pytest.raises(errors.Fenced):
        await verbs.update_status(marked, fence=stale, dry_run=True)
    assert await verbs.registry.require(POD, "default", "web") == marked
    assert revision_of(marked) > revision_of(created)
    assert verbs.fencing.refused == 3


async def test_a_write_that_failed_only_on_a_guard_is_retried_with_fresh_guards(verbs: Verbs) -> None:
    """The lease moves between the guard's read and the write (a renewal): the write fails on the guard
    alone, and guaranteed_update draws fresh guards and writes."""
    await verbs.create(node("n1", allocatable=ROOMY))
    await verbs.create(pod("web", node_name="n1", image="busybox"))
    await _acquire(verbs, "a")
    calls: list[int] = []

    async def guards() -> Sequence[Guard]:
        current = await verbs.registry.require(LEASE, "kube-system", "kube-scheduler")
        calls.append(revision_of(current))
        if len(calls) == 1:
            await _renew(verbs)  # the guard below is stale before the write is sent
        return [Guard(LEASE.key("kube-system", "kube-scheduler"), revision_of(current))]

    async def set_message(current: objects_pb2.Pod) -> objects_pb2.Pod:
        updated = objects_pb2.Pod()
        updated.CopyFrom(current)
        updated.status.message = "checked"
        return updated

    written = await verbs.registry.guaranteed_update(POD, "default", "web", set_message, guards=guards)
    assert written.status.message == "checked"
    assert len(calls) == 2 and calls[1] > calls[0]
    assert (await verbs.registry.require(POD, "default", "web")).status.message == "checked"


async def test_a_create_that_failed_only_on_a_guard_is_retried_with_fresh_guards(verbs: Verbs) -> None:
    """As for updates: a fenced Event create whose lease was renewed between the guard and the write is
    written at the second attempt; one whose key is taken is AlreadyExists at once."""
    await _acquire(verbs, "a")
    calls: list[int] = []

    async def guards() -> Sequence[Guard]:
        current = await verbs.registry.require(LEASE, "kube-system", "kube-scheduler")
        calls.append(revision_of(current))
        if len(calls) == 1:
            await _renew(verbs)
        return [Guard(LEASE.key("kube-system", "kube-scheduler"), revision_of(current))]

    event = objects_pb2.Event(metadata=objects_pb2.ObjectMeta(name="web.1", namespace="default"))
    created = await verbs.registry.create(EVENT, event, guards=guards)
    assert len(calls) == 2 and calls[1] > calls[0]
    assert revision_of(created) > calls[1]
    again = objects_pb2.Event(metadata=objects_pb2.ObjectMeta(name="web.1", namespace="default"))
    with pytest.raises(errors.AlreadyExists):
        await verbs.registry.create(EVENT, again, guards=guards)
    assert len(calls) == 3
