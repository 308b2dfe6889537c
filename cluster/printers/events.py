"""How clients print Event objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import Columns
from cluster.printers.values import NONE, event_last_seen, involved_object


def _event_row(event: objects_pb2.Event) -> list[str]:
    return [event_last_seen(event), event.type, event.reason, involved_object(event), event.message]


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
    Columns(("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"), _event_row),
    _describe_event,
    with_events=False,
)
