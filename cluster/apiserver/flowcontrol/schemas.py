"""Which priority level a request runs at, and which flow it belongs to there: kube's default FlowSchemas,
cut down to the identities podsched has.

In order of precedence (the first that matches wins):

===============  ===============  ====================================================================
flow schema      priority level   matches
===============  ===============  ====================================================================
exempt           exempt           group system:masters (admins; everyone when auth is off)
leader-election  leader-election  get, list, watch, create, update of leases, by a caller who may
                                  update leases (the scheduler role, admins)
kube-scheduler   workload-high    any other request of a caller who may bind pods (the scheduler role)
global-default   global-default   everyone else
===============  ===============  ====================================================================

Schedulers are recognised by what the authorizer lets them do rather than by a group name, so a user
the policy file binds to the scheduler role counts too. Leader election has a level of its own, as in
kube: a renewal waits behind nothing but other renewals, so a busy scheduler cannot make itself lose its
lease, and a flood of client traffic reaches neither. The flow is the user name, so at one level each
user waits in a queue of their own (kube's ByUser distinguisher). kube's catch-all level is left out:
global-default already matches every caller.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from cluster.apiserver.auth import RequestInfo, UserInfo
from cluster.apiserver.auth.roles import MASTERS_GROUP

EXEMPT = "exempt"
LEADER_ELECTION = "leader-election"
WORKLOAD_HIGH = "workload-high"
GLOBAL_DEFAULT = "global-default"

#: kube's nominalConcurrencyShares of these suggested levels: each limited level gets this share of the
#: server's concurrency limit (exempt has no limit).
NOMINAL_CONCURRENCY_SHARES = {LEADER_ELECTION: 10, WORKLOAD_HIGH: 40, GLOBAL_DEFAULT: 20}

#: What leader election does with a Lease: read it (get, and list + watch to follow it), take it, renew it.
LEADER_ELECTION_VERBS = frozenset({"get", "list", "watch", "create", "update"})
#: The capabilities that make a caller a leader-election candidate, and a scheduler.
RENEW_LEASE = RequestInfo("update", "leases")
BIND_POD = RequestInfo("create", "pods", "binding")
#: Callers whose capabilities are remembered (identities come from the token file and the client CA).
CAPABILITY_CACHE_SIZE = 4096

#: The authorizer's question: may this user make this request?
Allows = Callable[[UserInfo, RequestInfo], bool]


@dataclass(frozen=True, slots=True)
class Classification:
    flow_schema: str
    priority_level: str
    #: The flow distinguisher: requests of one flow share a queue (the user name).
    flow: str


class FlowSchemas:
    def __init__(self, allows: Allows) -> None:
        """``allows``: the authorizer's answer (the server's policy does not change while it runs, so
        each caller's capabilities are asked once)."""

        @functools.lru_cache(maxsize=CAPABILITY_CACHE_SIZE)
        def capabilities(user: UserInfo) -> tuple[bool, bool]:
            return allows(user, RENEW_LEASE), allows(user, BIND_POD)

        self._capabilities = capabilities

    def classify(self, user: UserInfo, request: RequestInfo) -> Classification:
        if MASTERS_GROUP in user.groups:  # kube exempts system:masters from every limit
            return Classification("exempt", EXEMPT, user.name)
        renews_leases, binds_pods = self._capabilities(user)
        if renews_leases and request.resource == "leases" and not request.subresource and (
            request.verb in LEADER_ELECTION_VERBS
        ):
            return Classification("leader-election", LEADER_ELECTION, user.name)
        if binds_pods:
            return Classification("kube-scheduler", WORKLOAD_HIGH, user.name)
        return Classification("global-default", GLOBAL_DEFAULT, user.name)
