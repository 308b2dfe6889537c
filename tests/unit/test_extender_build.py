"""managedResources with ignoredByScheduler reach NodeResourcesFit's ignoredResources (kube-scheduler's
buildExtenders), so a pod asking for a resource only the extender accounts for is not turned down."""

from __future__ import annotations

from scheduler.config import ExtenderConfig, ExtenderManagedResource, load_config, parse_config
from scheduler.extender.build import ignoring_managed_resources
from scheduler.plugins.noderesources.fit import NAME as FIT

GPU = ExtenderManagedResource("example.com/gpu", ignored_by_scheduler=True)
FPGA = ExtenderManagedResource("example.com/fpga", ignored_by_scheduler=False)


def test_ignored_resources_are_added_to_what_the_profile_already_ignores() -> None:
    config = parse_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
            {"name": FIT, "args": {"ignoredResources": ["example.com/tpu"]}}]}],
    })
    extenders = [ExtenderConfig("http://a/x", filter_verb="filter", managed_resources=(GPU, FPGA))]
    profile = ignoring_managed_resources(config.profiles[0], extenders)
    assert profile.plugin_args[FIT].ignored_resources == ("example.com/tpu", "example.com/gpu")
    assert config.profiles[0].plugin_args[FIT].ignored_resources == ("example.com/tpu",)  # not modified


def test_a_profile_is_left_alone_when_nothing_is_ignored_or_the_plugin_is_off() -> None:
    profile = load_config(None).profiles[0]
    assert ignoring_managed_resources(profile, [ExtenderConfig("http://a/x", managed_resources=(FPGA,))]) \
        is profile
    without_fit = parse_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "plugins": {"multiPoint": {"disabled": [{"name": FIT}]}}}],
    }).profiles[0]
    extenders = [ExtenderConfig("http://a/x", managed_resources=(GPU,))]
    assert ignoring_managed_resources(without_fit, extenders) is without_fit
