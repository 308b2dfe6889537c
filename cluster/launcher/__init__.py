"""Processes podsched starts on its own machine: etcd members, and `podsched up`'s API servers and scheduler
replicas under a supervisor (``supervisor``, ``localcluster``, ``process``, ``certs``, ``load``)."""

from cluster.launcher.etcd import EtcdCluster, EtcdNotFound, EtcdStartError, find_etcd_binary

__all__ = ["EtcdCluster", "EtcdNotFound", "EtcdStartError", "find_etcd_binary"]
