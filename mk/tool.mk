# mk/tool.mk - the `redlock` command-line tool (tools/), its tests, the demo,
# and installation.
#
#   make                  builds build/redlock
#   make demo             3 local redis nodes, several `redlock run` taking turns
#   make install [PREFIX=/usr/local] [DESTDIR=]
#   make uninstall [PREFIX=...] [DESTDIR=]
#
# Installed layout (PREFIX):
#   include/redlock.h                        the library
#   include/redlock/redlock_*.h              the adapters (they include ../redlock.h)
#   bin/redlock                              the tool
#   share/man/man1/redlock.1                 its manual page
#   share/pkgconfig/redlock.pc               pkg-config: core + raw sockets (-pthread for its thread)
#   share/pkgconfig/redlock-tls.pc           ... with TLS (REDLOCK_SOCKET_TLS, Requires openssl)
#   share/pkgconfig/redlock-hiredis.pc       ... + hiredis adapter (Requires hiredis, -lpthread)
#   share/pkgconfig/redlock-libev.pc         ... + libev adapter (Requires hiredis, -lev)
#   share/cmake/redlock/redlockConfig.cmake  + redlockConfigVersion.cmake: INTERFACE
#                                            targets redlock::redlock, ::socket, ::socket_tls,
#                                            ::hiredis, ::libev
# The pkg-config and CMake files find the headers relative to themselves:
# the installed tree can be moved.

TOOL_SRC      := tools/redlock.c tools/args.c
TOOL_MAN      := tools/redlock.1
TOOL_DEPS     := $(TOOL_SRC) tools/args.h redlock.h adapters/redlock_socket.h adapters/redlock_resp.h adapters/redlock_tls.h \
                 adapters/redlock_nodes.h adapters/redlock_notify.h adapters/redlock_conn.h adapters/redlock_cluster.h \
                 adapters/redlock_sentinel.h
TOOL_VERSION  := $(shell scripts/version.sh)

PREFIX        ?= /usr/local
DESTDIR       ?=
BINDIR        ?= $(PREFIX)/bin
INCLUDEDIR    ?= $(PREFIX)/include
PKGCONFIGDIR  ?= $(PREFIX)/share/pkgconfig
CMAKEDIR      ?= $(PREFIX)/share/cmake/redlock
MANDIR        ?= $(PREFIX)/share/man
TOOL_PCS      := redlock redlock-tls redlock-hiredis redlock-libev
# how to get from the package files to the headers (relocatable packages)
PC_TO_INCLUDE    = $(shell realpath -m --relative-to=$(PKGCONFIGDIR) $(INCLUDEDIR))
CMAKE_TO_INCLUDE = $(shell realpath -m --relative-to=$(CMAKEDIR) $(INCLUDEDIR))

CHECKS += check-tool
CPU_CHECKS += check-install # builds and installs: CPU work

.PHONY: check-tool check-install demo install uninstall tool
all: $(BUILD)/redlock
tool: $(BUILD)/redlock

# with TLS (rediss://, --tls-*): OpenSSL
TOOL_TLS := -DREDLOCK_SOCKET_TLS
TOOL_LIBS := -lssl -lcrypto

# CPPFLAGS and LDFLAGS: a packager's hardening flags (debian/rules)
$(BUILD)/redlock: $(TOOL_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(CPPFLAGS) $(CFLAGS) $(TOOL_TLS) -I. $(TOOL_SRC) -o $@ $(LDFLAGS) $(TOOL_LIBS)

$(BUILD)/redlock-clang: $(TOOL_DEPS) | $(BUILD)
	clang -std=c99 $(OPT) $(WARN) $(TOOL_TLS) -I. $(TOOL_SRC) -o $@ $(TOOL_LIBS)

# without TLS: the message for rediss:// says so
$(BUILD)/redlock-notls: $(TOOL_DEPS) | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) -I. $(TOOL_SRC) -o $@

$(BUILD)/tool_fake_server: tests/tool/fake_server.c | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $< -o $@

$(BUILD)/tool_cluster: tests/tool/cluster.c tests/shared/redis_cluster.h tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(INCS) $< -o $@

$(BUILD)/tool_sentinel_group: tests/tool/sentinel_group.c tests/shared/redis_group.h tests/shared/redis_nodes.h | $(BUILD)
	$(CC) -std=c99 $(OPT) $(WARN) $(INCS) $< -o $@

# Builds with gcc and clang, then the tool's tests against redis-servers
# they start themselves (tests/tool/test_tool.sh, bounded to 240 s).
# valgrind checks redlock itself; a forked helper (the watcher of `run`)
# ends with _exit and would report the heap it inherited: silenced.
check-tool: $(BUILD)/redlock $(BUILD)/tool_fake_server $(BUILD)/redlock-notls $(BUILD)/tool_sentinel_group $(BUILD)/tool_cluster
	@if $(MAKE) --no-print-directory -s $(BUILD)/redlock-clang >$(BUILD)/tool_clang.log 2>&1; \
	 then echo "ok tool builds with clang -std=c99 $(WARN)"; \
	 else cat $(BUILD)/tool_clang.log; echo "not ok tool builds with clang"; fi
	@if ! command -v groff >/dev/null; then echo "not ok tool man page: groff missing (scripts/deps.sh)"; \
	 elif groff -man -Tutf8 -ww -z $(TOOL_MAN) >$(BUILD)/tool_man.log 2>&1 && [ ! -s $(BUILD)/tool_man.log ]; \
	 then echo "ok tool man page renders without warnings (groff -man -Tutf8 -ww)"; \
	 else cat $(BUILD)/tool_man.log; echo "not ok tool man page has groff warnings"; fi
	@VALGRIND="$(VALGRIND) --child-silent-after-fork=yes" MAN_PAGE=$(TOOL_MAN) NOTLS_BIN=$(BUILD)/redlock-notls \
	 GROUP_BIN=$(BUILD)/tool_sentinel_group CLUSTER_BIN=$(BUILD)/tool_cluster \
	 tests/tool/test_tool.sh $(BUILD)/redlock $(BUILD)/tool_fake_server

# Installs into a temporary PREFIX (and a DESTDIR) and builds a consumer
# against the installed tree with pkg-config and with CMake.
check-install:
	@MAKE="$(MAKE)" CC="$(CC)" tests/tool/test_install.sh

demo:
	@scripts/demo.sh

install: $(BUILD)/redlock
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR)/redlock $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR) \
	    $(DESTDIR)$(MANDIR)/man1
	install -m 644 redlock.h $(DESTDIR)$(INCLUDEDIR)/redlock.h
	install -m 644 $(wildcard adapters/*.h) $(DESTDIR)$(INCLUDEDIR)/redlock/
	install -m 755 $(BUILD)/redlock $(DESTDIR)$(BINDIR)/redlock
	install -m 644 $(TOOL_MAN) $(DESTDIR)$(MANDIR)/man1/redlock.1
	for pc in $(TOOL_PCS); do \
	  sed -e 's|@PC_TO_INCLUDE@|$(PC_TO_INCLUDE)|g' -e 's|@VERSION@|$(TOOL_VERSION)|g' \
	      tools/install/$$pc.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done
	sed -e 's|@CMAKE_TO_INCLUDE@|$(CMAKE_TO_INCLUDE)|g' -e 's|@VERSION_MM@|$(basename $(TOOL_VERSION))|g' \
	    tools/install/redlockConfig.cmake.in \
	    >$(DESTDIR)$(CMAKEDIR)/redlockConfig.cmake
	sed -e 's|@VERSION@|$(TOOL_VERSION)|g' tools/install/redlockConfigVersion.cmake.in \
	    >$(DESTDIR)$(CMAKEDIR)/redlockConfigVersion.cmake
	chmod 644 $(addprefix $(DESTDIR)$(PKGCONFIGDIR)/,$(addsuffix .pc,$(TOOL_PCS))) $(DESTDIR)$(CMAKEDIR)/redlockConfig*.cmake

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/redlock $(DESTDIR)$(MANDIR)/man1/redlock.1 $(DESTDIR)$(INCLUDEDIR)/redlock.h \
	      $(addprefix $(DESTDIR)$(INCLUDEDIR)/redlock/,$(notdir $(wildcard adapters/*.h))) \
	      $(addprefix $(DESTDIR)$(PKGCONFIGDIR)/,$(addsuffix .pc,$(TOOL_PCS))) \
	      $(DESTDIR)$(CMAKEDIR)/redlockConfig.cmake $(DESTDIR)$(CMAKEDIR)/redlockConfigVersion.cmake
	-rmdir $(DESTDIR)$(INCLUDEDIR)/redlock $(DESTDIR)$(CMAKEDIR) 2>/dev/null
