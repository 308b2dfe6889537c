"""How clients print Pod objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import containers, kinds, objects_pb2, timeutil
from cluster.api.dra import podclaims
from cluster.api.schedulinggates import SCHEDULING_GATED, is_reported_gated
from cluster.printers.describe import DescribeText, Reader, container_section, name_fields, time_text
from cluster.printers.printer import Explained, Printer
from cluster.printers.resourceclaims import claim_state
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age, or_none, toleration_text


def pod_status(pod: objects_pb2.Pod) -> str:
    """kubectl's STATUS: Terminating once deletion began, else SchedulingGated while the PodScheduled
    condition says so, else the reason if any, else the phase."""
    if timeutil.is_set(pod.metadata.deletion_timestamp):
        return "Terminating"
    if is_reported_gated(pod):
        return SCHEDULING_GATED
    return pod.status.reason or pod.status.phase or "Unknown"


def pod_ready(pod: objects_pb2.Pod) -> str:
    """READY: containers ready / containers, where the containers are the app containers and the
    sidecars, as kubectl counts them. podsched has no container statuses: the pod's Ready condition
    decides, and without one a Running pod counts as ready (the API server stands in for a kubelet
    whose containers start at once)."""
    total = sum(1 for _ in containers.long_running_containers(pod))
    condition = next((c for c in pod.status.conditions if c.type == "Ready"), None)
    ready = condition.status == "True" if condition is not None else pod.status.phase == "Running"
    return f"{total if ready else 0}/{total}"


def _pod_row(pod: objects_pb2.Pod, now: float) -> list[Cell]:
    # podsched models no container statuses, so no restarts, and no readiness gates.
    return [
        pod.metadata.name, pod_ready(pod), pod_status(pod), "0", age(pod.metadata, now),
        or_none(pod.status.pod_ip), or_none(pod.spec.node_name), or_none(pod.status.nominated_node_name),
        NONE,
    ]


async def _describe_pod(reader: Reader, pod: objects_pb2.Pod, text: DescribeText) -> None:
    spec, status = pod.spec, pod.status
    name_fields(text, pod, namespaced=True)
    text.field("Priority", spec.priority if spec.HasField("priority") else NONE)
    if spec.priority_class_name:
        text.field("Priority Class Name", spec.priority_class_name)
    if spec.HasField("preemption_policy"):
        text.field("Preemption Policy", spec.preemption_policy)
    text.field("Scheduler", spec.scheduler_name or NONE)
    node = spec.node_name + (f"/{status.host_ip}" if status.host_ip else "") if spec.node_name else NONE
    text.field("Node", node)
    text.field("Start Time", time_text(status.start_time))
    text.mapping("Labels", pod.metadata.labels)
    text.mapping("Annotations", pod.metadata.annotations, sep=": ")
    if timeutil.is_set(pod.metadata.deletion_timestamp):
        # deletionTimestamp is when the grace period ends and the server removes the pod.
        text.field("Status", "Terminating")
        text.field("Termination Grace Period", f"{pod.metadata.deletion_grace_period_seconds}s")
        text.field("Deletion Time", time_text(pod.metadata.deletion_timestamp))
    else:
        text.field("Status", status.phase or "Unknown")
    if status.reason:
        text.field("Reason", status.reason)
    if status.message:
        text.field("Message", status.message)
    text.field("IP", status.pod_ip)
    text.field("Nominated Node", status.nominated_node_name or NONE)
    if spec.init_containers:
        text.section("Init Containers")
        for container in spec.init_containers:
            container_section(text, container)
    text.section("Containers")
    for container in spec.containers:
        container_section(text, container)
    if status.conditions:
        text.section("Conditions")
        text.table(["Type", "Status"], [[c.type, c.status] for c in status.conditions])
    text.mapping("Node-Selectors", spec.node_selector)
    tolerations = [toleration_text(t) for t in spec.tolerations]
    text.field("Tolerations", "\n".join(tolerations) if tolerations else NONE)
    if spec.scheduling_gates:
        text.field("Scheduling Gates", "\n".join(gate.name for gate in spec.scheduling_gates))
    if spec.resource_claims:
        await _resource_claims_section(reader, pod, text)


async def _resource_claims_section(reader: Reader, pod: objects_pb2.Pod, text: DescribeText) -> None:
    """Each entry of spec.resourceClaims: where its claim comes from, the claim's name and its state."""
    claims = {claim.metadata.name: claim
              for claim in (await reader.list_all(kinds.RESOURCE_CLAIM, pod.metadata.namespace)).items}
    rows = []
    for pod_claim, name in podclaims.claims_of(pod):
        source = (f"template {pod_claim.resource_claim_template_name}"
                  if pod_claim.HasField("resource_claim_template_name") else "claim")
        if name is None:
            shown, state = NONE, "not needed" if podclaims.claim_not_needed(pod, pod_claim) else "not created"
        else:
            claim = claims.get(name)
            shown, state = name, claim_state(claim) if claim is not None else "not found"
        rows.append([pod_claim.name, source, shown, state])
    text.section("Resource Claims")
    text.table(["Name", "From", "Claim", "State"], rows)


PRINTER = Printer(
    kinds.POD,
    Columns((
        NAME,
        Column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", "The aggregate status of the containers in this pod."),
        Column("Restarts", "The number of times the containers in this pod have been restarted and when the "
                           "last container in this pod has restarted."),
        AGE,
        wide(Column("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty "
                          "if not yet allocated.")),
        wide(Column("Node", "NodeName indicates in which node this pod is scheduled.")),
        wide(Column("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on "
                                      "the node, but it cannot be scheduled right away as preemption victims "
                                      "receive their graceful termination periods.")),
        wide(Column("Readiness Gates", "If specified, all readiness gates will be evaluated for pod "
                                       "readiness.")),
    ), _pod_row),
    _describe_pod,
    explained=Explained.POD_ATTEMPT,
)
