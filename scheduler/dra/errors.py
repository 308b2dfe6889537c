"""The allocator's errors."""


class AllocationError(Exception):
    """The claims cannot be allocated on any node as they stand (a class is missing, a selector does not
    compile or fails at runtime, a request asks for more devices than a claim may hold, ...): the
    scheduling attempt fails with this message."""


class NodeAllocationError(AllocationError):
    """Allocation failed on this one node for a reason worth telling (invalid resource pools): the node
    is unschedulable with this message, other nodes may still fit."""
