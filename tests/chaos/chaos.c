/* chaos.c - the chaos test: real redis-server nodes, real client
   processes, a seeded fault injector, and a checker (tests/chaos/README.md).

       build/chaos [--seconds N] [--clients N] [--keys N] [--ttl MS]
                   [--seed N] [--min-faults N] [--control] [--keep]

   Five nodes start on loopback, each behind a route of the test's TCP
   proxy (tests/shared/tcp_proxy.h); the clients (client.c, one process
   each) contend for a few keys through the proxy with the watchdog on.
   For --seconds, the injector picks a fault every 20-120 ms:
     kill        kill -9 a node; it restarts empty (and without persistence
                 from then on) the max TTL + 50-500 ms later. (Restarted
                 sooner, the clients' restart rule keeps new holders off
                 its grants, but each restart also takes the node from the
                 current holder: together with a clock jump on another of
                 its nodes that is more than the algorithm survives.)
     pause       SIGSTOP a node, shorter than the TTL (50 ms .. TTL/2) or
     pause-long  longer (TTL + 100 ms .. 2 TTL), then SIGCONT
     latency     a node's route delays every chunk 5-60 ms, for 0.2-1 s
     blackhole   a node's route stalls both ways for 0.1-1.2 s (a partition)
     cut         the next reply on each connection of a route stops half-way
     reset       every connection of a route is reset
     client-pause / client-pause-long
                 SIGSTOP a client (a holder when there is one), shorter or
                 longer than the TTL
     jump        a server clock jump: a held key's TTL cut to 1 ms on one
                 node, from an admin connection; only while the key holds the
                 same token on all five nodes and no node is impaired, so
                 that the holder keeps a majority (the algorithm's premise:
                 clock faults on a minority)
   At most two nodes are impaired (down, paused, black-holed) at once, so
   that a majority stays reachable and locks keep changing hands.
   Then every fault is undone (killed nodes wait out their delay), the
   clients release and exit, and the checker (check.c) reads their logs:
   no overlap, every loss reported by the validity end, and no key left
   behind (each key still present right after has a TTL; none remains
   one TTL later). --control runs clients that ignore validity and loss:
   the same checker must then find overlaps (exit 0 only if it does).
   Exit status 0 when every check holds. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, besides POSIX 2008 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "redis_nodes.h"
#include "tcp_proxy.h"
#include "chaos.h"

enum fault {
    F_KILL, F_PAUSE, F_PAUSE_LONG, F_LATENCY, F_BLACKHOLE, F_CUT, F_RESET, F_CLIENT_PAUSE, F_CLIENT_PAUSE_LONG,
    F_JUMP, F_KINDS
};
static const char *const fault_names[F_KINDS] = { "kill", "pause", "pause-long", "latency", "blackhole", "cut",
                                                  "reset", "client-pause", "client-pause-long", "jump" };

typedef struct options {
    int seconds, clients, keys, min_faults, control, keep;
    int64_t ttl_ms;
    uint64_t seed;
} options;

/* What the injector did to each node and client, and when to undo it. */
typedef struct world {
    const options *opt;
    redis_nodes rn;
    tcp_proxy proxy;
    chaos_shared *sh;
    pid_t client[CHAOS_MAX_CLIENTS];
    int64_t node_down_until[CHAOS_NODES];      /* killed: restart at (0: up) */
    int64_t node_paused_until[CHAOS_NODES];
    int64_t node_blackhole_until[CHAOS_NODES];
    int64_t node_latency_until[CHAOS_NODES];
    int64_t client_paused_until[CHAOS_MAX_CLIENTS];
    int client_pause_slot[CHAOS_MAX_CLIENTS];  /* index in pauses[] */
    chaos_pause pauses[CHAOS_MAX_PAUSES];
    int npauses;
    long injected[F_KINDS], jump_skipped, restarts;
    int64_t jump_until, jump_next;             /* a jump waits for its conditions */
    uint64_t rng;
} world;

static uint64_t rnd(world *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static int64_t rnd_range(world *w, int64_t lo, int64_t hi) { return lo + (int64_t)(rnd(w) % (uint64_t)(hi - lo + 1)); }

static int node_impaired(const world *w, int i)
{
    return w->node_down_until[i] || w->node_paused_until[i] || w->node_blackhole_until[i];
}

static int impaired_count(const world *w)
{
    int i, n = 0;
    for (i = 0; i < CHAOS_NODES; i++) n += node_impaired(w, i) != 0;
    return n;
}

/* A random node that is not impaired, or -1. */
static int pick_healthy_node(world *w)
{
    int cand[CHAOS_NODES], n = 0, i;
    for (i = 0; i < CHAOS_NODES; i++)
        if (!node_impaired(w, i)) cand[n++] = i;
    return n ? cand[rnd(w) % (uint64_t)n] : -1;
}

/* A running client: a holder when one exists (a pause then matters), three
   times in four (always in the negative control, so that it fires). */
static int pick_client(world *w)
{
    int cand[CHAOS_MAX_CLIENTS], n = 0, i, holders = 0;
    for (i = 0; i < w->opt->clients; i++)
        if (!w->client_paused_until[i] && w->sh->holding[i]) cand[n++] = i;
    holders = n;
    if (!holders || (!w->opt->control && rnd(w) % 4 == 0))
        for (n = 0, i = 0; i < w->opt->clients; i++)
            if (!w->client_paused_until[i]) cand[n++] = i;
    return n ? cand[rnd(w) % (uint64_t)n] : -1;
}

/* The clock jump: finds a key whose token is the same on all five nodes,
   with at least half a TTL left on each, and expires it on one node. */
static int clock_jump(world *w)
{
    int k, i;
    if (impaired_count(w) != 0) return 0;
    for (k = 0; k < w->opt->keys; k++) {
        char key[32], token[128], out[128];
        int same = 1;
        snprintf(key, sizeof key, "chaos:%d", k);
        token[0] = 0;
        for (i = 0; i < CHAOS_NODES && same; i++) {
            if (redis_nodes_cmd(&w->rn, i, out, sizeof out, "GET", key, NULL) != 0 || out[0] == '$' ||
                out[0] == '-' || (i > 0 && strcmp(out, token) != 0))
                same = 0;
            else if (i == 0)
                snprintf(token, sizeof token, "%s", out);
            if (same && (redis_nodes_cmd(&w->rn, i, out, sizeof out, "PTTL", key, NULL) != 0 || out[0] != ':' ||
                         atoll(out + 1) < w->opt->ttl_ms / 2))
                same = 0;
        }
        if (!same) continue;
        i = (int)(rnd(w) % CHAOS_NODES);
        if (redis_nodes_cmd(&w->rn, i, out, sizeof out, "EVAL",
                            "if redis.call('get', KEYS[1]) == ARGV[1] then "
                            "return redis.call('pexpire', KEYS[1], 1) end return 0",
                            "1", key, token, NULL) == 0 &&
            strcmp(out, ":1") == 0)
            return 1;
    }
    return 0;
}

static int inject(world *w, int64_t now)
{
    int kind = (int)(rnd(w) % F_KINDS), i;
    int64_t ttl_us = w->opt->ttl_ms * 1000;
    switch (kind) {
    case F_KILL: case F_PAUSE: case F_PAUSE_LONG: case F_BLACKHOLE:
        if (impaired_count(w) >= 2 || (i = pick_healthy_node(w)) < 0) return -1;
        if (kind == F_KILL) {
            redis_node_kill(&w->rn, i);
            w->node_down_until[i] = now + ttl_us + rnd_range(w, 50, 500) * 1000;
        } else if (kind == F_BLACKHOLE) {
            tcp_proxy_blackhole(&w->proxy, i, 1);
            w->node_blackhole_until[i] = now + rnd_range(w, 100, 1200) * 1000;
        } else {
            redis_node_pause(&w->rn, i);
            w->node_paused_until[i] = now + (kind == F_PAUSE ? rnd_range(w, 50, w->opt->ttl_ms / 2)
                                                              : rnd_range(w, w->opt->ttl_ms + 100, 2 * w->opt->ttl_ms)) *
                                                  1000;
        }
        break;
    case F_LATENCY:
        i = (int)(rnd(w) % CHAOS_NODES);
        tcp_proxy_latency(&w->proxy, i, (int)rnd_range(w, 5, 60));
        w->node_latency_until[i] = now + rnd_range(w, 200, 1000) * 1000;
        break;
    case F_CUT: tcp_proxy_cut_reply(&w->proxy, (int)(rnd(w) % CHAOS_NODES)); break;
    case F_RESET: tcp_proxy_reset(&w->proxy, (int)(rnd(w) % CHAOS_NODES)); break;
    case F_CLIENT_PAUSE: case F_CLIENT_PAUSE_LONG: {
        int64_t len = kind == F_CLIENT_PAUSE ? rnd_range(w, 20, w->opt->ttl_ms / 2) * 1000
                                             : rnd_range(w, w->opt->ttl_ms + 100, 2 * w->opt->ttl_ms) * 1000;
        if ((i = pick_client(w)) < 0 || w->npauses == CHAOS_MAX_PAUSES) return -1;
        kill(w->client[i], SIGSTOP);
        w->client_paused_until[i] = now + len;
        w->client_pause_slot[i] = w->npauses;
        w->pauses[w->npauses].client = i;
        w->pauses[w->npauses].from_us = now;
        w->pauses[w->npauses].to_us = now + len; /* corrected at SIGCONT */
        w->npauses++;
        break;
    }
    case F_JUMP: /* tried again every 20 ms for up to a second (see jump_pending) */
        if (!clock_jump(w)) {
            if (!w->jump_until) w->jump_until = now + 1000000;
            return -1;
        }
        break;
    }
    w->injected[kind]++;
    return kind;
}

/* Undoes what is due (everything, with force: the end of the run; killed
   nodes still wait out their delay). */
static int undo(world *w, int64_t now, int force)
{
    int i, rc = 0;
    for (i = 0; i < CHAOS_NODES; i++) {
        if (w->node_down_until[i] && now >= w->node_down_until[i]) {
            if (redis_node_restart_volatile(&w->rn, i) != 0) {
                printf("#   node %d did not restart\n", i);
                rc = -1;
            }
            w->restarts++;
            w->node_down_until[i] = 0;
        }
        if (w->node_paused_until[i] && (force || now >= w->node_paused_until[i])) {
            redis_node_resume(&w->rn, i);
            w->node_paused_until[i] = 0;
        }
        if (w->node_blackhole_until[i] && (force || now >= w->node_blackhole_until[i])) {
            tcp_proxy_blackhole(&w->proxy, i, 0);
            w->node_blackhole_until[i] = 0;
        }
        if (w->node_latency_until[i] && (force || now >= w->node_latency_until[i])) {
            tcp_proxy_latency(&w->proxy, i, 0);
            w->node_latency_until[i] = 0;
        }
    }
    for (i = 0; i < w->opt->clients; i++)
        if (w->client_paused_until[i] && (force || now >= w->client_paused_until[i])) {
            kill(w->client[i], SIGCONT);
            w->pauses[w->client_pause_slot[i]].to_us = chaos_now_us();
            w->client_paused_until[i] = 0;
        }
    return rc;
}

/* A jump that found no key on all nodes (or an impaired node) tries again
   for a second: faults are frequent, and its conditions come and go. */
static void jump_pending(world *w, int64_t now)
{
    if (!w->jump_until || now < w->jump_next) return;
    w->jump_next = now + 20000;
    if (clock_jump(w)) {
        w->injected[F_JUMP]++;
        w->jump_until = 0;
    } else if (now >= w->jump_until) {
        w->jump_skipped++;
        w->jump_until = 0;
    }
}

static int any_down(const world *w)
{
    int i;
    for (i = 0; i < CHAOS_NODES; i++)
        if (w->node_down_until[i]) return 1;
    return 0;
}

static void child_signals_default(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };
    size_t i;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

/* Waits for every client to exit (bounded); 0 when all exited 0. */
static int reap_clients(world *w, int64_t within_us)
{
    int64_t until = chaos_now_us() + within_us;
    int left = w->opt->clients, i, rc = 0;
    while (left > 0) {
        for (i = 0; i < w->opt->clients; i++) {
            int st;
            if (w->client[i] <= 0) continue;
            if (waitpid(w->client[i], &st, WNOHANG) == w->client[i]) {
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    printf("#   client %d ended with status 0x%x\n", i, st);
                    rc = -1;
                }
                w->client[i] = 0;
                left--;
            }
        }
        if (left > 0 && chaos_now_us() > until) {
            for (i = 0; i < w->opt->clients; i++)
                if (w->client[i] > 0) {
                    printf("#   client %d did not stop: killed\n", i);
                    kill(w->client[i], SIGKILL);
                    waitpid(w->client[i], NULL, 0);
                    w->client[i] = 0;
                }
            return -1;
        }
        if (left > 0) redis_nodes__sleep_ms(5);
    }
    return rc;
}

/* Keys left once everything stopped: each must have a TTL (PTTL -1 is a
   key that would never go); one TTL later none may remain. */
static int keys_left(world *w, long *now_count, long *later_count)
{
    int i, k, rc = 0;
    char out[64], key[32];
    *now_count = *later_count = 0;
    for (i = 0; i < CHAOS_NODES; i++)
        for (k = 0; k < w->opt->keys; k++) {
            snprintf(key, sizeof key, "chaos:%d", k);
            if (redis_nodes_cmd(&w->rn, i, out, sizeof out, "PTTL", key, NULL) != 0) {
                printf("#   node %d: no answer\n", i);
                rc = -1;
            } else if (strcmp(out, ":-1") == 0) {
                printf("#   node %d: %s has no TTL\n", i, key);
                rc = -1;
            } else if (strcmp(out, ":-2") != 0) {
                (*now_count)++;
            }
        }
    redis_nodes__sleep_ms((long)w->opt->ttl_ms + 200);
    for (i = 0; i < CHAOS_NODES; i++) {
        if (redis_nodes_cmd(&w->rn, i, out, sizeof out, "DBSIZE", NULL) != 0 || out[0] != ':') {
            rc = -1;
            continue;
        }
        *later_count += atol(out + 1);
    }
    if (*later_count) rc = -1;
    return rc;
}

static int parse_options(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->seconds = 20;
    o->clients = 16;
    o->keys = 3;
    o->ttl_ms = 500;
    o->seed = 1;
    o->min_faults = 100;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--control")) o->control = 1;
        else if (!strcmp(a, "--keep")) o->keep = 1;
        else if (v && !strcmp(a, "--seconds")) o->seconds = atoi(v), i++;
        else if (v && !strcmp(a, "--clients")) o->clients = atoi(v), i++;
        else if (v && !strcmp(a, "--keys")) o->keys = atoi(v), i++;
        else if (v && !strcmp(a, "--ttl")) o->ttl_ms = atoll(v), i++;
        else if (v && !strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10), i++;
        else if (v && !strcmp(a, "--min-faults")) o->min_faults = atoi(v), i++;
        else {
            fprintf(stderr, "chaos: unknown or incomplete argument '%s'\n", a);
            return -1;
        }
    }
    if (o->seconds < 1 || o->seconds > 86400 || o->clients < 1 || o->clients > CHAOS_MAX_CLIENTS || o->keys < 1 ||
        o->keys > CHAOS_MAX_KEYS || o->ttl_ms < 100 || o->ttl_ms > 60000 || o->seed == 0) {
        fprintf(stderr, "chaos: out of range: seconds 1..86400, clients 1..%d, keys 1..%d, ttl 100..60000, seed > 0\n",
                CHAOS_MAX_CLIENTS, CHAOS_MAX_KEYS);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static world w;
    options opt;
    char dir[] = "/tmp/redlock-chaos.XXXXXX", paths[CHAOS_MAX_CLIENTS][600];
    const char *path_list[CHAOS_MAX_CLIENTS];
    int i, ports[CHAOS_NODES], failed = 0;
    int64_t start, deadline, next_fault;
    long total = 0, keys_now = 0, keys_later = 0;
    chaos_report rep;
    const char *name;

    if (parse_options(argc, argv, &opt) != 0) return 64;
    name = opt.control ? "chaos-control" : "chaos";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!mkdtemp(dir)) {
        printf("not ok %s: mkdtemp failed\n", name);
        return 1;
    }
    if (chaos_check_self_test(dir) != 0) {
        printf("not ok %s: the checker misjudged a made-up history\n", name);
        return 1;
    }
    printf("ok %s: the checker finds a made-up overlap, a late and an unreported loss\n", name);
    redis_nodes_deadline((unsigned)opt.seconds + 120);
    w.opt = &opt;
    w.rng = opt.seed * 0x2545F4914F6CDD1Dull;
    if (redis_nodes_start(&w.rn, CHAOS_NODES, NULL, NULL) != 0) {
        printf("not ok %s: redis-server nodes did not start\n", name);
        return 1;
    }
    for (i = 0; i < CHAOS_NODES; i++) ports[i] = redis_nodes_port(&w.rn, i);
    if (tcp_proxy_start(&w.proxy, CHAOS_NODES, ports) != 0) {
        printf("not ok %s: proxy did not start\n", name);
        redis_nodes_stop(&w.rn);
        return 1;
    }
    w.sh = (chaos_shared *)mmap(NULL, sizeof *w.sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w.sh == (chaos_shared *)MAP_FAILED) {
        printf("not ok %s: mmap failed\n", name);
        tcp_proxy_stop(&w.proxy);
        redis_nodes_stop(&w.rn);
        return 1;
    }
    memset((void *)w.sh, 0, sizeof *w.sh);
    printf("# %s: %d nodes, %d clients, %d keys, ttl %lld ms, %d s, seed %llu, logs in %s\n", name, CHAOS_NODES,
           opt.clients, opt.keys, (long long)opt.ttl_ms, opt.seconds, (unsigned long long)opt.seed, dir);

    for (i = 0; i < opt.clients; i++) {
        chaos_client_cfg cc;
        int k;
        memset(&cc, 0, sizeof cc);
        cc.id = i;
        for (k = 0; k < CHAOS_NODES; k++) cc.port[k] = w.proxy.port[k];
        cc.keys = opt.keys;
        cc.ttl_ms = opt.ttl_ms;
        cc.seed = opt.seed;
        cc.ignore_validity = opt.control;
        snprintf(paths[i], sizeof paths[i], "%s/client-%02d.log", dir, i);
        path_list[i] = paths[i];
        cc.log_path = paths[i];
        cc.shared = w.sh;
        fflush(NULL);
        w.client[i] = fork();
        if (w.client[i] == 0) {
            child_signals_default();
            _exit(chaos_client_run(&cc));
        }
        if (w.client[i] < 0) {
            printf("not ok %s: fork failed\n", name);
            w.client[i] = 0;
            failed = 1;
            break;
        }
    }

    start = chaos_now_us();
    deadline = start + (int64_t)opt.seconds * 1000000;
    next_fault = start + 200000; /* let the clients connect first */
    while (!failed && chaos_now_us() < deadline) {
        int64_t now = chaos_now_us();
        if (undo(&w, now, 0) != 0) failed = 1;
        jump_pending(&w, now);
        if (now >= next_fault) {
            inject(&w, now);
            next_fault = now + rnd_range(&w, 20, 120) * 1000;
        }
        redis_nodes__sleep_ms(2);
    }
    /* the end: heal everything (killed nodes after their delay), then stop */
    undo(&w, chaos_now_us(), 1);
    while (any_down(&w)) {
        if (undo(&w, chaos_now_us(), 1) != 0) failed = 1;
        redis_nodes__sleep_ms(5);
    }
    w.sh->stop = 1;
    if (reap_clients(&w, 15000000) != 0) failed = 1;
    if (keys_left(&w, &keys_now, &keys_later) != 0) failed = 1;
    tcp_proxy_stop(&w.proxy);
    redis_nodes_stop(&w.rn);

    for (i = 0; i < F_KINDS; i++) total += w.injected[i];
    printf("# %s: faults injected %ld:", name, total);
    for (i = 0; i < F_KINDS; i++) printf(" %s %ld", fault_names[i], w.injected[i]);
    printf(" (restarts %ld; jumps given up: no key on all nodes for 1 s %ld)\n", w.restarts, w.jump_skipped);
    if (chaos_check(path_list, opt.clients, w.pauses, w.npauses, 100000, &rep) != 0) failed = 1;
    printf("# %s: holds %ld (released %ld, lost reported %ld, lapsed %ld); overlaps %ld; losses unreported %ld, "
           "late %ld (excused by a client pause %ld, worst %lld us); keys right after %ld, one TTL later %ld\n",
           name, rep.holds, rep.released, rep.lost_reported, rep.lapsed, rep.overlaps, rep.unreported, rep.late,
           rep.late_excused, (long long)rep.worst_late_us, keys_now, keys_later);
    for (i = 0; i < opt.clients; i++) {
        FILE *f = fopen(paths[i], "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            if (line[0] == 'S' || line[0] == 'E') printf("#   client %02d: %s", i, line);
        if (f) fclose(f);
    }
    if (opt.control) {
        /* the same harness, clients that ignore validity: overlaps expected */
        if (rep.overlaps > 0)
            printf("ok %s: clients that ignore validity overlap %ld times (the checker fires)\n", name, rep.overlaps);
        else
            printf("not ok %s: clients ignoring validity were never caught overlapping\n", name);
        failed = failed || rep.overlaps == 0 || rep.holds == 0;
    } else {
        int ok = !failed && rep.overlaps == 0 && rep.unreported == 0 && rep.late == 0 && rep.bad_lines == 0 &&
                 rep.holds > 0 && total >= opt.min_faults;
        if (total < opt.min_faults) printf("#   only %ld faults injected (want %d)\n", total, opt.min_faults);
        printf("%s %s: %ld holds under %ld faults: %ld overlaps, %ld losses unreported, %ld reported late, "
               "%ld keys left\n",
               ok ? "ok" : "not ok", name, rep.holds, total, rep.overlaps, rep.unreported, rep.late, keys_later);
        failed = !ok;
    }
    if (!opt.keep && !failed) {
        for (i = 0; i < opt.clients; i++) remove(paths[i]);
        rmdir(dir);
    }
    return failed ? 1 : 0;
}
