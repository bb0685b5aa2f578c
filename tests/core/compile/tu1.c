/* Two translation units: this one has the implementation, tu2.c only the
   declarations; the header is included twice, after a system header (so
   without the built-in POSIX clock, which strict C must then say it does
   without: the clock comes from a callback). */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_NO_BUILTIN_CLOCKS
#include <string.h>
#include "redlock.h"
#include "redlock.h"

int tu2_init(redlock_client *c);

static int fake_send(void *u, int n, const redlock_command *cmd, redlock_tag tag) {
    (void)u; (void)n; (void)cmd; (void)tag;
    return 0;
}

static int64_t fake_now(void *u) { (void)u; return 1; }

int main(void) {
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    memset(&cb, 0, sizeof cb);
    redlock_config_init(&cfg);
    cb.send = fake_send;
    cb.now_us = fake_now;
    cb.wall_ms = fake_now;
    if (redlock_client_init(&c, &cfg, &cb, 0) != REDLOCK_OK) return 1;
    if (tu2_init(&c) != REDLOCK_OK) return 1;
    redlock_client_deinit(&c);
    return 0;
}
