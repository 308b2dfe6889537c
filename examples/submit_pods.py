"""Submit pods with podsched's Python client and wait until each is bound to a node.

This is how programs use podsched: through `cluster.client.Client`, the async gRPC client. The program
creates ``--count`` pods labelled with one batch id, then lists them and watches from the list's
resourceVersion (no polling) until every pod has a node, printing where each landed.

Run it against a running API server (with a scheduler, or with anything else that binds pods)::

    podsched apiserver --data-dir /tmp/podsched &          # serves on 127.0.0.1:7443
    python examples/submit_pods.py --count 5               # or --server host:port

Options: ``--server`` (default: $PODSCHED_SERVER, else 127.0.0.1:7443), ``--count`` (5), ``--namespace``
(default), ``--timeout`` seconds to wait for the bindings (60). Exit code 0 when every pod was bound, 1
on timeout (the unbound pods are named) or an API error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid

from cluster.api import errors, objects_pb2
from cluster.client import Client

BATCH_LABEL = "podsched.example/batch"


def make_pod(name: str, namespace: str, batch: str) -> objects_pb2.Pod:
    pod = objects_pb2.Pod(api_version="v1", kind="Pod")
    pod.metadata.name = name
    pod.metadata.namespace = namespace
    pod.metadata.labels.update({"app": "submit-pods", BATCH_LABEL: batch})
    container = pod.spec.containers.add(name="app", image="busybox:1.36", command=["sleep", "3600"])
    container.resources.requests.update({"cpu": "100m", "memory": "64Mi"})
    return pod


async def submit_and_wait(client: Client, *, count: int, namespace: str, timeout_s: float) -> int:
    batch = uuid.uuid4().hex[:6]
    names = [f"submit-{batch}-{i}" for i in range(count)]
    for name in names:
        await client.create(make_pod(name, namespace, batch))
        print(f"pod/{name} created", flush=True)

    # List, then watch from the list's version: every later binding arrives as an event, none is missed.
    selector = f"{BATCH_LABEL}={batch}"
    listed = await client.list_all("Pod", namespace, label_selector=selector)
    unbound = set(names)
    for pod in listed.items:
        _report(pod, unbound)
    if not unbound:
        return 0
    try:
        async with asyncio.timeout(timeout_s):
            async for event in client.watch(
                "Pod", namespace, resource_version=listed.resource_version, label_selector=selector
            ):
                name = event.object.metadata.name
                if event.type == "DELETED" and name in unbound:
                    print(f"pod/{name} was deleted before it was bound", file=sys.stderr)
                    return 1
                _report(event.object, unbound)
                if not unbound:
                    return 0
    except TimeoutError:
        print(f"timed out after {timeout_s:g}s; not bound: {', '.join(sorted(unbound))}", file=sys.stderr)
    return 1


def _report(pod: objects_pb2.Pod, unbound: set[str]) -> None:
    name = pod.metadata.name
    if pod.spec.node_name and name in unbound:
        unbound.discard(name)
        print(f"pod/{name} bound to {pod.spec.node_name}", flush=True)


async def main(args: argparse.Namespace) -> int:
    async with Client.from_env(args.server) as client:
        try:
            return await submit_and_wait(
                client, count=args.count, namespace=args.namespace, timeout_s=args.timeout
            )
        except errors.ApiError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=None, help="API server host:port (default: $PODSCHED_SERVER)")
    parser.add_argument("--count", type=int, default=5, help="how many pods to submit (default 5)")
    parser.add_argument("--namespace", default="default", help="namespace of the pods (default: default)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for bindings (60)")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
