# mk/resp.mk - the RESP2 codec (adapters/redlock_resp.h): parser/encoder
# tests, the fuzz loop, the libFuzzer target and the header built alone.
RESP_HDRS := adapters/redlock_resp.h adapters/redlock_conn.h adapters/redlock_socket.h adapters/redlock_notify.h adapters/redlock_nodes.h redlock.h tests/shared/check.h
RESP_STD  := -std=c99 $(WARN) $(OPT) $(CFLAGS) $(INCS)

CPU_CHECKS += check-resp check-resp-fuzz check-resp-compile

.PHONY: check-resp check-resp-fuzz check-resp-compile fuzz-resp

$(BUILD)/test_resp: tests/resp/test_resp.c $(RESP_HDRS) | $(BUILD)
	$(CC) $(RESP_STD) -o $@ tests/resp/test_resp.c

$(BUILD)/fuzz_resp: tests/resp/fuzz_resp.c $(RESP_HDRS) | $(BUILD)
	$(CC) $(RESP_STD) -o $@ tests/resp/fuzz_resp.c

check-resp: $(BUILD)/test_resp
	$(VALGRIND) $(BUILD)/test_resp

# deterministic random inputs: no crash, bounded memory (valgrind: no errors)
check-resp-fuzz: $(BUILD)/fuzz_resp
	$(VALGRIND) $(BUILD)/fuzz_resp 3000

# redlock_resp.h on its own, as C99, C11 and C++11, extern and static.
check-resp-compile: | $(BUILD)
	@for c in "$(CC) -std=c99" "$(CC) -std=c11" "$(CXX) -x c++ -std=c++11"; do \
	  for d in "" "-DREDLOCK_RESP_STATIC"; do \
	    if $$c $(WARN) $(INCS) $$d -DREDLOCK_RESP_IMPLEMENTATION -c $$(case "$$c" in *c++*) ;; *) echo -x c;; esac) \
	         adapters/redlock_resp.h -o $(BUILD)/resp_cc.o 2>$(BUILD)/resp_cc.err; \
	    then echo "ok compile redlock_resp.h alone: $$c $$d"; else cat $(BUILD)/resp_cc.err; echo "not ok compile redlock_resp.h alone: $$c $$d"; fi; \
	  done; \
	done

# libFuzzer target (not part of make test): make fuzz-resp && build/fuzz_resp_lf -max_total_time=60
fuzz-resp: tests/resp/fuzz_resp.c $(RESP_HDRS) | $(BUILD)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER $(INCS) -o $(BUILD)/fuzz_resp_lf tests/resp/fuzz_resp.c
