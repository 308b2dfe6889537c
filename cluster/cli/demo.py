"""`podsched demo` (what `make demo` runs): a narrated tour of the API server and the scheduler.

It starts `podsched apiserver` on a temporary data directory and a free port and `podsched scheduler`
against it, both as real processes, then runs the same `podsched` commands a user would type — each
printed as a `$ podsched ...` line followed by its real output — through apply, get, describe, the
scheduler's bindings, a live watch, a pod that fits nowhere until a larger node joins, conflicts,
rejected manifests, graceful deletion, and a `kill -9` of the API server followed by a restart that
finds every object at the same resourceVersion while the scheduler, still running, reconnects and
binds the next pod.

It ends by itself in well under a minute and stops every process it started, on success, on failure and
on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cluster.api import errors, kinds
from cluster.cli.process import (
    ApiServerProcess,
    SchedulerProcess,
    SchedulerStartError,
    cli_env,
    die_with_parent_prefix,
)
from cluster.client import Client

# Each CLI step and each wait for the live watch gives up after this long: the demo must never hang.
STEP_TIMEOUT_S = 30.0
# The grace period of the pod the demo deletes: long enough to see it Terminating, short enough to wait.
GRACE_S = 3


T = TypeVar("T")


class DemoFailed(Exception):
    """A step did not do what the story says; the message shows the step and its output."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a narrated tour: API server and scheduler, apply, get, watch, conflict, crash and restart",
        description=__doc__.split("\n\n")[0],
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        manifests = find_manifests()
    except DemoFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    started = time.monotonic()
    # Ctrl-C and SIGTERM end the demo through the cleanup below (SIGINT too when the demo was started
    # where it is ignored, as in the background of a script).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="podsched-demo-") as workdir:
        demo = _Demo(manifests, Path(workdir))
        try:
            demo.run()
        except KeyboardInterrupt:
            print("\ninterrupted: stopping the demo's processes", file=sys.stderr)
            return 130
        except DemoFailed as exc:
            print(f"\ndemo failed: {exc}", file=sys.stderr)
            return 1
        finally:
            demo.cleanup()
    print(f"\nThe demo took {time.monotonic() - started:.1f}s; every process it started has stopped.")
    return 0


def find_manifests() -> Path:
    """examples/manifests of the repository this package runs from (an editable install, as `make demo`
    makes), else of the current directory."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = root / "examples" / "manifests"
        if (candidate / "pods.yaml").is_file():
            return candidate
    raise DemoFailed(
        "podsched demo needs the examples/manifests folder of the podsched repository: "
        "run it from a clone (make demo)"
    )


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when inside it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


class _Watch:
    """`podsched get pods -w` running in the background; its lines are printed as they arrive, and the
    demo waits for the one each step should cause, so the story reads in order."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [*die_with_parent_prefix(), *command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=env,
        )
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            print(f"    [watch] {line.rstrip()}", flush=True)
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()

    def wait_for(self, *words: str) -> None:
        """Wait until a line contains every one of ``words``."""

        def seen() -> bool:
            return any(all(word in line for word in words) for line in self._lines)

        with self._changed:
            if not self._changed.wait_for(seen, STEP_TIMEOUT_S):
                raise DemoFailed(f"the watch never printed a line with {' '.join(words)}")

    def stop(self) -> int:
        """Ctrl-C, as a user ends a watch; its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        return self.process.returncode


class _Demo:
    def __init__(self, manifests: Path, workdir: Path) -> None:
        self.manifests = manifests
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.server = ApiServerProcess(["--data-dir", str(self.data_dir)])
        self.scheduler: SchedulerProcess | None = None
        self.watch: _Watch | None = None

    # ------------------------------------------------------------------------------------- helpers

    @property
    def env(self) -> dict[str, str]:
        return cli_env(self.server.address)

    def chapter(self, title: str, text: str = "") -> None:
        print(f"\n=== {title} ===", flush=True)
        if text:
            self.say(text)

    def say(self, text: str) -> None:
        for line in textwrap.wrap(" ".join(text.split()), 100):
            print(f"# {line}", flush=True)

    def podsched(self, *argv: str, expect: int = 0, check: Callable[[str], bool] | None = None) -> str:
        """Run a `podsched` command as the user would, print it and its output; its output."""
        print(f"$ podsched {shlex.join(argv)}", flush=True)
        done = self._run(argv)
        print(done.stdout, end="", flush=True)
        if done.returncode != expect:
            raise DemoFailed(
                f"`podsched {shlex.join(argv)}` exited {done.returncode}, expected {expect}:\n{done.stdout}"
            )
        if check is not None and not check(done.stdout):
            raise DemoFailed(f"`podsched {shlex.join(argv)}` printed something unexpected:\n{done.stdout}")
        return done.stdout

    def podsched_section(self, *argv: str, start: str, end: str) -> str:
        """Run a `podsched` command and show only its lines from the one starting with ``start`` to the
        one starting with ``end``, printed as the `sed` pipeline that shows the same; that section."""
        print(f"$ podsched {shlex.join(argv)} | sed -n '/^{start}/,/^{end}/p'", flush=True)
        done = self._run(argv)
        if done.returncode != 0:
            raise DemoFailed(f"`podsched {shlex.join(argv)}` exited {done.returncode}:\n{done.stdout}")
        lines = done.stdout.splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith(start)), None)
        if first is None:
            raise DemoFailed(f"`podsched {shlex.join(argv)}` printed no {start!r} line:\n{done.stdout}")
        last = next((i for i in range(first + 1, len(lines)) if lines[i].startswith(end)), len(lines) - 1)
        section = "\n".join(lines[first:last + 1])
        print(section, flush=True)
        return section

    def _run(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run `podsched ARGV`; its exit code and output. Not subprocess.run: on Ctrl-C that kills the
        command without waiting for it, and the demo would leave it behind as a zombie."""
        process = subprocess.Popen(
            [sys.executable, "-m", "cluster.cli", *argv], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
        )
        try:
            stdout, _ = process.communicate(timeout=STEP_TIMEOUT_S)
        except BaseException as exc:
            process.kill()
            process.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                command = shlex.join(argv)
                raise DemoFailed(f"`podsched {command}` did not finish in {STEP_TIMEOUT_S:g}s") from exc
            raise
        return subprocess.CompletedProcess(process.args, process.returncode, stdout)

    def pending_pods_metrics(self, expected_unschedulable: int) -> None:
        """Show the scheduler's queue gauges once the unschedulable one reads ``expected_unschedulable``
        (a pod is filed there just after its FailedScheduling event is written)."""
        assert self.scheduler is not None
        url = f"{self.scheduler.metrics_url}/metrics"
        wanted = f'scheduler_pending_pods{{queue="unschedulable"}} {float(expected_unschedulable)}'
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:
            _, text = self.scheduler.get("/metrics")
            lines = [line for line in text.splitlines() if line.startswith("scheduler_pending_pods")]
            if wanted in lines:
                break
            if time.monotonic() > deadline:
                raise DemoFailed(f"the scheduler's metrics never showed {wanted}:\n" + "\n".join(lines))
            time.sleep(0.1)
        print(f"$ curl -s {url} | grep ^scheduler_pending_pods", flush=True)
        print("\n".join(lines), flush=True)

    def client_call(self, shown: str, call: Callable[[Client], Awaitable[T]]) -> T:
        """Run one call of the Python client against the server, printed as Python."""
        print(f">>> {shown}", flush=True)

        async def body() -> T:
            async with Client(self.server.address, timeout_s=STEP_TIMEOUT_S) as client:
                return await call(client)

        return asyncio.run(body())

    def wait_bound(self, names: Collection[str]) -> dict[str, str]:
        """Wait, with a watch, until the scheduler has bound every pod of ``names`` (in namespace
        default); pod name -> node. Gives up after STEP_TIMEOUT_S, naming the pods still unbound."""
        nodes: dict[str, str] = {}

        async def body() -> None:
            async with Client(self.server.address, timeout_s=STEP_TIMEOUT_S) as client:
                listed = await client.list("Pod", "default")
                nodes.update((pod.metadata.name, pod.spec.node_name) for pod in listed.items)
                if all(nodes.get(name) for name in names):
                    return
                async for event in client.watch("Pod", "default", resource_version=listed.resource_version):
                    nodes[event.object.metadata.name] = event.object.spec.node_name
                    if all(nodes.get(name) for name in names):
                        return

        async def bounded() -> None:
            await asyncio.wait_for(body(), STEP_TIMEOUT_S)

        try:
            asyncio.run(bounded())
        except TimeoutError as exc:
            unbound = ", ".join(sorted(name for name in names if not nodes.get(name)))
            raise DemoFailed(
                f"the scheduler did not bind {unbound} within {STEP_TIMEOUT_S:g}s; its output:\n"
                f"{self.scheduler_log()}"
            ) from exc
        return {name: nodes[name] for name in names}

    def scheduler_log(self) -> str:
        return self.scheduler.log() if self.scheduler is not None else "(not started)"

    def example_pod(self, name: str) -> dict[str, Any]:
        """One pod of examples/manifests/pods.yaml, as YAML data to edit."""
        documents = yaml.safe_load_all((self.manifests / "pods.yaml").read_text())
        return next(doc for doc in documents if doc["metadata"]["name"] == name)

    def write_manifest(self, name: str, document: dict[str, Any]) -> str:
        path = self.workdir / name
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return _shown(path)

    def start_server(self, listen: str) -> None:
        print(f"$ podsched apiserver --listen {listen} --data-dir {_shown(self.data_dir)} &", flush=True)
        self.server.start()
        print(self.server.log().strip().splitlines()[-1], flush=True)

    def start_scheduler(self) -> None:
        argv = ["scheduler", "--server", self.server.address, "--leader-elect=false",
                "--metrics-addr", "127.0.0.1:0"]
        print(f"$ podsched {shlex.join(argv)} &", flush=True)
        # Everything the scheduler logs after its startup line is shown as it arrives, so the story shows
        # when it binds and what it says while the API server is away.
        self.scheduler = SchedulerProcess(
            argv[1:], env=self.env, on_line=lambda line: print(f"    [scheduler] {line.rstrip()}", flush=True)
        )
        try:
            self.scheduler.start(STEP_TIMEOUT_S)
            print(self.scheduler.started_line, flush=True)
            self.scheduler.wait_ready(STEP_TIMEOUT_S)
        except SchedulerStartError as exc:
            raise DemoFailed(str(exc)) from exc

    # --------------------------------------------------------------------------------------- story

    def run(self) -> None:
        self.chapter(
            "podsched demo",
            "A Kubernetes-compatible API server on the embedded SQLite store and a scheduler with "
            "kube-scheduler's default plugins, driven with the podsched CLI.",
        )
        self.chapter(
            "1. Start the API server and the scheduler",
            "The API server on a temporary data directory and a free port; the scheduler as a second "
            "process, a client of it (leader election is not there yet, so it runs alone). Lines marked "
            "[scheduler] are its log, printed as they arrive: often before the output of the command "
            "that caused them, which prints when it ends.",
        )
        self.start_server("127.0.0.1:0")
        print(f"$ export PODSCHED_SERVER={self.server.address}", flush=True)
        self.start_scheduler()

        self.apply_examples()
        self.watch_changes()
        self.unschedulable()
        self.conflict()
        self.bad_manifests()
        self.graceful_delete()
        self.crash_and_restart()

        self.chapter("Done", "Stopping the scheduler, then the API server (SIGTERM: clean shutdowns).")
        assert self.scheduler is not None
        for name, pid, stop in (("scheduler", self.scheduler.pid, self.scheduler.stop),
                                ("API server", self.server.pid, self.server.stop)):
            print(f"$ kill -TERM {pid}", flush=True)
            code = stop()
            print(f"# the {name} exited with code {code}", flush=True)
            if code != 0:
                log = self.scheduler.log() if name == "scheduler" else self.server.log()
                raise DemoFailed(f"the {name} exited {code} on SIGTERM:\n{log}")

    def apply_examples(self) -> None:
        self.chapter(
            "2. Apply real Kubernetes manifests; the scheduler binds the pods",
            "Nodes, priority classes, pods and a PodDisruptionBudget, written as for Kubernetes. Fields "
            "podsched does not model (probes, volumes) are dropped with a warning, as kubectl's default "
            "validation does.",
        )
        self.podsched("apply", "-f", _shown(self.manifests) + os.sep,
                      check=lambda out: "pod/web created" in out)
        self.say("Applying a file again changes nothing:")
        self.podsched("apply", "-f", _shown(self.manifests / "pods.yaml"),
                      check=lambda out: "pod/web unchanged" in out)
        self.podsched("get", "nodes", "-o", "wide")
        self.say("Two system classes exist from the start, beside the ones just applied:")
        self.podsched("get", "priorityclasses")
        self.podsched("get", "pdb")
        pods = [doc["metadata"]["name"]
                for doc in yaml.safe_load_all((self.manifests / "pods.yaml").read_text())]
        placed = self.wait_bound(pods)
        self.say(
            f"The scheduler saw the {len(pods)} pods arrive and bound each to a node (the demo waits for "
            "that with a watch, not a sleep). The trainer pod tolerates node-gpu's taint and selects its "
            "accelerator label; the others cannot go there:"
        )
        self.podsched("get", "pods", "-o", "wide",
                      check=lambda out: all(f" {node} " in out for node in placed.values()))
        self.say(
            f"describe shows the priority admission resolved from the pod's class, the Scheduled event, "
            f"and why the scheduler chose {placed['web']}: the nodes it evaluated and their scores per "
            "plugin."
        )
        self.podsched("describe", "pod", "web", check=lambda out: all(
            word in out for word in ("100000", "Scheduled", "Scheduling explanation (last attempt)")
        ))

    def watch_changes(self) -> None:
        self.chapter(
            "3. Watch changes live",
            "A watch in the background lists the pods, then prints every change as it happens: a label "
            "edited with apply, and a new pod that the scheduler binds.",
        )
        command = [sys.executable, "-m", "cluster.cli", "get", "pods", "-w", "-o", "wide",
                   "--output-watch-events"]
        print("$ podsched get pods -w -o wide --output-watch-events &", flush=True)
        self.watch = _Watch(command, self.env)
        self.watch.wait_for("ADDED", "web")

        cache = self.example_pod("cache")
        cache["metadata"]["labels"]["version"] = "v2"
        path = self.write_manifest("cache-v2.yaml", cache)
        self.say(f"{path} is the cache pod with one more label, version=v2:")
        self.podsched("apply", "-f", path, check=lambda out: "pod/cache configured" in out)
        self.watch.wait_for("MODIFIED", "cache")

        web2 = self.example_pod("web")
        web2["metadata"]["name"] = "web-2"
        path = self.write_manifest("web-2.yaml", web2)
        self.say(
            f"{path} is a second web pod. It arrives Pending (ADDED); the scheduler binds it (MODIFIED, "
            "now Running on a node; with no kubelet, the API server marks a bound pod Running):"
        )
        self.podsched("apply", "-f", path, check=lambda out: "pod/web-2 created" in out)
        node = self.wait_bound(["web-2"])["web-2"]
        self.watch.wait_for("MODIFIED", "web-2", node)
        self.say(
            "The web pods prefer not to share a node (a preferred podAntiAffinity); InterPodAffinity's "
            "score shows it at work:"
        )
        self.podsched_section("describe", "pod", "web-2", start="Scheduling explanation", end="Events")

    def unschedulable(self) -> None:
        capacity = self.manifests / "capacity"
        self.chapter(
            "4. A pod that fits nowhere, until a larger node joins",
            "The analytics pod asks for 12 cpu: more than any untainted node has, and node-gpu is kept "
            "for pods tolerating its taint. The scheduler leaves it Pending and says why, as kube-scheduler "
            "does: a FailedScheduling event and the condition PodScheduled=False (the watch's MODIFIED "
            "line).",
        )
        assert self.watch is not None and self.scheduler is not None
        self.podsched("apply", "-f", _shown(capacity / "analytics.yaml"),
                      check=lambda out: "pod/analytics created" in out)
        self.watch.wait_for("ADDED", "analytics")
        self.wait_failed_scheduling("analytics")
        self.podsched("get", "pods", "analytics", check=lambda out: "Pending" in out)
        self.podsched("describe", "pod", "analytics", check=lambda out: all(
            word in out for word in ("FailedScheduling", "nodes are available",
                                     "Scheduling explanation (last attempt)")
        ))
        self.say(
            "It now waits among the unschedulable pods, retried only when a cluster event could make it "
            "fit (or after 5 minutes), as the scheduler's metrics show:"
        )
        self.pending_pods_metrics(expected_unschedulable=1)
        self.say("A node joining is such an event: apply a 32-cpu node, as a cluster autoscaler would.")
        added = time.monotonic()
        self.podsched("apply", "-f", _shown(capacity / "node-large.yaml"),
                      check=lambda out: "node/node-large created" in out)
        node = self.wait_bound(["analytics"])["analytics"]
        waited = time.monotonic() - added
        self.watch.wait_for("MODIFIED", "analytics", node)
        if node != "node-large":
            raise DemoFailed(f"the analytics pod was bound to {node}, not to the node just added")
        self.say(f"The scheduler bound analytics to node-large {waited:.1f}s after the node was applied.")
        self.podsched("get", "pods", "-o", "wide", check=lambda out: "node-large" in out)
        self.pending_pods_metrics(expected_unschedulable=0)

    def wait_failed_scheduling(self, pod: str) -> None:
        """Wait, with a watch, for the scheduler's FailedScheduling event about ``pod``."""

        async def body() -> None:
            async with Client(self.server.address, timeout_s=STEP_TIMEOUT_S) as client:
                async for event in client.watch("Event", "default",
                                                field_selector=f"involvedObject.name={pod}"):
                    if event.object.reason == "FailedScheduling":
                        return

        async def bounded() -> None:
            await asyncio.wait_for(body(), STEP_TIMEOUT_S)

        try:
            asyncio.run(bounded())
        except TimeoutError as exc:
            raise DemoFailed(
                f"the scheduler reported no FailedScheduling for {pod} within {STEP_TIMEOUT_S:g}s; its "
                f"output:\n{self.scheduler_log()}"
            ) from exc

    def conflict(self) -> None:
        self.chapter(
            "5. Optimistic concurrency",
            "Every write names the resourceVersion it read. Two writers read pod cache at the same "
            "version and both update it: the first wins, the second gets Kubernetes' conflict.",
        )
        pod = self.client_call('await client.get("Pod", "cache", "default")',
                               lambda client: client.get("Pod", "cache", "default"))
        version = pod.metadata.resource_version
        print(f"resourceVersion: {version}", flush=True)
        paths = []
        for owner in ("alice", "bob"):
            cache = self.example_pod("cache")
            cache["metadata"]["labels"]["owner"] = owner
            cache["metadata"]["resourceVersion"] = version
            paths.append(self.write_manifest(f"cache-{owner}.yaml", cache))
        self.say(f"{paths[0]} and {paths[1]} each set label owner and carry resourceVersion {version}:")
        self.podsched("apply", "-f", paths[0], check=lambda out: "pod/cache configured" in out)
        self.podsched("apply", "-f", paths[1], expect=1,
                      check=lambda out: "the object has been modified" in out)
        assert self.watch is not None
        self.watch.wait_for("MODIFIED", "cache")
        other = "node-b" if pod.spec.node_name != "node-b" else "node-a"
        self.say(
            f"Binding is guarded the same way: a pod already bound cannot be bound again, so two "
            f"schedulers can never both place it. Binding cache (on {pod.spec.node_name}) to {other} "
            "with the Python client:"
        )
        try:
            self.client_call(f'await client.bind("default", "cache", "{other}")',
                             lambda client: client.bind("default", "cache", other))
        except errors.Conflict as exc:
            print(f"Conflict: {exc.message}", flush=True)
        else:
            raise DemoFailed("binding a bound pod again succeeded")

    def bad_manifests(self) -> None:
        bad = self.manifests / "bad"
        self.chapter(
            "6. Bad input is refused, and nothing is half-applied",
            "mixed.yaml holds three pods; the second has an invalid name. The server checks every "
            "document before any is written, so none of the three is created.",
        )
        self.podsched("apply", "-f", _shown(bad / "mixed.yaml"), expect=1,
                      check=lambda out: "Mixed_Second" in out)
        self.podsched("get", "pods", check=lambda out: "mixed-" not in out)
        self.say("Admission refuses a pod that names a priority class that does not exist:")
        self.podsched("apply", "-f", _shown(bad / "unknown-priority-class.yaml"), expect=1,
                      check=lambda out: "gold" in out)

    def graceful_delete(self) -> None:
        self.chapter(
            "7. Graceful deletion",
            f"Deleting a running pod gives it a grace period ({GRACE_S}s here) to stop: it shows as "
            "Terminating, with a deletionTimestamp, and the API server removes it when the period ends "
            "(a pod that never got a node has nothing to stop and goes at once).",
        )
        self.podsched("delete", "pod", "web", f"--grace-period={GRACE_S}", "--no-wait")
        self.podsched("get", "pod", "web", check=lambda out: "Terminating" in out)
        assert self.watch is not None
        self.say("...and a few seconds later the watch sees it go:")
        self.watch.wait_for("DELETED", "web ")
        self.podsched("get", "pod", "web", expect=1, check=lambda out: "NotFound" in out)
        code = self.watch.stop()
        print(f"# (Ctrl-C ends the watch: exit code {code})", flush=True)
        if code != 0:
            raise DemoFailed(f"the watch exited {code} on Ctrl-C")

    def crash_and_restart(self) -> None:
        self.chapter(
            "8. Crash and restart",
            "kill -9 gives the API server no chance to clean up. Restarted on the same data directory, "
            "it serves every object again, each at the resourceVersion it had. The scheduler keeps "
            "running throughout: its informers' watches break with the server, and once it is back they "
            "watch again from the last resourceVersion they saw.",
        )
        assert self.scheduler is not None
        before = self.snapshot()
        self.podsched("get", "pods", "-o", "wide")
        logged_before = len(self.scheduler.lines)
        print(f"$ kill -9 {self.server.pid}", flush=True)
        self.server.kill()
        self.podsched("get", "pods", "--request-timeout=2", expect=1,
                      check=lambda out: "Unable to connect" in out)
        self.start_server(self.server.address)
        self.podsched("get", "pods", "-o", "wide")
        after = self.snapshot()
        if after != before:
            lost = sorted(set(before.items()) ^ set(after.items()))
            raise DemoFailed(f"objects changed across the restart: {lost}")
        self.say(f"All {len(after)} objects are back, each at the same resourceVersion.")
        if not self.scheduler.running():
            raise DemoFailed(f"the scheduler stopped while the API server was down:\n{self.scheduler.log()}")

        cache = self.example_pod("cache")
        cache["metadata"]["name"] = "cache-2"
        path = self.write_manifest("cache-2.yaml", cache)
        broken = [line for line in self.scheduler.lines[logged_before:]
                  if "watch from" in line and "failed" in line]
        self.say(
            f"The scheduler never stopped: it is the process started in chapter 1 (pid {self.scheduler.pid})."
            + (" Its log above shows its informers' watches breaking when the server died; its client "
               "opened them again, each from the resourceVersion it had reached, once the server was back."
               if broken else "")
            + f" A pod applied now ({path}, a second cache pod) is bound by it:"
        )
        applied = time.monotonic()
        self.podsched("apply", "-f", path, check=lambda out: "pod/cache-2 created" in out)
        node = self.wait_bound(["cache-2"])["cache-2"]
        waited = time.monotonic() - applied
        self.podsched("get", "pod", "cache-2", "-o", "wide", check=lambda out: node in out)
        self.say(f"Bound to {node} {waited:.1f}s after it was applied.")

    def snapshot(self) -> dict[str, str]:
        """Every object the server holds, as kind/namespace/name -> resourceVersion."""

        async def body() -> dict[str, str]:
            versions = {}
            async with Client(self.server.address, timeout_s=STEP_TIMEOUT_S) as client:
                for kind in kinds.KINDS:
                    listed = await client.list_all(kind)
                    for obj in listed.items:
                        meta = obj.metadata
                        versions[f"{kind.name}/{meta.namespace}/{meta.name}"] = meta.resource_version
            return versions

        return asyncio.run(body())

    def cleanup(self) -> None:
        """Stop whatever still runs, the scheduler before the server it talks to; called on every way
        out."""
        if self.watch is not None:
            self.watch.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
        self.server.stop()
