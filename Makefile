# redlock.h - build, test and benchmark. `make test` is the test command.
CC      ?= cc
CXX     ?= c++
BUILD   := build
WARN    := -Wall -Wextra -Wpedantic -Werror
OPT     ?= -O2 -g
CFLAGS  ?=
INCS    := -I. -Itests/shared
VALGRIND := valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=99

# Each mk/*.mk adds its check targets (run by `make test`, each printing
# "ok ..." / "not ok ..." lines) and its own build rules: to CPU_CHECKS
# those that need only the CPU, to CHECKS those that start redis-server
# nodes. `make test` runs the two groups side by side (below).
CPU_CHECKS :=
CHECKS  :=
# The examples link exactly the libraries their rules name, even where the
# toolchain drops unused ones by itself (--as-needed): check-examples reads
# what a binary links, and a library it does not need must not be named.
EXAMPLE_LINK := -Wl,--no-as-needed

.PHONY: all test deps clean examples
all:

include $(sort $(wildcard mk/*.mk))

deps:
	@scripts/deps.sh all

# Every example program (build/), against the headers in this tree.
examples: examples-socket examples-hiredis examples-libev

# Each example: --help and usage errors, its nodes (argument, $REDLOCK_NODES,
# default), the libraries it links, a live node (tests/shared/examples.sh).
CHECKS += check-examples
.PHONY: check-examples
check-examples: examples $(BUILD)/redlock
	@tests/shared/examples.sh $(BUILD)

# Two groups of lanes (scripts/run-tests.sh): the CPU checks, two lanes at
# nice 10 (they want throughput; the node checks' timing, their servers'
# and their timeouts, is what those test, and a busy core must not decide
# it), and the node checks, three lanes (they mostly wait). Each lane takes
# the next check of its group as it finishes one: the longest first (the
# order below, as measured), the others after them.
LONG_CPU_CHECKS  := check-mutations check-sim check-valgrind-core check-sanitize-core check-include-order \
                    check-socket-compile check-adapters-compile check-dist check-deb check-unit
LONG_NODE_CHECKS := check-hiredis1 check-matrix check-hiredis check-tool check-sanitize-adapters check-libev \
                    check-socket check-socket-tls check-bench check-valgrind-hiredis check-valgrind-libev \
                    check-tsan-hiredis check-snippets
longest_first = $(foreach c,$(1),$(filter $(c),$(2))) $(filter-out $(1),$(2))
# Binaries that checks of different lanes build: built once before the
# lanes start, so that two makes never write one file at once. A failure
# here is left to the checks that need them to report.
TEST_SHARED := $(BUILD)/redlock $(BUILD)/tool_fake_server $(BUILD)/test_socket $(BUILD)/test_libev \
               $(BUILD)/unit $(BUILD)/platform $(BUILD)/value $(BUILD)/sim
# A node check whose steps are independent runs NODE_JOBS of them at once
# (scripts/parallel.sh); under `make test` one, as other node checks
# already run beside it.
NODE_JOBS ?= 2

test: deps
	@$(MAKE) --no-print-directory -s -j2 $(TEST_SHARED) || echo "# building $(TEST_SHARED) failed: the checks that need them say so"
	@NODE_JOBS=1 scripts/run-tests.sh -j2 -n10 $(call longest_first,$(LONG_CPU_CHECKS),$(CPU_CHECKS)) \
	  -- -j3 $(call longest_first,$(LONG_NODE_CHECKS),$(CHECKS))

$(BUILD):
	@mkdir -p $(BUILD)

clean:
	rm -rf $(BUILD)
