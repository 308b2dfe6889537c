"""A free TCP port, for a child that must be told its port before it starts: an etcd member (its peers
and clients are given its URLs) and an API server's HTTP address (kept across its restarts). Another
process may take the port before the child binds it; the child then fails to start, and says so."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host`` (an IPv4 or IPv6 address or a name) now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
