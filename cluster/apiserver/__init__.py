"""The podsched API server: Kubernetes' API verbs over gRPC, on any Store.

Public face: ``ApiServer`` and ``ApiServerOptions`` (server.py). The rest is the server's own:
registry.py (objects in the store), strategy.py / defaults.py (what a write stores), admission.py (pod
priority), verbs.py (create, update, delete in kube-apiserver's order), listing.py / watch.py
(List and Watch), binding.py (Bind), fencing.py (writes fenced by a Lease), graceful.py (graceful pod
deletion), service.py (gRPC).
"""

from cluster.apiserver.server import ApiServer, ApiServerOptions

__all__ = ["ApiServer", "ApiServerOptions"]
