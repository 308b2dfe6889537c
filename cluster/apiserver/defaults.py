"""Default values of a pod's spec, as Kubernetes' SetDefaults_* functions fill the same fields; each
kind's registry module (cluster/apiserver/registry) applies its kind's defaults, on every write, as
Kubernetes defaults every object it decodes.

Only defaults that change behaviour are kept: the ones a scheduler reads (requests defaulted from
limits, the scheduler name, an ephemeral volume's claim template's volume mode) and the ones users see in
every pod they get back (restart policy, grace period, image pull policy, port protocol, a volume with no
source an emptyDir). The other kinds' (a node's allocatable from its capacity, a
class's preemption policy, ...) are in their registry modules.
"""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.validation.podvolumes import VOLUME_SOURCES

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_RESTART_POLICY = "Always"
#: v1.DefaultTerminationGracePeriodSeconds.
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_PROTOCOL = "TCP"
DEFAULT_VOLUME_MODE = "Filesystem"


def default_pod_spec(spec: objects_pb2.PodSpec) -> None:
    if not spec.scheduler_name:
        spec.scheduler_name = DEFAULT_SCHEDULER_NAME
    if not spec.restart_policy:
        spec.restart_policy = DEFAULT_RESTART_POLICY
    if not spec.HasField("termination_grace_period_seconds"):
        spec.termination_grace_period_seconds = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    for container in (*spec.init_containers, *spec.containers):
        default_container(container)
    for volume in spec.volumes:
        default_volume(volume)


def default_volume(volume: objects_pb2.Volume) -> None:
    """SetDefaults_Volume: a volume that names no source is an emptyDir; an ephemeral volume's claim
    template is defaulted as a claim's spec."""
    if not any(volume.HasField(field) for field, _, _ in VOLUME_SOURCES):
        volume.empty_dir.SetInParent()
    if volume.HasField("ephemeral"):
        default_claim_spec(volume.ephemeral.volume_claim_template.spec)


def default_claim_spec(spec: objects_pb2.PersistentVolumeClaimSpec) -> None:
    """SetDefaults_PersistentVolumeClaimSpec: a claim's, and an ephemeral volume's claim template's."""
    if not spec.HasField("volume_mode"):
        spec.volume_mode = DEFAULT_VOLUME_MODE


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
