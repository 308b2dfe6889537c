"""How clients print DeviceClass objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from google.protobuf import json_format

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Columns
from cluster.printers.values import NONE, age


def _device_class_row(device_class: objects_pb2.DeviceClass, now: float) -> list[Cell]:
    return [device_class.metadata.name, age(device_class.metadata, now)]


def opaque_text(config: objects_pb2.OpaqueDeviceConfiguration) -> str:
    """An opaque configuration as one line: its driver and its parameters' JSON."""
    parameters = json_format.MessageToJson(config.parameters, indent=None, sort_keys=True)
    return f"{config.driver}: {parameters}"


async def _describe_device_class(
    reader: Reader, device_class: objects_pb2.DeviceClass, text: DescribeText
) -> None:
    spec = device_class.spec
    name_fields(text, device_class, namespaced=False)
    text.mapping("Labels", device_class.metadata.labels)
    text.mapping("Annotations", device_class.metadata.annotations, sep=": ")
    selectors = [selector.cel.expression for selector in spec.selectors]
    text.field("Selectors", "\n".join(selectors) if selectors else NONE)
    configs = [opaque_text(config.opaque) for config in spec.config]
    text.field("Config", "\n".join(configs) if configs else NONE)
    if spec.HasField("extended_resource_name"):
        text.field("Extended Resource Name", spec.extended_resource_name)


PRINTER = Printer(
    kinds.DEVICE_CLASS,
    Columns((NAME, AGE), _device_class_row),
    _describe_device_class,
)
