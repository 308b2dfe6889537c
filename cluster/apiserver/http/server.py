"""The HTTP API's listener: aiohttp on ``--http-listen``, HTTPS with the gRPC listener's certificate and
key when the server has them, and then, with a client CA, requiring a client certificate from that CA
exactly as the gRPC listener does (bearer tokens ride on that connection as on gRPC's)."""

from __future__ import annotations

import ssl

from aiohttp import web

from cluster.apiserver.http.app import HttpApi

#: Seconds a stopping server gives open requests (watches end on their own when the server stops).
SHUTDOWN_TIMEOUT_S = 5.0


def server_ssl_context(cert_file: str, key_file: str, client_ca_file: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    if client_ca_file is not None:
        context.load_verify_locations(cafile=client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


class HttpServer:
    def __init__(self, api: HttpApi, listen: str, tls: ssl.SSLContext | None) -> None:
        self._api = api
        self._listen = listen
        self._tls = tls
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def scheme(self) -> str:
        return "https" if self._tls is not None else "http"

    async def start(self) -> int:
        host, _, port = self._listen.rpartition(":")
        runner = web.AppRunner(self._api.application(self._listen), access_log=None,
                               shutdown_timeout=SHUTDOWN_TIMEOUT_S, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, host.strip("[]"), int(port), ssl_context=self._tls, reuse_port=False)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise OSError(f"cannot serve the HTTP API on {self._listen}: {exc}") from exc
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
