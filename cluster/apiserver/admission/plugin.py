"""An admission plugin, as kube-apiserver's admission.Interface: a named step of a write that may change
the object (mutating) or refuse it (validating), for the kinds it handles. A plugin implements only the
phases it takes part in and names, per phase, the kinds it handles there; the Chain (chain.py) calls it
only for those.

Mutating phases run after the kind's strategy and before validation, validating ones after validation.
A validating create may charge something the object's write must keep (a quota's usage): it returns how
to give it back, which the verbs call when the write does not happen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from google.protobuf.message import Message

from cluster.api.kinds import Kind
from cluster.apiserver.context import Context

#: Gives back what a validating create charged, when the object is not stored after all.
Rollback = Callable[[], Awaitable[None]]

#: The phases a plugin may take part in: the names of its methods.
PHASES = ("mutate_create", "validate_create", "mutate_update", "validate_update", "validate_delete")


class AdmissionPlugin:
    #: The name kube-apiserver's --enable-admission-plugins knows it by.
    name: ClassVar[str]
    #: By phase (a name in PHASES), the kinds it handles in that phase.
    handles: ClassVar[Mapping[str, frozenset[Kind[Any]]]]

    async def mutate_create(self, ctx: Context, obj: Message) -> None:
        raise NotImplementedError

    async def validate_create(self, ctx: Context, obj: Message, dry_run: bool) -> Rollback | None:
        raise NotImplementedError

    async def mutate_update(self, ctx: Context, new: Message, old: Message) -> None:
        raise NotImplementedError

    async def validate_update(self, ctx: Context, new: Message, old: Message) -> None:
        raise NotImplementedError

    def validate_delete(self, kind: Kind[Any], name: str) -> None:
        raise NotImplementedError

    @property
    def kinds(self) -> frozenset[Kind[Any]]:
        """Every kind it handles in some phase."""
        return frozenset().union(*self.handles.values())
