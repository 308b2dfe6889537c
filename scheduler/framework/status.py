"""The outcome of a plugin call, as kube-scheduler's framework.Status.

A plugin returns ``None`` for success, or a ``Status`` with a code; the framework stamps the name of
the plugin that returned it. The codes, and what the scheduler does with each:

* ``ERROR``: something broke (not the pod's fault). The cycle fails, the pod is retried after backoff,
  no plugin is blamed for the pod's unschedulability.
* ``UNSCHEDULABLE``: the pod does not fit *now*; removing pods (preemption) might make it fit.
* ``UNSCHEDULABLE_AND_UNRESOLVABLE``: the pod does not fit and preemption cannot help on that node
  (node selector, taints, unschedulable node, ...). Preemption skips such nodes.
* ``WAIT``: Permit only: hold the pod in the waiting area until allowed or timed out.
* ``SKIP``: PreFilter/PreScore only: the plugin has nothing to do for this pod; its Filter/Score is
  skipped for this cycle.
* ``PENDING``: waiting on something external; the pod waits without a backoff penalty.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar


class Code(enum.Enum):
    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"
    PENDING = "Pending"


_REJECTIONS = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


@dataclass(slots=True)
class Status:
    code: Code
    #: Human-readable reasons, as kube-scheduler prints them ("Insufficient cpu").
    reasons: tuple[str, ...] = ()
    #: The plugin that returned this status; set by the framework.
    plugin: str = ""
    #: The exception behind an ERROR, if any.
    error: BaseException | None = field(default=None, compare=False)
    #: What the attempt's explanation adds to the reasons of this node's verdict (which request of which
    #: claim did not fit, and why), where kube-scheduler's message, counting nodes per reason, leaves it
    #: out.
    detail: str = field(default="", compare=False)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, reasons)

    @classmethod
    def as_error(cls, error: BaseException | str) -> Status:
        if isinstance(error, BaseException):
            return cls(Code.ERROR, (str(error),), error=error)
        return cls(Code.ERROR, (error,))

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod was turned down (no error)."""
        return self.code in _REJECTIONS

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    @property
    def is_error(self) -> bool:
        return self.code is Code.ERROR

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if not self.plugin:
            self.plugin = plugin
        return self


def is_success(status: Status | None) -> bool:
    """``None`` (what plugins return on success) or a SUCCESS status."""
    return status is None or status.code is Code.SUCCESS


S = TypeVar("S", Status, Status | None)


def by_identity(statuses: Sequence[S]) -> dict[int, S]:
    """Each distinct object of ``statuses`` under its id, first seen first. Plugins hand one Status
    object to every node with the same verdict, so a list over thousands of nodes holds a handful:
    callers look at those instead of at every node."""
    return dict(zip(map(id, statuses), statuses, strict=True))


def counted_by_identity(statuses: Sequence[S]) -> list[tuple[S, int]]:
    """Each distinct object of ``statuses``, first seen first, with how many times it occurs."""
    distinct = by_identity(statuses)
    return [(distinct[ident], times) for ident, times in Counter(map(id, statuses)).items()]
