/* Compile check: every adapter's whole public API, used from a translation
   unit that includes the headers without any *_IMPLEMENTATION (built and
   linked with adapters_impl.c, which has them). A function defined only
   inside an implementation block, or declared with another type, fails
   the build here. Runs a trivial program. */
#include "adapters/redlock_socket.h"
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include <stdio.h>
#include <string.h>

typedef void (*redlock_api_fn)(void);
#define API(name) (redlock_api_fn)(name)

/* Each public function, by name, so the compiler checks it is declared. */
static const redlock_api_fn api[] = {
    /* redlock_nodes.h: every adapter's node lists */
    API(redlock_parse_nodes), API(redlock_free_nodes), API(redlock_format_node), API(redlock_scrub_nodes),
    /* redlock_resp.h */
    API(redlock_resp_parser_init), API(redlock_resp_parser_reset), API(redlock_resp_parser_free),
    API(redlock_resp_feed), API(redlock_resp_next), API(redlock_resp_buffered), API(redlock_resp_memory),
    API(redlock_resp_encode), API(redlock_resp_encode_command), API(redlock_resp_error), API(redlock_resp_strerror),
    /* redlock_socket.h */
    API(redlock_socket_config_init), API(redlock_socket_init), API(redlock_socket_deinit),
    API(redlock_socket_connect), API(redlock_socket_run), API(redlock_socket_send),
    API(redlock_socket_node_status), API(redlock_socket_node_connected), API(redlock_socket_notify_status),
    API(redlock_socket_node_policy), API(redlock_socket_pending), API(redlock_socket_node_pending),
    API(redlock_socket_memory), API(redlock_socket_pollfds), API(redlock_socket_poll_ms),
    API(redlock_socket_dispatch), API(redlock_socket_fd_count), API(redlock_socket_fd),
    API(redlock_socket_interest), API(redlock_socket_on_readable), API(redlock_socket_on_writable),
    API(redlock_socket_next_deadline), API(redlock_socket_on_timer), API(redlock_socket_now_us),
    API(redlock_socket_client), API(redlock_socket_lock_init), API(redlock_socket_lock_deinit),
    API(redlock_socket_acquire), API(redlock_socket_release), API(redlock_socket_extend),
    API(redlock_socket_upgrade), API(redlock_socket_downgrade), API(redlock_socket_last_result),
    API(redlock_socket_lock_state), API(redlock_socket_lock_valid_until), API(redlock_socket_probe),
    API(redlock_socket_stats), API(redlock_socket_stats_reset),
    /* redlock_hiredis.h */
    API(redlock_hiredis_config_init), API(redlock_hiredis_init), API(redlock_hiredis_deinit),
    API(redlock_hiredis_client), API(redlock_hiredis_run), API(redlock_hiredis_node_status),
    API(redlock_hiredis_node_connected), API(redlock_hiredis_notify_status), API(redlock_hiredis_node_policy),
    API(redlock_hiredis_lock_init), API(redlock_hiredis_lock_deinit), API(redlock_hiredis_acquire),
    API(redlock_hiredis_release), API(redlock_hiredis_extend), API(redlock_hiredis_upgrade),
    API(redlock_hiredis_downgrade), API(redlock_hiredis_last_result), API(redlock_hiredis_lock_state),
    API(redlock_hiredis_lock_valid_until), API(redlock_hiredis_stats), API(redlock_hiredis_stats_reset),
    /* redlock_libev.h */
    API(redlock_libev_config_init), API(redlock_libev_init), API(redlock_libev_deinit),
    API(redlock_libev_client), API(redlock_libev_lock_init), API(redlock_libev_node_status), API(redlock_libev_node_connected),
    API(redlock_libev_notify_status), API(redlock_libev_node_policy), API(redlock_libev_stats),
    API(redlock_libev_stats_reset),
};

int main(void)
{
    redlock_socket_config so;
    redlock_hiredis_config ho;
    redlock_libev_config lo;
    size_t i;
    for (i = 0; i < sizeof api / sizeof api[0]; i++)
        if (!api[i]) return 1;
    /* the same defaults and the same refusal of a missing handle everywhere */
    redlock_socket_config_init(&so);
    redlock_hiredis_config_init(&ho);
    redlock_libev_config_init(&lo);
    if (so.connect_timeout_ms != ho.connect_timeout_ms || ho.command_timeout_ms != lo.command_timeout_ms) return 1;
    if (redlock_socket_init(NULL, &so) != REDLOCK_ERR_INVALID || redlock_hiredis_init(NULL, &ho) != REDLOCK_ERR_INVALID ||
        redlock_libev_init(NULL, NULL, &lo) != REDLOCK_ERR_INVALID)
        return 1;
    if (redlock_socket_probe(NULL, 0, 0, NULL) != REDLOCK_ERR_INVALID) return 1;
    printf("ok %d functions\n", (int)(sizeof api / sizeof api[0]));
    return 0;
}
