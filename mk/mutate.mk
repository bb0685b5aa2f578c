# Mutation testing (tests/mutate/README.md). Slow, so not in CHECKS and not
# part of `make test`:
#   make mutate [MUTANTS=300] [MSEED=1] [TARGET=core|adapters] [SUITE=all|unit|sim|socket|hiredis|nodes] [JOBS=2]
#               [AREA=rw|owner|adopt|events|new (all four), comma-separated]
# MUTATE_FLAGS passes more options, e.g. MUTATE_FLAGS="--only 17,42 --keep"
# or MUTATE_FLAGS="--set SIM_RUNS=2000" for a quicker, weaker simulator.
MUTANTS ?= 300
MSEED ?= 1
TARGET ?= core
SUITE ?= all
JOBS ?= 2
AREA ?=
MUTATE_FLAGS ?=

.PHONY: mutate
mutate:
	@scripts/deps.sh $(if $(filter core,$(TARGET)),core,all)
	@$(if $(filter core,$(TARGET)),true,scripts/hiredis1.sh build) # hiredis 1.2 for check-hiredis1-run
	python3 tests/mutate/mutate.py --target $(TARGET) --suite $(SUITE) --count $(MUTANTS) \
	  --seed $(MSEED) --jobs $(JOBS) $(if $(AREA),--area $(AREA)) $(MUTATE_FLAGS)
