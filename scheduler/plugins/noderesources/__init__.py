"""Node-resource plugins: NodeResourcesFit (fit filter + allocation scoring strategies) and
NodeResourcesBalancedAllocation, sharing the per-resource request/allocatable arithmetic."""
