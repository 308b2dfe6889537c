"""How clients print Event objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2, timeutil
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, involved_object, since


def _source(event: objects_pb2.Event) -> str:
    """The reporter: ``component, host``, each falling back to events.k8s.io's reporting fields."""
    component = event.source.component or event.reporting_component
    instance = event.source.host or event.reporting_instance
    return f"{component}, {instance}" if instance else component


def _event_row(event: objects_pb2.Event, now: float) -> list[Cell]:
    first = since(event.first_timestamp, now) if timeutil.is_set(event.first_timestamp) else since(
        event.event_time, now)
    last = since(event.last_timestamp, now) if timeutil.is_set(event.last_timestamp) else first
    count = event.count
    if event.HasField("series"):
        last, count = since(event.series.last_observed_time, now), event.series.count
    elif count == 0:
        # An events.k8s.io singleton carries no count.
        count = 1
    return [last, event.type, event.reason, involved_object(event), event.involved_object.field_path,
            _source(event), event.message.strip(), first, count, event.metadata.name]


async def _describe_event(reader: Reader, event: objects_pb2.Event, text: DescribeText) -> None:
    name_fields(text, event, namespaced=True)
    text.field("Type", event.type)
    text.field("Reason", event.reason)
    text.field("Object", involved_object(event))
    text.field("Message", event.message)
    text.field("Source", event.source.component or event.reporting_component or NONE)
    text.field("Count", event.count)
    text.field("First Timestamp", time_text(event.first_timestamp))
    text.field("Last Timestamp", time_text(event.last_timestamp))


PRINTER = Printer(
    kinds.EVENT,
    Columns((
        Column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
        Column("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
        Column("Reason", "This should be a short, machine understandable string that gives the reason for "
                         "the transition into the object's current status."),
        Column("Object", "The object that this event is about."),
        wide(Column("Subobject", "If referring to a piece of an object instead of an entire object, this "
                                 "string should contain a valid JSON/Go field access statement, such as "
                                 "desiredState.manifest.containers[2].")),
        wide(Column("Source", "The component reporting this event. Should be a short machine understandable "
                              "string.")),
        Column("Message", "A human-readable description of the status of this operation."),
        wide(Column("First Seen", "The time at which the event was first recorded. (Time of server receipt "
                                  "is in TypeMeta.)")),
        wide(Column("Count", "The number of times this event has occurred.")),
        wide(NAME),
    ), _event_row),
    _describe_event,
    with_events=False,
)
