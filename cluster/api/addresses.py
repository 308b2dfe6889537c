"""Which listen and server addresses stay on this machine.

Both sides ask: the API server serves loopback only when nobody is authenticated, and the client warns
before sending a bearer token in clear text to anything else.
"""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an IP address, IPv6 in brackets or not, or a name) is this machine's loopback.

    "localhost" is; any other name is not, since it may resolve to anything.
    """
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
