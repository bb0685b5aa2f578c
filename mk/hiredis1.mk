# mk/hiredis1.mk - both hiredis adapters against hiredis 1.x as well as the
# system's 0.14: scripts/hiredis1.sh unpacks Debian trixie's hiredis 1.2
# into build/hiredis-1/ (nothing installed), the integration scenarios
# and the limits and bounds programs (this one under ASan) are built
# against it (-I, -L) and run with
# LD_LIBRARY_PATH, their names prefixed "hiredis1_"; then built with TLS
# (REDLOCK_HIREDIS_TLS, hiredis_ssl) the scenarios over TLS on 1 and 3
# nodes and the TLS cases (integration.h, it_main_tls; both adapters'
# on a TLS Sentinel group and a TLS cluster too), plain and a subset
# under valgrind; and the cluster scenarios (IT_CLUSTER) of both adapters,
# natively. When the packages
# cannot be fetched the check prints "skip ..." with the reason: nothing
# is counted as passed.
H1_DIR  := build/hiredis-1
H1_ROOT := $(H1_DIR)/usr
H1_LIB  := $(H1_DIR)/lib
H1_FLAGS := -isystem $(H1_ROOT)/include -L$(H1_LIB)
H1_RUN  := LD_LIBRARY_PATH=$(H1_LIB)

CHECKS += check-hiredis1

.PHONY: check-hiredis1 check-hiredis1-run hiredis1

# (in build/, not $(BUILD): mutant builds in other directories use it too)
hiredis1:
	@scripts/hiredis1.sh build

$(BUILD)/h1/test_hiredis: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_libev: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_limits: tests/hiredis/test_limits.c $(ADAPTER_DEPS) adapters/redlock_socket.h adapters/redlock_resp.h | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_bounds: tests/hiredis/test_bounds.c $(ADAPTER_DEPS) adapters/redlock_socket.h adapters/redlock_resp.h | $(BUILD)/h1/.dir
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

H1_TLS := -DREDLOCK_HIREDIS_TLS -DIT_TLS
H1_TLS_LIBS := -lhiredis -lhiredis_ssl -lssl -lcrypto -lev -lpthread
$(BUILD)/h1/test_hiredis_tls: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) adapters/redlock_tls.h tests/shared/tls_certs.sh | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_TLS) $(H1_FLAGS) $(INCS) $< -o $@ $(H1_TLS_LIBS)

$(BUILD)/h1/test_libev_tls: tests/libev/test_libev.c $(ADAPTER_DEPS) adapters/redlock_tls.h tests/shared/tls_certs.sh | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_TLS) $(H1_FLAGS) $(INCS) $< -o $@ $(H1_TLS_LIBS)

# A Redis Cluster node (the cluster scenarios, it_main_cluster): natively.
$(BUILD)/h1/test_hiredis_cluster: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) -DIT_CLUSTER $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_libev_cluster: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) -DIT_CLUSTER $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/.dir:
	@mkdir -p $(BUILD)/h1 && touch $@

H1_BINS := $(BUILD)/h1/test_hiredis $(BUILD)/h1/test_libev $(BUILD)/h1/test_limits $(BUILD)/h1/test_bounds \
           $(BUILD)/h1/test_hiredis_tls $(BUILD)/h1/test_libev_tls $(BUILD)/h1/test_hiredis_cluster $(BUILD)/h1/test_libev_cluster
# Not no_client_cert: the TLS 1.3 server's alert races the client's first
# commands, and a client slowed by memcheck loses that race on every
# attempt (the connection reset reads TRANSPORT); it runs natively above.
H1_VALGRIND_ONLY := basic_n1,contend_n1,tls_accepted,wrong_ca,mid_handshake
# libev's also on a TLS Sentinel group and a TLS cluster (~12 s, mostly
# waiting): its sentinels are asked in TLS without blocking, code no
# other memcheck or sanitizer lane runs
H1_VALGRIND_LIBEV := $(H1_VALGRIND_ONLY),it_tls_sentinel,it_tls_cluster
# The plain suites against hiredis 1.x: every shared scenario on one node
# (the 3- and 5-node runs take the same hiredis paths; they run against
# Debian's hiredis in check-hiredis and check-libev) and each adapter's own
# tests, named (a test added to tests/hiredis or tests/libev goes here too);
# not the Sentinel scenarios (seconds of waiting on sentinels; the same
# hiredis calls as a single server's, run against Debian's hiredis)
H1_HIREDIS_ONLY := _n1,hiredis_port_range,hiredis_tls_not_built,hiredis_unix_path,hiredis_busy_in_callback,hiredis_unresolvable,hiredis_connect_timeout,hiredis_api_guards,hiredis_linger_bounded,hiredis_linger_finishes,hiredis_no_needless_linger,hiredis_no_wait_for_stragglers,hiredis_reconnect_delay,hiredis_lost_on_time,hiredis_deinit_wakes_waiter,hiredis_watchdog_getters,hiredis_deinit_wakes_waiter_on_reinit
H1_LIBEV_ONLY := _n1,libev_port_range,libev_tls_not_built,libev_api_guards,libev_unix_path,libev_connect_timeout,libev_disconnect_status

# The binaries are built only once the tree is there (make is re-entered).
check-hiredis1:
	@mkdir -p build; if ! scripts/hiredis1.sh build 2> build/hiredis1.log; then \
	  echo "skip hiredis 1.x checks: $$(tail -1 build/hiredis1.log)"; exit 0; fi; \
	$(MAKE) --no-print-directory -s check-hiredis1-run

# (the clusters' hostile scenarios test no hiredis code path of their own:
# they run against Debian's hiredis in check-hiredis-cluster and
# check-libev-cluster)
check-hiredis1-run: $(H1_BINS)
	@echo "# hiredis $$(sed -n 's/^Version: //p' $(H1_LIB)/pkgconfig/hiredis.pc) from $(H1_LIB)"
	@JOBS=$(NODE_JOBS) scripts/parallel.sh \
	  '$(H1_RUN) IT_TAG=hiredis1_ IT_ONLY=$(H1_HIREDIS_ONLY) IT_SKIP=sentinel $(BUILD)/h1/test_hiredis' \
	  '$(H1_RUN) IT_TAG=hiredis1_ IT_ONLY=$(H1_LIBEV_ONLY) IT_SKIP=sentinel $(BUILD)/h1/test_libev' \
	  '$(H1_RUN) IT_TAG=hiredis1_ $(BUILD)/h1/test_hiredis_tls' \
	  '$(H1_RUN) IT_TAG=hiredis1_ $(BUILD)/h1/test_libev_tls' \
	  '$(H1_RUN) IT_TAG=hiredis1_ IT_SKIP=hostile $(BUILD)/h1/test_hiredis_cluster' \
	  '$(H1_RUN) IT_TAG=hiredis1_ IT_SKIP=hostile $(BUILD)/h1/test_libev_cluster' \
	  'set -o pipefail; $(H1_RUN) $(BUILD)/h1/test_limits 2>&1 | sed "s/^\(not \)\{0,1\}ok /&hiredis1_/"' \
	  'set -o pipefail; $(H1_RUN) $(BUILD)/h1/test_bounds 2>&1 | sed "s/^\(not \)\{0,1\}ok /&hiredis1_/"' \
	  '$(call h1_valgrind,hiredis)' '$(call h1_valgrind,libev,$(H1_VALGRIND_LIBEV))'

# $(call h1_valgrind,hiredis|libev[,scenarios]): the TLS build's subset
# (H1_VALGRIND_ONLY unless named) under memcheck
h1_valgrind = if $(H1_RUN) IT_TAG=hiredis1_ IT_ONLY=$(or $(2),$(H1_VALGRIND_ONLY)) $(VALGRIND) $(BUILD)/h1/test_$(1)_tls \
  > $(BUILD)/h1/test_$(1)_tls.valgrind.log 2>&1; \
  then echo "ok valgrind hiredis1 test_$(1)_tls: 0 errors, 0 leaks ($$(grep -c "^ok" $(BUILD)/h1/test_$(1)_tls.valgrind.log) scenarios)"; \
  else cat $(BUILD)/h1/test_$(1)_tls.valgrind.log; echo "not ok valgrind hiredis1 test_$(1)_tls"; false; fi
