"""The chaos tests print their measured failover times at the end of every session that ran them."""

from __future__ import annotations

import pytest
from _pytest.terminal import TerminalReporter

from tests.chaos.summary import SUMMARY_LINES


def pytest_terminal_summary(terminalreporter: TerminalReporter, config: pytest.Config) -> None:
    lines = config.stash.get(SUMMARY_LINES, None)
    if lines:
        terminalreporter.section("chaos: measured failovers")
        for line in lines:
            terminalreporter.write_line(line)
