"""PodGroup in the API's pure parts: manifests in both spellings, validation (each rule with its bad
input), update rules, and a pod's schedulingGroup."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, kinds, objects_pb2, podgroups
from cluster.api.manifest import ManifestError, load_text
from cluster.api.validation import ensure_valid, validate_object, validate_update
from tests import builders
from tests.builders import COSCHEDULING, UPSTREAM


def group(api_version: str = UPSTREAM, **spec: Any) -> objects_pb2.PodGroup:
    if api_version == UPSTREAM and not spec:
        spec = {"schedulingPolicy": {"gang": {"minCount": 2}}}
    return builders.pod_group(api_version=api_version, kind="PodGroup", spec=spec)


def with_status(obj: objects_pb2.PodGroup, **status: Any) -> objects_pb2.PodGroup:
    json_format.ParseDict(status, obj.status)
    return obj


# ------------------------------------------------------------------------------------------ manifests


def test_both_spellings_decode_and_keep_their_api_version() -> None:
    manifests = load_text(textwrap.dedent("""\
        apiVersion: scheduling.k8s.io/v1alpha3
        kind: PodGroup
        metadata: {name: upstream}
        spec:
          schedulingPolicy: {gang: {minCount: 4}}
          workloadRef: {workloadName: job, templateName: workers}
          disruptionMode: {all: {}}
          priorityClassName: high
        ---
        apiVersion: scheduling.x-k8s.io/v1alpha1
        kind: PodGroup
        metadata: {name: cosched}
        spec:
          minMember: 3
          minResources: {cpu: "3", memory: 1Gi}
          scheduleTimeoutSeconds: 60
        """), source="pg.yaml")
    upstream, cosched = (m.obj for m in manifests)
    assert all(m.kind is kinds.POD_GROUP for m in manifests)
    assert upstream.api_version == UPSTREAM and cosched.api_version == COSCHEDULING
    assert upstream.spec.scheduling_policy.gang.min_count == 4
    assert upstream.spec.workload_ref.template_name == "workers"
    assert upstream.spec.disruption_mode.HasField("all")
    assert cosched.spec.min_member == 3 and dict(cosched.spec.min_resources) == {"cpu": "3", "memory": "1Gi"}
    assert cosched.spec.schedule_timeout_seconds == 60
    assert podgroups.min_count(upstream) == 4 and podgroups.min_count(cosched) == 3
    assert validate_object(upstream) == [] and validate_object(cosched) == []


def test_an_unserved_version_lists_every_served_one() -> None:
    with pytest.raises(ManifestError) as raised:
        load_text("apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n", source="p")
    assert raised.value.problems == [
        'p: document 1 (PodGroup g): no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha1": '
        "podsched serves PodGroup in scheduling.k8s.io/v1alpha3 and scheduling.x-k8s.io/v1alpha1 and "
        "scheduling.k8s.io/v1alpha2"
    ]


# ------------------------------------------------------------------------------------------ validation

INVALID: list[tuple[str, objects_pb2.PodGroup, str]] = [
    ("upstream-field-in-coscheduling", group(COSCHEDULING, minMember=1, schedulingPolicy={"basic": {}}),
     "spec.schedulingPolicy: Forbidden: not a field of scheduling.x-k8s.io/v1alpha1 PodGroup"),
    ("coscheduling-field-in-upstream", group(UPSTREAM, schedulingPolicy={"basic": {}}, minMember=2),
     "spec.minMember: Forbidden: not a field of scheduling.k8s.io/v1alpha3 PodGroup"),
    ("coscheduling-timeout-in-upstream",
     group(UPSTREAM, schedulingPolicy={"basic": {}}, scheduleTimeoutSeconds=5),
     "spec.scheduleTimeoutSeconds: Forbidden: not a field of scheduling.k8s.io/v1alpha3 PodGroup"),
    ("policy-required", group(UPSTREAM, priorityClassName="x"),
     'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'),
    ("policy-empty", group(UPSTREAM, schedulingPolicy={}),
     'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'),
    ("policy-both", group(UPSTREAM, schedulingPolicy={"basic": {}, "gang": {"minCount": 2}}),
     'spec.schedulingPolicy: Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`'),
    ("min-count-zero", group(UPSTREAM, schedulingPolicy={"gang": {"minCount": 0}}),
     "spec.schedulingPolicy.gang.minCount: Required value"),
    ("min-count-negative", group(UPSTREAM, schedulingPolicy={"gang": {"minCount": -1}}),
     "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"),
    ("workload-name", group(UPSTREAM, schedulingPolicy={"basic": {}},
                            workloadRef={"workloadName": "Job", "templateName": "w"}),
     'spec.workloadRef.workloadName: Invalid value: "Job": a lowercase RFC 1123 ...'),
    ("template-name-required", group(UPSTREAM, schedulingPolicy={"basic": {}},
                                     workloadRef={"workloadName": "job"}),
     "spec.workloadRef.templateName: Required value"),
    ("template-name-label", group(UPSTREAM, schedulingPolicy={"basic": {}},
                                  workloadRef={"workloadName": "job", "templateName": "a.b"}),
     'spec.workloadRef.templateName: Invalid value: "a.b": must not contain dots'),
    ("disruption-mode-empty", group(UPSTREAM, schedulingPolicy={"basic": {}}, disruptionMode={}),
     'spec.disruptionMode: Invalid value: "": must specify one of: `single`, `all`'),
    ("disruption-mode-both", group(UPSTREAM, schedulingPolicy={"basic": {}},
                                   disruptionMode={"single": {}, "all": {}}),
     'spec.disruptionMode: Invalid value: "{single, all}": must specify exactly one of: `single`, `all`'),
    ("priority-class-name", group(UPSTREAM, schedulingPolicy={"basic": {}}, priorityClassName="High"),
     'spec.priorityClassName: Invalid value: "High": a lowercase RFC 1123 ...'),
    ("min-member-negative", group(COSCHEDULING, minMember=-1),
     "spec.minMember: Invalid value: -1: must be greater than or equal to 0"),
    ("min-resources-quantity", group(COSCHEDULING, minMember=1, minResources={"cpu": "lots"}),
     'spec.minResources[cpu]: Invalid value: "lots": ...'),
    ("min-resources-negative", group(COSCHEDULING, minMember=1, minResources={"memory": "-1Gi"}),
     'spec.minResources[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("timeout-negative", group(COSCHEDULING, minMember=1, scheduleTimeoutSeconds=-5),
     "spec.scheduleTimeoutSeconds: Invalid value: -5: must be greater than or equal to 0"),
    ("condition-status",
     with_status(group(), conditions=[{"type": "PodGroupInitiallyScheduled", "status": "Yes"}]),
     'status.conditions[0].status: Unsupported value: "Yes": supported values: "True", "False", "Unknown"'),
    ("condition-type", with_status(group(), conditions=[{"status": "True"}]),
     "status.conditions[0].type: Required value"),
    ("phase", with_status(group(COSCHEDULING, minMember=1), phase="Done"),
     'status.phase: Unsupported value: "Done": supported values: "Pending", ...'),
    ("scheduled-negative", with_status(group(), scheduled=-1),
     "status.scheduled: Invalid value: -1: must be greater than or equal to 0"),
    ("running-negative", with_status(group(), running=-2),
     "status.running: Invalid value: -2: must be greater than or equal to 0"),
    ("succeeded-negative", with_status(group(), succeeded=-1),
     "status.succeeded: Invalid value: -1: must be greater than or equal to 0"),
    ("failed-negative", with_status(group(), failed=-1),
     "status.failed: Invalid value: -1: must be greater than or equal to 0"),
]


def _matches(problem: str, expected: str) -> bool:
    return problem.startswith(expected[:-3]) if expected.endswith("...") else problem == expected


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_pod_groups(obj: objects_pb2.PodGroup, expected: str) -> None:
    problems = validate_object(obj)
    assert any(_matches(problem, expected) for problem in problems), problems


def test_valid_status_of_both_spellings() -> None:
    status = {"phase": "Scheduled", "scheduled": 3, "running": 1,
              "conditions": [
                  {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable"}]}
    assert validate_object(with_status(group(), **status)) == []
    assert validate_object(with_status(group(COSCHEDULING, minMember=3), **status)) == []


def test_the_error_names_the_group_the_object_is_written_in() -> None:
    with pytest.raises(errors.Invalid) as raised:
        ensure_valid(group(UPSTREAM, schedulingPolicy={"basic": {}}, minMember=2))
    assert raised.value.message == (
        'PodGroup.scheduling.k8s.io "g" is invalid: spec.minMember: Forbidden: not a field of '
        "scheduling.k8s.io/v1alpha3 PodGroup"
    )
    written_in_x_k8s = r'^PodGroup\.scheduling\.x-k8s\.io "g" is invalid: spec\.minMember'
    with pytest.raises(errors.Invalid, match=written_in_x_k8s):
        ensure_valid(group(COSCHEDULING, minMember=-1))


# --------------------------------------------------------------------------------------------- updates


Change = Callable[[objects_pb2.PodGroup], None]


def _changed(obj: objects_pb2.PodGroup, change: Change) -> objects_pb2.PodGroup:
    copy = objects_pb2.PodGroup()
    copy.CopyFrom(obj)
    change(copy)
    return copy


def _full_upstream() -> objects_pb2.PodGroup:
    return group(UPSTREAM, schedulingPolicy={"gang": {"minCount": 2}}, disruptionMode={"single": {}},
                 priorityClassName="high", priority=10,
                 workloadRef={"workloadName": "job", "templateName": "w"})


UPDATES: list[tuple[str, objects_pb2.PodGroup, Callable[[objects_pb2.PodGroup], None], list[str]]] = [
    # v1alpha3: a gang's minCount follows the workload's scale; its policy kind stays.
    ("min-count", _full_upstream(), lambda g: setattr(g.spec.scheduling_policy.gang, "min_count", 3), []),
    ("policy-kind", _full_upstream(), lambda g: g.spec.scheduling_policy.basic.SetInParent(),
     ['spec.schedulingPolicy.basic: Invalid value: "{}": field is immutable']),
    ("gang-to-basic", _full_upstream(),
     lambda g: (g.spec.scheduling_policy.ClearField("gang"), g.spec.scheduling_policy.basic.SetInParent()),
     ['spec.schedulingPolicy.basic: Invalid value: "{}": field is immutable',
      "spec.schedulingPolicy.gang: Forbidden: field cannot be cleared once set"]),
    ("template-ref", _full_upstream(),
     lambda g: setattr(g.spec.workload_ref, "workload_name", "other"),
     ['spec.workloadRef: Invalid value: "{\\"templateName\\":\\"w\\",\\"workloadName\\":\\"other\\"}": '
      'field is immutable']),
    ("disruption-mode", _full_upstream(), lambda g: g.spec.disruption_mode.ClearField("single"),
     ['spec.disruptionMode: Invalid value: "{}": field is immutable']),
    ("priority-class", _full_upstream(), lambda g: setattr(g.spec, "priority_class_name", "low"),
     ['spec.priorityClassName: Invalid value: "low": field is immutable']),
    ("labels", _full_upstream(), lambda g: g.metadata.labels.update({"a": "b"}), []),
    ("coscheduling-min-member", group(COSCHEDULING, minMember=2), lambda g: setattr(g.spec, "min_member", 4),
     []),
]


@pytest.mark.parametrize(("old", "change", "expected"), [c[1:] for c in UPDATES], ids=[c[0] for c in UPDATES])
def test_pod_group_updates(
    old: objects_pb2.PodGroup, change: Callable[[objects_pb2.PodGroup], None], expected: list[str]
) -> None:
    assert validate_update(old, _changed(old, change)) == expected


# ------------------------------------------------------------------------------------ a pod's group


def test_a_pods_group_name_must_be_a_dns_subdomain() -> None:
    pod = builders.pod("w-0", image="trainer")
    pod.spec.scheduling_group.pod_group_name = "Bad_Name"
    assert any(
        p.startswith('spec.schedulingGroup.podGroupName: Invalid value: "Bad_Name": a lowercase RFC 1123')
        for p in validate_object(pod)
    ), validate_object(pod)
    pod.spec.scheduling_group.pod_group_name = "job.workers"
    assert validate_object(pod) == []


@pytest.mark.parametrize(("before", "after"), [(None, "g"), ("g", "h"), ("g", None)])
def test_a_pods_scheduling_group_is_immutable(before: str | None, after: str | None) -> None:
    old = builders.pod("w-0")
    if before is not None:
        old.spec.scheduling_group.pod_group_name = before
    new = objects_pb2.Pod()
    new.CopyFrom(old)
    new.spec.ClearField("scheduling_group")
    if after is not None:
        new.spec.scheduling_group.pod_group_name = after
    shown = after or ""
    expected = f'spec.schedulingGroup: Invalid value: "{shown}": field is immutable'
    assert validate_update(old, new) == [expected]


def test_a_pod_joins_by_its_scheduling_group_else_by_the_coscheduling_label() -> None:
    pod = builders.pod("w-0")
    assert podgroups.group_name_of(pod) == ""
    pod.metadata.labels[podgroups.POD_GROUP_LABEL] = "by-label"
    assert podgroups.group_name_of(pod) == "by-label"
    pod.spec.scheduling_group.pod_group_name = "by-spec"
    assert podgroups.group_name_of(pod) == "by-spec"
