"""`podsched load` as a user (and the compose file's load service) runs it: a real process against the
real API server on each store, with the test playing the scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.load import POD_GROUP_LABEL, RUN_LABEL
from cluster.launcher.process import ApiServerProcess, cli_env
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import REPO, run_cli, run_cli_async
from tests.unit.bind_loop import binding_every_pod

LOAD_TIMEOUT_S = 60.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(["--rate", "0"], "error: --rate: must be a positive number of pods per second, got 0",
                     id="rate-zero"),
        pytest.param(["--rate", "fast"], "argument --rate: invalid float value: 'fast'", id="rate-word"),
        pytest.param(["--count", "0"], "error: --count: must be at least 1, got 0", id="count-zero"),
        pytest.param(["--count", "many"], "argument --count: invalid int value: 'many'", id="count-word"),
        pytest.param(["--cpu", "2 cores"], 'error: --cpu: quantity "2 cores"', id="cpu"),
        pytest.param(["--memory=-1Mi"], 'error: --memory: must be a positive quantity, got "-1Mi"',
                     id="memory"),
        pytest.param(["-n", "Load_NS"], 'error: --namespace: "Load_NS" is invalid', id="namespace"),
        pytest.param(["--priority-class", "Gold!"], 'error: --priority-class: "Gold!" is invalid',
                     id="priority-class"),
        pytest.param(["--wait"], "error: --wait needs --count", id="wait-forever"),
        pytest.param(["--count", "1", "--timeout", "5s"], "error: --timeout applies to --wait only",
                     id="timeout-without-wait"),
        pytest.param(["--count", "1", "--wait", "--timeout", "0s"], "error: --timeout must be positive",
                     id="timeout-zero"),
        pytest.param(["--count", "1", "--wait", "--timeout", "soon"], "invalid duration 'soon'",
                     id="timeout-word"),
        pytest.param(["--progress-interval", "0s"], "error: --progress-interval must be positive",
                     id="progress-interval"),
        pytest.param(["--server", "nowhere"], 'invalid API server address "nowhere"', id="server"),
        pytest.param(["--gang-fraction", "1.5"], "error: --gang-fraction: must be between 0 and 1, got 1.5",
                     id="gang-fraction-range"),
        pytest.param(["--gang-fraction", "some"], "argument --gang-fraction: invalid float value: 'some'",
                     id="gang-fraction-word"),
        pytest.param(["--gang-size", "2-x"], "argument --gang-size: expected MIN-MAX or N pods, like 2-8, "
                     "got '2-x'", id="gang-size-word"),
        pytest.param(["--gang-size", "8-2"], "error: --gang-size: must be MIN-MAX with 1 <= MIN <= MAX, "
                     "got 8-2",
                     id="gang-size-reversed"),
        pytest.param(["--gang-size", "0"], "error: --gang-size: must be MIN-MAX with 1 <= MIN <= MAX, "
                     "got 0-0",
                     id="gang-size-zero"),
        pytest.param(["--seed", "lucky"], "argument --seed: invalid int value: 'lucky'", id="seed-word"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(flags: list[str], message: str) -> None:
    # Refused before any connection: the address is never dialled.
    done = run_cli("127.0.0.1:1", "load", *flags)
    assert done.code == 2, done
    assert message in done.stderr
    assert "Traceback" not in done.stderr


async def test_count_and_wait_until_bound(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await client.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    async with binding_every_pod(client, namespace, node):
        done = await run_cli_async(
            apiserver.address, "load", "--rate", "40", "--count", "12", "-n", namespace, "--cpu", "50m",
            "--wait", "--timeout", "30s", "--progress-interval", "0.1s",
        )
    assert done.code == 0, done
    start = re.search(rf"load: run (\w+): submitting 12 pods at 40/s to namespace {namespace} "
                      rf"\(label {RUN_LABEL}=(\w+)\)", done.stdout)
    assert start and start[1] == start[2], done.stdout
    assert re.search(r"\d\d:\d\d:\d\d\.\d{3} load: submitted \d+/12, bound \d+, pending \d+ \(", done.stdout)
    assert re.search(r"load: done: submitted 12/12, bound 12, pending 0 \(", done.stdout), done.stdout
    pods = (await client.list_all("Pod", namespace, label_selector=f"{RUN_LABEL}={start[1]}")).items
    assert sorted(pod.metadata.name for pod in pods) == sorted(f"load-{start[1]}-{i}" for i in range(12))
    assert all(pod.spec.node_name == node for pod in pods)
    assert all(pod.spec.containers[0].resources.requests["cpu"] == "50m" for pod in pods)


async def test_priority_class_is_given_to_every_pod(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    name = unique("batch")
    await client.create(objects_pb2.PriorityClass(metadata=objects_pb2.ObjectMeta(name=name), value=42))
    done = await run_cli_async(apiserver.address, "load", "--count", "3", "--rate", "50", "-n", namespace,
                               "--priority-class", name)
    assert done.code == 0, done
    assert "load: done: submitted 3/3, bound 0, pending 3" in done.stdout
    pods = (await client.list_all("Pod", namespace)).items
    assert [(pod.spec.priority_class_name, pod.spec.priority) for pod in pods] == [(name, 42)] * 3


async def test_gangs_come_with_their_pod_groups(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    done = await run_cli_async(apiserver.address, "load", "--count", "40", "--rate", "200", "-n", namespace,
                               "--gang-fraction", "0.5", "--gang-size", "3-5", "--seed", "4")
    assert done.code == 0, done
    start = re.search(r"load: run (\w+): submitting 40 pods .*, 50% of them gangs of 3-5 pods \(seed 4\)",
                      done.stdout)
    assert start, done.stdout
    finished = re.search(r"load: done: submitted 40/40 \((\d+) gangs\), bound 0, pending 40", done.stdout)
    assert finished, done.stdout
    groups = (await client.list_all("PodGroup", namespace)).items
    pods = (await client.list_all("Pod", namespace, label_selector=f"{RUN_LABEL}={start[1]}")).items
    assert len(pods) == 40 and len(groups) == int(finished[1]) > 0
    members: dict[str, int] = {}
    for pod in pods:
        group = pod.spec.scheduling_group.pod_group_name or pod.metadata.labels.get(POD_GROUP_LABEL, "")
        if group:
            members[group] = members.get(group, 0) + 1
    minimum = {g.metadata.name: g.spec.min_member or g.spec.scheduling_policy.gang.min_count for g in groups}
    assert members == minimum, "every gang has exactly its minimum of pods"
    assert {g.api_version for g in groups} == {"scheduling.k8s.io/v1alpha3", "scheduling.x-k8s.io/v1alpha1"}


def test_unknown_priority_class_is_an_error(apiserver: ApiServerProcess, namespace: str) -> None:
    done = run_cli(apiserver.address, "load", "--count", "1", "-n", namespace, "--priority-class", "no-such")
    assert done.code == 1
    assert 'error: priority class "no-such" does not exist' in done.stderr


async def test_wait_timeout_exits_1(apiserver: ApiServerProcess, namespace: str) -> None:
    done = await run_cli_async(apiserver.address, "load", "--count", "2", "--rate", "50", "-n", namespace,
                               "--wait", "--timeout", "1s")
    assert done.code == 1
    assert re.search(r"error: 2 pods still pending after 1s: load-\w+-0, load-\w+-1", done.stderr), done


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_until_stopped_then_exit_0(apiserver: ApiServerProcess, namespace: str, signum: int) -> None:
    flags = ["--rate", "50", "-n", namespace, "--progress-interval", "0.2s"]
    with _load_process(apiserver.address, *flags) as load:
        _wait_for_line(load, "load: submitted ")
        load.send_signal(signum)
        out, _ = load.communicate(timeout=LOAD_TIMEOUT_S)
    assert load.returncode == 0, out
    stopped = re.search(r"load: stopped: submitted (\d+), bound 0, pending (\d+)", out)
    assert stopped and int(stopped[1]) > 5 and stopped[1] == stopped[2], out


def test_a_counted_run_stopped_early_exits_1(apiserver: ApiServerProcess, namespace: str) -> None:
    with _load_process(apiserver.address, "--rate", "5", "--count", "1000", "-n", namespace) as load:
        _wait_for_line(load, "load: run ")
        load.send_signal(signal.SIGTERM)
        out, _ = load.communicate(timeout=LOAD_TIMEOUT_S)
    assert load.returncode == 1, out
    assert re.search(r"load: stopped: submitted \d+/1000", out)


async def test_rides_out_an_api_server_crash(tmp_path: Path) -> None:
    """kill -9 and restart of the API server mid-run: every pod is created exactly once, none is lost."""
    with own_apiserver("sqlite", tmp_path) as server:
        flags = ["--rate", "20", "--count", "60", "--progress-interval", "0.5s"]
        with _load_process(server.address, *flags) as load:
            before = _wait_for_line(load, "load: submitted ")
            server.kill()
            await asyncio.sleep(1.0)
            server.start()
            out, _ = load.communicate(timeout=LOAD_TIMEOUT_S)
        assert load.returncode == 0, out
        assert "load: done: submitted 60/60" in out
        async with Client(server.address) as client:
            pods = (await client.list_all("Pod", "load")).items
        run_id = re.search(r"load: run (\w+)", before)
        assert run_id
        assert sorted(pod.metadata.name for pod in pods) == sorted(f"load-{run_id[1]}-{i}" for i in range(60))


@contextlib.contextmanager
def _load_process(address: str, *flags: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "load", *flags], stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=cli_env(address), cwd=REPO,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _wait_for_line(process: subprocess.Popen[str], text: str) -> str:
    """Read the process's output up to a line containing ``text``; the lines read."""
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if text in line:
            return "".join(lines)
    raise AssertionError(f"podsched load ended (code {process.wait()}) without a line with {text!r}")

