"""GPU fragmentation as FGD ("Beware of Fragmentation", ATC '23) measures it: the idle GPU milli of a node
that a pod drawn from the workload's typical kinds could not use, in expectation over the kinds.

The definitions are those of the paper's artifact (kubernetes-scheduler-simulator, pkg/utils/frag.go):
``typical_workload`` is GetTypicalPods as its experiments run it (CPU-only pods included, popularity 95%,
one kind more at a time, every pod counting 1), ``fragmentation`` is NodeGpuShareFragAmount's
FragAmountSumExceptQ3. For a kind and a node, the node's idle GPU milli are all fragment unless the kind
fits (Q3: an accepted model, enough GPUs with its milli free, enough CPU left); then only the milli of the
GPUs with less free than the kind asks are. A CPU-only kind fits no GPU, so to it every idle milli is
fragment (the artifact's XL and XR categories).

``fragmentation`` computes many node states against every kind at once in NumPy (a scoring plugin asks for
every candidate node after a placement), ``fragmentation_by_state`` the same with each state's value
independent of the others (what a value kept between calls needs); ``fragmentation_reference`` is the
same measure in plain Python, state by state and kind by kind as the artifact writes it, the oracle of the
tests.

A node state is a row of ``free`` (each GPU's free milli in device order, 0 past the node's GPUs: a missing
GPU counts as one with nothing free, which changes no result), its CPU milli left and its GPU model's code
(an index into ``models``, -1 for a node without GPUs).
"""

from __future__ import annotations

import enum
import functools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

#: Milli of one GPU.
MILLI = 1000

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@functools.total_ordering
@dataclass(frozen=True)
class PodKind:
    """What a pod asks of a node, as far as fragmentation goes (the artifact's PodResource): its non-zero
    milli CPU request, the milli it takes of each of its GPUs, how many GPUs, and the GPU models it accepts
    (None: any model, also none; a set: only nodes of those models, so an empty set fits no node).

    Kinds order as PodResource.Less orders them: by CPU, GPU milli, GPU count, then models (any model
    first, then the names sorted and joined with "|", the way the trace spells a list of models)."""

    milli_cpu: int
    gpu_milli: int
    gpu_count: int
    models: frozenset[str] | None

    def __post_init__(self) -> None:
        if self.milli_cpu < 0:
            raise ValueError(f"pod kind {self}: milli_cpu must not be negative")
        if self.gpu_count < 0:
            raise ValueError(f"pod kind {self}: gpu_count must not be negative")
        if not 0 <= self.gpu_milli <= MILLI:
            raise ValueError(f"pod kind {self}: gpu_milli must be between 0 and {MILLI}")
        if (self.gpu_milli == 0) != (self.gpu_count == 0):
            raise ValueError(f"pod kind {self}: gpu_milli and gpu_count must both be 0 (a CPU-only pod) "
                             "or both be positive")

    def _order(self) -> tuple[int, int, int, bool, str, tuple[str, ...]]:
        names = () if self.models is None else tuple(sorted(self.models))
        return (self.milli_cpu, self.gpu_milli, self.gpu_count, self.models is not None, "|".join(names),
                names)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PodKind):
            return NotImplemented
        return self._order() < other._order()


@dataclass(frozen=True)
class Workload:
    """The typical pods: kinds and the probability of each (summing to 1 when ``typical_workload`` made
    them). The kinds' columns the vector path reads are built once, here."""

    kinds: tuple[PodKind, ...]
    weights: tuple[float, ...]
    _columns: _KindColumns = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.kinds) != len(self.weights):
            raise ValueError(f"workload: {len(self.kinds)} kinds but {len(self.weights)} weights")
        for kind, weight in zip(self.kinds, self.weights, strict=True):
            if not 0 <= weight <= 1:
                raise ValueError(f"workload: the weight of {kind} must be between 0 and 1, not {weight}")
        object.__setattr__(self, "_columns", _KindColumns(self.kinds, self.weights))


class _KindColumns:
    """A workload's GPU kinds as arrays, and what the vector path needs to bucket the GPUs of node states
    by the distinct GPU milli the kinds ask. CPU-only kinds need nothing of a state but its idle milli."""

    __slots__ = ("_gpu_kinds", "_rejected", "bucket", "cpu_only_weight", "kind_milli", "milli", "milli_cpu",
                 "need", "weights")

    def __init__(self, kinds: Sequence[PodKind], weights: Sequence[float]) -> None:
        pairs = list(zip(kinds, weights, strict=True))
        gpu_kinds = [kind for kind in kinds if kind.gpu_milli]
        self._gpu_kinds = gpu_kinds
        self.cpu_only_weight = math.fsum(weight for kind, weight in pairs if not kind.gpu_milli)
        self.weights = np.array([weight for kind, weight in pairs if kind.gpu_milli], dtype=np.float64)
        self.milli_cpu = np.array([kind.milli_cpu for kind in gpu_kinds], dtype=np.int64)
        #: The distinct GPU milli asked (ascending), and each GPU kind's position among them.
        milli, kind_milli = np.unique(np.array([kind.gpu_milli for kind in gpu_kinds], dtype=np.int64),
                                      return_inverse=True)
        self.milli: IntArray = milli
        self.kind_milli: IntArray = kind_milli.astype(np.int64)
        #: By free milli 0..MILLI, how many of the distinct milli it reaches: a GPU with free f has enough
        #: for the kinds of milli[i] exactly when i < bucket[f].
        self.bucket: IntArray = np.searchsorted(milli, np.arange(MILLI + 1), side="right").astype(np.int64)
        #: GPUs with enough free each kind needs (CanNodeHostPodOnGpuMemory).
        self.need = np.array([kind.gpu_count for kind in gpu_kinds], dtype=np.int64)
        #: By the nodes' list of models: which model codes each GPU kind refuses, the last column standing
        #: for code -1 (no GPU) so that the codes index it directly; None when every kind takes any node.
        self._rejected: dict[tuple[str, ...], npt.NDArray[np.bool_] | None] = {}

    def rejected(self, models: Sequence[str]) -> npt.NDArray[np.bool_] | None:
        key = tuple(models)
        if key not in self._rejected:
            kinds = self._gpu_kinds
            table = np.array([[not _accepts(kind, name) for name in (*key, None)] for kind in kinds],
                             dtype=np.bool_).reshape(len(kinds), len(key) + 1)
            self._rejected[key] = table if table.any() else None
        return self._rejected[key]


def _accepts(kind: PodKind, node_model: str | None) -> bool:
    """IsNodeAccessibleToPod: a kind without models takes any node, one with models only nodes of them."""
    return kind.models is None or node_model in kind.models


def typical_workload(kinds: Iterable[PodKind], popularity: float = 0.95) -> Workload:
    """The most frequent kinds among ``kinds`` (one per pod) that together make up at least
    ``popularity`` of the pods, each weighted by its share of them, as GetTypicalPods picks them: kinds by
    decreasing count (equal counts: the greater kind first, the artifact sorting its Less in reverse), one
    more until the popularity is reached, the weights renormalized when some kinds are left out."""
    if not 0 < popularity <= 1:
        raise ValueError(f"typical workload: popularity must be in (0, 1], not {popularity}")
    counts = Counter(kinds)
    total = float(sum(counts.values()))
    ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    # The artifact's threshold is a percentage: the same float arithmetic gives the same cut.
    expected = popularity * 100 * total / 100.0
    chosen = 0
    covered = 0.0
    while covered < expected:
        covered += ranked[chosen][1]
        chosen += 1
    shares = [count / total for _, count in ranked[:chosen]]
    if chosen < len(ranked):
        shares = [share / (covered / total) for share in shares]
    return Workload(tuple(kind for kind, _ in ranked[:chosen]), tuple(shares))


def _states(free: npt.ArrayLike, cpu_left: npt.ArrayLike, model: npt.ArrayLike,
            models: Sequence[str]) -> tuple[IntArray, IntArray, IntArray]:
    free_rows = np.asarray(free, dtype=np.int64)
    cpu = np.asarray(cpu_left, dtype=np.int64)
    codes = np.asarray(model, dtype=np.int64)
    if free_rows.ndim != 2:
        raise ValueError(f"node states: free must be [states, GPUs], not of shape {free_rows.shape}")
    states = free_rows.shape[0]
    if cpu.shape != (states,):
        raise ValueError(f"node states: cpu_left must be [{states}], not of shape {cpu.shape}")
    if codes.shape != (states,):
        raise ValueError(f"node states: model must be [{states}], not of shape {codes.shape}")
    if states and free_rows.size and (free_rows.min() < 0 or free_rows.max() > MILLI):
        raise ValueError(f"node states: free milli must be between 0 and {MILLI}")
    if states and (codes.min() < -1 or codes.max() >= len(models)):
        raise ValueError(f"node states: model codes must be -1 or index the {len(models)} models")
    return free_rows, cpu, codes


def fragmentation(workload: Workload, free: npt.ArrayLike, cpu_left: npt.ArrayLike, model: npt.ArrayLike,
                  models: Sequence[str]) -> FloatArray:
    """The expected fragmented GPU milli of each node state (``free`` [states, W], ``cpu_left`` [states],
    ``model`` [states]) under the workload, as float64 [states]; the kinds are summed in one BLAS product,
    whose last bit for a state can depend on the state's position among the states."""
    fragmented, idle, columns = _fragmented(workload, free, cpu_left, model, models)
    result: FloatArray = columns.weights @ fragmented + columns.cpu_only_weight * idle
    return result


def fragmentation_by_state(workload: Workload, free: npt.ArrayLike, cpu_left: npt.ArrayLike,
                           model: npt.ArrayLike, models: Sequence[str]) -> FloatArray:
    """``fragmentation`` with each state's kinds summed on their own, one kind after the other: a state's
    value is the same bits whatever the other states, so a value computed once can be kept."""
    fragmented, idle, columns = _fragmented(workload, free, cpu_left, model, models)
    result: FloatArray = columns.cpu_only_weight * idle
    for weighted in fragmented * columns.weights[:, np.newaxis]:
        result += weighted
    return result


def _fragmented(workload: Workload, free: npt.ArrayLike, cpu_left: npt.ArrayLike, model: npt.ArrayLike,
                models: Sequence[str]) -> tuple[FloatArray, FloatArray, _KindColumns]:
    """For each GPU kind and state the milli fragment to the kind [kinds, states], each state's idle milli
    [states], and the workload's columns."""
    free_rows, cpu, codes = _states(free, cpu_left, model, models)
    columns = workload._columns
    states, distinct = free_rows.shape[0], len(columns.milli)
    # Each GPU falls in the bucket of the distinct milli it has enough for; counted and summed per bucket
    # and state, then accumulated over the buckets, that gives for every distinct milli u and state the
    # GPUs with less than u free and their milli, in time linear in states * (W + distinct milli).
    slots = (columns.bucket[free_rows] * states + np.arange(states)[:, np.newaxis]).ravel()
    size = (distinct + 1) * states
    short_gpus = np.bincount(slots, minlength=size).reshape(distinct + 1, states)
    short_milli = np.bincount(slots, weights=free_rows.ravel().astype(np.float64),
                              minlength=size).reshape(distinct + 1, states).astype(np.float64, copy=False)
    # Row by row: NumPy's cumsum along the first axis walks the columns one by one, several times slower.
    for row in range(1, distinct + 1):
        short_gpus[row] += short_gpus[row - 1]
        short_milli[row] += short_milli[row - 1]
    idle = short_milli[distinct]
    # A kind fits where no more GPUs are short of its milli than leave its count, enough CPU is left and
    # the node's model is one it accepts; where it does not, all idle milli are fragment to it.
    most_short = free_rows.shape[1] - columns.need
    misfits = short_gpus[columns.kind_milli] > most_short[:, np.newaxis]
    misfits |= cpu[np.newaxis, :] < columns.milli_cpu[:, np.newaxis]
    rejected = columns.rejected(models)
    if rejected is not None:
        misfits |= rejected[:, codes]
    fragmented = short_milli[columns.kind_milli]
    np.copyto(fragmented, idle[np.newaxis, :], where=misfits)
    return fragmented, idle, columns


def idle_milli(free: npt.ArrayLike) -> IntArray:
    """The idle GPU milli of each node state (``free`` [states, W])."""
    free_rows = np.asarray(free, dtype=np.int64)
    if free_rows.ndim != 2:
        raise ValueError(f"node states: free must be [states, GPUs], not of shape {free_rows.shape}")
    idle: IntArray = free_rows.sum(axis=1)
    return idle


def fragmentation_ratio(workload: Workload, free: npt.ArrayLike, cpu_left: npt.ArrayLike,
                        model: npt.ArrayLike, models: Sequence[str]) -> float:
    """The share of a cluster's idle GPU milli that is fragmented (0 when none is idle), as the artifact's
    ClusterGpuFragReport divides: its idle milli are the sum of every kind's categories, the weights
    times the nodes' idle milli."""
    fragmented = float(fragmentation(workload, free, cpu_left, model, models).sum())
    idle = math.fsum(workload.weights) * float(idle_milli(free).sum())
    return fragmented / idle if idle > 0 else 0.0


class Category(enum.Enum):
    """GetNodePodFrag's answer: where a node stands for a kind (Q for GPU kinds, X for CPU-only ones)."""

    Q1_LACK_BOTH = "q1_lack_both"
    Q2_LACK_GPU = "q2_lack_gpu"
    Q3_SATISFIED = "q3_satisfied"
    Q4_LACK_CPU = "q4_lack_cpu"
    XL_SATISFIED = "xl_satisfied"
    XR_LACK_CPU = "xr_lack_cpu"
    NO_ACCESS = "no_access"


def category(kind: PodKind, free: Sequence[int], cpu_left: int, node_model: str | None) -> Category:
    """GetNodePodFrag for one kind and one node state (``free``: its GPUs' free milli)."""
    fits_cpu = cpu_left >= kind.milli_cpu
    if kind.gpu_milli == 0:
        return Category.XL_SATISFIED if fits_cpu else Category.XR_LACK_CPU
    if not _accepts(kind, node_model):
        return Category.NO_ACCESS
    if _hosts_gpus(kind, free):
        return Category.Q3_SATISFIED if fits_cpu else Category.Q4_LACK_CPU
    return Category.Q2_LACK_GPU if fits_cpu else Category.Q1_LACK_BOTH


def _hosts_gpus(kind: PodKind, free: Sequence[int]) -> bool:
    """CanNodeHostPodOnGpuMemory."""
    wanted = kind.gpu_count
    for milli in free:
        if milli >= kind.gpu_milli:
            wanted -= 1
            if wanted <= 0:
                return True
    return False


def fragmentation_reference(workload: Workload, free: npt.ArrayLike, cpu_left: npt.ArrayLike,
                            model: npt.ArrayLike, models: Sequence[str]) -> list[float]:
    """``fragmentation`` state by state and kind by kind, summed category by category as
    NodeGpuShareFragAmount and FragAmountSumExceptQ3 sum."""
    free_rows, cpu, codes = _states(free, cpu_left, model, models)
    result = []
    for row, left, code in zip(free_rows.tolist(), cpu.tolist(), codes.tolist(), strict=True):
        node_model = models[code] if code >= 0 else None
        idle = sum(row)
        amounts = dict.fromkeys(Category, 0.0)
        for kind, weight in zip(workload.kinds, workload.weights, strict=True):
            where = category(kind, row, left, node_model)
            if where is Category.Q3_SATISFIED:
                # GPUs with less free than the kind asks are fragment even where the kind fits.
                short = sum(milli for milli in row if milli < kind.gpu_milli)
                amounts[Category.Q2_LACK_GPU] += weight * short
                amounts[Category.Q3_SATISFIED] += weight * (idle - short)
            else:
                amounts[where] += weight * idle
        total = 0.0
        for where, amount in amounts.items():
            if where is not Category.Q3_SATISFIED:
                total += amount
        result.append(total)
    return result
