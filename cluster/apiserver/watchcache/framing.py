"""A WatchEvent's wire bytes, framed around an object's own serialized bytes: the object is serialized
once per event and the frame around it costs a few bytes, instead of copying the object into a WatchEvent
and serializing that for every watcher."""

from __future__ import annotations

from cluster.api import apiserver_pb2
from cluster.api.kinds import Kind

_VARINT = 0
_LENGTH_DELIMITED = 2
_ENVELOPE_FIELDS = {field.name: field.number for field in apiserver_pb2.Object.DESCRIPTOR.fields}


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


_EVENT_FIELDS = apiserver_pb2.WatchEvent.DESCRIPTOR.fields_by_name
_EVENT_TYPE_TAG = _tag(_EVENT_FIELDS["type"].number, _VARINT)
_EVENT_OBJECT_TAG = _tag(_EVENT_FIELDS["object"].number, _LENGTH_DELIMITED)


def watch_event_bytes(type_: apiserver_pb2.WatchEvent.Type, kind: Kind, object_bytes: bytes) -> bytes:
    """The serialized ``WatchEvent(type=type_, object=Object(<kind's field>=<the object>))``."""
    envelope = _tag(_ENVELOPE_FIELDS[kind.envelope_field], _LENGTH_DELIMITED) + _varint(len(object_bytes))
    inner_length = len(envelope) + len(object_bytes)
    return b"".join((
        _EVENT_TYPE_TAG, _varint(type_), _EVENT_OBJECT_TAG, _varint(inner_length), envelope, object_bytes
    ))
