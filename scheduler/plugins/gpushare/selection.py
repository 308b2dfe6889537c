"""The artifact's GPU selections (open_gpu_share.go's allocateGpuIdBasedOn*) as orders of the devices
the allocator may take: it takes the first that fit, so the first fitting one is the policy's GPU.

A pod of whole GPUs always takes the lowest-index free GPUs (the artifact's AllocateExclusiveGpuId):
its candidates go in index order, which every order below keeps among equally free GPUs."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.gpus.table import MILLI, GpuSpec

if TYPE_CHECKING:
    from scheduler.framework import DeviceCandidate


def free_milli(candidate: DeviceCandidate, spec: GpuSpec) -> int | None:
    """The candidate's free share capacity scaled to 0..MILLI, truncated; None when it is no shareable
    GPU."""
    capacity = candidate.capacity.get(spec.share_capacity)
    if not capacity:
        return None
    free = candidate.free.get(spec.share_capacity, 0)
    # In integers: Fraction arithmetic costs several times more.
    return trunc_div(free.numerator * MILLI * capacity.denominator, free.denominator * capacity.numerator)


def trunc_div(a: int, b: int) -> int:
    """Go's integer division (and Python's int() of a quotient): truncated toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def best_fit_order(indexes: Sequence[int], free: Sequence[int], milli: int) -> list[int]:
    """"best": the GPUs that hold ``milli`` first, the least free first, then by index."""
    return sorted(range(len(indexes)), key=lambda at: (free[at] < milli, free[at], indexes[at]))


def index_order(indexes: Sequence[int]) -> list[int]:
    return sorted(range(len(indexes)), key=indexes.__getitem__)


def random_fit_order(indexes: Sequence[int], free: Sequence[int], milli: int,
                     rng: random.Random) -> list[int]:
    """"random": a share pod's GPU drawn uniformly among those that hold it, in one pass in index order
    as the artifact draws (the i-th fitting GPU replaces the choice with probability 1/i); the others
    follow in index order. A pod of whole GPUs draws nothing."""
    if milli >= MILLI:
        return best_fit_order(indexes, free, milli)
    order = index_order(indexes)
    chosen, fitting = None, 0
    for at in order:
        if free[at] >= milli:
            fitting += 1
            if rng.randrange(fitting) == 0:
                chosen = at
    if chosen is None:
        return order
    return [chosen, *(at for at in order if at != chosen)]
