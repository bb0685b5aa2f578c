/* One clock: the core's built-in clock, and the clock every adapter gives
   the core and times its own deadlines with, are CLOCK_BOOTTIME (which
   keeps counting while the machine is suspended, as the servers' TTLs do).
   Suspend cannot be staged in a test, but a time namespace can set
   CLOCK_BOOTTIME apart from CLOCK_MONOTONIC: tests/clock/check.sh runs this
   program under `unshare --time --boottime OFFSET`, where a clock that
   reads CLOCK_MONOTONIC is OFFSET seconds away from CLOCK_BOOTTIME.
   Usage: clock_check OFFSET_S (0: outside a namespace, the clocks only
   agree). Prints "ok ..." / "not ok ..." lines. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include "adapters/redlock_socket.h"
#include <stdio.h>
#include <stdlib.h>

static int failed;

static int64_t boot_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* within a second of CLOCK_BOOTTIME read just before and after */
static void check(const char *what, int64_t (*read)(void *), void *user)
{
    int64_t before = boot_us(), t = read(user), after = boot_us();
    if (t >= before - 1000000 && t <= after + 1000000) {
        printf("ok clock %s is CLOCK_BOOTTIME\n", what);
    } else {
        printf("not ok clock %s: %lld us, CLOCK_BOOTTIME %lld us, CLOCK_MONOTONIC %lld us\n", what, (long long)t,
               (long long)before, (long long)mono_us());
        failed = 1;
    }
}

static int64_t core_builtin(void *user) { (void)user; return redlock_clock_us(); }
static int64_t socket_now(void *user) { (void)user; return redlock_socket_now_us(); }
static int64_t hiredis_now(void *user) { (void)user; return redlock__hiredis_now_us(); }
static int64_t client_clock(void *user)
{
    redlock_client *c = (redlock_client *)user;
    return c->_cb.now_us(c->_user);
}

int main(int argc, char **argv)
{
    long offset = argc > 1 ? atol(argv[1]) : 0;
    redlock_socket s;
    redlock_socket_config sc;
    redlock_hiredis h;
    redlock_hiredis_config hc;
    redlock_libev *ev = (redlock_libev *)calloc(1, sizeof *ev);
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);

    if (offset && boot_us() - mono_us() < (int64_t)offset * 1000000 - 1000000) {
        printf("not ok clock: CLOCK_BOOTTIME is not %ld s ahead of CLOCK_MONOTONIC here\n", offset);
        return 1;
    }
    /* the core's built-in clock (now_us = NULL) */
    check("redlock_clock_us()", core_builtin, NULL);

    /* each adapter: the clock it hands the core, and its own */
    redlock_socket_config_init(&sc);
    sc.node_count = 1;
    sc.node[0].port = 1; /* never connected: init does not wait for it */
    if (redlock_socket_init(&s, &sc) != REDLOCK_OK) { puts("not ok clock: redlock_socket_init"); return 1; }
    check("redlock_socket_now_us()", socket_now, NULL);
    check("the socket adapter's core", client_clock, &s._client);

    redlock_hiredis_config_init(&hc);
    hc.node_count = 1;
    hc.node[0].port = 1;
    hc.connect_timeout_ms = 100;
    if (redlock_hiredis_init(&h, &hc) != REDLOCK_OK) { puts("not ok clock: redlock_hiredis_init"); return 1; }
    check("the hiredis adapters' deadlines", hiredis_now, NULL);
    check("the hiredis adapter's core", client_clock, &h._client);

    if (!ev || !loop || redlock_libev_init(ev, loop, &hc) != REDLOCK_OK) { puts("not ok clock: redlock_libev_init"); return 1; }
    check("the libev adapter's core", client_clock, &ev->_client);

    redlock_libev_deinit(ev);
    ev_loop_destroy(loop);
    free(ev);
    redlock_hiredis_deinit(&h);
    redlock_socket_deinit(&s);
    return failed;
}
