# mk/libev.mk - the hiredis async + libev adapter (adapters/redlock_libev.h):
# integration tests against real redis-server processes, under ASan + UBSan
# and under valgrind (its compile matrix is check-adapters-compile, mk/hiredis.mk,
# which builds both hiredis headers in one unit). IT_ONLY=<substring> runs
# a subset of the scenarios.
CHECKS += check-libev check-libev-cluster
CHECKS += check-valgrind-libev

.PHONY: check-libev check-valgrind-libev check-libev-cluster examples-libev

$(BUILD)/test_libev: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

# The example links what the libev adapter needs (no threads).
LIBEV_EXAMPLE_LIBS := -lhiredis -lev
$(BUILD)/libev_async: examples/libev_async.c $(ADAPTER_HDRS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) -I. $< -o $@ $(EXAMPLE_LINK) $(LIBEV_EXAMPLE_LIBS)

examples-libev: $(BUILD)/libev_async

# The scenarios built with ASan + UBSan (valgrind runs the plain build).
$(BUILD)/test_libev_san: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

check-libev: $(BUILD)/test_libev_san
	@$(BUILD)/test_libev_san

# A Redis Cluster node (redis-cluster://): the cluster scenarios of
# integration.h (it_main_cluster) on one 3-master cluster the test
# starts, under memcheck.
$(BUILD)/test_libev_cluster: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -DIT_CLUSTER $< -o $@ $(ADAPTER_LIBS)

check-libev-cluster: $(BUILD)/test_libev_cluster
	$(VALGRIND) $(BUILD)/test_libev_cluster

# Every scenario under memcheck but the Sentinel ones (seconds of waiting
# on sentinels; check-libev runs them under ASan): 0 errors, 0 leaks.
check-valgrind-libev: $(BUILD)/test_libev
	@if IT_SKIP=sentinel $(VALGRIND) $(BUILD)/test_libev > $(BUILD)/test_libev.valgrind.log 2>&1; \
	then echo "ok valgrind test_libev: 0 errors, 0 leaks ($$(grep -c '^ok' $(BUILD)/test_libev.valgrind.log) scenarios)"; \
	else cat $(BUILD)/test_libev.valgrind.log; echo "not ok valgrind test_libev"; fi
