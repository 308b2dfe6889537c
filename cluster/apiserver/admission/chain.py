"""The admission chain: the plugins of a phase for a kind, in the chain's order, looked up once per
request (a dict lookup), not found by a scan of every plugin."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api.kinds import KINDS, Kind
from cluster.apiserver.admission.plugin import PHASES, AdmissionPlugin


@dataclass(frozen=True, slots=True)
class KindAdmission:
    """The plugins of each phase for one kind, in order."""

    mutate_create: tuple[AdmissionPlugin, ...]
    validate_create: tuple[AdmissionPlugin, ...]
    mutate_update: tuple[AdmissionPlugin, ...]
    validate_update: tuple[AdmissionPlugin, ...]
    validate_delete: tuple[AdmissionPlugin, ...]


class Chain:
    def __init__(self, plugins: Sequence[AdmissionPlugin]) -> None:
        self.plugins = tuple(plugins)
        self._by_kind: dict[Kind[Any], KindAdmission] = {
            kind: KindAdmission(**{
                phase: tuple(p for p in self.plugins if kind in p.handles.get(phase, ()))
                for phase in PHASES
            })
            for kind in KINDS
        }

    def of(self, kind: Kind[Any]) -> KindAdmission:
        return self._by_kind[kind]
