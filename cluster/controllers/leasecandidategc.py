"""The LeaseCandidate garbage collector, as kube-controller-manager's leasecandidategc: deletes the
LeaseCandidates nobody has renewed for ``expiry_s`` (30 minutes, upstream's), checking every
``check_period_s``. A scheduler replica deletes its own candidate when it stops on purpose; this is for the
ones killed or lost.

The age is judged by this controller's wall clock against the renewTime a replica wrote with its own; the
30 minutes dwarf any sane clock skew. As upstream, a candidate without a renewTime has expired. One renewed
"in the future" (a clock far ahead) counts as renewed when this controller first saw that version of it, so
a replica that dies with its clock ahead still goes. Each delete carries the resourceVersion of the version
judged, so a candidate renewed meanwhile is kept (the conflict is logged and judged again at the next check).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from cluster.api import errors, objects_pb2, timeutil
from cluster.api.kinds import LEASE_CANDIDATE
from cluster.client import Client

log = logging.getLogger(__name__)

#: How long a candidate may go unrenewed before it is deleted, and how often that is checked.
DEFAULT_EXPIRY_S = 30 * 60.0
DEFAULT_CHECK_PERIOD_S = 30 * 60.0


class LeaseCandidateGarbageCollector:
    name = "leasecandidategc"

    def __init__(
        self,
        client: Client,
        *,
        expiry_s: float = DEFAULT_EXPIRY_S,
        check_period_s: float = DEFAULT_CHECK_PERIOD_S,
        now: Callable[[], datetime] = timeutil.utc_now,
    ) -> None:
        if not expiry_s > 0 or not check_period_s > 0:
            raise ValueError(
                f"expiry_s and check_period_s must be positive, got {expiry_s} and {check_period_s}"
            )
        self._client = client
        self.expiry_s = expiry_s
        self.check_period_s = check_period_s
        self._now = now
        #: "namespace/name" -> (resourceVersion, when first seen) of each candidate renewed in the future.
        self._future_seen: dict[str, tuple[str, datetime]] = {}

    async def run(self) -> None:
        """Check at the start, then every period: a process restarted more often than the period must
        still collect."""
        while True:
            try:
                await self.collect()
            except errors.ApiError as err:
                log.warning("lease candidate gc: listing failed (%s); next check in %gs", err,
                            self.check_period_s)
            await asyncio.sleep(self.check_period_s)

    def expired(self, candidate: objects_pb2.LeaseCandidate) -> bool:
        renew = candidate.spec.renew_time
        if not timeutil.is_set(renew):
            return True
        now = self._now()
        renewed = timeutil.to_datetime(renew)
        meta = candidate.metadata
        key = f"{meta.namespace}/{meta.name}"
        if renewed <= now:
            self._future_seen.pop(key, None)
        else:
            version, renewed = self._future_seen.get(key, ("", now))
            if version != meta.resource_version:
                renewed = now
                self._future_seen[key] = (meta.resource_version, now)
        return renewed < now - timedelta(seconds=self.expiry_s)

    async def collect(self) -> list[str]:
        """Delete every expired candidate; the "namespace/name" of each one deleted."""
        listed = await self._client.list_all(LEASE_CANDIDATE)
        candidates = [c for c in listed.items if isinstance(c, objects_pb2.LeaseCandidate)]
        # Forget the future-dated candidates that are gone.
        listed_keys = {f"{c.metadata.namespace}/{c.metadata.name}" for c in candidates}
        for key in self._future_seen.keys() - listed_keys:
            del self._future_seen[key]
        deleted = []
        for candidate in candidates:
            if not self.expired(candidate):
                continue
            meta = candidate.metadata
            try:
                await self._client.delete(LEASE_CANDIDATE, meta.name, meta.namespace,
                                          resource_version=meta.resource_version)
            except (errors.NotFound, errors.Conflict) as err:
                log.info("lease candidate gc: %s/%s changed meanwhile (%s); kept", meta.namespace, meta.name,
                         err)
                continue
            except errors.ApiError as err:
                log.warning("lease candidate gc: deleting %s/%s failed: %s", meta.namespace, meta.name, err)
                continue
            renew = candidate.spec.renew_time
            log.info("lease candidate gc: deleted %s/%s, not renewed since %s", meta.namespace, meta.name,
                     timeutil.to_datetime(renew).isoformat() if timeutil.is_set(renew) else "ever")
            deleted.append(f"{meta.namespace}/{meta.name}")
        return deleted
