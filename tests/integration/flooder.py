"""A hostile client for test_fairness: floods an API server with pod creates and watch openings from one
identity, as fast as it can, for a while; then prints what the server answered as one JSON line.

    python -m tests.integration.flooder ADDRESS TOKEN NAMESPACE [--seconds 15] [--creators 300]
        [--watchers 50]

Creators each create pods back to back (the pods name a scheduler nobody runs: the flood is API load,
not scheduling work). Watchers each open a watch of the namespace from "now" (the initial list of
everything created so far), wait for its first event, drop it and open the next. It speaks raw gRPC with
the bearer token as metadata, so that nothing between it and the server retries or slows it down.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import time

import grpc

from cluster.api import apiserver_pb2, apiserver_pb2_grpc
from tests.builders import IMAGE, pod

#: The schedulerName of the flood's pods: no scheduler schedules them.
NOBODYS_SCHEDULER = "flood-nobody"
#: Channels the calls are spread over (one HTTP/2 connection each).
CHANNELS = 4


class Tally:
    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        #: One message per status code seen, to show what the refusals say.
        self.messages: dict[str, str] = {}

    def error(self, what: str, error: grpc.aio.AioRpcError) -> None:
        key = f"{what}_{error.code().name}"
        self.counts[key] += 1
        self.messages.setdefault(key, error.details() or "")


def flood_pod(namespace: str, name: str) -> apiserver_pb2.Object:
    return apiserver_pb2.Object(pod=pod(name, namespace, scheduler_name=NOBODYS_SCHEDULER, image=IMAGE))


async def create_loop(
    stub: apiserver_pb2_grpc.ApiServerStub, metadata: tuple[tuple[str, str], ...], namespace: str,
    names: itertools.count[int], until: float, tally: Tally,
) -> None:
    while time.monotonic() < until:
        request = apiserver_pb2.CreateRequest(object=flood_pod(namespace, f"flood-{next(names)}"))
        try:
            await stub.Create(request, metadata=metadata, timeout=30)
            tally.counts["create_OK"] += 1
        except grpc.aio.AioRpcError as error:
            tally.error("create", error)


async def watch_loop(
    stub: apiserver_pb2_grpc.ApiServerStub, metadata: tuple[tuple[str, str], ...], namespace: str,
    until: float, tally: Tally,
) -> None:
    while time.monotonic() < until:
        call = stub.Watch(apiserver_pb2.WatchRequest(kind="Pod", namespace=namespace), metadata=metadata)
        try:
            # Up to a second for a first event: an empty namespace sends none.
            await asyncio.wait_for(call.read(), 1.0)
            tally.counts["watch_OK"] += 1
        except TimeoutError:
            tally.counts["watch_OK"] += 1
        except grpc.aio.AioRpcError as error:
            tally.error("watch", error)
        finally:
            call.cancel()


async def flood(args: argparse.Namespace) -> dict[str, object]:
    metadata = (("authorization", f"Bearer {args.token}"),)
    channels = [grpc.aio.insecure_channel(args.address) for _ in range(CHANNELS)]
    stubs = [apiserver_pb2_grpc.ApiServerStub(channel) for channel in channels]
    tally = Tally()
    names = itertools.count()
    until = time.monotonic() + args.seconds
    try:
        async with asyncio.TaskGroup() as tasks:
            for i in range(args.creators):
                stub = stubs[i % CHANNELS]
                tasks.create_task(create_loop(stub, metadata, args.namespace, names, until, tally))
            for i in range(args.watchers):
                tasks.create_task(watch_loop(stubs[i % CHANNELS], metadata, args.namespace, until, tally))
    finally:
        for channel in channels:
            await channel.close()
    return {"counts": dict(tally.counts), "messages": tally.messages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("address")
    parser.add_argument("token")
    parser.add_argument("namespace")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--creators", type=int, default=300)
    parser.add_argument("--watchers", type=int, default=50)
    print(json.dumps(asyncio.run(flood(parser.parse_args()))), flush=True)


if __name__ == "__main__":
    main()
