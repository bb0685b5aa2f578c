# One clock: the core's built-in clock and the clock each adapter gives the
# core and times its own deadlines with are CLOCK_BOOTTIME, checked inside a
# time namespace that sets CLOCK_BOOTTIME apart from CLOCK_MONOTONIC
# (tests/clock/check.sh). Needs no redis-server.
CPU_CHECKS += check-clock
.PHONY: check-clock

$(BUILD)/clock_check: tests/clock/clock_check.c redlock.h adapters/redlock_socket.h adapters/redlock_resp.h \
                      adapters/redlock_hiredis.h adapters/redlock_hiredis_common.h adapters/redlock_libev.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) $< -o $@ -lhiredis -lev -lpthread

check-clock: $(BUILD)/clock_check
	@tests/clock/check.sh $(BUILD)
