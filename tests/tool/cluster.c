/* cluster.c - runs a shell snippet of the tool's tests beside a 3-master
   Redis Cluster (tests/shared/redis_cluster.h: started here, durable,
   stopped by PID).
   Usage: cluster SNIPPET
   The snippet runs with CNODES (the cluster as a redis-cluster:// node,
   its three masters as seeds) and PORT0..PORT2 (the masters' ports, in
   slot order: PORT0 serves 0-5460). Exits 0, or 1 if the cluster did not
   come up (said on stderr). */
#define _POSIX_C_SOURCE 200809L
#include "redis_cluster.h"

#include <sys/wait.h>

int main(int argc, char **argv)
{
    redis_cluster c;
    char env[256], name[16];
    int i, st;
    pid_t p;
    if (argc < 2) {
        fprintf(stderr, "usage: cluster SNIPPET\n");
        return 2;
    }
    redis_nodes_deadline(120);
    if (redis_cluster_start(&c, 3, 1) != 0) {
        fprintf(stderr, "cluster: the cluster did not start\n");
        return 1;
    }
    snprintf(env, sizeof env, "redis-cluster://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d", redis_cluster_port(&c, 0),
             redis_cluster_port(&c, 1), redis_cluster_port(&c, 2));
    setenv("CNODES", env, 1);
    for (i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "PORT%d", i);
        snprintf(env, sizeof env, "%d", redis_cluster_port(&c, i));
        setenv(name, env, 1);
    }
    if ((p = fork()) == 0) {
        execl("/bin/sh", "sh", "-c", argv[1], (char *)0);
        _exit(127);
    }
    if (p > 0) waitpid(p, &st, 0);
    redis_cluster_stop(&c);
    return 0;
}
