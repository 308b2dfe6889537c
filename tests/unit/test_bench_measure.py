"""The bench's arithmetic: per-second throughput samples, scheduler_perf's nearest-rank percentiles,
Prometheus's histogram_quantile, and reading a histogram out of an exposition."""

from __future__ import annotations

import math

import pytest

from cluster.bench import measure

_EXPOSITION = """\
# HELP scheduler_scheduling_attempt_duration_seconds Scheduling attempt latency
# TYPE scheduler_scheduling_attempt_duration_seconds histogram
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.001",profile="p",result="scheduled"} 2.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.002",profile="p",result="scheduled"} 6.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="+Inf",profile="p",result="scheduled"} 8.0
scheduler_scheduling_attempt_duration_seconds_count{profile="p",result="scheduled"} 8.0
scheduler_scheduling_attempt_duration_seconds_sum{profile="p",result="scheduled"} 0.02
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.001",profile="p",result="unschedulable"} 1.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.002",profile="p",result="unschedulable"} 2.0
scheduler_scheduling_attempt_duration_seconds_bucket{le="+Inf",profile="p",result="unschedulable"} 2.0
scheduler_scheduling_attempt_duration_seconds_count{profile="p",result="unschedulable"} 2.0
scheduler_scheduling_attempt_duration_seconds_sum{profile="p",result="unschedulable"} 0.003
"""


def test_one_sample_per_second_from_the_first_bind() -> None:
    binds = [10.0, 10.2, 10.9, 11.0, 11.5, 12.0, 12.7]

    assert measure.throughput_samples(binds) == pytest.approx([3.0, 2.0, 2 / 0.7])


def test_a_short_last_interval_joins_the_one_before() -> None:
    assert measure.throughput_samples([0.0, 0.5, 1.0, 1.5, 2.1]) == pytest.approx([2.0, 3 / 1.1])


def test_binds_within_a_moment_make_one_sample_over_a_second() -> None:
    assert measure.throughput_samples([5.0, 5.1, 5.2]) == [3.0]
    assert measure.throughput_samples([]) == []


def test_throughput_summary_takes_nearest_ranks_like_scheduler_perf() -> None:
    samples = [float(v) for v in range(100, 0, -1)]  # 1..100, unsorted

    summary = measure.throughput_summary(samples)

    assert (summary.average, summary.p50, summary.p90, summary.p99) == (50.5, 50.0, 90.0, 99.0)
    assert measure.nearest_rank([7.0, 9.0], 50) == 7.0
    assert measure.throughput_summary([]) == measure.Summary(0.0, 0.0, 0.0, 0.0)


def test_label_sets_of_a_histogram_are_added() -> None:
    histogram = measure.parse_histogram(_EXPOSITION, measure.ATTEMPT_DURATION)

    assert histogram.buckets == ((0.001, 3.0), (0.002, 8.0), (math.inf, 10.0))
    assert (histogram.count, histogram.total) == (10.0, pytest.approx(0.023))


def test_the_difference_of_two_readings() -> None:
    before = measure.Histogram(((0.001, 1.0), (math.inf, 1.0)), 1.0, 0.0005)
    after = measure.Histogram(((0.001, 3.0), (math.inf, 4.0)), 4.0, 0.01)

    expected = measure.Histogram(((0.001, 2.0), (math.inf, 3.0)), 3.0, pytest.approx(0.0095))
    assert after.minus(before) == expected


@pytest.mark.parametrize(
    ("q", "expected"),
    [(0.0, 0.0), (0.15, 0.0005), (0.3, 0.001), (0.55, 0.0015), (0.8, 0.002), (0.9, 0.002), (1.0, 0.002)],
    ids=["zero", "first-bucket-from-0", "bucket-edge", "interpolated", "last-finite", "in-inf", "max"],
)
def test_histogram_quantile_interpolates_like_prometheus(q: float, expected: float) -> None:
    histogram = measure.parse_histogram(_EXPOSITION, measure.ATTEMPT_DURATION)

    assert measure.histogram_quantile(q, histogram) == pytest.approx(expected)


def test_an_empty_histogram_has_no_quantiles() -> None:
    summary = measure.histogram_summary(measure.EMPTY_HISTOGRAM)

    assert all(math.isnan(v) for v in (summary.average, summary.p50, summary.p90, summary.p99))
    with pytest.raises(ValueError, match="within"):
        measure.histogram_quantile(1.5, measure.EMPTY_HISTOGRAM)


def test_peak_rss_of_this_process() -> None:
    rss = measure.peak_rss_bytes()

    assert rss is not None and rss > 1024 * 1024
    assert measure.peak_rss_bytes(2**31) is None


def test_cpu_seconds_are_read_from_proc_and_grow_with_work() -> None:
    before = measure.cpu_seconds()
    assert before is not None and before > 0
    deadline = measure.cpu_seconds()
    while (measure.cpu_seconds() or 0) - (deadline or 0) < 0.05:  # spin until the kernel counts 50 ms
        sum(range(10_000))
    after = measure.cpu_seconds()
    assert after is not None and after >= before + 0.05
    assert measure.cpu_seconds(2**22 + 12345) is None  # no such process


def test_cpu_ms_per_pod_by_process_and_in_total() -> None:
    spent = measure.cpu_ms_per_pod({"etcd": 1.0, "apiserver": 2.0, "gone": None},
                                   {"etcd": 3.0, "apiserver": 6.0, "gone": 9.0}, pods=1000)
    assert spent == {"etcd": 2.0, "apiserver": 4.0, "total": 6.0}


_API_BEFORE = """\
apiserver_storage_write_requests_total{operation="create"} 10.0
apiserver_storage_write_requests_total{operation="update"} 5.0
apiserver_storage_written_keys_total 15.0
apiserver_watch_events_total{resource="pods"} 40.0
apiserver_watch_events_sizes_sum{resource="pods"} 40000.0
apiserver_watch_events_sizes_count{resource="pods"} 40.0
"""
_API_AFTER = """\
apiserver_storage_write_requests_total{operation="create"} 110.0
apiserver_storage_write_requests_total{operation="update"} 105.0
apiserver_storage_write_requests_total{operation="txn"} 10.0
apiserver_storage_written_keys_total 315.0
apiserver_watch_events_total{resource="pods"} 440.0
apiserver_watch_events_total{resource="nodes"} 100.0
apiserver_watch_events_sizes_sum{resource="pods"} 440000.0
apiserver_watch_events_sizes_sum{resource="nodes"} 100000.0
apiserver_watch_events_sizes_count{resource="pods"} 440.0
"""


def test_the_cost_per_pod_comes_from_the_api_servers_counters_over_the_phase() -> None:
    cost = measure.pod_cost({"apiserver": 1.0}, {"apiserver": 1.5}, _API_BEFORE, _API_AFTER, pods=100)
    assert cost.cpu_ms == {"apiserver": 5.0, "total": 5.0}
    assert cost.store_write_requests == 2.1  # (100 + 100 + 10) / 100
    assert cost.store_written_keys == 3.0
    assert cost.watch_events == 5.0  # (400 + 100) / 100
    assert cost.watch_bytes == 5000.0
