"""The FGD experiment's measures: figures at whole percentages of arrived workload by the rule of the
artifact's merge_alloc_discrete.py, and the books of GPUs kept pod by pod."""

from __future__ import annotations

import numpy as np
import pytest

from cluster.simulate.replay.arrived import GpuBooks, at_arrived
from cluster.simulate.replay.fill import GpuAsk
from cluster.simulate.trace.build import new_node
from cluster.simulate.trace.model import GPU_PRODUCT_LABEL
from scheduler.gpus.fragmentation import PodKind, Workload, fragmentation

#: (arrived milli of each pod tried, with 10 GPUs) -> the table of the values 1, 2, 3, ... those pods got.
#: A pod's percentage is arrived / GPUs / 10 rounded half to even; a percentage no pod has takes the mean of
#: the pods within one percentage of it, and is left out when there are none.
CASES = [
    # 0.5% rounds to 0, 1.5% to 2, 2.5% to 2: percentage 1 has no pod and takes 0..2's.
    ([50, 150, 250], 2, {"0": 1.0, "1": 2.0, "2": 2.5}),
    # 4% and 6%: 5 takes their mean, 3 takes 4's alone, 7 takes 6's; 2 and 8 have nothing within one.
    ([400, 600], 8, {"3": 1.0, "4": 1.0, "5": 1.5, "6": 2.0, "7": 2.0}),
    # Several pods of one percentage: their mean; the highest percentage asked bounds the table.
    ([1000, 1020, 1040, 1300], 11, {"9": 2.0, "10": 2.0, "11": 2.0}),
]


@pytest.mark.parametrize(("arrived", "highest", "expected"), CASES)
def test_figures_at_whole_arrived_percentages(arrived: list[int], highest: int,
                                              expected: dict[str, float]) -> None:
    values = np.arange(1, len(arrived) + 1, dtype=np.float64)
    assert at_arrived(np.array(arrived, dtype=np.int64), values, 10, highest) == expected


def test_no_pod_or_no_gpu_gives_an_empty_table() -> None:
    assert at_arrived(np.array([], dtype=np.int64), np.array([]), 10, 130) == {}
    assert at_arrived(np.array([5]), np.array([1.0]), 0, 130) == {}


def nodes() -> list:  # type: ignore[type-arg]
    return [new_node("a", {"cpu": "16", "memory": "64Gi"}, 4, {GPU_PRODUCT_LABEL: "V100"}),
            new_node("b", {"cpu": "8", "memory": "64Gi"}, 2, {GPU_PRODUCT_LABEL: "T4"}),
            new_node("c", {"cpu": "8", "memory": "64Gi"}, 0, {})]


WORKLOAD = Workload((PodKind(2000, 500, 1, None), PodKind(4000, 1000, 2, frozenset({"V100"})),
                     PodKind(1000, 0, 0, None)), (0.5, 0.3, 0.2))


def test_books_follow_shares_whole_gpus_and_failures_and_the_fragmentation_of_the_changed_node() -> None:
    books = GpuBooks(nodes(), 4, WORKLOAD)
    assert books.total_milli == 6000 and books.models == ["T4", "V100"]
    books.placed("a", 2000, [(1, 300)], GpuAsk(1, 300))
    whole = books.whole_gpus("a", 2)
    assert whole == [(0, 1000), (2, 1000)]  # the first wholly free: GPU 1 is shared
    books.placed("a", 4000, whole, GpuAsk(2, 1000))
    books.failed_pod(GpuAsk(8, 1000))
    books.placed("c", 1000, [], GpuAsk(0, 0))
    assert books.free.tolist() == [[0, 700, 0, 1000], [1000, 1000, 0, 0], [0, 0, 0, 0]]
    assert books.cpu_left.tolist() == [10_000, 8000, 7000]
    assert books.arrived_series.tolist() == [300, 2300, 10_300, 10_300]
    assert books.used_series.tolist() == [300, 2300, 2300, 2300]
    # Measured node by node as the pods came, it is the cluster's measured whole each time.
    expected = fragmentation(WORKLOAD, books.free, books.cpu_left, books.model, books.models).sum()
    assert books.frag_series[-1] == pytest.approx(expected)
    summary = books.summary(1.3)
    assert summary["failed_pods_by_kind"] == {"PureCpu": 0, "ShareGpu": 0, "OneGpu": 0, "TwoGpu": 0,
                                              "FourGpu": 0, "EightGpu": 1, "Others": 0}
    assert summary["pods"] == 4 and summary["placed"] == 3 and summary["failed"] == 1
    assert summary["gpu_allocation"] == pytest.approx(2300 / 6000)
    # 300 milli of 6 GPUs is 5%, 2300 is 38%, 10300 is 172%: past the 130% asked, left out.
    assert summary["gpu_allocation_at_arrived"] == {"4": 0.05, "5": 0.05, "6": 0.05, "37": pytest.approx(
        2300 / 6000), "38": pytest.approx(2300 / 6000), "39": pytest.approx(2300 / 6000)}
    assert set(summary["fragmentation_at_arrived"]) == set(summary["gpu_allocation_at_arrived"])


def test_books_without_a_workload_measure_no_fragmentation() -> None:
    books = GpuBooks(nodes(), 1)
    books.placed("b", 1000, [(0, 1000)], GpuAsk(1, 1000))
    assert "fragmentation_at_arrived" not in books.summary(1.0)
    assert books.frag_series.tolist() == [0.0]


def test_the_highest_percentage_is_the_ratio_s_even_where_floating_point_falls_short_of_it() -> None:
    books = GpuBooks(nodes(), 2)
    books.placed("a", 1000, [(0, 1000), (1, 1000), (2, 1000), (3, 1000)], GpuAsk(4, 1000))
    books.placed("b", 1000, [(0, 1000), (1, 1000)], GpuAsk(2, 1000))
    books.arrived_series[1] = 6900  # 115% of the 6 GPUs
    assert max(map(int, books.summary(1.15)["gpu_allocation_at_arrived"])) == 115
