"""Which controllers `podsched apiserver --controllers` runs: the list read as kube-controller-manager
reads its flag, and the table that makes each controller by its name (cluster/controllers/factories.py)."""

from __future__ import annotations

import argparse

import pytest

from cluster.cli.controllers import CONTROLLERS, parse_controllers, parse_provisioners
from cluster.client import Client
from cluster.controllers import (
    FACTORIES,
    ControllerSettings,
    DisruptionController,
    EphemeralVolumeController,
    LeaseCandidateGarbageCollector,
    PersistentVolumeController,
    PodGarbageCollector,
    PodGroupController,
    ResourceClaimController,
    ResourceQuotaController,
    VolumeProvisioner,
)

EVERY = ("disruption", "podgc", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
         "persistentvolume-binder", "ephemeral-volume", "volume-provisioner")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*", EVERY),
        ("none", ()),
        ("*,-podgc", ("disruption", "resourcequota", "podgroup", "leasecandidategc", "resourceclaim",
                      "persistentvolume-binder", "ephemeral-volume", "volume-provisioner")),
        # Named ones start in the table's order, whatever the order given.
        ("podgroup, podgc", ("podgc", "podgroup")),
        ("leasecandidategc", ("leasecandidategc",)),
    ],
)
def test_a_list_turns_on_the_controllers_it_names(text: str, expected: tuple[str, ...]) -> None:
    assert parse_controllers(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nope", 'unknown controller "nope" (known: disruption, podgc, resourcequota, podgroup, '
                 'leasecandidategc, resourceclaim, persistentvolume-binder, ephemeral-volume, '
                 'volume-provisioner)'),
        ("*,-nope", 'unknown controller "nope"'),
        ("-podgc", "it turns controllers off but none on: start from all with '*,-podgc', or write none"),
        ("podgc,-podgc", '"podgc" is both turned on and turned off'),
        ("none,podgc", "none cannot be combined with other names"),
        ("podgc,,disruption", "an empty name"),
    ],
)
def test_a_bad_list_is_refused_naming_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        parse_controllers(text)
    assert str(raised.value).startswith(f"invalid --controllers {text!r}: ")
    assert why in str(raised.value)


async def test_the_table_makes_each_controller_under_its_own_name() -> None:
    assert CONTROLLERS == EVERY == tuple(FACTORIES)
    settings = ControllerSettings(pod_gc_quarantine_s=7.0, resource_quota_sync_period_s=11.0,
                                  volume_provisioners=("example.com/disk",))
    async with Client("127.0.0.1:1") as client:
        made = {name: make(client, settings) for name, make in FACTORIES.items()}
    assert [type(controller) for controller in made.values()] == [
        DisruptionController, PodGarbageCollector, ResourceQuotaController, PodGroupController,
        LeaseCandidateGarbageCollector, ResourceClaimController, PersistentVolumeController,
        EphemeralVolumeController, VolumeProvisioner,
    ]
    assert all(controller.name == name for name, controller in made.items())
    provisioner = made["volume-provisioner"]
    assert isinstance(provisioner, VolumeProvisioner)
    assert provisioner.serves("example.com/disk") and not provisioner.serves("example.com/other")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("example.com/disk", ("example.com/disk",)), ("a.io/x, b.io/y", ("a.io/x", "b.io/y"))],
)
def test_the_provisioners_flag_names_the_provisioners_served(text: str, expected: tuple[str, ...]) -> None:
    assert parse_provisioners(text) == expected


def test_an_empty_provisioner_name_is_refused() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        parse_provisioners("a.io/x,")
    assert str(raised.value) == ("invalid --volume-provisioners 'a.io/x,': an empty name (write names "
                                 "separated by single commas)")
