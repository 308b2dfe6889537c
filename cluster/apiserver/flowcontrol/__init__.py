"""Flow control for the API server, in the spirit of Kubernetes' API Priority and Fairness:
each request is classified into a priority level (schemas.py), waits fairly for one of that level's
seats (fairqueue.py) or is refused with TooManyRequests, and runs holding it (gate.py). Lease renewals
and scheduler traffic have levels of their own, so client traffic never queues in front of them.

config.py: FlowControlConfig, the server's concurrency limit and the queues' bounds.
"""

from cluster.apiserver.flowcontrol.config import FlowControlConfig
from cluster.apiserver.flowcontrol.gate import FlowControl, nominal_seats, watch_started
from cluster.apiserver.flowcontrol.schemas import (
    EXEMPT,
    GLOBAL_DEFAULT,
    LEADER_ELECTION,
    WORKLOAD_HIGH,
    Classification,
    FlowSchemas,
)

__all__ = [
    "EXEMPT",
    "GLOBAL_DEFAULT",
    "LEADER_ELECTION",
    "WORKLOAD_HIGH",
    "Classification",
    "FlowControl",
    "FlowControlConfig",
    "FlowSchemas",
    "nominal_seats",
    "watch_started",
]
