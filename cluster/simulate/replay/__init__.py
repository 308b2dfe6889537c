"""`podsched replay`: a cluster trace replayed on a virtual clock through an in-process control plane,
once per scheduler configuration, measured over virtual time (docs/replay.md)."""

from cluster.simulate.replay.driver import Progress, WallTime
from cluster.simulate.replay.engine import ReplayError, ReplayRun, default_sample_every, replay
from cluster.simulate.replay.ledger import PodRecord
from cluster.simulate.replay.metrics import Sample

__all__ = ["PodRecord", "Progress", "ReplayError", "ReplayRun", "Sample", "WallTime", "default_sample_every",
           "replay"]
