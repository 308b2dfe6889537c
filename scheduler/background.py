"""Tasks started from the synchronous scheduling cycle and owned by the leader's term.

The binder and the preemptions both start work the cycle does not wait for. Each owns a ``TaskOwner``:
a TaskGroup that lives while ``run`` runs, so that cancelling ``run`` (the term ends) cancels every task
still going, and a task that raises takes the term down instead of vanishing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class TaskOwner:
    def __init__(self, owner: str) -> None:
        #: Who owns the tasks, for the error of starting one while nothing runs them.
        self._owner = owner
        self._group: asyncio.TaskGroup | None = None

    @property
    def running(self) -> bool:
        return self._group is not None

    async def run(self) -> None:
        """Own the tasks until cancelled."""
        async with asyncio.TaskGroup() as group:
            self._group = group
            try:
                await asyncio.Future()  # until cancelled
            finally:
                self._group = None

    def start(self, work: Coroutine[Any, Any, None], *, name: str) -> None:
        """Run ``work`` as a task of the group; RuntimeError when ``run`` is not running."""
        if self._group is None:
            work.close()  # never awaited, on purpose: no "coroutine was never awaited" warning
            raise RuntimeError(f"the {self._owner} is not running")
        self._group.create_task(work, name=name)
