"""The Scheduler's assembly: what it refuses to run, and its health, readiness and idleness before it runs.
(Running it is tested with real processes in tests/integration/test_scheduler*.py.)"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from scheduler.config import ExtenderConfig, ExtenderTLSConfig, in_tree_registry, load_config, parse_config
from scheduler.scheduler import Scheduler, SchedulerConfigError


def client() -> Client:
    # Channels open on first use: nothing here talks to a server.
    return Client("127.0.0.1:1")


def broken_plugin(args: Mapping[str, Any] | None, handle: Any) -> Any:
    raise RuntimeError("cannot start: no GPU driver")


def test_extenders_are_asked_in_order_with_the_ignorable_ones_last() -> None:
    config = load_config(None)
    config.extenders = [
        ExtenderConfig(url_prefix="http://a/x", filter_verb="filter", ignorable=True),
        ExtenderConfig(url_prefix="http://b/x", filter_verb="filter"),
        ExtenderConfig(url_prefix="http://c/x", prioritize_verb="prioritize", weight=1),
    ]
    scheduler = Scheduler(client(), config, registry=in_tree_registry())
    assert [e.name for e in scheduler.extenders] == ["http://b/x", "http://c/x", "http://a/x"]
    # DefaultPreemption finds them on its profile's handle.
    handle = scheduler.profiles["default-scheduler"].handle
    assert handle.extenders is scheduler.extenders


def test_an_extender_whose_tls_files_are_missing_is_a_config_error_naming_it(tmp_path: Path) -> None:
    config = load_config(None)
    missing = tmp_path / "ca.pem"
    config.extenders = [ExtenderConfig(url_prefix="https://a:1/x", filter_verb="filter", enable_https=True,
                                       tls_config=ExtenderTLSConfig(ca_file=str(missing)))]
    with pytest.raises(SchedulerConfigError, match=re.escape(str(missing))):
        Scheduler(client(), config, registry=in_tree_registry())


def test_a_plugin_that_fails_to_start_is_a_config_error_naming_it() -> None:
    registry = in_tree_registry()
    registry.register("Broken", broken_plugin)
    config = parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "Broken"}]}}}]},
        source="sched.yaml", registry=registry,
    )
    expected = 'sched.yaml: profile "s": initializing plugin "Broken"'
    with pytest.raises(SchedulerConfigError, match=re.escape(expected)):
        Scheduler(client(), config, registry=registry)


def test_one_framework_per_profile_sharing_one_queue() -> None:
    config = parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]},
    )
    scheduler = Scheduler(client(), config, registry=in_tree_registry())
    assert scheduler.profile_names == ["a", "b"]
    assert scheduler.profiles["a"] is not scheduler.profiles["b"]
    assert set(scheduler.informers) == {
        "pods", "nodes", "priorityclasses", "poddisruptionbudgets", "podgroups", "compositepodgroups",
        "namespaces", "services",
        "replicasets", "statefulsets", "replicationcontrollers", "resourceclaims", "resourceslices",
        "deviceclasses", "persistentvolumes", "persistentvolumeclaims", "storageclasses", "csinodes",
        "csidrivers", "csistoragecapacities"}
    # Each profile has its own handle, which runs that profile's plugins; what else DefaultPreemption
    # uses (the PDBs, the recorder, the waiting pods, the background API calls) they share.
    handle, other = scheduler.profiles["a"].handle, scheduler.profiles["b"].handle
    assert handle is not other
    assert handle.event_recorder is scheduler.recorder and other.event_recorder is scheduler.recorder
    assert handle.pod_disruption_budgets() == []
    assert handle.waiting_pods is other.waiting_pods is scheduler.profiles["a"].waiting_pods
    assert handle.dra_manager is other.dra_manager is scheduler.dra_manager
    assert handle.storage is other.storage is scheduler.storage
    assert handle.api_dispatcher is other.api_dispatcher is scheduler.preemptions


def test_before_running_it_is_neither_healthy_nor_ready_nor_working() -> None:
    scheduler = Scheduler(client(), load_config(None), registry=in_tree_registry(), rng_seed=7)
    assert scheduler.healthz() == "the scheduler is not running"
    assert scheduler.readyz() == "the scheduler is not running"
    assert not scheduler.working
    assert scheduler.informer_revisions() == {
        "pods": 0, "nodes": 0, "priorityclasses": 0, "poddisruptionbudgets": 0, "podgroups": 0,
        "compositepodgroups": 0,
        "namespaces": 0, "services": 0, "replicasets": 0, "statefulsets": 0, "replicationcontrollers": 0,
        "resourceclaims": 0, "resourceslices": 0, "deviceclasses": 0, "persistentvolumes": 0,
        "persistentvolumeclaims": 0, "storageclasses": 0, "csinodes": 0, "csidrivers": 0,
        "csistoragecapacities": 0}
    assert "scheduler_pending_pods" in scheduler.metrics.exposition().decode()
