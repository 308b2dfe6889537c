"""`podsched simulate` of a device shared by consumable capacity: the shares' shareIDs come from the
scheduler's seeded random source, so the same files and seed give the same result, shareIDs included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster.simulate import load_scenario, simulate
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

DRA_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra"


async def _share_ids(seed: int) -> list[Any]:
    registry = Registry(IN_TREE)
    result = await simulate(load_scenario([str(DRA_EXAMPLE)]), load_config(None, registry=registry), registry,
                            timeout_s=60, seed=seed)
    return [device["shareID"] for pod in result.to_json()["pods"] for claim in pod.get("claims", ())
            for device in claim["devices"] if device["shareID"] is not None]


async def test_the_same_seed_gives_the_same_share_ids() -> None:
    first = await _share_ids(0)
    assert len(set(first)) == 2, first
    assert await _share_ids(0) == first
