"""The resourceclaim controller: makes each pod the ResourceClaims its ResourceClaimTemplates describe,
and releases claims their pods no longer use, as kube-controller-manager's pkg/controller/resourceclaim
does.

For a pod (keys "pod:namespace/name"):
- Each spec.resourceClaims[] entry naming a template, whose claim is not generated yet (not recorded in
  status.resourceClaimStatuses, or recorded but gone), gets a claim made from the template: generateName
  ``<pod>-<entry>-`` (both parts cut in proportion when longer than 57 characters), the template's labels
  and annotations plus ``resource.kubernetes.io/pod-claim-name: <entry>``, an ownerReference to the pod
  with controller and blockOwnerDeletion set, and the template's spec. The claims made are recorded in
  the pod's status.resourceClaimStatuses with one UpdateStatus at the resourceVersion read; a conflict
  sends the pod back to the queue. Before making a claim the controller looks for one it made already
  (owned by the pod, with that annotation) through an index of claims by owner, and remembers the
  claims it created until its informer shows them, so a retry never makes a second claim.
- A missing template is an error: logged, reported once on the pod as a Warning Event
  FailedResourceClaimCreation, and retried with a backoff and as soon as the template appears.
- A pod already bound to a node whose claim is allocated but not reserved for it (bound without the
  scheduler) gets the claim reserved for it, as upstream.
- Pods being deleted or done (Succeeded, Failed, or deleted before being scheduled) get nothing.
- An entry that matches an entry of the pod's PodGroup exactly (KEP-5729) is the group's claim: nothing
  is made for the pod; a template's claim generated for the group is recorded in the pod's status once
  the group's status records it, and a bound pod's allocated group claim is reserved for the PodGroup.
  A pod that names a PodGroup (spec.schedulingGroup) not seen yet waits for it, so that its entries are
  not taken for its own.

For a PodGroup (keys "podgroup:namespace/name"):
- Each spec.resourceClaims[] entry naming a template gets one claim made from it as for a pod: generateName
  ``<podgroup>-<entry>-``, the annotation, an ownerReference to the PodGroup (controller and
  blockOwnerDeletion set), recorded in the PodGroup's status.resourceClaimStatuses; then the group's pods
  are synced to record it too.

For a claim (keys "claim:namespace/name"):
- Every reservedFor entry of a pod that no longer exists, has another uid, or is done, and of a PodGroup
  that no longer exists (or has another uid), is removed with UpdateStatus. When that empties
  reservedFor the allocation is cleared too, so that its devices are free again for other claims.
- A claim not reserved for anyone whose controlling pod is gone or done, or whose controlling PodGroup
  is gone, is deleted (with its resourceVersion as precondition). podsched has no garbage collector of
  ownerReferences, so this controller also deletes what upstream leaves to the garbage collector: a pod
  (or PodGroup) missing from the informer is looked up on the server before its claim goes.

Indexes keep every event at O(affected objects): pods by the claims they name, by the templates they
use and by their PodGroup, claims by the uid of the pod or PodGroup that controls them.

Where upstream relies on finalizers, podsched, which models none, cannot: a PodGroup's reservation goes
as soon as the PodGroup is deleted, even while its pods run (upstream's finalizer holds the PodGroup until
they are done); a claim is deleted at once even when allocated and in use; and every allocation is taken
as made by the scheduler (which upstream tells by resource.kubernetes.io/delete-protection), so emptying
reservedFor always clears it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Mapping
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.dra.podclaims import (
    POD_CLAIM_NAME_ANNOTATION,
    POD_RESOURCE,
    can_be_reserved,
    claim_name_of,
    claim_names_of,
    claim_not_needed,
    claims_of,
    consumer_reference,
    controlling_pod,
    controlling_pod_group,
    group_claim_name,
    group_claim_of,
    group_consumer_reference,
    is_pod_group_consumer,
    is_reserved_for,
    is_reserved_for_group,
    not_for_group,
    not_for_pod,
)
from cluster.api.kinds import POD, POD_GROUP, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE
from cluster.api.quota import FINISHED_PHASES
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController
from cluster.controllers.events import WARNING, record_event, reference_to

log = logging.getLogger(__name__)

POD_KEY_PREFIX = "pod:"
CLAIM_KEY_PREFIX = "claim:"
POD_GROUP_KEY_PREFIX = "podgroup:"
#: Pods by "namespace/name" of each claim they name (resourceClaimName or a recorded generated name).
CLAIM_INDEX = "claim"
#: Pods (and PodGroups) by "namespace/name" of each ResourceClaimTemplate they use.
TEMPLATE_INDEX = "template"
#: Pods by "namespace/name" of the PodGroup they name in spec.schedulingGroup.
POD_GROUP_INDEX = "podgroup"
#: Claims by the uid of the pod or PodGroup that controls them.
OWNER_INDEX = "owner"
#: A generated name's base is at most this long: a DNS label (63) less the 5 random characters and a
#: hyphen, so that both the pod's and the entry's name survive the server's cut.
MAX_GENERATE_NAME_BASE = 57
#: How many deleted pods' (and PodGroups') uids are remembered (upstream's maxUIDCacheEntries): a
#: reservation of one of them goes without asking the server.
DELETED_UIDS_REMEMBERED = 500
EVENT_COMPONENT = "resource_claim"
FAILED_RESOURCE_CLAIM_CREATION = "FailedResourceClaimCreation"


def generate_name_for(pod_name: str, pod_claim_name: str) -> str:
    """The generateName of the claim made for entry ``pod_claim_name`` of pod (or PodGroup) ``pod_name``."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) <= MAX_GENERATE_NAME_BASE:
        return base
    # Cut both names in proportion, where the server would cut the end (the entry's name) away.
    pod_part = pod_name[: len(pod_name) * MAX_GENERATE_NAME_BASE // len(base)]
    claim_part = pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME_BASE // len(base)]
    return f"{pod_part}-{claim_part}"


def is_pod_done(pod: objects_pb2.Pod) -> bool:
    """Whether none of ``pod``'s containers runs or ever will: it finished, or was deleted unscheduled."""
    return pod.status.phase in FINISHED_PHASES or (
        pod.metadata.HasField("deletion_timestamp") and not pod.spec.node_name)


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _claims_named_by(pod: objects_pb2.Pod) -> list[str]:
    return [_key(pod.metadata.namespace, name) for name in claim_names_of(pod)]


def _templates_used_by(pod: objects_pb2.Pod) -> list[str]:
    return [_key(pod.metadata.namespace, entry.resource_claim_template_name)
            for entry in pod.spec.resource_claims if entry.HasField("resource_claim_template_name")]


def _controlling_pod_uid(claim: objects_pb2.ResourceClaim) -> list[str]:
    owner = controlling_pod(claim)
    return [owner.uid] if owner is not None else []


def _controller_uid(claim: objects_pb2.ResourceClaim) -> list[str]:
    """The uid of the pod or PodGroup that controls ``claim`` (uids are unique across kinds)."""
    owner = controlling_pod(claim) or controlling_pod_group(claim)
    return [owner.uid] if owner is not None else []


def _templates_of_group(group: objects_pb2.PodGroup) -> list[str]:
    return [_key(group.metadata.namespace, entry.resource_claim_template_name)
            for entry in group.spec.resource_claims if entry.HasField("resource_claim_template_name")]


def _pod_group_named_by(pod: objects_pb2.Pod) -> list[str]:
    """The PodGroup whose claims ``pod`` may share: spec.schedulingGroup's (Coscheduling's groups have
    no claims)."""
    if not pod.spec.resource_claims or not pod.spec.scheduling_group.HasField("pod_group_name"):
        return []
    return [_key(pod.metadata.namespace, pod.spec.scheduling_group.pod_group_name)]


def _awaits_reservation(claim: objects_pb2.ResourceClaim, pod: objects_pb2.Pod) -> bool:
    """Whether allocated ``claim`` is to be reserved for ``pod``, and may be."""
    return claim.status.HasField("allocation") and not is_reserved_for(claim, pod) and can_be_reserved(claim)


def _awaits_group_reservation(claim: objects_pb2.ResourceClaim, group: objects_pb2.PodGroup) -> bool:
    """Whether allocated ``claim`` is to be reserved for PodGroup ``group``, and may be."""
    return (claim.status.HasField("allocation") and not is_reserved_for_group(claim, group.metadata.name)
            and can_be_reserved(claim))


class RecentUids:
    """The last ``size`` uids added, oldest forgotten first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._uids: collections.OrderedDict[str, None] = collections.OrderedDict()

    def add(self, uid: str) -> None:
        self._uids[uid] = None
        self._uids.move_to_end(uid)
        while len(self._uids) > self._size:
            self._uids.popitem(last=False)

    def __contains__(self, uid: object) -> bool:
        return uid in self._uids


class ResourceClaimController(InformerController):
    """Makes pods' claims from their templates and releases claims pods no longer use while ``run()``
    runs."""

    name = "resourceclaim"

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._pods = Informer(
            client, POD, indexers={CLAIM_INDEX: _claims_named_by, TEMPLATE_INDEX: _templates_used_by,
                                   POD_GROUP_INDEX: _pod_group_named_by})
        self._claims = Informer(client, RESOURCE_CLAIM, indexers={OWNER_INDEX: _controller_uid})
        self._templates = Informer(client, RESOURCE_CLAIM_TEMPLATE)
        self._groups = Informer(client, POD_GROUP, indexers={TEMPLATE_INDEX: _templates_of_group})
        self._deleted_pods = RecentUids(DELETED_UIDS_REMEMBERED)
        self._deleted_groups = RecentUids(DELETED_UIDS_REMEMBERED)
        #: Claims this controller created that its informer has not shown yet, by key.
        self._created: dict[str, objects_pb2.ResourceClaim] = {}
        #: The creation failure last reported by an Event, by pod key: a failure is reported once.
        self._reported: dict[str, str] = {}
        self._pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._claims.add_handler(self._claim_added, self._claim_updated, self._claim_deleted)
        self._templates.add_handler(self._template_added, self._template_updated)
        self._groups.add_handler(self._group_added, self._group_updated, self._group_deleted)

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "resourceclaim": self._claims, "resourceclaimtemplate": self._templates,
                "podgroup": self._groups}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("resourceclaim controller synced: %d pods, %d claims, %d templates, %d pod groups",
                 len(self._pods), len(self._claims), len(self._templates), len(self._groups))

    def _claim(self, key: str) -> objects_pb2.ResourceClaim | None:
        claim = self._claims.get(key)
        return claim if claim is not None else self._created.get(key)

    # ----------------------------------------------------------------------------------------- events

    def _pod_added(self, pod: objects_pb2.Pod) -> None:
        self._pod_changed(pod, deleted=False)

    def _pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        self._pod_changed(new, deleted=False)

    def _pod_deleted(self, pod: objects_pb2.Pod) -> None:
        self._pod_changed(pod, deleted=True)

    def _pod_changed(self, pod: objects_pb2.Pod, *, deleted: bool) -> None:
        extended_claim = pod.status.extended_resource_claim_status.resource_claim_name
        if not pod.spec.resource_claims and not extended_claim:
            return
        namespace, uid = pod.metadata.namespace, pod.metadata.uid
        if deleted:
            self._deleted_pods.add(uid)
            self._reported.pop(_key(namespace, pod.metadata.name), None)
        if deleted or is_pod_done(pod):
            # Its claims may be released: those it names, and those it owns (one made but not recorded
            # yet among them, and the claim the scheduler made for its extended resources).
            owned = [self._claims.key(claim) for claim in self._claims.by_index(OWNER_INDEX, uid)]
            owned += [key for key, claim in self._created.items() if _controlling_pod_uid(claim) == [uid]]
            named = _claims_named_by(pod) + ([_key(namespace, extended_claim)] if extended_claim else [])
            for key in dict.fromkeys(named + owned):
                self._queue.add(CLAIM_KEY_PREFIX + key)
                if deleted:
                    # Its informer shows it soon, and its sync finds the pod among the deleted ones.
                    self._created.pop(key, None)
        if not deleted and self._pod_needs_work(pod):
            self._queue.add(POD_KEY_PREFIX + _key(namespace, pod.metadata.name))

    def _group_of(self, pod: objects_pb2.Pod) -> objects_pb2.PodGroup | None:
        """The PodGroup ``pod`` names, as the informer has it (None: none named, or not seen)."""
        keys = _pod_group_named_by(pod)
        return self._groups.get(keys[0]) if keys else None

    def _waits_for_group(self, pod: objects_pb2.Pod) -> bool:
        """Whether ``pod`` names a PodGroup not seen yet: its entries may be the group's."""
        return bool(_pod_group_named_by(pod)) and self._group_of(pod) is None

    def _pod_needs_work(self, pod: objects_pb2.Pod) -> bool:
        """Whether a sync of ``pod`` would write something: a claim to make or to record, or one to reserve
        for it (or its PodGroup)."""
        if pod.metadata.HasField("deletion_timestamp") or is_pod_done(pod) or self._waits_for_group(pod):
            return False
        group = self._group_of(pod)
        for entry, name in claims_of(pod):
            from_template = entry.HasField("resource_claim_template_name")
            group_entry = group_claim_of(group, entry)
            if group is not None and group_entry is not None:
                if self._group_entry_needs_work(pod, group, entry, self._group_claim(group, group_entry)):
                    return True
                continue
            if name is None:
                if from_template and not claim_not_needed(pod, entry):
                    return True
                continue
            claim = self._claim(_key(pod.metadata.namespace, name))
            if claim is None:
                if from_template:
                    return True
                continue  # its user has yet to create it
            if from_template and not_for_pod(pod, claim) is not None:
                continue  # someone else's claim took the generated name: its user must remove it
            if pod.spec.node_name and _awaits_reservation(claim, pod):
                return True
        return False

    def _group_needs_work(self, group: objects_pb2.PodGroup) -> bool:
        """Whether a sync of ``group`` would make a claim: a template entry whose claim is not recorded,
        is gone, or is not the group's."""
        if group.metadata.HasField("deletion_timestamp"):
            return False
        for entry in group.spec.resource_claims:
            if not entry.HasField("resource_claim_template_name"):
                continue
            name = group_claim_name(group, entry)
            claim = self._claim(_key(group.metadata.namespace, name)) if name is not None else None
            if claim is None or not_for_group(group, claim) is not None:
                return True
        return False

    def _group_claim(self, group: objects_pb2.PodGroup,
                     entry: objects_pb2.PodGroupResourceClaim) -> str | None:
        """The name of the claim ``group``'s entry stands for: as its status records it, or the one made
        for it that its status does not record yet."""
        name = group_claim_name(group, entry)
        if name is None and entry.HasField("resource_claim_template_name"):
            made = self._made_before_for(group.metadata.uid, entry.name)
            name = made.metadata.name if made is not None else None
        return name

    def _group_entry_needs_work(self, pod: objects_pb2.Pod, group: objects_pb2.PodGroup,
                                entry: objects_pb2.PodResourceClaim, name: str | None) -> bool:
        """Whether ``pod``'s entry of ``group``'s claim ``name`` is to be recorded in its status, or the
        claim reserved for the group now that the pod is bound."""
        if name is None:
            return False  # the group's sync makes it, then brings its pods here
        if entry.HasField("resource_claim_template_name") and claim_name_of(pod, entry) != name:
            return True
        claim = self._claim(_key(pod.metadata.namespace, name))
        return bool(pod.spec.node_name) and claim is not None and _awaits_group_reservation(claim, group)

    def _claim_added(self, claim: objects_pb2.ResourceClaim) -> None:
        self._claim_changed(claim, deleted=False)

    def _claim_updated(self, old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim) -> None:
        self._claim_changed(new, deleted=False)

    def _claim_deleted(self, claim: objects_pb2.ResourceClaim) -> None:
        self._claim_changed(claim, deleted=True)

    def _claim_changed(self, claim: objects_pb2.ResourceClaim, *, deleted: bool) -> None:
        key = self._claims.key(claim)
        self._created.pop(key, None)
        if not deleted:
            # Also at start: a claim may be reserved for pods that went while nobody watched.
            self._queue.add(CLAIM_KEY_PREFIX + key)
        for pod in self._pods.by_index(CLAIM_INDEX, key):
            self._pod_changed(pod, deleted=False)
        owner = controlling_pod_group(claim)
        if deleted and owner is not None:
            # A generated claim gone while its group lives: the group makes it again.
            self._queue.add(POD_GROUP_KEY_PREFIX + _key(claim.metadata.namespace, owner.name))

    def _template_added(self, template: objects_pb2.ResourceClaimTemplate) -> None:
        key = self._templates.key(template)
        for pod in self._pods.by_index(TEMPLATE_INDEX, key):
            if self._pod_needs_work(pod):
                self._queue.add(POD_KEY_PREFIX + self._pods.key(pod))
        for group in self._groups.by_index(TEMPLATE_INDEX, key):
            self._queue.add(POD_GROUP_KEY_PREFIX + self._groups.key(group))

    def _template_updated(
        self, old: objects_pb2.ResourceClaimTemplate, new: objects_pb2.ResourceClaimTemplate
    ) -> None:
        self._template_added(new)

    def _group_added(self, group: objects_pb2.PodGroup) -> None:
        self._group_changed(group, deleted=False)

    def _group_updated(self, old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> None:
        self._group_changed(new, deleted=False)

    def _group_deleted(self, group: objects_pb2.PodGroup) -> None:
        self._group_changed(group, deleted=True)

    def _group_changed(self, group: objects_pb2.PodGroup, *, deleted: bool) -> None:
        key = self._groups.key(group)
        if deleted:
            self._deleted_groups.add(group.metadata.uid)
            # Its claims are released: those it names or made (reserved for it, or to delete).
            namespace = group.metadata.namespace
            named = [_key(namespace, name) for entry in group.spec.resource_claims
                     if (name := group_claim_name(group, entry)) is not None]
            owned = [self._claims.key(claim)
                     for claim in self._claims.by_index(OWNER_INDEX, group.metadata.uid)]
            for claim_key in dict.fromkeys(named + owned):
                self._queue.add(CLAIM_KEY_PREFIX + claim_key)
        elif self._group_needs_work(group):
            self._queue.add(POD_GROUP_KEY_PREFIX + key)
        # Its pods waited for it, or may record its claims now.
        for pod in self._pods.by_index(POD_GROUP_INDEX, key):
            self._pod_changed(pod, deleted=False)

    # ------------------------------------------------------------------------------------------- work

    def _what(self, key: str) -> str:
        if key.startswith(POD_KEY_PREFIX):
            return f"Pod {key.removeprefix(POD_KEY_PREFIX)}"
        if key.startswith(POD_GROUP_KEY_PREFIX):
            return f"PodGroup {key.removeprefix(POD_GROUP_KEY_PREFIX)}"
        return f"ResourceClaim {key.removeprefix(CLAIM_KEY_PREFIX)}"

    async def _sync(self, key: str) -> None:
        if key.startswith(POD_KEY_PREFIX):
            await self._sync_pod(key.removeprefix(POD_KEY_PREFIX))
        elif key.startswith(POD_GROUP_KEY_PREFIX):
            await self._sync_group(key.removeprefix(POD_GROUP_KEY_PREFIX))
        else:
            await self._sync_claim(key.removeprefix(CLAIM_KEY_PREFIX))

    async def _sync_pod(self, key: str) -> None:
        pod = self._pods.get(key)
        if pod is None or pod.metadata.HasField("deletion_timestamp") or is_pod_done(pod):
            return
        if self._waits_for_group(pod):
            # Its entries may be the group's: nothing is made before the group is seen (its arrival
            # brings the pod back).
            group_name = pod.spec.scheduling_group.pod_group_name
            raise errors.NotFound(f'podgroup.scheduling.k8s.io "{group_name}" not found')
        group = self._group_of(pod)
        generated: dict[str, str] = {}
        for entry in pod.spec.resource_claims:
            group_entry = group_claim_of(group, entry)
            if group is not None and group_entry is not None:
                # The group's claim: recorded once the group made it, never made for the pod.
                name = self._group_claim(group, group_entry)
                if (name is not None and entry.HasField("resource_claim_template_name")
                        and claim_name_of(pod, entry) != name):
                    generated[entry.name] = name
                continue
            try:
                name = await self._generated_claim(pod, entry)
            except errors.ApiError as exc:
                await self._report(pod, f"PodResourceClaim {entry.name}: {exc.message}")
                raise
            if name is not None:
                generated[entry.name] = name
        self._reported.pop(key, None)
        if generated:
            recorded = await self._record(pod, generated)
            if recorded is None:
                return
            pod = recorded
        if pod.spec.node_name:
            await self._reserve_for(pod, group)

    async def _generated_claim(self, pod: objects_pb2.Pod, entry: objects_pb2.PodResourceClaim) -> str | None:
        """The name of the claim to record for template entry ``entry`` of ``pod``, made now unless the
        controller made it before; None when there is nothing to record."""
        if not entry.HasField("resource_claim_template_name") or claim_not_needed(pod, entry):
            return None
        name = claim_name_of(pod, entry)
        if name is not None:
            claim = self._claim(_key(pod.metadata.namespace, name))
            if claim is not None:
                problem = not_for_pod(pod, claim)
                if problem is None:
                    return None
                log.warning("%s; making PodResourceClaim %s a claim of its own", problem, entry.name)
        claim = self._made_before_for(pod.metadata.uid, entry.name) or await self._create_from_template(
            pod.metadata.namespace, entry.resource_claim_template_name, pod.metadata.name, entry.name,
            objects_pb2.OwnerReference(api_version=POD.api_version, kind=POD.name, name=pod.metadata.name,
                                       uid=pod.metadata.uid, controller=True, block_owner_deletion=True))
        return claim.metadata.name

    def _made_before_for(self, owner_uid: str, entry_name: str) -> objects_pb2.ResourceClaim | None:
        """A claim made for entry ``entry_name`` of the pod or PodGroup ``owner_uid`` before (owned by it,
        annotated so)."""
        owned = self._claims.by_index(OWNER_INDEX, owner_uid)
        owned += [claim for claim in self._created.values() if _controller_uid(claim) == [owner_uid]]
        return next((claim for claim in owned
                     if claim.metadata.annotations.get(POD_CLAIM_NAME_ANNOTATION) == entry_name), None)

    async def _create_from_template(
        self, namespace: str, template_name: str, owner_name: str, entry_name: str,
        owner: objects_pb2.OwnerReference,
    ) -> objects_pb2.ResourceClaim:
        """The claim made from template ``template_name`` for entry ``entry_name`` of ``owner`` (a pod or
        a PodGroup named ``owner_name``)."""
        template = self._templates.get(_key(namespace, template_name))
        if template is None:
            raise errors.NotFound(f'resource claim template "{template_name}": '
                                  f'{RESOURCE_CLAIM_TEMPLATE.resource} "{template_name}" not found')
        claim = objects_pb2.ResourceClaim(api_version=RESOURCE_CLAIM.api_version, kind=RESOURCE_CLAIM.name)
        meta = claim.metadata
        meta.generate_name = generate_name_for(owner_name, entry_name)
        meta.namespace = namespace
        meta.labels.update(template.spec.metadata.labels)
        meta.annotations.update(template.spec.metadata.annotations)
        meta.annotations[POD_CLAIM_NAME_ANNOTATION] = entry_name
        meta.owner_references.append(owner)
        claim.spec.CopyFrom(template.spec.spec)
        created = await self._client.create(claim)
        self._created[self._claims.key(created)] = created
        log.info("created ResourceClaim %s/%s for claim %s of %s %s", namespace, created.metadata.name,
                 entry_name, owner.kind, owner_name)
        return created

    async def _record(self, pod: objects_pb2.Pod, generated: Mapping[str, str]) -> objects_pb2.Pod | None:
        """``pod`` with the claims ``generated`` (by entry name) recorded in its status; None if it is
        gone."""
        updated = objects_pb2.Pod()
        updated.CopyFrom(pod)
        statuses = {status.name: status for status in updated.status.resource_claim_statuses}
        for entry_name, claim_name in generated.items():
            if entry_name in statuses:
                statuses[entry_name].resource_claim_name = claim_name
            else:
                updated.status.resource_claim_statuses.add(name=entry_name, resource_claim_name=claim_name)
        try:
            return await self._client.update_status(updated)
        except errors.NotFound:
            return None  # deleted meanwhile: the informer will say so

    async def _reserve_for(self, pod: objects_pb2.Pod, group: objects_pb2.PodGroup | None) -> None:
        """Reserve for bound ``pod`` its allocated claims that are not yet (it was bound without the
        scheduler); the group's claims for its PodGroup."""
        for entry, name in claims_of(pod, group):
            if name is None:
                continue
            claim = self._claim(_key(pod.metadata.namespace, name))
            if claim is None:
                return  # not created yet: its creation brings the pod back
            if group is not None and group_claim_of(group, entry) is not None:
                if _awaits_group_reservation(claim, group):
                    await self._reserve(claim, group_consumer_reference(group))
                continue
            if entry.HasField("resource_claim_template_name") and (problem := not_for_pod(pod, claim)):
                log.warning("%s; not reserving it", problem)
                continue
            if _awaits_reservation(claim, pod):
                await self._reserve(claim, consumer_reference(pod))

    async def _reserve(self, claim: objects_pb2.ResourceClaim,
                       consumer: objects_pb2.ResourceClaimConsumerReference) -> None:
        updated = objects_pb2.ResourceClaim()
        updated.CopyFrom(claim)
        updated.status.reserved_for.append(consumer)
        await self._client.update_status(updated)
        log.info("reserved ResourceClaim %s/%s for %s %s", claim.metadata.namespace, claim.metadata.name,
                 consumer.resource, consumer.name)

    # ------------------------------------------------------------------------------------ pod groups

    async def _sync_group(self, key: str) -> None:
        group = self._groups.get(key)
        if group is None or group.metadata.HasField("deletion_timestamp"):
            return
        generated: dict[str, str] = {}
        for entry in group.spec.resource_claims:
            if not entry.HasField("resource_claim_template_name"):
                continue
            name = group_claim_name(group, entry)
            if name is not None:
                claim = self._claim(_key(group.metadata.namespace, name))
                if claim is not None:
                    problem = not_for_group(group, claim)
                    if problem is None:
                        continue
                    log.warning("%s; making PodGroupResourceClaim %s a claim of its own", problem, entry.name)
            claim = self._made_before_for(group.metadata.uid, entry.name) or await self._create_from_template(
                group.metadata.namespace, entry.resource_claim_template_name, group.metadata.name, entry.name,
                objects_pb2.OwnerReference(api_version=POD_GROUP.api_version, kind=POD_GROUP.name,
                                           name=group.metadata.name, uid=group.metadata.uid, controller=True,
                                           block_owner_deletion=True))
            generated[entry.name] = claim.metadata.name
        if generated:
            await self._record_for_group(group, generated)
            # Its pods record the claims next (the update's event brings them too).
            for pod in self._pods.by_index(POD_GROUP_INDEX, key):
                if self._pod_needs_work(pod):
                    self._queue.add(POD_KEY_PREFIX + self._pods.key(pod))

    async def _record_for_group(self, group: objects_pb2.PodGroup, generated: Mapping[str, str]) -> None:
        """Record the claims ``generated`` (by entry name) in ``group``'s status; a conflict sends the group
        back to the queue (the claims made are found again through their owner)."""
        updated = objects_pb2.PodGroup()
        updated.CopyFrom(group)
        statuses = {status.name: status for status in updated.status.resource_claim_statuses}
        for entry_name, claim_name in generated.items():
            if entry_name in statuses:
                statuses[entry_name].resource_claim_name = claim_name
            else:
                updated.status.resource_claim_statuses.add(name=entry_name, resource_claim_name=claim_name)
        try:
            await self._client.update_status(updated)
        except errors.NotFound:
            return  # deleted meanwhile: its claims go with it

    async def _report(self, pod: objects_pb2.Pod, message: str) -> None:
        """Report a creation failure on ``pod`` as a Warning Event, unless it was reported already."""
        key = self._pods.key(pod)
        if self._reported.get(key) == message:
            return
        self._reported[key] = message
        await record_event(self._client, reference_to(POD.name, POD.api_version, pod.metadata), WARNING,
                           FAILED_RESOURCE_CLAIM_CREATION, message, EVENT_COMPONENT, log)

    async def _sync_claim(self, key: str) -> None:
        claim = self._claims.get(key)
        if claim is None:
            return
        reserved = list(claim.status.reserved_for)
        kept = [consumer for consumer in reserved if await self._still_reserved(claim, consumer)]
        if len(kept) < len(reserved):
            updated = objects_pb2.ResourceClaim()
            updated.CopyFrom(claim)
            del updated.status.reserved_for[:]
            updated.status.reserved_for.extend(kept)
            if not kept:
                # Its last consumer is gone: free the devices for other claims. The devices' status
                # describes allocated devices, so it goes with the allocation.
                updated.status.ClearField("allocation")
                del updated.status.devices[:]
            try:
                claim = await self._client.update_status(updated)
            except errors.NotFound:
                return
            log.info("ResourceClaim %s: released by %d consumers that are gone or done%s", key,
                     len(reserved) - len(kept), "" if kept else ", deallocated")
        if not claim.status.reserved_for:
            await self._delete_if_unused(claim)

    async def _still_reserved(
        self, claim: objects_pb2.ResourceClaim, consumer: objects_pb2.ResourceClaimConsumerReference
    ) -> bool:
        if is_pod_group_consumer(consumer):
            return await self._group_lives(claim.metadata.namespace, consumer.name, consumer.uid)
        if consumer.api_group or consumer.resource != POD_RESOURCE:
            return True  # not a pod nor a PodGroup: not this controller's to judge
        if consumer.uid in self._deleted_pods:
            return False
        pod = self._pods.get(_key(claim.metadata.namespace, consumer.name))
        if pod is None:
            # Not seen (yet): only the server can tell a pod the informer lags behind from one gone, and
            # releasing a claim the scheduler just reserved would be wrong.
            pod = await self._live_pod(claim.metadata.namespace, consumer.name)
        return pod is not None and pod.metadata.uid == consumer.uid and not is_pod_done(pod)

    async def _group_lives(self, namespace: str, name: str, uid: str) -> bool:
        """Whether PodGroup ``name`` with ``uid`` exists (asked of the server when the informer does not
        have it, as for pods)."""
        if uid in self._deleted_groups:
            return False
        group = self._groups.get(_key(namespace, name))
        if group is None:
            try:
                live = await self._client.get(POD_GROUP, name, namespace)
            except errors.NotFound:
                return False
            assert isinstance(live, objects_pb2.PodGroup)
            group = live
        return group.metadata.uid == uid

    async def _live_pod(self, namespace: str, name: str) -> objects_pb2.Pod | None:
        try:
            pod = await self._client.get(POD, name, namespace)
        except errors.NotFound:
            return None
        assert isinstance(pod, objects_pb2.Pod)
        return pod

    async def _delete_if_unused(self, claim: objects_pb2.ResourceClaim) -> None:
        """Delete unreserved ``claim`` if it was generated for a pod that is gone or done, or for a
        PodGroup that is gone."""
        namespace = claim.metadata.namespace
        group_owner = controlling_pod_group(claim)
        if group_owner is not None:
            if not await self._group_lives(namespace, group_owner.name, group_owner.uid):
                await self._delete(claim, f"PodGroup {group_owner.name} is gone")
            return
        owner = controlling_pod(claim)
        if owner is None:
            return
        pod = self._pods.get(_key(namespace, owner.name))
        if pod is None and owner.uid not in self._deleted_pods:
            pod = await self._live_pod(namespace, owner.name)
        if pod is not None and pod.metadata.uid == owner.uid and not is_pod_done(pod):
            return
        await self._delete(claim, f"pod {owner.name} is gone or done")

    async def _delete(self, claim: objects_pb2.ResourceClaim, why: str) -> None:
        try:
            await self._client.delete(RESOURCE_CLAIM, claim.metadata.name, claim.metadata.namespace,
                                      resource_version=claim.metadata.resource_version)
        except errors.NotFound:
            return
        log.info("deleted ResourceClaim %s/%s: %s", claim.metadata.namespace, claim.metadata.name, why)

