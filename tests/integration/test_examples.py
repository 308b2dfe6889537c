"""The programs in examples/ and `podsched demo` (what `make demo` runs), run as a user runs them."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from cluster.api import objects_pb2
from cluster.cli.process import ApiServerProcess, cli_env
from cluster.client import Client
from tests.integration.helpers import EXAMPLES, REPO

SUBMIT_TIMEOUT_S = 60.0
DEMO_TIMEOUT_S = 120.0


async def _play_scheduler(client: Client, namespace: str, node: str) -> None:
    """Bind every pod that appears unbound in ``namespace`` to ``node``, as a scheduler would."""
    async for event in client.watch("Pod", namespace):
        pod = event.object
        if event.type != "DELETED" and not pod.spec.node_name:
            await client.bind(namespace, pod.metadata.name, node)


async def test_submit_pods_waits_until_bound(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await client.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLES / "submit_pods.py"),
        "--count", "3", "--namespace", namespace, "--timeout", "30",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(apiserver.address), cwd=REPO,
    )
    scheduler = asyncio.create_task(_play_scheduler(client, namespace, node))
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), SUBMIT_TIMEOUT_S)
    finally:
        scheduler.cancel()
        await asyncio.gather(scheduler, return_exceptions=True)
    assert process.returncode == 0, stderr.decode()
    lines = stdout.decode().splitlines()
    created = [line for line in lines if line.endswith(" created")]
    bound = [line for line in lines if " bound to " in line]
    assert len(created) == 3
    assert sorted(bound) == sorted(f"{line.removesuffix(' created')} bound to {node}" for line in created)
    pods = (await client.list("Pod", namespace)).items
    assert len(pods) == 3 and all(pod.spec.node_name == node for pod in pods)


def test_submit_pods_times_out_naming_unbound_pods(apiserver: ApiServerProcess, namespace: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "submit_pods.py"), "--count", "2", "--namespace", namespace,
         "--timeout", "1"],
        capture_output=True, text=True, env=cli_env(apiserver.address), cwd=REPO, timeout=SUBMIT_TIMEOUT_S,
    )
    assert done.returncode == 1
    assert re.search(r"timed out after 1s; not bound: submit-\w+-0, submit-\w+-1", done.stderr)


def test_demo_runs_to_completion() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "demo"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO, timeout=DEMO_TIMEOUT_S,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr
    assert "no scheduler" not in out.lower()
    # Both servers start as real processes, the scheduler as a client of the API server.
    assert re.search(r"^\$ podsched scheduler --server 127\.0\.0\.1:\d+ --leader-elect=false", out,
                     re.MULTILINE)
    assert re.search(r"^podsched scheduler started \(profiles: default-scheduler; ", out, re.MULTILINE)
    assert "$ podsched apply -f examples/manifests/" in out
    # The scheduler, not the demo, binds the example pods; describe shows its event and its reasons.
    for pod in ("web", "cache", "report"):
        assert re.search(rf"\[scheduler\] .* bound default/{pod} to node-[ab]$", out, re.MULTILINE), pod
    assert re.search(r"\[scheduler\] .* bound default/trainer to node-gpu$", out, re.MULTILINE)
    assert re.search(
        r"Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default/web to node-", out
    )
    assert "Scheduling explanation (last attempt):" in out
    assert re.search(r"\[watch\] MODIFIED\s+web-2\s+1/1\s+Running\s.*\snode-[ab]\s", out)
    # A pod too big for every node: FailedScheduling with kube-scheduler's message, parked as unschedulable.
    assert re.search(
        r"Warning\s+FailedScheduling\s+\S+\s+default-scheduler\s+0/3 nodes are available: "
        r"1 node\(s\) had untolerated taint \{nvidia.com/gpu: present\}, 2 Insufficient cpu\.", out
    )
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in out
    # ...bound within seconds of a larger node joining (the node-add event, not the 5-minute flush).
    added = re.search(r"bound analytics to node-large (\d+\.\d)s after the node was applied", out)
    assert added and float(added[1]) < 15.0, out[-3000:]
    assert re.search(r"\[watch\] MODIFIED\s+analytics\s+1/1\s+Running\s.*\snode-large\s", out)
    assert "the object has been modified" in out
    assert "pods/binding \"cache\": pod cache is already assigned" in out
    # kill -9 of the API server: everything comes back; the scheduler, still running, binds a new pod.
    assert re.search(r"All \d+ objects are back, each at the same resourceVersion", out)
    after = out[out.index("All "):]
    assert re.search(r"\[scheduler\] .* bound default/cache-2 to node-", after)
    rebound = re.search(r"Bound to node-\S+ (\d+\.\d)s after it was applied", after)
    assert rebound and float(rebound[1]) < 15.0, out[-3000:]
    # Both stop cleanly, and the demo keeps well inside its one-minute budget.
    assert "# the scheduler exited with code 0" in out
    assert "# the API server exited with code 0" in out
    took = re.search(r"The demo took (\d+\.\d)s; every process it started has stopped", out)
    assert took and float(took[1]) < 60.0
    # The three processes it killed (the API server before and after the kill -9, the scheduler) are gone.
    pids = [int(pid) for pid in re.findall(r"^\$ kill -(?:9|TERM) (\d+)", out, re.MULTILINE)]
    assert len(pids) == 3
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()
