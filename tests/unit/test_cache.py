"""The scheduler cache: nodes and pods in any order, assumed pods (confirm, forget, expire), errors."""

from __future__ import annotations

import asyncio
import logging

import pytest

from cluster.api import objects_pb2
from scheduler.cache import CLEANUP_PERIOD_S, Cache, CacheError, Snapshot
from scheduler.clock import FakeClock
from scheduler.framework import PodInfo
from tests.builders import ROOMY, node, pod

TTL = 30.0


def make_node(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> objects_pb2.Node:
    return node(name, labels=labels, allocatable={**ROOMY, "cpu": cpu})


def make_pod(name: str, node_name: str = "", cpu: str = "1", rv: str = "1") -> objects_pb2.Pod:
    return pod(name, resource_version=rv, node_name=node_name, cpu=cpu)


def assumed(name: str, node_name: str, cpu: str = "1") -> PodInfo:
    return PodInfo(make_pod(name, node_name, cpu))


def snap(cache: Cache) -> Snapshot:
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


def requested_cpu(cache: Cache) -> dict[str, int]:
    """Milli-CPU requested per live node, as a fresh snapshot sees it."""
    return {info.name: info.requested.milli_cpu for info in snap(cache).list()}


def pods_on(cache: Cache) -> dict[str, list[str]]:
    return {info.name: sorted(info.pods) for info in snap(cache).list()}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


@pytest.fixture
def cache(clock: FakeClock) -> Cache:
    return Cache(clock=clock, assumed_pod_ttl_s=TTL)


# ------------------------------------------------------------------------------------------- nodes


def test_nodes_added_updated_and_removed(cache: Cache) -> None:
    cache.add_node(make_node("a", cpu="2"))
    cache.add_node(make_node("b"))
    assert cache.node_count() == 2
    assert snap(cache).get("a").allocatable.milli_cpu == 2000

    cache.update_node(make_node("a", cpu="2"), make_node("a", cpu="8"))
    assert snap(cache).get("a").allocatable.milli_cpu == 8000

    cache.remove_node(make_node("a"))
    assert cache.node_count() == 1
    assert [info.name for info in snap(cache).list()] == ["b"]


def test_update_of_a_node_never_added_adds_it(cache: Cache) -> None:
    cache.update_node(make_node("a"), make_node("a", cpu="3"))
    assert requested_cpu(cache) == {"a": 0}
    assert snap(cache).get("a").allocatable.milli_cpu == 3000


def test_pods_seen_before_their_node_wait_for_it(cache: Cache) -> None:
    cache.add_pod(make_pod("p1", "a", cpu="500m"))
    cache.add_pod(make_pod("p2", "a", cpu="250m"))
    # No node object yet: the node is not schedulable, so not in a snapshot.
    assert cache.node_count() == 0
    assert snap(cache).list() == []
    assert cache.pod_count() == 2

    cache.add_node(make_node("a"))
    assert requested_cpu(cache) == {"a": 750}
    assert pods_on(cache) == {"a": ["default/p1", "default/p2"]}


def test_a_deleted_node_keeps_its_pods_until_they_go(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_pod(make_pod("p1", "a"))
    cache.remove_node(make_node("a"))
    assert cache.node_count() == 0
    assert snap(cache).list() == []
    assert cache.pod_count() == 1

    # The pod's delete event still finds it (on the ghost node).
    cache.remove_pod(make_pod("p1", "a"))
    assert cache.pod_count() == 0
    # The ghost went with its last pod: a node of that name starts afresh.
    cache.add_node(make_node("a"))
    assert pods_on(cache) == {"a": []}


def test_a_node_that_comes_back_finds_the_pods_still_on_it(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_pod(make_pod("p1", "a", cpu="2"))
    cache.remove_node(make_node("a"))
    cache.add_node(make_node("a"))
    assert requested_cpu(cache) == {"a": 2000}


# ----------------------------------------------------------------------------------- bound pods


def test_bound_pods_added_updated_removed(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_pod(make_pod("p", "a", cpu="1", rv="1"))
    assert requested_cpu(cache) == {"a": 1000}

    cache.update_pod(make_pod("p", "a", cpu="1", rv="1"), make_pod("p", "a", cpu="300m", rv="2"))
    assert requested_cpu(cache) == {"a": 300}
    assert cache.get_pod("default/p").metadata.resource_version == "2"

    cache.remove_pod(make_pod("p", "a", cpu="300m", rv="2"))
    assert requested_cpu(cache) == {"a": 0}
    assert cache.get_pod("default/p") is None


# -------------------------------------------------------------------------------- assumed pods


def test_assume_then_confirm_counts_the_pod_once_and_keeps_the_apis_object(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    assert cache.is_assumed("default/p")
    assert requested_cpu(cache) == {"a": 1000}

    cache.finish_binding(make_pod("p", "a"))
    bound = make_pod("p", "a", rv="7")
    cache.add_pod(bound)
    assert not cache.is_assumed("default/p")
    assert cache.get_pod("default/p") is bound
    assert requested_cpu(cache) == {"a": 1000}


def test_a_confirmed_assumed_pod_changes_its_node_once(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    assumed_generation = snap(cache).get("a").generation

    cache.add_pod(make_pod("p", "a", rv="7"))
    assert snap(cache).get("a").generation == assumed_generation + 1


def test_a_bound_pod_updated_on_its_node_changes_it_once(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_pod(make_pod("p", "a", rv="1"))
    generation = snap(cache).get("a").generation

    cache.update_pod(make_pod("p", "a", rv="1"), make_pod("p", "a", cpu="2", rv="2"))
    info = snap(cache).get("a")
    assert info.generation == generation + 1
    assert info.requested.milli_cpu == 2000


def test_confirmation_on_another_node_moves_the_pod(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_node(make_node("b"))
    cache.assume_pod(assumed("p", "a", cpu="2"))
    cache.add_pod(make_pod("p", "b", cpu="2"))
    assert requested_cpu(cache) == {"a": 0, "b": 2000}
    assert pods_on(cache) == {"a": [], "b": ["default/p"]}
    assert not cache.is_assumed("default/p")


def test_assume_then_forget_releases_the_room(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a", cpu="3"))
    cache.forget_pod(make_pod("p", "a"))
    assert requested_cpu(cache) == {"a": 0}
    assert not cache.is_assumed("default/p")
    assert cache.pod_count() == 0
    # Forgetting what the cache no longer has is nothing to do (an expiry or a deletion came first).
    cache.forget_pod(make_pod("p", "a"))
    assert cache.pod_count() == 0


def test_an_assumed_pod_on_an_unknown_node_goes_with_it(cache: Cache) -> None:
    cache.assume_pod(assumed("p", "gone"))
    assert snap(cache).list() == []
    cache.forget_pod(make_pod("p", "gone"))
    cache.add_node(make_node("gone"))
    assert pods_on(cache) == {"gone": []}


@pytest.mark.parametrize(
    ("advance", "finished", "expired"),
    [
        pytest.param(TTL - 1, True, False, id="before-the-ttl"),
        pytest.param(TTL, True, False, id="exactly-at-the-deadline"),
        pytest.param(TTL + 0.5, True, True, id="after-the-ttl"),
        pytest.param(10 * TTL, False, False, id="binding-never-finished-never-expires"),
    ],
)
def test_assumed_pod_expiry(
    cache: Cache, clock: FakeClock, advance: float, finished: bool, expired: bool
) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    clock.advance(100)  # the countdown starts when the binding finishes, not at assume time
    if finished:
        cache.finish_binding(make_pod("p", "a"))
    clock.advance(advance)
    cache.cleanup_expired_assumed_pods()
    assert cache.is_assumed("default/p") is not expired
    assert requested_cpu(cache) == {"a": 0 if expired else 1000}


def test_expiry_is_logged_and_a_late_confirmation_adds_the_pod_back(
    cache: Cache, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    cache.finish_binding(make_pod("p", "a"))
    clock.advance(TTL + 1)
    with caplog.at_level(logging.WARNING, logger="scheduler.cache.cache"):
        cache.cleanup_expired_assumed_pods()
    assert "assumed pod default/p expired" in caplog.text
    cache.add_pod(make_pod("p", "a"))
    assert requested_cpu(cache) == {"a": 1000}
    assert not cache.is_assumed("default/p")


def test_confirmed_pods_never_expire(cache: Cache, clock: FakeClock) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    cache.finish_binding(make_pod("p", "a"))
    cache.add_pod(make_pod("p", "a"))
    clock.advance(TTL * 10)
    cache.cleanup_expired_assumed_pods()
    assert requested_cpu(cache) == {"a": 1000}


def test_a_zero_ttl_never_expires_assumed_pods(clock: FakeClock) -> None:
    cache = Cache(clock=clock, assumed_pod_ttl_s=0)
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    cache.finish_binding(make_pod("p", "a"))
    clock.advance(1e6)
    cache.cleanup_expired_assumed_pods()
    assert cache.is_assumed("default/p")


def test_a_negative_ttl_is_refused(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="assumed_pod_ttl_s"):
        Cache(clock=clock, assumed_pod_ttl_s=-1)


async def test_run_expires_assumed_pods_every_second(cache: Cache, clock: FakeClock) -> None:
    cache.add_node(make_node("a"))
    cache.assume_pod(assumed("p", "a"))
    cache.finish_binding(make_pod("p", "a"))
    task = asyncio.create_task(cache.run())
    try:
        await asyncio.sleep(0)
        assert clock.next_wakeup() == clock.now() + CLEANUP_PERIOD_S
        for _ in range(int(TTL)):
            clock.advance(CLEANUP_PERIOD_S)
            await asyncio.sleep(0)
        assert cache.is_assumed("default/p")  # at the deadline, not past it
        clock.advance(CLEANUP_PERIOD_S)
        await asyncio.sleep(0)
        assert not cache.is_assumed("default/p")
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# ---------------------------------------------------------------------------------------- errors


def _known_pod_setup(cache: Cache) -> None:
    cache.add_node(make_node("a"))
    cache.add_node(make_node("b"))
    cache.add_pod(make_pod("bound", "a"))
    cache.assume_pod(assumed("assumed", "a"))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(lambda c: c.assume_pod(assumed("bound", "b")), "cannot be assumed",
                     id="assume-known-pod"),
        pytest.param(lambda c: c.assume_pod(assumed("new", "")), "without a node name", id="assume-no-node"),
        pytest.param(lambda c: c.add_pod(make_pod("bound", "a")), "already added", id="add-twice"),
        pytest.param(lambda c: c.update_pod(make_pod("ghost", "a"), make_pod("ghost", "a")),
                     "cannot be updated", id="update-unknown"),
        pytest.param(lambda c: c.update_pod(make_pod("assumed", "a"), make_pod("assumed", "a")),
                     "is assumed", id="update-assumed"),
        pytest.param(lambda c: c.remove_pod(make_pod("ghost", "a")), "cannot be removed",
                     id="remove-unknown"),
        pytest.param(lambda c: c.forget_pod(make_pod("bound", "a")), "not assumed", id="forget-bound"),
        pytest.param(lambda c: c.forget_pod(make_pod("assumed", "b")), "was assumed on a",
                     id="forget-on-another-node"),
        pytest.param(lambda c: c.remove_node(make_node("nowhere")), "not in the scheduler cache",
                     id="remove-unknown-node"),
    ],
)
def test_inconsistent_calls_raise_and_change_nothing(cache: Cache, call, message: str) -> None:
    _known_pod_setup(cache)
    def state() -> tuple[object, ...]:
        return pods_on(cache), requested_cpu(cache), cache.is_assumed("default/assumed"), cache.pod_count()

    before = state()
    with pytest.raises(CacheError, match=message):
        call(cache)
    assert state() == before


def test_an_update_on_another_node_follows_the_api(cache: Cache, caplog: pytest.LogCaptureFixture) -> None:
    # kube-scheduler exits on this (its cache is corrupted); podsched logs and believes the API.
    _known_pod_setup(cache)
    with caplog.at_level(logging.ERROR, logger="scheduler.cache.cache"):
        cache.update_pod(make_pod("bound", "a"), make_pod("bound", "b"))
    assert "default/bound was updated on node b" in caplog.text
    assert pods_on(cache) == {"a": ["default/assumed"], "b": ["default/bound"]}


@pytest.mark.parametrize(
    ("node_in_event", "logged"),
    [
        pytest.param("a", False, id="same-node"),
        pytest.param("", False, id="last-known-state-without-node"),
        pytest.param("b", True, id="another-node"),
    ],
)
def test_remove_takes_the_pod_from_where_the_cache_has_it(
    cache: Cache, caplog: pytest.LogCaptureFixture, node_in_event: str, logged: bool
) -> None:
    _known_pod_setup(cache)
    with caplog.at_level(logging.ERROR, logger="scheduler.cache.cache"):
        cache.remove_pod(make_pod("bound", node_in_event))
    assert pods_on(cache) == {"a": ["default/assumed"], "b": []}
    assert ("deleted from node b" in caplog.text) is logged


def test_an_assumed_pod_can_be_removed(cache: Cache) -> None:
    _known_pod_setup(cache)
    cache.remove_pod(make_pod("assumed", "a"))
    assert not cache.is_assumed("default/assumed")
    assert pods_on(cache) == {"a": ["default/bound"], "b": []}


def test_finish_binding_of_a_pod_not_assumed_is_ignored(cache: Cache, clock: FakeClock) -> None:
    _known_pod_setup(cache)
    cache.finish_binding(make_pod("bound", "a"))
    cache.finish_binding(make_pod("unknown", "a"))
    clock.advance(TTL * 2)
    cache.cleanup_expired_assumed_pods()
    assert pods_on(cache) == {"a": ["default/assumed", "default/bound"], "b": []}
