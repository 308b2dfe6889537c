"""Every kind of bad input, through the real CLI and server: each is refused with an error naming what
is wrong, the command exits 1, and nothing at all is applied."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from tests.integration.helpers import MANIFESTS, CliResult, pod_manifest, run_cli, write_yaml

Cli = Callable[..., CliResult]
BAD = MANIFESTS / "bad"


@dataclass(frozen=True)
class BadManifest:
    #: A file of examples/manifests/bad, or documents to write (built for the test's namespace).
    example: str | None
    documents: Callable[[str], list[dict[str, Any]]] | None
    #: Every one of these must appear in stderr.
    expected: tuple[str, ...]


def _pod_with(**changes: Any) -> Callable[[str], list[dict[str, Any]]]:
    def build(namespace: str) -> list[dict[str, Any]]:
        pod = pod_manifest("bad", namespace)
        for dotted, value in changes.items():
            *parents, leaf = dotted.split("__")
            target = pod
            for parent in parents:
                target = target[int(parent)] if parent.isdigit() else target.setdefault(parent, {})
            target[leaf] = value
        return [pod]

    return build


# Refused by podsched apply itself, before it contacts any server.
LOCAL_CASES = {
    "yaml-syntax": BadManifest(
        "syntax-error.yaml", None, ("syntax-error.yaml: document 1: line 9", "YAML syntax error")
    ),
    "unknown-kind": BadManifest(
        "unknown-kind.yaml", None, ('no matches for kind "Deployment" in version "apps/v1"',)
    ),
    "bad-api-version": BadManifest(
        "bad-api-version.yaml", None, ('no matches for kind "Pod" in version "v2"',)
    ),
    "label-value-not-a-string": BadManifest(
        None, _pod_with(metadata__labels={"version": 1}),
        ('metadata.labels[version]: Invalid value: 1: expected a string, got integer (quote it',),
    ),
    "same-object-twice": BadManifest(
        None, lambda namespace: [pod_manifest("twin", namespace), pod_manifest("twin", namespace)],
        ("pod/twin appears twice",),
    ),
}

# Refused by the API server in apply's dry run of every document.
SERVER_CASES = {
    "invalid-name": BadManifest(
        "invalid-name.yaml", None,
        ("Error from server (Invalid)",
         'Pod "Web_Server" is invalid: metadata.name: Invalid value: "Web_Server"'),
    ),
    "bad-quantity": BadManifest(
        "bad-quantity.yaml", None,
        ("Error from server (Invalid)", "spec.containers[0].resources.requests[cpu]", "lots"),
    ),
    "negative-request": BadManifest(
        "negative-request.yaml", None,
        ('spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
         "must be greater than or equal to 0",),
    ),
    "one-bad-document-of-three": BadManifest(
        "mixed.yaml", None, ('Pod "Mixed_Second" is invalid', "nothing was applied"),
    ),
    "unknown-priority-class": BadManifest(
        "unknown-priority-class.yaml", None,
        ("Error from server (Forbidden)", "no PriorityClass with name gold was found"),
    ),
    "podgroup-other-spelling": BadManifest(
        "podgroup-other-spelling.yaml", None,
        ('PodGroup.scheduling.k8s.io "trainers" is invalid: spec.minMember: Forbidden: not a field of '
         "scheduling.k8s.io/v1alpha3 PodGroup",),
    ),
    "bad-label-value": BadManifest(
        None, _pod_with(metadata__labels={"app": "not a valid value!"}),
        ("metadata.labels", "not a valid value!"),
    ),
    "missing-container-name": BadManifest(
        None, _pod_with(spec__containers=[{"image": "busybox"}]),
        ("spec.containers[0].name: Required value",),
    ),
    "oversize-object": BadManifest(
        None, _pod_with(spec__containers__0__env=[{"name": "BLOB", "value": "x" * (1536 * 1024 + 1)}]),
        ("more than the limit of 1572864 bytes",),
    ),
}


def _manifest_path(case: BadManifest, namespace: str, tmp_path: Path) -> str:
    if case.example is not None:
        return str(BAD / case.example)
    assert case.documents is not None
    return write_yaml(tmp_path / "bad.yaml", *case.documents(namespace))


@pytest.mark.parametrize("case", list(LOCAL_CASES.values()), ids=list(LOCAL_CASES))
def test_bad_manifest_is_refused_before_reaching_the_server(case: BadManifest, tmp_path: Path) -> None:
    path = _manifest_path(case, "default", tmp_path)
    good = write_yaml(tmp_path / "good.yaml", pod_manifest("good", "default"))

    # No server listens there: the manifest must be refused before any connection is tried.
    result = run_cli("127.0.0.1:1", "apply", "-f", good, "-f", path)

    assert result.code == 1, result.stdout
    for expected in case.expected:
        assert expected in result.stderr
    assert "Unable to connect" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("case", list(SERVER_CASES.values()), ids=list(SERVER_CASES))
async def test_bad_manifest_is_refused_and_nothing_applied(
    case: BadManifest, cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    path = _manifest_path(case, namespace, tmp_path)
    # A good pod in the same apply: it must not be created either.
    good = write_yaml(tmp_path / "good.yaml", pod_manifest("good", namespace))

    result = cli("apply", "-n", namespace, "-f", good, "-f", path)

    assert result.code == 1, result.stdout
    for expected in case.expected:
        assert expected in result.stderr
    assert result.stdout == ""
    assert (await client.list("Pod", namespace)).items == []


def test_missing_file(tmp_path: Path) -> None:
    result = run_cli("127.0.0.1:1", "apply", "-f", str(tmp_path / "nope.yaml"))
    assert result.code == 1
    assert f'the path "{tmp_path / "nope.yaml"}" does not exist' in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("-l", "tier in (a"), 'invalid label selector "tier in (a"'),
        (("--field-selector", "spec.foo=bar"), "field label not supported: spec.foo"),
        (("--field-selector", "spec.nodeName"), "spec.nodeName"),
    ],
    ids=["label-selector-syntax", "unsupported-field", "field-selector-syntax"],
)
def test_bad_selector(cli: Cli, args: tuple[str, ...], expected: str) -> None:
    result = cli("get", "pods", *args)
    assert result.code == 1
    assert result.stderr.startswith("Error from server (Invalid): ")
    assert expected in result.stderr


def test_bad_name_in_get_and_delete(cli: Cli, namespace: str) -> None:
    missing = cli("delete", "pod", "ghost", "-n", namespace)
    assert missing.code == 1
    assert missing.stderr == 'Error from server (NotFound): pods "ghost" not found\n'
    namespaced_all = cli("get", "pod", "ghost", "-A")
    assert namespaced_all.code == 2
