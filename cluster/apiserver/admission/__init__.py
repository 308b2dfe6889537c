"""Admission: the ordered chain of admission plugins every write passes (chain.py), as
kube-apiserver's --enable-admission-plugins, each plugin a module of its own with the kinds it handles.

The order is kube-apiserver's where it matters: NamespaceLifecycle first, ResourceQuota last, so a
quota is charged only for an object every other plugin admitted.
"""

from __future__ import annotations

from cluster.apiserver.admission.chain import Chain, KindAdmission
from cluster.apiserver.admission.defaultstorageclass import DefaultStorageClass
from cluster.apiserver.admission.namespacelifecycle import NamespaceLifecycle
from cluster.apiserver.admission.plugin import AdmissionPlugin, Rollback
from cluster.apiserver.admission.podgroupworkload import PodGroupWorkloadExists
from cluster.apiserver.admission.priority import Priority
from cluster.apiserver.admission.resourcequota import ResourceQuota
from cluster.apiserver.admission.runtimeclass import RuntimeClass

__all__ = ["AdmissionPlugin", "Chain", "KindAdmission", "Rollback", "default_chain"]


def default_chain() -> Chain:
    """The plugins a podsched API server runs, in order."""
    return Chain([
        NamespaceLifecycle(), Priority(), DefaultStorageClass(), RuntimeClass(), PodGroupWorkloadExists(),
        ResourceQuota(),
    ])
