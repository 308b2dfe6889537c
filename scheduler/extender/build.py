"""The configuration's ``extenders`` as the scheduler runs them (kube-scheduler's buildExtenders)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.config import ExtenderConfig, Profile
from scheduler.config.argtypes import NodeResourcesFitArgs
from scheduler.metrics import SchedulerMetrics
from scheduler.plugins.noderesources.fit import NAME as NODE_RESOURCES_FIT

if TYPE_CHECKING:
    from scheduler.extender.httpextender import HTTPExtender


def build_extenders(configs: Sequence[ExtenderConfig], *, metrics: SchedulerMetrics) -> list[HTTPExtender]:
    """One extender per entry, in the configuration's order except that the ignorable ones go last: an
    extender whose failure may be skipped should not decide what the others see. Raises ValueError for
    an entry that cannot be set up (its TLS files)."""
    if not configs:
        return []
    # Imported only here: its HTTP client (aiohttp) would cost every scheduler and `podsched simulate`
    # process a quarter of a second at start, and most configurations name no extender.
    from scheduler.extender.httpextender import HTTPExtender

    ordered = [c for c in configs if not c.ignorable] + [c for c in configs if c.ignorable]
    return [HTTPExtender(config, metrics=metrics) for config in ordered]


def ignoring_managed_resources(profile: Profile, configs: Sequence[ExtenderConfig]) -> Profile:
    """``profile`` with NodeResourcesFit ignoring the resources the extenders manage with
    ignoredByScheduler (no node advertises them: the extender accounts for them). kube-scheduler replaces
    the plugin's ignoredResources with them; podsched adds them to what the profile already ignores."""
    names = [r.name for config in configs for r in config.managed_resources if r.ignored_by_scheduler]
    args = profile.plugin_args.get(NODE_RESOURCES_FIT)
    if not names or not isinstance(args, NodeResourcesFitArgs):
        return profile
    ignored = tuple(dict.fromkeys((*args.ignored_resources, *names)))
    plugin_args = dict(profile.plugin_args)
    plugin_args[NODE_RESOURCES_FIT] = dataclasses.replace(args, ignored_resources=ignored)
    return dataclasses.replace(profile, plugin_args=plugin_args)
