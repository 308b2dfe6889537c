"""Every kind the API serves (cluster/api/kinds.py) is registered completely: its registry module declares
every hook (a callable, or None for one it does without), its validation, and its printer, whose columns
and describe sections print an object of the kind. Adding a kind without them fails here."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from google.protobuf.message import Message

from cluster.api import validation
from cluster.api.kinds import KINDS, Kind
from cluster.apiserver.admission import default_chain
from cluster.apiserver.admission.plugin import PHASES, AdmissionPlugin
from cluster.apiserver.registry import STRATEGIES, fenced_kinds, strategy_of
from cluster.apiserver.registry.kind import CREATE, UPDATE, KindStrategy
from cluster.printers import catalog
from cluster.printers.describe import DescribeText

#: Fields of a registration that are data, not hooks.
_DATA_FIELDS = {"kind", "printer", "validation", "fenced_verbs", "nominates"}
_HOOKS = [f.name for f in dataclasses.fields(KindStrategy) if f.name not in _DATA_FIELDS]


class _NoObjects:
    """A Reader for describers that find nothing besides the object."""

    async def list_all(self, kind: Kind[Any], namespace: str = "", *, label_selector: str = "",
                       field_selector: str = "") -> Any:
        return _Listed()


class _Listed:
    items: list[Message] = []


def _sample(kind: Kind[Any]) -> Message:
    obj = kind.message()
    obj.metadata.name = "sample"
    if kind.namespaced:
        obj.metadata.namespace = "default"
    return obj


def test_every_field_of_a_registration_must_be_given() -> None:
    """No hook has a default: a kind's module names each one, None when it does without."""
    defaulted = [
        f.name for f in dataclasses.fields(KindStrategy)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    ]
    assert defaulted == []


def test_every_served_kind_is_registered_and_nothing_else() -> None:
    assert set(STRATEGIES) == set(KINDS)
    assert set(catalog.PRINTERS) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_registration_is_complete(kind: Kind[Any]) -> None:
    registered = strategy_of(kind)
    assert registered.kind is kind
    for hook in _HOOKS:
        value = getattr(registered, hook)
        assert value is None or callable(value), f"{kind.name}.{hook} is neither a hook nor None"
    assert registered.fenced_verbs <= {CREATE, UPDATE}
    assert isinstance(registered.nominates, bool)
    # The validation is the kind's own, the one clients' validate_object uses too.
    assert registered.validation.kind is kind
    assert registered.validation is validation.rules_of(kind)
    # The printer is the one every client prints with.
    assert registered.printer is catalog.PRINTERS[kind]
    assert registered.printer.kind is kind


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_printer_columns_print_an_object(kind: Kind[Any]) -> None:
    obj = _sample(kind)
    for wide in (False, True):
        header = catalog.header(kind, wide=wide, all_namespaces=True)
        row = catalog.row(kind, obj, wide=wide, all_namespaces=True)
        assert header[0] == "NAMESPACE" and len(header) > 2
        assert len(row) == len(header)


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_describe_sections_print_an_object(kind: Kind[Any]) -> None:
    text = DescribeText()
    asyncio.run(catalog.PRINTERS[kind].describe(_NoObjects(), _sample(kind), text))
    rendered = text.render()
    assert rendered.startswith("Name:") and "sample" in rendered.splitlines()[0]


def test_admission_plugins_handle_served_kinds_in_phases_they_implement() -> None:
    chain = default_chain()
    names = [p.name for p in chain.plugins]
    assert names == [
        "NamespaceLifecycle", "Priority", "DefaultStorageClass", "RuntimeClass", "PodGroupWorkloadExists",
        "ResourceQuota",
    ]
    for plugin in chain.plugins:
        assert plugin.kinds and plugin.kinds <= set(KINDS), plugin.name
        for phase in plugin.handles:
            assert phase in PHASES, (plugin.name, phase)
            assert getattr(type(plugin), phase) is not getattr(AdmissionPlugin, phase), (plugin.name, phase)


@pytest.mark.parametrize(
    ("kind_name", "phase", "plugins"),
    [
        ("Pod", "mutate_create", ["Priority", "RuntimeClass"]),
        ("Pod", "validate_create", ["ResourceQuota"]),
        ("Pod", "mutate_update", ["Priority"]),
        ("PodGroup", "mutate_create", ["Priority"]),
        ("PodGroup", "validate_create", ["PodGroupWorkloadExists", "ResourceQuota"]),
        ("CompositePodGroup", "mutate_create", ["Priority"]),
        ("CompositePodGroup", "mutate_update", ["Priority"]),
        ("CompositePodGroup", "validate_create", ["PodGroupWorkloadExists", "ResourceQuota"]),
        ("Workload", "mutate_create", ["Priority"]),
        ("Workload", "mutate_update", ["Priority"]),
        ("Workload", "validate_create", ["ResourceQuota"]),
        ("PriorityClass", "validate_create", ["Priority"]),
        ("PriorityClass", "validate_update", ["Priority"]),
        ("ResourceQuota", "mutate_create", ["ResourceQuota"]),
        ("ResourceQuota", "mutate_update", ["ResourceQuota"]),
        ("Namespace", "validate_delete", ["NamespaceLifecycle"]),
        ("Node", "mutate_create", []),
        ("PersistentVolumeClaim", "mutate_create", ["DefaultStorageClass"]),
        ("PersistentVolumeClaim", "mutate_update", []),
    ],
)
def test_chain_orders_each_kinds_plugins(kind_name: str, phase: str, plugins: list[str]) -> None:
    kind = next(k for k in KINDS if k.name == kind_name)
    assert [p.name for p in getattr(default_chain().of(kind), phase)] == plugins


def test_fenced_kinds_are_named_by_name() -> None:
    assert [k.name for k in fenced_kinds(CREATE)] == ["Event", "ResourceClaim"]
    assert [k.name for k in fenced_kinds(UPDATE)] == [
        "Event", "Lease", "PersistentVolume", "PersistentVolumeClaim",
    ]
