/* strict_loop.h - a strict foreign event loop for the raw-socket adapter's
   tests (test_socket_hostile.c, and test_socket.c over TLS). Include after
   adapters/redlock_socket.h and check.h. */
#ifndef STRICT_LOOP_H
#define STRICT_LOOP_H

#include <poll.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

static inline long long sl_ms_now(void) { return redlock_socket_now_us() / 1000; }

/* ---- a strict foreign loop: it knows only what the hooks told it ----
   Registrations come from cfg.watch alone (on Linux they live in an epoll
   set, which forgets a closed fd by itself, as in a real epoll loop), and
   the timer is one-shot: cfg.set_timer arms it, firing disarms it. The
   getters are never consulted, so a hook call the adapter leaves out
   shows as a loop that waits forever. */

#define SL_LOG 64

typedef struct sl {
    int fd[REDLOCK_MAX_NODES], interest[REDLOCK_MAX_NODES];
    int ep;                /* epoll set, or -1: poll() over fd[] */
    int ctl_errors;        /* epoll_ctl ADD / MOD refused */
    int log_fd[SL_LOG], log_interest[SL_LOG], nlog; /* watch calls for node 0 */
    int unchanged;         /* watch calls that changed neither fd nor interest */
    int untold;            /* readiness calls after which the timer hook's deadline
                              was not the adapter's next deadline */
    int armed, timer_calls;
    int64_t deadline;
    int early;             /* fire this many times well before the deadline */
    int early_fired;
    int64_t late_us;       /* fire this long after the deadline */
    int spurious;          /* also call on_timer on every round */
    int spurious_calls, spurious_bad; /* bad: no set_timer with the current deadline after it */
    int done, status;
} sl;

static inline void sl_watch(void *u, int node, int fd, int interest)
{
    sl *L = (sl *)u;
    if (node == 0 && L->nlog < SL_LOG) {
        L->log_fd[L->nlog] = fd;
        L->log_interest[L->nlog] = interest;
        L->nlog++;
    }
    if (L->fd[node] == fd && L->interest[node] == interest) L->unchanged++;
#ifdef __linux__
    if (L->ep >= 0) {
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = (uint32_t)(((interest & REDLOCK_SOCKET_READ) ? EPOLLIN : 0) |
                               ((interest & REDLOCK_SOCKET_WRITE) ? EPOLLOUT : 0));
        ev.data.u32 = (uint32_t)node;
        /* the old fd may be closed already: then epoll forgot it anyway */
        if (L->fd[node] >= 0 && L->fd[node] != fd) (void)epoll_ctl(L->ep, EPOLL_CTL_DEL, L->fd[node], NULL);
        if (fd >= 0 && epoll_ctl(L->ep, L->fd[node] == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0)
            L->ctl_errors++;
    }
#endif
    L->fd[node] = fd;
    L->interest[node] = interest;
}

static inline void sl_timer(void *u, int64_t d)
{
    sl *L = (sl *)u;
    L->timer_calls++;
    L->deadline = d;
    L->armed = d != REDLOCK_NO_DEADLINE;
}

static inline void sl_result(redlock_lock *lk, const redlock_result *r)
{
    sl *L = (sl *)r->user;
    (void)lk;
    L->done = (int)r->op;
    L->status = r->status;
}

/* The one-shot timer fires: disarmed first, as it would be in any loop. */
static inline void sl_fire(redlock_socket *s, sl *L)
{
    L->armed = 0;
    redlock_socket_on_timer(s);
}

/* on_timer without the timer having fired. */
static inline void sl_spurious(redlock_socket *s, sl *L)
{
    int before = L->timer_calls;
    L->spurious_calls++;
    redlock_socket_on_timer(s);
    if (L->timer_calls == before || L->deadline != redlock_socket_next_deadline(s)) L->spurious_bad++;
}

/* The loop's configuration for n nodes at host (NULL: the default) and
   ports; sl_open_cfg() opens it, for callers that change it first. */
static inline void sl_config(redlock_socket_config *cfg, sl *L, const char *host, const int *ports, int n)
{
    int i;
    redlock_socket_config_init(cfg);
    cfg->node_count = n;
    for (i = 0; i < n; i++) {
        if (host) cfg->node[i].host = host;
        cfg->node[i].port = ports[i];
    }
    /* generous: only the core's round (node_timeout_ms) is meant to end
       anything in these tests */
    cfg->connect_timeout_ms = 3000;
    cfg->command_timeout_ms = 3000;
    cfg->core.node_timeout_ms = 1000;
    cfg->core.retry_count = -1;
    cfg->watch = sl_watch;
    cfg->set_timer = sl_timer;
    cfg->user = L;
}

static inline int sl_open_cfg(redlock_socket *s, sl *L, const redlock_socket_config *cfg)
{
    int i;
    memset(L, 0, sizeof *L);
    L->deadline = REDLOCK_NO_DEADLINE; /* no set_timer call yet: nothing armed */
    for (i = 0; i < REDLOCK_MAX_NODES; i++) L->fd[i] = -1;
#ifdef __linux__
    L->ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(L->ep >= 0);
#else
    L->ep = -1;
#endif
    return redlock_socket_init(s, cfg);
}

static inline int sl_open(redlock_socket *s, sl *L, const char *host, const int *ports, int n)
{
    redlock_socket_config cfg;
    sl_config(&cfg, L, host, ports, n);
    return sl_open_cfg(s, L, &cfg);
}

static inline void sl_close(redlock_socket *s, sl *L)
{
    CHECK_EQ(L->unchanged, 0); /* watch is called when the fd or the interest changes */
    CHECK_EQ(L->untold, 0);    /* set_timer is called when the deadline changes */
    redlock_socket_deinit(s);
    if (L->ep >= 0) close(L->ep);
    L->ep = -1;
}

static inline int sl_lock(redlock_socket *s, sl *L, redlock_socket_lock *l, const char *key)
{
    redlock_lock_opts o;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    o.on_result = sl_result;
    o.user = L;
    return redlock_socket_lock_init(s, l, &o);
}

/* A readiness call: afterwards the timer hook knows the next deadline. */
static inline void sl_ready(redlock_socket *s, sl *L, int node, int writable, int readable)
{
    if (writable) {
        redlock_socket_on_writable(s, node);
        if (L->deadline != redlock_socket_next_deadline(s)) L->untold++;
    }
    if (readable) {
        redlock_socket_on_readable(s, node);
        if (L->deadline != redlock_socket_next_deadline(s)) L->untold++;
    }
}

/* Waits up to ms for what the registrations say, and hands it on. */
static inline void sl_wait(redlock_socket *s, sl *L, int n, int ms)
{
    int i;
#ifdef __linux__
    if (L->ep >= 0) {
        struct epoll_event ev[REDLOCK_MAX_NODES];
        int got = epoll_wait(L->ep, ev, REDLOCK_MAX_NODES, ms);
        for (i = 0; i < got; i++) {
            int node = (int)ev[i].data.u32;
            sl_ready(s, L, node, (ev[i].events & EPOLLOUT) != 0, (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0);
        }
        return;
    }
#endif
    {
        struct pollfd pf[REDLOCK_SOCKET_MAX_FDS];
        int map[REDLOCK_MAX_NODES], k = 0;
        for (i = 0; i < n; i++) {
            if (L->fd[i] < 0 || !L->interest[i]) continue;
            pf[k].fd = L->fd[i];
            pf[k].events = (short)(((L->interest[i] & REDLOCK_SOCKET_READ) ? POLLIN : 0) |
                                   ((L->interest[i] & REDLOCK_SOCKET_WRITE) ? POLLOUT : 0));
            pf[k].revents = 0;
            map[k++] = i;
        }
        if (poll(pf, (nfds_t)k, ms) > 0) {
            for (i = 0; i < k; i++)
                sl_ready(s, L, map[i], (pf[i].revents & POLLOUT) != 0, (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0);
        }
    }
}

/* Runs the loop until the lock's result for `op` (or max_ms). */
static inline void sl_run(redlock_socket *s, sl *L, int n, int op, int max_ms)
{
    long long until = sl_ms_now() + max_ms;
    L->done = 0;
    while (L->done != op && sl_ms_now() < until) {
        int64_t now = redlock_socket_now_us();
        int ms = 50;
        if (L->early > 0 && L->armed && now + 20000 < L->deadline) { /* 20 ms early at least */
            L->early--;
            L->early_fired++;
            sl_fire(s, L);
        }
        if (L->armed) { /* (not armed: the deadline may be REDLOCK_NO_DEADLINE) */
            int64_t due = L->deadline + L->late_us;
            ms = due <= now ? 0 : (due - now) / 1000 >= 50 ? 50 : (int)((due - now) / 1000 + 1);
        }
        sl_wait(s, L, n, ms);
        if (L->armed && redlock_socket_now_us() >= L->deadline + L->late_us) sl_fire(s, L);
        if (L->spurious) sl_spurious(s, L);
    }
}

#endif /* STRICT_LOOP_H */
