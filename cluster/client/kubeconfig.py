"""A kubeconfig for podsched's Kubernetes HTTP API: the file kubectl, client-go and the official Python
client read to find a server and what to present to it (`podsched kubeconfig` writes one from the client
flags, `podsched up` one for its admin user).

One cluster, one user and one context of the same name, made current: the server's ``https://`` URL when
the credentials use TLS (a CA or a client certificate), else ``http://`` (the API server serves plaintext
only where gRPC does, on loopback). Files are named by absolute path (a kubeconfig's relative paths are
read against the kubeconfig's own directory) or embedded as base64 ``*-data`` fields.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from cluster.client.credentials import ClientCredentials
from cluster.healthserver import parse_address
from cluster.outputfiles import write_with_mode

#: The name of the cluster, user and context a kubeconfig holds unless told otherwise.
DEFAULT_CONTEXT = "podsched"
#: The file's mode: it holds a credential (a token, or where the client key is).
KUBECONFIG_MODE = 0o600
_SCHEMES = ("https", "http")


class KubeconfigError(ValueError):
    """A server address or setting a kubeconfig cannot be made of; the message says which and why."""


def server_url(server: str, credentials: ClientCredentials) -> str:
    """The URL of ``server`` (``host:port`` or an http(s) URL without a path): https when the
    credentials use TLS or the URL says so; KubeconfigError when it is none of these, or an ``http://``
    URL comes with TLS files."""
    if "," in server:
        raise KubeconfigError(f"--server {server}: a kubeconfig names one server, not a list")
    if "://" not in server:
        try:
            host, port = parse_address(server)
        except ValueError as exc:
            raise KubeconfigError(f"--server: {exc}") from None
        return _url("https" if credentials.tls else "http", host, port)
    parts = urlsplit(server)
    if parts.scheme not in _SCHEMES:
        raise KubeconfigError(f"--server {server}: the scheme must be https:// or http://")
    try:
        url_port = parts.port
    except ValueError:  # not a number, or out of range
        url_port = None
    if not parts.hostname or url_port is None or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise KubeconfigError(f"--server {server}: expected {parts.scheme}://host:port")
    if parts.scheme == "http" and credentials.tls:
        raise KubeconfigError(
            f"--server {server}: --certificate-authority and --client-certificate need an https:// server"
        )
    return _url(parts.scheme, parts.hostname, url_port)


def kubeconfig(
    server: str, credentials: ClientCredentials, *, embed: bool = False, name: str = DEFAULT_CONTEXT
) -> dict[str, Any]:
    """The kubeconfig (a ``kind: Config`` document) that reaches ``server`` with ``credentials``; with
    ``embed`` the CA and the client certificate and key are in the file rather than named by path."""
    if not name or any(char.isspace() for char in name):
        raise KubeconfigError(f"--context {name!r}: a name must be non-empty, without spaces")
    cluster: dict[str, Any] = {"server": server_url(server, credentials)}
    if credentials.ca_file:
        cluster.update(_file("certificate-authority", credentials.ca_file, credentials.ca_pem, embed))
    if credentials.tls_server_name:
        cluster["tls-server-name"] = credentials.tls_server_name
    user: dict[str, Any] = {}
    if credentials.token:
        user["token"] = credentials.token
    if credentials.client_cert_file:
        user.update(_file("client-certificate", credentials.client_cert_file, credentials.client_cert_pem,
                          embed))
        user.update(_file("client-key", credentials.client_key_file, credentials.client_key_pem, embed))
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
    }


def dump(config: dict[str, Any]) -> str:
    """The kubeconfig as YAML, its fields in kubectl's order."""
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def write_kubeconfig(path: Path, config: dict[str, Any]) -> None:
    """Write ``config`` to ``path``, readable by its owner alone from the first byte (OSError as the
    file system says)."""
    write_with_mode(path, dump(config).encode(), KUBECONFIG_MODE)


def _url(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _file(field: str, path: str, pem: bytes, embed: bool) -> dict[str, str]:
    if embed:
        return {f"{field}-data": base64.b64encode(pem).decode()}
    return {field: str(Path(path).resolve())}
