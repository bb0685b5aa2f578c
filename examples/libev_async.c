/* libev_async.c - an event-driven lock holder with the libev adapter: the
   core's watchdog keeps a 1 s lock alive for 3.5 s from the loop, then the
   program releases it and leaves the loop.

   Build:  make examples-libev   (or: cc -std=c99 -I. examples/libev_async.c
                            -lhiredis -lev)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl
           build/libev_async 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   Nodes as in every example: the argument, else $REDLOCK_NODES, else
   127.0.0.1:6379, parsed by redlock_parse_nodes() (adapters/redlock_nodes.h,
   the same for every adapter). --help prints the usage (status 0).
*/
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_libev.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ev_loop *loop;
static ev_timer work_done;             /* stands for "the work finished" */
static int exit_code = 1;

/* Every outcome arrives here, on the loop. */
static void on_result(redlock_lock *lk, const redlock_result *r)
{
    switch (r->op) {
    case REDLOCK_OP_ACQUIRE:
        if (r->status != REDLOCK_OK) {
            printf("acquire failed: %s\n", redlock_strerror(r->status));
            ev_break(loop, EVBREAK_ALL);
            return;
        }
        printf("acquired on %d nodes; working for 3.5 s under a 1 s TTL\n", r->votes);
        ev_timer_start(loop, &work_done);
        break;
    case REDLOCK_OP_EXTEND:            /* only for explicit redlock_extend() */
        break;
    case REDLOCK_OP_LOST:              /* the watchdog could not keep it: stop at once */
        printf("lock lost: %s\n", redlock_strerror(r->status));
        ev_timer_stop(loop, &work_done);
        ev_break(loop, EVBREAK_ALL);
        break;
    case REDLOCK_OP_RELEASE:
        printf("released: %s\n", redlock_strerror(r->status));
        exit_code = r->status == REDLOCK_OK ? 0 : 1;
        ev_break(loop, EVBREAK_ALL);
        break;
    default:                           /* upgrade, downgrade: readers-writer locks only */
        break;
    }
    (void)lk;
}

/* The watchdog's renewals show up as events (optional). */
static void on_event(void *user, const redlock_event *ev)
{
    (void)user;
    if (ev->type == REDLOCK_EV_RENEWED)
        printf("  renewed: valid for %lld ms more\n", (long long)(ev->validity_us / 1000));
}

static void on_work_done(struct ev_loop *l, ev_timer *w, int revents)
{
    redlock_lock *lk = (redlock_lock *)w->data;
    (void)l;
    (void)revents;
    redlock_release(lk);               /* result: on_result, op RELEASE */
}

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [NODES]\n"
                "Holds the lock example:libev-async for 3.5 s under a 1 s TTL, renewed from the loop.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n", me);
    return status;
}

int main(int argc, char **argv)
{
    const char *list = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
    char err[256];
    void *mem = NULL; /* the node strings, until init has copied them */
    redlock_libev_config o;
    redlock_libev client;
    redlock_lock_opts lo;
    redlock_lock lock;
    int rc;

    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, argv[0], 0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) return usage(stderr, argv[0], 64);
    signal(SIGPIPE, SIG_IGN);          /* hiredis writes with write(2) */
    loop = EV_DEFAULT;
    redlock_libev_config_init(&o);
    if (redlock_parse_nodes(o.node, &o.node_count, list ? list : REDLOCK_NODES_DEFAULT, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err); /* never shows a password */
        return 64;
    }
    o.on_event = on_event;
    rc = redlock_libev_init(&client, loop, &o);
    redlock_free_nodes(mem);           /* init copied what it needs */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "init: %s\n", redlock_strerror(rc));
        return 1;
    }

    memset(&lo, 0, sizeof lo);
    lo.key = "example:libev-async";
    lo.ttl_ms = 1000;
    lo.watchdog = 1;                   /* renew every ttl/3 while held */
    lo.on_result = on_result;
    redlock_lock_init(&lock, redlock_libev_client(&client), &lo);

    ev_timer_init(&work_done, on_work_done, 3.5, 0.);
    work_done.data = &lock;

    /* Connections complete inside the loop; give them a moment, then go. */
    ev_run(loop, EVRUN_NOWAIT);
    redlock_acquire(&lock);            /* result: on_result, op ACQUIRE */
    ev_run(loop, 0);                   /* until on_result breaks out */

    redlock_lock_deinit(&lock);
    redlock_libev_deinit(&client);
    return exit_code;
}
