/* cluster.c - runs a shell snippet of the tool's tests beside a 3-master
   Redis Cluster (tests/shared/redis_cluster.h: started here, durable,
   stopped by PID).
   Usage: cluster SNIPPET
   The snippet runs with CNODES (the cluster as a redis-cluster:// node,
   its three masters as seeds) and PORT0..PORT2 (the masters' ports, in
   slot order: PORT0 serves 0-5460). With CLUSTER_TLS_DIR set (the
   certificates of tests/shared/tls_certs.sh) the cluster speaks TLS
   (redis_cluster_start_tls): CNODES is then a rediss-cluster:// node on
   the TLS ports, PORT0..PORT2 stay the plain ones. Exits 0, or 1 if the
   cluster did not come up (said on stderr). */
#define _POSIX_C_SOURCE 200809L
#include "redis_cluster.h"

#include <sys/wait.h>

int main(int argc, char **argv)
{
    redis_cluster c;
    const char *dir = getenv("CLUSTER_TLS_DIR");
    char env[256], name[16], files[5][200];
    const char *tls_args[] = { "--tls-cert-file", files[0], "--tls-key-file", files[1], "--tls-client-cert-file",
                               files[2], "--tls-client-key-file", files[3], "--tls-ca-cert-file", files[4],
                               "--tls-auth-clients", "no", NULL };
    static const char *const names[5] = { "server.crt", "server.key", "client.crt", "client.key", "ca.crt" };
    int i, st, tls = dir && dir[0];
    pid_t p;
    if (argc < 2) {
        fprintf(stderr, "usage: cluster SNIPPET\n");
        return 2;
    }
    redis_nodes_deadline(120);
    for (i = 0; i < 5; i++) snprintf(files[i], sizeof files[i], "%.150s/%s", tls ? dir : "", names[i]);
    if ((tls ? redis_cluster_start_tls(&c, 3, 1, tls_args) : redis_cluster_start(&c, 3, 1)) != 0) {
        fprintf(stderr, "cluster: the cluster did not start\n");
        return 1;
    }
    if (tls)
        snprintf(env, sizeof env, "rediss-cluster://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d",
                 redis_cluster_tls_port(&c, 0), redis_cluster_tls_port(&c, 1), redis_cluster_tls_port(&c, 2));
    else
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
