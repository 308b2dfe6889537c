"""How the fields scheduling.k8s.io/v1alpha3 repeats across PodGroup, CompositePodGroup and a Workload's
templates print: a policy, a topology constraint, a disruption mode, claims, priority."""

from __future__ import annotations

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.printers.describe import DescribeText
from cluster.printers.values import NONE


def policy_text(policy: objects_pb2.PodGroupSchedulingPolicy) -> str:
    if policy.HasField("gang"):
        return f"Gang (minCount {policy.gang.min_count})"
    return "Basic" if policy.HasField("basic") else NONE


def composite_policy_text(policy: objects_pb2.CompositePodGroupSchedulingPolicy) -> str:
    if policy.HasField("gang"):
        return f"Gang (minGroupCount {policy.gang.min_group_count})"
    return "Basic" if policy.HasField("basic") else NONE


def topology_text(spec: Message) -> str:
    """The topology keys of a spec's (or template's) schedulingConstraints, <none> without one."""
    if not spec.HasField("scheduling_constraints"):
        return NONE
    keys = [c.key for c in spec.scheduling_constraints.topology]  # type: ignore[attr-defined]
    return ",".join(keys) or NONE


def disruption_text(spec: Message) -> str:
    if not spec.HasField("disruption_mode"):
        return NONE
    return "All" if spec.disruption_mode.HasField("all") else "Single"  # type: ignore[attr-defined]


def priority_text(spec: Message) -> object:
    return spec.priority if spec.HasField("priority") else NONE  # type: ignore[attr-defined]


def scheduling_fields(text: DescribeText, spec: Message, policy: str, level: int = 0) -> None:
    """The scheduling fields every group kind and template has, as describe's fields."""
    text.field("Scheduling Policy", policy, level)
    text.field("Topology Key", topology_text(spec), level)
    text.field("Disruption Mode", disruption_text(spec), level)
    class_name: str = spec.priority_class_name  # type: ignore[attr-defined]
    text.field("Priority Class Name", class_name or NONE, level)
    text.field("Priority", priority_text(spec), level)
    if spec.HasField("preemption_policy"):
        text.field("Preemption Policy", spec.preemption_policy, level)  # type: ignore[attr-defined]


def claims_table(text: DescribeText, claims: list[objects_pb2.PodGroupResourceClaim],
                 generated: dict[str, str], level: int = 1) -> None:
    """A group's (or template's) claims: what each names, and the claim made for it (from status)."""
    rows = []
    for claim in claims:
        if claim.HasField("resource_claim_name"):
            source = f"ResourceClaim {claim.resource_claim_name}"
        else:
            source = f"ResourceClaimTemplate {claim.resource_claim_template_name}"
        rows.append([claim.name, source, generated.get(claim.name, NONE)])
    text.table(["Name", "Source", "Claim"], rows, level)
