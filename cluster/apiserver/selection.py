"""Which objects a List or Watch request asks for: its label and field selectors over one kind."""

from __future__ import annotations

from dataclasses import dataclass, field

from google.protobuf.message import Message

from cluster.api.kinds import Kind, metadata_of
from cluster.api.selectors import FieldGetter, FieldSelector, LabelSelector, field_getter


@dataclass(frozen=True, slots=True)
class Selection:
    kind: Kind
    labels: LabelSelector
    fields: FieldSelector
    #: The field terms as (how to read the field, the value, whether it must differ), found once here:
    #: `matches` runs for every object a list or watch passes.
    _field_tests: tuple[tuple[FieldGetter, str, bool], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tests = tuple((field_getter(self.kind, t.field), t.value, t.negated) for t in self.fields.terms)
        object.__setattr__(self, "_field_tests", tests)

    @classmethod
    def parse(cls, kind: Kind, label_selector: str = "", field_selector: str = "") -> Selection:
        """Parse both selectors; a syntax error or a field the kind does not support is BadRequest, as
        Kubernetes answers a malformed list parameter."""
        return cls(kind, LabelSelector.parse(label_selector), FieldSelector.parse(field_selector, kind))

    @property
    def everything(self) -> bool:
        return self.labels.empty and self.fields.empty

    def matches(self, obj: Message) -> bool:
        if not self.labels.matches(metadata_of(obj).labels):
            return False
        return all((getter(obj) == value) != negated for getter, value, negated in self._field_tests)
