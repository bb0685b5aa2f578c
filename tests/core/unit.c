/* unit.c - the core driven by a scripted transport: every state transition,
   replies delivered later and inside send, AUTO switching, bad input. */
/* The core's key blocks come through here: counted, and refused on demand. */
#include <stddef.h>
static void *unit_malloc(size_t n);
static void unit_free(void *p);
#define REDLOCK_MALLOC(n) unit_malloc(n)
#define REDLOCK_FREE(p) unit_free(p)
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include "adapters/redlock_notify.h"
#include "check.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static long key_blocks;     /* live */
static size_t last_block;   /* the size of the last one asked for */
static int refuse_malloc;
static size_t refuse_above; /* 0, or: blocks bigger than this are refused (a lock table's, not a key's) */
static void *unit_malloc(size_t n) {
    last_block = n;
    if (refuse_malloc || (refuse_above && n > refuse_above)) return NULL;
    key_blocks++;
    return malloc(n);
}
static void unit_free(void *p) {
    if (p) key_blocks--;
    free(p);
}

#ifdef REDLOCK__MAX_TTL_MS
/* Only the header before 38cd2dc defines this; it had no redlock_lock_pending.
   A stand-in that says "nothing pending" lets this file be built against that
   header (to see the defect tests fail there). */
static int redlock_lock_pending(const redlock_lock *lk) { (void)lk; return 0; }
#endif

/* ---- the scripted transport ---- */
#define MAXQ 256
typedef struct sent { int node; redlock_tag tag; char cmd[2048]; } sent;
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
    int scribble_on_lost;                 /* ... and then overwrites the lock's memory (freed, reused) */
    int scribble_on_result;               /* the same after any deinit in on_result */
    int reacquire_on_fail, reacquire_rc;  /* on_result acquires again after a failed acquire */
    int reinit_on_acquire, reinit_rc;     /* on_result re-initialises the lock (reinit_opts) */
    redlock_lock_opts reinit_opts;
    int fail_send_rc;                     /* what send returns for fail_send_node (0: TRANSPORT) */
    const char *deinit_on_send;           /* send deinitialises L when a command starts with this */
    int scribble_on_send;                 /* ... and then overwrites L's memory with 0xAA */
    int deinit_on_extend;                 /* on_result deinitialises on op EXTEND */
    int acquire_on_extend, acquire_rc;    /* on_result acquires again on a failed op EXTEND */
    int acquire_on_lost;                  /* ... and on LOST (its rc in acquire_rc) */
} T;

static redlock_lock L;   /* the tests' lock (defined below) */
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
    if (node == T.fail_send_node) return T.fail_send_rc ? T.fail_send_rc : REDLOCK_ERR_TRANSPORT;
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
    if (T.deinit_on_send && strncmp(s->cmd, T.deinit_on_send, strlen(T.deinit_on_send)) == 0) {
        T.deinit_on_send = NULL;
        redlock_lock_deinit(&L);
        if (T.scribble_on_send) memset(&L, 0xAA, sizeof L);
    }
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
    if (T.acquire_on_extend && r->op == REDLOCK_OP_EXTEND && r->status != REDLOCK_OK) {
        T.acquire_on_extend = 0;
        T.acquire_rc = redlock_acquire(lk);
    }
    if (T.acquire_on_lost && r->op == REDLOCK_OP_LOST) {
        T.acquire_on_lost = 0;
        T.acquire_rc = redlock_acquire(lk);
    }
    if (T.deinit_on_result || (T.deinit_on_lost && r->op == REDLOCK_OP_LOST) ||
        (T.deinit_on_extend && r->op == REDLOCK_OP_EXTEND)) {
        redlock_lock_deinit(lk);
        if ((T.scribble_on_lost && r->op == REDLOCK_OP_LOST) || T.scribble_on_result) memset(lk, 0xAA, sizeof *lk);
    }
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
/* Fresh transport state, client C with cfg and callbacks cb, lock L with o. */
static void setup_callbacks(const redlock_config *cfg, const redlock_lock_opts *o, const redlock_callbacks *cb) {
    memset(&T, 0, sizeof T);
    T.now = 1000000;
    T.wall = 1700000000000LL;
    T.fail_send_node = -1;
    T.client = &C;
    CHECK_EQ(redlock_client_init(&C, cfg, cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&L, &C, o), REDLOCK_OK);
}
/* The same with the scripted callbacks and another random source (NULL:
   the scripted one). */
static void setup_random(const redlock_config *cfg, const redlock_lock_opts *o,
                         int (*rnd)(void *, void *, size_t)) {
    redlock_callbacks cb;
    base_callbacks(&cb);
    if (rnd) cb.random = rnd;
    setup_callbacks(cfg, o, &cb);
}
static void setup_with(const redlock_config *cfg, const redlock_lock_opts *o) { setup_random(cfg, o, NULL); }
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
    cfg.drift_factor = -0.01;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.drift_factor = 0.5;
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
    for (k = 3; k < 6; k++) CHECK(starts(k, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1]) if ARGV[2] then pcall("));
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

/* Proves: a wait deadline is kept. Retries every 100 ms, wait 250 ms, node
   timeout 50: attempts at 0, 100 and 200 ms; the retry due at 300 would end
   too late, so one last attempt starts at 200 (250 - 50, the last moment
   its round can still end in time); when it fails too, TIMEOUT is reported
   at 250 ms, not before. */
static const redlock_event *last_ev(redlock_event_type t) {
    int i;
    for (i = T.evn - 1; i >= 0; i--) if (T.ev[i].type == t) return &T.ev[i];
    return NULL;
}
/* Nodes that refuse the client's AUTH or SELECT: once too few others are
   left for a quorum, the acquire ends at once with CONFIG (no retry, no
   waiting for wait_ms); the undo still goes out to every node. */
static void test_config_refused(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int k;
    base_config(&cfg, 3);
    cfg.retry_count = 5;
    base_opts(&o, 1000, 0);
    o.wait_ms = 10000;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_AUTH);
    CHECK_EQ(T.res.n, 0); /* one refusal of three: a quorum is still possible */
    redlock_on_error(&C, T.q[1].tag, REDLOCK_ERR_SELECT);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CONFIG);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    for (k = 0; k < 3; k++) CHECK(starts(3 + k, "EVAL")); /* undo on all three */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_AUTH);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_SELECT);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_CONFIG), "unknown status") != 0);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_SELECT), "unknown status") != 0);
    teardown();

    /* refused by send itself (a synchronous transport), and by a NOAUTH reply */
    setup_with(&cfg, &o);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_AUTH;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOAUTH Authentication required.");
    CHECK_EQ(vote_status(1), REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CONFIG);
    teardown();

    /* one node of three refusing: held by the other two */
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_AUTH);
    ok(1);
    ok(2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    teardown();

    /* other errors are not configuration: NO_QUORUM and retries as before */
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_SERVER);
    redlock_on_error(&C, T.q[1].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    teardown();
}

/* Nodes that refuse the client's TLS (a certificate refused, an alert, an
   answer that is not TLS: the adapters say TLS only for those) are
   refusals like AUTH's: with too few others left the acquire ends at
   once, with TLS, whatever wait_ms and retry_count say; beside an AUTH
   refusal still TLS (that node's AUTH was never tried). A node that
   answers again counts again. */
static void test_tls_refused(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t t0;
    base_config(&cfg, 3);
    cfg.retry_count = 1000;
    base_opts(&o, 1000, 0);
    o.wait_ms = 30000;
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.n, 0); /* one of three: a quorum is still possible */
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.now, t0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TLS);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_TLS);
    teardown();

    /* TLS beside AUTH: TLS; refused by send itself too */
    setup_with(&cfg, &o);
    T.fail_send_node = 1;
    T.fail_send_rc = REDLOCK_ERR_TLS;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    teardown();

    /* the control: resets and timeouts over TLS are the network's: retried */
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_TRANSPORT);
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    teardown();

    /* the next acquire tries again; a node that answers counts again */
    base_config(&cfg, 1);
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[T.qn - 1].tag, REDLOCK_ERR_TLS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    while (redlock_lock_pending(&L) && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer); /* the undo */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(T.qn - 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_NO_TLS), "unknown status") != 0);
    teardown();
}

/* The decision came before the second refusal (another holder answered
   first): the refusal of the undo ends the acquire at once, not after the
   retry delay. */
static void test_config_refused_after_decision(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t t0;
    base_config(&cfg, 3);
    cfg.retry_count = 5;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil(0);                                            /* held by another */
    redlock_on_error(&C, T.q[1].tag, REDLOCK_ERR_AUTH); /* decided: LOCKED so far */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.qn, 6);                                 /* the undo on all three */
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_AUTH); /* the SET's answer: a stale tag */
    redlock_on_error(&C, T.q[5].tag, REDLOCK_ERR_AUTH); /* the undo's: counted */
    num(3, 0);
    redlock_on_error(&C, T.q[4].tag, REDLOCK_ERR_AUTH);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CONFIG);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.now, t0);
    CHECK_EQ(T.qn, 6); /* no second attempt */
    /* the next acquire still tries (someone may have fixed the node) and a
       good answer clears the node's refusal */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 9);
    ok(6);
    ok(7);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num(9, 1);
    num(10, 1);
    redlock_on_error(&C, T.q[11].tag, REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* node 2 still refuses; 0 and 1 answered: one refusal, a quorum is possible */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil(12);
    redlock_on_error(&C, T.q[13].tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK); /* nothing new yet */
    teardown();
}

static void test_wait_deadline(void) {
    redlock_lock_opts o;
    int64_t t0;
    int k = 0, attempt;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.retry_count = 100;
    o.wait_ms = 250;
    o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    t0 = T.now;
    redlock_acquire(&L);
    for (attempt = 1; attempt <= 4; attempt++) {
        CHECK(starts(k, "SET res"));
        CHECK_EQ(T.now, t0 + (attempt < 4 ? attempt - 1 : 2) * 100000);
        nil(k);                           /* held elsewhere */
        num(k + 1, 0);                    /* the undo */
        CHECK_EQ(T.res.n, 0);
        if (attempt < 4) {
            CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, attempt < 3 ? 100000 : 0);
            run_until_sent(k + 2);
        }
        k += 2;
    }
    CHECK_EQ(T.timer, t0 + 250000);       /* nothing more to try: wait for the deadline */
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 0);
    advance_to(t0 + 249999);
    CHECK_EQ(T.res.n, 0);
    advance_to(t0 + 250000);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].attempts, 4);
    CHECK_EQ(T.res.r[0].elapsed_us, 250000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(last_ev(REDLOCK_EV_FAILED)->status, REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(T.qn, 8);
    teardown();
}

/* Proves: a wait shorter than the retry delay still gets its last attempt
   (at wait - node timeout) instead of giving up after the first; a wait
   shorter than one node timeout gives up at the deadline. */
static void test_wait_shorter_than_delay(void) {
    redlock_lock_opts o;
    int64_t t0;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        setup_n(1, 0, 1000);
        redlock_lock_deinit(&L);
        memset(&o, 0, sizeof o);
        o.key = "res";
        o.ttl_ms = 1000;
        o.retry_delay_ms = 500;
        o.wait_ms = pass ? 30 : 200;
        o.on_result = t_result;
        redlock_lock_init(&L, &C, &o);
        t0 = T.now;
        redlock_acquire(&L);
        nil(0);
        num(1, 0);
        CHECK_EQ(T.res.n, 0);
        if (!pass) {
            CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 150000);
            run_until_sent(2);
            CHECK_EQ(T.now, t0 + 150000);
            CHECK(starts(2, "SET res"));
            ok(2);                        /* won on the last try */
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        } else {
            CHECK_EQ(T.timer, t0 + 30000);
            advance_to(t0 + 30000);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
            CHECK_EQ(T.res.r[0].elapsed_us, 30000);
        }
        teardown();
    }
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

/* Proves: a result that cancels an operation before any node voted says
   so with no votes, no validity and no fence: an acquire and a user
   extend overtaken by release. */
static void test_cancelled_result_fields(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CANCELLED);
    CHECK_EQ(T.res.r[0].votes, 0);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.res.r[0].validity_us, 0);
    CHECK_EQ(T.res.r[0].fence, 0);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_extend(&L, 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_CANCELLED);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[1].validity_us, 0);
    teardown();
}

/* Proves: a user's extend that finds the lock gone is answered before the
   LOST result, with why and with no votes (no node extended it). */
static void test_extend_result_when_lost(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_extend(&L, 0);
    num(3, 0); num(4, 0);                     /* gone on a majority */
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].votes, 0);
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

/* The state by the clock: a held lock past its validity reads LOST (with
   its reason) before any timer call; the next call on it reports the LOST
   first and then acts on a lost lock. */
static void test_state_by_clock(void) {
    int64_t until;
    setup_n(1, 0, 500);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    redlock_acquire(&L);
    ok(0);
    until = redlock_lock_valid_until(&L);
    T.now = until - 250;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_remaining_us(&L), 250);
    CHECK_EQ(redlock_lock_lost_reason(&L), 0);
    T.now = until; /* no timer call */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    CHECK_EQ(redlock_lock_valid_until(&L), until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), 1); /* not reported yet */
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED); /* reported by the call */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();

    /* acquire on a lock that ran out: LOST first, then a new attempt */
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok(0);
    T.now = redlock_lock_valid_until(&L) + 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    teardown();

    /* release likewise: the lock is already lost */
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok(0);
    T.now = redlock_lock_valid_until(&L) + 1;
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    teardown();
    CHECK_EQ(redlock_lock_remaining_us(NULL), 0);
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
    char cmd[2048], out[64];
    const char *scripts[13];
    const char *shas[13] = {"5936c7a91d6097fc50292f9e90ec2ed3e513e629", "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394",
                           "fe1913b107883a8d56dff9985f4ef19d96780450", "a1289050cd9364128e095b730eb637347a5922ca",
                           "8713768fb046a3ec2f3a21545b1de720ccbd516d", "08c7557d4c89b0ab5b53a3a0ef90a225f2be7888",
                           "48e95165afb854dba74eb9d2c02d43ed7c87f94a", "65d74805f790707d154a364cfbd39c5a901e9c59",
                           "9e90d98820f6fd7cf2d8944664d249d42ea91993", "9aed5e9a15c9204fc81f0a524e790f2b5de165d1",
                           "c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef", "7a52dde132918709d3bd90a737169b8408765e20",
                           "4fa1c0304cf0189b45ec8ec2c59d15e46e862158"};
    int k;
    scripts[0] = redlock_release_script();
    scripts[1] = redlock_extend_script();
    scripts[2] = redlock_reentrant_acquire_script();
    scripts[3] = redlock_reentrant_release_script();
    scripts[4] = redlock_reentrant_extend_script();
    scripts[5] = redlock_fence_acquire_script();
    scripts[6] = redlock_fence_write_back_script();
    scripts[7] = redlock_fenced_set_script();
    scripts[8] = redlock_reentrant_fence_acquire_script();
    scripts[9] = redlock_reentrant_fence_write_back_script();
    scripts[10] = redlock_rw_acquire_script();
    scripts[11] = redlock_rw_release_script();
    scripts[12] = redlock_rw_extend_script();
    for (k = 0; k < 13; k++) {
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
    for (s = 0; s >= -52; s--) {
        const char *m = redlock_strerror(s);
        CHECK(m != NULL);
        if ((s <= -13 && s >= -19) || (s <= -31 && s >= -39) || s == -52) CHECK_STR(m, "unknown status");
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

/* ---- many locks on one client: the lock table and the deadline heap ----
   A transport of its own: it keeps every tag sent, in a growable array, and
   the test answers them in any order. */
typedef struct many {
    redlock_tag *tag;
    int *node;
    size_t n, cap;
    int64_t now;
    int64_t timer;
    int max_rounds;         /* the next m_client's (0: no bound that matters) */
} many;
static many M;
static int64_t m_now(void *u) { (void)u; return M.now; }
static void m_timer(void *u, int64_t d) { (void)u; M.timer = d; }
static int m_send(void *u, int node, const redlock_command *cmd, redlock_tag tag) {
    (void)u;
    (void)cmd;
    if (M.n == M.cap) {
        size_t cap = M.cap ? M.cap * 2 : 1024;
        redlock_tag *t = (redlock_tag *)realloc(M.tag, cap * sizeof *t);
        int *nd;
        if (!t) return REDLOCK_ERR_NOMEM;
        M.tag = t;
        nd = (int *)realloc(M.node, cap * sizeof *nd);
        if (!nd) return REDLOCK_ERR_NOMEM;
        M.node = nd;
        M.cap = cap;
    }
    M.tag[M.n] = tag;
    M.node[M.n++] = node;
    return 0;
}
static void m_ok_all(redlock_client *c) {
    redlock_reply r;
    size_t k, n = M.n;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS;
    r.str = "OK";
    r.len = 2;
    M.n = 0;
    /* back to front: the reverse of the sending order */
    for (k = n; k-- > 0;) redlock_on_reply(c, M.tag[k], &r);
}
static void m_client(redlock_client *c, redlock_lock **table, size_t size) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    cfg.lock_table = table;
    cfg.lock_table_size = size;
    cfg.max_rounds = M.max_rounds ? M.max_rounds : -1; /* (0: every round at once; turns: test_turns_*) */
    memset(&cb, 0, sizeof cb);
    cb.send = m_send;
    cb.set_timer = m_timer;
    cb.now_us = m_now;
    cb.wall_ms = t_wall;
    cb.random = t_random;
    M.n = 0; /* the arrays stay for the next client: m_free() */
    M.now = 1000000;
    M.timer = REDLOCK_NO_DEADLINE;
    CHECK_EQ(redlock_client_init(c, &cfg, &cb, NULL), REDLOCK_OK);
}
static void m_free(void) {
    free(M.tag);
    free(M.node);
    memset(&M, 0, sizeof M);
}
/* The earliest deadline of the locks, by looking at each (white box). */
static int64_t m_brute_deadline(redlock_lock *locks, int n) {
    int64_t d = REDLOCK_NO_DEADLINE;
    int i;
    for (i = 0; i < n; i++)
        if (locks[i]._magic && locks[i]._deadline < d) d = locks[i]._deadline;
    return d;
}

/* Proves: at the default limits a lock handle is at most 512 bytes (16
   bytes per node). */
static void test_handle_size(void) {
    printf("# sizeof(redlock_lock) %u, sizeof(redlock_client) %u, per node %u\n", (unsigned)sizeof(redlock_lock),
           (unsigned)sizeof(redlock_client), (unsigned)sizeof(redlock__node));
#if REDLOCK_MAX_NODES == 16 && REDLOCK_MAX_KEY == 512
    CHECK(sizeof(redlock_lock) <= 512);
#endif
    CHECK(sizeof(redlock__node) <= 16);
}

/* Proves: lock_init copies the key into one block, freed by lock_deinit, by
   initialising the handle again and by client_deinit (once: a later
   lock_deinit frees nothing); a refused allocation is NOMEM, leaves the
   handle detached (also one that was initialised), and a later init works;
   the key used is the one given at init, not the caller's buffer later. */
/* Proves: redlock_client_deinit detaches every lock of the client, in
   every bucket of its table (200 locks: each bucket holds some), freeing
   each key block and the table the locks made grow; each lock then says
   DETACHED. */
static void test_client_deinit_every_lock(void) {
    static redlock_lock many[200];
    redlock_lock_opts o;
    char key[16];
    int i;
    long before = key_blocks;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    base_opts(&o, 1000, 0);
    o.key = key;
    for (i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k:%d", i);
        CHECK_EQ(redlock_lock_init(&many[i], &C, &o), REDLOCK_OK);
    }
    CHECK_EQ(key_blocks, before + 200 + 1); /* and one table: 64 entries grew to 256 */
    CHECK_EQ(C._table_mask + 1, 256);
    redlock_client_deinit(&C);
    CHECK_EQ(key_blocks, before);
    for (i = 0; i < 200; i++) CHECK_EQ(redlock_acquire(&many[i]), REDLOCK_ERR_DETACHED);
    for (i = 0; i < 200; i++) redlock_lock_deinit(&many[i]);
    CHECK_EQ(key_blocks, before);
}

/* Proves: a transport status the core does not know (below -128, or not
   negative) counts as TRANSPORT, from on_error and from send alike. */
static void test_foreign_status_is_transport(void) {
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[0].tag, -500);
    redlock_on_error(&C, T.q[1].tag, 7);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    teardown();
}

/* Proves: an extend script's 0 ("the key is not ours") is a node's no,
   with status 0, not a malformed reply. */
static void test_extend_zero_is_a_no(void) {
    int k;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    for (k = 0; k < 3; k++) ok(k);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    num(3, 1);
    num(4, 0);
    CHECK_EQ(vote_status(4 - 3), 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->vote, 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->held_by_other, 0);
    teardown();
}

static void test_key_block(void) {
    redlock_lock extra[3];
    redlock_lock_opts o;
    char key[16];
    int i;
    long before = key_blocks;
    setup_n(1, 0, 1000);
    CHECK_EQ(key_blocks, before + 1);
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK); /* again: the old block goes */
    CHECK_EQ(key_blocks, before + 1);
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
    redlock_lock_deinit(&L);                        /* twice: nothing more */
    CHECK_EQ(key_blocks, before);
    /* the caller's buffer changes after init: the lock keeps its key */
    snprintf(key, sizeof key, "k:%d", 1);
    o.key = key;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    snprintf(key, sizeof key, "x:%d", 2);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(strncmp(T.q[T.qn - 1].cmd, "SET k:1 ", 8), 0);
    ok(T.qn - 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* refused: NOMEM, and the handle that was initialised is detached */
    refuse_malloc = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NOMEM);
    refuse_malloc = 0;
    CHECK_EQ(key_blocks, before);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    for (i = 0; i < 3; i++) CHECK_EQ(redlock_lock_init(&extra[i], &C, &o), REDLOCK_OK);
    CHECK_EQ(key_blocks, before + 4);
    redlock_client_deinit(&C);                      /* frees every block */
    CHECK_EQ(key_blocks, before);
    for (i = 0; i < 3; i++) redlock_lock_deinit(&extra[i]);
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
}

/* Proves: the block lock_init allocates has the size section 5 gives:
   REDLOCK_KEY_BLOCK_SIZE(key length), a reentrant lock REDLOCK_MAX_OWNER +
   9 more, a fenced lock REDLOCK_FENCE_PREFIX and the key more (both: both),
   a readers-writer lock nothing more. */
static void test_key_block_sizes(void) {
    static const size_t prefix = sizeof REDLOCK_FENCE_PREFIX - 1;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    base_opts(&o, 1000, 0);
    o.key = "abcde";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5));
    o.reentrant = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + REDLOCK_MAX_OWNER + 9);
    o.fence = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + REDLOCK_MAX_OWNER + 9 + prefix + 5);
    o.reentrant = 0;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + prefix + 5);
    o.fence = 0;
    o.access = REDLOCK_ACCESS_SHARED;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5));
    teardown();
}

/* Answers every queued command with integer 1 (an extend that worked). */
static void m_extended_all(redlock_client *c) {
    redlock_reply r;
    size_t k, n = M.n;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_INTEGER;
    r.integer = 1;
    M.n = 0;
    for (k = 0; k < n; k++) redlock_on_reply(c, M.tag[k], &r);
}

/* Proves: 256 watchdog locks taken at one instant spread their renewals:
   the client's first lock renews exactly every renew_every, each other the
   first time within the last 1/16 of it (never later), at 200 or more
   different times, and then exactly every renew_every (its phase kept). */
static void test_renewals_spread(void) {
    enum { NL = 256 };
    const int64_t every = 3000000; /* ttl 9 s */
    redlock_client c;
    redlock_lock *locks = (redlock_lock *)calloc(NL, sizeof *locks);
    int64_t first[NL], second[NL], t0;
    redlock_lock_opts o;
    char key[32];
    int i, j, distinct = 0, ticks = 0;
    if (!locks) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 9000;
    o.watchdog = 1;
    for (i = 0; i < NL; i++) {
        snprintf(key, sizeof key, "spread:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
        first[i] = second[i] = -1;
    }
    t0 = M.now;
    m_ok_all(&c);
    for (i = 0; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    while (M.timer != REDLOCK_NO_DEADLINE && M.timer <= t0 + 2 * every && ticks++ < 4 * NL) {
        size_t k;
        M.now = M.timer;
        redlock_on_timer(&c);
        for (k = 0; k < M.n; k++)
            for (i = 0; i < NL; i++)
                if (redlock__tag_lock_id(M.tag[k]) == locks[i]._id) {
                    if (first[i] < 0) first[i] = M.now;
                    else if (second[i] < 0) second[i] = M.now;
                }
        m_extended_all(&c);
    }
    CHECK_EQ(first[0], t0 + every);
    CHECK_EQ(second[0], t0 + 2 * every);
    for (i = 0; i < NL; i++) {
        int seen = 0;
        CHECK(first[i] > t0 + every - every / 16 && first[i] <= t0 + every);
        CHECK_EQ(second[i] - first[i], every);
        for (j = 0; j < i; j++) seen |= first[j] == first[i];
        distinct += !seen;
    }
    printf("# %d locks renewed at %d different times\n", NL, distinct);
    CHECK(distinct >= 200);
    for (i = 0; i < NL; i++) redlock_lock_deinit(&locks[i]);
    redlock_client_deinit(&c);
    free(locks);
    m_free();
}

/* Proves: a caller's lock table must be a power of two up to 2^24. */
static void test_lock_table_config(void) {
    static redlock_lock *table[1024];
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    size_t bad[] = {0, 3, 1000, ((size_t)1 << 24) + 1, (size_t)1 << 25};
    size_t i;
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    memset(&cb, 0, sizeof cb);
    cb.send = m_send;
    cfg.lock_table = table;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.lock_table_size = bad[i];
        CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    }
    cfg.lock_table_size = 1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    cfg.lock_table_size = 1024;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    cfg.lock_table = NULL; /* the size is then ignored */
    cfg.lock_table_size = 3;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
}

/* Proves, with the built-in table and with a caller's (larger and smaller
   than the lock count): 3000 watchdog locks with different ttls are all
   acquired from replies in reverse order; the timer is always the earliest
   lock's deadline; each tick renews exactly the locks that are due; tags
   of deinitialised locks (memory reused by new locks, then freed) are
   ignored; re-initialising a live lock keeps one entry. */
static void test_many_locks_table_and_heap(void) {
    static redlock_lock *table[4096];
    size_t sizes[] = {0, 4096, 16};
    size_t z;
    for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        enum { NL = 3000 };
        redlock_client c;
        redlock_lock *locks = (redlock_lock *)calloc(NL, sizeof *locks);
        redlock_lock_opts o;
        redlock_tag *old;
        size_t nold, k;
        int i, tick, held = 0;
        char key[32];
        if (!locks) { CHECK(0); return; }
        m_client(&c, sizes[z] ? table : NULL, sizes[z]);
        memset(&o, 0, sizeof o);
        o.key = key;
        o.watchdog = 1;
        for (i = 0; i < NL; i++) {
            snprintf(key, sizeof key, "many:%d", i);
            o.ttl_ms = 3000 + (i * 7919) % 5000;
            CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
            CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
        }
        CHECK_EQ(M.n, NL);
        CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        m_ok_all(&c);
        for (i = 0; i < NL; i++) held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
        CHECK_EQ(held, NL);
        CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        CHECK_EQ(redlock_next_deadline(&c), M.timer);
        /* ticks: each renews the due locks only */
        for (tick = 0; tick < 40 && M.timer != REDLOCK_NO_DEADLINE; tick++) {
            int due = 0;
            int64_t at = M.timer;
            for (i = 0; i < NL; i++) due += locks[i]._deadline <= at;
            M.now = at;
            redlock_on_timer(&c);
            CHECK_EQ((int)M.n, due);
            m_ok_all(&c);
            CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        }
        CHECK(tick == 40);
        /* stale tags: renewals of the first half are answered only after
           those locks were deinitialised and their memory re-initialised */
        M.now = M.timer;
        redlock_on_timer(&c);
        old = (redlock_tag *)malloc((M.n + 1) * sizeof *old);
        if (!old) { CHECK(0); return; }
        nold = M.n;
        memcpy(old, M.tag, M.n * sizeof *old);
        M.n = 0;
        for (i = 0; i < NL / 2; i++) {
            redlock_lock_deinit(&locks[i]);
            snprintf(key, sizeof key, "again:%d", i);
            o.ttl_ms = 60000;
            o.watchdog = 0;
            CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        }
        /* re-initialising a live lock: one entry, not two */
        CHECK_EQ(redlock_lock_init(&locks[0], &c, &o), REDLOCK_OK);
        {
            redlock_reply r;
            memset(&r, 0, sizeof r);
            r.type = REDLOCK_REPLY_INTEGER;
            r.integer = 1;
            for (k = 0; k < nold; k++) redlock_on_reply(&c, old[k], &r);
        }
        CHECK_EQ(M.n, 0); /* nothing followed from a stale answer */
        for (i = 0; i < NL / 2; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_IDLE);
        for (i = NL / 2; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
        /* every lock deinitialised: the table and the heap are empty */
        for (i = 0; i < NL; i++) redlock_lock_deinit(&locks[i]);
        CHECK_EQ(redlock_next_deadline(&c), REDLOCK_NO_DEADLINE);
        CHECK_EQ(M.timer, REDLOCK_NO_DEADLINE);
        {
            uint32_t b;
            int left = 0;
            for (b = 0; b <= c._table_mask; b++) left += c._table[b] != NULL;
            CHECK_EQ(left, 0);
        }
        redlock_client_deinit(&c);
        free(locks);
        free(old);
    }
    m_free();
}

/* ---- turns: how many rounds a client runs at once ---- */

/* Client C on one node with max_rounds and the node timeout given; lock L
   (ttl 10 s) and locks[0..n) (ttl ttl_ms, user = &locks[i]). */
static void setup_turns(int max_rounds, int64_t node_timeout_ms, redlock_lock *locks, int n, int64_t ttl_ms,
                        int watchdog) {
    redlock_config cfg;
    redlock_lock_opts o;
    int i;
    base_config(&cfg, 1);
    cfg.max_rounds = max_rounds;
    cfg.node_timeout_ms = node_timeout_ms;
    base_opts(&o, 10000, 0);
    setup_with(&cfg, &o);
    base_opts(&o, ttl_ms, watchdog);
    for (i = 0; i < n; i++) {
        o.user = &locks[i];
        CHECK_EQ(redlock_lock_init(&locks[i], &C, &o), REDLOCK_OK);
    }
}
/* Command k is for lock lk. */
static int cmd_of(int k, const redlock_lock *lk) { return k < T.qn && redlock__tag_lock_id(T.q[k].tag) == lk->_id; }

/* Proves: a client runs at most max_rounds rounds at once (2): the third
   and fourth acquire send nothing and their rounds' clocks have not
   started; they start, in order, at the redlock_on_timer the client asks
   for at once when a turn is free, and their node timeout counts from
   then: answered 40 ms after that, 60 ms after redlock_acquire (past the
   50 ms node timeout), they win, the validity counted from their start.
   Releases wait in the same line, in order of arrival. */
static void test_turns_wait_in_line(void) {
    redlock_lock lk[4];
    int64_t t0, t1;
    int i;
    setup_turns(2, 50, lk, 4, 10000, 0);
    t0 = T.now;
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_acquire(&lk[i]), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    CHECK(cmd_of(0, &lk[0]) && cmd_of(1, &lk[1]));
    CHECK(redlock_lock_pending(&lk[2]) && redlock_lock_pending(&lk[3]));
    CHECK_EQ(redlock_lock_state(&lk[3]), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(T.timer, t0 + 50000);               /* the running rounds' deadline only */
    T.now = t0 + 20000;
    ok(0);
    CHECK_EQ(T.timer, T.now);                    /* a turn is free: handed on now */
    CHECK_EQ(T.qn, 2);
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 3);
    CHECK(cmd_of(2, &lk[2]));
    ok(1);
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 4);
    CHECK(cmd_of(3, &lk[3]));
    t1 = T.now;
    advance_to(t0 + 60000);                      /* their rounds' deadline has not come */
    ok(2); ok(3);
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_lock_state(&lk[i]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_valid_until(&lk[3]), t1 + 10000 * 1000 - 100000 - 2000);
    /* releases of 3, 1, 0, 2, in that order */
    CHECK_EQ(redlock_release(&lk[3]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[1]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[0]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[2]), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    CHECK(cmd_of(4, &lk[3]) && cmd_of(5, &lk[1]));
    num(5, 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 7 && cmd_of(6, &lk[0]));
    num(4, 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 8 && cmd_of(7, &lk[2]));
    num(6, 1); num(7, 1);
    CHECK_EQ(T.res.n, 8);
    for (i = 0; i < T.res.n; i++) CHECK_EQ(T.res.r[i].status, REDLOCK_OK);
    for (i = 0; i < 4; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: held locks get turns before the others: with the one turn
   taken, a renewal that comes due waits and then goes before an acquire
   that waited longer; a held lock whose renewal still waits when its
   validity runs out is told LOST then (EXPIRED), the timer asked for that
   instant, and its cleanup goes out at once, beyond the turns. */
static void test_turns_held_first(void) {
    redlock_lock lk[3];
    int64_t due, until;
    int k;
    setup_turns(1, 5000, lk, 3, 10000, 0);
    redlock_lock_deinit(&lk[0]);
    {
        redlock_lock_opts o;
        base_opts(&o, 3000, 1);                  /* renewed every second */
        o.key = "renewed";
        o.user = &lk[0];
        CHECK_EQ(redlock_lock_init(&lk[0], &C, &o), REDLOCK_OK);
    }
    redlock_acquire(&lk[0]);
    ok(0);
    due = redlock_next_deadline(&C);             /* its first renewal */
    T.now = due - 100000;
    redlock_acquire(&lk[1]);                     /* takes the turn: command 1 */
    T.now = due - 50000;
    redlock_acquire(&lk[2]);                     /* waits */
    advance_to(due);                             /* the renewal waits too */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.timer, redlock_lock_valid_until(&lk[0])); /* (before lk[1]'s node timeout) */
    T.now = due + 10000;
    ok(1);
    redlock_on_timer(&C);
    CHECK(T.qn == 3 && cmd_of(2, &lk[0]) && starts(2, "EVALSHA")); /* the renewal, not lk[2]'s SET */
    num(2, 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 4 && cmd_of(3, &lk[2]) && starts(3, "SET"));    /* unanswered: the turn stays taken */
    until = redlock_lock_valid_until(&lk[0]);
    advance_to(redlock_next_deadline(&C));       /* the next renewal: it waits */
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(T.timer, until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_HELD);
    advance_to(until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(T.qn == 5 && cmd_of(4, &lk[0]) && starts(4, "EVAL ")); /* the cleanup */
    CHECK_EQ(redlock_lock_state(&lk[2]), REDLOCK_STATE_ACQUIRING);
    for (k = 0; k < 3; k++) redlock_lock_deinit(&lk[k]);
    teardown();
}

/* Proves: the hold cap holds whatever the turns do: with the one turn
   taken, a watchdog renewal that came due inside max_hold_ms (1.5 s) but
   whose turn comes only past it is dropped: nothing of it is sent, the
   validity stays that of the acquire and the lock is told LOST
   (HOLD_LIMIT) when it ends. A user's extend past the cap is no renewal:
   it waits for its turn as well, then goes out, and its validity counts
   from its round's start (the turn), not from the call. */
static void test_turns_renewal_waits_across_cap(void) {
    redlock_lock lk[2];
    redlock_lock_opts o;
    int64_t t0, due, until, turn;
    setup_turns(1, 5000, lk, 2, 10000, 0);
    redlock_lock_deinit(&lk[0]);
    base_opts(&o, 3000, 1);                      /* renewed every second */
    o.key = "capped";
    o.max_hold_ms = 1500;
    o.user = &lk[0];
    CHECK_EQ(redlock_lock_init(&lk[0], &C, &o), REDLOCK_OK);
    t0 = T.now;
    redlock_acquire(&lk[0]);
    ok(0);
    until = redlock_lock_valid_until(&lk[0]);
    CHECK_EQ(until, t0 + 3000000 - 30000 - 2000);
    due = redlock_next_deadline(&C);             /* its first renewal, inside the cap */
    CHECK(due < t0 + 1500000);
    T.now = due - 1000;
    redlock_acquire(&lk[1]);                     /* takes the turn: command 1 */
    advance_to(due);                             /* the renewal waits */
    CHECK_EQ(T.qn, 2);
    CHECK(redlock_lock_pending(&lk[0]));
    T.now = t0 + 1600000;                        /* past the cap */
    ok(1);
    redlock_on_timer(&C);                        /* the turn comes: the renewal is dropped */
    CHECK_EQ(T.qn, 2);
    CHECK(!redlock_lock_pending(&lk[0]));
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 0);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_next_deadline(&C), until);
    advance_to(until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
    CHECK(T.qn == 3 && cmd_of(2, &lk[0]) && starts(2, "EVAL ")); /* the cleanup */
    num(2, 1);
    /* again, held past the cap: the user's extend waits, then goes out */
    t0 = T.now;
    redlock_acquire(&lk[0]);
    ok(3);
    T.now = t0 + 1600000;
    CHECK_EQ(redlock_release(&lk[1]), REDLOCK_OK); /* takes the turn: command 4 */
    CHECK_EQ(redlock_extend(&lk[0], 1000), REDLOCK_OK);
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), T.now + 1000000 - 10000 - 2000); /* cut at the call */
    T.now += 40000;
    num(4, 1);
    turn = T.now;
    redlock_on_timer(&C);
    CHECK(T.qn == 6 && cmd_of(5, &lk[0]) && starts(5, "EVALSHA"));
    T.now += 1000;
    num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), turn + 1000000 - 10000 - 2000);
    redlock_lock_deinit(&lk[0]);
    redlock_lock_deinit(&lk[1]);
    teardown();
}

/* Proves: a release that waits for its turn goes out when the lock is
   deinitialised (as redlock_release() then redlock_lock_deinit() did
   without the wait: the key is not kept); a waiting acquire sends
   nothing; later answers to them are ignored. */
static void test_turns_deinit_sends_waiting_release(void) {
    redlock_lock lk[3];
    char token[REDLOCK_TOKEN_LEN + 1];
    setup_turns(1, 50, lk, 3, 10000, 0);
    redlock_acquire(&lk[0]);
    ok(0);
    memcpy(token, redlock_lock_token(&lk[0]), sizeof token);
    redlock_acquire(&lk[1]);                     /* the turn: command 1 */
    CHECK_EQ(redlock_release(&lk[0]), REDLOCK_OK);
    redlock_acquire(&lk[2]);
    CHECK_EQ(T.qn, 2);
    redlock_lock_deinit(&lk[0]);
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "EVALSHA") && strstr(T.q[2].cmd, token) != NULL);
    redlock_lock_deinit(&lk[2]);
    CHECK_EQ(T.qn, 3);
    num(2, 1);                                   /* ignored */
    ok(1);
    CHECK_EQ(redlock_lock_state(&lk[1]), REDLOCK_STATE_HELD);
    CHECK_EQ(T.res.n, 2);                        /* lk[0]'s and lk[1]'s acquire */
    redlock_lock_deinit(&lk[1]);
    teardown();
}

/* Proves: while rounds wait, the number of turns adapts: from 16 (at most
   max_rounds, here 64), a round decided within half the node timeout adds
   one and a slower one halves them, at most once per round trip (a round
   that started before the change does not count). */
static void test_turns_window_adapts(void) {
    static redlock_lock lk[60];
    int i;
    setup_turns(64, 50, lk, 60, 10000, 0);
    for (i = 0; i < 60; i++) redlock_acquire(&lk[i]);
    CHECK_EQ(T.qn, 16);
    T.now += 1000;
    for (i = 0; i < 16; i++) ok(i);              /* fast: one more turn */
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 16 + 17);
    T.now += 30000;
    for (i = 16; i < 33; i++) ok(i);             /* 30 ms: more than half of 50: halved */
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 33 + 8);
    for (i = 0; i < 41; i++) CHECK_EQ(redlock_lock_state(&lk[i]), i < 33 ? REDLOCK_STATE_HELD : REDLOCK_STATE_ACQUIRING);
    for (i = 0; i < 60; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: max_rounds 0 is the default (128, from redlock_config_init too)
   and a negative one sets no bound: 40 acquires go out at once. */
static void test_turns_config(void) {
    redlock_config cfg;
    static redlock_lock lk[40];
    int i;
    redlock_config_init(&cfg);
    CHECK_EQ(cfg.max_rounds, 128);
    setup_turns(0, 50, lk, 40, 10000, 0);
    CHECK_EQ(C._cfg.max_rounds, 128);
    for (i = 0; i < 40; i++) redlock_lock_deinit(&lk[i]);
    teardown();
    setup_turns(-1, 50, lk, 40, 10000, 0);
    for (i = 0; i < 40; i++) redlock_acquire(&lk[i]);
    CHECK_EQ(T.qn, 40);
    for (i = 0; i < 40; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: a reply for a lock whose memory was freed after deinit is
   ignored without touching that memory (valgrind and ASan see it). */
static void test_stale_tag_of_freed_lock(void) {
    redlock_client c;
    redlock_lock *lk = (redlock_lock *)malloc(sizeof *lk), keep;
    redlock_lock_opts o;
    redlock_reply r;
    redlock_tag tag;
    if (!lk) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = "freed";
    o.ttl_ms = 1000;
    CHECK_EQ(redlock_lock_init(lk, &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&keep, &c, &o), REDLOCK_OK); /* the same bucket or not: another live lock */
    CHECK_EQ(redlock_acquire(lk), REDLOCK_OK);
    CHECK_EQ(M.n, 1);
    tag = M.tag[0];
    M.n = 0;
    redlock_lock_deinit(lk);
    free(lk);
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS;
    r.str = "OK";
    r.len = 2;
    redlock_on_reply(&c, tag, &r);
    redlock_on_error(&c, tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(M.n, 0);
    CHECK_EQ(redlock_lock_state(&keep), REDLOCK_STATE_IDLE);
    redlock_lock_deinit(&keep);
    redlock_client_deinit(&c);
    m_free();
}

/* The longest chain of the client's table, and whether every lock filed
   there is found from its id (white box). */
static size_t m_longest_chain(redlock_client *c) {
    size_t longest = 0;
    uint32_t b;
    for (b = 0; b <= c->_table_mask; b++) {
        size_t len = 0;
        redlock_lock *it;
        for (it = c->_table[b]; it; it = it->_bucket_next, len++)
            if (redlock__find(c, it->_id) != it || !redlock__filed(c, it)) return (size_t)-1;
        if (len > longest) longest = len;
    }
    return longest;
}

/* Proves: without a caller's table the client's grows with its locks
   (doubling at lock_init, from REDLOCK_LOCK_TABLE entries): 5000 acquires
   in flight while it grows from 64 entries to 8192 all get their replies
   after it grew again (to 16384, for 5000 more locks); the tags of locks
   deinitialised or initialised again before that growth stay stale (no
   command follows, the new lives stay idle); every lock is found from its
   id and the chains stay short; the tables are freed (the last by
   client_deinit). A caller's table never grows and nothing is allocated
   for it. */
static void test_lock_table_grows(void) {
    enum { NL = 5000 };
    static redlock_lock *table[16];
    redlock_client c;
    redlock_lock *locks = (redlock_lock *)calloc(2 * NL, sizeof *locks);
    redlock_lock_opts o;
    redlock_tag *tags;
    size_t ntags, k;
    long before = key_blocks;
    int i, held = 0, idle = 0;
    char key[32];
    if (!locks) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    CHECK_EQ(c._table_mask + 1, REDLOCK_LOCK_TABLE);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    for (i = 0; i < NL; i++) {
        snprintf(key, sizeof key, "grow:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
    }
    CHECK_EQ(c._table_mask + 1, 8192);
    CHECK_EQ(key_blocks, before + NL + 1); /* the keys and one table: the smaller ones were freed */
    CHECK(m_longest_chain(&c) <= 12);
    tags = (redlock_tag *)malloc(M.n * sizeof *tags);
    if (!tags) { CHECK(0); free(locks); return; }
    ntags = M.n;
    memcpy(tags, M.tag, M.n * sizeof *tags);
    M.n = 0;
    /* the first thousand deinitialised, the next thousand initialised again */
    for (i = 0; i < 1000; i++) redlock_lock_deinit(&locks[i]);
    for (i = 1000; i < 2000; i++) {
        snprintf(key, sizeof key, "again:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK_EQ(c._table_mask + 1, 8192);
    for (i = NL; i < 2 * NL; i++) {
        snprintf(key, sizeof key, "more:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK_EQ(c._table_mask + 1, 16384);
    CHECK(m_longest_chain(&c) <= 12);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        for (k = ntags; k-- > 0;) redlock_on_reply(&c, tags[k], &r);
    }
    CHECK_EQ(M.n, 0); /* nothing followed from a stale answer */
    for (i = 0; i < 2 * NL; i++) {
        held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
        idle += redlock_lock_state(&locks[i]) == REDLOCK_STATE_IDLE;
    }
    CHECK_EQ(held, NL - 2000);
    CHECK_EQ(idle, NL + 2000);
    for (i = 2000; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    for (i = 0; i < 2 * NL; i++) redlock_lock_deinit(&locks[i]);
    CHECK_EQ(c._locks, 0);
    CHECK_EQ(key_blocks, before + 1); /* the table stays until client_deinit */
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    /* a caller's table: 16 entries for 3000 locks, nothing allocated but the keys */
    m_client(&c, table, 16);
    for (i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "own:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK(c._table == table);
    CHECK_EQ(c._table_mask + 1, 16);
    CHECK_EQ(key_blocks, before + 3000);
    CHECK(m_longest_chain(&c) != (size_t)-1);
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    free(tags);
    free(locks);
    m_free();
}

/* Proves: when the table cannot grow (its block refused) lock_init says
   NOMEM and nothing changed: the table, the locks in it (all acquired from
   their replies after), the handle not initialised; initialising a lock
   that is already initialised needs no room and works; once memory is
   there again the table grows. */
static void test_lock_table_nomem(void) {
    redlock_client c;
    redlock_lock locks[REDLOCK_LOCK_TABLE + 1], spare;
    redlock_lock_opts o;
    long before = key_blocks;
    int i, rc, held = 0;
    char key[32];
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    for (i = 0; i < REDLOCK_LOCK_TABLE; i++) {
        snprintf(key, sizeof key, "full:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
    }
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE); /* the table inside the client: nothing allocated */
    refuse_above = 512;                                /* a table's block, not a key's */
    snprintf(key, sizeof key, "one-more");
    memset(&locks[REDLOCK_LOCK_TABLE], 0x5a, sizeof locks[REDLOCK_LOCK_TABLE]);
    memset(&spare, 0x5a, sizeof spare);
    rc = redlock_lock_init(&locks[REDLOCK_LOCK_TABLE], &c, &o);
    CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
    if (rc == REDLOCK_OK) redlock_lock_deinit(&locks[REDLOCK_LOCK_TABLE]);
    else CHECK(memcmp(&locks[REDLOCK_LOCK_TABLE], &spare, sizeof spare) == 0); /* not written */
    CHECK_EQ(c._table_mask + 1, REDLOCK_LOCK_TABLE);
    CHECK_EQ(c._locks, REDLOCK_LOCK_TABLE);
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE);
    CHECK_EQ(redlock_acquire(&locks[REDLOCK_LOCK_TABLE]), REDLOCK_ERR_DETACHED);
    /* initialising a live lock again takes no room */
    snprintf(key, sizeof key, "full:0:again");
    CHECK_EQ(redlock_lock_init(&locks[0], &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&locks[0]), REDLOCK_OK);
    refuse_above = 0;
    m_ok_all(&c); /* the first life's answer is stale; the others' and the new life's are found */
    for (i = 0; i < REDLOCK_LOCK_TABLE; i++) held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
    CHECK_EQ(held, REDLOCK_LOCK_TABLE);
    CHECK_EQ(M.n, 0);
    snprintf(key, sizeof key, "one-more");
    CHECK_EQ(redlock_lock_init(&locks[REDLOCK_LOCK_TABLE], &c, &o), REDLOCK_OK);
    CHECK_EQ(c._table_mask + 1, 2 * REDLOCK_LOCK_TABLE);
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE + 2);
    CHECK_EQ(m_longest_chain(&c) != (size_t)-1, 1);
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    m_free();
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
static int tags_distinct(void) {
    int a, b;
    for (a = 0; a < T.qn; a++)
        for (b = a + 1; b < T.qn; b++)
            if (T.q[a].tag == T.q[b].tag) return 0;
    return 1;
}
/* The one-command undo / cleanup: the release script itself, not EVALSHA. */
/* The undo of a failed attempt: no flag, nothing published. */
static const char *release_eval(const char *token) {
    static char buf[400];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s", redlock_release_script(), token);
    return buf;
}
/* A release, or the cleanup after LOST: the flag that publishes. */
static const char *release_eval_publish(const char *token) {
    static char buf[400];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s 1", redlock_release_script(), token);
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
    CHECK_STR(T.q[1].cmd, release_eval_publish(tok));
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: a call on a lock whose validity ran out reports LOST first; when
   on_result then deinitialises the lock and its memory is reused (here:
   overwritten), the call returns DETACHED and reads nothing of it. */
static void test_call_after_lost_freed(void) {
    int call;
    for (call = 0; call < 4; call++) {
        int rc = 0;
        setup_n(1, 0, 1000);
        T.deinit_on_lost = 1;
        T.scribble_on_lost = 1;
        redlock_acquire(&L);
        ok(0);
        T.now = redlock_lock_valid_until(&L); /* no timer call: the next call settles it */
        switch (call) {
        case 0: rc = redlock_acquire(&L); break;
        case 1: rc = redlock_release(&L); break;
        case 2: rc = redlock_extend(&L, 0); break;
        default: rc = redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 0); break;
        }
        CHECK_EQ(rc, REDLOCK_ERR_DETACHED);
        CHECK_EQ(T.res.n, 2);
        CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
        CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
        T.deinit_on_lost = T.scribble_on_lost = 0;
        memset(&L, 0, sizeof L);
        redlock_client_deinit(&C);
    }
}

/* Proves: a transport that refuses a command with QUEUE_FULL costs that
   node's vote only; an operation that then misses its quorum ends
   OVERLOADED (acquire, extend, release), and NO_QUORUM when the missing
   answers were plain node failures. */
static void test_queue_full_overloaded(void) {
    /* acquire on N=3 with node 0's queue full: held by the other two */
    setup_no_retry(3, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_QUEUE_FULL);
    ok(0);
    ok(1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* extend: node 0 full, node 1 fails, node 2 answers: too few */
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    redlock_on_error(&C, T.q[T.qn - 2].tag, REDLOCK_ERR_TRANSPORT);
    num(T.qn - 1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_OVERLOADED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    /* release: the same */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[T.qn - 2].tag, REDLOCK_ERR_TRANSPORT);
    num(T.qn - 1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_OVERLOADED);
    teardown();
    /* a single node whose queue is full: the acquire ends OVERLOADED */
    setup_no_retry(1, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_OVERLOADED);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_OVERLOADED), "unknown status") != 0);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_QUEUE_FULL), "unknown status") != 0);
    teardown();
    /* a node error of the adapters' (TLS) is the vote's status, as given;
       a refusal, it ends the acquire as its own (test_tls_refused) */
    setup_no_retry(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_on_error(&C, T.q[T.qn - 1].tag, REDLOCK_ERR_TLS);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TLS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_TLS), "unknown status") != 0);
    teardown();
    /* the control: a plain transport failure is NO_QUORUM */
    setup_no_retry(1, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_TRANSPORT;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
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
    num(1, 0);
    CHECK_EQ(T.res.n, 0);                    /* the last try, as late as can still end in time */
    CHECK_EQ(T.timer, T.now - 1 + max * 1000 - 50000);
    advance_to(T.timer);
    nil(2);
    num(3, 0);
    CHECK_EQ(T.timer, T.now + 50000);        /* then the deadline */
    advance_to(T.timer);
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

/* ======================================================================= */
/* Behaviour a mutation of the core must not get past: each test below     */
/* checks statuses, commands, states, deadlines and events exactly.       */
/* ======================================================================= */

static const char EXTEND_SHA[] = "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ";
static const char RELEASE_SHA[] = "EVALSHA 5936c7a91d6097fc50292f9e90ec2ed3e513e629 1 res ";

/* A reply held in a malloc'd buffer of exactly len bytes (no NUL after it),
   so that a read past its end shows under ASan / valgrind. */
static void rep_exact(int k, redlock_reply_type type, const char *s, size_t len) {
    char *buf = (char *)malloc(len ? len : 1);
    CHECK(buf != NULL);
    if (!buf) return;
    memcpy(buf, s, len);
    rep_raw(k, type, buf, len);
    free(buf);
}

/* ---- 1. a lock without on_result ---- */

/* Proves: with on_result NULL and the watchdog on, renewals go out every ttl/3, the lock stays HELD, and when they fail it is LOST (TRANSPORT) by its validity, seen through state, lost_reason and EV_LOST; it can be acquired again. */
static void test_no_callback_lock_renews(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int64_t t0, until;
    int i, k, q;
    base_config(&cfg, 3);
    base_opts(&o, 900, 1);
    o.on_result = NULL;
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(redlock_next_deadline(&C), t0 + 50000);
    ok(0);
    ok(1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 900000 - drift_us(900, 0));
    CHECK_EQ(T.timer, t0 + 300000);
    CHECK_EQ(redlock_next_deadline(&C), t0 + 300000);
    ok(2);                                /* straggler: nothing changes */
    for (i = 1; i <= 4; i++) {
        advance_to(T.timer);
        CHECK_EQ(T.now, t0 + i * 300000);
        CHECK_EQ(T.qn, 3 + 3 * i);
        k = T.qn - 3;
        CHECK(starts(k, EXTEND_SHA) && ends(k, " 900"));
        CHECK_EQ(redlock_lock_pending(&L), 1);
        num(k, 1);
        num(k + 1, 1);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), i);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_lock_valid_until(&L), T.now + 900000 - drift_us(900, 0));
        CHECK_EQ(T.timer, T.now + 300000);
        CHECK_EQ(redlock_next_deadline(&C), T.now + 300000);
        num(k + 2, 1);
    }
    /* from now on no renewal is answered */
    until = redlock_lock_valid_until(&L);
    for (i = 0; i < 100 && redlock_lock_state(&L) == REDLOCK_STATE_HELD; i++) {
        CHECK(T.timer <= until);
        advance_to(T.timer);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(T.now, until);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(redlock_lock_valid_until(&L), 0);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 2);
    ev = last_ev(REDLOCK_EV_LOST);
    CHECK(ev && ev->status == REDLOCK_ERR_TRANSPORT && ev->op == REDLOCK_OP_LOST);
    CHECK_EQ(count_cmd(T.qn - 3, "EVAL if redis.call('get'"), 3);   /* cleanup on every node */
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    q = T.qn;
    advance_to(T.now + 50000);            /* the cleanup times out */
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, q + 3);
    CHECK(starts(q, "SET res "));
    ok(q); ok(q + 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_lost_reason(&L), 0);
    CHECK_EQ(T.res.n, 0);
    teardown();
}

/* Proves: with on_result NULL and no watchdog, extend / release / a failing acquire / expiry all move the state and the timer as with a callback. */
static void test_no_callback_lock_ops(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int64_t t0, t1;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.on_result = NULL;
    setup_with(&cfg, &o);
    t0 = T.now;
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(T.timer, t0 + 1000000 - drift_us(1000, 0));   /* expiry, no renewal */
    T.now += 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 3000), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 3000), REDLOCK_ERR_BUSY);
    CHECK(starts(1, EXTEND_SHA) && ends(1, " 3000"));
    num(1, 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 3000000 - drift_us(3000, 0));
    CHECK_EQ(T.timer, t1 + 3000000 - drift_us(3000, 0));
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 1);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_RELEASING);
    CHECK(starts(2, RELEASE_SHA));
    num(2, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ev = last_ev(REDLOCK_EV_RELEASED);
    CHECK(ev && ev->status == REDLOCK_OK && ev->votes == 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    /* a failing acquire: 3 attempts, then IDLE */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil(3);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    num(4, 0);
    CHECK_EQ(T.timer, T.now + 100000);
    run_until_sent(5);
    nil(5); num(6, 0);
    run_until_sent(7);
    nil(7);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev && ev->status == REDLOCK_ERR_LOCKED && ev->attempt == 3);
    num(8, 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    /* held, then expires */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    t0 = T.now;
    ok(9);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(t0 + 1000000 - drift_us(1000, 0) - 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    ev = last_ev(REDLOCK_EV_LOST);
    CHECK(ev && ev->status == REDLOCK_ERR_EXPIRED);
    CHECK(starts(10, "EVAL if redis.call('get'"));
    num(10, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);  /* lost, cleaned up: can start again */
    CHECK(starts(11, "SET res "));
    CHECK_EQ(T.res.n, 0);
    teardown();
}

/* ---- 2. legacy value parsing ---- */

/* Proves: on the acquire path (SETNX 0, GET) exactly the well-formed, expired values of at most 64 bytes are taken over (GETSET sent); everything else is another holder's (LOCKED, a "no" vote), never read past its end. */
static void test_legacy_parse_bounds(void) {
    static const struct { const char *v; int taken; } cases[] = {
        {"", 0}, {":", 0}, {":tok", 0}, {"12", 0}, {"12:", 1}, {"12:tok", 1},
        {"abc:tok", 0}, {"-5:tok", 0}, {"+5:tok", 0}, {"1 2:tok", 0}, {" 12:tok", 0}, {"12 :tok", 0},
        {"1699999999999:tok", 1},          /* wall - 1: expired */
        {"1700000000000:tok", 0},          /* == wall: not yet */
        {"1700000000001:tok", 0},
        {"000000000000000012:tok", 1},     /* 18 digits */
        {"0000000000000000012:tok", 1},    /* 19 */
        {"00000000000000000012:tok", 1},   /* 20, small value */
        {"999999999999999999:tok", 0},     /* 18 digits, far future */
        {"922337203685477580:tok", 0},
        {"9223372036854775807:tok", 0},    /* INT64_MAX */
        {"9223372036854775808:tok", 0},    /* one more */
        {"99999999999999999999:tok", 0},
        {"12:a:b", 1},
    };
    char v[REDLOCK__VALUE_MAX + 16], want[256];
    size_t k, n, max = REDLOCK__VALUE_MAX; /* the longest legacy value: a label's and 20 digits */
    for (k = 0; k < sizeof cases / sizeof cases[0] + 6; k++) {
        int taken;
        if (k < sizeof cases / sizeof cases[0]) {
            n = strlen(cases[k].v);
            memcpy(v, cases[k].v, n);
            taken = cases[k].taken;
        } else {
            switch (k - sizeof cases / sizeof cases[0]) {
            case 0: n = max; memset(v, 'a', n); memcpy(v, "12:", 3); taken = 1; break;  /* exactly the bound */
            case 1: n = max + 1; memset(v, 'a', n); memcpy(v, "12:", 3); taken = 0; break;  /* one more */
            case 2: n = max; memset(v, '0', n); v[n - 1] = ':'; v[n - 2] = '1'; taken = 1; break; /* digits, ':' last */
            case 3: n = max + 1; memset(v, '0', n); v[n - 1] = ':'; v[n - 2] = '1'; taken = 0; break;
            case 4: n = max; memset(v, '0', n); v[n - 1] = '5'; taken = 0; break;   /* all digits, no ':' */
            default: n = 1; v[0] = '7'; taken = 0; break;
            }
        }
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num(0, 0);
        CHECK_STR(T.q[1].cmd, "GET res");
        rep_exact(1, REDLOCK_REPLY_STRING, v, n);
        if (count_cmd(0, "GETSET") != taken) printf("#   value %.*s: taken %d\n", (int)n, v, !taken);
        CHECK_EQ(count_cmd(0, "GETSET"), taken);
        if (taken) {
            snprintf(want, sizeof want, "GETSET res %s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
            CHECK_STR(T.q[2].cmd, want);
            CHECK_EQ(T.res.n, 0);
            rep_exact(2, REDLOCK_REPLY_STRING, v, n);   /* GETSET returns what we read: ours */
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(vote_status(0), 0);
        }
        teardown();
    }
}

/* Proves: a GETSET answer that differs from the value read (one byte, or one byte longer / shorter) is a lost race, not ours. */
static void test_legacy_getset_compares_exactly(void) {
    char seen[64], other[65];
    int k;
    memset(seen, 'a', 64);
    memcpy(seen, "12:", 3);
    for (k = 0; k < 4; k++) {
        size_t n = k == 2 ? 63 : k == 3 ? 65 : 64;
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num(0, 0);
        rep_exact(1, REDLOCK_REPLY_STRING, seen, 64);
        CHECK(starts(2, "GETSET res "));
        memcpy(other, seen, 64);
        other[64] = 'a';
        if (k == 0) other[63] = 'b';
        if (k == 1) other[3] = 'b';
        rep_exact(2, REDLOCK_REPLY_STRING, other, n);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
        teardown();
    }
}

/* Proves: on a legacy node a release / extend GET counts as ours only for "digits:token" with exactly our 32-char token; anything else is not ours (release: EXPIRED, no DEL; extend: STOLEN, no GETSET). */
static void test_legacy_release_extend_malformed_not_ours(void) {
    static const char *fmt[] = {"", ":", "%s", ":%s", "abc:%s", "-5:%s", "1 2:%s", "12:%sx", "12:x%s",
                                "12;%s", "9223372036854775808:%s", "12:%.31s", "12:0123456789abcdef0123456789abcdef"};
    static const char *good[] = {"12:%s", "9223372036854775807:%s", "0000000000000000000000012:%s"};
    char v[128], tok[REDLOCK_TOKEN_LEN + 1];
    size_t k;
    int ext;
    for (ext = 0; ext < 2; ext++) {
        for (k = 0; k < sizeof fmt / sizeof fmt[0] + sizeof good / sizeof good[0]; k++) {
            int is_good = k >= sizeof fmt / sizeof fmt[0];
            setup_legacy(1, -1, 1000);
            redlock_acquire(&L);
            num(0, 1);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
            strcpy(tok, redlock_lock_token(&L));
            snprintf(v, sizeof v, is_good ? good[k - sizeof fmt / sizeof fmt[0]] : fmt[k], tok);
            if (ext) redlock_extend(&L, 0);
            else redlock_release(&L);
            CHECK_STR(T.q[1].cmd, "GET res");
            rep_exact(1, REDLOCK_REPLY_STRING, v, strlen(v));
            if (is_good) {
                CHECK(starts(2, ext ? "GETSET res " : "DEL res"));
            } else {
                if (T.qn != 2 + ext) printf("#   \"%s\" taken as ours\n", v);
                CHECK_EQ(T.qn, 2 + (ext ? 1 : 0));  /* extend: the LOST cleanup GET only */
                CHECK_EQ(count_cmd(0, "DEL"), 0);
                CHECK_EQ(count_cmd(0, "GETSET"), 0);
                if (ext) {
                    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
                    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
                } else {
                    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
                }
            }
            CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
            teardown();
        }
    }
    /* on a node without scripts (modern values) "12:token" is not ours either */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    strcpy(tok, redlock_lock_token(&L));
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM no permissions to run the 'evalsha' command");
    CHECK_STR(T.q[2].cmd, "GET res");
    snprintf(v, sizeof v, "12:%s", tok);
    rep(2, REDLOCK_REPLY_STRING, 0, v);
    CHECK_EQ(count_cmd(0, "DEL"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* ---- 3. the built-in clocks ---- */

static int64_t sys_mono_us(void) {
    struct timespec ts;
#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
static int64_t sys_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/* Client C (now_us and wall_ms NULL: built in) and lock L, 1 node. */
static void setup_builtin_clocks(redlock_mode mode, int64_t ttl) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    T.client = &C;
    base_config(&cfg, 1);
    cfg.mode[0] = mode;
    base_callbacks(&cb);
    cb.now_us = NULL;
    cb.wall_ms = NULL;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    base_opts(&o, ttl, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
}

/* Proves: with now_us / wall_ms NULL, deadlines and validity follow CLOCK_BOOTTIME (else MONOTONIC) in µs, and a legacy SETNX value's expiry is CLOCK_REALTIME ms + ttl + 1 (within 2 ms). */
static void test_builtin_clocks_match_system(void) {
    const int64_t slack = 2000;
    int64_t before, after, wb, wa, expiry;
    int legacy;
    for (legacy = 0; legacy < 2; legacy++) {
        setup_builtin_clocks(legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO, 5000);
        before = sys_mono_us();
        wb = sys_wall_ms();
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        wa = sys_wall_ms();
        after = sys_mono_us();
        CHECK(redlock_next_deadline(&C) >= before + 50000 - slack);
        CHECK(redlock_next_deadline(&C) <= after + 50000 + slack);
        CHECK_EQ(T.timer, redlock_next_deadline(&C));
        if (legacy) {
            char *colon = strchr(T.q[0].cmd, ':');
            CHECK(starts(0, "SETNX res ") && colon != NULL);
            expiry = strtoll(T.q[0].cmd + 10, NULL, 10);
            CHECK(expiry >= wb + 5001 - 2 && expiry <= wa + 5001 + 2);
            if (!(expiry >= wb + 5001 - 2 && expiry <= wa + 5001 + 2))
                printf("#   expiry %lld, wall %lld\n", (long long)expiry, (long long)wb);
            num(0, 1);
        } else {
            ok(0);
        }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK(redlock_lock_valid_until(&L) >= before + 5000000 - drift_us(5000, legacy) - slack);
        CHECK(redlock_lock_valid_until(&L) <= after + 5000000 - drift_us(5000, legacy) + slack);
        CHECK_EQ(T.res.n, 1);
        CHECK(T.res.r[0].validity_us > 5000000 - drift_us(5000, legacy) - 100000);
        CHECK(T.res.r[0].validity_us <= 5000000 - drift_us(5000, legacy));
        CHECK(T.res.r[0].elapsed_us >= 0 && T.res.r[0].elapsed_us < 100000);
        teardown();
    }
}

/* ---- 4. retry jitter ---- */

/* splitmix64: deterministic, well mixed. */
static uint64_t mix_state;
static int mix_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    if (T.fail_random) return -1;
    while (len) {
        uint64_t z = (mix_state += 0x9E3779B97F4A7C15ull);
        size_t k;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (k = 0; k < 8 && len; k++, len--) { *p++ = (unsigned char)z; z >>= 8; }
    }
    return 0;
}
static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}
typedef struct delay_stats { int n, bad_timer, distinct; int64_t min, max; double mean, var; } delay_stats;

/* n failed attempts of a 1-node lock with the given retry settings (client
   level, or lock level if on_lock): the delays from EV_RETRY, each checked
   against the timer deadline the core asks for. */
static delay_stats retry_delays(int64_t delay_ms, int64_t jitter_ms, int on_lock, int fail_random, int n, int64_t *d) {
    redlock_config cfg;
    redlock_lock_opts o;
    delay_stats s;
    double sum = 0, sq = 0;
    int i;
    memset(&s, 0, sizeof s);
    base_config(&cfg, 1);
    cfg.retry_count = n;
    base_opts(&o, 1000, 0);
    if (on_lock) {
        cfg.retry_delay_ms = 7;
        cfg.retry_jitter_ms = 3;
        o.retry_delay_ms = delay_ms;
        o.retry_jitter_ms = jitter_ms;
    } else {
        cfg.retry_delay_ms = delay_ms;
        cfg.retry_jitter_ms = jitter_ms;
    }
    mix_state = 12345;
    setup_random(&cfg, &o, mix_random);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    T.fail_random = fail_random;
    for (i = 0; i < n; i++) {
        const redlock_event *ev;
        int64_t failed_at = T.now;
        T.evn = 0;
        nil(0);                           /* the attempt fails ... */
        ev = last_ev(REDLOCK_EV_RETRY);
        if (!ev || T.qn != 2) { CHECK(ev != NULL); CHECK_EQ(T.qn, 2); break; }
        d[i] = ev->delay_us;
        num(1, 0);                        /* ... its undo is done: the retry is due at failed_at + delay */
        if (T.qn == 2) {
            if (T.timer != failed_at + d[i]) s.bad_timer++;
            advance_to(T.timer);
        } else if (d[i] != 0) {
            s.bad_timer++;
        }
        if (T.qn != 3 || !starts(2, "SET res ") || T.now != failed_at + d[i]) { s.bad_timer++; break; }
        T.q[0] = T.q[2];
        T.qn = 1;
    }
    s.n = i;
    teardown();
    if (s.n == 0) return s;
    s.min = s.max = d[0];
    for (i = 0; i < s.n; i++) {
        if (d[i] < s.min) s.min = d[i];
        if (d[i] > s.max) s.max = d[i];
        sum += (double)d[i];
        sq += (double)d[i] * (double)d[i];
    }
    s.mean = sum / s.n;
    s.var = sq / s.n - s.mean * s.mean;
    qsort(d, (size_t)s.n, sizeof *d, cmp_i64);
    for (i = 0; i < s.n; i++) s.distinct += i == 0 || d[i] != d[i - 1];
    return s;
}

/* Proves: retry delay 100 ms +- 50 ms: every delay (EV_RETRY and the timer) in [50, 150] ms, mean ~100 ms, both ends reached, spread uniform-like (sd ~28.9 ms). */
static void test_retry_jitter_statistics(void) {
    static int64_t d[2000];
    const double sd_uniform = 28867.5;   /* 100 ms / sqrt(12), in µs */
    int on_lock;
    for (on_lock = 0; on_lock < 2; on_lock++) {
        delay_stats s = retry_delays(100, 50, on_lock, 0, 2000, d);
        CHECK_EQ(s.n, 2000);
        CHECK_EQ(s.bad_timer, 0);
        CHECK(s.min >= 50000 && s.max <= 150000);
        CHECK(s.min < 53000 && s.max > 147000);
        CHECK(s.mean > 97000 && s.mean < 103000);
        CHECK(s.var > (sd_uniform - 5000) * (sd_uniform - 5000) && s.var < (sd_uniform + 5000) * (sd_uniform + 5000));
        CHECK(s.distinct > 1000);
        if (s.mean <= 97000 || s.mean >= 103000 || s.min < 50000 || s.max > 150000)
            printf("#   min %lld max %lld mean %.0f\n", (long long)s.min, (long long)s.max, s.mean);
    }
}

/* Proves: jitter < 0 means none (exactly the delay, client or lock setting); a failing random source gives exactly the delay; jitter above the delay clamps at 0, never below. */
static void test_retry_jitter_edges(void) {
    static int64_t d[400];
    delay_stats s;
    int i, zeros = 0;
    s = retry_delays(100, -1, 0, 0, 200, d);
    CHECK_EQ(s.n, 200);
    CHECK_EQ(s.bad_timer, 0);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(100, -1, 1, 0, 200, d);   /* lock says none, client says 3 ms */
    CHECK_EQ(s.n, 200);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(100, 50, 0, 1, 200, d);   /* random fails: the base delay */
    CHECK_EQ(s.n, 200);
    CHECK_EQ(s.bad_timer, 0);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(10, 50, 0, 0, 400, d);    /* 10 ms +- 50 ms: [-40, 60] clamped at 0 */
    CHECK_EQ(s.n, 400);
    CHECK_EQ(s.bad_timer, 0);
    for (i = 0; i < s.n; i++) zeros += d[i] == 0;
    CHECK_EQ(s.min, 0);
    CHECK(s.max <= 60000 && s.max > 55000);
    CHECK(zeros > 120 && zeros < 200);         /* ~40% */
    CHECK(s.mean > 15000 && s.mean < 21000);   /* E[max(0, U(-40, 60))] = 18 ms */
    s = retry_delays(3, 0, 1, 0, 200, d);      /* lock jitter 0: the client's 3 ms, delay 3 ms */
    CHECK_EQ(s.n, 200);
    CHECK(s.min >= 0 && s.max <= 6000 && s.distinct > 50);
}

/* A random source that always gives the same 64-bit value. */
static uint64_t fixed_r;
static int fixed_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    while (len) {
        size_t k = len < sizeof fixed_r ? len : sizeof fixed_r;
        memcpy(p, &fixed_r, k);
        p += k;
        len -= k;
    }
    return 0;
}

/* Proves: the delay is delay - jitter + (r mod (2 * jitter + 1)) exactly: r = 0 gives 50 ms, r = 2 * jitter 150 ms, r = 2 * jitter + 1 wraps to 50 ms. */
static void test_retry_jitter_exact_values(void) {
    static const struct { uint64_t r; int64_t delay; } c[] = {
        {0, 50000}, {1, 50001}, {50000, 100000}, {100000, 150000}, {100001, 50000},
        {100001 * 7 + 3, 50003}, {~(uint64_t)0, 50000 + (int64_t)(~(uint64_t)0 % 100001)},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        base_config(&cfg, 1);
        cfg.retry_delay_ms = 100;
        cfg.retry_jitter_ms = 50;
        base_opts(&o, 1000, 0);
        fixed_r = c[k].r;
        setup_random(&cfg, &o, fixed_random);
        redlock_acquire(&L);
        nil(0);
        ev = last_ev(REDLOCK_EV_RETRY);
        CHECK(ev && ev->delay_us == c[k].delay);
        num(1, 0);
        CHECK_EQ(T.timer, T.now + c[k].delay);
        teardown();
    }
}

/* ---- 5. hold caps ---- */

/* Holds L (1 node, watchdog) answering each renewal `lag` µs after it went
   out, until it is no longer held. Returns the renewals sent. */
static int hold_until_lost(int64_t lag, int64_t *lost_at) {
    int renewals = 0, guard = 1000;
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && guard-- > 0) {
        int q = T.qn;
        advance_to(T.timer);
        if (T.qn > q && starts(T.qn - 1, EXTEND_SHA)) {
            renewals++;
            T.now += lag;
            num(T.qn - 1, 1);
        }
    }
    *lost_at = T.now;
    return renewals;
}

/* Proves: max_hold_ms / max_extensions stop renewals after exactly the expected count (boundaries: a multiple of renew_every, held time counted from the acquire's answer); the lock is then LOST with HOLD_LIMIT exactly at its validity end. */
static void test_hold_caps_exact(void) {
    static const struct { int64_t ttl, every, hold; int ext; int64_t acq_lag; int renewals; } c[] = {
        {900, 0, 1000, 0, 0, 3},
        {900, 0, 900, 0, 0, 2},          /* a multiple of renew_every: the cap is reached at that renewal */
        {900, 0, 901, 0, 0, 3},
        {900, 0, 899, 0, 0, 2},
        {900, 0, 300, 0, 0, 0},
        {900, 0, 301, 0, 0, 1},
        {1000, 250, 1000, 0, 0, 3},
        {1000, 250, 1001, 0, 0, 4},
        {900, 0, 890, 0, 10000, 2},      /* answered 10 ms late: held 890 ms at the third renewal */
        {900, 0, 891, 0, 10000, 3},
        {900, 0, 0, 1, 0, 1},
        {900, 0, 0, 3, 0, 3},
        {900, 0, 1000, 2, 0, 2},         /* the extension cap first */
        {900, 0, 600, 5, 0, 1},          /* the hold cap first */
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, lost_at, every = c[k].every ? c[k].every : c[k].ttl / 3, expect;
        int n;
        base_config(&cfg, 1);
        base_opts(&o, c[k].ttl, 1);
        o.renew_every_ms = c[k].every;
        o.max_hold_ms = c[k].hold;
        o.max_extensions = c[k].ext;
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        T.now += c[k].acq_lag;
        ok(0);
        n = hold_until_lost(0, &lost_at);
        if (n != c[k].renewals) printf("#   case %d: %d renewals\n", (int)k, n);
        CHECK_EQ(n, c[k].renewals);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), c[k].renewals);
        expect = t0 + c[k].renewals * every * 1000 + c[k].ttl * 1000 - drift_us(c[k].ttl, 0);
        CHECK_EQ(lost_at, expect);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
        CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_HOLD_LIMIT);
        CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
        ev = last_ev(REDLOCK_EV_LOST);
        CHECK(ev && ev->status == REDLOCK_ERR_HOLD_LIMIT);
        CHECK(starts(T.qn - 1, "EVAL if redis.call('get'"));  /* cleanup */
        teardown();
    }
}

/* Proves: a failed (inconclusive) renewal does not count towards max_extensions; the cap counts successes only. */
static void test_hold_cap_counts_successes(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t lost_at;
    int k;
    base_config(&cfg, 1);
    base_opts(&o, 900, 1);
    o.max_extensions = 2;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ok(0);
    advance_to(T.timer);                  /* renewal 1: never answered */
    k = T.qn - 1;
    CHECK(starts(k, EXTEND_SHA));
    advance_to(T.now + 50000);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 1);
    CHECK_EQ(hold_until_lost(0, &lost_at), 2);   /* still two successful ones */
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_HOLD_LIMIT);
    teardown();
}

/* ---- 6. sixteen nodes ---- */

/* Proves: with 16 nodes the quorum is 9: 8 OKs + 7 NILs wait for the 16th, which decides either way; 8 failures decide at once; the undo goes to all 16; tags name their node. */
static void test_sixteen_nodes_acquire(void) {
    int k, pass;
    for (pass = 0; pass < 2; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 16);
        for (k = 0; k < 16; k++) {
            CHECK_EQ(T.q[k].node, k);
            CHECK_EQ(redlock_tag_node(T.q[k].tag), k);
        }
        for (k = 0; k < 8; k++) ok(k);
        for (k = 8; k < 15; k++) nil(k);
        CHECK_EQ(T.res.n, 0);
        CHECK_EQ(T.qn, 16);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
        if (pass == 0) {
            ok(15);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
            CHECK_EQ(T.res.r[0].votes, 9);
        } else {
            nil(15);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(T.res.r[0].votes, 8);
            CHECK_EQ(count_cmd(16, "EVAL if redis.call('get'"), 16);
        }
        teardown();
    }
    /* eight failures (7 NILs and an error) decide before the other 8 answer */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 7; k++) nil(k);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(T.qn, 16);
    redlock_on_error(&C, T.q[7].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 32);
    for (k = 16; k < 32; k++) {
        CHECK(starts(k, "EVAL if redis.call('get'"));
        CHECK_EQ(T.q[k].node, k - 16);
        CHECK_EQ(redlock_tag_node(T.q[k].tag), k - 16);
    }
    for (k = 8; k < 16; k++) ok(k);       /* late OKs of the failed attempt: ignored */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
    /* eight errors only: NO_QUORUM */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 8; k++) redlock_on_error(&C, T.q[k].tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: with 16 nodes release needs 9 deletions (8 + 8 gone: EXPIRED; 8 + silence: NO_QUORUM); extend needs 9, and 8 other tokens mean STOLEN; a NOSCRIPT step keeps its node's tag. */
static void test_sixteen_nodes_release_extend(void) {
    int k, pass;
    for (pass = 0; pass < 3; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        for (k = 0; k < 16; k++) ok(k);
        redlock_release(&L);
        CHECK_EQ(count_cmd(16, RELEASE_SHA), 16);
        for (k = 16; k < 24; k++) num(k, 1);
        CHECK_EQ(T.res.n, 1);
        if (pass == 0) {
            rep(31, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
            CHECK(starts(32, "EVAL if redis.call('get'"));
            CHECK_EQ(T.q[32].node, 15);
            CHECK_EQ(redlock_tag_node(T.q[32].tag), 15);
            CHECK_EQ(T.res.n, 1);
            num(32, 1);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
            CHECK_EQ(T.res.r[1].votes, 9);
        } else if (pass == 1) {
            for (k = 24; k < 31; k++) num(k, 0);
            CHECK_EQ(T.res.n, 1);         /* 8 yes + 1 pending could still make 9 */
            num(31, 0);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
            CHECK_EQ(T.res.r[1].votes, 8);
        } else {
            advance_to(T.now + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
        teardown();
    }
    for (pass = 0; pass < 2; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        for (k = 0; k < 16; k++) ok(k);
        redlock_extend(&L, 0);
        CHECK_EQ(count_cmd(16, EXTEND_SHA), 16);
        for (k = 16; k < 23; k++) num(k, -1);   /* 7 other tokens */
        for (k = 23; k < 31; k++) num(k, 1);    /* 8 ours */
        CHECK_EQ(T.res.n, 1);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        num(31, pass == 0 ? 1 : -1);
        if (pass == 0) {
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
            CHECK_EQ(T.res.r[1].votes, 9);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
            CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
        }
        teardown();
    }
    /* 8 keys gone (0): a majority lost as soon as the 8th says so */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 16; k++) ok(k);
    redlock_extend(&L, 0);
    for (k = 16; k < 23; k++) num(k, 0);
    CHECK_EQ(T.res.n, 1);
    num(23, 0);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
}

/* ---- 7. detached, uninitialised and NULL handles ---- */

/* Proves: after redlock_client_deinit the timer is cancelled, every lock call answers DETACHED or a safe default, and transport input to the dead client does nothing. */
static void test_detached_after_client_deinit(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_reply r;
    int qn, evn;
    base_config(&cfg, 3);
    cfg.mode[1] = REDLOCK_MODE_LEGACY;
    base_opts(&o, 1000, 1);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(1, 1);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_LEGACY);
    CHECK(T.timer != REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    qn = T.qn;
    evn = T.evn;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 500), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_valid_until(&L), 0);
    CHECK_EQ(redlock_lock_lost_reason(&L), 0);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_STR(redlock_lock_token(&L), "");
    redlock_lock_deinit(&L);
    redlock_lock_deinit(&L);
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS; r.str = "OK"; r.len = 2;
    redlock_on_reply(&C, T.q[2].tag, &r);
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_TRANSPORT);
    T.now += 10000000;
    redlock_on_timer(&C);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(T.qn, qn);
    CHECK_EQ(T.evn, evn);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);            /* twice: harmless */
    /* the same memory initialised again works */
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

/* Proves: lock_deinit detaches just that lock: DETACHED / defaults, its replies ignored, the client's other locks and timer unaffected. */
static void test_detached_after_lock_deinit(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    setup_n(1, 0, 1000);
    base_opts(&o, 2000, 0);
    o.key = "two";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    redlock_acquire(&L2);
    ok(0);
    ok(1);
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&L));
    redlock_release(&L);
    redlock_lock_deinit(&L);
    CHECK_EQ(T.timer, redlock_lock_valid_until(&L2));
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_STR(redlock_lock_token(&L), "");
    num(2, 1);                            /* the release's answer: ignored */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    redlock_lock_deinit(&L2);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: a zero-filled lock that was never initialised is DETACHED everywhere and never touched; NULL pointers give INVALID or safe defaults. */
static void test_null_and_zeroed_handles(void) {
    redlock_lock z;
    redlock_client zc;
    redlock_lock_opts o;
    memset(&z, 0, sizeof z);
    memset(&zc, 0, sizeof zc);
    CHECK_EQ(redlock_acquire(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&z, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_state(&z), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_valid_until(&z), 0);
    CHECK_EQ(redlock_lock_lost_reason(&z), 0);
    CHECK_EQ(redlock_lock_pending(&z), 0);
    CHECK_STR(redlock_lock_token(&z), "");
    redlock_lock_deinit(&z);
    /* a zero-filled client */
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&z, &zc, &o), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_next_deadline(&zc), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(&zc, 0), REDLOCK_MODE_AUTO);
    redlock_on_timer(&zc);
    redlock_on_reply(&zc, 1 << 8, NULL);
    redlock_on_error(&zc, 1 << 8, REDLOCK_ERR_TRANSPORT);
    redlock_client_deinit(&zc);
    /* NULL everywhere */
    CHECK_EQ(redlock_acquire(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_release(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_extend(NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(NULL, NULL, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_state(NULL), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_valid_until(NULL), 0);
    CHECK_EQ(redlock_lock_lost_reason(NULL), 0);
    CHECK_EQ(redlock_lock_pending(NULL), 0);
    CHECK_STR(redlock_lock_token(NULL), "");
    CHECK_EQ(redlock_next_deadline(NULL), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(NULL, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(redlock_client_init(NULL, NULL, NULL, NULL), REDLOCK_ERR_INVALID);
    redlock_lock_deinit(NULL);
    redlock_client_deinit(NULL);
    redlock_config_init(NULL);
    redlock_on_timer(NULL);
    redlock_on_reply(NULL, 0, NULL);
    redlock_on_error(NULL, 0, 0);
    /* node_mode out of range, and as configured */
    {
        redlock_config cfg;
        redlock_lock_opts lo;
        volatile int far_node = 200;      /* volatile: gcc cannot see the range check */
        base_config(&cfg, 3);
        cfg.mode[0] = REDLOCK_MODE_MODERN;
        cfg.mode[2] = REDLOCK_MODE_LEGACY;
        cfg.mode[3] = REDLOCK_MODE_LEGACY;   /* beyond node_count: not a node */
        base_opts(&lo, 1000, 0);
        setup_with(&cfg, &lo);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_MODERN);
        CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, 2), REDLOCK_MODE_LEGACY);
        CHECK_EQ(redlock_node_mode(&C, 3), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, -1), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, far_node), REDLOCK_MODE_AUTO);
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 3);                /* node 3 gets nothing */
        CHECK(starts(2, "SETNX res "));
        CHECK(starts(0, "SET res ") && starts(1, "SET res "));
        teardown();
    }
}


/* Proves: redlock_tag_node reads the low byte, whatever the other bits. */
static void test_tag_node_odd_tags(void) {
    CHECK_EQ(redlock_tag_node(0), 0);
    CHECK_EQ(redlock_tag_node(1), 1);
    CHECK_EQ(redlock_tag_node(0xFF), 255);
    CHECK_EQ(redlock_tag_node(0x100), 0);
    CHECK_EQ(redlock_tag_node(~(redlock_tag)0), 255);
    CHECK_EQ(redlock_tag_node(((redlock_tag)1 << 63) | 7), 7);
    CHECK_EQ(redlock_tag_node(((redlock_tag)0xFFFFFFFF << 32) | ((redlock_tag)0xFFFFFF << 8) | 15), 15);
}

/* ---- 8. exact validity and renewal times ---- */

/* Proves: validity = round start + ttl - (ttl * drift_factor + clock_drift) exactly, minus one node timeout once any node is legacy; after an extend to X, round start + X - drift(X); results and events carry the same numbers. */
static void test_validity_formula_exact(void) {
    int legacy;
    for (legacy = 0; legacy < 3; legacy++) {  /* modern; 1 legacy node; 3 nodes, one legacy */
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, t1, d3000, d2000, slack, before, k, nodes = legacy == 2 ? 3 : 1;
        char tok[REDLOCK_TOKEN_LEN + 1];
        base_config(&cfg, (int)nodes);
        cfg.drift_factor = 0.015625;      /* 1/64: exact in binary */
        cfg.clock_drift_ms = 7;
        cfg.node_timeout_ms = 80;
        if (legacy) cfg.mode[nodes - 1] = REDLOCK_MODE_LEGACY;
        base_opts(&o, 3000, 0);
        setup_with(&cfg, &o);
        d3000 = 46875 + 7000 + (legacy ? 80000 : 0);
        d2000 = 31250 + 7000 + (legacy ? 80000 : 0);
        t0 = T.now;
        redlock_acquire(&L);
        strcpy(tok, redlock_lock_token(&L));
        CHECK_EQ(T.timer, t0 + 80000);
        T.now += 5000;
        if (legacy == 1) num(0, 1);
        else { ok(0); if (nodes == 3) num(2, 1); }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + 3000000 - d3000);
        CHECK_EQ(T.res.r[0].validity_us, t0 + 3000000 - d3000 - T.now);
        CHECK_EQ(T.res.r[0].elapsed_us, 5000);
        ev = last_ev(REDLOCK_EV_ACQUIRED);
        CHECK(ev != NULL);
        if (ev) {
            CHECK_EQ(ev->validity_us, t0 + 3000000 - d3000 - T.now);
            CHECK_EQ(ev->elapsed_us, 5000);
            CHECK_EQ(ev->votes, nodes == 3 ? 2 : 1);
            CHECK_EQ(ev->ttl_share_permille, (5000 + d3000) * 1000 / 3000000);
        }
        /* extend to 2 s, answered 3 ms after it went out */
        T.now = t0 + 1000000;
        t1 = T.now;
        before = redlock_lock_valid_until(&L);
        k = T.qn;
        CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
        T.now += 3000;
        if (legacy == 1) {
            CHECK_STR(T.q[k].cmd, "GET res");
            rep((int)k, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 3001, tok));
            CHECK(starts((int)k + 1, "GETSET res "));
            rep((int)k + 1, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 3001, tok));
        } else {
            CHECK(starts((int)k, EXTEND_SHA) && ends((int)k, " 2000"));
            num((int)k, 1);
            if (nodes == 3) num((int)k + 1, 1);
        }
        CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        CHECK_EQ(redlock_lock_valid_until(&L), t1 + 2000000 - d2000);
        CHECK_EQ(T.res.r[1].validity_us, t1 + 2000000 - d2000 - T.now);
        CHECK_EQ(T.res.r[1].elapsed_us, 3000);
        slack = before - t1;
        ev = last_ev(REDLOCK_EV_RENEWED);
        CHECK(ev && ev->slack_us == slack && ev->elapsed_us == 3000 && ev->validity_us == t1 + 2000000 - d2000 - T.now);
        CHECK_EQ(T.timer, t1 + 2000000 - d2000);
        teardown();
    }
}

/* Proves: the watchdog renews exactly at acquire round start + renew_every (default ttl/3), then renew_every after each successful round's start, whatever the answer's delay; a failed renewal is retried after min(retry_delay, left/3). */
static void test_renewal_cadence_exact(void) {
    int big;
    for (big = 0; big < 2; big++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, r1, r2, r3, until, left;
        base_config(&cfg, 1);
        if (big) cfg.retry_delay_ms = 500;
        base_opts(&o, 1000, 1);           /* renew every 333 ms */
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        T.now += 4000;
        ok(0);
        CHECK_EQ(T.timer, t0 + 333000);
        advance_to(t0 + 332999);
        CHECK_EQ(T.qn, 1);
        advance_to(t0 + 333000);
        CHECK_EQ(T.qn, 2);
        CHECK(starts(1, EXTEND_SHA) && ends(1, " 1000"));
        r1 = T.now;
        T.now += 7000;
        num(1, 1);
        CHECK_EQ(redlock_lock_valid_until(&L), r1 + 1000000 - drift_us(1000, 0));
        CHECK_EQ(T.timer, r1 + 333000);
        advance_to(r1 + 333000);
        CHECK_EQ(T.qn, 3);
        r2 = T.now;
        until = redlock_lock_valid_until(&L);
        CHECK_EQ(until, r1 + 1000000 - drift_us(1000, 0));   /* same ttl: not cut */
        CHECK_EQ(T.timer, r2 + 50000);
        advance_to(r2 + 50000);           /* renewal 2 times out */
        ev = last_ev(REDLOCK_EV_RENEW_FAILED);
        CHECK(ev && ev->status == REDLOCK_ERR_TRANSPORT && ev->slack_us == until - r2);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        left = until - T.now;
        CHECK_EQ(T.timer, T.now + (big ? left / 3 : 100000));
        advance_to(T.timer);
        CHECK_EQ(T.qn, 4);
        r3 = T.now;
        advance_to(r3 + 50000);           /* and again */
        left = until - T.now;
        CHECK_EQ(T.timer, T.now + (left / 3 < (big ? 500000 : 100000) ? left / 3 : 100000));
        advance_to(T.timer);
        CHECK_EQ(T.qn, 5);
        num(4, 1);                        /* this one gets through */
        CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1000000 - drift_us(1000, 0));
        CHECK_EQ(T.timer, T.now + 333000);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 2);
        teardown();
    }
    /* a small ttl: renew_every = ttl/3 rounded down, 1 ms for ttl 5 */
    {
        redlock_lock_opts o;
        redlock_config cfg;
        int64_t t0;
        base_config(&cfg, 1);
        base_opts(&o, 5, 1);
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        ok(0);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(T.timer, t0 + 1000);
        teardown();
    }
}

/* ---- 9. per-node bounds follow the extend on nodes without scripts ---- */

/* Makes node 0 a node without scripts: an extend to the lock's ttl is answered NOPERM, then GET / PEXPIRE. */
static void make_noscript(void) {
    int k = T.qn;
    char tok[REDLOCK_TOKEN_LEN + 1];
    strcpy(tok, redlock_lock_token(&L));
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    rep(k, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    CHECK_STR(T.q[k + 1].cmd, "GET res");
    rep(k + 1, REDLOCK_REPLY_STRING, 0, tok);
    CHECK(starts(k + 2, "PEXPIRE res "));
    num(k + 2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
}
/* Releases L at `at`: the GET is answered with our value; returns 1 if DEL followed, 0 if the key was left (KEY_LEFT checked). */
static int release_at(int64_t at, int legacy) {
    int k = T.qn, left0 = count_ev(REDLOCK_EV_KEY_LEFT), del;
    const redlock_event *ev;
    T.now = at;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_STR(T.q[k].cmd, "GET res");
    if (legacy) rep(k, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 1, redlock_lock_token(&L)));
    else rep(k, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    del = T.qn == k + 2 && starts(k + 1, "DEL res");
    if (del) {
        CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), left0);
        num(k + 1, 1);
    } else {
        CHECK_EQ(T.qn, k + 1);
        CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), left0 + 1);
        ev = last_ev(REDLOCK_EV_KEY_LEFT);
        CHECK(ev && ev->node == 0 && ev->op == REDLOCK_OP_RELEASE);
        CHECK(ev && ev->status == 0 && ev->vote == 0 && ev->votes == 0 && ev->validity_us == 0 && ev->delay_us == 0);
    }
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    return del;
}

/* Proves: on a node without scripts, a longer extend moves the node's bound: a release after the old validity but before the new one still DELetes (GET, DEL). */
static void test_noscript_release_after_lengthening_extend(void) {
    int64_t t0, t1;
    setup_n(1, 0, 1000);
    t0 = T.now;
    redlock_acquire(&L);
    ok(0);
    T.now = t0 + 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    rep(1, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'evalsha'");
    CHECK_STR(T.q[2].cmd, "GET res");
    rep(2, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK_STR(T.q[3].cmd, "PEXPIRE res 5000");
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 5000000 - drift_us(5000, 0));
    CHECK_EQ(release_at(t0 + 2000000, 0), 1);
    teardown();
    /* the same with the node known to have no scripts before the extend */
    setup_n(1, 0, 1000);
    t0 = T.now;
    redlock_acquire(&L);
    ok(0);
    make_noscript();
    T.now = t0 + 100000;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    CHECK_STR(T.q[4].cmd, "GET res");
    rep(4, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK_STR(T.q[5].cmd, "PEXPIRE res 5000");
    num(5, 1);
    CHECK_EQ(release_at(t0 + 4000000, 0), 1);
    teardown();
}

/* Proves: on a node without scripts, a shortening extend cuts the node's bound when its PEXPIRE goes out (answered or not): a release within node_timeout + drift of the new end leaves the key (KEY_LEFT, no DEL); one microsecond earlier it DELetes. */
static void test_noscript_release_after_shortening_extend(void) {
    int pass;
    for (pass = 0; pass < 4; pass++) {   /* PEXPIRE answered / unanswered; at the limit / 1 µs before */
        int64_t t1, bound, limit = 50000 + drift_us(10000, 0);
        setup_n(1, 0, 10000);
        redlock_acquire(&L);
        ok(0);
        make_noscript();
        T.now += 100000;
        t1 = T.now;
        CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
        bound = t1 + 1000000 - drift_us(1000, 0);
        CHECK_EQ(redlock_lock_valid_until(&L), bound);      /* cut at once */
        CHECK_STR(T.q[4].cmd, "GET res");
        rep(4, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
        CHECK_STR(T.q[5].cmd, "PEXPIRE res 1000");
        if (pass < 2) {
            num(5, 1);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        } else {
            advance_to(t1 + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
        }
        CHECK_EQ(redlock_lock_valid_until(&L), bound);
        CHECK_EQ(release_at(bound - limit - (pass % 2), 0), pass % 2);
        teardown();
    }
}

/* Proves: on a legacy node the bound follows the extend's GETSET: longer, a release after the old validity DELetes; shorter, a release within node_timeout + drift of the new end leaves the key (1 µs earlier: DEL); GETSET unanswered, the key is left. */
static void test_legacy_release_bound_follows_extend(void) {
    int pass;
    for (pass = 0; pass < 4; pass++) {   /* longer; shorter at the limit; 1 µs before; GETSET unanswered */
        int64_t t0, t1, ttl = pass == 0 ? 1000 : 10000, ext = pass == 0 ? 5000 : 1000;
        int64_t bound, limit = 50000 + drift_us(ttl, 1);
        char want[256];
        setup_legacy(1, -1, ttl);
        t0 = T.now;
        redlock_acquire(&L);
        num(0, 1);
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + ttl * 1000 - drift_us(ttl, 1));
        T.now = t0 + 100000;
        t1 = T.now;
        CHECK_EQ(redlock_extend(&L, ext), REDLOCK_OK);
        bound = t1 + ext * 1000 - drift_us(ext, 1);
        CHECK_STR(T.q[1].cmd, "GET res");
        rep(1, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + ttl + 1, redlock_lock_token(&L)));
        snprintf(want, sizeof want, "GETSET res %s", legacy_value(T.wall + ext + 1, redlock_lock_token(&L)));
        CHECK_STR(T.q[2].cmd, want);
        if (pass == 3) {
            advance_to(t1 + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
            CHECK_EQ(release_at(t1 + 60000, 1), 0);
        } else {
            rep(2, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + ttl + 1, redlock_lock_token(&L)));
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
            CHECK_EQ(redlock_lock_valid_until(&L), bound);
            if (pass == 0) CHECK_EQ(release_at(t0 + 2000000, 1), 1);
            else CHECK_EQ(release_at(bound - limit - (pass - 1), 1), pass - 1);
        }
        teardown();
    }
}

/* ---- 10. EV_KEY_LEFT only when a key is left ---- */

/* Proves: modern and no-script releases, undos and cleanups far from expiry never emit KEY_LEFT. */
static void test_key_left_never_otherwise(void) {
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    nil(0); nil(1);                       /* undo */
    num(3, 0); num(4, 0); num(5, 0);
    run_until_sent(6);
    ok(6); ok(7); ok(8);
    redlock_extend(&L, 0);
    num(9, 1); num(10, 1); num(11, 1);
    redlock_release(&L);
    num(12, 1); num(13, 1); num(14, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);
    ok(15); ok(16); ok(17);
    advance_to(redlock_lock_valid_until(&L));   /* expired: cleanup */
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    for (k = 18; k < 21; k++) num(k, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    teardown();
    /* legacy, early: GET + DEL, no KEY_LEFT; an undo with nothing clobbered: none either */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_release(&L);
    for (k = 3; k < 6; k++) rep(k, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    CHECK_EQ(count_cmd(3, "DEL res"), 3);
    for (k = 6; k < 9; k++) num(k, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);
    num(9, 1); num(10, 0); num(11, 0);
    rep(12, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    rep(13, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_cmd(14, "GET res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    teardown();
}

/* Proves: a node whose GETSET lost a takeover race is left alone (KEY_LEFT, that node, once) by the undo and by a release, not by an extend; a new acquire forgets it. */
static void test_key_left_clobbered_node(void) {
    const redlock_event *ev;
    char ours[128], expired[128], winner[128];
    int k, q;
    snprintf(expired, sizeof expired, "%s", legacy_value(1600000000000LL, OTHER_TOKEN));
    snprintf(winner, sizeof winner, "%s", legacy_value(1700000000999LL, "fedcba9876543210fedcba9876543210"));
    /* won with nodes 0 and 2; node 1 clobbered */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num(0, 1);
    num(1, 0);
    CHECK_STR(T.q[3].cmd, "GET res");
    rep(3, REDLOCK_REPLY_STRING, 0, expired);
    CHECK(starts(4, "GETSET res ") && T.q[4].node == 1);
    rep(4, REDLOCK_REPLY_STRING, 0, winner);   /* someone else took it over first */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    /* extend: node 1 not asked, no KEY_LEFT */
    q = T.qn;
    redlock_extend(&L, 0);
    CHECK_EQ(T.qn, q + 2);
    CHECK(T.q[q].node == 0 && T.q[q + 1].node == 2);
    rep(q, REDLOCK_REPLY_STRING, 0, ours);
    rep(q + 1, REDLOCK_REPLY_STRING, 0, ours);
    rep(q + 2, REDLOCK_REPLY_STRING, 0, ours);   /* GETSET answers */
    rep(q + 3, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    /* release: node 1 left (one event), 0 and 2 deleted */
    q = T.qn;
    redlock_release(&L);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_RELEASE);
    CHECK_EQ(T.qn, q + 2);
    CHECK(T.q[q].node == 0 && T.q[q + 1].node == 2);
    rep(q, REDLOCK_REPLY_STRING, 0, ours);
    rep(q + 1, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_EQ(count_cmd(q, "DEL res"), 2);
    num(q + 2, 1); num(q + 3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    /* a new acquire forgets the old clobbering: its undo asks node 1 too, nothing is left */
    q = T.qn;
    redlock_acquire(&L);
    num(q, 1); num(q + 1, 0); num(q + 2, 0);
    rep(q + 3, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    rep(q + 4, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, q + 8);
    CHECK_EQ(count_cmd(q + 5, "GET res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    for (k = q + 5; k < q + 8; k++) nil(k);
    /* and one that wins: node 1 is ours again and released normally */
    q = T.qn;
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num(q, 1); num(q + 1, 1); num(q + 2, 1);
    q = T.qn;
    redlock_release(&L);
    CHECK_EQ(T.qn, q + 3);
    for (k = 0; k < 3; k++) rep(q + k, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_EQ(count_cmd(q, "DEL res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
    /* the undo of a failed attempt: the clobbered node is left (KEY_LEFT, op ACQUIRE), the others get GET */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    num(0, 1);
    num(1, 0);
    num(2, 0);
    rep(3, REDLOCK_REPLY_STRING, 0, expired);
    rep(4, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK(starts(5, "GETSET res ") && T.q[5].node == 1);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    rep(5, REDLOCK_REPLY_STRING, 0, winner);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.qn, 8);
    CHECK(T.q[6].node == 0 && T.q[7].node == 2);
    CHECK_EQ(count_cmd(6, "GET res"), 2);
    teardown();
}

/* Proves: within one acquire (same token) a node clobbered in attempt 1 is still left alone by the undo of attempt 2. */
static void test_key_left_clobbered_across_retries(void) {
    char expired[128], winner[128], ours[128];
    const redlock_event *ev;
    int a2;
    snprintf(expired, sizeof expired, "%s", legacy_value(1600000000000LL, OTHER_TOKEN));
    snprintf(winner, sizeof winner, "%s", legacy_value(1700000000999LL, "fedcba9876543210fedcba9876543210"));
    setup_legacy(3, 1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num(0, 1); num(1, 0); num(2, 0);
    rep(3, REDLOCK_REPLY_STRING, 0, expired);
    rep(4, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    rep(5, REDLOCK_REPLY_STRING, 0, winner);      /* node 1 clobbered; attempt 1 fails */
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(T.qn, 8);                            /* undo: GET on nodes 0 and 2 */
    rep(6, REDLOCK_REPLY_STRING, 0, ours);
    nil(7);
    CHECK(starts(8, "DEL res") && T.q[8].node == 0);
    num(8, 1);
    a2 = T.qn;
    run_until_sent(a2 + 2);
    CHECK_EQ(count_cmd(a2, "SETNX res "), 3);
    num(a2, 0); num(a2 + 1, 0); num(a2 + 2, 0);
    rep(a2 + 3, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    rep(a2 + 4, REDLOCK_REPLY_STRING, 0, ours);   /* node 1 shows our value from attempt 1 */
    rep(a2 + 5, REDLOCK_REPLY_STRING, 0, legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 2);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_ACQUIRE && ev->attempt == 2);
    CHECK_EQ(T.qn, a2 + 8);
    CHECK(T.q[a2 + 6].node == 0 && T.q[a2 + 7].node == 2);
    teardown();
}

/* Proves: the undo after a GETSET whose answer never came leaves that node (KEY_LEFT) even though the GET shows our value. */
static void test_key_left_unanswered_getset(void) {
    const redlock_event *ev;
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num(0, 0);
    rep(1, REDLOCK_REPLY_STRING, 0, legacy_value(1600000000000LL, OTHER_TOKEN));
    CHECK(starts(2, "GETSET res "));
    advance_to(T.now + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    CHECK_STR(T.q[3].cmd, "GET res");
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    rep(3, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 0 && ev->op == REDLOCK_OP_ACQUIRE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}


/* ---- more exact behaviour: statuses, defaults, boundaries, event fields ---- */

/* Proves: send returning a positive value counts as TRANSPORT, a negative status as itself; on_error with 0 or a positive status is TRANSPORT. */
static void test_send_and_error_statuses(void) {
    setup_n(3, 0, 1000);
    T.fail_send_node = 1;
    T.fail_send_rc = 1;
    redlock_acquire(&L);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    teardown();
    setup_n(3, 0, 1000);
    T.fail_send_node = 2;
    T.fail_send_rc = REDLOCK_ERR_CONNECT;
    redlock_acquire(&L);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_CONNECT);
    redlock_on_error(&C, T.q[0].tag, 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    redlock_on_error(&C, T.q[0].tag, 7);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    redlock_on_error(&C, T.q[0].tag, REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NODE_TIMEOUT);
    teardown();
}

/* Proves: redlock_config_init writes the documented defaults, and a zero config gets them: node timeout 50 ms, drift 1% + 2 ms, 3 retries, 200 ms +- 100 ms. */
static void test_default_config_values(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int i, pass;
    memset(&cfg, 0x5a, sizeof cfg);
    redlock_config_init(&cfg);
    CHECK_EQ(cfg.node_count, 1);
    CHECK_EQ(cfg.node_timeout_ms, 50);
    CHECK(cfg.drift_factor == 0.01);
    CHECK_EQ(cfg.clock_drift_ms, 2);
    CHECK_EQ(cfg.retry_count, 3);
    CHECK_EQ(cfg.retry_delay_ms, 200);
    CHECK_EQ(cfg.retry_jitter_ms, 100);
    CHECK_EQ(cfg.wait_ms, 0);
    for (i = 0; i < REDLOCK_MAX_NODES; i++) CHECK_EQ(cfg.mode[i], REDLOCK_MODE_AUTO);
    for (pass = 0; pass < 2; pass++) {
        int64_t t0;
        memset(&cfg, 0, sizeof cfg);
        cfg.node_count = 1;
        base_opts(&o, 1000, 0);
        fixed_r = pass ? 200000 : 0;      /* the two ends of +- 100 ms */
        setup_random(&cfg, &o, fixed_random);
        t0 = T.now;
        redlock_acquire(&L);
        CHECK_EQ(T.timer, t0 + 50000);
        for (i = 0; i < 4; i++) {
            int k = T.qn - 1;
            CHECK(starts(k, "SET res "));
            nil(k);
            if (i < 3) {
                ev = last_ev(REDLOCK_EV_RETRY);
                CHECK(ev && ev->delay_us == (pass ? 300000 : 100000));
                num(k + 1, 0);
                CHECK_EQ(T.timer, T.now + (pass ? 300000 : 100000));
                advance_to(T.timer);
            }
        }
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
        CHECK_EQ(T.res.r[0].attempts, 4);
        num(T.qn - 1, 0);
        t0 = T.now;
        redlock_acquire(&L);
        ok(T.qn - 1);
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + 1000000 - 12000);
        teardown();
    }
}

/* Proves: a quorum answered exactly at round start + ttl - drift has no validity (VALIDITY); one µs earlier it is held with 1 µs left. */
static void test_acquire_validity_boundary(void) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        int64_t t0;
        setup_no_retry(1, 0, 10);
        t0 = T.now;
        redlock_acquire(&L);
        T.now = t0 + 10000 - drift_us(10, 0) - pass;
        ok(0);
        if (pass == 0) {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_VALIDITY);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
            CHECK(starts(1, "EVAL if redis.call('get'"));
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
            CHECK_EQ(T.res.r[0].validity_us, 1);
            CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1);
            CHECK_EQ(T.timer, T.now + 1);
        }
        teardown();
    }
}

/* Proves: EV_ATTEMPT / EV_VOTE / EV_RETRY / EV_MODE_SWITCH carry the documented fields (node, vote, status, rtt, attempt, delay, mode). */
static void test_event_fields(void) {
    const redlock_event *ev;
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 1);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->attempt == 1 && ev->node == -1 && ev->op == REDLOCK_OP_ACQUIRE && ev->lock == &L);
    T.now += 700;
    ok(0);
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->node == 0 && ev->vote == 1 && ev->status == 0 && ev->rtt_us == 700 && ev->elapsed_us == 700 &&
          ev->attempt == 1 && ev->op == REDLOCK_OP_ACQUIRE);
    T.now += 100;
    nil(1);
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->node == 1 && ev->vote == 0 && ev->status == 0 && ev->rtt_us == 800);
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 3);
    ev = &T.ev[T.evn - 2];                /* the last vote, then the retry */
    CHECK(ev->type == REDLOCK_EV_VOTE && ev->node == 2 && ev->vote == 0 && ev->status == REDLOCK_ERR_CONNECT);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->status == REDLOCK_ERR_LOCKED && ev->votes == 1 && ev->attempt == 1 && ev->delay_us == 100000 &&
          ev->node == -1);
    for (k = 3; k < 6; k++) num(k, 0);
    run_until_sent(6);
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 2);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->attempt == 2);
    ok(6); ok(7);
    ev = last_ev(REDLOCK_EV_ACQUIRED);
    CHECK(ev && ev->attempt == 2 && ev->votes == 2 && ev->node == -1);
    /* a switch to no scripts: mode 0, that node */
    redlock_release(&L);
    rep(9, REDLOCK_REPLY_ERROR, 0, "NOPERM no permissions to run the 'evalsha' command");
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == 0 && ev->op == REDLOCK_OP_RELEASE);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    teardown();
}

/* Proves: INFO without a usable redis_version never switches a node to legacy; versions compare by part (2.6.100 is modern, 2.5.9999 old). */
static void test_info_version_parsing(void) {
    static const struct { const char *info; int legacy; } c[] = {
        {"# Server\r\nredis_mode:standalone\r\n", 0},
        {"# Server\r\nredis_version:\r\n", 0},
        {"# Server\r\nredis_version:abc\r\n", 0},
        {"redis_version", 0},
        {"", 0},
        {"redis_version:2.6.100\r\n", 0},
        {"redis_version:3\r\n", 0},
        {"redis_version:2.5.9999\r\n", 1},
        {"redis_version:2\r\n", 1},
        {"redis_version:2.6.11", 1},
        {"redis_version:2.6.12", 0},
        {"x:1\r\nredis_version:1.2.6\r\n", 1},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
        CHECK_STR(T.q[1].cmd, "INFO server");
        rep(1, REDLOCK_REPLY_STRING, 0, c[k].info);
        if (redlock_node_mode(&C, 0) != (c[k].legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO))
            printf("#   INFO \"%s\": legacy %d\n", c[k].info, !c[k].legacy);
        CHECK_EQ(redlock_node_mode(&C, 0), c[k].legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO);
        CHECK_EQ(count_cmd(0, "SETNX"), c[k].legacy);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), c[k].legacy);
        if (!c[k].legacy) CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        teardown();
    }
}

/* Proves: a lock deinitialised inside send (the undo, or the cleanup after LOST) gets no further on_result. */
static void test_deinit_inside_send_no_more_results(void) {
    setup_no_retry(1, 0, 1000);
    T.deinit_on_send = "EVAL";
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(T.qn, 2);                    /* the undo went out ... */
    CHECK_EQ(T.res.n, 0);                 /* ... and nothing was reported after deinit */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    T.deinit_on_send = "EVAL";
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.res.n, 1);                 /* no LOST after deinit */
    CHECK_EQ(count_ev(REDLOCK_EV_LOST), 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
    /* deinit in the EXTEND answer of a lock that ran out: no LOST after it */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    T.now = redlock_lock_valid_until(&L) - 10;
    T.deinit_on_extend = 1;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: acquire() called in the EXTEND answer of a lock that ran out starts a new attempt once the cleanup is done. */
static void test_acquire_in_failed_extend_result(void) {
    int q;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    T.now = redlock_lock_valid_until(&L) - 10;
    T.acquire_on_extend = 1;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.acquire_rc, REDLOCK_OK);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    q = T.qn;
    CHECK(starts(q - 1, "EVAL if redis.call('get'"));   /* the cleanup, old token */
    num(q - 1, 0);
    CHECK_EQ(T.qn, q + 1);
    CHECK(starts(q, "SET res "));
    ok(q);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a check-then-act step whose GET answer arrives at (or after) the round's deadline, before the timer fired, is a NODE_TIMEOUT: no DEL; 1 µs earlier the DEL goes out. */
static void test_check_then_act_after_round_deadline(void) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        int64_t t1;
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        ok(0);
        make_noscript();
        t1 = T.now;
        redlock_release(&L);
        CHECK_STR(T.q[4].cmd, "GET res");
        T.now = t1 + 50000 - pass;
        rep(4, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
        if (pass == 0) {
            CHECK_EQ(T.qn, 5);
            CHECK_EQ(vote_status(0), REDLOCK_ERR_NODE_TIMEOUT);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        } else {
            CHECK_STR(T.q[5].cmd, "DEL res");
        }
        teardown();
    }
}

/* Proves: on a node without scripts an extend's GET is judged by the node's bound before the extend: an unanswered longer extend does not move it (release near the old end leaves the key), and a very short extend (100 ms) still goes through (GET, PEXPIRE 100). */
static void test_noscript_bound_before_pexpire(void) {
    int64_t t0, t1;
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    t0 = T.now;
    redlock_acquire(&L);
    ok(0);
    make_noscript();
    T.now = t0 + 100000;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    CHECK_STR(T.q[4].cmd, "GET res");
    advance_to(t0 + 150000);              /* never answered */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 1000000 - drift_us(1000, 0));
    CHECK_EQ(release_at(t0 + 1000000 - drift_us(1000, 0) - 50000 - drift_us(1000, 0), 0), 0);
    teardown();
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok(0);
    make_noscript();
    T.now += 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 100), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 100000 - drift_us(100, 0));
    rep(4, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK_STR(T.q[5].cmd, "PEXPIRE res 100");
    num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->validity_us == t1 + 100000 - drift_us(100, 0) - T.now);
    teardown();
}

/* Proves: on a node without scripts (modern values) a GET showing another 32-character token is not ours: no DEL, and extend sees it as STOLEN. */
static void test_noscript_other_token_not_ours(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    make_noscript();
    redlock_release(&L);
    rep(4, REDLOCK_REPLY_STRING, 0, OTHER_TOKEN);
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    make_noscript();
    redlock_extend(&L, 0);
    rep(4, REDLOCK_REPLY_STRING, 0, OTHER_TOKEN);
    CHECK_EQ(count_cmd(0, "PEXPIRE"), 1);       /* only make_noscript's */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
    teardown();
}

/* ---- known defects: run only when named (build/unit test_bug_) until the header is fixed ---- */

/* Proves (fails today): EV_RETRY and EV_FAILED report elapsed_us "since the round started", but
   redlock__decide_acquire starts the undo round (which resets the round start) before filling
   it in, so it is always 0. */
static void test_retry_event_elapsed(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    T.now += 800;
    nil(0);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev != NULL);
    if (ev) CHECK_EQ(ev->elapsed_us, 800);
    num(1, 0);
    run_until_sent(2);
    T.now += 900;
    nil(2);
    num(3, 0);
    run_until_sent(4);
    T.now += 300;
    nil(4);
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev != NULL);
    if (ev) CHECK_EQ(ev->elapsed_us, 300);
    teardown();
}

/* Proves: the FAILED event of an acquire that gives up carries the last
   attempt's votes for, its status and attempt number; its ATTEMPT event
   has no status. */
static void test_failed_event_fields(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    base_config(&cfg, 3);
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->status == 0 && ev->attempt == 1);
    ok(0); nil(1); nil(2);
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev != NULL);
    if (ev) {
        CHECK_EQ(ev->votes, 1);
        CHECK_EQ(ev->status, REDLOCK_ERR_LOCKED);
        CHECK_EQ(ev->attempt, 1);
        CHECK_EQ(ev->node, -1);
        CHECK_EQ(ev->op, REDLOCK_OP_ACQUIRE);
    }
    CHECK_EQ(T.res.r[0].votes, 1);
    teardown();
}

/* ---- runner: a test that hangs is reported, not waited for ---- */
static const char *current_test = "";

/* ---- what the mutation sample showed untested ---- */

/* Leaves a recognisable pattern on the stack, so that an event field the
   core forgot to clear shows up as garbage rather than as a lucky zero. */
static void dirty_stack(void) {
    volatile unsigned char junk[8192];
    size_t i;
    for (i = 0; i < sizeof junk; i++) junk[i] = 0xA5;
}

/* Fields that do not apply to an event type are 0 (header: "Fields that do
   not apply to a type are 0 (node: -1)"). */
static int event_rest_zero(const redlock_event *ev) {
    switch (ev->type) {
    case REDLOCK_EV_ATTEMPT:
    case REDLOCK_EV_LOST:
        return ev->vote == 0 && ev->votes == 0 && ev->mode == 0 && ev->rtt_us == 0 && ev->elapsed_us == 0 &&
               ev->validity_us == 0 && ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 &&
               ev->node == -1;
    case REDLOCK_EV_RELEASED:
        return ev->vote == 0 && ev->attempt == 0 && ev->mode == 0 && ev->rtt_us == 0 && ev->validity_us == 0 &&
               ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 && ev->node == -1;
    case REDLOCK_EV_MODE_SWITCH:
    case REDLOCK_EV_KEY_LEFT:
        return ev->vote == 0 && ev->votes == 0 && ev->rtt_us == 0 && ev->elapsed_us == 0 && ev->validity_us == 0 &&
               ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 && ev->status == 0;
    default:
        return 1;
    }
}

/* Proves: ATTEMPT, RELEASED, LOST and MODE_SWITCH events carry zeros in the
   fields that do not apply, and MODE_SWITCH names the node that switched. */
static void test_event_unused_fields_zero(void) {
    int i;
    setup_n(3, 0, 1000);
    dirty_stack();
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    dirty_stack();
    redlock_release(&L);
    num(3, 1);
    rep(4, REDLOCK_REPLY_ERROR, 0, "NOPERM no permissions to run the 'evalsha' command"); /* node 1 */
    num(5, 1);
    CHECK(starts(6, "GET res") && T.q[6].node == 1);
    nil(6);                                       /* the no-script node: gone already */
    CHECK(last_ev(REDLOCK_EV_MODE_SWITCH) && last_ev(REDLOCK_EV_MODE_SWITCH)->node == 1);
    CHECK(last_ev(REDLOCK_EV_RELEASED) && last_ev(REDLOCK_EV_RELEASED)->elapsed_us == 0);
    dirty_stack();
    redlock_acquire(&L);
    ok(7); ok(8); ok(9);
    dirty_stack();
    advance_to(redlock_lock_valid_until(&L));    /* no watchdog: LOST */
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(count_ev(REDLOCK_EV_RELEASED) >= 1 && count_ev(REDLOCK_EV_LOST) == 1);
    for (i = 0; i < T.evn; i++)
        if (!event_rest_zero(&T.ev[i])) {
            printf("#   event %s has a stray field\n", redlock_event_name(T.ev[i].type));
            CHECK(0);
        }
    teardown();
}

/* Proves: ACQUIRED's ttl_share_permille is (elapsed + drift) / ttl in
   thousandths, rounded down, to the microsecond: 88 ms + 12 ms of a 1000 ms
   ttl is 100, 1 µs less is 99 (and the validity what is left). */
static void test_acquired_ttl_share(void) {
    const redlock_event *ev;
    int64_t took;
    for (took = 87999; took <= 88000; took++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        T.now += took;
        ok(0);
        ev = last_ev(REDLOCK_EV_ACQUIRED);
        CHECK(ev != NULL);
        if (ev) {
            CHECK_EQ(ev->ttl_share_permille, took == 88000 ? 100 : 99);
            CHECK_EQ(ev->elapsed_us, took);
            CHECK_EQ(ev->validity_us, 1000000 - 12000 - took);
        }
        teardown();
    }
}

/* Proves: MODE_SWITCH says which node switched to what, in which
   operation, and nothing else (no attempt, status or votes): to no
   scripts during a release, to legacy during an acquire. */
static void test_mode_switch_event_fields(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM no permissions to run the 'evalsha' command");
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == 0 && ev->op == REDLOCK_OP_RELEASE && ev->attempt == 0 &&
          ev->status == 0 && ev->votes == 0 && ev->lock == &L);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
    rep(1, REDLOCK_REPLY_STRING, 0, "# Server\r\nredis_version:2.4.17\r\n");
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == REDLOCK_MODE_LEGACY && ev->op == REDLOCK_OP_ACQUIRE && ev->attempt == 0 &&
          ev->status == 0 && ev->votes == 0);
    teardown();
}

/* Proves: replies that are exactly "NOSCRIPT" or "NOPERM" (no message after
   the word) are recognised like the longer forms. */
static void test_error_words_alone(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT");
    CHECK(starts(2, "EVAL if redis.call('get'"));
    rep(2, REDLOCK_REPLY_ERROR, 0, "NOPERM");
    CHECK_STR(T.q[3].cmd, "GET res");
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    teardown();
}

/* Proves: with REDLOCK_MAX_NODES nodes no loop reaches past the last node,
   even when the memory after the lock and client is not zero. */
static void test_max_nodes_no_overrun(void) {
    static union { redlock_lock lk; unsigned char raw[sizeof(redlock_lock) + 512]; } big;
    redlock_lock_opts o;
    int k, before;
    setup_n(REDLOCK_MAX_NODES, 1, 1000);
    memset(&big, 0xFF, sizeof big);
    memset(&o, 0, sizeof o);
    o.key = "big";
    o.ttl_ms = 1000;
    o.watchdog = 1;
    CHECK_EQ(redlock_lock_init(&big.lk, &C, &o), REDLOCK_OK);
    before = T.qn;
    CHECK_EQ(redlock_acquire(&big.lk), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) { CHECK(T.q[k].node == k - before); ok(k); }
    CHECK_EQ(redlock_lock_state(&big.lk), REDLOCK_STATE_HELD);
    before = T.qn;
    CHECK_EQ(redlock_extend(&big.lk, 0), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) num(k, 1);
    before = T.qn;
    CHECK_EQ(redlock_release(&big.lk), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) { CHECK(T.q[k].node < REDLOCK_MAX_NODES); num(k, 1); }
    CHECK_EQ(redlock_lock_state(&big.lk), REDLOCK_STATE_IDLE);
    redlock_lock_deinit(&big.lk);
    teardown();
}

/* Proves: a lock deinitialised (and its memory reused) inside the CANCELLED
   result of its acquire is never touched again. */
static void scribble_on_cancel(redlock_lock *lk, const redlock_result *r) {
    t_result(lk, r);
    if (r->status == REDLOCK_ERR_CANCELLED) {
        redlock_lock_deinit(lk);
        memset(lk, 0xAA, sizeof *lk);
    }
}
static void test_deinit_in_cancelled_result(void) {
    redlock_lock_opts o;
    int sent;
    setup_n(3, 0, 1000);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.on_result = scribble_on_cancel;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CANCELLED);
    sent = T.qn;
    num(3, 1); num(4, 1); num(5, 1);      /* the release's answers: ignored now */
    advance_to(T.now + 1000000);
    CHECK_EQ(T.qn, sent);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    memset(&L, 0, sizeof L);
    redlock_client_deinit(&C);
}

/* Proves: an old server's error text is recognised when it is the whole
   reply, not only inside a longer one. */
static void test_old_set_error_alone(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "syntax error");
    CHECK_STR(T.q[1].cmd, "INFO server");
    teardown();
}

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

/* Proves: a release's EVALSHA answered NOSCRIPT after the round's node
   timeout still gets its EVAL (compare-and-delete is idempotent; without
   it the key stays until its ttl), whether the NOSCRIPT comes after the
   timer ended the round or after the deadline but before the timer came;
   the release was decided meanwhile (NO_QUORUM) and the EVAL's answer
   changes nothing. redlock_lock_followup() says such an answer is owed. */
static void test_release_late_noscript_after_timeout(void) {
    const char *noscript = "NOSCRIPT No matching script. Please use EVAL.";
    int k;
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(starts(1, "EVALSHA"));
    advance_to(T.now + 50000);                   /* the node timeout: unanswered */
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.qn, 2);
    CHECK(redlock_lock_followup(&L));
    rep(1, REDLOCK_REPLY_ERROR, 0, noscript);     /* late */
    CHECK_EQ(T.qn, 3);
    CHECK_STR(T.q[2].cmd, release_eval_publish(redlock_lock_token(&L)));
    CHECK(!redlock_lock_followup(&L));
    num(2, 1);
    CHECK_EQ(T.res.n, 2);                         /* acquire, release: nothing more */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(T.qn, 3);
    teardown();
    /* three nodes: node 1's NOSCRIPT after the deadline, before the timer;
       node 2's after the timer */
    setup_n(3, 0, 10000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    redlock_release(&L);                          /* 3, 4, 5: EVALSHA */
    num(3, 1);
    T.now += 60000;
    rep(4, REDLOCK_REPLY_ERROR, 0, noscript);
    k = find_cmd(6, 1, "EVAL ");
    CHECK(k >= 0);
    if (k >= 0) CHECK_STR(T.q[k].cmd, release_eval_publish(redlock_lock_token(&L)));
    redlock_on_timer(&C);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    rep(5, REDLOCK_REPLY_ERROR, 0, noscript);
    k = find_cmd(6, 2, "EVAL ");
    CHECK(k >= 0);
    if (k >= 0) CHECK_STR(T.q[k].cmd, release_eval_publish(redlock_lock_token(&L)));
    CHECK_EQ(count_cmd(6, "EVAL "), 2);
    CHECK_EQ(T.res.n, 2);
    teardown();
}

/* Proves: a release is decided as soon as the answers rule a quorum out:
   two "not there" answers of three end it (EXPIRED) without waiting for the
   third node, whose late answer changes nothing. */
static void test_release_decides_without_straggler(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1); ok(2);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num(3, 0); num(4, 0);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    num(5, 1);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* Proves: an answer that comes after its round was decided is still
   reported as a VOTE (node, op, rtt), and changes nothing else. */
static void test_vote_after_decision(void) {
    int i, votes2 = 0;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    T.now += 7000;
    ok(2);
    for (i = 0; i < T.evn; i++)
        if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 2) {
            votes2++;
            CHECK_EQ(T.ev[i].op, REDLOCK_OP_ACQUIRE);
            CHECK_EQ(T.ev[i].vote, 1);
            CHECK_EQ(T.ev[i].rtt_us, 7000);
        }
    CHECK_EQ(votes2, 1);
    CHECK_EQ(T.ev[T.evn - 1].type, REDLOCK_EV_VOTE);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

/* Proves: no reply at all (NULL) is a malformed answer, PROTOCOL; an
   on_error status that is not negative is a TRANSPORT failure. */
static void test_null_reply_and_error_zero(void) {
    setup_n(5, 0, 1000);
    redlock_acquire(&L);
    redlock_on_reply(&C, T.q[0].tag, NULL);
    redlock_on_error(&C, T.q[1].tag, 0);
    redlock_on_error(&C, T.q[2].tag, REDLOCK_ERR_CONNECT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_CONNECT);
    teardown();
}

/* Proves: a lock that expires after a user's extend succeeded reports
   LOST only: that extend was answered already. */
static void test_expiry_after_user_extend(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_extend(&L, 500), REDLOCK_OK);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].status, REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Proves: a lock deinitialised (and its memory scribbled over) inside a
   result callback is never written again: after a failed acquire, after
   a LOST, and after the EXTEND answer that comes before a LOST. */
static redlock_op scribble_op;
static void scribble_on_op(redlock_lock *lk, const redlock_result *r) {
    t_result(lk, r);
    if (r->op == scribble_op) {
        redlock_lock_deinit(lk);
        memset(lk, 0xAA, sizeof *lk);
    }
}
static int all_bytes(const void *p, size_t n, unsigned char v) {
    const unsigned char *b = (const unsigned char *)p;
    while (n--) if (*b++ != v) return 0;
    return 1;
}
static void test_deinit_in_result_never_written_again(void) {
    int pass;
    for (pass = 0; pass < 3; pass++) {
        redlock_lock_opts o;
        int sent;
        setup_n(1, 0, 1000);
        redlock_lock_deinit(&L);
        memset(&o, 0, sizeof o);
        o.key = "res";
        o.ttl_ms = 1000;
        o.retry_count = -1;                  /* no retries */
        o.on_result = scribble_on_op;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        scribble_op = pass == 0 ? REDLOCK_OP_ACQUIRE : pass == 1 ? REDLOCK_OP_LOST : REDLOCK_OP_EXTEND;
        redlock_acquire(&L);
        if (pass == 0) {
            nil(0);                          /* held elsewhere: the acquire fails */
        } else {
            ok(0);
            if (pass == 1) advance_to(redlock_lock_valid_until(&L));
            else { redlock_extend(&L, 0); num(1, 0); } /* the key is gone: EXTEND, then LOST */
        }
        CHECK_EQ(T.res.n, 1 + (pass > 0));
        CHECK(all_bytes(&L, sizeof L, 0xAA));
        sent = T.qn;
        advance_to(T.now + 2000000);
        CHECK_EQ(T.qn, sent);
        CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
        memset(&L, 0, sizeof L);
        redlock_client_deinit(&C);
    }
}

/* Proves: a timer that fires early (one-shot timers may) is armed again
   with the deadline that remains, even though it did not change. */
/* Proves: a lock deinitialised inside send while its LOST cleanup goes out
   is never written again, and its LOST result is not reported. */
static void test_deinit_in_cleanup_send(void) {
    int sent;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    T.deinit_on_send = "EVAL ";
    T.scribble_on_send = 1;
    advance_to(redlock_lock_valid_until(&L));
    CHECK(all_bytes(&L, sizeof L, 0xAA));
    CHECK_EQ(T.res.n, 1);
    sent = T.qn;
    advance_to(T.now + 2000000);
    CHECK_EQ(T.qn, sent);
    memset(&L, 0, sizeof L);
    redlock_client_deinit(&C);
}

/* Proves: the same when the lock is deinitialised inside the send of the
   undo of a failed acquire: no result, nothing written, nothing sent. */
static void test_deinit_in_undo_send(void) {
    redlock_lock_opts o;
    int sent;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.retry_count = -1;
    o.on_result = t_result;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    T.deinit_on_send = "EVAL ";
    T.scribble_on_send = 1;
    nil(0);
    CHECK(all_bytes(&L, sizeof L, 0xAA));
    CHECK_EQ(T.res.n, 0);
    sent = T.qn;
    advance_to(T.now + 2000000);
    CHECK_EQ(T.qn, sent);
    memset(&L, 0, sizeof L);
    redlock_client_deinit(&C);
}

/* Proves: results that leave the lock not held carry validity 0. */
static void test_validity_zero_unless_held(void) {
    int i;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    num(1, 1);
    redlock_acquire(&L);
    nil(2);
    num(3, 0);
    run_until_sent(4);
    redlock_release(&L);                     /* cancels the acquire */
    for (i = 0; i < T.res.n; i++)
        if (!(T.res.r[i].op == REDLOCK_OP_ACQUIRE && T.res.r[i].status == REDLOCK_OK)) CHECK_EQ(T.res.r[i].validity_us, 0);
    CHECK(T.res.n >= 3);
    teardown();
}

static void test_early_timer_rearmed(void) {
    int64_t d;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    d = T.timer;
    CHECK(d != REDLOCK_NO_DEADLINE);
    T.timer = 0;
    advance_to(d - 1000);
    CHECK_EQ(T.timer, d);
    T.timer = 0;
    redlock_on_timer(&C);                    /* spurious, at the same time */
    CHECK_EQ(T.timer, d);
    teardown();
}

/* Proves: an INFO answer that is not a string says nothing about the
   version: no switch to legacy. */
static void test_info_not_a_string(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR syntax error");
    CHECK_STR(T.q[1].cmd, "INFO server");
    num(1, 20417);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(count_cmd(0, "SETNX"), 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    teardown();
}

/* ---- adopting a token acquired elsewhere ---- */

static const char ADOPTED[] = "00112233445566778899aabbccddeeff";

/* Proves: adopt refuses what it must, and changes nothing then. */
static void test_adopt_errors(void) {
    redlock_lock spare;
    memset(&spare, 0, sizeof spare);
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_lock_adopt(NULL, ADOPTED, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&spare, ADOPTED, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_adopt(&L, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "0011", 0), REDLOCK_ERR_INVALID);                      /* short */
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeeff0", 0), REDLOCK_ERR_INVALID); /* long */
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeefg", 0), REDLOCK_ERR_INVALID); /* not hex */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, -1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, ((int64_t)1 << 40) + 1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_EQ(T.qn, 0);
    redlock_acquire(&L);                                 /* acquiring: BUSY */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    ok(0); ok(1); ok(2);                                 /* held: ALREADY_HELD */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_ALREADY_HELD);
    redlock_release(&L);                                 /* releasing: BUSY */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    num(3, 1); num(4, 1);                                /* released, node 2 still out: BUSY */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK(redlock_lock_pending(&L));
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    num(5, 1);
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899AABBCCDDEEFF", 0), REDLOCK_OK); /* either case */
    CHECK_STR(redlock_lock_token(&L), "00112233445566778899AABBCCDDEEFF");
    teardown();
}

/* A token with opts.label is the label and 32 lowercase hex digits. */
static int labelled(const char *tok, const char *label) {
    size_t i, n = strlen(label);
    if (strncmp(tok, label, n) != 0 || strlen(tok) != n + REDLOCK_TOKEN_LEN) return 0;
    for (i = n; tok[i]; i++)
        if (!strchr("0123456789abcdef", tok[i])) return 0;
    return 1;
}

/* Proves: opts.label is written before each token's random part, in SET,
   in the scripts and in a legacy value, and a value with it is ours (and
   another label's is not); a second acquire keeps the label with new
   digits; lock_init refuses a bad label; adopt takes a token whose label
   fits (none, or one no longer than the lock's own), and the next acquire
   has the lock's own label again. */
static void test_token_label(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_lock spare;
    char expect[512], first[REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN + 1], other[128];
    static const char *const bad[] = {"a b", "tab\t", "caf\xc3\xa9",
                                      "0123456789012345678901234567890123456789012345678901234567890123x"};
    size_t k;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.label = "web1:42:";
    setup_with(&cfg, &o);
    CHECK_STR(redlock_lock_token(&L), "");                  /* no token before the first acquire */
    redlock_acquire(&L);
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    snprintf(expect, sizeof expect, "SET res %s NX PX 1000", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    ok(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    strcpy(first, redlock_lock_token(&L));
    redlock_release(&L);
    CHECK(strstr(T.q[1].cmd, first) != NULL && starts(1, "EVALSHA "));
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);                                     /* new digits, the same label */
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    CHECK(strcmp(first, redlock_lock_token(&L)) != 0);
    nil(2);
    /* adopt: no label, or a label that fits; a longer one does not */
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, "web1:4242:00112233445566778899aabbccddeeff", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "a b:00112233445566778899aabbccddeeff", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "web1:42:00112233445566778899aabbccddeef", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "db7:9:00112233445566778899aabbccddeeff", 0), REDLOCK_OK);
    CHECK_STR(redlock_lock_token(&L), "db7:9:00112233445566778899aabbccddeeff");
    T.qn = 0;
    redlock_extend(&L, 2000);
    CHECK_STR(T.q[0].cmd, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res db7:9:00112233445566778899aabbccddeeff 2000");
    num(0, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    num(1, 1);
    redlock_acquire(&L);                                     /* the lock's own label again */
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    nil(2);
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeeff", 0), REDLOCK_OK); /* no label: fits */
    CHECK_STR(redlock_lock_token(&L), "00112233445566778899aabbccddeeff");
    /* refused labels; "" is none */
    memset(&spare, 0, sizeof spare);
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        o.label = bad[k];
        CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_ERR_INVALID);
    }
    o.label = "0123456789012345678901234567890123456789012345678901234567890123"; /* REDLOCK_MAX_LABEL */
    CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_OK);
    T.qn = 0;
    redlock_acquire(&spare);
    CHECK(labelled(redlock_lock_token(&spare), o.label));
    nil(0);
    redlock_lock_deinit(&spare);
    o.label = "";
    CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_OK);
    T.qn = 0;
    redlock_acquire(&spare);
    CHECK(labelled(redlock_lock_token(&spare), ""));
    nil(0);
    redlock_lock_deinit(&spare);
    teardown();
    /* legacy: "expiry:label+digits"; the same digits under another label are not ours */
    cfg.mode[0] = REDLOCK_MODE_LEGACY;
    o.label = "web1:42:";
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "SETNX res %s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    CHECK_STR(T.q[0].cmd, expect);
    num(0, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    snprintf(other, sizeof other, "%lld:web2:42:%s", (long long)T.wall + 1001, redlock_lock_token(&L) + 8);
    redlock_release(&L);
    CHECK_STR(T.q[1].cmd, "GET res");
    rep_exact(1, REDLOCK_REPLY_STRING, other, strlen(other));
    CHECK_EQ(count_cmd(0, "DEL"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    redlock_acquire(&L);
    num(2, 1);
    snprintf(other, sizeof other, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    redlock_release(&L);
    CHECK_STR(T.q[3].cmd, "GET res");
    rep_exact(3, REDLOCK_REPLY_STRING, other, strlen(other));
    CHECK(starts(4, "DEL res"));
    teardown();
}

/* Proves: an adopted token without a validity is HELD with nothing left to
   act on; release deletes it by that token; extend gives it a validity. */
static void test_adopt_unknown_validity(void) {
    int64_t t0;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    CHECK_EQ(T.qn, 0);                       /* nothing sent, no result */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_STR(redlock_lock_token(&L), ADOPTED);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    CHECK_EQ(redlock_lock_valid_until(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE); /* no validity to run out */
    T.now += 3600 * 1000000LL;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_ALREADY_HELD);
    /* extend: the validity is the new ttl's, from the round's start */
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    CHECK_STR(T.q[0].cmd, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res 00112233445566778899aabbccddeeff 5000");
    T.now += 1000;
    num(0, 1);
    num(1, -1);                              /* held by another there */
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.r[0].validity_us, t0 + 5000000 - drift_us(5000, 0) - T.now);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 5000000 - drift_us(5000, 0));
    CHECK_EQ(redlock_lock_remaining_us(&L), t0 + 5000000 - drift_us(5000, 0) - T.now);
    {   /* the vote against says the node holds another token */
        int i, other = -1;
        for (i = 0; i < T.evn; i++)
            if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 1) other = T.ev[i].held_by_other;
        CHECK_EQ(other, 1);
        for (i = 0; i < T.evn; i++)
            if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 0) CHECK_EQ(T.ev[i].held_by_other, 0);
    }
    /* release by the adopted token */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_STR(T.q[3].cmd, "EVALSHA 5936c7a91d6097fc50292f9e90ec2ed3e513e629 1 res 00112233445566778899aabbccddeeff 1");
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: the RENEWED event of an adopted token's extend says how much
   validity was left when the round started: none while it is unknown
   (adopted without one), the rest of the given one otherwise. */
static void test_adopt_renewed_slack(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    num(0, 1);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->slack_us == 0);
    CHECK(ev && ev->node == -1 && ev->op == REDLOCK_OP_EXTEND && ev->votes == 1);
    teardown();
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 500);
    T.now += 100000;
    redlock_extend(&L, 0);
    num(0, 1);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->slack_us == 400000);
    teardown();
}

/* Proves: an adopted token whose extend reaches a quorum too late for the
   new ttl has no validity: EXPIRED, then LOST. And an inconclusive
   renewal of such a token retries after the retry delay, not at once. */
static void test_adopt_extend_late_and_retry(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 10);
    T.now += 9000;                           /* 10 ms - drift (2.1 ms) passed */
    num(0, 1);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();
    base_config(&cfg, 1);
    base_opts(&o, 1000, 1);
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);                       /* the watchdog renews at once */
    CHECK(starts(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res 00112233445566778899aabbccddeeff 1000"));
    advance_to(T.now + 50000);               /* unanswered: node timeout */
    CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(T.timer, T.now + 100000);       /* again after the retry delay */
    advance_to(T.timer);
    CHECK_EQ(T.qn, 2);
    num(1, 1);
    CHECK_EQ(redlock_lock_remaining_us(&L), 1000000 - drift_us(1000, 0));
    teardown();
}

/* Proves: a validity given to adopt counts from the call: the lock reads
   LOST (EXPIRED) when it runs out, and the timer reports it. */
static void test_adopt_given_validity(void) {
    int64_t t0;
    setup_n(1, 0, 1000);
    t0 = T.now;
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 300), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 300000);
    CHECK_EQ(redlock_lock_remaining_us(&L), 300000);
    CHECK_EQ(T.timer, t0 + 300000);
    T.now = t0 + 300000;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    advance_to(T.now);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    /* LOST: adopt again is allowed once the cleanup is done */
    CHECK(redlock_lock_pending(&L));
    CHECK_EQ(redlock_lock_adopt(&L, OTHER_TOKEN, 0), REDLOCK_ERR_BUSY);
    num(0, 0);
    CHECK_EQ(redlock_lock_adopt(&L, OTHER_TOKEN, 0), REDLOCK_OK);
    CHECK_STR(redlock_lock_token(&L), OTHER_TOKEN);
    teardown();
}

/* Proves: on a node without scripts, an adopted token's modern value is
   acted on only after PTTL says it lives long enough; PTTL -2 is MISSING,
   a short PTTL leaves the key to expire, a malformed one is PROTOCOL. */
static void test_adopt_noscript_pttl(void) {
    static const char noperm[] = "NOPERM this user has no permissions to run the 'evalsha' command";
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, noperm);
    CHECK_STR(T.q[1].cmd, "PTTL res");
    num(1, 20000);
    CHECK_STR(T.q[2].cmd, "GET res");
    rep(2, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_STR(T.q[3].cmd, "DEL res");
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* the node is known to refuse scripts now: PTTL comes first */
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    CHECK_STR(T.q[4].cmd, "PTTL res");
    num(4, 30);                              /* < node timeout + drift: let it expire */
    CHECK_STR(T.q[5].cmd, "GET res");
    rep(5, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 6);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num(6, -2);                              /* no such key */
    CHECK_EQ(T.qn, 7);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(7, REDLOCK_REPLY_STRING, 0, "12");   /* not an integer */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num(8, -3);                              /* out of range */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    /* extend: PTTL, GET, PEXPIRE; -1 (no expiry) lives long enough */
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    CHECK_STR(T.q[9].cmd, "PTTL res");
    num(9, -1);
    CHECK_STR(T.q[10].cmd, "GET res");
    rep(10, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_STR(T.q[11].cmd, "PEXPIRE res 1000");
    num(11, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    /* known from now on: the next release acts after GET alone */
    redlock_release(&L);
    CHECK_STR(T.q[12].cmd, "GET res");
    rep(12, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_STR(T.q[13].cmd, "DEL res");
    teardown();
}

/* Proves: a PTTL measured from when it was sent (the key lived that long
   from then), so a slow answer leaves less to act on. */
static void test_adopt_pttl_counts_from_send(void) {
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM no scripts for you");
    T.now += 40000;                          /* PTTL answered 40 ms after it went out */
    num(1, 100);                             /* 100 - 40 - drift(1 ms + 2 ms) = 57 ms left > 50 + 3 */
    T.now += 5000;                           /* GET answered 5 ms later: 52 ms left, < 53 */
    rep(2, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 3);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
}

/* Proves: a legacy node needs no PTTL: the value's expiry says how long
   the adopted token's key lives; GETSET extends it, a near expiry is left. */
static void test_adopt_legacy(void) {
    setup_legacy(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    CHECK_STR(T.q[0].cmd, "GET res");
    rep(0, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, ADOPTED));
    CHECK(starts(1, "GETSET res "));
    CHECK(ends(1, ADOPTED));
    rep(1, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);                     /* known after the GETSET: not a takeover, acts */
    rep(2, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 1000, ADOPTED));
    teardown();
    setup_legacy(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    CHECK_STR(T.q[0].cmd, "GET res");
    rep(0, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, ADOPTED));
    CHECK_STR(T.q[1].cmd, "DEL res");
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(2, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 100, ADOPTED)); /* 100 ms < 50 + drift 62 */
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(3, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, OTHER_TOKEN));
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Proves: an adopted token in a legacy value on an AUTO node (a client that
   found the server too old acquired it) switches the node to legacy and
   is acted on by the value's expiry; a PTTL the server refuses leaves a
   modern value's life unknown, and such a key is left to expire. */
static void test_adopt_auto_legacy_value(void) {
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    rep(0, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'EVALSHA'");
    CHECK_STR(T.q[1].cmd, "PTTL res");
    rep(1, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'PTTL'");  /* 2.4 has no PTTL */
    CHECK_STR(T.q[2].cmd, "GET res");
    rep(2, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
    CHECK(starts(3, "GETSET res "));
    rep(3, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM no scripts");
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOPERM no PTTL either");
    CHECK_STR(T.q[2].cmd, "GET res");
    rep(2, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 3);                       /* life unknown: no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    /* MODERN: a legacy value is somebody else's */
    teardown();
    {
        redlock_config cfg;
        redlock_lock_opts o;
        base_config(&cfg, 1);
        cfg.mode[0] = REDLOCK_MODE_MODERN;
        base_opts(&o, 1000, 0);
        setup_with(&cfg, &o);
    }
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    num(0, -1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    teardown();
}

/* Proves: an adopted token's life on a node without scripts is counted in
   the right units, to the microsecond, from when the PTTL was sent: a PTTL
   of 100 ms (less the drift of 100 ms: 97 ms) acts when the GET comes back
   less than 35 ms after the PTTL went out (more than a node timeout and
   the lock's drift, 62 ms, left) and leaves the key alone at 35 ms, and
   at PTTL 0; once the GET showed the token its life is known (no PTTL
   again); a legacy value's expiry (ms on the wall clock, less the lock's
   drift) likewise, at the millisecond where it tips, for two ttls (two
   drifts). */
static void test_adopt_life_units(void) {
    static const char noperm[] = "NOPERM this user has no permissions to run the 'evalsha' command";
    redlock_config cfg;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    T.now += 10000;           /* the PTTL goes out 10 ms into the round */
    rep(0, REDLOCK_REPLY_ERROR, 0, noperm);
    CHECK_STR(T.q[1].cmd, "PTTL res");
    num(1, 100);
    CHECK_STR(T.q[2].cmd, "GET res");
    T.now += 34999;           /* 62.001 ms left: acts */
    rep(2, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_STR(T.q[3].cmd, "DEL res");
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);      /* a node known without scripts: PTTL at once */
    CHECK_STR(T.q[4].cmd, "PTTL res");
    num(4, 100);
    T.now += 35000;           /* 62 ms left: not more than 50 ms + 12 ms */
    rep(5, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 6);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num(6, 0);                /* expiring now: nothing left to act on */
    rep(7, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 8);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 2);
    teardown();
    /* once a GET showed the token, its life is known: after an extend
       that found too little of it (lost), the cleanup reads GET alone */
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    rep(0, REDLOCK_REPLY_ERROR, 0, noperm);
    num(1, 30);
    rep(2, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    CHECK_STR(T.q[3].cmd, "GET res");
    teardown();
    /* legacy, ttl 1000: drift 10 + 2 + 50 ms; acts when more than
       50 + 62 ms remain after the drift: 174 ms is not enough, 175 is */
    setup_legacy(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(0, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 174, ADOPTED));
    CHECK_EQ(T.qn, 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 175, ADOPTED));
    CHECK_STR(T.q[2].cmd, "DEL res");
    teardown();
    /* ttl 45: drift 0.45 + 2 + 50 ms, threshold 102.45 ms after it:
       154 ms is not enough, 155 is */
    base_config(&cfg, 1);
    cfg.mode[0] = REDLOCK_MODE_LEGACY;
    base_opts(&o, 45, 0);
    setup_with(&cfg, &o);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(0, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 154, ADOPTED));
    CHECK_EQ(T.qn, 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_STRING, 0, legacy_value(T.wall + 155, ADOPTED));
    CHECK_STR(T.q[2].cmd, "DEL res");
    teardown();
}

/* Proves: adopt forgets what the handle knew of its previous token's key:
   after a hold of its own (whose key lived long enough on the node), an
   adopted token whose life the node will not say (PTTL refused) is left
   to expire, not deleted on the strength of the old hold. */
static void test_adopt_forgets_old_life(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    redlock_release(&L);
    rep(2, REDLOCK_REPLY_ERROR, 0, "NOPERM no scripts");
    CHECK_STR(T.q[3].cmd, "PTTL res");
    rep(3, REDLOCK_REPLY_ERROR, 0, "NOPERM no PTTL either");
    CHECK_STR(T.q[4].cmd, "GET res");
    rep(4, REDLOCK_REPLY_STRING, 0, ADOPTED);
    CHECK_EQ(T.qn, 5);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
}

/* ---- bounds kept per node, far from the round's start ---- */

/* Answers an extend's EVALSHA (command k) with NOPERM: that node turns to
   GET-then-act. Returns the index of the GET. */
static int noscript_get(int k) {
    rep(k, REDLOCK_REPLY_ERROR, 0, "NOPERM no permissions to run the 'evalsha' command");
    CHECK(starts(T.qn - 1, "GET res"));
    return T.qn - 1;
}

/* Proves: on a node without scripts, an extend's PEXPIRE answering 0 (the
   key expired between GET and PEXPIRE) is a plain no, like the script's 0,
   not a malformed reply. */
static void test_noscript_pexpire_zero(void) {
    int g;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0); ok(1); ok(2);
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    g = noscript_get(3);
    rep(g, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK(starts(T.qn - 1, "PEXPIRE res 2000") && T.q[T.qn - 1].node == 0);
    num(T.qn - 1, 0);
    CHECK_EQ(vote_status(0), 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->vote, 0);
    num(4, 1); num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
}

/* Proves: a key whose life is more than half an hour (kept in ms) is still
   known to last that long: the release's check-then-act deletes it. */
static void test_noscript_long_ttl_release(void) {
    int g;
    setup_n(1, 0, 7200000);                       /* two hours */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    T.now += 600000000;                           /* ten minutes later */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    g = noscript_get(1);
    rep(g, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK(starts(T.qn - 1, "DEL res"));
    num(T.qn - 1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: a node whose key died more than half an hour ago (an hour here:
   its extends failed while the others renewed) stays dead: when its GET
   later shows our token (a stale reading), nothing is acted on there. */
static void test_noscript_long_dead_node(void) {
    const int64_t ttl = 3600000, minute = 60000000;
    int64_t t0;
    int round, g, k;
    setup_n(3, 0, ttl);                           /* one hour */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0); ok(1); ok(2);
    t0 = T.now;
    for (round = 1; round <= 5; round++) {
        int first = T.qn;
        T.now = t0 + 20 * (round < 5 ? round : 6) * minute;
        CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
        for (k = first; k < first + 3; k++) {
            if (T.q[k].node != 0) { num(k, 1); continue; }
            if (round == 1) g = noscript_get(k);
            else { g = k; CHECK(starts(k, "GET res")); }
            if (round < 5) { rep(g, REDLOCK_REPLY_ERROR, 0, "ERR busy"); continue; }
            rep(g, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
            CHECK(!starts(T.qn - 1, "PEXPIRE"));
        }
        CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    }
    teardown();
}

/* Proves: at the maximum node count, with clock values whose bits would
   pass for node flags, starting an extend round leaves the validity alone. */
static void test_max_nodes_round_keeps_validity(void) {
    int k;
    int64_t v;
    setup_n(REDLOCK_MAX_NODES, 0, 1000);
    T.now = 0x60000000;                           /* the validity's 4th byte: 0x60 */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) ok(k);
    v = redlock_lock_valid_until(&L);
    CHECK_EQ(v, T.now + 1000000 - drift_us(1000, 0));
    T.now += 1;
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), v);
    for (k = REDLOCK_MAX_NODES; k < 2 * REDLOCK_MAX_NODES; k++) num(k, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1000000 - drift_us(1000, 0));
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    for (k = 2 * REDLOCK_MAX_NODES; k < 3 * REDLOCK_MAX_NODES; k++) num(k, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: lock numbers wrap within the tag's 40 bits (above the address's
   24 hash bits with the built-in table): a lock initialised after 2^16
   others still gets its replies. */
static void test_lock_numbers_wrap(void) {
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    C._next_id = (uint64_t)1 << (40 - C._hash_bits);
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a lock number that wraps onto a live lock's id (same table
   entry: a caller's table of one) is skipped, as are the next ones that
   live locks have: four live locks, four ids, each acquired from its own
   replies (answered first to last and last to first). */
static void test_live_ids_distinct_across_wrap(void) {
    static redlock_lock *table[1];
    redlock_lock lk[4];
    redlock_lock_opts o;
    redlock_client c;
    int i, held = 0;
    m_client(&c, table, 1);
    memset(&o, 0, sizeof o);
    o.key = "wrap";
    o.ttl_ms = 1000;
    for (i = 0; i < 3; i++) CHECK_EQ(redlock_lock_init(&lk[i], &c, &o), REDLOCK_OK);
    c._next_id = (uint64_t)1 << 40; /* the next number wraps to the first lock's */
    CHECK_EQ(redlock_lock_init(&lk[3], &c, &o), REDLOCK_OK);
    for (i = 0; i < 3; i++) CHECK(lk[3]._id != lk[i]._id);
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_acquire(&lk[i]), REDLOCK_OK);
    CHECK_EQ(M.n, 4);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        redlock_on_reply(&c, M.tag[0], &r);
        redlock_on_reply(&c, M.tag[3], &r);
        redlock_on_reply(&c, M.tag[1], &r);
        redlock_on_reply(&c, M.tag[2], &r);
    }
    for (i = 0; i < 4; i++) held += redlock_lock_state(&lk[i]) == REDLOCK_STATE_HELD;
    CHECK_EQ(held, 4);
    redlock_client_deinit(&c);
    m_free();
}

/* Proves: a handle initialised again exactly one wrap of the lock numbers
   later (65,536 lock_inits on the client: its new id is the old one) does
   not take the old life's late answer for its own: the new life's tags
   differ in their sequence. */
static void test_stale_tag_one_wrap_later(void) {
    redlock_lock_opts o;
    redlock_lock scratch;
    redlock_tag old;
    uint64_t old_id;
    long k;
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    old = T.q[0].tag;
    old_id = L._id;
    T.qn = 0;
    base_opts(&o, 1000, 0);
    for (k = 0; k < 65535; k++) {
        CHECK_EQ(redlock_lock_init(&scratch, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&scratch);
    }
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(L._id, old_id); /* the case in point */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        redlock_on_reply(&C, old, &r);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(T.res.n, 0);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: the built-in monotonic clock reads exactly the system's, in µs
   (each reading lies between two of clock_gettime's, truncated alike). */
static void test_builtin_mono_exact(void) {
    int k;
    for (k = 0; k < 200; k++) {
        int64_t before, d, after;
        setup_builtin_clocks(REDLOCK_MODE_AUTO, 5000);
        before = sys_mono_us();
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        after = sys_mono_us();
        d = redlock_next_deadline(&C) - 50000;   /* the round's deadline: the node timeout after now */
        teardown();
        if (d < before || d > after) {
            printf("#   reading %d: clock %lld outside [%lld, %lld]\n", k, (long long)d, (long long)before, (long long)after);
            CHECK(0);
            break;
        }
    }
}

/* Proves: a lock whose validity ran out unnoticed is reported LOST when the
   next call comes, after its leftover keys are deleted; if the transport
   deinitialises the lock while sending that clean-up, the call returns
   DETACHED, reports nothing and sends nothing more. */
static void test_settle_deinit_in_cleanup_send(void) {
    int q0;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0); ok(1); ok(2);
    q0 = T.qn;
    T.now = redlock_lock_valid_until(&L) + 1;
    T.deinit_on_send = "EVAL ";
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(T.qn, q0 + 1);                       /* the first clean-up command only */
    CHECK(starts(q0, "EVAL "));
    CHECK_EQ(T.res.n, 1);                         /* deinitialised: no LOST after that */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    redlock_client_deinit(&C);
    /* the same with a synchronous transport: the clean-up is over before
       LOST is reported, LOST's callback acquires again, and the send of
       that acquire's SET deinitialises the lock */
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    q0 = T.qn;
    T.now = redlock_lock_valid_until(&L) + 1;
    T.sync = sync_ok;
    T.acquire_on_lost = 1;
    T.deinit_on_send = "SET ";
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(T.acquire_rc, REDLOCK_OK);
    CHECK_EQ(T.qn, q0 + 2);                       /* the clean-up, then the SET */
    CHECK(starts(q0, "EVAL ") && starts(q0 + 1, "SET "));
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.n, 2);
    redlock_client_deinit(&C);
}

/* Proves: the bound an acquire leaves on a node is ttl less the drift: a
   no-script release coming within node timeout + drift of it does not act
   on that node (its key may be gone and another client's there). */
static void test_noscript_acquire_bound(void) {
    int g;
    int64_t t0;
    setup_n(1, 0, 1000);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    T.now = t0 + 1000000 - 50000 - drift_us(1000, 0); /* the bound less the node timeout: too close */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    g = noscript_get(1);
    rep(g, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK_EQ(T.qn, g + 1);                        /* no DEL */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
    setup_n(1, 0, 1000);                          /* earlier than the bound less timeout and drift: it deletes */
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    T.now = t0 + 1000000 - 50000 - 2 * drift_us(1000, 0) - 1;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    g = noscript_get(1);
    rep(g, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK(starts(T.qn - 1, "DEL res"));
    teardown();
}

/* Proves: redlock_lock_followup() says whether an answer still owed will be
   followed by another command: a node's first SET (AUTO) and first script,
   NOSCRIPT, a chain of a node without scripts, the legacy chain; and not
   for a command the node has understood before, nor with MODERN set. */
static void test_followup(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int k;
    CHECK_EQ(redlock_lock_followup(NULL), 0);
    setup_no_retry(3, 0, 10000);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* nothing running */
    redlock_acquire(&L);
    ok(0);
    ok(1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_pending(&L), 0);             /* a won acquire leaves no round running ... */
    CHECK(redlock_lock_followup(&L) != 0);             /* ... but node 2's late SET may tell a GET + DEL release its bound */
    ok(2);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    redlock_release(&L);                               /* EVALSHA 3, 4, 5 */
    num(3, 1);
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* node 2's first script: NOSCRIPT means EVAL next */
    num(5, 1);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    redlock_acquire(&L);                               /* SET 6, 7, 8 */
    ok(6);
    ok(7);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* the release script ran on node 2 */
    ok(8);
    redlock_release(&L);                               /* EVALSHA 9, 10, 11 */
    num(9, 1);
    num(10, 1);
    CHECK(redlock_lock_pending(&L) != 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* node 2 ran a script before */
    rep(11, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(12, "EVAL "));
    CHECK(redlock_lock_followup(&L) != 0);             /* its scripts are gone: not known again until answered */
    num(12, 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    /* a chain on a node without scripts: GET owed, then DEL owed */
    redlock_acquire(&L);                               /* SET 13, 14, 15 */
    ok(13);
    ok(14);
    ok(15);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);       /* EVALSHA 16, 17, 18: node 0 has no scripts */
    rep(16, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    CHECK_STR(T.q[19].cmd, "GET res");
    rep(19, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK(starts(20, "PEXPIRE res "));
    num(20, 1);
    num(17, 1);
    num(18, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);                               /* GET 21, EVALSHA 22, 23 */
    CHECK_STR(T.q[21].cmd, "GET res");
    num(22, 1);
    num(23, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* GET: DEL follows */
    rep(21, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    CHECK_STR(T.q[24].cmd, "DEL res");
    CHECK(redlock_lock_pending(&L) != 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* DEL ends the chain */
    num(24, 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
    /* MODERN configured: a first script still may be answered NOSCRIPT,
       and the extend script having run says nothing of the release's */
    base_config(&cfg, 3);
    cfg.retry_count = -1;
    for (k = 0; k < 3; k++) cfg.mode[k] = REDLOCK_MODE_MODERN;
    base_opts(&o, 10000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ok(0);
    ok(1);
    ok(2);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);       /* 3, 4, 5 */
    num(3, 1);
    num(4, 1);
    num(5, 1);
    redlock_release(&L);                               /* 6, 7, 8 */
    num(6, 1);
    num(7, 1);
    CHECK(redlock_lock_followup(&L) != 0);
    num(8, 1);
    teardown();
    /* legacy: a release is GET, then DEL */
    setup_legacy(3, -1, 10000);
    redlock_acquire(&L);
    num(0, 1);
    num(1, 1);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_release(&L);                               /* GET 3, 4, 5 */
    for (k = 3; k < 5; k++) rep(k, REDLOCK_REPLY_STRING, 0, T.q[0].cmd + strlen("SETNX res "));
    CHECK_STR(T.q[6].cmd, "DEL res");
    num(6, 1);
    num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* node 2's GET */
    teardown();
}

/* ---- fenced locks ---- */

static const char FACQ_SHA[] = "EVALSHA 08c7557d4c89b0ab5b53a3a0ef90a225f2be7888 2 res " REDLOCK_FENCE_PREFIX "res ";
static const char FENCE_SHA[] = "EVALSHA 48e95165afb854dba74eb9d2c02d43ed7c87f94a 2 res " REDLOCK_FENCE_PREFIX "res ";

static void setup_fenced(int nodes) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    setup_with(&cfg, &o);
}
/* command k is `prefix` followed by the lock's token and `tail` */
static int fsent_is(int k, const char *prefix, const char *tail) {
    char expect[400];
    snprintf(expect, sizeof expect, "%s%s%s", prefix, redlock_lock_token(&L), tail);
    if (k < T.qn && strcmp(T.q[k].cmd, expect) == 0) return 1;
    printf("#   command %d: \"%s\", expected \"%s\"\n", k, k < T.qn ? T.q[k].cmd : "(none)", expect);
    return 0;
}

/* Proves: a fenced acquire is one script per node (SET NX PX, then INCR of
   the key's counter) with the token and the ttl; once a quorum won, the
   highest count of those nodes goes back to them (the write-back, with the
   token; a node whose win comes later gets the same fence, not its own
   count), and only a quorum of write-backs makes the lock held,
   with that fence and the validity counted from the acquire's start; extend
   and release keep the fence; a new acquire shows none until it wins. */
static void test_fence_acquire_write_back(void) {
    int64_t start;
    setup_fenced(3);
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    CHECK(fsent_is(0, FACQ_SHA, " 1000"));
    CHECK(fsent_is(2, FACQ_SHA, " 1000"));
    T.now += 3000;
    num(0, 5);
    num(2, 9);
    CHECK_EQ(T.qn, 5);                    /* the write-back, to nodes 0 and 2 only */
    CHECK(fsent_is(3, FENCE_SHA, " 9"));
    CHECK(fsent_is(4, FENCE_SHA, " 9"));
    CHECK_EQ(T.q[3].node, 0);
    CHECK_EQ(T.q[4].node, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    CHECK_EQ(T.res.n, 0);
    num(1, 12);                           /* a late win: written back the same fence */
    CHECK(fsent_is(5, FENCE_SHA, " 9"));
    CHECK_EQ(T.q[5].node, 1);
    num(3, 1);
    CHECK_EQ(T.res.n, 0);                 /* one write-back is not a quorum */
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 9);
    CHECK_EQ(redlock_lock_fence(&L), 9);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - 12000);
    num(5, 1);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK(starts(6, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res "));
    num(6, 1); num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 0); /* only an acquire's result carries it */
    CHECK_EQ(redlock_lock_fence(&L), 9);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num(9, 1); num(10, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 9);  /* still readable after the hold */
    num(11, 1);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    num(12, 10); num(13, 0); num(14, 11);
    CHECK(fsent_is(15, FENCE_SHA, " 11"));
    CHECK(fsent_is(16, FENCE_SHA, " 11"));
    CHECK_EQ(T.qn, 17);
    num(15, 1); num(16, 1);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 11);
    CHECK_EQ(redlock_lock_fence(&L), 11);
    teardown();
}

/* Proves: a write-back that finds the key gone (0) on too many nodes fails
   the attempt (VALIDITY: the key ran out), which is undone everywhere and
   retried without a fence to show; a write-back that cannot reach a quorum
   in time (node timeout) fails it as NO_QUORUM; the validity is checked
   again when the write-backs are in. */
static void test_fence_write_back_fails(void) {
    setup_fenced(3);
    redlock_acquire(&L);
    num(0, 3); num(1, 4);
    num(3, 0); num(4, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0); /* node 2's acquire may still win */
    num(2, 0);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_VALIDITY);
    CHECK_EQ(T.qn, 8);                    /* the undo, on every node */
    CHECK(starts(5, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])"));
    CHECK(starts(7, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])"));
    CHECK_EQ(redlock_lock_fence(&L), 0);
    num(5, 0); num(6, 1); num(7, 0);
    run_until_sent(8);
    CHECK(fsent_is(8, FACQ_SHA, " 1000"));
    num(8, 5); num(9, 6);
    advance_to(T.now + 50000);            /* no write-back answers: node timeout */
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 2);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_NO_QUORUM);
    teardown();
    /* the write-backs come back after the validity ran out */
    setup_fenced(1);
    redlock_acquire(&L);
    num(0, 1);
    T.now += 990000;
    num(1, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_VALIDITY);
    teardown();
}

/* Proves: NOSCRIPT moves the fenced acquire and the write-back to EVAL of
   their texts (with both keys); scripts refused (NOPERM, an old server)
   end the acquire with NO_SCRIPTING, never a legacy fallback; a fenced
   lock is refused at init when too few nodes may script by configuration
   (also a reentrant one); no lock may take a counter's name; a
   counter that is not a number is the server's error. */
static void test_fence_scripts_and_refusals(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_fenced(1);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(1, "EVAL if redis.call('set',KEYS[1],ARGV[1],'nx','px',ARGV[2]) then return redis.call('incr',KEYS[2]) end return 0 2 res " REDLOCK_FENCE_PREFIX "res "));
    num(1, 2);
    rep(2, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(3, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then local c=tonumber(redis.call('get',KEYS[2]))"));
    CHECK(strstr(T.q[3].cmd, " 2 res " REDLOCK_FENCE_PREFIX "res ") != NULL);
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 2);
    teardown();
    setup_fenced(3);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    rep(1, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'EVALSHA'");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    teardown();
    setup_fenced(1);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "WRONGTYPE Operation against a key holding the wrong kind of value");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    teardown();
    base_config(&cfg, 3);
    cfg.mode[0] = cfg.mode[2] = REDLOCK_MODE_LEGACY;
    {
        redlock_callbacks cb;
        base_callbacks(&cb);
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        base_opts(&o, 1000, 0);
        o.fence = 1;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        o.fence = 0;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&L);
        o.fence = 1;
        o.reentrant = 1;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        o.reentrant = 0;
        o.fence = 0;
        o.key = REDLOCK_FENCE_PREFIX "res";
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_KEY);
        o.key = "redlock:fenc";
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&L);
        redlock_client_deinit(&C);
    }
    CHECK_EQ(redlock_lock_fence(NULL), 0);
}

/* Proves: an ACL's denial of a key is told apart from a denial of the
   command, in Redis's texts (6 and 7.0, 7.2, a script's own call): a fenced
   acquire refused the counter key fails with NOPERM, not NO_SCRIPTING, at
   once when no quorum is left, with no mode switch; a plain SET refused its
   key says NOPERM (not SERVER); a release refused its key does not turn the
   node to GET + compare (no switch, no GET), while the command's denial
   still does; the status has its own words. */
static void test_acl_key_denied(void) {
    static const char *const denied[] = {
        "NOPERM this user has no permissions to access one of the keys used as arguments",
        "NOPERM No permissions to access a key",
        ("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments "
         "script: 08c7557d4c89b0ab5b53a3a0ef90a225f2be7888, on @user_script:1."),
        "ERR ACL failure in script: User u has no permissions to access the 'redlock:fence:res' key script: x",
    };
    int k;
    for (k = 0; k < 4; k++) {
        setup_fenced(3);
        redlock_acquire(&L);
        rep(0, REDLOCK_REPLY_ERROR, 0, denied[k]);
        rep(1, REDLOCK_REPLY_ERROR, 0, denied[(k + 1) % 4]);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
        CHECK_EQ(vote_status(1), REDLOCK_ERR_NOPERM);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NOPERM); /* at once: no retry can win */
        CHECK(T.res.n == 1 && T.res.r[0].attempts == 1);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        teardown();
    }
    /* one node of three and one silent: NOPERM said, retried */
    setup_fenced(3);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, denied[1]);
    num(1, 1);
    advance_to(T.now + 50000);
    CHECK_EQ(T.res.n, 0);
    CHECK(last_ev(REDLOCK_EV_RETRY) && last_ev(REDLOCK_EV_RETRY)->status == REDLOCK_ERR_NOPERM);
    teardown();
    /* a plain lock's SET */
    setup_no_retry(1, 0, 1000);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, denied[0]);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NOPERM);
    teardown();
    /* a release refused the key: no switch to GET + compare */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok(0);
    redlock_release(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, denied[1]);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NOPERM);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    teardown();
    /* the command refused (7.2's text names the user): still no scripting */
    setup_fenced(1);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM User keyholder has no permissions to run the 'evalsha' command");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    teardown();
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_NOPERM), "ACL") != NULL);
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_NOPERM), REDLOCK_FENCE_PREFIX) != NULL);
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_KEY), REDLOCK_FENCE_PREFIX) != NULL);
}

static const char RFACQ_SHA[] = "EVALSHA 9e90d98820f6fd7cf2d8944664d249d42ea91993 2 res " REDLOCK_FENCE_PREFIX "res ";
static const char RFENCE_SHA[] = "EVALSHA 9aed5e9a15c9204fc81f0a524e790f2b5de165d1 2 res " REDLOCK_FENCE_PREFIX "res ";

/* Proves: a fenced reentrant lock sends the reentrant fenced scripts with
   both keys, the owner and the token; the count it gets back (a new hash:
   the counter; an entry of the owner: the hold's fence kept in the hash)
   is written back with the owner and token; release and extend are the
   reentrant lock's. */
static void test_fence_reentrant(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[200];
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "svc-f";
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "%ssvc-f %s 1000", RFACQ_SHA, redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    num(0, 7);
    snprintf(expect, sizeof expect, "%ssvc-f %s 7", RFENCE_SHA, redlock_lock_token(&L));
    CHECK_STR(T.q[1].cmd, expect);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 7);
    redlock_release(&L);
    CHECK(starts(2, "EVALSHA a1289050cd9364128e095b730eb637347a5922ca 1 res svc-f "));
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    /* an entry of the owner on three nodes: the highest reply, kept (5) or
       new (9: an old entry that missed its write-back); a node that wins
       after the lock was reported held gets the write-back too */
    base_config(&cfg, 3);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 9);
    num(1, 5);
    snprintf(expect, sizeof expect, "%ssvc-f %s 9", RFENCE_SHA, redlock_lock_token(&L));
    CHECK_STR(T.q[3].cmd, expect);
    CHECK_STR(T.q[4].cmd, expect);
    num(3, 1); num(4, 1);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 9);
    num(2, 11);
    CHECK_EQ(T.qn, 6);
    CHECK_STR(T.q[5].cmd, expect);
    CHECK_EQ(T.q[5].node, 2);
    num(5, 1);
    CHECK_EQ(redlock_lock_fence(&L), 9);
    teardown();
    setup_fenced(1);
    redlock_acquire(&L);
    num(0, -3);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    CHECK(strstr(redlock_reentrant_fence_acquire_script(), "hget',k,' fence'") != NULL);
    CHECK(strstr(redlock_reentrant_acquire_script(), "hexists',k,' fence'") != NULL);
    CHECK(strstr(redlock_reentrant_release_script(), "redis.call('del',k)") != NULL);
}

/* ---- readers-writer locks ---- */

static void setup_rw(int nodes, redlock_access access) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    base_opts(&o, 1000, 0);
    o.access = access;
    setup_with(&cfg, &o);
}

/* Proves: a readers-writer lock sends one script per node and operation:
   the acquire with the token, the ttl, its mode and how long a refused
   writer's mark lives (retry delay + jitter + 2 node timeouts); 1 is a
   vote for, 0 against (held in a mode that excludes it, or a writer
   waits); the release carries the flag that drops the writer's mark, the
   undo of a failed attempt does not (the mark keeps new readers out until
   the next attempt); extend: 1, 0 (gone), -1 (another kind of lock). */
static void test_rw_commands(void) {
    char expect[1024];
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 s 200", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    num(0, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_extend(&L, 500);
    snprintf(expect, sizeof expect, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 1 res %s 500 s", redlock_lock_token(&L));
    CHECK_STR(T.q[1].cmd, expect);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    snprintf(expect, sizeof expect, "EVALSHA 7a52dde132918709d3bd90a737169b8408765e20 1 res %s 1", redlock_lock_token(&L));
    CHECK_STR(T.q[2].cmd, expect);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    /* a writer refused: the undo keeps its mark (no flag), the retry is
       the same command */
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 x 200", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    num(0, 0);
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s", redlock_rw_release_script(), redlock_lock_token(&L));
    CHECK_STR(T.q[1].cmd, expect);
    num(1, 0);
    run_until_sent(2);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 x 200", redlock_lock_token(&L));
    CHECK_STR(T.q[2].cmd, expect);
    num(2, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_extend(&L, 0);
    num(3, -1);                           /* a plain lock's string there */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    teardown();
    /* malformed answers: a node error each */
    setup_rw(3, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    num(0, 2);
    rep(1, REDLOCK_REPLY_STRING, 0, "1");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_PROTOCOL);
    teardown();
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    num(1, 2);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* NOSCRIPT: EVAL of the text */
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script.");
    CHECK(starts(1, "EVAL if redis.replicate_commands then redis.replicate_commands() end local k,tok,m=KEYS[1]"));
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: an update lock asks for "u"; redlock_upgrade runs the upgrade
   script (token, the lock's ttl, the writer's mark's life) on every node:
   0 (readers still there: renewed) on a quorum retries after the delay,
   1 on a quorum makes the lock exclusive (OP_UPGRADE, OK); downgrade makes
   it shared at the call and sends set-mode "s"; an upgrade that runs out of
   retries is LOCKED, settles the nodes back to "u" and the lock stays held
   as update; the calls' refusals. */
static void test_rw_upgrade_downgrade(void) {
    char expect[1200];
    int k;
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_NOT_HELD);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 u 200", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    snprintf(expect, sizeof expect, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 1 res %s 1000 200", redlock_lock_token(&L));
    CHECK_STR(T.q[3].cmd, expect);
    CHECK_STR(T.q[5].cmd, expect);
    num(3, 0); num(4, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);  /* node 5 may still upgrade */
    num(5, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    run_until_sent(6);
    CHECK_STR(T.q[6].cmd, expect);
    num(6, 1); num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    num(8, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);   /* exclusive already */
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    snprintf(expect, sizeof expect, "EVALSHA b06ef25325497e7d384d8265d29a5597c574e502 1 res %s s", redlock_lock_token(&L));
    CHECK_STR(T.q[9].cmd, expect);
    num(9, 1); num(10, 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_INVALID); /* shared already */
    teardown();
    /* retries used up: LOCKED, the nodes settle back to update */
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    for (k = 1; k <= 3; k++) {
        run_until_sent(k);
        num(k, 0);
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s u", redlock_rw_set_mode_script(), redlock_lock_token(&L));
    CHECK_STR(T.q[4].cmd, expect);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    num(4, 1);
    /* the entry gone: lost, the upgrade told first */
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num(5, -1);
    CHECK_EQ(T.res.r[T.res.n - 2].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[T.res.n - 2].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(T.res.r[T.res.n - 1].op, REDLOCK_OP_LOST);
    teardown();
    /* release cancels a waiting upgrade */
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    num(1, 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_CANCELLED);
    teardown();
}

/* Proves: the writer's mark follows the writer: the undo of an attempt
   that will be retried keeps it (no flag), the undo of the last attempt
   drops it (flag 2, no PUBLISH), a release that cancels a waiting acquire
   drops it too (flag 1); a downgrade a quorum did not confirm says
   NO_QUORUM and the lock is shared anyway; an upgrade that runs into
   wait_ms ends TIMEOUT. */
static void test_rw_marks_and_endings(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[1200];
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    o.retry_count = -1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s 2", redlock_rw_release_script(), redlock_lock_token(&L));
    CHECK_STR(T.q[1].cmd, expect);
    teardown();
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 0);
    num(1, 0);                             /* the undo (kept the mark) */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CANCELLED);
    snprintf(expect, sizeof expect, "EVALSHA 7a52dde132918709d3bd90a737169b8408765e20 1 res %s 1", redlock_lock_token(&L));
    CHECK_STR(T.q[2].cmd, expect);
    teardown();
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num(3, 0); num(4, 0);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_UPDATE;
    o.retry_count = 100;
    o.wait_ms = 250;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    num(1, 0);
    run_until_sent(2);
    num(2, 0);
    run_until_sent(3);
    num(3, 0);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
}

/* Proves: a downgrade or an upgrade changes the hold, not the handle: the
   next acquire asks for the mode of the options again (an exclusive lock
   that was downgraded asks "x", an update lock that was upgraded "u" and
   may upgrade again); redlock_lock_access says the hold's mode while held,
   the options' otherwise. */
static void test_rw_mode_per_hold(void) {
    char expect[1200];
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num(1, 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    redlock_release(&L);
    num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 x 200", redlock_lock_token(&L));
    CHECK_STR(T.q[3].cmd, expect);
    num(3, 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    teardown();
    /* a hold that ends LOST after a downgrade: the same */
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1);
    redlock_downgrade(&L);
    num(1, 1);
    advance_to(T.now + 2000000);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    num(T.qn - 1, 0);                      /* the cleanup's answer */
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 x 200", redlock_lock_token(&L));
    CHECK_STR(T.q[T.qn - 1].cmd, expect);
    teardown();
    /* update: upgraded once, an update lock again at the next acquire */
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    redlock_release(&L);
    num(2, 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 u 200", redlock_lock_token(&L));
    CHECK_STR(T.q[3].cmd, expect);
    num(3, 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    teardown();
    /* adopted: the options' mode too */
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    num(1, 1);
    redlock_release(&L);
    num(2, 1);
    CHECK_EQ(redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 500), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    teardown();
}

/* Answers every command sent since *done: 0 to an upgrade attempt
   (readers still there: renewed, not upgraded), 1 to anything else. */
static void answer_upgrade_refused(int *done) {
    for (; *done < T.qn; (*done)++)
        num(*done, starts(*done, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251") ? 0 : 1);
}

/* Proves: an upgrade's attempts renew the hold within max_hold_ms and
   max_extensions as the watchdog does: with readers that never leave, the
   upgrade ends HOLD_LIMIT once the cap is reached and the lock runs out
   (LOST, HOLD_LIMIT) within a ttl of the cap; attempts that renewed count
   as extensions; an upgrade called past the cap ends at once. */
static void test_rw_upgrade_hold_cap(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t start;
    int done = 0, cap;
    for (cap = 0; cap < 2; cap++) {
        base_config(&cfg, 1);
        base_opts(&o, 1000, 1);
        o.access = REDLOCK_ACCESS_UPDATE;
        o.retry_count = 1000;
        if (cap == 0) o.max_hold_ms = 1500;
        else o.max_extensions = 4;
        setup_with(&cfg, &o);
        done = 0;
        start = T.now;
        redlock_acquire(&L);
        answer_upgrade_refused(&done);
        CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
        answer_upgrade_refused(&done);
        while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && T.now < start + 6000000 && T.timer != REDLOCK_NO_DEADLINE) {
            advance_to(T.timer);
            answer_upgrade_refused(&done);
        }
        CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_HOLD_LIMIT);
        CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
        if (cap == 0) CHECK(T.now <= start + 2500000);
        else CHECK(L._extensions == 4);
        teardown();
    }
    /* the cap reached before the call (an extend of the user's counts):
       ends at once, nothing sent */
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_UPDATE;
    o.max_extensions = 1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    redlock_extend(&L, 0);
    num(1, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_HOLD_LIMIT);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
}

/* Proves: an upgrade called while a watchdog renewal runs makes its first
   attempt as soon as the renewal's answer is in (its timer is due then,
   not a renew interval later), and its wait_ms counts from the call. */
static void test_rw_upgrade_during_renewal(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t called;
    int k;
    base_config(&cfg, 1);
    base_opts(&o, 3000, 1);
    o.access = REDLOCK_ACCESS_UPDATE;
    o.retry_count = 100;
    o.wait_ms = 200;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    advance_to(T.timer);                   /* the watchdog's renewal goes out */
    CHECK_EQ(T.qn, 2);
    CHECK(starts(1, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158"));
    called = T.now + 10000;
    T.now = called;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);                     /* after the renewal */
    T.now += 5000;
    num(1, 1);
    CHECK(T.timer <= T.now);               /* due at once */
    advance_to(T.now);
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251"));
    for (k = 2; k < 20 && last_status(REDLOCK_OP_UPGRADE) == 1; k++) {
        if (k < T.qn) num(k, 0);
        if (last_status(REDLOCK_OP_UPGRADE) == 1) run_until_sent(k + 1);
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_TIMEOUT);
    CHECK(T.now <= called + 200000);
    teardown();
}

/* Proves: a release while a downgrade's round runs answers the downgrade
   (CANCELLED), then the release. */
static void test_rw_release_cancels_downgrade(void) {
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_ERR_CANCELLED);
    num(3, 1); num(4, 1);                   /* the downgrade's answers: stale */
    num(6, 1); num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.n, 3);
    teardown();
}

/* Proves: a downgrade decided at a quorum still makes the slowest node's
   entry shared: its NOSCRIPT is followed by the set-mode script's text
   with "s". */
static void test_rw_downgrade_straggler_noscript(void) {
    char expect[1200];
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    rep(5, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script.");
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s s", redlock_rw_set_mode_script(), redlock_lock_token(&L));
    CHECK_EQ(T.qn, 7);
    CHECK_STR(T.q[6].cmd, expect);
    num(6, 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: the options a readers-writer lock refuses (INVALID): another
   mode number, reentrant, fence; a node without scripting votes
   NO_SCRIPTING; too few nodes that may script by configuration: refused
   at init. */
static void test_rw_refusals(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    base_config(&cfg, 3);
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    base_opts(&o, 1000, 0);
    o.access = (redlock_access)7;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.access = REDLOCK_ACCESS_SHARED;
    o.reentrant = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.reentrant = 0;
    o.fence = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    redlock_client_deinit(&C);
    cfg.mode[0] = cfg.mode[1] = REDLOCK_MODE_LEGACY;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    o.fence = 0;
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    redlock_client_deinit(&C);
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    rep(1, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'EVALSHA'");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    teardown();
}

/* Proves: an upgrade's events and result name it and count from its call:
   each attempt's votes carry op UPGRADE and its attempt number; an attempt
   that failed and will be retried emits RETRY (op UPGRADE, node -1) with
   why: LOCKED while a node still has other holders, OVERLOADED when the
   transport's queue refused a command, NO_QUORUM when too few nodes
   answered; the result after the last attempt says why too, with the
   upgrade's attempts and the time since redlock_upgrade was called. */
static void test_rw_upgrade_events(void) {
    const redlock_event *ev;
    int64_t called;
    int i, k;
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    T.now += 7000;
    called = T.now;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    num(3, 0);                                      /* readers still there */
    redlock_on_error(&C, T.q[4].tag, REDLOCK_ERR_TRANSPORT);
    T.evn = 0;
    redlock_on_error(&C, T.q[5].tag, REDLOCK_ERR_TRANSPORT);
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->node == 2 && ev->attempt == 1);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->status == REDLOCK_ERR_LOCKED && ev->attempt == 1 &&
          ev->node == -1);
    CHECK_EQ(T.res.n, 1);                           /* the acquire's only */
    /* attempt 2: node 0's command refused by the transport's full queue */
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    T.evn = 0;
    run_until_sent(7);
    CHECK_EQ(T.qn, 8);                              /* nodes 1 and 2 */
    T.fail_send_node = -1;
    redlock_on_error(&C, T.q[6].tag, REDLOCK_ERR_NODE_TIMEOUT);
    redlock_on_error(&C, T.q[7].tag, REDLOCK_ERR_NODE_TIMEOUT);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->status == REDLOCK_ERR_OVERLOADED && ev->attempt == 2);
    for (i = 0; i < T.evn; i++)
        if (T.ev[i].type == REDLOCK_EV_VOTE) CHECK(T.ev[i].op == REDLOCK_OP_UPGRADE && T.ev[i].attempt == 2);
    /* attempt 3, the last: no answer at all */
    run_until_sent(8);
    CHECK_EQ(T.qn, 11);
    T.now += 4000;
    for (k = 8; k < 11; k++) redlock_on_error(&C, T.q[k].tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.res.r[1].attempts, 3);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[1].elapsed_us, T.now - called);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
    /* one node, one attempt: the upgrade's OK result, from its call */
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    T.now += 9000;
    called = T.now;
    redlock_upgrade(&L);
    T.now += 1500;
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK_EQ(T.res.r[T.res.n - 1].votes, 1);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    teardown();
}

/* Proves: an upgrade attempt is a renewal from its start: its call never
   lengthens the validity before a quorum confirms (an attempt that nobody
   answers leaves the acquire's), and cuts a longer one (after a long
   extend) to the lock's ttl from the attempt's start at once. */
static void test_rw_upgrade_validity_at_start(void) {
    int64_t until, t1;
    int k;
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    until = redlock_lock_valid_until(&L);
    T.now += 300000;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), until);
    for (k = 3; k < 6; k++) redlock_on_error(&C, T.q[k].tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(redlock_lock_valid_until(&L), until);  /* no quorum: nothing renewed */
    teardown();
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    redlock_extend(&L, 5000);
    num(1, 1);
    T.now += 1000;
    t1 = T.now;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 1000000 - 12000);
    teardown();
}

/* Proves: a lock deinitialised while its upgrade ends is not touched again
   (no result, nothing scheduled, its memory free for reuse at once): when
   the deinit comes from the send of the failed upgrade's settle (set-mode
   back to update), and when the UPGRADE result of a lost lock
   deinitialises it (no LOST after it). */
static void test_rw_upgrade_result_after_deinit(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_UPDATE;
    o.retry_count = -1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    T.deinit_on_send = "EVAL ";                     /* the settle: EVAL of set-mode */
    T.scribble_on_send = 1;
    num(1, 0);                                      /* refused, no retry left */
    CHECK(T.deinit_on_send == NULL);                /* the settle went out */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    T.deinit_on_result = 1;
    T.scribble_on_result = 1;
    num(1, -1);                                     /* the entry is gone: lost */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
}

/* Proves: an upgrade's script text sent after NOSCRIPT is answered as the
   upgrade it is: 0 (readers still there) waits and retries, 1 upgrades;
   after an upgrade the watchdog renews as usual from then, not at once. */
static void test_rw_upgrade_after_noscript(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[1200];
    int64_t done;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 1);
    o.access = REDLOCK_ACCESS_UPDATE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    rep(1, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script.");
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s 1000 200", redlock_rw_upgrade_script(), redlock_lock_token(&L));
    CHECK_STR(T.q[2].cmd, expect);
    num(2, 0);
    CHECK(last_ev(REDLOCK_EV_RETRY) && last_ev(REDLOCK_EV_RETRY)->status == REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    run_until_sent(3);
    CHECK(starts(3, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 "));
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    done = T.now;
    CHECK_EQ(T.qn, 4);
    advance_to(done + 150000);                      /* half a renew_every (333 ms) later */
    CHECK_EQ(T.qn, 4);
    run_until_sent(4);
    CHECK(T.now <= done + 333000);
    CHECK(starts(4, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 "));
    teardown();
}

/* Proves: a downgrade's and a release's results count their elapsed time
   from their own call, not from the acquire (and the RELEASED event its
   round's); the calls' refusals: not held (NOT_HELD), a mode that has
   nothing to change (INVALID). */
static void test_rw_downgrade_release_elapsed(void) {
    int64_t called;
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_NOT_HELD);
    redlock_acquire(&L);
    num(0, 1); num(1, 1); num(2, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    T.now += 300000;
    called = T.now;
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    T.now += 2000;
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK_EQ(T.res.r[T.res.n - 1].votes, 2);
    CHECK_EQ(redlock_lock_pending(&L), 1);          /* node 2's answer still out */
    num(5, 1);                                      /* comes quietly: no second result */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    T.now += 100000;
    called = T.now;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    T.now += 3000;
    num(6, 1); num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK(last_ev(REDLOCK_EV_RELEASED) != NULL);
    if (last_ev(REDLOCK_EV_RELEASED)) {             /* the round's time, its votes */
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->elapsed_us, T.now - called);
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->votes, 2);
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->status, REDLOCK_OK);
    }
    teardown();
    setup_n(1, 0, 1000);                            /* a plain lock has no mode to change */
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_INVALID);
    teardown();
}

/* Proves: what makes upgrade and downgrade BUSY and what does not: a
   downgrade waits for no extend of any kind (BUSY during the user's extend,
   OK after it) and for no upgrade (BUSY while one waits for readers, as an
   extend is); an upgrade is BUSY during the user's extend but not after
   one, and not during a watchdog renewal: its first attempt follows the
   renewal. An upgrade cancelled by release is over: the next hold of the
   handle extends freely and sends no upgrade. */
static void test_rw_calls_busy(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int k;
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_BUSY);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    teardown();
    setup_rw(1, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num(0, 1);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    num(1, 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);     /* the extend is over */
    num(2, 0);                                      /* readers: waits for the retry */
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_CANCELLED);
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(4, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 200000);                     /* past the cancelled upgrade's retry */
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    teardown();
    /* a watchdog renewal running: the upgrade is taken, and goes out after it */
    base_config(&cfg, 1);
    base_opts(&o, 1000, 1);
    o.access = REDLOCK_ACCESS_UPDATE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    run_until_sent(1);
    CHECK(starts(1, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 "));
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    num(1, 1);
    run_until_sent(2);
    k = T.qn - 1;
    CHECK(starts(k, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 "));
    num(k, 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    teardown();
}

/* Proves: how long a refused writer's mark lives, as sent with a
   readers-writer acquire and an upgrade: until the next attempt is due at
   the latest (retry delay + the whole jitter) and two node timeouts more:
   100 + 30 + 2 * 50 ms. */
static void test_rw_mark_life_with_jitter(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[200];
    base_config(&cfg, 1);
    cfg.retry_jitter_ms = 30;
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res %s 1000 x 230", redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    teardown();
    o.access = REDLOCK_ACCESS_UPDATE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 1);
    redlock_upgrade(&L);
    snprintf(expect, sizeof expect, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 1 res %s 1000 230", redlock_lock_token(&L));
    CHECK_STR(T.q[1].cmd, expect);
    teardown();
}

/* Proves: a readers-writer lock on REDLOCK_MAX_NODES nodes acquires,
   upgrades (one attempt waiting for readers, one done), downgrades and
   releases with one command per node, each to its own node (an index past
   the last node traps). */
static void test_rw_max_nodes(void) {
    int k, before, pass;
    setup_rw(REDLOCK_MAX_NODES, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    for (k = 0; k < T.qn; k++) num(k, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    for (pass = 0; pass < 2; pass++) {
        if (pass) run_until_sent(T.qn);             /* the retry */
        before = T.qn - REDLOCK_MAX_NODES;
        CHECK(before >= 0 && starts(before, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 "));
        for (k = before; k < T.qn; k++) { CHECK_EQ(T.q[k].node, k - before); num(k, pass); }
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 2);
    before = T.qn;
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) { CHECK_EQ(T.q[k].node, k - before); num(k, 1); }
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    before = T.qn;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) num(k, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: an adopted token shows no fence. */
static void test_fence_adopted(void) {
    setup_fenced(1);
    CHECK_EQ(redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 500), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    teardown();
}

/* ---- nodes that may evict keys (section 4, Eviction) ---- */

/* The latest result (a zeroed one if none came). */
static const redlock_result *last_res(void) {
    static const redlock_result none;
    return T.res.n > 0 ? &T.res.r[T.res.n - 1] : &none;
}

/* Proves: INFO's maxmemory_policy names what a server may evict (allkeys-*
   every key, volatile-* keys with a time to live, noeviction nothing);
   maxmemory 0 evicts nothing whatever the policy; a missing maxmemory line
   counts as a limit; no policy line, or a name not known, is -1 (unknown);
   only whole lines count; the name is copied, cut to fit. */
static void test_evict_info_parse(void) {
    static const char redis7[] = "# Memory\r\nused_memory:1000000\r\nmaxmemory:2097152\r\n"
                                 "maxmemory_human:2.00M\r\nmaxmemory_policy:allkeys-random\r\nallocator_frag_ratio:1.1\r\n";
    static const struct { const char *text; int want; const char *name; } c[] = {
        { "maxmemory:100\r\nmaxmemory_policy:allkeys-lru\r\n", REDLOCK_EVICTS_ALL, "allkeys-lru" },
        { "maxmemory:100\r\nmaxmemory_policy:allkeys-lfu", REDLOCK_EVICTS_ALL, "allkeys-lfu" },
        { "maxmemory:100\nmaxmemory_policy:volatile-ttl\n", REDLOCK_EVICTS_VOLATILE, "volatile-ttl" },
        { "maxmemory_policy:volatile-lru\r\nmaxmemory:5\r\n", REDLOCK_EVICTS_VOLATILE, "volatile-lru" },
        { "maxmemory:100\r\nmaxmemory_policy:noeviction\r\n", REDLOCK_EVICTS_NONE, "noeviction" },
        { "maxmemory:0\r\nmaxmemory_policy:allkeys-random\r\n", REDLOCK_EVICTS_NONE, "allkeys-random" },
        { "maxmemory_policy:volatile-random\r\n", REDLOCK_EVICTS_VOLATILE, "volatile-random" },
        { "maxmemory:100\r\n", -1, "" },
        { "maxmemory:100\r\nmaxmemory_policy:lfu-everything\r\n", -1, "lfu-everything" },
        { "maxmemory:100\r\n#maxmemory_policy:allkeys-lru\r\nxmaxmemory_policy:allkeys-lru\r\n", -1, "" },
        { "maxmemory:100\r\nmaxmemory_policy_x:allkeys-lru\r\n", -1, "" },
        { "", -1, "" }
    };
    char name[32];
    size_t k;
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, name, sizeof name), REDLOCK_EVICTS_ALL);
    CHECK_STR(name, "allkeys-random");
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        int got = redlock_info_evicts(c[k].text, strlen(c[k].text), name, sizeof name);
        if (got != c[k].want || strcmp(name, c[k].name) != 0) printf("#   case %u: %d \"%s\"\n", (unsigned)k, got, name);
        CHECK_EQ(got, c[k].want);
        CHECK_STR(name, c[k].name);
    }
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, name, 5), REDLOCK_EVICTS_ALL);
    CHECK_STR(name, "allk");
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, NULL, 0), REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_info_evicts(NULL, 10, name, sizeof name), -1);
    CHECK_STR(name, "");
    /* the text ends inside the name: what is there */
    CHECK_EQ(redlock_info_evicts(redis7, strlen("# Memory\r\nused_memory:1000000\r\nmaxmemory:2097152\r\n"
                                                "maxmemory_human:2.00M\r\nmaxmemory_policy:volat"), name, sizeof name), -1);
}

/* Proves: an acquire's ttl_share_permille is the share of the TTL its
   attempt and the drift allowance took, in thousandths, at a point where
   a coarser or finer scale would read otherwise (488 ms + 12 ms of 1 s:
   exactly 500). */
static void test_acquire_ttl_share(void) {
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    T.now += 488000;
    ok(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_ACQUIRED)->ttl_share_permille, 500);
    teardown();
}

/* Proves: a fenced reentrant lock with a label keeps its token, owner and
   counter apart in its key block: three holds in a row send the owner and
   the counter's key intact, each token is the label and fresh hex digits
   (the next token, made ahead, is not overwritten by the owner), and the
   owner and key read back unchanged. */
static void test_reentrant_label_layout(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[300], prev[REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN + 1] = "";
    size_t len;
    int k;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "svc-label-owner";
    o.label = "host-with-a-long-name:4242:";
    setup_with(&cfg, &o);
    for (k = 0; k < 3; k++) {
        T.qn = 0;
        redlock_acquire(&L);
        CHECK(labelled(redlock_lock_token(&L), o.label));
        CHECK(strcmp(prev, redlock_lock_token(&L)) != 0);
        snprintf(expect, sizeof expect, "%ssvc-label-owner %s 1000", RFACQ_SHA, redlock_lock_token(&L));
        CHECK_STR(T.q[0].cmd, expect);
        num(0, 3 + k);
        num(1, 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_fence(&L), 3 + k);
        CHECK_STR(redlock_lock_owner(&L), "svc-label-owner");
        CHECK(memcmp(redlock_lock_key(&L, &len), "res", 3) == 0 && len == 3);
        strcpy(prev, redlock_lock_token(&L));
        redlock_release(&L);
        num(2, 1);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    }
    teardown();
}

/* Proves: what a transport says a node may evict is kept per node and
   reported once per change (EV_NODE_EVICTS: node, mode, no lock); bad
   arguments change nothing. */
static void test_evict_node_state(void) {
    redlock_client dead;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_node_evicts(&C, 1), REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_ALL), REDLOCK_OK);
    CHECK_EQ(redlock_node_evicts(&C, 1), REDLOCK_EVICTS_ALL);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK(last_ev(REDLOCK_EV_NODE_EVICTS)->node == 1 && last_ev(REDLOCK_EV_NODE_EVICTS)->mode == REDLOCK_EVICTS_ALL &&
          last_ev(REDLOCK_EV_NODE_EVICTS)->lock == NULL && last_ev(REDLOCK_EV_NODE_EVICTS)->status == 0 &&
          last_ev(REDLOCK_EV_NODE_EVICTS)->op == 0 && last_ev(REDLOCK_EV_NODE_EVICTS)->attempt == 0);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_ALL), REDLOCK_OK); /* the next connection says it again */
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_NONE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 2);
    CHECK_EQ(last_ev(REDLOCK_EV_NODE_EVICTS)->mode, REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_set_evicts(&C, 3, REDLOCK_EVICTS_ALL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, -1, REDLOCK_EVICTS_ALL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, 0, (redlock_evicts)3), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, 0, (redlock_evicts)-1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_evicts(&C, 0), REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_evicts(&C, 3), REDLOCK_EVICTS_NONE);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 2);
    memset(&dead, 0, sizeof dead);
    CHECK_EQ(redlock_node_set_evicts(&dead, 0, REDLOCK_EVICTS_ALL), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_set_evicts(NULL, 0, REDLOCK_EVICTS_ALL), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_evicts(NULL, 0), REDLOCK_EVICTS_NONE);
    CHECK_STR(redlock_event_name(REDLOCK_EV_NODE_EVICTS), "node-evicts");
    teardown();
}

/* Proves: a fenced lock does not count the grant of a node that may evict
   keys (its vote fails with EVICTING), nor its count: on one such node the
   acquire ends at once with EVICTING (no retry, no fence, the key taken
   back); on three with one such node, the fence comes from the other two
   (not the evicting node's higher count) and is written back to them only;
   with two such nodes of three it ends at once. Eviction of keys with a
   time to live (volatile-*) is refused the same. */
static void test_evict_fenced_refused(void) {
    setup_fenced(1);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK(fsent_is(0, FACQ_SHA, " 1000"));
    num(0, 31);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_res()->attempts, 1);
    CHECK_EQ(last_res()->fence, 0);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK(starts(1, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])")); /* the undo */
    CHECK_EQ(T.qn, 2);
    teardown();

    setup_fenced(3);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3); /* asked all the same: the key is taken back from it by the release */
    num(0, 100);
    num(1, 5);
    num(2, 6);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.qn, 5);
    CHECK(fsent_is(3, FENCE_SHA, " 6"));
    CHECK(fsent_is(4, FENCE_SHA, " 6"));
    CHECK(T.q[3].node == 1 && T.q[4].node == 2);
    num(3, 1);
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 6);
    CHECK_EQ(last_res()->votes, 2);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.q[5].node, 0); /* the release goes to every node */
    teardown();

    setup_fenced(3);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(0, 3);
    num(1, 4);
    num(2, 5);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_res()->attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    teardown();
}

/* Proves: other locks count such a node by default (it is still reported:
   EV_NODE_EVICTS), refuse it with refuse_evicting > 0, and a fenced lock
   counts it with refuse_evicting < 0. */
static void test_evict_option(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();

    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.refuse_evicting = 1;
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    teardown();

    o.refuse_evicting = 7; /* any positive value */
    o.reentrant = 1;
    o.owner = "svc";
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(0, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    teardown();

    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.refuse_evicting = -1;
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(0, 1);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 1);
    teardown();
}

/* Proves: what the node says counts for the answers that come after it:
   a node learned to evict while its acquire, write-back or renewal was
   out fails that vote (a late win of a fenced lock gets no write-back);
   one learned to evict nothing any more counts again. */
static void test_evict_learned_midway(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 3);
    base_opts(&o, 1000, 0);
    o.refuse_evicting = 1;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL); /* e.g. the reply to INFO came first */
    ok(0);
    ok(1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.res.n, 0);
    ok(2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    num(3, 1);
    num(4, 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.res.n, 1);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    num(5, 1);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_EVICTING); /* one of three counted */
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    num(6, 1);
    num(7, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();

    /* fenced: the write-back of a node learned to evict, and a late win */
    setup_fenced(3);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(0, 5);
    num(1, 6);
    CHECK(fsent_is(3, FENCE_SHA, " 6"));
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    num(3, 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    num(4, 1);
    CHECK_EQ(T.res.n, 0); /* one write-back counted: node 2's acquire may still win */
    num(2, 7);
    CHECK(fsent_is(5, FENCE_SHA, " 6"));
    num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 6);
    teardown();

    setup_fenced(3);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num(0, 5);
    num(1, 6);
    num(3, 1);
    num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    num(2, 9); /* a late win after the lock was reported held */
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_EVICTING);
    teardown();
}

/* ---- reentrant locks ---- */
#include <pthread.h>

static const char RACQ_SHA[] = "EVALSHA fe1913b107883a8d56dff9985f4ef19d96780450 1 res ";
static const char RREL_SHA[] = "EVALSHA a1289050cd9364128e095b730eb637347a5922ca 1 res ";
static const char REXT_SHA[] = "EVALSHA 8713768fb046a3ec2f3a21545b1de720ccbd516d 1 res ";

static void reentrant_opts(redlock_lock_opts *o, const char *owner) {
    base_opts(o, 1000, 0);
    o->reentrant = 1;
    o->owner = owner;
}
static void setup_reentrant(int nodes, const char *owner) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    reentrant_opts(&o, owner);
    setup_with(&cfg, &o);
}
/* command k is `prefix` followed by the owner and the lock's token (and `tail`) */
static int sent_is(int k, const char *prefix, const char *owner, const char *tail) {
    char expect[400];
    snprintf(expect, sizeof expect, "%s%s %s%s", prefix, owner, redlock_lock_token(&L), tail);
    if (k < T.qn && strcmp(T.q[k].cmd, expect) == 0) return 1;
    printf("#   command %d: \"%s\", expected \"%s\"\n", k, k < T.qn ? T.q[k].cmd : "(none)", expect);
    return 0;
}

/* Proves: a reentrant acquire is one script per node with the owner, the
   token and the ttl; any count >= 1 is a vote for (the owner's count on
   that node), 0 is another owner; the validity is the plain lock's; the
   release sends the owner and the token; redlock_lock_owner says the id. */
static void test_reentrant_acquire_release(void) {
    int64_t start;
    setup_reentrant(3, "svc-a");
    CHECK_STR(redlock_lock_owner(&L), "svc-a");
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    CHECK(sent_is(0, RACQ_SHA, "svc-a", " 1000"));
    CHECK(sent_is(2, RACQ_SHA, "svc-a", " 1000"));
    num(0, 1);
    num(1, 3);                            /* the owner holds it twice more there */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - 12000);
    num(2, 0);                            /* another owner there: changes nothing now */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(sent_is(3, RREL_SHA, "svc-a", " 1"));
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    num(5, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* Proves: another owner holding the key on a majority is LOCKED, after the
   retries; each failed attempt is undone by the reentrant release script
   (EVAL, with owner and token) on every node; retries keep the token, so a
   retry adds nothing twice where an earlier attempt's entry landed. */
static void test_reentrant_other_owner_refused(void) {
    char token[REDLOCK_TOKEN_LEN + 1];
    int k;
    setup_reentrant(3, "svc-b");
    redlock_acquire(&L);
    strcpy(token, redlock_lock_token(&L));
    num(0, 0); num(1, 0);
    CHECK_EQ(T.qn, 6);
    for (k = 3; k < 6; k++) {
        char expect[64];
        CHECK(starts(k, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'"));
        snprintf(expect, sizeof expect, " 1 res svc-b %s", token);
        CHECK(strstr(T.q[k].cmd, expect) != NULL);
    }
    num(3, 0); num(4, 0); num(5, 0);
    run_until_sent(6);
    CHECK(sent_is(6, RACQ_SHA, "svc-b", " 1000"));
    CHECK_STR(redlock_lock_token(&L), token);
    num(6, 0); num(7, 0);
    run_until_sent(12);
    num(12, 0); num(13, 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
}

/* Proves: NOSCRIPT moves each reentrant script to EVAL of its text. */
static void test_reentrant_noscript(void) {
    setup_reentrant(1, "svc-c");
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK(starts(1, "EVAL local k,o=KEYS[1],ARGV[1] local f=o..':'..ARGV[2]"));
    CHECK_EQ(redlock_lock_followup(&L), 1);  /* its answer may be NOSCRIPT-free only now */
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_extend(&L, 0);
    CHECK(sent_is(2, REXT_SHA, "svc-c", " 1000"));
    rep(2, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script.");
    CHECK(starts(3, "EVAL local k,o=KEYS[1],ARGV[1] local t=redis.call('type',k).ok if t=='none' then return 0"));
    num(3, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    rep(4, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script.");
    CHECK(starts(5, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'"));
    num(5, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: a node without scripting (an ACL's NOPERM, an old server's
   unknown command) fails with NO_SCRIPTING, and is not switched to the
   legacy commands (no INFO probe, no SETNX); too many such nodes end the
   acquire at once with NO_SCRIPTING, without retries; fewer, and the others
   still decide. lock_init refuses the mode when too few nodes may script
   by configuration (MODE_LEGACY). */
static void test_reentrant_no_scripting(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    rep(1, REDLOCK_REPLY_ERROR, 0, "ERR unknown command 'EVALSHA'");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK(!starts(3, "INFO") && !starts(3, "SETNX"));
    teardown();
    /* one of three: the other two decide */
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM this user has no permissions to run the 'evalsha' command");
    num(1, 1); num(2, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
    /* one of three and one other owner: NO_SCRIPTING said, retried */
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    rep(0, REDLOCK_REPLY_ERROR, 0, "NOPERM no scripts");
    num(1, 1);
    advance_to(T.now + 50000);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_NO_SCRIPTING);
    teardown();
    /* configured legacy on a majority: refused at init; on one node: fine */
    base_config(&cfg, 3);
    cfg.mode[0] = cfg.mode[1] = REDLOCK_MODE_LEGACY;
    reentrant_opts(&o, "svc-d");
    memset(&T, 0, sizeof T);
    {
        redlock_callbacks cb;
        base_callbacks(&cb);
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        cfg.mode[1] = REDLOCK_MODE_AUTO;
        redlock_client_deinit(&C);
        T.fail_send_node = -1;
        T.client = &C;
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        /* nothing goes to the LEGACY node: its vote fails at once */
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 2);
        CHECK_EQ(T.q[0].node, 1);
        CHECK_EQ(T.q[1].node, 2);
        num(0, 1); num(1, 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        redlock_release(&L);
        CHECK_EQ(T.qn, 4);
        num(2, 1); num(3, 1);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
        teardown();
    }
    CHECK_STR(redlock_strerror(REDLOCK_ERR_NO_SCRIPTING), "the node refuses scripts, which reentrant and fenced locks need");
}

/* Proves: extend sends the owner, the token and the ttl; 1 extends, 0
   (our entry gone) counts as missing, -1 (another owner) as stolen; replies
   a script cannot give are PROTOCOL. */
static void test_reentrant_extend(void) {
    int64_t t0;
    setup_reentrant(3, "svc-e");
    redlock_acquire(&L);
    num(0, 1); num(1, 2);
    T.now += 300000;
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    CHECK(sent_is(3, REXT_SHA, "svc-e", " 2000"));
    num(3, 1); num(4, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 2000000 - 22000);
    redlock_extend(&L, 0);
    num(6, 0); num(7, 0);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
    setup_reentrant(3, "svc-e");
    redlock_acquire(&L);
    num(0, 1); num(1, 1);
    redlock_extend(&L, 0);
    num(3, -1); num(4, -1);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    teardown();
    /* malformed answers */
    setup_reentrant(1, "svc-e");
    redlock_acquire(&L);
    num(0, -1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    setup_reentrant(1, "svc-e");
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
}

/* Proves: two handles of one owner on one key both hold it (each its own
   token, the same owner in every command); releasing one leaves the other
   held; a handle of another owner sends its own id. */
static void test_reentrant_two_handles(void) {
    redlock_lock second, other;
    redlock_lock_opts o;
    char t1[REDLOCK_TOKEN_LEN + 1];
    setup_reentrant(1, "svc-f");
    reentrant_opts(&o, "svc-f");
    CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
    o.owner = "svc-g";
    CHECK_EQ(redlock_lock_init(&other, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    num(0, 1);
    strcpy(t1, redlock_lock_token(&L));
    redlock_acquire(&second);
    CHECK(strstr(T.q[1].cmd, " res svc-f ") != NULL);
    CHECK(strstr(T.q[1].cmd, t1) == NULL);   /* a token of its own */
    num(1, 2);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_acquire(&other);
    CHECK(strstr(T.q[2].cmd, " res svc-g ") != NULL);
    num(2, 0);
    CHECK(strstr(T.q[3].cmd, " res svc-g ") != NULL); /* its undo */
    num(3, 0);
    redlock_release(&second);
    CHECK(strstr(T.q[4].cmd, " res svc-f ") != NULL);
    num(4, 1);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_lock_deinit(&second);
    redlock_lock_deinit(&other);
    teardown();
}

/* Proves: deinitialising a reentrant lock whose validity ran out with no
   timer call since (it reads LOST, no round pending) sends the cleanup
   after LOST first, as the timer would have: its entry does not stay in a
   hash that the owner's other holds keep alive (there it would keep the
   owner's count up, and the key, past their last release). Nothing is
   reported; the cleanup's answer is ignored, also one inside send. The
   same when lock_init deinitialises the handle; a send that deinitialises
   the lock again ends it there. One still within its validity is
   forgotten without a command (deinit does not release). */
static void test_reentrant_deinit_after_run_out(void) {
    redlock_lock second;
    redlock_lock_opts o;
    char tok[REDLOCK_TOKEN_LEN + 1], tail[REDLOCK_TOKEN_LEN + 32];
    int how; /* 0 deinit, 1 lock_init, 2 deinit answered inside send, 3 deinit inside that send */
    for (how = 0; how < 4; how++) {
        setup_reentrant(1, "svc-h");
        reentrant_opts(&o, "svc-h");
        o.ttl_ms = 5000;
        CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
        redlock_acquire(&L);
        num(0, 1);
        strcpy(tok, redlock_lock_token(&L));
        redlock_acquire(&second);
        num(1, 2);
        T.now = redlock_lock_valid_until(&L);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
        CHECK_EQ(redlock_lock_pending(&L), 0);
        if (how == 2) T.sync = sync_ok;
        if (how == 3) {
            T.deinit_on_send = "EVAL ";
            T.scribble_on_send = 1;
        }
        if (how == 1) CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        else redlock_lock_deinit(&L);
        T.sync = NULL;
        CHECK_EQ(T.qn, 3);
        CHECK(starts(2, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'"));
        snprintf(tail, sizeof tail, " 1 res svc-h %s 1", tok);
        CHECK(strlen(T.q[2].cmd) > strlen(tail) && strcmp(T.q[2].cmd + strlen(T.q[2].cmd) - strlen(tail), tail) == 0);
        num(2, 1);
        CHECK_EQ(T.res.n, 2); /* the two acquires only */
        CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&second));
        redlock_lock_deinit(&second);
        if (how == 3) memset(&L, 0, sizeof L);
        teardown();
        CHECK_EQ(key_blocks, 0);
    }
    setup_reentrant(1, "svc-h");
    redlock_acquire(&L);
    num(0, 1);
    T.now = redlock_lock_valid_until(&L) - 1;
    redlock_lock_deinit(&L);
    CHECK_EQ(T.qn, 1);
    teardown();
}

static void *other_thread_owner(void *arg) {
    redlock_lock *lk = (redlock_lock *)arg;
    redlock_acquire(lk);
    return NULL;
}

/* Proves: with no owner given, the owner is "<client id>:<thread id>", 16
   hex digits each: the same for two handles acquired by one thread on one
   client, another for another client (its own id) and for another thread;
   it is taken at the acquire (an undo running meanwhile keeps the old
   one); a random source that fails refuses the acquire. Owner ids are
   checked at init: 1..REDLOCK_MAX_OWNER printable bytes, no space. */
static void test_reentrant_default_owner(void) {
    redlock_lock second;
    redlock_client c2;
    redlock_lock_opts o;
    redlock_config cfg;
    redlock_callbacks cb;
    char first[REDLOCK_MAX_OWNER + 1], id[17];
    pthread_t th;
    size_t i;
    setup_reentrant(1, NULL);
    CHECK_STR(redlock_lock_owner(&L), "");
    redlock_acquire(&L);
    strcpy(first, redlock_lock_owner(&L));
    CHECK_EQ(strlen(first), 33);
    CHECK(first[16] == ':');
    for (i = 0; i < 33; i++) CHECK(i == 16 || strchr("0123456789abcdef", first[i]) != NULL);
    CHECK(strstr(T.q[0].cmd, first) != NULL);
    num(0, 1);
    reentrant_opts(&o, NULL);
    CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
    redlock_acquire(&second);
    CHECK_STR(redlock_lock_owner(&second), first);
    num(1, 2);
    redlock_release(&second);
    num(2, 1);
    /* another thread: the same client part, another thread part */
    CHECK_EQ(pthread_create(&th, NULL, other_thread_owner, &second), 0);
    pthread_join(th, NULL);
    CHECK(strncmp(redlock_lock_owner(&second), first, 17) == 0);
    CHECK(strcmp(redlock_lock_owner(&second) + 17, first + 17) != 0);
    num(3, 0);
    redlock_lock_deinit(&second);
    /* another client: another client part */
    memcpy(id, first, 16);
    id[16] = 0;
    base_config(&cfg, 1);
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&c2, &cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&second, &c2, &o), REDLOCK_OK);
    redlock_acquire(&second);
    CHECK(strncmp(redlock_lock_owner(&second), id, 16) != 0);
    redlock_lock_deinit(&second);
    redlock_client_deinit(&c2);
    /* the random source fails before the client's id was drawn */
    CHECK_EQ(redlock_client_init(&c2, &cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&second, &c2, &o), REDLOCK_OK);
    T.fail_random = 1;
    CHECK_EQ(redlock_acquire(&second), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_IDLE);
    T.fail_random = 0;
    redlock_lock_deinit(&second);
    redlock_client_deinit(&c2);
    teardown();
}

/* Handles acquired by threads that are all alive at once (a thread id may
   be reused once its thread has ended): each records its id and its owner. */
typedef struct owner_probe {
    redlock_lock lk;
    uint64_t thread;
    int rc;
    char owner[REDLOCK_MAX_OWNER + 1];
} owner_probe;
static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t probe_all_alive;
static void *probe_acquire(void *arg) {
    owner_probe *p = (owner_probe *)arg;
    pthread_mutex_lock(&probe_mu);            /* one thread at a time uses the client */
    p->thread = REDLOCK_THREAD_ID();
    p->rc = redlock_acquire(&p->lk);
    strcpy(p->owner, redlock_lock_owner(&p->lk));
    pthread_mutex_unlock(&probe_mu);
    pthread_barrier_wait(&probe_all_alive);
    return NULL;
}
/* owner is "<client>:<16 hex digits of thread>" */
static int owner_is(const char *owner, const char *client, uint64_t thread) {
    char expect[40];
    snprintf(expect, sizeof expect, "%.16s:%016llx", client, (unsigned long long)thread);
    if (strcmp(owner, expect) == 0) return 1;
    printf("#   owner \"%s\", expected \"%s\"\n", owner, expect);
    return 0;
}
/* A random source that fails only for 8-byte draws (the client's id), not
   for tokens. */
static int t_random_no_ids(void *u, void *buf, size_t len) {
    return len == sizeof(uint64_t) ? -1 : t_random(u, buf, len);
}

/* Proves: the default owner's thread part is exactly the 16 hex digits of
   REDLOCK_THREAD_ID() in the thread that acquires (or adopts): the main
   thread's, and each of four other threads alive at once, all different;
   adopt takes the owner too, and its commands carry it; a fenced
   reentrant lock's counter name is intact beside it; when the client's id
   cannot be drawn, acquire and adopt refuse (RANDOM) and nothing is sent. */
static void test_reentrant_default_owner_bytes(void) {
    owner_probe probe[4];
    pthread_t th[4];
    char client[17], expect[300];
    redlock_lock_opts o;
    redlock_config cfg;
    int i, j;
    setup_reentrant(1, NULL);
    redlock_acquire(&L);
    memcpy(client, redlock_lock_owner(&L), 16);
    client[16] = 0;
    CHECK(owner_is(redlock_lock_owner(&L), client, REDLOCK_THREAD_ID()));
    CHECK(sent_is(0, RACQ_SHA, redlock_lock_owner(&L), " 1000"));
    num(0, 1);
    reentrant_opts(&o, NULL);
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_lock_init(&probe[i].lk, &C, &o), REDLOCK_OK);
    CHECK_EQ(pthread_barrier_init(&probe_all_alive, NULL, 5), 0);
    for (i = 0; i < 4; i++) CHECK_EQ(pthread_create(&th[i], NULL, probe_acquire, &probe[i]), 0);
    pthread_barrier_wait(&probe_all_alive);
    for (i = 0; i < 4; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&probe_all_alive);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(probe[i].rc, REDLOCK_OK);
        CHECK(owner_is(probe[i].owner, client, probe[i].thread));
        CHECK(probe[i].thread != REDLOCK_THREAD_ID());
        for (j = 0; j < i; j++) CHECK(strcmp(probe[i].owner, probe[j].owner) != 0);
        redlock_lock_deinit(&probe[i].lk);
    }
    CHECK_EQ(T.qn, 5);
    /* adopt: the owner of the adopting thread, in its commands */
    redlock_release(&L);
    num(5, 1);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 500), REDLOCK_OK);
    CHECK(owner_is(redlock_lock_owner(&L), client, REDLOCK_THREAD_ID()));
    redlock_extend(&L, 0);
    snprintf(expect, sizeof expect, "%s%s %s 1000", REXT_SHA, redlock_lock_owner(&L), ADOPTED);
    CHECK_STR(T.q[6].cmd, expect);
    teardown();
    /* fenced too: the counter's name after the owner's room is intact */
    base_config(&cfg, 1);
    reentrant_opts(&o, NULL);
    o.fence = 1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK(owner_is(redlock_lock_owner(&L), redlock_lock_owner(&L), REDLOCK_THREAD_ID()));
    snprintf(expect, sizeof expect, "%s%s %s 1000", RFACQ_SHA, redlock_lock_owner(&L), redlock_lock_token(&L));
    CHECK_STR(T.q[0].cmd, expect);
    teardown();
    /* no client id: refused before anything is sent */
    reentrant_opts(&o, NULL);
    setup_random(&cfg, &o, t_random_no_ids);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 500), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_STR(redlock_lock_owner(&L), "");
    CHECK_EQ(T.qn, 0);
    teardown();
}

/* Proves: owner ids are checked at init, and a reentrant lock's block is
   freed like any other. */
static void test_reentrant_init_errors(void) {
    redlock_lock_opts o;
    char longest[REDLOCK_MAX_OWNER + 2];
    long before;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    before = key_blocks;
    reentrant_opts(&o, "");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "has space";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "tab\there";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    o.owner = longest;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner_len = REDLOCK_MAX_OWNER; /* the first 64 bytes */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(strlen(redlock_lock_owner(&L)), REDLOCK_MAX_OWNER);
    CHECK_EQ(key_blocks, before + 1);
    o.owner = "a";
    o.owner_len = 0;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK); /* again: the old block freed */
    CHECK_EQ(key_blocks, before + 1);
    CHECK_STR(redlock_lock_owner(&L), "a");
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
    redlock_client_deinit(&C);
}

/* Proves: an owner id's bytes are the printable ASCII ones, '!' (33) to
   '~' (126), at both ends: space, DEL (127) and bytes above are refused. */
static void test_reentrant_owner_byte_range(void) {
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    reentrant_opts(&o, "!svc~");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_STR(redlock_lock_owner(&L), "!svc~");
    o.owner = "svc\x7f";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "svc\x80";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = " svc";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    redlock_client_deinit(&C);
}

/* Proves: an adopted token on a reentrant lock extends and releases with
   the lock's owner (the entry another process made for that owner). */
static void test_reentrant_adopt(void) {
    static const char tok[] = "00112233445566778899aabbccddeeff";
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    reentrant_opts(&o, "svc-h");
    o.watchdog = 1;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_adopt(&L, tok, 0), REDLOCK_OK);
    CHECK(starts(0, REXT_SHA));
    CHECK(strstr(T.q[0].cmd, " res svc-h 00112233445566778899aabbccddeeff 1000") != NULL);
    num(0, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_release(&L);
    CHECK(starts(1, RREL_SHA));
    CHECK(strstr(T.q[1].cmd, " res svc-h 00112233445566778899aabbccddeeff") != NULL);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: the queries and calls of the newer features on NULL and on a
   handle not initialised (zero-filled, or deinitialised) answer as the
   older ones do: INVALID for NULL, DETACHED for a handle, and the empty
   value of each query (DEFAULT access, "" owner and key, fence 0). */
static void test_null_handles_newer_calls(void) {
    redlock_lock z;
    size_t len = 99;
    memset(&z, 0, sizeof z);
    CHECK_EQ(redlock_lock_access(NULL), REDLOCK_ACCESS_DEFAULT);
    CHECK_STR(redlock_lock_owner(NULL), "");
    CHECK_STR(redlock_lock_key(NULL, &len), "");
    CHECK_EQ(len, 0);
    CHECK_STR(redlock_lock_key(NULL, NULL), "");
    CHECK_EQ(redlock_lock_fence(NULL), 0);
    CHECK_EQ(redlock_lock_remaining_us(NULL), 0);
    CHECK_EQ(redlock_lock_followup(NULL), 0);
    CHECK_EQ(redlock_lock_waiting(NULL), 0);
    CHECK_EQ(redlock_lock_wake(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(NULL, ADOPTED, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_upgrade(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_access(&z), REDLOCK_ACCESS_DEFAULT);
    CHECK_STR(redlock_lock_owner(&z), "");
    CHECK_EQ(redlock_lock_wake(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_upgrade(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_downgrade(&z), REDLOCK_ERR_DETACHED);
    /* deinitialised: what the handle's memory still says does not count */
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_DEFAULT);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_DETACHED);
    redlock_client_deinit(&C);
    setup_reentrant(1, "svc-z");
    CHECK_STR(redlock_lock_owner(&L), "svc-z");
    redlock_lock_deinit(&L);
    CHECK_STR(redlock_lock_owner(&L), "");
    redlock_client_deinit(&C);
}

/* ---- release notifications: redlock_lock_wake ---- */

/* Proves: a wake while the acquire waits out its retry delay starts the
   next attempt at once; one during the undo starts it as soon as the undo
   is done; one during an attempt starts the next one early too, after the
   wake rate limit; an attempt a wake started that loses spends no retry
   (EV_RETRY: the retry keeps its time); redlock_lock_waiting() says when
   a wake helps. */
static void test_wake_retries_now(void) {
    int64_t t0, gap = 100000 / REDLOCK_WAKES_PER_DELAY;
    setup_n(3, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    t0 = T.now;
    redlock_acquire(&L);
    CHECK_EQ(redlock_lock_waiting(&L), 0);  /* the attempt runs */
    nil(0); nil(1);                         /* lost: undo on 3..5, retry in 100 ms */
    CHECK_EQ(T.qn, 6);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* during the undo */
    CHECK_EQ(T.qn, 6);
    num(3, 0); num(4, 0);
    CHECK_EQ(T.qn, 6);                      /* the undo still runs on node 2 */
    T.now = t0 + 1000;
    num(5, 0);
    CHECK_EQ(T.qn, 9);                      /* attempt 2 at once, not 100 ms later */
    CHECK(starts(6, "SET res"));
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 2);
    /* woken during the attempt: after its failure the next one comes
       early too, once the rate limit allows (a share of the delay after
       attempt 2, which a wake started) */
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    nil(6); nil(7);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 99000); /* no retry spent: it keeps its time */
    num(9, 0); num(10, 0); num(11, 0);
    CHECK_EQ(T.qn, 12);                     /* not before the rate limit */
    CHECK_EQ(T.timer, t0 + 1000 + gap);
    advance_to(T.timer);
    CHECK_EQ(T.qn, 15);                     /* attempt 3 */
    ok(12); ok(13);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
    /* waiting out the delay with no undo left: the wake starts it now */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil(0);
    num(1, 0);                              /* undo done */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.timer, T.now + 100000);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "SET res"));
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* again, during the attempt: nothing sent */
    CHECK_EQ(T.qn, 3);
    ok(2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a genuine release wakes a waiter promptly: a wake well into the
   retry delay starts the attempt at once; one that loses leaves the retry
   at its time; a wake that comes within the rate limit after it is not
   dropped but starts its attempt when the limit ends, and wins there. */
static void test_wake_prompt(void) {
    int64_t t0, gap = 100000 / REDLOCK_WAKES_PER_DELAY;
    setup_n(1, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    redlock_acquire(&L);
    nil(0);
    num(1, 0);                              /* waits: the retry is due in 100 ms */
    t0 = T.now;
    advance_to(t0 + 30000);                 /* nothing due yet */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* a release: the attempt now */
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "SET res"));
    T.now = t0 + 30200;
    nil(2);                                 /* another waiter was faster */
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000 - 30200);
    num(3, 0);
    CHECK_EQ(T.timer, t0 + 100000);         /* the retry keeps its time */
    T.now = t0 + 31000;
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* the next release, within the rate limit */
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(T.timer, t0 + 30000 + gap);    /* kept for the limit's end */
    advance_to(t0 + 30000 + gap - 1);
    CHECK_EQ(T.qn, 4);
    advance_to(t0 + 30000 + gap);
    CHECK_EQ(T.qn, 5);
    CHECK(starts(4, "SET res"));
    ok(4);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
}

/* A node that refuses every SET (another holder keeps the key) and
   answers every undo, inside send. */
static int sync_held(int node, const char *cmd, redlock_reply *r) {
    (void)node;
    if (strncmp(cmd, "SET", 3) == 0) r->type = REDLOCK_REPLY_NIL;
    else { r->type = REDLOCK_REPLY_INTEGER; r->integer = 0; }
    return 1;
}

/* A wake every 100 us (a flood of notifications, forged or not: anyone
   allowed to PUBLISH can send them) until the acquire ends, which it must
   within 10 s; the acquire's attempts. */
static int flood_until_done(int64_t *took) {
    int64_t t0 = T.now;
    T.sync = sync_held;
    redlock_acquire(&L);
    while (last_status(REDLOCK_OP_ACQUIRE) == 1 && T.now < t0 + 10000000) {
        redlock_lock_wake(&L);
        advance_to(T.now + 100);
    }
    T.sync = NULL;
    *took = T.now - t0;
    return T.res.n ? T.res.r[T.res.n - 1].attempts : -1;
}

/* Proves: waiting is a time budget. Under a flood of wakes the acquire
   neither ends before its retries' time (retry_count x retry_delay) nor
   waits longer; its attempts are at most the retries plus
   REDLOCK_WAKES_PER_DELAY per retry delay. With wait_ms and many
   retries, the same: TIMEOUT at the deadline, with as many attempts. */
static void test_wake_flood_keeps_budget(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t took;
    int attempts, k = REDLOCK_WAKES_PER_DELAY;
    setup_n(1, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    attempts = flood_until_done(&took);
    printf("# a flood of wakes: %d attempts, %lld ms (2 retries 100 ms apart)\n", attempts, (long long)took / 1000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK(took >= 200000);                  /* the retries' time */
    CHECK(took <= 200000 + 100);
    CHECK(attempts <= 1 + 2 + 2 * k + 1);
    CHECK(attempts >= 2 * k);               /* the wakes were heard, at the limit's pace */
    CHECK(count_ev(REDLOCK_EV_RETRY) == attempts - 1);
    teardown();
    /* the explicit form: wait_ms 300 with retries to spare */
    base_config(&cfg, 1);
    cfg.retry_count = 1000;
    cfg.wait_ms = 300;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    attempts = flood_until_done(&took);
    printf("# a flood of wakes: %d attempts, %lld ms (wait_ms 300)\n", attempts, (long long)took / 1000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    CHECK(took >= 300000);
    CHECK(took <= 300000 + 100);
    CHECK(attempts <= 1 + 3 + 3 * k + 1);
    CHECK(attempts >= 3 * k);
    teardown();
}

/* Proves: a wake changes nothing outside an acquire: IDLE, HELD,
   RELEASING, after the acquire gave up; bad handles are refused. A wake
   before the attempt that it would help is consumed by that attempt. */
static void test_wake_elsewhere(void) {
    redlock_lock_opts o;
    redlock_config cfg;
    CHECK_EQ(redlock_lock_wake(NULL), REDLOCK_ERR_INVALID);
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    redlock_acquire(&L);
    ok(0);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    redlock_release(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    num(1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_ERR_DETACHED);
    redlock_client_deinit(&C);
    /* no retries: the failed acquire ends; a wake then starts nothing */
    base_config(&cfg, 1);
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* woken during its only attempt */
    nil(0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);                      /* the SET and its undo only */
    teardown();
    /* woken, then an attempt starts by its delay: the wake is used up */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil(0);
    redlock_lock_wake(&L);                  /* during the undo */
    num(1, 0);                              /* attempt 2 at once */
    nil(2);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000); /* the wake was attempt 2's, not 3's */
    teardown();
}

/* Proves: the release script deletes and publishes "released" on
   REDLOCK_CHANNEL_PREFIX + key (text checked; the server side runs in the
   integration tests), and so do the undo and the cleanup (the same script). */
/* redlock_lock_key, and the adapters' notification table: a key is
   subscribed when its first lock comes in and unsubscribed when its last
   goes; a message wakes only that key's waiting locks, each once. */
static void test_notify_table(void) {
    redlock__notify n;
    redlock_lock other, third;
    redlock_lock_opts o;
    const char *key;
    size_t len;
    int i;
    memset(&n, 0, sizeof n);
    CHECK_STR(redlock_lock_key(NULL, &len), "");
    CHECK_EQ(len, 0);
    setup_n(1, 0, 1000);
    key = redlock_lock_key(&L, &len);
    CHECK_EQ(len, 3);
    CHECK(memcmp(key, "res", 3) == 0);
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&other, &C, &o), REDLOCK_OK); /* the same key */
    o.key = "elsewhere";
    CHECK_EQ(redlock_lock_init(&third, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock__notify_add(&n, &L), 1);      /* a new key: subscribe */
    CHECK_EQ(redlock__notify_add(&n, &L), 0);      /* in already */
    CHECK_EQ(redlock__notify_add(&n, &other), 0);  /* the key is listened to */
    CHECK_EQ(redlock__notify_add(&n, &third), 1);
    CHECK_EQ((int)n.count, 3);
    /* L waits (its attempt failed, undo done); `other` and `third` are idle */
    redlock_acquire(&L);
    nil(0);
    num(1, 0);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    redlock__notify_message(&n, "elsewhere", 9);   /* another key: nothing */
    CHECK_EQ(T.qn, 2);
    redlock__notify_message(&n, "res", 3);         /* L's next attempt now */
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "SET res"));
    redlock__notify_message(&n, "res", 3);         /* a copy from another node: the attempt runs */
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(redlock__notify_remove(&n, &other, &key, &len), 0); /* L still listens */
    CHECK_EQ(redlock__notify_remove(&n, &L, &key, &len), 1);     /* the key's last */
    CHECK_EQ(len, 3);
    CHECK_EQ(redlock__notify_remove(&n, &L, &key, &len), 0);     /* gone already */
    /* the table grows past its first buckets and finds every lock again */
    {
        static redlock_lock many[40];
        static char names[40][8];
        int subscribed = 0;
        for (i = 0; i < 40; i++) {
            snprintf(names[i], sizeof names[i], "k%d", i % 20);
            o.key = names[i];
            CHECK_EQ(redlock_lock_init(&many[i], &C, &o), REDLOCK_OK);
            subscribed += redlock__notify_add(&n, &many[i]);
        }
        CHECK_EQ(subscribed, 20);                      /* one per key */
        CHECK_EQ((int)n.count, 41);
        for (i = 0; i < 40; i++) {
            int last = redlock__notify_remove(&n, &many[i], &key, &len);
            CHECK_EQ(last, i >= 20);                   /* k0..k19 each twice */
            redlock_lock_deinit(&many[i]);
        }
    }
    CHECK_EQ((int)n.count, 1);
    redlock__notify_free(&n);
    CHECK_EQ((int)n.count, 0);
    ok(2);
    redlock_lock_deinit(&other);
    redlock_lock_deinit(&third);
    teardown();
}

/* callbacks.listen: on when a failed attempt will be retried after a delay
   at least as long as the node timeout, off when the acquire ends (won, given up,
   cancelled by release) or the lock goes; the key still reads inside the
   last call. */
static int listen_log[16], listen_n;
static size_t listen_key_len;
static void t_listen(void *user, redlock_lock *lk, int on) {
    (void)user;
    if (listen_n < 16) listen_log[listen_n++] = on;
    redlock_lock_key(lk, &listen_key_len);
}
static void setup_listening_delay(int retries, int64_t delay_ms) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.retry_count = retries;
    cfg.retry_delay_ms = delay_ms;
    base_callbacks(&cb);
    cb.listen = t_listen;
    base_opts(&o, 1000, 0);
    setup_callbacks(&cfg, &o, &cb);
    listen_n = 0;
}
static void setup_listening(int retries) { setup_listening_delay(retries, 100); }
static void test_listen_callback(void) {
    /* won at the second attempt */
    setup_listening(2);
    redlock_acquire(&L);
    CHECK_EQ(listen_n, 0);
    nil(0);                                 /* lost: undo, then retry */
    CHECK_EQ(listen_n, 1);
    CHECK_EQ(listen_log[0], 1);
    num(1, 0);
    redlock_lock_wake(&L);
    ok(2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[1], 0);
    redlock_release(&L);
    num(3, 1);
    CHECK_EQ(listen_n, 2);                  /* nothing for a release */
    /* cancelled by release while it waits */
    redlock_acquire(&L);
    nil(4);
    CHECK_EQ(listen_n, 3);
    redlock_release(&L);
    CHECK_EQ(listen_n, 4);
    CHECK_EQ(listen_log[3], 0);
    teardown();
    CHECK_EQ(listen_n, 4);                  /* already off */
    /* deinitialised while it waits: off, with the key still there */
    setup_listening(2);
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(listen_n, 1);
    listen_key_len = 0;
    redlock_lock_deinit(&L);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[1], 0);
    CHECK_EQ(listen_key_len, 3);
    redlock_client_deinit(&C);
    /* retries used up: off when it gives up, once */
    setup_listening(1);
    redlock_acquire(&L);
    nil(0);
    num(1, 0);
    run_until_sent(2);
    nil(2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[0], 1);
    CHECK_EQ(listen_log[1], 0);
    teardown();
    CHECK_EQ(listen_n, 2);
    /* a retry delay shorter than the node timeout (50 ms): no listening
       (polling finds a release about as soon); a wake still works */
    setup_listening_delay(2, 49);
    redlock_acquire(&L);
    nil(0);
    num(1, 0);
    CHECK_EQ(listen_n, 0);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    redlock_lock_wake(&L);
    CHECK(starts(2, "SET res"));
    ok(2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
    CHECK_EQ(listen_n, 0);
    /* as long: listening */
    setup_listening_delay(2, 50);
    redlock_acquire(&L);
    nil(0);
    CHECK_EQ(listen_n, 1);
    teardown();
    CHECK_EQ(listen_n, 2);
}

static void test_release_publishes(void) {
    CHECK(strstr(redlock_release_script(), "pcall(redis.call,'publish','" REDLOCK_CHANNEL_PREFIX "'..KEYS[1],'released')") != NULL);
    CHECK(strstr(redlock_reentrant_release_script(), "pcall(redis.call,'publish','" REDLOCK_CHANNEL_PREFIX "'..k,'released')") != NULL);
    CHECK(strstr(redlock_extend_script(), "publish") == NULL);
}

/* Proves: a WRONGTYPE answer (the key holds a reentrant lock's hash, or
   any other kind of value) is another holder, not a node failure: a
   legacy GET votes against (LOCKED), an extend script against (STOLEN), a
   release script "not ours"; also as Redis 6 words a script's error. */
static void test_wrongtype_is_another_holder(void) {
    static const char wt[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
    static const char wt6[] = "ERR Error running script (call to f_x): @user_script:1: WRONGTYPE Operation against a key";
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.mode[0] = REDLOCK_MODE_LEGACY;
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num(0, 0);                              /* SETNX: taken */
    CHECK(starts(1, "GET res"));
    rep(1, REDLOCK_REPLY_ERROR, 0, wt);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(vote_status(0), 0);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    redlock_extend(&L, 0);
    rep(3, REDLOCK_REPLY_ERROR, 0, wt);
    rep(4, REDLOCK_REPLY_ERROR, 0, wt6);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok(0); ok(1);
    redlock_release(&L);
    rep(3, REDLOCK_REPLY_ERROR, 0, wt);
    rep(4, REDLOCK_REPLY_ERROR, 0, wt6);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED); /* not ours on a majority */
    CHECK_EQ(vote_status(0), 0);
    teardown();
}

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    RUN_T(test_client_init_errors);
    RUN_T(test_lock_init_errors);
    RUN_T(test_api_misuse);
    RUN_T(test_followup);
    RUN_T(test_fence_acquire_write_back);
    RUN_T(test_fence_write_back_fails);
    RUN_T(test_fence_scripts_and_refusals);
    RUN_T(test_acl_key_denied);
    RUN_T(test_fence_adopted);
    RUN_T(test_evict_info_parse);
    RUN_T(test_evict_node_state);
    RUN_T(test_acquire_ttl_share);
    RUN_T(test_reentrant_label_layout);
    RUN_T(test_evict_fenced_refused);
    RUN_T(test_evict_option);
    RUN_T(test_evict_learned_midway);
    RUN_T(test_fence_reentrant);
    RUN_T(test_rw_commands);
    RUN_T(test_rw_refusals);
    RUN_T(test_rw_upgrade_downgrade);
    RUN_T(test_rw_marks_and_endings);
    RUN_T(test_rw_mode_per_hold);
    RUN_T(test_rw_upgrade_hold_cap);
    RUN_T(test_rw_upgrade_during_renewal);
    RUN_T(test_rw_release_cancels_downgrade);
    RUN_T(test_rw_upgrade_events);
    RUN_T(test_rw_upgrade_validity_at_start);
    RUN_T(test_rw_upgrade_result_after_deinit);
    RUN_T(test_rw_upgrade_after_noscript);
    RUN_T(test_rw_downgrade_release_elapsed);
    RUN_T(test_rw_downgrade_straggler_noscript);
    RUN_T(test_rw_calls_busy);
    RUN_T(test_rw_mark_life_with_jitter);
    RUN_T(test_rw_max_nodes);
    RUN_T(test_reentrant_acquire_release);
    RUN_T(test_reentrant_other_owner_refused);
    RUN_T(test_reentrant_noscript);
    RUN_T(test_reentrant_no_scripting);
    RUN_T(test_reentrant_extend);
    RUN_T(test_reentrant_two_handles);
    RUN_T(test_reentrant_deinit_after_run_out);
    RUN_T(test_reentrant_default_owner);
    RUN_T(test_reentrant_default_owner_bytes);
    RUN_T(test_reentrant_init_errors);
    RUN_T(test_reentrant_owner_byte_range);
    RUN_T(test_reentrant_adopt);
    RUN_T(test_wake_retries_now);
    RUN_T(test_wake_prompt);
    RUN_T(test_wake_flood_keeps_budget);
    RUN_T(test_wake_elsewhere);
    RUN_T(test_release_publishes);
    RUN_T(test_notify_table);
    RUN_T(test_listen_callback);
    RUN_T(test_wrongtype_is_another_holder);
    RUN_T(test_acquire_single);
    RUN_T(test_token_unique);
    RUN_T(test_quorum_early);
    RUN_T(test_fail_rollback_retry);
    RUN_T(test_timeouts_no_quorum);
    RUN_T(test_wait_deadline);
    RUN_T(test_config_refused);
    RUN_T(test_config_refused_after_decision);
    RUN_T(test_tls_refused);
    RUN_T(test_send_failure);
    RUN_T(test_validity_exhausted);
    RUN_T(test_sync_transport);
    RUN_T(test_callbacks_reenter);
    RUN_T(test_release_cancels_acquire);
    RUN_T(test_release_cancels_extend);
    RUN_T(test_cancelled_result_fields);
    RUN_T(test_extend_result_when_lost);
    RUN_T(test_release_noscript_fallback);
    RUN_T(test_release_late_noscript_after_timeout);
    RUN_T(test_release_quorum);
    RUN_T(test_extend);
    RUN_T(test_watchdog_renews);
    RUN_T(test_watchdog_loses_quorum);
    RUN_T(test_expiry_without_watchdog);
    RUN_T(test_state_by_clock);
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
    RUN_T(test_lock_table_config);
    RUN_T(test_many_locks_table_and_heap);
    RUN_T(test_turns_wait_in_line);
    RUN_T(test_turns_held_first);
    RUN_T(test_turns_renewal_waits_across_cap);
    RUN_T(test_turns_deinit_sends_waiting_release);
    RUN_T(test_turns_window_adapts);
    RUN_T(test_turns_config);
    RUN_T(test_stale_tag_of_freed_lock);
    RUN_T(test_lock_table_grows);
    RUN_T(test_lock_table_nomem);
    RUN_T(test_call_after_lost_freed);
    RUN_T(test_queue_full_overloaded);
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
    RUN_T(test_no_callback_lock_renews);
    RUN_T(test_no_callback_lock_ops);
    RUN_T(test_legacy_parse_bounds);
    RUN_T(test_legacy_getset_compares_exactly);
    RUN_T(test_legacy_release_extend_malformed_not_ours);
    RUN_T(test_builtin_clocks_match_system);
    RUN_T(test_retry_jitter_statistics);
    RUN_T(test_retry_jitter_edges);
    RUN_T(test_retry_jitter_exact_values);
    RUN_T(test_hold_caps_exact);
    RUN_T(test_hold_cap_counts_successes);
    RUN_T(test_sixteen_nodes_acquire);
    RUN_T(test_sixteen_nodes_release_extend);
    RUN_T(test_detached_after_client_deinit);
    RUN_T(test_detached_after_lock_deinit);
    RUN_T(test_null_and_zeroed_handles);
    RUN_T(test_null_handles_newer_calls);
    RUN_T(test_tag_node_odd_tags);
    RUN_T(test_validity_formula_exact);
    RUN_T(test_renewal_cadence_exact);
    RUN_T(test_noscript_release_after_lengthening_extend);
    RUN_T(test_noscript_release_after_shortening_extend);
    RUN_T(test_legacy_release_bound_follows_extend);
    RUN_T(test_key_left_never_otherwise);
    RUN_T(test_key_left_clobbered_node);
    RUN_T(test_key_left_clobbered_across_retries);
    RUN_T(test_key_left_unanswered_getset);
    RUN_T(test_send_and_error_statuses);
    RUN_T(test_default_config_values);
    RUN_T(test_acquire_validity_boundary);
    RUN_T(test_event_fields);
    RUN_T(test_info_version_parsing);
    RUN_T(test_deinit_inside_send_no_more_results);
    RUN_T(test_acquire_in_failed_extend_result);
    RUN_T(test_check_then_act_after_round_deadline);
    RUN_T(test_noscript_bound_before_pexpire);
    RUN_T(test_noscript_other_token_not_ours);
    RUN_T(test_retry_event_elapsed);
    RUN_T(test_failed_event_fields);
    RUN_T(test_event_unused_fields_zero);
    RUN_T(test_acquired_ttl_share);
    RUN_T(test_mode_switch_event_fields);
    RUN_T(test_error_words_alone);
    RUN_T(test_max_nodes_no_overrun);
    RUN_T(test_deinit_in_cancelled_result);
    RUN_T(test_old_set_error_alone);
    RUN_T(test_release_decides_without_straggler);
    RUN_T(test_vote_after_decision);
    RUN_T(test_null_reply_and_error_zero);
    RUN_T(test_wait_shorter_than_delay);
    RUN_T(test_expiry_after_user_extend);
    RUN_T(test_deinit_in_result_never_written_again);
    RUN_T(test_early_timer_rearmed);
    RUN_T(test_deinit_in_cleanup_send);
    RUN_T(test_deinit_in_undo_send);
    RUN_T(test_validity_zero_unless_held);
    RUN_T(test_info_not_a_string);
    RUN_T(test_adopt_errors);
    RUN_T(test_token_label);
    RUN_T(test_adopt_unknown_validity);
    RUN_T(test_adopt_renewed_slack);
    RUN_T(test_adopt_extend_late_and_retry);
    RUN_T(test_adopt_given_validity);
    RUN_T(test_adopt_noscript_pttl);
    RUN_T(test_adopt_pttl_counts_from_send);
    RUN_T(test_adopt_legacy);
    RUN_T(test_adopt_auto_legacy_value);
    RUN_T(test_adopt_life_units);
    RUN_T(test_adopt_forgets_old_life);
    RUN_T(test_handle_size);
    RUN_T(test_key_block);
    RUN_T(test_key_block_sizes);
    RUN_T(test_client_deinit_every_lock);
    RUN_T(test_foreign_status_is_transport);
    RUN_T(test_extend_zero_is_a_no);
    RUN_T(test_renewals_spread);
    RUN_T(test_noscript_pexpire_zero);
    RUN_T(test_noscript_long_ttl_release);
    RUN_T(test_noscript_long_dead_node);
    RUN_T(test_max_nodes_round_keeps_validity);
    RUN_T(test_lock_numbers_wrap);
    RUN_T(test_live_ids_distinct_across_wrap);
    RUN_T(test_stale_tag_one_wrap_later);
    RUN_T(test_builtin_mono_exact);
    RUN_T(test_settle_deinit_in_cleanup_send);
    RUN_T(test_noscript_acquire_bound);
    return CHECK_EXIT();
}
