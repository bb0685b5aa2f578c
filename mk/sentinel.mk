# mk/sentinel.mk - the Sentinel pieces every adapter shares
# (adapters/redlock_sentinel.h): the question to the sentinels, their
# answers, ROLE and the "not the primary" errors, under valgrind; and the
# header built alone as C99, C11 and C++11.
SENTINEL_DEPS := tests/sentinel/test_sentinel.c adapters/redlock_sentinel.h redlock.h tests/shared/check.h

CPU_CHECKS += check-sentinel

.PHONY: check-sentinel

$(BUILD)/test_sentinel: $(SENTINEL_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/sentinel/test_sentinel.c

check-sentinel: $(BUILD)/test_sentinel
	$(VALGRIND) $(BUILD)/test_sentinel
	@for c in "gcc -std=c99" "gcc -std=c11" "g++ -x c++ -std=c++11" "clang -std=c99" "clang++ -x c++ -std=c++11"; do \
	  if printf '#include "adapters/redlock_sentinel.h"\nint main(void) { return redlock_sentinel_not_primary("LOADING", 7) ? 0 : 1; }\n' | \
	     $$c $(WARN) -I. $$(case "$$c" in *c++*) ;; *) echo -x c;; esac) - -o $(BUILD)/sentinel_cc 2>$(BUILD)/sentinel_cc.err && $(BUILD)/sentinel_cc; \
	  then echo "ok compile redlock_sentinel.h alone: $$c"; else cat $(BUILD)/sentinel_cc.err; echo "not ok compile redlock_sentinel.h alone: $$c"; fi; \
	done
