# mk/matrix.mk - the server matrix: what every other check runs against
# Debian 12's Redis 7.0, again against Redis 6.0 (Debian bullseye) and
# Valkey 8.0 (Debian bookworm-backports), which scripts/servers.sh unpacks
# into build/servers/<name>/ (nothing installed). For each server: the
# shared integration scenarios (integration.h) of the raw-socket adapter
# and of the libev adapter on 1 and 3 nodes, every lock kind (plain,
# reentrant, fenced, readers-writer, legacy, notifications), the socket
# adapter's on a Sentinel group of that server too, and the tool's tests
# (tests/tool/test_tool.sh); then the socket adapter's scenarios on
# 3 nodes of mixed versions (6.0, 7.0, Valkey 8.0: REDLOCK_TEST_SERVERS
# gives node i the i-th binary). Each line is prefixed with the server's
# name (redis6_, valkey8_, mixed_). The binaries are those the other lanes
# build (same flags), run natively.
# Left out, as the other lanes run them against 7.0 and they test the
# client more than the server: the 5-node runs, the scenarios on fake
# servers and proxies (hostile, proxy), the libev adapter's Sentinel
# scenarios (seconds of waiting each, the same servers' behaviour as the
# socket adapter's); the tool's Sentinel section likewise, and its cluster
# section (the test cluster is built with CLUSTER ADDSLOTSRANGE, Redis 7.0).
# A server that cannot be fetched or does not start: "skip matrix NAME:
# REASON" (scripts/servers.sh), nothing counted for it.
MATRIX_SERVERS := redis6 valkey8
MATRIX_IT_SKIP := _n5,hostile,proxy
comma := ,
matrix_bin = $(CURDIR)/build/servers/$(1)/bin/redis-server
# prefixes a check's ok / not ok / skip lines with NAME_
matrix_tag = 2>&1 | sed "s/^\(\(not \)\{0,1\}ok\|skip\) /&$(1)_/"

CHECKS += check-matrix

.PHONY: check-matrix check-matrix-run

# (the servers' tree in build/, not $(BUILD), as hiredis 1.x's)
check-matrix:
	@t0=$$(date +%s); mkdir -p build; scripts/servers.sh build $(MATRIX_SERVERS) > build/servers.log 2>&1; \
	grep '^skip ' build/servers.log; \
	$(MAKE) --no-print-directory -s check-matrix-run MATRIX_READY="$$(sed -n 's/^\([a-z0-9]*\) .*/\1/p' build/servers.log | grep -v '^skip$$' | tr '\n' ' ')"; \
	rc=$$?; echo "# check-matrix: $$(( $$(date +%s) - t0 )) s wall"; exit $$rc

# $(call matrix_it,NAME,test_socket|test_libev[,more to skip]): the scenarios on NAME's nodes
matrix_it = REDLOCK_TEST_SERVERS=$(call matrix_bin,$(1)) IT_TAG=$(1)_ IT_ONLY=$(1)_ IT_SKIP=$(MATRIX_IT_SKIP)$(3) $(BUILD)/$(2)
# $(call matrix_tool,NAME): the tool's tests on NAME's nodes
matrix_tool = set -o pipefail; REDLOCK_TEST_SERVERS=$(call matrix_bin,$(1)) TOOL_SKIP=sentinel,cluster \
  tests/tool/test_tool.sh $(BUILD)/redlock $(BUILD)/tool_fake_server $(call matrix_tag,$(1))
# the mixed run: 3 nodes (not 1: a single node is the first server only)
MATRIX_MIXED = REDLOCK_TEST_SERVERS=$(call matrix_bin,redis6):redis-server:$(call matrix_bin,valkey8) \
  IT_TAG=mixed_ IT_ONLY=mixed_ IT_SKIP=_n1,$(MATRIX_IT_SKIP),sentinel $(BUILD)/test_socket

# The longest first (the tool's, ~100 s each, then the socket adapter's
# with its Sentinel group, ~50 s), NODE_JOBS at a time (Makefile).
check-matrix-run: $(BUILD)/test_socket $(BUILD)/test_libev $(BUILD)/redlock $(BUILD)/tool_fake_server
	@for s in $(MATRIX_READY); do echo "# $$s: $$($(call matrix_bin,$$s) --version)"; done
	@JOBS=$(NODE_JOBS) scripts/parallel.sh \
	  $(foreach s,$(MATRIX_READY),'$(call matrix_tool,$(s))') \
	  $(foreach s,$(MATRIX_READY),'$(call matrix_it,$(s),test_socket)') \
	  $(foreach s,$(MATRIX_READY),'$(call matrix_it,$(s),test_libev,$(comma)sentinel)') \
	  $(if $(and $(filter redis6,$(MATRIX_READY)),$(filter valkey8,$(MATRIX_READY))),'$(MATRIX_MIXED)', \
	    'echo "skip matrix mixed: needs both redis6 and valkey8"')
