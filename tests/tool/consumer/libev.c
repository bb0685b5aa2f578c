/* A program built against an installed redlock tree with the hiredis async
   + libev adapter (tests/tool/consumers.sh): pkg-config redlock-libev or
   CMake redlock::libev give it the flags and libraries. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include <redlock/redlock_libev.h>
#include <stdio.h>

int main(void)
{
    struct ev_loop *loop = ev_loop_new(0);
    redlock_libev_config o;
    redlock_libev c;
    if (!loop) return 1;
    redlock_libev_config_init(&o);
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    o.node[0].port = 1;
    if (redlock_libev_init(&c, loop, &o) != REDLOCK_OK) return 1;
    redlock_libev_deinit(&c);
    ev_loop_destroy(loop);
    printf("consumer-libev: redlock %s\n", REDLOCK_VERSION);
    return 0;
}
