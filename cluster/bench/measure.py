"""What `podsched bench` measures, as scheduler_perf measures it.

* Throughput: while the measured pods are scheduled, the number of them bound in each second (seen by
  the bench's own pod informer) divided by that interval, one sample a second from the first bind to the
  last; the summary is the average of the samples and their 50th/90th/99th percentiles, taken by nearest
  rank as scheduler_perf's throughput collector does (sorted samples, index ceil(n * p / 100) - 1).
* Scheduling-attempt latency: the scheduler's ``scheduler_scheduling_attempt_duration_seconds`` histogram
  read before and after the measured pods (the difference of the two), its quantiles interpolated
  within buckets as Prometheus's ``histogram_quantile`` does.
* End-to-end pod latency: from the acknowledgement of a pod's create to the bench seeing it bound.
* Peak RSS of a process: VmHWM in /proc/<pid>/status.
* CPU per pod: each process's user and system time (/proc/<pid>/stat) spent while the measured pods were
  scheduled, divided by the measured pods. Unlike pods/s, it hardly moves when the processes share the
  cores with each other or with anything else.
* Store writes and watch bytes per pod: the API server's counters of the write requests its store served,
  the keys they wrote, and the bytes of the events it sent to watchers, over the same phase and pods.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from cluster.bench.storelimit import percentile

ATTEMPT_DURATION = "scheduler_scheduling_attempt_duration_seconds"
#: One throughput sample per second, as scheduler_perf's throughputSampleInterval.
SAMPLE_INTERVAL_S = 1.0
#: A last, partial interval shorter than this is left out: a few pods over a few milliseconds would
#: make a sample of thousands of pods per second.
MIN_LAST_INTERVAL_S = 0.5
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class Summary:
    average: float
    p50: float
    p90: float
    p99: float

    def as_dict(self) -> dict[str, float]:
        return {"average": self.average, "p50": self.p50, "p90": self.p90, "p99": self.p99}


def nearest_rank(sorted_values: Sequence[float], percent: float) -> float:
    """scheduler_perf's percentile: the value at index ceil(n * percent / 100) - 1 of the sorted values."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    index = max(0, math.ceil(len(sorted_values) * percent / 100) - 1)
    return sorted_values[min(index, len(sorted_values) - 1)]


def throughput_summary(samples: Sequence[float]) -> Summary:
    """Average and nearest-rank percentiles of per-second throughput samples (all 0 without samples)."""
    if not samples:
        return Summary(0.0, 0.0, 0.0, 0.0)
    ordered = sorted(samples)
    return Summary(sum(ordered) / len(ordered), nearest_rank(ordered, 50), nearest_rank(ordered, 90),
                   nearest_rank(ordered, 99))


def throughput_samples(bind_times: Iterable[float], interval_s: float = SAMPLE_INTERVAL_S) -> list[float]:
    """Pods/s in each ``interval_s`` from the first bind on: the binds in the interval over its length.
    The last interval ends at the last bind; shorter than MIN_LAST_INTERVAL_S, it is merged into the one
    before (or, alone, taken as a whole interval)."""
    times = sorted(bind_times)
    if not times:
        return []
    end = times[-1]
    counted: list[tuple[int, float]] = []  # (binds, seconds) per interval
    index = 0
    begin = times[0]
    while begin <= end:
        stop = begin + interval_s
        count = 0
        while index < len(times) and times[index] < stop:
            count += 1
            index += 1
        counted.append((count, min(interval_s, end - begin)))
        begin = stop
    last_count, last_length = counted[-1]
    if last_length < MIN_LAST_INTERVAL_S:
        counted.pop()
        if counted:
            count, length = counted.pop()
            counted.append((count + last_count, length + last_length))
        else:
            counted.append((last_count, interval_s))
    return [count / length for count, length in counted]


def latency_summary(latencies_s: Sequence[float]) -> Summary:
    """Average and p50/p90/p99 of latencies (interpolated between ranks)."""
    if not latencies_s:
        return Summary(0.0, 0.0, 0.0, 0.0)
    return Summary(sum(latencies_s) / len(latencies_s), *(percentile(latencies_s, q) for q in QUANTILES))


# -- histograms --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Histogram:
    """Cumulative bucket counts by upper bound (the last bound +Inf), summed over all label sets."""

    buckets: tuple[tuple[float, float], ...]
    count: float
    total: float

    def minus(self, earlier: Histogram) -> Histogram:
        before = dict(earlier.buckets)
        return Histogram(tuple((bound, n - before.get(bound, 0.0)) for bound, n in self.buckets),
                         self.count - earlier.count, self.total - earlier.total)


EMPTY_HISTOGRAM = Histogram((), 0.0, 0.0)


def parse_histogram(exposition: str, name: str) -> Histogram:
    """The histogram ``name`` from Prometheus text exposition, its label sets added together."""
    buckets: dict[float, float] = {}
    count = total = 0.0
    for family in text_string_to_metric_families(exposition):
        if family.name != name:
            continue
        for sample in family.samples:
            if sample.name == f"{name}_bucket":
                bound = float(sample.labels["le"])
                buckets[bound] = buckets.get(bound, 0.0) + sample.value
            elif sample.name == f"{name}_count":
                count += sample.value
            elif sample.name == f"{name}_sum":
                total += sample.value
    return Histogram(tuple(sorted(buckets.items())), count, total)


def histogram_quantile(q: float, histogram: Histogram) -> float:
    """Prometheus's histogram_quantile: find the bucket holding rank q * count and interpolate linearly
    within it (from 0 for the first bucket); a rank in the +Inf bucket answers the highest finite bound.
    NaN when the histogram is empty."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantile must be within [0, 1], got {q}")
    buckets = histogram.buckets
    if not buckets or buckets[-1][1] <= 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, cumulative in buckets:
        if cumulative >= rank:
            if math.isinf(bound):
                return lower_bound
            if cumulative == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (cumulative - lower_count)
        lower_bound, lower_count = bound, cumulative
    return lower_bound


def histogram_summary(histogram: Histogram) -> Summary:
    """Average (sum / count) and p50/p90/p99 of a histogram (all NaN when it is empty)."""
    average = histogram.total / histogram.count if histogram.count else math.nan
    return Summary(average, *(histogram_quantile(q, histogram) for q in QUANTILES))


# -- memory ------------------------------------------------------------------------------------------


def peak_rss_bytes(pid: int | str = "self") -> int | None:
    """The process's peak resident set size (VmHWM), None where /proc does not tell (not Linux, gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


# -- CPU ---------------------------------------------------------------------------------------------

_CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | str = "self") -> float | None:
    """User plus system CPU seconds the process has used (its threads included; children not), None where
    /proc does not tell (not Linux, gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS_PER_S  # utime, stime: fields 14 and 15


def cpu_ms_per_pod(
    before: Mapping[str, float | None], after: Mapping[str, float | None], pods: int
) -> dict[str, float]:
    """Each process's CPU milliseconds per pod between two readings, and their ``total``; a process
    unreadable at either reading is left out."""
    spent = {
        role: (after[role] - start) * 1000 / pods  # type: ignore[operator]
        for role, start in before.items()
        if start is not None and after.get(role) is not None and pods > 0
    }
    return {**spent, "total": sum(spent.values())}


# -- counters ----------------------------------------------------------------------------------------


def counter_total(exposition: str, name: str) -> float:
    """The counter ``name`` (without ``_total``) from Prometheus text exposition, summed over its label
    sets; for a histogram name, the sum of its observations."""
    wanted = (f"{name}_total", f"{name}_sum")
    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name in wanted
    )


# -- what a pod costs --------------------------------------------------------------------------------

WRITE_REQUESTS = "apiserver_storage_write_requests"
WRITTEN_KEYS = "apiserver_storage_written_keys"
WATCH_EVENT_SIZES = "apiserver_watch_events_sizes"
WATCH_EVENTS = "apiserver_watch_events"


@dataclass(frozen=True)
class PodCost:
    """What the measured phase cost per measured pod."""

    #: CPU milliseconds by process role, and their ``total``.
    cpu_ms: dict[str, float]
    #: Write requests the store served (a transaction counted once), and the keys they wrote.
    store_write_requests: float
    store_written_keys: float
    #: Events, and their bytes, the API server sent to all its watchers together.
    watch_events: float
    watch_bytes: float

    def as_dict(self) -> dict[str, object]:
        return {
            "cpu_ms_per_pod": self.cpu_ms,
            "store_write_requests_per_pod": self.store_write_requests,
            "store_written_keys_per_pod": self.store_written_keys,
            "watch_events_per_pod": self.watch_events,
            "watch_bytes_per_pod": self.watch_bytes,
        }


def pod_cost(
    cpu_before: Mapping[str, float | None], cpu_after: Mapping[str, float | None],
    apiserver_before: str, apiserver_after: str, pods: int,
) -> PodCost:
    """The cost per pod of a phase, from CPU readings and the API server's expositions at its ends."""

    def per_pod(name: str) -> float:
        spent = counter_total(apiserver_after, name) - counter_total(apiserver_before, name)
        return spent / pods if pods > 0 else 0.0

    return PodCost(
        cpu_ms=cpu_ms_per_pod(cpu_before, cpu_after, pods),
        store_write_requests=per_pod(WRITE_REQUESTS), store_written_keys=per_pod(WRITTEN_KEYS),
        watch_events=per_pod(WATCH_EVENTS), watch_bytes=per_pod(WATCH_EVENT_SIZES),
    )
