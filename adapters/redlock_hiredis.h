/* redlock_hiredis.h - blocking redlock.h client over hiredis (synchronous).

   Do this:
       #define REDLOCK_HIREDIS_IMPLEMENTATION
   before you include this file in *one* C or C++ file (with
   REDLOCK_IMPLEMENTATION there or in another one, for redlock.h, which it
   includes); REDLOCK_HIREDIS_STATIC makes its functions static. Include it
   before any system header or build with -D_POSIX_C_SOURCE=200809L. Link
   -lhiredis -lpthread. Works with hiredis 0.14 (Debian 12) and 1.x (TLS:
   1.x only, see HOW IT TALKS).

       redlock_hiredis_config o;
       redlock_hiredis_config_init(&o);
       o.node_count = 3;
       o.node[0].host = "127.0.0.1"; o.node[0].port = 7001;  ... 
       // or from the text users write ("h:7001,redis://:pw@h2:7002,/r.sock";
       // redlock_nodes.h): redlock_parse_nodes(o.node, &o.node_count, list,
       // &mem, err, sizeof err), then redlock_free_nodes(mem) after init
       redlock_hiredis c;
       redlock_hiredis_init(&c, &o);              // connects (failures are retried)

       redlock_lock_opts lo = {0};
       lo.key = "job"; lo.ttl_ms = 5000;
       redlock_hiredis_lock lk;
       redlock_hiredis_lock_init(&c, &lk, &lo);
       if (redlock_hiredis_acquire(&lk) == REDLOCK_OK) {
           ...                                    // work, within the validity
           redlock_hiredis_release(&lk);
       }
       redlock_hiredis_lock_deinit(&lk);
       redlock_hiredis_deinit(&c);

   HOW IT TALKS
   One hiredis redisContext per node. Commands the core emits for a round
   are appended to every node's output buffer (redisAppendCommandArgv), then
   flushed, then the replies are read as they arrive (poll() over all node
   sockets, redisBufferRead + redisGetReplyFromReader): one round trip for N
   nodes, and a slow node never delays the others' votes. The core's
   node_timeout_ms is the per-round deadline; retries and the wait deadline
   are the core's too.
   * Every socket is non-blocking, and connects too: they are finished by
     the same poll() loop, so no call into the core (send, timers) ever
     waits for the network (but for a Sentinel group's sentinels, below),
     and the loop never sleeps past the core's next deadline.
     connect_timeout_ms bounds a connect; a node that has owed a
     reply for command_timeout_ms is disconnected (its requests fail with
     REDLOCK_ERR_NODE_TIMEOUT), whether or not bytes are trickling in, and
     reconnected later. Host names are resolved with getaddrinfo(), which
     may block: give addresses where that matters.
   * Memory per node is bounded: a node that leaves more than
     REDLOCK_HIREDIS_MAX_BUFFERED (1 MiB) of unparsed reply bytes (a huge
     or endless reply), or sends a reply whose objects would take more
     than that (an endless array: hiredis builds each element as it
     arrives; counted before it is built), is dropped with
     REDLOCK_ERR_PROTOCOL ("reply too large"), as is one that sends a
     reply nobody asked for. The subscribers (below) are bounded the same
     way.
   * Requests in flight: a node may owe up to REDLOCK_HIREDIS_MAX_PENDING replies
     (default 1,048,576; the queue grows as needed, 24 bytes a request;
     REDLOCK_HIREDIS_QUEUE is its older name).
     Past that a command is refused with REDLOCK_ERR_QUEUE_FULL: the
     connection stays up, and an operation that misses its quorum for it
     ends REDLOCK_ERR_OVERLOADED.
   * A node whose connection broke is reconnected on its next command, at
     most every reconnect_delay_ms; until then its votes fail at once with
     REDLOCK_ERR_CONNECT.
   * AUTH (password, or ACL user + password), SELECT, INFO and CONFIG GET
     appendfsync are pipelined in front of the first command on every new
     connection: nothing blocks on a handshake. Before the replies behind
     them, INFO's maxmemory_policy tells the core what the node may evict
     (redlock.h section 4, Eviction; redlock_hiredis_node_policy), and its
     run_id, uptime_in_seconds and aof_enabled with CONFIG's appendfsync
     whether the server restarted and keeps keys across restarts (section
     4, Restarts); an INFO refused or unreadable leaves the node as it was
     (at first: evicts nothing, never restarted), a CONFIG refused counts
     as keys not kept; cfg.info_off = 1 leaves both out. An AUTH refusal turns that node's answers into
     REDLOCK_ERR_AUTH, a SELECT refusal into REDLOCK_ERR_SELECT (too few
     usable nodes left: the acquire ends at once with REDLOCK_ERR_CONFIG,
     see redlock.h); redlock_hiredis_node_status() tells what a node last
     failed with (0 again after its next good reply). A SELECT refused
     (a db that does not exist) is only known after the command pipelined
     behind it ran in db 0: check the db number.
   * An idle connection that the node closed (a restart) is noticed before
     the next command is written to it: that command goes to a new
     connection, and the vote is not lost.
   * SIGPIPE is blocked around writes: a node that vanished is a transport
     error, never a signal.
   * A Sentinel group (a node of kind REDLOCK_NODE_SENTINEL: redis-sentinel://
     h1:p1+h2:p2/NAME[?db=N&sentinel_user=U&sentinel_password=P], see
     redlock_nodes.h) is ONE node of the quorum, served by its primary. At
     each (re)connection its sentinels are asked in turn, from the one that
     answered last, which server that is (SENTINEL get-master-addr-by-name;
     blocking, each sentinel within connect_timeout_ms, on a connection to
     it that is kept open); none answering fails the connection with
     REDLOCK_ERR_CONNECT and their words ("sentinel 10.0.0.1:26379 does not
     know the group 'x'"), retried after the reconnect delay. The first
     answer also asks SENTINEL MASTER when the group last failed over, and
     a later answer that names another server is a failover now: either
     is told to the core (redlock_node_failed_over; redlock.h section 4,
     Restarts: the new primary may lack the latest keys, so its grants
     count only once the bound has passed). The preamble asks ROLE after
     AUTH and SELECT: a server that is not the primary (a failover under
     way) fails the connection, and the next one asks again. An error
     reply READONLY, LOADING or MASTERDOWN to a core command is delivered,
     then the connection fails (REDLOCK_ERR_TRANSPORT) and the next asks
     again. And every core command's reply is held until the sentinels,
     asked after the command was written, still name its server: if they
     name another (the core is told of the failover) or none answers, that
     reply fails (TRANSPORT / CONNECT) and the connection with it. So a
     reply counts only if the group had not failed over when its round
     began: a holder cannot renew on a former primary that Sentinel has
     not yet turned into a replica, which would still accept the write.
     That costs a round trip to a sentinel per reply. Once the primary is
     known, a watch (one more connection, to one sentinel, AUTH and TLS as
     the sentinels') SUBSCRIBEs +switch-master, read whenever the adapter
     polls (its calls, its thread, redlock_hiredis_run): a failover the
     sentinels announce is told to the core then and there
     (redlock_node_failed_over) and drops the former primary's connection,
     between commands; a watch that fails is opened again a second later
     at the next sentinel. Over TLS
     (rediss-sentinel://, cfg.tls or the node's tls; REDLOCK_HIREDIS_TLS):
     the sentinels are asked in TLS and the primary spoken to in TLS, the
     name checked server_name if set, else that connection's host (the
     sentinel's; the primary's as the sentinels name it, not the URL's);
     a sentinel that refuses us is REDLOCK_ERR_TLS, its words naming it.
   * A Redis Cluster (a node of kind REDLOCK_NODE_CLUSTER:
     redis-cluster://[user:pass@]h1:p1[+h2:p2...], some of its masters as
     seeds, see redlock_nodes.h) is ONE node of the quorum; several
     independent clusters, or clusters and single servers, make a quorum.
     Inside it each command goes to the master that serves its key's hash
     slot (CRC16, {hash tags}), on a connection of its own to that master
     (opened when a command is first routed there, non-blocking as any;
     AUTH, INFO and CONFIG GET appendfsync as any node's; db 0 only).
     The slot map is asked with CLUSTER SLOTS of a seed at init, without
     blocking, and again (of a master that is up, else the next seed)
     once a MOVED, CLUSTERDOWN or a failed master connection made it
     stale, at most every REDLOCK_CLUSTER_REFRESH_MS (100 ms: a burst of
     MOVED asks once); a command whose slot the map does not know yet
     goes to a seed, whose MOVED says where. Replies (adapters/
     redlock_cluster.h): a MOVED sends the command again to the master it
     names (the map learns that slot), an ASK (a slot being migrated)
     sends ASKING and the command there, once; a further redirection,
     TRYAGAIN and CLUSTERDOWN reach the core as the error reply they are:
     a failed vote for that round. So a hold whose slot migrates keeps
     renewing and its release reaches the key where it is. Every key of a
     lock must live in one slot: a fenced lock's counter
     (REDLOCK_FENCE_PREFIX + key) does only when the key has a {hash tag}
     ("{orders}:lock"): lock_init refuses a fenced lock without one on a
     client with a cluster node (REDLOCK_ERR_INVALID). Restarts (redlock.h
     section 4): the core keeps one life per node, a cluster has several
     masters, so each master's INFO is kept for it (redlock_cluster_life):
     a master whose run_id changed (from now), or that is first seen
     without appendfsync always (from its start, by its uptime), and a slot taken
     over by its master's replica (a failover, seen in CLUSTER SLOTS or a
     MOVED), are told to the core as redlock_node_failed_over() of the
     cluster node; a planned migration is not. Eviction (section 4): a
     cluster node may evict what its worst master may, as INFO said
     (redlock_hiredis_node_policy() names that master's policy). Release
     notifications: sharded once every server whose INFO came (each master
     connection asks it; none with cfg.info_off) has sharded pub/sub (Redis
     7.0 and later): the core is told (redlock_node_set_sharded: releases
     SPUBLISH on the key's shard channel, redlock_shard_channel) and the
     node has a subscriber per master that the last CLUSTER SLOTS named,
     each SSUBSCRIBEd to the waited keys whose slot its master serves (a
     new wait's key goes to its master's, opened if need be); they are
     open while a lock waits, so at most one connection per master
     (REDLOCK_CLUSTER_MAX_MASTERS), polled with the rest. A master that no
     longer serves a key (MOVED to an SSUBSCRIBE, or its own "sunsubscribe"
     when the slot moved away) makes the map stale: it is asked again (at
     most every REDLOCK_CLUSTER_REFRESH_MS) and the node's subscribers
     reopen on the new map, each key where its slot lives now (no backoff:
     not a refusal; meanwhile that key's waiters may sleep out their retry
     delay). Until then, and with a server without sharded pub/sub in the
     cluster: one subscriber SUBSCRIBEs on the first seed (a release
     script's PUBLISH reaches every node of a cluster). The releaser's
     client picks the channel: a client with cfg.info_off (never sharded)
     and one without do not hear each other's releases on a Redis 7
     cluster (their waiters sleep out their retry delays). With the watchdog thread,
     the thread opens every master's connection once the map names them
     (a blocking call's command, written on the caller's thread, opens
     none). redlock_hiredis_node_status() of a cluster node: the last
     failure of any of its connections (0 again once a master answers);
     node_connected(): one of them is up. Over TLS (rediss-cluster://,
     cfg.tls or the node's tls): every master's connection, CLUSTER SLOTS
     with them, each checked against its master's host (or server_name).
     Limits: not a Unix socket, nor a db, nor with core.wait_replicas
     (WAIT names no key: no master to go to): init refuses them (INVALID); at most
     REDLOCK_CLUSTER_MAX_MASTERS masters and REDLOCK_NODES_MAX_SEEDS seeds;
     the seeds are the addresses known at first (a cluster whose seeds all
     left is unreachable once the map is lost); a master's connection
     that failed is reopened when a command is routed to it (with the
     watchdog thread: after the reconnect delay, as long as the client
     lives, also for a master that left the cluster).
   * TLS (hiredis 1.x only): build with REDLOCK_HIREDIS_TLS and link
     -lhiredis_ssl -lssl -lcrypto. cfg.tls (every node) or a node's own
     tls (redlock_tls.h: enable, ca file or hashed dir, cert + key,
     server_name, insecure_skip_verify) turns it on; the certificate is
     verified against the CA (default: the system's store) and the name
     (default: the host; an address is checked as an address). The
     handshake runs in the same non-blocking loop, within
     connect_timeout_ms of its own once TCP is up. A refusal (the
     certificate refused here, an alert from the server, an answer that
     is not TLS: redlock_tls.h) is REDLOCK_ERR_TLS, which no retry cures:
     too few usable nodes left, the acquire ends at once with
     REDLOCK_ERR_TLS (redlock.h section 4). A handshake closed (TRANSPORT)
     or unanswered within the connect timeout (CONNECT: a paused server,
     or a plain-text port) is retried. redlock_hiredis_node_status()'s
     text says why ("TLS handshake: certificate refused: hostname
     mismatch"). Without REDLOCK_HIREDIS_TLS, a configuration that asks
     for TLS is refused by init with REDLOCK_ERR_NO_TLS (a CA, certificate
     or key that cannot be loaded: REDLOCK_ERR_TLS); REDLOCK_HIREDIS_TLS
     with hiredis 0.14 stops the build with a message.
   * Release notifications (redlock.h section 10): while a lock waits for
     its next attempt (a retry delay at least the node timeout: the core
     asks then), a second connection per node (AUTH as configured,
     TLS too; a sharded cluster node's: one per master, above) SUBSCRIBEs
     to the key's channel, and a release wakes the
     waiting acquire at once: the blocking calls wait on those sockets
     with the rest of the retry delay as their timeout. The subscribers
     close notify_idle_ms (default 1000) after the last lock stopped
     waiting; one that fails (closed, silent, or owing the answer to a
     SUBSCRIBE or UNSUBSCRIBE for command_timeout_ms: a frozen node) is
     reopened after the reconnect delay, and meanwhile its node's releases
     are simply not heard: the waiter sleeps out its delay, as with
     cfg.notify_off = 1 (no subscriber connections at all). A node that
     refuses its subscriber (an error answer: an ACL that denies the
     channel, as Redis 7's default for new users does, or SUBSCRIBE; a
     renamed command; a refused AUTH) is asked again only after a backoff
     (1 s, doubled at each refusal in a row up to 60 s, kept when the
     subscribers close idle), and redlock_hiredis_notify_status() says
     why, in the node's words, until a SUBSCRIBE is confirmed again. A
     reply a subscriber did not ask for drops it, as a failure. No
     SELECT on a subscriber: channels are server-wide.
   * When a blocking call has its result, the commands the core sent last
     (the undo of a failed attempt, a release) are written out, also to a
     node that is reconnecting (within its connect timeout). If a slower
     node still owes an answer that the core follows with another command
     (redlock_lock_followup: a chain on nodes without scripts, a node's
     first script), replies are read for up to one node timeout before the
     call returns, so that step is not left undone. Other stragglers'
     replies are read by the next call: the core decides as soon as the
     votes allow, and so does the call.

   GUARANTEES: the same for every adapter, listed in adapters/README.md
   and tested by tests/shared/integration.h.

   WATCHDOG THREAD
   With cfg.watchdog_thread set, a background thread owns the connections
   and runs the core: it keeps renewing locks acquired with
   redlock_lock_opts.watchdog = 1 for as long as they are held, and reports
   a loss through that lock's on_result (op REDLOCK_OP_LOST), called on the
   watchdog thread. The blocking calls below then hand their work to the
   thread and wait for the result, so they may be called from any number of
   threads (one operation per lock at a time). Without the thread, the core
   runs inside the blocking calls, and renewals happen only while one of
   them or redlock_hiredis_run() runs.

   CALLBACKS
   on_result (per lock) and on_event are called on the thread that drives
   the core, with the client's mutex held: they may call the redlock_* core
   functions on the lock (e.g. redlock_release(&lk->lock)); the blocking
   redlock_hiredis_* calls of the same client return REDLOCK_ERR_BUSY there
   (redlock_hiredis_run returns at once) instead of waiting on themselves.

   STATISTICS
   redlock_hiredis_stats() copies the core's counters (redlock.h section
   14) and each node's connection counters (redlock_node_io_stats,
   redlock_conn.h: connections opened and lost, commands and bytes
   written, bytes of replies read, the most replies owed at once; a
   cluster node's links together; subscribers not counted) into a
   redlock_adapter_stats; redlock_hiredis_stats_reset() zeroes both.

   THREADS
   Without the watchdog thread, a client and its locks are used by one
   thread at a time. With it, the functions below are thread-safe.
*/
#ifndef REDLOCK_HIREDIS_H
#define REDLOCK_HIREDIS_H

/* POSIX 2008 (clock_gettime, pthread_sigmask, sigtimedwait): effective only
   if nothing included a system header before; else build with
   -D_POSIX_C_SOURCE=200809L (or _GNU_SOURCE / _DEFAULT_SOURCE). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE) && \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#ifndef REDLOCK_HIREDIS_MAX_BUFFERED
#define REDLOCK_HIREDIS_MAX_BUFFERED (1 << 20) /* unparsed reply bytes a node may leave buffered */
#endif

/* ---- reply translation, shared with redlock_libev.h ---- */
#include "redlock_hiredis_common.h"

/* ---- public types ---- */

/* redlock_hiredis_node: see redlock_hiredis_common.h (both adapters). */

/* redlock_hiredis_config and redlock_hiredis_config_init(): see
   redlock_hiredis_common.h (both adapters). */

typedef struct redlock__hiredis_conn {
    redisContext *ctx;
    int fd;                /* ctx's socket, or -1 */
    redlock__conn_ring q; /* requests awaiting replies (a node owing more is dropped) */
    int need_flush;
    size_t unsent;         /* requests at the ring's tail not written yet */
    redlock__conn_life life; /* DOWN / CONNECTING (non-blocking connect) / UP, refused, the reconnect
                              delay, status and words (redlock_conn.h) */
    void *ssl;             /* TLS: the session (hiredis owns it), or NULL */
    int64_t connect_deadline; /* the TCP connect and the TLS handshake */
    redlock__hiredis_endpoint ep; /* where, and how to log in */
    redlock__hiredis_bound bound; /* the reader's reply memory */
    int node;              /* the node it serves */
    int link;              /* a cluster node's link index; -1: a node's own connection */
    redlock__hiredis_copies sent; /* a link's commands, until answered (a redirection resends) */
    int write_status;      /* a write that failed, until the flush drops it */
    char write_why[128];
} redlock__hiredis_conn;

/* Caller-owned; must not move between init and deinit. */
typedef struct redlock_hiredis {
    redlock_client _client;
    int _n;
    redlock__hiredis_conn _conn[REDLOCK_MAX_NODES]; /* a cluster node's: its status only */
    redlock__hiredis_conn *_links[REDLOCK_MAX_NODES]; /* a cluster node's connections
                                                        (REDLOCK__HIREDIS_LINKS), else NULL */
    struct pollfd *_pfd;   /* a turn's poll set, room for every connection */
    int *_who;
    redlock__hiredis_subs _subs; /* release notifications: a subscriber per node (per master of a
                                    sharded cluster node) */
    int _connect_timeout_ms, _command_timeout_ms, _reconnect_delay_ms;
    int64_t _deadline;     /* from the core's set_timer */
    int64_t _linger_us;    /* node timeout: how long to finish stragglers */
    void (*_on_event)(void *user, const redlock_event *ev);
    void *_user;
    int _threaded, _stopping;
    int _depth;            /* inside a user callback (on_result, on_event) */
    struct redlock__hiredis_waiter *_waiters; /* the blocking calls under way */
    pthread_t _thread;     /* the watchdog thread, which then does all I/O */
    pthread_mutex_t _mu;
    pthread_cond_t _cv;
    int _wake[2];
    int _magic;
    redlock_node_io_stats _io[REDLOCK_MAX_NODES]; /* each node's connections (redlock_hiredis_stats) */
} redlock_hiredis;

/* A blocking call's wait, on the caller's stack: the result is delivered
   here, so a waiter never reads the lock (which another thread may
   deinitialise and free meanwhile). */
typedef struct redlock__hiredis_waiter {
    int op;
    int done;
    int followup; /* redlock_lock_followup() when the result came */
    redlock_result result;
    const void *lock; /* the lock waited on: only compared */
    struct redlock__hiredis_waiter *next;
} redlock__hiredis_waiter;

/* A core lock plus what the blocking calls need. Use &lk->lock with the
   core API (redlock_lock_state(&lk->lock) ...). */
typedef struct redlock_hiredis_lock {
    redlock_lock lock;
    redlock_hiredis *_client;
    redlock_result _last;      /* the last blocking call's result */
    redlock_result _shown;     /* _last as redlock_hiredis_last_result() last copied it */
    redlock__hiredis_waiter *_waiter; /* the blocking call waiting on this lock, or NULL */
    redlock_result_fn _fn;
    void *_user;
} redlock_hiredis_lock;

#define REDLOCK__HIREDIS_MAGIC 0x68697264

#ifndef REDLOCK_HIREDIS_API
#ifdef REDLOCK_HIREDIS_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_HIREDIS_API static __attribute__((unused))
#else
#define REDLOCK_HIREDIS_API static
#endif
#else
#define REDLOCK_HIREDIS_API extern
#endif
#endif

/* ---- API ---- */

#ifdef __cplusplus
extern "C" {
#endif

/* Sets up the client and tries to connect every node (a node that is down
   is retried later; see redlock_hiredis_node_status). Starts the watchdog
   thread if asked. Errors: INVALID (also: a Sentinel group without its
   group's name; a cluster on a Unix socket or with a db), NODES, NOMEM, NO_TLS
   or TLS (see HOW IT TALKS), or the core's. */
REDLOCK_HIREDIS_API int redlock_hiredis_init(redlock_hiredis *c, const redlock_hiredis_config *o);

/* Stops the watchdog thread, detaches every lock (without releasing it on
   the servers: release first), closes the connections. */
REDLOCK_HIREDIS_API void redlock_hiredis_deinit(redlock_hiredis *c);

/* A lock on the client. opts as for redlock_lock_init; opts->on_result and
   opts->user are kept and called / passed on after the adapter's own
   bookkeeping (see CALLBACKS). INVALID for a fenced lock whose key has no
   {hash tag} when a node is a cluster (see HOW IT TALKS). As with
   redlock_lock_init, a handle still
   initialised on this client is deinitialised first (a blocking call still
   waiting on it returns REDLOCK_ERR_DETACHED), and a refused init
   (INVALID, KEY ...) does nothing. */
REDLOCK_HIREDIS_API int redlock_hiredis_lock_init(redlock_hiredis *c, redlock_hiredis_lock *lk,
                                                  const redlock_lock_opts *opts);

/* Forgets the lock (does not release it on the servers). A blocking call
   still waiting on it (on another thread) returns REDLOCK_ERR_DETACHED and
   does not touch the lock again. */
REDLOCK_HIREDIS_API void redlock_hiredis_lock_deinit(redlock_hiredis_lock *lk);

/* Blocks until acquired or given up (retries and wait_ms as configured).
   Returns REDLOCK_OK or the reason (LOCKED, TIMEOUT, NO_QUORUM, ...), or a
   caller error (BUSY, ALREADY_HELD, ...; INVALID for a NULL lock,
   DETACHED for one deinitialised); redlock_hiredis_last_result() has the
   whole result. The same caller errors hold for release and extend. */
REDLOCK_HIREDIS_API int redlock_hiredis_acquire(redlock_hiredis_lock *lk);

/* Blocks until released on all nodes (or they timed out). OK if a quorum
   deleted the key; EXPIRED / NO_QUORUM otherwise; NOT_HELD if not held. */
REDLOCK_HIREDIS_API int redlock_hiredis_release(redlock_hiredis_lock *lk);

/* Blocks until the lock is extended by ttl_ms (0: its ttl) on a quorum. */
REDLOCK_HIREDIS_API int redlock_hiredis_extend(redlock_hiredis_lock *lk, int64_t ttl_ms);
/* Readers-writer locks (redlock.h section 12): redlock_upgrade and
   redlock_downgrade, blocking until their result. */
REDLOCK_HIREDIS_API int redlock_hiredis_upgrade(redlock_hiredis_lock *lk);
REDLOCK_HIREDIS_API int redlock_hiredis_downgrade(redlock_hiredis_lock *lk);

/* The last blocking call's full result (votes, validity, elapsed time),
   or a later one that came without a call: a loss the watchdog found (op
   LOST), an acquire begun with the core's redlock_acquire. A copy, taken
   under the client's mutex with the watchdog thread: it stays as it is
   until the next call of this function on the lock. */
REDLOCK_HIREDIS_API const redlock_result *redlock_hiredis_last_result(const redlock_hiredis_lock *lk);

/* The core client, for the core API (redlock_next_deadline ...). */
REDLOCK_HIREDIS_API redlock_client *redlock_hiredis_client(redlock_hiredis *c);

/* Without the watchdog thread: runs I/O and the core's timers (watchdog
   renewals, late replies) for timeout_ms (0: what is ready, no wait).
   With the thread: returns OK at once; inside a callback: BUSY. */
REDLOCK_HIREDIS_API int redlock_hiredis_run(redlock_hiredis *c, int64_t timeout_ms);

/* State of the lock (thread-safe with the watchdog thread). */
REDLOCK_HIREDIS_API redlock_state redlock_hiredis_lock_state(redlock_hiredis_lock *lk);

/* End of validity while HELD, on redlock_clock_us() (microseconds). */
REDLOCK_HIREDIS_API int64_t redlock_hiredis_lock_valid_until(redlock_hiredis_lock *lk);

/* Node i's last failure (REDLOCK_ERR_CONNECT, AUTH, TRANSPORT,
   NODE_TIMEOUT, ...), or 0 if none yet or a new connection has answered
   since; errbuf (optional) gets the text, as redlock_socket_node_status()
   gives it: the failure's words (the server's refusal, what OpenSSL said,
   why a connect failed: "connection refused", "connect timeout" ...),
   else the status's description; with status 0, the server's last error
   reply to a command on the current connection ("" if none). */
REDLOCK_HIREDIS_API int redlock_hiredis_node_status(const redlock_hiredis *c, int i, char *errbuf, size_t errsz);

/* Is node i connected right now? */
REDLOCK_HIREDIS_API int redlock_hiredis_node_connected(const redlock_hiredis *c, int i);

/* Node i's release notifications (redlock.h section 10): 0 while they
   work or were never refused; REDLOCK_ERR_SERVER (AUTH for a refused
   login) once the node refused its subscriber (an ACL without the
   channel, a renamed SUBSCRIBE; a sharded cluster node: one of its
   masters' subscribers): its releases are then not heard, and the
   subscriber is tried again after a backoff (see HOW IT TALKS). errbuf
   (optional) gets the node's words. */
REDLOCK_HIREDIS_API int redlock_hiredis_notify_status(const redlock_hiredis *c, int i, char *errbuf, size_t errsz);
/* What node i may evict (redlock.h section 4, Eviction): its
   maxmemory_policy as the last INFO that named one said ("" before
   any did) into buf (optional, cut to size), and the redlock_evicts the
   core was told (NONE, VOLATILE, ALL); INVALID for a bad node. */
REDLOCK_HIREDIS_API int redlock_hiredis_node_policy(const redlock_hiredis *c, int i, char *buf, size_t size);
/* Statistics (see STATISTICS): the core's counters and each node's
   connections' into *out: OK, or INVALID. Reset zeroes both. Under the
   client's mutex with the watchdog thread; safe inside callbacks. */
REDLOCK_HIREDIS_API int redlock_hiredis_stats(const redlock_hiredis *c, redlock_adapter_stats *out);
REDLOCK_HIREDIS_API void redlock_hiredis_stats_reset(redlock_hiredis *c);

#ifdef __cplusplus
}
#endif

/* Names of 0.1, kept for one release. */
typedef redlock_hiredis_config redlock_hiredis_opts;                    /* deprecated */
#define redlock_hiredis_opts_init(cfg) redlock_hiredis_config_init(cfg)     /* deprecated */
#define redlock_hiredis_free(c) redlock_hiredis_deinit(c)                   /* deprecated */
#define redlock_hiredis_poll(c, ms) ((void)redlock_hiredis_run((c), (ms)))  /* deprecated */

#endif /* REDLOCK_HIREDIS_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_HIREDIS_IMPLEMENTATION) && !defined(REDLOCK__HIREDIS_IMPLEMENTED)
#define REDLOCK__HIREDIS_IMPLEMENTED

/* ---- connections ---- */

static inline void redlock__hiredis_fail_tag(void *client, redlock_tag tag, int status)
{
    redlock_on_error((redlock_client *)client, tag, status);
}

/* Drops node i's connection (redlock_conn.h): every request it owed
   fails with `status` (why: its words, kept before the context that may
   hold them is freed); reopened after the reconnect delay. */
static inline void redlock__hiredis_drop_conn(redlock_hiredis *c, redlock__hiredis_conn *cn, int status, const char *why)
{
    redlock__conn_ring owed =
        redlock__conn_drop(&cn->life, &cn->q, status, why, redlock__hiredis_now_us(), c->_reconnect_delay_ms);
    if (cn->ctx) redisFree(cn->ctx);
    cn->ctx = NULL;
    cn->fd = -1;
    cn->ssl = NULL; /* freed with the context */
    cn->need_flush = 0;
    cn->unsent = 0;
    redlock__hiredis_copies_free(&cn->sent);
    if (cn->link >= 0) {
        redlock__hiredis_cluster *cl = c->_conn[cn->node].ep.cluster;
        size_t k;
        for (k = 0; k < owed.count; k++) /* a CLUSTER SLOTS it owed: asked again elsewhere */
            if (redlock__conn_at(&owed, k)->kind == REDLOCK__HIREDIS_SLOTS) cl->refreshing = 0;
        if (status) { /* the cluster node's status; a seed next, the map asked again */
            redlock__conn_set(&c->_conn[cn->node].life, status, cn->life.words);
            redlock__hiredis_cluster_failed(cl, cn->link);
        }
    }
    redlock__conn_fail_owed(&owed, status, redlock__hiredis_fail_tag, &c->_client);
}

static inline void redlock__hiredis_drop(redlock_hiredis *c, int i, int status, const char *why)
{
    redlock__hiredis_drop_conn(c, &c->_conn[i], status, why);
}

/* Files a request whose room redlock__hiredis_reserve() made (bytes:
   its size in RESP, counted). */
static inline void redlock__hiredis_queue(redlock__hiredis_conn *cn, int kind, redlock_tag tag, size_t bytes)
{
    /* cannot fail: reserved */
    if (kind == REDLOCK__CONN_CORE) redlock__conn_file(&cn->life, &cn->q, tag, redlock__hiredis_now_us());
    else redlock__conn_push(&cn->q, kind, tag, redlock__hiredis_now_us());
    cn->unsent++;
    redlock__conn_count_out(&cn->life, &cn->q, bytes);
}

/* Appends one command of a new connection's preamble (redlock_conn.h). */
static inline int redlock__hiredis_handshake(void *ctx, int kind, int argc, const char **argv, const size_t *len)
{
    redlock__hiredis_conn *cn = (redlock__hiredis_conn *)ctx;
    if (cn->link >= 0 && redlock__hiredis_copies_push(&cn->sent, NULL, 0, 0) != 0) return -1;
    if (redlock__hiredis_reserve(&cn->q) != 0 || redisAppendCommandArgv(cn->ctx, argc, argv, len) != REDIS_OK) {
        if (cn->link >= 0) redlock__hiredis_copies_unpush(&cn->sent);
        return -1;
    }
    redlock__hiredis_queue(cn, kind, 0, redlock__conn_resp_size(argc, len));
    cn->need_flush = 1;
    return 0;
}

/* Installs a freshly opened context and queues the handshake. */
static inline int redlock__hiredis_install(redlock_hiredis *c, redlock__hiredis_conn *cn, redisContext *ctx)
{
    cn->ctx = ctx;
    cn->fd = ctx->fd;
    redlock__hiredis_bound_install(&cn->bound, ctx->reader, REDLOCK_HIREDIS_MAX_BUFFERED);
    cn->q.head = cn->q.count = cn->unsent = 0;
    redlock__conn_opened(&cn->life, REDLOCK__CONN_CONNECTING);
    cn->connect_deadline = redlock__hiredis_now_us() + (int64_t)c->_connect_timeout_ms * 1000;
    /* ROLE: a Sentinel group's server must be its primary */
    return redlock__conn_preamble_queue(cn->ep.user, cn->ep.pass, cn->ep.db, cn->ep.sentinels != NULL, cn->ep.info,
                                        redlock__hiredis_handshake, cn);
}

static inline int redlock__hiredis_on_driver(const redlock_hiredis *c)
{
    return !c->_threaded || pthread_equal(pthread_self(), c->_thread);
}

/* SIGPIPE kept away from blocking writes (a sentinel's): blocked, and a
   SIGPIPE a failed write raised taken back unless one was pending before. */
typedef struct redlock__hiredis_nopipe {
    sigset_t set, old;
    int was_pending;
} redlock__hiredis_nopipe;

static inline void redlock__hiredis_nopipe_begin(redlock__hiredis_nopipe *np)
{
    sigset_t pend;
    sigemptyset(&np->set);
    sigaddset(&np->set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &np->set, &np->old);
    sigpending(&pend);
    np->was_pending = sigismember(&pend, SIGPIPE);
}

static inline void redlock__hiredis_nopipe_end(redlock__hiredis_nopipe *np)
{
    sigset_t pend;
    sigpending(&pend);
    if (!np->was_pending && sigismember(&pend, SIGPIPE)) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&np->set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &np->old, NULL);
}

/* Node i's group failed over ago_ms ago (redlock.h section 4, Restarts). */
static inline void redlock__hiredis_failed_over(redlock_hiredis *c, int i, int64_t ago_ms)
{
    if (ago_ms >= 0) redlock_node_failed_over(&c->_client, i, ago_ms); /* on_event runs as any callback */
}

/* Starts connecting node i if it is down and its reconnect delay has
   passed. Never blocks on the network, except a Sentinel group's node,
   whose sentinels are asked for its primary first (blocking, each within
   the connect timeout). Only on the thread that does I/O. */
static inline void redlock__hiredis_ensure_conn(redlock_hiredis *c, redlock__hiredis_conn *cn)
{
    redisContext *ctx;
    int status = 0;
    char err[128];
    if (cn->ctx || !redlock__conn_may_open(&cn->life, redlock__hiredis_now_us())) return;
    err[0] = 0;
    if (cn->ep.sentinels) {
        redlock__hiredis_nopipe np;
        int64_t ago;
        redlock__hiredis_nopipe_begin(&np);
        status = redlock__hiredis_sentinels_primary(&cn->ep, c->_connect_timeout_ms, &ago, err, sizeof err);
        redlock__hiredis_nopipe_end(&np);
        if (status != 0) {
            redlock__conn_lost(&cn->life, status, err, redlock__hiredis_now_us(), c->_reconnect_delay_ms);
            return;
        }
        redlock__hiredis_failed_over(c, cn->node, ago);
    }
    ctx = redlock__hiredis_open(&cn->ep, &status, err, sizeof err);
    if (!ctx) {
        redlock__conn_lost(&cn->life, status, err, redlock__hiredis_now_us(), c->_reconnect_delay_ms);
        if (cn->link >= 0) { /* the cluster node's status; while the map is not known, the next seed */
            redlock__conn_set(&c->_conn[cn->node].life, status, err);
            redlock__hiredis_cluster_failed(c->_conn[cn->node].ep.cluster, cn->link);
        }
        return;
    }
    if (redlock__hiredis_install(c, cn, ctx) != 0)
        redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_NOMEM, "out of memory");
}

/* Link k of cluster node i: its endpoint made at first use. NULL: out of memory. */
static inline redlock__hiredis_conn *redlock__hiredis_link(redlock_hiredis *c, int i, int k)
{
    redlock__hiredis_conn *cn = &c->_links[i][k];
    if (!cn->ep.host && redlock__hiredis_link_endpoint(&cn->ep, &c->_conn[i].ep, k) != 0) {
        redlock__hiredis_endpoint_free(&cn->ep);
        return NULL;
    }
    return cn;
}

/* The connections of node i: its own, or a cluster's links (k < the count). */
static inline int redlock__hiredis_nconn(const redlock_hiredis *c, int i)
{
    return c->_links[i] ? c->_conn[i].ep.cluster->links : 1;
}

static inline redlock__hiredis_conn *redlock__hiredis_conn_at(redlock_hiredis *c, int i, int k)
{
    return c->_links[i] ? &c->_links[i][k] : &c->_conn[i];
}

/* Node i's connection, if it is down and may reopen (a cluster's: those
   its commands use, as they are routed). */
static inline void redlock__hiredis_ensure(redlock_hiredis *c, int i)
{
    if (!c->_links[i]) redlock__hiredis_ensure_conn(c, &c->_conn[i]);
}

/* Node i's socket became writable (or failed) while connecting. */
static inline void redlock__hiredis_connect_done(redlock_hiredis *c, redlock__hiredis_conn *cn)
{
    int err = 0;
    socklen_t len = (socklen_t)sizeof err;
    if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err) {
        char why[96];
        redlock__conn_connect_words(why, sizeof why, err, cn->ep.unix_path != NULL);
        redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_CONNECT, why);
        return;
    }
    if (cn->ep.tls_ctx) { /* the handshake goes on in the reads and writes, within its own connect timeout */
        char why[128];
        int rc = redlock__hiredis_tls_start(&cn->ep, cn->ctx, &cn->ssl, why, sizeof why);
        cn->connect_deadline = redlock__hiredis_now_us() + (int64_t)c->_connect_timeout_ms * 1000;
        if (rc != 0) {
            redlock__hiredis_drop_conn(c, cn, rc, why);
            return;
        }
    }
    redlock__conn_up(&cn->life); /* TLS: the handshake runs in the reads and writes (tls_handshaking) */
}

static inline int redlock__hiredis_wants_flush(const redlock__hiredis_conn *cn)
{
    return cn->ctx && cn->need_flush && cn->life.state != REDLOCK__CONN_CONNECTING;
}

/* Writes out node i's buffered commands; SIGPIPE is blocked by the caller.
   Returns 0, or the node's status if the write failed (why says why; the
   caller drops the node once SIGPIPE is unblocked again). */
static inline int redlock__hiredis_write(redlock__hiredis_conn *cn, char *why, size_t whysz)
{
    int done;
    redlock__hiredis_tls_clear(cn->ssl);
    if (redisBufferWrite(cn->ctx, &done) != REDIS_OK) { /* non-blocking: the rest when writable again */
        snprintf(why, whysz, "%s", cn->ctx->errstr);
        return redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_TRANSPORT, why, whysz);
    }
    if (!done) return 0;
    cn->need_flush = 0;
    /* command timeouts count from the write */
    redlock__conn_restart(&cn->q, cn->q.count - cn->unsent, redlock__hiredis_now_us());
    cn->unsent = 0;
    return 0;
}

/* Writes out the buffered commands of connection `one` (or subscriber
   `sub` >= 0), or of every connection and subscriber (one NULL, sub < 0),
   with SIGPIPE blocked once around all the writes (hiredis writes with
   write(2): a node that vanished must be an error, not a signal). A
   SIGPIPE that a failed write raised is taken back, unless one was
   already pending before; the connections whose write failed are dropped
   after that, with the caller's signal mask back. */
static inline void redlock__hiredis_flush(redlock_hiredis *c, redlock__hiredis_conn *one, int sub)
{
    sigset_t pipe_set, old, pend;
    int i, k, s, was_pending, nfailed = 0, nsubfailed = 0, any = 0, all = !one && sub < 0;
    for (i = 0; i < c->_n && !any; i++)
        for (k = 0; k < redlock__hiredis_nconn(c, i) && !any; k++) {
            redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
            any = (all || cn == one) && redlock__hiredis_wants_flush(cn);
        }
    for (s = redlock__hiredis_subs_next(&c->_subs, -1); s >= 0 && !any; s = redlock__hiredis_subs_next(&c->_subs, s))
        any = (all || sub == s) && redlock__hiredis_sub_wants_flush(redlock__hiredis_sub_at(&c->_subs, s));
    if (!any) return;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pend);
    was_pending = sigismember(&pend, SIGPIPE);
    for (i = 0; i < c->_n; i++)
        for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
            redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
            if ((all || cn == one) && redlock__hiredis_wants_flush(cn) &&
                (cn->write_status = redlock__hiredis_write(cn, cn->write_why, sizeof cn->write_why)) != 0)
                nfailed++;
        }
    for (s = redlock__hiredis_subs_next(&c->_subs, -1); s >= 0; s = redlock__hiredis_subs_next(&c->_subs, s)) {
        redlock__hiredis_sub *sb = redlock__hiredis_sub_at(&c->_subs, s);
        if ((all || sub == s) && redlock__hiredis_sub_wants_flush(sb) && redlock__hiredis_sub_write(&c->_subs, s) != 0) {
            sb->write_failed = 1; /* closed once the signal mask is back */
            nsubfailed++;
        }
    }
    if ((nfailed || nsubfailed) && !was_pending) {
        struct timespec zero = { 0, 0 };
        sigpending(&pend);
        if (sigismember(&pend, SIGPIPE)) sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (i = 0; i < c->_n && nfailed; i++)
        for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
            redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
            int st = cn->write_status;
            cn->write_status = 0;
            if (st && cn->ctx) redlock__hiredis_drop_conn(c, cn, st, cn->write_why);
        }
    for (s = redlock__hiredis_subs_next(&c->_subs, -1); s >= 0 && nsubfailed; s = redlock__hiredis_subs_next(&c->_subs, s))
        if (redlock__hiredis_sub_at(&c->_subs, s)->write_failed) redlock__hiredis_sub_close(&c->_subs, s, 1);
}

/* A connection closed while nothing was owed (a restart): it is replaced
   at the next command, without the reconnect delay, and the node gets no
   failure status (nothing was lost). */
static inline void redlock__hiredis_closed_idle_conn(redlock_hiredis *c, redlock__hiredis_conn *cn, const char *why)
{
    redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_TRANSPORT, why);
    redlock__conn_down(&cn->life, 0, 0);
    redlock__conn_set(&cn->life, 0, "");
    if (cn->link >= 0) redlock__conn_set(&c->_conn[cn->node].life, 0, "");
}

/* A core command's reply came on a Sentinel group's connection: do the
   sentinels still name its server as the primary? Asked after the
   command was written and before its reply reaches the core, so a reply
   counts only if the group had not failed over when the round began: a
   holder cannot renew on a former primary that Sentinel has not yet
   turned into a replica (it would still accept the write). 0, or the
   status the reply fails with (the group failed over: TRANSPORT, the
   client told; no sentinel answers: CONNECT), its words kept. */
static inline int redlock__hiredis_confirm(redlock_hiredis *c, int i)
{
    redlock__hiredis_conn *cn = &c->_conn[i];
    redlock__hiredis_nopipe np;
    char why[128];
    int rc;
    redlock__hiredis_nopipe_begin(&np);
    rc = redlock__hiredis_sentinels_confirm(&cn->ep, c->_connect_timeout_ms, why, sizeof why);
    redlock__hiredis_nopipe_end(&np);
    if (rc == REDLOCK_ERR_TRANSPORT) redlock__hiredis_failed_over(c, i, 0);
    if (rc != 0) redlock__conn_set(&cn->life, rc, why);
    return rc;
}

/* ---- a cluster node's links ---- */

/* Before a command is written to connection cn (on the thread that does
   I/O): an idle connection the node closed is replaced, one with bytes
   nobody asked for dropped, and a connection that is down opened if its
   delay has passed. */
static inline void redlock__hiredis_prepare(redlock_hiredis *c, redlock__hiredis_conn *cn)
{
    if (!redlock__hiredis_on_driver(c)) return;
    if (cn->ctx) {
        int idle = redlock__hiredis_send_probe(&cn->life, &cn->q, cn->fd, cn->ssl,
                                               cn->ctx->reader->len - cn->ctx->reader->pos);
        if (idle == REDLOCK__CONN_IDLE_CLOSED) /* closed while idle (a restart): replaced for this command */
            redlock__hiredis_closed_idle_conn(c, cn, "connection closed");
        else if (idle == REDLOCK__CONN_IDLE_UNASKED) /* retried after the reconnect delay */
            redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_PROTOCOL, "unexpected reply");
    }
    if (!cn->ctx) redlock__hiredis_ensure_conn(c, cn);
}

/* Appends RESP text s (taken over) to link cn, as a request of `kind`
   (a core command's tag, its copy kept with its hops for a redirection).
   0, or a status (s freed). */
static inline int redlock__hiredis_link_append(redlock__hiredis_conn *cn, int kind, redlock_tag tag, char *s, size_t len,
                                               int hops)
{
    int core = kind == REDLOCK__CONN_CORE, rc;
    if ((rc = redlock__hiredis_copies_push(&cn->sent, core ? s : NULL, len, hops)) != 0) {
        if (!core) redisFreeCommand(s);
        return rc;
    }
    if ((rc = redlock__hiredis_reserve(&cn->q)) != 0 || redisAppendFormattedCommand(cn->ctx, s, len) != REDIS_OK) {
        redlock__hiredis_copies_unpush(&cn->sent); /* frees a core command's text */
        if (!core) redisFreeCommand(s);
        return rc ? rc : REDLOCK_ERR_NOMEM;
    }
    if (!core) redisFreeCommand(s);
    redlock__hiredis_queue(cn, kind, tag, len);
    cn->need_flush = 1;
    return 0;
}

/* An adapter's own command (argv) on link cn: 0, or a status. */
static inline int redlock__hiredis_link_own(redlock__hiredis_conn *cn, int kind, int argc, const char **argv)
{
    size_t len[2], n;
    char *s = NULL;
    long long got;
    int k;
    for (k = 0; k < argc; k++) len[k] = strlen(argv[k]);
    if ((got = redisFormatCommandArgv(&s, argc, argv, len)) < 0 || !s) return REDLOCK_ERR_NOMEM;
    n = (size_t)got;
    return redlock__hiredis_link_append(cn, kind, 0, s, n, 0);
}

/* Core command `tag` (RESP text s, taken over) to link k of cluster node
   i; after an ASK (asking), ASKING first. 0, or the status its vote
   fails with (s freed). */
static inline int redlock__hiredis_link_send(redlock_hiredis *c, int i, int k, redlock_tag tag, char *s, size_t len,
                                             int hops, int asking)
{
    redlock__hiredis_conn *cn = redlock__hiredis_link(c, i, k);
    static const char *ask[1] = { "ASKING" };
    int rc;
    if (!cn) {
        redisFreeCommand(s);
        return REDLOCK_ERR_NOMEM;
    }
    redlock__hiredis_prepare(c, cn);
    if (!cn->ctx) {
        redisFreeCommand(s);
        return cn->life.status ? cn->life.status : REDLOCK_ERR_CONNECT;
    }
    if (asking && (rc = redlock__hiredis_link_own(cn, REDLOCK__CONN_ASKING, 1, ask)) != 0) {
        redisFreeCommand(s);
        return rc;
    }
    return redlock__hiredis_link_append(cn, REDLOCK__CONN_CORE, tag, s, len, hops);
}

/* Asks cluster node i for its slot map (CLUSTER SLOTS) when that is due
   (redlock__hiredis_cluster_refresh_due): on a link that is up, a seed
   first, else on the seed in turn. */
static inline void redlock__hiredis_cluster_refresh(redlock_hiredis *c, int i)
{
    static const char *slots[2] = { "CLUSTER", "SLOTS" };
    redlock__hiredis_cluster *cl = c->_conn[i].ep.cluster;
    redlock__hiredis_conn *cn = NULL;
    int k;
    if (!redlock__hiredis_cluster_refresh_due(cl, redlock__hiredis_now_us())) return;
    for (k = 0; k < cl->links && !cn; k++)
        if (c->_links[i][k].ctx && c->_links[i][k].life.state == REDLOCK__CONN_UP && !c->_links[i][k].life.refused)
            cn = &c->_links[i][k];
    if (!cn && (cn = redlock__hiredis_link(c, i, cl->next_seed)) != NULL) redlock__hiredis_prepare(c, cn);
    if (!cn || !cn->ctx || redlock__hiredis_link_own(cn, REDLOCK__HIREDIS_SLOTS, 2, slots) != 0) cl->refreshing = 0;
}

/* The subscribers' hook: cluster node i's map is wanted (a master no
   longer serves a key its subscriber followed). */
static inline void redlock__hiredis_subs_refresh(void *arg, int i) { redlock__hiredis_cluster_refresh((redlock_hiredis *)arg, i); }

/* The core's command to cluster node i: to the master of its key's slot
   (a seed while the map does not know it). */
static inline int redlock__hiredis_cluster_send(redlock_hiredis *c, int i, const redlock_command *cmd, redlock_tag tag)
{
    redlock__hiredis_cluster *cl = c->_conn[i].ep.cluster;
    char *s;
    size_t len;
    int k, rc, hops;
    if (redlock__hiredis_cross_slot(&c->_conn[i].life, cmd)) return REDLOCK_ERR_INVALID;
    redlock__hiredis_cluster_refresh(c, i);
    if ((k = redlock__hiredis_cluster_route(cl, cmd, &hops)) < 0) return REDLOCK_ERR_NOMEM;
    if ((rc = redlock__hiredis_format(cmd, &s, &len)) != 0) return rc;
    return redlock__hiredis_link_send(c, i, k, tag, s, len, hops, 0);
}

/* A core command's reply on link cn (copy x: its command), as
   redlock_cluster_answer() reads it: MOVED (the map learns the slot's
   master) sends the command again there, ASK sends ASKING then the
   command there (the map unchanged), each within
   REDLOCK_CLUSTER_MAX_REDIRECTS; 1 when it did (x->cmd taken; the vote
   fails if it could not be sent), 0 when the reply is the core's (an
   error: TRYAGAIN, CLUSTERDOWN, a redirection too many, a failed vote).
   A MOVED to the former master's replica is a failover, told to the core. */
static inline int redlock__hiredis_redirect(redlock_hiredis *c, redlock__hiredis_conn *cn, redlock__hiredis_copy *x,
                                            redlock_tag tag, const redisReply *r)
{
    redlock__hiredis_cluster *cl = c->_conn[cn->node].ep.cluster;
    redlock_cluster_step step;
    redlock_reply rr;
    int how, k, st;
    if (r->type != REDIS_REPLY_ERROR || !x->cmd) return 0;
    redlock__hiredis_translate(r, &rr);
    how = redlock_cluster_answer(cl->rc, &rr, cn->ep.host, x->hops, &step);
    if (step.failover) redlock__hiredis_failed_over(c, cn->node, 0);
    if (how == REDLOCK_CLUSTER_PASS) return 0;
    if ((k = redlock__hiredis_cluster_master_link(cl, step.master)) < 0) {
        st = REDLOCK_ERR_NOMEM;
        redisFreeCommand(x->cmd);
    } else {
        st = redlock__hiredis_link_send(c, cn->node, k, tag, x->cmd, x->len, x->hops + 1, how == REDLOCK_CLUSTER_ASKING);
    }
    x->cmd = NULL;
    if (st) redlock_on_error(&c->_client, tag, st);
    return 1;
}

/* Hands every complete reply connection cn has buffered to the core (a
   cluster link's: its own answers kept, redirections followed). */
static inline void redlock__hiredis_deliver(redlock_hiredis *c, redlock__hiredis_conn *cn)
{
    const int i = cn->node;
    redlock__hiredis_cluster *cl = cn->link >= 0 ? c->_conn[i].ep.cluster : NULL;
    while (cn->ctx) {
        void *rv = NULL;
        redisReply *r;
        redlock__conn_req req;
        redlock__hiredis_copy x;
        int st;
        if (redisGetReplyFromReader(cn->ctx, &rv) != REDIS_OK) {
            redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_PROTOCOL, cn->bound.over ? "reply too large" : cn->ctx->errstr);
            return;
        }
        if (!rv) return;
        r = (redisReply *)rv;
        redlock__conn_count_in(&cn->life, redlock__hiredis_reply_size(r));
        if (!redlock__conn_pop(&cn->q, &req)) { /* a reply nobody asked for */
            freeReplyObject(r);
            redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_PROTOCOL, "unexpected reply");
            return;
        }
        memset(&x, 0, sizeof x);
        if (cl) (void)redlock__hiredis_copies_pop(&cn->sent, &x);
        /* answered, so written: a long output still being written counts
           only the requests left in the ring as unsent */
        if (cn->unsent > cn->q.count) cn->unsent = cn->q.count;
        if (req.kind == REDLOCK__CONN_INFO || req.kind == REDLOCK__CONN_CONFIG) {
            redlock__hiredis_info_reply(&c->_client, i, &cn->ep, req.kind, r, cl, cn->link);
            freeReplyObject(r);
            continue;
        }
        if (req.kind == REDLOCK__HIREDIS_SLOTS || req.kind == REDLOCK__CONN_ASKING) {
            if (req.kind == REDLOCK__HIREDIS_SLOTS) {
                int k, promoted = redlock__hiredis_cluster_slots(cl, cn->link, r);
                if (promoted > 0) redlock__hiredis_failed_over(c, i, 0); /* a replica took a master's slots */
                for (k = 0; k < cl->links; k++) /* the lives of masters the map names now */
                    redlock__hiredis_cluster_apply(&c->_client, i, cl, k, &c->_links[i][k].ep);
                if (promoted >= 0) redlock__hiredis_subs_remapped(&c->_subs, i);
                /* the watchdog thread opens every master's connection: a
                   blocking call's command, sent on its caller's thread,
                   cannot open one */
                for (k = 0; c->_threaded && k < cl->rc->map.masters; k++) {
                    int l = redlock__hiredis_cluster_master_link(cl, k);
                    if (l >= 0) (void)redlock__hiredis_link(c, i, l);
                }
            }
            freeReplyObject(r); /* ASKING's answer: what follows tells */
            continue;
        }
        if (req.kind == REDLOCK__CONN_ROLE) {
            redlock_reply rr, el[8];
            int role = redlock__hiredis_view(r, &rr, el, 8) == 0 ? redlock_sentinel_role(&rr) : -1;
            freeReplyObject(r);
            /* not the primary (a failover under way): the next connection asks
               the sentinels again; after a refused AUTH, the refusal tells */
            if (role != REDLOCK_SENTINEL_PRIMARY && !cn->life.refused) {
                char why[128];
                snprintf(why, sizeof why, "%.24s:%d is not the primary of '%.16s' (%s): asking the sentinels again",
                         cn->ep.host, cn->ep.port, cn->ep.sentinels->group, role < 0 ? "ROLE refused" : "a replica");
                redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_CONNECT, why);
                return;
            }
            continue;
        }
        redlock__hiredis_heard(&cn->life, r);
        if (req.kind != REDLOCK__CONN_CORE) { /* AUTH / SELECT */
            (void)redlock__conn_preamble_answer(&cn->life, req.kind, r->type == REDIS_REPLY_ERROR ? r->str : NULL);
            if (cl && cn->life.refused) redlock__conn_set(&c->_conn[i].life, cn->life.status, cn->life.words);
            freeReplyObject(r);
            continue;
        }
        if (cn->life.refused) {
            freeReplyObject(r);
            redisFreeCommand(x.cmd);
            redlock_on_error(&c->_client, req.tag, redlock__conn_answer(&cn->life, NULL));
            if (cn->q.count == 0 && cn->ctx)
                redlock__hiredis_drop_conn(c, cn, cn->life.status, cn->life.words); /* retry after the delay */
            continue;
        }
        if ((st = redlock__conn_answer(&cn->life, redlock__hiredis_auth_error(r) ? r->str : NULL)) != 0) {
            freeReplyObject(r); /* no or wrong credentials */
            redisFreeCommand(x.cmd);
            if (cl) redlock__conn_set(&c->_conn[i].life, st, cn->life.words);
            redlock_on_error(&c->_client, req.tag, st);
            continue;
        }
        if (cl) {
            const redisContext *ctx = cn->ctx;
            int moved;
            redlock__hiredis_heard(&c->_conn[i].life, r);
            c->_conn[i].life.status = 0; /* a master answered */
            moved = redlock__hiredis_redirect(c, cn, &x, req.tag, r);
            redisFreeCommand(x.cmd);
            if (moved) {
                freeReplyObject(r);
                redlock__hiredis_cluster_refresh(c, i); /* after a MOVED: the rest of the map */
                if (cn->ctx != ctx) return;
                continue;
            }
        }
        if (cn->ep.sentinels && (st = redlock__hiredis_confirm(c, i)) != 0) {
            freeReplyObject(r); /* not counted: the group failed over, or no sentinel answers */
            redlock_on_error(&c->_client, req.tag, st);
            if (cn->ctx) redlock__hiredis_drop(c, i, st, cn->life.words);
            return;
        }
        {
            const redisContext *ctx = cn->ctx;
            redlock_reply rr;
            int gone;
            redlock__hiredis_translate(r, &rr);
            redlock_on_reply(&c->_client, req.tag, &rr);
            gone = cn->ep.sentinels && r->type == REDIS_REPLY_ERROR && r->str &&
                   redlock_sentinel_not_primary(r->str, (size_t)r->len);
            freeReplyObject(r);
            if (gone && cn->ctx == ctx) { /* no longer (or not yet) the primary: the next connection asks */
                redlock__hiredis_drop(c, i, REDLOCK_ERR_TRANSPORT, "the server is no longer the group's primary");
                return;
            }
        }
    }
}


/* ---- core callbacks ---- */

static inline int redlock__hiredis_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    redlock_hiredis *c = (redlock_hiredis *)user;
    redlock__hiredis_conn *cn = &c->_conn[node]; /* the core sends to its nodes only */
    if (c->_links[node]) return redlock__hiredis_cluster_send(c, node, cmd, tag);
    redlock__hiredis_prepare(c, cn);
    if (!cn->ctx) return cn->life.status ? cn->life.status : REDLOCK_ERR_CONNECT;
    {   /* room first: once appended, the command must have its entry */
        int rc = redlock__hiredis_reserve(&cn->q);
        if (rc != 0) return rc;
    }
    if (redisAppendCommandArgv(cn->ctx, cmd->argc, (const char **)cmd->argv, cmd->argvlen) != REDIS_OK)
        return REDLOCK_ERR_NOMEM;
    redlock__hiredis_queue(cn, REDLOCK__CONN_CORE, tag, redlock__conn_resp_size(cmd->argc, cmd->argvlen));
    cn->need_flush = 1;
    return 0;
}

static inline void redlock__hiredis_wake(redlock_hiredis *c)
{
    if (c->_threaded && !pthread_equal(pthread_self(), c->_thread)) {
        char b = 1;
        ssize_t w = write(c->_wake[1], &b, 1);
        (void)w;
    }
}

/* The core's listen callback (release notifications). */
static inline void redlock__hiredis_listen(void *user, redlock_lock *lk, int on)
{
    redlock_hiredis *c = (redlock_hiredis *)user;
    redlock__hiredis_subs_listen(&c->_subs, lk, on);
    if (on) redlock__hiredis_wake(c); /* the thread, if another thread called: subscribe now */
}

static inline void redlock__hiredis_set_timer(void *user, int64_t deadline_us)
{
    redlock_hiredis *c = (redlock_hiredis *)user;
    c->_deadline = deadline_us;
    redlock__hiredis_wake(c);
}

static inline void redlock__hiredis_on_event(void *user, const redlock_event *ev)
{
    redlock_hiredis *c = (redlock_hiredis *)user;
    if (c->_on_event) {
        c->_depth++;
        c->_on_event(c->_user, ev);
        c->_depth--;
    }
}

static inline void redlock__hiredis_on_result(redlock_lock *lock, const redlock_result *r)
{
    redlock_hiredis_lock *lk = (redlock_hiredis_lock *)r->user;
    redlock_result copy = *r;
    (void)lock;
    copy.user = lk->_user;
    if (lk->_waiter && (int)r->op == lk->_waiter->op) {
        lk->_last = copy;
        lk->_waiter->result = copy;
        lk->_waiter->followup = redlock_lock_followup(lock);
        lk->_waiter->done = 1;
        lk->_waiter = NULL;
        if (lk->_client->_threaded) pthread_cond_broadcast(&lk->_client->_cv);
    } else if (r->op == REDLOCK_OP_LOST || r->op == REDLOCK_OP_ACQUIRE) {
        lk->_last = copy;
    }
    if (lk->_fn) {
        lk->_client->_depth++;
        lk->_fn(&lk->lock, &copy);
        lk->_client->_depth--;
    }
}

/* ---- the loop ---- */

/* The poll set of a turn: every connection (idle ones too: a close or a
   stray reply shows at once; a cluster's links), every subscriber (a
   message ends the wait), every +switch-master watch, and the thread's
   wake pipe; who[k] says whose pfd[k] is: connection k of node i
   (REDLOCK__HIREDIS_WHO), subscriber s (-2 - s), node i's watch
   (REDLOCK__HIREDIS_WATCH_WHO + i), or -1 the pipe. *until comes down to the nearest deadline
   of what is polled. Returns the count. */
#define REDLOCK__HIREDIS_WHO(i, k) ((k) * REDLOCK_MAX_NODES + (i))
#define REDLOCK__HIREDIS_WATCH_WHO (1 << 24) /* + i: node i's +switch-master watch */
static inline int redlock__hiredis_poll_set(redlock_hiredis *c, struct pollfd *pfd, int *who, int64_t *until)
{
    const int64_t cmd_us = (int64_t)c->_command_timeout_ms * 1000;
    int np = 0, i, k;
    for (i = 0; i < c->_n; i++)
        for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
            redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
            short ev = 0;
            if (cn->ctx && cn->life.state == REDLOCK__CONN_CONNECTING) {
                ev = POLLOUT;
                if (cn->connect_deadline < *until) *until = cn->connect_deadline;
            } else if (cn->ctx) {
                /* a TLS write that waits for the server waits for readable */
                ev = (short)(POLLIN | (cn->need_flush && !redlock__hiredis_tls_wants_read(cn->ssl) ? POLLOUT : 0));
                if (redlock__hiredis_tls_handshaking(cn->ssl)) { /* bounded by the connect timeout */
                    if (cn->connect_deadline < *until) *until = cn->connect_deadline;
                } else if (redlock__conn_due(&cn->q, cmd_us) < *until) {
                    *until = redlock__conn_due(&cn->q, cmd_us);
                }
            } else if (c->_threaded && cn->ep.host && cn->life.retry_at < *until) {
                *until = cn->life.retry_at;
            }
            if (!ev) continue;
            pfd[np].fd = cn->fd;
            pfd[np].events = ev;
            pfd[np].revents = 0;
            who[np++] = REDLOCK__HIREDIS_WHO(i, k);
        }
    for (k = redlock__hiredis_subs_next(&c->_subs, -1); k >= 0; k = redlock__hiredis_subs_next(&c->_subs, k)) {
        const redlock__hiredis_sub *sb = redlock__hiredis_sub_at(&c->_subs, k);
        if (!redlock__hiredis_sub_events(sb)) continue;
        pfd[np].fd = sb->fd;
        pfd[np].events = redlock__hiredis_sub_events(sb);
        pfd[np].revents = 0;
        who[np++] = -2 - k;
    }
    if (redlock__hiredis_subs_due(&c->_subs) < *until) *until = redlock__hiredis_subs_due(&c->_subs);
    for (i = 0; i < c->_n; i++) { /* a Sentinel group's +switch-master watch */
        const redlock__hiredis_sentinels *g = c->_conn[i].ep.sentinels;
        short ev = g ? redlock__hiredis_watch_events(g) : 0;
        if (g && g->named && redlock__hiredis_watch_due(g) < *until) *until = redlock__hiredis_watch_due(g);
        if (!ev) continue;
        pfd[np].fd = g->wctx->fd;
        pfd[np].events = ev;
        pfd[np].revents = 0;
        who[np++] = REDLOCK__HIREDIS_WATCH_WHO + i;
    }
    if (c->_threaded) {
        pfd[np].fd = c->_wake[0];
        pfd[np].events = POLLIN;
        pfd[np].revents = 0;
        who[np++] = -1;
    }
    return np;
}

/* Subscriber k's socket fd is ready (revents). */
static inline void redlock__hiredis_sub_event(redlock_hiredis *c, int k, int fd, short revents)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(&c->_subs, k);
    if (!sb->ctx || sb->fd != fd) return; /* closed meanwhile */
    if (sb->life.state == REDLOCK__CONN_CONNECTING) {
        redlock__hiredis_sub_ready(&c->_subs, k, 0, REDLOCK_HIREDIS_MAX_BUFFERED);
        redlock__hiredis_flush(c, NULL, k);
        return;
    }
    if ((revents & POLLOUT) || (sb->ssl && sb->need_flush && (revents & POLLIN)))
        redlock__hiredis_flush(c, NULL, k);
    redlock__hiredis_sub_ready(&c->_subs, k, (revents & (POLLIN | POLLHUP | POLLERR)) != 0,
                               REDLOCK_HIREDIS_MAX_BUFFERED);
}

/* Connection cn is readable: reads and delivers (TLS: a record per read;
   the rest now too); a read that fails delivers what arrived before the
   error, then drops the connection, or replaces it when it closed idle. */
static inline void redlock__hiredis_node_read(redlock_hiredis *c, redlock__hiredis_conn *cn)
{
    int reads;
    for (reads = 0; reads < 64; reads++) {
        const void *ctx = cn->ctx;
        redlock__hiredis_tls_clear(cn->ssl);
        if (redisBufferRead(cn->ctx) != REDIS_OK) {
            char why[128];
            int st;
            snprintf(why, sizeof why, "%s", cn->ctx->errstr[0] ? cn->ctx->errstr : "connection closed");
            int clean = cn->q.count == 0 && cn->ctx->reader->len == cn->ctx->reader->pos; /* no byte came */
            st = redlock__hiredis_tls_failure(&cn->ep, cn->ssl, REDLOCK_ERR_TRANSPORT, why, sizeof why);
            redlock__hiredis_deliver(c, cn);
            if (cn->ctx && clean && st == REDLOCK_ERR_TRANSPORT && !c->_threaded) {
                /* closed while idle (a restart): as in send, replaced
                   for the next command at once, and nothing was lost
                   (the thread reconnects by itself: after the delay) */
                redlock__hiredis_closed_idle_conn(c, cn, why);
            } else if (cn->ctx) {
                redlock__hiredis_drop_conn(c, cn, st, why);
            }
            return;
        }
        redlock__hiredis_deliver(c, cn);
        if (cn->ctx && cn->ctx->reader->len - cn->ctx->reader->pos > REDLOCK_HIREDIS_MAX_BUFFERED)
            redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_PROTOCOL, "reply too large");
        if (cn->ctx != ctx || !redlock__hiredis_tls_more(cn->fd, cn->ssl)) return; /* dropped, replaced, or all read */
    }
}

/* Connection cn's socket fd is ready (revents). */
static inline void redlock__hiredis_node_event(redlock_hiredis *c, redlock__hiredis_conn *cn, int fd, short revents)
{
    if (!cn->ctx || cn->fd != fd) return; /* dropped meanwhile */
    if (cn->life.state == REDLOCK__CONN_CONNECTING) {
        redlock__hiredis_connect_done(c, cn);
        redlock__hiredis_flush(c, cn, -1);
        return;
    }
    if ((revents & POLLOUT) || (cn->ssl && cn->need_flush && (revents & POLLIN)))
        redlock__hiredis_flush(c, cn, -1);
    if (cn->ctx && (revents & (POLLIN | POLLHUP | POLLERR))) redlock__hiredis_node_read(c, cn);
}

/* Deadlines, whether or not bytes arrived (a trickle must not hold a
   node): a connect or TLS handshake past connect_timeout_ms, a reply
   owed for longer than command_timeout_ms. */
static inline void redlock__hiredis_expire(redlock_hiredis *c)
{
    const int64_t cmd_us = (int64_t)c->_command_timeout_ms * 1000;
    int64_t now = redlock__hiredis_now_us();
    int i, k;
    for (i = 0; i < c->_n; i++)
        for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
            redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
            int hs = redlock__hiredis_tls_handshaking(cn->ssl), late;
            if (!cn->ctx) continue;
            late = redlock__conn_late(&cn->life, &cn->q, hs, hs, cn->connect_deadline, cmd_us, now);
            if (late == REDLOCK__CONN_LATE_CONNECT)
                redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_CONNECT, "connect timeout");
            else if (late == REDLOCK__CONN_LATE_HANDSHAKE)
                redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_CONNECT, "TLS handshake: no answer within the connect timeout");
            else if (late == REDLOCK__CONN_LATE_REPLY)
                redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_NODE_TIMEOUT, "command timeout");
        }
}

/* The +switch-master watches (redlock_hiredis_common.h): each Sentinel
   group's, once its primary was named, opened when due, closed when its
   SUBSCRIBE went unconfirmed too long. */
static inline void redlock__hiredis_watches_tend(redlock_hiredis *c)
{
    int64_t now = redlock__hiredis_now_us();
    int i;
    for (i = 0; i < c->_n; i++) {
        redlock__hiredis_sentinels *g = c->_conn[i].ep.sentinels;
        if (!g || !g->named) continue;
        redlock__hiredis_watch_late(g, now);
        redlock__hiredis_watch_open(g, now, c->_connect_timeout_ms);
    }
}

/* Node i's watch is ready (revents): a failover the sentinels announce
   makes the new primary the node's address (the next connection's naming
   it is no second failover), is told to the core, and drops the former
   primary's connection (what it owes fails; its next reply could not be
   confirmed against the old address any more). */
static inline void redlock__hiredis_watch_event(redlock_hiredis *c, int i, short revents)
{
    redlock__hiredis_conn *cn = &c->_conn[i];
    char host[REDLOCK_SENTINEL_MAX_HOST + 1], why[128];
    redlock__hiredis_nopipe np;
    int64_t ago = -1;
    int port = 0, rc;
    redlock__hiredis_nopipe_begin(&np);
    rc = redlock__hiredis_watch_ready(&cn->ep, (revents & (POLLIN | POLLHUP | POLLERR)) != 0, redlock__hiredis_now_us(),
                                      host, sizeof host, &port);
    redlock__hiredis_nopipe_end(&np);
    if (rc != REDLOCK__HIREDIS_WATCH_SWITCHED || redlock__hiredis_sentinels_named(&cn->ep, host, port, 0, &ago) != 0 ||
        ago < 0)
        return;
    snprintf(why, sizeof why, "the sentinels switched '%.32s' to %.40s:%d", cn->ep.sentinels->group, host, port);
    if (cn->ctx) redlock__hiredis_drop_conn(c, cn, REDLOCK_ERR_TRANSPORT, why);
    else redlock__conn_set(&cn->life, REDLOCK_ERR_TRANSPORT, why);
    redlock__hiredis_failed_over(c, i, 0);
}

/* One turn: flush, wait for replies, writability, connects, the core's
   deadline or a wake-up (at most max_wait_us; < 0: no cap), deliver, drop
   nodes that owe a reply for longer than command_timeout_ms (or connect
   for longer than connect_timeout_ms, or buffer too much), fire the timer.
   Nothing in here blocks past the nearest of those deadlines. With the
   thread, called with the mutex held; it is released while waiting. */
static inline void redlock__hiredis_turn(redlock_hiredis *c, int64_t max_wait_us)
{
    struct pollfd *pfd = c->_pfd;
    int *who = c->_who;
    int np, i, k, rc, ms;
    int64_t now, until, wait_us;

    if (c->_threaded) /* keep connections up for the renewals (a cluster's: those used) */
        for (i = 0; i < c->_n; i++)
            for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
                redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
                if (!cn->ctx && cn->ep.host) redlock__hiredis_ensure_conn(c, cn);
            }
    redlock__hiredis_subs_tend(&c->_subs);
    redlock__hiredis_watches_tend(c);
    redlock__hiredis_flush(c, NULL, -1);

    now = redlock__hiredis_now_us();
    until = c->_deadline;
    if (max_wait_us >= 0 && max_wait_us < until - now) until = now + max_wait_us;
    np = redlock__hiredis_poll_set(c, pfd, who, &until);
    wait_us = until - now;
    if (wait_us < 0) wait_us = 0;
    if (wait_us > 1000000000) wait_us = 1000000000;
    ms = (int)((wait_us + 999) / 1000);
    if (c->_threaded) pthread_mutex_unlock(&c->_mu);
    rc = poll(pfd, (nfds_t)np, ms);
    if (c->_threaded) pthread_mutex_lock(&c->_mu);
    for (i = 0; rc > 0 && i < np; i++) {
        if (!pfd[i].revents) continue;
        if (who[i] == -1) {
            char b[64];
            while (read(c->_wake[0], b, sizeof b) > 0) {}
        } else if (who[i] < -1) {
            redlock__hiredis_sub_event(c, -2 - who[i], pfd[i].fd, pfd[i].revents);
        } else if (who[i] >= REDLOCK__HIREDIS_WATCH_WHO) {
            redlock__hiredis_watch_event(c, who[i] - REDLOCK__HIREDIS_WATCH_WHO, pfd[i].revents);
        } else {
            redlock__hiredis_node_event(c, redlock__hiredis_conn_at(c, who[i] % REDLOCK_MAX_NODES, who[i] / REDLOCK_MAX_NODES),
                                        pfd[i].fd, pfd[i].revents);
        }
    }
    redlock__hiredis_expire(c);
    if (redlock__hiredis_now_us() >= c->_deadline) redlock_on_timer(&c->_client);
}

static inline void *redlock__hiredis_thread_main(void *arg)
{
    redlock_hiredis *c = (redlock_hiredis *)arg;
    pthread_mutex_lock(&c->_mu);
    while (!c->_stopping) redlock__hiredis_turn(c, 1000000);
    pthread_mutex_unlock(&c->_mu);
    return NULL;
}

/* After an operation ended: what the core sent last (a rollback, a
   release) is written out, also to a node still connecting (within its
   connect timeout). If a slower node still owes an answer that the core
   follows with another command (redlock_lock_followup: the no-script
   release is GET, then DEL), replies are read too, so that step is not
   left undone when the blocking call returns; the other stragglers'
   replies are read by the next call. At most one node timeout. */
static inline void redlock__hiredis_linger(redlock_hiredis *c, int followup)
{
    int64_t until = redlock__hiredis_now_us() + c->_linger_us;
    for (;;) {
        int i, k, waiting = 0;
        int64_t left;
        redlock__hiredis_flush(c, NULL, -1);
        for (i = 0; i < c->_n; i++)
            for (k = 0; k < redlock__hiredis_nconn(c, i); k++) {
                const redlock__hiredis_conn *cn = redlock__hiredis_conn_at(c, i, k);
                if (cn->ctx) waiting += followup ? cn->q.count : cn->unsent;
            }
        left = until - redlock__hiredis_now_us();
        if (!waiting || left <= 0) break;
        redlock__hiredis_turn(c, left);
    }
}

/* Runs the loop until the awaited operation has finished (w->done). */
static inline void redlock__hiredis_wait(redlock_hiredis *c, redlock__hiredis_waiter *w)
{
    if (c->_threaded) {
        redlock__hiredis_wake(c);
        while (!w->done && !c->_stopping) pthread_cond_wait(&c->_cv, &c->_mu);
        return;
    }
    while (!w->done) {
        int i, k, inflight = 0;
        for (i = 0; i < c->_n; i++)
            for (k = 0; k < redlock__hiredis_nconn(c, i); k++) inflight += redlock__hiredis_conn_at(c, i, k)->q.count;
        if (c->_deadline == REDLOCK_NO_DEADLINE && !inflight &&
            redlock_next_deadline(&c->_client) == REDLOCK_NO_DEADLINE) {
            /* nothing can move any more: should not happen */
            w->result.status = REDLOCK_ERR_INVALID;
            w->done = 1;
            break;
        }
        redlock__hiredis_turn(c, -1);
    }
}

/* ---- public API ---- */

static inline void redlock__hiredis_free_conn(redlock__hiredis_conn *cn)
{
    if (cn->ctx) redisFree(cn->ctx);
    cn->ctx = NULL;
    redlock__hiredis_endpoint_free(&cn->ep);
    redlock__conn_ring_free(&cn->q);
    redlock__hiredis_copies_free(&cn->sent);
}

/* Node i's connections and endpoints (a cluster's links too), closed and freed. */
static inline void redlock__hiredis_free_node(redlock_hiredis *c, int i)
{
    int k;
    if (c->_links[i])
        for (k = 0; k < REDLOCK__HIREDIS_LINKS; k++) redlock__hiredis_free_conn(&c->_links[i][k]);
    free(c->_links[i]);
    c->_links[i] = NULL;
    redlock__hiredis_free_conn(&c->_conn[i]);
}

REDLOCK_HIREDIS_API int redlock_hiredis_init(redlock_hiredis *c, const redlock_hiredis_config *o)
{
    redlock_config cfg;
    redlock_callbacks cb;
    int i, rc, npoll;
    if (!c || !o) return REDLOCK_ERR_INVALID;
    memset(c, 0, sizeof *c);
    if ((rc = redlock__hiredis_check_nodes(o->node, o->node_count)) != 0) return rc;
    c->_n = o->node_count;
    if ((rc = redlock__hiredis_timeouts(o, &c->_connect_timeout_ms, &c->_command_timeout_ms, &c->_reconnect_delay_ms)) != 0)
        return rc;
    redlock__hiredis_subs_init(&c->_subs, c->_n, c->_connect_timeout_ms, c->_command_timeout_ms,
                               c->_reconnect_delay_ms, o->notify_idle_ms ? o->notify_idle_ms : 1000,
                               REDLOCK_HIREDIS_MAX_BUFFERED);
    c->_subs.refresh = redlock__hiredis_subs_refresh;
    c->_subs.hook_arg = c;
    c->_on_event = o->on_event;
    c->_user = o->user;
    c->_deadline = REDLOCK_NO_DEADLINE;
    c->_linger_us = (o->core.node_timeout_ms > 0 ? o->core.node_timeout_ms : 50) * 1000;
    c->_wake[0] = c->_wake[1] = -1;
    for (i = 0, npoll = 1; i < c->_n; i++) {
        redlock__hiredis_conn *cn = &c->_conn[i];
        int k;
        cn->fd = -1;
        cn->node = i;
        cn->link = -1;
        cn->life.io = &c->_io[i];
        c->_subs.ep[i] = &cn->ep;
        if ((rc = redlock__hiredis_endpoint_init(&cn->ep, &o->node[i], o)) != 0 ||
            (rc = redlock__hiredis_subs_node(&c->_subs, i, &cn->ep)) != 0)
            goto fail;
        npoll += 2 + (cn->ep.sentinels != NULL); /* its connection, its subscriber; a group's watch */
        if (!cn->ep.cluster) continue;
        npoll += REDLOCK_CLUSTER_MAX_MASTERS; /* a subscriber per master */
        if (!(c->_links[i] = (redlock__hiredis_conn *)calloc(REDLOCK__HIREDIS_LINKS, sizeof *c->_links[i]))) {
            rc = REDLOCK_ERR_NOMEM;
            goto fail;
        }
        for (k = 0; k < REDLOCK__HIREDIS_LINKS; k++) {
            c->_links[i][k].fd = -1;
            c->_links[i][k].node = i;
            c->_links[i][k].link = k;
            c->_links[i][k].life.io = &c->_io[i]; /* a cluster node's links count as the node */
        }
        npoll += REDLOCK__HIREDIS_LINKS;
    }
    c->_pfd = (struct pollfd *)malloc((size_t)npoll * sizeof *c->_pfd);
    c->_who = (int *)malloc((size_t)npoll * sizeof *c->_who);
    if (!c->_pfd || !c->_who) {
        rc = REDLOCK_ERR_NOMEM;
        goto fail;
    }
    cfg = o->core;
    cfg.node_count = c->_n;
    memset(&cb, 0, sizeof cb);
    cb.send = redlock__hiredis_send;
    cb.set_timer = redlock__hiredis_set_timer;
    cb.now_us = redlock__hiredis_clock; /* the loop's clock: deadlines compare with it */
    cb.on_event = redlock__hiredis_on_event;
    if (!o->notify_off) cb.listen = redlock__hiredis_listen;
    rc = redlock_client_init(&c->_client, &cfg, &cb, c);
    if (rc != REDLOCK_OK) goto fail;
    for (i = 0; i < c->_n; i++) { /* a cluster: its map asked of a seed */
        if (c->_links[i]) redlock__hiredis_cluster_refresh(c, i);
        else redlock__hiredis_ensure(c, i);
    }
    c->_magic = REDLOCK__HIREDIS_MAGIC;
    if (o->watchdog_thread) {
        int fl;
        if (pipe(c->_wake) != 0) { rc = REDLOCK_ERR_NOMEM; goto fail_core; }
        for (i = 0; i < 2; i++) {
            fl = fcntl(c->_wake[i], F_GETFL);
            fcntl(c->_wake[i], F_SETFL, fl | O_NONBLOCK);
            fcntl(c->_wake[i], F_SETFD, FD_CLOEXEC);
        }
        {   /* error-checking: a blocking call from inside a callback is told BUSY */
            pthread_mutexattr_t ma;
            pthread_mutexattr_init(&ma);
            pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
            pthread_mutex_init(&c->_mu, &ma);
            pthread_mutexattr_destroy(&ma);
        }
        pthread_cond_init(&c->_cv, NULL);
        c->_threaded = 1;
        pthread_mutex_lock(&c->_mu);
        if (pthread_create(&c->_thread, NULL, redlock__hiredis_thread_main, c) != 0) {
            c->_threaded = 0;
            pthread_mutex_unlock(&c->_mu);
            pthread_mutex_destroy(&c->_mu);
            pthread_cond_destroy(&c->_cv);
            rc = REDLOCK_ERR_NOMEM;
            goto fail_core;
        }
        pthread_mutex_unlock(&c->_mu);
    }
    return REDLOCK_OK;
fail_core:
    redlock_client_deinit(&c->_client);
fail:
    redlock__hiredis_subs_free(&c->_subs);
    for (i = 0; i < c->_n; i++) redlock__hiredis_free_node(c, i);
    free(c->_pfd);
    free(c->_who);
    if (c->_wake[0] >= 0) { close(c->_wake[0]); close(c->_wake[1]); }
    memset(c, 0, sizeof *c);
    return rc;
}

REDLOCK_HIREDIS_API void redlock_hiredis_deinit(redlock_hiredis *c)
{
    int i;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC) return;
    if (c->_threaded) {
        pthread_mutex_lock(&c->_mu);
        c->_stopping = 1;
        pthread_cond_broadcast(&c->_cv);
        pthread_mutex_unlock(&c->_mu);
        {
            char b = 1;
            ssize_t w = write(c->_wake[1], &b, 1);
            (void)w;
        }
        pthread_join(c->_thread, NULL);
        c->_threaded = 0;
        pthread_mutex_destroy(&c->_mu);
        pthread_cond_destroy(&c->_cv);
        close(c->_wake[0]);
        close(c->_wake[1]);
    }
    redlock_client_deinit(&c->_client);
    for (i = 0; i < c->_n; i++) redlock__hiredis_free_node(c, i);
    free(c->_pfd);
    free(c->_who);
    redlock__hiredis_subs_free(&c->_subs);
    memset(c, 0, sizeof *c);
}

/* Takes the client's mutex (with the watchdog thread); 1 if this call
   took it, 0 if there is none or this thread holds it already (a
   callback: the mutex is error-checking), for leave(). */
/* (const: the getters take a const handle; the mutex is not what they read) */
static inline int redlock__hiredis_enter(const redlock_hiredis *c)
{
    return c->_threaded && pthread_mutex_lock((pthread_mutex_t *)&c->_mu) == 0;
}

static inline void redlock__hiredis_leave(const redlock_hiredis *c, int entered)
{
    if (entered) pthread_mutex_unlock((pthread_mutex_t *)&c->_mu);
}

/* enter() for the blocking calls: BUSY instead of waiting on itself when
   called from inside a callback (the mutex, error-checking, is already
   this thread's; without the thread, the callback depth says so). */
static inline int redlock__hiredis_enter_blocking(redlock_hiredis *c)
{
    if (!c->_threaded) return c->_depth > 0 ? REDLOCK_ERR_BUSY : 0;
    return pthread_mutex_lock(&c->_mu) == EDEADLK ? REDLOCK_ERR_BUSY : 0;
}

REDLOCK_HIREDIS_API int redlock_hiredis_lock_init(redlock_hiredis *c, redlock_hiredis_lock *lk,
                                                  const redlock_lock_opts *opts)
{
    redlock_lock_opts o;
    redlock__hiredis_waiter *w;
    int rc, entered;
    if (!lk || !c || !opts || c->_magic != REDLOCK__HIREDIS_MAGIC) return REDLOCK_ERR_INVALID;
    for (rc = 0; rc < c->_n; rc++) /* a cluster: a fenced lock's counter must share its key's slot */
        if (c->_links[rc] && !redlock_cluster_lock_fits(opts)) return REDLOCK_ERR_INVALID;
    o = *opts;
    o.on_result = redlock__hiredis_on_result;
    o.user = lk;
    entered = redlock__hiredis_enter(c);
    /* lk is not read nor cleared first (it may be uninitialised memory): a
       handle still initialised on this client is the core's to
       deinitialise (its key block freed, its table entry removed);
       cleared, it would be filed a second time */
    rc = redlock_lock_init(&lk->lock, &c->_client, &o);
    if (rc != REDLOCK_OK && rc != REDLOCK_ERR_NOMEM) { /* refused: the call did nothing */
        redlock__hiredis_leave(c, entered);
        return rc;
    }
    for (w = c->_waiters; w; w = w->next)
        if (w->lock == lk && !w->done) { /* a blocking call on the old lock: its result cannot come now */
            w->result.op = (redlock_op)w->op;
            w->result.status = REDLOCK_ERR_DETACHED;
            w->result.user = lk->_user;
            w->done = 1;
            if (c->_threaded) pthread_cond_broadcast(&c->_cv);
        }
    lk->_client = rc == REDLOCK_OK ? c : NULL;
    lk->_waiter = NULL;
    lk->_fn = opts->on_result;
    lk->_user = opts->user;
    memset(&lk->_last, 0, sizeof lk->_last);
    redlock__hiredis_leave(c, entered);
    return rc;
}

REDLOCK_HIREDIS_API void redlock_hiredis_lock_deinit(redlock_hiredis_lock *lk)
{
    redlock_hiredis *c;
    int entered;
    if (!lk || !lk->_client) return;
    c = lk->_client;
    entered = redlock__hiredis_enter(c);
    redlock_lock_deinit(&lk->lock);
    if (lk->_waiter) {
        lk->_waiter->result.op = (redlock_op)lk->_waiter->op;
        lk->_waiter->result.status = REDLOCK_ERR_DETACHED;
        lk->_waiter->result.user = lk->_user;
        lk->_waiter->done = 1;
        lk->_waiter = NULL;
        if (c->_threaded) pthread_cond_broadcast(&c->_cv);
    }
    lk->_client = NULL;
    redlock__hiredis_leave(c, entered);
}

/* Takes a blocking call's waiter off the client's list. */
static inline void redlock__hiredis_unwait(redlock_hiredis *c, redlock__hiredis_waiter *w)
{
    redlock__hiredis_waiter **at = &c->_waiters;
    while (*at && *at != w) at = &(*at)->next;
    if (*at) *at = w->next;
}

static inline int redlock__hiredis_run(redlock_hiredis_lock *lk, int op, int64_t ttl_ms)
{
    redlock_hiredis *c;
    redlock__hiredis_waiter w;
    int rc;
    if (!lk) return REDLOCK_ERR_INVALID;
    c = lk->_client;
    if (!c) return REDLOCK_ERR_DETACHED;
    if (redlock__hiredis_enter_blocking(c) != 0) return REDLOCK_ERR_BUSY;
    if (lk->_client != c) { /* deinitialised meanwhile */
        redlock__hiredis_leave(c, c->_threaded);
        return REDLOCK_ERR_DETACHED;
    }
    if (lk->_waiter) {
        redlock__hiredis_leave(c, c->_threaded);
        return REDLOCK_ERR_BUSY;
    }
    memset(&w, 0, sizeof w);
    w.op = op;
    w.lock = lk;
    w.next = c->_waiters;
    c->_waiters = &w;
    lk->_waiter = &w;
    if (op == REDLOCK_OP_ACQUIRE) rc = redlock_acquire(&lk->lock);
    else if (op == REDLOCK_OP_RELEASE) rc = redlock_release(&lk->lock);
    else if (op == REDLOCK_OP_UPGRADE) rc = redlock_upgrade(&lk->lock);
    else if (op == REDLOCK_OP_DOWNGRADE) rc = redlock_downgrade(&lk->lock);
    else rc = redlock_extend(&lk->lock, ttl_ms);
    if (rc != REDLOCK_OK) {
        if (lk->_waiter == &w) lk->_waiter = NULL;
        redlock__hiredis_unwait(c, &w);
        redlock__hiredis_leave(c, c->_threaded);
        return rc;
    }
    redlock__hiredis_wait(c, &w);
    /* from here on the lock may be gone (deinitialised in a callback or by
       another thread): only w and the client are used */
    if (!w.done) { /* client stopping: the lock is still ours to unhook */
        if (lk->_waiter == &w) lk->_waiter = NULL;
        w.result.op = (redlock_op)op;
        w.result.status = REDLOCK_ERR_DETACHED;
    }
    if (!c->_threaded) redlock__hiredis_linger(c, w.followup);
    if (w.result.status != REDLOCK_ERR_DETACHED) lk->_last = w.result; /* else the lock may be gone */
    rc = w.result.status;
    redlock__hiredis_unwait(c, &w);
    redlock__hiredis_leave(c, c->_threaded);
    return rc;
}

REDLOCK_HIREDIS_API int redlock_hiredis_acquire(redlock_hiredis_lock *lk)
{
    return redlock__hiredis_run(lk, REDLOCK_OP_ACQUIRE, 0);
}

REDLOCK_HIREDIS_API int redlock_hiredis_release(redlock_hiredis_lock *lk)
{
    return redlock__hiredis_run(lk, REDLOCK_OP_RELEASE, 0);
}

REDLOCK_HIREDIS_API int redlock_hiredis_extend(redlock_hiredis_lock *lk, int64_t ttl_ms)
{
    return redlock__hiredis_run(lk, REDLOCK_OP_EXTEND, ttl_ms);
}

REDLOCK_HIREDIS_API int redlock_hiredis_upgrade(redlock_hiredis_lock *lk)
{
    return redlock__hiredis_run(lk, REDLOCK_OP_UPGRADE, 0);
}

REDLOCK_HIREDIS_API int redlock_hiredis_downgrade(redlock_hiredis_lock *lk)
{
    return redlock__hiredis_run(lk, REDLOCK_OP_DOWNGRADE, 0);
}

REDLOCK_HIREDIS_API const redlock_result *redlock_hiredis_last_result(const redlock_hiredis_lock *lk)
{
    /* the watchdog thread may write _last (a loss) at any time: the caller
       reads a copy made under the mutex, which only this function writes */
    redlock_hiredis_lock *l = (redlock_hiredis_lock *)lk;
    redlock_hiredis *c = lk->_client;
    int entered = c ? redlock__hiredis_enter(c) : 0;
    l->_shown = lk->_last;
    if (c) redlock__hiredis_leave(c, entered);
    return &lk->_shown;
}

REDLOCK_HIREDIS_API redlock_client *redlock_hiredis_client(redlock_hiredis *c) { return &c->_client; }

REDLOCK_HIREDIS_API int redlock_hiredis_run(redlock_hiredis *c, int64_t timeout_ms)
{
    int64_t until;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC || timeout_ms < 0) return REDLOCK_ERR_INVALID;
    /* with the thread, _depth is the thread's: only the thread itself (in
       a callback) may read it, and it is the only caller that must hear BUSY */
    if (c->_threaded) return pthread_equal(pthread_self(), c->_thread) ? REDLOCK_ERR_BUSY : REDLOCK_OK;
    if (c->_depth > 0) return REDLOCK_ERR_BUSY;
    until = redlock__hiredis_now_us() + timeout_ms * 1000;
    do {
        int64_t left = until - redlock__hiredis_now_us();
        redlock__hiredis_turn(c, left > 0 ? left : 0);
    } while (redlock__hiredis_now_us() < until);
    return REDLOCK_OK;
}

REDLOCK_HIREDIS_API redlock_state redlock_hiredis_lock_state(redlock_hiredis_lock *lk)
{
    redlock_state s;
    int entered;
    if (!lk || !lk->_client) return REDLOCK_STATE_IDLE;
    entered = redlock__hiredis_enter(lk->_client);
    s = redlock_lock_state(&lk->lock);
    redlock__hiredis_leave(lk->_client, entered);
    return s;
}

REDLOCK_HIREDIS_API int64_t redlock_hiredis_lock_valid_until(redlock_hiredis_lock *lk)
{
    int64_t v;
    int entered;
    if (!lk || !lk->_client) return 0;
    entered = redlock__hiredis_enter(lk->_client);
    v = redlock_lock_valid_until(&lk->lock);
    redlock__hiredis_leave(lk->_client, entered);
    return v;
}

REDLOCK_HIREDIS_API int redlock_hiredis_node_status(const redlock_hiredis *c, int i, char *errbuf, size_t errsz)
{
    int s, entered;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC || i < 0 || i >= c->_n) return REDLOCK_ERR_INVALID;
    entered = redlock__hiredis_enter(c);
    s = c->_conn[i].life.status;
    redlock__hiredis_status_text(&c->_conn[i].life, errbuf, errsz);
    redlock__hiredis_leave(c, entered);
    return s;
}

REDLOCK_HIREDIS_API int redlock_hiredis_notify_status(const redlock_hiredis *c, int i, char *errbuf, size_t errsz)
{
    int s, entered;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC || i < 0 || i >= c->_n) return REDLOCK_ERR_INVALID;
    entered = redlock__hiredis_enter(c);
    s = redlock__hiredis_subs_shunned(&c->_subs, i)->life.shunned;
    if (errbuf && errsz) redlock__hiredis_set_text(errbuf, errsz, s ? redlock__hiredis_subs_shunned(&c->_subs, i)->life.refusal : "");
    redlock__hiredis_leave(c, entered);
    return s;
}

REDLOCK_HIREDIS_API int redlock_hiredis_node_policy(const redlock_hiredis *c, int i, char *buf, size_t size)
{
    int e, entered;
    if (buf && size) buf[0] = 0;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC || i < 0 || i >= c->_n) return REDLOCK_ERR_INVALID;
    entered = redlock__hiredis_enter(c);
    if (buf && size) redlock__hiredis_set_text(buf, size, c->_conn[i].ep.health.policy);
    if (buf && size && c->_links[i]) { /* a cluster: its worst master's */
        int k = redlock__hiredis_cluster_worst(c->_conn[i].ep.cluster);
        if (k >= 0) redlock__hiredis_set_text(buf, size, c->_links[i][k].ep.health.policy);
    }
    e = (int)redlock_node_evicts(&c->_client, i);
    redlock__hiredis_leave(c, entered);
    return e;
}

REDLOCK_HIREDIS_API int redlock_hiredis_stats(const redlock_hiredis *c, redlock_adapter_stats *out)
{
    int entered;
    if (!c || !out || c->_magic != REDLOCK__HIREDIS_MAGIC) return REDLOCK_ERR_INVALID;
    entered = redlock__hiredis_enter(c);
    redlock__conn_stats(out, c->_n, c->_io);
    redlock_client_stats(&c->_client, &out->core);
    redlock__hiredis_leave(c, entered);
    return REDLOCK_OK;
}

REDLOCK_HIREDIS_API void redlock_hiredis_stats_reset(redlock_hiredis *c)
{
    int entered;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC) return;
    entered = redlock__hiredis_enter(c);
    redlock_client_stats_reset(&c->_client);
    memset(c->_io, 0, sizeof c->_io);
    redlock__hiredis_leave(c, entered);
}

REDLOCK_HIREDIS_API int redlock_hiredis_node_connected(const redlock_hiredis *c, int i)
{
    int r, entered;
    if (!c || c->_magic != REDLOCK__HIREDIS_MAGIC || i < 0 || i >= c->_n) return 0;
    entered = redlock__hiredis_enter(c);
    r = c->_conn[i].ctx != NULL && !redlock__hiredis_tls_handshaking(c->_conn[i].ssl);
    if (c->_links[i]) { /* a cluster: a link to one of its servers */
        int k;
        for (k = 0; k < c->_conn[i].ep.cluster->links && !r; k++)
            r = c->_links[i][k].ctx != NULL && c->_links[i][k].life.state == REDLOCK__CONN_UP;
    }
    redlock__hiredis_leave(c, entered);
    return r;
}

#endif /* REDLOCK_HIREDIS_IMPLEMENTATION */
