/* harness.h - what the unit tests share: the core built with counted
   allocations, the scripted transport, the setups, and the helpers that
   answer and check commands by node and verb. Included once, by unit.c. */

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

#include <pthread.h>

/* ---- the core's internals the tests read ----
   Named here only, so that a change inside redlock.h costs one edit. Field
   macros take the struct itself (LOCK_ID(*lk)) and can be assigned to. */
#define LOCK_ID(l) ((l)._id)
#define LOCK_MAGIC(l) ((l)._magic)
#define LOCK_DEADLINE(l) ((l)._deadline)       /* earliest time the lock needs the timer */
#define LOCK_EXTENSIONS(l) ((l)._extensions)   /* successful extends of this hold */
#define LOCK_BUCKET_NEXT(l) ((l)._bucket_next)
#define CLIENT_TABLE(c) ((c)._table)           /* the lock table's buckets */
#define CLIENT_TABLE_MASK(c) ((c)._table_mask)
#define CLIENT_LOCKS(c) ((c)._locks)           /* locks filed in the table */
#define CLIENT_NEXT_ID(c) ((c)._next_id)
#define CLIENT_HASH_BITS(c) ((c)._hash_bits)
#define CLIENT_MAX_ROUNDS(c) ((c)._cfg.max_rounds)
#define tag_lock_id(tag) redlock__tag_lock_id(tag)
#define table_find(c, id) redlock__find(c, id)
#define table_filed(c, lk) redlock__filed(c, lk)
typedef redlock__node node_state;              /* one node's state in the client */
/* adapters/redlock_notify.h's set of listened keys */
typedef redlock__notify notify_set;
#define notify_add(n, lk) redlock__notify_add(n, lk)
#define notify_remove(n, lk, key, len) redlock__notify_remove(n, lk, key, len)
#define notify_message(n, key, len) redlock__notify_message(n, key, len)
#define notify_free(n) redlock__notify_free(n)

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

/* ---- the scripted transport ----
   Every command sent is queued as text with its node and tag; the tests
   answer them (below), move the clock and fire the timer themselves. */

#define MAXQ 256
typedef struct sent {
    int node;
    redlock_tag tag;
    int answered;           /* replies and errors delivered for it */
    char cmd[2048];
} sent;
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
    int fail_send_rc;                     /* what send returns for fail_send_node (0: TRANSPORT) */
    /* A test's own reactions, called after the bookkeeping: on_result with
       every result t_result records, on_send with every command queued.
       A reaction that should happen once sets its pointer back to NULL. */
    void (*on_result)(redlock_lock *lk, const redlock_result *r);
    void (*on_send)(const char *cmd);
    int rc;                               /* what a reaction's own call returned */
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
    s->answered = 0;                      /* a test may reuse the queue (T.qn = 0) */
    for (i = 0; i < cmd->argc && off + cmd->argvlen[i] + 2 < sizeof s->cmd; i++) {
        if (i) s->cmd[off++] = ' ';
        memcpy(s->cmd + off, cmd->argv[i], cmd->argvlen[i]);
        off += cmd->argvlen[i];
    }
    s->cmd[off] = 0;
    if (T.on_send) T.on_send(s->cmd);
    if (T.sync) {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        if (T.sync(node, s->cmd, &r)) {
            s->answered++;
            redlock_on_reply(T.client, tag, &r);
        }
    }
    return 0;
}
static void t_result(redlock_lock *lk, const redlock_result *r) {
    if (T.res.n < 32) {
        T.res.pending[T.res.n] = redlock_lock_pending(lk);
        T.res.r[T.res.n++] = *r;
    }
    if (T.on_result) T.on_result(lk, r);
}

/* For a send reaction: true for the first command sent that starts with
   prefix, and the reaction is then retired. */
static int first_sent(const char *cmd, const char *prefix) {
    if (strncmp(cmd, prefix, strlen(prefix)) != 0) return 0;
    T.on_send = NULL;
    return 1;
}
/* Send reaction: the first EVAL deinitialises L, whose memory is then
   overwritten as if freed and reused. */
static void free_L_at_eval(const char *cmd) {
    if (!first_sent(cmd, "EVAL ")) return;
    redlock_lock_deinit(&L);
    memset(&L, 0xAA, sizeof L);
}

static redlock_client C;
static redlock_lock L;

/* ---- setups ---- */

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

static void setup_fenced(int nodes) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    setup_with(&cfg, &o);
}

static void setup_rw(int nodes, redlock_access access) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, nodes);
    base_opts(&o, 1000, 0);
    o.access = access;
    setup_with(&cfg, &o);
}

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

/* ---- replies by queue index ----
   For what a node-and-verb address cannot say: a reply delivered again, or
   one to a command that is not the oldest waiting of its kind (a straggler
   of an earlier round, replies out of order). */

static void answered(int k) {
    if (k >= 0 && k < MAXQ) T.q[k].answered++;
}
/* Replies to queued command k. */
static void rep(int k, redlock_reply_type type, long long integer, const char *str) {
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.integer = integer;
    r.str = str;
    r.len = str ? strlen(str) : 0;
    answered(k);
    redlock_on_reply(&C, T.q[k].tag, &r);
}
/* A reply whose string pointer and length are given separately. */
static void rep_raw(int k, redlock_reply_type type, const char *str, size_t len) {
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.str = str;
    r.len = len;
    answered(k);
    redlock_on_reply(&C, T.q[k].tag, &r);
}
static void ok(int k) { rep(k, REDLOCK_REPLY_STATUS, 0, "OK"); }
static void num(int k, long long v) { rep(k, REDLOCK_REPLY_INTEGER, v, NULL); }
/* Command k failed in the transport with status. */
static void fail(int k, int status) {
    answered(k);
    redlock_on_error(&C, T.q[k].tag, status);
}

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

/* ---- replies by node and verb ----
   A test answers a command the way a server sees it: node 0's SET, node 2's
   EVALSHA. The command meant is the oldest one sent to that node that starts
   with the verb (a word, or a longer prefix) and has no answer yet; none is
   a failed check. */
static int verb_is(int k, const char *verb) {
    size_t n = strlen(verb);
    char next = T.q[k].cmd[n < sizeof T.q[k].cmd ? n : 0];
    return strncmp(T.q[k].cmd, verb, n) == 0 && (next == ' ' || next == 0 || (n && verb[n - 1] == ' '));
}
/* The index of node's oldest unanswered command with verb, or -1. */
static int waiting(int node, const char *verb) {
    int k;
    for (k = 0; k < T.qn; k++)
        if (T.q[k].node == node && !T.q[k].answered && verb_is(k, verb)) return k;
    return -1;
}
static int addressed(int node, const char *verb) {
    int k = waiting(node, verb);
    if (k < 0) printf("#   no %s sent to node %d waits for an answer\n", verb, node);
    CHECK(k >= 0);
    return k;
}
/* The index of node's oldest command without an answer, or -1. */
static int next_to(int node) {
    int k;
    for (k = 0; k < T.qn; k++)
        if (T.q[k].node == node && !T.q[k].answered) return k;
    return -1;
}
static const char *next_cmd(int node) {
    int k = next_to(node);
    return k < 0 ? "(nothing waits)" : T.q[k].cmd;
}
/* Node's oldest command waiting for an answer is exactly cmd / starts with
   prefix. Macros, so that a failure names the test's line. */
#define expect_sent(node, cmd) CHECK_STR(next_cmd(node), cmd)
#define expect_starts(node, prefix) CHECK(starts(next_to(node), prefix))

/* Replies to node's command verb (see above). */
static void reply(int node, const char *verb, redlock_reply_type type, long long integer, const char *str) {
    int k = addressed(node, verb);
    if (k >= 0) rep(k, type, integer, str);
}
static void ok_to(int node, const char *verb) { reply(node, verb, REDLOCK_REPLY_STATUS, 0, "OK"); }
static void nil_to(int node, const char *verb) { reply(node, verb, REDLOCK_REPLY_NIL, 0, NULL); }
static void num_to(int node, const char *verb, long long v) { reply(node, verb, REDLOCK_REPLY_INTEGER, v, NULL); }
static void str_to(int node, const char *verb, const char *s) { reply(node, verb, REDLOCK_REPLY_STRING, 0, s); }
static void err_to(int node, const char *verb, const char *s) { reply(node, verb, REDLOCK_REPLY_ERROR, 0, s); }
static void raw_to(int node, const char *verb, redlock_reply_type type, const char *str, size_t len) {
    int k = addressed(node, verb);
    if (k >= 0) rep_raw(k, type, str, len);
}
static void fail_to(int node, const char *verb, int status) {
    int k = addressed(node, verb);
    if (k >= 0) fail(k, status);
}
/* The same reply, held as rep_exact holds it. */
static void exact_to(int node, const char *verb, redlock_reply_type type, const char *str, size_t len) {
    int k = addressed(node, verb);
    if (k >= 0) rep_exact(k, type, str, len);
}

/* The same answer to the oldest verb waiting on each of nodes 0..nodes-1. */
static void ok_all(int nodes, const char *verb) {
    int i;
    for (i = 0; i < nodes; i++) ok_to(i, verb);
}
static void num_all(int nodes, const char *verb, long long v) {
    int i;
    for (i = 0; i < nodes; i++) num_to(i, verb, v);
}

/* ---- commands by queue index ---- */

static int starts(int k, const char *p) { return k >= 0 && k < T.qn && strncmp(T.q[k].cmd, p, strlen(p)) == 0; }

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

/* command k is `prefix` followed by the lock's token and `tail` */
static int fsent_is(int k, const char *prefix, const char *tail) {
    char expect[400];
    snprintf(expect, sizeof expect, "%s%s%s", prefix, redlock_lock_token(&L), tail);
    if (k < T.qn && strcmp(T.q[k].cmd, expect) == 0) return 1;
    printf("#   command %d: \"%s\", expected \"%s\"\n", k, k < T.qn ? T.q[k].cmd : "(none)", expect);
    return 0;
}

/* ---- time, results and events ---- */

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

/* The latest event of type t, or NULL. */
static const redlock_event *last_ev(redlock_event_type t) {
    int i;
    for (i = T.evn - 1; i >= 0; i--) if (T.ev[i].type == t) return &T.ev[i];
    return NULL;
}

/* ---- commands and values the core is expected to produce ---- */

static const char OTHER_TOKEN[] = "0123456789abcdef0123456789abcdef";

/* What validity leaves aside with the default drift settings (0.01, 2 ms),
   plus one 50 ms node timeout when some node is legacy. */
static int64_t drift_us(int64_t ttl_ms, int legacy) { return ttl_ms * 10 + 2000 + (legacy ? 50000 : 0); }

/* A release, or the cleanup after LOST: the flag that publishes. */
static const char *release_eval_publish(const char *token) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s 1", redlock_release_script(), token);
    return buf;
}
static const char *legacy_value(long long expiry_ms, const char *token) {
    static char buf[128];
    snprintf(buf, sizeof buf, "%lld:%s", expiry_ms, token);
    return buf;
}

static const char EXTEND_SHA[] = "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ";
static const char RELEASE_SHA[] = "EVALSHA d7e00109fcea7097a6337cb32a8802b6d9d91443 1 res ";

/* The readers-writer scripts' commands up to the token. */
#define RW_ACQUIRE_SHA "EVALSHA c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef 1 res "
#define RW_RELEASE_SHA "EVALSHA f7bf6351927f135b8da4a9c42452806dc2a47757 1 res "
#define RW_EXTEND_SHA "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 1 res "
#define RW_UPGRADE_SHA "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 1 res "
#define RW_SET_MODE_SHA "EVALSHA b06ef25325497e7d384d8265d29a5597c574e502 1 res "

/* head, the lock's token, tail: a command as the core sends it for L. */
static const char *with_token(const char *head, const char *tail) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s%s%s", head, redlock_lock_token(&L), tail);
    return buf;
}
/* EVAL of script on "res" with L's token and tail (after NOSCRIPT, or a
   round sent as text). */
static const char *script_sent(const char *script, const char *tail) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s%s", script, redlock_lock_token(&L), tail);
    return buf;
}
/* L's readers-writer acquire in mode ("s", "x", "u"): ttl 1000, a
   refused writer's mark 200 ms. */
static const char *rw_acquire_sent(const char *mode) {
    char tail[32];
    snprintf(tail, sizeof tail, " 1000 %s 200", mode);
    return with_token(RW_ACQUIRE_SHA, tail);
}

static const char ADOPTED[] = "00112233445566778899aabbccddeeff";

/* A token with opts.label is the label and 32 lowercase hex digits. */
static int labelled(const char *tok, const char *label) {
    size_t i, n = strlen(label);
    if (strncmp(tok, label, n) != 0 || strlen(tok) != n + REDLOCK_TOKEN_LEN) return 0;
    for (i = n; tok[i]; i++)
        if (!strchr("0123456789abcdef", tok[i])) return 0;
    return 1;
}

static const char FACQ_SHA[] = "EVALSHA 08c7557d4c89b0ab5b53a3a0ef90a225f2be7888 2 res " REDLOCK_FENCE_PREFIX "res ";
static const char FENCE_SHA[] = "EVALSHA 48e95165afb854dba74eb9d2c02d43ed7c87f94a 2 res " REDLOCK_FENCE_PREFIX "res ";

static const char RFACQ_SHA[] = "EVALSHA 9e90d98820f6fd7cf2d8944664d249d42ea91993 2 res " REDLOCK_FENCE_PREFIX "res ";

/* ---- locks held, made again, freed ---- */

/* setup_n without a watchdog, then L's acquire sent: no answer yet. */
static void setup_acquiring(int nodes, int64_t ttl) {
    setup_n(nodes, 0, ttl);
    redlock_acquire(&L);
}
/* The same, and every node's SET answered OK: L held. */
static void setup_held(int nodes, int64_t ttl) {
    setup_acquiring(nodes, ttl);
    ok_all(nodes, "SET");
}
/* setup_rw, then L acquired: every node's script voted for it. */
static void setup_rw_held(int nodes, redlock_access access) {
    setup_rw(nodes, access);
    redlock_acquire(&L);
    num_all(nodes, "EVALSHA", 1);
}
/* setup_rw's settings, for a test to change before setup_with. */
static void rw_settings(redlock_config *cfg, redlock_lock_opts *o, int nodes, redlock_access access, int watchdog) {
    base_config(cfg, nodes);
    base_opts(o, 1000, watchdog);
    o->access = access;
}

/* L made again on client C with options of the test's own: key "res",
   ttl 1000 ms, retry_count (0: the client's), on_result. */
static void reinit_L(int retry_count, void (*on_result)(redlock_lock *, const redlock_result *)) {
    redlock_lock_opts o;
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.retry_count = retry_count;
    o.on_result = on_result;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
}
/* After a callback freed L: the client sends nothing more within later_us. */
static void nothing_more_sent(int64_t later_us) {
    int sent = T.qn;
    advance_to(T.now + later_us);
    CHECK_EQ(T.qn, sent);
}
/* Ends client C of a test whose L was freed: its bytes zeroed first, as a
   program that reused the memory would leave it. */
static void end_with_L_freed(void) {
    memset(&L, 0, sizeof L);
    redlock_client_deinit(&C);
}

/* A lock whose client is gone, or never was, reads as idle: no validity,
   no loss, nothing pending, no token. */
static void reads_detached(redlock_lock *lk) {
    CHECK_EQ(redlock_lock_state(lk), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_valid_until(lk), 0);
    CHECK_EQ(redlock_lock_lost_reason(lk), 0);
    CHECK_EQ(redlock_lock_pending(lk), 0);
    CHECK_STR(redlock_lock_token(lk), "");
}

/* ---- transports and scenarios several behaviours share ---- */

static int sync_ok(int node, const char *cmd, redlock_reply *r) {
    (void)node;
    if (strncmp(cmd, "SET", 3) == 0) { r->type = REDLOCK_REPLY_STATUS; r->str = "OK"; r->len = 2; }
    else { r->type = REDLOCK_REPLY_INTEGER; r->integer = 1; }
    return 1;
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

/* Makes node 0 a node without scripts: an extend to the lock's ttl is answered NOPERM, then GET / PEXPIRE. */
static void make_noscript(void) {
    char tok[REDLOCK_TOKEN_LEN + 1];
    strcpy(tok, redlock_lock_token(&L));
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    expect_sent(0, "GET res");
    str_to(0, "GET", tok);
    expect_starts(0, "PEXPIRE res ");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
}
/* setup_held on one node, then the node made one without scripts. */
static void setup_noscript_held(int64_t ttl) {
    setup_held(1, ttl);
    make_noscript();
}
/* L adopts ADOPTED and releases it from a legacy node whose GET shows
   the token expiring expires_in_ms from now on the wall clock. */
static void release_adopted_legacy(int64_t expires_in_ms) {
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    str_to(0, "GET", legacy_value(T.wall + expires_in_ms, ADOPTED));
}
/* An acquire with cfg and o whose SETs fail on node a (status sa) and
   node b (sb): errors of the network or the server, not of the
   configuration: no result yet, a retry. */
static void failures_retried(const redlock_config *cfg, const redlock_lock_opts *o, int a, int sa, int b, int sb) {
    setup_with(cfg, o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(a, "SET", sa);
    fail_to(b, "SET", sb);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    teardown();
}
/* A legacy node (setup_legacy with retry_count and ttl) on which a
   release of the adopted token leaves a value with kept_ms left alone
   (only its GET sent) and deletes one with a millisecond more. */
static void adopted_legacy_tips(int retry_count, int64_t ttl, int64_t kept_ms) {
    setup_legacy(1, retry_count, ttl);
    release_adopted_legacy(kept_ms);
    CHECK_EQ(T.qn, 1);
    release_adopted_legacy(kept_ms + 1);
    expect_sent(0, "DEL res");
    teardown();
}
/* Releases L at `at`: the GET is answered with our value; returns 1 if DEL followed, 0 if the key was left (KEY_LEFT checked). */
static int release_at(int64_t at, int legacy) {
    int k = T.qn, left0 = count_ev(REDLOCK_EV_KEY_LEFT), del;
    const redlock_event *ev;
    T.now = at;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_STR(T.q[k].cmd, "GET res");
    if (legacy) str_to(0, "GET", legacy_value(T.wall + 1, redlock_lock_token(&L)));
    else rep(k, REDLOCK_REPLY_STRING, 0, redlock_lock_token(&L));
    del = T.qn == k + 2 && starts(k + 1, "DEL res");
    if (del) {
        CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), left0);
        num_to(0, "DEL", 1);
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

/* ---- the runner: a test that hangs is reported, not waited for ---- */

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
