"""CSV trace files: the header, the rows, and problems worded ``FILE:LINE:COLUMN: <column>: <problem>``."""

from __future__ import annotations

import codecs
import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from google.protobuf.message import Message

from cluster.api import objects_pb2, validation
from cluster.simulate.trace import bounds

T = TypeVar("T")

NOT_NON_NEGATIVE_INTEGER = "must be a non-negative integer"


class NotText(Exception):
    """The file is not UTF-8 text; the message names where the first byte that is not is."""


def read_text(path: str) -> str:
    """The file's text, a UTF-8 byte order mark dropped; raises OSError (the caller words it) or NotText."""
    with open(path, "rb") as handle:
        data = handle.read()
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        line_start = data.rfind(b"\n", 0, at) + 1
        column = len(data[max(line_start, start):at].decode("utf-8")) + 1
        line = data.count(b"\n", 0, at) + 1
        raise NotText(f"{path}:{line}: not UTF-8 text (byte 0x{data[at]:02x} at character {column} of the "
                      "line)") from None


@dataclass(frozen=True, slots=True)
class Header:
    """A file's first line that is not blank: a CSV header, or the start of YAML."""

    #: Its 1-based line number.
    line: int
    #: The line, stripped.
    text: str

    @property
    def cells(self) -> list[str]:
        return [cell.strip() for cell in next(csv.reader([self.text]), [])]


def read_header(text: str) -> Header | None:
    """The first line that is not blank; None for an empty file."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return Header(number, line.strip())
    return None


@dataclass(slots=True)
class Row:
    """One data row: its cells by column name, and the problems found in it."""

    path: str
    line: int
    cells: dict[str, str]
    #: 1-based column number of each column of the header.
    columns: Mapping[str, int]
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def add(self, column: str, problem: str) -> None:
        """A problem with the cell of ``column``; ``problem`` starts with the column's name."""
        self.problems.append(f"{self.where}:{self.columns[column]}: {problem}")

    def count_node(self, totals: bounds.ClusterTotals, node: objects_pb2.Node,
                   columns: Mapping[str, str]) -> None:
        """Add the node built from this row to ``totals``; a problem at the column (``columns``: resource ->
        column) of each resource whose total it takes past what the replay holds."""
        for resource in totals.add(node.status.allocatable):
            self.add(columns[resource], bounds.too_much_in_all(columns[resource], resource))

    def invalid(self, column: str, detail: str) -> None:
        self.add(column, validation.invalid(column, self.text(column), detail))

    def text(self, column: str) -> str:
        """The cell's text, stripped; "" when the file has no such column."""
        return self.cells.get(column, "").strip()

    def integer(self, column: str, maximum: int, *, default: int | None = None,
                too_large: str = "") -> int | None:
        """A non-negative integer up to ``maximum`` (above it, the problem ``too_large``, by default
        the replay's books'); ``default`` when the cell is empty and a default is given."""
        text = self.text(column)
        if not text and default is not None:
            return default
        if not text.isascii() or not text.isdigit():
            self.invalid(column, NOT_NON_NEGATIVE_INTEGER)
            return None
        # Compared by length first: Python refuses int() of more than 4300 digits.
        digits = text.lstrip("0") or "0"
        if len(digits) > len(str(maximum)) or int(digits) > maximum:
            self.invalid(column, too_large or bounds.too_large(maximum))
            return None
        return int(digits)

    def optional_integer(self, column: str, maximum: int, *, too_large: str = "") -> int | None:
        """``integer``, or None for an empty cell (no problem)."""
        return self.integer(column, maximum, too_large=too_large) if self.text(column) else None

    def optional_seconds(self, column: str) -> float | None:
        """A number of seconds (``bounds.seconds``), or None for an empty cell."""
        text = self.text(column)
        if not text:
            return None
        value, problem = bounds.seconds(text)
        if problem is not None:
            self.invalid(column, problem)
        return value

    def api_problems(self, problems: Sequence[str], field_columns: Mapping[str, str]) -> None:
        """The API validation's problems with the object built from this row: at the column the field
        came from when ``field_columns`` (field path prefix -> column) knows it, else at the row."""
        for problem in problems:
            column = next((name for prefix, name in field_columns.items()
                           if problem.startswith(prefix) and name in self.columns), None)
            if column is None:
                self.problems.append(f"{self.where}: {problem}")
            else:
                self.problems.append(f"{self.where}:{self.columns[column]}: {column}: {problem}")


def rows(path: str, text: str, header_: Header) -> Iterator[Row]:
    """The data rows after the header line (blank lines skipped); a row with the wrong number of
    fields comes with that problem and no cells."""
    header = header_.cells
    columns = {name: number for number, name in enumerate(header, start=1)}
    reader = csv.reader(text.splitlines())
    try:
        for cells in reader:
            line = reader.line_num
            if line <= header_.line or not any(cell.strip() for cell in cells):
                continue
            if len(cells) < len(header):
                missing = header[len(cells)]
                yield Row(path, line, {}, columns, [
                    f"{path}:{line}:{len(cells) + 1}: {missing}: Required value: the row has {len(cells)} "
                    f"fields, the header {len(header)}"])
            elif len(cells) > len(header):
                yield Row(path, line, {}, columns, [
                    f"{path}:{line}:{len(header) + 1}: row: Too many: the row has {len(cells)} fields, the "
                    f"header {len(header)}"])
            else:
                yield Row(path, line, dict(zip(header, cells, strict=True)), columns)
    except csv.Error:
        # The reader's one error for text: a field longer than its limit. Nothing after it is read.
        yield Row(path, reader.line_num, {}, columns, [
            f"{path}:{reader.line_num}: row: Too long: a field has more than {csv.field_size_limit()} "
            "characters"])


def load_rows(path: str, text: str, header: Header, *, key_column: str, key: Callable[[Row], object],
              build: Callable[[Row], T | None], api_object: Callable[[T], Message],
              field_columns: Mapping[str, str]) -> tuple[list[T], list[str]]:
    """What ``build`` makes of each row, and every problem in line order: the row's own, a repeated
    ``key``, and the API validation's of the object built from a row that has no other."""
    table = list(rows(path, text, header))
    report_duplicates([row for row in table if row.cells], key_column, key)
    built, problems = [], []
    for row in table:
        item = build(row) if row.cells else None
        if item is not None and not row.problems:
            row.api_problems(validation.validate_object(api_object(item)), field_columns)
        problems += row.problems
        if item is not None:
            built.append(item)
    return built, problems


def check_header(path: str, header: Header, required: Sequence[str], optional: Sequence[str]) -> list[str]:
    """Problems with a native header: unknown or repeated columns, required ones missing."""
    problems = []
    at = f"{path}:{header.line}"
    known = (*required, *optional)
    seen: set[str] = set()
    for number, name in enumerate(header.cells, start=1):
        if name not in known:
            problems.append(f"{at}:{number}: {name or 'header'}: Unsupported value: {name!r}: the "
                            f"columns are {','.join(known)}")
        elif name in seen:
            problems.append(f"{at}:{number}: {name}: Duplicate value: the column is given twice")
        seen.add(name)
    problems += [f"{at}:1: header: Required value: column {name} (required: {','.join(required)})"
                 for name in required if name not in seen]
    return problems


def check_exact_header(path: str, header_: Header, expected: Sequence[str]) -> list[str]:
    """A header that must be exactly ``expected`` (openb's)."""
    header = header_.cells
    if header == list(expected):
        return []
    at = f"{path}:{header_.line}"
    for number, name in enumerate(expected, start=1):
        found = header[number - 1] if number <= len(header) else ""
        if found != name:
            return [f"{at}:{number}: header: Invalid value: {found!r}: expected column {name} here; "
                    f"the columns are {','.join(expected)}"]
    return [f"{at}:{len(expected) + 1}: header: Too many: {len(header)} columns; the columns are "
            f"{','.join(expected)}"]


def report_duplicates(rows_: Sequence[Row], column: str, key: Callable[[Row], object]) -> None:
    """Report, at ``column``, every row whose ``key`` repeats an earlier row's, naming where the first was."""
    first: dict[object, Row] = {}
    for row in rows_:
        identity = key(row)
        if identity in first:
            row.add(column, validation.duplicate(column, row.text(column))
                    + f": already defined at {first[identity].where}")
        else:
            first[identity] = row
