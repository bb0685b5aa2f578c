/* redlock_libev.h - redlock.h on hiredis async + libev.

   Do this:
       #define REDLOCK_LIBEV_IMPLEMENTATION
   before you include this file in *one* C or C++ file (with
   REDLOCK_IMPLEMENTATION there or in another one, for redlock.h, which it
   includes); REDLOCK_LIBEV_STATIC makes its functions static. Include it
   before any system header or build with -D_POSIX_C_SOURCE=200809L. Link
   -lhiredis -lev (libev has no pkg-config file). Works with hiredis 0.14
   (Debian 12) and 1.x.

       struct ev_loop *loop = EV_DEFAULT;
       redlock_libev_config o;
       redlock_libev_config_init(&o);
       o.node_count = 3;
       o.node[0].host = "127.0.0.1"; o.node[0].port = 7001; ...
       // or redlock_parse_nodes(o.node, &o.node_count, list, ...) from a
       // node list (redlock_nodes.h), as for every adapter
       redlock_libev c;
       redlock_libev_init(&c, loop, &o);        // connects in the background

       redlock_lock_opts lo = {0};
       lo.key = "job"; lo.ttl_ms = 5000; lo.watchdog = 1;
       lo.on_result = on_result;                // called from the loop
       redlock_lock lk;
       redlock_libev_lock_init(&c, &lk, &lo);   // or redlock_lock_init(&lk, redlock_libev_client(&c), &lo)
       redlock_acquire(&lk);                    // the core API, unchanged
       ev_run(loop, 0);
       ...
       redlock_lock_deinit(&lk);
       redlock_libev_deinit(&c);                  // not inside a callback

   HOW IT TALKS
   One redisAsyncContext per node, attached to the loop with hiredis's own
   adapters/libev.h; one ev_timer for the core's set_timer. The core's
   commands go out with redisAsyncCommandArgv and their replies are handed
   to redlock_on_reply from the completion callbacks (replies belong to
   hiredis and are not kept). The adapter keeps, per node, the tags it has
   in flight, in order, so nothing is lost when a node drops: every tag the
   node still owed is answered with redlock_on_error(tag,
   REDLOCK_ERR_TRANSPORT) (REDLOCK_ERR_NODE_TIMEOUT when the adapter itself
   dropped the node for owing a reply longer than command_timeout_ms).
   * Timeouts: hiredis 0.14 has none for async contexts (and 1.x's is an
     inactivity timer, not a deadline); the core's node_timeout_ms decides
     each round, and command_timeout_ms (default 1000) is the adapter's own
     deadline after which a silent node's connection is freed and reopened.
   * Reconnect: a node that dropped (or refused the connection) is
     reconnected from a timer after reconnect_delay_ms (default 100; 1000
     after an AUTH refusal), again and again while it stays down; until then
     its votes fail at once with its last status (REDLOCK_ERR_CONNECT if
     none). A command sent once the delay has passed opens the connection
     itself, whether or not the loop has run the timer yet.
   * AUTH (password, or ACL user + password), SELECT, INFO and CONFIG GET
     appendfsync are queued right after the connect. Before the replies
     behind them, INFO's maxmemory_policy tells the core what the node may
     evict (redlock.h section 4, Eviction; redlock_libev_node_policy), and
     its run_id, uptime_in_seconds and aof_enabled with CONFIG's
     appendfsync whether the server restarted and keeps keys across
     restarts (section 4, Restarts); an INFO refused or unreadable leaves
     the node as it was, a CONFIG refused counts as keys not kept;
     cfg.info_off = 1 leaves both out (needed with a
     REDLOCK_LIBEV_MAX_BUFFERED below INFO's answer, ~6 KiB).
     An AUTH refusal makes that node's answers REDLOCK_ERR_AUTH
     (REDLOCK_ERR_SELECT for SELECT; too few usable nodes left: the
     acquire ends at once with REDLOCK_ERR_CONFIG, see redlock.h) and is
     shown by redlock_libev_node_status() (0 again after the node's next
     good reply). A SELECT refused (a db that does
     not exist) is only known after the command queued behind it ran in
     db 0: check the db number.
   * A connection the node closed while idle (a restart) is noticed before
     the next command is written to it: that command goes to a new
     connection, and the vote is not lost.
   * Hostile nodes: the adapter reads each node's socket itself and hands
     the bytes to hiredis only after checking them, because hiredis aborts
     the process on a reply nobody asked for and buffers a reply of any
     size. A node that sends such a reply, leaves more than
     REDLOCK_LIBEV_MAX_BUFFERED (1 MiB) of unparsed bytes, or sends a reply
     whose objects would take more than that (an endless array: hiredis
     builds each element as it arrives; counted before hiredis sees the
     bytes) is dropped: its votes fail with REDLOCK_ERR_PROTOCOL ("reply
     too large" for the last two); memory per node stays bounded, the
     subscribers' too.
   * Requests in flight: a node may owe up to REDLOCK_HIREDIS_MAX_PENDING replies
     (default 1,048,576, both hiredis adapters; the queue grows as needed,
     24 bytes a request; REDLOCK_HIREDIS_QUEUE is its older name).
     Past that a command is refused with REDLOCK_ERR_QUEUE_FULL: the
     connection stays up, and an operation that misses its quorum for it
     ends REDLOCK_ERR_OVERLOADED.
   * Nothing blocks: connects, reads and writes are non-blocking and driven
     by the loop (host names are resolved with getaddrinfo(), which may
     block: give addresses where that matters), a Sentinel group's
     sentinels too.
   * A Sentinel group (redis-sentinel://[user:pass@]s1:p1[+s2:p2...]/NAME
     [?db=N&sentinel_user=U&sentinel_password=P], kind
     REDLOCK_NODE_SENTINEL) is ONE node of the quorum, its primary, served
     as redlock_hiredis.h serves it (adapters/README.md, Sentinel groups)
     but without blocking: before each connection its sentinels are asked
     on the loop (a round: each in turn from the one that answered last,
     within connect_timeout_ms, on a connection of the adapter's own kept
     open to it, AUTH with sentinel_user/sentinel_password; at a first
     answer SENTINEL MASTER too, the group's last failover told to the
     core; another primary later is a failover now:
     redlock_node_failed_over()); none answering fails the connection
     (CONNECT, their words in redlock_libev_node_status()), asked again
     after the reconnect delay; a command sent before the primary is known
     fails its vote (CONNECT). The connection asks ROLE after AUTH and
     SELECT: a replica fails it. A core reply (not an error reply, which
     grants nothing) is held until a round begun after it came names the
     same primary: another fails it (TRANSPORT, the core told of the
     failover) and none answering fails it (CONNECT), the connection
     dropped either way; so a holder cannot renew on a former primary. One
     round covers every reply held when it began. An error reply
     READONLY, LOADING or MASTERDOWN is delivered and drops the connection
     (the next asks again). From the first connection on, a watch (one
     more connection, to one sentinel, AUTH and TLS as the rounds')
     SUBSCRIBEs +switch-master: a failover the sentinels announce is told
     to the core at once (redlock_node_failed_over), the primary's
     connection dropped and its replies held for a round failed, without
     waiting for the next command; a watch that fails is opened again a
     second later at the next sentinel. Over TLS
     (rediss-sentinel://, cfg.tls or the node's tls; REDLOCK_HIREDIS_TLS):
     the sentinels are asked in TLS, still on the loop (the handshake runs
     in the round's writes and reads, within the same connect_timeout_ms),
     and the primary is spoken to in TLS, the name checked server_name if
     set, else that connection's host (the sentinel's; the primary's as
     the sentinels name it, not the URL's); a sentinel that refuses us
     fails the round with REDLOCK_ERR_TLS, its words naming it, which ends
     an acquire at once, as a TLS node's refusal does.
   * A Redis Cluster (redis-cluster://[user:pass@]h1:p1[+h2:p2...], kind
     REDLOCK_NODE_CLUSTER) is ONE node of the quorum, served as
     redlock_hiredis.h serves it (see there, HOW IT TALKS): one connection
     per master (its own ev_io, opened when a command is first routed
     there, never by a timer), each command to the master of its key's
     slot, the slot map from CLUSTER SLOTS asked of a seed at init and
     again when stale (without blocking: a command the map cannot place
     yet goes to a seed, whose MOVED says where), MOVED and ASK (with
     ASKING) followed once, TRYAGAIN and CLUSTERDOWN a failed vote, each
     master's life kept for it and told to the core as
     redlock_node_failed_over(), what it may evict its worst master's,
     release notifications sharded once every server whose INFO came has
     sharded pub/sub (Redis 7.0 and later; the core told with
     redlock_node_set_sharded): a subscriber per master the last CLUSTER
     SLOTS named (its own ev_io; the watchers, REDLOCK_CLUSTER_MAX_MASTERS
     per cluster node, allocated at init), SSUBSCRIBEd to the waited keys
     whose slot its master serves, open while a lock waits; a master that
     no longer serves a key (MOVED to an SSUBSCRIBE, its "sunsubscribe"
     when the slot moved away) has the map asked again (at most every
     REDLOCK_CLUSTER_REFRESH_MS) and the node's subscribers reopened on it,
     without a backoff; until then, and with a server without sharded
     pub/sub in the cluster, by SUBSCRIBE on the first seed (PUBLISH
     reaches every node of a cluster); a client with cfg.info_off (never
     sharded) and one without do not hear each other's releases on a
     Redis 7 cluster. A fenced
     lock needs a {hash tag} in its key: redlock_libev_lock_init()
     refuses one without (INVALID); begun with redlock_lock_init() such a
     lock's votes fail INVALID at the cluster node, whose status says why.
     Over TLS (rediss-cluster://, cfg.tls or the node's tls): every
     master's connection, CLUSTER SLOTS with them, each checked against
     its master's host (or server_name), the handshake on the loop as a
     TLS node's; a refusal is REDLOCK_ERR_TLS. Not a Unix socket, nor a
     db, nor with core.wait_replicas (INVALID at init).
   * Release notifications (redlock.h section 10): while a lock waits for
     its next attempt (a retry delay at least the node timeout: the core
     asks then), a second connection per node (its own ev_io, AUTH
     and TLS as configured; a sharded cluster node's: one per master,
     above) SUBSCRIBEs to the key's channel, and a release
     wakes the waiting acquire from the loop at once. The subscribers
     close notify_idle_ms (default 1000) after the last lock stopped
     waiting; one that fails (closed, silent, or owing the answer to a
     SUBSCRIBE or UNSUBSCRIBE for command_timeout_ms: a frozen node) is
     reopened after the reconnect delay, and meanwhile that node's
     releases are not heard (the waiter sleeps out its delay, as with
     cfg.notify_off = 1: no subscribers at all). A node that refuses its
     subscriber (an ACL that denies the channel, as Redis 7's default for
     new users does; a renamed SUBSCRIBE; a refused AUTH) is asked again
     only after a backoff (1 s, doubled at each refusal in a row up to
     60 s, kept when the subscribers close idle), and
     redlock_libev_notify_status() says why, in the node's words, until a
     SUBSCRIBE is confirmed again. A reply a subscriber did not ask for
     drops it, as a failure. No SELECT on a subscriber: channels are
     server-wide.
   * SIGPIPE: hiredis writes with write(2); ignore SIGPIPE in programs that
     may write to a node that vanished (signal(SIGPIPE, SIG_IGN)).
   * TLS (hiredis 1.x only): as in redlock_hiredis.h (build with
     REDLOCK_HIREDIS_TLS, link -lhiredis_ssl -lssl -lcrypto; cfg.tls or a
     node's tls; a refusal is REDLOCK_ERR_TLS, which ends an acquire at
     once, with the reason in redlock_libev_node_status(); NO_TLS from
     init without REDLOCK_HIREDIS_TLS, a build error with it on 0.14),
     for every kind of node (a Sentinel group's and a cluster's: above).
     hiredis runs the handshake, within connect_timeout_ms of its own
     once TCP is up; then the adapter reads the decrypted bytes itself,
     with the same checks as above.

   GUARANTEES: the same for every adapter, listed in adapters/README.md
   and tested by tests/shared/integration.h.

   STATISTICS
   redlock_libev_stats() copies the core's counters (redlock.h section
   14) and each node's connection counters (redlock_node_io_stats,
   redlock_conn.h: connections opened and lost, commands and bytes
   written, bytes of replies read, the most replies owed at once; a
   cluster node's links together; subscribers not counted) into a
   redlock_adapter_stats; redlock_libev_stats_reset() zeroes both.

   THREADS AND CALLBACKS
   Everything runs on the loop's thread. Core callbacks (on_result,
   on_event) run inside libev/hiredis callbacks: they may use the core API
   (acquire, release, extend, lock_deinit) but must not call
   redlock_libev_deinit.
*/
#ifndef REDLOCK_LIBEV_H
#define REDLOCK_LIBEV_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE) && \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libev.h>

#ifndef REDLOCK_LIBEV_MAX_BUFFERED
#define REDLOCK_LIBEV_MAX_BUFFERED (1 << 20) /* unparsed reply bytes a node may leave buffered */
#endif

/* Exported by hiredis 0.14 and 1.x alike, declared only by some versions:
   runs the reply callbacks for what the context's reader holds. */
#ifdef __cplusplus
extern "C" {
#endif
void redisProcessCallbacks(redisAsyncContext *ac);
#ifdef __cplusplus
}
#endif

/* ---- reply translation, shared with redlock_hiredis.h ---- */
#include "redlock_hiredis_common.h"
#if defined(REDLOCK_LIBEV_QUEUE) && REDLOCK_LIBEV_QUEUE != REDLOCK_HIREDIS_MAX_PENDING
#error "REDLOCK_LIBEV_QUEUE is an old name of REDLOCK_HIREDIS_MAX_PENDING (both adapters): set that one"
#endif

/* hiredis 1.x (MAJOR and MINOR together; PATCH is not bumped upstream).
   The calls used here have the same signatures in 0.14 and 1.x; RESP3
   reply types (1.x only) are translated as REDLOCK_REPLY_OTHER above. */
#if defined(HIREDIS_MAJOR) && defined(HIREDIS_MINOR) && \
    (HIREDIS_MAJOR * 100 + HIREDIS_MINOR) >= 100
#define REDLOCK__HIREDIS_1X 1
#else
#define REDLOCK__HIREDIS_1X 0
#endif

/* A node: the same type as the hiredis adapter's (redlock_hiredis_common.h). */
typedef redlock_hiredis_node redlock_libev_node;

/* The configuration: the same type as the hiredis adapter's
   (redlock_hiredis_common.h); watchdog_thread must be 0 here. */
typedef redlock_hiredis_config redlock_libev_config;

/* Defaults: no nodes, timeouts 1000 / 1000 / 100 ms, core defaults. In the
   declarations, as redlock_hiredis_config_init() is: any file that
   includes this header may call it. */
static inline void redlock_libev_config_init(redlock_libev_config *o) { redlock_hiredis_config_init(o); }

struct redlock_libev;

typedef struct redlock__libev_conn {
    struct redlock_libev *owner;
    int index;
    redisAsyncContext *ac;  /* NULL while down */
    redisReader *shadow;    /* counts the replies read before hiredis sees them */
    redlock__conn_life life; /* DOWN / CONNECTING / UP, refused, status and words (redlock_conn.h) */
    int64_t connect_start;  /* when the connect began (the TLS handshake ends within the same timeout) */
    void *ssl;              /* TLS: the session (hiredis owns it), or NULL */
    redlock__conn_ring q; /* requests in flight, in send order (full: sends fail) */
    int drop_status;        /* what owed tags are failed with */
    ev_timer reconnect;     /* due at life.retry_at */
    redlock__hiredis_endpoint ep; /* where, and how to log in */
    redlock__hiredis_bound bound; /* the shadow reader's count of a reply's objects */
    int link;               /* a cluster node's link index; -1: a node's own connection */
    redlock__hiredis_copies sent; /* a link's commands, until answered (a redirection resends) */
    /* a Sentinel group's node: its sentinels asked on the loop */
    ev_io sent_io;          /* the sentinel's socket during a round */
    ev_timer sent_timer;    /* the round's sentinel's deadline */
    ev_io watch_io;         /* the +switch-master watch's socket (redlock__hiredis_watch_*) */
    ev_timer watch_timer;   /* its deadline, or when it opens again */
    int sent_connect;       /* a connection waits for the round's answer */
    int sent_named;         /* the sentinels just named the primary: the connection goes there */
    int settling;           /* held replies going to the core */
    struct redlock__libev_held *held; /* core replies waiting for the sentinels' confirmation */
    size_t held_n, held_cap, held_asked; /* the first held_asked: covered by the round under way */
} redlock__libev_conn;

/* A core reply held until the sentinels, asked after it came, name the
   same primary (a top-level reply: what the core reads). */
typedef struct redlock__libev_held {
    redlock_tag tag;
    redlock_reply r;
    char *str;              /* r.str's copy */
} redlock__libev_held;

/* A subscriber's watcher, with its id (redlock_hiredis_common.h). */
typedef struct redlock__libev_sub_watch {
    ev_io io;
    int id;
} redlock__libev_sub_watch;

/* Caller-owned; must not move between init and deinit. */
typedef struct redlock_libev {
    redlock_client _client;
    struct ev_loop *_loop;
    ev_timer _timer;        /* the core's */
    ev_timer _watch;        /* command timeouts, while anything is in flight */
    int _n;
    redlock__libev_conn _conn[REDLOCK_MAX_NODES]; /* a cluster node's: its status only */
    redlock__libev_conn *_links[REDLOCK_MAX_NODES]; /* a cluster node's connections
                                                      (REDLOCK__HIREDIS_LINKS), else NULL */
    redlock__hiredis_subs _subs; /* release notifications: a subscriber per node (per master of a
                                    sharded cluster node) */
    redlock__libev_sub_watch _sub_io[REDLOCK_MAX_NODES];
    redlock__libev_sub_watch *_shard_io[REDLOCK_MAX_NODES]; /* a cluster node's masters' subscribers'
                                                               (REDLOCK_CLUSTER_MAX_MASTERS), else NULL */
    ev_timer _sub_timer;    /* the subscribers' reconnects, connect timeouts, idle close */
    int _connect_timeout_ms, _command_timeout_ms, _reconnect_delay_ms;
    int _closing;
    void (*_on_event)(void *user, const redlock_event *ev);
    void *_user;
    int _magic;
    redlock_node_io_stats _io[REDLOCK_MAX_NODES]; /* each node's connections (redlock_libev_stats) */
} redlock_libev;

#define REDLOCK__LIBEV_MAGIC 0x6c696265

#ifndef REDLOCK_LIBEV_API
#ifdef REDLOCK_LIBEV_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_LIBEV_API static __attribute__((unused))
#else
#define REDLOCK_LIBEV_API static
#endif
#else
#define REDLOCK_LIBEV_API extern
#endif
#endif

/* ---- API ---- */

#ifdef __cplusplus
extern "C" {
#endif

/* Sets up the client on `loop` and starts connecting every node (a
   cluster: asking a seed for its slot map). Errors: INVALID (also: a
   cluster on a Unix socket, with a db or with core.wait_replicas),
   NODES, NOMEM, NO_TLS or TLS (see TLS above), or the core's. */
REDLOCK_LIBEV_API int redlock_libev_init(redlock_libev *c, struct ev_loop *loop, const redlock_libev_config *o);

/* Detaches every lock (without releasing it on the servers: release
   first), closes the connections, stops the watchers. Not inside a
   callback of this client. */
REDLOCK_LIBEV_API void redlock_libev_deinit(redlock_libev *c);

/* The core client, for redlock_lock_init and friends. */
REDLOCK_LIBEV_API redlock_client *redlock_libev_client(redlock_libev *c);

/* redlock_lock_init on the client, refusing first (INVALID, nothing
   done) a lock that cannot live on a cluster node of it: a fenced lock
   whose key has no {hash tag} (redlock_cluster_lock_fits). With
   redlock_lock_init itself such a lock's every vote fails INVALID at
   the cluster node instead (the node status says why). */
REDLOCK_LIBEV_API int redlock_libev_lock_init(redlock_libev *c, redlock_lock *lk, const redlock_lock_opts *opts);

/* Node i's last failure (CONNECT, AUTH, TRANSPORT, NODE_TIMEOUT, ...), or 0
   if none yet or a new connection has answered since; errbuf (optional)
   gets the text, as redlock_socket_node_status() gives it: the failure's
   words (the server's refusal, what OpenSSL said, hiredis's for a failed
   connect, "connect timed out" ...), else the status's description; with
   status 0, the server's last error reply to a command on the current
   connection ("" if none). */
REDLOCK_LIBEV_API int redlock_libev_node_status(const redlock_libev *c, int i, char *errbuf, size_t errsz);

/* Is node i connected (connect completed, not dropped)? */
REDLOCK_LIBEV_API int redlock_libev_node_connected(const redlock_libev *c, int i);

/* Node i's release notifications: 0 while they work or were never
   refused; REDLOCK_ERR_SERVER (AUTH for a refused login) once the node
   refused its subscriber (an ACL without the channel, a renamed
   SUBSCRIBE; a sharded cluster node: one of its masters' subscribers):
   its releases are then not heard, and the subscriber is tried again
   after a backoff (see HOW IT TALKS). errbuf (optional) gets the node's
   words. */
REDLOCK_LIBEV_API int redlock_libev_notify_status(const redlock_libev *c, int i, char *errbuf, size_t errsz);
/* What node i may evict (redlock.h section 4, Eviction): its
   maxmemory_policy as the last INFO that named one said ("" before
   any did) into buf (optional, cut to size), and the redlock_evicts the
   core was told (NONE, VOLATILE, ALL); INVALID for a bad node. */
REDLOCK_LIBEV_API int redlock_libev_node_policy(const redlock_libev *c, int i, char *buf, size_t size);
/* Statistics (see STATISTICS): the core's counters and each node's
   connections' into *out: OK, or INVALID. Reset zeroes both. On the
   loop's thread, as everything; safe inside callbacks. */
REDLOCK_LIBEV_API int redlock_libev_stats(const redlock_libev *c, redlock_adapter_stats *out);
REDLOCK_LIBEV_API void redlock_libev_stats_reset(redlock_libev *c);

#ifdef __cplusplus
}
#endif

/* Names of 0.1, kept for one release. */
typedef redlock_libev_config redlock_libev_opts;                    /* deprecated */
#define redlock_libev_opts_init(cfg) redlock_libev_config_init(cfg)     /* deprecated */
#define redlock_libev_free(c) redlock_libev_deinit(c)                   /* deprecated */

#endif /* REDLOCK_LIBEV_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_LIBEV_IMPLEMENTATION) && !defined(REDLOCK__LIBEV_IMPLEMENTED)
#define REDLOCK__LIBEV_IMPLEMENTED

/* Node cn is down: reopened from its timer ms from now. */
static inline void redlock__libev_schedule_reconnect(redlock_libev *c, redlock__libev_conn *cn, int ms)
{
    if (c->_closing) return;
    ev_timer_stop(c->_loop, &cn->reconnect);
    redlock__conn_down(&cn->life, redlock__hiredis_now_us(), ms);
    if (cn->link >= 0) return; /* a cluster's link: reopened by the next command routed there */
    ev_timer_set(&cn->reconnect, ms / 1000.0, 0.);
    ev_timer_start(c->_loop, &cn->reconnect);
}

/* The node's context is gone (or going; status 0: closed, nothing
   failed): the lifecycle's (redlock_conn.h) first, as why may be the
   shadow reader's errstr; reconnected later (1 s after a refusal). Tags
   it still owes are failed by hiredis's NULL-reply callbacks. */
static inline void redlock__libev_lost(redlock__libev_conn *cn, int status, const char *why)
{
    redlock_libev *c = cn->owner;
    int delay_ms = cn->life.refused ? 1000 : c->_reconnect_delay_ms;
    redlock__conn_lost(&cn->life, status, why, redlock__hiredis_now_us(), delay_ms);
    if (cn->link >= 0 && status) { /* the cluster node's status; a seed next, the map asked again */
        redlock__conn_set(&c->_conn[cn->index].life, status, cn->life.words);
        redlock__hiredis_cluster_failed(c->_conn[cn->index].ep.cluster, cn->link);
    }
    cn->ac = NULL;
    cn->ssl = NULL; /* freed with the context */
    if (cn->shadow) {
        redisReaderFree(cn->shadow);
        cn->shadow = NULL;
    }
    redlock__libev_schedule_reconnect(c, cn, delay_ms);
}

/* ---- a cluster node's links ---- */

static inline void redlock__libev_on_reply(redisAsyncContext *ac, void *reply, void *privdata);
static inline void redlock__libev_connect_conn(redlock_libev *c, redlock__libev_conn *cn);
static inline void redlock__libev_drop(redlock__libev_conn *cn, int status, const char *why);
static inline void redlock__libev_arm_watch(redlock_libev *c);
static inline int redlock__libev_failure(redlock__libev_conn *cn);

/* Link k of cluster node i: its endpoint made at first use. NULL: out of memory. */
static inline redlock__libev_conn *redlock__libev_link(redlock_libev *c, int i, int k)
{
    redlock__libev_conn *cn = &c->_links[i][k];
    if (!cn->ep.host && redlock__hiredis_link_endpoint(&cn->ep, &c->_conn[i].ep, k) != 0) {
        redlock__hiredis_endpoint_free(&cn->ep);
        return NULL;
    }
    return cn;
}

/* Before a command is written to connection cn: an idle connection the
   node closed is replaced, one with bytes nobody asked for dropped, and
   one that is down reopened once its delay has passed (the loop may not
   have run its timer yet: the program was busy; a cluster's link opens
   when a command is first routed there). */
static inline void redlock__libev_prepare(redlock_libev *c, redlock__libev_conn *cn)
{
    if (c->_closing) return;
    if (cn->ac && !cn->ac->err) { /* (one that failed is hiredis's to close: redlock__libev_unusable) */
        int idle = redlock__hiredis_send_probe(&cn->life, &cn->q, cn->ac->c.fd, cn->ssl,
                                               cn->shadow ? cn->shadow->len - cn->shadow->pos : 0);
        if (idle == REDLOCK__CONN_IDLE_CLOSED) {
            /* closed while idle (a restart): replaced for this command */
            redlock__libev_drop(cn, REDLOCK_ERR_TRANSPORT, "connection closed");
            ev_timer_stop(c->_loop, &cn->reconnect);
            redlock__conn_down(&cn->life, 0, 0);
            redlock__libev_connect_conn(c, cn);
        } else if (idle == REDLOCK__CONN_IDLE_UNASKED) {
            /* retried after the reconnect delay, as any protocol failure */
            redlock__libev_drop(cn, REDLOCK_ERR_PROTOCOL, "unexpected reply");
        }
    }
    if (!cn->ac && (ev_is_active(&cn->reconnect) || cn->link >= 0) &&
        redlock__conn_may_open(&cn->life, redlock__hiredis_now_us())) {
        ev_timer_stop(c->_loop, &cn->reconnect);
        redlock__libev_connect_conn(c, cn);
    }
}

/* After redlock__libev_prepare: the status a command to connection cn
   fails with now, or 0 (it may be written). A connection hiredis is
   failing (the callbacks of the commands it owed run before it lets go,
   and the core may send from one) takes none: the command fails as they
   do (TLS for a refused handshake), and no new connection replaces it
   before the reconnect delay. */
static inline int redlock__libev_unusable(redlock_libev *c, redlock__libev_conn *cn)
{
    if (!cn->ac || c->_closing) return cn->life.status ? cn->life.status : REDLOCK_ERR_CONNECT;
    if (cn->ac->err) return redlock__libev_failure(cn);
    if (cn->life.refused) return cn->life.status ? cn->life.status : REDLOCK_ERR_AUTH;
    return 0;
}

/* Queues RESP text s (taken over) on link cn as a request of `kind` (a
   core command's tag, its copy kept with its hops for a redirection).
   0, or a status (s freed). */
static inline int redlock__libev_link_append(redlock__libev_conn *cn, int kind, redlock_tag tag, char *s, size_t len,
                                             int hops)
{
    int core = kind == REDLOCK__CONN_CORE, rc;
    if ((rc = redlock__hiredis_copies_push(&cn->sent, core ? s : NULL, len, hops)) != 0) {
        if (!core) redisFreeCommand(s);
        return rc;
    }
    if ((rc = redlock__hiredis_reserve(&cn->q)) != 0) {
        redlock__hiredis_copies_unpush(&cn->sent);
        if (!core) redisFreeCommand(s);
        return rc;
    }
    if (core) redlock__conn_file(&cn->life, &cn->q, tag, redlock__hiredis_now_us());
    else redlock__conn_push(&cn->q, kind, 0, redlock__hiredis_now_us());
    if (redisAsyncFormattedCommand(cn->ac, redlock__libev_on_reply, cn, s, len) != REDIS_OK) {
        redlock__hiredis_unpush(&cn->q); /* not queued (context disconnecting) */
        redlock__hiredis_copies_unpush(&cn->sent);
        if (!core) redisFreeCommand(s);
        return REDLOCK_ERR_TRANSPORT;
    }
    redlock__conn_count_out(&cn->life, &cn->q, len);
    if (!core) redisFreeCommand(s);
    redlock__libev_arm_watch(cn->owner);
    return 0;
}

/* An adapter's own command (argv) on link cn: 0, or a status. */
static inline int redlock__libev_link_own(redlock__libev_conn *cn, int kind, int argc, const char **argv)
{
    size_t len[2];
    char *s = NULL;
    long long got;
    int k;
    for (k = 0; k < argc; k++) len[k] = strlen(argv[k]);
    if ((got = redisFormatCommandArgv(&s, argc, argv, len)) < 0 || !s) return REDLOCK_ERR_NOMEM;
    return redlock__libev_link_append(cn, kind, 0, s, (size_t)got, 0);
}

/* Core command `tag` (RESP text s, taken over) to link k of cluster node
   i; after an ASK (asking), ASKING first. 0, or the status its vote
   fails with (s freed). */
static inline int redlock__libev_link_send(redlock_libev *c, int i, int k, redlock_tag tag, char *s, size_t len, int hops,
                                           int asking)
{
    redlock__libev_conn *cn = redlock__libev_link(c, i, k);
    const char *ask[1];
    size_t asklen[1];
    int rc;
    if (!cn) {
        redisFreeCommand(s);
        return REDLOCK_ERR_NOMEM;
    }
    redlock__libev_prepare(c, cn);
    rc = redlock__libev_unusable(c, cn);
    redlock_cluster_asking_argv(ask, asklen);
    if (rc == 0 && asking) rc = redlock__libev_link_own(cn, REDLOCK__CONN_ASKING, 1, ask);
    if (rc != 0) {
        redisFreeCommand(s);
        return rc;
    }
    return redlock__libev_link_append(cn, REDLOCK__CONN_CORE, tag, s, len, hops);
}

/* Asks cluster node i for its slot map (CLUSTER SLOTS) when that is due
   (redlock__hiredis_cluster_refresh_due): on a link that is up, a seed
   first, else on the seed in turn (opened for it). */
static inline void redlock__libev_cluster_refresh(redlock_libev *c, int i)
{
    static const char *slots[2] = { "CLUSTER", "SLOTS" };
    redlock__hiredis_cluster *cl = c->_conn[i].ep.cluster;
    redlock__libev_conn *cn = NULL;
    int k;
    if (c->_closing || !redlock__hiredis_cluster_refresh_due(cl, redlock__hiredis_now_us())) return;
    for (k = 0; k < cl->links && !cn; k++)
        if (c->_links[i][k].ac && c->_links[i][k].life.state == REDLOCK__CONN_UP && !c->_links[i][k].life.refused)
            cn = &c->_links[i][k];
    if (!cn && (cn = redlock__libev_link(c, i, cl->next_seed)) != NULL) redlock__libev_prepare(c, cn);
    if (!cn || !cn->ac || redlock__libev_link_own(cn, REDLOCK__HIREDIS_SLOTS, 2, slots) != 0) cl->refreshing = 0;
}

/* The core's command to cluster node i: to the master of its key's slot
   (a seed while the map does not know it). */
static inline int redlock__libev_cluster_send(redlock_libev *c, int i, const redlock_command *cmd, redlock_tag tag)
{
    redlock__hiredis_cluster *cl = c->_conn[i].ep.cluster;
    char *s;
    size_t len;
    int k, rc, hops;
    if (redlock__hiredis_cross_slot(&c->_conn[i].life, cmd)) return REDLOCK_ERR_INVALID;
    redlock__libev_cluster_refresh(c, i);
    if ((k = redlock__hiredis_cluster_route(cl, cmd, &hops)) < 0) return REDLOCK_ERR_NOMEM;
    if ((rc = redlock__hiredis_format(cmd, &s, &len)) != 0) return rc;
    return redlock__libev_link_send(c, i, k, tag, s, len, hops, 0);
}

/* A core command's reply on link cn (copy x: its command), as
   redlock_cluster_answer() reads it: MOVED or ASK sends it again (1,
   x->cmd taken; the vote fails if it could not be sent), else 0: the
   reply is the core's. A MOVED to the former master's replica is a
   failover, told to the core. (As redlock_hiredis.h's.) */
static inline int redlock__libev_redirect(redlock_libev *c, redlock__libev_conn *cn, redlock__hiredis_copy *x,
                                          redlock_tag tag, const redisReply *r)
{
    redlock__hiredis_cluster *cl = c->_conn[cn->index].ep.cluster;
    redlock_cluster_step step;
    redlock_reply rr;
    int how, k, st;
    if (r->type != REDIS_REPLY_ERROR || !x->cmd) return 0;
    redlock__hiredis_translate(r, &rr);
    how = redlock_cluster_answer(cl->rc, &rr, cn->ep.host, x->hops, &step);
    if (step.failover) redlock_node_failed_over(&c->_client, cn->index, 0);
    if (how == REDLOCK_CLUSTER_PASS) return 0;
    if ((k = redlock__hiredis_cluster_master_link(cl, step.master)) < 0) {
        st = REDLOCK_ERR_NOMEM;
        redisFreeCommand(x->cmd);
    } else {
        st = redlock__libev_link_send(c, cn->index, k, tag, x->cmd, x->len, x->hops + 1, how == REDLOCK_CLUSTER_ASKING);
    }
    x->cmd = NULL;
    if (st) redlock_on_error(&c->_client, tag, st);
    return 1;
}

static inline void redlock__libev_subs_tend(redlock_libev *c);

/* The subscribers' hook: cluster node i's map is wanted (a master no
   longer serves a key its subscriber followed). */
static inline void redlock__libev_subs_refresh(void *arg, int i) { redlock__libev_cluster_refresh((redlock_libev *)arg, i); }

/* CLUSTER SLOTS's answer on link cn (NULL: the connection dropped). */
static inline void redlock__libev_slots(redlock_libev *c, redlock__libev_conn *cn, const redisReply *r)
{
    const int i = cn->index;
    redlock__hiredis_cluster *cl = c->_conn[i].ep.cluster;
    int k, promoted;
    if (!r || c->_closing) {
        cl->refreshing = 0;
        return;
    }
    if ((promoted = redlock__hiredis_cluster_slots(cl, cn->link, r)) > 0)
        redlock_node_failed_over(&c->_client, i, 0); /* a replica took a master's slots */
    for (k = 0; k < cl->links; k++) /* the lives of masters the map names now */
        redlock__hiredis_cluster_apply(&c->_client, i, cl, k, &c->_links[i][k].ep);
    if (promoted >= 0) redlock__hiredis_subs_remapped(&c->_subs, i);
    redlock__libev_subs_tend(c); /* the masters' subscribers, as the map says now */
}

/* ---- a Sentinel group's node: its sentinels, asked on the loop ----
   Before each connection a round asks them which server is the primary
   (redlock_hiredis_common.h, redlock__hiredis_ask_*); a core reply (not an
   error: that grants nothing) is held until a round begun after it came
   names the same server, so a reply counts only if the group had not
   failed over when its command was written (as the blocking adapters'
   redlock__hiredis_sentinels_confirm). */

static inline void redlock__libev_sent_ask(redlock_libev *c, redlock__libev_conn *cn);
static inline void redlock__libev_watch_tend(redlock_libev *c, redlock__libev_conn *cn);

/* Points the node's sentinel watchers at the round's socket and deadline. */
static inline void redlock__libev_sent_tend(redlock_libev *c, redlock__libev_conn *cn)
{
    redlock__hiredis_sentinels *g = cn->ep.sentinels;
    short pev = redlock__hiredis_ask_events(g);
    int want = (pev & POLLIN ? EV_READ : 0) | (pev & POLLOUT ? EV_WRITE : 0);
    ev_io_stop(c->_loop, &cn->sent_io);
    ev_timer_stop(c->_loop, &cn->sent_timer);
    if (!g->asking || c->_closing) return;
    if (want) {
        ev_io_set(&cn->sent_io, g->ctx->fd, want);
        ev_io_start(c->_loop, &cn->sent_io);
    }
    {
        int64_t d = g->until - redlock__hiredis_now_us();
        ev_now_update(c->_loop);
        ev_timer_set(&cn->sent_timer, d > 0 ? d / 1e6 : 0., 0.);
        ev_timer_start(c->_loop, &cn->sent_timer);
    }
}

/* The first held_asked replies, the round over: to the core (st 0), or
   failed with st. */
static inline void redlock__libev_sent_settle(redlock_libev *c, redlock__libev_conn *cn, int st)
{
    while (cn->held_asked > 0 && cn->held_n > 0) {
        redlock__libev_held h = cn->held[0];
        memmove(cn->held, cn->held + 1, (cn->held_n - 1) * sizeof *cn->held);
        cn->held_n--;
        cn->held_asked--;
        if (st) redlock_on_error(&c->_client, h.tag, st);
        else redlock_on_reply(&c->_client, h.tag, &h.r);
        free(h.str);
    }
    cn->held_asked = 0;
}

/* The round ended: DONE (g->said_*), or CONNECT / TLS (g->why). */
static inline void redlock__libev_sent_end(redlock_libev *c, redlock__libev_conn *cn, int rc)
{
    redlock__hiredis_sentinels *g = cn->ep.sentinels;
    char why[sizeof g->why];
    int st = rc == REDLOCK__HIREDIS_ASK_DONE ? 0 : rc;
    redlock__libev_sent_tend(c, cn); /* stops the watchers */
    memcpy(why, g->why, sizeof why);
    if (st == 0 && cn->held_asked)
        st = redlock__hiredis_sentinels_same(&cn->ep, g->said_host, g->said_port, why, sizeof why);
    if (st == REDLOCK_ERR_TRANSPORT) redlock_node_failed_over(&c->_client, cn->index, 0); /* on_event runs as any callback */
    if (st) {
        redlock__conn_set(&cn->life, st, why);
        if (cn->ac) redlock__libev_drop(cn, st, why); /* its replies did not count: the next connection asks */
        cn->held_asked = cn->held_n; /* every reply held came from that connection: none counts */
    }
    cn->settling = 1; /* no round begins inside the core's callbacks: the held count stays */
    redlock__libev_sent_settle(c, cn, st);
    cn->settling = 0;
    if (c->_closing) return;
    if (cn->sent_connect) {
        int64_t ago = -1;
        cn->sent_connect = 0;
        if (rc != REDLOCK__HIREDIS_ASK_DONE) {
            redlock__libev_lost(cn, rc, why);
        } else if (redlock__hiredis_sentinels_named(&cn->ep, g->said_host, g->said_port, g->said_ago, &ago) != 0) {
            redlock__libev_lost(cn, REDLOCK_ERR_NOMEM, "out of memory");
        } else {
            if (ago >= 0) redlock_node_failed_over(&c->_client, cn->index, ago);
            cn->sent_named = 1;
            if (!cn->ep.sentinels->wctx) redlock__libev_watch_tend(c, cn); /* the group known: watched from now on */
            redlock__libev_connect_conn(c, cn);
        }
    }
    if (cn->held_n > 0 && !c->_closing) redlock__libev_sent_ask(c, cn); /* replies that came during the round */
}

/* ---- the +switch-master watch (redlock_hiredis_common.h) ----
   Opened with the node's first connection, kept while the client lives:
   a failover the sentinels announce drops the primary's connection (the
   next asks them) and is told to the core at once. */

/* Points the watch's watchers at its socket and deadline, opening it
   first when it is due. */
static inline void redlock__libev_watch_tend(redlock_libev *c, redlock__libev_conn *cn)
{
    redlock__hiredis_sentinels *g = cn->ep.sentinels;
    int64_t now = redlock__hiredis_now_us(), due;
    short pev;
    int want;
    ev_io_stop(c->_loop, &cn->watch_io);
    ev_timer_stop(c->_loop, &cn->watch_timer);
    if (!g || c->_closing) return;
    redlock__hiredis_watch_open(g, now, c->_connect_timeout_ms);
    pev = redlock__hiredis_watch_events(g);
    want = (pev & POLLIN ? EV_READ : 0) | (pev & POLLOUT ? EV_WRITE : 0);
    if (want) {
        ev_io_set(&cn->watch_io, g->wctx->fd, want);
        ev_io_start(c->_loop, &cn->watch_io);
    }
    if ((due = redlock__hiredis_watch_due(g)) != INT64_MAX) {
        int64_t d = due - now;
        ev_now_update(c->_loop);
        ev_timer_set(&cn->watch_timer, d > 0 ? d / 1e6 : 0., 0.);
        ev_timer_start(c->_loop, &cn->watch_timer);
    }
}

static inline void redlock__libev_on_watch_io(struct ev_loop *loop, ev_io *w, int revents)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)w->data;
    redlock_libev *c = cn->owner;
    char host[REDLOCK_SENTINEL_MAX_HOST + 1];
    int port = 0;
    int64_t ago = -1;
    ev_io_stop(loop, w); /* the socket may be closed inside */
    if (redlock__hiredis_watch_ready(&cn->ep, (revents & EV_READ) != 0, redlock__hiredis_now_us(), host, sizeof host,
                                     &port) == REDLOCK__HIREDIS_WATCH_SWITCHED &&
        redlock__hiredis_sentinels_named(&cn->ep, host, port, 0, &ago) == 0 && ago >= 0) {
        /* another server is the primary now (the endpoint's address, so
           that the next round's naming it is no second failover): what
           the old one answered no longer counts - its connection dropped,
           the replies held for a round failed - and the next connection
           asks the sentinels */
        char why[128];
        snprintf(why, sizeof why, "the sentinels switched '%.32s' to %.40s:%d", cn->ep.sentinels->group, host, port);
        cn->sent_named = 0;
        redlock_node_failed_over(&c->_client, cn->index, 0); /* on_event runs as any callback */
        if (cn->ac && !c->_closing) redlock__libev_drop(cn, REDLOCK_ERR_TRANSPORT, why);
        if (!c->_closing) {
            cn->held_asked = cn->held_n;
            cn->settling = 1; /* no round begins inside the core's callbacks */
            redlock__libev_sent_settle(c, cn, REDLOCK_ERR_TRANSPORT);
            cn->settling = 0;
        }
        if (c->_closing) return;
    }
    redlock__libev_watch_tend(c, cn);
}

static inline void redlock__libev_on_watch_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)w->data;
    (void)revents;
    ev_io_stop(loop, &cn->watch_io);
    redlock__hiredis_watch_late(cn->ep.sentinels, redlock__hiredis_now_us());
    redlock__libev_watch_tend(cn->owner, cn); /* open again when due */
}

/* Begins a round unless one is under way (the replies held now are
   covered by it; later ones wait for the next). */
static inline void redlock__libev_sent_ask(redlock_libev *c, redlock__libev_conn *cn)
{
    redlock__hiredis_sentinels *g = cn->ep.sentinels;
    int rc;
    if (g->asking || cn->settling || c->_closing) return;
    cn->held_asked = cn->held_n;
    rc = redlock__hiredis_ask_begin(&cn->ep, !g->named, c->_connect_timeout_ms);
    if (rc != REDLOCK__HIREDIS_ASK_PENDING) redlock__libev_sent_end(c, cn, rc);
    else redlock__libev_sent_tend(c, cn);
}

static inline void redlock__libev_on_sent_io(struct ev_loop *loop, ev_io *w, int revents)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)w->data;
    redlock_libev *c = cn->owner;
    int rc;
    ev_io_stop(loop, w); /* the socket may be closed inside */
    rc = redlock__hiredis_ask_ready(&cn->ep, (revents & EV_READ) != 0, c->_connect_timeout_ms);
    if (rc != REDLOCK__HIREDIS_ASK_PENDING) redlock__libev_sent_end(c, cn, rc);
    else redlock__libev_sent_tend(c, cn);
}

static inline void redlock__libev_on_sent_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)w->data;
    redlock_libev *c = cn->owner;
    int rc;
    (void)revents;
    ev_io_stop(loop, &cn->sent_io);
    rc = redlock__hiredis_ask_late(&cn->ep, redlock__hiredis_now_us(), c->_connect_timeout_ms);
    if (rc != REDLOCK__HIREDIS_ASK_PENDING) redlock__libev_sent_end(c, cn, rc);
    else redlock__libev_sent_tend(c, cn);
}

/* Core reply r to tag on a Sentinel group's node: held, and a round begun. */
static inline void redlock__libev_hold(redlock_libev *c, redlock__libev_conn *cn, redlock_tag tag, const redisReply *r)
{
    redlock__libev_held *h;
    if (cn->held_n == cn->held_cap) {
        size_t cap = cn->held_cap ? cn->held_cap * 2 : 8;
        redlock__libev_held *m = (redlock__libev_held *)realloc(cn->held, cap * sizeof *m);
        if (!m) {
            redlock_on_error(&c->_client, tag, REDLOCK_ERR_NOMEM);
            return;
        }
        cn->held = m;
        cn->held_cap = cap;
    }
    h = &cn->held[cn->held_n];
    h->tag = tag;
    redlock__hiredis_translate(r, &h->r);
    h->str = NULL;
    if (h->r.str) {
        if (!(h->str = (char *)malloc(h->r.len + 1))) {
            redlock_on_error(&c->_client, tag, REDLOCK_ERR_NOMEM);
            return;
        }
        memcpy(h->str, h->r.str, h->r.len);
        h->str[h->r.len] = 0;
        h->r.str = h->str;
    }
    cn->held_n++;
    redlock__libev_sent_ask(c, cn);
}

/* The status the commands a connection owes fail with. hiredis fails
   them before it calls the disconnect callback, so a TLS refusal met
   mid-handshake (the certificate, once the server answered) is read here
   from the session, which lives until the context is freed: TLS, which
   no retry cures, not TRANSPORT. */
static inline int redlock__libev_failure(redlock__libev_conn *cn)
{
    char why[128];
    if (!cn->drop_status && cn->ac && cn->ac->err && cn->ssl) {
        snprintf(why, sizeof why, "%s", cn->ac->errstr);
        if (redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_TRANSPORT, why, sizeof why) == REDLOCK_ERR_TLS)
            cn->drop_status = REDLOCK_ERR_TLS;
    }
    return cn->drop_status ? cn->drop_status : REDLOCK_ERR_TRANSPORT;
}

/* A core command's reply (r; NULL: the connection dropped) on cn. */
static inline void redlock__libev_core_reply(redlock_libev *c, redlock__libev_conn *cn, redlock__conn_req *req,
                                             redlock__hiredis_copy *x, redisReply *r)
{
    redlock__hiredis_cluster *cl = cn->link >= 0 ? c->_conn[cn->index].ep.cluster : NULL;
    int st;
    if (!r) {
        redlock_on_error(&c->_client, req->tag, redlock__libev_failure(cn));
    } else if ((st = redlock__conn_answer(&cn->life, redlock__hiredis_auth_error(r) ? r->str : NULL)) != 0) {
        if (cl) redlock__conn_set(&c->_conn[cn->index].life, st, cn->life.words);
        redlock_on_error(&c->_client, req->tag, st);
    } else {
        redlock_reply rr;
        if (cl) {
            redlock__hiredis_heard(&c->_conn[cn->index].life, r);
            c->_conn[cn->index].life.status = 0; /* a master answered */
            if (redlock__libev_redirect(c, cn, x, req->tag, r)) {
                redlock__libev_cluster_refresh(c, cn->index); /* after a MOVED: the rest of the map */
                return;
            }
        }
        if (cn->ep.sentinels && r->type != REDIS_REPLY_ERROR) { /* counted once the sentinels confirm */
            redlock__libev_hold(c, cn, req->tag, r);
            return;
        }
        redlock__hiredis_translate(r, &rr);
        redlock_on_reply(&c->_client, req->tag, &rr);
        if (cn->ep.sentinels && r->str && redlock_sentinel_not_primary(r->str, (size_t)r->len) && cn->ac)
            /* no longer (or not yet) the primary: the next connection asks */
            redlock__libev_drop(cn, REDLOCK_ERR_TRANSPORT, "the server is no longer the group's primary");
    }
}

/* Completion callback of every command: privdata is the connection. */
static inline void redlock__libev_on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)privdata;
    redlock_libev *c = cn->owner;
    redisReply *r = (redisReply *)reply;
    redlock__hiredis_cluster *cl = cn->link >= 0 ? c->_conn[cn->index].ep.cluster : NULL;
    redlock__conn_req req;
    redlock__hiredis_copy x;
    if (!redlock__conn_pop(&cn->q, &req)) return;
    if (r) redlock__conn_count_in(&cn->life, redlock__hiredis_reply_size(r));
    memset(&x, 0, sizeof x);
    if (cl) (void)redlock__hiredis_copies_pop(&cn->sent, &x);
    if (req.kind == REDLOCK__CONN_INFO || req.kind == REDLOCK__CONN_CONFIG) { /* before the replies behind */
        if (r && !c->_closing) {
            int was = cl && cl->sharded;
            redlock__hiredis_info_reply(&c->_client, cn->index, &cn->ep, req.kind, r, cl, cn->link);
            if (cl && cl->sharded != was) redlock__libev_subs_tend(c); /* its subscribers follow at once */
        }
        return;
    }
    if (req.kind == REDLOCK__HIREDIS_SLOTS || req.kind == REDLOCK__CONN_ASKING) {
        if (req.kind == REDLOCK__HIREDIS_SLOTS) redlock__libev_slots(c, cn, r);
        return; /* ASKING's answer: the command behind it tells */
    }
    if (req.kind == REDLOCK__CONN_ROLE) {
        redlock_reply rr, el[8];
        int role = r && redlock__hiredis_view(r, &rr, el, 8) == 0 ? redlock_sentinel_role(&rr) : -1;
        /* not the primary (a failover under way): the next connection asks
           the sentinels again; after a refused AUTH, the refusal tells */
        if (r && role != REDLOCK_SENTINEL_PRIMARY && !cn->life.refused && cn->ac == ac && !c->_closing) {
            char why[128];
            snprintf(why, sizeof why, "%.24s:%d is not the primary of '%.16s' (%s): asking the sentinels again",
                     cn->ep.host, cn->ep.port, cn->ep.sentinels->group, role < 0 ? "ROLE refused" : "a replica");
            redlock__libev_drop(cn, REDLOCK_ERR_CONNECT, why);
        }
        return;
    }
    redlock__hiredis_heard(&cn->life, r);
    if (req.kind != REDLOCK__CONN_CORE) { /* AUTH / SELECT */
        if (r && redlock__conn_preamble_answer(&cn->life, req.kind, r->type == REDIS_REPLY_ERROR ? r->str : NULL) &&
            cn->ac == ac) {
            if (cl) redlock__conn_set(&c->_conn[cn->index].life, cn->life.status, cn->life.words);
            redisAsyncDisconnect(ac); /* after the replies still owed */
        }
        return;
    }
    if (!c->_closing) redlock__libev_core_reply(c, cn, &req, &x, r);
    redisFreeCommand(x.cmd);
}

static inline void redlock__libev_on_connect(const redisAsyncContext *ac, int status)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)ac->data;
    if (!cn || cn->ac != ac) return;
    if (status != REDIS_OK) { /* hiredis frees the context itself */
        /* a TLS handshake refused this early (a certificate) is TLS, which
           ends an acquire at once, not CONNECT, which is retried */
        char why[128];
        int st;
        snprintf(why, sizeof why, "%s", ac->errstr);
        st = redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_CONNECT, why, sizeof why);
        cn->drop_status = st;
        redlock__libev_lost(cn, st, st == REDLOCK_ERR_TLS ? why : ac->errstr);
        return;
    }
    redlock__conn_up(&cn->life);
    if (cn->ssl) cn->connect_start = redlock__hiredis_now_us(); /* the TLS handshake: its own connect timeout */
}

static inline void redlock__libev_on_disconnect(const redisAsyncContext *ac, int status)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)ac->data;
    char why[128];
    int st = 0;
    if (!cn || cn->ac != ac) return;
    if (status != REDIS_OK) { /* over TLS, what OpenSSL says (the session lives until we return) */
        snprintf(why, sizeof why, "%s", ac->errstr);
        st = redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_TRANSPORT, why, sizeof why);
        if (st == REDLOCK_ERR_TLS) cn->drop_status = st; /* a later failure's tags fail with it too */
    }
    redlock__libev_lost(cn, st, status == REDIS_OK ? "" : why);
}

/* Drops node cn now: every tag it owes fails with `status`. */
static inline void redlock__libev_drop(redlock__libev_conn *cn, int status, const char *why)
{
    redisAsyncContext *ac = cn->ac;
    cn->drop_status = status;
    redlock__libev_lost(cn, status, why);
    redisAsyncFree(ac); /* owed tags fail now, through the callbacks */
}

/* Counts and bounds n bytes read from node cn, then hands them to hiredis.
   0 when the node was dropped for them. */
static inline int redlock__libev_feed(redlock__libev_conn *cn, redisAsyncContext *ac, const char *buf, size_t n)
{
    size_t complete = 0;
    void *r = NULL;
    if (redisReaderFeed(cn->shadow, buf, n) != REDIS_OK) {
        redlock__libev_drop(cn, REDLOCK_ERR_NOMEM, "out of memory");
        return 0;
    }
    while (redisReaderGetReply(cn->shadow, &r) == REDIS_OK && r) { complete++; r = NULL; }
    if (cn->shadow->err) {
        redlock__libev_drop(cn, REDLOCK_ERR_PROTOCOL, cn->bound.over ? "reply too large" : cn->shadow->errstr);
        return 0;
    }
    if (complete > cn->q.count) {
        redlock__libev_drop(cn, REDLOCK_ERR_PROTOCOL, "unexpected reply");
        return 0;
    }
    if (cn->shadow->len - cn->shadow->pos > REDLOCK_LIBEV_MAX_BUFFERED) {
        redlock__libev_drop(cn, REDLOCK_ERR_PROTOCOL, "reply too large");
        return 0;
    }
    if (redisReaderFeed(ac->c.reader, buf, n) != REDIS_OK) {
        redlock__libev_drop(cn, REDLOCK_ERR_NOMEM, "out of memory");
        return 0;
    }
    return 1;
}

/* The same over TLS: the handshake is hiredis's (a write may wait on its
   reads), then the decrypted bytes go the plain path's way. */
static inline void redlock__libev_on_readable_tls(redlock__libev_conn *cn, redisAsyncContext *ac)
{
    char buf[16384];
    long n;
    if (redlock__hiredis_tls_handshaking(cn->ssl)) {
        redisAsyncHandleRead(ac);
        return;
    }
    n = redlock__hiredis_tls_read(cn->ssl, buf, (int)sizeof buf);
    if (n == -1) return;
    if (n <= 0) {
        char why[128];
        int st = REDLOCK_ERR_TRANSPORT;
        snprintf(why, sizeof why, "%s", "connection closed");
        if (n == -2) st = redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_TRANSPORT, why, sizeof why);
        redlock__libev_drop(cn, st, why);
        return;
    }
    if (redlock__libev_feed(cn, ac, buf, (size_t)n)) redisProcessCallbacks(ac);
}

/* Replaces hiredis's read handler. hiredis aborts the process on a reply
   nobody asked for and buffers a reply of any size; so the bytes are read
   here, counted against the requests in flight by a reader of our own
   (which builds no objects) and bounded, and only then handed to hiredis.
   A node that breaks either rule costs its votes (PROTOCOL), never the
   process or unbounded memory. */
static inline void redlock__libev_on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    redisLibevEvents *e = (redisLibevEvents *)w->data;
    redisAsyncContext *ac = e->context;
    redlock__libev_conn *cn = (redlock__libev_conn *)ac->data;
    char buf[16384];
    ssize_t n;
    (void)loop;
    (void)revents;
    if (!cn || cn->ac != ac || !cn->shadow || !(ac->c.flags & REDIS_CONNECTED)) {
        redisAsyncHandleRead(ac);
        return;
    }
    if (cn->ssl) {
        redlock__libev_on_readable_tls(cn, ac);
        return;
    }
    n = read(ac->c.fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) { /* closed or failed: hiredis reads the same and disconnects */
        redisAsyncHandleRead(ac);
        return;
    }
    if (redlock__libev_feed(cn, ac, buf, (size_t)n)) redisProcessCallbacks(ac);
}

static inline void redlock__libev_arm_watch(redlock_libev *c)
{
    if (!ev_is_active(&c->_watch)) {
        int shortest = c->_connect_timeout_ms < c->_command_timeout_ms ? c->_connect_timeout_ms : c->_command_timeout_ms;
        double every = shortest / 4000.0;
        if (every < 0.01) every = 0.01;
        ev_timer_set(&c->_watch, every, every);
        ev_timer_start(c->_loop, &c->_watch);
    }
}

/* Queues one command of a new connection's preamble (redlock_conn.h);
   -1 if it could not be (out of memory). */
static inline int redlock__libev_handshake(void *ctx, int kind, int argc, const char **argv, const size_t *len)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)ctx;
    if (cn->link >= 0 && redlock__hiredis_copies_push(&cn->sent, NULL, 0, 0) != 0) return -1;
    if (redlock__hiredis_push(&cn->q, kind, 0) == 0) {
        if (redisAsyncCommandArgv(cn->ac, redlock__libev_on_reply, cn, argc, argv, len) == REDIS_OK) {
            redlock__conn_count_out(&cn->life, &cn->q, redlock__conn_resp_size(argc, len));
            return 0;
        }
        redlock__hiredis_unpush(&cn->q);
    }
    if (cn->link >= 0) redlock__hiredis_copies_unpush(&cn->sent);
    return -1;
}

/* Opens connection cn and queues its preamble. */
static inline void redlock__libev_connect_conn(redlock_libev *c, redlock__libev_conn *cn)
{
    redisAsyncContext *ac;
    if (cn->ac || c->_closing) return;
    if (cn->ep.sentinels && !cn->sent_named) { /* the sentinels name the primary first */
        cn->sent_connect = 1;
        redlock__libev_sent_ask(c, cn);
        return;
    }
    cn->sent_named = 0;
    if (cn->ep.unix_path) ac = redisAsyncConnectUnix(cn->ep.unix_path);
    else ac = redisAsyncConnect(cn->ep.host ? cn->ep.host : "127.0.0.1", cn->ep.port);
    /* a failure here is the connection's as a later one would be (a
       cluster link's: its node's status too, lost() says it) */
    if (!ac) {
        redlock__libev_lost(cn, REDLOCK_ERR_NOMEM, "out of memory");
        return;
    }
    if (ac->err) {
        redlock__libev_lost(cn, REDLOCK_ERR_CONNECT, ac->errstr);
        redisAsyncFree(ac);
        return;
    }
    if (!cn->ep.unix_path) redlock__hiredis_nodelay(ac->c.fd);
    if (cn->ep.tls_ctx) { /* hiredis runs the handshake once the connect is done */
        char why[128];
        int rc = redlock__hiredis_tls_start(&cn->ep, &ac->c, &cn->ssl, why, sizeof why);
        if (rc != 0) { /* a refusal met at once is TLS, as one met later */
            redlock__libev_lost(cn, rc, why);
            redisAsyncFree(ac);
            return;
        }
    }
    ac->data = cn;
    cn->shadow = redisReaderCreateWithFunctions(NULL); /* counts only: no reply objects */
    if (cn->shadow) redlock__hiredis_bound_install(&cn->bound, cn->shadow, REDLOCK_LIBEV_MAX_BUFFERED);
    /* attaching a fresh context fails only when an allocation does */
    if (!cn->shadow || redisLibevAttach(c->_loop, ac) != REDIS_OK) {
        redlock__libev_lost(cn, REDLOCK_ERR_NOMEM, "out of memory"); /* the shadow reader freed */
        redisAsyncFree(ac);
        return;
    }
    ev_set_cb(&((redisLibevEvents *)ac->ev.data)->rev, redlock__libev_on_readable);
    redisAsyncSetConnectCallback(ac, redlock__libev_on_connect);
    redisAsyncSetDisconnectCallback(ac, redlock__libev_on_disconnect);
    cn->ac = ac;
    redlock__conn_opened(&cn->life, REDLOCK__CONN_CONNECTING);
    cn->connect_start = redlock__hiredis_now_us();
    cn->drop_status = 0;
    if (redlock__conn_preamble_queue(cn->ep.user, cn->ep.pass, cn->ep.db, cn->ep.sentinels != NULL, cn->ep.info, redlock__libev_handshake, cn)) {
        redlock__libev_drop(cn, REDLOCK_ERR_NOMEM, "out of memory"); /* not used without its AUTH or SELECT */
        return;
    }
    redlock__libev_arm_watch(c); /* the connect timeout, and AUTH / SELECT owed */
}

/* Opens node i's connection (a cluster's: its map asked of a seed). */
static inline void redlock__libev_connect(redlock_libev *c, int i)
{
    if (c->_links[i]) redlock__libev_cluster_refresh(c, i);
    else redlock__libev_connect_conn(c, &c->_conn[i]);
}

static inline void redlock__libev_on_reconnect(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock__libev_conn *cn = (redlock__libev_conn *)w->data;
    (void)loop;
    (void)revents;
    redlock__libev_connect_conn(cn->owner, cn);
}

/* Drops nodes whose connect took longer than connect_timeout_ms, or that
   owe a reply for longer than command_timeout_ms. */
static inline void redlock__libev_on_watch(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_libev *c = (redlock_libev *)w->data;
    int64_t now = redlock__hiredis_now_us();
    int i, k, busy = 0;
    (void)loop;
    (void)revents;
    for (i = 0; i < c->_n; i++)
    for (k = 0; k < (c->_links[i] ? c->_conn[i].ep.cluster->links : 1); k++) {
        redlock__libev_conn *cn = c->_links[i] ? &c->_links[i][k] : &c->_conn[i];
        int hs = cn->ac && redlock__hiredis_tls_handshaking(cn->ssl), late;
        if (!cn->ac) continue;
        late = redlock__conn_late(&cn->life, &cn->q, hs, hs, cn->connect_start + (int64_t)c->_connect_timeout_ms * 1000,
                                  (int64_t)c->_command_timeout_ms * 1000, now);
        if (late == REDLOCK__CONN_LATE_CONNECT)
            redlock__libev_drop(cn, REDLOCK_ERR_CONNECT, "connect timed out");
        else if (late == REDLOCK__CONN_LATE_HANDSHAKE)
            redlock__libev_drop(cn, REDLOCK_ERR_CONNECT, "TLS handshake: no answer within the connect timeout");
        else if (late == REDLOCK__CONN_LATE_REPLY)
            redlock__libev_drop(cn, REDLOCK_ERR_NODE_TIMEOUT, "command timeout");
        else if (cn->life.state == REDLOCK__CONN_CONNECTING || hs || cn->q.count)
            busy = 1;
    }
    if (!busy) ev_timer_stop(c->_loop, &c->_watch);
}

static inline void redlock__libev_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_libev *c = (redlock_libev *)w->data;
    (void)loop;
    (void)revents;
    redlock_on_timer(&c->_client);
}

/* ---- core callbacks ---- */

static inline int redlock__libev_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    redlock_libev *c = (redlock_libev *)user;
    redlock__libev_conn *cn = &c->_conn[node]; /* the core sends to its nodes only */
    int rc;
    if (c->_links[node] && !c->_closing) return redlock__libev_cluster_send(c, node, cmd, tag);
    /* a node down past its reconnect delay is reconnected by the command
       itself: the vote (or a release's delete) would be lost for nothing */
    redlock__libev_prepare(c, cn);
    if ((rc = redlock__libev_unusable(c, cn)) != 0) return rc;
    if ((rc = redlock__hiredis_reserve(&cn->q)) != 0) return rc; /* QUEUE_FULL or NOMEM */
    redlock__conn_file(&cn->life, &cn->q, tag, redlock__hiredis_now_us());
    if (redisAsyncCommandArgv(cn->ac, redlock__libev_on_reply, cn, cmd->argc,
                              (const char **)cmd->argv, cmd->argvlen) != REDIS_OK) {
        /* not queued (context disconnecting): take the entry back */
        redlock__hiredis_unpush(&cn->q);
        return REDLOCK_ERR_TRANSPORT;
    }
    redlock__conn_count_out(&cn->life, &cn->q, redlock__conn_resp_size(cmd->argc, cmd->argvlen));
    redlock__libev_arm_watch(c);
    return 0;
}

static inline void redlock__libev_set_timer(void *user, int64_t deadline_us)
{
    redlock_libev *c = (redlock_libev *)user;
    ev_timer_stop(c->_loop, &c->_timer);
    if (deadline_us != REDLOCK_NO_DEADLINE && !c->_closing) {
        int64_t d = deadline_us - redlock__hiredis_now_us();
        /* libev counts from its cached loop time; early calls are harmless */
        ev_now_update(c->_loop);
        ev_timer_set(&c->_timer, d > 0 ? d / 1e6 : 0., 0.);
        ev_timer_start(c->_loop, &c->_timer);
    }
}

static inline void redlock__libev_on_event(void *user, const redlock_event *ev)
{
    redlock_libev *c = (redlock_libev *)user;
    if (c->_on_event) c->_on_event(c->_user, ev);
}


/* ---- release notifications: the subscribers on the loop ---- */

static inline void redlock__libev_subs_tend(redlock_libev *c);

/* Subscriber s's watcher. */
static inline ev_io *redlock__libev_sub_io(redlock_libev *c, int s)
{
    if (s < REDLOCK_MAX_NODES) return &c->_sub_io[s].io;
    return &c->_shard_io[redlock__hiredis_sub_node(s)][redlock__hiredis_sub_master(s)].io;
}

/* A subscriber's socket is about to close: its watcher stops first. */
static inline void redlock__libev_sub_closing(void *arg, int s)
{
    redlock_libev *c = (redlock_libev *)arg;
    ev_io_stop(c->_loop, redlock__libev_sub_io(c, s));
}

static inline void redlock__libev_sub_flush(redlock_libev *c, int i)
{
    if (redlock__hiredis_sub_wants_flush(redlock__hiredis_sub_at(&c->_subs, i)) &&
        redlock__hiredis_sub_write(&c->_subs, i) != 0)
        redlock__hiredis_sub_close(&c->_subs, i, 1);
}

static inline void redlock__libev_on_sub_io(struct ev_loop *loop, ev_io *w, int revents)
{
    redlock_libev *c = (redlock_libev *)w->data;
    int i = ((redlock__libev_sub_watch *)w)->id;
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(&c->_subs, i);
    (void)loop;
    if (sb->life.state == REDLOCK__CONN_CONNECTING) {
        redlock__hiredis_sub_ready(&c->_subs, i, 0, REDLOCK_LIBEV_MAX_BUFFERED);
        redlock__libev_sub_flush(c, i);
    } else {
        if ((revents & EV_WRITE) || (sb->ssl && sb->need_flush && (revents & EV_READ))) redlock__libev_sub_flush(c, i);
        if (revents & EV_READ) redlock__hiredis_sub_ready(&c->_subs, i, 1, REDLOCK_LIBEV_MAX_BUFFERED);
    }
    if (!c->_closing) redlock__libev_subs_tend(c);
}

static inline void redlock__libev_on_sub_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    redlock_libev *c = (redlock_libev *)w->data;
    (void)loop;
    (void)revents;
    redlock__libev_subs_tend(c);
}

/* Opens, closes and times out the subscribers as the table says, then
   points each one's watcher at its socket and the timer at what is due. */
static inline void redlock__libev_subs_tend(redlock_libev *c)
{
    int64_t due;
    int i;
    redlock__hiredis_subs_tend(&c->_subs);
    for (i = redlock__hiredis_subs_next(&c->_subs, -1); i >= 0; i = redlock__hiredis_subs_next(&c->_subs, i)) {
        const redlock__hiredis_sub *sb = redlock__hiredis_sub_at(&c->_subs, i);
        short pev = redlock__hiredis_sub_events(sb);
        int want = (pev & POLLIN ? EV_READ : 0) | (pev & POLLOUT ? EV_WRITE : 0);
        ev_io *w = redlock__libev_sub_io(c, i);
        if (ev_is_active(w) && w->fd == sb->fd && (w->events & (EV_READ | EV_WRITE)) == want) continue;
        ev_io_stop(c->_loop, w);
        if (!want) continue;
        ev_io_set(w, sb->fd, want);
        ev_io_start(c->_loop, w);
    }
    ev_timer_stop(c->_loop, &c->_sub_timer);
    due = redlock__hiredis_subs_due(&c->_subs);
    if (due != INT64_MAX) {
        int64_t d = due - redlock__hiredis_now_us();
        ev_now_update(c->_loop);
        ev_timer_set(&c->_sub_timer, d > 0 ? d / 1e6 : 0., 0.);
        ev_timer_start(c->_loop, &c->_sub_timer);
    }
}

/* The core's listen callback: the commands go out when the loop runs. */
static inline void redlock__libev_listen(void *user, redlock_lock *lk, int on)
{
    redlock_libev *c = (redlock_libev *)user;
    redlock__hiredis_subs_listen(&c->_subs, lk, on);
    if (!c->_closing) redlock__libev_subs_tend(c);
}

/* ---- public API ---- */

REDLOCK_LIBEV_API int redlock_libev_init(redlock_libev *c, struct ev_loop *loop, const redlock_libev_config *o)
{
    redlock_config cfg;
    redlock_callbacks cb;
    int i, rc;
    if (!c || !loop || !o || o->watchdog_thread) return REDLOCK_ERR_INVALID;
    memset(c, 0, sizeof *c);
    if ((rc = redlock__hiredis_check_nodes(o->node, o->node_count)) != 0) return rc;
    c->_loop = loop;
    c->_n = o->node_count;
    if ((rc = redlock__hiredis_timeouts(o, &c->_connect_timeout_ms, &c->_command_timeout_ms, &c->_reconnect_delay_ms)) != 0)
        return rc;
    c->_on_event = o->on_event;
    c->_user = o->user;
    redlock__hiredis_subs_init(&c->_subs, c->_n, c->_connect_timeout_ms, c->_command_timeout_ms,
                               c->_reconnect_delay_ms, o->notify_idle_ms ? o->notify_idle_ms : 1000,
                               REDLOCK_LIBEV_MAX_BUFFERED);
    c->_subs.closing = redlock__libev_sub_closing;
    c->_subs.refresh = redlock__libev_subs_refresh;
    c->_subs.hook_arg = c;
    ev_timer_init(&c->_sub_timer, redlock__libev_on_sub_timer, 0., 0.);
    c->_sub_timer.data = c;
    ev_timer_init(&c->_timer, redlock__libev_on_timer, 0., 0.);
    c->_timer.data = c;
    ev_timer_init(&c->_watch, redlock__libev_on_watch, 0., 0.);
    c->_watch.data = c;
    for (i = 0; i < c->_n; i++) {
        redlock__libev_conn *cn = &c->_conn[i];
        cn->owner = c;
        cn->index = i;
        c->_subs.ep[i] = &cn->ep;
        ev_io_init(&c->_sub_io[i].io, redlock__libev_on_sub_io, -1, EV_READ);
        c->_sub_io[i].io.data = c;
        c->_sub_io[i].id = i;
        ev_timer_init(&cn->reconnect, redlock__libev_on_reconnect, 0., 0.);
        cn->reconnect.data = cn;
        cn->link = -1;
        cn->life.io = &c->_io[i];
        ev_io_init(&cn->sent_io, redlock__libev_on_sent_io, -1, EV_READ);
        cn->sent_io.data = cn;
        ev_timer_init(&cn->sent_timer, redlock__libev_on_sent_timer, 0., 0.);
        cn->sent_timer.data = cn;
        ev_io_init(&cn->watch_io, redlock__libev_on_watch_io, -1, EV_READ);
        cn->watch_io.data = cn;
        ev_timer_init(&cn->watch_timer, redlock__libev_on_watch_timer, 0., 0.);
        cn->watch_timer.data = cn;
        if ((rc = redlock__hiredis_endpoint_init(&cn->ep, &o->node[i], o)) != 0 ||
            (rc = redlock__hiredis_subs_node(&c->_subs, i, &cn->ep)) != 0)
            goto fail;
        if (cn->ep.cluster) {
            int k;
            if (!(c->_links[i] = (redlock__libev_conn *)calloc(REDLOCK__HIREDIS_LINKS, sizeof *c->_links[i])) ||
                !(c->_shard_io[i] = (redlock__libev_sub_watch *)calloc(REDLOCK_CLUSTER_MAX_MASTERS,
                                                                       sizeof *c->_shard_io[i]))) {
                rc = REDLOCK_ERR_NOMEM;
                goto fail;
            }
            for (k = 0; k < REDLOCK_CLUSTER_MAX_MASTERS; k++) {
                ev_io_init(&c->_shard_io[i][k].io, redlock__libev_on_sub_io, -1, EV_READ);
                c->_shard_io[i][k].io.data = c;
                c->_shard_io[i][k].id = REDLOCK__HIREDIS_SHARD(i, k);
            }
            for (k = 0; k < REDLOCK__HIREDIS_LINKS; k++) {
                redlock__libev_conn *ln = &c->_links[i][k];
                ln->owner = c;
                ln->index = i;
                ln->link = k;
                ln->life.io = &c->_io[i]; /* a cluster node's links count as the node */
                ev_timer_init(&ln->reconnect, redlock__libev_on_reconnect, 0., 0.);
                ln->reconnect.data = ln;
            }
        }
    }
    cfg = o->core;
    cfg.node_count = c->_n;
    memset(&cb, 0, sizeof cb);
    cb.send = redlock__libev_send;
    cb.set_timer = redlock__libev_set_timer;
    cb.now_us = redlock__hiredis_clock; /* the clock set_timer's deadlines are compared with */
    cb.on_event = redlock__libev_on_event;
    if (!o->notify_off) cb.listen = redlock__libev_listen;
    rc = redlock_client_init(&c->_client, &cfg, &cb, c);
    if (rc != REDLOCK_OK) goto fail;
    c->_magic = REDLOCK__LIBEV_MAGIC;
    for (i = 0; i < c->_n; i++) redlock__libev_connect(c, i);
    return REDLOCK_OK;
fail:
    redlock__hiredis_subs_free(&c->_subs);
    for (i = 0; i < c->_n; i++) {
        redlock__hiredis_endpoint_free(&c->_conn[i].ep);
        free(c->_links[i]); /* no link was made yet */
        free(c->_shard_io[i]);
    }
    memset(c, 0, sizeof *c);
    return rc;
}

/* Connection cn closed (its owed callbacks run, and end at once) and freed. */
static inline void redlock__libev_free_conn(redlock_libev *c, redlock__libev_conn *cn)
{
    ev_timer_stop(c->_loop, &cn->reconnect);
    ev_io_stop(c->_loop, &cn->sent_io);
    ev_timer_stop(c->_loop, &cn->sent_timer);
    ev_io_stop(c->_loop, &cn->watch_io);
    ev_timer_stop(c->_loop, &cn->watch_timer);
    while (cn->held_n > 0) free(cn->held[--cn->held_n].str); /* the client is gone: nobody to tell */
    free(cn->held);
    cn->held = NULL;
    if (cn->shadow) redisReaderFree(cn->shadow);
    cn->shadow = NULL;
    if (cn->ac) {
        redisAsyncContext *ac = cn->ac;
        cn->ac = NULL;
        cn->life.state = REDLOCK__CONN_DOWN;
        redisAsyncFree(ac);
    }
    redlock__hiredis_endpoint_free(&cn->ep);
    redlock__conn_ring_free(&cn->q);
    redlock__hiredis_copies_free(&cn->sent);
}

REDLOCK_LIBEV_API void redlock_libev_deinit(redlock_libev *c)
{
    int i;
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC) return;
    redlock_client_deinit(&c->_client);
    c->_closing = 1;
    ev_timer_stop(c->_loop, &c->_timer);
    ev_timer_stop(c->_loop, &c->_watch);
    ev_timer_stop(c->_loop, &c->_sub_timer);
    redlock__hiredis_subs_free(&c->_subs); /* stops the watchers as it closes */
    for (i = 0; i < c->_n; i++) {
        int k;
        free(c->_shard_io[i]);
        if (c->_links[i]) { /* a cluster's links first: their answers' copies point to the node's */
            for (k = 0; k < REDLOCK__HIREDIS_LINKS; k++) redlock__libev_free_conn(c, &c->_links[i][k]);
            free(c->_links[i]);
        }
        redlock__libev_free_conn(c, &c->_conn[i]);
    }
    memset(c, 0, sizeof *c);
}

REDLOCK_LIBEV_API redlock_client *redlock_libev_client(redlock_libev *c) { return &c->_client; }

REDLOCK_LIBEV_API int redlock_libev_lock_init(redlock_libev *c, redlock_lock *lk, const redlock_lock_opts *opts)
{
    int i;
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC || !opts) return REDLOCK_ERR_INVALID;
    for (i = 0; i < c->_n; i++) /* a cluster: a fenced lock's counter must share its key's slot */
        if (c->_links[i] && !redlock_cluster_lock_fits(opts)) return REDLOCK_ERR_INVALID;
    return redlock_lock_init(lk, &c->_client, opts);
}

REDLOCK_LIBEV_API int redlock_libev_node_status(const redlock_libev *c, int i, char *errbuf, size_t errsz)
{
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC || i < 0 || i >= c->_n || i >= REDLOCK_MAX_NODES) return REDLOCK_ERR_INVALID;
    redlock__hiredis_status_text(&c->_conn[i].life, errbuf, errsz);
    return c->_conn[i].life.status;
}

REDLOCK_LIBEV_API int redlock_libev_node_policy(const redlock_libev *c, int i, char *buf, size_t size)
{
    if (buf && size) buf[0] = 0;
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC || i < 0 || i >= c->_n || i >= REDLOCK_MAX_NODES) return REDLOCK_ERR_INVALID;
    if (buf && size) redlock__hiredis_set_text(buf, size, c->_conn[i].ep.health.policy);
    if (buf && size && c->_links[i]) { /* a cluster: its worst master's */
        int k = redlock__hiredis_cluster_worst(c->_conn[i].ep.cluster);
        if (k >= 0) redlock__hiredis_set_text(buf, size, c->_links[i][k].ep.health.policy);
    }
    return (int)redlock_node_evicts(&c->_client, i);
}

REDLOCK_LIBEV_API int redlock_libev_stats(const redlock_libev *c, redlock_adapter_stats *out)
{
    if (!c || !out || c->_magic != REDLOCK__LIBEV_MAGIC) return REDLOCK_ERR_INVALID;
    redlock__conn_stats(out, c->_n, c->_io);
    return redlock_client_stats(&c->_client, &out->core);
}

REDLOCK_LIBEV_API void redlock_libev_stats_reset(redlock_libev *c)
{
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC) return;
    redlock_client_stats_reset(&c->_client);
    memset(c->_io, 0, sizeof c->_io);
}

REDLOCK_LIBEV_API int redlock_libev_node_connected(const redlock_libev *c, int i)
{
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC || i < 0 || i >= c->_n || i >= REDLOCK_MAX_NODES) return 0;
    if (c->_links[i]) { /* a cluster: a link to one of its servers */
        int k;
        for (k = 0; k < c->_conn[i].ep.cluster->links; k++)
            if (c->_links[i][k].life.state == REDLOCK__CONN_UP) return 1;
        return 0;
    }
    return c->_conn[i].life.state == REDLOCK__CONN_UP && !redlock__hiredis_tls_handshaking(c->_conn[i].ssl);
}

REDLOCK_LIBEV_API int redlock_libev_notify_status(const redlock_libev *c, int i, char *errbuf, size_t errsz)
{
    const redlock__hiredis_sub *sb;
    if (!c || c->_magic != REDLOCK__LIBEV_MAGIC || i < 0 || i >= c->_n || i >= REDLOCK_MAX_NODES) return REDLOCK_ERR_INVALID;
    sb = redlock__hiredis_subs_shunned(&c->_subs, i);
    if (errbuf && errsz) redlock__hiredis_set_text(errbuf, errsz, sb->life.shunned ? sb->life.refusal : "");
    return sb->life.shunned;
}

#endif /* REDLOCK_LIBEV_IMPLEMENTATION */
