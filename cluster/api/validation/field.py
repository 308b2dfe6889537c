"""Field errors as apimachinery's ``field.Error`` prints them (``metadata.name: Invalid value: "Web": ...``),
so a client sees the message kube-apiserver would print."""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: Characters of a bad value an error quotes; a longer one is cut, so that the error stays readable (and
#: fits a gRPC status) when a request carries a value of megabytes.
MAX_QUOTED_VALUE = 256


def quote(value: object) -> str:
    """A bad value as Go's field errors print it: strings quoted (%q), numbers and bools bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    omitted = ""
    if len(text) > MAX_QUOTED_VALUE:
        omitted = f" (cut: {len(text)} characters in all)"
        text = text[:MAX_QUOTED_VALUE] + "..."
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
               .replace("\r", "\\r"))
    return '"' + escaped + '"' + omitted


def invalid(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {quote(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def not_supported(path: str, value: object, supported: Sequence[str]) -> str:
    choices = ", ".join(quote(choice) for choice in supported)
    return f"{path}: Unsupported value: {quote(value)}: supported values: {choices}"


def duplicate(path: str, value: object) -> str:
    return f"{path}: Duplicate value: {quote(value)}"


def not_found(path: str, value: object, detail: str = "") -> str:
    found = f"{path}: Not found: {quote(value)}"
    return f"{found}: {detail}" if detail else found


def too_long(path: str, limit: int) -> str:
    return f"{path}: Too long: must have at most {limit} bytes"


def too_many(path: str, count: int, limit: int) -> str:
    return f"{path}: Too many: {count}: must have at most {limit} items"


def check(path: str, value: str, check: Callable[[str], list[str]]) -> list[str]:
    """``check``'s problems with ``value`` as field errors at ``path``."""
    return [invalid(path, value, problem) for problem in check(value)]


IMMUTABLE = "field is immutable"


NOT_NEGATIVE = "must be greater than or equal to 0"
