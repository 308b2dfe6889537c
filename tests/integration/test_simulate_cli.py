"""`podsched simulate` as a user runs it: a new process on a realistic scenario file (with fields
scheduling does not model), the JSON result alone on stdout, the same result for the same seed, a
readable table, exit code 2 with a message naming file, document and field for bad input, PodGroups in
the result, and the examples of docs/scenario-format.md printing what the document shows."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.integration.helpers import CLI_TIMEOUT_S, REPO, CliResult, parse_table

# Nodes and pods as they come out of a real cluster (`kubectl get -o yaml`, trimmed) or a Helm chart:
# capacity and conditions on nodes, probes, volumes, env, security contexts and limits on pods.
REALISTIC = textwrap.dedent("""\
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata:
      name: business-critical
    value: 100000
    description: Customer-facing services.
    ---
    apiVersion: v1
    kind: Node
    metadata:
      name: worker-a
      labels:
        kubernetes.io/os: linux
        topology.kubernetes.io/zone: eu-west-1a
        node.kubernetes.io/instance-type: m5.xlarge
      annotations:
        node.alpha.kubernetes.io/ttl: "0"
    spec:
      podCIDR: 10.244.1.0/24
      providerID: aws:///eu-west-1a/i-0abc
    status:
      capacity: {cpu: "4", memory: 16Gi, pods: "110", ephemeral-storage: 100Gi}
      allocatable: {cpu: 3900m, memory: 15Gi, pods: "110", ephemeral-storage: 95Gi}
      conditions:
      - {type: Ready, status: "True", reason: KubeletReady}
      nodeInfo: {kubeletVersion: v1.30.2, osImage: Ubuntu 22.04}
    ---
    apiVersion: v1
    kind: Node
    metadata:
      name: worker-b
      labels:
        kubernetes.io/os: linux
        topology.kubernetes.io/zone: eu-west-1b
    spec:
      taints:
      - {key: dedicated, value: batch, effect: NoSchedule}
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: checkout
      namespace: shop
      labels: {app: checkout}
      ownerReferences:
      - {apiVersion: apps/v1, kind: ReplicaSet, name: checkout-5d8f, uid: 0b3c7a4e-5f1d-4c2b-9e8a-7d6f5e4c}
    spec:
      priorityClassName: business-critical
      serviceAccountName: checkout
      securityContext: {runAsNonRoot: true}
      containers:
      - name: app
        image: registry.example.com/checkout:2.4.1
        args: ["--port=8080"]
        env:
        - {name: LOG_LEVEL, value: info}
        - name: DB_PASSWORD
          valueFrom: {secretKeyRef: {name: db, key: password}}
        ports:
        - {name: http, containerPort: 8080}
        resources:
          requests: {cpu: "1", memory: 2Gi}
          limits: {cpu: "2", memory: 2Gi}
        readinessProbe:
          httpGet: {path: /ready, port: http}
        volumeMounts:
        - {name: config, mountPath: /etc/checkout}
      volumes:
      - name: config
        configMap: {name: checkout}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: kubernetes.io/os, operator: In, values: [linux]}
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: report
      namespace: shop
    spec:
      tolerations:
      - {key: dedicated, operator: Equal, value: batch, effect: NoSchedule}
      nodeSelector: {topology.kubernetes.io/zone: eu-west-1b}
      containers:
      - name: job
        image: registry.example.com/report:1.0
        resources:
          requests: {cpu: "6"}
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: too-big
      namespace: shop
    spec:
      containers:
      - name: app
        image: registry.example.com/big:1.0
        resources:
          requests: {cpu: "16"}
    """)

#: Eight identical nodes and eight identical pods: every choice is a tie that only the seed breaks.
TIES = "---\n".join(
    [f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}}}\n"
     f"status: {{allocatable: {{cpu: '8', memory: 8Gi}}}}\n" for i in range(8)]
    + [f"apiVersion: v1\nkind: Pod\nmetadata: {{name: pod-{i}}}\nspec:\n  containers: [{{name: a, image: b, "
       f"resources: {{requests: {{cpu: '1'}}}}}}]\n" for i in range(8)]
)


def simulate(*args: str) -> CliResult:
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", *args],
        capture_output=True, text=True, cwd=REPO, timeout=CLI_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def realistic(tmp_path: Path) -> str:
    path = tmp_path / "shop.yaml"
    path.write_text(REALISTIC)
    return str(path)


def test_realistic_manifests_print_only_json_on_stdout(realistic: str) -> None:
    result = simulate("-f", realistic, "-o", "json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)  # nothing but the JSON document on stdout
    assert document == {"pods": [
        {"namespace": "shop", "name": "checkout", "node": "worker-a", "nominatedNode": None, "deleted": False,
         "reason": None},
        {"namespace": "shop", "name": "report", "node": "worker-b", "nominatedNode": None, "deleted": False,
         "reason": None},
        {"namespace": "shop", "name": "too-big", "node": None, "nominatedNode": None, "deleted": False,
         "reason": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                   "{dedicated: batch}. preemption: 0/2 nodes are available: 2 Preemption is not helpful "
                   "for scheduling."},
    ]}
    # The unmodelled fields were dropped with a warning naming each, on stderr.
    for warning in ("document 4 (Pod checkout): spec.securityContext: a Kubernetes field podsched does not "
                    "model (ignored)",
                    "document 2 (Node worker-a): status.nodeInfo: a Kubernetes field podsched does not model "
                    "(ignored)"):
        assert f"Warning: {realistic}: {warning}" in result.stderr


def test_same_seed_same_result(tmp_path: Path) -> None:
    path = tmp_path / "ties.yaml"
    path.write_text(TIES)
    first = simulate("-f", str(path), "--seed", "7")
    second = simulate("-f", str(path), "--seed", "7")
    assert first.code == second.code == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    placed = [pod["node"] for pod in json.loads(first.stdout)["pods"]]
    assert all(placed), placed
    # The seed is what decides the ties: another one decides them otherwise.
    other = simulate("-f", str(path), "--seed", "8")
    assert other.code == 0, other.stderr
    assert other.stdout != first.stdout


def test_table_output(realistic: str) -> None:
    result = simulate("-f", realistic, "-o", "table")
    assert result.code == 0, result.stderr
    rows = parse_table(result.stdout)
    assert [(row["NAME"], row["NODE"], row["DELETED"]) for row in rows] == [
        ("checkout", "worker-a", "false"), ("report", "worker-b", "false"), ("too-big", "<none>", "false"),
    ]
    assert rows[2]["REASON"].startswith("0/2 nodes are available: ")
    assert rows[0]["NOMINATED NODE"] == "<none>"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec:\n  nodeName: nowhere\n"
         "  containers: [{name: a, image: b}]\n",
         'document 1 (Pod lost): spec.nodeName: Not found: "nowhere"'),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n",
         'document 1 (Node n1): status.allocatable[cpu]: Invalid value: "lots"'),
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
         'document 1 (Deployment web): no matches for kind "Deployment"'),
        # Checked by the API server's admission, not by the scenario loader: reported at its document too.
        ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 2000000000\n",
         "document 1 (PriorityClass huge): PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: "
         "Forbidden: maximum allowed value of a user defined priority is 1000000000"),
        ("apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: trainer}\n"
         "spec: {schedulingPolicy: {gang: {minCount: 0}}}\n",
         "document 1 (PodGroup trainer): spec.schedulingPolicy.gang.minCount: Required value"),
        ("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: job}\n"
         "spec: {minMember: 2, schedulingPolicy: {basic: {}}}\n",
         "document 1 (PodGroup job): spec.schedulingPolicy: Forbidden"),
    ],
    ids=["unknown-node", "bad-quantity", "unknown-kind", "refused-by-the-api-server", "pod-group-min-count",
         "pod-group-other-spelling"],
)
def test_bad_input_exits_2_naming_document_and_field(tmp_path: Path, document: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(document)
    result = simulate("-f", str(path))
    assert result.code == 2
    assert result.stdout == ""
    assert f"error: {path}: {message}" in result.stderr
    assert "nothing was simulated" in result.stderr


def test_bad_config_exits_2(tmp_path: Path, realistic: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n"
                      "  plugins: {score: {enabled: [{name: Nope}]}}\n")
    result = simulate("-f", realistic, "--config", str(config))
    assert result.code == 2
    assert result.stdout == ""
    assert str(config) in result.stderr


def test_wall_clock_timeout_is_a_clear_error(realistic: str) -> None:
    result = simulate("-f", realistic, "--timeout", "0.001")
    assert result.code == 1
    assert result.stdout == ""
    expected = "podsched simulate: the simulation did not become quiescent within 0.001s of wall time"
    assert expected in result.stderr


@pytest.mark.parametrize(
    ("heading", "file_name"),
    [("## An example\n", "example.yaml"), ("## An example with gangs\n", "gangs.yaml"),
     ("## An example with devices\n", "devices.yaml")],
    ids=["preemption", "gangs", "devices"],
)
def test_the_examples_of_docs_scenario_format_print_what_they_show(
    tmp_path: Path, heading: str, file_name: str
) -> None:
    doc = (REPO / "docs" / "scenario-format.md").read_text()
    example = doc[doc.index(heading):]
    scenario = example.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = example.split(f"$ podsched simulate -f {file_name} -o table\n", 1)[1].split("```", 1)[0]
    (tmp_path / file_name).write_text(scenario)
    result = simulate("-f", str(tmp_path / file_name), "-o", "table")
    assert (result.code, result.stdout) == (0, shown), result.stderr


def _member(name: str, *, group: str = "", label: str = "") -> str:
    """A pending pod of 2 cpu that joins ``group`` by spec.schedulingGroup or ``label`` by the
    Coscheduling label."""
    labels = f"  labels: {{scheduling.x-k8s.io/pod-group: {label}}}\n" if label else ""
    joins = f"  schedulingGroup: {{podGroupName: {group}}}\n" if group else ""
    return (f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{labels}spec:\n{joins}"
            "  containers: [{name: a, image: b, resources: {requests: {cpu: '2'}}}]\n")


#: Two gangs, one per spelling, competing for one node that holds four of their five pods, and a pod that
#: names a PodGroup nobody created.
GANGS = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: n1}
    status: {allocatable: {cpu: "8", memory: 16Gi}}
    ---
    apiVersion: scheduling.k8s.io/v1alpha3
    kind: PodGroup
    metadata: {name: trainer}
    spec: {schedulingPolicy: {gang: {minCount: 3}}}
    ---
    apiVersion: scheduling.x-k8s.io/v1alpha1
    kind: PodGroup
    metadata: {name: job}
    spec: {minMember: 2, scheduleTimeoutSeconds: 60}
    """) + "".join([
    *(_member(f"trainer-{i}", group="trainer") for i in range(3)),
    *(_member(f"job-{i}", label="job") for i in range(2)),
    _member("orphan", label="nobody"),
])


def test_pod_groups_are_reported_in_json_and_table(tmp_path: Path) -> None:
    path = tmp_path / "gangs.yaml"
    path.write_text(GANGS)
    result = simulate("-f", str(path), "-o", "json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    # Same priority and (on the virtual clock) the same age: the queue takes the groups in name order, so
    # job is placed whole and trainer then finds room for two of its three.
    nodes = {pod["name"]: pod["node"] for pod in document["pods"]}
    assert nodes == {"job-0": "n1", "job-1": "n1", "trainer-0": None, "trainer-1": None, "trainer-2": None,
                     "orphan": None}
    reasons = {pod["name"]: pod["reason"] for pod in document["pods"]}
    groups = {group["name"]: group for group in document["podGroups"]}
    assert set(groups) == {"job", "trainer"}
    assert groups["job"] == {
        "namespace": "default", "name": "job", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "minCount": 2, "members": 2, "bound": 2, "admitted": True, "reason": None,
    }
    trainer = groups["trainer"]
    assert (trainer["apiVersion"], trainer["minCount"], trainer["members"], trainer["bound"],
            trainer["admitted"]) == ("scheduling.k8s.io/v1alpha3", 3, 3, 0, False)
    # The group's reason, which each member carries too.
    assert trainer["reason"].startswith(
        "pod group default/trainer: 2/3 pods placeable, minCount 3: pod trainer-")
    assert reasons["trainer-0"] == reasons["trainer-1"] == reasons["trainer-2"] == trainer["reason"]
    assert reasons["orphan"] is None

    table = simulate("-f", str(path), "-o", "table")
    assert table.code == 0, table.stderr
    pods_table, groups_table = table.stdout.split("\n\n")
    assert [row["NAME"] for row in parse_table(pods_table)] == [
        "job-0", "job-1", "orphan", "trainer-0", "trainer-1", "trainer-2"]
    rows = parse_table(groups_table)
    columns = ("PODGROUP", "MIN COUNT", "MEMBERS", "BOUND", "ADMITTED")
    assert [tuple(row[column] for column in columns) for row in rows] == [
        ("job", "2", "2", "2", "true"), ("trainer", "3", "3", "0", "false")]
    assert rows[0]["REASON"] == "<none>" and rows[1]["REASON"] == trainer["reason"]
