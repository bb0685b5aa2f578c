/* test_socket_hostile.c - adapters/redlock_socket.h against a hostile fake
   server (tests/shared/hostile_server.h, a forked child on a free loopback port,
   stopped by PID): malformed RESP, RESP3, absurd lengths, wrong reply
   types, truncated replies, silence, resets, floods, refused connections,
   AUTH refusal. Each gives an exact status for that node, no crash, and
   bounded memory. The subscribers' reading of each reply (the connection
   layer's, every adapter's) first, without a server; then transport (raw mode), then through the core, then
   the foreign-loop API: a hand-written poll() loop, and a strict loop
   (epoll on Linux, a one-shot timer) that knows only what the watch and
   set_timer hooks told it: timers fired early or spuriously, an fd
   closed and reopened with the same number, stray readiness calls. */
#define _POSIX_C_SOURCE 200809L
#include <netdb.h>

/* The resolver double (see test_getaddrinfo below): a name with two
   addresses, which the machine's own resolver may not have. */
static int test_getaddrinfo(const char *host, const char *serv, const struct addrinfo *hints,
                            struct addrinfo **res);
static void test_freeaddrinfo(struct addrinfo *res);
#define REDLOCK_SOCKET_GETADDRINFO test_getaddrinfo
#define REDLOCK_SOCKET_FREEADDRINFO test_freeaddrinfo

#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "hostile_server.h"
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

/* "two.test" resolves to 127.0.0.1 twice: first on two_ports[0], then on
   two_ports[1]; every other name goes to getaddrinfo(). */
static int two_ports[2];
static struct sockaddr_in two_sa[2];
static struct addrinfo two_ai[2];

static int test_getaddrinfo(const char *host, const char *serv, const struct addrinfo *hints,
                            struct addrinfo **res)
{
    int i;
    if (!host || strcmp(host, "two.test") != 0) return getaddrinfo(host, serv, hints, res);
    memset(two_sa, 0, sizeof two_sa);
    memset(two_ai, 0, sizeof two_ai);
    for (i = 0; i < 2; i++) {
        two_sa[i].sin_family = AF_INET;
        two_sa[i].sin_port = htons((unsigned short)two_ports[i]);
        two_sa[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        two_ai[i].ai_family = AF_INET;
        two_ai[i].ai_socktype = SOCK_STREAM;
        two_ai[i].ai_addr = (struct sockaddr *)&two_sa[i];
        two_ai[i].ai_addrlen = (socklen_t)sizeof two_sa[i];
        two_ai[i].ai_next = i == 0 ? &two_ai[1] : NULL;
    }
    *res = two_ai;
    return 0;
}

static void test_freeaddrinfo(struct addrinfo *res)
{
    if (res != two_ai) freeaddrinfo(res);
}

typedef struct rec {
    int replies, errors;
    int last_status, last_type;
    long long last_int;
    redlock_tag last_tag;
    char last_str[64];
} rec;

static void rec_reply(void *u, int node, redlock_tag tag, const redlock_reply *r)
{
    rec *x = (rec *)u;
    (void)node;
    x->replies++;
    x->last_tag = tag;
    x->last_type = r->type;
    x->last_int = r->integer;
    snprintf(x->last_str, sizeof x->last_str, "%.*s", (int)(r->len < 60 ? r->len : 60), r->str ? r->str : "");
}

static void rec_error(void *u, int node, redlock_tag tag, int status)
{
    rec *x = (rec *)u;
    (void)node;
    x->errors++;
    x->last_tag = tag;
    x->last_status = status;
}

static int raw_open(redlock_socket *s, rec *x, int port, const char *pass)
{
    redlock_socket_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memset(x, 0, sizeof *x);
    cfg.node_count = 1;
    cfg.node[0].port = port;
    cfg.node[0].password = pass;
    cfg.connect_timeout_ms = 300;
    cfg.command_timeout_ms = 300;
    cfg.on_reply = rec_reply;
    cfg.on_error = rec_error;
    cfg.user = x;
    return redlock_socket_init(s, &cfg);
}

static long long ms_now(void) { return redlock_socket_now_us() / 1000; }

/* Runs the loop until `want` answers arrived (or max_ms). */
static void wait_answers(redlock_socket *s, rec *x, int want, int max_ms)
{
    long long until = ms_now() + max_ms;
    while (x->replies + x->errors < want && ms_now() < until) redlock_socket_run(s, 5);
}

static int ping(redlock_socket *s, redlock_tag tag)
{
    const char *argv[] = {"PING"};
    return redlock_socket_send(s, 0, 1, argv, NULL, tag);
}

/* One command to a server in `mode`: the answer must be error `want`
   within max_ms, with bounded memory. */
static void hostile_case(int mode, const char *reply, int want, int max_ms)
{
    hostile h;
    redlock_socket s;
    rec x;
    long long t0;
    int rc;
    CHECK_EQ(hostile_start(&h, mode, reply), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    t0 = ms_now();
    rc = ping(&s, 7);
    CHECK_EQ(rc, 0);
    wait_answers(&s, &x, 1, 3000);
    CHECK_EQ(x.replies, 0);
    CHECK_EQ(x.errors, 1);
    CHECK_EQ(x.last_tag, 7);
    CHECK_EQ(x.last_status, want);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), want);
    CHECK(ms_now() - t0 < max_ms);
    CHECK(redlock_socket_memory(&s) <= (size_t)REDLOCK_RESP_MAX_BUFFER + 512 * 1024);
    CHECK(!redlock_socket_node_connected(&s, 0));
    CHECK_EQ(redlock_socket_fd(&s, 0), -1);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

static void test_malformed_reply(void) { hostile_case(HOSTILE_CANNED, "?garbage\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_bad_line_ending(void) { hostile_case(HOSTILE_CANNED, "+OK\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_bad_integer(void) { hostile_case(HOSTILE_CANNED, ":12x\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_resp3_null(void) { hostile_case(HOSTILE_CANNED, "_\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_resp3_map(void) { hostile_case(HOSTILE_CANNED, "%1\r\n+a\r\n+b\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_resp3_push(void) { hostile_case(HOSTILE_CANNED, ">2\r\n+a\r\n+b\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_huge_bulk_len(void) { hostile_case(HOSTILE_ONCE, "$999999999999\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_huge_array_len(void) { hostile_case(HOSTILE_ONCE, "*4294967295\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_negative_len(void) { hostile_case(HOSTILE_ONCE, "$-5\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
static void test_deep_nesting(void) { hostile_case(HOSTILE_ONCE, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n", REDLOCK_ERR_PROTOCOL, 1000); }
/* cut mid-way, then closed: a truncated reply is malformed */
static void test_cut_then_close(void) { hostile_case(HOSTILE_CLOSE, "$10\r\nabc", REDLOCK_ERR_PROTOCOL, 1000); }
/* cut mid-way, then silence: the command timeout (300 ms) */
static void test_cut_then_silence(void) { hostile_case(HOSTILE_ONCE, "*2\r\n:1\r\n", REDLOCK_ERR_NODE_TIMEOUT, 1500); }
static void test_silence(void) { hostile_case(HOSTILE_SILENT, NULL, REDLOCK_ERR_NODE_TIMEOUT, 1500); }
static void test_reset(void) { hostile_case(HOSTILE_RESET, NULL, REDLOCK_ERR_TRANSPORT, 1000); }
static void test_closed_no_reply(void) { hostile_case(HOSTILE_CLOSE, "", REDLOCK_ERR_TRANSPORT, 1000); }
static void test_flood_line(void) { hostile_case(HOSTILE_FLOOD, "+", REDLOCK_ERR_PROTOCOL, 3000); }
/* an endless array of max-size bulks: stopped at the buffer cap (4 MiB) */
static void test_flood_buffer(void) { hostile_case(HOSTILE_FLOOD, "*1024\r\n$1048576\r\n", REDLOCK_ERR_PROTOCOL, 3000); }
static void test_auth_refused(void)
{
    hostile h;
    redlock_socket s;
    rec x;
    CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, "not-the-password"), REDLOCK_OK);
    CHECK_EQ(ping(&s, 3), 0);
    wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(x.errors, 1);
    CHECK_EQ(x.last_status, REDLOCK_ERR_AUTH);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_AUTH);
    /* redlock_socket_connect reports it too */
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_AUTH);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
    /* NOAUTH on a command: the node needs a password we do not have */
    CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, "-NOAUTH Authentication required.\r\n"), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    CHECK_EQ(ping(&s, 4), 0);
    wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(x.errors, 1);
    CHECK_EQ(x.last_status, REDLOCK_ERR_AUTH);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* An AUTH or a SELECT the node accepts leaves the node healthy: status 0
   once redlock_socket_connect() is through the handshake. */
static void test_handshake_accepted(void)
{
    int k;
    for (k = 0; k < 2; k++) {
        hostile h;
        redlock_socket s;
        redlock_socket_config cfg;
        CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
        memset(&cfg, 0, sizeof cfg);
        cfg.node_count = 1;
        cfg.node[0].port = h.port;
        if (k == 0) cfg.node[0].password = "pw";
        else cfg.node[0].db = 3;
        CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
        CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
        CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
        CHECK_EQ(redlock_socket_node_connected(&s, 0), 1);
        redlock_socket_deinit(&s);
        hostile_stop(&h);
    }
}

static void test_refused(void)
{
    redlock_socket s;
    rec x;
    int rc;
    CHECK_EQ(raw_open(&s, &x, hostile_closed_port(), NULL), REDLOCK_OK);
    rc = ping(&s, 1);
    if (rc == 0) wait_answers(&s, &x, 1, 2000); /* refused later */
    else CHECK_EQ(rc, REDLOCK_ERR_CONNECT);    /* or at once */
    CHECK(rc != 0 || (x.errors == 1 && x.last_status == REDLOCK_ERR_CONNECT));
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_ERR_CONNECT);
    redlock_socket_deinit(&s);
}

static void test_unix_missing_and_bad_host(void)
{
    redlock_socket s;
    redlock_socket_config cfg;
    rec x;
    char long_path[200];
    memset(&cfg, 0, sizeof cfg);
    memset(&x, 0, sizeof x);
    memset(long_path, 'p', sizeof long_path - 1); /* longer than any sun_path */
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = 0;
    cfg.node_count = 3;
    cfg.node[0].unix_path = "/nonexistent/redlock-test.sock";
    cfg.node[1].host = "host.invalid";
    cfg.node[2].unix_path = long_path;
    cfg.on_reply = rec_reply;
    cfg.on_error = rec_error;
    cfg.user = &x;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    {
        const char *argv[] = {"PING"};
        CHECK_EQ(redlock_socket_send(&s, 0, 1, argv, NULL, 1), REDLOCK_ERR_CONNECT);
        CHECK_EQ(redlock_socket_send(&s, 1, 1, argv, NULL, 2), REDLOCK_ERR_CONNECT);
        CHECK_EQ(redlock_socket_send(&s, 2, 1, argv, NULL, 3), REDLOCK_ERR_CONNECT);
        CHECK_EQ(redlock_socket_send(&s, 3, 1, argv, NULL, 2), REDLOCK_ERR_INVALID);
        CHECK_EQ(redlock_socket_send(&s, 0, 0, argv, NULL, 2), REDLOCK_ERR_INVALID);
    }
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 1, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 2, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(x.errors, 0); /* refused at send: no callback */
    redlock_socket_deinit(&s);
}

/* A host name (getaddrinfo); "localhost" may give ::1 first, where nothing
   listens: the next address is tried. */
static void test_hostname(void)
{
    hostile h;
    redlock_socket s;
    redlock_socket_config cfg;
    rec x;
    CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
    memset(&cfg, 0, sizeof cfg);
    memset(&x, 0, sizeof x);
    cfg.node_count = 1;
    cfg.node[0].host = "localhost";
    cfg.node[0].port = h.port;
    cfg.on_reply = rec_reply;
    cfg.on_error = rec_error;
    cfg.user = &x;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(ping(&s, 1), 0);
    wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(x.replies, 1);
    CHECK_STR(x.last_str, "OK");
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* A reply of the wrong type is handed on as it is (the core judges it);
   the connection stays up. */
static void test_wrong_type_passed_on(void)
{
    hostile h;
    redlock_socket s;
    rec x;
    CHECK_EQ(hostile_start(&h, HOSTILE_CANNED, ":5\r\n"), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    CHECK_EQ(ping(&s, 9), 0);
    wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(x.replies, 1);
    CHECK_EQ(x.last_type, REDLOCK_REPLY_INTEGER);
    CHECK_EQ(x.last_int, 5);
    CHECK(redlock_socket_node_connected(&s, 0));
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* Two replies for one command: the second is unsolicited -> PROTOCOL. */
static void test_unsolicited(void)
{
    hostile h;
    redlock_socket s;
    rec x;
    CHECK_EQ(hostile_start(&h, HOSTILE_ONCE, "+OK\r\n+EXTRA\r\n"), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    CHECK_EQ(ping(&s, 1), 0);
    wait_answers(&s, &x, 1, 2000);
    redlock_socket_run(&s, 50);
    CHECK_EQ(x.replies, 1);
    CHECK_EQ(x.errors, 0);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_PROTOCOL);
    CHECK(!redlock_socket_node_connected(&s, 0));
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* Every command in flight gets the error; the next command reconnects. */
static void test_inflight_fail_and_reconnect(void)
{
    hostile h;
    redlock_socket s;
    rec x;
    int i;
    CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    for (i = 0; i < 5; i++) CHECK_EQ(ping(&s, (redlock_tag)(100 + i)), 0);
    wait_answers(&s, &x, 5, 3000);
    CHECK_EQ(x.errors, 5);
    CHECK_EQ(x.last_tag, 104); /* in order */
    CHECK_EQ(x.last_status, REDLOCK_ERR_NODE_TIMEOUT);
    hostile_stop(&h);
    /* a good server on another port cannot be "the same node"; instead the
       same node refuses now (nothing listens), then answers again */
    x.errors = 0;
    i = ping(&s, 200);
    if (i == 0) wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    redlock_socket_deinit(&s);
    CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    CHECK_EQ(ping(&s, 1), 0);
    wait_answers(&s, &x, 1, 2000);
    CHECK_EQ(x.replies, 1);
    CHECK_STR(x.last_str, "OK");
    hostile_stop(&h); /* the server goes away: idle close, no error callback */
    redlock_socket_run(&s, 50);
    CHECK_EQ(x.errors, 0);
    CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
    redlock_socket_deinit(&s);
    CHECK_EQ(raw_open(&s, &x, h.port, NULL), REDLOCK_OK);
    for (i = 0; i < 50; i++) CHECK_EQ(ping(&s, (redlock_tag)i), 0);
    wait_answers(&s, &x, 50, 3000);
    CHECK_EQ(x.replies, 50);
    CHECK_EQ(x.last_tag, 49);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* ---- through the core ---- */

typedef struct votes {
    int status[REDLOCK_MAX_NODES];
    int seen[REDLOCK_MAX_NODES];
} votes;

static void vote_event(void *u, const redlock_event *ev)
{
    votes *v = (votes *)u;
    if (ev->type == REDLOCK_EV_VOTE && ev->node >= 0 && ev->node < REDLOCK_MAX_NODES && !ev->vote &&
        !v->seen[ev->node]) {
        v->seen[ev->node] = 1;
        v->status[ev->node] = ev->status;
    }
}

static int core_info_off; /* the canned reply is for the lock's command, not for INFO */

static int core_open(redlock_socket *s, votes *v, const int *ports, int n)
{
    redlock_socket_config cfg;
    int i;
    redlock_socket_config_init(&cfg);
    cfg.info_off = core_info_off;
    memset(v, 0, sizeof *v);
    cfg.node_count = n;
    for (i = 0; i < n; i++) cfg.node[i].port = ports[i];
    cfg.connect_timeout_ms = 300;
    cfg.command_timeout_ms = 300;
    cfg.core.node_timeout_ms = 100;
    cfg.core.retry_count = -1;
    cfg.on_event = vote_event;
    cfg.user = v;
    return redlock_socket_init(s, &cfg);
}

/* 2 good nodes + 1 hostile: the lock is won on the good ones, the hostile
   node's vote fails with the expected status. */
static void core_case(int mode, const char *reply, int want, int node_want)
{
    hostile h[3];
    int ports[3], i;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    votes v;
    CHECK_EQ(hostile_start(&h[0], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[1], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[2], mode, reply), 0);
    for (i = 0; i < 3; i++) ports[i] = h[i].port;
    CHECK_EQ(core_open(&s, &v, ports, 3), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "hostile";
    o.ttl_ms = 2000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_last_result(&l)->votes, 2); /* decided without the straggler */
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    redlock_socket_run(&s, 400); /* past the command timeout */
    if (node_want) CHECK_EQ(redlock_socket_node_status(&s, 2, NULL, 0), node_want);
    CHECK(redlock_socket_memory(&s) <= (size_t)REDLOCK_RESP_MAX_BUFFER + 512 * 1024);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    /* the hostile node alone: no lock, no crash */
    CHECK_EQ(core_open(&s, &v, &ports[2], 1), REDLOCK_OK);
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK(redlock_socket_acquire(&l) != REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&l.lock), REDLOCK_STATE_IDLE);
    CHECK_EQ(v.seen[0], 1);
    CHECK_EQ(v.status[0], want); /* the core's verdict on the node's vote */
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

static void test_core_huge_bulk(void) { core_case(HOSTILE_ONCE, "$999999999999\r\n", REDLOCK_ERR_PROTOCOL, REDLOCK_ERR_PROTOCOL); }
static void test_core_huge_array(void) { core_case(HOSTILE_ONCE, "*4294967295\r\n", REDLOCK_ERR_PROTOCOL, REDLOCK_ERR_PROTOCOL); }
static void test_core_resp3(void) { core_case(HOSTILE_CANNED, "#t\r\n", REDLOCK_ERR_PROTOCOL, REDLOCK_ERR_PROTOCOL); }
/* the transport hands a wrong type on; the core rejects the vote */
static void test_core_wrong_type(void)
{
    core_info_off = 1;
    core_case(HOSTILE_CANNED, ":5\r\n", REDLOCK_ERR_PROTOCOL, 0);
    core_info_off = 0;
}
/* the core's node timeout (100 ms) decides first, then the adapter drops
   the connection at its command timeout (300 ms) */
static void test_core_silent(void) { core_case(HOSTILE_SILENT, NULL, REDLOCK_ERR_NODE_TIMEOUT, REDLOCK_ERR_NODE_TIMEOUT); }
static void test_core_reset(void) { core_case(HOSTILE_RESET, NULL, REDLOCK_ERR_TRANSPORT, REDLOCK_ERR_TRANSPORT); }

/* A new connection's INFO and CONFIG GET appendfsync, answered (with the
   SET's +OK after them) by a fake server: a policy named is kept and told
   to the core (a lock that refuses such nodes does not count the grant);
   an INFO refused, or an answer that is not a string, leaves the node as
   it was and the connection up. What INFO says of the process (run_id,
   uptime, aof_enabled) reaches the core with CONFIG's answer: *why gets
   the redlock_restart the core keeps for the node. */
static int info_case(const char *info, const char *config, int refuse, int *evicts, char *policy, size_t cap,
                     redlock_restart *why)
{
    hostile h;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    votes v;
    char replies[1024];
    int rc = -100;
    snprintf(replies, sizeof replies, "%s%s+OK\r\n", info, config);
    CHECK_EQ(hostile_start(&h, HOSTILE_ONCE, replies), 0);
    CHECK_EQ(core_open(&s, &v, &h.port, 1), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "info";
    o.ttl_ms = 2000;
    o.refuse_evicting = refuse;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    rc = redlock_socket_acquire(&l);
    *evicts = (int)redlock_node_evicts(redlock_socket_client(&s), 0);
    CHECK_EQ(redlock_socket_node_policy(&s, 0, policy, cap), *evicts);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
    (void)redlock_node_restarted_at(redlock_socket_client(&s), 0, why);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    hostile_stop(&h);
    return rc;
}

/* CONFIG GET appendfsync's answers (a RESP2 pair), and a refusal */
#define FSYNC_EVERYSEC "*2\r\n$11\r\nappendfsync\r\n$8\r\neverysec\r\n"
#define FSYNC_ALWAYS "*2\r\n$11\r\nappendfsync\r\n$6\r\nalways\r\n"
#define CONFIG_DENIED "-NOPERM this user has no permissions to run the 'config|get' command\r\n"

static void test_core_info(void)
{
    static const char lru[] = "$49\r\nmaxmemory:1048576\r\nmaxmemory_policy:allkeys-lru\r\n\r\n";
    int evicts;
    char policy[32];
    redlock_restart why;
    /* counted by default */
    CHECK_EQ(info_case(lru, FSYNC_EVERYSEC, 0, &evicts, policy, sizeof policy, &why), REDLOCK_OK);
    CHECK_EQ(evicts, REDLOCK_EVICTS_ALL);
    CHECK_STR(policy, "allkeys-lru");
    CHECK_EQ(why, REDLOCK_RESTART_NONE); /* no run_id, no uptime: nothing told */
    CHECK_EQ(info_case(lru, FSYNC_EVERYSEC, 1, &evicts, policy, sizeof policy, &why), REDLOCK_ERR_EVICTING);
    CHECK_EQ(info_case("-NOPERM this user has no permissions to run the 'info' command\r\n", FSYNC_EVERYSEC, 1, &evicts,
                       policy, sizeof policy, &why), REDLOCK_OK);
    CHECK_EQ(evicts, REDLOCK_EVICTS_NONE);
    CHECK_STR(policy, "");
    CHECK_EQ(info_case(":1\r\n", FSYNC_EVERYSEC, 1, &evicts, policy, sizeof policy, &why), REDLOCK_OK);
    CHECK_EQ(evicts, REDLOCK_EVICTS_NONE);
    CHECK_EQ(info_case("$10\r\n# Memory\r\n\r\n", FSYNC_EVERYSEC, 1, &evicts, policy, sizeof policy, &why), REDLOCK_OK);
    CHECK_EQ(evicts, REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_socket_node_policy(NULL, 0, policy, sizeof policy), REDLOCK_ERR_INVALID);
    CHECK_STR(policy, "");
}

/* An INFO with a run_id, an uptime of `up` seconds and aof_enabled:`aof`
   (a bulk string, in out[cap]). */
static const char *life_info(char *out, size_t cap, int up, int aof)
{
    char body[256];
    int n = snprintf(body, sizeof body,
                     "# Server\r\nrun_id:6b3c2a91d0e4f5a6b7c8d9e0f1a2b3c4d5e6f708\r\nuptime_in_seconds:%d\r\n\r\n"
                     "# Persistence\r\naof_enabled:%d\r\n",
                     up, aof);
    snprintf(out, cap, "$%d\r\n%s\r\n", n, body);
    return out;
}

/* What the preamble tells the core of a node's process: a server started
   0 s ago counts no grant (a lone node: RESTARTED) unless it keeps keys
   across restarts: AOF on (aof_enabled:1) and fsync'd before each answer
   (appendfsync always), both; a CONFIG refused (an ACL, a renamed CONFIG)
   or an answer that is not the pair counts as not durable. A server up
   for longer than the bound grants at once; an INFO refused tells
   nothing. */
static void test_core_info_life(void)
{
    char info[512];
    int evicts;
    char policy[32];
    redlock_restart why;
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 0), FSYNC_EVERYSEC, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_ERR_RESTARTED);
    CHECK_EQ(why, REDLOCK_RESTART_UPTIME);
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 1), FSYNC_ALWAYS, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_OK);
    CHECK_EQ(why, REDLOCK_RESTART_NONE);
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 0), FSYNC_ALWAYS, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_ERR_RESTARTED); /* fsync always, but AOF off */
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 1), FSYNC_EVERYSEC, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_ERR_RESTARTED);
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 1), CONFIG_DENIED, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_ERR_RESTARTED);
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 1), "*2\r\n$11\r\nappendfsync\r\n:1\r\n", 0, &evicts, policy,
                       sizeof policy, &why), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(info_case(life_info(info, sizeof info, 0, 1), "*0\r\n", 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_ERR_RESTARTED); /* no such parameter */
    CHECK_EQ(info_case(life_info(info, sizeof info, 100, 0), FSYNC_EVERYSEC, 0, &evicts, policy, sizeof policy, &why),
             REDLOCK_OK); /* started 100 s ago: past the bound (2 s) */
    CHECK_EQ(why, REDLOCK_RESTART_UPTIME);
    CHECK_EQ(info_case("-NOPERM this user has no permissions to run the 'info' command\r\n", FSYNC_EVERYSEC, 0, &evicts,
                       policy, sizeof policy, &why), REDLOCK_OK);
    CHECK_EQ(why, REDLOCK_RESTART_NONE);
}

static void test_core_refused(void)
{
    hostile h[2];
    int ports[3];
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    votes v;
    CHECK_EQ(hostile_start(&h[0], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[1], HOSTILE_GOOD, NULL), 0);
    ports[0] = h[0].port;
    ports[1] = hostile_closed_port();
    ports[2] = h[1].port;
    CHECK_EQ(core_open(&s, &v, ports, 3), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "refused";
    o.ttl_ms = 2000;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(v.status[1], REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 1, NULL, 0), REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    hostile_stop(&h[0]);
    hostile_stop(&h[1]);
}

/* ---- the foreign-loop API, driven by a hand-written poll() loop ---- */

typedef struct fl {
    int fd[REDLOCK_SOCKET_MAX_FDS], interest[REDLOCK_SOCKET_MAX_FDS];
    int watch_calls, timer_calls;
    int64_t deadline;
    int done, status;
} fl;

static void fl_watch(void *u, int node, int fd, int interest)
{
    fl *f = (fl *)u;
    f->fd[node] = fd;
    f->interest[node] = interest;
    f->watch_calls++;
}

static void fl_timer(void *u, int64_t d)
{
    fl *f = (fl *)u;
    f->deadline = d;
    f->timer_calls++;
}

static void fl_result(redlock_lock *lk, const redlock_result *r)
{
    fl *f = (fl *)r->user;
    (void)lk;
    f->done = (int)r->op;
    f->status = r->status;
}

static void fl_run_until(redlock_socket *s, fl *f, int op)
{
    long long until = ms_now() + 3000;
    f->done = 0;
    while (f->done != op && ms_now() < until) {
        struct pollfd pf[REDLOCK_SOCKET_MAX_FDS];
        int map[REDLOCK_SOCKET_MAX_FDS], k = 0, i, ms = 100;
        int64_t now = redlock_socket_now_us();
        /* the hooks and the getters agree (the subscribers' too) */
        for (i = 0; i < redlock_socket_fd_count(s); i++) {
            CHECK_EQ(f->fd[i], redlock_socket_fd(s, i));
            CHECK_EQ(f->interest[i], redlock_socket_interest(s, i));
            if (f->fd[i] < 0 || !f->interest[i]) continue;
            pf[k].fd = f->fd[i];
            pf[k].events = (short)(((f->interest[i] & REDLOCK_SOCKET_READ) ? POLLIN : 0) |
                                   ((f->interest[i] & REDLOCK_SOCKET_WRITE) ? POLLOUT : 0));
            pf[k].revents = 0;
            map[k++] = i;
        }
        CHECK_EQ(f->deadline, redlock_socket_next_deadline(s));
        if (f->deadline != REDLOCK_NO_DEADLINE)
            ms = f->deadline <= now ? 0 : (int)((f->deadline - now) / 1000 + 1);
        if (ms > 100) ms = 100;
        if (poll(pf, (nfds_t)k, ms) > 0) {
            for (i = 0; i < k; i++) {
                if (pf[i].revents & POLLOUT) redlock_socket_on_writable(s, map[i]);
                if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) redlock_socket_on_readable(s, map[i]);
            }
        }
        if (redlock_socket_now_us() >= redlock_socket_next_deadline(s)) redlock_socket_on_timer(s);
    }
}

static void test_foreign_loop(void)
{
    hostile h[3];
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_lock_opts o;
    redlock_socket_lock l;
    fl f;
    int i;
    memset(&f, 0, sizeof f);
    f.deadline = REDLOCK_NO_DEADLINE;
    for (i = 0; i < REDLOCK_SOCKET_MAX_FDS; i++) f.fd[i] = -1;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    CHECK_EQ(hostile_start(&h[0], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[1], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[2], HOSTILE_SILENT, NULL), 0);
    for (i = 0; i < 3; i++) cfg.node[i].port = h[i].port;
    cfg.command_timeout_ms = 300;
    cfg.core.node_timeout_ms = 100;
    cfg.watch = fl_watch;
    cfg.set_timer = fl_timer;
    cfg.user = &f;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "foreign";
    o.ttl_ms = 5000;
    o.on_result = fl_result;
    o.user = &f;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&l.lock), REDLOCK_OK); /* non-blocking: the core API */
    CHECK(f.watch_calls >= 3);
    CHECK(f.deadline != REDLOCK_NO_DEADLINE);
    fl_run_until(&s, &f, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(f.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(f.status, REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&l.lock), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&l.lock), REDLOCK_OK);
    fl_run_until(&s, &f, REDLOCK_OP_RELEASE);
    CHECK_EQ(f.done, REDLOCK_OP_RELEASE);
    CHECK_EQ(f.status, REDLOCK_OK);
    /* the silent node's commands time out and its connection is dropped */
    {
        long long until = ms_now() + 2000;
        while (redlock_socket_node_status(&s, 2, NULL, 0) == 0 && ms_now() < until) {
            struct pollfd none;
            (void)poll(&none, 0, 10);
            if (redlock_socket_now_us() >= f.deadline) redlock_socket_on_timer(&s);
        }
    }
    CHECK_EQ(redlock_socket_node_status(&s, 2, NULL, 0), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(f.fd[2], -1);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

/* RESP-only (on_reply set, no core) in a foreign loop: the set_timer hook
   hears every node's deadlines, the first node's included. Node 0 never
   answers: the hook is told its command deadline, and on_timer after it
   fails the command with NODE_TIMEOUT. */
typedef struct flr {
    fl f; /* first: the fl_ hooks take the same user pointer */
    rec x;
} flr;

static void flr_reply(void *u, int node, redlock_tag tag, const redlock_reply *r)
{
    rec_reply(&((flr *)u)->x, node, tag, r);
}

static void flr_error(void *u, int node, redlock_tag tag, int status)
{
    rec_error(&((flr *)u)->x, node, tag, status);
}

static void test_foreign_resp_deadline(void)
{
    hostile h;
    redlock_socket_config cfg;
    redlock_socket s;
    flr u;
    int64_t t0;
    long long until;
    const char *argv[] = {"PING"};
    int i;
    memset(&u, 0, sizeof u);
    u.f.deadline = REDLOCK_NO_DEADLINE;
    for (i = 0; i < REDLOCK_SOCKET_MAX_FDS; i++) u.f.fd[i] = -1;
    CHECK_EQ(hostile_start(&h, HOSTILE_SILENT, NULL), 0);
    redlock_socket_config_init(&cfg);
    cfg.node_count = 1;
    cfg.node[0].port = h.port;
    cfg.command_timeout_ms = 200;
    cfg.on_reply = flr_reply;
    cfg.on_error = flr_error;
    cfg.watch = fl_watch;
    cfg.set_timer = fl_timer;
    cfg.user = &u;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    t0 = redlock_socket_now_us();
    CHECK_EQ(redlock_socket_send(&s, 0, 1, argv, NULL, 7), REDLOCK_OK);
    /* connecting, then waiting for the reply: a deadline either way, and
       never later than the connect or command timeout from now */
    CHECK(u.f.deadline != REDLOCK_NO_DEADLINE);
    CHECK(u.f.deadline <= t0 + 1000 * 1000 + 50 * 1000);
    until = ms_now() + 3000;
    while (u.x.errors == 0 && ms_now() < until) {
        struct pollfd p;
        int ms = 10;
        p.fd = u.f.fd[0];
        p.events = (short)(((u.f.interest[0] & REDLOCK_SOCKET_READ) ? POLLIN : 0) |
                           ((u.f.interest[0] & REDLOCK_SOCKET_WRITE) ? POLLOUT : 0));
        p.revents = 0;
        if (u.f.deadline == REDLOCK_NO_DEADLINE) { CHECK(0); break; }
        if (poll(&p, p.fd >= 0 && p.events ? 1 : 0, ms) > 0) {
            /* each readiness call leaves the hook told the next deadline
               (once written, the command's, not the connect's) */
            if (p.revents & POLLOUT) {
                redlock_socket_on_writable(&s, 0);
                CHECK_EQ(u.f.deadline, redlock_socket_next_deadline(&s));
            }
            if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
                redlock_socket_on_readable(&s, 0);
                CHECK_EQ(u.f.deadline, redlock_socket_next_deadline(&s));
            }
        }
        if (redlock_socket_now_us() >= u.f.deadline) redlock_socket_on_timer(&s);
    }
    CHECK_EQ(u.x.errors, 1);
    CHECK_EQ(u.x.last_status, REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(u.x.last_tag, 7);
    CHECK(redlock_socket_now_us() - t0 >= 200 * 1000);
    CHECK(redlock_socket_now_us() - t0 < 800 * 1000); /* at the command timeout, not the connect's */
    CHECK_EQ(u.f.deadline, REDLOCK_NO_DEADLINE); /* nothing owed any more */
    redlock_socket_deinit(&s);
    hostile_stop(&h);
}

/* ---- a poll() loop of the caller's, with a descriptor of its own, built
   on redlock_socket_pollfds / poll_ms / dispatch (as the tool's loop) ---- */
static void test_poll_helpers(void)
{
    hostile h[3];
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_lock_opts o;
    redlock_socket_lock l;
    fl f;
    int i, p[2], woke = 0;
    long long until;
    memset(&f, 0, sizeof f);
    CHECK_EQ(pipe(p), 0);
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    CHECK_EQ(hostile_start(&h[0], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[1], HOSTILE_GOOD, NULL), 0);
    CHECK_EQ(hostile_start(&h[2], HOSTILE_SILENT, NULL), 0);
    for (i = 0; i < 3; i++) cfg.node[i].port = h[i].port;
    cfg.command_timeout_ms = 300;
    cfg.core.node_timeout_ms = 100;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "helpers";
    o.ttl_ms = 5000;
    o.on_result = fl_result;
    o.user = &f;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_poll_ms(&s, redlock_socket_now_us() - 1), 0);   /* until passed: do not wait */
    CHECK(redlock_socket_poll_ms(&s, REDLOCK_NO_DEADLINE) <= 1000);
    {   /* nothing of its own to wait for: until, rounded up to whole ms */
        int ms = redlock_socket_poll_ms(&s, redlock_socket_now_us() + 5500);
        CHECK(ms >= 5 && ms <= 6);
    }
    CHECK_EQ(redlock_acquire(&l.lock), REDLOCK_OK);
    CHECK(write(p[1], "x", 1) == 1);   /* the caller's own descriptor is ready too */
    for (until = ms_now() + 3000; f.done != REDLOCK_OP_RELEASE && ms_now() < until;) {
        struct pollfd pf[REDLOCK_SOCKET_MAX_FDS + 1];
        int n;
        pf[0].fd = p[0];
        pf[0].events = POLLIN;
        pf[0].revents = 0;
        n = redlock_socket_pollfds(&s, pf + 1);
        CHECK(n >= 0 && n <= 3);
        if (poll(pf, (nfds_t)n + 1, redlock_socket_poll_ms(&s, REDLOCK_NO_DEADLINE)) <= 0) n = 0;
        if (pf[0].revents & POLLIN) {
            char b;
            CHECK(read(p[0], &b, 1) == 1);
            woke++;
        }
        redlock_socket_dispatch(&s, pf + 1, n);
        if (f.done == REDLOCK_OP_ACQUIRE) {
            CHECK_EQ(f.status, REDLOCK_OK);
            f.done = 0;
            CHECK_EQ(redlock_release(&l.lock), REDLOCK_OK);
        }
    }
    CHECK_EQ(woke, 1);
    CHECK_EQ(f.done, REDLOCK_OP_RELEASE);
    CHECK_EQ(f.status, REDLOCK_OK);
    /* an entry whose descriptor is not the node's any more is skipped */
    {
        struct pollfd all[REDLOCK_SOCKET_MAX_FDS], *pf;
        int n = redlock_socket_pollfds(&s, all);
        /* exactly n entries on the heap: reading one more is an error
           that valgrind and ASan report */
        pf = (struct pollfd *)malloc((size_t)n * sizeof *pf);
        CHECK(pf != NULL);
        if (pf) {
            memcpy(pf, all, (size_t)n * sizeof *pf);
            for (i = 0; i < n; i++) {
                pf[i].fd = p[0];
                pf[i].revents = POLLIN | POLLOUT;
            }
            redlock_socket_dispatch(&s, pf, n + 5); /* n too large: only what was filled */
            free(pf);
        }
        CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), 0);
        CHECK_EQ(redlock_socket_node_connected(&s, 0), 1);
    }
    redlock_socket_dispatch(&s, NULL, 3); /* nothing filled: only what is due */
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    /* a deinitialised adapter is refused everywhere, never read */
    CHECK_EQ(redlock_socket_pollfds(&s, NULL), 0);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_node_connected(&s, 0), 0);
    CHECK_EQ(redlock_socket_memory(&s), 0);
    CHECK_EQ(redlock_socket_fd(&s, 0), -1);
    CHECK_EQ(redlock_socket_interest(&s, 0), 0);
    CHECK_EQ(redlock_socket_pending(&s), 0);
    CHECK_EQ(redlock_socket_next_deadline(&s), REDLOCK_NO_DEADLINE);
    CHECK(redlock_socket_client(&s) == NULL);
    redlock_socket_deinit(&s); /* twice: nothing */
    close(p[0]);
    close(p[1]);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

#include "strict_loop.h"

/* Three hostile nodes (modes m0..m2), a client on the strict loop, and
   one lock on key: the setup of the foreign-loop tests below. */
typedef struct sl3 {
    hostile h[3];
    redlock_socket s;
    redlock_socket_lock l;
    sl L;
} sl3;

static void sl3_open(sl3 *t, int m0, int m1, int m2, const char *key)
{
    const int modes[3] = {m0, m1, m2};
    int ports[3], i;
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hostile_start(&t->h[i], modes[i], NULL), 0);
        ports[i] = t->h[i].port;
    }
    CHECK_EQ(sl_open(&t->s, &t->L, NULL, ports, 3), REDLOCK_OK);
    CHECK_EQ(sl_lock(&t->s, &t->L, &t->l, key), REDLOCK_OK);
}

static void sl3_close(sl3 *t)
{
    int i;
    redlock_socket_lock_deinit(&t->l);
    sl_close(&t->s, &t->L);
    for (i = 0; i < 3; i++) hostile_stop(&t->h[i]);
}

/* The timer is one-shot. Fired before its deadline, it must be armed
   again: against nodes that accept and never answer nothing else happens,
   and the acquire would never end. Fires 20 ms late are fine too. */
static void test_foreign_timer_early(void)
{
    sl3 t;
    sl3_open(&t, HOSTILE_SILENT, HOSTILE_SILENT, HOSTILE_SILENT, "early");
    t.L.early = 3;
    t.L.late_us = 20000;
    CHECK_EQ(redlock_acquire(&t.l.lock), REDLOCK_OK);
    CHECK(t.L.armed);
    sl_run(&t.s, &t.L, 3, REDLOCK_OP_ACQUIRE, 8000);
    CHECK(t.L.early_fired >= 1);
    CHECK_EQ(t.L.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(t.L.status, REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&t.l.lock), REDLOCK_STATE_IDLE);
    sl3_close(&t);
}

/* A node that resets every connection: the loop hears of each socket
   once and of its close once (fd -1), never twice of the same thing, and
   the other two nodes carry the lock. */
static void test_foreign_node_resets(void)
{
    sl3 t;
    sl3_open(&t, HOSTILE_GOOD, HOSTILE_RESET, HOSTILE_GOOD, "resets");
    CHECK_EQ(redlock_acquire(&t.l.lock), REDLOCK_OK);
    sl_run(&t.s, &t.L, 3, REDLOCK_OP_ACQUIRE, 5000);
    CHECK_EQ(t.L.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(t.L.status, REDLOCK_OK);
    {   /* the two others may have granted before the reset arrived */
        long long until = ms_now() + 2000;
        while (redlock_socket_node_status(&t.s, 1, NULL, 0) == 0 && ms_now() < until) redlock_socket_run(&t.s, 10);
    }
    CHECK_EQ(redlock_socket_node_status(&t.s, 1, NULL, 0), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(t.L.fd[1], -1);
    CHECK_EQ(redlock_release(&t.l.lock), REDLOCK_OK);
    sl_run(&t.s, &t.L, 3, REDLOCK_OP_RELEASE, 5000);
    CHECK_EQ(t.L.done, REDLOCK_OP_RELEASE);
    CHECK_EQ(t.L.status, REDLOCK_OK);
    sl3_close(&t);
}

/* The blocking calls with the hooks set (a program that uses both): when a
   blocking call or run() returns, the set_timer hook has been told the
   deadline that remains, also one the adapter's own timeouts moved. */
static void test_blocking_with_hooks(void)
{
    sl3 t;
    int i;
    sl3_open(&t, HOSTILE_GOOD, HOSTILE_GOOD, HOSTILE_SILENT, "hooks");
    CHECK_EQ(redlock_socket_acquire(&t.l), REDLOCK_OK);
    CHECK_EQ(t.L.deadline, redlock_socket_next_deadline(&t.s));
    for (i = 0; i < 30; i++) { /* the silent node's command times out meanwhile */
        CHECK_EQ(redlock_socket_run(&t.s, 40), REDLOCK_OK);
        CHECK_EQ(t.L.deadline, redlock_socket_next_deadline(&t.s));
    }
    CHECK_EQ(redlock_socket_release(&t.l), REDLOCK_OK);
    CHECK_EQ(t.L.deadline, redlock_socket_next_deadline(&t.s));
    sl3_close(&t);
}

/* on_timer on every round of the loop, and before and after anything is
   pending: harmless, and each call is followed by set_timer with the
   deadline that remains (REDLOCK_NO_DEADLINE: none). */
static void test_foreign_timer_spurious(void)
{
    sl3 t;
    int i;
    sl3_open(&t, HOSTILE_GOOD, HOSTILE_GOOD, HOSTILE_GOOD, "spurious");
    sl_spurious(&t.s, &t.L); /* nothing pending at all */
    CHECK_EQ(t.L.timer_calls, 1);
    CHECK_EQ(t.L.deadline, REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_acquire(&t.l.lock), REDLOCK_OK);
    for (i = 0; i < 100; i++) sl_spurious(&t.s, &t.L); /* a burst, before any reply */
    t.L.spurious = 1;
    sl_run(&t.s, &t.L, 3, REDLOCK_OP_ACQUIRE, 5000);
    CHECK_EQ(t.L.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(t.L.status, REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&t.l.lock), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&t.l.lock), REDLOCK_OK);
    sl_run(&t.s, &t.L, 3, REDLOCK_OP_RELEASE, 5000);
    CHECK_EQ(t.L.done, REDLOCK_OP_RELEASE);
    CHECK_EQ(t.L.status, REDLOCK_OK);
    sl_spurious(&t.s, &t.L);
    CHECK(t.L.spurious_calls > 101);
    CHECK_EQ(t.L.spurious_bad, 0);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(redlock_socket_node_status(&t.s, i, NULL, 0), 0);
        CHECK(redlock_socket_node_connected(&t.s, i));
    }
    sl3_close(&t);
}

/* A node whose name gives two addresses: the first refuses (after the
   connect started), the second listens. The second socket gets the closed
   one's fd number; the loop must hear of the close (fd -1) and then of the
   new socket, or an epoll set, which dropped the closed fd, never reports
   the new one. */
static void test_foreign_fd_reopened(void)
{
    hostile h;
    redlock_socket s;
    redlock_socket_lock l;
    sl L;
    int i, reopened = -1;
    CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
    two_ports[0] = hostile_closed_port();
    two_ports[1] = h.port;
    CHECK_EQ(sl_open(&s, &L, "two.test", &two_ports[1], 1), REDLOCK_OK);
    CHECK_EQ(sl_lock(&s, &L, &l, "reopened"), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&l.lock), REDLOCK_OK);
    sl_run(&s, &L, 1, REDLOCK_OP_ACQUIRE, 5000);
    CHECK_EQ(L.done, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(L.status, REDLOCK_OK);
    CHECK_EQ(L.ctl_errors, 0);
    /* connecting on fd N, then -1 (closed), then N again (connecting) */
    for (i = 0; i + 2 < L.nlog; i++)
        if (L.log_fd[i] >= 0 && L.log_interest[i] == REDLOCK_SOCKET_WRITE && L.log_fd[i + 1] == -1 &&
            L.log_interest[i + 1] == 0 && L.log_fd[i + 2] == L.log_fd[i] &&
            L.log_interest[i + 2] == REDLOCK_SOCKET_WRITE)
            reopened = i;
#ifdef __linux__
    /* a refused loopback connect fails after connect() returned there */
    CHECK(reopened >= 0);
#endif
    if (reopened < 0) printf("#   no close then reopen in the watch calls (refused at once?)\n");
    CHECK_EQ(L.fd[0], redlock_socket_fd(&s, 0));
    CHECK_EQ(L.interest[0], REDLOCK_SOCKET_READ);
    CHECK_EQ(redlock_release(&l.lock), REDLOCK_OK);
    sl_run(&s, &L, 1, REDLOCK_OP_RELEASE, 5000);
    CHECK_EQ(L.done, REDLOCK_OP_RELEASE);
    CHECK_EQ(L.status, REDLOCK_OK);
    redlock_socket_lock_deinit(&l);
    sl_close(&s, &L);
    hostile_stop(&h);
}

/* A stray on_writable / on_readable (for a socket that had the same fd
   number, or a loop's guess) does not finish a connect still in progress:
   here the listener's accept queue is full, so the connect waits. The
   node stays connecting and in the end fails as CONNECT, not as a
   transport error on a socket taken for connected. */
static void test_foreign_stray_readiness(void)
{
    redlock_socket s;
    rec x;
    int lfd, filler, i, port = hostile_full_backlog(&lfd, &filler);
    CHECK(port > 0);
    CHECK_EQ(raw_open(&s, &x, port, NULL), REDLOCK_OK);
    CHECK_EQ(ping(&s, 5), 0);
    for (i = 0; i < 10; i++) {
        redlock_socket_on_writable(&s, 0);
        redlock_socket_on_readable(&s, 0);
    }
    CHECK(!redlock_socket_node_connected(&s, 0));
    CHECK_EQ(redlock_socket_interest(&s, 0), REDLOCK_SOCKET_WRITE);
    CHECK_EQ(x.errors, 0);
    wait_answers(&s, &x, 1, 3000); /* connect_timeout_ms 300 */
    CHECK_EQ(x.errors, 1);
    CHECK_EQ(x.last_status, REDLOCK_ERR_CONNECT);
    CHECK_EQ(redlock_socket_node_status(&s, 0, NULL, 0), REDLOCK_ERR_CONNECT);
    redlock_socket_deinit(&s);
    close(filler);
    close(lfd);
}

/* The blocking calls refuse to nest inside callbacks; bad arguments. */
static int nested_rc = 1;
static int nested_connect_rc = 1;
static redlock_socket *nested_s;
static void nested_result(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    (void)r;
    nested_rc = redlock_socket_run(nested_s, 10);
    nested_connect_rc = redlock_socket_connect(nested_s);
}

/* Proves: a blocking call whose lock is deinitialised inside a callback
   before its result returns DETACHED, at once, instead of waiting for a
   result that cannot come. Lock A's acquire goes out first; while B's
   blocking acquire runs the loop, A's result arrives and its on_result
   deinitialises B: by the adapter's redlock_socket_lock_deinit, or by the
   core's redlock_lock_deinit on the embedded lock (the adapter then finds
   nothing left in flight). */
static redlock_socket_lock *detach_me;
static int detach_core; /* deinit the embedded core lock, not the wrapper */
static void detach_on_result(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    (void)r;
    if (!detach_me) return;
    if (detach_core) redlock_lock_deinit(&detach_me->lock);
    else redlock_socket_lock_deinit(detach_me);
    detach_me = NULL;
}

static void test_deinit_inside_blocking_call(void)
{
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock a, b;
    redlock_lock_opts o;
    hostile h[3];
    long long t0;
    int i;
    redlock_socket_config_init(&cfg);
    cfg.node_count = 3;
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hostile_start(&h[i], HOSTILE_GOOD, NULL), 0);
        cfg.node[i].port = h[i].port;
    }
    cfg.core.node_timeout_ms = 2000;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.ttl_ms = 5000;
    for (detach_core = 0; detach_core < 2; detach_core++) {
        o.key = "detach-a";
        o.on_result = detach_on_result;
        CHECK_EQ(redlock_socket_lock_init(&s, &a, &o), REDLOCK_OK);
        o.key = "detach-b";
        o.on_result = NULL;
        CHECK_EQ(redlock_socket_lock_init(&s, &b, &o), REDLOCK_OK);
        detach_me = &b;
        CHECK_EQ(redlock_acquire(&a.lock), REDLOCK_OK); /* its result comes later */
        t0 = ms_now();
        CHECK_EQ(redlock_socket_acquire(&b), REDLOCK_ERR_DETACHED);
        CHECK(detach_me == NULL);
        CHECK(ms_now() - t0 < 1000);
        if (!detach_core) CHECK_EQ(redlock_socket_acquire(&b), REDLOCK_ERR_INVALID); /* deinitialised */
        redlock_socket_lock_deinit(&b);
        redlock_socket_lock_deinit(&a);
    }
    redlock_socket_deinit(&s);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

static void test_api_guards(void)
{
    redlock_socket_config cfg;
    redlock_socket s;
    redlock_socket_lock l;
    redlock_lock_opts o;
    hostile h;
    CHECK_EQ(redlock_socket_memory(NULL), 0);
    redlock_socket_config_init(&cfg);
    cfg.node_count = 0;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_NODES);
    cfg.node_count = REDLOCK_MAX_NODES + 1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_NODES);
    cfg.node_count = 1;
    cfg.node[0].username = "u"; /* user without password */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.node[0].username = NULL;
    cfg.node[0].port = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.node[0].port = 6379;
    cfg.node[0].db = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.node[0].db = 0;
    cfg.db = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.db = 0;
    cfg.connect_timeout_ms = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.connect_timeout_ms = 0;
    cfg.command_timeout_ms = -1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.command_timeout_ms = 0;
    cfg.on_reply = rec_reply; /* raw mode needs both, or neither */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.on_reply = NULL;
    cfg.on_error = rec_error;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.on_error = NULL;
    cfg.watchdog_thread = 1; /* this build has no REDLOCK_SOCKET_THREAD */
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    cfg.watchdog_thread = 0;
    cfg.node[0].port = 70000;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_init(NULL, &cfg), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_run(NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_fd(NULL, 0), -1);
    CHECK_EQ(hostile_start(&h, HOSTILE_GOOD, NULL), 0);
    cfg.node[0].port = h.port;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK);
    CHECK_EQ(redlock_socket_connect(&s), REDLOCK_OK);
    CHECK(redlock_socket_node_connected(&s, 0));
    CHECK_EQ(redlock_socket_node_connected(&s, -1), 0);
    CHECK_EQ(redlock_socket_node_connected(&s, 1), 0);
    CHECK_EQ(redlock_socket_node_connected(NULL, 0), 0);
    CHECK_EQ(redlock_socket_node_status(&s, -1, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_node_status(&s, 1, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_node_status(NULL, 0, NULL, 0), REDLOCK_ERR_INVALID);
    /* the foreign-loop calls: a node out of range is nothing to watch,
       and an event for it is ignored */
    CHECK(redlock_socket_fd(&s, 0) >= 0);
    CHECK_EQ(redlock_socket_fd(&s, -1), -1);
    CHECK_EQ(redlock_socket_fd(&s, 1), -1);
    CHECK_EQ(redlock_socket_interest(&s, -1), 0);
    CHECK_EQ(redlock_socket_interest(&s, 1), 0);
    CHECK_EQ(redlock_socket_interest(NULL, 0), 0);
    redlock_socket_on_readable(&s, -1);
    redlock_socket_on_readable(&s, 1);
    redlock_socket_on_writable(&s, -1);
    redlock_socket_on_writable(&s, 1);
    redlock_socket_on_readable(NULL, 0);
    redlock_socket_on_writable(NULL, 0);
    redlock_socket_on_timer(NULL);
    CHECK(redlock_socket_node_connected(&s, 0)); /* untouched by all that */
    {
        const char *argv[] = { "PING" };
        CHECK_EQ(redlock_socket_send(&s, -1, 1, argv, NULL, 1), REDLOCK_ERR_INVALID);
        CHECK_EQ(redlock_socket_send(&s, 1, 1, argv, NULL, 1), REDLOCK_ERR_INVALID);
        CHECK_EQ(redlock_socket_send(&s, 0, 0, argv, NULL, 1), REDLOCK_ERR_INVALID);
        CHECK_EQ(redlock_socket_send(NULL, 0, 1, argv, NULL, 1), REDLOCK_ERR_INVALID);
    }
    CHECK_EQ(redlock_socket_acquire(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_release(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_socket_extend(NULL, 0), REDLOCK_ERR_INVALID);
    {
        char out[8] = "xxxxxxx";
        CHECK_EQ(redlock_format_node(NULL, out, sizeof out), 0);
        CHECK_STR(out, ""); /* terminated */
    }
    {   /* the adapter's former names of the node-list functions still work */
        redlock_socket_config c2;
        void *mem = NULL;
        char err[64], list[] = "redis://:pw@h:1";
        redlock_socket_config_init(&c2);
        CHECK_EQ(redlock_socket_parse_nodes(&c2, "h:1,h:2", &mem, err, sizeof err), 0);
        CHECK_EQ(c2.node_count, 2);
        CHECK_EQ(redlock_socket_format_node(&c2.node[1], err, sizeof err), 3);
        redlock_socket_free_nodes(mem);
        redlock_socket_scrub_nodes(list);
        CHECK_STR(list, "redis://:xx@h:1");
    }
    CHECK_EQ(redlock_socket_run(&s, -1), REDLOCK_ERR_INVALID);
    {   /* poll_ms rounds up: a poll() given it does not end before the deadline */
        int64_t until = redlock_socket_now_us() + 999000, d = redlock_socket_next_deadline(&s);
        int64_t wake = d < until ? d : until;
        int ms = redlock_socket_poll_ms(&s, until);
        CHECK((int64_t)ms * 1000 >= wake - redlock_socket_now_us());
        CHECK(ms >= 0 && ms <= 1000);
    }
    nested_s = &s;
    memset(&o, 0, sizeof o);
    o.key = "guard";
    o.ttl_ms = 1000;
    o.on_result = nested_result;
    CHECK_EQ(redlock_socket_lock_init(&s, &l, &o), REDLOCK_OK);
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_OK);
    CHECK_EQ(nested_rc, REDLOCK_ERR_BUSY);
    CHECK_EQ(nested_connect_rc, REDLOCK_ERR_BUSY); /* connect blocks too */
    CHECK_EQ(redlock_socket_acquire(&l), REDLOCK_ERR_ALREADY_HELD);
    CHECK_EQ(redlock_socket_extend(&l, 2000), REDLOCK_OK);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_OK);
    CHECK_EQ(redlock_socket_release(&l), REDLOCK_ERR_NOT_HELD);
    redlock_socket_lock_deinit(&l);
    redlock_socket_deinit(&s);
    redlock_socket_deinit(&s); /* twice is harmless */
    hostile_stop(&h);
}

/* A build without REDLOCK_SOCKET_TLS (this one) refuses TLS at init, with
   NO_TLS, however it was asked for (a rediss:// node, which reads the same
   in every build, or cfg.tls): never spoken to in plain text. */
static void test_tls_not_built(void)
{
    redlock_socket_config cfg;
    redlock_socket s;
    void *mem = NULL;
    char err[128];
    redlock_socket_config_init(&cfg);
    CHECK_EQ(redlock_parse_nodes(cfg.node, &cfg.node_count, "127.0.0.1:7000,rediss://127.0.0.1:7001", &mem, err,
                                 sizeof err), 0);
    CHECK_EQ(cfg.node[1].tls.enable, 1);
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_NO_TLS);
    cfg.node[1].tls.enable = 0;
    cfg.tls.enable = 1;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_ERR_NO_TLS);
    cfg.tls.enable = 0;
    CHECK_EQ(redlock_socket_init(&s, &cfg), REDLOCK_OK); /* the control */
    CHECK_EQ(redlock_socket_node_pending(&s, 1), 0);
    CHECK_EQ(redlock_socket_node_pending(&s, 2), 0); /* no such node */
    redlock_socket_deinit(&s);
    redlock_free_nodes(mem);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_NO_TLS), "unknown status") != 0);
}

/* ---- the subscribers' state machine (redlock_conn.h), without a server ---- */

static redlock_reply sub_str(const char *t)
{
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STRING;
    r.str = t;
    r.len = strlen(t);
    return r;
}

/* What a subscriber makes of reply r when it owes `kind` (-1: nothing);
   sub_left: the answers it still owes after. */
static size_t sub_left;
static int sub_answer(redlock__conn_life *l, int kind, const redlock_reply *r)
{
    static redlock__notify table; /* empty: a message wakes nobody */
    redlock__conn_ring q;
    redlock__conn_sub_reply v;
    int what;
    memset(&q, 0, sizeof q);
    if (kind >= 0) {
        CHECK_EQ(redlock__conn_reserve(&q, 4, 4), 0);
        redlock__conn_push(&q, kind, 0, 0);
    }
    redlock__conn_sub_view(&v, r);
    what = redlock__conn_sub_answer(l, &q, &table, &v);
    sub_left = q.count;
    redlock__conn_ring_free(&q);
    return what;
}

/* Proves each reply's meaning on a subscriber, for every adapter: a
   message owes nothing; AUTH's status and (UN)SUBSCRIBE's confirmations
   answer what was asked (a confirmed SUBSCRIBE ends a refusal and its
   backoff); an error is a refusal whose status comes from its words
   (NOAUTH / WRONGPASS: AUTH, else SERVER), kept, with a backoff that
   doubles; anything else, or a reply owed nothing, is PROTOCOL; and the
   idle close leaves a refused (closed) subscriber's backoff alone. */
static void test_sub_answer(void)
{
    redlock__conn_life l;
    redlock__conn_subs t;
    redlock_reply el[3], arr, st, err;
    memset(&l, 0, sizeof l);
    memset(&t, 0, sizeof t);
    el[0] = sub_str("message");
    el[1] = sub_str(REDLOCK_CHANNEL_PREFIX "k");
    el[2] = sub_str("released");
    memset(&arr, 0, sizeof arr);
    arr.type = REDLOCK_REPLY_ARRAY;
    arr.element = el;
    arr.elements = 3;
    st = sub_str("OK");
    st.type = REDLOCK_REPLY_STATUS;
    err = sub_str("NOPERM this user has no permissions to access the channel");
    err.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &arr), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(sub_left, 1); /* a message answers nothing */
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_AUTH, &st), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(sub_left, 0);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &err), REDLOCK__CONN_SUB_REFUSED);
    CHECK_EQ(l.shunned, REDLOCK_ERR_SERVER);
    CHECK_STR(l.refusal, err.str);
    CHECK_EQ(l.backoff_ms, REDLOCK__NOTIFY_BACKOFF_MIN_MS);
    err.str = "WRONGPASS invalid username-password pair";
    err.len = strlen(err.str);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_AUTH, &err), REDLOCK__CONN_SUB_REFUSED);
    CHECK_EQ(l.shunned, REDLOCK_ERR_AUTH);
    CHECK_EQ(l.backoff_ms, 2 * REDLOCK__NOTIFY_BACKOFF_MIN_MS);
    redlock__conn_sub_hold(&l, 5000000);
    CHECK_EQ(l.retry_at, 5000000 + 2 * REDLOCK__NOTIFY_BACKOFF_MIN_MS * 1000);
    /* closed and refused, the table empty and idle: it keeps its backoff */
    t.idle_since = 1;
    CHECK_EQ(redlock__conn_sub_tend(&t, &l, 0, 6000000), REDLOCK__CONN_SUB_KEEP);
    CHECK_EQ(redlock__conn_sub_tend(&t, &l, 1, 6000000), REDLOCK__CONN_SUB_CLOSE);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &st), REDLOCK__CONN_SUB_PROTOCOL);
    el[0] = sub_str("subscribe");
    CHECK_EQ(sub_answer(&l, -1, &arr), REDLOCK__CONN_SUB_PROTOCOL);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_AUTH, &arr), REDLOCK__CONN_SUB_PROTOCOL);
    CHECK_EQ(l.shunned, REDLOCK_ERR_AUTH);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &arr), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(l.shunned, 0);
    CHECK_EQ(l.backoff_ms, 0);
    CHECK_STR(l.refusal, "");
    el[0] = sub_str("unsubscribe");
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_UNSUB, &arr), REDLOCK__CONN_SUB_NEXT); /* UNSUBSCRIBE's own kind */
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &arr), REDLOCK__CONN_SUB_PROTOCOL);
}

static int sub_queued_kind, sub_queued_argc;
static char sub_queued[2][64];
static int sub_queue(void *ctx, int kind, int argc, const char **argv, const size_t *len)
{
    int k;
    (void)ctx;
    sub_queued_kind = kind;
    sub_queued_argc = argc;
    for (k = 0; k < argc && k < 2; k++) snprintf(sub_queued[k], sizeof sub_queued[k], "%.*s", (int)len[k], argv[k]);
    return 0;
}

static int sub_no_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    (void)user, (void)node, (void)cmd, (void)tag;
    return 0;
}

/* Proves the sharded subscribers' pieces every adapter shares, without a
   server: SSUBSCRIBE / SUNSUBSCRIBE of a key's shard channel (the key's
   own slot: "{" key "}" unless it has a tag); a shard channel names the
   key it was made of (and for "{X}", "X" too: redlock_shard_channel
   gives both one channel); an "smessage" owes nothing and wakes the
   table's entries of both keys it may name; "ssubscribe" confirms a
   SUBSCRIBE (ending a refusal), "sunsubscribe" an UNSUBSCRIBE; a
   "sunsubscribe" nobody asked for (the slot moved away) and a MOVED or
   ASK answering SSUBSCRIBE are RESHARD, not a refusal (no backoff, the
   SUBSCRIBE owed stays owed for the unasked one); and INFO's
   redis_version says whether a server has sharded pub/sub (7 and later). */
static void test_sub_answer_sharded(void)
{
    static const char *const keys[] = { "k", "{orders}:lock", "{k}", "a}b", "{}x" };
    redlock__conn_life l;
    redlock_reply el[3], arr, err;
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock lk[2];
    redlock_lock_opts o;
    static redlock__notify table;
    redlock__conn_ring q;
    redlock__conn_sub_reply v;
    const char *key[2];
    size_t klen[2], k;
    char ch[64];
    memset(&l, 0, sizeof l);
    /* the commands */
    CHECK_EQ(redlock__conn_sub_cmd(1, "k", 1, 1, sub_queue, NULL), 0);
    CHECK_EQ(sub_queued_kind, REDLOCK__CONN_SUB);
    CHECK_EQ(sub_queued_argc, 2);
    CHECK_STR(sub_queued[0], "SSUBSCRIBE");
    CHECK_STR(sub_queued[1], REDLOCK_CHANNEL_PREFIX "{k}");
    CHECK_EQ(redlock__conn_sub_cmd(0, "{t}x", 4, 1, sub_queue, NULL), 0);
    CHECK_EQ(sub_queued_kind, REDLOCK__CONN_UNSUB);
    CHECK_STR(sub_queued[0], "SUNSUBSCRIBE");
    CHECK_STR(sub_queued[1], REDLOCK_CHANNEL_PREFIX "{t}x");
    /* a shard channel names its key (and the slot is the key's) */
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t n = redlock_shard_channel(keys[k], strlen(keys[k]), ch, sizeof ch);
        int m = redlock__notify_shard_keys(ch, n, key, klen), hit = 0, j;
        CHECK(m >= 1 && m <= 2);
        for (j = 0; j < m; j++) hit |= klen[j] == strlen(keys[k]) && memcmp(key[j], keys[k], klen[j]) == 0;
        CHECK(hit);
        if (k < 3) /* not "a}b", "{}x": a '}' in an untagged key, the documented exception */
            CHECK_EQ(redlock_cluster_slot(ch, n), redlock_cluster_slot(keys[k], strlen(keys[k])));
    }
    CHECK_EQ(redlock__notify_shard_keys("other:{k}", 9, key, klen), 0);
    CHECK_EQ(redlock__notify_shard_keys(REDLOCK_CHANNEL_PREFIX "{k}", sizeof REDLOCK_CHANNEL_PREFIX + 2, key, klen), 2);
    CHECK(klen[0] == 3 && memcmp(key[0], "{k}", 3) == 0 && klen[1] == 1 && key[1][0] == 'k');
    /* an smessage on "{k}"'s channel wakes the entries of "k" and "{k}" */
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    memset(&cb, 0, sizeof cb);
    cb.send = sub_no_send;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.ttl_ms = 1000;
    o.key = "k";
    CHECK_EQ(redlock_lock_init(&lk[0], &c, &o), REDLOCK_OK);
    o.key = "{k}";
    CHECK_EQ(redlock_lock_init(&lk[1], &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock__notify_add(&table, &lk[0]), 1);
    CHECK_EQ(redlock__notify_add(&table, &lk[1]), 1);
    el[0] = sub_str("smessage");
    el[1] = sub_str(REDLOCK_CHANNEL_PREFIX "{k}");
    el[2] = sub_str("released");
    memset(&arr, 0, sizeof arr);
    arr.type = REDLOCK_REPLY_ARRAY;
    arr.element = el;
    arr.elements = 3;
    memset(&q, 0, sizeof q);
    CHECK_EQ(redlock__conn_reserve(&q, 4, 4), 0);
    redlock__conn_push(&q, REDLOCK__CONN_SUB, 0, 0);
    redlock__conn_sub_view(&v, &arr);
    CHECK_EQ(redlock__conn_sub_answer(&l, &q, &table, &v), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(q.count, 1); /* owes nothing */
    for (k = 0; k < table.nbucket; k++) {
        const redlock__notify_entry *e;
        for (e = table.bucket[k]; e; e = e->next) CHECK(e->woken > 0); /* both keys (one message each) */
    }
    redlock__conn_ring_free(&q);
    redlock__notify_free(&table);
    redlock_lock_deinit(&lk[0]);
    redlock_lock_deinit(&lk[1]);
    redlock_client_deinit(&c);
    /* confirmations */
    l.shunned = REDLOCK_ERR_SERVER;
    l.backoff_ms = 4000;
    el[0] = sub_str("ssubscribe");
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &arr), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(sub_left, 0);
    CHECK_EQ(l.shunned, 0); /* heard again */
    CHECK_EQ(l.backoff_ms, 0);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_UNSUB, &arr), REDLOCK__CONN_SUB_PROTOCOL);
    el[0] = sub_str("sunsubscribe");
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_UNSUB, &arr), REDLOCK__CONN_SUB_NEXT);
    CHECK_EQ(sub_left, 0);
    /* the slot moved away: RESHARD, the SUBSCRIBE owed still owed */
    CHECK_EQ(sub_answer(&l, -1, &arr), REDLOCK__CONN_SUB_RESHARD);
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &arr), REDLOCK__CONN_SUB_RESHARD);
    CHECK_EQ(sub_left, 1);
    err = sub_str("MOVED 3999 127.0.0.1:7001");
    err.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &err), REDLOCK__CONN_SUB_RESHARD);
    err = sub_str("ASK 3999 127.0.0.1:7001");
    err.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(sub_answer(&l, REDLOCK__CONN_SUB, &err), REDLOCK__CONN_SUB_RESHARD);
    CHECK_EQ(l.shunned, 0); /* not a refusal: no backoff */
    CHECK_EQ(l.backoff_ms, 0);
    /* INFO */
    CHECK(redlock__conn_info_sharded("# Server\r\nredis_version:7.0.15\r\n", 34));
    CHECK(redlock__conn_info_sharded("# Server\r\nredis_version:10.0.0\r\n", 34));
    CHECK(!redlock__conn_info_sharded("# Server\r\nredis_version:6.2.14\r\n", 34));
    CHECK(!redlock__conn_info_sharded("# Server\r\nredis_mode:cluster\r\n", 32));
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    alarm(100);
    RUN(test_sub_answer);
    RUN(test_sub_answer_sharded);
    RUN(test_malformed_reply);
    RUN(test_bad_line_ending);
    RUN(test_bad_integer);
    RUN(test_resp3_null);
    RUN(test_resp3_map);
    RUN(test_resp3_push);
    RUN(test_huge_bulk_len);
    RUN(test_huge_array_len);
    RUN(test_negative_len);
    RUN(test_deep_nesting);
    RUN(test_cut_then_close);
    RUN(test_cut_then_silence);
    RUN(test_silence);
    RUN(test_reset);
    RUN(test_closed_no_reply);
    RUN(test_flood_line);
    RUN(test_flood_buffer);
    RUN(test_auth_refused);
    RUN(test_handshake_accepted);
    RUN(test_refused);
    RUN(test_unix_missing_and_bad_host);
    RUN(test_hostname);
    RUN(test_wrong_type_passed_on);
    RUN(test_unsolicited);
    RUN(test_inflight_fail_and_reconnect);
    RUN(test_core_huge_bulk);
    RUN(test_core_huge_array);
    RUN(test_core_resp3);
    RUN(test_core_wrong_type);
    RUN(test_core_silent);
    RUN(test_core_reset);
    RUN(test_core_refused);
    RUN(test_core_info);
    RUN(test_core_info_life);
    RUN(test_foreign_loop);
    RUN(test_poll_helpers);
    RUN(test_foreign_timer_early);
    RUN(test_foreign_node_resets);
    RUN(test_foreign_timer_spurious);
    RUN(test_foreign_resp_deadline);
    RUN(test_blocking_with_hooks);
    RUN(test_foreign_fd_reopened);
    RUN(test_foreign_stray_readiness);
    RUN(test_api_guards);
    RUN(test_tls_not_built);
    RUN(test_deinit_inside_blocking_call);
    return CHECK_EXIT();
}
