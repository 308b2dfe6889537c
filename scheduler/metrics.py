"""Prometheus metrics of one scheduler, under kube-scheduler's names, in a registry of its own (two
schedulers in one process, as in tests or ``podsched simulate``, never share counters).

Counters and histograms are updated where things happen (schedule_one, binding). Gauges that mirror
state someone else owns (the queue's lengths, bindings in flight, dropped events) are read when
Prometheus scrapes, so nothing has to remember to update them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: ``result`` label values of scheduler_schedule_attempts_total, as kube-scheduler.
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"

#: The queues scheduler_pending_pods reports; "gated": pods a PreEnqueue plugin keeps out of activeQ.
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")

#: The attempts label of the SLI histogram is capped (kube-scheduler: "15+") to bound cardinality.
_MAX_ATTEMPTS_LABEL = 15


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """Prometheus client_golang's ExponentialBuckets: ``count`` upper bounds from ``start``, each
    ``factor`` times the previous."""
    return [start * factor**i for i in range(count)]


def attempts_label(attempts: int) -> str:
    return f"{_MAX_ATTEMPTS_LABEL}+" if attempts >= _MAX_ATTEMPTS_LABEL else str(attempts)


class _StateCollector(Collector):
    """Gauges read from their owners at scrape time."""

    def __init__(
        self,
        pending_pods: Callable[[], Mapping[str, int]],
        bindings_in_flight: Callable[[], int],
        events_dropped: Callable[[], int],
    ) -> None:
        self._pending_pods = pending_pods
        self._bindings_in_flight = bindings_in_flight
        self._events_dropped = events_dropped

    def collect(self) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
            "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
            "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number "
            "of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
            labels=["queue"],
        )
        counts = self._pending_pods()
        for queue in PENDING_QUEUES:
            pending.add_metric([queue], counts.get(queue, 0))
        yield pending
        goroutines = GaugeMetricFamily(
            "scheduler_goroutines",
            "Number of running goroutines split by the work they do such as binding.",
            labels=["operation"],
        )
        goroutines.add_metric(["binding"], self._bindings_in_flight())
        yield goroutines
        yield CounterMetricFamily(
            "podsched_scheduler_events_dropped",
            "Events about pods that were not written because too many were waiting (best effort).",
            value=self._events_dropped(),
        )


class BatchAttemptsCollector(Collector):
    """scheduler_batch_attempts_total (kube-scheduler's, for opportunistic batching), read at scrape
    time from each profile's framework: per profile, its cycles by outcome ("unsignable": some plugin
    could not sign the pod; "new_signature": the first pod of its signature; "hit": a pod that reused
    the work done for earlier pods of its signature)."""

    def __init__(self, attempts: Callable[[], Mapping[str, Mapping[str, int]]]) -> None:
        self._attempts = attempts

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("scheduler_batch_attempts",
                                     "Counts of results when we attempt to use batching.",
                                     labels=["profile", "result"])
        for profile, results in self._attempts().items():
            for result, count in sorted(results.items()):
                family.add_metric([profile, result], count)
        yield family


class SchedulerMetrics:
    """The metrics of one scheduler and the registry that exposes them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=self.registry,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=self.registry,
        )
        self.scheduling_algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=self.registry,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=self.registry,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue "
            "and might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=self.registry,
        )
        # Extender calls (podsched's own names: kube-scheduler has no extender metrics). ``extender`` is
        # the urlPrefix, ``verb`` the operation ("filter", "prioritize", "preempt", "bind").
        self.extender_request_duration = Histogram(
            "podsched_extender_request_duration_seconds",
            "Latency in seconds of HTTP calls to scheduler extenders, whatever their result.",
            ["extender", "verb"],
            # 1 ms to 16 s: past the default httpTimeout of 5 s.
            buckets=exponential_buckets(0.001, 2, 15),
            registry=self.registry,
        )
        self.extender_errors = Counter(
            "podsched_extender_errors",
            "Number of failed calls to scheduler extenders: unreachable, timed out, an answer other than "
            "200, one that does not parse, or one that reports an error.",
            ["extender", "verb"],
            registry=self.registry,
        )

        # Each pod's observations go to the labelled children directly: ``labels()`` validates and
        # looks the labels up under a lock at every call, a few microseconds a pod for nothing.
        self._attempt_children: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self._sli_children: dict[str, Histogram] = {}

    def watch_state(
        self,
        *,
        pending_pods: Callable[[], Mapping[str, int]],
        bindings_in_flight: Callable[[], int],
        events_dropped: Callable[[], int],
    ) -> None:
        """Expose the gauges whose values live elsewhere (call once)."""
        self.registry.register(_StateCollector(pending_pods, bindings_in_flight, events_dropped))

    def register(self, collector: Collector) -> None:
        """Expose another component's collector (the leader elector's) in this scheduler's registry."""
        self.registry.register(collector)

    # --------------------------------------------------------------------------------- observations

    def pod_scheduled(
        self, profile: str, duration_s: float, attempts: int, since_first_attempt_s: float | None
    ) -> None:
        """A pod was bound: its last attempt took ``duration_s``, after ``attempts`` attempts."""
        self._attempt(SCHEDULED, profile, duration_s)
        self.pod_scheduling_attempts.observe(attempts)
        if since_first_attempt_s is not None:
            label = attempts_label(attempts)
            sli = self._sli_children.get(label)
            if sli is None:
                sli = self._sli_children[label] = self.pod_scheduling_sli_duration.labels(label)
            sli.observe(since_first_attempt_s)

    def pod_unschedulable(self, profile: str, duration_s: float) -> None:
        self._attempt(UNSCHEDULABLE, profile, duration_s)

    def pod_schedule_error(self, profile: str, duration_s: float) -> None:
        self._attempt(ERROR, profile, duration_s)

    def _attempt(self, result: str, profile: str, duration_s: float) -> None:
        children = self._attempt_children.get((result, profile))
        if children is None:
            children = self._attempt_children[(result, profile)] = (
                self.schedule_attempts.labels(result, profile),
                self.scheduling_attempt_duration.labels(result, profile),
            )
        attempts, duration = children
        attempts.inc()
        duration.observe(duration_s)

    def extender_call(self, extender: str, verb: str, duration_s: float, failed: bool) -> None:
        """One call to an extender took ``duration_s``; ``failed`` when it raised an ExtenderError."""
        self.extender_request_duration.labels(extender, verb).observe(duration_s)
        if failed:
            self.extender_errors.labels(extender, verb).inc()

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.registry)
