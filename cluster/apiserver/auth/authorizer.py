"""The authorizer: may this user do what this request asks? Yes if any role bound to the user's name or
to one of its groups, by a binding whose scope covers the request's namespace, has a rule that allows it
(kube's RBAC: rules only add up); otherwise
PermissionDenied in kube-apiserver's words::

    pods "web" is forbidden: User "bob" cannot delete resource "pods"
    in API group "" in the namespace "default"
    priorityclasses.scheduling.k8s.io is forbidden: User "bob" cannot create resource "priorityclasses"
    in API group "scheduling.k8s.io" at the cluster scope
"""

from __future__ import annotations

from cluster.api import errors
from cluster.api.kinds import KINDS
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.policy import Policy


class Authorizer:
    def __init__(self, policy: Policy) -> None:
        self._policy = policy

    def allows(self, user: UserInfo, request: RequestInfo) -> bool:
        grants = self._policy.user_roles.get(user.name, ())
        for group in user.groups:
            grants += self._policy.group_roles.get(group, ())
        resource = request.full_resource  # once, not once per rule
        return any(
            grant.scope.covers(request.namespace) and self._policy.roles[grant.role].allows(request, resource)
            for grant in grants
        )

    def authorize(self, user: UserInfo, request: RequestInfo) -> None:
        """Return if ``user`` may make ``request``; else PermissionDenied naming the verb and resource."""
        if not self.allows(user, request):
            raise errors.PermissionDenied(forbidden_message(user, request))


#: The API group of each resource, by plural (a kind served in two groups is named by its first).
_GROUPS = {kind.plural: kind.group for kind in reversed(KINDS)}


def forbidden_message(user: UserInfo, request: RequestInfo) -> str:
    group = _GROUPS.get(request.resource, "")
    qualified = f"{request.resource}.{group}" if group else request.resource
    subject = f'{qualified} "{request.name}"' if request.name else qualified
    scope = f'in the namespace "{request.namespace}"' if request.namespace else "at the cluster scope"
    resource = request.full_resource
    return (f'{subject} is forbidden: User "{user.name}" cannot {request.verb} resource "{resource}" '
            f'in API group "{group}" {scope}')
