"""What a loaded scheduler configuration is: the values the scheduler runs with, after decoding,
defaulting and validation (kube-scheduler's internal config types, pkg/scheduler/apis/config/types.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cluster.api.decoding import DecodeError
from cluster.api.fencing import SCHEDULER_LEASE
from scheduler.framework.registry import PluginSet
from scheduler.leaderelection.timings import (
    DEFAULT_LEASE_DURATION_S,
    DEFAULT_RENEW_DEADLINE_S,
    DEFAULT_RETRY_PERIOD_S,
)

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
#: Score weights podsched accepts. kube-scheduler only guards the int64 total; 1..100 keeps one plugin
#: from silently drowning every other (100 x MAX_NODE_SCORE already outweighs any default plugin 33x).
MIN_WEIGHT = 1
MAX_WEIGHT = 100

#: kube-scheduler's DefaultExtenderTimeout, used when an extender's httpTimeout is 0 or unset.
DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS = 5.0

#: podMaxInUnschedulablePodsDuration's default (kube-scheduler's flag): how long a pod may sit in the
#: unschedulable pods before a flush retries it.
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_SECONDS = 300.0


class ConfigError(DecodeError):
    """The configuration cannot be used; ``problems`` lists every one, each naming file and field path."""


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """componentbase LeaderElectionConfiguration with kube-scheduler's defaults."""

    #: kube-scheduler elects a leader unless told not to (``podsched scheduler --leader-elect=false``).
    leader_elect: bool = True
    #: How long a non-leader waits after the last observed renewal before taking over (15 s).
    lease_duration_seconds: float = DEFAULT_LEASE_DURATION_S
    #: How long the leader keeps retrying a renewal before it gives up leading (10 s; < lease duration).
    renew_deadline_seconds: float = DEFAULT_RENEW_DEADLINE_S
    #: Pause between acquire / renew attempts (2 s).
    retry_period_seconds: float = DEFAULT_RETRY_PERIOD_S
    resource_lock: str = "leases"
    resource_name: str = SCHEDULER_LEASE.name
    resource_namespace: str = SCHEDULER_LEASE.namespace


@dataclass(frozen=True, slots=True)
class ExtenderTLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    #: PEM bytes (base64 in the YAML, as Kubernetes encodes []byte); they take precedence over the files.
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    """One ``extenders[]`` entry (KEP-1819's Extender type)."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout_seconds: float = DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = ()
    ignorable: bool = False


@dataclass(frozen=True, slots=True)
class Profile:
    scheduler_name: str
    #: The plugins after kube-scheduler's defaulting; ``runtime.build_framework`` expands multiPoint.
    plugins: PluginSet
    #: Plugin name -> its args object (``argtypes`` for in-tree plugins; defaults applied) for every
    #: enabled plugin that takes arguments.
    plugin_args: Mapping[str, Any] = field(default_factory=dict)
    #: Overrides the global percentage for this profile when set (0 = kube-scheduler's adaptive rule).
    percentage_of_nodes_to_score: int | None = None


@dataclass(slots=True)
class SchedulerConfiguration:
    """Mutable so that ``podsched scheduler`` flags (--pod-max-in-unschedulable-pods-duration) can
    override what the file says."""

    profiles: list[Profile]
    #: None or 0: the adaptive rule (50% - nodes/125, at least 5%, at least 100 nodes).
    percentage_of_nodes_to_score: int | None = None
    #: First retry delay of a pod that failed (doubles per attempt).
    pod_initial_backoff_seconds: float = 1.0
    #: Ceiling of that delay.
    pod_max_backoff_seconds: float = 10.0
    pod_max_in_unschedulable_pods_seconds: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_SECONDS
    leader_election: LeaderElectionConfig = LeaderElectionConfig()
    extenders: list[ExtenderConfig] = field(default_factory=list)
    #: Opportunistic batching (kube-scheduler's SchedulerOpportunisticBatching feature gate, beta and on
    #: by default in 1.35); set by ``--feature-gates``, not by the file.
    opportunistic_batching: bool = True
    #: The file it was read from ("" for the defaults), for messages.
    source: str = ""

    def percentage_for(self, profile: Profile) -> int | None:
        """The percentageOfNodesToScore a profile's cycles use: its own if set, else the global one."""
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score
