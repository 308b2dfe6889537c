"""`podsched demo` (what `make demo` runs), run as a user runs it: its exit code, the lines that carry its
story (preemption, a gang waiting whole and then bound at once, the failovers) and its measured failover
times, its runtime, and no process left behind, also after Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.launcher.supervisor import process_alive
from tests.integration.helpers import REPO

DEMO_TIMEOUT_S = 120.0
# The bounds the README's quick start gives for the demo's timings (lease 3s, retry 0.5s, jitter 1.2).
KILL_BOUND_S = 3.0 + 0.5 * 1.2 + 1.0
TERM_BOUND_S = 0.5 * 1.2 + 1.0


def _pids(out: str) -> set[int]:
    """Every process the demo reported starting."""
    return {int(pid) for pid in re.findall(r"\[up\] \S+ \S+ (?:started|restarted): pid (\d+)", out)}


@pytest.mark.timing
def test_demo_tells_the_ha_story_and_passes_every_check() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "demo"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO, timeout=DEMO_TIMEOUT_S,
    )
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr
    # `podsched up`'s machinery: one API server, three replicas as processes, one of them elected.
    assert "$ podsched up --replicas 3 " in out
    assert re.search(r"\[up\] [\d:.]+ apiserver-1 started: pid \d+, serving on 127\.0\.0\.1:\d+", out)
    replicas = re.findall(r"\[up\] [\d:.]+ (scheduler-\d) started: pid \d+, identity (\S+)", out)
    assert sorted(name for name, _ in replicas) == ["scheduler-1", "scheduler-2", "scheduler-3"]
    # The web view, on a free port, its URL told in the first chapter.
    ui = re.search(r"\[up\] [\d:.]+ ui: (http://127\.0\.0\.1:\d+/)", out)
    assert ui and f"Watch the story live in a browser: {ui[1]}" in out.split("=== 2.")[0]
    first = re.search(r"\[up\] [\d:.]+ leader is now (\S+) \((scheduler-\d), fencing token (\d+), after", out)
    assert first and (first[2], first[1]) in replicas
    assert re.search(rf"kube-scheduler\s+{first[1]}\s", out), "get lease shows the holder"
    # Pods bound by the leader, under its fence, stamped by the API server.
    assert "pod/web created" in out
    assert f"podsched.io/bound-under-fence: {first[1]}@{first[3]}" in out
    # Preemption: the filler evicted, urgent bound to the room it freed.
    assert re.search(r"Normal\s+Preempted\s+pod/filler\s+Preempted by pod \S+ on node node-small", out)
    assert "Successfully assigned default/urgent to node-small" in out
    # A gang: nothing of it bound while the batch pods hold the room, all nine bound at once after.
    assert "podgroup.scheduling.k8s.io/resnet-training created" in out
    told = out.replace("\n# ", " ")
    assert "put it back: 0/9 bound, none holding room. The group's reason" in told
    waiting = re.search(r"^  pod group default/resnet-training: (\d)/9 pods placeable, minCount 9: pod "
                        r"resnet-training-\S+: \d/\d nodes are available: ", out, re.MULTILINE)
    assert waiting and int(waiting[1]) < 9, out[-6000:]
    assert re.search(r"^resnet-training\s+9\s+0\s", out, re.MULTILINE), "get podgroup: 0 scheduled"
    assert 'pod "busy-a" deleted' in out and 'pod "busy-b" deleted' in out
    assert re.search(r"All 9 bound at once, at resourceVersion \d+: one store transaction under the leader's "
                     r"fence, on node-", told), out[-6000:]
    rows = re.findall(r"^resnet-training-(?:launcher|worker-\d)\s.*$", out, re.MULTILINE)
    assert len(rows) == 9 and all("<none>" not in row.split()[6] for row in rows)
    # SIGKILL of the leader: restarted by the supervisor, a standby takes over within the bound.
    kill = re.search(r"^\$ kill -9 (\d+)    # (scheduler-\d), the leader$", out, re.MULTILINE)
    assert kill
    assert f"{kill[2]} (pid {kill[1]}) exited with signal SIGKILL; restarting in 0.5s" in out
    assert re.search(rf"\[up\] [\d:.]+ {kill[2]} restarted: pid \d+, identity \S+", out)
    assert "Timeline:" in out and "first bind by the new leader: default/after-kill -> node-" in out
    failover = re.search(r"Failover after SIGKILL: (\d+\.\d\d)s to a new leader .* (\d+\.\d\d)s to its first",
                         out.replace("\n# ", " "))
    assert failover, out[-4000:]
    assert 0 < float(failover[1]) <= KILL_BOUND_S and float(failover[1]) <= float(failover[2])
    assert "load: done: submitted 20/20, bound 20, pending 0" in out
    # SIGTERM of the new leader: released, taken over at once, the old one back as a standby.
    term = re.search(r"^\$ kill -TERM (\d+)    # (scheduler-\d), the leader$", out, re.MULTILINE)
    assert term and term[2] != kill[2], "the replica that took over from the killed one"
    assert f"{term[2]} released the lease: no leader" in out
    assert f"{term[2]} (pid {term[1]}) exited with code 0" in out
    handoff = re.search(r"Handoff after SIGTERM: (\d+\.\d\d)s to a new leader", out.replace("\n# ", " "))
    assert handoff and float(handoff[1]) <= TERM_BOUND_S
    assert re.search(r"SIGKILL\s+new leader after \d+\.\d\ds, first bind after", out)
    assert re.search(r"SIGTERM\s+new leader after \d+\.\d\ds, first bind after", out)
    # Well under a minute, and nothing left running.
    took = re.search(r"The demo took (\d+\.\d)s; all (\d+) processes it started have stopped", out)
    assert took and float(took[1]) < 60.0
    pids = _pids(out)
    assert len(pids) == int(took[2]) and len(pids) >= 6
    assert not [pid for pid in pids if process_alive(pid)]


def test_ctrl_c_stops_the_demo_and_every_process_it_started() -> None:
    demo = subprocess.Popen(
        [sys.executable, "-m", "cluster.cli", "demo"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert demo.stdout is not None
        seen = []
        for line in demo.stdout:
            seen.append(line)
            if line.startswith("=== 2."):
                break
        demo.send_signal(signal.SIGINT)
        rest, err = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == 130, err
    assert "interrupted: stopping the demo's processes" in err
    pids = _pids("".join(seen) + rest)
    assert len(pids) >= 4
    deadline = time.monotonic() + 10
    while [pid for pid in pids if process_alive(pid)]:
        assert time.monotonic() < deadline, f"left running: {[pid for pid in pids if process_alive(pid)]}"
        time.sleep(0.1)
    # Its temporary directory went with it.
    data = re.search(r"store: embedded SQLite in (\S+)/data", "".join(seen))
    assert data and not Path(data[1]).exists()
