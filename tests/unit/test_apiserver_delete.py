"""Pod deletion through the real service: immediate cases, graceful marking, shortening, and the
server finishing a graceful deletion when the grace period ends."""

from __future__ import annotations

import time

import pytest

from cluster.api import errors
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]


async def _bound_pod(api: Harness, name: str = "web", **spec: object) -> object:
    await api.create(make_node("n1"))
    return await api.create(make_pod(name, node_name="n1", **spec))


async def test_an_unscheduled_pod_is_deleted_at_once(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    deleted = await api.delete("Pod", "web", grace=30)
    assert deleted == created
    with pytest.raises(errors.NotFound, match=r'^pods "web" not found$'):
        await api.get("Pod", "web")


async def test_grace_zero_deletes_a_bound_pod_at_once(api: Harness) -> None:
    await _bound_pod(api)
    await api.delete("Pod", "web", grace=0)
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")


async def test_a_finished_pod_is_deleted_at_once(api: Harness) -> None:
    created = await _bound_pod(api)
    created.status.phase = "Succeeded"
    await api.update_status(created)
    await api.delete("Pod", "web")
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")


async def test_default_grace_marks_the_pod_for_30_seconds(api: Harness) -> None:
    created = await _bound_pod(api)
    before = time.time()
    marked = await api.delete("Pod", "web")
    meta = marked.metadata
    assert meta.deletion_grace_period_seconds == 30
    assert before + 30 <= meta.deletion_timestamp.seconds <= time.time() + 31
    assert int(meta.resource_version) > int(created.metadata.resource_version)
    assert await api.get("Pod", "web") == marked
    # Deleting again without a shorter grace changes nothing.
    assert await api.delete("Pod", "web") == marked
    assert await api.delete("Pod", "web", grace=60) == marked


async def test_the_pod_grace_period_applies_when_the_request_gives_none(api: Harness) -> None:
    await _bound_pod(api, termination_grace_period_seconds=5)
    marked = await api.delete("Pod", "web")
    assert marked.metadata.deletion_grace_period_seconds == 5


async def test_a_graceful_deletion_finishes_when_the_grace_period_ends(api: Harness) -> None:
    await _bound_pod(api)
    stream = api.watch("Pod", field_selector="metadata.name=web")
    [(kind, _)] = await api.next_events(stream, 1)
    assert kind == "ADDED"
    started = time.time()
    marked = await api.delete("Pod", "web", grace=1)
    assert marked.metadata.deletion_grace_period_seconds == 1
    events = await api.next_events(stream, 2, wait_s=5.0)
    assert [t for t, _ in events] == ["MODIFIED", "DELETED"]
    gone_at = time.time()
    assert gone_at >= marked.metadata.deletion_timestamp.seconds
    assert gone_at - started < 3.5
    assert events[1][1].metadata.deletion_timestamp == marked.metadata.deletion_timestamp
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")
    stream.cancel()


async def test_a_shorter_grace_moves_the_deadline_earlier(api: Harness) -> None:
    await _bound_pod(api)
    marked = await api.delete("Pod", "web", grace=60)
    shortened = await api.delete("Pod", "web", grace=1)
    assert shortened.metadata.deletion_grace_period_seconds == 1
    assert shortened.metadata.deletion_timestamp.seconds == marked.metadata.deletion_timestamp.seconds - 59
    stream = api.watch("Pod", resource_version=shortened.metadata.resource_version)
    [(kind, _)] = await api.next_events(stream, 1, wait_s=5.0)
    assert kind == "DELETED"
    assert time.time() >= shortened.metadata.deletion_timestamp.seconds


async def test_grace_zero_on_a_terminating_pod_deletes_it(api: Harness) -> None:
    await _bound_pod(api)
    await api.delete("Pod", "web", grace=60)
    await api.delete("Pod", "web", grace=0)
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")


async def test_a_terminating_pod_can_still_be_updated_but_not_unmarked(api: Harness) -> None:
    await _bound_pod(api)
    marked = await api.delete("Pod", "web", grace=60)
    change = type(marked)()
    change.CopyFrom(marked)
    change.metadata.ClearField("deletion_timestamp")
    change.metadata.ClearField("deletion_grace_period_seconds")
    change.metadata.labels["still"] = "here"
    updated = await api.update(change)
    assert updated.metadata.labels["still"] == "here"
    assert updated.metadata.deletion_timestamp == marked.metadata.deletion_timestamp
    assert updated.metadata.deletion_grace_period_seconds == 60


async def test_delete_precondition_applies_to_graceful_deletion(api: Harness) -> None:
    created = await _bound_pod(api)
    stale = r'^Operation cannot be fulfilled on pods "web": Precondition failed'
    with pytest.raises(errors.Conflict, match=stale):
        await api.delete("Pod", "web", resource_version="1")
    marked = await api.delete("Pod", "web", resource_version=created.metadata.resource_version)
    assert marked.metadata.HasField("deletion_timestamp")


async def test_dry_run_graceful_delete_marks_nothing(api: Harness) -> None:
    created = await _bound_pod(api)
    marked = await api.delete("Pod", "web", dry_run=True)
    assert marked.metadata.deletion_grace_period_seconds == 30
    assert await api.get("Pod", "web") == created
