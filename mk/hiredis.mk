# mk/hiredis.mk - the blocking hiredis adapter (adapters/redlock_hiredis.h,
# with redlock_hiredis_common.h): compile matrix of both hiredis headers,
# integration tests against real redis-server processes on 1, 3 and 5
# nodes (tests/shared/redis_nodes.h starts and stops them), plain, under
# valgrind and under ThreadSanitizer, and a 6 MiB command through all three
# adapters (test_limits); their bounds against nodes that push them (an
# endless reply, a long output over partial writes, a frozen or refusing
# node's subscriber: test_bounds, under ASan). IT_ONLY=<substring> runs a
# subset of the scenarios. The libev adapter: mk/libev.mk.
ADAPTER_LIBS := -lhiredis -lev -lpthread
ADAPTER_HDRS := redlock.h adapters/redlock_conn.h adapters/redlock_hiredis.h adapters/redlock_libev.h adapters/redlock_hiredis_common.h adapters/redlock_notify.h \
                adapters/redlock_tls.h adapters/redlock_nodes.h adapters/redlock_sentinel.h
ADAPTER_DEPS := $(ADAPTER_HDRS) tests/shared/integration.h tests/shared/redis_cluster.h adapters/redlock_cluster.h tests/shared/redis_nodes.h tests/shared/redis_group.h tests/shared/hostile_server.h tests/shared/check.h \
                tests/shared/tcp_proxy.h

CPU_CHECKS += check-adapters-compile
CHECKS += check-hiredis check-valgrind-hiredis check-tsan-hiredis check-hiredis-cluster

.PHONY: check-adapters-compile check-hiredis check-valgrind-hiredis check-tsan-hiredis check-hiredis-cluster examples-hiredis

$(BUILD)/test_hiredis: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

# Its own program: built with REDLOCK_MAX_KEY raised for a 6 MiB key.
$(BUILD)/test_limits: tests/hiredis/test_limits.c $(ADAPTER_DEPS) adapters/redlock_socket.h adapters/redlock_resp.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/test_hiredis_tsan: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g -fsanitize=thread $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

# The examples link what the blocking adapter needs, no more (no libev).
HIREDIS_EXAMPLE_LIBS := -lhiredis -lpthread
$(BUILD)/hiredis_sync: examples/hiredis_sync.c $(ADAPTER_HDRS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) -I. $< -o $@ $(EXAMPLE_LINK) $(HIREDIS_EXAMPLE_LIBS)

$(BUILD)/fenced_write: examples/fenced_write.c $(ADAPTER_HDRS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) -I. $< -o $@ $(EXAMPLE_LINK) $(HIREDIS_EXAMPLE_LIBS)

examples-hiredis: $(BUILD)/hiredis_sync $(BUILD)/fenced_write

# Both adapter headers in one TU, as C99, C11 and C++11, gcc and clang;
# every adapter's public API called from a second file that includes only
# the declarations (tests/hiredis/adapters_api.c, linked with adapters_impl.c);
# REDLOCK_HIREDIS_TLS with an old hiredis (tests/hiredis/hiredis0: its
# version, 0.14) stops the build with our message; the examples build too.
check-adapters-compile: | $(BUILD)
	@for cc in gcc clang; do \
	  for std in "-std=c99" "-std=c11" "-x c++ -std=c++11"; do \
	    if $$cc $$std $(WARN) -I. tests/hiredis/adapters_compile.c -o $(BUILD)/adapters_compile $(ADAPTER_LIBS) && \
	       $(BUILD)/adapters_compile >/dev/null; \
	    then echo "ok adapters compile $$cc $$std"; \
	    else echo "not ok adapters compile $$cc $$std"; fi; \
	  done; \
	done
	@for cc in gcc clang; do \
	  for std in "-std=c99" "-std=c11" "-x c++ -std=c++11"; do \
	    if $$cc $$std $(WARN) -I. tests/hiredis/adapters_api.c tests/hiredis/adapters_impl.c -o $(BUILD)/adapters_api \
	         $(ADAPTER_LIBS) && $(BUILD)/adapters_api >/dev/null; \
	    then echo "ok adapters api from a second file $$cc $$std"; \
	    else echo "not ok adapters api from a second file $$cc $$std"; fi; \
	  done; \
	done
	@for v in "-DREDLOCK_STATIC -DREDLOCK_HIREDIS_STATIC -DREDLOCK_LIBEV_STATIC"; do \
	  if gcc -std=c99 $(WARN) -I. $$v tests/hiredis/adapters_compile.c -o $(BUILD)/adapters_compile $(ADAPTER_LIBS) && \
	     $(BUILD)/adapters_compile >/dev/null; \
	  then echo "ok adapters compile gcc -std=c99 $$v"; else echo "not ok adapters compile gcc -std=c99 $$v"; fi; \
	done
	@for h in redlock_hiredis.h redlock_libev.h; do \
	  if printf '#include "adapters/%s"\n' $$h | gcc -std=c99 $(WARN) -Wfatal-errors -I. -Itests/hiredis/hiredis0 \
	       -DREDLOCK_HIREDIS_TLS -fsyntax-only -x c - >$(BUILD)/adapters_tls_old.log 2>&1; \
	  then echo "not ok adapters $$h: REDLOCK_HIREDIS_TLS with hiredis 0.14 built (without TLS)"; \
	  elif grep -q 'error: #error "REDLOCK_HIREDIS_TLS needs hiredis 1.x with hiredis_ssl' $(BUILD)/adapters_tls_old.log; \
	  then echo "ok adapters $$h: REDLOCK_HIREDIS_TLS with hiredis 0.14 stops the build, saying why"; \
	  else cat $(BUILD)/adapters_tls_old.log; echo "not ok adapters $$h: REDLOCK_HIREDIS_TLS with hiredis 0.14: not our message"; fi; \
	done
	@for h in redlock_hiredis.h redlock_libev.h; do \
	  if printf '#include "adapters/%s"\n' $$h | gcc -std=c99 $(WARN) -I. -c -x c - -o $(BUILD)/adapters_decl.o; \
	  then echo "ok adapters $$h declarations only"; else echo "not ok adapters $$h declarations only"; fi; \
	done
	@if $(MAKE) --no-print-directory -s examples-hiredis examples-libev; then echo "ok adapters examples build"; \
	 else echo "not ok adapters examples build"; fi
	@for t in hiredis/test_hiredis libev/test_libev; do \
	  if clang -std=c99 $(WARN) $(INCS) -fsyntax-only tests/$$t.c; \
	  then echo "ok adapters $${t#*/} compiles with clang"; \
	  else echo "not ok adapters $${t#*/} compiles with clang"; fi; \
	done

# The scenarios built with ASan + UBSan (valgrind runs the plain build below).
$(BUILD)/test_hiredis_san: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

# Its own program (the socket adapter too), with ASan + UBSan: the request
# ring's writes outside itself end it.
$(BUILD)/test_bounds_san: tests/hiredis/test_bounds.c $(ADAPTER_DEPS) adapters/redlock_socket.h adapters/redlock_resp.h | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

check-hiredis: $(BUILD)/test_hiredis_san $(BUILD)/test_limits $(BUILD)/test_hiredis_nomem $(BUILD)/test_bounds_san
	@$(BUILD)/test_hiredis_san
	@$(BUILD)/test_limits
	@$(BUILD)/test_hiredis_nomem
	@$(BUILD)/test_bounds_san

# A Redis Cluster node (redis-cluster://): the cluster scenarios of
# integration.h (it_main_cluster) on one 3-master cluster the test starts
# (tests/shared/redis_cluster.h), then the adapter's own on it (the first
# command through a seed, the watchdog thread, a master that evicts, the
# plain subscriber of clients without INFO), under memcheck.
$(BUILD)/test_hiredis_cluster: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -DIT_CLUSTER $< -o $@ $(ADAPTER_LIBS)

check-hiredis-cluster: $(BUILD)/test_hiredis_cluster
	$(VALGRIND) $(BUILD)/test_hiredis_cluster

# Every scenario under memcheck but the Sentinel ones (seconds of waiting
# on sentinels; check-hiredis runs them under ASan): 0 errors, 0 leaks.
check-valgrind-hiredis: $(BUILD)/test_hiredis
	@if IT_SKIP=sentinel $(VALGRIND) $(BUILD)/test_hiredis > $(BUILD)/test_hiredis.valgrind.log 2>&1; \
	then echo "ok valgrind test_hiredis: 0 errors, 0 leaks ($$(grep -c '^ok' $(BUILD)/test_hiredis.valgrind.log) scenarios)"; \
	else cat $(BUILD)/test_hiredis.valgrind.log; echo "not ok valgrind test_hiredis"; fi

# The watchdog thread under ThreadSanitizer: the scenarios that use it
# (hiredis_watchdog_getters: the getters documented thread-safe, called
# while the thread runs callbacks and reports a loss), and on a cluster
# node (hiredis_cluster_routing: the thread opens the masters'
# connections and renews through them). TSAN_ONLY= (empty) runs them all.
TSAN_ONLY ?= watchdog,killed_n3,paused_n3,bg_n3,lost_on_time,deinit_wakes
$(BUILD)/test_hiredis_cluster_tsan: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g -fsanitize=thread $(WARN) $(CFLAGS) $(INCS) -DIT_CLUSTER $< -o $@ $(ADAPTER_LIBS)

check-tsan-hiredis: $(BUILD)/test_hiredis_tsan $(BUILD)/test_hiredis_cluster_tsan
	@IT_ONLY=$(TSAN_ONLY) IT_TAG=tsan_ $(BUILD)/test_hiredis_tsan
	@IT_ONLY=hiredis_cluster_routing IT_TAG=tsan_ $(BUILD)/test_hiredis_cluster_tsan

# Every allocation of init, lock_init, a blocking acquire and deinit (both
# adapters, the watchdog thread too) fails in turn: OK or NOMEM, no crash,
# no block left (malloc and free interposed and counted).
$(BUILD)/test_hiredis_nomem: tests/hiredis/test_nomem.c tests/shared/nomem.h tests/shared/hostile_server.h $(ADAPTER_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)
