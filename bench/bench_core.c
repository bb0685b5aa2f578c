/* bench_core.c - cost of the core alone: acquire + release cycles, and
   watchdog renewals, through an in-memory transport that answers inside
   send (no I/O at all).
   Prints ns per cycle and heap allocations per cycle for N = 1, 3, 5, the
   same with 100,000 other locks held on the client, and the cost of the OS
   random call separately (the cycles use a cheap PRNG callback, since token
   generation is the one syscall an acquire makes).
   Usage: bench_core [cycles]                      timing run
          bench_core --rate N K                    cycles/s at N nodes, best of 5 runs of K
                                                   (core.sh runs it built with and without
                                                   REDLOCK_NO_STATS: what statistics cost)
          bench_core --cycles-only N K [OTHERS]    K cycles at N nodes (for callgrind)
          bench_core --renewals-only N K [OTHERS]  K watchdog renewals (for callgrind)
   OTHERS: that many other locks initialised and held on the same client
   (their deadlines far away), filed in a lock table of the next power of
   two above OTHERS. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_alloc.h" /* counts heap allocations made anywhere in the process */

static redlock_client client;
static redlock_lock lock;
static long results_ok, renewals;
static redlock_lock *others;
static long n_others;
static redlock_lock **table;
static int64_t fake_now; /* the renewal runs' clock: moved by hand */

static int instant_send(void *u, int node, const redlock_command *cmd, redlock_tag tag) {
    redlock_reply r;
    (void)u; (void)node;
    memset(&r, 0, sizeof r);
    if (cmd->argvlen[0] == 3) { r.type = REDLOCK_REPLY_STATUS; r.str = "OK"; r.len = 2; } /* SET */
    else { r.type = REDLOCK_REPLY_INTEGER; r.integer = 1; }                              /* EVALSHA */
    redlock_on_reply(&client, tag, &r);
    return 0;
}

static int cheap_random(void *u, void *buf, size_t len) {
    static uint64_t x = 88172645463325252ull;
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    while (len--) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; *p++ = (unsigned char)x; }
    return 0;
}

static void on_result(redlock_lock *lk, const redlock_result *r) { (void)lk; results_ok += r->status == REDLOCK_OK; }

static int64_t fake_clock(void *u) { (void)u; return fake_now; }

static void on_event(void *u, const redlock_event *ev) { (void)u; renewals += ev->type == REDLOCK_EV_RENEWED; }

/* The client, `others` other locks held on it, and the measured lock:
   plain (the cycles) or a watchdog lock on the hand-moved clock (the
   renewals). */
static void setup(int nodes, long n_other, int renewing) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    long i;
    redlock_config_init(&cfg);
    cfg.node_count = nodes;
    if (n_other > 0) {
        size_t size = 1;
        while (size <= (size_t)n_other) size *= 2;
        table = (redlock_lock **)calloc(size, sizeof *table);
        others = (redlock_lock *)calloc((size_t)n_other, sizeof *others);
        if (!table || !others) exit(1);
        cfg.lock_table = table;
        cfg.lock_table_size = size;
    }
    memset(&cb, 0, sizeof cb);
    cb.send = instant_send;
    cb.random = cheap_random;
    if (renewing) cb.on_event = on_event; /* the cycles: no event sink, as before */
    if (renewing) {
        fake_now = 1000000;
        cb.now_us = fake_clock;
    }
    if (redlock_client_init(&client, &cfg, &cb, NULL) != REDLOCK_OK) exit(1);
    n_others = n_other;
    for (i = 0; i < n_other; i++) {
        char key[40];
        memset(&o, 0, sizeof o);
        snprintf(key, sizeof key, "bench:other:%ld", i);
        o.key = key;
        o.ttl_ms = 1000000000; /* held, with a renewal far beyond the run */
        o.watchdog = 1;
        if (redlock_lock_init(&others[i], &client, &o) != REDLOCK_OK || redlock_acquire(&others[i]) != REDLOCK_OK ||
            redlock_lock_state(&others[i]) != REDLOCK_STATE_HELD)
            exit(1);
    }
    memset(&o, 0, sizeof o);
    o.key = "bench:lock";
    o.ttl_ms = renewing ? 3000 : 10000;
    o.watchdog = renewing;
    o.on_result = on_result;
    if (redlock_lock_init(&lock, &client, &o) != REDLOCK_OK) exit(1);
}

static void teardown(void) {
    long i;
    redlock_lock_deinit(&lock);
    for (i = 0; i < n_others; i++) redlock_lock_deinit(&others[i]);
    redlock_client_deinit(&client);
    free(others);
    free(table);
    others = NULL;
    table = NULL;
    n_others = 0;
}

/* The measured loop (callgrind collects inside this function only). */
__attribute__((noinline)) void run_cycles(long k) {
    long i;
    for (i = 0; i < k; i++) {
        redlock_acquire(&lock);
        redlock_release(&lock);
    }
}

/* The measured renewals: the clock jumps to the lock's next deadline (its
   renewal; the other locks' are far away) and the timer fires. */
__attribute__((noinline)) void run_renewals(long k) {
    long i;
    for (i = 0; i < k; i++) {
        fake_now = redlock_next_deadline(&client);
        redlock_on_timer(&client);
    }
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    long cycles = argc > 1 && argv[1][0] != '-' ? atol(argv[1]) : 1000000;
    int ns[3] = {1, 3, 5}, k, rep;
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--cycles-only") == 0) {
        setup(atoi(argv[2]), argc == 5 ? atol(argv[4]) : 0, 0);
        run_cycles(atol(argv[3]));
        teardown();
        return results_ok == 2 * atol(argv[3]) ? 0 : 1;
    }
    if (argc == 4 && strcmp(argv[1], "--rate") == 0) {
        double best = 1e18;
        long k_rate = atol(argv[3]);
        setup(atoi(argv[2]), 0, 0);
        run_cycles(1000); /* warm up */
        for (rep = 0; rep < 5; rep++) {
            double t0 = now_ns(), t;
            run_cycles(k_rate);
            t = (now_ns() - t0) / (double)k_rate;
            if (t < best) best = t;
        }
        teardown();
        if (results_ok != 2 * (5 * k_rate + 1000)) return 1;
        printf("%.0f cycles/s (%.1f ns/cycle, best of 5)\n", 1e9 / best, best);
        return 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--renewals-only") == 0) {
        long k_renew = atol(argv[3]);
        setup(atoi(argv[2]), argc == 5 ? atol(argv[4]) : 0, 1);
        if (redlock_acquire(&lock) != REDLOCK_OK || results_ok != 1) return 1;
        renewals = 0;
        run_renewals(k_renew);
        if (renewals != k_renew || redlock_lock_state(&lock) != REDLOCK_STATE_HELD) {
            fprintf(stderr, "bench_core: %ld renewals of %ld\n", renewals, k_renew);
            return 1;
        }
        teardown();
        return 0;
    }
    printf("core: acquire + release through an instant in-memory transport, %ld cycles\n", cycles);
    for (k = 0; k < 4; k++) {
        double best = 1e18;
        long allocs, total_allocs = 0;
        long other = k == 3 ? 100000 : 0;
        setup(k == 3 ? 1 : ns[k], other, 0);
        run_cycles(1000); /* warm up */
        for (rep = 0; rep < 5; rep++) {
            double t0 = now_ns(), t;
            long a0 = bench_allocations();
            results_ok = 0;
            run_cycles(cycles);
            t = (now_ns() - t0) / (double)cycles;
            allocs = bench_allocations() - a0;
            if (results_ok != 2 * cycles) { printf("error: %ld of %ld operations ok\n", results_ok, 2 * cycles); return 1; }
            if (t < best) best = t;
            total_allocs += allocs;
        }
        printf("N=%d  %8.1f ns/cycle (best of 5)   heap allocations: %ld in %ld cycles (%.3f/cycle)%s\n",
               k == 3 ? 1 : ns[k], best, total_allocs, 5 * cycles, (double)total_allocs / (double)(5 * cycles),
               other ? "   with 100,000 other locks held" : "");
        teardown();
    }
    {   /* the OS random source, timed alone: one 16-byte token per acquire */
        unsigned char tok[16];
        long i, n = 200000;
        double t0 = now_ns();
        for (i = 0; i < n; i++) redlock__os_random(NULL, tok, sizeof tok);
        printf("OS random (getrandom, 16 bytes): %.1f ns/call, added once per acquire\n", (now_ns() - t0) / (double)n);
    }
    return 0;
}
