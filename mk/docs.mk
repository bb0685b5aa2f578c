# mk/docs.mk - the docs' code blocks, built and run (tests/docs/test_snippets.sh):
# every fenced block of README.md and tools/README.md carries a
# <!-- snippet: KIND --> marker saying how it is tested; the quick start is
# built vendored and installed and run against three nodes, fragments are
# compiled, pkg-config and CMake lines build against a temp install, the
# tool's example script runs for real. Starts nodes: the node lane.
CHECKS += check-snippets

.PHONY: check-snippets
check-snippets: $(BUILD)/redlock
	@MAKE="$(MAKE)" CC="$(CC)" tests/docs/test_snippets.sh $(BUILD)/redlock
