/* redlock_conn.h - the connection layer under every adapter (internal).

   What a connection to a node does whatever moves its bytes (the raw
   sockets of redlock_socket.h, a redisContext of redlock_hiredis.h, a
   redisAsyncContext of redlock_libev.h), written once:

     * the request ring: the replies a connection owes, oldest first,
       each with its kind (the core's command, or the adapter's own
       AUTH / SELECT / INFO / CONFIG / (UN)SUBSCRIBE) and the time its
       reply's clock started;
     * the preamble every new connection sends first (AUTH, SELECT,
       INFO, CONFIG GET appendfsync) and what its answers mean: what the
       node may evict, and what its server process says of its life;
     * the idle probe: what an idle connection shows before a command is
       written to it, and when it is asked;
     * the subscriber table behind the core's `listen` hook (which keys
       the subscribers follow, and since when none is listened to);
     * the subscribers' state machine: what a subscriber sends when it
       opens and when the table changes, what each reply it reads means
       (a message, a confirmation, a refusal, or a protocol error), the
       backoff after a refusal, and when it opens and idle-closes;
     * a connection's lifecycle: its state (down, connecting, TLS
       handshake, up, and refused: AUTH or SELECT said no), when it may be
       reopened (the reconnect delay, the backoff after a refusal), the
       node's status with its words (the server's, the TLS library's or
       the transport's) and the text a node status shows, when the node
       counts as asked, and what a dropped connection owed (each core
       command fails with the drop's status).

   The drivers keep what their transport decides: how a command is
   written, when a connection counts as open, how a reply is read, how
   it is torn down. hiredis and libev move a connection's state through
   the lifecycle functions below; the socket driver, which opens several
   addresses in turn and runs its own TLS handshake, sets the state
   itself at those points and uses the rest. Not a public API: every
   other name here is private (redlock__conn_).

   Include spelling, in every adapter: "../redlock.h", relative to the
   adapter itself, so that it finds the library beside adapters/ in this
   tree and beside include/redlock/ where `make install` puts them, with
   no -I flag of its own.

   One exception: the statistics' types (redlock_node_io_stats,
   redlock_adapter_stats) are public, declared here once for every
   adapter. */
#ifndef REDLOCK_CONN_H
#define REDLOCK_CONN_H

#include "../redlock.h"
#include "redlock_notify.h"
#include "redlock_sentinel.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* ---- statistics: what a node's connections did (public) ----
   Every adapter's redlock_*_stats() fills a redlock_adapter_stats: the
   core's counters and, per node, its command connections' (a cluster
   node's: all its masters'; not the subscribers of release notifications,
   nor a Sentinel group's watch). Counted here, as the connections open,
   write, read and close: a few increments, nothing allocated. */
typedef struct redlock_node_io_stats {
    uint64_t connects;  /* connections opened (TCP, and TLS handshake, done) */
    uint64_t drops;     /* open connections lost: closed by the node, failed, timed out */
    uint64_t commands;  /* commands queued to be written (the preamble's too) */
    uint64_t bytes_out; /* their bytes (RESP) */
    uint64_t bytes_in;  /* bytes of the replies read */
    uint32_t queue_max; /* the most replies owed at once on one connection */
} redlock_node_io_stats;

typedef struct redlock_adapter_stats {
    redlock_stats core; /* redlock_client_stats() of the adapter's client */
    int node_count;
    redlock_node_io_stats node[REDLOCK_MAX_NODES];
} redlock_adapter_stats;

/* An adapter's statistics: out cleared, then its nodes' counters (io:
   node_count of them); the caller adds the core's (raw mode has none). */
static inline void redlock__conn_stats(redlock_adapter_stats *out, int node_count, const redlock_node_io_stats *io)
{
    memset(out, 0, sizeof *out);
    out->node_count = node_count;
    memcpy(out->node, io, (size_t)node_count * sizeof *io);
}

/* ---- the request ring ---- */

/* What a reply answers: the core's command (or the caller's, in raw
   mode), or one the adapter sent for itself. */
enum { REDLOCK__CONN_CORE = 0, REDLOCK__CONN_AUTH, REDLOCK__CONN_SELECT, REDLOCK__CONN_INFO,
       REDLOCK__CONN_SUB /* SUBSCRIBE, SSUBSCRIBE */, REDLOCK__CONN_CONFIG /* CONFIG GET appendfsync */,
       REDLOCK__CONN_ROLE /* ROLE: a Sentinel group's server must be its primary */,
       REDLOCK__CONN_ASKING /* ASKING: a cluster's ASK redirection, before the command */,
       REDLOCK__CONN_UNSUB /* UNSUBSCRIBE, SUNSUBSCRIBE */ };

typedef struct redlock__conn_req {
    redlock_tag tag;
    int64_t since; /* its reply is due a command timeout after this */
    int kind;
} redlock__conn_req;

/* Grows by doubling, from `first` entries up to the driver's cap. */
typedef struct redlock__conn_ring {
    redlock__conn_req *e;
    size_t head, count, cap;
} redlock__conn_ring;

/* The k-th oldest request (k < count). */
static inline redlock__conn_req *redlock__conn_at(const redlock__conn_ring *q, size_t k)
{
    return &q->e[(q->head + k) % q->cap];
}

/* Room for one more request: 0, or REDLOCK_ERR_QUEUE_FULL (max owed
   already) / NOMEM. A failure leaves the ring as it was. */
static inline int redlock__conn_reserve(redlock__conn_ring *q, size_t first, size_t max)
{
    redlock__conn_req *ne;
    size_t cap, k;
    if (q->count >= max) return REDLOCK_ERR_QUEUE_FULL;
    if (q->count < q->cap) return 0;
    cap = q->cap ? q->cap * 2 : first;
    if (cap > max) cap = max;
    ne = (redlock__conn_req *)malloc(cap * sizeof *ne);
    if (!ne) return REDLOCK_ERR_NOMEM;
    for (k = 0; k < q->count; k++) ne[k] = *redlock__conn_at(q, k); /* oldest first at 0 */
    free(q->e);
    q->e = ne;
    q->cap = cap;
    q->head = 0;
    return 0;
}

/* Files a request in the room redlock__conn_reserve() made. */
static inline void redlock__conn_push(redlock__conn_ring *q, int kind, redlock_tag tag, int64_t since)
{
    redlock__conn_req *r = &q->e[(q->head + q->count) % q->cap];
    r->tag = tag;
    r->kind = kind;
    r->since = since;
    q->count++;
}

/* Removes the oldest request into *out; 0 if none was owed. */
static inline int redlock__conn_pop(redlock__conn_ring *q, redlock__conn_req *out)
{
    if (q->count == 0) return 0;
    *out = q->e[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return 1;
}

/* When the oldest reply is overdue (INT64_MAX: none owed). */
static inline int64_t redlock__conn_due(const redlock__conn_ring *q, int64_t timeout_us)
{
    return q->count ? q->e[q->head].since + timeout_us : INT64_MAX;
}

/* The clocks of requests [from, count) start at `now`: what was filed
   before the connection could carry it is owed from when it can. */
static inline void redlock__conn_restart(redlock__conn_ring *q, size_t from, int64_t now)
{
    size_t k;
    for (k = from; k < q->count; k++) redlock__conn_at(q, k)->since = now;
}

/* ... or no later than `now`. */
static inline void redlock__conn_restart_by(redlock__conn_ring *q, int64_t now)
{
    size_t k;
    for (k = 0; k < q->count; k++)
        if (redlock__conn_at(q, k)->since > now) redlock__conn_at(q, k)->since = now;
}

/* Forgets every request and the ring's memory. */
static inline void redlock__conn_ring_free(redlock__conn_ring *q)
{
    free(q->e);
    memset(q, 0, sizeof *q);
}

/* ---- the preamble: what a new connection says first ----
   AUTH (password, or ACL user and password) if a password is set,
   SELECT db if db > 0, and if the core wants the node's health: INFO
   (its default sections: server, persistence and memory) for the
   eviction policy and the process's run_id, uptime and AOF (redlock.h
   section 4, Eviction and Restarts), then CONFIG GET appendfsync (are
   the keys on disk before a write is answered?). Each fills argv/len
   and returns argc, or 0 when not needed. */
static inline int redlock__conn_auth_argv(const char *user, const char *pass, const char *argv[3], size_t len[3])
{
    int k = 0;
    if (!pass || !pass[0]) return 0;
    argv[k] = "AUTH"; len[k] = 4; k++;
    if (user && user[0]) { argv[k] = user; len[k] = strlen(user); k++; }
    argv[k] = pass; len[k] = strlen(pass); k++;
    return k;
}

static inline int redlock__conn_select_argv(int db, char num[16], const char *argv[2], size_t len[2])
{
    if (db <= 0) return 0;
    argv[0] = "SELECT"; len[0] = 6;
    argv[1] = num; len[1] = (size_t)snprintf(num, 16, "%d", db);
    return 2;
}

static inline int redlock__conn_info_argv(int info, const char *argv[1], size_t len[1])
{
    if (!info) return 0;
    argv[0] = "INFO"; len[0] = 4;
    return 1;
}

static inline int redlock__conn_config_argv(int info, const char *argv[3], size_t len[3])
{
    if (!info) return 0;
    argv[0] = "CONFIG"; len[0] = 6;
    argv[1] = "GET"; len[1] = 3;
    argv[2] = "appendfsync"; len[2] = 11;
    return 3;
}

/* A command of the driver's: kind (REDLOCK__CONN_*), argc, argv and
   lengths, queued on the connection and owed an answer; 0, or why not. */
typedef int (*redlock__conn_queue_fn)(void *ctx, int kind, int argc, const char **argv, const size_t *len);

/* Queues a new connection's preamble, each command through `queue`
   (0, or what stops the preamble, which is returned): AUTH, SELECT, ROLE
   (role: a Sentinel group's server, which must be its primary before
   anything else it says counts), INFO and CONFIG GET appendfsync as the
   node needs them. */
static inline int redlock__conn_preamble_queue(const char *user, const char *pass, int db, int role, int info,
                                               redlock__conn_queue_fn queue, void *ctx)
{
    const char *argv[3];
    size_t len[3];
    char num[16];
    int k, rc = 0;
    if ((k = redlock__conn_auth_argv(user, pass, argv, len)) != 0) rc = queue(ctx, REDLOCK__CONN_AUTH, k, argv, len);
    if (rc == 0 && (k = redlock__conn_select_argv(db, num, argv, len)) != 0)
        rc = queue(ctx, REDLOCK__CONN_SELECT, k, argv, len);
    if (rc == 0 && role) {
        argv[0] = "ROLE";
        len[0] = 4;
        rc = queue(ctx, REDLOCK__CONN_ROLE, 1, argv, len);
    }
    if (rc == 0 && (k = redlock__conn_info_argv(info, argv, len)) != 0)
        rc = queue(ctx, REDLOCK__CONN_INFO, k, argv, len);
    if (rc == 0 && (k = redlock__conn_config_argv(info, argv, len)) != 0)
        rc = queue(ctx, REDLOCK__CONN_CONFIG, k, argv, len);
    return rc;
}

/* What a node's preamble said of its health: the policy's name as the
   last INFO that named one said, and between a connection's INFO and
   CONFIG answers, what INFO said of its process (told to the core with
   CONFIG's answer). Per node, in the driver's node state. */
typedef struct redlock__conn_health {
    char policy[24];        /* maxmemory_policy the last INFO named ("" none yet) */
    redlock_node_life life; /* this connection's INFO: run_id, uptime, aof (durable: with CONFIG's) */
    int life_known;         /* INFO named run_id or uptime: the core is told with CONFIG's answer */
} redlock__conn_health;

/* INFO's answer (a bulk string str/len, or NULL): what node may evict,
   told to the core before the replies of the commands behind it, its
   policy's name kept; and what it says of the server's process (run_id,
   uptime, AOF), kept for CONFIG's answer. An error (an ACL without
   +info), no string, or nothing known here: what the core knew stays
   (the process: nothing is told). */
static inline void redlock__conn_info_answer(redlock_client *client, int node, redlock__conn_health *h,
                                             const char *str, size_t len)
{
    char name[24];
    int evicts;
    h->life_known = str && redlock_info_life(str, len, &h->life) == 0;
    if (!str) return;
    evicts = redlock_info_evicts(str, len, name, sizeof name);
    if (evicts < 0) return;
    snprintf(h->policy, sizeof h->policy, "%s", name);
    redlock_node_set_evicts(client, node, (redlock_evicts)evicts);
}

/* CONFIG GET appendfsync's answer (below), for a node whose life is not
   the core's to keep as one (a cluster's masters, redlock_cluster.h):
   1 when INFO named the process, h->life then complete (durable set). */
/* CONFIG GET appendfsync's answer: the value (str/len: the second of the
   two strings of its array), or NULL for anything else (an error: an ACL
   without +config, a renamed CONFIG; no such parameter). The keys outlive
   a restart (durable) when AOF is on and fsync'd before every answer
   ("always"); anything else, or no answer, is not durable. The core
   learns the process's life now, before the replies of the commands
   behind it, if the connection's INFO named it. */
static inline int redlock__conn_config_life(redlock__conn_health *h, const char *str, size_t len)
{
    if (!h->life_known) return 0;
    h->life_known = 0;
    h->life.durable = h->life.aof && str && len == 6 && memcmp(str, "always", 6) == 0;
    return 1;
}

static inline void redlock__conn_config_answer(redlock_client *client, int node, redlock__conn_health *h,
                                               const char *str, size_t len)
{
    if (redlock__conn_config_life(h, str, len)) redlock_node_set_life(client, node, &h->life);
}

/* ---- the idle probe ----
   What an idle connection (no reply owed) shows before a command is
   written to it. CLOSED: the node closed or reset it (a restart):
   nothing was lost, it is replaced for the command. UNASKED: bytes came
   that no command asked for (or wait in the driver's reader:
   `buffered`): the node misbehaves (PROTOCOL), and they could be taken
   for the command's reply. tls_peek (redlock__tls_idle, redlock_tls.h)
   looks through a TLS session instead, where records for TLS itself
   (session tickets) are no reply. */
enum { REDLOCK__CONN_IDLE_OK = 0, REDLOCK__CONN_IDLE_CLOSED, REDLOCK__CONN_IDLE_UNASKED };
static inline int redlock__conn_idle_state(int fd, size_t buffered, int (*tls_peek)(void *ssl), void *ssl)
{
    struct pollfd pf;
    char c;
    ssize_t n;
    if (buffered) return REDLOCK__CONN_IDLE_UNASKED;
    pf.fd = fd;
    pf.events = POLLIN;
    pf.revents = 0;
    if (poll(&pf, 1, 0) <= 0) return REDLOCK__CONN_IDLE_OK;
    if (tls_peek && ssl) return tls_peek(ssl);
    n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return REDLOCK__CONN_IDLE_UNASKED;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return REDLOCK__CONN_IDLE_OK;
    return REDLOCK__CONN_IDLE_CLOSED;
}

/* ---- the subscribers' table: the core's listen hook ----
   Which keys the subscribers follow (redlock_notify.h), and since when
   no lock listens (0: one does): the subscribers close idle_us after. */
typedef struct redlock__conn_subs {
    redlock__notify table;
    int64_t idle_since, idle_us;
} redlock__conn_subs;

/* The core's listen callback, for every adapter: the table follows the
   core; `cmd` subscribes (on) or unsubscribes a key on the subscribers
   that serve it (redlock__conn_sub_cmd). */
static inline void redlock__conn_listen(redlock__conn_subs *t, redlock_lock *lk, int on, int64_t now,
                                        void (*cmd)(void *ctx, int on, const char *key, size_t len), void *ctx)
{
    const char *key;
    size_t len;
    if (on) {
        if (redlock__notify_add(&t->table, lk) != 1) return;
        t->idle_since = 0;
        key = redlock_lock_key(lk, &len);
        cmd(ctx, 1, key, len);
        return;
    }
    if (!redlock__notify_remove(&t->table, lk, &key, &len)) return;
    cmd(ctx, 0, key, len);
    if (!t->table.count) t->idle_since = now;
}

/* When idle subscribers are due to close (INT64_MAX: not idle). */
static inline int64_t redlock__conn_idle_due(const redlock__conn_subs *t)
{
    return !t->table.count && t->idle_since ? t->idle_since + t->idle_us : INT64_MAX;
}

/* ---- a connection's lifecycle ----

       DOWN --open--> CONNECTING --(TLS)--> HANDSHAKE --> UP
         ^                |                     |          |
         +----------------+---------------------+----------+  lost, failed, timed out:
                                                              reopened from retry_at

   UP with `refused` set: the node refused the preamble's AUTH or SELECT
   on this connection; what is asked of it fails with that status until a
   new connection opens (the driver closes this one, and reopens it after
   its delay). `status` is the node's last failure, 0 once a connection
   answered since; `words` say that failure in the server's (or TLS
   library's, or transport's) words, set with it (redlock__conn_set), and
   `server` keeps the server's last error reply on this connection,
   whatever the status; redlock__conn_text() says which the node status
   shows. A subscriber refused by its node (`shunned`: AUTH or
   SERVER, with the node's words in `refusal`) is reopened only after a
   backoff that doubles at each refusal in a row (redlock_notify.h),
   until a SUBSCRIBE is confirmed (the subscribers, at the end). The driver says when the state changes; this
   layer keeps what it means. */
enum { REDLOCK__CONN_DOWN = 0, REDLOCK__CONN_CONNECTING, REDLOCK__CONN_HANDSHAKE, REDLOCK__CONN_UP };

typedef struct redlock__conn_life {
    int state;          /* DOWN / CONNECTING / HANDSHAKE / UP */
    int refused;        /* this connection's AUTH or SELECT was refused (status says which) */
    int asked;          /* a core command was filed since the connection opened */
    int status;         /* last failure, 0 if none or a connection answered since */
    int shunned;        /* subscriber: 0, or AUTH / SERVER while its node refuses it */
    int64_t retry_at;   /* down: not reopened before this (the adapter's clock, us) */
    int64_t backoff_ms; /* subscriber: the backoff after the node refused it, 0 if it did not */
    char words[128];    /* status in words */
    char server[120];   /* the server's last error reply on this connection (redlock__conn_heard) */
    char refusal[120];  /* subscriber: the node's words while it is shunned */
    redlock_node_io_stats *io; /* the node's counters (the adapter's), NULL: not counted */
} redlock__conn_life;

/* The connection is open (TCP, and TLS if any): UP, and counted. */
static inline void redlock__conn_up(redlock__conn_life *l)
{
    l->state = REDLOCK__CONN_UP;
    if (l->io) l->io->connects++;
}

/* A command of `bytes` (RESP) was queued on a connection whose ring q
   now holds it. */
static inline void redlock__conn_count_out(redlock__conn_life *l, const redlock__conn_ring *q, size_t bytes)
{
    if (!l->io) return;
    l->io->commands++;
    l->io->bytes_out += bytes;
    if (q->count > l->io->queue_max) l->io->queue_max = (uint32_t)q->count;
}

/* `bytes` of replies were read on the connection. */
static inline void redlock__conn_count_in(redlock__conn_life *l, size_t bytes)
{
    if (l->io) l->io->bytes_in += bytes;
}

/* How many decimal digits v has. */
static inline size_t redlock__conn_digits(uint64_t v)
{
    size_t n = 1;
    for (; v >= 10; v /= 10) n++;
    return n;
}

/* The size in RESP of a command of argc arguments of lengths len[]
   (what hiredis formats: the drivers over it count their bytes so). */
static inline size_t redlock__conn_resp_size(int argc, const size_t *len)
{
    size_t n = 3 + redlock__conn_digits((uint64_t)argc); /* "*N\r\n" */
    int i;
    for (i = 0; i < argc; i++) n += 5 + redlock__conn_digits(len[i]) + len[i]; /* "$N\r\n" bytes "\r\n" */
    return n;
}

/* The node's status and its words (NULL: none; l->words itself: the
   words the driver wrote there as the failure happened, kept). */
static inline void redlock__conn_set(redlock__conn_life *l, int status, const char *words)
{
    l->status = status;
    if (words != l->words) snprintf(l->words, sizeof l->words, "%s", words ? words : "");
}

/* The node status's text: the failure's words; with no words, or no
   failure (0), the server's last error reply on this connection if the
   status is its (AUTH, SELECT) or 0 (a vote that failed with SERVER
   reads it from inside its event); else `generic` (the status's
   description). */
static inline const char *redlock__conn_text(const redlock__conn_life *l, const char *generic)
{
    int st = l->status;
    if (st && l->words[0]) return l->words;
    if ((!st || st == REDLOCK_ERR_AUTH || st == REDLOCK_ERR_SELECT) && l->server[0]) return l->server;
    return generic;
}

/* A connect's failure in words (err: errno's; unix_socket: to a Unix
   socket path), as every adapter and redlock_socket_probe() say it. */
static inline void redlock__conn_connect_words(char *out, size_t cap, int err, int unix_socket)
{
    if (err == ECONNREFUSED) snprintf(out, cap, "%s", "connection refused");
    else if (err == ENOENT && unix_socket) snprintf(out, cap, "%s", "no such socket");
    else if (err == ETIMEDOUT) snprintf(out, cap, "%s", "connect timed out");
    else snprintf(out, cap, "cannot connect: %s", strerror(err));
}

/* A server's words (str, len) into out[cap], as fit for a status line:
   printable ASCII only (a '?' for any other byte), cut to fit, trailing
   blanks trimmed. */
static inline void redlock__conn_printable(char *out, size_t cap, const char *str, size_t len)
{
    size_t i, o = 0;
    for (i = 0; str && i < len && o + 1 < cap; i++) out[o++] = str[i] >= 0x20 && str[i] < 0x7f ? str[i] : '?';
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
}

/* The server answered with an error (str, len): its words are kept (a
   script's error: the one it met, not the wrapper of servers before 7.0,
   whose words are cut before it). */
static inline void redlock__conn_heard(redlock__conn_life *l, const char *str, size_t len)
{
    redlock__script_error_unwrap(&str, &len);
    redlock__conn_printable(l->server, sizeof l->server, str, len);
}

/* A new connection is on its way (CONNECTING, or UP at once): nothing
   asked of it yet, nothing refused, nothing heard. */
static inline void redlock__conn_opened(redlock__conn_life *l, int state)
{
    l->state = state;
    l->refused = 0;
    l->asked = 0;
    l->server[0] = 0;
}

/* The connection is gone: DOWN, reopened no earlier than delay_ms after
   now (0: at once). */
static inline void redlock__conn_down(redlock__conn_life *l, int64_t now, int64_t delay_ms)
{
    if (l->state == REDLOCK__CONN_UP && l->io) l->io->drops++;
    l->state = REDLOCK__CONN_DOWN;
    l->retry_at = delay_ms ? now + delay_ms * 1000 : 0;
}

/* The connection is gone: DOWN, reopened no earlier than delay_ms after
   now, its refusal forgotten (it was this connection's); a failure
   (status, with its words why, NULL none) is the node's status, while 0
   (a close that lost nothing) keeps the status there was. */
static inline void redlock__conn_lost(redlock__conn_life *l, int status, const char *why, int64_t now,
                                      int64_t delay_ms)
{
    if (status) redlock__conn_set(l, status, why);
    l->refused = 0;
    redlock__conn_down(l, now, delay_ms);
}

/* Dropping a connection with `status` (why: its words), in two steps
   around the driver's teardown of its transport. First this: the
   replies it still owed are taken off its ring and returned (what the
   callbacks send meanwhile goes on a fresh ring, to a new connection),
   and the lifecycle is DOWN with the status (redlock__conn_lost), so a
   hook that runs in the teardown sees both. */
static inline redlock__conn_ring redlock__conn_drop(redlock__conn_life *l, redlock__conn_ring *q, int status,
                                                    const char *why, int64_t now, int64_t delay_ms)
{
    redlock__conn_ring owed = *q;
    memset(q, 0, sizeof *q);
    redlock__conn_lost(l, status, why, now, delay_ms);
    return owed;
}

/* Then this, once the transport is gone: each core command owed fails
   with the status through `fail` (the core's on_error, or the caller's
   in raw mode), oldest first (the core ignores the tags it no longer
   waits for); the ring's memory is freed. */
static inline void redlock__conn_fail_owed(redlock__conn_ring *owed, int status,
                                           void (*fail)(void *ctx, redlock_tag tag, int status), void *ctx)
{
    size_t k;
    for (k = 0; k < owed->count; k++) {
        const redlock__conn_req *r = redlock__conn_at(owed, k);
        if (r->kind == REDLOCK__CONN_CORE) fail(ctx, r->tag, status);
    }
    redlock__conn_ring_free(owed);
}

/* May a connection be opened now (its delay or backoff is over)? */
static inline int redlock__conn_may_open(const redlock__conn_life *l, int64_t now)
{
    return now >= l->retry_at;
}

/* What is overdue on a connection at `now`: its TCP connect (CONNECT) or
   its TLS handshake (HANDSHAKE; handshaking: the driver's word), both
   due by connect_deadline; else the oldest reply owed (REPLY), unless
   `hold`: its clock waits for the handshake. NONE: nothing. */
enum { REDLOCK__CONN_LATE_NONE = 0, REDLOCK__CONN_LATE_CONNECT, REDLOCK__CONN_LATE_HANDSHAKE,
       REDLOCK__CONN_LATE_REPLY };
static inline int redlock__conn_late(const redlock__conn_life *l, const redlock__conn_ring *q, int handshaking,
                                     int hold, int64_t connect_deadline, int64_t command_us, int64_t now)
{
    if (l->state == REDLOCK__CONN_CONNECTING && now >= connect_deadline) return REDLOCK__CONN_LATE_CONNECT;
    if (handshaking && now >= connect_deadline) return REDLOCK__CONN_LATE_HANDSHAKE;
    if (!hold && now >= redlock__conn_due(q, command_us)) return REDLOCK__CONN_LATE_REPLY;
    return REDLOCK__CONN_LATE_NONE;
}

/* Before a core command is written: a connection that is UP and owes
   nothing is probed (redlock__conn_idle_state: the driver gives its fd,
   the bytes its reader holds, and its TLS peek and session, or NULL).
   CLOSED: the node closed it while idle, nothing was lost, the driver
   replaces it for the command; UNASKED: the node misbehaves, the driver
   drops it with PROTOCOL; OK: the command goes out on it. */
static inline int redlock__conn_send_probe(const redlock__conn_life *l, const redlock__conn_ring *q, int fd,
                                           size_t buffered, int (*tls_peek)(void *ssl), void *ssl)
{
    if (l->state != REDLOCK__CONN_UP || q->count) return REDLOCK__CONN_IDLE_OK;
    return redlock__conn_idle_state(fd, buffered, tls_peek, ssl);
}

/* The preamble's AUTH or SELECT (kind) was answered: with an error's
   words (refused: 1), or not (NULL: the new connection answers). */
static inline int redlock__conn_preamble_answer(redlock__conn_life *l, int kind, const char *refusal)
{
    if (refusal) {
        l->refused = 1;
        redlock__conn_set(l, kind == REDLOCK__CONN_AUTH ? REDLOCK_ERR_AUTH : REDLOCK_ERR_SELECT, refusal);
        return 1;
    }
    if (!l->refused) l->status = 0;
    return 0;
}

/* A core command's reply came: what its tag fails with, or 0 to hand the
   reply on (the connection answers). auth_refusal: the reply's words if
   it is NOAUTH / WRONGPASS (the node wants other credentials), else NULL. */
static inline int redlock__conn_answer(redlock__conn_life *l, const char *auth_refusal)
{
    if (l->refused) return l->status ? l->status : REDLOCK_ERR_AUTH;
    if (auth_refusal) {
        redlock__conn_set(l, REDLOCK_ERR_AUTH, auth_refusal);
        return REDLOCK_ERR_AUTH;
    }
    l->status = 0;
    return 0;
}

/* Files core command `tag` on a connection's ring (room reserved), owed
   from `now`. Its first one since the connection opened restarts the
   clock of the preamble queued then (AUTH, SELECT, INFO, CONFIG): those go out
   with that command, so their answers are due within its timeout, not
   counted from the opening (a blocking caller may open the adapter long
   before its first command, with a TLS handshake left unfinished until
   then). */
static inline void redlock__conn_file(redlock__conn_life *l, redlock__conn_ring *q, redlock_tag tag, int64_t now)
{
    redlock__conn_push(q, REDLOCK__CONN_CORE, tag, now);
    if (!l->asked) {
        size_t k;
        for (k = 0; k + 1 < q->count; k++) {
            redlock__conn_req *r = redlock__conn_at(q, k);
            if (r->kind == REDLOCK__CONN_CORE) break;
            r->since = now;
        }
        l->asked = 1;
    }
}

/* The node refused a subscriber (status: AUTH or SERVER; the node's
   words str/len, kept as its refusal): the backoff doubles. Call before
   the driver closes it, and redlock__conn_sub_hold() after. */
static inline void redlock__conn_shunned(redlock__conn_life *l, int status, const char *str, size_t len)
{
    l->backoff_ms = redlock__notify_backoff(l->backoff_ms);
    l->shunned = status;
    redlock__conn_printable(l->refusal, sizeof l->refusal, str, len);
}

/* A refused subscriber, closed: not reopened before its backoff is over
   (counted from the close: the driver's close set its own delay). */
static inline void redlock__conn_sub_hold(redlock__conn_life *l, int64_t now)
{
    l->retry_at = now + l->backoff_ms * 1000;
}

/* A subscriber's SUBSCRIBE was confirmed: notifications work (again). */
static inline void redlock__conn_welcomed(redlock__conn_life *l)
{
    l->backoff_ms = 0;
    l->shunned = 0;
    l->refusal[0] = 0;
}

/* ---- the subscribers: release notifications (redlock.h section 10) ----
   A subscriber connection per node, whatever carries it:

       closed --a lock listens, its delay or backoff over--> opening
       opening --TCP (and TLS), the driver's--> up
       up --the table empty for idle_us--> closed (only one that is open:
            a refused subscriber keeps its backoff)
       opening, up --failure, an answer owed past the command timeout,
            an unexpected reply (PROTOCOL)--> closed, reopened after the
            driver's delay
       up --an error answer--> refused: closed, reopened after the backoff
            (redlock__notify_backoff: doubled at each refusal in a row,
            reset by a confirmed SUBSCRIBE)

   Opening queues AUTH if the node has a password (no SELECT: channels
   are server-wide), then SUBSCRIBE of every key the table listens to;
   the core's listen (redlock__conn_listen) adds SUBSCRIBE / UNSUBSCRIBE
   of one key. Each is owed its answer on the ring (kind AUTH, SUB or
   UNSUB). The driver opens, writes, reads and closes; it hands each reply
   here as a small view (redlock__conn_sub_reply), and this layer says
   what it means.

   A Redis Cluster node whose servers have sharded pub/sub (7.0 and
   later: redlock__conn_info_sharded, told to the core with
   redlock_node_set_sharded) has a subscriber per master instead, each
   subscribing (SSUBSCRIBE, `sharded`) the keys whose slot its master
   serves (the driver's `want` filter at opening) on their shard
   channels. A master that no longer serves a key's slot says so (MOVED
   to an SSUBSCRIBE, or a "sunsubscribe" nobody asked for when the slot
   moves away): RESHARD, below; the driver refreshes its slot map and
   reopens the node's subscribers. */

/* A subscriber's command of key's channel, through queue: SUBSCRIBE (on)
   or UNSUBSCRIBE, or with `sharded` SSUBSCRIBE or SUNSUBSCRIBE of its
   shard channel (kind SUB or UNSUB): 0, NOMEM, or queue's failure. */
static inline int redlock__conn_sub_cmd(int on, const char *key, size_t len, int sharded, redlock__conn_queue_fn queue,
                                        void *ctx)
{
    static const char *const verbs[2][2] = { { "UNSUBSCRIBE", "SUBSCRIBE" }, { "SUNSUBSCRIBE", "SSUBSCRIBE" } };
    char stack[256], *ch;
    const char *argv[2];
    size_t argl[2];
    int rc;
    if (!(ch = redlock__notify_command(verbs[sharded != 0][on != 0], key, len, sharded, stack, sizeof stack, argv, argl)))
        return REDLOCK_ERR_NOMEM;
    rc = queue(ctx, on ? REDLOCK__CONN_SUB : REDLOCK__CONN_UNSUB, 2, argv, argl);
    if (ch != stack) free(ch);
    return rc;
}

/* Which keys a sharded subscriber takes at opening: nonzero for a key
   whose slot its master serves. */
typedef int (*redlock__conn_sub_want_fn)(void *arg, const char *key, size_t len);

typedef struct redlock__conn_sub_opening {
    redlock__conn_queue_fn queue;
    void *ctx;
    int sharded;
    redlock__conn_sub_want_fn want;
    void *want_arg;
    int rc; /* the first failure */
} redlock__conn_sub_opening;

static inline void redlock__conn_sub_key(void *at, const char *key, size_t len)
{
    redlock__conn_sub_opening *o = (redlock__conn_sub_opening *)at;
    if (o->rc == 0 && (!o->want || o->want(o->want_arg, key, len)))
        o->rc = redlock__conn_sub_cmd(1, key, len, o->sharded, o->queue, o->ctx);
}

/* A new subscriber's commands, through queue: AUTH (user, pass: the
   node's) if a password is set, then SUBSCRIBE of every key in table
   (sharded: SSUBSCRIBE of each that want, when not NULL, takes). 0, or
   the first failure (nothing queued after it). */
static inline int redlock__conn_sub_open_queue(const char *user, const char *pass, const redlock__notify *table,
                                               int sharded, redlock__conn_sub_want_fn want, void *want_arg,
                                               redlock__conn_queue_fn queue, void *ctx)
{
    const char *argv[3];
    size_t len[3];
    int k = redlock__conn_auth_argv(user, pass, argv, len);
    redlock__conn_sub_opening o;
    o.queue = queue;
    o.ctx = ctx;
    o.sharded = sharded;
    o.want = want;
    o.want_arg = want_arg;
    o.rc = k ? queue(ctx, REDLOCK__CONN_AUTH, k, argv, len) : 0;
    if (o.rc == 0) redlock__notify_each_key(table, redlock__conn_sub_key, &o);
    return o.rc;
}

/* Does INFO's text say the server has sharded pub/sub (redis_version 7
   or later; Valkey says 7.2.4)? */
static inline int redlock__conn_info_sharded(const char *info, size_t len)
{
    static const char field[] = "redis_version:";
    const size_t flen = sizeof field - 1;
    size_t i = 0;
    while (info && i + flen < len) {
        const char *eol = (const char *)memchr(info + i, '\n', len - i);
        size_t end = eol ? (size_t)(eol - info) : len;
        if (end - i > flen && memcmp(info + i, field, flen) == 0) {
            int major = 0;
            size_t k = i + flen;
            for (; k < end && info[k] >= '0' && info[k] <= '9' && major < 1000; k++) major = major * 10 + (info[k] - '0');
            return major >= 7;
        }
        i = end + 1;
    }
    return 0;
}

/* A reply on a subscriber, as its driver parsed it: its type
   (REDLOCK_REPLY_*), a status's or error's text, and for an array of
   three its first two elements when they are strings (else NULL). */
typedef struct redlock__conn_sub_reply {
    int type;
    const char *str, *word, *channel;
    size_t len, word_len, channel_len;
} redlock__conn_sub_reply;

/* The view of a redlock_reply (redlock_resp.h's parser). */
static inline void redlock__conn_sub_view(redlock__conn_sub_reply *v, const redlock_reply *r)
{
    memset(v, 0, sizeof *v);
    v->type = r->type;
    if (r->type == REDLOCK_REPLY_STATUS || r->type == REDLOCK_REPLY_ERROR) {
        v->str = r->str;
        v->len = r->len;
    }
    if (r->type != REDLOCK_REPLY_ARRAY || r->elements != 3) return;
    if (r->element[0].type == REDLOCK_REPLY_STRING) {
        v->word = r->element[0].str;
        v->word_len = r->element[0].len;
    }
    if (r->element[1].type == REDLOCK_REPLY_STRING) {
        v->channel = r->element[1].str;
        v->channel_len = r->element[1].len;
    }
}

/* Is v a pub/sub array whose first element is `word`? */
static inline int redlock__conn_sub_is(const redlock__conn_sub_reply *v, const char *word)
{
    size_t n = strlen(word);
    return v->type == REDLOCK_REPLY_ARRAY && v->word && v->word_len == n && memcmp(v->word, word, n) == 0;
}

/* What a node's refusal (its error text) says: AUTH when it wants other
   credentials (NOAUTH, WRONGPASS), else SERVER (an ACL that denies the
   channel, a renamed SUBSCRIBE). */
static inline int redlock__conn_refusal_status(const char *str, size_t len)
{
    if (str && len >= 6 && memcmp(str, "NOAUTH", 6) == 0) return REDLOCK_ERR_AUTH;
    if (str && len >= 9 && memcmp(str, "WRONGPASS", 9) == 0) return REDLOCK_ERR_AUTH;
    return REDLOCK_ERR_SERVER;
}

/* What a subscriber's reply means. NEXT: read on. REFUSED: the node
   refused a command (the status, in l->shunned, and its words are kept:
   redlock__conn_shunned); the driver closes the subscriber, then calls
   redlock__conn_sub_hold(). PROTOCOL: a reply it did not expect; the
   driver drops it with PROTOCOL. */
enum { REDLOCK__CONN_SUB_NEXT = 0, REDLOCK__CONN_SUB_REFUSED, REDLOCK__CONN_SUB_PROTOCOL,
       REDLOCK__CONN_SUB_RESHARD /* a sharded subscriber's master no longer serves a key's slot */ };

/* A reply on subscriber l (q: the answers it owes; table: the keys
   followed). A message ["message", channel, payload] (a sharded one's
   "smessage") owes nothing: it wakes the table's waiting locks of the
   channel's key (a channel not ours is ignored). So does a "sunsubscribe"
   nobody asked for: the server dropped the channel, its slot moved
   (RESHARD). Anything else answers the oldest command owed: an error
   refuses it (MOVED or ASK: RESHARD, the slot is another master's); AUTH's
   status, a SUBSCRIBE's or UNSUBSCRIBE's confirmation (the sharded
   verbs' too) is what it asked for (a confirmed SUBSCRIBE: the node hears
   us again); anything else, or a reply with nothing owed, is PROTOCOL.
   A message's wake may run callbacks that close the subscriber: the
   driver checks it is still there before reading on. */
static inline int redlock__conn_sub_answer(redlock__conn_life *l, redlock__conn_ring *q, redlock__notify *table,
                                           const redlock__conn_sub_reply *v)
{
    redlock__conn_req req;
    int owed;
    if (redlock__conn_sub_is(v, "message")) {
        size_t klen;
        const char *key = v->channel ? redlock__notify_key_of(v->channel, v->channel_len, &klen) : NULL;
        if (key) redlock__notify_message(table, key, klen);
        return REDLOCK__CONN_SUB_NEXT;
    }
    if (redlock__conn_sub_is(v, "smessage")) {
        const char *key[2];
        size_t klen[2];
        int k, n = v->channel ? redlock__notify_shard_keys(v->channel, v->channel_len, key, klen) : 0;
        for (k = 0; k < n; k++) redlock__notify_message(table, key[k], klen[k]);
        return REDLOCK__CONN_SUB_NEXT;
    }
    if (redlock__conn_sub_is(v, "sunsubscribe") && !(q->count && q->e[q->head].kind == REDLOCK__CONN_UNSUB))
        return REDLOCK__CONN_SUB_RESHARD;
    owed = redlock__conn_pop(q, &req);
    if (v->type == REDLOCK_REPLY_ERROR) {
        if (v->str && ((v->len > 6 && memcmp(v->str, "MOVED ", 6) == 0) || (v->len > 4 && memcmp(v->str, "ASK ", 4) == 0)))
            return REDLOCK__CONN_SUB_RESHARD;
        redlock__conn_shunned(l, redlock__conn_refusal_status(v->str, v->len), v->str, v->len);
        return REDLOCK__CONN_SUB_REFUSED;
    }
    if (!owed) return REDLOCK__CONN_SUB_PROTOCOL;
    if (req.kind == REDLOCK__CONN_AUTH && v->type == REDLOCK_REPLY_STATUS) {
        l->status = 0;
        return REDLOCK__CONN_SUB_NEXT;
    }
    if (req.kind == REDLOCK__CONN_SUB && (redlock__conn_sub_is(v, "subscribe") || redlock__conn_sub_is(v, "ssubscribe"))) {
        redlock__conn_welcomed(l);
        return REDLOCK__CONN_SUB_NEXT;
    }
    if (req.kind == REDLOCK__CONN_UNSUB && (redlock__conn_sub_is(v, "unsubscribe") || redlock__conn_sub_is(v, "sunsubscribe")))
        return REDLOCK__CONN_SUB_NEXT;
    return REDLOCK__CONN_SUB_PROTOCOL;
}

/* What a subscriber (open: the driver has a connection for it, opening
   or up) is due to do at `now`. OPEN: a lock listens and its delay or
   backoff is over; CLOSE: no lock has listened for idle_us and it is
   open (one that is closed keeps its delay: a refused subscriber's
   backoff outlives the idle close); KEEP: nothing. */
enum { REDLOCK__CONN_SUB_KEEP = 0, REDLOCK__CONN_SUB_OPEN, REDLOCK__CONN_SUB_CLOSE };
static inline int redlock__conn_sub_tend(const redlock__conn_subs *t, const redlock__conn_life *l, int open,
                                         int64_t now)
{
    if (t->table.count && !open && redlock__conn_may_open(l, now)) return REDLOCK__CONN_SUB_OPEN;
    if (!t->table.count && open && now >= redlock__conn_idle_due(t)) return REDLOCK__CONN_SUB_CLOSE;
    return REDLOCK__CONN_SUB_KEEP;
}

/* After every subscriber was tended: an idle close that was due is done. */
static inline void redlock__conn_subs_tended(redlock__conn_subs *t, int64_t now)
{
    if (now >= redlock__conn_idle_due(t)) t->idle_since = 0;
}

/* When a closed subscriber is due to reopen (INT64_MAX: it is open, or
   no lock listens). */
static inline int64_t redlock__conn_sub_reopen_due(const redlock__conn_subs *t, const redlock__conn_life *l, int open)
{
    return !open && t->table.count ? l->retry_at : INT64_MAX;
}

#endif /* REDLOCK_CONN_H */
