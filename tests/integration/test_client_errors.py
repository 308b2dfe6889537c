"""Each way the real API server refuses a call reaches the client's caller as its `cluster.api.errors`
class, with the server's Kubernetes-worded message, on each backend."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD
from cluster.client import Client
from tests.builders import IMAGE, pod


async def get_missing(client: Client, namespace: str) -> object:
    return await client.get("pods", "missing", namespace)


async def create_twice(client: Client, namespace: str) -> object:
    await client.create(pod("twice", namespace, image=IMAGE))
    return await client.create(pod("twice", namespace, image=IMAGE))


async def update_stale(client: Client, namespace: str) -> object:
    created = await client.create(pod("stale", namespace, image=IMAGE))
    fresh = objects_pb2.Pod()
    fresh.CopyFrom(created)
    fresh.metadata.labels["a"] = "1"
    await client.update(fresh)
    created.metadata.labels["b"] = "2"
    return await client.update(created)


async def create_invalid_name(client: Client, namespace: str) -> object:
    return await client.create(pod("Web", namespace, image=IMAGE))


async def create_with_unknown_priority_class(client: Client, namespace: str) -> object:
    obj = pod("classy", namespace, image=IMAGE)
    obj.spec.priority_class_name = "no-such-class"
    return await client.create(obj)


async def bind_twice(client: Client, namespace: str) -> object:
    node = objects_pb2.Node()
    node.metadata.name = f"node-{namespace}"
    await client.create(node)
    await client.create(pod("bound", namespace, image=IMAGE))
    await client.bind(namespace, "bound", node.metadata.name)
    return await client.bind(namespace, "bound", node.metadata.name)


async def delete_with_stale_precondition(client: Client, namespace: str) -> object:
    created = await client.create(pod("guarded", namespace, image=IMAGE))
    created.metadata.labels["a"] = "1"
    await client.update(created)
    return await client.delete(
        POD, "guarded", namespace, grace_period_seconds=0, resource_version=created.metadata.resource_version
    )


async def list_with_bad_selector(client: Client, namespace: str) -> object:
    return await client.list("pods", namespace, field_selector="spec.foo=bar")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (get_missing, errors.NotFound, 'pods "missing" not found'),
        (create_twice, errors.AlreadyExists, 'pods "twice" already exists'),
        (update_stale, errors.Conflict, f'on pods "stale": {errors.CONFLICT_MESSAGE}'),
        (create_invalid_name, errors.Invalid, 'Pod "Web" is invalid: metadata.name: Invalid value: "Web"'),
        (create_with_unknown_priority_class, errors.Forbidden, "no PriorityClass with name no-such-class"),
        (bind_twice, errors.Conflict, 'Operation cannot be fulfilled on pods/binding "bound"'),
        (delete_with_stale_precondition, errors.Conflict, "Precondition failed"),
        (list_with_bad_selector, errors.Invalid, "spec.foo"),
    ],
    ids=[
        "not-found", "already-exists", "stale-update", "invalid-name", "unknown-priority-class",
        "bind-bound-pod", "stale-delete-precondition", "unsupported-field-selector",
    ],
)
async def test_server_refusals_arrive_as_api_errors(
    client: Client,
    namespace: str,
    call: Callable[[Client, str], Awaitable[object]],
    error: type[errors.ApiError],
    message: str,
) -> None:
    with pytest.raises(error) as raised:
        await call(client, namespace)
    assert type(raised.value) is error
    assert message in raised.value.message


async def test_a_watch_from_a_resource_version_ahead_of_the_store_is_invalid(
    client: Client, namespace: str
) -> None:
    listed = await client.list("pods", namespace)
    ahead = str(int(listed.resource_version) + 1_000_000)
    events = client.watch("pods", namespace, resource_version=ahead)
    with pytest.raises(errors.Invalid, match="Too large resource version"):
        # Refused at once: a watch that waited for a revision this far ahead would wait forever.
        await asyncio.wait_for(anext(events), 10.0)
    await events.aclose()
