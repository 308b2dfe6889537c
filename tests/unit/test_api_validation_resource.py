"""resource.k8s.io/v1 validation (Dynamic Resource Allocation), as rows translated from upstream's
pkg/apis/resource/validation tests: a valid object of each kind, then each kind of error with its field
path; the updates and status updates upstream allows or refuses; pods' claim fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.validation import validate_object, validate_status_update, validate_update
from tests import builders

SHARE_ID = "c7b1ad8e-9a2b-4f0e-8d1c-2f6b3f7a9e10"


def _parse(message: type[Message], manifest: dict[str, Any]) -> Any:
    return json_format.ParseDict(manifest, message())


def device_class(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": spec,
    }


def resource_slice(**spec: Any) -> dict[str, Any]:
    full = {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {"model": {"string": "a100"}},
                "capacity": {"memory": {"value": "40Gi"}},
            }
        ],
    }
    full.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu"},
        "spec": full,
    }


def exactly(**fields: Any) -> dict[str, Any]:
    return {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1, **fields}


def claim(requests: list[dict[str, Any]] | None = None, **devices: Any) -> dict[str, Any]:
    if requests is None:
        requests = [{"name": "gpu", "exactly": exactly()}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "single-gpu", "namespace": "default"},
        "spec": {"devices": {"requests": requests, **devices}},
    }


def template(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-template", "namespace": "default"},
        "spec": {"spec": claim()["spec"], **spec},
    }


def _with(manifest: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``manifest`` with ``value`` at a dotted ``path`` (list indexes as numbers)."""
    changed = copy.deepcopy(manifest)
    *parents, last = path.split(".")
    target: Any = changed
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return changed


_MESSAGES = {
    "DeviceClass": objects_pb2.DeviceClass,
    "ResourceSlice": objects_pb2.ResourceSlice,
    "ResourceClaim": objects_pb2.ResourceClaim,
    "ResourceClaimTemplate": objects_pb2.ResourceClaimTemplate,
}

#: (id, manifest, expected problems: exact strings; [] when valid)
ROWS: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "class-valid",
        device_class(
            selectors=[{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
            config=[{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}],
        ),
        [],
    ),
    (
        "class-bad-name",
        _with(device_class(), "metadata.name", "GPU"),
        [
            'metadata.name: Invalid value: "GPU": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ],
    ),
    ("class-selector-without-cel", device_class(selectors=[{}]), ["spec.selectors[0].cel: Required value"]),
    (
        "class-too-long-cel",
        device_class(selectors=[{"cel": {"expression": "x" * (10 * 1024 + 1)}}]),
        ["spec.selectors[0].cel.expression: Too long: must have at most 10240 bytes"],
    ),
    (
        "class-selector-not-bool",
        device_class(selectors=[{"cel": {"expression": "device.driver"}}]),
        [
            'spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the '
            "unknown type, not string"
        ],
    ),
    (
        "claim-selector-does-not-compile",
        claim([{"name": "gpu", "exactly": exactly(selectors=[{"cel": {"expression": "device.driver =="}}])}]),
        ["spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: \"device.driver ==\": "
         "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting "
         "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
         "BYTES, IDENTIFIER}"
         "\n | device.driver ==\n | ................^"],
    ),
    ("class-config-without-opaque", device_class(config=[{}]), ["spec.config[0].opaque: Required value"]),
    (
        "class-config-without-parameters",
        device_class(config=[{"opaque": {"driver": "gpu.example.com"}}]),
        ["spec.config[0].opaque.parameters: Required value"],
    ),
    (
        "class-config-bad-driver",
        device_class(config=[{"opaque": {"driver": "", "parameters": {}}}]),
        ["spec.config[0].opaque.driver: Required value"],
    ),
    (
        "class-bad-extended-resource",
        device_class(extendedResourceName="gpu"),
        ['spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'],
    ),
    ("class-extended-resource", device_class(extendedResourceName="example.com/gpu"), []),
    (
        "class-too-many-selectors",
        device_class(selectors=[{"cel": {"expression": "true"}}] * 33),
        ["spec.selectors: Too many: 33: must have at most 32 items"],
    ),
    # ResourceSlice
    ("slice-valid", resource_slice(), []),
    ("slice-all-nodes", resource_slice(nodeName=None, allNodes=True), []),
    ("slice-no-driver", resource_slice(driver=""), ["spec.driver: Required value"]),
    (
        "slice-driver-too-long",
        resource_slice(driver="a" * 64),
        ["spec.driver: Too long: must have at most 63 bytes"],
    ),
    (
        "slice-no-pool-name",
        resource_slice(pool={"name": "", "resourceSliceCount": 1}),
        ["spec.pool.name: Required value"],
    ),
    (
        "slice-bad-pool-counts",
        resource_slice(pool={"name": "p", "generation": -1, "resourceSliceCount": 0}),
        [
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
            "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero",
        ],
    ),
    (
        "slice-no-node-choice",
        resource_slice(nodeName=None),
        [
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` "
            "is required"
        ],
    ),
    (
        "slice-two-node-choices",
        resource_slice(allNodes=True),
        [
            'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, '
            "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"
        ],
    ),
    (
        "slice-all-nodes-false",
        resource_slice(nodeName=None, allNodes=False, perDeviceNodeSelection=True, devices=[]),
        ["spec.allNodes: Invalid value: false: must be either unset or set to true"],
    ),
    (
        "slice-two-selector-terms",
        resource_slice(
            nodeName=None,
            nodeSelector={
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
                    {"matchExpressions": [{"key": "b", "operator": "Exists"}]},
                ]
            },
        ),
        ["spec.nodeSelector.nodeSelectorTerms: Invalid value: 2: must have exactly one node selector term"],
    ),
    (
        "slice-duplicate-device",
        resource_slice(devices=[{"name": "gpu-0"}, {"name": "gpu-0"}]),
        ['spec.devices[1]: Duplicate value: "gpu-0"'],
    ),
    (
        "slice-too-many-devices",
        resource_slice(devices=[{"name": f"gpu-{i}"} for i in range(129)]),
        ["spec.devices: Too many: 129: must have at most 128 items"],
    ),
    (
        "slice-fewer-devices-with-taints",
        resource_slice(
            devices=[
                {"name": f"gpu-{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]} for i in range(65)
            ]
        ),
        ["spec.devices: Too many: 65: must have at most 64 items"],
    ),
    (
        "slice-attribute-two-values",
        resource_slice(devices=[{"name": "d", "attributes": {"model": {"string": "a", "int": 1}}}]),
        [
            'spec.devices[0].attributes[model]: Invalid value: "{\\"int\\":\\"1\\",\\"string\\":\\"a\\"}": '
            'exactly '
            "one value must be specified"
        ],
    ),
    (
        "slice-attribute-no-value",
        resource_slice(devices=[{"name": "d", "attributes": {"model": {}}}]),
        ['spec.devices[0].attributes[model]: Invalid value: "": exactly one value must be specified'],
    ),
    (
        "slice-bad-version",
        resource_slice(devices=[{"name": "d", "attributes": {"driverVersion": {"version": "1.0"}}}]),
        [
            'spec.devices[0].attributes[driverVersion].version: Invalid value: "1.0": must be a string '
            'compatible '
            "with semver.org spec 2.0.0"
        ],
    ),
    (
        "slice-good-version",
        resource_slice(
            devices=[{"name": "d", "attributes": {"driverVersion": {"version": "1.2.3-rc.1+build.5"}}}]
        ),
        [],
    ),
    (
        "slice-bad-attribute-name",
        resource_slice(devices=[{"name": "d", "attributes": {"a/b/c": {"bool": True}}}]),
        ['spec.devices[0].attributes: Invalid value: "a/b/c": must not contain more than one slash'],
    ),
    (
        "slice-attribute-empty-domain",
        resource_slice(devices=[{"name": "d", "attributes": {"/model": {"bool": True}}}]),
        ['spec.devices[0].attributes: Invalid value: "": the domain must not be empty'],
    ),
    (
        "slice-too-many-attributes",
        resource_slice(devices=[{"name": "d", "attributes": {f"a{i}": {"bool": True} for i in range(33)}}]),
        [
            "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not "
            "exceed 32"
        ],
    ),
    (
        "slice-bad-taint-effect",
        resource_slice(
            devices=[{"name": "d", "taints": [{"key": "example.com/broken", "effect": "PreferNoSchedule"}]}]
        ),
        [
            'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: '
            '"NoExecute", "NoSchedule", "None"'
        ],
    ),
    (
        "slice-taint-without-effect",
        resource_slice(devices=[{"name": "d", "taints": [{"key": "k"}]}]),
        ["spec.devices[0].taints[0].effect: Required value"],
    ),
    (
        "slice-per-device-node-without-flag",
        resource_slice(devices=[{"name": "d", "nodeName": "node-1"}]),
        [
            'spec.devices[0]: Invalid value: "null": `nodeName`, `nodeSelector` and `allNodes` can only be '
            'set if '
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
        ],
    ),
    (
        "slice-per-device-node-missing",
        resource_slice(nodeName=None, perDeviceNodeSelection=True, devices=[{"name": "d"}]),
        [
            "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
            "required "
            "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
        ],
    ),
    (
        "slice-request-policy-needs-multiple-allocations",
        resource_slice(
            devices=[
                {"name": "d", "capacity": {"memory": {"value": "40Gi", "requestPolicy": {"default": "1Gi"}}}}
            ]
        ),
        ["spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true"],
    ),
    (
        "slice-consumable-capacity",
        resource_slice(
            devices=[
                {
                    "name": "d",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
                        }
                    },
                }
            ]
        ),
        [],
    ),
    (
        "slice-capacity-default-off-step",
        resource_slice(
            devices=[
                {
                    "name": "d",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {
                                "default": "1536Mi",
                                "validRange": {"min": "1Gi", "step": "1Gi"},
                            },
                        }
                    },
                }
            ]
        ),
        [
            'spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: "1536Mi": value '
            'is not a '
            "multiple of a given step (1Gi) from (1Gi)"
        ],
    ),
    (
        "slice-capacity-both-policies",
        resource_slice(
            devices=[
                {
                    "name": "d",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {
                                "default": "1Gi",
                                "validValues": ["1Gi"],
                                "validRange": {"min": "1Gi"},
                            },
                        }
                    },
                }
            ]
        ),
        [
            "spec.devices[0].capacity[memory].requestPolicy: Forbidden: exactly one policy can be "
            "specified, cannot "
            'specify "validValues" and "validRange" at the same time'
        ],
    ),
    (
        "slice-capacity-valid-values-unsorted",
        resource_slice(
            devices=[
                {
                    "name": "d",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {"default": "2Gi", "validValues": ["4Gi", "2Gi"]},
                        }
                    },
                }
            ]
        ),
        [
            'spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Invalid value: "2Gi": values '
            'must be '
            "sorted in ascending order"
        ],
    ),
    (
        "slice-bad-quantity",
        resource_slice(devices=[{"name": "d", "capacity": {"memory": {"value": "lots"}}}]),
        [
            'spec.devices[0].capacity[memory].value: Invalid value: "lots": must match the regex '
            "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
        ],
    ),
    (
        "slice-shared-counters",
        resource_slice(
            devices=[], sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}]
        ),
        [],
    ),
    (
        "slice-counters-and-devices",
        resource_slice(
            sharedCounters=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}]
        ),
        ['spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'],
    ),
    (
        "slice-duplicate-counter-set",
        resource_slice(
            devices=[],
            sharedCounters=[
                {"name": "c", "counters": {"m": {"value": "1"}}},
                {"name": "c", "counters": {"m": {"value": "1"}}},
            ],
        ),
        ['spec.sharedCounters[1]: Duplicate value: "c"'],
    ),
    (
        "slice-counter-set-without-counters",
        resource_slice(devices=[], sharedCounters=[{"name": "c"}]),
        ["spec.sharedCounters[0].counters: Required value"],
    ),
    (
        "slice-consumes-counters",
        resource_slice(
            devices=[
                {
                    "name": "d",
                    "consumesCounters": [
                        {"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "10Gi"}}}
                    ],
                }
            ]
        ),
        [],
    ),
    (
        "slice-consumption-without-set",
        resource_slice(
            devices=[{"name": "d", "consumesCounters": [{"counters": {"memory": {"value": "10Gi"}}}]}]
        ),
        ["spec.devices[0].consumesCounters[0].counterSet: Required value"],
    ),
    (
        "slice-binding-conditions-alone",
        resource_slice(devices=[{"name": "d", "bindingConditions": ["ready"]}]),
        [
            'spec.devices[0].bindingFailureConditions: Invalid value: "[]": bindingFailureConditions are '
            'required '
            "to use bindingConditions"
        ],
    ),
    # ResourceClaim
    ("claim-valid", claim(), []),
    ("claim-all-devices", claim([{"name": "gpus", "exactly": exactly(allocationMode="All", count=0)}]), []),
    (
        "claim-bad-name",
        _with(claim(), "metadata.name", "Single"),
        [
            'metadata.name: Invalid value: "Single": a lowercase RFC 1123 subdomain must consist of lower '
            'case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ],
    ),
    (
        "claim-request-name-not-label",
        claim([{"name": "gpu.one", "exactly": exactly()}]),
        ['spec.devices.requests[0].name: Invalid value: "gpu.one": must not contain dots'],
    ),
    (
        "claim-request-without-name",
        claim([{"exactly": exactly()}]),
        ["spec.devices.requests[0].name: Required value"],
    ),
    (
        "claim-duplicate-request",
        claim([{"name": "gpu", "exactly": exactly()}] * 2),
        ['spec.devices.requests[1]: Duplicate value: "gpu"'],
    ),
    (
        "claim-request-neither",
        claim([{"name": "gpu"}]),
        [
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is "
            "required"
        ],
    ),
    (
        "claim-request-both",
        claim(
            [
                {
                    "name": "gpu",
                    "exactly": exactly(),
                    "firstAvailable": [
                        {
                            "name": "small",
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        }
                    ],
                }
            ]
        ),
        [
            'spec.devices.requests[0]: Invalid value: "null": exactly one of `exactly` or `firstAvailable` '
            'is '
            "required, but multiple fields are set"
        ],
    ),
    (
        "claim-without-class",
        claim([{"name": "gpu", "exactly": exactly(deviceClassName="")}]),
        ["spec.devices.requests[0].exactly.deviceClassName: Required value"],
    ),
    (
        "claim-bad-mode",
        claim([{"name": "gpu", "exactly": exactly(allocationMode="Some")}]),
        [
            'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: '
            '"All", '
            '"ExactCount"'
        ],
    ),
    (
        "claim-zero-count",
        claim([{"name": "gpu", "exactly": exactly(count=0)}]),
        ["spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"],
    ),
    (
        "claim-count-with-all",
        claim([{"name": "gpu", "exactly": exactly(allocationMode="All", count=2)}]),
        [
            "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when "
            "allocationMode is "
            "'All'"
        ],
    ),
    (
        "claim-selector-without-cel",
        claim([{"name": "gpu", "exactly": exactly(selectors=[{}])}]),
        ["spec.devices.requests[0].exactly.selectors[0].cel: Required value"],
    ),
    (
        "claim-first-available",
        claim(
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {
                            "name": "big",
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                        {
                            "name": "small",
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 2,
                        },
                    ],
                }
            ],
            constraints=[{"requests": ["gpu/big"], "matchAttribute": "gpu.example.com/model"}],
        ),
        [],
    ),
    (
        "claim-duplicate-subrequest",
        claim(
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {
                            "name": "big",
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        }
                    ]
                    * 2,
                }
            ]
        ),
        ['spec.devices.requests[0].firstAvailable[1]: Duplicate value: "big"'],
    ),
    (
        "claim-bad-toleration",
        claim(
            [
                {
                    "name": "gpu",
                    "exactly": exactly(
                        tolerations=[
                            {"key": "k", "operator": "Exists", "value": "v", "effect": "PreferNoSchedule"}
                        ]
                    ),
                }
            ]
        ),
        [
            'spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "v": must be empty for '
            'operator '
            "`Exists`",
            'spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "PreferNoSchedule": '
            'supported values: "NoExecute", "NoSchedule", "None"',
        ],
    ),
    (
        "claim-toleration-without-operator",
        claim([{"name": "gpu", "exactly": exactly(tolerations=[{"key": "k"}])}]),
        ["spec.devices.requests[0].exactly.tolerations[0].operator: Required value"],
    ),
    (
        "claim-capacity-request",
        claim([{"name": "gpu", "exactly": exactly(capacity={"requests": {"memory": "10Gi"}})}]),
        [],
    ),
    (
        "claim-bad-capacity-request",
        claim([{"name": "gpu", "exactly": exactly(capacity={"requests": {"memory": "ten"}})}]),
        [
            'spec.devices.requests[0].exactly.capacity.requests[memory]: Invalid value: "ten": must match '
            'the regex '
            "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
        ],
    ),
    (
        "claim-constraint-unknown-request",
        claim(constraints=[{"requests": ["cpu"], "matchAttribute": "gpu.example.com/model"}]),
        [
            'spec.devices.constraints[0].requests[0]: Invalid value: "cpu": must be the name of a request '
            'in the '
            "claim or the name of a request and a subrequest separated by '/'"
        ],
    ),
    (
        "claim-constraint-without-attribute",
        claim(constraints=[{"requests": ["gpu"]}]),
        [
            'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or '
            '"distinctAttribute" is '
            "required, but multiple fields are set"
        ],
    ),
    (
        "claim-constraint-unqualified",
        claim(constraints=[{"matchAttribute": "model"}]),
        [
            'spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name '
            'must be a '
            "domain and a name separated by a slash"
        ],
    ),
    (
        "claim-config",
        claim(
            config=[
                {
                    "requests": ["gpu"],
                    "opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "timeSlicing"}},
                }
            ]
        ),
        [],
    ),
    (
        "claim-config-unknown-request",
        claim(config=[{"requests": ["tpu"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}]),
        [
            'spec.devices.config[0].requests[0]: Invalid value: "tpu": must be the name of a request in the '
            'claim or '
            "the name of a request and a subrequest separated by '/'"
        ],
    ),
    # ResourceClaimTemplate
    ("template-valid", template(metadata={"labels": {"app": "inference"}}), []),
    (
        "template-spec-checked",
        _with(template(), "spec.spec.devices.requests.0.exactly.count", 0),
        ["spec.spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"],
    ),
    (
        "template-metadata-name",
        template(metadata={"name": "x"}),
        ["spec.metadata.name: Forbidden: cannot be set for a template"],
    ),
    (
        "template-bad-label",
        template(metadata={"labels": {"app": "a b"}}),
        [
            'spec.metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
    ),
]


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


@pytest.mark.parametrize(("manifest", "expected"), [(m, e) for _, m, e in ROWS], ids=[r[0] for r in ROWS])
def test_validation_rows(manifest: dict[str, Any], expected: list[str]) -> None:
    obj = _parse(_MESSAGES[manifest["kind"]], _drop_none(manifest))
    assert validate_object(obj) == expected


def _allocated(claim_obj: objects_pb2.ResourceClaim, **result: Any) -> objects_pb2.ResourceClaim:
    allocated = objects_pb2.ResourceClaim()
    allocated.CopyFrom(claim_obj)
    json_format.ParseDict(
        {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": "node-1",
                            "device": "gpu-0",
                            **result,
                        }
                    ]
                }
            }
        },
        allocated.status,
    )
    return allocated


def _claim() -> objects_pb2.ResourceClaim:
    return _parse(objects_pb2.ResourceClaim, claim())


def test_an_allocated_and_reserved_claim_is_valid() -> None:
    allocated = _allocated(_claim(), shareID=SHARE_ID, consumedCapacity={"memory": "10Gi"})
    allocated.status.reserved_for.add(resource="pods", name="web", uid="u1")
    assert validate_object(allocated) == []
    assert validate_status_update(_claim(), allocated) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda c: c.status.reserved_for.add(resource="pods", name="web", uid="u1"),
            ["status.reservedFor: Forbidden: may not be specified when `allocated` is not set"],
            id="reserved-without-allocation",
        ),
        pytest.param(
            lambda c: c.status.reserved_for.add(resource="pods", name="web"),
            [
                "status.reservedFor[0].uid: Required value",
                "status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
            ],
            id="consumer-without-uid",
        ),
        pytest.param(
            lambda c: [
                c.status.reserved_for.add(resource="pods", name=f"p{i}", uid=f"u{i}") for i in range(257)
            ],
            [
                "status.reservedFor: Too many: 257: must have at most 256 items",
                "status.reservedFor: Forbidden: may not be specified when `allocated` is not set",
            ],
            id="too-many-consumers",
        ),
    ],
)
def test_status_rows(change: Any, expected: list[str]) -> None:
    updated = _claim()
    change(updated)
    assert validate_object(updated) == expected


def test_reserved_for_uids_are_unique() -> None:
    allocated = _allocated(_claim())
    allocated.status.reserved_for.add(resource="pods", name="a", uid="u1")
    allocated.status.reserved_for.add(resource="pods", name="b", uid="u1")
    assert validate_object(allocated) == ['status.reservedFor[1]: Duplicate value: "u1"']


def test_a_claim_may_be_reserved_for_a_pod_group() -> None:
    """KEP-5729: a PodGroup's claim is reserved for the PodGroup (scheduling.k8s.io podgroups), beside
    pods; the entry needs its name and uid as a pod's does."""
    allocated = _allocated(_claim())
    allocated.status.reserved_for.add(api_group="scheduling.k8s.io", resource="podgroups", name="train",
                                      uid="g1")
    allocated.status.reserved_for.add(resource="pods", name="web", uid="u1")
    assert validate_object(allocated) == []
    assert validate_status_update(_allocated(_claim()), allocated) == []
    nameless = _allocated(_claim())
    nameless.status.reserved_for.add(api_group="scheduling.k8s.io", resource="podgroups")
    assert validate_object(nameless) == ["status.reservedFor[0].name: Required value",
                                         "status.reservedFor[0].uid: Required value"]


def test_allocation_results_name_requests_of_the_claim() -> None:
    allocated = _allocated(_claim(), request="tpu", shareID="NOT-A-UID")
    assert validate_object(allocated) == [
        'status.allocation.devices.results[0].request: Invalid value: "tpu": must be the name of a request '
        'in '
        "the claim or the name of a request and a subrequest separated by '/'",
        'status.allocation.devices.results[0].shareID: Invalid value: "NOT-A-UID": uid must be in RFC 4122 '
        "normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
    ]


def test_an_allocation_is_set_once_and_cleared_never_changed() -> None:
    first = _allocated(_claim())
    other = _allocated(_claim(), device="gpu-1")
    assert validate_status_update(_claim(), first) == []
    assert validate_status_update(first, _claim()) == []
    problems = validate_status_update(first, other)
    assert len(problems) == 1 and problems[0].startswith("status.allocation: Invalid value: ")
    assert problems[0].endswith(": field is immutable")


def test_a_deleted_claim_gains_no_consumers() -> None:
    allocated = _allocated(_claim())
    allocated.metadata.deletion_timestamp.seconds = 1
    reserved = objects_pb2.ResourceClaim()
    reserved.CopyFrom(allocated)
    reserved.status.reserved_for.add(resource="pods", name="web", uid="u1")
    assert validate_status_update(allocated, reserved) == [
        "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
        "`deletionTimestamp` are set"
    ]
    assert validate_status_update(reserved, allocated) == []


def test_claim_and_template_specs_are_immutable_a_slices_driver_and_pool_too() -> None:
    old, new = _claim(), _claim()
    new.spec.devices.requests[0].exactly.count = 2
    problems = validate_update(old, new)
    assert len(problems) == 1 and problems[0].startswith("spec: Invalid value: ")
    assert problems[0].endswith("field is immutable")
    old_template = _parse(objects_pb2.ResourceClaimTemplate, template())
    new_template = _parse(objects_pb2.ResourceClaimTemplate, template(metadata={"labels": {"a": "b"}}))
    assert validate_update(old_template, new_template)[0].endswith("field is immutable")
    old_slice = _parse(objects_pb2.ResourceSlice, resource_slice())
    new_slice = _parse(
        objects_pb2.ResourceSlice,
        resource_slice(driver="tpu.example.com", pool={"name": "p2", "resourceSliceCount": 1}),
    )
    assert validate_update(old_slice, new_slice) == [
        'spec.pool.name: Invalid value: "p2": field is immutable',
        'spec.driver: Invalid value: "tpu.example.com": field is immutable',
    ]
    # Devices may change: a driver republishes its slices.
    republished = _parse(objects_pb2.ResourceSlice, resource_slice(devices=[{"name": "gpu-1"}]))
    assert validate_update(old_slice, republished) == []


# ------------------------------------------------------------------------------------ pods' claims


def _pod_with_claims(*claims: dict[str, Any], container_claims: list[dict[str, str]] | None = None) -> Any:
    pod = builders.pod("web", image="busybox")
    for entry in claims:
        json_format.ParseDict(entry, pod.spec.resource_claims.add())
    for entry in container_claims or []:
        json_format.ParseDict(entry, pod.spec.containers[0].resources.claims.add())
    return pod


POD_ROWS = [
    (
        "by-claim-and-template",
        [
            {"name": "gpu", "resourceClaimName": "single-gpu"},
            {"name": "tpu", "resourceClaimTemplateName": "tpu-template"},
        ],
        [{"name": "gpu"}, {"name": "tpu", "request": "big"}],
        [],
    ),
    (
        "neither",
        [{"name": "gpu"}],
        [],
        [
            'spec.resourceClaims[0]: Invalid value: "{\\"name\\":\\"gpu\\"}": must specify one of: '
            "`resourceClaimName`, `resourceClaimTemplateName`"
        ],
    ),
    (
        "both",
        [{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}],
        [],
        [
            'spec.resourceClaims[0]: Invalid value: "{\\"name\\":\\"gpu\\",\\"resourceClaimName\\":\\"a\\",'
            '\\"resourceClaimTemplateName\\":\\"b\\"}": at most one of `resourceClaimName` or '
            "`resourceClaimTemplateName` may be specified"
        ],
    ),
    (
        "duplicate",
        [{"name": "gpu", "resourceClaimName": "a"}, {"name": "gpu", "resourceClaimName": "b"}],
        [],
        ['spec.resourceClaims[1].name: Duplicate value: "gpu"'],
    ),
    (
        "name-not-label",
        [{"name": "gpu.a", "resourceClaimName": "a"}],
        [],
        ['spec.resourceClaims[0].name: Invalid value: "gpu.a": must not contain dots'],
    ),
    ("missing-name", [{"resourceClaimName": "a"}], [], ["spec.resourceClaims[0].name: Required value"]),
    (
        "container-names-unknown",
        [{"name": "gpu", "resourceClaimName": "a"}],
        [{"name": "tpu"}],
        [
            'spec.containers[0].resources.claims[0]: Not found: "tpu": must be one of the names in '
            "pod.spec.resourceClaims: gpu"
        ],
    ),
    (
        "container-claims-without-pod-claims",
        [],
        [{"name": "tpu"}],
        [
            'spec.containers[0].resources.claims[0]: Not found: "tpu": must be one of the names in '
            "pod.spec.resourceClaims which is empty"
        ],
    ),
    (
        "container-duplicate",
        [{"name": "gpu", "resourceClaimName": "a"}],
        [{"name": "gpu"}, {"name": "gpu"}],
        ['spec.containers[0].resources.claims[1]: Duplicate value: "gpu"'],
    ),
    (
        "container-claim-without-name",
        [{"name": "gpu", "resourceClaimName": "a"}],
        [{"request": "x"}],
        ["spec.containers[0].resources.claims[0]: Required value"],
    ),
]


@pytest.mark.parametrize(
    ("claims", "container_claims", "expected"), [r[1:] for r in POD_ROWS], ids=[r[0] for r in POD_ROWS]
)
def test_pod_claim_rows(
    claims: list[dict[str, Any]], container_claims: list[dict[str, str]], expected: list[str]
) -> None:
    assert validate_object(_pod_with_claims(*claims, container_claims=container_claims)) == expected


def test_pod_claim_statuses_name_entries_of_the_spec_once() -> None:
    pod = _pod_with_claims({"name": "gpu", "resourceClaimTemplateName": "gpu-template"})
    pod.status.resource_claim_statuses.add(name="gpu", resource_claim_name="web-gpu-x7k2p")
    assert validate_object(pod) == []
    pod.status.resource_claim_statuses.add(name="gpu", resource_claim_name="Bad")
    pod.status.resource_claim_statuses.add(name="tpu")
    assert validate_object(pod) == [
        'status.resourceClaimStatuses[1].name: Duplicate value: "gpu"',
        'status.resourceClaimStatuses[1].name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must '
        'consist '
        "of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'status.resourceClaimStatuses[2].name: Invalid value: "tpu": must match the name of an entry in '
        "`spec.resourceClaims`",
    ]


def test_a_pods_claims_are_immutable() -> None:
    old = _pod_with_claims({"name": "gpu", "resourceClaimName": "a"})
    new = _pod_with_claims({"name": "gpu", "resourceClaimName": "b"})
    problems = validate_update(old, new)
    assert len(problems) == 1 and "changed: spec.resourceClaims" in problems[0]


def _gpu_pod(**status: Any) -> Any:
    """A pod whose init container i0 and container c0 ask for example.com/gpu, with this
    status.extendedResourceClaimStatus."""
    def gpu_container(name: str) -> dict[str, Any]:
        gpu = {"example.com/gpu": "1"}
        return {"name": name, "image": builders.IMAGE, "resources": {"requests": gpu, "limits": gpu}}

    spec = {"initContainers": [gpu_container("i0")], "containers": [gpu_container("c0")]}
    return builders.pod("web", spec=spec, status={"extendedResourceClaimStatus": status})


def _mapping(container: str = "c0", resource: str = "example.com/gpu",
             request: str = "container-1-request-1") -> dict[str, str]:
    return {"containerName": container, "resourceName": resource, "requestName": request}


@pytest.mark.parametrize(("status", "expected"), [
    pytest.param({"requestMappings": [_mapping(), _mapping("i0", request="container-0-request-0")],
                  "resourceClaimName": "web-extended-resources-x7k2p"}, [], id="valid"),
    pytest.param({"resourceClaimName": "web-extended-resources-x7k2p"},
                 ["status.extendedResourceClaimStatus.requestMappings: Required value: at least one request "
                  "mapping is required"],
                 id="no-mappings"),
    pytest.param({"requestMappings": [_mapping()]},
                 ["status.extendedResourceClaimStatus.resourceClaimName: Required value"],
                 id="no-claim-name"),
    pytest.param({"requestMappings": [_mapping("c9")], "resourceClaimName": "x"},
                 ['status.extendedResourceClaimStatus.requestMappings[0].containerName: Invalid value: "c9": '
                  "must match the name of an entry in spec.initContainers.name or spec.containers.name"],
                 id="unknown-container"),
    pytest.param({"requestMappings": [_mapping(resource="example.com/tpu")], "resourceClaimName": "x"},
                 ["status.extendedResourceClaimStatus.requestMappings[0].resourceName: Invalid value: "
                  '"example.com/tpu": must match the extended resource name of an entry in '
                  "spec.initContainers.resources.requests or spec.containers.resources.requests"],
                 id="resource-the-container-does-not-request"),
    pytest.param({"requestMappings": [_mapping(), _mapping()], "resourceClaimName": "x"},
                 ["status.extendedResourceClaimStatus.requestMappings[1].containerName: Duplicate value: "
                  '"c0"',
                  'status.extendedResourceClaimStatus.requestMappings[1].resourceName: Duplicate value: '
                  '"example.com/gpu"',
                  'status.extendedResourceClaimStatus.requestMappings[1].requestName: Duplicate value: '
                  '"container-1-request-1"'], id="duplicate-mapping"),
    pytest.param({"requestMappings": [_mapping(request="Bad_Name")], "resourceClaimName": "Bad"},
                 ['status.extendedResourceClaimStatus.requestName: Invalid value: "Bad_Name": a lowercase '
                  "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
                  "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                  'status.extendedResourceClaimStatus.resourceClaimName: Invalid value: "Bad": a lowercase '
                  "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                 id="bad-names"),
])
def test_pod_extended_resource_claim_status(status: dict[str, Any], expected: list[str]) -> None:
    assert validate_object(_gpu_pod(**status)) == expected
