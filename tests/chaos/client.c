/* client.c - one chaos client process: takes locks on a few keys through
   the raw-socket adapter (watchdog on), "works" while it holds one, and
   logs every hold for the checker.

   A hold is logged as one line when it ends:
       H <key> <start_us> <end_us> <valid_end_us> <how> <lost_us> <lost_status>
   on CLOCK_MONOTONIC (one machine, one clock for every process):
     start_us      when redlock_socket_acquire() returned OK
     valid_end_us  the validity end the client knew at its last check
                   (remaining time read first, then the clock: never early)
     how           R released: end_us is when it decided to release (< valid_end)
                   L LOST reported while it held: end_us = valid_end_us
                   X it found the validity over before any report: end_us =
                     valid_end_us (the report is then awaited, and logged)
                   I the negative control: it worked until its plan ended,
                     whatever it was told; end_us is that moment
     lost_us       when on_result got REDLOCK_OP_LOST (-1: never)
   The client acts only at its checks, each made while the remaining time
   was positive, so what it did lies inside [start_us, end_us]. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"

int64_t chaos_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

typedef struct hold_state {
    int64_t lost_us;
    int lost_status;
} hold_state;

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    hold_state *h = (hold_state *)r->user;
    (void)lk;
    if (r->op == REDLOCK_OP_LOST && h->lost_us < 0) {
        h->lost_us = chaos_now_us();
        h->lost_status = r->status;
    }
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t rand_range(uint64_t *s, int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)(next_rand(s) % (uint64_t)(hi - lo + 1));
}

/* How long to hold: mostly a fraction of the TTL, a quarter of the holds
   one to two TTLs (the watchdog then renews). */
static int64_t plan_us(uint64_t *rng, int64_t ttl_ms)
{
    if (rand_range(rng, 0, 3) == 0) return rand_range(rng, ttl_ms, 2 * ttl_ms) * 1000;
    return rand_range(rng, 5, ttl_ms / 4) * 1000;
}

/* Holds lock l until its plan ends, the lock is lost, or stop; logs it. */
static void hold(const chaos_client_cfg *cc, redlock_socket *s, redlock_socket_lock *l, hold_state *h, int key,
                 uint64_t *rng, FILE *log, long *counts)
{
    int64_t rem = redlock_lock_remaining_us(&l->lock);
    int64_t start = chaos_now_us(), valid_end = start + rem, plan = start + plan_us(rng, cc->ttl_ms), end;
    char how;
    cc->shared->holding[cc->id] = key + 1;
    for (;;) {
        int64_t now;
        if (!cc->ignore_validity) {
            rem = redlock_lock_remaining_us(&l->lock);
            now = chaos_now_us();
            if (h->lost_us >= 0 || rem <= 0) {
                how = h->lost_us >= 0 ? 'L' : 'X';
                end = valid_end;
                break;
            }
            valid_end = now + rem;
        } else {
            now = chaos_now_us();
        }
        if (cc->shared->stop && plan > now) plan = now;
        if (now >= plan) {
            how = cc->ignore_validity ? 'I' : 'R';
            end = now;
            redlock_socket_release(l);
            break;
        }
        /* the work between checks: running the adapter (renewals) */
        redlock_socket_run(s, (plan - now) / 1000 < 5 ? (plan - now) / 1000 + 1 : 5);
    }
    cc->shared->holding[cc->id] = 0;
    if (how == 'X') { /* the report is due now: let the adapter deliver it (bounded) */
        int64_t until = chaos_now_us() + 500000;
        while (h->lost_us < 0 && chaos_now_us() < until) redlock_socket_run(s, 1);
    }
    counts[how == 'R' || how == 'I' ? 0 : 1]++;
    fprintf(log, "H %d %lld %lld %lld %c %lld %d\n", key, (long long)start, (long long)end, (long long)valid_end,
            how, (long long)h->lost_us, h->lost_status);
    fflush(log);
}

int chaos_client_run(const chaos_client_cfg *cc)
{
    redlock_socket s;
    redlock_socket_config cfg;
    FILE *log = fopen(cc->log_path, "w");
    uint64_t rng = cc->seed * 0x9E3779B97F4A7C15ull + (uint64_t)cc->id + 1;
    long acquired = 0, failed = 0, counts[2] = { 0, 0 }, by_status[64];
    int i, rc;
    memset(by_status, 0, sizeof by_status);
    if (!log) return 2;
    redlock_socket_config_init(&cfg);
    cfg.node_count = CHAOS_NODES;
    for (i = 0; i < CHAOS_NODES; i++) cfg.node[i].port = cc->port[i];
    cfg.connect_timeout_ms = 150;
    cfg.command_timeout_ms = 150;
    cfg.core.node_timeout_ms = 100;
    cfg.core.retry_count = 3;
    cfg.core.retry_delay_ms = 40;
    cfg.core.retry_jitter_ms = 30;
    rc = redlock_socket_init(&s, &cfg);
    if (rc != REDLOCK_OK) {
        fprintf(log, "E init %d\n", rc);
        fclose(log);
        return 2;
    }
    while (!cc->shared->stop) {
        redlock_socket_lock l;
        redlock_lock_opts o;
        hold_state h;
        char key[32];
        int k = (int)rand_range(&rng, 0, cc->keys - 1);
        snprintf(key, sizeof key, "chaos:%d", k);
        memset(&o, 0, sizeof o);
        o.key = key;
        o.ttl_ms = cc->ttl_ms;
        o.watchdog = 1;
        o.on_result = on_result;
        o.user = &h;
        h.lost_us = -1;
        h.lost_status = 0;
        if (redlock_socket_lock_init(&s, &l, &o) != REDLOCK_OK) {
            fprintf(log, "E lock_init\n");
            break;
        }
        rc = redlock_socket_acquire(&l);
        if (rc == REDLOCK_OK) {
            acquired++;
            hold(cc, &s, &l, &h, k, &rng, log, counts);
        } else {
            failed++;
            by_status[-rc < 64 ? -rc : 63]++;
        }
        redlock_socket_lock_deinit(&l);
        redlock_socket_run(&s, rand_range(&rng, 0, 20));
    }
    redlock_socket_deinit(&s);
    fprintf(log, "S acquired %ld failed %ld released %ld lost %ld", acquired, failed, counts[0], counts[1]);
    for (i = 0; i < 64; i++)
        if (by_status[i]) fprintf(log, " %s=%ld", redlock_strerror(-i), by_status[i]);
    fprintf(log, "\n");
    fclose(log);
    return 0;
}
