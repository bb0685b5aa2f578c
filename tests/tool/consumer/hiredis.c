/* A program built against an installed redlock tree with the blocking
   hiredis adapter (tests/tool/consumers.sh): pkg-config redlock-hiredis
   or CMake redlock::hiredis give it the flags and libraries. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#include <redlock/redlock_hiredis.h>
#include <stdio.h>

int main(void)
{
    redlock_hiredis_config o;
    redlock_hiredis c;
    redlock_hiredis_config_init(&o);
    o.node_count = 1;
    o.node[0].host = "127.0.0.1";
    o.node[0].port = 1; /* nothing listens: a node down is retried on use */
    if (redlock_hiredis_init(&c, &o) != REDLOCK_OK) return 1;
    redlock_hiredis_deinit(&c);
    printf("consumer-hiredis: redlock %s\n", REDLOCK_VERSION);
    return 0;
}
