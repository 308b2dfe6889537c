from collections.abc import Callable

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.validation import (
    ensure_valid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    validate_object,
    validate_status,
    validate_status_update,
    validate_update,
)
from tests import builders

# (check, value, a fragment of the expected problem, or None when valid)
NAME_CHECKS = [
    (is_dns1123_label, "web-1", None),
    (is_dns1123_label, "a" * 63, None),
    (is_dns1123_label, "a" * 64, "must be no more than 63 characters"),
    (is_dns1123_label, "Web", "a lowercase RFC 1123 label must consist of"),
    (is_dns1123_label, "web.a", "must not contain dots"),
    (is_dns1123_label, "-web", "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'"),
    (is_dns1123_label, "", "a lowercase RFC 1123 label"),
    (is_dns1123_subdomain, "web.example.com", None),
    (is_dns1123_subdomain, "a" * 253, None),
    (is_dns1123_subdomain, "a" * 254, "must be no more than 253 characters"),
    (is_dns1123_subdomain, "Web", "(e.g. 'example.com', regex used for validation is"),
    (is_dns1123_subdomain, "web_1", "a lowercase RFC 1123 subdomain"),
    (is_qualified_name, "app", None),
    (is_qualified_name, "App_1.x", None),
    (is_qualified_name, "example.com/role", None),
    (is_qualified_name, "kubernetes.io/hostname", None),
    (is_qualified_name, "a/b/c", "with an optional DNS subdomain prefix"),
    (is_qualified_name, "/role", "prefix part must be non-empty"),
    (is_qualified_name, "Example.com/role", "prefix part a lowercase RFC 1123 subdomain"),
    (is_qualified_name, "example.com/", "name part must be non-empty"),
    (is_qualified_name, "a" * 64, "name part must be no more than 63 characters"),
    (is_qualified_name, "-app", "name part must consist of alphanumeric characters"),
    (is_valid_label_value, "", None),
    (is_valid_label_value, "v1.2_x-y", None),
    (is_valid_label_value, "a" * 64, "must be no more than 63 characters"),
    (is_valid_label_value, "a b", "a valid label must be an empty string or consist of"),
    (is_valid_label_value, "x/y", "a valid label must be"),
]


@pytest.mark.parametrize(
    ("check", "value", "problem"), NAME_CHECKS, ids=[f"{c.__name__}-{v[:12]!r}" for c, v, _ in NAME_CHECKS]
)
def test_name_checks(check, value: str, problem: str | None) -> None:
    problems = check(value)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


# ------------------------------------------------------------------------------------ object rules


def pod(**spec: object) -> objects_pb2.Pod:
    containers = [container(image="nginx:1.27")]
    return builders.pod("web", spec={"containers": containers, **spec}, labels={"app": "web"})


def container(**fields: object) -> dict[str, object]:
    return {"name": "app", "image": "nginx", **fields}


def node(**spec: object) -> objects_pb2.Node:
    return json_format.ParseDict({"metadata": {"name": "n1"}, "spec": spec}, objects_pb2.Node())


def with_meta(obj: Message, **meta: object) -> Message:
    json_format.ParseDict({"metadata": meta}, obj)
    return obj


def pdb(**spec: object) -> objects_pb2.PodDisruptionBudget:
    return builders.pdb("b", spec=spec)


def node_affinity_term(*expressions: dict, fields: tuple[dict, ...] = ()) -> dict:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(expressions), "matchFields": list(fields)}]
            }
        }
    }


REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"

VALID = [
    ("managed-fields", with_meta(pod(), managedFields=[
        {"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}])),
    ("pod", pod()),
    (
        "pod-generate-name",
        with_meta(pod(), name="", generateName="web-"),
    ),
    (
        "pod-everything",
        pod(
            nodeName="node-1.example",
            schedulerName="my-scheduler",
            priorityClassName="high",
            preemptionPolicy="Never",
            terminationGracePeriodSeconds=0,
            nodeSelector={"disk": "ssd"},
            overhead={"cpu": "250m"},
            restartPolicy="Always",
            initContainers=[container(name="init")],
            containers=[
                container(
                    resources={
                        "requests": {"cpu": "500m", "memory": "1Gi", "example.com/gpu": "1"},
                        "limits": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"},
                    },
                    ports=[
                        {"name": "http", "containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
                        {"containerPort": 8080, "hostPort": 8080, "protocol": "UDP"},
                    ],
                    env=[{"name": "MODE", "value": "x"}],
                )
            ],
            tolerations=[
                {"operator": "Exists"},
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                {"key": "k2", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
            ],
            affinity={
                **node_affinity_term(
                    {"key": "zone", "operator": "In", "values": ["a"]},
                    {"key": "cores", "operator": "Gt", "values": ["4"]},
                    {"key": "gpu", "operator": "DoesNotExist"},
                    fields=({"key": "metadata.name", "operator": "NotIn", "values": ["n2"]},),
                ),
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app": "web"}},
                            },
                        }
                    ]
                },
            },
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3}
            ],
        ),
    ),
    (
        "node",
        node(
            taints=[
                {"key": "gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "gpu", "effect": "NoExecute"},
            ]
        ),
    ),
    (
        "node-status",
        json_format.ParseDict(
            {
                "metadata": {"name": "n1"},
                "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            },
            objects_pb2.Node(),
        ),
    ),
    (
        "priorityclass",
        json_format.ParseDict(
            {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"},
            objects_pb2.PriorityClass(),
        ),
    ),
    ("pdb-int", pdb(minAvailable=2, selector={"matchLabels": {"app": "web"}})),
    ("pdb-percent", pdb(maxUnavailable="100%")),
    ("pdb-empty-selector", pdb(selector={})),
    (
        "lease",
        json_format.ParseDict(
            {
                "metadata": {"name": "l", "namespace": "kube-system"},
                "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0},
            },
            objects_pb2.Lease(),
        ),
    ),
    (
        "event",
        json_format.ParseDict(
            {
                "metadata": {"name": "web.17a", "namespace": "default"},
                "type": "Warning",
                "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
            },
            objects_pb2.Event(),
        ),
    ),
]


@pytest.mark.parametrize("obj", [o for _, o in VALID], ids=[i for i, _ in VALID])
def test_valid_objects(obj: Message) -> None:
    assert validate_object(obj) == []


SUBDOMAIN_WEB = (
    'metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case '
    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)

# (id, object, one expected field error — exact unless it ends with "...")
INVALID: list[tuple[str, Message, str]] = [
    # metadata
    ("name-uppercase", with_meta(pod(), name="Web"), SUBDOMAIN_WEB),
    (
        "name-missing",
        with_meta(pod(), name=""),
        "metadata.name: Required value: name or generateName is required",
    ),
    (
        "name-too-long",
        with_meta(pod(), name="a" * 254),
        'metadata.name: Invalid value: "' + "a" * 254 + '": must be no more than 253 characters',
    ),
    (
        "generate-name-bad",
        with_meta(pod(), name="", generateName="Web-"),
        'metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain...',
    ),
    (
        "namespace-not-label",
        with_meta(pod(), namespace="a.b"),
        'metadata.namespace: Invalid value: "a.b": must not contain dots',
    ),
    (
        "namespace-on-node",
        with_meta(node(), namespace="default"),
        "metadata.namespace: Forbidden: not allowed on this type",
    ),
    (
        "label-key",
        with_meta(pod(), labels={"-app": "x"}),
        'metadata.labels: Invalid value: "-app": name part must consist of alphanumeric characters...',
    ),
    (
        "label-value",
        with_meta(pod(), labels={"app": "a b"}),
        'metadata.labels: Invalid value: "a b": a valid label must be an empty string...',
    ),
    (
        "label-value-too-long",
        with_meta(pod(), labels={"app": "a" * 64}),
        'metadata.labels: Invalid value: "' + "a" * 64 + '": must be no more than 63 characters',
    ),
    (
        "annotation-key",
        with_meta(pod(), annotations={"a/b/c": "x"}),
        'metadata.annotations: Invalid value: "a/b/c": a qualified name must consist of...',
    ),
    (
        "annotations-too-big",
        with_meta(pod(), annotations={"big": "x" * (256 * 1024)}),
        "metadata.annotations: Too long: must have at most 262144 bytes",
    ),
    (
        "managed-fields-operation",
        with_meta(pod(), managedFields=[{"manager": "m", "operation": "Patch", "apiVersion": "v1"}]),
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
    ),
    (
        "managed-fields-type",
        with_meta(pod(), managedFields=[{"manager": "m", "operation": "Apply", "fieldsType": "FieldsV2"}]),
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    ),
    (
        "managed-fields-manager-too-long",
        with_meta(pod(), managedFields=[{"manager": "m" * 129, "operation": "Update"}]),
        "metadata.managedFields[0].manager: Too long: must have at most 128 bytes",
    ),
    (
        "managed-fields-manager-unprintable",
        with_meta(pod(), managedFields=[{"manager": "a\tb", "operation": "Update"}]),
        'metadata.managedFields[0].manager[1]: Invalid value: "a\\tb": invalid character U+0009',
    ),
    # containers
    ("no-containers", pod(containers=[]), "spec.containers: Required value"),
    (
        "container-name-missing",
        pod(containers=[container(name="")]),
        "spec.containers[0].name: Required value",
    ),
    (
        "container-name-invalid",
        pod(containers=[container(name="App")]),
        'spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label must consist of...',
    ),
    (
        "container-name-duplicate",
        pod(containers=[container(), container(image="busybox")]),
        'spec.containers[1].name: Duplicate value: "app"',
    ),
    (
        "container-name-duplicates-init",
        pod(initContainers=[container()]),
        'spec.containers[0].name: Duplicate value: "app"',
    ),
    ("image-missing", pod(containers=[container(image="")]), "spec.containers[0].image: Required value"),
    (
        "image-whitespace",
        pod(containers=[container(image=" nginx")]),
        'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace',
    ),
    (
        "init-image-missing",
        pod(initContainers=[container(name="init", image="")]),
        "spec.initContainers[0].image: Required value",
    ),
    (
        "pull-policy",
        pod(containers=[container(imagePullPolicy="Sometimes")]),
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
        '"IfNotPresent", "Never"',
    ),
    (
        "env-name-missing",
        pod(containers=[container(env=[{"value": "x"}])]),
        "spec.containers[0].env[0].name: Required value",
    ),
    (
        "env-name-equals",
        pod(containers=[container(env=[{"name": "A=B"}])]),
        'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must '
        "consist only "
        "of printable ASCII characters other than '='",
    ),
    # resources
    (
        "request-negative",
        pod(containers=[container(resources={"requests": {"cpu": "-1"}})]),
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "limit-negative",
        pod(containers=[container(resources={"limits": {"memory": "-1Gi"}})]),
        'spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal '
        "to 0",
    ),
    (
        "request-not-quantity",
        pod(containers=[container(resources={"requests": {"cpu": "lots"}})]),
        'spec.containers[0].resources.requests[cpu]: Invalid value: "lots": quantities must match the '
        "regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "request-bad-suffix",
        pod(containers=[container(resources={"requests": {"memory": "1GB"}})]),
        'spec.containers[0].resources.requests[memory]: Invalid value: "1GB": unable to parse quantity\'s '
        "suffix...",
    ),
    (
        "request-above-limit",
        pod(containers=[container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]),
        'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu '
        "limit of 1",
    ),
    (
        "request-above-limit-units",
        pod(
            containers=[container(resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1500Mi"}})]
        ),
        'spec.containers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to '
        "memory "
        "limit of 1500Mi",
    ),
    (
        "extended-request-not-limit",
        pod(
            containers=[
                container(
                    resources={"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}}
                )
            ]
        ),
        'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "1": must be equal to '
        "example.com/gpu limit of 2",
    ),
    (
        "extended-without-limit",
        pod(containers=[container(resources={"requests": {"example.com/gpu": "1"}})]),
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
        "resources",
    ),
    (
        "extended-fraction",
        pod(
            containers=[
                container(
                    resources={"requests": {"example.com/gpu": "500m"}, "limits": {"example.com/gpu": "500m"}}
                )
            ]
        ),
        'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
    ),
    (
        "resource-not-for-containers",
        pod(containers=[container(resources={"requests": {"pods": "1"}})]),
        'spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
        "containers",
    ),
    (
        "resource-name-invalid",
        pod(containers=[container(resources={"limits": {"a b": "1"}})]),
        'spec.containers[0].resources.limits[a b]: Invalid value: "a b": name part must consist of...',
    ),
    (
        "overhead-negative",
        pod(overhead={"cpu": "-100m"}),
        'spec.overhead[cpu]: Invalid value: "-100m": must be greater than or equal to 0',
    ),
    # ports
    (
        "container-port-missing",
        pod(containers=[container(ports=[{"name": "http"}])]),
        "spec.containers[0].ports[0].containerPort: Required value",
    ),
    (
        "container-port-range",
        pod(containers=[container(ports=[{"containerPort": 70000}])]),
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, "
        "inclusive",
    ),
    (
        "host-port-range",
        pod(containers=[container(ports=[{"containerPort": 80, "hostPort": -1}])]),
        "spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
    ),
    (
        "host-port-conflict",
        pod(
            containers=[
                container(ports=[{"containerPort": 80, "hostPort": 8080}]),
                container(name="side", ports=[{"containerPort": 81, "hostPort": 8080}]),
            ]
        ),
        'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
    ),
    (
        "port-protocol",
        pod(containers=[container(ports=[{"containerPort": 80, "protocol": "HTTP"}])]),
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", '
        '"UDP"',
    ),
    (
        "port-name",
        pod(containers=[container(ports=[{"containerPort": 80, "name": "8080"}])]),
        'spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)',
    ),
    (
        "port-name-duplicate",
        pod(
            containers=[
                container(
                    ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 81, "name": "http"}]
                )
            ]
        ),
        'spec.containers[0].ports[1].name: Duplicate value: "http"',
    ),
    (
        "host-ip",
        pod(containers=[container(ports=[{"containerPort": 80, "hostIP": "localhost"}])]),
        'spec.containers[0].ports[0].hostIP: Invalid value: "localhost": must be a valid IP address',
    ),
    # tolerations
    (
        "toleration-operator",
        pod(tolerations=[{"key": "k", "operator": "In"}]),
        'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
    ),
    (
        "toleration-exists-with-value",
        pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
    ),
    (
        "toleration-empty-key-equal",
        pod(tolerations=[{"operator": "Equal", "value": "v"}]),
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
        "which "
        'means "match all values and all keys"',
    ),
    (
        "toleration-effect",
        pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoRun"}]),
        'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        "toleration-seconds-without-noexecute",
        pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
        "`tolerationSeconds` is set",
    ),
    (
        "toleration-key",
        pod(tolerations=[{"key": "a b", "operator": "Exists"}]),
        'spec.tolerations[0].key: Invalid value: "a b": name part must consist of...',
    ),
    (
        "toleration-value",
        pod(tolerations=[{"key": "k", "value": "a b"}]),
        'spec.tolerations[0].value: Invalid value: "a b": a valid label must be...',
    ),
    # node affinity
    (
        "node-affinity-no-terms",
        pod(
            affinity={
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
        "Required "
        "value: must have at least one node selector term",
    ),
    (
        "node-affinity-operator",
        pod(affinity=node_affinity_term({"key": "zone", "operator": "Near"})),
        f'{REQ}.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    ),
    (
        "node-affinity-in-without-values",
        pod(affinity=node_affinity_term({"key": "zone", "operator": "In"})),
        f"{REQ}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        f"'NotIn'",
    ),
    (
        "node-affinity-exists-with-values",
        pod(affinity=node_affinity_term({"key": "zone", "operator": "Exists", "values": ["a"]})),
        f"{REQ}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
        "'DoesNotExist'",
    ),
    (
        "node-affinity-gt-two-values",
        pod(affinity=node_affinity_term({"key": "cores", "operator": "Gt", "values": ["1", "2"]})),
        f"{REQ}.matchExpressions[0].values: Required value: must be specified single value when `operator` "
        f"is "
        "'Lt' or 'Gt'",
    ),
    (
        "node-affinity-lt-not-integer",
        pod(affinity=node_affinity_term({"key": "cores", "operator": "Lt", "values": ["many"]})),
        f'{REQ}.matchExpressions[0].values[0]: Invalid value: "many": must be an integer',
    ),
    (
        "node-affinity-key",
        pod(affinity=node_affinity_term({"key": "", "operator": "Exists"})),
        f'{REQ}.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
    ),
    (
        "match-fields-key",
        pod(
            affinity=node_affinity_term(
                fields=({"key": "metadata.labels", "operator": "In", "values": ["a"]},)
            )
        ),
        f'{REQ}.matchFields[0].key: Invalid value: "metadata.labels": not a valid field selector key',
    ),
    (
        "match-fields-operator",
        pod(affinity=node_affinity_term(fields=({"key": "metadata.name", "operator": "Exists"},))),
        f'{REQ}.matchFields[0].operator: Invalid value: "Exists": not a valid selector operator',
    ),
    (
        "match-fields-two-values",
        pod(
            affinity=node_affinity_term(
                fields=({"key": "metadata.name", "operator": "In", "values": ["a", "b"]},)
            )
        ),
        f"{REQ}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or "
        f"'NotIn' "
        "for node field selector",
    ),
    (
        "preferred-weight-zero",
        pod(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 0,
                            "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
                        }
                    ]
                }
            }
        ),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid "
        "value: 0: "
        "must be in the range 1-100",
    ),
    # pod (anti-)affinity
    (
        "pod-affinity-topology-key",
        pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "db"}}}
                    ]
                }
            }
        ),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required "
        "value: "
        "can not be empty",
    ),
    (
        "pod-anti-affinity-weight",
        pod(
            affinity={
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}
                    ]
                }
            }
        ),
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid "
        "value: "
        "101: must be in the range 1-100",
    ),
    (
        "pod-affinity-selector-operator",
        pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "zone",
                            "labelSelector": {
                                "matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]
                            },
                        }
                    ]
                }
            }
        ),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
        'matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator',
    ),
    (
        "pod-affinity-namespace",
        pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "zone", "namespaces": ["Prod"]}
                    ]
                }
            }
        ),
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]: Invalid "
        "value: "
        '"Prod": a lowercase RFC 1123 label...',
    ),
    # topology spread
    (
        "spread-max-skew",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        ),
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ),
    (
        "spread-topology-key",
        pod(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
        "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
    ),
    (
        "spread-when-unsatisfiable",
        pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]),
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"',
    ),
    (
        "spread-when-unsatisfiable-missing",
        pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone"}]),
        "spec.topologySpreadConstraints[0].whenUnsatisfiable: Required value",
    ),
    (
        "spread-min-domains-zero",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0}
            ]
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than 0",
    ),
    (
        "spread-min-domains-schedule-anyway",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}
            ]
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
        "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ),
    (
        "spread-duplicate",
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            ]
        ),
        'spec.topologySpreadConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"',
    ),
    (
        "spread-policy",
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeTaintsPolicy": "Maybe",
                }
            ]
        ),
        'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Maybe": supported values: '
        '"Honor", '
        '"Ignore"',
    ),
    # other pod fields
    (
        "preemption-policy",
        pod(preemptionPolicy="Sometimes"),
        'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", '
        '"PreemptLowerPriority"',
    ),
    (
        "grace-period-negative",
        pod(terminationGracePeriodSeconds=-1),
        "spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "node-name",
        pod(nodeName="Node_1"),
        'spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain...',
    ),
    (
        "scheduler-name",
        pod(schedulerName="My Scheduler"),
        'spec.schedulerName: Invalid value: "My Scheduler": a lowercase RFC 1123 subdomain...',
    ),
    (
        "priority-class-name",
        pod(priorityClassName="Gold"),
        'spec.priorityClassName: Invalid value: "Gold": a lowercase RFC 1123 subdomain...',
    ),
    (
        "node-selector",
        pod(nodeSelector={"disk": "fast ssd"}),
        'spec.nodeSelector: Invalid value: "fast ssd": a valid label must be...',
    ),
    (
        "restart-policy",
        pod(restartPolicy="Sometimes"),
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
        '"Never"',
    ),
    # Node
    ("taint-effect-missing", node(taints=[{"key": "gpu"}]), "spec.taints[0].effect: Required value"),
    (
        "taint-effect",
        node(taints=[{"key": "gpu", "effect": "NoRun"}]),
        'spec.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", '
        '"PreferNoSchedule", '
        '"NoExecute"',
    ),
    ("taint-key-missing", node(taints=[{"effect": "NoSchedule"}]), "spec.taints[0].key: Required value"),
    (
        "taint-key",
        node(taints=[{"key": "-gpu", "effect": "NoSchedule"}]),
        'spec.taints[0].key: Invalid value: "-gpu": name part must consist of...',
    ),
    (
        "taint-value",
        node(taints=[{"key": "gpu", "value": "a b", "effect": "NoSchedule"}]),
        'spec.taints[0].value: Invalid value: "a b": a valid label must be...',
    ),
    (
        "taint-duplicate",
        node(taints=[{"key": "gpu", "effect": "NoSchedule"}, {"key": "gpu", "effect": "NoSchedule"}]),
        'spec.taints[1]: Duplicate value: "gpu:NoSchedule": taints must be unique by key and effect pair',
    ),
    (
        "capacity-negative",
        json_format.ParseDict(
            {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-4"}}}, objects_pb2.Node()
        ),
        'status.capacity[cpu]: Invalid value: "-4": must be greater than or equal to 0',
    ),
    (
        "allocatable-bad",
        json_format.ParseDict(
            {"metadata": {"name": "n"}, "status": {"allocatable": {"memory": "8 Gi"}}}, objects_pb2.Node()
        ),
        'status.allocatable[memory]: Invalid value: "8 Gi": quantities must match the regular expression...',
    ),
    (
        "capacity-pods-fraction",
        json_format.ParseDict(
            {"metadata": {"name": "n"}, "status": {"capacity": {"pods": "1.5"}}}, objects_pb2.Node()
        ),
        'status.capacity[pods]: Invalid value: "1.5": must be an integer',
    ),
    (
        "image-size-negative",
        builders.node("n", images=[(["app:1"], -1)]),
        "status.images[0].sizeBytes: Invalid value: -1: must be greater than or equal to 0",
    ),
    ("image-without-names", builders.node("n", images=[([], 10)]), "status.images[0].names: Required value"),
    (
        "image-empty-name",
        builders.node("n", images=[(["app:1", ""], 10)]),
        "status.images[0].names[1]: Required value",
    ),
    # PriorityClass
    (
        "priorityclass-policy",
        json_format.ParseDict(
            {"metadata": {"name": "p"}, "value": 1, "preemptionPolicy": "Always"}, objects_pb2.PriorityClass()
        ),
        'preemptionPolicy: Unsupported value: "Always": supported values: "Never", "PreemptLowerPriority"',
    ),
    # PodDisruptionBudget
    (
        "pdb-both",
        pdb(minAvailable=1, maxUnavailable=1),
        'spec: Invalid value: "minAvailable and maxUnavailable": minAvailable and maxUnavailable cannot be '
        "both set",
    ),
    (
        "pdb-negative",
        pdb(minAvailable=-1),
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
    ),
    ("pdb-fraction", pdb(minAvailable=1.5), "spec.minAvailable: Invalid value: 1.5: must be an integer"),
    (
        "pdb-beyond-int32",
        pdb(minAvailable=10_000_000_000),
        "spec.minAvailable: Invalid value: 10000000000: must be less than or equal to 2147483647",
    ),
    (
        "pdb-percent-over",
        pdb(maxUnavailable="101%"),
        'spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%',
    ),
    (
        "pdb-not-percent",
        pdb(maxUnavailable="half"),
        'spec.maxUnavailable: Invalid value: "half": a valid percent string must be a numeric string '
        "followed by an "
        "ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ),
    (
        "pdb-selector",
        pdb(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' "
        "or "
        "'NotIn'",
    ),
    (
        "pdb-selector-exists-values",
        pdb(selector={"matchExpressions": [{"key": "app", "operator": "DoesNotExist", "values": ["a"]}]}),
        "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or "
        "'DoesNotExist'",
    ),
    (
        "pdb-eviction-policy",
        pdb(unhealthyPodEvictionPolicy="Never"),
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", '
        '"IfHealthyBudget"',
    ),
    # Lease
    (
        "lease-duration",
        json_format.ParseDict(
            {"metadata": {"name": "l", "namespace": "x"}, "spec": {"leaseDurationSeconds": 0}},
            objects_pb2.Lease(),
        ),
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
    ),
    (
        "lease-transitions",
        json_format.ParseDict(
            {"metadata": {"name": "l", "namespace": "x"}, "spec": {"leaseTransitions": -1}},
            objects_pb2.Lease(),
        ),
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    ),
    # Event
    (
        "event-involved-name",
        json_format.ParseDict(
            {"metadata": {"name": "e", "namespace": "x"}, "involvedObject": {"kind": "Pod"}},
            objects_pb2.Event(),
        ),
        "involvedObject.name: Required value",
    ),
    (
        "event-involved-kind",
        json_format.ParseDict(
            {"metadata": {"name": "e", "namespace": "x"}, "involvedObject": {"name": "p"}},
            objects_pb2.Event(),
        ),
        "involvedObject.kind: Required value",
    ),
    (
        "event-type",
        json_format.ParseDict(
            {
                "metadata": {"name": "e", "namespace": "x"},
                "involvedObject": {"kind": "Pod", "name": "p"},
                "type": "Info",
            },
            objects_pb2.Event(),
        ),
        'type: Unsupported value: "Info": supported values: "Normal", "Warning"',
    ),
    (
        "event-namespace-mismatch",
        json_format.ParseDict(
            {
                "metadata": {"name": "e", "namespace": "x"},
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "y"},
            },
            objects_pb2.Event(),
        ),
        'involvedObject.namespace: Invalid value: "y": does not match event.namespace',
    ),
]


def _matches(problem: str, expected: str) -> bool:
    return problem.startswith(expected[:-3]) if expected.endswith("...") else problem == expected


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_objects(obj: Message, expected: str) -> None:
    problems = validate_object(obj)
    assert any(_matches(problem, expected) for problem in problems), problems


def test_ensure_valid_words_the_error_like_kube_apiserver() -> None:
    with pytest.raises(errors.Invalid) as raised:
        ensure_valid(with_meta(pod(), name="Web"))
    assert raised.value.message == f'Pod "Web" is invalid: {SUBDOMAIN_WEB}'
    assert raised.value.code.name == "INVALID_ARGUMENT"


def test_ensure_valid_lists_several_problems_once_each() -> None:
    bad = pod(containers=[container(name="", image="")])
    with pytest.raises(errors.Invalid) as raised:
        ensure_valid(bad, [*validate_object(bad), "spec.containers[0].name: Required value"])
    assert raised.value.message == (
        'Pod "web" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required '
        "value]"
    )


def test_ensure_valid_names_the_group_of_grouped_kinds() -> None:
    with pytest.raises(errors.Invalid, match=r'^PodDisruptionBudget\.policy "b" is invalid: spec: '):
        ensure_valid(pdb(minAvailable=1, maxUnavailable=1))
    pc = objects_pb2.PriorityClass(preemption_policy="x")
    pc.metadata.name = "p"
    with pytest.raises(errors.Invalid, match=r'^PriorityClass\.scheduling\.k8s\.io "p" is invalid'):
        ensure_valid(pc)


def test_ensure_valid_passes_valid_objects() -> None:
    ensure_valid(pod())
    ensure_valid(pod(), [])


# ---------------------------------------------------------------------------------------- updates


def _changed(obj: Message, change: Callable[[Message], None]) -> Message:
    copy = type(obj)()
    copy.CopyFrom(obj)
    change(copy)
    return copy


def _base_pod() -> objects_pb2.Pod:
    base = pod(
        tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        initContainers=[container(name="init", image="busybox")],
    )
    base.metadata.uid = "u1"
    return base


def _set(path: str, value: object) -> Callable[[Message], None]:
    def change(obj: Message) -> None:
        *parents, leaf = path.split(".")
        target = obj
        for part in parents:
            target = getattr(target, part)
        setattr(target, leaf, value)

    return change


def _add_toleration(obj: objects_pb2.Pod) -> None:
    obj.spec.tolerations.add(key="new", operator="Exists")


def _retime_toleration(obj: objects_pb2.Pod) -> None:
    obj.spec.tolerations[0].toleration_seconds = 5


def _drop_toleration(obj: objects_pb2.Pod) -> None:
    del obj.spec.tolerations[0]


def _change_toleration(obj: objects_pb2.Pod) -> None:
    obj.spec.tolerations[0].effect = "NoSchedule"
    obj.spec.tolerations[0].ClearField("toleration_seconds")


def _image(obj: objects_pb2.Pod) -> None:
    obj.spec.containers[0].image = "nginx:1.28"
    obj.spec.init_containers[0].image = "busybox:2"


def _requests(obj: objects_pb2.Pod) -> None:
    obj.spec.containers[0].resources.requests["cpu"] = "2"


def _node_selector(obj: objects_pb2.Pod) -> None:
    obj.spec.node_selector["disk"] = "ssd"


def _min_available(obj: objects_pb2.PodDisruptionBudget) -> None:
    obj.spec.min_available.number_value = 2


def _add_container(obj: objects_pb2.Pod) -> None:
    obj.spec.containers.add(name="side", image="busybox")


def _clear_uid(obj: Message) -> None:
    obj.metadata.uid = ""


def _labels(obj: Message) -> None:
    obj.metadata.labels["tier"] = "front"


# (id, old, change, expected problems)
FORBIDDEN = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.tolerations` (only additions to existing tolerations)"
)
UPDATES: list[tuple[str, Message, Callable[[Message], None], list[str]]] = [
    ("images", _base_pod(), _image, []),
    ("labels", _base_pod(), _labels, []),
    ("add-toleration", _base_pod(), _add_toleration, []),
    ("toleration-seconds", _base_pod(), _retime_toleration, []),
    ("uid-left-out", _base_pod(), _clear_uid, []),
    (
        "drop-toleration",
        _base_pod(),
        _drop_toleration,
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    (
        "change-toleration",
        _base_pod(),
        _change_toleration,
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ),
    ("requests", _base_pod(), _requests, [f"{FORBIDDEN}; changed: spec.containers"]),
    ("node-selector", _base_pod(), _node_selector, [f"{FORBIDDEN}; changed: spec.nodeSelector"]),
    ("add-container", _base_pod(), _add_container, [f"{FORBIDDEN}; changed: spec.containers"]),
    ("priority", _base_pod(), _set("spec.priority", 5), [f"{FORBIDDEN}; changed: spec.priority"]),
    (
        "rename",
        _base_pod(),
        _set("metadata.name", "other"),
        ['metadata.name: Invalid value: "other": field is immutable'],
    ),
    (
        "namespace",
        _base_pod(),
        _set("metadata.namespace", "prod"),
        ['metadata.namespace: Invalid value: "prod": field is immutable'],
    ),
    (
        "uid",
        _base_pod(),
        _set("metadata.uid", "u2"),
        ['metadata.uid: Invalid value: "u2": field is immutable'],
    ),
    ("node-spec", node(taints=[{"key": "a", "effect": "NoSchedule"}]), _set("spec.unschedulable", True), []),
    (
        "pc-value",
        json_format.ParseDict({"metadata": {"name": "p"}, "value": 10}, objects_pb2.PriorityClass()),
        _set("value", 20),
        ["value: Forbidden: may not be changed in an update."],
    ),
    (
        "pc-policy",
        json_format.ParseDict(
            {"metadata": {"name": "p"}, "value": 10, "preemptionPolicy": "Never"}, objects_pb2.PriorityClass()
        ),
        _set("preemption_policy", "PreemptLowerPriority"),
        ['preemptionPolicy: Invalid value: "PreemptLowerPriority": field is immutable'],
    ),
    (
        "pc-description",
        json_format.ParseDict({"metadata": {"name": "p"}, "value": 10}, objects_pb2.PriorityClass()),
        _set("description", "now documented"),
        [],
    ),
    ("pdb-spec", pdb(minAvailable=1), _min_available, []),
]


@pytest.mark.parametrize(("old", "change", "expected"), [c[1:] for c in UPDATES], ids=[c[0] for c in UPDATES])
def test_validate_update(old: Message, change: Callable[[Message], None], expected: list[str]) -> None:
    assert validate_update(old, _changed(old, change)) == expected


# Objects wrong both in their spec (or metadata) and in their status, one per kind with status rules,
# and one kind without any.
WRONG_SPEC_AND_STATUS = [
    (objects_pb2.Pod, {"metadata": {"name": "Bad_Name"}, "spec": {"containers": []},
                       "status": {"nominatedNodeName": "Not_A_Node"}}),
    (objects_pb2.Node, {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "", "effect": "Sometimes"}]},
                        "status": {"capacity": {"cpu": "lots"}, "allocatable": {"memory": "-1"},
                                   "images": [{"names": []}]}}),
    (objects_pb2.ResourceQuota, {"metadata": {"name": "q", "namespace": "default"},
                                 "spec": {"scopes": ["Nowhere"]},
                                 "status": {"hard": {"cpu": "x"}, "used": {"pods": "y"}}}),
    (objects_pb2.PodGroup, {"metadata": {"name": "Bad_Name", "namespace": "default"},
                            "status": {"phase": "Bogus"}}),
    (objects_pb2.Namespace, {"metadata": {"name": "Bad_Name"}, "status": {"phase": "Bogus"}}),
    (objects_pb2.PodDisruptionBudget, {"metadata": {"name": "Bad_Name", "namespace": "default"}}),
]


@pytest.mark.parametrize(("message", "fields"), WRONG_SPEC_AND_STATUS,
                         ids=[message.__name__ for message, _ in WRONG_SPEC_AND_STATUS])
def test_a_status_is_judged_by_the_status_rules_of_the_full_validation(
    message: Callable[[], Message], fields: dict[str, object]
) -> None:
    obj = json_format.ParseDict(fields, message())
    problems = validate_object(obj)
    assert [problem for problem in problems if not problem.startswith("status")]  # the rest is wrong too
    assert validate_status(obj) == [problem for problem in problems if problem.startswith("status")]
    assert bool(validate_status(obj)) == ("status" in fields)


POD_PHASES = ("", "Pending", "Running", "Succeeded", "Failed", "Unknown")


@pytest.mark.parametrize("after", POD_PHASES)
@pytest.mark.parametrize("before", POD_PHASES)
def test_a_finished_pod_keeps_its_phase(before: str, after: str) -> None:
    """Succeeded and Failed are terminal: a status update may not take a pod out of them (no quota
    would count it again), into another phase or none; every other transition is the status's own."""
    old, new = builders.pod("web", phase=before), builders.pod("web", phase=after)
    expected = []
    if before in ("Succeeded", "Failed") and after != before:
        expected = [
            f'status.phase: Forbidden: may not be transitioned from terminal phase "{before}" to "{after}"'
        ]
    assert validate_status_update(old, new) == expected
    assert validate_status_update(builders.node("n"), builders.node("n")) == []
