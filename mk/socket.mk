# mk/socket.mk - the raw-socket adapter (adapters/redlock_socket.h): the
# hostile fake server, out-of-memory runs, the compile matrix and the
# integration tests on real redis-servers (with the watchdog thread under
# ThreadSanitizer too). Its RESP codec: mk/resp.mk.
SOCKET_HDRS  := adapters/redlock_socket.h adapters/redlock_conn.h adapters/redlock_resp.h adapters/redlock_tls.h adapters/redlock_notify.h \
                adapters/redlock_nodes.h adapters/redlock_sentinel.h adapters/redlock_cluster.h redlock.h tests/shared/check.h
SOCKET_STD   := -std=c99 $(WARN) $(OPT) $(CFLAGS) $(INCS)
SOCKET_CLANG := $(shell command -v clang 2>/dev/null)
SOCKET_CLANGXX := $(shell command -v clang++ 2>/dev/null)

# (compiles: the CPU lane)
CPU_CHECKS += check-socket-nomem check-socket-compile
CHECKS += check-socket-hostile # waits on its scripted servers: a node check
CHECKS += check-socket check-socket-tls
CHECKS += check-tsan-socket check-socket-cluster

.PHONY: check-socket-hostile check-socket-nomem check-socket-compile check-socket check-socket-tls check-tsan-socket \
        check-socket-cluster \
        examples-socket

$(BUILD)/test_nomem: tests/socket/test_nomem.c tests/shared/nomem.h tests/shared/hostile_server.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ tests/socket/test_nomem.c

$(BUILD)/test_nomem_count: tests/socket/test_nomem.c tests/shared/nomem.h tests/shared/hostile_server.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -DNOMEM_COUNT_BLOCKS -o $@ tests/socket/test_nomem.c

# Every allocation of init, the node-list parser, the RESP parser and a
# lock's whole life on three nodes fails in turn: NOMEM told, outputs
# unchanged, nothing leaked (the blocks counted by the interposer; and
# valgrind, told to leave the interposer in place).
check-socket-nomem: $(BUILD)/test_nomem $(BUILD)/test_nomem_count
	@$(BUILD)/test_nomem_count
	$(VALGRIND) --soname-synonyms=somalloc=nouserintercepts $(BUILD)/test_nomem

$(BUILD)/test_socket_hostile: tests/socket/test_socket_hostile.c tests/socket/strict_loop.h tests/shared/hostile_server.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ tests/socket/test_socket_hostile.c

$(BUILD)/test_socket: tests/socket/test_socket.c tests/shared/redis_cluster.h tests/shared/tcp_proxy.h tests/shared/hostile_server.h tests/shared/redis_nodes.h tests/shared/redis_group.h tests/shared/integration.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ tests/socket/test_socket.c -lpthread

check-socket-hostile: $(BUILD)/test_socket_hostile
	$(VALGRIND) $(BUILD)/test_socket_hostile

# every integration scenario under memcheck (0 errors, 0 leaks), the
# watchdog thread's (socket_thread_*) too
# (tests/core/mutations/socket1-*.patch builds this test against a mutated
# copy of the adapter and runs one scenario of it; that check stays in
# check-mutations, in the CPU lane, with the others: the test starts and
# stops its own nodes, and takes a few seconds)
check-socket: $(BUILD)/test_socket
	$(VALGRIND) $(BUILD)/test_socket

# A Redis Cluster node (redis-cluster://): the cluster scenarios of
# integration.h (it_main_cluster) on one 3-master cluster the test starts
# (tests/shared/redis_cluster.h), under memcheck.
$(BUILD)/test_socket_cluster: tests/socket/test_socket.c tests/shared/redis_cluster.h tests/shared/tcp_proxy.h tests/shared/hostile_server.h tests/shared/redis_nodes.h tests/shared/redis_group.h tests/shared/integration.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -DIT_CLUSTER -o $@ tests/socket/test_socket.c -lpthread

check-socket-cluster: $(BUILD)/test_socket_cluster
	$(VALGRIND) $(BUILD)/test_socket_cluster

# TLS (REDLOCK_SOCKET_TLS, OpenSSL): the scenarios over TLS on 1 and 3
# nodes and the TLS cases (integration.h, it_main_tls), the foreign loop
# and a 16 MiB command over TLS, a TLS Sentinel group and a TLS cluster
# (it_tls_sentinel, it_tls_cluster); under ASan + UBSan, then under memcheck
# the ones whose timing valgrind's slowness does not disturb.
TLS_LIBS := -lssl -lcrypto -lpthread
TLS_DEPS := tests/socket/test_socket.c tests/socket/strict_loop.h tests/shared/tls_certs.sh tests/shared/tcp_proxy.h \
            tests/shared/hostile_server.h tests/shared/redis_nodes.h tests/shared/redis_group.h tests/shared/integration.h $(SOCKET_HDRS)
TLS_VALGRIND_ONLY := basic,reuse,contend,auth,acl_noscript,select_db,socket_tls
$(BUILD)/test_socket_tls: $(TLS_DEPS) | $(BUILD)
	$(CC) $(SOCKET_STD) -DREDLOCK_SOCKET_TLS -DIT_TLS -o $@ tests/socket/test_socket.c $(TLS_LIBS)
$(BUILD)/test_socket_tls_san: $(TLS_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -DREDLOCK_SOCKET_TLS -DIT_TLS -o $@ tests/socket/test_socket.c $(TLS_LIBS)
check-socket-tls: $(BUILD)/test_socket_tls $(BUILD)/test_socket_tls_san
	@JOBS=2 scripts/parallel.sh '$(BUILD)/test_socket_tls_san' \
	  'if IT_ONLY=$(TLS_VALGRIND_ONLY) $(VALGRIND) $(BUILD)/test_socket_tls > $(BUILD)/test_socket_tls.valgrind.log 2>&1; \
	   then echo "ok valgrind test_socket_tls: 0 errors, 0 leaks ($$(grep -c "^ok" $(BUILD)/test_socket_tls.valgrind.log) scenarios)"; \
	   else cat $(BUILD)/test_socket_tls.valgrind.log; echo "not ok valgrind test_socket_tls"; false; fi'

# The adapter as C99 and C++11 with gcc and clang, transport-only and
# (with the core) complete, plus REDLOCK_SOCKET_STATIC, REDLOCK_SOCKET_TLS
# and REDLOCK_SOCKET_THREAD (also where it has no effect: transport-only).
SOCKET_CC_LIST  := $(CC) $(SOCKET_CLANG)
SOCKET_CXX_LIST := $(CXX) $(SOCKET_CLANGXX)
SOCKET_VARIANTS := -DREDLOCK_SOCKET_NO_CORE -DREDLOCK_IMPLEMENTATION -DREDLOCK_IMPLEMENTATION__-DREDLOCK_SOCKET_TLS \
                   -DREDLOCK_IMPLEMENTATION__-DREDLOCK_STATIC__-DREDLOCK_SOCKET_STATIC \
                   -DREDLOCK_IMPLEMENTATION__-DREDLOCK_SOCKET_THREAD__-DREDLOCK_STATIC__-DREDLOCK_SOCKET_STATIC \
                   -DREDLOCK_SOCKET_NO_CORE__-DREDLOCK_SOCKET_THREAD
check-socket-compile: | $(BUILD)
	@for v in $(SOCKET_VARIANTS); do d=$$(echo $$v | sed 's/__/ /g'); \
	  for c in $(SOCKET_CC_LIST); do \
	    if $$c -std=c99 $(WARN) $(INCS) $$d -DREDLOCK_SOCKET_IMPLEMENTATION -c -x c adapters/redlock_socket.h -o $(BUILD)/socket_cc.o 2>$(BUILD)/socket_cc.err; \
	    then echo "ok compile $$c c99 $$d"; else cat $(BUILD)/socket_cc.err; echo "not ok compile $$c c99 $$d"; fi; \
	    if $$c -std=c11 $(WARN) $(INCS) $$d -DREDLOCK_SOCKET_IMPLEMENTATION -c -x c adapters/redlock_socket.h -o $(BUILD)/socket_cc.o 2>$(BUILD)/socket_cc.err; \
	    then echo "ok compile $$c c11 $$d"; else cat $(BUILD)/socket_cc.err; echo "not ok compile $$c c11 $$d"; fi; \
	  done; \
	  for c in $(SOCKET_CXX_LIST); do \
	    if $$c -x c++ -std=c++11 $(WARN) $(INCS) $$d -DREDLOCK_SOCKET_IMPLEMENTATION -c adapters/redlock_socket.h -o $(BUILD)/socket_cc.o 2>$(BUILD)/socket_cc.err; \
	    then echo "ok compile $$c c++11 $$d"; else cat $(BUILD)/socket_cc.err; echo "not ok compile $$c c++11 $$d"; fi; \
	  done; \
	done; \
	if $(CC) -std=c99 $(WARN) $(INCS) -c -x c adapters/redlock_socket.h -o $(BUILD)/socket_cc.o 2>$(BUILD)/socket_cc.err; \
	then echo "ok compile declarations only"; else cat $(BUILD)/socket_cc.err; echo "not ok compile declarations only"; fi
	@if $(MAKE) --no-print-directory -s -B examples-socket; then echo "ok socket examples build"; \
	 else echo "not ok socket examples build"; fi

examples-socket: $(BUILD)/example_socket $(BUILD)/example_poll_loop $(BUILD)/example_stats
# (socket.c: libc and POSIX threads, for the watchdog thread; poll_loop.c, stats.c: libc)
$(BUILD)/example_socket: examples/socket.c $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ examples/socket.c $(EXAMPLE_LINK) -pthread
$(BUILD)/example_poll_loop: examples/poll_loop.c $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ examples/poll_loop.c $(EXAMPLE_LINK)
$(BUILD)/example_stats: examples/stats.c $(SOCKET_HDRS) | $(BUILD)
	$(CC) $(SOCKET_STD) -o $@ examples/stats.c $(EXAMPLE_LINK)

# The integration scenarios, the hostile fake server's and the RESP codec again, built with
# ASan and UBSan: a read or write past a buffer, or undefined arithmetic,
# fails at once (the mutation suite has no valgrind; this is its eye).
$(BUILD)/test_socket_hostile_san: tests/socket/test_socket_hostile.c tests/socket/strict_loop.h tests/shared/hostile_server.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/socket/test_socket_hostile.c

$(BUILD)/test_socket_san: tests/socket/test_socket.c tests/shared/tcp_proxy.h tests/shared/hostile_server.h \
                          tests/shared/redis_nodes.h tests/shared/redis_group.h tests/shared/integration.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/socket/test_socket.c -lpthread

# The watchdog thread (cfg.watchdog_thread) under ThreadSanitizer: its own
# scenarios (a job longer than the TTL keeps its lock, a loss reported
# during it, callbacks on the thread), and, with IT_SOCKET_THREAD=1, the
# shared scenarios that ask for a watchdog thread (a loss; a node killed
# or paused while the thread renews), their getters called meanwhile.
SOCKET_TSAN_ONLY := socket_thread,watchdog,stolen,killed_n3,paused_n3
$(BUILD)/test_socket_tsan: tests/socket/test_socket.c tests/shared/tcp_proxy.h tests/shared/hostile_server.h \
                           tests/shared/redis_nodes.h tests/shared/integration.h $(SOCKET_HDRS) | $(BUILD)
	$(CC) -std=c99 -O1 -g -fsanitize=thread $(WARN) $(CFLAGS) $(INCS) -o $@ tests/socket/test_socket.c -lpthread
check-tsan-socket: $(BUILD)/test_socket_tsan
	@IT_SOCKET_THREAD=1 IT_ONLY=$(SOCKET_TSAN_ONLY) IT_TAG=tsan_ $(BUILD)/test_socket_tsan

$(BUILD)/test_resp_san: tests/resp/test_resp.c $(RESP_HDRS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/resp/test_resp.c

$(BUILD)/fuzz_resp_san: tests/resp/fuzz_resp.c $(RESP_HDRS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/resp/fuzz_resp.c

# The Sentinel scenarios (mostly waiting on failovers) run in check-socket,
# under memcheck, not again here.
CHECKS += check-sanitize-adapters
.PHONY: check-sanitize-adapters
check-sanitize-adapters: $(BUILD)/test_resp_san $(BUILD)/fuzz_resp_san $(BUILD)/test_socket_hostile_san \
                         $(BUILD)/test_socket_san
	@scripts/parallel.sh '$(BUILD)/test_resp_san && $(BUILD)/fuzz_resp_san 3000 && $(BUILD)/test_socket_hostile_san' \
	  'IT_SKIP=sentinel $(BUILD)/test_socket_san'
