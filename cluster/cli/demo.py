"""`podsched demo` (what `make demo` runs): a narrated tour of the API server on the embedded store.

It starts `podsched apiserver` as a real process on a temporary data directory and a free port, then runs
the same `podsched` commands a user would type — each printed as a `$ podsched ...` line followed by its
real output — through apply, get, describe, a live watch, a binding, a conflict, rejected manifests,
graceful deletion, and a `kill -9` of the server followed by a restart that finds every object at the
same resourceVersion. There is no scheduler yet, so the demo binds a pod itself with the Python client.

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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cluster.api import errors, kinds
from cluster.cli.process import ApiServerProcess, cli_env, die_with_parent_prefix
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
        help="a narrated tour: API server, apply, get, watch, conflict, crash and restart",
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
        try:
            done = subprocess.run(
                [sys.executable, "-m", "cluster.cli", *argv], stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
                timeout=STEP_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            raise DemoFailed(f"`podsched {shlex.join(argv)}` did not finish in {STEP_TIMEOUT_S:g}s") from exc
        print(done.stdout, end="", flush=True)
        if done.returncode != expect:
            raise DemoFailed(
                f"`podsched {shlex.join(argv)}` exited {done.returncode}, expected {expect}:\n{done.stdout}"
            )
        if check is not None and not check(done.stdout):
            raise DemoFailed(f"`podsched {shlex.join(argv)}` printed something unexpected:\n{done.stdout}")
        return done.stdout

    def client_call(self, shown: str, call: Callable[[Client], Awaitable[T]]) -> T:
        """Run one call of the Python client against the server, printed as Python."""
        print(f">>> {shown}", flush=True)

        async def body() -> T:
            async with Client(self.server.address, timeout_s=STEP_TIMEOUT_S) as client:
                return await call(client)

        return asyncio.run(body())

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

    # --------------------------------------------------------------------------------------- story

    def run(self) -> None:
        self.chapter(
            "podsched demo",
            "A Kubernetes-compatible API server on the embedded SQLite store, driven with the podsched "
            "CLI. No scheduler exists yet: where one would bind pods, the demo does it by hand.",
        )
        self.chapter("1. Start the API server", "On a temporary data directory and a free port.")
        self.start_server("127.0.0.1:0")
        print(f"$ export PODSCHED_SERVER={self.server.address}", flush=True)

        self.apply_examples()
        self.watch_changes()
        self.conflict()
        self.bad_manifests()
        self.graceful_delete()
        self.crash_and_restart()

        self.chapter("Done", "Stopping the API server (SIGTERM: a clean shutdown).")
        code = self.server.stop()
        print(f"$ kill -TERM {self.server.pid}   # exit code {code}", flush=True)
        if code != 0:
            raise DemoFailed(f"the API server exited {code} on SIGTERM:\n{self.server.log()}")

    def apply_examples(self) -> None:
        self.chapter(
            "2. Apply real Kubernetes manifests",
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
        self.podsched("get", "pods", "-o", "wide")
        self.podsched("get", "pdb")
        self.say("Admission resolved the pod's priority from its class:")
        self.podsched("describe", "pod", "web", check=lambda out: "100000" in out)

    def watch_changes(self) -> None:
        self.chapter(
            "3. Watch changes live",
            "A watch in the background lists the pods, then prints every change as it happens.",
        )
        command = [sys.executable, "-m", "cluster.cli", "get", "pods", "-w", "--output-watch-events"]
        print("$ podsched get pods -w --output-watch-events &", flush=True)
        self.watch = _Watch(command, self.env)
        self.watch.wait_for("ADDED", "web")

        cache = self.example_pod("cache")
        cache["metadata"]["labels"]["version"] = "v2"
        path = self.write_manifest("cache-v2.yaml", cache)
        self.say(f"{path} is the cache pod with one more label, version=v2:")
        self.podsched("apply", "-f", path, check=lambda out: "pod/cache configured" in out)
        self.watch.wait_for("MODIFIED", "cache")

        self.say(
            "No scheduler runs yet, so the demo plays its part and binds pod web to node-a through the "
            "Binding subresource, with the Python client:"
        )
        bound = self.client_call('await client.bind("default", "web", "node-a")',
                                 lambda client: client.bind("default", "web", "node-a"))
        print(f"pod/{bound.metadata.name} bound to {bound.spec.node_name}", flush=True)
        self.watch.wait_for("MODIFIED", "web")
        self.podsched("get", "pods", "-o", "wide", check=lambda out: "node-a" in out)
        self.say("Binding a pod that is already bound is a conflict:")
        try:
            self.client_call('await client.bind("default", "web", "node-b")',
                             lambda client: client.bind("default", "web", "node-b"))
        except errors.Conflict as exc:
            print(f"Conflict: {exc.message}", flush=True)
        else:
            raise DemoFailed("binding a bound pod again succeeded")

    def conflict(self) -> None:
        self.chapter(
            "4. Optimistic concurrency",
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

    def bad_manifests(self) -> None:
        bad = self.manifests / "bad"
        self.chapter(
            "5. Bad input is refused, and nothing is half-applied",
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
            "6. Graceful deletion",
            f"Deleting a running pod gives it a grace period ({GRACE_S}s here) to stop: it shows as "
            "Terminating, with a deletionTimestamp, and the API server removes it when the period ends "
            "(a pod that never got a node has nothing to stop and goes at once).",
        )
        self.podsched("delete", "pod", "web", f"--grace-period={GRACE_S}", "--no-wait")
        self.podsched("get", "pod", "web", check=lambda out: "Terminating" in out)
        assert self.watch is not None
        self.say("...and a few seconds later the watch sees it go:")
        self.watch.wait_for("DELETED", "web")
        self.podsched("get", "pod", "web", expect=1, check=lambda out: "NotFound" in out)
        code = self.watch.stop()
        print(f"# (Ctrl-C ends the watch: exit code {code})", flush=True)
        if code != 0:
            raise DemoFailed(f"the watch exited {code} on Ctrl-C")

    def crash_and_restart(self) -> None:
        self.chapter(
            "7. Crash and restart",
            "kill -9 gives the API server no chance to clean up. Restarted on the same data directory, "
            "it serves every object again, each at the resourceVersion it had.",
        )
        before = self.snapshot()
        self.podsched("get", "pods", "-o", "wide")
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
        """Stop whatever still runs; called on every way out."""
        if self.watch is not None:
            self.watch.stop()
        self.server.stop()
