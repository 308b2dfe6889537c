"""Open the store a deployment asked for: the embedded SQLite log in a directory, or a real etcd."""

from __future__ import annotations

from collections.abc import Sequence

from store.base import Store


async def open_store(
    data_dir: str | None = None,
    etcd_endpoints: Sequence[str] | None = None,
    *,
    ca_cert: bytes | None = None,
    cert_key: bytes | None = None,
    cert_chain: bytes | None = None,
) -> Store:
    """The SQLite store in ``data_dir`` or the etcd store at ``etcd_endpoints`` (exactly one of them).
    The TLS arguments (PEM bytes) apply to etcd only."""
    if (data_dir is None) == (etcd_endpoints is None):
        raise ValueError("open_store needs exactly one of data_dir and etcd_endpoints")
    if data_dir is not None:
        if ca_cert is not None or cert_key is not None or cert_chain is not None:
            raise ValueError("TLS settings apply to etcd only, not to the SQLite store in data_dir")
        # Imported here so that an etcd deployment never loads the SQLite backend, and vice versa.
        from store.sqlite import SqliteStore

        return await SqliteStore.open(data_dir)
    from store.etcd import EtcdStore

    assert etcd_endpoints is not None
    return await EtcdStore.connect(etcd_endpoints, ca_cert=ca_cert, cert_key=cert_key, cert_chain=cert_chain)
