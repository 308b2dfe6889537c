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
from typing import Any

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_TIMESTAMP = "google.protobuf.Timestamp"
_VALUE = "google.protobuf.Value"
_STRUCT = "google.protobuf.Struct"
_LIST_VALUE = "google.protobuf.ListValue"
_DYNAMIC = (_VALUE, _STRUCT, _LIST_VALUE)


def to_dict(obj: Message) -> dict[str, Any]:
    """The object as Kubernetes' JSON data model (a dict ready for ``json.dumps`` or ``yaml.dump``)."""
    return _message(obj)


def to_json(obj: Message) -> str:
    """Kubernetes JSON, indented by two spaces as ``kubectl get -o json`` prints it."""
    return json.dumps(to_dict(obj), indent=2, ensure_ascii=False)


def to_yaml(obj: Message) -> str:
    """Block-style YAML with keys in Kubernetes' order, as ``kubectl get -o yaml`` prints it."""
    return yaml.safe_dump(to_dict(obj), sort_keys=False, default_flow_style=False, allow_unicode=True)


def _message(msg: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        out[field.json_name] = _field(field, value)
    return out


def _field(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {str(key): _single(value_field, item) for key, item in value.items()}
    if field.is_repeated:
        return [_single(field, item) for item in value]
    return _single(field, value)


def _single(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert field.message_type is not None, "a message field has a message type"
        full_name = field.message_type.full_name
        if full_name == _TIMESTAMP:
            return value.ToJsonString()
        if full_name in _DYNAMIC:
            return _integral_numbers(json_format.MessageToDict(value))
        return _message(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None, "an enum field has an enum type"
        enum_value = field.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else value
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode("ascii")
    # Every integer width (int64 included) is a plain Python int here: JSON gets a number.
    return value


def _integral_numbers(data: Any) -> Any:
    """``google.protobuf.Value`` numbers are doubles; an IntOrString's 2 must print as 2, not 2.0."""
    if isinstance(data, float) and data.is_integer():
        return int(data)
    if isinstance(data, dict):
        return {key: _integral_numbers(item) for key, item in data.items()}
    if isinstance(data, list):
        return [_integral_numbers(item) for item in data]
    return data
