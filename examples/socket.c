/* socket.c - take a distributed lock over raw sockets and keep it through
   a job longer than its TTL: no hiredis, no dependency besides libc and
   POSIX threads (adapters/redlock_socket.h speaks RESP itself; its
   watchdog thread renews the lock while the job runs).

   Build:  make examples-socket   (or: cc -std=c99 -I. examples/socket.c -pthread)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl   # prints the node list
           build/example_socket 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   Every example takes its nodes the same way: the argument, else
   $REDLOCK_NODES, else 127.0.0.1:6379, in the syntax the `redlock` tool
   reads (redlock_parse_nodes(), adapters/redlock_nodes.h): host:port,
   [ipv6]:port, /path/to/redis.sock, redis://[user:pass@]host[:port][/db],
   unix://[user:pass@]/path[?db=N]. --help prints the usage (status 0); a
   bad command line exits 64.
*/
#define REDLOCK_IMPLEMENTATION        /* the core's implementation ...      */
#define REDLOCK_SOCKET_IMPLEMENTATION /* ... and the adapter's, in this file */
#define REDLOCK_SOCKET_THREAD         /* with the watchdog thread (-pthread) */
#include "adapters/redlock_socket.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every result, including "lost", arrives here too: a loss at once, on
   the watchdog thread (keep it short; the adapter's getters work here). */
static void on_result(redlock_lock *lock, const redlock_result *r)
{
    (void)lock;
    if (r->op == REDLOCK_OP_LOST) fprintf(stderr, "lock lost: %s\n", redlock_strerror(r->status));
}

/* The job: one blocking call (a backup, a migration), longer than the TTL. */
static void do_work(void) { sleep(5); }

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [NODES]\n"
                "Takes the lock example:socket (3 s TTL) for a 5 s job; the watchdog thread renews it.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n", me);
    return status;
}

int main(int argc, char **argv)
{
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock lock;
    redlock_lock_opts o;
    void *nodes = NULL; /* the node strings, until init has copied them */
    const char *list = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
    char err[256];
    int rc, i;

    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, argv[0], 0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) return usage(stderr, argv[0], 64);
    /* 1. Nodes: a list as users write it. */
    redlock_socket_config_init(&cfg);
    if (redlock_parse_nodes(cfg.node, &cfg.node_count, list ? list : REDLOCK_NODES_DEFAULT, &nodes, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err); /* never shows a password */
        return 64;
    }
    for (i = 0; i < cfg.node_count; i++) { /* how to name a node in a message */
        char shown[256];
        redlock_format_node(&cfg.node[i], shown, sizeof shown);
        printf("node %d: %s\n", i, shown);
    }

    /* 2. The adapter: connections open on first use (or now, with connect);
       its thread renews held locks while we do something else. */
    cfg.watchdog_thread = 1;
    rc = redlock_socket_init(&s, &cfg);
    redlock_free_nodes(nodes); /* init copied what it needs */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "init: %s\n", redlock_strerror(rc));
        return 1;
    }
    if ((rc = redlock_socket_connect(&s)) != REDLOCK_OK) /* not fatal: a quorum may still be up */
        fprintf(stderr, "connect: %s (continuing)\n", redlock_strerror(rc));

    /* 3. A lock: 3 s TTL, renewed by the watchdog (every second) while held. */
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
        /* 5. Work for 5 s, longer than the TTL, without calling the
           adapter: the thread renews meanwhile. */
        do_work();
        printf("after the job: %s\n", redlock_socket_lock_state(&lock) == REDLOCK_STATE_HELD ? "still held" : "lost");
        /* 6. Release (only our token is deleted): OK, it was ours to the end. */
        rc = redlock_socket_release(&lock);
        printf("released: %s\n", redlock_strerror(rc));
    }
    redlock_socket_lock_deinit(&lock);
    redlock_socket_deinit(&s);
    return rc == REDLOCK_OK ? 0 : 1;
}
