/* socket.c - take a distributed lock over raw sockets: no hiredis, no
   dependency besides libc (adapters/redlock_socket.h speaks RESP itself).

   Build:  make examples-socket   (or: cc -std=c99 -I. examples/socket.c)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl   # prints the node list
           build/example_socket 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   A node may also be a Unix socket path (anything starting with '/').
*/
#define REDLOCK_IMPLEMENTATION        /* the core's implementation ...      */
#define REDLOCK_SOCKET_IMPLEMENTATION /* ... and the adapter's, in this file */
#include "adapters/redlock_socket.h"

#include <stdio.h>
#include <stdlib.h>

/* Every result, including "lost", arrives here too. */
static void on_result(redlock_lock *lock, const redlock_result *r)
{
    (void)lock;
    if (r->op == REDLOCK_OP_LOST) fprintf(stderr, "lock lost: %s\n", redlock_strerror(r->status));
}

int main(int argc, char **argv)
{
    char list[1024], *item;
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock lock;
    redlock_lock_opts o;
    int rc, i;

    /* 1. Nodes: "host:port,..." (default one node on 127.0.0.1:6379). */
    redlock_socket_config_init(&cfg);
    cfg.node_count = 0;
    snprintf(list, sizeof list, "%s", argc > 1 ? argv[1] : "127.0.0.1:6379");
    for (item = strtok(list, ","); item && cfg.node_count < REDLOCK_MAX_NODES; item = strtok(NULL, ",")) {
        redlock_socket_node *nd = &cfg.node[cfg.node_count++];
        char *colon = strrchr(item, ':');
        if (item[0] == '/') {
            nd->unix_path = item;
            continue;
        }
        nd->host = item;
        if (colon) {
            *colon = 0;
            nd->port = atoi(colon + 1);
        }
    }
    cfg.node[0].password = getenv("REDIS_PASSWORD"); /* optional AUTH (all nodes: set each) */
    for (i = 1; i < cfg.node_count; i++) cfg.node[i].password = cfg.node[0].password;

    /* 2. The adapter: connections open on first use (or now, with connect). */
    if ((rc = redlock_socket_init(&s, &cfg)) != REDLOCK_OK) {
        fprintf(stderr, "init: %s\n", redlock_strerror(rc));
        return 1;
    }
    if ((rc = redlock_socket_connect(&s)) != REDLOCK_OK) /* not fatal: a quorum may still be up */
        fprintf(stderr, "connect: %s (continuing)\n", redlock_strerror(rc));

    /* 3. A lock: 3 s TTL, renewed by the watchdog while we run the loop. */
    memset(&o, 0, sizeof o);
    o.key = "example:socket";
    o.ttl_ms = 3000;
    o.watchdog = 1;
    o.on_result = on_result;
    redlock_socket_lock_init(&s, &lock, &o);

    /* 4. Acquire: blocks until the core has decided (with its retries). */
    rc = redlock_socket_acquire(&lock);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "not acquired: %s\n", redlock_strerror(rc));
    } else {
        printf("acquired, %d votes, valid for %lld ms\n", redlock_socket_last_result(&lock)->votes,
               (long long)redlock_socket_last_result(&lock)->validity_us / 1000);
        /* 5. "Work" for 5 s, longer than the TTL: keep the loop running so
           the watchdog renews; stop at once if the lock is lost. */
        for (i = 0; i < 50 && redlock_lock_state(&lock.lock) == REDLOCK_STATE_HELD; i++)
            redlock_socket_run(&s, 100); /* your work would go between these calls */
        /* 6. Release (only our token is deleted). */
        rc = redlock_socket_release(&lock);
        printf("released: %s\n", redlock_strerror(rc));
    }
    redlock_socket_lock_deinit(&lock);
    redlock_socket_deinit(&s);
    return rc == REDLOCK_OK ? 0 : 1;
}
