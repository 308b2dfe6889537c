"""`podsched apiserver --max-requests-inflight / --max-mutating-requests-inflight`: bad values stop the
start with one line naming the flag (exit 1), before any store is opened; a non-number is a usage error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def apiserver(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "127.0.0.1:0",
         "--data-dir", str(tmp_path / "data"), *flags],
        capture_output=True, text=True, cwd=REPO, timeout=60, stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-requests-inflight", "-1"], "--max-requests-inflight must not be negative, got -1"),
        (["--max-mutating-requests-inflight", "-3"],
         "--max-mutating-requests-inflight must not be negative, got -3"),
        (["--max-requests-inflight", "0", "--max-mutating-requests-inflight", "0"],
         "--max-requests-inflight plus --max-mutating-requests-inflight is the server's concurrency limit "
         "and must be positive, got 0 + 0"),
    ],
    ids=["negative", "negative-mutating", "zero-sum"],
)
def test_a_bad_limit_stops_the_start_naming_the_flag(tmp_path: Path, flags: list[str], message: str) -> None:
    done = apiserver(tmp_path, *flags)
    assert done.returncode == 1
    assert done.stderr.strip() == f"podsched apiserver: {message}"
    assert not (tmp_path / "data").exists()


def test_a_limit_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    done = apiserver(tmp_path, "--max-requests-inflight", "many")
    assert done.returncode == 2
    assert "argument --max-requests-inflight: invalid int value: 'many'" in done.stderr
