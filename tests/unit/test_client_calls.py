"""Client unit tests against an in-memory ApiServer on real loopback gRPC: verbs, kinds, error mapping,
retries, failover, deadlines, watches and paging."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.api.fencing import BOUND_UNDER_FENCE_ANNOTATION
from cluster.api.kinds import POD
from cluster.client import Client, Fence, WatchEvent
from cluster.client.client import SERVER_ENV, parse_servers
from tests.unit.test_client_fake_apiserver import (
    FAST_RETRIES,
    FakeApiServer,
    closed_port,
    pod,
    running_fake,
    until,
)

# ------------------------------------------------------------------------------------------------ verbs


async def test_create_get_update_delete_round_trip(client: Client, fake: FakeApiServer) -> None:
    created = await client.create(pod("web"))
    assert isinstance(created, objects_pb2.Pod)
    assert created.metadata.resource_version == "1"

    fetched = await client.get("pods", "web", "default")
    assert fetched == created

    created.metadata.labels["tier"] = "front"
    updated = await client.update(created)
    assert updated.metadata.labels["tier"] == "front"
    assert updated.metadata.resource_version == "2"

    updated.status.phase = "Running"
    with_status = await client.update_status(updated)
    assert with_status.status.phase == "Running"

    deleted = await client.delete(POD, "web", "default")
    assert deleted.metadata.name == "web"
    with pytest.raises(errors.NotFound, match='pods "web" not found'):
        await client.get(POD, "web", "default")


@pytest.mark.parametrize(
    "kind",
    [POD, "pods", "Pod", "po", "POD", objects_pb2.Pod],
    ids=["Kind", "plural", "manifest-name", "short-name", "upper-case", "message-class"],
)
async def test_every_spelling_of_a_kind_names_it_on_the_wire(
    client: Client, fake: FakeApiServer, kind: object
) -> None:
    await fake.put(pod("web"))
    await client.get(kind, "web", "default")  # type: ignore[arg-type]
    assert fake.calls_of("Get")[-1].kind == "Pod"


@pytest.mark.parametrize(
    "kind", ["widgets", objects_pb2.Container], ids=["unknown-name", "not-a-kind-message"]
)
async def test_an_unknown_kind_is_invalid_before_any_rpc(
    client: Client, fake: FakeApiServer, kind: object
) -> None:
    with pytest.raises(errors.Invalid):
        await client.get(kind, "web")  # type: ignore[arg-type]
    assert fake.calls == []


async def test_creating_a_message_that_is_no_kind_is_invalid(client: Client, fake: FakeApiServer) -> None:
    with pytest.raises(errors.Invalid, match="Container is not a kind the API serves"):
        await client.create(objects_pb2.Container(name="c"))
    assert fake.calls == []


async def test_delete_sends_grace_period_and_precondition_only_when_given(
    client: Client, fake: FakeApiServer
) -> None:
    stored = await fake.put(pod("a"))
    await fake.put(pod("b"))
    precondition = stored.metadata.resource_version
    await client.delete("po", "a", "default", grace_period_seconds=0, resource_version=precondition)
    await client.delete("po", "b", "default", dry_run=True)
    first, second = fake.calls_of("Delete")
    assert first.HasField("grace_period_seconds") and first.grace_period_seconds == 0
    assert first.resource_version == stored.metadata.resource_version
    assert not second.HasField("grace_period_seconds")
    assert second.dry_run


async def test_bind_sends_a_binding_to_the_node(client: Client, fake: FakeApiServer) -> None:
    await fake.put(pod("web"))
    bound = await client.bind("default", "web", "node-1")
    assert bound.spec.node_name == "node-1"
    binding = fake.calls_of("Bind")[0].binding
    assert (binding.metadata.namespace, binding.metadata.name) == ("default", "web")
    assert (binding.target.kind, binding.target.name) == ("Node", "node-1")
    with pytest.raises(errors.Conflict):
        await client.bind("default", "web", "node-2")


async def test_bind_group_sends_every_binding_and_returns_the_pods_in_order(
    client: Client, fake: FakeApiServer
) -> None:
    await fake.put(pod("w-0"))
    await fake.put(pod("w-1"))
    fence = Fence("kube-system", "kube-scheduler", "me", 7)
    bound = await client.bind_group([("default", "w-1", "n1"), ("default", "w-0", "n2")], fence=fence)
    assert [(p.metadata.name, p.spec.node_name, p.metadata.resource_version) for p in bound] == [
        ("w-1", "n1", "3"), ("w-0", "n2", "3"),
    ]
    request = fake.calls_of("BindGroup")[0]
    assert [(b.metadata.name, b.target.kind, b.target.name) for b in request.bindings] == [
        ("w-1", "Node", "n1"), ("w-0", "Node", "n2"),
    ]
    assert (request.fence.holder_identity, request.fence.token) == ("me", 7)


@pytest.mark.parametrize("fenced", [False, True])
async def test_bind_group_whose_reply_was_lost_returns_the_pods_it_bound(
    client: Client, fake: FakeApiServer, fenced: bool
) -> None:
    """The server bound the group and went away before answering; the retry is refused (the pods are
    bound), and the client finds them bound as it asked: that was its own group bind."""
    await fake.put(pod("w-0"))
    await fake.put(pod("w-1"))
    fake.lost_replies["BindGroup"] = 1
    fence = Fence("kube-system", "kube-scheduler", "me", 7) if fenced else None
    bound = await client.bind_group([("default", "w-0", "n1"), ("default", "w-1", "n2")], fence=fence)
    assert [(p.metadata.name, p.spec.node_name) for p in bound] == [("w-0", "n1"), ("w-1", "n2")]
    assert len(fake.calls_of("BindGroup")) == 2


@pytest.mark.parametrize("spoiler", ["other-node", "other-fence", "no-retry"])
async def test_bind_group_refused_with_conflict_raises_unless_a_lost_reply_explains_it(
    client: Client, fake: FakeApiServer, spoiler: str
) -> None:
    fence = Fence("kube-system", "kube-scheduler", "me", 7)
    await fake.put(pod("w-0"))
    taken = pod("w-1", node="n1" if spoiler != "other-node" else "n9")
    stamp = "someone-else@3" if spoiler == "other-fence" else "me@7"
    taken.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = stamp
    await fake.put(taken)
    if spoiler != "no-retry":
        fake.fail("BindGroup", grpc.StatusCode.UNAVAILABLE, "store down")
    with pytest.raises(errors.Conflict):
        await client.bind_group([("default", "w-0", "n1"), ("default", "w-1", "n1")], fence=fence)
    assert (await client.get("pods", "w-0", "default")).spec.node_name == ""


async def test_list_pages_and_list_all_follows_them_at_one_revision(
    client: Client, fake: FakeApiServer
) -> None:
    for index in range(7):
        await fake.put(pod(f"p{index}"))
    first = await client.list("pods", limit=3)
    assert [p.metadata.name for p in first.items] == ["p0", "p1", "p2"]
    assert first.continue_token and first.resource_version == "7"

    fake.calls.clear()
    everything = await client.list_all("pods", page_size=3)
    assert [p.metadata.name for p in everything.items] == [f"p{index}" for index in range(7)]
    assert everything.resource_version == "7"
    assert everything.continue_token == ""
    assert [request.limit for request in fake.calls_of("List")] == [3, 3, 3]


async def test_list_all_lists_in_one_piece_when_its_continue_token_expires(
    client: Client, fake: FakeApiServer
) -> None:
    for index in range(5):
        await fake.put(pod(f"p{index}"))

    async def compact_before_the_second_page(request: apiserver_pb2.ListRequest) -> None:
        if request.continue_token and not fake.compacted:
            await fake.put(pod("late"))
            fake.compact()

    fake.before_list = compact_before_the_second_page
    listed = await client.list_all("pods", page_size=2)
    assert [p.metadata.name for p in listed.items] == ["late", "p0", "p1", "p2", "p3", "p4"]
    assert listed.resource_version == "6"
    assert [request.limit for request in fake.calls_of("List")] == [2, 2, 0]


# ----------------------------------------------------------------------------------------- error mapping


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.NOT_FOUND, errors.NotFound),
        (grpc.StatusCode.ALREADY_EXISTS, errors.AlreadyExists),
        (grpc.StatusCode.ABORTED, errors.Conflict),
        (grpc.StatusCode.INVALID_ARGUMENT, errors.Invalid),
        (grpc.StatusCode.FAILED_PRECONDITION, errors.Forbidden),
        (grpc.StatusCode.OUT_OF_RANGE, errors.Expired),
        (grpc.StatusCode.INTERNAL, errors.InternalError),
        (grpc.StatusCode.UNKNOWN, errors.InternalError),
        (grpc.StatusCode.UNAUTHENTICATED, errors.Unauthorized),
        (grpc.StatusCode.PERMISSION_DENIED, errors.PermissionDenied),
        (grpc.StatusCode.DATA_LOSS, errors.InternalError),
    ],
    ids=lambda value: value.name if isinstance(value, grpc.StatusCode) else value.__name__,
)
@pytest.mark.parametrize("method", ["Get", "Create"], ids=["read", "write"])
async def test_a_final_status_maps_to_its_error_and_is_not_retried(
    client: Client, fake: FakeApiServer, code: grpc.StatusCode, error: type[errors.ApiError], method: str
) -> None:
    fake.fail(method, code, f"the server says {code.name}")
    with pytest.raises(error) as raised:
        if method == "Get":
            await client.get("pods", "web", "default")
        else:
            await client.create(pod("web"))
    assert type(raised.value) is error
    assert raised.value.message == f"the server says {code.name}"
    assert isinstance(raised.value.__cause__, grpc.aio.AioRpcError)
    assert len(fake.calls_of(method)) == 1


@pytest.mark.parametrize("method", ["Get", "Create"], ids=["read", "write"])
async def test_unavailable_is_retried_until_the_server_answers(
    client: Client, fake: FakeApiServer, method: str
) -> None:
    await fake.put(pod("web"))
    fake.fail(method, grpc.StatusCode.UNAVAILABLE, "store down", times=3)
    if method == "Get":
        result = await client.get("pods", "web", "default")
    else:
        result = await client.create(pod("other"))
    assert result.metadata.resource_version
    assert len(fake.calls_of(method)) == 4


@pytest.mark.timing
async def test_unavailable_until_the_deadline_raises_unavailable_within_it(fake: FakeApiServer) -> None:
    fake.fail("Get", grpc.StatusCode.UNAVAILABLE, "store down", times=1_000_000)
    async with Client(fake.address, timeout_s=0.5, retry_policy=FAST_RETRIES) as client:
        started = time.monotonic()
        with pytest.raises(errors.Unavailable, match="store down"):
            await client.get("pods", "web", "default")
        assert time.monotonic() - started < 1.5
    assert len(fake.calls_of("Get")) > 2


# ---------------------------------------------------------------------------------------------- failover


async def test_fails_over_to_the_second_server_when_the_first_is_down(fake: FakeApiServer) -> None:
    await fake.put(pod("web"))
    down = f"127.0.0.1:{closed_port()}"
    async with Client(f"{down},{fake.address}", timeout_s=5.0, retry_policy=FAST_RETRIES) as client:
        assert (await client.get("pods", "web", "default")).metadata.name == "web"
        assert client.current_server == fake.address
        # Later calls go straight to the server that answered.
        await client.get("pods", "web", "default")
    assert len(fake.calls_of("Get")) == 2


async def test_fails_over_when_the_first_server_cannot_reach_its_store() -> None:
    async with running_fake() as first, running_fake() as second:
        first.fail("Create", grpc.StatusCode.UNAVAILABLE, "etcd unreachable", times=1_000)
        servers = [first.address, second.address]
        async with Client(servers, timeout_s=5.0, retry_policy=FAST_RETRIES) as client:
            created = await client.create(pod("web"))
        assert created.metadata.name == "web"
        assert len(first.calls_of("Create")) == 1
        assert len(second.calls_of("Create")) == 1


async def test_every_server_down_raises_unavailable_naming_the_address() -> None:
    port = closed_port()
    async with Client(f"127.0.0.1:{port}", timeout_s=0.5, retry_policy=FAST_RETRIES) as client:
        with pytest.raises(errors.Unavailable, match=str(port)):
            await client.get("pods", "web", "default")


# ---------------------------------------------------------------------------------------------- deadlines


@pytest.mark.timing
async def test_a_hung_server_fails_a_read_at_the_deadline(fake: FakeApiServer) -> None:
    fake.hangs["Get"] = 5.0
    async with Client(fake.address, timeout_s=0.3, retry_policy=FAST_RETRIES) as client:
        started = time.monotonic()
        with pytest.raises(errors.Unavailable, match=r"no answer from the API server .* in 0.3s"):
            await client.get("pods", "web", "default")
        assert 0.25 < time.monotonic() - started < 1.5


async def test_a_write_that_timed_out_is_not_retried(fake: FakeApiServer) -> None:
    fake.hangs["Create"] = 5.0
    async with Client(fake.address, timeout_s=0.3, retry_policy=FAST_RETRIES) as client:
        with pytest.raises(errors.Unavailable):
            await client.create(pod("web"))
    assert len(fake.calls_of("Create")) == 1


@pytest.mark.timing
async def test_a_read_moves_on_from_a_hung_server_within_its_deadline() -> None:
    async with running_fake() as hung, running_fake() as healthy:
        hung.hangs["Get"] = 10.0
        await healthy.put(pod("web"))
        servers = [hung.address, healthy.address]
        async with Client(servers, timeout_s=1.0, retry_policy=FAST_RETRIES) as client:
            started = time.monotonic()
            fetched = await client.get("pods", "web", "default")
            elapsed = time.monotonic() - started
        assert fetched.metadata.name == "web"
        # The hung server got half of the deadline, the healthy one answered at once.
        assert 0.45 < elapsed < 1.0


# ------------------------------------------------------------------------------------------------ watch


async def _collect(events: AsyncIterator[WatchEvent], count: int) -> list[WatchEvent]:
    received = []
    async for event in events:
        received.append(event)
        if len(received) == count:
            break
    return received


async def test_watch_yields_unwrapped_events_in_order(client: Client, fake: FakeApiServer) -> None:
    await fake.put(pod("old"))
    events = client.watch("pods", "default")
    first = await anext(events)
    assert (first.type, first.object.metadata.name) == ("ADDED", "old")

    stored = await fake.put(pod("web"))
    stored.spec.node_name = "node-1"
    await fake.put(stored)
    await fake.remove(POD, "default", "web")
    rest = await _collect(events, 3)
    await events.aclose()
    assert [(event.type, event.object.metadata.name) for event in rest] == [
        ("ADDED", "web"), ("MODIFIED", "web"), ("DELETED", "web"),
    ]
    assert all(isinstance(event.object, objects_pb2.Pod) for event in rest)
    assert [event.object.metadata.resource_version for event in rest] == ["2", "3", "4"]
    assert rest[1].object.spec.node_name == "node-1"


async def test_watch_from_a_resource_version_starts_after_it(client: Client, fake: FakeApiServer) -> None:
    for name in ("a", "b", "c"):
        await fake.put(pod(name))
    events = await _collect(client.watch("pods", resource_version="1"), 2)
    assert [event.object.metadata.name for event in events] == ["b", "c"]


async def test_watch_from_a_compacted_resource_version_raises_expired(
    client: Client, fake: FakeApiServer
) -> None:
    for name in ("a", "b", "c"):
        await fake.put(pod(name))
    fake.compact()
    with pytest.raises(errors.Expired, match=r"too old resource version: 1 \(3\)"):
        await _collect(client.watch("pods", resource_version="1"), 1)
    assert len(fake.calls_of("Watch")) == 1


async def test_a_broken_watch_raises_unavailable_after_its_events(
    client: Client, fake: FakeApiServer
) -> None:
    events = client.watch("pods", resource_version="0")
    await fake.put(pod("a"))
    assert (await anext(events)).object.metadata.name == "a"
    await fake.break_watches()
    with pytest.raises(errors.Unavailable, match="watch broken"):
        await anext(events)
    # The watch does not restart itself.
    assert len(fake.calls_of("Watch")) == 1


async def test_opening_a_watch_fails_over_to_the_next_server(fake: FakeApiServer) -> None:
    down = f"127.0.0.1:{closed_port()}"
    async with Client([down, fake.address], timeout_s=5.0, retry_policy=FAST_RETRIES) as client:
        events = client.watch("pods", resource_version="0")
        pending = asyncio.ensure_future(anext(events))
        await fake.put(pod("a"))
        event = await asyncio.wait_for(pending, 5.0)
        await events.aclose()
    assert event.object.metadata.name == "a"


async def test_closing_a_watch_cancels_the_stream(client: Client, fake: FakeApiServer) -> None:
    events = client.watch("pods", resource_version="0")
    await fake.put(pod("a"))
    await anext(events)
    assert fake.open_watches == 1
    await events.aclose()
    await until(lambda: fake.open_watches == 0)


# --------------------------------------------------------------------------------------- construction


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ("10.0.0.1:7443", ("10.0.0.1:7443",)),
        ("a:1, b:2,,", ("a:1", "b:2")),
        (["a:1", "b:2,c:3"], ("a:1", "b:2", "c:3")),
        ("[::1]:7443", ("[::1]:7443",)),
    ],
    ids=["one", "comma-separated", "list", "ipv6"],
)
def test_server_lists_are_parsed_in_order(servers: str | list[str], expected: tuple[str, ...]) -> None:
    assert parse_servers(servers) == expected


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ("", "no API server address given"),
        (" , ", "no API server address given"),
        ([], "no API server address given"),
        ("localhost", 'invalid API server address "localhost": expected host:port'),
        ("host:http", 'invalid API server address "host:http"'),
        (":7443", 'invalid API server address ":7443"'),
        ("host:70000", 'invalid API server address "host:70000"'),
    ],
    ids=["empty", "only-commas", "empty-list", "no-port", "named-port", "no-host", "port-out-of-range"],
)
def test_bad_server_addresses_are_rejected(servers: str | list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        Client(servers)


@pytest.mark.parametrize("timeout_s", [0, -1.0], ids=["zero", "negative"])
def test_a_non_positive_timeout_is_rejected(timeout_s: float) -> None:
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        Client(timeout_s=timeout_s)


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        ("a:1,b:2", "env:3", ("a:1", "b:2")),
        (None, "env:3", ("env:3",)),
        (None, None, ("127.0.0.1:7443",)),
    ],
    ids=["flag-wins", "environment", "default"],
)
def test_from_env_prefers_the_flag_then_the_environment(
    monkeypatch: pytest.MonkeyPatch, flag: str | None, env: str | None, expected: tuple[str, ...]
) -> None:
    if env is None:
        monkeypatch.delenv(SERVER_ENV, raising=False)
    else:
        monkeypatch.setenv(SERVER_ENV, env)
    assert Client.from_env(flag).servers == expected


async def test_closing_the_client_ends_its_watches_and_its_use(fake: FakeApiServer) -> None:
    client = Client(fake.address, timeout_s=5.0, retry_policy=FAST_RETRIES)
    await fake.put(pod("a"))
    events = client.watch("pods")
    assert (await anext(events)).object.metadata.name == "a"
    reader = asyncio.ensure_future(anext(events))
    await client.close()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(reader, 5.0)
    await until(lambda: fake.open_watches == 0)
    with pytest.raises(RuntimeError, match="the API client is closed"):
        await client.get("pods", "a", "default")
