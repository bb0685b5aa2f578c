/* hiredis_sync.c - take a distributed lock with the blocking hiredis adapter.

   Build:  make examples-hiredis   (or: cc -std=c99 -I. examples/hiredis_sync.c
                            -lhiredis -lpthread)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl   # prints the node list
           build/hiredis_sync 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   Nodes as in every example: the argument, else $REDLOCK_NODES, else
   127.0.0.1:6379, parsed by redlock_parse_nodes() (adapters/redlock_nodes.h,
   the same for every adapter; a password goes in a URL:
   redis://:PASSWORD@host:port). --help prints the usage (status 0).
*/
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION /* the core's implementation lives in this file */
#define REDLOCK_HIREDIS_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [NODES]\n"
                "Takes the lock example:hiredis-sync (2 s TTL), extends it, releases it.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n", me);
    return status;
}

int main(int argc, char **argv)
{
    const char *list = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
    char err[256];
    void *mem = NULL; /* the node strings, until init has copied them */
    redlock_hiredis_config o;
    redlock_hiredis client;
    redlock_hiredis_lock lock;
    redlock_lock_opts lo;
    redlock_result r;
    int rc;

    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, argv[0], 0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) return usage(stderr, argv[0], 64);
    redlock_hiredis_config_init(&o);     /* defaults: timeouts, core settings */
    if (redlock_parse_nodes(o.node, &o.node_count, list ? list : REDLOCK_NODES_DEFAULT, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err); /* never shows a password */
        return 64;
    }
    o.core.retry_count = 5;            /* retries after the first attempt */

    /* Connects every node; a node that is down is retried on use. */
    rc = redlock_hiredis_init(&client, &o);
    redlock_free_nodes(mem);           /* init copied what it needs */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "init: %s\n", redlock_strerror(rc));
        return 1;
    }

    memset(&lo, 0, sizeof lo);
    lo.key = "example:hiredis-sync";
    lo.ttl_ms = 2000;                  /* the lock expires by itself after 2 s */
    redlock_hiredis_lock_init(&client, &lock, &lo);

    /* Blocks until a majority of the nodes granted the lock, or gave up. */
    rc = redlock_hiredis_acquire(&lock);
    r = *redlock_hiredis_last_result(&lock);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "acquire: %s\n", redlock_strerror(rc));
    } else {
        printf("acquired on %d of %d nodes, valid for %lld ms, token %s\n", r.votes,
               o.node_count, (long long)(r.validity_us / 1000), redlock_lock_token(&lock.lock));

        /* ... work that must not run twice at once; stay inside the validity ... */

        /* Need more time? Extend while still valid. */
        rc = redlock_hiredis_extend(&lock, 2000);
        r = *redlock_hiredis_last_result(&lock);
        printf("extend: %s\n", redlock_strerror(rc));

        rc = redlock_hiredis_release(&lock);
        r = *redlock_hiredis_last_result(&lock);
        printf("release: %s (deleted on %d nodes)\n", redlock_strerror(rc), r.votes);
    }

    redlock_hiredis_lock_deinit(&lock);
    redlock_hiredis_deinit(&client);
    return rc == REDLOCK_OK ? 0 : 1;
}
