"""`podsched simulate`: a scenario (docs/scenario-format.md) run to quiescence through an
in-process control plane (store, API server with admission, one scheduler) on a virtual clock.

``load_scenario`` reads and checks scenario files; ``simulate`` runs one and returns every pod's
outcome and every PodGroup's; ``SimulationResult.to_json`` is the documented result. The modules behind
this face promise nothing more.
"""

from cluster.simulate.engine import (
    DEFAULT_TIMEOUT_S,
    BackgroundTaskEnded,
    SimulationResult,
    SimulationTimeout,
    simulate,
)
from cluster.simulate.outcome import PodGroupOutcome, PodOutcome, outcomes_json
from cluster.simulate.scenario import Scenario, ScenarioError, build_scenario, load_scenario

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "BackgroundTaskEnded",
    "PodGroupOutcome",
    "PodOutcome",
    "Scenario",
    "ScenarioError",
    "SimulationResult",
    "SimulationTimeout",
    "build_scenario",
    "load_scenario",
    "outcomes_json",
    "simulate",
]
