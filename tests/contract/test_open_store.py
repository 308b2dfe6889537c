"""store.factory.open_store: one entry point for both backends, and the Store protocol they satisfy."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.base import Store
from store.etcd import EtcdStore
from store.factory import open_store


async def test_a_data_dir_opens_the_sqlite_store(tmp_path: Path) -> None:
    from store.sqlite import SqliteStore

    store = await open_store(data_dir=str(tmp_path / "data"))
    try:
        assert isinstance(store, SqliteStore)
        assert isinstance(store, Store)
        assert (await store.create("/a", b"v")).succeeded
    finally:
        await store.close()


@pytest.mark.etcd
async def test_etcd_endpoints_open_the_etcd_store(etcd_endpoints: list[str], unique_prefix: str) -> None:
    store = await open_store(etcd_endpoints=etcd_endpoints)
    try:
        assert isinstance(store, EtcdStore)
        assert isinstance(store, Store)
        assert (await store.create(f"{unique_prefix}/a", b"v")).succeeded
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of data_dir and etcd_endpoints"),
        (
            {"data_dir": "/tmp/x", "etcd_endpoints": ["127.0.0.1:2379"]},
            "exactly one of data_dir and etcd_endpoints",
        ),
        ({"data_dir": "/tmp/x", "ca_cert": b"pem"}, "TLS settings apply to etcd only"),
        ({"etcd_endpoints": ["nowhere"]}, "etcd endpoint 'nowhere': expected host:port"),
    ],
    ids=["neither", "both", "tls-for-sqlite", "bad-endpoint"],
)
async def test_bad_store_choices_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        await open_store(**kwargs)  # type: ignore[arg-type]
