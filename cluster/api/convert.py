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
import json
from datetime import UTC, datetime
from typing import Any

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

_TIMESTAMP = "google.protobuf.Timestamp"
_VALUE = "google.protobuf.Value"
_STRUCT = "google.protobuf.Struct"
_LIST_VALUE = "google.protobuf.ListValue"
_DYNAMIC = (_VALUE, _STRUCT, _LIST_VALUE)


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
        out[field.json_name] = _field(field, value, wire, msg)
    if wire:
        for name, zero in ALWAYS_PRESENT.get(msg.DESCRIPTOR.name, ()):
            out.setdefault(name, zero)
    return out


def _field(field: FieldDescriptor, value: Any, wire: bool, owner: Message) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {str(key): _single(value_field, item, wire, owner) for key, item in value.items()}
    if field.is_repeated:
        return [_single(field, item, wire, owner) for item in value]
    return _single(field, value, wire, owner)


def _single(field: FieldDescriptor, value: Any, wire: bool, owner: Message) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert field.message_type is not None, "a message field has a message type"
        full_name = field.message_type.full_name
        if full_name == _TIMESTAMP:
            return _timestamp(value, field, wire, owner)
        if full_name in _DYNAMIC:
            return _integral_numbers(json_format.MessageToDict(value))
        return _message(value, wire)
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None, "an enum field has an enum type"
        enum_value = field.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else value
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode("ascii")
    # Every integer width (int64 included) is a plain Python int here: JSON gets a number.
    return value


def _timestamp(value: Timestamp, field: FieldDescriptor, wire: bool, owner: Message) -> str:
    if not wire:
        return value.ToJsonString()
    moment = datetime.fromtimestamp(value.seconds, tz=UTC)
    if (owner.DESCRIPTOR.name, field.json_name) in MICRO_TIME_FIELDS:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _integral_numbers(data: Any) -> Any:
    """``google.protobuf.Value`` numbers are doubles; an IntOrString's 2 must print as 2, not 2.0."""
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {key: _integral_numbers(item) for key, item in data.items()}
    if isinstance(data, list):
        return [_integral_numbers(item) for item in data]
    return data
