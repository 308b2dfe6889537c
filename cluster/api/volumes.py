"""What several parts read of the storage kinds alike, as k8s.io/component-helpers' storage/volume and
pkg/apis/core/helper hold it: the annotations, the access modes, a volume's or a claim's class, the
claims a pod's volumes name, the default StorageClass."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cluster.api import objects_pb2

#: A StorageClass with this annotation "true" is the default for claims that name none.
IS_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
#: The class of a volume or a claim as it was written before spec.storageClassName existed.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
#: The node the scheduler chose for a WaitForFirstConsumer claim's provisioning.
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"

READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
#: Every access mode, in the order kubectl abbreviates them (RWO, ROX, RWX, RWOP).
ACCESS_MODES = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
_ABBREVIATIONS = dict(zip(ACCESS_MODES, ("RWO", "ROX", "RWX", "RWOP"), strict=True))


def access_modes_text(modes: Sequence[str]) -> str:
    """kubectl's GetAccessModesAsString: the modes held, abbreviated, in a fixed order."""
    return ",".join(_ABBREVIATIONS[mode] for mode in ACCESS_MODES if mode in modes)


def volume_class(pv: objects_pb2.PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
    beta = pv.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    return beta if beta is not None else pv.spec.storage_class_name


def claim_class(pvc: objects_pb2.PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName ("" when
    neither is set)."""
    beta = pvc.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if beta is not None:
        return beta
    return pvc.spec.storage_class_name if pvc.spec.HasField("storage_class_name") else ""


def claim_names(pod: objects_pb2.Pod) -> list[str]:
    """The claims the pod's persistentVolumeClaim volumes name, in volume order."""
    return [volume.persistent_volume_claim.claim_name for volume in pod.spec.volumes
            if volume.HasField("persistent_volume_claim")]


def uses_claims(pod: objects_pb2.Pod) -> bool:
    """Whether any volume of the pod uses a claim (cheap: most pods have no volumes at all)."""
    return any(volume.HasField("persistent_volume_claim") or volume.HasField("ephemeral")
               for volume in pod.spec.volumes)


def ephemeral_claim_name(pod: objects_pb2.Pod, volume: objects_pb2.Volume) -> str:
    """The claim the ephemeral volume controller makes for the pod's ephemeral ``volume``
    (ephemeral.VolumeClaimName)."""
    return f"{pod.metadata.name}-{volume.name}"


def is_default_class(meta: objects_pb2.ObjectMeta) -> bool:
    """IsDefaultAnnotation: either spelling of the default-class annotation is "true"."""
    annotations = meta.annotations
    return (annotations.get(IS_DEFAULT_CLASS_ANNOTATION) == "true"
            or annotations.get(BETA_IS_DEFAULT_CLASS_ANNOTATION) == "true")


def default_class(classes: Iterable[objects_pb2.StorageClass]) -> objects_pb2.StorageClass | None:
    """The default StorageClass among ``classes``, as upstream's GetDefaultClass picks it: of several
    defaults the newest (by creation time, then by name)."""
    defaults = [sc for sc in classes if is_default_class(sc.metadata)]
    if not defaults:
        return None
    # Newest first; of those created at once, the name that sorts first.
    return min(defaults, key=lambda sc: (-sc.metadata.creation_timestamp.seconds,
                                         -sc.metadata.creation_timestamp.nanos, sc.metadata.name))
