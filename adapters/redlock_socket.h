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
          optional) or Unix sockets, one per node, non-blocking, AUTH
          (password or ACL user + password), SELECT; node lists
          ("host:port,redis://...", $REDLOCK_NODES) parsed for you
       3. Blocking API driven by poll(): acquire / release / extend / run
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
   connection (non-blocking connect, then AUTH, SELECT and INFO memory
   pipelined before the command). INFO's maxmemory_policy tells the core
   what the node may evict before the replies behind it are handed on
   (redlock.h section 4, Eviction; redlock_socket_node_policy()); an INFO
   refused (an ACL) or unreadable leaves the node as it was (at first:
   evicts nothing), and cfg.info_off = 1 (or raw mode) leaves it out.
   Host names are resolved with getaddrinfo(), which blocks: use addresses
   where that matters. A node's connection fails with:
       REDLOCK_ERR_CONNECT       refused, unreachable, no connection within
                                 connect_timeout_ms
       REDLOCK_ERR_AUTH          AUTH refused, or a NOAUTH reply
       REDLOCK_ERR_SELECT        SELECT refused (no such database)
       REDLOCK_ERR_NODE_TIMEOUT  a command unanswered for command_timeout_ms
       REDLOCK_ERR_TRANSPORT     reset, closed, send/recv failed, queue full
       REDLOCK_ERR_PROTOCOL      malformed, oversized, RESP3, truncated or
                                 unsolicited reply
       REDLOCK_ERR_NOMEM         no memory for a command or a reply
       REDLOCK_ERR_TLS           TLS handshake failed (certificate refused,
                                 not TLS, closed or silent within
                                 connect_timeout_ms) or a TLS record failed
   and then every command in flight on it gets redlock_on_error() with that
   status; the next command reconnects. redlock_socket_node_status() keeps
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
   that asks for TLS with REDLOCK_ERR_TLS. cfg.tls applies to every node;
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
   direction shows in the interest too. A failure is REDLOCK_ERR_TLS, and
   redlock_socket_node_status()'s text says why ("TLS handshake:
   certificate refused: hostname mismatch", "... no answer within the
   connect timeout" for a plain-text server). A CA, certificate or key
   that cannot be loaded fails redlock_socket_init() with REDLOCK_ERR_TLS.
   TLS 1.2 at least; OpenSSL reads and writes through send()/recv() with
   MSG_NOSIGNAL, so no SIGPIPE.

   RELEASE NOTIFICATIONS (redlock.h section 10). While a lock of the
   client waits for its next attempt (a retry delay at least the node
   timeout: the core asks then), a subscriber connection per node
   (AUTH and TLS as the node's, no SELECT) SUBSCRIBEs to the key's channel,
   and a release wakes the waiting acquire at once; the blocking calls
   wait on those sockets too. They close cfg.notify_idle_ms (default 1000)
   after the last lock stopped waiting; one that fails is reopened 100 ms
   later, and meanwhile its node's releases are not heard (the waiter
   sleeps out its delay). A node that refuses its subscriber (an ACL that
   denies the channel, as Redis 7's default for new users does; a renamed
   SUBSCRIBE; a refused AUTH) is asked again only after a backoff (1 s,
   doubled at each refusal in a row up to 60 s), and
   redlock_socket_notify_status() says so until a SUBSCRIBE is confirmed
   again. cfg.notify_off = 1: no subscribers. In the
   foreign-loop API (4.) node i's subscriber is slot node_count + i.

   NODE LISTS. redlock_socket_parse_nodes() fills cfg->node[] from the
   text users write, the same as the `redlock` tool reads (tools/README.md):
   a comma-separated list (NULL: the environment variable REDLOCK_NODES)
   of
       host[:port]                      port 6379 by default
       [ipv6]:port                      brackets required for IPv6
       /path/to/redis.sock              anything with a '/' and no "://"
       redis://[user:pass@]host[:port][/db]
       rediss://[user:pass@]host[:port][/db]   TLS (needs REDLOCK_SOCKET_TLS)
       unix://[user:pass@]/path/to/redis.sock[?db=N]
   with %XX escapes in user and password (%2C for ',', %25 for '%'; a
   password may hold '@' and '/': the last '@' ends it). A node listed
   twice (same host, case-insensitive, port and db, or same path and db)
   is refused: it would vote twice. The strings live in one heap block
   (*mem) that redlock_socket_free_nodes() frees and wipes; init copies
   them, so that block may go right after redlock_socket_init().
   redlock_socket_format_node() writes a node for messages with its
   password as "***"; redlock_socket_scrub_nodes() overwrites the
   passwords in a list in place (e.g. in argv, so that ps does not show
   them). Error texts never hold a password.

       redlock_socket_config cfg;
       void *mem = NULL;
       char err[256];
       redlock_socket_config_init(&cfg);
       if (redlock_socket_parse_nodes(&cfg, argc > 1 ? argv[1] : NULL, &mem, err, sizeof err) != 0) {
           fprintf(stderr, "%s\n", err);
           return 64;
       }
       rc = redlock_socket_init(&s, &cfg);
       redlock_socket_free_nodes(mem);

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
   next call. The
   watchdog and everything else only runs while a redlock_socket_* call
   runs (there is no thread): call redlock_socket_run(&s, ms) often enough
   (at least every renew interval), and where the program would sleep,
   call redlock_socket_run(&s, ms) instead. A program that stops calling
   in is still told the truth: redlock_lock_state(&l.lock) reads the clock
   (LOST once the validity has passed) and redlock_lock_remaining_us()
   says how long it may still act. Lock results, including LOST, reach the
   on_result you gave in the options when the adapter runs again.

   4. FOREIGN EVENT LOOP
   ---------------------
   For each slot i below redlock_socket_fd_count() (the nodes' connections
   0 .. node_count-1, then, unless notify_off, the subscribers of release
   notifications: at most REDLOCK_SOCKET_MAX_FDS), watch
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
       REDLOCK_SOCKET_GETADDRINFO     the resolver, default getaddrinfo and
       REDLOCK_SOCKET_FREEADDRINFO    freeaddrinfo (same signatures; define
                                      both), e.g. a cache or a test double

   THREADS: one redlock_socket is used by one thread at a time. Inside
   callbacks (on_result, on_event, watch, set_timer, on_reply, on_error)
   the blocking calls and redlock_socket_deinit return REDLOCK_ERR_BUSY /
   must not be called; non-blocking core calls are fine.
*/
#ifndef REDLOCK_SOCKET_H
#define REDLOCK_SOCKET_H

#if defined(REDLOCK_SOCKET_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "../redlock.h"
#if defined(REDLOCK_SOCKET_STATIC) && !defined(REDLOCK_RESP_STATIC)
#define REDLOCK_RESP_STATIC
#endif
#include "redlock_resp.h"
#include "redlock_tls.h"
#include "redlock_notify.h"

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
/* Sockets one adapter may have: a command connection and a subscriber
   (release notifications) per node. */
#define REDLOCK_SOCKET_MAX_FDS (2 * REDLOCK_MAX_NODES)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. RESP2: see redlock_resp.h ---- */

/* ---- 2.-4. connections and loops ---- */

typedef struct redlock_socket_node {
    const char *host;      /* name or address; NULL: "127.0.0.1" (copied) */
    int port;              /* 0: 6379 */
    const char *unix_path; /* set: connect to this Unix socket instead (copied) */
    const char *username;  /* ACL user; needs password (copied); NULL: the config's */
    const char *password;  /* NULL: the config's; both NULL: no AUTH (copied, wiped at deinit) */
    int db;                /* > 0: SELECT db; 0: the config's */
    redlock_tls tls;       /* TLS (see 2.; redlock_tls.h): enable set: on, NULL fields the config's */
} redlock_socket_node;

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
    int info_off;                           /* 1: no INFO memory on new connections: the core
                                               never learns what a node may evict (see 2.) */
    redlock_config core;                    /* zero fields: defaults; node_count ignored */
    void (*on_event)(void *user, const redlock_event *ev);  /* optional, core events */
    /* foreign loop hooks, optional (see 4.): fd -1 means "about to be
       closed"; set_timer arms a one-shot timer */
    void (*watch)(void *user, int node, int fd, int interest);
    void (*set_timer)(void *user, int64_t deadline_us);
    /* raw mode (REDLOCK_SOCKET_NO_CORE, or when set): replies and node
       errors of redlock_socket_send() go here instead of to the core */
    void (*on_reply)(void *user, int node, redlock_tag tag, const redlock_reply *reply);
    void (*on_error)(void *user, int node, redlock_tag tag, int status);
    void *user;
} redlock_socket_config;

struct redlock__sock_node;

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
    redlock__notify _notify;
    int64_t _notify_idle_since;
    /* the last redlock_socket_pollfds(): node and connection of each entry */
    int _poll_node[REDLOCK_SOCKET_MAX_FDS];
    unsigned _poll_gen[REDLOCK_SOCKET_MAX_FDS];
    int _poll_n;
    void *_bio_method; /* REDLOCK_SOCKET_TLS: the socket BIO of TLS nodes */
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
} redlock_socket_lock;
#endif

/* Fills in the defaults (also those of cfg->core). */
REDLOCK_SOCKET_API void redlock_socket_config_init(redlock_socket_config *cfg);

/* Node lists (see 2.). Parses `list` (NULL: getenv("REDLOCK_NODES")) into
   cfg->node[] and cfg->node_count: with *mem NULL the list replaces the
   nodes in cfg; with *mem from an earlier call it is appended (a node
   already there is refused as listed twice). The nodes' strings are kept
   in *mem (pass &a `void *` that is NULL at first); free it with
   redlock_socket_free_nodes() once cfg is no longer read (init copies
   what it needs). Returns 0; or REDLOCK_ERR_INVALID (a bad node, one
   listed twice, no list), REDLOCK_ERR_NODES (more than REDLOCK_MAX_NODES
   in all) or REDLOCK_ERR_NOMEM, with one line saying why in err (which
   never holds a password; err may be NULL), and cfg and *mem unchanged. */
REDLOCK_SOCKET_API int redlock_socket_parse_nodes(redlock_socket_config *cfg, const char *list, void **mem,
                                                  char *err, size_t errlen);
/* Frees every block of a *mem chain, passwords wiped first. NULL: nothing. */
REDLOCK_SOCKET_API void redlock_socket_free_nodes(void *mem);
/* A node as text for messages, its password as "***": "host:port",
   "[::1]:port", "/path.sock", "redis://user:***@host:port/db",
   "unix://:***@/path.sock?db=3". Returns the length it needs (like
   snprintf; the text is cut to fit cap, always terminated when cap > 0). */
REDLOCK_SOCKET_API int redlock_socket_format_node(const redlock_socket_node *n, char *out, size_t cap);
/* Overwrites, in place, the password of every URL in a node list with 'x'
   (the user name too when there is no ':'), finding them as the parser
   does. */
REDLOCK_SOCKET_API void redlock_socket_scrub_nodes(char *list);
/* INVALID, NODES, NOMEM, TLS (asked for without REDLOCK_SOCKET_TLS, or a
   CA / certificate / key that cannot be loaded), or a redlock_client_init
   error. Connects lazily. */
REDLOCK_SOCKET_API int redlock_socket_init(redlock_socket *s, const redlock_socket_config *cfg);
/* Closes every connection; pending commands are dropped silently. */
REDLOCK_SOCKET_API void redlock_socket_deinit(redlock_socket *s);
/* Connects every node that is down and waits for AUTH / SELECT, at most
   connect_timeout_ms + command_timeout_ms. OK if all nodes are up, else
   the first failing node's status. Optional: commands connect by themselves. */
REDLOCK_SOCKET_API int redlock_socket_connect(redlock_socket *s);
/* Runs the loop for timeout_ms (0: handle what is ready, do not wait). */
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
   or a command's reply); errbuf (optional) gets its text (this adapter
   keeps no server words: the status's description, or for TLS what
   OpenSSL said). */
REDLOCK_SOCKET_API int redlock_socket_node_status(const redlock_socket *s, int node, char *errbuf, size_t errsz);
/* Nonzero when the node's connection is established. */
REDLOCK_SOCKET_API int redlock_socket_node_connected(const redlock_socket *s, int node);
/* The node's release notifications (see 2.): 0 while they work or were
   never refused; REDLOCK_ERR_SERVER (AUTH for a refused login) once the
   node refused its subscriber (an ACL without the channel, a renamed
   SUBSCRIBE): its releases are then not heard, and the subscriber is
   tried again after a backoff; errbuf (optional) gets the status's text. */
REDLOCK_SOCKET_API int redlock_socket_notify_status(const redlock_socket *s, int node, char *errbuf, size_t errsz);
/* What the node may evict (redlock.h section 4, Eviction): its
   maxmemory_policy as the last INFO memory that named one said ("" before
   any did) into buf (optional, cut to size), and the redlock_evicts the
   core was told (NONE, VOLATILE, ALL); INVALID for a bad node. */
REDLOCK_SOCKET_API int redlock_socket_node_policy(const redlock_socket *s, int node, char *buf, size_t size);
/* Commands in flight on all nodes (e.g. run the loop until 0 before exit). */
REDLOCK_SOCKET_API int redlock_socket_pending(const redlock_socket *s);
/* Heap bytes held by the adapter (buffers, queues, parsers). */
REDLOCK_SOCKET_API size_t redlock_socket_memory(const redlock_socket *s);

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
   core's redlock_acquire. */
REDLOCK_SOCKET_API const redlock_result *redlock_socket_last_result(const redlock_socket_lock *l);
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
#define REDLOCK__SOCK_STR2(x) #x
#define REDLOCK__SOCK_STR(x) REDLOCK__SOCK_STR2(x)

#if defined(REDLOCK_SOCKET_GETADDRINFO) != defined(REDLOCK_SOCKET_FREEADDRINFO)
#error "define both REDLOCK_SOCKET_GETADDRINFO and REDLOCK_SOCKET_FREEADDRINFO"
#endif
#ifndef REDLOCK_SOCKET_GETADDRINFO
#define REDLOCK_SOCKET_GETADDRINFO getaddrinfo
#define REDLOCK_SOCKET_FREEADDRINFO freeaddrinfo
#endif

/* ---- connections ---- */

/* CONNECTING: TCP connect in progress; HANDSHAKE: TLS handshake in progress */
enum { REDLOCK__SOCK_DOWN = 0, REDLOCK__SOCK_CONNECTING, REDLOCK__SOCK_HANDSHAKE, REDLOCK__SOCK_UP };
enum { REDLOCK__REQ_USER = 0, REDLOCK__REQ_AUTH, REDLOCK__REQ_SELECT, REDLOCK__REQ_SUB /* (UN)SUBSCRIBE */,
       REDLOCK__REQ_INFO /* INFO memory: what the node may evict */ };
#define REDLOCK__SOCK_SUB_RETRY_MS 100 /* a subscriber that failed is reopened after this */
#define REDLOCK__SOCK_MAX_ADDR 4

typedef struct redlock__sock_req {
    redlock_tag tag;
    int64_t deadline;
    int kind;
} redlock__sock_req;

struct redlock__sock_node {
    int index, fd, state;
    unsigned gen;
    char *host, *unix_path, *user, *pass;
    int port, db;
    struct sockaddr_storage addr[REDLOCK__SOCK_MAX_ADDR];
    socklen_t addrlen[REDLOCK__SOCK_MAX_ADDR];
    int naddr, cur;
    int64_t connect_deadline;
    char *out;
    size_t out_len, out_off, out_cap;
    redlock__sock_req *q;   /* ring of q_cap, grown by doubling up to MAX_PENDING */
    size_t q_head, q_count, q_cap;
    redlock_resp_parser parser;
    int last_status;
    unsigned failures; /* connections lost or refused so far */
    int sub;           /* a subscriber (release notifications), not a node's command connection */
    char policy[24];   /* maxmemory_policy the last INFO memory named ("" none yet) */
    int64_t retry_at;  /* subscriber: not reopened before this */
    int64_t refused_ms; /* subscriber: the backoff after the node refused it, 0 if it did not */
    int refused;       /* subscriber: 0, or AUTH / SERVER while refused (notify_status) */
    int rep_fd, rep_interest;
    /* TLS (REDLOCK_SOCKET_TLS): the context made at init, the session of
       this connection, what OpenSSL waits for (REDLOCK_SOCKET_READ /
       WRITE: during the handshake, or a read that must write / a write
       that must read), and the last TLS failure's words */
    void *tls_ctx, *ssl;
    char *tls_name;
    int tls_verify, tls_want;
    char tls_err[120];
};

static int redlock__sock_opening(const struct redlock__sock_node *nd)
{
    return nd->state == REDLOCK__SOCK_CONNECTING || nd->state == REDLOCK__SOCK_HANDSHAKE;
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

/* Connections: the nodes' command connections, then the subscribers. */
static int redlock__sock_slots(const redlock_socket *s) { return s->_cfg.node_count + s->_nsub; }

static int redlock__sock_interest_of(const struct redlock__sock_node *nd)
{
    if (nd->state == REDLOCK__SOCK_CONNECTING) return REDLOCK_SOCKET_WRITE;
    if (nd->state == REDLOCK__SOCK_HANDSHAKE) return nd->tls_want;
    if (nd->state == REDLOCK__SOCK_UP)
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

static int64_t redlock__sock_deadline(const redlock_socket *s)
{
    int64_t d = REDLOCK_NO_DEADLINE;
    int i;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!s->_cfg.on_reply) d = redlock_next_deadline(&s->_client);
#endif
    for (i = 0; i < redlock__sock_slots(s); i++) {
        const struct redlock__sock_node *nd = &s->_nodes[i];
        if (redlock__sock_opening(nd) && nd->connect_deadline < d) d = nd->connect_deadline;
        if (nd->q_count && nd->q[nd->q_head].deadline < d) d = nd->q[nd->q_head].deadline;
        if (nd->sub && nd->state == REDLOCK__SOCK_DOWN && s->_notify.count && nd->retry_at < d) d = nd->retry_at;
    }
    if (s->_nsub && !s->_notify.count && s->_notify_idle_since &&
        s->_notify_idle_since + s->_cfg.notify_idle_ms * 1000 < d)
        d = s->_notify_idle_since + s->_cfg.notify_idle_ms * 1000;
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

static void redlock__sock_deliver_error(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag, int status)
{
    s->_in_cb++;
    if (s->_cfg.on_error) s->_cfg.on_error(s->_cfg.user, nd->index, tag, status);
#ifndef REDLOCK_SOCKET_NO_CORE
    else if (!s->_cfg.on_reply) redlock_on_error(&s->_client, tag, status);
#endif
    s->_in_cb--;
}

static void redlock__sock_deliver_reply(redlock_socket *s, struct redlock__sock_node *nd, redlock_tag tag,
                                        const redlock_reply *r)
{
    if (r->type == REDLOCK_REPLY_ERROR && r->len >= 6 && memcmp(r->str, "NOAUTH", 6) == 0) {
        nd->last_status = REDLOCK_ERR_AUTH;
        redlock__sock_deliver_error(s, nd, tag, REDLOCK_ERR_AUTH);
        return;
    }
    nd->last_status = 0; /* the connection works: see redlock_socket_node_status() */
    s->_in_cb++;
    if (s->_cfg.on_reply) s->_cfg.on_reply(s->_cfg.user, nd->index, tag, r);
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
    nd->state = REDLOCK__SOCK_DOWN;
    nd->gen++;
    redlock__sock_clear_out(nd);
    redlock_resp_parser_reset(&nd->parser);
    nd->q_head = nd->q_count = 0;
    redlock__sock_drop_fd(s, nd, fd);
}

/* The connection failed: close it, then tell the owner of every command
   in flight. The queue is detached first, so the callbacks may send
   (which reconnects) without disturbing this loop. */
static void redlock__sock_fail(redlock_socket *s, struct redlock__sock_node *nd, int status)
{
    redlock__sock_req *q = nd->q;
    size_t head = nd->q_head, count = nd->q_count, cap = nd->q_cap, i;
    nd->q = NULL; /* the callbacks may send: a new queue grows meanwhile */
    nd->q_cap = 0;
    nd->last_status = status; /* already true when the watch hook hears of the close */
    nd->failures++;
    if (nd->sub) nd->retry_at = redlock_socket_now_us() + REDLOCK__SOCK_SUB_RETRY_MS * 1000;
    redlock__sock_close(s, nd);
    redlock__sock_report(s, nd);
    for (i = 0; i < count; i++) {
        const redlock__sock_req *r = &q[(head + i) % cap];
        if (r->kind == REDLOCK__REQ_USER) redlock__sock_deliver_error(s, nd, r->tag, status);
    }
    free(q);
}

/* ---- the byte stream: plain or TLS ----
   redlock__sock_recv / redlock__sock_send move bytes over the node's
   connection: > 0 bytes moved; 0 the peer closed (recv only); -1 would
   block; -2 the connection failed; -3 TLS failed (nd->tls_err says why). */

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

/* The words of the last TLS failure on this node (e: SSL_get_error's). */
static void redlock__sock_tls_words(struct redlock__sock_node *nd, int e, const char *during)
{
    redlock__tls_words((const SSL *)nd->ssl, nd->tls_verify, e, during, nd->tls_err, sizeof nd->tls_err);
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
    if (!(nd->tls_name = redlock__sock_strdup(t->server_name ? t->server_name : nd->host))) return REDLOCK_ERR_NOMEM;
    nd->tls_verify = !t->insecure_skip_verify;
    rc = redlock__tls_context(t, &ctx);
    nd->tls_ctx = ctx; /* freed at deinit, also when rc says it is not usable */
    return rc;
}

static void redlock__sock_tls_handshake(redlock_socket *s, struct redlock__sock_node *nd);

/* TCP is up: start the TLS handshake (redlock__tls_session: the name
   checked and sent). */
static void redlock__sock_tls_start(redlock_socket *s, struct redlock__sock_node *nd)
{
    SSL *ssl = redlock__tls_session((SSL_CTX *)nd->tls_ctx, nd->tls_name, nd->tls_verify);
    BIO *bio = ssl ? BIO_new((BIO_METHOD *)s->_bio_method) : NULL;
    if (!bio) {
        if (ssl) SSL_free(ssl);
        snprintf(nd->tls_err, sizeof nd->tls_err, "%s", "TLS setup: out of memory");
        redlock__sock_fail(s, nd, REDLOCK_ERR_NOMEM);
        return;
    }
    BIO_set_data(bio, (void *)(intptr_t)nd->fd);
    BIO_set_init(bio, 1);
    SSL_set_bio(ssl, bio, bio);
    nd->ssl = ssl;
    nd->state = REDLOCK__SOCK_HANDSHAKE;
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
        return -3;
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
        return -3;
    }
#endif
    for (;;) {
        ssize_t w = send(nd->fd, p, n, REDLOCK__SOCK_NOSIGNAL);
        if (w >= 0) return w; /* never 0 for a non-empty stream send */
        if (errno != EINTR) return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
    }
}

static int redlock__sock_try_addr(redlock_socket *s, struct redlock__sock_node *nd)
{
    (void)s;
    while (nd->cur < nd->naddr) {
        const struct sockaddr *sa = (const struct sockaddr *)&nd->addr[nd->cur];
        int fd = socket(sa->sa_family, SOCK_STREAM, 0), fl, one = 1;
        if (fd < 0) {
            nd->cur++;
            continue;
        }
        fl = fcntl(fd, F_GETFL, 0);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
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
            nd->state = nd->tls_ctx ? REDLOCK__SOCK_CONNECTING : REDLOCK__SOCK_UP;
            return 0;
        }
        if (errno == EINPROGRESS || errno == EINTR) {
            nd->fd = fd;
            nd->state = REDLOCK__SOCK_CONNECTING;
            return 0;
        }
        close(fd);
        nd->cur++;
    }
    return REDLOCK_ERR_CONNECT;
}

static int redlock__sock_resolve(struct redlock__sock_node *nd)
{
    nd->naddr = 0;
    nd->cur = 0;
    if (nd->unix_path) {
        struct sockaddr_un *su = (struct sockaddr_un *)&nd->addr[0];
        size_t n = strlen(nd->unix_path);
        if (n == 0 || n >= sizeof su->sun_path) return REDLOCK_ERR_CONNECT;
        memset(su, 0, sizeof *su);
        su->sun_family = AF_UNIX;
        memcpy(su->sun_path, nd->unix_path, n + 1);
        nd->addrlen[0] = (socklen_t)sizeof *su;
        nd->naddr = 1;
    } else {
        struct addrinfo hints, *res = NULL, *ai;
        char port[16];
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        port[redlock__resp_num(port, (unsigned long long)nd->port)] = 0;
        if (REDLOCK_SOCKET_GETADDRINFO(nd->host, port, &hints, &res) != 0 || !res) return REDLOCK_ERR_CONNECT;
        for (ai = res; ai && nd->naddr < REDLOCK__SOCK_MAX_ADDR; ai = ai->ai_next) {
            if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
                ai->ai_addrlen > (socklen_t)sizeof nd->addr[0])
                continue;
            memcpy(&nd->addr[nd->naddr], ai->ai_addr, ai->ai_addrlen);
            nd->addrlen[nd->naddr] = ai->ai_addrlen;
            nd->naddr++;
        }
        REDLOCK_SOCKET_FREEADDRINFO(res);
        if (!nd->naddr) return REDLOCK_ERR_CONNECT;
    }
    return 0;
}

static int redlock__sock_queue(redlock_socket *s, struct redlock__sock_node *nd, int argc,
                               const char *const *argv, const size_t *argvlen, redlock_tag tag, int kind)
{
    size_t need, slot;
    int64_t now = redlock_socket_now_us();
    if (nd->q_count >= (size_t)REDLOCK_SOCKET_MAX_PENDING) return REDLOCK_ERR_QUEUE_FULL;
    need = redlock_resp_encode(NULL, 0, argc, argv, argvlen);
    if (!need) return REDLOCK_ERR_INVALID;
    if (nd->q_count == nd->q_cap) { /* grow the ring, oldest first at 0 */
        size_t cap = nd->q_cap ? nd->q_cap * 2 : 64, i;
        redlock__sock_req *nq;
        if (cap > (size_t)REDLOCK_SOCKET_MAX_PENDING) cap = (size_t)REDLOCK_SOCKET_MAX_PENDING;
        nq = (redlock__sock_req *)malloc(cap * sizeof *nq);
        if (!nq) return REDLOCK_ERR_NOMEM;
        for (i = 0; i < nd->q_count; i++) nq[i] = nd->q[(nd->q_head + i) % nd->q_cap];
        free(nd->q);
        nd->q = nq;
        nd->q_cap = cap;
        nd->q_head = 0;
    }
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
    redlock_resp_encode(nd->out + nd->out_len, need, argc, argv, argvlen);
    nd->out_len += need;
    slot = (nd->q_head + nd->q_count) % nd->q_cap;
    nd->q[slot].tag = tag;
    nd->q[slot].kind = kind;
    nd->q[slot].deadline = (redlock__sock_opening(nd) ? nd->connect_deadline : now) +
                           s->_cfg.command_timeout_ms * 1000;
    nd->q_count++;
    return 0;
}

/* Opens the connection and queues AUTH / SELECT in front of everything. */
static int redlock__sock_open(redlock_socket *s, struct redlock__sock_node *nd)
{
    int rc;
    redlock__sock_close(s, nd);
    nd->connect_deadline = redlock_socket_now_us() + s->_cfg.connect_timeout_ms * 1000;
    rc = redlock__sock_resolve(nd);
    if (rc == 0) rc = redlock__sock_try_addr(s, nd);
    if (rc == 0 && nd->pass) {
        const char *argv[3];
        int argc = 0;
        argv[argc++] = "AUTH";
        if (nd->user) argv[argc++] = nd->user;
        argv[argc++] = nd->pass;
        rc = redlock__sock_queue(s, nd, argc, argv, NULL, 0, REDLOCK__REQ_AUTH);
    }
    if (rc == 0 && nd->db > 0) {
        char num[24];
        const char *argv[2];
        size_t len[2];
        argv[0] = "SELECT";
        len[0] = 6;
        len[1] = redlock__resp_num(num, (unsigned long long)nd->db);
        argv[1] = num;
        rc = redlock__sock_queue(s, nd, 2, argv, len, 0, REDLOCK__REQ_SELECT);
    }
#ifndef REDLOCK_SOCKET_NO_CORE
    if (rc == 0 && !nd->sub && !s->_cfg.on_reply && !s->_cfg.info_off) { /* the core's node health */
        static const char *const argv[2] = { "INFO", "memory" };
        rc = redlock__sock_queue(s, nd, 2, argv, NULL, 0, REDLOCK__REQ_INFO);
    }
#endif
    if (rc != 0) { /* CONNECT, or NOMEM (a fresh queue is neither full nor sent a bad command) */
        redlock__sock_close(s, nd);
        nd->last_status = rc;
        nd->failures++;
        return nd->last_status;
    }
    return 0;
}

/* What an idle connection (no reply owed) shows before a command is
   written to it. CLOSED: the node closed or reset it (a restart): it is
   replaced for the command, whose vote is not lost. UNASKED: bytes came
   (or wait in the parser) that no command asked for: the node misbehaves
   (PROTOCOL), and they could be taken for the command's reply. (A loop
   that watches the fd all along sees the same at once.) */
enum { REDLOCK__SOCK_IDLE_OK = 0, REDLOCK__SOCK_IDLE_CLOSED, REDLOCK__SOCK_IDLE_UNASKED };
static int redlock__sock_idle_state(struct redlock__sock_node *nd)
{
    struct pollfd pf;
    char c;
    ssize_t n;
    if (redlock_resp_buffered(&nd->parser)) return REDLOCK__SOCK_IDLE_UNASKED;
    pf.fd = nd->fd;
    pf.events = POLLIN;
    pf.revents = 0;
    if (poll(&pf, 1, 0) <= 0) return REDLOCK__SOCK_IDLE_OK;
#ifdef REDLOCK_SOCKET_TLS
    if (nd->ssl) { /* TLS records for TLS itself (session tickets) are no reply */
        int r;
        ERR_clear_error();
        r = SSL_peek((SSL *)nd->ssl, &c, 1);
        if (r > 0) return REDLOCK__SOCK_IDLE_UNASKED;
        return SSL_get_error((SSL *)nd->ssl, r) == SSL_ERROR_WANT_READ ? REDLOCK__SOCK_IDLE_OK
                                                                       : REDLOCK__SOCK_IDLE_CLOSED;
    }
#endif
    n = recv(nd->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return REDLOCK__SOCK_IDLE_UNASKED;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return REDLOCK__SOCK_IDLE_OK;
    return REDLOCK__SOCK_IDLE_CLOSED;
}

REDLOCK_SOCKET_API int redlock_socket_send(redlock_socket *s, int node, int argc, const char *const *argv,
                                           const size_t *argvlen, redlock_tag tag)
{
    struct redlock__sock_node *nd;
    int rc;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    if (!redlock_resp_encode(NULL, 0, argc, argv, argvlen)) return REDLOCK_ERR_INVALID;
    nd = &s->_nodes[node];
    if (nd->state == REDLOCK__SOCK_UP && nd->q_count == 0) {
        int idle = redlock__sock_idle_state(nd);
        if (idle == REDLOCK__SOCK_IDLE_CLOSED) {
            redlock__sock_fail(s, nd, REDLOCK_ERR_TRANSPORT); /* reopened below, for this command */
        } else if (idle == REDLOCK__SOCK_IDLE_UNASKED) {
            /* a node that misbehaves is not trusted with this command;
               the next one reconnects */
            redlock__sock_fail(s, nd, REDLOCK_ERR_PROTOCOL);
            redlock__sock_timer_report(s);
            return REDLOCK_ERR_PROTOCOL;
        }
    }
    if (nd->state == REDLOCK__SOCK_DOWN && (rc = redlock__sock_open(s, nd)) != 0) {
        redlock__sock_report(s, nd);
        return rc;
    }
    rc = redlock__sock_queue(s, nd, argc, argv, argvlen, tag, REDLOCK__REQ_USER);
    if (rc == REDLOCK_ERR_NOMEM) nd->last_status = REDLOCK_ERR_NOMEM;
    redlock__sock_report(s, nd);
    redlock__sock_timer_report(s);
    return rc;
}

static void redlock__sock_flush(redlock_socket *s, struct redlock__sock_node *nd)
{
    while (nd->state == REDLOCK__SOCK_UP && nd->out_off < nd->out_len) {
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
            redlock__sock_fail(s, nd, w == -3 ? REDLOCK_ERR_TLS : REDLOCK_ERR_TRANSPORT);
            return;
        }
    }
    if (nd->out_off == nd->out_len) redlock__sock_clear_out(nd);
    redlock__sock_report(s, nd);
}

/* Connected: commands queued meanwhile get command_timeout_ms from now. */
static void redlock__sock_rebase(redlock_socket *s, struct redlock__sock_node *nd)
{
    int64_t d = redlock_socket_now_us() + s->_cfg.command_timeout_ms * 1000;
    size_t i;
    for (i = 0; i < nd->q_count; i++) {
        redlock__sock_req *r = &nd->q[(nd->q_head + i) % nd->q_cap];
        if (r->deadline > d) r->deadline = d;
    }
}

/* A non-blocking connect finished (or failed): try the next address. */
static void redlock__sock_connected(redlock_socket *s, struct redlock__sock_node *nd)
{
    int err = 0, fd = nd->fd;
    unsigned gen = nd->gen;
    socklen_t len = (socklen_t)sizeof err;
    struct pollfd pf;
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
        nd->state = REDLOCK__SOCK_UP;
        redlock__sock_rebase(s, nd);
        redlock__sock_flush(s, nd);
        return;
    }
    nd->fd = -1;
    redlock__sock_drop_fd(s, nd, fd);
    if (nd->gen != gen || nd->state != REDLOCK__SOCK_CONNECTING) return; /* failed from inside the hook */
    nd->cur++;
    if (redlock__sock_try_addr(s, nd) != 0) {
        redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT);
        return;
    }
    if (nd->state == REDLOCK__SOCK_UP) {
        redlock__sock_rebase(s, nd);
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
        nd->state = REDLOCK__SOCK_UP;
        redlock__sock_rebase(s, nd);
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
    redlock__sock_fail(s, nd, REDLOCK_ERR_TLS);
}
#endif

/* A subscriber's reply: a message ["message", channel, payload] wakes
   the waiting locks of the channel's key (1); anything else is the answer
   to a queued command (0). */
static int redlock__sock_message(redlock_socket *s, const redlock_reply *r)
{
    const char *key;
    size_t klen;
    if (r->type != REDLOCK_REPLY_ARRAY || r->elements != 3 || r->element[0].type != REDLOCK_REPLY_STRING ||
        r->element[0].len != 7 || memcmp(r->element[0].str, "message", 7) != 0 ||
        r->element[1].type != REDLOCK_REPLY_STRING)
        return 0;
    key = redlock__notify_key_of(r->element[1].str, r->element[1].len, &klen);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (key) {
        s->_in_cb++;
        redlock__notify_message(&s->_notify, key, klen);
        s->_in_cb--;
    }
#else
    (void)s; /* no core, no subscribers */
    (void)key;
#endif
    return 1;
}

/* The node refused subscriber nd's AUTH or SUBSCRIBE (status): closed,
   and not reopened before the backoff (redlock_notify.h). */
static void redlock__sock_sub_refused(redlock_socket *s, struct redlock__sock_node *nd, int status)
{
    nd->refused_ms = redlock__notify_backoff(nd->refused_ms);
    nd->refused = status;
    redlock__sock_fail(s, nd, status);
    nd->retry_at = redlock_socket_now_us() + nd->refused_ms * 1000;
}
#ifndef REDLOCK_SOCKET_NO_CORE
/* A new connection's INFO memory: the core learns what the node may evict
   before the replies of the commands behind it. Refused (an ACL), not a
   string or naming no known policy: what the core knew stays. */
static void redlock__sock_info(redlock_socket *s, struct redlock__sock_node *nd, const redlock_reply *r)
{
    char policy[sizeof nd->policy];
    int evicts = r->type == REDLOCK_REPLY_STRING ? redlock_info_evicts(r->str, r->len, policy, sizeof policy) : -1;
    if (evicts < 0 || !s->_core) return;
    memcpy(nd->policy, policy, sizeof policy);
    s->_in_cb++; /* the core's event hook may run */
    redlock_node_set_evicts(&s->_client, nd->index, (redlock_evicts)evicts);
    s->_in_cb--;
}
#endif

static void redlock__sock_drain(redlock_socket *s, struct redlock__sock_node *nd)
{
    unsigned gen = nd->gen;
    for (;;) {
        const redlock_reply *r;
        redlock__sock_req req;
        int rc = redlock_resp_next(&nd->parser, &r);
        if (rc == 0) return;
        if (rc > 0 && nd->sub && redlock__sock_message(s, r)) {
            if (nd->gen != gen || nd->state != REDLOCK__SOCK_UP) return;
            continue;
        }
        if (rc < 0 || nd->q_count == 0) { /* broken, or a reply nobody asked for */
            redlock__sock_fail(s, nd, rc == REDLOCK_ERR_NOMEM ? REDLOCK_ERR_NOMEM : REDLOCK_ERR_PROTOCOL);
            return;
        }
        req = nd->q[nd->q_head];
        nd->q_head = (nd->q_head + 1) % nd->q_cap;
        nd->q_count--;
        if (req.kind == REDLOCK__REQ_AUTH) {
            if (r->type == REDLOCK_REPLY_ERROR && nd->sub) {
                redlock__sock_sub_refused(s, nd, REDLOCK_ERR_AUTH);
                return;
            }
            if (r->type != REDLOCK_REPLY_STATUS) {
                redlock__sock_fail(s, nd, r->type == REDLOCK_REPLY_ERROR ? REDLOCK_ERR_AUTH : REDLOCK_ERR_PROTOCOL);
                return;
            }
            nd->last_status = 0;
            continue;
        }
        if (req.kind == REDLOCK__REQ_SUB) { /* confirmed; refused (an ACL): off for the backoff */
            if (r->type == REDLOCK_REPLY_ERROR) {
                redlock__sock_sub_refused(s, nd, REDLOCK_ERR_SERVER);
                return;
            }
            if (r->type == REDLOCK_REPLY_ARRAY && r->elements == 3 && r->element[0].type == REDLOCK_REPLY_STRING &&
                r->element[0].len == 9 && memcmp(r->element[0].str, "subscribe", 9) == 0)
                nd->refused_ms = nd->refused = 0; /* notifications work (again) */
            continue;
        }
        if (req.kind == REDLOCK__REQ_SELECT) {
            if (r->type != REDLOCK_REPLY_STATUS) {
                redlock__sock_fail(s, nd, r->type == REDLOCK_REPLY_ERROR ? REDLOCK_ERR_SELECT : REDLOCK_ERR_PROTOCOL);
                return;
            }
            nd->last_status = 0;
            continue;
        }
#ifndef REDLOCK_SOCKET_NO_CORE
        if (req.kind == REDLOCK__REQ_INFO) {
            redlock__sock_info(s, nd, r);
            continue;
        }
#endif
        redlock__sock_deliver_reply(s, nd, req.tag, r);
        if (nd->gen != gen || nd->state != REDLOCK__SOCK_UP) return;
    }
}

static void redlock__sock_read(redlock_socket *s, struct redlock__sock_node *nd)
{
    char buf[16384];
    unsigned gen = nd->gen;
    int round;
    for (round = 0; round < 8 && nd->gen == gen && nd->state == REDLOCK__SOCK_UP; round++) {
        ssize_t r = redlock__sock_recv(nd, buf, sizeof buf);
        if (r > 0) {
            int rc = redlock_resp_feed(&nd->parser, buf, (size_t)r);
            if (rc != 0) {
                redlock__sock_fail(s, nd, rc == REDLOCK_ERR_NOMEM ? REDLOCK_ERR_NOMEM : REDLOCK_ERR_PROTOCOL);
                return;
            }
            redlock__sock_drain(s, nd);
            if ((size_t)r < sizeof buf) break;
        } else if (r == 0) {
            /* closed: mid-reply is a truncated (malformed) reply */
            redlock__sock_fail(s, nd, redlock_resp_buffered(&nd->parser) ? REDLOCK_ERR_PROTOCOL : REDLOCK_ERR_TRANSPORT);
            return;
        } else if (r == -1) {
            break;
        } else {
            redlock__sock_fail(s, nd, r == -3 ? REDLOCK_ERR_TLS : REDLOCK_ERR_TRANSPORT);
            return;
        }
    }
}

/* ---- release notifications: the subscribers ---- */

/* Queues `verb` (SUBSCRIBE, UNSUBSCRIBE) of key's channel on subscriber
   nd, if it is open or opening (one that is down subscribes every key
   when it opens). */
static void redlock__sock_sub_cmd(redlock_socket *s, struct redlock__sock_node *nd, const char *verb, const char *key,
                                  size_t len)
{
    char stack[256], *ch;
    const char *argv[2];
    size_t argl[2];
    if (nd->state == REDLOCK__SOCK_DOWN) return;
    if (!(ch = redlock__notify_command(verb, key, len, stack, sizeof stack, argv, argl))) {
        redlock__sock_fail(s, nd, REDLOCK_ERR_NOMEM);
        return;
    }
    if (redlock__sock_queue(s, nd, 2, argv, argl, 0, REDLOCK__REQ_SUB) != 0)
        redlock__sock_fail(s, nd, REDLOCK_ERR_NOMEM);
    else
        redlock__sock_report(s, nd);
    if (ch != stack) free(ch);
}

typedef struct redlock__sock_sub_at {
    redlock_socket *s;
    struct redlock__sock_node *nd;
} redlock__sock_sub_at;

static void redlock__sock_sub_key(void *at, const char *key, size_t len)
{
    const redlock__sock_sub_at *a = (const redlock__sock_sub_at *)at;
    redlock__sock_sub_cmd(a->s, a->nd, "SUBSCRIBE", key, len);
}

/* Subscribers open (AUTH, then every key) while a lock listens, after a
   failure not before their retry time; all closed once none has
   listened for notify_idle_ms. */
static void redlock__sock_subs_tend(redlock_socket *s)
{
    int64_t now;
    int i;
    if (!s->_nsub) return;
    now = redlock_socket_now_us();
    for (i = 0; i < s->_nsub; i++) {
        struct redlock__sock_node *nd = &s->_nodes[s->_cfg.node_count + i];
        if (s->_notify.count) {
            redlock__sock_sub_at at;
            if (nd->state != REDLOCK__SOCK_DOWN || now < nd->retry_at) continue;
            if (redlock__sock_open(s, nd) != 0) {
                nd->retry_at = now + REDLOCK__SOCK_SUB_RETRY_MS * 1000;
                continue;
            }
            at.s = s;
            at.nd = nd;
            redlock__notify_each_key(&s->_notify, redlock__sock_sub_key, &at);
            redlock__sock_report(s, nd);
        } else if (s->_notify_idle_since && now - s->_notify_idle_since >= s->_cfg.notify_idle_ms * 1000 &&
                   nd->state != REDLOCK__SOCK_DOWN) {
            redlock__sock_close(s, nd);
        }
    }
    if (!s->_notify.count && s->_notify_idle_since && now - s->_notify_idle_since >= s->_cfg.notify_idle_ms * 1000)
        s->_notify_idle_since = 0;
}

static void redlock__sock_timeouts(redlock_socket *s)
{
    int64_t now = redlock_socket_now_us();
    int i;
    for (i = 0; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        if (nd->state == REDLOCK__SOCK_CONNECTING && now >= nd->connect_deadline) {
            redlock__sock_fail(s, nd, REDLOCK_ERR_CONNECT);
        } else if (nd->state == REDLOCK__SOCK_HANDSHAKE && now >= nd->connect_deadline) {
            snprintf(nd->tls_err, sizeof nd->tls_err, "%s", "TLS handshake: no answer within the connect timeout");
            redlock__sock_fail(s, nd, REDLOCK_ERR_TLS);
        } else if (nd->q_count && now >= nd->q[nd->q_head].deadline) {
            /* the answer may be waiting unread (the loop did not run for
               a while): read before declaring the node dead */
            if (nd->state == REDLOCK__SOCK_UP) redlock__sock_read(s, nd);
            if (nd->q_count && now >= nd->q[nd->q_head].deadline)
                redlock__sock_fail(s, nd, REDLOCK_ERR_NODE_TIMEOUT);
        }
    }
    redlock__sock_subs_tend(s);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!s->_cfg.on_reply && redlock_next_deadline(&s->_client) <= redlock_socket_now_us()) {
        s->_in_cb++;
        redlock_on_timer(&s->_client);
        s->_in_cb--;
    }
#endif
}

static void redlock__sock_event(redlock_socket *s, struct redlock__sock_node *nd, int readable, int writable)
{
    if (nd->state == REDLOCK__SOCK_CONNECTING) {
        if (readable || writable) redlock__sock_connected(s, nd);
        return;
    }
#ifdef REDLOCK_SOCKET_TLS
    if (nd->state == REDLOCK__SOCK_HANDSHAKE) {
        if (readable || writable) redlock__sock_tls_handshake(s, nd);
        return;
    }
#endif
    if (nd->state != REDLOCK__SOCK_UP) return;
    if (writable) redlock__sock_flush(s, nd);
    /* a TLS read may wait for the socket to take a write */
    if ((readable || (writable && nd->tls_want == REDLOCK_SOCKET_WRITE)) && nd->state == REDLOCK__SOCK_UP)
        redlock__sock_read(s, nd);
    if (nd->state == REDLOCK__SOCK_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
}

REDLOCK_SOCKET_API int redlock_socket_pollfds(redlock_socket *s, struct pollfd *pfd)
{
    int i, n = 0;
    if (!redlock__sock_valid(s) || !pfd) return 0;
    for (i = 0; i < redlock__sock_slots(s); i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        int in;
        if (nd->state == REDLOCK__SOCK_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
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

REDLOCK_SOCKET_API int redlock_socket_poll_ms(const redlock_socket *s, int64_t until_us)
{
    int64_t now = redlock_socket_now_us(), wake = redlock__sock_valid(s) ? redlock__sock_deadline(s) : until_us;
    if (until_us < wake) wake = until_us;
    if (wake <= now) return 0;
    return wake - now >= 1000000 ? 1000 : (int)((wake - now + 999) / 1000);
}

REDLOCK_SOCKET_API void redlock_socket_dispatch(redlock_socket *s, const struct pollfd *pfd, int n)
{
    int i;
    if (!redlock__sock_valid(s)) return;
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

/* One round of the poll() loop: waits at most until `until`. */
static void redlock__sock_step(redlock_socket *s, int64_t until)
{
    struct pollfd pf[REDLOCK_SOCKET_MAX_FDS];
    int n = redlock_socket_pollfds(s, pf);
    if (poll(n ? pf : NULL, (nfds_t)n, redlock_socket_poll_ms(s, until)) <= 0) n = 0;
    redlock_socket_dispatch(s, pf, n);
}

REDLOCK_SOCKET_API int redlock_socket_run(redlock_socket *s, int64_t timeout_ms)
{
    int64_t until;
    if (!redlock__sock_valid(s) || timeout_ms < 0) return REDLOCK_ERR_INVALID;
    if (s->_in_cb) return REDLOCK_ERR_BUSY;
    until = redlock_socket_now_us() + timeout_ms * 1000;
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
    return nd->q_count > 0 && nd->q[nd->q_head].kind != REDLOCK__REQ_USER;
}

REDLOCK_SOCKET_API int redlock_socket_connect(redlock_socket *s)
{
    int i, busy, rc = REDLOCK_OK;
    unsigned failures[REDLOCK_MAX_NODES];
    int64_t until;
    if (!redlock__sock_valid(s)) return REDLOCK_ERR_INVALID;
    if (s->_in_cb) return REDLOCK_ERR_BUSY;
    until = redlock_socket_now_us() + (s->_cfg.connect_timeout_ms + s->_cfg.command_timeout_ms) * 1000;
    for (i = 0; i < s->_cfg.node_count; i++) {
        struct redlock__sock_node *nd = &s->_nodes[i];
        failures[i] = nd->failures;
        if (nd->state == REDLOCK__SOCK_DOWN) {
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
        if (nd->state == REDLOCK__SOCK_UP && !redlock__sock_handshaking(nd)) continue;
        /* last_status may be older than this call: only a failure during
           it counts; otherwise the handshake is still unanswered */
        if (rc == REDLOCK_OK)
            rc = nd->failures != failures[i] && nd->last_status ? nd->last_status : REDLOCK_ERR_NODE_TIMEOUT;
    }
    redlock__sock_timer_report(s);
    return rc;
}

#ifndef REDLOCK_SOCKET_NO_CORE
/* The core's listen callback: the table follows the core, the subscribers
   the table's keys. */
static void redlock__sock_listen(void *user, redlock_lock *lk, int on)
{
    redlock_socket *s = (redlock_socket *)user;
    const char *key;
    size_t len;
    int i;
    if (on) {
        if (redlock__notify_add(&s->_notify, lk) != 1) return;
        s->_notify_idle_since = 0;
        key = redlock_lock_key(lk, &len);
        for (i = 0; i < s->_nsub; i++)
            redlock__sock_sub_cmd(s, &s->_nodes[s->_cfg.node_count + i], "SUBSCRIBE", key, len);
        redlock__sock_subs_tend(s); /* opens the ones that are down */
        return;
    }
    if (!redlock__notify_remove(&s->_notify, lk, &key, &len)) return;
    for (i = 0; i < s->_nsub; i++)
        redlock__sock_sub_cmd(s, &s->_nodes[s->_cfg.node_count + i], "UNSUBSCRIBE", key, len);
    if (!s->_notify.count) s->_notify_idle_since = redlock_socket_now_us();
}

static int redlock__sock_core_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    /* the core's commands are well formed; send checks them all the same */
    return redlock_socket_send((redlock_socket *)user, node, cmd->argc, cmd->argv, cmd->argvlen, tag);
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

/* ---- node lists ---- */

/* One block per parsed list; blocks of appended lists are chained. */
typedef struct redlock__sock_nodes_mem {
    struct redlock__sock_nodes_mem *prev;
    size_t size, used;
} redlock__sock_nodes_mem;

#define REDLOCK__SOCK_SHOWN 160 /* a bad node is quoted up to this length */

static void redlock__sock_say(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    size_t o = 0, i;
    if (!err || !errlen) return;
    /* fmt holds up to two %s (a, then b): no printf-family function here */
    for (i = 0; fmt[i] && o + 1 < errlen; i++) {
        if (fmt[i] == '%' && fmt[i + 1] == 's') {
            const char *put = a;
            a = b;
            i++;
            while (put && *put && o + 1 < errlen) err[o++] = *put++;
        } else {
            err[o++] = fmt[i];
        }
    }
    err[o] = 0;
}

static int redlock__sock_hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int redlock__sock_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Where the userinfo of one spec s[0..len) is: 1 and [*ui, *at) (the '@'
   at *at) if there is one. redis://: up to the last '@' (passwords may
   hold '@' or '/'); unix://: up to the first "@/". Parsing, redaction and
   scrubbing all use this, so they agree. */
static int redlock__sock_userinfo(const char *s, size_t len, size_t *ui, size_t *at)
{
    size_t i, r;
    for (r = 0; r + 3 <= len; r++)
        if (memcmp(s + r, "://", 3) == 0) break;
    if (r + 3 > len) return 0;
    *ui = r + 3;
    if (r == 4 && memcmp(s, "unix", 4) == 0) {
        if (*ui < len && s[*ui] == '/') return 0;
        for (i = *ui; i + 1 < len; i++)
            if (s[i] == '@' && s[i + 1] == '/') {
                *at = i;
                return 1;
            }
        return 0;
    }
    for (i = len; i > *ui; i--)
        if (s[i - 1] == '@') {
            *at = i - 1;
            return 1;
        }
    return 0;
}

/* The spec s[0..len) for a message: the password (the whole userinfo when
   it has no ':') as "***", cut to REDLOCK__SOCK_SHOWN characters. At most
   3 characters longer than what is shown of s, so out always fits. */
static void redlock__sock_redact(const char *s, size_t len, char out[REDLOCK__SOCK_SHOWN + 4])
{
    size_t ui, at, o = 0, i, from = len, to = len;
    if (redlock__sock_userinfo(s, len, &ui, &at)) {
        const char *colon = (const char *)memchr(s + ui, ':', at - ui);
        from = colon ? (size_t)(colon - s) + 1 : ui;
        to = at;
    }
    if (len > REDLOCK__SOCK_SHOWN) len = REDLOCK__SOCK_SHOWN;
    for (i = 0; i < len && i < from; i++) out[o++] = s[i];
    if (from < len) {
        memcpy(out + o, "***", 3);
        o += 3;
    }
    for (i = to; i < len; i++) out[o++] = s[i];
    out[o] = 0;
}

/* Appends the percent-decoded s[0..n) to the block; NULL on a bad escape
   or %00. */
static char *redlock__sock_np_put(redlock__sock_nodes_mem *m, const char *s, size_t n, int decode)
{
    char *d = (char *)(m + 1) + m->used, *o = d;
    size_t i;
    for (i = 0; i < n; i++) {
        if (decode && s[i] == '%') {
            int h, l;
            if (i + 2 >= n) return NULL;
            h = redlock__sock_hexval((unsigned char)s[i + 1]);
            l = redlock__sock_hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0)) return NULL;
            *o++ = (char)(h * 16 + l);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o++ = 0;
    m->used += (size_t)(o - d);
    return d;
}

/* Decimal in [lo, hi] from s[0..n). */
static int redlock__sock_np_int(const char *s, size_t n, long lo, long hi, int *out)
{
    long v = 0;
    size_t i;
    if (n == 0 || n > 9) return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* host, host:port, [v6], [v6]:port from s[0..n). A reason, or NULL. */
static const char *redlock__sock_np_hostport(redlock__sock_nodes_mem *m, const char *s, size_t n, redlock_socket_node *nd)
{
    const char *colon = NULL, *h = s;
    size_t hl, i;
    nd->port = 6379;
    if (n && s[0] == '[') {
        const char *close = (const char *)memchr(s, ']', n);
        if (!close) return "missing ']'";
        h = s + 1;
        hl = (size_t)(close - s) - 1;
        if (close + 1 < s + n) {
            if (close[1] != ':') return "junk after ']'";
            colon = close + 1;
        }
    } else {
        for (i = 0; i < n; i++)
            if (s[i] == ':') {
                if (colon) return "IPv6 addresses need [brackets]";
                colon = s + i;
            }
        hl = colon ? (size_t)(colon - s) : n;
    }
    if (hl == 0) return "missing host";
    for (i = 0; i < hl; i++)
        if (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r' || h[i] == '@' || h[i] == '/' || h[i] == ',')
            return "bad host name";
    if (colon && redlock__sock_np_int(colon + 1, (size_t)(s + n - colon - 1), 1, 65535, &nd->port) != 0)
        return "port must be 1..65535";
    nd->host = redlock__sock_np_put(m, h, hl, 0);
    return NULL;
}

/* userinfo "user:pass" or ":pass" from s[0..n). */
static const char *redlock__sock_np_userinfo(redlock__sock_nodes_mem *m, const char *s, size_t n, redlock_socket_node *nd)
{
    const char *colon = (const char *)memchr(s, ':', n);
    if (!colon) return "give a password as user:pass@ or :pass@";
    if (colon > s && !(nd->username = redlock__sock_np_put(m, s, (size_t)(colon - s), 1)))
        return "bad %-escape in the user name";
    if (!(nd->password = redlock__sock_np_put(m, colon + 1, (size_t)(s + n - colon - 1), 1)))
        return "bad %-escape in the password";
    if (!nd->password[0]) return "empty password";
    return NULL;
}

/* One spec s[0..len) into nd. A reason, or NULL. */
static const char *redlock__sock_np_one(redlock__sock_nodes_mem *m, const char *s, size_t len, redlock_socket_node *nd)
{
    size_t sep, ui, at;
    const char *why;
    memset(nd, 0, sizeof *nd);
    if (!len) return "empty node in the list";
    for (sep = 0; sep + 3 <= len; sep++)
        if (memcmp(s + sep, "://", 3) == 0) break;
    if (sep + 3 > len) {
        if (memchr(s, '/', len)) { /* a unix socket path */
            nd->unix_path = redlock__sock_np_put(m, s, len, 0);
            return NULL;
        }
        return redlock__sock_np_hostport(m, s, len, nd);
    }
    if ((sep == 5 && memcmp(s, "redis", 5) == 0) || (sep == 6 && memcmp(s, "rediss", 6) == 0)) {
        const char *hp = s + sep + 3, *end = s + len, *p;
#ifndef REDLOCK_SOCKET_TLS
        if (sep == 6) return "TLS (rediss://) needs redlock_socket.h built with REDLOCK_SOCKET_TLS";
#endif
        nd->tls.enable = sep == 6;
        if (redlock__sock_userinfo(s, len, &ui, &at)) {
            if ((why = redlock__sock_np_userinfo(m, s + ui, at - ui, nd))) return why;
            hp = s + at + 1;
        }
        for (p = hp; p < end && *p != '/' && *p != '?' && *p != '#'; p++) {}
        if ((why = redlock__sock_np_hostport(m, hp, (size_t)(p - hp), nd))) return why;
        if (p < end && (*p == '?' || *p == '#')) return "URL options are not supported";
        if (p < end && p + 1 < end && redlock__sock_np_int(p + 1, (size_t)(end - p - 1), 0, 1000000, &nd->db) != 0)
            return "database must be a number";
        return NULL;
    }
    if (sep == 4 && memcmp(s, "unix", 4) == 0) {
        const char *path = s + 7, *end = s + len, *q;
        if (redlock__sock_userinfo(s, len, &ui, &at)) {
            if ((why = redlock__sock_np_userinfo(m, s + ui, at - ui, nd))) return why;
            path = s + at + 1;
        }
        if (path >= end || *path != '/') return "unix:// needs an absolute path";
        q = (const char *)memchr(path, '?', (size_t)(end - path));
        if (q && (end - q < 4 || memcmp(q, "?db=", 4) != 0 ||
                  redlock__sock_np_int(q + 4, (size_t)(end - q - 4), 0, 1000000, &nd->db) != 0))
            return "only ?db=N is supported";
        nd->unix_path = redlock__sock_np_put(m, path, (size_t)((q ? q : end) - path), 0);
        return NULL;
    }
    return "unknown URL scheme (use redis://, rediss:// or unix://)";
}

/* The same node twice would vote twice. */
static int redlock__sock_np_same(const redlock_socket_node *a, const redlock_socket_node *b)
{
    const char *x, *y;
    if (a->db != b->db) return 0;
    if (a->unix_path || b->unix_path) return a->unix_path && b->unix_path && strcmp(a->unix_path, b->unix_path) == 0;
    if (a->port != b->port || !a->host || !b->host) return 0;
    for (x = a->host, y = b->host; *x && *y && redlock__sock_lower((unsigned char)*x) == redlock__sock_lower((unsigned char)*y); x++, y++) {}
    return *x == 0 && *y == 0;
}

REDLOCK_SOCKET_API void redlock_socket_free_nodes(void *mem)
{
    redlock__sock_nodes_mem *m = (redlock__sock_nodes_mem *)mem;
    while (m) {
        redlock__sock_nodes_mem *prev = m->prev;
        volatile char *v = (volatile char *)(m + 1);
        size_t i;
        for (i = 0; i < m->size; i++) v[i] = 0; /* passwords */
        free(m);
        m = prev;
    }
}

REDLOCK_SOCKET_API int redlock_socket_parse_nodes(redlock_socket_config *cfg, const char *list, void **mem,
                                                  char *err, size_t errlen)
{
    redlock_socket_node tmp[REDLOCK_MAX_NODES];
    redlock__sock_nodes_mem *m;
    char shown[REDLOCK__SOCK_SHOWN + 4];
    size_t len, off = 0;
    int have, n = 0, i;
    if (err && errlen) err[0] = 0;
    if (!cfg || !mem) {
        redlock__sock_say(err, errlen, "%s", "invalid argument", NULL);
        return REDLOCK_ERR_INVALID;
    }
    if (!list) list = getenv("REDLOCK_NODES");
    if (!list || !list[0]) {
        redlock__sock_say(err, errlen, "%s", "no nodes (an empty list, or REDLOCK_NODES not set)", NULL);
        return REDLOCK_ERR_INVALID;
    }
    have = *mem ? cfg->node_count : 0;
    if (have < 0 || have > REDLOCK_MAX_NODES) have = REDLOCK_MAX_NODES;
    len = strlen(list);
    /* the strings of a spec are never longer than the spec, plus at most
       3 terminators per spec */
    m = (redlock__sock_nodes_mem *)malloc(sizeof *m + 2 * len + 4 * REDLOCK_MAX_NODES + 16);
    if (!m) {
        redlock__sock_say(err, errlen, "%s", "out of memory", NULL);
        return REDLOCK_ERR_NOMEM;
    }
    m->prev = (redlock__sock_nodes_mem *)*mem;
    m->size = 2 * len + 4 * REDLOCK_MAX_NODES + 16;
    m->used = 0;
    for (;;) {
        size_t one = strcspn(list + off, ",");
        const char *why;
        if (have + n >= REDLOCK_MAX_NODES) {
            m->prev = NULL;
            redlock_socket_free_nodes(m);
            redlock__sock_say(err, errlen, "%s", "too many nodes (at most " REDLOCK__SOCK_STR(REDLOCK_MAX_NODES) ")", NULL);
            return REDLOCK_ERR_NODES;
        }
        redlock__sock_redact(list + off, one, shown);
        why = redlock__sock_np_one(m, list + off, one, &tmp[n]);
        if (!why && tmp[n].unix_path && strlen(tmp[n].unix_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
            why = "unix socket path too long";
        if (why) {
            m->prev = NULL;
            redlock_socket_free_nodes(m);
            if (one) redlock__sock_say(err, errlen, "bad node '%s': %s", shown, why);
            else redlock__sock_say(err, errlen, "%s", why, NULL);
            return REDLOCK_ERR_INVALID;
        }
        for (i = 0; i < have + n; i++)
            if (redlock__sock_np_same(i < have ? &cfg->node[i] : &tmp[i - have], &tmp[n])) {
                m->prev = NULL;
                redlock_socket_free_nodes(m);
                redlock__sock_say(err, errlen, "node '%s' is listed twice", shown, NULL);
                return REDLOCK_ERR_INVALID;
            }
        n++;
        off += one;
        if (!list[off]) break;
        off++;
    }
    for (i = 0; i < n; i++) cfg->node[have + i] = tmp[i];
    cfg->node_count = have + n;
    *mem = m;
    return 0;
}

/* Appends text to out[0..cap) at *o, counting what does not fit. */
static void redlock__sock_cat(char *out, size_t cap, size_t *o, const char *t)
{
    for (; *t; t++, (*o)++)
        if (*o + 1 < cap) out[*o] = *t;
}

REDLOCK_SOCKET_API int redlock_socket_format_node(const redlock_socket_node *n, char *out, size_t cap)
{
    size_t o = 0;
    char num[24];
    const char *host = n && n->host && n->host[0] ? n->host : "127.0.0.1";
    if (!n) return 0;
    if (n->password || n->username) { /* a URL: the password shown as *** */
        redlock__sock_cat(out, cap, &o, n->unix_path ? "unix://" : n->tls.enable ? "rediss://" : "redis://");
        if (n->username) redlock__sock_cat(out, cap, &o, n->username);
        redlock__sock_cat(out, cap, &o, ":***@");
    } else if ((n->db > 0 || n->tls.enable) && !n->unix_path) {
        redlock__sock_cat(out, cap, &o, n->tls.enable ? "rediss://" : "redis://");
    } else if (n->db > 0) {
        redlock__sock_cat(out, cap, &o, "unix://");
    }
    if (n->unix_path) {
        redlock__sock_cat(out, cap, &o, n->unix_path);
        if (n->db > 0) {
            num[redlock__resp_num(num, (unsigned long long)n->db)] = 0;
            redlock__sock_cat(out, cap, &o, "?db=");
            redlock__sock_cat(out, cap, &o, num);
        }
    } else {
        int v6 = strchr(host, ':') != NULL;
        if (v6) redlock__sock_cat(out, cap, &o, "[");
        redlock__sock_cat(out, cap, &o, host);
        redlock__sock_cat(out, cap, &o, v6 ? "]:" : ":");
        num[redlock__resp_num(num, (unsigned long long)(n->port > 0 ? n->port : 6379))] = 0;
        redlock__sock_cat(out, cap, &o, num);
        if (n->db > 0) {
            num[redlock__resp_num(num, (unsigned long long)n->db)] = 0;
            redlock__sock_cat(out, cap, &o, "/");
            redlock__sock_cat(out, cap, &o, num);
        }
    }
    if (cap) out[o < cap ? o : cap - 1] = 0;
    return (int)o;
}

REDLOCK_SOCKET_API void redlock_socket_scrub_nodes(char *s)
{
    if (!s) return;
    for (;;) {
        size_t n = strcspn(s, ","), ui, at, i;
        if (redlock__sock_userinfo(s, n, &ui, &at)) {
            const char *colon = (const char *)memchr(s + ui, ':', at - ui);
            for (i = colon ? (size_t)(colon - s) + 1 : ui; i < at; i++) s[i] = 'x';
        }
        if (!s[n]) break;
        s += n + 1;
    }
}

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

REDLOCK_SOCKET_API int redlock_socket_init(redlock_socket *s, const redlock_socket_config *cfg)
{
    int i;
    if (!s || !cfg) return REDLOCK_ERR_INVALID;
    memset(s, 0, sizeof *s);
    if (cfg->node_count < 1 || cfg->node_count > REDLOCK_MAX_NODES) return REDLOCK_ERR_NODES;
    if (cfg->connect_timeout_ms < 0 || cfg->command_timeout_ms < 0 || cfg->notify_idle_ms < 0) return REDLOCK_ERR_INVALID;
#ifdef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply || !cfg->on_error) return REDLOCK_ERR_INVALID;
#else
    if (!cfg->on_reply != !cfg->on_error) return REDLOCK_ERR_INVALID;
#endif
    if (cfg->db < 0) return REDLOCK_ERR_INVALID;
    for (i = 0; i < cfg->node_count; i++) {
        const redlock_socket_node *c = &cfg->node[i];
        const char *user = c->username ? c->username : cfg->username, *pass = c->password ? c->password : cfg->password;
        redlock_tls t;
        const redlock_tls *tls = redlock__tls_settings(&c->tls, &cfg->tls, &t);
        if (c->port < 0 || c->port > 65535 || c->db < 0 || (user && !pass)) return REDLOCK_ERR_INVALID;
        if (tls && ((c->unix_path && c->unix_path[0]) || !tls->cert != !tls->key)) return REDLOCK_ERR_INVALID;
#ifndef REDLOCK_SOCKET_TLS
        if (tls) return REDLOCK_ERR_TLS; /* built without REDLOCK_SOCKET_TLS */
#endif
    }
    s->_cfg = *cfg;
    if (!s->_cfg.connect_timeout_ms) s->_cfg.connect_timeout_ms = 1000;
    if (!s->_cfg.command_timeout_ms) s->_cfg.command_timeout_ms = 1000;
    if (!s->_cfg.notify_idle_ms) s->_cfg.notify_idle_ms = 1000;
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply && !cfg->notify_off) s->_nsub = cfg->node_count; /* notifications are for the core's locks */
#endif
    for (i = 0; i < REDLOCK_MAX_NODES; i++) memset(&s->_cfg.node[i], 0, sizeof s->_cfg.node[i]);
    s->_cfg.username = s->_cfg.password = NULL; /* copied per node below */
    s->_nodes = (struct redlock__sock_node *)calloc((size_t)(cfg->node_count + s->_nsub), sizeof *s->_nodes);
    if (!s->_nodes) return REDLOCK_ERR_NOMEM;
    s->_magic = REDLOCK__SOCK_MAGIC;
    s->_timer_reported = REDLOCK_NO_DEADLINE;
    for (i = 0; i < cfg->node_count + s->_nsub; i++) { /* node i % node_count: command connection, then subscriber */
        struct redlock__sock_node *nd = &s->_nodes[i];
        const redlock_socket_node *c = &cfg->node[i % cfg->node_count];
        const char *user = c->username ? c->username : cfg->username, *pass = c->password ? c->password : cfg->password;
        int bad = 0;
        nd->index = i;
        nd->fd = nd->rep_fd = -1;
        nd->port = c->port ? c->port : 6379;
        nd->sub = i >= cfg->node_count;
        nd->db = nd->sub ? 0 : c->db ? c->db : cfg->db; /* channels are server-wide: no SELECT */
        if (c->unix_path && c->unix_path[0]) bad |= !(nd->unix_path = redlock__sock_strdup(c->unix_path));
        bad |= !(nd->host = redlock__sock_strdup(c->host && c->host[0] ? c->host : "127.0.0.1"));
        if (pass) bad |= !(nd->pass = redlock__sock_strdup(pass));
        if (user && user[0]) bad |= !(nd->user = redlock__sock_strdup(user));
        redlock_resp_parser_init(&nd->parser);
        bad = bad ? REDLOCK_ERR_NOMEM : 0;
#ifdef REDLOCK_SOCKET_TLS
        {
            redlock_tls t;
            const redlock_tls *tls = redlock__tls_settings(&c->tls, &cfg->tls, &t);
            if (!bad && tls) bad = redlock__sock_tls_setup(s, nd, tls);
        }
#endif
        if (bad) {
            if (i >= cfg->node_count) s->_nsub = i - cfg->node_count + 1;
            else s->_cfg.node_count = i + 1, s->_nsub = 0;
            redlock_socket_deinit(s);
            return bad;
        }
    }
#ifndef REDLOCK_SOCKET_NO_CORE
    if (!cfg->on_reply) {
        redlock_callbacks cb;
        redlock_config core = cfg->core;
        int rc;
        memset(&cb, 0, sizeof cb);
        cb.send = redlock__sock_core_send;
        cb.set_timer = redlock__sock_core_timer;
        cb.now_us = redlock__sock_core_now;
        cb.on_event = redlock__sock_core_event;
        if (s->_nsub) cb.listen = redlock__sock_listen;
        core.node_count = cfg->node_count;
        rc = redlock_client_init(&s->_client, &core, &cb, s);
        if (rc != REDLOCK_OK) {
            redlock_socket_deinit(s);
            memset(s, 0, sizeof *s);
            return rc;
        }
        s->_core = 1;
    }
#endif
    return REDLOCK_OK;
}

REDLOCK_SOCKET_API void redlock_socket_deinit(redlock_socket *s)
{
    int i;
    if (!redlock__sock_valid(s)) return;
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
        free(nd->q);
        nd->q = NULL;
        redlock_resp_parser_free(&nd->parser);
        free(nd->host);
        free(nd->unix_path);
        redlock__sock_wipe_free(nd->user);
        redlock__sock_wipe_free(nd->pass);
    }
    free(s->_nodes);
    s->_nodes = NULL;
    redlock__notify_free(&s->_notify);
#ifdef REDLOCK_SOCKET_TLS
    BIO_meth_free((BIO_METHOD *)s->_bio_method);
#endif
    s->_bio_method = NULL;
    s->_magic = 0;
}

REDLOCK_SOCKET_API int redlock_socket_node_status(const redlock_socket *s, int node, char *errbuf, size_t errsz)
{
    int st;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    st = s->_nodes[node].last_status;
    if (errbuf && errsz) {
#ifndef REDLOCK_SOCKET_NO_CORE
        const char *t = st ? redlock_strerror(st) : "";
#else
        const char *t = st ? "node error" : "";
#endif
        if (st == REDLOCK_ERR_TLS && s->_nodes[node].tls_err[0]) t = s->_nodes[node].tls_err;
        redlock__sock_say(errbuf, errsz, "%s", t, NULL); /* cut to the buffer, terminated */
    }
    return st;
}

REDLOCK_SOCKET_API int redlock_socket_notify_status(const redlock_socket *s, int node, char *errbuf, size_t errsz)
{
    int st;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    st = node < s->_nsub ? s->_nodes[s->_cfg.node_count + node].refused : 0;
    if (errbuf && errsz) {
#ifndef REDLOCK_SOCKET_NO_CORE
        const char *t = st ? redlock_strerror(st) : "";
#else
        const char *t = st ? "node error" : "";
#endif
        redlock__sock_say(errbuf, errsz, "%s", t, NULL);
    }
    return st;
}

REDLOCK_SOCKET_API int redlock_socket_node_connected(const redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return 0;
    return s->_nodes[node].state == REDLOCK__SOCK_UP;
}

REDLOCK_SOCKET_API int redlock_socket_node_policy(const redlock_socket *s, int node, char *buf, size_t size)
{
    if (buf && size) buf[0] = 0;
    if (!redlock__sock_valid(s) || node < 0 || node >= s->_cfg.node_count) return REDLOCK_ERR_INVALID;
    if (buf && size) redlock__sock_say(buf, size, "%s", s->_nodes[node].policy, NULL);
#ifndef REDLOCK_SOCKET_NO_CORE
    if (s->_core) return (int)redlock_node_evicts(&s->_client, node);
#endif
    return 0;
}

REDLOCK_SOCKET_API int redlock_socket_pending(const redlock_socket *s)
{
    int i, n = 0;
    if (!redlock__sock_valid(s)) return 0;
    for (i = 0; i < s->_cfg.node_count; i++) n += (int)s->_nodes[i].q_count;
    return n;
}

REDLOCK_SOCKET_API size_t redlock_socket_memory(const redlock_socket *s)
{
    size_t m = 0;
    int i;
    if (!redlock__sock_valid(s)) return 0;
    m += (size_t)redlock__sock_slots(s) * sizeof *s->_nodes;
    for (i = 0; i < redlock__sock_slots(s); i++)
        m += s->_nodes[i].out_cap + s->_nodes[i].q_cap * sizeof *s->_nodes[i].q +
             redlock_resp_memory(&s->_nodes[i].parser);
    return m;
}

REDLOCK_SOCKET_API int redlock_socket_fd_count(const redlock_socket *s)
{
    return redlock__sock_valid(s) ? redlock__sock_slots(s) : 0;
}

REDLOCK_SOCKET_API int redlock_socket_fd(const redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return -1;
    return s->_nodes[node].fd;
}

REDLOCK_SOCKET_API int redlock_socket_interest(const redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return 0;
    return redlock__sock_interest_of(&s->_nodes[node]);
}

REDLOCK_SOCKET_API void redlock_socket_on_readable(redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return;
    redlock__sock_event(s, &s->_nodes[node], 1, 0);
    redlock__sock_timer_report(s);
}

REDLOCK_SOCKET_API void redlock_socket_on_writable(redlock_socket *s, int node)
{
    if (!redlock__sock_valid(s) || node < 0 || node >= redlock__sock_slots(s)) return;
    redlock__sock_event(s, &s->_nodes[node], 0, 1);
    redlock__sock_timer_report(s);
}

REDLOCK_SOCKET_API int64_t redlock_socket_next_deadline(const redlock_socket *s)
{
    if (!redlock__sock_valid(s)) return REDLOCK_NO_DEADLINE;
    return redlock__sock_deadline(s);
}

REDLOCK_SOCKET_API void redlock_socket_on_timer(redlock_socket *s)
{
    if (!redlock__sock_valid(s)) return;
    redlock__sock_timeouts(s);
    /* The owner's timer is one-shot and may have fired early (or this call
       came from elsewhere): an unchanged deadline must be armed again, so
       it is always reported, changed or not. */
    if (s->_cfg.set_timer) redlock__sock_timer_set(s, redlock__sock_deadline(s));
}

#ifndef REDLOCK_SOCKET_NO_CORE
REDLOCK_SOCKET_API redlock_client *redlock_socket_client(redlock_socket *s)
{
    return redlock__sock_valid(s) && !s->_cfg.on_reply ? &s->_client : NULL;
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
    int rc, waited;
    if (!redlock__sock_valid(s) || !l || !opts || s->_cfg.on_reply) return REDLOCK_ERR_INVALID;
    o = *opts;
    o.on_result = redlock__sock_on_result;
    o.user = l;
    /* l is not read nor cleared first (it may be uninitialised memory): a
       handle still initialised on this client is the core's to deinitialise
       (its key block freed, its table entry removed); cleared, it would be
       filed a second time */
    rc = redlock_lock_init(&l->lock, &s->_client, &o);
    if (rc != REDLOCK_OK && rc != REDLOCK_ERR_NOMEM) return rc; /* refused: the call did nothing */
    /* a blocking call waits on the old lock (we are in a callback): its
       result cannot come any more */
    waited = s->_blocking == l && !l->_done;
    l->_s = rc == REDLOCK_OK ? s : NULL;
    l->_fn = opts->on_result;
    l->_user = opts->user;
    l->_want = l->_done = 0;
    memset(&l->_last, 0, sizeof l->_last);
    if (waited) {
        l->_last.status = REDLOCK_ERR_DETACHED;
        l->_done = 1;
    }
    return rc;
}

REDLOCK_SOCKET_API void redlock_socket_lock_deinit(redlock_socket_lock *l)
{
    if (!l || !l->_s) return;
    redlock_lock_deinit(&l->lock);
    l->_s = NULL;
    if (l->_want) { /* a blocking call waits on it (we are in a callback): it ends now */
        memset(&l->_last, 0, sizeof l->_last);
        l->_last.status = REDLOCK_ERR_DETACHED;
        l->_done = 1;
        l->_want = 0;
    }
}

/* After a blocking call's result: what the core sent last (the undo of a
   failed attempt, a release's commands to the slower nodes) is written
   out, also to a node still connecting; while a node owes the lock an
   answer that the core follows with another command or that a later
   release needs (redlock_lock_followup: a legacy SETNX or GET, a node's
   first script), replies are read too, so that step is not left undone
   when the call returns. Other stragglers are read by the next call. At
   most one node timeout. */
static void redlock__sock_linger(redlock_socket *s, const redlock_socket_lock *l)
{
    int64_t node_timeout = s->_cfg.core.node_timeout_ms > 0 ? s->_cfg.core.node_timeout_ms : 50;
    int64_t until = redlock_socket_now_us() + node_timeout * 1000;
    for (;;) {
        int i, waiting = redlock_lock_followup(&l->lock);
        for (i = 0; i < s->_cfg.node_count; i++) {
            struct redlock__sock_node *nd = &s->_nodes[i];
            if (nd->state == REDLOCK__SOCK_UP && nd->out_off < nd->out_len) redlock__sock_flush(s, nd);
            if ((nd->state == REDLOCK__SOCK_UP || redlock__sock_opening(nd)) && nd->out_off < nd->out_len) waiting = 1;
        }
        if (!waiting || redlock_socket_now_us() >= until) break;
        redlock__sock_step(s, until);
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
        for (i = 0; i < s->_cfg.node_count; i++)
            if (s->_nodes[i].q_count || redlock__sock_opening(&s->_nodes[i])) idle = 0;
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
    int rc;
    if (!l || !redlock__sock_valid(l->_s)) return REDLOCK_ERR_INVALID;
    s = l->_s;
    if (s->_in_cb) return REDLOCK_ERR_BUSY;
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
        redlock__sock_linger(s, l);
    }
    s->_blocking = NULL;
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
    return l ? &l->_last : NULL;
}
#endif /* !REDLOCK_SOCKET_NO_CORE */

#endif /* REDLOCK_SOCKET_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License - see the end of redlock.h. Copyright (c) 2026 The redlock.h authors
------------------------------------------------------------------------------
*/
