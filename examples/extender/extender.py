"""A scheduler extender (KEP-1819) for GPU nodes, in plain Python: the standard library and nothing else.

The scheduler POSTs JSON to ``<urlPrefix>/<verb>``; this server answers two verbs:

* ``filter``: a pod that requests the extended resource ``nvidia.com/gpu`` (in the requests or limits of
  any container or init container) may only run on nodes labelled ``example.com/gpu=true``; the others
  are turned down as *failed and unresolvable* (evicting pods cannot add a label, so preemption need not
  try those nodes). Pods without GPUs pass everywhere.
* ``prioritize``: every node scores the integer value of its label ``example.com/speed``, clamped to the
  extender API's range 0..10 (a missing or non-numeric label scores 0). The scheduler multiplies it by
  the configured weight and by 10 (to its own 0..100 node scores) and adds it to the plugins' total.

The wire format is kube-scheduler's (k8s.io/kube-scheduler/extender/v1). Those Go types have no JSON tags,
so kube-scheduler sends the Go field names ("Pod", "Nodes", "NodeNames") and reads answers without
regard to case; this server reads requests the same way (``field``) and answers with the Go names. Pods
and nodes are Kubernetes JSON (``metadata.labels``, ``spec.containers[].resources``).

It needs the nodes themselves, so it supports ``nodeCacheCapable: false`` only (the default): a
node-cache-capable extender gets node names alone and keeps its own copy of the nodes from the API.

Run it, then point the scheduler at it (``scheduler-config.yaml``; README.md walks through it)::

    python3 examples/extender/extender.py --port 8888
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
GPU_LABEL = "example.com/gpu"
SPEED_LABEL = "example.com/speed"
#: The extender API's score range (MaxExtenderPriority is 10).
MIN_SCORE, MAX_SCORE = 0, 10
NO_GPU = f"node has no GPU (label {GPU_LABEL}=true missing)"
#: The path every verb hangs off: the scheduler config's urlPrefix ends with it.
PREFIX = "/scheduler"


def field(obj: Mapping[str, Any], name: str) -> Any:
    """``obj[name]``, else the value of a key equal to ``name`` ignoring case (as Go's encoding/json
    matches fields), else None."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    return next((value for key, value in obj.items() if key.lower() == lowered), None)


def wants_gpu(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    for container in containers:
        resources = container.get("resources") or {}
        for amounts in (resources.get("requests") or {}, resources.get("limits") or {}):
            # Extended resources are whole numbers; "0" asks for none.
            if str(amounts.get(GPU_RESOURCE, "0")).strip() not in ("0", ""):
                return True
    return False


def labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def node_name(node: Mapping[str, Any]) -> str:
    return (node.get("metadata") or {}).get("name", "")


def speed(node: Mapping[str, Any]) -> int:
    try:
        value = int(labels(node).get(SPEED_LABEL, MIN_SCORE))
    except ValueError:
        return MIN_SCORE
    return max(MIN_SCORE, min(MAX_SCORE, value))


def nodes_of(args: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The nodes of an ExtenderArgs; None when only names were sent (nodeCacheCapable: true)."""
    nodes = field(args, "Nodes")
    return None if nodes is None else list(field(nodes, "items") or [])


NAMES_ONLY = "this extender needs the nodes themselves: configure it with nodeCacheCapable: false"


def filter_nodes(args: Mapping[str, Any]) -> dict[str, Any]:
    """An ExtenderFilterResult for an ExtenderArgs."""
    nodes = nodes_of(args)
    if nodes is None:
        return {"Nodes": None, "NodeNames": None, "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                "Error": NAMES_ONLY}
    kept, turned_down = nodes, {}
    if wants_gpu(field(args, "Pod") or {}):
        kept = [node for node in nodes if labels(node).get(GPU_LABEL) == "true"]
        turned_down = {node_name(node): NO_GPU for node in nodes if labels(node).get(GPU_LABEL) != "true"}
    return {"Nodes": {"metadata": {}, "items": kept}, "NodeNames": None, "FailedNodes": {},
            "FailedAndUnresolvableNodes": turned_down, "Error": ""}


def prioritize_nodes(args: Mapping[str, Any]) -> list[dict[str, Any]] | dict[str, str]:
    """A HostPriorityList for an ExtenderArgs (that list has no error field: an error is answered as
    HTTP 400, which the scheduler logs and ignores)."""
    nodes = nodes_of(args)
    if nodes is None:
        return {"error": NAMES_ONLY}
    return [{"Host": node_name(node), "Score": speed(node)} for node in nodes]


VERBS = {f"{PREFIX}/filter": filter_nodes, f"{PREFIX}/prioritize": prioritize_nodes}


class Handler(BaseHTTPRequestHandler):
    server_version = "gpu-extender/1"

    def do_POST(self) -> None:
        verb = VERBS.get(self.path.rstrip("/"))
        if verb is None:
            self.answer(HTTPStatus.NOT_FOUND, {"error": f"no verb at {self.path}; try {', '.join(VERBS)}"})
            return
        try:
            args = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except (ValueError, UnicodeDecodeError) as exc:
            self.answer(HTTPStatus.BAD_REQUEST, {"error": f"the body is not JSON: {exc}"})
            return
        answer = verb(args)
        status = HTTPStatus.BAD_REQUEST if isinstance(answer, dict) and "error" in answer else HTTPStatus.OK
        self.answer(status, answer)
        self.log_call(args, answer)

    def answer(self, status: HTTPStatus, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_call(self, args: Mapping[str, Any], answer: Any) -> None:
        """One line per call: which pod, and what this extender said about which node."""
        metadata = (field(args, "Pod") or {}).get("metadata") or {}
        pod = f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"
        if isinstance(answer, list):
            said = ", ".join(f"{p['Host']}={p['Score']}" for p in answer)
        elif answer.get("Error") or answer.get("error"):
            said = f"error: {answer.get('Error') or answer.get('error')}"
        else:
            kept = ", ".join(node_name(node) for node in answer["Nodes"]["items"])
            said = f"kept [{kept}], turned down [{', '.join(answer['FailedAndUnresolvableNodes'])}]"
        sys.stderr.write(f"{self.path.rsplit('/', 1)[-1]} {pod}: {said}\n")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Only requests that failed: ``log_call`` tells the rest better."""
        if isinstance(code, int) and code >= HTTPStatus.BAD_REQUEST:
            super().log_request(code, size)


def serve(host: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT, then finish the calls in flight and return."""
    server = ThreadingHTTPServer((host, port), Handler)
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    # serve_forever runs in a thread: shutdown() waits for it, so it cannot be called from the serving one.
    serving = threading.Thread(target=server.serve_forever, name="serve")
    serving.start()
    bound_host, bound_port = server.server_address[:2]
    sys.stderr.write(f"gpu extender listening on http://{bound_host}:{bound_port}{PREFIX}\n")
    sys.stderr.flush()
    stopping.wait()
    server.shutdown()
    serving.join()
    server.server_close()
    sys.stderr.write("gpu extender stopped\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8888, help="port to listen on; 0 picks a free one")
    options = parser.parse_args(argv)
    serve(options.host, options.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
