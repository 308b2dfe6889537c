"""The HTTP API's request pipeline, the same as gRPC's, in kube-apiserver's order: authenticate (a
bearer token, else the verified client certificate) → read the URL into what it asks (RequestInfo: verb,
resource, subresource, namespace, name) → authorize → enter the request gates (deadline, watch limit,
flow control), held for the whole call or the whole watch stream → the verb. Every failure is answered
as a metav1.Status (status.py) with its HTTP code, a 429 with Retry-After.

The verbs are kube-apiserver's from the method: GET of a name is get, of a collection list (watch with
``watch=true`` or the ``/watch/`` prefix), POST create, PUT update, PATCH patch, DELETE of a name delete
and of a collection deletecollection.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import ssl
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aiohttp import web

from cluster.api import errors
from cluster.api.version import PODSCHED_VERSION, kubernetes_version_info
from cluster.apiserver.auth.access import Access
from cluster.apiserver.auth.authenticator import bearer_token_of
from cluster.apiserver.auth.gate import RequestGate, gated
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.failures import error_of
from cluster.apiserver.flowcontrol import Classification
from cluster.apiserver.http import collections, objects, patching, paths, watching
from cluster.apiserver.http.call import JSON, MAX_PAGE_SIZE, Call, add_warnings
from cluster.apiserver.http.codec import dumps, encode
from cluster.apiserver.http.discovery import Discovery
from cluster.apiserver.http.documents import Document
from cluster.apiserver.http.openapi import OpenAPI
from cluster.apiserver.http.paths import Target
from cluster.apiserver.http.status import retry_after, status_of
from cluster.apiserver.http.table import check_include_object, table_of_object
from cluster.apiserver.metrics import ApiServerMetrics
from cluster.apiserver.verbs import Verbs, request_namespace
from cluster.apiserver.watchcache import read_scope

log = logging.getLogger(__name__)

Handler = Callable[[Call], Awaitable[web.StreamResponse]]
Classify = Callable[[UserInfo, RequestInfo], Classification]
#: A health check (/livez, /readyz): None when healthy, else what is wrong. Health and version are
#: public, as kube-apiserver's system:public-info-viewer makes them.
Check = Callable[[], str | None]


#: The handler of each (verb, whether the URL names an object, subresource) served; watch is apart.
_HANDLERS: dict[tuple[str, bool, str], Handler] = {
    ("list", False, ""): collections.list_,
    ("deletecollection", False, ""): collections.delete_collection,
    ("get", True, ""): objects.get,
    ("get", True, "status"): objects.get,
    ("update", True, ""): objects.update,
    ("update", True, "status"): objects.update,
    ("patch", True, ""): patching.patch,
    ("patch", True, "status"): patching.patch,
    ("delete", True, ""): objects.delete,
    ("create", False, ""): objects.create,
    ("create", False, "binding"): objects.bind,  # the bindings collection
    ("create", True, "binding"): objects.bind,
    ("create", True, "eviction"): objects.evict,
}


def verb_of(method: str, target: Target, watch_param: bool) -> str:
    """kube-apiserver's verb for an HTTP method on a target."""
    if method == "GET":
        if target.name and not target.watch_prefix:
            return "get"
        return "watch" if watch_param or target.watch_prefix else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if target.name else "deletecollection"
    raise errors.MethodNotSupported(
        f"the server does not allow this method on the requested resource: {method}")


class HttpApi:
    def __init__(
        self,
        verbs: Verbs,
        stopping: asyncio.Event,
        *,
        access: Access,
        gates: Sequence[RequestGate],
        max_page_size: int,
        metrics: ApiServerMetrics,
        checks: dict[str, Check],
        classify: Classify | None = None,
    ) -> None:
        self._verbs = verbs
        self._stopping = stopping
        self._access = access
        self._gates = tuple(gates)
        self._max_page_size = max_page_size
        self._metrics = metrics
        self._checks = checks
        #: Flow control's classification, for the headers naming it; None when there is no flow control.
        self._classify = classify
        self._discovery = Discovery("")
        self._openapi_documents: OpenAPI | None = None

    def application(self, server_address: str) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app[MAX_PAGE_SIZE] = self._max_page_size
        self._discovery = Discovery(server_address)
        # Each also with the trailing slash the official clients send (go-restful serves both).
        app.router.add_get("/version", self._version)
        app.router.add_get("/version/", self._version)
        for path in self._checks:
            app.router.add_get(path, self._check(path))
        app.router.add_get("/openapi/{tail:.*}", self._openapi)
        app.router.add_get("/api", self._resource)
        app.router.add_get("/api/", self._resource)
        app.router.add_get("/apis", self._resource)
        app.router.add_get("/apis/", self._resource)
        app.router.add_route("*", "/api/{tail:.+}", self._resource)
        app.router.add_route("*", "/apis/{tail:.+}", self._resource)
        return app

    # ------------------------------------------------------------------------ discovery, OpenAPI

    def _document(self, request: web.Request, document: Document, vary: bool) -> web.Response:
        """A document that does not change while the server runs, revalidated by its ETag."""
        headers = {"ETag": document.etag, "Cache-Control": "no-cache, private"}
        if vary:
            headers["Vary"] = "Accept"
        if request.headers.get("If-None-Match") == document.etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=document.body, headers={**headers, "Content-Type": document.content_type})

    async def _openapi(self, request: web.Request) -> web.Response:
        try:
            self._user_of(request)
            if self._openapi_documents is None:
                # Built on first use: a server nobody asks for its schema never pays for it.
                self._openapi_documents = OpenAPI()
            if request.path == "/openapi/v2" and "json" not in request.headers.get("Accept", "json"):
                raise errors.NotAcceptable("only application/json is served at /openapi/v2")
            document = self._openapi_documents.document(request.path.rstrip("/"))
            if document is None:
                raise paths.page_not_found()
        except errors.ApiError as error:
            return self._failure(error, None)
        return self._document(request, document, vary=False)

    # ------------------------------------------------------------------------------- public paths

    async def _version(self, request: web.Request) -> web.Response:
        return web.Response(body=dumps(kubernetes_version_info(PODSCHED_VERSION)), content_type=JSON)

    def _check(self, path: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        check = self._checks[path]

        async def answer(request: web.Request) -> web.Response:
            problem = check()
            if problem is None:
                return web.Response(text="ok")
            return web.Response(status=500, text=f"{path.strip('/')} check failed: {problem}")

        return answer

    # ---------------------------------------------------------------------------------- resources

    def _user_of(self, request: web.Request) -> UserInfo:
        header = request.headers.get("Authorization")
        token = bearer_token_of(header) if header else None
        certificate = None
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        if isinstance(ssl_object, ssl.SSLObject):
            der = ssl_object.getpeercert(binary_form=True)
            if der:
                certificate = ssl.DER_cert_to_PEM_cert(der).encode()
        return self._access.authenticate_credentials(token, certificate)

    async def _resource(self, request: web.Request) -> web.StreamResponse:
        start = time.perf_counter()
        info: RequestInfo | None = None
        target: Target | None = None
        verb = request.method
        headers: dict[str, str] = {}
        try:
            user = self._user_of(request)
            document = self._discovery.document(request.path.rstrip("/"), request.headers.get("Accept", ""))
            if document is not None:
                return self._document(request, document, vary=True)
            target = paths.parse(request.path)
            verb = verb_of(request.method, target, request.query.get("watch", "").lower() in ("true", "1"))
            kind = target.resource.kind
            namespace = request_namespace(kind, target.namespace) if target.name else target.namespace
            info = RequestInfo(verb, kind.plural, target.subresource, namespace, target.name)
            self._access.authorize(user, info)
            if self._classify is not None:
                headers = flow_headers(self._classify(user, info))
            handler = self._handler(verb, target)
            call = Call(request, self._verbs, user, target, info, headers=headers)
            with read_scope():
                async with gated(self._gates, user, info):
                    if verb == "watch":
                        self._metrics.watch_opened(kind.plural)
                        try:
                            response = await handler(call)
                        finally:
                            self._metrics.watch_closed(kind.plural)
                    else:
                        response = await handler(call)
        except asyncio.CancelledError:
            self._observe(verb, info, "499", start)
            raise
        except Exception as exc:  # every failure becomes a Status: see error_of
            error = error_of(exc, f"{request.method} {request.path}")
            self._observe(verb, info, str(error.http_code), start)
            return self._failure(error, target, headers)
        self._observe(verb, info, str(response.status), start)
        return response

    def _handler(self, verb: str, target: Target) -> Handler:
        """The handler of ``verb`` on ``target``; 405 for what the resource does not serve (an update of
        a collection, a create of a status)."""
        if verb == "watch":
            return lambda call: watching.watch(call, self._stopping, self._shape(call))
        subresource = target.subresource
        handler = _HANDLERS.get((verb, bool(target.name), subresource))
        if handler is None:
            raise errors.MethodNotSupported(
                f"the server does not allow this method on the requested resource: {verb} "
                f"{target.resource.kind.plural}{'/' + subresource if subresource else ''}")
        return handler

    @staticmethod
    def _shape(call: Call) -> Callable[[Any], dict[str, Any]]:
        """What each watch event carries: the object, or (kubectl get -w) a Table of its one row, the
        columns only in the first, as kube-apiserver sends them."""
        resource = call.target.resource
        if not call.table:
            return lambda obj: encode(obj, resource)
        include = call.query.get("includeObject", "")
        check_include_object(include)
        sent: list[bool] = []

        def table(obj: Any) -> dict[str, Any]:
            row = table_of_object(resource.kind, obj, include_object=include, now=time.time(),
                                  to_dict=lambda one: encode(one, resource), no_headers=bool(sent))
            sent.append(True)
            return row

        return table

    def _failure(
        self, error: errors.ApiError, target: Target | None, headers: dict[str, str] | None = None
    ) -> web.Response:
        name = target.name if target is not None else ""
        kind = target.resource.kind.plural if target is not None else ""
        group = target.resource.group if target is not None else ""
        body = status_of(error, name=name, group=group, kind=kind)
        response = web.Response(body=dumps(body), status=error.http_code, content_type=JSON, headers=headers)
        seconds = retry_after(error)
        if seconds is not None:
            response.headers["Retry-After"] = str(seconds)
        add_warnings(response, [])
        return response

    def _observe(self, verb: str, info: RequestInfo | None, code: str, start: float) -> None:
        resource, subresource = (info.resource, info.subresource) if info is not None else ("", "")
        self._metrics.observe_request(verb.upper(), resource, subresource, code, time.perf_counter() - start)


#: kube-apiserver's headers naming the FlowSchema and the PriorityLevelConfiguration of a request.
FLOW_SCHEMA_HEADER = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_HEADER = "X-Kubernetes-PF-PriorityLevel-UID"


def flow_headers(classification: Classification) -> dict[str, str]:
    """The headers kube-apiserver's flow control puts on every answer it classified: the UIDs of its
    FlowSchema and PriorityLevelConfiguration objects. podsched's levels are built in, not objects: each
    UID is derived from the name, so every server gives the same one. Clients such as controller-runtime
    read their presence as "the server has priority and fairness" and drop their own rate limits."""
    return {
        FLOW_SCHEMA_HEADER: _uid(f"flowschema/{classification.flow_schema}"),
        PRIORITY_LEVEL_HEADER: _uid(f"prioritylevel/{classification.priority_level}"),
    }


_UID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "flowcontrol.podsched")


@functools.cache
def _uid(name: str) -> str:
    return str(uuid.uuid5(_UID_NAMESPACE, name))

