# mk/hiredis1.mk - both hiredis adapters against hiredis 1.x as well as the
# system's 0.14: scripts/hiredis1.sh unpacks Debian trixie's hiredis 1.2
# into $(BUILD)/hiredis-1/ (nothing installed), the integration scenarios
# and the limits program are built against it (-I, -L) and run with
# LD_LIBRARY_PATH, their names prefixed "hiredis1_". When the packages
# cannot be fetched the check prints "skip ..." with the reason: nothing
# is counted as passed.
H1_ROOT := $(BUILD)/hiredis-1/usr
H1_LIB  := $(H1_ROOT)/lib/$(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
H1_FLAGS := -isystem $(H1_ROOT)/include -L$(H1_LIB)
H1_RUN  := LD_LIBRARY_PATH=$(H1_LIB)

CHECKS += check-hiredis1

.PHONY: check-hiredis1 hiredis1

hiredis1: | $(BUILD)
	@scripts/hiredis1.sh $(BUILD)

$(BUILD)/h1/test_hiredis: tests/hiredis/test_hiredis.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_libev: tests/libev/test_libev.c $(ADAPTER_DEPS) | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/test_limits: tests/hiredis/test_limits.c $(ADAPTER_DEPS) adapters/redlock_socket.h adapters/redlock_resp.h | $(BUILD)/h1/.dir
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(H1_FLAGS) $(INCS) $< -o $@ $(ADAPTER_LIBS)

$(BUILD)/h1/.dir:
	@mkdir -p $(BUILD)/h1 && touch $@

H1_BINS := $(BUILD)/h1/test_hiredis $(BUILD)/h1/test_libev $(BUILD)/h1/test_limits

# The binaries are built only once the tree is there (make is re-entered).
check-hiredis1: | $(BUILD)
	@if ! scripts/hiredis1.sh $(BUILD) 2> $(BUILD)/hiredis1.log; then \
	  echo "skip hiredis 1.x checks: $$(tail -1 $(BUILD)/hiredis1.log)"; exit 0; fi; \
	$(MAKE) --no-print-directory -s $(H1_BINS) || { echo "not ok hiredis1 build"; exit 1; }; \
	echo "# hiredis $$(sed -n 's/^Version: //p' $(H1_LIB)/pkgconfig/hiredis.pc) from $(H1_LIB)"; \
	rc=0; \
	$(H1_RUN) IT_TAG=hiredis1_ $(BUILD)/h1/test_hiredis || rc=1; \
	$(H1_RUN) IT_TAG=hiredis1_ $(BUILD)/h1/test_libev || rc=1; \
	$(H1_RUN) $(BUILD)/h1/test_limits > $(BUILD)/h1/test_limits.log 2>&1 || rc=1; \
	sed 's/^\(not \)\{0,1\}ok /&hiredis1_/' $(BUILD)/h1/test_limits.log; \
	exit $$rc
