"""Per-cycle scratch space shared by the plugins of one scheduling cycle.

A plugin writes what it computed once (usually in PreFilter or PreScore) under a key it owns and
reads it many times (in Filter or Score, once per node). Preemption runs Filter on modified copies of
nodes, so it clones the state: values that a plugin mutates in AddPod/RemovePod must implement
``clone()``; immutable values are shared.
"""

from __future__ import annotations

from typing import Any


class NotFound(KeyError):
    """The key was never written in this cycle (the plugin's PreFilter did not run, or was skipped)."""


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: Plugins whose PreFilter returned SKIP: their Filter does not run this cycle.
        self.skip_filter_plugins: set[str] = set()
        #: Plugins whose PreScore returned SKIP: their Score does not run this cycle.
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise NotFound(key) from None

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy in which every value with a ``clone()`` is cloned. Preemption's dry run clones the
        state once per candidate node: an attribute lookup finds those values, where an isinstance
        check against a runtime-checkable Protocol cost a quarter of the dry run (py-spy, podsched bench
        PreemptionAsync)."""
        copy = CycleState()
        copy._data = {
            key: value.clone() if hasattr(value, "clone") else value for key, value in self._data.items()
        }
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy
