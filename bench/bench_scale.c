/* bench_scale.c - many locks on one client, against a real redis-server
   that this program starts on loopback (tests/shared/redis_nodes.h) and
   stops at the end. One raw-socket client (adapters/redlock_socket.h); for
   each lock count: every acquire issued at once on distinct keys (the
   acquisition rate), then every lock held with the watchdog for a while
   (renewals, the client's CPU per renewal, locks lost), then every lock
   released. Also the bytes per lock. Two rows per count: "own table" (a
   lock table of the benchmark's, a node timeout of 5 s, no retries: a
   burst waits its turn at the server) and "defaults" (the adapter's
   defaults: the table the client grows, the default node timeout and
   retries). --node-timeout MS sets both rows' node timeout.
   --transport hiredis: the blocking hiredis adapter with its watchdog
   thread instead (acquires one after another: it blocks; the thread
   renews while the program sleeps).
   Usage: bench_scale [--locks N[,N...]] [--hold S] [--ttl MS] [--server-cpu C]
                      [--transport socket|hiredis] [--fail-every N]
                      [--rows own|defaults|both] [--node-timeout MS]
   A lock that is not acquired (a busy machine: a node timeout) is counted
   in its line's `failed` and left out of the rate; the run ends with
   status 1 only when a lock count had no lock acquired, or its setup
   failed. --fail-every N (a test of that path): every Nth lock's key is
   held by another owner, so its acquire fails.
   Defaults: --locks 1,1000,10000,100000 --hold 10 --ttl 6000 --rows both. The client
   runs where it is started (pin it with taskset); the server is pinned to
   --server-cpu when given. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "adapters/redlock_hiredis.h"
#include "redis_nodes.h"
#include "bench_util.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long acquired, failed, renewed, lost, released, acquire_results;

#define INJECTED_KEY "bench:injected" /* --fail-every: held by another owner */
static long fail_every;               /* 0: no injected failures */
static long node_timeout_ms;          /* 0: each row's own */

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    switch (r->op) {
    case REDLOCK_OP_ACQUIRE:
        acquire_results++;
        if (r->status == REDLOCK_OK) acquired++;
        else failed++;
        break;
    case REDLOCK_OP_LOST: lost++; break;
    case REDLOCK_OP_RELEASE: released++; break;
    default: break;
    }
}

static void on_event(void *u, const redlock_event *ev)
{
    (void)u;
    renewed += ev->type == REDLOCK_EV_RENEWED;
}


/* One turn of the adapter's loop: wait (at most until until_us) for the
   sockets or the next deadline, then handle what is ready. */
static void turn(redlock_socket *s, int64_t until_us)
{
    struct pollfd pfd[REDLOCK_SOCKET_MAX_FDS];
    int n = redlock_socket_pollfds(s, pfd);
    if (poll(pfd, (nfds_t)n, redlock_socket_poll_ms(s, until_us)) >= 0) redlock_socket_dispatch(s, pfd, n);
}

/* Runs the adapter's loop until *count reaches want or max_s passed. */
static void run_until(redlock_socket *s, const long *count, long want, double max_s)
{
    int64_t until = redlock_socket_now_us() + (int64_t)(max_s * 1e6);
    while (*count < want && redlock_socket_now_us() < until) turn(s, until);
}

/* One line of the table: n locks, acquired in t_acq s, held t_hold s with
   `renewals` renewals and c_hold s of CPU. */
static void report(long n, double t_acq, double t_hold, long renewals, double c_hold, size_t bytes, const char *what)
{
    printf("%7ld locks  acquired %7ld (failed %ld) in %7.3f s = %9.0f/s   held %4.0f s: %7ld renewals, "
           "%6.2f%% of a core, %5.2f us CPU/renewal, lost %ld   %5zu bytes/lock%s\n",
           n, acquired, failed, t_acq, t_acq > 0 ? (double)acquired / t_acq : 0.0, t_hold, renewals,
           100.0 * c_hold / t_hold, renewals > 0 ? 1e6 * c_hold / (double)renewals : 0.0, lost, bytes, what);
    fflush(stdout);
}

/* The bytes of a client's lock table outside the client: the one it grew
   (white box: the table inside the client is counted in the client). */
static size_t grown_table_bytes(const redlock_client *c)
{
    return c->_table != c->_own_table ? ((size_t)c->_table_mask + 1) * sizeof *c->_table : 0;
}

/* A row's name: "own table", or "defaults" and what was not. */
static const char *row_name(int own_table, const char *transport, char *buf, size_t len)
{
    if (own_table) snprintf(buf, len, "  own table%s", transport);
    else if (node_timeout_ms) snprintf(buf, len, "  defaults (but node timeout %ld ms)%s", node_timeout_ms, transport);
    else snprintf(buf, len, "  defaults%s", transport);
    return buf;
}

/* What malloc takes for a lock's key block (glibc: an 8-byte header, 16-byte
   chunks). */
static size_t key_block_bytes(const char *key)
{
    return (REDLOCK_KEY_BLOCK_SIZE(strlen(key)) + 8 + 15) & ~(size_t)15;
}

static int one_count(int port, long n, double hold_s, long ttl_ms, int own_table)
{
    redlock_socket s;
    redlock_socket_config cfg;
    redlock_socket_lock *locks = (redlock_socket_lock *)calloc((size_t)n, sizeof *locks);
    redlock_lock **table;
    size_t size = 1, key_bytes = 0;
    long i, refused = 0;
    double t0, t_acq, c0, c_hold, t_hold;
    long renewed0;
    char name[80];
    while (size <= (size_t)n) size *= 2;
    table = own_table ? (redlock_lock **)calloc(size, sizeof *table) : NULL;
    if (!locks || (own_table && !table)) return 1;
    acquired = failed = renewed = lost = released = acquire_results = 0;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = port;
    if (own_table) {
        cfg.command_timeout_ms = 10000;
        cfg.core.node_timeout_ms = 5000; /* a burst of 100,000 waits its turn at the server */
        cfg.core.retry_count = -1;
        cfg.core.lock_table = table;
        cfg.core.lock_table_size = size;
    }
    if (node_timeout_ms) cfg.core.node_timeout_ms = node_timeout_ms;
    cfg.on_event = on_event;
    if (redlock_socket_init(&s, &cfg) != REDLOCK_OK || redlock_socket_connect(&s) != REDLOCK_OK) return 1;
    for (i = 0; i < n; i++) {
        redlock_lock_opts o;
        char key[48];
        memset(&o, 0, sizeof o);
        if (fail_every && (i + 1) % fail_every == 0) snprintf(key, sizeof key, "%s", INJECTED_KEY);
        else snprintf(key, sizeof key, "bench:scale:%ld:%ld", n, i);
        key_bytes += key_block_bytes(key);
        o.key = key;
        o.ttl_ms = ttl_ms;
        o.watchdog = 1;
        o.on_result = on_result;
        if (redlock_socket_lock_init(&s, &locks[i], &o) != REDLOCK_OK) return 1;
    }
    /* every acquire at once */
    t0 = bench_now_s();
    for (i = 0; i < n; i++)
        if (redlock_acquire(&locks[i].lock) != REDLOCK_OK) refused++;
    failed += refused;
    run_until(&s, &acquire_results, n - refused, 60); /* every result, won or failed */
    t_acq = bench_now_s() - t0;
    /* hold */
    renewed0 = renewed;
    c0 = bench_cpu_s();
    t0 = bench_now_s();
    {
        int64_t until = redlock_socket_now_us() + (int64_t)(hold_s * 1e6);
        while (redlock_socket_now_us() < until) turn(&s, until);
    }
    t_hold = bench_now_s() - t0;
    c_hold = bench_cpu_s() - c0;
    report(n, t_acq, t_hold, renewed - renewed0, c_hold,
           sizeof(redlock_socket_lock) +
               (key_bytes + redlock_socket_memory(&s) + (own_table ? size * sizeof *table : grown_table_bytes(&s._client))) / (size_t)n,
           row_name(own_table, "", name, sizeof name));
    /* release everything (the keys must not outlive the run) */
    {
        long want = 0;
        for (i = 0; i < n; i++)
            if (redlock_lock_state(&locks[i].lock) == REDLOCK_STATE_HELD && redlock_release(&locks[i].lock) == REDLOCK_OK)
                want++;
        run_until(&s, &released, want, 60);
    }
    for (i = 0; i < n; i++) redlock_socket_lock_deinit(&locks[i]);
    redlock_socket_deinit(&s);
    free(locks);
    free(table);
    return acquired > 0 ? 0 : 2;
}

/* The same with the hiredis adapter and its watchdog thread. The counters
   are written on that thread, under the adapter's mutex, and read here
   after the thread had time to finish (a benchmark's approximation). */
static int one_count_hiredis(int port, long n, double hold_s, long ttl_ms, int own_table)
{
    static redlock_hiredis c;
    redlock_hiredis_config cfg;
    redlock_hiredis_lock *locks = (redlock_hiredis_lock *)calloc((size_t)n, sizeof *locks);
    redlock_lock **table;
    size_t size = 1, key_bytes = 0, grown = 0;
    long i, renewed0, want = 0;
    double t0, t_acq, c0, c_hold;
    char name[80];
    while (size <= (size_t)n) size *= 2;
    table = own_table ? (redlock_lock **)calloc(size, sizeof *table) : NULL;
    if (!locks || (own_table && !table)) return 1;
    acquired = failed = renewed = lost = released = acquire_results = 0;
    redlock_hiredis_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = port;
    cfg.watchdog_thread = 1;
    if (own_table) {
        cfg.command_timeout_ms = 10000;
        cfg.core.retry_count = -1;
        cfg.core.lock_table = table;
        cfg.core.lock_table_size = size;
    }
    if (node_timeout_ms) cfg.core.node_timeout_ms = node_timeout_ms;
    cfg.on_event = on_event;
    if (redlock_hiredis_init(&c, &cfg) != REDLOCK_OK) return 1;
    for (i = 0; i < n; i++) {
        redlock_lock_opts o;
        char key[48];
        memset(&o, 0, sizeof o);
        if (fail_every && (i + 1) % fail_every == 0) snprintf(key, sizeof key, "%s", INJECTED_KEY);
        else snprintf(key, sizeof key, "bench:scale-hiredis:%ld:%ld", n, i);
        key_bytes += key_block_bytes(key);
        o.key = key;
        o.ttl_ms = ttl_ms;
        o.watchdog = 1;
        o.on_result = on_result;
        if (redlock_hiredis_lock_init(&c, &locks[i], &o) != REDLOCK_OK) return 1;
    }
    t0 = bench_now_s();
    for (i = 0; i < n; i++) {
        long results = acquire_results;
        if (redlock_hiredis_acquire(&locks[i]) != REDLOCK_OK && acquire_results == results) failed++; /* not told */
    }
    t_acq = bench_now_s() - t0;
    renewed0 = renewed;
    c0 = bench_cpu_s();
    t0 = bench_now_s();
    {
        struct timespec ts;
        ts.tv_sec = (time_t)hold_s;
        ts.tv_nsec = (long)((hold_s - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }
    c_hold = bench_cpu_s() - c0;
    hold_s = bench_now_s() - t0;
    if (!own_table) grown = grown_table_bytes(&c._client); /* written at lock_init only: all done before */
    report(n, t_acq, hold_s, renewed - renewed0, c_hold,
           sizeof(redlock_hiredis_lock) + (key_bytes + (own_table ? size * sizeof *table : grown)) / (size_t)n,
           row_name(own_table, "  (hiredis, watchdog thread)", name, sizeof name));
    for (i = 0; i < n; i++)
        if (redlock_lock_state(&locks[i].lock) == REDLOCK_STATE_HELD) {
            want++;
            (void)redlock_hiredis_release(&locks[i]);
        }
    for (i = 0; i < n; i++) redlock_hiredis_lock_deinit(&locks[i]);
    redlock_hiredis_deinit(&c);
    free(locks);
    free(table);
    return acquired > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    const char *counts = "1,1000,10000,100000";
    double hold = 10;
    long ttl = 6000;
    int server_cpu = -1, i, rc = 0, hiredis = 0, setup_failed = 0, rows = 3; /* 1: own table, 2: defaults */
    redis_nodes rn;
    char *list, *tok;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--locks") && i + 1 < argc) counts = argv[++i];
        else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ttl") && i + 1 < argc) ttl = atol(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--transport") && i + 1 < argc && !strcmp(argv[i + 1], "hiredis")) hiredis = 1, i++;
        else if (!strcmp(argv[i], "--transport") && i + 1 < argc && !strcmp(argv[i + 1], "socket")) hiredis = 0, i++;
        else if (!strcmp(argv[i], "--fail-every") && i + 1 < argc) fail_every = atol(argv[++i]);
        else if (!strcmp(argv[i], "--node-timeout") && i + 1 < argc) node_timeout_ms = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc && !strcmp(argv[i + 1], "own")) rows = 1, i++;
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc && !strcmp(argv[i + 1], "defaults")) rows = 2, i++;
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc && !strcmp(argv[i + 1], "both")) rows = 3, i++;
        else {
            fprintf(stderr, "usage: bench_scale [--locks N[,N...]] [--hold S] [--ttl MS] [--server-cpu C] "
                            "[--transport socket|hiredis] [--fail-every N] [--rows own|defaults|both] [--node-timeout MS]\n");
            return 2;
        }
    }
    if (hold <= 0 || hold > 600 || ttl < 100 || ttl > 600000 || fail_every < 0 || node_timeout_ms < 0 ||
        node_timeout_ms > 600000) {
        fprintf(stderr, "bench_scale: --hold 0..600 s, --ttl 100..600000 ms, --fail-every >= 1, --node-timeout 1..600000 ms\n");
        return 2;
    }
    redis_nodes_deadline((int)(hold * 16 + 600)); /* two rows per count */
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) {
        fprintf(stderr, "bench_scale: cannot start redis-server\n");
        return 1;
    }
    if (server_cpu >= 0) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)rn.node[0].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_scale: could not pin the server\n");
    }
    if (fail_every) {
        char reply[128];
        redis_nodes_cmd(&rn, 0, reply, sizeof reply, "SET", INJECTED_KEY, "another-owner", (char *)NULL);
    }
    if (hiredis)
        printf("scale: one hiredis client with its watchdog thread, one node, watchdog locks (ttl %ld ms) on "
               "distinct keys, acquired one after another, then held %.0f s\n", ttl, hold);
    else
        printf("scale: one raw-socket client, one node, watchdog locks (ttl %ld ms) on distinct keys, "
               "all acquires issued at once, then held %.0f s\n", ttl, hold);
    list = strdup(counts);
    for (tok = strtok(list, ","); tok && !setup_failed; tok = strtok(NULL, ",")) {
        long n = atol(tok);
        int own;
        if (n < 1 || n > 1000000) { fprintf(stderr, "bench_scale: lock count %s out of 1..1000000\n", tok); rc = 2; break; }
        for (own = 1; own >= 0 && !setup_failed; own--) {
            int r;
            if (!(rows & (own ? 1 : 2))) continue;
            r = hiredis ? one_count_hiredis(redis_nodes_port(&rn, 0), n, hold, ttl, own)
                        : one_count(redis_nodes_port(&rn, 0), n, hold, ttl, own);
            if (r == 1) fprintf(stderr, "bench_scale: setup failed at %ld locks (%s)\n", n, own ? "own table" : "defaults"), setup_failed = 1;
            if (r == 2) fprintf(stderr, "bench_scale: no lock acquired in the %ld locks row (%s)\n", n, own ? "own table" : "defaults");
            if (r) rc = 1;
        }
    }
    free(list);
    redis_nodes_stop(&rn);
    return rc; /* failed acquires and lost locks beside successes are printed: they are the measurement */
}
