"""`podsched bench`: kube-scheduler's scheduler_perf workloads run against podsched, end to end through the
API server and a store, with the store's own write rate measured alongside as the limit.

workloads (what is created), checks (were the placements correct), topology (the system under test:
in-process or as separate processes), measure (throughput samples, latencies, histograms, RSS), runner
(one workload from start to finish), report (table, JSON, plot) and storelimit (the store's raw
compare-and-swap rate, also `podsched bench store`).
"""
