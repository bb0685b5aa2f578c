/* sentinel_group.c - runs shell snippets of the tool's tests beside a
   Sentinel-managed group (tests/shared/redis_group.h: a primary, a
   replica, three sentinels, started here and stopped by PID).
   Usage: sentinel_group NAME BEFORE [AFTER]
   BEFORE runs with SNODES (the group as a redis-sentinel:// node) and
   PRIMARY (its port); then, if AFTER is given, SENTINEL FAILOVER, and
   AFTER runs with FAILOVER_MS (the wall clock in ms when the failover
   began) and PRIMARY (the new one). Exits 0, or 1 if the group or the
   failover did not come up (said on stderr). */
#define _POSIX_C_SOURCE 200809L
#include "redis_group.h"

#include <sys/time.h>
#include <sys/wait.h>

static int run_sh(const char *snippet)
{
    int st;
    pid_t p = fork();
    if (p == 0) {
        execl("/bin/sh", "sh", "-c", snippet, (char *)0);
        _exit(127);
    }
    return p > 0 && waitpid(p, &st, 0) == p ? 0 : -1;
}

int main(int argc, char **argv)
{
    redis_group g;
    char env[256];
    struct timeval tv;
    if (argc < 3) {
        fprintf(stderr, "usage: sentinel_group NAME BEFORE [AFTER]\n");
        return 2;
    }
    redis_nodes_deadline(120);
    if (redis_group_start(&g, argv[1], 3) != 0) {
        fprintf(stderr, "sentinel_group: the group did not start\n");
        return 1;
    }
    snprintf(env, sizeof env, "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/%s", redis_group_sentinel_port(&g, 0),
             redis_group_sentinel_port(&g, 1), redis_group_sentinel_port(&g, 2), argv[1]);
    setenv("SNODES", env, 1);
    snprintf(env, sizeof env, "%d", redis_group_primary_port(&g));
    setenv("PRIMARY", env, 1);
    run_sh(argv[2]);
    if (argc > 3) {
        int now;
        gettimeofday(&tv, NULL);
        snprintf(env, sizeof env, "%lld", (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
        setenv("FAILOVER_MS", env, 1);
        if ((now = redis_group_failover(&g)) < 0) {
            fprintf(stderr, "sentinel_group: the failover did not complete\n");
            redis_group_stop(&g);
            return 1;
        }
        snprintf(env, sizeof env, "%d", now);
        setenv("PRIMARY", env, 1);
        run_sh(argv[3]);
    }
    redis_group_stop(&g);
    return 0;
}
