"""The podsched API server: Kubernetes' API verbs over gRPC, on any Store.

Public face: ``ApiServer`` and ``ApiServerOptions`` (server.py). The rest is the server's own:
storage.py (objects in the store), registry/ (what each kind adds to a write, one module per kind),
strategy.py / defaults.py (what a write stores), admission/ (the admission plugins, in order), verbs.py
(create, update, delete in kube-apiserver's order), listing.py / watch.py
(List and Watch), binding.py (Bind), fencing.py (writes fenced by a Lease), graceful.py (graceful pod
deletion), service.py (gRPC).
"""

from cluster.apiserver.server import ApiServer, ApiServerOptions

__all__ = ["ApiServer", "ApiServerOptions"]
