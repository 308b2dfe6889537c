"""Which DeviceClass serves an extended resource (kube-scheduler's ExtendedResourceCache): a pod asking
for ``example.com/gpu`` in its container resources may get devices of the class whose
``spec.extendedResourceName`` is that name, and every class serves its implicit name
``deviceclass.resource.kubernetes.io/<class name>``.

Kept from the DeviceClass informer's events, one class at a time. Several classes may name the same
extended resource (while one replaces another): the newest one serves it, the lower name on equal
creation times, and when it goes (deleted, or renamed its resource) the next best one takes over.
"""

from __future__ import annotations

from cluster.api import objects_pb2

#: The prefix of a class's implicit extended resource name.
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def _newer(a: objects_pb2.DeviceClass, b: objects_pb2.DeviceClass) -> bool:
    """Whether ``a`` wins an extended resource name over ``b``: the newer class, else the lower name."""
    a_time = (a.metadata.creation_timestamp.seconds, a.metadata.creation_timestamp.nanos)
    b_time = (b.metadata.creation_timestamp.seconds, b.metadata.creation_timestamp.nanos)
    if a_time != b_time:
        return a_time > b_time
    return a.metadata.name < b.metadata.name


class DeviceClassResolver:
    """Extended resource name -> the DeviceClass that serves it."""

    def __init__(self) -> None:
        self._served: dict[str, objects_pb2.DeviceClass] = {}
        #: Explicit extended resource name -> class name -> the classes naming it (the candidates).
        self._candidates: dict[str, dict[str, objects_pb2.DeviceClass]] = {}
        #: Class name -> the explicit name it is a candidate for.
        self._explicit_of: dict[str, str] = {}

    def get(self, resource_name: str) -> objects_pb2.DeviceClass | None:
        """The class serving ``resource_name``; None when none does."""
        return self._served.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._served)

    def set(self, device_class: objects_pb2.DeviceClass) -> None:
        """A class was added or updated."""
        name = device_class.metadata.name
        self._drop_candidate(name)
        if device_class.spec.HasField("extended_resource_name"):
            explicit = device_class.spec.extended_resource_name
            self._candidates.setdefault(explicit, {})[name] = device_class
            self._explicit_of[name] = explicit
            self._elect(explicit)
        self._served[DEVICE_CLASS_PREFIX + name] = device_class

    def remove(self, device_class: objects_pb2.DeviceClass) -> None:
        """A class was deleted."""
        name = device_class.metadata.name
        self._served.pop(DEVICE_CLASS_PREFIX + name, None)
        self._drop_candidate(name)

    def _drop_candidate(self, class_name: str) -> None:
        explicit = self._explicit_of.pop(class_name, None)
        if explicit is None:
            return
        candidates = self._candidates[explicit]
        del candidates[class_name]
        if not candidates:
            del self._candidates[explicit]
        self._elect(explicit)

    def _elect(self, explicit: str) -> None:
        winner: objects_pb2.DeviceClass | None = None
        for candidate in self._candidates.get(explicit, {}).values():
            if winner is None or _newer(candidate, winner):
                winner = candidate
        if winner is None:
            self._served.pop(explicit, None)
        else:
            self._served[explicit] = winner
