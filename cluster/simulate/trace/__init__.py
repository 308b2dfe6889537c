"""Cluster traces for ``podsched replay`` (docs/trace-format.md): a node file and a pod file, in the openb
format (Alibaba's GPU cluster trace), podsched's native CSV or native YAML, read into validated API objects
with each pod's arrival and run time. Nothing of a trace with a problem is returned: ``TraceError`` lists
every problem, each naming its file and line and column or document.
"""

from cluster.simulate.trace.loader import load_trace
from cluster.simulate.trace.model import Trace, TraceError, TracePod

__all__ = ["Trace", "TraceError", "TracePod", "load_trace"]
