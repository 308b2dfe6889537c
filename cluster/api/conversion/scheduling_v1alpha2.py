"""scheduling.k8s.io/v1alpha2 Workload and PodGroup to and from v1alpha3, the version podsched stores.

What differs (kubernetes/api scheduling/v1alpha2 against v1alpha3):

- a PodGroup's ``spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName}`` is v1alpha3's
  ``spec.workloadRef {workloadName, templateName}``;
- ``disruptionMode`` (a PodGroup's and a template's) is a string, ``Pod`` or ``PodGroup``, where v1alpha3
  has a one-of struct, ``{single: {}}`` or ``{all: {}}``;
- v1alpha3 alone has a PodGroup's ``parentCompositePodGroupName`` and ``preemptionPolicy``, a template's
  ``preemptionPolicy`` and a Workload's ``compositePodGroupTemplates`` (and the CompositePodGroup kind).
  Served as v1alpha2 they are left out, as kube-apiserver's conversions leave out an alpha field the older
  version lacks: a v1alpha2 client that writes the object back (update, patch, apply) clears them.

Condition types are data, not converted: a v1alpha2 reader sees the conditions as stored (upstream renamed
``PodGroupScheduled`` to ``PodGroupInitiallyScheduled`` after v1alpha3 was made from v1alpha2; both
versions carry ``[]metav1.Condition``).

Upstream never converted between these two shapes: v1alpha3 began as a copy of v1alpha2, v1alpha2 was
removed the same day, and the differences came afterwards. podsched keeps v1alpha2 because kubernetes.io's
1.36 pages show it.

``to_stored`` takes a v1alpha2 document whose types are checked (decoded against the v1alpha2 message by
the manifest loader or the HTTP codec) and raises ConversionError for a value v1alpha3 cannot hold.
``to_served`` takes a v1alpha3 document as the stored object prints.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from cluster.api import scheduling_v1alpha2_pb2
from cluster.api.conversion.error import ConversionError
from cluster.api.validation.field import not_supported, required

API_VERSION = "scheduling.k8s.io/v1alpha2"
STORED_VERSION = "scheduling.k8s.io/v1alpha3"

#: The kinds of the version and the messages of their served shape.
MESSAGES: dict[str, type[Message]] = {
    "Workload": scheduling_v1alpha2_pb2.Workload,
    "PodGroup": scheduling_v1alpha2_pb2.PodGroup,
}

#: v1alpha2 disruptionMode → the member of v1alpha3's DisruptionMode that is set.
_MODES = {"Pod": "single", "PodGroup": "all"}
_MODE_NAMES = {member: name for name, member in _MODES.items()}

#: The fields of a PodGroup spec and of a template both versions spell alike, in v1alpha2's order.
_SHARED_SPEC = ("schedulingPolicy", "schedulingConstraints", "resourceClaims")
_SHARED_PRIORITY = ("priorityClassName", "priority")
_SHARED_STATUS = ("conditions", "resourceClaimStatuses")

Document = dict[str, Any]


def to_stored(doc: Document) -> Document:
    """The v1alpha3 document of a v1alpha2 Workload or PodGroup."""
    problems: list[str] = []
    stored = dict(doc)
    stored["apiVersion"] = STORED_VERSION
    spec = doc.get("spec")
    if isinstance(spec, dict):
        if doc.get("kind") == "PodGroup":
            stored["spec"] = _pod_group_spec_to_stored(spec, problems)
        else:
            stored["spec"] = _workload_spec_to_stored(spec, problems)
    if problems:
        raise ConversionError(problems)
    return stored


def to_served(doc: Document) -> Document:
    """The v1alpha2 document of a stored (v1alpha3) Workload or PodGroup."""
    served: Document = {key: doc[key] for key in ("apiVersion", "kind", "metadata") if key in doc}
    served["apiVersion"] = API_VERSION
    spec = doc.get("spec")
    if isinstance(spec, dict):
        served["spec"] = (_pod_group_spec_to_served(spec) if doc.get("kind") == "PodGroup"
                          else _workload_spec_to_served(spec))
    status = doc.get("status")
    if isinstance(status, dict):
        served["status"] = {key: status[key] for key in _SHARED_STATUS if key in status}
    return served


# ------------------------------------------------------------------------------------------ to v1alpha3


def _pod_group_spec_to_stored(spec: Document, problems: list[str]) -> Document:
    stored = {key: value for key, value in spec.items() if key != "podGroupTemplateRef"}
    if "podGroupTemplateRef" in spec:
        workload = (spec["podGroupTemplateRef"] or {}).get("workload")
        if workload is None:
            problems.append(required("spec.podGroupTemplateRef", "must specify one of: `workload`"))
        else:
            reference = {"workloadName": workload.get("workloadName", "")}
            reference["templateName"] = workload.get("podGroupTemplateName", "")
            stored["workloadRef"] = reference
    _mode_to_stored(stored, "spec.disruptionMode", problems)
    return stored


def _workload_spec_to_stored(spec: Document, problems: list[str]) -> Document:
    stored = dict(spec)
    templates = spec.get("podGroupTemplates")
    if isinstance(templates, list):
        stored["podGroupTemplates"] = [
            _mode_to_stored(dict(template), f"spec.podGroupTemplates[{index}].disruptionMode", problems)
            for index, template in enumerate(templates)
        ]
    return stored


def _mode_to_stored(holder: Document, path: str, problems: list[str]) -> Document:
    """``holder`` with its disruptionMode string as v1alpha3's struct (in place; returned)."""
    if "disruptionMode" not in holder:
        return holder
    mode = holder["disruptionMode"]
    member = _MODES.get(mode) if isinstance(mode, str) else None
    if member is None:
        problems.append(not_supported(path, mode, list(_MODES)))
        del holder["disruptionMode"]
    else:
        holder["disruptionMode"] = {member: {}}
    return holder


# ------------------------------------------------------------------------------------------ to v1alpha2


def _pod_group_spec_to_served(spec: Document) -> Document:
    served: Document = {}
    reference = spec.get("workloadRef")
    if isinstance(reference, dict):
        served["podGroupTemplateRef"] = {"workload": {
            "workloadName": reference.get("workloadName", ""),
            "podGroupTemplateName": reference.get("templateName", ""),
        }}
    return _common_to_served(spec, served)


def _workload_spec_to_served(spec: Document) -> Document:
    served: Document = {key: spec[key] for key in ("controllerRef",) if key in spec}
    templates = spec.get("podGroupTemplates")
    if isinstance(templates, list):
        served["podGroupTemplates"] = [
            _common_to_served(template, {"name": template["name"]} if "name" in template else {})
            for template in templates if isinstance(template, dict)
        ]
    return served


def _common_to_served(stored: Document, served: Document) -> Document:
    """``served`` with what a PodGroup spec and a template share: the fields spelled alike, and
    disruptionMode as its string (left out when v1alpha3 holds neither member)."""
    served.update((key, stored[key]) for key in _SHARED_SPEC if key in stored)
    mode = stored.get("disruptionMode")
    if isinstance(mode, dict):
        name = next((_MODE_NAMES[member] for member in ("single", "all") if member in mode), None)
        if name is not None:
            served["disruptionMode"] = name
    served.update((key, stored[key]) for key in _SHARED_PRIORITY if key in stored)
    return served
