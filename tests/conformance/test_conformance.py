"""Conformance: every scenario of ``cases/`` through the real ``podsched simulate`` command.

A case is ``cases/NAME.yaml`` (the scenario, with a comment saying which documented Kubernetes
behaviour it shows), ``cases/NAME.expect.json`` (docs/scenario-format.md's expectations: for each pod's
"namespace/name", the keys to check, and under "podGroups" the same for PodGroups) and, optionally,
``cases/NAME.config.yaml`` (a KubeSchedulerConfiguration passed with ``--config``). Only the listed keys
are checked; ``"node": null`` also requires the pod not to be deleted. Each case runs the real
``podsched simulate`` command (``cluster.cli.main``) in this process, so the cases share one import of
the API server and the scheduler (a process each would spend most of its time importing them);
``test_a_case_runs_the_same_as_its_own_process`` checks that a case run as its own
``python -m cluster.cli simulate`` process, as a user runs it, prints exactly the same. A failure prints
the case, what was expected and what came out.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
#: One case is a few hundred virtual seconds at most; real time is well under a second or two.
CASE_TIMEOUT_S = 60.0


def _case_names() -> list[str]:
    names = sorted(
        path.name.removesuffix(".yaml")
        for path in CASES.glob("*.yaml")
        if not path.name.endswith(".config.yaml")
    )
    assert names, f"no conformance cases in {CASES}"
    return names


def _arguments(name: str) -> list[str]:
    arguments = ["simulate", "-f", str(CASES / f"{name}.yaml"), "-o", "json",
                 "--timeout", str(CASE_TIMEOUT_S)]
    config = CASES / f"{name}.config.yaml"
    if config.exists():
        arguments += ["--config", str(config)]
    return arguments


def _simulate(name: str) -> tuple[dict[str, Any], str]:
    from cluster.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(_arguments(name))
    assert code == 0, f"case {name}: podsched simulate exited {code}:\n{err.getvalue()}"
    return json.loads(out.getvalue()), err.getvalue()


def test_a_case_runs_the_same_as_its_own_process() -> None:
    name = "gang_fits_bound_whole"
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", *_arguments(name)], capture_output=True, text=True,
        cwd=REPO, timeout=CASE_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    result, _ = _simulate(name)
    assert json.loads(done.stdout) == result


#: The key of an expectation file that holds PodGroup expectations (pod keys are "namespace/name").
POD_GROUPS = "podGroups"


def mismatches(expected: dict[str, dict[str, Any]], pods: list[dict[str, Any]]) -> list[str]:
    """What differs between the pod expectations and the result's pods, one line per difference."""
    checks = {}
    for key, wanted in expected.items():
        checks[key] = dict(wanted)
        if "node" in wanted and wanted["node"] is None:
            checks[key].setdefault("deleted", False)
    return _differences(checks, pods, "")


def group_mismatches(expected: dict[str, dict[str, Any]], groups: list[dict[str, Any]]) -> list[str]:
    """What differs between the PodGroup expectations and the result's podGroups."""
    return _differences(expected, groups, "podGroup ")


def _differences(expected: dict[str, dict[str, Any]], actual: list[dict[str, Any]], what: str) -> list[str]:
    by_key = {f"{item['namespace']}/{item['name']}": item for item in actual}
    problems = []
    for key, wanted in expected.items():
        found = by_key.get(key)
        if found is None:
            problems.append(f"{what}{key}: not in the result")
            continue
        for field, value in wanted.items():
            if not matches(value, found.get(field)):
                problems.append(f"{what}{key}: {field} is {found.get(field)!r}, expected {value!r}")
    return problems


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` is ``expected``, where an expected object checks only the keys it lists and an
    expected list checks every item in order (a pod's ``claims``: their devices without the shareID a
    shared device gets at random, say)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and matches(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(matches(want, got) for want, got in zip(expected, actual, strict=True)))
    return bool(expected == actual)


@pytest.mark.parametrize("name", _case_names())
def test_case(name: str) -> None:
    expect_path = CASES / f"{name}.expect.json"
    assert expect_path.exists(), f"case {name} has no {expect_path.name}"
    expected = json.loads(expect_path.read_text())
    result, stderr = _simulate(name)
    pods = {key: wanted for key, wanted in expected.items() if key != POD_GROUPS}
    problems = mismatches(pods, result["pods"])
    problems += group_mismatches(expected.get(POD_GROUPS, {}), result.get("podGroups", []))
    assert not problems, (
        f"case {name} ({CASES / name}.yaml):\n  " + "\n  ".join(problems)
        + f"\nexpected:\n{json.dumps(expected, indent=2)}\nactual:\n{json.dumps(result, indent=2)}"
        + (f"\nstderr:\n{stderr}" if stderr else "")
    )


@pytest.mark.parametrize(
    ("expected", "pods", "problems"),
    [
        ({"default/a": {"node": "n1"}},
         [{"namespace": "default", "name": "a", "node": "n1", "deleted": False}], []),
        ({"default/a": {"node": None}},
         [{"namespace": "default", "name": "a", "node": None, "deleted": True}],
         ["default/a: deleted is True, expected False"]),
        ({"default/a": {"deleted": True}},
         [{"namespace": "default", "name": "a", "node": "n1", "deleted": True}], []),
        ({"default/b": {"node": "n1"}}, [], ["default/b: not in the result"]),
        ({"default/a": {"reason": "x"}},
         [{"namespace": "default", "name": "a", "reason": None}],
         ["default/a: reason is None, expected 'x'"]),
        ({"default/a": {"claims": [{"name": "gpu", "devices": [{"device": "gpu-1"}]}]}},
         [{"namespace": "default", "name": "a", "claims": [
             {"name": "gpu", "resourceClaim": "a-gpu-x", "devices": [{"device": "gpu-1", "shareID": "9"}]}]}],
         []),
        ({"default/a": {"claims": [{"devices": [{"device": "gpu-1"}]}]}},
         [{"namespace": "default", "name": "a",
           "claims": [{"devices": [{"device": "gpu-1"}, {"device": "gpu-0"}]}]}],
         ["default/a: claims is [{'devices': [{'device': 'gpu-1'}, {'device': 'gpu-0'}]}], expected "
          "[{'devices': [{'device': 'gpu-1'}]}]"]),
    ],
    ids=["match", "null-node-means-not-deleted", "deleted-victim", "missing-pod", "reason",
         "claims-listed-keys", "claims-every-device"],
)
def test_mismatches(expected: dict[str, Any], pods: list[dict[str, Any]], problems: list[str]) -> None:
    assert mismatches(expected, pods) == problems


@pytest.mark.parametrize(
    ("expected", "groups", "problems"),
    [
        ({"default/g": {"bound": 3, "admitted": True}},
         [{"namespace": "default", "name": "g", "bound": 3, "admitted": True, "reason": None}], []),
        ({"default/g": {"admitted": False, "reason": "x"}},
         [{"namespace": "default", "name": "g", "admitted": False, "reason": "y"}],
         ["podGroup default/g: reason is 'y', expected 'x'"]),
        ({"default/h": {"bound": 0}}, [], ["podGroup default/h: not in the result"]),
    ],
    ids=["match", "reason", "missing-group"],
)
def test_group_mismatches(
    expected: dict[str, Any], groups: list[dict[str, Any]], problems: list[str]
) -> None:
    assert group_mismatches(expected, groups) == problems
