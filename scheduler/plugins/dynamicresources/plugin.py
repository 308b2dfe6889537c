"""DynamicResources: a pod's ResourceClaims must be allocated, as kube-scheduler's plugin (Kubernetes
1.37, structured parameters).

PreEnqueue keeps a pod out of the queue until every claim it names exists (a template's claim has been
generated). PreFilter reads the pod's claims: those allocated already constrain the nodes by their
allocation's nodeSelector; the others get an allocator over the slices and classes, counting as taken
what every other claim holds and what is being allocated right now. Filter runs it per node; Reserve
remembers the node's allocation (with the profile's device ranker, ``ranking``, it allocates for that
node again, trying devices in the ranker's order) and marks it in flight, so no other pod is given its
devices while it is written; PreBind writes each claim's allocation and the pod's reservedFor entry (a
status update, fenced like every write of the leader) and keeps the written claim until the informer
echoes it.
PostFilter deallocates an allocated claim that no node can use when no other pod uses it. In
preemption's dry run a victim's claim reserved for that victim alone counts as free.

A pod's claim that matches its PodGroup's claim (KEP-5729) is the group's: the first member allocates it
and PreBind reserves it for the PodGroup (one reservedFor entry); the other members find it allocated
and reserved for their group, and only need a node its allocation allows. Inside a gang's whole-group
cycle the first member's allocation is still in flight when the next member is placed: that member uses
it as it is, so the group's claim is allocated once per cycle. Unreserve of the member whose PreBind
wrote the allocation takes it back when no member of the group is bound, and so does PodGroupPostFilter
when a gang's whole-group cycle did not fit: the group's claims reserved for it alone (or for nobody)
are deallocated, so that its next attempt may allocate them anew.

A pod's extended resources that DeviceClasses serve get a claim of their own on nodes without them in
their allocatable (``extended``; ``extended_binding`` creates it in PreBind and deletes it in Unreserve).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from cluster.api import errors, kinds, objects_pb2
from cluster.api.dra.podclaims import (
    can_be_reserved,
    consumer_reference,
    group_claim_name,
    group_consumer_reference,
    is_pod_group_consumer,
    is_reserved_for,
    is_reserved_for_group,
)
from scheduler.dra import (
    AllocatedState,
    AllocationError,
    Allocator,
    NodeAllocationError,
    share_ids_from,
)
from scheduler.dra.capacity_table import capacity_table
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    DeviceRankPlugin,
    EventResource,
    FailedPodGroup,
    Handle,
    NodeInfo,
    NodeScore,
    NodeSet,
    NotFound,
    PodGroupPostFilterResult,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    Signature,
    Status,
    group_key_of,
)
from scheduler.plugins.dynamicresources.claims import ClaimProblem, pod_claims, resolve_pod_claims
from scheduler.plugins.dynamicresources.extended import (
    CANNOT_FIT,
    CANNOT_SCHEDULE,
    ExtendedClaim,
    extended_requests,
    find_claim,
    needed_on,
    special_claim,
)
from scheduler.plugins.dynamicresources.extended_binding import ExtendedBinding
from scheduler.plugins.dynamicresources.fast_filter import PlainFilter, plain_request
from scheduler.plugins.dynamicresources.hints import after_claim_change, after_pod_change
from scheduler.plugins.dynamicresources.ranking import ranked_allocations, try_ranked_allocation
from scheduler.plugins.dynamicresources.state import (
    NOTHING_ALLOCATED,
    STATE_KEY,
    ClaimsState,
    allocated_state,
    claim_ref,
)
from scheduler.plugins.dynamicresources.writes import WRITE_ATTEMPTS, BindError, write_claim_status
from scheduler.plugins.helpers import NodeSelector, default_normalize_score

NAME = "DynamicResources"

#: How many subrequests a firstAvailable list may have (the API's limit).
FIRST_AVAILABLE_MAX_SIZE = 8

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
IN_USE = "resourceclaim in use"


class DynamicResources:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._dra = handle.dra_manager
        self._claims = handle.dra_manager.resource_claims
        self._extended_resources = handle.dra_manager.extended_resources
        self._extended = ExtendedBinding(handle)
        table = capacity_table(handle.dra_manager)
        #: The slices' index, with each device's selector results, kept across pods until slices change
        #: (the capacity table's: its devices are the allocator's).
        self._slice_indexes = table.slice_indexes
        #: The batch Filter of plain requests.
        self._plain = PlainFilter(table)
        #: Unreserve's reservedFor removals, running in the background (Unreserve cannot wait).
        self._unreserving: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """A pod with claims (or extended resources DRA serves) depends on what other claims hold, beyond
        its NodeInfo: never batched."""
        if pod.pod.spec.resource_claims or extended_requests(pod, self._extended_resources):
            return None
        return ()

    # --------------------------------------------------------------------------------- PreEnqueue

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.pod.spec.resource_claims:
            return None
        try:
            pod_claims(pod.pod, self._claims, self._group_of(pod))
        except ClaimProblem as problem:
            return Status.unresolvable(str(problem))
        return None

    def _group_of(self, pod: PodInfo) -> objects_pb2.PodGroup | None:
        """The pod's PodGroup when it has claims of its own to share (None otherwise)."""
        return self._group_by_key(pod.group_key)

    def _group_by_key(self, key: str) -> objects_pb2.PodGroup | None:
        if not key:
            return None
        group = self._handle.pod_groups.pod_group(key)
        return group if group is not None and group.spec.resource_claims else None

    # ---------------------------------------------------------------------------------- PreFilter

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        wanted = extended_requests(pod, self._extended_resources)
        if not pod.pod.spec.resource_claims and not wanted:
            return None, Status.skip()
        group = self._group_of(pod)
        try:
            resolved = resolve_pod_claims(pod.pod, self._claims, group)
        except ClaimProblem as problem:
            return None, Status.unresolvable(str(problem))
        claims = [claim for claim, _ in resolved]
        group_claims = frozenset(index for index, (_, of_group) in enumerate(resolved) if of_group)
        extended = None
        if wanted:
            claim = find_claim(pod.pod, self._claims.list()) or special_claim(pod.pod)
            extended = ExtendedClaim(claim=claim, wanted=wanted, pending_uid=claim.metadata.uid)
        if not claims and extended is None:
            return None, Status.skip()
        available_on: list[NodeSelector | None] = []
        to_allocate: list[int] = []
        gang = bool(group_claims) and self._handle.pod_groups.policy(pod.group_key) is not None
        for index, claim in enumerate(claims):
            of_group = index in group_claims
            if not claim.status.HasField("allocation") and of_group and gang and (
                    in_flight := self._claims.pending_allocation(claim.metadata.uid)) is not None:
                # Another member of the gang allocated it in this whole-group cycle: it is the group's
                # allocation (the gang's PreBinds run in placement order, the allocating member's first).
                claims[index] = claim = in_flight
            if claim.status.HasField("allocation"):
                reserved = (is_reserved_for_group(claim, group.metadata.name)
                            if of_group and group is not None else is_reserved_for(claim, pod.pod))
                if not can_be_reserved(claim) and not reserved:
                    return None, Status.unresolvable(IN_USE)
                allocation = claim.status.allocation
                available_on.append(NodeSelector.from_proto(allocation.node_selector)
                                    if allocation.HasField("node_selector") else None)
                continue
            available_on.append(None)
            if self._claims.claim_has_pending_allocation(claim.metadata.uid):
                # Another pod's allocation of this claim is being written: wait for it.
                return None, Status.unresolvable(
                    f"resource claim {claim_ref(claim)} is in the process of being allocated")
            if (class_problem := self._class_problem(claim)) is not None:
                return None, class_problem
            to_allocate.append(index)
        allocated = self._claims.allocated_devices() if to_allocate or extended else NOTHING_ALLOCATED
        state.write(STATE_KEY, ClaimsState(
            claims=claims, available_on=available_on, to_allocate=to_allocate, allocated=allocated,
            make_allocator=self._allocator, extended=extended, group=group if group_claims else None,
            group_claims=group_claims))
        return None, None

    def _class_problem(self, claim: objects_pb2.ResourceClaim) -> Status | None:
        """Why the claim's requests cannot be allocated now: a class that does not exist (the pod waits
        for a DeviceClass event), a request of no known type (an error)."""
        for request in claim.spec.devices.requests:
            if request.first_available:
                wanted = [(sub.device_class_name, f"{request.name}/{sub.name}")
                          for sub in request.first_available]
            else:
                wanted = [(request.exactly.device_class_name, request.name)]
            for class_name, request_name in wanted:
                if not class_name:
                    return Status.as_error(f"request {request_name}: unsupported request type")
                if self._dra.device_classes.get(class_name) is None:
                    return Status.unresolvable(
                        f"request {request_name}: device class {class_name} does not exist")
        return None

    def _allocator(
        self, claims: Sequence[objects_pb2.ResourceClaim], allocated: AllocatedState
    ) -> Allocator:
        return Allocator(claims, allocated, self._dra.device_classes.get, self._dra.resource_slices.list(),
                         new_share_id=share_ids_from(self._handle.rng), slice_indexes=self._slice_indexes)

    def _with_extended(self, claims_state: ClaimsState, claim: objects_pb2.ResourceClaim) -> Allocator:
        """The allocator of the claims to allocate and, last, the claim for extended resources."""
        return self._allocator([*(claims_state.claims[index] for index in claims_state.to_allocate), claim],
                               allocated_state(claims_state.allocated))

    def pre_filter_extensions(self) -> DynamicResources:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        if (claims_state := _state(state, pod)) is not None:
            for claim in self._sole_claims(pod_to_add.pod):
                claims_state.unfree(claim)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        if (claims_state := _state(state, pod)) is not None:
            for claim in self._sole_claims(pod_to_remove.pod):
                claims_state.free(claim)
        return None

    def _sole_claims(self, pod: objects_pb2.Pod) -> list[objects_pb2.ResourceClaim]:
        """The allocated claims of ``pod`` reserved for it alone: freed when it goes."""
        if not pod.spec.resource_claims:
            return []
        try:
            claims = pod_claims(pod, self._claims)
        except ClaimProblem:
            return []
        return [claim for claim in claims if claim.status.HasField("allocation")
                and len(claim.status.reserved_for) == 1 and is_reserved_for(claim, pod)]

    # ------------------------------------------------------------------------------------- Filter

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        claims_state = _state(state, pod)
        if claims_state is None:
            return None
        node = node_info.node
        if node is None:
            return Status.as_error("node not found")
        unavailable = [index for index, selector in enumerate(claims_state.available_on)
                       if selector is not None and not selector.matches(node)]
        if unavailable:
            claims_state.unavailable.update(unavailable)
            return Status.unresolvable(NOT_AVAILABLE)
        extended = claims_state.extended
        allocator = None
        if extended is not None:
            if extended.stale:
                return Status.unresolvable(CANNOT_SCHEDULE)
            needed = needed_on(extended.wanted, node_info, self._extended_resources)
            if needed is None:
                return Status.unresolvable(CANNOT_FIT)
            if needed:
                # This node lacks resources a class serves: allocate them with the pod's other claims.
                variant = extended.variant(pod.pod, needed, self._extended_resources,
                                           lambda claim: self._with_extended(claims_state, claim))
                extended.on_node[node.metadata.name] = variant
                allocator = variant.allocator
        if allocator is None:
            allocator = claims_state.allocator
        if allocator is None:
            return None
        try:
            allocations = allocator.allocate(node)
        except NodeAllocationError as err:
            return Status.unresolvable(str(err))
        except AllocationError as err:
            # Something is wrong with a claim or a class (a CEL runtime error): not the node's fault.
            return Status.as_error(err)
        if allocations is None:
            try:
                detail = str(allocator.unfit(node))
            except AllocationError as err:
                detail = str(err)
            return _cannot_allocate(detail)
        claims_state.node_allocations[node.metadata.name] = allocations
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        """``filter`` of each node. A plain request (fast_filter.py) is decided on the snapshot's nodes
        at once, from the device capacity table, leaving the allocation on the chosen node to Reserve;
        the nodes that table cannot decide, and every other pod's, are searched node by node."""
        claims_state = _state(state, pod)
        request = None if claims_state is None else plain_request(claims_state)
        if claims_state is not None and request is not None:
            decided = self._plain.filter(claims_state, request, nodes, _cannot_allocate)
            if decided is not None:
                claims_state.allocate_in_reserve = True
                statuses, unsure = decided
                for position in unsure:
                    statuses[position] = self.filter(state, pod, nodes[position])
                return statuses
        return [self.filter(state, pod, node_info) for node_info in nodes]

    # ---------------------------------------------------------------------------------------- Score

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Only a firstAvailable request gives nodes different scores: skip Score without one."""
        claims_state = _state(state, pod)
        if claims_state is None or not any(request.first_available for claim in claims_state.claims
                                           for request in claim.spec.devices.requests):
            return Status.skip()
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        claims_state = _state(state, pod)
        if claims_state is None:
            return 0
        allocations = claims_state.node_allocations.get(node_info.name)
        return 0 if allocations is None else prioritized_list_score(claims_state, allocations)

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(scores)
        return None

    # --------------------------------------------------------------------------------- PostFilter

    async def post_filter(
        self, state: CycleState, pod: PodInfo, node_to_status: Any
    ) -> tuple[PostFilterResult | None, Status | None]:
        claims_state = _state(state, pod)
        if claims_state is None:
            if not pod.pod.spec.resource_claims:
                return None, Status.unschedulable()
            return None, Status.unschedulable("no new claims to deallocate")
        extended = claims_state.extended
        if extended is not None and extended.stale:
            try:
                await self._extended.delete(extended.claim)
            except errors.ApiError as err:
                return None, Status.as_error(f"delete claim {claim_ref(extended.claim)}: {err.message}")
            return None, Status.unschedulable("deletion of ResourceClaim completed")
        for index in sorted(claims_state.unavailable):
            claim = self._claims.get(claims_state.claims[index].metadata.namespace,
                                     claims_state.claims[index].metadata.name)
            if claim is None or not claim.status.HasField("allocation"):
                continue  # an allocation of the pod's group still in flight, or gone meanwhile
            if self._only_user(claims_state, index, claim, pod):
                deallocated = objects_pb2.ResourceClaim()
                deallocated.CopyFrom(claim)
                deallocated.status.ClearField("reserved_for")
                deallocated.status.ClearField("allocation")
                try:
                    await self._handle.client.update_status(deallocated)
                except errors.ApiError as err:
                    return None, Status.as_error(f"deallocate claim {claim_ref(claim)}: {err.message}")
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    def pod_group_post_filter(
        self, group: FailedPodGroup
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """A gang's whole-group cycle did not fit: deallocate the group's allocated claims reserved for it
        alone or for nobody, when no member of it is bound (upstream's PodGroup PostFilter). Never ends
        PodGroupPostFilter: preemption runs after it."""
        key = group.policy.group
        pod_group = self._group_by_key(key)
        if pod_group is None or self._handle.pod_groups.bound_count(key) > 0:
            return None, Status.unschedulable()
        released = 0
        for entry in pod_group.spec.resource_claims:
            name = group_claim_name(pod_group, entry)
            claim = self._claims.get(pod_group.metadata.namespace, name) if name is not None else None
            if claim is None or not claim.status.HasField("allocation"):
                continue
            reserved = claim.status.reserved_for
            only_the_group = len(reserved) == 1 and is_reserved_for_group(claim, pod_group.metadata.name)
            if reserved and not only_the_group:
                continue
            self._in_background(self._unreserve(claim, group_consumer_reference(pod_group)))
            released += 1
        return None, (Status.unschedulable(f"deallocating {released} ResourceClaim(s) of the pod group")
                      if released else Status.unschedulable())

    def _only_user(self, claims_state: ClaimsState, index: int, claim: objects_pb2.ResourceClaim,
                   pod: PodInfo) -> bool:
        """Whether allocated ``claim`` is reserved for nobody, or only for ``pod`` (for the group's claim:
        only for its PodGroup, none of whose members is bound): deallocating it takes nothing from
        anyone else."""
        reserved = claim.status.reserved_for
        if not reserved:
            return True
        if len(reserved) != 1:
            return False
        group = claims_state.group
        if index in claims_state.group_claims and group is not None:
            return (is_reserved_for_group(claim, group.metadata.name)
                    and self._handle.pod_groups.bound_count(pod.group_key) == 0)
        return is_reserved_for(claim, pod.pod)

    # ---------------------------------------------------------------------------- Reserve, Unreserve

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        claims_state = _state(state, pod)
        if claims_state is None:
            return None
        extended = claims_state.extended
        variant = None if extended is None else extended.on_node.get(node_name)
        if not claims_state.to_allocate and variant is None:
            return None
        allocations = claims_state.node_allocations.get(node_name)
        ranker = self._handle.device_ranker()
        ranked = False
        if allocations is None and claims_state.allocate_in_reserve:
            if ranker is not None and variant is None:
                # Filter's batch form left the allocation to Reserve: the ranker's search alone gives it
                # when it succeeds (it fits exactly where the allocator's order does); the allocator's
                # order, then the ranker's again, only when it does not.
                allocations = self._allocate_ranked_on(ranker, state, pod, claims_state, node_name)
                ranked = allocations is not None
            if allocations is None:
                found = self._allocate_on(claims_state, node_name)
                if isinstance(found, Status):
                    return found
                allocations = found
        if allocations is None:
            return Status.as_error(f"claim allocation not found for node {node_name}")
        if ranker is not None and not ranked:
            allocator = claims_state.allocator if variant is None else variant.allocator
            assert allocator is not None  # Filter allocated with it
            node_info = self._handle.snapshot().node_infos().get(node_name)
            allocations = ranked_allocations(ranker, state, pod, node_info, allocator, allocations)
        wanted = len(claims_state.to_allocate) + (variant is not None)
        if len(allocations) != wanted:
            return Status.as_error(f"internal error, have {len(allocations)} allocations, "
                                   f"{wanted} claims to allocate")
        if extended is not None and variant is not None:
            extended.chosen = (variant, allocations[-1])
            self._extended.reserve(extended)
        for index, allocation in zip(claims_state.to_allocate, allocations, strict=False):
            claims_state.chosen[index] = allocation
            allocated = objects_pb2.ResourceClaim()
            allocated.CopyFrom(claims_state.claims[index])
            allocated.status.allocation.CopyFrom(allocation)
            self._claims.signal_claim_pending_allocation(allocated.metadata.uid, allocated)
        return None

    def _allocate_on(self, claims_state: ClaimsState,
                     node_name: str) -> list[objects_pb2.AllocationResult] | Status | None:
        """The allocation on the chosen node that Filter's batch form left to Reserve (the allocator's, as
        the per-node Filter would have found it); None if the claims do not fit there after all."""
        allocator = claims_state.allocator
        try:
            node = self._handle.snapshot().node_infos().get(node_name).node
        except KeyError:
            return None
        if allocator is None or node is None:
            return None
        try:
            allocations = allocator.allocate(node)
        except AllocationError as err:
            return Status.as_error(err)
        if allocations is not None:
            claims_state.node_allocations[node_name] = allocations
        return allocations

    def _allocate_ranked_on(self, ranker: DeviceRankPlugin, state: CycleState, pod: PodInfo,
                            claims_state: ClaimsState,
                            node_name: str) -> list[objects_pb2.AllocationResult] | None:
        """The allocation on the chosen node in the ranker's device order; None when there is none to
        take from that search (the node gone, an error, no fit)."""
        allocator = claims_state.allocator
        try:
            node_info = self._handle.snapshot().node_infos().get(node_name)
        except KeyError:
            return None
        if allocator is None or node_info.node is None:
            return None
        allocations = try_ranked_allocation(ranker, state, pod, node_info, allocator)
        if allocations is not None:
            claims_state.node_allocations[node_name] = allocations
        return allocations

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        claims_state = _state(state, pod)
        if claims_state is None:
            return
        for index, claim in enumerate(claims_state.claims):
            # Only the allocation this pod chose: another member of its group may still bind with one
            # it found in flight.
            uid = claim.metadata.uid
            if index in claims_state.chosen and self._claims.remove_claim_pending_allocation(uid):
                self._claims.assumed_claim_restore(claim.metadata.namespace, claim.metadata.name)
            if index in claims_state.group_claims:
                if index in claims_state.written_for_group and claims_state.group is not None \
                        and self._handle.pod_groups.bound_count(pod.group_key) == 0:
                    self._in_background(self._unreserve(claim, group_consumer_reference(claims_state.group)))
            elif claim.status.HasField("allocation") and is_reserved_for(claim, pod.pod):
                self._in_background(self._unreserve(claim, consumer_reference(pod.pod)))
        if claims_state.extended is not None:
            created = self._extended.unreserve(claims_state.extended)
            if created is not None:
                self._in_background(self._extended.delete_quietly(created))

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._unreserving.add(task)
        task.add_done_callback(self._unreserving.discard)

    async def _unreserve(self, claim: objects_pb2.ResourceClaim,
                         consumer: objects_pb2.ResourceClaimConsumerReference) -> None:
        """Take the consumer out of the claim's reservedFor; a failure is left for the next attempt of the
        pod (which finds itself reserved already) or the resourceclaim controller. A PodGroup that was
        its last consumer takes the allocation with it: the group allocated it."""
        client = self._handle.client
        current = claim
        for _ in range(WRITE_ATTEMPTS):
            updated = objects_pb2.ResourceClaim()
            updated.CopyFrom(current)
            del updated.status.reserved_for[:]
            updated.status.reserved_for.extend(
                reserved for reserved in current.status.reserved_for if reserved.uid != consumer.uid)
            if is_pod_group_consumer(consumer) and not updated.status.reserved_for:
                updated.status.ClearField("allocation")
                del updated.status.devices[:]
            try:
                await client.update_status(updated)
                return
            except errors.Conflict:
                try:
                    current = await client.get(kinds.RESOURCE_CLAIM.name, claim.metadata.name,
                                               claim.metadata.namespace)
                except errors.ApiError:
                    return
                if not any(reserved.uid == consumer.uid for reserved in current.status.reserved_for):
                    return
            except errors.ApiError:
                return

    # ------------------------------------------------------------------------------------- PreBind

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        claims_state = _state(state, pod)
        if claims_state is None:
            return None
        for index, claim in enumerate(claims_state.claims):
            group = claims_state.group if index in claims_state.group_claims else None
            if group is not None:
                # The group's claim as known now: an earlier member's PreBind may have written it (read
                # from the server when the tracker does not show it yet and this pod did not allocate it).
                claim = self._claims.get(claim.metadata.namespace, claim.metadata.name) or claim
                if index not in claims_state.chosen:
                    # A claim this pod allocated is written whatever happened meanwhile: the write finds
                    # out, and ends its allocation in flight.
                    if not is_reserved_for_group(claim, group.metadata.name):
                        try:
                            claim = await self._handle.client.get(
                                kinds.RESOURCE_CLAIM.name, claim.metadata.name, claim.metadata.namespace)
                        except errors.ApiError as err:
                            return Status.as_error(err)
                    if is_reserved_for_group(claim, group.metadata.name):
                        claims_state.claims[index] = claim
                        continue
                consumer = group_consumer_reference(group)
            elif is_reserved_for(claim, pod.pod):
                continue
            else:
                consumer = consumer_reference(pod.pod)
            try:
                claims_state.claims[index] = await self._bind_claim(claims_state, index, claim, consumer)
            except (errors.ApiError, BindError) as err:
                return Status.as_error(err)
            if group is not None and index in claims_state.chosen:
                claims_state.written_for_group.add(index)
        extended = claims_state.extended
        if extended is not None and extended.chosen is not None:
            try:
                await self._extended.bind(extended, pod.pod)
            except (errors.ApiError, BindError) as err:
                return Status.as_error(err)
        return None

    async def _bind_claim(self, claims_state: ClaimsState, index: int, claim: objects_pb2.ResourceClaim,
                          consumer: objects_pb2.ResourceClaimConsumerReference) -> objects_pb2.ResourceClaim:
        """Write the allocation Reserve chose (if the scheduler allocated the claim) and the consumer's
        reservedFor entry."""
        allocation = claims_state.chosen.get(index)
        try:
            updated = await write_claim_status(self._handle.client, claim, allocation, consumer)
            if allocation is not None or index in claims_state.group_claims:
                # The group's other members read the claim from the tracker before the informer has it.
                self._claims.assume_claim_after_api_call(updated)
            return updated
        finally:
            if allocation is not None:
                self._claims.remove_claim_pending_allocation(claims_state.claims[index].metadata.uid)

    # ------------------------------------------------------------------------------------- events

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        tracker = self._claims

        def group_of(pod: objects_pb2.Pod) -> objects_pb2.PodGroup | None:
            return self._group_by_key(group_key_of(pod))

        added_or_updated = ActionType.ADD | ActionType.UPDATE
        return [
            # A node's labels may match an allocation's or a slice's node selector.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, added_or_updated),
                                 lambda pod, old, new: after_claim_change(
                                     tracker, group_of(pod), pod, old, new)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                lambda pod, old, new: after_pod_change(tracker, group_of(pod), pod, old, new)),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, added_or_updated)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, added_or_updated)),
        ]


def prioritized_list_score(
    claims_state: ClaimsState, allocations: Sequence[objects_pb2.AllocationResult]
) -> int:
    """Upstream's computeScore: each firstAvailable request scores more the earlier the subrequest its
    allocation picked (8 for the first, the most a list may have, 7 for the second, ...)."""
    score = 0
    fresh = iter(allocations)
    for claim in claims_state.claims:
        allocation = claim.status.allocation if claim.status.HasField("allocation") else next(fresh)
        picked = {result.request for result in allocation.devices.results if "/" in result.request}
        for request in claim.spec.devices.requests:
            for position, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in picked:
                    score += FIRST_AVAILABLE_MAX_SIZE - position
    return score


def _cannot_allocate(detail: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (CANNOT_ALLOCATE,), detail=detail)


def _state(state: CycleState, pod: PodInfo) -> ClaimsState | None:
    """The pod's claims state; None for a pod without claims or extended resources (PreFilter skipped it) or
    when PreFilter did not get as far as writing it."""
    if not pod.pod.spec.resource_claims and not pod.requests.scalar:
        return None
    try:
        claims_state: ClaimsState = state.read(STATE_KEY)
    except NotFound:
        return None
    return claims_state


def new(args: None, handle: Handle) -> DynamicResources:
    return DynamicResources(handle)
