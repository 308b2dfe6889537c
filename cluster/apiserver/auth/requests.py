"""What each RPC asks, in Kubernetes' authorization terms (RequestInfo): the verb, the resource (a kind's
plural), the subresource and the object it addresses.

Create names no object (kube authorizes a create on the collection, before a name may be generated);
UpdateStatus is an update of the "status" subresource and Bind a create of "binding", as in
kube-apiserver; BindGroup is a create of "binding" of every pod it binds. A namespaced single-object
call without a namespace addresses "default", as the verbs do; a List or Watch without one spans every
namespace (namespace "").
"""

from __future__ import annotations

from cluster.api import apiserver_pb2, kinds
from cluster.api.kinds import POD, Kind
from cluster.apiserver.auth.identity import RequestInfo
from cluster.apiserver.verbs import request_namespace, resolve_kind


def _single(verb: str, kind: Kind, namespace: str, name: str, subresource: str = "") -> RequestInfo:
    return RequestInfo(verb, kind.plural, subresource, request_namespace(kind, namespace), name)


def create(request: apiserver_pb2.CreateRequest) -> RequestInfo:
    obj = kinds.unwrap(request.object)
    return _single("create", kinds.kind_of(obj), obj.metadata.namespace, "")  # type: ignore[attr-defined]


def get(request: apiserver_pb2.GetRequest) -> RequestInfo:
    return _single("get", resolve_kind(request.kind), request.namespace, request.name)


def update(request: apiserver_pb2.UpdateRequest) -> RequestInfo:
    obj = kinds.unwrap(request.object)
    meta = obj.metadata  # type: ignore[attr-defined]
    return _single("update", kinds.kind_of(obj), meta.namespace, meta.name)


def update_status(request: apiserver_pb2.UpdateRequest) -> RequestInfo:
    obj = kinds.unwrap(request.object)
    meta = obj.metadata  # type: ignore[attr-defined]
    return _single("update", kinds.kind_of(obj), meta.namespace, meta.name, "status")


def delete(request: apiserver_pb2.DeleteRequest) -> RequestInfo:
    return _single("delete", resolve_kind(request.kind), request.namespace, request.name)


def bind(request: apiserver_pb2.BindRequest) -> RequestInfo:
    meta = request.binding.metadata
    return _single("create", POD, meta.namespace, meta.name, "binding")


def bind_group(request: apiserver_pb2.BindGroupRequest) -> RequestInfo:
    """The first binding's pod; the service authorizes every other binding too (``group_bindings``)."""
    first = request.bindings[0].metadata if request.bindings else None
    return _single("create", POD, first.namespace if first else "", first.name if first else "", "binding")


def group_bindings(request: apiserver_pb2.BindGroupRequest) -> list[RequestInfo]:
    """What each binding of a BindGroup asks, as a Bind of that pod would."""
    return [
        _single("create", POD, b.metadata.namespace, b.metadata.name, "binding") for b in request.bindings
    ]


def _collection(verb: str, request: apiserver_pb2.ListRequest | apiserver_pb2.WatchRequest) -> RequestInfo:
    kind = resolve_kind(request.kind)
    return RequestInfo(verb, kind.plural, namespace=request.namespace if kind.namespaced else "")


def list_(request: apiserver_pb2.ListRequest) -> RequestInfo:
    return _collection("list", request)


def watch(request: apiserver_pb2.WatchRequest) -> RequestInfo:
    return _collection("watch", request)
