/* redlock_hiredis_common.h - what redlock_hiredis.h and redlock_libev.h
   share on top of the connection layer (redlock_conn.h): translating
   hiredis's redisReply into the core's redlock_reply and bounding its
   memory, the node endpoint and its TLS, spotting authentication errors,
   the clock, the subscriber connections, a Sentinel group's sentinels
   (asked blocking: redlock_hiredis.h serves groups, redlock_libev.h
   refuses them). Internal: include one of those
   two adapters instead. */
#ifndef REDLOCK_HIREDIS_COMMON_H
#define REDLOCK_HIREDIS_COMMON_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */
#include "redlock_tls.h"
#include "redlock_nodes.h"
#include "redlock_conn.h"
#include "redlock_sentinel.h"
#include "redlock_cluster.h"

/* TLS: built in with REDLOCK_HIREDIS_TLS on hiredis 1.x (which has
   hiredis_ssl; link -lhiredis_ssl -lssl -lcrypto); asked of an older
   hiredis, the build stops (it would otherwise run without TLS). Without
   REDLOCK_HIREDIS_TLS a node that asks for TLS is refused at init with
   REDLOCK_ERR_NO_TLS. */
#ifdef REDLOCK_HIREDIS_TLS
#if !defined(HIREDIS_MAJOR) || HIREDIS_MAJOR < 1
#error "REDLOCK_HIREDIS_TLS needs hiredis 1.x with hiredis_ssl; this hiredis is older (0.x: Debian 12's) and has no TLS: build against hiredis >= 1.0 (scripts/hiredis1.sh fetches one), or without REDLOCK_HIREDIS_TLS"
#endif
#if defined(__has_include)
#if !__has_include(<hiredis/hiredis_ssl.h>)
#error "REDLOCK_HIREDIS_TLS needs hiredis_ssl (<hiredis/hiredis_ssl.h>), which this hiredis was installed without: build hiredis with USE_SSL=1, or without REDLOCK_HIREDIS_TLS"
#endif
#endif
#define REDLOCK__HIREDIS_HAS_TLS 1
#define REDLOCK__TLS_OPENSSL
#include "redlock_tls.h"
#include <hiredis/hiredis_ssl.h>
#else
#define REDLOCK__HIREDIS_HAS_TLS 0
#endif

/* Translates a redisReply into the core's redlock_reply, pointing into it.
   An array keeps its type but not its elements (elements 0): the core
   reads none, and treats any array as an unexpected reply. */
static inline void redlock__hiredis_translate(const redisReply *r, redlock_reply *out)
{
    memset(out, 0, sizeof *out);
    switch (r->type) {
    case REDIS_REPLY_STATUS:  out->type = REDLOCK_REPLY_STATUS; break;
    case REDIS_REPLY_ERROR:   out->type = REDLOCK_REPLY_ERROR; break;
    case REDIS_REPLY_STRING:  out->type = REDLOCK_REPLY_STRING; break;
    case REDIS_REPLY_INTEGER: out->type = REDLOCK_REPLY_INTEGER; break;
    case REDIS_REPLY_NIL:     out->type = REDLOCK_REPLY_NIL; break;
    case REDIS_REPLY_ARRAY:   out->type = REDLOCK_REPLY_ARRAY; break;
    default:                  out->type = REDLOCK_REPLY_OTHER; break; /* RESP3 (hiredis 1.x) */
    }
    if (out->type == REDLOCK_REPLY_STATUS || out->type == REDLOCK_REPLY_ERROR ||
        out->type == REDLOCK_REPLY_STRING) {
        out->str = r->str ? r->str : "";
        out->len = r->str ? r->len : 0;
    } else if (out->type == REDLOCK_REPLY_INTEGER) {
        out->integer = r->integer;
    }
}

/* Replies a node may owe (both hiredis adapters): REDLOCK_<ADAPTER>_MAX_PENDING,
   as redlock_socket.h's. REDLOCK_HIREDIS_QUEUE and REDLOCK_LIBEV_QUEUE are
   its older names, still read. */
#ifndef REDLOCK_HIREDIS_MAX_PENDING
#if defined(REDLOCK_HIREDIS_QUEUE)
#define REDLOCK_HIREDIS_MAX_PENDING REDLOCK_HIREDIS_QUEUE
#elif defined(REDLOCK_LIBEV_QUEUE)
#define REDLOCK_HIREDIS_MAX_PENDING REDLOCK_LIBEV_QUEUE
#else
#define REDLOCK_HIREDIS_MAX_PENDING (1L << 20)
#endif
#endif
#ifndef REDLOCK_HIREDIS_QUEUE
#define REDLOCK_HIREDIS_QUEUE REDLOCK_HIREDIS_MAX_PENDING
#endif

/* The requests a connection owes replies for, in send order: the
   connection layer's ring (redlock_conn.h), 24 bytes a request, grown by
   doubling up to REDLOCK_HIREDIS_MAX_PENDING. */
static inline int64_t redlock__hiredis_now_us(void);

/* The size of reply r as a RESP2 server sent it: what its connection
   read for it (hiredis does not say; RESP3 types are not spoken here and
   count roughly). */
static inline size_t redlock__hiredis_reply_size(const redisReply *r)
{
    size_t n, k;
    switch (r->type) {
    case REDIS_REPLY_NIL: return 5; /* "$-1\r\n" */
    case REDIS_REPLY_INTEGER:
        return 3 + (r->integer < 0) +
               redlock__conn_digits(r->integer < 0 ? 0 - (uint64_t)r->integer : (uint64_t)r->integer);
    case REDIS_REPLY_STRING: return 5 + redlock__conn_digits((uint64_t)r->len) + (size_t)r->len;
    case REDIS_REPLY_ARRAY:
        n = 3 + redlock__conn_digits((uint64_t)r->elements);
        for (k = 0; k < r->elements; k++) n += redlock__hiredis_reply_size(r->element[k]);
        return n;
    default: return 3 + (size_t)r->len; /* STATUS, ERROR: "+text\r\n" */
    }
}

/* Room for one more request: 0, or REDLOCK_ERR_QUEUE_FULL / NOMEM. */
static inline int redlock__hiredis_reserve(redlock__conn_ring *q)
{
    return redlock__conn_reserve(q, 16, (size_t)REDLOCK_HIREDIS_MAX_PENDING);
}

/* Appends a request, owed from now: 0, or REDLOCK_ERR_QUEUE_FULL / NOMEM. */
static inline int redlock__hiredis_push(redlock__conn_ring *q, int kind, redlock_tag tag)
{
    int rc = redlock__hiredis_reserve(q);
    if (rc == 0) redlock__conn_push(q, kind, tag, redlock__hiredis_now_us());
    return rc;
}

/* Takes back the request just appended (it could not be sent). */
static inline void redlock__hiredis_unpush(redlock__conn_ring *q) { q->count--; }

/* The memory of the reply a reader is building, bounded. hiredis builds a
   reply's objects as its bytes arrive and keeps them until the reply is
   complete, so a bound on unparsed bytes alone lets an endless array
   (`*100000000` then `:1` after `:1`) take memory without end. These
   hooks take the place of the reader's object functions: each object is
   counted as hiredis allocates it (a redisReply, a string's bytes, an
   array's element pointers, made at its header) before it is made, and a
   reply that would pass `max` makes the reader fail at once, nothing
   built for it. Every reply the core or a subscriber expects is small.
   orig: hiredis's own functions, which build the objects; NULL for a
   reader that only counts (redlock_libev.h checks bytes that way before
   hiredis sees them). */
#if defined(HIREDIS_MAJOR) && HIREDIS_MAJOR >= 1
typedef size_t redlock__hiredis_nelem; /* createArray's element count */
#define REDLOCK__HIREDIS_RESP3_OBJECTS 1 /* createDouble, createBool */
#else
typedef int redlock__hiredis_nelem;
#define REDLOCK__HIREDIS_RESP3_OBJECTS 0
#endif
typedef struct redlock__hiredis_bound {
    redisReplyObjectFunctions fn;   /* the reader's: these hooks */
    redisReplyObjectFunctions *orig;
    size_t cost, max;               /* of the reply being read */
    int over;                       /* a reply went past max: the reader failed for it */
} redlock__hiredis_bound;

/* Counts `bytes` more for the reply task t belongs to (a task without a
   parent starts a reply); NULL when that passes the bound. */
static inline redlock__hiredis_bound *redlock__hiredis_bound_take(const redisReadTask *t, size_t bytes)
{
    redlock__hiredis_bound *b = (redlock__hiredis_bound *)t->privdata;
    if (!t->parent) b->cost = 0;
    if (bytes > b->max || b->cost > b->max - bytes) {
        b->over = 1;
        return NULL;
    }
    b->cost += bytes;
    return b;
}

static inline void *redlock__hiredis_bound_string(const redisReadTask *t, char *s, size_t len)
{
    redlock__hiredis_bound *b = redlock__hiredis_bound_take(t, sizeof(redisReply) + (len + 1));
    if (!b) return NULL;
    return b->orig ? b->orig->createString(t, s, len) : (void *)b;
}

static inline void *redlock__hiredis_bound_array(const redisReadTask *t, redlock__hiredis_nelem n)
{
    redlock__hiredis_bound *b = (redlock__hiredis_bound *)t->privdata;
    size_t bytes = (size_t)-1; /* a count no bound allows */
    if ((long long)n >= 0 && (unsigned long long)n <= b->max / sizeof(void *))
        bytes = sizeof(redisReply) + (size_t)n * sizeof(void *);
    if (!(b = redlock__hiredis_bound_take(t, bytes))) return NULL;
    return b->orig ? b->orig->createArray(t, n) : (void *)b;
}

static inline void *redlock__hiredis_bound_integer(const redisReadTask *t, long long v)
{
    redlock__hiredis_bound *b = redlock__hiredis_bound_take(t, sizeof(redisReply));
    if (!b) return NULL;
    return b->orig ? b->orig->createInteger(t, v) : (void *)b;
}

static inline void *redlock__hiredis_bound_nil(const redisReadTask *t)
{
    redlock__hiredis_bound *b = redlock__hiredis_bound_take(t, sizeof(redisReply));
    if (!b) return NULL;
    return b->orig ? b->orig->createNil(t) : (void *)b;
}

#if REDLOCK__HIREDIS_RESP3_OBJECTS
static inline void *redlock__hiredis_bound_double(const redisReadTask *t, double v, char *s, size_t len)
{
    redlock__hiredis_bound *b = redlock__hiredis_bound_take(t, sizeof(redisReply) + (len + 1));
    if (!b) return NULL;
    return b->orig ? b->orig->createDouble(t, v, s, len) : (void *)b;
}

static inline void *redlock__hiredis_bound_bool(const redisReadTask *t, int v)
{
    redlock__hiredis_bound *b = redlock__hiredis_bound_take(t, sizeof(redisReply));
    if (!b) return NULL;
    return b->orig ? b->orig->createBool(t, v) : (void *)b;
}
#endif

/* Puts the hooks on reader r (a new connection's), bounding each reply to
   max bytes of objects. b must stay where it is while r lives. */
static inline void redlock__hiredis_bound_install(redlock__hiredis_bound *b, redisReader *r, size_t max)
{
    memset(b, 0, sizeof *b);
    b->orig = r->fn;
    b->max = max;
    b->fn.createString = redlock__hiredis_bound_string;
    b->fn.createArray = redlock__hiredis_bound_array;
    b->fn.createInteger = redlock__hiredis_bound_integer;
    b->fn.createNil = redlock__hiredis_bound_nil;
#if REDLOCK__HIREDIS_RESP3_OBJECTS
    b->fn.createDouble = redlock__hiredis_bound_double;
    b->fn.createBool = redlock__hiredis_bound_bool;
#endif
    b->fn.freeObject = b->orig ? b->orig->freeObject : NULL; /* a counting reader built nothing */
    r->fn = &b->fn;
    r->privdata = b;
}

/* A node of either hiredis adapter (redlock_libev_node is the same type):
   redlock_node (redlock_nodes.h, every adapter's), each field defaulting
   to the configuration's; redlock_parse_nodes() fills them from a list. */
typedef redlock_node redlock_hiredis_node;

/* The configuration of either hiredis adapter (redlock_libev_config is the
   same type). */
typedef struct redlock_hiredis_config {
    int node_count;
    redlock_hiredis_node node[REDLOCK_MAX_NODES];
    const char *username, *password; /* defaults for every node */
    int db;
    redlock_tls tls;         /* enable set: TLS on every node (needs REDLOCK_HIREDIS_TLS
                                and hiredis 1.x, else init says REDLOCK_ERR_NO_TLS) */
    int connect_timeout_ms;  /* 0: 1000 (negative, here or in command_timeout_ms,
                                reconnect_delay_ms, notify_idle_ms: INVALID) */
    int command_timeout_ms;  /* 0: 1000; a node this late is dropped */
    int reconnect_delay_ms;  /* 0: 100 */
    int notify_off;          /* 1: no release notifications (redlock.h section 10):
                                a waiting acquire sleeps out its retry delays */
    int notify_idle_ms;      /* 0: 1000; a subscriber connection with no lock
                                waiting is closed after this long */
    int info_off;            /* 1: no INFO nor CONFIG on new connections: the core never
                                learns what a node may evict nor that it restarted
                                (redlock.h section 4) */
    int watchdog_thread;     /* redlock_hiredis.h only: a background thread drives
                                the core (libev: INVALID, the loop is yours) */
    redlock_config core;     /* core settings; node_count is taken from above.
                                Zero fields: defaults (see redlock.h) */
    void (*on_event)(void *user, const redlock_event *ev); /* optional */
    void *user;
} redlock_hiredis_config;

/* Defaults: no nodes, timeouts 1000 / 1000 / 100 ms, core defaults. */
static inline void redlock_hiredis_config_init(redlock_hiredis_config *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = 1000;
    o->command_timeout_ms = 1000;
    o->reconnect_delay_ms = 100;
    redlock_config_init(&o->core);
}

/* A configuration's timeouts, defaults applied (ms); INVALID for a negative one. */
static inline int redlock__hiredis_timeouts(const redlock_hiredis_config *o, int *connect, int *command, int *reconnect)
{
    if (o->connect_timeout_ms < 0 || o->command_timeout_ms < 0 || o->reconnect_delay_ms < 0 || o->notify_idle_ms < 0)
        return REDLOCK_ERR_INVALID;
    *connect = o->connect_timeout_ms ? o->connect_timeout_ms : 1000;
    *command = o->command_timeout_ms ? o->command_timeout_ms : 1000;
    *reconnect = o->reconnect_delay_ms ? o->reconnect_delay_ms : 100;
    return 0;
}

/* NODES for a count out of range, INVALID for a bad port, else 0. */
static inline int redlock__hiredis_check_nodes(const redlock_hiredis_node *node, int count)
{
    int i;
    if (count < 1 || count > REDLOCK_MAX_NODES) return REDLOCK_ERR_NODES;
    for (i = 0; i < count; i++)
        if (node[i].port < 0 || node[i].port > 65535) return REDLOCK_ERR_INVALID;
    return 0;
}

static inline char *redlock__hiredis_strdup(const char *s)
{
    size_t l;
    char *p;
    if (!s) return NULL;
    l = strlen(s) + 1;
    p = (char *)malloc(l);
    if (p) memcpy(p, s, l);
    return p;
}

/* A node as a connection needs it: copied at init (defaults applied), the
   password wiped when freed; for TLS the context made from its settings,
   the name to check and whether to. */
typedef struct redlock__hiredis_endpoint {
    char *host, *unix_path, *user, *pass; /* unix_path set: host is NULL */
    int port, db;
    int info;            /* a new command connection asks INFO and CONFIG (node health) */
    redlock__conn_health health; /* what they said (redlock_conn.h) */
    void *tls_ctx;       /* SSL_CTX, or NULL: plain text */
    char *tls_name;
    int tls_verify;
    struct redlock__hiredis_sentinels *sentinels; /* a Sentinel group's (host: its primary once
                                                     named, else NULL); NULL: a single server */
    struct redlock__hiredis_cluster *cluster;     /* a cluster's addresses and routing (host:
                                                     its first seed); NULL: not a cluster */
    int life_pending;    /* a cluster link: health.life not yet told (the map must name it) */
} redlock__hiredis_endpoint;

/* A Sentinel group's sentinels (redlock_sentinel.h): asked which server
   is the primary at each connection, from the one that answered last,
   on a blocking context kept open to it. */
typedef struct redlock__hiredis_sentinels {
    char *group, *user, *pass;
    char *host[REDLOCK_NODES_MAX_SEEDS];
    int port[REDLOCK_NODES_MAX_SEEDS];
    int count, next;
    int named;                     /* the endpoint's host/port are a primary some sentinel named */
    redisContext *ctx;             /* open to sentinel `next` (logged in), or NULL */
    void *ssl;                     /* TLS: ctx's session (hiredis owns it), or NULL */
    redlock__hiredis_bound bound;  /* its reader's reply memory */
    /* a round asked without blocking (redlock__hiredis_ask_*: the libev adapter's) */
    int asking, history, tried;    /* a round under way; SENTINEL MASTER too; sentinels failed in it */
    int connecting, need_flush, auth, owed, got; /* this sentinel's: AUTH asked first; replies owed, read */
    int64_t until;                 /* this sentinel's answer is due by then (connect_timeout_ms) */
    char said_host[REDLOCK_SENTINEL_MAX_HOST + 1];
    int said_port;
    int64_t said_ago;              /* the round's answer: the primary, when the group failed over (-1) */
    int refused;                   /* one refused us over TLS in this round */
    char why[128];                 /* a failed round's words (its last sentinel's, or the TLS refusal's) */
    /* the +switch-master watch (redlock__hiredis_watch_*: the libev adapter's) */
    redisContext *wctx;            /* SUBSCRIBEd (or subscribing) at sentinel `wat`, or NULL */
    void *wssl;                    /* TLS: wctx's session, or NULL */
    redlock__hiredis_bound wbound; /* its reader's reply memory */
    int wat, wconnecting, wflush, wauth, wconfirmed;
    int64_t wuntil;                /* its SUBSCRIBE is confirmed by then, or it closes */
    int64_t wretry;                /* closed after a failure: opened again from then */
} redlock__hiredis_sentinels;

static inline void redlock__hiredis_wipe_free(char *s)
{
    if (s) {
        volatile char *v = s;
        while (*v) *v++ = 0;
    }
    free(s);
}

static inline void redlock__hiredis_sentinels_free(redlock__hiredis_sentinels *g)
{
    int k;
    if (!g) return;
    if (g->ctx) redisFree(g->ctx);
    if (g->wctx) redisFree(g->wctx);
    for (k = 0; k < g->count; k++) free(g->host[k]);
    free(g->group);
    redlock__hiredis_wipe_free(g->user);
    redlock__hiredis_wipe_free(g->pass);
    free(g);
}

/* e's copy of node nd's sentinels and their login: 0, or NOMEM (what
   was made is freed with the endpoint). */
static inline int redlock__hiredis_sentinels_init(redlock__hiredis_endpoint *e, const redlock_node *nd)
{
    redlock__hiredis_sentinels *g = (redlock__hiredis_sentinels *)calloc(1, sizeof *g);
    int k, bad = 0;
    if (!(e->sentinels = g)) return REDLOCK_ERR_NOMEM;
    bad |= !(g->group = redlock__hiredis_strdup(nd->master));
    if (nd->sentinel_password) bad |= !(g->pass = redlock__hiredis_strdup(nd->sentinel_password));
    if (nd->sentinel_username) bad |= !(g->user = redlock__hiredis_strdup(nd->sentinel_username));
    for (k = 0; k <= nd->seed_count && k < REDLOCK_NODES_MAX_SEEDS; k++) {
        const char *h = k ? nd->seed[k - 1].host : nd->host;
        int port = k ? nd->seed[k - 1].port : nd->port;
        bad |= !(g->host[k] = redlock__hiredis_strdup(h && h[0] ? h : "127.0.0.1"));
        g->port[k] = port > 0 ? port : 26379;
        g->count = k + 1;
    }
    return bad ? REDLOCK_ERR_NOMEM : 0;
}

/* ---- a Redis Cluster node: its addresses, its routing, its commands ----
   A cluster (redis-cluster://h:p[+h:p...], redlock_nodes.h) is ONE node
   of the quorum. The adapters keep one connection per address they talk
   to (a "link": the seeds first, then each master the slot map or a
   redirection names), opened when a command is first routed there. Where
   a command goes and what a reply means (MOVED, ASK, TRYAGAIN,
   CLUSTERDOWN), when the map is asked again, and what each master's
   INFO says of its keys are redlock_cluster.h's (redlock_cluster); here,
   the table of addresses, the CLUSTER SLOTS owed, and the copy of each
   command written, kept until its reply (a redirection sends it again).
   While the map does not know a slot, its command goes to a seed, whose
   MOVED teaches it (nothing waits for the map). */

/* Links of one cluster node: its seeds, then masters. */
#define REDLOCK__HIREDIS_LINKS (REDLOCK_NODES_MAX_SEEDS + REDLOCK_CLUSTER_MAX_MASTERS)
/* CLUSTER SLOTS on a link: a request kind beside redlock_conn.h's. */
enum { REDLOCK__HIREDIS_SLOTS = 64 };

typedef struct redlock__hiredis_cluster {
    redlock_cluster *rc;                /* the routing: slot map, masters (by index), staleness */
    char *host[REDLOCK__HIREDIS_LINKS];
    int port[REDLOCK__HIREDIS_LINKS];
    int links, seeds;                   /* addresses known; the first `seeds` are the seeds */
    int next_seed;                      /* the seed asked while the map does not know a slot */
    int refreshing;                     /* a CLUSTER SLOTS is owed an answer */
    unsigned char evicts[REDLOCK__HIREDIS_LINKS]; /* what each address may evict (redlock_evicts),
                                                     as its last INFO said */
    unsigned char pubsub[REDLOCK__HIREDIS_LINKS]; /* its last INFO: 0 none yet, 1 without sharded
                                                     pub/sub, 2 with (redlock__conn_info_sharded) */
    int sharded;                        /* told to the core (redlock_node_set_sharded): releases
                                           SPUBLISH, a subscriber per master hears them */
    unsigned char serves[REDLOCK_CLUSTER_MAX_MASTERS]; /* the last CLUSTER SLOTS named it a slot's
                                                          master (one that left is not) */
} redlock__hiredis_cluster;

static inline void redlock__hiredis_cluster_free(redlock__hiredis_cluster *cl)
{
    int k;
    if (!cl) return;
    for (k = 0; k < cl->links; k++) free(cl->host[k]);
    free(cl->rc);
    free(cl);
}

/* The link of host:port (hlen bytes), added if new: its index, or -1
   when the table is full or out of memory. */
static inline int redlock__hiredis_cluster_link(redlock__hiredis_cluster *cl, const char *host, size_t hlen, int port)
{
    int k;
    char *h;
    for (k = 0; k < cl->links; k++)
        if (cl->port[k] == port && strlen(cl->host[k]) == hlen && memcmp(cl->host[k], host, hlen) == 0) return k;
    if (cl->links >= REDLOCK__HIREDIS_LINKS || !(h = (char *)malloc(hlen + 1))) return -1;
    memcpy(h, host, hlen);
    h[hlen] = 0;
    cl->host[cl->links] = h;
    cl->port[cl->links] = port;
    return cl->links++;
}

/* The link whose INFO named the worst eviction policy (for its name), or -1. */
static inline int redlock__hiredis_cluster_worst(const redlock__hiredis_cluster *cl)
{
    int k, at = -1;
    for (k = 0; k < cl->links; k++)
        if (at < 0 || cl->evicts[k] > cl->evicts[at]) at = k;
    return at;
}

/* The link of master m of the map: -1 when the table is full. */
static inline int redlock__hiredis_cluster_master_link(redlock__hiredis_cluster *cl, int m)
{
    const redlock_cluster_master *ms = &cl->rc->map.master[m];
    return redlock__hiredis_cluster_link(cl, ms->host, strlen(ms->host), ms->port);
}

/* The master index of link k in the map, or -1 (not a master it knows). */
static inline int redlock__hiredis_cluster_master_of(const redlock__hiredis_cluster *cl, int k)
{
    int m;
    for (m = 0; m < cl->rc->map.masters; m++)
        if (cl->rc->map.master[m].port == cl->port[k] && strcmp(cl->rc->map.master[m].host, cl->host[k]) == 0) return m;
    return -1;
}

/* e's cluster: its seeds (host and seed[] of node nd) and an empty map;
   e's host and port are the first seed's (its subscriber's address).
   0, or NOMEM (freed with the endpoint). */
static inline int redlock__hiredis_cluster_init(redlock__hiredis_endpoint *e, const redlock_node *nd)
{
    redlock__hiredis_cluster *cl = (redlock__hiredis_cluster *)calloc(1, sizeof *cl);
    int k;
    if (!(e->cluster = cl) || !(cl->rc = (redlock_cluster *)malloc(sizeof *cl->rc))) return REDLOCK_ERR_NOMEM;
    redlock_cluster_init(cl->rc);
    for (k = 0; k <= nd->seed_count && k < REDLOCK_NODES_MAX_SEEDS; k++) {
        const char *h = k ? nd->seed[k - 1].host : nd->host;
        int port = k ? nd->seed[k - 1].port : nd->port;
        if (!h || !h[0]) h = "127.0.0.1";
        if (redlock__hiredis_cluster_link(cl, h, strlen(h), port > 0 ? port : 6379) < 0) return REDLOCK_ERR_NOMEM;
    }
    cl->seeds = cl->links;
    e->host = redlock__hiredis_strdup(cl->host[0]);
    e->port = cl->port[0];
    return e->host ? 0 : REDLOCK_ERR_NOMEM;
}

/* A script whose keys span slots, which the cluster would refuse with
   CROSSSLOT: 1, and the node's status says why instead (INVALID). */
static inline int redlock__hiredis_cross_slot(redlock__conn_life *life, const redlock_command *cmd)
{
    if (!redlock_cluster_cross_slot(cmd)) return 0;
    redlock__conn_set(life, REDLOCK_ERR_INVALID,
                      "cluster: the lock's keys are in different slots (a fenced lock's key needs a {hash tag})");
    return 1;
}

/* The link a command goes to: the master of its key's slot (a command
   without a key: the first master), or a seed while the map does not
   know (*hops -1: the seed's MOVED is the map's answer, not a
   redirection; else 0). -1: the table is full (NOMEM). */
static inline int redlock__hiredis_cluster_route(redlock__hiredis_cluster *cl, const redlock_command *cmd, int *hops)
{
    int m = redlock_cluster_route(cl->rc, cmd);
    if (m == REDLOCK_CLUSTER_ANY) m = cl->rc->map.masters > 0 ? 0 : REDLOCK_CLUSTER_UNKNOWN;
    *hops = m < 0 ? -1 : 0;
    return m < 0 ? cl->next_seed : redlock__hiredis_cluster_master_link(cl, m);
}

/* Is a CLUSTER SLOTS due now (redlock_cluster_refresh_due: the map empty
   or stale, not asked within REDLOCK_CLUSTER_REFRESH_MS), none owed? 1:
   it counts as asked. */
static inline int redlock__hiredis_cluster_refresh_due(redlock__hiredis_cluster *cl, int64_t now)
{
    if (cl->refreshing || !redlock_cluster_refresh_due(cl->rc, now)) return 0;
    cl->refreshing = 1;
    redlock_cluster_refresh_asked(cl->rc, now);
    return 1;
}

/* r as the core's redlock_reply, nested arrays and all (CLUSTER SLOTS'
   answer is three deep), in pool[cap] (*used counted): 0, or -1 when it
   does not fit or nests deeper than `depth`. Points into r. */
static inline int redlock__hiredis_tree(const redisReply *r, redlock_reply *out, redlock_reply *pool, size_t cap,
                                        size_t *used, int depth)
{
    size_t k;
    redlock_reply *el;
    redlock__hiredis_translate(r, out);
    if (r->type != REDIS_REPLY_ARRAY) return 0;
    if (depth <= 0 || r->elements > cap - *used) return -1;
    el = pool + *used;
    out->element = el;
    out->elements = r->elements;
    *used += r->elements;
    for (k = 0; k < r->elements; k++)
        if (redlock__hiredis_tree(r->element[k], &el[k], pool, cap, used, depth - 1) != 0) return -1;
    return 0;
}

/* The elements of r's arrays, `depth` deep (what redlock__hiredis_tree needs). */
static inline size_t redlock__hiredis_tree_size(const redisReply *r, int depth)
{
    size_t k, n;
    if (r->type != REDIS_REPLY_ARRAY || depth <= 0) return 0;
    for (n = r->elements, k = 0; k < r->elements; k++) n += redlock__hiredis_tree_size(r->element[k], depth - 1);
    return n;
}

/* CLUSTER SLOTS's answer on link k (redlock_cluster_update: a malformed
   answer or an error leaves the map as it was). The count of masters
   promoted since the last map (a failover: the caller tells the core),
   or -1 when nothing was loaded. */
static inline int redlock__hiredis_cluster_slots(redlock__hiredis_cluster *cl, int k, const redisReply *r)
{
    redlock_reply top, *pool;
    size_t used = 0, cap = redlock__hiredis_tree_size(r, 4);
    int failovers = 0, rc = -1;
    cl->refreshing = 0;
    if (r->type != REDIS_REPLY_ARRAY || !(pool = (redlock_reply *)malloc((cap ? cap : 1) * sizeof *pool))) return -1;
    if (redlock__hiredis_tree(r, &top, pool, cap, &used, 4) == 0 &&
        redlock_cluster_update(cl->rc, &top, cl->host[k], &failovers) >= 0) {
        int s;
        rc = failovers;
        memset(cl->serves, 0, sizeof cl->serves);
        for (s = 0; s < REDLOCK_CLUSTER_SLOTS; s++)
            if (cl->rc->map.owner[s]) cl->serves[cl->rc->map.owner[s] - 1] = 1;
    }
    free(pool);
    return rc;
}

/* Link k failed: the map may be out of date, and while it does not know
   a slot the next seed is asked. */
static inline void redlock__hiredis_cluster_failed(redlock__hiredis_cluster *cl, int k)
{
    redlock_cluster_stale(cl->rc);
    if (k == cl->next_seed && cl->seeds > 1) cl->next_seed = (cl->next_seed + 1) % cl->seeds;
}

/* What link k's INFO and CONFIG said of its server (e->health.life,
   pending in e->life_pending until the map names the address a master):
   the core tracks one life per node, a cluster has several masters, so
   each master's is followed by redlock_cluster_life(), and a master that
   restarted, or first answers young and keeps no keys across restarts,
   is told to the core as a failover that long ago. */
static inline void redlock__hiredis_cluster_apply(redlock_client *client, int node, redlock__hiredis_cluster *cl, int k,
                                                  redlock__hiredis_endpoint *e)
{
    int m;
    int64_t ago = 0;
    if (!e->life_pending || (m = redlock__hiredis_cluster_master_of(cl, k)) < 0) return;
    e->life_pending = 0;
    if (redlock_cluster_life(cl->rc, m, &e->health.life, &ago)) redlock_node_failed_over(client, node, ago);
}

/* The commands a link wrote, in order beside its request ring
   (redlock_conn.h): a core command's RESP text, kept until its reply
   (NULL for the adapter's own), and how often it was redirected. */
typedef struct redlock__hiredis_copy {
    char *cmd;
    size_t len;
    int hops;
} redlock__hiredis_copy;

typedef struct redlock__hiredis_copies {
    redlock__hiredis_copy *e;
    size_t head, count, cap;
} redlock__hiredis_copies;

/* Files a copy (cmd: taken over, freed with it): 0, or NOMEM (cmd freed). */
static inline int redlock__hiredis_copies_push(redlock__hiredis_copies *q, char *cmd, size_t len, int hops)
{
    redlock__hiredis_copy *x;
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16, k;
        redlock__hiredis_copy *ne = (redlock__hiredis_copy *)malloc(cap * sizeof *ne);
        if (!ne) {
            redisFreeCommand(cmd);
            return REDLOCK_ERR_NOMEM;
        }
        for (k = 0; k < q->count; k++) ne[k] = q->e[(q->head + k) % q->cap];
        free(q->e);
        q->e = ne;
        q->cap = cap;
        q->head = 0;
    }
    x = &q->e[(q->head + q->count++) % q->cap];
    x->cmd = cmd;
    x->len = len;
    x->hops = hops;
    return 0;
}

/* The oldest copy into *out (its text now the caller's); 0 if none. */
static inline int redlock__hiredis_copies_pop(redlock__hiredis_copies *q, redlock__hiredis_copy *out)
{
    if (!q->count) return 0;
    *out = q->e[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return 1;
}

/* Takes back the copy just filed (its command could not be sent). */
static inline void redlock__hiredis_copies_unpush(redlock__hiredis_copies *q)
{
    q->count--;
    redisFreeCommand(q->e[(q->head + q->count) % q->cap].cmd);
}

static inline void redlock__hiredis_copies_free(redlock__hiredis_copies *q)
{
    redlock__hiredis_copy x;
    while (redlock__hiredis_copies_pop(q, &x)) redisFreeCommand(x.cmd);
    free(q->e);
    memset(q, 0, sizeof *q);
}

/* A command as RESP text (hiredis formats it): 0 and *out (freed with
   redisFreeCommand), or NOMEM. */
static inline int redlock__hiredis_format(const redlock_command *cmd, char **out, size_t *len)
{
    char *s = NULL;
    long long n = redisFormatCommandArgv(&s, cmd->argc, (const char **)cmd->argv, cmd->argvlen);
    if (n < 0 || !s) return REDLOCK_ERR_NOMEM;
    *out = s;
    *len = (size_t)n;
    return 0;
}

/* e's TLS (tls: the node's settings, or NULL: plain text): the context,
   and the name to check if the settings fix one (else each connection's
   host: a Sentinel group's primary, a cluster's master, a sentinel). */
static inline int redlock__hiredis_endpoint_tls(redlock__hiredis_endpoint *e, const redlock_tls *tls, const char *path)
{
    if (!tls) return 0;
    if (path || !tls->cert != !tls->key) return REDLOCK_ERR_INVALID;
#if REDLOCK__HIREDIS_HAS_TLS
    {
        SSL_CTX *ctx = NULL;
        int rc;
        if (tls->server_name && !(e->tls_name = redlock__hiredis_strdup(tls->server_name))) return REDLOCK_ERR_NOMEM;
        e->tls_verify = !tls->insecure_skip_verify;
        rc = redlock__tls_context(tls, &ctx);
        e->tls_ctx = ctx;
        return rc;
    }
#else
    (void)e;
    return REDLOCK_ERR_NO_TLS; /* not built in: REDLOCK_HIREDIS_TLS (hiredis 1.x) */
#endif
}

/* 0, NOMEM, INVALID (TLS on a Unix socket, a certificate without its
   key), NO_TLS (not built in), or TLS (a CA / certificate / key that
   cannot be loaded); what was made is freed by
   redlock__hiredis_endpoint_free. */
static inline int redlock__hiredis_endpoint_init(redlock__hiredis_endpoint *e, const redlock_hiredis_node *nd,
                                                 const redlock_hiredis_config *o)
{
    const char *u = nd->username ? nd->username : o->username;
    const char *p = nd->password ? nd->password : o->password;
    const char *path = nd->unix_path ? nd->unix_path : nd->host && nd->host[0] == '/' ? nd->host : NULL;
    redlock_tls t;
    const redlock_tls *tls = redlock__tls_settings(&nd->tls, &o->tls, &t);
    /* single servers, Sentinel groups and clusters */
    if (nd->kind == REDLOCK_NODE_SENTINEL) {
        int rc;
        if (!nd->master || path) return REDLOCK_ERR_INVALID;
        e->db = nd->db > 0 ? nd->db : o->db;
        e->info = !o->info_off;
        e->user = redlock__hiredis_strdup(u);
        e->pass = redlock__hiredis_strdup(p);
        if ((u && !e->user) || (p && !e->pass)) return REDLOCK_ERR_NOMEM;
        if ((rc = redlock__hiredis_sentinels_init(e, nd)) != 0) return rc;
        return redlock__hiredis_endpoint_tls(e, tls, NULL); /* host and port: the primary the sentinels name */
    }
    if (nd->kind == REDLOCK_NODE_CLUSTER) {
        int rc;
        /* db 0 only (a cluster has no other), not a Unix socket, nor with
           WAIT (it names no key: no master to go to) */
        if (path || (nd->db > 0 ? nd->db : o->db) > 0 || o->core.wait_replicas > 0)
            return REDLOCK_ERR_INVALID;
        e->info = !o->info_off;
        e->user = redlock__hiredis_strdup(u);
        e->pass = redlock__hiredis_strdup(p);
        if ((u && !e->user) || (p && !e->pass)) return REDLOCK_ERR_NOMEM;
        if ((rc = redlock__hiredis_cluster_init(e, nd)) != 0) return rc;
        return redlock__hiredis_endpoint_tls(e, tls, NULL); /* every master's link in TLS */
    }
    if (nd->kind != REDLOCK_NODE_SERVER) return REDLOCK_ERR_INVALID;
    e->port = nd->port > 0 ? nd->port : 6379;
    e->db = nd->db > 0 ? nd->db : o->db;
    e->info = !o->info_off;
    e->host = path ? NULL : redlock__hiredis_strdup(nd->host ? nd->host : "127.0.0.1");
    e->unix_path = redlock__hiredis_strdup(path);
    e->user = redlock__hiredis_strdup(u);
    e->pass = redlock__hiredis_strdup(p);
    if ((!path && !e->host) || (path && !e->unix_path) || (u && !e->user) || (p && !e->pass)) return REDLOCK_ERR_NOMEM;
    return redlock__hiredis_endpoint_tls(e, tls, path);
}

static inline void redlock__hiredis_endpoint_free(redlock__hiredis_endpoint *e)
{
    redlock__hiredis_wipe_free(e->pass);
    free(e->host);
    free(e->unix_path);
    free(e->user);
    free(e->tls_name);
    redlock__hiredis_sentinels_free(e->sentinels);
    e->sentinels = NULL;
    redlock__hiredis_cluster_free(e->cluster);
    e->cluster = NULL;
#if REDLOCK__HIREDIS_HAS_TLS
    SSL_CTX_free((SSL_CTX *)e->tls_ctx);
#endif
    e->host = e->unix_path = e->user = e->pass = e->tls_name = NULL;
    e->tls_ctx = NULL;
}

/* The endpoint of link k of cluster node `nd` (its address, the node's
   login and health asks): 0, or NOMEM (freed with the endpoint). */
static inline int redlock__hiredis_link_endpoint(redlock__hiredis_endpoint *e, const redlock__hiredis_endpoint *nd, int k)
{
    memset(e, 0, sizeof *e);
    e->port = nd->cluster->port[k];
    e->info = nd->info;
    e->host = redlock__hiredis_strdup(nd->cluster->host[k]);
    e->user = redlock__hiredis_strdup(nd->user);
    e->pass = redlock__hiredis_strdup(nd->pass);
#if REDLOCK__HIREDIS_HAS_TLS
    if (nd->tls_ctx) { /* in TLS as the node asks; the name: the master's host unless fixed */
        SSL_CTX_up_ref((SSL_CTX *)nd->tls_ctx);
        e->tls_ctx = nd->tls_ctx;
        e->tls_verify = nd->tls_verify;
        if (nd->tls_name && !(e->tls_name = redlock__hiredis_strdup(nd->tls_name))) return REDLOCK_ERR_NOMEM;
    }
#endif
    return !e->host || (nd->user && !e->user) || (nd->pass && !e->pass) ? REDLOCK_ERR_NOMEM : 0;
}

/* TCP is up on ctx, a connection to host: start TLS on it (the name
   checked: e's server_name if set, else host). hiredis owns the session
   from then on (freed with the context); *ssl borrows it, for the words
   of a failure. 0, or a status with why filled. */
static inline int redlock__hiredis_tls_start_to(const redlock__hiredis_endpoint *e, const char *host, redisContext *ctx,
                                                void **ssl, char *why, size_t cap)
{
#if REDLOCK__HIREDIS_HAS_TLS
    SSL *s = redlock__tls_session((SSL_CTX *)e->tls_ctx, e->tls_name ? e->tls_name : host, e->tls_verify);
    if (!s) {
        snprintf(why, cap, "%s", "TLS setup: out of memory");
        return REDLOCK_ERR_NOMEM;
    }
    ERR_clear_error();
    if (redisInitiateSSL(ctx, s) != REDIS_OK) {
        int rc = redlock__tls_refused(s, e->tls_verify, 0, 1) ? REDLOCK_ERR_TLS : REDLOCK_ERR_TRANSPORT;
        redlock__tls_words(s, e->tls_verify, 0, "handshake", why, cap);
        SSL_free(s); /* not taken over on failure */
        return rc;
    }
    *ssl = s;
    return 0;
#else
    (void)e; (void)host; (void)ctx; (void)ssl;
    snprintf(why, cap, "%s", "TLS not built in");
    return REDLOCK_ERR_NO_TLS;
#endif
}

/* The same on e's own connection (to its host: a Sentinel group's
   primary, a cluster link's master). */
static inline int redlock__hiredis_tls_start(const redlock__hiredis_endpoint *e, redisContext *ctx, void **ssl,
                                             char *why, size_t cap)
{
    return redlock__hiredis_tls_start_to(e, e->host ? e->host : "127.0.0.1", ctx, ssl, why, cap);
}

/* A TLS connection failed reading or writing: the words of TLS when the
   handshake had not finished or OpenSSL says why, and TLS when that is a
   refusal (redlock_tls.h), else `status`. */
static inline int redlock__hiredis_tls_failure(const redlock__hiredis_endpoint *e, void *ssl, int status,
                                               char *why, size_t cap)
{
#if REDLOCK__HIREDIS_HAS_TLS
    if (ssl && (!SSL_is_init_finished((SSL *)ssl) || ERR_peek_error())) {
        int handshake = !SSL_is_init_finished((SSL *)ssl);
        redlock__tls_words((SSL *)ssl, e->tls_verify, 0, handshake ? "handshake" : "read", why, cap);
        if (redlock__tls_refused((SSL *)ssl, e->tls_verify, 0, handshake)) return REDLOCK_ERR_TLS;
    }
#else
    (void)e; (void)ssl; (void)why; (void)cap;
#endif
    return status;
}

/* Is the TLS handshake of this connection still running? */
static inline int redlock__hiredis_tls_handshaking(void *ssl)
{
#if REDLOCK__HIREDIS_HAS_TLS
    return ssl && !SSL_is_init_finished((SSL *)ssl);
#else
    (void)ssl;
    return 0;
#endif
}

/* Does the TLS session wait for the socket to be readable before it can
   write (during the handshake, mostly)? */
static inline int redlock__hiredis_tls_wants_read(void *ssl)
{
#if REDLOCK__HIREDIS_HAS_TLS
    return ssl && SSL_want_read((SSL *)ssl);
#else
    (void)ssl;
    return 0;
#endif
}

/* Reads decrypted bytes of a TLS connection past its handshake: > 0
   bytes, 0 closed, -1 nothing yet (or TLS must write first: hiredis's
   write handler does when the socket lets it), -2 failed. */
static inline long redlock__hiredis_tls_read(void *ssl, char *buf, int n)
{
#if REDLOCK__HIREDIS_HAS_TLS
    int r, e;
    ERR_clear_error();
    r = SSL_read((SSL *)ssl, buf, n);
    if (r > 0) return r;
    e = SSL_get_error((SSL *)ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return -1;
    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !ERR_peek_error() && errno == 0)) return 0;
    return -2;
#else
    (void)ssl; (void)buf; (void)n;
    return -2;
#endif
}

/* More to read on a TLS connection after a read: OpenSSL returns one
   record per read, so what a turn reads at once (replies owed since the
   last call, read by this one) can span records still in OpenSSL or in
   the socket. Plain connections: hiredis read everything there was. */
static inline int redlock__hiredis_tls_pending(void *ssl)
{
#if REDLOCK__HIREDIS_HAS_TLS
    return ssl && SSL_has_pending((SSL *)ssl);
#else
    (void)ssl;
    return 0;
#endif
}

static inline int redlock__hiredis_tls_more(int fd, void *ssl)
{
#if REDLOCK__HIREDIS_HAS_TLS
    struct pollfd pf;
    if (!ssl) return 0;
    if (redlock__hiredis_tls_pending(ssl)) return 1;
    pf.fd = fd;
    pf.events = POLLIN;
    pf.revents = 0;
    return poll(&pf, 1, 0) > 0;
#else
    (void)fd;
    (void)ssl;
    return 0;
#endif
}

/* A TCP connection sends each command as it is written: hiredis leaves
   Nagle's algorithm on for a non-blocking connect, which holds a command
   back while an earlier one is unacknowledged (tens of milliseconds when
   the peer delays its ACK). */
static inline void redlock__hiredis_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Before hiredis reads or writes a TLS connection: OpenSSL's error queue
   then tells about this call only. */
static inline void redlock__hiredis_tls_clear(void *ssl)
{
#if REDLOCK__HIREDIS_HAS_TLS
    if (ssl) ERR_clear_error();
#else
    (void)ssl;
#endif
}

/* A node's error text: msg cut to fit, terminated, replacing what was there. */
static inline void redlock__hiredis_set_text(char *dst, size_t cap, const char *msg)
{
    snprintf(dst, cap, "%s", msg ? msg : "");
}

/* An error reply's words, kept as the server's last (redlock_conn.h). */
static inline void redlock__hiredis_heard(redlock__conn_life *l, const redisReply *r)
{
    if (r && r->type == REDIS_REPLY_ERROR) redlock__conn_heard(l, r->str, (size_t)r->len);
}

/* -NOAUTH / -WRONGPASS: the node wants (other) credentials. */
static inline int redlock__hiredis_auth_error(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && r->str &&
           redlock__conn_refusal_status(r->str, (size_t)r->len) == REDLOCK_ERR_AUTH;
}

/* Cluster node i's releases go sharded when every server whose INFO came
   has sharded pub/sub (Redis 7.0 and later; one without, as in a rolling
   upgrade, could not SPUBLISH): told to the core as that changes, and the
   subscribers follow (redlock__hiredis_subs_tend). */
static inline void redlock__hiredis_cluster_pubsub(redlock_client *client, int i, redlock__hiredis_cluster *cl)
{
    int k, with = 0, without = 0, on;
    for (k = 0; k < cl->links; k++) {
        with |= cl->pubsub[k] == 2;
        without |= cl->pubsub[k] == 1;
    }
    on = with && !without;
    if (on == cl->sharded) return;
    cl->sharded = on;
    (void)redlock_node_set_sharded(client, i, on);
}

/* INFO's or CONFIG GET appendfsync's (kind) answer on node i's new
   connection (redlock_conn.h). */
static inline void redlock__hiredis_info_reply(redlock_client *client, int i, redlock__hiredis_endpoint *e, int kind,
                                               const redisReply *r, redlock__hiredis_cluster *cl, int k)
{
    if (kind == REDLOCK__CONN_INFO) {
        redlock__conn_info_answer(client, i, &e->health, r->type == REDIS_REPLY_STRING ? r->str : NULL,
                                  (size_t)r->len);
        if (cl) { /* a cluster may evict what its worst master may: told so, not the last one's */
            int j, worst = 0;
            char name[24];
            if (r->type == REDIS_REPLY_STRING && redlock_info_evicts(r->str, (size_t)r->len, name, sizeof name) >= 0)
                cl->evicts[k] = (unsigned char)redlock_node_evicts(client, i);
            for (j = 0; j < cl->links; j++)
                if (cl->evicts[j] > worst) worst = cl->evicts[j];
            redlock_node_set_evicts(client, i, (redlock_evicts)worst);
            if (r->type == REDIS_REPLY_STRING) {
                cl->pubsub[k] = (unsigned char)(redlock__conn_info_sharded(r->str, (size_t)r->len) ? 2 : 1);
                redlock__hiredis_cluster_pubsub(client, i, cl);
            }
        }
    } else {
        int pair = r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING;
        const char *str = pair ? r->element[1]->str : NULL;
        size_t len = pair ? (size_t)r->element[1]->len : 0;
        if (!cl) {
            redlock__conn_config_answer(client, i, &e->health, str, len);
        } else if (redlock__conn_config_life(&e->health, str, len)) { /* a cluster's master: followed per master */
            e->life_pending = 1;
            redlock__hiredis_cluster_apply(client, i, cl, k, e);
        }
    }
}

#ifdef REDLOCK_NO_BUILTIN_CLOCKS
#error "the hiredis and libev adapters time everything with redlock_clock_us(): do not define REDLOCK_NO_BUILTIN_CLOCKS"
#endif

/* The core's validity clock (CLOCK_BOOTTIME where it exists): one clock for
   the core's deadlines and the adapters' own. */
static inline int64_t redlock__hiredis_now_us(void)
{
    return redlock_clock_us();
}

/* The clock both adapters give the core: the one their deadlines use. */
static inline int64_t redlock__hiredis_clock(void *user)
{
    (void)user;
    return redlock__hiredis_now_us();
}
/* The probe before a command is written (redlock_conn.h) of a
   connection whose reader holds `buffered` unparsed bytes, through its
   TLS session if it has one. */
static inline int redlock__hiredis_send_probe(const redlock__conn_life *l, const redlock__conn_ring *q, int fd,
                                              void *ssl, size_t buffered)
{
#if REDLOCK__HIREDIS_HAS_TLS
    return redlock__conn_send_probe(l, q, fd, buffered, redlock__tls_idle, ssl);
#else
    (void)ssl;
    return redlock__conn_send_probe(l, q, fd, buffered, NULL, NULL);
#endif
}

/* A node's status text (redlock_conn.h) into errbuf, cut to fit. */
static inline void redlock__hiredis_status_text(const redlock__conn_life *l, char *errbuf, size_t errsz)
{
    if (errbuf && errsz)
        redlock__hiredis_set_text(errbuf, errsz, redlock__conn_text(l, l->status ? redlock_strerror(l->status) : ""));
}

/* strdup is POSIX, not C99 */
/* Starts a non-blocking connect to ep (the adapter's loop finishes it,
   bounded by connect_timeout_ms). Returns the context, or NULL with *status. Host
   names are resolved here, by getaddrinfo(): that may block, addresses
   never do. */
static inline redisContext *redlock__hiredis_open(const redlock__hiredis_endpoint *ep, int *status, char *err,
                                                  size_t errsz)
{
    redisContext *ctx;
    if (ep->unix_path)
        ctx = redisConnectUnixNonBlock(ep->unix_path);
    else
        ctx = redisConnectNonBlock(ep->host ? ep->host : "127.0.0.1", ep->port);
    if (!ctx || ctx->err) {
        snprintf(err, errsz, "%s", !ctx ? "out of memory" : ctx->errstr[0] ? ctx->errstr : "cannot connect");
        *status = ctx ? REDLOCK_ERR_CONNECT : REDLOCK_ERR_NOMEM;
        if (ctx) redisFree(ctx);
        return NULL;
    }
    if (!ep->unix_path) { /* TCP only: on a Unix socket keep-alive fails the context */
        redisEnableKeepAlive(ctx);
        redlock__hiredis_nodelay(ctx->fd);
    }
    return ctx;
}

/* ---- a Sentinel group: which server is its primary ---- */

/* r as the core's redlock_reply with an array's elements too (one level,
   into el[0..cap)): 0, or -1 when they do not fit. Points into r. */
static inline int redlock__hiredis_view(const redisReply *r, redlock_reply *out, redlock_reply *el, size_t cap)
{
    size_t k;
    redlock__hiredis_translate(r, out);
    if (r->type != REDIS_REPLY_ARRAY) return 0;
    if (r->elements > cap) return -1;
    for (k = 0; k < r->elements; k++) redlock__hiredis_translate(r->element[k], &el[k]);
    out->element = el;
    out->elements = r->elements;
    return 0;
}

#define REDLOCK__HIREDIS_SENTINEL_MAX_REPLY 65536 /* a sentinel's answer, parsed or not */

/* The next reply of g->ctx, read by at most `until`: 0 and *out, or -1
   with words. Its own deadline, not the socket's timeouts: a sentinel
   that trickles bytes cannot hold the caller longer. */
static inline int redlock__hiredis_sentinel_reply(redlock__hiredis_sentinels *g, int64_t until, redisReply **out,
                                                  char *words, size_t cap)
{
    void *rv = NULL;
    for (;;) {
        struct pollfd pf;
        int64_t left;
        if (redisGetReplyFromReader(g->ctx, &rv) != REDIS_OK) {
            snprintf(words, cap, "%s", g->bound.over ? "answered too much" : "answered what is not RESP");
            return -1;
        }
        if (rv) break;
        if (g->ctx->reader->len - g->ctx->reader->pos > REDLOCK__HIREDIS_SENTINEL_MAX_REPLY) {
            snprintf(words, cap, "answered too much");
            return -1;
        }
        left = until - redlock__hiredis_now_us();
        pf.fd = g->ctx->fd;
        pf.events = POLLIN;
        pf.revents = 0;
        /* a TLS record OpenSSL holds already is read without waiting */
        if (!redlock__hiredis_tls_pending(g->ssl) && (left <= 0 || poll(&pf, 1, (int)((left + 999) / 1000)) <= 0)) {
            snprintf(words, cap, "timed out");
            return -1;
        }
        if (redisBufferRead(g->ctx) != REDIS_OK) {
            snprintf(words, cap, "%s", g->ctx->err == REDIS_ERR_EOF ? "closed the connection" : g->ctx->errstr);
            return -1;
        }
    }
    *out = (redisReply *)rv;
    return 0;
}

/* Reply r (freed here) to question k of a round (-1: AUTH, 0: SENTINEL
   get-master-addr-by-name, 1: SENTINEL MASTER) on group g: 0 (host/port
   set by k 0, *ago_ms by k 1 if the group failed over), or -1 with words. */
static inline int redlock__hiredis_sentinel_answer(const redlock__hiredis_sentinels *g, int k, redisReply *r, char *host,
                                                   size_t hcap, int *port, int64_t *ago_ms, char *words, size_t cap)
{
    redlock_reply rr, el[128];
    char said[64];
    int v;
    if (k < 0) { /* AUTH's answer */
        v = r->type == REDIS_REPLY_STATUS ? 0 : -1;
        if (v) {
            redlock__conn_printable(said, sizeof said, r->str ? r->str : "", r->str ? (size_t)r->len : 0);
            snprintf(words, cap, "refused the login (%s)", said);
        }
        freeReplyObject(r);
        return v;
    }
    v = redlock__hiredis_view(r, &rr, el, sizeof el / sizeof el[0]);
    if (k == 1) { /* SENTINEL MASTER's: when the group last failed over */
        int64_t ago;
        if (v == 0 && redlock_sentinel_last_failover(&rr, &ago) == 1) *ago_ms = ago;
        freeReplyObject(r);
        return 0;
    }
    v = v == 0 ? redlock_sentinel_primary_addr(&rr, host, hcap, port) : -1;
    if (v == 1) {
        snprintf(words, cap, "does not know the group '%.40s'", g->group);
    } else if (v != 0 && r->type == REDIS_REPLY_ERROR) {
        redlock__conn_printable(said, sizeof said, r->str ? r->str : "", r->str ? (size_t)r->len : 0);
        snprintf(words, cap, "refused (%s)", said);
    } else if (v != 0) {
        snprintf(words, cap, "answered no address");
    }
    freeReplyObject(r);
    return v == 0 ? 0 : -1;
}

/* Asks sentinel g->next which server is the primary (and, if `history`,
   when the group last failed over: *ago_ms, -1 if it never did or the
   sentinel does not say), on g->ctx (opened and logged in first if
   closed; in TLS when e speaks it; closed on any failure): blocking,
   bounded by timeout_ms (as the name lookup before a connection is). 0
   and host/port, or -1 with words (-3: it refused us over TLS). The
   caller keeps SIGPIPE away: hiredis writes with write(2). */
static inline int redlock__hiredis_sentinel_query(const redlock__hiredis_endpoint *e, int history, int timeout_ms,
                                                  char *host, size_t hcap, int *port, int64_t *ago_ms, char *words,
                                                  size_t cap)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    const char *av[3], *qv[3], *mv[3];
    size_t al[3], ql[3], ml[3];
    int64_t until = redlock__hiredis_now_us() + (int64_t)timeout_ms * 1000;
    int ac = 0, k, n, done = 0, rc = -1;
    *ago_ms = -1;
    if (!g->ctx) { /* a new connection logs in first */
        struct timeval tv;
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
        g->ctx = redisConnectWithTimeout(g->host[g->next], g->port[g->next], tv); /* writes time out too */
        if (!g->ctx || g->ctx->err) {
            snprintf(words, cap, "%s", !g->ctx ? "out of memory" : g->ctx->errstr[0] ? g->ctx->errstr : "cannot connect");
            goto out;
        }
        g->ssl = NULL;
        if (e->tls_ctx) { /* the handshake blocks, as the connect did, within the socket's timeouts */
            int st = redlock__hiredis_tls_start_to(e, g->host[g->next], g->ctx, &g->ssl, words, cap);
            if (st != 0) {
                rc = st == REDLOCK_ERR_TLS ? -3 : -1;
                goto out;
            }
        }
        redlock__hiredis_bound_install(&g->bound, g->ctx->reader, REDLOCK__HIREDIS_SENTINEL_MAX_REPLY);
        ac = redlock__conn_auth_argv(g->user, g->pass, av, al);
    }
    redlock_sentinel_ask_argv(g->group, qv, ql);
    redlock_sentinel_master_argv(g->group, mv, ml);
    if ((ac && redisAppendCommandArgv(g->ctx, ac, av, al) != REDIS_OK) || redisAppendCommandArgv(g->ctx, 3, qv, ql) != REDIS_OK ||
        (history && redisAppendCommandArgv(g->ctx, 3, mv, ml) != REDIS_OK)) {
        snprintf(words, cap, "out of memory");
        goto out;
    }
    while (!done)
        if (redisBufferWrite(g->ctx, &done) != REDIS_OK) {
            snprintf(words, cap, "cannot write to it (%.60s)", g->ctx->errstr);
            goto out;
        }
    n = (ac > 0) + 1 + (history != 0);
    for (k = 0; k < n; k++) {
        redisReply *r;
        if (redlock__hiredis_sentinel_reply(g, until, &r, words, cap) != 0) goto out;
        if (redlock__hiredis_sentinel_answer(g, k - (ac > 0), r, host, hcap, port, ago_ms, words, cap) != 0) goto out;
    }
    if (g->ctx->reader->len > g->ctx->reader->pos) snprintf(words, cap, "answered more than asked");
    else rc = 0;
out:
    if (rc != 0 && g->ctx) {
        redisFree(g->ctx);
        g->ctx = NULL;
        g->ssl = NULL;
    }
    return rc;
}

/* The primary of group g as its sentinels name it now, asked in turn from
   the one that answered last (history: and when the group last failed
   over). 0 and host/port, or CONNECT with why (the last sentinel's); TLS
   when one refused us over TLS (why: its words, the refusal no retry
   cures). */
static inline int redlock__hiredis_sentinels_say(const redlock__hiredis_endpoint *e, int history, int timeout_ms,
                                                 char *host, size_t hcap, int *port, int64_t *ago_ms, char *why,
                                                 size_t cap)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    char words[128];
    int k, rc = REDLOCK_ERR_CONNECT;
    for (k = 0; k < g->count; k++) {
        int q = redlock__hiredis_sentinel_query(e, history, timeout_ms, host, hcap, port, ago_ms, words, sizeof words);
        if (q == 0) return 0;
        if (rc != REDLOCK_ERR_TLS || q == -3)
            snprintf(why, cap, "sentinel %.30s:%d %.80s", g->host[g->next], g->port[g->next], words);
        if (q == -3) rc = REDLOCK_ERR_TLS;
        g->next = (g->next + 1) % g->count;
    }
    return rc;
}

/* The sentinels named host:port the primary of e's group (ago: when the
   group last failed over, -1 not known) before a new connection: e's
   address set, 0 or NOMEM; *failed_over_ms as redlock__hiredis_sentinels_primary's. */
static inline int redlock__hiredis_sentinels_named(redlock__hiredis_endpoint *e, const char *host, int port, int64_t ago,
                                                   int64_t *failed_over_ms)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    char *copy;
    *failed_over_ms = -1;
    if (g->named && e->port == port && strcmp(e->host, host) == 0) return 0;
    if (!(copy = redlock__hiredis_strdup(host))) return REDLOCK_ERR_NOMEM;
    *failed_over_ms = g->named ? 0 : ago;
    free(e->host);
    e->host = copy;
    e->port = port;
    g->named = 1;
    return 0;
}

/* The sentinels named host:port after a command was written to e's
   connection: 0, the same server; TRANSPORT (why), another, which
   becomes e's address (as redlock__hiredis_sentinels_confirm says). */
static inline int redlock__hiredis_sentinels_same(redlock__hiredis_endpoint *e, const char *host, int port, char *why,
                                                  size_t cap)
{
    char *copy;
    if (port == e->port && strcmp(host, e->host) == 0) return 0;
    snprintf(why, cap, "the group failed over to %.40s:%d", host, port);
    if ((copy = redlock__hiredis_strdup(host)) != NULL) { /* else: the next connection asks, and reports it again */
        free(e->host);
        e->host = copy;
        e->port = port;
    }
    return REDLOCK_ERR_TRANSPORT;
}

/* Before a new connection of e (a Sentinel group's): e's host and port
   set to the group's primary, 0; or CONNECT / TLS (why) / NOMEM. *failed_over_ms:
   >= 0 when the client must be told the group failed over that long ago
   (redlock_node_failed_over; redlock.h section 4, Restarts): a primary
   other than the one named before is a failover now (0); a first answer
   tells the group's last failover; else -1. */
static inline int redlock__hiredis_sentinels_primary(redlock__hiredis_endpoint *e, int timeout_ms,
                                                     int64_t *failed_over_ms, char *why, size_t cap)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    char host[REDLOCK_SENTINEL_MAX_HOST + 1];
    int port = 0, rc;
    int64_t ago;
    *failed_over_ms = -1;
    if ((rc = redlock__hiredis_sentinels_say(e, !g->named, timeout_ms, host, sizeof host, &port, &ago, why, cap)) != 0)
        return rc;
    return redlock__hiredis_sentinels_named(e, host, port, ago, failed_over_ms);
}

/* Do e's sentinels still name the server e is connected to the primary?
   0: yes. CONNECT (why): none answered (TLS: one refused us). TRANSPORT (why): they name
   another, which becomes e's address (the group failed over: the caller
   tells the client, redlock_node_failed_over(..., 0), and drops the
   connection; the next one goes there without a second report). */
static inline int redlock__hiredis_sentinels_confirm(redlock__hiredis_endpoint *e, int timeout_ms, char *why, size_t cap)
{
    char host[REDLOCK_SENTINEL_MAX_HOST + 1];
    int port = 0, rc;
    int64_t ago;
    if ((rc = redlock__hiredis_sentinels_say(e, 0, timeout_ms, host, sizeof host, &port, &ago, why, cap)) != 0)
        return rc;
    return redlock__hiredis_sentinels_same(e, host, port, why, cap);
}

/* ---- the same question without blocking (an event loop drives it) ----
   A round asks the sentinels of endpoint e's group in turn from the one
   that answered last, each within timeout_ms, on a non-blocking context
   kept open to the one that answered; in TLS when e speaks it (the
   handshake runs in the context's writes and reads, the name checked the
   sentinel's host unless server_name), as the blocking question is. The
   driver watches g->ctx->fd for redlock__hiredis_ask_events(g) and its
   deadline g->until, and calls redlock__hiredis_ask_ready / _late; each
   returns REDLOCK__HIREDIS_ASK_PENDING, _DONE (g->said_*), CONNECT (g->why:
   no sentinel answered) or TLS (g->why: one refused us over TLS, which no
   retry cures: its words, whatever the others said). The driver stops
   watching the fd before each call: a failed sentinel's socket is closed
   inside. */
enum { REDLOCK__HIREDIS_ASK_PENDING = 0, REDLOCK__HIREDIS_ASK_DONE = 1 };

static inline void redlock__hiredis_ask_close(redlock__hiredis_sentinels *g)
{
    if (g->ctx) redisFree(g->ctx);
    g->ctx = NULL;
    g->ssl = NULL; /* freed with the context */
    g->connecting = g->need_flush = 0;
}

/* Queues the round's question to sentinel g->next (connecting and logging
   in first if closed): 0, or -1 with words. */
static inline int redlock__hiredis_ask_one(redlock__hiredis_sentinels *g, int timeout_ms, char *words, size_t cap)
{
    const char *av[3], *qv[3], *mv[3];
    size_t al[3], ql[3], ml[3];
    int ac = 0;
    g->until = redlock__hiredis_now_us() + (int64_t)timeout_ms * 1000;
    g->auth = 0;
    if (!g->ctx) {
        g->ctx = redisConnectNonBlock(g->host[g->next], g->port[g->next]);
        if (!g->ctx || g->ctx->err) {
            snprintf(words, cap, "%s", !g->ctx ? "out of memory" : g->ctx->errstr[0] ? g->ctx->errstr : "cannot connect");
            return -1;
        }
        redlock__hiredis_nodelay(g->ctx->fd);
        redlock__hiredis_bound_install(&g->bound, g->ctx->reader, REDLOCK__HIREDIS_SENTINEL_MAX_REPLY);
        g->connecting = 1;
        ac = redlock__conn_auth_argv(g->user, g->pass, av, al);
    }
    redlock_sentinel_ask_argv(g->group, qv, ql);
    redlock_sentinel_master_argv(g->group, mv, ml);
    if ((ac && redisAppendCommandArgv(g->ctx, ac, av, al) != REDIS_OK) || redisAppendCommandArgv(g->ctx, 3, qv, ql) != REDIS_OK ||
        (g->history && redisAppendCommandArgv(g->ctx, 3, mv, ml) != REDIS_OK)) {
        snprintf(words, cap, "out of memory");
        return -1;
    }
    g->auth = ac > 0;
    g->owed = g->auth + 1 + (g->history != 0);
    g->got = 0;
    g->said_ago = -1;
    g->need_flush = 1;
    return 0;
}

/* Sentinel g->next failed the round (words; refused: it refused us over
   TLS): its socket closed, the next one in turn. */
static inline void redlock__hiredis_ask_skip(redlock__hiredis_sentinels *g, const char *words, int refused)
{
    if (refused || !g->refused) /* a refusal's words stay the round's */
        snprintf(g->why, sizeof g->why, "sentinel %.30s:%d %.80s", g->host[g->next], g->port[g->next], words);
    g->refused |= refused;
    redlock__hiredis_ask_close(g);
    g->next = (g->next + 1) % g->count;
    g->tried++;
}

/* Asks the next sentinels of the round until one is asked: PENDING, or
   CONNECT / TLS when none is left (g->why). */
static inline int redlock__hiredis_ask_go(redlock__hiredis_sentinels *g, int timeout_ms)
{
    char words[128];
    while (g->tried < g->count) {
        if (redlock__hiredis_ask_one(g, timeout_ms, words, sizeof words) == 0) return REDLOCK__HIREDIS_ASK_PENDING;
        redlock__hiredis_ask_skip(g, words, 0);
    }
    g->asking = 0;
    return g->refused ? REDLOCK_ERR_TLS : REDLOCK_ERR_CONNECT;
}

/* Sentinel g->next failed the round (words): the next one is asked. */
static inline int redlock__hiredis_ask_failed(redlock__hiredis_sentinels *g, const char *words, int refused,
                                              int timeout_ms)
{
    redlock__hiredis_ask_skip(g, words, refused);
    return redlock__hiredis_ask_go(g, timeout_ms);
}

/* The same when reading or writing failed (words: hiredis's): over TLS,
   OpenSSL's words, and a refusal told as one (redlock_tls.h). */
static inline int redlock__hiredis_ask_broke(const redlock__hiredis_endpoint *e, const char *words, int timeout_ms)
{
    char why[128];
    int st;
    snprintf(why, sizeof why, "%s", words);
    st = redlock__hiredis_tls_failure(e, e->sentinels->ssl, REDLOCK_ERR_CONNECT, why, sizeof why);
    return redlock__hiredis_ask_failed(e->sentinels, why, st == REDLOCK_ERR_TLS, timeout_ms);
}

/* Begins a round of e's sentinels (history: SENTINEL MASTER too, for a
   first answer). */
static inline int redlock__hiredis_ask_begin(const redlock__hiredis_endpoint *e, int history, int timeout_ms)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    g->asking = 1;
    g->history = history;
    g->tried = 0;
    g->refused = 0;
    return redlock__hiredis_ask_go(g, timeout_ms);
}

/* What the driver watches g->ctx->fd for during a round (0: nothing).
   A TLS handshake that waits for the sentinel's answer waits for reading
   only (a writable socket would wake the driver for nothing). */
static inline short redlock__hiredis_ask_events(const redlock__hiredis_sentinels *g)
{
    int hs_read = redlock__hiredis_tls_handshaking(g->ssl) && redlock__hiredis_tls_wants_read(g->ssl);
    if (!g->asking || !g->ctx) return 0;
    return (short)(g->connecting ? POLLOUT : g->need_flush && !hs_read ? (POLLOUT | POLLIN) : POLLIN);
}

/* The replies the sentinel's answer holds so far: PENDING while more are
   owed, DONE, or the round's next step when it failed. */
static inline int redlock__hiredis_ask_parse(redlock__hiredis_sentinels *g, int timeout_ms)
{
    char words[128];
    void *rv;
    for (;;) {
        rv = NULL;
        if (redisGetReplyFromReader(g->ctx, &rv) != REDIS_OK) {
            snprintf(words, sizeof words, "%s", g->bound.over ? "answered too much" : "answered what is not RESP");
            return redlock__hiredis_ask_failed(g, words, 0, timeout_ms);
        }
        if (!rv) break;
        if (g->got >= g->owed) {
            freeReplyObject(rv);
            return redlock__hiredis_ask_failed(g, "answered more than asked", 0, timeout_ms);
        }
        if (redlock__hiredis_sentinel_answer(g, g->got - g->auth, (redisReply *)rv, g->said_host, sizeof g->said_host,
                                             &g->said_port, &g->said_ago, words, sizeof words) != 0)
            return redlock__hiredis_ask_failed(g, words, 0, timeout_ms);
        g->got++;
    }
    if (g->ctx->reader->len - g->ctx->reader->pos > REDLOCK__HIREDIS_SENTINEL_MAX_REPLY)
        return redlock__hiredis_ask_failed(g, "answered too much", 0, timeout_ms);
    if (g->got < g->owed) return REDLOCK__HIREDIS_ASK_PENDING;
    if (g->ctx->reader->len > g->ctx->reader->pos)
        return redlock__hiredis_ask_failed(g, "answered more than asked", 0, timeout_ms);
    g->asking = 0;
    return REDLOCK__HIREDIS_ASK_DONE;
}

/* The round's sentinel's socket is ready (readable: for reading). A
   writable socket writes the question; a TLS session starts once TCP is
   up, and its handshake goes on in each write (first, also when the
   socket is only readable: the sentinel's answer to it) and read.
   SIGPIPE is the caller's to keep away: hiredis and OpenSSL write with
   write(2). */
static inline int redlock__hiredis_ask_ready(const redlock__hiredis_endpoint *e, int readable, int timeout_ms)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    char words[128];
    int reads, rc;
    if (!g->asking || !g->ctx) return REDLOCK__HIREDIS_ASK_PENDING;
    if (g->connecting) {
        int err = 0;
        socklen_t len = (socklen_t)sizeof err;
        if (getsockopt(g->ctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err) {
            snprintf(words, sizeof words, "%s", strerror(err));
            return redlock__hiredis_ask_failed(g, words, 0, timeout_ms);
        }
        g->connecting = 0;
        if (e->tls_ctx && (rc = redlock__hiredis_tls_start_to(e, g->host[g->next], g->ctx, &g->ssl, words,
                                                             sizeof words)) != 0)
            return redlock__hiredis_ask_failed(g, words, rc == REDLOCK_ERR_TLS, timeout_ms);
    }
    if (g->need_flush) {
        int done = 0;
        redlock__hiredis_tls_clear(g->ssl);
        if (redisBufferWrite(g->ctx, &done) != REDIS_OK) {
            snprintf(words, sizeof words, "cannot write to it (%.60s)", g->ctx->errstr);
            return redlock__hiredis_ask_broke(e, words, timeout_ms);
        }
        g->need_flush = !done;
    }
    if (!readable) return REDLOCK__HIREDIS_ASK_PENDING;
    for (reads = 0; reads < 64; reads++) { /* TLS: a record per read, the rest maybe held by OpenSSL already */
        redlock__hiredis_tls_clear(g->ssl);
        if (redisBufferRead(g->ctx) != REDIS_OK) {
            snprintf(words, sizeof words, "%s", g->ctx->err == REDIS_ERR_EOF ? "closed the connection" : g->ctx->errstr);
            return redlock__hiredis_ask_broke(e, words, timeout_ms);
        }
        if ((rc = redlock__hiredis_ask_parse(g, timeout_ms)) != REDLOCK__HIREDIS_ASK_PENDING ||
            !redlock__hiredis_tls_pending(g->ssl))
            return rc;
    }
    return REDLOCK__HIREDIS_ASK_PENDING;
}

/* The round's deadline (g->until) passed, or not yet (PENDING). */
static inline int redlock__hiredis_ask_late(const redlock__hiredis_endpoint *e, int64_t now, int timeout_ms)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    if (!g->asking || now < g->until) return REDLOCK__HIREDIS_ASK_PENDING;
    return redlock__hiredis_ask_failed(g, "timed out", 0, timeout_ms);
}

/* ---- a Sentinel group's +switch-master watch ----
   A connection to one sentinel, SUBSCRIBEd to +switch-master (AUTH with
   the sentinels' credentials first, TLS as the round's), on which each
   failover of the group is told as it happens: the driver then drops
   the primary's connection (the next asks the sentinels) and tells the
   core (redlock_node_failed_over), without waiting for its next command.
   The driver keeps it open while the node has a connection (it opens
   once its delay is over: redlock__hiredis_watch_open), watches its fd
   (redlock__hiredis_watch_events), calls redlock__hiredis_watch_ready
   when it is ready and redlock__hiredis_watch_late at its deadline. One
   that fails (closed, refused, no confirmation within the connect
   timeout, a reply it did not ask for) closes and is opened again a
   second later at the next sentinel. It changes no vote: every reply is
   still confirmed by a round. */
#define REDLOCK__HIREDIS_WATCH_RETRY_US 1000000
enum { REDLOCK__HIREDIS_WATCH_QUIET = 0, REDLOCK__HIREDIS_WATCH_SWITCHED = 1, REDLOCK__HIREDIS_WATCH_FAILED = -1 };

static inline void redlock__hiredis_watch_close(redlock__hiredis_sentinels *g, int failed, int64_t now)
{
    if (g->wctx) redisFree(g->wctx);
    g->wctx = NULL;
    g->wssl = NULL; /* freed with the context */
    g->wconnecting = g->wflush = g->wconfirmed = 0;
    if (failed) {
        g->wretry = now + REDLOCK__HIREDIS_WATCH_RETRY_US;
        g->wat = (g->wat + 1) % g->count;
    }
}

/* Opens the watch if it is closed and its delay is over: 0 (open, or
   not yet due), or -1 (it could not start: tried again after the delay). */
static inline int redlock__hiredis_watch_open(redlock__hiredis_sentinels *g, int64_t now, int timeout_ms)
{
    const char *av[3], *sv[2];
    size_t al[3], sl[2];
    int ac;
    if (g->wctx || now < g->wretry || !g->count) return 0;
    g->wctx = redisConnectNonBlock(g->host[g->wat], g->port[g->wat]);
    if (!g->wctx || g->wctx->err) {
        redlock__hiredis_watch_close(g, 1, now);
        return -1;
    }
    redlock__hiredis_nodelay(g->wctx->fd);
    redlock__hiredis_bound_install(&g->wbound, g->wctx->reader, REDLOCK__HIREDIS_SENTINEL_MAX_REPLY);
    ac = redlock__conn_auth_argv(g->user, g->pass, av, al);
    redlock_sentinel_switch_argv(sv, sl);
    if ((ac && redisAppendCommandArgv(g->wctx, ac, av, al) != REDIS_OK) || redisAppendCommandArgv(g->wctx, 2, sv, sl) != REDIS_OK) {
        redlock__hiredis_watch_close(g, 1, now);
        return -1;
    }
    g->wauth = ac > 0;
    g->wconnecting = g->wflush = 1;
    g->wconfirmed = 0;
    g->wuntil = now + (int64_t)timeout_ms * 1000;
    return 0;
}

/* What the driver watches the watch's fd for (0: it is closed). */
static inline short redlock__hiredis_watch_events(const redlock__hiredis_sentinels *g)
{
    int hs_read = redlock__hiredis_tls_handshaking(g->wssl) && redlock__hiredis_tls_wants_read(g->wssl);
    if (!g->wctx) return 0;
    return (short)(g->wconnecting ? POLLOUT : g->wflush && !hs_read ? (POLLOUT | POLLIN) : POLLIN);
}

/* The watch's replies so far: QUIET, SWITCHED (the group's new primary
   in host / *port: the last one told, if several), or FAILED (closed). */
static inline int redlock__hiredis_watch_parse(redlock__hiredis_sentinels *g, int64_t now, char *host, size_t cap,
                                               int *port)
{
    int rc = REDLOCK__HIREDIS_WATCH_QUIET;
    for (;;) {
        void *rv = NULL;
        redisReply *r;
        if (redisGetReplyFromReader(g->wctx, &rv) != REDIS_OK) break;
        if (!rv && g->wctx->reader->len - g->wctx->reader->pos > REDLOCK__HIREDIS_SENTINEL_MAX_REPLY) break;
        if (!rv) return rc;
        r = (redisReply *)rv;
        if (g->wauth) { /* AUTH's answer */
            g->wauth = 0;
            if (r->type != REDIS_REPLY_STATUS) {
                freeReplyObject(rv);
                break;
            }
        } else {
            redlock_reply view, el[3];
            int what = redlock__hiredis_view(r, &view, el, 3) == 0
                           ? redlock_sentinel_watch_reply(&view, g->group, host, cap, port)
                           : REDLOCK_SENTINEL_WATCH_BAD;
            if (what == REDLOCK_SENTINEL_WATCH_BAD || (what != REDLOCK_SENTINEL_WATCH_CONFIRMED && !g->wconfirmed)) {
                freeReplyObject(rv);
                break;
            }
            g->wconfirmed |= what == REDLOCK_SENTINEL_WATCH_CONFIRMED;
            if (what == REDLOCK_SENTINEL_WATCH_SWITCHED) rc = REDLOCK__HIREDIS_WATCH_SWITCHED;
        }
        freeReplyObject(rv);
    }
    redlock__hiredis_watch_close(g, 1, now);
    return REDLOCK__HIREDIS_WATCH_FAILED;
}

/* The watch's socket is ready (readable: for reading): as a round's
   (redlock__hiredis_ask_ready), then its replies parsed. */
static inline int redlock__hiredis_watch_ready(const redlock__hiredis_endpoint *e, int readable, int64_t now,
                                               char *host, size_t cap, int *port)
{
    redlock__hiredis_sentinels *g = e->sentinels;
    char words[128];
    int reads, rc = REDLOCK__HIREDIS_WATCH_QUIET;
    if (!g->wctx) return REDLOCK__HIREDIS_WATCH_QUIET;
    if (g->wconnecting) {
        int err = 0;
        socklen_t len = (socklen_t)sizeof err;
        if (getsockopt(g->wctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        g->wconnecting = 0;
        if (err || (e->tls_ctx && redlock__hiredis_tls_start_to(e, g->host[g->wat], g->wctx, &g->wssl, words, sizeof words) != 0)) {
            redlock__hiredis_watch_close(g, 1, now);
            return REDLOCK__HIREDIS_WATCH_FAILED;
        }
    }
    if (g->wflush) {
        int done = 0;
        redlock__hiredis_tls_clear(g->wssl);
        if (redisBufferWrite(g->wctx, &done) != REDIS_OK) {
            redlock__hiredis_watch_close(g, 1, now);
            return REDLOCK__HIREDIS_WATCH_FAILED;
        }
        g->wflush = !done;
    }
    if (!readable) return REDLOCK__HIREDIS_WATCH_QUIET;
    for (reads = 0; reads < 64; reads++) { /* TLS: a record per read, the rest maybe held by OpenSSL already */
        int got;
        redlock__hiredis_tls_clear(g->wssl);
        if (redisBufferRead(g->wctx) != REDIS_OK) {
            redlock__hiredis_watch_close(g, 1, now);
            return REDLOCK__HIREDIS_WATCH_FAILED;
        }
        got = redlock__hiredis_watch_parse(g, now, host, cap, port);
        if (got == REDLOCK__HIREDIS_WATCH_FAILED) return got;
        if (got == REDLOCK__HIREDIS_WATCH_SWITCHED) rc = got;
        if (!redlock__hiredis_tls_pending(g->wssl)) break;
    }
    return rc;
}

/* The watch's deadline: when its SUBSCRIBE must be confirmed (INT64_MAX:
   none; closed: when it opens again). */
static inline int64_t redlock__hiredis_watch_due(const redlock__hiredis_sentinels *g)
{
    if (!g->wctx) return g->wretry;
    return g->wconfirmed ? INT64_MAX : g->wuntil;
}

/* Past its deadline unconfirmed: closed (FAILED); else QUIET. */
static inline int redlock__hiredis_watch_late(redlock__hiredis_sentinels *g, int64_t now)
{
    if (!g->wctx || g->wconfirmed || now < g->wuntil) return REDLOCK__HIREDIS_WATCH_QUIET;
    redlock__hiredis_watch_close(g, 1, now);
    return REDLOCK__HIREDIS_WATCH_FAILED;
}

/* ---- release notifications: a subscriber connection per node ----
   Node i's subscriber is id i: at the node's address (a Sentinel group's
   primary, a cluster's first seed), SUBSCRIBE. A cluster node whose
   releases go sharded (redlock__hiredis_cluster_pubsub) has instead one
   per master m of its map, id REDLOCK__HIREDIS_SHARD(i, m): SSUBSCRIBE of
   the keys whose slot m serves; each is open while a lock listens, so a
   cluster node has at most as many as its masters
   (REDLOCK_CLUSTER_MAX_MASTERS). */

#include "redlock_notify.h"

#define REDLOCK__HIREDIS_SHARD(i, m) (REDLOCK_MAX_NODES + (i) * REDLOCK_CLUSTER_MAX_MASTERS + (m))

/* A subscriber (redlock.h section 10), over a hiredis context: what it
   sends and what its replies mean are the connection layer's
   (redlock_conn.h, the subscribers); here, how it connects, writes and
   reads. */
typedef struct redlock__hiredis_sub {
    redisContext *ctx;
    int fd;                /* ctx's socket, or -1 */
    int need_flush;
    int write_failed;      /* the adapter's flush: closed once the signal mask is back */
    void *ssl;             /* TLS: the session (hiredis owns it), or NULL */
    int64_t connect_deadline; /* the TCP connect, then the TLS handshake */
    redlock__conn_ring q;  /* the commands owed an answer, oldest first */
    redlock__hiredis_bound bound; /* the reader's reply memory */
    redlock__conn_life life; /* DOWN / CONNECTING / UP, when it may reopen, and shunned: 0, or
                              SERVER / AUTH while the node refuses it, with its refusal (notify_status) */
    redlock__hiredis_endpoint ep; /* a master's subscriber, while open: its address, the node's login */
} redlock__hiredis_sub;

/* A client's subscribers, and the table of what they listen to. The
   adapter drives them: polls each fd (redlock__hiredis_sub_events, ids
   from redlock__hiredis_subs_next), calls redlock__hiredis_sub_ready when
   it is ready, redlock__hiredis_subs_tend before it waits (the next
   deadline: redlock__hiredis_subs_due), and redlock__hiredis_subs_remapped
   when a cluster node's map came. */
typedef struct redlock__hiredis_subs {
    redlock__conn_subs t;  /* the keys listened to, and since when none is (redlock_conn.h) */
    redlock__hiredis_sub sub[REDLOCK_MAX_NODES];
    redlock__hiredis_sub *shard[REDLOCK_MAX_NODES]; /* a cluster node's, a master each
                                                       (REDLOCK_CLUSTER_MAX_MASTERS), else NULL */
    unsigned char remap[REDLOCK_MAX_NODES]; /* a master no longer serves a key: its map is asked
                                               again, its subscribers reopened when it came */
    const redlock__hiredis_endpoint *ep[REDLOCK_MAX_NODES];
    int n;
    int connect_timeout_ms, reconnect_delay_ms;
    int64_t command_us;    /* an answer owed this long closes the subscriber */
    size_t max_buffered;   /* unparsed bytes, and a reply's objects */
    void (*closing)(void *arg, int s); /* optional: subscriber s's socket is about to close */
    void (*refresh)(void *arg, int i); /* cluster node i's map is wanted (asked when due) */
    void *hook_arg;     /* both hooks' */
} redlock__hiredis_subs;

static inline void redlock__hiredis_subs_init(redlock__hiredis_subs *ss, int n, int connect_timeout_ms,
                                              int command_timeout_ms, int reconnect_delay_ms, int idle_ms,
                                              size_t max_buffered)
{
    int i;
    memset(ss, 0, sizeof *ss);
    ss->n = n;
    ss->connect_timeout_ms = connect_timeout_ms;
    ss->command_us = (int64_t)command_timeout_ms * 1000;
    ss->reconnect_delay_ms = reconnect_delay_ms;
    ss->max_buffered = max_buffered;
    ss->t.idle_us = (int64_t)idle_ms * 1000;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) ss->sub[i].fd = -1;
}

/* Node i's endpoint (ep, kept), and for a cluster node its masters'
   subscribers: 0, or NOMEM. */
static inline int redlock__hiredis_subs_node(redlock__hiredis_subs *ss, int i, const redlock__hiredis_endpoint *ep)
{
    int m;
    ss->ep[i] = ep;
    if (!ep->cluster) return 0;
    ss->shard[i] = (redlock__hiredis_sub *)calloc(REDLOCK_CLUSTER_MAX_MASTERS, sizeof *ss->shard[i]);
    if (!ss->shard[i]) return REDLOCK_ERR_NOMEM;
    for (m = 0; m < REDLOCK_CLUSTER_MAX_MASTERS; m++) ss->shard[i][m].fd = -1;
    return 0;
}

static inline int redlock__hiredis_sub_node(int s)
{
    return s < REDLOCK_MAX_NODES ? s : (s - REDLOCK_MAX_NODES) / REDLOCK_CLUSTER_MAX_MASTERS;
}

static inline int redlock__hiredis_sub_master(int s) { return (s - REDLOCK_MAX_NODES) % REDLOCK_CLUSTER_MAX_MASTERS; }

static inline redlock__hiredis_sub *redlock__hiredis_sub_at(redlock__hiredis_subs *ss, int s)
{
    return s < REDLOCK_MAX_NODES ? &ss->sub[s] : &ss->shard[redlock__hiredis_sub_node(s)][redlock__hiredis_sub_master(s)];
}

/* The id after s (-1: the first), or -1 after the last. */
static inline int redlock__hiredis_subs_next(const redlock__hiredis_subs *ss, int s)
{
    int i;
    if (s + 1 < ss->n) return s + 1;
    if (s < REDLOCK_MAX_NODES) s = REDLOCK_MAX_NODES - 1;
    if (s >= REDLOCK_MAX_NODES && redlock__hiredis_sub_master(s) + 1 < REDLOCK_CLUSTER_MAX_MASTERS) return s + 1;
    for (i = s < REDLOCK_MAX_NODES ? 0 : redlock__hiredis_sub_node(s) + 1; i < ss->n; i++)
        if (ss->shard[i]) return REDLOCK__HIREDIS_SHARD(i, 0);
    return -1;
}

/* Do cluster node i's releases go sharded (a subscriber per master)? */
static inline int redlock__hiredis_subs_sharded(const redlock__hiredis_subs *ss, int i)
{
    return ss->shard[i] && ss->ep[i]->cluster->sharded;
}

/* Should subscriber s be open (or kept), the table aside: a node's own
   unless its releases go sharded; a master's while they do and the last
   CLUSTER SLOTS named m a slot's master, at the address it is open to. */
static inline int redlock__hiredis_sub_current(const redlock__hiredis_subs *ss, int s)
{
    int i = redlock__hiredis_sub_node(s), m;
    const redlock_cluster_map *map;
    const redlock__hiredis_sub *sb;
    if (s < REDLOCK_MAX_NODES) return !redlock__hiredis_subs_sharded(ss, i);
    if (!redlock__hiredis_subs_sharded(ss, i)) return 0;
    m = redlock__hiredis_sub_master(s);
    map = &ss->ep[i]->cluster->rc->map;
    sb = &ss->shard[i][m];
    if (m >= map->masters || !ss->ep[i]->cluster->serves[m]) return 0;
    return !sb->ctx || (sb->ep.port == map->master[m].port && sb->ep.host && strcmp(sb->ep.host, map->master[m].host) == 0);
}

/* Subscriber s goes (failed: reconnected after the reconnect delay; the
   node's waiters meanwhile sleep out their retry delays). */
static inline void redlock__hiredis_sub_close(redlock__hiredis_subs *ss, int s, int failed)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    if (sb->ctx && ss->closing) ss->closing(ss->hook_arg, s);
    if (sb->ctx) redisFree(sb->ctx);
    sb->ctx = NULL;
    sb->fd = -1;
    sb->ssl = NULL; /* freed with the context */
    sb->need_flush = 0;
    sb->write_failed = 0;
    redlock__conn_ring_free(&sb->q);
    if (s >= REDLOCK_MAX_NODES) redlock__hiredis_endpoint_free(&sb->ep);
    redlock__conn_down(&sb->life, redlock__hiredis_now_us(), failed ? ss->reconnect_delay_ms : 0);
}

static inline void redlock__hiredis_subs_free(redlock__hiredis_subs *ss)
{
    int s, i;
    for (s = redlock__hiredis_subs_next(ss, -1); s >= 0; s = redlock__hiredis_subs_next(ss, s))
        redlock__hiredis_sub_close(ss, s, 0);
    for (i = 0; i < REDLOCK_MAX_NODES; i++) {
        free(ss->shard[i]);
        ss->shard[i] = NULL;
    }
    redlock__notify_free(&ss->t.table);
}

/* One of subscriber sb's commands (redlock_conn.h's queue): appended to
   its context, owed an answer from now. */
static inline int redlock__hiredis_sub_queue(void *ctx, int kind, int argc, const char **argv, const size_t *len)
{
    redlock__hiredis_sub *sb = (redlock__hiredis_sub *)ctx;
    int rc = redlock__hiredis_reserve(&sb->q);
    if (rc != 0) return rc;
    if (redisAppendCommandArgv(sb->ctx, argc, argv, len) != REDIS_OK) return REDLOCK_ERR_NOMEM;
    (void)redlock__hiredis_push(&sb->q, kind, 0); /* room reserved */
    sb->need_flush = 1;
    return 0;
}

/* Appends SUBSCRIBE (on) or UNSUBSCRIBE of key's channel to subscriber
   s, if it is open (one that opens later subscribes every key); a
   master's: SSUBSCRIBE or SUNSUBSCRIBE. */
static inline void redlock__hiredis_sub_cmd(redlock__hiredis_subs *ss, int s, int on, const char *key, size_t len)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    if (sb->ctx && redlock__conn_sub_cmd(on, key, len, s >= REDLOCK_MAX_NODES, redlock__hiredis_sub_queue, sb) != 0)
        redlock__hiredis_sub_close(ss, s, 1);
}

/* A master's subscriber, at opening: the keys whose slot it serves. */
typedef struct redlock__hiredis_shard_want {
    const redlock_cluster_map *map;
    int master;
} redlock__hiredis_shard_want;

static inline int redlock__hiredis_shard_wants(void *arg, const char *key, size_t len)
{
    const redlock__hiredis_shard_want *w = (const redlock__hiredis_shard_want *)arg;
    return redlock_cluster_owner(w->map, redlock_cluster_slot(key, len)) == w->master;
}

/* Subscriber s's endpoint: its node's, or a master's (made here, at the
   map's address of master m, with the node's login and TLS). NULL: out
   of memory, or the cluster's table of addresses is full. */
static inline const redlock__hiredis_endpoint *redlock__hiredis_sub_endpoint(redlock__hiredis_subs *ss, int s)
{
    const redlock__hiredis_endpoint *nd = ss->ep[redlock__hiredis_sub_node(s)];
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    int k;
    if (s < REDLOCK_MAX_NODES) return nd;
    redlock__hiredis_endpoint_free(&sb->ep);
    if ((k = redlock__hiredis_cluster_master_link(nd->cluster, redlock__hiredis_sub_master(s))) < 0 ||
        redlock__hiredis_link_endpoint(&sb->ep, nd, k) != 0) {
        redlock__hiredis_endpoint_free(&sb->ep);
        return NULL;
    }
    return &sb->ep;
}

/* Opens subscriber s if it is down and its delay has passed, with its
   commands queued (redlock__conn_sub_open_queue: AUTH, then every key; a
   master's: the keys whose slot it serves). The connect and a TLS
   handshake run in the adapter's loop. */
static inline void redlock__hiredis_sub_open(redlock__hiredis_subs *ss, int s)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    const redlock__hiredis_endpoint *ep;
    redlock__hiredis_shard_want want;
    int64_t now = redlock__hiredis_now_us();
    int status = 0, sharded = s >= REDLOCK_MAX_NODES;
    char err[128];
    if (sb->ctx || !redlock__conn_may_open(&sb->life, now)) return;
    ep = redlock__hiredis_sub_endpoint(ss, s);
    if (!ep || (ep->sentinels && !ep->sentinels->named)) { /* no room, or the group's primary is not known yet */
        redlock__conn_down(&sb->life, now, ss->reconnect_delay_ms);
        return;
    }
    sb->ctx = redlock__hiredis_open(ep, &status, err, sizeof err);
    if (!sb->ctx) {
        redlock__conn_down(&sb->life, now, ss->reconnect_delay_ms);
        return;
    }
    sb->fd = sb->ctx->fd;
    redlock__conn_opened(&sb->life, REDLOCK__CONN_CONNECTING);
    sb->connect_deadline = now + (int64_t)ss->connect_timeout_ms * 1000;
    redlock__hiredis_bound_install(&sb->bound, sb->ctx->reader, ss->max_buffered);
    sb->need_flush = 1;
    want.map = sharded ? &ss->ep[redlock__hiredis_sub_node(s)]->cluster->rc->map : NULL;
    want.master = sharded ? redlock__hiredis_sub_master(s) : -1;
    if (redlock__conn_sub_open_queue(ep->user, ep->pass, &ss->t.table, sharded, sharded ? redlock__hiredis_shard_wants : NULL,
                                     &want, redlock__hiredis_sub_queue, sb) != 0)
        redlock__hiredis_sub_close(ss, s, 1);
}

/* Subscriber s's socket became writable (or failed) while connecting. */
static inline void redlock__hiredis_sub_connected(redlock__hiredis_subs *ss, int s)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    const redlock__hiredis_endpoint *ep = s < REDLOCK_MAX_NODES ? ss->ep[s] : &sb->ep;
    int err = 0;
    socklen_t len = (socklen_t)sizeof err;
    if (getsockopt(sb->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err) {
        redlock__hiredis_sub_close(ss, s, 1);
        return;
    }
    if (ep->tls_ctx) {
        char why[128];
        sb->connect_deadline = redlock__hiredis_now_us() + (int64_t)ss->connect_timeout_ms * 1000;
        if (redlock__hiredis_tls_start(ep, sb->ctx, &sb->ssl, why, sizeof why) != 0) {
            redlock__hiredis_sub_close(ss, s, 1);
            return;
        }
    }
    sb->life.state = REDLOCK__CONN_UP; /* TLS: the handshake runs in the reads and writes */
    {   /* what was queued during the connect is owed from now */
        int64_t now = redlock__hiredis_now_us();
        redlock__conn_restart(&sb->q, 0, now);
    }
}

static inline int redlock__hiredis_sub_wants_flush(const redlock__hiredis_sub *sb)
{
    return sb->ctx && sb->need_flush && sb->life.state != REDLOCK__CONN_CONNECTING;
}

/* Writes subscriber s's buffered commands; -1 if the write failed (the
   caller, which has SIGPIPE blocked or ignored, then closes it). */
static inline int redlock__hiredis_sub_write(redlock__hiredis_subs *ss, int s)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    int done;
    redlock__hiredis_tls_clear(sb->ssl);
    if (redisBufferWrite(sb->ctx, &done) != REDIS_OK) return -1;
    if (done) sb->need_flush = 0;
    return 0;
}

/* The connection layer's view of a reply (pointing into r). */
static inline void redlock__hiredis_sub_view(const redisReply *r, redlock__conn_sub_reply *v)
{
    redlock_reply t;
    redlock__hiredis_translate(r, &t);
    memset(v, 0, sizeof *v);
    v->type = t.type;
    if (t.type == REDLOCK_REPLY_STATUS || t.type == REDLOCK_REPLY_ERROR) {
        v->str = t.str;
        v->len = t.len;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return;
    if (r->element[0]->type == REDIS_REPLY_STRING) {
        v->word = r->element[0]->str;
        v->word_len = (size_t)r->element[0]->len;
    }
    if (r->element[1]->type == REDIS_REPLY_STRING) {
        v->channel = r->element[1]->str;
        v->channel_len = (size_t)r->element[1]->len;
    }
}

/* A master no longer serves a key's slot (RESHARD: its subscriber was
   told so): the node's map is stale, asked again (redlock__hiredis_subs_tend,
   at most once per REDLOCK_CLUSTER_REFRESH_MS), and its subscribers are
   reopened when it came. Not a refusal: no backoff. */
static inline void redlock__hiredis_subs_reshard(redlock__hiredis_subs *ss, int i)
{
    if (!ss->shard[i]) return;
    redlock_cluster_stale(ss->ep[i]->cluster->rc);
    ss->remap[i] = 1;
}

/* Every reply subscriber s has buffered, as the connection layer reads
   it (redlock__conn_sub_answer): a release wakes the waiting locks of
   its key; a refusal closes the subscriber for its backoff; a master
   that no longer serves a key closes it and asks for the map; a reply it
   did not expect drops it. */
static inline void redlock__hiredis_sub_deliver(redlock__hiredis_subs *ss, int s)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    while (sb->ctx) {
        void *rv = NULL;
        redlock__conn_sub_reply v;
        int what;
        if (redisGetReplyFromReader(sb->ctx, &rv) != REDIS_OK) {
            redlock__hiredis_sub_close(ss, s, 1);
            return;
        }
        if (!rv) return;
        redlock__hiredis_sub_view((const redisReply *)rv, &v);
        what = redlock__conn_sub_answer(&sb->life, &sb->q, &ss->t.table, &v);
        freeReplyObject(rv);
        if (what == REDLOCK__CONN_SUB_NEXT) continue;
        redlock__hiredis_sub_close(ss, s, 1);
        if (what == REDLOCK__CONN_SUB_REFUSED) redlock__conn_sub_hold(&sb->life, redlock__hiredis_now_us());
        if (what == REDLOCK__CONN_SUB_RESHARD) redlock__hiredis_subs_reshard(ss, redlock__hiredis_sub_node(s));
        return;
    }
}

static inline void redlock__hiredis_sub_read(redlock__hiredis_subs *ss, int s, size_t max_buffered)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    int reads;
    for (reads = 0; reads < 64 && sb->ctx; reads++) { /* TLS: a record per read */
        const void *ctx = sb->ctx;
        redlock__hiredis_tls_clear(sb->ssl);
        if (redisBufferRead(sb->ctx) != REDIS_OK) {
            redlock__hiredis_sub_deliver(ss, s); /* what came before the close */
            if (sb->ctx == ctx) redlock__hiredis_sub_close(ss, s, 1);
            return;
        }
        redlock__hiredis_sub_deliver(ss, s);
        if (sb->ctx != ctx) return;
        if (sb->ctx->reader->len - sb->ctx->reader->pos > max_buffered) {
            redlock__hiredis_sub_close(ss, s, 1);
            return;
        }
        if (!redlock__hiredis_tls_more(sb->fd, sb->ssl)) return;
    }
}

/* The poll events subscriber sb waits for (0: none, it is down). */
static inline short redlock__hiredis_sub_events(const redlock__hiredis_sub *sb)
{
    if (!sb->ctx) return 0;
    if (sb->life.state == REDLOCK__CONN_CONNECTING) return POLLOUT;
    return (short)(POLLIN | (sb->need_flush && !redlock__hiredis_tls_wants_read(sb->ssl) ? POLLOUT : 0));
}

/* Key's channel subscribed (on) or not on every node: by the node's own
   subscriber, or a sharded cluster node's master of the key's slot (none
   while the map does not know it: a reopen after the map came takes it). */
static inline void redlock__hiredis_subs_cmd(void *arg, int on, const char *key, size_t len)
{
    redlock__hiredis_subs *ss = (redlock__hiredis_subs *)arg;
    int i, m;
    for (i = 0; i < ss->n; i++) {
        if (!redlock__hiredis_subs_sharded(ss, i)) {
            redlock__hiredis_sub_cmd(ss, i, on, key, len);
        } else if ((m = redlock_cluster_owner(&ss->ep[i]->cluster->rc->map, redlock_cluster_slot(key, len))) >= 0 &&
                   redlock__hiredis_sub_current(ss, REDLOCK__HIREDIS_SHARD(i, m))) {
            redlock__hiredis_sub_cmd(ss, REDLOCK__HIREDIS_SHARD(i, m), on, key, len);
        }
    }
}

/* The core's listen callback, for the adapter's own: the table follows
   the core, the subscribers follow the table's keys (redlock_conn.h). */
static inline void redlock__hiredis_subs_listen(redlock__hiredis_subs *ss, redlock_lock *lk, int on)
{
    redlock__conn_listen(&ss->t, lk, on, redlock__hiredis_now_us(), redlock__hiredis_subs_cmd, ss);
}

/* Cluster node i's map came (CLUSTER SLOTS answered): after a RESHARD,
   its masters' subscribers reopen at once, each taking the keys its
   master serves now. */
static inline void redlock__hiredis_subs_remapped(redlock__hiredis_subs *ss, int i)
{
    int m;
    if (!ss->shard[i] || !ss->remap[i]) return;
    ss->remap[i] = 0;
    for (m = 0; m < REDLOCK_CLUSTER_MAX_MASTERS; m++) {
        redlock__hiredis_sub *sb = &ss->shard[i][m];
        if (sb->ctx) redlock__hiredis_sub_close(ss, REDLOCK__HIREDIS_SHARD(i, m), 0);
        else if (!sb->life.shunned) sb->life.retry_at = 0;
    }
}

/* Has subscriber sb bytes waiting to be read? An answer owed for too
   long may be among them (the loop did not run for a while): the read
   that follows comes first. (Not read here: tend runs inside the core's
   listen callback, where a message must not wake a lock.) */
static inline int redlock__hiredis_sub_unread(const redlock__hiredis_sub *sb)
{
    struct pollfd pf;
    if (redlock__hiredis_tls_more(sb->fd, sb->ssl)) return 1;
    pf.fd = sb->fd;
    pf.events = POLLIN;
    pf.revents = 0;
    return poll(&pf, 1, 0) > 0;
}

/* Is subscriber sb's connect or TLS handshake still running? */
static inline int redlock__hiredis_sub_opening(const redlock__hiredis_sub *sb)
{
    return sb->life.state == REDLOCK__CONN_CONNECTING || redlock__hiredis_tls_handshaking(sb->ssl);
}

/* Before a wait: subscribers dropped when a connect or handshake
   outlasts its timeout or an answer is owed for longer than the command
   timeout, closed when no longer current (a node's own once its releases
   go sharded, a master's that moved or became a replica), then opened
   and closed as the table says (redlock__conn_sub_tend); a cluster node
   whose map a RESHARD made stale asks for it (the adapter's refresh
   hook, when due). */
static inline void redlock__hiredis_subs_tend(redlock__hiredis_subs *ss)
{
    int64_t now = redlock__hiredis_now_us();
    int s, i;
    for (s = redlock__hiredis_subs_next(ss, -1); s >= 0; s = redlock__hiredis_subs_next(ss, s)) {
        redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
        int late;
        if (!sb->ctx) continue;
        late = redlock__conn_late(&sb->life, &sb->q, redlock__hiredis_tls_handshaking(sb->ssl),
                                  redlock__hiredis_sub_opening(sb), sb->connect_deadline, ss->command_us, now);
        if (late == REDLOCK__CONN_LATE_CONNECT || late == REDLOCK__CONN_LATE_HANDSHAKE ||
            (late == REDLOCK__CONN_LATE_REPLY && !redlock__hiredis_sub_unread(sb)))
            redlock__hiredis_sub_close(ss, s, 1);
    }
    for (s = redlock__hiredis_subs_next(ss, -1); s >= 0; s = redlock__hiredis_subs_next(ss, s)) {
        redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
        int act;
        if (!redlock__hiredis_sub_current(ss, s)) {
            if (sb->ctx) redlock__hiredis_sub_close(ss, s, 0);
            continue;
        }
        act = redlock__conn_sub_tend(&ss->t, &sb->life, sb->ctx != NULL, now);
        if (act == REDLOCK__CONN_SUB_OPEN) redlock__hiredis_sub_open(ss, s);
        else if (act == REDLOCK__CONN_SUB_CLOSE) redlock__hiredis_sub_close(ss, s, 0);
    }
    redlock__conn_subs_tended(&ss->t, now);
    for (i = 0; i < ss->n; i++)
        if (ss->remap[i] && ss->refresh) ss->refresh(ss->hook_arg, i);
}

/* When redlock__hiredis_subs_tend has something to do next (a reconnect,
   a connect timeout, the idle close, a stale map's next ask), or
   INT64_MAX. */
static inline int64_t redlock__hiredis_subs_due(redlock__hiredis_subs *ss)
{
    int64_t due = redlock__conn_idle_due(&ss->t);
    int s, i;
    for (s = redlock__hiredis_subs_next(ss, -1); s >= 0; s = redlock__hiredis_subs_next(ss, s)) {
        const redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
        int64_t d = !sb->ctx ? (redlock__hiredis_sub_current(ss, s) ? redlock__conn_sub_reopen_due(&ss->t, &sb->life, 0)
                                                                   : INT64_MAX)
                    : redlock__hiredis_sub_opening(sb) ? sb->connect_deadline
                                                       : redlock__conn_due(&sb->q, ss->command_us);
        if (d < due) due = d;
    }
    for (i = 0; i < ss->n; i++) {
        const redlock__hiredis_cluster *cl = ss->shard[i] ? ss->ep[i]->cluster : NULL;
        if (cl && ss->remap[i] && !cl->refreshing && cl->rc->asked_us + REDLOCK_CLUSTER_REFRESH_MS * 1000 < due)
            due = cl->rc->asked_us + REDLOCK_CLUSTER_REFRESH_MS * 1000;
    }
    return due;
}

/* Subscriber s's fd is ready (poll's revents, or libev's): finishes its
   connect, or reads. Writes are the adapter's (redlock__hiredis_sub_write,
   with SIGPIPE kept away). */
static inline void redlock__hiredis_sub_ready(redlock__hiredis_subs *ss, int s, int readable, size_t max_buffered)
{
    redlock__hiredis_sub *sb = redlock__hiredis_sub_at(ss, s);
    if (!sb->ctx) return;
    if (sb->life.state == REDLOCK__CONN_CONNECTING) {
        redlock__hiredis_sub_connected(ss, s);
        return;
    }
    if (readable) redlock__hiredis_sub_read(ss, s, max_buffered);
}

/* Node i's subscriber that the node refuses (redlock_*_notify_status):
   its own, or the first of a cluster node's masters' that is refused. */
static inline const redlock__hiredis_sub *redlock__hiredis_subs_shunned(const redlock__hiredis_subs *ss, int i)
{
    int m;
    for (m = 0; ss->shard[i] && m < REDLOCK_CLUSTER_MAX_MASTERS; m++)
        if (ss->shard[i][m].life.shunned) return &ss->shard[i][m];
    return &ss->sub[i];
}

#endif /* REDLOCK_HIREDIS_COMMON_H */
