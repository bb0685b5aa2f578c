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
# nodes. `make test` runs the two lists side by side (scripts/run-tests.sh).
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
# Mostly builds: the CPU lane, the shorter one.
CPU_CHECKS += check-examples
.PHONY: check-examples
check-examples: examples $(BUILD)/redlock
	@tests/shared/examples.sh $(BUILD)

test: deps
	@scripts/run-tests.sh $(CPU_CHECKS) -- $(CHECKS)

$(BUILD):
	@mkdir -p $(BUILD)

clean:
	rm -rf $(BUILD)
