"""What several in-tree plugins share: taints and tolerations, node selectors and node affinity, score
normalization, and plugin-args plumbing.

Matching follows kube-scheduler's helpers (component-helpers ``scheduling/corev1`` and
``nodeaffinity``). Selectors are parsed once into small matcher objects, so that Filter and Score,
which run once per node, only compare strings.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import repeat
from typing import Protocol, Self

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.selectors import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_IN,
    LabelSelector,
    Requirement,
)
from cluster.api.validation import invalid, is_qualified_name, is_valid_label_value, not_supported, required
from scheduler.framework import MAX_NODE_SCORE, NodeScore, node_scores

# ------------------------------------------------------------------------------ taints, tolerations

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
#: The effects that keep a pod off a node (Filter); PreferNoSchedule only lowers the node's score.
DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})
#: The taint the node controller puts on a cordoned node; tolerating it also tolerates
#: ``spec.unschedulable``.
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def messages_signature(messages: Iterable[Message]) -> tuple[bytes, ...]:
    """Protobuf messages as a hashable value, equal exactly when the messages are (deterministic
    serialization): part of a plugin's signature of a pod."""
    return tuple(message.SerializeToString(deterministic=True) for message in messages)


class TaintLike(Protocol):
    """A node's Taint or a device's DeviceTaint: both match tolerations alike."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def effect(self) -> str: ...


class TolerationLike(TaintLike, Protocol):
    """A pod's Toleration or a device request's DeviceToleration."""

    @property
    def operator(self) -> str: ...


def tolerates(toleration: TolerationLike, taint: TaintLike) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (core/v1 Toleration.ToleratesTaint, which
    resource.k8s.io's DeviceToleration follows): an empty effect matches every effect, an empty key
    every key (the API only allows it with Exists), Exists every value, and Equal (also the empty
    operator) the same value only."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerations_tolerate_taint(
    tolerations: Iterable[objects_pb2.Toleration], taint: objects_pb2.Taint
) -> bool:
    return any(tolerates(toleration, taint) for toleration in tolerations)


def find_untolerated_taint(
    taints: Iterable[objects_pb2.Taint],
    tolerations: Sequence[objects_pb2.Toleration],
    effects: Collection[str] | None = None,
) -> objects_pb2.Taint | None:
    """The first taint with one of ``effects`` (all effects when None) that no toleration tolerates."""
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


# ----------------------------------------------------------------------------------- node selectors

#: The one node field a nodeSelectorTerm's matchFields may name.
NODE_NAME_FIELD = "metadata.name"

_NODE_SELECTOR_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
    "Gt": GREATER_THAN,
    "Lt": LESS_THAN,
}
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")


class NodeSelectorTerm:
    """One parsed nodeSelectorTerm: an AND of label expressions and field expressions.

    A term that failed to parse (``errors`` not empty) matches no node, as kube-scheduler's lazy
    selector treats it."""

    __slots__ = ("errors", "fields", "labels")

    def __init__(
        self,
        labels: LabelSelector | None,
        fields: tuple[tuple[str, bool, str], ...] | None,
        errors: tuple[str, ...] = (),
    ) -> None:
        #: None when the term has no matchExpressions.
        self.labels = labels
        #: (field, must_equal, value) triples; None when the term has no matchFields.
        self.fields = fields
        self.errors = errors

    @classmethod
    def from_proto(cls, term: objects_pb2.NodeSelectorTerm, path: str = "") -> NodeSelectorTerm:
        errors: list[str] = []
        labels = None
        if term.match_expressions:
            requirements = []
            for i, expression in enumerate(term.match_expressions):
                requirement = _label_requirement(expression, f"{path}.matchExpressions[{i}]", errors)
                if requirement is not None:
                    requirements.append(requirement)
            labels = LabelSelector(tuple(requirements))
        fields = None
        if term.match_fields:
            parsed = []
            for i, expression in enumerate(term.match_fields):
                where = f"{path}.matchFields[{i}]"
                if expression.operator not in _FIELD_SELECTOR_OPERATORS:
                    errors.append(
                        not_supported(f"{where}.operator", expression.operator, _FIELD_SELECTOR_OPERATORS)
                    )
                elif len(expression.values) != 1:
                    errors.append(
                        invalid(f"{where}.values", list(expression.values), "must have one element")
                    )
                else:
                    parsed.append((expression.key, expression.operator == "In", expression.values[0]))
            fields = tuple(parsed)
        return cls(labels, fields, tuple(errors))

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.errors:
            return False
        if self.labels is not None and not self.labels.matches(labels):
            return False
        # A node without a name has no fields to compare, and kube-scheduler then ignores matchFields.
        if self.fields is not None and node_name:
            for key, must_equal, value in self.fields:
                have = node_name if key == NODE_NAME_FIELD else ""
                if (have == value) != must_equal:
                    return False
        return True


def _label_requirement(
    expression: objects_pb2.NodeSelectorRequirement, where: str, errors: list[str]
) -> Requirement | None:
    """apimachinery's labels.NewRequirement checks, for the node-affinity operators."""
    operator = _NODE_SELECTOR_OPERATORS.get(expression.operator)
    if operator is None:
        errors.append(not_supported(f"{where}.operator", expression.operator, list(_NODE_SELECTOR_OPERATORS)))
        return None
    values = list(expression.values)
    problems = [invalid(f"{where}.key", expression.key, p) for p in is_qualified_name(expression.key)]
    if operator in (IN, NOT_IN) and not values:
        problems.append(required(f"{where}.values", "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EXISTS, DOES_NOT_EXIST) and values:
        problems.append(
            invalid(f"{where}.values", values, "values set must be empty for exists and does not exist")
        )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            problems.append(
                invalid(f"{where}.values", values, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        elif not _is_int64(values[0]):
            problems.append(
                invalid(
                    f"{where}.values[0]", values[0], "for 'Gt', 'Lt' operators, the value must be an integer"
                )
            )
    if operator not in (GREATER_THAN, LESS_THAN):
        for j, value in enumerate(values):
            problems += [invalid(f"{where}.values[{j}]", value, p) for p in is_valid_label_value(value)]
    if problems:
        errors.extend(problems)
        return None
    return Requirement(expression.key, operator, frozenset(values))


def _is_int64(text: str) -> bool:
    """Go's strconv.ParseInt(text, 10, 64) accepts it (Python's int() also takes '_' and spaces)."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isascii() and digits.isdigit() and -(2**63) <= int(text) < 2**63


def _labels(node: objects_pb2.Node) -> Mapping[str, str]:
    return node.metadata.labels


class NodeSelector:
    """A parsed v1.NodeSelector: its non-empty terms, ORed. An empty term selects nothing, so it is
    dropped; a selector without terms matches no node."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[NodeSelectorTerm, ...]) -> None:
        self.terms = terms

    @classmethod
    def from_proto(cls, selector: objects_pb2.NodeSelector, path: str = "", *, strict: bool = False) -> Self:
        """Parse ``selector``; with ``strict`` a term that does not parse raises ValueError listing every
        problem by field path (scheduler args), otherwise that term just never matches (pod specs, which
        the API server validated already)."""
        return cls(
            _parse_terms(
                selector.node_selector_terms,
                f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms",
                strict,
            )
        )

    def matches(self, node: objects_pb2.Node) -> bool:
        return self.matches_labels(_labels(node), node.metadata.name)

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        """``matches`` for a node given by its labels and name (a NodeInfo's cached ones)."""
        return any(term.matches(labels, node_name) for term in self.terms)

    def label_keys(self) -> tuple[str, ...] | None:
        """The node labels whose values alone decide ``matches_labels``; None when a term also looks at
        the node's name (matchFields)."""
        keys: list[str] = []
        for term in self.terms:
            if term.fields is not None:
                return None
            if term.labels is not None:
                keys += (requirement.key for requirement in term.labels.requirements)
        return tuple(dict.fromkeys(keys))


def _parse_terms(
    terms: Iterable[objects_pb2.NodeSelectorTerm], path: str, strict: bool
) -> tuple[NodeSelectorTerm, ...]:
    parsed = tuple(
        NodeSelectorTerm.from_proto(term, f"{path}[{i}]")
        for i, term in enumerate(terms)
        if term.match_expressions or term.match_fields
    )
    if strict:
        problems = [error for term in parsed for error in term.errors]
        if problems:
            raise ValueError("; ".join(problems))
    return parsed


class PreferredSchedulingTerms:
    """Parsed preferred node-affinity terms; a node's score is the sum of the weights of the terms it
    matches. Terms with weight 0 or no expressions are dropped, as kube-scheduler does."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[tuple[NodeSelectorTerm, int], ...]) -> None:
        self.terms = terms

    @classmethod
    def from_proto(cls, terms: Iterable[objects_pb2.PreferredSchedulingTerm], path: str = "") -> Self:
        """Raises ValueError listing every term that does not parse."""
        parsed = []
        problems: list[str] = []
        for i, term in enumerate(terms):
            preference = term.preference
            if term.weight == 0 or not (preference.match_expressions or preference.match_fields):
                continue
            node_term = NodeSelectorTerm.from_proto(
                preference, f"{path}[{i}].preference" if path else f"[{i}].preference"
            )
            problems.extend(node_term.errors)
            parsed.append((node_term, term.weight))
        if problems:
            raise ValueError("; ".join(problems))
        return cls(tuple(parsed))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def score(self, node: objects_pb2.Node) -> int:
        labels, name = _labels(node), node.metadata.name
        return sum(weight for term, weight in self.terms if term.matches(labels, name))


class RequiredNodeAffinity:
    """A pod's spec.nodeSelector and required node affinity, parsed once; a node must satisfy both."""

    __slots__ = ("node_selector", "selector")

    def __init__(self, selector: LabelSelector | None, node_selector: NodeSelector | None) -> None:
        #: spec.nodeSelector as ``key=value`` requirements; None when the pod has none.
        self.selector = selector
        #: requiredDuringSchedulingIgnoredDuringExecution; None when the pod has none.
        self.node_selector = node_selector

    @classmethod
    def from_pod(cls, pod: objects_pb2.Pod) -> Self:
        selector = None
        if pod.spec.node_selector:
            selector = LabelSelector(
                tuple(Requirement(k, EQUALS, frozenset({v})) for k, v in pod.spec.node_selector.items())
            )
        node_selector = None
        node_affinity = pod.spec.affinity.node_affinity
        if node_affinity.HasField("required_during_scheduling_ignored_during_execution"):
            node_selector = NodeSelector.from_proto(
                node_affinity.required_during_scheduling_ignored_during_execution
            )
        return cls(selector, node_selector)

    def matches(self, node: objects_pb2.Node) -> bool:
        return self.matches_labels(_labels(node), node.metadata.name)

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        """``matches`` for a node given by its labels and name (a NodeInfo's cached ones)."""
        if self.selector is not None and not self.selector.matches(labels):
            return False
        return self.node_selector is None or self.node_selector.matches_labels(labels, node_name)

    def label_keys(self) -> tuple[str, ...] | None:
        """The node labels whose values alone decide ``matches_labels``; None when the node's name
        matters too."""
        keys = [requirement.key for requirement in self.selector.requirements] if self.selector else []
        if self.node_selector is not None:
            more = self.node_selector.label_keys()
            if more is None:
                return None
            keys += more
        return tuple(dict.fromkeys(keys))


def node_matches_selector_terms(
    node: objects_pb2.Node, terms: Iterable[objects_pb2.NodeSelectorTerm]
) -> bool:
    """Whether ``node`` matches any of ``terms`` (ORed; expressions within a term ANDed). Parses the
    terms on every call: for a loop over nodes, build a ``NodeSelector`` once instead."""
    labels, name = _labels(node), node.metadata.name
    return any(term.matches(labels, name) for term in _parse_terms(terms, "nodeSelectorTerms", False))


def pod_matches_node_selector_and_affinity(pod: objects_pb2.Pod, node: objects_pb2.Node) -> bool:
    """Whether ``node`` satisfies ``pod``'s nodeSelector and required node affinity. Parses the pod on
    every call: for a loop over nodes, build ``RequiredNodeAffinity.from_pod(pod)`` once instead."""
    return RequiredNodeAffinity.from_pod(pod).matches(node)


# -------------------------------------------------------------------------------------- scoring


_name_of = operator.itemgetter(0)
_score_of = operator.itemgetter(1)


def default_normalize_score(
    scores: list[NodeScore], *, reverse: bool = False, max_score: int = MAX_NODE_SCORE
) -> None:
    """Scale ``scores`` in place from [0, max(scores)] to [0, max_score] (integer division), then, with
    ``reverse``, flip them (max_score - score). All zero: unchanged, or all max_score when reversed.
    kube-scheduler's helper.DefaultNormalizeScore."""
    values = list(map(_score_of, scores))
    default_normalize_values(values, reverse=reverse, max_score=max_score)
    scores[:] = node_scores(map(_name_of, scores), values)


def default_normalize_values(
    values: list[int], *, reverse: bool = False, max_score: int = MAX_NODE_SCORE
) -> None:
    """``default_normalize_score`` of plain scores, in place (a plugin's ``normalize_scores``)."""
    highest = max(values, default=0)
    if highest == 0:
        if reverse:
            values[:] = repeat(max_score, len(values))
        return
    if reverse:
        values[:] = [max_score - max_score * value // highest for value in values]
    else:
        values[:] = [max_score * value // highest for value in values]
