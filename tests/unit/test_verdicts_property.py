"""Verdict tallies (framework/verdicts.py): the NumPy answers over a memo's verdict indices equal the
reference passes over the verdict objects, and a memo's coded Verdicts are consistent with its table."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from scheduler.cache import Cache, Snapshot
from scheduler.clock import SystemClock
from scheduler.framework import Status
from scheduler.framework.batching import SignatureMemo
from scheduler.framework.interface import NodeTableLister
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.verdicts import FITS, UNLISTED, Verdicts
from tests import builders
from tests.unit.test_node_to_status import identities

#: Two equal statuses that are distinct objects: verdicts are told apart by object.
TABLE = [Status.unschedulable("Insufficient cpu"), Status.unschedulable("Insufficient cpu"),
         Status.unresolvable("node(s) didn't match Pod's node affinity/selector"),
         Status.unschedulable("Insufficient nvidia.com/gpu")]
ERROR = Status.as_error("boom")


@given(st.lists(st.sampled_from([FITS, UNLISTED, *range(len(TABLE))]), max_size=60), st.data())
def test_coded_tallies_equal_the_reference(codes: list[int], data: st.DataObject) -> None:
    verdicts = [None if code == FITS else ERROR if code == UNLISTED else TABLE[code] for code in codes]
    coded = Verdicts(verdicts, np.asarray(codes, dtype=np.int32), TABLE)
    plain = Verdicts(verdicts)
    stop = data.draw(st.one_of(st.none(), st.integers(0, len(codes))))
    assert coded.fitting_positions() == plain.fitting_positions() == [
        i for i, verdict in enumerate(verdicts) if verdict is None]
    assert coded.all_fit() == plain.all_fit() == all(verdict is None for verdict in verdicts)
    reference = plain.counted_failures(stop)
    assert identities(coded.counted_failures(stop)) == identities(reference)
    kept = verdicts if stop is None else verdicts[:stop]
    assert sum(times for _, times in reference) == sum(verdict is not None for verdict in kept)


def _batch(count: int) -> tuple[Cache, Snapshot]:
    cache = Cache(clock=SystemClock())
    for i in range(count):
        cache.add_node(builders.node(f"n{i}", cpu="4", memory="8Gi"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


def test_a_memo_codes_each_verdict_by_its_table_and_remembers_no_error() -> None:
    _, snapshot = _batch(6)
    lister = snapshot.node_infos()
    assert isinstance(lister, NodeTableLister)
    nodes = lister.rotated(0)
    # Fresh but equal statuses each time: the memo keeps one object per distinct verdict.
    answer = {"n0": lambda: None, "n1": lambda: Status.unschedulable("Insufficient cpu"),
              "n2": lambda: Status.unschedulable("Insufficient cpu"), "n3": lambda: ERROR,
              "n4": lambda: Status.unresolvable("taint"), "n5": lambda: None}
    asked: list[str] = []

    def evaluate(batch: NodeSet) -> list[Status | None]:
        asked.extend(info.name for info in batch)
        return [answer[info.name]() for info in batch]

    memo = SignatureMemo()
    excluded = [False, False, False, False, True, False]
    for _ in range(2):
        verdicts = memo.filter(nodes, excluded, evaluate)
        assert verdicts.codes is not None
        statuses = verdicts.statuses
        for verdict, code in zip(statuses, verdicts.codes.tolist(), strict=True):
            if code == FITS:
                assert verdict is None
            elif code == UNLISTED:
                assert verdict is ERROR
            else:
                assert verdict is verdicts.table[code]
        assert statuses[1] is statuses[2]
        assert statuses[3] is ERROR and verdicts.codes[3] == UNLISTED
    # The second time only the error's node and the excluded one were asked again.
    assert asked == ["n0", "n1", "n2", "n3", "n4", "n5", "n3", "n4"]
