"""scheduling.k8s.io/v1alpha2 Workload and PodGroup converted to and from v1alpha3 (the stored version):
the conversion functions on Kubernetes JSON, and the manifest loader reading v1alpha2 documents."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from cluster.api import conversion, kinds
from cluster.api.conversion import scheduling_v1alpha2
from cluster.api.manifest import ManifestError, load_text

V1ALPHA2 = "scheduling.k8s.io/v1alpha2"
V1ALPHA3 = "scheduling.k8s.io/v1alpha3"


def _pod_group(
    api_version: str, spec: dict[str, Any], status: dict[str, Any] | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": api_version, "kind": "PodGroup",
                           "metadata": {"name": "g", "namespace": "default"}, "spec": spec}
    if status is not None:
        doc["status"] = status
    return doc


def _workload(api_version: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Workload", "metadata": {"name": "w"}, "spec": spec}


GANG = {"gang": {"minCount": 4}}
CLAIMS = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
TOPOLOGY = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
CLAIM_STATUSES = [{"name": "gpu", "resourceClaimName": "g-gpu"}]
CONDITIONS = [{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "m",
               "lastTransitionTime": "2026-01-01T00:00:00Z"}]

#: (name, v1alpha2 document, v1alpha3 document): each converts to the other, both ways.
ROUND_TRIPS = [
    ("pod group with everything v1alpha2 has",
     _pod_group(V1ALPHA2, {
         "podGroupTemplateRef": {"workload": {"workloadName": "job", "podGroupTemplateName": "workers"}},
         "schedulingPolicy": GANG, "schedulingConstraints": TOPOLOGY, "resourceClaims": CLAIMS,
         "disruptionMode": "PodGroup", "priorityClassName": "high", "priority": 1000,
     }, {"conditions": CONDITIONS, "resourceClaimStatuses": CLAIM_STATUSES}),
     _pod_group(V1ALPHA3, {
         "workloadRef": {"workloadName": "job", "templateName": "workers"},
         "schedulingPolicy": GANG, "schedulingConstraints": TOPOLOGY, "resourceClaims": CLAIMS,
         "disruptionMode": {"all": {}}, "priorityClassName": "high", "priority": 1000,
     }, {"conditions": CONDITIONS, "resourceClaimStatuses": CLAIM_STATUSES})),
    ("disruption mode Pod is single",
     _pod_group(V1ALPHA2, {"schedulingPolicy": {"basic": {}}, "disruptionMode": "Pod"}),
     _pod_group(V1ALPHA3, {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}}})),
    ("pod group without a reference or a mode",
     _pod_group(V1ALPHA2, {"schedulingPolicy": GANG}),
     _pod_group(V1ALPHA3, {"schedulingPolicy": GANG})),
    ("workload templates",
     _workload(V1ALPHA2, {
         "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job"},
         "podGroupTemplates": [
             {"name": "workers", "schedulingPolicy": GANG, "disruptionMode": "PodGroup", "priority": 5},
             {"name": "driver", "schedulingPolicy": {"basic": {}}},
         ],
     }),
     _workload(V1ALPHA3, {
         "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job"},
         "podGroupTemplates": [
             {"name": "workers", "schedulingPolicy": GANG, "disruptionMode": {"all": {}}, "priority": 5},
             {"name": "driver", "schedulingPolicy": {"basic": {}}},
         ],
     })),
]


@pytest.mark.parametrize(("name", "served", "stored"), ROUND_TRIPS, ids=[case[0] for case in ROUND_TRIPS])
def test_converts_both_ways(name: str, served: dict[str, Any], stored: dict[str, Any]) -> None:
    assert scheduling_v1alpha2.to_stored(served) == stored
    assert scheduling_v1alpha2.to_served(stored) == served


def test_fields_only_v1alpha3_has_are_left_out_when_served_as_v1alpha2() -> None:
    stored_group = _pod_group(V1ALPHA3, {
        "parentCompositePodGroupName": "parent", "schedulingPolicy": GANG, "preemptionPolicy": "Never",
        "disruptionMode": {},
    }, {"conditions": CONDITIONS, "phase": "Running"})
    assert scheduling_v1alpha2.to_served(stored_group) == _pod_group(
        V1ALPHA2, {"schedulingPolicy": GANG}, {"conditions": CONDITIONS})
    stored_workload = _workload(V1ALPHA3, {
        "podGroupTemplates": [{"name": "a", "schedulingPolicy": GANG, "preemptionPolicy": "Never"}],
        "compositePodGroupTemplates": [{"name": "c", "schedulingPolicy": {"gang": {"minGroupCount": 2}}}],
    })
    assert scheduling_v1alpha2.to_served(stored_workload) == _workload(
        V1ALPHA2, {"podGroupTemplates": [{"name": "a", "schedulingPolicy": GANG}]})


BAD = [
    ("unknown disruption mode", _pod_group(V1ALPHA2, {"disruptionMode": "Pods"}),
     ['spec.disruptionMode: Unsupported value: "Pods": supported values: "Pod", "PodGroup"']),
    ("empty disruption mode", _pod_group(V1ALPHA2, {"disruptionMode": ""}),
     ['spec.disruptionMode: Unsupported value: "": supported values: "Pod", "PodGroup"']),
    ("template reference naming no workload", _pod_group(V1ALPHA2, {"podGroupTemplateRef": {}}),
     ["spec.podGroupTemplateRef: Required value: must specify one of: `workload`"]),
    ("each bad template mode", _workload(V1ALPHA2, {"podGroupTemplates": [
        {"name": "a", "disruptionMode": "All"}, {"name": "b"}, {"name": "c", "disruptionMode": "single"}]}),
     ['spec.podGroupTemplates[0].disruptionMode: Unsupported value: "All": supported values: "Pod", '
      '"PodGroup"',
      'spec.podGroupTemplates[2].disruptionMode: Unsupported value: "single": supported values: "Pod", '
      '"PodGroup"']),
]


@pytest.mark.parametrize(("name", "served", "problems"), BAD, ids=[case[0] for case in BAD])
def test_a_value_v1alpha3_cannot_hold_is_refused_naming_its_field(
    name: str, served: dict[str, Any], problems: list[str]
) -> None:
    with pytest.raises(conversion.ConversionError) as raised:
        scheduling_v1alpha2.to_stored(served)
    assert raised.value.problems == problems


def test_the_table_serves_podgroups_and_workloads_in_v1alpha2_besides_their_own_versions() -> None:
    assert conversion.served_versions(kinds.POD_GROUP) == (
        V1ALPHA3, "scheduling.x-k8s.io/v1alpha1", V1ALPHA2)
    assert conversion.served_versions(kinds.WORKLOAD) == (V1ALPHA3, V1ALPHA2)
    assert conversion.converted_versions(kinds.COMPOSITE_POD_GROUP) == ()
    assert conversion.conversion_of(V1ALPHA3, "PodGroup") is None


# ------------------------------------------------------------------------------------ manifests

V1ALPHA2_POD_GROUP = textwrap.dedent("""\
    apiVersion: scheduling.k8s.io/v1alpha2
    kind: PodGroup
    metadata:
      name: workers-0
    spec:
      podGroupTemplateRef:
        workload:
          workloadName: training
          podGroupTemplateName: workers
      schedulingPolicy:
        gang:
          minCount: 4
      disruptionMode: PodGroup
    """)


def test_a_v1alpha2_manifest_decodes_into_the_v1alpha3_object() -> None:
    [manifest] = load_text(V1ALPHA2_POD_GROUP, source="group.yaml")
    group = manifest.obj
    assert manifest.kind is kinds.POD_GROUP and manifest.warnings == []
    assert group.api_version == V1ALPHA3
    assert (group.spec.workload_ref.workload_name, group.spec.workload_ref.template_name) == (
        "training", "workers")
    assert group.spec.disruption_mode.HasField("all") and group.spec.scheduling_policy.gang.min_count == 4


def test_a_bad_v1alpha2_value_is_an_error_naming_file_document_and_field() -> None:
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n" + V1ALPHA2_POD_GROUP.replace(
        "disruptionMode: PodGroup", "disruptionMode: Pods")
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="group.yaml")
    assert raised.value.problems == [
        'group.yaml: document 2 (PodGroup workers-0): spec.disruptionMode: Unsupported value: "Pods": '
        'supported values: "Pod", "PodGroup"']


def test_v1alpha2_is_read_in_its_own_shape_so_v1alpha3_names_are_unknown_fields() -> None:
    text = V1ALPHA2_POD_GROUP + "  preemptionPolicy: Never\n  workloadRef: {workloadName: x}\n"
    [manifest] = load_text(text, source="group.yaml")
    assert manifest.warnings == ["spec.preemptionPolicy: unknown field", "spec.workloadRef: unknown field"]
    assert manifest.obj.spec.workload_ref.workload_name == "training"
    assert not manifest.obj.spec.HasField("preemption_policy")
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="group.yaml", strict=True)
    assert 'group.yaml: document 1 (PodGroup workers-0): spec.preemptionPolicy: unknown field' in (
        raised.value.problems)


def test_a_v1alpha3_struct_where_v1alpha2_takes_a_string_is_a_type_error() -> None:
    text = V1ALPHA2_POD_GROUP.replace("disruptionMode: PodGroup", "disruptionMode: {all: {}}")
    with pytest.raises(ManifestError) as raised:
        load_text(text, source="group.yaml")
    assert raised.value.problems == [
        "group.yaml: document 1 (PodGroup workers-0): spec.disruptionMode: Invalid value: object: "
        "expected a string, got object"]


def test_a_v1alpha2_workload_manifest_decodes_into_the_v1alpha3_object() -> None:
    text = textwrap.dedent("""\
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: Workload
        metadata:
          name: training
        spec:
          controllerRef: {apiGroup: batch, kind: Job, name: training}
          podGroupTemplates:
          - name: workers
            schedulingPolicy: {gang: {minCount: 4}}
            disruptionMode: Pod
        """)
    [manifest] = load_text(text, source="workload.yaml")
    workload = manifest.obj
    assert workload.api_version == V1ALPHA3 and manifest.warnings == []
    [template] = workload.spec.pod_group_templates
    assert template.name == "workers" and template.disruption_mode.HasField("single")
    bad = text.replace("disruptionMode: Pod", "disruptionMode: Never")
    with pytest.raises(ManifestError) as raised:
        load_text(bad, source="workload.yaml")
    assert raised.value.problems == [
        'workload.yaml: document 1 (Workload training): spec.podGroupTemplates[0].disruptionMode: '
        'Unsupported value: "Never": supported values: "Pod", "PodGroup"']
