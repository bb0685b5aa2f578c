/* bench/bench_tls.c - what TLS costs per lock cycle, against plain TCP, on
   the same redis-server node in the same run.

   One node listens on a plain port and a TLS port (throwaway certificates
   from tests/shared/tls_certs.sh). The raw-socket adapter does sequential
   acquire + release cycles on a fresh key each, alternating blocks of
   plain and TLS so that drift on a shared machine hits both alike; then
   it measures connection setup (connect + AUTH-less handshake) both ways.
   Prints the median block per transport: cycles/s, µs per cycle, CPU µs
   per cycle (user + sys of this process), and the TLS / plain ratios.

   A cycle or a connect that fails (a busy machine: a node timeout) is
   counted in its transport's `failed` column and left out: a block's
   rate is its successful cycles' over their own time. The run ends with
   status 1 only when a transport had no successful cycle (or connect).

   Usage: bench_tls [--cycles N] [--blocks B] [--connects N] [--server-cpu C] [--fail-every N]
   (--connects: the connection setups timed per transport, default 200)
   --fail-every N (a test of the failure path): every Nth cycle of a block
   asks, once, for a key another owner holds, and so fails.
   Run from the repository root (it needs tests/shared/tls_certs.sh);
   pin it with taskset (make bench-tls does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_SOCKET_TLS
#include "adapters/redlock_socket.h"
#include "redis_nodes.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 64
#define INJECTED_KEY "bench:injected" /* --fail-every: held by another owner */
static int fail_every;                /* 0: no injected failures */


static int open_client(redlock_socket *s, int port, const char *ca)
{
    redlock_socket_config cfg;
    redlock_socket_config_init(&cfg);
    cfg.node[0].port = port;
    if (ca) {
        cfg.tls.enable = 1;
        cfg.tls.ca = ca;
    }
    cfg.core.retry_count = -1;
    if (redlock_socket_init(s, &cfg) != REDLOCK_OK) return -1;
    if (redlock_socket_connect(s) == REDLOCK_OK) return 0;
    redlock_socket_deinit(s);
    return -1;
}

/* n sequential acquire + release cycles, each on a key of its own: the
   successful ones' wall seconds (a failed cycle's time taken out) in
   *wall, the CPU seconds of all in *cpu; the count that failed. */
static int cycles(redlock_socket *s, int n, int block, double *wall, double *cpu)
{
    redlock_socket_lock l;
    redlock_lock_opts o;
    char key[64];
    double w0, c0, t0, failed_s = 0;
    int i, failed = 0;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    w0 = bench_now_s();
    c0 = bench_cpu_s();
    for (i = 0; i < n; i++) {
        if (fail_every && (i + 1) % fail_every == 0) snprintf(key, sizeof key, "%s", INJECTED_KEY);
        else snprintf(key, sizeof key, "bench:tls:%d:%d", block, i);
        t0 = bench_now_s();
        if (redlock_socket_lock_init(s, &l, &o) != REDLOCK_OK) {
            failed++;
            failed_s += bench_now_s() - t0;
            continue;
        }
        if (redlock_socket_acquire(&l) != REDLOCK_OK || redlock_socket_release(&l) != REDLOCK_OK) {
            redlock_socket_lock_deinit(&l);
            failed++;
            failed_s += bench_now_s() - t0;
            continue;
        }
        redlock_socket_lock_deinit(&l);
    }
    *wall = bench_now_s() - w0 - failed_s;
    *cpu = bench_cpu_s() - c0;
    return failed;
}

/* n connects (TCP, and the TLS handshake when ca is set): seconds each of
   those that succeeded (0 if none did); *failed: how many failed. */
static double setup_s(int port, const char *ca, int n, int *failed)
{
    double t0, ok_s = 0;
    int i;
    *failed = 0;
    for (i = 0; i < n; i++) {
        redlock_socket s;
        t0 = bench_now_s();
        if (open_client(&s, port, ca) != 0) {
            (*failed)++;
            continue;
        }
        redlock_socket_deinit(&s);
        ok_s += bench_now_s() - t0;
    }
    return *failed < n ? ok_s / (n - *failed) : 0;
}

int main(int argc, char **argv)
{
    int n = 2000, blocks = 7, connects = 200, server_cpu = -1, i, b, rc = 0;
    int failed[2] = { 0, 0 }, setup_failed[2], ok[2][MAX_BLOCKS], ok_blocks[2] = { 0, 0 };
    static const char *const name[2] = { "plain", "TLS" };
    char dir[64], cmd[256], ca[128], crt[128], key[128];
    const char *args[9];
    double wall[2][MAX_BLOCKS], cpu[2][MAX_BLOCKS], rate[2], us[2], cpu_us[2], setup[2];
    redis_nodes rn;
    redlock_socket s[2];
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--connects") && i + 1 < argc) connects = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fail-every") && i + 1 < argc) fail_every = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_tls [--cycles N] [--blocks B] [--connects N] [--server-cpu C] [--fail-every N]\n");
            return 64;
        }
    }
    if (n < 1 || blocks < 1 || blocks > MAX_BLOCKS || connects < 1 || fail_every < 0) {
        fprintf(stderr, "bench_tls: --cycles >= 1, --blocks 1..%d, --connects >= 1, --fail-every >= 1\n", MAX_BLOCKS);
        return 64;
    }
    snprintf(dir, sizeof dir, "/tmp/redlock-bench-tls-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(cmd, sizeof cmd, "tests/shared/tls_certs.sh '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_tls: cannot make certificates (openssl; run from the repository root)\n");
        return 1;
    }
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    snprintf(crt, sizeof crt, "%s/server.crt", dir);
    snprintf(key, sizeof key, "%s/server.key", dir);
    args[0] = "--tls-cert-file"; args[1] = crt;
    args[2] = "--tls-key-file"; args[3] = key;
    args[4] = "--tls-ca-cert-file"; args[5] = ca;
    args[6] = "--tls-auth-clients"; args[7] = "no";
    args[8] = NULL;
    redis_nodes_deadline(600);
    if (redis_nodes_start_tls(&rn, 1, args, NULL) != 0) {
        fprintf(stderr, "bench_tls: cannot start a TLS redis-server\n");
        return 1;
    }
    if (server_cpu >= 0) {
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)rn.node[0].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_tls: could not pin the server\n");
    }
    if (fail_every) { /* the injected failures' key: held by another owner */
        char reply[128];
        redis_nodes_cmd(&rn, 0, reply, sizeof reply, "SET", INJECTED_KEY, "another-owner", (char *)NULL);
    }
    if (open_client(&s[0], redis_nodes_port(&rn, 0), NULL) != 0) {
        fprintf(stderr, "bench_tls: cannot connect\n");
        redis_nodes_stop(&rn);
        return 1;
    }
    if (open_client(&s[1], redis_nodes_tls_port(&rn, 0), ca) != 0) {
        fprintf(stderr, "bench_tls: cannot connect over TLS\n");
        redlock_socket_deinit(&s[0]);
        redis_nodes_stop(&rn);
        return 1;
    }
    /* warm up both (their failures are not counted), then alternate blocks */
    (void)cycles(&s[0], n / 4 + 1, -1, &wall[0][0], &cpu[0][0]);
    (void)cycles(&s[1], n / 4 + 1, -2, &wall[1][0], &cpu[1][0]);
    for (b = 0; b < blocks; b++)
        for (i = 0; i < 2; i++) {
            int t = (b + i) % 2, f = cycles(&s[t], n, b * 2 + i, &wall[t][b], &cpu[t][b]);
            failed[t] += f;
            ok[t][b] = n - f;
        }
    for (i = 0; i < 2; i++) { /* the medians of the blocks that had a successful cycle */
        double r[MAX_BLOCKS], c[MAX_BLOCKS];
        for (b = 0; b < blocks; b++)
            if (ok[i][b] > 0) {
                r[ok_blocks[i]] = ok[i][b] / wall[i][b];
                c[ok_blocks[i]++] = cpu[i][b] / n * 1e6;
            }
        rate[i] = ok_blocks[i] ? bench_median(r, ok_blocks[i]) : 0;
        us[i] = rate[i] > 0 ? 1e6 / rate[i] : 0;
        cpu_us[i] = ok_blocks[i] ? bench_median(c, ok_blocks[i]) : 0;
        redlock_socket_deinit(&s[i]);
    }
    setup[0] = setup_s(redis_nodes_port(&rn, 0), NULL, connects, &setup_failed[0]);
    setup[1] = setup_s(redis_nodes_tls_port(&rn, 0), ca, connects, &setup_failed[1]);
    redis_nodes_stop(&rn);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_tls: could not remove %s\n", dir);

    printf("raw-socket adapter, 1 node, sequential acquire+release on a fresh key,\n"
           "median of %d blocks of %d cycles each, plain and TLS alternating;\n"
           "failed: cycles that failed (of %d), left out of the rates and times (the successful cycles' own;\n"
           "CPU per cycle, failed ones included), and connects that failed (of %d)\n\n",
           blocks, n, blocks * n, connects);
    printf("%-10s %12s %12s %14s %8s %16s %8s\n", "transport", "cycles/s", "us/cycle", "CPU us/cycle", "failed",
           "connect+setup us", "failed");
    for (i = 0; i < 2; i++)
        printf("%-10s %12.0f %12.1f %14.1f %8d %16.1f %8d\n", name[i], rate[i], us[i], cpu_us[i], failed[i],
               setup[i] * 1e6, setup_failed[i]);
    if (us[0] > 0 && us[1] > 0 && cpu_us[0] > 0 && setup[0] > 0 && setup[1] > 0)
        printf("\nTLS / plain: %.2fx time per cycle (+%.1f us), %.2fx CPU per cycle, %.1fx connection setup\n",
               us[1] / us[0], us[1] - us[0], cpu_us[1] / cpu_us[0], setup[1] / setup[0]);
    for (i = 0; i < 2; i++) { /* failures with successes are a measurement; none that succeeded is not */
        if (failed[i] || setup_failed[i])
            fprintf(stderr, "bench_tls: %s: %d of %d cycles and %d of %d connects failed%s\n", name[i], failed[i],
                    blocks * n, setup_failed[i], connects,
                    ok_blocks[i] && setup_failed[i] < connects ? " (counted, left out)" : "");
        if (!ok_blocks[i] || setup_failed[i] == connects) {
            fprintf(stderr, "bench_tls: no successful %s in the %s row\n", ok_blocks[i] ? "connect" : "cycle", name[i]);
            rc = 1;
        }
    }
    return rc;
}
