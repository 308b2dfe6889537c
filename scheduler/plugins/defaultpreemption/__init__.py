"""DefaultPreemption: preemption as kube-scheduler's PostFilter and PodGroupPostFilter plugin.

``plugin`` (args, eligibility, the PostFilter and PodGroupPostFilter that tie the steps together),
``candidates`` (the dry run: victims per node), ``group`` (a gang's victims, and the disruption units),
``selection`` (which node), ``executor`` (deleting victims, events, clearing lower nominations).
"""

from scheduler.plugins.defaultpreemption.candidates import (
    NO_VICTIMS,
    Candidate,
    dry_run_preemption,
    num_candidates,
    select_victims_on_node,
)
from scheduler.plugins.defaultpreemption.executor import preempted_message
from scheduler.plugins.defaultpreemption.plugin import (
    ARGS,
    NAME,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    DefaultPreemption,
    DefaultPreemptionArgs,
    new,
)
from scheduler.plugins.defaultpreemption.selection import pick_one_node_for_preemption

__all__ = [
    "ARGS",
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "dry_run_preemption",
    "new",
    "num_candidates",
    "pick_one_node_for_preemption",
    "preempted_message",
    "select_victims_on_node",
]
