"""The DisruptionController against a real in-process API server on a temporary SQLite store, through
the real client: statuses for every kind of budget and selector, pods binding, turning unready,
terminating, leaving and changing labels, writes only when a status changes, conflicts and overwrites
repaired, fail-safe on an unusable spec, and the periodic resync."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import POD_DISRUPTION_BUDGET
from cluster.client import Client
from cluster.controllers import DisruptionController
from cluster.controllers.budget import DELETION_TIMEOUT_S
from tests import builders
from tests.unit.test_apiserver_server import Harness, make_node

NS = "shop"
SETTLE_TIMEOUT_S = 10.0

#: (expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed)
Counts = tuple[int, int, int, int]


def counts(status: objects_pb2.PodDisruptionBudgetStatus) -> Counts:
    return (status.expected_pods, status.current_healthy, status.desired_healthy, status.disruptions_allowed)


def make_pdb(
    name: str,
    *,
    namespace: str = NS,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    match_labels: dict[str, str] | None = None,
    expressions: list[tuple[str, str, list[str]]] | None = None,
    selector: bool = True,
) -> objects_pb2.PodDisruptionBudget:
    terms = [{"key": key, "operator": op, "values": values} for key, op, values in expressions or []]
    label_selector = {"matchLabels": match_labels or {}, "matchExpressions": terms} if selector else None
    return builders.pdb(name, namespace, min_available=min_available, max_unavailable=max_unavailable,
                        selector=label_selector)


def make_pod(name: str, namespace: str = NS, *, node: str = "", **labels: str) -> objects_pb2.Pod:
    return builders.pod(name, namespace, labels=labels, image="nginx:1.25", node_name=node)


@dataclass
class Cluster:
    api: Harness
    client: Client
    controller: DisruptionController

    async def settled(
        self, name: str, expected: Counts, namespace: str = NS
    ) -> objects_pb2.PodDisruptionBudget:
        """Wait until the budget's status shows ``expected`` and that the controller has seen the
        budget at least once (observedGeneration set); the budget then."""
        last: Counts | None = None
        try:
            async with asyncio.timeout(SETTLE_TIMEOUT_S):
                while True:
                    pdb = await self.client.get(POD_DISRUPTION_BUDGET, name, namespace)
                    last = counts(pdb.status)  # type: ignore[attr-defined]
                    if last == expected and pdb.status.observed_generation > 0:  # type: ignore[attr-defined]
                        return pdb  # type: ignore[return-value]
                    await asyncio.sleep(0.01)
        except TimeoutError:
            raise AssertionError(f"budget {namespace}/{name} shows {last}, not {expected}") from None

    async def settled_with_no_disrupted_pods(self, name: str) -> objects_pb2.PodDisruptionBudget:
        """Wait until the budget's disruptedPods is empty; the budget then."""
        try:
            async with asyncio.timeout(SETTLE_TIMEOUT_S):
                while True:
                    pdb = await self.client.get(POD_DISRUPTION_BUDGET, name, NS)
                    if not pdb.status.disrupted_pods:  # type: ignore[attr-defined]
                        return pdb  # type: ignore[return-value]
                    await asyncio.sleep(0.01)
        except TimeoutError:
            raise AssertionError(f"budget {NS}/{name} keeps its disruptedPods") from None

    async def writes_during(self, action: Callable[[], Awaitable[object]]) -> list[str]:
        """The budgets (namespace/name) whose status is written while ``action`` runs and the controller
        handles what it did. A sentinel budget's change, made after ``action``, marks the end: the
        controller handles events in order and writes one budget at a time."""
        sentinel = await self.client.create(make_pdb("sentinel", min_available=0, match_labels={"s": "1"}))
        await self.settled("sentinel", (0, 0, 0, 0))
        since = (await self.client.list(POD_DISRUPTION_BUDGET)).resource_version
        await action()
        await self.client.create(make_pod("sentinel-pod", node="n1", s="1"))
        written = []
        events = self.client.watch(POD_DISRUPTION_BUDGET, resource_version=since)
        async with contextlib.aclosing(events), asyncio.timeout(SETTLE_TIMEOUT_S):
            async for event in events:
                meta = event.object.metadata  # type: ignore[attr-defined]
                if meta.uid == sentinel.metadata.uid:
                    break
                written.append(f"{meta.namespace}/{meta.name}")
        return written


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            await client.create(make_node("n1"))
            controller = DisruptionController(client)
            running = asyncio.create_task(controller.run(), name="test-disruption-controller")
            try:
                await asyncio.wait_for(controller.wait_synced(), SETTLE_TIMEOUT_S)
                yield Cluster(api, client, controller)
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running


# --------------------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"min_available": 2}, (4, 3, 2, 1)),
        ({"min_available": 3}, (4, 3, 3, 0)),
        ({"min_available": 5}, (4, 3, 5, 0)),
        ({"min_available": "50%"}, (4, 3, 2, 1)),
        ({"min_available": "60%"}, (4, 3, 3, 0)),
        ({"max_unavailable": 1}, (4, 3, 3, 0)),
        ({"max_unavailable": 2}, (4, 3, 2, 1)),
        ({"max_unavailable": "30%"}, (4, 3, 2, 1)),
        ({"max_unavailable": "100%"}, (4, 3, 0, 3)),
        ({}, (0, 3, 0, 0)),
    ],
    ids=["min-int", "min-int-exact", "min-int-above", "min-percent", "min-percent-rounds-up",
         "max-int", "max-int-two", "max-percent-rounds-up", "max-all", "neither-field"],
)
async def test_status_of_each_kind_of_budget(
    cluster: Cluster, spec: dict[str, int | str], expected: Counts
) -> None:
    for name in ("a", "b", "c"):
        await cluster.client.create(make_pod(name, node="n1", app="web"))
    await cluster.client.create(make_pod("unbound", app="web"))
    await cluster.client.create(make_pdb("web", match_labels={"app": "web"}, **spec))  # type: ignore[arg-type]
    pdb = await cluster.settled("web", expected)
    assert pdb.status.observed_generation == pdb.metadata.generation == 1
    assert not pdb.status.disrupted_pods


@pytest.mark.parametrize(
    ("selector", "matched"),
    [
        ({"selector": False}, 0),
        ({}, 4),
        ({"match_labels": {"app": "web"}}, 2),
        ({"match_labels": {"app": "web", "tier": "fe"}}, 1),
        ({"expressions": [("app", "In", ["web", "db"])]}, 3),
        ({"expressions": [("app", "NotIn", ["web"])]}, 2),
        ({"expressions": [("tier", "Exists", [])]}, 1),
        ({"expressions": [("app", "DoesNotExist", [])]}, 1),
        ({"match_labels": {"app": "web"}, "expressions": [("tier", "DoesNotExist", [])]}, 1),
    ],
    ids=["absent-matches-nothing", "empty-matches-the-namespace", "match-labels", "two-labels", "in",
         "not-in-includes-unlabelled", "exists", "does-not-exist", "labels-and-expressions"],
)
async def test_selectors_match_within_the_namespace(
    cluster: Cluster, selector: dict[str, object], matched: int
) -> None:
    pods = [
        make_pod("web-fe", node="n1", app="web", tier="fe"),
        make_pod("web", node="n1", app="web"),
        make_pod("db", node="n1", app="db"),
        make_pod("plain", node="n1"),
        make_pod("web-elsewhere", "other", node="n1", app="web", tier="fe"),
    ]
    for pod in pods:
        await cluster.client.create(pod)
    await cluster.client.create(make_pdb("budget", min_available=0, **selector))  # type: ignore[arg-type]
    await cluster.settled("budget", (matched, matched, 0, matched))


# ---------------------------------------------------------------------------------------- pod events


async def test_status_follows_pods_through_their_life(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await cluster.settled("web", (0, 0, 1, 0))
    for name in ("a", "b", "c"):
        await client.create(make_pod(name, app="web"))
    await cluster.settled("web", (3, 0, 1, 0))

    await client.bind(NS, "a", "n1")
    await cluster.settled("web", (3, 1, 1, 0))
    await client.bind(NS, "b", "n1")
    await client.bind(NS, "c", "n1")
    await cluster.settled("web", (3, 3, 1, 2))

    # A Ready condition someone writes is honoured: False takes the pod out of currentHealthy.
    pod = await client.get("Pod", "c", NS)
    pod.status.conditions.add(type="Ready", status="False")  # type: ignore[attr-defined]
    await client.update_status(pod)
    await cluster.settled("web", (3, 2, 1, 1))

    # Terminating (graceful deletion under way) is not healthy, but still expected.
    marked = await client.delete("Pod", "a", NS, grace_period_seconds=60)
    assert marked.metadata.HasField("deletion_timestamp")  # type: ignore[attr-defined]
    await cluster.settled("web", (3, 1, 1, 0))

    await client.delete("Pod", "a", NS, grace_period_seconds=0)
    await client.delete("Pod", "c", NS, grace_period_seconds=0)
    await cluster.settled("web", (1, 1, 1, 0))


async def test_a_pod_changing_labels_moves_between_budgets(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("blue", max_unavailable=0, match_labels={"color": "blue"}))
    await client.create(make_pdb("green", max_unavailable=0, match_labels={"color": "green"}))
    await client.create(make_pod("p", node="n1", color="blue"))
    await client.create(make_pod("q", node="n1", color="blue"))
    await cluster.settled("blue", (2, 2, 2, 0))
    await cluster.settled("green", (0, 0, 0, 0))

    pod = await client.get("Pod", "p", NS)
    pod.metadata.labels["color"] = "green"  # type: ignore[attr-defined]
    await client.update(pod)
    await cluster.settled("blue", (1, 1, 1, 0))
    await cluster.settled("green", (1, 1, 1, 0))

    pod = await client.get("Pod", "p", NS)
    del pod.metadata.labels["color"]  # type: ignore[attr-defined]
    await client.update(pod)
    await cluster.settled("green", (0, 0, 0, 0))
    await cluster.settled("blue", (1, 1, 1, 0))


async def test_a_pod_matching_two_budgets_counts_in_both(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("by-app", min_available=0, match_labels={"app": "web"}))
    await client.create(make_pdb("everything", min_available=1))
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pod("db", node="n1", app="db"))
    await cluster.settled("by-app", (1, 1, 0, 1))
    await cluster.settled("everything", (2, 2, 1, 1))
    await client.delete("Pod", "web", NS, grace_period_seconds=0)
    await cluster.settled("by-app", (0, 0, 0, 0))
    await cluster.settled("everything", (1, 1, 1, 0))


async def _evicted(cluster: Cluster, budget: str, pod: str, at: float) -> None:
    """Record ``pod`` in ``budget``'s disruptedPods as evicted at ``at``, as pods/eviction does."""
    pdb = await cluster.client.get(POD_DISRUPTION_BUDGET, budget, NS)
    pdb.status.disrupted_pods[pod].seconds = int(at)  # type: ignore[attr-defined]
    await cluster.client.update_status(pdb)


async def test_a_disrupted_pod_is_not_healthy_until_it_terminates(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await client.create(make_pod("a", node="n1", app="web"))
    await client.create(make_pod("b", node="n1", app="web"))
    await cluster.settled("web", (2, 2, 1, 1))

    await _evicted(cluster, "web", "a", time.time())
    pdb = await cluster.settled("web", (2, 1, 1, 0))
    assert list(pdb.status.disrupted_pods) == ["a"]

    # The eviction's deletion marks the pod: it is no longer healthy on its own, and the entry goes.
    await client.delete("Pod", "a", NS, grace_period_seconds=60)
    await cluster.settled("web", (2, 1, 1, 0))
    pdb = await cluster.settled_with_no_disrupted_pods("web")
    assert counts(pdb.status) == (2, 1, 1, 0)


async def test_a_disrupted_pod_entry_of_a_pod_that_is_gone_is_dropped(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await client.create(make_pod("a", node="n1", app="web"))
    await cluster.settled("web", (1, 1, 1, 0))
    await _evicted(cluster, "web", "gone", time.time())
    pdb = await cluster.settled_with_no_disrupted_pods("web")
    assert counts(pdb.status) == (1, 1, 1, 0)


async def test_a_disrupted_pod_counts_again_once_its_entry_expires(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await client.create(make_pod("a", node="n1", app="web"))
    await client.create(make_pod("b", node="n1", app="web"))
    await cluster.settled("web", (2, 2, 1, 1))
    # Evicted long enough ago that the entry runs out a second from now, and nothing else happens:
    # the controller must look at the budget again by itself then.
    await _evicted(cluster, "web", "a", time.time() - DELETION_TIMEOUT_S + 1)
    pdb = await cluster.settled("web", (2, 1, 1, 0))
    assert list(pdb.status.disrupted_pods) == ["a"]
    pdb = await cluster.settled_with_no_disrupted_pods("web")
    assert counts(pdb.status) == (2, 2, 1, 1)


# ------------------------------------------------------------------------------------- budget events


async def test_a_budget_created_after_its_pods_counts_them(cluster: Cluster) -> None:
    for i in range(5):
        await cluster.client.create(make_pod(f"p{i}", node="n1" if i % 2 == 0 else "", app="web"))
    await cluster.client.create(make_pdb("late", min_available="40%", match_labels={"app": "web"}))
    await cluster.settled("late", (5, 3, 2, 1))


async def test_a_spec_change_is_observed_and_a_new_selector_rematches(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pod("db1", node="n1", app="db"))
    await client.create(make_pod("db2", node="n1", app="db"))
    created = await client.create(make_pdb("budget", min_available=1, match_labels={"app": "web"}))
    await cluster.settled("budget", (1, 1, 1, 0))

    pdb = await client.get(POD_DISRUPTION_BUDGET, "budget", NS)
    pdb.spec.selector.match_labels["app"] = "db"  # type: ignore[attr-defined]
    await client.update(pdb)
    settled = await cluster.settled("budget", (2, 2, 1, 1))
    assert settled.metadata.generation == created.metadata.generation + 1 == 2
    assert settled.status.observed_generation == 2

    # The pods the old selector matched no longer move this budget; the new ones do.
    await client.delete("Pod", "web", NS, grace_period_seconds=0)
    await client.delete("Pod", "db1", NS, grace_period_seconds=0)
    await cluster.settled("budget", (1, 1, 1, 0))


async def test_a_status_written_behind_the_controllers_back_is_repaired(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pdb("web", min_available=0, match_labels={"app": "web"}))
    pdb = await cluster.settled("web", (1, 1, 0, 1))
    pdb.status.disruptions_allowed = 7
    pdb.status.expected_pods = 9
    await client.update_status(pdb)
    await cluster.settled("web", (1, 1, 0, 1))


async def test_an_unusable_spec_allows_no_disruption(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pdb("web", min_available=0, match_labels={"app": "web"}))
    await cluster.settled("web", (1, 1, 0, 1))
    # Validation keeps a minAvailable beyond int32 out of the API, but a budget stored by an older
    # server (written here behind the API's back) can still carry one: the controller keeps the last
    # numbers, allows no disruption, and does not claim the new generation.
    assert cluster.api.store is not None
    key = POD_DISRUPTION_BUDGET.key(NS, "web")
    stored = await cluster.api.store.get(key)
    assert stored is not None
    pdb = objects_pb2.PodDisruptionBudget.FromString(stored.value)
    pdb.spec.min_available.number_value = 10_000_000_000
    pdb.metadata.generation = 2
    written = await cluster.api.store.update(key, pdb.SerializeToString(), stored.mod_revision)
    assert written.succeeded
    settled = await cluster.settled("web", (1, 1, 0, 0))
    assert settled.metadata.generation == 2
    assert settled.status.observed_generation == 1


async def test_a_deleted_budget_is_forgotten(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pdb("web", min_available=0, match_labels={"app": "web"}))
    await cluster.settled("web", (1, 1, 0, 1))
    await client.delete(POD_DISRUPTION_BUDGET, "web", NS)

    async def change_its_pods() -> None:
        await client.create(make_pod("web-2", node="n1", app="web"))
        await client.delete("Pod", "web", NS, grace_period_seconds=0)

    assert await cluster.writes_during(change_its_pods) == []
    # Created again under the same name, it starts from the pods as they are now.
    await client.create(make_pdb("web", min_available=0, match_labels={"app": "web"}))
    await cluster.settled("web", (1, 1, 0, 1))


# ------------------------------------------------------------------------------------------- writes


async def test_changes_that_do_not_move_a_status_write_nothing(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await client.create(make_pod("web", node="n1", app="web"))
    await client.create(make_pod("spare", node="n1", app="web"))
    await client.create(make_pod("unbound", app="web"))
    await cluster.settled("web", (3, 2, 1, 1))

    async def irrelevant_changes() -> None:
        pod = await client.get("Pod", "web", NS)
        pod.metadata.annotations["note"] = "changed"  # type: ignore[attr-defined]
        pod.metadata.labels["extra"] = "label"  # type: ignore[attr-defined]  # still matches
        await client.update(pod)
        await client.create(make_pod("db", node="n1", app="db"))
        await client.create(make_pod("web", "other", node="n1", app="web"))
        pending = await client.get("Pod", "unbound", NS)
        pending.status.nominated_node_name = "n1"  # type: ignore[attr-defined]
        await client.update_status(pending)

    assert await cluster.writes_during(irrelevant_changes) == []
    await cluster.settled("web", (3, 2, 1, 1))


async def test_one_change_writes_one_status(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    await client.create(make_pod("web", app="web"))
    await cluster.settled("web", (1, 0, 1, 0))
    assert await cluster.writes_during(lambda: client.bind(NS, "web", "n1")) == [f"{NS}/web"]


async def test_a_burst_of_pods_ends_in_the_right_status(cluster: Cluster) -> None:
    client = cluster.client
    budgets = [make_pdb(f"team-{t}", max_unavailable="10%", match_labels={"team": str(t)}) for t in range(4)]
    for pdb in budgets:
        await client.create(pdb)
    await asyncio.gather(*(
        client.create(make_pod(f"p{i}", node="" if i < 20 else "n1", team=str(i % 4)))
        for i in range(200)
    ))
    # 50 pods per team, 5 of them unbound; desired = 50 - ceil(10% of 50) = 45.
    for t in range(4):
        await cluster.settled(f"team-{t}", (50, 45, 45, 0))


# --------------------------------------------------------------------------------------- lifecycle


async def test_resync_rechecks_every_budget(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    client = cluster.client
    await client.create(make_pdb("one", min_available=0))
    await client.create(make_pdb("two", min_available=0))
    await cluster.settled("one", (0, 0, 0, 0))
    controller = DisruptionController(client, resync_period_s=0.05)
    synced: list[str] = []
    each_three_times = asyncio.Event()
    original = controller._sync

    async def spy(key: str) -> None:
        synced.append(key)
        if synced.count(f"{NS}/one") >= 3 and synced.count(f"{NS}/two") >= 3:
            each_three_times.set()
        await original(key)

    monkeypatch.setattr(controller, "_sync", spy)
    running = asyncio.create_task(controller.run())
    try:
        await controller.wait_synced()
        # No event touches the two budgets: only the resync brings them back, again and again.
        await asyncio.wait_for(each_three_times.wait(), SETTLE_TIMEOUT_S)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running


@pytest.mark.parametrize("period", [0.0, -1.0], ids=["zero", "negative"])
def test_resync_period_must_be_positive(period: float) -> None:
    with pytest.raises(ValueError, match=r"^resync_period_s must be positive"):
        DisruptionController(Client("127.0.0.1:1"), resync_period_s=period)


# ------------------------------------------------------------------------ for podsched simulate


@contextlib.asynccontextmanager
async def running(controller: DisruptionController) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(controller.run(), name="test-disruption-controller")
    try:
        await asyncio.wait_for(controller.wait_synced(), SETTLE_TIMEOUT_S)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_budgets_left_alone_keep_their_status(tmp_path: Path) -> None:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            await client.create(make_node("n1"))
            pinned = make_pdb("pinned", min_available=0, match_labels={"app": "web"})
            pinned.status.disruptions_allowed = 0
            pinned.status.current_healthy = 7
            await client.create(pinned)
            await client.create(make_pdb("web", min_available=0, match_labels={"app": "web"}))
            seen: list[str] = []

            def leave_alone(pdb: objects_pb2.PodDisruptionBudget) -> bool:
                seen.append(pdb.metadata.name)
                return pdb.metadata.name == "pinned"

            controller = DisruptionController(client, leave_alone=leave_alone)
            async with running(controller):
                cluster = Cluster(api, client, controller)
                await client.create(make_pod("web", node="n1", app="web"))
                await cluster.settled("web", (1, 1, 0, 1))
                await client.delete("Pod", "web", NS, grace_period_seconds=0)
                await cluster.settled("web", (0, 0, 0, 0))
                stored = await client.get(POD_DISRUPTION_BUDGET, "pinned", NS)
                # As created: the pods moved it, the controller asked, and wrote nothing.
                assert stored.status == pinned.status  # type: ignore[attr-defined]
                assert "pinned" in seen


async def test_once_idle_and_caught_up_every_status_is_written(cluster: Cluster) -> None:
    """What `podsched simulate` settles on: when the controller is idle and its informers have seen
    the last write of each kind, the statuses are current, with no waiting."""
    client, controller = cluster.client, cluster.controller
    await client.create(make_pdb("web", min_available=1, match_labels={"app": "web"}))
    for i in range(5):
        await client.create(make_pod(f"web-{i}", app="web"))
    for i in range(5):
        await client.bind(NS, f"web-{i}", "n1")
    last_pod = max(int(pod.metadata.resource_version) for pod in (await client.list("Pod", NS)).items)
    async with asyncio.timeout(SETTLE_TIMEOUT_S):
        while True:
            # The newest write of each kind is the newest object's resourceVersion (none is deleted).
            last_pdb = int((await client.get(POD_DISRUPTION_BUDGET, "web", NS)).metadata.resource_version)
            revisions = controller.informer_revisions()
            if (controller.idle() and revisions["pods"] >= last_pod
                    and revisions["poddisruptionbudgets"] >= last_pdb):
                break
            await asyncio.sleep(0)
    pdb = await client.get(POD_DISRUPTION_BUDGET, "web", NS)
    assert counts(pdb.status) == (5, 5, 1, 4)  # type: ignore[attr-defined]


async def test_no_resync_without_a_period(tmp_path: Path) -> None:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client, running(
            DisruptionController(client, resync_period_s=None)
        ):
            names = {task.get_name() for task in asyncio.all_tasks()}
    assert "disruption-worker" in names
    assert "disruption-resync" not in names
