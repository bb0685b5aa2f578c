# mk/deb.mk - the Debian package (debian/): libredlock-dev and redlock-tools
# built with dpkg-buildpackage in a scratch copy of the tree, lintian, then
# unpacked into a scratch root and used through pkg-config and CMake
# (tests/tool/test_deb.sh). Builds only: the CPU lane.
#
#   dpkg-buildpackage -us -uc -b     in the tree builds ../*.deb (README.md)

CPU_CHECKS += check-deb

.PHONY: check-deb
check-deb:
	@CC="$(CC)" tests/tool/test_deb.sh
