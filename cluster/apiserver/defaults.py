"""Default values the API fills in, as Kubernetes' SetDefaults_* functions do for the same fields.

Only defaults that change behaviour are kept: the ones a scheduler reads (requests defaulted from
limits, allocatable from capacity, the scheduler name, the preemption policy of a class) and the ones
users see in every pod they get back (restart policy, grace period, image pull policy, port protocol).
They apply on every write, as Kubernetes defaults every object it decodes.
"""

from __future__ import annotations

from google.protobuf.message import Message

from cluster.api import objects_pb2

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_RESTART_POLICY = "Always"
#: v1.DefaultTerminationGracePeriodSeconds.
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_PROTOCOL = "TCP"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"
DEFAULT_SERVICE_TYPE = "ClusterIP"


def apply_defaults(obj: Message) -> None:
    if isinstance(obj, objects_pb2.Pod):
        default_pod_spec(obj.spec)
    elif isinstance(obj, objects_pb2.Node):
        default_node_status(obj.status)
    elif isinstance(obj, objects_pb2.PriorityClass):
        if not obj.HasField("preemption_policy"):
            obj.preemption_policy = DEFAULT_PREEMPTION_POLICY
    elif isinstance(obj, objects_pb2.Service):
        if not obj.spec.type:
            obj.spec.type = DEFAULT_SERVICE_TYPE
        for port in obj.spec.ports:
            if not port.protocol:
                port.protocol = DEFAULT_PROTOCOL
    elif isinstance(obj, (objects_pb2.ReplicaSet, objects_pb2.StatefulSet)):
        if not obj.spec.HasField("replicas"):
            obj.spec.replicas = 1
    elif isinstance(obj, objects_pb2.ReplicationController):
        default_replication_controller(obj)


def default_replication_controller(rc: objects_pb2.ReplicationController) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template's labels, one replica."""
    template_labels = rc.spec.template.metadata.labels
    if not rc.spec.selector:
        rc.spec.selector.update(template_labels)
    if not rc.metadata.labels:
        rc.metadata.labels.update(template_labels)
    if not rc.spec.HasField("replicas"):
        rc.spec.replicas = 1


def default_pod_spec(spec: objects_pb2.PodSpec) -> None:
    if not spec.scheduler_name:
        spec.scheduler_name = DEFAULT_SCHEDULER_NAME
    if not spec.restart_policy:
        spec.restart_policy = DEFAULT_RESTART_POLICY
    if not spec.HasField("termination_grace_period_seconds"):
        spec.termination_grace_period_seconds = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    for container in (*spec.init_containers, *spec.containers):
        default_container(container)


def default_container(container: objects_pb2.Container) -> None:
    if not container.image_pull_policy:
        container.image_pull_policy = "Always" if _pulls_latest(container.image) else "IfNotPresent"
    for port in container.ports:
        if not port.protocol:
            port.protocol = DEFAULT_PROTOCOL
    # A resource with a limit but no request requests its limit: the scheduler counts requests.
    requests = container.resources.requests
    for resource, limit in container.resources.limits.items():
        if resource not in requests:
            requests[resource] = limit


def _pulls_latest(image: str) -> bool:
    """Whether an image reference names the "latest" tag, explicitly or by giving none (a digest
    pins an image, so it is never "latest")."""
    if "@" in image:
        return False
    _, _, last_part = image.rpartition("/")
    _, colon, tag = last_part.partition(":")
    return not colon or tag == "latest"


def default_node_status(status: objects_pb2.NodeStatus) -> None:
    # A node that reports no allocatable offers its whole capacity.
    if not status.allocatable:
        for resource, quantity in status.capacity.items():
            status.allocatable[resource] = quantity
