"""Validation of API objects, with Kubernetes' rules and Kubernetes' wording.

Each check returns field errors as strings formatted like apimachinery's ``field.Error``
(``metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain ...``), so a client sees the
message kube-apiserver would print. ``ensure_valid`` joins them into one ``errors.Invalid``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# ---------------------------------------------------------------------------------- field error texts


def _quote(value: object) -> str:
    """A bad value as Go's field errors print it: strings quoted (%q), numbers and bools bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def invalid(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {_quote(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def not_supported(path: str, value: object, supported: Sequence[str]) -> str:
    choices = ", ".join(_quote(choice) for choice in supported)
    return f"{path}: Unsupported value: {_quote(value)}: supported values: {choices}"


def duplicate(path: str, value: object) -> str:
    return f"{path}: Duplicate value: {_quote(value)}"


def too_long(path: str, limit: int) -> str:
    return f"{path}: Too long: must have at most {limit} bytes"


# ------------------------------------------------------------------------------------- name checks
# Each returns the problems with a value (empty when it is fine), worded as apimachinery words them.

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"

_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT, re.ASCII)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT, re.ASCII)
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT, re.ASCII)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT, re.ASCII)

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            problems.append("must not contain dots")
        else:
            problems.append(_regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character",
                _DNS1123_LABEL_FMT, "my-name", "123-abc",
            ))
    return problems


def is_dns1123_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        problems.append(_regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character",
            _DNS1123_SUBDOMAIN_FMT, "example.com",
        ))
    return problems


def is_qualified_name(value: str) -> list[str]:
    """Label keys, annotation keys, topology keys: ``[prefix/]name``, the prefix a DNS subdomain."""
    name_rule = _regex_error(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character",
        _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc",
    )
    parts = value.split("/")
    if len(parts) > 2:
        return [f"a qualified name {name_rule} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    problems = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend("prefix part " + problem for problem in is_dns1123_subdomain(prefix))
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        problems.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME.fullmatch(name):
        problems.append("name part " + name_rule)
    return problems


def is_valid_label_value(value: str) -> list[str]:
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(_regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character",
            _LABEL_VALUE_FMT, "MyValue", "my_value", "12345",
        ))
    return problems
