/* hostile_server.h - a small fake Redis for the socket adapter's tests.

   A forked child serves a listening socket on 127.0.0.1 (a free port: bind
   port 0) and answers every command it receives according to a mode: a
   canned (possibly malformed) reply, a reply by command name, nothing at
   all, a reset, a truncated reply, an endless flood, a reply trickled one
   byte at a time, a greeting nobody asked for. Stopped by its PID
   (SIGKILL + waitpid); it also dies on its own after HOSTILE_MAX_S seconds
   (alarm) so a failed test never leaves it behind.

       hostile h;
       hostile_start(&h, HOSTILE_CANNED, "$999999999999\r\n", HOSTILE_HOLD);
       ... connect to h.port ...
       hostile_stop(&h);
*/
#ifndef HOSTILE_SERVER_H
#define HOSTILE_SERVER_H

#if !defined(_POSIX_C_SOURCE)
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
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#ifndef HOSTILE_MAX_S
#define HOSTILE_MAX_S 30
#endif

enum hostile_mode {
    HOSTILE_CANNED = 1, /* send `reply` for every chunk of request bytes */
    HOSTILE_ONCE,       /* send `reply` for the first chunk only, then only read */
    HOSTILE_SILENT,     /* accept, read, never answer */
    HOSTILE_RESET,      /* accept, read, then reset the connection (RST) */
    HOSTILE_CLOSE,      /* send `reply` (may be empty) then close */
    HOSTILE_GOOD,       /* answer like a Redis that grants everything */
    HOSTILE_FLOOD,      /* answer with `reply` then an endless stream of 'a' */
    HOSTILE_TRICKLE,    /* answer like GOOD, one byte every 40 ms (slow-loris) */
    HOSTILE_GREET,      /* send `reply` unasked right after accept, then GOOD */
    HOSTILE_HALF_RESET, /* send the first byte of `reply`, then reset (RST) */
    HOSTILE_STRAY,      /* answer like GOOD, then `reply` unasked, for every chunk
                           (however many commands one read brings) */
    HOSTILE_STRAY_LATE, /* as STRAY, with `reply` 10 ms after the answer: the
                           client has its answer and is idle when it comes */
    HOSTILE_ITEMS,      /* answer with `reply` then 16 MiB of ":1\r\n" (after
                           "*100000000\r\n": an endless array's elements) */
    HOSTILE_SUB_ITEMS,  /* a chunk holding a SUBSCRIBE gets an endless array
                           ("*100000000\r\n" then 16 MiB of ":1\r\n"), any
                           other chunk `reply` */
    HOSTILE_CLUSTER     /* a cluster master by its answers: CLUSTER SLOTS names
                           itself for every slot, INFO and CONFIG GET answer
                           as a server without persistence would, every other
                           command gets `reply` (a MOVED, ASK, TRYAGAIN...;
                           a "%d" in it: its own port) */
};

typedef struct hostile {
    pid_t pid;
    int port;
    int conns_max;
} hostile;

/* Reply of HOSTILE_GOOD for the command in buf (a RESP array of bulks):
   SET -> +OK, EVAL/EVALSHA -> :1, GET -> $-1, PEXPIRE/DEL -> :1,
   anything else +OK. */
static inline const char *hostile__good_reply(const char *buf, size_t len)
{
    const char *p = (const char *)memchr(buf, '$', len);
    const char *name;
    if (!p) return "+OK\r\n";
    p = (const char *)memchr(p, '\n', len - (size_t)(p - buf));
    if (!p || (size_t)(p + 1 - buf) >= len) return "+OK\r\n";
    name = p + 1;
    if (!strncmp(name, "EVAL", 4)) return ":1\r\n";
    if (!strncmp(name, "GET", 3)) return "$-1\r\n";
    if (!strncmp(name, "PEXPIRE", 7) || !strncmp(name, "DEL", 3)) return ":1\r\n";
    return "+OK\r\n";
}

static inline void hostile__write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

/* Counts complete commands (lines starting with '*') in a chunk: GOOD mode
   answers each one. Good enough for the small pipelines the tests send. */
static inline void hostile__good(int fd, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *star = (const char *)memchr(buf + i, '*', len - i);
        const char *next;
        size_t start;
        if (!star) return;
        start = (size_t)(star - buf);
        next = start + 1 < len ? (const char *)memchr(buf + start + 1, '*', len - start - 1) : NULL;
        {
            const char *r = hostile__good_reply(buf + start, next ? (size_t)(next - buf) - start : len - start);
            hostile__write_all(fd, r, strlen(r));
        }
        i = next ? (size_t)(next - buf) : len;
    }
}

/* HOSTILE_CLUSTER's answers for a chunk, a command at a time (as
   hostile__good splits them); port: its own. */
static inline void hostile__cluster(int fd, const char *buf, size_t len, const char *reply, size_t rlen, int port)
{
    size_t i = 0;
    while (i < len) {
        const char *star = (const char *)memchr(buf + i, '*', len - i), *next, *name = NULL, *nl;
        size_t start, end;
        char out[160];
        if (!star) return;
        start = (size_t)(star - buf);
        next = start + 1 < len ? (const char *)memchr(buf + start + 1, '*', len - start - 1) : NULL;
        end = next ? (size_t)(next - buf) : len;
        if ((nl = (const char *)memchr(buf + start, '$', end - start)) != NULL &&
            (nl = (const char *)memchr(nl, '\n', end - (size_t)(nl - buf))) != NULL)
            name = nl + 1;
        if (name && !strncmp(name, "CLUSTER", 7)) {
            int n = snprintf(out, sizeof out, "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n", port);
            hostile__write_all(fd, out, (size_t)n);
        } else if (name && !strncmp(name, "INFO", 4)) {
            static const char info[] = "# Server\r\nredis_version:7.0.15\r\nrun_id:0123456789012345678901234567890123456789"
                                       "\r\nuptime_in_seconds:100000\r\n";
            int n = snprintf(out, sizeof out, "$%d\r\n", (int)sizeof info - 1);
            hostile__write_all(fd, out, (size_t)n);
            hostile__write_all(fd, info, sizeof info - 1);
            hostile__write_all(fd, "\r\n", 2);
        } else if (name && !strncmp(name, "CONFIG", 6)) {
            static const char cfg[] = "*2\r\n$11\r\nappendfsync\r\n$8\r\neverysec\r\n";
            hostile__write_all(fd, cfg, sizeof cfg - 1);
        } else if (name && (!strncmp(name, "AUTH", 4) || !strncmp(name, "ASKING", 6))) {
            hostile__write_all(fd, "+OK\r\n", 5);
        } else if (memchr(reply, '%', rlen)) { /* "%d": its own port (a redirection to itself) */
            int n = snprintf(out, sizeof out, reply, port);
            hostile__write_all(fd, out, (size_t)n);
        } else {
            hostile__write_all(fd, reply, rlen);
        }
        i = end;
    }
}

/* `head`, then 16 MiB of integer replies: the elements of an array that
   never ends (the client must stop reading it, and close). */
static inline void hostile__items(int fd, const char *head, size_t hlen)
{
    static char items[65536];
    int k;
    for (k = 0; k + 4 <= (int)sizeof items; k += 4) memcpy(items + k, ":1\r\n", 4);
    hostile__write_all(fd, head, hlen);
    for (k = 0; k < 256; k++) hostile__write_all(fd, items, sizeof items);
}

/* Does the chunk hold the bytes of s? */
static inline int hostile__holds(const char *buf, size_t len, const char *s)
{
    size_t n = strlen(s), i;
    for (i = 0; i + n <= len; i++)
        if (memcmp(buf + i, s, n) == 0) return 1;
    return 0;
}

/* GOOD's replies for a chunk, one byte at a time, 40 ms apart. */
static inline void hostile__trickle(int fd, const char *buf, size_t len)
{
    const char *star = (const char *)memchr(buf, '*', len);
    const char *r;
    if (!star) return;
    for (r = hostile__good_reply(star, len - (size_t)(star - buf)); *r; r++) {
        struct timespec ts = { 0, 40 * 1000000L };
        hostile__write_all(fd, r, 1);
        nanosleep(&ts, NULL);
    }
}

static inline void hostile__reset(int fd)
{
    struct linger lg;
    lg.l_onoff = 1;
    lg.l_linger = 0;
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static inline void hostile__serve(int lfd, int mode, const char *reply, size_t rlen)
{
    struct pollfd pf[9];
    int answered[9];
    int n = 1, i, own = 0;
    struct sockaddr_in sa;
    socklen_t sl = (socklen_t)sizeof sa;
    static char buf[65536];
    static char flood[65536];
    memset(flood, 'a', sizeof flood);
    if (getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0) own = ntohs(sa.sin_port);
    pf[0].fd = lfd;
    pf[0].events = POLLIN;
    for (;;) {
        if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR) _exit(1);
        if ((pf[0].revents & POLLIN) && n < 9) {
            int c = accept(lfd, NULL, NULL);
            if (c >= 0) {
                if (mode == HOSTILE_GREET) hostile__write_all(c, reply, rlen);
                pf[n].fd = c;
                pf[n].events = POLLIN;
                pf[n].revents = 0;
                answered[n] = 0;
                n++;
            }
        }
        for (i = 1; i < n; i++) {
            ssize_t r;
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            r = recv(pf[i].fd, buf, sizeof buf, 0);
            if (r <= 0) {
                close(pf[i].fd);
                pf[i] = pf[n - 1];
                answered[i] = answered[n - 1];
                n--;
                i--;
                continue;
            }
            switch (mode) {
            case HOSTILE_CANNED: hostile__write_all(pf[i].fd, reply, rlen); break;
            case HOSTILE_ONCE:
                if (!answered[i]) hostile__write_all(pf[i].fd, reply, rlen);
                break;
            case HOSTILE_SILENT: break;
            case HOSTILE_RESET:
            case HOSTILE_HALF_RESET:
                if (mode == HOSTILE_HALF_RESET && rlen) hostile__write_all(pf[i].fd, reply, 1);
                hostile__reset(pf[i].fd);
                pf[i] = pf[n - 1];
                n--;
                i--;
                continue;
            case HOSTILE_TRICKLE: hostile__trickle(pf[i].fd, buf, (size_t)r); break;
            case HOSTILE_CLOSE:
                hostile__write_all(pf[i].fd, reply, rlen);
                close(pf[i].fd);
                pf[i] = pf[n - 1];
                n--;
                i--;
                continue;
            case HOSTILE_GREET: /* the greeting went out at accept */
            case HOSTILE_GOOD: hostile__good(pf[i].fd, buf, (size_t)r); break;
            case HOSTILE_STRAY:
            case HOSTILE_STRAY_LATE:
                hostile__good(pf[i].fd, buf, (size_t)r);
                if (mode == HOSTILE_STRAY_LATE) {
                    struct timespec ts = { 0, 10 * 1000000L };
                    nanosleep(&ts, NULL);
                }
                hostile__write_all(pf[i].fd, reply, rlen);
                break;
            case HOSTILE_ITEMS: hostile__items(pf[i].fd, reply, rlen); break;
            case HOSTILE_CLUSTER: hostile__cluster(pf[i].fd, buf, (size_t)r, reply, rlen, own); break;
            case HOSTILE_SUB_ITEMS:
                if (hostile__holds(buf, (size_t)r, "SUBSCRIBE"))
                    hostile__items(pf[i].fd, "*100000000\r\n", 12);
                else
                    hostile__write_all(pf[i].fd, reply, rlen);
                break;
            case HOSTILE_FLOOD: {
                int k;
                hostile__write_all(pf[i].fd, reply, rlen);
                for (k = 0; k < 256; k++) hostile__write_all(pf[i].fd, flood, sizeof flood); /* 16 MiB */
                break;
            }
            }
            answered[i] = 1;
        }
    }
}

/* Starts the server; 0 on success (h->port set), -1 on failure. */
static inline int hostile_start(hostile *h, int mode, const char *reply)
{
    struct sockaddr_in sa;
    socklen_t sl = (socklen_t)sizeof sa;
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    memset(h, 0, sizeof *h);
    if (lfd < 0) return -1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 16) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
        close(lfd);
        return -1;
    }
    h->port = ntohs(sa.sin_port);
    fflush(stdout);
    h->pid = fork();
    if (h->pid < 0) {
        close(lfd);
        return -1;
    }
    if (h->pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        alarm(HOSTILE_MAX_S);
        hostile__serve(lfd, mode, reply ? reply : "", reply ? strlen(reply) : 0);
        _exit(0);
    }
    close(lfd);
    return 0;
}

static inline void hostile_stop(hostile *h)
{
    if (h->pid > 0) {
        kill(h->pid, SIGKILL);
        waitpid(h->pid, NULL, 0);
    }
    h->pid = 0;
}

/* A loopback port with nothing listening (bound, then closed). */
/* A listener whose accept queue is full (backlog 0, one connection queued
   and never accepted): a further connect to its port never completes.
   Returns the port, or -1; close *lfd and *filler when done. */
static inline int hostile_full_backlog(int *lfd, int *filler)
{
    struct sockaddr_in sa;
    socklen_t len = (socklen_t)sizeof sa;
    struct pollfd pf;
    *lfd = socket(AF_INET, SOCK_STREAM, 0);
    *filler = socket(AF_INET, SOCK_STREAM, 0);
    if (*lfd < 0 || *filler < 0) return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(*lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(*lfd, 0) != 0 ||
        getsockname(*lfd, (struct sockaddr *)&sa, &len) != 0 || fcntl(*filler, F_SETFL, O_NONBLOCK) != 0)
        return -1;
    (void)connect(*filler, (struct sockaddr *)&sa, sizeof sa);
    pf.fd = *filler;
    pf.events = POLLOUT;
    pf.revents = 0;
    if (poll(&pf, 1, 2000) != 1) return -1; /* queued, never accepted */
    return ntohs(sa.sin_port);
}

static inline int hostile_closed_port(void)
{
    struct sockaddr_in sa;
    socklen_t sl = (socklen_t)sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    if (fd < 0) return 1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port ? port : 1;
}

#endif /* HOSTILE_SERVER_H */
