import pytest

from cluster.api.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

# (check, value, a fragment of the expected problem, or None when valid)
NAME_CHECKS = [
    (is_dns1123_label, "web-1", None),
    (is_dns1123_label, "a" * 63, None),
    (is_dns1123_label, "a" * 64, "must be no more than 63 characters"),
    (is_dns1123_label, "Web", "a lowercase RFC 1123 label must consist of"),
    (is_dns1123_label, "web.a", "must not contain dots"),
    (is_dns1123_label, "-web", "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'"),
    (is_dns1123_label, "", "a lowercase RFC 1123 label"),
    (is_dns1123_subdomain, "web.example.com", None),
    (is_dns1123_subdomain, "a" * 253, None),
    (is_dns1123_subdomain, "a" * 254, "must be no more than 253 characters"),
    (is_dns1123_subdomain, "Web", "(e.g. 'example.com', regex used for validation is"),
    (is_dns1123_subdomain, "web_1", "a lowercase RFC 1123 subdomain"),
    (is_qualified_name, "app", None),
    (is_qualified_name, "App_1.x", None),
    (is_qualified_name, "example.com/role", None),
    (is_qualified_name, "kubernetes.io/hostname", None),
    (is_qualified_name, "a/b/c", "with an optional DNS subdomain prefix"),
    (is_qualified_name, "/role", "prefix part must be non-empty"),
    (is_qualified_name, "Example.com/role", "prefix part a lowercase RFC 1123 subdomain"),
    (is_qualified_name, "example.com/", "name part must be non-empty"),
    (is_qualified_name, "a" * 64, "name part must be no more than 63 characters"),
    (is_qualified_name, "-app", "name part must consist of alphanumeric characters"),
    (is_valid_label_value, "", None),
    (is_valid_label_value, "v1.2_x-y", None),
    (is_valid_label_value, "a" * 64, "must be no more than 63 characters"),
    (is_valid_label_value, "a b", "a valid label must be an empty string or consist of"),
    (is_valid_label_value, "x/y", "a valid label must be"),
]


@pytest.mark.parametrize(("check", "value", "problem"), NAME_CHECKS,
                         ids=[f"{c.__name__}-{v[:12]!r}" for c, v, _ in NAME_CHECKS])
def test_name_checks(check, value: str, problem: str | None) -> None:
    problems = check(value)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems
