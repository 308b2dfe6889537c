"""One HTTP API request after the pipeline has authenticated, described and authorized it: what its
handler is given."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from cluster.api import errors
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.http import codec
from cluster.apiserver.http.paths import Target
from cluster.apiserver.http.table import check_include_object
from cluster.apiserver.verbs import Verbs

JSON = "application/json"
#: Kubernetes' binary encodings, which the HTTP API does not decode (it answers in JSON alone).
BINARY_MEDIA_TYPES = frozenset({"application/vnd.kubernetes.protobuf", "application/cbor"})
#: The largest List ``limit`` a caller may ask for (limits.py), in the application's config.
MAX_PAGE_SIZE = web.AppKey("max_page_size", int)


@dataclass(slots=True)
class Call:
    request: web.Request
    verbs: Verbs
    user: UserInfo
    target: Target
    info: RequestInfo
    #: Texts for ``Warning`` headers of the answer (kube's "299 - ..." warnings).
    warnings: list[str] = field(default_factory=list)
    #: Headers every answer to the request carries (flow control's X-Kubernetes-PF-*).
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def query(self) -> Any:
        return self.request.query

    def flag(self, name: str) -> bool:
        """A boolean query parameter as kube reads one: "true"/"1" (and bare) are true."""
        value = self.request.query.get(name)
        return value is not None and value.lower() in ("", "true", "1")

    def integer(self, name: str) -> int | None:
        value = self.request.query.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise errors.BadRequest(f'{name}: Invalid value: "{value}": must be an integer') from None

    @property
    def table(self) -> bool:
        """Whether the client asks for a server-side Table (``Accept: application/json;as=Table;v=v1;
        g=meta.k8s.io``, kubectl's get) before any plain media type."""
        for media in self.request.headers.get("Accept", "").split(","):
            params = dict(_parameter(part) for part in media.split(";")[1:])
            if params.get("as") == "Table":
                if params.get("v") == "v1" and params.get("g") == "meta.k8s.io":
                    return True
                continue  # a Table of another version: the next choice
            return False
        return False

    @property
    def dry_run(self) -> bool:
        """``dryRun=All`` (the only value kube takes); any other value is refused as kube refuses it."""
        values = self.request.query.getall("dryRun", [])
        for value in values:
            if value != "All":
                raise errors.BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
        return bool(values)

    @property
    def field_validation(self) -> str:
        """The request's ``fieldValidation`` (Warn when absent); BadRequest for an unknown one."""
        return codec.field_validation_of(self.request.query.get("fieldValidation"))

    @property
    def include_object(self) -> str:
        """A Table's ``includeObject`` (Metadata when absent); BadRequest for an unknown one."""
        include = self.request.query.get("includeObject", "")
        check_include_object(include)
        return include

    async def raw_body(self) -> bytes:
        """The body's bytes, refused when in a binary encoding or over the size limit."""
        if self.request.content_type in BINARY_MEDIA_TYPES:
            # kubectl's typed clients send protobuf; read as text it would be a baffling YAML error.
            raise errors.UnsupportedMediaType(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml")
        raw = await self.request.read()
        if len(raw) > codec.MAX_BODY_BYTES:
            raise errors.RequestEntityTooLarge(
                f"the request body is {len(raw)} bytes: the limit is {codec.MAX_BODY_BYTES}")
        return raw

    async def body(self) -> Any:
        raw = await self.raw_body()
        if not raw:
            raise errors.BadRequest("the request carries no body")
        return codec.read_body(raw)

    def respond(self, data: Any, status: int = 200) -> web.Response:
        response = web.Response(body=codec.dumps(data), status=status, content_type=JSON,
                                headers=self.headers)
        add_warnings(response, self.warnings)
        return response


def _parameter(text: str) -> tuple[str, str]:
    key, _, value = text.strip().partition("=")
    return key.strip(), value.strip()


def add_warnings(response: web.StreamResponse, warnings: list[str]) -> None:
    """Each warning as kube-apiserver sends it: ``Warning: 299 - "text"`` (RFC 7234's warn-code 299)."""
    for text in dict.fromkeys(warnings):
        response.headers.add("Warning", f"299 - {json.dumps(text)}")
