"""GPU fragmentation as the FGD artifact measures it: its own test table (frag_test.go's node states and
typical pods with the figures it expects), one case per category of GetNodePodFrag, GetTypicalPods' cut,
order and renormalization, and the NumPy path against the plain per-kind reference on random workloads."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.gpus.fragmentation import (
    Category,
    PodKind,
    Workload,
    category,
    fragmentation,
    fragmentation_by_state,
    fragmentation_ratio,
    fragmentation_reference,
    idle_milli,
    typical_workload,
)

MODELS = ("1080", "P100", "T4")
CODE = {name: code for code, name in enumerate(MODELS)}


def kind(milli_cpu: int, gpu_milli: int = 0, gpu_count: int = 0, *models: str) -> PodKind:
    return PodKind(milli_cpu, gpu_milli, gpu_count, frozenset(models) if models else None)


def workload(*kinds_and_percent: tuple[PodKind, float]) -> Workload:
    """A typical-pod list as frag_test.go writes one: kinds with their percentage."""
    return Workload(tuple(k for k, _ in kinds_and_percent), tuple(p / 100 for _, p in kinds_and_percent))


def both(load: Workload, states: list[tuple[list[int], int, str | None]]) -> tuple[list[float], list[float]]:
    """The vector and the reference fragmentation of node states (free milli, CPU left, model), the
    GPUs padded with zeros to the widest node."""
    width = max(len(free) for free, _, _ in states)
    free = np.array([free + [0] * (width - len(free)) for free, _, _ in states], dtype=np.int64)
    cpu = np.array([cpu for _, cpu, _ in states], dtype=np.int64)
    model = np.array([-1 if name is None else CODE[name] for _, _, name in states], dtype=np.int64)
    return (fragmentation(load, free, cpu, model, MODELS).tolist(),
            fragmentation_reference(load, free, cpu, model, MODELS))


# TestingGenerateGetTypicalPods: GPU pods only, some tied to a model.
ARTIFACT_TYPICAL = workload(
    (kind(6000, 465, 1), 9.33), (kind(8000, 440, 1, "2080"), 9.15), (kind(8000, 475, 1, "T4"), 8.76),
    (kind(8000, 440, 1, "P100"), 8.72), (kind(2000, 465, 1), 8.68), (kind(12000, 900, 1), 8.65),
    (kind(4000, 900, 1), 8.43), (kind(16000, 678, 1, "T4"), 8.36), (kind(8000, 500, 1), 8.29),
    (kind(6000, 511, 1), 8.11), (kind(14000, 1000, 2, "2080"), 0.54), (kind(4000, 1000, 1, "2080"), 0.43),
    (kind(32000, 1000, 2, "T4"), 0.43), (kind(16000, 1000, 1, "V100M16"), 0.40), (kind(64000, 1000, 2), 0.40),
    (kind(10000, 1000, 2), 0.40), (kind(11400, 1000, 1, "T4"), 0.36), (kind(16000, 1000, 1, "T4"), 0.36),
    (kind(4000, 1000, 2), 0.36), (kind(14000, 1000, 2, "V100M16"), 0.36), (kind(8000, 1000, 4), 0.36),
    (kind(16000, 1000, 2), 0.32), (kind(2000, 1000, 1, "T4"), 0.32), (kind(6000, 1000, 1), 0.32),
    (kind(4000, 1000, 1), 0.32), (kind(5000, 1000, 1), 0.32), (kind(32000, 1000, 4, "V100M16"), 0.32),
    (kind(32000, 1000, 2), 0.32), (kind(24000, 1000, 8, "2080"), 0.32), (kind(40000, 1000, 4), 0.29),
    (kind(32000, 1000, 8), 0.29), (kind(32000, 1000, 1, "T4"), 0.29), (kind(16000, 1000, 1), 0.25),
    (kind(7000, 1000, 1, "V100M16"), 0.25), (kind(24000, 1000, 1, "T4"), 0.25),
)

# TestingGenerateGetTypicalPodsWithNonGpu: whole-GPU pods and CPU-only ones.
ARTIFACT_TYPICAL_WITH_CPU = workload(
    (kind(15700, 1000, 1), 28.69), (kind(11900, 1000, 1), 18.93), (kind(11400, 1000, 1), 12.27),
    (kind(1000), 7.36), (kind(18710, 1000, 1), 4.85), (kind(8200, 1000, 1), 3.79),
    (kind(16400, 1000, 1), 3.31), (kind(9810, 1000, 1), 1.97), (kind(15200, 1000, 1), 1.87),
    (kind(11200, 1000, 1), 1.81), (kind(14200, 1000, 1), 1.76), (kind(12000), 1.65),
    (kind(14900, 1000, 1), 1.39), (kind(60200, 1000, 4), 1.23), (kind(64200, 1000, 8), 1.07),
    (kind(32200, 1000, 4), 1.01), (kind(17400, 1000, 2), 0.91), (kind(30200, 1000, 2), 0.69),
    (kind(16000, 1000, 1), 0.64), (kind(15000, 1000, 1), 0.59), (kind(64000, 1000, 8), 0.53),
    (kind(15000), 0.53), (kind(11910, 1000, 1), 0.53), (kind(120200, 1000, 8), 0.48),
    (kind(11300, 1000, 1), 0.37), (kind(30000, 1000, 2), 0.32), (kind(9800, 1000, 1), 0.32),
    (kind(8000, 1000, 1), 0.32), (kind(2000, 1000, 1), 0.27), (kind(2000, 80, 1), 0.27),
    (kind(1000, 1000, 1), 0.27),
)


@pytest.mark.parametrize(("load", "free", "cpu_left", "model", "expected"), [
    # TestNodeGpuShareFragAmount / TestNodeGpuShareFragAmountScore
    (ARTIFACT_TYPICAL, [200, 1000, 1000, 500], 1000, "1080", 2566.62),
    (ARTIFACT_TYPICAL, [1000, 1000, 1000, 1000], 1000, "1080", 3802.40),
    (ARTIFACT_TYPICAL, [1000] * 8, 1000, "1080", 7604.80),
    (workload((kind(6000, 465, 1), 9.33)), [200, 1000, 1000, 500], 1000, "1080", 251.91),
    # TestNodeGpuShareFragAmountWithNonGpu
    (ARTIFACT_TYPICAL_WITH_CPU, [1000] * 8, 64000, "P100", 887.20),
    (ARTIFACT_TYPICAL_WITH_CPU, [1000] * 4 + [0] * 4, 32000, "P100", 554.4),
    (ARTIFACT_TYPICAL_WITH_CPU, [1000] * 4 + [0] * 4, 0, "P100", 4000),
    # TestGetGpuFragMilliByNodeResAndPodRes: where a kind fits, the GPUs short of its milli are fragment.
    (workload((kind(100, 1000, 2, "1080"), 100)), [200, 1000, 1000, 500], 1000, "1080", 700),
    (workload((kind(100, 1000, 2, "1080"), 100)), [1000] * 4, 1000, "1080", 0),
    (workload((kind(100, 1000, 2, "1080"), 100)), [1000] * 8, 1000, "1080", 0),
    (workload((kind(100, 200, 2, "1080"), 100)), [200, 1000, 1000, 500], 1000, "1080", 0),
])
def test_the_artifacts_own_cases(load: Workload, free: list[int], cpu_left: int, model: str,
                                 expected: float) -> None:
    (vector,), (reference,) = both(load, [(free, cpu_left, model)])
    assert vector == pytest.approx(expected, abs=0.01)
    assert reference == pytest.approx(expected, abs=0.01)


def test_the_artifacts_lack_cpu_case_is_q4_with_all_its_2700_idle_milli() -> None:
    assert category(kind(6000, 465, 1), [200, 1000, 1000, 500], 1000, "1080") is Category.Q4_LACK_CPU
    assert idle_milli(np.array([[200, 1000, 1000, 500]])).tolist() == [2700]


def test_states_of_different_widths_in_one_call_give_what_each_gives_alone() -> None:
    states: list[tuple[list[int], int, str | None]] = [
        ([200, 1000, 1000, 500], 1000, "1080"), ([1000] * 8, 1000, "1080"), ([1000, 1000], 1000, "1080")]
    together, _ = both(ARTIFACT_TYPICAL, states)
    alone = [both(ARTIFACT_TYPICAL, [state])[0][0] for state in states]
    assert together == pytest.approx(alone, rel=1e-12)
    assert together[:2] == pytest.approx([2566.62, 7604.80], abs=0.01)


# One node for the categories: P100 GPUs with 300, 1000 and 600 milli free (1900 idle), 8 CPUs left.
NODE = ([300, 1000, 600], 8000, "P100")


@pytest.mark.parametrize(("pod", "expected", "fragmented"), [
    (kind(4000), Category.XL_SATISFIED, 1900),                 # a CPU-only pod uses no GPU: all fragment
    (kind(9000), Category.XR_LACK_CPU, 1900),
    (kind(1000, 500, 1, "T4"), Category.NO_ACCESS, 1900),        # a model the node does not have
    (kind(9000, 1000, 2), Category.Q1_LACK_BOTH, 1900),
    (kind(1000, 700, 2), Category.Q2_LACK_GPU, 1900),           # one GPU with 700 free, two wanted
    (kind(1000, 500, 2, "P100", "T4"), Category.Q3_SATISFIED, 300),  # fits: only the 300 GPU is fragment
    (kind(1000, 300, 3), Category.Q3_SATISFIED, 0),             # every GPU has the 300 it asks
    (kind(9000, 500, 1), Category.Q4_LACK_CPU, 1900),
])
def test_each_category_and_the_milli_it_counts_as_fragment(pod: PodKind, expected: Category,
                                                           fragmented: float) -> None:
    free, cpu_left, model = NODE
    assert category(pod, free, cpu_left, model) is expected
    vector, reference = both(Workload((pod,), (1.0,)), [NODE])
    assert vector == reference == [fragmented]


def test_a_node_without_gpus_is_no_access_to_a_kind_with_models_and_has_nothing_to_fragment() -> None:
    assert category(kind(1000, 500, 1, "T4"), [0, 0], 8000, None) is Category.NO_ACCESS
    assert category(kind(1000, 500, 1), [0, 0], 8000, None) is Category.Q2_LACK_GPU
    load = Workload((kind(1000, 500, 1, "T4"), kind(1000, 500, 1), kind(1000)), (0.5, 0.25, 0.25))
    assert both(load, [([0, 0], 8000, None)]) == ([0.0], [0.0])


def test_the_weights_mix_the_kinds() -> None:
    load = Workload((kind(1000, 500, 2, "P100"), kind(4000)), (0.75, 0.25))
    assert both(load, [NODE]) == ([0.75 * 300 + 0.25 * 1900], [0.75 * 300 + 0.25 * 1900])


def test_fragmentation_ratio_is_the_clusters_fragmented_share_of_its_idle_milli() -> None:
    load = Workload((kind(1000, 500, 2, "P100"), kind(4000)), (0.75, 0.25))
    free = np.array([[300, 1000, 600], [0, 0, 0]])
    cpu = np.array([8000, 8000])
    model = np.array([CODE["P100"], CODE["T4"]])
    assert fragmentation_ratio(load, free, cpu, model, MODELS) == pytest.approx(700 / 1900, rel=1e-12)
    assert fragmentation_ratio(load, free[1:], cpu[1:], model[1:], MODELS) == 0.0


def test_no_states_and_no_kinds() -> None:
    assert fragmentation(ARTIFACT_TYPICAL, np.zeros((0, 8)), [], [], MODELS).tolist() == []
    empty = Workload((), ())
    assert fragmentation(empty, [[1000, 500]], [1000], [0], MODELS).tolist() == [0.0]
    assert fragmentation_reference(empty, [[1000, 500]], [1000], [0], MODELS) == [0.0]


@pytest.mark.parametrize(("free", "cpu_left", "model", "problem"), [
    ([1000, 500], [1000], [0], "free must be"),
    ([[1000, 500]], [1000, 1], [0], "cpu_left must be"),
    ([[1000, 500]], [1000], [0, 1], "model must be"),
    ([[1001, 500]], [1000], [0], "free milli"),
    ([[-1, 500]], [1000], [0], "free milli"),
    ([[1000, 500]], [1000], [3], "model codes"),
    ([[1000, 500]], [1000], [-2], "model codes"),
])
def test_bad_node_states_are_refused_naming_the_field(free: object, cpu_left: object, model: object,
                                                      problem: str) -> None:
    for measure in (fragmentation, fragmentation_reference):
        with pytest.raises(ValueError, match=problem):
            measure(ARTIFACT_TYPICAL, free, cpu_left, model, MODELS)


@pytest.mark.parametrize(("fields", "problem"), [
    ((-1, 0, 0, None), "milli_cpu"),
    ((0, 1001, 1, None), "gpu_milli"),
    ((0, 500, -1, None), "gpu_count"),
    ((0, 500, 0, None), "both be 0"),
    ((0, 0, 2, None), "both be 0"),
])
def test_bad_pod_kinds_are_refused(fields: tuple[int, int, int, None], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        PodKind(*fields)


def test_bad_workloads_are_refused() -> None:
    with pytest.raises(ValueError, match="2 kinds but 1 weights"):
        Workload((kind(1), kind(2)), (1.0,))
    with pytest.raises(ValueError, match="weight of"):
        Workload((kind(1),), (1.5,))
    with pytest.raises(ValueError, match="popularity"):
        typical_workload([kind(1)], popularity=0)


# typical_workload: GetTypicalPods with CPU-only pods, popularity 95%, one kind more at a time.

def pods(*counts: tuple[PodKind, int]) -> list[PodKind]:
    return [k for k, count in counts for _ in range(count)]


def test_kinds_are_taken_by_count_until_95_percent_and_renormalized() -> None:
    a, b, c, d = kind(4000, 500, 1), kind(1000), kind(8000, 1000, 2), kind(2000, 1000, 1)
    load = typical_workload(pods((d, 5), (b, 30), (a, 50), (c, 15)))
    assert load.kinds == (a, b, c)                      # 50 + 30 + 15 = 95 of 100: d is left out
    assert load.weights == ((50 / 100) / (95 / 100), (30 / 100) / (95 / 100), (15 / 100) / (95 / 100))
    assert math.isclose(math.fsum(load.weights), 1.0, rel_tol=1e-12)


def test_the_kind_that_crosses_the_popularity_is_kept() -> None:
    a, b, c = kind(4000, 500, 1), kind(1000), kind(8000, 1000, 2)
    load = typical_workload(pods((a, 60), (b, 30), (c, 10)), popularity=0.8)
    assert load.kinds == (a, b)                          # 60 < 80, 90 >= 80
    assert load.weights == ((60 / 100) / (90 / 100), (30 / 100) / (90 / 100))


def test_when_every_kind_is_needed_the_shares_are_not_renormalized() -> None:
    a, b = kind(4000, 500, 1), kind(1000)
    load = typical_workload(pods((a, 3), (b, 1)))
    assert load.kinds == (a, b)                          # 3 of 4 is 75% < 95%
    assert load.weights == (3 / 4, 1 / 4)


def test_equal_counts_put_the_greater_kind_first() -> None:
    # The artifact sorts its Less in reverse: ties by CPU, GPU milli, GPU count, then models, greatest first.
    kinds = [kind(1000, 500, 1), kind(2000, 500, 1), kind(1000, 600, 1), kind(1000, 500, 2),
             kind(1000, 500, 1, "T4"), kind(1000, 500, 1, "P100"), kind(1000, 500, 1, "P100", "T4"),
             kind(1000)]
    load = typical_workload(kinds, popularity=1.0)
    assert load.kinds == (kind(2000, 500, 1), kind(1000, 600, 1), kind(1000, 500, 2),
                          kind(1000, 500, 1, "T4"), kind(1000, 500, 1, "P100", "T4"),
                          kind(1000, 500, 1, "P100"), kind(1000, 500, 1), kind(1000))
    assert load.weights == (1 / 8,) * 8
    assert sorted(kinds) == list(reversed(load.kinds))


def test_no_pods_give_an_empty_workload() -> None:
    assert typical_workload([]) == Workload((), ())


# The NumPy path against the reference.

MILLI_VALUES = st.one_of(st.sampled_from([0, 1, 100, 250, 300, 500, 999, 1000]), st.integers(0, 1000))
CPU_VALUES = st.sampled_from([0, 500, 1000, 4000, 8000, 16000, 64000])
MODEL_SETS = st.one_of(st.none(), st.frozensets(st.sampled_from([*MODELS, "V100"]), max_size=3))


@st.composite
def pod_kinds(draw: st.DrawFn) -> PodKind:
    milli_cpu = draw(CPU_VALUES)
    if draw(st.booleans()):
        return PodKind(milli_cpu, 0, 0, None)
    return PodKind(milli_cpu, draw(st.integers(1, 1000) | st.sampled_from([1000, 500, 300])),
                   draw(st.integers(1, 9)), draw(MODEL_SETS))


@st.composite
def workloads_and_states(draw: st.DrawFn) -> tuple[Workload, np.ndarray, np.ndarray, np.ndarray]:
    kinds = draw(st.lists(pod_kinds(), max_size=8))
    weights = draw(st.lists(st.floats(0, 1), min_size=len(kinds), max_size=len(kinds)))
    width = draw(st.integers(1, 8))
    states = draw(st.integers(0, 12))
    free = draw(st.lists(st.lists(MILLI_VALUES, min_size=width, max_size=width), min_size=states,
                         max_size=states))
    cpu = draw(st.lists(CPU_VALUES, min_size=states, max_size=states))
    model = draw(st.lists(st.integers(-1, len(MODELS) - 1), min_size=states, max_size=states))
    return (Workload(tuple(kinds), tuple(weights)), np.array(free, dtype=np.int64).reshape(states, width),
            np.array(cpu, dtype=np.int64), np.array(model, dtype=np.int64))


@settings(max_examples=150, deadline=None)
@given(workloads_and_states())
def test_the_vector_path_gives_what_the_reference_gives(
        case: tuple[Workload, np.ndarray, np.ndarray, np.ndarray]) -> None:
    load, free, cpu, model = case
    reference = fragmentation_reference(load, free, cpu, model, MODELS)
    for vector in (fragmentation(load, free, cpu, model, MODELS),
                   fragmentation_by_state(load, free, cpu, model, MODELS)):
        assert vector.dtype == np.float64 and len(vector) == len(reference)
        for got, expected in zip(vector.tolist(), reference, strict=True):
            assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-9), (got, expected)


@settings(max_examples=100, deadline=None)
@given(workloads_and_states(), st.randoms(use_true_random=False))
def test_a_states_value_by_state_is_the_same_bits_alone_and_anywhere_among_others(
        case: tuple[Workload, np.ndarray, np.ndarray, np.ndarray], rng: random.Random) -> None:
    load, free, cpu, model = case
    together = fragmentation_by_state(load, free, cpu, model, MODELS).tolist()
    order = list(range(len(free)))
    rng.shuffle(order)
    shuffled = fragmentation_by_state(load, free[order], cpu[order], model[order], MODELS).tolist()
    assert [shuffled[order.index(state)] for state in range(len(free))] == together
    for state in range(len(free)):
        alone = fragmentation_by_state(load, free[state:state + 1], cpu[state:state + 1],
                                       model[state:state + 1], MODELS)
        assert alone.tolist() == [together[state]]


def test_the_artifacts_table_in_one_call_is_the_same_bits_as_state_by_state() -> None:
    # The BLAS product of ``fragmentation`` gives some of these states another last bit in company.
    states = [([200, 1000, 1000, 500] + [0] * 4, 1000, 0), ([1000] * 4 + [0] * 4, 1000, 0),
              ([1000] * 8, 1000, 0), ([1000] * 4 + [0] * 4, 32000, 1), ([1000] * 8, 64000, 1),
              ([300, 1000, 600] + [0] * 5, 8000, 1)]
    free = np.array([row for row, _, _ in states] * 7, dtype=np.int64)
    cpu = np.array([left for _, left, _ in states] * 7, dtype=np.int64)
    model = np.array([code for _, _, code in states] * 7, dtype=np.int64)
    for load in (ARTIFACT_TYPICAL, ARTIFACT_TYPICAL_WITH_CPU):
        together = fragmentation_by_state(load, free, cpu, model, MODELS).tolist()
        assert together == [fragmentation_by_state(load, free[at:at + 1], cpu[at:at + 1], model[at:at + 1],
                                                    MODELS)[0] for at in range(len(free))]
