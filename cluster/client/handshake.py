"""Why a TLS connection to a server was closed, when gRPC can only say "Socket closed".

Under TLS 1.3 the client's side of the handshake is done before the server has checked the client's
certificate, so a gRPC server that refuses the certificate (or requires one and got none) just closes the
connection, and the client sees "Socket closed" like any dropped connection. One plain TLS connection
with the same settings tells the two apart: a server that refuses this client completes the handshake
and closes without a byte, where a gRPC server that accepts it sends its HTTP/2 settings at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl

import grpc

from cluster.client.credentials import ClientCredentials

#: What the client and `podsched healthcheck` say before `refused_client`'s reason.
CLOSED_AFTER_HANDSHAKE = "closed the connection right after the TLS handshake"
#: How long the probe may take in all; a server that says nothing in that time is not refusing anyone.
PROBE_TIMEOUT_S = 2.0


async def refused_client(
    address: str, err: grpc.aio.AioRpcError, credentials: ClientCredentials
) -> str | None:
    """Why the server at ``address`` most likely closed the connection ``err`` reports, when it is a TLS
    connection closed while connecting and the probe finds the server hanging up on this client right
    after the handshake; else None (the connection failed for some other reason, worth a retry)."""
    details = err.details() or ""
    closed_while_connecting = err.code() == grpc.StatusCode.UNAVAILABLE and all(
        words in details for words in ("failed to connect", "Socket closed")
    )
    if not (closed_while_connecting and credentials.tls):
        return None
    if not await closes_after_handshake(address, credentials):
        return None
    if not credentials.client_cert_file:
        return "it most likely requires a client certificate (give --client-certificate and --client-key)"
    source = credentials.sources.get("client_cert_file") or "--client-certificate"
    return (f"it most likely refused the client certificate ({source} {credentials.client_cert_file}): is "
            "it signed by the CA the server trusts (its --client-ca-file)?")


async def closes_after_handshake(
    address: str, credentials: ClientCredentials, *, timeout_s: float = PROBE_TIMEOUT_S
) -> bool:
    """Whether the server at ``address`` (host:port) completes a TLS handshake with ``credentials`` and
    then closes the connection without sending anything, as a server refusing the client does. False
    for anything else, including when the probe cannot be made (a client certificate held only in
    memory: only the API server's own controllers have one, issued by the server itself)."""
    context = _probe_context(credentials)
    if context is None:
        return False
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    writer = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(
                host, int(port), ssl=context, server_hostname=credentials.tls_server_name or host,
            )
            return await reader.read(1) == b""
    except ssl.SSLError as exc:
        # An alert after a completed handshake is a refusal too, said more politely.
        return writer is not None and "ALERT" in (exc.reason or "")
    except (OSError, TimeoutError, ValueError):
        return False
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), timeout_s)


def _probe_context(credentials: ClientCredentials) -> ssl.SSLContext | None:
    """A TLS context presenting the client's own certificate. The server's identity is not checked: gRPC
    has checked it already, and the probe only asks what the server makes of this client."""
    if credentials.client_cert_pem and not credentials.client_cert_file:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])  # gRPC servers speak HTTP/2 only
    if credentials.client_cert_file:
        try:
            context.load_cert_chain(credentials.client_cert_file, credentials.client_key_file)
        except (OSError, ssl.SSLError):
            return None
    return context
