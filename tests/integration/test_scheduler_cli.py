"""`podsched scheduler` as a process: refusing what it cannot run (exit 2, one clear line), health before
its informers sync, and a clean stop on SIGTERM. None of this needs an API server that answers."""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

import pytest
import yaml

from tests.integration.helpers import run_cli
from tests.integration.test_scheduler import scheduler_process


def unused_address() -> str:
    """A loopback address nobody listens on (bound then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def config_file(tmp_path: Path, document: dict) -> str:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **document,
    }))
    return str(path)


@pytest.mark.parametrize(
    ("document", "extra", "message"),
    [
        ({"profiles": [{"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "NodeAffinity",
                                                                                 "weight": -1}]}}}]},
         [], "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1"),
        ({"profiles": [{"schedulerName": "a", "plugin": {}}]}, [], 'profiles[0]: unknown field "plugin"'),
        ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, [], "profiles[1].schedulerName"),
        ({"profiles": [{"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "GpuFilter"}]}}}]},
         [], 'profiles[0].plugins.filter.enabled[0].name: Invalid value: "GpuFilter"'),
        ({}, ["--plugin", "Broken=no.such.module:new"], "cannot import no.such.module"),
        ({"extenders": [{"urlPrefix": "http://127.0.0.1:8888/scheduler", "prioritizeVerb": "prioritize"}]},
         [], "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
        ({"extenders": [{"urlPrefix": "http://127.0.0.1:8888/a", "bindVerb": "bind"},
                        {"urlPrefix": "http://127.0.0.1:8888/b", "bindVerb": "bind"}]}, [],
         "only one extender can implement bind"),
        ({"extenders": [{"urlPrefix": "127.0.0.1:8888/scheduler", "filterVerb": "filter"}]}, [],
         'extenders[0].urlPrefix: Invalid value: "127.0.0.1:8888/scheduler": must be an http:// or '
         'https:// URL'),
        ({"extenders": [{"urlPrefix": "https://127.0.0.1:8888/scheduler", "filterVerb": "filter",
                         "enableHTTPS": True, "tlsConfig": {"caFile": "/nonexistent/ca.pem"}}]}, [],
         "/nonexistent/ca.pem"),
    ],
    ids=["bad-weight", "unknown-field", "duplicate-scheduler-name", "unknown-plugin", "unimportable-plugin",
         "extender-without-weight", "two-extender-binders", "extender-url", "extender-ca-file"],
)
def test_an_unusable_config_exits_2_with_the_reason(
    tmp_path: Path, document: dict, extra: list[str], message: str
) -> None:
    path = config_file(tmp_path, document)
    result = run_cli(unused_address(), "scheduler", "--leader-elect=false", "--metrics-addr", "127.0.0.1:0",
                     "--config", path, *extra, timeout=20)
    assert result.code == 2, result.stderr
    assert result.stderr.startswith(f"podsched scheduler: {path}: ") or "--plugin" in extra, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--leader-elect=maybe"], "invalid boolean 'maybe'"),
        (["--leader-elect-lease-duration", "10s"],
         "leaseDuration must be greater than renewDeadline"),
        (["--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "2s"],
         "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (["--leader-elect-retry-period", "0s"], "retryPeriod must be greater than zero"),
        (["--leader-elect-lease-duration", "15"], "invalid duration '15'"),
        (["--leader-elect-resource-name", ""], "--leader-elect-resource-name must not be empty"),
        (["--leader-elect-resource-lock", "endpoints"], "invalid choice: 'endpoints'"),
        (["--leader-elect=false", "--metrics-addr", "nowhere"], 'invalid address "nowhere"'),
        (["--leader-elect=false", "--plugin", "NoTarget"], "use NAME=MODULE:FACTORY"),
        (["--leader-elect=false", "--server", "nonsense"], 'invalid API server address "nonsense"'),
        (["--leader-elect=false", "--pod-max-in-unschedulable-pods-duration", "5 min"], "invalid duration"),
        (["--leader-elect=false", "--feature-gates", "SchedulerOpportunisticBatching=off"],
         "SchedulerOpportunisticBatching must be true or false, got 'off'"),
    ],
    ids=["leader-elect-garbage", "lease-not-above-renew", "renew-not-above-jittered-retry", "zero-retry",
         "lease-without-unit", "empty-lease-name", "endpoints-lock", "metrics-addr", "plugin-flag", "server",
         "duration", "feature-gate"],
)
def test_bad_flags_exit_2(flags: list[str], message: str) -> None:
    result = run_cli(unused_address(), "scheduler", "--metrics-addr", "127.0.0.1:0", *flags, timeout=20)
    assert result.code == 2, result.stderr
    assert message in result.stderr


def test_health_before_sync_and_a_clean_stop_on_sigterm() -> None:
    # No API server answers there: the informers keep retrying, so the scheduler is up but not ready.
    scheduler = scheduler_process(unused_address())
    scheduler.start()
    try:
        assert scheduler.get("/healthz") == (200, "ok")
        status, body = scheduler.get("/readyz")
        assert status == 500 and "informers have not synced" in body
        assert scheduler.process is not None
        began = time.monotonic()
        scheduler.process.send_signal(signal.SIGTERM)
        assert scheduler.process.wait(15) == 0, scheduler.log()
        assert time.monotonic() - began < 10
        assert "podsched scheduler stopped" in scheduler.log()
    finally:
        scheduler.stop()


def test_a_taken_metrics_address_exits_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        result = run_cli(unused_address(), "scheduler", "--leader-elect=false", "--metrics-addr", address,
                         timeout=20)
    assert result.code == 1
    assert f"cannot serve metrics on {address}" in result.stderr
