/* bench/bench_socket.h - a raw-socket client for the deployment
   benchmarks (bench_cluster, bench_sentinel): one node given as text (a
   server, a redis-sentinel:// or redis-cluster:// URL) at the adapter's
   defaults, no retries, with nl locks (ttl 10 s) on keys[]. */
#ifndef BENCH_SOCKET_H
#define BENCH_SOCKET_H

#include "adapters/redlock_socket.h"

#include <stdio.h>
#include <string.h>

/* 0, or -1 (what failed said on stderr, after `who`). */
static inline int bench_socket_open(redlock_socket *s, redlock_socket_lock *l, int nl, const char *const *keys,
                                    const char *list, const char *who)
{
    redlock_socket_config cfg;
    redlock_lock_opts o;
    void *mem = NULL;
    char err[256];
    int i;
    redlock_socket_config_init(&cfg);
    if (redlock_parse_nodes(cfg.node, &cfg.node_count, list, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", who, err);
        return -1;
    }
    cfg.core.retry_count = -1;
    i = redlock_socket_init(s, &cfg);
    redlock_free_nodes(mem);
    if (i != 0) {
        fprintf(stderr, "%s: init %s: %s\n", who, list, redlock_strerror(i));
        return -1;
    }
    for (i = 0; i < nl; i++) {
        memset(&o, 0, sizeof o);
        o.key = keys[i];
        o.ttl_ms = 10000;
        if (redlock_socket_lock_init(s, &l[i], &o) != 0) {
            while (i-- > 0) redlock_socket_lock_deinit(&l[i]);
            redlock_socket_deinit(s);
            return -1;
        }
    }
    return 0;
}

static inline void bench_socket_close(redlock_socket *s, redlock_socket_lock *l, int nl)
{
    int i;
    for (i = 0; i < nl; i++) redlock_socket_lock_deinit(&l[i]);
    redlock_socket_deinit(s);
}

#endif
