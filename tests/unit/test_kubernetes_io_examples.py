"""The YAML examples of kubernetes.io's Kubernetes 1.36 pages on workload-aware scheduling (stored
unchanged in tests/data/kubernetes_io/) decode with podsched's manifest loader, scheduling.k8s.io/v1alpha2
into the stored v1alpha3 objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.api import kinds
from cluster.api.manifest import load_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "kubernetes_io"
V1ALPHA3 = "scheduling.k8s.io/v1alpha3"


@pytest.fixture(autouse=True)
def _workloads_served(monkeypatch: pytest.MonkeyPatch) -> None:
    # Workload decodes once the registry of kinds lists it; until then the test lists it itself.
    if kinds.WORKLOAD not in kinds.KINDS:
        monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, kinds.WORKLOAD))


def test_every_example_names_its_page_in_its_first_line() -> None:
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert len(files) == 6
    for path in files:
        assert path.read_text().startswith("# https://kubernetes.io/docs/concepts/workloads/"), path.name


#: file → (kind, name, apiVersion) of each document, and the decoder's warnings.
DECODED = {
    "workload-api-workload.yaml": ([("Workload", "training-job-workload", V1ALPHA3)], []),
    "podgroup-api-gang.yaml": ([("PodGroup", "training-worker-0", V1ALPHA3)], []),
    "podgroup-api-how-it-fits-together.yaml": (
        [("Workload", "training-policy", V1ALPHA3), ("PodGroup", "training-worker-0", V1ALPHA3),
         ("Pod", "worker-0", "v1")], []),
    "scheduling-group-pod.yaml": ([("Pod", "worker-0", "v1")], []),
    "topology-aware-scheduling-podgroup.yaml": ([("PodGroup", "example-podgroup", V1ALPHA3)], []),
    # The page puts priorityClassName where the API has no such field.
    "disruption-and-priority-podgroup.yaml": (
        [("PodGroup", "job-1", V1ALPHA3)], ["spec.schedulingPolicy.priorityClassName: unknown field"]),
}


@pytest.mark.parametrize("name", sorted(DECODED))
def test_each_example_decodes(name: str) -> None:
    documents, warnings = DECODED[name]
    manifests = load_paths([str(EXAMPLES / name)])
    assert [(m.kind.name, m.obj.metadata.name, m.obj.api_version) for m in manifests] == documents
    assert [warning for m in manifests for warning in m.warnings] == warnings


def test_the_v1alpha2_fields_arrive_in_their_v1alpha3_places() -> None:
    [workload] = load_paths([str(EXAMPLES / "workload-api-workload.yaml")])
    [template] = workload.obj.spec.pod_group_templates
    assert (template.name, template.priority_class_name, template.scheduling_policy.gang.min_count) == (
        "workers", "high-priority", 4)
    assert template.disruption_mode.HasField("all")
    _, group, _ = load_paths([str(EXAMPLES / "podgroup-api-how-it-fits-together.yaml")])
    reference = group.obj.spec.workload_ref
    assert (reference.workload_name, reference.template_name) == ("training-policy", "worker")
    [constrained] = load_paths([str(EXAMPLES / "topology-aware-scheduling-podgroup.yaml")])
    assert [c.key for c in constrained.obj.spec.scheduling_constraints.topology] == [
        "topology.kubernetes.io/rack"]
