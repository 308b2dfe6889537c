"""kubectl describe's layout and the sections many kinds share: `Label:  value` fields, times, selectors,
containers, the pods a selector picks, and the events about an object. What a client's describe may read
besides the object is a ``Reader`` (cluster.client's Client is one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, kinds, objects_pb2, timeutil
from cluster.api.kinds import Kind
from cluster.api.selectors import LabelSelector
from cluster.printers.values import NONE, event_last_seen


#: How many pods a line naming several (a reason they share) lists by name.
class Listed(Protocol):
    @property
    def items(self) -> list[Any]: ...


class Reader(Protocol):
    """What a describer may read besides the object itself (the client's List, which cluster.client's
    Client has): the pods on a node, the members of a group, the pods a selector picks."""

    async def list_all(
        self, kind: Kind[Any], namespace: str = "", *, label_selector: str = "", field_selector: str = ""
    ) -> Listed: ...



NAMES_SHOWN = 3


class DescribeText:
    """kubectl's describe layout: `Label:  value` lines whose values line up within each run of
    fields at one indent level, sections that nest by two spaces, and aligned sub-"""

    def __init__(self) -> None:
        # Each entry: (level, label or None for a plain line, value lines).
        self._entries: list[tuple[int, str | None, list[str]]] = []

    def field(self, label: str, value: object, level: int = 0) -> None:
        lines = str(value).split("\n") if str(value) != "" else [""]
        self._entries.append((level, label + ":", lines))

    def section(self, label: str, level: int = 0) -> None:
        self.line(label + ":", level)

    def line(self, text: str, level: int = 0) -> None:
        self._entries.append((level, None, [text]))

    def mapping(self, label: str, values: Mapping[str, str], level: int = 0, sep: str = "=") -> None:
        """A field whose value is one `key=value` line per item, sorted, or <none>."""
        lines = [f"{key}{sep}{values[key]}" for key in sorted(values)]
        self.field(label, "\n".join(lines) if lines else NONE, level)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], level: int = 1,
              underline: bool = False) -> None:
        lines = [header, *([["-" * len(cell) for cell in header]] if underline else []), *rows]
        widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
        for row in lines:
            cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
            self.line("  ".join(cells).rstrip(), level)

    def render(self) -> str:
        out: list[str] = []
        i = 0
        while i < len(self._entries):
            level, label, value = self._entries[i]
            if label is None:
                out.append("  " * level + value[0])
                i += 1
                continue
            # A run of fields at this level, with anything nested deeper inside it, aligns its values.
            run_end = i
            width = 0
            while run_end < len(self._entries):
                lvl, lbl, _ = self._entries[run_end]
                if lvl < level or (lvl == level and lbl is None):
                    break
                if lvl == level and lbl is not None:
                    width = max(width, len(lbl))
                run_end += 1
            for lvl, lbl, lines in self._entries[i:run_end]:
                indent = "  " * lvl
                if lbl is None:
                    out.append(indent + lines[0])
                    continue
                pad = (width if lvl == level else len(lbl)) + 2
                out.append((indent + lbl.ljust(pad) + lines[0]).rstrip())
                out.extend(indent + " " * pad + rest for rest in lines[1:])
            i = run_end
        return "\n".join(out) + "\n"


def time_text(ts: Timestamp) -> str:
    """kubectl's RFC 1123 time: `Mon, 02 Jan 2006 15:04:05 +0000`."""
    if not timeutil.is_set(ts):
        return NONE
    return timeutil.to_datetime(ts).strftime("%a, %d %b %Y %H:%M:%S %z")


def selector_text(selector: objects_pb2.LabelSelector, present: bool) -> str:
    if not present:
        return "<unset>"
    try:
        text = str(LabelSelector.from_proto(selector))
    except errors.Invalid as exc:
        return f"<invalid: {exc.message}>"
    return text or "<empty: every pod>"


def name_fields(text: DescribeText, obj: Message, *, namespaced: bool) -> None:
    meta = kinds.metadata_of(obj)
    text.field("Name", meta.name)
    if namespaced:
        text.field("Namespace", meta.namespace)


def _ports(container: objects_pb2.Container) -> str:
    ports = [f"{p.container_port}/{p.protocol or 'TCP'}" for p in container.ports]
    return ", ".join(ports) if ports else NONE


def container_section(text: DescribeText, container: objects_pb2.Container) -> None:
    text.section(container.name, 1)
    text.field("Image", container.image, 2)
    text.field("Port", _ports(container), 2)
    if container.HasField("restart_policy"):
        # Only an init container has one, and only Always: a sidecar, running beside the app containers.
        text.field("Restart Policy", container.restart_policy, 2)
    if container.command:
        text.field("Command", "\n".join(container.command), 2)
    if container.args:
        text.field("Args", "\n".join(container.args), 2)
    for label, values in (("Limits", container.resources.limits), ("Requests", container.resources.requests)):
        if values:
            text.section(label, 2)
            for key in sorted(values):
                text.field(key, values[key], 3)
    env = [f"{e.name}:  {e.value}" for e in container.env]
    text.field("Environment", "\n".join(env) if env else NONE, 2)


def pods_named(names: Sequence[str]) -> str:
    """``w-1`` for one pod; ``5 pods: w-1, w-2, w-3 and 2 more`` for several."""
    if len(names) == 1:
        return names[0]
    shown = ", ".join(names[:NAMES_SHOWN])
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return f"{len(names)} pods: {shown}{more}"


def by_text(rows: Iterable[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """(names, text) rows grouped by text, in the order each text first appears: a gang's members
    usually wait for one reason, which is then printed once."""
    grouped: dict[str, list[str]] = {}
    for name, text in rows:
        grouped.setdefault(text, []).append(name)
    return [(names, text) for text, names in grouped.items()]


async def selected_pods(reader: Reader, namespace: str, selector: str) -> list[Any]:
    pods = (await reader.list_all(kinds.POD, namespace, label_selector=selector)).items
    return sorted(pods, key=lambda pod: pod.metadata.name)


def _event_age(event: objects_pb2.Event) -> str:
    last = event_last_seen(event)
    if event.count > 1 and timeutil.is_set(event.first_timestamp):
        return f"{last} (x{event.count} over {timeutil.age(event.first_timestamp)})"
    return last


def events_section(text: DescribeText, events: Iterable[objects_pb2.Event], hint: str | None = None) -> None:
    rows = [
        [e.type, e.reason, _event_age(e), e.source.component or e.reporting_component, e.message]
        for e in events
    ]
    if not rows:
        text.field("Events", f"{NONE}  ({hint})" if hint else NONE)
        return
    text.section("Events")
    text.table(["Type", "Reason", "Age", "From", "Message"], rows, underline=True)
