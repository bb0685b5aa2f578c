/* redlock.h - distributed locks over Redis, one header, no dependencies.

   Do this:
       #define REDLOCK_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the
   implementation. Every other file includes it without the define.

       #define REDLOCK_IMPLEMENTATION
       #include "redlock.h"

   When REDLOCK_IMPLEMENTATION is defined, include this file before any
   system header (or build with -D_POSIX_C_SOURCE=200809L): the built-in
   clock uses clock_gettime().

   CONTENTS
       1. What it is
       2. Quick start
       3. The transport contract (send / reply / timer)
       4. Algorithms and guarantees
       5. Compile-time options
       6. Errors
       7. Threads and callbacks
       (API declarations follow; the implementation is below them;
        the license is at the end of the file)

   1. WHAT IT IS
   ------------
   A lock state machine for Redis, the "Redlock" algorithm: a lock is held
   when a majority (N/2+1) of N independent Redis masters hold the key with
   this lock's random token. N = 1 is the ordinary single-instance lock.
   The core never does I/O, never sleeps and never allocates: it hands
   commands to your `send` callback, asks for wake-ups through `set_timer`,
   reads time through clock callbacks, and is fed replies, errors and timer
   expiries by you (or by one of the adapters in adapters/).

   2. QUICK START
   --------------
       static int my_send(void *user, int node, const redlock_command *cmd,
                          redlock_tag tag)
       {
           // write cmd->argv[0..argc-1] to connection `node`; when the reply
           // comes, call redlock_on_reply(client, tag, &reply) (or
           // redlock_on_error(client, tag, status) if the node failed).
           return 0; // or a negative redlock_status if it could not be sent
       }
       static void my_timer(void *user, int64_t deadline_us)
       {
           // call redlock_on_timer(client) once now_us() >= deadline_us;
           // REDLOCK_NO_DEADLINE means: no wake-up needed.
       }
       static void on_result(redlock_lock *lk, const redlock_result *r)
       {
           if (r->op == REDLOCK_OP_ACQUIRE && r->status == REDLOCK_OK) {
               // held until redlock_lock_valid_until(lk) (renewed by the
               // watchdog if enabled); call redlock_release(lk) when done.
           } else if (r->op == REDLOCK_OP_LOST) {
               // stop touching the resource: r->status says why
           }
       }

       redlock_config cfg;
       redlock_config_init(&cfg);
       cfg.node_count = 3;
       redlock_callbacks cb = {0};
       cb.send = my_send;
       cb.set_timer = my_timer;
       redlock_client client;
       redlock_client_init(&client, &cfg, &cb, my_user_pointer);

       redlock_lock_opts o = {0};
       o.key = "nightly-job";
       o.ttl_ms = 10000;
       o.watchdog = 1;
       o.on_result = on_result;
       redlock_lock lock;
       redlock_lock_init(&lock, &client, &o);
       redlock_acquire(&lock);        // result arrives through on_result

   With an adapter the I/O is done for you; see adapters/ and examples/.

   3. THE TRANSPORT CONTRACT
   -------------------------
   * send(user, node, cmd, tag): transmit `cmd` (argv/argvlen, binary safe)
     to node `node` (0-based). The argv pointers are valid only during the
     call: serialise or copy them before returning. Return 0 when queued, or
     a negative redlock_status (e.g. REDLOCK_ERR_TRANSPORT); a failed send
     counts as that node's failed vote and no reply is expected.
   * Later (or inside send itself, for synchronous transports) deliver what
     came back: redlock_on_reply(client, tag, reply) or
     redlock_on_error(client, tag, status). Every tag may be answered at
     most once; answers to tags the core no longer waits for (an earlier
     attempt, a lock since deinitialised) are recognised and ignored, so a
     transport may deliver late or never.
   * Replies of one node must arrive in the order the commands were sent to
     it (any TCP connection does this); replies of different nodes may
     interleave freely.
   * set_timer(user, deadline_us): there is one timer per client. Each call
     replaces the previous deadline; REDLOCK_NO_DEADLINE cancels it. When it
     expires call redlock_on_timer(client). Early or spurious calls are
     harmless. Alternatively poll redlock_next_deadline().
   * now_us(user): a monotonic clock in microseconds. wall_ms(user): the wall
     clock in milliseconds since 1970 (used only by the legacy algorithm).
     random(user, buf, len): fill buf with unpredictable bytes, return 0.
     Each may be NULL: built-ins use CLOCK_MONOTONIC, CLOCK_REALTIME and the
     OS CSPRNG (getrandom(2), else /dev/urandom).

   4. ALGORITHMS AND GUARANTEES
   ----------------------------
   Acquire: `SET key token NX PX ttl` on all nodes in parallel; the token is
   128 random bits, new for every redlock_acquire(). The attempt succeeds
   when a quorum said OK and the validity
       ttl - elapsed - (ttl * drift_factor + clock_drift_ms)
   is still positive; the core decides as soon as the votes allow and does
   not wait for stragglers. A failed attempt is undone on *all* nodes (a late
   OK may have landed) and retried after retry_delay +- retry_jitter, up to
   retry_count retries and no later than wait_ms after the call.
   Release: a compare-and-delete script (EVALSHA, EVAL on NOSCRIPT): only
   the token's owner deletes. Extend: a compare-and-PEXPIRE script; success
   needs a quorum and a positive new validity.
   Watchdog (opts.watchdog): renews every renew_every_ms (default ttl/3)
   while held. When the lock ends other than by your release, on_result is
   called with op REDLOCK_OP_LOST no later than the validity runs out, and
   r->status says why: REDLOCK_ERR_EXPIRED, REDLOCK_ERR_STOLEN,
   REDLOCK_ERR_QUORUM_LOST, REDLOCK_ERR_TRANSPORT or REDLOCK_ERR_HOLD_LIMIT
   (max_hold_ms / max_extensions reached, so renewal stopped).
   Clocks: safety assumes each client's monotonic clock runs within
   drift_factor of real time and servers keep keys for their TTL. A server
   that restarts without persistence forgets keys: keep it down for the max
   TTL before it rejoins (or enable AOF with fsync always).
   Legacy mode (servers without SET NX PX or without scripting): per node,
   mode AUTO (default) switches a node to the fallback when it answers with
   "unknown command", "syntax error", "wrong number of arguments" (no
   SET ... NX PX: full legacy) or NOPERM / unknown command for EVAL/EVALSHA
   (no scripting: release and extend become GET + compare + DEL / PEXPIRE).
   Full legacy is the SETNX algorithm: the value is "expiry_ms:token" with an
   absolute wall-clock expiry; an expired value is taken over only if GETSET
   returns exactly the value read. Its guarantees are weaker: it needs wall
   clocks synchronised to within clock_drift_ms, and release / extend are
   check-then-act over two round trips (release skips the DEL when less
   than node_timeout + drift of the lock remains, to keep that window from
   racing the expiry). A node whose GETSET lost a race is never deleted by
   this client. Prefer modern servers.

   5. COMPILE-TIME OPTIONS (define before including)
       REDLOCK_IMPLEMENTATION  emit the implementation in this file
       REDLOCK_STATIC          make every function static (private copy)
       REDLOCK_API             linkage of the API (default: extern)
       REDLOCK_MAX_NODES       max nodes per client (default 16, <= 255)
       REDLOCK_MAX_KEY         max key length in bytes (default 512)
       REDLOCK_ASSERT(c)       internal consistency checks (default assert)

   6. ERRORS
   Every function that can fail returns a redlock_status: 0 is success,
   negative is an error; redlock_strerror() names it. Caller errors
   (-1..-19) mean the call did nothing. Outcomes (-20..-39) arrive in
   redlock_result.status. Node errors (-40..-59) describe one node (events,
   send/on_error statuses); a node error is a failed vote, never fatal.

   7. THREADS AND CALLBACKS
   No global mutable state. A client and its locks are used by one thread
   at a time; different clients may live on different threads. Inside any
   callback you may call redlock_acquire/release/extend on any lock of the
   client, redlock_lock_deinit (also on the lock being reported), and
   redlock_on_reply/on_error (synchronous transports). Do not call
   redlock_client_deinit inside a callback.
*/
#ifndef REDLOCK_H
#define REDLOCK_H

#if defined(REDLOCK_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stddef.h>
#include <stdint.h>

#define REDLOCK_VERSION_MAJOR 0
#define REDLOCK_VERSION_MINOR 1
#define REDLOCK_VERSION_PATCH 0
#define REDLOCK_VERSION "0.1.0"
#define REDLOCK_VERSION_NUMBER \
    (REDLOCK_VERSION_MAJOR * 10000 + REDLOCK_VERSION_MINOR * 100 + REDLOCK_VERSION_PATCH)

#ifndef REDLOCK_API
#ifdef REDLOCK_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_API static __attribute__((unused))
#else
#define REDLOCK_API static
#endif
#else
#define REDLOCK_API extern
#endif
#endif

#ifndef REDLOCK_MAX_NODES
#define REDLOCK_MAX_NODES 16
#endif
#ifndef REDLOCK_MAX_KEY
#define REDLOCK_MAX_KEY 512
#endif
#if REDLOCK_MAX_NODES < 1 || REDLOCK_MAX_NODES > 255
#error "REDLOCK_MAX_NODES must be in 1..255"
#endif

#define REDLOCK_MAX_ARGS 8             /* longest command the core sends */
#define REDLOCK_TOKEN_LEN 32           /* hex characters of a token (128 bits) */
#define REDLOCK_NO_DEADLINE INT64_MAX  /* set_timer: nothing to wait for */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum redlock_status {
    REDLOCK_OK = 0,
    /* caller errors: the call did nothing */
    REDLOCK_ERR_INVALID = -1,      /* NULL pointer or argument out of range */
    REDLOCK_ERR_KEY = -2,          /* key NULL or empty */
    REDLOCK_ERR_KEY_TOO_LONG = -3, /* key longer than REDLOCK_MAX_KEY */
    REDLOCK_ERR_TTL = -4,          /* ttl <= 0 or absurdly large */
    REDLOCK_ERR_NODES = -5,        /* node count outside 1..REDLOCK_MAX_NODES */
    REDLOCK_ERR_BUSY = -6,         /* another operation on this lock is running */
    REDLOCK_ERR_NOT_HELD = -7,     /* release/extend of a lock that is not held */
    REDLOCK_ERR_ALREADY_HELD = -8, /* acquire of a lock already held */
    REDLOCK_ERR_RANDOM = -9,       /* the random source failed */
    REDLOCK_ERR_NOMEM = -10,       /* out of memory (adapters only) */
    REDLOCK_ERR_DETACHED = -11,    /* lock not initialised or its client is gone */
    /* outcomes, in redlock_result.status */
    REDLOCK_ERR_LOCKED = -20,      /* held by someone else; retries exhausted */
    REDLOCK_ERR_TIMEOUT = -21,     /* wait_ms passed before the lock was won */
    REDLOCK_ERR_NO_QUORUM = -22,   /* too few nodes answered */
    REDLOCK_ERR_VALIDITY = -23,    /* quorum reached too late: no validity left */
    REDLOCK_ERR_EXPIRED = -24,     /* lost: validity ran out */
    REDLOCK_ERR_STOLEN = -25,      /* lost: a node holds another token */
    REDLOCK_ERR_QUORUM_LOST = -26, /* lost: a majority no longer has the key */
    REDLOCK_ERR_HOLD_LIMIT = -27,  /* lost: max hold time / extensions reached */
    REDLOCK_ERR_CANCELLED = -28,   /* acquire cancelled by release or deinit */
    /* node errors: one node failed, its vote does not count */
    REDLOCK_ERR_TRANSPORT = -40,    /* send failed, connection reset or closed */
    REDLOCK_ERR_NODE_TIMEOUT = -41, /* no answer within node_timeout_ms */
    REDLOCK_ERR_PROTOCOL = -42,     /* malformed or unexpected reply */
    REDLOCK_ERR_SERVER = -43,       /* the server answered with an error */
    REDLOCK_ERR_AUTH = -44,         /* authentication refused (adapters) */
    REDLOCK_ERR_CONNECT = -45       /* connection refused / unreachable (adapters) */
} redlock_status;

typedef enum redlock_mode {
    REDLOCK_MODE_AUTO = 0, /* modern; switch per node on old-server errors */
    REDLOCK_MODE_MODERN,   /* SET NX PX and scripts only */
    REDLOCK_MODE_LEGACY    /* SETNX / GET / GETSET, no scripts */
} redlock_mode;

typedef enum redlock_state {
    REDLOCK_STATE_IDLE = 0,  /* not held, nothing running */
    REDLOCK_STATE_ACQUIRING, /* attempts (and retry waits) in progress */
    REDLOCK_STATE_HELD,      /* held until redlock_lock_valid_until() */
    REDLOCK_STATE_RELEASING, /* release sent, waiting for the nodes */
    REDLOCK_STATE_LOST       /* was held, ended without release: see lost_reason */
} redlock_state;

typedef enum redlock_op {
    REDLOCK_OP_ACQUIRE = 1,
    REDLOCK_OP_RELEASE,
    REDLOCK_OP_EXTEND,
    REDLOCK_OP_LOST
} redlock_op;

/* A reply, as much of it as the core reads. Adapters fill it from their
   parser or from hiredis's redisReply. Strings need not be NUL-terminated. */
typedef enum redlock_reply_type {
    REDLOCK_REPLY_STATUS = 1, /* +OK          str/len */
    REDLOCK_REPLY_ERROR,      /* -ERR ...     str/len */
    REDLOCK_REPLY_INTEGER,    /* :1           integer */
    REDLOCK_REPLY_STRING,     /* $3 foo       str/len */
    REDLOCK_REPLY_NIL,        /* $-1 / *-1 */
    REDLOCK_REPLY_ARRAY,      /* *n           element/elements */
    REDLOCK_REPLY_OTHER       /* anything else (RESP3 types ...) */
} redlock_reply_type;

typedef struct redlock_reply {
    redlock_reply_type type;
    long long integer;
    const char *str;
    size_t len;
    const struct redlock_reply *element;
    size_t elements;
} redlock_reply;

/* A command the core wants sent: argv[0] is the command name. */
typedef struct redlock_command {
    int argc;
    const char *argv[REDLOCK_MAX_ARGS];
    size_t argvlen[REDLOCK_MAX_ARGS];
} redlock_command;

/* Identifies one request; opaque to transports. */
typedef uint64_t redlock_tag;

typedef enum redlock_event_type {
    REDLOCK_EV_ATTEMPT = 1,   /* an acquire attempt starts: attempt */
    REDLOCK_EV_VOTE,          /* a node's answer: node, op, vote, status, rtt_us */
    REDLOCK_EV_ACQUIRED,      /* votes, elapsed_us, validity_us, ttl_share_permille */
    REDLOCK_EV_RETRY,         /* attempt failed: status, votes, delay_us to next */
    REDLOCK_EV_FAILED,        /* acquire gave up: status, attempt */
    REDLOCK_EV_RENEWED,       /* extend/renewal ok: votes, elapsed_us, validity_us, slack_us */
    REDLOCK_EV_RENEW_FAILED,  /* a renewal round failed: status, slack_us */
    REDLOCK_EV_LOST,          /* status = reason */
    REDLOCK_EV_RELEASED,      /* status, votes (nodes that deleted the key) */
    REDLOCK_EV_MODE_SWITCH    /* node switched: mode (LEGACY), or scripts off */
} redlock_event_type;

struct redlock_lock;

/* Events carry per-phase timings for logging and metrics. Fields that do
   not apply to a type are 0 (node: -1). Tokens are never included. */
typedef struct redlock_event {
    redlock_event_type type;
    const struct redlock_lock *lock;
    redlock_op op;           /* the operation the event belongs to */
    int node;                /* node index, or -1 */
    int status;              /* redlock_status of the node or the phase */
    int vote;                /* EV_VOTE: 1 = for, 0 = against/failed */
    int votes;               /* votes for, in this round */
    int attempt;             /* 1-based acquire attempt number */
    int mode;                /* EV_MODE_SWITCH: REDLOCK_MODE_LEGACY, or 0 = scripts off */
    int64_t rtt_us;          /* EV_VOTE: round trip of this node */
    int64_t elapsed_us;      /* since the round started */
    int64_t validity_us;     /* validity left after the round */
    int64_t slack_us;        /* EV_RENEWED/RENEW_FAILED: validity left when the round started */
    int64_t delay_us;        /* EV_RETRY: wait before the next attempt */
    int ttl_share_permille;  /* EV_ACQUIRED: (elapsed + drift) / ttl, in 1/1000 */
} redlock_event;

/* What an operation ended with (or that a held lock was lost). */
typedef struct redlock_result {
    redlock_op op;
    int status;          /* REDLOCK_OK or an error */
    int votes;           /* nodes that voted for */
    int attempts;        /* acquire: attempts made */
    int64_t validity_us; /* acquire/extend: validity left now */
    int64_t elapsed_us;  /* since the operation was called */
    void *user;          /* redlock_lock_opts.user */
} redlock_result;

typedef struct redlock_lock redlock_lock;
typedef void (*redlock_result_fn)(redlock_lock *lock, const redlock_result *result);

typedef struct redlock_callbacks {
    int (*send)(void *user, int node, const redlock_command *cmd, redlock_tag tag); /* required */
    void (*set_timer)(void *user, int64_t deadline_us); /* optional: else poll redlock_next_deadline */
    int64_t (*now_us)(void *user);                      /* NULL: CLOCK_MONOTONIC */
    int64_t (*wall_ms)(void *user);                     /* NULL: CLOCK_REALTIME */
    int (*random)(void *user, void *buf, size_t len);   /* NULL: OS CSPRNG */
    void (*on_event)(void *user, const redlock_event *ev); /* optional */
} redlock_callbacks;

/* Client configuration. Zero fields mean "default", so `= {0}` plus a node
   count is a valid config; redlock_config_init() writes the defaults out. */
typedef struct redlock_config {
    int node_count;                    /* 1..REDLOCK_MAX_NODES (required) */
    redlock_mode mode[REDLOCK_MAX_NODES]; /* per node, default AUTO */
    int64_t node_timeout_ms;           /* per round, default 50 */
    double drift_factor;               /* default 0.01 */
    int64_t clock_drift_ms;            /* fixed drift allowance, default 2 */
    int retry_count;                   /* retries after the first attempt, default 3; < 0: none */
    int64_t retry_delay_ms;            /* default 200 */
    int64_t retry_jitter_ms;           /* +- this, default 100; < 0: none */
    int64_t wait_ms;                   /* overall acquire deadline, default none (0) */
} redlock_config;

/* Per-lock options; zero fields take the client's setting or the default. */
typedef struct redlock_lock_opts {
    const char *key;          /* required, copied */
    size_t key_len;           /* 0: strlen(key) */
    int64_t ttl_ms;           /* required, 1 .. 2^40 */
    int watchdog;             /* nonzero: renew while held */
    int64_t renew_every_ms;   /* default ttl/3 */
    int64_t max_hold_ms;      /* stop renewing after this long held; 0 = no cap */
    int max_extensions;       /* stop renewing after this many; 0 = no cap */
    int retry_count;          /* 0: client's; < 0: none */
    int64_t retry_delay_ms;   /* 0: client's */
    int64_t retry_jitter_ms;  /* 0: client's; < 0: none */
    int64_t wait_ms;          /* 0: client's */
    redlock_result_fn on_result; /* optional */
    void *user;
} redlock_lock_opts;

/* ---- internal state: treat as opaque, fields may change ---- */
#define REDLOCK__VALUE_MAX 64
typedef struct redlock__node {
    uint32_t seq;      /* tag sequence of the request awaited; 0 = none */
    uint8_t step;      /* what the node is doing */
    uint8_t flags;     /* need-send, in-flight, done, clobbered */
    int8_t outcome;    /* result of this round on this node */
    uint8_t loops;     /* SETNX/GET repeats */
    int status;        /* node error of this round */
    int64_t sent_us;   /* for round-trip times */
    size_t seen_len;   /* legacy: value read by GET */
    char seen[REDLOCK__VALUE_MAX];
} redlock__node;

typedef struct redlock_client {
    redlock_config _cfg;
    redlock_callbacks _cb;
    void *_user;
    redlock_lock *_locks;     /* intrusive list of initialised locks */
    uint32_t _next_id;
    uint32_t _tick;
    int _depth;               /* nesting of API calls; timer updated at 0 */
    int64_t _armed;           /* deadline last given to set_timer */
    uint8_t _legacy[REDLOCK_MAX_NODES];     /* node speaks only SETNX/GETSET */
    uint8_t _no_scripts[REDLOCK_MAX_NODES]; /* node refuses EVAL/EVALSHA */
    int _magic;
} redlock_client;

struct redlock_lock {
    redlock_client *_client;
    redlock_lock *_next;
    uint32_t _id;
    uint32_t _seq;
    uint32_t _tick;
    int _magic;
    redlock_state _state;
    int _phase;            /* round in progress: acquire, rollback, release, extend, cleanup */
    int _phase_op;         /* user operation the round belongs to */
    int _busy, _dirty;     /* re-entrancy guard of the drive loop */
    int *_alive;           /* cleared by deinit while a callback runs */
    int _attempt;
    int _retries;          /* retries left */
    int _extensions;
    int _lost_status;
    int _renew_status;     /* last failed renewal's reason */
    int _user_extend;      /* current extend round was requested by the user */
    int _capped;           /* renewal cap reached */
    int64_t _ttl_ms, _extend_ttl_ms;
    int64_t _op_start;     /* when the user operation was called */
    int64_t _round_start;  /* when the current round's commands went out */
    int64_t _round_deadline;
    int64_t _valid_until;  /* held: monotonic deadline of validity */
    int64_t _acquired_at;
    int64_t _retry_at, _renew_at, _wait_deadline;
    int64_t _deadline;     /* earliest time this lock needs the timer */
    int64_t _legacy_expiry; /* wall ms written in legacy values this round */
    int64_t _renew_every_us, _max_hold_us, _retry_delay_ms, _retry_jitter_ms, _wait_ms;
    int _max_extensions, _retry_count, _watchdog;
    redlock_result_fn _on_result;
    void *_user;
    size_t _key_len;
    char _key[REDLOCK_MAX_KEY];
    char _token[REDLOCK_TOKEN_LEN + 1];
    char _scratch[2][REDLOCK__VALUE_MAX]; /* argument text for the command being sent */
    redlock__node _node[REDLOCK_MAX_NODES];
};

/* ---- API ---- */

/* Writes the defaults into *cfg (node_count 1, everything else default). */
REDLOCK_API void redlock_config_init(redlock_config *cfg);

/* Initialises a client for cfg->node_count nodes. cfg and cb are copied.
   Errors: INVALID (NULL, no send callback, negative or NaN settings),
   NODES (node count out of range). */
REDLOCK_API int redlock_client_init(redlock_client *client, const redlock_config *cfg,
                                    const redlock_callbacks *cb, void *user);

/* Detaches every lock (they become DETACHED; no callbacks are made) and
   cancels the timer. Not allowed inside a callback. */
REDLOCK_API void redlock_client_deinit(redlock_client *client);

/* Initialises a lock handle on a client. Errors: INVALID, KEY,
   KEY_TOO_LONG, TTL, DETACHED (client not initialised). */
REDLOCK_API int redlock_lock_init(redlock_lock *lock, redlock_client *client,
                                  const redlock_lock_opts *opts);

/* Forgets the lock: pending replies are ignored, no further callbacks. It
   does not release the lock on the servers; call redlock_release first.
   Safe inside callbacks, including the lock's own on_result. */
REDLOCK_API void redlock_lock_deinit(redlock_lock *lock);

/* Starts acquiring with a fresh token; the outcome comes through on_result
   (op ACQUIRE), possibly before this returns. Returns OK if started, or
   INVALID / DETACHED / BUSY (acquiring or releasing) / ALREADY_HELD / RANDOM. */
REDLOCK_API int redlock_acquire(redlock_lock *lock);

/* Releases on all nodes (op RELEASE result: OK if a quorum deleted the key,
   EXPIRED if a majority no longer had it, NO_QUORUM if too few answered).
   Called while acquiring, it cancels the acquisition (ACQUIRE result
   CANCELLED) and releases. Returns OK if started, or NOT_HELD / BUSY. */
REDLOCK_API int redlock_release(redlock_lock *lock);

/* Extends the validity of a held lock by ttl_ms (0: the lock's ttl), on a
   quorum. Result op EXTEND: OK, or NO_QUORUM / VALIDITY (still held until
   the old validity), or STOLEN / QUORUM_LOST (then the lock is LOST).
   Returns OK if started, or NOT_HELD / BUSY (a renewal is running) / TTL. */
REDLOCK_API int redlock_extend(redlock_lock *lock, int64_t ttl_ms);

/* Transport input. Unknown or stale tags are ignored. */
REDLOCK_API void redlock_on_reply(redlock_client *client, redlock_tag tag, const redlock_reply *reply);
REDLOCK_API void redlock_on_error(redlock_client *client, redlock_tag tag, int status);
REDLOCK_API void redlock_on_timer(redlock_client *client);

/* Earliest time (now_us clock) the client needs redlock_on_timer, or
   REDLOCK_NO_DEADLINE. */
REDLOCK_API int64_t redlock_next_deadline(const redlock_client *client);

REDLOCK_API redlock_state redlock_lock_state(const redlock_lock *lock);
/* HELD: monotonic microsecond deadline of validity; otherwise 0. */
REDLOCK_API int64_t redlock_lock_valid_until(const redlock_lock *lock);
/* LOST: why (EXPIRED, STOLEN, QUORUM_LOST, TRANSPORT, HOLD_LIMIT); else 0. */
REDLOCK_API int redlock_lock_lost_reason(const redlock_lock *lock);
/* The current token (hex, NUL-terminated), "" before the first acquire. */
REDLOCK_API const char *redlock_lock_token(const redlock_lock *lock);
/* The node's learned mode: REDLOCK_MODE_LEGACY or MODERN/AUTO as configured. */
REDLOCK_API redlock_mode redlock_node_mode(const redlock_client *client, int node);
/* Tag helpers for transports that multiplex: which node a tag is for. */
REDLOCK_API int redlock_tag_node(redlock_tag tag);

REDLOCK_API const char *redlock_strerror(int status);
REDLOCK_API const char *redlock_state_name(redlock_state state);
REDLOCK_API const char *redlock_event_name(redlock_event_type type);

/* The scripts the core runs (exposed for adapters that preload them and
   for tests). */
REDLOCK_API const char *redlock_release_script(void);
REDLOCK_API const char *redlock_extend_script(void);

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_IMPLEMENTATION) && !defined(REDLOCK__IMPLEMENTED)
#define REDLOCK__IMPLEMENTED

REDLOCK__IMPLEMENTATION_BODY

#endif /* REDLOCK_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 The redlock.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
