"""Nasty files through `podsched apply -f` as a process: an alias bomb, deep nesting, binary data,
an enormous integer, and an object past the server's size limit. Each is refused with exit code 1 and a
message naming the file and what is wrong (never a crash or a signal), and nothing is applied."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import pod_manifest, run_cli


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    # The refusals happen in apply or in the server's validation, the same on every store.
    directory = tmp_path_factory.mktemp("fuzz-apply")
    bare = ["--controllers", "none"]
    with own_apiserver("sqlite", directory, name_prefix="apply", extra_args=bare) as process:
        yield process


def _alias_bomb(namespace: str) -> bytes:
    env = ", ".join(["*e"] * 1000)
    containers = ", ".join(["*c"] * 300)
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: bomb, namespace: {namespace}}}\n"
        f"x: &e {{name: x, value: y}}\ny: &c {{name: a, image: b, env: [{env}]}}\n"
        f"spec: {{containers: [{containers}]}}\n"
    ).encode()


def _deep(namespace: str) -> bytes:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: deep, namespace: {namespace}}}\n"
            "spec: " + "[" * 200_000 + "]" * 200_000 + "\n").encode()


def _binary(namespace: str) -> bytes:
    return b"apiVersion: v1\nkind: Pod\n" + os.urandom(4096) + b"\xff\xfe"


def _huge_integer(namespace: str) -> bytes:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: big, namespace: {namespace}}}\n"
            f"spec: {{priority: {'9' * 10_000}}}\n").encode()


def _too_big_object(namespace: str) -> bytes:
    pod = pod_manifest("huge", namespace)
    pod["spec"]["containers"][0]["env"] = [{"name": f"V{i}", "value": "x" * 100_000} for i in range(20)]
    return yaml.safe_dump(pod).encode()


CASES: dict[str, tuple[Callable[[str], bytes], str]] = {
    "alias-bomb": (_alias_bomb, "document too large: more than 200000 values"),
    "deep-nesting": (_deep, "line 4: more than 100 levels of nested [ ] or { } (the limit)"),
    "binary": (_binary, "not UTF-8 text"),
    "huge-integer": (_huge_integer, "document 1: cannot be read: Exceeds the limit (4300 digits)"),
    "past-the-object-size-limit": (_too_big_object, "more than the limit of 1572864 bytes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_nasty_file_is_refused_naming_it_and_nothing_is_applied(
    server: ApiServerProcess, namespace: str, tmp_path: Path, case: str
) -> None:
    build, expected = CASES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_bytes(build(namespace))
    result = run_cli(server.address, "apply", "-f", str(path))
    assert result.code == 1, result
    assert str(path) in result.stderr
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    listed = run_cli(server.address, "get", "pods", "-n", namespace, "-o", "name")
    assert (listed.code, listed.stdout) == (0, "")
