"""The errors a patch fails with, as kube-apiserver's patch handler words and codes them."""

from __future__ import annotations

from cluster.api import errors

#: What kube-apiserver says of a patch that is well formed but cannot be applied (a JSON patch's test that
#: fails, a path that is missing, a strategic merge of lists of lists): its generic 422, whose message
#: does not carry the library's own.
REJECTED = "the server rejected our request due to an error in our request"


def rejected() -> errors.Invalid:
    """A 422 Invalid without causes, as kube-apiserver's generic server response for that code."""
    return errors.Invalid(REJECTED, errors.StatusDetails())


def unexpected(message: str) -> errors.ApiError:
    """A patch that fails in a way kube-apiserver does not classify: it passes the library's error on as
    a 500 whose reason is Unknown and whose message is the error's."""
    return errors.ApiError(message)


def go_value(value: object) -> str:
    """A JSON value as Go's ``%v`` prints the decoded form (``map[name:a]``, ``[1 2]``, ``<nil>``), for the
    messages that quote part of a patch as apimachinery's do."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_value(value[key])}" for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(item) for item in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def go_type(value: object) -> str:
    """The Go type a JSON value decodes to, as ``reflect.TypeOf`` prints it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "string"
