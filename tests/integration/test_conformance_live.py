"""The conformance cases of Dynamic Resource Allocation (``dra_*``) and storage (``volume_*``) against real
processes: a `podsched apiserver` (whose resourceclaim, PV binder, ephemeral volume and provisioner
controllers make and bind the claims) and a `podsched scheduler`, where `podsched simulate` runs them in
one process on a virtual clock. The cases alternate between the two stores, so each family runs on both.

A case's objects are created in simulate's order; the test then waits until the pods' outcomes, read as
simulate's result reads them, show what the case's expectation file lists, and deletes everything the
case made (and what the controllers made for it) before the next. Cases that expect a pod deleted are
left to simulate: a preempted pod's graceful deletion takes its 30 s grace period on a live cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2
from cluster.api.kinds import metadata_of
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from cluster.simulate import load_scenario
from cluster.simulate.outcome import PodGroupOutcome, PodOutcome
from tests.conformance.test_conformance import POD_GROUPS, group_mismatches, mismatches
from tests.integration.conftest import own_apiserver
from tests.integration.test_scheduler import running_scheduler

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"
STORES = ("sqlite", "etcd")
#: How long a case's pods may take to reach their expected outcome on a loaded 2-core machine.
CASE_TIMEOUT_S = 30.0
#: Kinds the controllers create for a case (claims from templates, ephemeral volumes' claims, provisioned
#: volumes): deleted after it with what the case created itself.
MADE_FOR_THE_CASE = (kinds.RESOURCE_CLAIM, kinds.PERSISTENT_VOLUME_CLAIM, kinds.PERSISTENT_VOLUME)
#: Cases where which of equal devices a claim gets follows the order the pods' claims reach the scheduler:
#: simulate makes every object at one virtual instant, so names decide; live, the resourceclaim
#: controller's order does. Their placements and pools are checked, the device names are not.
DEVICES_BY_ARRIVAL = {"dra_pod_group_claim_and_a_pods_own"}


def _expectation(name: str) -> dict[str, Any]:
    expectation: dict[str, Any] = json.loads((CASES / f"{name}.expect.json").read_text())
    return expectation


def _live_cases(store: str) -> list[str]:
    """The cases this store runs: every other one of the DRA and storage cases that expect no deletion."""
    names = sorted(
        path.name.removesuffix(".yaml") for path in CASES.glob("*.yaml")
        if path.name.startswith(("dra_", "volume_")) and not path.name.endswith(".config.yaml")
    )
    live = [name for name in names if not _expects_a_deletion(name)]
    assert live, f"no DRA or storage conformance cases in {CASES}"
    return live[STORES.index(store)::len(STORES)]


def _expects_a_deletion(name: str) -> bool:
    return any(wanted.get("deleted") for key, wanted in _expectation(name).items() if key != POD_GROUPS)


@contextlib.contextmanager
def _cluster(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver(store, tmp_path_factory.mktemp(f"live-{store}"), name_prefix="live") as server:
        with running_scheduler(server.address):
            yield server


@pytest.fixture(scope="module")
def sqlite_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with _cluster("sqlite", tmp_path_factory) as server:
        yield server


@pytest.fixture(scope="module")
def etcd_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with _cluster("etcd", tmp_path_factory) as server:
        yield server


async def _by_name(client: Client, kind: kinds.Kind[Any]) -> dict[tuple[str, str], Any]:
    listed = await client.list_all(kind)
    return {(metadata_of(obj).namespace, metadata_of(obj).name): obj for obj in listed.items}


Lines = list[dict[str, Any]]


async def _result(client: Client, groups: list[tuple[str, str]]) -> tuple[Lines, Lines]:
    """The pods' and the PodGroups' lines of simulate's result, from the live cluster."""
    pods: list[objects_pb2.Pod] = list((await client.list_all(kinds.POD)).items)  # type: ignore[arg-type]
    claims = await _by_name(client, kinds.RESOURCE_CLAIM)
    volume_claims = await _by_name(client, kinds.PERSISTENT_VOLUME_CLAIM)
    lines = [PodOutcome.of(pod, deleted=False, claims=claims, volume_claims=volume_claims).to_json()
             for pod in pods]
    group_lines = []
    for namespace, name in groups:
        group = await client.get(kinds.POD_GROUP, name, namespace)
        assert isinstance(group, objects_pb2.PodGroup)
        group_lines.append(PodGroupOutcome.of(group, pods).to_json())
    return lines, group_lines


async def _delete(client: Client, obj: Message) -> None:
    meta = metadata_of(obj)
    try:
        await client.delete(kinds.kind_of(obj), meta.name, meta.namespace, grace_period_seconds=0)
    except errors.NotFound:
        pass


async def _clean_up(client: Client, created: list[Message]) -> None:
    """Delete what the case created, newest first, then what the controllers made for it, and wait until
    the API server has none of it."""
    for obj in reversed(created):
        await _delete(client, obj)
    for kind in MADE_FOR_THE_CASE:
        for obj in (await client.list_all(kind)).items:
            await _delete(client, obj)
    deadline = time.monotonic() + CASE_TIMEOUT_S
    left: tuple[kinds.Kind[Any], ...] = (kinds.POD, *MADE_FOR_THE_CASE)
    for kind in left:
        while (await client.list_all(kind)).items:
            assert time.monotonic() < deadline, f"{kind.name} objects still there after the clean-up"
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("name", _live_cases("sqlite"))
async def test_a_case_comes_out_live_on_sqlite_as_simulate_expects(
    name: str, sqlite_cluster: ApiServerProcess
) -> None:
    await _run_case(name, "sqlite", sqlite_cluster)


@pytest.mark.etcd
@pytest.mark.parametrize("name", _live_cases("etcd"))
async def test_a_case_comes_out_live_on_etcd_as_simulate_expects(
    name: str, etcd_cluster: ApiServerProcess
) -> None:
    await _run_case(name, "etcd", etcd_cluster)


async def _run_case(name: str, store: str, server: ApiServerProcess) -> None:
    expected = _expectation(name)
    pod_expectations = {key: _live_expectation(name, wanted) for key, wanted in expected.items()
                        if key != POD_GROUPS}
    scenario = load_scenario([str(CASES / f"{name}.yaml")])
    groups = [(group.obj.metadata.namespace, group.obj.metadata.name)  # type: ignore[attr-defined]
              for group in scenario.pod_groups]
    created: list[Message] = []
    async with Client(server.address, timeout_s=30.0) as client:
        try:
            for entry in scenario.creation_order():
                created.append(await client.create(entry.obj))
            deadline = time.monotonic() + CASE_TIMEOUT_S
            while True:
                pods, group_lines = await _result(client, groups)
                problems = mismatches(pod_expectations, pods)
                problems += group_mismatches(expected.get(POD_GROUPS, {}), group_lines)
                if not problems or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            problems += _devices_held_twice(list((await client.list_all(kinds.RESOURCE_CLAIM)).items))
            assert not problems, (
                f"case {name} on {store}, live ({CASES / name}.yaml):\n  "
                + "\n  ".join(problems) + f"\npods:\n{json.dumps(pods, indent=2)}"
            )
        finally:
            await _clean_up(client, created)


def _live_expectation(name: str, wanted: dict[str, Any]) -> dict[str, Any]:
    """``wanted`` as a live cluster must meet it: without the device names where arrival order picks them."""
    if name not in DEVICES_BY_ARRIVAL or "claims" not in wanted:
        return wanted
    claims = [{**claim, "devices": [{key: value for key, value in device.items() if key != "device"}
                                    for device in claim.get("devices", [])]}
              for claim in wanted["claims"]]
    return {**wanted, "claims": claims}


def _devices_held_twice(claims: list[Message]) -> list[str]:
    """A device allocated to two claims without a share each: never allowed."""
    holders: dict[tuple[str, str, str], list[str]] = {}
    for claim in claims:
        assert isinstance(claim, objects_pb2.ResourceClaim)
        for result in claim.status.allocation.devices.results:
            if not result.HasField("share_id") and not result.admin_access:
                device = (result.driver, result.pool, result.device)
                holders.setdefault(device, []).append(claim.metadata.name)
    return [f"device {'/'.join(device)} is held by {', '.join(names)}"
            for device, names in holders.items() if len(names) > 1]
