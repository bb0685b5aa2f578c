# The benchmarks' failure path (tests/bench/check.sh): with failures
# injected by --fail-every a run exits 0 and counts them in its rows; with
# every cycle failing it exits non-zero naming the rows; bench_wait runs
# every row once. Tiny sizes on one node. The benchmarks themselves:
# mk/core.mk (make bench). It starts a node: a node check.
CHECKS += check-bench
.PHONY: check-bench

check-bench: $(BUILD)/bench_transport $(BUILD)/bench_tls $(BUILD)/bench_scale $(BUILD)/bench_wait
	@tests/bench/check.sh $(BUILD)
