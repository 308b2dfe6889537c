"""A document the HTTP API serves unchanged for the server's life (discovery, OpenAPI): encoded once, with
the ETag that lets clients revalidate their cached copy."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Document:
    body: bytes
    content_type: str
    #: The quoted strong ETag: the body's SHA-512, upper-case hex as kube-apiserver's OpenAPI handler
    #: writes it.
    etag: str

    @property
    def digest(self) -> str:
        """The ETag unquoted: the hash an OpenAPI v3 index puts in each serverRelativeURL."""
        return self.etag.strip('"')


def encode(document: dict[str, Any], content_type: str = JSON) -> Document:
    body = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    return Document(body, content_type, f'"{hashlib.sha512(body).hexdigest().upper()}"')
