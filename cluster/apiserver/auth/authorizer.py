"""The authorizer: may this user do what this request asks? Yes if any role bound to the user's name or
to one of its groups, by a binding whose scope covers the request's namespace, has a rule that allows it
(kube's RBAC: rules only add up); otherwise
PermissionDenied in kube-apiserver's words, minus the API group podsched does not have::

    pods "web" is forbidden: User "bob" cannot delete resource "pods" in the namespace "default"
    nodes is forbidden: User "bob" cannot list resource "nodes" at the cluster scope
"""

from __future__ import annotations

from cluster.api import errors
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


def forbidden_message(user: UserInfo, request: RequestInfo) -> str:
    subject = f'{request.resource} "{request.name}"' if request.name else request.resource
    scope = f'in the namespace "{request.namespace}"' if request.namespace else "at the cluster scope"
    resource = request.full_resource
    return f'{subject} is forbidden: User "{user.name}" cannot {request.verb} resource "{resource}" {scope}'
