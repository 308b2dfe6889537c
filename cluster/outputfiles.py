"""Files a long command writes besides its output (--json, --plot): checked before the work starts, so
that a run of minutes does not end in "cannot write". Plots need matplotlib, an optional extra, since only
they use it; it is imported where a plot is drawn, never here. And files that hold a secret (a key, a
token, a kubeconfig), written with their mode from the first byte."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

#: How to get what a plot needs.
PLOT_INSTALL = "pip install 'podsched[plot]'"


def check_writable(path: str) -> None:
    """OSError naming ``path`` when a file cannot be created there."""
    directory = Path(path).resolve().parent
    if Path(path).is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    with tempfile.NamedTemporaryFile(dir=directory, prefix=".podsched-", delete=True):
        pass


def can_plot() -> bool:
    """Whether matplotlib is installed (it is not imported until a plot is drawn)."""
    return importlib.util.find_spec("matplotlib") is not None


def write_with_mode(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` with ``mode`` from the first byte (a key is never readable by others, even briefly),
    replacing any file there; the parent directories are made 0700."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
