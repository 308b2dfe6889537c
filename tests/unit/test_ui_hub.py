"""The web view's stream fan-out (cluster/ui/server.py's Hub): a snapshot first, then deltas holding only
what changed after it, each browser with its own bounded queue."""

from __future__ import annotations

import json

from cluster.ui.model import ViewModel
from cluster.ui.server import KEEPALIVE, Hub
from tests.builders import node, pod


def _events(raw: bytes) -> list[tuple[str, dict]]:
    """Parse Server-Sent Events: (event name, JSON data) per event."""
    out = []
    for block in raw.decode().split("\n\n"):
        if not block or block.startswith(":"):
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((fields["event"], json.loads(fields["data"])))
    return out


async def test_a_subscriber_gets_the_snapshot_then_only_later_changes():
    model = ViewModel("api:7443")
    hub = Hub(model)
    model.on_node(node("n1", cpu="4"))
    first = hub.subscribe()
    model.on_pod(pod("web", cpu="1"))
    # A second browser arrives: what changed before it goes to the first as a delta, and is in its
    # snapshot, so its own first delta does not repeat it.
    second = hub.subscribe()
    model.on_pod(pod("web", cpu="1", node_name="n1"))
    hub.flush()

    received = _events(await first.next(1.0))
    assert [name for name, _ in received] == ["snapshot", "delta", "delta"]
    assert received[0][1]["nodes"]["n1"]["pods"] == []
    assert list(received[1][1]["pods"]["upsert"]) == ["default/web"]
    assert received[2][1]["nodes"]["upsert"]["n1"]["pods"] == ["default/web"]

    received = _events(await second.next(1.0))
    assert [name for name, _ in received] == ["snapshot", "delta"]
    assert received[0][1]["pods"]["default/web"]["pending"] is True
    assert received[1][1]["pods"]["upsert"]["default/web"]["node"] == "n1"

    # Nothing changed: no delta, a keepalive comment when the wait runs out.
    hub.flush()
    assert await first.next(0.01) == KEEPALIVE


async def test_a_slow_subscriber_is_dropped_not_buffered_without_bound():
    model = ViewModel("api:7443")
    hub = Hub(model, max_pending_bytes=4096)
    slow = hub.subscribe()
    fast = hub.subscribe()
    for i in range(200):
        model.on_pod(pod(f"p{i}", cpu="1"))
        hub.flush()
        await fast.next(0.01)  # the fast one keeps up
    assert slow.closed and slow not in hub.subscribers
    assert await slow.next(0.01) == b""
    assert not fast.closed and fast in hub.subscribers
