"""What a client prints of one kind: its table columns (`podsched get`) and its describe sections
(`podsched describe`), as kubectl's printers.go and describe.go hold them per kind. Each kind's module in
this package declares one ``Printer``; catalog.py indexes them, and the API server's registry entry of the
kind refers to the same one."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic

from cluster.api.kinds import Kind, M
from cluster.printers.describe import DescribeText, Reader
from cluster.printers.table import Columns


class Explained(enum.Enum):
    """What the scheduler's events explain of an object, shown between its describe sections and its
    events (the client that describes knows how to read each)."""

    NOTHING = "nothing"
    #: The scheduler's last attempt at a pod (and, for a pod no scheduler wrote about, whether any runs).
    POD_ATTEMPT = "pod attempt"
    #: The scheduler's last whole-group attempt at a PodGroup.
    GROUP_ATTEMPT = "group attempt"


@dataclass(frozen=True, slots=True)
class Printer(Generic[M]):
    kind: Kind[M]
    columns: Columns[M]
    #: The describe sections of an object: ``describe(reader, obj, text)``.
    describe: Callable[[Reader, M, DescribeText], Awaitable[None]]
    #: Whether `describe` ends with the events about the object (an Event has none of its own).
    with_events: bool = True
    explained: Explained = Explained.NOTHING
