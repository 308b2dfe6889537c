"""KubeSchedulerConfiguration: kube-scheduler v1 defaults, plugin merging, one case per validation rule."""

from __future__ import annotations

import base64
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.config import (
    DEFAULT_MULTI_POINT,
    ConfigError,
    ExtenderManagedResource,
    LeaderElectionConfig,
    load_config,
    parse_config,
    parse_duration,
)
from scheduler.framework.registry import PluginRef, Registry

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@dataclass(frozen=True)
class Strategy:
    type: str = "LeastAllocated"


@dataclass(frozen=True)
class FitArgs:
    """A stand-in for NodeResourcesFit's args, declared as an out-of-tree plugin declares its own: a
    dataclass the configuration decodes (strictly), kube-scheduler's default strategy, a check of its own."""

    scoring_strategy: Strategy = Strategy()

    def __post_init__(self) -> None:
        strategy = self.scoring_strategy.type
        if strategy not in ("LeastAllocated", "MostAllocated"):
            raise ValueError(f'NodeResourcesFitArgs.scoringStrategy.type: Unsupported value: "{strategy}"')


def _factory(args: Any, handle: Any) -> Any:
    raise AssertionError("config never builds plugins")


def _fit_factory(args: Any, handle: Any) -> Any:
    raise AssertionError("config never builds plugins")


_fit_factory.ARGS = FitArgs  # type: ignore[attr-defined]


def registry() -> Registry:
    plugins: dict[str, Any] = {ref.name: _factory for ref in DEFAULT_MULTI_POINT}
    plugins["NodeResourcesFit"] = _fit_factory
    plugins["CustomScore"] = _factory
    plugins["CustomSort"] = _factory
    return Registry(plugins)


def load(tmp_path: Path, body: str) -> Any:
    path = tmp_path / "sched.yaml"
    path.write_text(HEADER + textwrap.dedent(body))
    return load_config(str(path), registry())


def test_no_file_gives_kube_scheduler_defaults() -> None:
    config = load_config(None, registry())
    # scheduler-plugins' name too, with the same plugins: Kubeflow's and KubeRay's gang pods carry it.
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "scheduler-plugins-scheduler"]
    assert config.profiles[0].plugins == config.profiles[1].plugins
    assert config.profiles[0].plugin_args == config.profiles[1].plugin_args
    profile = config.profiles[0]
    assert profile.plugins.multi_point.enabled == DEFAULT_MULTI_POINT
    assert [ref.name for ref in DEFAULT_MULTI_POINT] == [
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
        "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
        "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
        "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount",
    ]
    weights = {ref.name: ref.weight for ref in DEFAULT_MULTI_POINT if ref.weight}
    assert weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                       "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
                       "PodGroupPodsCount": 1}
    assert all(not profile.plugins.point(p).enabled for p in ("filter", "score", "bind"))
    # Default args are applied for every enabled plugin that takes args, as kube-scheduler appends them.
    assert profile.plugin_args == {"NodeResourcesFit": FitArgs(Strategy("LeastAllocated"))}
    assert config.percentage_of_nodes_to_score is None
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1.0, 10.0)
    assert config.pod_max_in_unschedulable_pods_seconds == 300.0
    assert config.leader_election == LeaderElectionConfig(
        True, 15.0, 10.0, 2.0, "leases", "kube-scheduler", "kube-system")
    assert config.extenders == []


def test_a_full_configuration_is_read(tmp_path: Path) -> None:
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    config = load(tmp_path, f"""
        percentageOfNodesToScore: 30
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        parallelism: 16
        enableProfiling: false
        clientConnection:
          kubeconfig: /etc/kubernetes/scheduler.conf
          qps: 50
        leaderElection:
          leaderElect: true
          leaseDuration: 1m
          renewDeadline: 45s
          retryPeriod: 1.5s
          resourceName: podsched
          resourceNamespace: sched
        profiles:
          - schedulerName: default-scheduler
            percentageOfNodesToScore: 70
          - schedulerName: packer
            plugins:
              score:
                enabled:
                  - name: CustomScore
                    weight: 7
            pluginConfig:
              - name: NodeResourcesFit
                args:
                  apiVersion: kubescheduler.config.k8s.io/v1
                  kind: NodeResourcesFitArgs
                  scoringStrategy:
                    type: MostAllocated
        extenders:
          - urlPrefix: https://127.0.0.1:12346/scheduler
            filterVerb: filter
            prioritizeVerb: prioritize
            weight: 5
            bindVerb: bind
            enableHTTPS: true
            tlsConfig:
              insecure: false
              serverName: extender.local
              caData: {ca}
            nodeCacheCapable: true
            managedResources:
              - name: example.com/foo
                ignoredByScheduler: true
            ignorable: true
    """)
    assert config.source == str(tmp_path / "sched.yaml")
    assert config.percentage_of_nodes_to_score == 30
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2.0, 20.0)
    assert config.leader_election == LeaderElectionConfig(
        True, 60.0, 45.0, 1.5, "leases", "podsched", "sched")
    default, packer = config.profiles
    assert config.percentage_for(default) == 70
    assert config.percentage_for(packer) == 30
    assert packer.plugins.point("score").enabled == (PluginRef("CustomScore", 7),)
    assert packer.plugin_args["NodeResourcesFit"] == FitArgs(Strategy("MostAllocated"))
    assert default.plugin_args["NodeResourcesFit"] == FitArgs(Strategy("LeastAllocated"))
    (extender,) = config.extenders
    assert extender.url_prefix == "https://127.0.0.1:12346/scheduler"
    assert (extender.filter_verb, extender.prioritize_verb, extender.bind_verb, extender.preempt_verb) == (
        "filter", "prioritize", "bind", "")
    assert (extender.weight, extender.enable_https, extender.node_cache_capable, extender.ignorable) == (
        5, True, True, True)
    assert extender.tls_config is not None and extender.tls_config.server_name == "extender.local"
    assert extender.tls_config.ca_data == b"-----BEGIN CERTIFICATE-----\n"
    assert extender.http_timeout_seconds == 5.0  # kube-scheduler's DefaultExtenderTimeout
    assert extender.managed_resources == (ExtenderManagedResource("example.com/foo", True),)


# Each case: the plugins section of one profile, and the expected (multiPoint names, {point: names}).
MERGE_CASES = [
    ("multiPoint-disable-one",
     """
     multiPoint:
       disabled: [{name: TaintToleration}]
     """,
     [r.name for r in DEFAULT_MULTI_POINT if r.name != "TaintToleration"], {}),
    ("multiPoint-disable-all-enable-one",
     """
     multiPoint:
       disabled: [{name: "*"}]
       enabled: [{name: PrioritySort}, {name: DefaultBinder}]
     """,
     ["PrioritySort", "DefaultBinder"], {}),
    ("custom-plugin-follows-defaults",
     """
     multiPoint:
       enabled: [{name: CustomScore, weight: 4}]
     """,
     [r.name for r in DEFAULT_MULTI_POINT] + ["CustomScore"], {}),
    ("score-point-star-then-enabled",
     """
     score:
       disabled: [{name: "*"}]
       enabled: [{name: CustomScore}]
     """,
     [r.name for r in DEFAULT_MULTI_POINT], {"score": ["CustomScore"]}),
]


@pytest.mark.parametrize(("body", "multi_point", "points"), [c[1:] for c in MERGE_CASES],
                         ids=[c[0] for c in MERGE_CASES])
def test_plugins_merge_into_the_defaults_as_kube_scheduler_does(
    tmp_path: Path, body: str, multi_point: list[str], points: dict[str, list[str]]
) -> None:
    indented = textwrap.indent(textwrap.dedent(body), " " * 6)
    config = load(tmp_path, "profiles:\n  - schedulerName: s\n    plugins:\n" + indented)
    plugins = config.profiles[0].plugins
    assert plugins.multi_point.names() == multi_point
    for point, names in points.items():
        assert plugins.point(point).names() == names


def test_reconfiguring_a_default_replaces_it_in_place_with_its_weight(tmp_path: Path) -> None:
    config = load(tmp_path, """
        profiles:
          - plugins:
              multiPoint:
                enabled: [{name: TaintToleration, weight: 9}]
    """)
    refs = config.profiles[0].plugins.multi_point.enabled
    assert [r.name for r in refs] == [r.name for r in DEFAULT_MULTI_POINT]
    assert refs[4] == PluginRef("TaintToleration", 9)


def test_disabled_star_at_a_point_is_kept_for_the_framework(tmp_path: Path) -> None:
    config = load(tmp_path, 'profiles:\n  - plugins:\n      filter:\n        disabled: [{name: "*"}]\n')
    assert config.profiles[0].plugins.point("filter").disabled == frozenset({"*"})


ERROR_CASES = [
    ("unknown-top-level-field", "percentOfNodes: 5\n",
     'sched.yaml: <document>: unknown field "percentOfNodes"'),
    ("old-api-version", None, 'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3"'),
    ("not-supported-field", "delayCacheUntilActive: true\n",
     "delayCacheUntilActive: not supported by podsched"),
    ("duplicate-scheduler-name",
     "profiles:\n  - schedulerName: a\n  - schedulerName: a\n",
     'profiles[1].schedulerName: Duplicate value: "a"'),
    ("missing-scheduler-name-with-two-profiles",
     "profiles:\n  - schedulerName: a\n  - plugins: {}\n",
     "profiles[1].schedulerName: Required value"),
    ("unknown-plugin-enabled",
     "profiles:\n  - plugins:\n      filter:\n        enabled: [{name: GpuFit}]\n",
     'profiles[0].plugins.filter.enabled[0].name: Invalid value: "GpuFit": no plugin of that name is '
     "registered"),
    ("unknown-plugin-disabled",
     "profiles:\n  - plugins:\n      score:\n        disabled: [{name: Taints}]\n",
     'profiles[0].plugins.score.disabled[0].name: Invalid value: "Taints"'),
    ("star-is-not-a-plugin-to-enable",
     'profiles:\n  - plugins:\n      score:\n        enabled: [{name: "*"}]\n',
     'profiles[0].plugins.score.enabled[0].name: Invalid value: "*": "*" can only be disabled'),
    ("plugin-twice-at-one-point",
     "profiles:\n  - plugins:\n      score:\n        enabled: [{name: CustomScore}, {name: CustomScore}]\n",
     'profiles[0].plugins.score.enabled[1].name: Duplicate value: "CustomScore"'),
    ("weight-above-100",
     "profiles:\n  - plugins:\n      score:\n"
     "        enabled: [{name: NodeAffinity}, {name: CustomScore, weight: 101}]\n",
     "profiles[0].plugins.score.enabled[1].weight: Invalid value: 101: must be in the range [1, 100]"),
    ("negative-weight",
     "profiles:\n  - plugins:\n      multiPoint:\n        enabled: [{name: CustomScore, weight: -2}]\n",
     "profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: -2"),
    ("weight-not-a-number",
     "profiles:\n  - plugins:\n      score:\n        enabled: [{name: CustomScore, weight: high}]\n",
     'profiles[0].plugins.score.enabled[0].weight: Invalid value: "high": must be an integer'),
    ("unknown-field-in-plugin",
     "profiles:\n  - plugins:\n      score:\n        enabled: [{name: CustomScore, wieght: 2}]\n",
     'profiles[0].plugins.score.enabled[0]: unknown field "wieght"'),
    ("unsupported-extension-point",
     "profiles:\n  - plugins:\n      placementFeasible:\n        disabled: [{name: GangScheduling}]\n",
     "profiles[0].plugins.placementFeasible: not supported by podsched"),
    ("two-queue-sort-plugins",
     "profiles:\n  - plugins:\n      queueSort:\n"
     "        enabled: [{name: PrioritySort}, {name: CustomSort}]\n",
     "profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one queue sort plugin can be enabled"),
    ("queue-sort-differs-between-profiles",
     "profiles:\n  - schedulerName: a\n  - schedulerName: b\n    plugins:\n      queueSort:\n"
     '        disabled: [{name: "*"}]\n        enabled: [{name: CustomSort}]\n',
     'profiles[1].plugins.queueSort: Invalid value: "CustomSort": must be the same for all profiles'),
    ("plugin-config-unknown-plugin",
     "profiles:\n  - pluginConfig:\n      - name: Fit\n        args: {}\n",
     'profiles[0].pluginConfig[0].name: Invalid value: "Fit"'),
    ("plugin-config-repeated",
     "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n      - name: NodeResourcesFit\n",
     'profiles[0].pluginConfig[1].name: Duplicate value: "NodeResourcesFit"'),
    ("plugin-config-for-disabled-plugin",
     "profiles:\n  - plugins:\n      multiPoint:\n        disabled: [{name: NodeResourcesFit}]\n"
     "    pluginConfig:\n      - name: NodeResourcesFit\n",
     'profiles[0].pluginConfig[0].name: Invalid value: "NodeResourcesFit": the plugin is not enabled'),
    ("plugin-args-invalid",
     "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n"
     "          scoringStrategy: {type: Foo}\n",
     'profiles[0].pluginConfig[0].args: NodeResourcesFitArgs.scoringStrategy.type: Unsupported value: "Foo"'),
    ("plugin-args-wrong-kind",
     "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n        args: {kind: NodeAffinityArgs}\n",
     'profiles[0].pluginConfig[0].args.kind: Unsupported value: "NodeAffinityArgs"'),
    ("plugin-takes-no-args",
     "profiles:\n  - pluginConfig:\n      - name: NodeName\n        args: {strict: true}\n",
     'profiles[0].pluginConfig[0].args: Invalid value: "strict": plugin NodeName takes no args'),
    ("global-percentage-out-of-range", "percentageOfNodesToScore: 101\n",
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("profile-percentage-out-of-range",
     "profiles:\n  - percentageOfNodesToScore: -1\n",
     "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("initial-backoff-zero", "podInitialBackoffSeconds: 0\n",
     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ("max-backoff-below-initial", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
     "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds"),
    ("backoff-not-integer", "podMaxBackoffSeconds: 1.5\n",
     "podMaxBackoffSeconds: Invalid value: 1.5: must be an integer"),
    ("lease-duration-not-a-duration", "leaderElection:\n  leaseDuration: 15\n",
     'leaderElection.leaseDuration: Invalid value: 15: must be a duration string such as "15s"'),
    ("lease-not-longer-than-renew", "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
     'leaderElection.leaseDuration: Invalid value: "10s": LeaseDuration must be greater than '
     "RenewDeadline"),
    ("renew-not-above-jittered-retry", "leaderElection:\n  renewDeadline: 2s\n  retryPeriod: 2s\n",
     'leaderElection.renewDeadline: Invalid value: "2s": renewDeadline must be greater than '
     "retryPeriod*JitterFactor (1.2)"),
    ("resource-lock-not-leases", "leaderElection:\n  resourceLock: endpoints\n",
     'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"'),
    ("leader-election-unknown-field", "leaderElection:\n  leaderElection: true\n",
     'leaderElection: unknown field "leaderElection"'),
    ("parallelism-zero", "parallelism: 0\n",
     "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("client-connection-unknown-field", "clientConnection:\n  kubeConfig: /x\n",
     'clientConnection: unknown field "kubeConfig"'),
    ("extender-without-url", "extenders:\n  - filterVerb: filter\n",
     "extenders[0].urlPrefix: Required value"),
    ("extender-url-not-http", "extenders:\n  - urlPrefix: ftp://host/x\n",
     'extenders[0].urlPrefix: Invalid value: "ftp://host/x": must be an http:// or https:// URL'),
    ("extender-prioritize-without-weight",
     "extenders:\n  - urlPrefix: http://h:1/x\n    prioritizeVerb: prioritize\n",
     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    ("two-extender-binders",
     "extenders:\n  - urlPrefix: http://a:1/x\n    bindVerb: bind\n"
     "  - urlPrefix: http://b:1/x\n    bindVerb: bind\n",
     'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
    ("extender-managed-native-resource",
     "extenders:\n  - urlPrefix: http://a:1/x\n    managedResources: [{name: cpu}]\n",
     'extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name'),
    ("extender-managed-resource-twice",
     "extenders:\n  - urlPrefix: http://a:1/x\n    managedResources: [{name: example.com/a}]\n"
     "  - urlPrefix: http://b:1/x\n    managedResources: [{name: example.com/a}]\n",
     'extenders[1].managedResources[0].name: Invalid value: "example.com/a": duplicate extender managed'),
    ("extender-bad-base64",
     "extenders:\n  - urlPrefix: https://a:1/x\n    tlsConfig: {caData: 'not base64!'}\n",
     "extenders[0].tlsConfig.caData: Invalid value: \"<bytes>\": must be base64-encoded PEM data"),
    ("extender-negative-timeout", "extenders:\n  - urlPrefix: http://a:1/x\n    httpTimeout: -1s\n",
     'extenders[0].httpTimeout: Invalid value: "-1s": must not be negative'),
    ("extender-unknown-field", "extenders:\n  - urlPrefix: http://a:1/x\n    enableHttps: true\n",
     'extenders[0]: unknown field "enableHttps"'),
    ("profiles-not-a-list", "profiles: {schedulerName: a}\n",
     "profiles: Invalid value: must be a list, not a mapping"),
]


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_invalid_configuration_is_rejected_naming_file_and_field(
    tmp_path: Path, body: str | None, expected: str
) -> None:
    path = tmp_path / "sched.yaml"
    if body is None:
        path.write_text("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n")
    else:
        path.write_text(HEADER + body)
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), registry())
    assert any(problem.startswith(f"{path}: ") for problem in caught.value.problems)
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "percentageOfNodesToScore: 200\npodInitialBackoffSeconds: -1\nfoo: 1\n")
    assert len(caught.value.problems) == 3


@pytest.mark.parametrize(("text", "expected"), [
    ("key: 1\nkey: 2\n", "line 2, column 1: duplicate key 'key'"),
    ("profiles: [\n", "YAML syntax error"),
], ids=["duplicate-key", "syntax-error"])
def test_yaml_problems_name_the_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected) as caught:
        load_config(str(path), registry())
    assert str(caught.value).startswith(f"{path}: ")


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read"):
        load_config(str(tmp_path / "nope.yaml"), registry())


def test_a_document_without_type_meta_is_rejected() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(yaml.safe_load("profiles: []"), source="inline", registry=registry())
    assert caught.value.problems == [
        'inline: apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
        'inline: kind: Required value: must be "KubeSchedulerConfiguration"',
    ]


def test_leader_election_timings_are_not_checked_when_not_electing(tmp_path: Path) -> None:
    config = load(tmp_path,
                  "leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n  renewDeadline: 5s\n")
    assert config.leader_election.leader_elect is False
    assert config.leader_election.lease_duration_seconds == 1.0


@pytest.mark.parametrize(("text", "seconds"), [
    ("15s", 15.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("300ms", 0.3), ("0", 0.0), ("-2s", -2.0),
    ("1h2m3s4ms", 3723.004), ("10us", 1e-5),
], ids=lambda v: str(v))
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "15", "s", "1d", "1.2.3s", "--1s"], ids=repr)
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


def test_an_empty_file_is_an_empty_document_without_type_meta(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing configured yet\n")
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), registry())
    assert caught.value.problems == [
        f'{path}: apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
        f'{path}: kind: Required value: must be "KubeSchedulerConfiguration"',
    ]


def test_a_file_of_two_documents_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(HEADER + "---\n" + HEADER)
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), registry())
    assert caught.value.problems == [
        f"{path}: holds 2 YAML documents; a KubeSchedulerConfiguration is one document"]


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(HEADER.encode() + b"profiles:\n  - schedulerName: \xe9t\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1\.yaml: cannot read: not UTF-8 text"):
        load_config(str(path), registry())


def test_a_key_given_twice_deep_in_the_file_is_named_by_field_path_and_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "profiles:\n  - schedulerName: a\n    schedulerName: b\n")
    assert caught.value.problems == [
        f"{tmp_path / 'sched.yaml'}: profiles[0]: line 5, column 5: duplicate key 'schedulerName'"]


def test_a_null_list_entry_is_an_empty_entry(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "extenders:\n  - \n")
    assert caught.value.problems == [f"{tmp_path / 'sched.yaml'}: extenders[0].urlPrefix: Required value"]


@pytest.mark.parametrize(("lease", "renew", "retry"), [
    (15, 10, 2), (10, 10, 2), (5, 10, 2), (15, 2.4, 2), (15, 2.5, 2), (15, 10, 0), (2, 1.5, 0.5),
], ids=str)
def test_the_config_file_and_the_elector_refuse_the_same_timings(
    tmp_path: Path, lease: float, renew: float, retry: float
) -> None:
    from scheduler.leaderelection import LeaderElectionTimings

    try:
        LeaderElectionTimings(lease, renew, retry)
    except ValueError:
        elector_accepts = False
    else:
        elector_accepts = True
    try:
        load(tmp_path, f"leaderElection:\n  leaseDuration: {lease}s\n  renewDeadline: {renew}s\n"
                       f"  retryPeriod: {retry}s\n")
    except ConfigError:
        config_accepts = False
    else:
        config_accepts = True
    assert config_accepts == elector_accepts


def test_the_schema_has_a_plugin_set_for_every_extension_point() -> None:
    from dataclasses import fields

    from scheduler.config import v1
    from scheduler.framework.registry import EXTENSION_POINTS, MULTI_POINT

    assert list(v1.POINT_ATTRIBUTES) == [MULTI_POINT, *EXTENSION_POINTS]
    assert [f.name for f in fields(v1.Plugins)] == [*v1.POINT_ATTRIBUTES.values(), "field_path"]
