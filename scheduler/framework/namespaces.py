"""Namespace labels for the scheduler: what a namespaceSelector in a pod (anti-)affinity term is matched
against.

``NamespaceLabels`` is every namespace's labels at one moment; a cycle takes one at PreFilter / PreScore
and judges all its terms by it, as kube-scheduler takes its namespace labels snapshot. A namespace with no
Namespace object (podsched lets pods live in namespaces nobody created) counts as carrying only
``kubernetes.io/metadata.name=<name>``, the label the API server would give it. ``NamespaceIndex`` keeps
the current labels from the scheduler's Namespace informer; each change makes a new ``NamespaceLabels``,
so one already handed out never changes.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from cluster.api import objects_pb2
from cluster.api.kinds import NAMESPACE_NAME_LABEL


class NamespaceLabels:
    """The namespaces' labels at one moment; never changed once made."""

    __slots__ = ("_key", "_labels")

    def __init__(self, labels: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._labels: dict[str, dict[str, str]] = {
            name: dict(values) for name, values in (labels or {}).items()
        }
        self._key: Hashable | None = None

    def stored(self, name: str) -> Mapping[str, str] | None:
        """The labels of namespace ``name``'s Namespace object; None when it has none."""
        return self._labels.get(name)

    def of(self, name: str) -> Mapping[str, str]:
        """The labels of namespace ``name``; only its name label when it has no Namespace object."""
        labels = self._labels.get(name)
        return labels if labels is not None else {NAMESPACE_NAME_LABEL: name}

    def with_namespace(self, name: str, labels: Mapping[str, str] | None) -> NamespaceLabels:
        """A copy with ``name``'s labels replaced (None: its Namespace object is gone)."""
        changed = NamespaceLabels()
        changed._labels = dict(self._labels)
        if labels is None:
            changed._labels.pop(name, None)
        else:
            changed._labels[name] = dict(labels)
        return changed

    @property
    def key(self) -> Hashable:
        """Equal for equal labels: what a cache of results that depend on them is keyed by."""
        if self._key is None:
            self._key = frozenset((name, frozenset(values.items())) for name, values in self._labels.items())
        return self._key


class NamespaceIndex:
    """The current namespace labels, from Namespace add / update / delete events (``NamespaceLister``)."""

    def __init__(self) -> None:
        self._current = NamespaceLabels()

    def labels(self, name: str) -> Mapping[str, str] | None:
        return self._current.stored(name)

    def snapshot(self) -> NamespaceLabels:
        return self._current

    def set(self, namespace: objects_pb2.Namespace) -> None:
        meta = namespace.metadata
        self._current = self._current.with_namespace(meta.name, meta.labels)

    def remove(self, namespace: objects_pb2.Namespace) -> None:
        self._current = self._current.with_namespace(namespace.metadata.name, None)
