/* redlock.h - distributed locks over Redis, one header, no dependencies.

   Do this:
       #define REDLOCK_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the
   implementation. Every other file includes it without the define.

       #define REDLOCK_IMPLEMENTATION
       #include "redlock.h"

   The built-in clocks use clock_gettime(): in the implementation file,
   include this header before any system header (it then asks for POSIX
   itself) or build with -D_POSIX_C_SOURCE=200809L; otherwise the build
   stops with a message saying so. Without POSIX at all, define
   REDLOCK_NO_BUILTIN_CLOCKS and pass the now_us and wall_ms callbacks.

   CONTENTS
       1. What it is
       2. Quick start
       3. The transport contract (send / reply / timer)
       4. Algorithms and guarantees
       5. Compile-time options
       6. Errors
       7. Threads and callbacks
       8. States: rounds, calls, options that combine, commands sent
       9. Reentrant locks: one owner, many holds
      10. Release notifications: waiting less
      11. Fencing tokens: a paused holder's late write refused
      12. Readers-writer locks: shared, exclusive and update
      13. Reading a lock's stored value
      14. Statistics: what a client did, counted
       (API declarations follow; the implementation is below them;
        the license is at the end of the file)

   IMPLEMENTATION MAP (each part starts with a "---- name ----" line)
       states, steps and scripts  the lock's and nodes' states as enums,
                      the step table (one step per command, EVALSHA and
                      EVAL as one step), the Lua scripts and their SHA1s
       built-in clocks and randomness
       small helpers
       what kind of lock  the kind table: a kind's script per operation,
                      its arguments, and the one "needs scripts" rule
       what a lock keeps outside its handle  key, label, owner and fence
                      strings; times derived from the options
       statistics     section 14's counts and histograms, and the one
                      place a lock's state changes (redlock__set_state)
       rounds         starting a round, each node's first step, building
                      a step's command, tags, and reading each answer
       decisions      what votes decide for acquire, fence, extend,
                      release, upgrade and downgrade; retries, renewals,
                      the next round, a lock's deadline
       deadlines      the pairing heap of the locks' deadlines
       turns          how many rounds run at once; the rounds waiting
                      for one
       the lock table locks filed by address, found by a reply's tag
       setup and teardown  redlock_config_init .. redlock_lock_deinit
       may I start X now  the operation x activity table (BUSY,
                      NOT_HELD, ALREADY_HELD), the prologue of every call
                      on a lock (redlock__begin), then those calls, the
                      transport's entry points, the queries and the names
       reading a lock's stored value  section 13's decoders

   API (declared below)
       setup      redlock_config_init, redlock_client_init,
                  redlock_client_deinit, redlock_lock_init, redlock_lock_deinit
       operations redlock_acquire, redlock_release, redlock_extend,
                  redlock_lock_adopt, redlock_lock_wake, redlock_upgrade,
                  redlock_downgrade
       transport  redlock_on_reply, redlock_on_error, redlock_on_timer,
                  redlock_next_deadline, redlock_tag_node
       queries    redlock_lock_state, redlock_lock_remaining_us,
                  redlock_lock_valid_until, redlock_lock_pending,
                  redlock_lock_followup, redlock_lock_waiting, redlock_lock_lost_reason,
                  redlock_lock_key, redlock_lock_fence, redlock_lock_access,
                  redlock_lock_token, redlock_lock_owner, redlock_node_mode,
                  redlock_clock_us, redlock_node_evicts, redlock_node_restarted_at,
                  redlock_lock_restart_bound_us
       health     redlock_node_set_evicts, redlock_info_evicts,
                  redlock_node_set_life, redlock_info_life, redlock_node_failed_over
       names      redlock_strerror, redlock_state_name, redlock_event_name,
                  redlock_release_script, redlock_extend_script,
                  redlock_reentrant_acquire_script, redlock_reentrant_release_script,
                  redlock_reentrant_extend_script, redlock_fence_acquire_script,
                  redlock_fence_write_back_script, redlock_reentrant_fence_acquire_script,
                  redlock_reentrant_fence_write_back_script, redlock_fenced_set_script,
                  redlock_rw_acquire_script, redlock_rw_release_script,
                  redlock_rw_extend_script, redlock_rw_upgrade_script,
                  redlock_rw_set_mode_script
       values     redlock_value_from_get, redlock_value_from_hash,
                  redlock_value_fence
       statistics redlock_client_stats, redlock_client_stats_reset,
                  redlock_histogram_quantile

   1. WHAT IT IS
   ------------
   A lock state machine for Redis, the "Redlock" algorithm: a lock is held
   when a majority (N/2+1) of N independent Redis masters hold the key with
   this lock's random token. N = 1 is the ordinary single-instance lock.
   The core never does I/O, never sleeps and never allocates per
   operation (only once per redlock_lock_init, and the client's lock
   table as it grows: section 5, Memory): it hands commands to your `send`
   callback, asks for wake-ups through `set_timer`, reads time through
   clock callbacks, and is fed replies, errors and timer expiries by you
   (or by one of the adapters in adapters/).

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
               // held: act while redlock_lock_remaining_us(lk) > 0 (renewed
               // by the watchdog if enabled); redlock_release(lk) when done.
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
   Every adapter takes its nodes as a redlock_node and reads node lists
   ("10.0.0.1:6379,redis://:pw@10.0.0.2:6379/1,/run/redis.sock", or
   $REDLOCK_NODES) with redlock_parse_nodes() from adapters/redlock_nodes.h,
   which a transport of your own may include alone (sans-I/O).

   3. THE TRANSPORT CONTRACT
   -------------------------
   * send(user, node, cmd, tag): transmit `cmd` (argv/argvlen, binary safe)
     to node `node` (0-based, always below node_count). The argv pointers are valid only during the
     call (and only until the lock is deinitialised, should a reply
     delivered inside send lead to that): serialise or copy them first.
     Return 0 when queued, or a negative redlock_status (e.g.
     REDLOCK_ERR_TRANSPORT; below -128: TRANSPORT); a failed send
     counts as that node's failed vote and no reply is expected. A
     transport whose own queue for the node is full returns
     REDLOCK_ERR_QUEUE_FULL: an operation that then misses its quorum ends
     with OVERLOADED, not NO_QUORUM (the nodes may be fine).
   * Later (or inside send itself, for synchronous transports) deliver what
     came back: redlock_on_reply(client, tag, reply) or
     redlock_on_error(client, tag, status). Every request has its own tag.
     A NULL reply counts as a malformed one (PROTOCOL); an on_error status
     that is not negative, or below -128, counts as TRANSPORT.
     Answers to tags the core no longer waits for (already answered, an
     earlier step or attempt, a lock since deinitialised) are recognised
     and ignored, so a transport may deliver late, twice, or never.
   * Replies of one node must arrive in the order the commands were sent to
     it (any TCP connection does this); replies of different nodes may
     interleave freely.
   * set_timer(user, deadline_us): there is one timer per client. Each call
     replaces the previous deadline; REDLOCK_NO_DEADLINE cancels it. When it
     expires call redlock_on_timer(client); a deadline already passed
     (a round waiting for its turn can start, section 5) means at once.
     Early or spurious calls are harmless. Alternatively poll
     redlock_next_deadline().
   * Node health (optional): when a connection to a node opens, read its
     INFO and pass redlock_info_evicts()'s answer (when not -1) to
     redlock_node_set_evicts(client, node, ...) (section 4, Eviction), and
     redlock_info_life()'s (with durable set when CONFIG GET appendfsync
     says "always" and INFO's aof_enabled is 1) to
     redlock_node_set_life() (section 4, Restarts), before the replies of
     the commands behind it. Not told, the core takes a node to evict
     nothing and never to have restarted.
   * now_us(user): a monotonic clock in microseconds. wall_ms(user): the wall
     clock in milliseconds since 1970, not negative (used only by the legacy
     algorithm).
     random(user, buf, len): fill buf with unpredictable bytes, return 0.
     Each may be NULL: built-ins use CLOCK_BOOTTIME where it exists (it
     keeps counting during system suspend, as the servers' TTLs do; else
     CLOCK_MONOTONIC), CLOCK_REALTIME and the OS CSPRNG (getrandom(2), else
     /dev/urandom). The built-in validity clock is public as
     redlock_clock_us(): every adapter and the tool use it, for the core and
     for their own deadlines. A now_us of your own should count suspended
     time too: a clock that stops while the machine sleeps lets a holder
     wake up believing in validity the servers already expired.

   4. ALGORITHMS AND GUARANTEES
   ----------------------------
   Acquire: `SET key token NX PX ttl` on all nodes in parallel; the token is
   128 random bits (32 hex digits), new for every redlock_acquire(). With
   opts.label (e.g. "web1:4242:"), each token is the label followed by
   those digits, so that whoever reads the key (redlock inspect, a GET) can
   tell which machine or process holds it. The label is no secret and adds
   no randomness; a token stays one string compared by equality (by the
   scripts, by SET, and in the legacy value "expiry:token", whose expiry
   ends at the first ':'), so other Redlock clients, for which a token is
   an opaque value, interoperate. The attempt succeeds
   when a quorum said OK and the validity
       ttl - elapsed - (ttl * drift_factor + clock_drift_ms)
   is still positive; the core decides as soon as the votes allow and does
   not wait for stragglers. A failed attempt is undone on *all* nodes (a late
   OK may have landed) and retried after retry_delay +- retry_jitter, up to
   retry_count retries. Waiting is a time budget: a release notification
   (section 10) may start an attempt before its retry is due, and one that
   loses spends no retry (the retry keeps its time), so an acquire gives up
   after about retry_count x retry_delay (+- jitter) whatever
   notifications arrive; wait_ms is the explicit form. With wait_ms, a
   retry that would start too late for its round (node_timeout_ms) to end
   by the deadline (wait_ms after the call) is moved up to the last moment
   that still can; if that attempt fails too, the acquire ends with
   TIMEOUT at the deadline, not before (later only if the attempt had to
   wait for its turn, section 5).
   A node that refuses the client's TLS, credentials or database (a vote
   failed with REDLOCK_ERR_TLS, REDLOCK_ERR_AUTH or REDLOCK_ERR_SELECT, or a
   NOAUTH error reply) is counted as refusing until it next answers a
   command. When a failed attempt leaves too few other nodes for a quorum,
   the acquire ends at once, whatever retry_count and wait_ms say (no retry
   can win): with REDLOCK_ERR_TLS when one of the refusing nodes refused
   TLS (its AUTH and SELECT were not even tried), else with
   REDLOCK_ERR_CONFIG. The first attempt of every redlock_acquire() is
   always sent (the node may have been fixed). A transport reports TLS
   only for what no retry cures (the adapters: a certificate refused, an
   alert from the server, an answer to the handshake that is not TLS);
   a connection refused, reset or silent during a handshake is the
   network's, and is retried.
   The undo, and the cleanup after a lost lock, send the script itself
   (EVAL): one command per node. If the previous operation's undo or
   cleanup is still running when redlock_acquire is called, the first
   attempt waits for it (at most node_timeout_ms): it needs the old token.
   Release: a compare-and-delete script (EVALSHA, EVAL on NOSCRIPT): only
   the token's owner deletes. A NOSCRIPT that comes after the release's
   node timeout (the release was decided without that node) still gets
   its EVAL, until the lock's next operation: deleting is idempotent, and
   the key would otherwise stay for its whole ttl on a node that lost its
   scripts (a restart, a failover, SCRIPT FLUSH). Extend: a compare-and-PEXPIRE script. PEXPIRE
   *sets* the remaining time: from the moment an extend round starts (yours
   or the watchdog's), the validity is at most ttl - drift from then,
   whatever the outcome; success needs a quorum, and then the validity is
   exactly that. A watchdog renewal sends the lock's own ttl, so it brings
   a longer extend of yours back to the lock's ttl.
   Watchdog (opts.watchdog): renews every renew_every_ms (default ttl/3)
   while held; each lock of a client but the first renews the first time
   a fixed share of up to 1/16 of that period earlier (and keeps that
   phase), so that locks taken together do not all renew in the same
   instant. When the lock ends other than by your release, on_result is
   called with op REDLOCK_OP_LOST no later than the validity runs out, and
   r->status says why: REDLOCK_ERR_EXPIRED (the validity ran out: no
   watchdog, a shortening extend, or a renewal that came too late),
   REDLOCK_ERR_STOLEN (a node holds another token), REDLOCK_ERR_QUORUM_LOST
   (a majority no longer has the key), REDLOCK_ERR_TRANSPORT (the watchdog's
   renewals could not reach a quorum before the validity ran out),
   REDLOCK_ERR_REPLICAS (they could, but too few replicas acknowledged
   them: cfg.wait_replicas, Deployments below) or
   REDLOCK_ERR_HOLD_LIMIT (max_hold_ms / max_extensions reached, so renewal
   stopped). A failed extend of yours leaves no mark of its own: the lock
   then ends as EXPIRED unless the watchdog renews it.
   Clocks: safety assumes each client's monotonic clock runs within
   drift_factor of real time and servers keep keys for their TTL (a server
   that loses keys at a restart or failover: Restarts, below). A server whose
   clock jumps forward (beyond the drift allowance) expires keys early, as
   if it had lost them; as a holder may have only a bare majority, N nodes
   (quorum q) survive that on fewer than 2q - N of them: one node when N
   is even, none when N is odd.
   Restarts: a server that restarts without its keys (no persistence, or
   an RDB snapshot older than the keys), or a Sentinel group that fails
   over to a replica the key had not reached yet, forgets a holder's key:
   without more, another client could take the lock there while the
   holder still counts on it. So a node that may have lost keys counts no
   grant until the bound has passed since then: the keys a holder set there
   before were set at most one ttl before the event and have expired by
   then, so nobody can still count on them. The bound is the lock's ttl, or
   cfg.max_ttl_ms if longer: set that to the longest ttl any client of
   these nodes uses. Its refusals still count, and its key is still set
   (and renewed, and released), so it counts again once the bound is past.
   The adapters read each node's INFO (run_id, uptime_in_seconds,
   aof_enabled) and CONFIG GET appendfsync once per connection and tell
   the core (redlock_node_set_life): a node may have lost keys when its
   run_id changed since the client last saw it (from the moment it is
   seen), when its server started less than the bound ago and does not
   keep keys across restarts (appendonly yes with appendfsync always
   does; from the start), and when its group failed over
   (redlock_node_failed_over: from the moment a new primary is seen, or
   from the failover the sentinels report to a client that first sees
   the group). Such an event
   is reported (REDLOCK_EV_NODE_RESTARTED), and a vote it discounts fails
   with REDLOCK_ERR_RESTARTED: an acquire with too few other nodes fails
   with RESTARTED until the bound has passed (the client's clock counts
   it); one with a wait (wait_ms) retries no sooner than when such a node
   counts again, one without retries as usual. The cost: right after servers without
   such persistence start, for one bound, only the other nodes can grant,
   and a lone node grants nothing. The fence counters follow the rule too:
   a counter reset by a restart makes no fence. Limits: an INFO refused
   (an ACL without +info) tells nothing (the node counts at once), and a
   CONFIG refused counts as no such persistence; a failover that nobody
   announces (a primary replaced behind one address, without Sentinel) is
   seen by a client that saw the old primary (its run_id changes), not by
   one that first connects after it; and the default bound (each lock's
   own ttl) holds only when every client locks a key with the same ttl:
   with mixed ttls set cfg.max_ttl_ms. cfg.max_ttl_ms < 0 turns
   the rule off (grants count at once, the events are still reported).
   Deployments: a node is one server, or (in the node lists of the
   adapters, redlock_nodes.h) a primary and its replicas behind Sentinel,
   or a Redis Cluster; each is ONE node of the quorum (several independent
   groups or clusters make a Redlock quorum). A Sentinel group is served
   by every adapter and the tool (the libev one asks the sentinels on its
   loop, without blocking): the primary is asked of the
   sentinels at each connection, checked with ROLE, and every command's
   answer is confirmed by the sentinels before it counts, so that a holder
   cannot renew on a former primary that Sentinel has not yet turned into
   a replica; its failovers are restarts (above). The adapters also
   watch the sentinels' +switch-master: a failover is told as it
   happens, between commands (the blocking adapters' whenever they poll:
   their calls, their watchdog thread, their run). Its primary never votes
   through a replica. A Redis Cluster is served by every adapter and the
   tool (the routing itself is in adapters/redlock_cluster.h, sans-I/O):
   each command goes to the master that serves its key's hash slot, MOVED
   and ASK are followed once,
   TRYAGAIN and CLUSTERDOWN are a failed vote. Every key of a lock must
   live in one slot: a fenced lock's counter (REDLOCK_FENCE_PREFIX + key)
   shares its key's slot only when the key has a hash tag, e.g.
   "{orders}:lock", and the adapter refuses a fenced lock without one on a
   cluster node (REDLOCK_ERR_INVALID at lock init); readers-writer marks
   and reentrant counts live in the key's own hash. A cluster has several
   masters and the core one life per node: the adapter keeps each master's
   and reports a master's restart, or a slot taken over by its master's
   replica (a failover; a planned migration is not one), with
   redlock_node_failed_over(). Over TLS (rediss-sentinel://,
   rediss-cluster://; every adapter and the tool), the sentinels, CLUSTER
   SLOTS and every server are spoken to in TLS.
   Replicas (cfg.wait_replicas = n > 0, like Redisson's syncSlaves; not
   with a Redis Cluster node, where WAIT, which names no key, has no
   master to go to: the adapters refuse the pair at init): a node's grant
   (an acquire, a fenced acquire's write-back, a renewal or extend, an
   upgrade; in every mode and for every kind) is followed by
   `WAIT n timeout` on that node, and counts only once WAIT answers n or
   more; fewer, or WAIT refused (an error: a server or proxy without
   WAIT, an ACL without +wait), fail that node's vote with
   REDLOCK_ERR_REPLICAS. An acquire that then misses its quorum is undone
   and retried as usual, and ends with REPLICAS when such votes made the
   difference; a renewal that misses it is tried again, and a lock whose
   renewals never get through is lost with REPLICAS. Releases do not wait.
   The timeout is cfg.wait_timeout_ms (default: node_timeout_ms; never 0,
   which would make WAIT block; below the adapters' command_timeout_ms,
   which drops a node that late), and such rounds last node_timeout_ms +
   wait_timeout_ms; the WAIT's time is part of the round, so it comes out
   of the validity like any other delay (measured from the round's start,
   as always). What it buys: a failover that promotes a replica which
   acknowledged the write keeps the key, so fewer holds are lost (or
   discounted for a bound, Restarts above) at a failover. What it does
   not: WAIT is not consensus and makes Redis no more strongly consistent
   (a write acknowledged by n replicas may still be lost: a replica that
   acknowledged is not the one promoted, or restarts without the key; an
   unacknowledged write is not rolled back, the key stays on the primary
   until the undo or its ttl). The restart rule stays the guarantee; WAIT
   lowers how often it has to act. The cost: one more round trip per grant
   plus the replication delay (bench/README.md), and while replicas lag,
   no grant at all from that node (also for up to a second after a replica
   has synced: its primary sends it writes once it has acknowledged the
   sync, though INFO already says it is online).
   Eviction: a server with maxmemory set evicts keys when its memory runs
   short, as its maxmemory-policy says: volatile-* evicts keys with a time
   to live (every lock key: mutual exclusion breaks, for every kind of
   lock), allkeys-* any key (the fence counters too, which have none: a
   fence can then come out lower, section 11); noeviction refuses writes
   instead (a failed vote, no lost key). A Redis used as a cache is no
   place for locks. The adapters read each node's INFO memory (maxmemory,
   maxmemory_policy) once per connection and tell the core
   (redlock_node_set_evicts; a transport of your own can do the same with
   redlock_info_evicts). A node that may evict is reported
   (REDLOCK_EV_NODE_EVICTS, once per change), and a lock that refuses such
   nodes (opts.refuse_evicting > 0; by default every fenced lock) does not
   count what they grant: the vote of an acquire, a fence's write-back, a
   renewal or an upgrade fails with REDLOCK_ERR_EVICTING (the command
   still goes there, and the key is released there as anywhere), the node's
   count makes no fence, and when the nodes known to evict leave too few
   for a quorum the acquire ends at once with EVICTING. Other locks count
   them, at the risk above. Limits: a policy changed at run time (CONFIG
   SET maxmemory-policy) is seen at the client's next connection to the
   node; an INFO refused (an ACL without +info) or without a policy known
   here leaves what the client knew (at first: evicts nothing); a proxy
   may answer INFO for another server than the one that keeps the keys.
   Legacy mode (servers without SET NX PX or without scripting): per node,
   mode AUTO (default) switches a node for the client's life:
   * to full legacy when SET ... NX PX is answered with "unknown command",
     "syntax error" or "wrong number of arguments" AND `INFO server` then
     reports a redis_version below 2.6.12 (the first with SET NX PX). A
     proxy or a renamed command gives the same errors; if INFO shows a newer
     server, or is refused, or has no version, the node is not switched,
     its vote fails (REDLOCK_ERR_SERVER) and it is not asked again;
   * to no-scripting when EVAL/EVALSHA is answered with NOPERM or "unknown
     command": release and extend become GET + compare + DEL / PEXPIRE.
     An ACL's denial of a key rather than of the command (Redis 6 and 7.0:
     "NOPERM this user has no permissions to access one of the keys used
     as arguments"; 7.2: "NOPERM No permissions to access a key"; a
     script's own call: "... can't access at least one of the keys ...",
     "... no permissions to access the '...' key") is told apart by its
     text: no switch, the node's vote fails with REDLOCK_ERR_NOPERM, in
     every mode and for every kind of lock, and an acquire that can no
     longer reach a quorum ends with NOPERM at once (as with
     NO_SCRIPTING). The ACL a user needs: the lock keys (e.g. ~app:*),
     for fenced locks the counters too (~redlock:fence:*, section 11),
     and for release notifications the channels (&redlock:*, section 10).
   Full legacy is the SETNX algorithm: the value is "expiry_ms:token" with an
   absolute wall-clock expiry; an expired value is taken over only if GETSET
   returns exactly the value read. Its guarantees are weaker: it needs wall
   clocks synchronised to within clock_drift_ms, and release / extend are
   check-then-act over two round trips (release skips the DEL when less
   than node_timeout + drift of the lock remains, to keep that window from
   racing the expiry). Another client's GETSET that arrives late can move
   the written expiry earlier, so with legacy nodes the validity also leaves
   aside one node_timeout, and one-way network delays are assumed below it.
   That late GETSET writes its own client's expiry: every client of a key
   must use the same ttl on legacy nodes. A node whose GETSET lost a race,
   or whose GETSET answer has not come back, is never deleted by this
   client: a release, undo or cleanup leaves such a key (and one close to
   its expiry) to expire, and says so with REDLOCK_EV_KEY_LEFT. Prefer
   modern servers. Legacy keys have no expiry on the server (the expiry
   lives in the value): a legacy holder that dies leaves a key that modern
   clients (SET NX PX, as other Redlock libraries use) see as held until a
   legacy client takes it over or someone deletes it. Do not mix legacy
   and modern clients on the same keys.

   5. COMPILE-TIME OPTIONS (define before including)
       REDLOCK_IMPLEMENTATION  emit the implementation in this file
       REDLOCK_STATIC          make every function static (private copy)
       REDLOCK_API             linkage of the API (default: extern)
       REDLOCK_MAX_NODES       max nodes per client (default 16, <= 255)
       REDLOCK_MAX_KEY         max key length in bytes (default 512)
       REDLOCK_LOCK_TABLE      entries of the lock table inside the client,
                               where a client without a table of its own
                               starts (default 64; a power of two); it
                               grows from there (Many locks, below)
       REDLOCK_ASSERT(c)       internal consistency checks (default assert)
       REDLOCK_MALLOC(size), REDLOCK_FREE(p)  where a lock's key is kept
                               (default malloc and free; define both):
                               one block per redlock_lock_init; and the
                               client's lock table once it outgrows
                               REDLOCK_LOCK_TABLE
       REDLOCK_RANDOM_DEVICE   file the built-in random source reads when
                               getrandom(2) is absent (default "/dev/urandom")
       REDLOCK_NO_BUILTIN_CLOCKS  no built-in clocks: now_us and wall_ms
                               are required (strict C without POSIX; on a
                               POSIX system without clock_gettime declared
                               the build stops and says what to define)
       REDLOCK_THREAD_ID()     the calling thread's id, a uint64_t, for the
                               default owner of reentrant locks (default: a
                               hash of pthread_self() on POSIX, else 0)
       REDLOCK_WAKES_PER_DELAY most attempts release notifications start per
                               retry delay (default 8; section 10)
       REDLOCK_NO_STATS        count nothing (section 14): the statistics
                               read all zero; the client keeps the same
                               layout, so files built with and without it
                               may share clients
   Every millisecond setting (config and lock options, extend's ttl) must be
   in 0 .. 2^40 (about 34 years); larger values are refused (INVALID, or
   TTL for ttls), so that microsecond arithmetic never overflows.

   Many locks on one client: no operation walks the client's locks. A
   reply finds its lock through the client's lock table (its tag carries
   the table entry), the next deadline is the root of a heap threaded
   through the locks, and redlock_on_timer visits only the locks that are
   due. The table grows with the locks: it starts with REDLOCK_LOCK_TABLE
   entries inside the client, and redlock_lock_init doubles it (a block
   from REDLOCK_MALLOC, every lock moved into it) when the client's locks
   would outnumber its entries, up to 2^24 entries; so finding a lock
   takes about one step at any count. The doubling costs that one
   lock_init a pass over the locks (O(1) per lock_init over time); no other
   call allocates, and the table never shrinks (freed by
   redlock_client_deinit). Who wants no allocation at all gives the client
   a table of its own instead (config.lock_table, a power of two, about
   one entry per lock), which never grows, for example
       static redlock_lock *table[1 << 17];   (up to ~100,000 locks)
       cfg.lock_table = table;
       cfg.lock_table_size = 1 << 17;
   with more locks than entries a reply then costs about locks / entries
   steps. A tag's lock id is 40 bits: the address's hash (24 bits; with a
   table of 2^b entries of one's own, b bits) below a count of lock_inits,
   so the ids of one address repeat every 2^16 lock_inits on the client
   (2^(40-b)); a new life then starts its requests' sequence numbers (16
   bits of the tag) elsewhere, so a late reply to a dead lock's request is
   taken for a request of the new life (d requests earlier or later in its
   life than the dead one's in its own) only if at least 2^30 / (d + 1)
   lock_inits on the client came between them (2^(54-b) / (d + 1)).
   Turns: a round's node timeout measures the nodes, not the client's own
   queue. A burst of operations (10,000 releases at once, say) would
   otherwise wait behind one another in the transport, the servers'
   pipelines and the client's handling of the answers, and time out
   there. So each round of an operation (an acquire attempt with its
   write-back, a release, an extend or renewal, an upgrade attempt, a
   downgrade) holds a turn from its start until it is decided, and a
   client hands out a window of at most config.max_rounds turns (default
   128; < 0: no bound). A round that finds none free waits: nothing of it
   is sent and its clock (node timeout, and the validity it will count)
   has not started; redlock_acquire() and the others still return OK at
   once. Held locks get a turn first, the one whose validity ends first
   first (a held lock whose renewal still waits when its validity ends is
   told LOST then); then the other rounds, in order of arrival. A free
   turn is handed on at the next redlock_on_timer, which the timer asks
   for at once. The undo, cleanup and settle that follow a round hold no
   turn and go out at once, as do a decided round's stragglers. The
   window starts at 16 (or max_rounds if less; with no bound it is
   unbounded from the start) and, while rounds wait, adapts: a round
   decided later than half the node timeout after its start halves it,
   a sooner one adds a turn, at most once per round trip (so keep
   node_timeout_ms above twice a round trip). A release that
   still waits for its turn when its lock is deinitialised is sent then,
   unanswered. The first rounds of a burst start inside the calls that
   issue it: a caller that takes longer than a node timeout to issue the
   burst before it runs its loop again times those out itself.

   Memory: clients and lock handles are yours to place (static, stack,
   arrays, inside your own structs). On 64-bit Linux at the default limits
   a redlock_client is 1240 bytes and a redlock_lock 512 (about 256 plus 16
   per node of REDLOCK_MAX_NODES). redlock_lock_init copies the key once
   into one block from REDLOCK_MALLOC (REDLOCK_KEY_BLOCK_SIZE(key length)
   bytes: the key, the token and the next token's bytes; a label twice its
   length more; a reentrant lock
   REDLOCK_MAX_OWNER + 9 more for its owner id; a fenced lock its
   counter's name, REDLOCK_FENCE_PREFIX and the key, more), freed by
   redlock_lock_deinit, by initialising the handle again on the same
   client, or by redlock_client_deinit; refused, lock_init says NOMEM.
   The lock table, once it outgrows the client (above), is one block of 8
   bytes per entry on 64-bit (1 MB at 100,000 locks); refused, lock_init
   says NOMEM and nothing changed. Nothing else is allocated, and no
   operation allocates. A handle that is dropped without either deinit
   keeps its block, a client dropped without redlock_client_deinit its
   table.

   6. ERRORS
   Every function that can fail returns a redlock_status: 0 is success,
   negative is an error; redlock_strerror() names it. Caller errors
   (-1..-19) mean the call did nothing. Outcomes (-20..-39) arrive in
   redlock_result.status. Node errors (-40..-59) describe one node (events,
   send/on_error statuses); a node error is a failed vote, never fatal.
   Some node errors are an acquire's outcome too, when too many nodes
   give them for a quorum to be possible: TLS (section 4), NO_SCRIPTING,
   NOPERM and EVICTING; RESTARTED and REPLICAS (section 4) when they made
   the difference after every retry. REPLICAS is also a LOST reason.

   7. THREADS AND CALLBACKS
   No global mutable state. A client and its locks are used by one thread
   at a time; different clients may live on different threads. Inside any
   callback you may call redlock_acquire/release/extend/upgrade/downgrade,
   redlock_lock_adopt and redlock_lock_wake on any lock of the client,
   redlock_lock_deinit and redlock_lock_init (also on the lock being
   reported), and redlock_on_reply/on_error (synchronous transports). Do
   not call redlock_client_deinit inside a callback, and nothing of the
   library inside on_event (events are for logging and metrics).
   The undo of a failed acquire and the cleanup after LOST are sent before
   on_result is called, so deinitialising the lock there does not leave
   the key behind on nodes with scripts; nor does deinitialising a lock
   that reads LOST before its timer call came (deinit sends the cleanup).
   Steps that need an answer first (GET then DEL on nodes without
   scripting; EVAL after NOSCRIPT in a release) are dropped by deinit:
   redlock_lock_pending() says whether a round is still running,
   redlock_lock_followup() whether a step of that kind may still come.

   8. STATES
   A lock is in one of five states (redlock_lock_state()): IDLE, ACQUIRING,
   HELD, RELEASING, LOST. Inside a state the lock runs at most one round at
   a time (redlock_lock_pending()): one chain of commands per node, decided
   by the votes as soon as they allow. The rounds below carry the names
   of the implementation's phases (REDLOCK__PH_*), so that each can be
   found there. ACQUIRE, FENCE, RELEASE, EXTEND, UPGRADE and DOWNGRADE hold
   a turn from their start until decided, and may first wait in line for
   one, nothing sent yet (section 5, Turns); ROLLBACK, SETTLE and CLEANUP
   follow a decision (an attempt failed, an upgrade given up, the lock
   lost), hold no turn and go out at once.

       IDLE or LOST --redlock_acquire()--> ACQUIRING (the first attempt
                  waits for an undo or cleanup still running: it needs
                  the old token)
       IDLE or LOST --redlock_lock_adopt()--> HELD (no round running only;
                  validity as told, 0: unknown; a watchdog renews at once)

       ACQUIRING: attempts, each with the acquire's one token
         +--> attempt: round ACQUIRE
         |      quorum and validity left --------------------------> HELD
         |      the same, fenced: round FENCE, the write-back where the
         |        attempt won (same turn); a quorum of write-backs and
         |        validity left -------------------------------------> HELD
         |      no quorum possible, or no validity left: failed (LOCKED,
         |        NO_QUORUM, VALIDITY, ...); a wake heard meanwhile is kept
         |      v
         |    undo: round ROLLBACK, on every node (a late grant may land)
         |      too many nodes refuse for any retry to win (CONFIG, TLS;
         |        NO_SCRIPTING, NOPERM, EVICTING) ----------> IDLE (at once)
         |      no retry left ------------------------------------> IDLE
         |      wait_ms: a retry due too late for its round to end by the
         |        deadline moves up to the last moment that can; if that
         |        one fails too, TIMEOUT at the deadline ----------> IDLE
         |      v
         |    between attempts (no round; listen(1) when the retry delay
         |    is at least the node timeout), once the undo is done:
         +---- the retry is due (retry_delay +- jitter; spends a retry)
         +---- a release notification (redlock_lock_wake(); at most
               REDLOCK_WAKES_PER_DELAY per retry delay): starts an
               attempt now; if it loses, the retry keeps its time
         redlock_release() --> RELEASING (the acquire: CANCELLED)
         IDLE: on_result ACQUIRE, not OK; listen(0); an undo runs on

       HELD: one activity at a time beside the validity's clock
         renewal (opts.watchdog): round EXTEND every renew_every_ms
           quorum -------------------------> HELD, validity from its start
           undecided (too few answers): HELD, tried again after the
             retry delay or a third of the validity left if sooner; never
             through before the validity ends --------> LOST TRANSPORT
           too many say "not ours" for a quorum --> LOST STOLEN / QUORUM_LOST
           max_hold_ms or max_extensions reached: no more renewals; at
             the validity's end ------------------------> LOST HOLD_LIMIT
         extend (redlock_extend()): round EXTEND, as a renewal; on_result
           EXTEND; a failure leaves no mark (the lock then runs out)
         upgrade (redlock_upgrade(), an UPDATE hold): attempts, each a
           round UPGRADE that also renews the hold, retried as an acquire
           (retry_count, retry delay, wait_ms), the first once a running
           renewal ends; on_result UPGRADE:
           quorum converted -------------------------> HELD as EXCLUSIVE
           given up (LOCKED, TIMEOUT, HOLD_LIMIT, ...): round SETTLE takes
             the nodes it converted back to update ---> HELD as UPDATE
           too many say "not ours" for a quorum -----> LOST QUORUM_LOST
         downgrade (redlock_downgrade(), an EXCLUSIVE or UPDATE hold):
           SHARED from the call; round DOWNGRADE, on_result DOWNGRADE
           says whether a quorum of nodes agrees
         the validity runs out (whatever runs) ----------> LOST EXPIRED
           (or the reason a renewal left: TRANSPORT, REPLICAS, HOLD_LIMIT)
         redlock_release() --> RELEASING (an extend, upgrade or downgrade
           of yours still running: CANCELLED)

       RELEASING: round RELEASE
         a quorum deleted (OK), or decided otherwise (EXPIRED: a quorum
         answered, too few still held the key; NO_QUORUM, ...)
                                           ------> IDLE, on_result RELEASE
       LOST: round CLEANUP deletes what is still ours (sent before
         on_result LOST); release and extend say NOT_HELD

   What moves a lock: the API calls; redlock_on_reply/on_error (a node's
   answer completes its step, or moves it to the next step of its chain);
   redlock_on_timer (round deadlines, retry delays, renewal times, the end
   of validity, a free turn). Between two of these, redlock_lock_state()
   reads the clock: a HELD lock past its validity already reads LOST, and
   each call that acts on the lock first reports it (on_result LOST).
   A decided round's stragglers finish quietly (their round reads CLEANUP
   after a release or downgrade): a node's next step still goes out (the
   DEL after a GET, the EVAL after a NOSCRIPT, also one that comes after
   the release's node timeout), and a fenced attempt's late win gets its
   write-back; redlock_lock_followup() says whether such a step may still
   come.

   What a call does, by state and by what a HELD lock is doing (BUSY and
   the other errors: refused, nothing changed):
                  IDLE,     ACQUIR-  RELEAS-  HELD, and running:
                  LOST      ING      ING      nothing  renewal  extend,
                                                                upgrade,
                                                                downgrade
       acquire    starts    BUSY     BUSY     ALREADY_HELD
       adopt      HELD (1)  BUSY     BUSY     ALREADY_HELD
       release    NOT_HELD  cancels  BUSY     starts   starts   cancels
       extend     NOT_HELD  NOT_HELD NOT_HELD starts   BUSY     BUSY
       upgrade    NOT_HELD  NOT_HELD NOT_HELD starts   after it BUSY
       downgrade  NOT_HELD  NOT_HELD NOT_HELD starts   BUSY     BUSY
   (1) BUSY while a round still runs (an undo, a cleanup). Upgrade: INVALID
   unless the hold is UPDATE; downgrade: INVALID unless it is EXCLUSIVE or
   UPDATE. A settle or a downgrade's stragglers still running count as
   "nothing", except for downgrade (BUSY) and upgrade (after it).
   redlock_lock_wake() acts only on ACQUIRING (section 10).

   Which options combine (redlock_lock_init() refuses the others):
       reentrant + fence    one fence per owner's hold (section 11)
       access + reentrant, access + fence, an access value not one of
                            the four                               INVALID
       reentrant, fence or access, with fewer than a quorum of nodes not
                            configured REDLOCK_MODE_LEGACY    NO_SCRIPTING
                            (the options are checked first: one that is
                            INVALID, e.g. a bad owner id, says so whatever
                            the nodes)
       watchdog             any kind; INVALID if renew_every_ms >= ttl_ms
       label, refuse_evicting, max_hold_ms, max_extensions, retries,
       wait_ms              any kind
       release notifications (callbacks.listen)   any kind; only releases
                            by script publish (section 10)
       adopt                any kind: a reentrant lock under its own owner
                            id, a readers-writer lock as opts.access says,
                            a fenced one without a fence (0)
   Per node the kind meets the node's mode (configured, or what AUTO
   found, section 4): plain locks run on every node (scripts, or the
   chains below); reentrant and readers-writer locks, and a fenced lock's
   acquire and write-back, send nothing to a node known to have no
   scripts when their round starts (configured LEGACY, or switched by
   AUTO, also by another lock after the node's acquire won): its vote
   fails with NO_SCRIPTING, as it does where such a lock's script is
   refused (no switch, no fallback). A fenced lock's release and extend
   there are the plain lock's chains.

   Per node, each operation is a short chain of steps (REDLOCK__ST_*); a
   node's answer moves it along its chain, or ends it with a vote (yes,
   held by another, not ours, or a node error). k is the key, t the token,
   o a reentrant lock's owner id, c the fence counter
   (REDLOCK_FENCE_PREFIX + key), "1" the flag that has a release publish
   (section 10; "s" instead on a node told redlock_node_set_sharded). "EVALSHA x" is the script x by its SHA1, followed by
   "EVAL x" (its text) on NOSCRIPT; ROLLBACK, CLEANUP and SETTLE send EVAL
   at once (one command per node: nothing is left to send should the lock
   be deinitialised meanwhile).
     plain lock, modern node (SET NX PX and scripts; the default)
       acquire    SET k t NX PX ttl
       release    EVALSHA release 1 k t 1
       undo       EVAL release 1 k t          (no flag: publishes nothing)
       cleanup    EVAL release 1 k t 1
       extend     EVALSHA extend 1 k t ttl    (watchdog: the lock's ttl)
     plain lock, node without scripting (AUTO, once a release's or an
     extend's script is refused: NOPERM, not for a key, or "unknown
     command"; the node stays switched for the client's life)
       acquire    SET k t NX PX ttl
       release,   GET k; ours: DEL k (not when less than node timeout +
       undo,        drift of the key's life is left: it is left to expire,
       cleanup      REDLOCK_EV_KEY_LEFT)
       extend     GET k; ours: PEXPIRE k ttl (same rule: else it counts as gone)
       adopted    a token taken by redlock_lock_adopt(): PTTL k first,
                    then the chain above (the key's life is not known)
     plain lock, legacy node (configured LEGACY, or AUTO: SET NX PX
     refused as unknown, "syntax error" or "wrong number of arguments",
     then INFO server says below 2.6.12)
       acquire    [SET k t NX PX ttl; refused: INFO server;] SETNX k e:t
                  (e: wall-clock expiry in ms); taken: GET k; gone: SETNX
                  again (twice at most); expired: GETSET k e:t, ours if it
                  returns the value read (by a 32-bit hash), still expired
       release,   GET k; ours: DEL k (as above; never where a GETSET lost
       undo,        its race or has not answered: REDLOCK_EV_KEY_LEFT)
       cleanup
       extend     GET k; ours: GETSET k e:t (with the new ttl)
     reentrant lock (section 9; modern nodes only)
       acquire    EVALSHA racquire 1 k o t ttl
       release    EVALSHA rrelease 1 k o t 1
       undo       EVAL rrelease 1 k o t
       cleanup    EVAL rrelease 1 k o t 1
       extend     EVALSHA rextend 1 k o t ttl
     fenced lock (section 11)
       acquire    EVALSHA facquire 2 k c t ttl    (the count, 0: held)
       write-back EVALSHA fence 2 k c t f         (f: the highest count
                                                   of the quorum)
       release, undo, cleanup, extend: the plain lock's
     reentrant and fenced: acquire EVALSHA rfacquire 2 k c o t ttl,
       write-back EVALSHA rfence 2 k c o t f; the rest the reentrant's
     readers-writer lock (section 12; m: s shared, u update, x exclusive;
     w: how long a refused writer's mark lives, ms)
       acquire    EVALSHA rwacquire 1 k t ttl m w
       release    EVALSHA rwrelease 1 k t 1
       undo       EVAL rwrelease 1 k t        (a retry follows: keeps
                                               the writer's mark)
                  EVAL rwrelease 1 k t 2      (the last attempt's: drops
                                               it, publishes nothing)
       cleanup    EVAL rwrelease 1 k t 1
       extend     EVALSHA rwextend 1 k t ttl m   (m: the hold's mode)
       upgrade    EVALSHA rwupgrade 1 k t ttl w
       downgrade  EVALSHA rwsetmode 1 k t s
       settle     EVAL rwsetmode 1 k t u
     any lock, cfg.wait_replicas = n: after each answer that grants
       (acquire, write-back, extend, upgrade; also a legacy SETNX or
       GETSET) WAIT n timeout; the vote counts if it answers >= n
   (build/sim --trace prints every command the simulated clients send,
   e.g. build/sim --profile rw --runs 3 --seed 1 --trace.)

   9. REENTRANT LOCKS
   A lock initialised with opts.reentrant may be held by one owner many
   times at once, from any handle, client or process: code that holds it
   can call code that takes it again without waiting for itself. The key
   is then a Redis hash: field `owner` counts the owner's entries, and each
   acquisition adds one field `owner:token` (its own random token):
       HGETALL job  ->  svc-a 2   svc-a:3fa2...c0 1   svc-a:91b4...07 1
   (a fenced one also keeps its fence in the field " fence", section 11).
   The owner id is opts.owner (1..REDLOCK_MAX_OWNER printable bytes, no
   space; copied at init), or by default "client id:thread id" (16 hex
   digits each: a random id the client draws once, and the thread that
   calls redlock_acquire, see REDLOCK_THREAD_ID), so handles of one client
   used from one thread share an owner. redlock_lock_owner() tells it.
   Pass an id across handles, clients or processes to share the lock on
   purpose: every holder with that id is then one owner, and nothing tells
   them apart (the tool's `run --reentrant` hands its id to COMMAND).
     acquire  an entry is added when the key is absent or held by this
              owner alone (a vote for; the count is the reply), refused
              while another owner or a plain lock holds it (against). The
              key's time to live becomes at least ttl: it is never
              shortened, as the owner's other entries live on it. Quorum,
              validity (ttl - elapsed - drift), retries and the undo of a
              failed attempt on every node are the plain lock's.
     release  removes this acquisition's entry and decrements the count;
              the key is deleted with the owner's last entry.
     extend   (and the watchdog) while this entry is there: the time to
              live becomes at least the new ttl, never less (the validity
              counts the new ttl, as for a plain lock). 0: the entry is
              gone (QUORUM_LOST on a majority); -1: another owner holds
              the key (STOLEN).
   Counts never drift: entries are added and removed by token, so a
   retry adds nothing twice where an earlier attempt's entry landed, and
   an undo takes back exactly that attempt's entry whether or not its
   reply was lost. An entry whose release never reached a node (the node
   was down) stays until the key expires; the owner's later acquisitions
   keep the key alive meanwhile, so other owners may wait that long. The
   count is not a reentrancy depth of one handle: one handle holds one
   entry at a time (acquire while HELD is ALREADY_HELD); nest with more
   handles.
   Cost: one round trip per operation, as the plain lock (a script of a
   few hash commands per node). A plain lock and a reentrant one on the
   same key exclude each other (a WRONGTYPE answer reads as "held by
   another", or "not ours" to a release). Needs scripting: a node
   that refuses scripts (ACL NOPERM, a server without EVAL) fails its vote
   with REDLOCK_ERR_NO_SCRIPTING, there is no legacy fallback, and an
   acquire that can no longer reach a quorum ends with NO_SCRIPTING at
   once; a node configured REDLOCK_MODE_LEGACY (or found without
   scripting before) gets no command, its vote failing the same way, and
   lock_init refuses the mode (NO_SCRIPTING) when too few nodes are left
   for a quorum.

   10. RELEASE NOTIFICATIONS
   Whenever the release script deletes a key that was held (a release, the
   cleanup after LOST; a reentrant lock's last entry) it also runs PUBLISH
   REDLOCK_CHANNEL_PREFIX+key "released" on that node (under pcall: a user
   the ACL denies PUBLISH still releases). On a Redis Cluster node whose
   servers have sharded pub/sub (7.0 and later; the adapters tell the
   core with redlock_node_set_sharded()) it runs SPUBLISH on the key's
   shard channel instead, which lives in the key's own slot and so
   reaches the subscribers of the master that serves it, not every node
   of the cluster as a PUBLISH does: REDLOCK_CHANNEL_PREFIX+key when the
   key has a hash tag ("{orders}:lock"), else REDLOCK_CHANNEL_PREFIX+"{"+
   key+"}" (redlock_shard_channel()). The undo of a failed attempt
   publishes nothing: the lock it took back on a minority of nodes was never
   held, and its own waiter (or the others) woken by it would only try again
   against the holder. With no subscriber a PUBLISH costs the server a
   lookup. Nodes without scripting (GET, then DEL) and keys that expire
   publish nothing.
   The core tells the transport when a notification would help: the
   optional callbacks.listen(user, lock, 1) comes when an acquire attempt
   failed and another will follow after a retry delay at least as long as
   the node timeout, listen(user, lock, 0) when that acquire ends (won,
   given up, cancelled by release) or the lock is deinitialised (the last
   word about it; redlock_lock_key() still reads then). A shorter retry
   delay asks for nothing: its retries find a release about as soon as a
   notification would, and listening would cost more than it saves (below).
   In between, a transport subscribes to the key's channel (every adapter
   here does, on a second connection per node) and passes each message on
   with redlock_lock_wake(): a waiting acquire starts its next attempt at
   once instead of sleeping out its retry delay, and one whose attempt is
   running starts the next one early if that attempt fails. The adapters
   wake only waiting locks: over N nodes one release arrives N times, and
   the copies that come during the woken attempt would only start another
   attempt that loses too; so an attempt that reached a node before the
   release did there (rare) waits for its retry or the next release.
   Waiting is a time budget, whatever the messages: an attempt a
   notification started spends no retry when it loses (the retry that was
   due keeps its time), so with retry_count retries an acquire gives up
   after about retry_count x retry_delay (+- jitter), as without
   notifications; with wait_ms, at its deadline. Notifications are
   rate-limited per lock: after an attempt one started, the next such
   attempt waits retry_delay / REDLOCK_WAKES_PER_DELAY (default 8: 25 ms at
   the default 200 ms), so a flood of messages (anyone allowed to PUBLISH
   on the channel can forge them) makes at most REDLOCK_WAKES_PER_DELAY
   attempts per retry delay beside the retries. A message within that
   time is kept and starts its attempt when it ends; any other (the first
   of an acquire, or one after a quieter wait) starts it at once.
   Notifications only move attempts: a lost, late, repeated or spurious
   one costs at most a retry delay or an early attempt, never safety.
   What it costs: while any lock of a client waits, one more connection
   per node (opened at the first wait, closed when none has waited for a
   second: the adapters' notify_idle_ms), a SUBSCRIBE and an UNSUBSCRIBE
   per waiting acquire, and a message to every waiter at each release.
   Every waiter whose rate limit allows wakes and tries (no queue): under
   heavy contention that is up to N waiters' commands per hand-off, and
   the winner is whoever is fastest, which is fair enough for clients
   alike. Turn it off (the adapters' notify_off) where connections are
   scarce (a server's maxclients) or where the ACL denies SUBSCRIBE. ACL:
   the channels are REDLOCK_CHANNEL_PREFIX+key, so a user who should
   publish and hear releases needs &redlock:* (Redis 7 gives new users no
   channels unless acl-pubsub-default allchannels).

   11. FENCING TOKENS
   No lock stops a holder that pauses (GC, swap, a stopped VM) past its
   validity and then writes. A lock initialised with opts.fence hands each
   successful acquire a fencing token, redlock_result.fence (and
   redlock_lock_fence()): a number higher than that of every holder whose
   acquire succeeded before this acquire was called. The storage keeps the
   highest token it has seen next to the data and refuses writes that
   carry a lower one: a paused holder's late write is then rejected.
   How, over N nodes (the max of per-node counters is not monotonic by
   itself):
     acquire     one script per node: SET key token NX PX ttl, and where it
                 won, INCR REDLOCK_FENCE_PREFIX+key (the key's counter,
                 which never expires); the reply is the count (0: held).
     write-back  once a quorum won, f = the highest count among them goes
                 back to those nodes (and to any that wins later, also
                 after the lock was reported held): counter = max(counter,
                 f), only where the key still holds this token (a node
                 known to refuse scripts when the write-back starts, e.g.
                 switched by another lock since its acquire won, gets
                 none and counts as no write-back). The lock is held (and
                 reported) only when a quorum of nodes did so; otherwise
                 the attempt failed (undone, retried as any other).
   Why it holds: any later holder B wins a quorum, which meets the
   write-back quorum on some node; B's SET there came after A reported
   success, so after the write-back, and B's count there, hence its own f,
   is higher than A's. It does not depend on clocks, so it holds even where
   mutual exclusion does not (a server clock jump, a pause): the guarded
   write then still orders the holders. The cost: one more round trip
   (the write-back) per acquire, and a counter key per lock name on every
   node that stays.
   The validity counts from the acquire's start, as for a plain lock;
   extends and the watchdog keep the fence; redlock_lock_fence() reads it
   while held and after, until the next acquire (0 while one runs, after
   one failed, for an adopted token, for a lock without the option).
   The guarded write, for the storage (copy it, or EVAL
   redlock_fenced_set_script() on a Redis that holds the data): KEYS[1] the
   data, KEYS[2] where its highest fence is kept, ARGV[1] the fence, ARGV[2]
   the value: writes and returns 1 when the fence is at least the highest
   seen (a holder may write several times), else writes nothing and
   returns 0. Any storage can do the same with a compare in its write (a
   row's column, a conditional put). examples/fenced_write.c stops a
   holder (SIGSTOP) past its validity, lets another take the lock and
   write, and shows the first one's late write rejected.
   Reentrant and fenced (both options): the first entry of an owner counts
   as above; the hold's fence is then kept in the hash (field " fence",
   raised only), and the owner's later entries take it: the holders of an
   owner share one fence, higher than any other owner's before it. Where
   the hash keeps none (an entry whose write-back never came: its node
   timed out) a later entry counts anew and its fence comes out higher, as
   may those of first entries that race; fences never go down. Plain and
   fenced reentrant locks of one owner may nest.
   Limits: a node that loses its counter (a restart without persistence)
   can hand out counts again from 1; that is the one fault fencing does not
   survive. Run the nodes with appendonly yes and appendfsync always for
   counters that outlive restarts and crashes (everysec, or an RDB
   snapshot, can lose the last INCRs and write-backs: a count then comes
   back lower, for good, and a later holder may get a fence that is not
   higher). A node that evicts keys without a time to live (maxmemory with
   an allkeys-* policy) forgets counters too: a fenced lock does not count
   such nodes unless told to (section 4, Eviction). Needs scripting, as a
   reentrant lock (section 9: NO_SCRIPTING, no legacy fallback, refused at
   lock_init when too few nodes may script). Lock keys may not start with
   REDLOCK_FENCE_PREFIX (REDLOCK_ERR_KEY). ACL: the acquire script names
   the counter as a key, so a user confined to its own keys (~app:*) needs
   ~redlock:fence:* as well; without it the node's vote fails with
   REDLOCK_ERR_NOPERM (not NO_SCRIPTING: the user may well run scripts).

   12. READERS-WRITER LOCKS
   opts.access chooses how a lock holds its key, which is then a hash of
   holders (each with its own token and expiry) shared by all of them:
                       held by: shared   update   exclusive   (writer waits)
       SHARED acquire           yes      yes      no          no
       UPDATE acquire           yes      no       no          no
       EXCLUSIVE acquire        no       no       no          yes
   SHARED: readers, many at once. EXCLUSIVE: one writer, nobody else.
   UPDATE: one intending writer beside the readers, which redlock_upgrade()
   turns into EXCLUSIVE once the readers are gone, without ever letting
   go, so no other writer gets in between. redlock_downgrade() turns an
   EXCLUSIVE (or UPDATE) hold into SHARED. Both change the hold, not the
   lock: every acquire (and adopt) holds as opts.access asks.
   Writer preference: an EXCLUSIVE acquire refused because the key is held
   leaves a mark, "w:"+token in the hash, that refuses new SHARED and
   UPDATE acquires, so a stream of readers cannot starve a writer. The
   mark lives until the writer's next attempt is due (retry delay + jitter
   + 2 node timeouts), is renewed by each attempt, and goes when the writer
   wins, gives up (the undo of its last attempt drops it) or cancels: a
   writer that died keeps readers out for that long at most. An upgrade
   waiting for readers leaves the same mark.
   Every holder has its own token and expiry: a reader that dies frees
   only itself when its ttl runs out; release, extend and the watchdog work
   per holder; LOST says why, as for a plain lock. Quorum, validity (ttl -
   elapsed - drift), retries and the undo of failed attempts on every node
   are the plain lock's; an entry renews only where it is at least the
   holder's mode (an exclusive hold stands on its exclusive entries).
   Upgrade: each attempt converts this holder's entry from update to
   exclusive on the nodes where no other holder is left, and renews it
   there and elsewhere (for the lock's ttl: an attempt is also a renewal,
   counted against max_extensions and made only within max_hold_ms, as the
   watchdog's; attempts come at least every renew_every, the first at the
   call or when a running renewal ends). A quorum converted: the lock is
   EXCLUSIVE (op REDLOCK_OP_UPGRADE, OK). Otherwise it retries as an
   acquire does (retry_count, retry delay, wait_ms: LOCKED or TIMEOUT, or
   HOLD_LIMIT when the next attempt would renew past the cap: the lock
   then runs out and is LOST with HOLD_LIMIT); when it gives up, the nodes
   it converted go back to update and the lock stays held as UPDATE.
   Downgrade: the hold is SHARED from the call on (act as a reader from
   then); the result says whether a quorum of nodes lets readers in yet
   (NO_QUORUM: the others do once the hold ends; CANCELLED: a release came
   first).
   Entries expire on the servers' clocks (redis TIME in the scripts), as a
   plain key's TTL does; the safety argument is the plain lock's. Scripts
   only: NO_SCRIPTING without them (no legacy fallback), refused at
   lock_init when too few nodes may script; not with opts.reentrant or
   opts.fence (INVALID). A plain lock and a readers-writer lock on one key
   exclude each other (a plain holder counts as a writer).
   Cost: one round trip per operation, as the plain lock; each acquire
   reads the hash (a few entries while few readers hold it).

   13. READING A LOCK'S STORED VALUE
   To tell who holds a lock without holding it (as `redlock inspect`
   does, or a monitor), read the key on each node and decode the replies
   with the functions below; they read replies only (no I/O, no clock, no
   allocation), so any transport or client library can feed them. A
   malformed or hostile value (a wrong type, a truncated token, a huge
   count) is OTHER or an error status: never a crash, never a read past
   what the reply holds.
     GET key (and PTTL key)  redlock_value_from_get(): NONE (no key),
                             PLAIN (a token: its label and
                             REDLOCK_TOKEN_LEN hex digits, or any 32
                             bytes of another Redlock client), LEGACY
                             ("expiry_ms:token", section 4: the holder's
                             wall-clock expiry), OTHER, or HASH: then
     HGETALL key             redlock_value_from_hash(): REENTRANT (section
                             9: the owner, its count of entries, its first
                             entry's token, and a fenced hold's fence,
                             field REDLOCK_FENCE_FIELD) or RW (section 12:
                             the number of SHARED holders, the EXCLUSIVE
                             and UPDATE holders' tokens, waiting writers'
                             marks, REDLOCK_RW_WAITING_PREFIX+token;
                             entries expired by your wall clock left out)
     GET REDLOCK_FENCE_PREFIX+key  redlock_value_fence(): a fenced lock's
                             counter on that node (section 11)
   One node's value says what that node keeps; the lock is held by a
   token (or owner) that a quorum of nodes show, as the acquire counts.

   14. STATISTICS
   Every client counts what its locks did, as it happens, whether or not
   on_event is set: redlock_client_stats(client, &stats) copies the
   counts into a redlock_stats (no allocation), for a service to export.
     acquires, attempts   redlock_acquire calls started; attempts made
                          (REDLOCK_EV_ATTEMPT, retries included)
     acquired, acquire_*  acquires ended, by their result's status: OK;
                          busy (LOCKED: another holds it, retries spent);
                          timeout (TIMEOUT: wait_ms passed); no_quorum
                          (too few usable nodes: NO_QUORUM, VALIDITY,
                          CONFIG, OVERLOADED, TLS, NO_SCRIPTING, NOPERM,
                          EVICTING, RESTARTED, REPLICAS); cancelled
                          (a release overtook it); other
     extends, releases, upgrades, downgrades  the user's calls ended OK;
                          *_failed: ended otherwise (CANCELLED too)
     renewals, renewal_failed  the watchdog's rounds (REDLOCK_EV_RENEWED,
                          REDLOCK_EV_RENEW_FAILED of no user extend)
     lost, lost_*         held locks that ended without the holder's
                          release, by reason: EXPIRED, STOLEN,
                          QUORUM_LOST, HOLD_LIMIT, other (the renewals'
                          TRANSPORT, REPLICAS); also one whose LOST was
                          not reported because its callback moved on, or
                          that was deinitialised after its validity ran
                          out
     held, held_max       locks HELD now (one that ran out counts until
                          its LOST is reported or it is deinitialised),
                          and the most at once
     node_failures[n][class]  node n's failed votes (REDLOCK_EV_VOTE
                          against with an error status; a node that
                          holds another token voted, it did not fail),
                          by redlock_node_failure: CONNECT (CONNECT,
                          TRANSPORT, TLS, AUTH, SELECT), TIMEOUT, SERVER
                          (SERVER, NOPERM, NO_SCRIPTING), PROTOCOL, OTHER
     acquire_us           won acquires: from the call to the win (the
                          result's elapsed_us)
     renewal_us           the watchdog's successful rounds: start to
                          quorum
     handoff_us           acquires won by an attempt a release
                          notification started (section 10): from the
                          first redlock_lock_wake() heard while it waited
                          to the win (a notification heard while such an
                          attempt ran counts from that attempt's failure)
   A histogram (redlock_histogram) has 32 log buckets: bucket 0 holds
   samples under 1 us, bucket i those in [2^(i-1), 2^i) us, bucket 31
   those of 2^30 us (about 18 minutes) and more; count, sum_us and max_us
   besides. redlock_histogram_quantile(&h, 0.99) reads p99: the last value
   of the bucket that holds the sample of that rank (2^i - 1 for bucket
   i), never more than max_us; so p99 = 1023 means "99% took under
   1.024 ms". It is -1 for an empty histogram. To export rates, keep the
   last copy and subtract; to start over, redlock_client_stats_reset()
   sets every count and histogram to 0 and held_max to held (held stays:
   the locks are still held). redlock_client_init zeroes them; after
   redlock_client_deinit they still read (held 0) until the next init.
   Threads: as the client's other calls (section 7): read and reset on
   the client's thread, or under the lock that guards the client; inside
   callbacks too. Cost: a few increments where a result, an event or a
   state change is made, and one bit-length for a histogram sample; no
   loop over locks, no allocation, about 1.7 kB in the client. Define
   REDLOCK_NO_STATS to count nothing (`make bench` prints the difference).
*/
#ifndef REDLOCK_H
#define REDLOCK_H

#if defined(REDLOCK_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stddef.h>
#include <stdint.h>

/* The version: these three numbers are its only source. REDLOCK_VERSION is
   made from them; the tool's --version, the pkg-config and CMake packages,
   `make dist` and the Debian package all read them from here
   (scripts/version.sh). 0.x: a minor version may change the API
   (CHANGELOG.md says how). */
#define REDLOCK_VERSION_MAJOR 0
#define REDLOCK_VERSION_MINOR 3
#define REDLOCK_VERSION_PATCH 0
#define REDLOCK__STR(x) #x
#define REDLOCK__XSTR(x) REDLOCK__STR(x)
#define REDLOCK_VERSION REDLOCK__XSTR(REDLOCK_VERSION_MAJOR) "." \
    REDLOCK__XSTR(REDLOCK_VERSION_MINOR) "." REDLOCK__XSTR(REDLOCK_VERSION_PATCH)
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
#ifndef REDLOCK_LOCK_TABLE
#define REDLOCK_LOCK_TABLE 64
#endif
#if REDLOCK_MAX_KEY < 1 || REDLOCK_MAX_KEY > 0x7fffffff
#error "REDLOCK_MAX_KEY must be in 1..2^31-1"
#endif
#if REDLOCK_MAX_NODES < 1 || REDLOCK_MAX_NODES > 255
#error "REDLOCK_MAX_NODES must be in 1..255"
#endif
#if REDLOCK_LOCK_TABLE < 1 || REDLOCK_LOCK_TABLE > (1L << 24) || (REDLOCK_LOCK_TABLE & (REDLOCK_LOCK_TABLE - 1))
#error "REDLOCK_LOCK_TABLE must be a power of two in 1..2^24"
#endif

#define REDLOCK_MAX_ARGS 8             /* longest command the core sends */
#define REDLOCK_TOKEN_LEN 32           /* hex characters of a token (128 bits) */
#define REDLOCK_MAX_OWNER 64           /* bytes of a reentrant lock's owner id */
#define REDLOCK_MAX_LABEL 64           /* bytes of a token's label (redlock_lock_opts.label) */
/* The release scripts PUBLISH "released" on this prefix + the key when they
   delete it (section 10). */
#define REDLOCK_CHANNEL_PREFIX "redlock:"
/* Release notifications start at most this many attempts per retry delay
   (section 10; override before including). */
#ifndef REDLOCK_WAKES_PER_DELAY
#define REDLOCK_WAKES_PER_DELAY 8
#endif
#if REDLOCK_WAKES_PER_DELAY < 1
#error "REDLOCK_WAKES_PER_DELAY must be at least 1"
#endif
/* A fenced lock's counter is this prefix + the key, a key that never
   expires (section 11). Lock keys may not start with it. */
#define REDLOCK_FENCE_PREFIX "redlock:fence:"
/* bytes of the block redlock_lock_init allocates for a key of key_len bytes:
   the key, the label's end, the token and the next token's bytes (a
   label, redlock_lock_opts.label, adds twice its length) */
#define REDLOCK_KEY_BLOCK_SIZE(key_len) ((key_len) + 1 + REDLOCK_TOKEN_LEN + 1 + REDLOCK_TOKEN_LEN / 2)
#define REDLOCK_NO_DEADLINE INT64_MAX  /* set_timer: nothing to wait for */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum redlock_status {
    REDLOCK_OK = 0,
    /* caller errors: the call did nothing */
    REDLOCK_ERR_INVALID = -1,      /* NULL pointer or argument out of range */
    REDLOCK_ERR_KEY = -2,          /* key NULL, empty, or starting with REDLOCK_FENCE_PREFIX */
    REDLOCK_ERR_KEY_TOO_LONG = -3, /* key longer than REDLOCK_MAX_KEY */
    REDLOCK_ERR_TTL = -4,          /* ttl <= 0 or absurdly large */
    REDLOCK_ERR_NODES = -5,        /* node count outside 1..REDLOCK_MAX_NODES */
    REDLOCK_ERR_BUSY = -6,         /* another operation on this lock is running */
    REDLOCK_ERR_NOT_HELD = -7,     /* release/extend/upgrade/downgrade of a lock not held */
    REDLOCK_ERR_ALREADY_HELD = -8, /* acquire (or adopt) of a lock already held */
    REDLOCK_ERR_RANDOM = -9,       /* the random source failed */
    REDLOCK_ERR_NOMEM = -10,       /* out of memory */
    REDLOCK_ERR_DETACHED = -11,    /* lock not initialised or its client is gone */
    REDLOCK_ERR_NO_TLS = -12,      /* TLS asked of an adapter built without it (its init) */
    /* outcomes, in redlock_result.status */
    REDLOCK_ERR_LOCKED = -20,      /* held by someone else; retries exhausted */
    REDLOCK_ERR_TIMEOUT = -21,     /* wait_ms passed before the lock was won */
    REDLOCK_ERR_NO_QUORUM = -22,   /* too few nodes answered */
    REDLOCK_ERR_VALIDITY = -23,    /* quorum reached too late: no validity left */
    REDLOCK_ERR_EXPIRED = -24,     /* lost: validity ran out */
    REDLOCK_ERR_STOLEN = -25,      /* lost: a node holds another token */
    REDLOCK_ERR_QUORUM_LOST = -26, /* lost: a majority no longer has the key */
    REDLOCK_ERR_HOLD_LIMIT = -27,  /* lost (or an upgrade ended): max hold time / extensions reached */
    REDLOCK_ERR_CANCELLED = -28,   /* acquire (extend, upgrade, downgrade) cancelled by release */
    REDLOCK_ERR_CONFIG = -29,      /* too few usable nodes: the others refuse AUTH or SELECT (section 4) */
    REDLOCK_ERR_OVERLOADED = -30,  /* too few answers because the transport's queues were full */
    /* node errors: one node failed, its vote does not count */
    REDLOCK_ERR_TRANSPORT = -40,    /* send failed, connection reset or closed */
    REDLOCK_ERR_NODE_TIMEOUT = -41, /* no answer within node_timeout_ms */
    REDLOCK_ERR_PROTOCOL = -42,     /* malformed or unexpected reply */
    REDLOCK_ERR_SERVER = -43,       /* the server answered with an error */
    REDLOCK_ERR_AUTH = -44,         /* authentication refused (adapters) */
    REDLOCK_ERR_CONNECT = -45,      /* connection refused / unreachable (adapters) */
    REDLOCK_ERR_SELECT = -46,       /* SELECT refused: no such database (adapters) */
    REDLOCK_ERR_QUEUE_FULL = -47,   /* the transport's queue for the node is full (adapters) */
    REDLOCK_ERR_TLS = -48,          /* TLS refused: a certificate, an alert from the server, or an
                                       answer that is not TLS (adapters); as an acquire's outcome: too
                                       few usable nodes, some refuse TLS (section 4) */
    REDLOCK_ERR_NO_SCRIPTING = -49, /* the node refuses scripts, which reentrant, fenced and
                                       readers-writer locks need */
    REDLOCK_ERR_NOPERM = -50,       /* the node's ACL denies this user a key of the lock (its key, or its
                                       fence counter REDLOCK_FENCE_PREFIX+key) */
    REDLOCK_ERR_EVICTING = -51,     /* the node may evict keys (maxmemory-policy): its grant does
                                       not count for a lock that refuses such nodes (section 4) */
    REDLOCK_ERR_RESTARTED = -52,    /* the node restarted or failed over less than the bound ago
                                       and may have lost keys: its grant does not count yet
                                       (section 4, Restarts) */
    REDLOCK_ERR_REPLICAS = -53      /* the node's WAIT: fewer replicas than cfg.wait_replicas
                                       acknowledged the write in time, or WAIT refused (section 4,
                                       Deployments) */
} redlock_status;

typedef enum redlock_mode {
    REDLOCK_MODE_AUTO = 0, /* modern; switch per node on old-server errors */
    REDLOCK_MODE_MODERN,   /* SET NX PX and scripts only */
    REDLOCK_MODE_LEGACY    /* SETNX / GET / GETSET, no scripts */
} redlock_mode;

typedef enum redlock_state {
    REDLOCK_STATE_IDLE = 0,  /* not held (an undo or a release's last answers may still run) */
    REDLOCK_STATE_ACQUIRING, /* attempts (and retry waits) in progress */
    REDLOCK_STATE_HELD,      /* held until redlock_lock_valid_until() */
    REDLOCK_STATE_RELEASING, /* release sent, waiting for the nodes */
    REDLOCK_STATE_LOST       /* was held, ended without release: see lost_reason */
} redlock_state;

typedef enum redlock_op {
    REDLOCK_OP_ACQUIRE = 1,
    REDLOCK_OP_RELEASE,
    REDLOCK_OP_EXTEND,
    REDLOCK_OP_LOST,
    REDLOCK_OP_UPGRADE,     /* redlock_upgrade (section 12) */
    REDLOCK_OP_DOWNGRADE    /* redlock_downgrade */
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
    REDLOCK_EV_VOTE,          /* a node's answer: node, op, vote, status, rtt_us
                                 (also one that comes after its round was decided) */
    REDLOCK_EV_ACQUIRED,      /* votes, elapsed_us, validity_us, ttl_share_permille */
    REDLOCK_EV_RETRY,         /* attempt failed: status, votes, delay_us to next */
    REDLOCK_EV_FAILED,        /* acquire gave up: status, attempt */
    REDLOCK_EV_RENEWED,       /* extend/renewal ok: votes, elapsed_us, validity_us, slack_us */
    REDLOCK_EV_RENEW_FAILED,  /* a renewal round failed: status, slack_us */
    REDLOCK_EV_LOST,          /* status = reason */
    REDLOCK_EV_RELEASED,      /* status, votes (nodes that deleted the key) */
    REDLOCK_EV_MODE_SWITCH,   /* node switched: mode (LEGACY), or scripts off */
    REDLOCK_EV_KEY_LEFT,      /* node, op: a release / undo / cleanup leaves the key there
                                 to expire instead of deleting it (see 4. legacy mode) */
    REDLOCK_EV_NODE_EVICTS,   /* node, mode = its redlock_evicts, lock NULL: what the node's
                                 server may evict changed (section 4, Eviction) */
    REDLOCK_EV_NODE_RESTARTED /* node, mode = its redlock_restart, elapsed_us = how long ago,
                                 lock NULL: the node may have lost keys then (section 4,
                                 Restarts) */
} redlock_event_type;

struct redlock_lock;

/* Events carry per-phase timings for logging and metrics. Fields that do
   not apply to a type are 0 (node: -1). Tokens are never included. An
   event about a node rather than a lock (EV_NODE_*) has lock NULL. */
typedef struct redlock_event {
    redlock_event_type type;
    const struct redlock_lock *lock;
    redlock_op op;           /* the operation the event belongs to */
    int node;                /* node index, or -1 */
    int status;              /* redlock_status of the node or the phase */
    int vote;                /* EV_VOTE: 1 = for, 0 = against/failed */
    int held_by_other;       /* EV_VOTE against: the node holds another token */
    int votes;               /* votes for, in this round */
    int attempt;             /* 1-based acquire attempt number */
    int mode;                /* EV_MODE_SWITCH: REDLOCK_MODE_LEGACY, or 0 = scripts off;
                                EV_NODE_EVICTS: the node's redlock_evicts;
                                EV_NODE_RESTARTED: its redlock_restart */
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
    int64_t fence;       /* acquire of a fenced lock, OK: its fencing token (section 11); else 0 */
} redlock_result;

/* Statistics (section 14): what a client did, counted as it happens, read
   with redlock_client_stats() without allocating. */
#define REDLOCK_HISTOGRAM_BUCKETS 32
/* A latency histogram, log-bucketed: bucket 0 counts samples under 1 us,
   bucket i (1..30) those in [2^(i-1), 2^i) us, bucket 31 those of 2^30 us
   (about 18 minutes) and more. */
typedef struct redlock_histogram {
    uint64_t count;  /* samples */
    uint64_t sum_us; /* their sum */
    uint64_t max_us; /* the largest */
    uint64_t bucket[REDLOCK_HISTOGRAM_BUCKETS];
} redlock_histogram;

/* How a node's vote failed (a REDLOCK_EV_VOTE against with an error). */
typedef enum redlock_node_failure {
    REDLOCK_NODE_FAIL_CONNECT = 0, /* CONNECT, TRANSPORT, TLS, AUTH, SELECT: the connection */
    REDLOCK_NODE_FAIL_TIMEOUT,     /* NODE_TIMEOUT: no answer in time */
    REDLOCK_NODE_FAIL_SERVER,      /* SERVER, NOPERM, NO_SCRIPTING: an error reply */
    REDLOCK_NODE_FAIL_PROTOCOL,    /* PROTOCOL: a reply that makes no sense */
    REDLOCK_NODE_FAIL_OTHER,       /* QUEUE_FULL, EVICTING, RESTARTED, REPLICAS, NOMEM, ... */
    REDLOCK_NODE_FAIL_CLASSES
} redlock_node_failure;

typedef struct redlock_stats {
    /* acquires (redlock_acquire, and the adapters' blocking acquires), by outcome */
    uint64_t acquires;          /* started */
    uint64_t attempts;          /* attempts made (REDLOCK_EV_ATTEMPT) */
    uint64_t acquired;          /* OK */
    uint64_t acquire_busy;      /* LOCKED: held by another, retries spent */
    uint64_t acquire_timeout;   /* TIMEOUT: wait_ms passed */
    uint64_t acquire_no_quorum; /* NO_QUORUM, VALIDITY, CONFIG, OVERLOADED, TLS, NO_SCRIPTING,
                                   NOPERM, EVICTING, RESTARTED, REPLICAS: too few usable nodes */
    uint64_t acquire_cancelled; /* CANCELLED */
    uint64_t acquire_other;     /* any other status */
    /* held locks */
    uint64_t extends, extend_failed;   /* redlock_extend ended: OK / not */
    uint64_t renewals, renewal_failed; /* watchdog rounds: EV_RENEWED / EV_RENEW_FAILED (not the
                                          user's extends) */
    uint64_t releases, release_failed; /* redlock_release ended: OK / not */
    uint64_t upgrades, upgrade_failed; /* redlock_upgrade ended: OK / not */
    uint64_t downgrades, downgrade_failed;
    uint64_t lost;                     /* held locks lost (REDLOCK_OP_LOST), every reason: */
    uint64_t lost_expired;             /* EXPIRED */
    uint64_t lost_stolen;              /* STOLEN */
    uint64_t lost_quorum;              /* QUORUM_LOST */
    uint64_t lost_hold_limit;          /* HOLD_LIMIT */
    uint64_t lost_other;               /* any other reason */
    uint32_t held;                     /* locks held now */
    uint32_t held_max;                 /* the most held at once since init or the last reset */
    /* failed votes per node and class (redlock_node_failure) */
    uint64_t node_failures[REDLOCK_MAX_NODES][REDLOCK_NODE_FAIL_CLASSES];
    redlock_histogram acquire_us; /* acquire called -> acquired (redlock_result.elapsed_us) */
    redlock_histogram renewal_us; /* a successful renewal round, start to quorum */
    redlock_histogram handoff_us; /* a release notification (redlock_lock_wake) -> the win of the
                                     attempt it started */
} redlock_stats;

typedef struct redlock_lock redlock_lock;
typedef void (*redlock_result_fn)(redlock_lock *lock, const redlock_result *result);

typedef struct redlock_callbacks {
    int (*send)(void *user, int node, const redlock_command *cmd, redlock_tag tag); /* required */
    void (*set_timer)(void *user, int64_t deadline_us); /* optional: else poll redlock_next_deadline */
    int64_t (*now_us)(void *user);                      /* NULL: redlock_clock_us() */
    int64_t (*wall_ms)(void *user);                     /* NULL: CLOCK_REALTIME */
    int (*random)(void *user, void *buf, size_t len);   /* NULL: OS CSPRNG */
    void (*on_event)(void *user, const redlock_event *ev); /* optional */
    /* optional: release notifications (section 10). on = 1: the lock's
       acquire failed an attempt and will try again, a message on its key's
       channel would help it (redlock_lock_wake); on = 0: not any more (the
       acquire ended, was cancelled or gave up, or the lock is being
       deinitialised: the last call the transport gets about it, while
       redlock_lock_key() still reads). Calls come in on / off pairs. Like
       send, it must not call the library. */
    void (*listen)(void *user, redlock_lock *lock, int on);
} redlock_callbacks;

/* Client configuration. Zero fields mean "default", so `= {0}` plus a node
   count is a valid config; redlock_config_init() writes the defaults out. */
typedef struct redlock_config {
    int node_count;                    /* 1..REDLOCK_MAX_NODES (required) */
    redlock_mode mode[REDLOCK_MAX_NODES]; /* per node, default AUTO */
    int64_t node_timeout_ms;           /* per round, default 50 */
    double drift_factor;               /* default 0.01 */
    int64_t clock_drift_ms;            /* fixed drift allowance, default 2 */
    int retry_count;                   /* retries after the first attempt, default 3; < 0: none
                                          (attempts a release notification starts spend none:
                                          about retry_count x retry_delay of waiting, section 4) */
    int64_t retry_delay_ms;            /* default 200 */
    int64_t retry_jitter_ms;           /* +- this, default 100; < 0: none */
    int64_t wait_ms;                   /* overall acquire deadline, default none (0) */
    int max_rounds;                    /* most rounds running at once (default 128; < 0: no
                                          bound); more wait their turn (section 5, Turns) */
    /* optional: where the client files its locks so that a reply finds
       its lock at once, for a client that must not allocate.
       lock_table_size entries, a power of two up to 2^24; about one per
       lock held at once (fewer works, finding a lock then costs about
       locks / entries steps). It never grows. The memory is the caller's,
       untouched before init and in use until redlock_client_deinit. NULL:
       the client's own table, which grows with its locks at lock_init
       (section 5, Many locks). */
    struct redlock_lock **lock_table;
    size_t lock_table_size;
    /* restarts (section 4, Restarts): a node that may have lost keys (it
       restarted, or failed over) counts no grant until this long after,
       or the lock's own ttl if that is longer. Set it to the longest ttl
       any client of these nodes uses. 0: each lock's ttl; < 0: grants
       count at once (the node is still reported) */
    int64_t max_ttl_ms;
    /* replicas (section 4, Deployments): after a node grants (an acquire,
       a fence's write-back, a renewal or extend, an upgrade), WAIT until
       this many of its replicas have the write; fewer within
       wait_timeout_ms and its vote fails (REDLOCK_ERR_REPLICAS).
       0: no WAIT (the default) */
    int wait_replicas;
    int64_t wait_timeout_ms;           /* WAIT's timeout, default node_timeout_ms; it
                                          lengthens those rounds by as much (keep it below
                                          an adapter's command_timeout_ms, default 1000:
                                          a node later than that is dropped) */
} redlock_config;

/* How a lock is held (section 12). DEFAULT: the plain lock (the key is a
   string). The others share one key, a hash of holders: SHARED holders
   may hold it together, EXCLUSIVE only alone, UPDATE beside SHARED ones
   but not beside another UPDATE (redlock_upgrade makes it EXCLUSIVE). */
typedef enum redlock_access {
    REDLOCK_ACCESS_DEFAULT = 0,
    REDLOCK_ACCESS_SHARED,
    REDLOCK_ACCESS_EXCLUSIVE,
    REDLOCK_ACCESS_UPDATE
} redlock_access;

/* What a node's server may evict under memory pressure (section 4,
   Eviction): its maxmemory-policy, when maxmemory is set. */
typedef enum redlock_evicts {
    REDLOCK_EVICTS_NONE = 0,  /* nothing: noeviction, no maxmemory, or not known */
    REDLOCK_EVICTS_VOLATILE,  /* volatile-*: keys with a time to live (every lock key) */
    REDLOCK_EVICTS_ALL        /* allkeys-*: any key (lock keys and fence counters) */
} redlock_evicts;

/* Why a node may have lost keys (section 4, Restarts). */
typedef enum redlock_restart {
    REDLOCK_RESTART_NONE = 0,
    REDLOCK_RESTART_UPTIME,   /* its server started less than the bound ago, keys not kept
                                 across restarts (no appendfsync always) */
    REDLOCK_RESTART_RUN_ID,   /* its server's run_id changed: another process answers there */
    REDLOCK_RESTART_FAILOVER  /* its group failed over to another primary (Sentinel) */
} redlock_restart;

/* What a node's INFO says of its server process (redlock_info_life). */
typedef struct redlock_node_life {
    char run_id[41];   /* INFO server's run_id (40 hex digits), "" when not known */
    int64_t uptime_s;  /* uptime_in_seconds; < 0 when not known */
    int durable;       /* nonzero: AOF on with appendfsync always (CONFIG GET appendfsync):
                          the keys outlive a restart */
    int aof;           /* INFO's aof_enabled:1 (durable needs appendfsync always too) */
} redlock_node_life;

/* Per-lock options; zero fields take the client's setting or the default. */
typedef struct redlock_lock_opts {
    const char *key;          /* required, copied (section 5, Memory) */
    size_t key_len;           /* 0: strlen(key) */
    int64_t ttl_ms;           /* required, 1 .. 2^40 */
    int watchdog;             /* nonzero: renew while held */
    int64_t renew_every_ms;   /* default ttl/3; must leave room before the validity
                                 (ttl - drift) ends, or the lock runs out first.
                                 A lock's first renewal comes up to 1/16 of
                                 it earlier (a fixed share per lock), so that
                                 locks taken together do not renew together */
    int64_t max_hold_ms;      /* stop renewing after this long held; 0 = no cap */
    int max_extensions;       /* stop renewing after this many successful extends
                                 (yours and an upgrade's attempts count too); 0 = no cap */
    int retry_count;          /* 0: client's; < 0: none */
    int64_t retry_delay_ms;   /* 0: client's */
    int64_t retry_jitter_ms;  /* 0: client's; < 0: none */
    int64_t wait_ms;          /* 0: client's */
    redlock_result_fn on_result; /* optional */
    void *user;
    int reentrant;            /* nonzero: one owner may hold the lock several times
                                 at once, from any handle or process (section 9) */
    const char *owner;        /* reentrant: the owner id, copied (1..REDLOCK_MAX_OWNER
                                 printable bytes, no space); NULL: the client's id and
                                 the id of the thread that calls acquire */
    size_t owner_len;         /* 0: strlen(owner) */
    int fence;                /* nonzero: every acquire hands out a fencing token, higher than
                                 any earlier holder's (section 11) */
    redlock_access access;    /* SHARED, EXCLUSIVE or UPDATE: a readers-writer lock
                                 (section 12); not with reentrant or fence */
    int refuse_evicting;      /* a node whose server may evict keys (section 4, Eviction):
                                 > 0: its grants do not count; < 0: they count (the node
                                 is still reported); 0: refused for a fenced lock,
                                 counted for the others */
    const char *label;        /* optional: who holds the lock, e.g. "host:pid:", written
                                 before the random part of each token (section 4);
                                 1..REDLOCK_MAX_LABEL printable bytes, no space;
                                 copied. NULL or "": none */
} redlock_lock_opts;

/* ---- internal state: treat as opaque, fields may change ---- */
#define REDLOCK__VALUE_MAX (22 + REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN) /* a legacy value "expiry:token" */
/* One node's part of the current round: only what a round needs. */
typedef struct redlock__node {
    uint16_t seq;      /* tag sequence of the request awaited; 0 = none */
    uint8_t step;      /* what the node is doing: REDLOCK__ST_* (and the EVAL bit) */
    uint8_t flags;     /* REDLOCK__F_*: clobbered, life unknown, seen, coarse */
    int8_t outcome;    /* result of this round on this node */
    int8_t status;     /* node error of this round */
    uint8_t loops;     /* SETNX/GET repeats */
    uint8_t progress;  /* where its step is: REDLOCK__N_* */
    int32_t until;     /* our key here is safe to act on until then: after the
                          round's start, in µs, or in ms if F_COARSE (see
                          redlock__until); while F_SEEN is set, the hash of
                          the value a takeover's GET read */
    uint32_t sent_us;  /* when the request awaited went out, after the round's start */
} redlock__node;

typedef struct redlock_client {
    redlock_config _cfg;
    redlock_callbacks _cb;
    void *_user;
    /* the locks, filed by address: bucket b chains (through _bucket_next)
       the locks whose address hashes to b; a lock's id carries the
       address's hash bits (as many as the table can have entries), so a
       tag finds its bucket at once, at any size */
    redlock_lock **_table;    /* _cfg.lock_table, _own_table, or a grown one (REDLOCK_MALLOC) */
    uint32_t _table_mask;     /* size - 1 */
    int _hash_bits;           /* address-hash bits in a lock's id */
    size_t _locks;            /* filed: the table doubles when they outnumber its entries */
    uint64_t _next_id;
    /* deadlines: a pairing heap of the locks that need the timer (root:
       the earliest); during on_timer, the due locks already driven once
       wait in _parked */
    redlock_lock *_heap;
    redlock_lock *_parked;
    uint32_t _tick;
    int _depth;               /* nesting of API calls; timer updated at 0 */
    int64_t _armed;           /* deadline last given to set_timer */
    /* turns: at most _window rounds (1.._cfg.max_rounds, adapting) hold a
       turn at once (_rounds); the others wait in a pairing heap (_waiting,
       through the same links as the deadlines): held locks by the end of
       their validity, then the rest in order of arrival (_line counts them) */
    int _rounds, _window;
    redlock_lock *_waiting;
    uint64_t _line;
    int64_t _turn_at;         /* a turn came free then (redlock_on_timer hands it on) */
    int64_t _window_at;       /* the window last changed then */
    uint8_t _caps[REDLOCK_MAX_NODES];       /* REDLOCK__CAP_*: what the node was found to do */
    uint8_t _any_legacy;                    /* some node is REDLOCK__CAP_LEGACY */
    uint8_t _refused[REDLOCK_MAX_NODES];    /* last answer refused TLS, AUTH or SELECT: -status, else 0 */
    uint8_t _evicts[REDLOCK_MAX_NODES];     /* redlock_evicts: what the node's server may evict */
    uint8_t _restart_why[REDLOCK_MAX_NODES]; /* redlock_restart of _restart_at */
    int64_t _restart_at[REDLOCK_MAX_NODES]; /* the node may have lost keys then (INT64_MIN: never) */
    uint64_t _run_id[REDLOCK_MAX_NODES];    /* hash of the run_id last told, 0: none */
    uint8_t _sharded[REDLOCK_MAX_NODES];    /* redlock_node_set_sharded: releases SPUBLISH there */
    uint16_t _scripted[REDLOCK_MAX_NODES];  /* redlock__script_bit: ran here since the last NOSCRIPT */
    char _owner_id[17];                     /* reentrant locks' default owner: the client's part */
    int _magic;
    redlock_stats _stats;                   /* section 14 (there with REDLOCK_NO_STATS too: one layout) */
    redlock_lock *_own_table[REDLOCK_LOCK_TABLE];
} redlock_client;

struct redlock_lock {
    /* identity: the client's table, the tags' lock id, the key */
    redlock_client *_client;
    redlock_lock *_bucket_next;
    uint64_t _id;          /* 40 bits: a per-client count above the address's hash bits */
    uint32_t _tick;
    uint16_t _seq;         /* tag sequence of the last request */
    uint8_t _watchdog;     /* renew while held */
    uint8_t _heap_where;   /* REDLOCK__IN_HEAP, REDLOCK__PARKED, REDLOCK__WAITING or 0 */
    int _magic;
    uint32_t _key_len;
    char *_key;            /* one block from REDLOCK_MALLOC (redlock__strings_size,
                              redlock__set_strings): the key, the label, the token, the
                              next token's bytes, a reentrant lock's owner, a fenced
                              lock's counter */
    /* settings from the options, fixed until the next lock_init; every
       duration in microseconds but the ttl, which goes to Redis in ms */
    int64_t _ttl_ms;
    int64_t _renew_every_us, _max_hold_us, _retry_delay_us, _retry_jitter_us, _wait_us;
    int _max_extensions, _retry_count;
    redlock_result_fn _on_result;
    void *_user;
    /* the operation the user called, and its retries */
    int _attempt;
    int _retries;          /* retries left */
    uint8_t _state;        /* redlock_state */
    uint8_t _phase_op;     /* user operation the round belongs to */
    uint8_t _cancel_op;    /* release() overtook this operation: report it CANCELLED */
    uint8_t _try;          /* acquiring: REDLOCK__TRY_*, how the retries stand */
    uint8_t _fail_votes;   /* votes of the last failed attempt (its elapsed time: _saved_us) */
    uint8_t _phase;        /* REDLOCK__PH_*: the round in progress (an operation's, or the undo,
                              cleanup or settle that follows one) */
    uint8_t _hold;         /* held: REDLOCK__HOLD_*, the user's operation on the hold */
    uint8_t _kind;         /* REDLOCK__K_*: reentrant (the key is a hash {owner: count,
                              owner:token: 1}), fenced, the hold's access mode and
                              the options' (each acquire starts from the latter),
                              refuses evicting nodes; redlock__kind_of: its row */
    uint8_t _owner_len;    /* reentrant: bytes of the owner id (after the token's in _key) */
    uint8_t _owner_default;/* reentrant: the owner id is made at acquire (client id, thread id) */
    uint8_t _woken;        /* acquiring: a release was notified; the next attempt need not wait
                              for its retry (only for the wake rate limit, _mark.wake_at) */
    uint8_t _listening;    /* the transport was told listen(on) and not yet (off) */
    uint8_t _busy, _dirty; /* re-entrancy guard of the drive loop */
    uint8_t _handoff;      /* acquiring: the running attempt was started by a release
                              notification (its win is a hand-off, section 14) */
    int64_t _op_start;     /* when the user operation was called */
    int64_t _next_at;      /* acquiring: the next attempt; held: the watchdog's next renewal,
                              or an upgrade's next attempt */
    int64_t _saved_us;     /* acquiring: the last failed attempt's elapsed time;
                              extending: the validity left when the round started */
    /* the current round of commands, one step chain per node */
    int64_t _round_start;  /* when the current round's commands went out */
    union {
        int64_t extend_ttl_ms; /* held: the extend or upgrade round's ttl */
        int64_t woken_at;      /* acquiring: when the notification behind _woken or
                                  _handoff came (an attempt runs no extend round) */
    } _arg;
    /* not the last member: bounds checkers treat a trailing array as open-ended */
    redlock__node _node[REDLOCK_MAX_NODES];
    /* the hold */
    int64_t _valid_until;  /* held: monotonic deadline of validity */
    union {
        int64_t acquired_at; /* held: when it was won (max_hold_ms counts from it) */
        int64_t wake_at;     /* acquiring: a notification starts no attempt before this */
    } _mark;
    int64_t _fence;        /* fenced: the hold's fencing token (kept after it ends); while an
                              attempt runs, the highest count its nodes gave */
    int _extensions;
    uint8_t _validity_unknown; /* adopted without one (_valid_until is then only an upper
                                  bound, or NO_DEADLINE): none until an extend succeeds */
    uint8_t _capped;       /* renewal cap reached */
    int8_t _renew_status;  /* last failed renewal's reason */
    int8_t _lost_status;
    /* the drive loop */
    int *_alive;           /* cleared by deinit while a callback runs */
    int64_t _deadline;     /* earliest time this lock needs the timer */
    redlock_lock *_heap_child, *_heap_next; /* pairing heap: first child, next sibling */
    redlock_lock *_heap_prev; /* previous sibling, or the parent of a first child */
};

/* ---- API ---- */

/* Writes the defaults into *cfg (node_count 1, everything else default). */
REDLOCK_API void redlock_config_init(redlock_config *cfg);

/* Initialises a client for cfg->node_count nodes. cfg and cb are copied.
   Errors: INVALID (NULL, no send callback, a *_ms setting out of 0..2^40,
   drift_factor not in [0, 0.5) or NaN), NODES (node count out of range). */
REDLOCK_API int redlock_client_init(redlock_client *client, const redlock_config *cfg,
                                    const redlock_callbacks *cb, void *user);

/* Detaches every lock (they become DETACHED; no callbacks are made) and
   cancels the timer. Not allowed inside a callback. */
REDLOCK_API void redlock_client_deinit(redlock_client *client);
/* Statistics (section 14): a copy of the client's counters into *out (OK;
   INVALID for NULL). Reset sets every counter and histogram to 0 and
   held_max to held. Same thread rules as the client's other calls. With
   REDLOCK_NO_STATS defined nothing is counted and *out reads all zero. */
REDLOCK_API int redlock_client_stats(const redlock_client *client, redlock_stats *out);
REDLOCK_API void redlock_client_stats_reset(redlock_client *client);
/* The q-quantile of h (0 <= q <= 1; q = 0.99: p99), in us: the last value
   of the bucket that holds the sample of rank ceil(q * count) (at least
   1), but never more than the largest sample (q = 1: max_us); -1 when h
   is empty or NULL, or q is out of range. */
REDLOCK_API int64_t redlock_histogram_quantile(const redlock_histogram *h, double q);

/* Initialises a lock handle on a client, with a copy of the key (one
   allocation: section 5, Memory; and, when the client's own lock table is
   full, its doubling: Many locks). A handle still initialised on
   this client is deinitialised first (its pending replies are then
   ignored); one initialised on another client must be deinitialised there.
   Errors: INVALID (also a *_ms option out of 0..2^40, a bad label or
   owner, access with reentrant or fence: section 8), KEY, KEY_TOO_LONG,
   TTL, NO_SCRIPTING (a reentrant, fenced or readers-writer lock with
   fewer than a quorum of nodes not configured REDLOCK_MODE_LEGACY; asked
   only of options that are otherwise valid: a bad option is INVALID
   whatever the nodes), DETACHED (client not initialised), NOMEM (the handle is then not
   initialised; the table refused: nothing else changed either). */
REDLOCK_API int redlock_lock_init(redlock_lock *lock, redlock_client *client,
                                  const redlock_lock_opts *opts);

/* Forgets the lock: pending replies are ignored, no further callbacks. It
   does not release a held lock on the servers; call redlock_release
   first. One whose validity ran out with no timer call or call on it
   since (it reads LOST, not yet reported) first sends the cleanup after
   LOST, as its timer would have (nothing reported). Safe inside callbacks,
   including the lock's own on_result. */
REDLOCK_API void redlock_lock_deinit(redlock_lock *lock);

/* Starts acquiring with a fresh token; the outcome comes through on_result
   (op ACQUIRE), possibly before this returns. If the undo or cleanup of the
   previous operation is still running, the first attempt starts when it
   is done. Returns OK if started, or INVALID / DETACHED / BUSY (acquiring
   or releasing) / ALREADY_HELD / RANDOM. */
REDLOCK_API int redlock_acquire(redlock_lock *lock);

/* Releases on all nodes (op RELEASE result: OK if a quorum deleted the key,
   EXPIRED if a majority no longer had it, NO_QUORUM if too few answered,
   OVERLOADED if too few answered because the transport refused commands
   with QUEUE_FULL).
   Called while acquiring (or during an extend, an upgrade or a downgrade),
   it cancels that operation (its result: CANCELLED) and releases. Returns
   OK if started, or NOT_HELD / BUSY. */
REDLOCK_API int redlock_release(redlock_lock *lock);

/* Sets the remaining time of a held lock to ttl_ms (0: the lock's ttl) on a
   quorum: PEXPIRE sets, it does not add. From this call on, the validity is
   at most now + ttl_ms - drift, whatever the outcome (a shorter ttl cuts it
   at once); an extend that waits for its turn (section 5, Turns) counts
   from its round's start instead. Result op EXTEND: OK (validity exactly
   ttl_ms - drift from the round's start); NO_QUORUM or
   OVERLOADED (still held, until the possibly shortened validity; OVERLOADED:
   some command was refused with QUEUE_FULL); CANCELLED (release called
   meanwhile); or STOLEN / QUORUM_LOST / EXPIRED, then the lock is LOST and
   a LOST result follows. Returns OK if started, or NOT_HELD / BUSY (an
   extend or renewal, an upgrade or a downgrade is running) / TTL (ttl_ms
   out of 0..2^40). */
REDLOCK_API int redlock_extend(redlock_lock *lock, int64_t ttl_ms);
/* Readers-writer locks (section 12). Upgrade: an UPDATE lock held becomes
   EXCLUSIVE once the readers are gone (waiting, retrying and timing out as
   acquire does; its attempts renew the hold; the lock stays held as UPDATE
   if it fails); the result comes with op REDLOCK_OP_UPGRADE. Downgrade: an
   EXCLUSIVE (or UPDATE) lock held is SHARED from the call on; the result
   (REDLOCK_OP_DOWNGRADE) says whether a quorum of nodes lets readers in.
   Both: INVALID for another mode, NOT_HELD, BUSY while an extend of
   yours, an upgrade or a downgrade runs (downgrade: while any round runs,
   a renewal too; an upgrade's first attempt waits for a renewal: section
   8). Both change the current hold only: the next acquire holds as
   opts.access says. */
REDLOCK_API int redlock_upgrade(redlock_lock *lock);
REDLOCK_API int redlock_downgrade(redlock_lock *lock);
/* While redlock_lock_state() says HELD: the hold's access mode (an
   upgrade or a downgrade changes it); otherwise opts.access (what the next
   acquire holds as). */
REDLOCK_API redlock_access redlock_lock_access(const redlock_lock *lock);

/* Takes over a lock another handle or process acquired: the lock becomes
   HELD with `token` (as redlock_lock_token() gives it: a label, if any, and
   REDLOCK_TOKEN_LEN hex digits; a label longer than the lock's own,
   opts.label, does not fit: INVALID, so give the adopting lock the
   token's label), so that release, extend and the watchdog act on it; the
   next acquire makes a token with the lock's own label again. valid_ms:
   the validity the caller vouches for, from now (the lock reads LOST when
   it runs out); 0: unknown, then the lock stays HELD but
   redlock_lock_remaining_us() and redlock_lock_valid_until() say 0 until
   an extend (or a watchdog renewal, which starts at once) succeeds; as for
   any lock, from an extend's start the validity is at most its ttl less
   the drift, and the lock reads LOST (EXPIRED) past that.
   Nodes without scripts read how long the key lives (PTTL, or a legacy
   value's expiry) before they act on it. Hand a token over only once its
   holder has stopped and nothing of it is in flight: an extend of the
   holder's still on its way (its round ended without its answer) may land
   after the taker's and set a shorter time to live; and on legacy nodes
   the holder may know that its value on a node replaced another's (a lost
   takeover race) and leaves that node alone, which the taker cannot know.
   A readers-writer holder's token goes to a handle of the same access
   mode (its entry on the nodes carries the mode). No result callback. Returns OK,
   or INVALID (token malformed, valid_ms out of 0..2^40) / DETACHED /
   ALREADY_HELD / BUSY (acquiring, releasing, or an undo or cleanup of the
   previous token still running: see redlock_lock_pending). */
REDLOCK_API int redlock_lock_adopt(redlock_lock *lock, const char *token, int64_t valid_ms);

/* Transport input. Unknown or stale tags are ignored. */
REDLOCK_API void redlock_on_reply(redlock_client *client, redlock_tag tag, const redlock_reply *reply);
/* A notification that the lock's key was released (section 10): an
   acquire waiting for its next attempt starts it now; one whose attempt
   (or its undo) is running starts the next without the retry delay. Within
   the rate limit (retry_delay / REDLOCK_WAKES_PER_DELAY after the last
   attempt a wake started) the attempt starts when the limit ends. An
   attempt a wake started that loses spends no retry. No effect in other
   states, and never on safety: a late, lost, repeated or spurious call
   only moves an attempt. Returns OK, INVALID (NULL) or DETACHED. */
REDLOCK_API int redlock_lock_wake(redlock_lock *lock);
REDLOCK_API void redlock_on_error(redlock_client *client, redlock_tag tag, int status);
REDLOCK_API void redlock_on_timer(redlock_client *client);

/* Earliest time (now_us clock) the client needs redlock_on_timer, or
   REDLOCK_NO_DEADLINE. */
REDLOCK_API int64_t redlock_next_deadline(const redlock_client *client);

/* The lock's state by the clock: a held lock whose validity has run out
   reads LOST (redlock_lock_lost_reason says why) even before a timer call
   lets the core report it; reads the now_us clock. */
REDLOCK_API redlock_state redlock_lock_state(const redlock_lock *lock);
/* May I still act on the resource, and for how long: microseconds of
   validity left by the now_us clock, 0 if not held (or run out). */
REDLOCK_API int64_t redlock_lock_remaining_us(const redlock_lock *lock);
/* Held: monotonic microsecond deadline of validity (it may have passed:
   see redlock_lock_state); otherwise 0, and 0 while an adopted token has
   no validity yet (redlock_lock_adopt). */
REDLOCK_API int64_t redlock_lock_valid_until(const redlock_lock *lock);
/* Nonzero while a round of commands of this lock is running or waiting
   for its turn (an acquire attempt or its write-back, a release, an
   extend, an upgrade attempt, a downgrade, or the undo / cleanup / settle
   that follows one: section 8; each lasts at most node_timeout_ms from
   its turn, section 5). Zero while it only waits (held, or between two
   acquire attempts). Deinitialising the lock while nonzero drops the
   steps not yet sent (see 7. THREADS AND CALLBACKS), but for a release
   still waiting for its turn: that goes out, unanswered. */
REDLOCK_API int redlock_lock_pending(const redlock_lock *lk);
/* Nonzero while a node still owes this lock an answer that the core
   will follow with another command, or that a later release needs: a
   step of a check-then-act chain (nodes without scripts, legacy nodes),
   a node's first run of a script (any operation's, upgrade and
   downgrade too: NOSCRIPT is answered with EVAL; once it ran there,
   not), a won acquire's late SET on a node where no release script has
   run yet (without scripts, a release deletes only a key whose
   remaining life it was told). Zero when every command still owed
   completes its node's part as sent. An adapter that runs only inside
   blocking calls reads replies until this clears before returning, and
   need not wait for the other stragglers: their replies can be read at
   the next call. An answer that calls for a step the core could not
   foresee (NOSCRIPT after the server lost its scripts) waits for the
   next call too. A release's EVALSHA that timed out is still owed while
   its script may be missing on the node (its NOSCRIPT gets the EVAL). */
REDLOCK_API int redlock_lock_followup(const redlock_lock *lk);
/* Nonzero while an acquire waits for its next attempt (its retry delay):
   when a release notification would help it (section 10). */
REDLOCK_API int redlock_lock_waiting(const redlock_lock *lk);
/* LOST (also by the clock): why (EXPIRED, STOLEN, QUORUM_LOST, TRANSPORT,
   REPLICAS, HOLD_LIMIT); else 0. */
REDLOCK_API int redlock_lock_lost_reason(const redlock_lock *lock);
/* The current token (the label, if any, and hex; NUL-terminated), "" before
   the first acquire. */
REDLOCK_API const char *redlock_lock_token(const redlock_lock *lock);
/* A reentrant lock's owner id (NUL-terminated), "" before its first acquire
   or adopt and for a lock that is not reentrant. */
REDLOCK_API const char *redlock_lock_owner(const redlock_lock *lock);
/* The lock's key: the lock's own copy, *len bytes, not NUL-terminated
   (what a release notification's channel names after
   REDLOCK_CHANNEL_PREFIX); "" and 0 for a lock not initialised. */
REDLOCK_API const char *redlock_lock_key(const redlock_lock *lock, size_t *len);
/* A fenced lock's fencing token: that of its current hold (kept by extends
   and renewals, and after the hold ends until the next acquire); 0 when
   there is none (no hold yet, an acquire running or failed, a lock without
   the fence option, an adopted token) (section 11). */
REDLOCK_API int64_t redlock_lock_fence(const redlock_lock *lock);
/* The node's learned mode: REDLOCK_MODE_LEGACY or MODERN/AUTO as configured. */
REDLOCK_API redlock_mode redlock_node_mode(const redlock_client *client, int node);
/* Node health (section 4, Eviction), for transports: what the node's
   server may evict, as its INFO said on the current connection (the
   adapters read it once per connection). A change is reported with
   REDLOCK_EV_NODE_EVICTS; it counts for votes that come from then on.
   Returns OK, INVALID (node or value out of range) or DETACHED. */
REDLOCK_API int redlock_node_set_evicts(redlock_client *client, int node, redlock_evicts evicts);
/* What the client was last told about the node (NONE until told). */
REDLOCK_API redlock_evicts redlock_node_evicts(const redlock_client *client, int node);
/* Reads an INFO reply (INFO memory, or all of INFO): its maxmemory and
   maxmemory_policy lines. Returns REDLOCK_EVICTS_NONE (noeviction, or
   maxmemory 0: the server evicts nothing), VOLATILE (volatile-lru, -lfu,
   -random, -ttl), ALL (allkeys-lru, -lfu, -random), or -1 when the text
   names no policy this version knows (or none at all). `policy` (may be
   NULL) gets the policy's name, NUL-terminated and cut to cap, "" if
   none. A missing maxmemory line counts as a limit that is set. */
REDLOCK_API int redlock_info_evicts(const char *info, size_t len, char *policy, size_t cap);
/* Restarts (section 4, Restarts), for transports: what the node's INFO
   (run_id, uptime_in_seconds) and CONFIG GET appendfsync said, once per
   connection, before the replies of the commands behind it. The node may
   have lost keys when its run_id differs from the one last told (then:
   now), or, when no run_id was told before and the keys do not outlive a
   restart (durable 0), when its server started (now - uptime). Until the
   bound has passed since then, its grants do not count (REDLOCK_ERR_
   RESTARTED). A later such time is reported with REDLOCK_EV_NODE_RESTARTED.
   Returns OK, INVALID (node out of range, life NULL) or DETACHED. */
REDLOCK_API int redlock_node_set_life(redlock_client *client, int node, const redlock_node_life *life);
/* The node's group failed over to another primary ago_ms ago (0: now; a
   new address from the sentinels, or what they say of the last
   failover): it may have lost keys then. The run_id last told stays:
   another server's later is a restart then too. Returns OK, INVALID
   (node out of range, ago_ms < 0) or DETACHED. */
REDLOCK_API int redlock_node_failed_over(redlock_client *client, int node, int64_t ago_ms);
/* Release notifications on a Redis Cluster node (section 10), for
   transports: on = 1 has the release scripts SPUBLISH on the key's shard
   channel (redlock_shard_channel) instead of PUBLISH, for a node whose
   servers have sharded pub/sub (Redis 7.0 and later); 0 (the default)
   PUBLISH on REDLOCK_CHANNEL_PREFIX + key. Counts for releases built from
   then on. Returns OK, INVALID (node out of range) or DETACHED. */
REDLOCK_API int redlock_node_set_sharded(redlock_client *client, int node, int on);
/* What the client was last told by redlock_node_set_sharded (0 until told). */
REDLOCK_API int redlock_node_sharded(const redlock_client *client, int node);
/* The shard channel of a key (section 10): REDLOCK_CHANNEL_PREFIX + key
   when the key has a hash tag ("{orders}:lock"), else
   REDLOCK_CHANNEL_PREFIX + "{" + key + "}": either way in the key's own
   hash slot (a key without a hash tag that holds a '}' is the exception:
   its channel is in another slot, and no release of it is heard on a
   cluster). Writes it and a NUL into buf when cap allows; returns its
   length (without the NUL) either way. Defined here, not in the
   implementation: transports built without the core use it too. */
static inline size_t redlock_shard_channel(const char *key, size_t len, char *buf, size_t cap) {
    static const char prefix[] = REDLOCK_CHANNEL_PREFIX;
    size_t open = len, close = len, i, at = 0, n;
    int tagged;
    for (i = 0; key && i < len && open == len; i++) if (key[i] == '{') open = i;
    for (i = open + 1; open < len && i < len && close == len; i++) if (key[i] == '}') close = i;
    tagged = close < len && close > open + 1; /* as the release scripts decide */
    n = sizeof prefix - 1 + len + (tagged ? 0 : 2);
    if (!buf || cap <= n) return n;
    for (i = 0; i < sizeof prefix - 1; i++) buf[at++] = prefix[i];
    if (!tagged) buf[at++] = '{';
    for (i = 0; i < len; i++) buf[at++] = key[i];
    if (!tagged) buf[at++] = '}';
    buf[at] = '\0';
    return n;
}
/* How long after a node may have lost keys its grants count again for
   this lock, in µs: the larger of its ttl and cfg.max_ttl_ms, plus the
   drift allowance; 0 for a lock not initialised. */
REDLOCK_API int64_t redlock_lock_restart_bound_us(const redlock_lock *lock);
/* When the node last may have lost keys, on the validity clock (now_us),
   and why (may be NULL); INT64_MIN (why NONE) when never. */
REDLOCK_API int64_t redlock_node_restarted_at(const redlock_client *client, int node, redlock_restart *why);
/* Reads an INFO reply (all of INFO, or INFO server and persistence): its
   run_id, uptime_in_seconds and aof_enabled lines into *life (durable is
   left 0: INFO does not say the fsync policy; set it when aof is 1 and
   CONFIG GET appendfsync says "always"). Returns 0 when it found run_id
   or uptime, else -1. */
REDLOCK_API int redlock_info_life(const char *info, size_t len, redlock_node_life *life);
/* Tag helpers for transports that multiplex: which node a tag is for. */
REDLOCK_API int redlock_tag_node(redlock_tag tag);

/* The built-in validity clock, in microseconds: CLOCK_BOOTTIME where it
   exists (it keeps counting while the system is suspended, as the servers'
   TTLs do), else CLOCK_MONOTONIC. What now_us = NULL means; the adapters and
   the tool give it to the core and time their own deadlines with it, so
   there is one clock. Absent with REDLOCK_NO_BUILTIN_CLOCKS. */
REDLOCK_API int64_t redlock_clock_us(void);

REDLOCK_API const char *redlock_strerror(int status);
REDLOCK_API const char *redlock_state_name(redlock_state state);
REDLOCK_API const char *redlock_event_name(redlock_event_type type);

/* The scripts the core runs (exposed for adapters that preload them and
   for tests). */
REDLOCK_API const char *redlock_release_script(void);
REDLOCK_API const char *redlock_extend_script(void);
/* The reentrant lock's scripts (section 9). */
REDLOCK_API const char *redlock_reentrant_acquire_script(void);
REDLOCK_API const char *redlock_reentrant_release_script(void);
REDLOCK_API const char *redlock_reentrant_extend_script(void);
REDLOCK_API const char *redlock_fence_acquire_script(void);
REDLOCK_API const char *redlock_fence_write_back_script(void);
REDLOCK_API const char *redlock_reentrant_fence_acquire_script(void);
REDLOCK_API const char *redlock_reentrant_fence_write_back_script(void);
/* The guarded write for the storage (section 11): EVAL it with KEYS[1] the
   data, KEYS[2] where the highest fence seen for it is kept, ARGV[1] the
   writer's fence, ARGV[2] the value. Sets both and returns 1 when the fence
   is at least the highest seen; returns 0 (and writes nothing) otherwise. */
REDLOCK_API const char *redlock_fenced_set_script(void);
REDLOCK_API const char *redlock_rw_acquire_script(void);
REDLOCK_API const char *redlock_rw_release_script(void);
REDLOCK_API const char *redlock_rw_extend_script(void);
REDLOCK_API const char *redlock_rw_upgrade_script(void);
REDLOCK_API const char *redlock_rw_set_mode_script(void);

/* ---- reading a lock's stored value (section 13) ---- */

/* What one node keeps for a lock's key. */
typedef enum redlock_value_kind {
    REDLOCK_VALUE_NONE = 0,  /* no key: not held there */
    REDLOCK_VALUE_PLAIN,     /* a token (SET NX PX; a fenced lock's too) */
    REDLOCK_VALUE_LEGACY,    /* "expiry_ms:token" (SETNX / GETSET, section 4) */
    REDLOCK_VALUE_HASH,      /* not a string: read it with HGETALL (redlock_value_from_hash) */
    REDLOCK_VALUE_REENTRANT, /* a reentrant lock's hash (section 9) */
    REDLOCK_VALUE_RW,        /* a readers-writer lock's hash (section 12) */
    REDLOCK_VALUE_OTHER      /* a key that is no lock of these formats */
} redlock_value_kind;

#define REDLOCK_VALUE_TOKEN_MAX (REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN) /* bytes of a token with its label */
/* A fenced reentrant lock's hash keeps its hold's fence in this field (no
   owner id has a space; section 11). */
#define REDLOCK_FENCE_FIELD " fence"
/* A readers-writer hash marks a waiting writer with this + its token
   (section 12). */
#define REDLOCK_RW_WAITING_PREFIX "w:"

/* A decoded value. Tokens are copies, NUL-terminated (a foreign token may
   hold a NUL: the lengths count); "" and 0 where a field does not apply. */
typedef struct redlock_value {
    redlock_value_kind kind;
    char token[REDLOCK_VALUE_TOKEN_MAX + 1]; /* PLAIN, LEGACY: the holder's token; REENTRANT:
                                                the token of the owner's first entry */
    size_t token_len;
    size_t label_len;        /* bytes of token before its REDLOCK_TOKEN_LEN hex digits */
    int64_t expiry_ms;       /* LEGACY: the holder's wall-clock expiry (ms since 1970); else -1 */
    char owner[REDLOCK_MAX_OWNER + 1]; /* REENTRANT: the owner id */
    size_t owner_len;
    long long entries;       /* REENTRANT: the owner's entries (its count) */
    int64_t fence;           /* REENTRANT: the hold's fence (REDLOCK_FENCE_FIELD); else -1 */
    long long readers;       /* RW: SHARED holders not expired by now_ms */
    long long writers_waiting; /* RW: waiting writers' marks not expired by now_ms */
    char writer[REDLOCK_VALUE_TOKEN_MAX + 1]; /* RW: the EXCLUSIVE holder's token */
    size_t writer_len;
    char update[REDLOCK_VALUE_TOKEN_MAX + 1]; /* RW: the UPDATE holder's token */
    size_t update_len;
} redlock_value;

/* Decoders of a lock's key as a node keeps it (section 13): no I/O, no
   clock, no allocation. Each takes the reply of the read named and
   returns OK (*v filled), INVALID (NULL argument), SERVER (an error reply
   the read cannot mean: its words are in the reply) or PROTOCOL (a reply
   of a type the read cannot give); on error *v is left untouched.
   From GET key: NONE, PLAIN, LEGACY, OTHER, or HASH (WRONGTYPE: do
   HGETALL). expires: nonzero when the key has a time to live (PTTL >= 0);
   legacy values never do, so a label such as "42:" is then no expiry. */
REDLOCK_API int redlock_value_from_get(const redlock_reply *get, int expires, redlock_value *v);
/* From HGETALL key: REENTRANT, RW, NONE (no key any more) or OTHER (also
   for WRONGTYPE). now_ms: the wall clock (ms since 1970) by which a
   readers-writer entry has expired and is not counted (for showing only:
   the servers' clocks decide). */
REDLOCK_API int redlock_value_from_hash(const redlock_reply *hgetall, int64_t now_ms, redlock_value *v);
/* From GET REDLOCK_FENCE_PREFIX+key: the fence counter (the highest count
   handed out on that node, section 11), or -1 when the reply holds none. */
REDLOCK_API int64_t redlock_value_fence(const redlock_reply *get);

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_IMPLEMENTATION) && !defined(REDLOCK__IMPLEMENTED)
#define REDLOCK__IMPLEMENTED

#include <string.h>
#include <time.h>
#include <stdio.h>
#if defined(__linux__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
#include <sys/random.h>
#define REDLOCK__HAVE_GETRANDOM 1
#endif

/* the default owner of a reentrant lock names the calling thread */
#if !defined(REDLOCK_THREAD_ID) && (defined(__unix__) || defined(__APPLE__))
#include <unistd.h>
#if defined(_POSIX_THREADS) && _POSIX_THREADS > 0
#include <pthread.h>
#define REDLOCK__HAVE_PTHREAD 1
#endif
#endif

#ifndef REDLOCK_ASSERT
#include <assert.h>
#define REDLOCK_ASSERT(c) assert(c)
#endif

#if defined(REDLOCK_MALLOC) != defined(REDLOCK_FREE)
#error "redlock.h: define both REDLOCK_MALLOC and REDLOCK_FREE, or neither"
#endif
#ifndef REDLOCK_MALLOC
#include <stdlib.h>
#define REDLOCK_MALLOC(size) malloc(size)
#define REDLOCK_FREE(p) free(p)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- states, steps and scripts ---- */

#define REDLOCK__MAGIC 0x524c4b31
#define REDLOCK__MAX_MS ((int64_t)1 << 40) /* every millisecond setting, ~34 years */
#define REDLOCK__FIRST_NX_PX 20612          /* SET ... NX PX came with Redis 2.6.12 */

/* An acquire's retries (redlock_lock._try, read while ACQUIRING):
       RETRYING --the next retry would start too late for the wait--> LAST
       LAST --its attempt failed--> TIMING_OUT
   TIMING_OUT: nothing left to try; TIMEOUT is reported at the wait deadline. */
enum { REDLOCK__TRY_RETRYING, REDLOCK__TRY_LAST, REDLOCK__TRY_TIMING_OUT };

/* The user's operation on a hold (redlock_lock._hold, read while HELD):
       IDLE --extend()--> EXTEND --its round decided, lost or released--> IDLE
       IDLE --upgrade()--> UPGRADE --upgraded, failed, lost or released--> IDLE
   EXTEND counts only while its round (REDLOCK__PH_EXTEND) runs: a
   watchdog renewal runs in the same phase with IDLE. An upgrade waits
   for a renewal already running; its attempts renew the hold. */
enum { REDLOCK__HOLD_IDLE, REDLOCK__HOLD_EXTEND, REDLOCK__HOLD_UPGRADE };

/* What the client learned a node can do (redlock_client._caps), from its
   configured mode and its answers; sticky. Facts, not one state: a node
   may have SET NX PX and refuse scripts, and LEGACY outweighs the others.
       UNKNOWN --INFO: new enough, or INFO refused--> | NX_PX
       UNKNOWN --INFO: older than SET NX PX; our token's legacy value--> | LEGACY
       any --a release or extend script refused (AUTO)--> | NO_SCRIPTS */
enum { REDLOCK__CAP_UNKNOWN = 0,    /* AUTO, nothing learned: SET NX PX and scripts are tried */
       REDLOCK__CAP_NX_PX = 1,      /* SET NX PX exists there: its errors are the server's */
       REDLOCK__CAP_NO_SCRIPTS = 2, /* refuses EVAL/EVALSHA: check-then-act chains instead */
       REDLOCK__CAP_LEGACY = 4 };   /* SETNX / GET / GETSET only (no scripts either) */

/* What a round is for. */
enum { REDLOCK__PH_NONE, REDLOCK__PH_ACQUIRE, REDLOCK__PH_ROLLBACK, REDLOCK__PH_RELEASE,
       REDLOCK__PH_EXTEND, REDLOCK__PH_CLEANUP,
       REDLOCK__PH_FENCE, /* a fenced acquire's quorum won: write its fence back before it counts */
       REDLOCK__PH_UPGRADE, REDLOCK__PH_DOWNGRADE,
       REDLOCK__PH_SETTLE /* a failed upgrade given up: back to update where it got to exclusive */ };

/* What one node is doing within a round: one step per command. A script
   step goes out as EVALSHA, or as EVAL when REDLOCK__ST_EVAL is set (after
   NOSCRIPT, or where one command per node must do: an undo, a cleanup, a
   settle); which script is the lock kind's (redlock__kinds). redlock__steps
   says what each step is for. */
enum {
    REDLOCK__ST_NONE,
    REDLOCK__ST_SET,        /* SET key token NX PX ttl */
    REDLOCK__ST_PROBE,      /* AUTO: INFO server, is it older than SET ... NX PX? */
    REDLOCK__ST_SETNX,      /* legacy: SETNX key expiry:token */
    REDLOCK__ST_ACQ_GET,    /* legacy: GET, is the holder's value expired? */
    REDLOCK__ST_ACQ_GETSET, /* legacy: GETSET, did we replace exactly what we read? */
    REDLOCK__ST_ACQUIRE,    /* the acquire script (reentrant, fenced: SET NX PX then INCR the counter, readers-writer) */
    REDLOCK__ST_RELEASE,    /* the release script */
    REDLOCK__ST_REL_PTTL,   /* no scripts, adopted token: PTTL, how long does the key live? */
    REDLOCK__ST_REL_GET,    /* no scripts: GET, compare */
    REDLOCK__ST_REL_DEL,    /*             then DEL */
    REDLOCK__ST_EXTEND,     /* the extend script */
    REDLOCK__ST_EXT_PTTL,   /* no scripts, adopted token: PTTL, how long does the key live? */
    REDLOCK__ST_EXT_GET,    /* no scripts: GET, compare */
    REDLOCK__ST_EXT_PEXPIRE,/*             then PEXPIRE (modern value) */
    REDLOCK__ST_EXT_GETSET, /*             or GETSET (legacy value) */
    REDLOCK__ST_FENCE,      /* fenced: the write-back, counter = max(counter, fence) where the key is ours */
    REDLOCK__ST_UPGRADE,    /* readers-writer: upgrade */
    REDLOCK__ST_SET_MODE,   /* readers-writer: set-mode (downgrade; a failed upgrade's settle) */
    REDLOCK__ST_WAIT,       /* cfg.wait_replicas: WAIT n timeout after a grant, which counts once enough
                               replicas have the write (the grant's outcome waits in node.outcome) */
    REDLOCK__ST_EVAL = 0x80 /* with a script step: EVAL, not EVALSHA */
};

/* The operations a step serves (and a lock kind has a script for). */
enum { REDLOCK__S_ACQUIRE, REDLOCK__S_RELEASE, REDLOCK__S_EXTEND, REDLOCK__S_FENCE, REDLOCK__S_UPGRADE,
       REDLOCK__S_SET_MODE, REDLOCK__S_COUNT };

/* How a step's command is made: the verb, then what follows it. */
enum { REDLOCK__ARGS_KEY,    /* key */
       REDLOCK__ARGS_SET,    /* key token NX PX ttl */
       REDLOCK__ARGS_VALUE,  /* key expiry:token (a legacy value) */
       REDLOCK__ARGS_TTL,    /* key ttl */
       REDLOCK__ARGS_INFO,   /* "server" */
       REDLOCK__ARGS_WAIT,   /* numreplicas timeout */
       REDLOCK__ARGS_SCRIPT  /* the kind's script for the operation (redlock__build_script) */ };
/* What a step's answer leads to. */
enum { REDLOCK__THEN_MORE,   /* a chain goes on (another step follows, or the answer decides it) */
       REDLOCK__THEN_SCRIPT, /* NOSCRIPT, or no scripting at all, may still call for another step */
       REDLOCK__THEN_LAST }; /* a chain's last step: the answer ends the node's part */
typedef struct redlock__step_info {
    const char *verb;
    uint8_t verb_len;
    uint8_t op;   /* REDLOCK__S_* (REDLOCK__S_COUNT: none) */
    uint8_t args; /* REDLOCK__ARGS_* */
    uint8_t then; /* REDLOCK__THEN_* */
} redlock__step_info;
#define REDLOCK__VERB(s) s, sizeof s - 1 /* a verb and its length */
static const redlock__step_info redlock__steps[] = {
    /* NONE */       { REDLOCK__VERB(""), REDLOCK__S_COUNT, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* SET */        { REDLOCK__VERB("SET"), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_SET, REDLOCK__THEN_MORE },
    /* PROBE */      { REDLOCK__VERB("INFO"), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_INFO, REDLOCK__THEN_MORE },
    /* SETNX */      { REDLOCK__VERB("SETNX"), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_VALUE, REDLOCK__THEN_MORE },
    /* ACQ_GET */    { REDLOCK__VERB("GET"), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* ACQ_GETSET */ { REDLOCK__VERB("GETSET"), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_VALUE, REDLOCK__THEN_MORE },
    /* ACQUIRE */    { REDLOCK__VERB(""), REDLOCK__S_ACQUIRE, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* RELEASE */    { REDLOCK__VERB(""), REDLOCK__S_RELEASE, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* REL_PTTL */   { REDLOCK__VERB("PTTL"), REDLOCK__S_RELEASE, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* REL_GET */    { REDLOCK__VERB("GET"), REDLOCK__S_RELEASE, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* REL_DEL */    { REDLOCK__VERB("DEL"), REDLOCK__S_RELEASE, REDLOCK__ARGS_KEY, REDLOCK__THEN_LAST },
    /* EXTEND */     { REDLOCK__VERB(""), REDLOCK__S_EXTEND, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* EXT_PTTL */   { REDLOCK__VERB("PTTL"), REDLOCK__S_EXTEND, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* EXT_GET */    { REDLOCK__VERB("GET"), REDLOCK__S_EXTEND, REDLOCK__ARGS_KEY, REDLOCK__THEN_MORE },
    /* EXT_PEXPIRE */{ REDLOCK__VERB("PEXPIRE"), REDLOCK__S_EXTEND, REDLOCK__ARGS_TTL, REDLOCK__THEN_LAST },
    /* EXT_GETSET */ { REDLOCK__VERB("GETSET"), REDLOCK__S_EXTEND, REDLOCK__ARGS_VALUE, REDLOCK__THEN_LAST },
    /* FENCE */      { REDLOCK__VERB(""), REDLOCK__S_FENCE, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* UPGRADE */    { REDLOCK__VERB(""), REDLOCK__S_UPGRADE, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* SET_MODE */   { REDLOCK__VERB(""), REDLOCK__S_SET_MODE, REDLOCK__ARGS_SCRIPT, REDLOCK__THEN_SCRIPT },
    /* WAIT */       { REDLOCK__VERB("WAIT"), REDLOCK__S_COUNT, REDLOCK__ARGS_WAIT, REDLOCK__THEN_LAST }
};
#undef REDLOCK__VERB
/* A node's step without its EVAL bit, and what it is. */
static int redlock__base_step(int st) { return st & ~REDLOCK__ST_EVAL; }
static const redlock__step_info *redlock__step_info_of(int st) { return &redlock__steps[redlock__base_step(st)]; }
static int redlock__is_script_step(int st) { return redlock__step_info_of(st)->args == REDLOCK__ARGS_SCRIPT; }

/* Where a node's step is in the current round (redlock__node.progress):
       any --round starts--> TO_SEND --flushed--> AWAITED --answer--> IDLE
            (read at once: the next step TO_SEND, or DONE with a vote)
       (a write-back round leaves a node still awaited AWAITED and one
       that did not grant DONE; a lock ended while waiting its turn has
       every node DONE)
       TO_SEND or AWAITED --vote counted (answer, error, deadline)--> DONE
   Once the round is decided a node may still be owed an answer or have a
   step to send (redlock_lock_followup):
       DONE --a late NOSCRIPT: the EVAL goes out however late--> DONE_TO_SEND
       DONE_TO_SEND --flushed--> DONE_AWAITED --answer--> DONE
       AWAITED --a release's deadline: its EVALSHA still heard--> DONE_AWAITED */
enum { REDLOCK__N_IDLE, REDLOCK__N_TO_SEND, REDLOCK__N_AWAITED,
       REDLOCK__N_DONE, REDLOCK__N_DONE_TO_SEND, REDLOCK__N_DONE_AWAITED };
static int redlock__n_done(const redlock__node *n) { return n->progress >= REDLOCK__N_DONE; }
static int redlock__n_to_send(const redlock__node *n) {
    return n->progress == REDLOCK__N_TO_SEND || n->progress == REDLOCK__N_DONE_TO_SEND;
}
static int redlock__n_awaited(const redlock__node *n) {
    return n->progress == REDLOCK__N_AWAITED || n->progress == REDLOCK__N_DONE_AWAITED;
}
/* Facts about our key on a node (redlock__node.flags). LIFE: how long our
   key lives on the node is unknown (an adopted token): read it before a
   check-then-act step acts. CLOBBERED and LIFE outlive rounds; SEEN ends
   with its round (redlock__rebase) or when until is set. */
enum { REDLOCK__F_CLOBBERED = 8, REDLOCK__F_LIFE = 16,
       REDLOCK__F_SEEN = 32,   /* until holds the hash of what a takeover's GET read */
       REDLOCK__F_COARSE = 64  /* until is in ms: further than half an hour from the round's start */ };
/* A node's answer in the current round. */
enum { REDLOCK__OUT_NONE, REDLOCK__OUT_YES, REDLOCK__OUT_NO /* another holder */,
       REDLOCK__OUT_MISSING /* not (or no longer) ours */, REDLOCK__OUT_ERR };

/* The release scripts' notification of key k (section 10), by the flag
   f (the argument after the token, a readers-writer lock's after the
   token too): "s" SPUBLISH on k's shard channel (a node of a Redis Cluster
   whose servers have sharded pub/sub, redlock_node_set_sharded(): the
   channel must live in k's slot; see redlock_shard_channel()), else
   PUBLISH on REDLOCK_CHANNEL_PREFIX+k. Under pcall: a user the ACL denies
   either, or a server without SPUBLISH, still releases. */
#define REDLOCK__LUA_PUBLISH(f)                                                                              \
    "if " f "=='s' then local a=string.find(k,'{',1,true) local b=a and string.find(k,'}',a+1,true) if "     \
    "b and b>a+1 then pcall(redis.call,'spublish','redlock:'..k,'released') else "                          \
    "pcall(redis.call,'spublish','redlock:{'..k..'}','released') end else "                                 \
    "pcall(redis.call,'publish','redlock:'..k,'released') end"
/* ARGV[2] (release scripts: the argument after the token) present: the
   key was held, publish its release; the undo of a failed attempt leaves
   it out. */
static const char redlock__release_lua[] =
    "if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1]) if ARGV[2] then local k=KEYS[1] "
    REDLOCK__LUA_PUBLISH("ARGV[2]") " end return 1 else return 0 end";
static const char redlock__release_sha[] = "d7e00109fcea7097a6337cb32a8802b6d9d91443";
static const char redlock__extend_lua[] =
    "local v=redis.call('get',KEYS[1]) if v==ARGV[1] then return redis.call('pexpire',KEYS[1],ARGV[2]) "
    "elseif v then return -1 else return 0 end";
static const char redlock__extend_sha[] = "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394";
/* Reentrant locks (section 9): the key is a hash; field `owner` counts the
   owner's entries, one field `owner:token` per acquisition (and a fenced
   one " fence", section 11; the key goes with the owner's last entry).
   Adding and removing an entry by its token is idempotent: a retry adds nothing
   twice, an undo takes back exactly what its attempt added, landed or not.
   The key's life is only ever lengthened: every entry of the owner lives on it. */
static const char redlock__racquire_lua[] =
    "local k,o=KEYS[1],ARGV[1] local f=o..':'..ARGV[2] local t=redis.call('type',k).ok if t=='none' then "
    "redis.call('hset',k,o,1) redis.call('hset',k,f,1) redis.call('pexpire',k,ARGV[3]) return 1 end if "
    "t~='hash' then return 0 end local c=tonumber(redis.call('hget',k,o) or 0) if c==0 or "
    "redis.call('hlen',k)~=c+1+redis.call('hexists',k,' fence') then return 0 end if "
    "redis.call('hsetnx',k,f,1)==1 then c=redis.call('hincrby',k,o,1) end if "
    "redis.call('pttl',k)<tonumber(ARGV[3]) then redis.call('pexpire',k,ARGV[3]) end return c";
static const char redlock__racquire_sha[] = "fe1913b107883a8d56dff9985f4ef19d96780450";
static const char redlock__rrelease_lua[] =
    "local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash' or "
    "redis.call('hdel',k,o..':'..ARGV[2])==0 then return 0 end if redis.call('hincrby',k,o,-1)<=0 then "
    "redis.call('del',k) if ARGV[3] then " REDLOCK__LUA_PUBLISH("ARGV[3]") " end end return 1";
static const char redlock__rrelease_sha[] = "7283c68fe5834b62f0fa88be7e1310f6391bcf58";
static const char redlock__rextend_lua[] =
    "local k,o=KEYS[1],ARGV[1] local t=redis.call('type',k).ok if t=='none' then return 0 end if "
    "t=='hash' and redis.call('hexists',k,o..':'..ARGV[2])==1 then if "
    "redis.call('pttl',k)<tonumber(ARGV[3]) then redis.call('pexpire',k,ARGV[3]) end return 1 end if "
    "t=='hash' and redis.call('hexists',k,o)==1 then return 0 end return -1";
static const char redlock__rextend_sha[] = "8713768fb046a3ec2f3a21545b1de720ccbd516d";
/* Fenced locks (section 11): KEYS[2] is the key's counter, which never
   expires. The acquire counts every SET it wins; the write-back raises the
   counter to the holder's fence, only where the key is still the holder's. */
static const char redlock__facquire_lua[] =
    "if redis.call('set',KEYS[1],ARGV[1],'nx','px',ARGV[2]) then return redis.call('incr',KEYS[2]) end return 0";
static const char redlock__facquire_sha[] = "08c7557d4c89b0ab5b53a3a0ef90a225f2be7888";
static const char redlock__fence_lua[] =
    "if redis.call('get',KEYS[1])==ARGV[1] then local c=tonumber(redis.call('get',KEYS[2])) if not c or "
    "c<tonumber(ARGV[2]) then redis.call('set',KEYS[2],ARGV[2]) end return 1 end return 0";
static const char redlock__fence_sha[] = "48e95165afb854dba74eb9d2c02d43ed7c87f94a";
/* Fenced reentrant locks: the hold's fence is kept in the hash (field
   " fence": no owner id has a space; only ever raised), so that the
   owner's later entries take the same one; where none is kept yet (a new
   hash, an entry whose write-back never came) the reply is a new count.
   The holder takes the highest reply, as for a plain lock: a fence kept
   by an old entry on a few nodes is never taken over a higher count. */
static const char redlock__rfacquire_lua[] =
    "local k,o=KEYS[1],ARGV[1] local f=o..':'..ARGV[2] local t=redis.call('type',k).ok if t=='none' then "
    "redis.call('hset',k,o,1) redis.call('hset',k,f,1) redis.call('pexpire',k,ARGV[3]) return "
    "redis.call('incr',KEYS[2]) end if t~='hash' then return 0 end local "
    "c=tonumber(redis.call('hget',k,o) or 0) if c==0 or "
    "redis.call('hlen',k)~=c+1+redis.call('hexists',k,' fence') then return 0 end if "
    "redis.call('hsetnx',k,f,1)==1 then redis.call('hincrby',k,o,1) end if "
    "redis.call('pttl',k)<tonumber(ARGV[3]) then redis.call('pexpire',k,ARGV[3]) end return "
    "tonumber(redis.call('hget',k,' fence')) or redis.call('incr',KEYS[2])";
static const char redlock__rfacquire_sha[] = "9e90d98820f6fd7cf2d8944664d249d42ea91993";
static const char redlock__rfence_lua[] =
    "local k=KEYS[1] if redis.call('type',k).ok=='hash' and "
    "redis.call('hexists',k,ARGV[1]..':'..ARGV[2])==1 then local c=tonumber(redis.call('get',KEYS[2])) if "
    "not c or c<tonumber(ARGV[3]) then redis.call('set',KEYS[2],ARGV[3]) end "
    "c=tonumber(redis.call('hget',k,' fence')) if not c or c<tonumber(ARGV[3]) then redis.call('hset',k,' "
    "fence',ARGV[3]) end return 1 end return 0";
static const char redlock__rfence_sha[] = "9aed5e9a15c9204fc81f0a524e790f2b5de165d1";
/* Readers-writer locks (section 12): the key is a hash of holders, field
   token = mode letter (s shared, x exclusive) and the holder's expiry in
   the server's ms, and of waiting writers, field "w:"+token = "w" and its
   expiry. Each acquire prunes what expired; the key lives as long as its
   longest entry. A hash with any other field is not ours (0). The
   release's flag: "1" a release (drops the writer's mark, publishes), "2"
   the undo of an acquire's last attempt (drops the mark), none the undo
   of an attempt that will be retried (keeps the mark). */
static const char redlock__rwacquire_lua[] =
    "if redis.replicate_commands then redis.replicate_commands() end local "
    "k,tok,m=KEYS[1],ARGV[1],ARGV[3] local ty=redis.call('type',k).ok if ty~='none' and ty~='hash' then "
    "return 0 end local h=redis.call('hgetall',k) for i=2,#h,2 do local c=string.sub(h[i],1,1) if not "
    "((c=='s' or c=='x' or c=='u' or c=='w') and tonumber(string.sub(h[i],2))) then return 0 end end "
    "local t=redis.call('time') local now=tonumber(t[1])*1000+math.floor(tonumber(t[2])/1000) local "
    "busy,writer,last=false,false,0 for i=1,#h,2 do local f,v=h[i],h[i+1] local "
    "e=tonumber(string.sub(v,2)) if e<=now then redis.call('hdel',k,f) elseif f~=tok and f~='w:'..tok "
    "then local c=string.sub(v,1,1) if c=='w' then writer=true elseif m=='x' or c=='x' or (m=='u' and "
    "c=='u') then busy=true end if e>last then last=e end end end if busy or (m~='x' and writer) then if "
    "m=='x' then local e=now+tonumber(ARGV[4]) redis.call('hset',k,'w:'..tok,'w'..e) if e>last then "
    "last=e end end if last>now then redis.call('pexpire',k,last-now) end return 0 end local "
    "e=now+tonumber(ARGV[2]) redis.call('hset',k,tok,m..e) redis.call('hdel',k,'w:'..tok) if e>last then "
    "last=e end redis.call('pexpire',k,last-now) return 1";
static const char redlock__rwacquire_sha[] = "c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef";
static const char redlock__rwrelease_lua[] =
    "local k,tok=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash' then return 0 end if ARGV[2] then "
    "local w=redis.call('hget',k,'w:'..tok) if w and string.sub(w,1,1)=='w' then "
    "redis.call('hdel',k,'w:'..tok) end end local v=redis.call('hget',k,tok) local c=v and "
    "string.sub(v,1,1) local r=0 if c=='s' or c=='x' or c=='u' then redis.call('hdel',k,tok) r=1 end if "
    "redis.call('hlen',k)==0 then redis.call('del',k) end if r==1 and (ARGV[2]=='1' or ARGV[2]=='s') then "
    REDLOCK__LUA_PUBLISH("ARGV[2]") " end return r";
static const char redlock__rwrelease_sha[] = "f7bf6351927f135b8da4a9c42452806dc2a47757";
static const char redlock__rwextend_lua[] =
    "if redis.replicate_commands then redis.replicate_commands() end local k,tok=KEYS[1],ARGV[1] local "
    "ty=redis.call('type',k).ok if ty=='none' then return 0 end if ty~='hash' then return -1 end local "
    "v=redis.call('hget',k,tok) local c=v and string.sub(v,1,1) local rank={s=1,u=2,x=3} if not (c and "
    "rank[c] and rank[c]>=rank[ARGV[3]]) then return 0 end local t=redis.call('time') local "
    "now=tonumber(t[1])*1000+math.floor(tonumber(t[2])/1000) if (tonumber(string.sub(v,2)) or 0)<=now "
    "then redis.call('hdel',k,tok) return 0 end redis.call('hset',k,tok,c..(now+tonumber(ARGV[2]))) if "
    "redis.call('pttl',k)<tonumber(ARGV[2]) then redis.call('pexpire',k,ARGV[2]) end return 1";
static const char redlock__rwextend_sha[] = "4fa1c0304cf0189b45ec8ec2c59d15e46e862158";
/* Upgrade (update -> exclusive): 1 done, 0 other holders are still there
   (the entry's life renewed, the writer's mark set), -1 the entry is
   gone. Set-mode: the entry's mode letter, its life kept; drops the mark. */
static const char redlock__rwupgrade_lua[] =
    "if redis.replicate_commands then redis.replicate_commands() end local k,tok=KEYS[1],ARGV[1] if "
    "redis.call('type',k).ok~='hash' then return -1 end local v=redis.call('hget',k,tok) local c=v and "
    "string.sub(v,1,1) if not (c=='u' or c=='x') then return -1 end local t=redis.call('time') local "
    "now=tonumber(t[1])*1000+math.floor(tonumber(t[2])/1000) if (tonumber(string.sub(v,2)) or 0)<=now "
    "then redis.call('hdel',k,tok) return -1 end local h=redis.call('hgetall',k) local busy,last=false,0 "
    "for i=1,#h,2 do local e=tonumber(string.sub(h[i+1],2)) or 0 if e<=now then redis.call('hdel',k,h[i]) "
    "elseif h[i]~=tok and h[i]~='w:'..tok then if string.sub(h[i+1],1,1)~='w' then busy=true end if "
    "e>last then last=e end end end local e=now+tonumber(ARGV[2]) if busy then "
    "redis.call('hset',k,tok,c..e) local w=now+tonumber(ARGV[3]) redis.call('hset',k,'w:'..tok,'w'..w) if "
    "w>e then e=w end else redis.call('hset',k,tok,'x'..e) redis.call('hdel',k,'w:'..tok) end if last>e "
    "then e=last end redis.call('pexpire',k,e-now) if busy then return 0 end return 1";
static const char redlock__rwupgrade_sha[] = "4d94de4c4c2d54aa9a81ab17767096537623e251";
static const char redlock__rwsetmode_lua[] =
    "local k,tok=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash' then return 0 end "
    "redis.call('hdel',k,'w:'..tok) local v=redis.call('hget',k,tok) local c=v and string.sub(v,1,1) if "
    "not (c=='s' or c=='x' or c=='u') then return 0 end redis.call('hset',k,tok,ARGV[2]..string.sub(v,2)) "
    "return 1";
static const char redlock__rwsetmode_sha[] = "b06ef25325497e7d384d8265d29a5597c574e502";
/* For the storage a holder writes to, not sent by the core (section 11). */
static const char redlock__fenced_set_lua[] =
    "local f=tonumber(ARGV[1]) if not f then return redis.error_reply('ERR fence is not a number') end "
    "local h=tonumber(redis.call('get',KEYS[2])) if h and f<h then return 0 end redis.call('set',KEYS[2],ARGV[1]) "
    "redis.call('set',KEYS[1],ARGV[2]) return 1";

/* ---- built-in clocks and randomness (used only when callbacks are NULL) ---- */

/* clock_gettime needs POSIX: present when this file was included before any
   system header (it asks for _POSIX_C_SOURCE at the top) or the build
   defines a POSIX feature macro. On a POSIX system without it the build
   stops here, not at run time; REDLOCK_NO_BUILTIN_CLOCKS leaves the clocks
   out on purpose (redlock_client_init then requires now_us and wall_ms). */
#if defined(CLOCK_MONOTONIC) && defined(CLOCK_REALTIME) && !defined(REDLOCK_NO_BUILTIN_CLOCKS)
#define REDLOCK__HAVE_CLOCK 1
#ifdef CLOCK_BOOTTIME
/* keeps counting while the system is suspended, as the servers' TTLs do */
#define REDLOCK__MONO_CLOCK CLOCK_BOOTTIME
#else
#define REDLOCK__MONO_CLOCK CLOCK_MONOTONIC
#endif
REDLOCK_API int64_t redlock_clock_us(void) {
    struct timespec ts;
    clock_gettime(REDLOCK__MONO_CLOCK, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t redlock__mono_us(void *user) {
    (void)user;
    return redlock_clock_us();
}

static int64_t redlock__wall_ms(void *user) {
    struct timespec ts;
    (void)user;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
#elif !defined(REDLOCK_NO_BUILTIN_CLOCKS) && (defined(__unix__) || defined(__APPLE__))
#error "redlock.h: clock_gettime() is not declared. In the file that defines REDLOCK_IMPLEMENTATION include redlock.h before any system header, or build with -D_POSIX_C_SOURCE=200809L; or define REDLOCK_NO_BUILTIN_CLOCKS and pass the now_us and wall_ms callbacks"
#endif

#ifndef REDLOCK_RANDOM_DEVICE
#define REDLOCK_RANDOM_DEVICE "/dev/urandom"
#endif

static int redlock__os_random(void *user, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    FILE *f;
    size_t got;
    (void)user;
#ifdef REDLOCK__HAVE_GETRANDOM
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n <= 0) break;
        p += n;
        len -= (size_t)n;
    }
    if (len == 0) return 0;
#endif
    f = fopen(REDLOCK_RANDOM_DEVICE, "rb");
    if (!f) return -1;
    got = fread(p, 1, len, f);
    fclose(f);
    return got == len ? 0 : -1;
}

/* ---- small helpers ---- */

static int64_t redlock__now(const redlock_client *c) { return c->_cb.now_us(c->_user); }

/* Decimal digits of v, not terminated; returns their count (at most 20). */
static size_t redlock__fmt_u64(char *out, uint64_t v) {
    char tmp[20];
    size_t n = 0, i = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) out[i++] = tmp[--n];
    return i;
}

static int redlock__has(const char *s, size_t len, const char *needle) {
    size_t n = strlen(needle), i;
    for (i = 0; i + n <= len; i++)
        if (memcmp(s + i, needle, n) == 0) return 1;
    return 0;
}

static int redlock__starts(const char *s, size_t len, const char *prefix) {
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* 32 bits of FNV-1a, mixed: two different values of one key collide about
   once in 4 billion. */
static uint32_t redlock__hash32(const char *s, size_t len) {
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}

/* Legacy value "expiry_ms:token". Returns 1 and fills the parts if it has
   that shape. */
static int redlock__parse_legacy(const char *s, size_t len, int64_t *expiry,
                                 const char **tok, size_t *toklen) {
    size_t i = 0;
    int64_t v = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10) return 0; /* no time of ours: someone else's value */
        v = v * 10 + d;
    }
    if (i == 0 || i >= len || s[i] != ':') return 0;
    *expiry = v;
    *tok = s + i + 1;
    *toklen = len - i - 1;
    return 1;
}

static int redlock__quorum(const redlock_client *c) { return c->_cfg.node_count / 2 + 1; }

/* Too many nodes refuse this client's TLS, AUTH or SELECT for a quorum:
   retrying cannot help until someone fixes the configuration. 0 while a
   quorum is possible, else what the acquire ends with: TLS when a node
   refused TLS (its AUTH and SELECT were never tried), else CONFIG. */
static int redlock__unusable(const redlock_client *c) {
    int i, refused = 0, tls = 0;
    for (i = 0; i < c->_cfg.node_count; i++) {
        refused += c->_refused[i] != 0;
        tls |= c->_refused[i] == (uint8_t)-REDLOCK_ERR_TLS;
    }
    if (c->_cfg.node_count - refused >= redlock__quorum(c)) return 0;
    return tls ? REDLOCK_ERR_TLS : REDLOCK_ERR_CONFIG;
}

/* A node error that no retry cures: the node refuses this client's TLS,
   credentials or database until someone reconfigures one of them. */
static int redlock__refusal(int status) {
    return status == REDLOCK_ERR_TLS || status == REDLOCK_ERR_AUTH || status == REDLOCK_ERR_SELECT;
}

/* What validity must leave aside: clock drift, and with legacy nodes also
   one node timeout, by which another client's late GETSET can move the
   expiry written in the value earlier. */
static int64_t redlock__drift_us(const redlock_client *c, int64_t ttl_ms) {
    int64_t d = (int64_t)((double)ttl_ms * 1000.0 * c->_cfg.drift_factor) + c->_cfg.clock_drift_ms * 1000;
    return c->_any_legacy ? d + c->_cfg.node_timeout_ms * 1000 : d;
}

/* ---- what kind of lock ---- */
enum { REDLOCK__K_REENTRANT = 1, REDLOCK__K_FENCED = 2, REDLOCK__K_ACCESS_SHIFT = 2 /* 2 bits */,
       REDLOCK__K_OPTS_ACCESS_SHIFT = 4 /* 2 bits */,
       REDLOCK__K_REFUSE_EVICTING = 128 /* grants of nodes that may evict keys do not count */ };
static int redlock__reentrant(const redlock_lock *lk) { return lk->_kind & REDLOCK__K_REENTRANT; }
static int redlock__fenced(const redlock_lock *lk) { return (lk->_kind & REDLOCK__K_FENCED) != 0; }
static redlock_access redlock__access(const redlock_lock *lk) { return (redlock_access)((lk->_kind >> REDLOCK__K_ACCESS_SHIFT) & 3); }
/* the mode opts.access asked for: what every hold starts with */
static redlock_access redlock__opts_access(const redlock_lock *lk) {
    return (redlock_access)((lk->_kind >> REDLOCK__K_OPTS_ACCESS_SHIFT) & 3);
}

/* The scripts, by number: a script's bit in redlock_client._scripted is
   1 << (number - 1) (a server caches each script on its own). */
enum { REDLOCK__LUA_NONE, REDLOCK__LUA_RELEASE, REDLOCK__LUA_EXTEND, REDLOCK__LUA_RACQUIRE, REDLOCK__LUA_RRELEASE,
       REDLOCK__LUA_REXTEND, REDLOCK__LUA_FACQUIRE, REDLOCK__LUA_FENCE, REDLOCK__LUA_RFACQUIRE, REDLOCK__LUA_RFENCE,
       REDLOCK__LUA_RWACQUIRE, REDLOCK__LUA_RWRELEASE, REDLOCK__LUA_RWEXTEND, REDLOCK__LUA_RWUPGRADE,
       REDLOCK__LUA_RWSETMODE };

/* A lock kind: its script per operation and the arguments they take.
   Adding a kind is one row here (and redlock__kind_index) plus its
   scripts: a REDLOCK__LUA_* number each and a row in redlock__script_of's
   table (redlock_client._scripted has 16 bits, 14 in use).
   The plain kind's acquire is SET NX PX, not a script; its release and
   extend fall back to check-then-act chains on nodes without scripts,
   and its acquire to SETNX / GET / GETSET on legacy nodes: legacy and
   no-scripting are what a node can do, not kinds. Every other operation
   needs its script on the node: where the node refuses scripts, its vote
   fails with NO_SCRIPTING (redlock__needs_scripts). */
enum { REDLOCK__KIND_PLAIN, REDLOCK__KIND_REENTRANT, REDLOCK__KIND_FENCED, REDLOCK__KIND_REENTRANT_FENCED,
       REDLOCK__KIND_RW };
#define REDLOCK__BIT(op) (1u << (op))
typedef struct redlock__kind {
    uint8_t script[REDLOCK__S_COUNT]; /* REDLOCK__LUA_* per operation; NONE: a plain command, or no such operation */
    uint8_t bare;    /* operations (REDLOCK__BIT) that go on without scripts on a node that refuses them */
    uint8_t counter; /* operations whose script gets the fence counter too (KEYS[2]); the acquire
                        answers the counter */
    uint8_t owner;   /* ARGV[1] is the owner id: the key is a hash of owners' entries (section 9) */
    uint8_t modes;   /* readers-writer (section 12): ARGV carries the access mode; the acquire answers 1 or 0 */
} redlock__kind;
static const redlock__kind redlock__kinds[] = {
    /* PLAIN */ { { REDLOCK__LUA_NONE, REDLOCK__LUA_RELEASE, REDLOCK__LUA_EXTEND, 0, 0, 0 },
                  REDLOCK__BIT(REDLOCK__S_RELEASE) | REDLOCK__BIT(REDLOCK__S_EXTEND), 0, 0, 0 },
    /* REENTRANT */ { { REDLOCK__LUA_RACQUIRE, REDLOCK__LUA_RRELEASE, REDLOCK__LUA_REXTEND, 0, 0, 0 }, 0, 0, 1, 0 },
    /* FENCED */ { { REDLOCK__LUA_FACQUIRE, REDLOCK__LUA_RELEASE, REDLOCK__LUA_EXTEND, REDLOCK__LUA_FENCE, 0, 0 },
                   REDLOCK__BIT(REDLOCK__S_RELEASE) | REDLOCK__BIT(REDLOCK__S_EXTEND),
                   REDLOCK__BIT(REDLOCK__S_ACQUIRE) | REDLOCK__BIT(REDLOCK__S_FENCE), 0, 0 },
    /* REENTRANT_FENCED */ { { REDLOCK__LUA_RFACQUIRE, REDLOCK__LUA_RRELEASE, REDLOCK__LUA_REXTEND, REDLOCK__LUA_RFENCE,
                             0, 0 }, 0, REDLOCK__BIT(REDLOCK__S_ACQUIRE) | REDLOCK__BIT(REDLOCK__S_FENCE), 1, 0 },
    /* RW */ { { REDLOCK__LUA_RWACQUIRE, REDLOCK__LUA_RWRELEASE, REDLOCK__LUA_RWEXTEND, 0, REDLOCK__LUA_RWUPGRADE,
                 REDLOCK__LUA_RWSETMODE }, 0, 0, 0, 1 }
};
/* The kind of the options' lock: the options allow no other combination
   of reentrant, fence and access (redlock_lock_init). */
static int redlock__kind_index(int reentrant, int fenced, redlock_access access) {
    if (access != REDLOCK_ACCESS_DEFAULT) return REDLOCK__KIND_RW;
    return (reentrant ? REDLOCK__KIND_REENTRANT : 0) + (fenced ? REDLOCK__KIND_FENCED : 0);
}
static const redlock__kind *redlock__kind_of(const redlock_lock *lk) {
    return &redlock__kinds[redlock__kind_index(redlock__reentrant(lk), redlock__fenced(lk), redlock__access(lk))];
}
/* The one "needs scripts" rule: the kind runs a script for the operation
   and has nothing to fall back on where a node refuses scripts. */
static int redlock__kind_needs_scripts(const redlock__kind *k, int op) {
    return op < REDLOCK__S_COUNT && k->script[op] != REDLOCK__LUA_NONE && !(k->bare & REDLOCK__BIT(op));
}
static int redlock__needs_scripts(const redlock_lock *lk, int op) { return redlock__kind_needs_scripts(redlock__kind_of(lk), op); }
/* How long after node i may have lost keys its grants count again for
   this lock (section 4, Restarts): any holder's key there was set at most
   a ttl before, so it is gone by then; the drift allowance covers our
   clock running fast. */
static int64_t redlock__restart_bound_us(const redlock_lock *lk) {
    int64_t ms = lk->_ttl_ms > lk->_client->_cfg.max_ttl_ms ? lk->_ttl_ms : lk->_client->_cfg.max_ttl_ms;
    return ms * 1000 + redlock__drift_us(lk->_client, ms);
}
/* Node i's server may forget this lock's keys before their time (section
   4, Eviction) and the lock does not count such a node's grants. */
static int redlock__refuses(const redlock_lock *lk, int i) {
    return (lk->_kind & REDLOCK__K_REFUSE_EVICTING) && lk->_client->_evicts[i] != REDLOCK_EVICTS_NONE;
}
/* Why node i's grant does not count for this lock now, or 0: the lock
   refuses it (EVICTING), or it may have lost keys too recently
   (section 4, Restarts). */
static int redlock__discounted(const redlock_lock *lk, int i, int64_t now) {
    const redlock_client *c = lk->_client;
    if (redlock__refuses(lk, i)) return REDLOCK_ERR_EVICTING;
    if (c->_cfg.max_ttl_ms >= 0 && c->_restart_at[i] != INT64_MIN && now - c->_restart_at[i] < redlock__restart_bound_us(lk))
        return REDLOCK_ERR_RESTARTED;
    return 0;
}

/* ---- what a lock keeps outside its handle, and times derived from it ---- */

/* One block per lock_init, from REDLOCK_MALLOC: the key, the label
   (NUL-terminated, "" for none), the token (the label and hex,
   NUL-terminated), the bytes of the next token and, for a reentrant lock,
   the owner id (NUL-terminated) and the thread part of the next default
   owner. */
#define REDLOCK__FENCE_PREFIX_LEN (sizeof REDLOCK_FENCE_PREFIX - 1)
static size_t redlock__owner_size(int reentrant) { return reentrant ? REDLOCK_MAX_OWNER + 1 + sizeof(uint64_t) : 0; }
static size_t redlock__strings_size(size_t key_len, size_t label_len, int reentrant, int fenced) {
    return REDLOCK_KEY_BLOCK_SIZE(key_len) + 2 * label_len + redlock__owner_size(reentrant) +
           (fenced ? REDLOCK__FENCE_PREFIX_LEN + key_len : 0);
}
static const char *redlock__label(const redlock_lock *lk) { return lk->_key + lk->_key_len; }
static size_t redlock__label_len(const redlock_lock *lk) { return strlen(redlock__label(lk)); }
static char *redlock__token(const redlock_lock *lk) { return lk->_key + lk->_key_len + redlock__label_len(lk) + 1; }
/* the token's room: the label and the hex digits (an adopted token's label
   may be shorter); before the first acquire the token reads "" */
static size_t redlock__token_room(const redlock_lock *lk) { return redlock__label_len(lk) + REDLOCK_TOKEN_LEN; }
static size_t redlock__token_len(const redlock_lock *lk) { return strlen(redlock__token(lk)); }
static unsigned char *redlock__fresh(const redlock_lock *lk) {
    return (unsigned char *)redlock__token(lk) + redlock__token_room(lk) + 1;
}
static char *redlock__owner(const redlock_lock *lk) {
    return lk->_key + REDLOCK_KEY_BLOCK_SIZE(lk->_key_len) + 2 * redlock__label_len(lk);
}
/* a fenced lock's counter: REDLOCK_FENCE_PREFIX + key, after the owner's room */
static char *redlock__counter(const redlock_lock *lk) { return redlock__owner(lk) + redlock__owner_size(redlock__reentrant(lk)); }


/* How long a round may take: the node timeout, and WAIT's timeout more
   for the rounds whose grants wait for replicas (redlock__granted). */
static int redlock__waits_replicas(const redlock_lock *lk) {
    int ph = lk->_phase;
    return lk->_client->_cfg.wait_replicas > 0 && (ph == REDLOCK__PH_ACQUIRE || ph == REDLOCK__PH_FENCE ||
                                                   ph == REDLOCK__PH_EXTEND || ph == REDLOCK__PH_UPGRADE);
}
static int64_t redlock__grant_round_us(const redlock_client *c) {
    return (c->_cfg.node_timeout_ms + (c->_cfg.wait_replicas > 0 ? c->_cfg.wait_timeout_ms : 0)) * 1000;
}
static int64_t redlock__round_us(const redlock_lock *lk) {
    return redlock__waits_replicas(lk) ? redlock__grant_round_us(lk->_client) : lk->_client->_cfg.node_timeout_ms * 1000;
}
static int64_t redlock__round_deadline(const redlock_lock *lk) {
    return lk->_round_start + redlock__round_us(lk);
}
/* acquiring with a wait: the time by which the outcome is reported */
static int64_t redlock__wait_deadline(const redlock_lock *lk) { return lk->_op_start + lk->_wait_us; }

/* ---- statistics ---- */

/* Section 14: a few increments where results and events are made, whether
   or not anyone listens; nothing with REDLOCK_NO_STATS. */

#ifndef REDLOCK_NO_STATS
#define REDLOCK__COUNT(c, field) ((void)(c)->_stats.field++)
/* bucket of a sample: its bit length (0 us: 0), 2^30 us and more: the last */
static int redlock__latency_bucket(uint64_t us) {
    int b = 0;
    if (us >> 30) return REDLOCK_HISTOGRAM_BUCKETS - 1;
#if defined(__GNUC__) || defined(__clang__)
    if (us) b = 64 - __builtin_clzll((unsigned long long)us);
#else
    if (us >> 16) { b += 16; us >>= 16; }
    if (us >> 8) { b += 8; us >>= 8; }
    if (us >> 4) { b += 4; us >>= 4; }
    if (us >> 2) { b += 2; us >>= 2; }
    if (us >> 1) { b += 1; us >>= 1; }
    b += (int)us;
#endif
    return b;
}

static void redlock__sample(redlock_histogram *h, int64_t us) {
    uint64_t u = us > 0 ? (uint64_t)us : 0; /* a clock that stepped back: 0 */
    h->count++;
    h->sum_us += u;
    if (u > h->max_us) h->max_us = u;
    h->bucket[redlock__latency_bucket(u)]++;
}

/* A held lock ended without the holder's release. */
static void redlock__count_lost(redlock_client *c, int reason) {
    redlock_stats *st = &c->_stats;
    st->lost++;
    switch (reason) {
    case REDLOCK_ERR_EXPIRED: st->lost_expired++; break;
    case REDLOCK_ERR_STOLEN: st->lost_stolen++; break;
    case REDLOCK_ERR_QUORUM_LOST: st->lost_quorum++; break;
    case REDLOCK_ERR_HOLD_LIMIT: st->lost_hold_limit++; break;
    default: st->lost_other++; break;
    }
}

/* A node's vote failed with an error (not a vote against). */
static void redlock__count_node_failure(redlock_client *c, int node, int status) {
    redlock_node_failure k;
    switch (status) {
    case REDLOCK_ERR_CONNECT: case REDLOCK_ERR_TRANSPORT: case REDLOCK_ERR_TLS:
    case REDLOCK_ERR_AUTH: case REDLOCK_ERR_SELECT: k = REDLOCK_NODE_FAIL_CONNECT; break;
    case REDLOCK_ERR_NODE_TIMEOUT: k = REDLOCK_NODE_FAIL_TIMEOUT; break;
    case REDLOCK_ERR_SERVER: case REDLOCK_ERR_NOPERM: case REDLOCK_ERR_NO_SCRIPTING: k = REDLOCK_NODE_FAIL_SERVER; break;
    case REDLOCK_ERR_PROTOCOL: k = REDLOCK_NODE_FAIL_PROTOCOL; break;
    default: k = REDLOCK_NODE_FAIL_OTHER; break;
    }
    c->_stats.node_failures[node][k]++;
}

/* An acquire ended with status. */
static void redlock__count_acquire(redlock_stats *st, int status) {
    switch (status) {
    case REDLOCK_OK: st->acquired++; break;
    case REDLOCK_ERR_LOCKED: st->acquire_busy++; break;
    case REDLOCK_ERR_TIMEOUT: st->acquire_timeout++; break;
    case REDLOCK_ERR_NO_QUORUM: case REDLOCK_ERR_VALIDITY: case REDLOCK_ERR_CONFIG: case REDLOCK_ERR_OVERLOADED:
    case REDLOCK_ERR_TLS: case REDLOCK_ERR_NO_SCRIPTING: case REDLOCK_ERR_NOPERM: case REDLOCK_ERR_EVICTING:
    case REDLOCK_ERR_RESTARTED: case REDLOCK_ERR_REPLICAS: st->acquire_no_quorum++; break;
    case REDLOCK_ERR_CANCELLED: st->acquire_cancelled++; break;
    default: st->acquire_other++; break;
    }
}

/* A user operation ended (redlock__report; LOST is counted by redlock__lose,
   which may not report it). */
static void redlock__count_result(redlock_lock *lk, redlock_op op, int status, int64_t now) {
    redlock_stats *st = &lk->_client->_stats;
    int ok = status == REDLOCK_OK;
    switch (op) {
    case REDLOCK_OP_ACQUIRE:
        redlock__count_acquire(st, status);
        if (ok) redlock__sample(&st->acquire_us, now - lk->_op_start);
        if (ok && lk->_handoff) redlock__sample(&st->handoff_us, now - lk->_arg.woken_at);
        break;
    case REDLOCK_OP_RELEASE: ++*(ok ? &st->releases : &st->release_failed); break;
    case REDLOCK_OP_EXTEND: ++*(ok ? &st->extends : &st->extend_failed); break;
    case REDLOCK_OP_UPGRADE: ++*(ok ? &st->upgrades : &st->upgrade_failed); break;
    case REDLOCK_OP_DOWNGRADE: ++*(ok ? &st->downgrades : &st->downgrade_failed); break;
    default: break;
    }
}

#else
#define REDLOCK__COUNT(c, field) ((void)0)
#define redlock__sample(h, us) ((void)0)
#define redlock__count_lost(c, reason) ((void)0)
#define redlock__count_node_failure(c, node, status) ((void)0)
#define redlock__count_result(lk, op, status, now) ((void)0)
#endif

/* Every change of a lock's state goes through here: `held` follows the
   transitions into and out of HELD. */
static void redlock__set_state(redlock_lock *lk, redlock_state s) {
#ifndef REDLOCK_NO_STATS
    redlock_stats *st = &lk->_client->_stats;
    if (lk->_state == REDLOCK_STATE_HELD && s != REDLOCK_STATE_HELD) st->held--;
    else if (lk->_state != REDLOCK_STATE_HELD && s == REDLOCK_STATE_HELD && ++st->held > st->held_max)
        st->held_max = st->held;
#endif
    lk->_state = (uint8_t)s;
}

static void redlock__emit(redlock_lock *lk, redlock_event *ev) {
    redlock_client *c = lk->_client;
    if (!c->_cb.on_event) return;
    ev->lock = lk;
    c->_cb.on_event(c->_user, ev);
}

/* Every event starts here: the fields every event has, the rest zero;
   node -1 for the whole lock. */
static redlock_event redlock__event_of(redlock_event_type type, int op, int node, int status, int attempt) {
    redlock_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = type;
    ev.op = (redlock_op)op;
    ev.node = node;
    ev.status = status;
    ev.attempt = attempt;
    return ev;
}

/* An event with the lock's op and attempt and nothing else. */
static void redlock__event(redlock_lock *lk, redlock_event_type type, int node, int status) {
    redlock_event ev;
    if (!lk->_client->_cb.on_event) return;
    ev = redlock__event_of(type, lk->_phase_op, node, status, lk->_attempt);
    redlock__emit(lk, &ev);
}

/* ---- rounds ---- */

/* A release, undo or cleanup leaves node i's key to expire. */
static void redlock__key_left(redlock_lock *lk, int i) { redlock__event(lk, REDLOCK_EV_KEY_LEFT, i, 0); }

static int redlock__node_legacy(const redlock_lock *lk, int i) { return (lk->_client->_caps[i] & REDLOCK__CAP_LEGACY) != 0; }
static int redlock__node_noscript(const redlock_lock *lk, int i) {
    return (lk->_client->_caps[i] & (REDLOCK__CAP_LEGACY | REDLOCK__CAP_NO_SCRIPTS)) != 0;
}

/* The first step of a check-then-act chain (nodes without scripts): GET;
   or, while our key's life there is unknown and its value holds no expiry
   (modern), PTTL first. */
static uint8_t redlock__check_step(const redlock_lock *lk, int i, int release) {
    if ((lk->_node[i].flags & REDLOCK__F_LIFE) && !redlock__node_legacy(lk, i))
        return release ? REDLOCK__ST_REL_PTTL : REDLOCK__ST_EXT_PTTL;
    return release ? REDLOCK__ST_REL_GET : REDLOCK__ST_EXT_GET;
}

/* The operation a round's steps serve. */
static int redlock__phase_op(int phase) {
    switch (phase) {
    case REDLOCK__PH_ACQUIRE: return REDLOCK__S_ACQUIRE;
    case REDLOCK__PH_EXTEND: return REDLOCK__S_EXTEND;
    case REDLOCK__PH_FENCE: return REDLOCK__S_FENCE;
    case REDLOCK__PH_UPGRADE: return REDLOCK__S_UPGRADE;
    case REDLOCK__PH_DOWNGRADE:
    case REDLOCK__PH_SETTLE: return REDLOCK__S_SET_MODE;
    default: return REDLOCK__S_RELEASE; /* a release, an undo, a cleanup */
    }
}

/* Node i's first step in a round of this phase: the kind's script for the
   operation (SET, or SETNX on a legacy node, where there is none), or
   the check-then-act chain where the node refuses scripts and the kind
   may do without. */
static uint8_t redlock__first_step(const redlock_lock *lk, int phase, int i) {
    static const uint8_t script_step[REDLOCK__S_COUNT] = { REDLOCK__ST_ACQUIRE, REDLOCK__ST_RELEASE, REDLOCK__ST_EXTEND,
                                                           REDLOCK__ST_FENCE, REDLOCK__ST_UPGRADE, REDLOCK__ST_SET_MODE };
    const redlock__kind *k = redlock__kind_of(lk);
    int op = redlock__phase_op(phase);
    /* undo, cleanup and settle send the script itself: one command per
       node, so nothing is left to send if the lock is deinitialised meanwhile */
    int eval = phase == REDLOCK__PH_ROLLBACK || phase == REDLOCK__PH_CLEANUP || phase == REDLOCK__PH_SETTLE;
    if (k->script[op] == REDLOCK__LUA_NONE) return redlock__node_legacy(lk, i) ? REDLOCK__ST_SETNX : REDLOCK__ST_SET;
    if ((k->bare & REDLOCK__BIT(op)) && redlock__node_noscript(lk, i)) return redlock__check_step(lk, i, op == REDLOCK__S_RELEASE);
    return (uint8_t)(script_step[op] | (eval ? REDLOCK__ST_EVAL : 0));
}

/* A node's `until` (monotonic; 0: not ours to act on) is kept relative to
   the round's start, in µs; past half an hour, in ms rounded down (never
   later than the truth). Each new round moves it to its own start. */
#define REDLOCK__UNTIL_NONE INT32_MIN
#define REDLOCK__UNTIL_FOREVER INT32_MAX

static int64_t redlock__until(const redlock_lock *lk, int i) {
    const redlock__node *n = &lk->_node[i];
    if ((n->flags & REDLOCK__F_SEEN) || n->until == REDLOCK__UNTIL_NONE) return 0;
    if (n->until == REDLOCK__UNTIL_FOREVER) return REDLOCK_NO_DEADLINE;
    return lk->_round_start + (int64_t)n->until * (n->flags & REDLOCK__F_COARSE ? 1000 : 1);
}

/* Stores until relative to base. */
static void redlock__store_until(redlock__node *n, int64_t until, int64_t base) {
    int64_t d = until - base;
    n->flags = (uint8_t)(n->flags & ~(REDLOCK__F_SEEN | REDLOCK__F_COARSE));
    if (until == 0) { n->until = REDLOCK__UNTIL_NONE; return; }
    if (until == REDLOCK_NO_DEADLINE) { n->until = REDLOCK__UNTIL_FOREVER; return; }
    if (d > REDLOCK__UNTIL_NONE && d < REDLOCK__UNTIL_FOREVER) { n->until = (int32_t)d; return; }
    n->flags |= REDLOCK__F_COARSE;
    d = d >= 0 ? d / 1000 : -((999 - d) / 1000);
    if (d <= REDLOCK__UNTIL_NONE) d = REDLOCK__UNTIL_NONE + 1;
    n->until = d >= REDLOCK__UNTIL_FOREVER ? REDLOCK__UNTIL_FOREVER - 1 : (int32_t)d;
}

static void redlock__set_until(redlock_lock *lk, int i, int64_t until) {
    redlock__store_until(&lk->_node[i], until, lk->_round_start);
}

/* A new round starts at `start`: every node's until moves to that base. */
static void redlock__rebase(redlock_lock *lk, int64_t start) {
    int i;
    for (i = 0; i < lk->_client->_cfg.node_count; i++) redlock__store_until(&lk->_node[i], redlock__until(lk, i), start);
    lk->_round_start = start;
}

/* When the watchdog first renews after an acquire: renew_every less a
   share of up to 1/16 of it that is fixed per lock, so that locks taken in
   one burst spread their renewals; later renewals keep that phase (every
   renew_every after the last), so those of one tick stay together and go
   out in few writes. The share comes from the lock's number on its client
   (0 for the first: no share), by the golden ratio, which spreads
   consecutive numbers evenly. */
static int64_t redlock__renewal_due(const redlock_lock *lk) {
    uint64_t number = lk->_id >> lk->_client->_hash_bits;
    uint64_t share = (number * UINT64_C(0x9E3779B97F4A7C15)) >> 48; /* 0 .. 65535 */
    return lk->_round_start + lk->_renew_every_us - (int64_t)((uint64_t)(lk->_renew_every_us / 16) * share / 65536);
}

static void redlock__take_turn(redlock_lock *lk, int phase, int64_t now);
static void redlock__round_over(redlock_lock *lk, int64_t now);
static int redlock__waiting(const redlock_lock *lk);

/* Starts a round: every node gets the phase's first command (sent by the
   drive loop once the round has its turn, redlock__take_turn). Replies to
   earlier requests are stale from now on. */
static void redlock__round(redlock_lock *lk, int phase, int64_t now) {
    redlock_client *c = lk->_client;
    int i;
    redlock__take_turn(lk, phase, now);
    lk->_phase = phase;
    redlock__rebase(lk, now);
    for (i = 0; i < c->_cfg.node_count; i++) {
        redlock__node *n = &lk->_node[i];
        /* the write-back goes where the attempt won; a node whose acquire
           is still out keeps waiting for it (and gets the write-back if it
           wins too); the others count as no answer */
        if (phase == REDLOCK__PH_FENCE && !redlock__n_done(n)) continue;
        if (phase == REDLOCK__PH_FENCE && n->outcome != REDLOCK__OUT_YES) {
            n->seq = 0;
            n->progress = REDLOCK__N_DONE;
            n->outcome = REDLOCK__OUT_ERR;
            n->status = 0;
            continue;
        }
        if (phase == REDLOCK__PH_ACQUIRE) {
            /* what an earlier attempt learned about a node's key says
               nothing now; with a new token, nothing is clobbered yet */
            redlock__set_until(lk, i, 0);
            if (lk->_attempt == 1) n->flags = 0;
        }
        n->seq = 0;
        n->step = redlock__first_step(lk, phase, i);
        n->status = 0;
        n->loops = 0;
        n->progress = REDLOCK__N_TO_SEND;
        /* an operation that needs scripts sends nothing to a node known to
           refuse them (configured LEGACY, or found so): its vote fails at once */
        if (redlock__node_noscript(lk, i) && redlock__needs_scripts(lk, redlock__phase_op(phase))) {
            n->progress = REDLOCK__N_DONE;
            n->outcome = REDLOCK__OUT_ERR;
            n->status = REDLOCK_ERR_NO_SCRIPTING;
            continue;
        }
        /* a node where we overwrote another holder's value is left alone */
        if ((n->flags & REDLOCK__F_CLOBBERED) && phase != REDLOCK__PH_ACQUIRE) {
            n->progress = REDLOCK__N_DONE;
            n->outcome = REDLOCK__OUT_MISSING;
            if (phase != REDLOCK__PH_EXTEND) redlock__key_left(lk, i);
        }
    }
    lk->_dirty = 1;
}

static void redlock__node_done(redlock_lock *lk, int i, int outcome, int status, int64_t now) {
    redlock__node *n = &lk->_node[i];
    if (status < -128) status = REDLOCK_ERR_TRANSPORT; /* not a status of ours */
    n->progress = REDLOCK__N_DONE;
    n->outcome = (int8_t)outcome;
    n->status = (int8_t)status;
    /* a node that refuses the client's TLS, credentials or database
       refuses every lock until it is reconfigured: remembered until it
       answers */
    if (outcome != REDLOCK__OUT_ERR || redlock__refusal(status))
        lk->_client->_refused[i] = (uint8_t)(outcome == REDLOCK__OUT_ERR ? -status : 0);
    if (outcome == REDLOCK__OUT_ERR && status) redlock__count_node_failure(lk->_client, i, status);
    if (lk->_client->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_VOTE, lk->_phase_op, i, status, lk->_attempt);
        ev.vote = outcome == REDLOCK__OUT_YES;
        ev.held_by_other = outcome == REDLOCK__OUT_NO;
        ev.rtt_us = now - (lk->_round_start + n->sent_us);
        ev.elapsed_us = now - lk->_round_start;
        redlock__emit(lk, &ev);
    }
}

static void redlock__next_step(redlock_lock *lk, int i, uint8_t step, int64_t now);

/* Node i granted (an acquire, a write-back, a renewal, an upgrade): it
   counts as `outcome`, unless its grant does not count now
   (redlock__discounted: EVICTING or RESTARTED): then its vote fails with
   that status. With cfg.wait_replicas, a grant that would count first
   waits for the replicas: WAIT goes out, the outcome and the operation
   that granted wait in the node (outcome, loops: a chain's repeats are
   over by then) for redlock__answer_wait. */
static void redlock__granted(redlock_lock *lk, int i, int outcome, int64_t now) {
    redlock__node *n = &lk->_node[i];
    int why = redlock__discounted(lk, i, now);
    if (why) redlock__node_done(lk, i, REDLOCK__OUT_ERR, why, now);
    else if (redlock__waits_replicas(lk) && n->step != REDLOCK__ST_WAIT) {
        n->outcome = (int8_t)outcome;
        n->loops = redlock__step_info_of(n->step)->op;
        redlock__next_step(lk, i, REDLOCK__ST_WAIT, now);
    } else redlock__node_done(lk, i, outcome, 0, now);
}

/* How long an extend round lets the key live, at the least, wherever its
   command lands: PEXPIRE sets the remaining time, it does not add to it. */
static int64_t redlock__extend_bound(const redlock_lock *lk) {
    return lk->_round_start + lk->_arg.extend_ttl_ms * 1000 - redlock__drift_us(lk->_client, lk->_arg.extend_ttl_ms);
}

static void redlock__next_step(redlock_lock *lk, int i, uint8_t step, int64_t now) {
    redlock__node *n = &lk->_node[i];
    /* a check-then-act step acts on what was just read; after the round's
       deadline (e.g. the process was paused) that reading is stale: the
       node stays unanswered, and the deadline counts it as timed out */
    if (now >= redlock__round_deadline(lk)) return;
    n->step = step;
    n->progress = REDLOCK__N_TO_SEND;
    /* the PEXPIRE about to go out sets the key's remaining time; a GETSET
       may even replace another holder's value (a takeover racing ours):
       until its answer says otherwise, the node is not ours to act on */
    if (step == REDLOCK__ST_EXT_PEXPIRE && redlock__extend_bound(lk) < redlock__until(lk, i))
        redlock__set_until(lk, i, redlock__extend_bound(lk));
    if (step == REDLOCK__ST_EXT_GETSET) redlock__set_until(lk, i, 0);
    /* sent by the drive loop that runs after every answer */
}

/* The script a step runs (REDLOCK__LUA_*; NONE for the plain commands),
   and its bit of redlock_client._scripted. */
static int redlock__script_id(const redlock_lock *lk, int st) {
    if (!redlock__is_script_step(st)) return REDLOCK__LUA_NONE;
    return redlock__kind_of(lk)->script[redlock__step_info_of(st)->op];
}
static int redlock__script_bit(const redlock_lock *lk, int st) {
    int id = redlock__script_id(lk, st);
    return id == REDLOCK__LUA_NONE ? 0 : 1 << (id - 1);
}

/* A script's text and SHA1, by number. */
typedef struct redlock__script { const char *lua; size_t len; const char *sha; } redlock__script;
static const redlock__script *redlock__script_of(const redlock_lock *lk, int st) {
#define REDLOCK__SCRIPT(name) { redlock__##name##_lua, sizeof redlock__##name##_lua - 1, redlock__##name##_sha }
    static const redlock__script scripts[] = { REDLOCK__SCRIPT(release), REDLOCK__SCRIPT(extend),
                                               REDLOCK__SCRIPT(racquire), REDLOCK__SCRIPT(rrelease),
                                               REDLOCK__SCRIPT(rextend), REDLOCK__SCRIPT(facquire),
                                               REDLOCK__SCRIPT(fence), REDLOCK__SCRIPT(rfacquire),
                                               REDLOCK__SCRIPT(rfence), REDLOCK__SCRIPT(rwacquire),
                                               REDLOCK__SCRIPT(rwrelease), REDLOCK__SCRIPT(rwextend),
                                               REDLOCK__SCRIPT(rwupgrade), REDLOCK__SCRIPT(rwsetmode) };
#undef REDLOCK__SCRIPT
    return &scripts[redlock__script_id(lk, st) - 1];
}

/* Text made for one command: a number (a ttl, a fence), a legacy value, a
   writer's wait. */
typedef struct redlock__scratch {
    char ttl[24];            /* or a fence */
    char value[REDLOCK__VALUE_MAX];
    char wait[24];           /* a readers-writer acquire: how long a waiting writer's mark lives */
} redlock__scratch;

#define REDLOCK__ARG(cmd, s, l) ((cmd)->argv[(cmd)->argc] = (s), (cmd)->argvlen[(cmd)->argc] = (l), (cmd)->argc++)
#define REDLOCK__LIT(cmd, s) REDLOCK__ARG(cmd, s, sizeof(s) - 1)

/* The number a step sends (a ttl, a fence) as text in sc->ttl; returns its
   length, 0 for a step that sends none. */
static size_t redlock__step_number(const redlock_lock *lk, int st, redlock__scratch *sc) {
    switch (redlock__base_step(st)) {
    case REDLOCK__ST_SET:
    case REDLOCK__ST_ACQUIRE: return redlock__fmt_u64(sc->ttl, (uint64_t)lk->_ttl_ms);
    case REDLOCK__ST_FENCE: return redlock__fmt_u64(sc->ttl, (uint64_t)lk->_fence);
    case REDLOCK__ST_UPGRADE:
    case REDLOCK__ST_EXTEND:
    case REDLOCK__ST_EXT_PEXPIRE: return redlock__fmt_u64(sc->ttl, (uint64_t)lk->_arg.extend_ttl_ms);
    default: return 0;
    }
}

/* A legacy value, "expiry:token", in sc->value; returns its length. The
   expiry is taken when sent, so a late GETSET moves an expiry as little as
   possible. */
static size_t redlock__legacy_value(const redlock_lock *lk, int st, redlock__scratch *sc) {
    redlock_client *c = lk->_client;
    int64_t ttl_ms = st == REDLOCK__ST_EXT_GETSET ? lk->_arg.extend_ttl_ms : lk->_ttl_ms;
    size_t len = redlock__fmt_u64(sc->value, (uint64_t)(c->_cb.wall_ms(c->_user) + ttl_ms + 1));
    sc->value[len++] = ':';
    memcpy(sc->value + len, redlock__token(lk), redlock__token_len(lk));
    return len + redlock__token_len(lk);
}

static const char *redlock__mode_letter(redlock_access a) {
    return a == REDLOCK_ACCESS_SHARED ? "s" : a == REDLOCK_ACCESS_UPDATE ? "u" : "x";
}

/* How long a refused writer's mark keeps new readers out: until its next
   attempt is due, and a little; as text in sc->wait. */
static size_t redlock__writer_wait(const redlock_lock *lk, redlock__scratch *sc) {
    int64_t wait_ms = (lk->_retry_delay_us + lk->_retry_jitter_us) / 1000 + 2 * lk->_client->_cfg.node_timeout_ms;
    return redlock__fmt_u64(sc->wait, (uint64_t)(wait_ms > 0 ? wait_ms : 1));
}

/* A readers-writer script's last arguments (section 12). */
static void redlock__rw_args(const redlock_lock *lk, int op, redlock_command *cmd, redlock__scratch *sc) {
    switch (op) {
    case REDLOCK__S_RELEASE: /* the undo of an acquire's last attempt: drop the writer's mark, publish nothing */
        if (lk->_phase == REDLOCK__PH_ROLLBACK && (lk->_state != REDLOCK_STATE_ACQUIRING || lk->_try == REDLOCK__TRY_TIMING_OUT))
            REDLOCK__LIT(cmd, "2");
        break;
    case REDLOCK__S_ACQUIRE: /* the mode, and the mark's life */
        REDLOCK__ARG(cmd, redlock__mode_letter(redlock__access(lk)), 1);
        REDLOCK__ARG(cmd, sc->wait, redlock__writer_wait(lk, sc));
        break;
    case REDLOCK__S_UPGRADE: REDLOCK__ARG(cmd, sc->wait, redlock__writer_wait(lk, sc)); break;
    case REDLOCK__S_EXTEND: /* an entry renews only where it is at least the holder's mode:
                               an exclusive hold stands on its exclusive entries alone */
        REDLOCK__ARG(cmd, redlock__mode_letter(redlock__access(lk)), 1);
        break;
    case REDLOCK__S_SET_MODE: /* by the operation, not the phase: a downgrade's straggler (its
                                 EVAL after NOSCRIPT) runs in the cleanup that follows it */
        if (lk->_phase_op == REDLOCK_OP_DOWNGRADE) REDLOCK__LIT(cmd, "s");
        else REDLOCK__LIT(cmd, "u"); /* the settle of an upgrade that gave up */
        break;
    default: break;
    }
}

/* A script step's command: EVALSHA sha (or EVAL script), KEYS[1] the key
   [, KEYS[2] its fence counter], ARGV: [owner,] token [, ttl or fence]
   (release: a flag instead, to publish, except for the undo of a failed
   attempt) [, the readers-writer arguments]. */
static void redlock__build_script(const redlock_lock *lk, int i, int st, redlock_command *cmd, redlock__scratch *sc) {
    const redlock__kind *k = redlock__kind_of(lk);
    const redlock__script *script = redlock__script_of(lk, st);
    int op = redlock__step_info_of(st)->op;
    size_t numlen = redlock__step_number(lk, st, sc);
    if (st & REDLOCK__ST_EVAL) {
        REDLOCK__LIT(cmd, "EVAL"); REDLOCK__ARG(cmd, script->lua, script->len);
    } else {
        REDLOCK__LIT(cmd, "EVALSHA"); REDLOCK__ARG(cmd, script->sha, 40);
    }
    if (k->counter & REDLOCK__BIT(op)) {
        REDLOCK__LIT(cmd, "2"); REDLOCK__ARG(cmd, lk->_key, lk->_key_len);
        REDLOCK__ARG(cmd, redlock__counter(lk), REDLOCK__FENCE_PREFIX_LEN + lk->_key_len);
    } else {
        REDLOCK__LIT(cmd, "1"); REDLOCK__ARG(cmd, lk->_key, lk->_key_len);
    }
    if (k->owner) REDLOCK__ARG(cmd, redlock__owner(lk), lk->_owner_len);
    REDLOCK__ARG(cmd, redlock__token(lk), redlock__token_len(lk));
    if (numlen) REDLOCK__ARG(cmd, sc->ttl, numlen);
    if (op == REDLOCK__S_RELEASE && lk->_phase != REDLOCK__PH_ROLLBACK) {
        if (lk->_client->_sharded[i]) REDLOCK__LIT(cmd, "s");
        else REDLOCK__LIT(cmd, "1");
    }
    if (k->modes) redlock__rw_args(lk, op, cmd, sc);
}

/* Builds the command for node i's current step. Argument text lives in the
   lock's strings (key, token) or in the caller's scratch, and stays valid
   during send. */
static void redlock__build(const redlock_lock *lk, int i, redlock_command *cmd, redlock__scratch *sc) {
    int st = lk->_node[i].step;
    const redlock__step_info *info = redlock__step_info_of(st);
    cmd->argc = 0;
    if (info->args == REDLOCK__ARGS_SCRIPT) {
        redlock__build_script(lk, i, st, cmd, sc);
        return;
    }
    REDLOCK__ARG(cmd, info->verb, info->verb_len);
    if (info->args == REDLOCK__ARGS_INFO) {
        REDLOCK__LIT(cmd, "server");
        return;
    }
    if (info->args == REDLOCK__ARGS_WAIT) { /* never a timeout of 0: WAIT would block forever */
        const redlock_config *cfg = &lk->_client->_cfg;
        REDLOCK__ARG(cmd, sc->wait, redlock__fmt_u64(sc->wait, (uint64_t)cfg->wait_replicas));
        REDLOCK__ARG(cmd, sc->ttl, redlock__fmt_u64(sc->ttl, (uint64_t)cfg->wait_timeout_ms));
        return;
    }
    REDLOCK__ARG(cmd, lk->_key, lk->_key_len);
    if (info->args == REDLOCK__ARGS_SET) {
        REDLOCK__ARG(cmd, redlock__token(lk), redlock__token_len(lk));
        REDLOCK__LIT(cmd, "NX"); REDLOCK__LIT(cmd, "PX");
    }
    if (info->args == REDLOCK__ARGS_SET || info->args == REDLOCK__ARGS_TTL)
        REDLOCK__ARG(cmd, sc->ttl, redlock__step_number(lk, st, sc));
    if (info->args == REDLOCK__ARGS_VALUE) REDLOCK__ARG(cmd, sc->value, redlock__legacy_value(lk, st, sc));
}
#undef REDLOCK__ARG
#undef REDLOCK__LIT

/* A tag: the lock's id (40 bits), the request's sequence number (16 bits),
   the node (8 bits). */
#define REDLOCK__SEQ_MASK 0xFFFFu
static redlock_tag redlock__tag(const redlock_lock *lk, int i) {
    return ((redlock_tag)lk->_id << 24) | ((redlock_tag)lk->_node[i].seq << 8) | (redlock_tag)i;
}
static uint64_t redlock__tag_lock_id(redlock_tag tag) { return tag >> 24; }
static uint32_t redlock__tag_seq(redlock_tag tag) { return (uint32_t)(tag >> 8) & REDLOCK__SEQ_MASK; }

/* Sends every command that is due. A synchronous transport may answer
   inside send: the answer is recorded and picked up by the drive loop. */
static void redlock__flush(redlock_lock *lk, int64_t now, const int *alive) {
    redlock_client *c = lk->_client;
    int i;
    if (redlock__waiting(lk)) return; /* its turn has not come */
    for (i = 0; i < c->_cfg.node_count; i++) {
        redlock__node *n = &lk->_node[i];
        redlock_command cmd;
        redlock__scratch scratch;
        uint16_t seq;
        int rc;
        if (!redlock__n_to_send(n)) continue;
        redlock__build(lk, i, &cmd, &scratch);
        n->progress = n->progress == REDLOCK__N_TO_SEND ? REDLOCK__N_AWAITED : REDLOCK__N_DONE_AWAITED;
        /* a step sent over an hour into its round counts as sent then: its
           bounds only come out shorter */
        n->sent_us = now - lk->_round_start < (int64_t)UINT32_MAX ? (uint32_t)(now - lk->_round_start) : UINT32_MAX;
        /* every request its own tag: an answer to an earlier step (or one
           delivered twice) can never pass for this step's */
        lk->_seq = (uint16_t)((lk->_seq + 1) & REDLOCK__SEQ_MASK);
        if (lk->_seq == 0) lk->_seq = 1;
        seq = n->seq = lk->_seq;
        rc = c->_cb.send(c->_user, i, &cmd, redlock__tag(lk, i));
        if (!*alive) return;
        if (rc != 0 && n->seq == seq && redlock__n_awaited(n))
            redlock__node_done(lk, i, REDLOCK__OUT_ERR, rc < 0 ? rc : REDLOCK_ERR_TRANSPORT, now);
    }
}

/* True when an error reply means "this server has no SET ... NX PX". */
static int redlock__old_set_error(const redlock_reply *r) {
    return redlock__has(r->str, r->len, "syntax error") ||
           redlock__has(r->str, r->len, "wrong number of arguments") ||
           redlock__has(r->str, r->len, "unknown command");
}

/* True when an error reply is an ACL's denial of a key, not of the command
   (the texts of Redis 6 to 7.2, at the call or inside a script). */
static int redlock__key_denied(const redlock_reply *r) {
    return redlock__has(r->str, r->len, "permissions to access one of the keys") ||
           redlock__has(r->str, r->len, "permissions to access a key") ||
           redlock__has(r->str, r->len, "access at least one of the keys") ||
           (redlock__has(r->str, r->len, "permissions to access the '") && redlock__has(r->str, r->len, "' key"));
}

/* True when an error reply means "no scripting here". */
static int redlock__no_script_error(const redlock_reply *r) {
    return (redlock__starts(r->str, r->len, "NOPERM") && !redlock__key_denied(r)) ||
           redlock__has(r->str, r->len, "unknown command");
}

/* "redis_version:2.4.17" in an INFO reply, as 20417; -1 if absent. */
static long redlock__server_version(const redlock_reply *r) {
    static const char field[] = "redis_version:";
    const size_t n = sizeof field - 1;
    size_t i = 0;
    long part[3] = {0, 0, 0};
    int k;
    if (r->type != REDLOCK_REPLY_STRING) return -1;
    while (i + n <= r->len && memcmp(r->str + i, field, n) != 0) i++;
    if (i + n > r->len) return -1;
    i += n;
    for (k = 0; k < 3; k++) {
        size_t start = i;
        while (i < r->len && i - start < 4 && r->str[i] >= '0' && r->str[i] <= '9')
            part[k] = part[k] * 10 + (r->str[i++] - '0');
        if (i == start) {
            if (k == 0) return -1;
            break;
        }
        if (i >= r->len || r->str[i] != '.') break;
        i++;
    }
    return part[0] * 10000 + (part[1] > 99 ? 99 : part[1]) * 100 + (part[2] > 99 ? 99 : part[2]);
}

/* r is a string reply */
static int redlock__is_ours(const redlock_lock *lk, int i, const redlock_reply *r) {
    if (redlock__node_legacy(lk, i)) {
        int64_t expiry;
        const char *tok;
        size_t toklen;
        return redlock__parse_legacy(r->str, r->len, &expiry, &tok, &toklen) &&
               toklen == redlock__token_len(lk) && memcmp(tok, redlock__token(lk), toklen) == 0;
    }
    return r->len == redlock__token_len(lk) && memcmp(r->str, redlock__token(lk), r->len) == 0;
}

/* Check-then-act steps (GET then DEL / PEXPIRE / GETSET) only act while our
   key there has comfortably longer to live than the second round trip. */
static int redlock__safe_to_act(const redlock_lock *lk, int i, int64_t now) {
    const redlock_client *c = lk->_client;
    return redlock__until(lk, i) - now >
           c->_cfg.node_timeout_ms * 1000 + redlock__drift_us(c, lk->_ttl_ms);
}

static void redlock__switch(redlock_lock *lk, int i, int legacy) {
    redlock_client *c = lk->_client;
    redlock_event ev;
    c->_caps[i] |= legacy ? REDLOCK__CAP_LEGACY : REDLOCK__CAP_NO_SCRIPTS;
    if (legacy) c->_any_legacy = 1;
    ev = redlock__event_of(REDLOCK_EV_MODE_SWITCH, lk->_phase_op, i, 0, 0);
    ev.mode = legacy ? REDLOCK_MODE_LEGACY : 0;
    redlock__emit(lk, &ev);
}

/* What one answer means for its node (the answer_* functions below). */
enum {
    REDLOCK__A_STEP,     /* moved on to its next step: nothing to record yet */
    REDLOCK__A_ACQUIRED, /* the key is ours (SET, SETNX or a takeover) */
    REDLOCK__A_EXTENDED, /* our key's remaining time was set */
    REDLOCK__A_YES,      /* done as asked */
    REDLOCK__A_NO,       /* another holder */
    REDLOCK__A_MISSING,  /* not (or no longer) ours */
    REDLOCK__A_WAITS,    /* an upgrade's node: renewed, other holders still there */
    REDLOCK__A_PROTOCOL  /* an answer this step cannot have */
};

/* An error reply: the AUTO switches, NOSCRIPT, else the node's vote fails. */
static int redlock__answer_error(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock_client *c = lk->_client;
    int st = lk->_node[i].step, auto_mode = c->_cfg.mode[i] == REDLOCK_MODE_AUTO;
    int op = redlock__step_info_of(st)->op, script = redlock__is_script_step(st);
    /* WAIT refused (an old server, an ACL, a proxy): the replicas asked
       for cannot be confirmed, so the grant does not count */
    if (st == REDLOCK__ST_WAIT) {
        redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_REPLICAS, now);
        return REDLOCK__A_STEP;
    }
    /* a proxy or a renamed command says the same as an old server:
       switch to full legacy (keys without a TTL) only once INFO confirms */
    if (st == REDLOCK__ST_SET && auto_mode && !(c->_caps[i] & REDLOCK__CAP_NX_PX) && redlock__old_set_error(r)) {
        redlock__next_step(lk, i, REDLOCK__ST_PROBE, now);
        return REDLOCK__A_STEP;
    }
    if (st == REDLOCK__ST_PROBE) c->_caps[i] |= REDLOCK__CAP_NX_PX; /* INFO refused: do not guess */
    if (script && !(st & REDLOCK__ST_EVAL) && redlock__starts(r->str, r->len, "NOSCRIPT")) {
        c->_scripted[i] = 0; /* the server lost its scripts */
        if (st == REDLOCK__ST_RELEASE) { /* compare-and-delete: sent however late (redlock__late_answer) */
            lk->_node[i].step = REDLOCK__ST_RELEASE | REDLOCK__ST_EVAL;
            lk->_node[i].progress = REDLOCK__N_TO_SEND;
        } else {
            redlock__next_step(lk, i, (uint8_t)(st | REDLOCK__ST_EVAL), now);
        }
        return REDLOCK__A_STEP;
    }
    if (script && redlock__needs_scripts(lk, op) && redlock__no_script_error(r)) {
        /* no fallback without scripts: the node cannot take part */
        redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_NO_SCRIPTING, now);
        return REDLOCK__A_STEP;
    }
    if (script && (redlock__kind_of(lk)->bare & REDLOCK__BIT(op)) && auto_mode && redlock__no_script_error(r)) {
        redlock__switch(lk, i, 0); /* the kind falls back on check-then-act there */
        redlock__next_step(lk, i, redlock__check_step(lk, i, op == REDLOCK__S_RELEASE), now);
        return REDLOCK__A_STEP;
    }
    /* PTTL refused (an old server, an ACL): GET anyway; a legacy value says
       how long it lives, a modern one is then not acted on */
    if ((st == REDLOCK__ST_REL_PTTL || st == REDLOCK__ST_EXT_PTTL) && !redlock__starts(r->str, r->len, "NOAUTH")) {
        redlock__set_until(lk, i, 0);
        redlock__next_step(lk, i, st == REDLOCK__ST_REL_PTTL ? REDLOCK__ST_REL_GET : REDLOCK__ST_EXT_GET, now);
        return REDLOCK__A_STEP;
    }
    /* the key holds another kind of value (a reentrant lock's hash, or
       anything else): not ours, held by someone else; for a release, a
       write-back, an upgrade and a set-mode, not ours either. A fenced
       acquire's WRONGTYPE is about its counter, which is not a number: the
       server's error, for the user to mend */
    if (redlock__has(r->str, r->len, "WRONGTYPE") &&
        !(script && op == REDLOCK__S_ACQUIRE && (redlock__kind_of(lk)->counter & REDLOCK__BIT(REDLOCK__S_ACQUIRE))))
        return op == REDLOCK__S_ACQUIRE || op == REDLOCK__S_EXTEND ? REDLOCK__A_NO : REDLOCK__A_MISSING;
    /* a connection that never authenticated: as the adapters say it; an
       ACL that denies a key: said as such (no retry mends it) */
    redlock__node_done(lk, i, REDLOCK__OUT_ERR,
                       redlock__starts(r->str, r->len, "NOAUTH") ? REDLOCK_ERR_AUTH :
                       redlock__key_denied(r) ? REDLOCK_ERR_NOPERM : REDLOCK_ERR_SERVER, now);
    return REDLOCK__A_STEP;
}

/* Legacy acquire: the GET after SETNX failed. An expired value may be
   taken over (GETSET); the key gone meanwhile: SETNX again. */
static int redlock__answer_takeover_get(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__node *n = &lk->_node[i];
    int64_t expiry;
    const char *tok;
    size_t toklen;
    uint32_t h;
    if (r->type == REDLOCK_REPLY_NIL) {        /* released meanwhile: try SETNX once more */
        if (n->loops++ < 2) { redlock__next_step(lk, i, REDLOCK__ST_SETNX, now); return REDLOCK__A_STEP; }
        return REDLOCK__A_NO;
    }
    if (r->type != REDLOCK_REPLY_STRING) return REDLOCK__A_PROTOCOL;
    /* only a well-formed, expired value that fits our buffer is taken over */
    if (!redlock__parse_legacy(r->str, r->len, &expiry, &tok, &toklen) || r->len > REDLOCK__VALUE_MAX ||
        expiry >= c->_cb.wall_ms(c->_user))
        return REDLOCK__A_NO;
    /* remembered by its hash: the GETSET must give back exactly this */
    h = redlock__hash32(r->str, r->len);
    memcpy(&n->until, &h, sizeof h);
    n->flags |= REDLOCK__F_SEEN;
    redlock__next_step(lk, i, REDLOCK__ST_ACQ_GETSET, now);
    return REDLOCK__A_STEP;
}

/* Legacy acquire: the takeover's GETSET. Ours only if it replaced exactly
   the expired value the GET read. */
static int redlock__answer_takeover_getset(redlock_lock *lk, int i, const redlock_reply *r) {
    redlock_client *c = lk->_client;
    redlock__node *n = &lk->_node[i];
    int64_t expiry;
    const char *tok;
    size_t toklen;
    uint32_t seen;
    if (r->type == REDLOCK_REPLY_NIL) return REDLOCK__A_ACQUIRED;
    if (r->type != REDLOCK_REPLY_STRING) return REDLOCK__A_PROTOCOL;
    /* what GET read, expired still: a value written by another takeover
       meanwhile has a fresh expiry, whatever its hash */
    memcpy(&seen, &n->until, sizeof seen);
    if ((n->flags & REDLOCK__F_SEEN) && redlock__hash32(r->str, r->len) == seen &&
        redlock__parse_legacy(r->str, r->len, &expiry, &tok, &toklen) && expiry < c->_cb.wall_ms(c->_user))
        return REDLOCK__A_ACQUIRED;
    redlock__set_until(lk, i, 0);
    n->flags |= REDLOCK__F_CLOBBERED;    /* another client won the takeover */
    return REDLOCK__A_NO;
}

/* A fenced kind's acquire: the counter after our SET; 0: held. */
static int redlock__answer_counter(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    if (r->type != REDLOCK_REPLY_INTEGER || r->integer < 0) return REDLOCK__A_PROTOCOL;
    /* the highest of the counted nodes; once the write-back is out, the fence is fixed */
    if (r->integer > lk->_fence && lk->_phase == REDLOCK__PH_ACQUIRE && !redlock__discounted(lk, i, now)) lk->_fence = r->integer;
    return r->integer > 0 ? REDLOCK__A_ACQUIRED : REDLOCK__A_NO;
}

/* Acquire steps: SET; or PROBE, then SETNX, GET, GETSET (legacy); or the
   kind's script. */
static int redlock__answer_acquire(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__node *n = &lk->_node[i];
    int t = r->type;
    switch (redlock__base_step(n->step)) {
    case REDLOCK__ST_PROBE: {
        long version = redlock__server_version(r);
        if (version >= 0 && version < REDLOCK__FIRST_NX_PX) {
            redlock__switch(lk, i, 1);
            redlock__next_step(lk, i, REDLOCK__ST_SETNX, now);
            return REDLOCK__A_STEP;
        }
        c->_caps[i] |= REDLOCK__CAP_NX_PX; /* SET ... NX PX exists there: its error is the server's */
        redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_SERVER, now);
        return REDLOCK__A_STEP;
    }
    case REDLOCK__ST_SET:
        if (t == REDLOCK_REPLY_STATUS && r->len == 2 && memcmp(r->str, "OK", 2) == 0) return REDLOCK__A_ACQUIRED;
        return t == REDLOCK_REPLY_NIL ? REDLOCK__A_NO : REDLOCK__A_PROTOCOL;
    case REDLOCK__ST_ACQUIRE:
        if (redlock__kind_of(lk)->counter & REDLOCK__BIT(REDLOCK__S_ACQUIRE)) return redlock__answer_counter(lk, i, r, now);
        /* the owner's count with this entry, 0: another owner holds it; a
           readers-writer lock's 1 granted, 0 refused */
        if (t != REDLOCK_REPLY_INTEGER || r->integer < 0 || (redlock__kind_of(lk)->modes && r->integer > 1))
            return REDLOCK__A_PROTOCOL;
        return r->integer > 0 ? REDLOCK__A_ACQUIRED : REDLOCK__A_NO;
    case REDLOCK__ST_SETNX:
        if (t != REDLOCK_REPLY_INTEGER || (r->integer != 0 && r->integer != 1)) return REDLOCK__A_PROTOCOL;
        if (r->integer == 1) return REDLOCK__A_ACQUIRED;
        redlock__next_step(lk, i, REDLOCK__ST_ACQ_GET, now);
        return REDLOCK__A_STEP;
    case REDLOCK__ST_ACQ_GET: return redlock__answer_takeover_get(lk, i, r, now);
    case REDLOCK__ST_ACQ_GETSET: return redlock__answer_takeover_getset(lk, i, r);
    default:
        return REDLOCK__A_STEP;
    }
}

/* Our key's remaining life on node i is known from now on: until then. */
static void redlock__life_known(redlock_lock *lk, int i, int64_t until) {
    redlock__set_until(lk, i, until);
    lk->_node[i].flags = (uint8_t)(lk->_node[i].flags & ~REDLOCK__F_LIFE);
}

/* PTTL before the GET of an adopted token's key. If the GET then shows
   our token, the key held it already here (nobody else writes our token),
   so it lives at least that long from when we sent. Its life stays
   unknown until that GET. */
static int redlock__answer_pttl(redlock_lock *lk, int i, const redlock_reply *r, uint8_t get_step, int64_t now) {
    int64_t ms = r->integer, until = REDLOCK_NO_DEADLINE; /* -1: no expiry at all */
    if (r->type != REDLOCK_REPLY_INTEGER || ms < -2) return REDLOCK__A_PROTOCOL;
    if (ms == -2) return REDLOCK__A_MISSING;
    if (ms >= 0 && ms <= REDLOCK__MAX_MS)
        until = lk->_round_start + lk->_node[i].sent_us + ms * 1000 - redlock__drift_us(lk->_client, ms);
    redlock__set_until(lk, i, until);
    redlock__next_step(lk, i, get_step, now);
    return REDLOCK__A_STEP;
}

/* The GET of an adopted token's key. A legacy value of our token on a node
   not known to be old: the client that acquired it found the node too old
   for SET NX PX (AUTO), and so does this one now. */
static void redlock__adopted_get(redlock_lock *lk, int i, const redlock_reply *r) {
    redlock_client *c = lk->_client;
    int64_t expiry;
    const char *tok;
    size_t toklen;
    if (!redlock__node_legacy(lk, i) && c->_cfg.mode[i] == REDLOCK_MODE_AUTO &&
        redlock__parse_legacy(r->str, r->len, &expiry, &tok, &toklen) && toklen == redlock__token_len(lk) &&
        memcmp(tok, redlock__token(lk), toklen) == 0)
        redlock__switch(lk, i, 1);
}

/* r, from the GET, is ours: its life there is known from now on, from the
   PTTL before it or from a legacy value's expiry (on the wall clock). */
static void redlock__adopted_life(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock_client *c = lk->_client;
    int64_t expiry = 0, left;
    const char *tok;
    size_t toklen;
    if (!redlock__node_legacy(lk, i)) {
        redlock__life_known(lk, i, redlock__until(lk, i));
        return;
    }
    redlock__parse_legacy(r->str, r->len, &expiry, &tok, &toklen);
    left = expiry - c->_cb.wall_ms(c->_user);
    if (left < -REDLOCK__MAX_MS) left = -REDLOCK__MAX_MS;
    redlock__life_known(lk, i, left > REDLOCK__MAX_MS ? REDLOCK_NO_DEADLINE
                                                       : now + left * 1000 - redlock__drift_us(c, lk->_ttl_ms));
}

/* Release steps (also the undo and the cleanup): EVALSHA / EVAL, or GET
   then DEL on nodes without scripts (PTTL first for an adopted token). */
static int redlock__answer_release(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    int t = r->type;
    switch (redlock__base_step(lk->_node[i].step)) {
    case REDLOCK__ST_RELEASE:
    case REDLOCK__ST_REL_DEL:
        if (t != REDLOCK_REPLY_INTEGER || r->integer < 0 || r->integer > 1) return REDLOCK__A_PROTOCOL;
        return r->integer == 1 ? REDLOCK__A_YES : REDLOCK__A_MISSING;
    case REDLOCK__ST_REL_PTTL:
        return redlock__answer_pttl(lk, i, r, REDLOCK__ST_REL_GET, now);
    case REDLOCK__ST_REL_GET:
        if (t == REDLOCK_REPLY_NIL) return REDLOCK__A_MISSING;
        if (t != REDLOCK_REPLY_STRING) return REDLOCK__A_PROTOCOL;
        if (lk->_node[i].flags & REDLOCK__F_LIFE) redlock__adopted_get(lk, i, r);
        if (!redlock__is_ours(lk, i, r)) return REDLOCK__A_MISSING;
        if (lk->_node[i].flags & REDLOCK__F_LIFE) redlock__adopted_life(lk, i, r, now);
        if (!redlock__safe_to_act(lk, i, now)) {  /* let it expire rather than race */
            redlock__key_left(lk, i);
            return REDLOCK__A_YES;
        }
        redlock__next_step(lk, i, REDLOCK__ST_REL_DEL, now);
        return REDLOCK__A_STEP;
    default:
        return REDLOCK__A_STEP;
    }
}

/* Extend steps: EVALSHA / EVAL, or GET then PEXPIRE (GETSET on legacy);
   PTTL first for an adopted token. */
static int redlock__answer_extend(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock__node *n = &lk->_node[i];
    int t = r->type;
    switch (redlock__base_step(n->step)) {
    case REDLOCK__ST_EXTEND:
        if (t != REDLOCK_REPLY_INTEGER || r->integer < -1 || r->integer > 1) return REDLOCK__A_PROTOCOL;
        if (r->integer == 1) return REDLOCK__A_EXTENDED;
        return r->integer == 0 ? REDLOCK__A_MISSING : REDLOCK__A_NO;
    case REDLOCK__ST_EXT_PTTL:
        return redlock__answer_pttl(lk, i, r, REDLOCK__ST_EXT_GET, now);
    case REDLOCK__ST_EXT_GET:
        if (t == REDLOCK_REPLY_NIL) return REDLOCK__A_MISSING;
        if (t != REDLOCK_REPLY_STRING) return REDLOCK__A_PROTOCOL;
        if (n->flags & REDLOCK__F_LIFE) redlock__adopted_get(lk, i, r);
        if (!redlock__is_ours(lk, i, r)) return REDLOCK__A_NO;
        if (n->flags & REDLOCK__F_LIFE) redlock__adopted_life(lk, i, r, now);
        if (!redlock__safe_to_act(lk, i, now)) return REDLOCK__A_MISSING;
        redlock__next_step(lk, i, redlock__node_legacy(lk, i) ? REDLOCK__ST_EXT_GETSET : REDLOCK__ST_EXT_PEXPIRE, now);
        return REDLOCK__A_STEP;
    case REDLOCK__ST_EXT_PEXPIRE:
        if (t != REDLOCK_REPLY_INTEGER || r->integer < 0 || r->integer > 1) return REDLOCK__A_PROTOCOL;
        return r->integer == 1 ? REDLOCK__A_EXTENDED : REDLOCK__A_MISSING;
    case REDLOCK__ST_EXT_GETSET:
        if (t == REDLOCK_REPLY_NIL) return REDLOCK__A_EXTENDED;
        if (t != REDLOCK_REPLY_STRING) return REDLOCK__A_PROTOCOL;
        if (redlock__is_ours(lk, i, r)) return REDLOCK__A_EXTENDED;
        n->flags |= REDLOCK__F_CLOBBERED;
        return REDLOCK__A_NO;
    default:
        return REDLOCK__A_STEP;
    }
}


/* The answer to a release's EVALSHA (or to the EVAL that followed it)
   after the round timed out: the vote was counted as a timeout, but a
   NOSCRIPT still gets its EVAL, sent and not waited for (compare-and-delete
   is idempotent, and without it the key would stay until its ttl). */
static void redlock__late_answer(redlock_lock *lk, int i, const redlock_reply *r) {
    redlock__node *n = &lk->_node[i];
    if (n->step == REDLOCK__ST_RELEASE && r && r->type == REDLOCK_REPLY_ERROR && r->str &&
        redlock__starts(r->str, r->len, "NOSCRIPT")) {
        lk->_client->_scripted[i] = 0; /* the server lost its scripts */
        n->step = REDLOCK__ST_RELEASE | REDLOCK__ST_EVAL;
        n->progress = REDLOCK__N_DONE_TO_SEND; /* the round is decided */
    }
}

static void redlock__acquired(redlock_lock *lk, int i, int64_t now);

/* WAIT after a grant: how many replicas acknowledged. Enough: the grant
   counts as it would have (its outcome waited in the node), or, an
   acquire's that the round has left behind (a fenced attempt decided
   meanwhile), it gets its write-back as a late win does; fewer: the vote
   fails with REPLICAS. Either way the key there is ours: it is released,
   undone or cleaned up like any other. */
static int redlock__answer_wait(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    redlock__node *n = &lk->_node[i];
    if (r->type != REDLOCK_REPLY_INTEGER || r->integer < 0) return REDLOCK__A_PROTOCOL;
    if (r->integer < lk->_client->_cfg.wait_replicas)
        redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_REPLICAS, now);
    else if (n->loops == REDLOCK__S_ACQUIRE)
        redlock__acquired(lk, i, now);
    else
        redlock__granted(lk, i, n->outcome, now);
    return REDLOCK__A_STEP;
}

/* Script steps answered 1 or 0: done as asked, or the key is not ours. */
static int redlock__answer_yes_no(const redlock_reply *r) {
    if (r->type != REDLOCK_REPLY_INTEGER || (r->integer != 0 && r->integer != 1)) return REDLOCK__A_PROTOCOL;
    return r->integer ? REDLOCK__A_YES : REDLOCK__A_MISSING;
}

/* What a reply (not an error) means, by the operation its step serves. */
static int redlock__answer_reply(redlock_lock *lk, int i, const redlock_reply *r, int64_t now) {
    int a;
    switch (redlock__step_info_of(lk->_node[i].step)->op) {
    case REDLOCK__S_ACQUIRE: return redlock__answer_acquire(lk, i, r, now);
    case REDLOCK__S_RELEASE: return redlock__answer_release(lk, i, r, now);
    case REDLOCK__S_EXTEND: return redlock__answer_extend(lk, i, r, now);
    case REDLOCK__S_UPGRADE: /* 1 upgraded, 0 renewed but others hold it still, -1 gone */
        if (r->type != REDLOCK_REPLY_INTEGER || r->integer < -1 || r->integer > 1) return REDLOCK__A_PROTOCOL;
        return r->integer == 1 ? REDLOCK__A_EXTENDED : r->integer == 0 ? REDLOCK__A_WAITS : REDLOCK__A_MISSING;
    case REDLOCK__S_SET_MODE: return redlock__answer_yes_no(r);
    case REDLOCK__S_FENCE: /* 1: written back where the key is ours; 0: not ours */
        a = redlock__answer_yes_no(r);
        if (a == REDLOCK__A_MISSING) redlock__set_until(lk, i, 0);
        return a;
    default:
        if (lk->_node[i].step == REDLOCK__ST_WAIT) return redlock__answer_wait(lk, i, r, now);
        return REDLOCK__A_STEP;
    }
}

/* Node i's key is ours: its vote, or (a fenced acquire's late win, during
   the write-back or after the lock was reported held) the write-back
   follows, so that the fence is kept everywhere the holder's entry is. */
static void redlock__acquired(redlock_lock *lk, int i, int64_t now) {
    redlock__node *n = &lk->_node[i];
    int late = lk->_phase == REDLOCK__PH_FENCE ||
               (redlock__fenced(lk) && lk->_phase == REDLOCK__PH_NONE && lk->_state == REDLOCK_STATE_HELD);
    /* the key is ours there, whether or not the grant counts */
    redlock__life_known(lk, i, late ? lk->_valid_until
                                    : lk->_round_start + lk->_ttl_ms * 1000 - redlock__drift_us(lk->_client, lk->_ttl_ms));
    if (late && !redlock__discounted(lk, i, now)) {
        redlock__next_step(lk, i, REDLOCK__ST_FENCE, now);
        return;
    }
    n->flags = (uint8_t)(n->flags & ~REDLOCK__F_CLOBBERED); /* the value there is ours now */
    redlock__granted(lk, i, REDLOCK__OUT_YES, now);
}

/* Records what answer a (REDLOCK__A_*) of step st means for node i. */
static void redlock__record(redlock_lock *lk, int i, int st, int a, int64_t now) {
    switch (a) {
    case REDLOCK__A_ACQUIRED: redlock__acquired(lk, i, now); break;
    case REDLOCK__A_EXTENDED:
        redlock__life_known(lk, i, redlock__extend_bound(lk));
        redlock__granted(lk, i, REDLOCK__OUT_YES, now);
        break;
    case REDLOCK__A_WAITS: /* an upgrade's node: renewed, not upgraded */
        redlock__life_known(lk, i, redlock__extend_bound(lk));
        redlock__granted(lk, i, REDLOCK__OUT_NO, now);
        break;
    case REDLOCK__A_YES: /* a write-back is a grant too; a release or a set-mode is not */
        if (redlock__step_info_of(st)->op == REDLOCK__S_FENCE) redlock__granted(lk, i, REDLOCK__OUT_YES, now);
        else redlock__node_done(lk, i, REDLOCK__OUT_YES, 0, now);
        break;
    case REDLOCK__A_NO: redlock__node_done(lk, i, REDLOCK__OUT_NO, 0, now); break;
    case REDLOCK__A_MISSING: redlock__node_done(lk, i, REDLOCK__OUT_MISSING, 0, now); break;
    case REDLOCK__A_PROTOCOL: redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_PROTOCOL, now); break;
    default: break;
    }
}

/* One reply (or error, when r is NULL: status err) for node i: finish the
   node's round or move it to its next step. */
static void redlock__answer(redlock_lock *lk, int i, const redlock_reply *r, int err, int64_t now) {
    redlock__node *n = &lk->_node[i];
    int st = n->step, a;
    if (n->progress == REDLOCK__N_DONE_AWAITED) {
        n->progress = REDLOCK__N_DONE;
        redlock__late_answer(lk, i, r);
        return;
    }
    n->progress = REDLOCK__N_IDLE; /* read now: the next step, or a vote */
    if (!r) { redlock__node_done(lk, i, REDLOCK__OUT_ERR, err, now); return; }
    if (r->len > 0 && !r->str &&
        (r->type == REDLOCK_REPLY_STATUS || r->type == REDLOCK_REPLY_ERROR || r->type == REDLOCK_REPLY_STRING))
        a = REDLOCK__A_PROTOCOL;
    else if (r->type == REDLOCK_REPLY_ERROR)
        a = redlock__answer_error(lk, i, r, now);
    else
        a = redlock__answer_reply(lk, i, r, now);
    if (a != REDLOCK__A_PROTOCOL && r->type != REDLOCK_REPLY_ERROR)
        lk->_client->_scripted[i] |= (uint16_t)redlock__script_bit(lk, st);
    redlock__record(lk, i, st, a, now);
}

/* ---- decisions ---- */

typedef struct redlock__tally { int yes, no, missing, err, pending; } redlock__tally;

static redlock__tally redlock__count(const redlock_lock *lk) {
    redlock__tally t;
    int i;
    memset(&t, 0, sizeof t);
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        const redlock__node *n = &lk->_node[i];
        if (!redlock__n_done(n)) { t.pending++; continue; }
        switch (n->outcome) {
        case REDLOCK__OUT_YES: t.yes++; break;
        case REDLOCK__OUT_NO: t.no++; break;
        case REDLOCK__OUT_MISSING: t.missing++; break;
        default: t.err++; break;
        }
    }
    return t;
}

/* Calls the user's result callback. Returns 0 if the lock was deinitialised
   inside it (the caller must not touch the lock again). */
static int redlock__report(redlock_lock *lk, const int *alive, redlock_op op, int status, int votes, int64_t now) {
    redlock_result res;
    redlock__count_result(lk, op, status, now);
    if (!lk->_on_result) return 1;
    memset(&res, 0, sizeof res);
    res.op = op;
    res.status = status;
    res.votes = votes;
    res.attempts = lk->_attempt;
    res.validity_us = lk->_state == REDLOCK_STATE_HELD && !lk->_validity_unknown ? lk->_valid_until - now : 0;
    res.elapsed_us = now - lk->_op_start;
    res.user = lk->_user;
    if (op == REDLOCK_OP_ACQUIRE && status == REDLOCK_OK) res.fence = lk->_fence;
    lk->_on_result(lk, &res);
    return *alive;
}

static int64_t redlock__jitter_delay(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    int64_t base = lk->_retry_delay_us, jit = lk->_retry_jitter_us;
    uint64_t r = 0;
    if (c->_cb.random(c->_user, &r, sizeof r) == 0) base += (int64_t)(r % (uint64_t)(2 * jit + 1)) - jit;
    return base < 0 ? 0 : base;
}

/* The default owner of a reentrant lock: the client's id (16 hex digits,
   drawn once) and the acquiring thread's (16 hex digits of a hash of its
   pthread_t; 0 where the header knows no thread API, or define
   REDLOCK_THREAD_ID() to an expression of type uint64_t). */
#ifndef REDLOCK_THREAD_ID
#if defined(REDLOCK__HAVE_PTHREAD)
static uint64_t redlock__thread_id(void) {
    pthread_t self = pthread_self();
    unsigned char b[sizeof self];
    uint64_t h = UINT64_C(1469598103934665603);
    size_t i;
    memcpy(b, &self, sizeof self);
    for (i = 0; i < sizeof b; i++) h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h;
}
#define REDLOCK_THREAD_ID() redlock__thread_id()
#else
#define REDLOCK_THREAD_ID() ((uint64_t)0)
#endif
#endif

static void redlock__hex64(char *out, uint64_t v) {
    static const char hex[] = "0123456789abcdef";
    int i;
    for (i = 15; i >= 0; i--, v >>= 4) out[i] = hex[v & 15];
}

/* Called by acquire and adopt: the client's id is drawn once (0 if the
   random source failed), the calling thread is remembered. */
static int redlock__default_owner_ready(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    if (!c->_owner_id[0]) {
        uint64_t id;
        if (c->_cb.random(c->_user, &id, sizeof id) != 0) return 0;
        redlock__hex64(c->_owner_id, id);
        c->_owner_id[16] = '\0';
    }
    {
        uint64_t thread = REDLOCK_THREAD_ID();
        memcpy(redlock__owner(lk) + REDLOCK_MAX_OWNER + 1, &thread, sizeof thread);
    }
    return 1;
}

/* "client id:thread id", taken with the token (the owner of the running
   undo or cleanup stays until then) */
static void redlock__take_default_owner(redlock_lock *lk) {
    char *o = redlock__owner(lk);
    uint64_t thread;
    memcpy(&thread, o + REDLOCK_MAX_OWNER + 1, sizeof thread);
    memcpy(o, lk->_client->_owner_id, 16);
    o[16] = ':';
    redlock__hex64(o + 17, thread);
    o[33] = '\0';
    lk->_owner_len = 33;
}

/* The first attempt of an acquire takes the token drawn by redlock_acquire:
   only now, because an undo or cleanup of the old token may have run until now. */
static void redlock__take_token(redlock_lock *lk) {
    static const char hex[] = "0123456789abcdef";
    size_t label_len = redlock__label_len(lk);
    char *t = redlock__token(lk);
    const unsigned char *fresh = redlock__fresh(lk);
    int i;
    memcpy(t, redlock__label(lk), label_len); /* an adopted token may have had another label */
    t += label_len;
    for (i = 0; i < REDLOCK_TOKEN_LEN / 2; i++) {
        t[2 * i] = hex[fresh[i] >> 4];
        t[2 * i + 1] = hex[fresh[i] & 15];
    }
    t[REDLOCK_TOKEN_LEN] = '\0';
    if (lk->_owner_default) redlock__take_default_owner(lk);
}

/* How soon after an attempt a release notification started, the next
   one may: a share of the retry delay, so that notifications (a flood of
   forged ones too) add at most REDLOCK_WAKES_PER_DELAY attempts per retry
   delay. */
static int64_t redlock__wake_gap(const redlock_lock *lk) {
    return lk->_retry_delay_us / REDLOCK_WAKES_PER_DELAY;
}

/* A notification was heard and its attempt may start now. */
static int redlock__wake_due(const redlock_lock *lk, int64_t now) {
    return lk->_woken && lk->_try != REDLOCK__TRY_TIMING_OUT && now >= lk->_mark.wake_at;
}

static void redlock__start_attempt(redlock_lock *lk, int64_t now) {
    if (lk->_attempt == 0) redlock__take_token(lk);
    /* before its retry is due, the attempt is a notification's: the next
       such waits a share of the delay */
    if (lk->_attempt > 0 && now < lk->_next_at) lk->_mark.wake_at = now + redlock__wake_gap(lk);
    lk->_handoff = lk->_woken && lk->_attempt > 0; /* (since _arg.woken_at) */
    lk->_woken = 0; /* a release notified before this attempt: it is this attempt */
    lk->_fence = 0;
    lk->_attempt++;
    lk->_phase_op = REDLOCK_OP_ACQUIRE;
    redlock__round(lk, REDLOCK__PH_ACQUIRE, now);
    REDLOCK__COUNT(lk->_client, attempts);
    redlock__event(lk, REDLOCK_EV_ATTEMPT, -1, 0);
}

/* Starts an extend round. From this moment the key may live only ttl_ms
   more wherever the command lands, so validity and per-node bounds shrink
   now if the new ttl is shorter, whatever the round's outcome. (The GET of
   a check-then-act node changes nothing: its bound shrinks at the PEXPIRE.) */
static void redlock__start_extend(redlock_lock *lk, int64_t ttl_ms, int user, int64_t now) {
    int64_t bound;
    int i;
    if (user) lk->_hold = REDLOCK__HOLD_EXTEND;
    else if (lk->_hold == REDLOCK__HOLD_EXTEND) lk->_hold = REDLOCK__HOLD_IDLE;
    lk->_arg.extend_ttl_ms = ttl_ms;
    lk->_phase_op = REDLOCK_OP_EXTEND;
    redlock__round(lk, REDLOCK__PH_EXTEND, now);
    lk->_saved_us = lk->_validity_unknown ? 0 : lk->_valid_until - now;
    bound = redlock__extend_bound(lk);
    if (bound < lk->_valid_until) lk->_valid_until = bound;
    for (i = 0; i < lk->_client->_cfg.node_count; i++)
        if (lk->_node[i].step == REDLOCK__ST_EXTEND && bound < redlock__until(lk, i)) redlock__set_until(lk, i, bound);
}

/* The user's extend round runs (or waits for its turn). */
static int redlock__user_extending(const redlock_lock *lk) {
    return lk->_phase == REDLOCK__PH_EXTEND && lk->_hold == REDLOCK__HOLD_EXTEND;
}

/* Why a held lock whose validity ran out is lost. */
static int redlock__expiry_reason(const redlock_lock *lk) {
    if (lk->_capped) return REDLOCK_ERR_HOLD_LIMIT;
    return lk->_renew_status ? lk->_renew_status : (int)REDLOCK_ERR_EXPIRED;
}

/* The lock ended without the holder's release. A user extend still waiting
   gets its answer first, then the LOST result. */
static int redlock__lose(redlock_lock *lk, const int *alive, int reason, int64_t now) {
    int extend_waiting = redlock__user_extending(lk), upgrading = lk->_hold == REDLOCK__HOLD_UPGRADE;
    lk->_hold = REDLOCK__HOLD_IDLE;
    redlock__set_state(lk, REDLOCK_STATE_LOST);
    redlock__count_lost(lk->_client, reason);
    lk->_lost_status = reason;
    lk->_phase_op = REDLOCK_OP_LOST;
    redlock__round(lk, REDLOCK__PH_CLEANUP, now);  /* best effort: delete what is still ours */
    redlock__event(lk, REDLOCK_EV_LOST, -1, reason);
    /* out before the callbacks, which may deinitialise or re-acquire the lock */
    redlock__flush(lk, now, alive);
    if (!*alive) return 0;
    if (extend_waiting && !redlock__report(lk, alive, REDLOCK_OP_EXTEND, reason, 0, now)) return 0;
    if (upgrading && !redlock__report(lk, alive, REDLOCK_OP_UPGRADE, reason, 0, now)) return 0;
    if (lk->_state != REDLOCK_STATE_LOST) return 1; /* the callback already moved on */
    return redlock__report(lk, alive, REDLOCK_OP_LOST, reason, 0, now);
}

/* Tells the transport whether this lock's acquire wants release
   notifications (callbacks.listen), once per change. */
static void redlock__listen(redlock_lock *lk, int on) {
    redlock_client *c = lk->_client;
    if (lk->_listening == on) return;
    lk->_listening = (uint8_t)on;
    c->_cb.listen(c->_user, lk, on);
}

/* A retry is to come: notifications help when its delay is at least as
   long as a round may take (the node timeout); a retry sooner than that
   finds a release about as soon as a notification would, and listening
   costs the transport a SUBSCRIBE and an UNSUBSCRIBE per waiting acquire
   and a wake of every waiter at each release (section 10). */
static void redlock__listen_retry(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    if (c->_cb.listen && lk->_retry_delay_us >= c->_cfg.node_timeout_ms * 1000) redlock__listen(lk, 1);
}

/* The acquire ends without the lock. */
static int redlock__give_up(redlock_lock *lk, const int *alive, int status, int votes, int64_t elapsed_us,
                            int64_t now) {
    redlock__set_state(lk, REDLOCK_STATE_IDLE);
    redlock__listen(lk, 0);
    if (lk->_client->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_FAILED, REDLOCK_OP_ACQUIRE, -1, status, lk->_attempt);
        ev.votes = votes;
        ev.elapsed_us = elapsed_us;
        redlock__emit(lk, &ev);
    }
    /* the undo goes out before the callback, which may deinitialise or re-acquire */
    redlock__flush(lk, now, alive);
    if (!*alive) return 0;
    return redlock__report(lk, alive, REDLOCK_OP_ACQUIRE, status, votes, now);
}

/* Too few answers: OVERLOADED when some node's command never left because
   the transport's queue was full (the nodes themselves may be fine),
   NOPERM when some node's ACL denied a key of the lock, NO_SCRIPTING when
   some node refused a script the operation needs (redlock__needs_scripts),
   EVICTING when some node's grant did not count because it may evict
   keys, RESTARTED when one did not count (yet) because it may have lost
   keys at a restart, REPLICAS when one's WAIT fell short, NO_QUORUM
   otherwise. */
static int redlock__too_few(const redlock_lock *lk) {
    int i, scriptless = 0, denied = 0, evicting = 0, restarted = 0, replicas = 0;
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        if (lk->_node[i].status == REDLOCK_ERR_QUEUE_FULL) return REDLOCK_ERR_OVERLOADED;
        scriptless |= lk->_node[i].status == REDLOCK_ERR_NO_SCRIPTING;
        denied |= lk->_node[i].status == REDLOCK_ERR_NOPERM;
        evicting |= lk->_node[i].status == REDLOCK_ERR_EVICTING;
        restarted |= lk->_node[i].status == REDLOCK_ERR_RESTARTED;
        replicas |= lk->_node[i].status == REDLOCK_ERR_REPLICAS;
    }
    return denied ? REDLOCK_ERR_NOPERM : scriptless ? REDLOCK_ERR_NO_SCRIPTING :
           evicting ? REDLOCK_ERR_EVICTING : restarted ? REDLOCK_ERR_RESTARTED :
           replicas ? REDLOCK_ERR_REPLICAS : REDLOCK_ERR_NO_QUORUM;
}

/* A lock that refuses nodes that may evict keys can never win while the
   client knows too many such nodes (until a new connection says otherwise). */
static int redlock__evicting_quorum(const redlock_lock *lk) {
    int i, evicting = 0, n = lk->_client->_cfg.node_count;
    for (i = 0; i < n; i++) evicting += redlock__refuses(lk, i);
    return n - evicting < redlock__quorum(lk->_client);
}

/* A lock can never win while too many nodes refuse its scripts or (their
   ACL) its keys: no retry changes that. */
static int redlock__scriptless_quorum(const redlock_lock *lk) {
    int i, refused = 0, n = lk->_client->_cfg.node_count;
    for (i = 0; i < n; i++)
        refused += lk->_node[i].status == REDLOCK_ERR_NO_SCRIPTING || lk->_node[i].status == REDLOCK_ERR_NOPERM;
    return n - refused < redlock__quorum(lk->_client);
}

/* The attempt that started at `start` won: held until `until`. */
static int redlock__won(redlock_lock *lk, const int *alive, int votes, int64_t start, int64_t until, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__set_state(lk, REDLOCK_STATE_HELD);
    redlock__listen(lk, 0);
    redlock__round_over(lk, now);
    lk->_valid_until = until;
    lk->_validity_unknown = 0;
    lk->_mark.acquired_at = now;
    lk->_extensions = 0;
    lk->_capped = 0;
    lk->_renew_status = 0;
    lk->_next_at = redlock__renewal_due(lk) + (start - lk->_round_start); /* from the attempt's start */
    if (c->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_ACQUIRED, REDLOCK_OP_ACQUIRE, -1, 0, lk->_attempt);
        ev.votes = votes;
        ev.elapsed_us = now - start;
        ev.validity_us = until - now;
        ev.ttl_share_permille = (int)(((now - start) + redlock__drift_us(c, lk->_ttl_ms)) * 1000 / (lk->_ttl_ms * 1000));
        redlock__emit(lk, &ev);
    }
    return redlock__report(lk, alive, REDLOCK_OP_ACQUIRE, REDLOCK_OK, votes, now);
}

static int redlock__attempt_failed(redlock_lock *lk, const int *alive, int status, int votes, int64_t start, int64_t now);

static int redlock__decide_acquire(redlock_lock *lk, const int *alive, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(c), status;
    if (t.yes >= q) {
        int64_t until = lk->_round_start + lk->_ttl_ms * 1000 - redlock__drift_us(c, lk->_ttl_ms);
        if (until > now && redlock__fenced(lk)) {
            /* not yet: the fence must first be written back to a quorum
               (section 11); the validity still counts from this round */
            lk->_valid_until = until;
            redlock__round(lk, REDLOCK__PH_FENCE, now);
            return 1;
        }
        if (until > now) return redlock__won(lk, alive, t.yes, lk->_round_start, until, now);
        status = REDLOCK_ERR_VALIDITY;
    } else if (t.yes + t.pending < q) {
        status = redlock__unusable(c);
        if (!status) status = t.no > 0 ? REDLOCK_ERR_LOCKED : redlock__too_few(lk);
    } else {
        return 1; /* votes still out */
    }
    return redlock__attempt_failed(lk, alive, status, t.yes, lk->_round_start, now);
}

/* A fenced acquire's write-back round: the fence counts once a quorum of
   nodes where the key is still ours has it. */
static int redlock__decide_fence(redlock_lock *lk, const int *alive, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(c), status;
    int64_t until = lk->_valid_until, start = until - (lk->_ttl_ms * 1000 - redlock__drift_us(c, lk->_ttl_ms));
    if (t.yes >= q && until > now) return redlock__won(lk, alive, t.yes, start, until, now);
    if (t.yes >= q) status = REDLOCK_ERR_VALIDITY;
    else if (t.yes + t.pending >= q) return 1; /* votes still out */
    else if (!(status = redlock__unusable(c))) status = t.missing > 0 ? REDLOCK_ERR_VALIDITY : redlock__too_few(lk);
    return redlock__attempt_failed(lk, alive, status, t.yes, start, now);
}

/* When the soonest of the nodes whose grant this round did not count
   because of a restart (RESTARTED) counts again. */
static int64_t redlock__counts_again_at(const redlock_lock *lk) {
    int64_t soonest = INT64_MAX;
    int i;
    for (i = 0; i < lk->_client->_cfg.node_count; i++)
        if (lk->_node[i].status == REDLOCK_ERR_RESTARTED) {
            int64_t at = lk->_client->_restart_at[i] + redlock__restart_bound_us(lk);
            if (at < soonest) soonest = at;
        }
    return soonest;
}

/* The attempt that started at `start` failed with `status`: undo it
   everywhere (a late OK may land), then retry or give up. */
static int redlock__attempt_failed(redlock_lock *lk, const int *alive, int status, int votes, int64_t start, int64_t now) {
    redlock_client *c = lk->_client;
    int hopeless;
    /* a waiting acquire that lost to restarted nodes retries when one of them counts again */
    int64_t again = status == REDLOCK_ERR_RESTARTED && lk->_wait_us > 0 ? redlock__counts_again_at(lk) : now;
    redlock_event ev = redlock__event_of(REDLOCK_EV_RETRY, REDLOCK_OP_ACQUIRE, -1, status, lk->_attempt);
    ev.votes = votes;
    ev.elapsed_us = now - start;  /* the attempt's, before the undo round starts */
    lk->_fence = 0;
    /* a notification heard while a notification's attempt ran counts from
       now: the one behind this attempt is spent */
    if (lk->_handoff && lk->_woken) lk->_arg.woken_at = now;
    lk->_handoff = 0;
    /* CONFIG and TLS: redlock__unusable's, too many nodes refuse */
    hopeless = status == REDLOCK_ERR_CONFIG || status == REDLOCK_ERR_TLS ||
               ((status == REDLOCK_ERR_NO_SCRIPTING || status == REDLOCK_ERR_NOPERM) && redlock__scriptless_quorum(lk)) ||
               (status == REDLOCK_ERR_EVICTING && redlock__evicting_quorum(lk));
    redlock__round(lk, REDLOCK__PH_ROLLBACK, now);
    lk->_fail_votes = votes;
    lk->_saved_us = ev.elapsed_us;
    if (hopeless) /* no retry can win */
        return redlock__give_up(lk, alive, status, votes, ev.elapsed_us, now);
    if (now < lk->_next_at) {
        /* a notification's attempt lost before the retry was due: that
           retry keeps its time and no retry is spent (the budget is time) */
        ev.delay_us = lk->_next_at - now;
        redlock__listen_retry(lk);
        redlock__emit(lk, &ev);
        return 1;
    }
    if (lk->_retries > 0 && lk->_try == REDLOCK__TRY_RETRYING) {
        /* (a notification heard meanwhile starts an attempt sooner) */
        int64_t delay = redlock__jitter_delay(lk);
        if (again - now > delay) delay = again - now;
        /* a wait deadline is kept, not cut short: when the next retry would
           start too late for its round to end in time, one last attempt
           starts at the last moment from which it still can */
        int64_t latest = redlock__wait_deadline(lk) - redlock__grant_round_us(c);
        if (lk->_wait_us > 0 && now + delay > latest) {
            lk->_try = REDLOCK__TRY_LAST;
            delay = latest - now;
        }
        if (delay >= 0) {
            lk->_retries--;
            lk->_next_at = now + delay;
            ev.delay_us = delay;
            redlock__listen_retry(lk);
            redlock__emit(lk, &ev);
            return 1;
        }
    }
    if (lk->_try == REDLOCK__TRY_LAST) { /* the wait ran out: say so at the deadline, not before */
        lk->_try = REDLOCK__TRY_TIMING_OUT;
        lk->_woken = 0;
        redlock__listen(lk, 0);
        lk->_next_at = redlock__wait_deadline(lk);
        return 1;
    }
    return redlock__give_up(lk, alive, status, votes, ev.elapsed_us, now);
}

static int redlock__decide_extend(redlock_lock *lk, const int *alive, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(c), n = c->_cfg.node_count, user = lk->_hold == REDLOCK__HOLD_EXTEND, status;
    redlock_event ev = redlock__event_of(REDLOCK_EV_RENEWED, REDLOCK_OP_EXTEND, -1, 0, 0);
    ev.votes = t.yes;
    ev.elapsed_us = now - lk->_round_start;
    ev.slack_us = lk->_saved_us;
    if (t.yes >= q) {
        /* the validity was cut to this bound when the round started and has
           not run out (step() checks that first), so the bound lies ahead */
        lk->_validity_unknown = 0;
        redlock__round_over(lk, now);
        lk->_valid_until = redlock__extend_bound(lk);
        lk->_extensions++;
        lk->_renew_status = 0;
        if (user) lk->_hold = REDLOCK__HOLD_IDLE;
        /* an upgrade called meanwhile keeps its time: its attempt is due now */
        if (lk->_hold != REDLOCK__HOLD_UPGRADE) lk->_next_at = lk->_round_start + lk->_renew_every_us;
        ev.validity_us = lk->_valid_until - now;
        if (!user) {
            REDLOCK__COUNT(c, renewals);
            redlock__sample(&c->_stats.renewal_us, ev.elapsed_us);
        }
        redlock__emit(lk, &ev);
        return user ? redlock__report(lk, alive, REDLOCK_OP_EXTEND, REDLOCK_OK, t.yes, now) : 1;
    }
    if (t.yes + t.pending >= q) return 1; /* votes still out */
    /* definite answers alone rule out a quorum: the lock is gone */
    if (t.no + t.missing > n - q)
        return redlock__lose(lk, alive, t.no > 0 ? REDLOCK_ERR_STOLEN : REDLOCK_ERR_QUORUM_LOST, now);
    /* inconclusive: still held until the (possibly shortened) validity; the
       watchdog tries again, and if it never gets through, the lock ends as
       a transport failure. A user's extend that fails leaves no such mark:
       without renewals the lock simply expires. */
    status = redlock__too_few(lk);
    if (!user && status != REDLOCK_ERR_REPLICAS) status = REDLOCK_ERR_TRANSPORT; /* (replicas short: said so) */
    redlock__round_over(lk, now);
    if (user) lk->_hold = REDLOCK__HOLD_IDLE;
    else lk->_renew_status = status;
    if (lk->_hold != REDLOCK__HOLD_UPGRADE) {
        int64_t left = lk->_valid_until - now, again = lk->_retry_delay_us;
        if (again > left / 3) again = left / 3;
        lk->_next_at = now + again;
    }
    ev.type = REDLOCK_EV_RENEW_FAILED;
    ev.status = status;
    if (!user) REDLOCK__COUNT(c, renewal_failed);
    redlock__emit(lk, &ev);
    return user ? redlock__report(lk, alive, REDLOCK_OP_EXTEND, status, t.yes, now) : 1;
}

static void redlock__set_access(redlock_lock *lk, redlock_access a) {
    lk->_kind = (uint8_t)((lk->_kind & ~(3 << REDLOCK__K_ACCESS_SHIFT)) | (a << REDLOCK__K_ACCESS_SHIFT));
}

/* max_extensions or max_hold_ms reached: no more renewals (the watchdog's,
   an upgrade's attempts) for this hold. */
static int redlock__cap_reached(const redlock_lock *lk, int64_t now) {
    return lk->_capped || (lk->_max_extensions > 0 && lk->_extensions >= lk->_max_extensions) ||
           (lk->_max_hold_us > 0 && now - lk->_mark.acquired_at >= lk->_max_hold_us);
}

/* A renewal (the watchdog's, or an upgrade's attempt) whose turn came
   only once the hold's cap was reached does not start: nothing of it was
   sent, so it is dropped, and the next step ends it as at the cap (the
   lock runs out, LOST with HOLD_LIMIT; the upgrade ends HOLD_LIMIT). */
static int redlock__capped_in_line(redlock_lock *lk, int64_t now) {
    int i;
    if (lk->_state != REDLOCK_STATE_HELD || !redlock__cap_reached(lk, now) ||
        !((lk->_phase == REDLOCK__PH_EXTEND && lk->_hold != REDLOCK__HOLD_EXTEND) || lk->_phase == REDLOCK__PH_UPGRADE))
        return 0;
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        redlock__node *n = &lk->_node[i];
        n->seq = 0;
        n->progress = REDLOCK__N_DONE;
    }
    lk->_phase = REDLOCK__PH_NONE;
    if (lk->_hold == REDLOCK__HOLD_UPGRADE) lk->_next_at = now; /* the step ends the upgrade at once */
    else lk->_capped = 1;
    return 1;
}

/* Starts an upgrade attempt: a round that also renews the hold (for the
   lock's ttl, as a renewal: the validity is cut to it now if shorter). */
static void redlock__start_upgrade(redlock_lock *lk, int64_t now) {
    int64_t bound;
    int i;
    lk->_attempt++;
    lk->_arg.extend_ttl_ms = lk->_ttl_ms;
    lk->_phase_op = REDLOCK_OP_UPGRADE;
    redlock__round(lk, REDLOCK__PH_UPGRADE, now);
    bound = redlock__extend_bound(lk);
    if (bound < lk->_valid_until) lk->_valid_until = bound;
    for (i = 0; i < lk->_client->_cfg.node_count; i++)
        if (bound < redlock__until(lk, i)) redlock__set_until(lk, i, bound);
}

/* The upgrade ended: the hold goes on (renewed as usual from now). */
static int redlock__upgrade_done(redlock_lock *lk, const int *alive, int status, int votes, int64_t now) {
    lk->_hold = REDLOCK__HOLD_IDLE;
    lk->_next_at = now + lk->_renew_every_us;
    if (status != REDLOCK_OK && lk->_attempt > 0) /* back to update where it got further */
        redlock__round(lk, REDLOCK__PH_SETTLE, now);
    else redlock__round_over(lk, now);
    redlock__flush(lk, now, alive); /* out before the callback */
    if (!*alive) return 0;
    return redlock__report(lk, alive, REDLOCK_OP_UPGRADE, status, votes, now);
}

/* An upgrade attempt: upgraded on a quorum, or renewed on one (and tried
   again), or the hold is gone. */
static int redlock__decide_upgrade(redlock_lock *lk, const int *alive, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(c), n = c->_cfg.node_count;
    if (t.yes >= q) {
        lk->_valid_until = redlock__extend_bound(lk);
        lk->_validity_unknown = 0;
        lk->_extensions++;
        redlock__set_access(lk, REDLOCK_ACCESS_EXCLUSIVE);
        return redlock__upgrade_done(lk, alive, REDLOCK_OK, t.yes, now);
    }
    if (t.pending > 0 && t.yes + t.no + t.pending >= q) return 1; /* votes still out */
    if (t.yes + t.no >= q) { /* renewed on a quorum, not upgraded */
        lk->_valid_until = redlock__extend_bound(lk);
        lk->_validity_unknown = 0;
        lk->_extensions++;
    } else if (t.missing > n - q) {
        return redlock__lose(lk, alive, REDLOCK_ERR_QUORUM_LOST, now);
    }
    redlock__round_over(lk, now);
    if (lk->_retries > 0) {
        int64_t delay = redlock__jitter_delay(lk);
        if (delay > lk->_renew_every_us) delay = lk->_renew_every_us; /* the attempts renew the hold */
        if (lk->_wait_us <= 0 || now + delay < redlock__wait_deadline(lk)) {
            lk->_retries--;
            lk->_next_at = now + delay;
            redlock__event(lk, REDLOCK_EV_RETRY, -1, t.no > 0 ? REDLOCK_ERR_LOCKED : redlock__too_few(lk));
            return 1;
        }
        return redlock__upgrade_done(lk, alive, REDLOCK_ERR_TIMEOUT, t.yes, now);
    }
    return redlock__upgrade_done(lk, alive, t.no > 0 ? REDLOCK_ERR_LOCKED : redlock__too_few(lk), t.yes, now);
}

/* A downgrade: the lock is shared from the call on; the result says
   whether a quorum of nodes says so too. */
static int redlock__decide_downgrade(redlock_lock *lk, const int *alive, int64_t now) {
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(lk->_client), status;
    if (t.yes >= q) status = REDLOCK_OK;
    else if (t.pending > 0 && t.yes + t.pending >= q) return 1;
    else status = redlock__too_few(lk);
    redlock__round_over(lk, now);
    if (t.pending) lk->_phase = REDLOCK__PH_CLEANUP; /* stragglers finish quietly */
    return redlock__report(lk, alive, REDLOCK_OP_DOWNGRADE, status, t.yes, now);
}

static int redlock__decide_release(redlock_lock *lk, const int *alive, int64_t now) {
    redlock_client *c = lk->_client;
    redlock__tally t = redlock__count(lk);
    int q = redlock__quorum(c), status;
    if (t.yes >= q) status = REDLOCK_OK;
    else if (t.pending > 0 && t.yes + t.pending >= q) return 1;
    else status = t.yes + t.no + t.missing >= q ? REDLOCK_ERR_EXPIRED : redlock__too_few(lk);
    redlock__set_state(lk, REDLOCK_STATE_IDLE);
    redlock__round_over(lk, now);
    if (t.pending) lk->_phase = REDLOCK__PH_CLEANUP; /* stragglers finish quietly */
    if (c->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_RELEASED, REDLOCK_OP_RELEASE, -1, status, 0);
        ev.votes = t.yes;
        ev.elapsed_us = now - lk->_round_start;
        redlock__emit(lk, &ev);
    }
    return redlock__report(lk, alive, REDLOCK_OP_RELEASE, status, t.yes, now);
}

/* The round's deadline has come: whoever has not answered failed (a round
   waiting for its turn has sent nothing yet). */
static void redlock__time_out(redlock_lock *lk, int64_t now) {
    int i;
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        redlock__node *n = &lk->_node[i];
        int hears = n->step == REDLOCK__ST_RELEASE && redlock__n_awaited(n);
        if (redlock__n_done(n)) continue;
        redlock__node_done(lk, i, REDLOCK__OUT_ERR, REDLOCK_ERR_NODE_TIMEOUT, now);
        /* a release's EVALSHA still hears its answer: a late NOSCRIPT
           gets the EVAL (redlock__late_answer) */
        if (hears) n->progress = REDLOCK__N_DONE_AWAITED;
        else n->seq = 0;
    }
}

/* An operation's round: decided now, or its votes still out. */
static int redlock__decide(redlock_lock *lk, const int *alive, int64_t now) {
    switch (lk->_phase) {
    case REDLOCK__PH_ACQUIRE: return redlock__decide_acquire(lk, alive, now);
    case REDLOCK__PH_FENCE: return redlock__decide_fence(lk, alive, now);
    case REDLOCK__PH_UPGRADE: return redlock__decide_upgrade(lk, alive, now);
    case REDLOCK__PH_DOWNGRADE: return redlock__decide_downgrade(lk, alive, now);
    case REDLOCK__PH_EXTEND: return redlock__decide_extend(lk, alive, now);
    case REDLOCK__PH_RELEASE: return redlock__decide_release(lk, alive, now);
    default: return 1;
    }
}

/* No round runs: the next one that is due (an acquire's attempt, an
   upgrade's attempt, a watchdog renewal), or the end of an acquire. */
static int redlock__next_round(redlock_lock *lk, const int *alive, int64_t now) {
    /* the next attempt waits for the undo of the last one (or the cleanup
       of the previous operation) to finish: it needs the same token */
    if (lk->_state == REDLOCK_STATE_ACQUIRING && lk->_attempt > 0 && redlock__unusable(lk->_client)) {
        /* refusals that came after the attempt was decided (its undo was
           refused too): no retry can win */
        return redlock__give_up(lk, alive, redlock__unusable(lk->_client), lk->_fail_votes, lk->_saved_us, now);
    } else if (lk->_state == REDLOCK_STATE_ACQUIRING && (now >= lk->_next_at || redlock__wake_due(lk, now))) {
        if (lk->_try == REDLOCK__TRY_TIMING_OUT)
            return redlock__give_up(lk, alive, REDLOCK_ERR_TIMEOUT, lk->_fail_votes, lk->_saved_us, now);
        redlock__start_attempt(lk, now);
    } else if (lk->_state == REDLOCK_STATE_HELD && lk->_hold == REDLOCK__HOLD_UPGRADE) {
        if (now < lk->_next_at) return 1;
        if (redlock__cap_reached(lk, now)) { /* an attempt would renew the hold past its cap */
            lk->_capped = 1;
            return redlock__upgrade_done(lk, alive, REDLOCK_ERR_HOLD_LIMIT, 0, now);
        }
        redlock__start_upgrade(lk, now); /* its attempts renew the hold meanwhile */
    } else if (lk->_state == REDLOCK_STATE_HELD && lk->_watchdog && !lk->_capped && now >= lk->_next_at) {
        if (redlock__cap_reached(lk, now)) {
            lk->_capped = 1;  /* renewal stops; the lock runs out and is reported lost */
        } else {
            redlock__start_extend(lk, lk->_ttl_ms, 0, now);
        }
    }
    return 1;
}

/* One pass of the state machine at time `now`. Returns 0 if the lock was
   deinitialised by a callback. */
static int redlock__step(redlock_lock *lk, const int *alive, int64_t now) {
    if (lk->_cancel_op) {  /* release() overtook an acquire, extend, upgrade or downgrade: answer it */
        redlock_op op = (redlock_op)lk->_cancel_op;
        lk->_cancel_op = 0;
        if (!redlock__report(lk, alive, op, REDLOCK_ERR_CANCELLED, 0, now)) return 0;
    }
    if (lk->_phase != REDLOCK__PH_NONE && !redlock__waiting(lk) && now >= redlock__round_deadline(lk))
        redlock__time_out(lk, now);
    /* validity ran out before a renewal succeeded: the holder must be told */
    if (lk->_state == REDLOCK_STATE_HELD && now >= lk->_valid_until)
        return redlock__lose(lk, alive, redlock__expiry_reason(lk), now);
    if (redlock__waiting(lk)) return 1; /* its round has not started */
    switch (lk->_phase) {
    case REDLOCK__PH_NONE: break;
    case REDLOCK__PH_ROLLBACK:
    case REDLOCK__PH_SETTLE:
    case REDLOCK__PH_CLEANUP: /* follow-ups are not decided: over when every node answered */
        if (redlock__count(lk).pending == 0) redlock__round_over(lk, now);
        break;
    default: return redlock__decide(lk, alive, now);
    }
    return lk->_phase == REDLOCK__PH_NONE ? redlock__next_round(lk, alive, now) : 1;
}

static int64_t redlock__lock_deadline(const redlock_lock *lk) {
    int64_t d = REDLOCK_NO_DEADLINE;
    if (lk->_phase != REDLOCK__PH_NONE) d = redlock__round_deadline(lk);
    if (lk->_state == REDLOCK_STATE_HELD) {
        if (lk->_valid_until < d) d = lk->_valid_until;
        if ((lk->_watchdog || lk->_hold == REDLOCK__HOLD_UPGRADE) && lk->_phase == REDLOCK__PH_NONE && !lk->_capped && lk->_next_at < d)
            d = lk->_next_at;
    } else if (lk->_state == REDLOCK_STATE_ACQUIRING && lk->_phase == REDLOCK__PH_NONE) {
        if (lk->_next_at < d) d = lk->_next_at;
        if (lk->_woken && lk->_try != REDLOCK__TRY_TIMING_OUT && lk->_mark.wake_at < d) d = lk->_mark.wake_at;
    }
    return d;
}

/* ---- deadlines: a pairing heap through the locks (no allocation) ----
   Insert is O(1), removing any lock O(log n) amortised, the earliest is the
   root. */
#define REDLOCK__IN_HEAP 1
#define REDLOCK__PARKED 2
#define REDLOCK__WAITING 3 /* its round waits for a turn: in the client's _waiting heap */

/* Joins two heaps (roots a and b); returns the new root. */
static redlock_lock *redlock__heap_meld(redlock_lock *a, redlock_lock *b) {
    redlock_lock *t;
    if (!a) return b;
    if (!b) return a;
    if (b->_deadline < a->_deadline) { t = a; a = b; b = t; }
    b->_heap_prev = a;
    b->_heap_next = a->_heap_child;
    if (a->_heap_child) a->_heap_child->_heap_prev = b;
    a->_heap_child = b;
    return a;
}

/* One heap from a list of sibling heaps: meld them in pairs left to
   right, then the pairs right to left (what keeps the heap shallow). */
static redlock_lock *redlock__heap_merge_pairs(redlock_lock *first) {
    redlock_lock *pairs = NULL, *root = NULL;
    while (first) {
        redlock_lock *a = first, *b = first->_heap_next, *m;
        first = b ? b->_heap_next : NULL;
        a->_heap_next = a->_heap_prev = NULL;
        if (b) b->_heap_next = b->_heap_prev = NULL;
        m = redlock__heap_meld(a, b);
        m->_heap_next = pairs; /* a stack of the pairs, through _heap_next */
        pairs = m;
    }
    while (pairs) {
        redlock_lock *next = pairs->_heap_next;
        pairs->_heap_next = NULL;
        root = redlock__heap_meld(root, pairs);
        pairs = next;
    }
    if (root) root->_heap_prev = NULL;
    return root;
}

/* Takes the lock out of the heap, the parked list or the waiting heap. */
static void redlock__unschedule(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    if (lk->_heap_where == REDLOCK__IN_HEAP || lk->_heap_where == REDLOCK__WAITING) {
        redlock_lock **root = lk->_heap_where == REDLOCK__WAITING ? &c->_waiting : &c->_heap;
        redlock_lock *sub = redlock__heap_merge_pairs(lk->_heap_child);
        lk->_heap_child = NULL;
        if (lk == *root) {
            *root = sub;
        } else {
            if (lk->_heap_prev->_heap_child == lk) lk->_heap_prev->_heap_child = lk->_heap_next;
            else lk->_heap_prev->_heap_next = lk->_heap_next;
            if (lk->_heap_next) lk->_heap_next->_heap_prev = lk->_heap_prev;
            *root = redlock__heap_meld(*root, sub);
        }
    } else if (lk->_heap_where == REDLOCK__PARKED) {
        if (lk->_heap_prev) lk->_heap_prev->_heap_next = lk->_heap_next;
        else c->_parked = lk->_heap_next;
        if (lk->_heap_next) lk->_heap_next->_heap_prev = lk->_heap_prev;
    }
    lk->_heap_next = lk->_heap_prev = NULL;
    lk->_heap_where = 0;
}

static void redlock__wait(redlock_lock *lk);

/* The lock needs the timer at d (NO_DEADLINE: not at all). A lock waiting
   for its turn stays in line instead (refiled if its validity changed). */
static void redlock__schedule(redlock_lock *lk, int64_t d) {
    redlock_client *c = lk->_client;
    if (lk->_heap_where == REDLOCK__WAITING) { redlock__wait(lk); return; }
    if (lk->_heap_where == REDLOCK__IN_HEAP && lk->_deadline == d) return;
    redlock__unschedule(lk);
    lk->_deadline = d;
    if (d == REDLOCK_NO_DEADLINE) return;
    lk->_heap_where = REDLOCK__IN_HEAP;
    c->_heap = redlock__heap_meld(c->_heap, lk);
}

/* on_timer: a due lock waits here until the tick ends. */
static void redlock__park(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    redlock__unschedule(lk);
    lk->_heap_where = REDLOCK__PARKED;
    lk->_heap_next = c->_parked;
    if (c->_parked) c->_parked->_heap_prev = lk;
    c->_parked = lk;
}

/* ---- turns: how many rounds run at once ----
   A round's node timeout must measure the node, not the client's own
   queue: rounds issued in a burst would otherwise wait behind one another
   in the transport, the server's pipeline and the client's handling of
   the answers, and time out there. So a round of an operation (an acquire
   attempt and its write-back, a release, an extend or renewal, an upgrade
   attempt, a downgrade) holds a turn from its start until it is decided,
   and a client hands out at most _window turns at once. A round that
   finds none free waits: nothing of it is sent and its clock has not
   started until redlock_on_timer gives it a turn (the timer asks for that
   as soon as one is free). Held locks get turns first, the one whose
   validity ends first first; then the others in order of arrival. The
   undo, cleanup and settle that follow a round (or a loss), and the
   stragglers of a decided round, hold no turn: they go out at once (before
   on_result, which may deinitialise the lock) and are not waited for.
   The window adapts while rounds wait, between 1 and max_rounds (from
   REDLOCK__FIRST_WINDOW): a round decided later than half the node
   timeout after its start halves it, one decided sooner adds a turn; at
   most one change per round trip (a round that started before the last
   change says nothing about it). */
/* keys in the waiting heap: a held lock's validity end (it must be told
   LOST then, waiting or not); the others after all of those, in order */
#define REDLOCK__IN_LINE ((int64_t)1 << 62)
#define REDLOCK__FIRST_WINDOW 16

static int redlock__waiting(const redlock_lock *lk) { return lk->_heap_where == REDLOCK__WAITING; }
/* rounds that hold a turn until they are decided */
static int redlock__turn_phase(int phase) {
    return phase == REDLOCK__PH_ACQUIRE || phase == REDLOCK__PH_FENCE || phase == REDLOCK__PH_RELEASE ||
           phase == REDLOCK__PH_EXTEND || phase == REDLOCK__PH_UPGRADE || phase == REDLOCK__PH_DOWNGRADE;
}
static int redlock__has_turn(const redlock_lock *lk) { return redlock__turn_phase(lk->_phase) && !redlock__waiting(lk); }

/* Files the lock in the waiting heap (or refiles it under a new validity). */
static void redlock__wait(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    int64_t key;
    if (lk->_state == REDLOCK_STATE_HELD) key = lk->_valid_until < REDLOCK__IN_LINE ? lk->_valid_until : REDLOCK__IN_LINE - 1;
    else if (redlock__waiting(lk) && lk->_deadline >= REDLOCK__IN_LINE) key = lk->_deadline; /* keeps its place */
    else key = REDLOCK__IN_LINE + (int64_t)(c->_line++ % (uint64_t)REDLOCK__IN_LINE);
    if (redlock__waiting(lk) && lk->_deadline == key) return;
    redlock__unschedule(lk);
    lk->_deadline = key;
    lk->_heap_where = REDLOCK__WAITING;
    c->_waiting = redlock__heap_meld(c->_waiting, lk);
}

/* The lock's round, decided now, gives its turn back (handed on at the
   next redlock_on_timer); how long it took moves the window while rounds
   wait for turns. decided: 0 for a lock deinitialised meanwhile. */
static void redlock__turn_over(redlock_lock *lk, int decided, int64_t now) {
    redlock_client *c = lk->_client;
    int64_t took = now - lk->_round_start, half = c->_cfg.node_timeout_ms * 500;
    c->_rounds--;
    c->_turn_at = now;
    if (!decided || !c->_waiting || lk->_round_start < c->_window_at) return;
    if (took > half && c->_window > 1) {
        c->_window /= 2;
        c->_window_at = now;
    } else if (took <= half && c->_window < c->_cfg.max_rounds) {
        c->_window++;
        c->_window_at = now;
    }
}

/* A round starts (phase): an operation's round keeps the turn of the one
   it follows, takes a free one or waits; a round that follows up on a
   decided one (undo, cleanup, settle) gives the turn back and goes out. */
static void redlock__take_turn(redlock_lock *lk, int phase, int64_t now) {
    redlock_client *c = lk->_client;
    if (redlock__has_turn(lk)) {
        if (!redlock__turn_phase(phase)) redlock__turn_over(lk, 1, now);
        return;
    }
    if (!redlock__turn_phase(phase)) {
        if (redlock__waiting(lk)) redlock__unschedule(lk);
        return;
    }
    if (c->_waiting || c->_rounds >= c->_window) {
        redlock__wait(lk);
        return;
    }
    if (redlock__waiting(lk)) redlock__unschedule(lk);
    c->_rounds++;
}

/* The lock's round is over (decided, or its stragglers done). */
static void redlock__round_over(redlock_lock *lk, int64_t now) {
    if (redlock__has_turn(lk)) redlock__turn_over(lk, 1, now);
    lk->_phase = REDLOCK__PH_NONE;
}

/* ---- the lock table: locks filed by address, found by id ---- */
/* The largest table: a lock's id has room for this many address-hash bits. */
#define REDLOCK__TABLE_BITS 24

/* An address's hash, REDLOCK__TABLE_BITS bits: its low bits are the bucket
   at any table size. */
static uint32_t redlock__address_hash(const redlock_lock *lk) {
    uint64_t h = (uint64_t)(uintptr_t)lk * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: the high bits */
    return (uint32_t)(h >> (64 - REDLOCK__TABLE_BITS));
}

static uint32_t redlock__bucket_of(const redlock_client *c, const redlock_lock *lk) {
    return redlock__address_hash(lk) & c->_table_mask;
}

/* A live lock of this client with this id, or NULL (a stale tag). */
static redlock_lock *redlock__find(redlock_client *c, uint64_t id) {
    redlock_lock *lk;
    for (lk = c->_table[id & c->_table_mask]; lk; lk = lk->_bucket_next)
        if (lk->_id == id) return lk;
    return NULL;
}

/* Is this memory a lock initialised on this client? By address only: the
   caller's memory may be uninitialised. */
static int redlock__filed(const redlock_client *c, const redlock_lock *lk) {
    const redlock_lock *it;
    for (it = c->_table[redlock__bucket_of(c, lk)]; it; it = it->_bucket_next)
        if (it == lk) return 1;
    return 0;
}

/* A lock's id: a per-client count above the address's hash bits. The
   count wraps (after 2^(40 - _hash_bits) lock_inits), so a count that a
   live lock of the same hash has is skipped: live ids are distinct. Lives
   of one address whose ids meet (k wraps apart) start their request
   numbers (the tags' sequence) k * 19463 apart (mod 2^16, and 0 is
   skipped): requests d ranks apart in their lives meet only if
   k >= 19463 / (d + 1) (an odd constant whose multiples stay far from
   those of 2^16: k times the distance is at least 19463). */
static void redlock__file(redlock_client *c, redlock_lock *lk) {
    uint32_t hash = redlock__address_hash(lk) & (uint32_t)((((uint64_t)1) << c->_hash_bits) - 1);
    uint32_t b = hash & c->_table_mask;
    int count_bits = 40 - c->_hash_bits;
    uint64_t n, tries = 0;
    const redlock_lock *it;
    do {
        n = c->_next_id++;
        lk->_id = ((n & ((((uint64_t)1) << count_bits) - 1)) << c->_hash_bits) | hash;
        for (it = c->_table[b]; it && it->_id != lk->_id; it = it->_bucket_next) {}
    } while (it && ++tries < (((uint64_t)1) << count_bits));
    lk->_seq = (uint16_t)((n >> count_bits) * 19463u);
    lk->_bucket_next = c->_table[b];
    c->_table[b] = lk;
    c->_locks++;
}

static void redlock__unfile(redlock_client *c, redlock_lock *lk) {
    redlock_lock **at = &c->_table[lk->_id & c->_table_mask];
    while (*at && *at != lk) at = &(*at)->_bucket_next;
    if (*at) {
        *at = lk->_bucket_next;
        c->_locks--;
    }
    lk->_bucket_next = NULL;
}

/* Room for one more lock: a built-in table that has as many locks as
   entries (and can grow) doubles, every lock moved into the new one (at
   lock_init only: O(1) per lock_init over time). 0: no memory for it, and
   nothing changed. */
static int redlock__room(redlock_client *c) {
    size_t size = (size_t)c->_table_mask + 1, b;
    redlock_lock **t;
    if (c->_locks < size || c->_cfg.lock_table || size >= ((size_t)1 << REDLOCK__TABLE_BITS)) return 1;
    t = (redlock_lock **)REDLOCK_MALLOC(2 * size * sizeof *t);
    if (!t) return 0;
    memset(t, 0, 2 * size * sizeof *t);
    for (b = 0; b < size; b++)
        while (c->_table[b]) {
            redlock_lock *lk = c->_table[b];
            uint32_t nb = (uint32_t)lk->_id & (uint32_t)(2 * size - 1); /* the id carries the address's hash */
            c->_table[b] = lk->_bucket_next;
            lk->_bucket_next = t[nb];
            t[nb] = lk;
        }
    if (c->_table != c->_own_table) REDLOCK_FREE(c->_table);
    c->_table = t;
    c->_table_mask = (uint32_t)(2 * size - 1);
    return 1;
}

/* The drive loop: runs the state machine until nothing changes. Re-entrant
   calls (a reply inside send, an API call inside a callback) only mark the
   lock dirty; the outermost loop picks the work up. Returns 0 if a callback
   deinitialised the lock: its memory may be gone, do not touch it. */
static int redlock__drive(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    int alive = 1;
    if (lk->_busy) { lk->_dirty = 1; return 1; }
    lk->_busy = 1;
    lk->_alive = &alive;
    do {
        int64_t now = redlock__now(c);
        lk->_dirty = 0;
        redlock__flush(lk, now, &alive);
        if (!alive) return 0;
        if (!redlock__step(lk, &alive, now)) return 0;
    } while (lk->_dirty);
    lk->_busy = 0;
    lk->_alive = NULL;
    redlock__schedule(lk, redlock__lock_deadline(lk));
    return 1;
}

static void redlock__enter(redlock_client *c) { c->_depth++; }

/* Leaving the outermost API call: hand the earliest deadline to the timer. */
static void redlock__leave(redlock_client *c) {
    if (--c->_depth > 0) return;
    if (c->_cb.set_timer) {
        int64_t d = redlock_next_deadline(c);
        if (d != c->_armed) {
            c->_armed = d;
            c->_cb.set_timer(c->_user, d);
        }
    }
}

static int redlock__usable(const redlock_lock *lk) {
    return lk && lk->_magic == REDLOCK__MAGIC && lk->_client->_magic == REDLOCK__MAGIC;
}

/* ---- setup and teardown ---- */

REDLOCK_API void redlock_config_init(redlock_config *cfg) {
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg); /* mode[]: REDLOCK_MODE_AUTO, which is 0 */
    cfg->node_count = 1;
    cfg->node_timeout_ms = 50;
    cfg->drift_factor = 0.01;
    cfg->clock_drift_ms = 2;
    cfg->retry_count = 3;
    cfg->retry_delay_ms = 200;
    cfg->retry_jitter_ms = 100;
    cfg->max_rounds = 128;
}

/* Millisecond settings: 0 .. 2^40, so that microseconds never overflow. */
static int redlock__ms_ok(int64_t ms) { return ms >= 0 && ms <= REDLOCK__MAX_MS; }

REDLOCK_API int redlock_client_init(redlock_client *c, const redlock_config *cfg,
                                    const redlock_callbacks *cb, void *user) {
    redlock_config d;
    int i;
    if (!c || !cfg || !cb || !cb->send) return REDLOCK_ERR_INVALID;
#ifndef REDLOCK__HAVE_CLOCK
    if (!cb->now_us || !cb->wall_ms) return REDLOCK_ERR_INVALID; /* no built-in clock here */
#endif
    if (cfg->node_count < 1 || cfg->node_count > REDLOCK_MAX_NODES) return REDLOCK_ERR_NODES;
    if (!redlock__ms_ok(cfg->node_timeout_ms) || !redlock__ms_ok(cfg->clock_drift_ms) ||
        !redlock__ms_ok(cfg->retry_delay_ms) || !redlock__ms_ok(cfg->wait_ms) ||
        cfg->max_ttl_ms > REDLOCK__MAX_MS || cfg->wait_replicas < 0 || !redlock__ms_ok(cfg->wait_timeout_ms) ||
        cfg->retry_jitter_ms > REDLOCK__MAX_MS || !(cfg->drift_factor >= 0.0 && cfg->drift_factor < 0.5))
        return REDLOCK_ERR_INVALID;
    for (i = 0; i < cfg->node_count; i++)
        if ((int)cfg->mode[i] < REDLOCK_MODE_AUTO || (int)cfg->mode[i] > REDLOCK_MODE_LEGACY) return REDLOCK_ERR_INVALID;
    if (cfg->lock_table && (cfg->lock_table_size < 1 || cfg->lock_table_size > ((size_t)1 << 24) ||
                            (cfg->lock_table_size & (cfg->lock_table_size - 1))))
        return REDLOCK_ERR_INVALID;
    redlock_config_init(&d);
    memset(c, 0, sizeof *c);
    c->_cfg = *cfg;
    if (cfg->lock_table) { /* never grows: the ids need only its bits */
        c->_table = cfg->lock_table;
        c->_table_mask = (uint32_t)(cfg->lock_table_size - 1);
        while (((uint32_t)1 << c->_hash_bits) <= c->_table_mask) c->_hash_bits++;
    } else {
        c->_table = c->_own_table;
        c->_table_mask = REDLOCK_LOCK_TABLE - 1;
        c->_hash_bits = REDLOCK__TABLE_BITS;
    }
    memset(c->_table, 0, ((size_t)c->_table_mask + 1) * sizeof *c->_table);
    if (!c->_cfg.node_timeout_ms) c->_cfg.node_timeout_ms = d.node_timeout_ms;
    if (!c->_cfg.wait_timeout_ms) c->_cfg.wait_timeout_ms = c->_cfg.node_timeout_ms;
    if (c->_cfg.drift_factor == 0.0) c->_cfg.drift_factor = d.drift_factor;
    if (!c->_cfg.clock_drift_ms) c->_cfg.clock_drift_ms = d.clock_drift_ms;
    if (!c->_cfg.retry_count) c->_cfg.retry_count = d.retry_count;
    if (!c->_cfg.retry_delay_ms) c->_cfg.retry_delay_ms = d.retry_delay_ms;
    if (!c->_cfg.retry_jitter_ms) c->_cfg.retry_jitter_ms = d.retry_jitter_ms;
    if (!c->_cfg.max_rounds) c->_cfg.max_rounds = d.max_rounds;
    if (c->_cfg.max_rounds < 0) c->_cfg.max_rounds = 0x7fffffff; /* no bound: every round at once */
    c->_window = c->_cfg.max_rounds < REDLOCK__FIRST_WINDOW ? c->_cfg.max_rounds
                 : c->_cfg.max_rounds == 0x7fffffff ? 0x7fffffff : REDLOCK__FIRST_WINDOW;
    c->_window_at = INT64_MIN;
    c->_cb = *cb;
#ifdef REDLOCK__HAVE_CLOCK
    if (!c->_cb.now_us) c->_cb.now_us = redlock__mono_us;
    if (!c->_cb.wall_ms) c->_cb.wall_ms = redlock__wall_ms;
#endif
    if (!c->_cb.random) c->_cb.random = redlock__os_random;
    c->_user = user;
    c->_armed = REDLOCK_NO_DEADLINE;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) c->_restart_at[i] = INT64_MIN;
    for (i = 0; i < c->_cfg.node_count; i++) {
        c->_caps[i] = c->_cfg.mode[i] == REDLOCK_MODE_LEGACY ? REDLOCK__CAP_LEGACY : REDLOCK__CAP_UNKNOWN;
        c->_any_legacy |= c->_cfg.mode[i] == REDLOCK_MODE_LEGACY;
    }
    c->_magic = REDLOCK__MAGIC;
    return REDLOCK_OK;
}

static void redlock__detach(redlock_lock *lk) {
    redlock__set_state(lk, REDLOCK_STATE_IDLE); /* a held one is no longer counted */
    if (lk->_alive) *lk->_alive = 0;
    lk->_alive = NULL;
    lk->_magic = 0;
    REDLOCK_FREE(lk->_key);
    lk->_key = NULL;
    lk->_key_len = 0;
}

REDLOCK_API void redlock_client_deinit(redlock_client *c) {
    uint32_t b;
    if (!c || c->_magic != REDLOCK__MAGIC) return;
    for (b = 0; b <= c->_table_mask; b++)
        while (c->_table[b]) {
            redlock_lock *lk = c->_table[b];
            c->_table[b] = lk->_bucket_next;
            redlock__detach(lk);
        }
    if (c->_table != c->_own_table && !c->_cfg.lock_table) REDLOCK_FREE(c->_table);
    c->_table = NULL;
    c->_table_mask = 0;
    c->_locks = 0;
    c->_heap = c->_parked = c->_waiting = NULL;
    c->_rounds = 0;
    if (c->_armed != REDLOCK_NO_DEADLINE) c->_cb.set_timer(c->_user, REDLOCK_NO_DEADLINE);
    c->_magic = 0;
}

/* Printable bytes, no space: a hash field, a word of a command line. */
static int redlock__printable(const char *s, size_t len) {
    size_t j;
    for (j = 0; j < len; j++)
        if ((unsigned char)s[j] <= ' ' || (unsigned char)s[j] >= 127) return 0;
    return 1;
}

/* The key of the options: its length in *klen, or an error status. */
static int redlock__check_key(const redlock_lock_opts *o, size_t *klen) {
    if (!o->key) return REDLOCK_ERR_KEY;
    *klen = o->key_len ? o->key_len : strlen(o->key);
    if (*klen == 0) return REDLOCK_ERR_KEY;
    if (*klen > REDLOCK_MAX_KEY) return REDLOCK_ERR_KEY_TOO_LONG;
    /* no lock may stand on a fenced lock's counter */
    if (*klen >= REDLOCK__FENCE_PREFIX_LEN && memcmp(o->key, REDLOCK_FENCE_PREFIX, REDLOCK__FENCE_PREFIX_LEN) == 0)
        return REDLOCK_ERR_KEY;
    return REDLOCK_OK;
}

/* The options for a lock on client c: OK, or the error lock_init returns.
   *klen, *llen and *olen: the key's, the label's and the owner's lengths. */
static int redlock__check_opts(const redlock_client *c, const redlock_lock_opts *o, size_t *klen, size_t *llen,
                               size_t *olen) {
    int rc = redlock__check_key(o, klen), j, legacy = 0;
    if (rc != REDLOCK_OK) return rc;
    if (o->ttl_ms <= 0 || o->ttl_ms > REDLOCK__MAX_MS) return REDLOCK_ERR_TTL;
    *llen = o->label ? strlen(o->label) : 0;
    if (*llen > REDLOCK_MAX_LABEL || !redlock__printable(o->label, *llen)) return REDLOCK_ERR_INVALID;
    if (!redlock__ms_ok(o->renew_every_ms) || !redlock__ms_ok(o->max_hold_ms) || o->max_extensions < 0 ||
        !redlock__ms_ok(o->retry_delay_ms) || !redlock__ms_ok(o->wait_ms) || o->retry_jitter_ms > REDLOCK__MAX_MS ||
        (o->watchdog && o->renew_every_ms >= o->ttl_ms))
        return REDLOCK_ERR_INVALID;
    if (o->access != REDLOCK_ACCESS_DEFAULT &&
        ((o->access != REDLOCK_ACCESS_SHARED && o->access != REDLOCK_ACCESS_EXCLUSIVE && o->access != REDLOCK_ACCESS_UPDATE) ||
         o->reentrant || o->fence))
        return REDLOCK_ERR_INVALID;
    *olen = o->reentrant && o->owner ? (o->owner_len ? o->owner_len : strlen(o->owner)) : 0;
    /* (the owner travels in environments and hash fields) */
    if (o->reentrant && o->owner && (*olen == 0 || *olen > REDLOCK_MAX_OWNER || !redlock__printable(o->owner, *olen)))
        return REDLOCK_ERR_INVALID;
    /* a kind whose acquire needs scripts cannot win on nodes configured LEGACY */
    if (!redlock__kind_needs_scripts(&redlock__kinds[redlock__kind_index(o->reentrant, o->fence, o->access)],
                                     REDLOCK__S_ACQUIRE))
        return REDLOCK_OK;
    for (j = 0; j < c->_cfg.node_count; j++) legacy += c->_cfg.mode[j] == REDLOCK_MODE_LEGACY;
    return c->_cfg.node_count - legacy < redlock__quorum(c) ? REDLOCK_ERR_NO_SCRIPTING : REDLOCK_OK;
}

/* The lock's strings (redlock__strings_size) and kind, from the options. */
static void redlock__set_strings(redlock_lock *lk, char *strings, const redlock_lock_opts *o, size_t klen, size_t llen,
                                 size_t olen) {
    memcpy(strings, o->key, klen);
    memset(strings + klen, 0, redlock__strings_size(klen, llen, o->reentrant != 0, o->fence != 0) - klen); /* no token yet */
    if (llen) memcpy(strings + klen, o->label, llen);
    lk->_key = strings;
    lk->_key_len = (uint32_t)klen;
    if (o->reentrant) {
        lk->_kind |= REDLOCK__K_REENTRANT;
        lk->_owner_default = !o->owner;
        if (o->owner) { /* otherwise made by each acquire */
            memcpy(redlock__owner(lk), o->owner, olen);
            lk->_owner_len = (uint8_t)olen;
        }
    }
    if (o->fence) lk->_kind |= REDLOCK__K_FENCED;
    lk->_kind |= (uint8_t)((o->access << REDLOCK__K_ACCESS_SHIFT) | (o->access << REDLOCK__K_OPTS_ACCESS_SHIFT));
    /* by default only a fenced lock refuses: its counters never expire, and
       its users asked for the guarantee that outlives mutual exclusion */
    if (o->refuse_evicting > 0 || (o->refuse_evicting == 0 && o->fence)) lk->_kind |= REDLOCK__K_REFUSE_EVICTING;
    if (redlock__fenced(lk)) {
        memcpy(redlock__counter(lk), REDLOCK_FENCE_PREFIX, REDLOCK__FENCE_PREFIX_LEN);
        memcpy(redlock__counter(lk) + REDLOCK__FENCE_PREFIX_LEN, o->key, klen);
    }
}

/* The lock's settings: the options', else the client's, else the defaults. */
static void redlock__set_settings(redlock_lock *lk, const redlock_client *c, const redlock_lock_opts *o) {
    int64_t jitter_ms = o->retry_jitter_ms ? o->retry_jitter_ms : c->_cfg.retry_jitter_ms;
    lk->_ttl_ms = o->ttl_ms;
    lk->_watchdog = o->watchdog != 0;
    lk->_renew_every_us = (o->renew_every_ms ? o->renew_every_ms : (o->ttl_ms / 3 > 0 ? o->ttl_ms / 3 : 1)) * 1000;
    lk->_max_hold_us = o->max_hold_ms * 1000;
    lk->_max_extensions = o->max_extensions;
    lk->_retry_count = o->retry_count ? o->retry_count : c->_cfg.retry_count;
    if (lk->_retry_count < 0) lk->_retry_count = 0;
    lk->_retry_delay_us = (o->retry_delay_ms ? o->retry_delay_ms : c->_cfg.retry_delay_ms) * 1000;
    lk->_retry_jitter_us = jitter_ms < 0 ? 0 : jitter_ms * 1000; /* negative: none (clamped before scaling) */
    lk->_wait_us = (o->wait_ms ? o->wait_ms : c->_cfg.wait_ms) * 1000;
    lk->_on_result = o->on_result;
    lk->_user = o->user;
}

REDLOCK_API int redlock_lock_init(redlock_lock *lk, redlock_client *c, const redlock_lock_opts *o) {
    size_t klen = 0, olen = 0, llen = 0;
    char *strings;
    int again, rc;
    if (!lk || !o) return REDLOCK_ERR_INVALID;
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_ERR_DETACHED;
    rc = redlock__check_opts(c, o, &klen, &llen, &olen);
    if (rc != REDLOCK_OK) return rc;
    /* initialising a lock that is still initialised on this client: forget
       the old one first (otherwise the table would link the lock to itself);
       a new one needs room in the table first */
    again = redlock__filed(c, lk);
    if (!again && !redlock__room(c)) return REDLOCK_ERR_NOMEM;
    if (again) redlock_lock_deinit(lk);
    strings = (char *)REDLOCK_MALLOC(redlock__strings_size(klen, llen, o->reentrant != 0, o->fence != 0));
    if (!strings) return REDLOCK_ERR_NOMEM;
    memset(lk, 0, sizeof *lk);
    redlock__set_strings(lk, strings, o, klen, llen, olen);
    lk->_client = c;
    lk->_magic = REDLOCK__MAGIC;
    redlock__set_settings(lk, c, o);
    lk->_deadline = REDLOCK_NO_DEADLINE;
    redlock__file(c, lk);
    return REDLOCK_OK;
}

REDLOCK_API void redlock_lock_deinit(redlock_lock *lk) {
    redlock_client *c;
    int release_waits;
    int64_t now;
    if (!redlock__usable(lk)) return;
    c = lk->_client;
    /* it reads LOST, but no timer call has reported it: a lost hold */
    if (lk->_state == REDLOCK_STATE_HELD && redlock__now(c) >= lk->_valid_until)
        redlock__count_lost(c, redlock__expiry_reason(lk));
    /* and no timer call has sent the cleanup after LOST yet:
       send it now, or a reentrant entry stays for as long as the owner's
       other holds keep the hash (nothing is reported) */
    if (!lk->_busy && lk->_state == REDLOCK_STATE_HELD && (now = redlock__now(c)) >= lk->_valid_until) {
        int alive = 1;
        redlock__enter(c);
        lk->_busy = 1; /* an answer inside send is only recorded */
        lk->_alive = &alive;
        lk->_hold = REDLOCK__HOLD_IDLE;
        redlock__set_state(lk, REDLOCK_STATE_LOST);
        lk->_lost_status = redlock__expiry_reason(lk);
        lk->_phase_op = REDLOCK_OP_LOST;
        redlock__round(lk, REDLOCK__PH_CLEANUP, now);
        redlock__flush(lk, now, &alive);
        if (alive) {
            lk->_busy = 0;
            lk->_alive = NULL;
        }
        redlock__leave(c);
        if (!alive) return; /* send deinitialised it (or initialised it again) */
    }
    redlock__listen(lk, 0); /* while the key still reads */
    redlock__unfile(c, lk);
    release_waits = redlock__waiting(lk) && lk->_phase == REDLOCK__PH_RELEASE;
    if (redlock__has_turn(lk)) redlock__turn_over(lk, 0, redlock__now(c));
    redlock__unschedule(lk);
    if (release_waits) {
        /* a release still waiting for its turn goes out now, unanswered,
           as it would have without the wait: the key is not kept */
        int alive = 1, *outer = lk->_alive; /* (deinit inside the lock's own callback: its drive's) */
        now = redlock__now(c);
        lk->_phase = REDLOCK__PH_NONE;
        lk->_alive = &alive;
        redlock__rebase(lk, now);
        redlock__flush(lk, now, &alive);
        if (!alive) { /* deinitialised inside send */
            if (outer) *outer = 0;
            return;
        }
        lk->_alive = outer;
    }
    redlock__detach(lk);
    redlock__enter(c);
    redlock__leave(c);
}

/* Held, but the validity has run out: the next drive reports it LOST. */
static int redlock__ran_out(const redlock_lock *lk) {
    return lk->_state == REDLOCK_STATE_HELD && redlock__now(lk->_client) >= lk->_valid_until;
}

/* A lock whose validity ran out with no timer call since is reported LOST
   (on_result) before a call acts on it, so that the call sees what
   redlock_lock_state() said. *now: the clock for the call that follows.
   Returns 0 if the callback deinitialised the lock and did not initialise
   it again on this client (its memory may be freed: it is not read). */
static int redlock__settle(redlock_lock *lk, int64_t *now) {
    redlock_client *c = lk->_client;
    *now = redlock__now(c);
    if (!lk->_busy && lk->_state == REDLOCK_STATE_HELD && *now >= lk->_valid_until) {
        int alive;
        redlock__enter(c);
        alive = redlock__drive(lk);
        redlock__leave(c);
        if (!alive && !redlock__filed(c, lk)) return 0; /* filed again: the call acts on the new lock */
        *now = redlock__now(c); /* the callbacks took their time */
    }
    return 1;
}

/* ---- may I start X now: one table of operation x activity ---- */

/* What a lock is doing, as the API sees it. */
enum { REDLOCK__ACT_IDLE,        /* IDLE or LOST, nothing running */
       REDLOCK__ACT_FOLLOWUP,    /* IDLE or LOST: the undo or cleanup of the last token still runs */
       REDLOCK__ACT_ACQUIRING,
       REDLOCK__ACT_RELEASING,
       REDLOCK__ACT_HELD,        /* held, nothing running */
       REDLOCK__ACT_RENEWING,    /* held: a watchdog renewal runs */
       REDLOCK__ACT_EXTENDING,   /* held: the user's extend runs */
       REDLOCK__ACT_UPGRADING,   /* held: an upgrade waits or runs */
       REDLOCK__ACT_DOWNGRADING, /* held: a downgrade's round runs */
       REDLOCK__ACT_FOLLOWING,   /* held: a downgrade's stragglers or a failed upgrade's settle run */
       REDLOCK__ACT_COUNT };
/* The calls that start an operation. */
enum { REDLOCK__CALL_ACQUIRE, REDLOCK__CALL_RELEASE, REDLOCK__CALL_EXTEND, REDLOCK__CALL_UPGRADE,
       REDLOCK__CALL_DOWNGRADE, REDLOCK__CALL_ADOPT, REDLOCK__CALL_COUNT };

static int redlock__activity(const redlock_lock *lk) {
    switch (lk->_state) {
    case REDLOCK_STATE_ACQUIRING: return REDLOCK__ACT_ACQUIRING;
    case REDLOCK_STATE_RELEASING: return REDLOCK__ACT_RELEASING;
    case REDLOCK_STATE_HELD: break;
    default: return lk->_phase == REDLOCK__PH_NONE ? REDLOCK__ACT_IDLE : REDLOCK__ACT_FOLLOWUP;
    }
    if (lk->_hold == REDLOCK__HOLD_UPGRADE) return REDLOCK__ACT_UPGRADING; /* (perhaps behind a renewal) */
    switch (lk->_phase) {
    case REDLOCK__PH_NONE: return REDLOCK__ACT_HELD;
    case REDLOCK__PH_EXTEND: return redlock__user_extending(lk) ? REDLOCK__ACT_EXTENDING : REDLOCK__ACT_RENEWING;
    case REDLOCK__PH_DOWNGRADE: return REDLOCK__ACT_DOWNGRADING;
    default: return REDLOCK__ACT_FOLLOWING;
    }
}

/* May the call start its operation now: OK, or the status it returns.
   A release overtakes what runs (that operation ends CANCELLED); an
   upgrade may wait behind a renewal; a downgrade only starts when
   nothing runs; an adopt waits for the old token's undo or cleanup. */
static int redlock__may(const redlock_lock *lk, int call) {
#define REDLOCK__NH REDLOCK_ERR_NOT_HELD
#define REDLOCK__AH REDLOCK_ERR_ALREADY_HELD
#define REDLOCK__BY REDLOCK_ERR_BUSY
    static const signed char may[REDLOCK__CALL_COUNT][REDLOCK__ACT_COUNT] = {
        /*            IDLE         FOLLOWUP     ACQUIRING    RELEASING    HELD         RENEWING     EXTENDING    UPGRADING    DOWNGRADING  FOLLOWING */
        /* acquire */ { 0,           0,           REDLOCK__BY, REDLOCK__BY, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH },
        /* release */ { REDLOCK__NH, REDLOCK__NH, 0,           REDLOCK__BY, 0,           0,           0,           0,           0,           0 },
        /* extend */  { REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, 0,           REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, 0 },
        /* upgrade */ { REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, 0,           0,           REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, 0 },
        /* downgrade */ { REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, REDLOCK__NH, 0,         REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, REDLOCK__BY },
        /* adopt */   { 0,           REDLOCK__BY, REDLOCK__BY, REDLOCK__BY, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH, REDLOCK__AH }
    };
#undef REDLOCK__NH
#undef REDLOCK__AH
#undef REDLOCK__BY
    return may[call][redlock__activity(lk)];
}

/* Every call on a lock starts here: INVALID for NULL, DETACHED for a lock
   not initialised (or deinitialised by the LOST report redlock__settle
   makes first); *now: the clock for the call. */
static int redlock__begin(redlock_lock *lk, int64_t *now) {
    if (!lk) return REDLOCK_ERR_INVALID;
    if (!redlock__usable(lk) || !redlock__settle(lk, now)) return REDLOCK_ERR_DETACHED;
    return REDLOCK_OK;
}

/* Runs the lock after a call changed it, and hands the timer its deadline
   (the drive may deinitialise the lock: its client is read before). */
static int redlock__run(redlock_lock *lk) {
    redlock_client *c = lk->_client;
    redlock__enter(c);
    redlock__drive(lk);
    redlock__leave(c);
    return REDLOCK_OK;
}

REDLOCK_API int redlock_acquire(redlock_lock *lk) {
    redlock_client *c;
    int64_t now;
    int rc = redlock__begin(lk, &now);
    if (rc == REDLOCK_OK) rc = redlock__may(lk, REDLOCK__CALL_ACQUIRE);
    if (rc != REDLOCK_OK) return rc;
    c = lk->_client;
    if (c->_cb.random(c->_user, redlock__fresh(lk), REDLOCK_TOKEN_LEN / 2) != 0) return REDLOCK_ERR_RANDOM;
    if (lk->_owner_default && !redlock__default_owner_ready(lk)) return REDLOCK_ERR_RANDOM;
    redlock__set_state(lk, REDLOCK_STATE_ACQUIRING);
    REDLOCK__COUNT(c, acquires);
    redlock__set_access(lk, redlock__opts_access(lk)); /* a downgrade or an upgrade changed the last hold only */
    lk->_lost_status = 0;
    lk->_attempt = 0;
    lk->_retries = lk->_retry_count;
    lk->_try = REDLOCK__TRY_RETRYING;
    lk->_woken = lk->_handoff = 0;
    lk->_op_start = now;
    lk->_next_at = now;  /* the first attempt: now, or when a running undo is done */
    lk->_mark.wake_at = now;
    redlock__enter(c);
    if (lk->_phase == REDLOCK__PH_NONE) redlock__start_attempt(lk, now);
    redlock__drive(lk);
    redlock__leave(c);
    return REDLOCK_OK;
}

REDLOCK_API int redlock_release(redlock_lock *lk) {
    redlock_client *c;
    int64_t now;
    int rc = redlock__begin(lk, &now);
    if (rc == REDLOCK_OK) rc = redlock__may(lk, REDLOCK__CALL_RELEASE);
    if (rc != REDLOCK_OK) return rc;
    c = lk->_client;
    if (lk->_state == REDLOCK_STATE_ACQUIRING) {
        lk->_cancel_op = REDLOCK_OP_ACQUIRE;
        lk->_fence = 0; /* an attempt's count, not a fence */
        redlock__listen(lk, 0);
    } else if (lk->_hold == REDLOCK__HOLD_UPGRADE) {
        lk->_cancel_op = REDLOCK_OP_UPGRADE;
        lk->_hold = REDLOCK__HOLD_IDLE;
    } else if (redlock__user_extending(lk)) {
        lk->_cancel_op = REDLOCK_OP_EXTEND;
        lk->_hold = REDLOCK__HOLD_IDLE;
    } else if (lk->_phase == REDLOCK__PH_DOWNGRADE) {
        lk->_cancel_op = REDLOCK_OP_DOWNGRADE;
    }
    redlock__set_state(lk, REDLOCK_STATE_RELEASING);
    lk->_op_start = now;
    lk->_phase_op = REDLOCK_OP_RELEASE;
    redlock__enter(c);
    redlock__round(lk, REDLOCK__PH_RELEASE, now);
    redlock__drive(lk); /* (which may deinitialise the lock: its client is read before) */
    redlock__leave(c);
    return REDLOCK_OK;
}

REDLOCK_API int redlock_extend(redlock_lock *lk, int64_t ttl_ms) {
    redlock_client *c;
    int64_t now;
    int rc = redlock__begin(lk, &now);
    if (rc == REDLOCK_OK && (ttl_ms < 0 || ttl_ms > REDLOCK__MAX_MS)) rc = REDLOCK_ERR_TTL;
    if (rc == REDLOCK_OK) rc = redlock__may(lk, REDLOCK__CALL_EXTEND);
    if (rc != REDLOCK_OK) return rc;
    c = lk->_client;
    lk->_op_start = now;
    redlock__enter(c);
    redlock__start_extend(lk, ttl_ms ? ttl_ms : lk->_ttl_ms, 1, now);
    redlock__drive(lk);
    redlock__leave(c);
    return REDLOCK_OK;
}

static int redlock__hex(char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* An upgrade or a downgrade may start: NOT_HELD first, then INVALID for a
   hold of another mode, then BUSY. */
static int redlock__may_change_mode(const redlock_lock *lk, int call) {
    int rc = redlock__may(lk, call);
    redlock_access a = redlock__access(lk);
    if (rc == REDLOCK_ERR_NOT_HELD) return rc;
    if (call == REDLOCK__CALL_UPGRADE ? a != REDLOCK_ACCESS_UPDATE
                                      : a != REDLOCK_ACCESS_EXCLUSIVE && a != REDLOCK_ACCESS_UPDATE)
        return REDLOCK_ERR_INVALID;
    return rc;
}

REDLOCK_API int redlock_upgrade(redlock_lock *lk) {
    int64_t now;
    int rc = redlock__begin(lk, &now);
    if (rc == REDLOCK_OK) rc = redlock__may_change_mode(lk, REDLOCK__CALL_UPGRADE);
    if (rc != REDLOCK_OK) return rc;
    lk->_hold = REDLOCK__HOLD_UPGRADE;
    lk->_attempt = 0;
    lk->_retries = lk->_retry_count;
    lk->_op_start = now;
    lk->_next_at = now; /* the first attempt: now, or when a running renewal is done */
    return redlock__run(lk); /* which starts it (or ends it at once: the hold's cap) */
}

REDLOCK_API int redlock_downgrade(redlock_lock *lk) {
    redlock_client *c;
    int64_t now;
    int rc = redlock__begin(lk, &now);
    if (rc == REDLOCK_OK) rc = redlock__may_change_mode(lk, REDLOCK__CALL_DOWNGRADE);
    if (rc != REDLOCK_OK) return rc;
    c = lk->_client;
    redlock__set_access(lk, REDLOCK_ACCESS_SHARED); /* a reader from now on, whatever the nodes say */
    lk->_op_start = now;
    lk->_phase_op = REDLOCK_OP_DOWNGRADE;
    redlock__enter(c);
    redlock__round(lk, REDLOCK__PH_DOWNGRADE, now);
    redlock__drive(lk);
    redlock__leave(c);
    return REDLOCK_OK;
}

/* A token as redlock_lock_token() gives it, whose label fits the lock's
   own: a label (printable, no space), then the hex digits. */
static int redlock__token_ok(const redlock_lock *lk, const char *token, size_t len) {
    size_t j, label_len;
    if (len < REDLOCK_TOKEN_LEN || len > redlock__token_room(lk)) return 0;
    label_len = len - REDLOCK_TOKEN_LEN;
    for (j = 0; j < label_len; j++)
        if ((unsigned char)token[j] <= ' ' || (unsigned char)token[j] >= 127) return 0;
    for (; j < len; j++)
        if (!redlock__hex(token[j])) return 0;
    return 1;
}

REDLOCK_API int redlock_lock_adopt(redlock_lock *lk, const char *token, int64_t valid_ms) {
    int64_t now;
    size_t len;
    int i, rc = redlock__begin(lk, &now);
    if (rc != REDLOCK_OK) return rc;
    if (!token || !redlock__ms_ok(valid_ms)) return REDLOCK_ERR_INVALID;
    len = strlen(token);
    if (!redlock__token_ok(lk, token, len)) return REDLOCK_ERR_INVALID;
    /* a running undo or cleanup still needs the old token */
    rc = redlock__may(lk, REDLOCK__CALL_ADOPT);
    if (rc != REDLOCK_OK) return rc;
    if (lk->_owner_default) {
        if (!redlock__default_owner_ready(lk)) return REDLOCK_ERR_RANDOM;
        redlock__take_default_owner(lk);
    }
    memcpy(redlock__token(lk), token, len + 1);
    redlock__set_state(lk, REDLOCK_STATE_HELD);
    redlock__set_access(lk, redlock__opts_access(lk));
    lk->_validity_unknown = valid_ms == 0;
    lk->_valid_until = valid_ms ? now + valid_ms * 1000 : REDLOCK_NO_DEADLINE; /* nothing to run out yet */
    lk->_mark.acquired_at = lk->_op_start = now;
    lk->_attempt = 0;
    lk->_extensions = lk->_capped = lk->_renew_status = lk->_lost_status = 0;
    lk->_fence = 0; /* the holder that took it knows it; this handle does not */
    lk->_next_at = now; /* the watchdog renews at once: the key's time left is not ours to know */
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        lk->_node[i].seq = 0;
        redlock__set_until(lk, i, 0);
        lk->_node[i].flags = REDLOCK__F_LIFE; /* and nothing clobbered: a new token */
        lk->_node[i].progress = REDLOCK__N_IDLE;
    }
    return redlock__run(lk);
}

/* r NULL: the node failed with status err */
static void redlock__input(redlock_client *c, redlock_tag tag, const redlock_reply *r, int err) {
    redlock_lock *lk;
    uint32_t seq = redlock__tag_seq(tag);
    int node = redlock_tag_node(tag);
    if (!c || c->_magic != REDLOCK__MAGIC || seq == 0 || node >= c->_cfg.node_count) return;
    lk = redlock__find(c, redlock__tag_lock_id(tag));
    if (!lk || lk->_node[node].seq != seq || !redlock__n_awaited(&lk->_node[node])) return; /* stale */
    redlock__enter(c);
    redlock__answer(lk, node, r, err < 0 ? err : REDLOCK_ERR_TRANSPORT, redlock__now(c));
    redlock__drive(lk);
    redlock__leave(c);
}

REDLOCK_API void redlock_on_reply(redlock_client *c, redlock_tag tag, const redlock_reply *reply) {
    redlock__input(c, tag, reply, REDLOCK_ERR_PROTOCOL); /* no reply at all: a malformed one */
}

REDLOCK_API int redlock_lock_wake(redlock_lock *lk) {
    redlock_client *c;
    if (!lk) return REDLOCK_ERR_INVALID;
    if (!redlock__usable(lk)) return REDLOCK_ERR_DETACHED;
    if (lk->_state != REDLOCK_STATE_ACQUIRING || lk->_try == REDLOCK__TRY_TIMING_OUT) return REDLOCK_OK;
    /* the first notification since the last attempt started (section 14's
       hand-off time; one heard during a notification's attempt: see
       redlock__attempt_failed) */
    if (!lk->_woken && !lk->_handoff) lk->_arg.woken_at = redlock__now(lk->_client);
    lk->_woken = 1; /* a running attempt may lose to the holder that just left: the next one early */
    if (lk->_phase == REDLOCK__PH_ACQUIRE || lk->_phase == REDLOCK__PH_FENCE) return REDLOCK_OK;
    c = lk->_client;
    redlock__enter(c);
    redlock__drive(lk); /* after the undo, if one runs, and the rate limit */
    redlock__leave(c);
    return REDLOCK_OK;
}

REDLOCK_API void redlock_on_error(redlock_client *c, redlock_tag tag, int status) {
    redlock__input(c, tag, NULL, status);
}

REDLOCK_API void redlock_on_timer(redlock_client *c) {
    redlock_lock *lk;
    int64_t now;
    if (!c || c->_magic != REDLOCK__MAGIC) return;
    redlock__enter(c);
    c->_armed = REDLOCK_NO_DEADLINE; /* the timer that called us has fired */
    now = redlock__now(c);
    c->_tick++;
    /* the due locks, earliest first, each driven once: it waits parked
       (so that a lock still due after its turn does not come round again)
       until its drive files it under its next deadline */
    while ((lk = c->_heap) != NULL && lk->_deadline <= now) {
        redlock__park(lk);
        if (lk->_tick == c->_tick) continue;
        lk->_tick = c->_tick;
        redlock__drive(lk);
    }
    while ((lk = c->_parked) != NULL) redlock__schedule(lk, lk->_deadline);
    /* a held lock whose round still waits is told LOST when its validity ends */
    while ((lk = c->_waiting) != NULL && lk->_deadline < REDLOCK__IN_LINE && lk->_deadline <= now &&
           lk->_tick != c->_tick) {
        lk->_tick = c->_tick;
        redlock__drive(lk);
    }
    /* free turns go to the rounds waiting, in order: each starts now */
    while (c->_rounds < c->_window && (lk = c->_waiting) != NULL) {
        int64_t t = redlock__now(c);
        redlock__unschedule(lk);
        lk->_tick = c->_tick;
        if (redlock__capped_in_line(lk, t)) { /* the drive ends it (HOLD_LIMIT) */
            redlock__drive(lk);
            continue;
        }
        c->_rounds++;
        redlock__rebase(lk, t);
        redlock__drive(lk);
    }
    redlock__leave(c);
}

REDLOCK_API int64_t redlock_next_deadline(const redlock_client *c) {
    int64_t d;
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_NO_DEADLINE;
    d = c->_heap ? c->_heap->_deadline : REDLOCK_NO_DEADLINE;
    if (c->_parked && c->_parked->_deadline < d) d = c->_parked->_deadline; /* asked inside on_timer */
    if (c->_waiting && c->_rounds < c->_window && c->_turn_at < d)
        d = c->_turn_at; /* a turn is free: hand it on now */
    if (c->_waiting && c->_waiting->_deadline < REDLOCK__IN_LINE && c->_waiting->_deadline < d)
        d = c->_waiting->_deadline; /* a waiting held lock's validity ends */
    return d;
}

REDLOCK_API int redlock_client_stats(const redlock_client *c, redlock_stats *out) {
    if (!c || !out) return REDLOCK_ERR_INVALID;
    *out = c->_stats;
    return REDLOCK_OK;
}

REDLOCK_API void redlock_client_stats_reset(redlock_client *c) {
    uint32_t held;
    if (!c) return;
    held = c->_stats.held;
    memset(&c->_stats, 0, sizeof c->_stats);
    c->_stats.held = c->_stats.held_max = held;
}

REDLOCK_API int64_t redlock_histogram_quantile(const redlock_histogram *h, double q) {
    uint64_t rank, seen = 0;
    int b;
    if (!h || !h->count || !(q >= 0.0 && q <= 1.0)) return -1;
    rank = (uint64_t)(q * (double)h->count);
    if ((double)rank < q * (double)h->count) rank++; /* the ceiling */
    if (rank == 0) rank = 1;
    for (b = 0; b < REDLOCK_HISTOGRAM_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) break;
    }
    /* the bucket's last value, and never above the largest sample */
    if (b < REDLOCK_HISTOGRAM_BUCKETS - 1 && ((uint64_t)1 << b) - 1 < h->max_us) return (int64_t)(((uint64_t)1 << b) - 1);
    return (int64_t)h->max_us;
}

REDLOCK_API redlock_state redlock_lock_state(const redlock_lock *lk) {
    if (!redlock__usable(lk)) return REDLOCK_STATE_IDLE;
    return redlock__ran_out(lk) ? REDLOCK_STATE_LOST : (redlock_state)lk->_state;
}

REDLOCK_API int64_t redlock_lock_remaining_us(const redlock_lock *lk) {
    int64_t left;
    if (!redlock__usable(lk) || lk->_state != REDLOCK_STATE_HELD || lk->_validity_unknown) return 0;
    left = lk->_valid_until - redlock__now(lk->_client);
    return left > 0 ? left : 0;
}

REDLOCK_API int64_t redlock_lock_valid_until(const redlock_lock *lk) {
    return redlock__usable(lk) && lk->_state == REDLOCK_STATE_HELD && !lk->_validity_unknown ? lk->_valid_until : 0;
}

REDLOCK_API int redlock_lock_pending(const redlock_lock *lk) {
    return redlock__usable(lk) && lk->_phase != REDLOCK__PH_NONE;
}

/* Whether node i's answer, still owed, makes the core act again (see
   redlock_lock_followup). */
static int redlock__owed_answer_matters(const redlock_lock *lk, int i) {
    int st = lk->_node[i].step, scripted = lk->_client->_scripted[i];
    /* no release script seen there yet: a GET + DEL release needs the key's life from it */
    if (st == REDLOCK__ST_SET) return !(scripted & (1 << (redlock__kind_of(lk)->script[REDLOCK__S_RELEASE] - 1)));
    /* a fenced acquire's WAIT: a late win's write-back follows it */
    if (st == REDLOCK__ST_WAIT) return lk->_node[i].loops == REDLOCK__S_ACQUIRE && redlock__fenced(lk);
    switch (redlock__step_info_of(st)->then) {
    case REDLOCK__THEN_SCRIPT: return !(scripted & redlock__script_bit(lk, st)); /* NOSCRIPT, or no scripting at all, may come */
    case REDLOCK__THEN_LAST: return 0;
    default: return 1; /* PROBE, SETNX, GET, an acquire's GETSET, PTTL: a chain goes on */
    }
}

REDLOCK_API int redlock_lock_followup(const redlock_lock *lk) {
    int i;
    if (!redlock__usable(lk)) return 0;
    for (i = 0; i < lk->_client->_cfg.node_count; i++) {
        const redlock__node *n = &lk->_node[i];
        /* (a timed-out release's EVALSHA, still heard: its NOSCRIPT gets the EVAL) */
        if (redlock__n_done(n) && !(n->progress == REDLOCK__N_DONE_AWAITED && n->step == REDLOCK__ST_RELEASE)) continue;
        if (n->progress == REDLOCK__N_TO_SEND && lk->_phase != REDLOCK__PH_NONE) return 1; /* a step still to go out */
        if (redlock__n_awaited(n) && redlock__owed_answer_matters(lk, i)) return 1;
    }
    return 0;
}

REDLOCK_API int redlock_lock_waiting(const redlock_lock *lk) {
    return redlock__usable(lk) && lk->_state == REDLOCK_STATE_ACQUIRING && lk->_phase != REDLOCK__PH_ACQUIRE &&
           lk->_phase != REDLOCK__PH_FENCE && lk->_try != REDLOCK__TRY_TIMING_OUT;
}

REDLOCK_API int redlock_lock_lost_reason(const redlock_lock *lk) {
    if (!redlock__usable(lk)) return 0;
    if (redlock__ran_out(lk)) return redlock__expiry_reason(lk);
    return lk->_state == REDLOCK_STATE_LOST ? lk->_lost_status : 0;
}

REDLOCK_API const char *redlock_lock_token(const redlock_lock *lk) {
    return lk && lk->_magic == REDLOCK__MAGIC ? redlock__token(lk) : "";
}

REDLOCK_API const char *redlock_lock_owner(const redlock_lock *lk) {
    return lk && lk->_magic == REDLOCK__MAGIC && redlock__reentrant(lk) ? redlock__owner(lk) : "";
}

REDLOCK_API const char *redlock_lock_key(const redlock_lock *lk, size_t *len) {
    int ok = lk && lk->_magic == REDLOCK__MAGIC;
    if (len) *len = ok ? lk->_key_len : 0;
    return ok ? lk->_key : "";
}

REDLOCK_API redlock_access redlock_lock_access(const redlock_lock *lk) {
    if (!lk || lk->_magic != REDLOCK__MAGIC) return REDLOCK_ACCESS_DEFAULT;
    return redlock_lock_state(lk) == REDLOCK_STATE_HELD ? redlock__access(lk) : redlock__opts_access(lk);
}

REDLOCK_API int64_t redlock_lock_fence(const redlock_lock *lk) {
    return lk && lk->_magic == REDLOCK__MAGIC && lk->_state != REDLOCK_STATE_ACQUIRING ? lk->_fence : 0;
}

REDLOCK_API redlock_mode redlock_node_mode(const redlock_client *c, int node) {
    if (!c || c->_magic != REDLOCK__MAGIC || node < 0 || node >= c->_cfg.node_count) return REDLOCK_MODE_AUTO;
    if (c->_caps[node] & REDLOCK__CAP_LEGACY) return REDLOCK_MODE_LEGACY;
    return c->_cfg.mode[node];
}

REDLOCK_API int redlock_tag_node(redlock_tag tag) { return (int)(tag & 0xFF); }

REDLOCK_API int redlock_node_set_evicts(redlock_client *c, int node, redlock_evicts evicts) {
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_ERR_DETACHED;
    if (node < 0 || node >= c->_cfg.node_count || (int)evicts < REDLOCK_EVICTS_NONE || (int)evicts > REDLOCK_EVICTS_ALL)
        return REDLOCK_ERR_INVALID;
    if (c->_evicts[node] == (uint8_t)evicts) return REDLOCK_OK; /* each connection says it again: told once */
    c->_evicts[node] = (uint8_t)evicts;
    if (c->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_NODE_EVICTS, 0, node, 0, 0);
        ev.mode = (int)evicts;
        c->_cb.on_event(c->_user, &ev);
    }
    return REDLOCK_OK;
}

REDLOCK_API redlock_evicts redlock_node_evicts(const redlock_client *c, int node) {
    if (!c || c->_magic != REDLOCK__MAGIC || node < 0 || node >= c->_cfg.node_count) return REDLOCK_EVICTS_NONE;
    return (redlock_evicts)c->_evicts[node];
}

/* Node `node` may have lost keys at `at` (why): kept if later than what
   the client knew, and reported. */
static void redlock__restarted(redlock_client *c, int node, int64_t at, redlock_restart why, int64_t now) {
    if (at <= c->_restart_at[node]) return;
    c->_restart_at[node] = at;
    c->_restart_why[node] = (uint8_t)why;
    if (c->_cb.on_event) {
        redlock_event ev = redlock__event_of(REDLOCK_EV_NODE_RESTARTED, 0, node, REDLOCK_ERR_RESTARTED, 0);
        ev.mode = (int)why;
        ev.elapsed_us = now - at;
        c->_cb.on_event(c->_user, &ev);
    }
}

REDLOCK_API int redlock_node_set_life(redlock_client *c, int node, const redlock_node_life *life) {
    uint64_t id = 0;
    int64_t now;
    size_t k;
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_ERR_DETACHED;
    if (node < 0 || node >= c->_cfg.node_count || !life) return REDLOCK_ERR_INVALID;
    now = c->_cb.now_us(c->_user);
    if (life->run_id[0]) { /* FNV-1a of the run_id; 0 means none */
        id = UINT64_C(14695981039346656037);
        for (k = 0; k < sizeof life->run_id && life->run_id[k]; k++) id = (id ^ (uint8_t)life->run_id[k]) * UINT64_C(1099511628211);
        id += !id;
    }
    if (id && c->_run_id[node] && id != c->_run_id[node]) {
        /* another process: when it took over is not known, so from now */
        redlock__restarted(c, node, now, REDLOCK_RESTART_RUN_ID, now);
    } else if (!(id && id == c->_run_id[node]) && !life->durable && life->uptime_s >= 0) {
        int64_t up = life->uptime_s < REDLOCK__MAX_MS / 1000 ? life->uptime_s : REDLOCK__MAX_MS / 1000;
        /* uptime_in_seconds is the difference of two whole-second clocks:
           up to a second more than the time really up; one second less is
           at or after the start */
        redlock__restarted(c, node, now - (up > 0 ? up - 1 : 0) * 1000000, REDLOCK_RESTART_UPTIME, now);
    }
    if (id) c->_run_id[node] = id;
    return REDLOCK_OK;
}

REDLOCK_API int redlock_node_failed_over(redlock_client *c, int node, int64_t ago_ms) {
    int64_t now;
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_ERR_DETACHED;
    if (node < 0 || node >= c->_cfg.node_count || ago_ms < 0) return REDLOCK_ERR_INVALID;
    now = c->_cb.now_us(c->_user);
    if (ago_ms > REDLOCK__MAX_MS) ago_ms = REDLOCK__MAX_MS;
    /* the run_id last told stays: a server other than that one later is a
       restart then, whatever this call said (it may come while the old
       primary still answers, or be a late word of an earlier failover) */
    redlock__restarted(c, node, now - ago_ms * 1000, REDLOCK_RESTART_FAILOVER, now);
    return REDLOCK_OK;
}

REDLOCK_API int redlock_node_set_sharded(redlock_client *c, int node, int on) {
    if (!c || c->_magic != REDLOCK__MAGIC) return REDLOCK_ERR_DETACHED;
    if (node < 0 || node >= c->_cfg.node_count) return REDLOCK_ERR_INVALID;
    c->_sharded[node] = on != 0;
    return REDLOCK_OK;
}

REDLOCK_API int redlock_node_sharded(const redlock_client *c, int node) {
    return c && c->_magic == REDLOCK__MAGIC && node >= 0 && node < c->_cfg.node_count && c->_sharded[node];
}

REDLOCK_API int64_t redlock_lock_restart_bound_us(const redlock_lock *lk) {
    return redlock__usable(lk) ? redlock__restart_bound_us(lk) : 0;
}

REDLOCK_API int64_t redlock_node_restarted_at(const redlock_client *c, int node, redlock_restart *why) {
    int ok = c && c->_magic == REDLOCK__MAGIC && node >= 0 && node < c->_cfg.node_count;
    if (why) *why = ok ? (redlock_restart)c->_restart_why[node] : REDLOCK_RESTART_NONE;
    return ok ? c->_restart_at[node] : INT64_MIN;
}

/* The value of INFO's line "name:value", or NULL; *vlen its length. */
static const char *redlock__info_field(const char *s, size_t len, const char *name, size_t *vlen) {
    size_t nl = strlen(name), i = 0;
    while (i < len) {
        const char *eol = (const char *)memchr(s + i, '\n', len - i);
        size_t end = eol ? (size_t)(eol - s) : len, e = end;
        if (e > i && s[e - 1] == '\r') e--;
        if (e - i > nl && memcmp(s + i, name, nl) == 0 && s[i + nl] == ':') {
            *vlen = e - i - nl - 1;
            return s + i + nl + 1;
        }
        i = end + 1;
    }
    return NULL;
}

REDLOCK_API int redlock_info_evicts(const char *info, size_t len, char *policy, size_t cap) {
    const char *p, *m;
    size_t plen = 0, mlen = 0;
    if (policy && cap) policy[0] = 0;
    if (!info) return -1;
    p = redlock__info_field(info, len, "maxmemory_policy", &plen);
    if (!p) return -1;
    if (policy && cap) {
        size_t k = plen < cap - 1 ? plen : cap - 1;
        memcpy(policy, p, k);
        policy[k] = 0;
    }
    m = redlock__info_field(info, len, "maxmemory", &mlen);
    if (plen == 10 && memcmp(p, "noeviction", 10) == 0) return REDLOCK_EVICTS_NONE;
    if (m && mlen == 1 && m[0] == '0') return REDLOCK_EVICTS_NONE; /* no limit: nothing is evicted */
    if (redlock__starts(p, plen, "allkeys-")) return REDLOCK_EVICTS_ALL;
    if (redlock__starts(p, plen, "volatile-")) return REDLOCK_EVICTS_VOLATILE;
    return -1;
}

REDLOCK_API int redlock_info_life(const char *info, size_t len, redlock_node_life *life) {
    const char *p;
    size_t plen = 0, k;
    int found = 0;
    if (!life) return -1;
    life->run_id[0] = 0;
    life->uptime_s = -1;
    life->durable = 0;
    life->aof = 0;
    if (!info) return -1;
    p = redlock__info_field(info, len, "aof_enabled", &plen);
    life->aof = p && plen == 1 && p[0] == '1';
    p = redlock__info_field(info, len, "run_id", &plen);
    if (p && plen > 0 && plen < sizeof life->run_id) {
        for (k = 0; k < plen && p[k] > ' ' && p[k] < 127; k++) life->run_id[k] = p[k];
        life->run_id[k] = 0;
        found = k == plen;
        if (!found) life->run_id[0] = 0;
    }
    p = redlock__info_field(info, len, "uptime_in_seconds", &plen);
    if (p && plen > 0 && plen < 19) {
        int64_t v = 0;
        for (k = 0; k < plen && p[k] >= '0' && p[k] <= '9'; k++) v = v * 10 + (p[k] - '0');
        if (k == plen) {
            life->uptime_s = v;
            found = 1;
        }
    }
    return found ? 0 : -1;
}

REDLOCK_API const char *redlock_release_script(void) { return redlock__release_lua; }
REDLOCK_API const char *redlock_extend_script(void) { return redlock__extend_lua; }
REDLOCK_API const char *redlock_reentrant_acquire_script(void) { return redlock__racquire_lua; }
REDLOCK_API const char *redlock_reentrant_release_script(void) { return redlock__rrelease_lua; }
REDLOCK_API const char *redlock_reentrant_extend_script(void) { return redlock__rextend_lua; }
REDLOCK_API const char *redlock_fence_acquire_script(void) { return redlock__facquire_lua; }
REDLOCK_API const char *redlock_fence_write_back_script(void) { return redlock__fence_lua; }
REDLOCK_API const char *redlock_reentrant_fence_acquire_script(void) { return redlock__rfacquire_lua; }
REDLOCK_API const char *redlock_reentrant_fence_write_back_script(void) { return redlock__rfence_lua; }
REDLOCK_API const char *redlock_fenced_set_script(void) { return redlock__fenced_set_lua; }
REDLOCK_API const char *redlock_rw_acquire_script(void) { return redlock__rwacquire_lua; }
REDLOCK_API const char *redlock_rw_release_script(void) { return redlock__rwrelease_lua; }
REDLOCK_API const char *redlock_rw_extend_script(void) { return redlock__rwextend_lua; }
REDLOCK_API const char *redlock_rw_upgrade_script(void) { return redlock__rwupgrade_lua; }
REDLOCK_API const char *redlock_rw_set_mode_script(void) { return redlock__rwsetmode_lua; }

REDLOCK_API const char *redlock_strerror(int status) {
    switch (status) {
    case REDLOCK_OK: return "ok";
    case REDLOCK_ERR_INVALID: return "invalid argument";
    case REDLOCK_ERR_KEY: return "key is NULL, empty, or starts with \"" REDLOCK_FENCE_PREFIX "\" (reserved for fence counters)";
    case REDLOCK_ERR_KEY_TOO_LONG: return "key longer than REDLOCK_MAX_KEY";
    case REDLOCK_ERR_TTL: return "ttl out of range";
    case REDLOCK_ERR_NODES: return "node count out of range";
    case REDLOCK_ERR_BUSY: return "another operation is in progress on this lock";
    case REDLOCK_ERR_NOT_HELD: return "lock is not held";
    case REDLOCK_ERR_ALREADY_HELD: return "lock is already held";
    case REDLOCK_ERR_RANDOM: return "random source failed";
    case REDLOCK_ERR_NOMEM: return "out of memory";
    case REDLOCK_ERR_DETACHED: return "lock not initialised or client gone";
    case REDLOCK_ERR_NO_TLS: return "TLS asked for, but the adapter was built without TLS";
    case REDLOCK_ERR_LOCKED: return "lock is held by someone else";
    case REDLOCK_ERR_TIMEOUT: return "gave up waiting for the lock";
    case REDLOCK_ERR_NO_QUORUM: return "too few nodes answered";
    case REDLOCK_ERR_VALIDITY: return "quorum reached too late, no validity left";
    case REDLOCK_ERR_EXPIRED: return "lock expired";
    case REDLOCK_ERR_STOLEN: return "lock taken by another owner";
    case REDLOCK_ERR_QUORUM_LOST: return "lock no longer held by a majority";
    case REDLOCK_ERR_HOLD_LIMIT: return "renewal limit reached";
    case REDLOCK_ERR_CANCELLED: return "cancelled";
    case REDLOCK_ERR_CONFIG: return "too few usable nodes: authentication or SELECT refused";
    case REDLOCK_ERR_OVERLOADED: return "too few answers: the transport's queues were full";
    case REDLOCK_ERR_TRANSPORT: return "transport error";
    case REDLOCK_ERR_NODE_TIMEOUT: return "node timed out";
    case REDLOCK_ERR_PROTOCOL: return "protocol error: unexpected reply";
    case REDLOCK_ERR_SERVER: return "server replied with an error";
    case REDLOCK_ERR_AUTH: return "authentication failed";
    case REDLOCK_ERR_CONNECT: return "connection failed";
    case REDLOCK_ERR_SELECT: return "SELECT refused";
    case REDLOCK_ERR_QUEUE_FULL: return "the transport's queue for the node is full";
    case REDLOCK_ERR_TLS: return "TLS refused: certificate, server alert, or an answer that is not TLS";
    case REDLOCK_ERR_NO_SCRIPTING: return "the node refuses scripts, which reentrant and fenced locks need";
    case REDLOCK_ERR_NOPERM:
        return "the node's ACL denies this user a key of the lock (its key, or " REDLOCK_FENCE_PREFIX "key for a fenced lock)";
    case REDLOCK_ERR_EVICTING: return "the node may evict keys (maxmemory-policy): its grant does not count";
    case REDLOCK_ERR_RESTARTED: return "the node restarted or failed over recently and may have lost keys: its grant does not count yet";
    case REDLOCK_ERR_REPLICAS: return "too few replicas acknowledged the write in time (WAIT), or WAIT refused";
    default: return "unknown status";
    }
}

REDLOCK_API const char *redlock_state_name(redlock_state s) {
    switch (s) {
    case REDLOCK_STATE_IDLE: return "idle";
    case REDLOCK_STATE_ACQUIRING: return "acquiring";
    case REDLOCK_STATE_HELD: return "held";
    case REDLOCK_STATE_RELEASING: return "releasing";
    case REDLOCK_STATE_LOST: return "lost";
    default: return "unknown";
    }
}

REDLOCK_API const char *redlock_event_name(redlock_event_type t) {
    switch (t) {
    case REDLOCK_EV_ATTEMPT: return "attempt";
    case REDLOCK_EV_VOTE: return "vote";
    case REDLOCK_EV_ACQUIRED: return "acquired";
    case REDLOCK_EV_RETRY: return "retry";
    case REDLOCK_EV_FAILED: return "failed";
    case REDLOCK_EV_RENEWED: return "renewed";
    case REDLOCK_EV_RENEW_FAILED: return "renew-failed";
    case REDLOCK_EV_LOST: return "lost";
    case REDLOCK_EV_RELEASED: return "released";
    case REDLOCK_EV_MODE_SWITCH: return "mode-switch";
    case REDLOCK_EV_KEY_LEFT: return "key-left";
    case REDLOCK_EV_NODE_EVICTS: return "node-evicts";
    case REDLOCK_EV_NODE_RESTARTED: return "node-restarted";
    default: return "unknown";
    }
}

/* ---- reading a lock's stored value (section 13) ---- */

/* The readers-writer hash's mode letters, as its scripts write them. */
enum { REDLOCK__RW_SHARED = 's', REDLOCK__RW_EXCLUSIVE = 'x', REDLOCK__RW_UPDATE = 'u', REDLOCK__RW_WAITING = 'w' };
#define REDLOCK__FENCE_FIELD_LEN (sizeof REDLOCK_FENCE_FIELD - 1)
#define REDLOCK__RW_WAITING_LEN (sizeof REDLOCK_RW_WAITING_PREFIX - 1)
#define REDLOCK__COUNT_DIGITS 9 /* a reentrant count; more is no count of ours */
#define REDLOCK__NUM_DIGITS 19  /* an expiry in ms, a fence; more is no number of ours */

static int redlock__value_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A token as the core writes it: a label (printable, no space, at most
   REDLOCK_MAX_LABEL bytes) and REDLOCK_TOKEN_LEN hex digits. */
static int redlock__value_token(const char *s, size_t len) {
    size_t i;
    if (len < REDLOCK_TOKEN_LEN || len > REDLOCK_VALUE_TOKEN_MAX) return 0;
    for (i = 0; i < len - REDLOCK_TOKEN_LEN; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127) return 0;
    for (; i < len; i++)
        if (!redlock__value_hex(s[i])) return 0;
    return 1;
}

/* 1..max decimal digits and nothing else, without overflow. */
static int redlock__value_digits(const char *s, size_t len, size_t max, int64_t *out) {
    size_t i;
    int64_t v = 0;
    if (len == 0 || len > max) return 0;
    for (i = 0; i < len; i++) {
        int d = s[i] - '0';
        if (d < 0 || d > 9 || v > (INT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static int redlock__value_str(const redlock_reply *r) {
    return r->type == REDLOCK_REPLY_STRING && (r->str || r->len == 0);
}

/* A string reply equal to s. */
static int redlock__value_is(const redlock_reply *r, const char *s, size_t len) {
    return redlock__value_str(r) && r->len == len && memcmp(r->str, s, len) == 0;
}

/* A token into out (room for REDLOCK_VALUE_TOKEN_MAX + 1), NUL-terminated. */
static void redlock__value_copy(char *out, size_t *out_len, const char *s, size_t len) {
    if (len) memcpy(out, s, len);
    out[len] = '\0';
    *out_len = len;
}

static void redlock__value_take_token(redlock_value *v, const char *s, size_t len) {
    redlock__value_copy(v->token, &v->token_len, s, len);
    v->label_len = len > REDLOCK_TOKEN_LEN ? len - REDLOCK_TOKEN_LEN : 0;
}

static void redlock__value_clear(redlock_value *v, redlock_value_kind kind) {
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->expiry_ms = -1;
    v->fence = -1;
}

/* A string value: a token, or legacy "expiry_ms:token" when the key does
   not expire (legacy keys never do: a label such as "42:" of an expiring
   key is no expiry). A token of exactly REDLOCK_TOKEN_LEN bytes may be
   another Redlock client's, for which a token is any value. */
static void redlock__value_string(const char *s, size_t len, int expires, redlock_value *v) {
    size_t i = 0;
    int64_t expiry;
    while (!expires && i < len && i < REDLOCK__NUM_DIGITS && s[i] >= '0' && s[i] <= '9') i++;
    if (i > 0 && i < len && s[i] == ':' && redlock__value_digits(s, i, REDLOCK__NUM_DIGITS, &expiry) &&
        (len - i - 1 == REDLOCK_TOKEN_LEN || redlock__value_token(s + i + 1, len - i - 1))) {
        redlock__value_clear(v, REDLOCK_VALUE_LEGACY);
        redlock__value_take_token(v, s + i + 1, len - i - 1);
        v->expiry_ms = expiry;
    } else if (len == REDLOCK_TOKEN_LEN || redlock__value_token(s, len)) {
        redlock__value_clear(v, REDLOCK_VALUE_PLAIN);
        redlock__value_take_token(v, s, len);
    } else {
        redlock__value_clear(v, REDLOCK_VALUE_OTHER);
    }
}

/* An answer that is not the value: SERVER for an error reply, PROTOCOL
   for a type the read cannot give; 0 for a value. */
static int redlock__value_answer(const redlock_reply *r, redlock_reply_type want) {
    if (r->type == REDLOCK_REPLY_ERROR) return REDLOCK_ERR_SERVER;
    if (r->type != want && r->type != REDLOCK_REPLY_NIL) return REDLOCK_ERR_PROTOCOL;
    return 0;
}

static int redlock__value_wrongtype(const redlock_reply *r) {
    static const char w[] = "WRONGTYPE";
    return r->type == REDLOCK_REPLY_ERROR && r->str && r->len >= sizeof w - 1 && memcmp(r->str, w, sizeof w - 1) == 0;
}

REDLOCK_API int redlock_value_from_get(const redlock_reply *get, int expires, redlock_value *v) {
    int rc;
    redlock_value out;
    if (!get || !v) return REDLOCK_ERR_INVALID;
    if (redlock__value_wrongtype(get)) {
        redlock__value_clear(v, REDLOCK_VALUE_HASH);
        return REDLOCK_OK;
    }
    if ((rc = redlock__value_answer(get, REDLOCK_REPLY_STRING)) != 0) return rc;
    if (get->type == REDLOCK_REPLY_NIL) redlock__value_clear(&out, REDLOCK_VALUE_NONE);
    else if (!get->str && get->len) return REDLOCK_ERR_PROTOCOL;
    else redlock__value_string(get->str, get->len, expires, &out);
    *v = out;
    return REDLOCK_OK;
}

/* The field REDLOCK_FENCE_FIELD of a fenced reentrant lock's hash. */
static int redlock__value_fence_field(const redlock_reply *f) {
    return redlock__value_is(f, REDLOCK_FENCE_FIELD, REDLOCK__FENCE_FIELD_LEN);
}

/* An entry of owner o: "o:" and a token. */
static int redlock__value_entry(const redlock_reply *f, const redlock_reply *o) {
    return redlock__value_str(f) && f->len > o->len + 1 && memcmp(f->str, o->str, o->len) == 0 &&
           f->str[o->len] == ':' && redlock__value_token(f->str + o->len + 1, f->len - o->len - 1);
}

/* A reentrant lock's hash (section 9): field owner = its count of
   entries, one field "owner:token" per entry, and maybe the fence field;
   nothing else. The owner is shorter than its entries: the shortest
   field, or none. 1: read into v. */
static int redlock__value_reentrant(const redlock_reply *r, redlock_value *v) {
    const redlock_reply *owner = NULL, *count = NULL, *first = NULL;
    size_t i, entries = 0;
    int64_t n, fence = -1;
    for (i = 0; i < r->elements; i += 2) {
        const redlock_reply *f = &r->element[i];
        if (!redlock__value_str(f) || f->len == 0) return 0;
        if (!redlock__value_fence_field(f) && (!owner || f->len < owner->len)) {
            owner = f;
            count = &r->element[i + 1];
        }
    }
    if (!owner || owner->len > REDLOCK_MAX_OWNER || !redlock__value_str(count) ||
        !redlock__value_digits(count->str, count->len, REDLOCK__COUNT_DIGITS, &n))
        return 0;
    for (i = 0; i < r->elements; i += 2) {
        const redlock_reply *f = &r->element[i], *val = &r->element[i + 1];
        if (f == owner) continue;
        if (redlock__value_fence_field(f)) {
            if (!redlock__value_str(val) || !redlock__value_digits(val->str, val->len, REDLOCK__NUM_DIGITS, &fence)) fence = -1;
            continue;
        }
        if (!redlock__value_entry(f, owner)) return 0;
        if (!first) first = f;
        entries++;
    }
    if (n <= 0 || (uint64_t)n != (uint64_t)entries) return 0;
    redlock__value_clear(v, REDLOCK_VALUE_REENTRANT);
    memcpy(v->owner, owner->str, owner->len);
    v->owner[owner->len] = '\0';
    v->owner_len = owner->len;
    v->entries = n;
    v->fence = fence;
    redlock__value_take_token(v, first->str + owner->len + 1, first->len - owner->len - 1);
    return 1;
}

/* One entry of a readers-writer hash (section 12): field token = mode
   letter and the holder's expiry (the server's ms), or field
   REDLOCK_RW_WAITING_PREFIX + token = the waiting mark's letter and its
   expiry. A waiting writer's mark is told by its value, as the scripts
   do. The mode letter, or 0 for an entry that is not one of ours. */
static int redlock__value_rw_entry(const redlock_reply *f, const redlock_reply *val, int64_t *expiry) {
    int c;
    if (!redlock__value_str(f) || !redlock__value_str(val) || val->len < 2 ||
        !redlock__value_digits(val->str + 1, val->len - 1, REDLOCK__NUM_DIGITS, expiry))
        return 0;
    c = val->str[0];
    if (c == REDLOCK__RW_WAITING)
        return f->len > REDLOCK__RW_WAITING_LEN && memcmp(f->str, REDLOCK_RW_WAITING_PREFIX, REDLOCK__RW_WAITING_LEN) == 0 &&
                       redlock__value_token(f->str + REDLOCK__RW_WAITING_LEN, f->len - REDLOCK__RW_WAITING_LEN)
                   ? c
                   : 0;
    if (c != REDLOCK__RW_SHARED && c != REDLOCK__RW_EXCLUSIVE && c != REDLOCK__RW_UPDATE) return 0;
    return redlock__value_token(f->str, f->len) ? c : 0;
}

/* A readers-writer lock's hash; entries past their expiry by now_ms are
   left out. 1: read into v. */
static int redlock__value_rw(const redlock_reply *r, int64_t now_ms, redlock_value *v) {
    size_t i;
    int64_t expiry;
    for (i = 0; i < r->elements; i += 2) /* every field must be one of ours */
        if (!redlock__value_rw_entry(&r->element[i], &r->element[i + 1], &expiry)) return 0;
    redlock__value_clear(v, REDLOCK_VALUE_RW);
    for (i = 0; i < r->elements; i += 2) {
        const redlock_reply *f = &r->element[i];
        int c = redlock__value_rw_entry(f, &r->element[i + 1], &expiry);
        if (expiry <= now_ms) continue;
        if (c == REDLOCK__RW_WAITING) v->writers_waiting++;
        else if (c == REDLOCK__RW_SHARED) v->readers++;
        else if (c == REDLOCK__RW_EXCLUSIVE) redlock__value_copy(v->writer, &v->writer_len, f->str, f->len);
        else redlock__value_copy(v->update, &v->update_len, f->str, f->len);
    }
    return 1;
}

REDLOCK_API int redlock_value_from_hash(const redlock_reply *hgetall, int64_t now_ms, redlock_value *v) {
    int rc;
    redlock_value out;
    const redlock_reply *r = hgetall;
    if (!r || !v) return REDLOCK_ERR_INVALID;
    if (redlock__value_wrongtype(r)) { /* neither a string nor a hash */
        redlock__value_clear(v, REDLOCK_VALUE_OTHER);
        return REDLOCK_OK;
    }
    if ((rc = redlock__value_answer(r, REDLOCK_REPLY_ARRAY)) != 0) return rc;
    if (r->type == REDLOCK_REPLY_NIL || r->elements == 0) redlock__value_clear(&out, REDLOCK_VALUE_NONE);
    else if (!r->element) return REDLOCK_ERR_PROTOCOL;
    else if (r->elements % 2 || !(redlock__value_reentrant(r, &out) || redlock__value_rw(r, now_ms, &out)))
        redlock__value_clear(&out, REDLOCK_VALUE_OTHER);
    *v = out;
    return REDLOCK_OK;
}

REDLOCK_API int64_t redlock_value_fence(const redlock_reply *get) {
    int64_t n;
    if (!get || !redlock__value_str(get) || !redlock__value_digits(get->str, get->len, REDLOCK__NUM_DIGITS, &n)) return -1;
    return n;
}

#ifdef __cplusplus
}
#endif

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
