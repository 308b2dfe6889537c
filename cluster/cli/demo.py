"""`podsched demo` (what `make demo` runs): high availability, told with real processes.

It runs what `podsched up` runs, on the embedded store in a temporary directory: one API server and three
`podsched scheduler` replicas electing a leader on a Lease (with short timings: lease 3s, renew deadline
2s, retry period 0.5s), under a supervisor that restarts any replica that exits. Then, with the same
`podsched` commands a user would type (each printed as `$ podsched ...` with its real output):

1. nodes join and the example pods are bound, each under the leader's fencing token;
2. a high-priority pod preempts a low-priority one on a full node (the victim is deleted, the preemptor
   bound);
3. a training job (examples/training-job.yaml: a launcher and eight workers in one PodGroup, a gang)
   waits whole while batch pods of a higher priority keep the nodes busy, and once they are deleted all
   nine are bound together, in one group bind (one resourceVersion);
4. the leader is killed (SIGKILL): a standby takes over once the lease runs out and keeps scheduling, and
   the supervisor brings the killed replica back as a standby; the timeline and the failover time are
   printed (kill -> the new leader's lease write -> its first bind);
5. the new leader is stopped with SIGTERM: it releases the lease and a standby takes over at once.

Every step is checked; the demo exits 0 when all passed and 1 naming the first that did not. It ends by
itself in well under a minute and stops every process it started, on success, failure and Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, podgroups
from cluster.api.fencing import BOUND_UNDER_FENCE_ANNOTATION
from cluster.client import Client, Informer, LeaderChange
from cluster.launcher.localcluster import LocalCluster, UpConfig
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, UiProcess, cli_env
from cluster.launcher.supervisor import RestartPolicy, process_alive, stamped
from scheduler.leaderelection import JITTER_FACTOR, LeaderElectionTimings

#: The election's timings: short, so that a failover fits in a demo (kube-scheduler's are 15s/10s/2s).
LEASE_S = 3.0
RENEW_S = 2.0
RETRY_S = 0.5
#: The failover bounds the demo checks: a standby tries within one jittered retry period, plus a second of
#: slack; after a kill the leader's lease must run out first, a released one not.
KILL_BOUND_S = LEASE_S + RETRY_S * JITTER_FACTOR + 1.0
TERM_BOUND_S = RETRY_S * JITTER_FACTOR + 1.0
#: Each step (a command, a wait) gives up after this long: the demo must never hang.
STEP_TIMEOUT_S = 30.0
#: Pods the new leader schedules after the failover, with `podsched load`.
LOAD_COUNT = 20
#: The gang of the demo: examples/training-job.yaml's PodGroup and its launcher and eight workers.
TRAINING_JOB = "training-job.yaml"
GANG = "resnet-training"
GANG_PODS = (f"{GANG}-launcher", *(f"{GANG}-worker-{i}" for i in range(8)))
#: The annotation the API server puts on a pod bound under a fence: "<holder>@<token>".


class DemoFailed(Exception):
    """A step did not do what the story says; the message shows the step and its output."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a narrated tour of high availability: leader election, preemption, failover, handoff",
        description=__doc__.split("\n\n")[0],
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        manifests = find_manifests()
    except DemoFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return asyncio.run(_main(manifests))


def find_manifests() -> Path:
    """examples/manifests of the repository this package runs from (an editable install, as `make demo`
    makes), else of the current directory."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = root / "examples" / "manifests"
        if ((candidate / "pods.yaml").is_file() and (candidate / "preemption").is_dir()
                and (candidate / "gang").is_dir() and (candidate.parent / TRAINING_JOB).is_file()):
            return candidate
    raise DemoFailed(
        "podsched demo needs the examples/manifests folder of the podsched repository: "
        "run it from a clone (make demo)"
    )


async def _main(manifests: Path) -> int:
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        main.cancel()

    # Ctrl-C and SIGTERM end the demo through the cleanup below.
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt)
    with tempfile.TemporaryDirectory(prefix="podsched-demo-") as workdir:
        demo = _Demo(manifests, Path(workdir))
        try:
            await demo.run()
        except asyncio.CancelledError:
            if not interrupted:
                raise
            print("\ninterrupted: stopping the demo's processes", file=sys.stderr, flush=True)
            await asyncio.shield(demo.cleanup())
            return 130
        except DemoFailed as exc:
            print(f"\ndemo failed: {exc}", file=sys.stderr, flush=True)
            await demo.cleanup()
            return 1
        except BaseException:
            await asyncio.shield(demo.cleanup())
            raise
        await demo.cleanup()
        pids = demo.pids_started()
        left = [pid for pid in pids if process_alive(pid)]
        if left:
            print(f"\ndemo failed: processes still running after the end: {left}", file=sys.stderr)
            return 1
    print(f"\nThe demo took {time.monotonic() - started:.1f}s; all {len(pids)} processes it started have "
          "stopped.", flush=True)
    return 0


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when inside it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Bind:
    """A pod seen bound: when (monotonic), where, under which leader's fence, and at which
    resourceVersion (the store revision of the write that bound it)."""

    seen_at: float
    node: str
    fence: str
    resource_version: str


class _Pods:
    """Every pod of the cluster through an informer: when each was first seen bound (and under which
    fence), nominated, or deleted. The demo waits on it instead of sleeping."""

    def __init__(self, client: Client) -> None:
        self.binds: dict[str, Bind] = {}
        self.nominated: dict[str, str] = {}
        self.deleted: dict[str, float] = {}
        self._changed = asyncio.Event()
        self._informer = Informer(client, kinds.POD)
        self._informer.add_handler(on_add=self._seen, on_update=lambda _old, new: self._seen(new),
                                   on_delete=self._gone)

    async def run(self) -> None:
        await self._informer.run()

    async def wait_synced(self) -> None:
        await self._informer.wait_synced()

    def _seen(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if pod.spec.node_name and key not in self.binds:
            fence = pod.metadata.annotations.get(BOUND_UNDER_FENCE_ANNOTATION, "")
            self.binds[key] = Bind(time.monotonic(), pod.spec.node_name, fence, pod.metadata.resource_version)
        if pod.status.nominated_node_name:
            self.nominated[key] = pod.status.nominated_node_name
        self._wake()

    def _gone(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        self.deleted[f"{pod.metadata.namespace}/{pod.metadata.name}"] = time.monotonic()
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def until(self, what: str, done: Callable[[], bool]) -> None:
        try:
            async with asyncio.timeout(STEP_TIMEOUT_S):
                while not done():
                    await self._changed.wait()
        except TimeoutError:
            raise DemoFailed(f"{what} did not happen within {STEP_TIMEOUT_S:g}s") from None

    async def wait_bound(self, keys: Collection[str]) -> dict[str, Bind]:
        await self.until(f"binding {', '.join(sorted(keys))}", lambda: all(key in self.binds for key in keys))
        return {key: self.binds[key] for key in keys}

    def first_bind_under(self, holder: str, after: float) -> tuple[str, Bind] | None:
        found = [(key, bind) for key, bind in self.binds.items()
                 if bind.seen_at >= after and bind.fence.startswith(f"{holder}@")]
        return min(found, key=lambda item: item[1].seen_at, default=None)


class _Demo:
    def __init__(self, manifests: Path, workdir: Path) -> None:
        self.manifests = manifests
        self.workdir = workdir
        self.config = UpConfig(
            replicas=3, data_dir=workdir / "data", port=0,
            # The web view on a free port: a busy 8080 must not fail the demo.
            ui=True, ui_listen="127.0.0.1:0",
            timings=LeaderElectionTimings(LEASE_S, RENEW_S, RETRY_S),
            # A replica that exits comes back quickly (and every time: it is a short story).
            restart_policy=RestartPolicy(initial_s=0.5, max_s=2.0, reset_after_s=2.0),
        )
        self.cluster = LocalCluster(self.config, report=self._up_line)
        #: What `up` said, with when (monotonic): the failover timelines are cut from it.
        self.up_lines: list[tuple[float, str]] = []
        #: Set, and replaced by a fresh one, at every line `up` says.
        self._said = asyncio.Event()
        self.pods: _Pods | None = None
        self._client: Client | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._pids: set[int] = set()
        self.failovers: list[tuple[str, float, float]] = []

    # ------------------------------------------------------------------------------------- helpers

    def _up_line(self, text: str) -> None:
        self.up_lines.append((time.monotonic(), text))
        said, self._said = self._said, asyncio.Event()
        said.set()
        print(f"    [up] {stamped(text)}", flush=True)
        self._note_pids()

    def _note_pids(self) -> None:
        children: list[SchedulerProcess | ApiServerProcess | UiProcess] = [
            *self.cluster.replicas.values(), *self.cluster.apiservers.values(),
            *([self.cluster.ui] if self.cluster.ui is not None else [])]
        for child in children:
            if child.process is not None:
                self._pids.add(child.process.pid)

    def pids_started(self) -> set[int]:
        return set(self._pids)

    def chapter(self, title: str, text: str = "") -> None:
        print(f"\n=== {title} ===", flush=True)
        if text:
            self.say(text)

    def say(self, text: str) -> None:
        for line in textwrap.wrap(" ".join(text.split()), 100):
            print(f"# {line}", flush=True)

    async def podsched(self, *argv: str, expect: int = 0, check: Callable[[str], bool] | None = None) -> str:
        """Run a `podsched` command as the user would, print it and its output; its output."""
        print(f"$ podsched {shlex.join(argv)}", flush=True)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cluster.cli", *argv, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            env=cli_env(self.cluster.servers),
        )
        try:
            async with asyncio.timeout(STEP_TIMEOUT_S):
                out, _ = await process.communicate()
        except BaseException as exc:
            if process.returncode is None:
                process.kill()
                await process.wait()
            if isinstance(exc, TimeoutError):
                command = shlex.join(argv)
                raise DemoFailed(f"`podsched {command}` did not finish in {STEP_TIMEOUT_S:g}s") from exc
            raise
        text = out.decode()
        print(text, end="", flush=True)
        if process.returncode != expect:
            raise DemoFailed(f"`podsched {shlex.join(argv)}` exited {process.returncode}, expected {expect}")
        if check is not None and not check(text):
            raise DemoFailed(f"`podsched {shlex.join(argv)}` printed something unexpected:\n{text}")
        return text

    def leader_replica(self) -> str:
        name = self.cluster.replica_of(self.cluster.leader)
        if name is None:
            raise DemoFailed(f"the lease is held by {self.cluster.leader or 'nobody'}, not by a replica")
        return name

    async def new_leader(self, other_than: str) -> LeaderChange:
        try:
            return await self.cluster.wait_leader(other_than=other_than, timeout_s=STEP_TIMEOUT_S)
        except TimeoutError:
            raise DemoFailed(f"no replica took over from {other_than} within {STEP_TIMEOUT_S:g}s") from None

    async def wait_restart(self, name: str, restarts: int) -> None:
        """Wait until the supervisor has started ``name`` again, and check it came back as a standby."""
        supervisor = self.cluster.supervisor
        try:
            async with asyncio.timeout(STEP_TIMEOUT_S):
                while supervisor.restarts(name) == restarts:
                    await self._said.wait()  # `up` reports every restart
        except TimeoutError:
            raise DemoFailed(f"the supervisor did not restart {name} within {STEP_TIMEOUT_S:g}s") from None
        if self.leader_replica() == name:
            raise DemoFailed(f"{name} leads right after its restart: it should have come back as a standby")

    async def submit_pod(self, name: str) -> None:
        """Create a small pod through the Python client, at once (a CLI command would first spend most of
        a second starting Python): the pod the next leader must bind."""
        print(f'>>> await client.create(pod("{name}"))    # 100m cpu, 128Mi', flush=True)
        assert self._client is not None
        pod = objects_pb2.Pod(api_version="v1", kind="Pod")
        pod.metadata.name = name
        pod.metadata.namespace = "default"
        container = pod.spec.containers.add(name="app", image="busybox:1.36", command=["sleep", "infinity"])
        container.resources.requests.update({"cpu": "100m", "memory": "128Mi"})
        await self._client.create(pod)

    # --------------------------------------------------------------------------------------- story

    async def run(self) -> None:
        self.chapter(
            "podsched demo: high availability",
            "An API server on the embedded SQLite store and three scheduler replicas, each a separate "
            "process. One replica leads, holding a Lease it renews through the API server; only the "
            "leader schedules, and every write it makes carries its fencing token, which the API server "
            "checks against the Lease in the same transaction.",
        )
        await self.start()
        await self.nodes_and_pods()
        await self.preemption()
        await self.gang()
        await self.kill_the_leader()
        await self.handoff()
        self.finish()

    async def start(self) -> None:
        self.chapter(
            "1. podsched up",
            f"Lines marked [up] are what `podsched up` prints, as things happen. Timings are short for "
            f"the demo: lease {LEASE_S:g}s, renew deadline {RENEW_S:g}s, retry period {RETRY_S:g}s.",
        )
        print(f"$ podsched up --replicas 3 --listen 127.0.0.1:0 --leader-elect-lease-duration {LEASE_S:g}s "
              f"--leader-elect-renew-deadline {RENEW_S:g}s --leader-elect-retry-period {RETRY_S:g}s "
              "--ui --ui-listen 127.0.0.1:0 &", flush=True)
        await self.cluster.start()
        print(f"$ export PODSCHED_SERVER={self.cluster.servers}", flush=True)
        if self.cluster.ui is not None:
            self.say(f"Watch the story live in a browser: {self.cluster.ui.url} (podsched ui, read-only).")
        self._client = Client(self.cluster.servers, timeout_s=STEP_TIMEOUT_S)
        self.pods = _Pods(self._client)
        self._tasks.append(asyncio.create_task(self.pods.run(), name="pods"))
        await self.pods.wait_synced()
        change = await self.new_leader(other_than="")
        leader = self.leader_replica()
        self.say(f"{leader} won the election. The Lease names it; the others are standbys, watching the "
                 "Lease with warm caches:")
        await self.podsched("get", "lease", "-n", "kube-system", check=lambda out: change.holder in out)

    async def nodes_and_pods(self) -> None:
        self.chapter(
            "2. Nodes join; the leader binds the pods",
            "Real Kubernetes manifests: nodes, priority classes, pods and a PodDisruptionBudget (fields "
            "podsched does not model are dropped with a warning, as kubectl's default validation does).",
        )
        await self.podsched("apply", "-f", _shown(self.manifests) + os.sep,
                            check=lambda out: "pod/web created" in out)
        assert self.pods is not None
        names = ["web", "cache", "report", "trainer"]
        binds = await self.pods.wait_bound([f"default/{name}" for name in names])
        await self.podsched("get", "pods", "-o", "wide",
                            check=lambda out: all(bind.node in out for bind in binds.values()))
        assert self.cluster.leadership is not None
        holder, token = self.cluster.leader, self.cluster.leadership.changes[-1].token
        wrong = {key: bind.fence for key, bind in binds.items() if bind.fence != f"{holder}@{token}"}
        if wrong:
            raise DemoFailed(f"pods not bound under the leader's fence {holder}@{token}: {wrong}")
        self.say(
            f"Each bind carried the leader's fence, and the API server stamped the pod with it "
            f"({BOUND_UNDER_FENCE_ANNOTATION}: {holder}@{token}), so history shows who bound what. "
            "describe shows why the leader chose web's node:"
        )
        await self.podsched("describe", "pod", "web", check=lambda out: all(
            word in out
            for word in ("Scheduled", "Scheduling explanation (last attempt)", BOUND_UNDER_FENCE_ANNOTATION)
        ))

    async def preemption(self) -> None:
        folder = self.manifests / "preemption"
        self.chapter(
            "3. A high-priority pod preempts",
            "node-small is kept by a taint for one pool, and a low-priority batch pod (filler) takes most "
            "of it. Then urgent, a high-priority pod of the same pool, arrives: it fits nowhere, so the "
            "leader evicts the filler, nominates node-small for urgent, and binds it once the room is free.",
        )
        pods = self.pods
        assert pods is not None
        await self.podsched("apply", "-f", _shown(folder / "small-node.yaml"),
                            check=lambda out: "pod/filler created" in out)
        filler = (await pods.wait_bound(["default/filler"]))["default/filler"]
        if filler.node != "node-small":
            raise DemoFailed(f"filler was bound to {filler.node}, not node-small")
        await self.podsched("apply", "-f", _shown(folder / "urgent.yaml"),
                            check=lambda out: "pod/urgent created" in out)
        await pods.until("the filler's eviction", lambda: "default/filler" in pods.deleted)
        urgent = (await pods.wait_bound(["default/urgent"]))["default/urgent"]
        if urgent.node != "node-small":
            raise DemoFailed(f"urgent was bound to {urgent.node}, not node-small")
        if pods.nominated.get("default/urgent") != "node-small":
            raise DemoFailed("urgent was never nominated to node-small before its bind")
        self.say("The filler is gone and urgent runs on node-small; the events tell the story:")
        await self.podsched("get", "events", "--field-selector", "involvedObject.name=filler",
                            check=lambda out: "Preempted" in out)
        await self.podsched("describe", "pod", "urgent",
                            check=lambda out: "Successfully assigned default/urgent to node-small" in out)

    async def gang(self) -> None:
        job = self.manifests.parent / TRAINING_JOB
        self.chapter(
            "4. A gang waits for room, then starts whole",
            "A training job: an MPI launcher and eight workers that are useless apart, in one PodGroup "
            "with gang.minCount 9. No pod of it is bound until all nine have a place at the same time. "
            "Batch pods keep node-a and node-b busy first; their priority (1000) is above the gang's (0), "
            "so the gang may not evict them.",
        )
        pods = self.pods
        assert pods is not None and self._client is not None
        await self.podsched("apply", "-f", _shown(self.manifests / "gang" / "busy-nodes.yaml"),
                            check=lambda out: "pod/busy-b created" in out)
        await pods.wait_bound(["default/busy-a", "default/busy-b"])
        await self.podsched("apply", "-f", _shown(job),
                            check=lambda out: f"podgroup.scheduling.k8s.io/{GANG} created" in out)
        reason = await self.wait_group_scheduled("False")
        keys = [f"default/{name}" for name in GANG_PODS]
        bound = [key for key in keys if key in pods.binds]
        if bound:
            raise DemoFailed(f"the gang could not fit, yet {', '.join(bound)} were bound")
        self.say(f"The leader tried the whole group at once and put it back: 0/{len(keys)} bound, none "
                 "holding room. The group's reason, in its PodGroupInitiallyScheduled condition:")
        print(f"  {reason}", flush=True)
        await self.podsched("get", "podgroup", GANG, check=lambda out: GANG in out)
        self.say("Now the batch pods are deleted, as if they had finished: the room they free is what the "
                 "gang needs.")
        await self.podsched("delete", "pod", "busy-a", "busy-b", "--grace-period", "0",
                            check=lambda out: 'pod "busy-b" deleted' in out)
        binds = await pods.wait_bound(keys)
        versions = {bind.resource_version for bind in binds.values()}
        if len(versions) != 1:
            raise DemoFailed(f"the gang's pods were bound at several resourceVersions: {sorted(versions)}")
        fences = {bind.fence for bind in binds.values()}
        holder = self.cluster.leader
        if len(fences) != 1 or not next(iter(fences)).startswith(f"{holder}@"):
            raise DemoFailed(f"the gang's pods were not all bound under the leader's fence: {sorted(fences)}")
        await self.wait_group_scheduled("True")
        nodes = sorted({bind.node for bind in binds.values()})
        self.say(f"All {len(keys)} bound at once, at resourceVersion {versions.pop()}: one store transaction "
                 f"under the leader's fence, on {', '.join(nodes)}:")
        await self.podsched("get", "pods", "-l", f"app={GANG}", "-o", "wide",
                            check=lambda out: all(name in out for name in GANG_PODS))

    async def wait_group_scheduled(self, status: str) -> str:
        """Wait until the demo's PodGroup has PodGroupInitiallyScheduled=``status``, written by the scheduler
        after it tried the group; the condition's message."""
        assert self._client is not None
        try:
            async with asyncio.timeout(STEP_TIMEOUT_S):
                async for event in self._client.watch(kinds.POD_GROUP, "default"):
                    group = event.object
                    assert isinstance(group, objects_pb2.PodGroup)
                    if event.type == "DELETED" or group.metadata.name != GANG:
                        continue
                    wanted = (podgroups.POD_GROUP_INITIALLY_SCHEDULED, status)
                    for condition in group.status.conditions:
                        if (condition.type, condition.status) == wanted:
                            return condition.message
        except TimeoutError:
            pass
        raise DemoFailed(
            f"PodGroup {GANG} did not get PodGroupInitiallyScheduled={status} within {STEP_TIMEOUT_S:g}s")

    async def kill_the_leader(self) -> None:
        self.chapter(
            "5. The leader is killed",
            "kill -9 gives the leader no chance to hand over: the standbys must wait for its lease to run "
            "out (they judge that by their own clock, from when they last saw the Lease change). A pod "
            "created right after the kill waits for the new leader. The supervisor restarts the killed "
            "replica, which comes back as a standby.",
        )
        old_name, pid, killed_at, change, first = await self.signal_the_leader(signal.SIGKILL, "after-kill")
        self.timeline(killed_at, change, first, f"kill -9 {old_name} (pid {pid})")
        took, first_bind = change.seen_at - killed_at, first[1].seen_at - killed_at
        self.failovers.append(("SIGKILL", took, first_bind))
        if took > KILL_BOUND_S:
            raise DemoFailed(f"the failover took {took:.2f}s, more than lease + retry x {JITTER_FACTOR:g} "
                             f"+ 1s = {KILL_BOUND_S:.2f}s")
        self.say(
            f"Failover after SIGKILL: {took:.2f}s to a new leader (bound: lease {LEASE_S:g}s + retry "
            f"{RETRY_S:g}s x {JITTER_FACTOR:g} + 1s = {KILL_BOUND_S:.2f}s), {first_bind:.2f}s to its first "
            f"bind. {old_name} is back as a standby ({self.cluster.replicas[old_name].identity}). The new "
            f"leader keeps scheduling: {LOAD_COUNT} more pods with podsched load."
        )
        done = f"done: submitted {LOAD_COUNT}/{LOAD_COUNT}, bound {LOAD_COUNT}"
        await self.podsched("load", "--count", str(LOAD_COUNT), "--rate", "40", "-n", "load", "--wait",
                            "--timeout", "20s", "--progress-interval", "1s", check=lambda out: done in out)
        await self.podsched("get", "lease", "-n", "kube-system", check=lambda out: change.holder in out)

    async def handoff(self) -> None:
        self.chapter(
            "6. A graceful handoff",
            "SIGTERM, as a rolling update sends: the leader finishes what it is doing, releases the "
            "Lease (empty holder) and exits 0; a standby, watching the Lease, takes over at once.",
        )
        handoff = await self.signal_the_leader(signal.SIGTERM, "after-handoff")
        old_name, pid, stopped_at, change, first = handoff
        released = any(text.startswith(f"{old_name} released the lease") for at, text in self.up_lines
                       if at >= stopped_at)
        clean_exit = any(text.startswith(f"{old_name} (pid {pid}) exited with code 0")
                         for at, text in self.up_lines if at >= stopped_at)
        self.timeline(stopped_at, change, first, f"kill -TERM {old_name} (pid {pid})")
        took, first_bind = change.seen_at - stopped_at, first[1].seen_at - stopped_at
        self.failovers.append(("SIGTERM", took, first_bind))
        if not released:
            raise DemoFailed(f"{old_name} did not release the lease on SIGTERM")
        if not clean_exit:
            raise DemoFailed(f"{old_name} did not exit 0 on SIGTERM")
        if took > TERM_BOUND_S:
            raise DemoFailed(f"the handoff took {took:.2f}s, more than retry x {JITTER_FACTOR:g} + 1s "
                             f"= {TERM_BOUND_S:.2f}s")
        self.say(
            f"Handoff after SIGTERM: {took:.2f}s to a new leader (bound: retry {RETRY_S:g}s x "
            f"{JITTER_FACTOR:g} + 1s = {TERM_BOUND_S:.2f}s), {first_bind:.2f}s to its first bind; "
            f"{old_name} exited 0 and was started again as a standby."
        )

    async def signal_the_leader(
        self, signum: signal.Signals, pod_name: str
    ) -> tuple[str, int, float, LeaderChange, tuple[str, Bind]]:
        """Signal the leader's process, create ``pod_name`` at once, and wait for a new leader to bind it
        and for the supervisor to restart the old one: (old replica, its pid, when it was signalled, the
        change of leader, the new leader's first bind)."""
        assert self.pods is not None
        old_name = self.leader_replica()
        old_identity = self.cluster.leader
        pid = self.cluster.replicas[old_name].pid
        restarts = self.cluster.supervisor.restarts(old_name)
        shown = "-9" if signum == signal.SIGKILL else f"-{signum.name.removeprefix('SIG')}"
        print(f"$ kill {shown} {pid}    # {old_name}, the leader", flush=True)
        signalled_at = time.monotonic()
        os.kill(pid, signum)
        await self.submit_pod(pod_name)
        change = await self.new_leader(other_than=old_identity)
        await self.pods.wait_bound([f"default/{pod_name}"])
        first = self.pods.first_bind_under(change.holder, signalled_at)
        if first is None:
            raise DemoFailed(f"no pod was bound under the new leader's fence ({change.holder})")
        await self.wait_restart(old_name, restarts)
        return old_name, pid, signalled_at, change, first

    def timeline(self, start: float, change: LeaderChange, first: tuple[str, Bind], what: str) -> None:
        """The moments of a failover, from ``start``: what `up` said, the lease write, the first bind."""
        wall = datetime.now().timestamp() - (time.monotonic() - start)
        moments = [(start, what)]
        moments += [(at, f"[up] {text}") for at, text in self.up_lines
                    if start <= at <= first[1].seen_at and not text.startswith("leader is now")]
        replica = self.cluster.replica_of(change.holder)
        moments.append((change.seen_at, f"lease written by {replica}, the new leader (fencing token "
                                        f"{change.token})"))
        key, bind = first
        moments.append((bind.seen_at, f"first bind by the new leader: {key} -> {bind.node} ({bind.fence})"))
        print("\nTimeline:", flush=True)
        for at, text in sorted(moments, key=lambda moment: moment[0]):
            clock = datetime.fromtimestamp(wall + (at - start)).strftime("%H:%M:%S.%f")[:-3]
            print(f"  {clock}  +{at - start:6.3f}s  {text}", flush=True)

    def finish(self) -> None:
        self.chapter("Done", "Every check passed. Failover times measured in this run:")
        for how, took, first_bind in self.failovers:
            print(f"  {how:<8} new leader after {took:.2f}s, first bind after {first_bind:.2f}s", flush=True)
        self.say("Stopping everything, as Ctrl-C stops podsched up: the replicas first, then the API server.")

    async def cleanup(self) -> None:
        """Stop whatever still runs; called on every way out."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self._client is not None:
            await self._client.close()
            self._client = None
        self._note_pids()
        await self.cluster.stop()
