# The core: compile matrix, unit tests, simulation, core benchmark.
SIM_RUNS ?= 4000
# refusing and legacy-crowd: no crashes (the restart rule has nothing to
# do there); fewer schedules (4/5 and 1/2 of SIM_RUNS) pay for the restart
# and failover profiles
SIM_REFUSING_RUNS ?= $(shell expr $(SIM_RUNS) \* 4 / 5)
SIM_CROWD_RUNS ?= $(shell expr $(SIM_RUNS) / 2)
# many-locks: up to 12 handles per client, each schedule about 4x the work
SIM_MANY_RUNS ?= 2000
# jump-one-of-four: one configuration (N = 4, one jumping node), each schedule
# with 10-40 jumps
SIM_JUMP_RUNS ?= 2000
# reentrant: 2-4 handles per client, nested acquisitions of shared owners
SIM_REENTRANT_RUNS ?= 4000
# fencing: most handles fenced, every fault class (the fence checker)
SIM_FENCING_RUNS ?= 4000
# rw: readers-writer locks (shared, exclusive) beside plain ones
SIM_RW_RUNS ?= 6000
# rw-upgrade: the same with most readers-writer handles in update mode
SIM_RW_UPGRADE_RUNS ?= 2000
# evicting: a minority of nodes drop keys and fence counters, refused by every handle
SIM_EVICTING_RUNS ?= 2000
# turns: many-locks with 1..3 rounds at once per client (the rest wait)
SIM_TURNS_RUNS ?= 1000
# restart: many restarts, no restart delay, the restart rule keeps holders
# apart (late clients, bounds of seconds); failover: failovers to a lagging
# replica, announced or seen only as a new run_id
SIM_RESTART_RUNS ?= 3000
SIM_FAILOVER_RUNS ?= 2000
# wait: failovers with the restart rule off and every client WAITing for
# the replica (a lagging one answers 0 at times): WAIT alone must keep
# holders apart; its control, ctl-failover-no-wait, the same without WAIT
SIM_WAIT_RUNS ?= 2000

MUTATION_RUNS ?= 20000

# An index past a fixed-size array (a loop that overruns the nodes by one)
# traps at once in the unit tests and the simulator; no runtime library.
BOUNDS := -fsanitize=bounds -fsanitize-undefined-trap-on-error

CPU_CHECKS += check-compile check-include-order check-unit check-sim check-mutations check-valgrind-core check-sanitize-core

$(BUILD)/unit: tests/core/unit.c $(wildcard tests/core/unit/*) redlock.h tests/shared/check.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(BOUNDS) $(WARN) $(INCS) $< -o $@ -pthread

# The statistics tests again, with REDLOCK_NO_STATS: every count reads 0.
# (the harness serves every unit test: this one uses a part of it)
$(BUILD)/stats_off: tests/core/stats_off.c tests/core/unit/stats.c tests/core/unit/harness.h redlock.h tests/shared/check.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(BOUNDS) $(WARN) -Wno-unused-function $(INCS) $< -o $@ -pthread

# The decoders of a lock's stored value (redlock.h section 13).
$(BUILD)/value: tests/core/value.c redlock.h tests/shared/check.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(BOUNDS) $(WARN) $(INCS) $< -o $@

# Strict C99 on purpose: no POSIX clocks (see the file's top comment).
$(BUILD)/platform: tests/core/platform.c redlock.h tests/shared/check.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(BOUNDS) $(WARN) $(INCS) $< -o $@

$(BUILD)/sim: tests/core/sim.c redlock.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(BOUNDS) $(WARN) $(INCS) $< -o $@

# The header as C99, C11 and C++11 with gcc and clang, with and without
# REDLOCK_STATIC, and across two translation units.
check-compile: | $(BUILD)
	@for cc in gcc clang; do \
	  for std in "-std=c99" "-std=c11" "-x c++ -std=c++11"; do \
	    if $$cc $$std $(WARN) -I. -c tests/core/compile/tu1.c -o $(BUILD)/tu1.o && \
	       $$cc $$std $(WARN) -I. -c tests/core/compile/tu2.c -o $(BUILD)/tu2.o && \
	       $$cc $(BUILD)/tu1.o $(BUILD)/tu2.o -o $(BUILD)/tu && $(BUILD)/tu && \
	       $$cc $$std $(WARN) -I. tests/core/compile/static.c -o $(BUILD)/static && $(BUILD)/static; \
	    then echo "ok compile $$cc $$std (two TUs, REDLOCK_STATIC)"; \
	    else echo "not ok compile $$cc $$std"; fi; \
	  done; \
	done

# Every header after a system header, strict and GNU C: it builds and its
# built-in clock runs, or the build stops saying what to define.
check-include-order: | $(BUILD)
	@tests/core/compile/include_order.sh $(BUILD)

check-unit: $(BUILD)/unit $(BUILD)/platform $(BUILD)/value $(BUILD)/stats_off
	@$(BUILD)/unit
	@$(BUILD)/stats_off | sed 's/^\(not \)\{0,1\}ok /&no-stats /'
	@$(BUILD)/platform
	@$(BUILD)/value

# 4,000 schedules per profile across N = 1, 3, 5, modern and legacy
# servers (fewer for the refusing clients and the legacy crowd), 2,000 of
# many locks per client, 2,000 of a server clock jumping on one node of
# four, 4,000 of reentrant locks, 3,000 of restarts, 2,000 of failovers
# and 2,000 of failovers answered by WAIT alone, without a restart delay (the profiles side by side, one per CPU), plus
# the negative controls that must find violations (ctl-restart: the same
# restarts with the clients' restart rule off; ctl-failover-no-wait: the
# wait profile's failovers without WAIT).
check-sim: $(BUILD)/sim
	@scripts/parallel.sh '$(BUILD)/sim --profile modern --runs $(SIM_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile legacy --runs $(SIM_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile noscript --runs $(SIM_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile legacy-crowd --runs $(SIM_CROWD_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile refusing --runs $(SIM_REFUSING_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile many-locks --runs $(SIM_MANY_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile turns --runs $(SIM_TURNS_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile jump-one-of-four --runs $(SIM_JUMP_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile reentrant --runs $(SIM_REENTRANT_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile fencing --runs $(SIM_FENCING_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile rw --runs $(SIM_RW_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile rw-upgrade --runs $(SIM_RW_UPGRADE_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile evicting --runs $(SIM_EVICTING_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile restart --runs $(SIM_RESTART_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile failover --runs $(SIM_FAILOVER_RUNS) --seed 1' \
	  '$(BUILD)/sim --profile wait --runs $(SIM_WAIT_RUNS) --seed 1'
	@$(BUILD)/sim --profile ctl-restart --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-failover-no-wait --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-drift --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-jump-majority --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-jump-one-of-five --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-jump-two-of-four --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-rw-shared-beside-exclusive --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-rw-update-beside-update --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-rw-upgrade-beside-readers --runs 500 --seed 1 --expect-violations
	@$(BUILD)/sim --profile ctl-evict-counted --runs 500 --seed 1 --expect-violations

# Known bugs re-introduced into copies of the header (tests/core/mutations/*.patch)
# must each be found by the simulator.
check-mutations: | $(BUILD)
	@tests/core/mutations/check.sh $(MUTATION_RUNS) $(BUILD)

check-valgrind-core: $(BUILD)/unit $(BUILD)/platform $(BUILD)/value $(BUILD)/sim
	@scripts/parallel.sh \
	  'if $(VALGRIND) $(BUILD)/unit >/dev/null && $(VALGRIND) $(BUILD)/platform >/dev/null && \
	      $(VALGRIND) $(BUILD)/value >/dev/null; \
	   then echo "ok valgrind unit: 0 errors, 0 leaks"; else echo "not ok valgrind unit"; fi' \
	  'if $(VALGRIND) $(BUILD)/sim --profile modern --runs 200 --seed 7 >/dev/null && \
	      $(VALGRIND) $(BUILD)/sim --profile noscript --runs 100 --seed 7 >/dev/null && \
	      $(VALGRIND) $(BUILD)/sim --profile reentrant --runs 60 --seed 7 >/dev/null; \
	   then echo "ok valgrind sim modern, noscript, reentrant (360 schedules): 0 errors, 0 leaks"; \
	   else echo "not ok valgrind sim modern, noscript, reentrant"; fi' \
	  'if $(VALGRIND) $(BUILD)/sim --profile legacy --runs 100 --seed 7 >/dev/null && \
	      $(VALGRIND) $(BUILD)/sim --profile legacy-crowd --runs 50 --seed 7 >/dev/null && \
	      $(VALGRIND) $(BUILD)/sim --profile refusing --runs 100 --seed 7 >/dev/null && \
	      $(VALGRIND) $(BUILD)/sim --profile many-locks --runs 30 --seed 7 >/dev/null; \
	   then echo "ok valgrind sim legacy, legacy-crowd, refusing, many-locks (280 schedules): 0 errors, 0 leaks"; \
	   else echo "not ok valgrind sim legacy, legacy-crowd, refusing, many-locks"; fi'

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
check-sanitize-core: | $(BUILD)
	@scripts/parallel.sh '$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(INCS) tests/core/unit.c -o $(BUILD)/unit-san && \
	  $(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(INCS) tests/core/value.c -o $(BUILD)/value-san' \
	  '$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(INCS) tests/core/sim.c -o $(BUILD)/sim-san' && \
	 scripts/parallel.sh \
	  'if $(BUILD)/unit-san >/dev/null && $(BUILD)/value-san >/dev/null && $(BUILD)/sim-san --profile modern --runs 1000 >/dev/null; \
	   then echo "ok ASan+UBSan: unit tests and 1000 modern schedules clean"; else echo "not ok ASan+UBSan unit, modern"; fi' \
	  'if $(BUILD)/sim-san --profile legacy --runs 1000 >/dev/null && \
	      $(BUILD)/sim-san --profile noscript --runs 500 >/dev/null && \
	      $(BUILD)/sim-san --profile legacy-crowd --runs 300 >/dev/null && \
	      $(BUILD)/sim-san --profile refusing --runs 500 >/dev/null && \
	      $(BUILD)/sim-san --profile many-locks --runs 200 >/dev/null; \
	   then echo "ok ASan+UBSan: 2500 legacy, noscript, legacy-crowd, refusing, many-locks schedules clean"; \
	   else echo "not ok ASan+UBSan legacy, noscript, legacy-crowd, refusing, many-locks"; fi'

# make sim [RUNS=N] [SEED=S] [PROFILE=<a profile of tests/core/sim.c: modern, legacy, ..., ctl-jump-two-of-four>]
RUNS ?= 1000
SEED ?= 1
PROFILE ?= modern
.PHONY: sim check-compile check-include-order check-unit check-sim check-mutations check-valgrind-core check-sanitize-core
sim: $(BUILD)/sim
	$(BUILD)/sim --profile $(PROFILE) --runs $(RUNS) --seed $(SEED)

$(BUILD)/bench_core: bench/bench_core.c bench/bench_alloc.h redlock.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@
# the same without statistics: what they cost (core.sh)
$(BUILD)/bench_core_nostats: bench/bench_core.c bench/bench_alloc.h redlock.h | $(BUILD)
	$(CC) -std=c99 -O2 -g -DREDLOCK_NO_STATS $(WARN) $(INCS) $< -o $@

.PHONY: bench-core
bench-core: $(BUILD)/bench_core $(BUILD)/bench_core_nostats
	@bench/core.sh $(BUILD)/bench_core $(BUILD)/bench_core_nostats

$(BUILD)/bench_scale: bench/bench_scale.c bench/bench_util.h redlock.h adapters/redlock_socket.h adapters/redlock_resp.h adapters/redlock_hiredis.h \
                      tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@ -lhiredis -lpthread

# Many locks on one client against a real node: 1 to 100,000 locks, the
# server on CPU 0 and the client on the last CPU; per count a row with a
# lock table of the benchmark's and one at the adapter's defaults (the
# table the client grows). SCALE_ARGS: e.g. "--locks 100000 --hold 120
# --ttl 30000" for a two-minute hold, "--rows defaults --node-timeout 5000".
SCALE_ARGS ?= --locks 1,1000,10000,100000 --hold 10 --ttl 6000
.PHONY: bench-scale
bench-scale: $(BUILD)/bench_scale
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: server on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_scale --server-cpu 0 $(SCALE_ARGS)

# TLS against plain TCP per lock cycle, on one node (bench/bench_tls.c),
# the server on CPU 0 and the client on the last CPU.
$(BUILD)/bench_tls: bench/bench_tls.c bench/bench_util.h redlock.h adapters/redlock_socket.h adapters/redlock_resp.h adapters/redlock_tls.h \
                    tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@ -lssl -lcrypto
TLS_ARGS ?= --cycles 2000 --blocks 7
.PHONY: bench-tls
bench-tls: $(BUILD)/bench_tls
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: server on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_tls --server-cpu 0 $(TLS_ARGS)

# Every transport side by side with redis-benchmark on the same nodes
# (bench/bench_transport.c): 1, 3 and 5 nodes, servers on CPU 0, the client
# on the last CPU; CSV files and the latency plot in bench/out/.
$(BUILD)/bench_transport: bench/bench_transport.c bench/bench_util.h bench/bench_alloc.h redlock.h adapters/redlock_socket.h adapters/redlock_resp.h \
                          adapters/redlock_hiredis.h adapters/redlock_libev.h adapters/redlock_hiredis_common.h \
                          adapters/redlock_tls.h tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@ -lhiredis -lev -lpthread
TRANSPORT_ARGS ?= --cycles 3000 --contend 1
.PHONY: bench-transport bench-deps
bench-deps:
	@scripts/deps.sh bench
bench-transport: bench-deps $(BUILD)/bench_transport
	@mkdir -p bench/out
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: servers on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_transport --server-cpu 0 --out bench/out $(TRANSPORT_ARGS)

# Waiting under contention (bench/bench_wait.c): 20 client processes on one
# key of one node, the library's blocking acquire beside a hand-written
# client (SET NX PX and a retry), notifications on and off, default and
# tight retries, and a flood of forged notifications; the server on CPU 0,
# the clients on the last CPU.
$(BUILD)/bench_wait: bench/bench_wait.c redlock.h adapters/redlock_socket.h adapters/redlock_resp.h \
                     adapters/redlock_notify.h adapters/redlock_tls.h tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@
WAIT_ARGS ?= --seconds 5 --runs 2
.PHONY: bench-wait
bench-wait: $(BUILD)/bench_wait
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: server on CPU 0, clients on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_wait --server-cpu 0 $(WAIT_ARGS)

# What restart-aware voting costs (bench/bench_restart.c): how long a lock
# is unavailable after 2 of 3 nodes restart empty, beside the bound, and
# the preamble (INFO, CONFIG GET appendfsync) per connection; the servers
# on CPU 0, the client on the last CPU.
$(BUILD)/bench_restart: bench/bench_restart.c bench/bench_util.h redlock.h adapters/redlock_socket.h adapters/redlock_conn.h \
                        adapters/redlock_resp.h tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@
RESTART_ARGS ?= --ttls 1000,3000 --runs 3
.PHONY: bench-restart
bench-restart: $(BUILD)/bench_restart
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: servers on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_restart --server-cpu 0 $(RESTART_ARGS)

$(BUILD)/bench_sentinel: bench/bench_sentinel.c bench/bench_util.h bench/bench_socket.h tests/shared/redis_group.h tests/shared/redis_nodes.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@

# A Sentinel group beside a plain node: cycles/s, p50/p99, a new client.
.PHONY: bench-sentinel
bench-sentinel: $(BUILD)/bench_sentinel
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: servers and sentinels on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_sentinel --server-cpu 0 $(SENTINEL_ARGS)

$(BUILD)/bench_cluster: bench/bench_cluster.c bench/bench_util.h bench/bench_socket.h tests/shared/redis_cluster.h tests/shared/redis_nodes.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@

# A Redis Cluster node beside a plain node: cycles/s, p50/p99, a new client.
.PHONY: bench-cluster
bench-cluster: $(BUILD)/bench_cluster
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: servers on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_cluster --server-cpu 0 $(CLUSTER_ARGS)
$(BUILD)/bench_replicas: bench/bench_replicas.c bench/bench_util.h tests/shared/redis_group.h tests/shared/redis_nodes.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O2 -g $(WARN) $(INCS) $< -o $@

# cfg.wait_replicas 0 against 1 on a primary and one replica: cycles/s, p50/p99.
.PHONY: bench-replicas
bench-replicas: $(BUILD)/bench_replicas
	@cpu=$$(( $$(nproc) - 1 )); \
	 echo "layout: primary and replica on CPU 0, client on CPU $$cpu (taskset), $$(nproc) CPUs"; \
	 taskset -c $$cpu $(BUILD)/bench_replicas --server-cpu 0 $(REPLICAS_ARGS)

.PHONY: bench
bench: bench-deps
	@$(MAKE) --no-print-directory bench-core bench-scale bench-tls bench-transport bench-wait bench-restart bench-sentinel \
	  bench-cluster bench-replicas
