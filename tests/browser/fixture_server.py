"""A stand-in for `podsched ui` that the page's own browser tests drive (test code, not product code).

It serves ``cluster/ui/static`` and the wire contract's endpoints (docs/ui.md) from a view-model dict the test
controls: ``push(delta)`` applies a delta to that state and sends it to every open stream, ``drop_streams()``
ends them (optionally refusing new ones until ``accept_streams()``), so the page can be tested without an API
server. It runs its own event loop in a thread: Selenium's calls block, the tests are synchronous.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

STATIC_DIR = Path(__file__).resolve().parents[2] / "cluster" / "ui" / "static"
STATIC_FILES = frozenset({"app.js", "app.css"})
MAX_EVENTS = 200
COLLECTIONS = ("nodes", "pods", "pdbs", "podGroups")

ViewModel = dict[str, Any]


class FixtureServer:
    def __init__(self, state: ViewModel, details: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.state = copy.deepcopy(state)
        # Pod key -> the /api/pods/{ns}/{name} answer; other pods get a minimal answer built from state.
        self.details: dict[str, dict[str, Any]] = dict(details or {})
        self.refusing = False
        self._streams: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fixture-ui-server", daemon=True)
        self._runner: web.AppRunner | None = None
        self.url = ""

    # --- lifecycle (called from the test's thread) ---

    def start(self) -> None:
        self._thread.start()
        self.url = self._call(self._start())

    def stop(self) -> None:
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    # --- what the test controls ---

    def push(self, delta: dict[str, Any]) -> None:
        """Apply ``delta`` to the state (a reconnecting page's snapshot has it), send it to every stream."""
        self._call(self._push(copy.deepcopy(delta)))

    def reset(self, state: ViewModel, details: Mapping[str, dict[str, Any]] | None = None) -> None:
        """Serve ``state`` (and ``details``) from now on, accepting streams; open streams end."""
        self._call(self._reset(copy.deepcopy(state), dict(details or {})))

    def set_details(self, key: str, answer: dict[str, Any]) -> None:
        """What /api/pods/{ns}/{name} answers for ``key`` from now on (besides the pod itself)."""
        self._call(self._set_details(key, copy.deepcopy(answer)))

    def drop_streams(self, refuse: bool = False) -> None:
        """End every open stream; with ``refuse``, answer 503 to new ones until ``accept_streams``."""
        self._call(self._drop(refuse))

    def accept_streams(self) -> None:
        self._call(self._set_refusing(False))

    def stream_count(self) -> int:
        return self._call(self._count())

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    # --- in the server's loop ---

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{file}", self._static)
        app.router.add_get("/api/state", self._state)
        app.router.add_get("/api/stream", self._stream)
        app.router.add_get("/api/pods/{namespace}/{name}", self._pod)
        app.router.add_get("/healthz", self._healthz)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        # Port 0: the OS picks a free port, no probing race.
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    async def _stop(self) -> None:
        await self._drop(refuse=True)
        if self._runner is not None:
            await self._runner.cleanup()

    async def _push(self, delta: dict[str, Any]) -> None:
        apply_delta(self.state, delta)
        for queue in self._streams:
            queue.put_nowait(delta)

    async def _reset(self, state: ViewModel, details: dict[str, dict[str, Any]]) -> None:
        self.state = state
        self.details = details
        await self._drop(refuse=False)

    async def _set_details(self, key: str, answer: dict[str, Any]) -> None:
        self.details[key] = answer

    async def _drop(self, refuse: bool) -> None:
        self.refusing = refuse
        for queue in self._streams:
            queue.put_nowait(None)

    async def _set_refusing(self, refusing: bool) -> None:
        self.refusing = refusing

    async def _count(self) -> int:
        return len(self._streams)

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC_DIR / "index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["file"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.FileResponse(STATIC_DIR / name)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response(self.state)

    async def _pod(self, request: web.Request) -> web.Response:
        key = f"{request.match_info['namespace']}/{request.match_info['name']}"
        pod = self.state["pods"].get(key)
        if pod is None:
            return web.json_response({"error": f"pod {key} not found"}, status=404)
        answer = {
            "labels": {},
            "tolerations": [],
            "nodeSelector": {},
            "containers": [],
            "explanation": "",
            "groupAttempt": [],
            "events": [],
        }
        answer.update(self.details.get(key, {}))
        answer["pod"] = pod
        return web.json_response(answer)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        if self.refusing:
            return web.json_response({"error": "stream refused by the test"}, status=503)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._streams.add(queue)
        try:
            await response.write(sse("snapshot", self.state))
            while (delta := await queue.get()) is not None:
                await response.write(sse("delta", delta))
        except ConnectionResetError:
            pass  # the page went away
        finally:
            self._streams.discard(queue)
        return response


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def apply_delta(state: ViewModel, delta: Mapping[str, Any]) -> None:
    """The contract's delta semantics, applied to a view model (what the page does in app.js)."""
    state["revision"] = delta.get("revision", state["revision"])
    for collection in COLLECTIONS:
        change = delta.get(collection)
        if not change:
            continue
        for key in change.get("remove", []):
            state[collection].pop(key, None)
        state[collection].update(change.get("upsert", {}))
    for whole in ("leadership", "apiServer"):
        if whole in delta:
            state[whole] = delta[whole]
    state["events"] = (state["events"] + list(delta.get("events", [])))[-MAX_EVENTS:]
    if "summary" in delta:
        state["summary"] = delta["summary"]
