"""The flags docs/operations.md tells operators to set are flags the commands have: each table under
"Flags operators set" is headed by its command, and every ``--flag`` in a row's first column must appear
in that command's ``--help``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster.cli.main import build_parser

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
SECTION = "## Flags operators set"
#: A table's heading line: "`podsched apiserver`:".
TABLE_HEADING = re.compile(r"^`podsched (\w+)`:$")
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def documented_flags(markdown: str) -> dict[str, set[str]]:
    """Per command, the flags in the first column of its table in the section."""
    section = markdown.split(SECTION, 1)[1].split("\n## ", 1)[0]
    flags: dict[str, set[str]] = {}
    command = None
    for line in section.splitlines():
        if heading := TABLE_HEADING.match(line):
            command = heading[1]
            flags[command] = set()
        elif command is not None and line.startswith("| `"):
            flags[command] |= set(FLAG.findall(line.split(" | ")[0]))
    return flags


def command_flags(command: str) -> set[str]:
    parser = build_parser(command)
    subparsers = next(action for action in parser._actions if action.dest == "command")
    return set(FLAG.findall(subparsers.choices[command].format_help()))


def test_the_tables_name_the_commands_operators_run() -> None:
    assert set(documented_flags(OPERATIONS.read_text())) == {"apiserver", "scheduler"}


@pytest.mark.parametrize("command", ["apiserver", "scheduler"])
def test_every_documented_flag_is_one_the_command_has(command: str) -> None:
    documented = documented_flags(OPERATIONS.read_text())[command]
    assert documented, f"docs/operations.md's table for podsched {command} names no flag"
    unknown = documented - command_flags(command)
    assert not unknown, f"docs/operations.md names flags podsched {command} does not have: {sorted(unknown)}"
