/* Compile check: both adapter headers in one translation unit, as C and as
   C++ (gcc and clang), with the implementation. Runs a trivial program. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include <stdio.h>

int main(void)
{
    redlock_hiredis_config ho;
    redlock_libev_config lo;
    redlock_hiredis_config_init(&ho);
    redlock_libev_config_init(&lo);
    /* no nodes: both refuse, touching nothing */
    if (redlock_hiredis_init(NULL, &ho) != REDLOCK_ERR_INVALID) return 1;
    if (redlock_libev_init(NULL, NULL, &lo) != REDLOCK_ERR_INVALID) return 1;
    /* the documented defaults */
    if (ho.connect_timeout_ms != 1000 || ho.command_timeout_ms != 1000 || lo.connect_timeout_ms != 1000 ||
        lo.command_timeout_ms != 1000)
        return 1;
    puts("ok");
    return 0;
}
