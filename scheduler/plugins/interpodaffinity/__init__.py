"""InterPodAffinity: required and preferred pod affinity / anti-affinity, as kube-scheduler's plugin.

``filtering`` (PreFilter, Filter, AddPod/RemovePod), ``scoring`` (PreScore, Score, NormalizeScore) and
``plugin`` (the plugin class, queueing hints).
"""

from scheduler.plugins.interpodaffinity.filtering import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
)
from scheduler.plugins.interpodaffinity.plugin import (
    ARGS,
    NAME,
    InterPodAffinity,
    InterPodAffinityArgs,
    namespace_change_hint,
    new,
    node_change_hint,
    pod_change_hint,
)

__all__ = [
    "ARGS",
    "NAME",
    "REASON_AFFINITY",
    "REASON_ANTI_AFFINITY",
    "REASON_EXISTING_ANTI_AFFINITY",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "namespace_change_hint",
    "new",
    "node_change_hint",
    "pod_change_hint",
]
