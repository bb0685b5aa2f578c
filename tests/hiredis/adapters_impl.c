/* The one file of the adapters_api program that implements the core and
   every adapter (adapters_api.c only includes their declarations, as a
   second file of a user's program does). */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
