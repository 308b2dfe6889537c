"""Validation of a pod's volumes and of what its containers mount (Kubernetes' ValidateVolumes,
validateVolumeMounts and validateVolumeDevices): unique, valid names, one source each, the modelled
sources' fields (an ephemeral volume's claim template is a claim spec), and mounts and devices that name
volumes the pod has."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cluster.api import objects_pb2
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain
from cluster.api.validation.field import (
    check,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from cluster.api.validation.meta import validate_template_meta
from cluster.api.validation.persistentvolumes import (
    validate_azure_disk,
    validate_claim_spec,
    validate_partition,
)
from cluster.api.validation.storage import validate_csi_driver_name

#: A pod volume's sources in the order upstream counts them (the second one found is the one refused): the
#: field, the name its refusal gives and the path of its own errors, upstream's spellings kept (a second
#: downwardAPI refused as "downwarAPI", a gcePersistentDisk's errors under "persistentDisk").
VOLUME_SOURCES = (
    ("empty_dir", "emptyDir", "emptyDir"), ("host_path", "hostPath", "hostPath"),
    ("git_repo", "gitRepo", "gitRepo"), ("gce_persistent_disk", "gcePersistentDisk", "persistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret", "secret"), ("nfs", "nfs", "nfs"), ("iscsi", "iscsi", "iscsi"),
    ("glusterfs", "glusterfs", "glusterfs"), ("flocker", "flocker", "flocker"),
    ("persistent_volume_claim", "persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd", "rbd"),
    ("cinder", "cinder", "cinder"), ("cephfs", "cephFS", "cephfs"), ("quobyte", "quobyte", "quobyte"),
    ("downward_api", "downwarAPI", "downwardAPI"), ("fc", "fc", "fc"),
    ("flex_volume", "flexVolume", "flexVolume"), ("config_map", "configMap", "configMap"),
    ("azure_file", "azureFile", "azureFile"), ("vsphere_volume", "vsphereVolume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume", "portworxVolume"), ("azure_disk", "azureDisk", "azureDisk"),
    ("storageos", "storageos", "storageos"), ("projected", "projected", "projected"),
    ("scale_io", "scaleIO", "scaleIO"), ("csi", "csi", "csi"), ("ephemeral", "ephemeral", "ephemeral"),
    ("image", "image", "image"),
)
MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
RECURSIVE_READ_ONLY_MODES = ("Disabled", "Enabled", "IfPossible")
#: The sources a volume device (a raw block volume) may come from.
_CLAIM_SOURCES = ("persistent_volume_claim", "ephemeral")
# Upstream's iscsiInitiator*Regex: an iqn is searched for (not anchored at its start), the others matched.
_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\s]+)$", re.ASCII)
_EUI = re.compile(r"eui.[A-Za-z0-9]{16}", re.ASCII)
_NAA = re.compile(r"naa.[A-Za-z0-9]{32}", re.ASCII)
_IQN_PREFIXES = ("iqn", "eui", "naa")
_IQN_PREFIXED = "must be valid format starting with iqn, eui, or naa"
_IQN_FORMAT = "must be valid format"
_INITIATOR_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                       "iscsi.initiatorName is specified.")


def _iqn_problems(value: str, path: str) -> list[str]:
    if not value.startswith(_IQN_PREFIXES):
        return [invalid(path, value, _IQN_PREFIXED)]
    matched = (_IQN.search(value) if value.startswith("iqn") else
               (_EUI if value.startswith("eui") else _NAA).fullmatch(value))
    return [] if matched else [invalid(path, value, _IQN_FORMAT)]


def _iscsi(volume: objects_pb2.Volume, path: str) -> list[str]:
    """validateISCSIVolumeSource, and the initiator name's limit on the volume's name."""
    source = volume.iscsi
    problems = []
    if not source.target_portal:
        problems.append(required(f"{path}.targetPortal"))
    if not source.iqn:
        problems.append(required(f"{path}.iqn"))
    else:
        problems += _iqn_problems(source.iqn, f"{path}.iqn")
    if source.lun < 0 or source.lun > 255:
        problems.append(invalid(f"{path}.lun", source.lun, "must be between 0 and 255, inclusive"))
    if (source.chap_auth_discovery or source.chap_auth_session) and not source.HasField("secret_ref"):
        problems.append(required(f"{path}.secretRef"))
    if source.HasField("initiator_name"):
        problems += _iqn_problems(source.initiator_name, f"{path}.initiatorname")
        if len(f"{volume.name}:{source.target_portal}") > 64:
            problems.append(invalid(f"{path}.name", volume.name, _INITIATOR_TOO_LONG))
    return problems


def _source_problems(volume: objects_pb2.Volume, source: str, path: str) -> list[str]:
    """The rules of the modelled sources; the others are kept as written."""
    if source == "persistent_volume_claim":
        return [] if volume.persistent_volume_claim.claim_name else [required(f"{path}.claimName")]
    if source == "ephemeral":
        if not volume.ephemeral.HasField("volume_claim_template"):
            return [required(f"{path}.volumeClaimTemplate")]
        template = volume.ephemeral.volume_claim_template
        return (validate_template_meta(template.metadata, f"{path}.volumeClaimTemplate.metadata")
                + validate_claim_spec(template.spec, f"{path}.volumeClaimTemplate.spec"))
    if source == "csi":
        problems = validate_csi_driver_name(volume.csi.driver, f"{path}.driver")
        secret = volume.csi.node_publish_secret_ref
        if volume.csi.HasField("node_publish_secret_ref") and not secret.name:
            problems.append(required(f"{path}.nodePublishSecretRef.name"))
        return problems
    if source == "gce_persistent_disk":
        disk = volume.gce_persistent_disk
        return ([] if disk.pd_name else [required(f"{path}.pdName")]) + validate_partition(disk.partition,
                                                                                     f"{path}.partition")
    if source == "aws_elastic_block_store":
        ebs = volume.aws_elastic_block_store
        return ([] if ebs.volume_id else [required(f"{path}.volumeID")]) + validate_partition(ebs.partition,
                                                                                        f"{path}.partition")
    if source == "iscsi":
        return _iscsi(volume, path)
    if source == "rbd":
        problems = [] if volume.rbd.monitors else [required(f"{path}.monitors")]
        return problems + ([] if volume.rbd.image else [required(f"{path}.image")])
    if source == "azure_disk":
        return validate_azure_disk(volume.azure_disk, path)
    return []


def validate_volumes(
    pod_name: str, volumes: Sequence[objects_pb2.Volume], path: str
) -> tuple[dict[str, objects_pb2.Volume], list[str]]:
    """ValidateVolumes: the valid volumes by name, and every problem."""
    problems: list[str] = []
    valid: dict[str, objects_pb2.Volume] = {}
    # The claims the ephemeral volume controller will make for this pod: a pod may not name them itself.
    created = {f"{pod_name}-{v.name}" for v in volumes if v.HasField("ephemeral")} if pod_name else set()
    for i, volume in enumerate(volumes):
        where = f"{path}[{i}]"
        own: list[str] = []
        sources = 0
        for field, json_name, source_path in VOLUME_SOURCES:
            if not volume.HasField(field):
                continue
            # Upstream counts an emptyDir, always first, without refusing it.
            if sources and field != "empty_dir":
                own.append(forbidden(f"{where}.{json_name}", "may not specify more than 1 volume type"))
                continue
            sources += 1
            own += _source_problems(volume, field, f"{where}.{source_path}")
            if field == "ephemeral" and pod_name and volume.name:
                claim_name = f"{pod_name}-{volume.name}"
                own += [invalid(f"{where}.name", volume.name, f'PVC name "{claim_name}": {problem}')
                        for problem in is_dns1123_subdomain(claim_name)]
        if not sources:
            own.append(required(where, "must specify a volume type"))
        if not volume.name:
            own.append(required(f"{where}.name"))
        else:
            own += check(f"{where}.name", volume.name, is_dns1123_label)
        if volume.name in valid:
            own.append(duplicate(f"{where}.name", volume.name))
        if own:
            problems += own
        else:
            valid[volume.name] = volume
        claim = volume.persistent_volume_claim.claim_name
        if volume.HasField("persistent_volume_claim") and claim in created:
            problems.append(invalid(f"{where}.persistentVolumeClaim.claimName", claim,
                                    "must not reference a PVC that gets created for an ephemeral volume"))
    return valid, problems


def _descending_path(target: str, path: str) -> list[str]:
    """validateLocalDescendingPath: relative, and no '..' element."""
    problems = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    if ".." in target.replace("\\", "/").split("/"):
        problems.append(invalid(path, target, "must not contain '..'"))
    return problems


def _recursive_read_only(mount: objects_pb2.VolumeMount, path: str) -> list[str]:
    """validateMountRecursiveReadOnly: Enabled and IfPossible only on a read-only mount that propagates
    nothing."""
    if not mount.HasField("recursive_read_only"):
        return []
    mode = mount.recursive_read_only
    if mode == "Disabled":
        return []
    if mode not in RECURSIVE_READ_ONLY_MODES:
        return [not_supported(path, mode, RECURSIVE_READ_ONLY_MODES)]
    problems = [] if mount.read_only else [forbidden(path, "may only be specified when readOnly is true")]
    if mount.HasField("mount_propagation") and mount.mount_propagation != "None":
        problems.append(forbidden(path,
                                  "may only be specified when mountPropagation is None or not specified"))
    return problems


def validate_volume_mounts(
    container: objects_pb2.Container, volumes: dict[str, objects_pb2.Volume], path: str
) -> list[str]:
    """validateVolumeMounts and validateVolumeDevices: each names a volume of the pod, at a unique path;
    a device is a claim's (a raw block volume), and no volume is both mounted and a device."""
    problems: list[str] = []
    device_names = {device.name for device in container.volume_devices}
    device_paths = {device.device_path for device in container.volume_devices}
    mount_paths: set[str] = set()
    for i, mount in enumerate(container.volume_mounts):
        where = f"{path}.volumeMounts[{i}]"
        if not mount.name:
            problems.append(required(f"{where}.name"))
        if mount.name not in volumes:
            problems.append(not_found(f"{where}.name", mount.name))
        if not mount.mount_path:
            problems.append(required(f"{where}.mountPath"))
        if mount.mount_path in mount_paths:
            problems.append(invalid(f"{where}.mountPath", mount.mount_path, "must be unique"))
        mount_paths.add(mount.mount_path)
        if mount.name in device_names:
            problems.append(invalid(f"{where}.name", mount.name, "must not already exist in volumeDevices"))
        if mount.mount_path in device_paths:
            problems.append(invalid(f"{where}.mountPath", mount.mount_path,
                                    "must not already exist as a path in volumeDevices"))
        # Upstream names these fields without the mount's index.
        if mount.sub_path:
            problems += _descending_path(mount.sub_path, f"{path}.volumeMounts.subPath")
        if mount.sub_path_expr:
            if mount.sub_path:
                problems.append(invalid(f"{where}.subPathExpr", mount.sub_path_expr,
                                        "subPathExpr and subPath are mutually exclusive"))
            problems += _descending_path(mount.sub_path_expr, f"{path}.volumeMounts.subPathExpr")
        if mount.HasField("mount_propagation") and mount.mount_propagation not in MOUNT_PROPAGATIONS:
            problems.append(not_supported(f"{path}.volumeMounts.mountPropagation", mount.mount_propagation,
                                          MOUNT_PROPAGATIONS))
        problems += _recursive_read_only(mount, f"{path}.volumeMounts.recursiveReadOnly")
    mount_names = {mount.name for mount in container.volume_mounts}
    names: set[str] = set()
    paths: set[str] = set()
    for i, device in enumerate(container.volume_devices):
        where = f"{path}.volumeDevices[{i}]"
        volume = volumes.get(device.name)
        if not device.name:
            problems.append(required(f"{where}.name"))
        if device.name in names:
            problems.append(invalid(f"{where}.name", device.name, "must be unique"))
        if volume is None:
            problems.append(not_found(f"{where}.name", device.name))
        if volume is None or not any(volume.HasField(s) for s in _CLAIM_SOURCES):
            problems.append(invalid(f"{where}.name", device.name, "can only use volume source type of "
                                    "PersistentVolumeClaim or Ephemeral for block mode"))
        if not device.device_path:
            problems.append(required(f"{where}.devicePath"))
        if device.device_path in paths:
            problems.append(invalid(f"{where}.devicePath", device.device_path, "must be unique"))
        if ".." in device.device_path.split("/"):
            problems.append(invalid(f"{where}.devicePath", device.device_path,
                                    "can not contain backsteps ('..')"))
        else:
            paths.add(device.device_path)
        if device.name in mount_names:
            problems.append(invalid(f"{where}.name", device.name, "must not already exist in volumeMounts"))
        if device.device_path in mount_paths:
            problems.append(invalid(f"{where}.devicePath", device.device_path,
                                    "must not already exist as a path in volumeMounts"))
        if device.name:
            names.add(device.name)
    return problems


def validate_pod_volumes(pod: objects_pb2.Pod) -> list[str]:
    """A pod's volumes, and its (init) containers' mounts and devices of them."""
    spec = pod.spec
    volumes, problems = validate_volumes(pod.metadata.name, spec.volumes, "spec.volumes")
    for field_name, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, container in enumerate(containers):
            problems += validate_volume_mounts(container, volumes, f"spec.{field_name}[{i}]")
    return problems
