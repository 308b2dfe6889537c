"""What each RPC asks, in Kubernetes' authorization terms (RequestInfo): the verb, the resource (a kind's
plural), the subresource and the object it addresses.

Create names no object (kube authorizes a create on the collection, before a name may be generated);
UpdateStatus is an update of the "status" subresource and Bind a create of "binding", as in
kube-apiserver; BindGroup is a create of "binding" of every pod it binds. A namespaced single-object
call without a namespace addresses "default", as the verbs do; a List or Watch without one spans every
namespace (namespace "").

A call that names its kind by a string (Get, Delete, List, Watch: "Pod", "pods", "po", "POD") has it
resolved here, once, before any check: authorization, leadership and the verbs all take the ``Kind`` of
the ``Described`` call, never the caller's string, so that no check is passed by naming the kind another
way.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.api import apiserver_pb2, kinds
from cluster.api.kinds import POD, Kind
from cluster.apiserver.auth.identity import RequestInfo
from cluster.apiserver.verbs import request_namespace, resolve_kind


@dataclass(frozen=True, slots=True)
class Described:
    """One call: the kind it addresses, resolved, and what it asks (its namespace defaulted)."""

    kind: Kind
    info: RequestInfo


def _single(verb: str, kind: Kind, namespace: str, name: str, subresource: str = "") -> Described:
    info = RequestInfo(verb, kind.plural, subresource, request_namespace(kind, namespace), name)
    return Described(kind, info)


def create(request: apiserver_pb2.CreateRequest) -> Described:
    obj = kinds.unwrap(request.object)
    return _single("create", kinds.kind_of(obj), obj.metadata.namespace, "")  # type: ignore[attr-defined]


def get(request: apiserver_pb2.GetRequest) -> Described:
    return _single("get", resolve_kind(request.kind), request.namespace, request.name)


def update(request: apiserver_pb2.UpdateRequest) -> Described:
    obj = kinds.unwrap(request.object)
    meta = obj.metadata  # type: ignore[attr-defined]
    return _single("update", kinds.kind_of(obj), meta.namespace, meta.name)


def update_status(request: apiserver_pb2.UpdateRequest) -> Described:
    obj = kinds.unwrap(request.object)
    meta = obj.metadata  # type: ignore[attr-defined]
    return _single("update", kinds.kind_of(obj), meta.namespace, meta.name, "status")


def delete(request: apiserver_pb2.DeleteRequest) -> Described:
    return _single("delete", resolve_kind(request.kind), request.namespace, request.name)


def bind(request: apiserver_pb2.BindRequest) -> Described:
    meta = request.binding.metadata
    return _single("create", POD, meta.namespace, meta.name, "binding")


def bind_group(request: apiserver_pb2.BindGroupRequest) -> Described:
    """The first binding's pod; the service authorizes every other binding too (``group_bindings``)."""
    first = request.bindings[0].metadata if request.bindings else None
    return _single("create", POD, first.namespace if first else "", first.name if first else "", "binding")


def group_bindings(request: apiserver_pb2.BindGroupRequest) -> list[RequestInfo]:
    """What each binding of a BindGroup asks, as a Bind of that pod would."""
    return [
        _single("create", POD, b.metadata.namespace, b.metadata.name, "binding").info
        for b in request.bindings
    ]


def _collection(verb: str, request: apiserver_pb2.ListRequest | apiserver_pb2.WatchRequest) -> Described:
    kind = resolve_kind(request.kind)
    namespace = request.namespace if kind.namespaced else ""
    return Described(kind, RequestInfo(verb, kind.plural, namespace=namespace))


def list_(request: apiserver_pb2.ListRequest) -> Described:
    return _collection("list", request)


def watch(request: apiserver_pb2.WatchRequest) -> Described:
    return _collection("watch", request)
