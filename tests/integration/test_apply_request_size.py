"""`podsched apply` and the one request size limit (cluster.api.limits): a document whose request would
pass it is the client's own error, naming the file and the document, and nothing is applied; a document
exactly at the limit reaches the server, which answers it (here: the object is too large to store).

Each file is written once at its exact size: the padding is worked out on a small copy of the document
loaded as `podsched apply` loads it, since parsing 16 MiB of YAML takes seconds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.api.limits import MAX_REQUEST_BYTES
from cluster.api.manifest import load_text
from cluster.client import object_request_bytes
from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import pod_manifest, run_cli


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("request-size")
    with own_apiserver("sqlite", directory, extra_args=["--controllers", "none"]) as process:
        yield process


def padded_pod(name: str, request_bytes: int) -> dict[str, Any]:
    """A pod manifest whose Create request, as `podsched apply` builds it, is ``request_bytes`` long."""
    document = pod_manifest(name, "default")
    document["metadata"]["annotations"] = {"blob": ""}
    obj = load_text(yaml.safe_dump(document), source="padding").pop().obj
    blob = 0
    # The length prefixes grow by a few bytes with the first padding, so measure again.
    for _ in range(3):
        obj.metadata.annotations["blob"] = "x" * blob  # type: ignore[attr-defined]
        blob += request_bytes - object_request_bytes(obj)
    assert object_request_bytes(obj) == request_bytes
    document["metadata"]["annotations"]["blob"] = "x" * blob
    return document


def dump_all(*documents: dict[str, Any]) -> str:
    """YAML with libyaml's emitter: PyYAML's own takes most of a minute over 16 MiB."""
    return yaml.dump_all(documents, Dumper=yaml.CSafeDumper)


def pods(server: ApiServerProcess) -> str:
    listed = run_cli(server.address, "get", "pods", "-o", "name")
    assert listed.code == 0, listed.stderr
    return listed.stdout


def test_a_document_past_the_limit_is_refused_by_the_client_naming_file_and_document(
    server: ApiServerProcess, tmp_path: Path
) -> None:
    manifest = tmp_path / "big.yaml"
    manifest.write_text(dump_all(pod_manifest("small", "default"), padded_pod("big", MAX_REQUEST_BYTES + 1)))

    result = run_cli(server.address, "apply", "-f", str(manifest))

    assert result.code == 1
    assert result.stderr == (
        f'error: "{manifest}" (document 2): Pod "big" makes a request of {MAX_REQUEST_BYTES + 1} bytes, more '
        f"than the {MAX_REQUEST_BYTES} bytes (16 MiB) an API server reads\n"
        "error: nothing was applied\n"
    )
    assert pods(server) == ""


def test_a_document_at_the_limit_reaches_the_server(server: ApiServerProcess, tmp_path: Path) -> None:
    manifest = tmp_path / "at.yaml"
    manifest.write_text(dump_all(padded_pod("at", MAX_REQUEST_BYTES)))

    result = run_cli(server.address, "apply", "-f", str(manifest))

    # The server read it and judged the object: far past what an object may be.
    assert result.code == 1
    assert result.stderr.startswith(
        f'Error from server (Invalid): error when creating "{manifest}" (document 1): Pod "at" is invalid: '
        "metadata.annotations: Too long: must have at most 262144 bytes"
    ), result.stderr
    assert pods(server) == ""
