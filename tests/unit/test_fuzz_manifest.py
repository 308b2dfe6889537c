"""Hostile YAML and JSON through the manifest loader: whatever the text, loading returns objects
or raises one ManifestError whose every problem names the source, never another exception, and never
takes the process down. Random data shaped like manifests (real kinds, random fields and values),
valid manifests with random overlays, valid YAML text with characters changed, and arbitrary text.

Each ``@example`` once crashed the loader."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cluster.api import kinds
from cluster.api.manifest import MAX_FLOW_NESTING, MAX_VALUES_PER_DOCUMENT, ManifestError, load_text

SOURCE = "fuzz.yaml"
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [{"name": "app", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}],
        }}},
    },
}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web"},
    "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
}
VALID = (POD, PDB)

_KEYS = st.sampled_from([
    "apiVersion", "kind", "metadata", "name", "labels", "spec", "status", "containers", "items",
    "resources", "requests", "minAvailable", "nodeSelector", "tolerations", "value", "creationTimestamp",
    "priority", "generation", "terminationGracePeriodSeconds", "<<", "",
]) | st.text(max_size=8)

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["v1", "Pod", "List", "PodList", "policy/v1", "2024-01-01T00:00:00Z", "1e400", "50%"]),
)

_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=5),
    max_leaves=25,
)

_MANIFEST_SHAPED = st.fixed_dictionaries(
    {"apiVersion": st.sampled_from(["v1", "policy/v1", "scheduling.k8s.io/v1", "coordination.k8s.io/v1"]),
     "kind": st.sampled_from([kind.name for kind in kinds.KINDS] + ["List", "PodList", "Deployment"])},
    optional={"metadata": _VALUES, "spec": _VALUES, "status": _VALUES, "items": _VALUES, "value": _VALUES},
)


def _overlaid(base: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with ``value`` at ``path`` (missing levels created, non-mappings replaced)."""
    result: dict[str, Any] = json.loads(json.dumps(base))
    target = result
    for key in path[:-1]:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
    target[path[-1]] = value
    return result


_PATHS = st.lists(st.sampled_from(["metadata", "spec", "labels", "containers", "name", "minAvailable",
                                   "selector", "resources", "requests", "affinity", "x"]), min_size=1,
                  max_size=4)
_MUTATED = st.builds(_overlaid, st.sampled_from(VALID), _PATHS, _VALUES)


def _dump(data: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(data, allow_nan=True)
    return yaml.safe_dump(data, allow_unicode=True)


def _damaged(text: str, edits: list[tuple[int, str]]) -> str:
    for position, replacement in edits:
        position %= max(len(text), 1)
        text = text[:position] + replacement + text[position + 1:]
    return text


_TEXTS = st.one_of(
    st.builds(_dump, _MANIFEST_SHAPED | _MUTATED | _VALUES, st.booleans()),
    st.builds(
        _damaged,
        st.sampled_from(VALID).map(lambda doc: yaml.safe_dump(doc)),
        st.lists(st.tuples(st.integers(0, 2000), st.sampled_from(
            [":", "-", " ", "\n", "[", "{", "&a ", "*a", "!!binary ", "'", '"', "\t", "\x00", "#", "---\n"]
        ) | st.text(max_size=3)), min_size=1, max_size=4),
    ),
    st.text(max_size=300),
)


def _load(text: str) -> None:
    try:
        manifests = load_text(text, source=SOURCE)
    except ManifestError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert problem.startswith(f"{SOURCE}: "), problem
        return
    for manifest in manifests:
        assert manifest.obj.DESCRIPTOR is manifest.kind.message.DESCRIPTOR


@FUZZ
@given(text=_TEXTS)
# libyaml's composer recursed once per "[" and the process died of a segmentation fault.
@example(text="a: " + "[" * 100_000 + "]" * 100_000)
# The json module raised RecursionError.
@example(text="[" * 5_000 + "]" * 5_000)
# An integer of more than 4300 digits raised ValueError from int().
@example(text="apiVersion: v1\nkind: Pod\nmetadata: {name: x, generation: " + "9" * 5000 + "}\n")
@example(text='{"apiVersion": "v1", "kind": "Pod", "metadata": {"generation": ' + "9" * 5000 + "}}")
def test_any_text_loads_or_is_refused_naming_the_source(text: str) -> None:
    _load(text)


def test_flow_nesting_past_the_limit_names_the_line_and_the_limit() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec: " + "[" * (MAX_FLOW_NESTING + 1) + "]" * (MAX_FLOW_NESTING + 1)
    with pytest.raises(ManifestError) as raised:
        load_text(text, source=SOURCE)
    assert raised.value.problems == [
        f"{SOURCE}: line 3: more than {MAX_FLOW_NESTING} levels of nested [ ] or {{ }} (the limit): "
        "this is not a manifest"
    ]


def test_flow_nesting_up_to_the_limit_is_read() -> None:
    depth = MAX_FLOW_NESTING - 2
    value = "[" * depth + "]" * depth
    with pytest.raises(ManifestError) as raised:
        load_text(f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: x}}\n"
                  f"spec: {{minAvailable: {value}}}\n", source=SOURCE)
    (problem,) = raised.value.problems
    assert "spec.minAvailable: Invalid value: array: expected an integer or a string" in problem


def test_an_alias_bomb_is_refused_by_the_value_count() -> None:
    # 300 containers of 1000 env vars from a few hundred bytes of aliases: a million values.
    env = ", ".join(["*e"] * 1000)
    containers = ", ".join(["*c"] * 300)
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
        f"x: &e {{name: x, value: y}}\ny: &c {{name: a, image: b, env: [{env}]}}\n"
        f"spec: {{containers: [{containers}]}}\n"
    )
    with pytest.raises(ManifestError) as raised:
        load_text(text, source=SOURCE)
    too_large = f"document too large: more than {MAX_VALUES_PER_DOCUMENT} values"
    assert any(too_large in problem for problem in raised.value.problems), raised.value.problems


def test_nan_and_infinity_are_refused_where_a_number_is_expected() -> None:
    for value in (math.nan, math.inf):
        pdb = _overlaid(PDB, ["spec", "minAvailable"], value)
        with pytest.raises(ManifestError, match=r"spec\.minAvailable: Invalid value"):
            load_text(_dump(pdb, as_json=True), source=SOURCE)
