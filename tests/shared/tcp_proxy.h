/* tcp_proxy.h - a TCP relay that injects network faults, for tests.

   One forked process relays 127.0.0.1:<listen port of route i> to
   127.0.0.1:<upstream port i> for up to TCP_PROXY_MAX_ROUTES routes (one
   per Redis node, say). The test changes a route's faults at any time
   through a shared memory page that the relay reads every 2 ms:

       tcp_proxy p;
       int up[3] = { 7000, 7001, 7002 };
       if (tcp_proxy_start(&p, 3, up) != 0) { ... }
       ... connect clients to p.port[i] ...
       tcp_proxy_latency(&p, 1, 30);     // every chunk, both ways, 30 ms late
       tcp_proxy_blackhole(&p, 2, 1);    // a partition: nothing moves, both
                                         //  ways, until blackhole(&p, 2, 0)
       tcp_proxy_cut_reply(&p, 0);       // the next reply on each connection
                                         //  of route 0 stops half-way, and
                                         //  the connection is closed
       tcp_proxy_reset(&p, 0);           // every connection of route 0 is
                                         //  reset (RST) now
       tcp_proxy_stop(&p);

   A black hole stalls the bytes rather than dropping them: TCP never loses
   the middle of a stream, it stops delivering (and the bytes move again
   if the partition heals before either side gives up). A connection whose
   upstream refuses (the node is down) is closed at once.

   The relay is single-threaded (poll), holds at most TCP_PROXY_MAX_CONNS
   connections and TCP_PROXY_BUF bytes per direction of each, dies with
   its parent (PR_SET_PDEATHSIG on Linux) and after TCP_PROXY_MAX_S
   seconds in any case. POSIX, static inline, no dependency beyond libc. */
#ifndef TCP_PROXY_H
#define TCP_PROXY_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#ifndef TCP_PROXY_MAX_ROUTES
#define TCP_PROXY_MAX_ROUTES 16
#endif
#ifndef TCP_PROXY_MAX_CONNS
#define TCP_PROXY_MAX_CONNS 256
#endif
#ifndef TCP_PROXY_BUF
#define TCP_PROXY_BUF 65536
#endif
#ifndef TCP_PROXY_MAX_S
#define TCP_PROXY_MAX_S 3600
#endif
#define TCP_PROXY__CHUNKS 64 /* delayed chunks queued per direction */

/* One route's faults, written by the test, read by the relay. */
typedef struct tcp_proxy_route {
    volatile int latency_ms;
    volatile int blackhole;
    volatile unsigned cut_gen;   /* raised by tcp_proxy_cut_reply() */
    volatile unsigned reset_gen; /* raised by tcp_proxy_reset() */
    volatile long accepted;      /* counters, written by the relay */
    volatile long cut, reset, refused;
} tcp_proxy_route;

typedef struct tcp_proxy {
    pid_t pid;
    int n;
    int port[TCP_PROXY_MAX_ROUTES];     /* where clients connect */
    int upstream[TCP_PROXY_MAX_ROUTES];
    tcp_proxy_route *route;             /* shared with the relay */
} tcp_proxy;

static inline void tcp_proxy_latency(tcp_proxy *p, int i, int ms) { p->route[i].latency_ms = ms < 0 ? 0 : ms; }
static inline void tcp_proxy_blackhole(tcp_proxy *p, int i, int on) { p->route[i].blackhole = on != 0; }
static inline void tcp_proxy_cut_reply(tcp_proxy *p, int i) { p->route[i].cut_gen++; }
static inline void tcp_proxy_reset(tcp_proxy *p, int i) { p->route[i].reset_gen++; }

/* ---- the relay ---- */

/* Bytes read from one side, waiting to be written to the other: a byte
   buffer plus the due time of each chunk read (latency). */
typedef struct tcp_proxy__dir {
    char buf[TCP_PROXY_BUF];
    size_t head, len;                   /* unsent bytes: buf[head .. head+len) */
    size_t chunk_len[TCP_PROXY__CHUNKS];
    long long chunk_due[TCP_PROXY__CHUNKS];
    int chunk_first, chunk_count;
    int eof;                            /* the reading side closed */
} tcp_proxy__dir;

typedef struct tcp_proxy__conn {
    int route;
    int cfd, ufd;                       /* client side, upstream side */
    unsigned cut_seen, reset_seen;
    tcp_proxy__dir up, down;            /* client->upstream, upstream->client */
} tcp_proxy__conn;

static inline long long tcp_proxy__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void tcp_proxy__hard_close(int fd)
{
    struct linger lg;
    lg.l_onoff = 1;
    lg.l_linger = 0;
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static inline int tcp_proxy__dial(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) { /* loopback: refused at once */
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Reads what fits from fd into d; the chunk is due after latency_ms. */
static inline int tcp_proxy__fill(int fd, tcp_proxy__dir *d, int latency_ms)
{
    size_t tail = (d->head + d->len) % TCP_PROXY_BUF;
    size_t room = TCP_PROXY_BUF - d->len, span = TCP_PROXY_BUF - tail;
    ssize_t r;
    if (room == 0 || d->chunk_count == TCP_PROXY__CHUNKS) return 0;
    r = recv(fd, d->buf + tail, room < span ? room : span, 0);
    if (r == 0) {
        d->eof = 1;
        return 0;
    }
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    {
        int k = (d->chunk_first + d->chunk_count) % TCP_PROXY__CHUNKS;
        d->chunk_len[k] = (size_t)r;
        d->chunk_due[k] = tcp_proxy__now_ms() + latency_ms;
        d->chunk_count++;
    }
    d->len += (size_t)r;
    return 0;
}

/* Bytes of d that are due now (the whole first chunks that are due). */
static inline size_t tcp_proxy__due(const tcp_proxy__dir *d, long long now)
{
    size_t n = 0;
    int i;
    for (i = 0; i < d->chunk_count; i++) {
        int k = (d->chunk_first + i) % TCP_PROXY__CHUNKS;
        if (d->chunk_due[k] > now) break;
        n += d->chunk_len[k];
    }
    return n;
}

static inline void tcp_proxy__consume(tcp_proxy__dir *d, size_t n)
{
    d->head = (d->head + n) % TCP_PROXY_BUF;
    d->len -= n;
    while (n > 0 && d->chunk_count > 0) {
        size_t *cl = &d->chunk_len[d->chunk_first];
        size_t take = n < *cl ? n : *cl;
        *cl -= take;
        n -= take;
        if (*cl == 0) {
            d->chunk_first = (d->chunk_first + 1) % TCP_PROXY__CHUNKS;
            d->chunk_count--;
        }
    }
}

/* Writes up to `limit` due bytes of d to fd; -1 when the write failed. */
static inline int tcp_proxy__flush(int fd, tcp_proxy__dir *d, size_t limit)
{
    while (limit > 0) {
        size_t span = TCP_PROXY_BUF - d->head, n = limit < span ? limit : span;
        ssize_t w = send(fd, d->buf + d->head, n, MSG_NOSIGNAL);
        if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        tcp_proxy__consume(d, (size_t)w);
        limit -= (size_t)w;
        if ((size_t)w < n) return 0;
    }
    return 0;
}

static inline long long tcp_proxy__next_due(const tcp_proxy__dir *d)
{
    return d->chunk_count ? d->chunk_due[d->chunk_first] : -1;
}

static inline void tcp_proxy__serve(tcp_proxy *p, const int *lfd)
{
    static tcp_proxy__conn conns[TCP_PROXY_MAX_CONNS];
    static struct pollfd pf[TCP_PROXY_MAX_ROUTES + 2 * TCP_PROXY_MAX_CONNS];
    int nconn = 0, i;
    for (;;) {
        long long now = tcp_proxy__now_ms(), wake = now + 2; /* control changes: seen within 2 ms */
        int np = 0;
        /* faults first: resets, and the end of dead connections */
        for (i = 0; i < nconn; i++) {
            tcp_proxy__conn *c = &conns[i];
            tcp_proxy_route *rt = &p->route[c->route];
            int dead = 0;
            if (c->reset_seen != rt->reset_gen) {
                tcp_proxy__hard_close(c->cfd);
                tcp_proxy__hard_close(c->ufd);
                rt->reset++;
                dead = 1;
            } else if ((c->up.eof && c->up.len == 0) || (c->down.eof && c->down.len == 0)) {
                close(c->cfd); /* one side closed and all it sent is through */
                close(c->ufd);
                dead = 1;
            }
            if (dead) {
                conns[i] = conns[--nconn];
                i--;
            }
        }
        for (i = 0; i < p->n; i++) {
            pf[np].fd = lfd[i];
            pf[np].events = nconn < TCP_PROXY_MAX_CONNS ? POLLIN : 0;
            np++;
        }
        for (i = 0; i < nconn; i++) {
            tcp_proxy__conn *c = &conns[i];
            int stalled = p->route[c->route].blackhole;
            short ce = 0, ue = 0;
            if (!stalled) {
                long long du = tcp_proxy__next_due(&c->up), dd = tcp_proxy__next_due(&c->down);
                if (!c->up.eof && c->up.len < TCP_PROXY_BUF) ce |= POLLIN;
                if (!c->down.eof && c->down.len < TCP_PROXY_BUF) ue |= POLLIN;
                if (du >= 0 && du <= now) ue |= POLLOUT;
                if (dd >= 0 && dd <= now) ce |= POLLOUT;
                if (du > now && du < wake) wake = du;
                if (dd > now && dd < wake) wake = dd;
            }
            pf[np].fd = stalled ? -1 : c->cfd; /* a stalled socket's hang-up waits too */
            pf[np].events = ce;
            pf[np + 1].fd = stalled ? -1 : c->ufd;
            pf[np + 1].events = ue;
            np += 2;
        }
        if (poll(pf, (nfds_t)np, (int)(wake - now > 0 ? wake - now : 1)) < 0 && errno != EINTR) _exit(1);
        if (getppid() == 1) _exit(0);
        now = tcp_proxy__now_ms();
        /* data */
        for (i = 0; i < nconn; i++) {
            tcp_proxy__conn *c = &conns[i];
            tcp_proxy_route *rt = &p->route[c->route];
            short cr = pf[p->n + 2 * i].revents, ur = pf[p->n + 2 * i + 1].revents;
            int bad = 0;
            if (rt->blackhole) continue;
            if (cr & (POLLIN | POLLHUP | POLLERR)) bad |= tcp_proxy__fill(c->cfd, &c->up, rt->latency_ms);
            if (ur & (POLLIN | POLLHUP | POLLERR)) bad |= tcp_proxy__fill(c->ufd, &c->down, rt->latency_ms);
            if (ur & POLLOUT) bad |= tcp_proxy__flush(c->ufd, &c->up, tcp_proxy__due(&c->up, now));
            if (cr & POLLOUT) {
                size_t due = tcp_proxy__due(&c->down, now);
                if (c->cut_seen != rt->cut_gen && due > 0) { /* half a reply, then the end */
                    tcp_proxy__flush(c->cfd, &c->down, due / 2);
                    rt->cut++;
                    bad = -1;
                } else {
                    bad |= tcp_proxy__flush(c->cfd, &c->down, due);
                }
            }
            if (bad) {
                close(c->cfd);
                close(c->ufd);
                conns[i] = conns[--nconn];
                /* the moved connection's poll entries are stale: skip it this round */
                pf[p->n + 2 * i].revents = pf[p->n + 2 * nconn].revents;
                pf[p->n + 2 * i + 1].revents = pf[p->n + 2 * nconn + 1].revents;
                i--;
            }
        }
        /* new connections */
        for (i = 0; i < p->n; i++) {
            int cfd, ufd, one = 1;
            if (!(pf[i].revents & POLLIN)) continue;
            cfd = accept(lfd[i], NULL, NULL);
            if (cfd < 0) continue;
            p->route[i].accepted++;
            ufd = tcp_proxy__dial(p->upstream[i]);
            if (ufd < 0) {
                p->route[i].refused++;
                tcp_proxy__hard_close(cfd);
                continue;
            }
            setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK);
            memset(&conns[nconn], 0, sizeof conns[nconn]);
            conns[nconn].route = i;
            conns[nconn].cfd = cfd;
            conns[nconn].ufd = ufd;
            conns[nconn].cut_seen = p->route[i].cut_gen;
            conns[nconn].reset_seen = p->route[i].reset_gen;
            nconn++;
        }
    }
}

/* ---- control ---- */

/* Starts the relay for n routes to 127.0.0.1:upstream[i]; 0 on success
   (p->port[i] set), -1 on failure with nothing left running. */
static inline int tcp_proxy_start(tcp_proxy *p, int n, const int *upstream)
{
    int lfd[TCP_PROXY_MAX_ROUTES], i;
    memset(p, 0, sizeof *p);
    if (n < 1 || n > TCP_PROXY_MAX_ROUTES) return -1;
    {   /* shared with the relay after fork: /dev/zero mapped shared is
           anonymous memory, without needing MAP_ANONYMOUS (not POSIX) */
        int z = open("/dev/zero", O_RDWR);
        if (z < 0) return -1;
        p->route = (tcp_proxy_route *)mmap(NULL, sizeof(tcp_proxy_route) * TCP_PROXY_MAX_ROUTES,
                                           PROT_READ | PROT_WRITE, MAP_SHARED, z, 0);
        close(z);
        if (p->route == (tcp_proxy_route *)MAP_FAILED) {
            p->route = NULL;
            return -1;
        }
    }
    memset((void *)p->route, 0, sizeof(tcp_proxy_route) * TCP_PROXY_MAX_ROUTES);
    p->n = n;
    for (i = 0; i < n; i++) {
        struct sockaddr_in sa;
        socklen_t sl = (socklen_t)sizeof sa;
        int one = 1;
        p->upstream[i] = upstream[i];
        lfd[i] = socket(AF_INET, SOCK_STREAM, 0);
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (lfd[i] < 0 || setsockopt(lfd[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            bind(lfd[i], (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd[i], 128) != 0 ||
            getsockname(lfd[i], (struct sockaddr *)&sa, &sl) != 0) {
            int k;
            for (k = 0; k <= i; k++)
                if (lfd[k] >= 0) close(lfd[k]);
            munmap((void *)p->route, sizeof(tcp_proxy_route) * TCP_PROXY_MAX_ROUTES);
            p->route = NULL;
            return -1;
        }
        fcntl(lfd[i], F_SETFL, fcntl(lfd[i], F_GETFL) | O_NONBLOCK);
        p->port[i] = ntohs(sa.sin_port);
    }
    fflush(NULL);
    p->pid = fork();
    if (p->pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        signal(SIGPIPE, SIG_IGN);
        signal(SIGALRM, SIG_DFL);
        alarm(TCP_PROXY_MAX_S);
        tcp_proxy__serve(p, lfd);
        _exit(0);
    }
    for (i = 0; i < n; i++) close(lfd[i]);
    if (p->pid < 0) {
        munmap((void *)p->route, sizeof(tcp_proxy_route) * TCP_PROXY_MAX_ROUTES);
        p->route = NULL;
        return -1;
    }
    return 0;
}

/* Stops the relay (by its PID) and frees the shared page. */
static inline void tcp_proxy_stop(tcp_proxy *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    if (p->route) {
        munmap((void *)p->route, sizeof(tcp_proxy_route) * TCP_PROXY_MAX_ROUTES);
        p->route = NULL;
    }
}

#endif /* TCP_PROXY_H */
