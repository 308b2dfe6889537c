"""The GPU-sharing scoring policies of the FGD paper ("Beware of Fragmentation", ATC '23) as Score
plugins: Random, DotProduct, GpuClustering, GpuPacking, BestFit and FGD, each with its own GPU
selection (a DeviceRankPlugin the DynamicResources allocator follows). See docs/scheduling.md."""
