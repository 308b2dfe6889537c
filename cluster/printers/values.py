"""Values as kubectl prints them in tables and describe: ages, taints, tolerations, IntOrStrings, label
maps, quantities, an event's time and object."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, timeutil

NONE = "<none>"
UNKNOWN = "<unknown>"


def since(ts: Timestamp, now: float) -> str:
    """How long before ``now`` (seconds since the epoch) ``ts`` was, as kubectl prints it; "<unknown>" for
    an unset timestamp."""
    if not timeutil.is_set(ts):
        return UNKNOWN
    return timeutil.human_duration(now - (ts.seconds + ts.nanos / 1e9))


def age(meta: objects_pb2.ObjectMeta, now: float) -> str:
    return since(meta.creation_timestamp, now)


def or_none(text: str) -> str:
    return text or NONE


def taint_text(taint: objects_pb2.Taint) -> str:
    """`key=value:Effect`, as kubectl prints a taint."""
    text = taint.key + (f"={taint.value}" if taint.value else "")
    return f"{text}:{taint.effect}" if taint.effect else text


def toleration_text(toleration: objects_pb2.Toleration) -> str:
    """A toleration as `podsched describe` prints it: `key=value:Effect`, with `op=Exists` for one that
    matches any value and the seconds it lasts."""
    text = toleration.key
    if toleration.value:
        text += f"={toleration.value}"
    if toleration.effect:
        text += f":{toleration.effect}"
    if toleration.operator == "Exists" and not toleration.value:
        text += " op=Exists" if toleration.key else "op=Exists"
    if toleration.HasField("toleration_seconds"):
        text += f" for {toleration.toleration_seconds}s"
    return text


def int_or_string(value: struct_pb2.Value) -> str:
    """An IntOrString carried as a protobuf Value: 2 prints "2", "50%" prints "50%"."""
    if value.WhichOneof("kind") == "number_value":
        number = value.number_value
        return str(int(number)) if number.is_integer() else str(number)
    if value.WhichOneof("kind") == "string_value":
        return value.string_value
    return "N/A"


def event_time(event: objects_pb2.Event) -> Timestamp:
    """When the event last happened: its lastTimestamp, else its first, else its creation (unset when
    it has none of them)."""
    for ts in (event.last_timestamp, event.first_timestamp, event.metadata.creation_timestamp):
        if timeutil.is_set(ts):
            return ts
    return event.last_timestamp


def event_last_seen(event: objects_pb2.Event) -> str:
    ts = event_time(event)
    return timeutil.age(ts) if timeutil.is_set(ts) else UNKNOWN


def involved_object(event: objects_pb2.Event) -> str:
    """``kind/name`` of the event's object, the kind in lower case; the kind alone when it has no name."""
    ref = event.involved_object
    return f"{ref.kind.lower()}/{ref.name}" if ref.name else ref.kind.lower()


def map_selector_text(selector: Mapping[str, str]) -> str:
    """A label map as a selector (a Service's, a ReplicationController's): ``k=v`` pairs by key, joined
    by commas; empty for an empty map."""
    return ",".join(f"{key}={selector[key]}" for key in sorted(selector))


def format_quantity(name: str, value: Fraction) -> str:
    """A sum of quantities written back as kubectl would: cpu in cores or millicores, memory in the
    largest binary unit that divides it."""
    if name == "cpu":
        milli = value * 1000
        if value.denominator == 1:
            return str(value.numerator)
        return f"{-(-milli.numerator // milli.denominator)}m"
    if value.denominator != 1:
        milli = value * 1000
        return f"{-(-milli.numerator // milli.denominator)}m"
    whole = value.numerator
    for suffix, unit in (
        ("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10),
        ("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3),
    ):
        if whole and whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)
