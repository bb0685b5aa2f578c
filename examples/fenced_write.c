/* fenced_write.c - a paused holder's late write, rejected by its fence.

   No lock can stop a holder that pauses (GC, swap, a stopped VM) past its
   validity and then writes. A fenced lock hands each holder a number that
   is higher than any earlier holder's; the storage keeps the highest it
   has seen next to the data and refuses writes that carry a lower one
   (redlock_fenced_set_script(), section 11 of redlock.h).

   Here holder A takes the lock, then stops itself (SIGSTOP) before its
   write; its validity runs out; holder B takes the lock and writes; A is
   continued and tries its write, which the storage rejects. The storage is
   the first node (any Redis would do): keys example:ledger:data and
   example:ledger:fence. Exits 0 when A's late write was rejected and B's
   stands.

   Build:  make examples-hiredis   (or: cc -std=c99 -I. examples/fenced_write.c
                            -lhiredis -lpthread)
   Run:    scripts/redis-nodes.sh start 3 /tmp/rl   # prints the node list
           build/fenced_write 127.0.0.1:PORT1,127.0.0.1:PORT2,127.0.0.1:PORT3
           scripts/redis-nodes.sh stop /tmp/rl
   Nodes as in every example: the argument, else $REDLOCK_NODES, else
   127.0.0.1:6379, parsed by redlock_parse_nodes() (adapters/redlock_nodes.h).
   --help prints the usage (status 0).
*/
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TTL_MS 300
#define DATA_KEY "example:ledger:data"
#define FENCE_KEY "example:ledger:fence"

/* The storage: a plain connection to the first node (TCP or Unix socket,
   with its AUTH and SELECT; no TLS here). NULL if it cannot be reached. */
static redisContext *storage_connect(const redlock_hiredis_node *nd)
{
    redisContext *c = nd->tls.enable ? NULL : nd->unix_path ? redisConnectUnix(nd->unix_path) : redisConnect(nd->host, nd->port);
    redisReply *r = NULL;
    int ok = c && !c->err;
    if (ok && nd->password) {
        r = (redisReply *)(nd->username ? redisCommand(c, "AUTH %s %s", nd->username, nd->password)
                                        : redisCommand(c, "AUTH %s", nd->password));
        ok = r && r->type != REDIS_REPLY_ERROR;
        if (r) freeReplyObject(r);
    }
    if (ok && nd->db > 0) {
        r = (redisReply *)redisCommand(c, "SELECT %d", nd->db);
        ok = r && r->type != REDIS_REPLY_ERROR;
        if (r) freeReplyObject(r);
    }
    if (!ok && c) redisFree(c);
    return ok ? c : NULL;
}

/* The guarded write: 1 written, 0 rejected (a higher fence was seen), -1
   the storage failed. */
static int fenced_set(redisContext *storage, int64_t fence, const char *value)
{
    redisReply *r = (redisReply *)redisCommand(storage, "EVAL %s 2 %s %s %lld %s", redlock_fenced_set_script(),
                                               DATA_KEY, FENCE_KEY, (long long)fence, value);
    int rc = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -1;
    if (r) freeReplyObject(r);
    return rc;
}

/* One holder: takes the lock (fenced). 0 and the fence, or -1. */
static int take(const char *who, const redlock_hiredis_config *o, redlock_hiredis *client, redlock_hiredis_lock *lock,
                int64_t *fence)
{
    redlock_lock_opts lo;
    int rc = redlock_hiredis_init(client, o);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "%s: init: %s\n", who, redlock_strerror(rc));
        return -1;
    }
    memset(&lo, 0, sizeof lo);
    lo.key = "example:ledger";
    lo.ttl_ms = TTL_MS;
    lo.fence = 1;                          /* hand out fencing tokens */
    rc = redlock_hiredis_lock_init(client, lock, &lo);
    if (rc == REDLOCK_OK) rc = redlock_hiredis_acquire(lock);
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "%s: acquire: %s\n", who, redlock_strerror(rc));
        redlock_hiredis_lock_deinit(lock);
        redlock_hiredis_deinit(client);
        return -1;
    }
    *fence = redlock_lock_fence(&lock->lock);
    printf("%s: holds the lock, fence %lld\n", who, (long long)*fence);
    fflush(stdout);
    return 0;
}

/* Holder A, in a child process: takes the lock, reports its fence, stops
   (the pause), then writes late. Exits 0 when that write was rejected. */
static int holder_a(const redlock_hiredis_config *o, int out)
{
    redlock_hiredis client;
    redlock_hiredis_lock lock;
    redisContext *storage;
    int64_t fence;
    int rc;
    if (take("A", o, &client, &lock, &fence) != 0) return 1;
    if (write(out, &fence, sizeof fence) != (ssize_t)sizeof fence) return 1;
    raise(SIGSTOP);                        /* paused past the validity ... */
    printf("A: continued, the lock is %s; writing anyway\n",
           redlock_lock_remaining_us(&lock.lock) > 0 ? "still valid" : "no longer valid");
    storage = storage_connect(&o->node[0]);
    rc = storage ? fenced_set(storage, fence, "written by A") : -1;
    printf("A: late write with fence %lld %s\n", (long long)fence,
           rc == 0 ? "rejected" : rc == 1 ? "ACCEPTED" : "failed");
    fflush(stdout);
    if (storage) redisFree(storage);
    redlock_hiredis_lock_deinit(&lock);
    redlock_hiredis_deinit(&client);
    return rc == 0 ? 0 : 1;
}

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [NODES]\n"
                "Holder A stops past its validity, B takes the lock and writes, A's late write is refused\n"
                "by its fence; the storage is the first node. Exits 0 when so.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (no TLS for the storage; default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n",
            me);
    return status;
}

int main(int argc, char **argv)
{
    const char *list = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
    char err[256], shown[256];
    void *mem = NULL; /* the node strings: the storage and A use them after init */
    redlock_hiredis_config o;
    redlock_hiredis client;
    redlock_hiredis_lock lock;
    redisContext *storage;
    redisReply *r;
    int64_t fence_a = 0, fence_b = 0;
    int fds[2], status, wrote_b, ok;
    struct timespec past = { 0, (TTL_MS + 100) * 1000000L };
    pid_t a;

    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, argv[0], 0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) return usage(stderr, argv[0], 64);
    redlock_hiredis_config_init(&o);
    if (redlock_parse_nodes(o.node, &o.node_count, list ? list : REDLOCK_NODES_DEFAULT, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err); /* never shows a password */
        return 64;
    }
    o.connect_timeout_ms = 1000;

    if (!(storage = storage_connect(&o.node[0]))) {
        redlock_format_node(&o.node[0], shown, sizeof shown);
        fprintf(stderr, "storage: cannot use %s\n", shown);
        redlock_free_nodes(mem);
        return 1;
    }
    r = (redisReply *)redisCommand(storage, "DEL %s %s", DATA_KEY, FENCE_KEY); /* a fresh ledger */
    if (r) freeReplyObject(r);

    fflush(stdout);
    if (pipe(fds) != 0 || (a = fork()) < 0) {
        perror("fork");
        redisFree(storage);
        redlock_free_nodes(mem);
        return 1;
    }
    if (a == 0) {
        close(fds[0]);
        redisFree(storage);
        _exit(holder_a(&o, fds[1]));
    }
    close(fds[1]);
    /* wait until A holds the lock and has stopped */
    if (read(fds[0], &fence_a, sizeof fence_a) != (ssize_t)sizeof fence_a ||
        waitpid(a, &status, WUNTRACED) != a || !WIFSTOPPED(status)) {
        fprintf(stderr, "A did not take the lock\n");
        kill(a, SIGKILL);
        waitpid(a, &status, 0);
        redisFree(storage);
        redlock_free_nodes(mem);
        return 1;
    }
    printf("A: stopped (SIGSTOP) before its write\n");
    nanosleep(&past, NULL);                /* A's validity runs out */

    ok = take("B", &o, &client, &lock, &fence_b) == 0;
    wrote_b = ok ? fenced_set(storage, fence_b, "written by B") : -1;
    if (ok) {
        printf("B: write with fence %lld %s\n", (long long)fence_b, wrote_b == 1 ? "accepted" : "REJECTED");
        redlock_hiredis_release(&lock);
        redlock_hiredis_lock_deinit(&lock);
        redlock_hiredis_deinit(&client);
    }
    fflush(stdout);

    kill(a, SIGCONT);
    waitpid(a, &status, 0);
    r = (redisReply *)redisCommand(storage, "GET %s", DATA_KEY);
    printf("ledger: %s\n", r && r->type == REDIS_REPLY_STRING ? r->str : "(nothing)");
    ok = ok && wrote_b == 1 && fence_b > fence_a && WIFEXITED(status) && WEXITSTATUS(status) == 0 && r &&
         r->type == REDIS_REPLY_STRING && strcmp(r->str, "written by B") == 0;
    if (r) freeReplyObject(r);
    redisFree(storage);
    redlock_free_nodes(mem);
    return ok ? 0 : 1;
}
