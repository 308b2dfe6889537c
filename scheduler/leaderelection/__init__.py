"""Leader election for scheduler replicas: a `LeaderElector` on a `LeaseLock` (a coordination.k8s.io/v1
Lease through the API server). Only the leader schedules, under the fencing token its term carries. Every
replica keeps a `Candidacy` (its coordination.k8s.io/v1beta1 LeaseCandidate), so that standbys are seen.

The modules behind this face promise nothing more.
"""

from cluster.api.fencing import FENCING_TOKEN_ANNOTATION
from scheduler.leaderelection.candidate import Candidacy
from scheduler.leaderelection.elector import LeaderElector, LeaseLost, default_identity, replica_identity
from scheduler.leaderelection.metrics import LeaderElectionCollector
from scheduler.leaderelection.resourcelock import (
    LeaderElectionRecord,
    LeaseLock,
    LeaseSnapshot,
    Lock,
)
from scheduler.leaderelection.timings import (
    DEFAULT_LEASE_DURATION_S,
    DEFAULT_RENEW_DEADLINE_S,
    DEFAULT_RETRY_PERIOD_S,
    JITTER_FACTOR,
    LeaderElectionTimings,
    TimingViolation,
    timing_violations,
    validate_timings,
)

__all__ = [
    "DEFAULT_LEASE_DURATION_S",
    "DEFAULT_RENEW_DEADLINE_S",
    "DEFAULT_RETRY_PERIOD_S",
    "FENCING_TOKEN_ANNOTATION",
    "JITTER_FACTOR",
    "Candidacy",
    "LeaderElectionCollector",
    "LeaderElectionRecord",
    "LeaderElectionTimings",
    "LeaderElector",
    "LeaseLock",
    "LeaseLost",
    "LeaseSnapshot",
    "Lock",
    "TimingViolation",
    "default_identity",
    "replica_identity",
    "timing_violations",
    "validate_timings",
]
