"""The controllers `podsched apiserver` runs beside the server: which ones (``--controllers``, read as
kube-controller-manager reads its flag of that name) and running them as clients of the server.

``--controllers`` is a comma list: ``*`` means every controller that is on by default (all of them
are), a name turns that controller on, ``-name`` turns it off (``'*,-podgc'``); ``none`` alone runs
none. Unlike kube-controller-manager, a list that only turns controllers off (``-podgc``) is refused
rather than read as "none", and so is a name both turned on and off.
"""

from __future__ import annotations

import argparse
import asyncio

from cluster.client import Client
from cluster.controllers import FACTORIES, Controller, ControllerSettings

#: Every controller, in the order they start; all are on by default.
CONTROLLERS = tuple(FACTORIES)
ALL = "*"
NONE = "none"


def parse_controllers(text: str) -> tuple[str, ...]:
    """An argparse type: the controllers ``--controllers TEXT`` turns on, in CONTROLLERS order."""

    def bad(why: str) -> argparse.ArgumentTypeError:
        return argparse.ArgumentTypeError(f"invalid --controllers {text!r}: {why}")

    items = [item.strip() for item in text.split(",")]
    if items == [NONE]:
        return ()
    on: set[str] = set()
    off: set[str] = set()
    everything = False
    for item in items:
        if not item:
            raise bad("an empty name (write names separated by single commas)")
        if item == NONE:
            raise bad(f"{NONE} cannot be combined with other names")
        if item == ALL:
            everything = True
            continue
        name = item.removeprefix("-")
        if name not in CONTROLLERS:
            raise bad(f'unknown controller "{name}" (known: {", ".join(CONTROLLERS)})')
        (off if item.startswith("-") else on).add(name)
    if on & off:
        raise bad(f'"{sorted(on & off)[0]}" is both turned on and turned off')
    if not everything and not on:
        raise bad(f"it turns controllers off but none on: start from all with '{ALL},{items[0]}', "
                  f"or write {NONE}")
    return tuple(name for name in CONTROLLERS if name in on or (everything and name not in off))


def parse_provisioners(text: str) -> tuple[str, ...]:
    """An argparse type: the provisioner names of ``--volume-provisioners TEXT``, a comma list."""
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"invalid --volume-provisioners {text!r}: an empty name (write names separated by single commas)")
    return names


class ControllerFailed(Exception):
    """A controller's run ended with an error; the message names the controller."""


async def run_controllers(client: Client, names: tuple[str, ...], settings: ControllerSettings) -> None:
    """Run the controllers ``names`` as clients through ``client`` until cancelled; the first that
    fails stops the others and its error is raised, naming it."""
    made = [make(client, settings) for name, make in FACTORIES.items() if name in names]
    try:
        async with asyncio.TaskGroup() as tasks:
            for controller in made:
                tasks.create_task(_run_named(controller), name=f"controller-{controller.name}")
    except ExceptionGroup as group:
        raise group.exceptions[0] from None


async def _run_named(controller: Controller) -> None:
    try:
        await controller.run()
    except Exception as exc:
        raise ControllerFailed(f"the {controller.name} controller: {type(exc).__name__}: {exc}") from exc
