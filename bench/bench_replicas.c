/* bench/bench_replicas.c - what cfg.wait_replicas costs (redlock.h section
   4, Deployments), with the raw-socket adapter on real servers: a primary
   and one replica (tests/shared/redis_nodes.h, --replicaof), both pinned
   to one CPU.

   Acquire + release cycles on one lock of the primary, by a client with
   wait_replicas 0 (no WAIT) against one with wait_replicas 1 (WAIT 1 after
   the SET: the grant counts once the replica has it). Alternating blocks
   of --cycles cycles; printed per client: cycles/s (median of the blocks)
   and the p50 / p99 of one cycle's time over all of them, and the ratio.

   Usage: bench_replicas [--cycles N] [--blocks B] [--server-cpu C]
   Pin it with taskset (make bench-replicas does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "redis_group.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 32
#define MAX_SAMPLES 400000

/* A client of the primary that waits for `replicas`, and its lock. */
static int open_client(redlock_socket *s, redlock_socket_lock *l, int port, int replicas)
{
    redlock_socket_config cfg;
    redlock_lock_opts o;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = port;
    cfg.core.retry_count = -1;
    cfg.core.wait_replicas = replicas;
    if (redlock_socket_init(s, &cfg) != 0) return -1;
    memset(&o, 0, sizeof o);
    o.key = replicas ? "bench-replicas-1" : "bench-replicas-0";
    o.ttl_ms = 2000; /* a release that failed leaves the key: not for long */
    if (redlock_socket_lock_init(s, l, &o) != 0) {
        redlock_socket_deinit(s);
        return -1;
    }
    return 0;
}

/* n cycles: each successful one's seconds appended to lat (room
   permitting), each failed one counted in *failed (bench/README.md,
   Failed cycles); the block's successful cycles/s. */
static double block(redlock_socket_lock *l, int n, double *lat, int *nlat, int *failed)
{
    double t0 = bench_now_s(), lost = 0;
    int i, ok = 0;
    for (i = 0; i < n; i++) {
        double c = bench_now_s();
        if (redlock_socket_acquire(l) != REDLOCK_OK || redlock_socket_release(l) != REDLOCK_OK) {
            (*failed)++;
            lost += bench_now_s() - c;
            continue;
        }
        ok++;
        if (*nlat < MAX_SAMPLES) lat[(*nlat)++] = bench_now_s() - c;
    }
    return ok / (bench_now_s() - t0 - lost);
}

static void pin(const redis_nodes *rn, int cpu)
{
    int i;
    for (i = 0; i < rn->n; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", cpu, (int)rn->node[i].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_replicas: could not pin a server\n");
    }
}

int main(int argc, char **argv)
{
    static double lat[2][MAX_SAMPLES];
    int nlat[2] = { 0, 0 }, failed[2] = { 0, 0 }, cycles = 2000, blocks = 6, server_cpu = -1, i, b, empty = 0;
    double rate[2][MAX_BLOCKS];
    const char *names[2] = { "wait_replicas 0 (no WAIT)", "wait_replicas 1 (WAIT 1)" };
    const char *replica_args[3], *primary_args[] = { "--repl-diskless-sync-delay", "0", NULL }; /* (Redis 7 waits 5 s) */
    char replicaof[32];
    redis_nodes primary, replica;
    redlock_socket s[2];
    redlock_socket_lock l[2];
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--cycles") == 0) cycles = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--blocks") == 0) blocks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--server-cpu") == 0) server_cpu = atoi(argv[i + 1]);
    }
    if (cycles < 1 || blocks < 1 || blocks > MAX_BLOCKS) {
        fprintf(stderr, "usage: bench_replicas [--cycles N] [--blocks 1..%d] [--server-cpu C]\n", MAX_BLOCKS);
        return 2;
    }
    redis_nodes_deadline(600);
    if (redis_nodes_start(&primary, 1, primary_args, NULL) != 0) {
        fprintf(stderr, "bench_replicas: cannot start the primary\n");
        return 1;
    }
    snprintf(replicaof, sizeof replicaof, "127.0.0.1 %d", redis_nodes_port(&primary, 0));
    replica_args[0] = "--replicaof", replica_args[1] = replicaof, replica_args[2] = NULL;
    if (redis_nodes_start(&replica, 1, replica_args, NULL) != 0 ||
        redis_group_replica_acks(redis_nodes_port(&primary, 0)) != 0) {
        fprintf(stderr, "bench_replicas: cannot start the replica\n");
        redis_nodes_stop(&primary);
        return 1;
    }
    if (server_cpu >= 0) {
        pin(&primary, server_cpu);
        pin(&replica, server_cpu);
    }
    for (i = 0; i < 2; i++)
        if (open_client(&s[i], &l[i], redis_nodes_port(&primary, 0), i) != 0 || block(&l[i], 100, lat[i], &nlat[i], &failed[i]) <= 0) {
            fprintf(stderr, "bench_replicas: %s: cannot lock\n", names[i]); /* (warm-up) */
            redis_nodes_stop(&replica);
            redis_nodes_stop(&primary);
            return 1;
        }
    nlat[0] = nlat[1] = failed[0] = failed[1] = 0;
    printf("acquire + release cycles on one lock, %d blocks of %d, alternating (servers: a primary and one replica)\n",
           blocks, cycles);
    for (b = 0; b < blocks; b++) {
        int j;
        for (j = 0; j < 2; j++) { /* the first kind alternates */
            i = (b + j) % 2;
            rate[i][b] = block(&l[i], cycles, lat[i], &nlat[i], &failed[i]);
        }
    }
    printf("%-30s %12s %10s %10s %7s\n", "client", "cycles/s", "p50 us", "p99 us", "failed");
    for (i = 0; i < 2; i++) {
        double r = bench_pct(rate[i], blocks, 0.5);
        if (nlat[i] == 0) {
            empty++;
            printf("%-30s %12s %10s %10s %7d\n", names[i], "-", "-", "-", failed[i]);
            continue;
        }
        printf("%-30s %12.0f %10.1f %10.1f %7d\n", names[i], r, bench_pct(lat[i], nlat[i], 0.5) * 1e6,
               bench_pct(lat[i], nlat[i], 0.99) * 1e6, failed[i]);
        if (failed[i]) fprintf(stderr, "bench_replicas: %s: %d failed, %d succeeded\n", names[i], failed[i], blocks * cycles - failed[i]);
    }
    printf("WAIT 1 / no WAIT: %.2f of the cycles/s (one more round trip and the replica's acknowledgement per acquire)\n",
           bench_pct(rate[1], blocks, 0.5) / bench_pct(rate[0], blocks, 0.5));
    for (i = 0; i < 2; i++) {
        redlock_socket_lock_deinit(&l[i]);
        redlock_socket_deinit(&s[i]);
    }
    redis_nodes_stop(&replica);
    redis_nodes_stop(&primary);
    if (empty) fprintf(stderr, "bench_replicas: %d rows without a success\n", empty);
    return empty ? 1 : 0;
}
