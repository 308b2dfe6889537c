"""The real kubectl against the HTTP API's discovery and OpenAPI documents: it reads the aggregated
discovery, maps resources and kinds from it, and explains kinds from the OpenAPI v3 documents. The
documents are served as built, at their real paths, by a small aiohttp server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from cluster.apiserver.http.discovery import Discovery
from cluster.apiserver.http.documents import Document
from cluster.apiserver.http.openapi import OpenAPI
from cluster.apiserver.http.served import group_versions
from tests.integration.helpers import parse_table

KUBECTL = "/work/main/.venv/bin/kubectl"
VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.1", "platform": "linux/amd64"}


class DocumentServer:
    """Serves the documents on loopback from a thread of its own, recording each request's path and
    Accept header."""

    def __init__(self) -> None:
        self.discovery = Discovery("127.0.0.1:6443")
        self.openapi = OpenAPI()
        #: (method, path and query, Accept) of every request.
        self.requests: list[tuple[str, str, str]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        accept = request.headers.get("Accept", "")
        self.requests.append((request.method, request.path_qs, accept))
        if request.method != "GET":
            return web.json_response({"kind": "Status", "code": 405}, status=405)
        if request.path == "/version":
            return web.json_response(VERSION)
        document: Document | None
        if request.path.startswith("/openapi/"):
            document = self.openapi.document(request.path)
            if request.path == "/openapi/v2" and "json" not in accept and "*/*" not in accept:
                return web.Response(status=406)
        else:
            document = self.discovery.document(request.path.rstrip("/") or "/", accept)
        if document is None:
            return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
        return web.Response(
            body=document.body, headers={"Content-Type": document.content_type, "ETag": document.etag}
        )

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = runner.addresses[0][1]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(30), "the document server did not start"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


@pytest.fixture(scope="module")
def server() -> Iterator[DocumentServer]:
    documents = DocumentServer()
    documents.start()
    yield documents
    documents.stop()


Kubectl = Callable[..., str]


@pytest.fixture
def kubectl(server: DocumentServer, tmp_path: Path) -> Kubectl:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "podsched", "cluster": {"server": f"http://127.0.0.1:{server.port}"}}],
        "users": [{"name": "podsched", "user": {}}],
        "contexts": [{"name": "podsched", "context": {"cluster": "podsched", "user": "podsched"}}],
        "current-context": "podsched",
    }))

    def run(*args: str) -> str:
        result = subprocess.run(
            [KUBECTL, f"--kubeconfig={kubeconfig}", f"--cache-dir={tmp_path / 'cache'}", *args],
            capture_output=True, text=True, timeout=60, env={"HOME": str(tmp_path)},
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)} failed: {result.stderr}"
        return result.stdout

    return run


def test_api_resources_reads_the_aggregated_discovery(server: DocumentServer, kubectl: Kubectl) -> None:
    server.requests.clear()
    rows = parse_table(kubectl("api-resources", "-o", "wide"))
    served = {(row["NAME"], row["APIVERSION"], row["KIND"], row["NAMESPACED"]) for row in rows}
    # kubectl lists a resource served in several versions of its group once, in the first version listed
    # (client-go's ServerPreferredResources): PodGroup in scheduling.k8s.io/v1alpha3, not v1alpha2.
    first: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for gv in group_versions():
        for resource in gv.resources:
            first.setdefault((gv.group, resource.plural), (
                resource.plural, gv.name, resource.kind, str(resource.namespaced).lower()))
    assert ("podgroups", "scheduling.k8s.io/v1alpha2", "PodGroup", "true") not in first.values()
    assert served == set(first.values())
    pods = next(row for row in rows if row["NAME"] == "pods")
    assert pods["SHORTNAMES"] == "po"
    assert pods["CATEGORIES"] == "all"
    assert pods["VERBS"] == "create,delete,deletecollection,get,list,patch,update,watch"
    # One request each for /api and /apis: the aggregated documents, no per-group-version requests.
    discovery = [path for _, path, _ in server.requests if not path.startswith("/version")]
    assert sorted(path.partition("?")[0] for path in discovery) == ["/api", "/apis"]


def test_explain_pod_spec(kubectl: Kubectl) -> None:
    out = kubectl("explain", "pod.spec")
    assert "KIND:       Pod" in out
    assert "FIELD: spec <PodSpec>" in out
    assert "containers\t<[]Container> -required-" in out
    assert "tolerations\t<[]Toleration>" in out
    assert "terminationGracePeriodSeconds\t<integer>" in out


def test_explain_node_taints(kubectl: Kubectl) -> None:
    out = kubectl("explain", "nodes.spec.taints")
    assert "FIELD: taints <[]Taint>" in out
    assert "effect\t<string> -required-" in out
    assert "key\t<string> -required-" in out
    assert "timeAdded\t<string>" in out


def test_explain_containers_recursively(kubectl: Kubectl) -> None:
    out = kubectl("explain", "pods.spec.containers", "--recursive")
    assert "name\t<string> -required-" in out
    assert "ports\t<[]ContainerPort>" in out
    assert "    containerPort\t<integer> -required-" in out


def test_explain_a_kind_of_a_second_group(kubectl: Kubectl) -> None:
    out = kubectl("explain", "podgroups.scheduling.x-k8s.io.spec")
    assert "GROUP:      scheduling.x-k8s.io" in out
    assert "minMember\t<integer>" in out


def test_kubectl_asks_the_server_to_validate_fields(
    server: DocumentServer, kubectl: Kubectl, tmp_path: Path
) -> None:
    """kubectl sends fieldValidation=Strict only when the OpenAPI v3 PATCH operation of the object's kind
    declares the parameter; else it validates on the client and sends none."""
    manifest = tmp_path / "objects.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: nginx}]\n"
        "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: gang}\n"
        "spec: {minMember: 2}\n"
    )
    server.requests.clear()
    with pytest.raises(AssertionError, match=r"MethodNotAllowed|not allow"):
        kubectl("create", "-f", str(manifest))
    posts = sorted(path for method, path, _ in server.requests if method == "POST")
    assert posts == [
        "/api/v1/namespaces/default/pods?fieldManager=kubectl-create&fieldValidation=Strict",
        "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups"
        "?fieldManager=kubectl-create&fieldValidation=Strict",
    ]
