"""Controllers: loops that watch the API through `cluster.client` and write what they conclude back
through it, as kube-controller-manager's do. They know the wire and the API types, never the store or
the API server's code, so they run next to the API server (`podsched apiserver`) or anywhere else.

- `DisruptionController` keeps every PodDisruptionBudget's status current.
"""

from cluster.controllers.disruption import DEFAULT_RESYNC_PERIOD_S, DisruptionController

__all__ = ["DEFAULT_RESYNC_PERIOD_S", "DisruptionController"]
