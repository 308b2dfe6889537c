"""Every controller by name, and how to make it from a client and the settings `podsched apiserver`'s
flags give (``FACTORIES``): ``--controllers`` picks from this table."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from cluster.client import Client
from cluster.controllers.controller import Controller
from cluster.controllers.disruption import DisruptionController
from cluster.controllers.ephemeral import EphemeralVolumeController
from cluster.controllers.leasecandidategc import LeaseCandidateGarbageCollector
from cluster.controllers.persistentvolume import PersistentVolumeController
from cluster.controllers.podgc import DEFAULT_QUARANTINE_S, PodGarbageCollector
from cluster.controllers.podgroup import PodGroupController
from cluster.controllers.provisioner import VolumeProvisioner
from cluster.controllers.resourceclaim import ResourceClaimController
from cluster.controllers.resourcequota import DEFAULT_SYNC_PERIOD_S, ResourceQuotaController


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """What a user may set of the controllers."""

    pod_gc_quarantine_s: float = DEFAULT_QUARANTINE_S
    resource_quota_sync_period_s: float = DEFAULT_SYNC_PERIOD_S
    #: The StorageClass provisioners the volume provisioner serves (empty: all but
    #: kubernetes.io/no-provisioner).
    volume_provisioners: tuple[str, ...] = ()


ControllerFactory = Callable[[Client, ControllerSettings], Controller]

#: Every controller by name, in the order they start.
FACTORIES: Mapping[str, ControllerFactory] = MappingProxyType({
    DisruptionController.name: lambda client, _settings: DisruptionController(client),
    PodGarbageCollector.name:
        lambda client, settings: PodGarbageCollector(client, quarantine_s=settings.pod_gc_quarantine_s),
    ResourceQuotaController.name: lambda client, settings: ResourceQuotaController(
        client, sync_period_s=settings.resource_quota_sync_period_s),
    PodGroupController.name: lambda client, _settings: PodGroupController(client),
    LeaseCandidateGarbageCollector.name: lambda client, _settings: LeaseCandidateGarbageCollector(client),
    ResourceClaimController.name: lambda client, _settings: ResourceClaimController(client),
    PersistentVolumeController.name: lambda client, _settings: PersistentVolumeController(client),
    EphemeralVolumeController.name: lambda client, _settings: EphemeralVolumeController(client),
    VolumeProvisioner.name:
        lambda client, settings: VolumeProvisioner(client, provisioners=settings.volume_provisioners),
})
