/* fuzz_core.c - a fuzz target for the core: the input is a program that
   drives redlock.h through a scripted transport, so that any sequence of
   calls, replies (well-formed, malformed, stale, duplicated, synchronous
   inside send), node errors and clock steps can be tried.

   Bytes, read in order (input exhausted: the program ends):
     header  node count (1..7), node timeout, retries, drift, locks (1..3)
     then    one operation per byte, its arguments from the bytes after it:
       acquire / release / extend (ttl) / adopt (token seen, validity) on lock i
       reply to an outstanding request: +OK, :0, :1, nil, the token or a
         legacy "expiry:token" value the core sent, INFO with a version,
         NOSCRIPT, NOPERM, unknown command, NOAUTH, WRONGTYPE, an integer, an
         array, random bytes as any type, or NULL
       a node error (any status, also positive or below -128)
       a stale reply (a tag already answered) or a made-up tag
       time passes (0 .. ~16 s) and the timer fires if due; a spurious timer;
       a node's eviction policy changes (redlock_node_set_evicts)
       deinit + init of lock i with new options (ttl, watchdog, renew, caps,
         retries, wait, reentrant, refuse_evicting)
     replies come in send order per node (the transport contract), any
     order across nodes;
     send() may fail, refuse (queue full) or answer at once, inside the call;
     on_result may call the API again (release, extend, acquire, deinit).
   Every public query is checked against the contract after each step
   (abort() on a breach, which libFuzzer and the replay driver report):
   states and statuses in range, remaining time within the lock's longest
   ttl, no result for a deinitialised lock.

   Built two ways: with clang -fsanitize=fuzzer (make fuzz) and, with
   tests/fuzz/replay.c, as a plain program that runs the corpus (make test). */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_LOCKS 3
#define FZ_PENDING 64
#define FZ_STEPS 3000

typedef struct fz_req {
    redlock_tag tag;
    int node;
    char cmd[16];
    char value[96]; /* SET's value, or the token argument of a script / GET */
    size_t value_len;
} fz_req;

typedef struct fz {
    const unsigned char *in;
    size_t len, at;
    int64_t now, timer;
    redlock_client client;
    redlock_lock lock[FZ_LOCKS];
    int inited[FZ_LOCKS];
    int64_t max_ttl_ms[FZ_LOCKS];
    int nlocks, nodes;
    fz_req q[FZ_PENDING];
    int nq;
    redlock_tag answered[8]; /* recent tags, for stale replies */
    int nanswered;
    char token_seen[REDLOCK_TOKEN_LEN + 1];
    int depth; /* API calls nested inside callbacks */
} fz;

static fz F;

static int byte(void) { return F.at < F.len ? F.in[F.at++] : -1; }
static int byte0(void) { int b = byte(); return b < 0 ? 0 : b; }

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_core: contract broken: %s (input byte %lu)\n", what, (unsigned long)F.at);
    abort();
}

static int lock_index(const redlock_lock *lk)
{
    int i;
    for (i = 0; i < FZ_LOCKS; i++)
        if (lk == &F.lock[i]) return i;
    return -1;
}

static void check_status(int st)
{
    if (st > 0 || st < -128) fail("status out of range");
}

static void check_lock(int i)
{
    redlock_state s;
    int64_t rem;
    if (!F.inited[i]) return;
    s = redlock_lock_state(&F.lock[i]);
    if ((int)s < REDLOCK_STATE_IDLE || (int)s > REDLOCK_STATE_LOST) fail("state out of range");
    rem = redlock_lock_remaining_us(&F.lock[i]);
    if (rem < 0 || rem > F.max_ttl_ms[i] * 1000) fail("remaining time beyond the longest ttl");
    if (rem > 0 && s != REDLOCK_STATE_HELD) fail("time remaining on a lock not held");
    if (strlen(redlock_lock_token(&F.lock[i])) != 0 && strlen(redlock_lock_token(&F.lock[i])) != REDLOCK_TOKEN_LEN)
        fail("token length");
    check_status(redlock_lock_lost_reason(&F.lock[i]));
    (void)redlock_lock_pending(&F.lock[i]);
    (void)redlock_lock_valid_until(&F.lock[i]);
}

static void api_on_lock(int op, int i);

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    int i = lock_index(lk);
    if (i < 0 || !F.inited[i]) fail("result for an unknown or deinitialised lock");
    check_status(r->status);
    if (r->validity_us < 0 || r->validity_us > F.max_ttl_ms[i] * 1000) {
        fprintf(stderr, "op %d status %d validity %lld us, longest ttl %lld ms\n", (int)r->op, r->status,
                (long long)r->validity_us, (long long)F.max_ttl_ms[i]);
        fail("result validity beyond the ttl");
    }
    if (r->status == REDLOCK_OK && r->op == REDLOCK_OP_ACQUIRE && redlock_lock_state(lk) != REDLOCK_STATE_HELD &&
        redlock_lock_state(lk) != REDLOCK_STATE_LOST)
        fail("acquired but not held");
    if (F.depth < 2) { /* the API again, from inside the callback */
        int b = byte0();
        if (b & 1) api_on_lock(b >> 1, (b >> 4) % F.nlocks);
    }
}

static void remember_answered(redlock_tag tag)
{
    F.answered[F.nanswered++ % 8] = tag;
}

static void deliver(int k);

/* Requests stay in send order: a node's replies come in that order. */
static void remove_req(int k)
{
    memmove(&F.q[k], &F.q[k + 1], (size_t)(F.nq - k - 1) * sizeof F.q[0]);
    F.nq--;
}

/* The oldest request still owed by a node the input picks, or -1. */
static int oldest_of_some_node(void)
{
    int node = byte0() % F.nodes, k, j;
    for (j = 0; j < F.nodes; j++, node = (node + 1) % F.nodes)
        for (k = 0; k < F.nq; k++)
            if (F.q[k].node == node) return k;
    return -1;
}

static int fz_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    fz_req *rq;
    int b = byte0();
    (void)user;
    if (node < 0 || node >= F.nodes) fail("send to a node that does not exist");
    if (cmd->argc < 1 || cmd->argc > REDLOCK_MAX_ARGS) fail("command argc");
    if (b % 16 == 0) return REDLOCK_ERR_TRANSPORT;
    if (b % 16 == 1) return REDLOCK_ERR_QUEUE_FULL;
    if (F.nq == FZ_PENDING) return REDLOCK_ERR_QUEUE_FULL;
    rq = &F.q[F.nq++];
    memset(rq, 0, sizeof *rq);
    rq->tag = tag;
    rq->node = node;
    snprintf(rq->cmd, sizeof rq->cmd, "%.*s", (int)(cmd->argvlen[0] < 15 ? cmd->argvlen[0] : 15), cmd->argv[0]);
    {   /* the value a reply may echo: SET/SETNX/GETSET's value, a script's token */
        int a = -1;
        if (!strcmp(rq->cmd, "SET") || !strcmp(rq->cmd, "SETNX") || !strcmp(rq->cmd, "GETSET")) a = 2;
        else if (!strncmp(rq->cmd, "EVAL", 4) && cmd->argc > 3) a = 3;
        if (a >= 0 && a < cmd->argc && cmd->argvlen[a] < sizeof rq->value) {
            memcpy(rq->value, cmd->argv[a], cmd->argvlen[a]);
            rq->value_len = cmd->argvlen[a];
            if (cmd->argvlen[a] == REDLOCK_TOKEN_LEN) memcpy(F.token_seen, cmd->argv[a], REDLOCK_TOKEN_LEN);
        }
    }
    if (b % 16 == 2 && F.depth < 2) deliver(F.nq - 1); /* a synchronous transport */
    return 0;
}

static void fz_timer(void *user, int64_t deadline) { (void)user; F.timer = deadline; }
static int64_t fz_now(void *user) { (void)user; return F.now; }
static int64_t fz_wall(void *user) { (void)user; return 1700000000000LL + F.now / 1000; }
static int fz_random(void *user, void *buf, size_t len)
{
    static unsigned long long x = 0x9E3779B97F4A7C15ULL;
    unsigned char *p = (unsigned char *)buf;
    size_t i;
    (void)user;
    for (i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)x;
    }
    return 0;
}

/* A reply for request q[k], chosen by the input. */
static void deliver(int k)
{
    static const char *const errors[] = { "NOSCRIPT No matching script", "NOPERM no permission",
                                          "ERR unknown command 'SET'", "ERR syntax error",
                                          "NOAUTH Authentication required.", "WRONGTYPE Operation",
                                          "ERR wrong number of arguments for 'set' command", "BUSY", "" };
    static const char *const infos[] = { "# Server\r\nredis_version:2.4.0\r\n", "# Server\r\nredis_version:7.2.4\r\n",
                                         "redis_version:2.6.11\r\n", "redis_version:\r\n", "no version here" };
    fz_req rq = F.q[k];
    redlock_reply r, el[3];
    char buf[160];
    int b = byte0(), n;
    remove_req(k);
    memset(&r, 0, sizeof r);
    memset(el, 0, sizeof el);
    switch (b % 16) {
    case 0: r.type = REDLOCK_REPLY_STATUS; r.str = "OK"; r.len = 2; break;
    case 1: r.type = REDLOCK_REPLY_INTEGER; r.integer = 1; break;
    case 2: r.type = REDLOCK_REPLY_INTEGER; r.integer = 0; break;
    case 3: r.type = REDLOCK_REPLY_NIL; break;
    case 4: r.type = REDLOCK_REPLY_STRING; r.str = rq.value; r.len = rq.value_len; break; /* echo */
    case 5: /* a legacy value: expiry:token, the expiry near now or far */
        n = snprintf(buf, sizeof buf, "%lld:%s", (long long)fz_wall(NULL) + (byte0() - 128) * 50, F.token_seen);
        r.type = REDLOCK_REPLY_STRING; r.str = buf; r.len = (size_t)n;
        break;
    case 6: r.type = REDLOCK_REPLY_STRING; r.str = infos[byte0() % 5]; r.len = strlen(r.str); break;
    case 7: r.type = REDLOCK_REPLY_ERROR; r.str = errors[byte0() % 9]; r.len = strlen(r.str); break;
    case 8: r.type = REDLOCK_REPLY_INTEGER; r.integer = (long long)(signed char)byte0() * 1000; break;
    case 9: /* an array of what a script might return */
        el[0].type = REDLOCK_REPLY_INTEGER; el[0].integer = byte0() % 3;
        el[1].type = REDLOCK_REPLY_STRING; el[1].str = rq.value; el[1].len = rq.value_len;
        el[2].type = REDLOCK_REPLY_NIL;
        r.type = REDLOCK_REPLY_ARRAY; r.element = el; r.elements = (size_t)(byte0() % 4);
        break;
    case 10: /* raw bytes from the input as any type */
        n = byte0() % 40;
        for (b = 0; b < n; b++) buf[b] = (char)byte0();
        r.type = (redlock_reply_type)(1 + byte0() % 7); r.str = buf; r.len = (size_t)n;
        r.integer = (long long)n - 20;
        break;
    case 11:
        F.depth++;
        redlock_on_reply(&F.client, rq.tag, NULL);
        F.depth--;
        remember_answered(rq.tag);
        return;
    case 12: r.type = REDLOCK_REPLY_STRING; r.str = "-1"; r.len = 2; break;
    case 13: r.type = REDLOCK_REPLY_INTEGER; r.integer = -2; break;
    default: r.type = REDLOCK_REPLY_STATUS; r.str = "QUEUED"; r.len = 6; break;
    }
    F.depth++;
    redlock_on_reply(&F.client, rq.tag, &r);
    F.depth--;
    remember_answered(rq.tag);
}

static void init_lock(int i)
{
    static const char *const keys[] = { "fz-a", "fz-b" };
    static const int64_t ttls[] = { 1, 30, 100, 1000, 10000, 1LL << 40 };
    redlock_lock_opts o;
    int b = byte0();
    memset(&o, 0, sizeof o);
    o.key = keys[b & 1];
    o.ttl_ms = ttls[(b >> 1) % 6];
    o.watchdog = (b >> 4) & 1;
    if (b & 0x20) o.renew_every_ms = 1 + byte0() % 50;
    if (b & 0x40) o.max_hold_ms = byte0() * 10;
    if (b & 0x80) o.max_extensions = byte0() % 4;
    b = byte0();
    o.retry_count = b % 4 - 1;
    o.wait_ms = (b >> 2) % 4 * 100;
    o.reentrant = (b >> 4) & 1;                       /* a reentrant lock, its owner given or the default */
    if (o.reentrant && (b & 0x20)) o.owner = "fz-owner";
    o.refuse_evicting = (b >> 6) - 1;                 /* count, default, refuse (twice) nodes that evict */
    o.on_result = on_result;
    if (redlock_lock_init(&F.lock[i], &F.client, &o) == REDLOCK_OK) {
        F.inited[i] = 1;
        F.max_ttl_ms[i] = o.ttl_ms;
    }
}

static void deinit_lock(int i)
{
    if (!F.inited[i]) return;
    redlock_lock_deinit(&F.lock[i]);
    F.inited[i] = 0;
}

/* One lock operation (also from inside on_result). */
static void api_on_lock(int op, int i)
{
    static const int64_t ext[] = { 0, 1, 20, 100, 5000, 1LL << 40, -1, (1LL << 40) + 1 };
    int rc = 0;
    F.depth++;
    if (!F.inited[i] && op % 8 != 5) op = 5;
    switch (op % 8) {
    case 0: rc = redlock_acquire(&F.lock[i]); break;
    case 1: rc = redlock_release(&F.lock[i]); break;
    case 2: {
        int64_t t = ext[byte0() % 8];
        int64_t was = F.max_ttl_ms[i];
        if (t > was && t <= (1LL << 40)) F.max_ttl_ms[i] = t; /* first: the result may come inside the call */
        rc = redlock_extend(&F.lock[i], t);
        if (rc != REDLOCK_OK) F.max_ttl_ms[i] = was;
        break;
    }
    case 3:
        if (F.token_seen[0]) {
            int64_t v = byte0() % 3 == 0 ? 0 : byte0() * 10;
            rc = redlock_lock_adopt(&F.lock[i], F.token_seen, v);
            if (rc == REDLOCK_OK && v > F.max_ttl_ms[i]) F.max_ttl_ms[i] = v; /* adopt reports nothing */
        }
        break;
    case 4: deinit_lock(i); break;
    case 5: deinit_lock(i); init_lock(i); break;
    default: (void)redlock_lock_state(&F.lock[i]); break;
    }
    F.depth--;
    check_status(rc);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    redlock_config cfg;
    redlock_callbacks cb;
    int i, steps;
    memset(&F, 0, sizeof F);
    F.in = data;
    F.len = size;
    F.now = 1000000;
    F.timer = REDLOCK_NO_DEADLINE;
    redlock_config_init(&cfg);
    F.nodes = cfg.node_count = 1 + byte0() % 7;
    cfg.node_timeout_ms = 1 + byte0() % 100;
    cfg.retry_count = byte0() % 5 - 1;
    cfg.retry_delay_ms = byte0() % 50;
    cfg.retry_jitter_ms = byte0() % 20 - 1;
    cfg.drift_factor = (byte0() % 4) * 0.05;
    for (i = 0; i < cfg.node_count; i++) cfg.mode[i] = (redlock_mode)(byte0() % 3);
    memset(&cb, 0, sizeof cb);
    cb.send = fz_send;
    cb.set_timer = fz_timer;
    cb.now_us = fz_now;
    cb.wall_ms = fz_wall;
    cb.random = fz_random;
    if (redlock_client_init(&F.client, &cfg, &cb, NULL) != REDLOCK_OK) return 0;
    F.nlocks = 1 + byte0() % FZ_LOCKS;
    for (i = 0; i < F.nlocks; i++) init_lock(i);
    for (steps = 0; steps < FZ_STEPS && F.at < F.len; steps++) {
        int b = byte0(), k;
        switch (b % 8) {
        case 0: case 1: api_on_lock(byte0(), b / 8 % F.nlocks); break;
        case 2: case 3:
            if ((k = oldest_of_some_node()) >= 0) deliver(k);
            break;
        case 4:
            if ((k = oldest_of_some_node()) >= 0) {
                static const int st[] = { REDLOCK_ERR_TRANSPORT, REDLOCK_ERR_NODE_TIMEOUT, REDLOCK_ERR_CONNECT,
                                          REDLOCK_ERR_AUTH, REDLOCK_ERR_SELECT, REDLOCK_ERR_PROTOCOL, REDLOCK_ERR_TLS,
                                          5, -1000, 0 };
                redlock_tag tag = F.q[k].tag;
                remove_req(k);
                F.depth++;
                redlock_on_error(&F.client, tag, st[byte0() % (sizeof st / sizeof st[0])]);
                F.depth--;
                remember_answered(tag);
            }
            break;
        case 5: { /* a stale or made-up tag */
            redlock_reply r;
            memset(&r, 0, sizeof r);
            r.type = REDLOCK_REPLY_STATUS;
            r.str = "OK";
            r.len = 2;
            F.depth++;
            redlock_on_reply(&F.client, F.nanswered && (b & 8) ? F.answered[byte0() % 8] : (redlock_tag)byte0() << 20,
                             &r);
            F.depth--;
            break;
        }
        case 6: /* time passes; the timer fires when due */
            F.now += ((int64_t)byte0() << 8 | byte0()) * (b & 8 ? 250 : 1);
            if (F.timer != REDLOCK_NO_DEADLINE && F.now >= F.timer) redlock_on_timer(&F.client);
            break;
        default:
            if (b & 0x10) /* a new connection's INFO says what a node may evict */
                check_status(redlock_node_set_evicts(&F.client, byte0() % F.nodes, (redlock_evicts)(byte0() % 3)));
            else
                redlock_on_timer(&F.client); /* early or spurious */
            break;
        }
        for (i = 0; i < F.nlocks; i++) check_lock(i);
        {   /* the core never needs a wake-up earlier than the one it asked for */
            int64_t need = redlock_next_deadline(&F.client);
            if (need != REDLOCK_NO_DEADLINE && (F.timer == REDLOCK_NO_DEADLINE || F.timer > need))
                fail("a deadline the timer will miss");
        }
    }
    for (i = 0; i < FZ_LOCKS; i++) deinit_lock(i);
    redlock_client_deinit(&F.client);
    return 0;
}
