"""podsched's release, as `podsched version`, the API server's Version call and the scheduler's
LeaseCandidate (its binaryVersion) report it."""

from __future__ import annotations

import importlib.metadata

PODSCHED_VERSION = importlib.metadata.version("podsched")
