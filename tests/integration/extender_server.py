"""A scheduler extender for the integration tests, run as its own process: it records what the scheduler
sends and answers as its flags say, so that a test can make an extender turn nodes down, score them,
fail, be slow, trim preemption candidates or bind.

    python -m tests.integration.extender_server --port 0 --record calls.jsonl [behaviour flags]

Once listening it prints ``listening on http://127.0.0.1:PORT`` on stdout (port 0 picks a free one) and
serves every verb at ``/<verb>`` under that URL, whatever the urlPrefix's path: the last path segment
names the operation (``filter``, ``prioritize``, ``preempt``, ``bind``). Every request is appended to the
record file as one JSON line ``{"verb": ..., "path": ..., "body": ...}`` when it arrives (before any
delay), so a test can check what was sent even when the answer comes too late.

Requests are read as kube-scheduler's extender v1 types without JSON tags (Go field names, matched
ignoring case); answers use the Go field names. Only the standard library and, to bind, cluster.client.
Stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cluster.client import Client

#: The message for turned-down nodes unless --message gives one.
DEFAULT_MESSAGE = "turned down by the test extender"
#: How long a bind through the API may take (the scheduler's own httpTimeout is usually shorter).
BIND_TIMEOUT_S = 10.0
#: How often the serving loop checks for shutdown (http.server's default, 0.5 s, is what each stop
#: would wait; every test stops an extender or more).
SHUTDOWN_POLL_S = 0.05


def field(obj: Mapping[str, Any] | None, name: str) -> Any:
    """``obj[name]``, else the value of a key equal to ``name`` ignoring case (Go's rule), else None."""
    if not obj:
        return None
    if name in obj:
        return obj[name]
    return next((value for key, value in obj.items() if key.lower() == name.lower()), None)


class Recorder:
    """Appends one JSON line per request to a file, whole lines only, from any handler thread."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._lock = threading.Lock()

    def add(self, verb: str, path: str, body: Any) -> None:
        if self._path is None:
            return
        line = json.dumps({"verb": verb, "path": path, "body": body}) + "\n"
        with self._lock, self._path.open("a") as out:
            out.write(line)


class Binder:
    """Binds pods through the API from the handler threads: a client living on an event loop of its own."""

    def __init__(self, address: str) -> None:
        self._address = address
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="binder", daemon=True)
        self._thread.start()
        self._client: Client | None = None

    def bind(self, namespace: str, name: str, node: str) -> None:
        future: Future[None] = asyncio.run_coroutine_threadsafe(self._bind(namespace, name, node), self._loop)
        future.result(BIND_TIMEOUT_S)

    async def _bind(self, namespace: str, name: str, node: str) -> None:
        if self._client is None:
            self._client = Client(self._address, timeout_s=BIND_TIMEOUT_S)
        await self._client.bind(namespace, name, node)

    def close(self) -> None:
        if self._client is not None:
            asyncio.run_coroutine_threadsafe(self._client.close(), self._loop).result(BIND_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(BIND_TIMEOUT_S)


class Behaviour:
    """What the flags asked for, and the answers that follow from it."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.delay_s: float = options.delay
        self.status: int = options.status
        self.error: str = options.error
        self.failed: set[str] = set(options.fail)
        self.unresolvable: set[str] = set(options.unresolvable)
        self.message: str = options.message
        self.scores: dict[str, int] = dict(_score(text) for text in options.score)
        self.dropped: set[str] = set(options.drop)
        self.binder = Binder(options.api) if options.api else None
        self._refusals_left: int = options.refuse_binds
        self._lock = threading.Lock()

    def filter(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Turn down the --fail and --unresolvable nodes; answer in the form the nodes came in (names
        for a nodeCacheCapable extender, else the Node objects)."""
        names = self._names(args)
        turned_down = self.failed | self.unresolvable
        result: dict[str, Any] = {
            "Nodes": None, "NodeNames": None,
            "FailedNodes": {name: self.message for name in names if name in self.failed},
            "FailedAndUnresolvableNodes": {name: self.message for name in names if name in self.unresolvable},
            "Error": self.error,
        }
        nodes = field(args, "Nodes")
        if nodes is not None:
            kept = [node for node in field(nodes, "items") or [] if _name(node) not in turned_down]
            result["Nodes"] = {"metadata": {}, "items": kept}
        else:
            result["NodeNames"] = [name for name in names if name not in turned_down]
        return result

    def prioritize(self, args: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{"Host": name, "Score": self.scores.get(name, 0)} for name in self._names(args)]

    def preempt(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The candidates less the --drop nodes, each with its victims as UIDs (MetaVictims)."""
        victims = field(args, "NodeNameToVictims") or field(args, "NodeNameToMetaVictims") or {}
        kept = {}
        for node, node_victims in victims.items():
            if node in self.dropped:
                continue
            pods = field(node_victims, "Pods") or []
            uids = [{"UID": field(pod, "UID") or (pod.get("metadata") or {}).get("uid", "")} for pod in pods]
            kept[node] = {"Pods": uids, "NumPDBViolations": field(node_victims, "NumPDBViolations") or 0}
        return {"NodeNameToMetaVictims": kept}

    def bind(self, args: Mapping[str, Any]) -> dict[str, str]:
        with self._lock:
            refuse = self._refusals_left > 0
            self._refusals_left -= refuse
        if refuse or self.error:
            return {"Error": self.error or "the test extender refuses this bind"}
        if self.binder is None:
            return {"Error": "the test extender was started without --api: it cannot bind"}
        try:
            self.binder.bind(field(args, "PodNamespace"), field(args, "PodName"), field(args, "Node"))
        except Exception as exc:  # the scheduler is told why, as a real extender would tell it
            return {"Error": f"bind failed: {exc}"}
        return {"Error": ""}

    @staticmethod
    def _names(args: Mapping[str, Any]) -> list[str]:
        nodes = field(args, "Nodes")
        if nodes is not None:
            return [_name(node) for node in field(nodes, "items") or []]
        return list(field(args, "NodeNames") or [])


def _name(node: Mapping[str, Any]) -> str:
    return (node.get("metadata") or {}).get("name", "")


def _score(text: str) -> tuple[str, int]:
    node, _, score = text.partition("=")
    return node, int(score)


def handler_class(behaviour: Behaviour, recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    verbs = {"filter": behaviour.filter, "prioritize": behaviour.prioritize, "preempt": behaviour.preempt,
             "bind": behaviour.bind}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            verb = self.path.rstrip("/").rsplit("/", 1)[-1]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            recorder.add(verb, self.path, body)
            if behaviour.delay_s:
                time.sleep(behaviour.delay_s)
            if behaviour.status != HTTPStatus.OK:
                self._answer(behaviour.status, {"error": f"the test extender answers {behaviour.status}"})
            elif verb not in verbs:
                self._answer(HTTPStatus.NOT_FOUND, {"error": f"no verb {verb!r}"})
            else:
                self._answer(HTTPStatus.OK, verbs[verb](body))

        def _answer(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the scheduler gave up waiting (httpTimeout): that is what a slow extender tests

    return Handler


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A configurable scheduler extender for tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", type=Path, help="append each request as a JSON line to this file")
    parser.add_argument("--delay", type=float, default=0.0, help="sleep this long before every answer")
    parser.add_argument("--status", type=int, default=HTTPStatus.OK, help="answer every call with it")
    parser.add_argument("--error", default="", help="the Error field of filter and bind answers")
    parser.add_argument("--fail", action="append", default=[], metavar="NODE",
                        help="filter: turn NODE down (FailedNodes)")
    parser.add_argument("--unresolvable", action="append", default=[], metavar="NODE",
                        help="filter: turn NODE down for good (FailedAndUnresolvableNodes)")
    parser.add_argument("--message", default=DEFAULT_MESSAGE, help="filter: why nodes are turned down")
    parser.add_argument("--score", action="append", default=[], metavar="NODE=N",
                        help="prioritize: NODE scores N (every other node 0)")
    parser.add_argument("--drop", action="append", default=[], metavar="NODE",
                        help="preempt: take NODE out of the candidates")
    parser.add_argument("--api", default="", metavar="ADDRESS", help="bind: bind through this API server")
    parser.add_argument("--refuse-binds", type=int, default=0, metavar="N",
                        help="bind: answer the first N calls with an Error, bind from then on")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    behaviour = Behaviour(options)
    handler = handler_class(behaviour, Recorder(options.record))
    server = ThreadingHTTPServer((options.host, options.port), handler)
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    serving = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_S,), name="serve")
    serving.start()
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    stopping.wait()
    server.shutdown()
    serving.join()
    server.server_close()
    if behaviour.binder is not None:
        behaviour.binder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
