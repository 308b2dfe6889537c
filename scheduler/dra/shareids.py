"""Where the allocator's shareIDs come from. Kubernetes gives each share of a device a random UUID; drawn
from a seeded random source instead, the same inputs and seed give the same shareIDs (simulations and
replays repeat exactly)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

#: Makes the shareID of one new share of a device.
ShareIDSource = Callable[[], str]


def share_ids_from(rng: random.Random) -> ShareIDSource:
    """shareIDs in the form Kubernetes gives them (a version-4 UUID), drawn from ``rng``."""

    def new_share_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    return new_share_id
