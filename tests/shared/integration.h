/* integration.h - adapter-independent integration scenarios against real
   redis-server processes (tests/shared/redis_nodes.h).

   A test file defines an `it_ops` table that drives one adapter with
   blocking calls, includes this file, and calls it_main(&ops, argc, argv).
   Every scenario runs on 1, 3 and 5 nodes (where it makes sense) and prints
   "ok <adapter>_<scenario>_n<N>" / "not ok ...".  Set IT_ONLY=sub1,sub2 to
   run a subset (e.g. for valgrind), IT_TAG=prefix to prefix the names. The
   whole run is bounded by alarm(). it_main_sentinel(&ops) runs the
   Sentinel scenarios (a group started by redis_group.h), it_main_cluster
   and it_main_tls theirs.
*/
#ifndef IT_INTEGRATION_H
#define IT_INTEGRATION_H

#include "redis_nodes.h"
#include "redis_cluster.h"
#include "redis_group.h"
#include "adapters/redlock_cluster.h"
#include "hostile_server.h"
#include "tcp_proxy.h"
#include "check.h"
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>

/* Built with AddressSanitizer? (gcc says so, clang answers __has_feature) */
#if defined(__SANITIZE_ADDRESS__)
#define IT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IT_ASAN 1
#endif
#endif
#ifndef IT_ASAN
#define IT_ASAN 0
#endif

typedef struct it_setup {
    int n;
    const int *ports;
    const char *user, *pass;
    int db;               /* SELECT this db (0: default) */
    int watchdog_thread;  /* a background thread (or loop) keeps renewing */
    redlock_config core;  /* zero fields: test defaults below */
    /* TLS (it_main_tls): on, what to trust, the client certificate, the
       name to verify (NULL: the host), accept anything */
    int tls;
    const char *tls_ca, *tls_cert, *tls_key, *tls_name;
    int tls_insecure;
    int notify_off;       /* no release notifications (adapters that have them) */
    int cluster;          /* one node: a Redis Cluster, ports[0 .. n-1] its seeds (it_main_cluster) */
    const char *nodes;    /* set: the node list as text (redlock_parse_nodes: a redis-sentinel:// URL,
                             it_main_sentinel), in place of n / ports */
    const char *sentinel; /* one node: the Sentinel group of this name, ports[0 .. n-1] its sentinels */
    const char *host;     /* the nodes' host (NULL: 127.0.0.1) */
} it_setup;

typedef struct it_client it_client;
typedef struct it_lock it_lock;

typedef struct it_ops {
    const char *name;
    it_client *(*open)(const it_setup *s);
    void (*close)(it_client *c);
    it_lock *(*lock)(it_client *c, const redlock_lock_opts *o);
    void (*unlock)(it_lock *l);
    int (*acquire)(it_lock *l, redlock_result *r);
    int (*release)(it_lock *l, redlock_result *r);
    int (*extend)(it_lock *l, int64_t ttl_ms, redlock_result *r);
    redlock_state (*state)(it_lock *l);
    const char *(*token)(it_lock *l);
    void (*idle)(it_client *c, int ms); /* let time pass, driving I/O and timers */
    int (*node_status)(it_client *c, int i);
    int (*mode_switches)(it_client *c); /* EV_MODE_SWITCH events seen */
    int (*lost)(it_lock *l);            /* OP_LOST results seen */
    int (*node_connected)(it_client *c, int i);
    int (*node_error)(it_client *c, int i, char *buf, size_t size); /* status, and its text */
    int notify; /* the adapter subscribes to release notifications while a lock waits */
    int (*rw)(it_lock *l, int op, redlock_result *r); /* REDLOCK_OP_UPGRADE or _DOWNGRADE, blocking */
    int (*reinit)(it_lock *l, const redlock_lock_opts *o); /* the adapter's lock_init on the same handle again */
    redlock_lock *(*core)(it_lock *l); /* the lock's core handle, for calls that do not block */
    int sharded; /* a cluster node's notifications on its masters' shard channels (Redis 7: it_cluster_sharded) */
    int (*stats)(it_client *c, redlock_adapter_stats *out); /* the adapter's statistics (NULL: none) */
    void (*stats_reset)(it_client *c);
} it_ops;

static const it_ops *it;
static int it_n;                 /* nodes of the running scenario */
static redis_nodes it_plain[6], it_authed[6], it_acled[6];
static char it_name[128];
/* it_main_tls: the nodes listen with TLS too and the scenarios use it;
   the certificates (tests/shared/tls_certs.sh) live in it_tls_dir */
static char it_tls_dir[64];

static inline long long it_now_ms(void) { return redis_nodes__now_ms(); }

/* The path of a file of the test certificates ("ca.crt" ...), made once
   per name and kept; "" without TLS. */
static inline const char *it_tls_file(const char *name)
{
    static char path[16][128];
    static int used;
    char want[128];
    int i;
    if (!it_tls_dir[0]) return "";
    snprintf(want, sizeof want, "%s/%s", it_tls_dir, name);
    for (i = 0; i < used; i++)
        if (strcmp(path[i], want) == 0) return path[i];
    if (used == 16) return "";
    memcpy(path[used], want, sizeof want);
    return path[used++];
}

/* The TLS settings of a setup, as every adapter's configuration takes
   them (adapters/redlock_tls.h); off when the setup is plain. */
static inline void it_tls_config(const it_setup *s, redlock_tls *t)
{
    memset(t, 0, sizeof *t);
    t->enable = s->tls;
    t->ca = s->tls_ca;
    t->cert = s->tls_cert;
    t->key = s->tls_key;
    t->server_name = s->tls_name;
    t->insecure_skip_verify = s->tls_insecure;
}

/* The port the adapters connect to: the TLS one under it_main_tls. */
static inline int it_port(const redis_nodes *rn, int i)
{
    return it_tls_dir[0] ? redis_nodes_tls_port(rn, i) : redis_nodes_port(rn, i);
}

static inline void it_defaults(it_setup *s, redis_nodes *rn, int ports[REDIS_NODES_MAX])
{
    int i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < rn->n; i++) ports[i] = it_port(rn, i);
    if (it_tls_dir[0]) {
        s->tls = 1;
        s->tls_ca = it_tls_file("ca.crt");
    }
    s->n = rn->n;
    s->ports = ports;
    redlock_config_init(&s->core);
    s->core.node_count = rn->n;
    s->core.node_timeout_ms = it_tls_dir[0] ? 250 : 50; /* TLS: room for a handshake, under valgrind too */
    s->core.retry_count = 2;
    s->core.retry_delay_ms = 30;
    s->core.retry_jitter_ms = 10;
}

static inline void it_lock_opts(redlock_lock_opts *o, const char *key, int64_t ttl)
{
    memset(o, 0, sizeof *o);
    o->key = key;
    o->ttl_ms = ttl;
}

/* Nodes of rn whose `key` holds `token` right now. */
static inline int it_holders(redis_nodes *rn, const char *key, const char *token)
{
    int i, k = 0;
    for (i = 0; i < rn->n; i++) {
        char out[128];
        if (!redis_node_running(rn, i) || rn->node[i].paused) continue;
        if (redis_nodes_cmd(rn, i, out, sizeof out, "GET", key, (char *)NULL) == 0 &&
            strcmp(out, token) == 0)
            k++;
    }
    return k;
}

/* Waits (up to 300 ms) until `want` nodes hold token; returns the count. */
static inline int it_holders_settle(redis_nodes *rn, const char *key, const char *token, int want)
{
    long long until = redis_nodes__now_ms() + 300;
    int k;
    while ((k = it_holders(rn, key, token)) != want && redis_nodes__now_ms() < until)
        redis_nodes__sleep_ms(5);
    return k;
}

static inline int it_quorum(void) { return it_n / 2 + 1; }

/* Acquires l after nodes restarted (redlock.h section 4, Restarts): while
   a restarted node's grant does not count yet (RESTARTED), or a durable
   node kept an earlier holder's key (LOCKED), tries again, for up to ms
   (the lock's ttl from the restart, and a margin). The last status. */
static inline int it_acquire_after_restart(it_client *c, it_lock *l, long ms)
{
    long long until = it_now_ms() + ms;
    int st;
    while ((st = it->acquire(l, NULL)) != REDLOCK_OK && (st == REDLOCK_ERR_RESTARTED || st == REDLOCK_ERR_LOCKED) &&
           it_now_ms() < until)
        it->idle(c, 50);
    return st;
}

/* The adapters' on_event in the tests: counts mode switches, and prints
   every event when IT_DEBUG is set. */
/* The status of each node's last failed vote in an acquire ([0]) and in
   any other operation ([1]), as the core was told it. */
static int it_vote_status[2][REDLOCK_MAX_NODES];
/* What the core was last told each node may evict (EV_NODE_EVICTS), -1: nothing */
static int it_evicts_told[REDLOCK_MAX_NODES];
/* The nodes each client was told may have lost keys (EV_NODE_RESTARTED):
   the client (who), the node, its redlock_restart and how long ago. */
typedef struct it_restart_event {
    const void *who;
    int node, mode;
    int64_t elapsed_us;
} it_restart_event;
static it_restart_event it_restarts[256];
static int it_nrestarts, it_restarts_dropped;
/* a client's watchdog thread may tell of a restart while another client
   tells of one on the test's thread */
static pthread_mutex_t it_restarts_mu = PTHREAD_MUTEX_INITIALIZER;

static inline void it_note_event(int *switches, const void *who, const redlock_event *ev)
{
    if (ev->type == REDLOCK_EV_MODE_SWITCH) (*switches)++;
    if (ev->type == REDLOCK_EV_NODE_EVICTS && ev->node >= 0 && ev->node < REDLOCK_MAX_NODES && !ev->lock)
        it_evicts_told[ev->node] = ev->mode;
    if (ev->type == REDLOCK_EV_NODE_RESTARTED) pthread_mutex_lock(&it_restarts_mu);
    if (ev->type == REDLOCK_EV_NODE_RESTARTED && it_nrestarts < (int)(sizeof it_restarts / sizeof *it_restarts)) {
        it_restarts[it_nrestarts].who = who;
        it_restarts[it_nrestarts].node = ev->node;
        it_restarts[it_nrestarts].mode = ev->mode;
        it_restarts[it_nrestarts].elapsed_us = ev->elapsed_us;
        it_nrestarts++;
    } else if (ev->type == REDLOCK_EV_NODE_RESTARTED && !it_restarts_dropped++) {
        printf("#   more restart events than the table holds: the rest are not recorded\n");
    }
    if (ev->type == REDLOCK_EV_NODE_RESTARTED) pthread_mutex_unlock(&it_restarts_mu);
    if (ev->type == REDLOCK_EV_VOTE && ev->status != 0 && ev->node >= 0 && ev->node < REDLOCK_MAX_NODES)
        it_vote_status[ev->op != REDLOCK_OP_ACQUIRE][ev->node] = ev->status;
    if (getenv("IT_DEBUG"))
        printf("#   [%p] %s op=%d node=%d status=%s vote=%d votes=%d attempt=%d mode=%d\n", who,
               redlock_event_name(ev->type), (int)ev->op, ev->node, redlock_strerror(ev->status),
               ev->vote, ev->votes, ev->attempt, ev->mode);
}

static inline void it_key(char *buf, size_t sz, const char *what)
{
    snprintf(buf, sz, "it:%s:%s:n%d", it->name, what, it_n);
}

/* A guard for scenarios whose failure is a call that never returns (a
   loop inside the adapter): it_guard_start(test name), it_guard_step("what")
   after each call that came back, it_guard_stop(). When no step comes
   within IT_GUARD_MS, a thread prints "not ok" for the test and exits
   (the nodes are stopped at exit): a few seconds, not the run's alarm. */
#define IT_GUARD_MS 3000
static pthread_mutex_t it_guard_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pthread_t th;
    int on;
    long long last;
    const char *name, *what;
} it_guard;

static void *it_guard_main(void *arg)
{
    (void)arg;
    for (;;) {
        long long idle;
        pthread_mutex_lock(&it_guard_mu);
        if (!it_guard.on) break;
        idle = it_now_ms() - it_guard.last;
        if (idle > IT_GUARD_MS) {
            printf("not ok %s (no call returned for %lld ms, the last one to return: %s)\n", it_guard.name, idle,
                   it_guard.what);
            fflush(stdout);
            exit(1);
        }
        pthread_mutex_unlock(&it_guard_mu);
        redis_nodes__sleep_ms(20);
    }
    pthread_mutex_unlock(&it_guard_mu);
    return NULL;
}

static inline void it_guard_step(const char *what)
{
    pthread_mutex_lock(&it_guard_mu);
    it_guard.last = it_now_ms();
    it_guard.what = what;
    pthread_mutex_unlock(&it_guard_mu);
}

static inline void it_guard_start(const char *name)
{
    it_guard.name = name;
    it_guard.on = 1;
    it_guard_step("(start)");
    CHECK_EQ(pthread_create(&it_guard.th, NULL, it_guard_main, NULL), 0);
}

static inline void it_guard_stop(void)
{
    pthread_mutex_lock(&it_guard_mu);
    it_guard.on = 0;
    pthread_mutex_unlock(&it_guard_mu);
    pthread_join(it_guard.th, NULL);
}

/* Two clients (two processes, as far as the nodes can tell) with setup s:
   0, or -1 (checked failed, whichever opened closed again). */
static inline int it_open_pair(const it_setup *s, it_client **a, it_client **b)
{
    *a = it->open(s);
    *b = it->open(s);
    CHECK(*a && *b);
    if (*a && *b) return 0;
    if (*a) it->close(*a);
    if (*b) it->close(*b);
    return -1;
}

/* ---- scenarios ---- */

/* acquire / extend / release on healthy nodes; the key is where it should be */
static void it_basic(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], tok[64], out[64];
    it_defaults(&s, rn, ports);
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) return;
    it_key(key, sizeof key, "basic");
    it_lock_opts(&o, key, 500);
    l = it->lock(c, &o);
    CHECK(l != NULL);
    if (!l) { it->close(c); return; }
    CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
    CHECK_EQ(r.op, REDLOCK_OP_ACQUIRE);
    CHECK(r.validity_us > 0 && r.validity_us <= 500000);
    CHECK_EQ(it->state(l), REDLOCK_STATE_HELD);
    snprintf(tok, sizeof tok, "%s", it->token(l));
    CHECK_EQ(strlen(tok), REDLOCK_TOKEN_LEN);
    CHECK_EQ(it_holders_settle(rn, key, tok, it_n), it_n);
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_ERR_ALREADY_HELD);
    CHECK_EQ(it->extend(l, 2000, &r), REDLOCK_OK);
    CHECK(r.validity_us > 1000000);
    redis_nodes_cmd(rn, 0, out, sizeof out, "PTTL", key, (char *)NULL);
    CHECK(atoi(out + 1) > 1000);
    CHECK_EQ(it->release(l, &r), REDLOCK_OK);
    CHECK(r.votes >= it_quorum()); /* the core does not wait for stragglers */
    CHECK_EQ(it->state(l), REDLOCK_STATE_IDLE);
    CHECK_EQ(it_holders_settle(rn, key, tok, 0), 0);
    CHECK_EQ(it->release(l, NULL), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(it->extend(l, 0, NULL), REDLOCK_ERR_NOT_HELD);
    /* again, with a new token */
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK(strcmp(tok, it->token(l)) != 0);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->unlock(l);
    it->close(c);
}

/* Connections are kept: after the first cycle, ten more acquire+release
   cycles open no new connection to any node (CLIENT ID grows by one per
   connection a server accepts; the query itself is one). */
static void it_reuse(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], i, k;
    long long before[REDIS_NODES_MAX];
    it_setup s;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    char key[96], out[64];
    it_defaults(&s, rn, ports);
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) return;
    it_key(key, sizeof key, "reuse");
    it_lock_opts(&o, key, 2000);
    l = it->lock(c, &o);
    CHECK(l != NULL);
    if (!l) { it->close(c); return; }
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->idle(c, 20); /* stragglers of the release answered */
    for (i = 0; i < it_n; i++) {
        CHECK_EQ(redis_nodes_cmd(rn, i, out, sizeof out, "CLIENT", "ID", (char *)NULL), 0);
        before[i] = atoll(out + 1);
    }
    for (k = 0; k < 10; k++) {
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    }
    it->idle(c, 20);
    for (i = 0; i < it_n; i++) {
        CHECK_EQ(redis_nodes_cmd(rn, i, out, sizeof out, "CLIENT", "ID", (char *)NULL), 0);
        CHECK_EQ(atoll(out + 1), before[i] + 1);
        CHECK(it->node_connected(c, i));
    }
    it->unlock(l);
    it->close(c);
}

/* One handle initialised again for each key, as a program that reuses a
   handle does (lock_init, acquire, release, key after key), on the
   adapter's own lock_init. Some lives end with answers still owed: the
   last node is paused (SIGSTOP) through an acquire and a release, and
   resumed only after the next init, so its answers to the old life come
   to the new one (they are dropped). Some lives are initialised again
   while they hold their key (forgotten, not released: the key keeps its
   TTL). Every life gets its lock; nothing of a released life is left on
   any node; closing the client ends; no key block is lost (valgrind).
   Bounded by it_guard. */
#define IT_REINIT_LIVES 12
static void it_reinit(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], k, i, paused = 0;
    it_setup s;
    it_client *c;
    it_lock *l = NULL;
    redlock_lock_opts o;
    char key[IT_REINIT_LIVES][96], tok[64], out[64], what[32];
    it_defaults(&s, rn, ports);
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) return;
    it_guard_start(it_name);
    for (k = 0; k < IT_REINIT_LIVES; k++) {
        int pause = k % 4 == 1 && it_n > 1, keep = k % 4 == 3;
        snprintf(what, sizeof what, "reinit%d", k);
        it_key(key[k], sizeof key[k], what);
        it_lock_opts(&o, key[k], 2000);
        if (!l) {
            l = it->lock(c, &o);
            CHECK(l != NULL);
            if (!l) break;
        } else {
            CHECK_EQ(it->reinit(l, &o), REDLOCK_OK);
        }
        it_guard_step("lock_init");
        if (paused) { /* the old life's answers now come in */
            redis_node_resume(rn, it_n - 1);
            paused = 0;
            it->idle(c, 30);
            it_guard_step("idle after resume");
        }
        CHECK_EQ(it->state(l), REDLOCK_STATE_IDLE);
        CHECK_STR(it->token(l), "");
        if (pause) {
            redis_node_pause(rn, it_n - 1);
            paused = 1;
        }
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        it_guard_step("acquire");
        snprintf(tok, sizeof tok, "%s", it->token(l));
        CHECK_EQ(it_holders_settle(rn, key[k], tok, it_n - paused), it_n - paused);
        if (keep) continue;
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it_guard_step("release");
        CHECK_EQ(it->state(l), REDLOCK_STATE_IDLE);
    }
    if (paused) redis_node_resume(rn, it_n - 1);
    it->idle(c, 30);
    it_guard_step("idle");
    for (k = 0; k < IT_REINIT_LIVES; k++)
        for (i = 0; i < it_n; i++) {
            long long until = it_now_ms() + 300, pttl;
            for (;;) {
                redis_nodes_cmd(rn, i, out, sizeof out, "PTTL", key[k], (char *)NULL);
                pttl = atoll(out + 1);
                if (k % 4 == 3 || pttl == -2 || it_now_ms() >= until) break;
                redis_nodes__sleep_ms(5);
            }
            if (k % 4 == 3) CHECK(pttl > 0 && pttl <= 2000); /* held when forgotten: it expires */
            else CHECK_EQ(pttl, -2);                         /* released: gone */
        }
    if (l) it->unlock(l);
    it_guard_step("lock_deinit");
    it->close(c);
    it_guard_step("close");
    it_guard_stop();
}

/* two clients: the second is refused while the first holds the lock */
static void it_contend(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la, *lb;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    long long t0;
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "contend");
    it_lock_opts(&o, key, 1000);
    la = it->lock(a, &o);
    lb = it->lock(b, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    t0 = it_now_ms();
    CHECK_EQ(it->acquire(lb, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(r.attempts, 3);
    CHECK(it_now_ms() - t0 < 900);
    CHECK_EQ(it->state(lb), REDLOCK_STATE_IDLE);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n); /* b's rollback left a's key alone */
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(la, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    it->unlock(la);
    it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* several clients on their own threads: never two inside at once */
typedef struct it_worker {
    const it_setup *s;
    const char *key;
    int wins, errors;
} it_worker;

static pthread_mutex_t it_mu = PTHREAD_MUTEX_INITIALIZER;
static int it_inside, it_overlaps;

static void *it_worker_main(void *arg)
{
    it_worker *w = (it_worker *)arg;
    it_client *c = it->open(w->s);
    it_lock *l;
    redlock_lock_opts o;
    int i;
    if (!c) { w->errors++; return NULL; }
    it_lock_opts(&o, w->key, 1000);
    o.retry_count = 200;
    o.retry_delay_ms = 5;
    o.retry_jitter_ms = 4;
    l = it->lock(c, &o);
    for (i = 0; l && i < 6; i++) {
        if (it->acquire(l, NULL) != REDLOCK_OK) { w->errors++; continue; }
        pthread_mutex_lock(&it_mu);
        if (it_inside) it_overlaps++;
        it_inside++;
        pthread_mutex_unlock(&it_mu);
        redis_nodes__sleep_ms(3);
        pthread_mutex_lock(&it_mu);
        it_inside--;
        pthread_mutex_unlock(&it_mu);
        if (it->release(l, NULL) != REDLOCK_OK) w->errors++;
        w->wins++;
        redis_nodes__sleep_ms(1);
    }
    if (l) it->unlock(l);
    it->close(c);
    return NULL;
}

static void it_contend_threads(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_worker w[3];
    pthread_t th[3];
    char key[96];
    int i;
    it_defaults(&s, rn, ports);
    it_key(key, sizeof key, "threads");
    it_inside = it_overlaps = 0;
    for (i = 0; i < 3; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].s = &s;
        w[i].key = key;
        CHECK_EQ(pthread_create(&th[i], NULL, it_worker_main, &w[i]), 0);
    }
    for (i = 0; i < 3; i++) pthread_join(th[i], NULL);
    CHECK_EQ(it_overlaps, 0);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(w[i].wins, 6);
        CHECK_EQ(w[i].errors, 0);
    }
}

/* without renewal the lock expires and someone else gets it */
static void it_expiry(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la, *lb;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    int rc;
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "expiry");
    it_lock_opts(&o, key, 200);
    la = it->lock(a, &o);
    lb = it->lock(b, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_ERR_LOCKED);
    redis_nodes__sleep_ms(300);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_OK);
    rc = it->release(la, &r); /* too late: not ours any more */
    CHECK(rc != REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(lb), it_n), it_n); /* a did not delete b's key */
    CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    it->unlock(la);
    it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* the watchdog holds a 300 ms lock for 1.2 s */
static void it_watchdog(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la, *lb;
    redlock_lock_opts o;
    char key[96];
    it_defaults(&s, rn, ports);
    s.watchdog_thread = 1;
    a = it->open(&s);
    s.watchdog_thread = 0;
    b = it->open(&s);
    CHECK(a && b);
    if (!a || !b) { if (a) it->close(a); if (b) it->close(b); return; }
    it_key(key, sizeof key, "watchdog");
    it_lock_opts(&o, key, 300);
    lb = it->lock(b, &o);
    o.watchdog = 1;
    la = it->lock(a, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    it->idle(a, 1200);
    CHECK_EQ(it->state(la), REDLOCK_STATE_HELD);
    CHECK_EQ(it->lost(la), 0);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), 0), 0);
    it->unlock(la);
    it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* the lock is taken away behind the watchdog's back: loss is reported */
static void it_watchdog_stolen(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la;
    redlock_lock_opts o;
    char key[96], out[64];
    int i;
    it_defaults(&s, rn, ports);
    s.watchdog_thread = 1;
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "stolen");
    it_lock_opts(&o, key, 300);
    o.watchdog = 1;
    la = it->lock(a, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    for (i = 0; i < rn->n; i++)
        redis_nodes_cmd(rn, i, out, sizeof out, "SET", key, "intruder", (char *)NULL);
    it->idle(a, 600);
    CHECK(it->state(la) == REDLOCK_STATE_LOST);
    CHECK_EQ(it->lost(la), 1);
    for (i = 0; i < rn->n; i++) {
        redis_nodes_cmd(rn, i, out, sizeof out, "GET", key, (char *)NULL);
        CHECK_STR(out, "intruder");
        redis_nodes_cmd(rn, i, out, sizeof out, "DEL", key, (char *)NULL);
    }
    it->unlock(la);
    it->close(a);
}

/* a node is killed while the lock is held; then restarted */
static void it_node_killed(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la, *lw;
    redlock_lock_opts o;
    char key[96], key2[96];
    it_defaults(&s, rn, ports);
    s.watchdog_thread = 1;
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "killed");
    it_key(key2, sizeof key2, "killed-wd");
    it_lock_opts(&o, key, 1000);
    la = it->lock(a, &o);
    o.key = key2;
    o.ttl_ms = 300;
    o.watchdog = 1;
    lw = it->lock(a, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(lw, NULL), REDLOCK_OK);
    redis_node_kill(rn, 0);
    if (it_n >= 3) {
        CHECK_EQ(it->extend(la, 1000, NULL), REDLOCK_OK);
        it->idle(a, 800); /* watchdog renews on the survivors */
        CHECK_EQ(it->state(lw), REDLOCK_STATE_HELD);
        CHECK_EQ(it->lost(lw), 0);
        CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
        CHECK_EQ(it->release(lw, NULL), REDLOCK_OK);
    } else {
        CHECK(it->extend(la, 1000, NULL) != REDLOCK_OK);
        it->idle(a, 600); /* the only node is gone: loss is reported */
        CHECK_EQ(it->state(lw), REDLOCK_STATE_LOST);
        CHECK_EQ(it->lost(lw), 1);
        CHECK(it->release(la, NULL) != REDLOCK_OK);
    }
    CHECK(it->node_status(a, 0) != 0);
    CHECK_EQ(it->node_connected(a, 0), 0);
    {
        char text[128];
        text[0] = 0;
        CHECK_EQ(it->node_error(a, 0, text, sizeof text), it->node_status(a, 0));
        CHECK(text[0] != 0); /* a message goes with the status */
    }
    CHECK_EQ(redis_node_restart(rn, 0), 0);
    it->idle(a, 300); /* past the reconnect delay (the loop runs meanwhile) */
    /* reconnected: the restarted node votes again. Another process answers
       there (a new run_id): its grant counts once the lock's ttl has passed
       since the client saw it, and a lone node's key, kept by its AOF,
       may still hold la's earlier token until it expires */
    CHECK_EQ(it_n >= 3 ? it->acquire(la, NULL) : it_acquire_after_restart(a, la, 1000 + 3000), REDLOCK_OK);
    CHECK_EQ(it->node_connected(a, 0), 1);
    {   /* its status clears with its next good reply, which may come after
           the quorum of the others decided (a slow machine): bounded wait */
        long long t0 = it_now_ms();
        while (it->node_status(a, 0) != 0 && it_now_ms() - t0 < 2000) it->idle(a, 20);
    }
    CHECK_EQ(it->node_status(a, 0), 0);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    it->unlock(la);
    it->unlock(lw);
    it->close(a);
}

/* a node stops answering (SIGSTOP): timeouts fire, quorum is still reached */
static void it_node_paused(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la, *lw;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], key2[96];
    long long t0;
    int last = it_n - 1;
    it_defaults(&s, rn, ports);
    s.watchdog_thread = 1;
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "paused");
    it_key(key2, sizeof key2, "paused-wd");
    it_lock_opts(&o, key, 1000);
    la = it->lock(a, &o);
    o.key = key2;
    o.ttl_ms = 400;
    o.watchdog = 1;
    lw = it->lock(a, &o);
    redis_node_pause(rn, last);
    t0 = it_now_ms();
    if (it_n >= 3) {
        CHECK_EQ(it->acquire(la, &r), REDLOCK_OK);
        CHECK(r.votes >= it_quorum() && r.votes <= it_n - 1);
        CHECK(it_now_ms() - t0 < 300); /* one node timeout, not a hang */
        t0 = it_now_ms();
        CHECK_EQ(it->extend(la, 5000, NULL), REDLOCK_OK);
        CHECK(it_now_ms() - t0 < 300);
        CHECK_EQ(it->acquire(lw, NULL), REDLOCK_OK);
        it->idle(a, 1000); /* renewals keep timing out on one node */
        CHECK_EQ(it->state(lw), REDLOCK_STATE_HELD);
        CHECK_EQ(it->lost(lw), 0);
        t0 = it_now_ms();
        CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
        CHECK_EQ(it->release(lw, NULL), REDLOCK_OK);
        CHECK(it_now_ms() - t0 < 600);
    } else {
        CHECK(it->acquire(la, &r) != REDLOCK_OK);
        CHECK(it_now_ms() - t0 < 1500); /* 3 attempts x timeout + retry delays */
    }
    redis_node_resume(rn, last);
    redis_nodes__sleep_ms(50);
    /* the node answers again (possibly after a reconnect) */
    it->idle(a, 600);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    if (it_tls_dir[0]) /* over TLS nothing waits in a socket buffer for the paused node: the
                          release it missed leaves the old token there until its TTL */
        CHECK(it_holders_settle(rn, key, it->token(la), it_n) >= it_quorum());
    else
        CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    it->unlock(la);
    it->unlock(lw);
    it->close(a);
}

/* AUTH: the right password works, a wrong one is reported as AUTH */
static void it_auth(void)
{
    redis_nodes *rn = &it_authed[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *bad, *none;
    it_lock *la, *lb, *ln;
    redlock_lock_opts o;
    char key[96];
    int i, k;
    it_defaults(&s, rn, ports);
    s.pass = "s3cret";
    a = it->open(&s);
    s.pass = "wrong";
    bad = it->open(&s);
    s.pass = NULL;
    none = it->open(&s);
    CHECK(a && bad && none);
    if (!a || !bad || !none) {
        if (a) it->close(a);
        if (bad) it->close(bad);
        if (none) it->close(none);
        return;
    }
    it_key(key, sizeof key, "auth");
    it_lock_opts(&o, key, 1000);
    o.retry_count = -1;
    la = it->lock(a, &o);
    lb = it->lock(bad, &o);
    ln = it->lock(none, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    rn->auth_pass = "s3cret";
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), 0), 0);
    rn->auth_pass = NULL;
    CHECK(it->acquire(lb, NULL) != REDLOCK_OK);
    k = 0;
    for (i = 0; i < it_n; i++) {
        int st = it->node_status(bad, i);
        CHECK(st == 0 || st == REDLOCK_ERR_AUTH); /* 0: not heard from yet */
        k += st == REDLOCK_ERR_AUTH;
    }
    CHECK(k >= it_n - it_quorum() + 1); /* enough to know the attempt failed */
    CHECK(it->acquire(ln, NULL) != REDLOCK_OK);
    k = 0;
    for (i = 0; i < it_n; i++) k += it->node_status(none, i) == REDLOCK_ERR_AUTH; /* NOAUTH */
    CHECK(k >= it_n - it_quorum() + 1);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK); /* still fine for the right one */
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    it->unlock(la);
    it->unlock(lb);
    it->unlock(ln);
    it->close(a);
    it->close(bad);
    it->close(none);
}

/* Nodes that refuse the client (wrong password, no password, a db that does
   not exist): with too few others for a quorum the blocking acquire ends at
   once with CONFIG, whatever retry_count and wait_ms say; with enough
   others the lock is held without them. */
static void it_config_refused_one(const it_setup *s, const char *what, int refused_status)
{
    it_client *c = it->open(s);
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    long long t0, took;
    int i, k = 0;
    CHECK(c != NULL);
    if (!c) return;
    it_key(key, sizeof key, what);
    it_lock_opts(&o, key, 1000);
    o.retry_count = 50;
    o.retry_delay_ms = 100;
    o.wait_ms = 20000;
    l = it->lock(c, &o);
    memset(&r, 0, sizeof r);
    t0 = it_now_ms();
    CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_CONFIG);
    took = it_now_ms() - t0;
    CHECK_EQ(r.status, REDLOCK_ERR_CONFIG);
    CHECK_EQ(r.attempts, 1);
    CHECK(took < 1000); /* not 50 retries, not the 20 s wait */
    for (i = 0; i < s->n; i++) k += it->node_status(c, i) == refused_status;
    CHECK(k >= s->n - it_quorum() + 1);
    CHECK_EQ(it->state(l), REDLOCK_STATE_IDLE);
    it->unlock(l);
    it->close(c);
}

static void it_config_refused(void)
{
    int ports[REDIS_NODES_MAX], mixed[REDIS_NODES_MAX], i;
    it_setup s;
    it_defaults(&s, &it_authed[it_n], ports);
    s.pass = "wrong";
    it_config_refused_one(&s, "cfg-pass", REDLOCK_ERR_AUTH);
    s.pass = NULL; /* NOAUTH */
    it_config_refused_one(&s, "cfg-nopass", REDLOCK_ERR_AUTH);
    it_defaults(&s, &it_plain[it_n], ports);
    s.db = 99; /* redis-server has 16 */
    it_config_refused_one(&s, "cfg-db", REDLOCK_ERR_SELECT);
    if (it_n < 3) return;
    /* a minority of password-protected nodes among open ones, no password:
       held by the others; then a majority of them: CONFIG */
    for (i = 0; i < it_n; i++)
        mixed[i] = i < it_quorum() ? it_port(&it_plain[it_n], i) : it_port(&it_authed[it_n], i);
    it_defaults(&s, &it_plain[it_n], ports);
    s.ports = mixed;
    {
        it_client *c = it->open(&s);
        it_lock *l;
        redlock_lock_opts o;
        redlock_result r;
        char key[96];
        CHECK(c != NULL);
        if (c) {
            it_key(key, sizeof key, "cfg-minority");
            it_lock_opts(&o, key, 1000);
            l = it->lock(c, &o);
            CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
            CHECK_EQ(r.votes, it_quorum());
            CHECK_EQ(it->node_status(c, it_n - 1), REDLOCK_ERR_AUTH);
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
            it->unlock(l);
            it->close(c);
        }
    }
    for (i = 0; i < it_n; i++)
        mixed[i] = i < it_quorum() - 1 ? it_port(&it_plain[it_n], i) : it_port(&it_authed[it_n], i);
    it_config_refused_one(&s, "cfg-majority", REDLOCK_ERR_AUTH);
}

/* A node's error text is replaced whole by the next one, even a shorter
   one: a refused AUTH (long text), then the node down. */
static void it_error_text_replaced(void)
{
    redis_nodes *rn = &it_authed[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    char key[96], text[256];
    long long t0;
    int st;
    it_defaults(&s, rn, ports);
    s.pass = "wrong";
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) return;
    it_key(key, sizeof key, "errtext");
    it_lock_opts(&o, key, 1000);
    o.retry_count = -1;
    l = it->lock(c, &o);
    CHECK(it->acquire(l, NULL) != REDLOCK_OK);
    text[0] = 0;
    CHECK_EQ(it->node_error(c, 0, text, sizeof text), REDLOCK_ERR_AUTH);
    CHECK(text[0] != 0);
    redis_node_kill(rn, 0);
    t0 = it_now_ms();
    do { /* past any reconnect delay: the node is found down */
        it->idle(c, 50);
        (void)it->acquire(l, NULL);
        st = it->node_error(c, 0, text, sizeof text);
    } while (st == REDLOCK_ERR_AUTH && it_now_ms() - t0 < 3000);
    CHECK(st != REDLOCK_ERR_AUTH && st != 0);
    CHECK(text[0] != 0);
    CHECK(strstr(text, "pass") == NULL && strstr(text, "WRONGPASS") == NULL); /* nothing left of the old text */
    CHECK_EQ(redis_node_restart(rn, 0), 0);
    it->unlock(l);
    it->close(c);
}

/* ACL user without scripting: AUTO falls back to GET + compare + DEL/PEXPIRE */
/* Nodes of rn where the reentrant hash `key` counts `count` entries of
   owner ("" count: the key does not exist), waiting up to 300 ms for
   `want` of them. */
static inline int it_owner_count_settle(redis_nodes *rn, const char *key, const char *owner, const char *count, int want)
{
    long long until = redis_nodes__now_ms() + 300;
    int i, k;
    for (;;) {
        for (i = k = 0; i < rn->n; i++) {
            char out[128];
            if (count[0]) k += redis_nodes_cmd(rn, i, out, sizeof out, "HGET", key, owner, (char *)NULL) == 0 &&
                               strcmp(out, count) == 0;
            else k += redis_nodes_cmd(rn, i, out, sizeof out, "EXISTS", key, (char *)NULL) == 0 &&
                      strcmp(out, ":0") == 0;
        }
        if (k == want || redis_nodes__now_ms() >= until) return k;
        redis_nodes__sleep_ms(5);
    }
}

/* Reentrant locks: handles of one owner on two clients (two processes
   sharing an owner id on purpose) hold the key at once, counted on every
   node; another owner and a plain lock are refused and their undo spares
   the count; extend never shortens the key; the key is gone when the
   owner's last entry goes. Default owners: two handles of one client and
   thread share one, another client has its own. */
static void it_reentrant(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *l1 = NULL, *l2 = NULL, *l3 = NULL, *l4 = NULL, *l5 = NULL, *l6 = NULL, *l7 = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], out[64];
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "reentrant");
    it_lock_opts(&o, key, 2000);
    o.reentrant = 1;
    o.owner = "it-owner-1";
    l1 = it->lock(a, &o);
    l2 = it->lock(b, &o);
    o.owner = "it-owner-2";
    o.retry_count = -1;
    l3 = it->lock(a, &o);
    o.reentrant = 0;
    o.owner = NULL;
    l4 = it->lock(b, &o);
    CHECK(l1 && l2 && l3 && l4);
    if (!l1 || !l2 || !l3 || !l4) goto out;
    CHECK_EQ(it->acquire(l1, &r), REDLOCK_OK);
    CHECK(r.validity_us > 0 && r.validity_us <= 2000000);
    CHECK_EQ(it_owner_count_settle(rn, key, "it-owner-1", "1", it_n), it_n);
    CHECK_EQ(it->acquire(l2, NULL), REDLOCK_OK); /* the same owner, another client */
    CHECK_EQ(it_owner_count_settle(rn, key, "it-owner-1", "2", it_n), it_n);
    CHECK_EQ(it->acquire(l3, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->acquire(l4, &r), REDLOCK_ERR_LOCKED);
    redis_nodes__sleep_ms(20); /* their undo has run: the count is whole */
    CHECK_EQ(it_owner_count_settle(rn, key, "it-owner-1", "2", it_n), it_n);
    CHECK_EQ(it->extend(l2, 5000, &r), REDLOCK_OK);
    CHECK_EQ(it->extend(l1, 1000, &r), REDLOCK_OK); /* shorter: the key keeps its 5 s */
    redis_nodes_cmd(rn, 0, out, sizeof out, "PTTL", key, (char *)NULL);
    CHECK(atoi(out + 1) > 4000);
    CHECK_EQ(it->release(l1, &r), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "it-owner-1", "1", it_n), it_n);
    CHECK_EQ(it->state(l2), REDLOCK_STATE_HELD);
    CHECK_EQ(it->acquire(l3, NULL), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(l2, &r), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n); /* no key left */
    CHECK_EQ(it->acquire(l3, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(l1, NULL), REDLOCK_ERR_LOCKED); /* now owner 1 waits for owner 2 */
    CHECK_EQ(it->release(l3, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n);
    /* default owners */
    it_lock_opts(&o, key, 2000);
    o.reentrant = 1;
    o.retry_count = -1;
    l5 = it->lock(a, &o);
    l6 = it->lock(a, &o);
    l7 = it->lock(b, &o);
    CHECK(l5 && l6 && l7);
    if (!l5 || !l6 || !l7) goto out;
    CHECK_EQ(it->acquire(l5, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(l6, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(l7, NULL), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(l5, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l6, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n);
out:
    if (l1) it->unlock(l1);
    if (l2) it->unlock(l2);
    if (l3) it->unlock(l3);
    if (l4) it->unlock(l4);
    if (l5) it->unlock(l5);
    if (l6) it->unlock(l6);
    if (l7) it->unlock(l7);
    it->close(a);
    it->close(b);
}

/* Nodes of rn whose fence counter for key reads `want` ("$-1": none). */
static inline int it_counter_is(redis_nodes *rn, const char *key, const char *want)
{
    char name[160], out[64];
    int i, k = 0;
    snprintf(name, sizeof name, "%s%s", REDLOCK_FENCE_PREFIX, key);
    for (i = 0; i < rn->n; i++)
        if (redis_nodes_cmd(rn, i, out, sizeof out, "GET", name, (char *)NULL) == 0) k += strcmp(out, want) == 0;
    return k;
}

/* The guarded write on node 0 (the storage here): ":1" written, ":0" refused. */
static inline int it_fenced_set(redis_nodes *rn, const char *data, int64_t fence, const char *value)
{
    char f[24], out[64], fkey[160];
    snprintf(f, sizeof f, "%lld", (long long)fence);
    snprintf(fkey, sizeof fkey, "%s:fence", data);
    if (redis_nodes_cmd(rn, 0, out, sizeof out, "EVAL", redlock_fenced_set_script(), "2", data, fkey, f, value,
                        (char *)NULL) != 0)
        return -1;
    return strcmp(out, ":1") == 0 ? 1 : strcmp(out, ":0") == 0 ? 0 : -1;
}

/* Fenced locks: each holder's fence is higher than the one before it,
   also when one node's counter runs ahead of the others (it is written
   back to a quorum); a refused acquire counts nothing; the counter never
   expires and outlives the lock; the guarded write takes the newer fence
   and refuses the older one. */
static void it_fence(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la = NULL, *lb = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], data[128], want[24], name[160], out[64];
    int64_t f1, f2, f3;
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "fence");
    snprintf(data, sizeof data, "%s:data", key);
    it_lock_opts(&o, key, 2000);
    o.fence = 1;
    o.retry_count = -1;
    la = it->lock(a, &o);
    lb = it->lock(b, &o);
    CHECK(la && lb);
    if (!la || !lb) goto out;
    memset(&r, 0, sizeof r);
    CHECK_EQ(it->acquire(la, &r), REDLOCK_OK);
    f1 = r.fence;
    CHECK(f1 >= 1);
    snprintf(want, sizeof want, "%lld", (long long)f1);
    CHECK(it_counter_is(rn, key, want) >= it_n / 2 + 1); /* written back to a quorum */
    CHECK_EQ(it->acquire(lb, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(r.fence, 0);
    CHECK_EQ(it_fenced_set(rn, data, f1, "a1"), 1);
    CHECK_EQ(it->release(la, &r), REDLOCK_OK);
    snprintf(name, sizeof name, "%s%s", REDLOCK_FENCE_PREFIX, key);
    redis_nodes_cmd(rn, 0, out, sizeof out, "PTTL", name, (char *)NULL);
    CHECK_STR(out, ":-1");                               /* never expires */
    CHECK_EQ(it->acquire(lb, &r), REDLOCK_OK);
    f2 = r.fence;
    CHECK(f2 > f1);
    CHECK_EQ(it_fenced_set(rn, data, f2, "b1"), 1);
    CHECK_EQ(it_fenced_set(rn, data, f1, "a2"), 0);     /* the older holder, late */
    redis_nodes_cmd(rn, 0, out, sizeof out, "GET", data, (char *)NULL);
    CHECK_STR(out, "b1");
    CHECK_EQ(it->release(lb, &r), REDLOCK_OK);
    /* one node's counter far ahead: whatever quorum answers first, the
       next fence is higher than the last */
    redis_nodes_cmd(rn, it_n - 1, out, sizeof out, "SET", name, "1000", (char *)NULL);
    CHECK_EQ(it->acquire(la, &r), REDLOCK_OK);
    f3 = r.fence;
    CHECK(f3 > f2);
    snprintf(want, sizeof want, "%lld", (long long)f3);
    CHECK(it_counter_is(rn, key, want) >= it_n / 2 + 1);
    CHECK_EQ(it->release(la, &r), REDLOCK_OK);
out:
    if (la) it->unlock(la);
    if (lb) it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* Fenced reentrant locks: the owner's second hold (another client) takes
   the first one's fence, which the hash keeps; a plain reentrant entry of
   the owner nests too; another owner waits, and its fence is higher; no
   key left. */
static void it_fence_reentrant(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *l1 = NULL, *l2 = NULL, *l3 = NULL, *l4 = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], want[24];
    int64_t f1;
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "fence-reentrant");
    it_lock_opts(&o, key, 2000);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "it-fence-owner";
    o.retry_count = -1;
    l1 = it->lock(a, &o);
    l2 = it->lock(b, &o);
    o.fence = 0;
    l3 = it->lock(b, &o);
    o.fence = 1;
    o.owner = "it-other-owner";
    l4 = it->lock(a, &o);
    CHECK(l1 && l2 && l3 && l4);
    if (!l1 || !l2 || !l3 || !l4) goto out;
    memset(&r, 0, sizeof r);
    CHECK_EQ(it->acquire(l1, &r), REDLOCK_OK);
    f1 = r.fence;
    CHECK(f1 >= 1);
    CHECK_EQ(it->acquire(l2, &r), REDLOCK_OK);
    CHECK_EQ(r.fence, f1);
    CHECK_EQ(it->acquire(l3, &r), REDLOCK_OK);  /* a plain entry of the owner */
    CHECK_EQ(r.fence, 0);
    CHECK_EQ(it_owner_count_settle(rn, key, "it-fence-owner", "3", it_n), it_n);
    snprintf(want, sizeof want, "%lld", (long long)f1);
    {
        int i, k = 0;
        char out[64];
        for (i = 0; i < rn->n; i++)
            k += redis_nodes_cmd(rn, i, out, sizeof out, "HGET", key, " fence", (char *)NULL) == 0 && strcmp(out, want) == 0;
        CHECK(k >= it_n / 2 + 1);
    }
    CHECK_EQ(it->acquire(l4, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(l1, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l2, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l3, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n); /* no key left */
    CHECK_EQ(it->acquire(l4, &r), REDLOCK_OK);
    CHECK(r.fence > f1);
    CHECK_EQ(it->release(l4, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n);
out:
    if (l1) it->unlock(l1);
    if (l2) it->unlock(l2);
    if (l3) it->unlock(l3);
    if (l4) it->unlock(l4);
    it->close(a);
    it->close(b);
}

/* Readers-writer locks: two readers (two clients) hold the key at once; a
   writer is refused while they do (and, once it gave up, leaves no mark
   behind); a waiting writer's mark keeps a new reader out (writer
   preference); once the readers are gone the writer holds it alone,
   readers and a plain lock wait; extend works per holder; no key is left. */
static void it_rw(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *r1 = NULL, *r2 = NULL, *r3 = NULL, *wr = NULL, *pl = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "rw");
    it_lock_opts(&o, key, 2000);
    o.retry_count = -1;
    o.access = REDLOCK_ACCESS_SHARED;
    r1 = it->lock(a, &o);
    r2 = it->lock(b, &o);
    r3 = it->lock(b, &o);
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    wr = it->lock(a, &o);
    o.access = REDLOCK_ACCESS_DEFAULT;
    pl = it->lock(b, &o);
    CHECK(r1 && r2 && r3 && wr && pl);
    if (!r1 || !r2 || !r3 || !wr || !pl) goto out;
    CHECK_EQ(it->acquire(r1, &r), REDLOCK_OK);
    CHECK_EQ(it->acquire(r2, &r), REDLOCK_OK);     /* readers together */
    CHECK_EQ(it->acquire(pl, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->acquire(wr, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->acquire(r3, &r), REDLOCK_OK);     /* the writer gave up: its mark went with it */
    CHECK_EQ(it->release(r3, NULL), REDLOCK_OK);
    {   /* a writer that still waits (its mark on every node): no new reader */
        int i;
        char out[64];
        for (i = 0; i < rn->n; i++)
            redis_nodes_cmd(rn, i, out, sizeof out, "HSET", key, "w:ffffffffffffffffffffffffffffffff", "w99999999999999",
                            (char *)NULL);
        CHECK_EQ(it->acquire(r3, &r), REDLOCK_ERR_LOCKED);
        for (i = 0; i < rn->n; i++)
            redis_nodes_cmd(rn, i, out, sizeof out, "HDEL", key, "w:ffffffffffffffffffffffffffffffff", (char *)NULL);
    }
    CHECK_EQ(it->extend(r1, 3000, &r), REDLOCK_OK);
    CHECK_EQ(it->release(r1, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(r2, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(wr, &r), REDLOCK_OK);
    CHECK(r.validity_us > 0 && r.validity_us <= 2000000);
    CHECK_EQ(it->acquire(r3, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->acquire(pl, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->extend(wr, 3000, &r), REDLOCK_OK);
    CHECK_EQ(it->release(wr, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(r3, &r), REDLOCK_OK);
    CHECK_EQ(it->release(r3, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n); /* no key left */
out:
    if (r1) it->unlock(r1);
    if (r2) it->unlock(r2);
    if (r3) it->unlock(r3);
    if (wr) it->unlock(wr);
    if (pl) it->unlock(pl);
    it->close(a);
    it->close(b);
}

/* Nodes where the readers-writer hash holds lock l's entry in `mode`. */
static inline int it_rw_mode_on(redis_nodes *rn, const char *key, it_lock *l, char mode)
{
    int i, k = 0;
    for (i = 0; i < rn->n; i++) {
        char out[64];
        if (redis_nodes_cmd(rn, i, out, sizeof out, "HGET", key, it->token(l), (char *)NULL) == 0) k += out[0] == mode;
    }
    return k;
}

/* Update, upgrade, downgrade: an update hold beside a reader, a second
   update refused; an upgrade while the reader holds runs out of retries
   (LOCKED), the lock stays held as update and readers still come in; once
   they are gone the upgrade makes it exclusive (a quorum of "x" entries,
   readers refused); a downgrade makes it shared again (readers come in);
   no key is left. */
static void it_rw_upgrade(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *u = NULL, *u2 = NULL, *r1 = NULL, *r2 = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    int q = it_n / 2 + 1;
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "rw-upgrade");
    it_lock_opts(&o, key, 3000);
    o.retry_count = 2;
    o.retry_delay_ms = 20;
    o.retry_jitter_ms = -1;
    o.access = REDLOCK_ACCESS_UPDATE;
    u = it->lock(a, &o);
    u2 = it->lock(b, &o);
    o.access = REDLOCK_ACCESS_SHARED;
    o.retry_count = -1;
    r1 = it->lock(b, &o);
    r2 = it->lock(b, &o);
    CHECK(u && u2 && r1 && r2);
    if (!u || !u2 || !r1 || !r2) goto out;
    CHECK_EQ(it->acquire(r1, &r), REDLOCK_OK);
    CHECK_EQ(it->acquire(u, &r), REDLOCK_OK);       /* update beside a reader */
    CHECK_EQ(it->acquire(u2, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it_rw_mode_on(rn, key, u, 'u'), it_n);
    memset(&r, 0, sizeof r);
    CHECK_EQ(it->rw(u, REDLOCK_OP_UPGRADE, &r), REDLOCK_ERR_LOCKED); /* the reader stays */
    CHECK_EQ(r.attempts, 3);
    CHECK_EQ(it->state(u), REDLOCK_STATE_HELD);
    redis_nodes__sleep_ms(20);                       /* the settle's stragglers */
    CHECK_EQ(it_rw_mode_on(rn, key, u, 'u'), it_n);
    CHECK_EQ(it->acquire(r2, &r), REDLOCK_OK);      /* readers still come in */
    CHECK_EQ(it->release(r1, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(r2, NULL), REDLOCK_OK);
    CHECK_EQ(it->rw(u, REDLOCK_OP_UPGRADE, &r), REDLOCK_OK);
    CHECK(it_rw_mode_on(rn, key, u, 'x') >= q);
    CHECK_EQ(it->acquire(r2, &r), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->extend(u, 3000, &r), REDLOCK_OK);
    CHECK_EQ(it->rw(u, REDLOCK_OP_DOWNGRADE, &r), REDLOCK_OK);
    CHECK(it_rw_mode_on(rn, key, u, 's') >= q);
    CHECK_EQ(it->acquire(r2, &r), REDLOCK_OK);      /* readers beside the downgraded holder */
    CHECK_EQ(it->release(r2, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(u, NULL), REDLOCK_OK);
    CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n); /* no key left */
out:
    if (u) it->unlock(u);
    if (u2) it->unlock(u2);
    if (r1) it->unlock(r1);
    if (r2) it->unlock(r2);
    it->close(a);
    it->close(b);
}

/* A lock that needs scripts (reentrant, or fenced) on nodes that refuse
   them: NO_SCRIPTING at once, no legacy fallback, nothing written (no key;
   a fenced one no counter either). A reentrant lock's undo sends nothing
   there, so no node switches modes; a fenced lock's undo is the plain
   release script, which, refused too, turns the client's plain locks on
   those nodes to GET + DEL. */
static void it_noscript_refused(const char *name, int fence)
{
    redis_nodes *rn = &it_acled[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    it_defaults(&s, rn, ports);
    s.user = "u";
    s.pass = "pw";
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, name);
    it_lock_opts(&o, key, 1000);
    if (fence) {
        o.fence = 1;
    } else {
        o.reentrant = 1;
        o.owner = "it-owner";
    }
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (l) {
        memset(&r, 0, sizeof r);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_NO_SCRIPTING);
        CHECK_EQ(r.attempts, 1);
        if (!fence) CHECK_EQ(it->mode_switches(a), 0);
        CHECK_EQ(it_owner_count_settle(rn, key, "", "", it_n), it_n); /* no key */
        if (fence) CHECK_EQ(it_counter_is(rn, key, "$-1"), it_n);     /* no counter */
        it->unlock(l);
    }
    it->close(a);
}
static void it_fence_noscript(void) { it_noscript_refused("fence-noscript", 1); }

/* Cache writes into node 0 of rn until `victim` is evicted (at most 64
   batches of 100 values of 8 KiB, pipelined on one connection): 1 when
   it is gone, 0 if not, -1 on an I/O error. */
static inline int it_fill_until_evicted(redis_nodes *rn, const char *victim)
{
    static int serial;
    int batch, k, fd, gone = 0;
    char cmd[160], line[256], out[64];
    for (batch = 0; batch < 64 && !gone; batch++) {
        fd = redis_nodes__connect(redis_nodes_port(rn, 0), 5000);
        if (fd < 0) return -1;
        for (k = 0; k < 100; k++) {
            char name[48];
            int nl = snprintf(name, sizeof name, "it:evict:cache:%d", serial++);
            int l = snprintf(cmd, sizeof cmd, "*4\r\n$8\r\nSETRANGE\r\n$%d\r\n%s\r\n$4\r\n8191\r\n$1\r\nx\r\n", nl, name);
            if (redis_nodes__write_all(fd, cmd, (size_t)l) != 0) { close(fd); return -1; }
        }
        for (k = 0; k < 100; k++)
            if (redis_nodes__read_line(fd, line, sizeof line) != 0) { close(fd); return -1; }
        close(fd);
        if (redis_nodes_cmd(rn, 0, out, sizeof out, "EXISTS", victim, (char *)NULL) != 0) return -1;
        gone = strcmp(out, ":0") == 0;
    }
    return gone;
}

/* Nodes that may evict keys (redlock.h section 4, Eviction): node 0 is a
   server started with --maxmemory 2mb --maxmemory-policy allkeys-random
   (Redis as a cache); with 3 nodes the other two are plain ones. The
   adapter reads its INFO memory when it connects: the core is told
   (EV_NODE_EVICTS, ALL) and a fenced lock does not count its grants. On
   it alone, every fenced acquire ends at once with EVICTING, before and
   after cache writes evict its keys: no fence at all rather than one that
   goes back. Beside two plain nodes the lock is held on those (node 0's
   vote: EVICTING), and fences keep rising while node 0 loses its
   counter. A plain lock counts the node by default and refuses it with
   refuse_evicting. What the rule prevents, shown on the node alone with
   refuse_evicting < 0: 30 fenced holds, cache writes evict the counter,
   and the next fence is 1. The policy is read once per connection: the
   limit lifted at run time is seen on the next connection. */
static void it_evict(void)
{
    static const char *const args[] = { "--maxmemory", "2mb", "--maxmemory-policy", "allkeys-random", NULL };
    redis_nodes ev, *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], i;
    it_setup s;
    it_client *a = NULL;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], counter[160], out[64];
    int64_t last = 0;
    if (redis_nodes_start(&ev, 1, args, NULL) != 0) {
        CHECK(!"redis-server with --maxmemory 2mb --maxmemory-policy allkeys-random started");
        return;
    }
    it_defaults(&s, rn, ports);
    s.core.node_timeout_ms *= 5; /* not a timing test: reconnects and INFO answers are slow under valgrind */
    ports[0] = redis_nodes_port(&ev, 0);
    for (i = 0; i < REDLOCK_MAX_NODES; i++) it_evicts_told[i] = -1;
    memset(it_vote_status, 0, sizeof it_vote_status);
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) goto out;
    it->idle(a, 100); /* connected, INFO answered (slow under valgrind) */
    it_key(key, sizeof key, "evict");
    snprintf(counter, sizeof counter, "%s%s", REDLOCK_FENCE_PREFIX, key);
    it_lock_opts(&o, key, 2000);
    o.fence = 1;
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (!l) goto out;
    if (it_n == 1) {
        int round, cycle;
        for (round = 0; round < 2; round++) { /* before and after the cache writes */
            for (cycle = 0; cycle < 30; cycle++) {
                memset(&r, 0, sizeof r);
                CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_EVICTING);
                if (r.status == REDLOCK_OK) {
                    if (r.fence <= last) printf("#   fence %lld after %lld\n", (long long)r.fence, (long long)last);
                    CHECK(r.fence > last); /* never back */
                    last = r.fence;
                    it->release(l, NULL);
                }
            }
            if (round == 0) CHECK(it_fill_until_evicted(&ev, counter) >= 0);
        }
        CHECK_EQ(it_vote_status[0][0], REDLOCK_ERR_EVICTING);
        redis_nodes_cmd(&ev, 0, out, sizeof out, "EXISTS", key, (char *)NULL);
        CHECK_STR(out, ":0"); /* each refused acquire was undone */
    } else {
        int cycle;
        for (cycle = 0; cycle < 6; cycle++) {
            memset(&r, 0, sizeof r);
            CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
            CHECK_EQ(r.votes, 2);
            CHECK(r.fence > last);
            last = r.fence;
            for (i = 1; i < 3; i++) {
                char want[24];
                redis_nodes_cmd(rn, i, out, sizeof out, "GET", counter, (char *)NULL);
                snprintf(want, sizeof want, "%lld", (long long)r.fence);
                CHECK_STR(out, want); /* written back where it counts */
            }
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
            if (cycle == 2) CHECK(it_fill_until_evicted(&ev, counter) >= 0);
        }
        CHECK_EQ(it_vote_status[0][0], REDLOCK_ERR_EVICTING);
        CHECK_EQ(it_vote_status[0][1], 0);
    }
    CHECK_EQ(it_evicts_told[0], REDLOCK_EVICTS_ALL);
    for (i = 1; i < it_n; i++) CHECK_EQ(it_evicts_told[i], -1);
    it->unlock(l);

    /* a plain lock counts the node, or refuses it when asked to */
    it_lock_opts(&o, key, 2000);
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (!l) goto out;
    CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
    CHECK(r.votes >= it_quorum()); /* (alone: it counted) */
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->unlock(l);
    o.refuse_evicting = 1;
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (!l) goto out;
    CHECK_EQ(it->acquire(l, &r), it_n == 1 ? REDLOCK_ERR_EVICTING : REDLOCK_OK);
    if (r.status == REDLOCK_OK) {
        CHECK_EQ(r.votes, 2);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    }
    it->unlock(l);

    if (it_n == 1) {
        int64_t high = 0;
        int cycle, k;
        /* counted anyway: the counter is evicted and the fence goes back */
        it_lock_opts(&o, key, 2000);
        o.fence = 1;
        o.refuse_evicting = -1;
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (!l) goto out;
        for (cycle = 0; cycle < 30; cycle++) {
            CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
            CHECK(r.fence > high);
            high = r.fence;
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        }
        CHECK(high >= 30);
        CHECK_EQ(it_fill_until_evicted(&ev, counter), 1);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(r.fence, 1);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->unlock(l);

        /* the limit lifted at run time (maxmemory 0: nothing is evicted):
           the next connection reads it */
        redis_nodes_cmd(&ev, 0, out, sizeof out, "CONFIG", "SET", "maxmemory", "0", (char *)NULL);
        CHECK_STR(out, "+OK");
        it_lock_opts(&o, key, 2000);
        o.fence = 1;
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (!l) goto out;
        CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_EVICTING); /* the same connection */
        redis_nodes_cmd(&ev, 0, out, sizeof out, "CLIENT", "KILL", "TYPE", "normal", (char *)NULL);
        /* the client sees its connection closed, and its reconnect delay
           (100 ms) passes: the acquire opens a new connection */
        for (k = 0; k < 50 && it->node_connected(a, 0); k++) it->idle(a, 20);
        it->idle(a, 150);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(it_evicts_told[0], REDLOCK_EVICTS_NONE);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->unlock(l);
    }
out:
    if (a) it->close(a);
    redis_nodes_stop(&ev);
}

/* A subscriber connection to node i of rn on `channel` (plain TCP): its
   fd once the server confirmed, or -1. */
static inline int it_subscribe(redis_nodes *rn, int i, const char *channel)
{
    char cmd[256], line[256];
    int fd = redis_nodes__connect(redis_nodes_port(rn, i), 1000), k;
    if (fd < 0) return -1;
    snprintf(cmd, sizeof cmd, "*2\r\n$9\r\nSUBSCRIBE\r\n$%zu\r\n%s\r\n", strlen(channel), channel);
    if (redis_nodes__write_all(fd, cmd, strlen(cmd)) != 0) { close(fd); return -1; }
    for (k = 0; k < 6; k++) /* *3 $9 subscribe $n channel :1 */
        if (redis_nodes__read_line(fd, line, sizeof line) != 0) { close(fd); return -1; }
    return fd;
}

/* "released" messages that arrive on subscriber fd within ms (stopping at
   `enough` of them, when > 0). */
static inline int it_released(int fd, int ms, int enough)
{
    struct timeval tv;
    char line[256];
    int n = 0;
    tv.tv_sec = 0;
    tv.tv_usec = ms * 1000;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while ((enough <= 0 || n < enough) && redis_nodes__read_line(fd, line, sizeof line) == 0)
        n += strcmp(line, "released") == 0;
    return n;
}

/* Every node PUBLISHes "released" on REDLOCK_CHANNEL_PREFIX + key when a
   release deletes the key there: once per release, not for a failed
   contender's undo on a key it does not hold, not for an extend, and for
   a reentrant lock only with the owner's last entry. */
static void it_release_publishes(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], sub[REDIS_NODES_MAX], i;
    it_setup s;
    it_client *a, *b;
    it_lock *la = NULL, *lb = NULL, *r1 = NULL, *r2 = NULL;
    redlock_lock_opts o;
    char key[96], channel[128];
    it_defaults(&s, rn, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "publish");
    snprintf(channel, sizeof channel, "%s%s", REDLOCK_CHANNEL_PREFIX, key);
    for (i = 0; i < it_n; i++) {
        sub[i] = it_subscribe(rn, i, channel);
        CHECK(sub[i] >= 0);
    }
    it_lock_opts(&o, key, 2000);
    o.retry_count = -1;
    la = it->lock(a, &o);
    lb = it->lock(b, &o);
    o.reentrant = 1;
    o.owner = "it-pub";
    r1 = it->lock(a, &o);
    r2 = it->lock(b, &o);
    CHECK(la && lb && r1 && r2);
    if (!la || !lb || !r1 || !r2) goto out;
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_ERR_LOCKED); /* its undo deletes nothing */
    CHECK_EQ(it->extend(la, 3000, NULL), REDLOCK_OK);
    for (i = 0; i < it_n; i++) if (sub[i] >= 0) CHECK_EQ(it_released(sub[i], 30, 0), 0);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    for (i = 0; i < it_n; i++) if (sub[i] >= 0) CHECK_EQ(it_released(sub[i], 500, 1), 1);
    CHECK_EQ(it->acquire(r1, NULL), REDLOCK_OK);
    CHECK_EQ(it->acquire(r2, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(r1, NULL), REDLOCK_OK); /* the owner still holds it */
    for (i = 0; i < it_n; i++) if (sub[i] >= 0) CHECK_EQ(it_released(sub[i], 30, 0), 0);
    CHECK_EQ(it->release(r2, NULL), REDLOCK_OK);
    for (i = 0; i < it_n; i++) if (sub[i] >= 0) CHECK_EQ(it_released(sub[i], 500, 1), 1);
out:
    for (i = 0; i < it_n; i++) if (sub[i] >= 0) close(sub[i]);
    if (la) it->unlock(la);
    if (lb) it->unlock(lb);
    if (r1) it->unlock(r1);
    if (r2) it->unlock(r2);
    it->close(a);
    it->close(b);
}

/* ---- bursts: many operations issued at once on one client ----
   At the library's defaults (node_timeout_ms 50): a round's node timeout
   measures the node, not the client's own queue of commands. */

/* Results of the scenarios' locks, counted by each adapter's on_result
   (it_note_result): [op][0] OK, [op][1] anything else. */
static long it_results[8][2];

static inline void it_note_result(const redlock_result *r)
{
    if ((int)r->op > 0 && (int)r->op < 8) it_results[r->op][r->status != REDLOCK_OK]++;
}

/* Runs the client until `want` results of op came, at most ms; returns
   how many came. */
static long it_burst_wait(it_client *c, int op, long want, int ms)
{
    long long until = it_now_ms() + ms;
    while (it_results[op][0] + it_results[op][1] < want && it_now_ms() < until) it->idle(c, 10);
    return it_results[op][0] + it_results[op][1];
}

/* Running under valgrind (its preloaded libraries say so): some bursts
   are smaller there, where everything is 20 to 50 times slower. */
static int it_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload") != NULL;
}

/* Keys of node i that match pattern. */
static long it_count_keys(redis_nodes *rn, int i, const char *pattern)
{
    char out[64];
    if (redis_nodes_cmd(rn, i, out, sizeof out, "EVAL", "return #redis.call('keys', ARGV[1])", "0", pattern,
                        (char *)NULL) != 0)
        return -1;
    return atol(out + 1);
}

/* n locks (ttl 30 s) on distinct keys "<prefix>:<i>", or NULL (checked). */
static it_lock **it_burst_locks(it_client *c, const char *prefix, long n)
{
    it_lock **ls = (it_lock **)calloc((size_t)n, sizeof *ls);
    long i;
    CHECK(ls != NULL);
    if (!ls) return NULL;
    for (i = 0; i < n; i++) {
        redlock_lock_opts o;
        char key[96];
        snprintf(key, sizeof key, "%s:%ld", prefix, i);
        it_lock_opts(&o, key, 30000);
        ls[i] = it->lock(c, &o);
        if (!ls[i]) break;
    }
    CHECK_EQ(i, n);
    if (i < n) {
        while (i-- > 0) it->unlock(ls[i]);
        free(ls);
        return NULL;
    }
    return ls;
}

static void it_burst_free(it_lock **ls, long n)
{
    long i;
    for (i = 0; i < n; i++) it->unlock(ls[i]);
    free(ls);
}

/* A client at the library's defaults (tuned test settings undone), with a
   lock table of table_size entries (0: the built-in one). */
static it_client *it_burst_client(redis_nodes *rn, int ports[REDIS_NODES_MAX], redlock_lock **table,
                                  size_t table_size)
{
    it_setup s;
    it_defaults(&s, rn, ports);
    redlock_config_init(&s.core);
    s.core.node_count = rn->n;
    s.core.lock_table = table;
    s.core.lock_table_size = table_size;
    return it->open(&s);
}

/* 10,000 locks (2,000 under valgrind) acquired (all won), the nodes'
   script caches flushed (as a restart or a failover leaves them), then
   released at once: each release's EVALSHA is answered NOSCRIPT, its EVAL
   follows, and no key is left on any node. */
static void it_burst_release(void)
{
    const long N = it_valgrind() ? 2000 : 10000;
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], i;
    it_client *c;
    it_lock **ls;
    char prefix[96], pattern[100];
    long k;
    long long t0, t1;
    it_key(prefix, sizeof prefix, "burst-release");
    snprintf(pattern, sizeof pattern, "%s:*", prefix);
    c = it_burst_client(rn, ports, NULL, 0);
    CHECK(c != NULL);
    if (!c) return;
    ls = it_burst_locks(c, prefix, N);
    if (!ls) { it->close(c); return; }
    memset(it_results, 0, sizeof it_results);
    t0 = it_now_ms();
    for (k = 0; k < N; k++) {
        /* in batches of 200: what is tested here is the release */
        CHECK_EQ(redlock_acquire(it->core(ls[k])), REDLOCK_OK);
        if (k % 200 == 199) it_burst_wait(c, REDLOCK_OP_ACQUIRE, k + 1, 10000);
    }
    CHECK_EQ(it_burst_wait(c, REDLOCK_OP_ACQUIRE, N, 60000), N);
    CHECK_EQ(it_results[REDLOCK_OP_ACQUIRE][0], N);
    printf("#   %ld acquired in %lld ms\n", N, it_now_ms() - t0);
    for (i = 0; i < it_n; i++) {
        char out[64];
        CHECK_EQ(redis_nodes_cmd(rn, i, out, sizeof out, "SCRIPT", "FLUSH", (char *)NULL), 0);
    }
    t0 = it_now_ms();
    for (k = 0; k < N; k++)
        if (it->state(ls[k]) == REDLOCK_STATE_HELD) CHECK_EQ(redlock_release(it->core(ls[k])), REDLOCK_OK);
    t1 = it_now_ms();
    it_burst_wait(c, REDLOCK_OP_RELEASE, it_results[REDLOCK_OP_ACQUIRE][0], 60000);
    printf("#   %ld released (%ld not OK) in %lld ms (issued in %lld ms)\n",
           it_results[REDLOCK_OP_RELEASE][0] + it_results[REDLOCK_OP_RELEASE][1], it_results[REDLOCK_OP_RELEASE][1],
           it_now_ms() - t0, t1 - t0);
    /* every release answered OK but for a few at the start (at most 128):
       the first rounds start inside the loop above, which can take longer
       than a node timeout (under valgrind), and the client's window of
       turns adapts from there; the others start in the client's loop */
    CHECK(it_results[REDLOCK_OP_RELEASE][0] >= it_results[REDLOCK_OP_ACQUIRE][0] - 128);
    it->idle(c, 200); /* stragglers */
    for (i = 0; i < it_n; i++) {
        long left = it_count_keys(rn, i, pattern);
        if (left != 0) printf("#   node %d keeps %ld of the keys\n", i, left);
        CHECK_EQ(left, 0);
    }
    it_burst_free(ls, N);
    it->close(c);
}

/* Acquires issued at once on one node, all won at the default node
   timeout (the client's lock table sized for them, as section 5 of
   redlock.h recommends). IT_BURST_ACQUIRES sets the count (default
   20,000; 5,000 under valgrind). */
static void it_burst_acquire(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_client *c;
    it_lock **ls;
    redlock_lock **table;
    size_t size = 1;
    char prefix[96], pattern[100];
    long n = getenv("IT_BURST_ACQUIRES") ? atol(getenv("IT_BURST_ACQUIRES")) : it_valgrind() ? 5000 : 20000, k;
    long long t0;
    if (n < 1) n = 1;
    while (size < (size_t)n) size *= 2;
    table = (redlock_lock **)calloc(size, sizeof *table);
    CHECK(table != NULL);
    if (!table) return;
    it_key(prefix, sizeof prefix, "burst-acquire");
    snprintf(pattern, sizeof pattern, "%s:*", prefix);
    c = it_burst_client(rn, ports, table, size);
    CHECK(c != NULL);
    if (!c) { free(table); return; }
    ls = it_burst_locks(c, prefix, n);
    if (!ls) { it->close(c); free(table); return; }
    memset(it_results, 0, sizeof it_results);
    t0 = it_now_ms();
    for (k = 0; k < n; k++) CHECK_EQ(redlock_acquire(it->core(ls[k])), REDLOCK_OK);
    CHECK_EQ(it_burst_wait(c, REDLOCK_OP_ACQUIRE, n, 120000), n);
    printf("#   %ld acquires at once: %ld won in %lld ms\n", n, it_results[REDLOCK_OP_ACQUIRE][0], it_now_ms() - t0);
    CHECK_EQ(it_results[REDLOCK_OP_ACQUIRE][0], n);
    t0 = it_now_ms();
    for (k = 0; k < n; k++)
        if (it->state(ls[k]) == REDLOCK_STATE_HELD) redlock_release(it->core(ls[k]));
    it_burst_wait(c, REDLOCK_OP_RELEASE, it_results[REDLOCK_OP_ACQUIRE][0], 120000);
    printf("#   released in %lld ms\n", it_now_ms() - t0);
    it->idle(c, 200);
    CHECK_EQ(it_count_keys(rn, 0, pattern), 0);
    it_burst_free(ls, n);
    it->close(c);
    free(table);
}

/* ---- release notifications: a waiting acquire wakes at the release ---- */

typedef struct it_waiter {
    it_lock *l;
    int rc;
    long long done_ms;
    redlock_result r;
    pthread_t th;
} it_waiter;

static void *it_waiter_main(void *arg)
{
    it_waiter *w = (it_waiter *)arg;
    w->rc = it->acquire(w->l, &w->r);
    w->done_ms = it_now_ms();
    return NULL;
}

/* Subscribers of key's channel on node i (PUBSUB NUMSUB), or -1. */
static inline int it_numsub(redis_nodes *rn, int i, const char *key)
{
    char channel[160], out[256];
    snprintf(channel, sizeof channel, "%s%s", REDLOCK_CHANNEL_PREFIX, key);
    if (redis_nodes_cmd(rn, i, out, sizeof out, "EVAL", "return redis.call('PUBSUB','NUMSUB',KEYS[1])[2]", "1",
                        channel, (char *)NULL) != 0 || out[0] != ':')
        return -1;
    return atoi(out + 1);
}

/* Every node has `want` subscribers of key's channel within ms. */
static inline int it_numsub_is(redis_nodes *rn, const char *key, int want, int ms)
{
    long long until = it_now_ms() + ms;
    for (;;) {
        int i, ok = 1;
        for (i = 0; i < rn->n; i++) ok &= it_numsub(rn, i, key) == want;
        if (ok || it_now_ms() > until) return ok;
        redis_nodes__sleep_ms(5);
    }
}

/* Kills the subscriber connections (CLIENT KILL TYPE pubsub) of every node. */
static inline void it_kill_subscribers(redis_nodes *rn)
{
    char out[64];
    int i;
    for (i = 0; i < rn->n; i++)
        redis_nodes_cmd(rn, i, out, sizeof out, "CLIENT", "KILL", "TYPE", "pubsub", (char *)NULL);
}

/* a holds key; b's acquire (on a thread) waits, listening; the release
   wakes it long before its next attempt (due 2 s after the first). With
   `kill`, b's subscribers are killed mid-wait first: they must come back
   (reconnect delay 100 ms) and still wake it. Returns whether the wake
   came in time. Over N nodes it may not, rarely and by design: b's woken
   attempt can reach a node before the release does there, and the copies
   of that release which arrive during the attempt do not start another
   (they would after every lost race). */
static int it_wake_cycle(redis_nodes *rn, it_client *b, it_lock *la, it_lock *lb, const char *key, int kill)
{
    it_waiter w;
    long long released;
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    memset(&w, 0, sizeof w);
    w.l = lb;
    pthread_create(&w.th, NULL, it_waiter_main, &w);
    CHECK_EQ(it_numsub_is(rn, key, 1, 1500), 1); /* b failed its first attempt and listens */
    if (kill) {
        it_kill_subscribers(rn);
        CHECK_EQ(it_numsub_is(rn, key, 1, 1000), 1); /* subscribed again */
    }
    released = it_now_ms();
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    pthread_join(w.th, NULL);
    CHECK_EQ(w.rc, REDLOCK_OK);
    CHECK(w.r.attempts >= 2); /* (a stale message of the last release may cost one early) */
    it->idle(b, 30); /* an event loop writes the UNSUBSCRIBE when it runs */
    CHECK_EQ(it_numsub_is(rn, key, 0, 500), 1); /* the acquire ended: unsubscribed */
    CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    return w.done_ms - released < 1000;
}

/* The cycle woke b in time: on one node at once, over N nodes at the
   second try at the latest (see it_wake_cycle). */
static void it_wake_checked(redis_nodes *rn, it_client *b, it_lock *la, it_lock *lb, const char *key, int kill)
{
    int fast = it_wake_cycle(rn, b, la, lb, key, kill);
    if (!fast && rn->n > 1) {
        printf("#   %s: woken late once (a release raced on the nodes); again\n", it_name);
        fast = it_wake_cycle(rn, b, la, lb, key, kill);
    }
    CHECK(fast);
}

/* Two clients on s and a key: a holds `la`; b's `lb` waits with `retries`
   retries `delay_ms` apart (jitter 1 ms), as the wake scenarios need. */
typedef struct it_wake_pair {
    it_client *a, *b;
    it_lock *la, *lb;
    char key[96];
} it_wake_pair;

static int it_wake_pair_open(it_wake_pair *p, const it_setup *s, const char *name, int retries, int delay_ms)
{
    redlock_lock_opts o;
    memset(p, 0, sizeof *p);
    if (it_open_pair(s, &p->a, &p->b) != 0) {
        p->a = p->b = NULL; /* closed already */
        return -1;
    }
    it_key(p->key, sizeof p->key, name);
    it_lock_opts(&o, p->key, 5000);
    p->la = it->lock(p->a, &o);
    o.retry_count = retries;
    o.retry_delay_ms = delay_ms;
    o.retry_jitter_ms = 1;
    p->lb = it->lock(p->b, &o);
    CHECK(p->la && p->lb);
    return p->la && p->lb ? 0 : -1;
}

static void it_wake_pair_close(it_wake_pair *p)
{
    if (p->la) it->unlock(p->la);
    if (p->lb) it->unlock(p->lb);
    it->close(p->a);
    it->close(p->b);
}

/* b waits for a's lock with a 2 s retry delay: it is subscribed only
   while it waits, and the release hands it the lock at once; again with
   its subscriber connections killed mid-wait; and killed right before
   the release, when no message can reach it: the waiter then takes the
   lock at its next attempt (a shorter delay here), after the delay. */
static void it_wake_on_release(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_wake_pair p;
    it_lock *lc = NULL;
    it_waiter w;
    redlock_lock_opts o;
    it_defaults(&s, rn, ports);
    if (it_wake_pair_open(&p, &s, "wake", 5, 2000) != 0) goto out;
    it_lock_opts(&o, p.key, 5000);
    o.retry_count = 5;
    o.retry_delay_ms = 300;
    o.retry_jitter_ms = 1;
    lc = it->lock(p.b, &o);
    CHECK(lc != NULL);
    if (!lc) goto out;
    CHECK_EQ(it_numsub_is(rn, p.key, 0, 0), 1);
    it_wake_checked(rn, p.b, p.la, p.lb, p.key, 0);
    it_wake_checked(rn, p.b, p.la, p.lb, p.key, 1);
    CHECK_EQ(it->acquire(p.la, NULL), REDLOCK_OK);
    memset(&w, 0, sizeof w);
    w.l = lc;
    pthread_create(&w.th, NULL, it_waiter_main, &w);
    CHECK_EQ(it_numsub_is(rn, p.key, 1, 1500), 1);
    it_kill_subscribers(rn);
    CHECK_EQ(it->release(p.la, NULL), REDLOCK_OK);
    pthread_join(w.th, NULL);
    CHECK_EQ(w.rc, REDLOCK_OK);
    CHECK(w.r.attempts >= 2);
    CHECK_EQ(it->release(lc, NULL), REDLOCK_OK);
out:
    if (lc) it->unlock(lc);
    if (p.a) it_wake_pair_close(&p);
}

/* The subscribers log in as the node's connections do (AUTH). */
static void it_wake_auth(void)
{
    redis_nodes *rn = &it_authed[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_wake_pair p;
    it_defaults(&s, rn, ports);
    s.pass = "s3cret";
    if (it_wake_pair_open(&p, &s, "wake-auth", 5, 2000) == 0) {
        rn->auth_pass = "s3cret"; /* for the test's own PUBSUB NUMSUB */
        it_wake_checked(rn, p.b, p.la, p.lb, p.key, 0);
        rn->auth_pass = NULL;
    }
    if (p.a) it_wake_pair_close(&p);
}

/* With notifications off nothing subscribes: the waiter sleeps out its delay. */
static void it_wake_off(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_wake_pair p;
    it_waiter w;
    long long released;
    it_defaults(&s, rn, ports);
    s.notify_off = 1;
    if (it_wake_pair_open(&p, &s, "wake-off", 2, 600) == 0) {
        CHECK_EQ(it->acquire(p.la, NULL), REDLOCK_OK);
        memset(&w, 0, sizeof w);
        w.l = p.lb;
        pthread_create(&w.th, NULL, it_waiter_main, &w);
        redis_nodes__sleep_ms(200);
        CHECK_EQ(it_numsub_is(rn, p.key, 0, 0), 1);
        released = it_now_ms();
        CHECK_EQ(it->release(p.la, NULL), REDLOCK_OK);
        pthread_join(w.th, NULL);
        CHECK_EQ(w.rc, REDLOCK_OK);
        CHECK_EQ(w.r.attempts, 2);
        CHECK(w.done_ms - released >= 250); /* the attempt came when due (600 ms after the first) */
        CHECK_EQ(it->release(p.lb, NULL), REDLOCK_OK);
    }
    if (p.a) it_wake_pair_close(&p);
}

/* A user that may not script: a reentrant lock is refused with
   NO_SCRIPTING at once (no legacy fallback), and nothing is written. */
static void it_reentrant_noscript(void) { it_noscript_refused("reentrant-noscript", 0); }

static void it_acl_noscript(void)
{
    redis_nodes *rn = &it_acled[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la, *lb;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], tok[64], out[64];
    it_defaults(&s, rn, ports);
    s.user = "u";
    s.pass = "pw";
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_key(key, sizeof key, "acl");
    it_lock_opts(&o, key, 1000);
    la = it->lock(a, &o);
    lb = it->lock(b, &o);
    /* the ACL really refuses scripts */
    rn->auth_user = "u";
    rn->auth_pass = "pw";
    redis_nodes_cmd(rn, 0, out, sizeof out, "EVAL", "return 1", "0", (char *)NULL);
    CHECK(strncmp(out, "-NOPERM", 7) == 0);
    rn->auth_user = rn->auth_pass = NULL;
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    snprintf(tok, sizeof tok, "%s", it->token(la));
    CHECK_EQ(it_holders_settle(rn, key, tok, it_n), it_n);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it_holders_settle(rn, key, tok, it_n), it_n); /* b's cleanup spared a's key */
    CHECK_EQ(it->extend(la, 3000, &r), REDLOCK_OK);
    redis_nodes_cmd(rn, 0, out, sizeof out, "PTTL", key, (char *)NULL);
    CHECK(atoi(out + 1) > 2000);
    CHECK_EQ(it->release(la, &r), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, tok, 0), 0);
    CHECK(it->mode_switches(a) >= 1);
    CHECK_EQ(it->acquire(lb, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(lb), 0), 0);
    it->unlock(la);
    it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* SELECT: the lock lives in the configured db, not in db 0 */
static void it_select_db(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la;
    redlock_lock_opts o;
    char key[96], tok[64], out[64];
    int i, in3 = 0;
    const char *get3 = "redis.call('SELECT', 3) return redis.call('GET', KEYS[1])";
    it_defaults(&s, rn, ports);
    s.db = 3;
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "select");
    it_lock_opts(&o, key, 1000);
    la = it->lock(a, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    snprintf(tok, sizeof tok, "%s", it->token(la));
    CHECK_EQ(it_holders(rn, key, tok), 0); /* not in db 0 */
    for (i = 0; i < it_n; i++) {
        redis_nodes_cmd(rn, i, out, sizeof out, "EVAL", get3, "1", key, (char *)NULL);
        in3 += strcmp(out, tok) == 0;
    }
    CHECK(in3 >= it_quorum());
    CHECK_EQ(it->extend(la, 1000, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    redis_nodes__sleep_ms(20);
    for (i = 0; i < it_n; i++) {
        redis_nodes_cmd(rn, i, out, sizeof out, "EVAL", get3, "1", key, (char *)NULL);
        CHECK_STR(out, "$-1");
    }
    it->unlock(la);
    it->close(a);
}

/* A program that stops calling into the adapter (no renewal thread) does
   not read HELD past the validity: the state reads the clock, and the LOST
   result follows once the adapter runs again. */
static void it_state_by_clock(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la;
    redlock_lock_opts o;
    char key[96];
    it_defaults(&s, rn, ports);
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "clock");
    it_lock_opts(&o, key, 200);
    o.watchdog = 1;
    la = it->lock(a, &o);
    CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
    CHECK_EQ(it->state(la), REDLOCK_STATE_HELD);
    redis_nodes__sleep_ms(260); /* no call into the adapter: no renewal */
    CHECK_EQ(it->state(la), REDLOCK_STATE_LOST);
    CHECK_EQ(it->lost(la), 0); /* not reported yet ... */
    it->idle(a, 20);
    CHECK_EQ(it->lost(la), 1); /* ... until the adapter runs */
    CHECK_EQ(it->state(la), REDLOCK_STATE_LOST);
    it->unlock(la);
    it->close(a);
}

/* a majority stops answering with requests in flight, then dies: the
   in-flight requests fail at once (transport error), long before the
   node timeout, and the nodes are used again after a restart */
typedef struct it_killer {
    redis_nodes *rn;
    int count, delay_ms;
} it_killer;

static void *it_killer_main(void *arg)
{
    it_killer *k = (it_killer *)arg;
    int i;
    redis_nodes__sleep_ms(k->delay_ms);
    for (i = 0; i < k->count; i++) redis_node_kill(k->rn, i);
    return NULL;
}

static void it_inflight_drop(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *la;
    redlock_lock_opts o;
    redlock_result r;
    it_killer k;
    pthread_t th;
    char key[96];
    long long t0, took;
    int i;
    it_defaults(&s, rn, ports);
    s.core.node_timeout_ms = 1500;
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "inflight");
    it_lock_opts(&o, key, 5000);
    o.retry_count = -1;
    la = it->lock(a, &o);
    for (i = 0; i < it_quorum(); i++) redis_node_pause(rn, i);
    k.rn = rn;
    k.count = it_quorum();
    k.delay_ms = 100;
    t0 = it_now_ms();
    CHECK_EQ(pthread_create(&th, NULL, it_killer_main, &k), 0);
    CHECK(it->acquire(la, &r) != REDLOCK_OK);
    took = it_now_ms() - t0;
    pthread_join(th, NULL);
    /* ended by the drop (~100 ms), not by the command timeout (300 ms) nor
       the node timeout (1.5 s) */
    printf("#   acquire ended after %lld ms\n", took);
    CHECK(took >= 80 && took < 250);
    CHECK(it->node_status(a, 0) != 0);
    for (i = 0; i < it_quorum(); i++) CHECK_EQ(redis_node_restart(rn, i), 0);
    it->idle(a, 300);
    /* a majority restarted (new run_ids): they grant again once a lock's
       ttl has passed since the client saw them; a short one waits little */
    it->unlock(la);
    o.ttl_ms = 300;
    la = it->lock(a, &o);
    CHECK_EQ(it_acquire_after_restart(a, la, 300 + 3000), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(la), it_n), it_n);
    CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
    it->unlock(la);
    it->close(a);
}

/* ---- runner ---- */

/* Does any comma-separated part of list occur in name? */
static int it_names_any(const char *name, const char *list)
{
    char part[64];
    while (*list) {
        size_t l = strcspn(list, ",");
        if (l > 0 && l < sizeof part) {
            memcpy(part, list, l);
            part[l] = 0;
            if (strstr(name, part)) return 1;
        }
        list += l;
        if (*list == ',') list++;
    }
    return 0;
}

/* IT_ONLY=a,b runs the scenarios whose names hold a or b; IT_SKIP=c,d
   leaves out those that hold c or d (e.g. the Sentinel scenarios, seconds
   of waiting on sentinels, in the memcheck lanes: the ASan lanes run them). */
static int it_selected(const char *name)
{
    const char *only = getenv("IT_ONLY"), *skip = getenv("IT_SKIP");
    if (skip && skip[0] && it_names_any(name, skip)) return 0;
    if (!only || !only[0]) return 1;
    return it_names_any(name, only);
}

/* ---- hostile nodes: two healthy nodes and one that misbehaves ----
   Every adapter must get its quorum from the healthy two, in bounded time,
   cycle after cycle, without crashing, leaking descriptors or buffering
   without bound. */

enum { IT_STRAY = 1, IT_HUGE, IT_SILENT, IT_RESET, IT_CLOSED, IT_BLACKHOLE, IT_TRICKLE, IT_GREET, IT_HALF_RESET,
       IT_GARBAGE, IT_STRAY_IDLE };

/* A listener whose accept queue is full: connects to it neither complete
   nor fail (the SYNs are dropped), as with a host that vanished. */
typedef struct it_blackhole { int lfd, fill[4], port; } it_blackhole;

static inline int it_blackhole_open(it_blackhole *b)
{
    struct sockaddr_in sa;
    socklen_t sl = (socklen_t)sizeof sa;
    int k;
    memset(b, 0, sizeof *b);
    for (k = 0; k < 4; k++) b->fill[k] = -1;
    b->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (b->lfd < 0) return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(b->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(b->lfd, 0) != 0 ||
        getsockname(b->lfd, (struct sockaddr *)&sa, &sl) != 0) {
        close(b->lfd);
        return -1;
    }
    b->port = ntohs(sa.sin_port);
    for (k = 0; k < 4; k++) { /* never accepted: they fill the queue */
        b->fill[k] = socket(AF_INET, SOCK_STREAM, 0);
        if (b->fill[k] < 0) continue;
        fcntl(b->fill[k], F_SETFL, fcntl(b->fill[k], F_GETFL) | O_NONBLOCK);
        if (connect(b->fill[k], (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
            close(b->fill[k]);
            b->fill[k] = -1;
        }
    }
    redis_nodes__sleep_ms(50);
    return 0;
}

static inline void it_blackhole_close(it_blackhole *b)
{
    int k;
    for (k = 0; k < 4; k++)
        if (b->fill[k] >= 0) close(b->fill[k]);
    close(b->lfd);
}

static inline int it_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* Peak resident memory in KiB since the last it_peak_reset(). */
static inline void it_peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) { fputs("5", f); fclose(f); }
}
static inline long it_peak_kib(void)
{
    char line[128];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

static inline void it_hostile(int kind, int threaded)
{
    static const char *const names[] = {"", "stray", "huge", "silent", "reset", "closed", "blackhole",
                                        "trickle", "greet", "half-reset", "garbage", "stray-idle"};
    redis_nodes *rn = &it_plain[3];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    hostile h;
    it_blackhole b;
    char key[96];
    long long t0, worst = 0;
    long peak0, peak;
    int fds0, fds_open = -1, cycle, ok = 0, k;
    memset(&h, 0, sizeof h);
    it_defaults(&s, rn, ports);
    s.watchdog_thread = threaded;
    switch (kind) {
    case IT_STRAY: CHECK_EQ(hostile_start(&h, HOSTILE_STRAY, "+OK\r\n"), 0); break;
    case IT_STRAY_IDLE: CHECK_EQ(hostile_start(&h, HOSTILE_STRAY_LATE, "+OK\r\n"), 0); break;
    case IT_HUGE: CHECK_EQ(hostile_start(&h, HOSTILE_FLOOD, "$2000000000\r\n"), 0); break;
    case IT_SILENT: CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0); break;
    case IT_RESET: CHECK_EQ(hostile_start(&h, HOSTILE_RESET, NULL), 0); break;
    case IT_TRICKLE: CHECK_EQ(hostile_start(&h, HOSTILE_TRICKLE, NULL), 0); break;
    case IT_GREET: CHECK_EQ(hostile_start(&h, HOSTILE_GREET, "+OK\r\n"), 0); break;
    case IT_HALF_RESET: CHECK_EQ(hostile_start(&h, HOSTILE_HALF_RESET, ":1\r\n"), 0); break;
    case IT_GARBAGE: CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, "?garbage\r\n"), 0); break;
    default: break;
    }
    if (kind == IT_BLACKHOLE) CHECK_EQ(it_blackhole_open(&b), 0);
    ports[2] = kind == IT_CLOSED ? hostile_closed_port() : kind == IT_BLACKHOLE ? b.port : h.port;
    /* a bad node that answers at once (or refuses) never makes the client
       wait a node timeout: a longer one costs nothing here and keeps a
       loaded machine's late reply from a healthy node out of the count */
    if (kind != IT_SILENT && kind != IT_TRICKLE && kind != IT_BLACKHOLE && s.core.node_timeout_ms < 200)
        s.core.node_timeout_ms = 200;
    fds0 = it_fd_count();
    memset(it_vote_status, 0, sizeof it_vote_status);
    it_peak_reset();
    peak0 = it_peak_kib();
    a = it->open(&s);
    CHECK(a != NULL);
    if (a) {
        snprintf(key, sizeof key, "it:%s:hostile-%s-%d", it->name, names[kind], threaded);
        it_lock_opts(&o, key, 2000);
        l = it->lock(a, &o);
        for (cycle = 0; l && cycle < 8; cycle++) {
            /* past the reconnect delay: the bad node is retried in this cycle */
            redis_nodes__sleep_ms(110);
            t0 = it_now_ms();
            if (it->acquire(l, &r) == REDLOCK_OK) {
                ok += r.attempts == 1; /* the bad node never cost an attempt */
                if (r.attempts != 1)
                    printf("#   cycle %d: %d attempts (last votes: %d %d %d)\n", cycle, r.attempts, it_vote_status[0][0],
                           it_vote_status[0][1], it_vote_status[0][2]);
                CHECK_EQ(it_holders(rn, key, it->token(l)), 2);
                /* the loop not running, the unasked reply waits on the
                   idle connection: the release must not take it for its
                   answer, nor the connection for one merely closed */
                if (kind == IT_STRAY_IDLE) redis_nodes__sleep_ms(30);
                CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
            }
            if (it_now_ms() - t0 > worst) worst = it_now_ms() - t0;
            if (cycle == 1) fds_open = it_fd_count();
        }
        /* every cycle took its lock on the healthy two, quickly */
        CHECK_EQ(ok, 8);
        /* the bad node's status names what went wrong: a reply nobody
           asked for, one too large, or not RESP is PROTOCOL; no answer (or
           one too slow) NODE_TIMEOUT; a reset TRANSPORT; a closed port
           CONNECT; a black hole CONNECT, or NODE_TIMEOUT where the kernel
           let the connect complete */
        switch (kind) {
        case IT_STRAY:
            /* a stray that lands after the next command went out reads as
               that command's reply (a malformed one); the command's own
               reply then comes unasked: a blocking client sees it once it
               runs its loop again */
            it->idle(a, 50);
            CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_PROTOCOL);
            break;
        case IT_STRAY_IDLE:
            /* the stray after the last command's reply (on a connection
               that opened with INFO, the stray after INFO's is what the
               next command finds) comes while the client is idle: seen
               when the loop runs */
            for (k = 0; k < 50 && it->node_connected(a, 2) && !threaded; k++) it->idle(a, 20);
            CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_PROTOCOL);
            break;
        case IT_HUGE: case IT_GARBAGE:
            CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_PROTOCOL);
            /* on a loaded machine the release may have found the reconnect
               delay over and reconnected: the bad reply to its command is
               then still arriving, and is seen as soon as the loop runs */
            for (k = 0; k < 50 && it->node_connected(a, 2) && !threaded; k++) it->idle(a, 20);
            break;
        case IT_GREET: /* a greeting that came before the command reads as its reply */
            CHECK(it->node_status(a, 2) == REDLOCK_ERR_PROTOCOL || it->node_status(a, 2) == 0);
            break;
        case IT_SILENT: case IT_TRICKLE:
            /* a trickled reply may complete in time (the node answered:
               status 0), and so may the next one queued behind it (a
               blocking call returns only after up to a node timeout spent
               reading answers still owed); three more cycles back to back
               queue more than the node trickles out within the command
               timeout (300 ms): the node is dropped as too slow */
            for (k = 0; k < 3 && l; k++)
                if (it->acquire(l, NULL) == REDLOCK_OK) it->release(l, NULL);
            it->idle(a, 400);
            CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_NODE_TIMEOUT);
            break;
        case IT_RESET: case IT_HALF_RESET: CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_TRANSPORT); break;
        case IT_CLOSED: /* the node's status, and the votes it failed, say CONNECT */
            CHECK_EQ(it->node_status(a, 2), REDLOCK_ERR_CONNECT);
            CHECK_EQ(it_vote_status[0][2], REDLOCK_ERR_CONNECT);
            CHECK_EQ(it_vote_status[1][2], REDLOCK_ERR_CONNECT);
            break;
        case IT_BLACKHOLE:
            CHECK(it->node_status(a, 2) == REDLOCK_ERR_CONNECT || it->node_status(a, 2) == REDLOCK_ERR_NODE_TIMEOUT);
            break;
        default: break;
        }
        /* and its connection is closed (a watchdog thread reconnects at will) */
        CHECK(!it->node_connected(a, 2) || threaded || kind == IT_SILENT || kind == IT_TRICKLE ||
              kind == IT_BLACKHOLE || kind == IT_GREET);
        if (worst > 600) printf("#   %s: slowest acquire+release %lld ms\n", names[kind], worst);
        CHECK(worst <= 600);
        /* reconnects to the bad node do not pile up descriptors */
        if (it_fd_count() > fds_open + 1) printf("#   fds %d after 2 cycles, %d after 8\n", fds_open, it_fd_count());
        CHECK(it_fd_count() <= fds_open + 1);
        if (l) it->unlock(l);
        it->close(a);
    }
    peak = it_peak_kib();
    if (!IT_ASAN) { /* ASan's quarantine keeps freed blocks: the peak is measured in the plain build */
        if (peak - peak0 > 32 * 1024) printf("#   peak memory grew by %ld KiB\n", peak - peak0);
        CHECK(peak - peak0 <= 32 * 1024);
    }
    CHECK_EQ(it_fd_count(), fds0); /* closing the client closed everything */
    if (kind == IT_BLACKHOLE) it_blackhole_close(&b);
    hostile_stop(&h);
}

/* A node restarts while the client is idle (no loop runs, no thread): the
   next acquire notices the closed connection before writing to it and
   gets that node's vote on a new connection, on the first attempt; the
   node's status is 0 again once it has answered. Its grant does not
   count for a ttl (a new run_id: redlock.h section 4, Restarts): with the
   others, the lock is won at once; a lone node refuses it (RESTARTED). */
static void it_restart_idle(void)
{
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96];
    it_defaults(&s, rn, ports);
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "restart-idle");
    it_lock_opts(&o, key, 2000);
    l = it->lock(a, &o);
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    CHECK_EQ(redis_node_restart(rn, 0), 0);
    redis_nodes__sleep_ms(150); /* the restart is older than any reconnect delay */
    memset(&r, 0, sizeof r);
    if (it_n == 1) {
        it->unlock(l);
        o.retry_count = -1; /* one attempt */
        l = it->lock(a, &o);
        it_vote_status[0][0] = 0;
        CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_RESTARTED);
        CHECK_EQ(r.attempts, 1);
        CHECK_EQ(it_vote_status[0][0], REDLOCK_ERR_RESTARTED); /* its grant, on the new connection */
    } else {
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(r.attempts, 1);
        CHECK_EQ(it_holders_settle(rn, key, it->token(l), it_n), it_n); /* the restarted node too */
    }
    it->idle(a, 50); /* a blocking client reads a straggler's answer when it next runs */
    CHECK_EQ(it->node_status(a, 0), 0);
    if (it_n > 1) CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->unlock(l);
    it->close(a);
}

/* ---- restarts without persistence (redlock.h section 4, Restarts) ----
   Three nodes that do not keep keys across a restart (it_volatile). A
   holds a lock (watchdog on); two of the three nodes are killed and
   restarted empty. The key of A is gone there, so those nodes would
   grant it to anyone: a client that never saw them before (B) counts
   their grants only once a ttl has passed since their server started,
   and A's own client, which saw them before, once a ttl has passed
   since it saw their new run_id. Until then B is refused (never granted
   while A may still count on its validity), and a second lock of A's
   client on a free key too; within the bound and a margin, both win. */
static redis_nodes it_volatile;

/* Did client `who` hear EV_NODE_RESTARTED of node with this mode? */
static inline int it_restart_heard(const void *who, int node, int mode)
{
    int k, heard = 0;
    pthread_mutex_lock(&it_restarts_mu);
    for (k = 0; k < it_nrestarts && !heard; k++)
        heard = it_restarts[k].who == who && it_restarts[k].node == node && it_restarts[k].mode == mode;
    pthread_mutex_unlock(&it_restarts_mu);
    return heard;
}

/* One acquire of l (one attempt) while a restart's bound may not have
   passed: refused (RESTARTED; LOCKED if locked_ok; NO_QUORUM while the
   client has not reconnected yet), or granted, which must not be before
   `ttl_ms` after `t_kill` nor while `holder` (NULL: none) still reads
   HELD; the grant's time goes to *won (kept once set). */
static inline void it_try_after_restart(it_lock *l, it_lock *holder, long long t_kill, int64_t ttl_ms, int locked_ok,
                                        long long *won)
{
    int st;
    if (*won) return;
    st = it->acquire(l, NULL);
    if (st == REDLOCK_OK) {
        *won = it_now_ms();
        CHECK(*won - t_kill >= ttl_ms); /* not before the bound */
        if (holder) CHECK(it->state(holder) != REDLOCK_STATE_HELD);
        return;
    }
    if (st != REDLOCK_ERR_RESTARTED && st != REDLOCK_ERR_NO_QUORUM && !(locked_ok && st == REDLOCK_ERR_LOCKED)) {
        printf("#   refused with %s\n", redlock_strerror(st));
        CHECK(0);
    }
}

static void it_restart_empty(void)
{
    enum { TTL = 1500 };
    redis_nodes *rn = &it_volatile;
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *la, *la2, *lb;
    redlock_lock_opts o;
    char key[96], key2[96];
    long long t0, t_kill, won_a = 0, won_b = 0;
    int st;
    if (rn->n != 3) {
        printf("#   the nodes without persistence did not start\n");
        CHECK(0);
        return;
    }
    it_defaults(&s, rn, ports);
    s.watchdog_thread = 1;
    it_nrestarts = it_restarts_dropped = 0; /* the table's room for this scenario's clients */
    a = it->open(&s);
    CHECK(a != NULL);
    if (!a) return;
    it_key(key, sizeof key, "restart-empty");
    it_key(key2, sizeof key2, "restart-empty-2");
    it_lock_opts(&o, key, TTL);
    o.watchdog = 1;
    la = it->lock(a, &o);
    /* the nodes may be younger than the ttl: their grants count once it has
       passed since they started */
    t0 = it_now_ms();
    while ((st = it->acquire(la, NULL)) == REDLOCK_ERR_RESTARTED && it_now_ms() - t0 < TTL + 5000) it->idle(a, 50);
    CHECK_EQ(st, REDLOCK_OK);
    if (st != REDLOCK_OK) {
        it->unlock(la);
        it->close(a);
        return;
    }
    t_kill = it_now_ms();
    redis_node_kill(rn, 0);
    redis_node_kill(rn, 1);
    CHECK_EQ(redis_node_restart_volatile(rn, 0), 0);
    CHECK_EQ(redis_node_restart_volatile(rn, 1), 0);
    /* B never saw these nodes: 2 grant (empty), 1 refuses (A's key) */
    s.watchdog_thread = 0;
    b = it->open(&s);
    CHECK(b != NULL);
    if (!b) {
        it->unlock(la);
        it->close(a);
        return;
    }
    it_lock_opts(&o, key, TTL);
    o.retry_count = -1; /* one attempt per call */
    lb = it->lock(b, &o);
    st = it->acquire(lb, NULL);
    CHECK(st == REDLOCK_ERR_RESTARTED || st == REDLOCK_ERR_LOCKED);
    CHECK(it_restart_heard(b, 0, REDLOCK_RESTART_UPTIME) && it_restart_heard(b, 1, REDLOCK_RESTART_UPTIME));
    /* A's client saw them before: a new run_id (once it has reconnected),
       and a free key is refused */
    it_lock_opts(&o, key2, TTL);
    o.retry_count = -1;
    la2 = it->lock(a, &o);
    while ((!won_a || !won_b) && it_now_ms() - t_kill < TTL + 5000) {
        it_try_after_restart(lb, la, t_kill, TTL, 1, &won_b);
        it_try_after_restart(la2, NULL, t_kill, TTL, 0, &won_a);
        it->idle(a, 25);
        it->idle(b, 25);
    }
    CHECK(won_a && won_b); /* within the bound and a margin */
    if (!it_restart_heard(a, 0, REDLOCK_RESTART_RUN_ID) || !it_restart_heard(a, 1, REDLOCK_RESTART_RUN_ID)) {
        int k;
        CHECK(!"A's client told of both restarts by their run_id");
        for (k = 0; k < it_nrestarts; k++)
            printf("#   heard: client %s node %d reason %d %lld us ago\n", it_restarts[k].who == (void *)a ? "A" : "B",
                   it_restarts[k].node, it_restarts[k].mode, (long long)it_restarts[k].elapsed_us);
    }
    printf("#   granted %lld ms (B) and %lld ms (A's second lock) after the kill; ttl %d ms\n",
           won_b ? won_b - t_kill : -1, won_a ? won_a - t_kill : -1, (int)TTL);
    if (won_b) CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    if (won_a) CHECK_EQ(it->release(la2, NULL), REDLOCK_OK);
    it->unlock(lb);
    it->unlock(la2);
    it->unlock(la);
    it->close(b);
    it->close(a);
}

/* ---- a real node behind the test proxy (tests/shared/tcp_proxy.h) ----
   Node 2 of three is reached through the proxy; one fault on its route,
   then the lock must still work on the healthy two, and what reached
   node 2 must be cleaned up or counted again once the fault is gone. */

enum { IT_PX_CUT = 1, IT_PX_LATENCY, IT_PX_PARTITION, IT_PX_RESET };

/* Waits (up to ms) until `want` nodes hold token; returns the count. */
static inline int it_holders_within(redis_nodes *rn, const char *key, const char *token, int want, long ms)
{
    long long until = redis_nodes__now_ms() + ms;
    int k;
    while ((k = it_holders(rn, key, token)) != want && redis_nodes__now_ms() < until) redis_nodes__sleep_ms(5);
    return k;
}

static inline void it_proxy(int kind)
{
    static const char *const names[] = { "", "cut", "latency", "partition", "reset" };
    redis_nodes *rn = &it_plain[3];
    int ports[REDIS_NODES_MAX], upstream, k, all = 0;
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    tcp_proxy px;
    char key[96], tok[64];
    long long t0;
    it_defaults(&s, rn, ports);
    upstream = ports[2];
    if (tcp_proxy_start(&px, 1, &upstream) != 0) {
        CHECK(!"the proxy did not start");
        return;
    }
    ports[2] = px.port[0];
    a = it->open(&s);
    CHECK(a != NULL);
    snprintf(key, sizeof key, "it:%s:proxy-%s", it->name, names[kind]);
    it_lock_opts(&o, key, 3000);
    l = a ? it->lock(a, &o) : NULL;
    CHECK(l != NULL);
    if (!l) goto out;
    /* no fault yet: the proxy relays, all three hold */
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(l), 3), 3);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    CHECK_EQ(it_holders_settle(rn, key, it->token(l), 0), 0);
    switch (kind) {
    case IT_PX_CUT:
        /* the SET lands on node 2 but its reply stops half-way: the vote is
           lost, the key is not, and the release must still delete it */
        tcp_proxy_cut_reply(&px, 0);
        memset(&r, 0, sizeof r);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(r.attempts, 1);
        snprintf(tok, sizeof tok, "%s", it->token(l));
        CHECK_EQ(it_holders_settle(rn, key, tok, 3), 3);
        it->idle(a, 20);
        CHECK_EQ(px.route[0].cut, 1);
        k = it->node_status(a, 2);
        if (k != REDLOCK_ERR_PROTOCOL && k != REDLOCK_ERR_TRANSPORT) printf("#   node 2 status %d\n", k);
        CHECK(k == REDLOCK_ERR_PROTOCOL || k == REDLOCK_ERR_TRANSPORT);
        redis_nodes__sleep_ms(150); /* past any reconnect delay */
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        CHECK_EQ(it_holders_within(rn, key, tok, 0, 1000), 0);
        break;
    case IT_PX_LATENCY:
        /* node 2 answers 300 ms late: the lock is decided without it, and
           its late SET is followed by the release, in order */
        tcp_proxy_latency(&px, 0, 300);
        t0 = it_now_ms();
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        if (it_now_ms() - t0 >= 250) printf("#   acquire took %lld ms\n", it_now_ms() - t0);
        CHECK(it_now_ms() - t0 < 250);
        snprintf(tok, sizeof tok, "%s", it->token(l));
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        CHECK_EQ(it_holders_within(rn, key, tok, 0, 1500), 0);
        tcp_proxy_latency(&px, 0, 0);
        CHECK_EQ(it->node_status(a, 2), 0);
        break;
    case IT_PX_PARTITION:
        /* node 2 cut off: the two others grant; once healed, node 2 votes again */
        tcp_proxy_blackhole(&px, 0, 1);
        memset(&r, 0, sizeof r);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(r.attempts, 1);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->idle(a, 100);
        tcp_proxy_blackhole(&px, 0, 0);
        for (k = 0; k < 40 && all != 3; k++) {
            it->idle(a, 100);
            if (it->acquire(l, NULL) != REDLOCK_OK) continue;
            all = it_holders_settle(rn, key, it->token(l), 3);
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        }
        if (all != 3) printf("#   node 2 never voted again after the partition\n");
        CHECK_EQ(all, 3);
        break;
    case IT_PX_RESET:
        /* idle connections reset: noticed before the next command, which
           goes to a new connection and keeps its vote */
        it->idle(a, 20);
        tcp_proxy_reset(&px, 0);
        for (k = 0; k < 100 && px.route[0].reset == 0; k++) redis_nodes__sleep_ms(2);
        CHECK(px.route[0].reset > 0);
        redis_nodes__sleep_ms(20);
        memset(&r, 0, sizeof r);
        CHECK_EQ(it->acquire(l, &r), REDLOCK_OK);
        CHECK_EQ(r.attempts, 1);
        CHECK_EQ(it_holders_settle(rn, key, it->token(l), 3), 3);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        break;
    default: break;
    }
    it->unlock(l);
out:
    if (a) it->close(a);
    tcp_proxy_stop(&px);
}

static void it_proxy_cut(void) { it_proxy(IT_PX_CUT); }
static void it_proxy_latency(void) { it_proxy(IT_PX_LATENCY); }
static void it_proxy_partition(void) { it_proxy(IT_PX_PARTITION); }
static void it_proxy_reset(void) { it_proxy(IT_PX_RESET); }

static void it_hostile_stray(void) { it_hostile(IT_STRAY, 0); }
static void it_hostile_huge(void) { it_hostile(IT_HUGE, 0); }
static void it_hostile_silent(void) { it_hostile(IT_SILENT, 0); }
static void it_hostile_reset(void) { it_hostile(IT_RESET, 0); }
static void it_hostile_closed(void) { it_hostile(IT_CLOSED, 0); }
static void it_hostile_blackhole(void) { it_hostile(IT_BLACKHOLE, 0); }
static void it_hostile_trickle(void) { it_hostile(IT_TRICKLE, 0); }
static void it_hostile_greet(void) { it_hostile(IT_GREET, 0); }
static void it_hostile_half_reset(void) { it_hostile(IT_HALF_RESET, 0); }
static void it_hostile_garbage(void) { it_hostile(IT_GARBAGE, 0); }
static void it_hostile_stray_idle(void) { it_hostile(IT_STRAY_IDLE, 0); }
static void it_hostile_stray_bg(void) { it_hostile(IT_STRAY, 1); }
static void it_hostile_huge_bg(void) { it_hostile(IT_HUGE, 1); }
static void it_hostile_blackhole_bg(void) { it_hostile(IT_BLACKHOLE, 1); }

/* cfg.wait_replicas (redlock.h section 4, Deployments), on a primary and
   one replica started here: WAIT 1 grants, and the replica has the token
   when the acquire returns; WAIT 2 (one replica only) fails with REPLICAS
   once WAIT's timeout has passed, and leaves no key on the primary (the
   undo). */
static void it_wait_replicas(void)
{
    redis_nodes primary, replica;
    int ports[REDIS_NODES_MAX], n, st;
    const char *replica_args[4];
    char primary_port[16], key[96], out[128];
    it_setup s;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    long long t0, until;
    /* no wait for more replicas before the first sync (Redis 7 waits 5 s) */
    const char *primary_args[] = { "--repl-diskless-sync-delay", "0", NULL };
    if (redis_nodes_start(&primary, 1, primary_args, NULL) != 0) { CHECK(0); return; }
    /* host and port as two arguments: Redis 6.0 reads one as a quoted value */
    snprintf(primary_port, sizeof primary_port, "%d", redis_nodes_port(&primary, 0));
    replica_args[0] = "--replicaof", replica_args[1] = "127.0.0.1", replica_args[2] = primary_port;
    replica_args[3] = NULL;
    if (redis_nodes_start(&replica, 1, replica_args, NULL) != 0) { CHECK(0); redis_nodes_stop(&primary); return; }
    /* WAIT counts the replica once it acknowledges writes (redis_group.h) */
    CHECK_EQ(redis_group_replica_acks(redis_nodes_port(&primary, 0)), 0);
    it_key(key, sizeof key, "wait-replicas");
    for (n = 1; n <= 2; n++) {
        it_defaults(&s, &primary, ports);
        s.core.node_timeout_ms = 250; /* not a timing test: valgrind on a loaded machine */
        /* WAIT 1 may fall short once when the replica is slow to answer
           (a loaded machine): retried, it must grant; WAIT 2 never can */
        s.core.retry_count = n == 1 ? 10 : -1;
        s.core.wait_replicas = n;
        s.core.wait_timeout_ms = n == 1 ? 200 : 100; /* below the adapters' command timeout (300 ms here) */
        c = it->open(&s);
        CHECK(c != NULL);
        if (!c) break;
        it_lock_opts(&o, key, 10000);
        l = it->lock(c, &o);
        t0 = it_now_ms();
        st = it->acquire(l, NULL);
        if (n == 1) {
            CHECK_EQ(st, REDLOCK_OK);
            CHECK_EQ(redis_nodes_cmd(&replica, 0, out, sizeof out, "GET", key, (char *)NULL), 0);
            CHECK_STR(out, it->token(l));
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        } else {
            CHECK_EQ(st, REDLOCK_ERR_REPLICAS);
            CHECK(it_now_ms() - t0 >= 95); /* WAIT waited its timeout out */
            until = it_now_ms() + 3000;    /* the undo went out before the result; its answer may lag */
            do {
                it->idle(c, 20);
                CHECK_EQ(redis_nodes_cmd(&primary, 0, out, sizeof out, "EXISTS", key, (char *)NULL), 0);
            } while (strcmp(out, ":0") != 0 && it_now_ms() < until);
            CHECK_STR(out, ":0");
        }
        it->unlock(l);
        it->close(c);
    }
    redis_nodes_stop(&replica);
    redis_nodes_stop(&primary);
}

#define IT_RUN(fn, nodes) do { \
    it_n = (nodes); \
    snprintf(it_name, sizeof it_name, "%s%s%s_%s_n%d", getenv("IT_TAG") ? getenv("IT_TAG") : "", \
             it_tls_dir[0] ? "tls_" : "", it->name, &(#fn)[3], it_n); \
    if (it_selected(it_name)) { \
        long long it__t0 = it_now_ms(); \
        check__fails = 0; \
        fn(); \
        if (check__fails) { check__failed_tests++; printf("not ok %s (%lld ms)\n", it_name, it_now_ms() - it__t0); } \
        else printf("ok %s (%lld ms)\n", it_name, it_now_ms() - it__t0); \
        fflush(stdout); \
    } } while (0)

/* it_acled's user may subscribe (its wake-ups): "&*", granted node by
   node after the start, since servers before 6.2 refuse it in their
   configuration; they have no channel permissions (every user may
   subscribe), which is the same grant. 0, or -1 if a node refused it
   that should know it. */
static int it_grant_channels(const redis_nodes *rn)
{
    char out[256];
    int i;
    for (i = 0; i < rn->n; i++)
        if ((redis_nodes_cmd(rn, i, out, sizeof out, "ACL", "SETUSER", "u", "&*", (char *)NULL) != 0 || out[0] != '+') &&
            redis_nodes_version(rn, i) >= 602)
            return -1;
    return 0;
}

/* The three node sets of every size: open, with a password, with an ACL
   user that may not script; `args` for each node (NULL: none), `auth` the
   same plus the password; tls: each also listens with TLS. 0, or -1 with
   a "not ok" line printed. */
static int it_start_sets(const int *sizes, int count, const char *const *args, const char *const *auth, int tls)
{
    const char *acl_conf = "user u on >pw ~* +@all -@scripting\n"; /* and &* (it_grant_channels) */
    int (*start)(redis_nodes *, int, const char *const *, const char *) = tls ? redis_nodes_start_tls : redis_nodes_start;
    int k;
    for (k = 0; k < count; k++) {
        int n = sizes[k];
        if (start(&it_plain[n], n, args, NULL) != 0 || start(&it_authed[n], n, auth, NULL) != 0 ||
            start(&it_acled[n], n, args, acl_conf) != 0 || it_grant_channels(&it_acled[n]) != 0) {
            printf("not ok %s_%sstart_redis_n%d (is redis-server installed%s?)\n", it->name, tls ? "tls_" : "", n,
                   tls ? ", with TLS" : "");
            return -1;
        }
    }
    return 0;
}

static void it_stop_sets(const int *sizes, int count)
{
    int k;
    for (k = 0; k < count; k++) {
        redis_nodes_stop(&it_plain[sizes[k]]);
        redis_nodes_stop(&it_authed[sizes[k]]);
        redis_nodes_stop(&it_acled[sizes[k]]);
    }
}

/* ---- a Sentinel group as one node (it_main_sentinel) ----
   A primary + replica + 3 sentinels (redis_group.h), the node given as a
   redis-sentinel:// URL (it_setup.nodes). */

/* A client of the node list `list` and a lock on it (ttl; wait_ms: retried
   until it runs out). 0, or -1 (refused: the client or the lock). */
static int it_sent_open(const char *list, int64_t ttl_ms, const char *key, int64_t wait_ms, it_client **c, it_lock **l)
{
    it_setup s;
    redlock_lock_opts o;
    memset(&s, 0, sizeof s);
    s.n = 1;
    s.nodes = list;
    s.core.node_timeout_ms = 500;
    s.core.retry_delay_ms = 100;
    *l = NULL;
    if (!(*c = it->open(&s))) return -1;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = ttl_ms;
    o.wait_ms = wait_ms;
    o.retry_count = wait_ms ? 1000 : 0;
    if (!(*l = it->lock(*c, &o))) {
        it->close(*c);
        *c = NULL;
        return -1;
    }
    return 0;
}

static void it_sent_close(it_client *c, it_lock *l)
{
    if (l) it->unlock(l);
    if (c) it->close(c);
}

/* Failovers told (EV_NODE_RESTARTED, FAILOVER) so far. */
static int it_sent_failovers(void)
{
    int k, n = 0;
    for (k = 0; k < it_nrestarts; k++) n += it_restarts[k].mode == REDLOCK_RESTART_FAILOVER;
    return n;
}

/* Proves, on a primary + replica + 3 sentinels: a redis-sentinel:// node
   finds the primary through the sentinels (the key is on the primary,
   under the token), also when the first sentinel listed is down; a group
   the sentinels do not know fails with their words; a server named that
   is not the primary (ROLE: a replica) fails the connection, and nothing
   is written there; TLS sentinels are refused at init. */
static void it_sentinel_discovery(void)
{
    redis_group g;
    it_client *c;
    it_lock *l;
    char list[256], out[128], words[256];
    const char *argv[3];
    int dead = redis_nodes_free_port();
    if (redis_group_start(&g, "rl-it", 3) != 0) {
        CHECK(!"a Sentinel group started");
        return;
    }
    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/rl-it",
             redis_group_sentinel_port(&g, 0), redis_group_sentinel_port(&g, 1), redis_group_sentinel_port(&g, 2));
    CHECK_EQ(it_sent_open(list, 10000, "sent-disc", 0, &c, &l), 0);
    if (l) {
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        argv[0] = "GET", argv[1] = "sent-disc", argv[2] = NULL;
        CHECK_EQ(redis_nodes_queryv(redis_group_primary_port(&g), NULL, NULL, 1000, argv, out, sizeof out), 0);
        CHECK_STR(out, it->token(l));
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    }
    it_sent_close(c, l);

    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d/rl-it", dead, redis_group_sentinel_port(&g, 1));
    CHECK_EQ(it_sent_open(list, 10000, "sent-disc", 0, &c, &l), 0);
    if (l) {
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    }
    it_sent_close(c, l);

    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d/no-such-group", redis_group_sentinel_port(&g, 0));
    CHECK_EQ(it_sent_open(list, 10000, "sent-disc", 0, &c, &l), 0);
    if (l) {
        CHECK(it->acquire(l, NULL) != REDLOCK_OK);
        CHECK_EQ(it->node_error(c, 0, words, sizeof words), REDLOCK_ERR_CONNECT);
        CHECK(strstr(words, "does not know the group 'no-such-group'") != NULL);
        if (!strstr(words, "does not know")) printf("#   status words: %s\n", words);
    }
    it_sent_close(c, l);

    {   /* a sentinel (scripted) that names the replica: ROLE says so, the connection fails */
        hostile fake;
        char said[160];
        int rp = g.port[1], k; /* the first replica, still one: no failover here */
        snprintf(said, sizeof said,
                 "*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%d\r\n"
                 "*4\r\n$12\r\nconfig-epoch\r\n$1\r\n0\r\n$18\r\nrole-reported-time\r\n$1\r\n5\r\n",
                 rp >= 10000 ? 5 : rp >= 1000 ? 4 : 3, rp);
        CHECK_EQ(hostile_start(&fake, HOSTILE_CANNED, said), 0);
        snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d/rl-it", fake.port);
        CHECK_EQ(it_sent_open(list, 10000, "sent-disc", 0, &c, &l), 0);
        if (l) {
            /* the client asked the sentinel at open and connects to the
               replica, whose ROLE fails the connection: the status is read
               as soon as it says so (a reconnect asks the scripted
               sentinel again, which answers more than asked) */
            for (k = 0; k < 400; k++) {
                words[0] = 0;
                if (it->node_error(c, 0, words, sizeof words) != 0) break;
                it->idle(c, 5);
            }
            CHECK(strstr(words, "is not the primary of 'rl-it' (a replica)") != NULL);
            if (!strstr(words, "is not the primary")) printf("#   status words: %s\n", words);
            CHECK(it->acquire(l, NULL) != REDLOCK_OK);
            argv[0] = "EXISTS", argv[1] = "sent-disc", argv[2] = NULL;
            CHECK_EQ(redis_nodes_queryv(rp, NULL, NULL, 1000, argv, out, sizeof out), 0);
            CHECK_STR(out, ":0"); /* nothing was written through the replica */
        }
        it_sent_close(c, l);
        hostile_stop(&fake);
    }

    /* TLS sentinels: refused at init by an adapter built without TLS
       (NO_TLS; with it: it_tls_sentinel) */
    snprintf(list, sizeof list, "rediss-sentinel://127.0.0.1:%d/rl-it", redis_group_sentinel_port(&g, 0));
    CHECK_EQ(it_sent_open(list, 10000, "sent-disc", 0, &c, &l), -1);
    redis_group_stop(&g);
}

/* Proves: SENTINEL FAILOVER while A holds: A's next extend sees the new
   primary (EV_NODE_RESTARTED, FAILOVER) and does not count it (its
   reply, from the former primary, is confirmed by the sentinels first);
   a client B that first sees the group after the failover is refused at
   once, and waiting is granted only once the bound (the ttl) has passed
   since the failover, when A no longer holds. */
static void it_sentinel_failover(void)
{
    redis_group g;
    it_client *ca = NULL, *cb = NULL;
    it_lock *a = NULL, *b = NULL;
    char list[256];
    long long t0, tb;
    int base;
    if (redis_group_start(&g, "rl-fo", 3) != 0) {
        CHECK(!"a Sentinel group started");
        return;
    }
    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/rl-fo",
             redis_group_sentinel_port(&g, 0), redis_group_sentinel_port(&g, 1), redis_group_sentinel_port(&g, 2));
    CHECK_EQ(it_sent_open(list, 2000, "sent-fo", 0, &ca, &a), 0);
    if (!a) goto out;
    CHECK_EQ(it->acquire(a, NULL), REDLOCK_OK);
    it_nrestarts = 0; /* the table's room: other scenarios take their own base */
    base = it_sent_failovers();
    t0 = it_now_ms();
    CHECK(redis_group_failover(&g) > 0);
    CHECK(it->extend(a, 2000, NULL) != REDLOCK_OK);
    CHECK_EQ(it_sent_failovers() - base, 1);
    CHECK_EQ(it_sent_open(list, 2000, "sent-fo", 0, &cb, &b), 0);
    if (!b) goto out;
    CHECK(it->acquire(b, NULL) != REDLOCK_OK); /* held there, or not counted yet */
    CHECK_EQ(it_sent_failovers() - base, 2);
    it_sent_close(cb, b);
    CHECK_EQ(it_sent_open(list, 2000, "sent-fo", 8000, &cb, &b), 0);
    if (!b) goto out;
    CHECK_EQ(it->acquire(b, NULL), REDLOCK_OK);
    tb = it_now_ms();
    CHECK(tb - t0 >= 2000);
    CHECK(it->state(a) != REDLOCK_STATE_HELD || redlock_lock_remaining_us(it->core(a)) <= 0);
    printf("# B granted %lld ms after the failover began (bound 2000 ms)\n", tb - t0);
    it->release(b, NULL);
out:
    it_sent_close(cb, b);
    it_sent_close(ca, a);
    redis_group_stop(&g);
}

/* ---- hostile deployments: a fake sentinel or cluster master ----
   One node (a sentinel group, or a cluster, whose only server is a
   hostile_server.h fake answering `reply` in `mode`), one acquire
   without retries: it must fail, within a bound, with the node's status
   set - never succeed, crash, hang or leak (the sanitizer and valgrind
   lanes run it too). */
static void it_deploy_hostile(const char *scheme, const char *what, int mode, const char *reply)
{
    hostile h;
    it_client *c = NULL;
    it_lock *l = NULL;
    char list[160], words[256];
    long long t0, ms;
    int st, status;
    if (hostile_start(&h, mode, reply) != 0) {
        CHECK(!"a hostile server started");
        return;
    }
    snprintf(list, sizeof list, "%s://127.0.0.1:%d%s", scheme, h.port, strcmp(scheme, "redis-sentinel") ? "" : "/rl-hostile");
    CHECK_EQ(it_sent_open(list, 2000, "hostile-deploy", 0, &c, &l), 0);
    if (l) {
        t0 = it_now_ms();
        st = it->acquire(l, NULL);
        ms = it_now_ms() - t0;
        words[0] = 0;
        status = it->node_error(c, 0, words, sizeof words);
        CHECK(st != REDLOCK_OK);
        CHECK(ms < 5000);
        if (st == REDLOCK_OK || ms >= 5000 || getenv("IT_DEBUG"))
            printf("#   %s (%s): acquire %s after %lld ms; node status %d '%s'\n", what, scheme, redlock_strerror(st), ms,
                   status, words);
    }
    it_sent_close(c, l);
    hostile_stop(&h);
}

/* Proves: a sentinel that answers garbage, a malformed address (a port
   out of range, a host that is no host name), nothing, an endless bulk,
   "unknown group", or an address where nothing listens, ends an acquire
   with an error in bounded time. */
static void it_sentinel_hostile(void)
{
    char said[128];
    int closed = hostile_closed_port();
    it_deploy_hostile("redis-sentinel", "garbage", HOSTILE_CANNED, "?garbage\r\n");
    it_deploy_hostile("redis-sentinel", "a port out of range", HOSTILE_CANNED, "*2\r\n$9\r\n127.0.0.1\r\n$5\r\n99999\r\n");
    it_deploy_hostile("redis-sentinel", "a host that is no host", HOSTILE_CANNED, "*2\r\n$3\r\na/b\r\n$4\r\n6379\r\n");
    it_deploy_hostile("redis-sentinel", "silence", HOSTILE_SILENT, NULL);
    it_deploy_hostile("redis-sentinel", "an endless bulk", HOSTILE_FLOOD, "$2000000000\r\n");
    it_deploy_hostile("redis-sentinel", "unknown group", HOSTILE_CANNED, "*-1\r\n");
    snprintf(said, sizeof said, "*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%d\r\n", closed >= 10000 ? 5 : 4, closed);
    it_deploy_hostile("redis-sentinel", "a primary where nothing listens", HOSTILE_CANNED, said);
}

/* Proves, for an adapter that watches +switch-master (libev; hiredis
   sync, its loop run by its thread): after SENTINEL FAILOVER a client
   that sends nothing is told the group failed over (EV_NODE_RESTARTED,
   FAILOVER) and drops the former primary, within seconds; its next
   acquire goes to the new primary (once the bound has passed there: the
   restart rule). */
static inline void it_sentinel_switch(void) /* inline: not every adapter runs it */
{
    redis_group g;
    it_client *c = NULL;
    it_lock *l = NULL;
    it_setup s;
    redlock_lock_opts o;
    char list[256], words[256];
    long long t0;
    int heard = 0, k;
    if (redis_group_start(&g, "rl-sw", 3) != 0) {
        CHECK(!"a Sentinel group started");
        return;
    }
    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/rl-sw",
             redis_group_sentinel_port(&g, 0), redis_group_sentinel_port(&g, 1), redis_group_sentinel_port(&g, 2));
    memset(&s, 0, sizeof s);
    s.n = 1;
    s.nodes = list;
    s.core.node_timeout_ms = 500;
    s.core.retry_delay_ms = 100;
    s.watchdog_thread = 1; /* the loop runs between calls (an adapter without a thread: ignored) */
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) goto out;
    memset(&o, 0, sizeof o);
    o.key = "sent-sw";
    o.ttl_ms = 1000;
    o.retry_count = -1;
    l = it->lock(c, &o);
    CHECK(l != NULL);
    if (!l) goto out;
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->idle(c, 200); /* the watch subscribes (the failover below takes seconds anyway) */
    it_nrestarts = 0;
    CHECK(redis_group_failover(&g) > 0);
    t0 = it_now_ms();
    while (!(heard = it_restart_heard(c, 0, REDLOCK_RESTART_FAILOVER)) && it_now_ms() - t0 < 5000) it->idle(c, 20);
    CHECK(heard);
    CHECK(!it->node_connected(c, 0));
    it->node_error(c, 0, words, sizeof words);
    CHECK(strstr(words, "the sentinels switched 'rl-sw' to 127.0.0.1:") != NULL);
    printf("#   told %lld ms after the failover was complete; node status '%s'\n", it_now_ms() - t0, words);
    t0 = it_now_ms();
    for (k = 0; k < 100 && it->acquire(l, NULL) != REDLOCK_OK; k++) it->idle(c, 50);
    CHECK(k < 100);
    printf("#   acquired on the new primary %lld ms after that\n", it_now_ms() - t0);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
out:
    it_sent_close(c, l);
    redis_group_stop(&g);
}

/* The Sentinel scenarios, for an adapter that serves redis-sentinel:// nodes. */
static inline void it_main_sentinel(const it_ops *ops)
{
    it = ops;
    IT_RUN(it_sentinel_discovery, 1);
    IT_RUN(it_sentinel_failover, 1);
    IT_RUN(it_sentinel_hostile, 1);
}

/* ---- a Redis Cluster node (it_main_cluster) ----
   One node of the core, a 3-master cluster (tests/shared/redis_cluster.h,
   durable), master 0 with a replica (node 3): the adapter routes each
   command to its key's master. */

static redis_cluster it_cl;

static inline void it_cluster_defaults(it_setup *s, int ports[REDIS_NODES_MAX])
{
    int i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < it_cl.n; i++) ports[i] = redis_cluster_port(&it_cl, i);
    s->n = it_cl.n;
    s->ports = ports;
    s->cluster = 1;
    redlock_config_init(&s->core);
    s->core.node_count = 1;
    s->core.node_timeout_ms = 200; /* room for a first connection's CLUSTER SLOTS, under valgrind too */
    s->core.retry_count = 2;
    s->core.retry_delay_ms = 30;
    s->core.retry_jitter_ms = 10;
}

/* A key named after `what` whose slot master m was given at start. */
static inline void it_cluster_key(char *buf, size_t sz, const char *what, int m)
{
    int k;
    for (k = 0;; k++) {
        unsigned slot;
        snprintf(buf, sz, "it:%s:%s:%d", it->name, what, k);
        slot = redlock_cluster_slot(buf, strlen(buf));
        if ((int)slot >= redis_cluster_first_slot(&it_cl, m) &&
            (m + 1 == it_cl.n || (int)slot < redis_cluster_first_slot(&it_cl, m + 1)))
            return;
    }
}

/* What node i holds at key ("$-1": nothing). */
static inline void it_cluster_get(int i, const char *key, char *out, size_t cap)
{
    const char *argv[] = { "GET", key, NULL };
    if (redis_cluster_cmdv(&it_cl, i, out, cap, argv) != 0) snprintf(out, cap, "(no answer)");
}

/* Proves, on one cluster node of 3 masters: a plain lock on a key of each
   master is acquired (the key on that master, under the token), refused
   to another client, extended and released (the key gone); a fenced lock
   with a tagged key fences, higher each time; a fenced lock whose key has
   no tag is refused at lock_init; a reentrant lock nests; readers share,
   a writer waits for them. A client that would WAIT for replicas is
   refused at init. */
static void it_cluster_kinds(void)
{
    int ports[REDIS_NODES_MAX], m;
    it_setup s;
    it_client *a, *b;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], out[128];
    it_cluster_defaults(&s, ports);
    s.core.wait_replicas = 1; /* WAIT names no key: no master to send it to, refused at init */
    a = it->open(&s);
    CHECK(a == NULL);
    if (a) it->close(a);
    s.core.wait_replicas = 0;
    if (it_open_pair(&s, &a, &b) != 0) return;
    for (m = 0; m < it_cl.n; m++) {
        it_lock *la, *lb;
        it_cluster_key(key, sizeof key, "plain", m);
        it_lock_opts(&o, key, 2000);
        o.retry_count = -1;
        la = it->lock(a, &o);
        lb = it->lock(b, &o);
        CHECK(la && lb);
        if (la && lb) {
            CHECK_EQ(it->acquire(la, &r), REDLOCK_OK);
            it_cluster_get(m, key, out, sizeof out);
            CHECK_STR(out, it->token(la));
            CHECK_EQ(it->acquire(lb, NULL), REDLOCK_ERR_LOCKED);
            CHECK_EQ(it->extend(la, 3000, &r), REDLOCK_OK);
            CHECK(r.validity_us > 2000000);
            CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
            it_cluster_get(m, key, out, sizeof out);
            CHECK_STR(out, "$-1");
            CHECK_EQ(it->acquire(lb, NULL), REDLOCK_OK);
            CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
        }
        if (la) it->unlock(la);
        if (lb) it->unlock(lb);
    }
    { /* fenced: a tagged key, its counter in the key's slot */
        it_lock *f;
        int64_t f1;
        snprintf(key, sizeof key, "{it:%s:fence}:lock", it->name);
        it_lock_opts(&o, key, 2000);
        o.fence = 1;
        f = it->lock(a, &o);
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ(it->acquire(f, &r), REDLOCK_OK);
            f1 = r.fence;
            CHECK(f1 > 0);
            CHECK_EQ(it->release(f, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(f, &r), REDLOCK_OK);
            CHECK(r.fence > f1);
            CHECK_EQ(it->release(f, NULL), REDLOCK_OK);
            it->unlock(f);
        }
        /* no tag: the counter would be in another slot (CROSSSLOT): refused */
        snprintf(key, sizeof key, "it:%s:fence-untagged", it->name);
        it_lock_opts(&o, key, 2000);
        o.fence = 1;
        f = it->lock(a, &o);
        CHECK(f == NULL);
        if (f) it->unlock(f);
    }
    { /* reentrant: nests for its owner, another owner waits */
        it_lock *r1, *r2, *other;
        it_cluster_key(key, sizeof key, "reentrant", 1);
        it_lock_opts(&o, key, 2000);
        o.reentrant = 1;
        o.owner = "it-owner-1";
        o.retry_count = -1;
        r1 = it->lock(a, &o);
        r2 = it->lock(b, &o);
        o.owner = "it-owner-2";
        other = it->lock(b, &o);
        CHECK(r1 && r2 && other);
        if (r1 && r2 && other) {
            CHECK_EQ(it->acquire(r1, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(r2, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(other, NULL), REDLOCK_ERR_LOCKED);
            CHECK_EQ(it->release(r2, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(other, NULL), REDLOCK_ERR_LOCKED);
            CHECK_EQ(it->release(r1, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(other, NULL), REDLOCK_OK);
            CHECK_EQ(it->release(other, NULL), REDLOCK_OK);
        }
        if (r1) it->unlock(r1);
        if (r2) it->unlock(r2);
        if (other) it->unlock(other);
    }
    { /* readers-writer */
        it_lock *rd1, *rd2, *wr;
        it_cluster_key(key, sizeof key, "rw", 2);
        it_lock_opts(&o, key, 2000);
        o.retry_count = -1;
        o.access = REDLOCK_ACCESS_SHARED;
        rd1 = it->lock(a, &o);
        rd2 = it->lock(b, &o);
        o.access = REDLOCK_ACCESS_EXCLUSIVE;
        wr = it->lock(b, &o);
        CHECK(rd1 && rd2 && wr);
        if (rd1 && rd2 && wr) {
            CHECK_EQ(it->acquire(rd1, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(rd2, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(wr, NULL), REDLOCK_ERR_LOCKED);
            CHECK_EQ(it->release(rd1, NULL), REDLOCK_OK);
            CHECK_EQ(it->release(rd2, NULL), REDLOCK_OK);
            CHECK_EQ(it->acquire(wr, NULL), REDLOCK_OK);
            CHECK_EQ(it->release(wr, NULL), REDLOCK_OK);
        }
        if (rd1) it->unlock(rd1);
        if (rd2) it->unlock(rd2);
        if (wr) it->unlock(wr);
    }
    it->close(a);
    it->close(b);
}

/* Proves: a slot moved to another master between two holds (the client's
   map still names the old one): the next acquire follows the MOVED and
   the key is on the new master. */
static void it_cluster_moved(void)
{
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    char key[96], out[128];
    unsigned slot;
    it_cluster_defaults(&s, ports);
    if (!(a = it->open(&s))) {
        CHECK(0);
        return;
    }
    it_cluster_key(key, sizeof key, "moved", 0);
    slot = redlock_cluster_slot(key, strlen(key));
    it_lock_opts(&o, key, 2000);
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (l) {
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK); /* the map learned: master 0 */
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        CHECK_EQ(redis_cluster_migrate_slot(&it_cl, (int)slot, 0, 1), 0);
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK); /* MOVED: sent again to master 1 */
        it_cluster_get(1, key, out, sizeof out);
        CHECK_STR(out, it->token(l));
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it_cluster_get(1, key, out, sizeof out);
        CHECK_STR(out, "$-1");
        it->unlock(l);
    }
    it->close(a);
}

/* Proves: a slot migrated while a lock is held (MIGRATING / IMPORTING,
   the key moved by MIGRATE, then SETSLOT NODE): a renewal in the middle
   follows the ASK, one after follows the MOVED, the hold survives both,
   and the release reaches the key where it is now (gone afterwards). */
static void it_cluster_migrate_hold(void)
{
    int ports[REDIS_NODES_MAX];
    it_setup s;
    it_client *a, *b;
    it_lock *l = NULL, *other = NULL;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], out[128];
    int slot;
    it_cluster_defaults(&s, ports);
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_cluster_key(key, sizeof key, "migrate", 2);
    slot = (int)redlock_cluster_slot(key, strlen(key));
    it_lock_opts(&o, key, 3000);
    o.retry_count = -1;
    l = it->lock(a, &o);
    other = it->lock(b, &o);
    CHECK(l && other);
    if (!l || !other) goto out;
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(redis_cluster_slot_begin(&it_cl, slot, 2, 0), 0);
    CHECK_EQ(redis_cluster_slot_move_keys(&it_cl, slot, 2, 0), 1); /* the lock's key, now on master 0 */
    CHECK_EQ(it->extend(l, 3000, &r), REDLOCK_OK);                 /* ASK: ASKING, then master 0 */
    CHECK(r.validity_us > 2000000);
    CHECK_EQ(it->acquire(other, NULL), REDLOCK_ERR_LOCKED);        /* held, mid-migration */
    CHECK_EQ(redis_cluster_slot_finish(&it_cl, slot, 2, 0), 0);
    CHECK_EQ(it->extend(l, 3000, &r), REDLOCK_OK);                 /* MOVED: master 0 */
    CHECK_EQ(it->state(l), REDLOCK_STATE_HELD);
    it_cluster_get(0, key, out, sizeof out);
    CHECK_STR(out, it->token(l));
    CHECK_EQ(it->acquire(other, NULL), REDLOCK_ERR_LOCKED);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it_cluster_get(0, key, out, sizeof out);
    CHECK_STR(out, "$-1");
    CHECK_EQ(it->acquire(other, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(other, NULL), REDLOCK_OK);
out:
    if (l) it->unlock(l);
    if (other) it->unlock(other);
    it->close(a);
    it->close(b);
}

/* Proves: a master of the cluster restarted (a new run_id, seen on the
   new connection's INFO) is the cluster node's restart: the client hears
   it (EV_NODE_RESTARTED for node 0), its acquire of a key on that master
   is refused (RESTARTED) until the bound has passed, then granted. And
   CLUSTERDOWN (the restarted master's first seconds) is a failed vote
   whose words say so. */
static void it_cluster_restart(void)
{
    int ports[REDIS_NODES_MAX], k, seen = 0, up = 0;
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    char key[96];
    long long until;
    it_cluster_defaults(&s, ports);
    if (!(a = it->open(&s))) {
        CHECK(0);
        return;
    }
    it_cluster_key(key, sizeof key, "restart", 1);
    it_lock_opts(&o, key, 400);
    o.retry_count = -1;
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (l) {
        int n0 = it_nrestarts, st;
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK); /* master 1's run_id seen */
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        CHECK_EQ(redis_node_restart(&it_cl.rn, 1), 0);
        { /* another client, at once: the restarted master says CLUSTERDOWN for a while (its
             writable delay, 2 s): a failed vote, with the server's words */
            it_client *c = it->open(&s);
            it_lock *lc;
            char words[256], other[96];
            int st0;
            it_cluster_key(other, sizeof other, "restart-down", 1);
            it_lock_opts(&o, other, 400);
            o.retry_count = -1;
            lc = c ? it->lock(c, &o) : NULL;
            CHECK(lc != NULL);
            if (lc) {
                st0 = it->acquire(lc, NULL);
                it->node_error(c, 0, words, sizeof words);
                printf("#   right after the restart: %s (%s)\n", redlock_strerror(st0), words);
                if (st0 != REDLOCK_OK) CHECK(strstr(words, "CLUSTERDOWN") != NULL);
                else CHECK_EQ(it->release(lc, NULL), REDLOCK_OK); /* the delay was over already */
                it->unlock(lc);
            }
            if (c) it->close(c);
        }
        /* a restarted master waits a while before it serves again (CLUSTERDOWN meanwhile) */
        for (until = it_now_ms() + 10000; it_now_ms() < until && !up;) {
            up = redis_cluster__ok(&it_cl, 1);
            if (!up) redis_nodes__sleep_ms(50);
        }
        CHECK(up);
        st = it->acquire(l, NULL);
        CHECK_EQ(st, REDLOCK_ERR_RESTARTED);
        for (k = n0; k < it_nrestarts; k++)
            if (it_restarts[k].who == (const void *)a && it_restarts[k].node == 0) seen = 1;
        CHECK(seen);
        CHECK_EQ(it_acquire_after_restart(a, l, 3000), REDLOCK_OK);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->unlock(l);
    }
    it->close(a);
}

/* Proves: a failover (master 0's replica, node 3, promoted by CLUSTER
   FAILOVER) is the cluster node's restart: the client's next command
   reaches the former master, now a replica, whose MOVED names its
   replica of the last slot map: the client hears it (EV_NODE_RESTARTED
   for node 0, a failover) and that acquire is refused (RESTARTED); once
   the bound has passed, granted on the new master. */
static void it_cluster_failover(void)
{
    int ports[REDIS_NODES_MAX], k, seen = 0;
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    char key[96], out[128];
    if (it_cl.replicas < 1) {
        CHECK(0); /* the cluster has no replica */
        return;
    }
    it_cluster_defaults(&s, ports);
    if (!(a = it->open(&s))) {
        CHECK(0);
        return;
    }
    it_cluster_key(key, sizeof key, "failover", 0);
    it_lock_opts(&o, key, 400);
    o.retry_count = -1;
    l = it->lock(a, &o);
    CHECK(l != NULL);
    if (l) {
        int n0 = it_nrestarts;
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK); /* the map learned: master 0, its replica node 3 */
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        CHECK_EQ(redis_cluster_failover(&it_cl, it_cl.n), 0);
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_ERR_RESTARTED);
        for (k = n0; k < it_nrestarts; k++)
            if (it_restarts[k].who == (const void *)a && it_restarts[k].node == 0 &&
                it_restarts[k].mode == REDLOCK_RESTART_FAILOVER)
                seen = 1;
        CHECK(seen);
        CHECK_EQ(it_acquire_after_restart(a, l, 3000), REDLOCK_OK);
        it_cluster_get(it_cl.n, key, out, sizeof out);
        CHECK_STR(out, it->token(l)); /* on the new master */
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->unlock(l);
    }
    it->close(a);
}

/* Subscribers of key's channel on cluster node i, or -1. */
static inline int it_cluster_numsub(int i, const char *key)
{
    char channel[160], out[256];
    const char *argv[] = { "EVAL", "return redis.call('PUBSUB','NUMSUB',ARGV[1])[2]", "0", channel, NULL };
    snprintf(channel, sizeof channel, "%s%s", REDLOCK_CHANNEL_PREFIX, key);
    if (redis_cluster_cmdv(&it_cl, i, out, sizeof out, argv) != 0 || out[0] != ':') return -1;
    return atoi(out + 1);
}

/* Subscribers of key's shard channel (redlock_shard_channel) on cluster
   node i (PUBSUB SHARDNUMSUB), or -1. */
static inline int it_cluster_shardnumsub(int i, const char *key)
{
    char channel[160], out[256];
    const char *argv[] = { "EVAL", "return redis.call('PUBSUB','SHARDNUMSUB',ARGV[1])[2]", "0", channel, NULL };
    if (redlock_shard_channel(key, strlen(key), channel, sizeof channel) >= sizeof channel) return -1;
    if (redis_cluster_cmdv(&it_cl, i, out, sizeof out, argv) != 0 || out[0] != ':') return -1;
    return atoi(out + 1);
}

/* Is a subscriber of key (whose master is node m) there within 1.5 s:
   on m's shard channel when the adapter is sharded, else on the first
   seed's plain channel? */
static inline int it_cluster_listening(const char *key, int m)
{
    long long until = it_now_ms() + 1500;
    for (;;) {
        if (it->sharded ? it_cluster_shardnumsub(m, key) == 1 : it_cluster_numsub(0, key) == 1) return 1;
        if (it_now_ms() >= until) return 0;
        redis_nodes__sleep_ms(5);
    }
}

/* Proves: release notifications on a cluster: b waits for a's lock on a
   key of master 2 with a 2 s retry delay, subscribed on the first seed
   (master 0; PUBLISH reaches every node of the cluster), or on master 2's
   shard channel when the adapter is sharded (it_cluster_sharded); a's
   release wakes b well before its next attempt. */
static void it_cluster_wake(void)
{
    int ports[REDIS_NODES_MAX], fast = 0, round, listening = 0;
    it_setup s;
    it_client *a, *b;
    it_lock *la = NULL, *lb = NULL;
    redlock_lock_opts o;
    char key[96];
    it_cluster_defaults(&s, ports);
    if (!it->notify) return;
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_cluster_key(key, sizeof key, "wake", 2);
    it_lock_opts(&o, key, 5000);
    la = it->lock(a, &o);
    o.retry_count = 5;
    o.retry_delay_ms = 2000;
    o.retry_jitter_ms = 1;
    lb = it->lock(b, &o);
    CHECK(la && lb);
    for (round = 0; la && lb && round < 2 && !fast; round++) { /* a release may race b's attempt once */
        it_waiter w;
        long long released;
        CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
        memset(&w, 0, sizeof w);
        w.l = lb;
        pthread_create(&w.th, NULL, it_waiter_main, &w);
        listening = it_cluster_listening(key, 2);
        CHECK(listening);
        released = it_now_ms();
        CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
        pthread_join(w.th, NULL);
        CHECK_EQ(w.rc, REDLOCK_OK);
        CHECK(w.r.attempts >= 2); /* it waited */
        fast = w.done_ms - released < 1000;
        CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    }
    CHECK(fast);
    if (la) it->unlock(la);
    if (lb) it->unlock(lb);
    it->close(a);
    it->close(b);
}

/* Proves: a cluster seed that answers CLUSTER SLOTS with garbage, an
   empty map, a slot out of range or a master where nothing listens, or
   says nothing; a master that redirects every command (MOVED where
   nothing listens, MOVED or ASK to itself, again and again) or answers
   TRYAGAIN or CLUSTERDOWN: the acquire fails, in bounded time. */
static void it_cluster_hostile(void)
{
    char said[160];
    int closed = hostile_closed_port();
    it_deploy_hostile("redis-cluster", "slots: garbage", HOSTILE_CANNED, "?garbage\r\n");
    it_deploy_hostile("redis-cluster", "slots: none", HOSTILE_CANNED, "*0\r\n");
    it_deploy_hostile("redis-cluster", "slots: out of range", HOSTILE_CANNED,
                      "*1\r\n*3\r\n:0\r\n:99999\r\n*2\r\n$9\r\n127.0.0.1\r\n:6379\r\n");
    snprintf(said, sizeof said, "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n", closed);
    it_deploy_hostile("redis-cluster", "slots: a master where nothing listens", HOSTILE_CANNED, said);
    it_deploy_hostile("redis-cluster", "a silent seed", HOSTILE_SILENT, NULL);
    snprintf(said, sizeof said, "-MOVED 0 127.0.0.1:%d\r\n", closed);
    it_deploy_hostile("redis-cluster", "MOVED where nothing listens", HOSTILE_CLUSTER, said);
    it_deploy_hostile("redis-cluster", "TRYAGAIN", HOSTILE_CLUSTER, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n");
    it_deploy_hostile("redis-cluster", "CLUSTERDOWN", HOSTILE_CLUSTER, "-CLUSTERDOWN The cluster is down\r\n");
    it_deploy_hostile("redis-cluster", "garbage to commands", HOSTILE_CLUSTER, "?garbage\r\n");
    it_deploy_hostile("redis-cluster", "MOVED to itself", HOSTILE_CLUSTER, "-MOVED 0 127.0.0.1:%d\r\n");
    it_deploy_hostile("redis-cluster", "ASK to itself", HOSTILE_CLUSTER, "-ASK 0 127.0.0.1:%d\r\n");
}

/* A key with a hash tag ("{it:<scenario>:<what>:k}:lock") whose slot
   master m was given at start. */
static inline void it_cluster_tagged_key(char *buf, size_t sz, const char *what, int m)
{
    int k;
    for (k = 0;; k++) {
        unsigned slot;
        snprintf(buf, sz, "{it:%s:%s:%d}:lock", it->name, what, k);
        slot = redlock_cluster_slot(buf, strlen(buf));
        if ((int)slot >= redis_cluster_first_slot(&it_cl, m) &&
            (m + 1 == it_cl.n || (int)slot < redis_cluster_first_slot(&it_cl, m + 1)))
            return;
    }
}

/* a holds key (on master m); b waits for it (retry delay 2 s) and is
   heard listening where the adapter subscribes (it_cluster_listening);
   then `between` (may be NULL; its master afterwards: *m) runs while b
   waits, b is heard again, a releases: how long b took to wake after the
   release (ms), or -1 (a failed check). Twice at most: a release may race
   b's attempt once. */
static long long it_cluster_wake_one(it_client *a, it_client *b, const char *key, int *m,
                                     int (*between)(const char *key, int *m))
{
    redlock_lock_opts o;
    it_lock *la, *lb;
    long long took = -1;
    int round;
    it_lock_opts(&o, key, 5000);
    la = it->lock(a, &o);
    o.retry_count = 5;
    o.retry_delay_ms = 2000;
    o.retry_jitter_ms = 1;
    lb = it->lock(b, &o);
    CHECK(la && lb);
    for (round = 0; la && lb && round < 2 && (took < 0 || took >= 1000); round++) {
        it_waiter w;
        long long released;
        int heard;
        CHECK_EQ(it->acquire(la, NULL), REDLOCK_OK);
        memset(&w, 0, sizeof w);
        w.l = lb;
        pthread_create(&w.th, NULL, it_waiter_main, &w);
        heard = it_cluster_listening(key, *m);
        CHECK(heard);
        if (heard && it->sharded) CHECK_EQ(it_cluster_numsub(0, key), 0); /* really sharded: none on the plain channel */
        if (heard && between) {
            CHECK_EQ(between(key, m), 0);
            between = NULL; /* once */
            heard = it_cluster_listening(key, *m); /* subscribed again where the slot lives now */
            CHECK(heard);
        }
        released = it_now_ms();
        CHECK_EQ(it->release(la, NULL), REDLOCK_OK);
        pthread_join(w.th, NULL);
        CHECK_EQ(w.rc, REDLOCK_OK);
        if (it->sharded) CHECK_EQ(redlock_node_sharded(it->core(lb)->_client, 0), 1); /* b's client, idle again */
        CHECK(w.r.attempts >= 2); /* it waited */
        took = w.done_ms - released;
        CHECK_EQ(it->release(lb, NULL), REDLOCK_OK);
    }
    if (la) it->unlock(la);
    if (lb) it->unlock(lb);
    return took;
}

/* The waited key's slot moves from its master to the next (MIGRATING /
   IMPORTING, MIGRATE of the key, SETSLOT NODE). */
static int it_cluster_move_waited(const char *key, int *m)
{
    int slot = (int)redlock_cluster_slot(key, strlen(key)), to = (*m + 1) % it_cl.n;
    if (redis_cluster_slot_begin(&it_cl, slot, *m, to) != 0 || redis_cluster_slot_move_keys(&it_cl, slot, *m, to) != 1 ||
        redis_cluster_slot_finish(&it_cl, slot, *m, to) != 0)
        return -1;
    *m = to;
    return 0;
}

/* Proves, for an adapter that serves a cluster node's release
   notifications with sharded pub/sub (it->sharded; the test cluster is
   Redis 7): a waiter on a key without a hash tag (master 1) and one on a
   key with a tag (master 2) are each subscribed on their own master's
   shard channel (PUBSUB SHARDNUMSUB 1 there, no plain subscriber on the
   first seed; the client was told redlock_node_set_sharded) and woken by
   the release well before their 2 s retry delay; and a waited key whose
   slot migrates to another master meanwhile is subscribed again there and
   still woken by the release. */
static void it_cluster_sharded(void)
{
    int ports[REDIS_NODES_MAX], m;
    it_setup s;
    it_client *a, *b;
    char key[96];
    long long took;
    it_cluster_defaults(&s, ports);
    if (!it->notify || !it->sharded) {
        printf("#   %s: no sharded notifications in this adapter (it_ops.sharded): nothing checked\n", it_name);
        return;
    }
    if (it_open_pair(&s, &a, &b) != 0) return;
    it_cluster_key(key, sizeof key, "untagged", m = 1);
    took = it_cluster_wake_one(a, b, key, &m, NULL);
    printf("#   untagged key, master 1: woken %lld ms after the release (retry delay 2000 ms)\n", took);
    CHECK(took >= 0 && took < 1000);
    it_cluster_tagged_key(key, sizeof key, "tagged", m = 2);
    took = it_cluster_wake_one(a, b, key, &m, NULL);
    printf("#   tagged key, master 2: woken %lld ms after the release\n", took);
    CHECK(took >= 0 && took < 1000);
    it_cluster_key(key, sizeof key, "moving", m = 2);
    took = it_cluster_wake_one(a, b, key, &m, it_cluster_move_waited);
    printf("#   key whose slot moved to master %d while waited: woken %lld ms after the release\n", m, took);
    CHECK(took >= 0 && took < 1000);
    CHECK_EQ(m, 0);
    it->close(a);
    it->close(b);
}

/* Every cluster scenario on one 3-master cluster (started here), then
   `more` (the adapter's own, may be NULL) while it still runs. 0, or 1
   when it could not start. */
static inline int it_main_cluster(const it_ops *ops, void (*more)(void))
{
    it = ops;
    redis_nodes_deadline(120);
    if (redis_cluster_start_replicas(&it_cl, 3, 1, 1) != 0) {
        printf("not ok %s_cluster (no cluster: redis-server --cluster-enabled did not come up)\n", ops->name);
        return 1;
    }
    IT_RUN(it_cluster_kinds, 1);
    IT_RUN(it_cluster_moved, 1);
    IT_RUN(it_cluster_migrate_hold, 1);
    IT_RUN(it_cluster_wake, 1);
    IT_RUN(it_cluster_sharded, 1);
    IT_RUN(it_cluster_restart, 1);
    IT_RUN(it_cluster_failover, 1); /* last: master 0 is a replica after it */
    IT_RUN(it_cluster_hostile, 1);
    if (more) more();
    redis_cluster_stop(&it_cl);
    return 0;
}

/* Statistics (the adapter's redlock_*_stats): counts known from what the
   scenario did. A cycle (acquire, release) is one SET and one script per
   node, answered "+OK" and ":1"; a node killed is a connection lost and
   votes that failed to connect (or in time). */
/* The statistics once the replies still owed are read (a blocking call
   may return before a straggler answers): read until two reads 20 ms
   apart agree, for at most 2 s. */
static int it_stats_settled(it_client *c, redlock_adapter_stats *out)
{
    redlock_adapter_stats prev;
    long long t0 = it_now_ms();
    int rc = it->stats(c, out);
    do {
        prev = *out;
        it->idle(c, 20);
        rc = it->stats(c, out);
    } while (rc == REDLOCK_OK && memcmp(prev.node, out->node, sizeof prev.node) != 0 && it_now_ms() - t0 < 2000);
    return rc;
}

static void it_stats(void)
{
    enum { CYCLES = 5 };
    redis_nodes *rn = &it_plain[it_n];
    int ports[REDIS_NODES_MAX], i, k;
    it_setup s;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    redlock_adapter_stats a, b;
    char key[96];
    it_defaults(&s, rn, ports);
    s.notify_off = 1; /* no subscriber traffic beside the commands counted */
    c = it->open(&s);
    CHECK(c != NULL);
    if (!c) return;
    it_key(key, sizeof key, "stats");
    it_lock_opts(&o, key, 2000);
    l = it->lock(c, &o);
    for (k = 0; k < CYCLES; k++) {
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    }
    CHECK_EQ(it_stats_settled(c, &a), REDLOCK_OK);
    CHECK_EQ(a.node_count, it_n);
    CHECK_EQ(a.core.acquires, CYCLES);
    CHECK_EQ(a.core.acquired, CYCLES);
    CHECK_EQ(a.core.releases, CYCLES);
    CHECK_EQ(a.core.held, 0);
    CHECK_EQ(a.core.held_max, 1);
    CHECK_EQ(a.core.acquire_us.count, CYCLES);
    for (i = 0; i < it_n; i++) {
        CHECK_EQ(a.node[i].connects, 1);
        CHECK_EQ(a.node[i].drops, 0);
        CHECK(a.node[i].commands >= 2 * CYCLES); /* and the preamble's */
        CHECK(a.node[i].bytes_out > a.node[i].commands * strlen(key) / 2);
        CHECK(a.node[i].bytes_in >= CYCLES * 9);
        CHECK(a.node[i].queue_max >= 1);
    }
    /* one more cycle: exactly its commands and replies more */
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    CHECK_EQ(it_stats_settled(c, &b), REDLOCK_OK);
    CHECK_EQ(b.core.acquired, CYCLES + 1);
    for (i = 0; i < it_n; i++) {
        CHECK_EQ(b.node[i].connects, 1);
        CHECK_EQ(b.node[i].commands - a.node[i].commands, 2);
        CHECK(b.node[i].bytes_out - a.node[i].bytes_out > 2 * strlen(key));
        CHECK_EQ(b.node[i].bytes_in - a.node[i].bytes_in, 9); /* "+OK\r\n", ":1\r\n" */
    }
    /* reset: all zero */
    it->stats_reset(c);
    CHECK_EQ(it->stats(c, &a), REDLOCK_OK);
    CHECK_EQ(a.core.acquires, 0);
    CHECK_EQ(a.core.acquire_us.count, 0);
    for (i = 0; i < it_n; i++) CHECK_EQ(a.node[i].commands + a.node[i].bytes_out + a.node[i].bytes_in, 0);
    /* node 0 killed: its connection lost, its votes failed */
    redis_node_kill(rn, 0);
    CHECK_EQ(it->acquire(l, NULL), it_n >= 3 ? REDLOCK_OK : REDLOCK_ERR_NO_QUORUM);
    if (it_n >= 3) CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    CHECK_EQ(it->stats(c, &a), REDLOCK_OK);
    CHECK(a.node[0].drops >= 1);
    CHECK(a.core.node_failures[0][REDLOCK_NODE_FAIL_CONNECT] + a.core.node_failures[0][REDLOCK_NODE_FAIL_TIMEOUT] > 0);
    for (i = 1; i < it_n; i++) CHECK_EQ(a.node[i].drops, 0);
    it->unlock(l);
    it->close(c);
    CHECK_EQ(redis_node_restart(rn, 0), 0);
}

static int it_main(const it_ops *ops)
{
    static const int sizes[] = { 1, 3, 5 };
    const char *auth_args[] = { "--requirepass", "s3cret", NULL };
    size_t k;
    it = ops;
    redis_nodes_deadline(170);
    if (it_start_sets(sizes, 3, NULL, auth_args, 0) != 0) return 1;
    /* started early: it_restart_empty finds them older than its ttl */
    if (redis_nodes_start_volatile(&it_volatile, 3, NULL, NULL) != 0) memset(&it_volatile, 0, sizeof it_volatile);
    for (k = 0; k < 3; k++) {
        int n = sizes[k];
        IT_RUN(it_basic, n);
        IT_RUN(it_reuse, n);
        IT_RUN(it_contend, n);
        IT_RUN(it_contend_threads, n);
        IT_RUN(it_expiry, n);
        IT_RUN(it_watchdog, n);
        IT_RUN(it_state_by_clock, n);
        IT_RUN(it_watchdog_stolen, n);
        IT_RUN(it_node_killed, n);
        IT_RUN(it_node_paused, n);
        IT_RUN(it_auth, n);
        IT_RUN(it_config_refused, n);
        IT_RUN(it_error_text_replaced, n);
        IT_RUN(it_acl_noscript, n);
        IT_RUN(it_select_db, n);
        IT_RUN(it_inflight_drop, n);
        IT_RUN(it_restart_idle, n);
        IT_RUN(it_reentrant, n);
        IT_RUN(it_reentrant_noscript, n);
        IT_RUN(it_fence, n);
        IT_RUN(it_fence_reentrant, n);
        IT_RUN(it_fence_noscript, n);
        IT_RUN(it_rw, n);
        IT_RUN(it_rw_upgrade, n);
        IT_RUN(it_release_publishes, n);
        if (it->notify) {
            IT_RUN(it_wake_on_release, n);
            IT_RUN(it_wake_auth, n);
            IT_RUN(it_wake_off, n);
        }
    }
    if (it->reinit) IT_RUN(it_reinit, 3);
    if (it->stats) IT_RUN(it_stats, 3);
    IT_RUN(it_evict, 1);
    IT_RUN(it_evict, 3);
    IT_RUN(it_burst_release, 3);
    IT_RUN(it_burst_acquire, 1);
    IT_RUN(it_hostile_stray, 3);
    IT_RUN(it_hostile_stray_idle, 3);
    IT_RUN(it_hostile_huge, 3);
    IT_RUN(it_hostile_silent, 3);
    IT_RUN(it_hostile_reset, 3);
    IT_RUN(it_hostile_closed, 3);
    IT_RUN(it_hostile_blackhole, 3);
    IT_RUN(it_hostile_trickle, 3);
    IT_RUN(it_hostile_greet, 3);
    IT_RUN(it_hostile_half_reset, 3);
    IT_RUN(it_hostile_garbage, 3);
    IT_RUN(it_hostile_stray_bg, 3);
    IT_RUN(it_hostile_huge_bg, 3);
    IT_RUN(it_hostile_blackhole_bg, 3);
    IT_RUN(it_proxy_cut, 3);
    IT_RUN(it_proxy_latency, 3);
    IT_RUN(it_proxy_partition, 3);
    IT_RUN(it_proxy_reset, 3);
    IT_RUN(it_restart_empty, 3);
    IT_RUN(it_wait_replicas, 1);
    it_stop_sets(sizes, 3);
    redis_nodes_stop(&it_volatile);
    return CHECK_EXIT();
}

/* ---- TLS: it_main_tls runs the scenarios above over TLS, and these ----
   A node the client must refuse, or that refuses the client, fails its
   vote with REDLOCK_ERR_TLS and words that say why; a refusal, it ends
   the acquire at once with TLS, whatever wait_ms and retry_count say
   (redlock.h section 4). A server that closes or stays silent during the
   handshake is the network's to the adapters: retried, never TLS (the
   adapters' connect timeout is at most 300 ms here). */
enum {
    IT_TLS_WRONG_CA = 1,  /* the client trusts another CA only */
    IT_TLS_WRONG_NAME,    /* the certificate is not for the name asked */
    IT_TLS_NO_CLIENT_CERT, /* the node requires a client certificate */
    IT_TLS_PLAIN_ANSWER,  /* answers the handshake in plain text (RESP) */
    IT_TLS_MID_HANDSHAKE, /* the server sends half a record, then closes */
    IT_TLS_PLAIN_SERVER,  /* a plain-text redis-server behind a TLS client: silent */
    IT_TLS_SILENT         /* accepts and never answers the handshake */
};
static redis_nodes it_tls_required; /* one node with --tls-auth-clients yes */

static void it_tls_refused(int kind)
{
    static const char *const names[] = { "", "wrong-ca", "wrong-name", "no-client-cert", "plain-answer",
                                         "mid-handshake", "plain-server", "silent" };
    static const char *const words[] = { "", "certificate refused", "hostname mismatch", "certificate required",
                                         "TLS handshake", "", "no answer", "no answer" };
    int refusal = kind <= IT_TLS_PLAIN_ANSWER;
    int ports[REDIS_NODES_MAX];
    it_setup s;
    hostile h;
    it_client *c;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], text[256];
    long long t0, took;
    int st, rc, k;
    h.pid = 0;
    it_defaults(&s, &it_plain[1], ports);
    switch (kind) {
    case IT_TLS_WRONG_CA: s.tls_ca = it_tls_file("other-ca.crt"); break;
    case IT_TLS_WRONG_NAME: s.tls_name = "wrong.example"; break;
    case IT_TLS_NO_CLIENT_CERT: ports[0] = redis_nodes_tls_port(&it_tls_required, 0); break;
    case IT_TLS_PLAIN_ANSWER:
        CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, "-ERR unknown command\r\n"), 0);
        ports[0] = h.port;
        break;
    case IT_TLS_MID_HANDSHAKE: /* a handshake record header announcing 64 bytes, and 1 of them */
        CHECK_EQ(hostile_start(&h, HOSTILE_CLOSE, "\x16\x03\x03\x00\x40\x02"), 0);
        ports[0] = h.port;
        break;
    case IT_TLS_PLAIN_SERVER: ports[0] = redis_nodes_port(&it_plain[1], 0); break;
    case IT_TLS_SILENT:
        CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
        ports[0] = h.port;
        break;
    }
    c = it->open(&s);
    CHECK(c != NULL);
    if (c) {
        snprintf(key, sizeof key, "it:%s:tls-%s", it->name, names[kind]);
        it_lock_opts(&o, key, 1000);
        if (refusal) { /* a budget no refusal may spend */
            o.retry_count = 50;
            o.retry_delay_ms = 100;
            o.wait_ms = 30000;
        } else {
            o.retry_count = 1;
        }
        l = it->lock(c, &o);
        CHECK(l != NULL);
        t0 = it_now_ms();
        memset(&r, 0, sizeof r);
        rc = l ? it->acquire(l, &r) : REDLOCK_ERR_INVALID;
        took = it_now_ms() - t0;
        if (!refusal) it->idle(c, 400); /* past the connect timeout */
        st = it->node_error(c, 0, text, sizeof text);
        /* TLS 1.3 without the client certificate: a connection opened after
           the refusal (libev reconnects by itself) may again be reset
           before the server's alert arrives, and the node status then
           reads TRANSPORT for a while; a later connection hears the alert */
        for (k = 0; kind == IT_TLS_NO_CLIENT_CERT && st == REDLOCK_ERR_TRANSPORT && k < 100; k++) {
            it->idle(c, 30);
            st = it->node_error(c, 0, text, sizeof text);
        }
        printf("#   %s: acquire %d after %lld ms (%d attempts), node status %d (%s)\n", names[kind], rc, took,
               r.attempts, st, text);
        if (refusal) {
            CHECK_EQ(rc, REDLOCK_ERR_TLS);
            CHECK_EQ(r.status, REDLOCK_ERR_TLS);
            /* TLS 1.3 without the client certificate: the server judges the
               client after the handshake, then alerts and closes; closed
               with our commands unread, it may reset before the alert
               leaves (hiredis's pipelined first commands lose that race
               often): a later attempt hears it */
            if (kind != IT_TLS_NO_CLIENT_CERT) CHECK_EQ(r.attempts, 1);
            CHECK(took < (kind == IT_TLS_NO_CLIENT_CERT ? 5000 : 1000)); /* not the 30 s wait, not 50 retries */
            CHECK_EQ(st, REDLOCK_ERR_TLS);
        } else {
            CHECK(rc != REDLOCK_OK && rc != REDLOCK_ERR_TLS);
            CHECK_EQ(r.attempts, 2); /* retried */
            CHECK(st != 0 && st != REDLOCK_ERR_TLS);
        }
        CHECK(strstr(text, words[kind]) != NULL); /* the adapter's words: why */
        /* TLS 1.3 without the client certificate: a client that reconnects
           by itself (libev) sees each new connection up until the server's
           alert comes: it is dropped again, which the loop sees at once */
        for (k = 0; kind == IT_TLS_NO_CLIENT_CERT && k < 50 && it->node_connected(c, 0); k++) it->idle(c, 20);
        CHECK_EQ(it->node_connected(c, 0), 0);
        if (l) it->unlock(l);
        it->close(c);
    }
    if (h.pid) hostile_stop(&h);
}

static void it_tls_wrong_ca(void) { it_tls_refused(IT_TLS_WRONG_CA); }
static void it_tls_wrong_name(void) { it_tls_refused(IT_TLS_WRONG_NAME); }
static void it_tls_no_client_cert(void) { it_tls_refused(IT_TLS_NO_CLIENT_CERT); }
static void it_tls_plain_answer(void) { it_tls_refused(IT_TLS_PLAIN_ANSWER); }
static void it_tls_mid_handshake(void) { it_tls_refused(IT_TLS_MID_HANDSHAKE); }
static void it_tls_plain_server(void) { it_tls_refused(IT_TLS_PLAIN_SERVER); }
static void it_tls_silent(void) { it_tls_refused(IT_TLS_SILENT); }

/* What the client may present or trust instead: a client certificate
   where one is required, a hashed CA directory, the name in the
   certificate given explicitly, and no verification at all (an unknown
   CA then passes). Each takes and releases a lock. */
static void it_tls_accepted(void)
{
    static const char *const names[] = { "client-cert", "ca-dir", "server-name", "insecure" };
    int k;
    for (k = 0; k < 4; k++) {
        int ports[REDIS_NODES_MAX];
        redis_nodes *rn = k == 0 ? &it_tls_required : &it_plain[1];
        it_setup s;
        it_client *c;
        it_lock *l;
        redlock_lock_opts o;
        redlock_result r;
        char key[96];
        it_defaults(&s, rn, ports);
        if (k == 0) {
            s.tls_cert = it_tls_file("client.crt");
            s.tls_key = it_tls_file("client.key");
        } else if (k == 1) {
            s.tls_ca = it_tls_file("cadir");
        } else if (k == 2) {
            s.tls_name = "localhost";
        } else {
            s.tls_ca = it_tls_file("other-ca.crt");
            s.tls_insecure = 1;
        }
        c = it->open(&s);
        CHECK(c != NULL);
        if (!c) continue;
        snprintf(key, sizeof key, "it:%s:tls-%s", it->name, names[k]);
        it_lock_opts(&o, key, 1000);
        l = it->lock(c, &o);
        CHECK(l != NULL);
        if (l) {
            int rc = it->acquire(l, &r);
            if (rc != REDLOCK_OK) {
                char text[256];
                it->node_error(c, 0, text, sizeof text);
                printf("#   %s: acquire %d, node: %s\n", names[k], rc, text);
            }
            CHECK_EQ(rc, REDLOCK_OK);
            CHECK_EQ(it_holders(rn, key, it->token(l)), 1);
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
            CHECK_EQ(it_holders(rn, key, it->token(l)), 0);
            it->unlock(l);
        }
        it->close(c);
    }
}

/* Makes the certificates in a fresh temp dir; 0 or -1. */
static int it_tls_make(void)
{
    char cmd[256];
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0] || strlen(tmp) > 32) tmp = "/tmp";
    snprintf(it_tls_dir, sizeof it_tls_dir, "%s/redlock-tls-XXXXXX", tmp);
    if (!mkdtemp(it_tls_dir)) {
        it_tls_dir[0] = 0;
        return -1;
    }
    snprintf(cmd, sizeof cmd, "tests/shared/tls_certs.sh '%s'", it_tls_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void it_tls_remove(void)
{
    char cmd[128];
    if (!strstr(it_tls_dir, "/redlock-tls-")) return; /* only the dir made above */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", it_tls_dir);
    if (system(cmd) != 0) printf("#   could not remove %s\n", it_tls_dir);
}

/* ---- TLS deployments: a Sentinel group, a cluster ----
   For the adapters that serve them over TLS: their it_main_tls `more`
   runs these (the certificates of it_main_tls). */

/* Proves (rediss-sentinel://): the sentinels are asked in TLS and the
   primary is spoken to in TLS, each connection checked against its own
   host: the sentinels, reached as "localhost", hold a certificate for
   that name only; the data servers one for 127.0.0.1 only, the address
   the sentinels name (checked against the URL's host, the primary would
   be refused). The key is on the primary under the token; a failover
   while the lock is held is seen (its extend is refused), and a waiter is
   granted on the new primary; a client that trusts another CA is refused
   by the sentinels: TLS, one attempt, the words name a sentinel. */
static inline void it_tls_sentinel(void)
{
    const char *data_args[] = { "--tls-cert-file", it_tls_file("ip-only.crt"), "--tls-key-file",
                                it_tls_file("ip-only.key"), "--tls-ca-cert-file", it_tls_file("ca.crt"),
                                "--tls-auth-clients", "no", NULL };
    const char *sentinel_args[] = { "--tls-cert-file", it_tls_file("name-only.crt"), "--tls-key-file",
                                    it_tls_file("name-only.key"), "--tls-ca-cert-file", it_tls_file("ca.crt"),
                                    "--tls-auth-clients", "no", NULL };
    const char *get[] = { "GET", NULL, NULL };
    redis_group g;
    int ports[3], i;
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], out[128], text[256];
    if (redis_group_start_tls(&g, "rl-tls", 3, data_args, sentinel_args) != 0) {
        CHECK(!"a TLS Sentinel group started");
        return;
    }
    for (i = 0; i < 3; i++) ports[i] = redis_group_sentinel_tls_port(&g, i);
    memset(&s, 0, sizeof s);
    s.n = 3;
    s.ports = ports;
    s.host = "localhost";
    s.sentinel = "rl-tls";
    s.tls = 1;
    s.tls_ca = it_tls_file("ca.crt");
    redlock_config_init(&s.core);
    s.core.node_count = 1;
    s.core.node_timeout_ms = 500;
    s.core.retry_count = 2;
    s.core.retry_delay_ms = 100;
    it_key(key, sizeof key, "tls-sentinel");
    get[1] = key;
    a = it->open(&s);
    CHECK(a != NULL);
    if (a) {
        it_lock_opts(&o, key, 1000);
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (l) {
            CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
            CHECK_EQ(redis_nodes_queryv(redis_group_plain_port(&g, redis_group_primary_port(&g)), NULL, NULL, 1000, get,
                                        out, sizeof out),
                     0);
            CHECK_STR(out, it->token(l));
            CHECK(redis_group_failover(&g) > 0);
            CHECK(it->extend(l, 1000, NULL) != REDLOCK_OK); /* the new primary: the node's restart */
            it->unlock(l);
        }
        it_lock_opts(&o, key, 1000); /* granted once the bound (the ttl) has passed since the failover */
        o.wait_ms = 6000;
        o.retry_count = 1000;
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (l) {
            CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
            CHECK_EQ(redis_nodes_queryv(redis_group_plain_port(&g, redis_group_primary_port(&g)), NULL, NULL, 1000, get,
                                        out, sizeof out),
                     0);
            CHECK_STR(out, it->token(l));
            CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
            it->unlock(l);
        }
        it->close(a);
    }
    s.tls_ca = it_tls_file("other-ca.crt");
    a = it->open(&s);
    CHECK(a != NULL);
    if (a) {
        it_lock_opts(&o, key, 1000);
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (l) {
            memset(&r, 0, sizeof r);
            CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_TLS);
            CHECK_EQ(r.attempts, 1);
            CHECK_EQ(it->node_error(a, 0, text, sizeof text), REDLOCK_ERR_TLS);
            CHECK(strstr(text, "sentinel localhost:") != NULL && strstr(text, "certificate refused") != NULL);
            printf("#   a sentinel refused: %s\n", text);
            it->unlock(l);
        }
        it->close(a);
    }
    redis_group_stop(&g);
}

/* Proves (rediss-cluster://): CLUSTER SLOTS is asked in TLS and every
   master is spoken to in TLS (tls-cluster: the map a TLS client gets
   names the TLS ports): a lock on a key of each master is granted there,
   under its token, and released; a client that trusts another CA gets no
   map: TLS, one attempt. */
static inline void it_tls_cluster(void)
{
    /* the bus asks its peers for a certificate whatever tls-auth-clients
       says: the nodes show the client one */
    const char *args[] = { "--tls-cert-file", it_tls_file("server.crt"), "--tls-key-file", it_tls_file("server.key"),
                           "--tls-client-cert-file", it_tls_file("client.crt"), "--tls-client-key-file",
                           it_tls_file("client.key"), "--tls-ca-cert-file", it_tls_file("ca.crt"),
                           "--tls-auth-clients", "no", NULL };
    const char *get[] = { "GET", NULL, NULL };
    redis_cluster c;
    int ports[1], m, k;
    it_setup s;
    it_client *a;
    it_lock *l;
    redlock_lock_opts o;
    redlock_result r;
    char key[96], out[128], text[256];
    if (redis_cluster_start_tls(&c, 3, 1, args) != 0) {
        CHECK(!"a TLS cluster started");
        return;
    }
    ports[0] = redis_cluster_tls_port(&c, 1);
    memset(&s, 0, sizeof s);
    s.n = 1;
    s.ports = ports;
    s.cluster = 1;
    s.tls = 1;
    s.tls_ca = it_tls_file("ca.crt");
    redlock_config_init(&s.core);
    s.core.node_count = 1;
    s.core.node_timeout_ms = 500;
    s.core.retry_count = 2;
    s.core.retry_delay_ms = 100;
    a = it->open(&s);
    CHECK(a != NULL);
    for (m = 0; a && m < 3; m++) {
        for (k = 0;; k++) { /* a key of master m */
            int slot;
            snprintf(key, sizeof key, "it:%s:tls-cluster:%d", it->name, k);
            slot = (int)redis_cluster__slot(key);
            if (slot >= redis_cluster_first_slot(&c, m) && (m == 2 || slot < redis_cluster_first_slot(&c, m + 1))) break;
        }
        get[1] = key;
        it_lock_opts(&o, key, 2000);
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (!l) continue;
        CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK);
        CHECK_EQ(redis_cluster_cmdv(&c, m, out, sizeof out, get), 0);
        CHECK_STR(out, it->token(l));
        CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
        it->unlock(l);
    }
    if (a) it->close(a);
    s.tls_ca = it_tls_file("other-ca.crt");
    a = it->open(&s);
    CHECK(a != NULL);
    if (a) {
        it_lock_opts(&o, "it:tls-cluster:refused", 1000);
        l = it->lock(a, &o);
        CHECK(l != NULL);
        if (l) {
            memset(&r, 0, sizeof r);
            CHECK_EQ(it->acquire(l, &r), REDLOCK_ERR_TLS);
            CHECK_EQ(r.attempts, 1);
            CHECK_EQ(it->node_error(a, 0, text, sizeof text), REDLOCK_ERR_TLS);
            CHECK(strstr(text, "certificate refused") != NULL);
            printf("#   the cluster refused: %s\n", text);
            it->unlock(l);
        }
        it->close(a);
    }
    redis_cluster_stop(&c);
}

/* The scenarios over TLS on 1 and 3 nodes (each node listens with TLS,
   its plain port kept for the test's own checks), then the TLS cases,
   then the adapter's own (more, optional) while the nodes still run. */
static inline int it_main_tls(const it_ops *ops, void (*more)(void))
{
    static const int sizes[] = { 1, 3 };
    const char *tls_args[16], *auth_args[16], *required_args[16];
    int k, a = 0;
    it = ops;
    redis_nodes_deadline(170);
    if (it_tls_make() != 0) {
        printf("not ok %s_tls_certificates (tests/shared/tls_certs.sh: is openssl installed?)\n", ops->name);
        it_tls_remove();
        return 1;
    }
    tls_args[a++] = "--tls-cert-file"; tls_args[a++] = it_tls_file("server.crt");
    tls_args[a++] = "--tls-key-file"; tls_args[a++] = it_tls_file("server.key");
    tls_args[a++] = "--tls-ca-cert-file"; tls_args[a++] = it_tls_file("ca.crt");
    tls_args[a++] = "--tls-auth-clients"; tls_args[a++] = "no";
    memcpy(auth_args, tls_args, sizeof tls_args);
    memcpy(required_args, tls_args, sizeof tls_args);
    tls_args[a] = NULL;
    auth_args[a] = "--requirepass"; auth_args[a + 1] = "s3cret"; auth_args[a + 2] = NULL;
    required_args[a] = "--tls-auth-clients"; required_args[a + 1] = "yes"; required_args[a + 2] = NULL;
    if (it_start_sets(sizes, 2, tls_args, auth_args, 1) != 0) {
        it_tls_remove();
        return 1;
    }
    if (redis_nodes_start_tls(&it_tls_required, 1, required_args, NULL) != 0) {
        printf("not ok %s_tls_start_redis_required\n", ops->name);
        it_tls_remove();
        return 1;
    }
    for (k = 0; k < 2; k++) {
        int n = sizes[k];
        IT_RUN(it_basic, n);
        IT_RUN(it_reuse, n);
        IT_RUN(it_contend, n);
        IT_RUN(it_expiry, n);
        IT_RUN(it_watchdog, n);
        IT_RUN(it_watchdog_stolen, n);
        IT_RUN(it_node_killed, n);
        IT_RUN(it_node_paused, n);
        IT_RUN(it_auth, n);
        IT_RUN(it_config_refused, n);
        IT_RUN(it_acl_noscript, n);
        IT_RUN(it_select_db, n);
        IT_RUN(it_inflight_drop, n);
        IT_RUN(it_restart_idle, n);
        IT_RUN(it_reentrant, n);
        IT_RUN(it_fence, n);
        if (it->notify) IT_RUN(it_wake_on_release, n);
    }
    IT_RUN(it_tls_accepted, 1);
    IT_RUN(it_tls_wrong_ca, 1);
    IT_RUN(it_tls_wrong_name, 1);
    IT_RUN(it_tls_no_client_cert, 1);
    IT_RUN(it_tls_plain_answer, 1);
    IT_RUN(it_tls_mid_handshake, 1);
    IT_RUN(it_tls_plain_server, 1);
    IT_RUN(it_tls_silent, 1);
    if (more) more();
    it_stop_sets(sizes, 2);
    redis_nodes_stop(&it_tls_required);
    it_tls_remove();
    return CHECK_EXIT();
}

#endif /* IT_INTEGRATION_H */
