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

static inline int redis_group_start(redis_group *g, const char *name, int nsentinels)
{
    char replicaof[32], conf[512], want[96];
    const char *replica_args[4];
    const char *sentinel_args[] = { "--sentinel", NULL };
    int i;
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->nsentinels = nsentinels;
    if (redis_nodes_start(&g->primary, 1, NULL, NULL) != 0) return -1;
    g->port[0] = redis_nodes_port(&g->primary, 0);
    snprintf(replicaof, sizeof replicaof, "127.0.0.1 %d", g->port[0]);
    replica_args[0] = "--replicaof", replica_args[1] = replicaof, replica_args[2] = NULL;
    if (redis_nodes_start(&g->replica, 1, replica_args, NULL) != 0) goto fail;
    g->port[1] = redis_nodes_port(&g->replica, 0);
    if (redis_group__wait_info(g->port[1], "replication", "master_link_status:up") != 0) goto fail;
    snprintf(conf, sizeof conf,
             "sentinel monitor %s 127.0.0.1 %d 2\n"
             "sentinel down-after-milliseconds %s 1000\n"
             "sentinel failover-timeout %s 5000\n",
             name, g->port[0], name, name);
    if (redis_nodes_start(&g->sentinels, nsentinels, sentinel_args, conf) != 0) goto fail;
    snprintf(want, sizeof want, "name=%s,status=ok,address=127.0.0.1:%d,slaves=1", name, g->port[0]);
    for (i = 0; i < nsentinels; i++)
        if (redis_group__wait_info(redis_group_sentinel_port(g, i), "sentinel", want) != 0) goto fail;
    return 0;
fail:
    redis_group_stop(g);
    return -1;
}

/* SENTINEL FAILOVER through sentinel 0: the new primary's port once
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
        if (after > 0 && after != before && redis_group__info_has(after, "replication", "role:master")) return after;
        redis_nodes__sleep_ms(50);
    }
    return -1;
}

#endif /* REDIS_GROUP_H */
