/* redis_cluster.h - a real Redis Cluster of cluster-mode redis-server
   processes for tests, on tests/shared/redis_nodes.h (free ports, temp
   dirs under /dev/shm or $TMPDIR, stopped by PID, also when the test dies).

       redis_cluster rc;
       if (redis_cluster_start(&rc, 3, 1) != 0) { ... skip ... }   // 3 masters, durable
       ... redis_cluster_port(&rc, i), redis_cluster_owner(&rc, slot) ...
       redis_cluster_migrate_slot(&rc, slot, from, to);     // the slot and its keys move
       redis_cluster_stop(&rc);

   * Each master gets an equal range of the 16384 slots (CLUSTER
     ADDSLOTSRANGE), they MEET, and start returns once every node says
     cluster_state:ok and knows every other (bounded: REDIS_CLUSTER_READY_MS).
     No replicas. Each node's cluster-config-file is in its own temp dir.
   * durable 1: appendonly yes, appendfsync always (the library counts the
     grants of a node that keeps keys across a restart at once); 0: no
     persistence (young nodes' grants do not count for a ttl).
   * A slot migration is three steps, for tests that act between them:
     begin (IMPORTING on the target, MIGRATING on the source), move_keys
     (CLUSTER GETKEYSINSLOT, then MIGRATE ... KEYS), finish (CLUSTER
     SETSLOT slot NODE target on both; the third learns by gossip). */
#ifndef REDIS_CLUSTER_H
#define REDIS_CLUSTER_H

#include "redis_nodes.h"

#ifndef REDIS_CLUSTER_READY_MS
#define REDIS_CLUSTER_READY_MS 15000
#endif
#define REDIS_CLUSTER_MAX 8

typedef struct redis_cluster {
    redis_nodes rn;
    int n;
    char id[REDIS_CLUSTER_MAX][128];
} redis_cluster;

static inline int redis_cluster_port(const redis_cluster *c, int i) { return redis_nodes_port(&c->rn, i); }

/* The first slot master i was given at start. */
static inline int redis_cluster_first_slot(const redis_cluster *c, int i) { return i * 16384 / c->n; }

/* Sends argv (NULL-terminated) to node i and reads an array of bulk
   strings (or a single line, as element 0): up to max elements into
   out[k] (cap bytes each). The count, or -1. */
static inline int redis_cluster__array(const redis_cluster *c, int i, const char *const *argv, char out[][128], int max)
{
    char line[512];
    int fd = redis_nodes__connect(redis_cluster_port(c, i), 2000), n, k, got = 0;
    if (fd < 0) return -1;
    if (redis_nodes__roundtrip(fd, argv, line, sizeof line) != 0) {
        close(fd);
        return -1;
    }
    if (line[0] != '*') { /* one line: an error, a status */
        if (max > 0) snprintf(out[0], 128, "%.127s", line);
        close(fd);
        return line[0] == '-' ? -1 : 1;
    }
    n = atoi(line + 1);
    for (k = 0; k < n; k++) {
        if (redis_nodes__read_line(fd, line, sizeof line) != 0 || line[0] != '$' ||
            redis_nodes__read_line(fd, line, sizeof line) != 0) {
            close(fd);
            return -1;
        }
        if (got < max) snprintf(out[got++], 128, "%.127s", line);
    }
    close(fd);
    return got;
}

/* One command to node i; its first reply line in out. 0, or -1. */
static inline int redis_cluster_cmdv(const redis_cluster *c, int i, char *out, size_t cap, const char *const *argv)
{
    return redis_nodes_query(&c->rn, i, out, cap, argv);
}

/* Does node i say cluster_state:ok (every slot served) and know all the
   masters? */
static inline int redis_cluster__ok(const redis_cluster *c, int i)
{
    const char *info[] = { "CLUSTER", "INFO", NULL }, *nodes[] = { "CLUSTER", "SLOTS", NULL };
    char out[128];
    if (redis_cluster_cmdv(c, i, out, sizeof out, info) != 0 || strcmp(out, "cluster_state:ok") != 0) return 0;
    /* every master's range known (CLUSTER SLOTS: an array of ranges, more
       once slots moved) */
    if (redis_cluster_cmdv(c, i, out, sizeof out, nodes) != 0 || out[0] != '*') return 0;
    return atoi(out + 1) >= c->n;
}

static inline void redis_cluster_stop(redis_cluster *c)
{
    redis_nodes_stop(&c->rn);
    c->n = 0;
}

/* Starts n (2..REDIS_CLUSTER_MAX) masters as one cluster. 0, or -1 with
   nothing left running. */
static inline int redis_cluster_start(redis_cluster *c, int n, int durable)
{
    const char *extra[] = { "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                            "--cluster-node-timeout", "3000", NULL };
    long long until;
    int i, ok;
    memset(c, 0, sizeof *c);
    if (n < 2 || n > REDIS_CLUSTER_MAX) return -1;
    if ((durable ? redis_nodes_start(&c->rn, n, extra, NULL) : redis_nodes_start_volatile(&c->rn, n, extra, NULL)) != 0)
        return -1;
    c->n = n;
    for (i = 0; i < n; i++) {
        const char *myid[] = { "CLUSTER", "MYID", NULL };
        char from[16], to[16], out[128];
        const char *add[] = { "CLUSTER", "ADDSLOTSRANGE", from, to, NULL };
        snprintf(from, sizeof from, "%d", redis_cluster_first_slot(c, i));
        snprintf(to, sizeof to, "%d", (i + 1) * 16384 / n - 1);
        if (redis_cluster_cmdv(c, i, c->id[i], sizeof c->id[i], myid) != 0 || strlen(c->id[i]) != 40 ||
            redis_cluster_cmdv(c, i, out, sizeof out, add) != 0 || strcmp(out, "+OK") != 0)
            goto fail;
    }
    for (i = 1; i < n; i++) {
        char port[16], out[128];
        const char *meet[] = { "CLUSTER", "MEET", "127.0.0.1", port, NULL };
        snprintf(port, sizeof port, "%d", redis_cluster_port(c, i));
        if (redis_cluster_cmdv(c, 0, out, sizeof out, meet) != 0 || strcmp(out, "+OK") != 0) goto fail;
    }
    until = redis_nodes__now_ms() + REDIS_CLUSTER_READY_MS;
    do {
        for (ok = 1, i = 0; i < n && ok; i++) ok = redis_cluster__ok(c, i);
        if (ok) return 0;
        redis_nodes__sleep_ms(20);
    } while (redis_nodes__now_ms() < until);
fail:
    redis_cluster_stop(c);
    return -1;
}

/* Which node serves key, as node 0 sees it (it answers MOVED for a key
   of another's slot). -1 on failure. */
static inline int redis_cluster_owner_of(const redis_cluster *c, const char *key)
{
    const char *get[] = { "GET", key, NULL };
    char out[256];
    int i, port;
    if (redis_cluster_cmdv(c, 0, out, sizeof out, get) != 0) return -1;
    if (strncmp(out, "-MOVED ", 7) != 0) return 0;
    port = atoi(strrchr(out, ':') + 1);
    for (i = 0; i < c->n; i++)
        if (redis_cluster_port(c, i) == port) return i;
    return -1;
}

/* The slot's migration from node `from` to node `to`, step 1: IMPORTING
   on the target, MIGRATING on the source. 0, or -1. */
static inline int redis_cluster_slot_begin(const redis_cluster *c, int slot, int from, int to)
{
    char s[16], out[128];
    const char *imp[] = { "CLUSTER", "SETSLOT", s, "IMPORTING", c->id[from], NULL };
    const char *mig[] = { "CLUSTER", "SETSLOT", s, "MIGRATING", c->id[to], NULL };
    snprintf(s, sizeof s, "%d", slot);
    if (redis_cluster_cmdv(c, to, out, sizeof out, imp) != 0 || strcmp(out, "+OK") != 0) return -1;
    if (redis_cluster_cmdv(c, from, out, sizeof out, mig) != 0 || strcmp(out, "+OK") != 0) return -1;
    return 0;
}

/* Step 2: the slot's keys (up to 64) move with MIGRATE. The count, or -1. */
static inline int redis_cluster_slot_move_keys(const redis_cluster *c, int slot, int from, int to)
{
    char s[16], port[16], keys[64][128], out[128];
    const char *get[] = { "CLUSTER", "GETKEYSINSLOT", s, "64", NULL };
    const char *mig[8 + 64];
    int n, k, a = 0;
    snprintf(s, sizeof s, "%d", slot);
    snprintf(port, sizeof port, "%d", redis_cluster_port(c, to));
    if ((n = redis_cluster__array(c, from, get, keys, 64)) < 0) return -1;
    if (n == 0) return 0;
    mig[a++] = "MIGRATE", mig[a++] = "127.0.0.1", mig[a++] = port, mig[a++] = "", mig[a++] = "0", mig[a++] = "5000";
    mig[a++] = "KEYS";
    for (k = 0; k < n; k++) mig[a++] = keys[k];
    mig[a] = NULL;
    if (redis_cluster_cmdv(c, from, out, sizeof out, mig) != 0 || strcmp(out, "+OK") != 0) return -1;
    return n;
}

/* Step 3: the slot is the target's (SETSLOT NODE on both; the others
   learn it by gossip). 0, or -1. */
static inline int redis_cluster_slot_finish(const redis_cluster *c, int slot, int from, int to)
{
    char s[16], out[128];
    const char *node[] = { "CLUSTER", "SETSLOT", s, "NODE", c->id[to], NULL };
    snprintf(s, sizeof s, "%d", slot);
    if (redis_cluster_cmdv(c, to, out, sizeof out, node) != 0 || strcmp(out, "+OK") != 0) return -1;
    if (redis_cluster_cmdv(c, from, out, sizeof out, node) != 0 || strcmp(out, "+OK") != 0) return -1;
    return 0;
}

/* The three steps at once: the slot and its keys move. 0, or -1. */
static inline int redis_cluster_migrate_slot(const redis_cluster *c, int slot, int from, int to)
{
    if (redis_cluster_slot_begin(c, slot, from, to) != 0 || redis_cluster_slot_move_keys(c, slot, from, to) < 0)
        return -1;
    return redis_cluster_slot_finish(c, slot, from, to);
}

#endif /* REDIS_CLUSTER_H */
