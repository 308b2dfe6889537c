"""KeyedHeap: order by ``less`` with FIFO ties, and O(log n) update and delete by key."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.queue.heap import KeyedHeap


class Item:
    def __init__(self, key: str, value: int) -> None:
        self.key = key
        self.value = value


def new_heap() -> KeyedHeap[Item]:
    return KeyedHeap(lambda item: item.key, lambda a, b: a.value < b.value)


def drain(heap: KeyedHeap[Item]) -> list[str]:
    return [heap.pop().key for _ in range(len(heap))]


def test_pops_in_order_and_equal_items_first_in_first_out() -> None:
    heap = new_heap()
    for key, value in [("c", 3), ("a1", 1), ("b", 2), ("a2", 1), ("a3", 1)]:
        heap.add_or_update(Item(key, value))
    assert heap.peek().key == "a1"
    assert drain(heap) == ["a1", "a2", "a3", "b", "c"]
    with pytest.raises(IndexError):
        heap.pop()
    assert heap.peek() is None


@pytest.mark.parametrize(
    ("key", "new_value", "expected"),
    [
        ("e", -1, ["e", "a", "b", "c", "d"]),
        ("a", 10, ["b", "c", "d", "e", "a"]),
        ("c", 3, ["a", "b", "c", "d", "e"]),
    ],
    ids=["update-moves-up", "update-moves-down", "update-in-place"],
)
def test_update_by_key_reorders(key: str, new_value: int, expected: list[str]) -> None:
    heap = new_heap()
    for value, name in enumerate("abcde"):
        heap.add_or_update(Item(name, value))
    heap.add_or_update(Item(key, new_value))
    assert len(heap) == 5
    assert heap.get(key).value == new_value
    assert drain(heap) == expected


@pytest.mark.parametrize("key", ["a", "c", "e", "x"], ids=["head", "middle", "last", "absent"])
def test_delete_by_key_keeps_the_rest_ordered(key: str) -> None:
    heap = new_heap()
    for value, name in enumerate("abcde"):
        heap.add_or_update(Item(name, value))
    removed = heap.delete(key)
    assert (removed.key if removed else None) == (key if key != "x" else None)
    assert key not in heap
    assert heap.get(key) is None
    assert drain(heap) == [name for name in "abcde" if name != key]


operations = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "pop"]), st.sampled_from("abcdefgh"), st.integers(0, 4)),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_matches_a_sorted_reference_model(ops: list[tuple[str, str, int]]) -> None:
    heap = new_heap()
    # key -> (value, first insertion order): an update keeps its place among equals.
    model: dict[str, tuple[int, int]] = {}
    order = itertools.count()
    for op, key, value in ops:
        if op == "put":
            model[key] = (value, model[key][1] if key in model else next(order))
            heap.add_or_update(Item(key, value))
        elif op == "delete":
            assert (heap.delete(key) is not None) == (key in model)
            model.pop(key, None)
        elif model:
            expected = min(model, key=lambda k: model[k])
            assert heap.pop().key == expected
            del model[expected]
        assert len(heap) == len(model)
        assert sorted(item.key for item in heap) == sorted(model)
    assert drain(heap) == sorted(model, key=lambda k: model[k])
