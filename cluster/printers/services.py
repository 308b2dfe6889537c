"""How clients print Service objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, selected_pods
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age, map_selector_text


def _service_ports(service: objects_pb2.Service) -> str:
    ports = [
        f"{p.port}:{p.node_port}/{p.protocol or 'TCP'}" if p.node_port else f"{p.port}/{p.protocol or 'TCP'}"
        for p in service.spec.ports
    ]
    return ",".join(ports) if ports else NONE


def _service_row(service: objects_pb2.Service, now: float) -> list[Cell]:
    spec = service.spec
    # podsched provisions no load balancer: one asked for stays pending, as kubectl shows it.
    external = "<pending>" if spec.type == "LoadBalancer" else NONE
    return [service.metadata.name, spec.type, spec.cluster_ip or NONE, external, _service_ports(service),
            age(service.metadata, now), map_selector_text(spec.selector) or NONE]


async def _describe_service(reader: Reader, service: objects_pb2.Service, text: DescribeText) -> None:
    spec = service.spec
    name_fields(text, service, namespaced=True)
    text.mapping("Labels", service.metadata.labels)
    text.mapping("Annotations", service.metadata.annotations, sep=": ")
    selector = map_selector_text(spec.selector)
    text.field("Selector", selector or NONE)
    text.field("Type", spec.type)
    text.field("IP", spec.cluster_ip or NONE)
    for port in spec.ports:
        text.field("Port", f"{port.name or '<unset>'}  {port.port}/{port.protocol or 'TCP'}")
        if port.node_port:
            text.field("NodePort", f"{port.name or '<unset>'}  {port.node_port}/{port.protocol or 'TCP'}")
    # podsched runs no endpoints controller: the pods the selector picks are what the Service would serve.
    pods = await selected_pods(reader, service.metadata.namespace, selector) if selector else []
    text.field("Selected pods", ", ".join(p.metadata.name for p in pods) or NONE)


PRINTER = Printer(
    kinds.SERVICE,
    Columns((
        NAME,
        Column("Type", "type determines how the Service is exposed."),
        Column("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly."),
        Column("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will "
                              "also accept traffic for this service."),
        Column("Port(s)", "The list of ports that are exposed by this service."),
        AGE,
        wide(Column("Selector", "Route service traffic to pods with label keys and values matching this "
                                "selector.")),
    ), _service_row),
    _describe_service,
)
