"""Namespace objects through the API server's verbs, on every store: the server's kubernetes.io/metadata.name
label and Active phase, the system namespaces created at start, and the ones that may not be deleted."""

from __future__ import annotations

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import NAMESPACE
from cluster.apiserver.bootstrap import ensure_system_namespaces
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.base import Store

NAME_LABEL = "kubernetes.io/metadata.name"


def verbs_on(store: Store) -> Verbs:
    return Verbs(Storage(store))


def namespace(
    name: str = "", labels: dict[str, str] | None = None, generate_name: str = ""
) -> objects_pb2.Namespace:
    ns = objects_pb2.Namespace()
    ns.metadata.name = name
    ns.metadata.generate_name = generate_name
    ns.metadata.labels.update(labels or {})
    return ns


async def test_create_labels_the_namespace_with_its_name_and_makes_it_active(store: Store) -> None:
    verbs = verbs_on(store)
    created = await verbs.create(namespace("team-a", {"team": "a", NAME_LABEL: "someone-else"}))
    assert dict(created.metadata.labels) == {"team": "a", NAME_LABEL: "team-a"}
    assert created.status.phase == "Active"
    stored = await verbs.registry.get(NAMESPACE, "", "team-a")
    assert stored == created


async def test_a_generated_name_is_the_label(store: Store) -> None:
    created = await verbs_on(store).create(namespace(generate_name="team-"))
    assert created.metadata.name.startswith("team-")
    assert created.metadata.labels[NAME_LABEL] == created.metadata.name


async def test_update_keeps_the_name_label_whatever_the_request_says(store: Store) -> None:
    verbs = verbs_on(store)
    await verbs.create(namespace("team-a"))
    updated = await verbs.update(namespace("team-a", {"team": "b"}))
    assert dict(updated.metadata.labels) == {"team": "b", NAME_LABEL: "team-a"}
    again = await verbs.update(namespace("team-a", {NAME_LABEL: "other"}))
    assert dict(again.metadata.labels) == {NAME_LABEL: "team-a"}
    assert again.status.phase == "Active"


async def test_system_namespaces_are_created_once(store: Store) -> None:
    verbs = verbs_on(store)
    await ensure_system_namespaces(verbs)
    await verbs.update(namespace("default", {"env": "prod"}))
    await ensure_system_namespaces(verbs)
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        created = await verbs.registry.get(NAMESPACE, "", name)
        assert created is not None and created.status.phase == "Active"
    default = await verbs.registry.get(NAMESPACE, "", "default")
    assert default is not None and default.metadata.labels["env"] == "prod"


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_a_system_namespace_may_not_be_deleted(store: Store, name: str) -> None:
    verbs = verbs_on(store)
    await ensure_system_namespaces(verbs)
    with pytest.raises(errors.Forbidden, match=f'namespaces "{name}" is forbidden: this namespace may not'):
        await verbs.delete(NAMESPACE, "", name)
    assert await verbs.registry.get(NAMESPACE, "", name) is not None


async def test_other_namespaces_are_deleted_alone(store: Store) -> None:
    verbs = verbs_on(store)
    await ensure_system_namespaces(verbs)
    await verbs.create(namespace("team-a"))
    await verbs.delete(NAMESPACE, "", "team-a")
    await verbs.delete(NAMESPACE, "", "kube-node-lease")
    assert await verbs.registry.get(NAMESPACE, "", "team-a") is None
    assert await verbs.registry.get(NAMESPACE, "", "kube-node-lease") is None


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (namespace("team.a"), 'Namespace "team.a" is invalid: metadata.name: Invalid value: "team.a": '
                              "must not contain dots"),
        (namespace("Team"), 'Namespace "Team" is invalid: metadata.name: Invalid value: "Team": a lowercase '
                            "RFC 1123 subdomain"),
        (namespace("x" * 64), "metadata.name: Invalid value"),
    ],
    ids=["dots", "capitals", "too-long"],
)
async def test_bad_names_are_refused_and_nothing_is_written(store: Store, bad: objects_pb2.Namespace,
                                                            message: str) -> None:
    verbs = verbs_on(store)
    with pytest.raises(errors.Invalid) as raised:
        await verbs.create(bad)
    assert message in raised.value.message
    assert await verbs.registry.get(NAMESPACE, "", bad.metadata.name) is None


async def test_a_bad_finalizer_is_refused(store: Store) -> None:
    bad = namespace("team-a")
    bad.spec.finalizers.append("not a name")
    with pytest.raises(errors.Invalid, match=r"spec\.finalizers\[0\]: Invalid value"):
        await verbs_on(store).create(bad)


async def test_a_bad_phase_is_refused_on_status_update(store: Store) -> None:
    verbs = verbs_on(store)
    await verbs.create(namespace("team-a"))
    bad = namespace("team-a")
    bad.status.phase = "Gone"
    with pytest.raises(errors.Invalid, match=r'status\.phase: Unsupported value: "Gone"'):
        await verbs.update_status(bad)
