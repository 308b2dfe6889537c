"""The scheduler's configuration: a real ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration.

``load_config(path)`` reads the YAML (or JSON) file in the steps kube-scheduler takes:

1. decode, strictly (``cluster.api.decoding``), into the versioned schema ``v1``: an unknown field, a
   key given twice or a value of the wrong type is an error (kube-scheduler decodes strictly too);
2. default (``defaults``: pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go);
3. decode each enabled plugin's args (``pluginargs``): an in-tree plugin's strictly into its versioned
   schema (``v1args``), defaulted (``argdefaults``: SetDefaults_*Args), converted into the type the
   plugin receives (``argtypes``) and validated (``argvalidation``: ValidateXArgs); an out-of-tree
   plugin's strictly into its own ``ARGS`` dataclass;
4. validate (``validation``: validation/validation.go, plus podsched's rule that every plugin named
   must be in the plugin registry);
5. convert to the values the scheduler runs with (``convert`` into ``types``).

All problems of all steps are reported at once in one ``ConfigError``, each naming the file and the
field path (``sched.yaml: profiles[0].plugins.score.enabled[1].weight: Invalid value: 0: ...``).

What is read, and what each part becomes:

* ``profiles[]``: one ``Profile`` each. ``plugins`` per extension point and ``multiPoint``
  (``enabled`` / ``disabled`` lists of ``{name, weight}``, ``"*"`` in ``disabled`` dropping every
  default there) is merged into kube-scheduler's default plugins exactly as mergePluginSet does;
  ``pluginConfig[] {name, args}`` becomes the plugin's args object (defaults applied, also for enabled
  plugins that have no pluginConfig entry, as kube-scheduler appends default args).
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

from collections.abc import Mapping
from typing import Any

from cluster.api.decoding import DecodeError, Findings, decode, documents, parse_duration
from scheduler.config import convert, v1
from scheduler.config.defaults import DEFAULT_MULTI_POINT, DEFAULT_SCHEDULER_NAME, set_defaults
from scheduler.config.pluginargs import decode_plugin_args
from scheduler.config.types import (
    API_VERSION,
    DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_SECONDS,
    KIND,
    MAX_WEIGHT,
    MIN_WEIGHT,
    ConfigError,
    ExtenderConfig,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    LeaderElectionConfig,
    Profile,
    SchedulerConfiguration,
)
from scheduler.config.validation import validate
from scheduler.framework.registry import Registry

__all__ = [
    "API_VERSION",
    "DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_SECONDS",
    "DEFAULT_SCHEDULER_NAME",
    "KIND",
    "MAX_WEIGHT",
    "MIN_WEIGHT",
    "ConfigError",
    "ExtenderConfig",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "LeaderElectionConfig",
    "Profile",
    "SchedulerConfiguration",
    "in_tree_registry",
    "load_config",
    "parse_config",
    "parse_duration",
]


def load_config(path: str | None, registry: Registry | None = None) -> SchedulerConfiguration:
    """The configuration in ``path`` (YAML or JSON), or kube-scheduler's defaults when ``path`` is None.

    ``registry`` is every plugin the scheduler can run (default: the in-tree plugins)."""
    if path is None:
        return parse_config({"apiVersion": API_VERSION, "kind": KIND}, source="", registry=registry)
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text: {exc}"
        raise ConfigError([f"{path}: cannot read: {reason or exc}"]) from None
    try:
        # One document; an empty file is an empty one (and then lacks apiVersion and kind).
        found = [data for _, data in documents(text, path, numbered=False)]
    except DecodeError as exc:
        raise ConfigError(exc.problems) from None
    if len(found) > 1:
        raise ConfigError([f"{path}: holds {len(found)} YAML documents; a {KIND} is one document"])
    return parse_config(found[0] if found else {}, source=path, registry=registry)


def parse_config(
    data: Any, source: str = "<config>", registry: Registry | None = None
) -> SchedulerConfiguration:
    """Decode, default and validate a KubeSchedulerConfiguration document (parsed YAML or JSON)."""
    if registry is None:
        registry = in_tree_registry()
    prefix = f"{source}: " if source else ""
    findings = Findings(strict=True)
    if not isinstance(data, Mapping):
        decode(v1.KubeSchedulerConfiguration, data, "", findings)  # names what it is instead
        raise ConfigError([prefix + problem for problem in findings.errors])
    config = decode(v1.KubeSchedulerConfiguration, data, "", findings)
    set_defaults(config)
    problems = list(findings.errors)
    plugin_args = []
    for profile in config.profiles or ():
        args, args_problems = decode_plugin_args(profile, registry)
        plugin_args.append(args)
        problems += args_problems
    problems += validate(config, registry, plugin_args)
    if problems:
        raise ConfigError([prefix + problem for problem in problems])
    return convert.configuration(config, plugin_args, source)


def in_tree_registry() -> Registry:
    """The plugins podsched ships (``scheduler.plugins.registry.IN_TREE``)."""
    from scheduler.plugins.registry import IN_TREE  # the framework must not import plugins; config may

    return Registry(IN_TREE)
