"""The ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration as it is written: the schema the
strict decoder (``cluster.api.decoding.decode``) reads a file into, before defaulting and validation.

Every field is optional here, as in kube-scheduler's versioned types (pointers there, None here): what
was not written is None until ``defaults.set_defaults`` fills it. Attribute names are the wire names in
snake_case; ``field_path`` is where the decoder found the object, for messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cluster.api.decoding import Duration, wire
from scheduler.framework.registry import EXTENSION_POINTS, MULTI_POINT

#: The beta additions of topology-aware workload scheduling that podsched does not have: it simulates every
#: placement the generators return, without early rejection or a limit on the placements scored.
_NO_PLACEMENT_LIMITS = ("podsched simulates every placement of a pod group, without early rejection or "
                        "a limit on the placements scored")


@dataclass(slots=True)
class Plugin:
    name: str | None = None
    weight: int | None = None
    field_path: str = ""


@dataclass(slots=True)
class PluginSet:
    enabled: list[Plugin] | None = None
    disabled: list[Plugin] | None = None
    field_path: str = ""


@dataclass(slots=True)
class Plugins:
    """One set per extension point (``scheduler.framework.registry.EXTENSION_POINTS``) and multiPoint."""

    #: Extension points kube-scheduler v1 has and podsched does not: a clear "not supported", not "unknown".
    UNSUPPORTED: ClassVar[dict[str, str]] = {
        "placementFeasible": _NO_PLACEMENT_LIMITS,
    }

    multi_point: PluginSet | None = None
    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pod_group_post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None
    placement_generate: PluginSet | None = None
    placement_score: PluginSet | None = None
    field_path: str = ""

    def sets(self) -> Iterator[tuple[str, PluginSet | None]]:
        """(wire name, set) of multiPoint and then each extension point, in the framework's order."""
        for point, attribute in POINT_ATTRIBUTES.items():
            yield point, getattr(self, attribute)


#: Each extension point's wire name and its attribute on ``Plugins``, multiPoint first.
POINT_ATTRIBUTES: dict[str, str] = {
    point: "".join("_" + c.lower() if c.isupper() else c for c in point)
    for point in (MULTI_POINT, *EXTENSION_POINTS)
}


@dataclass(slots=True)
class PluginConfig:
    name: str | None = None
    #: Decoded by ``pluginargs`` once the plugin is known: its schema depends on the plugin.
    args: dict[str, Any] | None = None
    field_path: str = ""


@dataclass(slots=True)
class Profile:
    UNSUPPORTED: ClassVar[dict[str, str]] = {"percentageOfPlacementsToScore": _NO_PLACEMENT_LIMITS}

    scheduler_name: str | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] | None = None
    percentage_of_nodes_to_score: int | None = None
    field_path: str = ""


@dataclass(slots=True)
class LeaderElection:
    """componentbase's LeaderElectionConfiguration."""

    leader_elect: bool | None = None
    lease_duration: Duration | None = None
    renew_deadline: Duration | None = None
    retry_period: Duration | None = None
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


@dataclass(slots=True)
class ClientConnection:
    """Read so that a typo inside it is caught; podsched reaches its API server with ``--server``."""

    kubeconfig: str | None = None
    accept_content_types: str | None = None
    content_type: str | None = None
    qps: float | None = None
    burst: int | None = None


@dataclass(slots=True)
class ExtenderTLSConfig:
    insecure: bool | None = None
    server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    ca_file: str | None = None
    cert_data: bytes | None = None
    key_data: bytes | None = None
    ca_data: bytes | None = None


@dataclass(slots=True)
class ExtenderManagedResource:
    name: str | None = None
    ignored_by_scheduler: bool | None = None
    field_path: str = ""


@dataclass(slots=True)
class Extender:
    url_prefix: str | None = None
    filter_verb: str | None = None
    preempt_verb: str | None = None
    prioritize_verb: str | None = None
    bind_verb: str | None = None
    weight: int | None = None
    enable_https: bool | None = field(default=None, metadata=wire("enableHTTPS"))
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: Duration | None = None
    node_cache_capable: bool | None = None
    managed_resources: list[ExtenderManagedResource] | None = None
    ignorable: bool | None = None
    field_path: str = ""


@dataclass(slots=True)
class KubeSchedulerConfiguration:
    UNSUPPORTED: ClassVar[dict[str, str]] = {
        "delayCacheUntilActive": "podsched always fills its caches on start",
        "percentageOfPlacementsToScore": _NO_PLACEMENT_LIMITS,
    }

    api_version: str | None = None
    kind: str | None = None
    profiles: list[Profile] | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    leader_election: LeaderElection | None = None
    extenders: list[Extender] | None = None
    # Accepted and ignored (see the package docstring), but still type-checked.
    client_connection: ClientConnection | None = None
    parallelism: int | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
