# mk/chaos.mk - the chaos test (tests/chaos/README.md): real nodes, client
# processes, a fault injector and a checker. `make test` runs a short
# schedule and the negative control; `make chaos` the long one.
CHAOS_SRC  := tests/chaos/chaos.c tests/chaos/client.c tests/chaos/check.c
CHAOS_HDRS := tests/chaos/chaos.h tests/shared/tcp_proxy.h tests/shared/redis_nodes.h redlock.h \
              adapters/redlock_socket.h adapters/redlock_conn.h adapters/redlock_resp.h
CHAOS_SEED    ?= 1
CHAOS_SECONDS ?= 300

CHECKS += check-chaos
.PHONY: check-chaos chaos

$(BUILD)/chaos: $(CHAOS_SRC) $(CHAOS_HDRS) | $(BUILD)
	$(CC) -std=c99 $(WARN) $(OPT) $(CFLAGS) $(INCS) -o $@ $(CHAOS_SRC)

check-chaos: $(BUILD)/chaos
	@$(BUILD)/chaos --seconds 15 --seed $(CHAOS_SEED)
	@$(BUILD)/chaos --control --seconds 6 --min-faults 0 --seed $(CHAOS_SEED)

chaos: $(BUILD)/chaos
	@$(BUILD)/chaos --seconds $(CHAOS_SECONDS) --seed $(CHAOS_SEED) --min-faults $$(( $(CHAOS_SECONDS) * 5 ))
