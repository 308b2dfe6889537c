"""Why a pod went where it went, or nowhere: a compact record of one scheduling attempt.

kube-scheduler's FitError says how many nodes failed for each reason; podsched also keeps, as
kube-scheduler-simulator shows them, which plugin said so and on which nodes, and how the best nodes
scored plugin by plugin. At 5,000 nodes the full per-node detail would be megabytes, so the record is
bounded whatever the cluster size:

* filter verdicts are grouped by (plugin, reason with the status's detail, code) with a node count and
  at most ``MAX_EXAMPLE_NODES`` example node names each; at most ``MAX_REASON_GROUPS`` groups (the largest)
  are kept, the rest summed into ``other_filtered``;
* scores are kept for the ``MAX_TOP_NODES`` best nodes only (the chosen one first), per plugin weighted;
* texts are cut at ``MAX_TEXT`` characters.

It travels as JSON (``to_json`` / ``from_json``) in the scheduling event's annotation, and ``render``
turns it into the text ``podsched describe pod`` prints. ``last_attempt`` and ``group_attempt`` read it
back from a pod's or a PodGroup's events, for every reader that shows it (describe, the web view).
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from cluster.api import objects_pb2
from scheduler.framework.types import Diagnosis

MAX_REASON_GROUPS = 16
MAX_EXAMPLE_NODES = 10
MAX_TOP_NODES = 5
MAX_TEXT = 256

_VERSION = 1

#: The annotation of a scheduling event that carries the attempt's explanation (JSON).
EXPLANATION_ANNOTATION = "podsched.io/explanation"
#: The events of a scheduling attempt; the scheduler puts its explanation in their annotations.
SCHEDULING_REASONS = ("Scheduled", "FailedScheduling")


@dataclass(frozen=True, slots=True)
class ReasonGroup:
    """The nodes one plugin turned down for one reason."""

    plugin: str
    reason: str
    #: The status code, "Unschedulable" (preemption might help) or "UnschedulableAndUnresolvable".
    code: str
    count: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeScores:
    node: str
    total: int
    #: Plugin -> normalized score x weight.
    plugins: Mapping[str, int]


@dataclass(slots=True)
class Explanation:
    num_all_nodes: int
    evaluated_nodes: int
    feasible_nodes: int
    #: The node chosen, "" when the pod fits nowhere.
    chosen_node: str = ""
    #: What PreFilter said when it rejected the pod before any node was looked at.
    pre_filter_message: str = ""
    filtered: list[ReasonGroup] = field(default_factory=list)
    #: Node verdicts in reason groups beyond MAX_REASON_GROUPS.
    other_filtered: int = 0
    score_weights: dict[str, int] = field(default_factory=dict)
    top_nodes: list[NodeScores] = field(default_factory=list)

    # ----------------------------------------------------------------------------------- wire form

    def to_json(self) -> str:
        data = {
            "v": _VERSION,
            "nodes": self.num_all_nodes,
            "evaluated": self.evaluated_nodes,
            "feasible": self.feasible_nodes,
            "chosen": self.chosen_node,
            "preFilter": self.pre_filter_message,
            "filtered": [
                {"plugin": g.plugin, "reason": g.reason, "code": g.code, "count": g.count,
                 "examples": list(g.examples)}
                for g in self.filtered
            ],
            "otherFiltered": self.other_filtered,
            "weights": self.score_weights,
            "top": [{"node": n.node, "total": n.total, "scores": dict(n.plugins)} for n in self.top_nodes],
        }
        return json.dumps(data, separators=(",", ":"), sort_keys=False)

    @classmethod
    def from_json(cls, text: str) -> Explanation:
        """Parse ``to_json``'s output; ValueError for anything else (an annotation edited by hand)."""
        try:
            data = json.loads(text)
            if data.get("v") != _VERSION:
                raise ValueError(f"unknown explanation version {data.get('v')!r}")
            return cls(
                num_all_nodes=int(data["nodes"]),
                evaluated_nodes=int(data["evaluated"]),
                feasible_nodes=int(data["feasible"]),
                chosen_node=str(data["chosen"]),
                pre_filter_message=str(data["preFilter"]),
                filtered=[
                    ReasonGroup(str(g["plugin"]), str(g["reason"]), str(g["code"]), int(g["count"]),
                                tuple(str(n) for n in g["examples"]))
                    for g in data["filtered"]
                ],
                other_filtered=int(data["otherFiltered"]),
                score_weights={str(k): int(v) for k, v in data["weights"].items()},
                top_nodes=[
                    NodeScores(str(n["node"]), int(n["total"]),
                               {str(k): int(v) for k, v in n["scores"].items()})
                    for n in data["top"]
                ],
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"not a scheduling explanation: {exc}") from None

    # ----------------------------------------------------------------------------------- text form

    def render(self, indent: str = "  ") -> str:
        """Lines for ``podsched describe pod`` (under its "Scheduling explanation" heading)."""
        outcome = f"chosen: {self.chosen_node}" if self.chosen_node else "no node fits"
        lines = [
            f"Nodes: {self.num_all_nodes} in the cluster, {self.evaluated_nodes} evaluated, "
            f"{self.feasible_nodes} feasible; {outcome}"
        ]
        if self.pre_filter_message:
            lines.append(f"Rejected before filtering: {self.pre_filter_message}")
        if self.filtered:
            lines.append("Filtered out:")
            width = max(len(str(g.count)) for g in self.filtered)
            for group in self.filtered:
                more = group.count - len(group.examples)
                examples = ", ".join(group.examples) + (f", +{more} more" if more > 0 else "")
                hopeless = " (preemption cannot help)" if group.code == "UnschedulableAndUnresolvable" else ""
                lines.append(f"{indent}{group.count:>{width}} {group.plugin}: {group.reason}{hopeless} "
                             f"[{examples}]")
            if self.other_filtered:
                lines.append(f"{indent}{self.other_filtered} more for other reasons")
        if self.top_nodes:
            weights = ", ".join(f"{name} x{weight}" for name, weight in self.score_weights.items())
            lines.append(f"Top nodes by score (weights: {weights}):")
            width = max(len(n.node) for n in self.top_nodes)
            for node in self.top_nodes:
                parts = ", ".join(f"{name} {score}" for name, score in node.plugins.items())
                lines.append(f"{indent}{node.node:<{width}}  {node.total:>4}  ({parts})")
        return "\n".join(lines)


class LazyExplanation:
    """An attempt's explanation, summarized when first read: only the events written about an attempt
    read it, after the cycle, and a recorder that writes none (``podsched replay``) never pays for it."""

    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], Explanation]) -> None:
        self._build = build
        self._value: Explanation | None = None

    @property
    def value(self) -> Explanation:
        if self._value is None:
            self._value = self._build()
        return self._value

    def to_json(self) -> str:
        return self.value.to_json()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyExplanation) and self.value == other.value

    __hash__ = None  # type: ignore[assignment]  # equal by value, which may change once built


def explain(
    num_all_nodes: int,
    diagnosis: Diagnosis,
    *,
    evaluated_nodes: int,
    feasible_nodes: int,
    chosen_node: str = "",
    node_names: Sequence[str] = (),
    totals: Sequence[int] = (),
    per_plugin: Mapping[str, Sequence[int]] | None = None,
    score_weights: Mapping[str, int] | None = None,
) -> Explanation:
    """Summarize one attempt: the failed nodes of ``diagnosis`` grouped by reason, and, when the feasible
    nodes were scored, the best of them (their ``node_names``, ``totals`` and the normalized
    ``per_plugin`` scores, all in the same node order, with the plugins' ``score_weights``). Linear in
    the number of failed and scored nodes."""
    # Grouped per distinct Status object first (few, however many nodes), then per reason; a group's
    # examples are its first nodes in node_to_status order, whichever objects they came from.
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for status, nodes, positions in diagnosis.distinct_statuses(examples=MAX_EXAMPLE_NODES):
        for reason in status.reasons or ("",):
            # An extender's reason ends with its name for the event; the group names it already.
            shown = reason.removesuffix(f" ({status.plugin})")
            if status.detail:
                shown = f"{shown}: {status.detail}"
            key = (status.plugin, shown, status.code.value)
            group = groups.get(key)
            if group is None:
                groups[key] = [nodes, list(positions)]
            else:
                group[0] += nodes
                group[1] = sorted([*group[1], *positions])[:MAX_EXAMPLE_NODES]
    names = list(diagnosis.node_to_status) if groups else []
    for group in groups.values():
        group[1] = [names[position] for position in group[1]]
    ordered = sorted(groups.items(), key=lambda item: (-item[1][0], item[0]))
    kept = ordered[:MAX_REASON_GROUPS]
    filtered = [
        ReasonGroup(_cut(plugin), _cut(reason), code, count, tuple(_cut(n) for n in examples))
        for (plugin, reason, code), (count, examples) in kept
    ]
    other = sum(count for _, (count, _) in ordered[MAX_REASON_GROUPS:])
    explanation = Explanation(
        num_all_nodes=num_all_nodes,
        evaluated_nodes=evaluated_nodes,
        feasible_nodes=feasible_nodes,
        chosen_node=chosen_node,
        pre_filter_message=_cut(diagnosis.pre_filter_message),
        filtered=filtered,
        other_filtered=other,
    )
    if totals:
        weights = dict(score_weights or {})
        per_plugin = per_plugin or {}
        best = top_nodes(node_names, totals, chosen_node)
        explanation.score_weights = {_cut(name): weight for name, weight in weights.items()}
        explanation.top_nodes = [
            NodeScores(
                _cut(node_names[i]), totals[i],
                {_cut(name): scores[i] * weights.get(name, 1) for name, scores in per_plugin.items()},
            )
            for i in best
        ]
    return explanation


def top_nodes(node_names: Sequence[str], totals: Sequence[int], chosen_node: str) -> list[int]:
    """The positions of the MAX_TOP_NODES best totals, best first; among equals the chosen node first,
    then the others in node order. Only the few nodes above the cut-off score get a Python step: most
    cycles have hundreds of nodes tied on it."""
    if not totals:
        return []
    best = max(totals)
    if totals.count(best) >= MAX_TOP_NODES:
        return _first_of_best(node_names, totals, chosen_node, best)
    cutoff = sorted(totals, reverse=True)[min(MAX_TOP_NODES, len(totals)) - 1]
    above = list(itertools.compress(range(len(totals)), map(operator.gt, totals, repeat(cutoff))))
    above.sort(key=lambda i: (-totals[i], node_names[i] != chosen_node, i))
    wanted = MAX_TOP_NODES - len(above)
    at_cutoff = itertools.compress(range(len(totals)), map(operator.eq, totals, repeat(cutoff)))
    position = node_names.index(chosen_node) if chosen_node in node_names else -1
    chosen = [position] if position >= 0 and totals[position] == cutoff else []
    others = itertools.islice((i for i in at_cutoff if i not in chosen), wanted)
    return above + [*chosen, *others][:wanted]


def _first_of_best(
    node_names: Sequence[str], totals: Sequence[int], chosen_node: str, best: int
) -> list[int]:
    """``top_nodes`` when at least MAX_TOP_NODES nodes share the best total (the common case: hundreds of
    nodes alike): the chosen node if it is one of them, then the first others in node order, found by
    searching the list in C only as far as they are."""
    position = node_names.index(chosen_node) if chosen_node in node_names else -1
    picked = [position] if position >= 0 and totals[position] == best else []
    i = -1
    while len(picked) < MAX_TOP_NODES:
        i = totals.index(best, i + 1)
        if i != position:
            picked.append(i)
    return picked


# -------------------------------------------------------------------------- read back from events


def last_attempt(events: Iterable[objects_pb2.Event]) -> Explanation | None:
    """The explanation of the newest scheduling event about a pod that carries one (None without any);
    ValueError when its annotation is unreadable. Events are rewritten when repeats are counted, so
    "newest" is the highest resourceVersion, not a timestamp."""
    carrying = [
        e for e in events
        if e.reason in SCHEDULING_REASONS and EXPLANATION_ANNOTATION in e.metadata.annotations
    ]
    if not carrying:
        return None
    newest = max(carrying, key=_revision)
    return Explanation.from_json(newest.metadata.annotations[EXPLANATION_ANNOTATION])


@dataclass(frozen=True, slots=True)
class GroupAttempt:
    """A PodGroup's last whole-group attempt: the event's message and, per member, where it could go
    ("could go to NODE") or why it could go nowhere."""

    message: str
    #: (pod name, placement), by pod name.
    placements: list[tuple[str, str]]


def group_attempt(events: Iterable[objects_pb2.Event]) -> GroupAttempt | None:
    """The last attempt at a PodGroup, from the annotation of its newest FailedScheduling event; None
    without one, or once a Scheduled event is newer (the group was bound since). ValueError when the
    annotation is unreadable."""
    attempts = [e for e in events if e.reason in SCHEDULING_REASONS]
    if not attempts:
        return None
    newest = max(attempts, key=_revision)
    carried = newest.metadata.annotations.get(EXPLANATION_ANNOTATION)
    if newest.reason != "FailedScheduling" or carried is None:
        return None
    try:
        pods = json.loads(carried)["pods"]
        placements = [
            (str(name),
             f"could go to {verdict['node']}" if "node" in verdict else str(verdict["unschedulable"]))
            for name, verdict in sorted(pods.items())
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(str(exc)) from None
    return GroupAttempt(newest.message, placements)


def _revision(event: objects_pb2.Event) -> int:
    return int(event.metadata.resource_version or 0)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."
