"""Which Host headers the web view answers: a defence against DNS rebinding, where a page on another site
points its own name at this machine and reads ``/api/state`` through the visitor's browser. The browser then
sends that other site's name as the Host, so any name not known to be this server's is refused.

Answered: the address the connection reached (an IP literal, which only this server's own origin sends),
the ``--listen`` host, and for a loopback listen ``localhost``, ``127.0.0.1`` and ``[::1]``, each with the
port served on; and the names given with ``--allowed-host`` (``NAME`` with any port, or ``NAME:PORT``).
Plain Python (no aiohttp): the CLI parses its flag with ``split_host``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

#: Where the web view serves unless told otherwise: this machine only.
DEFAULT_LISTEN = "127.0.0.1:8080"
#: The names a loopback listen is reached by.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
HTTP_PORT = 80


def split_host(text: str) -> tuple[str, int | None] | None:
    """``NAME``, ``NAME:PORT``, ``[V6]`` or ``[V6]:PORT`` as (lower-case name without brackets or a trailing
    dot, port or None); None when it is none of those."""
    text = text.strip().lower()
    if text.startswith("["):
        name, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text_or_empty = text.partition(":")
        port_text = port_text_or_empty if colon else None
        if ":" in port_text_or_empty:
            return None
    name = name.rstrip(".")
    if not name:
        return None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HostCheck:
    """The Host headers one server answers; ``refusal`` says why a request's is not one of them."""

    def __init__(self, listen_host: str, allowed: Iterable[tuple[str, int | None]] = ()) -> None:
        self._listen_names = {listen_host.lower().strip("[]")}
        if is_loopback(listen_host):
            self._listen_names |= LOOPBACK_NAMES
        self._allowed = set(allowed)

    def refusal(self, header: str | None, local: tuple[str, int] | None) -> str | None:
        """None when ``header`` (the request's Host) names this server reached at ``local`` (the address
        and port the connection arrived at); else the reason it is refused."""
        if not header:
            return "a request without a Host header is refused"
        parsed = split_host(header)
        if parsed is None:
            return f"malformed Host header {header!r}"
        name, port = parsed
        if (name, None) in self._allowed or (name, port) in self._allowed:
            return None
        if local is not None:
            local_host, local_port = local
            # A browser leaves out the scheme's default port.
            if (port or HTTP_PORT) == local_port and name in self._listen_names | {local_host.lower()}:
                return None
        return (f"this server does not answer for Host {header!r}; "
                "name it with --allowed-host to reach the web view by that name")
