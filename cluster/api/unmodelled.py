"""The real Kubernetes fields podsched knows it does not model, by the message (the Kubernetes type) that
has them, in their JSON names.

A manifest's field that its message lacks is one of two things: a field of the real API that podsched
drops on purpose (probes, ``metadata.finalizers``: what ``kubectl get -o yaml`` prints from a
real cluster), or a mistake (``nodeSelecter``), which would silently schedule the pod without what the
user meant. The manifest loader words the two differently, and for the second suggests the nearest
field the message has. The lists follow k8s.io/api's core/v1, apps/v1, policy/v1 and coordination/v1
types; a real field missing here is only worded as unknown, never lost."""

from __future__ import annotations

_STATUS = frozenset({"status"})

#: JSON names of the real fields of each message (by its protobuf name) that podsched does not model.
NOT_MODELLED: dict[str, frozenset[str]] = {
    "ObjectMeta": frozenset({"selfLink", "finalizers"}),
    "PodSpec": frozenset({
        "ephemeralContainers", "activeDeadlineSeconds", "dnsPolicy", "dnsConfig",
        "serviceAccount", "automountServiceAccountToken", "hostNetwork", "hostPID", "hostIPC",
        "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain",
        "hostAliases", "readinessGates", "enableServiceLinks", "setHostnameAsFQDN", "os", "hostUsers",
        "resources",
    }),
    "Container": frozenset({
        "envFrom", "resizePolicy", "livenessProbe", "readinessProbe",
        "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
        "securityContext", "stdin", "stdinOnce", "tty",
    }),
    "EnvVar": frozenset({"valueFrom"}),
    "PodStatus": frozenset({
        "hostIPs", "podIPs", "initContainerStatuses", "containerStatuses",
        "ephemeralContainerStatuses", "qosClass", "resize", "observedGeneration",
    }),
    "PodCondition": frozenset({"observedGeneration"}),
    "NodeSpec": frozenset({"podCIDRs", "configSource", "externalID"}),
    "NodeStatus": frozenset({
        "phase", "addresses", "daemonEndpoints", "nodeInfo", "volumesInUse", "volumesAttached", "config",
        "runtimeHandlers", "features",
    }),
    "PodDisruptionBudgetStatus": frozenset({"conditions"}),
    "NamespaceStatus": frozenset({"conditions"}),
    "LeaseSpec": frozenset({"strategy", "preferredHolder"}),
    "ServiceSpec": frozenset({
        "externalIPs", "loadBalancerIP", "loadBalancerSourceRanges",
        "externalName", "externalTrafficPolicy", "healthCheckNodePort", "publishNotReadyAddresses",
        "sessionAffinityConfig", "ipFamilies", "ipFamilyPolicy", "allocateLoadBalancerNodePorts",
        "loadBalancerClass", "internalTrafficPolicy", "trafficDistribution",
    }),
    "StatefulSetSpec": frozenset({
        "volumeClaimTemplates", "updateStrategy", "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy", "ordinals",
    }),
    # Kinds podsched keeps only for their selectors: their controllers' status is never written here.
    "Service": _STATUS,
    "ReplicaSet": _STATUS,
    "StatefulSet": _STATUS,
    "ReplicationController": _STATUS,
}
