/* Integration tests of adapters/redlock_hiredis.h against real redis-servers
   (1, 3 and 5 nodes). Scenarios: tests/shared/integration.h. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "integration.h"
#include "redis_cluster.h"

struct it_client {
    redlock_hiredis h;
    int switches; /* EV_MODE_SWITCH seen (under h's mutex when threaded) */
};

struct it_lock {
    redlock_hiredis_lock l;
    it_client *c;
    int lost;
};

static void t_on_event(void *user, const redlock_event *ev)
{
    it_client *c = (it_client *)user;
    it_note_event(&c->switches, c, ev);
}

static void t_on_result(redlock_lock *lk, const redlock_result *r)
{
    it_lock *l = (it_lock *)r->user;
    (void)lk;
    it_note_result(r);
    if (r->op == REDLOCK_OP_LOST) l->lost++;
}

static it_client *t_open(const it_setup *s)
{
    redlock_hiredis_config o;
    int i, rc;
    void *mem = NULL;
    char err[256];
    it_client *c = (it_client *)calloc(1, sizeof *c);
    if (!c) return NULL;
    redlock_hiredis_config_init(&o);
    o.node_count = s->nodes ? 0 : s->cluster || s->sentinel ? 1 : s->n;
    for (i = 0; i < o.node_count; i++) {
        o.node[i].host = s->host ? s->host : "127.0.0.1";
        o.node[i].port = s->ports[i];
    }
    if (s->cluster || s->sentinel) { /* one node: the cluster, its seeds; the group, its sentinels */
        o.node[0].kind = s->cluster ? REDLOCK_NODE_CLUSTER : REDLOCK_NODE_SENTINEL;
        o.node[0].master = s->sentinel;
        for (i = 1; i < s->n && i < REDLOCK_NODES_MAX_SEEDS; i++) {
            o.node[0].seed[i - 1].host = s->host ? s->host : "127.0.0.1";
            o.node[0].seed[i - 1].port = s->ports[i];
            o.node[0].seed_count = i;
        }
    }
    if (s->nodes && redlock_parse_nodes(o.node, &o.node_count, s->nodes, &mem, err, sizeof err) != 0) {
        printf("#   %s\n", err);
        free(c);
        return NULL;
    }
    o.username = s->user;
    o.password = s->pass;
    o.db = s->db;
    it_tls_config(s, &o.tls);
    o.core = s->core;
    o.command_timeout_ms = 300;
    o.watchdog_thread = s->watchdog_thread;
    o.notify_off = s->notify_off;
    o.on_event = t_on_event;
    o.user = c;
    rc = redlock_hiredis_init(&c->h, &o);
    redlock_free_nodes(mem);
    if (rc != REDLOCK_OK) {
        free(c);
        return NULL;
    }
    return c;
}

static void t_close(it_client *c)
{
    redlock_hiredis_deinit(&c->h);
    free(c);
}

static it_lock *t_lock(it_client *c, const redlock_lock_opts *o)
{
    redlock_lock_opts lo = *o;
    it_lock *l = (it_lock *)calloc(1, sizeof *l);
    if (!l) return NULL;
    l->c = c;
    lo.on_result = t_on_result;
    lo.user = l;
    if (redlock_hiredis_lock_init(&c->h, &l->l, &lo) != REDLOCK_OK) {
        free(l);
        return NULL;
    }
    return l;
}

static void t_unlock(it_lock *l)
{
    redlock_hiredis_lock_deinit(&l->l);
    free(l);
}

static int t_reinit(it_lock *l, const redlock_lock_opts *o)
{
    redlock_lock_opts lo = *o;
    lo.on_result = t_on_result;
    lo.user = l;
    l->lost = 0;
    return redlock_hiredis_lock_init(&l->c->h, &l->l, &lo);
}

/* the blocking calls return the status; the whole result is the lock's last */
static int t_done(it_lock *l, int rc, redlock_result *r)
{
    /* a result carries the user pointer given at lock_init */
    if (redlock_hiredis_last_result(&l->l)->op) CHECK(redlock_hiredis_last_result(&l->l)->user == l);
    if (r) *r = *redlock_hiredis_last_result(&l->l);
    return rc;
}
/* Over TLS, the loop also turns once (without waiting) before each
   acquire, as a program that runs it between calls does: replies owed
   since the last call then span TLS records that one read does not all
   return (the plain builds keep the calls back to back). */
static int t_acquire(it_lock *l, redlock_result *r)
{
#ifdef IT_TLS
    if (!l->c->h._threaded) redlock_hiredis_run(&l->c->h, 0);
#endif
    return t_done(l, redlock_hiredis_acquire(&l->l), r);
}
static int t_release(it_lock *l, redlock_result *r) { return t_done(l, redlock_hiredis_release(&l->l), r); }
static int t_extend(it_lock *l, int64_t ttl, redlock_result *r) { return t_done(l, redlock_hiredis_extend(&l->l, ttl), r); }
static int t_rw(it_lock *l, int op, redlock_result *r)
{
    return t_done(l, op == REDLOCK_OP_UPGRADE ? redlock_hiredis_upgrade(&l->l) : redlock_hiredis_downgrade(&l->l), r);
}
static redlock_state t_state(it_lock *l) { return redlock_hiredis_lock_state(&l->l); }
static const char *t_token(it_lock *l) { return redlock_lock_token(&l->l.lock); }
static redlock_lock *t_core(it_lock *l) { return &l->l.lock; }

static void t_idle(it_client *c, int ms)
{
    if (c->h._threaded) redis_nodes__sleep_ms(ms);
    else redlock_hiredis_run(&c->h, ms);
}

static int t_stats(it_client *c, redlock_adapter_stats *out) { return redlock_hiredis_stats(&c->h, out); }
static void t_stats_reset(it_client *c) { redlock_hiredis_stats_reset(&c->h); }
static int t_node_status(it_client *c, int i) { return redlock_hiredis_node_status(&c->h, i, NULL, 0); }
static int t_node_connected(it_client *c, int i) { return redlock_hiredis_node_connected(&c->h, i); }
static int t_node_error(it_client *c, int i, char *buf, size_t n) { return redlock_hiredis_node_status(&c->h, i, buf, n); }

static int t_mode_switches(it_client *c)
{
    int n;
    if (c->h._threaded) pthread_mutex_lock(&c->h._mu);
    n = c->switches;
    if (c->h._threaded) pthread_mutex_unlock(&c->h._mu);
    return n;
}

static int t_lost(it_lock *l)
{
    int n;
    if (l->c->h._threaded) pthread_mutex_lock(&l->c->h._mu);
    n = l->lost;
    /* a loss reported outside a blocking call is the lock's last result
       (the scenarios ask right after it, before another call on the lock) */
    if (n > 0) CHECK_EQ((int)redlock_hiredis_last_result(&l->l)->op, (int)REDLOCK_OP_LOST);
    if (l->c->h._threaded) pthread_mutex_unlock(&l->c->h._mu);
    return n;
}

/* ---- the watchdog thread's own guarantees (hiredis sync only) ---- */

static struct {
    pthread_mutex_t mu;
    long long lost_us;      /* when LOST was reported, 0 before */
} hl = { PTHREAD_MUTEX_INITIALIZER, 0 };

static void hl_on_result(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    if (r->op == REDLOCK_OP_LOST) {
        pthread_mutex_lock(&hl.mu);
        if (!hl.lost_us) hl.lost_us = redlock__hiredis_now_us();
        pthread_mutex_unlock(&hl.mu);
    }
}

static int hl_open(redlock_hiredis *c, redis_nodes *rn, int bad_port)
{
    redlock_hiredis_config o;
    redlock_hiredis_config_init(&o);
    o.node_count = bad_port ? 3 : 2;
    o.node[0].host = o.node[1].host = o.node[2].host = "127.0.0.1";
    o.node[0].port = redis_nodes_port(rn, 0);
    o.node[1].port = redis_nodes_port(rn, 1);
    o.node[2].port = bad_port;
    o.connect_timeout_ms = 1000; /* a blocking connect would hold the thread this long */
    o.watchdog_thread = 1;
    return redlock_hiredis_init(c, &o);
}

/* A configuration with every node of rn (127.0.0.1), defaults otherwise. */
static void hl_config(redlock_hiredis_config *o, redis_nodes *rn)
{
    int i;
    redlock_hiredis_config_init(o);
    o->node_count = rn->n;
    for (i = 0; i < rn->n; i++) {
        o->node[i].host = "127.0.0.1";
        o->node[i].port = redis_nodes_port(rn, i);
    }
}

/* The linger tests' lock on c: key, a 10 s ttl, no callback. */
static void hl_lock(redlock_hiredis *c, redlock_hiredis_lock *lk, const char *key)
{
    redlock_lock_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.key = key;
    lo.ttl_ms = 10000;
    CHECK_EQ(redlock_hiredis_lock_init(c, lk, &lo), REDLOCK_OK);
}

/* A thread that resumes nodes first..last of rn after a delay. */
typedef struct hl_resume {
    redis_nodes *rn;
    int first, last, after_ms;
} hl_resume;

static void *hl_resume_main(void *arg)
{
    hl_resume *r = (hl_resume *)arg;
    int i;
    redis_nodes__sleep_ms(r->after_ms);
    for (i = r->first; i <= r->last; i++) redis_node_resume(r->rn, i);
    return NULL;
}

/* Pauses nodes first..last of rn now and starts the thread that resumes
   them after_ms later (join *t). */
static void hl_pause_for(pthread_t *t, hl_resume *r, redis_nodes *rn, int first, int last, int after_ms)
{
    int i;
    for (i = first; i <= last; i++) redis_node_pause(rn, i);
    r->rn = rn;
    r->first = first;
    r->last = last;
    r->after_ms = after_ms;
    CHECK_EQ(pthread_create(t, NULL, hl_resume_main, r), 0);
}

/* Proves: with one node unreachable (its connects hang) and the other two
   then frozen, LOST is reported when the validity ends, not after the
   thread is done connecting; and the lock never reads HELD past it. The
   node status calls in between leave the thread free to run. */
static void hiredis_lost_on_time(void)
{
    redis_nodes rn;
    it_blackhole b;
    redlock_hiredis c;
    redlock_hiredis_lock lk;
    redlock_lock_opts o;
    long long until_us = 0, late_held = 0, t_end;
    CHECK_EQ(redis_nodes_start(&rn, 2, NULL, NULL), 0);
    CHECK_EQ(it_blackhole_open(&b), 0);
    CHECK_EQ(hl_open(&c, &rn, b.port), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "hiredis:lost-on-time";
    o.ttl_ms = 600;
    o.watchdog = 1;
    o.on_result = hl_on_result;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &o), REDLOCK_OK);
    hl.lost_us = 0;
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    {   /* each status call takes the thread's lock and gives it back: with
           no call after it, the thread renews on its own (every 200 ms) */
        int64_t before = redlock_hiredis_lock_valid_until(&lk), after;
        CHECK_EQ(redlock_hiredis_node_status(&c, 0, NULL, 0), 0);
        redis_nodes__sleep_ms(300);
        after = redlock_hiredis_lock_valid_until(&lk);
        CHECK(after > before);
        CHECK_EQ(redlock_hiredis_node_connected(&c, 0), 1);
        redis_nodes__sleep_ms(300);
        CHECK(redlock_hiredis_lock_valid_until(&lk) > after);
    }
    redis_node_pause(&rn, 0);
    redis_node_pause(&rn, 1);
    t_end = redis_nodes__now_ms() + 3000;
    for (;;) {
        long long lost, now;
        int64_t v = redlock_hiredis_lock_valid_until(&lk);
        redlock_state st = redlock_hiredis_lock_state(&lk);
        now = redlock__hiredis_now_us();
        if (v) until_us = v;
        if (st == REDLOCK_STATE_HELD && until_us && now - until_us > late_held) late_held = now - until_us;
        pthread_mutex_lock(&hl.mu);
        lost = hl.lost_us;
        pthread_mutex_unlock(&hl.mu);
        if (lost || redis_nodes__now_ms() > t_end) break;
        redis_nodes__sleep_ms(1);
    }
    CHECK(hl.lost_us != 0);
    CHECK(until_us != 0);
    if (hl.lost_us - until_us > 30000 || late_held > 30000)
        printf("#   LOST %lld us after the validity; HELD read up to %lld us after it\n",
               hl.lost_us - until_us, late_held);
    CHECK(hl.lost_us - until_us <= 30000);
    CHECK(late_held <= 30000);
    redis_node_resume(&rn, 0);
    redis_node_resume(&rn, 1);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    it_blackhole_close(&b);
    redis_nodes_stop(&rn);
}

typedef struct hl_waiter {
    redlock_hiredis_lock *lk;
    int rc, returned; /* under hl.mu */
} hl_waiter;

static void *hl_acquire_thread(void *arg)
{
    hl_waiter *w = (hl_waiter *)arg;
    int rc = redlock_hiredis_acquire(w->lk);
    pthread_mutex_lock(&hl.mu);
    w->rc = rc;
    w->returned = 1;
    pthread_mutex_unlock(&hl.mu);
    return NULL;
}

static int hl_returned(hl_waiter *w, int *rc)
{
    int r;
    pthread_mutex_lock(&hl.mu);
    r = w->returned;
    *rc = w->rc;
    pthread_mutex_unlock(&hl.mu);
    return r;
}

/* Proves: lock_deinit from another thread ends a blocking acquire that
   waits on that lock with DETACHED, and the waiter never touches the lock
   again (it is freed right after deinit returns). With reinit: lock_init
   on that handle again (another key) ends the wait the same way, and the
   handle then works on its new key. */
static void hl_waiter_woken(int reinit)
{
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_lock holder, *lk = (redlock_hiredis_lock *)malloc(sizeof *lk);
    redlock_lock_opts o;
    pthread_t t;
    hl_waiter w;
    long long until;
    int rc = 1;
    CHECK_EQ(redis_nodes_start(&rn, 2, NULL, NULL), 0);
    CHECK_EQ(hl_open(&c, &rn, 0), REDLOCK_OK);
    it_guard_start(reinit ? "hiredis_deinit_wakes_waiter_on_reinit" : "hiredis_deinit_wakes_waiter");
    memset(&o, 0, sizeof o);
    o.key = "hiredis:deinit-wakes";
    o.ttl_ms = 10000;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &holder, &o), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_acquire(&holder), REDLOCK_OK);
    o.wait_ms = 8000;      /* the waiter keeps retrying for long */
    o.retry_count = 1000;
    o.retry_delay_ms = 20;
    CHECK_EQ(redlock_hiredis_lock_init(&c, lk, &o), REDLOCK_OK);
    w.lk = lk;
    w.rc = 1;
    w.returned = 0;
    CHECK_EQ(pthread_create(&t, NULL, hl_acquire_thread, &w), 0);
    redis_nodes__sleep_ms(150);
    CHECK_EQ(hl_returned(&w, &rc), 0);
    if (reinit) {
        o.key = "hiredis:reinit-wakes";
        CHECK_EQ(redlock_hiredis_lock_init(&c, lk, &o), REDLOCK_OK);
    } else {
        redlock_hiredis_lock_deinit(lk);
        memset(lk, 0xAB, sizeof *lk);
        free(lk);
    }
    until = redis_nodes__now_ms() + 2000;
    while (!hl_returned(&w, &rc) && redis_nodes__now_ms() < until) redis_nodes__sleep_ms(5);
    CHECK_EQ(hl_returned(&w, &rc), 1);
    CHECK_EQ(rc, REDLOCK_ERR_DETACHED);
    it_guard_step("waiter returned");
    if (reinit && hl_returned(&w, &rc)) {
        CHECK_EQ(redlock_hiredis_acquire(lk), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_release(lk), REDLOCK_OK);
        redlock_hiredis_lock_deinit(lk);
    }
    CHECK_EQ(redlock_hiredis_release(&holder), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&holder);
    redlock_hiredis_deinit(&c); /* wakes a waiter that is still stuck (the bug) */
    pthread_join(t, NULL);
    it_guard_step("deinit");
    it_guard_stop();
    if (reinit) free(lk);
    redis_nodes_stop(&rn);
}

/* Another thread's calls of the functions documented thread-safe that
   read what the watchdog thread writes: redlock_hiredis_run (the thread's
   callback depth) and redlock_hiredis_last_result (the result of a loss),
   reading the result's fields, until told to stop. */
typedef struct hl_reader {
    redlock_hiredis *c;
    redlock_hiredis_lock *lk;
    int stop;   /* under hl.mu */
    long seen;  /* LOST results read */
} hl_reader;

static void *hl_reader_main(void *arg)
{
    hl_reader *r = (hl_reader *)arg;
    for (;;) {
        const redlock_result *res;
        int stop;
        pthread_mutex_lock(&hl.mu);
        stop = r->stop;
        pthread_mutex_unlock(&hl.mu);
        if (stop) break;
        CHECK_EQ(redlock_hiredis_run(r->c, 0), REDLOCK_OK);
        res = redlock_hiredis_last_result(r->lk);
        if (res->op == REDLOCK_OP_LOST && res->status != REDLOCK_OK) r->seen++;
        redis_nodes__sleep_ms(1);
    }
    return NULL;
}

static void hl_quiet_event(void *user, const redlock_event *ev)
{
    (void)user;
    (void)ev;
}

/* Proves (under ThreadSanitizer, check-tsan-hiredis): redlock_hiredis_run
   and redlock_hiredis_last_result called on another thread share nothing
   unguarded with the watchdog thread, while it renews a lock (its events
   run callbacks) and then reports the lock's loss (its key deleted on the
   node) as the lock's last result, which the other thread then reads. */
static void hiredis_watchdog_getters(void)
{
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo;
    hl_reader r;
    pthread_t t;
    char out[64];
    long long until;
    CHECK_EQ(redis_nodes_start(&rn, 1, NULL, NULL), 0);
    hl_config(&o, &rn);
    o.watchdog_thread = 1;
    o.on_event = hl_quiet_event; /* callbacks on the thread: its depth changes */
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    memset(&lo, 0, sizeof lo);
    lo.key = "hiredis:getters";
    lo.ttl_ms = 300;
    lo.watchdog = 1;
    lo.on_result = hl_on_result;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    hl.lost_us = 0;
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    memset(&r, 0, sizeof r);
    r.c = &c;
    r.lk = &lk;
    CHECK_EQ(pthread_create(&t, NULL, hl_reader_main, &r), 0);
    redis_nodes__sleep_ms(250); /* renewals meanwhile */
    CHECK_EQ(redis_nodes_cmd(&rn, 0, out, sizeof out, "DEL", "hiredis:getters", (char *)NULL), 0);
    until = redis_nodes__now_ms() + 3000;
    for (;;) {
        long long lost;
        pthread_mutex_lock(&hl.mu);
        lost = hl.lost_us;
        pthread_mutex_unlock(&hl.mu);
        if (lost || redis_nodes__now_ms() > until) break;
        redis_nodes__sleep_ms(5);
    }
    redis_nodes__sleep_ms(50); /* the reader reads the loss */
    pthread_mutex_lock(&hl.mu);
    r.stop = 1;
    pthread_mutex_unlock(&hl.mu);
    pthread_join(t, NULL);
    CHECK(hl.lost_us != 0);
    CHECK(r.seen > 0);
    CHECK_EQ((int)redlock_hiredis_last_result(&lk)->op, (int)REDLOCK_OP_LOST);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_nodes_stop(&rn);
}
static void hiredis_deinit_wakes_waiter(void) { hl_waiter_woken(0); }
static void hiredis_deinit_wakes_waiter_on_reinit(void) { hl_waiter_woken(1); }

/* Proves: a node on a Unix socket, given as unix_path (or, the older
   form, as a host starting with '/'), with the config's db for every node. */
static void hiredis_unix_path(void)
{
    redis_nodes rn;
    char dir[] = "/tmp/redlock-hsock-XXXXXX", path[128], out[128];
    redlock_hiredis_config o;
    redlock_hiredis c;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo;
    int form;
    if (redis_nodes_start_unix(&rn, dir, path, sizeof path) != 0) { CHECK(0); return; }
    for (form = 0; form < 2; form++) {
        redlock_hiredis_config_init(&o);
        o.node_count = 1;
        o.node[0].port = 1; /* not used: the socket path wins */
        if (form == 0) o.node[0].unix_path = path;
        else o.node[0].host = path;
        o.db = 4;
        CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
        memset(&lo, 0, sizeof lo);
        lo.key = "hiredis-unix";
        lo.ttl_ms = 5000;
        CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
        {
            char e[128];
            int st = redlock_hiredis_node_status(&c, 0, e, sizeof e);
            if (st) printf("#   node 0: %s (%s)\n", redlock_strerror(st), e);
        }
        CHECK_EQ(redlock_hiredis_last_result(&lk)->votes, 1);
        redis_nodes_cmd(&rn, 0, out, sizeof out, "EVAL", "redis.call('SELECT', 4) return redis.call('GET', KEYS[1])",
                        "1", "hiredis-unix", (char *)NULL);
        CHECK_STR(out, redlock_lock_token(&lk.lock));
        CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
        redlock_hiredis_lock_deinit(&lk);
        redlock_hiredis_deinit(&c);
    }
    redis_nodes_stop_unix(&rn, dir, path);
}

/* Proves: a port outside 1..65535 is refused at init (0 means 6379). */
static void hiredis_port_range(void)
{
    static const int bad[] = { 70000, 65536, -1 };
    redlock_hiredis c;
    redlock_hiredis_config o;
    size_t k;
    redlock_hiredis_config_init(&o);
    /* the documented defaults */
    CHECK_EQ(o.node_count, 0);
    CHECK_EQ(o.connect_timeout_ms, 1000);
    CHECK_EQ(o.command_timeout_ms, 1000);
    CHECK_EQ(o.reconnect_delay_ms, 100);
    CHECK(o.core.node_count == 1 && o.core.node_timeout_ms > 0); /* redlock_config_init's */
    redlock_hiredis_lock_deinit(NULL); /* harmless */
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        o.node[0].port = bad[k];
        CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_ERR_INVALID);
    }
    o.node[0].port = 0;
    o.node_count = 0;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_ERR_NODES);
    o.node_count = REDLOCK_MAX_NODES + 1;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_ERR_NODES);
}

/* Proves: a blocking call on a lock whose blocking call is still waiting
   (here: from its own on_result, or from on_event) says BUSY instead of
   waiting on itself. */
static redlock_hiredis_lock *inner_lock;
static int inner_rc = 1;
static int inner_run_rc = 1;
static void inner_result(redlock_lock *l, const redlock_result *r)
{
    (void)l;
    if (r->op == REDLOCK_OP_ACQUIRE && inner_lock) {
        inner_rc = redlock_hiredis_release(inner_lock);
        inner_run_rc = redlock_hiredis_run(inner_lock->_client, 0);
        inner_lock = NULL;
    }
}
/* ... and from on_event (the first event of the acquire) the same. */
static redlock_hiredis_lock *event_lock;
static int event_rc = 1;
static void inner_event(void *user, const redlock_event *ev)
{
    (void)user;
    (void)ev;
    if (event_lock) {
        event_rc = redlock_hiredis_extend(event_lock, 0);
        event_lock = NULL;
    }
}
static void hiredis_busy_in_callback(void)
{
    redis_nodes rn;
    int threaded;
    CHECK_EQ(redis_nodes_start(&rn, 1, NULL, NULL), 0);
    /* without the watchdog thread the callback depth says so; with it, the
       error-checking mutex the callback already holds */
    for (threaded = 0; threaded < 2; threaded++) {
        redlock_hiredis c;
        redlock_hiredis_config o;
        redlock_hiredis_lock lk;
        redlock_lock_opts lo;
        redlock_hiredis_config_init(&o);
        o.node_count = 1;
        o.node[0].host = "127.0.0.1";
        o.node[0].port = redis_nodes_port(&rn, 0);
        o.watchdog_thread = threaded;
        o.on_event = inner_event;
        CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
        memset(&lo, 0, sizeof lo);
        lo.key = "hiredis:busy";
        lo.ttl_ms = 5000;
        lo.on_result = inner_result;
        CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
        inner_lock = event_lock = &lk;
        inner_rc = inner_run_rc = event_rc = 12345;
        CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
        CHECK_EQ(inner_rc, REDLOCK_ERR_BUSY);
        CHECK_EQ(event_rc, REDLOCK_ERR_BUSY);
        if (!threaded) CHECK_EQ(inner_run_rc, REDLOCK_ERR_BUSY); /* with the thread, run() has nothing to do */
        CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
        redlock_hiredis_lock_deinit(&lk);
        redlock_hiredis_deinit(&c);
    }
    redis_nodes_stop(&rn);
}

/* Proves: a connect that never completes (a listener whose accept queue is
   full) is given up after connect_timeout_ms with CONNECT and its message
   (0: after the default 1000 ms); the acquire meanwhile ends without that
   node's vote. */
static void hiredis_connect_timeout(void)
{
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo;
    char err[64];
    long long t0, t1;
    int lfd, filler, port = hostile_full_backlog(&lfd, &filler);
    CHECK(port > 0);
    redlock_hiredis_config_init(&o);
    o.node_count = 1;
    o.node[0].port = port;
    o.connect_timeout_ms = 200;
    o.command_timeout_ms = 5000;
    o.core.node_timeout_ms = 2000;
    o.core.retry_count = -1;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    memset(&lo, 0, sizeof lo);
    lo.key = "hiredis:connect-timeout";
    lo.ttl_ms = 5000;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    t0 = redis_nodes__now_ms();
    CHECK(redlock_hiredis_acquire(&lk) != REDLOCK_OK);
    t1 = redis_nodes__now_ms();
    CHECK(t1 - t0 >= 150 && t1 - t0 < 1500); /* the connect timeout, not the round's 2 s */
    CHECK_EQ(redlock_hiredis_node_status(&c, 0, err, sizeof err), REDLOCK_ERR_CONNECT);
    CHECK_STR(err, "connect timeout");
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    /* connect_timeout_ms 0: the default, 1000 ms */
    o.connect_timeout_ms = 0;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    t0 = redis_nodes__now_ms();
    CHECK(redlock_hiredis_acquire(&lk) != REDLOCK_OK);
    t1 = redis_nodes__now_ms();
    CHECK(t1 - t0 >= 900 && t1 - t0 < 1900);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    close(filler);
    close(lfd);
}

/* Proves: a node whose name does not resolve fails at once with CONNECT
   and a message, costs only its own vote, and the others still decide. */
static void hiredis_unresolvable(void)
{
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo;
    char text[128];
    long long t0;
    CHECK_EQ(redis_nodes_start(&rn, 2, NULL, NULL), 0);
    redlock_hiredis_config_init(&o);
    o.node_count = 3;
    o.node[0].host = "host.invalid";
    o.node[0].port = 6379;
    o.node[1].port = redis_nodes_port(&rn, 0);
    o.node[2].port = redis_nodes_port(&rn, 1);
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    memset(&lo, 0, sizeof lo);
    lo.key = "hiredis:unresolvable";
    lo.ttl_ms = 5000;
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    t0 = redis_nodes__now_ms();
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    CHECK(redis_nodes__now_ms() - t0 < 1000);
    text[0] = 0;
    CHECK_EQ(redlock_hiredis_node_status(&c, 0, text, sizeof text), REDLOCK_ERR_CONNECT);
    CHECK(text[0] != 0);
    CHECK_EQ(redlock_hiredis_node_connected(&c, 0), 0);
    CHECK_EQ(redlock_hiredis_node_status(&c, 1, NULL, 0), 0);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_nodes_stop(&rn);
}

/* Proves: the getters refuse what is not theirs (NULL, a node out of
   range, a detached lock) with the documented values, and the error text
   is cut to the buffer and terminated. */
static void hiredis_api_guards(void)
{
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo;
    char buf[8];
    int port = hostile_closed_port();
    redlock_hiredis_config_init(&o);
    o.node_count = 2;
    o.node[0].host = o.node[1].host = "127.0.0.1";
    o.node[0].port = o.node[1].port = port;
    CHECK_EQ(redlock_hiredis_init(NULL, &o), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_acquire(NULL), REDLOCK_ERR_INVALID); /* no lock */
    CHECK_EQ(redlock_hiredis_release(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_extend(NULL, 1000), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_init(&c, NULL), REDLOCK_ERR_INVALID);
    {   /* a negative timeout or delay */
        int k;
        for (k = 0; k < 3; k++) {
            redlock_hiredis_config bad = o;
            if (k == 0) bad.connect_timeout_ms = -1;
            if (k == 1) bad.command_timeout_ms = -1;
            if (k == 2) bad.reconnect_delay_ms = -1;
            CHECK_EQ(redlock_hiredis_init(&c, &bad), REDLOCK_ERR_INVALID);
        }
    }
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    redlock_hiredis_run(&c, 50); /* the connects fail */
    CHECK_EQ(redlock_hiredis_node_status(NULL, 0, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_node_status(&c, -1, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_node_status(&c, 2, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_node_connected(&c, 2), 0);
    {   /* at the maximum node count, the first index past it is refused too
           (the ASan build sees any read past the node array) */
        static redlock_hiredis c16;
        redlock_hiredis_config o16 = o;
        int j;
        o16.node_count = REDLOCK_MAX_NODES;
        for (j = 0; j < REDLOCK_MAX_NODES; j++) o16.node[j] = o.node[0];
        CHECK_EQ(redlock_hiredis_init(&c16, &o16), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_node_connected(&c16, REDLOCK_MAX_NODES), 0);
        CHECK_EQ(redlock_hiredis_node_status(&c16, REDLOCK_MAX_NODES, NULL, 0), REDLOCK_ERR_INVALID);
        redlock_hiredis_deinit(&c16);
    }
    CHECK_EQ(redlock_hiredis_node_connected(NULL, 0), 0);
    memset(buf, 'z', sizeof buf);
    CHECK_EQ(redlock_hiredis_node_status(&c, 1, buf, 4), REDLOCK_ERR_CONNECT);
    CHECK_EQ(strlen(buf), 3);
    CHECK_EQ(buf[4], 'z');
    {   /* a buffer exactly the text's length: one character less, terminated */
        char full[128], exact[128];
        size_t len;
        CHECK_EQ(redlock_hiredis_node_status(&c, 1, full, sizeof full), REDLOCK_ERR_CONNECT);
        len = strlen(full);
        CHECK(len > 1 && len < sizeof exact);
        memset(exact, 'z', sizeof exact);
        CHECK_EQ(redlock_hiredis_node_status(&c, 1, exact, len), REDLOCK_ERR_CONNECT);
        CHECK_EQ(strlen(exact), len - 1);
        CHECK_EQ(exact[len], 'z');
    }
    CHECK_EQ(redlock_hiredis_run(NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_run(&c, -1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_lock_valid_until(NULL), 0);
    CHECK_EQ(redlock_hiredis_lock_state(NULL), REDLOCK_STATE_IDLE);
    memset(&lo, 0, sizeof lo);
    lo.key = "guards";
    lo.ttl_ms = 1000;
    CHECK_EQ(redlock_hiredis_lock_init(NULL, &lk, &lo), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_lock_init(&c, NULL, &lo), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_hiredis_lock_init(&c, &lk, &lo), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&lk);
    CHECK_EQ(redlock_hiredis_lock_valid_until(&lk), 0);
    CHECK_EQ(redlock_hiredis_lock_state(&lk), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_hiredis_extend(&lk, 1000), REDLOCK_ERR_DETACHED);
    redlock_hiredis_deinit(&c);
}

/* Proves: after a blocking call has its result, finishing the stragglers
   (the linger) takes at most about one node timeout, even when a node
   never answers and its command timeout is long. */
static void hiredis_linger_bounded(void)
{
    redis_nodes rn;
    hostile h;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    long long t0;
    CHECK_EQ(redis_nodes_start(&rn, 2, NULL, NULL), 0);
    CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
    redlock_hiredis_config_init(&o);
    o.node_count = 3;
    o.node[0].host = o.node[1].host = o.node[2].host = "127.0.0.1";
    o.node[0].port = redis_nodes_port(&rn, 0);
    o.node[1].port = redis_nodes_port(&rn, 1);
    o.node[2].port = h.port;
    o.command_timeout_ms = 5000;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    hl_lock(&c, &lk, "hiredis:linger");
    t0 = redis_nodes__now_ms();
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    if (redis_nodes__now_ms() - t0 > 1500) printf("#   acquire + release took %lld ms\n", redis_nodes__now_ms() - t0);
    CHECK(redis_nodes__now_ms() - t0 <= 1500);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    hostile_stop(&h);
    redis_nodes_stop(&rn);
}

/* Proves: the follow-up steps still owed when a blocking call has its
   result are done before it returns. On nodes without scripts, taking a
   key back is GET, then DEL. Nodes 1 and 2 hold the key for someone else
   and answer 30 ms late (paused); node 0 grants it at once. The acquire is
   LOCKED when 1 and 2 say no, and the core takes node 0's key back: GET,
   then DEL, sent and answered before acquire returns, so node 0 is clean
   at once, with no further call. */
static void hiredis_linger_finishes(void)
{
    static const char key[] = "hiredis:linger-finishes";
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    hl_resume resume;
    pthread_t t;
    char out[64];
    int i;
    CHECK_EQ(redis_nodes_start(&rn, 3, NULL, "user u on >pw ~* &* +@all -@scripting\n"), 0);
    hl_config(&o, &rn);
    o.username = "u";
    o.password = "pw";
    o.core.node_timeout_ms = 400; /* well past the 30 ms pause */
    o.core.retry_count = -1;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    hl_lock(&c, &lk, key);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK); /* every node found without scripts */
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    rn.auth_user = "u";
    rn.auth_pass = "pw";
    for (i = 1; i < 3; i++)
        CHECK_EQ(redis_nodes_cmd(&rn, i, out, sizeof out, "SET", key, "someone-else", "PX", "10000", (char *)NULL), 0);
    hl_pause_for(&t, &resume, &rn, 1, 2, 30);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_LOCKED);
    pthread_join(t, NULL);
    CHECK_EQ(redis_nodes_cmd(&rn, 0, out, sizeof out, "EXISTS", key, (char *)NULL), 0);
    CHECK_STR(out, ":0");
    rn.auth_user = rn.auth_pass = NULL;
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_nodes_stop(&rn);
}

/* Proves: with nothing owed, a blocking call returns at once: five
   acquire + release cycles on a healthy node take far less than one node
   timeout (2 s), the linger's bound. */
static void hiredis_no_needless_linger(void)
{
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    long long t0, took;
    int k;
    CHECK_EQ(redis_nodes_start(&rn, 1, NULL, NULL), 0);
    hl_config(&o, &rn);
    o.core.node_timeout_ms = 2000;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    hl_lock(&c, &lk, "hiredis:no-linger");
    t0 = redis_nodes__now_ms();
    for (k = 0; k < 5; k++) {
        CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    }
    took = redis_nodes__now_ms() - t0;
    if (took >= 1000) printf("#   5 cycles took %lld ms\n", took);
    CHECK(took < 1000);
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_nodes_stop(&rn);
}

/* Proves: a blocking call does not wait for a straggler whose reply the
   core will not act on. Node 2 is paused for 600 ms; the acquire and the
   release each return on the two others' votes, long before the pause
   (and the 1 s node timeout) ends, where reading every reply still owed
   would have taken until node 2 answered. The commands were written:
   once node 2 resumes, the next call reads its late replies, and its key
   is gone (the release's EVALSHA ran there after the SET). Before that,
   one cycle with every node up, so that the release script has run on
   each (until then a late SET is waited for: see redlock_lock_followup). */
static void hiredis_no_wait_for_stragglers(void)
{
    static const char key[] = "hiredis:stragglers";
    redis_nodes rn;
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    hl_resume resume;
    pthread_t t;
    char out[64];
    long long t0, took;
    CHECK_EQ(redis_nodes_start(&rn, 3, NULL, NULL), 0);
    hl_config(&o, &rn);
    o.core.node_timeout_ms = 1000;
    o.command_timeout_ms = 5000;
    o.core.retry_count = -1;
    CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
    hl_lock(&c, &lk, key);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    hl_pause_for(&t, &resume, &rn, 2, 2, 600);
    t0 = redis_nodes__now_ms();
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    took = redis_nodes__now_ms() - t0;
    if (took >= 400) printf("#   acquire + release took %lld ms\n", took);
    CHECK(took < 400);
    pthread_join(t, NULL);
    CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK); /* reads node 2's late replies first */
    CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
    redis_nodes__sleep_ms(50);
    CHECK_EQ(redis_nodes_cmd(&rn, 2, out, sizeof out, "EXISTS", key, (char *)NULL), 0);
    CHECK_STR(out, ":0");
    redlock_hiredis_lock_deinit(&lk);
    redlock_hiredis_deinit(&c);
    redis_nodes_stop(&rn);
}

/* Proves: a node whose connect failed is not tried again before
   reconnect_delay_ms, whether the connect failed at once (a Unix socket
   nobody listens on) or later (TCP); once the delay is over, it is. */
static void hiredis_reconnect_delay(void)
{
    int form;
    for (form = 0; form < 2; form++) {
        redis_nodes rn;
        char dir[] = "/tmp/redlock-hdelay-XXXXXX", path[128];
        redlock_hiredis c;
        redlock_hiredis_config o;
        redlock_hiredis_lock lk;
        long long start;
        if (form == 0 ? redis_nodes_start_unix(&rn, dir, path, sizeof path) : redis_nodes_start(&rn, 1, NULL, NULL)) {
            CHECK(0);
            return;
        }
        redis_node_kill(&rn, 0);
        hl_config(&o, &rn);
        if (form == 0) o.node[0].unix_path = path;
        o.reconnect_delay_ms = 1500;
        o.core.retry_count = -1;
        start = redis_nodes__now_ms();
        CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK_OK);
        hl_lock(&c, &lk, "hiredis:reconnect-delay");
        CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_NO_QUORUM); /* the first connect fails */
        CHECK_EQ(redis_node_restart(&rn, 0), 0);
        if (redis_nodes__now_ms() - start < 1000) {
            CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_ERR_NO_QUORUM); /* not tried again yet */
            CHECK_EQ(redlock_hiredis_node_status(&c, 0, NULL, 0), REDLOCK_ERR_CONNECT);
        }
        redis_nodes__sleep_ms(1600 - (long)(redis_nodes__now_ms() - start));
        CHECK_EQ(redlock_hiredis_acquire(&lk), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_release(&lk), REDLOCK_OK);
        redlock_hiredis_lock_deinit(&lk);
        redlock_hiredis_deinit(&c);
        if (form == 0) redis_nodes_stop_unix(&rn, dir, path);
        else redis_nodes_stop(&rn);
    }
}

/* Without TLS built in (REDLOCK_HIREDIS_TLS on hiredis 1.x), a node
   that asks for TLS, or a configuration that does, is refused at init
   with REDLOCK_ERR_NO_TLS: never spoken to in plain text. */
static void hiredis_tls_not_built(void)
{
    redlock_hiredis_config o;
    static redlock_hiredis c;
    int k;
    for (k = 0; k < 2; k++) {
        redlock_hiredis_config_init(&o);
        o.node_count = 2;
        o.node[0].port = 6379;
        o.node[1].port = 6380;
        if (k == 0) o.tls.enable = 1;
        else o.node[1].tls.enable = 1;
        CHECK_EQ(redlock_hiredis_init(&c, &o), REDLOCK__HIREDIS_HAS_TLS ? REDLOCK_OK : REDLOCK_ERR_NO_TLS);
        if (REDLOCK__HIREDIS_HAS_TLS) redlock_hiredis_deinit(&c);
    }
}

/* ---- a Redis Cluster node (redis_cluster.h; the IT_CLUSTER build) ---- */
#ifdef IT_CLUSTER

/* A key (prefix + a number) that master `want` (1 or 2: node 0 is a
   replica after it_cluster_failover) serves now (slots may have moved:
   as node 0's MOVED says); its slot in *slot. */
static void cl_key_on(const redis_cluster *rc, int want, const char *prefix, char *key, size_t cap, unsigned *slot)
{
    int n;
    for (n = 0; n < 1000; n++) {
        snprintf(key, cap, "%s%d", prefix, n);
        *slot = redlock_cluster_slot(key, strlen(key));
        if (redis_cluster_owner_of(rc, key) == want) return;
    }
}

/* GET key on cluster master i (no redirection: what that server holds). */
static void cl_get(const redis_cluster *rc, int i, const char *key, char *out, size_t cap)
{
    const char *argv[3];
    argv[0] = "GET", argv[1] = key, argv[2] = NULL;
    if (redis_nodes_queryv(redis_cluster_port(rc, i), NULL, NULL, 1000, argv, out, cap) != 0) snprintf(out, cap, "?");
}

/* A client of one cluster node seeded by master `seed` (a
   redis-cluster:// URL; threaded: the watchdog thread), and a lock on it:
   0, or the parse's, init's or lock_init's status. */
static int cl_client(redlock_hiredis *c, const redis_cluster *rc, int seed, int threaded, redlock_hiredis_lock *l,
                     const redlock_lock_opts *lo)
{
    redlock_hiredis_config cfg;
    void *mem = NULL;
    char list[96], err[256];
    int rc_;
    redlock_hiredis_config_init(&cfg);
    snprintf(list, sizeof list, "redis-cluster://127.0.0.1:%d", redis_cluster_port(rc, seed));
    if ((rc_ = redlock_parse_nodes(cfg.node, &cfg.node_count, list, &mem, err, sizeof err)) != 0) {
        printf("#   %s\n", err);
        return rc_;
    }
    cfg.core.node_timeout_ms = 500;
    cfg.core.retry_delay_ms = 100;
    cfg.watchdog_thread = threaded;
    rc_ = redlock_hiredis_init(c, &cfg);
    redlock_free_nodes(mem);
    if (rc_ != 0) return rc_;
    if ((rc_ = redlock_hiredis_lock_init(c, l, lo)) != 0) redlock_hiredis_deinit(c);
    return rc_;
}

/* Proves, on the cluster of the shared scenarios (durable: every grant
   counts at once; masters 1 and 2 as started, master 0 a replica since
   it_cluster_failover) given as ONE node by a URL that names only master
   2: a lock whose key is on master 1, then on master 2, is acquired
   there at the first attempt (master 1's: the seed's MOVED followed, not
   a retry), the key holding the token on that master only, and released
   there; then, with the watchdog thread, a lock on master 1 is renewed
   by the thread past its ttl (the thread opened that master's
   connection once the map named it) and released. */
static void hiredis_cluster_routing(void)
{
    const redis_cluster *rc = &it_cl;
    redlock_hiredis c;
    redlock_hiredis_lock l;
    redlock_lock_opts lo;
    char key[64], out[128];
    unsigned slot;
    int m;
    for (m = 1; m < 3; m++) {
        memset(&lo, 0, sizeof lo);
        cl_key_on(rc, m, "hcl-route-", key, sizeof key, &slot);
        lo.key = key;
        lo.ttl_ms = 10000;
        CHECK_EQ(cl_client(&c, rc, 2, 0, &l, &lo), 0);
        CHECK_EQ(redlock_hiredis_acquire(&l), REDLOCK_OK);
        CHECK_EQ(redlock_hiredis_last_result(&l)->attempts, 1); /* redirected, not retried */
        cl_get(rc, m, key, out, sizeof out);
        CHECK_STR(out, redlock_lock_token(&l.lock));
        cl_get(rc, 3 - m, key, out, sizeof out);
        CHECK(strncmp(out, "-MOVED", 6) == 0); /* not there: the other master redirects */
        CHECK_EQ(redlock_hiredis_release(&l), REDLOCK_OK);
        cl_get(rc, m, key, out, sizeof out);
        CHECK_STR(out, "$-1");
        CHECK_EQ(redlock_hiredis_node_status(&c, 0, NULL, 0), 0);
        CHECK(redlock_hiredis_node_connected(&c, 0));
        redlock_hiredis_lock_deinit(&l);
        redlock_hiredis_deinit(&c);
    }
    memset(&lo, 0, sizeof lo);
    cl_key_on(rc, 1, "hcl-watchdog-", key, sizeof key, &slot);
    lo.key = key;
    lo.ttl_ms = 600;
    lo.watchdog = 1;
    CHECK_EQ(cl_client(&c, rc, 2, 1, &l, &lo), 0);
    CHECK_EQ(redlock_hiredis_acquire(&l), REDLOCK_OK);
    redis_nodes__sleep_ms(1500); /* renewed by the thread, on master 1 */
    CHECK_EQ(redlock_hiredis_lock_state(&l), REDLOCK_STATE_HELD);
    cl_get(rc, 1, key, out, sizeof out);
    CHECK_STR(out, redlock_lock_token(&l.lock));
    CHECK_EQ(redlock_hiredis_release(&l), REDLOCK_OK);
    cl_get(rc, 1, key, out, sizeof out);
    CHECK_STR(out, "$-1");
    redlock_hiredis_lock_deinit(&l);
    redlock_hiredis_deinit(&c);
}

/* CONFIG SET of master i: name to value. */
static void cl_config(const redis_cluster *rc, int i, const char *name, const char *value)
{
    const char *argv[5];
    char out[128];
    argv[0] = "CONFIG", argv[1] = "SET", argv[2] = name, argv[3] = value, argv[4] = NULL;
    CHECK_EQ(redis_nodes_queryv(redis_cluster_port(rc, i), NULL, NULL, 1000, argv, out, sizeof out), 0);
    CHECK_STR(out, "+OK");
}

/* Proves: a cluster node may evict what its worst master may (redlock.h
   section 4, Eviction): with master 1 on volatile-lru, a client seeded
   by it that locks a key there and then one on master 2 (noeviction,
   whose INFO comes last) still reports
   the cluster node as VOLATILE, its policy named; told each master's in
   turn, the last one would hide it. */
static void hiredis_cluster_evicts(void)
{
    const redis_cluster *rc = &it_cl;
    redlock_hiredis c;
    redlock_hiredis_lock l;
    redlock_lock_opts lo;
    char key[64], policy[32];
    unsigned slot;
    cl_config(rc, 1, "maxmemory", "100mb");
    cl_config(rc, 1, "maxmemory-policy", "volatile-lru");
    memset(&lo, 0, sizeof lo);
    cl_key_on(rc, 1, "hcl-evicts-", key, sizeof key, &slot);
    lo.key = key;
    lo.ttl_ms = 10000;
    lo.refuse_evicting = -1; /* counted: this test reads the report */
    CHECK_EQ(cl_client(&c, rc, 1, 0, &l, &lo), 0); /* master 1's INFO first, master 2's last */
    CHECK_EQ(redlock_hiredis_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_release(&l), REDLOCK_OK);
    cl_key_on(rc, 2, "hcl-evicts-", key, sizeof key, &slot);
    CHECK_EQ(redlock_hiredis_lock_init(&c, &l, &lo), 0);
    CHECK_EQ(redlock_hiredis_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_release(&l), REDLOCK_OK);
    CHECK_EQ(redlock_hiredis_node_policy(&c, 0, policy, sizeof policy), REDLOCK_EVICTS_VOLATILE);
    CHECK_STR(policy, "volatile-lru");
    redlock_hiredis_lock_deinit(&l);
    redlock_hiredis_deinit(&c);
    cl_config(rc, 1, "maxmemory-policy", "noeviction");
    cl_config(rc, 1, "maxmemory", "0");
}

typedef struct cl_waiter {
    redlock_hiredis_lock *l;
    int rc;
    long long done_ms;
    pthread_t th;
} cl_waiter;

static void *cl_waiter_main(void *arg)
{
    cl_waiter *w = (cl_waiter *)arg;
    w->rc = redlock_hiredis_acquire(w->l);
    w->done_ms = it_now_ms();
    return NULL;
}

/* A client of one cluster node seeded by master `seed` that never reads
   INFO (cfg.info_off: it cannot know whether the servers have sharded
   pub/sub). 0, or the parse's or init's status. */
static int cl_client_no_info(redlock_hiredis *c, const redis_cluster *rc, int seed)
{
    redlock_hiredis_config cfg;
    void *mem = NULL;
    char list[96], err[256];
    int rc_;
    redlock_hiredis_config_init(&cfg);
    snprintf(list, sizeof list, "redis-cluster://127.0.0.1:%d", redis_cluster_port(rc, seed));
    if ((rc_ = redlock_parse_nodes(cfg.node, &cfg.node_count, list, &mem, err, sizeof err)) != 0) return rc_;
    cfg.core.node_timeout_ms = 500;
    cfg.info_off = 1;
    rc_ = redlock_hiredis_init(c, &cfg);
    redlock_free_nodes(mem);
    return rc_;
}

/* Proves the fallback: clients that never read INFO are not sharded
   (the core not told: releases PUBLISH) and keep the plain subscriber on
   their first seed (master 2): a waiter for a key of master 1 is a
   SUBSCRIBE there, no SSUBSCRIBE on master 1, and the release, heard
   cluster-wide, wakes it well before its 2 s retry delay. */
static void hiredis_cluster_plain_notify(void)
{
    const redis_cluster *rc = &it_cl;
    redlock_hiredis ca, cb;
    redlock_hiredis_lock la, lb;
    redlock_lock_opts lo;
    cl_waiter w;
    char key[64];
    unsigned slot;
    long long until, released;
    int heard = 0;
    memset(&lo, 0, sizeof lo);
    cl_key_on(rc, 1, "hcl-plain-", key, sizeof key, &slot);
    lo.key = key;
    lo.ttl_ms = 5000;
    lo.retry_count = 5;
    lo.retry_delay_ms = 2000;
    lo.retry_jitter_ms = 1;
    CHECK_EQ(cl_client_no_info(&ca, rc, 2), 0);
    CHECK_EQ(cl_client_no_info(&cb, rc, 2), 0);
    CHECK_EQ(redlock_hiredis_lock_init(&ca, &la, &lo), 0);
    CHECK_EQ(redlock_hiredis_lock_init(&cb, &lb, &lo), 0);
    CHECK_EQ(redlock_hiredis_acquire(&la), REDLOCK_OK);
    memset(&w, 0, sizeof w);
    w.l = &lb;
    pthread_create(&w.th, NULL, cl_waiter_main, &w);
    for (until = it_now_ms() + 1500; !heard && it_now_ms() < until;)
        if (!(heard = it_cluster_numsub(2, key) == 1)) redis_nodes__sleep_ms(5);
    CHECK(heard);
    CHECK_EQ(it_cluster_shardnumsub(1, key), 0);
    released = it_now_ms();
    CHECK_EQ(redlock_hiredis_release(&la), REDLOCK_OK);
    pthread_join(w.th, NULL);
    CHECK_EQ(w.rc, REDLOCK_OK);
    CHECK(redlock_hiredis_last_result(&lb)->attempts >= 2); /* it waited */
    printf("#   plain subscriber on the first seed: woken %lld ms after the release (retry delay 2000 ms)\n",
           w.done_ms - released);
    CHECK(w.done_ms - released < 1000);
    CHECK_EQ(redlock_node_sharded(&ca._client, 0), 0);
    CHECK_EQ(redlock_node_sharded(&cb._client, 0), 0);
    CHECK_EQ(redlock_hiredis_release(&lb), REDLOCK_OK);
    redlock_hiredis_lock_deinit(&la);
    redlock_hiredis_lock_deinit(&lb);
    redlock_hiredis_deinit(&ca);
    redlock_hiredis_deinit(&cb);
}

/* This adapter's own cluster scenarios, on it_main_cluster's cluster. */
static void cluster_more(void)
{
    if (it_selected("hiredis_cluster_routing")) RUN(hiredis_cluster_routing);
    if (it_selected("hiredis_cluster_evicts")) RUN(hiredis_cluster_evicts);
    if (it_selected("hiredis_cluster_plain_notify")) RUN(hiredis_cluster_plain_notify);
}

#endif /* IT_CLUSTER */

#ifdef IT_TLS
static void tls_more(void)
{
    if (it_selected("it_tls_sentinel")) RUN(it_tls_sentinel);
    if (it_selected("it_tls_cluster")) RUN(it_tls_cluster);
}
#endif

int main(void)
{
    static const it_ops ops = {
        "hiredis", t_open, t_close, t_lock, t_unlock, t_acquire, t_release, t_extend,
        t_state, t_token, t_idle, t_node_status, t_mode_switches, t_lost, t_node_connected, t_node_error, 1, t_rw, t_reinit, t_core, 1,
        t_stats, t_stats_reset
    };
    int rc;
#ifdef IT_CLUSTER /* a Redis Cluster node: the shared cluster scenarios, then this adapter's */
    (void)it_main;
    rc = it_main_cluster(&ops, cluster_more);
    return rc | CHECK_EXIT();
#endif
#ifdef IT_TLS /* built with REDLOCK_HIREDIS_TLS on hiredis 1.x: the TLS scenarios, a TLS Sentinel group's and cluster's too */
    rc = it_main_tls(&ops, tls_more);
    return rc | CHECK_EXIT();
#endif
    if (it_selected("hiredis_port_range")) RUN(hiredis_port_range);
    if (it_selected("hiredis_tls_not_built")) RUN(hiredis_tls_not_built);
    if (it_selected("hiredis_unix_path")) RUN(hiredis_unix_path);
    if (it_selected("hiredis_busy_in_callback")) RUN(hiredis_busy_in_callback);
    if (it_selected("hiredis_unresolvable")) RUN(hiredis_unresolvable);
    if (it_selected("hiredis_connect_timeout")) RUN(hiredis_connect_timeout);
    if (it_selected("hiredis_api_guards")) RUN(hiredis_api_guards);
    if (it_selected("hiredis_linger_bounded")) RUN(hiredis_linger_bounded);
    if (it_selected("hiredis_linger_finishes")) RUN(hiredis_linger_finishes);
    if (it_selected("hiredis_no_needless_linger")) RUN(hiredis_no_needless_linger);
    if (it_selected("hiredis_no_wait_for_stragglers")) RUN(hiredis_no_wait_for_stragglers);
    if (it_selected("hiredis_reconnect_delay")) RUN(hiredis_reconnect_delay);
    it_main_sentinel(&ops); /* a Sentinel group (integration.h) */
    IT_RUN(it_sentinel_switch, 1); /* its +switch-master watch */
    rc = it_main(&ops);
    if (it_selected("hiredis_lost_on_time")) RUN(hiredis_lost_on_time);
    if (it_selected("hiredis_deinit_wakes_waiter")) RUN(hiredis_deinit_wakes_waiter);
    if (it_selected("hiredis_watchdog_getters")) RUN(hiredis_watchdog_getters);
    if (it_selected("hiredis_deinit_wakes_waiter_on_reinit")) RUN(hiredis_deinit_wakes_waiter_on_reinit);
    return rc | CHECK_EXIT();
}
