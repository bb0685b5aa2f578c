/* test_nomem.c - the raw-socket adapter, its node-list parser and the RESP
   parser when memory runs out: each allocation of a call fails in turn
   (malloc, calloc and realloc are interposed; glibc's __libc_* do the real
   work), and the call must say REDLOCK_ERR_NOMEM (or succeed when the
   failed allocation was not needed), leave its outputs unchanged, and free
   everything it took. Built with NOMEM_COUNT_BLOCKS, the interposer also
   counts the blocks alive (free too), and the count must be the same after
   each call; without it, make test runs it under valgrind, which finds the
   leaks itself (and does not mix with an interposed free). Also the other
   limit on what a node may hold: its queue of commands in flight, made
   small here. */
#define REDLOCK_SOCKET_MAX_PENDING 64
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_SOCKET_THREAD
#include "adapters/redlock_socket.h"
#include "check.h"
#include "hostile_server.h"

#include <stdio.h>
#include <stdlib.h>

#define NOMEM_OWN_CALLS /* the C library's own blocks (the resolver's) are not ours to fail */
#include "nomem.h"

#ifdef NOMEM_AVAILABLE
static long in_use(void) { return nomem_live(); }

/* init with three nodes (names, a user, a password to copy); with the
   watchdog thread, whose state is allocated last */
static void init_nomem(int thread)
{
    redlock_socket_config cfg;
    redlock_socket s;
    long k, failed = 0;
    redlock_socket_config_init(&cfg);
    cfg.watchdog_thread = thread;
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
static void test_init_nomem(void) { init_nomem(0); }
static void test_init_thread_nomem(void) { init_nomem(1); }

/* the node-list parser (redlock_nodes.h): NOMEM with cfg and *mem unchanged */
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
        rc = redlock_parse_nodes(cfg.node, &cfg.node_count, list, &mem, err, sizeof err);
        if (nomem_disarm() <= k) {
            CHECK_EQ(rc, 0);
            CHECK_EQ(cfg.node_count, 3);
            redlock_free_nodes(mem);
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

/* ---- a whole lock's life on three nodes that grant everything ---- */

static int op_nomem_seen; /* an event, a node status or a return said NOMEM */
static int op_armed;      /* an allocation is set to fail */

static void op_on_event(void *user, const redlock_event *ev)
{
    (void)user;
    if (ev->status == REDLOCK_ERR_NOMEM) op_nomem_seen = 1;
}

/* A call's return: OK, NOMEM, or (a vote lost to NOMEM) NO_QUORUM.
   Returns rc == OK. */
static int op_told(int rc)
{
    if (rc == REDLOCK_ERR_NOMEM) op_nomem_seen = 1;
    else if (rc != REDLOCK_ERR_NO_QUORUM || !op_armed) CHECK_EQ(rc, REDLOCK_OK);
    return rc == REDLOCK_OK;
}

/* The nodes' statuses after a call: NOMEM there is told too. */
static int op_status(const redlock_socket *s)
{
    int i;
    for (i = 0; i < 3; i++)
        if (redlock_socket_node_status(s, i, NULL, 0) == REDLOCK_ERR_NOMEM) op_nomem_seen = 1;
    return 0;
}

/* init, a lock (with a password to send), acquire, extend, release,
   deinit, with allocation k failing. A failed allocation must be told (a
   return, a node's status or an event says NOMEM), and every block must
   be back after deinit. Returns 1 while k was within the round. */
static int op_round(long k, const int *ports)
{
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    long before = in_use(), calls;
    int i;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    for (i = 0; i < 3; i++) cfg.node[i].port = ports[i];
    cfg.node[1].password = "secret"; /* AUTH queued ahead of the first command */
    cfg.node[2].db = 2;              /* and SELECT */
    cfg.connect_timeout_ms = 500;
    cfg.command_timeout_ms = 500;
    cfg.core.node_timeout_ms = 200;
    cfg.core.retry_count = -1;
    cfg.on_event = op_on_event;
    memset(&o, 0, sizeof o);
    o.key = "nomem:op";
    o.ttl_ms = 5000;
    op_nomem_seen = 0;
    op_armed = k >= 0;
    nomem_arm(k);
    if (op_told(redlock_socket_init(&s, &cfg))) {
        if (op_told(redlock_socket_lock_init(&s, &l, &o))) {
            if (op_told(redlock_socket_acquire(&l)) | op_status(&s)) {
                op_told(redlock_socket_extend(&l, 6000));
                op_status(&s);
                op_told(redlock_socket_release(&l));
                op_status(&s);
            }
            redlock_socket_lock_deinit(&l);
        }
        redlock_socket_deinit(&s);
    }
    calls = nomem_disarm();
    if (k >= 0 && k < calls && !op_nomem_seen) {
        printf("#   allocation %ld failed and nothing said NOMEM\n", k);
        CHECK(0);
    }
    if (in_use() != before) {
        printf("#   allocation %ld failing: %ld blocks left\n", k, in_use() - before);
        CHECK_EQ(in_use(), before);
    }
    return k < calls;
}

/* Proves: every allocation of a lock's life (connections, queues, the
   key's block, replies) can fail, and the failure is told, never silent,
   with nothing leaked. */
static void test_operation_nomem(void)
{
    hostile h[3];
    int ports[3], i;
    long k;
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hostile_start(&h[i], HOSTILE_GOOD, NULL), 0);
        ports[i] = h[i].port;
    }
    op_round(-1, ports); /* the resolver's first-use blocks are glibc's to keep */
    for (k = 0; k < 200 && op_round(k, ports); k++) {}
    printf("# %ld allocations failed in turn\n", k);
    CHECK(k > 5 && k < 200);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

/* A node owing REDLOCK_SOCKET_MAX_PENDING replies refuses the next command
   with QUEUE_FULL (no callback, the node stays up). */
static int q_errors;
static void q_reply(void *u, int node, redlock_tag tag, const redlock_reply *r) { (void)u; (void)node; (void)tag; (void)r; }
static void q_error(void *u, int node, redlock_tag tag, int status) { (void)u; (void)node; (void)tag; (void)status; q_errors++; }
static void test_queue_limit(void)
{
    hostile h;
    redlock_socket_config cfg;
    redlock_socket s;
    const char *argv[] = {"PING"};
    int k;
    CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = h.port;
    cfg.on_reply = q_reply;
    cfg.on_error = q_error;
    cfg.command_timeout_ms = 60000;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    for (k = 0; k < REDLOCK_SOCKET_MAX_PENDING; k++)
        CHECK_EQ(redlock_socket_send(&s, 0, 1, argv, NULL, (redlock_tag)k + 1), REDLOCK_OK);
    CHECK_EQ(redlock_socket_send(&s, 0, 1, argv, NULL, 999), REDLOCK_ERR_QUEUE_FULL);
    CHECK_EQ(redlock_socket_run(&s, 20), REDLOCK_OK);
    CHECK_EQ(q_errors, 0);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

int main(void)
{
    RUN(test_queue_limit);
    RUN(test_init_nomem);
    RUN(test_init_thread_nomem);
    RUN(test_parse_nodes_nomem);
    RUN(test_resp_nomem);
    RUN(test_operation_nomem);
    return CHECK_EXIT();
}
#else
int main(void)
{
    printf("# test_nomem needs glibc's __libc_malloc: nothing run here\n");
    return 0;
}
#endif
