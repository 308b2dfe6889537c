"""The list and map schema table: a few entries pinned to upstream's types.go tags, and every entry naming
a real field of the right shape, every repeated field of objects.proto declared."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cluster.api import objects_pb2, scheduling_v1alpha2_pb2
from cluster.apiserver.http.patch import patchmeta
from cluster.apiserver.http.patch.patchmeta import ListSchema


def _message(name: str) -> Descriptor:
    return objects_pb2.DESCRIPTOR.message_types_by_name[name]


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


@pytest.mark.parametrize(
    ("message", "field", "schema"),
    [
        ("PodSpec", "containers", ListSchema("map", ("name",), "merge", "name")),
        ("PodSpec", "initContainers", ListSchema("map", ("name",), "merge", "name")),
        ("Container", "ports", ListSchema("map", ("containerPort", "protocol"), "merge", "containerPort")),
        ("Container", "env", ListSchema("map", ("name",), "merge", "name")),
        ("Container", "command", ListSchema("atomic")),
        ("PodSpec", "tolerations", ListSchema("atomic")),
        ("NodeSpec", "taints", ListSchema("atomic")),
        ("PodStatus", "conditions", ListSchema("map", ("type",), "merge", "type")),
        ("NodeStatus", "conditions", ListSchema("map", ("type",), "merge", "type")),
        ("ObjectMeta", "ownerReferences", ListSchema("map", ("uid",), "merge", "uid")),
        (
            "PodSpec",
            "topologySpreadConstraints",
            ListSchema("map", ("topologyKey", "whenUnsatisfiable"), "merge", "topologyKey"),
        ),
        ("PodSpec", "schedulingGates", ListSchema("map", ("name",), "merge", "name")),
        ("ServiceSpec", "ports", ListSchema("map", ("port", "protocol"), "merge", "port")),
        ("NodeSelectorTerm", "matchExpressions", ListSchema("atomic")),
    ],
)
def test_list_schema_follows_upstream_tags(message: str, field: str, schema: ListSchema) -> None:
    assert patchmeta.list_schema(_message(message), field) == schema


def test_atomic_structs_and_maps_follow_upstream_tags() -> None:
    assert patchmeta.is_atomic_struct(_message("LabelSelector"))
    assert patchmeta.is_atomic_struct(_message("NodeSelector"))
    assert not patchmeta.is_atomic_struct(_message("PodSpec"))
    assert patchmeta.is_atomic_map(_message("PodSpec"), "nodeSelector")
    assert not patchmeta.is_atomic_map(_message("ObjectMeta"), "labels")
    assert not patchmeta.is_atomic_map(_message("ResourceRequirements"), "requests")
    assert patchmeta.field_patch_strategy(_message("PodDisruptionBudgetSpec"), "selector") == "replace"
    assert patchmeta.field_patch_strategy(_message("PodSpec"), "affinity") == ""


def test_a_field_is_found_by_its_json_name() -> None:
    field = patchmeta.field_by_json_name(_message("PodStatus"), "hostIP")
    assert field is not None and field.name == "host_ip"
    assert patchmeta.field_by_json_name(_message("PodStatus"), "host_ip") is None


def test_every_list_entry_names_a_repeated_field_and_its_keys_name_fields_of_the_element() -> None:
    for message_name, fields in patchmeta.LISTS.items():
        message = _message(message_name)
        for json_name, schema in fields.items():
            field = patchmeta.field_by_json_name(message, json_name)
            assert field is not None, f"{message_name}.{json_name} is not a field"
            assert field.is_repeated and not _is_map(field), f"{message_name}.{json_name} is not a list"
            assert schema.list_type in ("atomic", "set", "map")
            assert schema.patch_strategy in ("", "merge", "replace", "retainKeys", "merge,retainKeys")
            assert bool(schema.map_keys) == (schema.list_type == "map")
            if schema.merge_key:
                assert schema.merge_key in schema.map_keys
            for key in schema.map_keys:
                assert field.message_type is not None, f"{message_name}.{json_name} keys a scalar list"
                assert patchmeta.field_by_json_name(field.message_type, key) is not None, key


def test_every_repeated_field_of_the_protos_is_declared() -> None:
    # The messages of versions served by conversion share the tables by name.
    files = (objects_pb2.DESCRIPTOR, scheduling_v1alpha2_pb2.DESCRIPTOR)
    undeclared = [
        f"{message.name}.{field.json_name}"
        for file in files
        for message in file.message_types_by_name.values()
        for field in message.fields
        if field.is_repeated
        and not _is_map(field)
        and field.json_name not in patchmeta.LISTS.get(message.name, {})
    ]
    assert undeclared == []


def test_every_atomic_map_struct_and_field_strategy_names_a_real_one() -> None:
    for message_name, names in patchmeta.ATOMIC_MAPS.items():
        for json_name in names:
            field = patchmeta.field_by_json_name(_message(message_name), json_name)
            assert field is not None and _is_map(field), f"{message_name}.{json_name}"
    for message_name in patchmeta.ATOMIC_STRUCTS:
        assert message_name in objects_pb2.DESCRIPTOR.message_types_by_name
    for message_name, strategies in patchmeta.FIELD_STRATEGIES.items():
        for json_name in strategies:
            field = patchmeta.field_by_json_name(_message(message_name), json_name)
            assert field is not None and field.message_type is not None and not field.is_repeated
