"""Which objects a List or Watch request asks for: its label and field selectors over one kind."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import errors
from cluster.api.kinds import Kind, metadata_of
from cluster.api.selectors import FieldSelector, LabelSelector, object_fields


@dataclass(frozen=True, slots=True)
class Selection:
    kind: Kind
    labels: LabelSelector
    fields: FieldSelector

    @classmethod
    def parse(cls, kind: Kind, label_selector: str = "", field_selector: str = "") -> Selection:
        """Parse both selectors; a syntax error or a field the kind does not support is BadRequest, as
        kube-apiserver answers a request's query it cannot read (not a field of an object: not Invalid)."""
        try:
            return cls(kind, LabelSelector.parse(label_selector), FieldSelector.parse(field_selector, kind))
        except errors.Invalid as exc:
            raise errors.BadRequest(exc.message) from None

    @property
    def everything(self) -> bool:
        return self.labels.empty and self.fields.empty

    def matches(self, obj: Message) -> bool:
        if not self.labels.matches(metadata_of(obj).labels):
            return False
        fields = self.fields
        return fields.empty or fields.matches(object_fields(self.kind, obj, fields.field_names))
