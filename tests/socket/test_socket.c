/* Integration tests of adapters/redlock_socket.h (raw sockets, own RESP
   parser) against real redis-servers on 1, 3 and 5 nodes, started and
   stopped by PID by tests/shared/redis_nodes.h. Scenarios: tests/shared/integration.h
   (acquire/release/extend, contention, threads, expiry, watchdog past the
   TTL, stolen lock, node killed, node paused with SIGSTOP, AUTH and wrong
   password, ACL user without scripting -> fallback). The "watchdog" here
   is the adapter's poll loop: idle() runs redlock_socket_run(); with
   IT_SOCKET_THREAD=1 in the environment it is the adapter's watchdog
   thread where a scenario asks for one (idle() then only waits). Plus a
   Unix-socket node and SELECT, node_status across a node restart, and
   the watchdog thread's own guarantees (socket_thread_*). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_SOCKET_THREAD
#include "adapters/redlock_socket.h"
#include "integration.h"

/* Counters the callbacks write, which run on the watchdog thread when
   there is one: read under this mutex. */
static pthread_mutex_t t_mu = PTHREAD_MUTEX_INITIALIZER;

struct it_client {
    redlock_socket s;
    int switches;
};

struct it_lock {
    redlock_socket_lock l;
    it_client *c;
    int lost;
};

static void t_on_event(void *user, const redlock_event *ev)
{
    it_client *c = (it_client *)user;
    pthread_mutex_lock(&t_mu);
    it_note_event(&c->switches, c, ev);
    pthread_mutex_unlock(&t_mu);
}

static void t_on_result(redlock_lock *lk, const redlock_result *r)
{
    it_lock *l = (it_lock *)r->user;
    (void)lk;
    pthread_mutex_lock(&t_mu);
    it_note_result(r);
    if (r->op == REDLOCK_OP_LOST) l->lost++;
    pthread_mutex_unlock(&t_mu);
}

static it_client *t_open(const it_setup *st)
{
    redlock_socket_config cfg;
    int i, rc;
    void *mem = NULL;
    char err[256];
    it_client *c = (it_client *)calloc(1, sizeof *c);
    if (!c) return NULL;
    redlock_socket_config_init(&cfg);
    cfg.node_count = st->nodes ? 0 : st->cluster || st->sentinel ? 1 : st->n;
    for (i = 0; i < cfg.node_count; i++) {
        cfg.node[i].host = st->host ? st->host : "127.0.0.1";
        cfg.node[i].port = st->ports[i];
        cfg.node[i].username = st->user;
        cfg.node[i].password = st->pass;
        cfg.node[i].db = st->db;
    }
    if (st->cluster || st->sentinel) { /* one node: the cluster, its seeds; the group, its sentinels */
        cfg.node[0].kind = st->cluster ? REDLOCK_NODE_CLUSTER : REDLOCK_NODE_SENTINEL;
        cfg.node[0].master = st->sentinel;
        for (i = 1; i < st->n && i < REDLOCK_NODES_MAX_SEEDS; i++) {
            cfg.node[0].seed[i - 1].host = st->host ? st->host : "127.0.0.1";
            cfg.node[0].seed[i - 1].port = st->ports[i];
            cfg.node[0].seed_count = i;
        }
    }
    if (st->nodes && redlock_parse_nodes(cfg.node, &cfg.node_count, st->nodes, &mem, err, sizeof err) != 0) {
        printf("#   %s\n", err);
        free(c);
        return NULL;
    }
    it_tls_config(st, &cfg.tls);
    cfg.core = st->core;
    cfg.notify_off = st->notify_off;
    cfg.watchdog_thread = st->watchdog_thread && getenv("IT_SOCKET_THREAD") && atoi(getenv("IT_SOCKET_THREAD"));
    cfg.connect_timeout_ms = 300;
    cfg.command_timeout_ms = 300;
    cfg.on_event = t_on_event;
    cfg.user = c;
    rc = redlock_socket_init(&c->s, &cfg);
    redlock_free_nodes(mem);
    if (rc != REDLOCK_OK) {
        free(c);
        return NULL;
    }
    (void)redlock_socket_connect(&c->s); /* AUTH failures show in node_status */
    return c;
}

static void t_close(it_client *c)
{
    redlock_socket_deinit(&c->s);
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
    if (redlock_socket_lock_init(&c->s, &l->l, &lo) != REDLOCK_OK) {
        free(l);
        return NULL;
    }
    return l;
}

static void t_unlock(it_lock *l)
{
    redlock_socket_lock_deinit(&l->l);
    free(l);
}

static int t_reinit(it_lock *l, const redlock_lock_opts *o)
{
    redlock_lock_opts lo = *o;
    lo.on_result = t_on_result;
    lo.user = l;
    l->lost = 0;
    return redlock_socket_lock_init(&l->c->s, &l->l, &lo);
}

/* The blocking calls linger themselves (redlock_socket.h: what the core
   sent last is written out, an answer it acts on is read): what a call
   leaves in flight is the adapter's to finish, as a program's would be. */
static int t_done(it_lock *l, int rc, redlock_result *r)
{
    /* a result carries the user pointer given at lock_init */
    if (redlock_socket_last_result(&l->l)->op) CHECK(redlock_socket_last_result(&l->l)->user == l);
    if (r) {
        if (rc == REDLOCK_OK || redlock_socket_last_result(&l->l)->op) *r = *redlock_socket_last_result(&l->l);
        else memset(r, 0, sizeof *r);
    }
    return rc;
}

static int t_acquire(it_lock *l, redlock_result *r) { return t_done(l, redlock_socket_acquire(&l->l), r); }
static int t_release(it_lock *l, redlock_result *r) { return t_done(l, redlock_socket_release(&l->l), r); }
static int t_extend(it_lock *l, int64_t ttl, redlock_result *r) { return t_done(l, redlock_socket_extend(&l->l, ttl), r); }
static int t_rw(it_lock *l, int op, redlock_result *r)
{
    return t_done(l, op == REDLOCK_OP_UPGRADE ? redlock_socket_upgrade(&l->l) : redlock_socket_downgrade(&l->l), r);
}
static redlock_state t_state(it_lock *l) { return redlock_socket_lock_state(&l->l); }
static const char *t_token(it_lock *l) { return redlock_lock_token(&l->l.lock); }
static redlock_lock *t_core(it_lock *l) { return &l->l.lock; }
static void t_idle(it_client *c, int ms) { redlock_socket_run(&c->s, ms); }
static int t_stats(it_client *c, redlock_adapter_stats *out) { return redlock_socket_stats(&c->s, out); }
static void t_stats_reset(it_client *c) { redlock_socket_stats_reset(&c->s); }
static int t_node_status(it_client *c, int i) { return redlock_socket_node_status(&c->s, i, NULL, 0); }
static int t_node_connected(it_client *c, int i) { return redlock_socket_node_connected(&c->s, i); }
/* this adapter keeps no error text: the status's own words */
static int t_node_error(it_client *c, int i, char *buf, size_t n)
{
    return redlock_socket_node_status(&c->s, i, buf, n);
}
static int t_mode_switches(it_client *c)
{
    int n;
    pthread_mutex_lock(&t_mu);
    n = c->switches;
    pthread_mutex_unlock(&t_mu);
    return n;
}
static int t_lost(it_lock *l)
{
    int n;
    pthread_mutex_lock(&t_mu);
    n = l->lost;
    pthread_mutex_unlock(&t_mu);
    /* a loss reported outside a blocking call is the lock's last result
       (the scenarios ask right after it, before another call on the lock) */
    if (n > 0) CHECK_EQ((int)redlock_socket_last_result(&l->l)->op, (int)REDLOCK_OP_LOST);
    return n;
}

/* A node over its Unix socket, with SELECT 3: the key lands in db 3. */
static void socket_unix_select(void)
{
    redis_nodes rn;
    char dir[] = "/tmp/redlock-sock-XXXXXX", path[128], out[128];
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    if (redis_nodes_start_unix(&rn, dir, path, sizeof path) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].unix_path = path;
    cfg.db = -1;                          /* the config's defaults are checked as the nodes' */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.db = 0;
    cfg.username = "user";                /* a user needs a password */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.username = NULL;
    cfg.db = 3;                           /* every node's db unless it names one */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "unix-select";
    o.ttl_ms = 5000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    redis_nodes_cmd(&rn, 0, out, sizeof out, "SELECT", "3", (char *)NULL);
    /* redis_nodes_cmd opens a fresh connection per call: ask with a script */
    redis_nodes_cmd(&rn, 0, out, sizeof out, "EVAL", "redis.call('SELECT', 3) return redis.call('GET', KEYS[1])",
                    "1", "unix-select", (char *)NULL);
    CHECK_STR(out, redlock_lock_token(&l.lock));
    redis_nodes_cmd(&rn, 0, out, sizeof out, "EXISTS", "unix-select", (char *)NULL);
    CHECK_STR(out, ":0"); /* not in db 0 */
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    /* a db the server does not have (the node's own, over the config's): SELECT refused -> SELECT */
    cfg.node[0].db = 999;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_SELECT);
    redlock_socket_deinit(&s);
    redis_nodes_stop_unix(&rn, dir, path);
    /* the socket file is gone: refused at once (connect fails in the call) */
    cfg.node[0].db = 0;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    redlock_socket_deinit(&s);
}

/* The blocking calls refuse to run inside the adapter's own callbacks
   (they would run the loop from inside the loop): BUSY. */
static redlock_socket_lock *busy_other;
static int busy_rc = 1;
static void busy_on_event(void *user, const redlock_event *ev)
{
    (void)user;
    if (ev->type == REDLOCK_EV_ACQUIRED && busy_rc == 1) busy_rc = redlock_socket_acquire(busy_other);
}
static void socket_blocking_call_in_callback(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l, other;
    redlock_lock_opts o;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    cfg.on_event = busy_on_event;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "busy-in-callback";
    o.ttl_ms = 10000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    o.key = "busy-in-callback-2";
    CHECK_EQ(redlock_socket_lock_init(&s, &other, &o), REDLOCK_OK);
    busy_other = &other;
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(busy_rc, REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&other.lock), REDLOCK_STATE_IDLE);
    redlock_socket_lock_deinit(&other);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

/* A blocking acquire whose lock is deinitialised meanwhile (by another
   lock's on_result) returns DETACHED at once instead of waiting for a
   result that cannot come; run(0) is a valid poll; a node not connected
   wants no I/O. */
static redlock_socket_lock *detach_target;
static void detach_on_result(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    if (r->op == REDLOCK_OP_ACQUIRE && detach_target) {
        redlock_socket_lock_deinit(detach_target);
        detach_target = NULL;
    }
}
static void socket_detached_while_waiting(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock a, b;
    redlock_lock_opts o;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_interest(&s, 0), 0);  /* not connected: nothing to watch */
    CHECK(redlock_socket_memory(&s) >= sizeof(redlock_socket_node)); /* the node table counts */
    memset(&o, 0, sizeof o);
    CHECK_EQ(redlock_socket_lock_init(&s, &a, NULL), REDLOCK_ERR_INVALID);
    redlock_socket_lock_deinit(NULL); /* harmless */
    CHECK_EQ(redlock_socket_run(&s, 0), REDLOCK_OK); /* a poll without waiting */
    memset(&o, 0, sizeof o);
    o.key = "detach-a";
    o.ttl_ms = 10000;
    o.on_result = detach_on_result;
    CHECK_EQ(redlock_socket_lock_init(&s, &a, &o), REDLOCK_OK);
    o.key = "detach-b";
    o.on_result = NULL;
    CHECK_EQ(redlock_socket_lock_init(&s, &b, &o), REDLOCK_OK);
    detach_target = &b;
    CHECK_EQ(redlock_acquire(&a.lock), REDLOCK_OK); /* its answer comes first */
    CHECK_EQ(redlock_socket_acquire(&b), REDLOCK_ERR_DETACHED);
    CHECK(detach_target == NULL);
    CHECK_EQ(redlock_lock_state(&a.lock), REDLOCK_STATE_HELD); /* at once, not after a's deadline */
    CHECK_EQ(redlock_socket_release(&a), REDLOCK_OK);
    redlock_socket_lock_deinit(&a);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

/* The same when that on_result initialises b again (another key) and
   starts its new life's acquire: the blocking call on b's old life
   returns DETACHED at once (the new life's result is not its result, and
   the old one cannot come); b is then held on its new key. */
static redlock_socket *reinit_s;
static redlock_socket_lock *reinit_target;
static int reinit_rc = 1;
static void reinit_on_result(redlock_lock *lk, const redlock_result *r)
{
    redlock_lock_opts o;
    (void)lk;
    if (r->op == REDLOCK_OP_ACQUIRE && reinit_target) {
        memset(&o, 0, sizeof o);
        o.key = "reinit-b2";
        o.ttl_ms = 10000;
        reinit_rc = redlock_socket_lock_init(reinit_s, reinit_target, &o);
        if (reinit_rc == REDLOCK_OK) reinit_rc = redlock_acquire(&reinit_target->lock);
        reinit_target = NULL;
    }
}
static void socket_reinit_while_waiting(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock a, b;
    redlock_lock_opts o;
    long long t0;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    cfg.core.node_timeout_ms = 1000; /* a's answer comes first, under valgrind too */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "reinit-a";
    o.ttl_ms = 10000;
    o.on_result = reinit_on_result;
    CHECK_EQ(redlock_socket_lock_init(&s, &a, &o), REDLOCK_OK);
    o.key = "reinit-b";
    o.on_result = NULL;
    CHECK_EQ(redlock_socket_lock_init(&s, &b, &o), REDLOCK_OK);
    reinit_s = &s;
    reinit_target = &b;
    it_guard_start("socket_reinit_while_waiting");
    CHECK_EQ(redlock_acquire(&a.lock), REDLOCK_OK); /* its answer comes first */
    t0 = it_now_ms();
    CHECK_EQ(redlock_socket_acquire(&b), REDLOCK_ERR_DETACHED);
    it_guard_step("acquire");
    CHECK(it_now_ms() - t0 < 1000); /* not when the new life's validity ends */
    CHECK_EQ(reinit_rc, REDLOCK_OK);
    CHECK(reinit_target == NULL);
    CHECK_EQ(redlock_socket_run(&s, 20), REDLOCK_OK);
    it_guard_step("run");
    CHECK_EQ(redlock_lock_state(&b.lock), REDLOCK_STATE_HELD);
    CHECK_EQ(it_holders(&rn, "reinit-b2", redlock_lock_token(&b.lock)), 1);
    CHECK_EQ(redlock_socket_release(&b), REDLOCK_OK);
    CHECK_EQ(redlock_socket_release(&a), REDLOCK_OK);
    it_guard_step("release");
    redlock_socket_lock_deinit(&a);
    redlock_socket_lock_deinit(&b);
    redlock_socket_deinit(&s);
    it_guard_step("deinit");
    it_guard_stop();
    redis_nodes_stop(&rn);
}

/* A legacy lock (SETNX with the expiry in the value: no TTL on the
   server) taken and released with the blocking calls, cycle after cycle,
   on three nodes. Each call has its result at quorum; an answer still
   owed by the slowest node is one the core acts on (a SETNX says whether
   the node holds the key, which the release must know to delete it; a
   GET is followed by DEL), so the call reads it before returning
   (redlock_lock_followup) and writes out what follows. After each
   release, with no further call, no node has the key (a legacy key left
   behind would never expire); a modern lock on the key then gets every
   node. */
static void socket_legacy_cycles_leave_no_key(void)
{
    static const char key[] = "legacy-cycles";
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    char out[64], tok[64];
    int i, k;
    if (redis_nodes_start(&rn, 3, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    for (i = 0; i < 3; i++) {
        cfg.node[i].port = redis_nodes_port(&rn, i);
        cfg.core.mode[i] = REDLOCK_MODE_LEGACY;
    }
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    for (k = 0; k < 10; k++) {
        CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
        CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
        for (i = 0; i < 3; i++) {
            long long until = it_now_ms() + 300;
            while (redis_nodes_cmd(&rn, i, out, sizeof out, "PTTL", key, (char *)NULL) == 0 && strcmp(out, ":-2") != 0 &&
                   it_now_ms() < until)
                redis_nodes__sleep_ms(5);
            if (strcmp(out, ":-2") != 0) printf("#   cycle %d: node %d PTTL %s\n", k, i, out);
            CHECK_STR(out, ":-2");
        }
        if (check__fails) break; /* once is enough to say */
    }
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    for (i = 0; i < 3; i++) cfg.core.mode[i] = REDLOCK_MODE_AUTO;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    snprintf(tok, sizeof tok, "%s", redlock_lock_token(&l.lock));
    CHECK_EQ(it_holders_settle(&rn, key, tok, 3), 3);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

/* redlock_socket_node_status(): the last error while the node is down,
   0 again once the restarted node has answered on a new connection. */
static void socket_status_after_restart(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    /* not a timing test: a restarted node's first answers (the preamble's
       INFO and CONFIG, then SET) come late under valgrind on a loaded machine */
    cfg.connect_timeout_ms = 3000;
    cfg.command_timeout_ms = 3000;
    cfg.core.node_timeout_ms = 2000;
    cfg.core.retry_count = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "status-restart";
    o.ttl_ms = 10000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    redis_node_stop(&rn, 0);
    /* the old connection fails (closed by the server), or the new one is
       refused: either way an error */
    CHECK(redlock_socket_acquire(&l) != REDLOCK_OK);
    CHECK(redlock_socket_node_status(&s, 0, NULL, 0) != 0);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK(redlock_socket_acquire(&l) != REDLOCK_OK);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redis_node_restart(&rn, 0), 0);
    { /* a durable node reads its AOF first, answering -LOADING meanwhile */
        char out[64] = "";
        long long until = it_now_ms() + 10000;
        while (it_now_ms() < until && (redis_nodes_cmd(&rn, 0, out, sizeof out, "PING", (char *)NULL) != 0 ||
                                       strcmp(out, "+PONG") != 0))
            redis_nodes__sleep_ms(20);
        CHECK_STR(out, "+PONG");
    }
    /* the node answers (status 0), but another process does (a new run_id):
       its grant does not count for a ttl (redlock.h section 4, Restarts) */
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

/* redlock_socket_node_status()'s text: the server's own words for a
   refused AUTH and SELECT, and with status 0 for an error reply to a
   command (an ACL that denies SET); a new connection starts without
   them. */
static void socket_status_words(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    char out[64], text[160];
    int kind;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    CHECK_EQ(redis_nodes_cmd(&rn, 0, out, sizeof out, "ACL", "SETUSER", "noset", "on", ">nspw", "~*", "+@all", "-set",
                             (char *)NULL), 0);
    for (kind = 0; kind < 3; kind++) {
        redlock_socket_config_init(&cfg);
        cfg.node_count = 1;
        cfg.node[0].port = redis_nodes_port(&rn, 0);
        cfg.node[0].username = "noset";
        cfg.node[0].password = kind == 1 ? "wrong" : "nspw";
        cfg.node[0].db = kind == 2 ? 99 : 0;
        cfg.core.retry_count = -1;
        CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
        memset(&o, 0, sizeof o);
        o.key = "status-words";
        o.ttl_ms = 10000;
        CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
        CHECK(redlock_socket_acquire(&l) != REDLOCK_OK);
        text[0] = 0;
        if (kind == 0) { /* SET denied: the connection works, the words are the reply's */
            CHECK_EQ(redlock_socket_node_status(&s, 0, text, sizeof text), 0);
            CHECK(strncmp(text, "NOPERM", 6) == 0 && strstr(text, "'set'") != NULL);
        } else if (kind == 1) {
            CHECK_EQ(redlock_socket_node_status(&s, 0, text, sizeof text), REDLOCK_ERR_AUTH);
            CHECK(strncmp(text, "WRONGPASS", 9) == 0);
        } else {
            CHECK_EQ(redlock_socket_node_status(&s, 0, text, sizeof text), REDLOCK_ERR_SELECT);
            CHECK(strstr(text, "DB index is out of range") != NULL);
        }
        printf("#   socket_status_words %d: %s\n", kind, text);
        redlock_socket_lock_deinit(&l);
        redlock_socket_deinit(&s);
    }
    redis_nodes_stop(&rn);
}

/* redlock_socket_node_status()'s text for a connect that failed: the
   adapter's words for it (a refusal, a missing socket, a name that does
   not resolve, a connect that never completes). */
static void socket_status_connect_words(void)
{
    static const char *const want[] = { "connection refused", "no such socket", "name does not resolve (",
                                        "connect timed out" };
    redlock_socket_config cfg;
    redlock_socket s;
    char text[160];
    int kind, lfd = -1, filler = -1, full = hostile_full_backlog(&lfd, &filler);
    CHECK(full > 0);
    for (kind = 0; kind < 4; kind++) {
        redlock_socket_config_init(&cfg);
        cfg.node_count = 1;
        cfg.connect_timeout_ms = 200;
        if (kind == 0) cfg.node[0].port = hostile_closed_port();
        if (kind == 1) cfg.node[0].unix_path = "/nonexistent/redlock-test.sock";
        if (kind == 2) cfg.node[0].host = "nosuchhost.invalid";
        if (kind == 3) cfg.node[0].port = full;
        CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
        CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_CONNECT);
        text[0] = 0;
        CHECK_EQ(redlock_socket_node_status(&s, 0, text, sizeof text), REDLOCK_ERR_CONNECT);
        CHECK(strncmp(text, want[kind], strlen(want[kind])) == 0);
        printf("#   socket_status_connect_words %d: %s\n", kind, text);
        redlock_socket_deinit(&s);
    }
    if (lfd >= 0) close(lfd);
    if (filler >= 0) close(filler);
}

/* redlock_socket_probe(): a plain-text Redis answers the PING (the other
   protocol for a TLS node), a port that resets or stays silent is told
   apart, an unreachable one is put into words, every answer within the
   time given; bad arguments are refused, the result left untouched. */
static void socket_probe(void)
{
    static const char *const want[] = { "connection refused", "no such socket", "name does not resolve (",
                                        "connect timed out" };
    redis_nodes rn;
    redlock_node node;
    redlock_socket_probe_result r, keep;
    hostile h;
    long long t0;
    int k, lfd = -1, filler = -1;
    memset(&node, 0, sizeof node);
    memset(&keep, 0x5a, sizeof keep);
    r = keep;
    CHECK_EQ(redlock_socket_probe(NULL, 0, 100, &r), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_probe(&node, 0, 100, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_probe(&node, 0, -1, &r), REDLOCK_ERR_INVALID);
    node.port = 65536;
    CHECK_EQ(redlock_socket_probe(&node, 0, 100, &r), REDLOCK_ERR_INVALID);
    node.port = -1;
    CHECK_EQ(redlock_socket_probe(&node, 1, 100, &r), REDLOCK_ERR_INVALID);
    CHECK(memcmp(&r, &keep, sizeof r) == 0);

    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    memset(&node, 0, sizeof node);
    node.port = redis_nodes_port(&rn, 0);
    CHECK_EQ(redlock_socket_probe(&node, 0, 1000, &r), REDLOCK_OK);
    CHECK(r.plain == 1 && r.silent == 0 && r.tls == 0 && r.other == 0 && r.words[0] == 0);
    CHECK_EQ(redlock_socket_probe(&node, 1, 1000, &r), REDLOCK_OK); /* asked as a TLS node: the other protocol */
    CHECK(r.plain == 1 && r.other == 1);
    redis_nodes_stop(&rn);

    for (k = 0; k < 4; k++) { /* unreachable: the words */
        memset(&node, 0, sizeof node);
        if (k == 0) node.port = hostile_closed_port();
        if (k == 1) node.unix_path = "/nonexistent/redlock-test.sock";
        if (k == 2) node.host = "nosuchhost.invalid";
        if (k == 3) CHECK((node.port = hostile_full_backlog(&lfd, &filler)) > 0);
        t0 = it_now_ms();
        CHECK_EQ(redlock_socket_probe(&node, k & 1, 300, &r), REDLOCK_ERR_CONNECT);
        CHECK(it_now_ms() - t0 < 1500);
        CHECK(strncmp(r.words, want[k], strlen(want[k])) == 0 && !r.plain && !r.silent && !r.tls && !r.other);
        printf("#   socket_probe unreachable %d: %s\n", k, r.words);
    }
    if (lfd >= 0) close(lfd);
    if (filler >= 0) close(filler);

    /* a port that resets plain text without a word, as a TLS port does
       (in a build with TLS it is then asked in TLS: no TLS answer here) */
    memset(&node, 0, sizeof node);
    CHECK_EQ(hostile_start(&h, HOSTILE_RESET, NULL), 0);
    node.port = h.port;
    CHECK_EQ(redlock_socket_probe(&node, 0, 1000, &r), REDLOCK_OK);
    CHECK(r.silent == 1 && r.plain == 0 && r.tls == 0 && r.other == 0);
    hostile_stop(&h);
    /* a port that never answers: bounded by the time given */
    CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
    node.port = h.port;
    t0 = it_now_ms();
    CHECK_EQ(redlock_socket_probe(&node, 0, 200, &r), REDLOCK_OK);
    CHECK(it_now_ms() - t0 >= 150 && it_now_ms() - t0 < 1500);
    CHECK(r.silent == 0 && r.plain == 0 && r.tls == 0 && r.other == 0);
    hostile_stop(&h);
    /* an answer that is not RESP: neither protocol */
    CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, "HTTP/1.1 400 Bad Request\r\n\r\n"), 0);
    node.port = h.port;
    CHECK_EQ(redlock_socket_probe(&node, 1, 1000, &r), REDLOCK_OK);
    CHECK(r.silent == 0 && r.plain == 0 && r.other == 0);
    hostile_stop(&h);
}

/* An IPv6 literal: the node's server listens on ::1 too, and the adapter
   connects there (skipped with a message where loopback has no IPv6). */
static void socket_ipv6(void)
{
    static const char *const extra[] = { "--bind", "127.0.0.1", "::1", NULL };
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    int probe = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    if (probe < 0 || bind(probe, (struct sockaddr *)&a, sizeof a) != 0) {
        if (probe >= 0) close(probe);
        printf("# socket_ipv6: no IPv6 loopback here, not run\n");
        return;
    }
    close(probe);
    if (redis_nodes_start(&rn, 1, extra, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].host = "::1";
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "ipv6";
    o.ttl_ms = 10000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    CHECK_EQ(redlock_socket_node_connected(&s, 0), 1);
    CHECK_EQ(it_holders(&rn, "ipv6", redlock_lock_token(&l.lock)), 1);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    {
        char out[32];
        CHECK_EQ(redis_nodes_cmd(&rn, 0, out, sizeof out, "EXISTS", "ipv6", (char *)NULL), 0);
        CHECK_STR(out, ":0");
    }
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

/* Descriptor 0 is a descriptor like any other: with stdin closed the
   node's socket gets it, and deinit closes it. */
static void socket_fd_zero(void)
{
    redis_nodes rn;
    redlock_socket_config cfg;
    redlock_socket s;
    int saved;
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = redis_nodes_port(&rn, 0);
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    saved = dup(0);
    CHECK(saved > 0);
    close(0);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    CHECK_EQ(redlock_socket_fd(&s, 0), 0);
    redlock_socket_deinit(&s);
    CHECK(fcntl(0, F_GETFD) == -1); /* closed */
    dup2(saved, 0);
    close(saved);
    redis_nodes_stop(&rn);
}

/* ---- the watchdog thread (cfg.watchdog_thread) ---- */

/* A client on every node of rn, connected: the job's, with the watchdog
   thread, or the other program's, without (one attempt, refused at once).
   Node timeouts that valgrind's slowness does not reach. */
static int tw_open_as(redlock_socket *s, redis_nodes *rn, int thread, int connect)
{
    redlock_socket_config cfg;
    int i, rc;
    redlock_socket_config_init(&cfg);
    cfg.node_count = rn->n;
    for (i = 0; i < rn->n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
    cfg.watchdog_thread = thread;
    cfg.core.node_timeout_ms = 200;
    if (!thread) cfg.core.retry_count = -1;
    rc = redlock_socket_init(s, &cfg);
    if (rc == REDLOCK_OK && connect) (void)redlock_socket_connect(s);
    return rc;
}
static int tw_open(redlock_socket *s, redis_nodes *rn, int thread) { return tw_open_as(s, rn, thread, 1); }

/* What the watchdog thread's callbacks saw (under t_mu). */
static struct {
    redlock_socket_lock *l;
    pthread_t main;
    long long lost_ms;    /* when LOST came, 0 before */
    int on_main;          /* it came on the main thread */
    int state, release_rc, run_rc;
} tw;

static void tw_on_result(redlock_lock *lk, const redlock_result *r)
{
    redlock_state st;
    int rel, run;
    (void)lk;
    if (r->op != REDLOCK_OP_LOST) return;
    /* inside a callback on the thread: the getters work, the blocking
       calls say BUSY instead of running the loop from inside it */
    st = redlock_socket_lock_state(tw.l);
    rel = redlock_socket_release(tw.l);
    run = redlock_socket_run(tw.l->_s, 0);
    pthread_mutex_lock(&t_mu);
    if (!tw.lost_ms) {
        tw.lost_ms = redis_nodes__now_ms();
        tw.on_main = pthread_equal(pthread_self(), tw.main);
        tw.state = (int)st;
        tw.release_rc = rel;
        tw.run_rc = run;
    }
    pthread_mutex_unlock(&t_mu);
}

/* Another program during the job: at each of at_ms[] (from the job's
   start) it tries to take the lock (its own client, no thread) and
   counts the nodes holding the job's token; or, with steal set, it
   deletes the key on the even nodes and overwrites it on the odd ones. */
typedef struct tw_other {
    redis_nodes *rn;
    const char *key, *token;
    long long start_ms, at_ms[2], stolen_ms;
    int steal;
    int rc[2], holders[2];
} tw_other;

static void *tw_other_main(void *arg)
{
    tw_other *o = (tw_other *)arg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts lo;
    char out[64];
    int k, i;
    if (o->steal) {
        redis_nodes__sleep_ms(o->at_ms[0]);
        for (i = 0; i < o->rn->n; i++) {
            if (i % 2) redis_nodes_cmd(o->rn, i, out, sizeof out, "SET", o->key, "intruder", (char *)NULL);
            else redis_nodes_cmd(o->rn, i, out, sizeof out, "DEL", o->key, (char *)NULL);
        }
        o->stolen_ms = redis_nodes__now_ms();
        return NULL;
    }
    if (tw_open(&s, o->rn, 0) != REDLOCK_OK) return NULL;
    memset(&lo, 0, sizeof lo);
    lo.key = o->key;
    lo.ttl_ms = 10000;
    if (redlock_socket_lock_init(&s, &l, &lo) == REDLOCK_OK) {
        for (k = 0; k < 2; k++) {
            long long wait = o->start_ms + o->at_ms[k] - redis_nodes__now_ms();
            if (wait > 0) redis_nodes__sleep_ms((long)wait);
            o->rc[k] = redlock_socket_acquire(&l);
            o->holders[k] = it_holders(o->rn, o->key, o->token);
            if (o->rc[k] == REDLOCK_OK) redlock_socket_release(&l);
        }
        redlock_socket_lock_deinit(&l);
    }
    redlock_socket_deinit(&s);
    return NULL;
}

/* Proves: with the watchdog thread, a job that is one blocking call three
   times as long as the TTL (nothing calls into the adapter meanwhile)
   keeps its lock: another client is refused twice during the job, past
   the first TTL, while every node holds our token; nothing is LOST, and
   the release after the job is OK. */
static void socket_thread_job(int n)
{
    redis_nodes rn;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    tw_other other;
    pthread_t t;
    char token[64];
    const int ttl = 400;
    if (redis_nodes_start(&rn, n, NULL, NULL) != 0) { CHECK(0); return; }
    CHECK_EQ(tw_open(&s, &rn, 1), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "socket:thread-job";
    o.ttl_ms = ttl;
    o.watchdog = 1;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    snprintf(token, sizeof token, "%s", redlock_lock_token(&l.lock));
    memset(&other, 0, sizeof other);
    other.rn = &rn;
    other.key = o.key;
    other.token = token;
    other.at_ms[0] = ttl + ttl / 4;
    other.at_ms[1] = 2 * ttl + ttl / 2;
    other.rc[0] = other.rc[1] = 1;
    other.start_ms = redis_nodes__now_ms();
    CHECK_EQ(pthread_create(&t, NULL, tw_other_main, &other), 0);
    redis_nodes__sleep_ms(3 * ttl); /* the job */
    pthread_join(t, NULL);
    CHECK_EQ(other.rc[0], REDLOCK_ERR_LOCKED);
    CHECK_EQ(other.rc[1], REDLOCK_ERR_LOCKED);
    CHECK_EQ(other.holders[0], n);
    CHECK_EQ(other.holders[1], n);
    CHECK_EQ(redlock_socket_lock_state(&l), REDLOCK_STATE_HELD);
    CHECK(redlock_socket_lock_valid_until(&l) > redlock_socket_now_us());
    CHECK_EQ(it_holders(&rn, o.key, token), n);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    CHECK(redlock_socket_last_result(&l)->op == REDLOCK_OP_RELEASE);
    CHECK_EQ(it_holders(&rn, o.key, token), 0);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}
static void socket_thread_job_n1(void) { socket_thread_job(1); }
static void socket_thread_job_n3(void) { socket_thread_job(3); }

/* Proves: with the watchdog thread, a lock whose key is deleted or taken
   on every node during the job is reported LOST during the job (within
   a TTL of the theft, not when the program next calls in), through
   on_result on the thread; there the getters work and the blocking
   calls say BUSY; afterwards the lock reads LOST, its last result is the
   loss, and the release neither succeeds nor touches the intruder's key. */
static void socket_thread_lost(int n)
{
    redis_nodes rn;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    tw_other other;
    pthread_t t;
    char out[64];
    long long job_end;
    int i;
    const int ttl = 400;
    if (redis_nodes_start(&rn, n, NULL, NULL) != 0) { CHECK(0); return; }
    CHECK_EQ(tw_open(&s, &rn, 1), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "socket:thread-lost";
    o.ttl_ms = ttl;
    o.watchdog = 1;
    o.on_result = tw_on_result;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    pthread_mutex_lock(&t_mu);
    memset(&tw, 0, sizeof tw);
    tw.l = &l;
    tw.main = pthread_self();
    pthread_mutex_unlock(&t_mu);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    memset(&other, 0, sizeof other);
    other.rn = &rn;
    other.key = o.key;
    other.steal = 1;
    other.at_ms[0] = ttl / 2;
    CHECK_EQ(pthread_create(&t, NULL, tw_other_main, &other), 0);
    redis_nodes__sleep_ms(3 * ttl); /* the job */
    job_end = redis_nodes__now_ms();
    pthread_join(t, NULL);
    pthread_mutex_lock(&t_mu);
    CHECK(tw.lost_ms != 0);
    CHECK(tw.lost_ms < job_end);
    CHECK(tw.lost_ms - other.stolen_ms <= ttl + 100);
    CHECK_EQ(tw.on_main, 0);
    CHECK_EQ(tw.state, REDLOCK_STATE_LOST);
    CHECK_EQ(tw.release_rc, REDLOCK_ERR_BUSY);
    CHECK_EQ(tw.run_rc, REDLOCK_ERR_BUSY);
    pthread_mutex_unlock(&t_mu);
    CHECK_EQ(redlock_socket_lock_state(&l), REDLOCK_STATE_LOST);
    CHECK_EQ((int)redlock_socket_last_result(&l)->op, (int)REDLOCK_OP_LOST);
    CHECK_EQ(redlock_socket_lock_valid_until(&l), 0);
    CHECK(redlock_socket_release(&l) != REDLOCK_OK);
    for (i = 0; i < n; i++) {
        redis_nodes_cmd(&rn, i, out, sizeof out, "GET", o.key, (char *)NULL);
        if (i % 2) CHECK_STR(out, "intruder");
        else CHECK(strcmp(out, "intruder") != 0 && strcmp(out, redlock_lock_token(&l.lock)) != 0);
    }
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}
static void socket_thread_lost_n1(void) { socket_thread_lost(1); }
static void socket_thread_lost_n3(void) { socket_thread_lost(3); }

/* Proves: a call that changes what the thread waits for wakes it. Its
   client connected to nothing yet, the thread waits with no socket to
   watch and no deadline (up to a second); the acquire then connects,
   and its replies arrive on a socket the thread does not watch: only
   the call's wake-up tells the thread about the renewals due every
   100 ms. The lock (300 ms) must still be ours three TTLs later. */
static void socket_thread_woken(void)
{
    redis_nodes rn;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    char token[64];
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) { CHECK(0); return; }
    CHECK_EQ(tw_open_as(&s, &rn, 1, 0), REDLOCK_OK);
    redis_nodes__sleep_ms(100); /* the thread waits */
    memset(&o, 0, sizeof o);
    o.key = "socket:thread-woken";
    o.ttl_ms = 300;
    o.watchdog = 1;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    snprintf(token, sizeof token, "%s", redlock_lock_token(&l.lock));
    redis_nodes__sleep_ms(900); /* the job */
    CHECK_EQ(redlock_socket_lock_state(&l), REDLOCK_STATE_HELD);
    CHECK_EQ(it_holders(&rn, o.key, token), 1);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
}

static void tw_watch(void *user, int slot, int fd, int interest) { (void)user; (void)slot; (void)fd; (void)interest; }
static void tw_set_timer(void *user, int64_t d) { (void)user; (void)d; }
static void tw_on_reply(void *user, int node, redlock_tag tag, const redlock_reply *r)
{
    (void)user; (void)node; (void)tag; (void)r;
}
static void tw_on_error(void *user, int node, redlock_tag tag, int status)
{
    (void)user; (void)node; (void)tag; (void)status;
}

/* Proves: the thread's loop is its own: init refuses it with the
   foreign-loop hooks and in raw mode; with it, the caller's poll() loop
   gets no descriptor, run(0) returns at once and run(ms) waits ms; deinit
   stops it (no thread or block left: valgrind). No node needed. */
static void socket_thread_refused(void)
{
    redlock_socket_config cfg;
    redlock_socket s;
    struct pollfd pfd[REDLOCK_SOCKET_MAX_FDS];
    long long t0;
    redlock_socket_config_init(&cfg);
    cfg.node[0].port = 1;
    cfg.watchdog_thread = 1;
    cfg.watch = tw_watch;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.watch = NULL;
    cfg.set_timer = tw_set_timer;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.set_timer = NULL;
    cfg.on_reply = tw_on_reply;
    cfg.on_error = tw_on_error;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.on_reply = NULL;
    cfg.on_error = NULL;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_pollfds(&s, pfd), 0);
    t0 = redis_nodes__now_ms();
    CHECK_EQ(redlock_socket_run(&s, 0), REDLOCK_OK);
    CHECK(redis_nodes__now_ms() - t0 < 50);
    CHECK_EQ(redlock_socket_run(&s, 60), REDLOCK_OK);
    CHECK(redis_nodes__now_ms() - t0 >= 60);
    redlock_socket_deinit(&s);
    redlock_socket_deinit(&s); /* harmless */
}

#ifdef IT_TLS
#include "strict_loop.h"

/* TLS through the foreign-loop API: a strict loop (tests/socket/
   strict_loop.h) that knows only what the watch and set_timer hooks told
   it takes a lock on three TLS nodes and releases it; the handshake's
   wishes (read, write) reach the loop as interest. */
static void socket_tls_foreign_loop(void)
{
    redis_nodes *rn = &it_plain[3];
    redlock_socket s;
    redlock_socket_lock l;
    redlock_socket_config cfg;
    sl L;
    int ports[3], i, read_only = 0;
    for (i = 0; i < 3; i++) ports[i] = redis_nodes_tls_port(rn, i);
    sl_config(&cfg, &L, "127.0.0.1", ports, 3);
    cfg.tls.enable = 1;
    cfg.tls.ca = it_tls_file("ca.crt");
    CHECK_EQ(sl_open_cfg(&s, &L, &cfg), REDLOCK_OK);
    CHECK_EQ(sl_lock(&s, &L, &l, "it:socket:tls-foreign"), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&l.lock), REDLOCK_OK);
    sl_run(&s, &L, 3, REDLOCK_OP_ACQUIRE, 5000);
    CHECK_EQ(L.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(L.status, REDLOCK_OK);
    CHECK(it_holders(rn, "it:socket:tls-foreign", redlock_lock_token(&l.lock)) >= 2); /* a quorum: the loop stops at the result */
    CHECK_EQ(redlock_release(&l.lock), REDLOCK_OK);
    sl_run(&s, &L, 3, REDLOCK_OP_RELEASE, 5000);
    CHECK_EQ(L.status, REDLOCK_OK);
    CHECK_EQ(it_holders(rn, "it:socket:tls-foreign", redlock_lock_token(&l.lock)), 0);
    /* the handshake waited for the server at least once: read interest
       without write, with the socket connected */
    for (i = 0; i < L.nlog; i++)
        if (L.log_fd[i] >= 0 && L.log_interest[i] == REDLOCK_SOCKET_READ) read_only++;
    CHECK(read_only > 0);
    CHECK_EQ(L.ctl_errors, 0);
    redlock_socket_lock_deinit(&l);
    sl_close(&s, &L);
}

/* Raw mode over TLS: a 16 MiB command leaves in many partial TLS writes
   (the socket buffer is smaller; OpenSSL retries from an output buffer
   that grows and moves meanwhile), then a small one behind it; both
   answered, the node holds all 16 MiB. */
typedef struct big_rec {
    int replies, errors;
    char first[16];
} big_rec;

static void big_on_reply(void *user, int node, redlock_tag tag, const redlock_reply *r)
{
    big_rec *b = (big_rec *)user;
    (void)node;
    (void)tag;
    if (b->replies++ == 0) snprintf(b->first, sizeof b->first, "%.*s", (int)r->len, r->str ? r->str : "");
}

static void big_on_error(void *user, int node, redlock_tag tag, int status)
{
    (void)node;
    (void)tag;
    (void)status;
    ((big_rec *)user)->errors++;
}

static void socket_tls_big_command(void)
{
    redis_nodes *rn = &it_plain[1];
    const size_t big = 16u << 20;
    redlock_socket s;
    redlock_socket_config cfg;
    big_rec b;
    char *value = (char *)malloc(big), out[64];
    const char *argv[3];
    size_t len[3];
    long long until;
    memset(&b, 0, sizeof b);
    CHECK(value != NULL);
    if (!value) return;
    memset(value, 'v', big);
    redlock_socket_config_init(&cfg);
    cfg.node[0].port = redis_nodes_tls_port(rn, 0);
    cfg.tls.enable = 1;
    cfg.tls.ca = it_tls_file("ca.crt");
    cfg.command_timeout_ms = 30000; /* not a timing test: 16 MiB through TLS under valgrind, on a loaded machine */
    cfg.on_reply = big_on_reply;
    cfg.on_error = big_on_error;
    cfg.user = &b;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    argv[0] = "SET"; len[0] = 3;
    argv[1] = "it:socket:tls-big"; len[1] = strlen(argv[1]);
    argv[2] = value; len[2] = big;
    CHECK_EQ(redlock_socket_send(&s, 0, 3, argv, len, 1), REDLOCK_OK);
    argv[0] = "PING"; len[0] = 4;
    CHECK_EQ(redlock_socket_send(&s, 0, 1, argv, len, 2), REDLOCK_OK);
    until = it_now_ms() + 40000;
    while (b.replies + b.errors < 2 && it_now_ms() < until) redlock_socket_run(&s, 10);
    CHECK_EQ(b.replies, 2);
    CHECK_EQ(b.errors, 0);
    CHECK_EQ(strcmp(b.first, "OK"), 0);
    redis_nodes_cmd(rn, 0, out, sizeof out, "STRLEN", "it:socket:tls-big", (char *)NULL);
    CHECK_EQ(atol(out + 1), (long)big);
    redis_nodes_cmd(rn, 0, out, sizeof out, "DEL", "it:socket:tls-big", (char *)NULL);
    redlock_socket_deinit(&s);
    free(value);
}

/* redlock_socket_probe() over TLS: a TLS port resets a plain-text PING
   and answers a hello in TLS (the other protocol for a plain node); its
   plain-text port answers the PING (the other protocol for a TLS node). */
static void socket_tls_probe(void)
{
    redis_nodes *rn = &it_plain[1];
    redlock_node node;
    redlock_socket_probe_result r;
    memset(&node, 0, sizeof node);
    node.port = redis_nodes_tls_port(rn, 0);
    CHECK_EQ(redlock_socket_probe(&node, 0, 1000, &r), REDLOCK_OK);
    CHECK(r.silent == 1 && r.plain == 0 && r.tls == 1 && r.other == 1);
    CHECK_EQ(redlock_socket_probe(&node, 1, 1000, &r), REDLOCK_OK); /* a TLS node on its TLS port: not asked in TLS */
    CHECK(r.silent == 1 && r.plain == 0 && r.tls == 0 && r.other == 0);
    node.port = redis_nodes_port(rn, 0);
    CHECK_EQ(redlock_socket_probe(&node, 1, 1000, &r), REDLOCK_OK);
    CHECK(r.plain == 1 && r.tls == 0 && r.other == 1);
    CHECK_EQ(redlock_socket_probe(&node, 0, 1000, &r), REDLOCK_OK);
    CHECK(r.plain == 1 && r.tls == 0 && r.other == 0);
}

static void tls_more(void)
{
    if (it_selected("socket_tls_probe")) RUN(socket_tls_probe);
    if (it_selected("socket_tls_foreign_loop")) RUN(socket_tls_foreign_loop);
    if (it_selected("socket_tls_big_command")) RUN(socket_tls_big_command);
    if (it_selected("it_tls_sentinel")) RUN(it_tls_sentinel);
    if (it_selected("it_tls_cluster")) RUN(it_tls_cluster);
}
#endif

#ifdef IT_CLUSTER
/* Proves: the foreign loop's slots with a cluster node: fixed at init -
   the nodes', the subscribers', then REDLOCK_SOCKET_CLUSTER_CONNS - 1 more
   per cluster node, and as many further subscribers (sharded pub/sub: one
   per master); a lock on keys of two masters uses the cluster
   node's own slot and one of the further ones; without a cluster node
   the count is as it was (2 a node). */
static void socket_cluster_slots(void)
{
    redis_nodes plain;
    redlock_socket s;
    redlock_socket_config cfg;
    redlock_socket_lock l;
    redlock_lock_opts o;
    char keys[2][96];
    int k, m, used = 0;
    if (redis_nodes_start(&plain, 1, NULL, NULL) != 0) {
        CHECK(0);
        return;
    }
    redlock_socket_config_init(&cfg);
    cfg.node_count = 2;
    cfg.node[0].host = "127.0.0.1";
    cfg.node[0].port = redis_nodes_port(&plain, 0);
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_fd_count(&s), 4); /* 2 nodes (the second a plain 127.0.0.1:6379), 2 subscribers */
    redlock_socket_deinit(&s);
    cfg.node[1].kind = REDLOCK_NODE_CLUSTER;
    cfg.node[1].host = "127.0.0.1";
    cfg.node[1].port = redis_cluster_port(&it_cl, 0);
    cfg.node[1].seed_count = 1;
    cfg.node[1].seed[0].host = "127.0.0.1";
    cfg.node[1].seed[0].port = redis_cluster_port(&it_cl, 1);
    cfg.core.node_timeout_ms = 300;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_fd_count(&s), 4 + 2 * (REDLOCK_SOCKET_CLUSTER_CONNS - 1)); /* its commands, its subscribers */
    for (m = 0; m < 2; m++) {
        for (k = 0;; k++) { /* a key of master 0, then one of master 2 */
            unsigned slot;
            snprintf(keys[m], sizeof keys[m], "socket-cluster-slots-%d", k);
            slot = redlock_cluster_slot(keys[m], strlen(keys[m]));
            if (m == 0 ? (int)slot < redis_cluster_first_slot(&it_cl, 1) : (int)slot >= redis_cluster_first_slot(&it_cl, 2)) break;
        }
        memset(&o, 0, sizeof o);
        o.key = keys[m];
        o.ttl_ms = 2000;
        CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
        CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
        CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
        redlock_socket_lock_deinit(&l);
    }
    CHECK(redlock_socket_fd(&s, 0) >= 0); /* the plain node */
    CHECK(redlock_socket_fd(&s, 1) >= 0); /* the cluster node's own: its first master */
    for (k = 4; k < redlock_socket_fd_count(&s); k++) used += redlock_socket_fd(&s, k) >= 0;
    CHECK_EQ(used, 1); /* the second master's */
    CHECK_EQ(redlock_socket_fd(&s, redlock_socket_fd_count(&s)), -1);
    redlock_socket_deinit(&s);
    /* a cluster with a db: refused; over TLS: NO_TLS in this build (over TLS: it_tls_cluster) */
    cfg.node[1].db = 2;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.node[1].db = 0;
    cfg.node[1].tls.enable = 1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_NO_TLS);
    redis_nodes_stop(&plain);
}

static void cluster_more(void)
{
    if (it_selected("socket_cluster_slots")) RUN(socket_cluster_slots);
}
#endif

/* Proves, for the +switch-master watch: one whose sentinel answers what
   it did not ask for (a fake one, listed first) fails and opens again at
   the next sentinel a second later, which then tells the failover: a
   client that sends nothing still hears it (EV_NODE_RESTARTED, FAILOVER)
   and drops the former primary. */
static void it_sentinel_watch_next(void)
{
    redis_group g;
    hostile h;
    it_client *c = NULL;
    it_lock *l = NULL;
    it_setup st;
    redlock_lock_opts o;
    char list[256];
    long long t0;
    int heard = 0;
    if (hostile_start(&h, HOSTILE_CANNED, "+PONG\r\n") != 0) {
        CHECK(!"a fake sentinel started");
        return;
    }
    if (redis_group_start(&g, "rl-wn", 2) != 0) {
        CHECK(!"a Sentinel group started");
        hostile_stop(&h);
        return;
    }
    snprintf(list, sizeof list, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/rl-wn", h.port,
             redis_group_sentinel_port(&g, 0), redis_group_sentinel_port(&g, 1));
    memset(&st, 0, sizeof st);
    st.n = 1;
    st.nodes = list;
    st.core.node_timeout_ms = 500;
    st.core.retry_delay_ms = 100;
    c = it->open(&st);
    CHECK(c != NULL);
    if (!c) goto out;
    memset(&o, 0, sizeof o);
    o.key = "sent-wn";
    o.ttl_ms = 1000;
    o.retry_count = -1;
    l = it->lock(c, &o);
    CHECK(l != NULL);
    if (!l) goto out;
    CHECK_EQ(it->acquire(l, NULL), REDLOCK_OK); /* the fake sentinel names no primary: the next one does */
    CHECK_EQ(it->release(l, NULL), REDLOCK_OK);
    it->idle(c, 1500); /* the watch: refused by the fake one, then subscribed at the next */
    it_nrestarts = 0;
    CHECK(redis_group_failover(&g) > 0);
    t0 = it_now_ms();
    while (!(heard = it_restart_heard(c, 0, REDLOCK_RESTART_FAILOVER)) && it_now_ms() - t0 < 5000) it->idle(c, 20);
    CHECK(heard);
    CHECK(!it->node_connected(c, 0));
out:
    it_sent_close(c, l);
    redis_group_stop(&g);
    hostile_stop(&h);
}

int main(void)
{
    static const it_ops ops = {
        "socket", t_open, t_close, t_lock, t_unlock, t_acquire, t_release, t_extend,
        t_state, t_token, t_idle, t_node_status, t_mode_switches, t_lost, t_node_connected, t_node_error, 1, t_rw, t_reinit, t_core, 1,
        t_stats, t_stats_reset
    };
    int rc;
#if defined(IT_TLS) || defined(IT_CLUSTER)
    (void)socket_unix_select;
    (void)socket_status_after_restart;
    (void)socket_status_connect_words;
    (void)socket_probe;
    (void)socket_ipv6;
    (void)socket_blocking_call_in_callback;
    (void)socket_detached_while_waiting;
    (void)socket_reinit_while_waiting;
    (void)socket_fd_zero;
    (void)socket_legacy_cycles_leave_no_key;
    (void)socket_thread_job_n1;
    (void)socket_thread_job_n3;
    (void)socket_thread_lost_n1;
    (void)socket_thread_lost_n3;
    (void)socket_thread_woken;
    (void)socket_thread_refused;
#ifdef IT_CLUSTER
    (void)it_main;
    rc = it_main_cluster(&ops, cluster_more);
#else
    rc = it_main_tls(&ops, tls_more);
#endif
    return rc ? rc : CHECK_EXIT();
#endif
    redis_nodes_deadline(170);
    if (it_selected("socket_unix_select")) RUN(socket_unix_select);
    if (it_selected("socket_status_after_restart")) RUN(socket_status_after_restart);
    if (it_selected("socket_status_words")) RUN(socket_status_words);
    if (it_selected("socket_status_connect_words")) RUN(socket_status_connect_words);
    if (it_selected("socket_probe")) RUN(socket_probe);
    if (it_selected("socket_ipv6")) RUN(socket_ipv6);
    if (it_selected("socket_blocking_call_in_callback")) RUN(socket_blocking_call_in_callback);
    if (it_selected("socket_detached_while_waiting")) RUN(socket_detached_while_waiting);
    if (it_selected("socket_reinit_while_waiting")) RUN(socket_reinit_while_waiting);
    if (it_selected("socket_fd_zero")) RUN(socket_fd_zero);
    if (it_selected("socket_legacy_cycles_leave_no_key")) RUN(socket_legacy_cycles_leave_no_key);
    if (it_selected("socket_thread_job_n1")) RUN(socket_thread_job_n1);
    if (it_selected("socket_thread_job_n3")) RUN(socket_thread_job_n3);
    if (it_selected("socket_thread_lost_n1")) RUN(socket_thread_lost_n1);
    if (it_selected("socket_thread_lost_n3")) RUN(socket_thread_lost_n3);
    if (it_selected("socket_thread_woken")) RUN(socket_thread_woken);
    if (it_selected("socket_thread_refused")) RUN(socket_thread_refused);
    it_main_sentinel(&ops); /* a Sentinel group (integration.h) */
    IT_RUN(it_sentinel_switch, 1); /* its +switch-master watch */
    IT_RUN(it_sentinel_watch_next, 1); /* a watch that fails goes on at the next sentinel */
    rc = it_main(&ops);
    return rc ? rc : CHECK_EXIT();
}
