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

For a claim (keys "claim:namespace/name"):
- Every reservedFor entry of a pod that no longer exists, has another uid, or is done is removed with
  UpdateStatus. When that empties reservedFor the allocation is cleared too, so that its devices are
  free again for other claims.
- A claim not reserved for anyone whose controlling pod is gone or done is deleted (with its
  resourceVersion as precondition). podsched has no garbage collector of ownerReferences, so this
  controller also deletes what upstream leaves to the garbage collector: a pod missing from the informer
  is looked up on the server before its claim goes.

Indexes keep every event at O(affected objects): pods by the claims they name and by the templates they
use, claims by the uid of the pod that controls them.

Where upstream relies on the finalizer resource.kubernetes.io/delete-protection, podsched, which models
no finalizers, cannot: a claim is deleted at once even when allocated and in use, and every allocation is
taken as made by the scheduler (which upstream tells by that finalizer), so emptying reservedFor always
clears it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Mapping
from typing import Any

from cluster.api import errors, objects_pb2, timeutil
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
    is_reserved_for,
    not_for_pod,
)
from cluster.api.kinds import POD, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE
from cluster.api.quota import FINISHED_PHASES
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController

log = logging.getLogger(__name__)

POD_KEY_PREFIX = "pod:"
CLAIM_KEY_PREFIX = "claim:"
#: Pods by "namespace/name" of each claim they name (resourceClaimName or a recorded generated name).
CLAIM_INDEX = "claim"
#: Pods by "namespace/name" of each ResourceClaimTemplate they use.
TEMPLATE_INDEX = "template"
#: Claims by the uid of the pod that controls them.
OWNER_INDEX = "owner"
#: A generated name's base is at most this long: a DNS label (63) less the 5 random characters and a
#: hyphen, so that both the pod's and the entry's name survive the server's cut.
MAX_GENERATE_NAME_BASE = 57
#: How many deleted pods' uids are remembered (upstream's maxUIDCacheEntries): a reservation of one of
#: them goes without asking the server.
DELETED_PODS_REMEMBERED = 500
EVENT_COMPONENT = "resource_claim"
FAILED_RESOURCE_CLAIM_CREATION = "FailedResourceClaimCreation"
#: Object names are DNS subdomains of at most 253 characters.
_NAME_LIMIT = 253


def generate_name_for(pod_name: str, pod_claim_name: str) -> str:
    """The generateName of the claim made for entry ``pod_claim_name`` of pod ``pod_name``."""
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


def _awaits_reservation(claim: objects_pb2.ResourceClaim, pod: objects_pb2.Pod) -> bool:
    """Whether allocated ``claim`` is to be reserved for ``pod``, and may be."""
    return claim.status.HasField("allocation") and not is_reserved_for(claim, pod) and can_be_reserved(claim)


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
            client, POD, indexers={CLAIM_INDEX: _claims_named_by, TEMPLATE_INDEX: _templates_used_by})
        self._claims = Informer(client, RESOURCE_CLAIM, indexers={OWNER_INDEX: _controlling_pod_uid})
        self._templates = Informer(client, RESOURCE_CLAIM_TEMPLATE)
        self._deleted_pods = RecentUids(DELETED_PODS_REMEMBERED)
        #: Claims this controller created that its informer has not shown yet, by key.
        self._created: dict[str, objects_pb2.ResourceClaim] = {}
        #: The creation failure last reported by an Event, by pod key: a failure is reported once.
        self._reported: dict[str, str] = {}
        self._pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._claims.add_handler(self._claim_added, self._claim_updated, self._claim_deleted)
        self._templates.add_handler(self._template_added, self._template_updated)

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "resourceclaim": self._claims, "resourceclaimtemplate": self._templates}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("resourceclaim controller synced: %d pods, %d claims, %d templates",
                 len(self._pods), len(self._claims), len(self._templates))

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

    def _pod_needs_work(self, pod: objects_pb2.Pod) -> bool:
        """Whether a sync of ``pod`` would write something: a claim to make, or one to reserve for it."""
        if pod.metadata.HasField("deletion_timestamp") or is_pod_done(pod):
            return False
        for entry, name in claims_of(pod):
            from_template = entry.HasField("resource_claim_template_name")
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

    def _template_added(self, template: objects_pb2.ResourceClaimTemplate) -> None:
        for pod in self._pods.by_index(TEMPLATE_INDEX, self._templates.key(template)):
            if self._pod_needs_work(pod):
                self._queue.add(POD_KEY_PREFIX + self._pods.key(pod))

    def _template_updated(
        self, old: objects_pb2.ResourceClaimTemplate, new: objects_pb2.ResourceClaimTemplate
    ) -> None:
        self._template_added(new)

    # ------------------------------------------------------------------------------------------- work

    def _what(self, key: str) -> str:
        if key.startswith(POD_KEY_PREFIX):
            return f"Pod {key.removeprefix(POD_KEY_PREFIX)}"
        return f"ResourceClaim {key.removeprefix(CLAIM_KEY_PREFIX)}"

    async def _sync(self, key: str) -> None:
        if key.startswith(POD_KEY_PREFIX):
            await self._sync_pod(key.removeprefix(POD_KEY_PREFIX))
        else:
            await self._sync_claim(key.removeprefix(CLAIM_KEY_PREFIX))

    async def _sync_pod(self, key: str) -> None:
        pod = self._pods.get(key)
        if pod is None or pod.metadata.HasField("deletion_timestamp") or is_pod_done(pod):
            return
        generated: dict[str, str] = {}
        for entry in pod.spec.resource_claims:
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
            await self._reserve_for(pod)

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
        claim = self._made_before(pod, entry.name) or await self._create_claim(pod, entry)
        return claim.metadata.name

    def _made_before(self, pod: objects_pb2.Pod, entry_name: str) -> objects_pb2.ResourceClaim | None:
        """A claim made for ``pod``'s entry ``entry_name`` before (owned by it, annotated so)."""
        uid = pod.metadata.uid
        owned = self._claims.by_index(OWNER_INDEX, uid)
        owned += [claim for claim in self._created.values() if _controlling_pod_uid(claim) == [uid]]
        return next((claim for claim in owned
                     if claim.metadata.annotations.get(POD_CLAIM_NAME_ANNOTATION) == entry_name), None)

    async def _create_claim(
        self, pod: objects_pb2.Pod, entry: objects_pb2.PodResourceClaim
    ) -> objects_pb2.ResourceClaim:
        namespace, template_name = pod.metadata.namespace, entry.resource_claim_template_name
        template = self._templates.get(_key(namespace, template_name))
        if template is None:
            raise errors.NotFound(f'resource claim template "{template_name}": '
                                  f'{RESOURCE_CLAIM_TEMPLATE.resource} "{template_name}" not found')
        claim = objects_pb2.ResourceClaim(api_version=RESOURCE_CLAIM.api_version, kind=RESOURCE_CLAIM.name)
        meta = claim.metadata
        meta.generate_name = generate_name_for(pod.metadata.name, entry.name)
        meta.namespace = namespace
        meta.labels.update(template.spec.metadata.labels)
        meta.annotations.update(template.spec.metadata.annotations)
        meta.annotations[POD_CLAIM_NAME_ANNOTATION] = entry.name
        meta.owner_references.add(api_version=POD.api_version, kind=POD.name, name=pod.metadata.name,
                                  uid=pod.metadata.uid, controller=True, block_owner_deletion=True)
        claim.spec.CopyFrom(template.spec.spec)
        created = await self._client.create(claim)
        self._created[self._claims.key(created)] = created
        log.info("created ResourceClaim %s/%s for PodResourceClaim %s of pod %s", namespace,
                 created.metadata.name, entry.name, pod.metadata.name)
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

    async def _reserve_for(self, pod: objects_pb2.Pod) -> None:
        """Reserve for bound ``pod`` its allocated claims that are not yet (it was bound without the
        scheduler)."""
        for entry, name in claims_of(pod):
            if name is None:
                continue
            claim = self._claim(_key(pod.metadata.namespace, name))
            if claim is None:
                return  # not created yet: its creation brings the pod back
            if entry.HasField("resource_claim_template_name") and (problem := not_for_pod(pod, claim)):
                log.warning("%s; not reserving it", problem)
                continue
            if _awaits_reservation(claim, pod):
                updated = objects_pb2.ResourceClaim()
                updated.CopyFrom(claim)
                updated.status.reserved_for.append(consumer_reference(pod))
                await self._client.update_status(updated)
                log.info("reserved ResourceClaim %s/%s for pod %s", claim.metadata.namespace,
                         claim.metadata.name, pod.metadata.name)

    async def _report(self, pod: objects_pb2.Pod, message: str) -> None:
        """Report a creation failure on ``pod`` as a Warning Event, unless it was reported already."""
        key = self._pods.key(pod)
        if self._reported.get(key) == message:
            return
        self._reported[key] = message
        stamp = timeutil.now()
        # client-go names an event "<object>.<unix nanos in hex>".
        suffix = f".{time.time_ns():x}"
        name = pod.metadata.name[: _NAME_LIMIT - len(suffix)] + suffix
        event = objects_pb2.Event(
            api_version="v1", kind="Event",
            metadata=objects_pb2.ObjectMeta(name=name, namespace=pod.metadata.namespace),
            involved_object=objects_pb2.ObjectReference(
                kind=POD.name, api_version=POD.api_version, namespace=pod.metadata.namespace,
                name=pod.metadata.name, uid=pod.metadata.uid),
            reason=FAILED_RESOURCE_CLAIM_CREATION, message=message, type="Warning", count=1,
            source=objects_pb2.EventSource(component=EVENT_COMPONENT),
            first_timestamp=stamp, last_timestamp=stamp, event_time=stamp,
            reporting_component=EVENT_COMPONENT, reporting_instance=EVENT_COMPONENT,
        )
        try:
            await self._client.create(event)
        except errors.ApiError as exc:
            log.warning("cannot record event %s on pod %s (%s: %s)", FAILED_RESOURCE_CLAIM_CREATION, key,
                        type(exc).__name__, exc.message)

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
            log.info("ResourceClaim %s: released by %d pods that are gone or done%s", key,
                     len(reserved) - len(kept), "" if kept else ", deallocated")
        if not claim.status.reserved_for:
            await self._delete_if_unused(claim)

    async def _still_reserved(
        self, claim: objects_pb2.ResourceClaim, consumer: objects_pb2.ResourceClaimConsumerReference
    ) -> bool:
        if consumer.api_group or consumer.resource != POD_RESOURCE:
            return True  # not a pod: not this controller's to judge
        if consumer.uid in self._deleted_pods:
            return False
        pod = self._pods.get(_key(claim.metadata.namespace, consumer.name))
        if pod is None:
            # Not seen (yet): only the server can tell a pod the informer lags behind from one gone, and
            # releasing a claim the scheduler just reserved would be wrong.
            pod = await self._live_pod(claim.metadata.namespace, consumer.name)
        return pod is not None and pod.metadata.uid == consumer.uid and not is_pod_done(pod)

    async def _live_pod(self, namespace: str, name: str) -> objects_pb2.Pod | None:
        try:
            pod = await self._client.get(POD, name, namespace)
        except errors.NotFound:
            return None
        assert isinstance(pod, objects_pb2.Pod)
        return pod

    async def _delete_if_unused(self, claim: objects_pb2.ResourceClaim) -> None:
        """Delete unreserved ``claim`` if it was generated for a pod that is gone or done."""
        owner = controlling_pod(claim)
        if owner is None:
            return
        namespace = claim.metadata.namespace
        pod = self._pods.get(_key(namespace, owner.name))
        if pod is None and owner.uid not in self._deleted_pods:
            pod = await self._live_pod(namespace, owner.name)
        if pod is not None and pod.metadata.uid == owner.uid and not is_pod_done(pod):
            return
        try:
            await self._client.delete(RESOURCE_CLAIM, claim.metadata.name, namespace,
                                      resource_version=claim.metadata.resource_version)
        except errors.NotFound:
            return
        log.info("deleted ResourceClaim %s/%s: pod %s is gone or done", namespace, claim.metadata.name,
                 owner.name)

