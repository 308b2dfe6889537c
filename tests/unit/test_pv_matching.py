"""The matching of a claim to a volume (cluster.api.persistentvolumes), as upstream's
pkg/controller/volume/persistentvolume/index_test.go has it: TestMatchVolume's table over
createTestVolumes, TestMatchingWithBoundVolumes, TestFindingVolumeWithDifferentAccessModes,
TestVolumeModeCheck, TestFilteringVolumeModes, TestStorageObjectInUseProtectionFiltering (the feature is
always on), TestFindingPreboundVolumes and TestBestMatchDelayed. The feature-gate-off rows of the volume
mode tables are left out (volumeMode is always modelled), and so are TestMatchVolume's two rows beyond
2^63-1 bytes (800E, 950E): podsched's quantities stop at that magnitude, so they compare equal there."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.persistentvolumes import (
    find_best_match_for_claim,
    find_matching_volume,
    volume_mode_mismatches,
)

RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"
BLOCK, FS = "Block", "Filesystem"
SILVER, GOLD, LARGE, WAIT = "silver", "gold", "large", "wait"


def volume(name: str, size: str, modes: list[str], *, uid: str = "", phase: str = "Available",
           class_name: str = "", labels: dict[str, str] | None = None,
           claim_ref: dict[str, str] | None = None, mode: str | None = FS, affinity: str = "",
           deleting: bool = False) -> objects_pb2.PersistentVolume:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": modes,
                            "storageClassName": class_name}
    if mode is not None:
        spec["volumeMode"] = mode
    if claim_ref is not None:
        spec["claimRef"] = claim_ref
    if affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "key1", "operator": "In", "values": [affinity]}]}]}}
    meta: dict[str, Any] = {"name": name, "uid": uid or name, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return json_format.ParseDict({"metadata": meta, "spec": spec, "status": {"phase": phase}},
                                 objects_pb2.PersistentVolume())


def claim(size: str, modes: tuple[str, ...] = (ROX, RWO), *, selector: dict[str, str] | None = None,
          class_name: str | None = None, mode: str | None = FS, name: str = "claim01",
          uid: str = "") -> objects_pb2.PersistentVolumeClaim:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if mode is not None:
        spec["volumeMode"] = mode
    if selector is not None:
        spec["selector"] = {"matchLabels": selector}
    if class_name is not None:
        spec["storageClassName"] = class_name
    return json_format.ParseDict({"metadata": {"name": name, "namespace": "myns", "uid": uid}, "spec": spec},
                                 objects_pb2.PersistentVolumeClaim())


def upstream_volumes() -> list[objects_pb2.PersistentVolume]:
    """createTestVolumes, deliberately out of order."""
    return [
        volume("gce003", "10G", [RWO, ROX], uid="gce-pd-10"),
        volume("gce004", "20G", [RWO, ROX], uid="gce-pd-20", phase="Bound", claim_ref={"uid": "def456"}),
        volume("nfs002", "5G", [RWO, ROX, RWX], uid="nfs-5"),
        volume("gce001", "1G", [RWO, ROX], uid="gce-pd-1", phase="Bound", claim_ref={"uid": "abc123"}),
        volume("nfs003", "10G", [RWO, ROX, RWX], uid="nfs-10"),
        volume("gce002", "5G", [RWO, ROX], uid="gce-pd-5"),
        volume("nfs001", "1G", [RWO, ROX, RWX], uid="nfs-1"),
        volume("gce0022", "20000G", [RWO], uid="gce-pd-2", labels={"should-exist": "true"}),
        volume("gce0023", "10000G", [RWO], uid="gce-pd-silver1", labels={"should-exist": "true"},
               class_name=SILVER),
        volume("gce0024", "100G", [RWO], uid="gce-pd-silver2", class_name=SILVER),
        volume("gce0025", "50G", [RWO], uid="gce-pd-gold", class_name=GOLD),
        volume("local001", "200E", [RWO, ROX, RWX], uid="local-pd-very-large", class_name=LARGE),
        volume("local002", "800E", [RWO, ROX, RWX], uid="local-pd-extremely-large", class_name=LARGE),
        volume("affinity001", "100G", [RWO, ROX], uid="affinity-pv", class_name=WAIT, affinity="value1"),
        volume("affinity002", "150G", [RWO, ROX], uid="affinity-pv2", class_name=WAIT, affinity="value1"),
        volume("affinity003", "100G", [RWO, ROX], uid="affinity-prebound", class_name=WAIT, affinity="value1",
               claim_ref={"name": "claim02", "namespace": "myns"}),
        volume("affinity003", "200G", [RWO, ROX], uid="affinity-pv3", class_name=WAIT, affinity="value3"),
        volume("affinity004-pending", "200G", [RWO, ROX], uid="affinity-pv4-pending", class_name=WAIT,
               affinity="value4", phase="Pending"),
        volume("affinity004-failed", "200G", [RWO, ROX], uid="affinity-pv4-failed", class_name=WAIT,
               affinity="value4", phase="Failed"),
        volume("affinity004-released", "200G", [RWO, ROX], uid="affinity-pv4-released", class_name=WAIT,
               affinity="value4", phase="Released"),
        volume("affinity004-empty", "200G", [RWO, ROX], uid="affinity-pv4-empty", class_name=WAIT,
               affinity="value4", phase=""),
    ]


@pytest.mark.parametrize(("case", "wanted", "expected"), [
    ("successful-match-gce-10", claim("8G"), "gce-pd-10"),
    ("successful-match-nfs-5", claim("5G", (ROX, RWO, RWX)), "nfs-5"),
    ("successful-skip-1g-bound-volume", claim("1G"), "gce-pd-5"),
    ("successful-no-match", claim("999G"), None),
    ("successful-no-match-due-to-label", claim("999G", selector={"should-not-exist": "true"}), None),
    ("successful-no-match-due-to-size-constraint-with-label-selector",
     claim("20000G", (ROX, RWO), selector={"should-exist": "true"}), None),
    ("successful-match-due-with-constraint-and-label-selector",
     claim("20000G", (RWO,), selector={"should-exist": "true"}), "gce-pd-2"),
    ("successful-match-with-class",
     claim("1G", (RWO,), selector={"should-exist": "true"}, class_name=SILVER), "gce-pd-silver1"),
    ("successful-match-with-class-and-labels", claim("1G", (RWO,), class_name=SILVER), "gce-pd-silver2"),
    ("successful-match-very-large", claim("1E", (RWO,), class_name=LARGE), "local-pd-very-large"),
])
def test_match_volume(case: str, wanted: objects_pb2.PersistentVolumeClaim, expected: str | None) -> None:
    found = find_best_match_for_claim(wanted, upstream_volumes())
    assert (found.metadata.uid if found is not None else None) == expected, case


def test_matching_with_bound_volumes() -> None:
    bound = volume("gce001", "1G", [RWO, ROX], phase="Bound", claim_ref={"uid": "abc123"})
    free = volume("gce002", "1G", [RWO, ROX])
    found = find_best_match_for_claim(claim("1G"), [bound, free])
    assert found is not None and found.metadata.name == "gce002"


def test_finding_volume_with_different_access_modes() -> None:
    gce = volume("gce", "10G", [RWO, ROX])
    ebs = volume("ebs", "10G", [RWO])
    nfs = volume("nfs", "10G", [RWO, ROX, RWX])

    def best(*modes: str) -> str:
        found = find_best_match_for_claim(claim("1G", modes), [gce, ebs, nfs])
        assert found is not None
        return found.metadata.name

    assert best(RWO) == "ebs"
    assert best(RWO, ROX) == "gce"
    assert best(RWX, RWO, ROX) == "nfs", "the order of the requested modes does not matter"
    assert best(RWX) == "nfs", "fewer modes requested still match"
    ebs.spec.claim_ref.SetInParent()
    assert best(RWO) == "gce", "the exact match is bound: the next level up of modes"
    gce.spec.claim_ref.SetInParent()
    assert best(RWO) == "nfs", "and up again"
    gce.spec.ClearField("claim_ref")
    assert best(ROX) == "gce", "a partial mode request"


@pytest.mark.parametrize(("case", "claim_mode", "volume_mode", "mismatch"), [
    ("pvc block and pv filesystem", BLOCK, FS, True),
    ("pvc filesystem and pv block", FS, BLOCK, True),
    ("pvc block and pv block", BLOCK, BLOCK, False),
    ("pvc filesystem and pv filesystem", FS, FS, False),
    ("pvc filesystem and pv nil", FS, None, False),
    ("pvc nil and pv filesystem", None, FS, False),
    ("pvc nil and pv nil", None, None, False),
    ("pvc nil and pv block", None, BLOCK, True),
    ("pvc block and pv nil", BLOCK, None, True),
])
def test_volume_mode_check(case: str, claim_mode: str | None, volume_mode: str | None,
                           mismatch: bool) -> None:
    assert volume_mode_mismatches(claim("8G", (RWO,), mode=claim_mode),
                                  volume("block", "10G", [RWO], mode=volume_mode)) is mismatch, case


@pytest.mark.parametrize(("case", "claim_mode", "volume_mode", "matches"), [
    ("1-1 pvc block and pv filesystem", BLOCK, FS, False),
    ("1-2 pvc filesystem and pv block", FS, BLOCK, False),
    ("1-5 pvc block and pv block", BLOCK, BLOCK, True),
    ("1-6 pvc filesystem and pv filesystem", FS, FS, True),
    ("2-1 pvc mode is nil and pv mode is nil", None, None, True),
])
def test_filtering_volume_modes(case: str, claim_mode: str | None, volume_mode: str | None,
                                matches: bool) -> None:
    found = find_best_match_for_claim(claim("8G", (RWO,), mode=claim_mode),
                                      [volume("block", "10G", [RWO], mode=volume_mode)])
    assert (found is not None) is matches, case


def test_a_volume_being_deleted_is_not_matched() -> None:
    """TestStorageObjectInUseProtectionFiltering's filtering rows."""
    wanted = claim("1G", (RWO,))
    assert find_best_match_for_claim(wanted, [volume("pv1", "1G", [RWO])]) is not None
    assert find_best_match_for_claim(wanted, [volume("pv1", "1G", [RWO], deleting=True)]) is None


def test_finding_prebound_volumes() -> None:
    wanted = claim("1Gi", (RWO,), uid="claim-uid")
    ref = {"kind": "PersistentVolumeClaim", "namespace": "myns", "name": "claim01", "uid": "claim-uid"}
    pv1, pv5, pv8 = volume("pv1", "1Gi", [RWO]), volume("pv5", "5Gi", [RWO]), volume("pv8", "8Gi", [RWO])
    bad_size, bad_mode = volume("pvBadSize", "1Mi", [RWO]), volume("pvBadMode", "1Gi", [ROX])
    volumes = [pv1, pv5, pv8, bad_size, bad_mode]

    def best() -> str:
        found = find_best_match_for_claim(wanted, volumes)
        assert found is not None
        return found.metadata.name

    assert best() == "pv1", "the exact size"
    json_format.ParseDict({"name": "foo", "namespace": "bar"}, pv1.spec.claim_ref)
    assert best() == "pv5", "the exact match is pre-bound elsewhere: the next size up"
    pv1.spec.ClearField("claim_ref")
    json_format.ParseDict(ref, pv8.spec.claim_ref)
    assert best() == "pv8", "the largest is pre-bound to the claim: it wins"
    pv8.spec.ClearField("claim_ref")
    json_format.ParseDict(ref, bad_size.spec.claim_ref)
    assert best() == "pv1", "one too small pre-bound to the claim does not count"
    bad_size.spec.ClearField("claim_ref")
    json_format.ParseDict(ref, bad_mode.spec.claim_ref)
    assert best() == "pv1", "one without the access mode pre-bound to the claim does not count"


def test_best_match_delayed() -> None:
    """The PV controller leaves a WaitForFirstConsumer claim's binding to the scheduler."""
    assert find_best_match_for_claim(claim("8G"), upstream_volumes(), delay_binding=True) is None


def test_a_prebound_volume_is_found_even_when_binding_is_delayed() -> None:
    wanted = claim("100G", (RWO,), class_name=WAIT, name="claim02")
    found = find_best_match_for_claim(wanted, upstream_volumes(), delay_binding=True)
    assert found is not None and found.metadata.uid == "affinity-prebound"


def test_the_scheduler_path_checks_its_fit_and_excludes_chosen_volumes() -> None:
    """TestFindMatchVolumeWithNode's core: ``fits`` stands for the node affinity check; a pre-bound volume
    that does not fit is no match at all, and volumes chosen for other claims are skipped."""
    volumes = upstream_volumes()
    on_value1 = lambda pv: any(  # noqa: E731
        "value1" in expression.values for term in pv.spec.node_affinity.required.node_selector_terms
        for expression in term.match_expressions)
    wanted = claim("100G", (RWO,), class_name=WAIT)
    found = find_matching_volume(wanted, volumes, fits=on_value1)
    assert found is not None and found.metadata.uid == "affinity-pv"
    found = find_matching_volume(wanted, volumes, fits=on_value1, excluded=frozenset({"affinity001"}))
    assert found is not None and found.metadata.uid == "affinity-pv2"
    prebound = claim("100G", (RWO,), class_name=WAIT, name="claim02")
    found = find_matching_volume(prebound, volumes, fits=lambda pv: "value3" in str(pv.spec.node_affinity))
    assert found is None
