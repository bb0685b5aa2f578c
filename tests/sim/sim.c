/* sim.c - deterministic simulation of redlock.h against simulated Redis nodes.

   Virtual time, a seeded scheduler, and faults: message delay and loss,
   connection resets, node crashes and restarts (with and without
   persistence, with and without a restart delay), client pauses and client
   clock drift. The checker asserts:
     - mutual exclusion: no two clients inside their validity windows at the
       same virtual instant;
     - a holder is told: a lock still HELD at or after its validity end when
       the client's timer fires (or the timer armed past validity) is a
       violation.
   Usage: sim [--runs N] [--seed S] [--profile NAME] [--expect-violations] [-v]
   Every failure prints the seed and a one-line replay command. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLIENTS 6
#define MAX_NODES 5
#define KEY "sim-lock"
#define SHA_RELEASE "b998f9dfb154cdbea8cda65ad5177aadf0e945a2"
#define SHA_EXTEND "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394"

/* ---- deterministic random ---- */
typedef struct { uint64_t s; } rng_t;
static uint64_t rng_next(rng_t *r) {  /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t rng_range(rng_t *r, int64_t lo, int64_t hi) { /* inclusive */
    return hi <= lo ? lo : lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
static int rng_chance(rng_t *r, double p) { return (double)(rng_next(r) >> 11) / 9007199254740992.0 < p; }

/* ---- profiles ---- */
typedef struct profile {
    const char *name;
    int legacy;            /* nodes are old servers: no SET NX PX, no scripting */
    int noscript;          /* nodes refuse scripting (ACL) */
    int crashes;           /* node crashes happen */
    int persist;           /* crashed nodes keep their data (AOF fsync always) */
    int restart_delay;     /* crashed nodes stay down for the max TTL */
    double drift_bound;    /* client clock rate error bound */
    double drift_factor;   /* given to the core */
    int pauses;            /* client pauses */
    int faults;            /* delay spikes, drops, resets */
} profile;

static const profile profiles[] = {
    {"modern", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1},
    {"legacy", 1, 0, 1, -1, 1, 0.005, 0.01, 1, 1},
    {"noscript", 0, 1, 1, -1, 1, 0.005, 0.01, 1, 1},
    /* negative controls: configurations the algorithm does not protect */
    {"ctl-restart", 0, 0, 2, 0, 0, 0.0, 0.01, 0, 0},
    {"ctl-drift", 0, 0, 0, 0, 0, 0.25, 0.01, 0, 0},
};

/* ---- simulated world ---- */
typedef struct entry { int used; char val[96]; size_t vlen; int64_t expire_at; } entry;

typedef struct node {
    int up;
    int64_t up_at;           /* restart time while down */
    entry e;                 /* the one key the clients contend for */
    int sha_release, sha_extend; /* script cache */
    uint32_t epoch;          /* bumps on crash: connections are gone */
} node;

typedef struct client {
    redlock_client rc;
    redlock_lock lk;
    double rate;             /* clock rate error */
    int64_t offset;
    int64_t wall_offset_ms;
    int64_t paused_until;
    uint32_t timer_gen;
    int want_release_at_set; /* holding strategy decided at acquire */
    int64_t release_at;      /* true time to release, or -1 = hold until lost */
    int open;                /* checker: inside a hold interval */
    int64_t open_start, open_bound;
    uint32_t conn_epoch[MAX_NODES];
    int64_t last_req[MAX_NODES], last_rep[MAX_NODES]; /* FIFO per connection */
    int id;
} client;

enum { E_REQ, E_REP, E_ERR, E_TIMER, E_ACT, E_CRASH, E_RESTART, E_PAUSE };

typedef struct msg {
    int argc;
    char *argv[REDLOCK_MAX_ARGS];
    size_t argvlen[REDLOCK_MAX_ARGS];
    redlock_reply reply;
    char *rstr;
} msg;

typedef struct event {
    int64_t t;
    uint64_t seq;
    int kind, c, n;
    uint32_t epoch, gen;
    redlock_tag tag;
    int status;
    msg *m;
} event;

typedef struct interval { int64_t s, e; int c; } interval;

typedef struct world {
    const profile *p;
    uint64_t seed;
    rng_t rng;
    int64_t now, end;
    int nn, nc;
    int64_t ttl_ms, node_timeout_ms;
    int watchdog;
    node nodes[MAX_NODES];
    client clients[MAX_CLIENTS];
    event *heap;
    size_t hn, hcap;
    uint64_t seq;
    interval *iv;
    size_t ivn, ivcap;
    long events, acquired, lost, violations, extends;
    double drop, reset, spike;
    int verbose;
    char why[256];
} world;

static world *W; /* callbacks reach the world through the client's user pointer; this is for asserts */

static void violation(world *w, const char *what, int c) {
    if (!w->violations)
        snprintf(w->why, sizeof w->why, "%s (client %d at t=%lld us)", what, c, (long long)w->now);
    w->violations++;
}

/* ---- event heap ---- */
static int ev_less(const event *a, const event *b) { return a->t != b->t ? a->t < b->t : a->seq < b->seq; }
static void push(world *w, event e) {
    size_t i;
    if (w->hn == w->hcap) {
        w->hcap = w->hcap ? w->hcap * 2 : 256;
        w->heap = (event *)realloc(w->heap, w->hcap * sizeof(event));
        if (!w->heap) { perror("realloc"); exit(2); }
    }
    e.seq = w->seq++;
    i = w->hn++;
    while (i > 0 && ev_less(&e, &w->heap[(i - 1) / 2])) { w->heap[i] = w->heap[(i - 1) / 2]; i = (i - 1) / 2; }
    w->heap[i] = e;
}
static event pop(world *w) {
    event top = w->heap[0], last = w->heap[--w->hn];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *best = &last;
        if (l < w->hn && ev_less(&w->heap[l], best)) { m = l; best = &w->heap[l]; }
        if (r < w->hn && ev_less(&w->heap[r], best)) { m = r; }
        if (m == i) break;
        w->heap[i] = w->heap[m];
        i = m;
    }
    if (w->hn) w->heap[i] = last;
    return top;
}
static void free_msg(msg *m) {
    int i;
    if (!m) return;
    for (i = 0; i < m->argc; i++) free(m->argv[i]);
    free(m->rstr);
    free(m);
}

/* ---- clocks ---- */
static int64_t local_of(const client *c, int64_t t) { return c->offset + (int64_t)((double)t * (1.0 + c->rate)); }
static int64_t true_of(const client *c, int64_t local) {
    int64_t t = (int64_t)((double)(local - c->offset) / (1.0 + c->rate));
    if (t < 0) t = 0;
    while (local_of(c, t) < local) t++;
    while (t > 0 && local_of(c, t - 1) >= local) t--;
    return t;
}
static int64_t cb_now(void *u) { client *c = (client *)u; return local_of(c, W->now); }
static int64_t cb_wall(void *u) {
    client *c = (client *)u;
    /* wall clocks are kept in sync (NTP): offset, no accumulating rate */
    return 1700000000000LL + W->now / 1000 + c->wall_offset_ms;
}
static int cb_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    while (len--) *p++ = (unsigned char)rng_next(&W->rng);
    return 0;
}
static void cb_timer(void *u, int64_t deadline) {
    client *c = (client *)u;
    event e;
    c->timer_gen++;
    if (deadline == REDLOCK_NO_DEADLINE) return;
    if (redlock_lock_state(&c->lk) == REDLOCK_STATE_HELD && deadline > redlock_lock_valid_until(&c->lk))
        violation(W, "timer armed past validity", c->id);
    memset(&e, 0, sizeof e);
    e.kind = E_TIMER;
    e.c = c->id;
    e.gen = c->timer_gen;
    e.t = true_of(c, deadline);
    if (e.t < W->now) e.t = W->now;
    push(W, e);
}

static int64_t net_delay(world *w) {
    int64_t d = rng_range(&w->rng, 30, 800);
    if (w->p->faults && rng_chance(&w->rng, w->spike)) d += rng_range(&w->rng, 1000, w->node_timeout_ms * 1500);
    return d;
}

static int cb_send(void *u, int n, const redlock_command *cmd, redlock_tag tag) {
    client *c = (client *)u;
    world *w = W;
    event e;
    msg *m;
    int i;
    memset(&e, 0, sizeof e);
    e.c = c->id;
    e.n = n;
    e.tag = tag;
    if (!w->nodes[n].up) {  /* connection refused */
        e.kind = E_ERR;
        e.status = REDLOCK_ERR_CONNECT;
        e.t = w->now + rng_range(&w->rng, 10, 200);
        e.epoch = c->conn_epoch[n];
        push(w, e);
        return 0;
    }
    if (w->p->faults && rng_chance(&w->rng, w->reset)) {
        /* connection reset: everything in flight on it fails now */
        c->conn_epoch[n]++;
        return REDLOCK_ERR_TRANSPORT;
    }
    if (w->p->faults && rng_chance(&w->rng, w->drop)) return 0; /* lost: the core times out */
    m = (msg *)calloc(1, sizeof *m);
    m->argc = cmd->argc;
    for (i = 0; i < cmd->argc; i++) {
        m->argv[i] = (char *)malloc(cmd->argvlen[i] + 1);
        memcpy(m->argv[i], cmd->argv[i], cmd->argvlen[i]);
        m->argv[i][cmd->argvlen[i]] = 0;
        m->argvlen[i] = cmd->argvlen[i];
    }
    e.kind = E_REQ;
    e.m = m;
    e.epoch = c->conn_epoch[n];
    e.t = w->now + net_delay(w);
    if (e.t <= c->last_req[n]) e.t = c->last_req[n] + 1;
    c->last_req[n] = e.t;
    push(w, e);
    return 0;
}

/* ---- simulated redis ---- */
static int entry_live(world *w, node *nd) {
    if (nd->e.used && nd->e.expire_at >= 0 && w->now >= nd->e.expire_at) nd->e.used = 0;
    return nd->e.used;
}
static void reply_status(msg *m, const char *s) {
    m->reply.type = REDLOCK_REPLY_STATUS; m->rstr = strdup(s); m->reply.len = strlen(s);
}
static void reply_error(msg *m, const char *s) {
    m->reply.type = REDLOCK_REPLY_ERROR; m->rstr = strdup(s); m->reply.len = strlen(s);
}
static void reply_int(msg *m, long long v) { m->reply.type = REDLOCK_REPLY_INTEGER; m->reply.integer = v; }
static void reply_str(msg *m, const char *s, size_t len) {
    m->reply.type = REDLOCK_REPLY_STRING;
    m->rstr = (char *)malloc(len + 1);
    memcpy(m->rstr, s, len);
    m->rstr[len] = 0;
    m->reply.len = len;
}
static void set_val(node *nd, const char *v, size_t len, int64_t expire_at) {
    if (len > sizeof nd->e.val) len = sizeof nd->e.val;
    memcpy(nd->e.val, v, len);
    nd->e.vlen = len;
    nd->e.used = 1;
    nd->e.expire_at = expire_at;
}
static int is(const msg *m, int i, const char *s) { return i < m->argc && strcmp(m->argv[i], s) == 0; }

static void run_script(world *w, node *nd, msg *m, int which) {
    /* argv: EVAL(SHA) x 1 key token [ttl] */
    int live = entry_live(w, nd);
    int ours = live && nd->e.vlen == m->argvlen[4] && memcmp(nd->e.val, m->argv[4], nd->e.vlen) == 0;
    if (which == 0) {
        if (ours) { nd->e.used = 0; reply_int(m, 1); } else reply_int(m, 0);
    } else {
        if (ours) { nd->e.expire_at = w->now + atoll(m->argv[5]) * 1000; reply_int(m, 1); }
        else reply_int(m, live ? -1 : 0);
    }
}

static void execute(world *w, node *nd, msg *m) {
    if (is(m, 0, "SET")) {
        if (m->argc != 6 || !is(m, 3, "NX") || !is(m, 4, "PX")) { reply_error(m, "ERR unexpected SET form"); return; }
        if (w->p->legacy) { reply_error(m, "ERR syntax error"); return; }
        if (entry_live(w, nd)) { m->reply.type = REDLOCK_REPLY_NIL; return; }
        set_val(nd, m->argv[2], m->argvlen[2], w->now + atoll(m->argv[5]) * 1000);
        reply_status(m, "OK");
    } else if (is(m, 0, "SETNX")) {
        if (entry_live(w, nd)) { reply_int(m, 0); return; }
        set_val(nd, m->argv[2], m->argvlen[2], -1);
        reply_int(m, 1);
    } else if (is(m, 0, "GET")) {
        if (entry_live(w, nd)) reply_str(m, nd->e.val, nd->e.vlen);
        else m->reply.type = REDLOCK_REPLY_NIL;
    } else if (is(m, 0, "GETSET")) {
        if (entry_live(w, nd)) reply_str(m, nd->e.val, nd->e.vlen);
        else m->reply.type = REDLOCK_REPLY_NIL;
        set_val(nd, m->argv[2], m->argvlen[2], -1);
    } else if (is(m, 0, "DEL")) {
        if (entry_live(w, nd)) { nd->e.used = 0; reply_int(m, 1); } else reply_int(m, 0);
    } else if (is(m, 0, "PEXPIRE")) {
        if (entry_live(w, nd)) { nd->e.expire_at = w->now + atoll(m->argv[2]) * 1000; reply_int(m, 1); }
        else reply_int(m, 0);
    } else if (is(m, 0, "EVALSHA") || is(m, 0, "EVAL")) {
        int sha = is(m, 0, "EVALSHA"), which;
        if (w->p->legacy) { reply_error(m, sha ? "ERR unknown command 'EVALSHA'" : "ERR unknown command 'EVAL'"); return; }
        if (w->p->noscript) { reply_error(m, "NOPERM this user has no permissions to run the 'evalsha' command"); return; }
        if (sha) {
            which = is(m, 1, SHA_RELEASE) ? 0 : is(m, 1, SHA_EXTEND) ? 1 : -1;
            if (which < 0 || !(which ? nd->sha_extend : nd->sha_release)) { reply_error(m, "NOSCRIPT No matching script."); return; }
        } else {
            which = is(m, 1, redlock_release_script()) ? 0 : is(m, 1, redlock_extend_script()) ? 1 : -1;
            if (which < 0) { reply_error(m, "ERR unknown script"); return; }
            if (which) nd->sha_extend = 1; else nd->sha_release = 1;
        }
        run_script(w, nd, m, which);
    } else {
        reply_error(m, "ERR unknown command");
    }
}

/* ---- the checker ---- */
static void close_interval(world *w, client *c, int64_t end) {
    if (!c->open) return;
    c->open = 0;
    if (end > c->open_start) {
        if (w->ivn == w->ivcap) {
            w->ivcap = w->ivcap ? w->ivcap * 2 : 64;
            w->iv = (interval *)realloc(w->iv, w->ivcap * sizeof(interval));
            if (!w->iv) { perror("realloc"); exit(2); }
        }
        w->iv[w->ivn].s = c->open_start;
        w->iv[w->ivn].e = end;
        w->iv[w->ivn].c = c->id;
        w->ivn++;
    }
}

/* After every event a client processes: track the window in which it
   believes it holds the lock, in true time. */
static void observe(world *w, client *c) {
    if (redlock_lock_state(&c->lk) == REDLOCK_STATE_HELD) {
        int64_t bound = true_of(c, redlock_lock_valid_until(&c->lk));
        if (c->open && w->now > c->open_bound) close_interval(w, c, c->open_bound);
        if (!c->open) { c->open = 1; c->open_start = w->now; }
        c->open_bound = bound;
    } else if (c->open) {
        close_interval(w, c, w->now < c->open_bound ? w->now : c->open_bound);
    }
}

static int iv_cmp(const void *a, const void *b) {
    const interval *x = (const interval *)a, *y = (const interval *)b;
    return x->s < y->s ? -1 : x->s > y->s;
}

static void check_exclusion(world *w) {
    size_t i, j;
    qsort(w->iv, w->ivn, sizeof(interval), iv_cmp);
    for (i = 0; i < w->ivn; i++)
        for (j = i + 1; j < w->ivn && w->iv[j].s < w->iv[i].e; j++)
            if (w->iv[j].c != w->iv[i].c) {
                if (!w->violations)
                    snprintf(w->why, sizeof w->why,
                             "mutual exclusion: client %d [%lld,%lld) overlaps client %d [%lld,%lld)",
                             w->iv[i].c, (long long)w->iv[i].s, (long long)w->iv[i].e, w->iv[j].c,
                             (long long)w->iv[j].s, (long long)w->iv[j].e);
                w->violations++;
            }
}

/* ---- client behaviour ---- */
static void schedule_act(world *w, client *c, int64_t at) {
    event e;
    memset(&e, 0, sizeof e);
    e.kind = E_ACT;
    e.c = c->id;
    e.t = at;
    push(w, e);
}

static void on_result(redlock_lock *lk, const redlock_result *r) {
    client *c = (client *)r->user;
    world *w = W;
    int64_t ttl = w->ttl_ms * 1000;
    if (w->verbose)
        printf("%10lld c%d result op %d status %s votes %d valid_until(true) %lld\n", (long long)w->now, c->id, r->op,
               redlock_strerror(r->status), r->votes, (long long)true_of(c, redlock_lock_valid_until(lk)));
    if (r->op == REDLOCK_OP_ACQUIRE) {
        if (r->status == REDLOCK_OK) {
            int64_t roll = rng_range(&w->rng, 0, 99);
            w->acquired++;
            if (roll < 50) c->release_at = w->now + rng_range(&w->rng, 0, ttl / 2);
            else if (roll < 80) c->release_at = w->now + rng_range(&w->rng, ttl / 2, 4 * ttl);
            else c->release_at = -1;
            if (c->release_at >= 0) schedule_act(w, c, c->release_at);
        } else {
            schedule_act(w, c, w->now + rng_range(&w->rng, 0, ttl));
        }
    } else if (r->op == REDLOCK_OP_LOST) {
        w->lost++;
        c->release_at = -1;
        schedule_act(w, c, w->now + rng_range(&w->rng, 0, ttl));
    } else if (r->op == REDLOCK_OP_RELEASE) {
        schedule_act(w, c, w->now + rng_range(&w->rng, 0, ttl));
    } else if (r->op == REDLOCK_OP_EXTEND) {
        w->extends += r->status == REDLOCK_OK;
    }
}

static void act(world *w, client *c) {
    redlock_state s = redlock_lock_state(&c->lk);
    if (s == REDLOCK_STATE_IDLE || s == REDLOCK_STATE_LOST) {
        int rc = redlock_acquire(&c->lk);
        if (rc != REDLOCK_OK) violation(w, "acquire refused", c->id);
        /* sometimes give up while acquiring: release() cancels */
        if (rng_chance(&w->rng, 0.05)) schedule_act(w, c, w->now + rng_range(&w->rng, 0, 3000 * w->node_timeout_ms));
    } else if (s == REDLOCK_STATE_ACQUIRING) {
        if (redlock_release(&c->lk) != REDLOCK_OK) violation(w, "cancel refused", c->id);
    } else if (s == REDLOCK_STATE_HELD && c->release_at >= 0 && w->now >= c->release_at) {
        /* without the watchdog, sometimes extend by hand and hold on */
        if (!w->watchdog && rng_chance(&w->rng, 0.3) && redlock_extend(&c->lk, 0) == REDLOCK_OK) {
            c->release_at = w->now + rng_range(&w->rng, 0, w->ttl_ms * 1000);
            schedule_act(w, c, c->release_at);
            return;
        }
        c->release_at = -1;
        if (redlock_release(&c->lk) != REDLOCK_OK) violation(w, "release refused", c->id);
    }
}

/* ---- one schedule ---- */
static void setup(world *w, const profile *p, uint64_t seed) {
    static const int node_counts[] = {1, 3, 5};
    int i;
    memset(w, 0, sizeof *w);
    w->p = p;
    w->seed = seed;
    w->rng.s = seed * 0x2545F4914F6CDD1Dull + 1;
    w->nn = p->crashes == 2 ? 3 : node_counts[rng_range(&w->rng, 0, 2)];
    w->nc = (int)rng_range(&w->rng, 2, p->crashes == 2 ? 3 : 4);
    w->ttl_ms = rng_range(&w->rng, 30, 120);
    w->node_timeout_ms = rng_range(&w->rng, 3, 8);
    w->watchdog = p->crashes == 2 ? 1 : rng_chance(&w->rng, 0.6);
    w->end = w->ttl_ms * 1000 * (p->crashes == 2 ? 40 : 12);
    w->drop = rng_chance(&w->rng, 0.5) ? 0.0 : 0.02;
    w->reset = rng_chance(&w->rng, 0.5) ? 0.0 : 0.01;
    w->spike = rng_chance(&w->rng, 0.5) ? 0.0 : 0.03;
    for (i = 0; i < w->nn; i++) w->nodes[i].up = 1;
}

static void start_clients(world *w) {
    int i, j;
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        redlock_config cfg;
        redlock_callbacks cb;
        redlock_lock_opts o;
        c->id = i;
        c->rate = w->p->drift_bound == 0.0 ? 0.0
                  : (double)rng_range(&w->rng, -1000, 1000) / 1000.0 * w->p->drift_bound;
        if (w->p->crashes == 0 && w->p->drift_bound > 0.1) c->rate = i == 0 ? -w->p->drift_bound : 0.0;
        c->offset = rng_range(&w->rng, 0, 1000000000LL);
        c->wall_offset_ms = w->p->legacy ? rng_range(&w->rng, 0, 1) : 0;
        c->paused_until = -1;
        for (j = 0; j < MAX_NODES; j++) { c->last_req[j] = c->last_rep[j] = 0; }
        redlock_config_init(&cfg);
        cfg.node_count = w->nn;
        cfg.node_timeout_ms = w->node_timeout_ms;
        cfg.drift_factor = w->p->drift_factor;
        cfg.retry_count = (int)rng_range(&w->rng, 1, 4);
        cfg.retry_delay_ms = rng_range(&w->rng, 2, 20);
        cfg.retry_jitter_ms = rng_range(&w->rng, 1, 5);
        memset(&cb, 0, sizeof cb);
        cb.send = cb_send;
        cb.set_timer = cb_timer;
        cb.now_us = cb_now;
        cb.wall_ms = cb_wall;
        cb.random = cb_random;
        if (redlock_client_init(&c->rc, &cfg, &cb, c) != REDLOCK_OK) { fprintf(stderr, "client init failed\n"); exit(2); }
        memset(&o, 0, sizeof o);
        o.key = KEY;
        o.ttl_ms = w->ttl_ms;
        o.watchdog = w->watchdog;
        o.max_extensions = rng_chance(&w->rng, 0.2) ? (int)rng_range(&w->rng, 1, 6) : 0;
        o.on_result = on_result;
        o.user = c;
        if (redlock_lock_init(&c->lk, &c->rc, &o) != REDLOCK_OK) { fprintf(stderr, "lock init failed\n"); exit(2); }
        schedule_act(w, c, rng_range(&w->rng, 0, w->ttl_ms * 1000));
    }
}

static void plan_faults(world *w) {
    const profile *p = w->p;
    int64_t ttl = w->ttl_ms * 1000;
    event e;
    int k, count;
    if (p->crashes) {
        count = p->crashes == 2 ? 8 : (int)rng_range(&w->rng, 0, 2);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_CRASH;
            e.n = (int)rng_range(&w->rng, 0, w->nn - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            push(w, e);
        }
    }
    if (p->pauses) {
        count = (int)rng_range(&w->rng, 0, 2);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_PAUSE;
            e.c = (int)rng_range(&w->rng, 0, w->nc - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            e.status = (int)rng_range(&w->rng, ttl / 10, 2 * ttl);  /* duration */
            push(w, e);
        }
    }
}

static void crash(world *w, int n, int persist, int64_t down_for) {
    node *nd = &w->nodes[n];
    int i;
    if (!nd->up) return;
    nd->up = 0;
    nd->epoch++;
    if (!persist) nd->e.used = 0;
    nd->sha_release = nd->sha_extend = 0;
    /* every client's connection to this node breaks */
    for (i = 0; i < w->nc; i++) w->clients[i].conn_epoch[n]++;
    {
        event e;
        memset(&e, 0, sizeof e);
        e.kind = E_RESTART;
        e.n = n;
        e.t = w->now + down_for;
        push(w, e);
    }
}

/* In-flight requests on a broken connection: the client sees an error. */
static void fail_inflight(world *w, event *e) {
    event err = *e;
    err.kind = E_ERR;
    err.status = REDLOCK_ERR_TRANSPORT;
    err.m = NULL;
    err.epoch = w->clients[e->c].conn_epoch[e->n];
    err.t = w->now;
    push(w, err);
}

static int deliver_to_client(world *w, event *e) {
    client *c = &w->clients[e->c];
    if (c->paused_until > w->now) { /* process stopped: handle it when it resumes */
        e->t = c->paused_until;
        push(w, *e);
        return 0;
    }
    return 1;
}

static void step(world *w, event e) {
    client *c = &w->clients[e.c];
    node *nd = &w->nodes[e.n];
    w->events++;
    switch (e.kind) {
    case E_REQ:
        if (e.epoch != c->conn_epoch[e.n] || !nd->up) {  /* connection died on the way */
            if (e.epoch == c->conn_epoch[e.n]) fail_inflight(w, &e);
            free_msg(e.m);
            return;
        }
        execute(w, nd, e.m);
        if (w->verbose) {
            int a;
            printf("%10lld n%d <- c%d:", (long long)w->now, e.n, e.c);
            for (a = 0; a < e.m->argc; a++) printf(" %.40s", e.m->argv[a]);
            printf("  => type %d int %lld str %s\n", e.m->reply.type, e.m->reply.integer, e.m->rstr ? e.m->rstr : "");
        }
        e.kind = E_REP;
        e.t = w->now + net_delay(w);
        if (e.t <= c->last_rep[e.n]) e.t = c->last_rep[e.n] + 1;
        c->last_rep[e.n] = e.t;
        if (w->p->faults && rng_chance(&w->rng, w->drop)) { free_msg(e.m); return; }
        push(w, e);
        return;
    case E_REP:
        if (!deliver_to_client(w, &e)) return;
        if (e.epoch == c->conn_epoch[e.n]) {
            e.m->reply.str = e.m->rstr;
            redlock_on_reply(&c->rc, e.tag, &e.m->reply);
            observe(w, c);
        }
        free_msg(e.m);
        return;
    case E_ERR:
        if (!deliver_to_client(w, &e)) return;
        redlock_on_error(&c->rc, e.tag, e.status);
        observe(w, c);
        return;
    case E_TIMER:
        if (!deliver_to_client(w, &e)) return;
        if (e.gen != c->timer_gen) return;
        redlock_on_timer(&c->rc);
        observe(w, c);
        if (redlock_lock_state(&c->lk) == REDLOCK_STATE_HELD &&
            cb_now(c) >= redlock_lock_valid_until(&c->lk))
            violation(w, "holder not told: lock past validity still HELD after its timer", c->id);
        return;
    case E_ACT:
        if (!deliver_to_client(w, &e)) return;
        act(w, c);
        observe(w, c);
        return;
    case E_CRASH: {
        int64_t ttl = w->ttl_ms * 1000;
        int persist = w->p->persist < 0 ? rng_chance(&w->rng, 0.5) : w->p->persist;
        int64_t down = w->p->restart_delay && !persist ? ttl + rng_range(&w->rng, 1000, ttl)
                                                       : rng_range(&w->rng, 100, ttl / 4);
        crash(w, e.n, persist, down);
        return;
    }
    case E_RESTART:
        nd->up = 1;
        return;
    case E_PAUSE:
        if (c->paused_until < w->now + e.status) c->paused_until = w->now + e.status;
        return;
    }
}

static int trace;
static int run_one(world *w, const profile *p, uint64_t seed) {
    int i;
    W = w;
    setup(w, p, seed);
    w->verbose = trace;
    start_clients(w);
    plan_faults(w);
    while (w->hn && w->heap[0].t <= w->end && !w->violations) {
        event e = pop(w);
        w->now = e.t;
        step(w, e);
    }
    w->now = w->end;
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        if (c->paused_until <= w->now && redlock_lock_state(&c->lk) == REDLOCK_STATE_HELD &&
            cb_now(c) > redlock_lock_valid_until(&c->lk))
            violation(w, "holder not told at end of run", i);
        observe(w, c);
        close_interval(w, c, w->now < c->open_bound ? w->now : c->open_bound);
    }
    check_exclusion(w);
    while (w->hn) { event e = pop(w); free_msg(e.m); }
    for (i = 0; i < w->nc; i++) {
        redlock_lock_deinit(&w->clients[i].lk);
        redlock_client_deinit(&w->clients[i].rc);
    }
    free(w->heap);
    free(w->iv);
    return w->violations ? 1 : 0;
}

static const profile *find_profile(const char *name) {
    size_t i;
    for (i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(profiles[i].name, name) == 0) return &profiles[i];
    return NULL;
}

int main(int argc, char **argv) {
    long runs = 1000, k, failing = 0, events = 0, acquired = 0, lost = 0, extends = 0, by_n[MAX_NODES + 1] = {0};
    uint64_t seed = 1;
    const char *pname = "modern";
    const profile *p;
    int expect = 0, verbose = 0, i;
    static world w;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc) pname = argv[++i];
        else if (!strcmp(argv[i], "--expect-violations")) expect = 1;
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--trace")) trace = 1;
        else { fprintf(stderr, "usage: sim [--runs N] [--seed S] [--profile NAME] [--expect-violations] [-v] [--trace]\n"); return 2; }
    }
    p = find_profile(pname);
    if (!p) { fprintf(stderr, "sim: unknown profile '%s'\n", pname); return 2; }
    for (k = 0; k < runs; k++) {
        uint64_t s = seed + (uint64_t)k;
        int bad = run_one(&w, p, s);
        events += w.events;
        by_n[w.nn]++;
        acquired += w.acquired;
        lost += w.lost;
        extends += w.extends;
        if (bad) {
            failing++;
            if (!expect || verbose)
                printf("# seed %llu: %s (N=%d clients=%d ttl=%lldms)\n#   replay: make sim PROFILE=%s SEED=%llu RUNS=1\n",
                       (unsigned long long)s, w.why, w.nn, w.nc, (long long)w.ttl_ms, p->name,
                       (unsigned long long)s);
            if (!expect && failing >= 5) break;
        }
    }
    printf("# profile %s: %ld schedules (N=1: %ld, N=3: %ld, N=5: %ld), %ld events, %ld acquisitions, "
           "%ld manual extends, %ld lost reported, %ld schedules with violations\n",
           p->name, k < runs ? k + 1 : runs, by_n[1], by_n[3], by_n[5], events, acquired, extends, lost, failing);
    if (expect) {
        printf("%s sim-control-%s finds violations (%ld of %ld schedules)\n", failing ? "ok" : "not ok", p->name, failing, runs);
        return failing ? 0 : 1;
    }
    printf("%s sim-%s %ld schedules without violation\n", failing ? "not ok" : "ok", p->name, runs);
    return failing ? 1 : 0;
}
