"""The API server's metrics: kube-apiserver's names and labels for requests and watches, and flow
control's dispatches, refusals (queue-full, time-out, cancelled) and levels as Prometheus scrapes them."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster.api import errors
from cluster.apiserver.auth import RequestInfo, UserInfo
from cluster.apiserver.auth.authorizer import Authorizer
from cluster.apiserver.auth.policy import Policy
from cluster.apiserver.flowcontrol import GLOBAL_DEFAULT, LEADER_ELECTION, FlowControl, FlowControlConfig
from cluster.apiserver.metrics import ApiServerMetrics
from store.base import TxnOp
from store.observed import ObservedStore
from store.sqlite import SqliteStore

ALICE = UserInfo("alice", groups=("podsched:clients",))
SCHEDULER = UserInfo("scheduler-1", groups=("podsched:schedulers",))
POD_CREATE = RequestInfo("create", "pods", namespace="default", name="web")
LEASE_UPDATE = RequestInfo("update", "leases", namespace="kube-system", name="kube-scheduler")


def samples(metrics: ApiServerMetrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the exposition, parsed back: (name, labels) -> value."""
    text = metrics.exposition().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(metrics: ApiServerMetrics, name: str, **labels: str) -> float | None:
    return samples(metrics).get((name, frozenset(labels.items())))


def gate_with(metrics: ApiServerMetrics, **fields: float) -> FlowControl:
    """One seat per level, told to ``metrics``."""
    config = FlowControlConfig(max_requests_inflight=1, max_mutating_requests_inflight=0, **fields)  # type: ignore[arg-type]
    gate = FlowControl(config, allows=Authorizer(Policy()).allows, observer=metrics)
    metrics.register_levels(gate.level_state)
    return gate


def test_requests_are_counted_by_verb_resource_subresource_and_code() -> None:
    metrics = ApiServerMetrics()
    metrics.observe_request("POST", "pods", "binding", "OK", 0.003)
    metrics.observe_request("POST", "pods", "binding", "OK", 0.3)
    metrics.observe_request("GET", "pods", "", "NOT_FOUND", 0.001)
    labels = {"verb": "POST", "resource": "pods", "subresource": "binding"}
    assert value(metrics, "apiserver_request_total", **labels, code="OK") == 2
    assert value(metrics, "apiserver_request_total", verb="GET", resource="pods", subresource="",
                 code="NOT_FOUND") == 1
    assert value(metrics, "apiserver_request_duration_seconds_count", **labels) == 2
    assert value(metrics, "apiserver_request_duration_seconds_bucket", **labels, le="0.005") == 1
    assert value(metrics, "apiserver_request_duration_seconds_bucket", **labels, le="0.4") == 2


def test_open_watches_are_a_gauge() -> None:
    metrics = ApiServerMetrics()
    metrics.watch_opened("pods")
    metrics.watch_opened("pods")
    metrics.watch_closed("pods")
    assert value(metrics, "apiserver_longrunning_requests", verb="WATCH", resource="pods") == 1


async def test_flow_control_reports_dispatches_and_each_kind_of_refusal() -> None:
    metrics = ApiServerMetrics()
    gate = gate_with(metrics, queue_length_limit=1, queue_wait_s=0.05)
    level = {"priority_level": GLOBAL_DEFAULT, "flow_schema": "global-default"}
    leave = asyncio.Event()

    async def call() -> None:
        async with gate.admit(ALICE, POD_CREATE):
            await leave.wait()

    holder = asyncio.create_task(call())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(call())  # waits for the only seat, then times out
    await asyncio.sleep(0)
    with pytest.raises(errors.TooManyRequests):  # the queue already holds one of alice's
        async with gate.admit(ALICE, POD_CREATE):
            pass
    at_level = {"priority_level": GLOBAL_DEFAULT}
    assert value(metrics, "apiserver_flowcontrol_current_executing_requests", **at_level) == 1
    assert value(metrics, "apiserver_flowcontrol_current_inqueue_requests", **at_level) == 1
    with pytest.raises(errors.TooManyRequests):
        await waiter
    cancelled = asyncio.create_task(call())
    await asyncio.sleep(0)
    cancelled.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await cancelled
    leave.set()
    await holder

    assert value(metrics, "apiserver_flowcontrol_dispatched_requests_total", **level) == 1
    for reason in ("queue-full", "time-out", "cancelled"):
        assert value(metrics, "apiserver_flowcontrol_rejected_requests_total", **level, reason=reason) == 1
    assert value(metrics, "apiserver_flowcontrol_request_wait_duration_seconds_count", **level,
                 execute="true") == 1
    assert value(metrics, "apiserver_flowcontrol_request_wait_duration_seconds_count", **level,
                 execute="false") == 3
    assert value(metrics, "apiserver_flowcontrol_current_executing_requests", **at_level) == 0


async def test_lease_renewals_are_counted_at_their_own_level() -> None:
    metrics = ApiServerMetrics()
    gate = gate_with(metrics)
    async with gate.admit(SCHEDULER, LEASE_UPDATE):
        pass
    assert value(metrics, "apiserver_flowcontrol_dispatched_requests_total", priority_level=LEADER_ELECTION,
                 flow_schema="leader-election") == 1
    assert value(metrics, "apiserver_flowcontrol_nominal_limit_seats", priority_level=LEADER_ELECTION) == 1


def test_watch_events_and_their_bytes_are_counted_by_resource() -> None:
    metrics = ApiServerMetrics()
    metrics.watch_event_sent("pods", 900)
    metrics.watch_event_sent("pods", 3000)
    metrics.watch_event_sent("nodes", 5000)
    assert value(metrics, "apiserver_watch_events_total", resource="pods") == 2
    assert value(metrics, "apiserver_watch_events_sizes_sum", resource="pods") == 3900
    assert value(metrics, "apiserver_watch_events_sizes_bucket", resource="pods", le="1024.0") == 1
    assert value(metrics, "apiserver_watch_events_sizes_count", resource="nodes") == 1


async def test_store_write_requests_are_counted_by_operation_and_keys_by_success(tmp_path: Path) -> None:
    metrics = ApiServerMetrics()
    store = ObservedStore(await SqliteStore.open(tmp_path), metrics)
    try:
        await store.create("/registry/pods/default/a", b"a")
        await store.create("/registry/pods/default/a", b"again")  # refused: exists
        await store.txn([TxnOp.create("/registry/pods/default/b", b"b"),
                         TxnOp.update("/registry/pods/default/a", b"a2", None)])
        await store.delete("/registry/pods/default/b", None)
    finally:
        await store.close()
    assert value(metrics, "apiserver_storage_write_requests_total", operation="create") == 2
    assert value(metrics, "apiserver_storage_write_requests_total", operation="txn") == 1
    assert value(metrics, "apiserver_storage_write_requests_total", operation="delete") == 1
    assert value(metrics, "apiserver_storage_written_keys_total") == 4  # 1 + 0 + 2 + 1
