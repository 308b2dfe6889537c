"""Server-side apply and managedFields, as kube-apiserver's field manager (k8s.io/apimachinery's
util/managedfields over sigs.k8s.io/structured-merge-diff): which manager owns which field of an object,
updated by every write of the HTTP API, and the merge of an applied configuration with its conflicts.

Transport-neutral: it works on objects as Kubernetes JSON dicts and raises ``cluster.api.errors``."""
