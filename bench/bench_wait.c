/* bench/bench_wait.c - waiting under contention: the library's blocking
   acquire against a hand-written client, side by side in one run.

   20 clients, each a process of its own with its own connection(s), take
   turns on one key of one redis-server (started here on loopback, pinned
   to --server-cpu): acquire, hold 1 ms, release, 1 ms of other work, ask
   again. An acquire that returns without the lock (its retries used up)
   is a failed call; the client then asks again at once. Rows:

     library default    the raw-socket adapter at the library's defaults
                        (3 retries 200 +- 100 ms apart, release
                        notifications on)
     library no notif   the same with notify_off
     hand-written       SET key token NX PX, 3 retries 200 +- 100 ms apart,
                        release by a compare-and-delete EVAL: what any
                        Redlock client without notifications does
     ... tight          the same three with retries 2 +- 1 ms apart
     hand-written tight undo  the tight hand-written client, undoing each
                        lost attempt with the compare-and-delete as the
                        library does (a lost SET may have landed on
                        another node): what that round trip costs
     library flood      the defaults while one more process PUBLISHes
                        "released" on the key's channel as fast as it can
                        (a client allowed to PUBLISH forging releases)

   Per row: acquisitions/s (acquired and released), failed calls (and per
   second), attempts per second (SET commands sent; the library's counted
   by its REDLOCK_EV_ATTEMPT events), fairness as the fewest and most
   acquisitions of one client, the fewest as a share of the mean and
   Jain's index (1: all equal, 1/N: one client got all), errors (anything
   else that failed: an acquire's error, a release that failed, a client
   that could not connect), and the CPU the server and the clients used
   (% of one CPU). Each row runs --runs times, the rows in opposite orders
   on alternate runs, as figures on a shared machine drift between runs.

   The run ends with status 1 when a row had no acquisition at all.

   Usage: bench_wait [--seconds S] [--runs R] [--clients N] [--rows 1,2,...] [--server-cpu C]
   --rows: only those rows (numbered from 1 in the order above).
   Pin the clients with taskset (make bench-wait does); they inherit it. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "redis_nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_CLIENTS 64
#define KEY "bench:wait"
#define HOLD_NS 1000000L  /* the hold, and the other work after it */

enum { W_LIB, W_LIB_QUIET, W_HAND, W_LIB_TIGHT, W_LIB_TIGHT_QUIET, W_HAND_TIGHT, W_HAND_TIGHT_UNDO, W_LIB_FLOOD,
       W_ROWS };
static const char *const row_name[W_ROWS] = {
    "library default", "library no notif", "hand-written", "library tight",
    "library tight no notif", "hand-written tight", "hand-written tight undo", "library flood",
};

/* What each client counts, in memory shared with the parent. */
typedef struct tally {
    long wins, failed_calls, errors, attempts;
} tally;

static tally *shared; /* MAX_CLIENTS entries */

static int64_t now_us(void) { return redlock_socket_now_us(); }

static void pause_ns(long ns)
{
    struct timespec ts;
    ts.tv_sec = ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* ---- the library's client ---- */

static void count_attempt(void *user, const redlock_event *ev)
{
    if (ev->type == REDLOCK_EV_ATTEMPT) ((tally *)user)->attempts++;
}

static void lib_client(int port, int row, tally *t, int go_fd, double seconds)
{
    redlock_socket s;
    redlock_socket_config cfg;
    redlock_socket_lock l;
    redlock_lock_opts o;
    int64_t until;
    char b;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = port;
    cfg.notify_off = row == W_LIB_QUIET || row == W_LIB_TIGHT_QUIET;
    if (row == W_LIB_TIGHT || row == W_LIB_TIGHT_QUIET) {
        cfg.core.retry_delay_ms = 2;
        cfg.core.retry_jitter_ms = 1;
    }
    cfg.on_event = count_attempt;
    cfg.user = t;
    memset(&o, 0, sizeof o);
    o.key = KEY;
    o.ttl_ms = 10000;
    if (redlock_socket_init(&s, &cfg) != REDLOCK_OK) {
        t->errors++;
        return;
    }
    if (redlock_socket_connect(&s) != REDLOCK_OK || redlock_socket_lock_init(&s, &l, &o) != REDLOCK_OK) {
        t->errors++;
        redlock_socket_deinit(&s);
        return;
    }
    if (read(go_fd, &b, 1) < 0) {} /* blocks until the parent closes its end: all start together */
    until = now_us() + (int64_t)(seconds * 1e6);
    while (now_us() < until) {
        int rc = redlock_socket_acquire(&l);
        if (rc == REDLOCK_ERR_LOCKED || rc == REDLOCK_ERR_TIMEOUT) {
            t->failed_calls++;
            continue;
        }
        if (rc != REDLOCK_OK) {
            t->errors++;
            pause_ns(HOLD_NS);
            continue;
        }
        pause_ns(HOLD_NS);
        if (redlock_socket_release(&l) == REDLOCK_OK) t->wins++;
        else t->errors++;
        pause_ns(HOLD_NS);
    }
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
}

/* ---- the hand-written client: one blocking socket, one command at a time ---- */

static int tcp_open(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sends one command and reads its reply, which here is always one line
   (+OK, $-1, :n, -ERR ...): its first byte, or -1 if the connection failed. */
static int command(int fd, int argc, const char *const *argv)
{
    char buf[1024], line[256];
    size_t n = 0, got = 0;
    int i;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "*%d\r\n", argc);
    for (i = 0; i < argc && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "$%u\r\n%s\r\n", (unsigned)strlen(argv[i]), argv[i]);
    if (n >= sizeof buf || write(fd, buf, n) != (ssize_t)n) return -1;
    for (;;) {
        ssize_t r = read(fd, line + got, sizeof line - got);
        if (r <= 0) return -1;
        got += (size_t)r;
        if (got >= 2 && line[got - 2] == '\r' && line[got - 1] == '\n') return (unsigned char)line[0];
        if (got == sizeof line) return -1;
    }
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void hand_client(int port, int row, tally *t, int go_fd, double seconds)
{
    static const char release[] =
        "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";
    int tight = row == W_HAND_TIGHT || row == W_HAND_TIGHT_UNDO;
    long delay_us = tight ? 2000 : 200000, jitter_us = tight ? 1000 : 100000;
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15u + (uint64_t)now_us();
    int fd = tcp_open(port), retries;
    int64_t until;
    char token[40], b;
    if (fd < 0) {
        t->errors++;
        return;
    }
    if (read(go_fd, &b, 1) < 0) {}
    until = now_us() + (int64_t)(seconds * 1e6);
    while (now_us() < until) {
        const char *set[] = { "SET", KEY, token, "NX", "PX", "10000" };
        const char *del[] = { "EVAL", release, "1", KEY, token };
        int r = -1;
        snprintf(token, sizeof token, "%016llx%016llx", (unsigned long long)rng_next(&x),
                 (unsigned long long)rng_next(&x));
        for (retries = 3;; retries--) {
            t->attempts++;
            r = command(fd, 6, set);
            if (r == '$' && row == W_HAND_TIGHT_UNDO && command(fd, 5, del) != ':') r = -1;
            if (r != '$' || retries == 0) break; /* won, an error, or no retry left */
            pause_ns(1000L * (delay_us - jitter_us + (long)(rng_next(&x) % (uint64_t)(2 * jitter_us + 1))));
        }
        if (r == '$') {
            t->failed_calls++;
            continue;
        }
        if (r != '+') {
            t->errors++;
            pause_ns(HOLD_NS);
            continue;
        }
        pause_ns(HOLD_NS);
        if (command(fd, 5, del) == ':') t->wins++;
        else t->errors++;
        pause_ns(HOLD_NS);
    }
    close(fd);
}

/* ---- the forger: PUBLISH "released" on the key's channel, pipelined ---- */

static void flood(int port, int go_fd, double seconds)
{
    enum { BATCH = 64 };
    static const char channel[] = REDLOCK_CHANNEL_PREFIX KEY;
    char one[96], out[BATCH * sizeof one], in[4096], b;
    size_t len = (size_t)snprintf(one, sizeof one, "*3\r\n$7\r\nPUBLISH\r\n$%u\r\n%s\r\n$8\r\nreleased\r\n",
                                  (unsigned)(sizeof channel - 1), channel), i;
    int fd = tcp_open(port);
    int64_t until;
    if (fd < 0) return;
    for (i = 0; i < BATCH; i++) memcpy(out + i * len, one, len);
    if (read(go_fd, &b, 1) < 0) {}
    until = now_us() + (int64_t)(seconds * 1e6);
    while (now_us() < until) { /* a batch, and its answers (one line each) before the next */
        int lines = 0;
        if (write(fd, out, BATCH * len) != (ssize_t)(BATCH * len)) break;
        while (lines < BATCH) {
            ssize_t r = read(fd, in, sizeof in);
            if (r <= 0) break;
            for (i = 0; i < (size_t)r; i++) lines += in[i] == '\n';
        }
        if (lines < BATCH) break;
    }
    close(fd);
}

/* One command over a fresh connection, for the cleanup between rows. */
static int query_port(int port, char *out, size_t size, const char *cmd)
{
    char line[128];
    int fd = tcp_open(port);
    ssize_t n;
    if (fd < 0) return -1;
    snprintf(line, sizeof line, "%s\r\n", cmd);
    n = write(fd, line, strlen(line)) == (ssize_t)strlen(line) ? read(fd, out, size - 1) : -1;
    close(fd);
    if (n < 0) return -1;
    out[n] = '\0';
    return 0;
}

/* ---- one row: the clients as processes ---- */

typedef struct result {
    double rate, failed_s, attempts_s, server_cpu, client_cpu; /* CPU: % of one CPU over the row */
    double jain;      /* Jain's fairness index of the clients' acquisitions: 1 all equal, 1/n one got all */
    long wins, failed_calls, errors, lo, hi;
} result;

/* CPU seconds (user + system) a process has used, from /proc (Linux); -1 elsewhere. */
static double proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r"))) return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!(p = strrchr(buf, ')')) || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of this process's children that have been waited for. */
static double children_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int run_row(int port, pid_t server, int row, int clients, double seconds, result *out)
{
    double server0, children0;
    int go[2], i, n = clients + (row == W_LIB_FLOOD);
    pid_t pid[MAX_CLIENTS + 1];
    char reply[64];
    int64_t t0;
    memset(shared, 0, sizeof *shared * MAX_CLIENTS);
    if (pipe(go) != 0) return -1;
    for (i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] < 0) return -1;
        if (pid[i] == 0) {
            close(go[1]);
            if (i == clients) flood(port, go[0], seconds);
            else if (row == W_HAND || row == W_HAND_TIGHT || row == W_HAND_TIGHT_UNDO)
                hand_client(port, row, &shared[i], go[0], seconds);
            else
                lib_client(port, row, &shared[i], go[0], seconds);
            _exit(0); /* not exit(): the parent's atexit would stop the server */
        }
    }
    close(go[0]);
    pause_ns(200000000L); /* every client connected (the ones that could) */
    t0 = now_us();
    server0 = proc_cpu_s(server);
    children0 = children_cpu_s();
    close(go[1]); /* go */
    for (i = 0; i < n; i++) waitpid(pid[i], NULL, 0);
    t0 = now_us() - t0;
    memset(out, 0, sizeof *out);
    out->server_cpu = server0 < 0 ? -1 : 100 * (proc_cpu_s(server) - server0) / (t0 / 1e6);
    out->client_cpu = 100 * (children_cpu_s() - children0) / (t0 / 1e6);
    out->lo = -1;
    {
        double sum = 0, sq = 0;
        for (i = 0; i < clients; i++) {
            sum += (double)shared[i].wins;
            sq += (double)shared[i].wins * (double)shared[i].wins;
        }
        out->jain = sq > 0 ? sum * sum / (clients * sq) : 0;
    }
    for (i = 0; i < clients; i++) {
        tally *t = &shared[i];
        out->wins += t->wins;
        out->failed_calls += t->failed_calls;
        out->errors += t->errors;
        out->attempts_s += (double)t->attempts;
        if (out->lo < 0 || t->wins < out->lo) out->lo = t->wins;
        if (t->wins > out->hi) out->hi = t->wins;
    }
    /* the clients' own time: each stops asking `seconds` after the go; the
       last turn may end a little after */
    out->rate = out->wins / seconds;
    out->failed_s = out->failed_calls / seconds;
    out->attempts_s /= seconds;
    /* no key left for the next row (a holder stopped mid-turn cannot be: each ends a turn first) */
    (void)query_port(port, reply, sizeof reply, "DEL " KEY);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 2, clients = 20, server_cpu = -1, i, r, k, rc = 0, want[W_ROWS];
    double seconds = 5;
    const char *rows = NULL;
    redis_nodes rn;
    char cmd[128];
    static result res[4][W_ROWS];
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--clients") && i + 1 < argc) clients = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = argv[++i];
        else {
            fprintf(stderr, "usage: bench_wait [--seconds S] [--runs R] [--clients N] [--rows 1,2,...] "
                            "[--server-cpu C]\n");
            return 64;
        }
    }
    if (!(seconds > 0 && seconds <= 600) || runs < 1 || runs > 4 || clients < 2 || clients > MAX_CLIENTS) {
        fprintf(stderr, "bench_wait: --seconds in (0, 600], --runs 1..4, --clients 2..%d\n", MAX_CLIENTS);
        return 64;
    }
    { /* memory the clients share with the parent: a shared mapping of /dev/zero (POSIX, no MAP_ANONYMOUS) */
        int z = open("/dev/zero", O_RDWR);
        for (k = 0; k < W_ROWS; k++) want[k] = rows == NULL;
    for (; rows && *rows; rows += strspn(rows, ",")) { /* 1-based row numbers, as the table lists them */
        char *end;
        long n = strtol(rows, &end, 10);
        if (end == rows || n < 1 || n > W_ROWS) {
            fprintf(stderr, "bench_wait: --rows takes row numbers 1..%d, comma-separated\n", W_ROWS);
            return 64;
        }
        want[n - 1] = 1;
        rows = end;
    }
    shared = z < 0 ? (tally *)MAP_FAILED
                       : (tally *)mmap(NULL, sizeof *shared * MAX_CLIENTS, PROT_READ | PROT_WRITE, MAP_SHARED, z, 0);
        if (z >= 0) close(z);
        if (shared == MAP_FAILED) return 1;
    }
    redis_nodes_deadline((unsigned)(runs * W_ROWS * (seconds + 3) + 60));
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) {
        fprintf(stderr, "bench_wait: cannot start a redis-server\n");
        return 1;
    }
    if (server_cpu >= 0) {
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)rn.node[0].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_wait: could not pin the server\n");
    }
    for (r = 0; r < runs; r++)
        for (k = 0; k < W_ROWS; k++) {
            int row = r % 2 ? W_ROWS - 1 - k : k;
            if (!want[row]) continue;
            if (run_row(redis_nodes_port(&rn, 0), rn.node[0].pid, row, clients, seconds, &res[r][row]) != 0) {
                fprintf(stderr, "bench_wait: cannot fork the clients\n");
                redis_nodes_stop(&rn);
                return 1;
            }
        }
    redis_nodes_stop(&rn);

    printf("%d clients (processes) on one key of one node, each: acquire, hold 1 ms, release, 1 ms, again;\n"
           "%.1f s per row, %d run%s (rows in opposite orders); a failed call: an acquire that used its retries up\n\n",
           clients, seconds, runs, runs > 1 ? "s" : "");
    printf("%-24s %4s %9s %9s %10s %11s %11s %9s %6s %7s %8s %8s\n", "row", "run", "acq/s", "failed", "failed/s",
           "attempts/s", "min/max", "min/mean", "Jain", "errors", "server", "clients");
    for (k = 0; k < W_ROWS; k++)
        for (r = 0; r < runs && want[k]; r++) {
            const result *x = &res[r][k];
            char mm[32];
            double mean = (double)x->wins / clients;
            snprintf(mm, sizeof mm, "%ld/%ld", x->lo, x->hi);
            printf("%-24s %4d %9.0f %9ld %10.1f %11.0f %11s %8.0f%% %6.2f %7ld %7.0f%% %7.0f%%\n", row_name[k], r + 1,
                   x->rate, x->failed_calls, x->failed_s, x->attempts_s, mm, mean > 0 ? 100.0 * x->lo / mean : 0.0,
                   x->jain, x->errors, x->server_cpu, x->client_cpu);
            if (x->wins == 0) {
                fprintf(stderr, "bench_wait: no acquisition in the %s row, run %d\n", row_name[k], r + 1);
                rc = 1;
            }
        }
    return rc;
}

