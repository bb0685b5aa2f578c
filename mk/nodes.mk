# mk/nodes.mk - the node-list parser of every adapter and the tool
# (adapters/redlock_nodes.h): its tests on their own (tests/nodes), under
# valgrind and under ASan + UBSan with more random lists, and the header
# built alone as C99, C11 and C++11 with gcc and clang.
NODES_DEPS := tests/nodes/test_nodes.c adapters/redlock_nodes.h adapters/redlock_tls.h redlock.h tests/shared/check.h

CPU_CHECKS += check-nodes check-nodes-compile

.PHONY: check-nodes check-nodes-compile

$(BUILD)/test_nodes: $(NODES_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/nodes/test_nodes.c

$(BUILD)/test_nodes_san: $(NODES_DEPS) | $(BUILD)
	$(CC) -std=c99 -O1 -g $(SAN) $(WARN) $(CFLAGS) $(INCS) -o $@ tests/nodes/test_nodes.c

check-nodes: $(BUILD)/test_nodes $(BUILD)/test_nodes_san
	$(VALGRIND) $(BUILD)/test_nodes
	$(BUILD)/test_nodes_san 200000

check-nodes-compile: | $(BUILD)
	@for c in "gcc -std=c99" "gcc -std=c11" "g++ -x c++ -std=c++11" "clang -std=c99" "clang++ -x c++ -std=c++11"; do \
	  if printf '#include "adapters/redlock_nodes.h"\nint main(void) { return 0; }\n' | \
	     $$c $(WARN) -I. $$(case "$$c" in *c++*) ;; *) echo -x c;; esac) - -o $(BUILD)/nodes_cc 2>$(BUILD)/nodes_cc.err; \
	  then echo "ok compile redlock_nodes.h alone: $$c"; else cat $(BUILD)/nodes_cc.err; echo "not ok compile redlock_nodes.h alone: $$c"; fi; \
	done
