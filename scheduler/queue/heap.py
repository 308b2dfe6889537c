"""A binary heap whose items have unique keys, so that any item can be updated or deleted in O(log n).

kube-scheduler's activeQ and podBackoffQ are such heaps (backend/heap): a pod is found by its
"namespace/name" key when an informer update or delete arrives, without scanning the heap. The order is
a ``less(a, b)`` function (the QueueSort plugin's, or the backoff expiry). Items that neither precedes
are popped in insertion order, so that pods queued at the same instant under a virtual clock come out
first-in first-out, deterministically.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("item", "key", "seq")

    def __init__(self, key: str, item: T, seq: int) -> None:
        self.key = key
        self.item = item
        #: Insertion order: the tie-breaker when ``less`` says neither item goes first.
        self.seq = seq


class KeyedHeap(Generic[T]):
    __slots__ = ("_entries", "_index", "_key", "_less", "_seq")

    def __init__(self, key: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._key = key
        self._less = less
        self._entries: list[_Entry[T]] = []
        #: key -> position of its entry in ``_entries``.
        self._index: dict[str, int] = {}
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[T]:
        """The items in no particular order."""
        return (entry.item for entry in self._entries)

    def get(self, key: str) -> T | None:
        position = self._index.get(key)
        return None if position is None else self._entries[position].item

    def peek(self) -> T | None:
        return self._entries[0].item if self._entries else None

    def add_or_update(self, item: T) -> None:
        """Insert ``item``, or replace the item with the same key and restore the order around it (an
        updated item keeps its place among equals)."""
        key = self._key(item)
        position = self._index.get(key)
        if position is None:
            self._entries.append(_Entry(key, item, next(self._seq)))
            position = len(self._entries) - 1
            self._index[key] = position
            self._up(position)
        else:
            self._entries[position].item = item
            self._fix(position)

    def pop(self) -> T:
        """Remove and return the first item; IndexError when empty."""
        if not self._entries:
            raise IndexError("pop from an empty heap")
        return self._remove_at(0)

    def delete(self, key: str) -> T | None:
        """Remove the item with ``key``; None if there is none."""
        position = self._index.get(key)
        return None if position is None else self._remove_at(position)

    # ------------------------------------------------------------------------------------ internals

    def _remove_at(self, position: int) -> T:
        entries = self._entries
        removed = entries[position]
        last = entries.pop()
        del self._index[removed.key]
        if position < len(entries):
            entries[position] = last
            self._index[last.key] = position
            self._fix(position)
        return removed.item

    def _before(self, i: int, j: int) -> bool:
        a, b = self._entries[i], self._entries[j]
        if self._less(a.item, b.item):
            return True
        if self._less(b.item, a.item):
            return False
        return a.seq < b.seq

    def _swap(self, i: int, j: int) -> None:
        entries = self._entries
        entries[i], entries[j] = entries[j], entries[i]
        self._index[entries[i].key] = i
        self._index[entries[j].key] = j

    def _fix(self, position: int) -> None:
        if not self._up(position):
            self._down(position)

    def _up(self, position: int) -> bool:
        """Sift up; True if the entry moved."""
        start = position
        while position > 0:
            parent = (position - 1) // 2
            if not self._before(position, parent):
                break
            self._swap(position, parent)
            position = parent
        return position != start

    def _down(self, position: int) -> None:
        size = len(self._entries)
        while True:
            smallest = position
            for child in (2 * position + 1, 2 * position + 2):
                if child < size and self._before(child, smallest):
                    smallest = child
            if smallest == position:
                return
            self._swap(position, smallest)
            position = smallest
