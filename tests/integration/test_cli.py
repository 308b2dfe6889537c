"""The `podsched` CLI against the real API server process, on each backend: apply/get/describe/delete,
apply's created/unchanged/configured, real manifests with unknown fields, conflicts, and the tables."""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cluster.api import errors, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.integration.helpers import (
    MANIFESTS,
    CliResult,
    node_manifest,
    parse_table,
    pod_manifest,
    run_cli,
    write_yaml,
)
from tests.integration.test_scheduler_cli import unused_address

Cli = Callable[..., CliResult]


async def test_pod_crud(cli: Cli, client: Client, namespace: str, tmp_path: Path) -> None:
    manifest = write_yaml(tmp_path / "web.yaml", pod_manifest("web", namespace, labels={"app": "web"}))

    applied = cli("apply", "-f", manifest)
    assert applied.code == 0, applied.stderr
    assert applied.stdout == "pod/web created\n"

    table = cli("get", "pods", "-n", namespace)
    assert table.code == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    (row,) = parse_table(table.stdout)
    assert (row["NAME"], row["READY"], row["STATUS"], row["RESTARTS"]) == ("web", "0/1", "Pending", "0")

    wide = parse_table(cli("get", "pods", "-n", namespace, "-o", "wide").stdout)
    assert wide == [wide[0]] and list(wide[0]) == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    assert (wide[0]["IP"], wide[0]["NODE"], wide[0]["NOMINATED NODE"], wide[0]["READINESS GATES"]) == (
        "<none>", "<none>", "<none>", "<none>")

    stored = await client.get("Pod", "web", namespace)
    as_yaml = yaml.safe_load(cli("get", "pod", "web", "-n", namespace, "-o", "yaml").stdout)
    assert as_yaml["apiVersion"] == "v1" and as_yaml["kind"] == "Pod"
    assert as_yaml["metadata"]["resourceVersion"] == stored.metadata.resource_version
    assert as_yaml["metadata"]["uid"] == stored.metadata.uid
    assert as_yaml["metadata"]["labels"] == {"app": "web"}
    assert as_yaml["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "64Mi"}
    assert as_yaml["spec"]["schedulerName"] == "default-scheduler"
    assert as_yaml["status"]["phase"] == "Pending"

    as_list = json.loads(cli("get", "pods", "-n", namespace, "-o", "json").stdout)
    assert as_list["kind"] == "List"
    assert [item["metadata"]["name"] for item in as_list["items"]] == ["web"]
    assert cli("get", "pods", "-n", namespace, "-o", "name").stdout == "pod/web\n"

    described = cli("describe", "pod", "web", "-n", namespace)
    assert described.code == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[0].split() == ["Name:", "web"]
    assert lines[1].split() == ["Namespace:", namespace]
    assert any(line.split() == ["Status:", "Pending"] for line in lines)
    assert any(line.split() == ["cpu:", "250m"] for line in lines)
    # No scheduler runs beside this server, so describe adds a hint after <none>, unless a scheduler of
    # another module still holds a Lease in the session's shared etcd.
    events = lines[-1].split(maxsplit=2)
    assert events[:2] == ["Events:", "<none>"]
    assert len(events) == 2 or events[2].endswith('is "podsched scheduler" running?)'), lines[-1]

    deleted = cli("delete", "pod", "web", "-n", namespace, "--grace-period=0")
    assert (deleted.code, deleted.stdout) == (0, 'pod "web" deleted\n'), deleted.stderr
    gone = cli("get", "pod", "web", "-n", namespace)
    assert gone.code == 1
    assert gone.stderr == 'Error from server (NotFound): pods "web" not found\n'
    empty = cli("get", "pods", "-n", namespace)
    assert (empty.code, empty.stdout) == (0, "")
    assert empty.stderr == f"No resources found in {namespace} namespace.\n"


async def test_apply_created_unchanged_configured(
    cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    write_yaml(path, pod_manifest("app", namespace, labels={"app": "a"}))
    assert cli("apply", "-f", str(path)).stdout == "pod/app created\n"
    first = await client.get("Pod", "app", namespace)

    again = cli("apply", "-f", str(path))
    assert (again.code, again.stdout) == (0, "pod/app unchanged\n"), again.stderr
    unchanged = await client.get("Pod", "app", namespace)
    assert unchanged.metadata.resource_version == first.metadata.resource_version

    write_yaml(path, pod_manifest("app", namespace, labels={"app": "a", "version": "v2"}))
    changed = cli("apply", "-f", str(path))
    assert (changed.code, changed.stdout) == (0, "pod/app configured\n"), changed.stderr
    after = await client.get("Pod", "app", namespace)
    assert dict(after.metadata.labels) == {"app": "a", "version": "v2"}
    assert int(after.metadata.resource_version) > int(first.metadata.resource_version)
    assert after.metadata.uid == first.metadata.uid

    # Labels the manifest no longer has are removed: apply replaces them.
    write_yaml(path, pod_manifest("app", namespace, labels={"app": "a"}))
    assert cli("apply", "-f", str(path)).stdout == "pod/app configured\n"
    assert dict((await client.get("Pod", "app", namespace)).metadata.labels) == {"app": "a"}


async def test_apply_keeps_what_the_server_owns(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """A bound pod re-applied from its manifest (which has no nodeName) stays bound, and is unchanged."""
    node = unique("node")
    path = tmp_path / "pod.yaml"
    write_yaml(path, node_manifest(node), pod_manifest("bound", namespace))
    assert cli("apply", "-f", str(path)).code == 0
    await client.bind(namespace, "bound", node)

    again = cli("apply", "-f", str(path))
    assert again.code == 0, again.stderr
    # Nodes are applied before pods, whatever the file order.
    assert again.stdout == f"node/{node} unchanged\npod/bound unchanged\n"
    assert (await client.get("Pod", "bound", namespace)).spec.node_name == node


async def test_apply_node_status(
    cli: Cli, client: Client, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    name = unique("node")
    path = tmp_path / "node.yaml"
    write_yaml(path, node_manifest(name, cpu="4", memory="8Gi", pods="110"))
    assert cli("apply", "-f", str(path)).stdout == f"node/{name} created\n"
    node = await client.get("Node", name)
    assert dict(node.status.allocatable) == {"cpu": "4", "memory": "8Gi", "pods": "110"}

    # kubectl's columns; podsched models no node info or addresses, so the wide ones are kubectl's blanks.
    rows = parse_table(cli("get", "nodes", "-o", "wide").stdout)
    (row,) = [row for row in rows if row["NAME"] == name]
    assert row == {"NAME": name, "STATUS": "Ready", "ROLES": "<none>", "AGE": row["AGE"], "VERSION": "",
                   "INTERNAL-IP": "<none>", "EXTERNAL-IP": "<none>", "OS-IMAGE": "<unknown>",
                   "KERNEL-VERSION": "<unknown>", "CONTAINER-RUNTIME": "<unknown>"}
    assert cli("apply", "-f", str(path)).stdout == f"node/{name} unchanged\n"

    write_yaml(path, node_manifest(name, cpu="8", memory="8Gi", pods="110"))
    assert cli("apply", "-f", str(path)).stdout == f"node/{name} configured\n"
    assert (await client.get("Node", name)).status.allocatable["cpu"] == "8"

    described = cli("describe", "node", name).stdout
    assert "Allocatable:" in described and "Non-terminated Pods:" in described
    assert "Images:" in described and "<none>" in described.split("Images:")[1].splitlines()[0]


async def test_apply_node_images_and_describe_them(
    cli: Cli, client: Client, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """status.images are kept, validated (nothing applied when one is wrong) and summed up by describe."""
    name = unique("node")
    path = tmp_path / "node.yaml"
    manifest = node_manifest(name)
    manifest["status"]["images"] = [
        {"names": [f"registry.example/app{i}:v1"], "sizeBytes": (i + 1) * 1024 * 1024} for i in range(6)
    ]
    bad = node_manifest(unique("node"))
    bad["status"]["images"] = [{"names": ["app:1"], "sizeBytes": -5}]
    write_yaml(path, manifest, bad)
    refused = cli("apply", "-f", str(path))
    assert refused.code == 1
    assert "status.images[0].sizeBytes: Invalid value: -5" in refused.stderr
    assert [n.metadata.name for n in (await client.list("Node")).items if n.metadata.name == name] == []

    write_yaml(path, manifest)
    assert cli("apply", "-f", str(path)).stdout == f"node/{name} created\n"
    node = await client.get("Node", name)
    assert len(node.status.images) == 6
    assert (list(node.status.images[0].names), node.status.images[0].size_bytes) == (
        ["registry.example/app0:v1"], 1024 * 1024)
    described = cli("describe", "node", name).stdout.splitlines()
    (summary,) = [line for line in described if line.startswith("Images:")]
    assert summary.split() == ["Images:", "6", "(21Mi)"]
    assert any(line.split() == ["registry.example/app5:v1:", "6Mi"] for line in described)
    assert not any("registry.example/app0:v1" in line for line in described)
    assert any(line.strip() == "... and 1 more" for line in described)


async def test_apply_real_manifests_warns_and_strict_rejects(
    cli: Cli, client: Client, namespace: str
) -> None:
    """examples/manifests/pods.yaml, unedited: the fields podsched does not model are warnings by
    default, and errors (with nothing applied) under --validate=strict."""
    classes, pods = str(MANIFESTS / "priorityclasses.yaml"), str(MANIFESTS / "pods.yaml")

    strict = cli("apply", "-n", namespace, "--validate=strict", "-f", classes, "-f", pods)
    assert strict.code == 1
    assert ("spec.containers[0].livenessProbe: a Kubernetes field podsched does not model, so strict "
            "validation rejects it") in strict.stderr
    assert (await client.list("Pod", namespace)).items == []

    applied = cli("apply", "-n", namespace, "-f", classes, "-f", pods)
    assert applied.code == 0, applied.stderr
    not_modelled = "a Kubernetes field podsched does not model (ignored)"
    assert f"Warning: spec.containers[0].livenessProbe: {not_modelled}" in applied.stderr.splitlines()
    assert not any("spec.volumes" in line for line in applied.stderr.splitlines())
    for name in ("web", "cache", "report", "trainer"):
        assert f"pod/{name} created" in applied.stdout.splitlines()
    web = await client.get("Pod", "web", namespace)
    assert web.spec.priority == 100000
    required = web.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required.node_selector_terms[0].match_expressions[0].key == "kubernetes.io/os"


async def test_apply_from_stdin_and_dry_run(cli: Cli, client: Client, namespace: str) -> None:
    text = yaml.safe_dump(pod_manifest("piped", namespace))
    dry = cli("apply", "--dry-run=server", "-f", "-", input=text)
    assert (dry.code, dry.stdout) == (0, "pod/piped created (server dry run)\n"), dry.stderr
    assert (await client.list("Pod", namespace)).items == []
    real = cli("apply", "-f", "-", input=text)
    assert (real.code, real.stdout) == (0, "pod/piped created\n"), real.stderr


async def test_apply_stale_resource_version_conflicts(
    cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    write_yaml(path, pod_manifest("shared", namespace))
    assert cli("apply", "-f", str(path)).code == 0
    version = (await client.get("Pod", "shared", namespace)).metadata.resource_version

    edits = []
    for owner in ("alice", "bob"):
        manifest = pod_manifest("shared", namespace, labels={"owner": owner})
        manifest["metadata"]["resourceVersion"] = version
        edits.append(write_yaml(tmp_path / f"{owner}.yaml", manifest))

    assert cli("apply", "-f", edits[0]).stdout == "pod/shared configured\n"
    second = cli("apply", "-f", edits[1])
    assert second.code == 1
    assert second.stderr.startswith(f'Error from server (Conflict): error when updating "{edits[1]}"')
    assert (
        'Operation cannot be fulfilled on pods "shared": the object has been modified; please apply your '
        "changes to the latest version and try again"
    ) in second.stderr
    assert (await client.get("Pod", "shared", namespace)).metadata.labels["owner"] == "alice"


async def test_client_update_from_stale_version_conflicts(client: Client, namespace: str) -> None:
    created = await client.create(objects_pb2.Pod(
        metadata=objects_pb2.ObjectMeta(name="racy", namespace=namespace),
        spec=objects_pb2.PodSpec(containers=[objects_pb2.Container(name="app", image="busybox")]),
    ))
    first, second = objects_pb2.Pod(), objects_pb2.Pod()
    first.CopyFrom(created)
    second.CopyFrom(created)
    first.metadata.labels["writer"] = "first"
    second.metadata.labels["writer"] = "second"
    await client.update(first)
    try:
        await client.update(second)
    except errors.Conflict as exc:
        assert exc.message == (
            'Operation cannot be fulfilled on pods "racy": ' + errors.CONFLICT_MESSAGE
        )
    else:
        raise AssertionError("an update from a stale resourceVersion succeeded")


async def test_get_selectors_and_all_namespaces(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    other = f"{namespace}-b"
    node = unique("node")
    path = write_yaml(
        tmp_path / "pods.yaml",
        node_manifest(node),
        pod_manifest("front", namespace, labels={"tier": "front"}),
        pod_manifest("back", namespace, labels={"tier": "back"}),
        pod_manifest("elsewhere", other, labels={"tier": "front"}),
    )
    assert cli("apply", "-f", path).code == 0
    await client.bind(namespace, "back", node)

    def names(*args: str) -> list[str]:
        result = cli("get", "pods", *args)
        assert result.code == 0, result.stderr
        return [row["NAME"] for row in parse_table(result.stdout)]

    assert names("-n", namespace, "-l", "tier=front") == ["front"]
    assert names("-n", namespace, "-l", "tier in (front,back),tier!=back") == ["front"]
    assert names("-n", namespace, "--field-selector", f"spec.nodeName={node}") == ["back"]
    assert names("-n", namespace, "--field-selector", "spec.nodeName=") == ["front"]

    everywhere = cli("get", "pods", "-A", "-l", "tier=front")
    rows = [row for row in parse_table(everywhere.stdout) if row["NAMESPACE"] in (namespace, other)]
    found = sorted((row["NAMESPACE"], row["NAME"]) for row in rows)
    assert found == [(namespace, "front"), (other, "elsewhere")]

    bound = parse_table(cli("get", "pods", "-n", namespace, "-o", "wide", "back").stdout)
    assert bound[0]["NODE"] == node and bound[0]["STATUS"] == "Running"


async def test_tables_of_other_kinds(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    classes = parse_table(cli("get", "priorityclasses").stdout)
    by_name = {row["NAME"]: row for row in classes}
    assert by_name["system-cluster-critical"]["VALUE"] == "2000000000"
    assert by_name["system-node-critical"]["VALUE"] == "2000001000"
    assert by_name["system-node-critical"]["GLOBAL-DEFAULT"] == "false"

    pdb = {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web-pdb", "namespace": namespace},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }
    assert cli("apply", "-f", write_yaml(tmp_path / "pdb.yaml", pdb)).code == 0
    (row,) = parse_table(cli("get", "pdb", "-n", namespace).stdout)
    assert (row["NAME"], row["MIN AVAILABLE"], row["MAX UNAVAILABLE"]) == ("web-pdb", "2", "N/A")
    described = cli("describe", "pdb", "web-pdb", "-n", namespace).stdout
    assert any(line.split() == ["Selector:", "app=web"] for line in described.splitlines())

    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="leader", namespace=namespace))
    lease.spec.holder_identity = "scheduler-1"
    lease.spec.lease_duration_seconds = 15
    await client.create(lease)
    (row,) = parse_table(cli("get", "leases", "-n", namespace).stdout)
    assert (row["NAME"], row["HOLDER"]) == ("leader", "scheduler-1")

    pod_path = write_yaml(tmp_path / "pod.yaml", pod_manifest("noisy", namespace))
    assert cli("apply", "-f", pod_path).code == 0
    event = objects_pb2.Event(
        metadata=objects_pb2.ObjectMeta(name="noisy.1", namespace=namespace),
        involved_object=objects_pb2.ObjectReference(kind="Pod", name="noisy", namespace=namespace),
        reason="FailedScheduling", message="0/3 nodes are available", type="Warning", count=1,
    )
    await client.create(event)
    (row,) = parse_table(cli("get", "events", "-n", namespace).stdout)
    assert (row["TYPE"], row["REASON"], row["OBJECT"], row["MESSAGE"]) == (
        "Warning", "FailedScheduling", "pod/noisy", "0/3 nodes are available"
    )
    described = cli("describe", "pod", "noisy", "-n", namespace).stdout
    events = described[described.index("Events:"):].splitlines()
    assert events[1].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert events[3].split()[:2] == ["Warning", "FailedScheduling"]
    assert events[3].endswith("0/3 nodes are available")


def test_usage_and_connection_errors() -> None:
    unknown = run_cli("127.0.0.1:1", "get", "deployments")
    assert unknown.code == 2
    assert 'the server doesn\'t have a resource type "deployments"' in unknown.stderr
    assert run_cli("127.0.0.1:1", "get", "pods", "--output=table").code == 2
    assert run_cli("127.0.0.1:1", "frobnicate").code == 2

    malformed = run_cli("bad::address", "get", "pods")
    assert malformed.code == 2
    assert malformed.stderr.strip() == 'error: invalid API server address "bad::address": expected host:port'

    unreachable = run_cli("127.0.0.1:1", "get", "pods", "--request-timeout=1")
    assert unreachable.code == 1
    assert "error: cannot reach the API server at 127.0.0.1:1: connection refused" in unreachable.stderr


@pytest.mark.parametrize(
    "command",
    [("get", "pods"), ("describe", "pod", "web"), ("delete", "pod", "web"),
     ("apply", "-f", "examples/manifests/nodes.yaml")],
    ids=["get", "describe", "delete", "apply"],
)
def test_a_one_shot_command_reports_a_refused_server_as_kubectl_does(command: tuple[str, ...]) -> None:
    # No retries until --request-timeout: nothing listens there, so there is no restart to wait out.
    server = unused_address()
    result = run_cli("127.0.0.1:1", *command, "--server", server)
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        f"error: cannot reach the API server at {server}: connection refused "
        "(is `podsched apiserver` running there? set --server or $PODSCHED_SERVER)"
    )


def test_server_flag_overrides_environment(apiserver: ApiServerProcess) -> None:
    result = run_cli("127.0.0.1:1", "get", "priorityclasses", "--server", apiserver.address)
    assert result.code == 0, result.stderr
    assert "system-node-critical" in result.stdout


def test_lease_candidates_apply_get_describe_delete(cli: Cli, namespace: str, tmp_path: Path) -> None:
    candidate = {
        "apiVersion": "coordination.k8s.io/v1beta1", "kind": "LeaseCandidate",
        "metadata": {"name": "vm_0c1d", "namespace": namespace},
        "spec": {"leaseName": "kube-scheduler", "binaryVersion": "1.33.0", "emulationVersion": "1.33.0",
                 "strategy": "OldestEmulationVersion", "renewTime": "2026-01-02T03:04:05.123456Z"},
    }
    assert cli("apply", "-f", write_yaml(tmp_path / "candidate.yaml", candidate)).code == 0
    (row,) = parse_table(cli("get", "leasecandidates", "-n", namespace).stdout)
    assert list(row) == ["NAME", "LEASENAME", "BINARYVERSION", "EMULATIONVERSION", "AGE"]
    assert (row["NAME"], row["LEASENAME"], row["BINARYVERSION"], row["EMULATIONVERSION"]) == (
        "vm_0c1d", "kube-scheduler", "1.33.0", "1.33.0")
    described = cli("describe", "leasecandidate", "vm_0c1d", "-n", namespace).stdout
    lines = [line.split() for line in described.splitlines()]
    assert ["Lease", "Name:", "kube-scheduler"] in lines
    assert ["Strategy:", "OldestEmulationVersion"] in lines
    assert ["Renew", "Time:", "Fri,", "02", "Jan", "2026", "03:04:05", "+0000"] in lines

    candidate["spec"]["binaryVersion"] = "v1.33.0"
    refused = cli("apply", "-f", write_yaml(tmp_path / "bad.yaml", candidate))
    assert refused.code != 0
    assert 'spec.binaryVersion: Invalid value: "v1.33.0": must be a valid semantic version' in refused.stderr

    assert cli("delete", "leasecandidate", "vm_0c1d", "-n", namespace).code == 0
    assert parse_table(cli("get", "leasecandidates", "-n", namespace).stdout) == []


def test_kubectl_output_habits(cli: Cli, namespace: str, tmp_path: Path) -> None:
    """What kubernetes.io's pages type: -o jsonpath and custom-columns, an empty list for scripts, and
    apply's words for a typo and for a controller that will make no pods."""
    replica_set = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
    }
    path = write_yaml(
        tmp_path / "gated.yaml",
        pod_manifest("test-pod", namespace, schedulingGates=[{"name": "example.com/foo"}],
                     nodeSelector={"zone": "a", "disk": "ssd"}, nodeSelecter={"disk": "hdd"}),
        replica_set,
    )
    applied = cli("apply", "-f", path)
    assert applied.code == 0, applied.stderr
    warnings = applied.stderr.splitlines()
    assert 'Warning: spec.nodeSelecter: unknown field (did you mean "nodeSelector"?)' in warnings
    assert ("Warning: replicaset.apps/web: podsched runs no workload controllers; no pods will be created "
            "for it") in warnings

    gates = cli("get", "pod", "test-pod", "-n", namespace, "-o", "jsonpath={.spec.schedulingGates}")
    assert (gates.code, gates.stdout) == (0, '[{"name":"example.com/foo"}]'), gates.stderr
    selector = cli("get", "pod", "test-pod", "-n", namespace, "-o=jsonpath={.spec.nodeSelector}")
    assert (selector.code, selector.stdout) == (0, '{"disk":"ssd","zone":"a"}'), selector.stderr
    each_name = 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'
    assert cli("get", "pods", "-n", namespace, "-o", each_name).stdout == "test-pod\n"
    columns = cli("get", "pods", "-n", namespace, "-o=custom-columns=NAME:.metadata.name,NODE:.spec.nodeName")
    assert columns.stdout.splitlines() == ["NAME       NODE", "test-pod   <none>"]

    bad = cli("get", "pods", "-n", namespace, "-o", "jsonpath={.items[0}")
    assert bad.code == 1
    assert bad.stderr == 'error: error parsing jsonpath "{.items[0}": unterminated array at position 8\n'

    empty = cli("get", "pods", "-n", f"{namespace}-none", "-o", "json")
    assert (empty.code, empty.stderr) == (0, "")
    assert json.loads(empty.stdout) == {
        "apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}
    }
    assert yaml.safe_load(cli("get", "pods", "-n", f"{namespace}-none", "-o", "yaml").stdout)["items"] == []


def test_version_of_the_client_and_the_server(apiserver: ApiServerProcess) -> None:
    release = importlib.metadata.version("podsched")
    both = run_cli(apiserver.address, "version")
    assert both.code == 0, both.stderr
    assert both.stdout == f"Client Version: {release}\nServer Version: {release}\n"
    assert run_cli(apiserver.address, "version", "--client").stdout == f"Client Version: {release}\n"
    assert run_cli(apiserver.address, "--version").stdout == f"podsched {release}\n"
    unreachable = run_cli("127.0.0.1:1", "version", "--request-timeout=1")
    assert (unreachable.code, unreachable.stdout) == (1, f"Client Version: {release}\n")
    assert "error: cannot reach the API server at 127.0.0.1:1: connection refused" in unreachable.stderr
