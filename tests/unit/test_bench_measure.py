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
