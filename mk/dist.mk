# mk/dist.mk - the release tarball.
#
#   make dist [DIST_DIR=build]   builds DIST_DIR/redlock-X.Y.Z.tar.gz
#
# X.Y.Z is the version in redlock.h (scripts/version.sh). The tarball holds
# the files git tracks, with fixed owners, modes and times: the same tree
# gives the same bytes (scripts/dist.sh). Unpacked, it is a whole source
# tree: its own `make test` runs as here.
DIST_DIR ?= $(BUILD)

CPU_CHECKS += check-dist

.PHONY: dist check-dist
dist:
	@scripts/dist.sh $(DIST_DIR)

# make dist twice (same bytes), its files, the unpacked tree on its own,
# the version's copies (tests/release/test_dist.sh)
check-dist:
	@MAKE="$(MAKE)" tests/release/test_dist.sh
