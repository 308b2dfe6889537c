"""Shared GPUs as the GPU-sharing plugins and the replay's measures see them: each node's GPUs (DRA devices
of one DeviceClass) with the free share of each, and what a pod asks of them (table.py); the FGD
fragmentation of node states (fragmentation.py)."""

from scheduler.gpus.table import (
    MILLI,
    GpuColumns,
    GpuRequest,
    GpuSpec,
    gpu_columns,
    gpu_request,
    pod_milli_cpu,
)

__all__ = ["MILLI", "GpuColumns", "GpuRequest", "GpuSpec", "gpu_columns", "gpu_request", "pod_milli_cpu"]
