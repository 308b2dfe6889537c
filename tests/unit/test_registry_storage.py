"""The storage kinds through the verbs over a real SqliteStore: upstream's defaults (core/v1 and
storage/v1 SetDefaults_*), a created volume or claim starting Pending whatever status it was sent with,
the DefaultStorageClass admission on a created claim, a pod's volumes defaulted, and the leading
scheduler's fenced Update of a volume (claimRef) and a claim (selected-node): a stale fence refused, the
current one landing stamped, an unfenced write dropping the stamp."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2, timeutil
from cluster.api.fencing import WRITTEN_UNDER_FENCE_ANNOTATION
from cluster.api.kinds import LEASE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS
from cluster.api.selectors import FieldSelector, supported_fields
from cluster.api.volumes import SELECTED_NODE_ANNOTATION
from cluster.apiserver.fencing import tenure_token
from cluster.apiserver.storage import Storage, revision_of
from cluster.apiserver.verbs import Verbs
from store.sqlite import SqliteStore
from tests import builders

LOCAL = {"local": {"path": "/mnt/disk"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}


@pytest.fixture
async def verbs(tmp_path: Path) -> AsyncIterator[Verbs]:
    store = await SqliteStore.open(tmp_path)
    try:
        yield Verbs(Storage(store), rng=random.Random(0))
    finally:
        await store.close()


async def test_a_volume_is_defaulted_and_created_pending(verbs: Verbs) -> None:
    pv = builders.persistent_volume("pv1", spec=LOCAL, phase="Bound")
    pv.status.reason = "sent by the client"
    created = await verbs.create(pv)
    assert created.spec.persistent_volume_reclaim_policy == "Retain"
    assert created.spec.volume_mode == "Filesystem"
    assert created.status.phase == "Pending" and not created.status.reason
    assert timeutil.is_set(created.status.last_phase_transition_time)


async def test_a_claim_is_defaulted_created_pending_and_given_the_default_class(verbs: Verbs) -> None:
    await verbs.create(builders.storage_class("standard", default=True))
    created = await verbs.create(builders.persistent_volume_claim("data", phase="Bound"))
    assert created.spec.volume_mode == "Filesystem"
    assert created.status.phase == "Pending"
    assert created.spec.storage_class_name == "standard"
    named = await verbs.create(builders.persistent_volume_claim("other", storage_class=""))
    assert named.spec.HasField("storage_class_name") and named.spec.storage_class_name == ""


async def test_storage_classes_and_csi_drivers_are_defaulted(verbs: Verbs) -> None:
    sc = await verbs.create(builders.storage_class("standard"))
    assert (sc.reclaim_policy, sc.volume_binding_mode) == ("Delete", "Immediate")
    driver = await verbs.create(builders.csi_driver("csi.example.com"))
    spec = driver.spec
    assert spec.attach_required is True
    assert (spec.pod_info_on_mount, spec.storage_capacity, spec.requires_republish, spec.se_linux_mount) == (
        False, False, False, False)
    assert all(spec.HasField(f) for f in ("pod_info_on_mount", "storage_capacity", "requires_republish",
                                          "se_linux_mount"))
    assert spec.fs_group_policy == "ReadWriteOnceWithFSType"
    assert list(spec.volume_lifecycle_modes) == ["Persistent"]


async def test_a_pods_volumes_are_defaulted(verbs: Verbs) -> None:
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    pod = builders.pod("web", spec={
        "containers": [{"name": "c", "image": builders.IMAGE}],
        "volumes": [{"name": "cache"}, {"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}],
    })
    created = await verbs.create(pod)
    cache, scratch = created.spec.volumes
    assert cache.HasField("empty_dir")
    assert scratch.ephemeral.volume_claim_template.spec.volume_mode == "Filesystem"


def _fence(holder: str, token: int) -> apiserver_pb2.Fence:
    return apiserver_pb2.Fence(lease_namespace="kube-system", lease_name="kube-scheduler",
                               holder_identity=holder, token=token)


async def _take_lease(verbs: Verbs, holder: str) -> int:
    current = await verbs.registry.get(LEASE, "kube-system", "kube-scheduler")
    if current is None:
        return revision_of(await verbs.create(builders.lease(holder=holder, duration=15)))
    taken = objects_pb2.Lease()
    taken.CopyFrom(current)
    taken.spec.holder_identity = holder
    return tenure_token(await verbs.update(taken))


async def test_the_schedulers_prebind_writes_are_fenced_and_stamped(verbs: Verbs) -> None:
    pv = await verbs.create(builders.persistent_volume("pv1", spec=LOCAL))
    pvc = await verbs.create(builders.persistent_volume_claim("data", storage_class=""))
    old = await _take_lease(verbs, "a")
    new = await _take_lease(verbs, "b")
    pv.spec.claim_ref.MergeFrom(objects_pb2.ObjectReference(
        kind="PersistentVolumeClaim", namespace="default", name="data", uid=pvc.metadata.uid))
    pvc.metadata.annotations[SELECTED_NODE_ANNOTATION] = "n1"
    for obj in (pv, pvc):
        with pytest.raises(errors.Fenced, match=r"lease kube-system/kube-scheduler is held by \"b\""):
            await verbs.update(obj, fence=verbs.fencing.of(_fence("a", old)))
    bound = await verbs.update(pv, fence=verbs.fencing.of(_fence("b", new)))
    selected = await verbs.update(pvc, fence=verbs.fencing.of(_fence("b", new)))
    assert bound.spec.claim_ref.name == "data"
    assert selected.metadata.annotations[SELECTED_NODE_ANNOTATION] == "n1"
    for written in (bound, selected):
        assert written.metadata.annotations[WRITTEN_UNDER_FENCE_ANNOTATION] == f"b@{new}"
    bound.metadata.labels["bound-by"] = "volume-controller"
    unfenced = await verbs.update(bound)
    assert WRITTEN_UNDER_FENCE_ANNOTATION not in unfenced.metadata.annotations


async def test_a_fence_on_a_volumes_create_is_refused(verbs: Verbs) -> None:
    token = await _take_lease(verbs, "a")
    with pytest.raises(errors.Invalid, match="Create takes a fence only for"):
        await verbs.create(builders.persistent_volume("pv1", spec=LOCAL),
                           fence=verbs.fencing.of(_fence("a", token)))


def test_field_selectors_are_the_metadata_ones_as_upstreams() -> None:
    for kind in (PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS):
        assert supported_fields(kind) == {"metadata.name", "metadata.namespace"}
    with pytest.raises(errors.BadRequest, match=r"field label not supported: spec\.volumeName"):
        FieldSelector.parse("spec.volumeName=pv1", PERSISTENT_VOLUME_CLAIM)


async def test_a_volumes_phase_change_records_its_time(verbs: Verbs) -> None:
    created = await verbs.create(builders.persistent_volume("pv1", spec=LOCAL))
    available = objects_pb2.PersistentVolume()
    available.CopyFrom(created)
    available.status.phase = "Available"
    available.status.last_phase_transition_time.Clear()
    changed = await verbs.update_status(available)
    assert changed.status.phase == "Available"
    assert timeutil.is_set(changed.status.last_phase_transition_time)
    changed.status.message = "still available"
    kept = await verbs.update_status(changed)
    assert kept.status.last_phase_transition_time == changed.status.last_phase_transition_time
