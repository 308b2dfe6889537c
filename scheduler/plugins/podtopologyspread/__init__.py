"""PodTopologySpread: spread pods over topology domains, as kube-scheduler's plugin.

``common`` (constraints, eligible nodes, per-node counts), ``filtering`` (PreFilter, Filter,
AddPod/RemovePod: DoNotSchedule constraints), ``scoring`` (PreScore, Score, NormalizeScore:
ScheduleAnyway constraints) and ``plugin`` (the plugin class, queueing hints).
"""

from scheduler.plugins.podtopologyspread.filtering import (
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
)
from scheduler.plugins.podtopologyspread.plugin import (
    ARGS,
    NAME,
    PodTopologySpread,
    PodTopologySpreadArgs,
    new,
    node_change_hint,
    pod_change_hint,
)

__all__ = [
    "ARGS",
    "NAME",
    "REASON_CONSTRAINTS_NOT_MATCH",
    "REASON_NODE_LABEL_NOT_MATCH",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
    "node_change_hint",
    "pod_change_hint",
]
