/* stats.c - a loop of locks over raw sockets, with the client's statistics
   printed every second in the Prometheus / OpenMetrics text exposition
   format: what a service exports so that a metrics system can tell how
   many acquires failed and why, how long they take, how many locks are
   held, which nodes fail. No dependency besides libc.

   Build:  make examples-socket   (or: cc -std=c99 -I. examples/stats.c)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl   # prints the node list
           build/example_stats --seconds 5 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   Nodes as in every example: the argument, else $REDLOCK_NODES, else
   127.0.0.1:6379. --seconds N: run N seconds (default 1), a report each;
   --once: one acquire and release, one report (for a cron job).

   Feeding a metrics system: the text below is what Prometheus scrapes.
   A service with an HTTP server answers GET /metrics with it
   (Content-Type: text/plain; version=0.0.4), built from one
   redlock_socket_stats() call per scrape; one without writes it every few
   seconds to a file in node_exporter's textfile collector directory
   (--collector.textfile.directory: write NAME.prom.tmp, then rename it,
   so a scrape never reads half a file). Counters only grow (until a
   reset or a restart, which Prometheus's rate() takes in its stride); the
   latency histograms are cumulative buckets of the library's fixed
   log-scale ones, in seconds.
*/
#define REDLOCK_IMPLEMENTATION        /* the core's implementation ...      */
#define REDLOCK_SOCKET_IMPLEMENTATION /* ... and the adapter's, in this file */
#include "adapters/redlock_socket.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The nodes as labels: node="127.0.0.1:6379" (escaped as the format asks). */
static char node_label[REDLOCK_MAX_NODES][300];

static void set_label(int i, const redlock_node *n)
{
    char shown[256], *o = node_label[i];
    const char *p;
    redlock_format_node(n, shown, sizeof shown); /* never shows a password */
    for (p = shown; *p; p++) {
        if (*p == '\\' || *p == '"') *o++ = '\\';
        if (*p == '\n') { *o++ = '\\'; *o++ = 'n'; continue; }
        *o++ = *p;
    }
    *o = 0;
}

static void family(const char *name, const char *type, const char *help)
{
    printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample of a family with a single label. */
static void sample(const char *name, const char *label, const char *value, unsigned long long n)
{
    printf("%s{%s=\"%s\"} %llu\n", name, label, value, n);
}

/* A histogram of microseconds, in seconds: bucket i of redlock_histogram
   holds samples under 2^i us, so its cumulative count is le=2^i us; the
   last one is +Inf. */
static void histogram(const char *name, const char *help, const redlock_histogram *h)
{
    unsigned long long cum = 0;
    int i;
    family(name, "histogram", help);
    for (i = 0; i < REDLOCK_HISTOGRAM_BUCKETS - 1; i++) {
        cum += h->bucket[i];
        printf("%s_bucket{le=\"%.9g\"} %llu\n", name, (double)((uint64_t)1 << i) / 1e6, cum);
    }
    printf("%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
    printf("%s_sum %.6f\n%s_count %llu\n", name, (double)h->sum_us / 1e6, name, (unsigned long long)h->count);
}

/* Per node: one sample per node of a counter (or gauge) read at offset. */
#define PER_NODE(name, type, help, field)                                                          \
    do {                                                                                           \
        family(name, type, help);                                                                  \
        for (i = 0; i < st->node_count; i++) sample(name, "node", node_label[i], st->node[i].field); \
    } while (0)

static void report(const redlock_adapter_stats *st)
{
    static const char *const classes[REDLOCK_NODE_FAIL_CLASSES] = { "connect", "timeout", "server", "protocol",
                                                                   "other" };
    const redlock_stats *c = &st->core;
    int i, k;
    family("redlock_acquires_started_total", "counter", "Acquires started.");
    printf("redlock_acquires_started_total %llu\n", (unsigned long long)c->acquires);
    family("redlock_acquire_attempts_total", "counter", "Attempts made by acquires (each a round on every node).");
    printf("redlock_acquire_attempts_total %llu\n", (unsigned long long)c->attempts);
    family("redlock_acquires_total", "counter", "Acquires ended, by outcome.");
    sample("redlock_acquires_total", "outcome", "acquired", c->acquired);
    sample("redlock_acquires_total", "outcome", "busy", c->acquire_busy);
    sample("redlock_acquires_total", "outcome", "timeout", c->acquire_timeout);
    sample("redlock_acquires_total", "outcome", "no_quorum", c->acquire_no_quorum);
    sample("redlock_acquires_total", "outcome", "cancelled", c->acquire_cancelled);
    sample("redlock_acquires_total", "outcome", "other", c->acquire_other);
    family("redlock_operations_total", "counter", "Operations on held locks ended, by kind and result.");
    printf("redlock_operations_total{op=\"extend\",result=\"ok\"} %llu\n", (unsigned long long)c->extends);
    printf("redlock_operations_total{op=\"extend\",result=\"failed\"} %llu\n", (unsigned long long)c->extend_failed);
    printf("redlock_operations_total{op=\"renewal\",result=\"ok\"} %llu\n", (unsigned long long)c->renewals);
    printf("redlock_operations_total{op=\"renewal\",result=\"failed\"} %llu\n", (unsigned long long)c->renewal_failed);
    printf("redlock_operations_total{op=\"release\",result=\"ok\"} %llu\n", (unsigned long long)c->releases);
    printf("redlock_operations_total{op=\"release\",result=\"failed\"} %llu\n", (unsigned long long)c->release_failed);
    family("redlock_locks_lost_total", "counter", "Held locks lost, by reason.");
    sample("redlock_locks_lost_total", "reason", "expired", c->lost_expired);
    sample("redlock_locks_lost_total", "reason", "stolen", c->lost_stolen);
    sample("redlock_locks_lost_total", "reason", "quorum_lost", c->lost_quorum);
    sample("redlock_locks_lost_total", "reason", "hold_limit", c->lost_hold_limit);
    sample("redlock_locks_lost_total", "reason", "other", c->lost_other);
    family("redlock_locks_held", "gauge", "Locks held now.");
    printf("redlock_locks_held %u\n", (unsigned)c->held);
    family("redlock_locks_held_max", "gauge", "The most locks held at once.");
    printf("redlock_locks_held_max %u\n", (unsigned)c->held_max);
    histogram("redlock_acquire_seconds", "From acquire called to acquired.", &c->acquire_us);
    histogram("redlock_renewal_seconds", "A successful renewal round.", &c->renewal_us);
    histogram("redlock_handoff_seconds", "From a release notification to the acquire it woke won.", &c->handoff_us);
    family("redlock_node_failures_total", "counter", "Failed votes, by node and class.");
    for (i = 0; i < st->node_count; i++)
        for (k = 0; k < REDLOCK_NODE_FAIL_CLASSES; k++)
            printf("redlock_node_failures_total{node=\"%s\",class=\"%s\"} %llu\n", node_label[i], classes[k],
                   (unsigned long long)c->node_failures[i][k]);
    PER_NODE("redlock_node_connects_total", "counter", "Connections opened.", connects);
    PER_NODE("redlock_node_drops_total", "counter", "Open connections lost.", drops);
    PER_NODE("redlock_node_commands_total", "counter", "Commands written.", commands);
    PER_NODE("redlock_node_written_bytes_total", "counter", "Bytes of commands written.", bytes_out);
    PER_NODE("redlock_node_read_bytes_total", "counter", "Bytes of replies read.", bytes_in);
    PER_NODE("redlock_node_queue_max", "gauge", "The most replies owed at once on a connection.", queue_max);
    fflush(stdout);
}

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [--seconds N | --once] [NODES]\n"
                "Takes and releases the lock example:stats in a loop, printing the statistics every\n"
                "second (N seconds, default 1; --once: one cycle, one report) in the Prometheus text format.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n", me);
    return status;
}

int main(int argc, char **argv)
{
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock lock;
    redlock_lock_opts o;
    redlock_adapter_stats st;
    void *nodes = NULL; /* the node strings, until init has copied them */
    const char *list = getenv("REDLOCK_NODES");
    char err[256], *end;
    long seconds = 1;
    int rc, i, once = 0, got = 0, have_list = 0, reports = 0;
    int64_t start, now, next, stop;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout, argv[0], 0);
        if (strcmp(argv[i], "--once") == 0) {
            once = 1;
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = strtol(argv[++i], &end, 10);
            if (*end || seconds < 1 || seconds > 86400) return usage(stderr, argv[0], 64);
        } else if (argv[i][0] == '-' || have_list) {
            return usage(stderr, argv[0], 64);
        } else {
            list = argv[i];
            have_list = 1;
        }
    }
    redlock_socket_config_init(&cfg);
    if (redlock_parse_nodes(cfg.node, &cfg.node_count, list ? list : REDLOCK_NODES_DEFAULT, &nodes, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 64;
    }
    for (i = 0; i < cfg.node_count; i++) set_label(i, &cfg.node[i]);
    rc = redlock_socket_init(&s, &cfg);
    redlock_free_nodes(nodes); /* init copied what it needs */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "init: %s\n", redlock_strerror(rc));
        return 1;
    }
    memset(&o, 0, sizeof o);
    o.key = "example:stats";
    o.ttl_ms = 2000;
    redlock_socket_lock_init(&s, &lock, &o);

    start = redlock_socket_now_us();
    next = start + 1000000;
    stop = start + seconds * 1000000;
    for (;;) {
        /* the loop's work: take the lock, hold it 5 ms, give it back */
        rc = redlock_socket_acquire(&lock);
        if (rc == REDLOCK_OK) {
            got++;
            redlock_socket_run(&s, 5);
            redlock_socket_release(&lock);
        } else {
            fprintf(stderr, "not acquired: %s\n", redlock_strerror(rc));
            redlock_socket_run(&s, 100); /* a pause before the next try */
        }
        now = redlock_socket_now_us();
        if (once || now >= next) {
            /* one call copies every counter: cheap enough for every scrape */
            redlock_socket_stats(&s, &st);
            /* reports apart: a blank line, then a comment (both ignored by parsers) */
            printf("%s# at %.3f s\n", reports++ ? "\n" : "", (double)(now - start) / 1e6);
            report(&st);
            while (next <= now) next += 1000000;
        }
        if (once || now >= stop) break;
    }
    redlock_socket_lock_deinit(&lock);
    redlock_socket_deinit(&s);
    return got ? 0 : 1;
}
