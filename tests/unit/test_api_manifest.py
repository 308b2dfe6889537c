import io
import json
import textwrap
from pathlib import Path

import pytest
import yaml

from cluster.api import kinds, objects_pb2
from cluster.api.manifest import ManifestError, load_paths, load_text, parse_document
from cluster.api.unmodelled import NOT_MODELLED as NOT_MODELLED_FIELDS

#: How the YAML parser words a mis-indented key: libyaml's words (kubectl prints the same) when PyYAML
#: has it, the pure-Python parser's otherwise.
BLOCK_END_PROBLEM = "did not find expected key" if yaml.__with_libyaml__ else "expected <block end>"

# A pod as a Deployment's template would make it, with many fields podsched does not model.
REAL_POD = textwrap.dedent("""\
    # web frontend
    apiVersion: v1
    kind: Pod
    metadata:
      name: web-7d4b9c6f5-x2k8p
      namespace: shop
      generateName: web-7d4b9c6f5-
      labels:
        app: web
        pod-template-hash: 7d4b9c6f5
        version: "1"
      annotations:
        prometheus.io/scrape: "true"
      ownerReferences:
      - apiVersion: apps/v1
        kind: ReplicaSet
        name: web-7d4b9c6f5
        uid: 4f1c2d3e-aaaa-bbbb-cccc-123456789abc
        controller: true
        blockOwnerDeletion: true
      finalizers: [example.com/cleanup]
      creationTimestamp: 2024-05-01T12:00:00Z
    spec:
      priorityClassName: high
      terminationGracePeriodSeconds: 30
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
      - key: node.kubernetes.io/not-ready
        operator: Exists
        effect: NoExecute
        tolerationSeconds: 300
      securityContext:
        runAsNonRoot: true
        fsGroup: 2000
      volumes:
      - name: config
        configMap:
          name: web-config
      containers:
      - name: web
        image: registry.example.com/web:1.4.2
        imagePullPolicy: IfNotPresent
        command: ["/bin/web"]
        args: ["--port=8080", "--verbose"]
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        env:
        - name: MODE
          value: production
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        resources:
          requests:
            cpu: 250m
            memory: 64Mi
          limits:
            cpu: "1"
            memory: 128Mi
        livenessProbe:
          httpGet:
            path: /healthz
            port: http
          initialDelaySeconds: 10
        readinessProbe:
          tcpSocket:
            port: 8080
        volumeMounts:
        - name: config
          mountPath: /etc/web
          readOnly: true
        securityContext:
          allowPrivilegeEscalation: false
      - name: sidecar
        image: busybox:1.36
        args: [sleep, infinity]
        startupProbe:
          exec:
            command: [true]
    status:
      phase: Pending
""")

REAL_POD_UNKNOWN = [
    f"{path}: a Kubernetes field podsched does not model (ignored)"
    for path in (
        "metadata.finalizers",
        "spec.securityContext",
        "spec.containers[0].env[1].valueFrom",
        "spec.containers[0].livenessProbe",
        "spec.containers[0].readinessProbe",
        "spec.containers[0].securityContext",
        "spec.containers[1].startupProbe",
    )
]


def test_real_pod_loads_with_a_warning_per_unknown_field() -> None:
    (manifest,) = load_text(REAL_POD, source="web.yaml")
    assert manifest.kind is kinds.POD
    assert (manifest.source, manifest.index) == ("web.yaml", 1)
    assert sorted(manifest.warnings) == sorted(REAL_POD_UNKNOWN)
    pod = manifest.obj
    assert isinstance(pod, objects_pb2.Pod)
    assert pod.metadata.name == "web-7d4b9c6f5-x2k8p"
    assert pod.metadata.namespace == "shop"
    assert dict(pod.metadata.labels) == {"app": "web", "pod-template-hash": "7d4b9c6f5", "version": "1"}
    assert pod.metadata.creation_timestamp.seconds == 1714564800
    assert pod.spec.termination_grace_period_seconds == 30
    assert pod.spec.tolerations[0].toleration_seconds == 300
    web, sidecar = pod.spec.containers
    assert web.image == "registry.example.com/web:1.4.2"
    assert list(web.command) == ["/bin/web"]
    assert [(e.name, e.value) for e in web.env] == [("MODE", "production"), ("POD_NAME", "")]
    assert web.ports[0].container_port == 8080
    assert dict(web.resources.requests) == {"cpu": "250m", "memory": "64Mi"}
    assert dict(web.resources.limits) == {"cpu": "1", "memory": "128Mi"}
    assert list(sidecar.args) == ["sleep", "infinity"]
    assert pod.spec.volumes[0].name == "config"
    assert dict(pod.spec.volumes[0].config_map) == {"name": "web-config"}
    assert (web.volume_mounts[0].mount_path, web.volume_mounts[0].read_only) == ("/etc/web", True)
    assert pod.status.phase == "Pending"


def test_strict_turns_each_unknown_field_into_an_error() -> None:
    with pytest.raises(ManifestError) as raised:
        load_text(REAL_POD, source="web.yaml", strict=True)
    assert len(raised.value.problems) == len(REAL_POD_UNKNOWN)
    for problem in raised.value.problems:
        assert problem.startswith("web.yaml: document 1 (Pod web-7d4b9c6f5-x2k8p): ")
        assert problem.endswith(": a Kubernetes field podsched does not model, so strict validation rejects "
                                "it")
    assert ("web.yaml: document 1 (Pod web-7d4b9c6f5-x2k8p): spec.securityContext: a Kubernetes field "
            "podsched does not model, so strict validation rejects it") in raised.value.problems


MULTI = textwrap.dedent("""\
    # cluster setup
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata:
      name: high
    value: 100000
    globalDefault: false
    description: "for user-facing pods"
    preemptionPolicy: PreemptLowerPriority
    ---
    ---
    apiVersion: v1
    kind: Node
    metadata:
      name: node-1
      labels: {topology.kubernetes.io/zone: a}
    spec:
      taints:
      - {key: gpu, value: "true", effect: NoSchedule}
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}
      allocatable: {cpu: 7800m, memory: 30Gi, pods: "110"}
    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: web
      namespace: shop
    spec:
      minAvailable: 2
      selector:
        matchLabels: {app: web}
        matchExpressions:
        - {key: tier, operator: In, values: [frontend]}
    ---
    apiVersion: coordination.k8s.io/v1
    kind: Lease
    metadata: {name: podsched-scheduler, namespace: kube-system}
    spec:
      holderIdentity: replica-1
      leaseDurationSeconds: 15
      renewTime: "2024-05-01T12:00:00.123456Z"
      leaseTransitions: 3
    ---
    apiVersion: v1
    kind: Event
    metadata: {name: web.17a, namespace: shop}
    involvedObject: {kind: Pod, name: web, namespace: shop}
    reason: Scheduled
    message: Successfully assigned shop/web to node-1
    type: Normal
    count: 1
    firstTimestamp: 2024-05-01T12:00:00Z
    ---
""")


def test_multi_document_file_skips_empty_documents() -> None:
    manifests = load_text(MULTI, source="cluster.yaml")
    assert [(m.index, m.kind.name) for m in manifests] == [
        (1, "PriorityClass"), (2, "Node"), (3, "PodDisruptionBudget"), (4, "Lease"), (5, "Event"),
    ]
    assert all(m.warnings == [] for m in manifests)
    priority_class, node, pdb, lease, event = (m.obj for m in manifests)
    assert priority_class.value == 100000
    assert priority_class.preemption_policy == "PreemptLowerPriority"
    assert node.spec.taints[0].value == "true"
    assert node.status.allocatable["cpu"] == "7800m"
    assert pdb.spec.min_available.number_value == 2
    assert pdb.spec.selector.match_expressions[0].values == ["frontend"]
    assert lease.spec.renew_time.nanos == 123456000
    assert lease.spec.lease_transitions == 3
    assert event.involved_object.name == "web"
    assert event.first_timestamp.seconds == 1714564800


LIST = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Node
      metadata: {name: a}
    - apiVersion: v1
      kind: Node
      metadata: {name: b}
      spec: {unschedulable: true, configSource: {}}
""")


def test_kind_list_expands_its_items() -> None:
    manifests = load_text(LIST, source="nodes.yaml")
    assert [m.obj.metadata.name for m in manifests] == ["a", "b"]
    assert [m.index for m in manifests] == [1, 1]
    assert manifests[1].obj.spec.unschedulable
    assert manifests[1].warnings == [f"spec.configSource: {NOT_MODELLED}"]


def test_typed_list_items_take_the_list_kind() -> None:
    text = "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: c}]}\n"
    (manifest,) = load_text(text, source="pods.yaml")
    assert manifest.kind is kinds.POD
    assert manifest.obj.metadata.name == "a"


def test_json_manifest() -> None:
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "hostNetwork": True}}
    (manifest,) = load_text(json.dumps(data, indent=2), source="pod.json")
    assert manifest.obj.spec.containers[0].image == "nginx"
    assert manifest.warnings == ["spec.hostNetwork: a Kubernetes field podsched does not model (ignored)"]


def test_yaml_flow_mapping_that_is_not_json() -> None:
    (manifest,) = load_text("{apiVersion: v1, kind: Node, metadata: {name: n}}", source="n.yaml")
    assert manifest.obj.metadata.name == "n"


def test_duplicate_fields_warn_and_strict_rejects() -> None:
    text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  name: b\n"
    (manifest,) = load_text(text, source="n.yaml")
    assert manifest.obj.metadata.name == "b"
    assert manifest.warnings == ['duplicate field "metadata.name"']
    expected = r'n\.yaml: document 1 \(Node b\): duplicate field "metadata\.name"'
    with pytest.raises(ManifestError, match=expected):
        load_text(text, source="n.yaml", strict=True)
    json_text = '{"apiVersion": "v1", "kind": "Node", "kind": "Node", "metadata": {"name": "a"}}'
    assert load_text(json_text, source="n.json")[0].warnings == ['duplicate field "kind"']


def test_snake_case_names_are_unknown_fields() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  node_name: n1\n"
    (manifest,) = load_text(text, source="p.yaml")
    assert manifest.obj.spec.node_name == ""
    assert manifest.warnings == ['spec.node_name: unknown field (did you mean "nodeName"?)']


def test_null_means_unset() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: null}}\nspec: null\n"
    (manifest,) = load_text(text, source="p.yaml")
    assert not manifest.obj.HasField("spec")
    assert dict(manifest.obj.metadata.labels) == {"a": ""}


def test_integer_map_keys_become_strings() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {1: one}}\n"
    assert dict(load_text(text, source="p.yaml")[0].obj.metadata.annotations) == {"1": "one"}


# (id, text, the full message expected among the problems)
DOC = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
ERRORS = [
    ("int-label", DOC + "  labels:\n    version: 1\n",
     'p.yaml: document 1 (Pod p): metadata.labels[version]: Invalid value: 1: expected a string, got integer '
     '(quote it in YAML: "1", "true")'),
    ("bool-node-selector", DOC + "spec:\n  nodeSelector:\n    gpu: true\n",
     "p.yaml: document 1 (Pod p): spec.nodeSelector[gpu]: Invalid value: true: expected a string, "
     'got boolean (quote it in YAML: "1", "true")'),
    ("yes-is-boolean", DOC + "spec:\n  nodeSelector:\n    gpu: yes\n",
     "p.yaml: document 1 (Pod p): spec.nodeSelector[gpu]: Invalid value: true: expected a string, "
     'got boolean (quote it in YAML: "1", "true")'),
    ("float-request", DOC + "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 0.5}}\n",
     "p.yaml: document 1 (Pod p): spec.containers[0].resources.requests[cpu]: Invalid value: 0.5: "
     'expected a string, got number (quote it in YAML: "1", "true")'),
    ("string-for-int", DOC + "spec:\n  terminationGracePeriodSeconds: thirty\n",
     'p.yaml: document 1 (Pod p): spec.terminationGracePeriodSeconds: Invalid value: "thirty": '
     "expected an integer, got string"),
    ("float-for-int", DOC + "spec:\n  priority: 1.5\n",
     "p.yaml: document 1 (Pod p): spec.priority: Invalid value: 1.5: expected an integer, got number"),
    ("int32-overflow", DOC + "spec:\n  priority: 4294967296\n",
     "p.yaml: document 1 (Pod p): spec.priority: Invalid value: 4294967296: out of range "
     "[-2147483648, 2147483647]"),
    ("string-for-bool", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {unschedulable: maybe}\n",
     'p.yaml: document 1 (Node n): spec.unschedulable: Invalid value: "maybe": expected a boolean, '
     "got string"),
    ("list-for-object", DOC + "spec: [a]\n",
     "p.yaml: document 1 (Pod p): spec: Invalid value: array: expected an object, got array"),
    ("object-for-list", DOC + "spec:\n  containers: {name: c}\n",
     "p.yaml: document 1 (Pod p): spec.containers: Invalid value: object: expected an array, got object"),
    ("bad-list-item", DOC + "spec:\n  containers: [web]\n",
     'p.yaml: document 1 (Pod p): spec.containers[0]: Invalid value: "web": expected an object, got string'),
    ("bad-timestamp", DOC + "  creationTimestamp: yesterday\n",
     'p.yaml: document 1 (Pod p): metadata.creationTimestamp: Invalid value: "yesterday": expected an '
     'RFC 3339 time like "2024-05-01T12:00:00Z"'),
    ("date-only-timestamp", DOC + "  creationTimestamp: 2024-05-01\n",
     'p.yaml: document 1 (Pod p): metadata.creationTimestamp: Invalid value: "2024-05-01": expected an '
     'RFC 3339 time like "2024-05-01T12:00:00Z"'),
    ("int-or-string-bool", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
     "spec: {maxUnavailable: true}\n",
     "p.yaml: document 1 (PodDisruptionBudget b): spec.maxUnavailable: Invalid value: true: expected an "
     "integer or a string, got boolean"),
    ("missing-kind", "apiVersion: v1\nmetadata: {name: x}\n",
     'p.yaml: document 1 (x): kind: Required value: every manifest names its kind (e.g. "kind: Pod")'),
    ("missing-api-version", "kind: Pod\nmetadata: {name: x}\n",
     'p.yaml: document 1 (Pod x): apiVersion: Required value: every manifest names its apiVersion '
     '(e.g. "apiVersion: v1")'),
    ("kind-not-string", "apiVersion: v1\nkind: 7\n",
     "p.yaml: document 1: kind: Invalid value: 7: expected a string, got integer"),
    ("unserved-version", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n",
     'p.yaml: document 1 (PodDisruptionBudget b): no matches for kind "PodDisruptionBudget" in version '
     '"policy/v1beta1": podsched serves PodDisruptionBudget in policy/v1'),
    ("unserved-kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
     'p.yaml: document 1 (Deployment d): no matches for kind "Deployment" in version "apps/v1": podsched '
     "serves Pod (v1), Node (v1), PriorityClass (scheduling.k8s.io/v1), PodDisruptionBudget (policy/v1), "
     "ResourceQuota (v1), PodGroup (scheduling.k8s.io/v1alpha3, scheduling.x-k8s.io/v1alpha1, "
     "scheduling.k8s.io/v1alpha2), Lease (coordination.k8s.io/v1), Event (v1)"),
    ("lowercase-kind", "apiVersion: v1\nkind: pod\nmetadata: {name: x}\n",
     'p.yaml: document 1 (pod x): no matches for kind "pod" in version "v1": podsched serves'),
    ("not-a-mapping", "- a\n- b\n",
     "p.yaml: document 1: expected an object (a mapping), got array"),
    ("scalar-document", "just text\n",
     "p.yaml: document 1: expected an object (a mapping), got string"),
    ("yaml-syntax", DOC + "spec:\n  containers:\n  - name: c\n   image: x\n",
     f"p.yaml: document 1: line 8, column 4: YAML syntax error: {BLOCK_END_PROBLEM}"),
    ("list-items-not-a-list", "apiVersion: v1\nkind: List\nitems: {a: b}\n",
     "p.yaml: document 1 (List): items: Invalid value: object: expected an array of objects"),
    ("bad-list-item-kind", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, "
     "metadata: {name: a}}\n- {apiVersion: v1, metadata: {name: b}}\n",
     "p.yaml: document 1, items[1] (b): kind: Required value"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_bad_input_names_file_document_and_field(text: str, expected: str) -> None:
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="p.yaml")
    assert any(problem.startswith(expected) for problem in raised.value.problems), raised.value.problems


def test_errors_in_later_documents_fail_the_whole_load() -> None:
    text = DOC + "---\n" + "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {a: 1}}\n"
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="two.yaml")
    assert raised.value.problems == [
        "two.yaml: document 2 (Node n): metadata.labels[a]: Invalid value: 1: expected a string, "
        'got integer (quote it in YAML: "1", "true")'
    ]


def test_every_problem_is_reported() -> None:
    text = DOC + "  labels: {a: 1, b: 2}\n---\nkind: Pod\n"
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="x.yaml")
    assert len(raised.value.problems) == 3
    assert str(raised.value) == "\n".join(raised.value.problems)


def test_alias_bomb_is_refused() -> None:
    # A few kilobytes of YAML whose aliases expand to a million values inside fields podsched knows.
    values = ", ".join(["a"] * 100)
    expressions = ", ".join(["{key: k, operator: In, values: *v}"] * 100)
    terms = ", ".join(["{labelSelector: {matchExpressions: *e}, topologyKey: z}"] * 100)
    text = (
        f"anchors:\n  v: &v [{values}]\n  e: &e [{expressions}]\n  t: &t [{terms}]\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: *t}}}\n"
    )
    assert len(text) < 10_000
    with pytest.raises(ManifestError, match="document too large: more than 200000 values"):
        load_text(text, source="bomb.yaml")


def test_parse_document_directly() -> None:
    data = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "extra": 1}
    manifest = parse_document(data, source="api", index=3, strict=False)
    assert manifest.obj.metadata.name == "n"
    assert (manifest.index, manifest.warnings) == (3, ["extra: unknown field"])
    with pytest.raises(ManifestError, match=r"^api: document 3 \(Node n\): extra: unknown field$"):
        parse_document(data, source="api", index=3, strict=True)


def test_load_paths_reads_files_directories_and_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: b}\n")
    (tmp_path / "a.json").write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}')
    (tmp_path / "c.yml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: c}\n")
    (tmp_path / "notes.txt").write_text("not a manifest")
    single = tmp_path / "single.yaml"
    single.write_text(MULTI)
    monkeypatch.setattr("sys.stdin", io.StringIO("apiVersion: v1\nkind: Node\nmetadata: {name: s}\n"))
    manifests = load_paths([str(tmp_path), "-"])
    assert [(Path(m.source).name, m.obj.metadata.name) for m in manifests if m.kind is kinds.NODE] == [
        ("a.json", "a"), ("b.yaml", "b"), ("c.yml", "c"), ("single.yaml", "node-1"), ("STDIN", "s"),
    ]


def test_load_paths_is_all_or_nothing(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: ok}\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: [x]}\n")
    missing = tmp_path / "missing.yaml"
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(ManifestError) as raised:
        load_paths([str(good), str(bad), str(missing), str(empty_dir)])
    assert raised.value.problems == [
        f"{bad}: document 1 (Node): metadata.name: Invalid value: array: expected a string, got array",
        f'{missing}: the path "{missing}" does not exist',
        f"{empty_dir}: no manifest files in the directory (*.yaml, *.yml, *.json)",
    ]


def test_load_paths_rejects_binary_files(tmp_path: Path) -> None:
    binary = tmp_path / "blob.yaml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    with pytest.raises(ManifestError, match="not UTF-8 text"):
        load_paths([str(binary)])


def test_syntax_error_after_bad_documents_reports_both() -> None:
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {a: 1}}\n---\nkind: [\n"
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="s.yaml")
    assert len(raised.value.problems) == 2
    assert raised.value.problems[0].startswith("s.yaml: document 1 (Node n): metadata.labels[a]")
    assert raised.value.problems[1].startswith("s.yaml: document 2: line 6, column 1: YAML syntax error")


def test_comment_only_text_has_no_manifests() -> None:
    assert load_text("# nothing here\n---\n---\n", source="empty.yaml") == []


def test_an_endless_source_is_refused_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cluster.api.manifest.MAX_MANIFEST_CHARS", 1000)
    with pytest.raises(ManifestError) as raised:
        load_paths(["/dev/zero"])
    assert raised.value.problems == ["/dev/zero: longer than 1000 characters (the limit): not a manifest"]
    monkeypatch.setattr("sys.stdin", io.StringIO("# padding\n" * 200))
    with pytest.raises(ManifestError, match="STDIN: longer than 1000 characters"):
        load_paths(["-"])


NOT_MODELLED = "a Kubernetes field podsched does not model (ignored)"


@pytest.mark.parametrize(("kind", "body", "warning"), [
    # Real fields podsched drops on purpose are named so, wherever they stand.
    ("Pod", "spec: {dnsPolicy: ClusterFirst}", f"spec.dnsPolicy: {NOT_MODELLED}"),
    ("Pod", "spec: {ephemeralContainers: []}", f"spec.ephemeralContainers: {NOT_MODELLED}"),
    ("Pod", "spec: {securityContext: {}}", f"spec.securityContext: {NOT_MODELLED}"),
    ("Pod", "metadata: {name: x, selfLink: /api/v1/x}", f"metadata.selfLink: {NOT_MODELLED}"),
    ("Pod", "spec: {containers: [{name: c, livenessProbe: {}}]}",
     f"spec.containers[0].livenessProbe: {NOT_MODELLED}"),
    ("Pod", "spec: {containers: [{name: c, env: [{name: e, valueFrom: {}}]}]}",
     f"spec.containers[0].env[0].valueFrom: {NOT_MODELLED}"),
    ("Pod", "status: {podIPs: [{ip: 10.0.0.1}]}", f"status.podIPs: {NOT_MODELLED}"),
    ("Node", "status: {nodeInfo: {}}", f"status.nodeInfo: {NOT_MODELLED}"),
    ("Node", "spec: {podCIDRs: [10.0.0.0/24]}", f"spec.podCIDRs: {NOT_MODELLED}"),
    # Anything else is a mistake: the nearest field the message has is suggested, in its JSON name.
    ("Pod", "spec: {nodeSelecter: {disk: ssd}}",
     'spec.nodeSelecter: unknown field (did you mean "nodeSelector"?)'),
    ("Pod", "spec: {node_name: n1}", 'spec.node_name: unknown field (did you mean "nodeName"?)'),
    ("Pod", "spec: {tolerations: [{key: k, efect: NoSchedule}]}",
     'spec.tolerations[0].efect: unknown field (did you mean "effect"?)'),
    ("Pod", "spec: {containers: [{name: c, imagePullPolcy: Always}]}",
     'spec.containers[0].imagePullPolcy: unknown field (did you mean "imagePullPolicy"?)'),
    ("Pod", "spec: {containers: [{name: c, volumeMount: []}]}",
     'spec.containers[0].volumeMount: unknown field (did you mean "volumeMounts"?)'),
    ("Pod", "metadata: {name: x, label: {a: b}}", 'metadata.label: unknown field (did you mean "labels"?)'),
    ("Pod", "spec: {colour: red}", "spec.colour: unknown field"),
    ("Node", "extra: 1", "extra: unknown field"),
])
def test_unknown_field_wordings(kind: str, body: str, warning: str) -> None:
    text = f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: x}}\n{body}\n"
    if body.startswith("metadata:"):
        text = f"apiVersion: v1\nkind: {kind}\n{body}\n"
    (manifest,) = load_text(text, source="x.yaml")
    assert manifest.warnings == [warning]


@pytest.mark.parametrize(("body", "problem"), [
    ("spec: {dnsPolicy: ClusterFirst}",
     "spec.dnsPolicy: a Kubernetes field podsched does not model, so strict validation rejects it"),
    ("spec: {nodeSelecter: {disk: ssd}}", 'spec.nodeSelecter: unknown field (did you mean "nodeSelector"?)'),
])
def test_strict_rejects_both_kinds_of_unknown_field(body: str, problem: str) -> None:
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\n{body}\n"
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="x.yaml", strict=True)
    assert raised.value.problems == [f"x.yaml: document 1 (Pod x): {problem}"]


def test_not_modelled_fields_are_of_real_messages_and_none_is_modelled() -> None:
    """The table of real fields podsched drops names only messages it has, and none of their fields."""
    for name, fields in NOT_MODELLED_FIELDS.items():
        descriptor = objects_pb2.DESCRIPTOR.message_types_by_name[name]
        assert not fields & {field.json_name for field in descriptor.fields}, name
