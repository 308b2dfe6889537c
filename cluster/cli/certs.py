"""`podsched certs`: a certificate authority and every certificate and token a secure local cluster needs.

    podsched certs --dir DIR [--hosts h1,h2,...] [--days 365] [--users admin,scheduler,client,readonly]
                   [--force | --if-absent]

The files, in kubeadm's layout, are written by cluster/launcher/certs.py, which lists them (`podsched up
--tls` writes them the same way). A user is ``ROLE`` (admin, scheduler, client, readonly; the user is named
after the role) or ``NAME=ROLE``. An existing CA is never replaced without ``--force`` (that would void
every certificate it signed); with ``--if-absent`` a directory that holds one is left as it is and the
command succeeds (a one-shot service that runs at every start). Bad flags exit 2; files that cannot be
written exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cluster.launcher.certs import (
    CA_DAYS,
    DEFAULT_DAYS,
    DEFAULT_USERS,
    ROLE_GROUPS,
    Bundle,
    CertsError,
    parse_hosts,
    parse_users,
    write_bundle,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "certs",
        help="create a CA, server and client certificates and a token file for a secure cluster",
        description="Create a certificate authority, the API server's and etcd's certificates, a client "
        "certificate and a bearer token per user, in kubeadm's file layout.",
    )
    parser.add_argument("--dir", required=True, type=Path, metavar="DIR", help="where to write the files")
    parser.add_argument("--hosts", type=_argparse(parse_hosts), default=(), metavar="H1,H2,...",
                        help="more names and addresses of the servers, besides localhost, 127.0.0.1, ::1")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS,
                        help=f"validity of the certificates in days (default {DEFAULT_DAYS}; the CAs "
                        f"get at least {CA_DAYS})")
    parser.add_argument("--users", type=_argparse(parse_users), default=parse_users(",".join(DEFAULT_USERS)),
                        metavar="USER,...", help="ROLE or NAME=ROLE entries; roles: "
                        f"{', '.join(ROLE_GROUPS)} (default: one user per role)")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--force", action="store_true", help="replace an existing CA and every file")
    existing.add_argument("--if-absent", action="store_true",
                          help="when DIR already holds a CA, write nothing and succeed")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.days < 1:
        print(f"podsched certs: --days must be at least 1, got {args.days}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    if args.if_absent and Bundle(args.dir.resolve()).exists():
        print(f"podsched certs: {args.dir.resolve()} already holds a CA; left as it is", flush=True)
        return EXIT_OK
    try:
        bundle, lines = write_bundle(args.dir, hosts=args.hosts, days=args.days, users=args.users,
                                     force=args.force)
    except CertsError as exc:
        print(f"podsched certs: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    first = args.users[0].name
    print(f"podsched certs: wrote into {bundle.dir}:", *lines, sep="\n")
    print(
        "\nServe with:\n"
        f"  podsched apiserver {' '.join(bundle.apiserver_flags())} --listen 0.0.0.0:7443\n"
        f"Use the CLI as {first}:\n"
        + "".join(f"  export {name}={value}\n" for name, value in bundle.user_env(first).items()),
        end="", flush=True,
    )
    return EXIT_OK


def _argparse(parse: Any) -> Any:
    def parse_flag(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse_flag
