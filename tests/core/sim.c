/* sim.c - deterministic simulation of redlock.h against simulated Redis nodes.

   Virtual time, a seeded scheduler, and faults: message delay, loss and
   duplication, connection resets, node crashes and restarts (with and
   without persistence, back at once or after a while, never kept down on
   purpose), failovers to a replica that lacks the latest writes (keys,
   deletions and counts since its last sync gone; announced by Sentinel,
   or seen only as a new run_id), client pauses, client clock drift,
   server clock jumps, and nodes that evict keys (a maxmemory-policy of
   allkeys-*: lock keys and fence counters vanish). Every server process
   has its run_id and start time, and keeps keys across restarts or not
   (appendfsync always); each new connection's INFO (and CONFIG GET
   appendfsync) answer reaches the core before the replies behind it
   (redlock_node_set_life), as the adapters do; uptime_in_seconds is the
   difference of two whole-second readings of the server's clock. The
   servers started long before the clients, but in the restart profile
   some only just before, and some clients start late: they first see a
   node that restarted recently (or, where Sentinel announces failovers,
   one that failed over: the sentinels say when). The clients set cfg.max_ttl_ms to the longest ttl any of
   them asks for (or more, now and then seconds); the control switches
   the rule off. A node answers WAIT (cfg.wait_replicas) with its one
   replica, brought up to date then, or (a tenth of the time: a replica
   lagging past the timeout) with 0, which fails the vote (REPLICAS); the
   wait profile has every client WAIT and the rule off, so that only what
   WAIT keeps stands between two holders across failovers. Adapters tell
   some nodes, from inside callbacks, that releases there SPUBLISH
   (redlock_node_set_sharded): each release's flag must follow.

   The clients use the whole API, at random: several lock handles per
   client on the same and on different keys; acquire, release (also to
   cancel an acquire or an extend), extend with any ttl (tiny, shorter,
   longer, during a watchdog renewal), deinit and re-init; and any of these
   inside on_result, on the lock being reported or on another one.
   Configurations reach their limits (no retries, huge wait, large drift
   factor, short renewals, hold caps). The reentrant profile gives most
   handles a reentrant lock: a few owner ids shared by handles of several
   clients (processes sharing an owner on purpose), the default owner of
   each client, and some plain locks on the same keys; the simulated
   servers keep the hash {owner: count, owner:token: 1}. In half of its
   schedules some clients have busy event loops (and no watchdog): timer
   calls come up to 3 ms late, and a lock that reads LOST meanwhile is
   often dropped before the timer call reports it.
   The turns profile lets each client run only 1 to 3 rounds at once
   (max_rounds): the others wait for a turn.

   The checker asserts:
     - mutual exclusion (a restart or a failover excuses nothing): per
       key, no two lock handles inside their validity windows at the same
       true instant (two handles of one client count
       as two holders), unless both are reentrant locks of one owner or
       readers-writer holds that may share; a hold's mode is the one its
       acquire was configured with (the lock's options), then what the
       caller's downgrade call or reported upgrade made it, never what the
       handle says (redlock_lock_access must agree with that);
     - the hold cap: no automatic renewal (the watchdog's, an upgrade's
       attempts) starts past max_hold_ms or max_extensions, so a hold is
       never valid beyond max_hold_ms + ttl but by the user's own extends;
     - reentrant counts: on every node the owner's count equals its
       entries, never below zero, and an empty hash does not stay;
     - node events: REDLOCK_EV_NODE_RESTARTED only as the transport's
       calls about that node say (a run_id other than the last told, from
       now; a first sight of a server that loses keys at a restart, from
       its start; a failover, from now), never for a durable server's
       uptime; RESTARTED results only where nodes restart or fail over;
     - a holder is told: a lock still HELD at or after its validity end when
       the client's timer fires, or a timer armed past a held validity, is a
       violation;
     - stored values: when a caller is told it acquired or upgraded, every
       node's keys and fence counters, answered as a real server answers
       GET and HGETALL, decode through the public decoders (redlock.h
       section 13) to what the simulated server holds; and, while no
       fault took keys away (and not on legacy servers), a quorum shows
       the hold as the caller asked for it;
     - no key left behind: once a token is done with (replaced, its lock
       deinitialised, or everything stopped at the end of the run), no node
       still holds it for longer than the documented let-it-expire margin,
       unless a fault touched its client meanwhile or the documented limits
       apply (deinit of a busy lock; a legacy takeover race).
   Usage: sim [--runs N] [--seed S] [--profile NAME] [--expect-violations [--first]] [-v] [--trace]
   Every failure prints the seed and a one-line replay command. */
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_LOCK_TABLE 1 /* a client without a table of its own grows one from the start */
#include "redlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLIENTS 6
#define MAX_NODES 5
#define MAX_SLOTS 12 /* lock handles per client (3 but in many-locks) */
#define MAX_KEYS 6   /* keys (2 but in many-locks) */
#define MAX_TOKENS 4096
#define SHA_RELEASE "d7e00109fcea7097a6337cb32a8802b6d9d91443"
#define SHA_EXTEND "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394"
#define SHA_RACQUIRE "fe1913b107883a8d56dff9985f4ef19d96780450"
#define SHA_RRELEASE "7283c68fe5834b62f0fa88be7e1310f6391bcf58"
#define SHA_REXTEND "8713768fb046a3ec2f3a21545b1de720ccbd516d"
#define SHA_FACQUIRE "08c7557d4c89b0ab5b53a3a0ef90a225f2be7888"
#define SHA_FENCE "48e95165afb854dba74eb9d2c02d43ed7c87f94a"
#define SHA_RFACQUIRE "9e90d98820f6fd7cf2d8944664d249d42ea91993"
#define SHA_RWACQUIRE "c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef"
#define SHA_RWRELEASE "f7bf6351927f135b8da4a9c42452806dc2a47757"
#define SHA_RWEXTEND "4fa1c0304cf0189b45ec8ec2c59d15e46e862158"
#define SHA_RWUPGRADE "4d94de4c4c2d54aa9a81ab17767096537623e251"
#define SHA_RWSETMODE "b06ef25325497e7d384d8265d29a5597c574e502"
#define MAX_RW 24 /* holders and waiting writers in one readers-writer hash */
#define SHA_RFENCE "9aed5e9a15c9204fc81f0a524e790f2b5de165d1"
#define MAX_ENTRIES 64 /* entries of one owner in a reentrant hash */
#define WALL_EPOCH_MS 1700000000000LL

static const char *const key_names[MAX_KEYS] = {"sim-a", "sim-b", "sim-c", "sim-d", "sim-e", "sim-f"};

/* ---- deterministic random ---- */
typedef struct { uint64_t s; } rng_t;
static uint64_t rng_next(rng_t *r) {  /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t rng_range(rng_t *r, int64_t lo, int64_t hi) { /* inclusive */
    return hi <= lo ? lo : lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
static int rng_chance(rng_t *r, double p) { return (double)(rng_next(r) >> 11) / 9007199254740992.0 < p; }

/* ---- profiles ---- */
typedef struct profile {
    const char *name;
    int legacy;            /* nodes are old servers: no SET NX PX, no scripting */
    int noscript;          /* nodes refuse scripting (ACL) */
    int crashes;           /* node crashes happen (2: many, the restart profile and its control) */
    int persist;           /* nodes keep their data across restarts (AOF fsync always): 1 all,
                              0 none, -1: each node at random */
    int rule;              /* the clients count a node that may have lost keys (restarted,
                              failed over) only a bound after (cfg.max_ttl_ms >= 0); 0: the
                              rule off (max_ttl_ms < 0), for the control */
    double drift_bound;    /* client clock rate error bound */
    double drift_factor;   /* given to the core */
    int pauses;            /* client pauses */
    int faults;            /* delay spikes, drops, duplicates, resets */
    int api;               /* clients use the whole API (0: plain acquire/hold/release) */
    int crowd;             /* many clients, three nodes, one key, fast retries */
    int refusing;          /* some clients' AUTH or SELECT is refused by some nodes */
    int many;              /* many handles per client, in a lock table of 1..4 entries (2: and each
                              client runs at most 1..3 rounds at once, max_rounds) */
    int jumps;             /* server clocks jump forward (keys expire early), far beyond
                              the drift allowance: 1 on one node of four (fewer than
                              2q - N nodes: safe); the controls: 2 on a majority,
                              3 on one node of five (2q - N = 1), 4 on two of four */
    int reentrant;         /* most handles reentrant, owners shared across clients */
    double fenced;         /* share of plain handles with the fence option */
    double rw;             /* share of plain handles that are readers-writer locks (shared or exclusive) */
    int ctl_rw;            /* negative controls, the servers' scripts: 1 grant a shared hold beside
                              an exclusive one, 2 an update beside an update, 3 upgrade beside readers */
    double rw_update;      /* of the readers-writer handles, the share in update mode (0: a quarter) */
    int failovers;         /* nodes fail over to a replica that lacks the latest writes: 1 a third
                              of the clients WAIT for it after each grant, 2 all of them, 3 none */
} profile;

static const profile profiles[] = {
    {"modern", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.2, 0, 0, 0, 0},
    {"legacy", 1, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.1, 0, 0, 0, 0},
    {"noscript", 0, 1, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.1, 0, 0, 0, 0},
    /* a crowd on one key of old servers: takeover races (GETSET) are common */
    {"legacy-crowd", 1, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* misconfigured clients (wrong password, missing database) beside good
       ones; no crashes, so that a refusal is always heard */
    {"refusing", 0, 0, 0, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    /* up to 12 handles per client on 6 keys, filed in a lock table of 1, 2
       or 4 entries (every bucket a chain); deinitialised handles are
       scribbled over, as freed memory reused */
    {"many-locks", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 1, 0, 0, 0.2, 0, 0, 0, 0},
    /* the same, each client running at most 1 to 3 rounds at once: the
       others (attempts, releases, renewals, extends) wait for a turn */
    {"turns", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 2, 0, 0, 0.2, 0, 0, 0, 0},
    /* fenced locks (most handles) beside plain ones, every fault class,
       crashes with and without persistence */
    {"fencing", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.8, 0, 0, 0, 0},
    /* readers-writer locks (shared, exclusive) beside plain ones on the same
       keys, every fault class */
    {"rw", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0.8, 0, 0, 0},
    /* the same, most readers-writer handles in update mode: many upgrades */
    {"rw-upgrade", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0.9, 0, 0.7, 0},
    /* reentrant locks beside plain ones, every fault class */
    {"reentrant", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 1, 0.3, 0, 0, 0, 0},
    /* nodes that evict keys beside nodes that keep them: fenced and plain
       handles, all refusing the evicting ones; every fault class */
    {"evicting", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0},
    /* many restarts without a restart delay, most without persistence: the
       rule (redlock.h section 4, Restarts) alone keeps holders apart; some
       clients start late and first see a node that restarted recently,
       some schedules have a bound of seconds (a node's uptime counts) */
    {"restart", 0, 0, 2, -1, 1, 0.005, 0.01, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* failovers (Sentinel: announced to the clients, or seen only as a new
       run_id) to a replica that lacks the latest writes, beside crashes;
       fenced and plain handles, the whole API; a third of the clients
       WAIT for the replica after each grant (cfg.wait_replicas 1: the
       replica then has every write up to the WAIT) */
    {"failover", 0, 0, 1, -1, 1, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.3, 0, 0, 0, 1},
    /* failovers only, the restart rule off, every client WAITing for the
       replica after each grant (a lagging replica makes WAIT answer 0 at
       times): only acknowledged grants count, and the replica a failover
       promotes has each of them - WAIT alone keeps holders apart */
    {"wait", 0, 0, 0, -1, 0, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.3, 0, 0, 0, 2},
    /* negative controls: configurations the algorithm does not protect */
    /* one server of four whose clock jumps: the holder keeps at least two
       of the three others, so no one else finds three free nodes */
    {"jump-one-of-four", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
    /* restarts without persistence, the rule switched off (max_ttl_ms < 0) */
    {"ctl-restart", 0, 0, 2, 0, 0, 0.0, 0.01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* the wait profile with no client WAITing: what WAIT buys */
    {"ctl-failover-no-wait", 0, 0, 0, -1, 0, 0.005, 0.01, 1, 1, 1, 0, 0, 0, 0, 0, 0.3, 0, 0, 0, 3},
    {"ctl-drift", 0, 0, 0, 0, 1, 0.25, 0.01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"ctl-jump-majority", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0},
    {"ctl-jump-one-of-five", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0},
    {"ctl-rw-shared-beside-exclusive", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0.9, 1, 0, 0},
    {"ctl-rw-update-beside-update", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0.9, 2, 0, 0},
    {"ctl-rw-upgrade-beside-readers", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0.9, 3, 0, 0},
    {"ctl-jump-two-of-four", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0},
    /* the same evicting nodes, counted by every handle (refuse_evicting < 0) */
    {"ctl-evict-counted", 0, 0, 0, -1, 1, 0.005, 0.01, 0, 1, 1, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0},
};

/* Nodes that evict keys: a minority of them (1 of 3, 2 of 5) drop any key
   at random times, and the clients are told so at connect (as the
   adapters' INFO memory does). 1 (profile evicting): every handle refuses
   them (a fenced one by default, the others with refuse_evicting); 2 (the
   control): every handle counts them. */
static int p_evicting(const profile *p) {
    return !strcmp(p->name, "evicting") ? 1 : !strcmp(p->name, "ctl-evict-counted") ? 2 : 0;
}

/* ---- simulated world ---- */
typedef struct entry {
    int used;
    char val[96];
    size_t vlen;
    int64_t expire_at;
    int raced;               /* written by a GETSET over another holder's live value */
    /* a reentrant lock's hash: field owner = count, one field owner:token per entry */
    int hash;
    char owner[REDLOCK_MAX_OWNER + 1];
    long count;
    char toks[MAX_ENTRIES][REDLOCK_TOKEN_LEN + 1];
    int ntoks;
    int has_fence;           /* a fenced reentrant lock's hash keeps its hold's fence */
    long long fence;
    /* hash == 2: a readers-writer lock's hash: holders (mode 's' or 'x') and
       waiting writers' marks ('w'), each with its expiry (true time) */
    struct { char tok[REDLOCK_TOKEN_LEN + 1]; char mode; int64_t exp; } rw[MAX_RW];
    int nrw;
} entry;

typedef struct node {
    int up;
    entry e[MAX_KEYS];       /* the keys the clients contend for */
    int sha_release, sha_extend; /* script cache */
    int lost_release, lost_extend; /* the script was cached before a crash, not since */
    unsigned rsha, rlost;    /* the same for the reentrant scripts: 1 acquire, 2 release, 4 extend,
                                the fenced lock's: 8 acquire, 16 write-back; the fenced
                                reentrant lock's: 32 acquire, 64 write-back */
    long long counter[MAX_KEYS]; /* fenced locks' counters (REDLOCK_FENCE_PREFIX + key) */
    /* the server process answering there, as its INFO and CONFIG say */
    uint32_t run;            /* its run_id (a number, printed as 40 hex digits) */
    int64_t started;         /* when it started (true time; before 0: before the clients) */
    int durable;             /* appendonly yes, appendfsync always: keys outlive a restart */
    int64_t phase;           /* where its clock's whole seconds fall (us): uptime_in_seconds is
                                the difference of two whole-second readings */
    int64_t failed_over_at;  /* its last failover (true time), -1 none */
    /* the replica a failover promotes: the primary's data as of its last sync */
    entry replica[MAX_KEYS];
    long long replica_counter[MAX_KEYS];
} node;

typedef struct slot {        /* one lock handle of a client */
    redlock_lock lk;
    int inited;
    int key;                 /* index into key_names */
    int64_t ttl_ms;
    int watchdog;
    int64_t release_at;      /* true time to act on a held lock, -1 = hold until lost */
    int open;                /* checker: inside a hold interval */
    int owner;               /* reentrant: who owns it (shared ids: 0, 1; default: 10 + client); -1 plain */
    int64_t open_start, open_bound;
    int token;               /* index of the current token record, -1 none */
    int last_op;             /* op of the last result */
    /* what the contract checkers follow */
    int64_t renew_every_us;
    int capped;              /* max_hold / max_extensions set: HOLD_LIMIT allowed */
    int waits;               /* wait_ms set: TIMEOUT allowed */
    int last_try;            /* a retry was moved up to meet wait_ms: no retry after it */
    int64_t ext_ttl_ms;      /* ttl of the user's extend in flight, 0 none */
    int retries;             /* retries an acquire may spend, from the options (lock's, else client's) */
    int spent;               /* retries the current acquire spent: failures that planned one anew */
    int64_t due_at;          /* local time the planned retry is due, 0 none: an attempt before
                                it is a notification's, and one of those that loses spends none */
    int64_t woke_at;         /* local start of the current acquire's last attempt a notification
                                started, -1 none: the next such waits retry_delay / WAKES_PER_DELAY */
    int64_t round_start;     /* local start of the last successful acquire/renewal */
    int64_t round_done;      /* and when it succeeded */
    int renew_retry;         /* a renewal failed since: the next one may come early */
    int woken;               /* a release notification reached it since its last attempt began */
    int listening;           /* the core said listen(on) for it, and not yet (off) */
    int first_renewal;       /* the next renewal is the first after an acquire */
    uint32_t cadence_gen;    /* client's fault_gen then; -1: cadence not checkable */
    int no_callback;         /* on_result NULL: the sim polls the lock */
    uint32_t acquire_gen;    /* client's fault_gen when the current token's first attempt began */
    int retry_planned;       /* the current acquire announced a retry (EV_RETRY) */
    int64_t poll_due;
    int queue_full;          /* send said QUEUE_FULL for this lock since its last result:
                                OVERLOADED allowed */
    int release_queue_full;  /* ... since the last release call: NO_QUORUM not allowed */
    int fenced;              /* the fence option */
    /* a readers-writer lock's modes, from the calls made (never from the
       handle): what its options ask for, and the current (or last) hold's:
       the options' at acquire and adopt, then shared from a downgrade call
       on, exclusive from a reported upgrade on; DEFAULT for other locks */
    redlock_access opts_access, access;
    unsigned access_gen;     /* bumps when a new hold takes the options' mode */
    int upgrade_asked;       /* an upgrade was called on this hold and not yet answered */
    int remoded;             /* a downgrade or an upgrade changed the current (or last) hold */
    long upgrade_results;    /* upgrade results reported */
    /* the hold cap: max_hold_ms (us, 0 none) and max_extensions (0 none)
       from the options; when the hold began (local time, as the core
       counts it: the acquire's success, or adopt), the renewals seen since,
       and the furthest validity the user's own extends (or the adopt's
       valid_ms) asked for */
    int64_t max_hold_us;
    int max_extensions;
    int64_t held_since;
    int renewals;
    int64_t user_bound;
    int fence_token;         /* token record whose hold the fence checker has, -1 none */
    int refuses;             /* asked to refuse nodes that evict keys (refuse_evicting, or its default) */
    unsigned holds;          /* holds the model began (books_hold) */
    int stat_held;           /* statistics' model: held, as the caller was told (a result, adopt) and
                                until told otherwise (LOST, a loss read at deinit, its release call) */
} slot;

/* A client's statistics (redlock.h section 14) as its caller saw things
   happen: results by operation and status, attempts and failed votes from
   the events, losses, and the handles it holds (slot.stat_held). */
typedef struct books {
    uint64_t acquires, attempts, acquired, busy, timeout, no_quorum, cancelled, acquire_other;
    uint64_t ok[REDLOCK_OP_DOWNGRADE + 1], failed[REDLOCK_OP_DOWNGRADE + 1]; /* by op */
    uint64_t lost, expired, stolen, quorum, hold_limit, lost_other;
    uint64_t node_failures[MAX_NODES];
    uint32_t held_max;
    int blind;               /* a lock without on_result: its results are not seen */
    int touched;             /* a result or a call since the last check: `held` may have moved
                                (the core's changes only with one) */
} books;

typedef struct client {
    redlock_client rc;
    redlock_lock *table[4];  /* many-locks: the lock table of the even clients (the odd grow their own) */
    slot s[MAX_SLOTS];
    int ns;
    double rate;             /* clock rate error */
    int64_t offset;
    int64_t wall_offset_ms;
    int64_t paused_until;
    uint32_t timer_gen;
    uint32_t fault_gen;      /* bumps whenever a fault touches this client */
    uint32_t conn_epoch[MAX_NODES];
    unsigned refused_mask;   /* nodes that refuse this client's TLS, AUTH or SELECT */
    unsigned sharded_mask;   /* nodes told redlock_node_set_sharded(.., 1) last */
    int waits_replicas;      /* its config's wait_replicas > 0: REPLICAS may end an operation */
    int refusal;             /* REDLOCK_ERR_TLS, REDLOCK_ERR_AUTH or REDLOCK_ERR_SELECT */
    int64_t last_req[MAX_NODES], last_rep[MAX_NODES]; /* FIFO per connection */
    int64_t node_timeout_ms, clock_drift_ms, retry_delay_ms, retry_jitter_ms;
    int retry_count;         /* its config's */
    int max_rounds;          /* its config: more rounds than that wait for a turn */
    double drift_factor;
    /* legacy GETSETs sent but not answered, per node: the outcome (won, or
       replaced another holder's value) is unknown to the core until then */
    char unanswered[MAX_NODES][8][REDLOCK_TOKEN_LEN];
    int id;
    int late_loop;           /* its event loop calls the timer up to 3 ms late now and then
                                (its locks have no watchdog: renewals are checked to the us) */
    int64_t late_call;       /* when the timer armed last comes, if late (else 0) */
    int listens;             /* has a listen callback: subscribes to release notifications
                                while the core says (as an adapter would) */
    int table_changed;       /* a lock was initialised or deinitialised since the last check_books */
    /* what its transport told the core of each node (redlock_node_set_life,
       redlock_node_failed_over), to check the events the core reports */
    uint32_t told_epoch[MAX_NODES]; /* connection whose INFO went out, + 1 (0: none yet) */
    uint32_t told_run[MAX_NODES];   /* run_id last told (0: none) */
    int telling;             /* node of the set_life / failed_over call running, -1 none */
    int telling_failover;    /* that call is failed_over */
    redlock_node_life told;  /* what the set_life call running says */
    uint32_t telling_run;    /* and of which process */
    int64_t telling_ago_ms;  /* what the failed_over call running says */
    books bk;
} client;

/* A token the checker follows from its first attempt until it is done. */
typedef struct token_rec {
    char tok[REDLOCK_TOKEN_LEN + 1];
    int c, slot;
    uint32_t gen;            /* client's fault_gen when the token was born */
    int excused;             /* a documented limit applies */
    int64_t ttl_ms;
    uint64_t lock_id;        /* from its tags (white box): who may DEL it */
    int extends_out;         /* extend commands of it on their way to a node */
    int noscript;            /* a node that had lost its script answered NOSCRIPT to it */
} token_rec;

enum { E_REQ, E_REP, E_ERR, E_TIMER, E_ACT, E_CRASH, E_RESTART, E_PAUSE, E_LEAK, E_JUMP, E_WAKE, E_EVICT,
       E_INFO,      /* a new connection's INFO reaches the node */
       E_LIFE,      /* its answer reaches the client: redlock_node_set_life */
       E_SYNC,      /* the node's replica catches up */
       E_FAILOVER,  /* the node's replica becomes its primary */
       E_SWITCH };  /* a client hears of it (Sentinel's +switch-master): redlock_node_failed_over */

typedef struct msg {
    int argc;
    char *argv[REDLOCK_MAX_ARGS]; /* into args: one block */
    char *args;
    size_t argvlen[REDLOCK_MAX_ARGS];
    redlock_reply reply;
    char *rstr;
    int extend_of;           /* an extend of this token record on its way; -1 none */
} msg;

typedef struct event {
    int64_t t;
    uint64_t seq;
    int kind, c, n;
    uint32_t epoch, gen;
    redlock_tag tag;
    int status;
    msg *m;
} event;

typedef struct interval { int64_t s, e; int holder, key, owner; char mode; /* 's' 'u' 'x', 'p' plain */ } interval;
/* A fenced lock's hold: the acquire was called at `start`, reported
   success at `done` (true times). */
typedef struct fence_hold { int64_t start, done, fence; int key, holder, owner; } fence_hold;

typedef struct world {
    const profile *p;
    uint64_t seed;
    rng_t rng;
    int64_t now, end;
    int nn, nc, stopping;
    int nevict;              /* nodes 0 .. nevict-1 evict keys (profile evicting) */
    long evictions;          /* keys and counters they dropped */
    node nodes[MAX_NODES];
    client clients[MAX_CLIENTS];
    event *heap;
    size_t hn, hcap;
    uint64_t seq;
    interval *iv;
    size_t ivn, ivcap;
    fence_hold *fh;
    size_t fhn, fhcap;
    int64_t counter_lost[8]; /* when a crash without persistence wiped counters (the first 8) */
    int ncounter_lost;
    long fence_pairs;        /* pairs of holds the fence checker compared */
    long rw_holds[3];        /* acquisitions by access: default, shared, exclusive */
    long update_holds;       /* and update */
    long shared_overlaps;    /* pairs of shared holds whose windows overlapped (allowed) */
    long upgrades;           /* update holds made exclusive */
    long remode_acquires;    /* acquisitions by a handle whose last hold a downgrade or upgrade changed */
    long reinits_in_flight;  /* lock_init on a handle with a round still running */
    long capped_upgrades;    /* upgrades ended by the hold cap */
    token_rec tokens[MAX_TOKENS];
    int ntokens;
    long events, acquired, lost, violations, extends, inner, leak_checks, dups, acquired_events, adopted;
    long books_checked;      /* clients whose statistics were held to their callers' books */
    long nested;             /* reentrant acquisitions while another handle of the owner held the key */
    long wakes, wakes_waiting; /* release notifications handed to handles; of those, to one waiting */
    long woke, woke_lost, wakes_limited; /* attempts notifications started; of those, lost with the
                                            retry kept; wakes held back by the rate limit */
    int calm;                /* no faults at all in this schedule */
    int keys_gone;           /* a node crashed, evicted or jumped: keys may be gone before their time */
    int64_t max_ttl_ms;      /* the clients' cfg.max_ttl_ms: the longest ttl any of them uses,
                                or more; -1: the rule off */
    uint32_t runs;           /* run_ids handed out */
    int announced;           /* failovers are announced to the clients (Sentinel) */
    int64_t long_ttl_ms;     /* locks of a second or more: ttls up to this (0: none) */
    long restarts, failovers, lives, discounted; /* restarts, failovers, INFOs told, grants not counted */
    long inner_failovers;    /* failovers told from inside a callback (node_call) */
    long waits, waits_unacked; /* WAITs answered; of those, with 0 (a lagging replica) */
    long reported[4];        /* EV_NODE_RESTARTED by redlock_restart (UPTIME: a server younger than
                                the bound only) */
    long decoded;            /* keys and counters read through the public decoders */
    long shown;              /* holds a quorum of nodes was checked to show */
    int late_timers;         /* some clients' event loops call the timer late now and then */
    double drop, reset, spike, dup;
    double queue_full;       /* send refuses: the transport's queue for the node is full */
    int64_t key_ttl_ms[MAX_KEYS];
    int verbose;
    char why[256];
} world;

static world *W; /* callbacks reach the world through the client's user pointer; this is for asserts */

static void violation(world *w, const char *what, int c) {
    if (!w->violations)
        snprintf(w->why, sizeof w->why, "%s (client %d at t=%lld us)", what, c, (long long)w->now);
    w->violations++;
}

/* ---- event heap ---- */
static int ev_less(const event *a, const event *b) { return a->t != b->t ? a->t < b->t : a->seq < b->seq; }
static void push(world *w, event e) {
    size_t i;
    if (w->hn == w->hcap) {
        w->hcap = w->hcap ? w->hcap * 2 : 256;
        w->heap = (event *)realloc(w->heap, w->hcap * sizeof(event));
        if (!w->heap) { perror("realloc"); exit(2); }
    }
    e.seq = w->seq++;
    i = w->hn++;
    while (i > 0 && ev_less(&e, &w->heap[(i - 1) / 2])) { w->heap[i] = w->heap[(i - 1) / 2]; i = (i - 1) / 2; }
    w->heap[i] = e;
}
static event pop(world *w) {
    event top = w->heap[0], last = w->heap[--w->hn];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *best = &last;
        if (l < w->hn && ev_less(&w->heap[l], best)) { m = l; best = &w->heap[l]; }
        if (r < w->hn && ev_less(&w->heap[r], best)) { m = r; }
        if (m == i) break;
        w->heap[i] = w->heap[m];
        i = m;
    }
    if (w->hn) w->heap[i] = last;
    return top;
}
static void free_msg(msg *m) {
    if (!m) return;
    free(m->args);
    free(m->rstr);
    free(m);
}
static msg *copy_reply(const msg *m) {
    msg *d = (msg *)calloc(1, sizeof *d);
    int i;
    d->argc = m->argc;
    if (m->argc) {
        size_t total = (size_t)(m->argv[m->argc - 1] - m->args) + m->argvlen[m->argc - 1] + 1;
        d->args = (char *)malloc(total);
        memcpy(d->args, m->args, total);
    }
    for (i = 0; i < m->argc; i++) {
        d->argv[i] = d->args + (m->argv[i] - m->args);
        d->argvlen[i] = m->argvlen[i];
    }
    d->reply = m->reply;
    if (m->rstr) {
        d->rstr = (char *)malloc(m->reply.len + 1);
        memcpy(d->rstr, m->rstr, m->reply.len + 1);
    }
    return d;
}

/* ---- clocks ---- */
static int64_t local_of(const client *c, int64_t t) { return c->offset + (int64_t)((double)t * (1.0 + c->rate)); }
static int64_t true_of(const client *c, int64_t local) {
    int64_t t = (int64_t)((double)(local - c->offset) / (1.0 + c->rate));
    if (t < 0) t = 0;
    while (local_of(c, t) < local) t++;
    while (t > 0 && local_of(c, t - 1) >= local) t--;
    return t;
}
static int64_t node_wall_ms(const world *w) { return WALL_EPOCH_MS + w->now / 1000; }
static int64_t cb_now(void *u) { client *c = (client *)u; return local_of(c, W->now); }
static int64_t cb_wall(void *u) {
    client *c = (client *)u;
    /* wall clocks are kept in sync (NTP): offset, no accumulating rate */
    return node_wall_ms(W) + c->wall_offset_ms;
}
static int cb_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    while (len--) *p++ = (unsigned char)rng_next(&W->rng);
    return 0;
}
static void fault(client *c) { c->fault_gen++; }
static int token_find(world *w, const char *tok, size_t len);
static void violation(world *w, const char *what, int c);
static int p_crowd(const world *w) { return w->p->crowd; }
static int n_keys(const world *w) { return w->p->many ? MAX_KEYS : 2; }

/* The drift the header documents: ttl * drift_factor + clock_drift_ms, and
   one node timeout more once any node is legacy. */
static int64_t drift_us(const client *c, int64_t ttl_ms) {
    int64_t d = (int64_t)((double)ttl_ms * 1000.0 * c->drift_factor) + c->clock_drift_ms * 1000;
    int i;
    for (i = 0; i < W->nn; i++)
        if (redlock_node_mode(&c->rc, i) == REDLOCK_MODE_LEGACY) return d + c->node_timeout_ms * 1000;
    return d;
}

/* How long after a node may have lost keys its grants count again for
   slot s's lock (redlock.h section 4, Restarts): the larger of its ttl and
   cfg.max_ttl_ms, plus the drift allowance. */
static int64_t restart_bound_us(const client *c, const slot *s) {
    int64_t ms = s->ttl_ms > W->max_ttl_ms ? s->ttl_ms : W->max_ttl_ms;
    return ms * 1000 + drift_us(c, ms);
}

/* The core's own state (white box): redlock_lock_state() already reads a
   lock past its validity as LOST; the checker wants to know whether the
   core has told its holder. */
static int held_inside(const redlock_lock *lk) { return redlock__usable(lk) && lk->_state == REDLOCK_STATE_HELD; }
/* ... with something that runs out (an adopted token has no validity
   until an extend starts: that sets an upper bound) */
static int held_valid(const redlock_lock *lk) { return held_inside(lk) && lk->_valid_until != REDLOCK_NO_DEADLINE; }

/* Too many nodes refuse this client's TLS, AUTH or SELECT for a quorum. */
static int refuses_quorum(const client *c) {
    int refused = 0, n;
    for (n = 0; n < W->nn; n++) refused += (c->refused_mask >> n) & 1;
    return W->nn - refused < W->nn / 2 + 1;
}

/* What an acquire of such a client ends with (redlock.h section 4): TLS
   for TLS refusals, CONFIG for AUTH and SELECT. */
static int refused_status(const client *c) { return c->refusal == REDLOCK_ERR_TLS ? REDLOCK_ERR_TLS : REDLOCK_ERR_CONFIG; }

/* How long after an attempt a notification started, the next one may
   start (redlock.h section 10): a share of the retry delay. */
static int64_t wake_gap_us(const client *c) { return c->retry_delay_ms * 1000 / REDLOCK_WAKES_PER_DELAY; }

/* Contract checks on what the core reports: validity exactly as documented,
   retry delays inside their jitter, attempts not before their delay,
   renewals on their cadence, LOST reasons from the documented set. */
static void check_event(client *c, slot *s, const redlock_event *ev) {
    int64_t now = local_of(c, W->now), start = now - ev->elapsed_us;
    /* an upgrade's or a downgrade's rounds (and the settle of a failed
       upgrade) take or hold back renewals: their cadence is not checkable */
    if (ev->op == REDLOCK_OP_UPGRADE || ev->op == REDLOCK_OP_DOWNGRADE) s->cadence_gen = c->fault_gen - 1;
    switch (ev->type) {
    case REDLOCK_EV_ACQUIRED:
        if (redlock_lock_valid_until(&s->lk) != start + s->ttl_ms * 1000 - drift_us(c, s->ttl_ms))
            violation(W, "acquired: validity is not round start + ttl - drift", c->id);
        s->round_start = start;
        s->round_done = now;
        s->cadence_gen = c->fault_gen;
        s->ext_ttl_ms = 0;
        s->renew_retry = 0;
        s->first_renewal = 1;
        s->held_since = now; /* the core's acquired_at: the cap counts from here */
        s->renewals = 0;
        s->user_bound = 0;
        break;
    case REDLOCK_EV_RENEWED: {
        int64_t ttl = s->ext_ttl_ms ? s->ext_ttl_ms : s->ttl_ms;
        if (redlock_lock_valid_until(&s->lk) != start + ttl * 1000 - drift_us(c, ttl)) {
            char what[160];
            snprintf(what, sizeof what, "renewed: validity %lld, not round start + ttl %lld - drift = %lld",
                     (long long)(redlock_lock_valid_until(&s->lk) - start), (long long)ttl,
                     (long long)(ttl * 1000 - drift_us(c, ttl)));
            violation(W, what, c->id);
        }
        if (!s->ext_ttl_ms) {
            /* an automatic renewal starts only inside the hold's cap (the
               core counts renewals the model cannot see, an upgrade's
               attempts: it has at least as many) */
            if (s->max_extensions > 0 && s->renewals >= s->max_extensions)
                violation(W, "a renewal after max_extensions renewals", c->id);
            if (s->max_hold_us > 0 && start - s->held_since >= s->max_hold_us)
                violation(W, "a renewal began after max_hold_ms", c->id);
        }
        s->renewals++;
        /* the user's extend renews for its ttl from its round's start,
           which is its call, or later if the round waited for its turn
           (section 5, Turns): no later than this answer */
        if (s->ext_ttl_ms && now + ttl * 1000 > s->user_bound) s->user_bound = now + ttl * 1000;
        if (!s->ext_ttl_ms && s->round_start) {
            /* a watchdog renewal: never early (the first after an acquire
               by its share of the spread, up to 1/16 of the cadence), and
               on time unless a fault, a failed round or a user's extend
               came between */
            int64_t early = s->first_renewal ? s->renew_every_us / 16 : 0;
            if (!s->renew_retry && start < s->round_start + s->renew_every_us - early)
                violation(W, "renewal before its time", c->id);
            int64_t due = s->round_start + s->renew_every_us;
            if (due < s->round_done) due = s->round_done; /* the last round outlasted the cadence */
            /* (a client whose turns can all be taken may hold a renewal
               back until one is free) */
            if (s->cadence_gen == c->fault_gen && c->max_rounds >= c->ns && start > due + 5) {
                char what[160];
                snprintf(what, sizeof what, "renewal %lld us after the last round, cadence %lld",
                         (long long)(start - s->round_start), (long long)s->renew_every_us);
                violation(W, what, c->id);
            }
        }
        s->round_start = start;
        s->round_done = now;
        s->cadence_gen = s->ext_ttl_ms ? c->fault_gen - 1 : c->fault_gen;
        s->ext_ttl_ms = 0; /* the user's extend, if any, is over */
        s->renew_retry = 0;
        s->first_renewal = 0;
        break;
    }
    case REDLOCK_EV_RENEW_FAILED:
        s->cadence_gen = c->fault_gen - 1;
        s->ext_ttl_ms = 0;
        s->renew_retry = 1; /* the next round comes sooner: min(retry delay, validity left / 3) */
        break;
    case REDLOCK_EV_RETRY: {
        int64_t base = c->retry_delay_ms * 1000, jit = c->retry_jitter_ms > 0 ? c->retry_jitter_ms * 1000 : 0;
        if (ev->op == REDLOCK_OP_UPGRADE) { /* an upgrade's attempts (every min(delay, cadence)) renew the hold */
            s->cadence_gen = c->fault_gen - 1;
            break;
        }
        if (s->due_at && now < s->due_at) {
            /* a notification's attempt lost before the retry was due: that
               retry keeps its time, and no retry is spent */
            if (now + ev->delay_us != s->due_at)
                violation(W, "a notification's lost attempt moved the retry that was due", c->id);
            W->woke_lost++;
            s->retry_planned = 1;
            break;
        }
        if (s->last_try) violation(W, "a retry after the last try before the wait deadline", c->id);
        if (++s->spent > s->retries) violation(W, "more retries than retry_count", c->id);
        /* a waiting acquire that lost to restarted nodes retries no sooner
           than one of them counts again: at most a restart bound later */
        if (ev->status == REDLOCK_ERR_RESTARTED && s->waits && restart_bound_us(c, s) > jit) jit = restart_bound_us(c, s);
        if (ev->delay_us < (base - jit > 0 ? base - jit : 0) || ev->delay_us > base + jit) {
            /* only the last try before a wait deadline comes sooner */
            if (!s->waits || ev->delay_us < 0 || ev->delay_us > base + jit)
                violation(W, "retry delay outside retry_delay +- jitter", c->id);
            s->last_try = 1;
        }
        s->due_at = now + ev->delay_us;
        s->retry_planned = 1;
        break;
    }
    case REDLOCK_EV_ATTEMPT:
        if (ev->attempt > 1 && s->due_at && now < s->due_at) { /* before its retry: a notification's */
            if (!s->woken) violation(W, "attempt before its retry delay", c->id);
            if (s->woke_at >= 0 && now < s->woke_at + wake_gap_us(c))
                violation(W, "notifications started attempts faster than the rate limit", c->id);
            s->woke_at = now;
            W->woke++;
        }
        s->woken = 0;
        if (ev->attempt == 1) {
            s->last_try = 0;
            s->acquire_gen = c->fault_gen;
            s->retry_planned = 0;
            s->spent = 0;
            s->due_at = 0;
            s->woke_at = -1;
        } else if (refuses_quorum(c) && c->fault_gen == s->acquire_gen) {
            /* the undo of the last attempt heard every refusal first */
            violation(W, "retried although too few nodes accept this client", c->id);
        }
        break;
    case REDLOCK_EV_LOST:
        if (ev->status != REDLOCK_ERR_EXPIRED && ev->status != REDLOCK_ERR_STOLEN &&
            ev->status != REDLOCK_ERR_QUORUM_LOST && ev->status != REDLOCK_ERR_TRANSPORT &&
            !(ev->status == REDLOCK_ERR_HOLD_LIMIT && s->capped) && !(ev->status == REDLOCK_ERR_REPLICAS && c->waits_replicas))
            violation(W, "lost with a reason outside the documented set", c->id);
        if (ev->status == REDLOCK_ERR_TRANSPORT && !s->watchdog) violation(W, "lost to transport without a watchdog", c->id);
        s->ext_ttl_ms = 0;
        break;
    default:
        break;
    }
}

static int slot_of(client *c, const redlock_lock *lk);

/* The core's listen callback: calls come in on / off pairs, on only for an
   acquire that waits for its next attempt. */
static void cb_listen(void *u, redlock_lock *lk, int on) {
    client *c = (client *)u;
    int k = slot_of(c, lk);
    if (k < 0) { violation(W, "listen for a lock that is not the client's", c->id); return; }
    if (c->s[k].listening == on) violation(W, on ? "listen(on) twice" : "listen(off) without listen(on)", c->id);
    if (on && !redlock_lock_waiting(lk)) violation(W, "listen(on) for a lock that does not wait", c->id);
    {   /* the channel a transport subscribes to names the lock's own key */
        size_t len;
        const char *key = redlock_lock_key(lk, &len);
        if (len != strlen(key_names[c->s[k].key]) || memcmp(key, key_names[c->s[k].key], len) != 0)
            violation(W, "redlock_lock_key names another key", c->id);
    }
    c->s[k].listening = on;
}

/* Is some lock of c listening to key k? */
static int listens_to(const client *c, int k) {
    int j;
    for (j = 0; j < c->ns; j++)
        if (c->s[j].inited && c->s[j].key == k && c->s[j].listening) return 1;
    return 0;
}

/* EV_NODE_RESTARTED comes only from what the transport just told the core
   of that node (redlock.h section 4, Restarts): a run_id other than the
   last one told (from now), a first sight of a server that does not keep
   keys across restarts (from its start: now - uptime), a failover (now). */
static void check_restarted(client *c, const redlock_event *ev) {
    int n = ev->node;
    if (ev->lock || n != c->telling) {
        violation(W, "a node reported restarted outside the transport's calls about it", c->id);
        return;
    }
    if (ev->mode > 0 && ev->mode < 4 && (ev->mode != REDLOCK_RESTART_UPTIME || ev->elapsed_us < W->max_ttl_ms * 1000))
        W->reported[ev->mode]++;
    switch (ev->mode) {
    case REDLOCK_RESTART_FAILOVER:
        if (!c->telling_failover || ev->elapsed_us != c->telling_ago_ms * 1000)
            violation(W, "a failover reported wrongly (or not from when it was)", c->id);
        break;
    case REDLOCK_RESTART_RUN_ID:
        if (c->telling_failover || !c->told_run[n] || c->telling_run == c->told_run[n] || ev->elapsed_us != 0)
            violation(W, "a new run_id reported wrongly (or not from now)", c->id);
        break;
    case REDLOCK_RESTART_UPTIME:
        /* from its start as the INFO dates it: up to a second later than
           now - uptime_in_seconds (two whole-second readings), never sooner */
        if (c->telling_failover || c->told.durable || ev->elapsed_us > c->told.uptime_s * 1000000 ||
            ev->elapsed_us < (c->told.uptime_s - 1) * 1000000)
            violation(W, "a young server reported wrongly (durable, or not from its start)", c->id);
        break;
    default:
        violation(W, "a node restarted for no documented reason", c->id);
    }
}

/* ---- the statistics' model ---- */

static uint32_t books_held(const client *c) {
    uint32_t n = 0;
    int k;
    for (k = 0; k < c->ns; k++) n += c->s[k].inited && c->s[k].stat_held;
    return n;
}
static void books_hold(client *c, slot *s) {
    s->stat_held = 1;
    s->holds++;
    c->bk.touched = 1;
    if (books_held(c) > c->bk.held_max) c->bk.held_max = books_held(c);
}
/* The caller learns its hold ended, and why. */
static void books_loss(client *c, slot *s, int reason) {
    if (!s->stat_held) return;
    s->stat_held = 0;
    c->bk.lost++;
    if (reason == REDLOCK_ERR_EXPIRED) c->bk.expired++;
    else if (reason == REDLOCK_ERR_STOLEN) c->bk.stolen++;
    else if (reason == REDLOCK_ERR_QUORUM_LOST) c->bk.quorum++;
    else if (reason == REDLOCK_ERR_HOLD_LIMIT) c->bk.hold_limit++;
    else c->bk.lost_other++;
}
/* Before a handle is deinitialised (or initialised again): a hold that
   reads LOST, not yet reported, was lost; any other hold simply ends. */
static void books_drop(client *c, slot *s) {
    if (s->stat_held && redlock_lock_state(&s->lk) == REDLOCK_STATE_LOST) books_loss(c, s, redlock_lock_lost_reason(&s->lk));
    s->stat_held = 0;
    c->bk.touched = 1;
}
static void books_result(client *c, slot *s, const redlock_result *r) {
    books *b = &c->bk;
    if (r->op == REDLOCK_OP_ACQUIRE) {
        switch (r->status) {
        case REDLOCK_OK: b->acquired++; books_hold(c, s); break;
        case REDLOCK_ERR_LOCKED: b->busy++; break;
        case REDLOCK_ERR_TIMEOUT: b->timeout++; break;
        case REDLOCK_ERR_CANCELLED: b->cancelled++; break;
        case REDLOCK_ERR_NO_QUORUM: case REDLOCK_ERR_VALIDITY: case REDLOCK_ERR_CONFIG: case REDLOCK_ERR_OVERLOADED:
        case REDLOCK_ERR_TLS: case REDLOCK_ERR_NO_SCRIPTING: case REDLOCK_ERR_NOPERM: case REDLOCK_ERR_EVICTING:
        case REDLOCK_ERR_RESTARTED: case REDLOCK_ERR_REPLICAS: b->no_quorum++; break;
        default: b->acquire_other++; break;
        }
    } else if (r->op == REDLOCK_OP_LOST) {
        books_loss(c, s, r->status);
    } else if (r->op <= REDLOCK_OP_DOWNGRADE) {
        if (r->status == REDLOCK_OK) b->ok[r->op]++;
        else b->failed[r->op]++;
        /* an extend or upgrade that finds the lock gone says so first: the
           LOST result follows unless this callback moves on */
        if ((r->op == REDLOCK_OP_EXTEND || r->op == REDLOCK_OP_UPGRADE) && redlock_lock_state(&s->lk) == REDLOCK_STATE_LOST)
            books_loss(c, s, r->status);
    }
}
/* The client's statistics agree with the books: `held` at every step,
   every count at the end of a schedule. */
static void books_check(world *w, client *c, int all) {
    redlock_stats st;
    const books *b = &c->bk;
    char what[160];
    int n;
    c->bk.touched = 0;
    if (b->blind) return;
    if (redlock_client_stats(&c->rc, &st) != REDLOCK_OK) { violation(w, "redlock_client_stats refused", c->id); return; }
    if (st.held != books_held(c)) {
        snprintf(what, sizeof what, "stats: held %u, the caller holds %u", (unsigned)st.held, (unsigned)books_held(c));
        violation(w, what, c->id);
    }
    if (!all) return;
#define BOOKS_AGREE(field, model)                                                                                   \
    if (st.field != (model)) {                                                                                     \
        snprintf(what, sizeof what, "stats: " #field " %llu, the caller saw %llu", (unsigned long long)st.field,   \
                 (unsigned long long)(model));                                                                     \
        violation(w, what, c->id);                                                                                 \
    }
    BOOKS_AGREE(held_max, b->held_max)
    BOOKS_AGREE(acquires, b->acquires)
    BOOKS_AGREE(attempts, b->attempts)
    BOOKS_AGREE(acquired, b->acquired)
    BOOKS_AGREE(acquire_busy, b->busy)
    BOOKS_AGREE(acquire_timeout, b->timeout)
    BOOKS_AGREE(acquire_no_quorum, b->no_quorum)
    BOOKS_AGREE(acquire_cancelled, b->cancelled)
    BOOKS_AGREE(acquire_other, b->acquire_other)
    BOOKS_AGREE(acquire_us.count, b->acquired)
    BOOKS_AGREE(releases, b->ok[REDLOCK_OP_RELEASE])
    BOOKS_AGREE(release_failed, b->failed[REDLOCK_OP_RELEASE])
    BOOKS_AGREE(extends, b->ok[REDLOCK_OP_EXTEND])
    BOOKS_AGREE(extend_failed, b->failed[REDLOCK_OP_EXTEND])
    BOOKS_AGREE(upgrades, b->ok[REDLOCK_OP_UPGRADE])
    BOOKS_AGREE(upgrade_failed, b->failed[REDLOCK_OP_UPGRADE])
    BOOKS_AGREE(downgrades, b->ok[REDLOCK_OP_DOWNGRADE])
    BOOKS_AGREE(downgrade_failed, b->failed[REDLOCK_OP_DOWNGRADE])
    BOOKS_AGREE(lost, b->lost)
    BOOKS_AGREE(lost_expired, b->expired)
    BOOKS_AGREE(lost_stolen, b->stolen)
    BOOKS_AGREE(lost_quorum, b->quorum)
    BOOKS_AGREE(lost_hold_limit, b->hold_limit)
    BOOKS_AGREE(lost_other, b->lost_other)
#undef BOOKS_AGREE
    for (n = 0; n < w->nn; n++) {
        uint64_t sum = 0;
        int k;
        for (k = 0; k < REDLOCK_NODE_FAIL_CLASSES; k++) sum += st.node_failures[n][k];
        if (sum != b->node_failures[n]) {
            snprintf(what, sizeof what, "stats: %llu failed votes of node %d, the caller saw %llu", (unsigned long long)sum,
                     n, (unsigned long long)b->node_failures[n]);
            violation(w, what, c->id);
        }
    }
}

static void cb_event(void *u, const redlock_event *ev) {
    client *c = (client *)u;
    int k = slot_of(c, ev->lock);
    if (ev->type == REDLOCK_EV_ATTEMPT) c->bk.attempts++;
    /* a failed vote: against, not because another holds the key, with an error */
    if (ev->type == REDLOCK_EV_VOTE && !ev->vote && !ev->held_by_other && ev->status < 0) c->bk.node_failures[ev->node]++;
    if (ev->type == REDLOCK_EV_NODE_RESTARTED) check_restarted(c, ev);
    if (ev->type == REDLOCK_EV_VOTE && ev->status == REDLOCK_ERR_RESTARTED) W->discounted++;
    if (k >= 0) check_event(c, &c->s[k], ev);
    if (ev->type == REDLOCK_EV_ACQUIRED) W->acquired_events++;
    /* a node that failed or timed out may keep a key the core meant to
       delete (one that refuses the client never had it; one whose grant
       did not count because it evicts answered, and is released as any) */
    if (ev->type == REDLOCK_EV_VOTE && ev->status != 0 && ev->status != REDLOCK_ERR_AUTH &&
        ev->status != REDLOCK_ERR_SELECT && ev->status != REDLOCK_ERR_TLS && ev->status != REDLOCK_ERR_EVICTING &&
        ev->status != REDLOCK_ERR_RESTARTED)
        fault((client *)u);
    /* the core says it leaves a key to expire (check-then-act nodes): the
       documented exception, not held to the leak check */
    if (ev->type == REDLOCK_EV_KEY_LEFT) {
        int t = token_find(W, redlock_lock_token(ev->lock), REDLOCK_TOKEN_LEN);
        if (t >= 0) W->tokens[t].excused = 1;
    }
}
static void cb_timer(void *u, int64_t deadline) {
    client *c = (client *)u;
    event e;
    int k;
    c->timer_gen++;
    c->late_call = 0;
    if (deadline == REDLOCK_NO_DEADLINE) return;
    for (k = 0; k < c->ns; k++)
        if (held_valid(&c->s[k].lk) && deadline > c->s[k].lk._valid_until)
            violation(W, "timer armed past validity", c->id);
    memset(&e, 0, sizeof e);
    e.kind = E_TIMER;
    e.c = c->id;
    e.gen = c->timer_gen;
    e.t = true_of(c, deadline);
    if (e.t < W->now) e.t = W->now;
    /* a busy event loop: locks that ran out read LOST meanwhile, and calls
       on them (deinit too) come before the timer call that reports it */
    if (c->late_loop && rng_chance(&W->rng, 0.3)) {
        e.t += rng_range(&W->rng, 1, 3000);
        c->late_call = e.t;
    }
    push(W, e);
}

static int faults_on(const world *w) { return w->p->faults && !w->stopping; }

/* The longest one-way delay without faults (us). */
#define MAX_CALM_DELAY 800
static int64_t net_delay(world *w, client *c) {
    int64_t d = rng_range(&w->rng, 30, MAX_CALM_DELAY);
    if (faults_on(w) && rng_chance(&w->rng, w->spike)) {
        d += rng_range(&w->rng, 1000, c->node_timeout_ms * 1500);
        fault(c);
    }
    return d;
}

/* The token in a legacy value "expiry:token", or NULL. */
static const char *legacy_token(const char *val, size_t len) {
    const char *colon = (const char *)memchr(val, ':', len);
    return colon && len - (size_t)(colon + 1 - val) == REDLOCK_TOKEN_LEN ? colon + 1 : NULL;
}
static void set_unanswered(client *c, int n, const char *tok, int on) {
    int k, free_k = -1;
    for (k = 0; k < 8; k++) {
        if (c->unanswered[n][k][0] && memcmp(c->unanswered[n][k], tok, REDLOCK_TOKEN_LEN) == 0) {
            if (!on) c->unanswered[n][k][0] = 0;
            return;
        }
        if (!c->unanswered[n][k][0] && free_k < 0) free_k = k;
    }
    if (on) memcpy(c->unanswered[n][free_k < 0 ? 0 : free_k], tok, REDLOCK_TOKEN_LEN);
}
static int is_unanswered(const client *c, int n, const char *tok) {
    int k;
    for (k = 0; k < 8; k++)
        if (c->unanswered[n][k][0] && memcmp(c->unanswered[n][k], tok, REDLOCK_TOKEN_LEN) == 0) return 1;
    return 0;
}

/* An extend command: an extend script (EVALSHA / EVAL, plain or
   reentrant), or PEXPIRE or a GETSET (nodes without scripts, legacy). */
static int arg_is(const redlock_command *cmd, int i, const char *s) {
    return i < cmd->argc && cmd->argvlen[i] == strlen(s) && memcmp(cmd->argv[i], s, cmd->argvlen[i]) == 0;
}
static int is_extend(const redlock_command *cmd) {
    return arg_is(cmd, 1, SHA_EXTEND) || arg_is(cmd, 1, SHA_REXTEND) || arg_is(cmd, 1, redlock_extend_script()) ||
           arg_is(cmd, 1, redlock_reentrant_extend_script()) || arg_is(cmd, 0, "PEXPIRE") || arg_is(cmd, 0, "GETSET");
}

/* A release script's publish flag (the argument after the token; a
   reentrant one's after owner and token), or NULL when it has none (an
   undo) or the command is no release script. */
static const char *release_flag(const redlock_command *cmd, size_t *len) {
    int at = arg_is(cmd, 1, SHA_RELEASE) || arg_is(cmd, 1, redlock_release_script()) || arg_is(cmd, 1, SHA_RWRELEASE) ||
                     arg_is(cmd, 1, redlock_rw_release_script())
                 ? 5
             : arg_is(cmd, 1, SHA_RRELEASE) || arg_is(cmd, 1, redlock_reentrant_release_script()) ? 6
                                                                                                   : -1;
    if (at < 0 || cmd->argc != at + 1) return NULL;
    *len = cmd->argvlen[at];
    return cmd->argv[at];
}

/* A release call: what the transport refuses from now on belongs to it. */
static int sim_release(slot *s) {
    int before = s->release_queue_full, rc;
    unsigned holds = s->holds;
    s->release_queue_full = 0;
    /* a hold ends at the call (whose result, and what its callback does,
       may come inside it); one that reads LOST is first reported so, but
       not inside its own callback: then the release goes ahead */
    if (redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD) s->stat_held = 0;
    rc = redlock_release(&s->lk);
    if (rc != REDLOCK_OK) s->release_queue_full |= before; /* refused: the running release keeps it */
    else if (s->holds == holds) s->stat_held = 0;
    return rc;
}

/* White box: the lock of c whose id a tag carries, or NULL. */
static slot *slot_of_tag(client *c, redlock_tag tag) {
    int k;
    for (k = 0; k < c->ns; k++)
        if (c->s[k].inited && c->s[k].lk._id == redlock__tag_lock_id(tag)) return &c->s[k];
    return NULL;
}

/* Does that lock wait for exactly this tag on node n (so that the core will
   take the answer, not drop it as stale)? */
static int awaited(client *c, int n, redlock_tag tag) {
    const slot *s = slot_of_tag(c, tag);
    return s && s->lk._node[n].seq == redlock__tag_seq(tag) && redlock__n_awaited(&s->lk._node[n]);
}

/* The check-then-act DEL of a legacy node acts on what GET showed; if the
   same token's GETSET there is still unanswered, that value may have
   replaced another holder's (a lost takeover race): never delete then. */
static void check_del(world *w, client *c, int n, redlock_tag tag) {
    const slot *s = slot_of_tag(c, tag);
    if (s && is_unanswered(c, n, redlock_lock_token(&s->lk)))
        violation(w, "DEL on a node whose GETSET of the same token is unanswered", c->id);
}

static int cb_send(void *u, int n, const redlock_command *cmd, redlock_tag tag) {
    client *c = (client *)u;
    world *w = W;
    event e;
    msg *m;
    int i;
    if (redlock_tag_node(tag) != n) violation(w, "tag names another node", c->id);
    if (cmd->argc == 3 && cmd->argvlen[0] == 6 && memcmp(cmd->argv[0], "GETSET", 6) == 0) {
        const char *tok = legacy_token(cmd->argv[2], cmd->argvlen[2]);
        if (tok) set_unanswered(c, n, tok, 1);
    }
    if (cmd->argc == 2 && cmd->argvlen[0] == 3 && memcmp(cmd->argv[0], "DEL", 3) == 0) check_del(w, c, n, tag);
    {   /* a release publishes as the node was last said to want (sharded or not) */
        size_t flen = 0;
        const char *flag = release_flag(cmd, &flen);
        int sharded = (c->sharded_mask >> n) & 1u;
        if (flag && !(flen == 1 && flag[0] == '2') && !(flen == 1 && flag[0] == (sharded ? 's' : '1')))
            violation(w, sharded ? "a release on a node told sharded does not SPUBLISH (flag \"s\")"
                                 : "a release on a node not told sharded does not PUBLISH (flag \"1\")", c->id);
    }
    memset(&e, 0, sizeof e);
    e.c = c->id;
    e.n = n;
    e.tag = tag;
    if (!w->nodes[n].up) {  /* connection refused (every other connection: reset, to the core the same) */
        e.kind = E_ERR;
        e.status = c->conn_epoch[n] & 1 ? REDLOCK_ERR_TRANSPORT : REDLOCK_ERR_CONNECT;
        e.t = w->now + rng_range(&w->rng, 10, 200);
        e.epoch = c->conn_epoch[n];
        fault(c);
        push(w, e);
        return 0;
    }
    if (c->refused_mask & (1u << n)) {
        /* a misconfigured client: refused at once by send, later by the
           transport, or by the server's NOAUTH error reply (not over a
           TLS refusal: no command gets through) */
        int64_t when = w->now + rng_range(&w->rng, 10, 2000);
        int how = (int)rng_range(&w->rng, 0, c->refusal == REDLOCK_ERR_TLS ? 1 : 2);
        if (how == 0) return c->refusal;
        if (when <= c->last_rep[n]) when = c->last_rep[n] + 1;
        c->last_rep[n] = when;
        e.t = when;
        e.epoch = c->conn_epoch[n];
        if (how == 1) {
            e.kind = E_ERR;
            e.status = c->refusal;
        } else {
            static const char noauth[] = "NOAUTH Authentication required.";
            m = (msg *)calloc(1, sizeof *m);
            m->rstr = (char *)malloc(sizeof noauth);
            memcpy(m->rstr, noauth, sizeof noauth);
            m->reply.type = REDLOCK_REPLY_ERROR;
            m->reply.len = sizeof noauth - 1;
            e.kind = E_REP;
            e.m = m;
        }
        push(w, e);
        return 0;
    }
    if (faults_on(w) && rng_chance(&w->rng, w->reset)) {
        /* connection reset: everything in flight on it fails now */
        c->conn_epoch[n]++;
        fault(c);
        return REDLOCK_ERR_TRANSPORT;
    }
    if (faults_on(w) && rng_chance(&w->rng, w->drop)) { fault(c); return 0; } /* lost: the core times out */
    if (faults_on(w) && rng_chance(&w->rng, w->queue_full)) {  /* not sent: the queue is full */
        slot *s = slot_of_tag(c, tag);
        if (s) s->queue_full = s->release_queue_full = 1;
        fault(c);
        return REDLOCK_ERR_QUEUE_FULL;
    }
    m = (msg *)calloc(1, sizeof *m);
    m->extend_of = -1;
    if (is_extend(cmd)) {  /* followed until it lands or is lost: see sim_adopt */
        slot *s = slot_of_tag(c, tag);
        if (s && s->token >= 0) w->tokens[m->extend_of = s->token].extends_out++;
    }
    m->argc = cmd->argc;
    {   /* the arguments, NUL-terminated, in one block */
        size_t total = 0, off = 0;
        for (i = 0; i < cmd->argc; i++) total += cmd->argvlen[i] + 1;
        m->args = (char *)malloc(total ? total : 1);
        for (i = 0; i < cmd->argc; i++) {
            m->argv[i] = m->args + off;
            memcpy(m->argv[i], cmd->argv[i], cmd->argvlen[i]);
            m->argv[i][cmd->argvlen[i]] = 0;
            m->argvlen[i] = cmd->argvlen[i];
            off += cmd->argvlen[i] + 1;
        }
    }
    if (c->told_epoch[n] != c->conn_epoch[n] + 1) {
        /* a new connection: the transport's INFO goes out first, and its
           answer comes back before the replies behind it (one connection,
           in order); never lost alone (a transport waits for it) */
        event info;
        memset(&info, 0, sizeof info);
        info.kind = E_INFO;
        info.c = c->id;
        info.n = n;
        info.epoch = c->conn_epoch[n];
        info.t = w->now + net_delay(w, c);
        if (info.t <= c->last_req[n]) info.t = c->last_req[n] + 1;
        c->last_req[n] = info.t;
        push(w, info);
        c->told_epoch[n] = c->conn_epoch[n] + 1;
    }
    e.kind = E_REQ;
    e.m = m;
    e.epoch = c->conn_epoch[n];
    e.t = w->now + net_delay(w, c);
    if (e.t <= c->last_req[n]) e.t = c->last_req[n] + 1;
    c->last_req[n] = e.t;
    push(w, e);
    return 0;
}

/* ---- token records (for the leak check) ---- */
static int token_find(world *w, const char *tok, size_t len) {
    int i;
    if (len != REDLOCK_TOKEN_LEN) return -1;
    for (i = w->ntokens - 1; i >= 0; i--)
        if (memcmp(w->tokens[i].tok, tok, len) == 0) return i;
    return -1;
}
/* The token part of a stored value: the value itself, or after "expiry:". */
static const char *value_token(const entry *e, size_t *len) {
    const char *colon = (const char *)memchr(e->val, ':', e->vlen);
    if (!colon) { *len = e->vlen; return e->val; }
    *len = e->vlen - (size_t)(colon + 1 - e->val);
    return colon + 1;
}
/* A legacy value's expiry, or -1. */
static int64_t value_expiry(const entry *e) {
    const char *colon = (const char *)memchr(e->val, ':', e->vlen);
    return colon ? atoll(e->val) : -1;
}

/* ---- simulated redis ---- */
static int entry_live(world *w, entry *e) {
    if (e->used && e->expire_at >= 0 && w->now >= e->expire_at) e->used = 0;
    return e->used;
}
static entry *find_key(node *nd, const char *key) {
    int k;
    for (k = 0; k < MAX_KEYS; k++)
        if (strcmp(key, key_names[k]) == 0) return &nd->e[k];
    return NULL;
}
static void reply_status(msg *m, const char *s) {
    m->reply.type = REDLOCK_REPLY_STATUS; m->rstr = strdup(s); m->reply.len = strlen(s);
}
static void reply_error(msg *m, const char *s) {
    m->reply.type = REDLOCK_REPLY_ERROR; m->rstr = strdup(s); m->reply.len = strlen(s);
}
static void reply_int(msg *m, long long v) { m->reply.type = REDLOCK_REPLY_INTEGER; m->reply.integer = v; }
static void reply_str(msg *m, const char *s, size_t len) {
    m->reply.type = REDLOCK_REPLY_STRING;
    m->rstr = (char *)malloc(len + 1);
    memcpy(m->rstr, s, len);
    m->rstr[len] = 0;
    m->reply.len = len;
}
static void set_val(entry *e, const char *v, size_t len, int64_t expire_at) {
    e->hash = 0;
    if (len > sizeof e->val) len = sizeof e->val;
    memcpy(e->val, v, len);
    e->vlen = len;
    e->used = 1;
    e->expire_at = expire_at;
    e->raced = 0;
}
static int is(const msg *m, int i, const char *s) {
    return i < m->argc && m->argv[i][0] == s[0] && strcmp(m->argv[i], s) == 0;
}

/* A release script deleted key k on node nd and PUBLISHed: every listening
   client hears it, each after its own delay, maybe late, twice or never
   (and maybe before the releaser's own reply). */
static void publish(world *w, const node *nd, const entry *e) {
    int i, k = (int)(e - nd->e);
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        event ev;
        /* to the clients that listen to k; a few others hear it too (a
           subscription kept a little longer, a key shared with another lock) */
        if (!c->listens || (!listens_to(c, k) && !rng_chance(&w->rng, 0.2))) continue;
        if (faults_on(w) && rng_chance(&w->rng, w->drop)) continue; /* lost: the delay covers it */
        memset(&ev, 0, sizeof ev);
        ev.kind = E_WAKE;
        ev.c = i;
        ev.n = k;
        ev.t = w->now + net_delay(w, c);
        push(w, ev);
        if (faults_on(w) && rng_chance(&w->rng, w->dup)) {
            ev.t += rng_range(&w->rng, 0, 3000);
            push(w, ev);
        }
    }
}

static void run_script(world *w, const node *nd, entry *e, msg *m, int which) {
    /* argv: EVAL(SHA) x 1 key token [ttl | publish flag] */
    int live = entry_live(w, e);
    if (live && e->hash) { reply_error(m, "WRONGTYPE Operation against a key holding the wrong kind of value"); return; }
    int ours = live && e->vlen == m->argvlen[4] && memcmp(e->val, m->argv[4], e->vlen) == 0;
    if (which == 0) {
        if (ours) {
            e->used = 0;
            reply_int(m, 1);
            if (m->argc > 5) publish(w, nd, e); /* a release, not an undo */
        } else {
            reply_int(m, 0);
        }
    } else {
        if (ours) { e->expire_at = w->now + atoll(m->argv[5]) * 1000; reply_int(m, 1); }
        else reply_int(m, live ? -1 : 0);
    }
}

/* The reentrant scripts, as redlock.h's Lua does them. argv: EVAL(SHA) x 1
   key owner token [ttl]; which: 2 acquire, 3 release, 4 extend. */
static int hash_find(const entry *e, const char *tok) {
    int i;
    for (i = 0; i < e->ntoks; i++)
        if (strcmp(e->toks[i], tok) == 0) return i;
    return -1;
}
static void hash_count_check(world *w, const entry *e, int c) {
    if (e->count < 0) violation(w, "a reentrant count went below zero", c);
    else if (e->count != e->ntoks) violation(w, "a reentrant count differs from the owner's entries", c);
}
/* A new reentrant hash of owner with one entry, living ttl_us. */
static void hash_create(world *w, entry *e, const char *owner, const char *tok, int64_t ttl_us) {
    memset(e, 0, sizeof *e);
    e->used = e->hash = 1;
    snprintf(e->owner, sizeof e->owner, "%s", owner);
    e->count = e->ntoks = 1;
    memcpy(e->toks[0], tok, REDLOCK_TOKEN_LEN + 1);
    e->expire_at = w->now + ttl_us;
}
/* The owner's entry tok added (once), the key's life at least ttl_us; 0
   when the hash is full. */
static int hash_enter(world *w, entry *e, const char *tok, int64_t ttl_us, int c) {
    if (hash_find(e, tok) < 0) {
        if (e->ntoks == MAX_ENTRIES) return 0;
        memcpy(e->toks[e->ntoks++], tok, REDLOCK_TOKEN_LEN + 1);
        e->count++;
    }
    if (e->expire_at - w->now < ttl_us) e->expire_at = w->now + ttl_us;
    hash_count_check(w, e, c);
    return 1;
}
static void run_rscript(world *w, const node *nd, entry *e, msg *m, int which, int c) {
    int live = entry_live(w, e), i;
    const char *owner = m->argv[4], *tok = m->argv[5];
    int64_t ttl_us = which != 3 ? atoll(m->argv[6]) * 1000 : 0;
    if (strlen(tok) != REDLOCK_TOKEN_LEN || strlen(owner) > REDLOCK_MAX_OWNER) { reply_error(m, "ERR bad arguments"); return; }
    if (which == 2) {
        if (!live) {
            hash_create(w, e, owner, tok, ttl_us);
            reply_int(m, 1);
            return;
        }
        if (!e->hash || strcmp(e->owner, owner) != 0) { reply_int(m, 0); return; }
        if (!hash_enter(w, e, tok, ttl_us, c)) { reply_error(m, "ERR sim: too many entries"); return; }
        reply_int(m, e->count);
    } else if (which == 3) {
        if (!live || !e->hash || strcmp(e->owner, owner) != 0 || (i = hash_find(e, tok)) < 0) { reply_int(m, 0); return; }
        memcpy(e->toks[i], e->toks[--e->ntoks], REDLOCK_TOKEN_LEN + 1);
        e->count--;
        hash_count_check(w, e, c);
        if (e->count <= 0 && e->ntoks == 0) { /* the last field gone: no key */
            e->used = 0;
            if (m->argc > 6) publish(w, nd, e); /* a release, not an undo */
        }
        reply_int(m, 1);
    } else {
        if (!live) { reply_int(m, 0); return; }
        if (e->hash && strcmp(e->owner, owner) == 0 && hash_find(e, tok) >= 0) {
            if (e->expire_at - w->now < ttl_us) e->expire_at = w->now + ttl_us;
            reply_int(m, 1);
        } else {
            reply_int(m, e->hash && strcmp(e->owner, owner) == 0 ? 0 : -1);
        }
    }
}

/* A fenced lock's scripts: EVAL(SHA) script 2 key counter [owner] token
   ttl|fence. 5: SET NX PX, then INCR the counter; 6: the write-back,
   counter = max(counter, fence) where the key holds the token; 7 and 8:
   the same for a reentrant lock's hash, which keeps its hold's fence (an
   entry added where none is kept counts anew). */
static void run_fscript(world *w, node *nd, entry *e, msg *m, int which, int c) {
    long long *counter = &nd->counter[e - nd->e];
    int reentrant = which >= 7, live = entry_live(w, e);
    const char *owner = reentrant ? m->argv[5] : NULL, *tok = m->argv[reentrant ? 6 : 5];
    long long arg = atoll(m->argv[reentrant ? 7 : 6]);
    char want[REDLOCK_MAX_KEY + 32];
    snprintf(want, sizeof want, "%s%s", REDLOCK_FENCE_PREFIX, m->argv[3]);
    if (m->argc != (reentrant ? 8 : 7) || !is(m, 2, "2") || strcmp(m->argv[4], want) != 0 ||
        strlen(tok) != REDLOCK_TOKEN_LEN || (owner && strlen(owner) > REDLOCK_MAX_OWNER)) {
        reply_error(m, "ERR unexpected fenced script form");
        return;
    }
    if (which == 5) {
        if (live) { reply_int(m, 0); return; }
        set_val(e, tok, REDLOCK_TOKEN_LEN, w->now + arg * 1000);
        reply_int(m, ++*counter);
        return;
    }
    if (which == 7) {
        if (!live) {
            hash_create(w, e, owner, tok, arg * 1000);
            reply_int(m, ++*counter);
            return;
        }
        if (!e->hash || strcmp(e->owner, owner) != 0) { reply_int(m, 0); return; }
        if (!hash_enter(w, e, tok, arg * 1000, c)) { reply_error(m, "ERR sim: too many entries"); return; }
        reply_int(m, e->has_fence ? e->fence : ++*counter);
        return;
    }
    if (which == 6 && live && e->hash) { reply_error(m, "WRONGTYPE Operation against a key holding the wrong kind of value"); return; }
    if (which == 6 ? live && e->vlen == REDLOCK_TOKEN_LEN && memcmp(e->val, tok, REDLOCK_TOKEN_LEN) == 0
                   : live && e->hash && strcmp(e->owner, owner) == 0 && hash_find(e, tok) >= 0) {
        if (*counter < arg) *counter = arg;
        if (which == 8 && (!e->has_fence || e->fence < arg)) { /* only ever raised */
            e->has_fence = 1;
            e->fence = arg;
        }
        reply_int(m, 1);
        return;
    }
    reply_int(m, 0);
}

/* A readers-writer lock's scripts, as redlock.h's Lua does them: 9
   acquire (argv: EVAL(SHA) x 1 key token ttl mode wait), 10 release
   (token [flag]), 11 extend (token ttl). The hash's entries expire on the
   server's clock (here true time, moved by clock jumps as the keys'). */
static int rw_find(const entry *e, const char *tok, int mark) {
    int i;
    for (i = 0; i < e->nrw; i++)
        if ((e->rw[i].mode == 'w') == mark && strcmp(e->rw[i].tok, tok) == 0) return i;
    return -1;
}
static void rw_drop(entry *e, int i) { e->rw[i] = e->rw[--e->nrw]; }
static void rw_put(entry *e, const char *tok, char mode, int64_t exp) {
    int i = rw_find(e, tok, mode == 'w');
    if (i < 0 && e->nrw < MAX_RW) i = e->nrw++;
    if (i < 0) return;
    memcpy(e->rw[i].tok, tok, REDLOCK_TOKEN_LEN + 1);
    e->rw[i].mode = mode;
    e->rw[i].exp = exp;
}
static void run_rwscript(world *w, const node *nd, entry *e, msg *m, int which) {
    int live = entry_live(w, e), i, r = 0;
    const char *tok = m->argv[4];
    if (strlen(tok) != REDLOCK_TOKEN_LEN || m->argc != (which == 9 ? 8 : which == 13 ? 6 : which == 11 || which == 12 ? 7 : m->argc) ||
        (which == 10 && m->argc != 5 && m->argc != 6)) {
        reply_error(m, "ERR unexpected readers-writer script form");
        return;
    }
    if (which == 9) {
        char mode = m->argv[6][0];
        int busy = 0, writer = 0;
        int64_t last = 0, exp;
        if (live && e->hash != 2) { reply_int(m, 0); return; } /* a plain or reentrant lock */
        if (!live) {
            memset(e, 0, sizeof *e);
            e->hash = 2;
        }
        for (i = 0; i < e->nrw; i++) {
            if (e->rw[i].exp <= w->now) { rw_drop(e, i--); continue; }
            if (strcmp(e->rw[i].tok, tok) == 0) continue;
            if (e->rw[i].mode == 'w') writer = 1;
            else if (mode == 'x' || e->rw[i].mode == 'x' || (mode == 'u' && e->rw[i].mode == 'u'))
                busy = !(w->p->ctl_rw == 1 && mode == 's') && !(w->p->ctl_rw == 2 && mode == 'u' && e->rw[i].mode == 'u');
            if (e->rw[i].exp > last) last = e->rw[i].exp;
        }
        if (busy || (mode != 'x' && writer)) {
            if (mode == 'x') {
                exp = w->now + atoll(m->argv[7]) * 1000;
                rw_put(e, tok, 'w', exp);
                if (exp > last) last = exp;
            }
            e->used = e->nrw > 0;
            if (last > w->now) e->expire_at = last;
            reply_int(m, 0);
            return;
        }
        exp = w->now + atoll(m->argv[5]) * 1000;
        rw_put(e, tok, mode, exp);
        if ((i = rw_find(e, tok, 1)) >= 0) rw_drop(e, i);
        e->used = 1;
        e->expire_at = exp > last ? exp : last;
        reply_int(m, 1);
        return;
    }
    if (which == 10) {
        if (!live || e->hash != 2) { reply_int(m, 0); return; }
        if (m->argc == 6 && (i = rw_find(e, tok, 1)) >= 0) rw_drop(e, i);
        if ((i = rw_find(e, tok, 0)) >= 0) { rw_drop(e, i); r = 1; }
        if (e->nrw == 0) e->used = 0;
        if (r && m->argc == 6 && (is(m, 5, "1") || is(m, 5, "s"))) publish(w, nd, e);
        reply_int(m, r);
        return;
    }
    if (which == 12) { /* upgrade: 1 done, 0 others still there (renewed, marked), -1 gone */
        int busy = 0;
        int64_t last = 0, exp;
        if (!live || e->hash != 2 || (i = rw_find(e, tok, 0)) < 0 || (e->rw[i].mode != 'u' && e->rw[i].mode != 'x')) {
            reply_int(m, -1);
            return;
        }
        if (e->rw[i].exp <= w->now) {
            rw_drop(e, i);
            if (e->nrw == 0) e->used = 0;
            reply_int(m, -1);
            return;
        }
        for (i = 0; i < e->nrw; i++) {
            if (e->rw[i].exp <= w->now) { rw_drop(e, i--); continue; }
            if (strcmp(e->rw[i].tok, tok) == 0) continue;
            if (e->rw[i].mode != 'w' && !(w->p->ctl_rw == 3 && e->rw[i].mode == 's')) busy = 1;
            if (e->rw[i].exp > last) last = e->rw[i].exp;
        }
        i = rw_find(e, tok, 0);
        exp = w->now + atoll(m->argv[5]) * 1000;
        e->rw[i].exp = exp;
        if (busy) {
            int64_t mark = w->now + atoll(m->argv[6]) * 1000;
            rw_put(e, tok, 'w', mark);
            if (mark > exp) exp = mark;
        } else {
            e->rw[i].mode = 'x';
            if ((i = rw_find(e, tok, 1)) >= 0) rw_drop(e, i);
        }
        e->expire_at = last > exp ? last : exp;
        reply_int(m, !busy);
        return;
    }
    if (which == 13) { /* set-mode: drops the mark, sets the entry's mode */
        if (!live || e->hash != 2) { reply_int(m, 0); return; }
        if ((i = rw_find(e, tok, 1)) >= 0) rw_drop(e, i);
        if ((i = rw_find(e, tok, 0)) < 0) {
            if (e->nrw == 0) e->used = 0;
            reply_int(m, 0);
            return;
        }
        e->rw[i].mode = m->argv[5][0];
        reply_int(m, 1);
        return;
    }
    if (!live) { reply_int(m, 0); return; }
    if (!e->hash) { reply_int(m, -1); return; }
    if (e->hash != 2 || (i = rw_find(e, tok, 0)) < 0) { reply_int(m, 0); return; }
    { /* renewed only where the entry is at least the holder's mode (s < u < x) */
        static const char ranks[] = "sux";
        if (strchr(ranks, e->rw[i].mode) < strchr(ranks, m->argv[6][0])) { reply_int(m, 0); return; }
    }
    if (e->rw[i].exp <= w->now) {
        rw_drop(e, i);
        if (e->nrw == 0) e->used = 0;
        reply_int(m, 0);
        return;
    }
    e->rw[i].exp = w->now + atoll(m->argv[5]) * 1000;
    if (e->expire_at < e->rw[i].exp) e->expire_at = e->rw[i].exp;
    reply_int(m, 1);
}

/* The lock (tag's high half, white box) that wrote a value with token tok. */
static void note_writer(world *w, const char *val, size_t len, int c, redlock_tag tag) {
    const char *colon = (const char *)memchr(val, ':', len);
    int t = colon ? token_find(w, colon + 1, len - (size_t)(colon + 1 - val)) : token_find(w, val, len);
    if (t >= 0 && w->tokens[t].c == c) w->tokens[t].lock_id = redlock__tag_lock_id(tag);
}

static void execute(world *w, node *nd, msg *m, int c, redlock_tag tag) {
    entry *e = m->argc > 1 ? find_key(nd, m->argv[1]) : NULL;
    if (is(m, 0, "INFO")) {
        reply_str(m, w->p->legacy ? "# Server\r\nredis_version:2.4.17\r\n" : "# Server\r\nredis_version:7.0.15\r\n",
                  strlen("# Server\r\nredis_version:7.0.15\r\n"));
        return;
    }
    if (is(m, 0, "WAIT")) {
        /* cfg.wait_replicas: the node's one replica acknowledges every write
           up to this command (a failover then keeps them); in order after
           the write on the same connection, and lost with it at a failover */
        w->waits++;
        if (rng_chance(&w->rng, 0.1)) { /* the replica lags past the timeout: not acknowledged */
            reply_int(m, 0);
            w->waits_unacked++;
            return;
        }
        memcpy(nd->replica, nd->e, sizeof nd->e);
        memcpy(nd->replica_counter, nd->counter, sizeof nd->counter);
        reply_int(m, 1);
        return;
    }
    if (is(m, 0, "EVALSHA") || is(m, 0, "EVAL")) e = m->argc > 3 ? find_key(nd, m->argv[3]) : NULL;
    if (!e) { reply_error(m, "ERR unexpected command form"); return; }
    if (is(m, 0, "SET")) {
        if (m->argc != 6 || !is(m, 3, "NX") || !is(m, 4, "PX")) { reply_error(m, "ERR unexpected SET form"); return; }
        if (w->p->legacy) { reply_error(m, "ERR syntax error"); return; }
        if (entry_live(w, e)) { m->reply.type = REDLOCK_REPLY_NIL; return; }
        set_val(e, m->argv[2], m->argvlen[2], w->now + atoll(m->argv[5]) * 1000);
        reply_status(m, "OK");
    } else if (is(m, 0, "SETNX")) {
        if (entry_live(w, e)) { reply_int(m, 0); return; }
        set_val(e, m->argv[2], m->argvlen[2], -1);
        reply_int(m, 1);
    } else if (is(m, 0, "GET")) {
        if (entry_live(w, e) && e->hash) reply_error(m, "WRONGTYPE Operation against a key holding the wrong kind of value");
        else if (entry_live(w, e)) reply_str(m, e->val, e->vlen);
        else m->reply.type = REDLOCK_REPLY_NIL;
    } else if (is(m, 0, "GETSET")) {
        int raced = 0;
        if (entry_live(w, e)) {
            reply_str(m, e->val, e->vlen);
            /* it replaced another token's value that was still valid */
            size_t oldlen, newlen = 0;
            const char *old = value_token(e, &oldlen), *colon = (const char *)memchr(m->argv[2], ':', m->argvlen[2]);
            if (colon) newlen = m->argvlen[2] - (size_t)(colon + 1 - m->argv[2]);
            raced = value_expiry(e) > node_wall_ms(w) + 5 && /* beyond the clients' wall offsets */
                    !(colon && oldlen == newlen && memcmp(old, colon + 1, newlen) == 0);
        } else {
            m->reply.type = REDLOCK_REPLY_NIL;
        }
        set_val(e, m->argv[2], m->argvlen[2], -1);
        note_writer(w, m->argv[2], m->argvlen[2], c, tag);
        e->raced = raced;
    } else if (is(m, 0, "DEL")) {
        /* the header: "a node whose GETSET lost a race is never deleted by
           this client"; deleting it frees the node under the race's winner */
        if (entry_live(w, e) && e->raced && value_expiry(e) >= node_wall_ms(w)) {
            size_t len;
            const char *tok = value_token(e, &len);
            int t = token_find(w, tok, len);
            if (t >= 0 && w->tokens[t].c == c && w->tokens[t].lock_id == redlock__tag_lock_id(tag))
                violation(w, "DEL of a value whose GETSET lost a race, by the racer", w->tokens[t].c);
        }
        if (entry_live(w, e)) { e->used = 0; reply_int(m, 1); } else reply_int(m, 0);
    } else if (is(m, 0, "PTTL")) {
        /* rounded up, as a server whose millisecond clock lags ours may say */
        if (!entry_live(w, e)) reply_int(m, -2);
        else reply_int(m, e->expire_at < 0 ? -1 : (e->expire_at - w->now + 999) / 1000);
    } else if (is(m, 0, "PEXPIRE")) {
        if (entry_live(w, e)) { e->expire_at = w->now + atoll(m->argv[2]) * 1000; reply_int(m, 1); }
        else reply_int(m, 0);
    } else if (is(m, 0, "EVALSHA") || is(m, 0, "EVAL")) {
        int sha = is(m, 0, "EVALSHA"), which;
        if (w->p->legacy) { reply_error(m, sha ? "ERR unknown command 'EVALSHA'" : "ERR unknown command 'EVAL'"); return; }
        if (w->p->noscript) { reply_error(m, "NOPERM this user has no permissions to run the 'evalsha' command"); return; }
        if (sha) {
            which = is(m, 1, SHA_RELEASE) ? 0 : is(m, 1, SHA_EXTEND) ? 1 : is(m, 1, SHA_RACQUIRE) ? 2
                    : is(m, 1, SHA_RRELEASE) ? 3 : is(m, 1, SHA_REXTEND) ? 4 : is(m, 1, SHA_FACQUIRE) ? 5
                    : is(m, 1, SHA_FENCE) ? 6 : is(m, 1, SHA_RFACQUIRE) ? 7 : is(m, 1, SHA_RFENCE) ? 8
                    : is(m, 1, SHA_RWACQUIRE) ? 9 : is(m, 1, SHA_RWRELEASE) ? 10 : is(m, 1, SHA_RWEXTEND) ? 11
                    : is(m, 1, SHA_RWUPGRADE) ? 12 : is(m, 1, SHA_RWSETMODE) ? 13 : -1;
            if (which < 0 || (which < 2 && !(which ? nd->sha_extend : nd->sha_release)) ||
                (which >= 2 && !(nd->rsha & (1u << (which - 2))))) {
                /* a script the server had and lost (a restart): a step the core
                   cannot foresee, still owed once another client has loaded it
                   again (a node's first script it foresees: no excuse) */
                if (which == 0 ? nd->lost_release : which == 1 ? nd->lost_extend
                               : which > 1 && (nd->rlost & (1u << (which - 2)))) {
                    int a;
                    for (a = 3; a < m->argc; a++) {
                        int t = token_find(w, m->argv[a], m->argvlen[a]);
                        if (t >= 0) w->tokens[t].noscript = 1;
                    }
                }
                reply_error(m, "NOSCRIPT No matching script.");
                return;
            }
        } else {
            which = is(m, 1, redlock_release_script()) ? 0 : is(m, 1, redlock_extend_script()) ? 1
                    : is(m, 1, redlock_reentrant_acquire_script()) ? 2 : is(m, 1, redlock_reentrant_release_script()) ? 3
                    : is(m, 1, redlock_reentrant_extend_script()) ? 4 : is(m, 1, redlock_fence_acquire_script()) ? 5
                    : is(m, 1, redlock_fence_write_back_script()) ? 6
                    : is(m, 1, redlock_reentrant_fence_acquire_script()) ? 7
                    : is(m, 1, redlock_reentrant_fence_write_back_script()) ? 8
                    : is(m, 1, redlock_rw_acquire_script()) ? 9 : is(m, 1, redlock_rw_release_script()) ? 10
                    : is(m, 1, redlock_rw_extend_script()) ? 11 : is(m, 1, redlock_rw_upgrade_script()) ? 12
                    : is(m, 1, redlock_rw_set_mode_script()) ? 13 : -1;
            if (which < 0) { reply_error(m, "ERR unknown script"); return; }
            if (which >= 2) {
                nd->rsha |= 1u << (which - 2);
                nd->rlost &= ~(1u << (which - 2));
            } else if (which) {
                nd->sha_extend = 1;
                nd->lost_extend = 0;
            } else {
                nd->sha_release = 1;
                nd->lost_release = 0;
            }
        }
        if (which >= 9) run_rwscript(w, nd, e, m, which);
        else if (which >= 5) run_fscript(w, nd, e, m, which, c);
        else if (which >= 2) run_rscript(w, nd, e, m, which, c);
        else run_script(w, nd, e, m, which);
    } else {
        reply_error(m, "ERR unknown command");
    }
}

/* ---- the checker ---- */
static void close_interval(world *w, client *c, int k, int64_t end) {
    slot *s = &c->s[k];
    if (!s->open) return;
    s->open = 0;
    if (end > s->open_start) {
        if (w->ivn == w->ivcap) {
            w->ivcap = w->ivcap ? w->ivcap * 2 : 64;
            w->iv = (interval *)realloc(w->iv, w->ivcap * sizeof(interval));
            if (!w->iv) { perror("realloc"); exit(2); }
        }
        w->iv[w->ivn].s = s->open_start;
        w->iv[w->ivn].e = end;
        w->iv[w->ivn].holder = c->id * MAX_SLOTS + k;
        w->iv[w->ivn].key = s->key;
        w->iv[w->ivn].owner = s->owner;
        w->iv[w->ivn].mode = s->access == REDLOCK_ACCESS_SHARED ? 's' : s->access == REDLOCK_ACCESS_UPDATE ? 'u'
                             : s->access == REDLOCK_ACCESS_EXCLUSIVE ? 'x' : 'p';
        w->ivn++;
    }
}

/* The let-it-expire margin: a release or cleanup may leave a key that has
   less than node_timeout + drift to live (legacy / no-script nodes), and
   its real expiry lies up to one more drift later. */
static int64_t leak_margin_us(const world *w, const client *c, int64_t ttl_ms) {
    int64_t drift = (int64_t)((double)ttl_ms * 1000.0 * c->drift_factor) + 2000;
    if (!w->p->legacy && !w->p->noscript) return 1000; /* scripts delete atomically: no margin */
    if (w->p->legacy) drift += c->node_timeout_ms * 1000;
    return c->node_timeout_ms * 1000 + 2 * drift + 1000;
}

/* A token is done with: after its in-flight commands have landed, no node
   may still hold it (see the header comment for the exceptions). */
static void schedule_leak_check(world *w, int t, int64_t after_us) {
    event e;
    memset(&e, 0, sizeof e);
    e.kind = E_LEAK;
    e.c = w->tokens[t].c;
    e.status = t;
    e.t = w->now + after_us;
    push(w, e);
}

/* A script of the token's client that deletes it (a release or undo,
   sent with the token) is still on its way to node n: held back behind a
   delayed command on the same connection, it lands after it. */
static int delete_in_flight(const world *w, const token_rec *r, int n) {
    size_t i;
    int a;
    for (i = 0; i < w->hn; i++) {
        const event *e = &w->heap[i];
        if (e->kind != E_REQ || e->c != r->c || e->n != n || !e->m) continue;
        /* EVAL runs; EVALSHA only where the server has the script (else NOSCRIPT) */
        if (is(e->m, 0, "EVALSHA")) {
            const node *nd = &w->nodes[n];
            int ok = is(e->m, 1, SHA_RELEASE)     ? nd->sha_release
                     : is(e->m, 1, SHA_RRELEASE)  ? (int)(nd->rsha & 2u)
                     : is(e->m, 1, SHA_RWRELEASE) ? (int)(nd->rsha & 256u) : 0;
            if (!ok) continue;
        } else if (!is(e->m, 0, "EVAL")) {
            continue;
        }
        for (a = 3; a < e->m->argc; a++)
            if (e->m->argvlen[a] == REDLOCK_TOKEN_LEN && memcmp(e->m->argv[a], r->tok, REDLOCK_TOKEN_LEN) == 0)
                return 1;
    }
    return 0;
}

static void leak_check(world *w, int t) {
    const token_rec *r = &w->tokens[t];
    const client *c = &w->clients[r->c];
    int n, k;
    if (r->excused || c->fault_gen != r->gen) return;
    w->leak_checks++;
    for (n = 0; n < w->nn; n++) {
        for (k = 0; k < MAX_KEYS; k++) {
            entry *e = &w->nodes[n].e[k];
            size_t len;
            const char *tok;
            int64_t left;
            if (!entry_live(w, e)) continue;
            if (e->hash == 2) {
                if (rw_find(e, r->tok, 0) < 0) continue;
            } else if (e->hash) {
                if (hash_find(e, r->tok) < 0) continue;
            } else {
                tok = value_token(e, &len);
                if (len != REDLOCK_TOKEN_LEN || memcmp(tok, r->tok, len) != 0) continue;
            }
            left = value_expiry(e) >= 0 ? (value_expiry(e) - node_wall_ms(w)) * 1000 : e->expire_at - w->now;
            if (left > leak_margin_us(w, c, r->ttl_ms) && !delete_in_flight(w, r, n)) {
                char what[160];
                snprintf(what, sizeof what, "key left behind: %s on node %d keeps token %.8s for %lld us",
                         key_names[k], n, r->tok, (long long)left);
                violation(w, what, r->c);
            }
        }
    }
}

/* A node owes the lock a script that its server had and lost (a restart
   that kept the keys): NOSCRIPT, then EVAL, a step the core cannot foresee. */
static int script_lost(world *w, const redlock_lock *lk) {
    int i;
    for (i = 0; i < w->nn; i++) {
        int st = lk->_node[i].step;
        if (redlock__n_done(&lk->_node[i])) continue;
        if (redlock__access(lk) != REDLOCK_ACCESS_DEFAULT) {
            unsigned bit = st == REDLOCK__ST_ACQUIRE ? 128u : st == REDLOCK__ST_RELEASE ? 256u : st == REDLOCK__ST_EXTEND ? 512u : 0u;
            if (w->nodes[i].rlost & bit) return 1;
        } else if (redlock__reentrant(lk)) {
            unsigned bit = st == REDLOCK__ST_ACQUIRE ? (redlock__fenced(lk) ? 32u : 1u) : st == REDLOCK__ST_RELEASE ? 2u
                         : st == REDLOCK__ST_EXTEND ? 4u : st == REDLOCK__ST_FENCE ? 64u : 0u;
            if (w->nodes[i].rlost & bit) return 1;
        } else if ((st == REDLOCK__ST_RELEASE && w->nodes[i].lost_release) ||
                   (st == REDLOCK__ST_EXTEND && w->nodes[i].lost_extend) ||
                   (st == REDLOCK__ST_ACQUIRE && (w->nodes[i].rlost & 8u)) ||
                   (st == REDLOCK__ST_FENCE && (w->nodes[i].rlost & 16u))) {
            return 1;
        }
    }
    return 0;
}

/* The slot's token is done with. deinit of a lock with a round running
   drops the steps not yet sent (documented): excused only while
   redlock_lock_followup() says a step is still to come, or a server lost
   the script owed; every other round running is held to the check (its
   commands complete as sent). */
static void token_done(world *w, client *c, int k, int deinit) {
    slot *s = &c->s[k];
    token_rec *r;
    if (s->token < 0) return;
    r = &w->tokens[s->token];
    if (deinit) {
        redlock_state st = redlock_lock_state(&s->lk);
        int pending = redlock_lock_pending(&s->lk);
        if (st == REDLOCK_STATE_HELD || st == REDLOCK_STATE_ACQUIRING || st == REDLOCK_STATE_RELEASING ||
            (pending && (redlock_lock_followup(&s->lk) || script_lost(w, &s->lk) || r->noscript)))
            r->excused = 1;
    }
    schedule_leak_check(w, s->token, 2000); /* a one-way delay is at most 800 us without faults */
    s->token = -1;
}

/* After every event a client processes: track, per lock handle, the window
   in which it believes it holds the lock (in true time) and its token. */
/* The fence checker (section 11): a fenced hold of slot k reported success
   now. For every earlier hold A on the key whose success came before this
   acquire was called, this fence must be higher than A's (at least as
   high for an entry of A's reentrant owner, which keeps the hold's
   fence), unless a crash without persistence wiped counters after A's
   acquire began. */
static void fence_record(world *w, client *c, int k, int64_t fence) {
    slot *s = &c->s[k];
    int64_t start = true_of(c, s->lk._op_start);
    size_t a;
    int l;
    s->fence_token = s->token;
    if (fence < 1) { violation(w, "a fenced hold without a fence", c->id); return; }
    for (a = 0; a < w->fhn; a++) {
        const fence_hold *h = &w->fh[a];
        int wiped = w->ncounter_lost > 8;
        if (h->key != s->key || h->done >= start) continue;
        for (l = 0; l < w->ncounter_lost && l < 8; l++) wiped |= w->counter_lost[l] > h->start;
        if (wiped) continue;
        w->fence_pairs++;
        /* a reentrant owner's later entries keep the hold's fence */
        if (s->owner >= 0 && h->owner == s->owner ? fence < h->fence : fence <= h->fence) {
            char what[160];
            snprintf(what, sizeof what, "fence %lld not above %lld of an earlier holder (c%d.%d) that succeeded before this "
                     "acquire began", (long long)fence, (long long)h->fence, h->holder / MAX_SLOTS, h->holder % MAX_SLOTS);
            violation(w, what, c->id);
            return;
        }
    }
    if (w->fhn == w->fhcap) {
        w->fhcap = w->fhcap ? w->fhcap * 2 : 64;
        w->fh = (fence_hold *)realloc(w->fh, w->fhcap * sizeof *w->fh);
        if (!w->fh) { perror("realloc"); exit(2); }
    }
    w->fh[w->fhn].start = start;
    w->fh[w->fhn].done = w->now;
    w->fh[w->fhn].fence = fence;
    w->fh[w->fhn].key = s->key;
    w->fh[w->fhn].holder = c->id * MAX_SLOTS + k;
    w->fh[w->fhn].owner = s->owner;
    w->fhn++;
}

/* ---- the stored values, read as a monitor would ----
   What a node keeps for a key is answered as a real server answers GET,
   HGETALL and GET of the fence counter, and decoded with the public
   decoders (redlock.h section 13). Read only: no randomness, no change to
   the world. Two checks, when a caller is told it acquired (or upgraded):
   every key and counter of every node decodes to what the simulated
   server holds; and a quorum of the nodes shows what the caller asked
   for (its token for a plain, fenced, exclusive or update hold, its owner
   id for a reentrant one, a reader for a shared one, a counter at least
   the fence it was given). The second needs keys no fault took away: only
   while no node crashed, evicted or jumped in the schedule so far, and
   not on legacy servers. */
#define STORED_FIELDS (2 * (MAX_ENTRIES + 2))
typedef struct stored {
    redlock_reply r, el[STORED_FIELDS];
    char buf[STORED_FIELDS][REDLOCK_MAX_OWNER + REDLOCK_TOKEN_LEN + 24];
} stored;
static stored scratch;

static int entry_alive(const world *w, const entry *e) { /* entry_live without its cleanup */
    return e->used && !(e->expire_at >= 0 && w->now >= e->expire_at);
}
static void stored_field(stored *st, const char *a, const char *b, const char *c) {
    size_t i = st->r.elements++;
    snprintf(st->buf[i], sizeof st->buf[i], "%s%s%s", a, b, c);
    st->el[i].type = REDLOCK_REPLY_STRING;
    st->el[i].str = st->buf[i];
    st->el[i].len = strlen(st->buf[i]);
}
/* a readers-writer entry's expiry as the scripts keep it: the server's ms */
static int64_t rw_expiry_ms(int64_t exp) { return WALL_EPOCH_MS + exp / 1000; }
/* GET key */
static const redlock_reply *stored_get(const world *w, const entry *e) {
    stored *st = &scratch;
    memset(&st->r, 0, sizeof st->r);
    if (!entry_alive(w, e)) {
        st->r.type = REDLOCK_REPLY_NIL;
    } else if (e->hash) {
        static const char wrong[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
        st->r.type = REDLOCK_REPLY_ERROR;
        st->r.str = wrong;
        st->r.len = sizeof wrong - 1;
    } else {
        st->r.type = REDLOCK_REPLY_STRING;
        st->r.str = e->val;
        st->r.len = e->vlen;
    }
    return &st->r;
}
/* HGETALL key, in an order of its own (a server's is any): the fence
   field first, the owner's count last */
static const redlock_reply *stored_hash(const entry *e) {
    stored *st = &scratch;
    char num[32];
    int i;
    memset(&st->r, 0, sizeof st->r);
    st->r.type = REDLOCK_REPLY_ARRAY;
    st->r.element = st->el;
    if (e->hash == 1) {
        if (e->has_fence) {
            snprintf(num, sizeof num, "%lld", e->fence);
            stored_field(st, REDLOCK_FENCE_FIELD, "", "");
            stored_field(st, num, "", "");
        }
        for (i = 0; i < e->ntoks; i++) {
            stored_field(st, e->owner, ":", e->toks[i]);
            stored_field(st, "1", "", "");
        }
        snprintf(num, sizeof num, "%ld", e->count);
        stored_field(st, e->owner, "", "");
        stored_field(st, num, "", "");
    } else {
        for (i = 0; i < e->nrw; i++) {
            char mode[2] = {e->rw[i].mode, 0};
            snprintf(num, sizeof num, "%lld", (long long)rw_expiry_ms(e->rw[i].exp));
            stored_field(st, e->rw[i].mode == 'w' ? REDLOCK_RW_WAITING_PREFIX : "", e->rw[i].tok, "");
            stored_field(st, mode, num, "");
        }
    }
    return &st->r;
}
/* GET REDLOCK_FENCE_PREFIX+key (a counter of 0 is no key) */
static const redlock_reply *stored_counter(long long counter) {
    stored *st = &scratch;
    memset(&st->r, 0, sizeof st->r);
    if (!counter) {
        st->r.type = REDLOCK_REPLY_NIL;
        return &st->r;
    }
    snprintf(st->buf[0], sizeof st->buf[0], "%lld", counter);
    st->r.type = REDLOCK_REPLY_STRING;
    st->r.str = st->buf[0];
    st->r.len = strlen(st->buf[0]);
    return &st->r;
}
static int same(const char *a, size_t alen, const char *b) { return alen == strlen(b) && memcmp(a, b, alen) == 0; }

/* What a readers-writer hash holds by the server's clock, as a monitor
   reading it now is told (entries past their expiry left out). */
static void rw_expected(const world *w, const entry *e, long long *readers, long long *waiting, const char **writer,
                        const char **update) {
    int i;
    *readers = *waiting = 0;
    *writer = *update = "";
    for (i = 0; i < e->nrw; i++) {
        if (rw_expiry_ms(e->rw[i].exp) <= node_wall_ms(w)) continue;
        if (e->rw[i].mode == 'w') ++*waiting;
        else if (e->rw[i].mode == 's') ++*readers;
        else if (e->rw[i].mode == 'x') *writer = e->rw[i].tok;
        else *update = e->rw[i].tok;
    }
}

/* Key k and its counter on node n decode to what the node holds; *v: the
   key's value. Empty: fine, else what differs. */
static const char *decode_stored(const world *w, int n, int k, redlock_value *v) {
    const node *nd = &w->nodes[n];
    const entry *e = &nd->e[k];
    int alive = entry_alive(w, e);
    if (redlock_value_fence(stored_counter(nd->counter[k])) != (nd->counter[k] ? nd->counter[k] : -1))
        return "a fence counter";
    if (redlock_value_from_get(stored_get(w, e), alive && !e->hash && e->expire_at >= 0, v) != REDLOCK_OK) return "GET";
    if (!alive) return v->kind == REDLOCK_VALUE_NONE ? "" : "no key";
    if (!e->hash) {
        size_t tlen;
        const char *tok = value_token(e, &tlen);
        if (e->expire_at >= 0 || tok == e->val)
            return v->kind == REDLOCK_VALUE_PLAIN && same(e->val, e->vlen, v->token) ? "" : "a token";
        return v->kind == REDLOCK_VALUE_LEGACY && same(tok, tlen, v->token) && v->expiry_ms == value_expiry(e)
                   ? "" : "a legacy value";
    }
    if (v->kind != REDLOCK_VALUE_HASH) return "a hash's GET";
    if (e->hash == 1 && (e->ntoks == 0 || e->count != e->ntoks)) return ""; /* the count checker's */
    if (redlock_value_from_hash(stored_hash(e), node_wall_ms(w), v) != REDLOCK_OK) return "HGETALL";
    if (e->hash == 1)
        return v->kind == REDLOCK_VALUE_REENTRANT && same(v->owner, v->owner_len, e->owner) && v->entries == e->count &&
                       same(v->token, v->token_len, e->toks[0]) && v->fence == (e->has_fence ? e->fence : -1)
                   ? "" : "a reentrant hash";
    if (e->nrw == 0) return v->kind == REDLOCK_VALUE_NONE ? "" : "an empty hash";
    {
        long long readers, waiting;
        const char *writer, *update;
        rw_expected(w, e, &readers, &waiting, &writer, &update);
        return v->kind == REDLOCK_VALUE_RW && v->readers == readers && v->writers_waiting == waiting &&
                       same(v->writer, v->writer_len, writer) && same(v->update, v->update_len, update)
                   ? "" : "a readers-writer hash";
    }
}

/* Node n shows slot s's hold as its caller asked for it (v: its key's value). */
static int shows_hold(const world *w, const slot *s, int n, const redlock_value *v, int64_t fence) {
    const char *tok = redlock_lock_token(&s->lk);
    if (s->fenced && redlock_value_fence(stored_counter(w->nodes[n].counter[s->key])) < fence) return 0;
    if (s->owner >= 0) return v->kind == REDLOCK_VALUE_REENTRANT && same(v->owner, v->owner_len, redlock_lock_owner(&s->lk));
    switch (s->access) {
    case REDLOCK_ACCESS_SHARED: return v->kind == REDLOCK_VALUE_RW && v->readers > 0;
    case REDLOCK_ACCESS_EXCLUSIVE: return v->kind == REDLOCK_VALUE_RW && same(v->writer, v->writer_len, tok);
    case REDLOCK_ACCESS_UPDATE: return v->kind == REDLOCK_VALUE_RW && same(v->update, v->update_len, tok);
    default: return (v->kind == REDLOCK_VALUE_PLAIN || v->kind == REDLOCK_VALUE_LEGACY) && same(v->token, v->token_len, tok);
    }
}

/* Slot k of client c was just told it holds (an acquire's or an upgrade's
   result, OK; fence: the acquire's). */
static void check_stored(world *w, client *c, int k, int64_t fence, int64_t validity_us) {
    slot *s = &c->s[k];
    int n, key, showing = 0;
    for (n = 0; n < w->nn; n++)
        for (key = 0; key < n_keys(w); key++) {
            redlock_value v;
            const char *bad = decode_stored(w, n, key, &v);
            w->decoded++;
            if (*bad) {
                char what[160];
                snprintf(what, sizeof what, "node %d's %s: %s decoded otherwise", n, key_names[key], bad);
                violation(w, what, c->id);
                return;
            }
            if (key == s->key && w->nodes[n].up) showing += shows_hold(w, s, n, &v, fence);
        }
    /* a quorum granted, and no fault took a key since; validity (more than
       the ms a server's expiry is kept in) keeps the hold's entries alive.
       Not on legacy servers: a takeover's losing GETSET writes its own
       value over the winner's (section 4's documented race). */
    if (w->keys_gone || w->p->ctl_rw || w->p->legacy || validity_us <= 2000) return;
    w->shown++;
    if (showing < w->nn / 2 + 1) {
        char what[160];
        snprintf(what, sizeof what, "told it holds %s, yet only %d of %d nodes show the hold", key_names[s->key], showing,
                 w->nn);
        violation(w, what, c->id);
    }
}

static void observe_slot(world *w, client *c, int k) {
    slot *s = &c->s[k];
    const char *tok;
    if (!s->inited) return;
    /* a transport that listens hears of the release an acquire waits for
       when its retry delay is at least the node timeout (else polling
       finds it about as soon), and only an acquire that may still try
       again keeps it listening */
    if (c->listens && redlock_lock_waiting(&s->lk) && s->lk._attempt > 0 && !s->listening &&
        c->retry_delay_ms >= c->node_timeout_ms)
        violation(w, "an acquire waits for its next attempt without listening", c->id);
    if (s->listening && c->retry_delay_ms < c->node_timeout_ms)
        violation(w, "a lock listens though its retry delay is shorter than the node timeout", c->id);
    /* a notification heard since the last attempt began (during it, or its
       undo, or the wait) starts the next one once nothing runs and the
       rate limit allows: the core's next deadline is no later than that */
    if (s->woken && redlock_lock_waiting(&s->lk) && s->lk._phase == REDLOCK__PH_NONE && cb_now(c) < s->due_at) {
        int64_t limit_end = s->woke_at >= 0 ? s->woke_at + wake_gap_us(c) : 0;
        if (redlock_next_deadline(&c->rc) > (limit_end > cb_now(c) ? limit_end : cb_now(c)))
            violation(w, "a notification heard was dropped: the acquire waits for its retry", c->id);
    }
    if (s->listening && (redlock_lock_state(&s->lk) != REDLOCK_STATE_ACQUIRING || s->lk._try == REDLOCK__TRY_TIMING_OUT))
        violation(w, "a lock listens with no attempt to come", c->id);
    if (held_inside(&s->lk) && s->lk._validity_unknown) {
        /* an adopted token without a validity: held, nothing to act on, and
           LOST by the clock once past the bound an extend's start set */
        int out = cb_now(c) >= s->lk._valid_until;
        if (redlock_lock_remaining_us(&s->lk) != 0 || redlock_lock_valid_until(&s->lk) != 0 ||
            redlock_lock_state(&s->lk) != (out ? REDLOCK_STATE_LOST : REDLOCK_STATE_HELD) ||
            (redlock_lock_lost_reason(&s->lk) != 0) != out)
            violation(w, "an adopted lock without a validity reads as one with a validity", c->id);
    } else if (held_inside(&s->lk)) {
        /* the state by the clock: past its validity a held lock reads LOST
           with its reason, and the time left to act is exact */
        int64_t left = redlock_lock_valid_until(&s->lk) - cb_now(c);
        if (redlock_lock_remaining_us(&s->lk) != (left > 0 ? left : 0))
            violation(w, "remaining_us is not the validity left by the clock", c->id);
        if ((redlock_lock_state(&s->lk) == REDLOCK_STATE_LOST) != (left <= 0) ||
            (left <= 0 && redlock_lock_lost_reason(&s->lk) == 0))
            violation(w, "a held lock past its validity does not read LOST (or reads it too soon)", c->id);
    }
    if (s->owner >= 0) { /* the owner the handle acts for: its own id, or the client's default */
        const char *own = redlock_lock_owner(&s->lk);
        int good = s->owner < 2 ? strcmp(own, s->owner ? "owner-b" : "owner-a") == 0
                                : !own[0] || (strlen(own) == 33 && strncmp(own, c->rc._owner_id, 16) == 0 && own[16] == ':');
        if (!good) violation(w, "a reentrant lock acts for another owner", c->id);
    }
    tok = redlock_lock_token(&s->lk);
    if (tok[0] && (s->token < 0 || strcmp(tok, w->tokens[s->token].tok) != 0)) {
        token_done(w, c, k, 0);
        if (w->ntokens < MAX_TOKENS) {
            token_rec *r = &w->tokens[w->ntokens];
            memcpy(r->tok, tok, REDLOCK_TOKEN_LEN + 1);
            r->c = c->id;
            r->slot = k;
            /* faults from the token's first attempt on excuse it (its
               commands went out before this observation) */
            r->gen = s->acquire_gen;
            r->excused = 0;
            r->noscript = 0;
            r->ttl_ms = s->ttl_ms;
            s->token = w->ntokens++;
        }
    }
    /* a polled lock's upgrade (one it asked for) is seen here, as its
       caller sees it: later than it came, so the window counts as update
       until now, which checks less, never wrongly */
    if (s->no_callback && s->upgrade_asked && s->access == REDLOCK_ACCESS_UPDATE &&
        redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD && redlock_lock_access(&s->lk) == REDLOCK_ACCESS_EXCLUSIVE) {
        close_interval(w, c, k, w->now < s->open_bound ? w->now : s->open_bound);
        s->access = REDLOCK_ACCESS_EXCLUSIVE;
        s->upgrade_asked = 0;
        s->renewals++;
        s->cadence_gen = c->fault_gen - 1;
    }
    /* redlock_lock_access: the hold's mode while held, the options' otherwise */
    if (s->opts_access != REDLOCK_ACCESS_DEFAULT &&
        redlock_lock_access(&s->lk) !=
            (redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD ? s->access : s->opts_access)) {
        char what[160];
        snprintf(what, sizeof what, "redlock_lock_access says %d, the %s mode is %d", (int)redlock_lock_access(&s->lk),
                 redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD ? "hold's" : "options'",
                 (int)(redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD ? s->access : s->opts_access));
        violation(w, what, c->id);
    }
    /* the hold cap: automatic renewals (the watchdog's, an upgrade's
       attempts) start before held_since + max_hold_ms and renew for the
       ttl; only the user's own extends reach further */
    if (s->max_hold_us > 0 && held_inside(&s->lk) && redlock_lock_valid_until(&s->lk) != 0) {
        int64_t bound = s->held_since + s->max_hold_us + s->ttl_ms * 1000;
        if (s->user_bound > bound) bound = s->user_bound;
        if (redlock_lock_valid_until(&s->lk) > bound) {
            char what[160];
            snprintf(what, sizeof what, "held past max_hold_ms: valid until %lld us after the hold began, cap %lld + ttl %lld",
                     (long long)(redlock_lock_valid_until(&s->lk) - s->held_since), (long long)s->max_hold_us,
                     (long long)s->ttl_ms * 1000);
            violation(w, what, c->id);
        }
    }
    /* a polled lock's success is seen here (later than it came: fewer pairs) */
    if (s->fenced && redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD && s->token >= 0 && s->fence_token != s->token &&
        s->lk._attempt > 0) /* (an adopted token has no fence) */
        fence_record(w, c, k, redlock_lock_fence(&s->lk));
    if (redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD && redlock_lock_valid_until(&s->lk) != 0) {
        int64_t bound = true_of(c, redlock_lock_valid_until(&s->lk));
        if (s->open && w->now > s->open_bound) close_interval(w, c, k, s->open_bound);
        if (!s->open) { s->open = 1; s->open_start = w->now; }
        s->open_bound = bound;
    } else if (s->open) {
        close_interval(w, c, k, w->now < s->open_bound ? w->now : s->open_bound);
    }
}
/* The core's bookkeeping, white box, between calls: every live handle is
   filed in the lock table under its id (and nothing else is), and the
   deadline heap's root is the earliest deadline of the handles. */
static void check_books(world *w, client *c) {
    int64_t earliest = REDLOCK_NO_DEADLINE, held_waits = REDLOCK_NO_DEADLINE;
    int k, live = 0, filed = 0, running = 0, waiting = 0;
    uint32_t b;
    for (k = 0; k < c->ns; k++) {
        redlock_lock *lk = &c->s[k].lk;
        if (!c->s[k].inited) continue;
        live++;
        if (redlock__find(&c->rc, lk->_id) != lk || !redlock__filed(&c->rc, lk))
            violation(w, "a live lock is not found from its id", c->id);
        running += redlock__has_turn(lk);
        if (lk->_heap_where == REDLOCK__WAITING) {
            /* waiting for a turn: no command out, and in line under its
               validity (held) or after every held one */
            int k2, sent = 0;
            waiting++;
            for (k2 = 0; k2 < w->nn; k2++) sent |= redlock__n_awaited(&lk->_node[k2]);
            if (sent || lk->_phase == REDLOCK__PH_NONE)
                violation(w, "a lock waiting for its turn has a command out or no round", c->id);
            if (lk->_state == REDLOCK_STATE_HELD ? lk->_deadline != (lk->_valid_until < REDLOCK__IN_LINE ? lk->_valid_until : REDLOCK__IN_LINE - 1)
                                                 : lk->_deadline < REDLOCK__IN_LINE)
                violation(w, "a lock waits for its turn under the wrong key", c->id);
            if (lk->_deadline < REDLOCK__IN_LINE && lk->_deadline < held_waits) held_waits = lk->_deadline;
            continue;
        }
        if ((lk->_deadline != REDLOCK_NO_DEADLINE) != (lk->_heap_where == REDLOCK__IN_HEAP))
            violation(w, "a lock with a deadline is not in the deadline heap", c->id);
        if (lk->_deadline < earliest) earliest = lk->_deadline;
    }
    /* turns: the client counts the rounds holding one, within its window
       (1..max_rounds); a free turn with rounds waiting is handed on at once
       (the timer asks for it); the earliest validity among the waiting
       held locks counts too */
    if (running != c->rc._rounds) violation(w, "the client miscounts its rounds holding a turn", c->id);
    if (c->rc._window < 1 || (c->max_rounds > 0 && c->rc._window > c->max_rounds)) violation(w, "the window of turns is out of bounds", c->id);
    if (waiting && c->rc._rounds < c->rc._window) {
        if (c->rc._turn_at > local_of(c, w->now)) violation(w, "a free turn is handed on later than now", c->id);
        if (c->rc._turn_at < earliest) earliest = c->rc._turn_at;
    }
    if (held_waits < earliest) earliest = held_waits;
    /* the whole table, after a lock_init or deinit (or always, in the
       many-locks profile's small tables) */
    if (c->table_changed || w->p->many) {
        for (b = 0; b <= c->rc._table_mask; b++) {
            const redlock_lock *it;
            for (it = c->rc._table[b]; it; it = it->_bucket_next) filed++;
        }
        if (filed != live) violation(w, "the lock table holds a lock that is gone", c->id);
        c->table_changed = 0;
    }
    if (redlock_next_deadline(&c->rc) != earliest || c->rc._parked)
        violation(w, "the deadline heap's root is not the earliest deadline", c->id);
}

static void observe(world *w, client *c) {
    int k;
    for (k = 0; k < c->ns; k++) observe_slot(w, c, k);
    check_books(w, c);
}

/* A deinitialised handle's memory is scribbled over, as freed memory that
   was reused: whatever the core still receives for it must not read it. */
static void scribble(slot *s) { memset(&s->lk, 0xA5, sizeof s->lk); }

static int iv_cmp(const void *a, const void *b) {
    const interval *x = (const interval *)a, *y = (const interval *)b;
    return x->s < y->s ? -1 : x->s > y->s;
}

static void check_exclusion(world *w) {
    size_t i, j;
    if (w->ivn) qsort(w->iv, w->ivn, sizeof(interval), iv_cmp);
    for (i = 0; i < w->ivn; i++)
        for (j = i + 1; j < w->ivn && w->iv[j].s < w->iv[i].e; j++) {
            /* shared holds may overlap each other and one update hold */
            int compatible = (w->iv[i].mode == 's' && (w->iv[j].mode == 's' || w->iv[j].mode == 'u')) ||
                             (w->iv[j].mode == 's' && w->iv[i].mode == 'u');
            w->shared_overlaps += w->iv[j].key == w->iv[i].key && w->iv[j].holder != w->iv[i].holder && compatible;
            if (w->iv[j].key == w->iv[i].key && w->iv[j].holder != w->iv[i].holder &&
                (w->iv[i].owner < 0 || w->iv[j].owner != w->iv[i].owner) && !compatible) {
                if (!w->violations)
                    snprintf(w->why, sizeof w->why,
                             "mutual exclusion on %s: lock %d.%d [%lld,%lld) overlaps lock %d.%d [%lld,%lld)",
                             key_names[w->iv[i].key], w->iv[i].holder / MAX_SLOTS, w->iv[i].holder % MAX_SLOTS,
                             (long long)w->iv[i].s, (long long)w->iv[i].e, w->iv[j].holder / MAX_SLOTS,
                             w->iv[j].holder % MAX_SLOTS, (long long)w->iv[j].s, (long long)w->iv[j].e);
                w->violations++;
            }
        }
}

/* ---- client behaviour ---- */
static void schedule_act(world *w, client *c, int k, int64_t at) {
    event e;
    if (w->stopping) return;
    memset(&e, 0, sizeof e);
    e.kind = E_ACT;
    e.c = c->id;
    e.n = k;
    e.t = at;
    push(w, e);
}

static void on_result(redlock_lock *lk, const redlock_result *r);

/* (Re)initialises slot k with random options; the first call also picks
   its key. Configuration goes to its limits now and then. */
static void init_slot(world *w, client *c, int k) {
    slot *s = &c->s[k];
    redlock_lock_opts o;
    /* legacy: a late GETSET writes its own client's expiry, so the algorithm
       needs one ttl per key (documented); elsewhere every lock picks its own */
    int64_t ttl = w->p->legacy ? w->key_ttl_ms[s->key] : w->long_ttl_ms ? rng_range(&w->rng, w->long_ttl_ms / 2, w->long_ttl_ms)
                  : rng_range(&w->rng, 30, 120);
    if (s->inited) {
        observe_slot(w, c, k);
        close_interval(w, c, k, w->now);
        token_done(w, c, k, 1);
        w->reinits_in_flight += redlock_lock_pending(&s->lk) != 0;
        books_drop(c, s);
    }
    memset(&o, 0, sizeof o);
    o.key = key_names[s->key];
    o.ttl_ms = ttl;
    o.watchdog = w->p->crashes == 2 ? 1 : w->p->crowd ? 0 : rng_chance(&w->rng, 0.6);
    if (c->late_loop) o.watchdog = 0;
    if (o.watchdog && w->p->api && rng_chance(&w->rng, 0.2)) o.renew_every_ms = rng_range(&w->rng, 1, ttl - 1);
    if (w->p->api && rng_chance(&w->rng, 0.15)) o.max_extensions = (int)rng_range(&w->rng, 1, 6);
    if (w->p->api && rng_chance(&w->rng, 0.1)) o.max_hold_ms = rng_range(&w->rng, 1, 3 * ttl);
    if (w->p->api && rng_chance(&w->rng, 0.1)) o.retry_count = rng_chance(&w->rng, 0.5) ? -1 : (int)rng_range(&w->rng, 1, 30);
    if (w->p->api && rng_chance(&w->rng, 0.1)) o.wait_ms = rng_chance(&w->rng, 0.5) ? ((int64_t)1 << 40) : rng_range(&w->rng, 1, 2 * ttl);
    /* now and then a lock without a result callback: the sim polls it */
    s->no_callback = w->p->api && rng_chance(&w->rng, 0.1);
    c->bk.blind |= s->no_callback;
    o.on_result = s->no_callback ? NULL : on_result;
    o.user = c;
    s->owner = -1;
    if (w->p->reentrant && rng_chance(&w->rng, 0.85)) {
        /* two owner ids shared by every client, or the client's default */
        static const char *const shared[2] = {"owner-a", "owner-b"};
        int pick = (int)rng_range(&w->rng, 0, 2);
        o.reentrant = 1;
        o.owner = pick < 2 ? shared[pick] : NULL;
        s->owner = pick < 2 ? pick : 10 + c->id;
    }
    s->fenced = w->p->fenced > 0 && rng_chance(&w->rng, w->p->fenced);
    o.fence = s->fenced;
    s->opts_access = REDLOCK_ACCESS_DEFAULT;
    if (!o.reentrant && !o.fence && w->p->rw > 0 && rng_chance(&w->rng, w->p->rw))
        s->opts_access = w->p->rw_update > 0 ? (rng_chance(&w->rng, w->p->rw_update) ? REDLOCK_ACCESS_UPDATE
                                                : rng_chance(&w->rng, 0.6) ? REDLOCK_ACCESS_SHARED : REDLOCK_ACCESS_EXCLUSIVE)
                    : rng_chance(&w->rng, 0.5) ? REDLOCK_ACCESS_SHARED
                    : rng_chance(&w->rng, 0.5) ? REDLOCK_ACCESS_EXCLUSIVE : REDLOCK_ACCESS_UPDATE;
    o.access = s->opts_access;
    s->access = s->opts_access; /* no hold yet */
    s->access_gen++;
    s->upgrade_asked = 0;
    s->remoded = 0;
    s->max_hold_us = o.max_hold_ms * 1000;
    s->max_extensions = o.max_extensions;
    /* evicting nodes: refused (a fenced lock by default, the others asked
       to), or all counted in the control */
    o.refuse_evicting = p_evicting(w->p) == 2 ? -1 : p_evicting(w->p) == 1 && (!o.fence || rng_chance(&w->rng, 0.5)) ? 1 : 0;
    s->refuses = o.refuse_evicting > 0 || (o.refuse_evicting == 0 && o.fence);
    s->fence_token = -1;
    c->table_changed = 1;
    if (redlock_lock_init(&s->lk, &c->rc, &o) != REDLOCK_OK) { fprintf(stderr, "lock init failed\n"); exit(2); }
    s->inited = 1;
    s->renew_every_us = (o.renew_every_ms ? o.renew_every_ms : (ttl / 3 > 0 ? ttl / 3 : 1)) * 1000;
    s->capped = o.max_extensions > 0 || o.max_hold_ms > 0;
    s->waits = o.wait_ms > 0;
    s->ext_ttl_ms = 0;
    s->retries = o.retry_count ? o.retry_count : c->retry_count;
    if (s->retries < 0) s->retries = 0;
    s->spent = 0;
    s->due_at = 0;
    s->woke_at = -1;
    s->round_start = 0;
    s->poll_due = 0;
    s->ttl_ms = ttl;
    s->watchdog = o.watchdog;
    if (redlock_lock_restart_bound_us(&s->lk) != restart_bound_us(c, s))
        violation(w, "redlock_lock_restart_bound_us is not max(ttl, max_ttl_ms) + drift", c->id);
    s->release_at = -1;
    s->token = -1;
    s->last_op = 0;
}

static int slot_of(client *c, const redlock_lock *lk) {
    int k;
    for (k = 0; k < c->ns; k++)
        if (&c->s[k].lk == lk) return k;
    return -1;
}

/* redlock_extend, and the contract: from the call on, the validity is at
   most now + ttl - drift, whatever the outcome (PEXPIRE sets the time). */
static int sim_extend(world *w, client *c, slot *s, int64_t ttl_ms) {
    int64_t now = local_of(c, w->now), ttl = ttl_ms ? ttl_ms : s->ttl_ms, before = s->ext_ttl_ms;
    int rc;
    s->ext_ttl_ms = ttl; /* before the call: its result may come inside it */
    rc = redlock_extend(&s->lk, ttl_ms);
    if (rc != REDLOCK_OK) s->ext_ttl_ms = before;
    if (rc == REDLOCK_OK) {
        if (now + ttl * 1000 > s->user_bound) s->user_bound = now + ttl * 1000;
        if (redlock_lock_state(&s->lk) == REDLOCK_STATE_HELD &&
            redlock_lock_valid_until(&s->lk) > now + ttl * 1000 - drift_us(c, ttl))
            violation(w, "extend did not cut the validity to now + ttl - drift", c->id);
    }
    return rc;
}

/* An extend with any ttl: the lock's own, tiny, shorter or longer. */
static int64_t pick_extend_ttl(world *w, const slot *s) {
    switch (rng_range(&w->rng, 0, 4)) {
    case 0: return 0;
    case 1: return rng_range(&w->rng, 1, 3);
    case 2: return rng_range(&w->rng, s->ttl_ms / 4, s->ttl_ms);
    case 3: return rng_range(&w->rng, s->ttl_ms, 3 * s->ttl_ms);
    default: return s->ttl_ms;
    }
}

/* A legacy GETSET of tok still unanswered on some node (a decided round's
   straggler): its answer may say it replaced another holder's value. */
static int getset_unanswered(const client *c, const char *tok) {
    int n;
    for (n = 0; n < W->nn; n++)
        if (is_unanswered(c, n, tok)) return 1;
    return 0;
}
/* White box: the lock knows its value on some node replaced another
   holder's (a lost takeover race) and leaves that node alone; a token
   handed over cannot carry that (documented at redlock_lock_adopt). */
static int clobbered_somewhere(const redlock_lock *lk, int key) {
    int n;
    for (n = 0; n < W->nn; n++) {
        entry *e = &W->nodes[n].e[key];
        size_t len;
        const char *tok;
        if (lk->_node[n].flags & REDLOCK__F_CLOBBERED) return 1;
        /* a GETSET whose answer came too late for its round: the lock does
           not act there (its bound is 0), the taker would */
        if (!entry_live(W, e) || redlock__until(lk, n) != 0) continue;
        tok = value_token(e, &len);
        if (len == REDLOCK_TOKEN_LEN && memcmp(tok, redlock_lock_token(lk), len) == 0) return 1;
    }
    return 0;
}

/* Hands a held lock over to slot k, as a process hands its token to
   another (`redlock acquire`, then `redlock release KEY TOKEN`): slot k
   adopts the token of a held lock on its key (of this client, with or
   without the validity left; of another, without), and the giver is
   deinitialised. adopt's refusals must match slot k's state. */
static void sim_adopt(world *w, client *c, int k) {
    slot *s = &c->s[k], *f = NULL;
    client *fc = NULL;
    int i, j, from = -1, rc, pending;
    redlock_state st;
    char tok[REDLOCK_TOKEN_LEN + 1];
    int64_t valid_ms = 0;
    for (i = 0; i < w->nc && !f; i++) {
        client *o = &w->clients[(c->id + i) % w->nc];
        for (j = 0; j < o->ns && !f; j++) {
            slot *x = &o->s[j];
            if ((o == c && j == k) || !x->inited || x->key != s->key || x->token < 0) continue;
            /* a reentrant entry is the owner's: only a handle of that owner
               (or a plain lock's token, a plain handle) takes it over */
            if (x->owner != s->owner) continue;
            /* a readers-writer holder's entry has its hold's mode: a handle
               whose options ask for that mode (its holds start so) */
            if (x->access != s->opts_access) continue;
            /* not while a command of the giver is out: a legacy GETSET in
               flight may be replacing another holder's value, and only its
               answer says; an extend on its way may land after the taker's
               and set a shorter ttl (documented at redlock_lock_adopt) */
            if (redlock_lock_state(&x->lk) != REDLOCK_STATE_HELD || redlock_lock_pending(&x->lk) ||
                redlock_lock_valid_until(&x->lk) == 0 || getset_unanswered(o, redlock_lock_token(&x->lk)) ||
                w->tokens[x->token].extends_out > 0 || clobbered_somewhere(&x->lk, x->key))
                continue;
            fc = o; f = x; from = j;
        }
    }
    if (!f) {  /* nothing to take over: a token nobody holds */
        rc = redlock_lock_adopt(&s->lk, "0123456789abcdef0123456789abcdez", 0);
        if (rc != REDLOCK_ERR_INVALID && rc != REDLOCK_ERR_DETACHED) violation(w, "adopt took a malformed token", c->id);
        return;
    }
    snprintf(tok, sizeof tok, "%s", redlock_lock_token(&f->lk));
    if (fc == c && rng_chance(&w->rng, 0.5)) valid_ms = redlock_lock_remaining_us(&f->lk) / 1000;
    st = redlock_lock_state(&s->lk);
    pending = redlock_lock_pending(&s->lk);
    if (st == REDLOCK_STATE_IDLE && !pending) token_done(w, c, k, 0); /* the old token is done with */
    rc = redlock_lock_adopt(&s->lk, tok, valid_ms);
    if (rc != REDLOCK_OK) {
        int fits = (rc == REDLOCK_ERR_ALREADY_HELD && st == REDLOCK_STATE_HELD) ||
                   (rc == REDLOCK_ERR_BUSY && (st == REDLOCK_STATE_ACQUIRING || st == REDLOCK_STATE_RELEASING ||
                                               st == REDLOCK_STATE_LOST || pending)) ||
                   rc == REDLOCK_ERR_DETACHED; /* a LOST report inside deinitialised it */
        if (!fits) violation(w, "adopt refused outside its documented cases", c->id);
        return;
    }
    if (!held_inside(&s->lk) || strcmp(redlock_lock_token(&s->lk), tok) != 0)
        violation(w, "adopt did not leave the lock held with the token", c->id);
    books_hold(c, s);
    if (w->verbose)
        printf("%10lld c%d.%d adopts %.8s of c%d.%d (valid %lld ms)\n", (long long)w->now, c->id, k, tok, fc->id, from,
               (long long)valid_ms);
    /* the token moves with the lock: its record follows the taker */
    observe_slot(w, fc, from);
    close_interval(w, fc, from, w->now);
    if (s->token >= 0) token_done(w, c, k, 0);
    s->token = f->token;
    f->token = -1;
    w->tokens[s->token].c = c->id;
    w->tokens[s->token].slot = k;
    w->tokens[s->token].lock_id = s->lk._id;
    /* faults on the giver's side, or a taker some nodes refuse: the key
       may stay there (as for a lock that cannot reach those nodes) */
    if ((fc != c && fc->fault_gen != w->tokens[s->token].gen) || c->refused_mask) w->tokens[s->token].excused = 1;
    w->tokens[s->token].gen = c->fault_gen;
    s->acquire_gen = c->fault_gen;
    s->round_start = 0;  /* no renewal cadence to hold the first renewal to */
    s->ext_ttl_ms = 0;
    /* a new hold, in the options' mode, its cap counted from now; the
       validity vouched for is the caller's, as an extend's */
    s->access = s->opts_access;
    s->access_gen++;
    s->upgrade_asked = 0;
    s->remoded = 0;
    s->held_since = local_of(c, w->now);
    s->renewals = 0;
    s->user_bound = s->held_since + valid_ms * 1000;
    fc->table_changed = 1;
    books_drop(fc, f);
    redlock_lock_deinit(&f->lk);
    if (f->listening) violation(w, "deinit left the lock listening", fc->id);
    scribble(f);
    f->inited = 0;
    schedule_act(w, fc, from, w->now + rng_range(&w->rng, 0, f->ttl_ms * 1000));
    s->release_at = w->now + rng_range(&w->rng, 0, 2 * s->ttl_ms * 1000);
    schedule_act(w, c, k, s->release_at);
    w->adopted++;
}

static void wake_key(world *w, client *c, int k);

/* redlock_acquire: a new hold, in the mode the options ask for, whatever
   the last hold became (the model says so before the call, whose result
   may come inside it; the last hold's window closes first in its own
   mode). A lock still held keeps its hold (ALREADY_HELD). */
static int sim_acquire(world *w, client *c, int k) {
    slot *s = &c->s[k];
    int rc;
    if (redlock_lock_state(&s->lk) != REDLOCK_STATE_HELD) {
        observe_slot(w, c, k);
        s->access = s->opts_access;
        s->access_gen++;
        /* an upgrade still running ended with the hold: a lock with a
           callback hears it (inside this call if the hold ran out) */
        if (s->no_callback) s->upgrade_asked = 0;
    }
    rc = redlock_acquire(&s->lk);
    if (rc == REDLOCK_OK) c->bk.acquires++;
    return rc;
}

/* redlock_upgrade, and its answer against the hold as the calls made it:
   OK or BUSY (an operation runs) for an update hold, INVALID for another
   mode, NOT_HELD when not held. */
static int sim_upgrade(world *w, client *c, int k) {
    slot *s = &c->s[k];
    redlock_state st;
    redlock_access before;
    long results;
    int asked, rc;
    observe_slot(w, c, k); /* a polled lock's upgrade is taken in first */
    st = redlock_lock_state(&s->lk);
    before = s->access;
    asked = s->upgrade_asked;
    results = s->upgrade_results;
    if (st == REDLOCK_STATE_HELD && before == REDLOCK_ACCESS_UPDATE) s->upgrade_asked = 1; /* its result may come inside */
    rc = redlock_upgrade(&s->lk);
    if (!s->inited) return rc; /* deinitialised inside a callback of the call: DETACHED */
    if (rc != REDLOCK_OK && s->upgrade_results == results) s->upgrade_asked = asked;
    if (rc == REDLOCK_OK) s->cadence_gen = c->fault_gen - 1; /* its attempts take the renewals' place */
    if (rc == REDLOCK_OK || rc == REDLOCK_ERR_BUSY ? st != REDLOCK_STATE_HELD || before != REDLOCK_ACCESS_UPDATE
        : rc == REDLOCK_ERR_NOT_HELD ? st == REDLOCK_STATE_HELD
        : rc == REDLOCK_ERR_INVALID ? before == REDLOCK_ACCESS_UPDATE || st != REDLOCK_STATE_HELD
        : 1)
        violation(w, "upgrade's answer does not fit the hold", c->id);
    return rc;
}

/* redlock_downgrade: the hold is shared from the call on (the model says
   so before the call: its result, and calls from there, may come inside
   it); a writer's window ends at the call. The answer against the hold:
   OK or BUSY for an exclusive or update hold, INVALID for a shared one,
   NOT_HELD when not held. */
static int sim_downgrade(world *w, client *c, int k) {
    slot *s = &c->s[k];
    redlock_state st;
    redlock_access before;
    unsigned gen;
    int rc, writer;
    observe_slot(w, c, k);
    st = redlock_lock_state(&s->lk);
    before = s->access;
    writer = before == REDLOCK_ACCESS_EXCLUSIVE || before == REDLOCK_ACCESS_UPDATE;
    if (st == REDLOCK_STATE_HELD) close_interval(w, c, k, w->now < s->open_bound ? w->now : s->open_bound);
    if (st == REDLOCK_STATE_HELD && writer) s->access = REDLOCK_ACCESS_SHARED;
    gen = s->access_gen;
    rc = redlock_downgrade(&s->lk);
    if (!s->inited) return rc;
    if (rc != REDLOCK_OK && s->access_gen == gen) s->access = before;
    if (rc == REDLOCK_OK) {
        s->cadence_gen = c->fault_gen - 1; /* its round may hold a renewal back */
        s->remoded = 1;
    }
    if (rc == REDLOCK_OK || rc == REDLOCK_ERR_BUSY ? st != REDLOCK_STATE_HELD || !writer
        : rc == REDLOCK_ERR_NOT_HELD ? st == REDLOCK_STATE_HELD
        : rc == REDLOCK_ERR_INVALID ? writer || st != REDLOCK_STATE_HELD
        : 1)
        violation(w, "downgrade's answer does not fit the hold", c->id);
    return rc;
}

/* Any call on slot k, whatever its state: the core must refuse what does
   not apply and stay correct for what does. */
static void tell_failover(world *w, client *c, int n, int64_t ago_ms);

/* The client's node calls, as a transport or a user makes them from a
   callback: what the core says of a node's last restart must be a time
   not later than now, with a reason exactly when there is one; and, where
   nodes fail over anyway, a failover reported there and then (ago up to
   twice the longest ttl: a Sentinel's word for a client that first sees
   a group), which the core must date as told (check_restarted). */
static void node_call(world *w, client *c) {
    int n = (int)rng_range(&w->rng, 0, w->nn - 1);
    redlock_restart why = (redlock_restart)-1;
    int64_t at = redlock_node_restarted_at(&c->rc, n, &why);
    if ((at == INT64_MIN) != (why == REDLOCK_RESTART_NONE) || at > local_of(c, w->now) || (int)why < 0 ||
        why > REDLOCK_RESTART_FAILOVER)
        violation(w, "redlock_node_restarted_at: a time without a reason, a reason without a time, or a time to come",
                  c->id);
    if ((w->p->crashes || w->p->failovers) && rng_chance(&w->rng, 0.5)) {
        tell_failover(w, c, n, rng_range(&w->rng, 0, 2 * (w->max_ttl_ms > 0 ? w->max_ttl_ms : 1000)));
        w->inner_failovers++;
    }
    if (rng_chance(&w->rng, 0.3)) { /* a cluster node's notifications: sharded or not, as the servers allow */
        int on = rng_chance(&w->rng, 0.5);
        if (redlock_node_set_sharded(&c->rc, n, on) != REDLOCK_OK) violation(w, "set_sharded refused", c->id);
        c->sharded_mask = on ? c->sharded_mask | (1u << n) : c->sharded_mask & ~(1u << n);
        if (redlock_node_sharded(&c->rc, n) != on) violation(w, "redlock_node_sharded: not what was told", c->id);
    }
}

static void random_call(world *w, client *c, int k) {
    slot *s = &c->s[k];
    switch (rng_range(&w->rng, 0, 8)) {
    case 8: node_call(w, c); break;
    case 7: wake_key(w, c, s->key); break; /* a notification for nothing: spurious */
    case 6: sim_adopt(w, c, k); break;
    case 0: sim_release(s); break;
    case 1:
        /* a readers-writer handle: an upgrade or a downgrade instead, in
           whatever state the handle is (the calls refuse what they must) */
        if (s->opts_access != REDLOCK_ACCESS_DEFAULT && rng_chance(&w->rng, 0.5)) {
            if (rng_chance(&w->rng, 0.5)) sim_upgrade(w, c, k);
            else sim_downgrade(w, c, k);
            break;
        }
        sim_extend(w, c, s, pick_extend_ttl(w, s));
        break;
    case 2: sim_acquire(w, c, k); break;
    case 3:
        observe_slot(w, c, k);
        close_interval(w, c, k, w->now);
        token_done(w, c, k, 1);
        c->table_changed = 1;
        books_drop(c, s);
        redlock_lock_deinit(&s->lk);
        if (s->listening) violation(w, "deinit left the lock listening", c->id);
        scribble(s);
        s->inited = 0;
        schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, s->ttl_ms * 1000));
        break;
    default:
        init_slot(w, c, k);
        schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, s->ttl_ms * 1000));
        break;
    }
}

/* Some node may have lost keys, by the world's events (and the clients
   keep the rule): its grants may not count yet (RESTARTED). */
static int restarting(const world *w) {
    int n, young = 0;
    for (n = 0; n < w->nn; n++) young |= w->nodes[n].started > -3000000;
    return w->max_ttl_ms >= 0 && (w->p->crashes || w->p->failovers || young);
}

/* Each operation ends with a status from its documented set; OVERLOADED
   only after the transport refused one of the lock's commands. */

static void check_result(world *w, client *c, slot *s, const redlock_result *r) {
    int st = r->status, ok;
    int restarted = st == REDLOCK_ERR_RESTARTED && restarting(w);
    int replicas = st == REDLOCK_ERR_REPLICAS && c->waits_replicas; /* WAIT answered too few */
    int overloaded = st == REDLOCK_ERR_OVERLOADED && (r->op == REDLOCK_OP_RELEASE ? s->release_queue_full : s->queue_full);
    s->queue_full = 0;
    switch (r->op) {
    case REDLOCK_OP_ACQUIRE: {
        int refusing = refuses_quorum(c);
        ok = st == REDLOCK_OK || st == REDLOCK_ERR_LOCKED || st == REDLOCK_ERR_NO_QUORUM || overloaded ||
             st == REDLOCK_ERR_VALIDITY || st == REDLOCK_ERR_CANCELLED || (st == REDLOCK_ERR_TIMEOUT && s->waits) ||
             (st == refused_status(c) && refusing) ||
             (st == REDLOCK_ERR_NO_SCRIPTING && s->fenced && (w->p->legacy || w->p->noscript)) ||
             (st == REDLOCK_ERR_EVICTING && s->refuses && w->nevict > 0) || restarted || replicas;
        if (st == REDLOCK_OK && (r->validity_us <= 0 || redlock_lock_state(&s->lk) != REDLOCK_STATE_HELD)) ok = 0;
        if (st == REDLOCK_OK && s->fenced && (w->p->legacy || w->p->noscript)) {
            violation(w, "a fenced lock was acquired without scripts", c->id);
            return;
        }
        if ((st == REDLOCK_OK && s->fenced) ? (r->fence < 1 || r->fence != redlock_lock_fence(&s->lk)) : r->fence != 0) {
            violation(w, "an acquire's fence is not the documented one", c->id);
            return;
        }
        /* an attempt decided before the refusals were heard may end as
           LOCKED or NO_QUORUM when no retry is left; once a retry is
           planned, the undo hears them all and the acquire ends CONFIG
           (TLS for TLS refusals) */
        if (refusing && s->retry_planned && c->fault_gen == s->acquire_gen && st != refused_status(c) &&
            st != REDLOCK_ERR_CANCELLED) {
            violation(w, "too few nodes accept this client, yet the acquire did not end with CONFIG or TLS", c->id);
            return;
        }
        /* waiting is a time budget: an acquire without wait_ms that lost
           its races spent every retry, each after its delay, however many
           notifications came */
        if (!s->waits && (st == REDLOCK_ERR_LOCKED || st == REDLOCK_ERR_NO_QUORUM || st == REDLOCK_ERR_VALIDITY ||
                          st == REDLOCK_ERR_OVERLOADED || st == REDLOCK_ERR_RESTARTED || st == REDLOCK_ERR_REPLICAS) &&
            s->spent != s->retries) {
            char what[128];
            snprintf(what, sizeof what, "the acquire gave up after %d of its %d retries", s->spent, s->retries);
            violation(w, what, c->id);
            return;
        }
        break;
    }
    case REDLOCK_OP_RELEASE:
        ok = st == REDLOCK_OK || st == REDLOCK_ERR_EXPIRED || st == REDLOCK_ERR_NO_QUORUM || overloaded;
        if (st == REDLOCK_ERR_NO_QUORUM && s->release_queue_full) {
            violation(w, "a release the transport refused ended NO_QUORUM, not OVERLOADED", c->id);
            return;
        }
        break;
    case REDLOCK_OP_EXTEND:
        ok = st == REDLOCK_OK || st == REDLOCK_ERR_NO_QUORUM || overloaded || st == REDLOCK_ERR_CANCELLED ||
             st == REDLOCK_ERR_STOLEN || st == REDLOCK_ERR_QUORUM_LOST || st == REDLOCK_ERR_EXPIRED ||
             st == REDLOCK_ERR_TRANSPORT || (st == REDLOCK_ERR_HOLD_LIMIT && s->capped) ||
             (st == REDLOCK_ERR_EVICTING && s->refuses && w->nevict > 0) || restarted || replicas;
        s->ext_ttl_ms = 0;
        break;
    case REDLOCK_OP_LOST:
        ok = redlock_lock_state(&s->lk) != REDLOCK_STATE_LOST || redlock_lock_lost_reason(&s->lk) == st;
        s->ext_ttl_ms = 0;
        break;
    case REDLOCK_OP_UPGRADE: /* or the hold was lost meanwhile (told first) */
        ok = st == REDLOCK_OK || st == REDLOCK_ERR_LOCKED || st == REDLOCK_ERR_NO_QUORUM || overloaded ||
             st == REDLOCK_ERR_CANCELLED || (st == REDLOCK_ERR_TIMEOUT && s->waits) || st == REDLOCK_ERR_STOLEN ||
             st == REDLOCK_ERR_QUORUM_LOST || st == REDLOCK_ERR_EXPIRED || st == REDLOCK_ERR_TRANSPORT ||
             (st == REDLOCK_ERR_HOLD_LIMIT && s->capped) || restarted || replicas;
        if (st == REDLOCK_OK && redlock_lock_state(&s->lk) != REDLOCK_STATE_HELD) ok = 0;
        break;
    case REDLOCK_OP_DOWNGRADE: /* or a release came first */
        ok = st == REDLOCK_OK || st == REDLOCK_ERR_NO_QUORUM || overloaded || st == REDLOCK_ERR_CANCELLED;
        break;
    default:
        ok = 0;
    }
    if (!ok) violation(w, "result status outside the documented set", c->id);
}

/* Another handle of slot k's owner holds its key now. */
static int owner_holds_elsewhere(world *w, const client *c, int k) {
    int i, j;
    for (i = 0; i < w->nc; i++)
        for (j = 0; j < w->clients[i].ns; j++) {
            const slot *x = &w->clients[i].s[j];
            if ((i == c->id && j == k) || !x->inited || x->owner != c->s[k].owner || x->key != c->s[k].key) continue;
            if (redlock_lock_state(&x->lk) == REDLOCK_STATE_HELD) return 1;
        }
    return 0;
}

static void on_result(redlock_lock *lk, const redlock_result *r) {
    client *c = (client *)r->user;
    world *w = W;
    int k = slot_of(c, lk);
    slot *s;
    int64_t ttl;
    if (k < 0) { violation(w, "result for an unknown lock", c->id); return; }
    s = &c->s[k];
    ttl = s->ttl_ms * 1000;
    s->last_op = r->op;
    check_result(w, c, s, r);
    books_result(c, s, r);
    c->bk.touched = 1;
    /* the header: the undo of a failed acquire and the cleanup after LOST
       are sent before on_result (which may deinitialise the lock) */
    /* (an acquire cancelled by a release that waits for its turn: nothing
       of its attempt is out, and deinit sends the release) */
    if ((r->op == REDLOCK_OP_LOST || (r->op == REDLOCK_OP_ACQUIRE && r->status != REDLOCK_OK)) &&
        lk->_phase != REDLOCK__PH_NONE &&
        !(r->status == REDLOCK_ERR_CANCELLED && lk->_phase == REDLOCK__PH_RELEASE && lk->_heap_where == REDLOCK__WAITING)) {
        int i;
        for (i = 0; i < w->nn; i++)
            if (redlock__n_to_send(&lk->_node[i])) {
                violation(w, "on_result before the undo or cleanup was sent", c->id);
                break;
            }
    }
    if (w->verbose)
        printf("%10lld c%d.%d result op %d status %s votes %d valid_until(true) %lld\n", (long long)w->now, c->id, k,
               r->op, redlock_strerror(r->status), r->votes, (long long)true_of(c, redlock_lock_valid_until(lk)));
    if (r->op == REDLOCK_OP_ACQUIRE) {
        if (r->status == REDLOCK_OK) {
            int64_t roll = rng_range(&w->rng, 0, 99);
            w->acquired++;
            if (s->access == REDLOCK_ACCESS_UPDATE) w->update_holds++;
            else w->rw_holds[s->access]++;
            w->remode_acquires += s->remoded;
            s->remoded = 0;
            if (s->fenced && !w->violations) {
                observe_slot(w, c, k); /* the token record of this hold */
                if (s->fence_token != s->token || s->token < 0) fence_record(w, c, k, r->fence);
            }
            if (s->owner >= 0) w->nested += owner_holds_elsewhere(w, c, k);
            check_stored(w, c, k, r->fence, r->validity_us);
            if (roll < 50) s->release_at = w->now + rng_range(&w->rng, 0, ttl / 2);
            else if (roll < 80) s->release_at = w->now + rng_range(&w->rng, ttl / 2, 4 * ttl);
            else s->release_at = -1;
            if (s->release_at >= 0) schedule_act(w, c, k, s->release_at);
            /* the crowd often cuts a fresh lock short at once: the values it
               leaves expire within milliseconds, and takeovers race for them */
            if (w->p->crowd && rng_chance(&w->rng, 0.7)) {
                s->release_at = -1;
                sim_extend(w, c, s, rng_range(&w->rng, s->ttl_ms / 8, s->ttl_ms / 3));
            }
        } else {
            schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, ttl));
        }
    } else if (r->op == REDLOCK_OP_LOST) {
        w->lost++;
        s->release_at = -1;
        schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, ttl));
    } else if (r->op == REDLOCK_OP_RELEASE) {
        /* reentrant, without any fault: a released entry is gone from every
           node at once (the hash outlives it while the owner's other entries
           re-arm it); stragglers' NOSCRIPT -> EVAL take two round trips of at
           most 1.6 ms. (With faults an earlier delayed reply holds the
           connection's later ones back, beyond what the excuse rule sees.) */
        if (w->p->reentrant && w->calm && s->token >= 0) schedule_leak_check(w, s->token, 5000);
        schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, ttl));
        /* release, then free the handle at once: what a program commonly
           does; whatever the stragglers still owe must not need the lock */
        if (w->p->api && !w->stopping && rng_chance(&w->rng, 0.1)) {
            observe_slot(w, c, k);
            close_interval(w, c, k, w->now);
            token_done(w, c, k, 1);
            c->table_changed = 1;
            books_drop(c, s);
            redlock_lock_deinit(lk);
            if (s->listening) violation(w, "deinit left the lock listening", c->id);
            scribble(s);
            s->inited = 0;
            return;
        }
    } else if (r->op == REDLOCK_OP_EXTEND) {
        w->extends += r->status == REDLOCK_OK;
    } else if (r->op == REDLOCK_OP_UPGRADE) {
        int asked = s->upgrade_asked && s->access == REDLOCK_ACCESS_UPDATE;
        s->cadence_gen = c->fault_gen - 1;
        s->upgrade_results++;
        s->upgrade_asked = 0;
        w->capped_upgrades += r->status == REDLOCK_ERR_HOLD_LIMIT;
        if (!asked) violation(w, "an upgrade's result for a hold that did not ask for one", c->id);
        if (r->status == REDLOCK_OK) {
            /* an update holder is a writer from the report on (its window
               as update ends where the last observation put it) */
            close_interval(w, c, k, w->now < s->open_bound ? w->now : s->open_bound);
            s->access = REDLOCK_ACCESS_EXCLUSIVE;
            observe_slot(w, c, k);
            s->renewals++; /* the attempt that upgraded renewed too */
            check_stored(w, c, k, 0, r->validity_us);
            s->remoded = 1;
            w->upgrades++;
        }
    }
    /* now and then, call the library from inside the callback: on this lock
       (deinit, re-init, re-acquire ...) or on another lock of the client */
    if (w->p->api && !w->stopping && rng_chance(&w->rng, 0.25)) {
        int other = (int)rng_range(&w->rng, 0, c->ns - 1);
        w->inner++;
        if (!c->s[other].inited) return;
        random_call(w, c, other);
    }
}

static void act(world *w, client *c, int k) {
    slot *s = &c->s[k];
    c->bk.touched = 1; /* the calls it makes */
    redlock_state st;
    if (!s->inited) { init_slot(w, c, k); st = REDLOCK_STATE_IDLE; }
    else st = redlock_lock_state(&s->lk);
    if (s->no_callback) {
        /* no result callback: one polling chain looks at the lock now and then */
        if (w->now >= s->poll_due) {
            s->poll_due = w->now + rng_range(&w->rng, 1000, s->ttl_ms * 1000);
            schedule_act(w, c, k, s->poll_due);
        }
        if (st == REDLOCK_STATE_ACQUIRING && rng_chance(&w->rng, 0.9)) return;
        if (st == REDLOCK_STATE_HELD && s->release_at == -1) {
            s->release_at = rng_chance(&w->rng, 0.2) ? -2 : w->now + rng_range(&w->rng, 0, 2 * s->ttl_ms * 1000);
            return;
        }
    }
    if (w->p->api && rng_chance(&w->rng, 0.05)) { random_call(w, c, k); return; }
    if (c->late_loop && st == REDLOCK_STATE_LOST && held_inside(&s->lk) && rng_chance(&w->rng, 0.5)) {
        /* it reads LOST before a timer call reported it: the program drops
           the handle (a new one takes its place) */
        init_slot(w, c, k);
        schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, s->ttl_ms * 1000));
        return;
    }
    if (st == REDLOCK_STATE_IDLE || st == REDLOCK_STATE_LOST) {
        /* a lock that ran out with no timer call since reads LOST; the
           acquire reports that first, and on_result may act on it */
        int ran_out = held_inside(&s->lk), rc = sim_acquire(w, c, k);
        s->release_at = -1;
        if (rc != REDLOCK_OK && s->inited && !(ran_out && rc == REDLOCK_ERR_BUSY))
            violation(w, "acquire refused", c->id);
        /* sometimes give up while acquiring: release() cancels */
        if (rng_chance(&w->rng, 0.05)) schedule_act(w, c, k, w->now + rng_range(&w->rng, 0, 3000 * c->node_timeout_ms));
    } else if (st == REDLOCK_STATE_ACQUIRING) {
        if (sim_release(s) != REDLOCK_OK) violation(w, "cancel refused", c->id);
    } else if (st == REDLOCK_STATE_HELD && s->release_at >= 0 && w->now >= s->release_at) {
        /* readers-writer: upgrade an update hold, or downgrade a writer, and hold on */
        if ((s->access == REDLOCK_ACCESS_UPDATE || s->access == REDLOCK_ACCESS_EXCLUSIVE) && rng_chance(&w->rng, 0.35)) {
            if (s->access == REDLOCK_ACCESS_UPDATE && rng_chance(&w->rng, 0.75)) {
                sim_upgrade(w, c, k);
                s->cadence_gen = c->fault_gen - 1; /* its attempts take the renewals' place */
            } else {
                sim_downgrade(w, c, k);
            }
            if (!s->inited) return; /* deinitialised inside the call's callback */
            s->release_at = w->now + rng_range(&w->rng, 0, s->ttl_ms * 1000);
            schedule_act(w, c, k, s->release_at);
            return;
        }
        /* sometimes extend by hand (any ttl, also during a renewal) and hold on */
        if (rng_chance(&w->rng, w->p->api ? 0.4 : (s->watchdog ? 0.0 : 0.3))) {
            int64_t ext = w->p->api ? pick_extend_ttl(w, s) : 0;
            int rc = sim_extend(w, c, s, ext);
            if (rc == REDLOCK_OK || rc == REDLOCK_ERR_BUSY || rc == REDLOCK_ERR_NOT_HELD) {
                s->release_at = w->now + rng_range(&w->rng, 0, s->ttl_ms * 1000);
                schedule_act(w, c, k, s->release_at);
                return;
            }
            violation(w, "extend refused", c->id);
        }
        s->release_at = -1;
        if (sim_release(s) != REDLOCK_OK) violation(w, "release refused", c->id);
    }
}

/* ---- one schedule ---- */
static void setup(world *w, const profile *p, uint64_t seed) {
    static const int node_counts[] = {1, 3, 5};
    int i;
    memset(w, 0, sizeof *w);
    w->p = p;
    w->seed = seed;
    w->rng.s = seed * 0x2545F4914F6CDD1Dull + 1;
    w->nn = p->crashes == 2 || p->crowd ? 3 : node_counts[rng_range(&w->rng, 0, 2)];
    if (p->jumps == 1 || p->jumps == 4) w->nn = 4;
    if (p->jumps == 2) w->nn = rng_chance(&w->rng, 0.5) ? 3 : 5;
    if (p->jumps == 3) w->nn = 5;
    if (p_evicting(p)) {
        w->nn = rng_chance(&w->rng, 0.5) ? 3 : 5;
        w->nevict = (w->nn - 1) / 2;
    }
    w->nc = p->crowd ? 5 : (int)rng_range(&w->rng, 2, p->crashes == 2 ? 3 : 4);
    w->end = 120 * 1000 * (p->crashes == 2 ? 40 : 12);
    w->drop = rng_chance(&w->rng, 0.5) ? 0.0 : 0.02;
    w->reset = rng_chance(&w->rng, 0.5) ? 0.0 : 0.01;
    w->spike = rng_chance(&w->rng, 0.5) ? 0.0 : 0.03;
    w->dup = p->api && rng_chance(&w->rng, 0.3) ? 0.05 : 0.0;
    w->queue_full = rng_chance(&w->rng, 0.7) ? 0.0 : 0.02;
    /* reentrant: a quarter of the schedules without any fault, where every
       released entry must be gone at once (the key checks excuse faults) */
    w->calm = p->reentrant && rng_chance(&w->rng, 0.25);
    if (w->calm) w->drop = w->reset = w->spike = w->queue_full = 0.0;
    w->late_timers = p->reentrant && rng_chance(&w->rng, 0.5);
    for (i = 0; i < n_keys(w); i++) w->key_ttl_ms[i] = rng_range(&w->rng, 30, 120);
    for (i = 0; i < w->nn; i++) {
        node *nd = &w->nodes[i];
        nd->up = 1;
        nd->run = ++w->runs;
        /* the servers started long before the clients (their grants count
           at once); in the restart profile some only just before them */
        nd->started = -rng_range(&w->rng, 10, 100000) * 1000000;
        if (p->crashes == 2 && rng_chance(&w->rng, 0.3)) nd->started = -rng_range(&w->rng, 0, 3000000);
        nd->durable = p->persist < 0 ? rng_chance(&w->rng, 0.5) : p->persist;
        nd->phase = rng_range(&w->rng, 0, 999999);
        nd->failed_over_at = -1;
    }
    /* cfg.max_ttl_ms: the longest ttl any client asks for (a lock's, up to
       120 ms; an extend's, up to 3x that), or more; now and then seconds,
       so that a server's uptime (whole seconds) decides */
    w->max_ttl_ms = p->api ? 3 * 120 : 120;
    if (rng_chance(&w->rng, 0.2)) w->max_ttl_ms += rng_range(&w->rng, 1, 200);
    if (p->crashes == 2 && rng_chance(&w->rng, 0.3)) {
        /* and locks as long: a server's uptime, in whole seconds, decides to the second */
        w->max_ttl_ms = w->long_ttl_ms = rng_range(&w->rng, 1000, 2500);
    }
    if (!p->rule) w->max_ttl_ms = -1;
    w->announced = p->failovers && rng_chance(&w->rng, 0.5);
}


static void start_clients(world *w) {
    int i, j, k;
    int64_t late;
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        redlock_config cfg;
        redlock_callbacks cb;
        c->id = i;
        c->rate = w->p->drift_bound == 0.0 ? 0.0
                  : (double)rng_range(&w->rng, -1000, 1000) / 1000.0 * w->p->drift_bound;
        if (w->p->crashes == 0 && w->p->drift_bound > 0.1) c->rate = i == 0 ? -w->p->drift_bound : 0.0;
        c->offset = rng_range(&w->rng, 0, 1000000000LL);
        c->wall_offset_ms = w->p->legacy ? rng_range(&w->rng, 0, 1) : 0;
        c->paused_until = -1;
        c->listens = rng_chance(&w->rng, 0.8);
        c->late_loop = w->late_timers && rng_chance(&w->rng, 0.5);
        for (j = 0; j < MAX_NODES; j++) { c->last_req[j] = c->last_rep[j] = 0; }
        c->refused_mask = 0;
        c->sharded_mask = 0;
        c->waits_replicas = 0;
        c->refusal = REDLOCK_ERR_AUTH;
        if (w->p->refusing && i > 0 && rng_chance(&w->rng, 0.6)) {
            c->refused_mask = (unsigned)rng_range(&w->rng, 1, (1 << w->nn) - 1);
            int k = (int)rng_range(&w->rng, 0, 2);
            c->refusal = k == 0 ? REDLOCK_ERR_AUTH : k == 1 ? REDLOCK_ERR_SELECT : REDLOCK_ERR_TLS;
        }
        redlock_config_init(&cfg);
        cfg.node_count = w->nn;
        cfg.node_timeout_ms = rng_range(&w->rng, 2, 6);
        cfg.drift_factor = w->p->drift_factor;
        if (w->p->api && rng_chance(&w->rng, 0.1)) cfg.drift_factor = 0.2; /* large, still safe */
        cfg.retry_count = (int)rng_range(&w->rng, 1, 4);
        if (w->p->api && rng_chance(&w->rng, 0.1)) cfg.retry_count = -1;
        cfg.retry_delay_ms = p_crowd(w) ? rng_range(&w->rng, 1, 3) : rng_range(&w->rng, 2, 20);
        cfg.retry_jitter_ms = p_crowd(w) ? 1 : rng_range(&w->rng, 1, 5);
        if (p_crowd(w)) cfg.retry_count = (int)rng_range(&w->rng, 5, 30);
        memset(&cb, 0, sizeof cb);
        cb.send = cb_send;
        cb.set_timer = cb_timer;
        cb.now_us = cb_now;
        cb.wall_ms = cb_wall;
        cb.random = cb_random;
        cb.on_event = cb_event;
        if (c->listens) cb.listen = cb_listen;
        if (w->p->many) {
            cfg.lock_table = c->id % 2 ? NULL : c->table;
            cfg.lock_table_size = (size_t)1 << rng_range(&w->rng, 0, 2);
        }
        if (w->p->many == 2) cfg.max_rounds = (int)rng_range(&w->rng, 1, 3);
        cfg.max_ttl_ms = w->max_ttl_ms;
        if (w->p->failovers == 2 || (w->p->failovers == 1 && rng_chance(&w->rng, 0.3))) {
            /* WAIT after each grant (section 4, Deployments) */
            cfg.wait_replicas = 1;
            c->waits_replicas = 1;
            cfg.wait_timeout_ms = rng_range(&w->rng, 1, 4);
        }
        c->telling = -1;
        if (redlock_client_init(&c->rc, &cfg, &cb, c) != REDLOCK_OK) { fprintf(stderr, "client init failed\n"); exit(2); }
        for (j = 0; j < w->nevict; j++) /* before any reply of theirs, as the adapters' INFO memory */
            if (redlock_node_set_evicts(&c->rc, j, REDLOCK_EVICTS_ALL) != REDLOCK_OK) { fprintf(stderr, "set_evicts failed\n"); exit(2); }
        c->node_timeout_ms = cfg.node_timeout_ms;
        c->max_rounds = cfg.max_rounds;
        c->drift_factor = cfg.drift_factor;
        c->clock_drift_ms = cfg.clock_drift_ms;
        c->retry_delay_ms = cfg.retry_delay_ms;
        c->retry_jitter_ms = cfg.retry_jitter_ms;
        c->retry_count = cfg.retry_count;
        /* plain profiles: one lock on one key; the API profiles: up to three
           handles, on the same key or on two */
        c->ns = w->p->many ? (int)rng_range(&w->rng, 4, MAX_SLOTS)
                : w->p->reentrant ? (int)rng_range(&w->rng, 2, 4)
                : w->p->api && !w->p->crowd ? (int)rng_range(&w->rng, 1, 3) : 1;
        /* a client that starts late first connects to nodes that may have
           restarted (the restart profile) or failed over (where Sentinel
           tells: a client first seeing a silent failover cannot know)
           just before */
        late = (w->p->crashes == 2 || w->announced) && i > 0 && rng_chance(&w->rng, 0.4)
                   ? rng_range(&w->rng, 0, w->end / 2) : 0;
        for (k = 0; k < c->ns; k++) {
            c->s[k].key = w->p->api && !w->p->crowd ? (int)rng_range(&w->rng, 0, n_keys(w) - 1) : 0;
            c->s[k].token = -1;
            init_slot(w, c, k);
            schedule_act(w, c, k, late + rng_range(&w->rng, 0, c->s[k].ttl_ms * 1000));
        }
    }
}

static void plan_faults(world *w) {
    const profile *p = w->p;
    int64_t ttl = 120 * 1000;
    event e;
    int k, count;
    if (w->calm) return;
    if (p->crashes) {
        count = p->crashes == 2 ? 8 : (int)rng_range(&w->rng, 0, 2);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_CRASH;
            e.n = (int)rng_range(&w->rng, 0, w->nn - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            push(w, e);
        }
    }
    if (p->jumps) { /* on nodes 0 .. jumpy-1, by up to twice the longest ttl */
        int jumpy = p->jumps == 2 ? w->nn / 2 + 1 : p->jumps == 4 ? 2 : 1;
        count = (int)rng_range(&w->rng, 10, 40);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_JUMP;
            e.n = (int)rng_range(&w->rng, 0, jumpy - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            e.status = (int)rng_range(&w->rng, ttl / 4, 2 * ttl); /* how far, us */
            push(w, e);
        }
    }
    if (p->failovers) { /* each node's replica syncs now and then; 1 to 4 failovers */
        for (k = 0; k < w->nn; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_SYNC;
            e.n = k;
            e.t = rng_range(&w->rng, 0, 5000);
            push(w, e);
        }
        count = (int)rng_range(&w->rng, 1, 4);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_FAILOVER;
            e.n = (int)rng_range(&w->rng, 0, w->nn - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            push(w, e);
        }
    }
    if (p_evicting(p)) { /* memory pressure on the evicting nodes: a key or a counter goes */
        count = (int)rng_range(&w->rng, 20, 80);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_EVICT;
            e.n = (int)rng_range(&w->rng, 0, w->nevict - 1);
            e.t = rng_range(&w->rng, ttl / 4, w->end - ttl);
            e.status = (int)rng_range(&w->rng, 0, 2 * n_keys(w) - 1); /* key k: its lock (k), its counter (n_keys + k) */
            push(w, e);
        }
    }
    if (p->pauses) {
        count = (int)rng_range(&w->rng, 0, 2);
        for (k = 0; k < count; k++) {
            memset(&e, 0, sizeof e);
            e.kind = E_PAUSE;
            e.c = (int)rng_range(&w->rng, 0, w->nc - 1);
            e.t = rng_range(&w->rng, ttl, w->end - ttl);
            e.status = (int)rng_range(&w->rng, ttl / 10, 2 * ttl);  /* duration */
            push(w, e);
        }
    }
}

static void crash(world *w, int n, int persist, int64_t down_for) {
    node *nd = &w->nodes[n];
    int i;
    if (!nd->up) return;
    nd->up = 0;
    w->keys_gone = 1;
    if (!persist) {
        for (i = 0; i < MAX_KEYS; i++) {
            nd->e[i].used = 0;
            nd->counter[i] = 0; /* the one loss fencing does not survive (section 11) */
        }
        if (w->ncounter_lost < 8) w->counter_lost[w->ncounter_lost] = w->now;
        w->ncounter_lost++;
    }
    nd->lost_release |= nd->sha_release;
    nd->lost_extend |= nd->sha_extend;
    nd->sha_release = nd->sha_extend = 0;
    nd->rlost |= nd->rsha;
    nd->rsha = 0;
    /* every client's connection to this node breaks */
    for (i = 0; i < w->nc; i++) { w->clients[i].conn_epoch[n]++; fault(&w->clients[i]); }
    {
        event e;
        memset(&e, 0, sizeof e);
        e.kind = E_RESTART;
        e.n = n;
        e.t = w->now + down_for;
        push(w, e);
    }
}

/* A floor division by a second, for times before 0 too. */
static int64_t whole_s(int64_t us) { return us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000); }
/* INFO's uptime_in_seconds: the server's whole-second clock now less the
   same clock at its start, up to a second more than the time really up. */
static int64_t uptime_s(const node *nd, int64_t now) { return whole_s(now + nd->phase) - whole_s(nd->started + nd->phase); }

/* A new connection's INFO answer reaches client c: its transport reads it
   with redlock_info_life, adds what CONFIG GET appendfsync said, and tells
   the core before the replies behind it. */
static void tell_life(world *w, client *c, int n, uint32_t run, int64_t up_s, int durable) {
    char info[200];
    redlock_node_life life;
    uint32_t h = run * 0x9E3779B1u;
    int len = snprintf(info, sizeof info, "# Server\r\nredis_version:7.0.15\r\nrun_id:%08x%08x%08x%08x%08x\r\n"
                       "uptime_in_seconds:%lld\r\n# Persistence\r\naof_enabled:%d\r\n", h, h ^ 0x5bd1e995u, h + 1u,
                       h ^ 0xffffu, run, (long long)up_s, durable);
    if (redlock_info_life(info, (size_t)len, &life) != 0 || life.uptime_s != up_s || strlen(life.run_id) != 40 ||
        life.durable || life.aof != durable) {
        violation(w, "redlock_info_life misread an INFO", c->id);
        return;
    }
    life.durable = durable;
    c->telling = n;
    c->telling_failover = 0;
    c->told = life;
    c->telling_run = run;
    if (redlock_node_set_life(&c->rc, n, &life) != REDLOCK_OK) violation(w, "set_life refused", c->id);
    c->telling = -1;
    c->told_run[n] = run;
    w->lives++;
}

/* Client c's transport tells the core node n's group failed over ago_ms
   ago (a +switch-master heard: 0; the sentinels' last failover, to a
   client that first sees the group). */
static void tell_failover(world *w, client *c, int n, int64_t ago_ms) {
    /* also from inside a callback of another such call: the outer one's
       words come back after */
    int telling = c->telling, failover = c->telling_failover;
    int64_t ago = c->telling_ago_ms;
    c->telling = n;
    c->telling_failover = 1;
    c->telling_ago_ms = ago_ms;
    if (redlock_node_failed_over(&c->rc, n, ago_ms) != REDLOCK_OK) violation(w, "failed_over refused", c->id);
    c->telling = telling;
    c->telling_failover = failover;
    c->telling_ago_ms = ago;
}

/* Node n's replica becomes its primary: the writes it had not received
   yet are gone (keys, deletions, counts), another process answers (its
   run_id, up for long), every connection breaks; Sentinel tells the
   clients (in the schedules that announce failovers), each in its time,
   before or after it reconnects. */
static void failover(world *w, int n) {
    node *nd = &w->nodes[n];
    int i;
    memcpy(nd->e, nd->replica, sizeof nd->e);
    memcpy(nd->counter, nd->replica_counter, sizeof nd->counter);
    w->keys_gone = 1;
    if (w->ncounter_lost < 8) w->counter_lost[w->ncounter_lost] = w->now; /* counts may come back lower */
    w->ncounter_lost++;
    nd->lost_release |= nd->sha_release;
    nd->lost_extend |= nd->sha_extend;
    nd->sha_release = nd->sha_extend = 0;
    nd->rlost |= nd->rsha;
    nd->rsha = 0;
    nd->run = ++w->runs;
    nd->started = w->now - rng_range(&w->rng, 10, 100000) * 1000000;
    nd->failed_over_at = w->now;
    w->failovers++;
    for (i = 0; i < w->nc; i++) {
        w->clients[i].conn_epoch[n]++;
        fault(&w->clients[i]);
        if (w->announced) {
            event e;
            memset(&e, 0, sizeof e);
            e.kind = E_SWITCH;
            e.c = i;
            e.n = n;
            e.t = w->now + rng_range(&w->rng, 0, 3000);
            push(w, e);
        }
    }
}

/* In-flight requests on a broken connection: the client sees an error. */
static void fail_inflight(world *w, event *e) {
    event err = *e;
    err.kind = E_ERR;
    err.status = REDLOCK_ERR_TRANSPORT;
    err.m = NULL;
    err.epoch = w->clients[e->c].conn_epoch[e->n];
    err.t = w->now;
    push(w, err);
}

static int deliver_to_client(world *w, event *e) {
    client *c = &w->clients[e->c];
    if (c->paused_until > w->now) { /* process stopped: handle it when it resumes */
        e->t = c->paused_until;
        push(w, *e);
        return 0;
    }
    return 1;
}

/* A release notification for key k reaches client c: every handle on k
   hears it, whatever its state. One that waited out its retry delay with
   nothing running must start its next attempt at once, unless a
   notification started one less than the rate limit ago: then no sooner
   than the limit's end (and not later). */
static void wake_key(world *w, client *c, int k) {
    int j;
    for (j = 0; j < c->ns; j++) {
        slot *s = &c->s[j];
        int idle_wait, rc, attempt, limited;
        if (!s->inited || s->key != k) continue;
        attempt = s->lk._attempt;
        idle_wait = redlock_lock_waiting(&s->lk) && s->lk._phase == REDLOCK__PH_NONE;
        /* within the rate limit after the last attempt a notification
           started, and before the retry is due (which starts it anyway) */
        limited = s->woke_at >= 0 && cb_now(c) < s->woke_at + wake_gap_us(c) && cb_now(c) < s->due_at;
        w->wakes++;
        w->wakes_waiting += redlock_lock_waiting(&s->lk);
        if (redlock_lock_state(&s->lk) == REDLOCK_STATE_ACQUIRING)
            s->woken = s->lk._phase == REDLOCK__PH_ACQUIRE ? 2 : s->woken ? s->woken : 1;
        rc = redlock_lock_wake(&s->lk);
        if (rc != REDLOCK_OK) violation(w, "wake refused", c->id);
        /* (the attempt may have failed and be waiting again at once: its
           sends were refused) */
        if (idle_wait && !limited && s->inited && redlock_lock_state(&s->lk) == REDLOCK_STATE_ACQUIRING &&
            s->lk._attempt == attempt)
            violation(w, "a wake did not start the waiting attempt", c->id);
        if (idle_wait && limited && s->inited && redlock_lock_state(&s->lk) == REDLOCK_STATE_ACQUIRING) {
            w->wakes_limited++;
            /* not dropped: its attempt starts when the limit ends, or its retry sooner */
            if (s->lk._attempt != attempt) violation(w, "a wake started an attempt within the rate limit", c->id);
            else if (redlock_next_deadline(&c->rc) > s->woke_at + wake_gap_us(c))
                violation(w, "a wake within the rate limit was dropped", c->id);
        }
    }
}

static void step(world *w, event e) {
    client *c = &w->clients[e.c];
    node *nd = e.kind == E_ACT || e.kind == E_WAKE ? NULL : &w->nodes[e.n]; /* E_ACT: e.n is a slot; E_WAKE: a key */
    w->events++;
    switch (e.kind) {
    case E_REQ:
        if (e.m->extend_of >= 0) w->tokens[e.m->extend_of].extends_out--; /* lands, or never will */
        e.m->extend_of = -1;
        if (e.epoch != c->conn_epoch[e.n] || !nd->up) {  /* connection died on the way */
            if (e.epoch == c->conn_epoch[e.n]) fail_inflight(w, &e);
            free_msg(e.m);
            return;
        }
        execute(w, nd, e.m, e.c, e.tag);
        {   /* a reentrant lock's scripts check the key's type: never a plain command on its hash */
            slot *sl = slot_of_tag(c, e.tag);
            if (sl && sl->owner >= 0 && e.m->reply.type == REDLOCK_REPLY_ERROR && e.m->rstr &&
                strncmp(e.m->rstr, "WRONGTYPE", 9) == 0)
                violation(w, "a reentrant lock sent a command its hash refuses (WRONGTYPE)", c->id);
        }
        if (w->verbose) {
            int a;
            printf("%10lld n%d <- c%d #%llx:", (long long)w->now, e.n, e.c, (unsigned long long)(e.tag >> 8));
            for (a = 0; a < e.m->argc; a++) printf(" %.40s", e.m->argv[a]);
            printf("  => type %d int %lld str %.60s\n", e.m->reply.type, e.m->reply.integer, e.m->rstr ? e.m->rstr : "");
        }
        e.kind = E_REP;
        e.t = w->now + net_delay(w, c);
        if (e.t <= c->last_rep[e.n]) e.t = c->last_rep[e.n] + 1;
        c->last_rep[e.n] = e.t;
        if (faults_on(w) && rng_chance(&w->rng, w->drop)) { fault(c); free_msg(e.m); return; }
        if (faults_on(w) && rng_chance(&w->rng, w->dup)) {
            /* the same answer delivered twice: the second must be ignored */
            event d = e;
            d.m = copy_reply(e.m);
            d.t = e.t + rng_range(&w->rng, 0, 3000);
            push(w, d);
            w->dups++;
        }
        push(w, e);
        return;
    case E_REP:
        if (!deliver_to_client(w, &e)) return;
        if (e.epoch == c->conn_epoch[e.n]) {
            int taken = awaited(c, e.n, e.tag);
            if (w->verbose)
                printf("%10lld c%d <- n%d #%llx: reply type %d%s\n", (long long)w->now, e.c, e.n,
                       (unsigned long long)(e.tag >> 8), e.m->reply.type, taken ? "" : " (stale)");
            e.m->reply.str = e.m->rstr;
            redlock_on_reply(&c->rc, e.tag, &e.m->reply);
            /* a GETSET or SETNX answer the core takes settles what the
               token's value there is (a stale one settles nothing) */
            if (taken && e.m->argc == 3 && (is(e.m, 0, "GETSET") || is(e.m, 0, "SETNX"))) {
                const char *tok = legacy_token(e.m->argv[2], e.m->argvlen[2]);
                if (tok) set_unanswered(c, e.n, tok, 0);
            }
            observe(w, c);
        }
        free_msg(e.m);
        return;
    case E_ERR:
        if (!deliver_to_client(w, &e)) return;
        redlock_on_error(&c->rc, e.tag, e.status);
        observe(w, c);
        return;
    case E_TIMER: {
        int k;
        if (!deliver_to_client(w, &e)) return;
        if (e.gen != c->timer_gen) return;
        redlock_on_timer(&c->rc);
        observe(w, c);
        for (k = 0; k < c->ns; k++)
            if (c->s[k].inited && held_valid(&c->s[k].lk) && cb_now(c) >= c->s[k].lk._valid_until)
                violation(w, "holder not told: lock past validity still HELD after its timer", c->id);
        return;
    }
    case E_ACT:
        if (!deliver_to_client(w, &e)) return;
        if (w->stopping) return;
        act(w, c, e.n);
        observe(w, c);
        return;
    case E_CRASH: {
        /* back at once, or after a while: never kept down for the max TTL
           (the clients' rule, not the operators, keeps holders apart) */
        int64_t ttl = 120 * 1000;
        int64_t down = rng_chance(&w->rng, 0.2) ? rng_range(&w->rng, ttl, 3 * ttl) : rng_range(&w->rng, 100, ttl / 4);
        if (w->stopping) return;
        if (w->verbose)
            printf("%10lld n%d crashes (%s), down %lld us\n", (long long)w->now, e.n, nd->durable ? "keys kept" : "keys lost",
                   (long long)down);
        crash(w, e.n, nd->durable, down);
        return;
    }
    case E_RESTART: /* a new process: a new run_id, its uptime from now */
        nd->up = 1;
        nd->run = ++w->runs;
        nd->started = w->now;
        w->restarts++;
        return;
    case E_INFO: /* the node answers a new connection's INFO (and CONFIG GET appendfsync) */
        if (e.epoch != c->conn_epoch[e.n] || !nd->up) return; /* the connection died: the next one asks */
        e.kind = E_LIFE;
        e.gen = nd->run;
        e.tag = (redlock_tag)uptime_s(nd, w->now);
        e.status = nd->durable;
        e.t = w->now + net_delay(w, c);
        if (e.t <= c->last_rep[e.n]) e.t = c->last_rep[e.n] + 1;
        c->last_rep[e.n] = e.t;
        push(w, e);
        return;
    case E_LIFE:
        if (!deliver_to_client(w, &e)) return;
        if (e.epoch != c->conn_epoch[e.n]) return;
        if (w->verbose)
            printf("%10lld c%d <- n%d: INFO run %u uptime %llu s%s\n", (long long)w->now, e.c, e.n, (unsigned)e.gen,
                   (unsigned long long)e.tag, e.status ? " (appendfsync always)" : "");
        /* a Sentinel transport's first sight of the group: the sentinels
           say when it last failed over (to the ms, never sooner) */
        if (w->announced && !c->told_run[e.n] && nd->failed_over_at >= 0)
            tell_failover(w, c, e.n, (w->now - nd->failed_over_at) / 1000);
        tell_life(w, c, e.n, e.gen, (int64_t)e.tag, e.status);
        observe(w, c);
        return;
    case E_SWITCH:
        if (!deliver_to_client(w, &e)) return;
        if (w->verbose) printf("%10lld c%d: n%d failed over (+switch-master)\n", (long long)w->now, e.c, e.n);
        tell_failover(w, c, e.n, 0);
        observe(w, c);
        return;
    case E_SYNC: /* the replica has every write up to now */
        if (w->stopping) return;
        memcpy(nd->replica, nd->e, sizeof nd->e);
        memcpy(nd->replica_counter, nd->counter, sizeof nd->counter);
        e.t = w->now + rng_range(&w->rng, 200, 20000);
        push(w, e);
        return;
    case E_FAILOVER:
        if (w->stopping || !nd->up) return;
        if (w->verbose) printf("%10lld n%d fails over to its replica\n", (long long)w->now, e.n);
        failover(w, e.n);
        return;
    case E_PAUSE:
        if (w->stopping) return;
        if (c->paused_until < w->now + e.status) c->paused_until = w->now + e.status;
        fault(c);
        return;
    case E_LEAK:
        leak_check(w, e.status);
        return;
    case E_WAKE:
        if (!deliver_to_client(w, &e)) return;
        wake_key(w, c, e.n);
        observe(w, c);
        if (e.status == 0 && rng_chance(&w->rng, 0.03)) { /* a flood of forged ones follows (status 1) */
            int i;
            for (i = 0; i < 12; i++) {
                e.t = w->now + (i + 1) * rng_range(&w->rng, 100, 1500);
                e.status = 1;
                push(w, e);
            }
        }
        return;
    case E_EVICT: { /* a key with a TTL or without one (a counter) is evicted */
        int k = e.status % n_keys(w);
        if (w->stopping) return;
        w->keys_gone = 1;
        if (e.status < n_keys(w)) {
            w->evictions += nd->e[k].used;
            memset(&nd->e[k], 0, sizeof nd->e[k]);
        } else {
            w->evictions += nd->counter[k] != 0;
            nd->counter[k] = 0;
        }
        return;
    }
    case E_JUMP: { /* the node's clock leaps ahead: its keys expire that much sooner */
        int k;
        if (w->stopping) return;
        w->keys_gone = 1;
        for (k = 0; k < MAX_KEYS; k++) {
            int i;
            if (nd->e[k].used && nd->e[k].expire_at >= 0) nd->e[k].expire_at -= e.status;
            for (i = 0; i < nd->e[k].nrw; i++) nd->e[k].rw[i].exp -= e.status;
        }
        return;
    }
    }
}

/* The end of a run: faults stop, every client releases what it holds or
   cancels what it is acquiring, and the world runs until it is quiet. */
static void stop_all(world *w) {
    int i, k;
    w->stopping = 1;
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        if (c->paused_until > w->now) c->paused_until = w->now;
        for (k = 0; k < c->ns; k++) {
            redlock_state st;
            if (!c->s[k].inited) continue;
            st = redlock_lock_state(&c->s[k].lk);
            if (st == REDLOCK_STATE_HELD || st == REDLOCK_STATE_ACQUIRING) sim_release(&c->s[k]);
        }
        observe(w, c);
    }
    while (w->hn && !w->violations) {
        event e = pop(w);
        if (e.t > w->now) w->now = e.t;
        step(w, e);
    }
    for (i = 0; i < w->nc; i++)
        for (k = 0; k < w->clients[i].ns; k++) {
            slot *s = &w->clients[i].s[k];
            if (s->inited && s->token >= 0) leak_check(w, s->token);
        }
}

static int trace;
static int run_one(world *w, const profile *p, uint64_t seed) {
    int i, k;
    W = w;
    setup(w, p, seed);
    w->verbose = trace;
    start_clients(w);
    plan_faults(w);
    while (w->hn && w->heap[0].t <= w->end && !w->violations) {
        event e = pop(w);
        w->now = e.t;
        step(w, e);
        if (w->clients[e.c].bk.touched) books_check(w, &w->clients[e.c], 0); /* the client the event was for */
    }
    w->now = w->end;
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        for (k = 0; k < c->ns; k++)
            if (c->paused_until <= w->now && c->late_call <= w->now && c->s[k].inited && held_valid(&c->s[k].lk) &&
                cb_now(c) > c->s[k].lk._valid_until)
                violation(w, "holder not told at end of run", i);
    }
    if (!w->violations) stop_all(w);
    for (i = 0; i < w->nc; i++) {
        client *c = &w->clients[i];
        observe(w, c);
        if (!w->violations && !c->bk.blind) {
            books_check(w, c, 1);
            w->books_checked++;
        }
        for (k = 0; k < c->ns; k++) close_interval(w, c, k, w->now < c->s[k].open_bound ? w->now : c->s[k].open_bound);
    }
    check_exclusion(w);
    while (w->hn) { event e = pop(w); free_msg(e.m); }
    for (i = 0; i < w->nc; i++) {
        for (k = 0; k < w->clients[i].ns; k++) redlock_lock_deinit(&w->clients[i].s[k].lk);
        redlock_client_deinit(&w->clients[i].rc);
    }
    free(w->heap);
    free(w->iv);
    free(w->fh);
    return w->violations ? 1 : 0;
}

static const profile *find_profile(const char *name) {
    size_t i;
    for (i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(profiles[i].name, name) == 0) return &profiles[i];
    return NULL;
}

int main(int argc, char **argv) {
    long runs = 1000, k, failing = 0, events = 0, acquired = 0, lost = 0, extends = 0, inner = 0, leaks = 0, dups = 0, adopted = 0,
         books_checked = 0,
         nested = 0, wakes = 0, wakes_waiting = 0, woke = 0, woke_lost = 0, wakes_limited = 0, fence_holds = 0, fence_pairs = 0, rw_holds[3] = {0, 0, 0}, shared_overlaps = 0, upgrades = 0, update_holds = 0,
         remode_acquires = 0, reinits_in_flight = 0, capped_upgrades = 0,
         by_n[MAX_NODES + 1] = {0}, first_failing = -1, live = 0, evictions = 0, decoded = 0, shown = 0, ran,
         restarts = 0, failovers = 0, lives = 0, discounted = 0, reported[4] = {0, 0, 0, 0},
         inner_failovers = 0, waits = 0, waits_unacked = 0;
    uint64_t seed = 1;
    const char *pname = "modern", *label = NULL;
    const profile *p;
    int expect = 0, first_only = 0, verbose = 0, i;
    static world w;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc) pname = argv[++i];
        else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
        else if (!strcmp(argv[i], "--expect-violations")) expect = 1;
        else if (!strcmp(argv[i], "--first")) first_only = 1;
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--trace")) trace = 1;
        else {
            fprintf(stderr, "usage: sim [--runs N] [--seed S] [--profile NAME] [--label NAME] [--expect-violations [--first]] [-v] [--trace]\n");
            return 2;
        }
    }
    p = find_profile(pname);
    if (!p) { fprintf(stderr, "sim: unknown profile '%s'\n", pname); return 2; }
    if (!label) label = p->name;
    for (k = 0; k < runs; k++) {
        uint64_t s = seed + (uint64_t)k;
        int bad = run_one(&w, p, s);
        events += w.events;
        by_n[w.nn]++;
        acquired += w.acquired;
        lost += w.lost;
        extends += w.extends;
        inner += w.inner;
        leaks += w.leak_checks;
        dups += w.dups;
        adopted += w.adopted;
        books_checked += w.books_checked;
        nested += w.nested;
        wakes += w.wakes;
        wakes_waiting += w.wakes_waiting;
        woke += w.woke;
        woke_lost += w.woke_lost;
        wakes_limited += w.wakes_limited;
        fence_holds += (long)w.fhn;
        rw_holds[0] += w.rw_holds[0];
        rw_holds[1] += w.rw_holds[1];
        rw_holds[2] += w.rw_holds[2];
        shared_overlaps += w.shared_overlaps;
        upgrades += w.upgrades;
        remode_acquires += w.remode_acquires;
        reinits_in_flight += w.reinits_in_flight;
        capped_upgrades += w.capped_upgrades;
        update_holds += w.update_holds;
        fence_pairs += w.fence_pairs;
        decoded += w.decoded;
        shown += w.shown;
        evictions += w.evictions;
        restarts += w.restarts;
        failovers += w.failovers;
        lives += w.lives;
        discounted += w.discounted;
        inner_failovers += w.inner_failovers;
        waits += w.waits;
        waits_unacked += w.waits_unacked;
        for (i = 1; i < 4; i++) reported[i] += w.reported[i];
        live += w.acquired_events > 0;
        if (bad) {
            failing++;
            if (first_failing < 0) first_failing = k + 1;
            if (!expect || verbose || failing == 1)
                printf("# seed %llu: %s (N=%d clients=%d)\n#   replay: make sim PROFILE=%s SEED=%llu RUNS=1\n",
                       (unsigned long long)s, w.why, w.nn, w.nc, p->name, (unsigned long long)s);
            if (!expect && failing >= 5) break;
            if (expect && first_only) break; /* a mutation check needs one */
        }
    }
    ran = k < runs ? k + 1 : runs; /* (it stops at the fifth failing schedule) */
    printf("# profile %s: %ld schedules (N=1: %ld, N=3: %ld, N=4: %ld, N=5: %ld), %ld events, %ld acquisitions, "
           "%ld extends ok, %ld calls inside on_result, %ld duplicated replies, %ld lost reported, "
           "%ld tokens adopted, %ld key checks, %ld schedules with violations\n",
           p->name, ran, by_n[1], by_n[3], by_n[4], by_n[5], events, acquired, extends, inner, dups, lost,
           adopted, leaks, failing);
    printf("# profile %s: %ld clients' statistics agreed with what their callers saw (the others had a lock\n"
           "# without on_result)\n", p->name, books_checked);
    if (p->reentrant) printf("# profile %s: %ld nested acquisitions (another handle of the owner held the key)\n", p->name, nested);
    printf("# profile %s: %ld release notifications handed to handles, %ld of them to one waiting to retry\n", p->name,
           wakes, wakes_waiting);
    printf("# profile %s: %ld attempts started by them (%ld lost, keeping the retry), %ld held back by the rate limit\n",
           p->name, woke, woke_lost, wakes_limited);
    if (p->rw > 0)
        printf("# profile %s: acquisitions: %ld shared, %ld exclusive, %ld update (%ld upgraded), %ld plain; %ld pairs\n"
               "# of holds overlapped as allowed (shared with shared or with one update)\n", p->name, rw_holds[1],
               rw_holds[2], update_holds, upgrades, rw_holds[0], shared_overlaps);
    if (p->rw > 0)
        printf("# profile %s: %ld acquisitions after a downgrade or upgrade of the handle's last hold, %ld re-inits\n"
               "# with a round in flight, %ld upgrades ended by the hold cap\n", p->name, remode_acquires,
               reinits_in_flight, capped_upgrades);
    if (p->fenced > 0)
        printf("# profile %s: %ld fenced holds, %ld pairs of them checked for increasing fences\n", p->name, fence_holds,
               fence_pairs);
    if (p_evicting(p)) printf("# profile %s: %ld keys and counters evicted\n", p->name, evictions);
    if (p->crashes || p->failovers)
        printf("# profile %s: %ld restarts, %ld failovers, %ld INFOs told; reported: %ld new run_ids, %ld first\n"
               "# sights of a server younger than the bound, %ld failovers (%ld told from inside callbacks); %ld\n"
               "# grants not counted (RESTARTED)\n",
               p->name, restarts, failovers, lives, reported[REDLOCK_RESTART_RUN_ID], reported[REDLOCK_RESTART_UPTIME],
               reported[REDLOCK_RESTART_FAILOVER], inner_failovers, discounted);
    if (p->failovers)
        printf("# profile %s: %ld WAITs answered, %ld of them 0 (a lagging replica: the vote fails)\n", p->name, waits,
               waits_unacked);
    if (expect) {
        if (failing && first_only)
            printf("ok sim-%s finds a violation at schedule %ld (of at most %ld)\n", label, first_failing, runs);
        else if (failing)
            printf("ok sim-%s finds violations (%ld of %ld schedules, first at schedule %ld)\n", label, failing, runs,
                   first_failing);
        else
            printf("not ok sim-%s finds no violation in %ld schedules\n", label, runs);
        return failing ? 0 : 1;
    }
    /* safety alone would pass a core that never sends anything: most
       schedules must see a lock taken (contention may starve a few) */
    if (p->api && live * 10 < ran * 8) {
        printf("not ok sim-%s: only %ld of %ld schedules acquired a lock\n", label, live, ran);
        return 1;
    }
    /* (the decoded values' count here: the summary lines above stay those of
       the simulator without that check, for sim_compare.sh) */
    printf("%s sim-%s %ld schedules without violation (%ld acquired a lock; %ld stored values decoded, %ld holds "
           "shown by a quorum)\n", failing ? "not ok" : "ok", label, runs, live, decoded, shown);
    return failing ? 1 : 0;
}
