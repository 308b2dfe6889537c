"""PodGroup facts shared by the API server, the controllers and the CLI: its two spellings, how a pod
names its group, the group's minimum, and scheduler-plugins' phases.

One kind is served in two apiVersions (kinds.POD_GROUP): upstream's scheduling.k8s.io/v1alpha3 (a gang is
``spec.schedulingPolicy.gang.minCount``) and scheduler-plugins' Coscheduling scheduling.x-k8s.io/v1alpha1
(``spec.minMember``). A pod joins a group, in its own namespace, by ``spec.schedulingGroup.podGroupName``,
else by the label ``scheduling.x-k8s.io/pod-group``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cluster.api import objects_pb2
from cluster.api.kinds import POD_GROUP

UPSTREAM_API_VERSION = POD_GROUP.api_version
COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
#: The label by which a pod joins a scheduler-plugins Coscheduling PodGroup.
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

#: scheduler-plugins' PodGroup phases.
PENDING = "Pending"
SCHEDULING = "Scheduling"
SCHEDULED = "Scheduled"
RUNNING = "Running"
FINISHED = "Finished"
FAILED = "Failed"
UNKNOWN = "Unknown"
PHASES = (PENDING, RUNNING, SCHEDULING, SCHEDULED, UNKNOWN, FAILED, FINISHED)

#: metav1.Condition types of a v1alpha3 PodGroup. PodGroupInitiallyScheduled (v1alpha2's
#: PodGroupScheduled, renamed) reports the first success: once True it stays True.
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION_TARGET = "DisruptionTarget"


def is_coscheduling(group: objects_pb2.PodGroup) -> bool:
    """Whether ``group`` is written in scheduler-plugins' spelling (else upstream's)."""
    return group.api_version == COSCHEDULING_API_VERSION


def group_name_of(pod: objects_pb2.Pod) -> str:
    """The name of the PodGroup ``pod`` belongs to ("" for none): spec.schedulingGroup.podGroupName, else
    the Coscheduling label."""
    if pod.spec.scheduling_group.HasField("pod_group_name"):
        return pod.spec.scheduling_group.pod_group_name
    return pod.metadata.labels.get(POD_GROUP_LABEL, "")


def min_count(group: objects_pb2.PodGroup) -> int:
    """How many of the group's pods must be placed together: gang.minCount (upstream) or minMember
    (Coscheduling); 0 for a group that is no gang (upstream's basic policy, minMember 0)."""
    if is_coscheduling(group):
        return max(group.spec.min_member, 0)
    policy = group.spec.scheduling_policy
    return max(policy.gang.min_count, 0) if policy.HasField("gang") else 0


GroupTemplate = objects_pb2.PodGroupTemplate | objects_pb2.CompositePodGroupTemplate


def group_templates(spec: objects_pb2.WorkloadSpec) -> Iterator[tuple[str, GroupTemplate]]:
    """Every group template of a Workload, at every depth, with its path (``spec.podGroupTemplates[0]``,
    ``spec.compositePodGroupTemplates[1].podGroupTemplates[0]``), parents before children."""

    def walk(
        prefix: str, pod_groups: Iterable[objects_pb2.PodGroupTemplate],
        composites: Iterable[objects_pb2.CompositePodGroupTemplate],
    ) -> Iterator[tuple[str, GroupTemplate]]:
        for index, template in enumerate(pod_groups):
            yield f"{prefix}podGroupTemplates[{index}]", template
        for index, composite in enumerate(composites):
            path = f"{prefix}compositePodGroupTemplates[{index}]"
            yield path, composite
            yield from walk(f"{path}.", composite.pod_group_templates,
                            composite.composite_pod_group_templates)

    return walk("spec.", spec.pod_group_templates, spec.composite_pod_group_templates)
