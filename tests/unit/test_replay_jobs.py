"""The runs of ``podsched replay --fill``: FGDScore given the trace's typical pods when its configuration
names none, and each configuration's figures averaged over its seeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.simulate.replay.fill_report import averaged
from cluster.simulate.replay.jobs import FGD_PLUGIN, load_run_config, workload_args
from scheduler.gpus.fragmentation import PodKind, Workload
from scheduler.plugins.registry import IN_TREE


@dataclass(frozen=True)
class KindArgs:
    milli_cpu: int = 0
    gpu_milli: int = 0
    gpu_count: int = 0
    models: list[str] | None = None
    weight: float = 0.0


@dataclass(frozen=True)
class FgdArgs:
    workload: list[KindArgs] | None = None


class FakeFgd:
    """FGDScore's args as a score plugin of that name takes them (for a tree that does not hold it)."""

    ARGS = FgdArgs

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    def name(self) -> str:
        return FGD_PLUGIN


#: FGDScore from the tree when it is there, else the stand-in with the same args.
PLUGINS = [] if FGD_PLUGIN in IN_TREE else [(FGD_PLUGIN, f"{__name__}:FakeFgd")]
WORKLOAD = Workload((PodKind(8000, 500, 1, None), PodKind(4000, 1000, 2, frozenset({"V100", "T4"}))),
                    (0.75, 0.25))
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: fgd
  plugins:
    score:
      enabled: [{name: FGDScore, weight: 100}]
@CONFIG@- schedulerName: plain
"""
GIVEN = """\
  pluginConfig:
  - name: FGDScore
    args:
      workload: [{milliCpu: 1, gpuMilli: 100, gpuCount: 1, weight: 1.0}]
"""


def kinds(args: Any) -> list[tuple[int, int, int, list[str] | None, float]]:
    return [(kind.milli_cpu, kind.gpu_milli, kind.gpu_count, list(kind.models) if kind.models else None,
             kind.weight) for kind in args.workload]


def test_fgd_without_a_workload_is_given_the_trace_s_typical_pods(tmp_path: Path) -> None:
    path = tmp_path / "fgd.yaml"
    for pluginconfig in ("", "  pluginConfig:\n  - name: FGDScore\n    args: {}\n"):
        path.write_text(CONFIG.replace("@CONFIG@", pluginconfig))
        config, _ = load_run_config(str(path), PLUGINS, "", WORKLOAD)
        fgd, plain = config.profiles
        assert kinds(fgd.plugin_args[FGD_PLUGIN]) == [(8000, 500, 1, None, 0.75),
                                                      (4000, 1000, 2, ["T4", "V100"], 0.25)]
        assert FGD_PLUGIN not in plain.plugin_args


def test_a_workload_the_configuration_gives_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "fgd.yaml"
    path.write_text(CONFIG.replace("@CONFIG@", GIVEN))
    config, _ = load_run_config(str(path), PLUGINS, "", WORKLOAD)
    assert kinds(config.profiles[0].plugin_args[FGD_PLUGIN]) == [(1, 100, 1, None, 1.0)]


def test_the_workload_as_fgd_s_args_list_it() -> None:
    assert workload_args(WORKLOAD) == [
        {"milliCpu": 8000, "gpuMilli": 500, "gpuCount": 1, "weight": 0.75},
        {"milliCpu": 4000, "gpuMilli": 1000, "gpuCount": 2, "weight": 0.25, "models": ["T4", "V100"]}]


def test_seeds_are_averaged_figure_by_figure_and_entry_by_entry() -> None:
    seeds = [{"seed": 42, "pods": 10, "failed_pods_by_kind": {"OneGpu": 1, "EightGpu": 2},
              "gpu_allocation_at_arrived": {"0": 0.0, "1": 0.2, "3": 0.4}},
             {"seed": 43, "pods": 11, "failed_pods_by_kind": {"OneGpu": 2, "EightGpu": 0},
              "gpu_allocation_at_arrived": {"0": 0.0, "2": 0.3, "3": 0.6}}]
    result = averaged(seeds)
    assert result["seeds"] == [42, 43] and result["pods"] == 10.5
    assert result["failed_pods_by_kind"] == {"OneGpu": 1.5, "EightGpu": 1.0}
    # An entry one seed lacks is the mean of the seeds that have it; percentages stay in order.
    assert list(result["gpu_allocation_at_arrived"].items()) == [("0", 0.0), ("1", 0.2), ("2", 0.3),
                                                                 ("3", pytest.approx(0.5))]
