"""API objects as Kubernetes JSON and YAML.

protobuf's own JSON printer is almost right for Kubernetes, but not quite: it prints 64-bit integers
as strings (``"terminationGracePeriodSeconds": "30"``) and every ``google.protobuf.Value`` number as a
float (``"minAvailable": 2.0``). So this module walks the message by its descriptors and emits what
kubectl prints: camelCase keys (each field's ``json_name``), integers as JSON integers, integral
IntOrString numbers as integers, unset fields left out, and keys in field-number order — which the protos
keep in Kubernetes' order (apiVersion, kind, metadata, spec, status).
"""

from __future__ import annotations

import base64
import functools
import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import yaml
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct, Value
from google.protobuf.timestamp_pb2 import Timestamp

_TIMESTAMP = "google.protobuf.Timestamp"
_VALUE = "google.protobuf.Value"
_STRUCT = "google.protobuf.Struct"
_LIST_VALUE = "google.protobuf.ListValue"


def to_dict(obj: Message) -> dict[str, Any]:
    """The object as Kubernetes' JSON data model (a dict ready for ``json.dumps`` or ``yaml.dump``)."""
    return _message(obj, False)


def to_wire_dict(obj: Message) -> dict[str, Any]:
    """The object exactly as kube-apiserver's JSON carries it, for clients that decode it into
    Kubernetes' types (client-go, the official Python client): metav1.Time at whole seconds, MicroTime
    with six fractional digits (Go parses it with exactly six), and the fields Kubernetes never omits
    (``disruptionsAllowed: 0``) present even when zero."""
    return _message(obj, True)


def to_json(obj: Message) -> str:
    """Kubernetes JSON, indented by two spaces as ``kubectl get -o json`` prints it."""
    return json.dumps(to_dict(obj), indent=2, ensure_ascii=False)


def to_yaml(obj: Message) -> str:
    """Block-style YAML with keys in Kubernetes' order, as ``kubectl get -o yaml`` prints it."""
    return yaml.safe_dump(to_dict(obj), sort_keys=False, default_flow_style=False, allow_unicode=True)


#: Timestamps that are metav1.MicroTime in Kubernetes (message name, JSON name); every other is metav1.Time.
MICRO_TIME_FIELDS = frozenset({
    ("LeaseSpec", "acquireTime"), ("LeaseSpec", "renewTime"), ("Event", "eventTime"),
    ("LeaseCandidateSpec", "pingTime"), ("LeaseCandidateSpec", "renewTime"),
    ("EventSeries", "lastObservedTime"),
})
#: Fields Kubernetes' JSON always carries (no omitempty), by message name, with their zero value.
ALWAYS_PRESENT: dict[str, tuple[tuple[str, Any], ...]] = {
    "PodDisruptionBudgetStatus": (
        ("disruptionsAllowed", 0), ("currentHealthy", 0), ("desiredHealthy", 0), ("expectedPods", 0),
    ),
    "PriorityClass": (("value", 0),),
    "ContainerPort": (("containerPort", 0),),
}


def _message(msg: Message, wire: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        name, convert = _converter(field)
        out[name] = value if convert is None else convert(value, wire)
    if wire:
        for name, zero in ALWAYS_PRESENT.get(msg.DESCRIPTOR.name, ()):
            out.setdefault(name, zero)
    return out


#: Turns a field's value into JSON data, given whether it is for the wire; None: the value is its own.
_Convert = Callable[[Any, bool], Any] | None


@functools.cache
def _converter(field: FieldDescriptor) -> tuple[str, _Convert]:
    """A field's JSON name and how its value is converted, worked out once per field: reading a
    descriptor's options and types costs more than converting most values (a list of 10,000 pods
    read them for every field of every pod)."""
    assert field.containing_type is not None, "a field belongs to a message"
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        item = _single(field.message_type.fields_by_name["value"], field.containing_type.name)
        if item is None:
            return field.json_name, lambda value, wire: {str(key): v for key, v in value.items()}
        return field.json_name, lambda value, wire: {str(key): item(v, wire) for key, v in value.items()}
    single = _single(field, field.containing_type.name)
    if not field.is_repeated:
        return field.json_name, single
    if single is None:
        return field.json_name, lambda value, wire: list(value)
    return field.json_name, lambda value, wire: [single(v, wire) for v in value]


def _single(field: FieldDescriptor, owner: str) -> _Convert:
    """How one value of ``field`` (of message ``owner``) is converted; None for strings, numbers and
    booleans, which are their own JSON (every integer width, int64 included, is a Python int)."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert field.message_type is not None, "a message field has a message type"
        full_name = field.message_type.full_name
        if full_name == _TIMESTAMP:
            micro = (owner, field.json_name) in MICRO_TIME_FIELDS
            return lambda value, wire: _timestamp(value, micro, wire)
        if full_name == _STRUCT:
            return lambda value, wire: _struct(value)
        if full_name == _VALUE:
            return lambda value, wire: _value(value)
        if full_name == _LIST_VALUE:
            return lambda value, wire: [_value(item) for item in value.values]
        return _message
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None, "an enum field has an enum type"
        names = {number: enum_value.name for number, enum_value in field.enum_type.values_by_number.items()}
        return lambda value, wire: names.get(value, value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return lambda value, wire: base64.b64encode(value).decode("ascii")
    return None


def _timestamp(value: Timestamp, micro: bool, wire: bool) -> str:
    if not wire:
        return value.ToJsonString()
    moment = datetime.fromtimestamp(value.seconds, tz=UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# Struct, Value and ListValue walked here rather than by json_format.MessageToDict, at a fifth of its
# cost: every object written through the HTTP API carries a Struct (its managedFields' fieldsV1), which
# each get, list, watch event and Table row converts.


def _struct(struct: Struct) -> dict[str, Any]:
    fields = struct.fields
    return {key: _value(fields[key]) for key in fields}


def _value(value: Value) -> Any:
    """A Value's JSON; a number that is a whole one as an int (an IntOrString's 2 must print as 2, not
    2.0), which JSON cannot carry when it is not finite."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return _struct(value.struct_value)
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        if not math.isfinite(number):
            raise ValueError(f"a Value's number {number} has no JSON form")
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None  # null_value, or no kind set: JSON null as MessageToDict gives
