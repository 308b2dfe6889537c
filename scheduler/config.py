"""The scheduler's configuration: a real ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration.

``load_config(path)`` reads the YAML (or JSON) file, applies kube-scheduler v1's defaults
(pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go) and validates it with kube-scheduler's
rules (validation/validation.go), plus two of podsched's own: unknown fields are rejected (kube-scheduler
decodes strictly too), and every plugin named must be in the plugin registry. All problems are reported
at once in one ``ConfigError``, each naming the file and the field path
(``sched.yaml: profiles[0].plugins.score.enabled[1].weight: Invalid value: 0: ...``).

What is read, and what each part becomes:

* ``profiles[]``: one ``Profile`` each. ``plugins`` per extension point and ``multiPoint``
  (``enabled`` / ``disabled`` lists of ``{name, weight}``, ``"*"`` in ``disabled`` dropping every
  default there) is merged into kube-scheduler's default plugins exactly as mergePluginSet does;
  ``pluginConfig[] {name, args}`` goes through the plugin module's ``ARGS.from_dict`` (defaults applied,
  also for enabled plugins that have no pluginConfig entry, as kube-scheduler appends default args).
* ``percentageOfNodesToScore`` (global and per profile), ``podInitialBackoffSeconds``,
  ``podMaxBackoffSeconds``, ``leaderElection`` and ``extenders`` (KEP-1819's webhooks: validated here,
  called by scheduler/extender/).
* Accepted and ignored, because real kube-scheduler configs nearly always carry them and they mean nothing
  here: ``clientConnection`` (kubeconfig, qps, burst: podsched reaches its API server with ``--server``),
  ``parallelism`` (Filter and Score run in one event loop, not on 16 goroutines) and
  ``enableProfiling`` / ``enableContentionProfiling`` (podsched serves no pprof endpoints).

``podMaxInUnschedulablePodsDuration`` is a kube-scheduler *flag*, not a config field; it lives here as
``pod_max_in_unschedulable_pods_seconds`` so the queue gets all its timings from one object, and the
``podsched scheduler`` flag of the same name overrides it.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from cluster.api.validation import duplicate, invalid, is_qualified_name, not_supported, required
from scheduler.framework.registry import (
    ALL_PLUGINS,
    EXTENSION_POINTS,
    MULTI_POINT,
    PluginLoadError,
    PluginRef,
    PluginSet,
    PointPlugins,
    Registry,
)
from scheduler.leaderelection import JITTER_FACTOR

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: kube-scheduler v1's default plugins (getDefaultPlugins), all through multiPoint and in its order,
#: restricted to the plugins podsched has. Weights matter only for Score.
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("DefaultBinder"),
)

#: Score weights podsched accepts. kube-scheduler only guards the int64 total; 1..100 keeps one plugin
#: from silently drowning every other (100 x MAX_NODE_SCORE already outweighs any default plugin 33x).
MIN_WEIGHT = 1
MAX_WEIGHT = 100

#: kube-scheduler's DefaultExtenderTimeout, used when an extender's httpTimeout is 0 or unset.
DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS = 5.0

#: podMaxInUnschedulablePodsDuration's default (kube-scheduler's flag; releases before it hard-coded
#: 60 s): how long a pod may sit in the unschedulable pods before a flush retries it.
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_SECONDS = 300.0


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` lists every one, each naming file and field path."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


# ----------------------------------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """componentbase LeaderElectionConfiguration with kube-scheduler's defaults."""

    #: kube-scheduler elects a leader unless told not to (``podsched scheduler --leader-elect=false``).
    leader_elect: bool = True
    #: How long a non-leader waits after the last observed renewal before taking over (15 s).
    lease_duration_seconds: float = 15.0
    #: How long the leader keeps retrying a renewal before it gives up leading (10 s; < lease duration).
    renew_deadline_seconds: float = 10.0
    #: Pause between acquire / renew attempts (2 s).
    retry_period_seconds: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


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
    #: Plugin name -> its args object (``ARGS.from_dict``, defaults applied) for every enabled plugin
    #: that takes arguments.
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
    #: The file it was read from ("" for the defaults), for messages.
    source: str = ""

    def percentage_for(self, profile: Profile) -> int | None:
        """The percentageOfNodesToScore a profile's cycles use: its own if set, else the global one."""
        if profile.percentage_of_nodes_to_score is not None:
            return profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score


# --------------------------------------------------------------------------------------------- entry


def load_config(path: str | None, registry: Registry | None = None) -> SchedulerConfiguration:
    """The configuration in ``path`` (YAML or JSON), or kube-scheduler's defaults when ``path`` is None.

    ``registry`` is every plugin the scheduler can run (default: the in-tree plugins)."""
    if path is None:
        return parse_config({"apiVersion": API_VERSION, "kind": KIND}, source="", registry=registry)
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no arbitrary objects
    except _DuplicateKey as exc:
        raise ConfigError([f"{path}: {exc}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise ConfigError([f"{path}: {where}YAML syntax error: {problem}"]) from None
    return parse_config(data, source=path, registry=registry)


def parse_config(
    data: Any, source: str = "<config>", registry: Registry | None = None
) -> SchedulerConfiguration:
    """Default and validate a decoded KubeSchedulerConfiguration document."""
    if registry is None:
        registry = in_tree_registry()
    parser = _Parser(registry)
    config = parser.configuration(data)
    if parser.problems:
        prefix = f"{source}: " if source else ""
        raise ConfigError([prefix + problem for problem in parser.problems])
    assert config is not None
    return SchedulerConfiguration(
        profiles=config.profiles,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=config.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=config.pod_max_backoff_seconds,
        leader_election=config.leader_election,
        extenders=config.extenders,
        source=source,
    )


def in_tree_registry() -> Registry:
    """The plugins podsched ships (``scheduler.plugins.registry.IN_TREE``)."""
    from scheduler.plugins.registry import IN_TREE  # the framework must not import plugins; config may

    return Registry(IN_TREE)


# ---------------------------------------------------------------------------------------------- YAML


class _DuplicateKey(Exception):
    pass


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (YAML would keep the last silently)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            mark = key_node.start_mark
            raise _DuplicateKey(f"line {mark.line + 1}, column {mark.column + 1}: duplicate key {key!r}")
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# ------------------------------------------------------------------------------------- Go durations

_DURATION_UNITS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string ("15s", "1m30s", "1.5h", "300ms", "0"), as metav1.Duration reads it."""
    sign = -1.0 if text.startswith("-") else 1.0
    rest = text[1:] if text.startswith(("-", "+")) else text
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f'invalid duration "{text}"')
    total = 0.0
    position = 0
    while position < len(rest):
        match = _DURATION_PART.match(rest, position)
        if match is None:
            raise ValueError(f'invalid duration "{text}"')
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    return sign * total


# ---------------------------------------------------------------------------------------- the parser

_MISSING = object()


@dataclass(slots=True)
class _Parsed:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int | None
    pod_initial_backoff_seconds: float
    pod_max_backoff_seconds: float
    leader_election: LeaderElectionConfig
    extenders: list[ExtenderConfig]


#: Fields kube-scheduler v1 has that podsched does not implement: a clear "not supported", not "unknown".
_UNSUPPORTED_TOP = {
    "delayCacheUntilActive": "podsched always fills its caches on start",
    "percentageOfPlacementsToScore": "podsched has no workload (pod group) scheduling",
}
_UNSUPPORTED_PROFILE = {"percentageOfPlacementsToScore": _UNSUPPORTED_TOP["percentageOfPlacementsToScore"]}
_PROFILE_FIELDS = ("schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore")
_EXTENDER_FIELDS = (
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb", "weight", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
)
_UNSUPPORTED_POINTS = {
    "preEnqueue": "podsched has no PreEnqueue plugins",
    "placementGenerate": "podsched has no workload (pod group) scheduling",
    "placementScore": "podsched has no workload (pod group) scheduling",
    "placementFeasible": "podsched has no workload (pod group) scheduling",
    "podGroupPostFilter": "podsched has no workload (pod group) scheduling",
}


class _Parser:
    """Walks one document, collecting every problem (with its field path) instead of stopping at the first."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.problems: list[str] = []

    def problem(self, text: str) -> None:
        self.problems.append(text)

    # ----------------------------------------------------------------------------- field helpers

    def fields(self, data: Any, path: str, known: Sequence[str],
               unsupported: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``data`` as a mapping, reporting what is not one of ``known`` (and dropping it)."""
        if data is None:
            return {}
        if not isinstance(data, Mapping):
            self.problem(_wrong_type(path or "<document>", data, "a mapping"))
            return {}
        out = {}
        for key, value in data.items():
            if unsupported and key in unsupported:
                self.problem(f'{_join(path, str(key))}: not supported by podsched ({unsupported[key]})')
            elif key not in known:
                self.problem(f'{path or "<document>"}: unknown field "{key}"')
            else:
                out[key] = value
        return out

    def integer(self, data: Mapping[str, Any], key: str, path: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(invalid(_join(path, key), value, "must be an integer"))
            return None
        return value

    def boolean(self, data: Mapping[str, Any], key: str, path: str, default: bool = False) -> bool:
        value = data.get(key, _MISSING)
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, bool):
            self.problem(invalid(_join(path, key), value, "must be true or false"))
            return default
        return value

    def string(self, data: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
        value = data.get(key, _MISSING)
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, str):
            self.problem(invalid(_join(path, key), value, "must be a string"))
            return default
        return value

    def duration(self, data: Mapping[str, Any], key: str, path: str, default: float) -> float:
        value = data.get(key, _MISSING)
        if value is _MISSING or value is None:
            return default
        where = _join(path, key)
        if not isinstance(value, str):
            self.problem(invalid(where, value, 'must be a duration string such as "15s" or "1m30s"'))
            return default
        try:
            return parse_duration(value)
        except ValueError:
            self.problem(invalid(where, value, 'must be a duration string such as "15s" or "1m30s"'))
            return default

    def sequence(self, data: Mapping[str, Any], key: str, path: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(_wrong_type(_join(path, key), value, "a list"))
            return []
        return value

    # ---------------------------------------------------------------------------------- document

    def configuration(self, data: Any) -> _Parsed | None:
        doc = self.fields(
            data, "",
            ("apiVersion", "kind", "profiles", "percentageOfNodesToScore", "podInitialBackoffSeconds",
             "podMaxBackoffSeconds", "leaderElection", "extenders", "clientConnection", "parallelism",
             "enableProfiling", "enableContentionProfiling"),
            _UNSUPPORTED_TOP,
        )
        if not isinstance(data, Mapping):
            return None
        api_version = doc.get("apiVersion")
        if api_version is None:
            self.problem(required("apiVersion", f'must be "{API_VERSION}"'))
        elif api_version != API_VERSION:
            self.problem(not_supported("apiVersion", api_version, [API_VERSION]))
        kind = doc.get("kind")
        if kind is None:
            self.problem(required("kind", f'must be "{KIND}"'))
        elif kind != KIND:
            self.problem(not_supported("kind", kind, [KIND]))

        self.ignored(doc)
        percentage = self.percentage(doc, "percentageOfNodesToScore", "")
        initial = self.integer(doc, "podInitialBackoffSeconds", "")
        maximum = self.integer(doc, "podMaxBackoffSeconds", "")
        initial = 1 if initial is None else initial
        maximum = 10 if maximum is None else maximum
        if initial <= 0:
            self.problem(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
        if maximum < initial:
            self.problem(invalid("podMaxBackoffSeconds", maximum,
                                 "must be greater than or equal to PodInitialBackoffSeconds"))
        leader_election = self.leader_election(doc.get("leaderElection"))
        profiles = self.profiles(doc)
        extenders = self.extenders(doc)
        return _Parsed(profiles, percentage, float(initial), float(maximum), leader_election, extenders)

    def ignored(self, doc: Mapping[str, Any]) -> None:
        """Type-check the accepted-but-ignored fields, so a typo inside them is still caught."""
        connection = self.fields(doc.get("clientConnection"), "clientConnection",
                                 ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"))
        for key in ("kubeconfig", "acceptContentTypes", "contentType"):
            self.string(connection, key, "clientConnection")
        qps = connection.get("qps")
        if qps is not None and (isinstance(qps, bool) or not isinstance(qps, int | float)):
            self.problem(invalid("clientConnection.qps", qps, "must be a number"))
        self.integer(connection, "burst", "clientConnection")
        parallelism = self.integer(doc, "parallelism", "")
        if parallelism is not None and parallelism <= 0:
            self.problem(invalid("parallelism", parallelism, "should be an integer value greater than zero"))
        self.boolean(doc, "enableProfiling", "")
        self.boolean(doc, "enableContentionProfiling", "")

    def percentage(self, data: Mapping[str, Any], key: str, path: str) -> int | None:
        value = self.integer(data, key, path)
        if value is not None and not 0 <= value <= 100:
            self.problem(invalid(_join(path, key), value, "not in valid range [0-100]"))
            return None
        return value

    def leader_election(self, data: Any) -> LeaderElectionConfig:
        path = "leaderElection"
        section = self.fields(data, path, ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                                           "resourceLock", "resourceName", "resourceNamespace"))
        defaults = LeaderElectionConfig()
        config = LeaderElectionConfig(
            leader_elect=self.boolean(section, "leaderElect", path, defaults.leader_elect),
            lease_duration_seconds=self.duration(
                section, "leaseDuration", path, defaults.lease_duration_seconds),
            renew_deadline_seconds=self.duration(
                section, "renewDeadline", path, defaults.renew_deadline_seconds),
            retry_period_seconds=self.duration(section, "retryPeriod", path, defaults.retry_period_seconds),
            resource_lock=self.string(section, "resourceLock", path) or defaults.resource_lock,
            resource_name=self.string(section, "resourceName", path) or defaults.resource_name,
            resource_namespace=self.string(section, "resourceNamespace", path) or defaults.resource_namespace,
        )
        if not config.leader_elect:
            return config  # componentbase validates the timings only when electing
        for key, value in (("leaseDuration", config.lease_duration_seconds),
                           ("renewDeadline", config.renew_deadline_seconds),
                           ("retryPeriod", config.retry_period_seconds)):
            if value <= 0:
                self.problem(invalid(f"{path}.{key}", section.get(key), "must be greater than zero"))
        if config.lease_duration_seconds <= config.renew_deadline_seconds:
            self.problem(invalid(f"{path}.leaseDuration", section.get("leaseDuration", "15s"),
                                 "LeaseDuration must be greater than RenewDeadline"))
        if config.renew_deadline_seconds <= JITTER_FACTOR * config.retry_period_seconds:
            # client-go's NewLeaderElector rule (componentbase does not check it; the elector would refuse).
            rule = f"renewDeadline must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR:g})"
            self.problem(invalid(f"{path}.renewDeadline", section.get("renewDeadline", "10s"), rule))
        if config.resource_lock != "leases":
            self.problem(invalid(f"{path}.resourceLock", config.resource_lock,
                                 'resourceLock value must be "leases"'))
        return config

    # ---------------------------------------------------------------------------------- profiles

    def profiles(self, doc: Mapping[str, Any]) -> list[Profile]:
        items = self.sequence(doc, "profiles", "")
        if not items:
            items = [{}]  # kube-scheduler's default: one profile
        profiles: list[Profile] = []
        names: dict[str, int] = {}
        raw_queue_sorts: list[tuple[str, PointPlugins, Any]] = []
        for index, item in enumerate(items):
            path = f"profiles[{index}]"
            section = self.fields(item, path, _PROFILE_FIELDS, _UNSUPPORTED_PROFILE)
            name = self.string(section, "schedulerName", path)
            if not name and "schedulerName" not in section and len(items) == 1:
                name = DEFAULT_SCHEDULER_NAME  # defaulted only when there is a single profile
            if not name:
                self.problem(required(f"{path}.schedulerName"))
            elif name in names:
                self.problem(duplicate(f"{path}.schedulerName", name))
            else:
                names[name] = index
            plugins = self.plugin_set(section.get("plugins"), f"{path}.plugins")
            plugin_args, queue_sort_args = self.plugin_config(section, path, plugins)
            raw_queue_sorts.append((path, plugins.point("queueSort"), queue_sort_args))
            percentage = self.percentage(section, "percentageOfNodesToScore", path)
            profiles.append(Profile(name, plugins, plugin_args, percentage))
        self.common_queue_sort(raw_queue_sorts)
        return profiles

    def common_queue_sort(self, queue_sorts: list[tuple[str, PointPlugins, Any]]) -> None:
        """One scheduling queue serves every profile, so they must sort it alike (validateCommonQueueSort)."""
        if not queue_sorts:
            return
        _, first, first_args = queue_sorts[0]
        for path, point, args in queue_sorts[1:]:
            if point.enabled != first.enabled or point.disabled != first.disabled:
                self.problem(invalid(f"{path}.plugins.queueSort", ", ".join(point.names()) or "<default>",
                                     "must be the same for all profiles"))
            elif args != first_args:
                self.problem(invalid(f"{path}.pluginConfig", point.names()[0] if point.names() else "",
                                     "queueSort must be the same for all profiles"))

    def plugin_set(self, data: Any, path: str) -> PluginSet:
        section = self.fields(data, path, (MULTI_POINT, *EXTENSION_POINTS), _UNSUPPORTED_POINTS)
        multi_point = self.merge(PointPlugins(DEFAULT_MULTI_POINT), section.get(MULTI_POINT),
                                 f"{path}.{MULTI_POINT}")
        points = {point: self.merge(PointPlugins(), section.get(point), f"{path}.{point}")
                  for point in EXTENSION_POINTS}
        queue_sort = points["queueSort"].enabled
        if len(queue_sort) > 1:
            self.problem(invalid(f"{path}.queueSort.enabled", len(queue_sort),
                                 "only one queue sort plugin can be enabled"))
        return PluginSet(multi_point, points)

    def merge(self, defaults: PointPlugins, data: Any, path: str) -> PointPlugins:
        """kube-scheduler's mergePluginSet: the user's ``disabled`` drops defaults ("*" all of them), an
        ``enabled`` entry naming a default replaces it in place (its weight too), the others follow."""
        section = self.fields(data, path, ("enabled", "disabled"))
        enabled = self.plugin_refs(section, "enabled", path)
        disabled = {ref.name for ref in self.plugin_refs(section, "disabled", path)} | defaults.disabled
        custom = {ref.name: position for position, ref in enumerate(enabled)}
        replaced: set[int] = set()
        merged: list[PluginRef] = []
        for ref in defaults.enabled if ALL_PLUGINS not in disabled else ():
            if ref.name in disabled:
                continue
            missing = ref.name not in self.registry
            if missing:
                self.problem(f'{path}: default plugin "{ref.name}" is not in the plugin registry')
            position = custom.get(ref.name)
            if position is not None:
                ref = enabled[position]
                replaced.add(position)
            merged.append(ref)
        merged.extend(ref for position, ref in enumerate(enabled) if position not in replaced)
        return PointPlugins(tuple(merged), frozenset(disabled))

    def plugin_refs(self, section: Mapping[str, Any], key: str, path: str) -> list[PluginRef]:
        refs: list[PluginRef] = []
        seen: set[str] = set()
        for index, item in enumerate(self.sequence(section, key, path)):
            where = f"{path}.{key}[{index}]"
            entry = self.fields(item, where, ("name", "weight"))
            name = self.string(entry, "name", where)
            if not name:
                self.problem(required(f"{where}.name"))
                continue
            if name == ALL_PLUGINS:
                if key == "disabled":
                    refs.append(PluginRef(name))
                else:
                    self.problem(invalid(f"{where}.name", name, '"*" can only be disabled'))
                continue
            if name not in self.registry:
                self.problem(invalid(f"{where}.name", name, self.unknown_plugin_detail()))
                continue
            if name in seen:
                self.problem(duplicate(f"{where}.name", name))
                continue
            seen.add(name)
            weight = self.integer(entry, "weight", where) or 0
            if weight and not MIN_WEIGHT <= weight <= MAX_WEIGHT:
                self.problem(invalid(f"{where}.weight", weight,
                                     f"must be in the range [{MIN_WEIGHT}, {MAX_WEIGHT}] "
                                     "(0 or unset means 1)"))
                weight = 0
            refs.append(PluginRef(name, weight))
        return refs

    def unknown_plugin_detail(self) -> str:
        return "no plugin of that name is registered (known: " + ", ".join(sorted(self.registry)) + ")"

    def plugin_config(self, section: Mapping[str, Any], path: str,
                      plugins: PluginSet) -> tuple[dict[str, Any], Any]:
        """Each enabled plugin's args object, and the queue sort plugin's args (for the common check)."""
        enabled = plugins.enabled_names()
        enabled_set = set(enabled)
        args: dict[str, Any] = {}
        configured: set[str] = set()
        for index, item in enumerate(self.sequence(section, "pluginConfig", path)):
            where = f"{path}.pluginConfig[{index}]"
            entry = self.fields(item, where, ("name", "args"))
            name = self.string(entry, "name", where)
            if not name:
                self.problem(required(f"{where}.name"))
                continue
            if name not in self.registry:
                self.problem(invalid(f"{where}.name", name, self.unknown_plugin_detail()))
                continue
            if name in configured:
                self.problem(duplicate(f"{where}.name", name))
                continue
            configured.add(name)
            if name not in enabled_set:
                self.problem(invalid(f"{where}.name", name, "the plugin is not enabled in this profile"))
                continue
            value = self.plugin_args(name, entry.get("args"), f"{where}.args")
            if value is not _MISSING:
                args[name] = value
        for name in enabled:
            if name not in configured and name in self.registry:
                value = self.plugin_args(name, None, f"{path}.plugins ({name})")
                if value is not _MISSING:
                    args[name] = value
        queue_sort = plugins.point("queueSort").names()
        return args, args.get(queue_sort[0]) if queue_sort else None

    def plugin_args(self, name: str, data: Any, path: str) -> Any:
        """The plugin's args object, or _MISSING when it takes none (or they are wrong: reported)."""
        try:
            entry = self.registry.load(name)
        except PluginLoadError as exc:
            self.problem(f"{path}: {exc}")
            return _MISSING
        if data is not None and not isinstance(data, Mapping):
            self.problem(_wrong_type(path, data, "a mapping"))
            return _MISSING
        raw = dict(data or {})
        # Args may carry their own type meta, as kube-scheduler's decoder allows.
        kind = raw.pop("kind", None)
        api_version = raw.pop("apiVersion", None)
        if kind is not None and kind != f"{name}Args":
            self.problem(not_supported(f"{path}.kind", kind, [f"{name}Args"]))
        if api_version is not None and api_version != API_VERSION:
            self.problem(not_supported(f"{path}.apiVersion", api_version, [API_VERSION]))
        if entry.args_type is None:
            if raw:
                self.problem(invalid(path, ", ".join(sorted(map(str, raw))), f"plugin {name} takes no args"))
            return _MISSING
        try:
            return entry.args_type.from_dict(raw)
        except ValueError as exc:
            self.problem(f"{path}: {exc}")
            return _MISSING

    # --------------------------------------------------------------------------------- extenders

    def extenders(self, doc: Mapping[str, Any]) -> list[ExtenderConfig]:
        extenders: list[ExtenderConfig] = []
        managed_names: set[str] = set()
        binders = 0
        for index, item in enumerate(self.sequence(doc, "extenders", "")):
            path = f"extenders[{index}]"
            section = self.fields(item, path, _EXTENDER_FIELDS)
            url = self.string(section, "urlPrefix", path)
            if not url:
                self.problem(required(f"{path}.urlPrefix"))
            else:
                parsed = urllib.parse.urlsplit(url)
                if parsed.scheme not in ("http", "https") or not parsed.hostname:
                    self.problem(invalid(f"{path}.urlPrefix", url, "must be an http:// or https:// URL"))
            prioritize = self.string(section, "prioritizeVerb", path)
            weight = self.integer(section, "weight", path) or 0
            if weight < 0 or (prioritize and weight <= 0):
                self.problem(invalid(f"{path}.weight", weight, "must have a positive weight applied to it"))
            bind = self.string(section, "bindVerb", path)
            binders += bool(bind)
            timeout = self.duration(section, "httpTimeout", path, 0.0)
            if timeout < 0:
                self.problem(invalid(f"{path}.httpTimeout", section["httpTimeout"], "must not be negative"))
            managed = []
            for position, resource in enumerate(self.sequence(section, "managedResources", path)):
                where = f"{path}.managedResources[{position}]"
                fields = self.fields(resource, where, ("name", "ignoredByScheduler"))
                name = self.string(fields, "name", where)
                for problem in _extended_resource_problems(name):
                    self.problem(invalid(f"{where}.name", name, problem))
                if name in managed_names:
                    self.problem(invalid(f"{where}.name", name, "duplicate extender managed resource name"))
                managed_names.add(name)
                ignored = self.boolean(fields, "ignoredByScheduler", where)
                managed.append(ExtenderManagedResource(name, ignored))
            extenders.append(ExtenderConfig(
                url_prefix=url,
                filter_verb=self.string(section, "filterVerb", path),
                prioritize_verb=prioritize,
                preempt_verb=self.string(section, "preemptVerb", path),
                bind_verb=bind,
                weight=weight,
                enable_https=self.boolean(section, "enableHTTPS", path),
                tls_config=self.tls_config(section.get("tlsConfig"), f"{path}.tlsConfig"),
                http_timeout_seconds=timeout if timeout > 0 else DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS,
                node_cache_capable=self.boolean(section, "nodeCacheCapable", path),
                managed_resources=tuple(managed),
                ignorable=self.boolean(section, "ignorable", path),
            ))
        if binders > 1:
            self.problem(invalid("extenders", f"found {binders} extenders implementing bind",
                                 "only one extender can implement bind"))
        return extenders

    def tls_config(self, data: Any, path: str) -> ExtenderTLSConfig | None:
        if data is None:
            return None
        section = self.fields(data, path, ("insecure", "serverName", "certFile", "keyFile", "caFile",
                                           "certData", "keyData", "caData"))
        return ExtenderTLSConfig(
            insecure=self.boolean(section, "insecure", path),
            server_name=self.string(section, "serverName", path),
            cert_file=self.string(section, "certFile", path),
            key_file=self.string(section, "keyFile", path),
            ca_file=self.string(section, "caFile", path),
            cert_data=self.base64(section, "certData", path),
            key_data=self.base64(section, "keyData", path),
            ca_data=self.base64(section, "caData", path),
        )

    def base64(self, section: Mapping[str, Any], key: str, path: str) -> bytes:
        text = self.string(section, key, path)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            self.problem(invalid(_join(path, key), "<bytes>", "must be base64-encoded PEM data"))
            return b""


def _extended_resource_problems(name: str) -> list[str]:
    """apimachinery's validateExtendedResourceName: a qualified name outside kubernetes.io that is not
    a quota "requests." name."""
    problems = is_qualified_name(name)
    if problems:
        return problems
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests.") or is_qualified_name("requests." + name):
        return ["is an invalid extended resource name"]
    return []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _wrong_type(path: str, value: Any, expected: str) -> str:
    return f"{path}: Invalid value: must be {expected}, not {_type_name(value)}"


def _type_name(value: Any) -> str:
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
                              int: "an integer", float: "a number"}
    for kind, text in names.items():
        if isinstance(value, kind):
            return text
    return type(value).__name__

