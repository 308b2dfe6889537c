"""The system namespaces, as kube-apiserver's system namespaces controller and NamespaceLifecycle
admission know them: which the server creates at start, and which may never be deleted.

podsched keeps NamespaceLifecycle's refusal to delete a system namespace, not the rest of it: a pod may be
created in a namespace that has no Namespace object, and deleting a Namespace removes that object alone
(the objects in the namespace stay; there is no namespace controller to delete them)."""

from __future__ import annotations

from typing import Any

from cluster.api.kinds import NAMESPACE, Kind
from cluster.apiserver import messages
from cluster.apiserver.admission.plugin import AdmissionPlugin

#: The namespaces kube-apiserver creates when they are missing.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: The ones NamespaceLifecycle refuses to delete.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class NamespaceLifecycle(AdmissionPlugin):
    name = "NamespaceLifecycle"
    handles = {"validate_delete": frozenset({NAMESPACE})}

    def validate_delete(self, kind: Kind[Any], name: str) -> None:
        if name in IMMORTAL_NAMESPACES:
            raise messages.forbidden(NAMESPACE, name, "this namespace may not be deleted")
