"""Prometheus metrics of one API server, under kube-apiserver's names, in a registry of its own (two
servers in one process, as in tests, never share counters).

* ``apiserver_request_total{verb,resource,subresource,code}`` and
  ``apiserver_request_duration_seconds{verb,resource,subresource}``: every unary call, as
  kube-apiserver counts them; ``code`` is the gRPC status code's name (``OK``, ``NOT_FOUND``, ...), since
  the API speaks gRPC, not HTTP. A call refused before it could be described (unauthenticated, malformed)
  has the RPC's name as its verb and no resource. Each item of a Batch counts as the call it stands for
  (a POST of pods, a POST of pods/binding), and the Batch call itself as a POST of no resource.
* ``apiserver_longrunning_requests{verb="WATCH",resource}``: the watches open now.
* ``apiserver_watch_events_total{resource}`` and ``apiserver_watch_events_sizes{resource}`` (bytes): the
  events sent to watchers, as kube-apiserver counts them.
* ``apiserver_storage_write_requests_total{operation}`` (create, update, delete, txn: the requests the
  store served, a transaction of many keys counted once) and ``apiserver_storage_written_keys_total``
  (the keys those requests wrote): what a pod costs the store.
* Flow control (API Priority and Fairness): ``apiserver_flowcontrol_dispatched_requests_total``,
  ``apiserver_flowcontrol_rejected_requests_total{reason}`` (queue-full, time-out, cancelled) and
  ``apiserver_flowcontrol_request_wait_duration_seconds{execute}``, by ``priority_level`` and
  ``flow_schema``; and, read from the levels when Prometheus scrapes,
  ``apiserver_flowcontrol_current_executing_requests``, ``apiserver_flowcontrol_current_inqueue_requests``
  and ``apiserver_flowcontrol_nominal_limit_seats`` by ``priority_level``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from store.observed import WriteOutcome

#: kube-apiserver's buckets for apiserver_request_duration_seconds.
REQUEST_DURATION_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0,
    20.0, 30.0, 45.0, 60.0,
)
#: kube-apiserver's buckets for apiserver_flowcontrol_request_wait_duration_seconds.
WAIT_DURATION_BUCKETS = (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0)

#: kube-apiserver's buckets for apiserver_watch_events_sizes: 1 KiB doubling up to 128 KiB.
WATCH_EVENT_SIZE_BUCKETS = tuple(1024.0 * 2**power for power in range(8))

#: What the scrape-time collector reads of a priority level: seats, and requests holding or awaiting one.
LevelState = Callable[[], Mapping[str, tuple[int, int, int]]]


class _LevelCollector(Collector):
    def __init__(self, levels: LevelState) -> None:
        self._levels = levels

    def collect(self) -> Iterator[Metric]:
        executing = GaugeMetricFamily(
            "apiserver_flowcontrol_current_executing_requests",
            "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API "
            "Priority and Fairness subsystem", labels=["priority_level"],
        )
        inqueue = GaugeMetricFamily(
            "apiserver_flowcontrol_current_inqueue_requests",
            "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            labels=["priority_level"],
        )
        seats = GaugeMetricFamily(
            "apiserver_flowcontrol_nominal_limit_seats",
            "Nominal number of execution seats configured for each priority level", labels=["priority_level"],
        )
        for level, (nominal, running, waiting) in sorted(self._levels().items()):
            seats.add_metric([level], nominal)
            executing.add_metric([level], running)
            inqueue.add_metric([level], waiting)
        yield from (executing, inqueue, seats)


class ApiServerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "apiserver_request", "Counter of apiserver requests broken out for each verb, resource, "
            "subresource and gRPC status code.", ["verb", "resource", "subresource", "code"],
            registry=self.registry,
        )
        self._durations = Histogram(
            "apiserver_request_duration_seconds", "Response latency distribution in seconds for each verb, "
            "resource and subresource.", ["verb", "resource", "subresource"],
            buckets=REQUEST_DURATION_BUCKETS, registry=self.registry,
        )
        self._watches = Gauge(
            "apiserver_longrunning_requests", "Gauge of all active long-running apiserver requests broken "
            "out by verb and resource.", ["verb", "resource"], registry=self.registry,
        )
        self._dispatched = Counter(
            "apiserver_flowcontrol_dispatched_requests", "Number of requests executed by API Priority and "
            "Fairness subsystem", ["priority_level", "flow_schema"], registry=self.registry,
        )
        self._rejected = Counter(
            "apiserver_flowcontrol_rejected_requests", "Number of requests rejected by API Priority and "
            "Fairness subsystem", ["priority_level", "flow_schema", "reason"], registry=self.registry,
        )
        self._waits = Histogram(
            "apiserver_flowcontrol_request_wait_duration_seconds", "Length of time a request spent waiting "
            "in its queue", ["priority_level", "flow_schema", "execute"],
            buckets=WAIT_DURATION_BUCKETS, registry=self.registry,
        )
        self._watch_events = Counter(
            "apiserver_watch_events", "Number of events sent in watch clients", ["resource"],
            registry=self.registry,
        )
        self._watch_event_sizes = Histogram(
            "apiserver_watch_events_sizes", "Watch event size distribution in bytes", ["resource"],
            buckets=WATCH_EVENT_SIZE_BUCKETS, registry=self.registry,
        )
        self._write_requests = Counter(
            "apiserver_storage_write_requests", "Write requests the store served, by operation (a "
            "transaction of many keys is one request).", ["operation"], registry=self.registry,
        )
        self._written_keys = Counter(
            "apiserver_storage_written_keys", "Keys written by the store's successful write requests.",
            registry=self.registry,
        )
        self._write_children: dict[str, Counter] = {}
        self._watch_children: dict[str, tuple[Counter, Histogram]] = {}
        # Label lookups are the costly part of an update; every call makes two, so keep the children.
        self._request_children: dict[tuple[str, str, str, str], tuple[Counter, Histogram]] = {}

    def observe_request(self, verb: str, resource: str, subresource: str, code: str, seconds: float) -> None:
        key = (verb, resource, subresource, code)
        children = self._request_children.get(key)
        if children is None:
            children = self._request_children[key] = (
                self._requests.labels(verb, resource, subresource, code),
                self._durations.labels(verb, resource, subresource),
            )
        children[0].inc()
        children[1].observe(seconds)

    def watch_opened(self, resource: str) -> None:
        self._watches.labels("WATCH", resource).inc()

    def watch_closed(self, resource: str) -> None:
        self._watches.labels("WATCH", resource).dec()

    def watch_event_sent(self, resource: str, size: int) -> None:
        children = self._watch_children.get(resource)
        if children is None:
            children = self._watch_children[resource] = (
                self._watch_events.labels(resource), self._watch_event_sizes.labels(resource),
            )
        children[0].inc()
        children[1].observe(size)

    # The store's write observer (store.observed.WriteObserver).

    def write_started(self) -> None:
        pass

    def write_ended(self, operation: str, keys: Sequence[str], result: WriteOutcome) -> None:
        counter = self._write_children.get(operation)
        if counter is None:
            counter = self._write_children[operation] = self._write_requests.labels(operation)
        counter.inc()
        if result is not None and result.succeeded:
            self._written_keys.inc(len(keys))

    # The flow-control observer (flowcontrol.gate.FlowObserver).

    def dispatched(self, priority_level: str, flow_schema: str, waited_s: float) -> None:
        self._dispatched.labels(priority_level, flow_schema).inc()
        self._waits.labels(priority_level, flow_schema, "true").observe(waited_s)

    def rejected(self, priority_level: str, flow_schema: str, reason: str, waited_s: float) -> None:
        self._rejected.labels(priority_level, flow_schema, reason).inc()
        self._waits.labels(priority_level, flow_schema, "false").observe(waited_s)

    def register_levels(self, levels: LevelState) -> None:
        """Report the flow-control levels' seats and requests, read from ``levels`` at each scrape."""
        self.registry.register(_LevelCollector(levels))

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.registry)
