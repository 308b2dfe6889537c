"""Label and field selectors, parsed once and matched many times (a watch matches every event).

Label selector syntax is apimachinery's (``labels.Parse``)::

    <selector>    ::= <requirement> | <requirement> "," <selector>
    <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUE {"," VALUE} ")" | ("=" | "==" | "!=") VALUE
                                | (">" | "<") INTEGER ]

``KEY`` alone requires the label to exist, ``!KEY`` requires it to be absent; ``!=`` and ``notin`` also
match objects without the label. An empty selector matches everything.

Field selectors are comma-ANDed ``field=value``, ``field==value`` or ``field!=value`` terms over the few
fields each kind supports (``object_fields``); ``\\\\``, ``\\,`` and ``\\=`` escape those characters in
values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cluster.api import errors, kinds, objects_pb2
from cluster.api.names import is_qualified_name, is_valid_label_value

# Label selector operators, named as apimachinery's selection.Operator values.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

# The operators a LabelSelector message's matchExpressions may carry.
_PROTO_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return value is not None and value in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return value is None or value not in self.values
        if op == EXISTS:
            return value is not None
        if op == DOES_NOT_EXIST:
            return value is None
        # Gt / Lt: the label must hold an integer that compares as asked.
        if value is None:
            return False
        try:
            have = int(value)
        except ValueError:
            return False
        (bound,) = self.values
        return have > int(bound) if op == GREATER_THAN else have < int(bound)

    def __str__(self) -> str:
        values = ",".join(sorted(self.values))
        match self.operator:
            case "exists":
                return self.key
            case "!":
                return "!" + self.key
            case "in" | "notin":
                return f"{self.key} {self.operator} ({values})"
            case "gt":
                return f"{self.key}>{values}"
            case "lt":
                return f"{self.key}<{values}"
            case _:
                return f"{self.key}{self.operator}{values}"


class LabelSelector:
    """An AND of requirements; ``matches`` runs in time linear in the requirements, nothing else."""

    __slots__ = ("_match_nothing", "_requirements")

    def __init__(self, requirements: tuple[Requirement, ...] = (), *, match_nothing: bool = False) -> None:
        self._requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._match_nothing = match_nothing

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls(match_nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse kubectl's ``-l`` syntax; raises ``errors.BadRequest`` (a request's malformed parameter, as
        Kubernetes answers it) quoting ``text`` and the problem."""
        try:
            return cls(tuple(_LabelParser(text).parse()))
        except _SelectorSyntaxError as exc:
            raise errors.BadRequest(f'invalid label selector "{text}": {exc}') from None

    @classmethod
    def from_proto(cls, selector: objects_pb2.LabelSelector | None) -> LabelSelector:
        """The selector a LabelSelector message describes (metav1.LabelSelectorAsSelector): ``None`` (an
        absent selector) matches nothing, an empty one everything. Raises ``errors.Invalid`` naming the
        bad requirement."""
        if selector is None:
            return cls.nothing()
        requirements = []
        for key, value in selector.match_labels.items():
            requirements.append(_requirement(key, EQUALS, [value], f"matchLabels[{key}]"))
        for index, expression in enumerate(selector.match_expressions):
            where = f"matchExpressions[{index}]"
            operator = _PROTO_OPERATORS.get(expression.operator)
            if operator is None:
                raise errors.Invalid(
                    f'{where}.operator: Unsupported value: "{expression.operator}": supported values: '
                    '"In", "NotIn", "Exists", "DoesNotExist"'
                )
            requirements.append(_requirement(expression.key, operator, list(expression.values), where))
        return cls(tuple(requirements))

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (it matches every object)."""
        return not self._requirements and not self._match_nothing

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._match_nothing:
            return False
        return all(requirement.matches(labels) for requirement in self._requirements)

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self._requirements)

    def __repr__(self) -> str:
        if self._match_nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return (self._requirements, self._match_nothing) == (other._requirements, other._match_nothing)

    def __hash__(self) -> int:
        return hash((self._requirements, self._match_nothing))


class _SelectorSyntaxError(Exception):
    pass


def _requirement(key: str, operator: str, values: list[str], where: str) -> Requirement:
    """A checked requirement (apimachinery's NewRequirement rules); raises errors.Invalid naming ``where``."""
    try:
        return _checked_requirement(key, operator, values)
    except _SelectorSyntaxError as exc:
        raise errors.Invalid(f"{where}: {exc}") from None


def _checked_requirement(key: str, operator: str, values: list[str]) -> Requirement:
    problems = [f'key: Invalid value: "{key}": {p}' for p in is_qualified_name(key)]
    if operator in (IN, NOT_IN) and not values:
        problems.append("values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in (EXISTS, DOES_NOT_EXIST) and values:
        problems.append(
            "values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            problems.append("values: for 'Gt', 'Lt' operators, exactly one value is required")
        else:
            try:
                int(values[0], 10)
            except ValueError:
                problems.append(
                    f'values[0]: Invalid value: "{values[0]}": for \'Gt\', \'Lt\' operators, '
                    "the value must be an integer"
                )
    for index, value in enumerate(values):
        problems.extend(
            f'values[{index}]: Invalid value: "{value}": {p}' for p in is_valid_label_value(value)
        )
    if problems:
        raise _SelectorSyntaxError("; ".join(problems))
    return Requirement(key, operator, frozenset(values))


# --------------------------------------------------------------------------- label selector parser

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_END = ""  # the token at the end of the text


class _LabelParser:
    """A recursive-descent parser over apimachinery's tokens: identifiers, ``in``/``notin`` (which are
    plain identifiers where a value is expected), and the symbols ``= == != ! ( ) , > <``."""

    def __init__(self, text: str) -> None:
        self._tokens = list(self._lex(text))
        self._tokens.append((_END, "end of string"))
        self._position = 0

    @staticmethod
    def _lex(text: str) -> Iterator[tuple[str, str]]:
        """Tokens as (kind, literal); kind is "id", "in", "notin" or the symbol itself."""
        i, end = 0, len(text)
        while i < end:
            ch = text[i]
            if ch in _WHITESPACE:
                i += 1
            elif ch in _SPECIAL:
                pair = text[i:i + 2]
                symbol = pair if pair in ("==", "!=") else ch
                yield symbol, symbol
                i += len(symbol)
            else:
                start = i
                while i < end and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
                    i += 1
                word = text[start:i]
                yield (word if word in ("in", "notin") else "id"), word

    def _peek(self, *, as_value: bool = True) -> tuple[str, str]:
        kind, literal = self._tokens[self._position]
        if as_value and kind in ("in", "notin"):
            kind = "id"
        return kind, literal

    def _next(self, *, as_value: bool = True) -> tuple[str, str]:
        token = self._peek(as_value=as_value)
        self._position += 1
        return token

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        kind, literal = self._peek()
        if kind == _END:
            return requirements
        while True:
            if kind not in ("id", "!"):
                raise _SelectorSyntaxError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            requirements.append(self._requirement())
            kind, literal = self._next()
            if kind == _END:
                return requirements
            if kind != ",":
                raise _SelectorSyntaxError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self._peek()
            if kind not in ("id", "!"):
                raise _SelectorSyntaxError(f"found '{literal}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        negated = False
        kind, literal = self._next()
        if kind == "!":
            negated = True
            kind, literal = self._next()
        if kind != "id":
            raise _SelectorSyntaxError(f"found '{literal}', expected: identifier")
        key = literal
        if negated or self._peek()[0] in (_END, ","):
            return self._checked(key, DOES_NOT_EXIST if negated else EXISTS, [])
        kind, literal = self._next(as_value=False)
        operator = {"in": IN, "notin": NOT_IN, "=": EQUALS, "==": DOUBLE_EQUALS, "!=": NOT_EQUALS,
                    ">": GREATER_THAN, "<": LESS_THAN}.get(kind)
        if operator is None:
            raise _SelectorSyntaxError(f"found '{literal}', expected: in, notin, =, ==, !=, >, <")
        values = self._value_set() if operator in (IN, NOT_IN) else self._exact_value()
        return self._checked(key, operator, values)

    @staticmethod
    def _checked(key: str, operator: str, values: list[str]) -> Requirement:
        try:
            return _checked_requirement(key, operator, values)
        except _SelectorSyntaxError as exc:
            raise _SelectorSyntaxError(f"unable to parse requirement: {exc}") from None

    def _value_set(self) -> list[str]:
        """``( v1, v2, ... )``; empty entries are the empty value, as apimachinery reads "(a,,b)" and "()"."""
        kind, literal = self._next()
        if kind != "(":
            raise _SelectorSyntaxError(f"found '{literal}', expected: '('")
        values: set[str] = set()
        expect_value = True
        while True:
            kind, literal = self._next()
            if kind == "id" and expect_value:
                values.add(literal)
                expect_value = False
            elif kind == ",":
                if expect_value:
                    values.add("")
                expect_value = True
            elif kind == ")":
                if expect_value:
                    values.add("")
                return sorted(values)
            else:
                expected = "',', ')' or identifier" if expect_value else "',' or ')'"
                raise _SelectorSyntaxError(f"found '{literal}', expected: {expected}")

    def _exact_value(self) -> list[str]:
        kind, literal = self._peek()
        if kind in (_END, ","):
            return [""]
        self._next()
        if kind != "id":
            raise _SelectorSyntaxError(f"found '{literal}', expected: identifier")
        return [literal]


# --------------------------------------------------------------------------------- field selectors


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    value: str
    #: True for ``!=``.
    negated: bool = False

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{'!=' if self.negated else '='}{escaped}"


class FieldSelector:
    """An AND of ``field=value`` / ``field!=value`` terms over the selectable fields of one kind's objects
    (cluster/apiserver/selection.py matches them)."""

    __slots__ = ("_terms",)

    def __init__(self, terms: tuple[FieldTerm, ...] = ()) -> None:
        self._terms = tuple(sorted(terms, key=lambda t: (t.field, t.negated, t.value)))

    @classmethod
    def parse(cls, text: str, kind: kinds.Kind[Any] | None = None) -> FieldSelector:
        """Parse ``text`` as apimachinery's fields.ParseSelector does (``=``, ``==``, ``!=`` terms joined by
        commas, which AND); with ``kind``, also check every field is one that kind supports, spelling an
        old alias (a pod's ``spec.host``) as its field. Raises ``errors.BadRequest`` with Kubernetes'
        message: a request's malformed parameter."""
        terms = []
        # Sorted as apimachinery checks them, so that the first bad part is the one it names.
        for part in sorted(_split_unescaped(text, ",")):
            if not part:
                continue
            term = _split_term(part)
            if term is None:
                raise errors.BadRequest(f"invalid selector: '{text}'; can't understand '{part}'")
            field, operator, raw_value = term
            try:
                value = _unescape(raw_value)
            except ValueError as exc:
                raise errors.BadRequest(f"invalid field selector: {exc}") from None
            terms.append(FieldTerm(field, value, operator == "!="))
        if kind is None:
            return cls(tuple(terms))
        aliases = _ALIASES.get(kind.name, {})
        selector = cls(tuple(FieldTerm(aliases.get(t.field, t.field), t.value, t.negated) for t in terms))
        selector.check_supported(kind)
        return selector

    def check_supported(self, kind: kinds.Kind[Any]) -> None:
        """Raise ``errors.BadRequest("field label not supported: <field>")`` for a field ``kind`` lacks."""
        supported = supported_fields(kind)
        for term in self._terms:
            if term.field not in supported:
                raise errors.BadRequest(f"field label not supported: {term.field}")

    @property
    def empty(self) -> bool:
        return not self._terms

    @property
    def terms(self) -> tuple[FieldTerm, ...]:
        return self._terms

    def requires_exact(self, field: str) -> str | None:
        """The value ``field`` must equal, when the selector pins it (lets a server use an index)."""
        for term in self._terms:
            if term.field == field and not term.negated:
                return term.value
        return None

    def __str__(self) -> str:
        return ",".join(str(term) for term in self._terms)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self._terms == other._terms

    def __hash__(self) -> int:
        return hash(self._terms)


def _split_unescaped(text: str, separator: str) -> list[str]:
    """Split on ``separator`` where no backslash escapes it (escapes stay in the parts)."""
    parts, start, i = [], 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == separator:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, raw value) at the first ``!=``, ``==`` or ``=``."""
    for i in range(len(term)):
        for operator in ("!=", "==", "="):
            if term.startswith(operator, i):
                return term[:i], operator, term[i + len(operator):]
    return None


_ESCAPABLE = frozenset("\\,=")


def _unescape(value: str) -> str:
    """apimachinery's fields.UnescapeValue, with its messages (an unescaped character is named by its code
    point, as Go prints a rune)."""
    if not any(ch in value for ch in "\\,="):
        return value
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            if i + 1 >= len(value):
                raise ValueError("invalid escape sequence: \\")
            escaped = value[i + 1]
            if escaped not in _ESCAPABLE:
                raise ValueError(f"invalid escape sequence: \\{escaped}")
            out.append(escaped)
            i += 2
            continue
        if ch in ",=":
            raise ValueError(f"unescaped character in value: {ord(ch)}")
        out.append(ch)
        i += 1
    return "".join(out)


# ------------------------------------------------------------------------- fields of each kind

#: One selectable field's value of an object.
FieldGetter = Callable[[Any], str]


def _meta_fields() -> dict[str, FieldGetter]:
    return {
        "metadata.name": lambda obj: obj.metadata.name,
        "metadata.namespace": lambda obj: obj.metadata.namespace,
    }


_FIELDS: dict[str, dict[str, FieldGetter]] = {
    kinds.POD.name: {
        **_meta_fields(),
        "spec.nodeName": lambda pod: pod.spec.node_name,
        "spec.schedulerName": lambda pod: pod.spec.scheduler_name,
        "spec.restartPolicy": lambda pod: pod.spec.restart_policy,
        "spec.serviceAccountName": lambda pod: pod.spec.service_account_name,
        "status.phase": lambda pod: pod.status.phase,
        "status.nominatedNodeName": lambda pod: pod.status.nominated_node_name,
        "status.podIP": lambda pod: pod.status.pod_ip,
    },
    # Kubernetes' field label conversions (pkg/apis/core/v1/conversion.go) spell out the fields of these
    # cluster-scoped kinds: metadata.namespace is not among them.
    kinds.NODE.name: {
        "metadata.name": lambda node: node.metadata.name,
        "spec.unschedulable": lambda node: "true" if node.spec.unschedulable else "false",
    },
    kinds.NAMESPACE.name: {
        "metadata.name": lambda namespace: namespace.metadata.name,
        "status.phase": lambda namespace: namespace.status.phase,
    },
    kinds.SERVICE.name: {
        **_meta_fields(),
        "spec.clusterIP": lambda service: service.spec.cluster_ip,
        "spec.type": lambda service: service.spec.type,
    },
    kinds.EVENT.name: {
        **_meta_fields(),
        "involvedObject.kind": lambda ev: ev.involved_object.kind,
        "involvedObject.namespace": lambda ev: ev.involved_object.namespace,
        "involvedObject.name": lambda ev: ev.involved_object.name,
        "involvedObject.uid": lambda ev: ev.involved_object.uid,
        "involvedObject.apiVersion": lambda ev: ev.involved_object.api_version,
        "involvedObject.resourceVersion": lambda ev: ev.involved_object.resource_version,
        "involvedObject.fieldPath": lambda ev: ev.involved_object.field_path,
        "reason": lambda ev: ev.reason,
        "reportingComponent": lambda ev: ev.reporting_component,
        "source": lambda ev: ev.source.component or ev.reporting_component,
        "type": lambda ev: ev.type,
    },
}
_DEFAULT_FIELDS = _meta_fields()
#: Old names Kubernetes still takes for a field: ``spec.host`` from v1 clients of long ago.
_ALIASES: dict[str, dict[str, str]] = {kinds.POD.name: {"spec.host": "spec.nodeName"}}


def supported_fields(kind: kinds.Kind[Any]) -> frozenset[str]:
    """The field selector labels ``kind`` supports."""
    return frozenset(_FIELDS.get(kind.name, _DEFAULT_FIELDS))


def field_getter(kind: kinds.Kind[Any], field: str) -> FieldGetter:
    """How to read ``field`` (one ``kind`` supports) of an object."""
    return _FIELDS.get(kind.name, _DEFAULT_FIELDS)[field]

