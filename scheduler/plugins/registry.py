"""The in-tree plugins, by the names kube-scheduler gives them.

Each name maps to the module that implements it; a module is imported only when a profile asks for its
plugin (``load``), so a name can be listed before its module exists and a profile that does not use a
plugin never pays for importing it. Every plugin module exposes ``NAME``, a factory
``new(args, handle)`` and, when it takes args, ``ARGS``: its type in ``scheduler.config.argtypes``,
which the configuration decodes, defaults and validates as kube-scheduler does.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType, ModuleType

IN_TREE: Mapping[str, str] = MappingProxyType(
    {
        "SchedulingGates": "scheduler.plugins.schedulinggates",
        "PrioritySort": "scheduler.plugins.queuesort",
        "NodeUnschedulable": "scheduler.plugins.nodeunschedulable",
        "NodeName": "scheduler.plugins.nodename",
        "TaintToleration": "scheduler.plugins.tainttoleration",
        "NodeAffinity": "scheduler.plugins.nodeaffinity",
        "NodePorts": "scheduler.plugins.nodeports",
        "NodeResourcesFit": "scheduler.plugins.noderesources.fit",
        "VolumeRestrictions": "scheduler.plugins.volumerestrictions",
        "NodeVolumeLimits": "scheduler.plugins.nodevolumelimits",
        "VolumeZone": "scheduler.plugins.volumezone",
        "NodeResourcesBalancedAllocation": "scheduler.plugins.noderesources.balanced_allocation",
        "ImageLocality": "scheduler.plugins.imagelocality",
        "InterPodAffinity": "scheduler.plugins.interpodaffinity",
        "PodTopologySpread": "scheduler.plugins.podtopologyspread",
        "DefaultBinder": "scheduler.plugins.defaultbinder",
        "DefaultPreemption": "scheduler.plugins.defaultpreemption",
        "GangScheduling": "scheduler.plugins.gangscheduling",
        "DynamicResources": "scheduler.plugins.dynamicresources",
        "VolumeBinding": "scheduler.plugins.volumebinding",
        "TopologyPlacementGenerator": "scheduler.plugins.topologyplacement",
        "PodGroupPodsCount": "scheduler.plugins.podgrouppodscount",
        # The GPU-sharing policies of the FGD paper: never enabled by default.
        "RandomScore": "scheduler.plugins.gpushare.random_score",
        "DotProductScore": "scheduler.plugins.gpushare.dot_product",
        "GpuClusteringScore": "scheduler.plugins.gpushare.gpu_clustering",
        "GpuPackingScore": "scheduler.plugins.gpushare.gpu_packing",
        "BestFitScore": "scheduler.plugins.gpushare.best_fit",
        "FGDScore": "scheduler.plugins.gpushare.fgd",
    }
)


def load(name: str) -> ModuleType:
    """The module of in-tree plugin ``name``; KeyError for a name that is not in-tree."""
    try:
        path = IN_TREE[name]
    except KeyError:
        raise KeyError(f"{name!r} is not an in-tree plugin") from None
    module = importlib.import_module(path)
    # A module that answers to another name would make the config and the framework disagree about
    # which plugin they are talking about; catch that at load, not at the first cycle.
    if getattr(module, "NAME", None) != name:
        raise ImportError(f"{path} declares NAME {getattr(module, 'NAME', None)!r}, expected {name!r}")
    return module
