"""What a command's process imports at start: libraries only some configurations use are imported when
they are used, since every `podsched scheduler` and `podsched simulate` process (and every one the
tests start) would otherwise pay for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imported_at_start(module: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys, {module}; print(' '.join(sys.modules))"],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    return set(done.stdout.split())


def test_the_scheduler_and_simulate_commands_do_not_import_the_extenders_http_client() -> None:
    for command in ("cluster.cli.scheduler", "cluster.simulate"):
        imported = _imported_at_start(command)
        assert "scheduler.scheduler" in imported, command  # the scheduler itself is loaded
        assert "aiohttp" not in imported, command
