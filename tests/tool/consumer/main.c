/* A program built against an installed redlock tree (tests/tool/consumers.sh):
   the core and the raw-socket adapter, as a user would include them. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include <redlock/redlock_socket.h>
#include <redlock.h>
#include <stdio.h>

int main(void)
{
    redlock_socket_config sc;
    redlock_socket s;
    int rc;
    redlock_socket_config_init(&sc);
    sc.node_count = 3;
    rc = redlock_socket_init(&s, &sc); /* connects lazily: no server needed */
    if (rc != REDLOCK_OK) return 1;
    redlock_socket_deinit(&s);
    printf("consumer: redlock %s, quorum of 3 is %d\n", REDLOCK_VERSION, 3 / 2 + 1);
    return 0;
}
