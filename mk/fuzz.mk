# mk/fuzz.mk - fuzzing (tests/fuzz/README.md). Two libFuzzer targets: the
# RESP parser (tests/resp/fuzz_resp.c) and the core driven by arbitrary
# calls, replies and clock steps (tests/fuzz/fuzz_core.c).
#   make fuzz SECONDS=N     each target N seconds (default 60), from the corpus
#   make fuzz-merge         fold what the last `make fuzz` found into the corpus
# `make test` replays the corpus through tests/fuzz/replay.c, built with
# $(CC) under ASan + UBSan (no libFuzzer needed).
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_TARGETS := core resp
SECONDS      ?= 60
fuzz_src_core := tests/fuzz/fuzz_core.c
fuzz_src_resp := tests/resp/fuzz_resp.c
FUZZ_DEPS    := redlock.h adapters/redlock_resp.h tests/fuzz/replay.c

CPU_CHECKS += check-fuzz
.PHONY: check-fuzz fuzz fuzz-merge

$(BUILD)/replay_core: tests/fuzz/fuzz_core.c $(FUZZ_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(FUZZ_SAN) $(WARN) $(CFLAGS) $(INCS) -DFUZZ_LIBFUZZER -o $@ tests/fuzz/fuzz_core.c tests/fuzz/replay.c

$(BUILD)/replay_resp: tests/resp/fuzz_resp.c $(FUZZ_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(FUZZ_SAN) $(WARN) $(CFLAGS) $(INCS) -DFUZZ_LIBFUZZER -o $@ tests/resp/fuzz_resp.c tests/fuzz/replay.c

$(BUILD)/fuzz_core_lf: tests/fuzz/fuzz_core.c $(FUZZ_DEPS) | $(BUILD)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER $(INCS) -o $@ tests/fuzz/fuzz_core.c

check-fuzz: $(BUILD)/replay_core $(BUILD)/replay_resp
	@$(BUILD)/replay_core core tests/fuzz/corpus/core 2>$(BUILD)/replay_core.log || tail -30 $(BUILD)/replay_core.log
	@$(BUILD)/replay_resp resp tests/fuzz/corpus/resp 2>$(BUILD)/replay_resp.log || tail -30 $(BUILD)/replay_resp.log

# Each target from a copy of its corpus; findings (crash-*, leak-*, ...)
# land in build/fuzz/<target>/ and fail the run.
fuzz: $(BUILD)/fuzz_core_lf fuzz-resp
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/fuzz/$$t/corpus; cp tests/fuzz/corpus/$$t/* $(BUILD)/fuzz/$$t/corpus/; \
	  rm -f $(BUILD)/fuzz/$$t/crash-* $(BUILD)/fuzz/$$t/leak-* $(BUILD)/fuzz/$$t/timeout-* $(BUILD)/fuzz/$$t/oom-*; \
	  $(BUILD)/fuzz_$${t}_lf -max_total_time=$(SECONDS) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$t/ \
	    $(BUILD)/fuzz/$$t/corpus > $(BUILD)/fuzz/$$t/log 2>&1; \
	  found=$$(ls $(BUILD)/fuzz/$$t | grep -c -E '^(crash|leak|timeout|oom)-'); \
	  echo "fuzz $$t: $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/$$t/log) executions in $(SECONDS) s," \
	       "$$(grep -o 'cov: [0-9]*' $(BUILD)/fuzz/$$t/log | tail -1 | cut -d' ' -f2) edges covered, $$found findings"; \
	  [ "$$found" -eq 0 ] || { ls $(BUILD)/fuzz/$$t; exit 1; }; \
	done

fuzz-merge: $(BUILD)/fuzz_core_lf fuzz-resp
	@for t in $(FUZZ_TARGETS); do \
	  $(BUILD)/fuzz_$${t}_lf -merge=1 -use_counters=0 -max_len=512 tests/fuzz/corpus/$$t $(BUILD)/fuzz/$$t/corpus 2>&1 | tail -1; \
	done
