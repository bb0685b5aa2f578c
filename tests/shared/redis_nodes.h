/* redis_nodes.h - start and control real redis-server processes for tests.

   Header-only, POSIX (Linux-tested), no dependency beyond libc. Every
   function is `static inline`, so including it and using nothing is fine.

       redis_nodes rn;
       const char *extra[] = { "--requirepass", "secret", NULL };
       if (redis_nodes_start(&rn, 3, extra, NULL) != 0) { ... skip ... }
       ... redis_nodes_port(&rn, i) ...
       redis_node_pause(&rn, 1);    // SIGSTOP
       redis_node_resume(&rn, 1);   // SIGCONT
       redis_node_kill(&rn, 2);     // SIGKILL, reaped
       redis_node_restart(&rn, 2);  // same port, same dir: its keys kept
       redis_node_restart_volatile(&rn, 2); // its keys lost, not durable
       redis_nodes_stop(&rn);       // SIGTERM, then SIGKILL; temp dirs removed

   * Each node listens on 127.0.0.1 on a free port (bind port 0, close,
     start the server there; a collision is retried on a new port), runs in
     its own mkdtemp() directory with `--save ''` plus the caller's extra
     arguments, and is ready when it answers PING (any reply, so -NOAUTH
     counts) over a plain socket.
   * Nodes are durable: `--appendonly yes --appendfsync always`, so their
     keys outlive a restart and the library counts their grants at once
     (redlock.h section 4, Restarts: a server without that persistence
     counts no grant for a ttl after it starts). Their directories are
     under /dev/shm when it is a writable directory (an fsync there costs
     nothing), else under $TMPDIR, else /tmp. A node that is not durable
     (`--appendonly no`), for restart tests: redis_nodes_start_volatile()
     starts every node so, redis_node_restart_volatile() restarts one so,
     with its directory emptied first (Redis 7 keeps its AOF in
     appendonlydir/; Redis 6 in appendonly.aof).
   * The server is REDIS_NODES_SERVER ("redis-server", looked up on PATH)
     unless $REDLOCK_TEST_SERVERS lists binaries, ':'-separated: node i
     runs the i-th (cycling), e.g. "build/servers/redis6/bin/redis-server:
     redis-server" mixes Redis 6.0 and 7.0 in one run (scripts/servers.sh).
   * `config` (optional) is written to DIR/redis.conf and passed as the
     config file: use it for lines that have no command-line form, e.g.
     "user u on >pw ~* +@all -@scripting\n" or "rename-command EVAL \"\"\n".
   * Only processes this header started are ever signalled, and only by
     the PID it got from fork(). They are killed (SIGKILL) and their temp
     dirs removed at exit (atexit) and on SIGINT / SIGTERM / SIGHUP /
     SIGALRM / SIGABRT / SIGSEGV / SIGBUS / SIGFPE, after which the signal's
     default action runs. On Linux the servers also get SIGKILL if the test
     process dies without cleanup (PR_SET_PDEATHSIG); fork from the main
     thread.
   * redis_nodes_start() sets SIGPIPE to SIG_IGN: tests write to sockets of
     nodes they kill.
   * redis_nodes_deadline(seconds) arms alarm(): a hung test is killed,
     with its nodes, and exits with the SIGALRM status.
   * redis_nodes_query() sends one command over a fresh plain socket
     (AUTH first if rn->auth_pass is set) and returns the first line of the
     reply (bulk strings: the content), for test assertions without hiredis.

   Not thread-safe: use from one thread (the tests' main thread).
*/
#ifndef REDIS_NODES_H
#define REDIS_NODES_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#ifndef REDIS_NODES_MAX
#define REDIS_NODES_MAX 16            /* nodes per redis_nodes */
#endif
#ifndef REDIS_NODES_MAX_ARGS
#define REDIS_NODES_MAX_ARGS 32       /* extra command-line arguments */
#endif
#ifndef REDIS_NODES_SERVER
#define REDIS_NODES_SERVER "redis-server"
#endif
#ifndef REDIS_NODES_READY_MS
#define REDIS_NODES_READY_MS 10000    /* how long to wait for PING */
#endif
#define REDIS_NODES__REG 128          /* processes tracked for cleanup */
#define REDIS_NODES__DIRLEN 128

typedef struct redis_node {
    int port;
    int tls_port;                     /* redis_nodes_start_tls(): its --tls-port */
    pid_t pid;                        /* 0: not running */
    int paused;
    int not_durable;                    /* not durable: --appendonly no (keys lost at a restart) */
    char dir[REDIS_NODES__DIRLEN];    /* "" once removed */
} redis_node;

typedef struct redis_nodes {
    int n;
    redis_node node[REDIS_NODES_MAX];
    int nargs;
    char *args[REDIS_NODES_MAX_ARGS]; /* copies of the extra arguments */
    int has_config;
    int tls;                          /* each node also listens with TLS */
    const char *auth_user;            /* optional, for redis_nodes_query */
    const char *auth_pass;
} redis_nodes;

/* ---- cleanup registry (async-signal-safe parts only in the handler) ---- */

static volatile pid_t redis_nodes__pids[REDIS_NODES__REG];
static char redis_nodes__dirs[REDIS_NODES__REG][REDIS_NODES__DIRLEN];
static int redis_nodes__installed;

static inline void redis_nodes__rmdir_fixed(const char *dir)
{
    /* Only the file names this header (or redis with our options) creates:
       usable from a signal handler, where opendir() is not allowed. Redis
       7's AOF is a manifest and numbered files in appendonlydir/ (the
       number grows at each rewrite: the first few are tried). */
    static const char *const names[] = { "redis.conf", "redis.log", "dump.rdb",
                                         "appendonly.aof", "temp.rdb",
                                         "appendonlydir/appendonly.aof.manifest", NULL };
    static const char *const aof[] = { ".base.rdb", ".base.aof", ".incr.aof", NULL };
    char path[REDIS_NODES__DIRLEN + 64];
    int i, k;
    size_t dl = strlen(dir);
    if (!dir[0] || dl + 64 > sizeof path) return;
    memcpy(path, dir, dl);
    path[dl] = '/';
    for (i = 0; names[i]; i++) {
        memcpy(path + dl + 1, names[i], strlen(names[i]) + 1);
        unlink(path);
    }
    for (k = 1; k <= 32; k++)
        for (i = 0; aof[i]; i++) {
            static const char head[] = "appendonlydir/appendonly.aof.";
            size_t at = dl + 1 + sizeof head - 1, m = 0, j;
            char num[4];
            int v = k;
            memcpy(path + dl + 1, head, sizeof head - 1);
            do num[m++] = (char)('0' + v % 10); while ((v /= 10) > 0);
            for (j = 0; j < m; j++) path[at + j] = num[m - 1 - j]; /* no snprintf in a signal handler */
            memcpy(path + at + m, aof[i], strlen(aof[i]) + 1);
            unlink(path);
        }
    memcpy(path + dl + 1, "appendonlydir", sizeof "appendonlydir");
    rmdir(path);
    rmdir(dir);
}

static inline void redis_nodes__kill_all_registered(void)
{
    int i;
    for (i = 0; i < REDIS_NODES__REG; i++) {
        pid_t p = redis_nodes__pids[i];
        if (p > 0) {
            kill(p, SIGKILL);
            waitpid(p, NULL, 0);
            redis_nodes__pids[i] = 0;
            redis_nodes__rmdir_fixed(redis_nodes__dirs[i]);
            redis_nodes__dirs[i][0] = 0;
        }
    }
}

static inline void redis_nodes__on_signal(int sig)
{
    static const char msg[] = "# redis_nodes: signal, killing test redis-servers\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    redis_nodes__kill_all_registered();
    signal(sig, SIG_DFL);
    raise(sig);
}

static inline void redis_nodes__at_exit(void) { redis_nodes__kill_all_registered(); }

static inline void redis_nodes__install(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGABRT,
                                SIGSEGV, SIGBUS, SIGFPE };
    size_t i;
    struct sigaction sa;
    if (redis_nodes__installed) return;
    redis_nodes__installed = 1;
    atexit(redis_nodes__at_exit);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = redis_nodes__on_signal;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static inline void redis_nodes__register(pid_t pid, const char *dir)
{
    int i;
    for (i = 0; i < REDIS_NODES__REG; i++)
        if (redis_nodes__pids[i] == 0) {
            size_t l = strlen(dir);
            if (l >= REDIS_NODES__DIRLEN) l = REDIS_NODES__DIRLEN - 1;
            memcpy(redis_nodes__dirs[i], dir, l);
            redis_nodes__dirs[i][l] = 0;
            redis_nodes__pids[i] = pid;
            return;
        }
}

static inline void redis_nodes__unregister(pid_t pid)
{
    int i;
    for (i = 0; i < REDIS_NODES__REG; i++)
        if (redis_nodes__pids[i] == pid) {
            redis_nodes__pids[i] = 0;
            redis_nodes__dirs[i][0] = 0;
        }
}

/* ---- small utilities ---- */

static inline long long redis_nodes__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void redis_nodes__sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* A port the kernel considers free right now (0 on failure). */
static inline int redis_nodes_free_port(void)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int port = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &al) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* Connects to 127.0.0.1:port with send/receive timeouts; -1 on failure. */
static inline int redis_nodes__connect(int port, int timeout_ms)
{
    struct sockaddr_in a;
    struct timeval tv;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int redis_nodes__write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one CRLF-terminated line into buf (without CRLF); -1 on failure. */
static inline int redis_nodes__read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = recv(fd, &c, 1, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (c == '\n') {
            if (n > 0 && buf[n - 1] == '\r') n--;
            buf[n] = 0;
            return 0;
        }
        if (n + 1 < cap) buf[n++] = c;
    }
}

/* Reads a bulk string's n bytes and its CRLF; out gets as much of it as
   fits (NUL-terminated). -1 on failure. */
static inline int redis_nodes__read_bulk(int fd, long n, char *out, size_t outsz)
{
    size_t got = 0, want = (size_t)n + 2;
    while (got < want) {
        char buf[4096];
        size_t k = want - got < sizeof buf ? want - got : sizeof buf;
        ssize_t r = recv(fd, buf, k, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (out && outsz && got < outsz - 1) {
            size_t c = (size_t)r < outsz - 1 - got ? (size_t)r : outsz - 1 - got;
            memcpy(out + got, buf, c);
        }
        got += (size_t)r;
    }
    if (out && outsz) out[(size_t)n < outsz - 1 ? (size_t)n : outsz - 1] = 0;
    return 0;
}

/* Sends argv (NULL-terminated) as a RESP array, reads the reply's first
   line into out; a bulk string's whole content (INFO's text, say)
   replaces its "$len" line. */
static inline int redis_nodes__roundtrip(int fd, const char *const *argv, char *out, size_t outsz)
{
    char head[32];
    int argc = 0, i;
    char line[512];
    while (argv[argc]) argc++;
    snprintf(head, sizeof head, "*%d\r\n", argc);
    if (redis_nodes__write_all(fd, head, strlen(head)) != 0) return -1;
    for (i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        snprintf(head, sizeof head, "$%zu\r\n", l);
        if (redis_nodes__write_all(fd, head, strlen(head)) != 0 ||
            redis_nodes__write_all(fd, argv[i], l) != 0 ||
            redis_nodes__write_all(fd, "\r\n", 2) != 0)
            return -1;
    }
    if (redis_nodes__read_line(fd, line, sizeof line) != 0) return -1;
    if (line[0] == '$' && atol(line + 1) >= 0) return redis_nodes__read_bulk(fd, atol(line + 1), out, outsz);
    if (out && outsz) {
        size_t l = strlen(line);
        if (l >= outsz) l = outsz - 1;
        memcpy(out, line, l);
        out[l] = 0;
    }
    return 0;
}

/* Sends one command to 127.0.0.1:port, argv NULL-terminated. AUTH with
   user/pass first if pass is not NULL. out gets the first reply line
   ("+OK", "-ERR ...", ":1", "$-1") or a bulk string's whole content. 0 on a
   reply, -1 on a connect / I/O error or timeout (timeout_ms each way). */
static inline int redis_nodes_queryv(int port, const char *user, const char *pass,
                                     int timeout_ms, const char *const *argv,
                                     char *out, size_t outsz)
{
    int rc = -1;
    int fd = redis_nodes__connect(port, timeout_ms);
    if (fd < 0) return -1;
    if (pass) {
        const char *a[4];
        char tmp[128];
        int k = 0;
        a[k++] = "AUTH";
        if (user) a[k++] = user;
        a[k++] = pass;
        a[k] = NULL;
        if (redis_nodes__roundtrip(fd, a, tmp, sizeof tmp) != 0 || tmp[0] != '+') {
            if (out && outsz) snprintf(out, outsz, "%s", tmp);
            close(fd);
            return -1;
        }
    }
    rc = redis_nodes__roundtrip(fd, argv, out, outsz);
    close(fd);
    return rc;
}

/* Is something answering PING at port? (any reply, even -NOAUTH) */
static inline int redis_nodes_ping(int port, int timeout_ms)
{
    const char *argv[] = { "PING", NULL };
    char out[64];
    if (redis_nodes_queryv(port, NULL, NULL, timeout_ms, argv, out, sizeof out) != 0) return 0;
    return out[0] == '+' || out[0] == '-';
}

/* ---- the nodes ---- */

/* The server binary of node i: the i-th entry (cycling) of the
   ':'-separated list in $REDLOCK_TEST_SERVERS, so that one run can mix
   server versions (mk/matrix.mk); REDIS_NODES_SERVER when it is unset or
   empty. Copied to buf (the environment may change before the exec). */
static inline const char *redis_nodes__server(int i, char *buf, size_t cap)
{
    const char *list = getenv("REDLOCK_TEST_SERVERS"), *p, *end;
    int n = 1, k;
    size_t l;
    if (!list || !list[0]) return REDIS_NODES_SERVER;
    for (p = list; *p; p++) n += *p == ':';
    for (p = list, k = i % n; k > 0; k--) p = strchr(p, ':') + 1;
    end = strchr(p, ':');
    l = end ? (size_t)(end - p) : strlen(p);
    if (l == 0 || l >= cap) return REDIS_NODES_SERVER;
    memcpy(buf, p, l);
    buf[l] = 0;
    return buf;
}

static inline int redis_nodes__spawn(redis_nodes *rn, int i)
{
    char server[256];
    redis_node *nd = &rn->node[i];
    char portbuf[16], tlsbuf[16], logbuf[REDIS_NODES__DIRLEN + 16], confbuf[REDIS_NODES__DIRLEN + 16];
    const char *argv[REDIS_NODES_MAX_ARGS + 24];
    int k = 0, j;
    pid_t pid;
    snprintf(portbuf, sizeof portbuf, "%d", nd->port);
    snprintf(logbuf, sizeof logbuf, "%.*s/redis.log", REDIS_NODES__DIRLEN - 1, nd->dir);
    snprintf(confbuf, sizeof confbuf, "%.*s/redis.conf", REDIS_NODES__DIRLEN - 1, nd->dir);
    argv[k++] = redis_nodes__server(i, server, sizeof server);
    if (rn->has_config) argv[k++] = confbuf;
    argv[k++] = "--port"; argv[k++] = portbuf;
    if (rn->tls) {
        snprintf(tlsbuf, sizeof tlsbuf, "%d", nd->tls_port);
        argv[k++] = "--tls-port"; argv[k++] = tlsbuf;
    }
    argv[k++] = "--bind"; argv[k++] = "127.0.0.1";
    argv[k++] = "--dir"; argv[k++] = nd->dir;
    argv[k++] = "--logfile"; argv[k++] = logbuf;
    argv[k++] = "--daemonize"; argv[k++] = "no";
    argv[k++] = "--save"; argv[k++] = "";
    argv[k++] = "--appendonly"; argv[k++] = nd->not_durable ? "no" : "yes";
    if (!nd->not_durable) { argv[k++] = "--appendfsync"; argv[k++] = "always"; }
    for (j = 0; j < rn->nargs; j++) argv[k++] = rn->args[j];
    argv[k] = NULL;

    fflush(NULL);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
            if (devnull > 2) close(devnull);
        }
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], (char *const *)(void *)argv);
        _exit(127);
    }
    nd->pid = pid;
    nd->paused = 0;
    redis_nodes__register(pid, nd->dir);
    return 0;
}

/* Waits for the node to answer PING. 0 ready; -1 the process exited (the
   port was probably taken) or did not answer in time (then killed). */
static inline int redis_nodes__wait_ready(redis_nodes *rn, int i)
{
    redis_node *nd = &rn->node[i];
    long long until = redis_nodes__now_ms() + REDIS_NODES_READY_MS;
    while (redis_nodes__now_ms() < until) {
        int st;
        if (waitpid(nd->pid, &st, WNOHANG) == nd->pid) {
            redis_nodes__unregister(nd->pid);
            nd->pid = 0;
            return -1;
        }
        if (redis_nodes_ping(nd->port, 200)) return 0;
        redis_nodes__sleep_ms(10);
    }
    kill(nd->pid, SIGKILL);
    waitpid(nd->pid, NULL, 0);
    redis_nodes__unregister(nd->pid);
    nd->pid = 0;
    return -1;
}

/* out = a "/" b; -1 if it does not fit in cap. */
static inline int redis_nodes__join(char *out, size_t cap, const char *a, const char *b)
{
    size_t al = strlen(a), bl = strlen(b);
    if (al + 1 + bl + 1 > cap) return -1;
    memcpy(out, a, al);
    out[al] = '/';
    memcpy(out + al + 1, b, bl + 1);
    return 0;
}

/* Removes the files dir holds, and those of its subdirectories (Redis 7's
   appendonlydir/) with them, but `keep` (a name, or NULL); then dir
   itself unless keep is set. */
static inline void redis_nodes__empty_dir(const char *dir, const char *keep)
{
    DIR *d, *sub;
    struct dirent *e, *f;
    char path[REDIS_NODES__DIRLEN + 300], inner[REDIS_NODES__DIRLEN + 600];
    if (!dir[0]) return;
    d = opendir(dir);
    if (d) {
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if ((keep && !strcmp(e->d_name, keep)) || redis_nodes__join(path, sizeof path, dir, e->d_name) != 0)
                continue;
            if (unlink(path) == 0 || !(sub = opendir(path))) continue;
            while ((f = readdir(sub)) != NULL) /* a directory: its files */
                if (redis_nodes__join(inner, sizeof inner, path, f->d_name) == 0) unlink(inner);
            closedir(sub);
            rmdir(path);
        }
        closedir(d);
    }
    if (!keep) rmdir(dir);
}

static inline void redis_nodes__remove_dir(const char *dir)
{
    redis_nodes__empty_dir(dir, NULL);
}

/* Stops node i: SIGTERM (SIGCONT if paused), up to 2 s, then SIGKILL;
   reaped. Keeps its directory and port (for redis_node_restart). */
static inline void redis_node_stop(redis_nodes *rn, int i)
{
    redis_node *nd;
    long long until;
    if (!rn || i < 0 || i >= rn->n) return;
    nd = &rn->node[i];
    if (nd->pid <= 0) return;
    kill(nd->pid, SIGTERM);
    if (nd->paused) kill(nd->pid, SIGCONT);
    until = redis_nodes__now_ms() + 2000;
    for (;;) {
        pid_t r = waitpid(nd->pid, NULL, WNOHANG);
        if (r == nd->pid || (r < 0 && errno == ECHILD)) break;
        if (redis_nodes__now_ms() >= until) {
            kill(nd->pid, SIGKILL);
            waitpid(nd->pid, NULL, 0);
            break;
        }
        redis_nodes__sleep_ms(5);
    }
    redis_nodes__unregister(nd->pid);
    nd->pid = 0;
    nd->paused = 0;
}

/* kill -9 node i (a crash: no shutdown, connections reset). */
static inline void redis_node_kill(redis_nodes *rn, int i)
{
    redis_node *nd;
    if (!rn || i < 0 || i >= rn->n) return;
    nd = &rn->node[i];
    if (nd->pid <= 0) return;
    kill(nd->pid, SIGKILL);
    waitpid(nd->pid, NULL, 0);
    redis_nodes__unregister(nd->pid);
    nd->pid = 0;
    nd->paused = 0;
}

/* SIGSTOP / SIGCONT: the node keeps its connections but stops answering. */
static inline void redis_node_pause(redis_nodes *rn, int i)
{
    if (!rn || i < 0 || i >= rn->n || rn->node[i].pid <= 0) return;
    kill(rn->node[i].pid, SIGSTOP);
    rn->node[i].paused = 1;
}

static inline void redis_node_resume(redis_nodes *rn, int i)
{
    if (!rn || i < 0 || i >= rn->n || rn->node[i].pid <= 0) return;
    kill(rn->node[i].pid, SIGCONT);
    rn->node[i].paused = 0;
}

static inline int redis_node__respawn(redis_nodes *rn, int i)
{
    int tries;
    for (tries = 0; tries < 50; tries++) {
        if (redis_nodes__spawn(rn, i) != 0) return -1;
        if (redis_nodes__wait_ready(rn, i) == 0) return 0;
        redis_nodes__sleep_ms(100); /* port still held: try again */
    }
    return -1;
}

/* Restarts node i on the same port and directory (stopping it first if it
   runs): a new process (a new run_id). A durable node keeps its keys (its
   AOF); one that is not durable has lost them. 0 when it answers PING
   again. */
static inline int redis_node_restart(redis_nodes *rn, int i)
{
    if (!rn || i < 0 || i >= rn->n) return -1;
    redis_node_stop(rn, i);
    return redis_node__respawn(rn, i);
}

/* Restarts node i (stopping it first if it runs) on the same port with
   its directory emptied (its redis.conf kept) and not durable
   (--appendonly no), from now on: a server that restarted without its
   keys. 0 when it answers PING again. */
static inline int redis_node_restart_volatile(redis_nodes *rn, int i)
{
    if (!rn || i < 0 || i >= rn->n) return -1;
    redis_node_stop(rn, i);
    redis_nodes__empty_dir(rn->node[i].dir, "redis.conf");
    rn->node[i].not_durable = 1;
    return redis_node__respawn(rn, i);
}

static inline int redis_node_running(const redis_nodes *rn, int i)
{
    return rn && i >= 0 && i < rn->n && rn->node[i].pid > 0;
}

static inline int redis_nodes_port(const redis_nodes *rn, int i)
{
    return (rn && i >= 0 && i < rn->n) ? rn->node[i].port : -1;
}

static inline pid_t redis_nodes_pid(const redis_nodes *rn, int i)
{
    return (rn && i >= 0 && i < rn->n) ? rn->node[i].pid : -1;
}

/* Stops every node and removes the temp dirs; rn may be reused after. */
static inline void redis_nodes_stop(redis_nodes *rn)
{
    int i;
    if (!rn) return;
    for (i = 0; i < rn->n; i++) {
        redis_node_stop(rn, i);
        redis_nodes__remove_dir(rn->node[i].dir);
        rn->node[i].dir[0] = 0;
    }
    for (i = 0; i < rn->nargs; i++) free(rn->args[i]);
    rn->nargs = 0;
    rn->n = 0;
}

/* Where the nodes' directories go: /dev/shm if it is a writable
   directory (fsync costs nothing there), else $TMPDIR, else /tmp. */
static inline const char *redis_nodes__tmp(void)
{
    struct stat st;
    const char *tmp = getenv("TMPDIR");
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
    if (!tmp || !tmp[0] || strlen(tmp) > REDIS_NODES__DIRLEN - 40) tmp = "/tmp";
    return tmp;
}

static inline int redis_nodes__start(redis_nodes *rn, int n, const char *const *extra,
                                     const char *config, int tls, int not_durable)
{
    int i;
    if (!rn || n < 1 || n > REDIS_NODES_MAX) return -1;
    memset(rn, 0, sizeof *rn);
    rn->tls = tls;
    redis_nodes__install();
    if (extra)
        for (i = 0; extra[i]; i++) {
            size_t l;
            if (rn->nargs >= REDIS_NODES_MAX_ARGS) goto fail;
            l = strlen(extra[i]) + 1;
            rn->args[rn->nargs] = (char *)malloc(l);
            if (!rn->args[rn->nargs]) goto fail;
            memcpy(rn->args[rn->nargs++], extra[i], l);
        }
    rn->has_config = config != NULL;
    for (i = 0; i < n; i++) {
        redis_node *nd = &rn->node[i];
        int tries;
        snprintf(nd->dir, sizeof nd->dir, "%s/redlock-node-XXXXXX", redis_nodes__tmp());
        nd->not_durable = not_durable;
        rn->n = i + 1;
        if (!mkdtemp(nd->dir)) {
            nd->dir[0] = 0;
            goto fail;
        }
        if (config) {
            char path[REDIS_NODES__DIRLEN + 16];
            FILE *f;
            snprintf(path, sizeof path, "%s/redis.conf", nd->dir);
            f = fopen(path, "w");
            if (!f) goto fail;
            fputs(config, f);
            fclose(f);
        }
        for (tries = 0;; tries++) {
            if (tries == 8) goto fail;
            nd->port = redis_nodes_free_port();
            if (nd->port <= 0) continue;
            if (tls && (nd->tls_port = redis_nodes_free_port()) <= 0) continue;
            if (redis_nodes__spawn(rn, i) != 0) goto fail;
            if (redis_nodes__wait_ready(rn, i) == 0) break;
        }
    }
    return 0;
fail:
    redis_nodes_stop(rn);
    return -1;
}

/* Starts n durable nodes. extra: NULL-terminated extra arguments (or
   NULL); config: text for DIR/redis.conf (or NULL). 0 when all answer
   PING; otherwise -1 with nothing left running. */
static inline int redis_nodes_start(redis_nodes *rn, int n, const char *const *extra,
                                    const char *config)
{
    return redis_nodes__start(rn, n, extra, config, 0, 0);
}

/* The same, the nodes not durable (--appendonly no): for a ttl after
   they start, the library counts no grant of theirs. */
static inline int redis_nodes_start_volatile(redis_nodes *rn, int n, const char *const *extra,
                                             const char *config)
{
    return redis_nodes__start(rn, n, extra, config, 0, 1);
}

/* The same, and each node also listens with TLS on its own free port
   (redis_nodes_tls_port()); extra must name the certificate files
   (--tls-cert-file, --tls-key-file, --tls-ca-cert-file ...). The plain
   port stays open for readiness checks and test assertions. */
static inline int redis_nodes_start_tls(redis_nodes *rn, int n, const char *const *extra,
                                        const char *config)
{
    return redis_nodes__start(rn, n, extra, config, 1, 0);
}

static inline int redis_nodes_tls_port(const redis_nodes *rn, int i)
{
    return rn && i >= 0 && i < rn->n ? rn->node[i].tls_port : -1;
}

/* One command to node i (argv NULL-terminated), with rn->auth_user /
   rn->auth_pass if set; see redis_nodes_queryv. 1 s timeouts. */
static inline int redis_nodes_query(const redis_nodes *rn, int i, char *out, size_t outsz,
                                    const char *const *argv)
{
    if (!rn || i < 0 || i >= rn->n) return -1;
    return redis_nodes_queryv(rn->node[i].port, rn->auth_user, rn->auth_pass, 1000, argv,
                              out, outsz);
}

/* Variadic form: redis_nodes_cmd(&rn, 0, out, sizeof out, "GET", "k", NULL). */
static inline int redis_nodes_cmd(const redis_nodes *rn, int i, char *out, size_t outsz, ...)
{
    const char *argv[16];
    int k = 0;
    const char *a;
    va_list ap;
    va_start(ap, outsz);
    while (k < 15 && (a = va_arg(ap, const char *)) != NULL) argv[k++] = a;
    va_end(ap);
    argv[k] = NULL;
    return redis_nodes_query(rn, i, out, outsz, argv);
}

/* Node i's Redis version as major * 100 + minor (600 for 6.0.16; Valkey
   8 says 702: the Redis it is compatible with), from INFO server; -1 when
   it does not answer. For the features older servers lack. */
static inline int redis_nodes_version(const redis_nodes *rn, int i)
{
    char out[4096];
    const char *v;
    if (redis_nodes_cmd(rn, i, out, sizeof out, "INFO", "server", (char *)NULL) != 0 ||
        !(v = strstr(out, "redis_version:")))
        return -1;
    v += sizeof "redis_version:" - 1;
    return atoi(v) * 100 + (strchr(v, '.') ? atoi(strchr(v, '.') + 1) : 0);
}

/* alarm(seconds) with the cleanup handler installed: a hung test dies,
   its nodes with it. 0 cancels. */
static inline void redis_nodes_deadline(unsigned seconds)
{
    redis_nodes__install();
    alarm(seconds);
}

/* One node that also listens on a Unix socket, in a fresh directory made
   from the template dir ("/tmp/...-XXXXXX", rewritten); path gets the
   socket's name. 0, or -1 with nothing left behind. */
static inline int redis_nodes_start_unix(redis_nodes *rn, char *dir, char *path, size_t cap)
{
    const char *args[5];
    if (!mkdtemp(dir)) return -1;
    snprintf(path, cap, "%s/r.sock", dir);
    args[0] = "--unixsocket";
    args[1] = path;
    args[2] = "--unixsocketperm";
    args[3] = "700";
    args[4] = NULL;
    if (redis_nodes_start(rn, 1, args, NULL) != 0) {
        rmdir(dir);
        return -1;
    }
    return 0;
}

static inline void redis_nodes_stop_unix(redis_nodes *rn, const char *dir, const char *path)
{
    redis_nodes_stop(rn);
    unlink(path);
    rmdir(dir);
}

#endif /* REDIS_NODES_H */
