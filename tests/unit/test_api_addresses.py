import pytest

from cluster.api.addresses import is_loopback_host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "10.0.0.1", "[::]", "::", "example.com", "localhost.example", ""]
)
def test_other_hosts(host: str) -> None:
    assert not is_loopback_host(host)
