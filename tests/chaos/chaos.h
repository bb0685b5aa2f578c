/* chaos.h - what the chaos test's three parts share: the driver and fault
   injector (chaos.c), the client processes (client.c) and the checker
   (check.c). See tests/chaos/README.md. */
#ifndef CHAOS_H
#define CHAOS_H

#include <stdint.h>
#include <sys/types.h>

#define CHAOS_NODES 5
#define CHAOS_MAX_CLIENTS 64
#define CHAOS_MAX_KEYS 16
#define CHAOS_MAX_PAUSES 4096

/* Written by the driver, read by the clients (a MAP_SHARED page). */
typedef struct chaos_shared {
    volatile int stop;                           /* finish the hold, release, exit */
    volatile int holding[CHAOS_MAX_CLIENTS];     /* key index + 1 while holding, else 0 */
    volatile pid_t pid[CHAOS_MAX_CLIENTS];
} chaos_shared;

/* One client process's settings. */
typedef struct chaos_client_cfg {
    int id;
    int port[CHAOS_NODES];                       /* where the client connects (the proxy) */
    int keys;
    int64_t ttl_ms;
    uint64_t seed;
    int ignore_validity;                         /* the negative control: keeps "working"
                                                    until its plan ends, lost or not */
    const char *log_path;
    chaos_shared *shared;
} chaos_client_cfg;

/* Runs one client until shared->stop; returns the process exit status. */
int chaos_client_run(const chaos_client_cfg *cc);

/* A client pause the injector made: [from_us, to_us) on CLOCK_MONOTONIC. */
typedef struct chaos_pause {
    int client;
    int64_t from_us, to_us;
} chaos_pause;

/* What the checker found. */
typedef struct chaos_report {
    long holds, released, lost_reported, lapsed;
    long overlaps;               /* pairs of holds of one key that overlap */
    long unreported;             /* lapsed with no LOST report at all */
    long late;                   /* LOST reported later than validity end + slack */
    long late_excused;           /* ... but the holder was paused by the injector then */
    int64_t worst_late_us;       /* the latest report not excused */
    long bad_lines;              /* log lines that do not parse */
} chaos_report;

/* Reads the clients' logs (paths[0..n-1]) and checks the invariants
   (tests/chaos/README.md). Prints the first few violations. */
int chaos_check(const char *const *paths, int n, const chaos_pause *pauses, int npauses,
                int64_t slack_us, chaos_report *rep);

/* The checker fed with made-up logs where the answer is known: an
   overlap, a late report, an excused one, a clean history. 0 when every
   case is judged right. */
int chaos_check_self_test(const char *dir);

int64_t chaos_now_us(void); /* CLOCK_MONOTONIC */

#endif /* CHAOS_H */
