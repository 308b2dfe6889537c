"""kubectl's tables: a kind's columns, and the aligned layout.

A kind's columns are those of Kubernetes' server-side printers (pkg/printers/internalversion): each has
its name, OpenAPI type and description, and a priority (0 shown always, 1 only by ``-o wide``). The same
columns make `podsched get`'s text and the meta.k8s.io Table the HTTP API sends kubectl. Every column
function reads one object and nothing else, so a table of 10,000 pods costs one pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic

from cluster.api.kinds import M

# kubectl's tabwriter puts three spaces between columns.
_PADDING = 3

#: A Table cell: text, or a number or boolean where the column's type says so.
Cell = str | int | bool

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATION_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this "
    "value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for "
    "lists."
)


@dataclass(frozen=True, slots=True)
class Column:
    """One column as a Table's columnDefinitions entry declares it."""

    name: str
    description: str
    #: OpenAPI type of the cells: "string", "integer", "boolean", "date".
    type: str = "string"
    #: "name" marks the column holding the object's name.
    format: str = ""
    #: 0: always shown; 1: only with ``-o wide``.
    priority: int = 0

    @property
    def header(self) -> str:
        # kubectl prints a column's name upper-cased.
        return self.name.upper()


NAME = Column("Name", NAME_DESCRIPTION, format="name")
AGE = Column("Age", CREATION_DESCRIPTION)


def wide(column: Column) -> Column:
    """``column`` shown only by ``-o wide``."""
    return Column(column.name, column.description, column.type, column.format, priority=1)


def cell_text(cell: Cell) -> str:
    """A cell as kubectl prints it: booleans as Go prints them."""
    if isinstance(cell, bool):
        return "true" if cell else "false"
    return str(cell)


@dataclass(frozen=True, slots=True)
class Columns(Generic[M]):
    columns: tuple[Column, ...]
    #: Every column's cell of one object, wide ones included, in the columns' order, at a time ("now", in
    #: seconds since the epoch: the AGE columns count up to it).
    row: Callable[[M, float], list[Cell]]
    #: Where the columns shown without ``-o wide`` are.
    _normal: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        normal = tuple(i for i, column in enumerate(self.columns) if column.priority == 0)
        object.__setattr__(self, "_normal", normal)

    def headers(self, wide: bool) -> list[str]:
        if wide:
            return [column.header for column in self.columns]
        return [self.columns[i].header for i in self._normal]

    def cells(self, obj: M, wide: bool, now: float | None = None) -> list[str]:
        """The text of the row's cells, as `podsched get` prints them (at ``now``, the current time unless
        given)."""
        cells = self.row(obj, time.time() if now is None else now)
        if wide:
            return [cell_text(cell) for cell in cells]
        return [cell_text(cells[i]) for i in self._normal]


class TableWriter:
    """Aligns rows as kubectl's tabwriter does. Rows printed later (by `get -w`) keep the widths
    already printed, growing a column only when a cell needs it."""

    def __init__(self, header: Sequence[str]) -> None:
        self._header = list(header)
        self._widths = [len(cell) for cell in header]

    def _fit(self, rows: Iterable[Sequence[str]]) -> None:
        for row in rows:
            for i, cell in enumerate(row):
                self._widths[i] = max(self._widths[i], len(cell))

    def _line(self, row: Sequence[str]) -> str:
        last = len(row) - 1
        return "".join(
            cell if i == last else cell.ljust(self._widths[i] + _PADDING) for i, cell in enumerate(row)
        )

    def table(self, rows: Sequence[Sequence[str]]) -> list[str]:
        """The header and the rows."""
        self._fit(rows)
        return [self._line(self._header), *(self._line(row) for row in rows)]

    def row(self, row: Sequence[str]) -> str:
        self._fit([row])
        return self._line(row)
