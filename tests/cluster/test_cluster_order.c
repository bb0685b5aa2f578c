/* test_cluster_order.c - adapters/redlock_cluster.h's routing driven in
   random order: a seeded scripted transport follows the layer's decisions
   exactly as an adapter does (route; on a reply redlock_cluster_answer:
   send again on MOVED, ASKING + the command once on ASK; CLUSTER SLOTS
   when refresh_due, update()) against a model cluster in which slots
   move, migrate key by key (ASK, TRYAGAIN), the cluster goes down for a
   while, a master fails over to its replica, CLUSTER SLOTS answers are
   current or stale, and requests and replies of different masters
   overtake each other. Locks are held across all that: on even seeds the
   driver's own (SET NX, renewals, releases; two of them fenced: their
   acquire touches the key and its counter, so a migration answers
   TRYAGAIN), on odd seeds the real core's (redlock.h, the cluster as its
   one node: its commands go through send, its replies through
   redlock_on_reply, a failover the layer reports through
   redlock_node_failed_over).
   Three parts: the model (the cluster's truth and how a node answers),
   the transport (what an adapter does), the checker (what must hold,
   from the model's truth and the replies it gave, never from the layer's
   fields): a command is executed only where its slot is served (the
   importing master after ASKING) and where its keys are, at most once,
   after at most REDLOCK_CLUSTER_MAX_REDIRECTS redirections; a first send
   goes where the replies so far said (CLUSTER SLOTS, a followed MOVED; an
   ASK changes nothing); CLUSTER SLOTS at most once per
   REDLOCK_CLUSTER_REFRESH_MS; after a current map every lock's slot goes
   to its owner; a failover is told only after one and is told, a planned
   move never; a held lock's renewals find its key, and once the cluster
   is quiet they succeed and the release deletes the key at its owner.
   With the core: no RESTARTED and no lock lost unless a failover was
   told, and no grant counted within the restart bound after one.
   Usage: test_cluster_order [SCHEDULES [FIRST_SEED]]   (default 2000, 1)
          test_cluster_order --replay SEED             (one schedule, traced) */
#define REDLOCK_IMPLEMENTATION
#include "adapters/redlock_cluster.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MASTERS 5
#define NODES (2 * MAX_MASTERS) /* each master starts with one replica */
#define LOCKS 6
#define FENCED 2 /* locks 0 and 1: their acquire touches the key and its counter */
#define KEYS (2 * LOCKS) /* key 2l: lock l's key; 2l + 1: its fence counter */
#define CMDS 64
#define QCAP 64
#define STEPS 300
#define SNAPS 4
#define REFRESH_US ((int64_t)REDLOCK_CLUSTER_REFRESH_MS * 1000)

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int tracing;
static int violated;
static uint64_t seed_now;
static int step_now;

static void trace(const char *fmt, ...)
{
    va_list ap;
    if (!tracing) return;
    va_start(ap, fmt);
    printf("# %4d ", step_now);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* The checker's verdict: the first broken invariant ends the schedule. */
static void violation(const char *fmt, ...)
{
    va_list ap;
    if (violated) return;
    violated = 1;
    va_start(ap, fmt);
    printf("# seed %" PRIu64 " step %d: ", seed_now, step_now);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* ---- the model cluster ---- */

typedef struct mnode {
    char host[24];
    int port;
    char id[41];
    int alive;
    int replica_of; /* model node it replicates; -1: a master */
    int connected;  /* the transport has a connection to it */
} mnode;

typedef struct snap { /* what CLUSTER SLOTS said at one moment */
    uint8_t owner[REDLOCK_CLUSTER_SLOTS];
    int replica_of[NODES];
    int alive[NODES];
} snap;

static struct model {
    int masters, nodes;
    mnode n[NODES];
    uint8_t owner[REDLOCK_CLUSTER_SLOTS];
    int mig_to[LOCKS];  /* the importing node of lock l's slot; -1: not migrating */
    int key_at[KEYS];   /* the node holding the key; -1: none */
    char key_tok[KEYS][48];
    int64_t key_exp[KEYS]; /* when it expires (PX, PEXPIRE) */
    int64_t now_us, down_until;
    long events;        /* changes of ownership so far */
    snap snaps[SNAPS];  /* the last few maps, for stale answers */
    int snap_last;
    int failovers;      /* failover events in this schedule */
    int max_failovers;  /* 0..2: a third of the schedules has none */
    int quiet;          /* no more events: every node's map is the truth */
} M;

static char key_name[KEYS][48];
static unsigned lock_slot[LOCKS];

static void snapshot(void)
{
    snap *s;
    int i;
    M.snap_last = (M.snap_last + 1) % SNAPS;
    s = &M.snaps[M.snap_last];
    memcpy(s->owner, M.owner, sizeof s->owner);
    for (i = 0; i < NODES; i++) s->replica_of[i] = M.n[i].replica_of, s->alive[i] = M.n[i].alive;
}

static void model_init(int masters)
{
    int i, s;
    memset(&M, 0, sizeof M);
    M.masters = masters;
    M.nodes = 2 * masters;
    for (i = 0; i < M.nodes; i++) {
        snprintf(M.n[i].host, sizeof M.n[i].host, "10.0.0.%d", i + 1);
        M.n[i].port = 7000 + i;
        snprintf(M.n[i].id, sizeof M.n[i].id, "%040d", i + 1);
        M.n[i].alive = 1;
        M.n[i].replica_of = i < masters ? -1 : i - masters;
    }
    for (s = 0; s < REDLOCK_CLUSTER_SLOTS; s++) M.owner[s] = (uint8_t)(s * masters / REDLOCK_CLUSTER_SLOTS);
    for (i = 0; i < LOCKS; i++) M.mig_to[i] = -1;
    for (i = 0; i < KEYS; i++) M.key_at[i] = -1;
    M.snap_last = -1;
    for (i = 0; i < SNAPS; i++) snapshot();
}

static int live_master_other_than(int o)
{
    int cand[NODES], n = 0, i;
    for (i = 0; i < M.nodes; i++)
        if (M.n[i].alive && M.n[i].replica_of < 0 && i != o) cand[n++] = i;
    return n ? cand[rnd((unsigned)n)] : -1;
}

enum { ANS_OK, ANS_ZERO, ANS_MOVED, ANS_ASK, ANS_TRYAGAIN, ANS_DOWN, ANS_SLOTS };
static const char *const reply_name[] = {"OK", "0", "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "SLOTS"};

enum { ACQ, RENEW, REL };
static const char *const kind_name[] = {"acquire", "renew", "release"};

typedef struct cmd {
    int used, lock, kind, keys; /* keys: 1, or 2 (a fenced acquire) */
    char tok[48];
    int64_t ttl_ms;
    int core;        /* the core's: its reply goes to redlock_on_reply */
    redlock_tag tag;
    char buf[1024];  /* the core's argv, copied */
    int redirects, executed, pending, held; /* held: a release of a granted lock */
    int node; /* where it was sent last (model node) */
    redlock_command rc;
} cmd;
static cmd C[CMDS];

/* Key k as a node sees it now: an expired key is gone. */
static int key_at(int k)
{
    if (M.key_at[k] >= 0 && M.now_us >= M.key_exp[k]) M.key_at[k] = -1;
    return M.key_at[k];
}

/* How node n answers command c (ASKING before it or not), as a cluster
   node does: its slot's master serves it when it has every key (some
   moved away mid-migration: TRYAGAIN; all: ASK), the importing master
   only after ASKING (a key not yet there: TRYAGAIN), anyone else MOVED. */
static int serve(int n, int c, int asking, int *redirect_to)
{
    const int l = C[c].lock, s = (int)lock_slot[l], o = M.owner[s], mig = M.mig_to[l];
    int k, here = 0;
    if (M.now_us < M.down_until) return ANS_DOWN;
    for (k = 0; k < C[c].keys; k++) here += key_at(2 * l + k) == n;
    if (n == o) {
        if (mig < 0 || here == C[c].keys) return -1;
        if (here > 0) return ANS_TRYAGAIN;
        *redirect_to = mig;
        return ANS_ASK;
    }
    if (n == mig && asking) return C[c].keys > 1 && here < C[c].keys ? ANS_TRYAGAIN : -1; /* a key not here yet */
    *redirect_to = o;
    return ANS_MOVED;
}

/* The checker at each execution: the node serves the slot now (or
   imports it and was asked), no key of the command lives elsewhere, and
   the command was not executed before. */
static void check_execution(int n, int c, int asking)
{
    const int l = C[c].lock, s = (int)lock_slot[l];
    int k;
    if (C[c].executed) violation("command %d (%s of lock %d) executed twice", c, kind_name[C[c].kind], l);
    if (!(n == M.owner[s] || (n == M.mig_to[l] && asking)))
        violation("command %d executed by node %d, slot %d served by %d (importing %d, asking %d)", c, n, s, M.owner[s],
                  M.mig_to[l], asking);
    for (k = 0; k < C[c].keys; k++)
        if (key_at(2 * l + k) >= 0 && M.key_at[2 * l + k] != n)
            violation("command %d executed by node %d, its key %s at node %d", c, n, key_name[2 * l + k], M.key_at[2 * l + k]);
}

static int core_holds(int l, const char *tok);

/* Executes command c at node n: the reply ANS_OK or ANS_ZERO. */
static int execute(int n, int c)
{
    const int l = C[c].lock, key = 2 * l;
    C[c].executed = 1;
    switch (C[c].kind) {
    case ACQ:
        if (key_at(key) >= 0) return ANS_ZERO;
        M.key_at[key] = n;
        M.key_exp[key] = M.now_us + C[c].ttl_ms * 1000;
        strcpy(M.key_tok[key], C[c].tok);
        if (C[c].keys > 1 && key_at(key + 1) < 0) M.key_at[key + 1] = n, M.key_exp[key + 1] = INT64_MAX;
        return ANS_OK;
    case RENEW:
        if (key_at(key) < 0 || strcmp(M.key_tok[key], C[c].tok) != 0) {
            if (C[c].core && !core_holds(l, C[c].tok)) return ANS_ZERO; /* a straggler: released meanwhile */
            violation("lock %d lost while held: its renewal ran at node %d and found no key", l, n);
            return ANS_ZERO;
        }
        M.key_exp[key] = M.now_us + C[c].ttl_ms * 1000;
        return ANS_OK;
    default:
        if (key_at(key) < 0 || strcmp(M.key_tok[key], C[c].tok) != 0) {
            if (C[c].held) violation("lock %d lost while held: its release ran at node %d and found no key", l, n);
            return ANS_ZERO;
        }
        M.key_at[key] = -1;
        return ANS_OK;
    }
}

/* ---- the transport ---- */

typedef struct msg {
    int c;      /* command; -1: CLUSTER SLOTS */
    int asking; /* a request: ASKING went before it */
    int reply;  /* a reply: R_* */
    int to;     /* a redirection's node */
} msg;
typedef struct queue {
    msg m[QCAP];
    int head, count;
} queue;
static queue req[NODES], rep[NODES]; /* per connection: in order, as TCP */

static void push(queue *q, msg m)
{
    if (q->count == QCAP) {
        violation("a queue overflowed (the driver's bound)");
        return;
    }
    q->m[(q->head + q->count++) % QCAP] = m;
}
static msg pop(queue *q)
{
    msg m = q->m[q->head];
    q->head = (q->head + 1) % QCAP;
    q->count--;
    return m;
}

enum { IDLE, ACQUIRING, HELD, RENEWING, RELEASING };
static struct client {
    redlock_cluster *rc;
    int state[LOCKS], inflight[LOCKS], renewed[LOCKS];
    long token[LOCKS], next_token;
    int shadow[LOCKS];          /* where the replies so far say lock l's slot is; -1: not known */
    int refreshing;             /* CLUSTER SLOTS owed */
    int64_t last_ask;           /* INT64_MIN: never */
    snap slots;                 /* the owed CLUSTER SLOTS answer */
    int slots_current;          /* it was the truth when given */
    long slots_events;          /* M.events then */
    int loaded;                 /* a map was loaded */
    int told;                   /* failovers told */
    int owed_failover;          /* a failover the client must hear of */
    int64_t told_at;            /* the last failover told; INT64_MIN: none */
    int releasing_held[LOCKS];  /* the core releases a held lock */
    int extended[LOCKS], restarted[LOCKS], released[LOCKS], lost[LOCKS]; /* the core's results */
} T;

/* The core in the loop: the cluster is its one node. */
static int core_mode, in_core_send, send_refused;
static redlock_client core;
static redlock_lock core_lock[LOCKS];
#define CORE_TTL_MS 3000

static struct counts {
    long schedules, commands, executed, failed, moved, ask, tryagain, down, lost, refreshes, stale_refreshes,
        moves, migrations, failovers, told, bounded, core_schedules, acquired, extended, released, lost_locks, restarted;
} N;

/* A failover is told: to the core too, as an adapter does. */
static void told(void)
{
    T.told++, N.told++;
    T.owed_failover = 0;
    T.told_at = M.now_us;
    if (core_mode) redlock_node_failed_over(&core, 0, 0);
}

/* The model node a map's master names (host:port); -1: none. */
static int node_of(int k)
{
    int i;
    if (k < 0 || k >= T.rc->map.masters) return -1;
    for (i = 0; i < M.nodes; i++)
        if (M.n[i].port == T.rc->map.master[k].port && strcmp(M.n[i].host, T.rc->map.master[k].host) == 0) return i;
    return -1;
}

static void finish(int c, int ran, int granted, const redlock_reply *r);

/* Sends command c to node n (ASKING first or not): a dead node's
   connection fails, which makes the map stale (as an adapter does). */
static void send_to(int c, int n, int asking)
{
    msg m;
    C[c].node = n;
    if (n < 0 || !M.n[n].alive) {
        trace("cmd %d -> node %d: no connection", c, n);
        N.lost++;
        redlock_cluster_stale(T.rc);
        if (in_core_send) { /* the core hears it from send's result */
            send_refused = 1;
            C[c].used = 0;
            T.inflight[C[c].lock] = 0;
            return;
        }
        finish(c, 0, 0, NULL);
        return;
    }
    M.n[n].connected = 1;
    trace("cmd %d (%s lock %d) -> node %d%s, redirects %d", c, kind_name[C[c].kind], C[c].lock, n, asking ? " ASKING" : "",
          C[c].redirects);
    m.c = c, m.asking = asking, m.reply = 0, m.to = -1;
    push(&req[n], m);
}

/* A command's first send: where the layer routes it, which must be where
   the replies so far say. */
static void route(int c)
{
    int at = redlock_cluster_route(T.rc, &C[c].rc);
    if (at == REDLOCK_CLUSTER_UNKNOWN) {
        C[c].pending = 1;
        return;
    }
    C[c].pending = 0;
    if (T.shadow[C[c].lock] >= 0 && node_of(at) != T.shadow[C[c].lock])
        violation("lock %d's slot routed to node %d, the replies so far said node %d", C[c].lock, node_of(at),
                  T.shadow[C[c].lock]);
    send_to(c, node_of(at), 0);
}

static void issue(int l, int kind)
{
    int c;
    cmd *x;
    for (c = 0; c < CMDS && C[c].used; c++) {
    }
    if (c == CMDS) return;
    x = &C[c];
    memset(x, 0, sizeof *x);
    x->used = 1, x->lock = l, x->kind = kind, x->node = -1, x->ttl_ms = INT64_MAX / 4000;
    snprintf(x->tok, sizeof x->tok, "t%ld", T.token[l]);
    x->keys = kind == ACQ && l < FENCED ? 2 : 1;
    x->held = kind == REL && T.state[l] == HELD;
    /* the script command the core sends: EVALSHA sha numkeys key... */
    x->rc.argc = 3 + x->keys;
    x->rc.argv[0] = "EVALSHA", x->rc.argv[1] = "0", x->rc.argv[2] = x->keys == 2 ? "2" : "1";
    x->rc.argv[3] = key_name[2 * l];
    if (x->keys == 2) x->rc.argv[4] = key_name[2 * l + 1];
    for (c = 0; c < x->rc.argc; c++) x->rc.argvlen[c] = strlen(x->rc.argv[c]);
    T.inflight[l] = 1;
    T.state[l] = kind == ACQ ? ACQUIRING : kind == RENEW ? RENEWING : RELEASING;
    N.commands++;
    route((int)(x - C));
}

/* A command's end, as the client hears it (ran: a reply that is not an
   error): the lock's state follows (a failed acquire is undone by a
   release, a release is tried until it runs). */
static void finish(int c, int ran, int granted, const redlock_reply *r)
{
    const int l = C[c].lock;
    C[c].used = 0;
    T.inflight[l] = 0;
    if (ran) N.executed++;
    else N.failed++;
    trace("cmd %d (%s lock %d) ends %s", c, kind_name[C[c].kind], l, granted ? "granted" : ran ? "refused" : "failed");
    if (C[c].core) { /* the core's: its reply, or the connection's loss */
        if (r) redlock_on_reply(&core, C[c].tag, r);
        else redlock_on_error(&core, C[c].tag, REDLOCK_ERR_CONNECT);
        return;
    }
    switch (C[c].kind) {
    case ACQ: T.state[l] = granted ? HELD : RELEASING; break;
    case RENEW: T.state[l] = HELD, T.renewed[l] += granted; break;
    default: T.state[l] = ran ? IDLE : RELEASING; break;
    }
}

/* ---- the core's transport: its commands take the same route ---- */

static int64_t cb_now(void *u)
{
    (void)u;
    return M.now_us;
}
static int64_t cb_wall(void *u)
{
    (void)u;
    return 1700000000000 + M.now_us / 1000;
}
static int cb_random(void *u, void *buf, size_t len)
{
    size_t i;
    (void)u;
    for (i = 0; i < len; i++) ((unsigned char *)buf)[i] = (unsigned char)rnd(256);
    return 0;
}

static int is(const redlock_command *cmd, int i, const char *s)
{
    return i < cmd->argc && cmd->argvlen[i] == strlen(s) && memcmp(cmd->argv[i], s, cmd->argvlen[i]) == 0;
}

/* A command of the core's: SET key token NX PX ttl, or the release or
   extend script (EVALSHA / EVAL x 1 key token [ttl]); copied, routed. */
static int cb_send(void *u, int node, const redlock_command *rc, redlock_tag tag)
{
    int c, i, l, kind;
    size_t used = 0;
    cmd *x;
    (void)u;
    (void)node;
    if (is(rc, 0, "SET") && rc->argc == 6) kind = ACQ;
    else if ((is(rc, 0, "EVALSHA") && is(rc, 1, redlock__release_sha)) || (is(rc, 0, "EVAL") && is(rc, 1, redlock_release_script())))
        kind = REL;
    else if ((is(rc, 0, "EVALSHA") && is(rc, 1, redlock__extend_sha)) || (is(rc, 0, "EVAL") && is(rc, 1, redlock_extend_script())))
        kind = RENEW;
    else {
        violation("the core sent %.*s, which the model does not know", (int)rc->argvlen[0], rc->argv[0]);
        return REDLOCK_ERR_PROTOCOL;
    }
    for (l = 0; l < LOCKS && !is(rc, kind == ACQ ? 1 : 3, key_name[2 * l]); l++) {
    }
    for (c = 0; c < CMDS && C[c].used; c++) {
    }
    if (l == LOCKS || c == CMDS || rc->argc < (kind == ACQ ? 6 : 5)) {
        violation("the core sent a command the driver cannot hold");
        return REDLOCK_ERR_PROTOCOL;
    }
    x = &C[c];
    memset(x, 0, sizeof *x);
    x->used = 1, x->core = 1, x->tag = tag, x->lock = l, x->kind = kind, x->keys = 1, x->node = -1;
    x->held = kind == REL && T.releasing_held[l];
    x->rc.argc = rc->argc;
    for (i = 0; i < rc->argc; i++) {
        if (used + rc->argvlen[i] + 1 > sizeof x->buf) {
            x->used = 0;
            violation("the core's command is longer than the driver keeps");
            return REDLOCK_ERR_PROTOCOL;
        }
        memcpy(x->buf + used, rc->argv[i], rc->argvlen[i]);
        x->buf[used + rc->argvlen[i]] = 0;
        x->rc.argv[i] = x->buf + used;
        x->rc.argvlen[i] = rc->argvlen[i];
        used += rc->argvlen[i] + 1;
    }
    i = kind == ACQ ? 2 : 4; /* the token */
    snprintf(x->tok, sizeof x->tok, "%.*s", (int)rc->argvlen[i], rc->argv[i]);
    x->ttl_ms = kind == REL ? 0 : atoll(x->rc.argv[5]);
    T.inflight[l] = 1;
    N.commands++;
    in_core_send = 1, send_refused = 0;
    route(c);
    in_core_send = 0;
    return send_refused ? REDLOCK_ERR_CONNECT : 0;
}

static void cb_result(redlock_lock *lk, const redlock_result *r)
{
    const int l = (int)(lk - core_lock);
    trace("core: lock %d op %d: %s", l, (int)r->op, redlock_strerror(r->status));
    if (r->status == REDLOCK_ERR_RESTARTED && !T.told) violation("lock %d: RESTARTED with no failover told", l);
    /* the lone node's grants do not count for the bound after a failover */
    if (r->status == REDLOCK_OK && (r->op == REDLOCK_OP_ACQUIRE || r->op == REDLOCK_OP_EXTEND) && T.told_at != INT64_MIN &&
        M.now_us - T.told_at < redlock_lock_restart_bound_us(lk))
        violation("lock %d granted (op %d) %" PRId64 " us after a failover was told", l, (int)r->op, M.now_us - T.told_at);
    switch (r->op) {
    case REDLOCK_OP_ACQUIRE: N.acquired += r->status == REDLOCK_OK; break;
    case REDLOCK_OP_EXTEND:
        T.extended[l] += r->status == REDLOCK_OK, N.extended += r->status == REDLOCK_OK;
        T.restarted[l] += r->status == REDLOCK_ERR_RESTARTED, N.restarted += r->status == REDLOCK_ERR_RESTARTED;
        break;
    case REDLOCK_OP_RELEASE:
        T.releasing_held[l] = 0;
        T.released[l]++, N.released++;
        break;
    case REDLOCK_OP_LOST:
        T.lost[l]++, N.lost_locks++;
        if (!T.told) violation("lock %d lost (%s) with no failover told", l, redlock_strerror(r->status));
        break;
    default: break;
    }
}

/* The core holds lock l with this token now. */
static int core_holds(int l, const char *tok)
{
    const char *t = redlock_lock_token(&core_lock[l]);
    return redlock_lock_state(&core_lock[l]) == REDLOCK_STATE_HELD && t && strcmp(t, tok) == 0;
}

/* The core releases held lock l (its result may come before the call
   returns: a send refused at once). */
static void release_held(int l)
{
    T.releasing_held[l] = 1;
    if (redlock_release(&core_lock[l]) != REDLOCK_OK) T.releasing_held[l] = 0;
}

/* The core's timer, when due. */
static void tick(void)
{
    if (core_mode && redlock_next_deadline(&core) <= M.now_us) redlock_on_timer(&core);
}

static void build_slots(const snap *s, redlock_reply *top, redlock_reply *ranges, redlock_reply *items, redlock_reply *fields)
{
    size_t nr = 0, ni = 0, nf = 0;
    int from = 0, to, r;
    memset(top, 0, sizeof *top);
    top->type = REDLOCK_REPLY_ARRAY;
    top->element = ranges;
    while (from < REDLOCK_CLUSTER_SLOTS) {
        const int o = s->owner[from];
        redlock_reply *range = &ranges[nr++], *it = &items[ni];
        for (to = from; to + 1 < REDLOCK_CLUSTER_SLOTS && s->owner[to + 1] == o; to++) {
        }
        memset(range, 0, sizeof *range);
        range->type = REDLOCK_REPLY_ARRAY;
        range->element = it;
        memset(&it[0], 0, 2 * sizeof it[0]);
        it[0].type = it[1].type = REDLOCK_REPLY_INTEGER;
        it[0].integer = from, it[1].integer = to;
        range->elements = 2;
        for (r = -1; r < M.nodes; r++) { /* the master, then its replicas */
            const int n = r < 0 ? o : r;
            redlock_reply *f = &fields[nf];
            if (r >= 0 && !(s->replica_of[r] == o && s->alive[r])) continue;
            memset(&it[range->elements], 0, sizeof it[0]);
            it[range->elements].type = REDLOCK_REPLY_ARRAY;
            it[range->elements].element = f;
            it[range->elements].elements = 3;
            range->elements++;
            memset(f, 0, 3 * sizeof *f);
            f[0].type = REDLOCK_REPLY_STRING, f[0].str = M.n[n].host, f[0].len = strlen(M.n[n].host);
            f[1].type = REDLOCK_REPLY_INTEGER, f[1].integer = M.n[n].port;
            f[2].type = REDLOCK_REPLY_STRING, f[2].str = M.n[n].id, f[2].len = 40;
            nf += 3;
        }
        ni += range->elements;
        from = to + 1;
    }
    top->elements = nr;
}

/* The model node the layer routes lock l's key to. */
static int route_key(int l)
{
    redlock_command get;
    memset(&get, 0, sizeof get);
    get.argc = 2;
    get.argv[0] = "GET", get.argv[1] = key_name[2 * l];
    get.argvlen[0] = 3, get.argvlen[1] = strlen(key_name[2 * l]);
    return node_of(redlock_cluster_route(T.rc, &get));
}

/* The owed CLUSTER SLOTS answer, from node n: update() it. */
static void slots_answer(int n)
{
    static redlock_reply ranges[64], items[64 * (NODES + 3)], fields[64 * (NODES + 1) * 3];
    redlock_reply top;
    int failovers = 0, l;
    T.refreshing = 0;
    build_slots(&T.slots, &top, ranges, items, fields);
    if (redlock_cluster_update(T.rc, &top, M.n[n].host, &failovers) != 0) violation("a well-formed CLUSTER SLOTS refused");
    trace("CLUSTER SLOTS from node %d (%s): %d failovers", n, T.slots_current ? "current" : "stale", failovers);
    T.loaded = 1;
    if (failovers > 0) {
        if (M.failovers == 0) violation("a failover told (CLUSTER SLOTS) where none happened");
        told();
    }
    for (l = 0; l < LOCKS; l++) T.shadow[l] = T.slots.owner[lock_slot[l]];
    /* a current map: every lock's slot goes straight to its owner */
    if (T.slots_current && T.slots_events == M.events)
        for (l = 0; l < LOCKS; l++)
            if (route_key(l) != M.owner[lock_slot[l]])
                violation("after a current CLUSTER SLOTS, lock %d's slot routed to node %d, owned by %d", l, route_key(l),
                          M.owner[lock_slot[l]]);
}

/* A CLUSTER SLOTS when the layer says it is due (one owed at a time),
   to a live node the map names, else a seed. */
static void maybe_refresh(void)
{
    int k, n = -1;
    msg m;
    if (T.refreshing || !redlock_cluster_refresh_due(T.rc, M.now_us)) return;
    if (T.last_ask != INT64_MIN && M.now_us - T.last_ask < REFRESH_US)
        violation("CLUSTER SLOTS asked %" PRId64 " us after the last (the bound: %" PRId64 ")", M.now_us - T.last_ask, REFRESH_US);
    redlock_cluster_refresh_asked(T.rc, M.now_us);
    T.last_ask = M.now_us;
    N.refreshes++;
    for (k = 0; k < T.rc->map.masters && n < 0; k++) { /* a replica answers too */
        int i = node_of(k);
        if (i >= 0 && M.n[i].alive) n = i;
    }
    for (k = 0; k < M.nodes && n < 0; k++) /* the seeds: every node the cluster started with */
        if (M.n[k].alive) n = k;
    if (n < 0) return;
    M.n[n].connected = 1;
    T.refreshing = 1;
    m.c = -1, m.asking = 0, m.reply = ANS_SLOTS, m.to = -1;
    push(&req[n], m);
}

/* Node n handles its oldest request. */
static void deliver_request(int n)
{
    msg m = pop(&req[n]), r;
    int to = -1;
    r.c = m.c, r.asking = 0, r.to = -1;
    if (m.c < 0) { /* CLUSTER SLOTS: the truth, or a map a few events old */
        int old = !M.quiet && rnd(4) == 0;
        const snap *s = &M.snaps[old ? (M.snap_last + SNAPS - 1 - (int)rnd(SNAPS - 1)) % SNAPS : M.snap_last];
        memcpy(&T.slots, s, sizeof T.slots);
        T.slots_current = memcmp(s->owner, M.owner, sizeof M.owner) == 0;
        T.slots_events = M.events;
        if (!T.slots_current) N.stale_refreshes++;
        r.reply = ANS_SLOTS;
    } else {
        r.reply = serve(n, m.c, m.asking, &to);
        if (r.reply < 0) {
            check_execution(n, m.c, m.asking);
            r.reply = execute(n, m.c);
        }
        r.to = to;
        trace("node %d: cmd %d -> %s %d", n, m.c, reply_name[r.reply], to);
    }
    push(&rep[n], r);
}

/* The transport reads node n's oldest reply: what the layer decides. */
static void deliver_reply(int n)
{
    msg m = pop(&rep[n]);
    const int c = m.c;
    redlock_reply r;
    redlock_cluster_step st;
    char text[64];
    int how;
    if (c < 0) {
        slots_answer(n);
        return;
    }
    memset(&r, 0, sizeof r);
    if (C[c].kind == ACQ && m.reply == ANS_OK) { /* SET ... NX PX */
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
    } else if (C[c].kind == ACQ && m.reply == ANS_ZERO) {
        r.type = REDLOCK_REPLY_NIL;
    } else if (m.reply == ANS_OK || m.reply == ANS_ZERO) {
        r.type = REDLOCK_REPLY_INTEGER;
        r.integer = m.reply == ANS_OK;
    } else {
        r.type = REDLOCK_REPLY_ERROR;
        if (m.reply == ANS_MOVED || m.reply == ANS_ASK)
            snprintf(text, sizeof text, "%s %u %s:%d", m.reply == ANS_MOVED ? "MOVED" : "ASK", lock_slot[C[c].lock],
                     M.n[m.to].host, M.n[m.to].port);
        else
            snprintf(text, sizeof text, "%s", m.reply == ANS_TRYAGAIN ? "TRYAGAIN Multiple keys request during rehashing of slot"
                                                                     : "CLUSTERDOWN The cluster is down");
        r.str = text;
        r.len = strlen(text);
    }
    N.moved += m.reply == ANS_MOVED, N.ask += m.reply == ANS_ASK, N.tryagain += m.reply == ANS_TRYAGAIN, N.down += m.reply == ANS_DOWN;
    how = redlock_cluster_answer(T.rc, &r, M.n[n].host, C[c].redirects, &st);
    if (st.failover) {
        if (M.failovers == 0) violation("a failover told (MOVED) where none happened");
        told();
    }
    if (how == REDLOCK_CLUSTER_PASS) {
        if (m.reply == ANS_MOVED || m.reply == ANS_ASK) {
            N.bounded++;
            if (C[c].redirects < REDLOCK_CLUSTER_MAX_REDIRECTS)
                violation("cmd %d's %s passed after %d redirections", c, reply_name[m.reply], C[c].redirects);
        }
        finish(c, m.reply == ANS_OK || m.reply == ANS_ZERO, m.reply == ANS_OK, &r);
        return;
    }
    if ((how == REDLOCK_CLUSTER_RESEND) != (m.reply == ANS_MOVED) || (how == REDLOCK_CLUSTER_ASKING) != (m.reply == ANS_ASK))
        violation("cmd %d: a %s answered as %s", c, reply_name[m.reply], how == REDLOCK_CLUSTER_RESEND ? "MOVED" : "ASK");
    if (++C[c].redirects > REDLOCK_CLUSTER_MAX_REDIRECTS)
        violation("cmd %d redirected %d times (the bound: %d)", c, C[c].redirects, REDLOCK_CLUSTER_MAX_REDIRECTS);
    if (node_of(st.master) != m.to) violation("cmd %d redirected to node %d, the reply named %d", c, node_of(st.master), m.to);
    if (how == REDLOCK_CLUSTER_RESEND) T.shadow[C[c].lock] = m.to; /* the map learns a followed MOVED */
    send_to(c, node_of(st.master), how == REDLOCK_CLUSTER_ASKING);
}

/* ---- events ---- */

static void move_keys(int l, int from, int to)
{
    int k;
    for (k = 2 * l; k < 2 * l + 2; k++)
        if (M.key_at[k] == from) M.key_at[k] = to;
}

/* A node's connection drops: what was owed on it fails. */
static void drop_connection(int n)
{
    while (req[n].count) {
        msg m = pop(&req[n]);
        if (m.c < 0) T.refreshing = 0;
        else N.lost++, finish(m.c, 0, 0, NULL);
    }
    while (rep[n].count) {
        msg m = pop(&rep[n]);
        if (m.c < 0) T.refreshing = 0;
        else N.lost++, finish(m.c, 0, 0, NULL);
    }
    if (M.n[n].connected) redlock_cluster_stale(T.rc);
}

static void event(void)
{
    const int l = (int)rnd(LOCKS), s = (int)lock_slot[l], o = M.owner[s];
    int t, i;
    switch (rnd(7)) {
    case 0: /* a planned move, at once (MIGRATE every key, SETSLOT NODE) */
        if (M.mig_to[l] >= 0 || (t = live_master_other_than(o)) < 0) return;
        move_keys(l, o, t);
        M.owner[s] = (uint8_t)t;
        N.moves++;
        trace("event: slot %d (lock %d) moved %d -> %d", s, l, o, t);
        break;
    case 1: /* a migration starts: the importing master serves after ASKING */
        if (M.mig_to[l] >= 0 || (t = live_master_other_than(o)) < 0) return;
        M.mig_to[l] = t;
        N.migrations++;
        trace("event: slot %d (lock %d) migrating %d -> %d", s, l, o, t);
        return;
    case 2: /* one key migrates */
        if ((t = M.mig_to[l]) < 0) return;
        for (i = 2 * l; i < 2 * l + 2; i++)
            if (key_at(i) == o) {
                M.key_at[i] = t;
                trace("event: key %s migrated %d -> %d", key_name[i], o, t);
                return;
            }
        return;
    case 3: /* the migration ends: SETSLOT NODE */
        if ((t = M.mig_to[l]) < 0) return;
        move_keys(l, o, t);
        M.owner[s] = (uint8_t)t;
        M.mig_to[l] = -1;
        trace("event: slot %d (lock %d) migrated to %d", s, l, t);
        break;
    case 4: /* a master fails over to its replica (keys replicated); it is gone */
        for (t = 0; t < M.nodes && !(M.n[t].alive && M.n[t].replica_of == o); t++) {
        }
        if (t == M.nodes || M.failovers >= M.max_failovers) return;
        M.n[o].alive = 0;
        M.n[t].replica_of = -1;
        for (i = 0; i < REDLOCK_CLUSTER_SLOTS; i++)
            if (M.owner[i] == o) M.owner[i] = (uint8_t)t;
        for (i = 0; i < LOCKS; i++)
            if (M.mig_to[i] == o) M.mig_to[i] = t;
        for (i = 0; i < KEYS; i++)
            if (M.key_at[i] == o) M.key_at[i] = t;
        M.failovers++, N.failovers++;
        /* the client must hear of it when it knew the old master (its map
           names the replica) and was connected to it */
        if (T.loaded && M.n[o].connected) T.owed_failover = 1;
        trace("event: master %d failed over to its replica %d", o, t);
        drop_connection(o);
        break;
    case 5: /* CLUSTERDOWN for a while */
        M.down_until = M.now_us + 20000 + rnd(100000);
        trace("event: cluster down for %" PRId64 " us", M.down_until - M.now_us);
        return;
    default: /* nothing changes: a stale answer may still name the past */
        return;
    }
    M.events++;
    snapshot();
}

/* ---- a schedule ---- */

static int pick_queue(queue *q)
{
    int cand[NODES], n = 0, i;
    for (i = 0; i < M.nodes; i++)
        if (q[i].count) cand[n++] = i;
    return n ? cand[rnd((unsigned)n)] : -1;
}

static void retry_pending(void)
{
    int c;
    for (c = 0; c < CMDS; c++)
        if (C[c].used && C[c].pending && redlock_cluster_route(T.rc, &C[c].rc) != REDLOCK_CLUSTER_UNKNOWN) route(c);
}

/* Everything owed delivered, in random order; time passes as it must for
   a refresh the pending commands wait on. */
static void drain(void)
{
    int i, n, c, pending;
    for (i = 0; i < 10000 && !violated; i++) {
        tick();
        maybe_refresh();
        retry_pending();
        if ((n = pick_queue(rnd(2) ? req : rep)) >= 0 || (n = pick_queue(req)) >= 0 || (n = pick_queue(rep)) >= 0) {
            if (req[n].count && (rnd(2) || !rep[n].count)) deliver_request(n);
            else deliver_reply(n);
            continue;
        }
        for (pending = 0, c = 0; c < CMDS; c++) pending |= C[c].used;
        if (!pending) return;
        M.now_us += REFRESH_US;
    }
    if (!violated) violation("commands still owed after the cluster went quiet");
}

/* drain(), and the core's retries and rounds until none runs or waits
   for its next attempt. */
static void settle(void)
{
    int i, l, busy = 1;
    for (i = 0; i < 200 && busy && !violated; i++) {
        int64_t d;
        drain();
        for (busy = 0, l = 0; core_mode && l < LOCKS; l++)
            busy |= redlock_lock_pending(&core_lock[l]) || redlock_lock_waiting(&core_lock[l]);
        if (!busy) return;
        if ((d = redlock_next_deadline(&core)) > M.now_us) M.now_us = d;
        redlock_on_timer(&core);
    }
    if (busy && !violated) violation("the core's rounds still run after the cluster went quiet");
}

static void quiet_round(void)
{
    M.now_us += REFRESH_US + 1000;
    settle();
}

/* The core's locks once the cluster is quiet: a held one extends (unless
   a failover was told less than the restart bound ago: then its node's
   grants do not count, RESTARTED), and its release deletes the key at
   the slot's owner. */
static void core_quiet(void)
{
    int l, i, k;
    for (l = 0; l < LOCKS && !violated; l++) {
        const int64_t bound = redlock_lock_restart_bound_us(&core_lock[l]);
        if (redlock_lock_state(&core_lock[l]) != REDLOCK_STATE_HELD) continue;
        for (i = 0, k = 0; i < 3 && !k && !violated; i++) {
            int ok = T.extended[l], restarted = T.restarted[l];
            if (redlock_extend(&core_lock[l], 0) != REDLOCK_OK) break;
            quiet_round();
            if (T.extended[l] > ok) {
                k = 1;
            } else if (T.restarted[l] > restarted && T.told_at != INT64_MIN && M.now_us - T.told_at < bound) {
                k = 1; /* as the core must: its node may have lost keys */
            }
        }
        if (!k && !violated) violation("lock %d held but its extends fail in a quiet cluster", l);
        if (redlock_lock_state(&core_lock[l]) != REDLOCK_STATE_HELD) continue;
        release_held(l);
        quiet_round();
        if (!violated && (T.releasing_held[l] || key_at(2 * l) >= 0))
            violation("lock %d's release did not delete its key at its owner %d", l, M.owner[lock_slot[l]]);
    }
}

static void schedule(uint64_t seed)
{
    int l, i, k;
    seed_now = seed;
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    violated = 0;
    model_init(1 + (int)rnd(MAX_MASTERS));
    M.max_failovers = (int)rnd(3);
    memset(req, 0, sizeof req);
    memset(rep, 0, sizeof rep);
    memset(C, 0, sizeof C);
    redlock_cluster_init(T.rc);
    T.next_token = 0;
    T.refreshing = T.loaded = T.told = T.owed_failover = 0;
    T.last_ask = T.told_at = INT64_MIN;
    for (l = 0; l < LOCKS; l++) {
        T.state[l] = IDLE, T.shadow[l] = -1;
        T.inflight[l] = T.renewed[l] = T.releasing_held[l] = T.extended[l] = T.restarted[l] = T.released[l] = T.lost[l] = 0;
    }
    N.schedules++;
    core_mode = (int)(seed & 1); /* odd seeds: the core's locks */
    if (core_mode) {
        redlock_config cfg;
        redlock_callbacks cb;
        redlock_lock_opts o;
        N.core_schedules++;
        redlock_config_init(&cfg);
        cfg.node_count = 1;
        cfg.node_timeout_ms = 500;
        memset(&cb, 0, sizeof cb);
        cb.send = cb_send, cb.now_us = cb_now, cb.wall_ms = cb_wall, cb.random = cb_random;
        if (redlock_client_init(&core, &cfg, &cb, NULL) != REDLOCK_OK) violation("redlock_client_init");
        for (l = 0; l < LOCKS; l++) {
            memset(&o, 0, sizeof o);
            o.key = key_name[2 * l];
            o.ttl_ms = CORE_TTL_MS;
            o.on_result = cb_result;
            if (redlock_lock_init(&core_lock[l], &core, &o) != REDLOCK_OK) violation("redlock_lock_init");
        }
    }
    trace("schedule %" PRIu64 ": %d masters%s", seed, M.masters, core_mode ? ", the core's locks" : "");
    for (step_now = 0; step_now < STEPS && !violated; step_now++) {
        unsigned r = rnd(100);
        int n;
        if (r < 25 && core_mode) { /* the core's calls; BUSY and the like refused, as they may be */
            redlock_lock *lk = &core_lock[(l = (int)rnd(LOCKS))];
            if (redlock_lock_state(lk) != REDLOCK_STATE_HELD) (void)redlock_acquire(lk);
            else if (rnd(4)) (void)redlock_extend(lk, 0);
            else release_held(l);
        } else if (r < 25) {
            l = (int)rnd(LOCKS);
            if (!T.inflight[l]) {
                if (T.state[l] == IDLE) T.token[l] = ++T.next_token, issue(l, ACQ);
                else if (T.state[l] == RELEASING) issue(l, REL);
                else issue(l, rnd(4) ? RENEW : REL);
            }
        } else if (r < 50) {
            if ((n = pick_queue(req)) >= 0) deliver_request(n);
        } else if (r < 75) {
            if ((n = pick_queue(rep)) >= 0) deliver_reply(n);
        } else if (r < 88) {
            M.now_us += rnd(40000);
        } else {
            event();
        }
        tick();
        maybe_refresh();
        retry_pending();
    }
    /* quiet: migrations end, the cluster is up, everything owed arrives */
    for (l = 0; l < LOCKS && !violated; l++)
        if (M.mig_to[l] >= 0) {
            move_keys(l, M.owner[lock_slot[l]], M.mig_to[l]);
            M.owner[lock_slot[l]] = (uint8_t)M.mig_to[l];
            M.mig_to[l] = -1;
            M.events++;
        }
    snapshot();
    M.down_until = 0;
    M.quiet = 1;
    settle();
    if (core_mode) core_quiet();
    /* every lock still held renews within a few tries (the map catches
       up: a MOVED, or a lost master's refresh), and is released at its
       owner, which deletes the key there */
    for (i = 0; i < 3 && !violated; i++) {
        for (l = 0; l < LOCKS; l++)
            if (T.state[l] == RELEASING && !T.inflight[l]) issue(l, REL);
        quiet_round();
    }
    for (l = 0; l < LOCKS && !violated; l++) {
        if (T.state[l] == RELEASING) violation("lock %d's release never ran in a quiet cluster", l);
        if (T.state[l] != HELD) continue;
        for (i = 0, k = 0; i < 3 && !k && !violated; i++) {
            int before = T.renewed[l];
            issue(l, RENEW);
            quiet_round();
            k = T.renewed[l] > before;
        }
        if (!k) violation("lock %d held but its renewals fail in a quiet cluster", l);
        issue(l, REL);
        for (i = 0; i < CMDS; i++)
            if (C[i].used && C[i].lock == l && C[i].node != M.owner[lock_slot[l]])
                violation("lock %d's release went to node %d after a renewal, its owner is %d", l, C[i].node,
                          M.owner[lock_slot[l]]);
        quiet_round();
        if (!violated && (T.state[l] != IDLE || M.key_at[2 * l] >= 0))
            violation("lock %d's release did not delete its key at its owner %d", l, M.owner[lock_slot[l]]);
    }
    /* a failover the client knew the old master of is told once the map
       is current again */
    if (!violated && T.owed_failover) {
        redlock_cluster_stale(T.rc);
        quiet_round();
        if (T.owed_failover) violation("a master failed over and the client was never told");
    }
    if (core_mode) {
        for (l = 0; l < LOCKS; l++) redlock_lock_deinit(&core_lock[l]);
        redlock_client_deinit(&core);
        core_mode = 0;
    }
}

int main(int argc, char **argv)
{
    long schedules = 2000, s;
    uint64_t first = 1;
    int l, k;
    if (argc > 2 && strcmp(argv[1], "--replay") == 0) {
        tracing = 1;
        schedules = 1;
        first = strtoull(argv[2], NULL, 10);
    } else {
        if (argc > 1) schedules = atol(argv[1]);
        if (argc > 2) first = strtoull(argv[2], NULL, 10);
    }
    for (l = 0; l < LOCKS; l++) {
        snprintf(key_name[2 * l], sizeof key_name[0], "{lock%d}", l);
        snprintf(key_name[2 * l + 1], sizeof key_name[0], "%s{lock%d}", REDLOCK_FENCE_PREFIX, l);
        lock_slot[l] = redlock_cluster_slot(key_name[2 * l], strlen(key_name[2 * l]));
        for (k = 0; k < l; k++)
            if (lock_slot[k] == lock_slot[l]) {
                printf("not ok cluster_order: two locks share a slot (the model keeps one lock per slot)\n");
                return 1;
            }
    }
    T.rc = (redlock_cluster *)malloc(sizeof *T.rc);
    if (!T.rc) return 1;
    for (s = 0; s < schedules && !violated; s++) schedule(first + (uint64_t)s);
    free(T.rc);
    printf("# %ld schedules, %ld commands (%ld executed, %ld failed votes), redirections: %ld MOVED %ld ASK "
           "(%ld beyond the bound), %ld TRYAGAIN, %ld CLUSTERDOWN, %ld lost connections; %ld CLUSTER SLOTS (%ld stale); "
           "%ld moves, %ld migrations, %ld failovers (%ld told); the core's locks in %ld schedules: %ld acquired, "
           "%ld extended, %ld released, %ld lost, %ld RESTARTED\n",
           N.schedules, N.commands, N.executed, N.failed, N.moved, N.ask, N.bounded, N.tryagain, N.down, N.lost,
           N.refreshes, N.stale_refreshes, N.moves, N.migrations, N.failovers, N.told, N.core_schedules, N.acquired,
           N.extended, N.released, N.lost_locks, N.restarted);
    if (violated) {
        printf("# replay: %s --replay %" PRIu64 "\n", argv[0], seed_now);
        printf("not ok cluster_order\n");
        return 1;
    }
    printf("ok cluster_order\n");
    return 0;
}
