/* test_nomem.c - the raw-socket adapter, its node-list parser and the RESP
   parser when memory runs out: each allocation of a call fails in turn
   (malloc, calloc and realloc are interposed; glibc's __libc_* do the real
   work), and the call must say REDLOCK_ERR_NOMEM (or succeed when the
   failed allocation was not needed), leave its outputs unchanged, and free
   everything it took. Built with NOMEM_COUNT_BLOCKS, the interposer also
   counts the blocks alive (free too), and the count must be the same after
   each call; without it, make test runs it under valgrind, which finds the
   leaks itself (and does not mix with an interposed free). */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef __GLIBC__
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static long nomem_at = -1; /* the allocation (0-based) that fails; -1: none */
static long nomem_calls;

static int nomem_now(void) { return nomem_at >= 0 && nomem_calls++ == nomem_at; }
#ifdef NOMEM_COUNT_BLOCKS
extern void __libc_free(void *p);
static long live_blocks; /* allocated through these and not freed */
static void *counted(void *p) { if (p) live_blocks++; return p; }
void *malloc(size_t n) { return nomem_now() ? NULL : counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t size) { return nomem_now() ? NULL : counted(__libc_calloc(n, size)); }
void *realloc(void *p, size_t n) { return nomem_now() ? NULL : p ? __libc_realloc(p, n) : counted(__libc_realloc(p, n)); }
void free(void *p)
{
    if (p) live_blocks--;
    __libc_free(p);
}
#else
void *malloc(size_t n) { return nomem_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return nomem_now() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return nomem_now() ? NULL : __libc_realloc(p, n); }
#endif

/* The blocks alive (0 without NOMEM_COUNT_BLOCKS: frees are not seen). */
static long in_use(void)
{
#ifdef NOMEM_COUNT_BLOCKS
    return live_blocks;
#else
    return 0;
#endif
}

/* Arms the failure of allocation k; returns how many allocations ran. */
static void nomem_arm(long k) { nomem_at = k; nomem_calls = 0; }
static long nomem_disarm(void) { long n = nomem_calls; nomem_at = -1; return n; }

/* init with three nodes (names, a user, a password to copy) */
static void test_init_nomem(void)
{
    redlock_socket_config cfg;
    redlock_socket s;
    long k, failed = 0;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    cfg.node[0].host = "127.0.0.1";
    cfg.node[1].host = "localhost";
    cfg.node[2].unix_path = "/tmp/no-such.sock";
    cfg.node[0].username = "u";
    cfg.node[0].password = cfg.node[1].password = "secret";
    /* once, so that what the C library keeps for good (the resolver's
       modules) is not counted against init */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    redlock_socket_deinit(&s);
    for (k = 0; k < 100; k++) {
        int rc;
        long live0 = in_use();
        nomem_arm(k);
        rc = redlock_socket_init(&s, &cfg);
        if (nomem_disarm() <= k) { /* every allocation succeeded: done */
            CHECK_EQ(rc, REDLOCK_OK);
            redlock_socket_deinit(&s);
            CHECK_EQ(in_use(), live0);
            break;
        }
        CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
        CHECK_EQ(redlock_socket_fd(&s, 0), -1); /* nothing left initialised */
        CHECK_EQ(in_use(), live0); /* everything it took is back */
        failed++;
    }
    CHECK(failed >= 1);
    CHECK(k < 100);
}

/* the node-list parser: NOMEM with cfg and *mem unchanged */
static void test_parse_nodes_nomem(void)
{
    const char *list = "127.0.0.1:7000,redis://u:p%40ss@host.example:7001/2,unix:///tmp/r.sock";
    long k, failed = 0;
    for (k = 0; k < 100; k++) {
        redlock_socket_config cfg;
        void *mem = NULL;
        char err[128];
        int rc, before;
        long live0 = in_use();
        redlock_socket_config_init(&cfg);
        before = cfg.node_count;
        nomem_arm(k);
        rc = redlock_socket_parse_nodes(&cfg, list, &mem, err, sizeof err);
        if (nomem_disarm() <= k) {
            CHECK_EQ(rc, 0);
            CHECK_EQ(cfg.node_count, 3);
            redlock_socket_free_nodes(mem);
            CHECK_EQ(in_use(), live0);
            break;
        }
        CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
        CHECK_EQ(cfg.node_count, before); /* unchanged */
        CHECK(mem == NULL);
        CHECK_EQ(in_use(), live0);
        failed++;
    }
    CHECK(failed >= 1);
    CHECK(k < 100);
}

/* the RESP parser: a reply that needs the buffer and the value tree to
   grow; a failure is NOMEM and sticky, and reset makes the parser usable */
static void test_resp_nomem(void)
{
    static char in[8192];
    size_t len = 0;
    long k, failed = 0;
    int i;
    len += (size_t)snprintf(in + len, sizeof in - len, "*100\r\n");
    for (i = 0; i < 100; i++) len += (size_t)snprintf(in + len, sizeof in - len, "$5\r\nv%04d\r\n", i);
    for (k = 0; k < 100; k++) {
        redlock_resp_parser p;
        const redlock_reply *r = NULL;
        int rc;
        long live0 = in_use();
        redlock_resp_parser_init(&p);
        nomem_arm(k);
        rc = redlock_resp_feed(&p, in, len);
        if (rc == 0) rc = redlock_resp_next(&p, &r);
        if (nomem_disarm() <= k) {
            CHECK_EQ(rc, 1);
            CHECK(r && r->elements == 100);
            redlock_resp_parser_free(&p);
            CHECK_EQ(in_use(), live0);
            break;
        }
        CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
        CHECK_EQ(redlock_resp_error(&p), REDLOCK_RESP_E_NOMEM);
        CHECK_EQ(redlock_resp_feed(&p, "+OK\r\n", 5), REDLOCK_ERR_NOMEM); /* sticky */
        redlock_resp_parser_reset(&p);
        CHECK_EQ(redlock_resp_feed(&p, "+OK\r\n", 5), 0);
        CHECK_EQ(redlock_resp_next(&p, &r), 1);
        redlock_resp_parser_free(&p);
        CHECK_EQ(in_use(), live0);
        failed++;
    }
    CHECK(failed >= 1);
    CHECK(k < 100);
}

int main(void)
{
    RUN(test_init_nomem);
    RUN(test_parse_nodes_nomem);
    RUN(test_resp_nomem);
    return CHECK_EXIT();
}
#else
int main(void)
{
    printf("# test_nomem needs glibc's __libc_malloc: nothing run here\n");
    return 0;
}
#endif
