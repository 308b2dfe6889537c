"""Scenario files for `podsched simulate`: parsing, defaults, creation order, hidden priority classes, and
one clear error (file, document, object, field) for each kind of invalid input."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.simulate import ScenarioError, load_scenario
from cluster.simulate.scenario import hidden_class_name

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  allocatable: {{cpu: "4", memory: 8Gi}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: busybox
"""


def write(tmp_path: Path, *documents: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text("---\n".join(textwrap.dedent(doc) for doc in documents))
    return str(path)


def pod(name: str, **spec: str) -> str:
    text = POD.format(name=name)
    for key, value in spec.items():
        text = text.replace("spec:\n", f"spec:\n  {key}: {value}\n", 1)
    return text


def gang(name: str, min_count: int) -> str:
    """An upstream (scheduling.k8s.io/v1alpha3) PodGroup with a gang policy."""
    return (f"apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {{name: {name}}}\n"
            f"spec:\n  schedulingPolicy:\n    gang: {{minCount: {min_count}}}\n")


def coscheduling(name: str, spec: str) -> str:
    """A scheduler-plugins (scheduling.x-k8s.io/v1alpha1) PodGroup with ``spec``."""
    return (f"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: {name}}}\n"
            f"spec: {spec}\n")


# ------------------------------------------------------------------------------------ valid input


def test_creation_order_and_file_order_of_pending_pods(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        pod("p2"),
        NODE.format(name="n1"),
        pod("running", nodeName="n1"),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: budget}\n"
        "spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\nstatus: {disruptionsAllowed: 3}\n",
        pod("p1"),
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n",
    )
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [
        ("PriorityClass", "high"),
        ("Node", "n1"),
        ("PodDisruptionBudget", "budget"),
        ("Pod", "running"),
        ("Pod", "p2"),
        ("Pod", "p1"),
    ]
    assert [entry.obj.metadata.name for entry in scenario.pending_pods] == ["p2", "p1"]
    pdb = scenario.pdbs[0].obj
    assert pdb.metadata.namespace == "default"
    assert pdb.status.disruptions_allowed == 3


def test_pod_groups_of_both_spellings_are_created_before_every_pod(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        NODE.format(name="n1"),
        pod("running", nodeName="n1"),
        pod("member", schedulingGroup="{podGroupName: trainer}"),
        gang("trainer", 2),
        POD.format(name="labelled").replace(
            "  name: labelled\n", "  name: labelled\n  labels: {scheduling.x-k8s.io/pod-group: job}\n"),
        coscheduling("job", "{minMember: 2, scheduleTimeoutSeconds: 60}"),
    )
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [
        ("Node", "n1"),
        ("PodGroup", "trainer"),
        ("PodGroup", "job"),
        ("Pod", "running"),
        ("Pod", "member"),
        ("Pod", "labelled"),
    ]
    trainer, job = (entry.obj for entry in scenario.pod_groups)
    # Each keeps the apiVersion it was written in, in the default namespace.
    assert (trainer.api_version, trainer.metadata.namespace) == ("scheduling.k8s.io/v1alpha3", "default")
    assert trainer.spec.scheduling_policy.gang.min_count == 2
    assert (job.api_version, job.spec.min_member) == ("scheduling.x-k8s.io/v1alpha1", 2)


def test_namespaces_are_created_before_everything(tmp_path: Path) -> None:
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n  labels: {{team: a}}\n"
    path = write(tmp_path, NODE.format(name="n1"), pod("p"), namespace.format(name="team-a"),
                 namespace.format(name="default"))
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [("Namespace", "team-a"), ("Namespace", "default"), ("Node", "n1"), ("Pod", "p")]


RUNTIME_CLASS = ("apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {{name: {name}}}\nhandler: kata\n"
                 "overhead: {{podFixed: {{cpu: 250m}}}}\nscheduling: {{nodeSelector: {{runtime: kata}}}}\n")


def test_runtime_classes_are_created_before_pods(tmp_path: Path) -> None:
    path = write(tmp_path, NODE.format(name="n1"), pod("p", runtimeClassName="kata"),
                 RUNTIME_CLASS.format(name="kata"))
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [("RuntimeClass", "kata"), ("Node", "n1"), ("Pod", "p")]
    # Admission sets the overhead when the pod is created; the scenario keeps the pod as written.
    assert not scenario.pending_pods[0].obj.spec.overhead


def test_a_pod_naming_a_group_the_scenario_lacks_is_no_error(tmp_path: Path) -> None:
    # As in a cluster, where the pod waits for its group to be created.
    path = write(tmp_path, NODE.format(name="n1"), pod("orphan", schedulingGroup="{podGroupName: nobody}"))
    scenario = load_scenario([path])
    assert [entry.obj.metadata.name for entry in scenario.pending_pods] == ["orphan"]
    assert scenario.pod_groups == []


def test_node_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        NODE.format(name="plain"),
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: labelled\n  labels: {kubernetes.io/hostname: other}\n"
        "status:\n  capacity: {cpu: '2', memory: 1Gi}\n",
        "apiVersion: v1\nkind: Node\nmetadata: {name: limited}\n"
        "status:\n  allocatable: {cpu: '1', pods: '3'}\n",
    )
    plain, labelled, limited = (entry.obj for entry in load_scenario([path]).nodes)
    assert plain.metadata.labels["kubernetes.io/hostname"] == "plain"
    assert dict(plain.status.allocatable) == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    # A label the manifest gives is kept; allocatable defaults to capacity before pods is added.
    assert labelled.metadata.labels["kubernetes.io/hostname"] == "other"
    assert dict(labelled.status.allocatable) == {"cpu": "2", "memory": "1Gi", "pods": "110"}
    assert limited.status.allocatable["pods"] == "3"


def test_unmodelled_fields_are_warnings_with_their_location(tmp_path: Path) -> None:
    manifest = POD.format(name="web").replace(
        "    image: busybox\n",
        "    image: busybox\n    livenessProbe: {httpGet: {path: /, port: 80}}\n"
        "  dnsPolicy: ClusterFirst\n",
    )
    path = write(tmp_path, NODE.format(name="n1"), manifest)
    scenario = load_scenario([path])
    assert [entry.obj.metadata.name for entry in scenario.pending_pods] == ["web"]
    assert sorted(scenario.warnings) == [
        f"{path}: document 2 (Pod web): spec.containers[0].livenessProbe: a Kubernetes field podsched does "
        "not model (ignored)",
        f"{path}: document 2 (Pod web): spec.dnsPolicy: a Kubernetes field podsched does not model (ignored)",
    ]


def test_bare_priority_gets_a_hidden_class(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        pod("a", priority="500"),
        pod("b", priority="500"),
        pod("c", priority="-5"),
        pod("d", priority="500", preemptionPolicy="Never"),
        pod("critical", priority="2000000000"),
        pod("none"),
    )
    scenario = load_scenario([path])
    classes = {entry.obj.metadata.name: entry.obj for entry in scenario.priority_classes}
    assert set(classes) == {
        "simulate-priority-500", "simulate-priority-minus-5", "simulate-priority-500-never"
    }
    assert classes["simulate-priority-500"].value == 500
    assert classes["simulate-priority-500"].preemption_policy == "PreemptLowerPriority"
    assert classes["simulate-priority-minus-5"].value == -5
    assert classes["simulate-priority-500-never"].preemption_policy == "Never"
    named = {entry.obj.metadata.name: entry.obj.spec.priority_class_name for entry in scenario.pending_pods}
    assert named == {
        "a": "simulate-priority-500",
        "b": "simulate-priority-500",
        "c": "simulate-priority-minus-5",
        "d": "simulate-priority-500-never",
        "critical": "system-cluster-critical",
        "none": "",
    }


@pytest.mark.parametrize(
    ("value", "policy", "name"),
    [(0, "PreemptLowerPriority", "simulate-priority-0"), (7, "Never", "simulate-priority-7-never"),
     (-1, "PreemptLowerPriority", "simulate-priority-minus-1")],
    ids=["zero", "never", "negative"],
)
def test_hidden_class_name(value: int, policy: str, name: str) -> None:
    assert hidden_class_name(value, policy) == name


def test_bare_priority_of_a_pod_group_gets_a_hidden_class(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        gang("trainer", 2).replace("spec:\n", "spec:\n  priority: 500\n"),
        gang("other", 2).replace("spec:\n", "spec:\n  priority: 7\n"),
        pod("a", priority="500"),
    )
    scenario = load_scenario([path])
    classes = {entry.obj.metadata.name: entry.obj.value for entry in scenario.priority_classes}
    # One class per value, shared by pods and groups.
    assert classes == {"simulate-priority-500": 500, "simulate-priority-7": 7}
    named = {entry.obj.metadata.name: entry.obj.spec.priority_class_name for entry in scenario.pod_groups}
    assert named == {"trainer": "simulate-priority-500", "other": "simulate-priority-7"}


def test_priority_agreeing_with_its_class_is_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n",
        pod("p", priorityClassName="high", priority="100"),
    )
    scenario = load_scenario([path])
    assert [entry.obj.metadata.name for entry in scenario.priority_classes] == ["high"]
    spec: objects_pb2.PodSpec = scenario.pending_pods[0].obj.spec
    assert (spec.priority_class_name, spec.priority) == ("high", 100)


# ---------------------------------------------------------------------------------- invalid input

INVALID = [
    pytest.param(
        [NODE.format(name="n1"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"],
        ['document 2 (Deployment web): no matches for kind "Deployment" in version "apps/v1"'],
        id="unknown-kind",
    ),
    pytest.param(
        ["apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: lock}\n"],
        ["document 1 (Lease lock): kind: Unsupported value: Lease: a scenario holds Node, Pod, "
         "PriorityClass, PodDisruptionBudget, PodGroup"],
        id="served-kind-not-in-scenarios",
    ),
    pytest.param(
        [gang("trainer", 0)],
        ["document 1 (PodGroup trainer): spec.schedulingPolicy.gang.minCount: Required value"],
        id="gang-min-count-zero",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: trainer}\n"
         "spec: {schedulingPolicy: {}}\n"],
        ['document 1 (PodGroup trainer): spec.schedulingPolicy: Invalid value: "": must specify one of'],
        id="pod-group-without-policy",
    ),
    pytest.param(
        [coscheduling("job", "{minMember: -1}")],
        ["document 1 (PodGroup job): spec.minMember: Invalid value: -1"],
        id="negative-min-member",
    ),
    pytest.param(
        [coscheduling("job", "{minMember: 2, minResources: {cpu: lots}}")],
        ['document 1 (PodGroup job): spec.minResources[cpu]: Invalid value: "lots"'],
        id="invalid-min-resources",
    ),
    pytest.param(
        [coscheduling("job", "{minMember: 2, schedulingPolicy: {gang: {minCount: 2}}}")],
        ["document 1 (PodGroup job): spec.schedulingPolicy: Forbidden"],
        id="field-of-the-other-spelling",
    ),
    pytest.param(
        [gang("trainer", 2).replace("spec:\n", "spec:\n  priorityClassName: gold\n")],
        ['document 1 (PodGroup trainer): spec.priorityClassName: Not found: "gold"'],
        id="pod-group-unknown-priority-class",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n",
         gang("trainer", 2).replace("spec:\n", "spec:\n  priorityClassName: high\n  priority: 5\n")],
        ["document 2 (PodGroup trainer): spec.priority: Invalid value: 5: PriorityClass high has value 100"],
        id="pod-group-priority-contradicts-class",
    ),
    pytest.param(
        [gang("trainer", 2).replace("spec:\n", "spec:\n  priority: 2000000000\n")],
        ["document 1 (PodGroup trainer): spec.priority: Invalid value: 2000000000: must be at most "
         "1000000000"],
        id="pod-group-priority-above-user-range",
    ),
    pytest.param(
        [NODE.format(name="n1"), pod("p", nodeName="n2")],
        ['document 2 (Pod p): spec.nodeName: Not found: "n2": the scenario defines no such Node'],
        id="pod-on-unknown-node",
    ),
    pytest.param(
        [NODE.format(name="n1"), pod("p"), pod("p")],
        ['document 3 (Pod p): metadata.name: Duplicate value: "p": already defined in', "document 2"],
        id="duplicate-name",
    ),
    pytest.param(
        [NODE.format(name="n1").replace('cpu: "4"', 'cpu: "four"')],
        ['document 1 (Node n1): status.allocatable[cpu]: Invalid value: "four"'],
        id="invalid-node-quantity",
    ),
    pytest.param(
        [NODE.format(name="n1") + "  images: [{names: [app:v1], sizeBytes: -1}]\n"],
        ["document 1 (Node n1): status.images[0].sizeBytes: Invalid value: -1: "
         "must be greater than or equal to 0"],
        id="negative-image-size",
    ),
    pytest.param(
        [NODE.format(name="n1") + "  images: [{sizeBytes: 10}]\n"],
        ["document 1 (Node n1): status.images[0].names: Required value"],
        id="image-without-names",
    ),
    pytest.param(
        [POD.format(name="p").replace("    image: busybox\n",
                                      "    image: busybox\n    resources: {requests: {memory: 1Gb}}\n")],
        ['document 1 (Pod p): spec.containers[0].resources.requests[memory]: Invalid value: "1Gb"'],
        id="invalid-pod-quantity",
    ),
    pytest.param(
        [pod("p", priorityClassName="gold")],
        ['document 1 (Pod p): spec.priorityClassName: Not found: "gold"'],
        id="unknown-priority-class",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n",
         pod("p", priorityClassName="high", priority="5")],
        ["document 2 (Pod p): spec.priority: Invalid value: 5: PriorityClass high has value 100"],
        id="priority-contradicts-class",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: calm}\nvalue: 1\n"
         "preemptionPolicy: Never\n",
         pod("p", priorityClassName="calm", preemptionPolicy="PreemptLowerPriority")],
        ['document 2 (Pod p): spec.preemptionPolicy: Invalid value: "PreemptLowerPriority": PriorityClass '
         "calm has preemptionPolicy Never"],
        id="policy-contradicts-class",
    ),
    pytest.param(
        [pod("p", priority="1500000000")],
        ["document 1 (Pod p): spec.priority: Invalid value: 1500000000: must be at most 1000000000"],
        id="priority-above-user-range",
    ),
    pytest.param(
        [pod("p", priority="2000000000", preemptionPolicy="Never")],
        ["document 1 (Pod p): spec.priority: Invalid value: 2000000000: must be at most 1000000000"],
        id="system-priority-with-never",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\n"
         "spec:\n  containers: [{name: a, image: b}]\n"],
        ["document 1 (Pod): metadata.name: Required value: every object of a scenario is named"],
        id="missing-name",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: simulate-priority-3}\n"
         "value: 3\n"],
        ["document 1 (PriorityClass simulate-priority-3): metadata.name: Forbidden: the prefix "
         "'simulate-priority-' is reserved"],
        id="reserved-class-prefix",
    ),
    pytest.param(
        ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\nvalue: 1\n"
         "globalDefault: true\n",
         "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: b}\nvalue: 2\n"
         "globalDefault: true\n"],
        ["document 2 (PriorityClass b): globalDefault: Forbidden: PriorityClass a is already marked as "
         "default"],
        id="two-global-defaults",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Node\nmetadata: {name: n1, namespace: prod}\n"],
        ["document 1 (Node n1): metadata.namespace: Forbidden: a Node is not namespaced"],
        id="namespaced-node",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n"],
        ['document 1 (Namespace team.a): metadata.name: Invalid value: "team.a": must not contain dots'],
        id="namespace-name-not-a-label",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, namespace: other}\n"],
        ["document 1 (Namespace team-a): metadata.namespace: Forbidden: a Namespace is not namespaced"],
        id="namespaced-namespace",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {version: 1}\n"],
        ["document 1 (Node n1): metadata.labels[version]: Invalid value: 1: expected a string, got integer"],
        id="wrong-type",
    ),
    pytest.param(
        ["apiVersion: v1\nkind: Node\nmetadata: {name: n1\n"],
        ["document 1: line", "YAML syntax error"],
        id="yaml-syntax",
    ),
    pytest.param(
        [NODE.format(name="n1").replace("status:",
                                        "spec:\n  taints: [{key: a, effect: Sometimes}]\nstatus:")],
        ['document 1 (Node n1): spec.taints[0].effect: Unsupported value: "Sometimes"'],
        id="api-validation",
    ),
    pytest.param(
        [NODE.format(name="n1"), pod("p", runtimeClassName="gvisor")],
        ['document 2 (Pod p): spec.runtimeClassName: Not found: "gvisor": no RuntimeClass with this name in '
         "the scenario"],
        id="unknown-runtime-class",
    ),
    pytest.param(
        [RUNTIME_CLASS.format(name="kata"), pod("p", runtimeClassName="kata", overhead="{cpu: 300m}")],
        ["document 2 (Pod p): spec.overhead: Forbidden: pod rejected: Pod's Overhead doesn't match "
         "RuntimeClass's defined Overhead"],
        id="overhead-not-the-class-overhead",
    ),
    pytest.param(
        [pod("p", overhead="{cpu: 300m}")],
        ["document 1 (Pod p): spec.overhead: Forbidden: pod rejected: Pod Overhead set without "
         "corresponding RuntimeClass defined Overhead"],
        id="overhead-without-runtime-class",
    ),
    pytest.param(
        [RUNTIME_CLASS.format(name="kata"),
         pod("p", runtimeClassName="kata", nodeSelector="{runtime: runc}")],
        ["document 2 (Pod p): spec.nodeSelector: Forbidden: conflict: "
         "runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc"],
        id="node-selector-conflicts-with-runtime-class",
    ),
    pytest.param(
        ["apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: Kata\n"],
        ['document 1 (RuntimeClass kata): handler: Invalid value: "Kata"'],
        id="runtime-class-handler",
    ),
    pytest.param(
        ["apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata, namespace: default}\n"
         "handler: kata\n"],
        ["document 1 (RuntimeClass kata): metadata.namespace: Forbidden: a RuntimeClass is not namespaced"],
        id="runtime-class-namespaced",
    ),
]


@pytest.mark.parametrize(("documents", "fragments"), INVALID)
def test_invalid_scenarios_name_file_document_object_and_field(
    tmp_path: Path, documents: list[str], fragments: list[str]
) -> None:
    path = write(tmp_path, *documents)
    with pytest.raises(ScenarioError) as raised:
        load_scenario([path])
    text = str(raised.value)
    assert text.startswith(f"{path}: document "), text
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, pod("a", nodeName="ghost"), pod("b", priorityClassName="gold"))
    with pytest.raises(ScenarioError) as raised:
        load_scenario([path])
    assert len(raised.value.problems) == 2


def test_several_files_are_one_scenario(tmp_path: Path) -> None:
    nodes = write(tmp_path, NODE.format(name="n1"), name="nodes.yaml")
    pods = write(tmp_path, pod("p", nodeName="n1"), name="pods.yaml")
    scenario = load_scenario([nodes, pods])
    assert [entry.obj.metadata.name for entry in scenario.running_pods] == ["p"]
    assert scenario.running_pods[0].source == pods


def test_services_and_controllers_are_created_before_pods(tmp_path: Path) -> None:
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n"
    rs = ("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: api\nspec:\n  selector:\n"
          "    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n")
    path = write(tmp_path, NODE.format(name="n1"), pod("p"), service, rs)
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [("Node", "n1"), ("Service", "web"), ("ReplicaSet", "api"), ("Pod", "p")]
    assert [entry.obj.metadata.namespace for entry in scenario.workloads] == ["default", "default"]


CLASS = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
         "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com'\"}\n")
SLICE = ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
         "spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
         "  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
         "  devices:\n  - {name: gpu-0}\n")


def claim_spec(kind: str, name: str, device_class: str) -> str:
    """A ResourceClaim or ResourceClaimTemplate asking for one device of ``device_class``."""
    devices = f"devices:\n  requests:\n  - name: gpu\n    exactly: {{deviceClassName: {device_class}}}\n"
    indent = "    " if kind == "ResourceClaimTemplate" else "  "
    body = textwrap.indent(devices, indent)
    spec = f"spec:\n  spec:\n{body}" if kind == "ResourceClaimTemplate" else f"spec:\n{body}"
    return f"apiVersion: resource.k8s.io/v1\nkind: {kind}\nmetadata: {{name: {name}}}\n{spec}"


def test_dra_objects_are_created_after_nodes_and_before_pods_classes_first(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        pod("p"),
        claim_spec("ResourceClaim", "shared", "gpu.example.com"),
        SLICE,
        claim_spec("ResourceClaimTemplate", "one-gpu", "gpu.example.com"),
        NODE.format(name="n1"),
        CLASS,
    )
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [("Node", "n1"), ("DeviceClass", "gpu.example.com"), ("ResourceSlice", "n1-gpus"),
                     ("ResourceClaimTemplate", "one-gpu"), ("ResourceClaim", "shared"), ("Pod", "p")]
    # Validated with the API's defaults (allocationMode ExactCount), created as written.
    claim = scenario.resources[0].obj
    assert claim.spec.devices.requests[0].exactly.allocation_mode == ""


def test_claim_templates_are_created_before_the_pod_groups_that_use_them(tmp_path: Path) -> None:
    """A PodGroup's claim is made from its template as soon as the group exists: the template first."""
    group = gang("trainer", 2).rstrip("\n") + (
        "\n  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: one-gpu}\n")
    path = write(tmp_path, NODE.format(name="n1"), group, claim_spec("ResourceClaimTemplate", "one-gpu", "c"))
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [("Node", "n1"), ("ResourceClaimTemplate", "one-gpu"), ("PodGroup", "trainer")]


def test_references_the_scheduler_reports_are_no_scenario_error(tmp_path: Path) -> None:
    """A claim naming a class the scenario lacks, a pod naming a claim or template it lacks: the pod
    waits, and the scheduler says why, as in a cluster."""
    user = pod("p").replace("spec:\n", "spec:\n  resourceClaims:\n  - {name: a, resourceClaimName: nowhere}\n"
                            "  - {name: b, resourceClaimTemplateName: nothing}\n", 1)
    orphan = claim_spec("ResourceClaim", "orphan", "no-such-class")
    path = write(tmp_path, NODE.format(name="n1"), orphan, user)
    scenario = load_scenario([path])
    assert [entry.obj.metadata.name for entry in scenario.pending_pods] == ["p"]


def test_an_invalid_claim_is_refused_naming_document_and_field(tmp_path: Path) -> None:
    bad = claim_spec("ResourceClaim", "bad", "gpu.example.com").replace(
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, allocationMode: Some}")
    path = write(tmp_path, NODE.format(name="n1"), bad)
    with pytest.raises(ScenarioError) as refused:
        load_scenario([path])
    assert refused.value.problems == [
        f"{path}: document 2 (ResourceClaim bad): spec.devices.requests[0].exactly.allocationMode: "
        'Unsupported value: "Some": supported values: "All", "ExactCount"']


WORKLOAD = """\
apiVersion: scheduling.k8s.io/v1alpha3
kind: Workload
metadata: {name: training}
spec:
  podGroupTemplates:
  - {name: workers, schedulingPolicy: {gang: {minCount: 2}}}
"""


def workload_group(name: str, template: str, parent: str = "") -> str:
    """A PodGroup made from a template of the Workload "training"."""
    text = gang(name, 2) + f"  workloadRef: {{workloadName: training, templateName: {template}}}\n"
    return text + (f"  parentCompositePodGroupName: {parent}\n" if parent else "")


def test_workloads_and_composite_groups_are_created_before_their_pod_groups(tmp_path: Path) -> None:
    tree = ("apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: training}\nspec:\n"
            "  compositePodGroupTemplates:\n  - name: job\n    schedulingPolicy: {basic: {}}\n"
            "    compositePodGroupTemplates:\n    - name: replica\n      schedulingPolicy: {basic: {}}\n"
            "      podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 2}}}]\n")
    composite = ("apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
                 "metadata: {{name: {name}}}\nspec:\n"
                 "  workloadRef: {{workloadName: training, templateName: {template}}}\n"
                 "  schedulingPolicy: {{basic: {{}}}}\n{parent}")
    path = write(
        tmp_path,
        pod("member", schedulingGroup="{podGroupName: workers-0}"),
        workload_group("workers-0", "workers", parent="replica-0"),
        composite.format(name="replica-0", template="replica", parent="  parentCompositePodGroupName: job\n"),
        composite.format(name="job", template="job", parent=""),
        tree,
    )
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [
        ("Workload", "training"),
        ("CompositePodGroup", "job"),
        ("CompositePodGroup", "replica-0"),
        ("PodGroup", "workers-0"),
        ("Pod", "member"),
    ]


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ((workload_group("g", "workers"),),
         'document 2 (PodGroup g): spec.workloadRef: PodGroup rejected: Workload "training" not found'),
        ((WORKLOAD, workload_group("g", "drivers")),
         'document 3 (PodGroup g): spec.workloadRef: PodGroup rejected: PodGroupTemplate "drivers" not found '
         'in Workload "training"'),
    ],
    ids=["no-workload", "no-template"],
)
def test_a_group_naming_a_template_the_scenario_lacks_is_refused(
    tmp_path: Path, documents: tuple[str, ...], message: str
) -> None:
    path = write(tmp_path, NODE.format(name="n1"), *documents)
    with pytest.raises(ScenarioError) as refused:
        load_scenario([path])
    assert refused.value.problems == [f"{path}: {message}"]


STORAGE_CLASS = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
                 "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n")
LOCAL_PV = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk-1}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]
"""
CLAIM = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
         "spec: {accessModes: [ReadWriteOnce], storageClassName: local,\n"
         "       resources: {requests: {storage: 5Gi}}}\n")


def test_storage_objects_are_created_after_nodes_and_before_pods_classes_first(tmp_path: Path) -> None:
    volumes = "  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n"
    user = pod("db").replace("spec:\n", "spec:\n" + volumes, 1)
    path = write(
        tmp_path,
        user,
        CLAIM,
        LOCAL_PV,
        "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: n1-local}\n"
        "storageClassName: local\ncapacity: 100Gi\n",
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
        "spec: {drivers: [{name: csi.example.com, nodeID: n1}]}\n",
        "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: csi.example.com}\nspec: {}\n",
        NODE.format(name="n1"),
        STORAGE_CLASS,
    )
    scenario = load_scenario([path])
    order = [(entry.kind.name, entry.obj.metadata.name) for entry in scenario.creation_order()]
    assert order == [
        ("Node", "n1"), ("StorageClass", "local"), ("CSIDriver", "csi.example.com"), ("CSINode", "n1"),
        ("CSIStorageCapacity", "n1-local"), ("PersistentVolume", "disk-1"),
        ("PersistentVolumeClaim", "data"), ("Pod", "db"),
    ]
    claim = next(entry.obj for entry in scenario.storage if entry.kind.name == "PersistentVolumeClaim")
    assert claim.metadata.namespace == "default"
    # Validated with the API's defaults (a CSIDriver's flags), created as written.
    driver = next(entry.obj for entry in scenario.storage if entry.kind.name == "CSIDriver")
    assert not driver.spec.HasField("attach_required")


def test_an_invalid_volume_is_refused_naming_document_and_field(tmp_path: Path) -> None:
    unpinned = LOCAL_PV[:LOCAL_PV.index("  nodeAffinity:")]
    path = write(tmp_path, NODE.format(name="n1"), unpinned)
    with pytest.raises(ScenarioError) as raised:
        load_scenario([path])
    assert raised.value.problems == [
        f"{path}: document 2 (PersistentVolume disk-1): spec.nodeAffinity: Required value: Local volume "
        "requires node affinity"
    ]
