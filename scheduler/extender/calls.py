"""The configured extenders at each point of a scheduling attempt, by kube-scheduler's rules
(schedule_one.go ``findNodesThatPassExtenders``, ``prioritizeNodes``, ``extendersBinding``; preemption.go
``callExtenders``).

Extenders are asked in order (the scheduler puts the ignorable ones last), each only about pods it is
interested in. A failure of an ignorable extender is logged and the extender skipped; any other failure
raises ``ExtenderError`` to the caller, except in Prioritize, whose failures never fail a cycle: the node
is scored by the plugins and the other extenders.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

from cluster.api import objects_pb2
from scheduler.extender.interface import (
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderError,
    FilterOutcome,
    HostPriority,
    Victims,
)
from scheduler.framework import MAX_NODE_SCORE, Code, NodeInfo, NodeInfoLister, Status

log = logging.getLogger(__name__)

#: An extender's 0..10 becomes the framework's 0..100 before its weight applies.
SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY


def display_name(extender: Extender) -> str:
    """How explanations and node statuses name an extender next to plugin names."""
    return f"extender {extender.name}"


def reason_from(extender: Extender, message: str) -> str:
    """An extender's message about a node as the pod's event shows it: naming who said so."""
    return f"{message} ({display_name(extender)})"


# -------------------------------------------------------------------------------------------- filter


async def find_nodes_that_pass_extenders(
    extenders: Sequence[Extender], pod: objects_pb2.Pod, feasible: list[NodeInfo],
    statuses: MutableMapping[str, Status],
) -> list[NodeInfo]:
    """The nodes of ``feasible`` that every interested filtering extender accepts; each node an extender
    turns down gets its status in ``statuses``. A node one extender drops is not sent to the next."""
    for extender in extenders:
        if not feasible:
            break
        if not extender.is_filter or not extender.is_interested(pod):
            continue
        try:
            outcome = await extender.filter(pod, feasible)
        except ExtenderError as err:
            if not extender.ignorable:
                raise
            log.warning("skipping ignorable extender %s in filter: %s", extender.name, err)
            continue
        _record_failures(extender, outcome, statuses)
        feasible = outcome.feasible
    return feasible


def _record_failures(
    extender: Extender, outcome: FilterOutcome, statuses: MutableMapping[str, Status]
) -> None:
    """Unresolvable failures win over plain ones; a node that already has a status (an extender named a
    node it was not sent) keeps its reasons and gets this one too."""
    plugin = display_name(extender)
    for node_name, message in outcome.failed_and_unresolvable.items():
        earlier = statuses.get(node_name)
        reasons = (*(earlier.reasons if earlier else ()), reason_from(extender, message))
        statuses[node_name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)
    for node_name, message in outcome.failed.items():
        if node_name in outcome.failed_and_unresolvable:
            continue
        earlier = statuses.get(node_name)
        if earlier is None:
            statuses[node_name] = Status(Code.UNSCHEDULABLE, (reason_from(extender, message),), plugin)
        else:
            # A new Status: plugins may hand the same one out for many nodes.
            statuses[node_name] = Status(earlier.code, (*earlier.reasons, reason_from(extender, message)),
                                         earlier.plugin, earlier.error)


# ---------------------------------------------------------------------------------------- prioritize


@dataclass(frozen=True, slots=True)
class ExtenderScores:
    """One extender's verdict on the feasible nodes, scaled to the framework's range (not yet weighted)."""

    name: str
    weight: int
    #: Node name -> score in 0..MAX_NODE_SCORE; nodes the extender did not score are absent.
    scores: dict[str, int]


async def extender_scores(
    extenders: Sequence[Extender], pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]
) -> list[ExtenderScores]:
    """Every interested prioritizing extender's scores, asked concurrently; one that fails is left out."""
    asking = [e for e in extenders if e.is_prioritizer and e.is_interested(pod)]
    answers = await asyncio.gather(*(_prioritize(extender, pod, nodes) for extender in asking))
    return [answer for answer in answers if answer is not None]


async def _prioritize(
    extender: Extender, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]
) -> ExtenderScores | None:
    try:
        priorities, weight = await extender.prioritize(pod, nodes)
    except ExtenderError as err:
        log.warning("no extender scores for %s/%s, going on without: %s", pod.metadata.namespace,
                    pod.metadata.name, err)
        return None
    return ExtenderScores(display_name(extender), weight, _scaled(priorities))


def _scaled(priorities: Sequence[HostPriority]) -> dict[str, int]:
    return {priority.host: priority.score * SCORE_SCALE for priority in priorities}


# ------------------------------------------------------------------------------------------- preempt


async def preempt_with_extenders(
    extenders: Sequence[Extender], pod: objects_pb2.Pod, victims: dict[str, Victims], nodes: NodeInfoLister
) -> dict[str, Victims]:
    """The candidates (node -> victims) that survive every interested extender supporting preemption:
    each may drop nodes or change their victims, and the next one sees what the previous one left."""
    for extender in extenders:
        if not extender.supports_preemption or not extender.is_interested(pod):
            continue
        try:
            answer = await extender.process_preemption(pod, victims, nodes)
        except ExtenderError as err:
            if not extender.ignorable:
                raise
            log.warning("skipping ignorable extender %s in preemption: %s", extender.name, err)
            continue
        victims = _with_victims(extender, answer)
        if not victims:
            break  # no node is left: no later extender can bring one back
    return victims


def _with_victims(extender: Extender, answer: dict[str, Victims]) -> dict[str, Victims]:
    """An extender may not keep a node without naming a victim there: preempting nothing would not make
    room. An ignorable extender's such nodes are dropped; any other's fail preemption."""
    kept = {}
    for node_name, victims in answer.items():
        if victims.pods:
            kept[node_name] = victims
        elif extender.ignorable:
            log.warning("extender %s named no victim on node %s: the node is left out",
                        extender.name, node_name)
        else:
            raise ExtenderError(
                f'extender {extender.name}: expected at least one victim pod on node "{node_name}"'
            )
    return kept


# ---------------------------------------------------------------------------------------------- bind


async def bind_with_extenders(extenders: Sequence[Extender], pod: objects_pb2.Pod, node_name: str) -> bool:
    """Let the first interested binding extender bind the pod: True once one did (the default binder must
    not), False when none is configured for it. A failed non-ignorable binder raises ``ExtenderError``."""
    for extender in extenders:
        if not extender.is_binder or not extender.is_interested(pod):
            continue
        try:
            await extender.bind(pod, node_name)
        except ExtenderError as err:
            if not extender.ignorable:
                raise
            log.warning("skipping ignorable extender %s in binding: %s", extender.name, err)
            continue
        return True
    return False
