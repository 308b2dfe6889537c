"""`podsched simulate` runs the storage controllers for a scenario whose pods have volumes, and the
settle waits for them: a pod's ephemeral volume gets its claim (made by the ephemeral volume
controller) before the run ends, while a scenario without volumes runs without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cluster.api import kinds
from cluster.client import Client
from cluster.simulate import engine, load_scenario, simulate
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
"""
POD = """
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: registry.k8s.io/pause:3.9}}]
  volumes:
  - name: cache
    emptyDir: {{}}
{ephemeral}"""
#: The default class the ephemeral volume's claim gets: VolumeBinding waits for a claim without a class
#: that no volume binds, and this one is provisioned on the pod's node.
DEFAULT_CLASS = """
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: disk.csi.example.com
volumeBindingMode: WaitForFirstConsumer
"""
EPHEMERAL = """  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


async def run(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Simulate ``text``; the claims the store holds at the end, by name."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text)
    claims: list[str] = []

    async def listed_at_the_end(client: Client, kind: kinds.Kind[Any]) -> dict[tuple[str, str], Any]:
        # The engine's end-of-run read, where every controller has settled: the claims are listed too.
        listed = await client.list_all(kinds.PERSISTENT_VOLUME_CLAIM)
        claims.extend(sorted(claim.metadata.name for claim in listed.items))  # type: ignore[attr-defined]
        return await original(client, kind)

    original = engine._by_name
    monkeypatch.setattr(engine, "_by_name", listed_at_the_end)
    monkeypatch.setattr(engine.PodTracker, "uses_claims", lambda self: True)
    monkeypatch.setattr(engine.PodTracker, "uses_volume_claims", lambda self: False)
    registry = Registry(IN_TREE)
    result = await simulate(load_scenario([str(scenario)]), load_config(None, registry=registry), registry,
                            timeout_s=60)
    assert {pod["name"]: pod["node"] for pod in result.to_json()["pods"]} == {"p1": "n1", "p2": "n1"}
    return claims


async def test_the_ephemeral_volume_controller_makes_the_claims_before_the_run_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (NODE + DEFAULT_CLASS + POD.format(name="p1", ephemeral=EPHEMERAL)
            + POD.format(name="p2", ephemeral=""))
    assert await run(tmp_path, text, monkeypatch) == ["p1-scratch"]


def test_only_a_scenario_with_volumes_or_storage_objects_runs_the_storage_controllers(tmp_path: Path) -> None:
    with_volumes = tmp_path / "volumes.yaml"
    with_volumes.write_text(NODE + POD.format(name="p1", ephemeral=""))
    without = tmp_path / "plain.yaml"
    without.write_text(NODE)
    assert engine._uses_storage(load_scenario([str(with_volumes)]))
    assert not engine._uses_storage(load_scenario([str(without)]))
