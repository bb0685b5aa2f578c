/* A program built against an installed redlock tree with TLS
   (tests/tool/consumers.sh): redlock-tls.pc or redlock::socket_tls
   must define REDLOCK_SOCKET_TLS and link OpenSSL. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_SOCKET_THREAD
#include <redlock/redlock_socket.h>
#include <stdio.h>

#ifndef REDLOCK_SOCKET_TLS
#error "REDLOCK_SOCKET_TLS is not defined: the package did not ask for TLS"
#endif

int main(void)
{
    redlock_socket_config sc;
    redlock_socket s;
    int rc;
    redlock_socket_config_init(&sc);
    sc.node_count = 1;
    sc.node[0].tls.enable = 1;          /* rediss:// */
    sc.watchdog_thread = 1;
    rc = redlock_socket_init(&s, &sc);  /* TLS context made here; connects lazily */
    if (rc != REDLOCK_OK) {
        fprintf(stderr, "consumer-tls: init failed: %s\n", redlock_strerror(rc));
        return 1;
    }
    redlock_socket_deinit(&s);
    printf("consumer-tls: redlock %s with TLS and a watchdog thread\n", REDLOCK_VERSION);
    return 0;
}
