#include <string.h>
#include "redlock.h"

int tu2_init(redlock_client *c) {
    redlock_lock lk;
    redlock_lock_opts o;
    int rc;
    memset(&o, 0, sizeof o);
    o.key = "from-tu2";
    o.ttl_ms = 1000;
    rc = redlock_lock_init(&lk, c, &o);
    redlock_lock_deinit(&lk);
    return rc;
}
