"""Reading the file a command-line flag names (``--token-auth-file``, ``--tls-cert-file``, ``--etcd-cafile``,
...): a file that cannot be read is an error naming the flag and the path, of the caller's error class."""

from __future__ import annotations


def read_flag_file(flag: str, path: str, error: type[ValueError]) -> bytes:
    """The bytes of the file at ``path`` that ``flag`` names; ``error`` when it cannot be read."""
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise error(f"{flag} {path}: cannot read it: {exc.strerror or exc}") from exc


def read_flag_text(flag: str, path: str, error: type[ValueError]) -> str:
    """``read_flag_file`` as UTF-8 text; ``error`` also when it is not UTF-8."""
    data = read_flag_file(flag, path, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{flag} {path}: cannot read it: {exc}") from exc
