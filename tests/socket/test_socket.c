/* Integration tests of adapters/redlock_socket.h (raw sockets, own RESP
   parser) against real redis-servers on 1, 3 and 5 nodes, started and
   stopped by PID by tests/shared/redis_nodes.h. Scenarios: tests/shared/integration.h
   (acquire/release/extend, contention, threads, expiry, watchdog past the
   TTL, stolen lock, node killed, node paused with SIGSTOP, AUTH and wrong
   password, ACL user without scripting -> fallback). The "watchdog" here
   is the adapter's poll loop: idle() runs redlock_socket_run(). Plus a
   Unix-socket node and SELECT, and node_status across a node restart. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "integration.h"

struct it_client {
    redlock_socket s;
    int switches;
    int64_t linger_ms;
};

struct it_lock {
    redlock_socket_lock l;
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

static it_client *t_open(const it_setup *st)
{
    redlock_socket_config cfg;
    int i;
    it_client *c = (it_client *)calloc(1, sizeof *c);
    if (!c) return NULL;
    redlock_socket_config_init(&cfg);
    cfg.node_count = st->n;
    for (i = 0; i < st->n; i++) {
        cfg.node[i].host = "127.0.0.1";
        cfg.node[i].port = st->ports[i];
        cfg.node[i].username = st->user;
        cfg.node[i].password = st->pass;
        cfg.node[i].db = st->db;
    }
    it_tls_config(st, &cfg.tls);
    cfg.core = st->core;
    cfg.notify_off = st->notify_off;
    cfg.connect_timeout_ms = 300;
    cfg.command_timeout_ms = 300;
    cfg.on_event = t_on_event;
    cfg.user = c;
    c->linger_ms = st->core.node_timeout_ms > 0 ? st->core.node_timeout_ms : 50;
    if (redlock_socket_init(&c->s, &cfg) != REDLOCK_OK) {
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

/* Lets replies still owed by slower nodes be handled, as a program whose
   loop keeps running would. */
static void t_linger(it_client *c)
{
    int64_t until = redis_nodes__now_ms() + c->linger_ms;
    while (redlock_socket_pending(&c->s) > 0 && redis_nodes__now_ms() < until) redlock_socket_run(&c->s, 2);
}

static int t_done(it_lock *l, int rc, redlock_result *r)
{
    t_linger(l->c);
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
static redlock_state t_state(it_lock *l) { return redlock_lock_state(&l->l.lock); }
static const char *t_token(it_lock *l) { return redlock_lock_token(&l->l.lock); }
static redlock_lock *t_core(it_lock *l) { return &l->l.lock; }
static void t_idle(it_client *c, int ms) { redlock_socket_run(&c->s, ms); }
static int t_node_status(it_client *c, int i) { return redlock_socket_node_status(&c->s, i, NULL, 0); }
static int t_node_connected(it_client *c, int i) { return redlock_socket_node_connected(&c->s, i); }
/* this adapter keeps no error text: the status's own words */
static int t_node_error(it_client *c, int i, char *buf, size_t n)
{
    return redlock_socket_node_status(&c->s, i, buf, n);
}
static int t_mode_switches(it_client *c) { return c->switches; }
static int t_lost(it_lock *l)
{
    /* a loss reported outside a blocking call is the lock's last result
       (the scenarios ask right after it, before another call on the lock) */
    if (l->lost > 0) CHECK_EQ((int)redlock_socket_last_result(&l->l)->op, (int)REDLOCK_OP_LOST);
    return l->lost;
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
    cfg.connect_timeout_ms = 1000;
    cfg.command_timeout_ms = 1000;
    cfg.core.node_timeout_ms = 500;
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
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redis_nodes_stop(&rn);
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
    cfg.command_timeout_ms = 5000;
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
    until = it_now_ms() + 10000;
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

static void tls_more(void)
{
    if (it_selected("socket_tls_foreign_loop")) RUN(socket_tls_foreign_loop);
    if (it_selected("socket_tls_big_command")) RUN(socket_tls_big_command);
}
#endif

int main(void)
{
    static const it_ops ops = {
        "socket", t_open, t_close, t_lock, t_unlock, t_acquire, t_release, t_extend,
        t_state, t_token, t_idle, t_node_status, t_mode_switches, t_lost, t_node_connected, t_node_error, 1, t_rw, t_reinit, t_core
    };
    int rc;
#ifdef IT_TLS
    (void)socket_unix_select;
    (void)socket_status_after_restart;
    (void)socket_ipv6;
    (void)socket_blocking_call_in_callback;
    (void)socket_detached_while_waiting;
    (void)socket_reinit_while_waiting;
    (void)socket_fd_zero;
    (void)socket_legacy_cycles_leave_no_key;
    rc = it_main_tls(&ops, tls_more);
    return rc ? rc : CHECK_EXIT();
#endif
    redis_nodes_deadline(170);
    if (it_selected("socket_unix_select")) RUN(socket_unix_select);
    if (it_selected("socket_status_after_restart")) RUN(socket_status_after_restart);
    if (it_selected("socket_ipv6")) RUN(socket_ipv6);
    if (it_selected("socket_blocking_call_in_callback")) RUN(socket_blocking_call_in_callback);
    if (it_selected("socket_detached_while_waiting")) RUN(socket_detached_while_waiting);
    if (it_selected("socket_reinit_while_waiting")) RUN(socket_reinit_while_waiting);
    if (it_selected("socket_fd_zero")) RUN(socket_fd_zero);
    if (it_selected("socket_legacy_cycles_leave_no_key")) RUN(socket_legacy_cycles_leave_no_key);
    rc = it_main(&ops);
    return rc ? rc : CHECK_EXIT();
}
