/* redis_group.h - a Sentinel-managed group for tests: a primary, a replica
   and sentinels, real redis-server processes started here (redis_nodes.h:
   free loopback ports, temp dirs, stopped by PID, also on failure).

       redis_group g;
       if (redis_group_start(&g, "mymaster", 3) != 0) { ... skip ... }
       ... redis_group_sentinel_port(&g, i), redis_group_primary_port(&g) ...
       int now = redis_group_failover(&g);   // SENTINEL FAILOVER; the new primary's port
       redis_group_stop(&g);

   * Started in order, each waited for: the primary; the replica
     (`--replicaof`), until its link to the primary is up; the sentinels
     (`--sentinel`, `sentinel monitor NAME 127.0.0.1 PORT 2`, a primary down
     after 1 s, a failover timing out after 5 s), until each names the
     primary and knows the replica. The data servers are durable as every
     redis_nodes.h node is (their grants count at once).
   * redis_group_failover() asks sentinel 0 for a failover and waits until
     it names the other server and that server says it is the primary.
   * redis_group_start_tls(): the same over TLS. Every server also listens
     with TLS (redis_nodes_start_tls(): the plain ports stay open for the
     test's own checks), the data servers with data_args' certificates,
     the sentinels with sentinel_args' (both lists name the files: the
     test picks which names each certificate holds), and all with
     tls-replication: the replica follows the primary's TLS port, the
     sentinels watch it and each other in TLS, so the ports the
     sentinels name (redis_group_primary_port(), the failover's) are TLS
     ports; redis_group_plain_port() gives a data server's plain one.
   * Answers are read from INFO, whole: `INFO replication` (role, master_link_status) of the
     data servers, `INFO sentinel` (master0:...,address=HOST:PORT,slaves=N)
     of the sentinels.
   Not thread-safe; use from the main thread. */
#ifndef REDIS_GROUP_H
#define REDIS_GROUP_H

#include "redis_nodes.h"

#include <stdio.h>
#include <string.h>

#define REDIS_GROUP_WAIT_MS 20000

typedef struct redis_group {
    redis_nodes primary, replica, sentinels;
    char name[64];
    int port[2]; /* the first primary's, the first replica's */
    int tls_port[2]; /* redis_group_start_tls(): theirs in TLS (0: plain text) */
    int nsentinels;
} redis_group;

/* One command to a port; out gets its answer (INFO: the whole text). */
static inline int redis_group__ask(int port, const char *a0, const char *a1, const char *a2, char *out, size_t cap)
{
    const char *argv[4];
    argv[0] = a0, argv[1] = a1, argv[2] = a2, argv[3] = NULL;
    return redis_nodes_queryv(port, NULL, NULL, 1000, argv, out, cap);
}

/* `port`'s INFO section, whole: 0, or -1. */
static inline int redis_group__info(int port, const char *section, char *out, size_t cap)
{
    return redis_group__ask(port, "INFO", section, NULL, out, cap);
}

/* Does `port`'s INFO section hold `needle`? */
static inline int redis_group__info_has(int port, const char *section, const char *needle)
{
    static char info[16384];
    return redis_group__info(port, section, info, sizeof info) == 0 && strstr(info, needle) != NULL;
}

/* Waits until `port`'s INFO section holds `needle`: 0, or -1 after
   REDIS_GROUP_WAIT_MS. */
static inline int redis_group__wait_info(int port, const char *section, const char *needle)
{
    long long until = redis_nodes__now_ms() + REDIS_GROUP_WAIT_MS;
    while (redis_nodes__now_ms() < until) {
        if (redis_group__info_has(port, section, needle)) return 0;
        redis_nodes__sleep_ms(50);
    }
    return -1;
}

/* Waits until a replica of the primary at `port` acknowledges a write
   (WAIT 1): 0, or -1 after REDIS_GROUP_WAIT_MS. A replica that has just
   synced is sent writes only once it has acknowledged the sync (up to a
   second later), though INFO already says "online"; the write and the
   WAIT go over one connection, as WAIT waits for its connection's writes. */
static inline int redis_group_replica_acks(int port)
{
    static const char *const set[] = { "SET", "redis-group:probe", "1", NULL };
    static const char *const wait[] = { "WAIT", "1", "100", NULL };
    long long until = redis_nodes__now_ms() + REDIS_GROUP_WAIT_MS;
    char out[64] = "";
    int fd = redis_nodes__connect(port, 1000);
    while (fd >= 0 && redis_nodes__now_ms() < until && redis_nodes__roundtrip(fd, set, out, sizeof out) == 0 &&
           redis_nodes__roundtrip(fd, wait, out, sizeof out) == 0 && strcmp(out, ":1") != 0) {}
    if (fd >= 0) close(fd);
    return strcmp(out, ":1") == 0 ? 0 : -1;
}

static inline void redis_group_stop(redis_group *g)
{
    redis_nodes_stop(&g->sentinels);
    redis_nodes_stop(&g->replica);
    redis_nodes_stop(&g->primary);
}

static inline int redis_group_sentinel_port(const redis_group *g, int i) { return redis_nodes_port(&g->sentinels, i); }

/* Sentinel i's TLS port (redis_group_start_tls()). */
static inline int redis_group_sentinel_tls_port(const redis_group *g, int i)
{
    return redis_nodes_tls_port(&g->sentinels, i);
}

/* The plain port of the data server a sentinel names by `port` (its TLS
   one in a TLS group). */
static inline int redis_group_plain_port(const redis_group *g, int port)
{
    return port > 0 && port == g->tls_port[0] ? g->port[0] : port > 0 && port == g->tls_port[1] ? g->port[1] : port;
}

/* The primary sentinel 0 names now (its port), or -1. */
static inline int redis_group_primary_port(const redis_group *g)
{
    static char info[16384];
    const char *at;
    int port = -1;
    if (redis_group__info(redis_group_sentinel_port(g, 0), "sentinel", info, sizeof info) != 0) return -1;
    if ((at = strstr(info, ",address=127.0.0.1:")) != NULL) sscanf(at + 19, "%d", &port);
    return port;
}

/* extra's arguments (NULL-terminated, or NULL), then more's, into
   out[0 .. cap - 1], NULL-terminated: 0, or -1 when they do not fit. */
static inline int redis_group__args(const char **out, int cap, const char *const *extra, const char *const *more)
{
    int k = 0, i;
    for (i = 0; extra && extra[i]; i++)
        if (k < cap - 1) out[k++] = extra[i];
        else return -1;
    for (i = 0; more && more[i]; i++)
        if (k < cap - 1) out[k++] = more[i];
        else return -1;
    out[k] = NULL;
    return 0;
}

/* tls: data_args / sentinel_args name each side's certificates
   (redis_group_start_tls()); 0: plain text, both NULL. */
static inline int redis_group__start(redis_group *g, const char *name, int nsentinels, int tls,
                                     const char *const *data_args, const char *const *sentinel_args)
{
    static const char *const tls_more[] = { "--tls-replication", "yes", NULL };
    char replicaof[16], conf[512], want[96];
    /* host and port as two arguments: Redis 6.0 reads one as a quoted value */
    const char *replica_more[] = { "--replicaof", "127.0.0.1", NULL, NULL, NULL, NULL };
    const char *sentinel_more[] = { "--sentinel", NULL, NULL, NULL };
    const char *args[REDIS_NODES_MAX_ARGS];
    int i, watched;
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->nsentinels = nsentinels;
    if (tls) { /* the replica follows, and the sentinels watch, in TLS */
        replica_more[3] = sentinel_more[1] = tls_more[0];
        replica_more[4] = sentinel_more[2] = tls_more[1];
    }
    if (redis_group__args(args, REDIS_NODES_MAX_ARGS, data_args, tls ? tls_more : NULL) != 0 ||
        (tls ? redis_nodes_start_tls(&g->primary, 1, args, NULL) : redis_nodes_start(&g->primary, 1, args, NULL)) != 0)
        return -1;
    g->port[0] = redis_nodes_port(&g->primary, 0);
    if (tls) g->tls_port[0] = redis_nodes_tls_port(&g->primary, 0);
    watched = tls ? g->tls_port[0] : g->port[0];
    snprintf(replicaof, sizeof replicaof, "%d", watched);
    replica_more[2] = replicaof;
    if (redis_group__args(args, REDIS_NODES_MAX_ARGS, data_args, replica_more) != 0) goto fail;
    if ((tls ? redis_nodes_start_tls(&g->replica, 1, args, NULL) : redis_nodes_start(&g->replica, 1, args, NULL)) != 0)
        goto fail;
    g->port[1] = redis_nodes_port(&g->replica, 0);
    if (tls) g->tls_port[1] = redis_nodes_tls_port(&g->replica, 0);
    if (redis_group__wait_info(g->port[1], "replication", "master_link_status:up") != 0) goto fail;
    snprintf(conf, sizeof conf,
             "sentinel monitor %s 127.0.0.1 %d 2\n"
             "sentinel down-after-milliseconds %s 1000\n"
             "sentinel failover-timeout %s 5000\n",
             name, watched, name, name);
    if (redis_group__args(args, REDIS_NODES_MAX_ARGS, sentinel_more, sentinel_args) != 0 ||
        (tls ? redis_nodes_start_tls(&g->sentinels, nsentinels, args, conf)
             : redis_nodes_start(&g->sentinels, nsentinels, args, conf)) != 0)
        goto fail;
    snprintf(want, sizeof want, "name=%s,status=ok,address=127.0.0.1:%d,slaves=1", name, watched);
    for (i = 0; i < nsentinels; i++)
        if (redis_group__wait_info(redis_group_sentinel_port(g, i), "sentinel", want) != 0) goto fail;
    return 0;
fail:
    redis_group_stop(g);
    return -1;
}

static inline int redis_group_start(redis_group *g, const char *name, int nsentinels)
{
    return redis_group__start(g, name, nsentinels, 0, NULL, NULL);
}

static inline int redis_group_start_tls(redis_group *g, const char *name, int nsentinels,
                                        const char *const *data_args, const char *const *sentinel_args)
{
    return redis_group__start(g, name, nsentinels, 1, data_args, sentinel_args);
}

/* SENTINEL FAILOVER through sentinel 0: the new primary's port (as the
   sentinels name it) once
   sentinel 0 names it and it says it is the primary, or -1. */
static inline int redis_group_failover(redis_group *g)
{
    char out[256];
    int before = redis_group_primary_port(g), after = -1;
    long long until = redis_nodes__now_ms() + REDIS_GROUP_WAIT_MS;
    if (before < 0) return -1;
    /* refused while the sentinel has not yet heard from the replica itself
       (NOGOODSLAVE): asked again until it takes it */
    for (;;) {
        if (redis_group__ask(redis_group_sentinel_port(g, 0), "SENTINEL", "FAILOVER", g->name, out, sizeof out) == 0 &&
            out[0] == '+')
            break;
        if (redis_nodes__now_ms() >= until) {
            fprintf(stderr, "redis_group: SENTINEL FAILOVER: %s\n", out);
            return -1;
        }
        redis_nodes__sleep_ms(100);
    }
    while (redis_nodes__now_ms() < until) {
        after = redis_group_primary_port(g);
        if (after > 0 && after != before &&
            redis_group__info_has(redis_group_plain_port(g, after), "replication", "role:master"))
            return after;
        redis_nodes__sleep_ms(50);
    }
    return -1;
}

#endif /* REDIS_GROUP_H */
