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
     SETSLOT slot NODE target on both; the third learns by gossip).
   * redis_cluster_start_tls(): the same over TLS (tls-cluster: the bus and
     CLUSTER SLOTS to a TLS client speak of the TLS ports), each node with
     a TLS port (redis_cluster_tls_port()) beside its plain one, which the
     helpers here keep using. */
#ifndef REDIS_CLUSTER_H
#define REDIS_CLUSTER_H

#include "redis_nodes.h"

#ifndef REDIS_CLUSTER_READY_MS
#define REDIS_CLUSTER_READY_MS 15000
#endif
#define REDIS_CLUSTER_MAX 8

typedef struct redis_cluster {
    redis_nodes rn;
    int n;        /* masters: nodes 0 .. n-1 (as started) */
    int replicas; /* nodes n .. n + replicas - 1, the replica of master (i - n) */
    int tls;      /* redis_cluster_start_tls() */
    char id[REDIS_CLUSTER_MAX][128];
} redis_cluster;

static inline int redis_cluster_port(const redis_cluster *c, int i) { return redis_nodes_port(&c->rn, i); }
static inline int redis_cluster_tls_port(const redis_cluster *c, int i) { return redis_nodes_tls_port(&c->rn, i); }

/* A key's slot (CRC16/XMODEM mod 16384; keys without braces only): the
   harness picks keys of a master without the library. */
static inline unsigned redis_cluster__slot(const char *key)
{
    unsigned crc = 0;
    int b;
    for (; *key; key++) {
        crc ^= (unsigned)(unsigned char)*key << 8;
        for (b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc & 16383;
}

/* The first slot master i was given at start. */
static inline int redis_cluster_first_slot(const redis_cluster *c, int i) { return i * 16384 / c->n; }

/* Sends argv (NULL-terminated) to node i and reads an array of bulk
   strings or integers (":N"), or a single line as element 0: its first
   max elements into out[k] (128 bytes each). The count, or -1. */
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
    for (k = 0; k < n && got < max; k++) { /* what follows the first max is left unread */
        if (redis_nodes__read_line(fd, line, sizeof line) != 0 || (line[0] != '$' && line[0] != ':') ||
            (line[0] == '$' && redis_nodes__read_line(fd, line, sizeof line) != 0)) {
            close(fd);
            return -1;
        }
        snprintf(out[got++], 128, "%.127s", line);
    }
    close(fd);
    return got;
}

/* Sends argv to node i and splits a bulk string reply into lines (up to
   max, CR LF dropped). The count, or -1. */
static inline int redis_cluster__lines(const redis_cluster *c, int i, const char *const *argv, char out[][128], int max)
{
    static char text[1 << 16];
    const char *p, *e;
    int n = 0;
    if (redis_nodes_query(&c->rn, i, text, sizeof text, argv) != 0) return -1;
    for (p = text, e = text + strlen(text); p < e && n < max; n++) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(e - p));
        size_t l = (size_t)((nl ? nl : e) - p);
        if (l && p[l - 1] == '\r') l--;
        snprintf(out[n], 128, "%.*s", (int)(l > 127 ? 127 : l), p);
        p = nl ? nl + 1 : e;
    }
    return n;
}

/* Does node i's CLUSTER SLOTS name port (as a master or a replica)? Its
   reply's bytes, read until a short silence, are searched for ":port". */
static inline int redis_cluster__slots_name(const redis_cluster *c, int i, int port)
{
    static const char ask[] = "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n";
    char buf[8192], want[16];
    size_t got = 0;
    int fd = redis_nodes__connect(redis_cluster_port(c, i), 200);
    if (fd < 0) return 0;
    if (redis_nodes__write_all(fd, ask, sizeof ask - 1) == 0)
        for (;;) { /* the socket's receive timeout (200 ms) ends it */
            ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
            if (r <= 0) break;
            got += (size_t)r;
            if (got == sizeof buf - 1) break;
        }
    close(fd);
    buf[got] = 0;
    snprintf(want, sizeof want, ":%d\r\n", port);
    return strstr(buf, want) != NULL;
}

/* One command to node i; its first reply line (a bulk string: whole) in
   out. 0, or -1. */
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
    if (redis_cluster_cmdv(c, i, out, sizeof out, info) != 0 || strncmp(out, "cluster_state:ok\r\n", 18) != 0) return 0;
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

static inline int redis_cluster__start(redis_cluster *c, int n, int replicas, int durable, const char *const *tls_args);
static inline int redis_cluster_start_replicas(redis_cluster *c, int n, int replicas, int durable)
{
    return redis_cluster__start(c, n, replicas, durable, NULL);
}

/* n masters over TLS (tls_args: the certificate files, NULL-terminated). */
static inline int redis_cluster_start_tls(redis_cluster *c, int n, int durable, const char *const *tls_args)
{
    return redis_cluster__start(c, n, 0, durable, tls_args);
}

/* Starts n (2..REDIS_CLUSTER_MAX) masters as one cluster. 0, or -1 with
   nothing left running. */
static inline int redis_cluster_start(redis_cluster *c, int n, int durable)
{
    return redis_cluster_start_replicas(c, n, 0, durable);
}

/* Is node i a master (ROLE)? */
static inline int redis_cluster_is_master(const redis_cluster *c, int i)
{
    const char *role[] = { "ROLE", NULL };
    char out[8][128];
    return redis_cluster__array(c, i, role, out, 1) >= 1 && strcmp(out[0], "master") == 0;
}

/* The same, and masters 0 .. replicas-1 get a replica each: nodes n ..
   n + replicas - 1 (CLUSTER REPLICATE), in sync when this returns; over
   TLS when tls_args (redis_cluster_start_tls()). */
static inline int redis_cluster__start(redis_cluster *c, int n, int replicas, int durable, const char *const *tls_args)
{
    const char *extra[REDIS_NODES_MAX_ARGS] = { "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                                "--cluster-node-timeout", "3000", NULL };
    long long until;
    int i, ok, a = 6;
    memset(c, 0, sizeof *c);
    if (n < 2 || replicas < 0 || replicas > n || n + replicas > REDIS_CLUSTER_MAX) return -1;
    if (tls_args) { /* the bus, and the replication, in TLS too */
        for (i = 0; tls_args[i] && a < REDIS_NODES_MAX_ARGS - 6; i++) extra[a++] = tls_args[i];
        extra[a++] = "--tls-cluster", extra[a++] = "yes", extra[a++] = "--tls-replication", extra[a++] = "yes";
        extra[a] = NULL;
    }
    if (redis_nodes__start(&c->rn, n + replicas, extra, NULL, tls_args != NULL, !durable) != 0) return -1;
    c->tls = tls_args != NULL;
    c->n = n;
    c->replicas = replicas;
    for (i = n; i < n + replicas; i++) {
        const char *myid[] = { "CLUSTER", "MYID", NULL };
        if (redis_cluster_cmdv(c, i, c->id[i], sizeof c->id[i], myid) != 0 || strlen(c->id[i]) != 40) goto fail;
    }
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
    for (i = 1; i < n + replicas; i++) {
        char port[16], out[128];
        const char *meet[] = { "CLUSTER", "MEET", "127.0.0.1", port, NULL };
        /* the bus listens beside the TLS port under tls-cluster */
        snprintf(port, sizeof port, "%d", c->tls ? redis_cluster_tls_port(c, i) : redis_cluster_port(c, i));
        if (redis_cluster_cmdv(c, 0, out, sizeof out, meet) != 0 || strcmp(out, "+OK") != 0) goto fail;
    }
    until = redis_nodes__now_ms() + REDIS_CLUSTER_READY_MS;
    for (i = n; i < n + replicas; i++) { /* once the replica knows its master (gossip), it may follow it */
        const char *rep[] = { "CLUSTER", "REPLICATE", c->id[i - n], NULL };
        char out[128];
        while (redis_cluster_cmdv(c, i, out, sizeof out, rep) != 0 || strcmp(out, "+OK") != 0) {
            if (redis_nodes__now_ms() >= until) goto fail;
            redis_nodes__sleep_ms(20);
        }
    }
    do {
        for (ok = 1, i = 0; i < n + replicas && ok; i++) ok = redis_cluster__ok(c, i);
        for (i = n; i < n + replicas && ok; i++) { /* in sync with its master */
            const char *info[] = { "INFO", "replication", NULL };
            char lines[32][128];
            int k, m = redis_cluster__lines(c, i, info, lines, 32);
            for (ok = 0, k = 0; k < m; k++) ok |= strcmp(lines[k], "master_link_status:up") == 0;
        }
        for (i = n; i < n + replicas && ok; i++) { /* and named a replica in every CLUSTER SLOTS: a
                                                     replica is, once the others heard of its
                                                     replication offset (not 0: a write made one) */
            const char *set[] = { "SET", "redis-cluster-probe", "1", NULL };
            char probe[128], out[128];
            int k, slot = -1;
            for (k = 0; slot < 0; k++) { /* a key of master i - n */
                unsigned sl;
                snprintf(probe, sizeof probe, "redis-cluster-probe-%d", k);
                sl = redis_cluster__slot(probe);
                if ((int)sl >= redis_cluster_first_slot(c, i - n) && (int)sl < (i - n + 1) * 16384 / n) slot = (int)sl;
            }
            set[1] = probe;
            redis_cluster_cmdv(c, i - n, out, sizeof out, set);
            for (k = 0; k < n + replicas && ok; k++) ok = redis_cluster__slots_name(c, k, redis_cluster_port(c, i));
        }
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

/* A failover: replica node r (CLUSTER FAILOVER, coordinated with its
   master) takes its master's slots; 0 once it says it is a master and
   every node's cluster_state is ok again (bounded), or -1. */
static inline int redis_cluster_failover(const redis_cluster *c, int r)
{
    const char *fo[] = { "CLUSTER", "FAILOVER", NULL };
    char out[128];
    long long until = redis_nodes__now_ms() + REDIS_CLUSTER_READY_MS;
    int i, ok = 0;
    if (redis_cluster_cmdv(c, r, out, sizeof out, fo) != 0 || strcmp(out, "+OK") != 0) return -1;
    while (!ok && redis_nodes__now_ms() < until) {
        ok = redis_cluster_is_master(c, r);
        for (i = 0; i < c->n + c->replicas && ok; i++) ok = redis_cluster__ok(c, i);
        if (!ok) redis_nodes__sleep_ms(20);
    }
    return ok ? 0 : -1;
}

/* The three steps at once: the slot and its keys move. 0, or -1. */
static inline int redis_cluster_migrate_slot(const redis_cluster *c, int slot, int from, int to)
{
    if (redis_cluster_slot_begin(c, slot, from, to) != 0 || redis_cluster_slot_move_keys(c, slot, from, to) < 0)
        return -1;
    return redis_cluster_slot_finish(c, slot, from, to);
}

#endif /* REDIS_CLUSTER_H */
