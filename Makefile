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
# nodes. `make test` runs the CPU checks in one lane and the node checks
# in two beside it (scripts/run-tests.sh): the node checks mostly wait on
# their servers, so three lanes share two cores well.
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

# The node checks' lanes take the next check as they finish one: the
# longest first (their order here, as measured), the others after them.
LONG_CHECKS := check-hiredis1 check-hiredis check-tool check-libev check-socket check-matrix \
               check-sanitize-adapters check-valgrind-hiredis check-valgrind-libev check-socket-tls \
               check-bench check-tsan-hiredis check-snippets
NODE_QUEUE = $(foreach c,$(LONG_CHECKS),$(filter $(c),$(CHECKS))) $(filter-out $(LONG_CHECKS),$(CHECKS))
# Binaries that checks of different lanes build: built once before the
# lanes start, so that two makes never write one file at once. A failure
# here is left to the checks that need them to report.
TEST_SHARED := $(BUILD)/redlock $(BUILD)/tool_fake_server $(BUILD)/test_socket $(BUILD)/test_libev

# The CPU lane runs at nice 10: the node checks' timing (their servers',
# their timeouts) is what they test, and a busy core must not decide it.
# A node check whose steps are independent runs NODE_JOBS of them at once
# (scripts/parallel.sh); under `make test` one, as two lanes of node
# checks already run beside the CPU lane: the servers' timing is what
# they test, and a machine kept busier than its cores fails it.
NODE_JOBS ?= 2

test: deps
	@$(MAKE) --no-print-directory -s -j2 $(TEST_SHARED) || echo "# building $(TEST_SHARED) failed: the checks that need them say so"
	@NODE_JOBS=1 scripts/run-tests.sh -n10 $(CPU_CHECKS) -- -j2 $(NODE_QUEUE)

$(BUILD):
	@mkdir -p $(BUILD)

clean:
	rm -rf $(BUILD)
