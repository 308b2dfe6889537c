"""Who is calling and what the call asks: the two facts every authentication, authorization and
request gate decision is made from (kube's user.Info and RequestInfo)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UserInfo:
    """The authenticated caller (kube's user.Info): a user name, an optional uid, and groups."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What one API call asks to do, in Kubernetes' authorization vocabulary (kube's RequestInfo)."""

    #: create, get, list, watch, update, delete (Kubernetes verbs).
    verb: str
    #: Plural, lower case: pods, nodes, priorityclasses, poddisruptionbudgets, leases, events.
    resource: str
    #: "status" for UpdateStatus, "binding" for Bind (Bind is create on pods/binding).
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def full_resource(self) -> str:
        """The resource as RBAC rules and refusals name it: "pods", or "pods/status" with a subresource."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


#: The identity of a caller that presented no credentials, as kube names it.
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))
