"""What a PersistentVolumeClaim's binding means, shared by whatever binds claims to volumes (the PV
controller, and the scheduler's volume binding): the annotations of the binding protocol and the
matching of a claim to a volume (k8s.io/component-helpers/storage/volume and the PV controller's
index.go); the classes are read as cluster.api.volumes reads them.

A volume matches a claim when it is not bound to another claim, is at least as large as the claim's
storage request, has the claim's volumeMode (absent means Filesystem on either side), is not being
deleted, carries the claim's class, is Available, and its labels match the claim's selector. Among the
matches the smallest wins; a volume pre-bound to the claim (by claimRef) wins over all of them. The PV
controller searches the volumes by access modes, those with the fewest modes that include the claim's
first (`find_best_match_for_claim`); the scheduler checks the access modes and a node of its own through
``fits``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity
from cluster.api.selectors import LabelSelector
from cluster.api.volumes import claim_class, volume_class

#: On a claim: the binding has passed its initial setup (the PV controller sets it once it bound the claim).
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: On a volume or a claim: the controller, not the user, installed the binding.
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: On a claim: the provisioner asked to make its volume (and the deprecated beta spelling, set alike).
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
#: On a volume: the provisioner that made it.
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
#: A class whose volumes are all made by hand: nobody provisions for it.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

STORAGE = "storage"
FILESYSTEM = "Filesystem"
BLOCK = "Block"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"

VOLUME_PENDING = "Pending"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
VOLUME_FAILED = "Failed"
CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"

RECLAIM_RETAIN = "Retain"
RECLAIM_DELETE = "Delete"
RECLAIM_RECYCLE = "Recycle"

#: Matches a volume against what the caller knows of its own (the scheduler: a node and access modes).
VolumeFits = Callable[[objects_pb2.PersistentVolume], bool]


def requested_storage(claim: objects_pb2.PersistentVolumeClaim) -> Fraction:
    """The claim's storage request (0 when it asks for none)."""
    text = claim.spec.resources.requests.get(STORAGE)
    return parse_quantity(text) if text else Fraction(0)


def volume_capacity(volume: objects_pb2.PersistentVolume) -> Fraction:
    text = volume.spec.capacity.get(STORAGE)
    return parse_quantity(text) if text else Fraction(0)


def is_volume_bound_to_claim(volume: objects_pb2.PersistentVolume,
                             claim: objects_pb2.PersistentVolumeClaim) -> bool:
    """Whether ``volume`` is pre-bound or bound to ``claim``: its claimRef names the claim, and carries the
    claim's uid if it carries one."""
    if not volume.spec.HasField("claim_ref"):
        return False
    ref = volume.spec.claim_ref
    if ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def volume_mode_mismatches(claim: objects_pb2.PersistentVolumeClaim,
                           volume: objects_pb2.PersistentVolume) -> bool:
    """Whether the claim's volumeMode differs from the volume's (either absent is Filesystem)."""
    wanted = claim.spec.volume_mode if claim.spec.HasField("volume_mode") else FILESYSTEM
    offered = volume.spec.volume_mode if volume.spec.HasField("volume_mode") else FILESYSTEM
    return wanted != offered


def access_modes_satisfied(claim: objects_pb2.PersistentVolumeClaim,
                           volume: objects_pb2.PersistentVolume) -> bool:
    """Whether the volume offers every access mode the claim asks for."""
    return set(claim.spec.access_modes) <= set(volume.spec.access_modes)


def find_matching_volume(
    claim: objects_pb2.PersistentVolumeClaim,
    volumes: Iterable[objects_pb2.PersistentVolume],
    *,
    delay_binding: bool = False,
    fits: VolumeFits | None = None,
    excluded: frozenset[str] = frozenset(),
) -> objects_pb2.PersistentVolume | None:
    """The best volume of ``volumes`` for ``claim`` (FindMatchingVolume), or None.

    ``delay_binding`` (the PV controller on a WaitForFirstConsumer claim): only a volume pre-bound to the
    claim is returned. ``fits``: the scheduler's check of the volume's node affinity and access modes; a
    pre-bound volume that does not fit means no match at all. ``excluded``: names of volumes already
    chosen for other claims of the same pod."""
    requested = requested_storage(claim)
    wanted_class = claim_class(claim)
    selector = LabelSelector.from_proto(claim.spec.selector) if claim.spec.HasField("selector") else None
    best: objects_pb2.PersistentVolume | None = None
    best_size = Fraction(0)
    for volume in volumes:
        if volume.metadata.name in excluded:
            continue
        bound_here = is_volume_bound_to_claim(volume, claim)
        if volume.spec.HasField("claim_ref") and not bound_here:
            continue
        size = volume_capacity(volume)
        if size < requested or volume_mode_mismatches(claim, volume):
            continue
        if volume.metadata.HasField("deletion_timestamp"):
            continue
        fitting = fits is None or fits(volume)
        if bound_here:
            return volume if fitting else None
        if delay_binding and fits is None:
            continue  # the scheduler binds this claim, on the node it chooses
        if volume.status.phase != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(volume.metadata.labels):
            continue
        if volume_class(volume) != wanted_class or not fitting:
            continue
        if best is None or size < best_size:
            best, best_size = volume, size
    return best


def find_best_match_for_claim(
    claim: objects_pb2.PersistentVolumeClaim,
    volumes: Iterable[objects_pb2.PersistentVolume],
    *,
    delay_binding: bool = False,
) -> objects_pb2.PersistentVolume | None:
    """The PV controller's choice for ``claim`` (findBestMatchForClaim): the volumes are grouped by their
    set of access modes; among the sets that include every mode the claim asks for, fewest modes first,
    the first set holding a match gives it."""
    groups: dict[frozenset[str], list[objects_pb2.PersistentVolume]] = {}
    for volume in volumes:
        groups.setdefault(frozenset(volume.spec.access_modes), []).append(volume)
    wanted = set(claim.spec.access_modes)
    # Ties of size are broken by the modes' names, so that the choice never depends on arrival order.
    for modes in sorted((modes for modes in groups if wanted <= modes), key=lambda m: (len(m), sorted(m))):
        match = find_matching_volume(claim, groups[modes], delay_binding=delay_binding)
        if match is not None:
            return match
    return None
