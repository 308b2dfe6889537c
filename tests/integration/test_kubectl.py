"""The real kubectl against a real `podsched apiserver` serving the Kubernetes HTTP API (--http-listen) and
a real `podsched scheduler`, on each store: what kubectl prints (exit code, stdout and stderr lines) for
apply, get, watch, describe, explain, delete, cordon, taint, label, annotate, drain against a
PodDisruptionBudget, wait, events, api-resources, version, the DRA and storage kinds and the server's
errors; and the objects kubectl stores are those `podsched apply` stores from the same manifests.

One cluster per module and store (two nodes of 2 CPUs, one scheduler); each test works in a namespace of
its own (created with kubectl, as kubectl's NotFound checks expect of a real cluster) and on nodes of its
own when it changes a node, so that the shared nodes schedule every test alike.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import CliResult, node_manifest, parse_table, pod_manifest, run_cli
from tests.integration.test_scheduler import running_scheduler

#: How long something another process does (a binding, an event, a budget's status) may take: seconds
#: when everything works; generous for a loaded 2-core box.
SETTLE_TIMEOUT_S = 20.0
KUBECTL_TIMEOUT_S = 60.0
#: The annotation client-side apply keeps its last manifest in.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Kubectl:
    """Runs the real kubectl with the module's kubeconfig, as a user's shell would (a HOME of its own, so
    that its discovery cache is the module's)."""

    def __init__(self, binary: Path, kubeconfig: Path, home: Path) -> None:
        self.binary = binary
        self.env = {"HOME": str(home), "KUBECONFIG": str(kubeconfig), "PATH": os.environ.get("PATH", "")}

    def __call__(self, *args: str, input: str | None = None) -> CliResult:
        done = subprocess.run(
            [str(self.binary), *args], input=input, stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True, text=True, env=self.env, timeout=KUBECTL_TIMEOUT_S,
        )
        return CliResult(done.returncode, done.stdout, done.stderr)

    def ok(self, *args: str, input: str | None = None) -> str:
        """kubectl's stdout; fails the test, with what kubectl printed, unless it exits 0."""
        done = self(*args, input=input)
        assert done.code == 0, f"kubectl {' '.join(args)} exited {done.code}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def apply(self, *documents: dict[str, Any], flags: tuple[str, ...] = ()) -> str:
        return self.ok("apply", *flags, "-f", "-", input=yaml.safe_dump_all(documents, sort_keys=False))

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.binary), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)


def eventually(probe: Callable[[], str | None], what: str) -> str:
    """Call ``probe`` until it returns something other than None."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while (found := probe()) is None:
        assert time.monotonic() < deadline, f"timed out after {SETTLE_TIMEOUT_S:g}s waiting for {what}"
        time.sleep(0.2)
    return found


def node_of(kube: Kubectl, namespace: str, pod: str) -> str:
    """The node the scheduler bound ``pod`` to (kubectl wait: PodScheduled)."""
    assert kube.ok("wait", "--for=condition=PodScheduled", f"pod/{pod}", "-n", namespace,
                   "--timeout=30s") == f"pod/{pod} condition met\n"
    return kube.ok("get", "pod", pod, "-n", namespace, "-o", "jsonpath={.spec.nodeName}")


def small_pod(name: str, namespace: str, **kwargs: Any) -> dict[str, Any]:
    return pod_manifest(name, namespace, cpu="250m", memory="64Mi", **kwargs)


def lines(text: str) -> list[str]:
    return text.splitlines()


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server on a store of its own serving the HTTP API, with two nodes of 2 CPUs."""
    nodes = (node_manifest("node-a", cpu="2"), node_manifest("node-b", cpu="2"))
    with own_apiserver_with(backend, tmp_path_factory.mktemp("kubectl-cluster"), *nodes,
                            http_listen="127.0.0.1:0") as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


@pytest.fixture(scope="module")
def kube(
    kubectl: Path, cluster: ApiServerProcess, scheduler: SchedulerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Kubectl:
    """kubectl with the kubeconfig `podsched kubeconfig` writes for the cluster's HTTP API."""
    home = tmp_path_factory.mktemp("kubectl-home")
    kubeconfig = home / "kubeconfig"
    assert cluster.http_url is not None
    written = run_cli(cluster.address, "kubeconfig", "--server", cluster.http_url, "-o", str(kubeconfig))
    assert written.code == 0, written.stderr
    return Kubectl(kubectl, kubeconfig, home)


@pytest.fixture
def ns(kube: Kubectl, namespace: str) -> Iterator[str]:
    """The test's namespace, created with kubectl; its pods are deleted afterwards, so that the module's
    nodes are free for the next test."""
    assert kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}) == (
        f"namespace/{namespace} created\n")
    yield namespace
    kube.ok("delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force")


@pytest.fixture
def own_node(kube: Kubectl, unique: Callable[[str], str]) -> Iterator[str]:
    """A node of the test's own, created with kubectl, for tests that cordon, taint or drain one; deleted
    afterwards."""
    name = unique("node")
    assert kube.apply(node_manifest(name, cpu="2")) == f"node/{name} created\n"
    yield name
    kube.ok("delete", "node", name)


# ------------------------------------------------------------------------------------------- tests


def test_version_and_api_resources(kube: Kubectl) -> None:
    versions = json.loads(kube.ok("version", "-o", "json"))
    assert versions["clientVersion"]["gitVersion"] == "v1.37.1"
    server = versions["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "37")
    assert re.fullmatch(r"v1\.37\.\d+\+podsched\.\S+", server["gitVersion"]), server
    assert re.search(r"^Server Version: v1\.37\.\d+\+podsched", kube.ok("version"), re.MULTILINE)

    rows = parse_table(kube.ok("api-resources"))
    served = {(row["NAME"], row["SHORTNAMES"], row["APIVERSION"], row["NAMESPACED"], row["KIND"])
              for row in rows}
    assert {
        ("pods", "po", "v1", "true", "Pod"),
        ("nodes", "no", "v1", "false", "Node"),
        ("namespaces", "ns", "v1", "false", "Namespace"),
        ("events", "ev", "v1", "true", "Event"),
        ("events", "ev", "events.k8s.io/v1", "true", "Event"),
        ("leases", "", "coordination.k8s.io/v1", "true", "Lease"),
        ("poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"),
        ("priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"),
    } <= served


def test_apply_twice_is_unchanged_then_configured_then_server_side(kube: Kubectl, ns: str) -> None:
    pod = small_pod("web", ns, labels={"app": "web"})
    assert kube.apply(pod) == "pod/web created\n"
    assert kube.apply(pod) == "pod/web unchanged\n"
    stored = json.loads(kube.ok("get", "pod", "web", "-n", ns, "-o", "json"))
    assert json.loads(stored["metadata"]["annotations"][LAST_APPLIED]) == {
        **pod, "metadata": {**pod["metadata"], "annotations": {}}}

    relabelled = small_pod("web", ns, labels={"app": "web", "tier": "front"})
    assert kube.apply(relabelled) == "pod/web configured\n"
    assert kube.ok("get", "pod", "web", "-n", ns, "-o", "jsonpath={.metadata.labels.tier}") == "front"

    assert kube.apply(relabelled, flags=("--server-side",)) == "pod/web serverside-applied\n"
    managers = json.loads(kube.ok("get", "pod", "web", "-n", ns, "-o", "json", "--show-managed-fields"))
    applied = {entry["manager"]: entry for entry in managers["metadata"]["managedFields"]
               if entry["operation"] == "Apply"}
    # kubectl applies the last-applied annotation first under a manager of its own, so that the switch to
    # server-side apply does not orphan it.
    assert sorted(applied) == ["kubectl", "kubectl-last-applied"]
    assert applied["kubectl"]["fieldsV1"]["f:metadata"]["f:labels"] == {"f:app": {}, "f:tier": {}}


def test_get_in_every_output_with_selectors(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("a", ns, labels={"app": "web"}), small_pod("b", ns, labels={"app": "db"}))
    nodes = {name: node_of(kube, ns, name) for name in ("a", "b")}
    assert set(nodes.values()) <= {"node-a", "node-b"}

    assert kube.ok("get", "pods", "-n", ns, "-o", "name") == "pod/a\npod/b\n"
    listed = json.loads(kube.ok("get", "pods", "-n", ns, "-o", "json"))
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    assert {item["metadata"]["name"]: item["spec"]["nodeName"] for item in listed["items"]} == nodes
    assert {item["kind"] for item in listed["items"]} == {"Pod"}
    one = yaml.safe_load(kube.ok("get", "pod", "a", "-n", ns, "-o", "yaml"))
    assert (one["kind"], one["metadata"]["labels"], one["status"]["phase"]) == (
        "Pod", {"app": "web"}, "Running")
    assert kube.ok("get", "pods", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}") == "a b"
    assert kube.ok("get", "pods", "-n", ns, "-l", "app=web", "-o", "name") == "pod/a\n"
    assert kube.ok("get", "pods", "-n", ns, "-l", "app in (web,db),app!=web", "-o", "name") == "pod/b\n"
    on_a_node = kube.ok("get", "pods", "-n", ns, "--field-selector", f"spec.nodeName={nodes['a']}",
                        "-o", "name")
    assert "pod/a\n" in on_a_node and set(lines(on_a_node)) == {
        f"pod/{name}" for name, node in nodes.items() if node == nodes["a"]}
    assert kube.ok("get", "pods", "-n", ns, "--field-selector", "status.phase=Pending", "-o", "name") == ""

    wide = kube.ok("get", "pods", "-n", ns, "-o", "wide")
    assert lines(wide)[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED",
                                      "NODE", "READINESS", "GATES"]
    rows = {row["NAME"]: row for row in parse_table(wide)}
    assert set(rows) == {"a", "b"}
    for name, row in rows.items():
        assert (row["READY"], row["STATUS"], row["RESTARTS"], row["IP"], row["NODE"], row["NOMINATED NODE"],
                row["READINESS GATES"]) == ("1/1", "Running", "0", "<none>", nodes[name], "<none>", "<none>")
    node_rows = {row["NAME"]: row for row in parse_table(kube.ok("get", "nodes"))}
    assert lines(kube.ok("get", "nodes"))[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert (node_rows["node-a"]["STATUS"], node_rows["node-a"]["ROLES"]) == ("Ready", "<none>")


def test_get_watch_prints_the_listed_pods_then_each_change(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("first", ns))
    first_node = node_of(kube, ns, "first")
    watch = kube.popen("get", "pods", "-n", ns, "-w", "-o", "wide", "--request-timeout=30s")
    #: Each line kubectl printed, split into its cells.
    seen: list[list[str]] = []
    changed = threading.Condition()

    def read() -> None:
        assert watch.stdout is not None
        for line in watch.stdout:
            with changed:
                seen.append(line.split())
                changed.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def row(name: str, ready: str, status: str, node: str) -> list[str]:
        """The row kubectl prints (after the age column) for a pod in that state."""
        return [name, ready, status, "0", "<none>", node, "<none>", "<none>"]

    def printed() -> list[list[str]]:
        return [cells[:4] + cells[5:] for cells in seen[1:]]  # without the header and the ages

    def wait_for(expected: list[str]) -> None:
        with changed:
            assert changed.wait_for(lambda: expected in printed(), SETTLE_TIMEOUT_S), (
                f"no row {expected}; saw {seen}")

    try:
        # The listed pod first: from then on the watch follows from the list's resourceVersion.
        wait_for(row("first", "1/1", "Running", first_node))
        kube.apply(small_pod("second", ns))
        second_node = node_of(kube, ns, "second")
        wait_for(row("second", "1/1", "Running", second_node))
    finally:
        watch.kill()
        watch.wait()
        reader.join(5)
    assert seen[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                       "READINESS", "GATES"]
    assert printed()[0] == row("first", "1/1", "Running", first_node)
    # Created unbound, then bound by the scheduler: kubectl printed each as the watch delivered it.
    rows = printed()
    assert rows.index(row("second", "0/1", "Pending", "<none>")) < rows.index(
        row("second", "1/1", "Running", second_node)), seen


def test_describe_pod_shows_the_scheduled_event_and_describe_node_its_pods(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("described", ns, labels={"app": "web"}))
    node = node_of(kube, ns, "described")
    scheduled = re.compile(rf"^\s+Normal\s+Scheduled\s+\S+\s+default-scheduler\s+"
                           rf"Successfully assigned {ns}/described to {node}$", re.MULTILINE)

    def described() -> str | None:
        text = kube.ok("describe", "pod", "described", "-n", ns)
        return text if scheduled.search(text) else None

    text = eventually(described, "describe pod to show the Scheduled event")
    for pattern in (r"^Name:\s+described$", rf"^Namespace:\s+{ns}$", rf"^Node:\s+{node}/$",
                    r"^Labels:\s+app=web$", r"^Status:\s+Running$", r"^\s+PodScheduled\s+True\s*$",
                    r"^\s+cpu:\s+250m$", r"^\s+memory:\s+64Mi$", r"^QoS Class:\s+Burstable$",
                    r"^Events:$", r"^\s+Type\s+Reason\s+Age\s+From\s+Message$"):
        assert re.search(pattern, text, re.MULTILINE), f"{pattern!r} not in:\n{text}"

    node_text = kube.ok("describe", "node", node)
    for pattern in (rf"^Name:\s+{node}$", rf"^Labels:\s+kubernetes\.io/hostname={node}$",
                    r"^Taints:\s+<none>$", r"^Unschedulable:\s+false$", r"^\s+Ready\s+True\s",
                    r"^\s+cpu:\s+2$",
                    # 250m of 2 CPUs; 64Mi of 8Gi.
                    rf"^\s+{ns}\s+described\s+250m \(12%\)\s+0 \(0%\)\s+64Mi \(0%\)\s+0 \(0%\)\s+\S+$"):
        assert re.search(pattern, node_text, re.MULTILINE), f"{pattern!r} not in:\n{node_text}"


def test_explain_reads_the_openapi_schema(kube: Kubectl) -> None:
    assert lines(kube.ok("explain", "pods.spec.nodeName"))[:4] == [
        "KIND:       Pod", "VERSION:    v1", "", "FIELD: nodeName <string>"]
    assert lines(kube.ok("explain", "pdb.spec"))[:5] == [
        "GROUP:      policy", "KIND:       PodDisruptionBudget", "VERSION:    v1", "",
        "FIELD: spec <PodDisruptionBudgetSpec>"]


def test_delete_waits_for_the_grace_period_or_forces(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("graceful", ns), small_pod("forced", ns))
    node_of(kube, ns, "graceful")
    # No kubelet: the API server finishes the pod when its grace period ends, and kubectl waits for that.
    assert kube.ok("delete", "pod", "graceful", "-n", ns, "--grace-period=1") == (
        f'pod "graceful" deleted from {ns} namespace\n')
    forced = kube("delete", "pod", "forced", "-n", ns, "--grace-period=0", "--force")
    assert (forced.code, forced.stdout) == (0, f'pod "forced" force deleted from {ns} namespace\n')
    assert forced.stderr == (
        "Warning: Immediate deletion does not wait for confirmation that the running resource has been "
        "terminated. The resource may continue to run on the cluster indefinitely.\n")
    assert kube.ok("get", "pods", "-n", ns, "-o", "name") == ""


def test_cordon_uncordon_and_taint_a_node(kube: Kubectl, own_node: str) -> None:
    node = own_node
    assert kube.ok("cordon", node) == f"node/{node} cordoned\n"
    assert kube.ok("get", "node", node, "-o", "jsonpath={.spec.unschedulable}") == "true"
    assert kube.ok("cordon", node) == f"node/{node} already cordoned\n"
    assert parse_table(kube.ok("get", "node", node))[0]["STATUS"] == "Ready,SchedulingDisabled"
    assert kube.ok("uncordon", node) == f"node/{node} uncordoned\n"
    assert kube.ok("get", "node", node, "-o", "jsonpath={.spec.unschedulable}") == ""

    assert kube.ok("taint", "node", node, "dedicated=infra:NoSchedule") == f"node/{node} tainted\n"
    taints = json.loads(kube.ok("get", "node", node, "-o", "jsonpath={.spec.taints}"))
    assert taints == [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    described = kube.ok("describe", "node", node)
    assert re.search(r"^Taints:\s+dedicated=infra:NoSchedule$", described, re.MULTILINE), described
    assert kube.ok("taint", "node", node, "dedicated=infra:NoSchedule-") == f"node/{node} untainted\n"
    assert kube.ok("get", "node", node, "-o", "jsonpath={.spec.taints}") == ""


def test_label_and_annotate_a_pod(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("tagged", ns, labels={"app": "web"}))
    assert kube.ok("label", "pod", "tagged", "-n", ns, "tier=front") == "pod/tagged labeled\n"
    assert kube.ok("get", "pods", "-n", ns, "-l", "tier=front", "-o", "name") == "pod/tagged\n"
    refused = kube("label", "pod", "tagged", "-n", ns, "tier=back")
    assert refused.code == 1
    assert refused.stderr == "error: 'tier' already has a value (front), and --overwrite is false\n"
    assert kube.ok("label", "pod", "tagged", "-n", ns, "tier=back", "--overwrite") == "pod/tagged labeled\n"
    assert kube.ok("label", "pod", "tagged", "-n", ns, "tier-") == "pod/tagged unlabeled\n"
    assert kube.ok("annotate", "pod", "tagged", "-n", ns, "owner=team-a") == "pod/tagged annotated\n"
    stored = json.loads(kube.ok("get", "pod", "tagged", "-n", ns, "-o", "json"))
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert stored["metadata"]["annotations"]["owner"] == "team-a"


def test_drain_waits_for_the_disruption_budget(kube: Kubectl, ns: str, own_node: str) -> None:
    node = own_node
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard",
              "namespace": ns}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}
    kube.apply(small_pod("guarded", ns, labels={"app": "guarded"}, nodeName=node), budget)

    def status_observed(generation: str) -> Callable[[], str | None]:
        def probe() -> str | None:
            status = kube.ok("get", "pdb", "guard", "-n", ns, "-o",
                             "jsonpath={.status.observedGeneration} {.status.disruptionsAllowed}")
            return status if status.split()[:1] == [generation] else None
        return probe

    assert eventually(status_observed("1"), "the budget's status") == "1 0"
    drain = ("drain", node, "--delete-emptydir-data", "--ignore-daemonsets", "--force", "--grace-period=0")
    refused = kube(*drain, "--timeout=2s")
    assert refused.code == 1, refused
    assert lines(refused.stdout)[:2] == [f"node/{node} cordoned", f"evicting pod {ns}/guarded"]
    errors = lines(refused.stderr)
    assert errors[0] == f"Warning: deleting Pods that declare no controller: {ns}/guarded"
    assert (f'error when evicting pods/"guarded" -n "{ns}" (will retry after 5s): Cannot evict pod as it '
            "would violate the pod's disruption budget.") in errors
    assert (f'error: unable to drain node "{node}" due to error: error when evicting pods/"guarded" '
            f'-n "{ns}": global timeout reached: 2s, continuing command...') in errors
    assert errors[-3:-1] == ["There are pending nodes to be drained:", f" {node}"]
    assert kube.ok("get", "pods", "-n", ns, "-o", "name") == "pod/guarded\n"

    budget["spec"]["minAvailable"] = 0
    assert kube.apply(budget) == "poddisruptionbudget.policy/guard configured\n"
    assert eventually(status_observed("2"), "the budget's status") == "2 1"
    drained = kube(*drain, "--timeout=30s")
    assert drained.code == 0, drained
    assert lines(drained.stdout) == [f"node/{node} already cordoned", f"evicting pod {ns}/guarded",
                                     "pod/guarded evicted", f"node/{node} drained"]
    assert kube.ok("get", "pods", "-n", ns, "-o", "name") == ""


def test_events_lists_the_scheduler_events(kube: Kubectl, ns: str) -> None:
    kube.apply(small_pod("noted", ns))
    node = node_of(kube, ns, "noted")

    def scheduled_row() -> str | None:
        rows = parse_table(kube.ok("events", "-n", ns, "--for", "pod/noted"))
        return next((json.dumps(row) for row in rows if row["REASON"] == "Scheduled"), None)

    row = json.loads(eventually(scheduled_row, "kubectl events to list the Scheduled event"))
    assert (row["TYPE"], row["OBJECT"], row["MESSAGE"]) == (
        "Normal", "Pod/noted", f"Successfully assigned {ns}/noted to {node}")
    assert lines(kube.ok("events", "-n", ns))[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT",
                                                             "MESSAGE"]
    listed = json.loads(kube.ok("get", "events.v1.events.k8s.io", "-n", ns, "-o", "json"))
    assert {(event["reason"], event["regarding"]["name"], event["reportingController"])
            for event in listed["items"]} == {("Scheduled", "noted", "default-scheduler")}


def test_errors_as_kubectl_prints_them(kube: Kubectl, ns: str) -> None:
    missing = kube("get", "pod", "missing", "-n", ns)
    assert (missing.code, missing.stdout) == (1, "")
    assert missing.stderr == 'Error from server (NotFound): pods "missing" not found\n'
    gone = kube("delete", "pod", "missing", "-n", ns)
    assert (gone.code, gone.stderr) == (1, 'Error from server (NotFound): pods "missing" not found\n')

    no_containers = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty", "namespace": ns},
                     "spec": {"containers": []}}
    invalid = kube("apply", "-f", "-", input=yaml.safe_dump(no_containers))
    assert invalid.code == 1
    assert invalid.stderr == 'The Pod "empty" is invalid: spec.containers: Required value\n'
    negative = pod_manifest("negative", ns, cpu="-1")
    invalid = kube("create", "-f", "-", input=yaml.safe_dump(negative))
    assert invalid.code == 1
    assert invalid.stderr == ('The Pod "negative" is invalid: spec.containers[0].resources.requests[cpu]: '
                              'Invalid value: "-1": must be greater than or equal to 0\n')
    assert kube.ok("get", "pods", "-n", ns, "-o", "name") == ""

    unknown = kube("get", "widgets")
    assert (unknown.code, unknown.stderr) == (
        1, 'error: the server doesn\'t have a resource type "widgets"\n')
    taken = small_pod("taken", ns)
    kube.apply(taken)
    exists = kube("create", "-f", "-", input=yaml.safe_dump(taken))
    assert (exists.code, exists.stderr) == (
        1, 'Error from server (AlreadyExists): error when creating "STDIN": pods "taken" already exists\n')


#: kubernetes.io's DRA example ("Allocate Devices to Workloads with DRA"): a class of the example driver's
#: devices, a claim template and a claim asking for its GPUs by CEL, and the slice a driver publishes.
DRA_SELECTOR = 'device.attributes["driver.example.com"].type == "gpu" &&\n' \
    'device.capacity["driver.example.com"].memory == quantity("64Gi")'


def _dra_manifests(namespace: str, node: str) -> list[dict[str, Any]]:
    selectors = [{"cel": {"expression": DRA_SELECTOR}}]
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": "example-device-class"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "driver.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "example-resource-claim-template", "namespace": namespace},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu-claim", "exactly": {
             "deviceClassName": "example-device-class", "selectors": selectors}}]}}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "example-resource-claim", "namespace": namespace},
         "spec": {"devices": {"requests": [{"name": "single-gpu-claim", "exactly": {
             "deviceClassName": "example-device-class", "allocationMode": "All", "selectors": selectors}}]}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
         "spec": {"driver": "driver.example.com", "nodeName": node,
                  "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"},
                                                               "driverVersion": {"version": "1.0.0"}},
                               "capacity": {"memory": {"value": "64Gi"}}}]}},
    ]


def test_dra_kinds_apply_print_upstreams_columns_and_round_trip(kube: Kubectl, ns: str) -> None:
    class_, template, claim, resource_slice = _dra_manifests(ns, "node-a")
    try:
        assert lines(kube.apply(class_, template, claim, resource_slice)) == [
            "deviceclass.resource.k8s.io/example-device-class created",
            "resourceclaimtemplate.resource.k8s.io/example-resource-claim-template created",
            "resourceclaim.resource.k8s.io/example-resource-claim created",
            "resourceslice.resource.k8s.io/node-a-gpus created",
        ]
        claims = kube.ok("get", "resourceclaims", "-n", ns)
        assert lines(claims)[0].split() == ["NAME", "STATE", "AGE"]
        assert [(row["NAME"], row["STATE"]) for row in parse_table(claims)] == [
            ("example-resource-claim", "pending")]
        assert lines(kube.ok("get", "deviceclasses"))[0].split() == ["NAME", "AGE"]
        assert "example-device-class" in kube.ok("get", "deviceclasses", "-o", "name").replace(
            "deviceclass.resource.k8s.io/", "")
        templates = kube.ok("get", "resourceclaimtemplates", "-n", ns)
        assert [row["NAME"] for row in parse_table(templates)] == ["example-resource-claim-template"]
        slices = kube.ok("get", "resourceslices")
        assert lines(slices)[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
        assert {(row["NAME"], row["NODE"], row["DRIVER"], row["POOL"]) for row in parse_table(slices)} >= {
            ("node-a-gpus", "node-a", "driver.example.com", "node-a")}

        stored = json.loads(kube.ok("get", "resourceclaim", "example-resource-claim", "-n", ns, "-o", "json"))
        assert (stored["apiVersion"], stored["kind"]) == ("resource.k8s.io/v1", "ResourceClaim")
        assert stored["spec"] == claim["spec"]
        stored_template = json.loads(kube.ok(
            "get", "resourceclaimtemplate", "example-resource-claim-template", "-n", ns, "-o", "json"))
        # The request left allocationMode and count out: resource/v1's defaults fill them.
        assert stored_template["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
            **template["spec"]["spec"]["devices"]["requests"][0]["exactly"],
            "allocationMode": "ExactCount", "count": 1}
        stored_slice = json.loads(kube.ok("get", "resourceslice", "node-a-gpus", "-o", "json"))
        assert stored_slice["spec"] == resource_slice["spec"]
    finally:
        kube.ok("delete", "resourceslice", "node-a-gpus", "--ignore-not-found")
        kube.ok("delete", "deviceclass", "example-device-class", "--ignore-not-found")


def _storage_manifests(namespace: str, name: str) -> list[dict[str, Any]]:
    """A default WaitForFirstConsumer class, a local volume of it on node-a, and a claim naming no class."""
    hostname = {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}
    return [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
         "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": name,
                  "local": {"path": "/mnt/disk-1"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [hostname]}]}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": namespace},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}},
    ]


def _tables(text: str) -> list[list[str]]:
    """kubectl's output for several kinds: one table each, separated by a blank line."""
    return [block.splitlines() for block in text.strip("\n").split("\n\n")]


def test_storage_kinds_apply_and_print_upstreams_columns(
    kube: Kubectl, ns: str, unique: Callable[[str], str]
) -> None:
    name = unique("local")
    storage_class, volume, claim = _storage_manifests(ns, name)
    try:
        assert lines(kube.apply(storage_class, volume, claim)) == [
            f"storageclass.storage.k8s.io/{name} created",
            f"persistentvolume/{name} created",
            "persistentvolumeclaim/data created",
        ]
        volumes, claims, classes = _tables(kube.ok("get", "pv,pvc,sc", "-n", ns))
        assert re.split(r"\s{2,}", volumes[0].strip()) == [
            "NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
        [pv] = [row for row in parse_table("\n".join(volumes)) if row["NAME"] == f"persistentvolume/{name}"]
        assert (pv["CAPACITY"], pv["ACCESS MODES"], pv["RECLAIM POLICY"], pv["STORAGECLASS"],
                pv["VOLUMEATTRIBUTESCLASS"]) == ("10Gi", "RWO", "Retain", name, "<unset>")
        # Pending as created; the volume controller, where one runs, makes it Available.
        assert pv["STATUS"] in ("Pending", "Available")
        assert re.split(r"\s{2,}", claims[0].strip()) == [
            "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS",
            "AGE"]
        [pvc] = parse_table("\n".join(claims))
        # The claim named no class: DefaultStorageClass admission gave it the default one. A
        # WaitForFirstConsumer claim waits for a pod: nothing binds it.
        assert (pvc["NAME"], pvc["STATUS"], pvc["VOLUME"], pvc["STORAGECLASS"]) == (
            "persistentvolumeclaim/data", "Pending", "", name)
        assert re.split(r"\s{2,}", classes[0].strip()) == [
            "NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
        [sc] = [row for row in parse_table("\n".join(classes)) if name in row["NAME"]]
        assert (sc["NAME"], sc["PROVISIONER"], sc["RECLAIMPOLICY"], sc["VOLUMEBINDINGMODE"],
                sc["ALLOWVOLUMEEXPANSION"]) == (
            f"storageclass.storage.k8s.io/{name} (default)", "kubernetes.io/no-provisioner", "Delete",
            "WaitForFirstConsumer", "false")
        wide = lines(kube.ok("get", "pv", name, "-o", "wide"))
        assert re.split(r"\s{2,}", wide[0].strip())[-1] == "VOLUMEMODE"
        assert wide[1].split()[-1] == "Filesystem"
    finally:
        kube.ok("delete", "pvc", "data", "-n", ns, "--ignore-not-found")
        kube.ok("delete", "pv", name, "--ignore-not-found")
        kube.ok("delete", "sc", name, "--ignore-not-found")


#: What the store sets or the client that wrote it adds: left out when two stored objects are compared.
_WRITTEN_BY_THE_SERVER = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace")


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = {key: value for key, value in obj["metadata"].items() if key not in _WRITTEN_BY_THE_SERVER}
    annotations = {key: value for key, value in metadata.pop("annotations", {}).items()
                   if key != LAST_APPLIED}
    if annotations:
        metadata["annotations"] = annotations
    status = dict(obj.get("status", {}))
    # A condition's transition time is when it was written.
    if "conditions" in status:
        status["conditions"] = [
            {key: value for key, value in condition.items() if key != "lastTransitionTime"}
            for condition in status["conditions"]]
    return {**obj, "metadata": metadata, "status": status}


def test_kubectl_apply_stores_what_podsched_apply_stores(
    kube: Kubectl, cluster: ApiServerProcess, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    def manifests(namespace: str) -> list[dict[str, Any]]:
        # A scheduler nobody runs: no binding or condition makes the two copies differ.
        pod = pod_manifest("app", namespace, labels={"app": "web"}, schedulerName="nobody",
                           tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
                           priority=0)
        pod["metadata"]["annotations"] = {"team": "a"}
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "name": "http"}]
        budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                  "metadata": {"name": "app", "namespace": namespace},
                  "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}
        return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, pod, budget]

    by_kubectl, by_podsched = unique("kubectl"), unique("podsched")
    kube.apply(*manifests(by_kubectl))
    path = tmp_path / "manifests.yaml"
    path.write_text(yaml.safe_dump_all(manifests(by_podsched), sort_keys=False))
    applied = run_cli(cluster.address, "apply", "-f", str(path))
    assert applied.code == 0, applied.stderr

    def stored(kind: str) -> dict[str, dict[str, Any]]:
        """Each namespace's object of ``kind``, as `podsched get -A -o json` shows it (one call)."""
        shown = run_cli(cluster.address, "get", kind, "-A", "-o", "json")
        assert shown.code == 0, shown.stderr
        listed = json.loads(shown.stdout)
        return {item["metadata"]["namespace"]: _comparable(item) for item in listed["items"]
                if item["metadata"]["namespace"] in (by_kubectl, by_podsched)}

    try:
        # The disruption controller writes each budget's status in its own time: wait for both.
        def observed(namespace: str) -> Callable[[], str | None]:
            return lambda: kube.ok("get", "pdb", "app", "-n", namespace, "-o",
                                   "jsonpath={.status.observedGeneration}") or None

        for namespace in (by_kubectl, by_podsched):
            eventually(observed(namespace), "the budget's status")
        for kind in ("pods", "pdb"):
            objects = stored(kind)
            assert objects[by_kubectl] == objects[by_podsched], kind
    finally:
        for namespace in (by_kubectl, by_podsched):
            kube.ok("delete", "pod", "app", "-n", namespace, "--grace-period=0", "--force")


def test_a_v1alpha2_podgroup_applies_and_reads_back_in_either_version(kube: Kubectl, ns: str) -> None:
    group = {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": ns},
        "spec": {
            "podGroupTemplateRef": {"workload": {"workloadName": "job", "podGroupTemplateName": "workers"}},
            "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup",
        },
    }
    # The group names a Workload's template, which must exist first; written in v1alpha2 as well.
    workload = {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": "job", "namespace": ns},
        "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]},
    }
    assert kube.apply(workload) == "workload.scheduling.k8s.io/job created\n"
    assert kube.apply(group) == "podgroup.scheduling.k8s.io/gang created\n"
    # Client-side apply diffs the last applied v1alpha2 manifest against the v1alpha2 object: no change.
    assert kube.apply(group) == "podgroup.scheduling.k8s.io/gang unchanged\n"
    members = [small_pod(f"member-{index}", ns, schedulingGroup={"podGroupName": "gang"})
               for index in range(2)]
    kube.apply(*members)
    for member in members:
        assert node_of(kube, ns, member["metadata"]["name"])

    def get(resource: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(kube.ok("get", resource, "gang", "-n", ns, "-o", "json"))
        return found

    served = get("podgroups.v1alpha2.scheduling.k8s.io")
    assert served["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert served["spec"]["podGroupTemplateRef"] == group["spec"]["podGroupTemplateRef"]
    assert served["spec"]["disruptionMode"] == "PodGroup"
    stored = get("podgroups.v1alpha3.scheduling.k8s.io")
    assert stored["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert stored["spec"]["workloadRef"] == {"workloadName": "job", "templateName": "workers"}
    assert stored["spec"]["disruptionMode"] == {"all": {}}
    # Unqualified, kubectl reads the version discovery lists first for the resource: v1alpha3.
    assert get("podgroups")["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    rows = parse_table(kube.ok("get", "podgroups.v1alpha2.scheduling.k8s.io", "-n", ns))
    assert [row["NAME"] for row in rows] == ["gang"]

    bad = {**group, "metadata": {"name": "bad", "namespace": ns},
           "spec": {**group["spec"], "disruptionMode": "Pods"}}
    refused = kube("apply", "-f", "-", input=yaml.safe_dump(bad))
    assert refused.code == 1
    assert ('The PodGroup "bad" is invalid: spec.disruptionMode: Unsupported value: "Pods": supported '
            'values: "Pod", "PodGroup"') in refused.stderr
