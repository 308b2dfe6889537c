"""The Kubernetes HTTP API (JSON) beside gRPC: the same verbs, watch cache, access control, admission,
flow control and fencing, served at Kubernetes' paths so kubectl and the official clients work."""
