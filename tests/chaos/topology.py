"""The chaos tests' control plane, as real OS processes on loopback.

Started in this order, and stopped in the reverse one:

1. a 3-member etcd cluster (``cluster.launcher.etcd.EtcdCluster``);
2. the recorder, watching etcd from revision 1 before anything else writes (``recorder.py``);
3. two `podsched apiserver` processes over that etcd, the second also running the resourceclaim and
   storage controllers (one of each, as kube-controller-manager's leader would; the first is the one the
   faults kill);
4. the nodes, created through the API, with DRA: a DeviceClass, one ResourceSlice per node of as many
   devices as the node holds pods, and a ResourceClaimTemplate for one device; and a WaitForFirstConsumer
   StorageClass whose volumes the stand-in provisioner makes on the node chosen;
5. three `podsched scheduler` replicas with leader election and short timings, each restarted when it
   exits, as a supervisor (or compose's ``restart: always``) would (``replicas.py``);
6. the load: pods submitted at a steady rate through both API servers (``load_thread.py``), some of
   them in gangs (a PodGroup whose minimum is its size, then its pods, in either spelling); every single
   pod (the final fill's too) claims one device through the template, and every single pod of the load
   has an ephemeral volume of that class (the fill's, submitted once the faults are over, have none:
   binding a volume only adds the storage controllers' round trips to the fill's wait, and checks nothing
   the load's volumes, bound while the leaders were killed, do not).

The load may submit as many pods as the nodes hold together and no more, so that a pod left pending at
the end is the scheduler's fault and never the cluster's; the test fills the rest of that room at the
end (``TopologySpec.fill``), leaving every node exactly full: a leader whose cache kept a phantom pod,
or lost track of a real one, would leave a pod unbound or a node over allocatable. Every pod requests
the same and every node offers a whole number of them, so a gang fits whenever as many places are free
as it has pods: with no more pods than places, every gang can be placed whole, however the others lie,
and a gang still pending at the end is the scheduler's fault too. Each node has a device for each of its
places, so a pod with a claim fits wherever a place is free.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from cluster.api import objects_pb2
from cluster.api.quantity import int_value, milli_value
from cluster.client import Client
from cluster.launcher.etcd import EtcdCluster
from cluster.launcher.load import LoadSpec, new_seed
from cluster.launcher.process import ApiServerProcess
from tests.chaos.load_thread import LoadThread
from tests.chaos.recorder import Recorder
from tests.chaos.replicas import ReplicaSet
from tests.conftest import running_cluster

#: Where every pod of the run lives.
LOAD_NAMESPACE = "chaos"
#: The DRA driver whose devices every node has, the class selecting them, and the template single pods
#: make their claims from (in LOAD_NAMESPACE).
DRIVER = "gpu.chaos.podsched.io"
DEVICE_CLASS = "chaos-gpu"
CLAIM_TEMPLATE = "one-gpu"
#: The StorageClass of the single pods' ephemeral volumes, and the provisioner that makes them.
VOLUME_CLASS = "chaos-local"
VOLUME_PROVISIONER = "disk.chaos.podsched.io"
RACK_LABEL = "topology.kubernetes.io/rack"


@dataclass(frozen=True)
class TopologySpec:
    """The sizes and timings of one chaos run."""

    etcd_members: int = 3
    apiservers: int = 2
    replicas: int = 3
    #: Leader election timings, in seconds: short, so that ten failovers fit in a bounded test, and
    #: valid by client-go's rules (lease > renew deadline > retry period x 1.2).
    lease_duration_s: float = 3.0
    renew_deadline_s: float = 2.0
    retry_period_s: float = 0.5
    nodes: int = 8
    node_cpu: str = "4"
    node_memory: str = "8Gi"
    node_pods: int = 110
    #: Each pod of the load requests this much. 8 nodes of 4 cpu hold 320 pods of 100m (memory and
    #: pod slots are not the limit), which at 2 pods/s last 160 s: about three times what the faults
    #: take on a 2-core box, and the load fails loudly if it runs out of room before they end.
    pod_cpu: str = "100m"
    pod_memory: str = "128Mi"
    #: Pods per second while the faults go on.
    load_rate: float = 2.0
    #: The share of the load's submissions that are gangs, and their sizes: about 70% of its pods come
    #: in gangs, a dozen or so of which are submitted and bound while the leaders are killed.
    gang_fraction: float = 0.35
    gang_size: tuple[int, int] = (2, 8)
    #: Seeds the load's gang draws (printed with the run's summary, to draw the same gangs again).
    seed: int = field(default_factory=new_seed)
    #: Pods per second of the final fill (the faults are over: only throughput matters).
    fill_rate: float = 25.0
    #: Nodes per rack: node i is labelled ``topology.kubernetes.io/rack: rack-<i // rack_size>``; 0 for no
    #: racks.
    rack_size: int = 0
    #: The node label every gang of the load (and of a gang fill) is constrained to one domain of ("" for
    #: none).
    gang_topology_key: str = ""

    @property
    def per_node(self) -> int:
        """How many of the load's pods one node holds (the smallest of cpu, memory and pod slots)."""
        return min(
            milli_value(self.node_cpu) // milli_value(self.pod_cpu),
            int_value(self.node_memory) // int_value(self.pod_memory),
            self.node_pods,
        )

    @property
    def capacity(self) -> int:
        """How many of the load's pods the nodes hold together."""
        return self.per_node * self.nodes

    def scheduler_args(self, servers: str) -> list[str]:
        return [
            "--server", servers,
            "--leader-elect=true",
            "--leader-elect-lease-duration", f"{self.lease_duration_s:g}s",
            "--leader-elect-renew-deadline", f"{self.renew_deadline_s:g}s",
            "--leader-elect-retry-period", f"{self.retry_period_s:g}s",
            "--metrics-addr", "127.0.0.1:0",
        ]  # fmt: skip

    def node(self, index: int) -> objects_pb2.Node:
        node = objects_pb2.Node(api_version="v1", kind="Node")
        node.metadata.name = f"chaos-node-{index}"
        node.metadata.labels["kubernetes.io/hostname"] = node.metadata.name
        if self.rack_size:
            node.metadata.labels[RACK_LABEL] = f"rack-{index // self.rack_size}"
        resources = {"cpu": self.node_cpu, "memory": self.node_memory, "pods": str(self.node_pods)}
        node.status.capacity.update(resources)
        node.status.allocatable.update(resources)
        node.status.conditions.add(type="Ready", status="True")
        return node

    def device_class(self) -> objects_pb2.DeviceClass:
        device_class = objects_pb2.DeviceClass(api_version="resource.k8s.io/v1", kind="DeviceClass")
        device_class.metadata.name = DEVICE_CLASS
        device_class.spec.selectors.add().cel.expression = f'device.driver == "{DRIVER}"'
        return device_class

    def resource_slice(self, index: int) -> objects_pb2.ResourceSlice:
        """Node ``index``'s devices: one for each pod it holds, so devices never run out before room."""
        node = self.node(index).metadata.name
        published = objects_pb2.ResourceSlice(api_version="resource.k8s.io/v1", kind="ResourceSlice")
        published.metadata.name = f"{node}-gpus"
        spec = published.spec
        spec.driver, spec.node_name = DRIVER, node
        spec.pool.name, spec.pool.resource_slice_count = node, 1
        for device in range(self.per_node):
            spec.devices.add(name=f"gpu-{device}")
        return published

    def claim_template(self) -> objects_pb2.ResourceClaimTemplate:
        template = objects_pb2.ResourceClaimTemplate(api_version="resource.k8s.io/v1",
                                                     kind="ResourceClaimTemplate")
        template.metadata.name, template.metadata.namespace = CLAIM_TEMPLATE, LOAD_NAMESPACE
        template.spec.spec.devices.requests.add(name="gpu").exactly.device_class_name = DEVICE_CLASS
        return template

    def storage_class(self) -> objects_pb2.StorageClass:
        made = objects_pb2.StorageClass(api_version="storage.k8s.io/v1", kind="StorageClass",
                                        provisioner=VOLUME_PROVISIONER,
                                        volume_binding_mode="WaitForFirstConsumer")
        made.metadata.name = VOLUME_CLASS
        return made

    def load(self) -> LoadSpec:
        """The load during the faults: at most as many pods as the nodes hold."""
        return LoadSpec(rate=self.load_rate, count=self.capacity, namespace=LOAD_NAMESPACE,
                        cpu=self.pod_cpu, memory=self.pod_memory, gang_fraction=self.gang_fraction,
                        gang_size=self.gang_size, seed=self.seed, claim_template=CLAIM_TEMPLATE,
                        volume_class=VOLUME_CLASS, gang_topology_key=self.gang_topology_key)

    def fill(self, existing: int) -> LoadSpec:
        """The final fill: as many more single pods as room is left beside ``existing`` pods of the load,
        each claiming a device (the devices end fully allocated) but with no volume."""
        if existing >= self.capacity:
            raise ValueError(f"{existing} pods already fill the {self.capacity} places of the nodes")
        return LoadSpec(rate=self.fill_rate, count=self.capacity - existing, namespace=LOAD_NAMESPACE,
                        cpu=self.pod_cpu, memory=self.pod_memory, claim_template=CLAIM_TEMPLATE)

    def gang_fill(self, existing: int) -> LoadSpec:
        """``fill`` in gangs of the load's one gang size (and topology key), for a load of gangs only."""
        single = self.fill(existing)
        smallest, largest = self.gang_size
        if smallest != largest or single.count is None or single.count % smallest:
            raise ValueError(f"{single.count} places cannot be filled with gangs of {self.gang_size}")
        return replace(single, gang_fraction=1.0, gang_size=self.gang_size, seed=self.seed,
                                   gang_topology_key=self.gang_topology_key)


#: The API servers keep their history for the whole run: the recorder must see every revision, and a
#: compaction (5 min by default) could cut under a watch that is resuming after an etcd member's death.
#: They enforce leadership, as docker-compose.yml's do.
APISERVER_ARGS = ["--compaction-interval", "1h", "--enforce-leader-fencing"]
#: The controllers of every API server but the last, and of the last (kube-controller-manager's one
#: leader makes the pods' claims and volumes; the faults kill the first).
NO_CONTROLLERS = ["--controllers", "none"]
CLAIM_CONTROLLER = ["--controllers",
                    "resourceclaim,persistentvolume-binder,ephemeral-volume,volume-provisioner"]


@dataclass
class Topology:
    spec: TopologySpec
    etcd: EtcdCluster
    recorder: Recorder
    apiservers: list[ApiServerProcess]
    replicas: ReplicaSet
    load: LoadThread

    @property
    def servers(self) -> str:
        """Every API server's address, comma-separated: what each client is given."""
        return ",".join(server.address for server in self.apiservers)


@contextlib.contextmanager
def running_topology(spec: TopologySpec, root: Path) -> Iterator[Topology]:
    """Start everything (see the module docstring), yield it, stop everything."""
    with contextlib.ExitStack() as stack:
        etcd = stack.enter_context(running_cluster(spec.etcd_members, root / "etcd", "chaos"))
        recorder = Recorder(etcd.endpoints)
        recorder.start()
        stack.callback(recorder.stop)
        apiservers = []
        for index in range(spec.apiservers):
            controllers = CLAIM_CONTROLLER if index == spec.apiservers - 1 else NO_CONTROLLERS
            server = ApiServerProcess(["--etcd", ",".join(etcd.endpoints)],
                                      extra_args=[*APISERVER_ARGS, *controllers])
            server.start()
            stack.callback(server.stop)
            apiservers.append(server)
        servers = ",".join(server.address for server in apiservers)
        asyncio.run(_create_nodes(servers, spec))
        replicas = ReplicaSet(spec.scheduler_args(servers), spec.replicas, root / "schedulers")
        replicas.start()
        stack.callback(replicas.stop)
        load = LoadThread(servers, spec.load())
        load.start()
        stack.callback(load.stop)
        yield Topology(spec, etcd, recorder, apiservers, replicas, load)


async def _create_nodes(servers: str, spec: TopologySpec) -> None:
    async with Client(servers) as client:
        for index in range(spec.nodes):
            await client.create(spec.node(index))
        await client.create(spec.device_class())
        for index in range(spec.nodes):
            await client.create(spec.resource_slice(index))
        await client.create(spec.claim_template())
        await client.create(spec.storage_class())
