/* The adapters at their compile-time limits, against one redis-server.
   - A command larger than the socket's send buffer goes out whole, over
     several writes, in each of the three adapters: a lock on a 6 MiB key
     is acquired (the node holds it) and released (the key is gone).
   - A full queue: a command past the adapter's limit (16 MiB unsent for
     the socket adapter, 2 replies owed per node for the hiredis ones) is
     refused with QUEUE_FULL, its operation ends OVERLOADED (not
     NO_QUORUM), the connection stays up and what was queued succeeds.
   - The libev adapter's bound on unparsed reply bytes (1 KiB here) does
     not count replies already parsed.
   The limits are set here, so this is a program of its own. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_MAX_KEY (8L * 1024 * 1024)
#define REDLOCK_SOCKET_MAX_OUTPUT (16L * 1024 * 1024)
#define REDLOCK_HIREDIS_QUEUE 2
#define REDLOCK_LIBEV_MAX_BUFFERED 1024 /* below INFO's answer (~5 KiB): the libev tests set info_off */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include "adapters/redlock_socket.h"
#include "redis_nodes.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

#define BIG_KEY_LEN (6L * 1024 * 1024)
/* A round has time for 6 MiB each way: hiredis 0.14 moves its whole output
   buffer after every partial write, which takes ~100 ms here. */
#define BIG_ROUND_MS 3000

static redis_nodes *rn; /* main's */
static char *big_key;

/* What the node holds under the big key: its length (STRLEN of the value,
   the token) or 0 when the key is gone. */
static int node_value_len(void)
{
    redisContext *rc = redisConnect("127.0.0.1", redis_nodes_port(rn, 0));
    redisReply *r;
    int n = -1;
    if (!rc || rc->err) {
        if (rc) redisFree(rc);
        return -1;
    }
    r = (redisReply *)redisCommand(rc, "STRLEN %b", big_key, (size_t)BIG_KEY_LEN);
    if (r && r->type == REDIS_REPLY_INTEGER) n = (int)r->integer;
    if (r) freeReplyObject(r);
    redisFree(rc);
    return n;
}

static void big_opts(redlock_lock_opts *o)
{
    memset(o, 0, sizeof *o);
    o->key = big_key;
    o->key_len = (size_t)BIG_KEY_LEN;
    o->ttl_ms = 30000;
    o->retry_count = -1; /* one attempt: it must not need a second command to push the first out */
}

static void big_hiredis(void)
{
    static redlock_hiredis c;
    static redlock_hiredis_lock lk;
    redlock_hiredis_config cfg;
    redlock_lock_opts o;
    redlock_hiredis_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.command_timeout_ms = 5000;
    cfg.core.node_timeout_ms = BIG_ROUND_MS;
    cfg.info_off = 1; /* INFO and CONFIG would take the queue's 2 slots */
    CHECK_EQ(redlock_hiredis_init(&c, &cfg), REDLOCK_OK);
    big_opts(&o);
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &o), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    CHECK_EQ(node_value_len(), REDLOCK_TOKEN_LEN);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    CHECK_EQ(node_value_len(), 0);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
}

static void big_socket(void)
{
    static redlock_socket s;
    static redlock_socket_lock lk;
    redlock_socket_config cfg;
    redlock_lock_opts o;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.command_timeout_ms = 5000;
    cfg.core.node_timeout_ms = BIG_ROUND_MS;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    big_opts(&o);
    CHECK_EQ(redlock_socket_lock_init(&s, &lk, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&lk), REDLOCK_OK);
    CHECK_EQ(node_value_len(), REDLOCK_TOKEN_LEN);
    CHECK_EQ(redlock_socket_release(&lk), REDLOCK_OK);
    CHECK_EQ(node_value_len(), 0);
    redlock_socket_lock_deinit(&lk);
    redlock_socket_deinit(&s);
}

/* With the node stopped (SIGSTOP), three 6 MiB acquires issued at once:
   the third does not fit the 16 MiB of unsent output this program allows,
   its send is refused with QUEUE_FULL and it ends OVERLOADED (not
   NO_QUORUM), the connection stays up, and the two queued ones succeed
   once the node runs again. */
static int qf_status[3], qf_done[3];
static void qf_result(redlock_lock *lk, const redlock_result *r)
{
    int i = (int)(intptr_t)r->user;
    (void)lk;
    if (r->op != REDLOCK_OP_ACQUIRE) return;
    qf_status[i] = r->status;
    qf_done[i] = 1;
}

static void big_socket_queue_full(void)
{
    static redlock_socket s;
    static redlock_socket_lock lk[3];
    static char *keys[3];
    redlock_socket_config cfg;
    long long until;
    int i;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.command_timeout_ms = 10000;
    cfg.core.node_timeout_ms = 8000;
    cfg.core.retry_count = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    redis_node_pause(rn, 0);
    for (i = 0; i < 3; i++) {
        redlock_lock_opts o;
        keys[i] = (char *)malloc((size_t)BIG_KEY_LEN);
        if (!keys[i]) { CHECK(0); return; }
        memcpy(keys[i], big_key, (size_t)BIG_KEY_LEN);
        keys[i][4] = (char)('0' + i);
        big_opts(&o);
        o.key = keys[i];
        o.on_result = qf_result;
        o.user = (void *)(intptr_t)i;
        CHECK_EQ(redlock_socket_lock_init(&s, &lk[i], &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&lk[i].lock), REDLOCK_OK);
    }
    CHECK_EQ(qf_done[2], 1); /* refused at once */
    CHECK_EQ(qf_status[2], REDLOCK_ERR_OVERLOADED);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    CHECK_EQ(redlock_socket_node_connected(&s, 0), 1);
    redis_node_resume(rn, 0);
    until = redis_nodes__now_ms() + 10000;
    while (!(qf_done[0] && qf_done[1]) && redis_nodes__now_ms() < until) redlock_socket_run(&s, 20);
    for (i = 0; i < 2; i++) {
        CHECK_EQ(qf_done[i], 1);
        CHECK_EQ(qf_status[i], REDLOCK_OK);
        CHECK_EQ(redlock_socket_release(&lk[i]), REDLOCK_OK);
    }
    for (i = 0; i < 3; i++) {
        redlock_socket_lock_deinit(&lk[i]);
        free(keys[i]);
    }
    redlock_socket_deinit(&s);
}

/* Options for lock i of three on short keys (a hiredis adapter's queue of
   2 per node: two acquires fill it, the third is refused). */
static void qf_small_key(redlock_lock_opts *o, int i)
{
    static char keys[3][16];
    memset(o, 0, sizeof *o);
    snprintf(keys[i], sizeof keys[i], "qf:%d", i);
    o->key = keys[i];
    o->ttl_ms = 30000;
    o->retry_count = -1;
    o->on_result = qf_result;
    o->user = (void *)(intptr_t)i;
}

/* After three acquires on a queue of 2: the third was refused at once
   (OVERLOADED), the connection is up, the first two succeed and release. */
static void qf_check(redlock_lock *const lk[3], void (*run)(void *, int), void *ctx, int connected)
{
    long long until = redis_nodes__now_ms() + 5000;
    int i;
    CHECK_EQ(qf_done[2], 1);
    CHECK_EQ(qf_status[2], REDLOCK_ERR_OVERLOADED);
    CHECK(connected);
    while (!(qf_done[0] && qf_done[1]) && redis_nodes__now_ms() < until) run(ctx, 20);
    for (i = 0; i < 2; i++) {
        CHECK_EQ(qf_done[i], 1);
        CHECK_EQ(qf_status[i], REDLOCK_OK);
        CHECK_EQ(redlock_release(lk[i]), REDLOCK_OK);
    }
    until = redis_nodes__now_ms() + 5000;
    while (redlock_lock_pending(lk[0]) + redlock_lock_pending(lk[1]) > 0 && redis_nodes__now_ms() < until)
        run(ctx, 20);
    CHECK_EQ(redlock_lock_pending(lk[0]) + redlock_lock_pending(lk[1]), 0);
}

static void qf_run_hiredis(void *ctx, int ms) { (void)redlock_hiredis_run((redlock_hiredis *)ctx, ms); }

static void hiredis_queue_full(void)
{
    static redlock_hiredis c;
    static redlock_hiredis_lock lk[3];
    redlock_lock *core[3];
    redlock_hiredis_config cfg;
    int i;
    memset(qf_done, 0, sizeof qf_done);
    redlock_hiredis_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.core.node_timeout_ms = 2000;
    CHECK_EQ(redlock_hiredis_init(&c, &cfg), REDLOCK_OK);
    redlock_hiredis_run(&c, 100); /* connected */
    for (i = 0; i < 3; i++) {
        redlock_lock_opts o;
        qf_small_key(&o, i);
        CHECK_EQ(redlock_hiredis_lock_init(&c, &lk[i], &o), REDLOCK_OK);
        core[i] = &lk[i].lock;
        CHECK_EQ(redlock_acquire(core[i]), REDLOCK_OK); /* the core's non-blocking call */
    }
    qf_check(core, qf_run_hiredis, &c, redlock_hiredis_node_connected(&c, 0));
    for (i = 0; i < 3; i++) redlock_hiredis_lock_deinit(&lk[i]);
    redlock_hiredis_deinit(&c);
}

static void qf_run_libev(void *ctx, int ms)
{
    struct ev_loop *loop = (struct ev_loop *)ctx;
    long long until = redis_nodes__now_ms() + ms;
    while (redis_nodes__now_ms() < until) ev_run(loop, EVRUN_NOWAIT);
}

static void libev_queue_full(void)
{
    static redlock_libev c;
    static redlock_lock lk[3];
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config cfg;
    int i;
    memset(qf_done, 0, sizeof qf_done);
    redlock_libev_config_init(&cfg);
    cfg.info_off = 1; /* its answer is over this program's bound and would take one of the queue's 2 slots */
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.core.node_timeout_ms = 2000;
    CHECK_EQ(redlock_libev_init(&c, loop, &cfg), REDLOCK_OK);
    for (i = 0; i < 50 && !redlock_libev_node_connected(&c, 0); i++) qf_run_libev(loop, 10);
    for (i = 0; i < 3; i++) {
        redlock_lock_opts o;
        qf_small_key(&o, i);
        CHECK_EQ(redlock_lock_init(&lk[i], redlock_libev_client(&c), &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&lk[i]), REDLOCK_OK);
    }
    {
        redlock_lock *core[3];
        for (i = 0; i < 3; i++) core[i] = &lk[i];
        qf_check(core, qf_run_libev, loop, redlock_libev_node_connected(&c, 0));
    }
    for (i = 0; i < 3; i++) redlock_lock_deinit(&lk[i]);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
}

typedef struct big_wait {
    int op, status, done;
} big_wait;

static void big_on_result(redlock_lock *lk, const redlock_result *r)
{
    big_wait *w = (big_wait *)r->user;
    (void)lk;
    if ((int)r->op != w->op) return;
    w->status = r->status;
    w->done = 1;
}

static void big_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)t;
    (void)revents;
}

/* Runs the loop until the operation w waits for ended (at most 10 s; a
   10 ms tick bounds each ev_run). */
static void big_run(struct ev_loop *loop, const big_wait *w)
{
    long long until = redis_nodes__now_ms() + 10000;
    ev_timer tick;
    ev_timer_init(&tick, big_tick, 0.01, 0.01);
    ev_timer_start(loop, &tick);
    while (!w->done && redis_nodes__now_ms() < until) ev_run(loop, EVRUN_ONCE);
    ev_timer_stop(loop, &tick);
}

static void big_libev(void)
{
    static redlock_libev c;
    static redlock_lock lk;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config cfg;
    redlock_lock_opts o;
    big_wait w;
    memset(&w, 0, sizeof w);
    redlock_libev_config_init(&cfg);
    cfg.info_off = 1; /* its answer is over this program's bound and would take one of the queue's 2 slots */
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    cfg.command_timeout_ms = 5000;
    cfg.core.node_timeout_ms = BIG_ROUND_MS;
    CHECK_EQ(redlock_libev_init(&c, loop, &cfg), REDLOCK_OK);
    big_opts(&o);
    o.on_result = big_on_result;
    o.user = &w;
    CHECK_EQ(redlock_lock_init(&lk, redlock_libev_client(&c), &o), REDLOCK_OK);
    w.op = REDLOCK_OP_ACQUIRE;
    CHECK_EQ(redlock_acquire(&lk), REDLOCK_OK);
    big_run(loop, &w);
    CHECK_EQ(w.done, 1);
    CHECK_EQ(w.status, REDLOCK_OK);
    CHECK_EQ(node_value_len(), REDLOCK_TOKEN_LEN);
    memset(&w, 0, sizeof w);
    w.op = REDLOCK_OP_RELEASE;
    CHECK_EQ(redlock_release(&lk), REDLOCK_OK);
    big_run(loop, &w);
    CHECK_EQ(w.done, 1);
    CHECK_EQ(w.status, REDLOCK_OK);
    CHECK_EQ(node_value_len(), 0);
    redlock_lock_deinit(&lk);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
}

/* The libev adapter's bound on unparsed reply bytes counts only what is
   not parsed yet: hiredis keeps up to 1 KiB of parsed replies in front of
   them. 300 cycles of 9 reply bytes each pass that point many times over,
   on one connection that is never dropped. */
static void libev_buffer_bound(void)
{
    static redlock_libev c;
    static redlock_lock lk;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config cfg;
    redlock_lock_opts o;
    big_wait w;
    int i, ok = 0;
    redlock_libev_config_init(&cfg);
    cfg.info_off = 1; /* its answer is over this program's bound and would take one of the queue's 2 slots */
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(rn, 0);
    CHECK_EQ(redlock_libev_init(&c, loop, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "limits:buffered";
    o.ttl_ms = 10000;
    o.retry_count = -1;
    o.on_result = big_on_result;
    o.user = &w;
    CHECK_EQ(redlock_lock_init(&lk, redlock_libev_client(&c), &o), REDLOCK_OK);
    for (i = 0; i < 300; i++) {
        memset(&w, 0, sizeof w);
        w.op = REDLOCK_OP_ACQUIRE;
        if (redlock_acquire(&lk) != REDLOCK_OK) break;
        big_run(loop, &w);
        if (!w.done || w.status != REDLOCK_OK) break;
        memset(&w, 0, sizeof w);
        w.op = REDLOCK_OP_RELEASE;
        if (redlock_release(&lk) != REDLOCK_OK) break;
        big_run(loop, &w);
        if (!w.done || w.status != REDLOCK_OK) break;
        ok++;
    }
    if (ok != 300) printf("#   cycle %d: status %d\n", ok, w.status);
    CHECK_EQ(ok, 300);
    CHECK_EQ(redlock_libev_node_status(&c, 0, NULL, 0), 0);
    redlock_lock_deinit(&lk);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
}

int main(void)
{
    redis_nodes nodes;
    rn = &nodes;
    redis_nodes_deadline(120);
    big_key = (char *)malloc((size_t)BIG_KEY_LEN);
    if (!big_key || redis_nodes_start(rn, 1, NULL, NULL) != 0) {
        printf("not ok big command: cannot start\n");
        return 1;
    }
    memset(big_key, 'k', (size_t)BIG_KEY_LEN);
    memcpy(big_key, "big:", 4);
    RUN(big_hiredis);
    RUN(big_socket);
    RUN(big_socket_queue_full);
    RUN(hiredis_queue_full);
    RUN(libev_queue_full);
    RUN(big_libev);
    RUN(libev_buffer_bound);
    redis_nodes_stop(rn);
    free(big_key);
    return CHECK_EXIT();
}
