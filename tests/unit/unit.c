/* unit.c - the core driven by a scripted transport: every state transition,
   replies delivered later and inside send, AUTO switching, bad input. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include "check.h"

#include <stdlib.h>

/* ---- the scripted transport ---- */
#define MAXQ 256
typedef struct sent { int node; redlock_tag tag; char cmd[400]; } sent;
typedef struct results { int n; redlock_result r[32]; } results;

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
    if (T.res.n < 32) T.res.r[T.res.n++] = *r;
    if (T.release_on_acquired && r->op == REDLOCK_OP_ACQUIRE && r->status == REDLOCK_OK) redlock_release(lk);
    if (T.deinit_on_result) redlock_lock_deinit(lk);
}

static redlock_client C;
static redlock_lock L;

static void setup_n(int nodes, int watchdog, int64_t ttl) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    memset(&T, 0, sizeof T);
    T.now = 1000000;
    T.wall = 1700000000000LL;
    T.fail_send_node = -1;
    T.client = &C;
    redlock_config_init(&cfg);
    cfg.node_count = nodes;
    cfg.retry_count = 2;
    cfg.retry_delay_ms = 100;
    cfg.retry_jitter_ms = -1;
    memset(&cb, 0, sizeof cb);
    cb.send = t_send;
    cb.set_timer = t_timer;
    cb.now_us = t_now;
    cb.wall_ms = t_wall;
    cb.random = t_random;
    cb.on_event = t_event;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = ttl;
    o.watchdog = watchdog;
    o.on_result = t_result;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
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

int main(void) {
    RUN(test_client_init_errors);
    RUN(test_lock_init_errors);
    RUN(test_api_misuse);
    RUN(test_acquire_single);
    RUN(test_token_unique);
    RUN(test_quorum_early);
    RUN(test_fail_rollback_retry);
    RUN(test_timeouts_no_quorum);
    RUN(test_wait_deadline);
    RUN(test_send_failure);
    RUN(test_validity_exhausted);
    RUN(test_sync_transport);
    RUN(test_callbacks_reenter);
    RUN(test_release_cancels_acquire);
    RUN(test_release_cancels_extend);
    RUN(test_release_noscript_fallback);
    RUN(test_release_quorum);
    RUN(test_extend);
    RUN(test_watchdog_renews);
    RUN(test_watchdog_loses_quorum);
    RUN(test_expiry_without_watchdog);
    RUN(test_hold_limit);
    RUN(test_auto_legacy);
    RUN(test_legacy_not_expired_and_race);
    RUN(test_auto_noscript);
    RUN(test_modern_mode_no_switch);
    RUN(test_malformed_replies);
    RUN(test_unknown_tags);
    RUN(test_sha_constants);
    RUN(test_strerror);
    RUN(test_builtin_callbacks);
    RUN(test_many_locks_one_client);
    return CHECK_EXIT();
}
