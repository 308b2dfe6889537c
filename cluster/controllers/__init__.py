"""Controllers: loops that watch the API through `cluster.client` and write what they conclude back
through it, as kube-controller-manager's do. They know the wire and the API types, never the store or
the API server's code, so they run next to the API server (`podsched apiserver`) or anywhere else.

- `DisruptionController` keeps every PodDisruptionBudget's status current.
- `PodGarbageCollector` deletes the pods bound to nodes that no longer exist.
- `ResourceQuotaController` recounts every ResourceQuota's usage from its pods.
- `PodGroupController` keeps every PodGroup's status current from its pods.
- `LeaseCandidateGarbageCollector` deletes the LeaseCandidates nobody renewed for 30 minutes.
- `ResourceClaimController` makes pods' ResourceClaims from their ResourceClaimTemplates, and releases
  and deletes the claims of pods that are gone or done.
- `PersistentVolumeController` binds PersistentVolumeClaims to PersistentVolumes (completing the bindings
  the scheduler starts), hands claims to their class's provisioner, and reclaims released volumes.
- `EphemeralVolumeController` makes the PersistentVolumeClaim of each generic ephemeral volume of a pod,
  and deletes the claims of pods that are gone.
- `VolumeProvisioner` stands in for CSI external-provisioners: it makes the PersistentVolume of a claim
  handed to a provisioner it serves, on the topology of the node the scheduler chose.

Each is a `Controller` (a name and a ``run()``); ``FACTORIES`` makes each by its name. All but the
LeaseCandidate collector follow informers and sync one key at a time from a work queue:
`InformerController` is that skeleton.
"""

from cluster.controllers.controller import Controller, InformerController
from cluster.controllers.disruption import DEFAULT_RESYNC_PERIOD_S, DisruptionController
from cluster.controllers.ephemeral import EphemeralVolumeController
from cluster.controllers.factories import FACTORIES, ControllerFactory, ControllerSettings
from cluster.controllers.leasecandidategc import LeaseCandidateGarbageCollector
from cluster.controllers.persistentvolume import PersistentVolumeController
from cluster.controllers.podgc import DEFAULT_QUARANTINE_S, PodGarbageCollector
from cluster.controllers.podgroup import PodGroupController
from cluster.controllers.provisioner import VolumeProvisioner
from cluster.controllers.resourceclaim import ResourceClaimController
from cluster.controllers.resourcequota import DEFAULT_SYNC_PERIOD_S, ResourceQuotaController

__all__ = [
    "DEFAULT_QUARANTINE_S",
    "DEFAULT_RESYNC_PERIOD_S",
    "DEFAULT_SYNC_PERIOD_S",
    "FACTORIES",
    "Controller",
    "ControllerFactory",
    "ControllerSettings",
    "DisruptionController",
    "EphemeralVolumeController",
    "InformerController",
    "LeaseCandidateGarbageCollector",
    "PersistentVolumeController",
    "PodGarbageCollector",
    "PodGroupController",
    "ResourceClaimController",
    "ResourceQuotaController",
    "VolumeProvisioner",
]
