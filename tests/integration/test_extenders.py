"""Scheduler extenders (KEP-1819) end to end: a real API server, real `podsched scheduler` processes with
an ``extenders`` config, and real HTTP extenders: the test extender (tests/integration/extender_server.py,
which records every call and answers as its flags say) and the example (examples/extender/).

The module shares one API server (SQLite) with three 2-CPU nodes and two priority classes; each test
starts its own extenders and scheduler (the config differs per test), works in its own namespace and
leaves the nodes empty. What the scheduler sent is read from the extenders' records, what it did from
the pods, their events and its metrics. The example runs on both stores, each on a server of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.process import (
    OWN_PROCESS_GROUP,
    ApiServerProcess,
    SchedulerProcess,
    die_with_parent_prefix,
)
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import EXAMPLES, REPO, node_manifest, pod_manifest, run_cli, write_yaml
from tests.integration.test_scheduler import (
    apply,
    eventually,
    scheduler_process,
    scheduling_events,
)

NODES = ("node-a", "node-b", "node-c")
NODE_CPU = "2"
CLASSES = tuple({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value} for name, value in (("low", 100), ("high", 1000)))
#: An extender process prints its URL within this; it only has to bind a socket.
EXTENDER_START_TIMEOUT_S = 20.0
#: A "slow" extender sleeps this long, past the httpTimeout of SHORT_TIMEOUT.
SLOW_S = 3.0
SHORT_TIMEOUT = "500ms"
EXAMPLE = EXAMPLES / "extender"
_LISTENING = re.compile(r"listening on (?P<url>http://\S+)")


# ------------------------------------------------------------------------------------- processes


class ExtenderProcess:
    """An extender run as its own process, found by the "listening on URL" line it prints; its output
    is kept (``log``) for failure messages. The test extender also records every call it gets."""

    def __init__(self, command: Sequence[str], record: Path | None = None) -> None:
        self.command = list(command)
        self.record = record
        self.url = ""
        self.lines: list[str] = []
        self._process: subprocess.Popen[str] | None = None
        self._drain: threading.Thread | None = None
        self._listening = threading.Event()

    @classmethod
    def test_server(cls, record: Path, *flags: str) -> ExtenderProcess:
        return cls([sys.executable, "-m", "tests.integration.extender_server", "--port", "0",
                    "--record", str(record), *flags], record)

    def start(self) -> None:
        process = subprocess.Popen(
            [*die_with_parent_prefix(), *self.command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, cwd=REPO, process_group=OWN_PROCESS_GROUP,
        )
        self._process = process
        # Read everything it writes, all along: an extender that logs each call must never block on a
        # full pipe.
        self._drain = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._drain.start()
        self._listening.wait(EXTENDER_START_TIMEOUT_S)
        if not self.url:
            self.stop()
            raise AssertionError(f"{self.command} did not start; its output:\n{self.log()}")

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in process.stdout:
                self.lines.append(line)
                match = None if self.url else _LISTENING.search(line)
                if match:
                    self.url = match["url"]
                    self._listening.set()
        self._listening.set()  # its output ended: it will not listen now

    def stop(self) -> int | None:
        """SIGTERM, as a user stops it; its exit code."""
        if self._process is None:
            return None
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._drain is not None:
            self._drain.join(2)
        return self._process.returncode

    def log(self) -> str:
        return "".join(self.lines)

    def calls(self, verb: str, pod: str | None = None) -> list[dict[str, Any]]:
        """The bodies of the ``verb`` calls recorded so far, in order; only ``pod``'s when given."""
        assert self.record is not None, "only the test extender records its calls"
        if not self.record.exists():
            return []
        # A line still being written (no newline yet) is left for the next look.
        lines = [line for line in self.record.read_text().splitlines(keepends=True) if line.endswith("\n")]
        bodies = [entry["body"] for entry in map(json.loads, lines) if entry["verb"] == verb]
        return [body for body in bodies if pod is None or _pod_name(body) == pod]


def _pod_name(body: Mapping[str, Any]) -> str:
    if "PodName" in body:  # ExtenderBindingArgs
        return body["PodName"]
    return body["Pod"]["metadata"]["name"]


def entry(extender: ExtenderProcess, **fields: Any) -> dict[str, Any]:
    """One ``extenders[]`` entry for ``extender``: its urlPrefix and ``fields`` (filterVerb=...)."""
    return {"urlPrefix": extender.url, **fields}


class Launcher:
    """Starts a test's extenders and scheduler (from a worker thread: starting blocks) and stops them
    when the test ends: the scheduler first (so that it calls no stopped extender), then the extenders
    all at once."""

    def __init__(self, server: str, tmp_path: Path) -> None:
        self._server = server
        self._tmp_path = tmp_path
        self._schedulers: list[SchedulerProcess] = []
        self._extenders: list[ExtenderProcess] = []

    async def extender(self, *flags: str) -> ExtenderProcess:
        record = self._tmp_path / f"extender-{len(self._extenders)}.jsonl"
        return await self.started(ExtenderProcess.test_server(record, *flags))

    async def started(self, process: ExtenderProcess) -> ExtenderProcess:
        self._extenders.append(process)
        await asyncio.to_thread(process.start)
        return process

    async def scheduler(self, *extenders: Mapping[str, Any]) -> SchedulerProcess:
        """A scheduler with the default profile and ``extenders``."""
        return await self.scheduler_with_config({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": list(extenders)})

    async def scheduler_with_config(self, config: Mapping[str, Any]) -> SchedulerProcess:
        path = self._tmp_path / "scheduler.yaml"
        path.write_text(yaml.safe_dump(dict(config)))
        process = scheduler_process(self._server, "--config", str(path))
        self._schedulers.append(process)
        await asyncio.to_thread(process.start)
        await asyncio.to_thread(process.wait_ready)
        return process

    async def close(self) -> None:
        for group in (self._schedulers, self._extenders):
            await asyncio.gather(*(asyncio.to_thread(process.stop) for process in group))


# ------------------------------------------------------------------------------------------ probes


async def bound_node(api: Client, namespace: str, name: str) -> str | None:
    pod = await api.get("pods", name, namespace)
    return pod.spec.node_name or None  # type: ignore[attr-defined]


async def failed_scheduling(api: Client, namespace: str, name: str) -> objects_pb2.Event | None:
    events = await scheduling_events(api, namespace, name)
    return next((e for e in events if e.reason == "FailedScheduling"), None)


async def scheduled_event(api: Client, namespace: str, name: str) -> objects_pb2.Event | None:
    events = await scheduling_events(api, namespace, name)
    return next((e for e in events if e.reason == "Scheduled"), None)


async def recorded(extender: ExtenderProcess, verb: str, pod: str, count: int = 1) -> list[dict] | None:
    calls = extender.calls(verb, pod)
    return calls if len(calls) >= count else None


def node_names(args: Mapping[str, Any]) -> list[str]:
    """The nodes an ExtenderArgs carries, as Node objects (nodeCacheCapable false)."""
    assert args["NodeNames"] is None, args["NodeNames"]
    return [node["metadata"]["name"] for node in args["Nodes"]["items"]]


def metric_samples(text: str, name: str) -> dict[tuple[str, str], float]:
    """``name``'s samples from a Prometheus text page, by (extender, verb)."""
    return {(s.labels["extender"], s.labels["verb"]): s.value
            for family in text_string_to_metric_families(text) for s in family.samples if s.name == name}


def widget_pod(name: str, namespace: str) -> dict[str, Any]:
    """A pod asking for one example.com/widget, an extended resource no node advertises."""
    manifest = pod_manifest(name, namespace)
    manifest["spec"]["containers"][0]["resources"]["limits"] = {"example.com/widget": "1"}
    return manifest


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server on a SQLite store of its own, with three 2-CPU nodes and the priority classes."""
    with own_apiserver("sqlite", tmp_path_factory.mktemp("extenders-cluster")) as server:
        path = write_yaml(tmp_path_factory.mktemp("objects") / "cluster.yaml",
                          *(node_manifest(name, cpu=NODE_CPU) for name in NODES), *CLASSES)
        result = run_cli(server.address, "apply", "-f", path)
        assert result.code == 0, result.stderr
        yield server


@pytest.fixture
async def launch(cluster: ApiServerProcess, ns: str, tmp_path: Path) -> AsyncIterator[Launcher]:
    """The test's processes, stopped before its namespace is emptied (``ns`` is set up first)."""
    launcher = Launcher(cluster.address, tmp_path)
    try:
        yield launcher
    finally:
        await launcher.close()


# ------------------------------------------------------------------------------------------ filter


async def test_the_filter_gets_the_nodes_the_plugins_left_as_kubernetes_json(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    extender = await launch.extender()
    await launch.scheduler(entry(extender, filterVerb="filter"))
    # NodeAffinity (a Filter plugin) leaves node-a and node-c: only those go to the extender.
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                               "values": ["node-a", "node-c"]}]}]}}}
    apply(cluster.address, tmp_path, pod_manifest("picky", ns, cpu="500m", affinity=affinity))

    node = await eventually(lambda: bound_node(api, ns, "picky"), "picky bound")
    assert node in ("node-a", "node-c")
    (args,) = extender.calls("filter", "picky")
    # kube-scheduler's ExtenderArgs, Go field names and all; Pod and Node as Kubernetes JSON.
    assert set(args) == {"Pod", "Nodes", "NodeNames"}
    assert sorted(node_names(args)) == ["node-a", "node-c"]
    pod = args["Pod"]
    assert (pod["metadata"]["name"], pod["metadata"]["namespace"]) == ("picky", ns)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "64Mi"}
    assert pod["spec"]["affinity"] == affinity
    sent = args["Nodes"]["items"][0]
    assert sent["status"]["allocatable"]["cpu"] == NODE_CPU
    assert sent["metadata"]["labels"]["kubernetes.io/hostname"] == sent["metadata"]["name"]


async def test_nodes_an_extender_turns_down_are_not_sent_to_the_next_and_ignorable_ones_go_last(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    last = await launch.extender()
    draining = await launch.extender("--fail", "node-a", "--message", "node is draining")
    retired = await launch.extender("--unresolvable", "node-b", "--message", "node is retired")
    # Configured first, but ignorable: kube-scheduler calls ignorable extenders after the others.
    await launch.scheduler(entry(last, filterVerb="filter", ignorable=True),
                           entry(draining, filterVerb="filter"), entry(retired, filterVerb="filter"))
    apply(cluster.address, tmp_path, pod_manifest("web", ns))

    assert await eventually(lambda: bound_node(api, ns, "web"), "web bound") == "node-c"
    assert [sorted(node_names(args)) for args in draining.calls("filter", "web")] == [list(NODES)]
    assert [node_names(args) for args in retired.calls("filter", "web")] == [["node-b", "node-c"]]
    assert [node_names(args) for args in last.calls("filter", "web")] == [["node-c"]]


@pytest.mark.parametrize(
    ("flag", "preemption"),
    [("--fail", "3 No preemption victims found for incoming pod."),
     ("--unresolvable", "3 Preemption is not helpful for scheduling.")],
    ids=["failed", "failed-and-unresolvable"],
)
async def test_the_event_names_the_extender_and_preemption_skips_unresolvable_nodes(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path,
    flag: str, preemption: str,
) -> None:
    # The extender turns every node down. As FailedNodes, preemption still looks at each node (and
    # finds no lower-priority pod to evict there); as FailedAndUnresolvableNodes, it skips them all.
    extender = await launch.extender(*(arg for node in NODES for arg in (flag, node)),
                                     "--message", "reserved for batch jobs")
    await launch.scheduler(entry(extender, filterVerb="filter"))
    apply(cluster.address, tmp_path, pod_manifest("blocked", ns, priorityClassName="high"))

    event = await eventually(lambda: failed_scheduling(api, ns, "blocked"), "FailedScheduling")
    assert event.message == (f"0/3 nodes are available: 3 reserved for batch jobs (extender {extender.url}). "
                             f"preemption: 0/3 nodes are available: {preemption}")
    pod = await api.get("pods", "blocked", ns)
    assert (pod.spec.node_name, pod.status.nominated_node_name) == ("", "")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("flags", "fields", "reason"),
    [(["--status", "500"], {}, "failed filter with extender at URL {url}/filter, code 500"),
     (["--error", "inventory offline"], {}, "extender {url}: filter returned an error: inventory offline"),
     (["--delay", str(SLOW_S)], {"httpTimeout": SHORT_TIMEOUT},
      "extender {url}: filter timed out after 0.5s")],
    ids=["status-500", "error-field", "timeout"],
)
async def test_a_failing_filter_fails_the_cycle_and_the_pod_is_retried(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path,
    flags: list[str], fields: dict[str, str], reason: str,
) -> None:
    extender = await launch.extender(*flags)
    await launch.scheduler(entry(extender, filterVerb="filter", **fields))
    apply(cluster.address, tmp_path, pod_manifest("stuck", ns))

    event = await eventually(lambda: failed_scheduling(api, ns, "stuck"), "FailedScheduling")
    assert reason.format(url=extender.url) in event.message, event.message
    # An error, not a verdict on the nodes: the pod is tried again (after its backoff).
    await eventually(lambda: recorded(extender, "filter", "stuck", count=2), "a second filter call")
    assert await bound_node(api, ns, "stuck") is None


async def test_an_ignorable_extender_that_times_out_is_skipped(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    slow = await launch.extender("--delay", str(SLOW_S), "--fail", "node-a", "--fail", "node-b")
    scheduler = await launch.scheduler(
        entry(slow, filterVerb="filter", httpTimeout=SHORT_TIMEOUT, ignorable=True))
    apply(cluster.address, tmp_path, pod_manifest("patient", ns))

    assert await eventually(lambda: bound_node(api, ns, "patient"), "patient bound") in NODES
    assert len(slow.calls("filter", "patient")) == 1
    # Events are recorded after the bind, so the Scheduled one may trail the pod's binding.
    await eventually(lambda: scheduled_event(api, ns, "patient"), "the Scheduled event")
    events = await scheduling_events(api, ns, "patient")
    assert [e.reason for e in events] == ["Scheduled"]
    # Scheduled in spite of the failure, not because the answer came in time after all.
    status, text = await asyncio.to_thread(scheduler.get, "/metrics")
    assert status == 200
    assert metric_samples(text, "podsched_extender_errors_total") == {(slow.url, "filter"): 1.0}


# -------------------------------------------------------------------------------------- prioritize


async def test_prioritize_scores_are_scaled_weighted_and_added_to_the_plugins(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    # NodeAffinity (weight 2) gives node-c 2 x 100 = 200. The extenders add score x 10 x weight:
    # node-a 10 x 10 x 1 = 100, node-b 10 x 10 x 3 = 300. Without the weight node-b would get 100 and
    # without the x10 scaling 30: either way node-c would win.
    first = await launch.extender("--score", "node-a=10")
    second = await launch.extender("--score", "node-b=10")
    await launch.scheduler(entry(first, prioritizeVerb="prioritize", weight=1),
                           entry(second, prioritizeVerb="prioritize", weight=3))
    preferred = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {
        "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-c"]}]}}]}
    apply(cluster.address, tmp_path, pod_manifest("scored", ns, affinity={"nodeAffinity": preferred}))

    assert await eventually(lambda: bound_node(api, ns, "scored"), "scored bound") == "node-b"
    for extender in (first, second):
        (args,) = extender.calls("prioritize", "scored")
        assert sorted(node_names(args)) == list(NODES)


async def test_failing_prioritizers_are_ignored_and_counted_in_the_metrics(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    broken = await launch.extender("--status", "500")
    slow = await launch.extender("--delay", str(SLOW_S))
    fine = await launch.extender("--fail", "node-a")
    scheduler = await launch.scheduler(
        entry(broken, prioritizeVerb="prioritize", weight=1),
        entry(slow, prioritizeVerb="prioritize", weight=1, httpTimeout=SHORT_TIMEOUT),
        entry(fine, filterVerb="filter"),
    )
    apply(cluster.address, tmp_path, pod_manifest("unfazed", ns))

    assert await eventually(lambda: bound_node(api, ns, "unfazed"), "unfazed bound") in ("node-b", "node-c")
    assert [len(e.calls("prioritize", "unfazed")) for e in (broken, slow)] == [1, 1]
    status, text = await asyncio.to_thread(scheduler.get, "/metrics")
    assert status == 200
    durations = metric_samples(text, "podsched_extender_request_duration_seconds_count")
    assert {key: durations.get(key) for key in [(broken.url, "prioritize"), (slow.url, "prioritize"),
                                                (fine.url, "filter")]} == {
        (broken.url, "prioritize"): 1.0, (slow.url, "prioritize"): 1.0, (fine.url, "filter"): 1.0}
    errors = metric_samples(text, "podsched_extender_errors_total")
    assert errors == {(broken.url, "prioritize"): 1.0, (slow.url, "prioritize"): 1.0}


# ----------------------------------------------------------------------------------------- preempt


def running(name: str, namespace: str, node: str) -> dict[str, Any]:
    """A low-priority pod already running on ``node``, filling it; deleted at once when preempted."""
    return pod_manifest(name, namespace, cpu=NODE_CPU, nodeName=node, priorityClassName="low",
                        terminationGracePeriodSeconds=0)


@pytest.mark.parametrize("node_cache_capable", [False, True], ids=["victims", "meta-victims"])
async def test_a_preempting_extender_takes_nodes_out_of_the_candidates(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path,
    node_cache_capable: bool,
) -> None:
    apply(cluster.address, tmp_path, *(running(f"low-{node}", ns, node) for node in NODES))
    names = {p.metadata.uid: p.metadata.name for p in (await api.list("pods", ns)).items}  # type: ignore[attr-defined]
    extender = await launch.extender("--drop", "node-a", "--drop", "node-b")
    await launch.scheduler(entry(extender, preemptVerb="preempt", nodeCacheCapable=node_cache_capable))
    apply(cluster.address, tmp_path, pod_manifest("urgent", ns, cpu=NODE_CPU, priorityClassName="high"))

    assert await eventually(lambda: bound_node(api, ns, "urgent"), "urgent bound", within=30) == "node-c"
    remaining = {p.metadata.name for p in (await api.list("pods", ns)).items}  # type: ignore[attr-defined]
    assert remaining == {"low-node-a", "low-node-b", "urgent"}
    args = extender.calls("preempt", "urgent")[0]
    assert set(args) == {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"}
    if node_cache_capable:
        assert args["NodeNameToVictims"] is None
        victims = args["NodeNameToMetaVictims"]
        sent = {node: [names[p["UID"]] for p in v["Pods"]] for node, v in victims.items()}
    else:
        assert args["NodeNameToMetaVictims"] is None
        victims = args["NodeNameToVictims"]
        sent = {node: [p["metadata"]["name"] for p in v["Pods"]] for node, v in victims.items()}
    assert sent == {node: [f"low-{node}"] for node in NODES}
    assert {v["NumPDBViolations"] for v in victims.values()} == {0}


# -------------------------------------------------------------------------------------------- bind


async def test_a_binding_extender_binds_instead_of_the_default_binder(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    binder = await launch.extender("--api", cluster.address)
    await launch.scheduler(entry(binder, bindVerb="bind"))
    apply(cluster.address, tmp_path, pod_manifest("bound-by-extender", ns))

    node = await eventually(lambda: bound_node(api, ns, "bound-by-extender"), "the pod bound")
    pod = await api.get("pods", "bound-by-extender", ns)
    assert binder.calls("bind") == [{"PodName": "bound-by-extender", "PodNamespace": ns,
                                     "PodUID": pod.metadata.uid, "Node": node}]
    event = await eventually(lambda: scheduled_event(api, ns, "bound-by-extender"), "the Scheduled event")
    assert event.message == f"Successfully assigned {ns}/bound-by-extender to {node}"


async def test_a_refused_bind_requeues_the_pod_until_the_extender_binds_it(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    binder = await launch.extender("--api", cluster.address, "--refuse-binds", "1")
    await launch.scheduler(entry(binder, bindVerb="bind"))
    apply(cluster.address, tmp_path, pod_manifest("second-try", ns))

    node = await eventually(lambda: bound_node(api, ns, "second-try"), "the pod bound")
    assert [call["Node"] for call in binder.calls("bind", "second-try")][-1] == node
    assert len(binder.calls("bind", "second-try")) == 2
    event = await eventually(lambda: failed_scheduling(api, ns, "second-try"), "FailedScheduling")
    assert f"extender {binder.url}: bind returned an error: the test extender refuses this bind" \
        in event.message, event.message
    await eventually(lambda: scheduled_event(api, ns, "second-try"), "the Scheduled event")


# ---------------------------------------------------------------------------------- managedResources


@pytest.mark.parametrize("ignored_by_scheduler", [True, False], ids=["ignored-by-scheduler", "counted"])
async def test_only_pods_asking_for_a_managed_resource_go_to_the_extender(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path,
    ignored_by_scheduler: bool,
) -> None:
    extender = await launch.extender()
    managed = [{"name": "example.com/widget", "ignoredByScheduler": ignored_by_scheduler}]
    await launch.scheduler(entry(extender, filterVerb="filter", prioritizeVerb="prioritize", weight=1,
                                 managedResources=managed))
    apply(cluster.address, tmp_path, pod_manifest("plain", ns), widget_pod("widget", ns))

    await eventually(lambda: bound_node(api, ns, "plain"), "plain bound")
    assert extender.calls("filter", "plain") == extender.calls("prioritize", "plain") == []
    if ignored_by_scheduler:
        # No node has example.com/widget, but NodeResourcesFit leaves that resource to the extender.
        await eventually(lambda: bound_node(api, ns, "widget"), "widget bound")
        assert len(extender.calls("filter", "widget")) == len(extender.calls("prioritize", "widget")) == 1
    else:
        event = await eventually(lambda: failed_scheduling(api, ns, "widget"), "FailedScheduling")
        assert event.message.startswith("0/3 nodes are available: 3 Insufficient example.com/widget."), \
            event.message
        # No node passed the plugins: there was nothing to ask the extender about.
        assert extender.calls("filter", "widget") == []


# ---------------------------------------------------------------------------------- nodeCacheCapable


async def test_a_node_cache_capable_extender_gets_and_gives_node_names_only(
    cluster: ApiServerProcess, api: Client, ns: str, launch: Launcher, tmp_path: Path
) -> None:
    extender = await launch.extender("--fail", "node-a", "--score", "node-b=10")
    await launch.scheduler(entry(extender, filterVerb="filter", prioritizeVerb="prioritize", weight=5,
                                 nodeCacheCapable=True))
    apply(cluster.address, tmp_path, pod_manifest("light", ns))

    assert await eventually(lambda: bound_node(api, ns, "light"), "light bound") == "node-b"
    (filtered,) = extender.calls("filter", "light")
    (prioritized,) = extender.calls("prioritize", "light")
    assert (filtered["Nodes"], sorted(filtered["NodeNames"])) == (None, list(NODES))
    assert (prioritized["Nodes"], sorted(prioritized["NodeNames"])) == (None, ["node-b", "node-c"])
    assert filtered["Pod"]["metadata"]["name"] == "light"


# ---------------------------------------------------------------------------------------- example


@pytest.fixture(params=["sqlite", pytest.param("etcd", marks=pytest.mark.etcd)])
def example_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server of its own, on each store, with examples/extender/cluster.yaml applied."""
    with own_apiserver(request.param, tmp_path, name_prefix="example") as server:
        result = run_cli(server.address, "apply", "-f", str(EXAMPLE / "cluster.yaml"))
        assert result.code == 0, result.stderr
        yield server


async def test_the_example_extender_keeps_gpu_pods_on_validated_nodes_and_prefers_fast_ones(
    example_cluster: ApiServerProcess, tmp_path: Path
) -> None:
    """examples/extender/ as its README runs it: the cluster applied, the extender, then the scheduler
    with the example's config (the extender on a free port instead of 8888)."""
    launcher = Launcher(example_cluster.address, tmp_path)
    try:
        extender = await launcher.started(
            ExtenderProcess([sys.executable, str(EXAMPLE / "extender.py"), "--port", "0"]))
        config = yaml.safe_load((EXAMPLE / "scheduler-config.yaml").read_text())
        config["extenders"][0]["urlPrefix"] = extender.url
        scheduler = await launcher.scheduler_with_config(config)
        async with Client(example_cluster.address, timeout_s=30.0) as api:
            placed = await eventually(lambda: _placement(api), "the example's pods bound")
    finally:
        await launcher.close()

    # GPU pods run on validated GPU nodes only (never on gpu-unvalidated, the fastest GPU node), on the
    # fastest one with GPUs left; the others on the fastest node of all.
    assert placed == {"train-1": "gpu-fast", "train-2": "gpu-fast", "train-big": "gpu-slow",
                      "web-1": "cpu-fast", "web-2": "cpu-fast"}, scheduler.log() + extender.log()
    assert extender.stop() == 0
    log = extender.log()
    assert re.search(r"^filter default/train-1: kept \[gpu-(fast|slow), gpu-(fast|slow)\], "
                     r"turned down \[gpu-unvalidated\]$", log, re.MULTILINE), log
    assert re.search(r"^prioritize default/web-1: .*cpu-fast=10", log, re.MULTILINE), log
    assert log.endswith("gpu extender stopped\n"), log


async def _placement(api: Client) -> dict[str, str] | None:
    pods = (await api.list("pods", "default")).items
    placed = {p.metadata.name: p.spec.node_name for p in pods}  # type: ignore[attr-defined]
    return placed if len(placed) == 5 and all(placed.values()) else None
