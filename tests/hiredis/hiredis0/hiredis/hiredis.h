/* A stand-in for an old hiredis's header (0.14, as Debian 12 ships):
   only its version, all the adapters look at before they refuse
   REDLOCK_HIREDIS_TLS (mk/hiredis.mk, check-adapters-compile). */
#define HIREDIS_MAJOR 0
#define HIREDIS_MINOR 14
#define HIREDIS_PATCH 1
