"""Builders of the wire contract's view-model objects (docs/ui.md) for the page's browser tests."""

from __future__ import annotations

from typing import Any

GIB = 1024**3
AT = "2026-11-27T05:01:02Z"


def node(
    name: str,
    pods: list[str] | None = None,
    *,
    labels: dict[str, str] | None = None,
    gpus: int = 0,
    ready: bool = True,
    unschedulable: bool = False,
    taints: list[str] | None = None,
    requested_cpu: int = 0,
    devices: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    keys = sorted(pods or [])
    allocatable: dict[str, int] = {"cpu": 8000, "memory": 32 * GIB, "pods": 110}
    requested: dict[str, int] = {
        "cpu": requested_cpu or 500 * len(keys),
        "memory": GIB * len(keys),
        "pods": len(keys),
    }
    if gpus:
        allocatable["nvidia.com/gpu"] = gpus
        requested["nvidia.com/gpu"] = min(gpus, len(keys))
    return {
        "name": name,
        "labels": labels or {"kubernetes.io/hostname": name},
        "taints": taints or [],
        "unschedulable": unschedulable,
        "ready": ready,
        "readiness": "Ready" if ready else "NotReady",
        "allocatable": allocatable,
        "requested": requested,
        "pods": keys,
        "devices": devices or [],
    }


def device(
    name: str, pool: str, *holders: tuple[str, str | None, str], shared: bool = False
) -> dict[str, Any]:
    """A device of gpu.example.com's ``pool``, held by ``holders`` (claim key, shareID, pod key)."""
    return {
        "driver": "gpu.example.com", "pool": pool, "name": name, "shared": shared,
        "holders": [{"claim": claim, "request": "gpu", "shareID": share, "pods": [pod_key]}
                    for claim, share, pod_key in holders],
    }


def pod(
    key: str, node_name: str = "", *, priority: int = 0, reason: str = "", message: str = "", group: str = ""
) -> dict[str, Any]:
    namespace, name = key.split("/")
    pending = not node_name
    return {
        "key": key,
        "namespace": namespace,
        "name": name,
        "node": node_name,
        "phase": "Pending" if pending else "Running",
        "priority": priority,
        "priorityClassName": "high" if priority >= 1000 else "",
        "requests": {"cpu": 500, "memory": GIB},
        "pending": pending,
        "reason": reason,
        "message": message,
        "nominatedNode": "",
        "podGroup": group,
        "terminating": False,
    }


def candidate(identity: str, *, live: bool = True, renewing: bool | None = None,
              renew_time: str = AT) -> dict[str, Any]:
    """A CANDIDATE; a stale one (not ``live``) is not renewing unless told."""
    return {"name": identity, "identity": identity, "renewTime": renew_time, "live": live,
            "renewing": live if renewing is None else renewing}


def leadership(
    holder: str, token: int, timeline: list[dict[str, Any]], replicas: list[str],
    candidates: list[dict[str, Any]] | None = None, *, holder_renewing: bool = True, renew_time: str = AT,
) -> dict[str, Any]:
    """The LEADERSHIP object; ``candidates`` default to a live one per replica."""
    return {
        "lease": "kube-system/kube-scheduler",
        "holder": holder,
        "holderRenewing": holder_renewing,
        "token": token,
        "renewTime": renew_time,
        "acquireTime": AT,
        "leaseDurationSeconds": 15,
        "transitions": max(0, len(timeline) - 1),
        "timeline": timeline,
        "candidates": candidates if candidates is not None else [candidate(id_) for id_ in replicas],
        "replicas": replicas,
    }


def change(holder: str, previous: str, token: int, leaderless: float | None,
           since_last_renewal: float | None = None) -> dict[str, Any]:
    return {"holder": holder, "previous": previous, "token": token, "at": AT, "leaderlessSeconds": leaderless,
            "sinceLastRenewalSeconds": since_last_renewal}


def event(key: str, reason: str, obj: str, message: str, type_: str = "Normal") -> dict[str, Any]:
    return {
        "key": key,
        "time": AT,
        "type": type_,
        "reason": reason,
        "object": obj,
        "message": message,
        "component": "default-scheduler",
        "count": 1,
    }


def summary(
    nodes: dict[str, dict[str, Any]], pods: dict[str, dict[str, Any]], preemptions: int = 0
) -> dict[str, Any]:
    allocatable: dict[str, float] = {}
    requested: dict[str, float] = {}
    for n in nodes.values():
        for resource, value in n["allocatable"].items():
            allocatable[resource] = allocatable.get(resource, 0) + value
        for resource, value in n["requested"].items():
            requested[resource] = requested.get(resource, 0) + value
    pending = sum(1 for p in pods.values() if p["pending"])
    return {
        "nodes": len(nodes),
        "readyNodes": sum(1 for n in nodes.values() if n["ready"]),
        "pods": len(pods),
        "bound": len(pods) - pending,
        "pending": pending,
        "preemptions": preemptions,
        "allocatable": allocatable,
        "requested": requested,
    }


def view_model(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    *,
    lead: dict[str, Any] | None = None,
    pdbs: list[dict[str, Any]] | None = None,
    groups: list[dict[str, Any]] | None = None,
    events: list[dict[str, Any]] | None = None,
    revision: int = 1,
) -> dict[str, Any]:
    by_name = {n["name"]: n for n in nodes}
    by_key = {p["key"]: p for p in pods}
    return {
        "revision": revision,
        "server": "127.0.0.1:7443",
        "nodes": by_name,
        "pods": by_key,
        "leadership": lead or leadership("", 0, [], []),
        "apiServer": {"reachable": True, "since": None, "error": ""},
        "pdbs": {p["key"]: p for p in pdbs or []},
        "podGroups": {g["key"]: g for g in groups or []},
        "events": events or [],
        "summary": summary(by_name, by_key),
    }


def large_view_model(node_count: int, pod_count: int) -> dict[str, Any]:
    """``node_count`` nodes with ``pod_count`` pods spread evenly, every tenth node with GPUs."""
    names = [f"node-{i:05d}" for i in range(node_count)]
    placement: dict[str, list[str]] = {name: [] for name in names}
    pods = []
    for i in range(pod_count):
        key = f"default/pod-{i:06d}"
        host = names[i % node_count]
        placement[host].append(key)
        pods.append(pod(key, host, priority=(i % 5) * 500))
    nodes = [
        node(name, placement[name], labels={"zone": f"zone-{i % 3}"}, gpus=8 if i % 10 == 0 else 0)
        for i, name in enumerate(names)
    ]
    return view_model(nodes, pods)
