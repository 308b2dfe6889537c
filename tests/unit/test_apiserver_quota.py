"""Quota admission through the real service on the embedded store: a create that fails after its
charge (the name is taken) gives the charge back, a dry run charges nothing, a quota whose status lacks
a count refuses as kube-apiserver does, and a status a client sends with a new quota is the server's to
set."""

from __future__ import annotations

import pytest

from cluster.api import errors, objects_pb2
from tests.builders import resource_quota
from tests.unit.test_apiserver_server import Harness, api, make_pod

__all__ = ["api"]


def limit(pods: str, namespace: str = "default") -> objects_pb2.ResourceQuota:
    return resource_quota(namespace=namespace, hard={"pods": pods})


async def used(api: Harness) -> dict[str, str]:
    return dict((await api.get("ResourceQuota", "q", "default")).status.used)


async def test_a_create_refused_after_its_charge_gives_the_charge_back(api: Harness) -> None:
    await api.create(limit("2"))
    await api.create(make_pod("web"))
    with pytest.raises(errors.AlreadyExists):
        await api.create(make_pod("web"))
    assert await used(api) == {"pods": "1"}


async def test_a_dry_run_is_checked_but_charges_nothing(api: Harness) -> None:
    await api.create(limit("1"))
    await api.create(make_pod("a"), dry_run=True)
    assert await used(api) == {"pods": "0"}
    await api.create(make_pod("a"))
    with pytest.raises(errors.Forbidden, match="exceeded quota: q"):
        await api.create(make_pod("b"), dry_run=True)


async def test_a_quota_without_a_count_refuses_until_it_has_one(api: Harness) -> None:
    created = await api.create(limit("3"))
    created.status.used.clear()
    await api.update_status(created)
    with pytest.raises(errors.Forbidden) as refused:
        await api.create(make_pod("web"))
    assert refused.value.message == 'pods "web" is forbidden: status unknown for quota: q'


async def test_the_status_of_a_new_quota_is_the_servers(api: Harness) -> None:
    sent = limit("3")
    sent.status.hard["pods"] = "100"
    sent.status.used["pods"] = "99"
    created = await api.create(sent)
    assert (dict(created.status.hard), dict(created.status.used)) == ({"pods": "3"}, {"pods": "0"})
