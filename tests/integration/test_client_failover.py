"""Failover between two real `podsched apiserver` processes over the same etcd: when the server a client
(and an informer) talks to is killed, calls go on through the other one, and the informer's watch
resumes there from the same resourceVersion, since both serve the same store revisions."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator

import pytest

from cluster.api.kinds import POD
from cluster.client import Client, Informer
from cluster.client.retry import RetryPolicy
from cluster.launcher.process import ApiServerProcess
from tests.integration.test_client_informer import EventLog, assert_matches_server, pod, running, versions

pytestmark = pytest.mark.etcd


@pytest.fixture
def two_apiservers(etcd_endpoints: list[str]) -> Iterator[tuple[ApiServerProcess, ApiServerProcess]]:
    store_args = ["--etcd", ",".join(etcd_endpoints)]
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(ApiServerProcess(store_args))
        second = stack.enter_context(ApiServerProcess(store_args))
        yield first, second


async def test_client_and_informer_fail_over_when_a_server_is_killed(
    two_apiservers: tuple[ApiServerProcess, ApiServerProcess],
) -> None:
    first, second = two_apiservers
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    policy = RetryPolicy(initial_s=0.05, max_s=0.5)
    async with Client([first.address, second.address], timeout_s=20.0) as client:
        informer = Informer(client, POD, namespace=namespace, rewatch_policy=policy)
        log = EventLog().register(informer)
        async with running(informer):
            for index in range(5):
                await client.create(pod(f"before-{index}", namespace))
            assert client.current_server == first.address
            await assert_matches_server(client, informer, namespace)

            first.kill()

            # Every call succeeds through the second server, the first one after the kill included.
            created = [await client.create(pod(f"after-{index}", namespace)) for index in range(5)]
            assert client.current_server == second.address
            await client.delete(POD, "before-0", namespace, grace_period_seconds=0)
            created[0].metadata.labels["moved"] = "yes"
            await client.update(created[0])
            fetched = await client.get(POD, "after-0", namespace)
            assert fetched.metadata.labels["moved"] == "yes"

            final = await assert_matches_server(client, informer, namespace)
            await asyncio.sleep(0.2)
            assert versions(dict(informer.items())) == final

    assert log.problems == []
    assert versions(log.state) == final
    # Each object was added once (EventLog flags a second add), and the one deletion was seen once.
    assert sorted(key for kind, key, _ in log.events if kind == "add") == sorted(
        [f"{namespace}/before-{i}" for i in range(5)] + [f"{namespace}/after-{i}" for i in range(5)]
    )
    assert [key for kind, key, _ in log.events if kind == "delete"] == [f"{namespace}/before-0"]
