"""`podsched simulate` of examples/storage/: each pod's line says which claim each of its volumes uses and
the PersistentVolume bound to it; the same files and seed give the same result, the provisioned volume's
name (its claim's UID) included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster.api import objects_pb2
from cluster.simulate import load_scenario, simulate
from cluster.simulate.volumes import VolumeOutcome, volume_outcomes
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE
from tests.builders import pod

STORAGE_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "storage"


async def _result(seed: int) -> dict[str, Any]:
    registry = Registry(IN_TREE)
    result = await simulate(load_scenario([str(STORAGE_EXAMPLE)]), load_config(None, registry=registry),
                            registry, timeout_s=60, seed=seed)
    return result.to_json()


async def test_each_pods_volumes_say_their_claim_and_volume_and_a_seed_repeats_them() -> None:
    first = await _result(0)
    volumes = {p["name"]: (p["node"], p.get("volumes")) for p in first["pods"]}
    provisioned = volumes["db-0"][1][0]["persistentVolume"]
    assert provisioned.startswith("pvc-")
    assert volumes == {
        "db-0": ("node-3", [{"name": "data", "claim": "db-0-data", "phase": "Bound",
                             "persistentVolume": provisioned}]),
        "web-0": ("node-1", [{"name": "www", "claim": "www-web-0", "phase": "Bound",
                              "persistentVolume": "local-node-1"}]),
        "web-1": ("node-2", [{"name": "www", "claim": "www-web-1", "phase": "Bound",
                              "persistentVolume": "local-node-2"}]),
    }
    assert await _result(0) == first
    assert (await _result(1))["pods"][0]["volumes"][0]["persistentVolume"] != provisioned


def test_a_volume_outcome_per_claim_volume_in_spec_order_missing_claims_included() -> None:
    subject = pod("p")
    subject.spec.volumes.add(name="cache").empty_dir.update({})
    subject.spec.volumes.add(name="www").persistent_volume_claim.claim_name = "www-p"
    subject.spec.volumes.add(name="scratch").ephemeral.volume_claim_template.spec.access_modes.append(
        "ReadWriteOnce")
    claim = objects_pb2.PersistentVolumeClaim()
    claim.metadata.namespace, claim.metadata.name = subject.metadata.namespace, "www-p"
    claim.spec.volume_name, claim.status.phase = "pv-1", "Bound"
    assert volume_outcomes(subject, {(claim.metadata.namespace, "www-p"): claim}) == (
        VolumeOutcome("www", "www-p", "Bound", "pv-1"),
        VolumeOutcome("scratch", "p-scratch", None, None),
    )
