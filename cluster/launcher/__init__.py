"""Processes podsched starts on its own machine: etcd members (and, later, API servers and schedulers)."""

from cluster.launcher.etcd import EtcdCluster, EtcdNotFound, EtcdStartError, find_etcd_binary

__all__ = ["EtcdCluster", "EtcdNotFound", "EtcdStartError", "find_etcd_binary"]
