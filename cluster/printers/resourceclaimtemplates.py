"""How clients print ResourceClaimTemplate objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.resourceclaims import requests_section
from cluster.printers.table import AGE, NAME, Cell, Columns
from cluster.printers.values import age


def _template_row(template: objects_pb2.ResourceClaimTemplate, now: float) -> list[Cell]:
    return [template.metadata.name, age(template.metadata, now)]


async def _describe_template(
    reader: Reader, template: objects_pb2.ResourceClaimTemplate, text: DescribeText
) -> None:
    name_fields(text, template, namespaced=True)
    text.mapping("Labels", template.metadata.labels)
    text.mapping("Annotations", template.metadata.annotations, sep=": ")
    text.mapping("Claim Labels", template.spec.metadata.labels)
    text.mapping("Claim Annotations", template.spec.metadata.annotations, sep=": ")
    requests_section(text, template.spec.spec)


PRINTER = Printer(
    kinds.RESOURCE_CLAIM_TEMPLATE,
    Columns((NAME, AGE), _template_row),
    _describe_template,
)
