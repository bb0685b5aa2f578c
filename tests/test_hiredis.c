/* Integration tests of adapters/redlock_hiredis.h against real redis-servers
   (1, 3 and 5 nodes). Scenarios: tests/integration.h. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "integration.h"

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
    if (r->op == REDLOCK_OP_LOST) l->lost++;
}

static it_client *t_open(const it_setup *s)
{
    redlock_hiredis_opts o;
    int i;
    it_client *c = (it_client *)calloc(1, sizeof *c);
    if (!c) return NULL;
    redlock_hiredis_opts_init(&o);
    o.node_count = s->n;
    for (i = 0; i < s->n; i++) {
        o.node[i].host = "127.0.0.1";
        o.node[i].port = s->ports[i];
    }
    o.username = s->user;
    o.password = s->pass;
    o.db = s->db;
    o.core = s->core;
    o.command_timeout_ms = 300;
    o.watchdog_thread = s->watchdog_thread;
    o.on_event = t_on_event;
    o.user = c;
    if (redlock_hiredis_init(&c->h, &o) != REDLOCK_OK) {
        free(c);
        return NULL;
    }
    return c;
}

static void t_close(it_client *c)
{
    redlock_hiredis_free(&c->h);
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
    if (redlock_hiredis_lock_init(&l->l, &c->h, &lo) != REDLOCK_OK) {
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

static int t_acquire(it_lock *l, redlock_result *r) { return redlock_hiredis_acquire(&l->l, r); }
static int t_release(it_lock *l, redlock_result *r) { return redlock_hiredis_release(&l->l, r); }
static int t_extend(it_lock *l, int64_t ttl, redlock_result *r) { return redlock_hiredis_extend(&l->l, ttl, r); }
static redlock_state t_state(it_lock *l) { return redlock_hiredis_lock_state(&l->l); }
static const char *t_token(it_lock *l) { return redlock_lock_token(&l->l.core); }

static void t_idle(it_client *c, int ms)
{
    if (c->h.threaded) redis_nodes__sleep_ms(ms);
    else redlock_hiredis_poll(&c->h, ms);
}

static int t_node_status(it_client *c, int i) { return redlock_hiredis_node_status(&c->h, i, NULL, 0); }

static int t_mode_switches(it_client *c)
{
    int n;
    if (c->h.threaded) pthread_mutex_lock(&c->h.mu);
    n = c->switches;
    if (c->h.threaded) pthread_mutex_unlock(&c->h.mu);
    return n;
}

static int t_lost(it_lock *l)
{
    int n;
    if (l->c->h.threaded) pthread_mutex_lock(&l->c->h.mu);
    n = l->lost;
    if (l->c->h.threaded) pthread_mutex_unlock(&l->c->h.mu);
    return n;
}

int main(void)
{
    static const it_ops ops = {
        "hiredis", t_open, t_close, t_lock, t_unlock, t_acquire, t_release, t_extend,
        t_state, t_token, t_idle, t_node_status, t_mode_switches, t_lost
    };
    return it_main(&ops);
}
