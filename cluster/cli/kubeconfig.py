"""`podsched kubeconfig`: a kubeconfig for the API server's Kubernetes HTTP API, for kubectl and the
official clients.

    podsched kubeconfig --server HOST:PORT|URL --output FILE|-
                        [--token TOKEN | --token-file FILE]
                        [--certificate-authority FILE] [--client-certificate FILE --client-key FILE]
                        [--tls-server-name NAME] [--embed-certs] [--context NAME]

``--server`` is the address the API server's ``--http-listen`` serves (https:// when a CA or a client
certificate is given). The credential flags are every client command's, with the same environment
variables (so the ``export`` lines of `podsched up` or `podsched certs` apply); each file is read and
checked before anything is written. The file is written with mode 0600: it holds a credential. Bad flags
exit 2; a credential file that cannot be used, or an output that cannot be written, exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cluster.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, add_credential_flags, print_error
from cluster.client import ClientCredentials, CredentialsError
from cluster.client.kubeconfig import DEFAULT_CONTEXT, KubeconfigError, dump, kubeconfig, write_kubeconfig


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "kubeconfig",
        help="write a kubeconfig for kubectl and the Kubernetes clients",
        description="Write a kubeconfig (one cluster, user and context) that points kubectl and the "
        "Kubernetes client libraries at the API server's HTTP API with the given credentials.",
    )
    parser.add_argument("--server", required=True, metavar="HOST:PORT|URL",
                        help="the API server's HTTP address (its --http-listen), or an https:// or "
                        "http:// URL")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="where to write the kubeconfig (mode 0600); - writes it to stdout")
    add_credential_flags(parser)
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help="read the bearer token from this file (instead of --token)")
    parser.add_argument("--embed-certs", action="store_true",
                        help="put the CA and the client certificate and key in the file, not their paths")
    parser.add_argument("--context", default=DEFAULT_CONTEXT, metavar="NAME",
                        help="the name of the cluster, user and context in the file "
                        f"(default {DEFAULT_CONTEXT})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.token is not None and args.token_file is not None:
        print_error("error: --token and --token-file: give one of them")
        return EXIT_USAGE
    try:
        config = kubeconfig(args.server, credentials_of(args), embed=args.embed_certs, name=args.context)
    except KubeconfigError as exc:
        print_error(f"error: {exc}")
        return EXIT_USAGE
    except CredentialsError as exc:
        print_error(f"error: {exc}")
        return EXIT_ERROR
    if args.output == "-":
        sys.stdout.write(dump(config))
        return EXIT_OK
    try:
        write_kubeconfig(Path(args.output), config)
    except OSError as exc:
        print_error(f"error: cannot write --output {args.output}: {exc.strerror or exc}")
        return EXIT_ERROR
    print(f"podsched kubeconfig: wrote {args.output} (context {args.context}, server "
          f"{config['clusters'][0]['cluster']['server']})", flush=True)
    return EXIT_OK


def credentials_of(args: argparse.Namespace) -> ClientCredentials:
    """The credentials the flags (else the environment) give, the token read from --token-file if set;
    CredentialsError naming the flag and file when one cannot be used."""
    token, token_source = args.token, ""
    if args.token_file is not None:
        token, token_source = read_token_file(args.token_file), f"--token-file {args.token_file}"
    return ClientCredentials.from_env_and_flags(
        token=token, token_source=token_source, ca_file=args.certificate_authority,
        client_cert_file=args.client_certificate, client_key_file=args.client_key,
        tls_server_name=args.tls_server_name,
    )


def read_token_file(path: str) -> str:
    """The bearer token in ``path`` (surrounding whitespace and the final line break dropped);
    CredentialsError when it cannot be read, is empty, or is a token-auth file rather than a token."""
    try:
        with open(path, encoding="utf-8") as file:
            token = file.read().strip()
    except OSError as exc:
        raise CredentialsError(f"unable to read --token-file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CredentialsError(f"--token-file {path}: not a text file") from None
    if not token:
        raise CredentialsError(f"--token-file {path} is empty: it must hold the bearer token")
    if "," in token:
        # The API server's --token-auth-file (token,user,uid,"groups" per line) is the likely mix-up.
        raise CredentialsError(
            f"--token-file {path} holds commas: it must hold one token alone, not the API server's "
            "token,user,uid,groups lines"
        )
    return token
