"""`podsched up` as a real process: a leader elected among real replica processes, pods applied with the
CLI and bound, the leader SIGKILLed and replaced (and restarted by the supervisor), Ctrl-C stopping
everything with exit 0; on a local 3-member etcd cluster with two API servers; bad flags."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from cluster.launcher.supervisor import process_alive
from tests.integration.helpers import REPO, parse_table, pod_manifest, run_cli
from tests.integration.upprocess import KILL_BOUND_S, LEADER, STEP_TIMEOUT_S, TIMINGS, Up


def _process_group(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[2])


def _wait_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + 10
    while left := [pid for pid in pids if process_alive(pid)]:
        assert time.monotonic() < deadline, f"processes left running: {left}"
        time.sleep(0.1)


def _apply_pods(address: str, tmp_path: Path, namespace: str, names: list[str]) -> None:
    manifest = tmp_path / f"{names[0]}.yaml"
    manifest.write_text(yaml.safe_dump_all([pod_manifest(name, namespace) for name in names]))
    done = run_cli(address, "apply", "-f", str(manifest))
    assert done.code == 0, done


def _wait_bound(address: str, namespace: str, names: list[str]) -> dict[str, str]:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while True:
        done = run_cli(address, "get", "pods", "-n", namespace, "-o", "yaml")
        assert done.code == 0, done
        listed = yaml.safe_load(done.stdout) or {}
        items = listed.get("items", [listed]) if listed else []
        nodes = {item["metadata"]["name"]: item.get("spec", {}).get("nodeName", "") for item in items}
        if all(nodes.get(name) for name in names):
            return {name: nodes[name] for name in names}
        assert time.monotonic() < deadline, f"not bound in time: {nodes}"
        time.sleep(0.3)


@pytest.mark.timing
def test_up_elects_schedules_fails_over_and_stops(tmp_path: Path) -> None:
    up = Up("--replicas", "3", "--nodes", "3", "--listen", "127.0.0.1:0", *TIMINGS)
    try:
        server = up.wait_for(r"export PODSCHED_SERVER=(\S+)")[1]
        assert re.search(r"nodes: node-1\.\.node-3 \(8 cpu, 32Gi, 110 pods each\)", up.out)
        replicas = dict(re.findall(r"(scheduler-\d) started: pid (\d+), identity \S+", up.out))
        assert sorted(replicas) == ["scheduler-1", "scheduler-2", "scheduler-3"]
        leader = up.wait_for(LEADER)
        identity, name = leader[1], leader[2]
        assert re.search(rf"{name} started: pid \d+, identity {re.escape(identity)}$", up.out, re.MULTILINE)
        # Each replica is named in its identity, with its pid.
        assert identity.startswith(f"{name}_pid{replicas[name]}_"), identity

        lease = run_cli(server, "get", "lease", "-n", "kube-system")
        assert lease.code == 0, lease
        assert re.search(rf"kube-scheduler\s+{re.escape(identity)}\s", lease.stdout), lease

        _apply_pods(server, tmp_path, "up-test", ["before-1", "before-2", "before-3"])
        assert set(_wait_bound(server, "up-test", ["before-1", "before-2", "before-3"]).values()) <= {
            "node-1", "node-2", "node-3"}

        # SIGKILL the leader: the supervisor restarts it, a standby takes over once the lease runs out.
        mark = len(up.lines)
        pid = int(replicas[name])
        killed = time.monotonic()
        subprocess.run(["kill", "-9", str(pid)], check=True)
        up.wait_for(rf"{name} \(pid {pid}\) exited with signal SIGKILL; restarting in \d", after=mark)
        restarted = up.wait_for(rf"{name} restarted: pid (\d+), identity (\S+)", after=mark)
        assert restarted[2].startswith(f"{name}_pid{restarted[1]}_"), "a restarted replica has its new pid"
        new = up.wait_for(LEADER, after=mark)
        took = time.monotonic() - killed
        assert new[1] != identity and new[1] != restarted[2], "a standby, not the restarted replica, leads"
        assert int(new[3]) > int(leader[3]), "a new tenure's token is a later revision"
        assert float(new[4]) <= KILL_BOUND_S and took <= KILL_BOUND_S + 2.0, up.out
        assert process_alive(int(restarted[1])) and not process_alive(pid)

        # The new leader schedules.
        _apply_pods(server, tmp_path, "up-test", ["after-1", "after-2"])
        _wait_bound(server, "up-test", ["after-1", "after-2"])
        lease = run_cli(server, "get", "lease", "-n", "kube-system")
        assert re.search(rf"kube-scheduler\s+{re.escape(new[1])}\s", lease.stdout), lease

        pids = up.pids()
        assert len(pids) == 5  # the API server, three replicas and the restarted one
        code, err = up.stop(signal.SIGTERM)
        assert code == 0, err
        assert "stopped: every process has exited" in up.out
        assert "did not stop within" not in up.out
        _wait_gone(pids)
    finally:
        up.kill()


def test_up_nodes_are_ready_and_the_web_view_shows_them() -> None:
    up = Up("--replicas", "1", "--nodes", "2", "--listen", "127.0.0.1:0",
            "--ui", "--ui-listen", "127.0.0.1:0", *TIMINGS)
    try:
        server = up.wait_for(r"export PODSCHED_SERVER=(\S+)")[1]
        listed = run_cli(server, "get", "nodes")
        assert listed.code == 0, listed
        rows = [(row["NAME"], row["STATUS"]) for row in parse_table(listed.stdout)]
        assert rows == [("node-1", "Ready"), ("node-2", "Ready")], listed.stdout
        url = up.wait_for(r"ui: (http://127\.0\.0\.1:\d+/)$")[1]
        with urllib.request.urlopen(url + "api/state", timeout=10) as response:
            state = json.loads(response.read())
        assert state["server"] == server
        ready = {name: node["ready"] for name, node in state["nodes"].items()}
        assert ready == {"node-1": True, "node-2": True}
        code, err = up.stop(signal.SIGTERM)
        assert code == 0, err
    finally:
        up.kill()


# Every process must stop within its grace period, the leader releasing its lease on the way out.
@pytest.mark.timing
@pytest.mark.etcd
def test_up_on_a_local_etcd_cluster_with_two_api_servers() -> None:
    up = Up("--etcd-local", "3", "--apiservers", "2", "--replicas", "2", "--listen", "127.0.0.1:0",
            *TIMINGS)
    try:
        servers = up.wait_for(r"export PODSCHED_SERVER=(\S+)")[1].split(",")
        assert len(servers) == 2
        assert re.search(r"store: local etcd cluster of 3: up-etcd0 \(pid \d+\) on 127\.0\.0\.1:\d+, "
                         r"up-etcd1 .*, up-etcd2 ", up.out)
        assert re.search(r"apiserver-1 started: pid \d+", up.out)
        metrics = re.findall(r"apiserver-\d started: pid \d+, serving on \S+ \(metrics (\S+)\)", up.out)
        assert len(metrics) == 2
        leader = up.wait_for(r"leader is now (\S+) \((scheduler-\d),")
        # Either API server serves the same store: the lease shows the holder through the second one.
        lease = run_cli(servers[1], "get", "lease", "-n", "kube-system")
        assert lease.code == 0 and leader[1] in lease.stdout, lease
        # Each API server's metrics count its own calls: the lease was read through the second one.
        with urllib.request.urlopen(metrics[1], timeout=10) as response:
            assert 'apiserver_request_total{code="OK",resource="leases",subresource="",verb="LIST"}' in (
                response.read().decode())
        pids = up.pids()
        assert len(pids) == 7  # three etcd members, two API servers, two replicas
        # Each child has a process group of its own, so a terminal's Ctrl-C reaches only up, which stops
        # them in order (with etcd and the API servers killed at once, no leader could release its lease).
        assert all(_process_group(pid) == pid for pid in pids)
        # Ctrl-C to the whole group: etcd and the API servers must not hear it, or the leader could not
        # release its lease on the way out (it would be killed after its grace period).
        code, err = up.stop(signal.SIGINT, group=True)
        assert code == 0, err
        assert "did not stop within" not in up.out
        _wait_gone(pids)
    finally:
        up.kill()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--replicas", "0"], "--replicas: must be at least 1, got 0", id="no-replicas"),
        pytest.param(["--apiservers", "0"], "--apiservers: must be at least 1, got 0", id="no-apiservers"),
        pytest.param(["--apiservers", "2"], "--apiservers: 2 API servers need a shared etcd store",
                     id="2-on-sqlite"),
        pytest.param(["--etcd", "127.0.0.1:2379", "--etcd-local", "3"], "not allowed with argument",
                     id="two-stores"),
        pytest.param(["--etcd-local", "-1"], "--etcd-local: must be at least 1 member, got -1",
                     id="etcd-local"),
        pytest.param(["--etcd", ","], "--etcd: expected host:port[,host:port...]", id="etcd-empty"),
        pytest.param(["--nodes", "-2"], "--nodes: must be 0 or more, got -2", id="nodes"),
        pytest.param(["--replicas", "three"], "argument --replicas: invalid int value: 'three'",
                     id="replicas-word"),
        pytest.param(["--listen", "localhost"], "--listen: expected HOST:PORT, got 'localhost'", id="listen"),
        pytest.param(["--listen", "127.0.0.1:70000"], "--listen: port 70000 is out of range",
                     id="listen-port"),
        pytest.param(["--leader-elect-lease-duration", "1s"],
                     "leaseDuration must be greater than renewDeadline", id="lease-shorter-than-renew"),
        pytest.param(["--leader-elect-retry-period", "soon"], "invalid duration 'soon'", id="retry-word"),
        pytest.param(["--ui", "--ui-listen", "8080"], '--ui-listen: invalid address "8080"', id="ui-listen"),
        pytest.param(["--ui-listen", "127.0.0.1:0"], "--ui-listen: applies with --ui only",
                     id="ui-listen-alone"),
        pytest.param(["--ui-allowed-host", "ui.example"], "--ui-allowed-host: applies with --ui only",
                     id="ui-allowed-host-alone"),
        pytest.param(["--ui", "--ui-allowed-host", "ui.example:http"],
                     "--ui-allowed-host: expected NAME or NAME:PORT, got 'ui.example:http'",
                     id="ui-allowed-host"),
    ],
)
def test_bad_flags_exit_2_with_a_clear_error(args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "cluster.cli", "up", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=STEP_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_api_server_that_cannot_start_is_an_error_with_its_output() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "cluster.cli", "up", "--replicas", "1", "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, cwd=REPO, timeout=STEP_TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 1, done
    assert re.search(r"podsched up: podsched apiserver .* exited with code \d+; its output:", done.stderr)
    store = re.search(r"store: embedded SQLite in (\S+)", done.stdout)
    assert store and not Path(store[1]).exists(), "its temporary data directory is removed"


def _processes_naming(text: str) -> list[int]:
    """Live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if process_alive(pid)]


def test_ctrl_c_while_starting_stops_what_has_started() -> None:
    up = Up("--replicas", "3", "--listen", "127.0.0.1:0", *TIMINGS)
    try:
        server = up.wait_for(r"apiserver-1 started: pid \d+, serving on (\S+)")[1]
        code, err = up.stop(signal.SIGINT, group=True)
        assert code == 0, err
        assert re.search(r"stopping before everything has started|stopped: every process has exited", up.out)
        # Replicas being started at that moment were waited for and stopped too.
        deadline = time.monotonic() + 10
        while left := _processes_naming(f"--server {server} "):
            assert time.monotonic() < deadline, f"replicas left running: {left}"
            time.sleep(0.1)
        _wait_gone(up.pids())
    finally:
        up.kill()
