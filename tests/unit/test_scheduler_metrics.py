"""Scheduler metrics: kube-scheduler's names and labels in the exposition, gauges read at scrape time."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scheduler.metrics import BatchAttemptsCollector, SchedulerMetrics, attempts_label, exponential_buckets


def samples(metrics: SchedulerMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def metrics() -> SchedulerMetrics:
    metrics = SchedulerMetrics()
    metrics.watch_state(
        pending_pods=lambda: {"active": 2, "backoff": 1, "unschedulable": 3},
        bindings_in_flight=lambda: 4,
        events_dropped=lambda: 7,
    )
    return metrics


def test_pending_pods_by_queue(metrics: SchedulerMetrics) -> None:
    values = samples(metrics)
    assert {queue: values[("scheduler_pending_pods", (("queue", queue),))]
            for queue in ("active", "backoff", "unschedulable", "gated")} == {
        "active": 2, "backoff": 1, "unschedulable": 3, "gated": 0}
    assert values[("scheduler_goroutines", (("operation", "binding"),))] == 4
    assert values[("podsched_scheduler_events_dropped_total", ())] == 7


@pytest.mark.parametrize(
    ("observe", "result"),
    [
        (lambda m: m.pod_scheduled("default-scheduler", 0.01, 2, 1.5), "scheduled"),
        (lambda m: m.pod_unschedulable("default-scheduler", 0.01), "unschedulable"),
        (lambda m: m.pod_schedule_error("default-scheduler", 0.01), "error"),
    ],
    ids=["scheduled", "unschedulable", "error"],
)
def test_attempts_by_result_and_profile(metrics: SchedulerMetrics, observe, result: str) -> None:
    observe(metrics)
    values = samples(metrics)
    labels = (("profile", "default-scheduler"), ("result", result))
    assert values[("scheduler_schedule_attempts_total", labels)] == 1
    assert values[("scheduler_scheduling_attempt_duration_seconds_count", labels)] == 1
    assert values[("scheduler_scheduling_attempt_duration_seconds_sum", labels)] == pytest.approx(0.01)


def test_a_scheduled_pod_records_its_attempts_and_end_to_end_latency(metrics: SchedulerMetrics) -> None:
    metrics.pod_scheduled("default-scheduler", 0.01, 3, 12.0)
    values = samples(metrics)
    assert values[("scheduler_pod_scheduling_attempts_count", ())] == 1
    assert values[("scheduler_pod_scheduling_attempts_sum", ())] == 3
    assert values[("scheduler_pod_scheduling_attempts_bucket", (("le", "2.0"),))] == 0
    assert values[("scheduler_pod_scheduling_attempts_bucket", (("le", "4.0"),))] == 1
    assert values[("scheduler_pod_scheduling_sli_duration_seconds_sum", (("attempts", "3"),))] == 12.0


def test_repeated_observations_add_up_in_their_own_series(metrics: SchedulerMetrics) -> None:
    for profile, attempts in [("a", 1), ("a", 1), ("b", 1), ("a", 16), ("a", 20), ("a", 1)]:
        metrics.pod_scheduled(profile, 0.01, attempts, 1.0)
    metrics.pod_unschedulable("a", 0.01)
    values = samples(metrics)
    assert values[("scheduler_schedule_attempts_total", (("profile", "a"), ("result", "scheduled")))] == 5
    assert values[("scheduler_schedule_attempts_total", (("profile", "b"), ("result", "scheduled")))] == 1
    assert values[("scheduler_schedule_attempts_total", (("profile", "a"), ("result", "unschedulable")))] == 1
    assert values[("scheduler_pod_scheduling_sli_duration_seconds_count", (("attempts", "1"),))] == 4
    assert values[("scheduler_pod_scheduling_sli_duration_seconds_count", (("attempts", "15+"),))] == 2


def test_each_scheduler_has_its_own_registry() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    first.pod_unschedulable("p", 0.1)
    key = ("scheduler_schedule_attempts_total", (("profile", "p"), ("result", "unschedulable")))
    assert key in samples(first)
    assert key not in samples(second)


@pytest.mark.parametrize(("attempts", "label"), [(1, "1"), (14, "14"), (15, "15+"), (90, "15+")],
                         ids=["1", "14", "15", "90"])
def test_attempts_label_is_capped(attempts: int, label: str) -> None:
    assert attempts_label(attempts) == label


def test_exponential_buckets_as_client_golang() -> None:
    assert exponential_buckets(0.001, 2, 4) == [0.001, 0.002, 0.004, 0.008]


def test_batch_attempts_by_profile_and_result(metrics: SchedulerMetrics) -> None:
    metrics.register(BatchAttemptsCollector(lambda: {"default-scheduler": {"hit": 3, "unsignable": 1}}))
    text = metrics.exposition().decode()
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="hit"} 3.0' in text
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="unsignable"} 1.0' in text
