"""Per-cycle scratch space shared by the plugins of one scheduling cycle.

A plugin writes what it computed once (usually in PreFilter or PreScore) under a key it owns and
reads it many times (in Filter or Score, once per node). Preemption runs Filter on modified copies of
nodes, so it clones the state: values that a plugin mutates in AddPod/RemovePod must implement
``clone()``; immutable values are shared.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class NotFound(KeyError):
    """The key was never written in this cycle (the plugin's PreFilter did not run, or was skipped)."""


@runtime_checkable
class StateData(Protocol):
    def clone(self) -> Any: ...


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
        copy = CycleState()
        copy._data = {
            key: value.clone() if isinstance(value, StateData) else value for key, value in self._data.items()
        }
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy
