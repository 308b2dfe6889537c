"""The chaos tests' recorder (tests/chaos/recorder.py) on a real etcd: a transaction that writes many keys
at one revision (as a gang's group bind does) is never seen half-recorded, however often the history is
read while it arrives."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from pathlib import Path

import pytest

from cluster.api.kinds import POD
from store.base import TxnOp
from store.etcd import EtcdStore
from tests import builders
from tests.chaos.recorder import Recorder
from tests.conftest import running_cluster

pytestmark = pytest.mark.etcd

#: Keys per transaction (etcd allows 128 operations in one by default) and transactions written.
KEYS_PER_TXN = 100
TXNS = 30


async def _write_transactions(endpoints: list[str]) -> None:
    store = await EtcdStore.connect(endpoints)
    try:
        for txn in range(TXNS):
            ops = [TxnOp.create(POD.key("gangs", f"p-{txn}-{i}"),
                                builders.pod(f"p-{txn}-{i}", "gangs", node_name="n1").SerializeToString())
                   for i in range(KEYS_PER_TXN)]
            result = await store.txn(ops)
            assert result.succeeded
    finally:
        await store.close()


def test_a_transaction_is_recorded_whole(tmp_path: Path) -> None:
    with running_cluster(1, tmp_path / "etcd", "recorder") as etcd:
        recorder = Recorder(etcd.endpoints)
        recorder.start()
        done = threading.Event()
        halves: list[str] = []
        reads = 0

        def read_while_recording() -> None:
            nonlocal reads
            while not done.is_set():
                events = recorder.events()
                reads += 1
                if events:
                    last = events[-1].revision
                    seen = Counter(event.revision for event in events)[last]
                    if seen != KEYS_PER_TXN:
                        halves.append(f"revision {last}: {seen} of its {KEYS_PER_TXN} events")

        reader = threading.Thread(target=read_while_recording)
        reader.start()
        try:
            asyncio.run(_write_transactions(etcd.endpoints))
            recorder.wait_for(lambda events: len(events) == KEYS_PER_TXN * TXNS, "every write recorded", 30)
        finally:
            done.set()
            reader.join()
            recorder.stop()
    assert not halves, f"{len(halves)} of {reads} reads ended inside a revision: {halves[:5]}"
    events = recorder.events()
    assert Counter(event.revision for event in events) == {revision: KEYS_PER_TXN
                                                          for revision in {e.revision for e in events}}
