"""The rules for names and label values, as apimachinery's util/validation words them (IsDNS1123Label,
IsQualifiedName, ...). Each returns the problems with a value, empty when it is fine. Selectors and
validation both use them, so they depend on neither."""

from __future__ import annotations

import re

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


def regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            problems.append("must not contain dots")
        else:
            problems.append(
                regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return problems


def is_dns1123_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        problems.append(
            regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return problems


_QUALIFIED_NAME_RULE = regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character",
    _QUALIFIED_NAME_FMT,
    "MyName",
    "my.name",
    "123-abc",
)


def is_qualified_name(value: str) -> list[str]:
    """Label keys, annotation keys, topology keys: ``[prefix/]name``, the prefix a DNS subdomain."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_NAME_RULE} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
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
        problems.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME.fullmatch(name):
        problems.append("name part " + _QUALIFIED_NAME_RULE)
    return problems


_CONFIG_MAP_KEY_FMT = r"[-._a-zA-Z0-9]+"


_CONFIG_MAP_KEY = re.compile(_CONFIG_MAP_KEY_FMT, re.ASCII)


def is_config_map_key(value: str) -> list[str]:
    """Kubernetes' IsConfigMapKey, which also names LeaseCandidates (so "host_uuid" identities fit)."""
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY.fullmatch(value):
        problems.append(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name",
        ))
    if value == ".":
        problems.append("must not be '.'")
    elif value == "..":
        problems.append("must not be '..'")
    elif value.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def is_valid_label_value(value: str) -> list[str]:
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(
            regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return problems
