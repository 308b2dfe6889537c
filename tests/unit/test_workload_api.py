"""scheduling.k8s.io/v1alpha3 Workload, CompositePodGroup and PodGroup's new fields in the API's pure
parts: validation tables translated from kube-apiserver's (pkg/registry/scheduling/workload and
podgroup declarative_validation_test.go, the rules of scheduling/v1alpha3's generated validations),
update rules, and the PodGroupWorkloadExists admission plugin's refusals."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.validation import ensure_valid, validate_object, validate_status, validate_update
from cluster.api.workloadrefs import refusal
from tests import builders

GANG = {"gang": {"minCount": 2}}


def template(name: str = "main", **fields: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": GANG, **fields}


def workload(*templates: dict[str, Any], **spec: Any) -> objects_pb2.Workload:
    if templates:
        spec["podGroupTemplates"] = list(templates)
    return builders.workload(spec=spec)


def composite(name: str, *children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A composite template of children: composites (those with lists of their own) and pod group
    templates."""
    composites = [c for c in children if "podGroupTemplates" in c or "compositePodGroupTemplates" in c]
    pod_groups = [c for c in children if c not in composites]
    out: dict[str, Any] = {"name": name, "schedulingPolicy": {"basic": {}}, **fields}
    if pod_groups:
        out["podGroupTemplates"] = pod_groups
    if composites:
        out["compositePodGroupTemplates"] = composites
    return out


def claim(name: str = "claim", **source: str) -> dict[str, str]:
    return {"name": name, **(source or {"resourceClaimName": "resource-claim"})}


def nested(depth: int) -> dict[str, Any]:
    """A chain of ``depth`` composite templates ending in a pod group template."""
    node = template(f"leaf{depth}")
    for level in range(depth, 0, -1):
        node = composite(f"level{level}", node)
    return node


T0 = "spec.podGroupTemplates[0]"

WORKLOADS: list[tuple[str, objects_pb2.Workload, list[str]]] = [
    ("valid", workload(template()), []),
    ("valid-basic", workload(template(schedulingPolicy={"basic": {}})), []),
    ("no-templates", workload(),
     ['spec: Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`']),
    ("both-lists", workload(template(), compositePodGroupTemplates=[composite("c", template("x"))]),
     ['spec: Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": must specify exactly one '
      "of: `podGroupTemplates`, `compositePodGroupTemplates`"]),
    ("too-many-templates", workload(*(template(f"t{i}") for i in range(9))),
     ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]),
    ("eight-templates", workload(*(template(f"t{i}") for i in range(8))), []),
    ("empty-name", workload(template("")), [f"{T0}.name: Required value"]),
    ("invalid-name", workload(template("Invalid_Name")), [
        f'{T0}.name: Invalid value: "Invalid_Name": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
        "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ("duplicate-names", workload(template(), template()), [
        'spec.podGroupTemplates[1]: Duplicate value: "{\\"name\\":\\"main\\",\\"schedulingPolicy\\":'
        '{\\"gang\\":{\\"minCount\\":2}}}"']),
    ("min-count-zero", workload(template(schedulingPolicy={"gang": {"minCount": 0}})),
     [f"{T0}.schedulingPolicy.gang.minCount: Required value"]),
    ("min-count-negative", workload(template(schedulingPolicy={"gang": {"minCount": -1}})),
     [f"{T0}.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"]),
    ("controller-ref", workload(template(), controllerRef={"apiGroup": "apps", "kind": "Deployment",
                                                           "name": "my-deployment"}), []),
    ("controller-ref-core", workload(template(), controllerRef={"kind": "Pod", "name": "my-pod"}), []),
    ("controller-ref-api-group", workload(template(), controllerRef={
        "apiGroup": "invalid_api_group", "kind": "Deployment", "name": "d"}),
     ['spec.controllerRef.apiGroup: Invalid value: "invalid_api_group": a lowercase RFC 1123 ...']),
    ("controller-ref-long-api-group", workload(template(), controllerRef={
        "apiGroup": "g" * 254, "kind": "Deployment", "name": "d"}),
     ["spec.controllerRef.apiGroup: Invalid value: ..."]),
    ("controller-ref-kind-missing", workload(template(), controllerRef={"apiGroup": "apps", "name": "d"}),
     ["spec.controllerRef.kind: Required value"]),
    ("controller-ref-kind-slash", workload(template(), controllerRef={"kind": "Deploy/ment", "name": "d"}),
     ["spec.controllerRef.kind: Invalid value: \"Deploy/ment\": may not contain '/'"]),
    ("controller-ref-kind-percent", workload(template(), controllerRef={"kind": "Deploy%ment", "name": "d"}),
     ["spec.controllerRef.kind: Invalid value: \"Deploy%ment\": may not contain '%'"]),
    ("controller-ref-name-missing", workload(template(), controllerRef={"kind": "Deployment"}),
     ["spec.controllerRef.name: Required value"]),
    ("controller-ref-name-slash", workload(template(), controllerRef={"kind": "D", "name": "/invalid-name"}),
     ["spec.controllerRef.name: Invalid value: \"/invalid-name\": may not contain '/'"]),
    ("controller-ref-name-dots", workload(template(), controllerRef={"kind": "D", "name": ".."}),
     ["spec.controllerRef.name: Invalid value: \"..\": may not be '..'"]),
    ("policy-neither", workload(template(schedulingPolicy={})),
     [f'{T0}.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`']),
    ("policy-both", workload(template(schedulingPolicy={"basic": {}, "gang": {"minCount": 1}})),
     [f'{T0}.schedulingPolicy: Invalid value: "{{basic, gang}}": must specify exactly one of: `basic`, '
      "`gang`"]),
    ("constraints", workload(template(schedulingConstraints={"topology": [{"key": "foo"}]})), []),
    ("constraints-empty", workload(template(schedulingConstraints={})), []),
    ("two-topology-constraints", workload(template(schedulingConstraints={
        "topology": [{"key": "foo"}, {"key": "bar"}]})),
     [f"{T0}.schedulingConstraints.topology: Too many: 2: must have at most 1 items"]),
    ("empty-topology-key", workload(template(schedulingConstraints={"topology": [{"key": ""}]})),
     [f"{T0}.schedulingConstraints.topology[0].key: Required value"]),
    ("topology-key-prefix", workload(template(schedulingConstraints={
        "topology": [{"key": "example.com/Foo"}]})), []),
    ("topology-key-longest", workload(template(schedulingConstraints={
        "topology": [{"key": "a" * 253 + "/" + "b" * 63}]})), []),
    ("topology-key-prefix-too-long", workload(template(schedulingConstraints={
        "topology": [{"key": "a" * 254 + "/foo"}]})),
     [f"{T0}.schedulingConstraints.topology[0].key: Invalid value: ..."]),
    ("topology-key-name-too-long", workload(template(schedulingConstraints={
        "topology": [{"key": "foo/" + "b" * 64}]})),
     [f"{T0}.schedulingConstraints.topology[0].key: Invalid value: ..."]),
    ("topology-key-too-long", workload(template(schedulingConstraints={"topology": [{"key": "b" * 64}]})),
     [f"{T0}.schedulingConstraints.topology[0].key: Invalid value: ..."]),
    ("topology-key-bad-prefix", workload(template(schedulingConstraints={
        "topology": [{"key": "Example.com/Foo"}]})),
     [f'{T0}.schedulingConstraints.topology[0].key: Invalid value: "Example.com/Foo": prefix part a '
      "lowercase RFC 1123 ..."]),
    ("disruption-single", workload(template(disruptionMode={"single": {}})), []),
    ("disruption-all", workload(template(disruptionMode={"all": {}})), []),
    ("disruption-neither", workload(template(disruptionMode={})),
     [f'{T0}.disruptionMode: Invalid value: "": must specify one of: `single`, `all`']),
    ("priority-class-name", workload(template(priorityClassName="high-priority")), []),
    ("priority-class-name-slash", workload(template(priorityClassName="high/priority")),
     [f'{T0}.priorityClassName: Invalid value: "high/priority": a lowercase RFC 1123 ...']),
    ("priority", workload(template(priority=1000)), []),
    ("priority-lowest", workload(template(priority=-2147483648)), []),
    ("priority-too-high", workload(template(priority=1_000_000_001)),
     [f"{T0}.priority: Invalid value: 1000000001: must be less than or equal to 1000000000"]),
    ("preemption-policy", workload(template(preemptionPolicy="Never")), []),
    ("preemption-policy-unknown", workload(template(preemptionPolicy="Sometimes")),
     [f'{T0}.preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", '
      '"PreemptLowerPriority"']),
    ("claim-name", workload(template(resourceClaims=[claim()])), []),
    ("claim-template", workload(template(resourceClaims=[
        claim(resourceClaimTemplateName="resource-claim-template")])), []),
    ("claims", workload(template(resourceClaims=[claim("claim-1"), claim("claim-2")])), []),
    ("claim-name-prefix", workload(template(resourceClaims=[claim("../my-claim")])),
     [f'{T0}.resourceClaims[0].name: Invalid value: "../my-claim": a lowercase RFC 1123 ...']),
    ("claim-name-path", workload(template(resourceClaims=[claim("my/claim")])),
     [f'{T0}.resourceClaims[0].name: Invalid value: "my/claim": a lowercase RFC 1123 ...']),
    ("duplicate-claims", workload(template(resourceClaims=[
        claim("my-claim", resourceClaimName="c-1"), claim("my-claim", resourceClaimName="c-2")])),
     [f'{T0}.resourceClaims[1]: Duplicate value: "{{\\"name\\":\\"my-claim\\",\\"resourceClaimName\\":'
      '\\"c-2\\"}"']),
    ("claim-source-empty", workload(template(resourceClaims=[{"name": "my-claim"}])),
     [f'{T0}.resourceClaims[0]: Invalid value: "": must specify one of: `resourceClaimName`, '
      "`resourceClaimTemplateName`"]),
    ("claim-source-both", workload(template(resourceClaims=[
        {"name": "my-claim", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}])),
     [f'{T0}.resourceClaims[0]: Invalid value: "{{resourceClaimName, resourceClaimTemplateName}}": must '
      "specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`"]),
    ("claim-reference-name", workload(template(resourceClaims=[claim(resourceClaimName=".foo_bar")])),
     [f'{T0}.resourceClaims[0].resourceClaimName: Invalid value: ".foo_bar": a lowercase RFC 1123 ...']),
    ("claim-template-name", workload(template(resourceClaims=[
        claim(resourceClaimTemplateName=".foo_bar")])),
     [f'{T0}.resourceClaims[0].resourceClaimTemplateName: Invalid value: ".foo_bar": a lowercase RFC '
      "1123 ..."]),
    ("too-many-claims", workload(template(resourceClaims=[claim(f"my-claim-{i}") for i in range(5)])),
     [f"{T0}.resourceClaims: Too many: 5: must have at most 4 items"]),
    # The tree of composite templates.
    ("composite", workload(compositePodGroupTemplates=[
        composite("root", template("a"), template("b"), schedulingPolicy={"gang": {"minGroupCount": 2}})]),
     []),
    ("composite-depth-4", workload(compositePodGroupTemplates=[nested(3)]), []),
    ("composite-depth-5", workload(compositePodGroupTemplates=[nested(4)]), [
        "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0]"
        ".compositePodGroupTemplates[0].podGroupTemplates: Forbidden: templates may nest at most 4 levels "
        "deep"]),
    ("composite-without-children", workload(compositePodGroupTemplates=[
        {"name": "root", "schedulingPolicy": {"basic": {}}}]),
     ["spec.compositePodGroupTemplates[0]: Required value: must specify at least one of: "
      "`podGroupTemplates`, `compositePodGroupTemplates`"]),
    ("composite-min-group-count-zero", workload(compositePodGroupTemplates=[
        composite("root", template("a"), schedulingPolicy={"gang": {"minGroupCount": 0}})]),
     ["spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Required value"]),
    ("composite-too-many-children", workload(compositePodGroupTemplates=[
        composite("root", *(template(f"t{i}") for i in range(9)))]),
     ["spec.compositePodGroupTemplates[0].podGroupTemplates: Too many: 9: must have at most 8 items"]),
    ("names-unique-in-workload", workload(compositePodGroupTemplates=[
        composite("root", template("a")), composite("other", template("a"))]),
     ['spec.compositePodGroupTemplates[1].podGroupTemplates[0].name: Duplicate value: "a"']),
    ("composite-topology", workload(compositePodGroupTemplates=[
        composite("root", template("a"),
                  schedulingConstraints={"topology": [{"key": "rack"}, {"key": "z"}]})]),
     ["spec.compositePodGroupTemplates[0].schedulingConstraints.topology: Too many: 2: must have at most 1 "
      "items"]),
]


def _matches(problem: str, expected: str) -> bool:
    return problem.startswith(expected[:-3]) if expected.endswith("...") else problem == expected


def _check(problems: list[str], expected: list[str]) -> None:
    assert len(problems) == len(expected), problems
    for problem, wanted in zip(problems, expected, strict=True):
        assert _matches(problem, wanted), (problem, wanted)


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in WORKLOADS], ids=[c[0] for c in WORKLOADS])
def test_workload_validation(obj: objects_pb2.Workload, expected: list[str]) -> None:
    _check(validate_object(obj), expected)


def test_the_error_names_the_workload() -> None:
    with pytest.raises(errors.Invalid, match=r'^Workload\.scheduling\.k8s\.io "w" is invalid: spec: '):
        ensure_valid(workload())


def _changed(obj: Message, change: Callable[[Any], object]) -> Any:
    copied = copy.deepcopy(obj)
    change(copied)
    return copied


def _add_template(w: objects_pb2.Workload) -> None:
    w.spec.pod_group_templates.add(name="worker1").scheduling_policy.basic.SetInParent()


WITH_REF = workload(template(schedulingConstraints={"topology": [{"key": "foo"}]}),
                    controllerRef={"apiGroup": "apps", "kind": "Deployment", "name": "my-deployment"})
TREE = workload(compositePodGroupTemplates=[
    composite("root", template("a"), schedulingPolicy={"gang": {"minGroupCount": 1}})])
ROOT = "spec.compositePodGroupTemplates[0]"

WORKLOAD_UPDATES: list[tuple[str, objects_pb2.Workload, Callable[[Any], object], list[str]]] = [
    ("unchanged", WITH_REF, lambda w: None, []),
    ("labels", WITH_REF, lambda w: w.metadata.labels.update({"a": "b"}), []),
    ("change-controller-ref", WITH_REF, lambda w: setattr(w.spec.controller_ref, "name", "other"),
     ['spec.controllerRef: Invalid value: "{\\"apiGroup\\":\\"apps\\",\\"kind\\":\\"Deployment\\",'
      '\\"name\\":\\"other\\"}": field is immutable']),
    ("unset-controller-ref", WITH_REF, lambda w: w.spec.ClearField("controller_ref"),
     ['spec.controllerRef: Invalid value: "null": field is immutable']),
    ("set-controller-ref", workload(template()),
     lambda w: w.spec.controller_ref.MergeFrom(objects_pb2.TypedLocalObjectReference(kind="Job", name="j")),
     ['spec.controllerRef: Invalid value: "{\\"kind\\":\\"Job\\",\\"name\\":\\"j\\"}": field is immutable']),
    ("add-template", WITH_REF, _add_template,
     ["spec.podGroupTemplates[1]: Forbidden: items cannot be added"]),
    ("remove-template", workload(template(), template("worker1")), lambda w: w.spec.pod_group_templates.pop(),
     ["spec.podGroupTemplates: Forbidden: items cannot be removed"]),
    ("rename-template", WITH_REF, lambda w: setattr(w.spec.pod_group_templates[0], "name", "worker2"),
     ["spec.podGroupTemplates[0]: Forbidden: items cannot be added",
      "spec.podGroupTemplates: Forbidden: items cannot be removed"]),
    ("gang-min-count", WITH_REF,
     lambda w: setattr(w.spec.pod_group_templates[0].scheduling_policy.gang, "min_count", 10), []),
    ("gang-to-basic", WITH_REF, lambda w: (w.spec.pod_group_templates[0].scheduling_policy.ClearField("gang"),
                                           w.spec.pod_group_templates[0].scheduling_policy.basic.SetInParent()),
     [f'{T0}.schedulingPolicy.basic: Invalid value: "{{}}": field is immutable',
      f"{T0}.schedulingPolicy.gang: Forbidden: field cannot be cleared once set"]),
    ("topology-key", WITH_REF,
     lambda w: setattr(w.spec.pod_group_templates[0].scheduling_constraints.topology[0], "key", "bar"),
     [f'{T0}.schedulingConstraints: Invalid value: "{{\\"topology\\":[{{\\"key\\":\\"bar\\"}}]}}": field '
      "is immutable"]),
    ("add-claim", WITH_REF, lambda w: w.spec.pod_group_templates[0].resource_claims.add(
        name="my-claim", resource_claim_template_name="my-template"),
     [f'{T0}.resourceClaims: Invalid value: "[{{\\"name\\":\\"my-claim\\",\\"resourceClaimTemplateName\\":'
      '\\"my-template\\"}]": field is immutable']),
    ("disruption-mode", WITH_REF, lambda w: w.spec.pod_group_templates[0].disruption_mode.all.SetInParent(),
     [f'{T0}.disruptionMode: Invalid value: "{{\\"all\\":{{}}}}": field is immutable']),
    ("priority", WITH_REF, lambda w: setattr(w.spec.pod_group_templates[0], "priority", 5),
     [f"{T0}.priority: Invalid value: 5: field is immutable"]),
    ("composite-min-group-count", TREE,
     lambda w: setattr(w.spec.composite_pod_group_templates[0].scheduling_policy.gang, "min_group_count", 3),
     []),
    ("composite-child-added", TREE,
     lambda w: w.spec.composite_pod_group_templates[0].pod_group_templates.add(name="b").scheduling_policy
     .basic.SetInParent(),
     [f"{ROOT}.podGroupTemplates[1]: Forbidden: items cannot be added"]),
    ("composite-child-changed", TREE,
     lambda w: setattr(w.spec.composite_pod_group_templates[0].pod_group_templates[0], "priority_class_name",
                       "high"),
     [f'{ROOT}.podGroupTemplates[0].priorityClassName: Invalid value: "high": field is immutable']),
]


@pytest.mark.parametrize(("old", "change", "expected"), [c[1:] for c in WORKLOAD_UPDATES],
                         ids=[c[0] for c in WORKLOAD_UPDATES])
def test_workload_updates(
    old: objects_pb2.Workload, change: Callable[[Any], object], expected: list[str]
) -> None:
    assert validate_update(old, _changed(old, change)) == expected


# ------------------------------------------------------------------------------------- PodGroup's fields

P = "spec"


def group(**spec: Any) -> objects_pb2.PodGroup:
    return builders.pod_group(spec={"schedulingPolicy": GANG, **spec})


POD_GROUPS: list[tuple[str, objects_pb2.PodGroup, list[str]]] = [
    ("valid", group(workloadRef={"workloadName": "w", "templateName": "main"}), []),
    ("parent", group(parentCompositePodGroupName="root",
                     workloadRef={"workloadName": "w", "templateName": "a"}), []),
    ("parent-without-workload-ref", group(parentCompositePodGroupName="root"),
     ["spec.workloadRef: Required value: must be specified when `parentCompositePodGroupName` is"]),
    ("parent-name", group(parentCompositePodGroupName="Root", workloadRef={"workloadName": "w",
                                                                          "templateName": "a"}),
     ['spec.parentCompositePodGroupName: Invalid value: "Root": a lowercase RFC 1123 ...']),
    ("workload-name-required", group(workloadRef={"templateName": "a"}),
     ["spec.workloadRef.workloadName: Required value"]),
    ("topology", group(schedulingConstraints={"topology": [{"key": "topology.kubernetes.io/rack"}]}), []),
    ("topology-two", group(schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]}),
     ["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 items"]),
    ("topology-key-empty", group(schedulingConstraints={"topology": [{}]}),
     ["spec.schedulingConstraints.topology[0].key: Required value"]),
    ("topology-key-invalid", group(schedulingConstraints={"topology": [{"key": "rack!"}]}),
     ['spec.schedulingConstraints.topology[0].key: Invalid value: "rack!": name part must consist of ...']),
    ("claims", group(resourceClaims=[claim("a"), claim("b", resourceClaimTemplateName="t")]), []),
    ("claims-too-many", group(resourceClaims=[claim(f"c{i}") for i in range(5)]),
     ["spec.resourceClaims: Too many: 5: must have at most 4 items"]),
    ("claim-no-source", group(resourceClaims=[{"name": "a"}]),
     ['spec.resourceClaims[0]: Invalid value: "": must specify one of: `resourceClaimName`, '
      "`resourceClaimTemplateName`"]),
    ("claim-name-required", group(resourceClaims=[{"resourceClaimName": "c"}]),
     ["spec.resourceClaims[0].name: Required value"]),
    ("preemption-policy", group(preemptionPolicy="PreemptLowerPriority"), []),
    ("preemption-policy-unknown", group(preemptionPolicy="Always"),
     ['spec.preemptionPolicy: Unsupported value: "Always": supported values: "Never", '
      '"PreemptLowerPriority"']),
    # Admission's: a system class's value is what the group gets, unbounded, as a pod's.
    ("priority-of-a-system-class", group(priorityClassName="system-node-critical", priority=2_000_001_000),
     []),
    ("coscheduling-refuses-new-fields",
     builders.pod_group(api_version=builders.COSCHEDULING, spec={
         "minMember": 2, "schedulingConstraints": {"topology": [{"key": "rack"}]}}),
     ["spec.schedulingConstraints: Forbidden: not a field of scheduling.x-k8s.io/v1alpha1 PodGroup"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in POD_GROUPS], ids=[c[0] for c in POD_GROUPS])
def test_pod_group_fields(obj: objects_pb2.PodGroup, expected: list[str]) -> None:
    _check(validate_object(obj), expected)


STATUSES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("claim-statuses",
     {"resourceClaimStatuses": [{"name": "a", "resourceClaimName": "g-a-x7k"}, {"name": "b"}]}, []),
    ("claim-statuses-too-many", {"resourceClaimStatuses": [{"name": f"c{i}"} for i in range(5)]},
     ["status.resourceClaimStatuses: Too many: 5: must have at most 4 items"]),
    ("claim-statuses-duplicate", {"resourceClaimStatuses": [{"name": "a"}, {"name": "a"}]},
     ['status.resourceClaimStatuses[1]: Duplicate value: "{\\"name\\":\\"a\\"}"']),
    ("claim-status-name", {"resourceClaimStatuses": [{"name": "a", "resourceClaimName": "Bad"}]},
     ['status.resourceClaimStatuses[0].resourceClaimName: Invalid value: "Bad": a lowercase RFC 1123 ...']),
    ("conditions-duplicate", {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True"},
                                             {"type": "PodGroupInitiallyScheduled", "status": "False"}]},
     ['status.conditions[1]: Duplicate value: ...']),
]


@pytest.mark.parametrize(("status", "expected"), [c[1:] for c in STATUSES], ids=[c[0] for c in STATUSES])
def test_pod_group_status(status: dict[str, Any], expected: list[str]) -> None:
    _check(validate_status(builders.pod_group(min_count=2, status=status)), expected)


POD_GROUP_UPDATES: list[tuple[str, Callable[[objects_pb2.PodGroup], object], list[str]]] = [
    ("parent", lambda g: setattr(g.spec, "parent_composite_pod_group_name", "other"),
     ['spec.parentCompositePodGroupName: Invalid value: "other": field is immutable']),
    ("topology", lambda g: g.spec.scheduling_constraints.topology.add(key="zone"),
     ['spec.schedulingConstraints: Invalid value: "{\\"topology\\":[{\\"key\\":\\"rack\\"},{\\"key\\":'
      '\\"zone\\"}]}": field is immutable']),
    ("claims", lambda g: g.spec.resource_claims.pop(),
     ['spec.resourceClaims: Invalid value: "[]": field is immutable']),
    ("preemption-policy", lambda g: setattr(g.spec, "preemption_policy", "Never"),
     ['spec.preemptionPolicy: Invalid value: "Never": field is immutable']),
]

FULL_GROUP = group(parentCompositePodGroupName="root", workloadRef={"workloadName": "w", "templateName": "a"},
                   schedulingConstraints={"topology": [{"key": "rack"}]}, resourceClaims=[claim()],
                   preemptionPolicy="PreemptLowerPriority")


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in POD_GROUP_UPDATES],
                         ids=[c[0] for c in POD_GROUP_UPDATES])
def test_pod_group_updates(change: Callable[[objects_pb2.PodGroup], object], expected: list[str]) -> None:
    assert validate_update(FULL_GROUP, _changed(FULL_GROUP, change)) == expected


# ----------------------------------------------------------------------------------- CompositePodGroup

REF = {"workloadName": "w", "templateName": "root"}


def cpg(**spec: Any) -> objects_pb2.CompositePodGroup:
    return builders.composite_pod_group(spec={"workloadRef": REF, "schedulingPolicy": {"basic": {}}, **spec})


COMPOSITES: list[tuple[str, objects_pb2.CompositePodGroup, list[str]]] = [
    ("valid", cpg(), []),
    ("gang", cpg(schedulingPolicy={"gang": {"minGroupCount": 3}}), []),
    ("gang-zero", cpg(schedulingPolicy={"gang": {}}),
     ["spec.schedulingPolicy.gang.minGroupCount: Required value"]),
    ("gang-negative", cpg(schedulingPolicy={"gang": {"minGroupCount": -2}}),
     ["spec.schedulingPolicy.gang.minGroupCount: Invalid value: -2: must be greater than or equal to 1"]),
    ("policy-missing", cpg(schedulingPolicy={}),
     ['spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`']),
    ("workload-ref-required", builders.composite_pod_group(spec={"schedulingPolicy": {"basic": {}}}),
     ["spec.workloadRef: Required value"]),
    ("template-name-label", cpg(workloadRef={"workloadName": "w", "templateName": "Root"}),
     ['spec.workloadRef.templateName: Invalid value: "Root": a lowercase RFC 1123 label ...']),
    ("parent", cpg(parentCompositePodGroupName="top"), []),
    ("topology", cpg(schedulingConstraints={"topology": [{"key": "zone"}, {"key": "rack"}]}),
     ["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 items"]),
    ("disruption-both", cpg(disruptionMode={"single": {}, "all": {}}),
     ['spec.disruptionMode: Invalid value: "{single, all}": must specify exactly one of: `single`, `all`']),
    ("priority-class", cpg(priorityClassName="Hi"),
     ['spec.priorityClassName: Invalid value: "Hi": a lowercase ...']),
    ("conditions", builders.composite_pod_group(
        spec={"workloadRef": REF, "schedulingPolicy": {"basic": {}}},
        status={"conditions": [{"status": "True"}]}),
     ["status.conditions[0].type: Required value"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in COMPOSITES], ids=[c[0] for c in COMPOSITES])
def test_composite_pod_group_validation(obj: objects_pb2.CompositePodGroup, expected: list[str]) -> None:
    _check(validate_object(obj), expected)


def test_a_composite_pod_group_keeps_its_spec() -> None:
    old = cpg(schedulingPolicy={"gang": {"minGroupCount": 2}})
    new = _changed(old, lambda g: setattr(g.spec.scheduling_policy.gang, "min_group_count", 3))
    assert validate_update(old, new) == [
        'spec.schedulingPolicy: Invalid value: "{\\"gang\\":{\\"minGroupCount\\":3}}": field is immutable']


# ------------------------------------------------------------------- PodGroupWorkloadExists's refusals

TREE_WORKLOAD = workload(compositePodGroupTemplates=[composite("root", composite("mid", template("leaf")))])


@pytest.mark.parametrize(
    ("group", "found", "expected"),
    [
        (group(workloadRef={"workloadName": "w", "templateName": "main"}), workload(template()), None),
        (group(workloadRef={"workloadName": "w", "templateName": "main"}), None,
         'PodGroup rejected: Workload "w" not found'),
        (group(workloadRef={"workloadName": "w", "templateName": "other"}), workload(template()),
         'PodGroup rejected: PodGroupTemplate "other" not found in Workload "w"'),
        (group(workloadRef={"workloadName": "w", "templateName": "leaf"}), TREE_WORKLOAD, None),
        # A composite template's name is no PodGroup template's.
        (group(workloadRef={"workloadName": "w", "templateName": "mid"}), TREE_WORKLOAD,
         'PodGroup rejected: PodGroupTemplate "mid" not found in Workload "w"'),
        (cpg(workloadRef={"workloadName": "w", "templateName": "mid"}), TREE_WORKLOAD, None),
        (cpg(workloadRef={"workloadName": "w", "templateName": "leaf"}), TREE_WORKLOAD,
         'CompositePodGroup rejected: CompositePodGroupTemplate "leaf" not found in Workload "w"'),
    ],
    ids=["found", "no-workload", "no-template", "nested-leaf", "composite-is-not-a-pod-group-template",
         "composite", "leaf-is-not-a-composite"],
)
def test_workload_ref_refusals(group: Any, found: objects_pb2.Workload | None, expected: str | None) -> None:
    assert refusal(group, found) == expected


def test_a_workload_being_deleted_refuses_new_groups() -> None:
    deleting = workload(template())
    deleting.metadata.deletion_timestamp.seconds = 1
    refused = refusal(group(workloadRef={"workloadName": "w", "templateName": "main"}), deleting)
    assert refused == 'PodGroup rejected: Workload "w" is being deleted'
