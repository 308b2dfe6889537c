"""Batch: several Creates and Binds in one call, for callers that write many objects at once (the
scheduler's binds and events, bulk creators). It saves the per-call cost of gRPC, not any check: each item
is described, authorized, checked (admission, validation, quota, leadership, its own fence) and written as
its own call would be, and answered with what that call would answer, its error included (code, message
and reason, as the single call's status and trailing metadata carry them). Items run concurrently, so the
store's group commit merges their writes; one item's failure fails no other.

The call as a whole is one request to the gates: authenticated once, under one deadline, and admitted by
flow control as wide as its items (a seat per item, at most its priority level's seats), so a batch costs
a level what its items would cost as single calls. It is classified by its caller, as a create of no
particular resource: a scheduler's batch runs at workload-high, anyone else's at global-default, never at
leader-election (a Lease renewal is not a batch item).
"""

from __future__ import annotations

from cluster.api import apiserver_pb2, errors, validation
from cluster.api.limits import MAX_BATCH_ITEMS
from cluster.apiserver.auth.identity import RequestInfo
from cluster.apiserver.limits import status_message

#: What a Batch call asks of the gates (flow control classifies it by its caller, the deadline bounds it).
BATCH_CALL = RequestInfo("create", "")

#: The single call each kind of item stands for (its metrics, its error's log line).
BATCH_RPCS = {"create": "Create", "bind": "Bind"}


def check_batch(request: apiserver_pb2.BatchRequest) -> None:
    """Refuse a Batch of more than MAX_BATCH_ITEMS items as a whole (Invalid); an empty one is fine."""
    if len(request.items) > MAX_BATCH_ITEMS:
        problem = validation.too_many("items", len(request.items), MAX_BATCH_ITEMS)
        raise errors.Invalid(f"Batch is invalid: {problem}")


def empty_item(index: int) -> errors.Invalid:
    """The answer to an item that carries no write."""
    problem = validation.required(f"items[{index}]", "a create or a bind")
    return errors.Invalid(f"Batch is invalid: {problem}")


def status_of(error: errors.ApiError) -> apiserver_pb2.Status:
    """``error`` as its single call's status would carry it."""
    return apiserver_pb2.Status(
        code=error.code.value[0], message=status_message(error.message), reason=error.reason)
