"""Gang scheduling in the scheduling loop: the whole-group cycle (cycle.py), a topology-constrained
group's placements (placements.py) and what the scheduler tells about a gang on its PodGroup
(status.py). A gang's preemption is the profile's PodGroupPostFilter plugins' (DefaultPreemption's),
which the cycle runs through the framework."""
