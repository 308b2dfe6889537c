"""kubectl's tables: a kind's columns, and the aligned layout.

Every column function reads one object and nothing else, so a table of 10,000 pods costs one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic

from cluster.api.kinds import M

# kubectl's tabwriter puts three spaces between columns.
_PADDING = 3


@dataclass(frozen=True, slots=True)
class Columns(Generic[M]):
    header: tuple[str, ...]
    row: Callable[[M], list[str]]
    wide_header: tuple[str, ...] = ()
    wide_row: Callable[[M], list[str]] | None = None

    def headers(self, wide: bool) -> list[str]:
        return [*self.header, *(self.wide_header if wide else ())]

    def cells(self, obj: M, wide: bool) -> list[str]:
        cells = self.row(obj)
        if wide and self.wide_row is not None:
            cells += self.wide_row(obj)
        return cells


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
