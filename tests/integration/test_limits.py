"""The API limits through a real `podsched apiserver` process: each is refused with a status and a
message naming the limit and the value, and a refused write leaves nothing behind.

Calls go over a raw gRPC channel with the bearer token as metadata, so that each answer is seen exactly
as the server sent it (no client retries). One server with tokens and small limits serves the module;
the request timeout has a server of its own, whose timeout (1ns) cuts every call that waits on the store.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, kinds, objects_pb2
from cluster.client.credentials import ClientCredentials
from cluster.launcher.process import ApiServerProcess, ApiServerStartError
from tests.builders import IMAGE, pod
from tests.integration.conftest import own_apiserver

ADMIN_TOKEN = "admin-token"
ALICE_TOKEN = "alice-token"
MAX_WATCHES = 2
MAX_PAGE_SIZE = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("limits")
    tokens = directory / "tokens.csv"
    tokens.write_text(
        f'{ADMIN_TOKEN},admin,1,"system:masters"\n{ALICE_TOKEN},alice,2,"podsched:clients"\n'
    )
    with own_apiserver("sqlite", directory, name_prefix="limits", extra_args=[
        "--controllers", "none", "--token-auth-file", str(tokens),
        "--max-watches-per-user", str(MAX_WATCHES), "--max-page-size", str(MAX_PAGE_SIZE),
    ]) as process:
        yield process


@asynccontextmanager
async def stub(server: ApiServerProcess) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    async with grpc.aio.insecure_channel(
        server.address, options=[("grpc.max_send_message_length", 64 * 1024 * 1024)]
    ) as channel:
        yield apiserver_pb2_grpc.ApiServerStub(channel)


def as_user(token: str) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token).metadata()


ADMIN = as_user(ADMIN_TOKEN)
ALICE = as_user(ALICE_TOKEN)



async def refused_create(
    api: apiserver_pb2_grpc.ApiServerStub, obj: objects_pb2.Pod
) -> grpc.aio.AioRpcError:
    """Create ``obj`` as the admin, expecting a refusal; check nothing of it was stored."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await api.Create(apiserver_pb2.CreateRequest(object=kinds.wrap(obj)), metadata=ADMIN, timeout=30)
    listed = await api.List(
        apiserver_pb2.ListRequest(kind="Pod", namespace=obj.metadata.namespace), metadata=ADMIN, timeout=30
    )
    assert list(listed.items) == []
    return raised.value


async def test_an_object_past_the_size_limit_is_invalid_naming_its_size_and_the_limit(
    server: ApiServerProcess, namespace: str
) -> None:
    big = pod("big", namespace, image=IMAGE)
    for i in range(30_000):
        big.spec.containers[0].env.add(name=f"VARIABLE_{i:05d}", value="x" * 40)
    async with stub(server) as api:
        error = await refused_create(api, big)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert re.fullmatch(
        r'Pod "big" is invalid: the object is \d+ bytes serialized, more than the limit of 1572864 bytes '
        r"\(1\.5 MiB: etcd's default request size limit\)",
        error.details(),
    ), error.details()


async def test_a_request_past_grpcs_receive_limit_is_resource_exhausted_naming_both_sizes(
    server: ApiServerProcess, namespace: str
) -> None:
    huge = pod("huge", namespace, image=IMAGE)
    huge.metadata.annotations["blob"] = "x" * (17 * 1024 * 1024)
    async with stub(server) as api:
        error = await refused_create(api, huge)
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "Received message larger than max" in error.details()
    assert "vs. 16777216" in error.details()


@pytest.mark.parametrize(
    ("labels", "annotations", "expected"),
    [
        ({f"l{i}": "v" for i in range(65)}, {}, "metadata.labels: Too many: 65: must have at most 64 items"),
        ({"a" * 64: "v"}, {}, "name part must be no more than 63 characters"),
        ({"app": "v" * 64}, {}, "must be no more than 63 characters"),
        ({"a" * 254 + "/app": "v"}, {}, "prefix part must be no more than 253 characters"),
        ({}, {"note": "x" * (256 * 1024)}, "metadata.annotations: Too long: must have at most 262144 bytes"),
    ],
    ids=["label-count", "label-key-name", "label-value", "label-key-prefix", "annotations-size"],
)
async def test_label_and_annotation_limits_are_invalid_naming_the_limit(
    server: ApiServerProcess, namespace: str, labels: dict[str, str], annotations: dict[str, str],
    expected: str,
) -> None:
    obj = pod("labelled", namespace, image=IMAGE)
    obj.metadata.labels.update(labels)
    obj.metadata.annotations.update(annotations)
    async with stub(server) as api:
        error = await refused_create(api, obj)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith('Pod "labelled" is invalid: ')
    assert expected in error.details()


async def test_a_list_page_above_the_maximum_is_invalid_naming_it_and_paging_within_it_works(
    server: ApiServerProcess, namespace: str
) -> None:
    async with stub(server) as api:
        for i in range(MAX_PAGE_SIZE + 1):
            request = apiserver_pb2.CreateRequest(object=kinds.wrap(pod(f"p{i}", namespace, image=IMAGE)))
            await api.Create(request, metadata=ADMIN, timeout=30)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await api.List(
                apiserver_pb2.ListRequest(kind="Pod", namespace=namespace, limit=MAX_PAGE_SIZE + 1),
                metadata=ADMIN, timeout=30,
            )
        assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.details() == (
            f"limit {MAX_PAGE_SIZE + 1} is more than the maximum page size of {MAX_PAGE_SIZE}: ask for at "
            f"most {MAX_PAGE_SIZE} objects and follow the continue token"
        )
        first = await api.List(
            apiserver_pb2.ListRequest(kind="Pod", namespace=namespace, limit=MAX_PAGE_SIZE),
            metadata=ADMIN, timeout=30,
        )
        rest = await api.List(
            apiserver_pb2.ListRequest(
                kind="Pod", namespace=namespace, limit=MAX_PAGE_SIZE, continue_token=first.continue_token
            ),
            metadata=ADMIN, timeout=30,
        )
        # Without a limit, the whole list.
        whole = await api.List(apiserver_pb2.ListRequest(kind="Pod", namespace=namespace), metadata=ADMIN)
    assert (len(first.items), len(rest.items), rest.continue_token) == (MAX_PAGE_SIZE, 1, "")
    assert len(whole.items) == MAX_PAGE_SIZE + 1


async def _first_event(call: grpc.aio.UnaryStreamCall) -> apiserver_pb2.WatchEvent:
    return await asyncio.wait_for(call.read(), 10)


async def test_watches_past_the_per_user_limit_are_resource_exhausted_and_closing_one_makes_room(
    server: ApiServerProcess, namespace: str
) -> None:
    async with stub(server) as api:
        await api.Create(
            apiserver_pb2.CreateRequest(object=kinds.wrap(pod("seen", namespace, image=IMAGE))),
            metadata=ADMIN, timeout=30,
        )
        request = apiserver_pb2.WatchRequest(kind="Pod", namespace=namespace)
        held = [api.Watch(request, metadata=ALICE) for _ in range(MAX_WATCHES)]
        for call in held:
            assert (await _first_event(call)).type == apiserver_pb2.WatchEvent.ADDED
        refused = api.Watch(request, metadata=ALICE)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await _first_event(refused)
        assert raised.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert raised.value.details() == (
            f'too many watches for user "alice": {MAX_WATCHES} open, the limit is {MAX_WATCHES} '
            "(--max-watches-per-user); close a watch before opening another"
        )
        # Other callers are not counted against alice; an admin is not counted at all.
        admin_watches = [api.Watch(request, metadata=ADMIN) for _ in range(MAX_WATCHES + 1)]
        for call in admin_watches:
            assert (await _first_event(call)).type == apiserver_pb2.WatchEvent.ADDED
        # The server counts a watch the client cancels as closed.
        held.pop().cancel()
        for _ in range(50):
            again = api.Watch(request, metadata=ALICE)
            try:
                await _first_event(again)
                break
            except grpc.aio.AioRpcError as error:
                assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                await asyncio.sleep(0.1)
        else:
            pytest.fail("the cancelled watch was never released")
        for call in [*held, *admin_watches, again]:
            call.cancel()


@pytest.fixture(scope="module")
def hurried(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver(
        "sqlite", tmp_path_factory.mktemp("hurried"), name_prefix="hurried",
        extra_args=["--controllers", "none", "--request-timeout", "1ns"],
    ) as process:
        yield process


async def test_a_call_past_the_request_timeout_is_deadline_exceeded_naming_it(
    hurried: ApiServerProcess,
) -> None:
    async with stub(hurried) as api:
        for call in (
            api.Get(apiserver_pb2.GetRequest(kind="Pod", namespace="default", name="web"), timeout=30),
            api.List(apiserver_pb2.ListRequest(kind="Node"), timeout=30),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await call
            assert raised.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
            assert "did not finish within the server's request timeout of 1ns (--request-timeout)" in (
                raised.value.details()
            )
        # Watches are long-running: the timeout does not apply to them.
        watch = api.Watch(apiserver_pb2.WatchRequest(kind="PriorityClass"))
        event = await _first_event(watch)
        assert event.type == apiserver_pb2.WatchEvent.ADDED
        watch.cancel()


def test_bad_limit_flags_are_refused_naming_the_flag(tmp_path: Path) -> None:
    for flag, value, expected in (
        ("--request-timeout", "0s", "--request-timeout: invalid request timeout '0s': must be positive"),
        ("--max-watches-per-user", "0", "invalid --max-watches-per-user '0': must be at least 1"),
        ("--max-page-size", "lots", "invalid --max-page-size 'lots': not a whole number"),
    ):
        server = ApiServerProcess(["--data-dir", str(tmp_path)], extra_args=[flag, value])
        with pytest.raises(ApiServerStartError, match=expected):
            server.start()
