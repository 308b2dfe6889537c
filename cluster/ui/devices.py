"""The devices of each node for the web view: what the ResourceSlices of a node publish, and which
ResourceClaims (and the pods they are reserved for) hold each device, a shared device with every one of
its consumers.

Kept current one object at a time, as the rest of the view model: a slice's change touches its node, a
claim's change the nodes of the devices it held and holds; each handler returns the nodes whose view
changed, for the model to upsert. Only slices of one node (``spec.nodeName``) are shown: a slice for all
nodes or a node selector belongs to no one node's card.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import POD_RESOURCE
from cluster.ui.serialize import Json

#: A device as allocations name it: driver, pool, device.
DeviceKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class _Slice:
    node: str
    driver: str
    pool: str
    #: (device name, allows multiple allocations), in the slice's order.
    devices: tuple[tuple[str, bool], ...]

    def keys(self) -> list[DeviceKey]:
        return [(self.driver, self.pool, name) for name, _ in self.devices]


@dataclass(frozen=True, slots=True)
class _Hold:
    """One allocation result of a claim."""

    device: DeviceKey
    request: str
    share_id: str | None


@dataclass(frozen=True, slots=True)
class _Claim:
    holds: tuple[_Hold, ...]
    #: ``namespace/name`` of the pods in status.reservedFor.
    pods: tuple[str, ...]


class DeviceIndex:
    def __init__(self) -> None:
        self._slices: dict[str, _Slice] = {}
        #: Node -> names of its slices.
        self._node_slices: dict[str, set[str]] = {}
        #: Device -> the node whose slice publishes it.
        self._device_node: dict[DeviceKey, str] = {}
        self._claims: dict[str, _Claim] = {}
        #: Device -> keys of the claims allocated it.
        self._holders: dict[DeviceKey, set[str]] = {}

    # ----------------------------------------------------------------------------------- handlers

    def on_slice(self, resource_slice: objects_pb2.ResourceSlice | None, name: str) -> set[str]:
        """Slice ``name`` is now ``resource_slice`` (None: deleted); the nodes whose devices changed."""
        touched = set()
        old = self._slices.pop(name, None)
        if old is not None:
            touched.add(old.node)
            names = self._node_slices.get(old.node, set())
            names.discard(name)
            if not names:
                self._node_slices.pop(old.node, None)
            for key in old.keys():
                if self._device_node.get(key) == old.node:
                    del self._device_node[key]
        spec = resource_slice.spec if resource_slice is not None else None
        if spec is not None and spec.node_name:
            new = _Slice(spec.node_name, spec.driver, spec.pool.name,
                         tuple((device.name, device.allow_multiple_allocations) for device in spec.devices))
            self._slices[name] = new
            self._node_slices.setdefault(new.node, set()).add(name)
            self._device_node.update(dict.fromkeys(new.keys(), new.node))
            touched.add(new.node)
        return touched

    def on_claim(self, claim: objects_pb2.ResourceClaim | None, key: str) -> set[str]:
        """Claim ``key`` (namespace/name) is now ``claim`` (None: deleted); the nodes whose devices'
        holders changed."""
        old = self._claims.pop(key, None)
        new = _claim(claim) if claim is not None else None
        devices = {hold.device for version in (old, new) if version is not None for hold in version.holds}
        if old is not None:
            for hold in old.holds:
                holders = self._holders.get(hold.device, set())
                holders.discard(key)
                if not holders:
                    self._holders.pop(hold.device, None)
        if new is not None and new.holds:
            self._claims[key] = new
            for hold in new.holds:
                self._holders.setdefault(hold.device, set()).add(key)
        if old == new:
            return set()
        return {self._device_node[device] for device in devices if device in self._device_node}

    # ------------------------------------------------------------------------------------ reading

    def devices_of(self, node: str) -> list[Json]:
        """The contract's DEVICE list of ``node``: its slices' devices (slices by name, devices in slice
        order), each with the claims that hold it."""
        devices = []
        for name in sorted(self._node_slices.get(node, ())):
            published = self._slices[name]
            for device, shared in published.devices:
                key = (published.driver, published.pool, device)
                devices.append({
                    "driver": published.driver,
                    "pool": published.pool,
                    "name": device,
                    "shared": shared,
                    "holders": [holder for claim in sorted(self._holders.get(key, ()))
                                for holder in self._holders_in(claim, key)],
                })
        return devices

    def _holders_in(self, claim_key: str, device: DeviceKey) -> list[Json]:
        """Each allocation of ``device`` to the claim (a claim may hold several shares of one device)."""
        claim = self._claims[claim_key]
        return [{"claim": claim_key, "request": hold.request, "shareID": hold.share_id,
                 "pods": list(claim.pods)}
                for hold in claim.holds if hold.device == device]


def _claim(claim: objects_pb2.ResourceClaim) -> _Claim:
    namespace = claim.metadata.namespace
    results = claim.status.allocation.devices.results if claim.status.HasField("allocation") else ()
    return _Claim(
        holds=tuple(_Hold((result.driver, result.pool, result.device), result.request,
                          result.share_id if result.HasField("share_id") else None)
                    for result in results),
        pods=tuple(sorted(f"{namespace}/{consumer.name}" for consumer in claim.status.reserved_for
                          if consumer.resource == POD_RESOURCE)),
    )
