"""Fault injection against a running podsched deployment: `podsched chaos` kills the scheduler leader
in Docker (the compose file's chaos service) through the Docker Engine API.

The process-level faults of the chaos tests (tests/chaos) signal child processes directly and need none
of this.
"""

from cluster.chaos.docker import (
    DEFAULT_SOCKET,
    Container,
    ContainerNotFound,
    ContainerNotRunning,
    DockerEngine,
    DockerError,
    DockerUnavailable,
)
from cluster.chaos.leaderkill import (
    DEFAULT_LEASE,
    SIGNALS,
    KillResult,
    LeaderKiller,
    LeaseRef,
    Skipped,
    holder_hostname,
    signal_name,
)

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_SOCKET",
    "SIGNALS",
    "Container",
    "ContainerNotFound",
    "ContainerNotRunning",
    "DockerEngine",
    "DockerError",
    "DockerUnavailable",
    "KillResult",
    "LeaderKiller",
    "LeaseRef",
    "Skipped",
    "holder_hostname",
    "signal_name",
]
