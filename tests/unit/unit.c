/* unit.c - the core driven by a scripted transport: every state transition,
   replies delivered later and inside send, AUTO switching, bad input. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include "check.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef REDLOCK__MAX_TTL_MS
/* Only the header before 38cd2dc defines this; it had no redlock_lock_pending.
   A stand-in that says "nothing pending" lets this file be built against that
   header (to see the defect tests fail there). */
static int redlock_lock_pending(const redlock_lock *lk) { (void)lk; return 0; }
#endif

/* ---- the scripted transport ---- */
#define MAXQ 256
typedef struct sent { int node; redlock_tag tag; char cmd[400]; } sent;
typedef struct results {
    int n;
    redlock_result r[32];
    int pending[32];        /* redlock_lock_pending() when the result was reported */
} results;

static struct {
    int64_t now, wall;
    int64_t timer;          /* last deadline given to set_timer */
    sent q[MAXQ];
    int qn, qhead;
    int fail_random, fail_send_node;
    /* synchronous mode: answer inside send with this function */
    int (*sync)(int node, const char *cmd, redlock_reply *out);
    redlock_client *client;
    results res;
    redlock_event ev[256];
    int evn;
    int deinit_on_result, release_on_acquired;
    int deinit_on_lost;                   /* on_result deinitialises on op LOST */
    int reacquire_on_fail, reacquire_rc;  /* on_result acquires again after a failed acquire */
    int reinit_on_acquire, reinit_rc;     /* on_result re-initialises the lock (reinit_opts) */
    redlock_lock_opts reinit_opts;
} T;

static int64_t t_now(void *u) { (void)u; return T.now; }
static int64_t t_wall(void *u) { (void)u; return T.wall; }
static void t_timer(void *u, int64_t d) { (void)u; T.timer = d; }
static int t_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    static unsigned x = 7;
    (void)u;
    if (T.fail_random) return -1;
    while (len--) { x = x * 1103515245u + 12345u; *p++ = (unsigned char)(x >> 16); }
    return 0;
}
static void t_event(void *u, const redlock_event *ev) {
    (void)u;
    if (T.evn < 256) T.ev[T.evn++] = *ev;
}
static int t_send(void *u, int node, const redlock_command *cmd, redlock_tag tag) {
    sent *s;
    size_t off = 0;
    int i;
    (void)u;
    if (node == T.fail_send_node) return REDLOCK_ERR_TRANSPORT;
    if (T.qn >= MAXQ) return REDLOCK_ERR_TRANSPORT;
    s = &T.q[T.qn++];
    s->node = node;
    s->tag = tag;
    for (i = 0; i < cmd->argc && off + cmd->argvlen[i] + 2 < sizeof s->cmd; i++) {
        if (i) s->cmd[off++] = ' ';
        memcpy(s->cmd + off, cmd->argv[i], cmd->argvlen[i]);
        off += cmd->argvlen[i];
    }
    s->cmd[off] = 0;
    if (T.sync) {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        if (T.sync(node, s->cmd, &r)) redlock_on_reply(T.client, tag, &r);
    }
    return 0;
}
static void t_result(redlock_lock *lk, const redlock_result *r) {
    if (T.res.n < 32) {
        T.res.pending[T.res.n] = redlock_lock_pending(lk);
        T.res.r[T.res.n++] = *r;
    }
    if (T.release_on_acquired && r->op == REDLOCK_OP_ACQUIRE && r->status == REDLOCK_OK) redlock_release(lk);
    if (T.reacquire_on_fail && r->op == REDLOCK_OP_ACQUIRE && r->status != REDLOCK_OK) {
        T.reacquire_on_fail = 0;
        T.reacquire_rc = redlock_acquire(lk);
    }
    if (T.reinit_on_acquire && r->op == REDLOCK_OP_ACQUIRE) {
        T.reinit_on_acquire = 0;
        T.reinit_rc = redlock_lock_init(lk, T.client, &T.reinit_opts);
    }
    if (T.deinit_on_result || (T.deinit_on_lost && r->op == REDLOCK_OP_LOST)) redlock_lock_deinit(lk);
}

static redlock_client C;
static redlock_lock L;

/* The tests' usual settings: 2 retries 100 ms apart, no jitter, defaults else. */
static void base_config(redlock_config *cfg, int nodes) {
    redlock_config_init(cfg);
    cfg->node_count = nodes;
    cfg->retry_count = 2;
    cfg->retry_delay_ms = 100;
    cfg->retry_jitter_ms = -1;
}
static void base_callbacks(redlock_callbacks *cb) {
    memset(cb, 0, sizeof *cb);
    cb->send = t_send;
    cb->set_timer = t_timer;
    cb->now_us = t_now;
    cb->wall_ms = t_wall;
    cb->random = t_random;
    cb->on_event = t_event;
}
static void base_opts(redlock_lock_opts *o, int64_t ttl, int watchdog) {
    memset(o, 0, sizeof *o);
    o->key = "res";
    o->ttl_ms = ttl;
    o->watchdog = watchdog;
    o->on_result = t_result;
}
/* Fresh transport state, client C with cfg, lock L with o. */
static void setup_with(const redlock_config *cfg, const redlock_lock_opts *o) {
    redlock_callbacks cb;
    memset(&T, 0, sizeof T);
    T.now = 1000000;
    T.wall = 1700000000000LL;
    T.fail_send_node = -1;
    T.client = &C;
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&C, cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&L, &C, o), REDLOCK_OK);
}
static void setup_n(int nodes, int watchdog, int64_t ttl) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    base_opts(&o, ttl, watchdog);
    setup_with(&cfg, &o);
}
static void teardown(void) {
    redlock_lock_deinit(&L);
    redlock_client_deinit(&C);
}

/* Replies to queued command k. */
static void rep(int k, redlock_reply_type type, long long integer, const char *str) {
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.integer = integer;
    r.str = str;
    r.len = str ? strlen(str) : 0;
    redlock_on_reply(&C, T.q[k].tag, &r);
}
static void ok(int k) { rep(k, REDLOCK_REPLY_STATUS, 0, "OK"); }
static void nil(int k) { rep(k, REDLOCK_REPLY_NIL, 0, NULL); }
static void num(int k, long long v) { rep(k, REDLOCK_REPLY_INTEGER, v, NULL); }
static int starts(int k, const char *p) { return k < T.qn && strncmp(T.q[k].cmd, p, strlen(p)) == 0; }
static void advance_to(int64_t t) { T.now = t; redlock_on_timer(&C); }
/* Fires timers until command k has been sent (or nothing is pending). */
static void run_until_sent(int k) {
    int guard = 100;
    while (T.qn <= k && guard-- > 0 && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer);
}
static int last_status(redlock_op op) {
    int i;
    for (i = T.res.n - 1; i >= 0; i--) if (T.res.r[i].op == op) return T.res.r[i].status;
    return 1;
}
static int count_ev(redlock_event_type t) {
    int i, n = 0;
    for (i = 0; i < T.evn; i++) n += T.ev[i].type == t;
    return n;
}
static int vote_status(int node) { /* status of the latest vote of node */
    int i;
    for (i = T.evn - 1; i >= 0; i--) if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == node) return T.ev[i].status;
    return 1;
}

/* ---- bad input ---- */
static void test_client_init_errors(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_client c;
    memset(&cb, 0, sizeof cb);
    redlock_config_init(&cfg);
    CHECK_EQ(redlock_client_init(NULL, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID); /* no send */
    cb.send = t_send;
    CHECK_EQ(redlock_client_init(&c, NULL, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.node_count = 0;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_NODES);
    cfg.node_count = REDLOCK_MAX_NODES + 1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_NODES);
    cfg.node_count = 3;
    cfg.node_timeout_ms = -1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.node_timeout_ms = 0;
    cfg.drift_factor = 0.0 / 0.0;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.drift_factor = 0;
    cfg.mode[1] = (redlock_mode)9;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.mode[1] = REDLOCK_MODE_AUTO;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    {   /* `= {0}` plus node count and send is a valid config */
        redlock_config z;
        memset(&z, 0, sizeof z);
        z.node_count = 1;
        CHECK_EQ(redlock_client_init(&c, &z, &cb, NULL), REDLOCK_OK);
        redlock_client_deinit(&c);
    }
}

static void test_lock_init_errors(void) {
    redlock_lock_opts o;
    redlock_lock lk;
    char longkey[REDLOCK_MAX_KEY + 2];
    redlock_client dead;
    setup_n(1, 0, 1000);
    memset(&o, 0, sizeof o);
    o.ttl_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &C, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(NULL, &C, &o), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY);           /* NULL key */
    o.key = "";
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY);           /* empty */
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    o.key = longkey;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY_TOO_LONG);
    o.key_len = REDLOCK_MAX_KEY;                                          /* exactly the limit */
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_OK);
    redlock_lock_deinit(&lk);
    o.key = "k";
    o.key_len = 0;
    o.ttl_ms = 0;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = -5;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = (int64_t)1 << 50;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = 100;
    o.watchdog = 1;
    o.renew_every_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_INVALID);
    memset(&dead, 0, sizeof dead);
    o.renew_every_ms = 0;
    CHECK_EQ(redlock_lock_init(&lk, &dead, &o), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_init(&lk, NULL, &o), REDLOCK_ERR_DETACHED);
    teardown();
}

static void test_api_misuse(void) {
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_acquire(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_release(NULL), REDLOCK_ERR_INVALID);
    T.fail_random = 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(T.qn, 0);
    T.fail_random = 0;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_ALREADY_HELD);
    CHECK_EQ(redlock_extend(&L, -1), REDLOCK_ERR_TTL);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_BUSY);
    num(T.qn - 1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    teardown();
    /* after deinit the handle is detached */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
}

/* ---- acquire ---- */
static void test_acquire_single(void) {
    char expect[128];
    int64_t start;
    setup_n(1, 0, 1000);
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    snprintf(expect, sizeof expect, "SET res %s NX PX 1000", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    CHECK_EQ(strlen(redlock_lock_token(&L)), REDLOCK_TOKEN_LEN);
    CHECK_EQ(T.timer, start + 50000);   /* node timeout armed */
    T.now += 300;
    ok(0);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_OK);
    CHECK_EQ(T.res.r[0].votes, 1);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - (10000 + 2000)); /* ttl - drift */
    CHECK_EQ(T.timer, redlock_lock_valid_until(&L)); /* will report expiry */
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(T.ev[T.evn - 1].ttl_share_permille, 12); /* (0.3 ms + 12 ms) / 1000 ms */
    teardown();
}

static void test_token_unique(void) {
    char first[REDLOCK_TOKEN_LEN + 1];
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    strcpy(first, redlock_lock_token(&L));
    redlock_release(&L);
    num(1, 1);
    redlock_acquire(&L);
    CHECK(strcmp(first, redlock_lock_token(&L)) != 0);
    teardown();
}

static void test_quorum_early(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(T.qn, 3);
    ok(0);
    CHECK_EQ(T.res.n, 0);
    ok(2);
    CHECK_EQ(T.res.n, 1);                 /* decided without node 1 */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    ok(1);                                /* the straggler changes nothing */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

static void test_fail_rollback_retry(void) {
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(T.qn, 3);
    nil(1);                               /* quorum impossible: decided now */
    CHECK_EQ(T.res.n, 0);                 /* retries left: no result yet */
    CHECK_EQ(T.qn, 6);                    /* rollback to all nodes */
    for (k = 3; k < 6; k++) CHECK(starts(k, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del'"));
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.timer, T.now + 50000);     /* first the rollback's deadline */
    ok(2);                                /* stale reply of attempt 1: ignored */
    num(3, 0); num(4, 0); num(5, 0);      /* rollback done: now the retry delay */
    CHECK_EQ(T.timer, T.now + 100000);    /* retry delay, no jitter */
    advance_to(T.now + 100000);
    CHECK_EQ(T.qn, 9);                    /* attempt 2 */
    CHECK(starts(6, "SET res"));
    nil(6); nil(7);
    run_until_sent(12);                   /* attempt 3 */
    nil(12); nil(13);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[0].attempts, 3);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 1);
    teardown();
}

static void test_timeouts_no_quorum(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    advance_to(T.now + 49999);            /* early timer: nothing happens */
    CHECK_EQ(T.qn, 3);
    advance_to(T.now + 1);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    num(1, 1);                            /* late answer after timeout: ignored */
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 3);
    while (T.res.n == 0 && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.res.r[0].attempts, 3);
    teardown();
}

static void test_wait_deadline(void) {
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.retry_count = 100;
    o.wait_ms = 250;
    o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    redlock_acquire(&L);
    nil(0);
    run_until_sent(2);
    nil(2);
    run_until_sent(4);
    nil(4);                               /* next retry would start after 250 ms */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].attempts, 3);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    teardown();
}

static void test_send_failure(void) {
    setup_n(3, 0, 1000);
    T.fail_send_node = 1;
    redlock_acquire(&L);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    ok(0); ok(1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

static void test_validity_exhausted(void) {
    setup_n(1, 0, 10);                    /* ttl 10 ms, drift 2.1 ms */
    redlock_acquire(&L);
    T.now += 8000;                        /* answer after 8 ms: validity gone */
    ok(0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.evn > 0 && T.ev[T.evn - 1].status == REDLOCK_ERR_VALIDITY, 1);
    teardown();
}

/* ---- synchronous transports: the reply arrives inside send ---- */
static int sync_ok(int node, const char *cmd, redlock_reply *r) {
    (void)node;
    if (strncmp(cmd, "SET", 3) == 0) { r->type = REDLOCK_REPLY_STATUS; r->str = "OK"; r->len = 2; }
    else { r->type = REDLOCK_REPLY_INTEGER; r->integer = 1; }
    return 1;
}
static void test_sync_transport(void) {
    int n;
    for (n = 1; n <= 5; n += 2) {
        setup_n(n, 0, 1000);
        T.sync = sync_ok;
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        CHECK_EQ(T.res.n, 1);             /* decided before acquire returned */
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(T.qn, n);                /* every node still got its SET */
        CHECK_EQ(redlock_release(&L), REDLOCK_OK);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
        teardown();
    }
}

static void test_callbacks_reenter(void) {
    /* release from inside on_result, with a synchronous transport */
    setup_n(3, 0, 1000);
    T.sync = sync_ok;
    T.release_on_acquired = 1;
    redlock_acquire(&L);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_RELEASE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_OK);
    teardown();
    /* deinit from inside on_result: no further callbacks, no crash */
    setup_n(3, 0, 1000);
    T.deinit_on_result = 1;
    redlock_acquire(&L);
    ok(0); ok(1);
    CHECK_EQ(T.res.n, 1);
    ok(2);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

static void test_release_cancels_acquire(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CANCELLED);
    ok(1);                                /* stale */
    num(3, 1); num(4, 0); num(5, 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* ---- release ---- */
static void test_release_cancels_extend(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_extend(&L, 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_CANCELLED);
    num(1, 1);                            /* the extend's reply: stale */
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.n, 3);
    teardown();
    /* validity runs out while a user extend waits: EXTEND answered, then LOST */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    T.now = redlock_lock_valid_until(&L) - 10;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    teardown();
}

static void test_release_noscript_fallback(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(2, "EVAL if redis.call('get',KEYS[1])==ARGV[1]"));
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

static void test_release_quorum(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_release(&L);
    num(3, 1); num(4, 0);
    CHECK_EQ(T.res.n, 1);                 /* 1 yes, 1 pending: not yet */
    num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    redlock_release(&L);
    advance_to(T.now + 50000);            /* nobody answers */
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* ---- extend and the watchdog ---- */
static void test_extend(void) {
    int64_t t0;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    T.now += 400000;
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    CHECK(starts(3, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res"));
    CHECK(strstr(T.q[3].cmd, " 2000") != NULL);
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 2000000 - 22000);
    /* stolen: another token on two nodes */
    redlock_extend(&L, 0);
    num(6, -1); num(7, -1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);   /* can try again */
    teardown();
    /* key gone on a majority */
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    redlock_extend(&L, 0);
    num(3, 0); num(4, 1); num(5, 0);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
    /* inconclusive: still held */
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    redlock_extend(&L, 0);
    advance_to(T.now + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

static void test_watchdog_renews(void) {
    int64_t t0, k, i;
    setup_n(1, 1, 900);                   /* renew every 300 ms */
    t0 = T.now;
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(T.timer, t0 + 300000);
    for (i = 0; i < 10; i++) {
        advance_to(T.timer);
        k = T.qn - 1;
        CHECK(starts((int)k, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394"));
        T.now += 1000;
        num((int)k, 1);
    }
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 10);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK(T.now - t0 > 3 * 900000);       /* held for over three TTLs */
    CHECK_EQ(T.res.n, 1);                 /* renewals are silent */
    teardown();
}

static void test_watchdog_loses_quorum(void) {
    int64_t until;
    setup_n(3, 1, 900);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    until = redlock_lock_valid_until(&L);
    /* renewals time out again and again: lost with TRANSPORT, not after validity */
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && T.now < until + 1000000) {
        CHECK(T.timer <= until);
        advance_to(T.timer);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(T.now, until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_TRANSPORT);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 2);
    teardown();
}

static void test_expiry_without_watchdog(void) {
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok(0);
    advance_to(redlock_lock_valid_until(&L) - 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 1);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(starts(T.qn - 1, "EVAL if redis.call('get'"));  /* best-effort cleanup, one command */
    teardown();
}

static void test_hold_limit(void) {
    redlock_lock_opts o;
    setup_n(1, 1, 900);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 900;
    o.watchdog = 1;
    o.max_extensions = 2;
    o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    redlock_acquire(&L);
    ok(0);
    advance_to(T.timer); num(T.qn - 1, 1);
    advance_to(T.timer); num(T.qn - 1, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD) advance_to(T.timer);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
    teardown();
}

/* ---- AUTO switching and the legacy algorithm ---- */
static void test_auto_legacy(void) {
    char val[128];
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
    CHECK_STR(T.q[1].cmd, "INFO server");  /* confirm: is the server that old? */
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    rep(1, REDLOCK_REPLY_STRING, 0, "# Server\r\nredis_version:2.4.17\r\nredis_git_sha1:0\r\n");
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    snprintf(val, sizeof val, "SETNX res %lld:%s", (long long)(T.wall + 1001), redlock_lock_token(&L));
    CHECK_STR(T.q[2].cmd, val);
    num(2, 0);                            /* held: look at the holder's expiry */
    CHECK_STR(T.q[3].cmd, "GET res");
    rep(3, REDLOCK_REPLY_STRING, 0, "1600000000000:0123456789abcdef0123456789abcdef"); /* expired */
    CHECK(starts(4, "GETSET res "));
    rep(4, REDLOCK_REPLY_STRING, 0, "1600000000000:0123456789abcdef0123456789abcdef");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* release: GET, ours, DEL (no scripts on a legacy node) */
    redlock_release(&L);
    CHECK_STR(T.q[5].cmd, "GET res");
    snprintf(val, sizeof val, "%lld:%s", (long long)(T.wall + 1001), redlock_lock_token(&L));
    rep(5, REDLOCK_REPLY_STRING, 0, val);
    CHECK_STR(T.q[6].cmd, "DEL res");
    num(6, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* the next acquire goes straight to SETNX */
    redlock_acquire(&L);
    CHECK(starts(7, "SETNX res "));
    teardown();
}

static void test_legacy_not_expired_and_race(void) {
    redlock_config cfg;
    setup_n(1, 0, 1000);
    teardown();
    /* explicit LEGACY mode */
    redlock_config_init(&cfg);
    {
        redlock_callbacks cb;
        redlock_lock_opts o;
        memset(&cb, 0, sizeof cb);
        cb.send = t_send; cb.set_timer = t_timer; cb.now_us = t_now; cb.wall_ms = t_wall;
        cb.random = t_random; cb.on_event = t_event;
        cfg.node_count = 1;
        cfg.mode[0] = REDLOCK_MODE_LEGACY;
        cfg.retry_count = -1;
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        memset(&o, 0, sizeof o);
        o.key = "res"; o.ttl_ms = 1000; o.on_result = t_result;
        redlock_lock_init(&L, &C, &o);
    }
    redlock_acquire(&L);
    CHECK(starts(0, "SETNX"));
    num(0, 0);
    rep(1, REDLOCK_REPLY_STRING, 0, "1800000000000:0123456789abcdef0123456789abcdef"); /* live holder */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 3);                    /* rollback GET */
    nil(2);
    /* expired, but another client's GETSET got there first */
    redlock_acquire(&L);
    num(3, 0);
    rep(4, REDLOCK_REPLY_STRING, 0, "1600000000000:0123456789abcdef0123456789abcdef");
    rep(5, REDLOCK_REPLY_STRING, 0, "1700000000999:fedcba9876543210fedcba9876543210");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 6);                    /* the clobbered node is not rolled back */
    /* garbage value: never taken over */
    redlock_acquire(&L);
    num(6, 0);
    rep(7, REDLOCK_REPLY_STRING, 0, "not-a-lock-value");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    teardown();
}

static void test_auto_noscript(void) {
    char tok[64];
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM User u has no permissions to run the 'evalsha' command");
    CHECK_STR(T.q[2].cmd, "GET res");
    strcpy(tok, redlock_lock_token(&L));
    rep(2, REDLOCK_REPLY_STRING, 0, tok);
    CHECK_STR(T.q[3].cmd, "DEL res");
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO); /* SET NX PX still used */
    /* extend without scripts: GET, PEXPIRE */
    redlock_acquire(&L);
    CHECK(starts(4, "SET res"));
    ok(4);
    strcpy(tok, redlock_lock_token(&L));
    redlock_extend(&L, 0);
    CHECK_STR(T.q[5].cmd, "GET res");
    rep(5, REDLOCK_REPLY_STRING, 0, tok);
    CHECK_STR(T.q[6].cmd, "PEXPIRE res 1000");
    num(6, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
}

static void test_modern_mode_no_switch(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    teardown();
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    cfg.mode[0] = REDLOCK_MODE_MODERN;
    cfg.retry_count = -1;
    memset(&cb, 0, sizeof cb);
    cb.send = t_send; cb.now_us = t_now; cb.random = t_random; cb.on_event = t_event;
    redlock_client_init(&C, &cfg, &cb, NULL);
    memset(&o, 0, sizeof o);
    o.key = "res"; o.ttl_ms = 1000; o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_MODERN);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* ---- malformed replies: each an exact node status ---- */
static void test_malformed_replies(void) {
    static const struct { redlock_reply_type type; long long integer; const char *str; int status; } acq[] = {
        {REDLOCK_REPLY_INTEGER, 1, NULL, REDLOCK_ERR_PROTOCOL},      /* wrong type */
        {REDLOCK_REPLY_STRING, 0, "OK", REDLOCK_ERR_PROTOCOL},       /* bulk, not status */
        {REDLOCK_REPLY_STATUS, 0, "QUEUED", REDLOCK_ERR_PROTOCOL},   /* status, not OK */
        {REDLOCK_REPLY_ARRAY, 0, NULL, REDLOCK_ERR_PROTOCOL},
        {REDLOCK_REPLY_OTHER, 0, NULL, REDLOCK_ERR_PROTOCOL},
        {REDLOCK_REPLY_STATUS, 0, NULL, REDLOCK_ERR_PROTOCOL},       /* NULL string */
        {REDLOCK_REPLY_ERROR, 0, "OOM command not allowed", REDLOCK_ERR_SERVER},
        {REDLOCK_REPLY_ERROR, 0, NULL, REDLOCK_ERR_SERVER},
    };
    static const long long bad_ints[] = {2, -1, 5, 1LL << 40, -(1LL << 62)};
    size_t k;
    for (k = 0; k < sizeof acq / sizeof acq[0]; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        rep(0, acq[k].type, acq[k].integer, acq[k].str);
        CHECK_EQ(vote_status(0), acq[k].status);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING); /* counted as a failed vote, retrying */
        teardown();
    }
    /* release / extend integers out of range */
    for (k = 0; k < sizeof bad_ints / sizeof bad_ints[0]; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        ok(0);
        redlock_release(&L);
        num(1, bad_ints[k]);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        teardown();
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        ok(0);
        redlock_extend(&L, 0);
        if (bad_ints[k] != -1) {
            num(1, bad_ints[k]);
            CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
        }
        teardown();
    }
    /* nil where OK expected is a "held elsewhere" vote, not an error */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(vote_status(0), 0);
    teardown();
    /* SETNX answered with a string; GET answered with an integer */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR wrong number of arguments for 'set' command");
    rep(1, REDLOCK_REPLY_STRING, 0, "redis_version:2.6.11");
    CHECK(starts(2, "SETNX res "));
    rep(2, REDLOCK_REPLY_STRING, 0, "1");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* a NULL reply pointer */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    redlock_on_reply(&C, T.q[0].tag, NULL);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* transport error */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_CONNECT);
    teardown();
}

static void test_unknown_tags(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    redlock_on_reply(&C, 0, NULL);
    redlock_on_reply(&C, T.q[0].tag ^ ((redlock_tag)1 << 40), NULL); /* another lock id */
    redlock_on_reply(&C, (T.q[0].tag & ~(redlock_tag)0xFF) | 200, NULL); /* node out of range */
    redlock_on_error(&C, T.q[1].tag + (1 << 8), REDLOCK_ERR_TRANSPORT); /* another sequence */
    redlock_on_reply(NULL, T.q[0].tag, NULL);
    redlock_on_timer(NULL);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 0);
    ok(0);
    ok(0);                                /* twice: the second is stale */
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 1);
    teardown();
}

static void test_sha_constants(void) {
    /* the hard-coded SHA1s must be those of the script texts */
    char cmd[512], out[64];
    const char *scripts[2];
    const char *shas[2] = {"b998f9dfb154cdbea8cda65ad5177aadf0e945a2", "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394"};
    int k;
    scripts[0] = redlock_release_script();
    scripts[1] = redlock_extend_script();
    for (k = 0; k < 2; k++) {
        FILE *f;
        snprintf(cmd, sizeof cmd, "printf '%%s' \"%s\" | sha1sum", scripts[k]);
        f = popen(cmd, "r");
        CHECK(f != NULL);
        if (!f) continue;
        CHECK(fgets(out, sizeof out, f) != NULL);
        pclose(f);
        CHECK(strncmp(out, shas[k], 40) == 0);
    }
}

static void test_strerror(void) {
    int s;
    for (s = 0; s >= -45; s--) {
        const char *m = redlock_strerror(s);
        CHECK(m != NULL);
        if ((s <= -12 && s >= -19) || (s <= -29 && s >= -39)) CHECK_STR(m, "unknown status");
        else CHECK(strcmp(m, "unknown status") != 0);
    }
    CHECK_STR(redlock_strerror(12345), "unknown status");
    CHECK_STR(redlock_state_name(REDLOCK_STATE_HELD), "held");
    CHECK_STR(redlock_event_name(REDLOCK_EV_RENEWED), "renewed");
}

static void test_builtin_callbacks(void) {
    /* the built-in clock and OS random source */
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock lk;
    redlock_lock_opts o;
    char a[REDLOCK_TOKEN_LEN + 1];
    redlock_config_init(&cfg);
    memset(&cb, 0, sizeof cb);
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    cb.send = t_send;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "k"; o.ttl_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&lk), REDLOCK_OK);
    strcpy(a, redlock_lock_token(&lk));
    CHECK(redlock_next_deadline(&c) > 0 && redlock_next_deadline(&c) != REDLOCK_NO_DEADLINE);
    redlock_release(&lk);
    redlock_lock_deinit(&lk);
    redlock_lock_init(&lk, &c, &o);
    redlock_acquire(&lk);
    CHECK(strcmp(a, redlock_lock_token(&lk)) != 0);
    redlock_client_deinit(&c);
    CHECK_EQ(redlock_lock_state(&lk), REDLOCK_STATE_IDLE);   /* detached */
    CHECK_EQ(redlock_release(&lk), REDLOCK_ERR_DETACHED);
}

static void test_many_locks_one_client(void) {
    redlock_lock locks[8];
    redlock_lock_opts o;
    int i;
    setup_n(1, 0, 1000);
    memset(&o, 0, sizeof o);
    o.key = "m"; o.ttl_ms = 1000; o.on_result = t_result;
    for (i = 0; i < 8; i++) { CHECK_EQ(redlock_lock_init(&locks[i], &C, &o), REDLOCK_OK); redlock_acquire(&locks[i]); }
    CHECK_EQ(T.qn, 8);
    for (i = 7; i >= 0; i--) ok(i);
    for (i = 0; i < 8; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&locks[0]));
    for (i = 0; i < 8; i++) redlock_lock_deinit(&locks[i]);
    teardown();
}

/* ======================================================================= */
/* Defects fixed by 38cd2dc. Each test below fails against the header      */
/* before that commit and passes now.                                      */
/* ======================================================================= */

static const char OTHER_TOKEN[] = "0123456789abcdef0123456789abcdef";

/* What validity leaves aside with the default drift settings (0.01, 2 ms),
   plus one 50 ms node timeout when some node is legacy. */
static int64_t drift_us(int64_t ttl_ms, int legacy) { return ttl_ms * 10 + 2000 + (legacy ? 50000 : 0); }

/* A reply whose string pointer and length are given separately. */
static void rep_raw(int k, redlock_reply_type type, const char *str, size_t len) {
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.str = str;
    r.len = len;
    redlock_on_reply(&C, T.q[k].tag, &r);
}
/* First command at index >= from sent to node (any node if -1) starting with prefix, or -1. */
static int find_cmd(int from, int node, const char *prefix) {
    int k;
    for (k = from; k < T.qn; k++)
        if ((node < 0 || T.q[k].node == node) && starts(k, prefix)) return k;
    return -1;
}
static int count_cmd(int from, const char *prefix) {
    int k, n = 0;
    for (k = from; k < T.qn; k++) n += starts(k, prefix);
    return n;
}
static int ends(int k, const char *suffix) {
    size_t n = strlen(T.q[k].cmd), m = strlen(suffix);
    return k < T.qn && n >= m && strcmp(T.q[k].cmd + n - m, suffix) == 0;
}
static const redlock_event *last_ev(redlock_event_type t) {
    int i;
    for (i = T.evn - 1; i >= 0; i--) if (T.ev[i].type == t) return &T.ev[i];
    return NULL;
}
static int tags_distinct(void) {
    int a, b;
    for (a = 0; a < T.qn; a++)
        for (b = a + 1; b < T.qn; b++)
            if (T.q[a].tag == T.q[b].tag) return 0;
    return 1;
}
/* The one-command undo / cleanup: the release script itself, not EVALSHA. */
static const char *release_eval(const char *token) {
    static char buf[400];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s", redlock_release_script(), token);
    return buf;
}
static const char *legacy_value(long long expiry_ms, const char *token) {
    static char buf[128];
    snprintf(buf, sizeof buf, "%lld:%s", expiry_ms, token);
    return buf;
}
static void setup_legacy(int nodes, int retry_count, int64_t ttl) {
    redlock_config cfg;
    redlock_lock_opts o;
    int i;
    base_config(&cfg, nodes);
    cfg.retry_count = retry_count;
    for (i = 0; i < nodes; i++) cfg.mode[i] = REDLOCK_MODE_LEGACY;
    base_opts(&o, ttl, 0);
    setup_with(&cfg, &o);
}
static void setup_no_retry(int nodes, int watchdog, int64_t ttl) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    cfg.retry_count = -1;
    base_opts(&o, ttl, watchdog);
    setup_with(&cfg, &o);
}

/* ---- defect 1: an extend that shortens the TTL shortens the validity ---- */

/* Proves: extend(1) on a 10 s lock leaves no validity: EXTEND answered EXPIRED, then LOST (EXPIRED), at once. */
static void test_defect1_shortening_extend(void) {
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    T.now += 1000000;
    CHECK_EQ(redlock_extend(&L, 1), REDLOCK_OK);
    CHECK(starts(1, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ") && ends(1, " 1"));
    CHECK_EQ(T.res.n, 3);                 /* before extend() returned */
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    num(1, 1);                            /* the extend's late OK changes nothing */
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();
}

/* Proves: a shortening extend that gets NO_QUORUM still leaves validity <= start + ttl - drift, and the lock is LOST (EXPIRED) then. */
static void test_defect1_shortening_extend_no_quorum(void) {
    int64_t t1, bound;
    setup_n(3, 0, 10000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    T.now += 1000000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    bound = t1 + 2000000 - drift_us(2000, 0);
    num(3, 1);                            /* one node took PEXPIRE 2000; the others never answer */
    advance_to(t1 + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK(redlock_lock_valid_until(&L) <= bound);
    CHECK(redlock_lock_valid_until(&L) > T.now);
    advance_to(T.timer);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(T.now <= bound);
    teardown();
}

/* Proves: a watchdog renewal (ttl 10 s) after a user extend to 60 s cuts validity to renewal start + 10 s - drift, answered or not. */
static void test_defect1_watchdog_renewal_after_long_extend(void) {
    int64_t rs, bound;
    int k, guard = 100000;
    setup_n(1, 1, 10000);
    redlock_acquire(&L);
    ok(0);
    T.now += 1000000;
    CHECK_EQ(redlock_extend(&L, 60000), REDLOCK_OK);
    CHECK(ends(1, " 60000"));
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + 60000000 - drift_us(60000, 0));
    advance_to(T.timer);                  /* the watchdog's renewal */
    rs = T.now;
    k = T.qn - 1;
    CHECK(starts(k, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ") && ends(k, " 10000"));
    bound = rs + 10000000 - drift_us(10000, 0);
    CHECK(redlock_lock_valid_until(&L) <= bound);
    /* no renewal is ever answered: lost with TRANSPORT, by the renewal's bound */
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && guard-- > 0) advance_to(T.timer);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_TRANSPORT);
    CHECK(T.now <= bound);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 1);
    teardown();
}

/* Proves: a shortening extend cuts validity as soon as it is sent; a lengthening one only once answered. */
static void test_defect1_inflight_extend_shortens(void) {
    int64_t before, t1, t2;
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok(0);
    before = redlock_lock_valid_until(&L);
    T.now += 1000000;
    t1 = T.now;
    redlock_extend(&L, 20000);
    CHECK_EQ(redlock_lock_valid_until(&L), before);    /* longer: not yet */
    num(1, 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 20000000 - drift_us(20000, 0));
    T.now += 1000000;
    t2 = T.now;
    redlock_extend(&L, 5000);
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(redlock_lock_valid_until(&L), t2 + 5000000 - drift_us(5000, 0)); /* no reply yet */
    CHECK_EQ(T.res.n, 2);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t2 + 5000000 - drift_us(5000, 0));
    teardown();
}

/* Proves: a user extend that fails (NO_QUORUM) on a lock without watchdog ends as EXPIRED, not TRANSPORT. */
static void test_lost_reason_after_failed_user_extend(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_extend(&L, 0);
    advance_to(T.now + 50000);            /* nobody answers the extend */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* ---- defect 2: legacy bounds belong to one attempt ---- */

/* Proves: the undo of attempt 2 does not DEL a node whose GETSET is unanswered, though attempt 1 had won it. */
static void test_defect2_legacy_rollback_stale_until(void) {
    char live[128], ours[128];
    int k, a2, g0, g1, g2, undo;
    snprintf(live, sizeof live, "%s", legacy_value(1800000000000LL, OTHER_TOKEN)); /* another holder, not expired */
    setup_legacy(3, 1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    /* attempt 1: node 0 wins, nodes 1 and 2 are held by a live holder */
    CHECK(starts(0, "SETNX res ") && starts(1, "SETNX res ") && starts(2, "SETNX res "));
    num(0, 1);
    num(1, 0);
    num(2, 0);
    g1 = find_cmd(3, 1, "GET res");
    g2 = find_cmd(3, 2, "GET res");
    CHECK(g1 > 0 && g2 > 0);
    rep(g1, REDLOCK_REPLY_STRING, 0, live);
    rep(g2, REDLOCK_REPLY_STRING, 0, live);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    undo = T.qn - 3;                      /* the undo: GET on every node */
    for (k = 0; k < 3; k++) CHECK(find_cmd(undo, k, "GET res") >= 0);
    rep(find_cmd(undo, 0, "GET res"), REDLOCK_REPLY_STRING, 0, ours);
    rep(find_cmd(undo, 1, "GET res"), REDLOCK_REPLY_STRING, 0, live);
    rep(find_cmd(undo, 2, "GET res"), REDLOCK_REPLY_STRING, 0, live);
    k = find_cmd(undo, 0, "DEL res");     /* attempt 1's win on node 0 is undone: right */
    CHECK(k > 0);
    if (k > 0) num(k, 1);
    /* attempt 2 */
    a2 = T.qn;
    run_until_sent(a2 + 2);
    CHECK(find_cmd(a2, 0, "SETNX res ") == a2);
    num(a2, 0);                           /* node 0: held ... */
    g0 = find_cmd(a2, 0, "GET res");
    rep(g0, REDLOCK_REPLY_STRING, 0, legacy_value(1600000000000LL, OTHER_TOKEN)); /* ... by an expired value */
    CHECK(find_cmd(g0, 0, "GETSET res ") > g0);   /* sent, never answered */
    num(a2 + 1, 0);
    num(a2 + 2, 0);
    g1 = find_cmd(a2, 1, "GET res");
    g2 = find_cmd(a2, 2, "GET res");
    rep(g1, REDLOCK_REPLY_STRING, 0, live);
    rep(g2, REDLOCK_REPLY_STRING, 0, live);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    /* the undo of attempt 2: exactly one GET per node ... */
    undo = T.qn - 3;
    CHECK_STR(T.q[undo].cmd, "GET res");
    CHECK_STR(T.q[undo + 1].cmd, "GET res");
    CHECK_STR(T.q[undo + 2].cmd, "GET res");
    CHECK(T.q[undo].node == 0 && T.q[undo + 1].node == 1 && T.q[undo + 2].node == 2);
    /* ... and node 0 shows our value (our GETSET landed, maybe over a winner's): no DEL */
    rep(undo, REDLOCK_REPLY_STRING, 0, ours);
    rep(undo + 1, REDLOCK_REPLY_STRING, 0, live);
    rep(undo + 2, REDLOCK_REPLY_STRING, 0, live);
    CHECK_EQ(count_cmd(undo, "DEL"), 0);
    CHECK_EQ(T.qn, undo + 3);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* ---- defect 3: the undo / cleanup goes out before on_result ---- */

/* Proves: a failed final attempt's undo (one EVAL per node, the old token) is sent even if on_result deinitialises the lock. */
static void test_defect3_rollback_sent_before_on_result_deinit(void) {
    char tok[REDLOCK_TOKEN_LEN + 1];
    int k;
    setup_no_retry(3, 0, 1000);
    T.deinit_on_result = 1;
    redlock_acquire(&L);
    strcpy(tok, redlock_lock_token(&L));
    nil(0);
    nil(1);                               /* LOCKED, no retries: undo, then on_result deinits */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_LOCKED);
    CHECK(T.res.pending[0] != 0);         /* the undo round runs while on_result is called */
    CHECK_EQ(T.qn, 6);
    for (k = 3; k < 6; k++) {
        CHECK_STR(T.q[k].cmd, release_eval(tok));
        CHECK_EQ(T.q[k].node, k - 3);
    }
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    num(3, 1);                            /* answers to a deinitialised lock: ignored */
    CHECK_EQ(T.res.n, 1);
    teardown();
    /* without deinit: pending while the undo runs, then not */
    setup_no_retry(1, 0, 1000);
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK(redlock_lock_pending(&L) != 0);
    num(1, 0);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: acquire() inside on_result after a failed final attempt sends the old token's undo first; the new SET waits for it. */
static void test_defect3_reacquire_waits_for_rollback(void) {
    char old[REDLOCK_TOKEN_LEN + 1], set[128];
    int k, pass;
    for (pass = 0; pass < 2; pass++) {    /* the undo ends by answers, then by node timeout */
        setup_no_retry(3, 0, 1000);
        T.reacquire_on_fail = 1;
        redlock_acquire(&L);
        strcpy(old, redlock_lock_token(&L));
        nil(0);
        nil(1);
        CHECK_EQ(T.res.n, 1);
        CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_LOCKED);
        CHECK_EQ(T.reacquire_rc, REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
        CHECK(redlock_lock_pending(&L) != 0);
        CHECK_EQ(T.qn, 6);                /* the undo with the old token, no SET yet */
        for (k = 3; k < 6; k++) CHECK_STR(T.q[k].cmd, release_eval(old));
        num(3, 0);
        num(4, 0);
        CHECK_EQ(T.qn, 6);                /* node 2 still out: still waiting */
        if (pass == 0) {
            num(5, 1);
        } else {
            CHECK_EQ(T.timer, T.now + 50000);
            advance_to(T.now + 49999);
            CHECK_EQ(T.qn, 6);
            advance_to(T.now + 1);        /* node 2's undo times out */
        }
        CHECK_EQ(T.qn, 9);                /* now the new attempt, with a new token */
        CHECK(strcmp(redlock_lock_token(&L), old) != 0);
        snprintf(set, sizeof set, "SET res %s NX PX 1000", redlock_lock_token(&L));
        for (k = 6; k < 9; k++) CHECK_STR(T.q[k].cmd, set);
        ok(6); ok(7);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        teardown();
    }
}

/* Proves: the cleanup after LOST (validity ran out, no watchdog) is sent even if on_result deinitialises the lock. */
static void test_defect3_cleanup_sent_before_lost_deinit(void) {
    char tok[REDLOCK_TOKEN_LEN + 1];
    setup_n(1, 0, 1000);
    T.deinit_on_lost = 1;
    redlock_acquire(&L);
    ok(0);
    strcpy(tok, redlock_lock_token(&L));
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK(T.res.pending[1] != 0);         /* the cleanup round runs while on_result is called */
    CHECK_EQ(T.qn, 2);
    CHECK_STR(T.q[1].cmd, release_eval(tok));
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* ---- defect 4: every request has its own tag ---- */

/* Proves: a duplicate of the GET's reply (GET's tag) is not taken for the GETSET's; all tags are distinct; re-deliveries change nothing. */
static void test_defect4_tag_per_request(void) {
    const char *expired = legacy_value(1600000000000LL, OTHER_TOKEN);
    char ours[128];
    int res, ev, qn;
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    CHECK(starts(0, "SETNX res "));
    num(0, 0);
    CHECK_STR(T.q[1].cmd, "GET res");
    rep(1, REDLOCK_REPLY_STRING, 0, expired);
    CHECK(starts(2, "GETSET res "));
    CHECK(tags_distinct());
    res = T.res.n; ev = T.evn; qn = T.qn;
    rep(1, REDLOCK_REPLY_STRING, 0, expired);    /* the GET's reply again: not the GETSET's answer */
    num(0, 0);                                   /* and the SETNX's */
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    rep(2, REDLOCK_REPLY_STRING, 0, expired);    /* the real GETSET answer: we replaced what we read */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    res = T.res.n; ev = T.evn; qn = T.qn;
    num(0, 1); rep(1, REDLOCK_REPLY_STRING, 0, expired); rep(2, REDLOCK_REPLY_NIL, 0, NULL);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    /* release: GET then DEL; the GET's reply again is not the DEL's */
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    redlock_release(&L);
    CHECK_STR(T.q[3].cmd, "GET res");
    rep(3, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_STR(T.q[4].cmd, "DEL res");
    CHECK(tags_distinct());
    rep(3, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_RELEASING);
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    res = T.res.n; ev = T.evn; qn = T.qn;
    rep(3, REDLOCK_REPLY_STRING, 0, ours); num(4, 1);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    teardown();
    /* modern, three nodes, a NOSCRIPT step: still one tag per request */
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_release(&L);
    rep(3, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(6, "EVAL if redis.call('get'"));
    rep(3, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK_EQ(T.qn, 7);                    /* the duplicate did not trigger another EVAL */
    num(4, 1); num(6, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(tags_distinct());
    teardown();
}

/* ---- defect 5: legacy expiry parsing ---- */

/* Proves: expiries beyond INT64_MAX (19/20 digits) and digit-only values are never taken over; INT64_MAX is live; an expired one is. */
static void test_defect5_legacy_expiry_overflow(void) {
    static const struct { const char *expiry; int taken; } cases[] = {
        {"9999999999999999999", 0},       /* 19 digits, > INT64_MAX */
        {"9223372036854775808", 0},       /* INT64_MAX + 1 */
        {"18446744073709551616", 0},      /* 20 digits */
        {"99999999999999999999", 0},      /* 20 digits */
        {"9223372036854775807", 0},       /* INT64_MAX: far future, not expired */
        {"1600000000000", 1},             /* expired */
        {"1", 1},                         /* expired */
    };
    char val[128];
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num(0, 0);
        snprintf(val, sizeof val, "%s:%s", cases[k].expiry, OTHER_TOKEN);
        rep(1, REDLOCK_REPLY_STRING, 0, val);
        if (cases[k].taken) {
            CHECK(starts(2, "GETSET res "));
            CHECK_EQ(T.res.n, 0);
        } else {
            if (count_cmd(0, "GETSET") != 0) printf("#   taken over: %s\n", val);
            CHECK_EQ(count_cmd(0, "GETSET"), 0);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(vote_status(0), 0);  /* someone else's value, not a protocol error */
        }
        teardown();
    }
    /* all digits, no ':' : not a legacy value at all */
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num(0, 0);
    rep(1, REDLOCK_REPLY_STRING, 0, "1600000000000");
    CHECK_EQ(count_cmd(0, "GETSET"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    teardown();
}

/* ---- defect 6: millisecond settings are range-checked ---- */

/* Proves: every *_ms setting must be 0..2^40 (INT64_MAX and 2^40+1 refused, 2^40 accepted); extend ttl > 2^40 is ERR_TTL. */
static void test_defect6_ms_settings_range(void) {
    const int64_t max = (int64_t)1 << 40;
    const int64_t bad[] = {INT64_MAX, ((int64_t)1 << 40) + 1};
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    redlock_client c;
    redlock_lock lk;
    int f;
    size_t b;
    base_callbacks(&cb);
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    T.client = &C;
    for (f = 0; f < 5; f++) {
        int64_t *field;
        base_config(&cfg, 1);
        field = f == 0 ? &cfg.node_timeout_ms : f == 1 ? &cfg.clock_drift_ms : f == 2 ? &cfg.retry_delay_ms
              : f == 3 ? &cfg.wait_ms : &cfg.retry_jitter_ms;
        for (b = 0; b < 2; b++) {
            *field = bad[b];
            if (redlock_client_init(&c, &cfg, &cb, NULL) != REDLOCK_ERR_INVALID) printf("#   config field %d accepted\n", f);
            CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
        }
        *field = max;
        CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
        redlock_client_deinit(&c);
    }
    base_config(&cfg, 1);
    cfg.retry_jitter_ms = -1;             /* negative jitter: none */
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    for (f = 0; f < 5; f++) {
        int64_t *field;
        base_opts(&o, 1000, 0);
        field = f == 0 ? &o.renew_every_ms : f == 1 ? &o.max_hold_ms : f == 2 ? &o.retry_delay_ms
              : f == 3 ? &o.wait_ms : &o.retry_jitter_ms;
        for (b = 0; b < 2; b++) {
            *field = bad[b];
            if (redlock_lock_init(&lk, &c, &o) != REDLOCK_ERR_INVALID) printf("#   lock option %d accepted\n", f);
            CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_ERR_INVALID);
        }
        *field = max;
        CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_OK);
        redlock_lock_deinit(&lk);
    }
    redlock_client_deinit(&c);
    /* extend's ttl: the same range */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_extend(&L, INT64_MAX), REDLOCK_ERR_TTL);
    CHECK_EQ(redlock_extend(&L, max + 1), REDLOCK_ERR_TTL);
    CHECK_EQ(T.qn, 1);
    CHECK_EQ(redlock_extend(&L, max), REDLOCK_OK);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
    /* settings at their maximum: the microsecond arithmetic does not overflow */
    base_config(&cfg, 1);
    cfg.node_timeout_ms = cfg.retry_delay_ms = cfg.retry_jitter_ms = max;
    base_opts(&o, max, 1);
    o.renew_every_ms = max - 1;
    o.max_hold_ms = max;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK_EQ(T.timer, T.now + max * 1000);   /* node timeout */
    nil(0);                               /* retry, after the undo */
    num(1, 0);
    CHECK(T.timer >= T.now && T.timer <= T.now + 2 * max * 1000);
    run_until_sent(2);
    ok(2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + max * 1000 - drift_us(max, 0));
    teardown();
    base_config(&cfg, 1);
    cfg.wait_ms = cfg.retry_delay_ms = max;  /* the retry would end after wait_ms */
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    T.now += 1;
    nil(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    teardown();
}

/* ---- defect 7: a string reply with str == NULL and len > 0 ---- */

/* Proves: on the SET step, STATUS / STRING / ERROR with str NULL and len > 0 is a protocol error, not a crash nor a server error. */
static void test_defect7_null_string_set_step(void) {
    static const redlock_reply_type types[] = {REDLOCK_REPLY_STATUS, REDLOCK_REPLY_STRING, REDLOCK_REPLY_ERROR};
    size_t k;
    for (k = 0; k < 3; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        rep_raw(0, types[k], NULL, 11);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);  /* a failed vote: retrying */
        CHECK_EQ(count_cmd(0, "INFO"), 0);
        teardown();
    }
}

/* Proves: on the release steps (EVALSHA, and GET on a node without scripts) a NULL string with len > 0 is a protocol error. */
static void test_defect7_null_string_release_step(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep_raw(1, REDLOCK_REPLY_ERROR, NULL, 8);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    CHECK_STR(T.q[2].cmd, "GET res");
    rep_raw(2, REDLOCK_REPLY_STRING, NULL, REDLOCK_TOKEN_LEN);   /* the old header read through NULL here */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: on the legacy GET and GETSET steps (and the legacy release GET) a NULL string with len > 0 is a protocol error. */
static void test_defect7_null_string_legacy_steps(void) {
    const char *expired = legacy_value(1600000000000LL, OTHER_TOKEN);
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num(0, 0);
    rep_raw(1, REDLOCK_REPLY_STRING, NULL, strlen(expired));     /* GET */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num(0, 1);
    redlock_release(&L);
    CHECK_STR(T.q[1].cmd, "GET res");
    rep_raw(1, REDLOCK_REPLY_STRING, NULL, 45);                  /* release GET */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num(0, 0);
    rep(1, REDLOCK_REPLY_STRING, 0, expired);
    CHECK(starts(2, "GETSET res "));
    rep_raw(2, REDLOCK_REPLY_STRING, NULL, strlen(expired));     /* GETSET: the old header read through NULL */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* ---- defect 8: initialising an initialised lock ---- */

/* Proves: init twice without deinit forgets the first (its replies ignored); the client's locks stay a sane list. */
static void test_defect8_lock_init_twice(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    int64_t until2;
    setup_n(1, 0, 1000);
    base_opts(&o, 1000, 0);
    redlock_acquire(&L);                  /* q0: the first incarnation's SET */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    o.key = "other";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);    /* terminates: no cycle */
    redlock_on_timer(&C);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ok(0);                                /* reply to the forgotten incarnation */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 0);
    /* both locks work */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L2), REDLOCK_OK);
    CHECK(starts(1, "SET res ") && starts(2, "SET other "));
    ok(1); ok(2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    until2 = redlock_lock_valid_until(&L2);
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&L));
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_next_deadline(&C), until2);
    advance_to(until2);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_LOST);
    redlock_lock_deinit(&L2);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: re-initialising the lock inside its own on_result leaves a fresh idle lock; the old round's replies are ignored. */
static void test_defect8_reinit_in_on_result(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    setup_n(3, 0, 1000);
    base_opts(&T.reinit_opts, 1000, 0);
    T.reinit_on_acquire = 1;
    redlock_acquire(&L);
    ok(0); ok(1);                         /* acquired: on_result re-initialises L */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.reinit_rc, REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_on_timer(&C);
    ok(2);                                /* the straggler of the old incarnation */
    CHECK_EQ(T.res.n, 1);
    base_opts(&o, 1000, 0);
    o.key = "other";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L2), REDLOCK_OK);
    CHECK_EQ(T.qn, 9);
    ok(3); ok(4); ok(6); ok(7);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    redlock_lock_deinit(&L2);
    teardown();
}

/* ---- AUTO: switching to full legacy needs INFO's confirmation ---- */

/* Proves: a SET syntax error makes the core ask INFO server; an old version (< 2.6.12) switches the node to legacy, SETNX follows. */
static void test_auto_switch_confirmed_by_info(void) {
    static const char *old_versions[] = {"2.4.17", "2.6.11"};
    const redlock_event *sw;
    char info[128];
    int k;
    for (k = 0; k < 2; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
        CHECK_EQ(T.qn, 2);
        CHECK_STR(T.q[1].cmd, "INFO server");
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        snprintf(info, sizeof info, "# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\n", old_versions[k]);
        rep(1, REDLOCK_REPLY_STRING, 0, info);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
        sw = last_ev(REDLOCK_EV_MODE_SWITCH);
        CHECK(sw && sw->node == 0 && sw->mode == REDLOCK_MODE_LEGACY);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
        CHECK(starts(2, "SETNX res "));
        num(2, 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        teardown();
    }
}

/* Proves: INFO showing a modern server (>= 2.6.12) means no switch: the vote is SERVER, and later SET errors are not probed again. */
static void test_auto_no_switch_modern_server(void) {
    static const char *new_versions[] = {"7.0.15", "2.6.12"};
    int k, q;
    for (k = 0; k < 2; k++) {
        char info[128];
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
        CHECK_STR(T.q[1].cmd, "INFO server");
        snprintf(info, sizeof info, "# Server\r\nredis_version:%s\r\n", new_versions[k]);
        rep(1, REDLOCK_REPLY_STRING, 0, info);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        CHECK_EQ(count_cmd(0, "SETNX"), 0);
        num(2, 0);                        /* the undo */
        q = T.qn;
        run_until_sent(q);                /* the retry: SET again, same error */
        CHECK(starts(q, "SET res "));
        rep(q, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
        CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        CHECK_EQ(count_cmd(0, "INFO"), 1);   /* no second probe */
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        teardown();
    }
}

/* Proves: INFO answered with an error means no switch and no further probes. */
static void test_auto_no_switch_info_error(void) {
    int q;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR wrong number of arguments for 'set' command");
    CHECK_STR(T.q[1].cmd, "INFO server");
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'info' command");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(count_cmd(0, "SETNX"), 0);
    num(2, 0);
    q = T.qn;
    run_until_sent(q);
    CHECK(starts(q, "SET res "));
    rep(q, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(count_cmd(0, "INFO"), 1);
    teardown();
}

/* ---- runner: a test that hangs is reported, not waited for ---- */
static const char *current_test = "";
static void on_alarm(int sig) {
    static const char a[] = "not ok ", b[] = " (hung)\n";
    ssize_t w;
    (void)sig;
    w = write(1, a, sizeof a - 1);
    w = write(1, current_test, strlen(current_test));
    w = write(1, b, sizeof b - 1);
    (void)w;
    _exit(1);
}
static int selected(int argc, char **argv, const char *name) {
    int i;
    if (argc < 2) return 1;
    for (i = 1; i < argc; i++) if (strstr(name, argv[i])) return 1;
    return 0;
}
#define RUN_T(fn) do { if (selected(argc, argv, #fn)) { \
    current_test = #fn; alarm(60); RUN(fn); alarm(0); } } while (0)

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    RUN_T(test_client_init_errors);
    RUN_T(test_lock_init_errors);
    RUN_T(test_api_misuse);
    RUN_T(test_acquire_single);
    RUN_T(test_token_unique);
    RUN_T(test_quorum_early);
    RUN_T(test_fail_rollback_retry);
    RUN_T(test_timeouts_no_quorum);
    RUN_T(test_wait_deadline);
    RUN_T(test_send_failure);
    RUN_T(test_validity_exhausted);
    RUN_T(test_sync_transport);
    RUN_T(test_callbacks_reenter);
    RUN_T(test_release_cancels_acquire);
    RUN_T(test_release_cancels_extend);
    RUN_T(test_release_noscript_fallback);
    RUN_T(test_release_quorum);
    RUN_T(test_extend);
    RUN_T(test_watchdog_renews);
    RUN_T(test_watchdog_loses_quorum);
    RUN_T(test_expiry_without_watchdog);
    RUN_T(test_hold_limit);
    RUN_T(test_auto_legacy);
    RUN_T(test_legacy_not_expired_and_race);
    RUN_T(test_auto_noscript);
    RUN_T(test_modern_mode_no_switch);
    RUN_T(test_malformed_replies);
    RUN_T(test_unknown_tags);
    RUN_T(test_sha_constants);
    RUN_T(test_strerror);
    RUN_T(test_builtin_callbacks);
    RUN_T(test_many_locks_one_client);
    RUN_T(test_defect1_shortening_extend);
    RUN_T(test_defect1_shortening_extend_no_quorum);
    RUN_T(test_defect1_watchdog_renewal_after_long_extend);
    RUN_T(test_defect1_inflight_extend_shortens);
    RUN_T(test_lost_reason_after_failed_user_extend);
    RUN_T(test_defect2_legacy_rollback_stale_until);
    RUN_T(test_defect3_rollback_sent_before_on_result_deinit);
    RUN_T(test_defect3_reacquire_waits_for_rollback);
    RUN_T(test_defect3_cleanup_sent_before_lost_deinit);
    RUN_T(test_defect4_tag_per_request);
    RUN_T(test_defect5_legacy_expiry_overflow);
    RUN_T(test_defect6_ms_settings_range);
    RUN_T(test_defect7_null_string_set_step);
    RUN_T(test_defect7_null_string_release_step);
    RUN_T(test_defect7_null_string_legacy_steps);
    RUN_T(test_defect8_lock_init_twice);
    RUN_T(test_defect8_reinit_in_on_result);
    RUN_T(test_auto_switch_confirmed_by_info);
    RUN_T(test_auto_no_switch_modern_server);
    RUN_T(test_auto_no_switch_info_error);
    return CHECK_EXIT();
}
