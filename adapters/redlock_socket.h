/* adapters/redlock_socket.h - redlock.h over raw POSIX sockets, no hiredis.

   Do this:
       #define REDLOCK_SOCKET_IMPLEMENTATION
   before you include this file in *one* C or C++ file (together with
   REDLOCK_IMPLEMENTATION in that file or another one). Include it before
   any system header, or build with -D_POSIX_C_SOURCE=200809L: the
   implementation needs getaddrinfo(), poll() and clock_gettime().

       #define REDLOCK_IMPLEMENTATION
       #define REDLOCK_SOCKET_IMPLEMENTATION
       #include "adapters/redlock_socket.h"     (includes ../redlock.h)

   CONTENTS
       1. RESP2 encoder and incremental parser: redlock_resp.h, included
       2. Connections: TCP (names via getaddrinfo), TLS over TCP (OpenSSL,
          optional) or Unix sockets, one per node (per master of a Redis
          Cluster node), non-blocking, AUTH
          (password or ACL user + password), SELECT; node lists
          ("host:port,redis://...", $REDLOCK_NODES) parsed by
          redlock_nodes.h, included; a node's port asked directly
          (redlock_socket_probe(): plain text or TLS? why unreachable?)
       3. Blocking API driven by poll(): acquire / release / extend / run;
          optionally a watchdog thread that renews between the calls
       4. Foreign event loop API: fd, interest, on_readable, on_writable,
          next deadline, on_timer (plus optional watch / timer hooks); or,
          for a poll() loop of your own, pollfds / poll_ms / dispatch
       5. Compile-time options and statuses

   1. RESP2
   --------
   The codec lives in redlock_resp.h (included here; its implementation
   comes with REDLOCK_SOCKET_IMPLEMENTATION): redlock_resp_encode() and
   the bounded incremental parser redlock_resp_parser, usable alone.

   2. CONNECTIONS
   --------------
   Nothing connects at init. The first command for a node opens its
   connection (non-blocking connect, then AUTH, SELECT, INFO and CONFIG
   GET appendfsync pipelined before the command). Before the replies
   behind them are handed on, INFO's maxmemory_policy tells the core what
   the node may evict (redlock.h section 4, Eviction;
   redlock_socket_node_policy()), and its run_id, uptime_in_seconds and
   aof_enabled with CONFIG's appendfsync tell it whether the server
   restarted and keeps keys across restarts (section 4, Restarts); an
   INFO refused (an ACL) or unreadable leaves the node as it was (at
   first: evicts nothing, never restarted), a CONFIG refused counts as
   keys not kept, and cfg.info_off = 1 (or raw mode) leaves both out.
   Host names are resolved with getaddrinfo(), which blocks: use addresses
   where that matters. A node's connection fails with:
       REDLOCK_ERR_CONNECT       refused, unreachable, no connection within
                                 connect_timeout_ms (nor an answer to a TLS
                                 handshake)
       REDLOCK_ERR_AUTH          AUTH refused, or a NOAUTH reply
       REDLOCK_ERR_SELECT        SELECT refused (no such database)
       REDLOCK_ERR_NODE_TIMEOUT  a command unanswered for command_timeout_ms
       REDLOCK_ERR_TRANSPORT     reset, closed (also during a TLS
                                 handshake), send/recv failed, a TLS record
                                 broken once TLS worked, queue full
       REDLOCK_ERR_PROTOCOL      malformed, oversized, RESP3, truncated or
                                 unsolicited reply
       REDLOCK_ERR_NOMEM         no memory for a command or a reply
       REDLOCK_ERR_TLS           TLS refused: the certificate (refused
                                 here), an alert from the server (no
                                 client certificate ...), an answer to the
                                 handshake that is not TLS
   When a connection fails, every command in flight on it gets
   redlock_on_error() with that status; the next command reconnects.
   TLS, AUTH and SELECT are the refusals no retry cures: an acquire ends
   at once when they leave too few nodes (redlock.h section 4). redlock_socket_node_status() keeps
   the last one until a new connection has answered (AUTH, SELECT or a
   command): then it is 0 again. Passwords and tokens are never logged
   (this file logs nothing) and the output buffer is wiped once written.
   A connection the node closed while idle (a restart) is noticed before
   the next command is written to it: the command goes to a new connection
   and its vote is not lost. Bytes an idle connection got unasked are
   noticed there too: that command fails with REDLOCK_ERR_PROTOCOL (they
   could have passed for its reply) and the next one reconnects. A SELECT
   that is refused (a db that does not exist) is only known after the
   command pipelined behind it ran in db 0: check the db number.

   TLS. Build with REDLOCK_SOCKET_TLS defined (where the implementation
   is) and link -lssl -lcrypto (OpenSSL 1.1.1 or 3.x, Debian's libssl-dev);
   without it the default build has no dependency, and init refuses a node
   that asks for TLS (cfg.tls, rediss://) with REDLOCK_ERR_NO_TLS. cfg.tls
   applies to every node;
   a node's own tls (enable set, e.g. from a rediss:// URL) overrides it,
   its NULL fields taken from cfg.tls:
       cfg.tls.enable = 1;
       cfg.tls.ca = "/etc/redis/ca.crt";      // file or hashed directory; NULL: system store
       cfg.tls.cert = "client.crt"; cfg.tls.key = "client.key";  // if the server asks
       cfg.tls.server_name = "redis.internal";  // NULL: the node's host
   The certificate is verified by default: its chain against the CA, its
   name against server_name (an IP address is checked as an address and
   not sent as SNI). cfg.tls.insecure_skip_verify = 1 turns both off, for
   tests only. The handshake runs in the same non-blocking loop, within
   connect_timeout_ms of its own once TCP is up; during it the foreign-loop interest is what TLS
   waits for (read or write), and a TLS read or write that needs the other
   direction shows in the interest too. A refusal is REDLOCK_ERR_TLS (see
   the list above, and adapters/redlock_tls.h), and
   redlock_socket_node_status()'s text says why ("TLS handshake:
   certificate refused: hostname mismatch", "TLS read: tlsv13 alert
   certificate required"); a TLS connection that failed otherwise has the
   words too ("TLS handshake: no answer within the connect timeout" with
   CONNECT: a paused server, or a plain-text port, which answers a
   handshake with nothing; a TLS port resets plain text without a word,
   TRANSPORT: redlock_socket_probe() asks the port in the other protocol
   to tell, for a message). A CA, certificate or key that cannot be
   loaded fails redlock_socket_init() with REDLOCK_ERR_TLS.
   TLS 1.2 at least; OpenSSL reads and writes through send()/recv() with
   MSG_NOSIGNAL, so no SIGPIPE.

   REDIS CLUSTER. A node of kind REDLOCK_NODE_CLUSTER (redis-cluster://
   m1:port+m2:port..., its host and seed[] the seeds) is ONE node of the
   core's quorum; inside it each command goes to the master that serves
   its key's slot (adapters/redlock_cluster.h does the routing):
     * one command connection per master used, opened when first needed
       (AUTH, INFO, CONFIG GET appendfsync as any node's; no SELECT: a
       cluster has db 0 only, init refuses a db, a Unix socket or
       cfg.core.wait_replicas (WAIT names no key: no master to go to) for
       it with REDLOCK_ERR_INVALID); at most REDLOCK_SOCKET_CLUSTER_CONNS
       (16) per cluster node: a command for yet another master reuses a
       connection that owes nothing, or fails (CONNECT);
     * the slot map is asked with CLUSTER SLOTS of a master it knows, then
       of the seeds, blocking (as getaddrinfo is), within
       connect_timeout_ms; again when a MOVED, CLUSTERDOWN or a lost master
       made it stale, at most every REDLOCK_CLUSTER_REFRESH_MS (100 ms);
       none answering fails the command (CONNECT, the words in
       redlock_socket_node_status());
     * MOVED: the command is sent again to the master named; ASK: ASKING,
       then the command, there; once: a second redirection, TRYAGAIN and
       CLUSTERDOWN are delivered as the error they are, a failed vote.
       The replies of one node's commands may so come back in another
       order than they were sent: the core matches them by tag;
     * every key of a lock must live in one slot: a fenced lock's key
       needs a {hash tag} (its counter is REDLOCK_FENCE_PREFIX + key), and
       redlock_socket_lock_init() refuses one without (REDLOCK_ERR_INVALID;
       the core's redlock_lock_init() does not know the nodes: a script
       whose keys span slots is then not sent, INVALID with words);
     * restarts (redlock.h section 4): each master's INFO and CONFIG are
       kept per master, not told with redlock_node_set_life() (the
       masters' run_ids in turn would read as restarts); a master whose
       run_id changed (now), or first seen young without appendfsync
       always (since it started), and a slot taken over by a replica of
       its master (CLUSTER SLOTS, or a MOVED to it: a failover, now) are
       told with redlock_node_failed_over(); a planned migration is not;
     * release notifications: sharded pub/sub once a master's INFO says
       Redis 7 or later (redis_version): the core is told
       (redlock_node_set_sharded: releases SPUBLISH on the key's shard
       channel, redlock_shard_channel) and the node has a subscriber per
       master, each SSUBSCRIBing the keys whose slot its master serves,
       all of them open while a lock waits (so at most
       REDLOCK_SOCKET_CLUSTER_CONNS of them: a master beyond is not
       heard, its waiters sleep out their retry delays). A master that no
       longer serves a key's slot says so (MOVED to an SSUBSCRIBE, or the
       server's own sunsubscribe when the slot migrates): the slot map is
       asked again (at most every REDLOCK_CLUSTER_REFRESH_MS, as for
       commands) and the node's subscribers reopen where the keys now
       live; not a refusal (no backoff), the releases meanwhile not
       heard. Until a master's INFO is read, and for good once one says
       an older version (its SPUBLISH would fail), the node's subscriber
       SUBSCRIBEs on the first seed (PUBLISH reaches every node of a
       cluster);
     * raw mode (on_reply) routes a cluster node's commands the same way,
       by their key (INFO, CONFIG: the master of slot 0);
     * over TLS (rediss-cluster://, or cfg.tls): CLUSTER SLOTS and every
       master in TLS with the node's settings, each master's certificate
       checked against its host as the map names it (or server_name);
       under tls-cluster a TLS client's map names the TLS ports. A refusal
       is REDLOCK_ERR_TLS (its words name the master or seed).

   SENTINEL GROUPS (redis-sentinel://s1:port+s2:port.../name, kind
   REDLOCK_NODE_SENTINEL): the sentinels are asked which server is the
   group's primary at each connection (blocking, within
   connect_timeout_ms, from the one that answered last), the connection
   starts with ROLE (a replica is no primary: asked again), and after each
   core command is queued the sentinels are asked again, so its reply
   counts only if the group had not failed over when its round began (a
   holder cannot renew on a former primary that Sentinel has not yet
   turned into a replica); a new primary is a failover (redlock.h section
   4, Restarts: redlock_node_failed_over). Besides (not in raw mode), once
   the primary is named a watch (one more connection per group, to one
   sentinel, AUTH with the sentinels' login, TLS as below) SUBSCRIBEs
   +switch-master, polled with the other connections (by the blocking
   calls, redlock_socket_run, the watchdog thread, or a foreign loop): a
   failover the sentinels announce makes the new primary the node's
   address, is told to the core then and there, and drops the former
   primary's connection (what it owes fails, TRANSPORT, "the sentinels
   switched 'NAME' to host:port"), between commands. A watch that fails
   (closed, refused, a reply it did not ask for, its SUBSCRIBE
   unconfirmed within the command timeout) is opened again a second later
   at the next sentinel.

   SENTINEL GROUPS over TLS (rediss-sentinel://, or cfg.tls): the
   sentinels are asked in TLS (blocking, as in plain text: the same
   helper as CLUSTER SLOTS) and the primary is spoken to in TLS, with the
   node's settings; the name checked is server_name if set, else the host
   of that connection: the sentinel's, and for the data connection the
   primary's as the sentinels name it (not the URL's host). A sentinel
   that refuses us over TLS is REDLOCK_ERR_TLS like any refusal, its words
   naming the sentinel ("sentinel h:p TLS handshake: certificate
   refused: ..."), unless another sentinel answers.
   In the foreign-loop API (4.) the further connections have slots of
   their own, after the subscribers', and so have the further
   subscribers (after those), and a Sentinel group's watch (after all
   others).

   RELEASE NOTIFICATIONS (redlock.h section 10). While a lock of the
   client waits for its next attempt (a retry delay at least the node
   timeout: the core asks then), a subscriber connection per node
   (AUTH and TLS as the node's, no SELECT; a Redis Cluster node's may be
   one per master, sharded: see 2.) SUBSCRIBEs to the key's channel,
   and a release wakes the waiting acquire at once; the blocking calls
   wait on those sockets too. They close cfg.notify_idle_ms (default 1000)
   after the last lock stopped waiting; one that fails is reopened 100 ms
   later, and meanwhile its node's releases are not heard (the waiter
   sleeps out its delay). A node that refuses its subscriber (an ACL that
   denies the channel, as Redis 7's default for new users does; a renamed
   SUBSCRIBE; a refused AUTH) is asked again only after a backoff (1 s,
   doubled at each refusal in a row up to 60 s, kept when the
   subscribers close idle), and redlock_socket_notify_status() says so,
   in the node's words (a sharded cluster node's: its first subscriber
   refused), until a SUBSCRIBE is confirmed again. A reply a
   subscriber did not ask for drops it (PROTOCOL), as a failure.
   cfg.notify_off = 1: no subscribers. In the
   foreign-loop API (4.) node i's subscriber is slot node_count + i (a
   cluster node's further ones: see 4.).

   NODE LISTS. A node is a redlock_node (redlock_nodes.h, included: the
   same type in every adapter), and redlock_parse_nodes() fills cfg.node[]
   from the text users write, the same as the `redlock` tool reads
   (host:port, [ipv6]:port, /path.sock, redis://, rediss://, unix://; NULL:
   $REDLOCK_NODES):
       redlock_socket_config cfg;
       void *mem = NULL;
       char err[256];
       redlock_socket_config_init(&cfg);
       if (redlock_parse_nodes(cfg.node, &cfg.node_count, argc > 1 ? argv[1] : NULL, &mem, err,
                               sizeof err) != 0) {
           fprintf(stderr, "%s\n", err);        // never holds a password
           return 64;
       }
       rc = redlock_socket_init(&s, &cfg);      // copies the strings ...
       redlock_free_nodes(mem);                 // ... so they may go now
   init takes a host that starts with '/' as a Unix socket path, and a
   password "" as none (no AUTH), as the hiredis adapters do. A rediss://
   node without REDLOCK_SOCKET_TLS is refused by init (REDLOCK_ERR_NO_TLS).

   GUARANTEES: the same for every adapter, listed in adapters/README.md
   and tested by tests/shared/integration.h.

   3. BLOCKING API
   ---------------
       redlock_socket s;                      // must not move after init
       redlock_socket_config cfg = {0};
       cfg.node_count = 3;
       cfg.node[0].port = 7000; ...           // host default 127.0.0.1
       redlock_socket_init(&s, &cfg);
       redlock_socket_lock l;
       redlock_lock_opts o = {0}; o.key = "job"; o.ttl_ms = 10000; o.watchdog = 1;
       redlock_socket_lock_init(&s, &l, &o);
       if (redlock_socket_acquire(&l) == REDLOCK_OK) {
           while (work_left) { do_some_work(); redlock_socket_run(&s, 0); }
           redlock_socket_release(&l);
       }
       redlock_socket_lock_deinit(&l);
       redlock_socket_deinit(&s);
   acquire / release / extend block until the core reports the outcome and
   return its status (retries and the wait deadline are the core's). Then
   the commands the core sent last (the undo of a failed attempt, a
   release's) are written out, also to a node still connecting, and if a
   slower node still owes an answer that the core follows with another
   command (redlock_lock_followup: a legacy or no-script chain, a node's
   first script), replies are read for up to one node timeout before the
   call returns, so that step is not left undone (a legacy key has no TTL:
   left behind, it would stay). Other stragglers' replies are read by the
   next call. A node that cannot take the commands (down, stuck in its TLS
   handshake) is waited for only until one node timeout from the call's
   start: an unreachable node costs a blocking call one node timeout, not
   two.

   Without the watchdog thread (the default), the watchdog and everything
   else only run while a redlock_socket_* call runs: call
   redlock_socket_run(&s, ms) often enough (at least every renew
   interval), and where the program would sleep, call
   redlock_socket_run(&s, ms) instead. A program that stops calling in is
   still told the truth: redlock_lock_state(&l.lock) reads the clock
   (LOST once the validity has passed) and redlock_lock_remaining_us()
   says how long it may still act. Lock results, including LOST, reach the
   on_result you gave in the options when the adapter runs again.

   WATCHDOG THREAD. For a job that is one long call (a backup, a
   migration) rather than a loop: build with REDLOCK_SOCKET_THREAD defined
   where the implementation is (link -pthread; without it the adapter
   needs no library), and set cfg.watchdog_thread = 1:
       #define REDLOCK_SOCKET_THREAD
       ...
       cfg.watchdog_thread = 1;               // init starts the thread
       if (redlock_socket_acquire(&l) == REDLOCK_OK) {   // o.watchdog = 1
           do_backup();                       // hours; renewed meanwhile
           redlock_socket_release(&l);        // OK: it was ours throughout
       }
   The thread runs the loop whenever no redlock_socket_* call does: it
   renews locks acquired with redlock_lock_opts.watchdog = 1 for as long
   as they are held, and reports a loss at once through that lock's
   on_result (op REDLOCK_OP_LOST), called on the thread; the lock's
   redlock_socket_last_result() is then that loss, and
   redlock_socket_lock_state() reads LOST. A blocking call runs the loop
   itself, as without the thread, while the thread waits; redlock_socket_run()
   only lets the time pass (the thread runs the loop meanwhile), or returns
   at once for 0. The thread takes no signal (all are blocked on it) and
   is stopped and joined by redlock_socket_deinit(). Init refuses the
   option (INVALID) without REDLOCK_SOCKET_THREAD, in raw mode and with
   the foreign-loop hooks (watch, set_timer): the loop is the thread's, so
   the calls of 4. that drive it do nothing (pollfds returns 0).

   4. FOREIGN EVENT LOOP
   ---------------------
   For each slot i below redlock_socket_fd_count() (the nodes' connections
   0 .. node_count-1, then, unless notify_off, the subscribers of release
   notifications, then REDLOCK_SOCKET_CLUSTER_CONNS - 1 more for each
   cluster node, in the order of the nodes, then, unless notify_off, as
   many more subscribers for each (sharded pub/sub: one per master),
   then one +switch-master watch for each Sentinel group node, in the
   order of the nodes (not in raw mode): fixed at init, at most
   REDLOCK_SOCKET_MAX_FDS; without a cluster or Sentinel node, as
   before), watch
   redlock_socket_fd(i) for redlock_socket_interest(i)
   (REDLOCK_SOCKET_READ / REDLOCK_SOCKET_WRITE) and call
   redlock_socket_on_readable() / on_writable(); call
   redlock_socket_on_timer() once redlock_socket_now_us() reaches
   redlock_socket_next_deadline(). Or let the optional hooks tell you, so
   a loop need not poll the getters:
     * cfg.watch(user, slot, fd, interest) whenever a slot's fd or
       interest changes. fd -1 (interest 0): the node's socket is about to be
       closed; stop watching the fd you had for it. A new socket always
       follows such a -1, even when it gets the same fd number (an epoll
       set forgets a closed fd: register it again). redlock_socket_deinit()
       closes the sockets without calling watch.
     * cfg.set_timer(user, deadline_us) arms a one-shot timer: each call
       replaces the previous deadline (REDLOCK_NO_DEADLINE: none, cancel
       it), and it may repeat an unchanged one. When the timer fires, call
       redlock_socket_on_timer(). Every on_timer call ends with a set_timer
       call giving the deadline that remains, so a timer that fired early
       is armed again; early, late and spurious on_timer calls are harmless.
   Stray readiness calls are harmless too: a connect counts as finished
   only when the socket says so. Use the core API (redlock_acquire(&l.lock)
   ...) for non-blocking calls.

   5. OPTIONS (define before including)
       REDLOCK_SOCKET_IMPLEMENTATION  emit the implementation here
       REDLOCK_SOCKET_STATIC          make every function static
       REDLOCK_SOCKET_TLS             TLS through OpenSSL (link -lssl -lcrypto)
       REDLOCK_SOCKET_THREAD          the watchdog thread, cfg.watchdog_thread
                                      (POSIX threads: link -pthread; see 3.)
       REDLOCK_SOCKET_NO_CORE         transport only: no redlock_client, replies
                                      go to cfg.on_reply / cfg.on_error (for a
                                      raw client or tests); the lock API is absent
       REDLOCK_RESP_MAX_*             the parser's limits (redlock_resp.h)
       REDLOCK_SOCKET_MAX_PENDING     commands in flight per node, default
                                      1,048,576 (the queue grows as needed,
                                      24 bytes a command); beyond it, and
                                      beyond MAX_OUTPUT, a command is refused
                                      with REDLOCK_ERR_QUEUE_FULL (the node
                                      itself is not failed)
       REDLOCK_SOCKET_MAX_OUTPUT      unsent bytes per node, default 64 MiB
       REDLOCK_SOCKET_CLUSTER_CONNS   command connections per cluster node
                                      (one per master), default 16, and as
                                      many subscribers (sharded: one per
                                      master)
       REDLOCK_SOCKET_GETADDRINFO     the resolver, default getaddrinfo and
       REDLOCK_SOCKET_FREEADDRINFO    freeaddrinfo (same signatures; define
                                      both), e.g. a cache or a test double

   STATISTICS. redlock_socket_stats() copies the core's counters
   (redlock.h section 14) and each node's connection counters
   (redlock_node_io_stats, redlock_conn.h: connections opened and lost,
   commands and bytes written, bytes read, the most replies owed at once;
   a cluster node's masters together; subscribers and watches are not
   counted) into a redlock_adapter_stats; redlock_socket_stats_reset()
   zeroes both.

   THREADS. Without the watchdog thread, one redlock_socket and its locks
   are used by one thread at a time. Inside callbacks (on_result,
   on_event, watch, set_timer, on_reply, on_error) the blocking calls and
   redlock_socket_run return REDLOCK_ERR_BUSY and redlock_socket_deinit
   must not be called; non-blocking core calls are fine.
   With the watchdog thread, the redlock_socket_* functions may be called
   from any thread: each takes the adapter's mutex, and a blocking call
   holds it until it returns, so calls on one adapter are served one at a
   time (threads that must block independently take an adapter each).
   Callbacks run on the thread that runs the loop (the watchdog thread
   between calls, the caller's inside a blocking call) with the mutex
   held: there the rules above hold, and the getters
   (redlock_socket_lock_state, _last_result, _node_status ...) work. The
   core's own functions on the client or its locks (redlock_lock_state(
   &l.lock), redlock_acquire ...) need that mutex: call them inside
   callbacks only, and use the adapter's getters elsewhere.
*/
#ifndef REDLOCK_SOCKET_H
#define REDLOCK_SOCKET_H

#if defined(REDLOCK_SOCKET_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */
#if defined(REDLOCK_SOCKET_STATIC) && !defined(REDLOCK_RESP_STATIC)
#define REDLOCK_RESP_STATIC
#endif
#include "redlock_resp.h"
#include "redlock_tls.h"
#include "redlock_nodes.h"
#include "redlock_notify.h"
#include "redlock_conn.h"
#include "redlock_sentinel.h"
#include "redlock_cluster.h"

#ifndef REDLOCK_SOCKET_API
#ifdef REDLOCK_SOCKET_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_SOCKET_API static __attribute__((unused))
#else
#define REDLOCK_SOCKET_API static
#endif
#else
#define REDLOCK_SOCKET_API extern
#endif
#endif

#ifndef REDLOCK_SOCKET_MAX_PENDING
#define REDLOCK_SOCKET_MAX_PENDING (1L << 20)
#endif
#ifndef REDLOCK_SOCKET_MAX_OUTPUT
#define REDLOCK_SOCKET_MAX_OUTPUT (64L * 1024L * 1024L)
#endif
#define REDLOCK_SOCKET_READ 1
#define REDLOCK_SOCKET_WRITE 2
/* The command connections a Redis Cluster node may have, one per master
   it has used (the node's own slot and CLUSTER_CONNS - 1 more). */
#ifndef REDLOCK_SOCKET_CLUSTER_CONNS
#define REDLOCK_SOCKET_CLUSTER_CONNS 16
#endif
#if REDLOCK_SOCKET_CLUSTER_CONNS < 1 || REDLOCK_SOCKET_CLUSTER_CONNS > REDLOCK_CLUSTER_MAX_MASTERS
#error "REDLOCK_SOCKET_CLUSTER_CONNS: 1 .. REDLOCK_CLUSTER_MAX_MASTERS"
#endif
/* Sockets one adapter may have: a command connection and a subscriber
   (release notifications) per node, a cluster node's further command
   connections and subscribers (one per master when sharded), and a
   Sentinel group's +switch-master watch. */
#define REDLOCK_SOCKET_MAX_FDS ((2 * REDLOCK_SOCKET_CLUSTER_CONNS + 1) * REDLOCK_MAX_NODES)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. RESP2: see redlock_resp.h ---- */

/* ---- 2.-4. connections and loops ---- */

/* A node: redlock_node (redlock_nodes.h, every adapter's), whose strings
   init copies (the password wiped again at deinit). */
typedef redlock_node redlock_socket_node;

typedef struct redlock_socket_config {
    int node_count;                         /* 1..REDLOCK_MAX_NODES */
    redlock_socket_node node[REDLOCK_MAX_NODES];
    const char *username, *password;        /* defaults for every node */
    int db;
    redlock_tls tls;                        /* enable set: TLS on every node (see 2.) */
    int64_t connect_timeout_ms;             /* 0: 1000 (negative, here or below: INVALID) */
    int64_t command_timeout_ms;             /* 0: 1000; a node this late is dropped */
    int notify_off;                         /* 1: no release notifications (redlock.h
                                               section 10; see 2.): no subscriber connections */
    int64_t notify_idle_ms;                 /* 0: 1000; a subscriber with no lock waiting
                                               closes after this long (negative: INVALID) */
    int info_off;                           /* 1: no INFO nor CONFIG on new connections: the core
                                               never learns what a node may evict nor that it
                                               restarted (see 2.) */
    int watchdog_thread;                    /* 1: a thread runs the loop between calls, renewing
                                               held locks (REDLOCK_SOCKET_THREAD; see 3.) */
    redlock_config core;                    /* zero fields: defaults; node_count ignored */
    void (*on_event)(void *user, const redlock_event *ev);  /* optional, core events */
    /* foreign loop hooks, optional (see 4.): fd -1 means "about to be
       closed"; set_timer arms a one-shot timer */
    void (*watch)(void *user, int node, int fd, int interest);
    void (*set_timer)(void *user, int64_t deadline_us);
    /* raw mode (REDLOCK_SOCKET_NO_CORE, or when both are set): replies and node
       errors of redlock_socket_send() go here instead of to the core */
    void (*on_reply)(void *user, int node, redlock_tag tag, const redlock_reply *reply);
    void (*on_error)(void *user, int node, redlock_tag tag, int status);
    void *user;
} redlock_socket_config;

struct redlock__sock_node;
struct redlock__sock_thread;
struct redlock__sock_cluster;

/* Caller-owned; must not move between init and deinit. */
typedef struct redlock_socket {
    redlock_client _client;
    redlock_socket_config _cfg;
    struct redlock__sock_node *_nodes;
    int64_t _timer_reported;
    int _in_cb;
    struct redlock_socket_lock *_blocking; /* the lock a blocking call waits on (one at a time) */
    int _core;     /* the core client is initialised */
    int _magic;
    /* release notifications: _nsub subscriber connections (_nodes[node_count
       + i] listens on node i), the keys they listen to and who waits */
    int _nsub;
    redlock__conn_subs _subs;
    /* Redis Cluster nodes: each one's routing (NULL: not a cluster), and
       how many; their further connections follow the subscribers */
    struct redlock__sock_cluster *_cl[REDLOCK_MAX_NODES];
    int _ncl;
    /* Sentinel groups' +switch-master watches (not in raw mode): the last
       _nwatch connections, one per group, in the order of the nodes */
    int _nwatch;
    /* the last redlock_socket_pollfds(): node and connection of each entry */
    int _poll_node[REDLOCK_SOCKET_MAX_FDS];
    unsigned _poll_gen[REDLOCK_SOCKET_MAX_FDS];
    int _poll_n;
    void *_bio_method; /* REDLOCK_SOCKET_TLS: the socket BIO of TLS nodes */
    struct redlock__sock_thread *_thread; /* the watchdog thread and its mutex, or NULL */
    redlock_node_io_stats _io[REDLOCK_MAX_NODES]; /* each node's command connections (redlock_socket_stats) */
} redlock_socket;

#ifndef REDLOCK_SOCKET_NO_CORE
/* A core lock plus what the blocking calls need. Use &l->lock with the
   core API (redlock_lock_state(&l->lock) ...). */
typedef struct redlock_socket_lock {
    redlock_lock lock;
    redlock_socket *_s;
    redlock_result_fn _fn;
    void *_user;
    int _want, _done;
    redlock_result _last;
    redlock_result _shown; /* _last as redlock_socket_last_result() last copied it */
} redlock_socket_lock;
#endif

/* Fills in the defaults (also those of cfg->core). */
REDLOCK_SOCKET_API void redlock_socket_config_init(redlock_socket_config *cfg);

/* Node lists (see 2.): redlock_parse_nodes(cfg.node, &cfg.node_count, ...)
   and the rest of redlock_nodes.h. The names this adapter gave them
   before, kept for old callers: */
#define redlock_socket_parse_nodes(cfg, list, mem, err, errlen) \
    redlock_parse_nodes((cfg)->node, &(cfg)->node_count, list, mem, err, errlen) /* deprecated */
#define redlock_socket_free_nodes(mem) redlock_free_nodes(mem)                   /* deprecated */
#define redlock_socket_format_node(n, out, cap) redlock_format_node(n, out, cap)  /* deprecated */
#define redlock_socket_scrub_nodes(list) redlock_scrub_nodes(list)               /* deprecated */
/* INVALID (also: watchdog_thread without REDLOCK_SOCKET_THREAD, in raw
   mode or with watch / set_timer; a Sentinel group without its group's
   name; a cluster with a db or a Unix socket), NODES, NOMEM (also: no thread could be
   started), NO_TLS (TLS asked for without REDLOCK_SOCKET_TLS), TLS (a CA /
   certificate / key that cannot be loaded), or a redlock_client_init
   error. Connects lazily; starts the watchdog thread if asked. */
REDLOCK_SOCKET_API int redlock_socket_init(redlock_socket *s, const redlock_socket_config *cfg);
/* Stops the watchdog thread, closes every connection; pending commands
   are dropped silently. Not inside a callback (on the watchdog thread it
   does nothing). */
REDLOCK_SOCKET_API void redlock_socket_deinit(redlock_socket *s);
/* Connects every node that is down and waits for AUTH / SELECT, at most
   connect_timeout_ms + command_timeout_ms. OK if all nodes are up, else
   the first failing node's status. Optional: commands connect by themselves. */
REDLOCK_SOCKET_API int redlock_socket_connect(redlock_socket *s);
/* Runs the loop for timeout_ms (0: handle what is ready, do not wait).
   With the watchdog thread: waits timeout_ms while the thread runs it. */
REDLOCK_SOCKET_API int redlock_socket_run(redlock_socket *s, int64_t timeout_ms);
/* Sends one command to a node (the core's send callback does this). 0 if
   queued, or CONNECT / TRANSPORT / INVALID / NOMEM, or QUEUE_FULL (the
   node's queue holds REDLOCK_SOCKET_MAX_PENDING commands or
   REDLOCK_SOCKET_MAX_OUTPUT unsent bytes; the connection stays up); then no
   answer will come. */
REDLOCK_SOCKET_API int redlock_socket_send(redlock_socket *s, int node, int argc,
                                           const char *const *argv, const size_t *argvlen,
                                           redlock_tag tag);
/* A node's last connection error (CONNECT, AUTH, SERVER, NODE_TIMEOUT,
   TRANSPORT, PROTOCOL, TLS; see 2.), kept while the node is down. 0: none
   yet, or a new connection has answered since (a good AUTH / SELECT reply
   or a command's reply); errbuf (optional) gets its text: for AUTH and
   SELECT the server's refusal ("WRONGPASS invalid username-password pair
   ...", "NOAUTH Authentication required.", "ERR DB index is out of
   range"), for a TLS connection what OpenSSL said, for a connect that
   failed why ("connection refused", "no such socket", "name does not
   resolve (...)", "connect timed out", "cannot connect: ..."), else the
   status's description; with status 0, the server's last error reply to a command
   on the current connection ("NOPERM ...", "ERR unknown command ...",
   "READONLY ..."; for a script's call, the error it met, which servers
   before 7.0 wrap in "ERR Error running script ..."; "" if none), which a vote that failed with
   REDLOCK_ERR_SERVER reads from inside its event. Printable ASCII only.
   A cluster node: its own slot's connection's (where the slot map's
   failures, and the error replies its masters gave the core, are told
   too), else the first of its other masters' connections that failed. */
REDLOCK_SOCKET_API int redlock_socket_node_status(const redlock_socket *s, int node, char *errbuf, size_t errsz);
/* Nonzero when the node's connection is established. */
REDLOCK_SOCKET_API int redlock_socket_node_connected(const redlock_socket *s, int node);
/* The node's release notifications (see 2.): 0 while they work or were
   never refused; REDLOCK_ERR_SERVER (AUTH for a refused login) once the
   node refused its subscriber (an ACL without the channel, a renamed
   SUBSCRIBE): its releases are then not heard, and the subscriber is
   tried again after a backoff; errbuf (optional) gets the node's words
   (printable ASCII). */
REDLOCK_SOCKET_API int redlock_socket_notify_status(const redlock_socket *s, int node, char *errbuf, size_t errsz);
/* What the node may evict (redlock.h section 4, Eviction): its
   maxmemory_policy as the last INFO that named one said ("" before
   any did) into buf (optional, cut to size), and the redlock_evicts the
   core was told (NONE, VOLATILE, ALL); INVALID for a bad node. */
REDLOCK_SOCKET_API int redlock_socket_node_policy(const redlock_socket *s, int node, char *buf, size_t size);
/* What a node's port speaks, asked directly (redlock_socket_probe()). */
typedef struct redlock_socket_probe_result {
    int plain;       /* 1: it answered a plain-text PING in RESP (+PONG, -NOAUTH ...): plain-text Redis */
    int silent;      /* 1: it closed or reset that PING without a word, as a TLS port does */
    int tls;         /* 1: it answered a TLS hello with a TLS record (a server hello or an alert); 0 also
                        when not asked (a TLS node, a port that answered the PING, a build without TLS) */
    int other;       /* 1: the port speaks the other protocol than the node was asked in (tls argument):
                        plain for a TLS node, TLS for a plain one. The fix is the node's settings */
    char words[96];  /* REDLOCK_ERR_CONNECT: why ("connection refused", "no such socket", "name does not
                        resolve (...)", "connect timed out", "cannot connect: ..."); "" otherwise */
} redlock_socket_probe_result;
/* A diagnostic, apart from any adapter: asks node's port (node->host and
   port, or its Unix socket; the defaults as in a configuration) what it
   speaks, on connections of its own, and tells why it cannot be reached.
   For a message about a node that failed in a way the adapter cannot
   tell from a failing network: a plain-text Redis answers a TLS handshake
   with nothing (CONNECT or NODE_TIMEOUT), and a TLS port resets plain
   text without a word (TRANSPORT). tls: the protocol the node is
   configured for (1 TLS, 0 plain text). Sends a plain-text PING; for a
   plain node whose port closes it without a word, a TLS hello on a second
   connection (with REDLOCK_SOCKET_TLS). Sends no AUTH, touches no key,
   checks no certificate. Every wait within timeout_ms in all (connects,
   answers; not getaddrinfo(), which blocks as it will, nor the CPU time
   that making the TLS hello takes). It blocks the calling thread for up
   to timeout_ms: never call it inside the core's callbacks (on_result,
   on_event, the hooks) nor an adapter's, whose loop it would stall. Uses
   no adapter and no global state: any thread. OK (the port was reached:
   see *out), CONNECT (*out's words say why), or INVALID (node or out
   NULL, a port out of range, a negative timeout; *out untouched). */
REDLOCK_SOCKET_API int redlock_socket_probe(const redlock_node *node, int tls, int64_t timeout_ms,
                                            redlock_socket_probe_result *out);
/* Commands in flight on all nodes (e.g. run the loop until 0 before exit). */
REDLOCK_SOCKET_API int redlock_socket_pending(const redlock_socket *s);
/* Commands in flight on one node (0 for a bad node): e.g. to stop waiting
   for a node known not to answer. */
REDLOCK_SOCKET_API int redlock_socket_node_pending(const redlock_socket *s, int node);
/* Heap bytes held by the adapter (buffers, queues, parsers). */
REDLOCK_SOCKET_API size_t redlock_socket_memory(const redlock_socket *s);
/* Statistics: the core's (redlock_client_stats; all zero in raw mode) and
   each node's command connections' (redlock_node_io_stats, redlock_conn.h)
   into *out: OK, or INVALID. Reset zeroes both (the core's held_max: to
   held). Under the watchdog thread's mutex (REDLOCK_SOCKET_THREAD), so any
   thread may call them; from inside a callback too. */
REDLOCK_SOCKET_API int redlock_socket_stats(const redlock_socket *s, redlock_adapter_stats *out);
REDLOCK_SOCKET_API void redlock_socket_stats_reset(redlock_socket *s);

/* A poll() loop of your own that also watches other descriptors (a signal
   pipe, a child): redlock_socket_pollfds() writes out what is queued and
   fills pfd[0..] with the sockets that want events (at most
   REDLOCK_SOCKET_MAX_FDS entries), returning how many; redlock_socket_poll_ms()
   is the timeout for poll() (the adapter's next deadline, or until_us if
   that comes first, rounded up to the millisecond so that poll() does not
   return before it; at most 1 s); after poll(), redlock_socket_dispatch()
   handles those entries' revents (skipping a socket replaced meanwhile) and
   whatever is due. One fill / dispatch pair at a time per adapter. */
struct pollfd;
REDLOCK_SOCKET_API int redlock_socket_pollfds(redlock_socket *s, struct pollfd *pfd);
REDLOCK_SOCKET_API int redlock_socket_poll_ms(const redlock_socket *s, int64_t until_us);
REDLOCK_SOCKET_API void redlock_socket_dispatch(redlock_socket *s, const struct pollfd *pfd, int n);

/* Foreign loop, one call per event. */
REDLOCK_SOCKET_API int redlock_socket_fd_count(const redlock_socket *s);
REDLOCK_SOCKET_API int redlock_socket_fd(const redlock_socket *s, int node);
REDLOCK_SOCKET_API int redlock_socket_interest(const redlock_socket *s, int node);
REDLOCK_SOCKET_API void redlock_socket_on_readable(redlock_socket *s, int node);
REDLOCK_SOCKET_API void redlock_socket_on_writable(redlock_socket *s, int node);
REDLOCK_SOCKET_API int64_t redlock_socket_next_deadline(const redlock_socket *s);
/* Handles what is due (nothing, if called early), then calls set_timer. */
REDLOCK_SOCKET_API void redlock_socket_on_timer(redlock_socket *s);
/* The adapter's clock: redlock_clock_us(), the core's (CLOCK_BOOTTIME where
   it exists, so a suspended machine's holds do not outlive the servers'
   TTLs). Deadlines above are on it. */
REDLOCK_SOCKET_API int64_t redlock_socket_now_us(void);

#ifndef REDLOCK_SOCKET_NO_CORE
REDLOCK_SOCKET_API redlock_client *redlock_socket_client(redlock_socket *s);
/* redlock_lock_init on the adapter's client; opts->on_result / user still
   get every result (including LOST). As there, a handle still initialised
   on this adapter is deinitialised first (answers it is still owed are
   ignored; a blocking call waiting on it, inside a callback, returns
   DETACHED), and a refused init (INVALID, KEY ...) does nothing. */
REDLOCK_SOCKET_API int redlock_socket_lock_init(redlock_socket *s, redlock_socket_lock *l,
                                                const redlock_lock_opts *opts);
REDLOCK_SOCKET_API void redlock_socket_lock_deinit(redlock_socket_lock *l);
/* Block until the outcome; return its status (or the start error). */
REDLOCK_SOCKET_API int redlock_socket_acquire(redlock_socket_lock *l);
REDLOCK_SOCKET_API int redlock_socket_release(redlock_socket_lock *l);
REDLOCK_SOCKET_API int redlock_socket_extend(redlock_socket_lock *l, int64_t ttl_ms);
/* Readers-writer locks (redlock.h section 12): redlock_upgrade and
   redlock_downgrade, blocking until their result. */
REDLOCK_SOCKET_API int redlock_socket_upgrade(redlock_socket_lock *l);
REDLOCK_SOCKET_API int redlock_socket_downgrade(redlock_socket_lock *l);
/* The last blocking call's full result, or a later one that came without
   a call: a loss the watchdog found (op LOST), an acquire begun with the
   core's redlock_acquire. A copy (taken under the mutex with the watchdog
   thread): it stays as it is until the next call of this function on the
   lock. */
REDLOCK_SOCKET_API const redlock_result *redlock_socket_last_result(const redlock_socket_lock *l);
/* redlock_lock_state() and redlock_lock_valid_until() of the lock (on
   redlock_socket_now_us(); 0 unless HELD), under the mutex with the
   watchdog thread. IDLE / 0 for a lock not initialised. */
REDLOCK_SOCKET_API redlock_state redlock_socket_lock_state(const redlock_socket_lock *l);
REDLOCK_SOCKET_API int64_t redlock_socket_lock_valid_until(const redlock_socket_lock *l);
#endif

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_SOCKET_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_SOCKET_IMPLEMENTATION) && !defined(REDLOCK_SOCKET__IMPLEMENTED)
#define REDLOCK_SOCKET__IMPLEMENTED

#ifndef REDLOCK_RESP_IMPLEMENTATION
#define REDLOCK_RESP_IMPLEMENTATION
#include "redlock_resp.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#ifdef REDLOCK_SOCKET_TLS
#define REDLOCK__TLS_OPENSSL
#include "redlock_tls.h"
#endif
/* the watchdog thread renews the core's locks: not in a transport-only build */
#if defined(REDLOCK_SOCKET_THREAD) && !defined(REDLOCK_SOCKET_NO_CORE)
#define REDLOCK__SOCK_THREADS
#include <pthread.h>
#include <signal.h>
#endif

#ifndef CLOCK_MONOTONIC
#error "clock_gettime() is not declared: include redlock_socket.h before any system header where REDLOCK_SOCKET_IMPLEMENTATION is defined, or build with -D_POSIX_C_SOURCE=200809L"
#endif
#if defined(REDLOCK_NO_BUILTIN_CLOCKS) && !defined(REDLOCK_SOCKET_NO_CORE)
#error "redlock_socket.h times everything with redlock_clock_us(): do not define REDLOCK_NO_BUILTIN_CLOCKS"
#endif

#ifdef MSG_NOSIGNAL
#define REDLOCK__SOCK_NOSIGNAL MSG_NOSIGNAL
#else
#define REDLOCK__SOCK_NOSIGNAL 0
#endif

#define REDLOCK__SOCK_MAGIC 0x52534f4b

#if defined(REDLOCK_SOCKET_GETADDRINFO) != defined(REDLOCK_SOCKET_FREEADDRINFO)
#error "define both REDLOCK_SOCKET_GETADDRINFO and REDLOCK_SOCKET_FREEADDRINFO"
#endif
#ifndef REDLOCK_SOCKET_GETADDRINFO
#define REDLOCK_SOCKET_GETADDRINFO getaddrinfo
#define REDLOCK_SOCKET_FREEADDRINFO freeaddrinfo
#endif

/* ---- the watchdog thread's mutex ---- */

#ifdef REDLOCK__SOCK_THREADS
struct redlock__sock_thread {
    pthread_t id;
    pthread_mutex_t mu; /* held by whoever runs the loop or reads the state; error-checking:
                           a callback's thread, which holds it, is told so */
    int wake[2];        /* a pipe: a call that changed the adapter ends the thread's poll() */
    int stopping;
    int polling, woken; /* the thread waits in poll() without the mutex; a byte is in the pipe */
    unsigned changes;   /* calls that changed the adapter: what poll() saw meanwhile is stale */
};
#endif

/* Takes the adapter's mutex (with the watchdog thread). 1 if this call
   took it; 0 if there is no thread, or this thread holds it already (it
   is in a callback), for leave(). */
static int redlock__sock_enter(const redlock_socket *s)
{
#ifdef REDLOCK__SOCK_THREADS
    return s->_thread && pthread_mutex_lock(&s->_thread->mu) == 0;
#else
    (void)s;
    return 0;
#endif
}

/* Gives back what enter() took. changed: the call may have changed what
   the thread waits for (sockets, commands to write, deadlines): a thread
   waiting in poll() is woken to look again. */
static void redlock__sock_leave(const redlock_socket *s, int entered, int changed)
{
#ifdef REDLOCK__SOCK_THREADS
    struct redlock__sock_thread *t = s->_thread;
    if (!entered) return;
    if (changed) {
        t->changes++;
        if (t->polling && !t->woken) {
            char b = 1;
            ssize_t w = write(t->wake[1], &b, 1);
            (void)w; /* full: a byte is there already */
            t->woken = 1;
        }
    }
    pthread_mutex_unlock(&t->mu);
#else
    (void)s;
    (void)entered;
    (void)changed;
#endif
}

/* ---- connections ---- */

/* A connection's state is the connection layer's (redlock_conn.h):
   CONNECTING while the TCP connect runs, HANDSHAKE while TLS's does. */
#define REDLOCK__SOCK_SUB_RETRY_MS 100 /* a subscriber that failed is reopened after this */
#define REDLOCK__SOCK_WATCH_RETRY_MS 1000 /* a +switch-master watch that failed: the next sentinel after this */
#define REDLOCK__SOCK_MAX_ADDR 4

/* A blocking conversation with a server beside the node's own connection
   (a sentinel's, CLUSTER SLOTS): plain or TLS as the node is. */
struct redlock__sock_talk {
    int fd;    /* -1: closed */
    void *ssl; /* REDLOCK_SOCKET_TLS: the session over fd, or NULL */
};

/* A Sentinel group's sentinels (redlock_sentinel.h): asked which server
   is the primary at each connection, from the one that answered last. */
struct redlock__sock_sentinels {
    char *group, *user, *pass;
    char *host[REDLOCK_NODES_MAX_SEEDS];
    int port[REDLOCK_NODES_MAX_SEEDS];
    int count, next;
    int named; /* host/port are a primary some sentinel named (a new answer: a failover) */
    struct redlock__sock_talk talk; /* open to sentinel `next` (logged in), or closed */
    int wat;   /* the sentinel the +switch-master watch opens to (the next one after a failure) */
};

struct redlock__sock_node {
    int index, fd;
    redlock__conn_life life; /* state (DOWN / CONNECTING / HANDSHAKE / UP), status, the server's words, and a
                                subscriber's retry time, backoff and refusal (redlock_conn.h) */
    unsigned gen;
    char *host, *unix_path, *user, *pass;
    int port, db;
    struct redlock__sock_sentinels *sentinels; /* a Sentinel group's; NULL: a single server */
    struct sockaddr_storage addr[REDLOCK__SOCK_MAX_ADDR];
    socklen_t addrlen[REDLOCK__SOCK_MAX_ADDR];
    int naddr, cur;
    int64_t connect_deadline;
    char *out;
    size_t out_len, out_off, out_cap;
    redlock__conn_ring q;   /* the replies owed (redlock_conn.h), up to MAX_PENDING */
    redlock_resp_parser parser;
    unsigned failures; /* connections lost or refused so far */
    int sub;           /* a subscriber (release notifications), not a node's command connection */
    struct redlock__sock_sentinels *watching; /* a +switch-master watch: the group it watches (its
                                                 node's; host/port: a sentinel), else NULL */
    redlock__conn_health health; /* what INFO and CONFIG said (redlock_conn.h) */
    int rep_fd, rep_interest;
    int node;                         /* the core's node this connection serves */
    struct redlock__sock_cluster *cl; /* a cluster node's connection (to one master at a time), or NULL */
    /* TLS (REDLOCK_SOCKET_TLS): the context made at init, the session of
       this connection, what OpenSSL waits for (REDLOCK_SOCKET_READ /
       WRITE: during the handshake, or a read that must write / a write
       that must read). A failure's words (TLS's, a connect's) are the
       node status's, in life. */
    void *tls_ctx, *ssl;
    char *tls_name;
    int tls_verify, tls_want;
};

/* A cluster node (redlock_cluster.h): its map, its connections (conn[0]
   is the node's own slot), its seeds, and each core command in flight
   (its bytes, to send again where a redirection says). */
typedef struct redlock__sock_cluster_cmd {
    redlock_tag tag;
    char *bytes;
    size_t len;
    int redirects;
} redlock__sock_cluster_cmd;

struct redlock__sock_cluster {
    redlock_cluster c;
    int node;
    struct redlock__sock_node *conn[REDLOCK_SOCKET_CLUSTER_CONNS];
    /* its subscribers (none with notify_off): sub[0] is the node's own,
       on the first seed while plain; sharded (the masters' INFO says
       Redis 7), one per master (as conn[], pointed at a master when
       needed); resub: a subscriber heard its master lost a key's slot,
       they reopen after the next slot map */
    struct redlock__sock_node *sub[REDLOCK_SOCKET_CLUSTER_CONNS];
    int sharded, resub;
    int old; /* a master's INFO said no sharded pub/sub: plain for good */
    char *seed_host[REDLOCK_NODES_MAX_SEEDS];
    int seed_port[REDLOCK_NODES_MAX_SEEDS];
    int seeds;
    redlock__sock_cluster_cmd *cmd;
    size_t ncmd, capcmd;
};

/* Room for a failure's words, as the node status has always cut them. */
#define REDLOCK__SOCK_TLS_WORDS 120
#define REDLOCK__SOCK_CONNECT_WORDS 128

static int redlock__sock_opening(const struct redlock__sock_node *nd)
{
    return nd->life.state == REDLOCK__CONN_CONNECTING || nd->life.state == REDLOCK__CONN_HANDSHAKE;
}

/* The core's validity clock (CLOCK_BOOTTIME where it exists): one clock for
   the core's deadlines and the adapter's own. */
REDLOCK_SOCKET_API int64_t redlock_socket_now_us(void)
{
#ifdef REDLOCK_SOCKET_NO_CORE
    /* transport only: the core's implementation may not be linked in; the
       same clock, read here */
    struct timespec ts;
#ifdef CLOCK_BOOTTIME
    clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
#else
    return redlock_clock_us();
#endif
}

static char *redlock__sock_strdup(const char *s)
{
    size_t n;
    char *d;
    if (!s) return NULL;
    n = strlen(s) + 1;
    d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static void redlock__sock_wipe_free(char *s)
{
    if (!s) return;
    {
        volatile char *v = s;
        while (*v) *v++ = 0;
    }
    free(s);
}

static int redlock__sock_valid(const redlock_socket *s)
{
    return s && s->_magic == REDLOCK__SOCK_MAGIC && s->_nodes;
}

/* Raw mode, the one switch: replies and node errors go to cfg.on_reply /
   on_error (set both or neither), not to a core, and the adapter sends
   only what it is asked to. REDLOCK_SOCKET_NO_CORE is raw mode always,
   with the core left out of the build. */
static int redlock__sock_raw(const redlock_socket *s)
{
#ifdef REDLOCK_SOCKET_NO_CORE
    (void)s;
    return 1;
#else
    return s->_cfg.on_reply != NULL;
#endif
}

/* Connections: the nodes' command connections, then the subscribers,
   then the cluster nodes' further command connections, then (with
   subscribers) their further subscribers, then the Sentinel groups'
   +switch-master watches. */
static int redlock__sock_slots(const redlock_socket *s)
{
    return s->_cfg.node_count + s->_nsub + s->_ncl * (REDLOCK_SOCKET_CLUSTER_CONNS - 1) * (s->_nsub ? 2 : 1) +
           s->_nwatch;
}

/* A connection beside the core's commands: a subscriber or a watch. */
static int redlock__sock_aside(const struct redlock__sock_node *nd) { return nd->sub || nd->watching; }

static int redlock__sock_sub_wanted(const struct redlock__sock_node *nd);
static int64_t redlock__sock_resub_due(const redlock_socket *s);

static int redlock__sock_interest_of(const struct redlock__sock_node *nd)
{
    if (nd->life.state == REDLOCK__CONN_CONNECTING) return REDLOCK_SOCKET_WRITE;
    if (nd->life.state == REDLOCK__CONN_HANDSHAKE) return nd->tls_want;
    if (nd->life.state == REDLOCK__CONN_UP)
        return REDLOCK_SOCKET_READ |
               ((nd->out_off < nd->out_len && nd->tls_want != REDLOCK_SOCKET_READ) || nd->tls_want == REDLOCK_SOCKET_WRITE
                    ? REDLOCK_SOCKET_WRITE : 0);
    return 0;
}

static void redlock__sock_report(redlock_socket *s, struct redlock__sock_node *nd)
{
    int in = redlock__sock_interest_of(nd);
    if (nd->rep_fd == nd->fd && nd->rep_interest == in) return;
    nd->rep_fd = nd->fd;
    nd->rep_interest = in;
    if (s->_cfg.watch) {
        s->_in_cb++;
        s->_cfg.watch(s->_cfg.user, nd->index, nd->fd, in);
        s->_in_cb--;
    }
}

/* A reply is owed this long after its command could be written. */
static int64_t redlock__sock_command_us(const redlock_socket *s) { return (int64_t)s->_cfg.command_timeout_ms * 1000; }

static int64_t redlock__sock_deadline(const redlock_socket *s)
{
    int64_t d = REDLOCK_NO_DEADLINE;
    int i;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!redlock__sock_raw(s)) d = redlock_next_deadline(&s->_client);
#endif
    for (i = 0; i < redlock__sock_slots(s); i++) {
        const struct redlock__sock_node *nd = &s->_nodes[i];
        if (redlock__sock_opening(nd) && nd->connect_deadline < d) d = nd->connect_deadline;
        if (redlock__conn_due(&nd->q, redlock__sock_command_us(s)) < d) d = redlock__conn_due(&nd->q, redlock__sock_command_us(s));
        if (nd->sub && redlock__sock_sub_wanted(nd) &&
            redlock__conn_sub_reopen_due(&s->_subs, &nd->life, nd->life.state != REDLOCK__CONN_DOWN) < d)
            d = nd->life.retry_at;
        if (nd->watching && nd->watching->named && nd->life.state == REDLOCK__CONN_DOWN && nd->life.retry_at < d)
            d = nd->life.retry_at; /* a watch reopens (redlock__sock_watches_tend) */
    }
    if (s->_nsub && redlock__conn_idle_due(&s->_subs) < d) d = redlock__conn_idle_due(&s->_subs);
    if (redlock__sock_resub_due(s) < d) d = redlock__sock_resub_due(s);
    return d;
}

static void redlock__sock_timer_set(redlock_socket *s, int64_t d)
{
    s->_timer_reported = d;
    s->_in_cb++;
    s->_cfg.set_timer(s->_cfg.user, d);
    s->_in_cb--;
}

/* Tells the set_timer hook the next deadline when it changed. */
static void redlock__sock_timer_report(redlock_socket *s)
{
    int64_t d;
    if (!s->_cfg.set_timer) return;
    d = redlock__sock_deadline(s);
    if (d != s->_timer_reported) redlock__sock_timer_set(s, d);
}

/* Keeps an error reply's words for redlock_socket_node_status(). */
static void redlock__sock_words(struct redlock__sock_node *nd, const redlock_reply *r)
{
    redlock__conn_heard(&nd->life, r->str, r->len);
}

#ifndef REDLOCK_SOCKET_NO_CORE
static void redlock__sock_cluster_forget(struct redlock__sock_cluster *cl, redlock_tag tag);
static void redlock__sock_cluster_reply(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag,
                                        const redlock_reply *r);
#endif

static void redlock__sock_deliver_error(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag, int status)
{
#ifndef REDLOCK_SOCKET_NO_CORE
    if (nd->cl) redlock__sock_cluster_forget(nd->cl, tag); /* its vote ends here */
#endif
    s->_in_cb++;
    if (redlock__sock_raw(s)) s->_cfg.on_error(s->_cfg.user, nd->node, tag, status);
#ifndef REDLOCK_SOCKET_NO_CORE
    else redlock_on_error(&s->_client, tag, status);
#endif
    s->_in_cb--;
}

static void redlock__sock_deliver_reply(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag,
                                        const redlock_reply *r)
{
    if (r->type == REDLOCK_REPLY_ERROR) redlock__sock_words(nd, r);
    if (r->type == REDLOCK_REPLY_ERROR && r->len >= 6 && memcmp(r->str, "NOAUTH", 6) == 0) {
        redlock__conn_set(&nd->life, REDLOCK_ERR_AUTH, NULL);
        redlock__sock_deliver_error(s, nd, tag, REDLOCK_ERR_AUTH);
        return;
    }
    nd->life.status = 0; /* the connection works: see redlock_socket_node_status() */
    s->_in_cb++;
    if (redlock__sock_raw(s)) s->_cfg.on_reply(s->_cfg.user, nd->node, tag, r);
#ifndef REDLOCK_SOCKET_NO_CORE
    else redlock_on_reply(&s->_client, tag, r);
#endif
    s->_in_cb--;
}

static void redlock__sock_clear_out(struct redlock__sock_node *nd)
{
    if (nd->out && nd->out_len) memset(nd->out, 0, nd->out_len);
    nd->out_len = nd->out_off = 0;
}

/* The node's socket goes away: nd->fd is -1 already, `fd` is still open.
   A socket the watch hook was told about is reported as fd -1 before it is
   closed, so the owner's loop can still unregister it, and so that the
   next socket counts as new even when it gets the same number (an epoll
   set forgets a closed fd: "same fd, same interest" is not "nothing
   changed" then). */
static void redlock__sock_drop_fd(redlock_socket *s, struct redlock__sock_node *nd, int fd)
{
    if (nd->rep_fd >= 0) {
        nd->rep_fd = -1;
        nd->rep_interest = 0;
        if (s->_cfg.watch) {
            s->_in_cb++;
            s->_cfg.watch(s->_cfg.user, nd->index, -1, 0);
            s->_in_cb--;
        }
    }
    if (fd >= 0) close(fd);
}

/* The connection is gone; the node is DOWN before the watch hook runs. */
static void redlock__sock_close(redlock_socket *s, struct redlock__sock_node *nd)
{
    int fd = nd->fd;
#ifdef REDLOCK_SOCKET_TLS
    SSL_free((SSL *)nd->ssl); /* no close_notify: the socket closes anyway */
#endif
    nd->ssl = NULL;
    nd->tls_want = 0;
    nd->fd = -1;
    nd->life.state = REDLOCK__CONN_DOWN;
    nd->gen++;
    redlock__sock_clear_out(nd);
    redlock_resp_parser_reset(&nd->parser);
    nd->q.head = nd->q.count = 0;
    redlock__sock_drop_fd(s, nd, fd);
}

/* A node of an adapter, for the connection layer's callbacks. */
typedef struct redlock__sock_at {
    redlock_socket *s;
    struct redlock__sock_node *nd;
} redlock__sock_at;

static void redlock__sock_fail_tag(void *at, redlock_tag tag, int status)
{
    const redlock__sock_at *a = (const redlock__sock_at *)at;
    redlock__sock_deliver_error(a->s, a->nd, tag, status);
}

/* The connection failed (status; why: its words, NULL none, or
   nd->life.words where TLS just wrote them): closed, then the owner of
   every command in flight is told (redlock_conn.h). A failed subscriber
   is reopened after its retry delay, a watch after its own at the next
   sentinel; a node's connection by its next command. */
static void redlock__sock_fail(redlock_socket *s, struct redlock__sock_node *nd, int status, const char *why)
{
    redlock__conn_ring owed = redlock__conn_drop(&nd->life, &nd->q, status, why, redlock_socket_now_us(),
                                                 nd->sub ? REDLOCK__SOCK_SUB_RETRY_MS
                                                 : nd->watching ? REDLOCK__SOCK_WATCH_RETRY_MS : 0);
    redlock__sock_at at;
    at.s = s;
    at.nd = nd;
    nd->failures++;
    if (nd->watching) nd->watching->wat = (nd->watching->wat + 1) % nd->watching->count;
    if (nd->cl) redlock_cluster_stale(&nd->cl->c); /* a master gone: a failover, perhaps */
    redlock__sock_close(s, nd);
    redlock__sock_report(s, nd);
    redlock__conn_fail_owed(&owed, status, redlock__sock_fail_tag, &at);
}

/* ---- the byte stream: plain or TLS ----
   redlock__sock_recv / redlock__sock_send move bytes over the node's
   connection: > 0 bytes moved; 0 the peer closed (recv only); -1 would
   block; -2 the connection failed; -3 the server refused us over TLS (an
   alert, redlock_tls.h). A TLS failure's words are in nd->life.words. */

#ifdef REDLOCK_SOCKET_TLS
/* OpenSSL reads and writes the socket through this BIO: send() with
   MSG_NOSIGNAL, so a peer that is gone costs EPIPE, not SIGPIPE. */
static int redlock__sock_bio_write(BIO *b, const char *p, int n)
{
    ssize_t w;
    BIO_clear_retry_flags(b);
    do w = send((int)(intptr_t)BIO_get_data(b), p, (size_t)n, REDLOCK__SOCK_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(b);
    return (int)w;
}

static int redlock__sock_bio_read(BIO *b, char *p, int n)
{
    ssize_t r;
    BIO_clear_retry_flags(b);
    do r = recv((int)(intptr_t)BIO_get_data(b), p, (size_t)n, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(b);
    return (int)r;
}

static long redlock__sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH;
}

/* The words of the TLS failure on this node (e: SSL_get_error's), for
   the status it fails with next. */
static void redlock__sock_tls_words(struct redlock__sock_node *nd, int e, const char *during)
{
    redlock__tls_words((const SSL *)nd->ssl, nd->tls_verify, e, during, nd->life.words, REDLOCK__SOCK_TLS_WORDS);
}

/* The node's TLS context, made once at init: what to trust, what to show. */
static int redlock__sock_tls_setup(redlock_socket *s, struct redlock__sock_node *nd, const redlock_tls *t)
{
    SSL_CTX *ctx = NULL;
    int rc;
    if (!s->_bio_method) {
        BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "redlock socket");
        if (!m) return REDLOCK_ERR_NOMEM;
        BIO_meth_set_write(m, redlock__sock_bio_write);
        BIO_meth_set_read(m, redlock__sock_bio_read);
        BIO_meth_set_ctrl(m, redlock__sock_bio_ctrl);
        s->_bio_method = m;
    }
    /* no server_name: the name is the host of each connection (a Sentinel
       group's primary, a cluster's master), taken when it opens */
    if (t->server_name && !(nd->tls_name = redlock__sock_strdup(t->server_name))) return REDLOCK_ERR_NOMEM;
    nd->tls_verify = !t->insecure_skip_verify;
    rc = redlock__tls_context(t, &ctx);
    nd->tls_ctx = ctx; /* freed at deinit, also when rc says it is not usable */
    return rc;
}

static void redlock__sock_tls_handshake(redlock_socket *s, struct redlock__sock_node *nd);

/* A client session of nd's TLS settings on fd (through the socket BIO),
   to host: the name checked and sent is server_name if set, else host.
   NULL: out of memory. */
static SSL *redlock__sock_tls_session(redlock_socket *s, const struct redlock__sock_node *nd, const char *host, int fd)
{
    SSL *ssl = redlock__tls_session((SSL_CTX *)nd->tls_ctx, nd->tls_name ? nd->tls_name : host, nd->tls_verify);
    BIO *bio = ssl ? BIO_new((BIO_METHOD *)s->_bio_method) : NULL;
    if (!bio) {
        if (ssl) SSL_free(ssl);
        return NULL;
    }
    BIO_set_data(bio, (void *)(intptr_t)fd);
    BIO_set_init(bio, 1);
    SSL_set_bio(ssl, bio, bio);
    return ssl;
}

/* TCP is up: start the TLS handshake (redlock__tls_session: the name
   checked and sent). */
static void redlock__sock_tls_start(redlock_socket *s, struct redlock__sock_node *nd)
{
    SSL *ssl = redlock__sock_tls_session(s, nd, nd->host, nd->fd);
    if (!ssl) {
        redlock__sock_fail(s, nd, REDLOCK_ERR_NOMEM, "TLS setup: out of memory");
        return;
    }
    nd->ssl = ssl;
    nd->life.state = REDLOCK__CONN_HANDSHAKE;
    nd->connect_deadline = redlock_socket_now_us() + s->_cfg.connect_timeout_ms * 1000; /* its own timeout */
    redlock__sock_tls_handshake(s, nd);
}
#endif

static ssize_t redlock__sock_recv(struct redlock__sock_node *nd, char *p, size_t n)
{
#ifdef REDLOCK_SOCKET_TLS
    if (nd->ssl) {
        int r, e;
        ERR_clear_error();
        r = SSL_read((SSL *)nd->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
        if (r > 0) {
            if (nd->tls_want == REDLOCK_SOCKET_WRITE) nd->tls_want = 0;
            return r;
        }
        e = SSL_get_error((SSL *)nd->ssl, r);
        if (e == SSL_ERROR_WANT_READ) return -1;
        if (e == SSL_ERROR_WANT_WRITE) { /* TLS must write before this read can go on */
            nd->tls_want = REDLOCK_SOCKET_WRITE;
            return -1;
        }
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e == SSL_ERROR_SYSCALL && !ERR_peek_error()) return errno ? -2 : 0;
        redlock__sock_tls_words(nd, e, "read");
        return redlock__tls_refused((const SSL *)nd->ssl, nd->tls_verify, e, 0) ? -3 : -2;
    }
#endif
    for (;;) {
        ssize_t r = recv(nd->fd, p, n, 0);
        if (r >= 0) return r;
        if (errno != EINTR) return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
    }
}

static ssize_t redlock__sock_send(struct redlock__sock_node *nd, const char *p, size_t n)
{
#ifdef REDLOCK_SOCKET_TLS
    if (nd->ssl) {
        int w, e;
        ERR_clear_error();
        w = SSL_write((SSL *)nd->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
        if (w > 0) {
            if (nd->tls_want == REDLOCK_SOCKET_READ) nd->tls_want = 0;
            return w;
        }
        e = SSL_get_error((SSL *)nd->ssl, w);
        if (e == SSL_ERROR_WANT_WRITE) return -1;
        if (e == SSL_ERROR_WANT_READ) { /* TLS must read before this write can go on */
            nd->tls_want = REDLOCK_SOCKET_READ;
            return -1;
        }
        if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN) return -2;
        redlock__sock_tls_words(nd, e, "write");
        return redlock__tls_refused((const SSL *)nd->ssl, nd->tls_verify, e, 0) ? -3 : -2;
    }
#endif
    for (;;) {
        ssize_t w = send(nd->fd, p, n, REDLOCK__SOCK_NOSIGNAL);
        if (w >= 0) return w; /* never 0 for a non-empty stream send */
        if (errno != EINTR) return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
    }
}

/* A name getaddrinfo() did not resolve (rc its answer), in words. */
static void redlock__sock_resolve_words(char *out, size_t cap, int rc)
{
    snprintf(out, cap, "name does not resolve (%s)",
             rc == 0 ? "no IPv4 or IPv6 address" : rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
}

/* Connects to the node's next address that takes it; why gets each
   failure's words (the last one's stay). */
static int redlock__sock_try_addr(redlock_socket *s, struct redlock__sock_node *nd, char *why)
{
    (void)s;
    while (nd->cur < nd->naddr) {
        const struct sockaddr *sa = (const struct sockaddr *)&nd->addr[nd->cur];
        int fd = socket(sa->sa_family, SOCK_STREAM, 0), fl, one = 1;
        if (fd < 0) {
            redlock__conn_connect_words(why, REDLOCK__SOCK_CONNECT_WORDS, errno, 0);
            nd->cur++;
            continue;
        }
        fl = fcntl(fd, F_GETFL, 0);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
            redlock__conn_connect_words(why, REDLOCK__SOCK_CONNECT_WORDS, errno, 0);
            close(fd);
            nd->cur++;
            continue;
        }
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (sa->sa_family != AF_UNIX) (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
        (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
        if (connect(fd, sa, nd->addrlen[nd->cur]) == 0) {
            nd->fd = fd; /* a TLS node starts its handshake once writable */
            if (nd->tls_ctx) nd->life.state = REDLOCK__CONN_CONNECTING;
            else redlock__conn_up(&nd->life);
            return 0;
        }
        if (errno == EINPROGRESS || errno == EINTR) {
            nd->fd = fd;
            nd->life.state = REDLOCK__CONN_CONNECTING;
            return 0;
        }
        redlock__conn_connect_words(why, REDLOCK__SOCK_CONNECT_WORDS, errno, sa->sa_family == AF_UNIX);
        close(fd);
        nd->cur++;
    }
    return REDLOCK_ERR_CONNECT;
}

/* The node's addresses; why gets the words of a failure. */
static int redlock__sock_resolve(struct redlock__sock_node *nd, char *why)
{
    nd->naddr = 0;
    nd->cur = 0;
    if (nd->unix_path) {
        struct sockaddr_un *su = (struct sockaddr_un *)&nd->addr[0];
        size_t n = strlen(nd->unix_path);
        if (n == 0 || n >= sizeof su->sun_path) {
            redlock__conn_connect_words(why, REDLOCK__SOCK_CONNECT_WORDS, ENAMETOOLONG, 1);
            return REDLOCK_ERR_CONNECT;
        }
        memset(su, 0, sizeof *su);
        su->sun_family = AF_UNIX;
        memcpy(su->sun_path, nd->unix_path, n + 1);
        nd->addrlen[0] = (socklen_t)sizeof *su;
        nd->naddr = 1;
    } else {
        struct addrinfo hints, *res = NULL, *ai;
        char port[16];
        int rc;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        port[redlock__resp_num(port, (unsigned long long)nd->port)] = 0;
        if ((rc = REDLOCK_SOCKET_GETADDRINFO(nd->host, port, &hints, &res)) != 0 || !res) {
            redlock__sock_resolve_words(why, REDLOCK__SOCK_CONNECT_WORDS, rc);
            return REDLOCK_ERR_CONNECT;
        }
        for (ai = res; ai && nd->naddr < REDLOCK__SOCK_MAX_ADDR; ai = ai->ai_next) {
            if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
                ai->ai_addrlen > (socklen_t)sizeof nd->addr[0])
                continue;
            memcpy(&nd->addr[nd->naddr], ai->ai_addr, ai->ai_addrlen);
            nd->addrlen[nd->naddr] = ai->ai_addrlen;
            nd->naddr++;
        }
        REDLOCK_SOCKET_FREEADDRINFO(res);
        if (!nd->naddr) {
            redlock__sock_resolve_words(why, REDLOCK__SOCK_CONNECT_WORDS, 0);
            return REDLOCK_ERR_CONNECT;
        }
    }
    return 0;
}

/* Queues a command: argv encoded, or (argv NULL) `bytes` encoded before
   (a cluster's command sent again). */
static int redlock__sock_queue_any(struct redlock__sock_node *nd, int argc, const char *const *argv,
                                   const size_t *argvlen, const char *bytes, size_t len, redlock_tag tag, int kind)
{
    size_t need;
    int64_t now = redlock_socket_now_us();
    int rc;
    if (nd->q.count >= (size_t)REDLOCK_SOCKET_MAX_PENDING) return REDLOCK_ERR_QUEUE_FULL;
    need = argv ? redlock_resp_encode(NULL, 0, argc, argv, argvlen) : len;
    if (!need) return REDLOCK_ERR_INVALID;
    if ((rc = redlock__conn_reserve(&nd->q, 64, (size_t)REDLOCK_SOCKET_MAX_PENDING)) != 0) return rc;
    if (nd->out_off && nd->out_len + need > nd->out_cap) {
        size_t keep = nd->out_len - nd->out_off;
        memmove(nd->out, nd->out + nd->out_off, keep);
        memset(nd->out + keep, 0, nd->out_len - keep);
        nd->out_len = keep;
        nd->out_off = 0;
    }
    if (nd->out_len - nd->out_off + need > (size_t)REDLOCK_SOCKET_MAX_OUTPUT) return REDLOCK_ERR_QUEUE_FULL;
    if (nd->out_len + need > nd->out_cap) {
        size_t cap = nd->out_cap ? nd->out_cap : 1024;
        char *no;
        while (cap < nd->out_len + need) cap *= 2;
        no = (char *)malloc(cap); /* not realloc: the old block is wiped */
        if (!no) return REDLOCK_ERR_NOMEM;
        if (nd->out_len) memcpy(no, nd->out, nd->out_len);
        if (nd->out) {
            memset(nd->out, 0, nd->out_cap);
            free(nd->out);
        }
        nd->out = no;
        nd->out_cap = cap;
    }
    if (argv) redlock_resp_encode(nd->out + nd->out_len, need, argc, argv, argvlen);
    else if (bytes) memcpy(nd->out + nd->out_len, bytes, need); /* bytes already encoded (a resend) */
    nd->out_len += need;
    /* written once the connection is open: owed from then, at the latest */
    redlock__conn_push(&nd->q, kind, tag, redlock__sock_opening(nd) ? nd->connect_deadline : now);
    redlock__conn_count_out(&nd->life, &nd->q, need);
    return 0;
}

static int redlock__sock_queue(struct redlock__sock_node *nd, int argc, const char *const *argv,
                               const size_t *argvlen, redlock_tag tag, int kind)
{
    return redlock__sock_queue_any(nd, argc, argv, argvlen, NULL, 0, tag, kind);
}

/* One command of the preamble (redlock_conn.h), adapter-sent (no tag). */
static int redlock__sock_queue_preamble(void *ctx, int kind, int argc, const char **argv, const size_t *len)
{
    return redlock__sock_queue((struct redlock__sock_node *)ctx, argc, argv, len, 0, kind);
}

static int redlock__sock_sub_sharded(const struct redlock__sock_node *nd);
static int redlock__sock_sub_want(void *arg, const char *key, size_t len);

/* Queues the preamble (redlock_conn.h): AUTH, SELECT, ROLE (a Sentinel
   group's server must be its primary), and INFO and CONFIG for the core's
   node health (not on a subscriber, nor in raw mode). A watch's: AUTH
   (the sentinels' login), SUBSCRIBE +switch-master. */
static int redlock__sock_preamble(redlock_socket *s, struct redlock__sock_node *nd)
{
    int info = !nd->sub && !redlock__sock_raw(s) && !s->_cfg.info_off;
    if (nd->watching) {
        const char *av[3];
        size_t al[3];
        int k = redlock__conn_auth_argv(nd->user, nd->pass, av, al), rc = 0;
        if (k) rc = redlock__sock_queue_preamble(nd, REDLOCK__CONN_AUTH, k, av, al);
        if (!rc) rc = redlock__sock_queue_preamble(nd, REDLOCK__CONN_SUB, redlock_sentinel_switch_argv(av, al), av, al);
        return rc;
    }
    if (nd->sub) /* a subscriber's own: AUTH, then every key (a sharded one's: its master's) */
        return redlock__conn_sub_open_queue(nd->user, nd->pass, &s->_subs.table, redlock__sock_sub_sharded(nd),
                                            redlock__sock_sub_sharded(nd) ? redlock__sock_sub_want : NULL, nd,
                                            redlock__sock_queue_preamble, nd);
    return redlock__conn_preamble_queue(nd->user, nd->pass, nd->db, nd->sentinels != NULL, info,
                                        redlock__sock_queue_preamble, nd);
}

/* ---- a Sentinel group: which server is its primary ---- */

static int redlock__sock_probe_wait(int fd, short events, int64_t until);
static int redlock__sock_probe_open(const redlock_node *node, int64_t until, char *words, size_t cap);

/* ---- a blocking conversation: a sentinel's, CLUSTER SLOTS ----
   redlock__sock_talk_* speak with host:port as nd is configured (plain
   text, or TLS with nd's context: the name checked is server_name if
   set, else host), blocking until `until`. Each answers 0 (or bytes
   read), -1 with words (the network's, a timeout, a close), or -3 with
   words: the server refused us over TLS (redlock_tls.h). */
#define REDLOCK__TALK_HANDSHAKE 0
#define REDLOCK__TALK_WRITE 1
#define REDLOCK__TALK_READ 2

static void redlock__sock_talk_close(struct redlock__sock_talk *t)
{
#ifdef REDLOCK_SOCKET_TLS
    SSL_free((SSL *)t->ssl); /* no close_notify: the server drops the connection either way */
#endif
    t->ssl = NULL;
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* One step of op on t (buf[0..n) to write, or room to read into): bytes
   moved (the handshake: 1), 0 the server closed (read), -1, -3. */
static int redlock__sock_talk_io(const struct redlock__sock_node *nd, struct redlock__sock_talk *t, int op, char *buf,
                                 size_t n, int64_t until, char *words, size_t cap)
{
    static const char *const doing[] = { "handshake", "write", "read" };
    (void)nd;
    (void)doing;
    for (;;) {
        short ev = op == REDLOCK__TALK_WRITE ? POLLOUT : POLLIN;
        ssize_t r;
#ifdef REDLOCK_SOCKET_TLS
        if (t->ssl) {
            SSL *ssl = (SSL *)t->ssl;
            int k = n > INT_MAX ? INT_MAX : (int)n, e;
            ERR_clear_error();
            k = op == REDLOCK__TALK_HANDSHAKE ? SSL_connect(ssl) : op == REDLOCK__TALK_WRITE ? SSL_write(ssl, buf, k)
                                                                                               : SSL_read(ssl, buf, k);
            if (k > 0) return k;
            e = SSL_get_error(ssl, k);
            if (e == SSL_ERROR_ZERO_RETURN && op == REDLOCK__TALK_READ) return 0;
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                redlock__tls_words(ssl, nd->tls_verify, e, doing[op], words, cap);
                return redlock__tls_refused(ssl, nd->tls_verify, e, op == REDLOCK__TALK_HANDSHAKE) ? -3 : -1;
            }
            ev = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        } else
#endif
        {
            r = op == REDLOCK__TALK_WRITE ? send(t->fd, buf, n, REDLOCK__SOCK_NOSIGNAL) : recv(t->fd, buf, n, 0);
            if (r >= 0) return (int)r;
            if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
                snprintf(words, cap, op == REDLOCK__TALK_WRITE ? "cannot write to it" : "closed the connection");
                return -1;
            }
        }
        if (redlock__sock_probe_wait(t->fd, ev, until) <= 0) {
            snprintf(words, cap, "timed out");
            return -1;
        }
    }
}

/* Opens t to host:port (TCP, then TLS's handshake if nd speaks TLS). */
static int redlock__sock_talk_open(redlock_socket *s, const struct redlock__sock_node *nd, struct redlock__sock_talk *t,
                                   const char *host, int port, int64_t until, char *words, size_t cap)
{
    redlock_node sn;
    memset(&sn, 0, sizeof sn);
    sn.host = host;
    sn.port = port;
    t->ssl = NULL;
    if ((t->fd = redlock__sock_probe_open(&sn, until, words, cap)) < 0) return -1;
#ifdef REDLOCK_SOCKET_TLS
    if (nd->tls_ctx) {
        int rc;
        if (!(t->ssl = redlock__sock_tls_session(s, nd, host, t->fd))) {
            snprintf(words, cap, "TLS setup: out of memory");
            redlock__sock_talk_close(t);
            return -1;
        }
        if ((rc = redlock__sock_talk_io(nd, t, REDLOCK__TALK_HANDSHAKE, NULL, 0, until, words, cap)) < 0) {
            if (rc == -1 && !strcmp(words, "timed out")) snprintf(words, cap, "TLS handshake: timed out");
            redlock__sock_talk_close(t);
            return rc;
        }
    }
#endif
    (void)s;
    (void)nd;
    return 0;
}

/* Writes buf[0..n) whole. */
static int redlock__sock_talk_write(const struct redlock__sock_node *nd, struct redlock__sock_talk *t, char *buf,
                                    size_t n, int64_t until, char *words, size_t cap)
{
    size_t off = 0;
    while (off < n) {
        int w = redlock__sock_talk_io(nd, t, REDLOCK__TALK_WRITE, buf + off, n - off, until, words, cap);
        if (w < 0) return w;
        off += (size_t)w;
    }
    return 0;
}

/* AUTH (when pass asks for it), command 1 and command 2 (argc2 0: none),
   written at once; a password in the buffer is wiped. */
static int redlock__sock_talk_ask(const struct redlock__sock_node *nd, struct redlock__sock_talk *t, const char *user,
                                  const char *pass, int argc, const char *const *argv, const size_t *argvlen,
                                  int argc2, const char *const *argv2, const size_t *argvlen2, int64_t until,
                                  char *words, size_t cap)
{
    const char *av[3];
    size_t al[3], na = 0, nq, nm = 0, n;
    int ac = redlock__conn_auth_argv(user, pass, av, al), rc;
    char *buf;
    if (ac) na = redlock_resp_encode(NULL, 0, ac, av, al);
    nq = redlock_resp_encode(NULL, 0, argc, argv, argvlen);
    if (argc2) nm = redlock_resp_encode(NULL, 0, argc2, argv2, argvlen2);
    n = na + nq + nm;
    if (!(buf = (char *)malloc(n))) {
        snprintf(words, cap, "out of memory");
        return -1;
    }
    if (ac) redlock_resp_encode(buf, na, ac, av, al);
    redlock_resp_encode(buf + na, nq, argc, argv, argvlen);
    if (argc2) redlock_resp_encode(buf + na + nq, nm, argc2, argv2, argvlen2);
    rc = redlock__sock_talk_write(nd, t, buf, n, until, words, cap);
    memset(buf, 0, n); /* a password */
    free(buf);
    return rc;
}

/* Reads more of the answer into p: 0, -1, -3 (a close or what is not
   RESP is -1 with its words). */
static int redlock__sock_talk_read(const struct redlock__sock_node *nd, struct redlock__sock_talk *t,
                                   redlock_resp_parser *p, int64_t until, char *words, size_t cap)
{
    char in[4096];
    int got = redlock__sock_talk_io(nd, t, REDLOCK__TALK_READ, in, sizeof in, until, words, cap);
    if (got < 0) return got;
    if (got == 0 || redlock_resp_feed(p, in, (size_t)got) != 0) {
        snprintf(words, cap, got == 0 ? "closed the connection" : "answered what is not RESP");
        return -1;
    }
    return 0;
}

/* Asks sentinel g->next which server is the primary (and, if `history`,
   when the group last failed over: *ago_ms, -1 if it never did or the
   sentinel does not say), on g->talk (opened, in TLS as nd speaks it,
   and logged in first if closed; closed on any failure): blocking,
   bounded by connect_timeout_ms (as the name lookup before a connection
   is). 0 and host/port, or -1 / -3 (it refused us over TLS) with words. */
static int redlock__sock_sentinel_query(redlock_socket *s, const struct redlock__sock_node *nd, int history, char *host,
                                        size_t hcap, int *port, int64_t *ago_ms, char *words, size_t cap)
{
    struct redlock__sock_sentinels *g = nd->sentinels;
    redlock_resp_parser p;
    const char *qv[3], *mv[3];
    size_t ql[3], ml[3];
    int64_t until = redlock_socket_now_us() + s->_cfg.connect_timeout_ms * 1000;
    int rc = -1, auth = 0, named = 0, k, refused;
    *ago_ms = -1;
    refused = 0;
    if (g->talk.fd < 0) { /* a new connection logs in first */
        if ((k = redlock__sock_talk_open(s, nd, &g->talk, g->host[g->next], g->port[g->next], until, words, cap)) < 0)
            return k;
        auth = g->pass && g->pass[0];
    }
    redlock_sentinel_ask_argv(g->group, qv, ql);
    redlock_sentinel_master_argv(g->group, mv, ml);
    k = redlock__sock_talk_ask(nd, &g->talk, auth ? g->user : NULL, auth ? g->pass : NULL, 3, qv, ql, history ? 3 : 0,
                               mv, ml, until, words, cap);
    refused = k == -3;
    redlock_resp_parser_init(&p);
    while (k == 0) {
        const redlock_reply *r;
        k = redlock_resp_next(&p, &r);
        if (k < 0) {
            snprintf(words, cap, "answered what is not RESP");
            break;
        }
        if (k > 0 && auth) { /* AUTH's answer */
            if (r->type != REDLOCK_REPLY_STATUS) {
                char said[64];
                redlock__conn_printable(said, sizeof said, r->str ? r->str : "", r->str ? r->len : 0);
                snprintf(words, cap, "refused the login (%s)", said);
                break;
            }
            auth = 0;
            k = 0;
            continue;
        }
        if (k > 0 && named) { /* SENTINEL MASTER's: when the group last failed over */
            int64_t ago;
            if (redlock_sentinel_last_failover(r, &ago) == 1) *ago_ms = ago;
            rc = 0;
            break;
        }
        if (k > 0) {
            k = redlock_sentinel_primary_addr(r, host, hcap, port);
            if (k == 0 && history) {
                named = 1;
                continue;
            }
            if (k == 0) {
                rc = 0;
            } else if (k == 1) {
                snprintf(words, cap, "does not know the group '%.40s'", g->group);
            } else if (r->type == REDLOCK_REPLY_ERROR) {
                char said[64];
                redlock__conn_printable(said, sizeof said, r->str, r->len);
                snprintf(words, cap, "refused (%s)", said);
            } else {
                snprintf(words, cap, "answered no address");
            }
            break;
        }
        k = redlock__sock_talk_read(nd, &g->talk, &p, until, words, cap);
        refused = k == -3;
    }
    if (rc == 0 && redlock_resp_buffered(&p)) rc = -1, snprintf(words, cap, "answered more than asked");
    redlock_resp_parser_free(&p);
    if (rc != 0) redlock__sock_talk_close(&g->talk);
    return rc == 0 ? 0 : refused ? -3 : -1;
}

/* The primary of nd's group as its sentinels name it now, asked in turn
   from the one that answered last (history: and when the group last
   failed over). 0 and host/port, or CONNECT with why; TLS when one
   refused us over TLS (its words then: the refusal no retry cures). */
static int redlock__sock_sentinels_say(redlock_socket *s, const struct redlock__sock_node *nd, int history,
                                       char *host, size_t hcap, int *port, int64_t *ago_ms, char *why)
{
    struct redlock__sock_sentinels *g = nd->sentinels;
    char words[REDLOCK__SOCK_CONNECT_WORDS];
    int k, rc = REDLOCK_ERR_CONNECT;
    for (k = 0; k < g->count; k++) {
        int q = redlock__sock_sentinel_query(s, nd, history, host, hcap, port, ago_ms, words, sizeof words);
        if (q == 0) return 0;
        if (rc != REDLOCK_ERR_TLS || q == -3)
            snprintf(why, REDLOCK__SOCK_CONNECT_WORDS, "sentinel %.30s:%d %.80s", g->host[g->next], g->port[g->next],
                     words);
        if (q == -3) rc = REDLOCK_ERR_TLS;
        g->next = (g->next + 1) % g->count;
    }
    return rc;
}

/* The primary of nd's group, for a new connection: nd->host/port set, 0;
   or CONNECT / TLS with why. A primary other than the one named before is a
   failover now; a first answer tells the group's last failover (redlock.h
   section 4, Restarts). */
static int redlock__sock_ask_sentinels(redlock_socket *s, struct redlock__sock_node *nd, char *why)
{
    struct redlock__sock_sentinels *g = nd->sentinels;
    char host[REDLOCK_SENTINEL_MAX_HOST + 1], *copy;
    int port = 0, rc;
    int64_t ago;
    if ((rc = redlock__sock_sentinels_say(s, nd, !g->named, host, sizeof host, &port, &ago, why)) != 0) return rc;
    if (g->named && nd->port == port && strcmp(nd->host, host) == 0) return 0;
    if (!(copy = redlock__sock_strdup(host))) return REDLOCK_ERR_NOMEM;
#ifndef REDLOCK_SOCKET_NO_CORE
    if ((g->named || ago >= 0) && !nd->sub && s->_core) {
        s->_in_cb++; /* the core's event hook may run */
        redlock_node_failed_over(&s->_client, nd->index, g->named ? 0 : ago);
        s->_in_cb--;
    }
#endif
    free(nd->host);
    nd->host = copy;
    nd->port = port;
    g->named = 1;
    return 0;
}

#ifndef REDLOCK_SOCKET_NO_CORE
/* A core command was just queued on a Sentinel group's connection: do the
   sentinels still name its server as the primary? Asked after the round
   began and before its reply is read, so a reply counts only if the
   group had not failed over when the round began (a holder cannot renew
   on a former primary that Sentinel has not yet turned into a replica).
   If they name another server, or none answers, the connection fails
   and the command with it. */
static void redlock__sock_confirm_primary(redlock_socket *s, struct redlock__sock_node *nd)
{
    char host[REDLOCK_SENTINEL_MAX_HOST + 1], why[REDLOCK__SOCK_CONNECT_WORDS];
    int port = 0, rc;
    int64_t ago;
    if ((rc = redlock__sock_sentinels_say(s, nd, 0, host, sizeof host, &port, &ago, why)) != 0) {
        redlock__sock_fail(s, nd, rc, why);
        return;
    }
    if (port == nd->port && strcmp(host, nd->host) == 0) return;
    s->_in_cb++; /* the core's event hook may run */
    redlock_node_failed_over(&s->_client, nd->index, 0);
    s->_in_cb--;
    snprintf(why, sizeof why, "the group failed over to %.40s:%d", host, port);
    redlock__sock_fail(s, nd, REDLOCK_ERR_TRANSPORT, why);
}
#endif

/* Opens the connection and queues the preamble in front of everything. */
static int redlock__sock_open(redlock_socket *s, struct redlock__sock_node *nd)
{
    char why[REDLOCK__SOCK_CONNECT_WORDS];
    int rc;
    redlock__sock_close(s, nd);
    why[0] = 0;
    nd->life.words[0] = 0; /* the last failure's words go with its connection; the status stays */
    nd->life.server[0] = 0;
    nd->connect_deadline = redlock_socket_now_us() + s->_cfg.connect_timeout_ms * 1000;
    rc = nd->sentinels ? redlock__sock_ask_sentinels(s, nd, why) : 0;
    if (rc == 0) rc = redlock__sock_resolve(nd, why);
    if (rc == 0) rc = redlock__sock_try_addr(s, nd, why);
    if (rc == 0) rc = redlock__sock_preamble(s, nd);
    if (rc != 0) { /* CONNECT, TLS (a sentinel refused us), or NOMEM (a fresh queue is neither full nor sent a bad command) */
        redlock__sock_close(s, nd);
        redlock__conn_set(&nd->life, rc, rc == REDLOCK_ERR_CONNECT || rc == REDLOCK_ERR_TLS ? why : NULL);
        nd->failures++;
        return nd->life.status;
    }
    return 0;
}

/* What the connection shows before a command is written to it
   (redlock_conn.h): bytes the parser holds count as unasked. */
static int redlock__sock_send_probe(struct redlock__sock_node *nd)
{
#ifdef REDLOCK_SOCKET_TLS
    return redlock__conn_send_probe(&nd->life, &nd->q, nd->fd, redlock_resp_buffered(&nd->parser), redlock__tls_idle,
                                    nd->ssl);
#else
    return redlock__conn_send_probe(&nd->life, &nd->q, nd->fd, redlock_resp_buffered(&nd->parser), NULL, NULL);
#endif
}

/* Sends a command on connection nd (argv, or bytes encoded before: see
   redlock__sock_queue_any), opening it first if it is down. */
static int redlock__sock_send_on(redlock_socket *s, struct redlock__sock_node *nd, int argc, const char *const *argv,
                                 const size_t *argvlen, const char *bytes, size_t len, redlock_tag tag, int kind)
{
    int rc, idle;
    idle = redlock__sock_send_probe(nd);
    if (idle == REDLOCK__CONN_IDLE_CLOSED) {
        redlock__sock_fail(s, nd, REDLOCK_ERR_TRANSPORT, NULL); /* reopened below, for this command */
    } else if (idle == REDLOCK__CONN_IDLE_UNASKED) {
        /* a node that misbehaves is not trusted with this command; the
           next one reconnects */
        redlock__sock_fail(s, nd, REDLOCK_ERR_PROTOCOL, NULL);
        redlock__sock_timer_report(s);
        return REDLOCK_ERR_PROTOCOL;
    }
    if (nd->life.state == REDLOCK__CONN_DOWN && (rc = redlock__sock_open(s, nd)) != 0) {
        redlock__sock_report(s, nd);
        return rc;
    }
    rc = redlock__sock_queue_any(nd, argc, argv, argvlen, bytes, len, tag, kind);
    if (rc == REDLOCK_ERR_NOMEM) nd->life.status = REDLOCK_ERR_NOMEM;
    redlock__sock_report(s, nd);
    redlock__sock_timer_report(s);
    return rc;
}

static int redlock__sock_send_cmd(redlock_socket *s, int node, int argc, const char *const *argv,
                                  const size_t *argvlen, redlock_tag tag)
{
    if (!redlock_resp_encode(NULL, 0, argc, argv, argvlen)) return REDLOCK_ERR_INVALID;
    return redlock__sock_send_on(s, &s->_nodes[node], argc, argv, argvlen, NULL, 0, tag, REDLOCK__CONN_CORE);
}

#ifndef REDLOCK_SOCKET_NO_CORE
static int redlock__sock_cluster_send(redlock_socket *s, struct redlock__sock_cluster *cl, const redlock_command *cmd,
                                      redlock_tag tag);
#endif

REDLOCK_SOCKET_API int redlock_socket_send(redlock_socket *s, int node, int argc, const char *const *argv,
                                           const size_t *argvlen, redlock_tag tag)
{
    int rc, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_cl[node]) { /* routed by its key, as the core's */
        redlock_command c;
        int k;
        rc = REDLOCK_ERR_INVALID;
        if (argc >= 1 && argc <= REDLOCK_MAX_ARGS && argv && argvlen) {
            c.argc = argc;
            for (k = 0; k < argc; k++) c.argv[k] = argv[k], c.argvlen[k] = argvlen[k];
            rc = redlock__sock_cluster_send(s, s->_cl[node], &c, tag);
        }
        redlock__sock_leave(s, entered, 1);
        return rc;
    }
#endif
    rc = redlock__sock_send_cmd(s, node, argc, argv, argvlen, tag);
    redlock__sock_leave(s, entered, 1);
    return rc;
}

/* The master (index in the map) connection nd is for, or -1. */
static int redlock__sock_cluster_master_of(const struct redlock__sock_cluster *cl, const struct redlock__sock_node *nd)
{
    int k;
    for (k = 0; k < cl->c.map.masters; k++)
        if (cl->c.map.master[k].port == nd->port && nd->host && strcmp(cl->c.map.master[k].host, nd->host) == 0) return k;
    return -1;
}

/* ---- a cluster node's subscribers (release notifications) ----
   Plain until a master's INFO says sharded pub/sub (Redis 7), and on
   older servers: the node's own subscriber (cl->sub[0]) SUBSCRIBEs on the
   first seed, as any node's. Sharded: a subscriber per master of the
   slot map, each pointed at its master when needed (as the command
   connections are), SSUBSCRIBing the keys whose slot it serves; all of
   them are open while a lock listens (at most REDLOCK_SOCKET_CLUSTER_CONNS:
   a further master's keys are not heard). */

/* Does subscriber nd speak sharded pub/sub (a sharded cluster node's)? */
static int redlock__sock_sub_sharded(const struct redlock__sock_node *nd)
{
    return nd->cl && nd->cl->sharded;
}

/* The master of the map (not a replica) sharded subscriber nd is
   pointed at, or -1. */
static int redlock__sock_sub_master(const struct redlock__sock_node *nd)
{
    int k = redlock__sock_cluster_master_of(nd->cl, nd);
    return k >= 0 && nd->cl->c.map.master[k].replica_of < 0 ? k : -1;
}

/* The want filter of a sharded subscriber's opening (arg: it): a key
   whose slot its master serves. */
static int redlock__sock_sub_want(void *arg, const char *key, size_t len)
{
    const struct redlock__sock_node *nd = (const struct redlock__sock_node *)arg;
    int k = redlock__sock_sub_master(nd);
    return k >= 0 && redlock_cluster_owner(&nd->cl->c.map, redlock_cluster_slot(key, len)) == k;
}

/* The sharded subscriber of cl pointed at master k; with `point`, when
   none is, a closed one that serves no master of the map is pointed at
   it. NULL: none (every one serves another master: k is not heard). */
static struct redlock__sock_node *redlock__sock_cluster_sub(struct redlock__sock_cluster *cl, int k, int point)
{
    const redlock_cluster_master *m = &cl->c.map.master[k];
    struct redlock__sock_node *spare = NULL, *nd;
    char *copy;
    int j;
    for (j = 0; j < REDLOCK_SOCKET_CLUSTER_CONNS; j++) {
        nd = cl->sub[j];
        if (nd->port == m->port && nd->host && strcmp(nd->host, m->host) == 0) return nd;
        if (!spare && nd->life.state == REDLOCK__CONN_DOWN && redlock__sock_sub_master(nd) < 0) spare = nd;
    }
    if (!point || !spare || !(copy = redlock__sock_strdup(m->host))) return NULL;
    free(spare->host);
    spare->host = copy;
    spare->port = m->port;
    return spare;
}

/* Is subscriber nd one to have open while a lock listens: a node's own
   (a plain cluster node's: on its first seed), or a sharded cluster
   node's pointed at a master of the map (the first, should two be),
   unless they wait for a new map (resub)? */
static int redlock__sock_sub_wanted(const struct redlock__sock_node *nd)
{
    int k;
    if (!nd->cl) return 1;
    if (!nd->cl->sharded) return nd == nd->cl->sub[0];
    k = redlock__sock_sub_master(nd);
    return !nd->cl->resub && k >= 0 && redlock__sock_cluster_sub(nd->cl, k, 0) == nd; /* the master's first */
}

/* When a cluster node whose subscribers wait for a new slot map may ask
   for it (INT64_MAX: none waits, or no lock listens). */
static int64_t redlock__sock_resub_due(const redlock_socket *s)
{
    int64_t d = INT64_MAX;
    int i;
    for (i = 0; i < REDLOCK_MAX_NODES && s->_subs.table.count; i++) {
        const struct redlock__sock_cluster *cl = s->_cl[i];
        int64_t due;
        if (!cl || !cl->resub) continue;
        due = cl->c.asked_us == INT64_MIN ? 0 : cl->c.asked_us + (int64_t)REDLOCK_CLUSTER_REFRESH_MS * 1000;
        if (due < d) d = due;
    }
    return d;
}

#ifndef REDLOCK_SOCKET_NO_CORE
/* ---- a Redis Cluster node (redlock_cluster.h) ----
   One node of the core's quorum; each command goes to the master that
   serves its key's slot, over that master's connection (opened when first
   needed, AUTH / INFO / CONFIG as any node's, no SELECT). The slot map is
   asked of a master it knows or a seed, blocking (as a name lookup is),
   bounded by connect_timeout_ms, at most every REDLOCK_CLUSTER_REFRESH_MS
   once a redirection or a lost master made it stale. */

static redlock__sock_cluster_cmd *redlock__sock_cluster_find(struct redlock__sock_cluster *cl, redlock_tag tag)
{
    size_t k;
    for (k = 0; k < cl->ncmd; k++)
        if (cl->cmd[k].tag == tag) return &cl->cmd[k];
    return NULL;
}

static void redlock__sock_cluster_forget(struct redlock__sock_cluster *cl, redlock_tag tag)
{
    redlock__sock_cluster_cmd *c = redlock__sock_cluster_find(cl, tag);
    if (!c) return;
    memset(c->bytes, 0, c->len);
    free(c->bytes);
    *c = cl->cmd[--cl->ncmd];
}

/* The connection for master k: the one open to it, else one that owes
   nothing (a down one first), pointed at it; NULL when all are busy. */
static struct redlock__sock_node *redlock__sock_cluster_conn(redlock_socket *s, struct redlock__sock_cluster *cl, int k)
{
    const redlock_cluster_master *m = &cl->c.map.master[k];
    struct redlock__sock_node *down = NULL, *idle = NULL, *nd;
    char *copy;
    int j;
    for (j = 0; j < REDLOCK_SOCKET_CLUSTER_CONNS; j++) {
        nd = cl->conn[j];
        if (nd->port == m->port && nd->host && strcmp(nd->host, m->host) == 0) return nd;
        if (nd->q.count || nd->out_off < nd->out_len) continue;
        if (!down && nd->life.state == REDLOCK__CONN_DOWN) down = nd;
        if (!idle) idle = nd;
    }
    if (!(nd = down ? down : idle) || !(copy = redlock__sock_strdup(m->host))) return NULL;
    if (nd->life.state != REDLOCK__CONN_DOWN) {
        redlock__sock_close(s, nd);
        redlock__sock_report(s, nd);
    }
    free(nd->host);
    nd->host = copy;
    nd->port = m->port;
    return nd;
}

/* Asks host:port for CLUSTER SLOTS (after AUTH as the node's, in TLS
   as it speaks) and loads the answer: blocking, until `until`. 0, or -1
   / -3 (it refused us over TLS) with words. */
static int redlock__sock_cluster_ask(redlock_socket *s, struct redlock__sock_cluster *cl, const char *host, int port,
                                     int64_t until, char *words, size_t cap)
{
    const struct redlock__sock_node *n0 = cl->conn[0];
    struct redlock__sock_talk t;
    redlock_resp_parser p;
    const char *qv[2] = { "CLUSTER", "SLOTS" };
    size_t ql[2] = { 7, 5 };
    int k, auth = n0->pass && n0->pass[0], rc = -1, refused;
    if ((k = redlock__sock_talk_open(s, n0, &t, host, port, until, words, cap)) < 0) return k;
    k = redlock__sock_talk_ask(n0, &t, n0->user, n0->pass, 2, qv, ql, 0, NULL, NULL, until, words, cap);
    refused = k == -3;
    redlock_resp_parser_init(&p);
    while (k == 0) {
        const redlock_reply *r;
        int failovers = 0;
        k = redlock_resp_next(&p, &r);
        if (k < 0) {
            snprintf(words, cap, "answered what is not RESP");
            break;
        }
        if (k > 0 && auth) { /* AUTH's answer */
            if (r->type != REDLOCK_REPLY_STATUS) {
                char said[64];
                redlock__conn_printable(said, sizeof said, r->str ? r->str : "", r->str ? r->len : 0);
                snprintf(words, cap, "refused the login (%s)", said);
                break;
            }
            auth = 0;
            k = 0;
            continue;
        }
        if (k > 0) {
            if (redlock_cluster_update(&cl->c, r, host, &failovers) >= 0) {
                rc = 0;
                if (failovers > 0 && s->_core) { /* a replica took its master's slots: keys may be lost */
                    s->_in_cb++;
                    redlock_node_failed_over(&s->_client, cl->node, 0);
                    s->_in_cb--;
                }
            } else if (r->type == REDLOCK_REPLY_ERROR) {
                char said[64];
                redlock__conn_printable(said, sizeof said, r->str, r->len);
                snprintf(words, cap, "refused CLUSTER SLOTS (%s)", said);
            } else {
                snprintf(words, cap, "answered no slot map");
            }
            break;
        }
        k = redlock__sock_talk_read(n0, &t, &p, until, words, cap);
        refused = k == -3;
    }
    redlock_resp_parser_free(&p);
    redlock__sock_talk_close(&t);
    return rc == 0 ? 0 : refused ? -3 : -1;
}

/* A new slot map: asked of the masters it knows (a seed may be gone),
   then of the seeds, until one answers or connect_timeout_ms has passed.
   When none answers, the node's status says why. */
static void redlock__sock_cluster_refresh(redlock_socket *s, struct redlock__sock_cluster *cl)
{
    int64_t now = redlock_socket_now_us(), until = now + s->_cfg.connect_timeout_ms * 1000;
    char words[REDLOCK__SOCK_CONNECT_WORDS], why[REDLOCK__SOCK_CONNECT_WORDS];
    int k, known = cl->c.map.masters, rc = REDLOCK_ERR_CONNECT;
    redlock_cluster_refresh_asked(&cl->c, now);
    why[0] = 0;
    for (k = 0; k < known + cl->seeds && redlock_socket_now_us() < until; k++) {
        char host[REDLOCK_CLUSTER_MAX_HOST + 1];
        int port, q;
        if (k < known) {
            if (cl->c.map.master[k].replica_of >= 0) continue;
            snprintf(host, sizeof host, "%s", cl->c.map.master[k].host);
            port = cl->c.map.master[k].port;
        } else {
            snprintf(host, sizeof host, "%s", cl->seed_host[k - known]);
            port = cl->seed_port[k - known];
        }
        if ((q = redlock__sock_cluster_ask(s, cl, host, port, until, words, sizeof words)) == 0) return;
        if (rc != REDLOCK_ERR_TLS || q == -3) snprintf(why, sizeof why, "cluster %.30s:%d %.80s", host, port, words);
        if (q == -3) rc = REDLOCK_ERR_TLS; /* the refusal no retry cures, and its words */
    }
    redlock__conn_set(&cl->conn[0]->life, rc, why[0] ? why : "cluster: no slot map within the connect timeout");
}

/* A core command for a cluster node: kept (to follow a redirection),
   and sent to its slot's master. */
static int redlock__sock_cluster_send(redlock_socket *s, struct redlock__sock_cluster *cl, const redlock_command *cmd,
                                      redlock_tag tag)
{
    struct redlock__sock_node *nd;
    redlock__sock_cluster_cmd *c;
    size_t len = redlock_resp_encode(NULL, 0, cmd->argc, cmd->argv, cmd->argvlen);
    int at, rc;
    char why[64];
    if (!len) return REDLOCK_ERR_INVALID;
    if (redlock_cluster_cross_slot(cmd)) { /* the cluster would answer CROSSSLOT: say why instead */
        redlock__conn_set(&cl->conn[0]->life, REDLOCK_ERR_INVALID,
                          "cluster: the lock's keys are in different slots (a fenced lock's key needs a {hash tag})");
        return REDLOCK_ERR_INVALID;
    }
    if (redlock_cluster_refresh_due(&cl->c, redlock_socket_now_us())) redlock__sock_cluster_refresh(s, cl);
    at = redlock_cluster_route(&cl->c, cmd);
    if (at == REDLOCK_CLUSTER_ANY) at = redlock_cluster_owner(&cl->c.map, 0); /* no key: any master */
    if (at < 0) {
        if (cl->c.map.masters) { /* a map that leaves the slot out: CLUSTERDOWN, a failover under way */
            const char *key = "";
            size_t klen = 0;
            redlock_cluster_command_key(cmd, &key, &klen);
            snprintf(why, sizeof why, "cluster: no master serves slot %u", redlock_cluster_slot(key, klen));
            redlock__conn_set(&cl->conn[0]->life, REDLOCK_ERR_CONNECT, why);
            redlock_cluster_stale(&cl->c);
            return REDLOCK_ERR_CONNECT;
        }
        /* no map: why the seeds gave none (TLS: a refusal, which ends an acquire) */
        return cl->conn[0]->life.status == REDLOCK_ERR_TLS ? REDLOCK_ERR_TLS : REDLOCK_ERR_CONNECT;
    }
    if (!(nd = redlock__sock_cluster_conn(s, cl, at))) {
        redlock__conn_set(&cl->conn[0]->life, REDLOCK_ERR_CONNECT,
                          "cluster: every connection busy (more masters than REDLOCK_SOCKET_CLUSTER_CONNS)");
        return REDLOCK_ERR_CONNECT;
    }
    if (cl->ncmd == cl->capcmd) {
        size_t cap = cl->capcmd ? cl->capcmd * 2 : 16;
        redlock__sock_cluster_cmd *more = (redlock__sock_cluster_cmd *)realloc(cl->cmd, cap * sizeof *more);
        if (!more) return REDLOCK_ERR_NOMEM;
        cl->cmd = more;
        cl->capcmd = cap;
    }
    c = &cl->cmd[cl->ncmd];
    if (!(c->bytes = (char *)malloc(len))) return REDLOCK_ERR_NOMEM;
    redlock_resp_encode(c->bytes, len, cmd->argc, cmd->argv, cmd->argvlen);
    c->len = len;
    c->tag = tag;
    c->redirects = 0;
    cl->ncmd++;
    rc = redlock__sock_send_on(s, nd, 0, NULL, NULL, c->bytes, len, tag, REDLOCK__CONN_CORE);
    if (rc != 0) redlock__sock_cluster_forget(cl, tag);
    return rc;
}

/* The reply to a cluster's command: the core's, or (MOVED, ASK) the
   command goes again where it says, once (redlock_cluster_answer). */
static void redlock__sock_cluster_reply(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag,
                                        const redlock_reply *r)
{
    struct redlock__sock_cluster *cl = nd->cl;
    redlock__sock_cluster_cmd *c = redlock__sock_cluster_find(cl, tag);
    struct redlock__sock_node *to = NULL;
    redlock_cluster_step st;
    const char *av[1];
    size_t al[1];
    int rc;
    if (!c) {
        redlock__sock_deliver_reply(s, nd, tag, r);
        return;
    }
    redlock_cluster_answer(&cl->c, r, nd->host, c->redirects, &st);
    if (st.failover && s->_core) {
        s->_in_cb++;
        redlock_node_failed_over(&s->_client, cl->node, 0);
        s->_in_cb--;
    }
    if (st.action != REDLOCK_CLUSTER_PASS) to = redlock__sock_cluster_conn(s, cl, st.master);
    if (!to) { /* passed on: an error reply is a failed vote */
        if (r->type == REDLOCK_REPLY_ERROR && nd != cl->conn[0]) /* the node status shows its words */
            redlock__conn_heard(&cl->conn[0]->life, r->str, r->len);
        redlock__sock_cluster_forget(cl, tag);
        redlock__sock_deliver_reply(s, nd, tag, r);
        return;
    }
    c->redirects++;
    rc = 0;
    if (st.action == REDLOCK_CLUSTER_ASKING) {
        redlock_cluster_asking_argv(av, al);
        rc = redlock__sock_send_on(s, to, 1, av, al, NULL, 0, 0, REDLOCK__CONN_ASKING);
    }
    /* found again: ASKING's send may have failed other commands (and moved this one in the table) */
    if (rc == 0 && (c = redlock__sock_cluster_find(cl, tag)) != NULL)
        rc = redlock__sock_send_on(s, to, 0, NULL, NULL, c->bytes, c->len, tag, REDLOCK__CONN_CORE);
    if (rc != 0) redlock__sock_deliver_error(s, nd, tag, rc);
}

/* A master connection's INFO and CONFIG: a master restarted (or seen
   first young and not durable) is the node's restart; the core keeps one
   life per node, so it is told failed_over, not set_life. */
static void redlock__sock_cluster_life(redlock_socket *s, struct redlock__sock_node *nd)
{
    int64_t ago;
    int k = redlock__sock_cluster_master_of(nd->cl, nd);
    if (k >= 0 && redlock_cluster_life(&nd->cl->c, k, &nd->health.life, &ago))
        redlock_node_failed_over(&s->_client, nd->node, ago);
}

static void redlock__sock_subs_tend(redlock_socket *s);

/* Before the subscribers are tended: a sharded cluster node's that
   wait for a new slot map (resub) get it when it may be asked
   (bounded as the command path's: REDLOCK_CLUSTER_REFRESH_MS), then every
   master of the map gets a subscriber. */
static void redlock__sock_cluster_subs_point(redlock_socket *s, struct redlock__sock_cluster *cl)
{
    int k;
    if (!s->_subs.table.count) return;
    if (cl->resub) {
        if (redlock_cluster_refresh_due(&cl->c, redlock_socket_now_us())) redlock__sock_cluster_refresh(s, cl);
        else if (cl->c.stale) return; /* asked lately: its deadline is redlock__sock_resub_due */
        cl->resub = 0;                /* refreshed (by the command path too), or tried */
    }
    for (k = 0; k < cl->c.map.masters; k++)
        if (cl->c.map.master[k].replica_of < 0) redlock__sock_cluster_sub(cl, k, 1);
}

/* A sharded subscriber's master no longer serves a key's slot (MOVED to
   an SSUBSCRIBE, a sunsubscribe nobody asked for: RESHARD): the map is
   stale, and every subscriber of the node closes, to reopen once it is
   asked again (redlock__sock_cluster_subs_point) - at once, or when
   REDLOCK_CLUSTER_REFRESH_MS allows: not a refusal, no backoff. */
static void redlock__sock_cluster_reshard(redlock_socket *s, struct redlock__sock_cluster *cl)
{
    int j;
    redlock_cluster_stale(&cl->c);
    cl->resub = 1;
    for (j = 0; j < REDLOCK_SOCKET_CLUSTER_CONNS; j++) {
        if (cl->sub[j]->life.state == REDLOCK__CONN_DOWN) continue;
        redlock__sock_close(s, cl->sub[j]);
        redlock__sock_report(s, cl->sub[j]);
    }
}

/* A master connection's INFO (answered: str/len its text): sharded pub/sub
   (redlock__conn_info_sharded) on every master that said, else plain for
   good (a master of an older version: its SPUBLISH would fail). A change
   is told to the core (the releases built from then on) and the node's
   subscribers reopen the new way. */
static void redlock__sock_cluster_info(redlock_socket *s, struct redlock__sock_cluster *cl, const char *str, size_t len)
{
    int j, on;
    if (!redlock__conn_info_sharded(str, len)) cl->old = 1;
    on = !cl->old;
    if (cl->sharded == on) return;
    redlock_node_set_sharded(&s->_client, cl->node, on);
    cl->sharded = on;
    cl->resub = 0;
    if (!cl->sub[0]) return; /* notify_off */
    for (j = 0; j < REDLOCK_SOCKET_CLUSTER_CONNS; j++) {
        if (cl->sub[j]->life.state == REDLOCK__CONN_DOWN) continue;
        redlock__sock_close(s, cl->sub[j]);
        redlock__sock_report(s, cl->sub[j]);
    }
    if (!on) { /* back on the first seed (no memory: where it is, a server of the cluster all the same) */
        char *copy = redlock__sock_strdup(cl->seed_host[0]);
        if (copy) {
            free(cl->sub[0]->host);
            cl->sub[0]->host = copy;
            cl->sub[0]->port = cl->seed_port[0];
        }
    }
    redlock__sock_subs_tend(s);
}
#endif

static void redlock__sock_flush(redlock_socket *s, struct redlock__sock_node *nd)
{
    while (nd->life.state == REDLOCK__CONN_UP && nd->out_off < nd->out_len) {
        ssize_t w = redlock__sock_send(nd, nd->out + nd->out_off, nd->out_len - nd->out_off);
        if (w > 0) {
            nd->out_off += (size_t)w;
        } else if (w == -1) {
            break;
        } else {
            /* a TLS server that refused us (TLS 1.3 judges a client
               certificate after the handshake) sent an alert before it
               closed: read it, it says why */
            char alert[256];
            if (w == -2 && nd->ssl && redlock__sock_recv(nd, alert, sizeof alert) == -3) w = -3;
            redlock__sock_fail(s, nd, w == -3 ? REDLOCK_ERR_TLS : REDLOCK_ERR_TRANSPORT, nd->life.words);
            return;
        }
    }
    if (nd->out_off == nd->out_len) redlock__sock_clear_out(nd);
    redlock__sock_report(s, nd);
}

/* Connected: commands queued meanwhile get command_timeout_ms from now. */
static void redlock__sock_rebase(struct redlock__sock_node *nd)
{
    redlock__conn_restart_by(&nd->q, redlock_socket_now_us());
}

/* A non-blocking connect finished (or failed): try the next address. */
static void redlock__sock_connected(redlock_socket *s, struct redlock__sock_node *nd)
{
    int err = 0, fd = nd->fd;
    unsigned gen = nd->gen;
    socklen_t len = (socklen_t)sizeof err;
    struct pollfd pf;
    char why[REDLOCK__SOCK_CONNECT_WORDS];
    /* Only the socket knows: the event may be stale (meant for the previous
       socket with this number) or spurious (a foreign loop's guess). */
    pf.fd = fd;
    pf.events = POLLOUT;
    pf.revents = 0;
    if (poll(&pf, 1, 0) <= 0) return;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == 0) {
#ifdef REDLOCK_SOCKET_TLS
        if (nd->tls_ctx) {
            redlock__sock_tls_start(s, nd);
            return;
        }
#endif
        redlock__conn_up(&nd->life);
        redlock__sock_rebase(nd);
        redlock__sock_flush(s, nd);
        return;
    }
    nd->fd = -1;
    redlock__conn_connect_words(why, sizeof why, err, nd->unix_path != NULL);
    redlock__sock_drop_fd(s, nd, fd);
    if (nd->gen != gen || nd->life.state != REDLOCK__CONN_CONNECTING) return; /* failed from inside the hook */
    nd->cur++;
    if (redlock__sock_try_addr(s, nd, why) != 0) {
        redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT, why);
        return;
    }
    if (nd->life.state == REDLOCK__CONN_UP) {
        redlock__sock_rebase(nd);
        redlock__sock_flush(s, nd);
    } else {
        redlock__sock_report(s, nd);
    }
}

#ifdef REDLOCK_SOCKET_TLS
/* One step of the TLS handshake; it goes on when the socket is ready for
   what OpenSSL waits for (nd->tls_want), within connect_timeout_ms. */
static void redlock__sock_tls_handshake(redlock_socket *s, struct redlock__sock_node *nd)
{
    int r, e;
    ERR_clear_error();
    r = SSL_connect((SSL *)nd->ssl);
    if (r == 1) {
        nd->tls_want = 0;
        redlock__conn_up(&nd->life);
        redlock__sock_rebase(nd);
        redlock__sock_flush(s, nd);
        return;
    }
    e = SSL_get_error((SSL *)nd->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        nd->tls_want = e == SSL_ERROR_WANT_READ ? REDLOCK_SOCKET_READ : REDLOCK_SOCKET_WRITE;
        redlock__sock_report(s, nd);
        return;
    }
    redlock__sock_tls_words(nd, e, "handshake");
    redlock__sock_fail(s, nd,
                       redlock__tls_refused((const SSL *)nd->ssl, nd->tls_verify, e, 1) ? REDLOCK_ERR_TLS
                                                                                      : REDLOCK_ERR_TRANSPORT,
                       nd->life.words);
}
#endif

/* A reply on subscriber nd, as the connection layer reads it
   (redlock__conn_sub_answer): 1 to read on; 0 when it was closed: the
   node refused it (closed for the backoff, with the node's words), sent
   what it did not expect (PROTOCOL), or (sharded) its master lost a
   key's slot (the node's subscribers reopen: redlock__sock_cluster_reshard). */
static int redlock__sock_sub_reply(redlock_socket *s, struct redlock__sock_node *nd, const redlock_reply *r)
{
#ifndef REDLOCK_SOCKET_NO_CORE
    redlock__conn_sub_reply v;
    int what;
    redlock__conn_sub_view(&v, r);
    s->_in_cb++; /* a message's wake runs the core's callbacks */
    what = redlock__conn_sub_answer(&nd->life, &nd->q, &s->_subs.table, &v);
    s->_in_cb--;
    if (what == REDLOCK__CONN_SUB_NEXT) return 1;
    if (what == REDLOCK__CONN_SUB_RESHARD && redlock__sock_sub_sharded(nd)) { /* not a failure */
        redlock__sock_cluster_reshard(s, nd->cl);
        return 0;
    }
    if (what == REDLOCK__CONN_SUB_REFUSED) { /* shunned before the watch hook hears */
        redlock__sock_fail(s, nd, nd->life.shunned, nd->life.refusal);
        redlock__conn_sub_hold(&nd->life, redlock_socket_now_us());
        return 0;
    }
#else
    (void)r; /* no core, no subscribers */
#endif
    redlock__sock_fail(s, nd, REDLOCK_ERR_PROTOCOL, NULL);
    return 0;
}
#ifndef REDLOCK_SOCKET_NO_CORE
/* A new connection's INFO or CONFIG GET appendfsync (kind): the core
   learns what the node may evict and whether its server restarted before
   the replies of the commands behind them (redlock_conn.h). */
static void redlock__sock_cluster_life(redlock_socket *s, struct redlock__sock_node *nd);

static void redlock__sock_info(redlock_socket *s, struct redlock__sock_node *nd, int kind, const redlock_reply *r)
{
    if (!s->_core) return;
    s->_in_cb++; /* the core's event hook may run */
    if (kind == REDLOCK__CONN_INFO) {
        redlock__conn_info_answer(&s->_client, nd->node, &nd->health,
                                  r->type == REDLOCK_REPLY_STRING ? r->str : NULL, r->len);
        if (nd->cl && r->type == REDLOCK_REPLY_STRING) redlock__sock_cluster_info(s, nd->cl, r->str, r->len);
    } else {
        int pair = r->type == REDLOCK_REPLY_ARRAY && r->elements == 2 && r->element[1].type == REDLOCK_REPLY_STRING;
        const char *str = pair ? r->element[1].str : NULL;
        size_t len = pair ? r->element[1].len : 0;
        if (!nd->cl) redlock__conn_config_answer(&s->_client, nd->node, &nd->health, str, len);
        else if (redlock__conn_config_life(&nd->health, str, len)) redlock__sock_cluster_life(s, nd);
    }
    s->_in_cb--;
}
#endif

#ifndef REDLOCK_SOCKET_NO_CORE
/* ---- a Sentinel group's +switch-master watch ----
   One more connection per group (slots after all others: see 4.), to
   one sentinel (AUTH with the sentinels' login, TLS as the node's), that
   SUBSCRIBEs +switch-master once the group's primary is named: each
   failover the sentinels announce is then acted on as it happens, not at
   the node's next command. It fails (closes) on what it did not ask for
   (PROTOCOL), a SUBSCRIBE unconfirmed within the command timeout, or as
   any connection does, and reopens a second later at the next sentinel.
   It changes no vote by itself: every reply is still confirmed by the
   sentinels (redlock__sock_confirm_primary). */

/* The sentinels announced that node i's group now has its primary at
   host:port. A new address is the node's (the next connection's asking
   is then no second failover), the core is told, and the connection to
   the former primary fails with what it owes: its replies could not be
   confirmed against the address any more (the confirmation compares the
   sentinels' answer with the node's address, not the connection's). */
static void redlock__sock_switched(redlock_socket *s, int i, const char *host, int port)
{
    struct redlock__sock_node *nd = &s->_nodes[i];
    char why[REDLOCK__SOCK_CONNECT_WORDS], *copy;
    if (nd->port == port && nd->host && strcmp(nd->host, host) == 0) return; /* already there */
    if (!(copy = redlock__sock_strdup(host))) return; /* the next command's confirmation sees it */
    free(nd->host);
    nd->host = copy;
    nd->port = port;
    nd->sentinels->named = 1;
    snprintf(why, sizeof why, "the sentinels switched '%.32s' to %.40s:%d", nd->sentinels->group, host, port);
    if (s->_core) {
        s->_in_cb++; /* the core's event hook may run */
        redlock_node_failed_over(&s->_client, i, 0);
        s->_in_cb--;
    }
    if (nd->life.state != REDLOCK__CONN_DOWN) redlock__sock_fail(s, nd, REDLOCK_ERR_TRANSPORT, why);
    else redlock__conn_set(&nd->life, REDLOCK_ERR_TRANSPORT, why);
}

/* A reply on watch nd, after its AUTH's: 1 to read on, 0 when it was
   closed (a reply it did not ask for). */
static int redlock__sock_watch_reply(redlock_socket *s, struct redlock__sock_node *nd, const redlock_reply *r)
{
    char host[REDLOCK_SENTINEL_MAX_HOST + 1];
    int port = 0, owed = nd->q.count > 0; /* SUBSCRIBE's confirmation, still owed */
    int what = redlock_sentinel_watch_reply(r, nd->watching->group, host, sizeof host, &port);
    if (what == REDLOCK_SENTINEL_WATCH_CONFIRMED && owed) {
        redlock__conn_req req;
        redlock__conn_pop(&nd->q, &req);
        nd->life.status = 0;
        return 1;
    }
    if (what == REDLOCK_SENTINEL_WATCH_OTHER && !owed) return 1;
    if (what == REDLOCK_SENTINEL_WATCH_SWITCHED && !owed) {
        redlock__sock_switched(s, nd->node, host, port);
        return 1;
    }
    redlock__sock_fail(s, nd, REDLOCK_ERR_PROTOCOL, NULL);
    return 0;
}

/* Opens each watch whose group's primary is named, when its delay is
   over, at its sentinel (the next one after each failure). */
static void redlock__sock_watches_tend(redlock_socket *s)
{
    int64_t now = redlock_socket_now_us();
    int i;
    for (i = redlock__sock_slots(s) - s->_nwatch; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *w = &s->_nodes[i];
        struct redlock__sock_sentinels *g = w->watching;
        char *h;
        if (!g->named || w->life.state != REDLOCK__CONN_DOWN || now < w->life.retry_at) continue;
        h = redlock__sock_strdup(g->host[g->wat]);
        if (h) {
            free(w->host);
            w->host = h;
            w->port = g->port[g->wat];
        }
        if (!h || redlock__sock_open(s, w) != 0) {
            w->life.retry_at = now + REDLOCK__SOCK_WATCH_RETRY_MS * 1000;
            g->wat = (g->wat + 1) % g->count;
        }
        redlock__sock_report(s, w);
    }
}
#endif

static void redlock__sock_drain(redlock_socket *s, struct redlock__sock_node *nd)
{
    unsigned gen = nd->gen;
    for (;;) {
        const redlock_reply *r;
        redlock__conn_req req;
        int rc = redlock_resp_next(&nd->parser, &r);
        if (rc == 0) return;
        if (rc > 0 && nd->sub) {
            if (!redlock__sock_sub_reply(s, nd, r) || nd->gen != gen || nd->life.state != REDLOCK__CONN_UP) return;
            continue;
        }
#ifndef REDLOCK_SOCKET_NO_CORE
        if (rc > 0 && nd->watching && (!nd->q.count || redlock__conn_at(&nd->q, 0)->kind != REDLOCK__CONN_AUTH)) {
            if (!redlock__sock_watch_reply(s, nd, r) || nd->gen != gen || nd->life.state != REDLOCK__CONN_UP) return;
            continue;
        }
#endif
        if (rc < 0 || !redlock__conn_pop(&nd->q, &req)) { /* broken, or a reply nobody asked for */
            redlock__sock_fail(s, nd, rc == REDLOCK_ERR_NOMEM ? REDLOCK_ERR_NOMEM : REDLOCK_ERR_PROTOCOL, NULL);
            return;
        }
        if (req.kind == REDLOCK__CONN_AUTH) {
            if (r->type != REDLOCK_REPLY_STATUS) {
                if (r->type == REDLOCK_REPLY_ERROR) redlock__sock_words(nd, r);
                redlock__sock_fail(s, nd, r->type == REDLOCK_REPLY_ERROR ? REDLOCK_ERR_AUTH : REDLOCK_ERR_PROTOCOL, NULL);
                return;
            }
            nd->life.status = 0;
            continue;
        }
        if (req.kind == REDLOCK__CONN_SELECT) {
            if (r->type != REDLOCK_REPLY_STATUS) {
                if (r->type == REDLOCK_REPLY_ERROR) redlock__sock_words(nd, r);
                redlock__sock_fail(s, nd, r->type == REDLOCK_REPLY_ERROR ? REDLOCK_ERR_SELECT : REDLOCK_ERR_PROTOCOL, NULL);
                return;
            }
            nd->life.status = 0;
            continue;
        }
        if (req.kind == REDLOCK__CONN_ROLE) {
            int role = redlock_sentinel_role(r);
            if (role != REDLOCK_SENTINEL_PRIMARY) { /* a failover under way: ask the sentinels again */
                char why[160];
                snprintf(why, sizeof why, "%.24s:%d is not the primary of '%.16s' (%s): asking the sentinels again", nd->host,
                         nd->port, nd->sentinels->group, role < 0 ? "ROLE refused" : "a replica");
                redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT, why);
                return;
            }
            continue;
        }
#ifndef REDLOCK_SOCKET_NO_CORE
        if (req.kind == REDLOCK__CONN_INFO || req.kind == REDLOCK__CONN_CONFIG) {
            redlock__sock_info(s, nd, req.kind, r);
            continue;
        }
#endif
        if (req.kind == REDLOCK__CONN_ASKING) continue; /* its +OK; a refusal shows in the command's reply */
#ifndef REDLOCK_SOCKET_NO_CORE
        if (nd->cl) { /* a cluster's: passed on, or sent again where it says */
            redlock__sock_cluster_reply(s, nd, req.tag, r);
            if (nd->gen != gen || nd->life.state != REDLOCK__CONN_UP) return;
            continue;
        }
#endif
        redlock__sock_deliver_reply(s, nd, req.tag, r);
        if (nd->gen != gen || nd->life.state != REDLOCK__CONN_UP) return;
        if (nd->sentinels && r->type == REDLOCK_REPLY_ERROR && redlock_sentinel_not_primary(r->str, r->len)) {
            /* no longer (or not yet) the primary: the next connection asks the sentinels */
            redlock__sock_fail(s, nd, REDLOCK_ERR_TRANSPORT, "the server is no longer the group's primary");
            return;
        }
    }
}

static void redlock__sock_read(redlock_socket *s, struct redlock__sock_node *nd)
{
    char buf[16384];
    unsigned gen = nd->gen;
    int round;
    for (round = 0; round < 8 && nd->gen == gen && nd->life.state == REDLOCK__CONN_UP; round++) {
        ssize_t r = redlock__sock_recv(nd, buf, sizeof buf);
        if (r > 0) {
            int rc = redlock_resp_feed(&nd->parser, buf, (size_t)r);
            redlock__conn_count_in(&nd->life, (size_t)r);
            if (rc != 0) {
                redlock__sock_fail(s, nd, rc == REDLOCK_ERR_NOMEM ? REDLOCK_ERR_NOMEM : REDLOCK_ERR_PROTOCOL, NULL);
                return;
            }
            redlock__sock_drain(s, nd);
            if ((size_t)r < sizeof buf) break;
        } else if (r == 0) {
            /* closed: mid-reply is a truncated (malformed) reply */
            redlock__sock_fail(s, nd, redlock_resp_buffered(&nd->parser) ? REDLOCK_ERR_PROTOCOL : REDLOCK_ERR_TRANSPORT,
                               NULL);
            return;
        } else if (r == -1) {
            break;
        } else {
            redlock__sock_fail(s, nd, r == -3 ? REDLOCK_ERR_TLS : REDLOCK_ERR_TRANSPORT, nd->life.words);
            return;
        }
    }
}

/* ---- release notifications: the subscribers ---- */

#ifndef REDLOCK_SOCKET_NO_CORE /* the core's listen hook sends these */
/* Queues SUBSCRIBE (on) or UNSUBSCRIBE of key's channel on subscriber
   nd (a sharded one's: SSUBSCRIBE, SUNSUBSCRIBE of its shard channel),
   if it is open or opening (one that is down subscribes every key when
   it opens). */
static void redlock__sock_sub_cmd(redlock_socket *s, struct redlock__sock_node *nd, int on, const char *key,
                                  size_t len)
{
    if (nd->life.state == REDLOCK__CONN_DOWN) return;
    if (redlock__conn_sub_cmd(on, key, len, redlock__sock_sub_sharded(nd), redlock__sock_queue_preamble, nd) != 0)
        redlock__sock_fail(s, nd, REDLOCK_ERR_NOMEM, NULL);
    else
        redlock__sock_report(s, nd);
}
#endif

/* Subscribers open (redlock__sock_open queues AUTH, then every key) and
   close as the connection layer says (redlock__conn_sub_tend); one that
   could not open is tried again after its retry delay. A sharded cluster
   node's are pointed at its masters first; one that serves none (its
   master gone from the map) closes. */
static void redlock__sock_subs_tend(redlock_socket *s)
{
    int64_t now;
    int i;
    if (!s->_nsub) return;
#ifndef REDLOCK_SOCKET_NO_CORE
    for (i = 0; i < s->_cfg.node_count; i++)
        if (s->_cl[i] && s->_cl[i]->sharded) redlock__sock_cluster_subs_point(s, s->_cl[i]);
#endif
    now = redlock_socket_now_us();
    for (i = s->_cfg.node_count; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        int act, open = nd->life.state != REDLOCK__CONN_DOWN;
        if (!nd->sub) continue;
        if (!redlock__sock_sub_wanted(nd)) {
            if (open) {
                redlock__sock_close(s, nd);
                redlock__sock_report(s, nd);
            }
            continue;
        }
        act = redlock__conn_sub_tend(&s->_subs, &nd->life, open, now);
        if (act == REDLOCK__CONN_SUB_OPEN) {
            if (redlock__sock_open(s, nd) != 0) nd->life.retry_at = now + REDLOCK__SOCK_SUB_RETRY_MS * 1000;
            else redlock__sock_report(s, nd);
        } else if (act == REDLOCK__CONN_SUB_CLOSE) {
            redlock__sock_close(s, nd);
        }
    }
    redlock__conn_subs_tended(&s->_subs, now);
}

static void redlock__sock_timeouts(redlock_socket *s)
{
    int64_t now = redlock_socket_now_us();
    int i;
    for (i = 0; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        int late = redlock__conn_late(&nd->life, &nd->q, nd->life.state == REDLOCK__CONN_HANDSHAKE, 0,
                                      nd->connect_deadline, redlock__sock_command_us(s), now);
        if (late == REDLOCK__CONN_LATE_CONNECT) {
            char why[REDLOCK__SOCK_CONNECT_WORDS];
            redlock__conn_connect_words(why, sizeof why, ETIMEDOUT, 0);
            redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT, why);
        } else if (late == REDLOCK__CONN_LATE_HANDSHAKE) {
            /* a silent server: paused, or plain text (redlock_tls.h) */
            redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT, "TLS handshake: no answer within the connect timeout");
        } else if (late == REDLOCK__CONN_LATE_REPLY) {
            /* the answer may be waiting unread (the loop did not run for
               a while): read before declaring the node dead */
            if (nd->life.state == REDLOCK__CONN_UP) redlock__sock_read(s, nd);
            if (now >= redlock__conn_due(&nd->q, redlock__sock_command_us(s)))
                redlock__sock_fail(s, nd, REDLOCK_ERR_NODE_TIMEOUT, NULL);
        }
    }
    redlock__sock_subs_tend(s);
#ifndef REDLOCK_SOCKET_NO_CORE
    redlock__sock_watches_tend(s);
    if (!redlock__sock_raw(s) && redlock_next_deadline(&s->_client) <= redlock_socket_now_us()) {
        s->_in_cb++;
        redlock_on_timer(&s->_client);
        s->_in_cb--;
    }
#endif
}

static void redlock__sock_event(redlock_socket *s, struct redlock__sock_node *nd, int readable, int writable)
{
    if (nd->life.state == REDLOCK__CONN_CONNECTING) {
        if (readable || writable) redlock__sock_connected(s, nd);
        return;
    }
#ifdef REDLOCK_SOCKET_TLS
    if (nd->life.state == REDLOCK__CONN_HANDSHAKE) {
        if (readable || writable) redlock__sock_tls_handshake(s, nd);
        return;
    }
#endif
    if (nd->life.state != REDLOCK__CONN_UP) return;
    if (writable) redlock__sock_flush(s, nd);
    /* a TLS read may wait for the socket to take a write */
    if ((readable || (writable && nd->tls_want == REDLOCK_SOCKET_WRITE)) && nd->life.state == REDLOCK__CONN_UP)
        redlock__sock_read(s, nd);
    if (nd->life.state == REDLOCK__CONN_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
}

/* redlock_socket_pollfds(), for the loop's owner: this adapter's poll()
   loop, the watchdog thread's, or the caller's own. */
static int redlock__sock_fill(redlock_socket *s, struct pollfd *pfd)
{
    int i, n = 0;
    for (i = 0; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        int in;
        if (nd->life.state == REDLOCK__CONN_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
        in = redlock__sock_interest_of(nd);
        if (nd->fd < 0 || !in) continue;
        pfd[n].fd = nd->fd;
        pfd[n].events = (short)(((in & REDLOCK_SOCKET_READ) ? POLLIN : 0) | ((in & REDLOCK_SOCKET_WRITE) ? POLLOUT : 0));
        pfd[n].revents = 0;
        s->_poll_node[n] = i;
        s->_poll_gen[n] = nd->gen;
        n++;
    }
    s->_poll_n = n;
    return n;
}

/* The loop is the watchdog thread's: the caller's own loop does nothing. */
REDLOCK_SOCKET_API int redlock_socket_pollfds(redlock_socket *s, struct pollfd *pfd)
{
    if (!redlock__sock_valid(s) || !pfd || s->_thread) return 0;
    return redlock__sock_fill(s, pfd);
}

static int redlock__sock_poll_ms(const redlock_socket *s, int64_t until_us)
{
    int64_t now = redlock_socket_now_us(), wake = redlock__sock_deadline(s);
    if (until_us < wake) wake = until_us;
    if (wake <= now) return 0;
    return wake - now >= 1000000 ? 1000 : (int)((wake - now + 999) / 1000);
}

REDLOCK_SOCKET_API int redlock_socket_poll_ms(const redlock_socket *s, int64_t until_us)
{
    int ms, entered;
    if (!redlock__sock_valid(s)) {
        int64_t now = redlock_socket_now_us();
        return until_us <= now ? 0 : until_us - now >= 1000000 ? 1000 : (int)((until_us - now + 999) / 1000);
    }
    entered = redlock__sock_enter(s);
    ms = redlock__sock_poll_ms(s, until_us);
    redlock__sock_leave(s, entered, 0);
    return ms;
}

/* redlock_socket_dispatch(), for the loop's owner. */
static void redlock__sock_dispatch(redlock_socket *s, const struct pollfd *pfd, int n)
{
    int i;
    if (!pfd || n > s->_poll_n) n = pfd ? s->_poll_n : 0;
    for (i = 0; i < n; i++) {
        struct redlock__sock_node *nd = &s->_nodes[s->_poll_node[i]];
        short re = pfd[i].revents;
        if (!re || nd->gen != s->_poll_gen[i] || nd->fd != pfd[i].fd) continue;
        redlock__sock_event(s, nd, (re & (POLLIN | POLLHUP | POLLERR)) != 0, (re & (POLLOUT | POLLERR)) != 0);
    }
    s->_poll_n = 0;
    redlock__sock_timeouts(s);
    redlock__sock_timer_report(s);
}

REDLOCK_SOCKET_API void redlock_socket_dispatch(redlock_socket *s, const struct pollfd *pfd, int n)
{
    if (!redlock__sock_valid(s) || s->_thread) return;
    redlock__sock_dispatch(s, pfd, n);
}

/* One round of the poll() loop: waits at most until `until`. */
static void redlock__sock_step(redlock_socket *s, int64_t until)
{
    struct pollfd pf[REDLOCK_SOCKET_MAX_FDS];
    int n = redlock__sock_fill(s, pf);
    if (poll(n ? pf : NULL, (nfds_t)n, redlock__sock_poll_ms(s, until)) <= 0) n = 0;
    redlock__sock_dispatch(s, pf, n);
}

REDLOCK_SOCKET_API int redlock_socket_run(redlock_socket *s, int64_t timeout_ms)
{
    int64_t until;
    int entered;
    if (!redlock__sock_valid(s) || timeout_ms < 0) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    if (s->_in_cb) {
        redlock__sock_leave(s, entered, 0);
        return REDLOCK_ERR_BUSY;
    }
    until = redlock_socket_now_us() + timeout_ms * 1000;
    if (s->_thread) { /* the thread runs the loop: let the time pass */
        redlock__sock_leave(s, entered, 0);
        while (redlock_socket_now_us() < until) {
            int64_t left = until - redlock_socket_now_us();
            poll(NULL, 0, left >= 1000000 ? 1000 : (int)((left + 999) / 1000));
        }
        return REDLOCK_OK;
    }
    do {
        redlock__sock_step(s, until);
    } while (redlock_socket_now_us() < until);
    return REDLOCK_OK;
}

/* Connecting, or AUTH / SELECT still owed (they are queued first, so
   while one is owed it is at the head). */
static int redlock__sock_handshaking(const struct redlock__sock_node *nd)
{
    if (redlock__sock_opening(nd)) return 1;
    return nd->q.count > 0 && redlock__conn_at(&nd->q, 0)->kind != REDLOCK__CONN_CORE;
}

REDLOCK_SOCKET_API int redlock_socket_connect(redlock_socket *s)
{
    int i, busy, rc = REDLOCK_OK;
    unsigned failures[REDLOCK_MAX_NODES];
    int64_t until;
    int entered;
    if (!redlock__sock_valid(s)) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    if (s->_in_cb) {
        redlock__sock_leave(s, entered, 0);
        return REDLOCK_ERR_BUSY;
    }
    until = redlock_socket_now_us() + (s->_cfg.connect_timeout_ms + s->_cfg.command_timeout_ms) * 1000;
    for (i = 0; i < s->_cfg.node_count; i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        failures[i] = nd->failures;
        if (nd->life.state == REDLOCK__CONN_DOWN) {
            redlock__sock_open(s, nd);
            redlock__sock_report(s, nd);
        }
    }
    do {
        busy = 0;
        for (i = 0; i < s->_cfg.node_count; i++)
            if (redlock__sock_handshaking(&s->_nodes[i])) busy = 1;
        if (!busy) break;
        redlock__sock_step(s, until);
    } while (redlock_socket_now_us() < until);
    for (i = 0; i < s->_cfg.node_count; i++) {
        const struct redlock__sock_node *nd = &s->_nodes[i];
        if (nd->life.state == REDLOCK__CONN_UP && !redlock__sock_handshaking(nd)) continue;
        /* last_status may be older than this call: only a failure during
           it counts; otherwise the handshake is still unanswered */
        if (rc == REDLOCK_OK)
            rc = nd->failures != failures[i] && nd->life.status ? nd->life.status : REDLOCK_ERR_NODE_TIMEOUT;
    }
    redlock__sock_timer_report(s);
    redlock__sock_leave(s, entered, 1);
    return rc;
}

#ifndef REDLOCK_SOCKET_NO_CORE
/* Key's channel subscribed (on) or not on every node's subscriber (a
   sharded cluster node's: the one of the key's master; none pointed at it
   yet: the tend that follows a listen opens it, with the key). */
static void redlock__sock_subs_cmd(void *user, int on, const char *key, size_t len)
{
    redlock_socket *s = (redlock_socket *)user;
    int i;
    for (i = 0; i < s->_nsub; i++) {
        struct redlock__sock_cluster *cl = s->_cl[i];
        if (cl && cl->sharded) {
            int k = redlock_cluster_owner(&cl->c.map, redlock_cluster_slot(key, len));
            struct redlock__sock_node *nd = k >= 0 ? redlock__sock_cluster_sub(cl, k, 0) : NULL;
            if (nd && redlock__sock_sub_wanted(nd)) redlock__sock_sub_cmd(s, nd, on, key, len);
            continue;
        }
        redlock__sock_sub_cmd(s, &s->_nodes[s->_cfg.node_count + i], on, key, len);
    }
}

/* The core's listen callback: the table follows the core, the subscribers
   the table's keys (redlock_conn.h). */
static void redlock__sock_listen(void *user, redlock_lock *lk, int on)
{
    redlock_socket *s = (redlock_socket *)user;
    redlock__conn_listen(&s->_subs, lk, on, redlock_socket_now_us(), redlock__sock_subs_cmd, s);
    if (on) redlock__sock_subs_tend(s); /* opens the ones that are down */
}

static int redlock__sock_core_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    /* the core's commands are well formed; send checks them all the same
       (the core runs with the mutex held, if there is one) */
    redlock_socket *s = (redlock_socket *)user;
    int rc;
    if (node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    if (s->_cl[node]) return redlock__sock_cluster_send(s, s->_cl[node], cmd, tag);
    rc = redlock__sock_send_cmd(s, node, cmd->argc, cmd->argv, cmd->argvlen, tag);
    if (rc == 0 && s->_nodes[node].sentinels) redlock__sock_confirm_primary(s, &s->_nodes[node]);
    return rc;
}

static void redlock__sock_core_timer(void *user, int64_t deadline_us)
{
    (void)deadline_us;
    redlock__sock_timer_report((redlock_socket *)user);
}

static int64_t redlock__sock_core_now(void *user)
{
    (void)user;
    return redlock_socket_now_us();
}

static void redlock__sock_core_event(void *user, const redlock_event *ev)
{
    redlock_socket *s = (redlock_socket *)user;
    if (s->_cfg.on_event) {
        s->_in_cb++;
        s->_cfg.on_event(s->_cfg.user, ev);
        s->_in_cb--;
    }
}
#endif

/* The node's Unix socket: its unix_path, or a host that starts with '/'
   (as the hiredis adapters take it); NULL for TCP. */
static const char *redlock__sock_path(const redlock_socket_node *c)
{
    return c->unix_path && c->unix_path[0] ? c->unix_path : c->host && c->host[0] == '/' ? c->host : NULL;
}

/* out[0..cap): the text t, cut to fit and terminated. */
static void redlock__sock_text(char *out, size_t cap, const char *t)
{
    size_t o = 0;
    if (!out || !cap) return;
    while (t && t[o] && o + 1 < cap) {
        out[o] = t[o];
        o++;
    }
    out[o] = 0;
}

/* ---- the watchdog thread ---- */

#ifdef REDLOCK__SOCK_THREADS
/* Runs the loop while no call does: poll() without the mutex (a call may
   then take it), woken by the pipe when a call changed the adapter. What
   poll() saw is handled only if no call changed the adapter meanwhile: a
   socket may have been closed and its number reused; readiness is level-
   triggered, so the next poll() sees again whatever still matters. */
static void *redlock__sock_thread_main(void *arg)
{
    redlock_socket *s = (redlock_socket *)arg;
    struct redlock__sock_thread *t = s->_thread;
    struct pollfd pf[REDLOCK_SOCKET_MAX_FDS + 1];
    pthread_mutex_lock(&t->mu);
    while (!t->stopping) {
        int n = redlock__sock_fill(s, pf), ms = redlock__sock_poll_ms(s, REDLOCK_NO_DEADLINE), rc;
        unsigned changes = t->changes;
        pf[n].fd = t->wake[0];
        pf[n].events = POLLIN;
        pf[n].revents = 0;
        t->polling = 1;
        pthread_mutex_unlock(&t->mu);
        rc = poll(pf, (nfds_t)n + 1, ms);
        pthread_mutex_lock(&t->mu);
        t->polling = 0;
        if (t->woken) {
            char b[16];
            while (read(t->wake[0], b, sizeof b) > 0) {}
            t->woken = 0;
        }
        if (t->stopping) break;
        redlock__sock_dispatch(s, pf, rc > 0 && t->changes == changes ? n : 0);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Starts the thread (after the core's init: it runs the core at once). */
static int redlock__sock_thread_start(redlock_socket *s)
{
    struct redlock__sock_thread *t = (struct redlock__sock_thread *)calloc(1, sizeof *t);
    pthread_mutexattr_t ma;
    sigset_t all, old;
    int i, rc;
    if (!t) return REDLOCK_ERR_NOMEM;
    if (pipe(t->wake) != 0) {
        free(t);
        return REDLOCK_ERR_NOMEM; /* out of descriptors */
    }
    for (i = 0; i < 2; i++) {
        fcntl(t->wake[i], F_SETFL, fcntl(t->wake[i], F_GETFL) | O_NONBLOCK);
        fcntl(t->wake[i], F_SETFD, FD_CLOEXEC);
    }
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    rc = pthread_mutex_init(&t->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    if (rc == 0) {
        s->_thread = t;
        /* no signal for the thread: the program's handlers run on its own threads */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&t->id, NULL, redlock__sock_thread_main, s);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            s->_thread = NULL;
            pthread_mutex_destroy(&t->mu);
        }
    }
    if (rc != 0) {
        close(t->wake[0]);
        close(t->wake[1]);
        free(t);
        return REDLOCK_ERR_NOMEM;
    }
    return REDLOCK_OK;
}

/* Stops and joins the thread. Not on the thread itself (a callback):
   returns 0 there, and nothing is stopped. */
static int redlock__sock_thread_stop(redlock_socket *s)
{
    struct redlock__sock_thread *t = s->_thread;
    if (!t) return 1;
    if (pthread_equal(pthread_self(), t->id)) return 0;
    pthread_mutex_lock(&t->mu);
    t->stopping = 1;
    if (t->polling && !t->woken) {
        char b = 1;
        ssize_t w = write(t->wake[1], &b, 1);
        (void)w;
        t->woken = 1;
    }
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->id, NULL);
    pthread_mutex_destroy(&t->mu);
    close(t->wake[0]);
    close(t->wake[1]);
    free(t);
    s->_thread = NULL;
    return 1;
}
#endif

REDLOCK_SOCKET_API void redlock_socket_config_init(redlock_socket_config *cfg)
{
    int i;
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->node_count = 1;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) {
        cfg->node[i].host = "127.0.0.1";
        cfg->node[i].port = 6379;
    }
    cfg->connect_timeout_ms = 1000;
    cfg->command_timeout_ms = 1000;
#ifndef REDLOCK_SOCKET_NO_CORE
    redlock_config_init(&cfg->core);
#endif
}

/* What init refuses before it touches anything: 0, NODES or INVALID (or
   NO_TLS: TLS asked of an adapter built without it). */
static int redlock__sock_check_config(const redlock_socket_config *cfg)
{
    int i;
    if (cfg->node_count < 1 || cfg->node_count > REDLOCK_MAX_NODES) return REDLOCK_ERR_NODES;
    if (cfg->connect_timeout_ms < 0 || cfg->command_timeout_ms < 0 || cfg->notify_idle_ms < 0) return REDLOCK_ERR_INVALID;
#ifdef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply || !cfg->on_error) return REDLOCK_ERR_INVALID;
#else
    if (!cfg->on_reply != !cfg->on_error) return REDLOCK_ERR_INVALID;
#endif
    if (cfg->db < 0) return REDLOCK_ERR_INVALID;
    if (cfg->watchdog_thread) { /* the thread renews the core's locks, and the loop is its own */
#ifndef REDLOCK__SOCK_THREADS
        return REDLOCK_ERR_INVALID; /* built without REDLOCK_SOCKET_THREAD */
#endif
        if (cfg->on_reply || cfg->watch || cfg->set_timer) return REDLOCK_ERR_INVALID;
    }
    for (i = 0; i < cfg->node_count; i++) {
        const redlock_socket_node *c = &cfg->node[i];
        const char *user = c->username ? c->username : cfg->username, *pass = c->password ? c->password : cfg->password;
        redlock_tls t;
        const redlock_tls *tls = redlock__tls_settings(&c->tls, &cfg->tls, &t);
        if (c->port < 0 || c->port > 65535 || c->db < 0 || (user && !pass)) return REDLOCK_ERR_INVALID;
        /* a Sentinel group names its group; a cluster has db 0 only, and
           no WAIT (it names no key: no master to go to) */
        if (c->kind == REDLOCK_NODE_SENTINEL && !c->master) return REDLOCK_ERR_INVALID;
        if (c->kind == REDLOCK_NODE_CLUSTER && (redlock__sock_path(c) || c->db || cfg->db || cfg->core.wait_replicas > 0))
            return REDLOCK_ERR_INVALID;
#ifdef REDLOCK_SOCKET_NO_CORE
        if (c->kind == REDLOCK_NODE_CLUSTER) return REDLOCK_ERR_INVALID; /* the routing is built with the core */
#endif
        if (tls && (redlock__sock_path(c) || !tls->cert != !tls->key)) return REDLOCK_ERR_INVALID;
#ifndef REDLOCK_SOCKET_TLS
        if (tls) return REDLOCK_ERR_NO_TLS; /* built without REDLOCK_SOCKET_TLS */
#endif
    }
    return 0;
}

/* nd's copy of a Sentinel group's sentinels and logins; nonzero when
   out of memory (deinit frees what was made). */
static int redlock__sock_sentinels_init(struct redlock__sock_node *nd, const redlock_socket_node *c)
{
    struct redlock__sock_sentinels *g = (struct redlock__sock_sentinels *)calloc(1, sizeof *g);
    int k, bad = 0;
    if (!(nd->sentinels = g)) return 1;
    g->talk.fd = -1;
    bad |= !(g->group = redlock__sock_strdup(c->master));
    if (c->sentinel_password) bad |= !(g->pass = redlock__sock_strdup(c->sentinel_password));
    if (c->sentinel_username) bad |= !(g->user = redlock__sock_strdup(c->sentinel_username));
    for (k = 0; k <= c->seed_count && k < REDLOCK_NODES_MAX_SEEDS; k++) {
        const char *h = k ? c->seed[k - 1].host : c->host;
        int port = k ? c->seed[k - 1].port : c->port;
        bad |= !(g->host[k] = redlock__sock_strdup(h && h[0] ? h : "127.0.0.1"));
        g->port[k] = port ? port : 26379;
        g->count = k + 1;
    }
    return bad;
}

static void redlock__sock_sentinels_free(struct redlock__sock_sentinels *g)
{
    int k;
    if (!g) return;
    redlock__sock_talk_close(&g->talk);
    for (k = 0; k < g->count; k++) free(g->host[k]);
    free(g->group);
    redlock__sock_wipe_free(g->user);
    redlock__sock_wipe_free(g->pass);
    free(g);
}

/* Connection i: node i % node_count's command connection, then its
   subscriber; its own copies of the node's address and credentials. 0,
   or NOMEM / TLS (what it holds is freed by deinit). */
static int redlock__sock_node_init(redlock_socket *s, const redlock_socket_config *cfg, int i)
{
    struct redlock__sock_node *nd = &s->_nodes[i];
    const redlock_socket_node *c = &cfg->node[i % cfg->node_count];
    const char *user = c->username ? c->username : cfg->username, *pass = c->password ? c->password : cfg->password;
    int bad = 0;
    nd->index = i;
    nd->node = i % cfg->node_count;
    nd->fd = nd->rep_fd = -1;
    nd->port = c->port ? c->port : 6379;
    nd->sub = i >= cfg->node_count;
    nd->life.io = nd->sub ? NULL : &s->_io[nd->node];
    nd->db = nd->sub ? 0 : c->db ? c->db : cfg->db; /* channels are server-wide: no SELECT */
    if (redlock__sock_path(c)) bad |= !(nd->unix_path = redlock__sock_strdup(redlock__sock_path(c)));
    bad |= !(nd->host = redlock__sock_strdup(c->host && c->host[0] ? c->host : "127.0.0.1"));
    if (pass && pass[0]) bad |= !(nd->pass = redlock__sock_strdup(pass)); /* "": no AUTH */
    if (user && user[0]) bad |= !(nd->user = redlock__sock_strdup(user));
    if (c->kind == REDLOCK_NODE_SENTINEL) bad |= redlock__sock_sentinels_init(nd, c);
    redlock_resp_parser_init(&nd->parser);
    bad = bad ? REDLOCK_ERR_NOMEM : 0;
#ifdef REDLOCK_SOCKET_TLS
    {
        redlock_tls t;
        const redlock_tls *tls = redlock__tls_settings(&c->tls, &cfg->tls, &t);
        if (!bad && tls) bad = redlock__sock_tls_setup(s, nd, tls);
    }
#endif
    return bad;
}

#ifndef REDLOCK_SOCKET_NO_CORE
/* A further connection of cluster cl (a command connection or a
   subscriber), logged in as the node's n0 and to its address until
   pointed at a master. Nonzero: no memory (deinit frees what it holds). */
static int redlock__sock_cluster_conn_init(struct redlock__sock_node *nd, const struct redlock__sock_node *n0,
                                           struct redlock__sock_cluster *cl)
{
    int bad = 0;
    nd->cl = cl;
    nd->node = n0->node;
    nd->port = n0->port;
    bad |= !(nd->host = redlock__sock_strdup(n0->host));
    if (n0->user) bad |= !(nd->user = redlock__sock_strdup(n0->user));
    if (n0->pass) bad |= !(nd->pass = redlock__sock_strdup(n0->pass));
#ifdef REDLOCK_SOCKET_TLS
    if (n0->tls_ctx) { /* every master in TLS as the node asks (its name: each master's host) */
        SSL_CTX_up_ref((SSL_CTX *)n0->tls_ctx);
        nd->tls_ctx = n0->tls_ctx;
        nd->tls_verify = n0->tls_verify;
        if (n0->tls_name) bad |= !(nd->tls_name = redlock__sock_strdup(n0->tls_name));
    }
#endif
    return bad;
}

/* Cluster node i (the ord-th of the configuration's): its routing, its
   seeds, and its further connections (their slots after the
   subscribers'), logged in as the node. 0, or NOMEM (deinit frees). */
static int redlock__sock_cluster_init(redlock_socket *s, const redlock_socket_config *cfg, int i, int ord)
{
    const redlock_socket_node *c = &cfg->node[i];
    struct redlock__sock_node *n0 = &s->_nodes[i];
    struct redlock__sock_cluster *cl = (struct redlock__sock_cluster *)calloc(1, sizeof *cl);
    int k, bad = 0;
    if (!(s->_cl[i] = cl)) return REDLOCK_ERR_NOMEM;
    redlock_cluster_init(&cl->c);
    cl->node = i;
    n0->cl = cl;
    cl->conn[0] = n0;
    for (k = 0; k <= c->seed_count && k < REDLOCK_NODES_MAX_SEEDS; k++) {
        const char *h = k ? c->seed[k - 1].host : c->host;
        int port = k ? c->seed[k - 1].port : c->port;
        bad |= !(cl->seed_host[k] = redlock__sock_strdup(h && h[0] ? h : "127.0.0.1"));
        cl->seed_port[k] = port ? port : 6379;
        cl->seeds = k + 1;
    }
    for (k = 1; k < REDLOCK_SOCKET_CLUSTER_CONNS; k++) {
        int at = cfg->node_count + s->_nsub + ord * (REDLOCK_SOCKET_CLUSTER_CONNS - 1) + k - 1;
        bad |= redlock__sock_cluster_conn_init(cl->conn[k] = &s->_nodes[at], n0, cl);
        cl->conn[k]->life.io = n0->life.io; /* the node's: counted with its own connection's */
    }
    if (s->_nsub) { /* the subscribers: the node's own, then its further ones after the clusters' connections */
        cl->sub[0] = &s->_nodes[cfg->node_count + i];
        cl->sub[0]->cl = cl;
        for (k = 1; k < REDLOCK_SOCKET_CLUSTER_CONNS; k++) {
            int at = cfg->node_count + s->_nsub + (s->_ncl + ord) * (REDLOCK_SOCKET_CLUSTER_CONNS - 1) + k - 1;
            bad |= redlock__sock_cluster_conn_init(cl->sub[k] = &s->_nodes[at], n0, cl);
            cl->sub[k]->sub = 1;
            free(cl->sub[k]->host); /* pointed at no master until one needs it */
            cl->sub[k]->host = NULL;
        }
    }
    return bad ? REDLOCK_ERR_NOMEM : 0;
}

/* Watch w of node n0's Sentinel group: the sentinels' login, TLS as the
   node's (the name checked: server_name, else the sentinel's host).
   Nonzero: no memory (deinit frees what it holds). */
static int redlock__sock_watch_init(struct redlock__sock_node *w, const struct redlock__sock_node *n0)
{
    const struct redlock__sock_sentinels *g = n0->sentinels;
    int bad = 0;
    w->watching = n0->sentinels;
    w->node = n0->node;
    if (g->user) bad |= !(w->user = redlock__sock_strdup(g->user));
    if (g->pass) bad |= !(w->pass = redlock__sock_strdup(g->pass));
#ifdef REDLOCK_SOCKET_TLS
    if (n0->tls_ctx) {
        SSL_CTX_up_ref((SSL_CTX *)n0->tls_ctx);
        w->tls_ctx = n0->tls_ctx;
        w->tls_verify = n0->tls_verify;
        if (n0->tls_name) bad |= !(w->tls_name = redlock__sock_strdup(n0->tls_name));
    }
#endif
    return bad;
}

static void redlock__sock_cluster_free(struct redlock__sock_cluster *cl)
{
    int k;
    if (!cl) return;
    while (cl->ncmd) redlock__sock_cluster_forget(cl, cl->cmd[0].tag);
    free(cl->cmd);
    for (k = 0; k < cl->seeds; k++) free(cl->seed_host[k]);
    free(cl);
}

/* The core's client, driven by this adapter (not in raw mode). */
static int redlock__sock_core_init(redlock_socket *s, const redlock_socket_config *cfg)
{
    redlock_callbacks cb;
    redlock_config core = cfg->core;
    memset(&cb, 0, sizeof cb);
    cb.send = redlock__sock_core_send;
    cb.set_timer = redlock__sock_core_timer;
    cb.now_us = redlock__sock_core_now;
    cb.on_event = redlock__sock_core_event;
    if (s->_nsub) cb.listen = redlock__sock_listen;
    core.node_count = cfg->node_count;
    return redlock_client_init(&s->_client, &core, &cb, s);
}
#endif

/* Connection i failed to initialise: deinit frees connections [0, i]
   (the clusters' further ones hold nothing yet). */
static void redlock__sock_init_failed(redlock_socket *s, const redlock_socket_config *cfg, int i)
{
    s->_ncl = s->_nwatch = 0;
    if (i >= cfg->node_count) s->_nsub = i - cfg->node_count + 1;
    else s->_cfg.node_count = i + 1, s->_nsub = 0;
    redlock_socket_deinit(s);
}

REDLOCK_SOCKET_API int redlock_socket_init(redlock_socket *s, const redlock_socket_config *cfg)
{
    int i, k, rc = REDLOCK_OK;
    if (!s || !cfg) return REDLOCK_ERR_INVALID;
    memset(s, 0, sizeof *s);
    if ((rc = redlock__sock_check_config(cfg)) != 0) return rc;
    s->_cfg = *cfg;
    if (!s->_cfg.connect_timeout_ms) s->_cfg.connect_timeout_ms = 1000;
    if (!s->_cfg.command_timeout_ms) s->_cfg.command_timeout_ms = 1000;
    if (!s->_cfg.notify_idle_ms) s->_cfg.notify_idle_ms = 1000;
    s->_subs.idle_us = s->_cfg.notify_idle_ms * 1000;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply && !cfg->notify_off) s->_nsub = cfg->node_count; /* notifications are for the core's locks */
#endif
    for (i = 0; i < REDLOCK_MAX_NODES; i++) memset(&s->_cfg.node[i], 0, sizeof s->_cfg.node[i]);
    s->_cfg.username = s->_cfg.password = NULL; /* copied per node below */
    for (i = 0; i < cfg->node_count; i++) s->_ncl += cfg->node[i].kind == REDLOCK_NODE_CLUSTER;
#ifndef REDLOCK_SOCKET_NO_CORE
    for (i = 0; i < cfg->node_count && !cfg->on_reply; i++) s->_nwatch += cfg->node[i].kind == REDLOCK_NODE_SENTINEL;
#endif
    s->_nodes = (struct redlock__sock_node *)calloc((size_t)redlock__sock_slots(s), sizeof *s->_nodes);
    if (!s->_nodes) return REDLOCK_ERR_NOMEM;
    for (i = cfg->node_count + s->_nsub; i < redlock__sock_slots(s); i++) { /* a cluster's further ones, watches */
        s->_nodes[i].index = i;
        s->_nodes[i].fd = s->_nodes[i].rep_fd = -1;
        redlock_resp_parser_init(&s->_nodes[i].parser);
    }
    s->_magic = REDLOCK__SOCK_MAGIC;
    s->_timer_reported = REDLOCK_NO_DEADLINE;
    for (i = 0; i < cfg->node_count + s->_nsub; i++) {
        int bad = redlock__sock_node_init(s, cfg, i);
        if (bad) { /* deinit frees connections [0, i] */
            redlock__sock_init_failed(s, cfg, i);
            return bad;
        }
    }
#ifndef REDLOCK_SOCKET_NO_CORE
    for (i = 0, k = 0; i < cfg->node_count; i++) {
        if (cfg->node[i].kind != REDLOCK_NODE_CLUSTER) continue;
        if ((rc = redlock__sock_cluster_init(s, cfg, i, k++)) != 0) {
            redlock_socket_deinit(s);
            return rc;
        }
    }
    for (i = 0, k = redlock__sock_slots(s) - s->_nwatch; i < cfg->node_count && s->_nwatch; i++) {
        if (cfg->node[i].kind != REDLOCK_NODE_SENTINEL) continue;
        if (redlock__sock_watch_init(&s->_nodes[k++], &s->_nodes[i]) != 0) {
            redlock_socket_deinit(s);
            return REDLOCK_ERR_NOMEM;
        }
    }
#else
    (void)k;
#endif
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply) {
        if ((rc = redlock__sock_core_init(s, cfg)) == REDLOCK_OK) s->_core = 1;
    }
#endif
#ifdef REDLOCK__SOCK_THREADS
    if (rc == REDLOCK_OK && cfg->watchdog_thread) rc = redlock__sock_thread_start(s);
#endif
    if (rc != REDLOCK_OK) {
        redlock_socket_deinit(s);
        memset(s, 0, sizeof *s);
    }
    return rc;
}

REDLOCK_SOCKET_API void redlock_socket_deinit(redlock_socket *s)
{
    int i;
    if (!redlock__sock_valid(s)) return;
#ifdef REDLOCK__SOCK_THREADS
    if (!redlock__sock_thread_stop(s)) return; /* a callback on the thread: not here */
#endif
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_core) redlock_client_deinit(&s->_client);
    s->_core = 0;
#endif
    for (i = 0; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        /* not through redlock__sock_close: the watch hook is not called here */
#ifdef REDLOCK_SOCKET_TLS
        SSL_free((SSL *)nd->ssl);
        SSL_CTX_free((SSL_CTX *)nd->tls_ctx);
#endif
        free(nd->tls_name);
        if (nd->fd >= 0) close(nd->fd);
        nd->fd = -1;
        if (nd->out) memset(nd->out, 0, nd->out_cap);
        free(nd->out);
        redlock__conn_ring_free(&nd->q);
        redlock_resp_parser_free(&nd->parser);
        free(nd->host);
        free(nd->unix_path);
        redlock__sock_wipe_free(nd->user);
        redlock__sock_wipe_free(nd->pass);
        redlock__sock_sentinels_free(nd->sentinels);
    }
#ifndef REDLOCK_SOCKET_NO_CORE
    for (i = 0; i < REDLOCK_MAX_NODES; i++) redlock__sock_cluster_free(s->_cl[i]);
#endif
    free(s->_nodes);
    s->_nodes = NULL;
    redlock__notify_free(&s->_subs.table);
#ifdef REDLOCK_SOCKET_TLS
    BIO_meth_free((BIO_METHOD *)s->_bio_method);
#endif
    s->_bio_method = NULL;
    s->_magic = 0;
}

REDLOCK_SOCKET_API int redlock_socket_node_status(const redlock_socket *s, int node, char *errbuf, size_t errsz)
{
    const struct redlock__sock_node *nd;
    int st, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    nd = &s->_nodes[node];
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_cl[node] && !nd->life.status) { /* a cluster: its first master connection that failed */
        int k;
        for (k = 1; k < REDLOCK_SOCKET_CLUSTER_CONNS && !nd->life.status; k++)
            if (s->_cl[node]->conn[k]->life.status) nd = s->_cl[node]->conn[k];
    }
#endif
    st = nd->life.status;
    if (errbuf && errsz) {
#ifndef REDLOCK_SOCKET_NO_CORE
        const char *t = st ? redlock_strerror(st) : "";
#else
        const char *t = st ? "node error" : "";
#endif
        redlock__sock_text(errbuf, errsz, redlock__conn_text(&nd->life, t));
    }
    redlock__sock_leave(s, entered, 0);
    return st;
}

REDLOCK_SOCKET_API int redlock_socket_notify_status(const redlock_socket *s, int node, char *errbuf, size_t errsz)
{
    const struct redlock__sock_node *nd;
    int st, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    nd = node < s->_nsub ? &s->_nodes[s->_cfg.node_count + node] : NULL;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (nd && nd->cl && !nd->life.shunned) { /* a cluster node: its first subscriber refused */
        int k;
        for (k = 1; k < REDLOCK_SOCKET_CLUSTER_CONNS && !nd->life.shunned; k++)
            if (nd->cl->sub[k]->life.shunned) nd = nd->cl->sub[k];
    }
#endif
    st = nd ? nd->life.shunned : 0;
    if (errbuf && errsz) redlock__sock_text(errbuf, errsz, st ? nd->life.refusal : "");
    redlock__sock_leave(s, entered, 0);
    return st;
}

REDLOCK_SOCKET_API int redlock_socket_node_connected(const redlock_socket *s, int node)
{
    int up, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return 0;
    entered = redlock__sock_enter(s);
    up = s->_nodes[node].life.state == REDLOCK__CONN_UP;
    redlock__sock_leave(s, entered, 0);
    return up;
}

REDLOCK_SOCKET_API int redlock_socket_node_policy(const redlock_socket *s, int node, char *buf, size_t size)
{
    int e = 0, entered;
    if (buf && size) buf[0] = 0;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    if (buf && size) redlock__sock_text(buf, size, s->_nodes[node].health.policy);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_core) e = (int)redlock_node_evicts(&s->_client, node);
#endif
    redlock__sock_leave(s, entered, 0);
    return e;
}

REDLOCK_SOCKET_API int redlock_socket_pending(const redlock_socket *s)
{
    int i, n = 0, entered;
    if (!redlock__sock_valid(s)) return 0;
    entered = redlock__sock_enter(s);
    for (i = 0; i < redlock__sock_slots(s); i++) /* the command connections, a cluster's too */
        if (!redlock__sock_aside(&s->_nodes[i])) n += (int)s->_nodes[i].q.count;
    redlock__sock_leave(s, entered, 0);
    return n;
}

REDLOCK_SOCKET_API int redlock_socket_node_pending(const redlock_socket *s, int node)
{
    int n = 0, k;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return 0;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_cl[node]) { /* a cluster: on every master's connection */
        for (k = 0; k < REDLOCK_SOCKET_CLUSTER_CONNS; k++) n += (int)s->_cl[node]->conn[k]->q.count;
        return n;
    }
#endif
    (void)k;
    return n + (int)s->_nodes[node].q.count;
}

REDLOCK_SOCKET_API size_t redlock_socket_memory(const redlock_socket *s)
{
    size_t m = 0;
    int i, entered;
    if (!redlock__sock_valid(s)) return 0;
    entered = redlock__sock_enter(s);
    m += (size_t)redlock__sock_slots(s) * sizeof *s->_nodes;
    for (i = 0; i < redlock__sock_slots(s); i++)
        m += s->_nodes[i].out_cap + s->_nodes[i].q.cap * sizeof *s->_nodes[i].q.e +
             redlock_resp_memory(&s->_nodes[i].parser);
    redlock__sock_leave(s, entered, 0);
    return m;
}

REDLOCK_SOCKET_API int redlock_socket_stats(const redlock_socket *s, redlock_adapter_stats *out)
{
    int entered;
    if (!redlock__sock_valid(s) || !out) return REDLOCK_ERR_INVALID;
    entered = redlock__sock_enter(s);
    redlock__conn_stats(out, s->_cfg.node_count, s->_io);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_core) redlock_client_stats(&s->_client, &out->core);
#endif
    redlock__sock_leave(s, entered, 0);
    return REDLOCK_OK;
}

REDLOCK_SOCKET_API void redlock_socket_stats_reset(redlock_socket *s)
{
    int entered;
    if (!redlock__sock_valid(s)) return;
    entered = redlock__sock_enter(s);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_core) redlock_client_stats_reset(&s->_client);
#endif
    memset(s->_io, 0, sizeof s->_io);
    redlock__sock_leave(s, entered, 0);
}

/* The foreign loop's getters: read under the mutex with the watchdog
   thread (harmless, though the loop is then the thread's); the calls that
   drive the loop do nothing then. */
REDLOCK_SOCKET_API int redlock_socket_fd_count(const redlock_socket *s)
{
    return redlock__sock_valid(s) ? redlock__sock_slots(s) : 0;
}

REDLOCK_SOCKET_API int redlock_socket_fd(const redlock_socket *s, int node)
{
    int fd, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return -1;
    entered = redlock__sock_enter(s);
    fd = s->_nodes[node].fd;
    redlock__sock_leave(s, entered, 0);
    return fd;
}

REDLOCK_SOCKET_API int redlock_socket_interest(const redlock_socket *s, int node)
{
    int in, entered;
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return 0;
    entered = redlock__sock_enter(s);
    in = redlock__sock_interest_of(&s->_nodes[node]);
    redlock__sock_leave(s, entered, 0);
    return in;
}

REDLOCK_SOCKET_API void redlock_socket_on_readable(redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s) || s->_thread) return;
    redlock__sock_event(s, &s->_nodes[node], 1, 0);
    redlock__sock_timer_report(s);
}

REDLOCK_SOCKET_API void redlock_socket_on_writable(redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s) || s->_thread) return;
    redlock__sock_event(s, &s->_nodes[node], 0, 1);
    redlock__sock_timer_report(s);
}

REDLOCK_SOCKET_API int64_t redlock_socket_next_deadline(const redlock_socket *s)
{
    int64_t d;
    int entered;
    if (!redlock__sock_valid(s)) return REDLOCK_NO_DEADLINE;
    entered = redlock__sock_enter(s);
    d = redlock__sock_deadline(s);
    redlock__sock_leave(s, entered, 0);
    return d;
}

REDLOCK_SOCKET_API void redlock_socket_on_timer(redlock_socket *s)
{
    if (!redlock__sock_valid(s) || s->_thread) return;
    redlock__sock_timeouts(s);
    /* The owner's timer is one-shot and may have fired early (or this call
       came from elsewhere): an unchanged deadline must be armed again, so
       it is always reported, changed or not. */
    if (s->_cfg.set_timer) redlock__sock_timer_set(s, redlock__sock_deadline(s));
}

#ifndef REDLOCK_SOCKET_NO_CORE
REDLOCK_SOCKET_API redlock_client *redlock_socket_client(redlock_socket *s)
{
    return redlock__sock_valid(s) && !redlock__sock_raw(s) ? &s->_client : NULL;
}

static void redlock__sock_on_result(redlock_lock *lock, const redlock_result *r)
{
    redlock_socket_lock *l = (redlock_socket_lock *)r->user;
    redlock_result copy = *r;
    copy.user = l->_user;
    if (l->_want && (int)r->op == l->_want) {
        l->_last = copy;
        l->_done = 1;
        l->_want = 0;
    } else if (r->op == REDLOCK_OP_LOST || r->op == REDLOCK_OP_ACQUIRE) {
        l->_last = copy; /* the watchdog's loss, or an acquire begun with the core's call */
    }
    if (l->_fn) l->_fn(lock, &copy);
}

REDLOCK_SOCKET_API int redlock_socket_lock_init(redlock_socket *s, redlock_socket_lock *l,
                                                const redlock_lock_opts *opts)
{
    redlock_lock_opts o;
    int rc, waited, entered;
    if (!redlock__sock_valid(s) || !l || !opts || redlock__sock_raw(s)) return REDLOCK_ERR_INVALID;
    /* a cluster node needs every key of the lock in one slot: a fenced
       lock's key needs a {hash tag} (redlock_cluster.h) */
    if (s->_ncl && !redlock_cluster_lock_fits(opts)) return REDLOCK_ERR_INVALID;
    o = *opts;
    o.on_result = redlock__sock_on_result;
    o.user = l;
    entered = redlock__sock_enter(s);
    /* l is not read nor cleared first (it may be uninitialised memory): a
       handle still initialised on this client is the core's to deinitialise
       (its key block freed, its table entry removed); cleared, it would be
       filed a second time */
    rc = redlock_lock_init(&l->lock, &s->_client, &o);
    if (rc != REDLOCK_OK && rc != REDLOCK_ERR_NOMEM) { /* refused: the call did nothing */
        redlock__sock_leave(s, entered, 0);
        return rc;
    }
    /* a blocking call waits on the old lock (we are in a callback): its
       result cannot come any more */
    waited = s->_blocking == l && !l->_done;
    l->_s = rc == REDLOCK_OK ? s : NULL;
    l->_fn = opts->on_result;
    l->_user = opts->user;
    l->_want = l->_done = 0;
    memset(&l->_last, 0, sizeof l->_last);
    memset(&l->_shown, 0, sizeof l->_shown);
    if (waited) {
        l->_last.status = REDLOCK_ERR_DETACHED;
        l->_done = 1;
    }
    redlock__sock_leave(s, entered, 1);
    return rc;
}

REDLOCK_SOCKET_API void redlock_socket_lock_deinit(redlock_socket_lock *l)
{
    redlock_socket *s;
    int entered;
    if (!l || !l->_s) return;
    s = l->_s;
    entered = redlock__sock_enter(s);
    if (l->_s == s) { /* not deinitialised by another thread meanwhile */
        redlock_lock_deinit(&l->lock);
        l->_s = NULL;
        if (l->_want) { /* a blocking call waits on it (we are in a callback): it ends now */
            memset(&l->_last, 0, sizeof l->_last);
            l->_last.status = REDLOCK_ERR_DETACHED;
            l->_done = 1;
            l->_want = 0;
        }
    }
    redlock__sock_leave(s, entered, 1);
}

/* After a blocking call's result: what the core sent last (the undo of a
   failed attempt, a release's commands to the slower nodes) is written
   out, also to a node still connecting; while a node owes the lock an
   answer that the core follows with another command or that a later
   release needs (redlock_lock_followup: a legacy SETNX or GET, a node's
   first script), replies are read too, so that step is not left undone
   when the call returns. Other stragglers are read by the next call. At
   most one node timeout; writing to a node that cannot take it (down,
   still in its handshake) only until one node timeout from the call's
   start. */
static void redlock__sock_linger(redlock_socket *s, const redlock_socket_lock *l, int64_t call_start)
{
    int64_t node_timeout = (s->_cfg.core.node_timeout_ms > 0 ? s->_cfg.core.node_timeout_ms : 50) * 1000;
    int64_t now = redlock_socket_now_us();
    int64_t until = now + node_timeout;
    /* unwritten output (a node still connecting or in its TLS handshake, or
       one that stopped reading) had its node timeout from the call's start:
       a node that is down must not cost a second one */
    int64_t write_until = call_start + node_timeout;
    for (;;) {
        int i, follow = redlock_lock_followup(&l->lock), unwritten = 0, answering = 0;
        for (i = 0; i < redlock__sock_slots(s); i++) { /* command connections (a cluster's too) */
            struct redlock__sock_node *nd = &s->_nodes[i];
            if (redlock__sock_aside(nd)) continue;
            if (nd->life.state == REDLOCK__CONN_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
            if ((nd->life.state == REDLOCK__CONN_UP || redlock__sock_opening(nd)) && nd->out_off < nd->out_len)
                unwritten = 1;
            else if (nd->life.state == REDLOCK__CONN_UP && nd->q.count > 0)
                answering = 1; /* asked, and may still answer */
        }
        if (unwritten && now >= write_until) unwritten = 0;
        if (!answering && !unwritten) follow = 0; /* the answer owed is from a node that never got the question */
        if ((!follow && !unwritten) || now >= until) break;
        redlock__sock_step(s, follow || write_until > until ? until : write_until);
        now = redlock_socket_now_us();
    }
}

/* Runs the loop until the blocking call's result (or DETACHED). */
static int redlock__sock_result(redlock_socket *s, redlock_socket_lock *l)
{
    while (!l->_done) {
        int i, idle = 1;
        redlock__sock_step(s, REDLOCK_NO_DEADLINE);
        if (l->_done) break;
        /* the core lock was deinitialised inside a callback (the core's
           redlock_lock_deinit; ours says DETACHED itself): it reads IDLE
           with nothing running, and its result cannot come any more, while
           other locks' timers may run on for long */
        if (redlock_lock_state(&l->lock) == REDLOCK_STATE_IDLE && !redlock_lock_pending(&l->lock)) {
            l->_want = 0;
            return REDLOCK_ERR_DETACHED;
        }
        /* nothing in flight and nothing scheduled: the result cannot come
           any more */
        for (i = 0; i < redlock__sock_slots(s); i++)
            if (!redlock__sock_aside(&s->_nodes[i]) && (s->_nodes[i].q.count || redlock__sock_opening(&s->_nodes[i])))
                idle = 0;
        if (idle && redlock__sock_deadline(s) == REDLOCK_NO_DEADLINE) {
            l->_want = 0;
            return REDLOCK_ERR_DETACHED;
        }
    }
    return l->_last.status;
}

/* A blocking call: starts op, runs the loop until its result, then
   lingers. s is read before the core runs: a callback may deinitialise
   the lock. */
static int redlock__sock_call(redlock_socket_lock *l, int op, int64_t ttl_ms)
{
    redlock_socket *s;
    int rc, entered;
    int64_t start;
    if (!l || !redlock__sock_valid(l->_s)) return REDLOCK_ERR_INVALID;
    s = l->_s;
    entered = redlock__sock_enter(s); /* held until the call returns: the loop is this call's */
    start = redlock_socket_now_us();
    if (s->_in_cb || l->_s != s) { /* in a callback; deinitialised meanwhile (another thread) */
        rc = s->_in_cb ? REDLOCK_ERR_BUSY : REDLOCK_ERR_INVALID;
        redlock__sock_leave(s, entered, 0);
        return rc;
    }
    l->_want = op;
    l->_done = 0;
    memset(&l->_last, 0, sizeof l->_last);
    s->_blocking = l;
    if (op == REDLOCK_OP_ACQUIRE) rc = redlock_acquire(&l->lock);
    else if (op == REDLOCK_OP_RELEASE) rc = redlock_release(&l->lock);
    else if (op == REDLOCK_OP_UPGRADE) rc = redlock_upgrade(&l->lock);
    else if (op == REDLOCK_OP_DOWNGRADE) rc = redlock_downgrade(&l->lock);
    else rc = redlock_extend(&l->lock, ttl_ms);
    if (rc != REDLOCK_OK) {
        l->_want = 0;
    } else {
        rc = redlock__sock_result(s, l);
        redlock__sock_linger(s, l, start);
    }
    s->_blocking = NULL;
    redlock__sock_leave(s, entered, 1);
    return rc;
}

REDLOCK_SOCKET_API int redlock_socket_acquire(redlock_socket_lock *l)
{
    return redlock__sock_call(l, REDLOCK_OP_ACQUIRE, 0);
}

REDLOCK_SOCKET_API int redlock_socket_release(redlock_socket_lock *l)
{
    return redlock__sock_call(l, REDLOCK_OP_RELEASE, 0);
}

REDLOCK_SOCKET_API int redlock_socket_extend(redlock_socket_lock *l, int64_t ttl_ms)
{
    return redlock__sock_call(l, REDLOCK_OP_EXTEND, ttl_ms);
}

REDLOCK_SOCKET_API int redlock_socket_upgrade(redlock_socket_lock *l)
{
    return redlock__sock_call(l, REDLOCK_OP_UPGRADE, 0);
}

REDLOCK_SOCKET_API int redlock_socket_downgrade(redlock_socket_lock *l)
{
    return redlock__sock_call(l, REDLOCK_OP_DOWNGRADE, 0);
}

REDLOCK_SOCKET_API const redlock_result *redlock_socket_last_result(const redlock_socket_lock *l)
{
    /* the watchdog thread may write _last (a loss) at any time: the caller
       reads a copy made under the mutex, which only this function writes */
    redlock_socket_lock *m = (redlock_socket_lock *)l;
    redlock_socket *s;
    int entered;
    if (!l) return NULL;
    s = l->_s;
    entered = s ? redlock__sock_enter(s) : 0;
    m->_shown = l->_last;
    if (s) redlock__sock_leave(s, entered, 0);
    return &l->_shown;
}

REDLOCK_SOCKET_API redlock_state redlock_socket_lock_state(const redlock_socket_lock *l)
{
    redlock_socket *s;
    redlock_state st;
    int entered;
    if (!l || !(s = l->_s)) return REDLOCK_STATE_IDLE;
    entered = redlock__sock_enter(s);
    st = redlock_lock_state(&l->lock);
    redlock__sock_leave(s, entered, 0);
    return st;
}

REDLOCK_SOCKET_API int64_t redlock_socket_lock_valid_until(const redlock_socket_lock *l)
{
    redlock_socket *s;
    int64_t v;
    int entered;
    if (!l || !(s = l->_s)) return 0;
    entered = redlock__sock_enter(s);
    v = redlock_lock_valid_until(&l->lock);
    redlock__sock_leave(s, entered, 0);
    return v;
}
#endif /* !REDLOCK_SOCKET_NO_CORE */

/* ---- diagnostics: a port asked directly (redlock_socket_probe) ----
   Apart from the adapter's connections on purpose: asking a port in the
   other protocol takes connections of its own, which the adapter must not
   open behind its caller's back, and a caller asks only when a message
   needs it. */

/* Waits up to `until` (us) for events on fd: > 0 ready, 0 time is up,
   < 0 failed. */
static int redlock__sock_probe_wait(int fd, short events, int64_t until)
{
    for (;;) {
        struct pollfd pf;
        int64_t left = until - redlock_socket_now_us();
        int r;
        pf.fd = fd;
        pf.events = events;
        pf.revents = 0;
        r = poll(&pf, 1, left <= 0 ? 0 : (int)((left + 999) / 1000));
        if (r >= 0 || errno != EINTR) return r;
    }
}

/* A non-blocking connect to sa, bounded by until: the socket, or -1 with
   words set (*timed_out too when the time ran out). */
static int redlock__sock_probe_connect(const struct sockaddr *sa, socklen_t len, int64_t until, char *words,
                                       size_t cap, int *timed_out)
{
    int fd = socket(sa->sa_family, SOCK_STREAM, 0), fl, e = 0, one = 1;
    socklen_t el = (socklen_t)sizeof e;
    (void)one;
    if (fd < 0) {
        redlock__conn_connect_words(words, cap, errno, 0);
        return -1;
    }
    fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        redlock__conn_connect_words(words, cap, errno, 0);
        close(fd);
        return -1;
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
#ifdef SO_NOSIGPIPE
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    if (connect(fd, sa, len) == 0) return fd;
    if (errno == EINPROGRESS || errno == EINTR) {
        if (redlock__sock_probe_wait(fd, POLLOUT, until) <= 0) {
            *timed_out = 1;
            e = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) {
            e = errno;
        }
        if (e == 0) return fd;
    } else {
        e = errno;
    }
    redlock__conn_connect_words(words, cap, e, sa->sa_family == AF_UNIX);
    close(fd);
    return -1;
}

/* A socket connected to the node, or -1 with words set. */
static int redlock__sock_probe_open(const redlock_node *node, int64_t until, char *words, size_t cap)
{
    const char *path = redlock__sock_path(node);
    int fd = -1, timed_out = 0;
    if (path) {
        struct sockaddr_un su;
        size_t n = strlen(path);
        if (n >= sizeof su.sun_path) {
            redlock__conn_connect_words(words, cap, ENAMETOOLONG, 1);
            return -1;
        }
        memset(&su, 0, sizeof su);
        su.sun_family = AF_UNIX;
        memcpy(su.sun_path, path, n + 1);
        return redlock__sock_probe_connect((const struct sockaddr *)&su, (socklen_t)sizeof su, until, words, cap,
                                           &timed_out);
    } else {
        struct addrinfo hints, *res = NULL, *ai;
        char port[16];
        int rc, tried = 0;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        port[redlock__resp_num(port, (unsigned long long)(node->port ? node->port : 6379))] = 0;
        rc = REDLOCK_SOCKET_GETADDRINFO(node->host && node->host[0] ? node->host : "127.0.0.1", port, &hints, &res);
        if (rc != 0 || !res) {
            redlock__sock_resolve_words(words, cap, rc);
            return -1;
        }
        for (ai = res; ai && fd < 0 && !timed_out; ai = ai->ai_next)
            if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
                tried = 1;
                fd = redlock__sock_probe_connect(ai->ai_addr, ai->ai_addrlen, until, words, cap, &timed_out);
            }
        REDLOCK_SOCKET_FREEADDRINFO(res);
        if (!tried) redlock__sock_resolve_words(words, cap, 0);
    }
    return fd;
}

/* Does the port speak plain text? A PING answered in RESP says so; a TLS
   server closes or resets it without a word. */
static void redlock__sock_probe_plain(int fd, int64_t until, redlock_socket_probe_result *r)
{
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    ssize_t n;
    char c;
    if (send(fd, ping, sizeof ping - 1, REDLOCK__SOCK_NOSIGNAL) != (ssize_t)(sizeof ping - 1)) return;
    if (redlock__sock_probe_wait(fd, POLLIN, until) <= 0) return;
    do n = recv(fd, &c, 1, 0);
    while (n < 0 && errno == EINTR);
    if (n == 1 && (c == '+' || c == '-')) r->plain = 1;
    r->silent = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

#ifdef REDLOCK_SOCKET_TLS
/* Does the port speak TLS? A hello (hello[0..n), redlock_tls.h) answered
   with a TLS record, a server's hello (0x16) or an alert (0x15), says so. */
static void redlock__sock_probe_tls(int fd, const unsigned char *hello, size_t n, int64_t until,
                                    redlock_socket_probe_result *r)
{
    size_t off = 0;
    ssize_t got;
    unsigned char c;
    while (off < n) {
        ssize_t w = send(fd, hello + off, n - off, REDLOCK__SOCK_NOSIGNAL);
        if (w > 0) off += (size_t)w;
        else if (w < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) &&
                                              redlock__sock_probe_wait(fd, POLLOUT, until) > 0)))
            continue;
        else return;
    }
    if (redlock__sock_probe_wait(fd, POLLIN, until) <= 0) return;
    do got = recv(fd, &c, 1, 0);
    while (got < 0 && errno == EINTR);
    if (got == 1 && (c == 0x15 || c == 0x16)) r->tls = 1;
}
#endif

REDLOCK_SOCKET_API int redlock_socket_probe(const redlock_node *node, int tls, int64_t timeout_ms,
                                            redlock_socket_probe_result *out)
{
    redlock_socket_probe_result r;
    int64_t until;
    int fd;
    if (!node || !out || timeout_ms < 0 || node->port < 0 || node->port > 65535) return REDLOCK_ERR_INVALID;
    memset(&r, 0, sizeof r);
    until = redlock_socket_now_us() + (timeout_ms > 86400000 ? 86400000 : timeout_ms) * 1000;
    fd = redlock__sock_probe_open(node, until, r.words, sizeof r.words);
    if (fd < 0) {
        *out = r;
        return REDLOCK_ERR_CONNECT;
    }
    redlock__sock_probe_plain(fd, until, &r);
    close(fd);
#ifdef REDLOCK_SOCKET_TLS
    if (!tls && r.silent) { /* a TLS port? asked in TLS, on a connection of its own */
        char scratch[sizeof r.words];
        unsigned char hello[4096];
        int64_t t0 = redlock_socket_now_us();
        size_t n = redlock__tls_hello(hello, sizeof hello);
        until += redlock_socket_now_us() - t0; /* making it is work, not waiting for the port */
        if (n && (fd = redlock__sock_probe_open(node, until, scratch, sizeof scratch)) >= 0) {
            redlock__sock_probe_tls(fd, hello, n, until, &r);
            close(fd);
        }
    }
#endif
    r.other = tls ? r.plain : r.tls;
    *out = r;
    return REDLOCK_OK;
}

#endif /* REDLOCK_SOCKET_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License - see the end of redlock.h. Copyright (c) 2026 The redlock.h authors
------------------------------------------------------------------------------
*/
