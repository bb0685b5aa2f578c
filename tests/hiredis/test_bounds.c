/* The hiredis adapters' bounds against nodes that push them, and the
   subscribers of every adapter against nodes that freeze or refuse:
   - a long output written over many partial writes while the node already
     answers its first commands: the blocking adapter's request ring stays
     sound (built with AddressSanitizer, which sees any write outside it);
   - an endless array reply ("*100000000" then ":1" after ":1") on a
     command connection or on a subscriber costs bounded memory, in both
     hiredis adapters: the growth of the peak RSS of a child process that
     meets it;
   - a subscriber whose node is frozen (SIGSTOP) is closed within the
     command timeout instead of collecting commands for as long as locks
     wait (hiredis, libev);
   - a node that refuses SUBSCRIBE (an ACL without channels) is asked again
     only after a backoff, and notify_status says so (all three adapters:
     the number of SUBSCRIBE calls the node counted).
   Its own program: the socket adapter is built in beside the hiredis ones. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include "adapters/redlock_socket.h"
#include "redis_nodes.h"
#include "hostile_server.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

/* ---- what the cases share: results counted by callbacks, a loop guard ---- */

typedef struct bt_wait {
    int op, status, done;
} bt_wait;

static void bt_on_result(redlock_lock *lk, const redlock_result *r)
{
    bt_wait *w = (bt_wait *)r->user;
    (void)lk;
    if ((int)r->op != w->op) return;
    w->status = r->status;
    w->done = 1;
}

static void bt_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)t;
    (void)revents;
}

/* Runs a libev loop until *done or ms passed (a 10 ms tick bounds each turn). */
static void bt_ev_run(struct ev_loop *loop, const int *done, long ms)
{
    long long until = redis_nodes__now_ms() + ms;
    ev_timer tick;
    ev_timer_init(&tick, bt_tick, 0.01, 0.01);
    ev_timer_start(loop, &tick);
    while (!(done && *done) && redis_nodes__now_ms() < until) ev_run(loop, EVRUN_ONCE);
    ev_timer_stop(loop, &tick);
}

/* A blocking acquire on a libev client: the core's call, then the loop
   until its result. */
static int bt_ev_acquire(struct ev_loop *loop, redlock_lock *lk, bt_wait *w, long max_ms)
{
    int rc;
    memset(w, 0, sizeof *w);
    w->op = REDLOCK_OP_ACQUIRE;
    if ((rc = redlock_acquire(lk)) != REDLOCK_OK) return rc;
    bt_ev_run(loop, &w->done, max_ms);
    return w->done ? w->status : 12345;
}

static void bt_config(redlock_hiredis_config *o, int n, const int *ports)
{
    int i;
    redlock_hiredis_config_init(o);
    o->node_count = n;
    for (i = 0; i < n; i++) o->node[i].port = ports[i];
}

/* ---- the request ring over many partial writes ---- */

#define RING_WARM 1500
#define RING_BURST 2000
#define RING_KEY 490

static redlock_hiredis_lock ring_lk[RING_BURST];
static bt_wait ring_w[RING_BURST];
static char ring_keys[RING_BURST][RING_KEY + 1];

/* Starts op on locks 0..n-1 at once (the core's calls: nothing is written
   before the loop runs), runs the loop until every one ended (20 s at
   most) and returns how many ended OK. */
static int ring_all(redlock_hiredis *c, int n, int op)
{
    long long until = redis_nodes__now_ms() + 20000;
    int i, done, ok = 0;
    for (i = 0; i < n; i++) {
        memset(&ring_w[i], 0, sizeof ring_w[i]);
        ring_w[i].op = op;
        if ((op == REDLOCK_OP_ACQUIRE ? redlock_acquire(&ring_lk[i].lock) : redlock_release(&ring_lk[i].lock)) != 0)
            ring_w[i].done = 1, ring_w[i].status = -1;
    }
    do {
        redlock_hiredis_run(c, 10);
        for (i = 0, done = 0; i < n; i++) done += ring_w[i].done;
    } while (done < n && redis_nodes__now_ms() < until);
    for (i = 0; i < n; i++) ok += ring_w[i].done && ring_w[i].status == REDLOCK_OK;
    return ok;
}

static void ring_locks(redlock_hiredis *c, int n, int key_len, const char *tag)
{
    int i;
    for (i = 0; i < n; i++) {
        redlock_lock_opts o;
        int l = snprintf(ring_keys[i], sizeof ring_keys[i], "%s:%05d:", tag, i);
        if (l < key_len) memset(ring_keys[i] + l, 'k', (size_t)(key_len - l));
        ring_keys[i][l < key_len ? key_len : l] = 0;
        memset(&o, 0, sizeof o);
        o.key = ring_keys[i];
        o.ttl_ms = 60000;
        o.retry_count = -1;
        o.on_result = bt_on_result;
        o.user = &ring_w[i];
        CHECK_EQ(redlock_hiredis_lock_init(c, &ring_lk[i], &o), REDLOCK_OK);
    }
}

/* Proves: the blocking adapter's request ring stays sound when a long
   output goes out over many partial writes while the node answers (and
   the adapter takes off the ring) the commands of its first part. First
   1,500 short acquires and their releases leave the ring (2,048 entries)
   with its head in the middle; then, with the socket's send buffer cut to
   4 KiB, 2,000 acquires of ~490-byte keys (1 MiB of commands): the ring
   wraps while the output is still being written. Every acquire is won,
   and under ASan any write outside the ring ends the program. */
static void hiredis_ring_partial_writes(redis_nodes *rn)
{
    static redlock_hiredis c;
    redlock_hiredis_config o;
    int port = redis_nodes_port(rn, 0), i, small = 4096;
    bt_config(&o, 1, &port);
    o.command_timeout_ms = 20000;
    o.notify_off = 1;
    o.core.node_timeout_ms = 20000;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    redlock_hiredis_run(&c, 50);
    ring_locks(&c, RING_WARM, 12, "ring:w");
    CHECK_EQ(ring_all(&c, RING_WARM, REDLOCK_OP_ACQUIRE), RING_WARM);
    CHECK_EQ(ring_all(&c, RING_WARM, REDLOCK_OP_RELEASE), RING_WARM);
    for (i = 0; i < RING_WARM; i++) redlock_hiredis_lock_deinit(&ring_lk[i]);
    CHECK(c._conn[0].fd >= 0);
    CHECK_EQ(setsockopt(c._conn[0].fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    ring_locks(&c, RING_BURST, RING_KEY, "ring:b");
    CHECK_EQ(ring_all(&c, RING_BURST, REDLOCK_OP_ACQUIRE), RING_BURST);
    CHECK_EQ(ring_all(&c, RING_BURST, REDLOCK_OP_RELEASE), RING_BURST);
    CHECK_EQ(redlock_hiredis_node_status(&c, 0, NULL, 0), 0);
    for (i = 0; i < RING_BURST; i++) redlock_hiredis_lock_deinit(&ring_lk[i]);
    redlock_hiredis_deinit(&c);
}

/* ---- memory: an endless array reply ---- */

/* What a case run in a child process reports back. */
typedef struct mem_report {
    long growth_kb;   /* peak RSS growth while the case ran */
    int status;       /* the node's status after it */
    char text[64];    /* and its text */
} mem_report;

static long mem_maxrss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* Runs fn(port, report) in a child process (its own peak RSS, nothing the
   parent allocated before), bounded by 30 s; 0 with *out filled. */
static int mem_in_child(void (*fn)(int, mem_report *), int port, mem_report *out)
{
    int p[2], st = 0;
    pid_t pid;
    ssize_t n;
    memset(out, 0, sizeof *out);
    if (pipe(p) != 0) return -1;
    fflush(stdout);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        mem_report r;
        long before;
        close(p[0]);
        alarm(30);
        memset(&r, 0, sizeof r);
        before = mem_maxrss_kb();
        fn(port, &r);
        r.growth_kb = mem_maxrss_kb() - before;
        n = write(p[1], &r, sizeof r);
        _exit(n == (ssize_t)sizeof r ? 0 : 1); /* not exit(): the parent's nodes are the parent's */
    }
    close(p[1]);
    n = read(p[0], out, sizeof *out);
    close(p[0]);
    waitpid(pid, &st, 0);
    return n == (ssize_t)sizeof *out && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

#define MEM_BOUND_KB (64L * 1024) /* the 16 MiB flood cost 288 MiB without a bound */

/* A lock that waits: the node says "held" (nil) to every SET, so the
   acquire retries (and listens) until wait_ms. */
static void mem_lock_opts(redlock_lock_opts *o, bt_wait *w, int waits)
{
    memset(o, 0, sizeof *o);
    o->key = "bounds:items";
    o->ttl_ms = 5000;
    o->on_result = bt_on_result;
    o->user = w;
    if (waits) {
        o->retry_count = 1000;
        o->retry_delay_ms = 100;
        o->retry_jitter_ms = 1;
        o->wait_ms = 1500;
    } else {
        o->retry_count = -1;
    }
}

/* The command connection: the acquire's reply never ends. */
static void mem_hiredis_command(int port, mem_report *r)
{
    static redlock_hiredis c;
    static redlock_hiredis_lock lk;
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    bt_wait w;
    long long until;
    bt_config(&o, 1, &port);
    o.command_timeout_ms = 5000;
    o.notify_off = 1;
    o.core.node_timeout_ms = 5000;
    if (redlock_hiredis_init(&c, &o) != REDLOCK_OK) return;
    mem_lock_opts(&lo, &w, 0);
    lo.on_result = NULL;
    redlock_hiredis_lock_init(&c, &lk, &lo);
    (void)redlock_hiredis_acquire(&lk);
    until = redis_nodes__now_ms() + 6000;
    while (!redlock_hiredis_node_status(&c, 0, NULL, 0) && redis_nodes__now_ms() < until) redlock_hiredis_run(&c, 20);
    r->status = redlock_hiredis_node_status(&c, 0, r->text, sizeof r->text);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
}

/* A subscriber: the node holds the key, and answers SUBSCRIBE with an
   array that never ends. */
static void mem_hiredis_subscriber(int port, mem_report *r)
{
    static redlock_hiredis c;
    static redlock_hiredis_lock lk;
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    bt_wait w;
    bt_config(&o, 1, &port);
    o.command_timeout_ms = 5000;
    if (redlock_hiredis_init(&c, &o) != REDLOCK_OK) return;
    mem_lock_opts(&lo, &w, 1);
    lo.on_result = NULL;
    redlock_hiredis_lock_init(&c, &lk, &lo);
    r->status = redlock_hiredis_acquire(&lk);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
}

static void mem_libev(int port, mem_report *r, int sub)
{
    static redlock_libev c;
    static redlock_lock lk;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config o;
    redlock_lock_opts lo;
    bt_wait w;
    bt_config(&o, 1, &port);
    o.command_timeout_ms = 5000;
    o.notify_off = !sub;
    o.core.node_timeout_ms = sub ? 0 : 5000;
    if (!loop || redlock_libev_init(&c, loop, &o) != REDLOCK_OK) return;
    mem_lock_opts(&lo, &w, sub);
    redlock_lock_init(&lk, redlock_libev_client(&c), &lo);
    r->status = bt_ev_acquire(loop, &lk, &w, 8000);
    if (!sub) {
        long long until = redis_nodes__now_ms() + 6000;
        while (!redlock_libev_node_status(&c, 0, NULL, 0) && redis_nodes__now_ms() < until) bt_ev_run(loop, NULL, 20);
        r->status = redlock_libev_node_status(&c, 0, r->text, sizeof r->text);
    }
    redlock_lock_deinit(&lk);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
}

static void mem_libev_command(int port, mem_report *r) { mem_libev(port, r, 0); }
static void mem_libev_subscriber(int port, mem_report *r) { mem_libev(port, r, 1); }

/* One case: a hostile node in `mode`, fn against it in a child process;
   the peak RSS grew less than MEM_BOUND_KB. A command connection must
   have been dropped for the reply (PROTOCOL, "reply too large"). */
static void mem_case(const char *name, int mode, const char *reply, void (*fn)(int, mem_report *), int command)
{
    hostile h;
    mem_report r;
    CHECK_EQ(hostile_start(&h, mode, reply), 0);
    CHECK_EQ(mem_in_child(fn, h.port, &r), 0);
    hostile_stop(&h);
    printf("#   %s: peak RSS +%ld KiB, status %d (%s)\n", name, r.growth_kb, r.status, r.text);
    CHECK(r.growth_kb < MEM_BOUND_KB);
    if (command) {
        CHECK_EQ(r.status, REDLOCK_ERR_PROTOCOL);
        CHECK_STR(r.text, "reply too large");
    }
}

/* Proves: an endless array reply costs each hiredis adapter bounded
   memory, on a command connection (dropped with PROTOCOL "reply too
   large") and on a subscriber (closed, reopened later). */
static void hiredis_endless_array(void)
{
    mem_case("hiredis command", HOSTILE_ITEMS, "*100000000\r\n", mem_hiredis_command, 1);
    mem_case("hiredis subscriber", HOSTILE_SUB_ITEMS, "$-1\r\n", mem_hiredis_subscriber, 0);
}

static void libev_endless_array(void)
{
    mem_case("libev command", HOSTILE_ITEMS, "*100000000\r\n", mem_libev_command, 1);
    mem_case("libev subscriber", HOSTILE_SUB_ITEMS, "$-1\r\n", mem_libev_subscriber, 0);
}

/* ---- a frozen node's subscriber ---- */

/* What the waiter's events saw of its subscriber to the frozen node. */
typedef struct frozen_watch {
    const redlock__hiredis_subs *subs;
    int node;
    long long open_since; /* when it was seen open after being seen closed, 0: closed */
    long long longest;    /* the longest stretch it was seen open (ms) */
    int closes;           /* times it was seen closed after being open */
} frozen_watch;

static void frozen_event(void *user, const redlock_event *ev)
{
    frozen_watch *f = (frozen_watch *)user;
    long long now = redis_nodes__now_ms();
    (void)ev;
    if (!f->subs) return;
    if (f->subs->sub[f->node].ctx) {
        if (!f->open_since) f->open_since = now;
        if (now - f->open_since > f->longest) f->longest = now - f->open_since;
    } else {
        if (f->open_since) f->closes++;
        f->open_since = 0;
    }
}

#define FROZEN_CMD_MS 300

/* The waiter's configuration: three nodes, a short command timeout, the
   events to frozen_event. */
static void frozen_config(redlock_hiredis_config *o, redis_nodes *rn, frozen_watch *f)
{
    int ports[3] = { redis_nodes_port(rn, 0), redis_nodes_port(rn, 1), redis_nodes_port(rn, 2) };
    bt_config(o, 3, ports);
    o->command_timeout_ms = FROZEN_CMD_MS;
    o->on_event = frozen_event;
    o->user = f;
}

static void frozen_lock_opts(redlock_lock_opts *o, const char *key, bt_wait *w)
{
    memset(o, 0, sizeof *o);
    o->key = key;
    o->ttl_ms = 10000;
    o->retry_count = 1000;
    o->retry_delay_ms = 50;
    o->retry_jitter_ms = 1;
    o->wait_ms = 1500;
    o->on_result = bt_on_result;
    o->user = w;
}

/* A hiredis client on rn's three nodes holds key (taken before any node
   is frozen); the caller releases and deinitialises it. */
static void frozen_holder(redis_nodes *rn, redlock_hiredis *c, redlock_hiredis_lock *lk, const char *key)
{
    int ports[3] = { redis_nodes_port(rn, 0), redis_nodes_port(rn, 1), redis_nodes_port(rn, 2) };
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    bt_config(&o, 3, ports);
    o.notify_off = 1;
    CHECK_EQ(redlock_hiredis_init(c, &o), REDLOCK_OK);
    memset(&lo, 0, sizeof lo);
    lo.key = key;
    lo.ttl_ms = 10000;
    CHECK_EQ(redlock_hiredis_lock_init(c, lk, &lo), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_acquire(lk), REDLOCK_OK);
}

static void frozen_holder_done(redlock_hiredis *c, redlock_hiredis_lock *lk)
{
    CHECK_EQ(redlock_hiredis_release(lk), REDLOCK_OK);
    redlock_hiredis_lock_deinit(lk);
    redlock_hiredis_deinit(c);
}

/* The watch after a wait: the subscriber to the frozen node was closed,
   and never seen open much longer than the command timeout. */
static void frozen_check(const frozen_watch *f)
{
    if (f->closes < 1 || f->longest >= FROZEN_CMD_MS + 400)
        printf("#   frozen node's subscriber: closed %d times, open for up to %lld ms\n", f->closes, f->longest);
    CHECK(f->closes >= 1);
    CHECK(f->longest < FROZEN_CMD_MS + 400); /* the events come every ~50 ms */
}

/* Proves: with node 2 frozen (SIGSTOP) while a lock waits, the waiter's
   subscriber to it is closed once its SUBSCRIBE has been owed for the
   command timeout (and reopened after the reconnect delay), not kept open
   collecting commands for as long as the wait lasts. */
static void hiredis_frozen_subscriber(redis_nodes *rn)
{
    static redlock_hiredis holder, c;
    static redlock_hiredis_lock hlk, lk;
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    frozen_watch f;
    bt_wait w;
    memset(&f, 0, sizeof f);
    frozen_holder(rn, &holder, &hlk, "bounds:frozen:h");
    redis_node_pause(rn, 2);
    frozen_config(&o, rn, &f);
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    f.subs = &c._subs;
    f.node = 2;
    frozen_lock_opts(&lo, "bounds:frozen:h", &w);
    lo.on_result = NULL;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_TIMEOUT);
    frozen_check(&f);
    f.subs = NULL;
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_node_resume(rn, 2);
    frozen_holder_done(&holder, &hlk);
}

static void libev_frozen_subscriber(redis_nodes *rn)
{
    static redlock_hiredis holder;
    static redlock_hiredis_lock hlk;
    static redlock_libev c;
    static redlock_lock lk;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config o;
    redlock_lock_opts lo;
    frozen_watch f;
    bt_wait w;
    memset(&f, 0, sizeof f);
    frozen_holder(rn, &holder, &hlk, "bounds:frozen:e");
    redis_node_pause(rn, 2);
    frozen_config(&o, rn, &f);
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_OK);
    f.subs = &c._subs;
    f.node = 2;
    frozen_lock_opts(&lo, "bounds:frozen:e", &w);
    CHECK_EQ(redlock_lock_init(&lk, redlock_libev_client(&c), &lo), REDLOCK_OK);
    CHECK_EQ(bt_ev_acquire(loop, &lk, &w, 5000), REDLOCK_ERR_TIMEOUT);
    frozen_check(&f);
    f.subs = NULL;
    redlock_lock_deinit(&lk);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
    redis_node_resume(rn, 2);
    frozen_holder_done(&holder, &hlk);
}

/* ---- a node that refuses SUBSCRIBE ---- */

#define REFUSED_ACL "user u on >pw ~* +@all resetchannels\n" /* every key, every command, no channel */
#define REFUSED_WAIT_MS 2200

/* SUBSCRIBE calls node 0 of rn counted since its stats were reset, refused
   ones too (INFO commandstats); -1 if it cannot tell. */
static long refused_subscribes(redis_nodes *rn)
{
    redisContext *rc = redisConnect("127.0.0.1", redis_nodes_port(rn, 0));
    redisReply *r;
    long n = -1;
    if (!rc || rc->err) {
        if (rc) redisFree(rc);
        return -1;
    }
    r = (redisReply *)redisCommand(rc, "INFO commandstats");
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "cmdstat_subscribe:");
        n = 0;
        if (p) {
            const char *q;
            if ((q = strstr(p, "calls=")) != NULL) n += atol(q + 6);
            if ((q = strstr(p, "rejected_calls=")) != NULL) n += atol(q + 15);
            if ((q = strstr(p, "failed_calls=")) != NULL) n += atol(q + 13);
        }
    }
    if (r) freeReplyObject(r);
    redisFree(rc);
    return n;
}

static void refused_reset(redis_nodes *rn)
{
    char out[64];
    CHECK_EQ(redis_nodes_cmd(rn, 0, out, sizeof out, "CONFIG", "RESETSTAT", (char *)NULL), 0);
    CHECK_EQ(refused_subscribes(rn), 0);
}

/* After a wait of REFUSED_WAIT_MS: the node was asked at the start, maybe
   once more after the first backoff (1 s), not every reconnect delay. */
static void refused_check(redis_nodes *rn, const char *name)
{
    long n = refused_subscribes(rn);
    printf("#   %s: %ld SUBSCRIBE calls in %d ms\n", name, n, REFUSED_WAIT_MS);
    CHECK(n >= 1);
    CHECK(n <= 3);
}

static void refused_lock_opts(redlock_lock_opts *o, const char *key, bt_wait *w)
{
    memset(o, 0, sizeof *o);
    o->key = key;
    o->ttl_ms = 10000;
    o->retry_count = 1000;
    o->retry_delay_ms = 100;
    o->retry_jitter_ms = 1;
    o->wait_ms = REFUSED_WAIT_MS;
    o->on_result = bt_on_result;
    o->user = w;
}

/* A holder of key on rn's node 0 as user u (no notifications). */
static void refused_holder(redis_nodes *rn, redlock_hiredis *c, redlock_hiredis_lock *lk, const char *key)
{
    int port = redis_nodes_port(rn, 0);
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    bt_config(&o, 1, &port);
    o.username = "u";
    o.password = "pw";
    o.notify_off = 1;
    CHECK_EQ(redlock_hiredis_init(c, &o), REDLOCK_OK);
    memset(&lo, 0, sizeof lo);
    lo.key = key;
    lo.ttl_ms = 10000;
    CHECK_EQ(redlock_hiredis_lock_init(c, lk, &lo), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_acquire(lk), REDLOCK_OK);
}

/* Proves: a node whose ACL refuses the waiter's SUBSCRIBE is asked again
   only after a backoff (at most 3 calls in 2.2 s, where a reopen every
   100 ms made ~20), the waiter still waits out its retries, and
   notify_status tells the node's refusal. */
static void hiredis_subscribe_refused(redis_nodes *rn)
{
    static redlock_hiredis holder, c;
    static redlock_hiredis_lock hlk, lk;
    redlock_hiredis_config o;
    redlock_lock_opts lo;
    int port = redis_nodes_port(rn, 0);
    char text[128];
    bt_wait w;
    refused_holder(rn, &holder, &hlk, "bounds:refused:h");
    refused_reset(rn);
    bt_config(&o, 1, &port);
    o.username = "u";
    o.password = "pw";
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    refused_lock_opts(&lo, "bounds:refused:h", &w);
    lo.on_result = NULL;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_notify_status(&c, 0, NULL, 0), 0);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_TIMEOUT);
    refused_check(rn, "hiredis");
    CHECK_EQ(redlock_hiredis_notify_status(&c, 0, text, sizeof text), REDLOCK_ERR_SERVER);
    CHECK(strncmp(text, "NOPERM", 6) == 0);
    CHECK_EQ(redlock_hiredis_notify_status(&c, 1, NULL, 0), REDLOCK_ERR_INVALID);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    CHECK_EQ(redlock_hiredis_release(&hlk), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&hlk);
    redlock_hiredis_deinit(&holder);
}

static void libev_subscribe_refused(redis_nodes *rn)
{
    static redlock_hiredis holder;
    static redlock_hiredis_lock hlk;
    static redlock_libev c;
    static redlock_lock lk;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config o;
    redlock_lock_opts lo;
    int port = redis_nodes_port(rn, 0);
    char text[128];
    bt_wait w;
    refused_holder(rn, &holder, &hlk, "bounds:refused:e");
    refused_reset(rn);
    bt_config(&o, 1, &port);
    o.username = "u";
    o.password = "pw";
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_OK);
    refused_lock_opts(&lo, "bounds:refused:e", &w);
    CHECK_EQ(redlock_lock_init(&lk, redlock_libev_client(&c), &lo), REDLOCK_OK);
    CHECK_EQ(bt_ev_acquire(loop, &lk, &w, REFUSED_WAIT_MS + 2000), REDLOCK_ERR_TIMEOUT);
    refused_check(rn, "libev");
    CHECK_EQ(redlock_libev_notify_status(&c, 0, text, sizeof text), REDLOCK_ERR_SERVER);
    CHECK(strncmp(text, "NOPERM", 6) == 0);
    redlock_lock_deinit(&lk);
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
    CHECK_EQ(redlock_hiredis_release(&hlk), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&hlk);
    redlock_hiredis_deinit(&holder);
}

static void socket_subscribe_refused(redis_nodes *rn)
{
    static redlock_hiredis holder;
    static redlock_hiredis_lock hlk;
    static redlock_socket s;
    static redlock_socket_lock lk;
    redlock_socket_config o;
    redlock_lock_opts lo;
    char text[128];
    bt_wait w;
    refused_holder(rn, &holder, &hlk, "bounds:refused:s");
    refused_reset(rn);
    redlock_socket_config_init(&o);
    o.node_count = 1;
    o.node[0].port = redis_nodes_port(rn, 0);
    o.username = "u";
    o.password = "pw";
    CHECK_EQ(redlock_socket_init(&s, &o), REDLOCK_OK);
    refused_lock_opts(&lo, "bounds:refused:s", &w);
    lo.on_result = NULL;
    CHECK_EQ(redlock_socket_lock_init(&s, &lk, &lo), REDLOCK_OK);
    CHECK_EQ(redlock_socket_notify_status(&s, 0, NULL, 0), 0);
    CHECK_EQ(redlock_socket_acquire(&lk), REDLOCK_ERR_TIMEOUT);
    refused_check(rn, "socket");
    CHECK_EQ(redlock_socket_notify_status(&s, 0, text, sizeof text), REDLOCK_ERR_SERVER);
    CHECK(strncmp(text, "NOPERM", 6) == 0);
    redlock_socket_lock_deinit(&lk);
    redlock_socket_deinit(&s);
    CHECK_EQ(redlock_hiredis_release(&hlk), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&hlk);
    redlock_hiredis_deinit(&holder);
}

static redis_nodes *bt_one, *bt_three, *bt_acl;
static void t_ring(void) { hiredis_ring_partial_writes(bt_one); }
static void t_hiredis_frozen(void) { hiredis_frozen_subscriber(bt_three); }
static void t_libev_frozen(void) { libev_frozen_subscriber(bt_three); }
static void t_hiredis_refused(void) { hiredis_subscribe_refused(bt_acl); }
static void t_libev_refused(void) { libev_subscribe_refused(bt_acl); }
static void t_socket_refused(void) { socket_subscribe_refused(bt_acl); }

/* RUN under the case's own name */
#define RUN_AS(name, fn) do { check__fails = 0; fn(); \
    if (check__fails) { check__failed_tests++; printf("not ok %s\n", name); } \
    else { printf("ok %s\n", name); } \
    fflush(stdout); } while (0)

int main(void)
{
    redis_nodes one, three, acl;
    redis_nodes_deadline(180);
    signal(SIGPIPE, SIG_IGN); /* libev: a write to a node that closed */
    /* the memory cases fork: first, while this process is small */
    RUN(hiredis_endless_array);
    RUN(libev_endless_array);
    if (redis_nodes_start(&one, 1, NULL, NULL) != 0 || redis_nodes_start(&three, 3, NULL, NULL) != 0 ||
        redis_nodes_start(&acl, 1, NULL, REFUSED_ACL) != 0) {
        printf("not ok bounds: cannot start the nodes\n");
        return 1;
    }
    bt_one = &one;
    bt_three = &three;
    bt_acl = &acl;
    RUN_AS("hiredis_ring_partial_writes", t_ring);
    RUN_AS("hiredis_frozen_subscriber", t_hiredis_frozen);
    RUN_AS("libev_frozen_subscriber", t_libev_frozen);
    RUN_AS("hiredis_subscribe_refused", t_hiredis_refused);
    RUN_AS("libev_subscribe_refused", t_libev_refused);
    RUN_AS("socket_subscribe_refused", t_socket_refused);
    redis_nodes_stop(&acl);
    redis_nodes_stop(&three);
    redis_nodes_stop(&one);
    return CHECK_EXIT();
}
