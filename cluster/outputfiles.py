"""Files a long command writes besides its output (--json, --plot): checked before the work starts, so
that a run of minutes does not end in "cannot write". Plots need matplotlib, an optional extra, since only
they use it; it is imported where a plot is drawn, never here."""

from __future__ import annotations

import importlib.util
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
