/* Integration tests of adapters/redlock_libev.h against real redis-servers
   (1, 3 and 5 nodes). Scenarios: tests/shared/integration.h. Each client has its
   own ev_loop; the blocking calls the scenarios need run that loop until
   the result arrives. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_libev.h"
#include "integration.h"

struct it_client {
    redlock_libev c;
    struct ev_loop *loop;
    int switches;
    int64_t linger_ms;
};

struct it_lock {
    redlock_lock l;
    it_client *c;
    int waiting, done, lost;
    redlock_result result;
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
    if (l->waiting && (int)r->op == l->waiting) {
        l->result = *r;
        l->done = 1;
        l->waiting = 0;
    }
}

static void t_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    *(int *)w->data = 1;
}

static int t_inflight(const it_client *c)
{
    int i, j, k = 0;
    for (i = 0; i < c->c._n; i++) {
        k += c->c._conn[i].ac ? c->c._conn[i].q.count : 0;
        for (j = 0; c->c._links[i] && j < REDLOCK__HIREDIS_LINKS; j++) /* a cluster's */
            k += c->c._links[i][j].ac ? c->c._links[i][j].q.count : 0;
    }
    return k;
}

/* Runs the loop until *flag is set or max_ms passed. */
static void t_run(it_client *c, const int *flag, int64_t max_ms)
{
    int fired = 0;
    ev_timer guard;
    ev_timer_init(&guard, t_guard, max_ms / 1000.0, 0.);
    guard.data = &fired;
    ev_timer_start(c->loop, &guard);
    while (!fired && !(flag && *flag)) ev_run(c->loop, EVRUN_ONCE);
    ev_timer_stop(c->loop, &guard);
}

/* Lets replies still owed (follow-up steps for slower nodes) be handled,
   as a program whose loop keeps running would. */
static void t_linger(it_client *c)
{
    int64_t until = redis_nodes__now_ms() + c->linger_ms;
    while (t_inflight(c) > 0 && redis_nodes__now_ms() < until) {
        int fired = 0;
        ev_timer guard;
        ev_timer_init(&guard, t_guard, (until - redis_nodes__now_ms()) / 1000.0, 0.);
        guard.data = &fired;
        ev_timer_start(c->loop, &guard);
        ev_run(c->loop, EVRUN_ONCE);
        ev_timer_stop(c->loop, &guard);
    }
}

static it_client *t_open(const it_setup *s)
{
    redlock_libev_config o;
    int i, rc;
    void *mem = NULL;
    char err[256];
    it_client *c = (it_client *)calloc(1, sizeof *c);
    if (!c) return NULL;
    c->loop = ev_loop_new(EVFLAG_AUTO);
    if (!c->loop) {
        free(c);
        return NULL;
    }
    redlock_libev_config_init(&o);
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
        ev_loop_destroy(c->loop);
        free(c);
        return NULL;
    }
    o.username = s->user;
    o.password = s->pass;
    o.db = s->db;
    it_tls_config(s, &o.tls);
    o.core = s->core;
    o.notify_off = s->notify_off;
    o.command_timeout_ms = 300;
    o.on_event = t_on_event;
    o.user = c;
    c->linger_ms = s->core.node_timeout_ms > 0 ? s->core.node_timeout_ms : 50;
    rc = redlock_libev_init(&c->c, c->loop, &o);
    redlock_free_nodes(mem);
    if (rc != REDLOCK_OK) {
        ev_loop_destroy(c->loop);
        free(c);
        return NULL;
    }
    /* let the connections (and AUTH) complete; a Sentinel group's: until it
       connects or says why not (its sentinels asked first) */
    for (i = 0; i < 100; i++) {
        int k, up = 0;
        for (k = 0; k < o.node_count; k++)
            up += redlock_libev_node_connected(&c->c, k) ||
                  redlock_libev_node_status(&c->c, k, NULL, 0) == REDLOCK_ERR_AUTH ||
                  ((s->nodes || s->sentinel) && redlock_libev_node_status(&c->c, k, NULL, 0) != 0);
        if (up == o.node_count && t_inflight(c) == 0) break;
        t_run(c, NULL, 5);
    }
    return c;
}

static void t_close(it_client *c)
{
    redlock_libev_deinit(&c->c);
    ev_loop_destroy(c->loop);
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
    if (redlock_libev_lock_init(&c->c, &l->l, &lo) != REDLOCK_OK) {
        free(l);
        return NULL;
    }
    return l;
}

static void t_unlock(it_lock *l)
{
    redlock_lock_deinit(&l->l);
    free(l);
}

static int t_reinit(it_lock *l, const redlock_lock_opts *o)
{
    redlock_lock_opts lo = *o;
    lo.on_result = t_on_result;
    lo.user = l;
    l->lost = 0;
    l->waiting = l->done = 0;
    return redlock_libev_lock_init(&l->c->c, &l->l, &lo);
}

static int t_op(it_lock *l, int op, int64_t ttl, redlock_result *r)
{
    int rc;
    l->waiting = op;
    l->done = 0;
    memset(&l->result, 0, sizeof l->result);
    if (op == REDLOCK_OP_ACQUIRE) rc = redlock_acquire(&l->l);
    else if (op == REDLOCK_OP_RELEASE) rc = redlock_release(&l->l);
    else if (op == REDLOCK_OP_UPGRADE) rc = redlock_upgrade(&l->l);
    else if (op == REDLOCK_OP_DOWNGRADE) rc = redlock_downgrade(&l->l);
    else rc = redlock_extend(&l->l, ttl);
    if (rc != REDLOCK_OK) {
        l->waiting = 0;
        return rc;
    }
    t_run(l->c, &l->done, 20000);
    if (!l->done) {
        l->waiting = 0;
        l->result.status = REDLOCK_ERR_TIMEOUT;
        printf("#   no result within 20 s\n");
    }
    t_linger(l->c);
    if (r) *r = l->result;
    return l->result.status;
}

static int t_acquire(it_lock *l, redlock_result *r) { return t_op(l, REDLOCK_OP_ACQUIRE, 0, r); }
static int t_release(it_lock *l, redlock_result *r) { return t_op(l, REDLOCK_OP_RELEASE, 0, r); }
static int t_extend(it_lock *l, int64_t ttl, redlock_result *r) { return t_op(l, REDLOCK_OP_EXTEND, ttl, r); }
static int t_rw(it_lock *l, int op, redlock_result *r) { return t_op(l, op, 0, r); }
static redlock_state t_state(it_lock *l) { return redlock_lock_state(&l->l); }
static const char *t_token(it_lock *l) { return redlock_lock_token(&l->l); }
static redlock_lock *t_core(it_lock *l) { return &l->l; }
static void t_idle(it_client *c, int ms) { t_run(c, NULL, ms); }
static int t_stats(it_client *c, redlock_adapter_stats *out) { return redlock_libev_stats(&c->c, out); }
static void t_stats_reset(it_client *c) { redlock_libev_stats_reset(&c->c); }
static int t_node_status(it_client *c, int i) { return redlock_libev_node_status(&c->c, i, NULL, 0); }
static int t_node_connected(it_client *c, int i) { return redlock_libev_node_connected(&c->c, i); }
static int t_node_error(it_client *c, int i, char *buf, size_t n) { return redlock_libev_node_status(&c->c, i, buf, n); }
static int t_mode_switches(it_client *c) { return c->switches; }
static int t_lost(it_lock *l) { return l->lost; }

/* Proves: a port outside 1..65535 is refused at init (0 means 6379), and
   so is a cluster with a db; a Sentinel group and a cluster are served,
   over TLS too (NO_TLS in a build without it; over TLS: it_tls_sentinel,
   it_tls_cluster). */
static void libev_port_range(void)
{
    static const int bad[] = { 70000, 65536, -1 };
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev c;
    redlock_libev_config o;
    size_t k;
    redlock_libev_config_init(&o);
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        o.node[0].port = bad[k];
        CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_ERR_INVALID);
    }
    o.node[0].port = 26379;
    o.node[0].kind = REDLOCK_NODE_SENTINEL;
    o.node[0].master = "mymaster";
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_OK); /* served: its sentinels asked on the loop */
    redlock_libev_deinit(&c);
    o.node[0].tls.enable = 1; /* over TLS: as TLS is built in */
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK__HIREDIS_HAS_TLS ? REDLOCK_OK : REDLOCK_ERR_NO_TLS);
    if (REDLOCK__HIREDIS_HAS_TLS) redlock_libev_deinit(&c);
    o.node[0].tls.enable = 0;
    o.node[0].kind = REDLOCK_NODE_CLUSTER; /* served (its seed is not asked before a command) */
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_OK);
    redlock_libev_deinit(&c);
    o.tls.enable = 1; /* over TLS, from the configuration */
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK__HIREDIS_HAS_TLS ? REDLOCK_OK : REDLOCK_ERR_NO_TLS);
    if (REDLOCK__HIREDIS_HAS_TLS) redlock_libev_deinit(&c);
    o.tls.enable = 0;
    o.node[0].db = 2; /* a cluster has db 0 only */
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_ERR_INVALID);
    o.node[0].db = 0;
    o.node[0].kind = REDLOCK_NODE_SERVER;
    o.node[0].master = NULL;
    o.node[0].port = 0;
    o.node_count = 0;
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_ERR_NODES);
    o.node_count = REDLOCK_MAX_NODES + 1;
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_ERR_NODES);
    ev_loop_destroy(loop);
}

/* Proves: a node on a Unix socket (unix_path), with the config's db, and the
   documented defaults of the config. */
static void libev_unix_path(void)
{
    redis_nodes rn;
    char dir[] = "/tmp/redlock-esock-XXXXXX", path[128], out[128];
    redlock_libev_config o;
    it_client *c;
    it_lock l;
    redlock_lock_opts lo;
    if (redis_nodes_start_unix(&rn, dir, path, sizeof path) != 0) { CHECK(0); return; }
    c = (it_client *)calloc(1, sizeof *c);
    CHECK(c != NULL);
    c->loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config_init(&o);
    CHECK_EQ(o.command_timeout_ms, 1000);
    CHECK_EQ(o.reconnect_delay_ms, 100);
    o.node_count = 1;
    o.node[0].unix_path = path;
    o.db = 5;
    CHECK_EQ(redlock_libev_init(&c->c, c->loop, &o), REDLOCK_OK);
    memset(&l, 0, sizeof l);
    l.c = c;
    memset(&lo, 0, sizeof lo);
    lo.key = "libev-unix";
    lo.ttl_ms = 5000;
    lo.on_result = t_on_result;
    lo.user = &l;
    CHECK_EQ(redlock_lock_init(&l.l, redlock_libev_client(&c->c), &lo), REDLOCK_OK);
    CHECK_EQ(t_acquire(&l, NULL), REDLOCK_OK);
    redis_nodes_cmd(&rn, 0, out, sizeof out, "EVAL", "redis.call('SELECT', 5) return redis.call('GET', KEYS[1])",
                    "1", "libev-unix", (char *)NULL);
    CHECK_STR(out, redlock_lock_token(&l.l));
    CHECK_EQ(t_release(&l, NULL), REDLOCK_OK);
    redlock_lock_deinit(&l.l);
    t_close(c);
    redis_nodes_stop_unix(&rn, dir, path);
}

/* Proves: a connect that never completes (the listener's accept queue is
   full) fails as CONNECT "connect timed out" after connect_timeout_ms, and
   the watchdog thread option is refused (the loop is the caller's). */
static void libev_connect_timeout(void)
{
    redlock_libev_config o;
    it_client *c;
    char err[64];
    long long t0, t1;
    int lfd, filler, k, port = hostile_full_backlog(&lfd, &filler);
    CHECK(port > 0);
    c = (it_client *)calloc(1, sizeof *c);
    CHECK(c != NULL);
    c->loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config_init(&o);
    CHECK_EQ(o.connect_timeout_ms, 1000);
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    o.node[0].port = port;
    o.watchdog_thread = 1;
    CHECK_EQ(redlock_libev_init(&c->c, c->loop, &o), REDLOCK_ERR_INVALID);
    o.watchdog_thread = 0;
    o.connect_timeout_ms = 200;
    o.reconnect_delay_ms = 5000; /* no second connect within the test */
    t0 = redis_nodes__now_ms();
    CHECK_EQ(redlock_libev_init(&c->c, c->loop, &o), REDLOCK_OK);
    for (k = 0; k < 300 && redlock_libev_node_status(&c->c, 0, NULL, 0) == 0; k++) t_run(c, NULL, 10);
    t1 = redis_nodes__now_ms();
    CHECK_EQ(redlock_libev_node_status(&c->c, 0, err, sizeof err), REDLOCK_ERR_CONNECT);
    CHECK_STR(err, "connect timed out");
    CHECK(t1 - t0 >= 150 && t1 - t0 < 2000);
    CHECK(!redlock_libev_node_connected(&c->c, 0));
    t_close(c);
    close(filler);
    close(lfd);
}

/* Proves: a node whose server goes away while idle reads TRANSPORT (not
   CONNECT: the connection was up) with hiredis's message, until the next
   connect attempt. */
static void libev_disconnect_status(void)
{
    redis_nodes rn;
    redlock_libev_config o;
    it_client *c;
    char err[128];
    int k;
    CHECK_EQ(redis_nodes_start(&rn, 1, NULL, NULL), 0);
    c = (it_client *)calloc(1, sizeof *c);
    CHECK(c != NULL);
    c->loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev_config_init(&o);
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    o.node[0].port = redis_nodes_port(&rn, 0);
    o.reconnect_delay_ms = 5000; /* no second connect within the test */
    CHECK_EQ(redlock_libev_init(&c->c, c->loop, &o), REDLOCK_OK);
    for (k = 0; k < 300 && !redlock_libev_node_connected(&c->c, 0); k++) t_run(c, NULL, 10);
    CHECK(redlock_libev_node_connected(&c->c, 0));
    redis_node_kill(&rn, 0);
    for (k = 0; k < 300 && redlock_libev_node_status(&c->c, 0, NULL, 0) == 0; k++) t_run(c, NULL, 10);
    err[0] = 0;
    CHECK_EQ(redlock_libev_node_status(&c->c, 0, err, sizeof err), REDLOCK_ERR_TRANSPORT);
    CHECK(err[0] != 0);
    CHECK(!redlock_libev_node_connected(&c->c, 0));
    t_close(c);
    redis_nodes_stop(&rn);
}

/* Proves: the getters refuse what is not theirs (NULL, a node out of
   range) with the documented values, and the error text is cut to the
   buffer and terminated. */
static void libev_api_guards(void)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    redlock_libev c;
    redlock_libev_config o;
    char buf[8];
    int k;
    redlock_libev_config_init(&o);
    o.node_count = 2;
    o.node[0].host = o.node[1].host = "127.0.0.1";
    o.node[0].port = o.node[1].port = hostile_closed_port();
    CHECK_EQ(redlock_libev_init(NULL, loop, &o), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_libev_init(&c, NULL, &o), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_libev_init(&c, loop, NULL), REDLOCK_ERR_INVALID);
    for (k = 0; k < 3; k++) { /* a negative timeout or delay */
        redlock_libev_config bad = o;
        if (k == 0) bad.connect_timeout_ms = -1;
        if (k == 1) bad.command_timeout_ms = -1;
        if (k == 2) bad.reconnect_delay_ms = -1;
        CHECK_EQ(redlock_libev_init(&c, loop, &bad), REDLOCK_ERR_INVALID);
    }
    CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK_OK);
    for (k = 0; k < 100 && redlock_libev_node_status(&c, 1, NULL, 0) == 0; k++) ev_run(loop, EVRUN_ONCE);
    CHECK_EQ(redlock_libev_node_status(NULL, 0, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_libev_node_status(&c, -1, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_libev_node_status(&c, 2, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_libev_node_connected(&c, 2), 0);
    {   /* at the maximum node count, the first index past it is refused too
           (the ASan build sees any read past the node array) */
        static redlock_libev c16;
        redlock_libev_config o16 = o;
        int j;
        o16.node_count = REDLOCK_MAX_NODES;
        for (j = 0; j < REDLOCK_MAX_NODES; j++) o16.node[j] = o.node[0];
        CHECK_EQ(redlock_libev_init(&c16, loop, &o16), REDLOCK_OK);
        CHECK_EQ(redlock_libev_node_connected(&c16, REDLOCK_MAX_NODES), 0);
        CHECK_EQ(redlock_libev_node_status(&c16, REDLOCK_MAX_NODES, NULL, 0), REDLOCK_ERR_INVALID);
        redlock_libev_deinit(&c16);
    }
    CHECK_EQ(redlock_libev_node_connected(&c, -1), 0);
    CHECK_EQ(redlock_libev_node_connected(NULL, 0), 0);
    memset(buf, 'z', sizeof buf);
    CHECK_EQ(redlock_libev_node_status(&c, 1, buf, 4), REDLOCK_ERR_CONNECT);
    CHECK_EQ(strlen(buf), 3);
    CHECK_EQ(buf[4], 'z');
    {   /* a buffer exactly the text's length: one character less, terminated */
        char full[128], exact[128];
        size_t len;
        CHECK_EQ(redlock_libev_node_status(&c, 1, full, sizeof full), REDLOCK_ERR_CONNECT);
        len = strlen(full);
        CHECK(len > 1 && len < sizeof exact);
        memset(exact, 'z', sizeof exact);
        CHECK_EQ(redlock_libev_node_status(&c, 1, exact, len), REDLOCK_ERR_CONNECT);
        CHECK_EQ(strlen(exact), len - 1);
        CHECK_EQ(exact[len], 'z');
    }
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
}

/* Without TLS built in (REDLOCK_HIREDIS_TLS on hiredis 1.x), a node
   that asks for TLS, or a configuration that does, is refused at init
   with REDLOCK_ERR_NO_TLS: never spoken to in plain text. */
static void libev_tls_not_built(void)
{
    redlock_libev_config o;
    static redlock_libev c;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    int k;
    for (k = 0; k < 2; k++) {
        redlock_libev_config_init(&o);
        o.node_count = 2;
        o.node[0].port = 6379;
        o.node[1].port = 6380;
        if (k == 0) o.tls.enable = 1;
        else o.node[1].tls.enable = 1;
        CHECK_EQ(redlock_libev_init(&c, loop, &o), REDLOCK__HIREDIS_HAS_TLS ? REDLOCK_OK : REDLOCK_ERR_NO_TLS);
        if (REDLOCK__HIREDIS_HAS_TLS) redlock_libev_deinit(&c);
    }
    ev_loop_destroy(loop);
}

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
        "libev", t_open, t_close, t_lock, t_unlock, t_acquire, t_release, t_extend,
        t_state, t_token, t_idle, t_node_status, t_mode_switches, t_lost, t_node_connected, t_node_error, 1, t_rw, t_reinit, t_core, 1,
        t_stats, t_stats_reset
    };
    int rc;
#ifdef IT_CLUSTER /* a Redis Cluster node: the shared cluster scenarios */
    (void)it_main;
    rc = it_main_cluster(&ops, NULL);
    return rc | CHECK_EXIT();
#endif
#ifdef IT_TLS /* built with REDLOCK_HIREDIS_TLS on hiredis 1.x: the TLS scenarios, a TLS Sentinel group's and cluster's too */
    rc = it_main_tls(&ops, tls_more);
    return rc | CHECK_EXIT();
#endif
    if (it_selected("libev_port_range")) RUN(libev_port_range);
    if (it_selected("libev_tls_not_built")) RUN(libev_tls_not_built);
    if (it_selected("libev_api_guards")) RUN(libev_api_guards);
    if (it_selected("libev_unix_path")) RUN(libev_unix_path);
    if (it_selected("libev_connect_timeout")) RUN(libev_connect_timeout);
    if (it_selected("libev_disconnect_status")) RUN(libev_disconnect_status);
    it_main_sentinel(&ops); /* a Sentinel group (integration.h) */
    IT_RUN(it_sentinel_switch, 1); /* its +switch-master watch */
    rc = it_main(&ops);
    return rc | CHECK_EXIT();
}
