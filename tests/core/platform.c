/* platform.c - the header's platform fallbacks, which unit.c cannot reach:
   no POSIX clock (the clock callbacks become required), and the built-in
   random source on a system without getrandom(2), reading
   REDLOCK_RANDOM_DEVICE (missing, too short, working).

   Built as strict C99 with no POSIX feature macro and a system header
   included first, so <time.h> declares no clock_gettime. */
#include <stdio.h>

#define REDLOCK_NO_BUILTIN_CLOCKS /* strict C99: the system header above declared no clock_gettime */

#define getrandom platform_no_getrandom /* a kernel without getrandom(2) */
static const char *random_device = "/dev/zero";
#define REDLOCK_RANDOM_DEVICE random_device
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include "check.h"

#ifdef REDLOCK__HAVE_CLOCK
#error "this test needs a build without POSIX clocks"
#endif

#ifdef REDLOCK__HAVE_GETRANDOM
static int getrandom_calls;
ssize_t platform_no_getrandom(void *buf, size_t len, unsigned int flags) {
    (void)buf; (void)len; (void)flags;
    getrandom_calls++;
    return -1; /* ENOSYS */
}
#endif

static int64_t now_us;
static int sent;
static redlock_tag tags[8];
static redlock_event last_retry;

static int64_t p_now(void *u) { (void)u; return now_us; }
static int64_t p_wall(void *u) { (void)u; return 1700000000000LL; }
static int p_send(void *u, int node, const redlock_command *cmd, redlock_tag tag) {
    (void)u; (void)node; (void)cmd;
    if (sent < 8) tags[sent] = tag;
    sent++;
    return 0;
}
static void p_event(void *u, const redlock_event *ev) {
    (void)u;
    if (ev->type == REDLOCK_EV_RETRY) last_retry = *ev;
}

static redlock_client C;
static redlock_lock L;

static void setup(int64_t delay_ms, int64_t jitter_ms) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    redlock_config_init(&cfg);
    cfg.retry_delay_ms = delay_ms;
    cfg.retry_jitter_ms = jitter_ms;
    memset(&cb, 0, sizeof cb);
    cb.send = p_send;
    cb.now_us = p_now;
    cb.wall_ms = p_wall;
    cb.on_event = p_event;
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    now_us = 1000000;
    sent = 0;
    memset(&last_retry, 0, sizeof last_retry);
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
}
static void teardown(void) {
    redlock_lock_deinit(&L);
    redlock_client_deinit(&C);
}

/* Proves: without a built-in clock, both clock callbacks are required. */
static void test_clock_callbacks_required(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_config_init(&cfg);
    memset(&cb, 0, sizeof cb);
    cb.send = p_send;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cb.now_us = p_now;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cb.now_us = NULL;
    cb.wall_ms = p_wall;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cb.now_us = p_now;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&C);
}

/* Proves: a random source that cannot be opened, or gives fewer bytes than
   a token needs, fails the acquire with RANDOM and sends nothing. */
static void test_random_device_fails(void) {
    static const char *const devices[] = {"/nonexistent/random", "/dev/null"};
    int k;
    for (k = 0; k < 2; k++) {
        random_device = devices[k];
        setup(0, 0);
        CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_RANDOM);
        CHECK_EQ(sent, 0);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
        teardown();
    }
#ifdef REDLOCK__HAVE_GETRANDOM
    CHECK(getrandom_calls > 0);
#endif
}

/* Proves: the device's bytes become the token (all zero bytes: 32 '0's)
   and the retry jitter (zero: the delay minus the whole jitter). */
static void test_random_device_read(void) {
    random_device = "/dev/zero";
    setup(100, 30);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(sent, 1);
    CHECK_STR(redlock_lock_token(&L), "00000000000000000000000000000000");
    redlock_on_reply(&C, tags[0], NULL); /* a failed vote: the attempt fails */
    CHECK_EQ(last_retry.type, REDLOCK_EV_RETRY);
    CHECK_EQ(last_retry.delay_us, 70000);
    teardown();
}

int main(void) {
    RUN(test_clock_callbacks_required);
    RUN(test_random_device_fails);
    RUN(test_random_device_read);
    return CHECK_EXIT();
}
