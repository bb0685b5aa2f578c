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
    /* one node type and one node-list parser for every adapter */
    {
        redlock_node *n = &ho.node[0];
        redlock_libev_node *l = &lo.node[0];
        void *mem = NULL;
        char err[128];
        (void)n;
        (void)l;
        if (redlock_parse_nodes(ho.node, &ho.node_count, "h:1,/r.sock", &mem, err, sizeof err) != 0 ||
            redlock_parse_nodes(lo.node, &lo.node_count, "redis://:pw@h2:2/3", &mem, err, sizeof err) != 0 ||
            ho.node_count != 2 || lo.node_count != 1 || strcmp(ho.node[1].unix_path, "/r.sock") != 0 ||
            strcmp(lo.node[0].password, "pw") != 0 || lo.node[0].db != 3)
            return 1;
        redlock_free_nodes(mem);
        redlock_hiredis_config_init(&ho);
        redlock_libev_config_init(&lo);
    }
    /* the documented defaults */
    if (ho.connect_timeout_ms != 1000 || ho.command_timeout_ms != 1000 || lo.connect_timeout_ms != 1000 ||
        lo.command_timeout_ms != 1000)
        return 1;
    puts("ok");
    return 0;
}
