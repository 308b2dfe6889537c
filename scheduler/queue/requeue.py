"""Which unschedulable pods a cluster event should requeue: the plugins' registered events and hints.

Each plugin that can reject a pod registers the events that could change its verdict, each with an
optional hint ``(pod, old, new) -> Queue | Skip``. A pod remembers the plugins that rejected it
(``unschedulable_plugins``) or left it pending (``pending_plugins``); an event requeues it only if one
of those plugins registered a matching event whose hint says Queue (kube-scheduler's
isPodWorthRequeuing). A hint that raises counts as Queue: a pod wrongly requeued costs one attempt, a
pod wrongly kept may wait the whole leftover period. A pod with no rejecting plugin (it failed on an
error) and a wildcard event (the leftover flush) always requeue.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueuedPodInfo,
    QueueingHint,
    QueueingHintFn,
)

log = logging.getLogger(__name__)


class Strategy(enum.Enum):
    #: The event does not help the pod: it stays where it is.
    SKIP = "skip"
    #: Requeue it, through backoffQ if its backoff has not ended yet.
    AFTER_BACKOFF = "after-backoff"
    #: Requeue it to activeQ now: a plugin that left it Pending (no penalty) says the wait is over.
    IMMEDIATELY = "immediately"


def is_wildcard(event: ClusterEvent) -> bool:
    return event.resource is EventResource.WILDCARD and event.action == ActionType.ALL


class EventHints:
    """The hints relevant to one incoming event, per plugin."""

    __slots__ = ("_by_plugin", "event", "wildcard")

    def __init__(self, event: ClusterEvent, by_plugin: dict[str, list[QueueingHintFn | None]]) -> None:
        self.event = event
        self.wildcard = is_wildcard(event)
        self._by_plugin = by_plugin

    def strategy(self, qpi: QueuedPodInfo, old: Any, new: Any) -> Strategy:
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return Strategy.AFTER_BACKOFF
        if self.wildcard:
            return Strategy.AFTER_BACKOFF
        result = Strategy.SKIP
        for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
            for hint in self._by_plugin.get(plugin, ()):
                if self._run(plugin, hint, qpi, old, new) is QueueingHint.SKIP:
                    continue
                if plugin in qpi.pending_plugins:
                    return Strategy.IMMEDIATELY
                if not qpi.pending_plugins:
                    return Strategy.AFTER_BACKOFF
                # A pending plugin may still say IMMEDIATELY: keep looking.
                result = Strategy.AFTER_BACKOFF
        return result

    def _run(
        self, plugin: str, hint: QueueingHintFn | None, qpi: QueuedPodInfo, old: Any, new: Any
    ) -> QueueingHint:
        if hint is None:
            return QueueingHint.QUEUE
        try:
            return hint(qpi.pod, old, new)
        except Exception:
            log.exception("queueing hint of %s for %s on %s failed; requeuing the pod",
                          plugin, self.event.label or self.event, qpi.key)
            return QueueingHint.QUEUE


class RequeueRules:
    """Every plugin's registered events, indexed by plugin name."""

    __slots__ = ("_by_event", "_registered")

    def __init__(self, events_to_register: Mapping[str, Sequence[ClusterEventWithHint]]) -> None:
        self._registered = {plugin: tuple(events) for plugin, events in events_to_register.items()}
        #: ``for_event``'s answers: the registrations never change, and the informers' handlers ask
        #: for the same few events over and over (AssignedPodAdd at every bind).
        self._by_event: dict[ClusterEvent, EventHints | None] = {}

    def for_event(self, event: ClusterEvent) -> EventHints | None:
        """The hints that ``event`` triggers, or None when no plugin registered an event it matches (it
        can requeue nobody, and is not a move request)."""
        try:
            return self._by_event[event]
        except KeyError:
            hints = self._by_event[event] = self._hints_for(event)
            return hints

    def _hints_for(self, event: ClusterEvent) -> EventHints | None:
        by_plugin: dict[str, list[QueueingHintFn | None]] = {}
        for plugin, registrations in self._registered.items():
            hints = [r.hint for r in registrations if event.matches(r.event)]
            if hints:
                by_plugin[plugin] = hints
        if not by_plugin and not is_wildcard(event):
            return None
        return EventHints(event, by_plugin)
