# mk/cluster.mk - the Redis Cluster routing pieces every adapter shares
# (adapters/redlock_cluster.h): key slots (also against a real cluster-mode
# redis-server), command keys, redirections and the slot map, under
# valgrind; the routing driven in random order by a scripted transport
# over a model cluster (tests/cluster/test_cluster_order.c: moves,
# migrations, failovers, stale maps; a failing seed prints its replay),
# under valgrind for a short run; and the header built alone as C99, C11
# and C++11.
CLUSTER_DEPS := tests/cluster/test_cluster.c adapters/redlock_cluster.h redlock.h tests/shared/check.h tests/shared/redis_nodes.h

CPU_CHECKS += check-cluster check-cluster-compile

.PHONY: check-cluster check-cluster-order check-cluster-compile

$(BUILD)/test_cluster: $(CLUSTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/cluster/test_cluster.c

$(BUILD)/test_cluster_order: tests/cluster/test_cluster_order.c adapters/redlock_cluster.h redlock.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/cluster/test_cluster_order.c

check-cluster: $(BUILD)/test_cluster check-cluster-order
	$(VALGRIND) $(BUILD)/test_cluster 300
	$(BUILD)/test_cluster 5000

# seconds: 10000 schedules (the odd ones with the core in the loop), and
# 200 more under valgrind
check-cluster-order: $(BUILD)/test_cluster_order
	$(VALGRIND) $(BUILD)/test_cluster_order 200 50001
	$(BUILD)/test_cluster_order 10000

check-cluster-compile: | $(BUILD)
	@for c in "gcc -std=c99" "gcc -std=c11" "g++ -x c++ -std=c++11" "clang -std=c99" "clang++ -x c++ -std=c++11"; do \
	  if printf '#include "adapters/redlock_cluster.h"\nint main(void) { return (int)redlock_cluster_slot("a", 1) == 15495 ? 0 : 1; }\n' | \
	     $$c $(WARN) -I. $$(case "$$c" in *c++*) ;; *) echo -x c;; esac) - -o $(BUILD)/cluster_cc 2>$(BUILD)/cluster_cc.err && $(BUILD)/cluster_cc; \
	  then echo "ok compile redlock_cluster.h alone: $$c"; else cat $(BUILD)/cluster_cc.err; echo "not ok compile redlock_cluster.h alone: $$c"; fi; \
	done
