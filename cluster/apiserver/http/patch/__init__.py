"""PATCH for the HTTP API: JSON patch, JSON merge patch and strategic merge patch applied to an object's
Kubernetes JSON, and the list and map schema of every served kind that strategic merge and server-side
apply follow."""
