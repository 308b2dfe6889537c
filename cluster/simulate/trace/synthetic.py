"""A synthetic trace shaped like openb, in its columns: the real trace is not ours to ship.

The node types and their shares approximate the real node list (1523 nodes, mostly 8-GPU G2 machines,
about a fifth CPU-only). Pods follow the trace's mix: many one-GPU pods that share a GPU (gpu_milli
below 1000), whole one-GPU pods, some 2/4/8-GPU pods and about 15% CPU-only pods. Arrivals are a Poisson
process whose rate swells and ebbs in waves; run times are log-normal (heavy-tailed: most pods are short,
a few run for many hours). The arrivals are spread so that the GPUs asked by the pods that would be
running if each started on arrival (whole GPUs, as podsched schedules them) peak at ``load`` times the
cluster's GPUs: at ``load`` 1 the cluster is full at the peak, and fragmentation makes pods wait.
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass

from cluster.simulate.trace.openb import NODE_COLUMNS, POD_COLUMNS

DEFAULT_NODES = 1523
DEFAULT_PODS = 8152
DEFAULT_SEED = 1
DEFAULT_LOAD = 1.0
DEFAULT_GPU_SPEC_FRACTION = 0.1
#: Where creation times start, like the real trace's offsets (seconds).
FIRST_CREATION = 9_000_000
#: Median and spread of the log-normal run time (seconds; the mean is about 2.6 hours).
MEDIAN_RUN_S = 3600.0
RUN_SIGMA = 1.25
#: The arrival rate swings by this fraction around its mean, in this many waves over the trace.
WAVE_AMPLITUDE = 0.5
WAVES = 2
#: The range searched for the time between arrivals, and how finely.
MIN_SECONDS_PER_TICK = 0.01
MAX_SECONDS_PER_TICK = 100_000.0
BISECTION_STEPS = 20


@dataclass(frozen=True, slots=True)
class NodeType:
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str
    weight: float


GIB = 1024
NODE_TYPES = (
    NodeType(96_000, 384 * GIB, 8, "G2", 0.30),
    NodeType(104_000, 512 * GIB, 2, "T4", 0.24),
    NodeType(64_000, 256 * GIB, 2, "P100", 0.06),
    NodeType(64_000, 256 * GIB, 4, "V100M16", 0.08),
    NodeType(96_000, 512 * GIB, 8, "V100M32", 0.04),
    NodeType(128_000, 768 * GIB, 8, "G3", 0.08),
    NodeType(32_000, 256 * GIB, 0, "", 0.12),
    NodeType(96_000, 512 * GIB, 0, "", 0.08),
)

#: GPUs per pod and their shares among pods; 1 with a share below 1000 milli is a GPU-sharing pod.
CPU_ONLY_SHARE = 0.15
SHARING_SHARE = 0.45
WHOLE_GPU_SHARES = ((1, 0.25), (2, 0.07), (4, 0.05), (8, 0.03))
QOS_SHARES = (("LS", 0.5), ("BE", 0.25), ("Burstable", 0.15), ("Guaranteed", 0.1))
PHASE_SHARES = (("Running", 0.55), ("Succeeded", 0.3), ("Failed", 0.08), ("Pending", 0.07))


@dataclass(frozen=True, slots=True)
class _Pod:
    cpu_milli: int
    memory_mib: int
    gpus: int
    gpu_milli: int
    gpu_spec: str


def generate_openb(nodes: int = DEFAULT_NODES, pods: int = DEFAULT_PODS, seed: int = DEFAULT_SEED, *,
                   load: float = DEFAULT_LOAD,
                   gpu_spec_fraction: float = DEFAULT_GPU_SPEC_FRACTION) -> tuple[str, str]:
    """The node list and pod list of a synthetic openb-shaped trace, as CSV text; the same for the
    same arguments."""
    if nodes < 1 or pods < 1:
        raise ValueError("a trace has at least one node and one pod")
    if load <= 0:
        raise ValueError(f"load must be positive, not {load}")
    if not 0 <= gpu_spec_fraction <= 1:
        raise ValueError(f"gpu_spec_fraction must be between 0 and 1, not {gpu_spec_fraction}")
    rng = random.Random(seed)
    types = _node_types(rng, nodes)
    pod_shapes = [_pod_shape(rng, types, gpu_spec_fraction) for _ in range(pods)]
    gpus = sum(kind.gpus for kind in types)
    return _nodes_csv(types), _pods_csv(rng, pod_shapes, gpus, load)


def _node_types(rng: random.Random, count: int) -> list[NodeType]:
    """``count`` node types drawn by their weights; at least one with 8 GPUs so every pod has a place."""
    chosen = rng.choices(NODE_TYPES, weights=[kind.weight for kind in NODE_TYPES], k=count)
    if not any(kind.gpus == 8 for kind in chosen):
        chosen[0] = NODE_TYPES[0]
    return chosen


def _pod_shape(rng: random.Random, types: list[NodeType], gpu_spec_fraction: float) -> _Pod:
    draw = rng.random()
    if draw < CPU_ONLY_SHARE:
        cpu = rng.choice((1, 2, 4, 8, 16, 32)) * 1000
        return _Pod(cpu, cpu // 1000 * rng.choice((2048, 4096, 8192)), 0, 0, "")
    if draw < CPU_ONLY_SHARE + SHARING_SHARE:
        gpus, milli = 1, rng.randrange(50, 1001, 50)
    else:
        gpus = rng.choices([n for n, _ in WHOLE_GPU_SHARES], weights=[w for _, w in WHOLE_GPU_SHARES])[0]
        milli = 1000
    cpu = gpus * rng.choice((2, 4, 8, 12)) * 1000
    memory = cpu // 1000 * rng.choice((2048, 4096))
    spec = ""
    if rng.random() < gpu_spec_fraction:
        fitting = sorted({kind.model for kind in types
                          if kind.gpus >= gpus and kind.cpu_milli >= cpu and kind.memory_mib >= memory})
        if fitting:
            spec = "|".join(sorted(rng.sample(fitting, min(len(fitting), rng.choice((1, 2))))))
    return _Pod(cpu, memory, gpus, milli, spec)


def _nodes_csv(types: list[NodeType]) -> str:
    out = io.StringIO()
    out.write(",".join(NODE_COLUMNS) + "\n")
    width = _width(len(types))
    for number, kind in enumerate(types):
        out.write(f"openb-node-{number:0{width}d},{kind.cpu_milli},{kind.memory_mib},{kind.gpus},{kind.model}\n")
    return out.getvalue()


def _pods_csv(rng: random.Random, shapes: list[_Pod], cluster_gpus: int, load: float) -> str:
    runs = [max(1, int(rng.lognormvariate(math.log(MEDIAN_RUN_S), RUN_SIGMA))) for _ in shapes]
    ticks = _wave_arrivals(rng, len(shapes))
    gpus = [shape.gpus for shape in shapes]
    seconds_per_tick = _seconds_per_tick(ticks, runs, gpus, load * cluster_gpus)
    out = io.StringIO()
    out.write(",".join(POD_COLUMNS) + "\n")
    width = _width(len(shapes))
    for number, (shape, tick, run) in enumerate(zip(shapes, ticks, runs, strict=True)):
        created = FIRST_CREATION + int(tick * seconds_per_tick)
        phase = rng.choices([p for p, _ in PHASE_SHARES], weights=[w for _, w in PHASE_SHARES])[0]
        qos = rng.choices([q for q, _ in QOS_SHARES], weights=[w for _, w in QOS_SHARES])[0]
        if phase == "Pending":
            scheduled, deleted = "", created + run
        else:
            start = created + rng.randrange(0, 30)
            scheduled, deleted = str(start), start + run
        out.write(f"openb-pod-{number:0{width}d},{shape.cpu_milli},{shape.memory_mib},{shape.gpus},"
                  f"{shape.gpu_milli},{shape.gpu_spec},{qos},{phase},{created},{deleted},{scheduled}\n")
    return out.getvalue()


def _wave_arrivals(rng: random.Random, count: int) -> list[float]:
    """Poisson arrivals at a mean rate of one per tick that swells and ebbs in ``WAVES`` waves."""
    period = max(count / WAVES, 1.0)
    clock, arrivals = 0.0, []
    for _ in range(count):
        arrivals.append(clock)
        wave = 1 + WAVE_AMPLITUDE * math.sin(2 * math.pi * clock / period)
        clock += rng.expovariate(wave)
    return arrivals


def peak_gpus(arrivals: list[float], runs: list[int], gpus: list[int]) -> int:
    """The most GPUs asked at once by pods that each run from arrival for their run time."""
    events = sorted([*((arrival, 1, n) for arrival, n in zip(arrivals, gpus, strict=True)),
                     *((arrival + run, -1, n) for arrival, run, n in zip(arrivals, runs, gpus, strict=True))],
                    key=lambda event: (event[0], event[1]))
    current = peak = 0
    for _, sign, n in events:
        current += sign * n
        peak = max(peak, current)
    return peak


def _seconds_per_tick(ticks: list[float], runs: list[int], gpus: list[int], target: float) -> float:
    """How long a tick lasts so that the peak of GPUs asked is ``target``: arrivals are spread out or
    pressed together around fixed run times (bisection; the peak falls as ticks grow longer)."""
    low, high = MIN_SECONDS_PER_TICK, MAX_SECONDS_PER_TICK
    for _ in range(BISECTION_STEPS):
        middle = math.sqrt(low * high)
        if peak_gpus([tick * middle for tick in ticks], runs, gpus) > target:
            low = middle
        else:
            high = middle
    return high


def _width(count: int) -> int:
    return max(4, len(str(count - 1)))
