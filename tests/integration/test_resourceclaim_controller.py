"""The resourceclaim controller inside the real `podsched apiserver` process, on etcd, driven by the real
CLI: a pod applied with a ResourceClaimTemplate entry gets its claim made from the template, named,
annotated and owned as upstream makes it and recorded in the pod's status; deleting the pod deletes the
claim (podsched has no garbage collector of ownerReferences: the controller does it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import POD_CLAIM_NAME_ANNOTATION
from cluster.api.kinds import POD, RESOURCE_CLAIM
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.builders import IMAGE
from tests.integration.helpers import run_cli
from tests.integration.test_scheduler import apply, eventually

POD_NAME = "trainer"
ENTRY = "gpu"
TEMPLATE = "one-gpu"


@pytest.fixture(scope="module", params=[pytest.param("etcd", marks=pytest.mark.etcd)])
def backend(request: pytest.FixtureRequest) -> str:
    """On etcd only: the unit tests cover the controller against the SQLite store."""
    return str(request.param)


async def claims_in(client: Client, namespace: str) -> list[objects_pb2.ResourceClaim]:
    return list((await client.list(RESOURCE_CLAIM, namespace)).items)  # type: ignore[arg-type]


async def test_a_pod_gets_its_claim_from_the_template_and_loses_it_with_the_pod(
    apiserver: ApiServerProcess, client: Client, namespace: str, tmp_path: Path
) -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": namespace},
        "spec": {
            "metadata": {"labels": {"team": "ml"}},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        },
    }
    trainer = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD_NAME, "namespace": namespace},
        "spec": {
            "containers": [{"name": "main", "image": IMAGE, "resources": {"claims": [{"name": ENTRY}]}}],
            "resourceClaims": [{"name": ENTRY, "resourceClaimTemplateName": TEMPLATE}],
        },
    }
    apply(apiserver.address, tmp_path, template, trainer)

    async def recorded() -> objects_pb2.Pod | None:
        got = await client.get(POD, POD_NAME, namespace)
        assert isinstance(got, objects_pb2.Pod)
        return got if got.status.resource_claim_statuses else None

    pod = await eventually(recorded, "the claim recorded in the pod's status")
    [claim] = await claims_in(client, namespace)
    assert [(s.name, s.resource_claim_name) for s in pod.status.resource_claim_statuses] == [
        (ENTRY, claim.metadata.name)]
    meta = claim.metadata
    assert meta.generate_name == f"{POD_NAME}-{ENTRY}-"
    assert meta.name.startswith(meta.generate_name) and len(meta.name) == len(meta.generate_name) + 5
    assert meta.annotations[POD_CLAIM_NAME_ANNOTATION] == ENTRY
    assert dict(meta.labels) == {"team": "ml"}
    [owner] = meta.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid) == ("v1", "Pod", POD_NAME, pod.metadata.uid)
    assert owner.controller and owner.block_owner_deletion
    assert [r.exactly.device_class_name for r in claim.spec.devices.requests] == ["gpu.example.com"]

    deleted = run_cli(apiserver.address, "delete", "pod", POD_NAME, "-n", namespace)
    assert deleted.code == 0, deleted.stderr

    async def no_claims() -> bool | None:
        return True if not await claims_in(client, namespace) else None

    await eventually(no_claims, "the pod's claim deleted with it")
    assert "resourceclaim controller synced" in apiserver.log()
