/* adapters/redlock_cluster.h - what a transport needs to route a lock's
   commands in a Redis Cluster: the hash slot of a key (CRC16, {hash tags}),
   the key of a command, the slot map learned from CLUSTER SLOTS and kept
   true by MOVED, and the redirections a node answers with (MOVED, ASK) or
   the errors that mean "not now" (TRYAGAIN, CLUSTERDOWN). Sans-I/O: no
   socket, no clock; the map is the caller's memory.

       unsigned slot = redlock_cluster_slot(key, len);           // 0..16383
       redlock_cluster_map *m = malloc(sizeof *m);
       redlock_cluster_map_init(m);
       redlock_cluster_map_load(m, &cluster_slots_reply);        // CLUSTER SLOTS
       int at = redlock_cluster_owner(m, slot);                  // master index, or -1
       ... m->master[at].host, m->master[at].port ...
       redlock_cluster_redirect r;
       if (redlock_cluster_redirection(err, len, &r) == REDLOCK_CLUSTER_MOVED)
           redlock_cluster_map_move(m, r.slot, r.host, r.port);  // then send again there

   KEYS AND SLOTS: a key's slot is CRC16 (XMODEM) of the key modulo 16384,
   or of its hash tag: the part between the first '{' and the first '}'
   after it, when that part is not empty. Every key one lock touches must
   live in one slot: a fenced lock's counter is REDLOCK_FENCE_PREFIX + key,
   which shares the key's slot when the key has a hash tag (the prefix has
   no brace) - so on a cluster a fenced lock's key needs one, e.g.
   "{orders}:lock".

   ROUTING (a transport's cluster node, redlock_cluster): a cluster is
   ONE node of the core's quorum; inside it each command goes to the
   master that serves its key's slot. The transport keeps one
   redlock_cluster per cluster node (about 40 KB: allocate it) and, per
   command, how many redirections it followed:
       redlock_cluster *c = malloc(sizeof *c);
       redlock_cluster_init(c);
       int at = redlock_cluster_route(c, cmd);    // master index, or:
       //  REDLOCK_CLUSTER_UNKNOWN: ask CLUSTER SLOTS (a seed, or any known
       //    master), redlock_cluster_update() it, route again;
       //  REDLOCK_CLUSTER_ANY: no key (INFO ...): any master will do
       if (redlock_cluster_refresh_due(c, now_us)) {    // a stale map, at most once
           redlock_cluster_refresh_asked(c, now_us);     // per REDLOCK_CLUSTER_REFRESH_MS
           ... CLUSTER SLOTS ... redlock_cluster_update(c, &reply, asked_host, &failovers);
       }
       ... the reply of the command, sent to master `at` after `redirects` redirections:
       redlock_cluster_step st;
       switch (redlock_cluster_answer(c, reply, asked_host, redirects, &st)) {
       case REDLOCK_CLUSTER_PASS:   the reply is the core's (an error reply is a
                                    failed vote: TRYAGAIN, CLUSTERDOWN, a
                                    redirection too many)
       case REDLOCK_CLUSTER_RESEND: MOVED: the map knows; send the command again
                                    to master st.master, redirects + 1
       case REDLOCK_CLUSTER_ASKING: ASK: send ASKING, then the command, to
                                    st.master (once: the map does not change)
       }
       if (st.failover) redlock_node_failed_over(client, node, 0);
   A master is named by its index in c->map.master[] (which holds the
   replicas CLUSTER SLOTS names too, replica_of set), stable for the life
   of the map (redlock_cluster_update() keeps them; a map that outgrows
   REDLOCK_CLUSTER_MAX_MASTERS starts over, see there): a transport may key
   its connections by it, or by host:port.

   RESTARTS AND FAILOVERS (redlock.h section 4, Restarts): the core keeps
   one life per node, and a cluster node has several masters, so the
   transport must not call redlock_node_set_life() with each master's
   run_id in turn (each would read as a restart). It tells
   redlock_cluster_life() what each master connection's INFO and CONFIG GET
   appendfsync said, and calls redlock_node_failed_over(client, node, ago)
   when that says so: a master whose run_id changed (ago 0), or seen first
   young and not durable (ago: its uptime). A slot's new owner that the
   last map named as a replica of its old owner is a failover (st.failover,
   update()'s count): ago 0. A slot moved by a planned migration (MIGRATE,
   SETSLOT NODE) is not: the keys moved with it.

   THREADS: no state of its own; a map is the caller's to guard. */
#ifndef REDLOCK_CLUSTER_H
#define REDLOCK_CLUSTER_H

#include "../redlock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REDLOCK_CLUSTER_SLOTS 16384
/* The most masters a map knows (a slot map names each once). */
#ifndef REDLOCK_CLUSTER_MAX_MASTERS
#define REDLOCK_CLUSTER_MAX_MASTERS 64
#endif
#if REDLOCK_CLUSTER_MAX_MASTERS > 255
#error "REDLOCK_CLUSTER_MAX_MASTERS: at most 255 (a slot's owner is a byte)"
#endif
/* The longest host name a map keeps (as redlock_nodes.h's). */
#define REDLOCK_CLUSTER_MAX_HOST 255

typedef struct redlock_cluster_master {
    char host[REDLOCK_CLUSTER_MAX_HOST + 1];
    int port;
    /* kept by redlock_cluster_update() (map_load() leaves them empty): */
    char id[41];            /* its cluster node id, "" when not known */
    int replica_of;         /* the last CLUSTER SLOTS named it a replica of this master; -1: not */
    redlock_node_life life; /* what its last connection's INFO said (redlock_cluster_life) */
    int life_seen;          /* life is known */
} redlock_cluster_master;

/* Which master serves each slot. About 40 KB: allocate it. */
typedef struct redlock_cluster_map {
    uint8_t owner[REDLOCK_CLUSTER_SLOTS]; /* master index + 1; 0: not known */
    int masters;
    redlock_cluster_master master[REDLOCK_CLUSTER_MAX_MASTERS];
} redlock_cluster_map;

enum { REDLOCK_CLUSTER_NONE = 0, REDLOCK_CLUSTER_MOVED, REDLOCK_CLUSTER_ASK };

/* A MOVED or ASK error's content. */
typedef struct redlock_cluster_redirect {
    int slot;
    char host[REDLOCK_CLUSTER_MAX_HOST + 1]; /* "" when the server did not say (then: the same host) */
    int port;
} redlock_cluster_redirect;

/* The slot of a key: 0..16383. */
static inline unsigned redlock_cluster_slot(const char *key, size_t len);
/* The key a command acts on (SET/GET/... key; EVAL/EVALSHA script 1+ key):
   1 and *key, *len; 0 for a command without one (INFO, SCRIPT ...). */
static inline int redlock_cluster_command_key(const redlock_command *cmd, const char **key, size_t *len);
/* Classifies an error reply's text: REDLOCK_CLUSTER_MOVED or _ASK (*r
   filled), else NONE. Malformed redirections are NONE (an error as any). */
static inline int redlock_cluster_redirection(const char *err, size_t len, redlock_cluster_redirect *r);
/* 1 when an error reply says the cluster cannot serve now (TRYAGAIN,
   CLUSTERDOWN): a failed vote for this round, nothing to re-route. */
static inline int redlock_cluster_busy(const char *err, size_t len);
static inline void redlock_cluster_map_init(redlock_cluster_map *m);
/* Loads a CLUSTER SLOTS reply (every range's first node is its master;
   an empty host means the host the reply came from: pass it as
   `asked_host`). Replaces what the map knew. 0, or -1 when the reply is
   malformed or names more than REDLOCK_CLUSTER_MAX_MASTERS (the map is
   then empty). */
static inline int redlock_cluster_map_load(redlock_cluster_map *m, const redlock_reply *r, const char *asked_host);
/* A MOVED answer: the slot is served by host:port from now on. The master
   index, or -1 when the map is full (it is then emptied: reload it). */
static inline int redlock_cluster_map_move(redlock_cluster_map *m, int slot, const char *host, int port);
/* The index of the master that serves `slot`, or -1 when not known. */
static inline int redlock_cluster_owner(const redlock_cluster_map *m, unsigned slot);

/* ---- routing ---- */

/* The least time between two CLUSTER SLOTS a transport asks for one
   cluster: many MOVED at once (a resharding) refresh the map once. */
#ifndef REDLOCK_CLUSTER_REFRESH_MS
#define REDLOCK_CLUSTER_REFRESH_MS 100
#endif
/* The redirections one command follows; at the next one, its vote fails
   (the reply is passed on as it is). */
#ifndef REDLOCK_CLUSTER_MAX_REDIRECTS
#define REDLOCK_CLUSTER_MAX_REDIRECTS 1
#endif

typedef struct redlock_cluster {
    redlock_cluster_map map;
    int64_t asked_us; /* when CLUSTER SLOTS was last asked for; INT64_MIN: never */
    int stale;        /* a MOVED, a lost master or CLUSTERDOWN: the map may be out of date */
} redlock_cluster;

enum { REDLOCK_CLUSTER_UNKNOWN = -1, REDLOCK_CLUSTER_ANY = -2 };
enum { REDLOCK_CLUSTER_PASS = 0, REDLOCK_CLUSTER_RESEND, REDLOCK_CLUSTER_ASKING };

/* What to do with a reply (redlock_cluster_answer). */
typedef struct redlock_cluster_step {
    int action;   /* REDLOCK_CLUSTER_PASS / RESEND / ASKING */
    int master;   /* RESEND, ASKING: where to; else -1 */
    int failover; /* a MOVED to a master that the last map named a replica of the slot's
                     former master: redlock_node_failed_over(client, node, 0) */
} redlock_cluster_step;

static inline void redlock_cluster_init(redlock_cluster *c);
/* Where a command goes: the index of the master that serves its key's
   slot; REDLOCK_CLUSTER_UNKNOWN when the map does not know (load it
   first); REDLOCK_CLUSTER_ANY for a command without a key. */
static inline int redlock_cluster_route(const redlock_cluster *c, const redlock_command *cmd);
/* 1 when the map should be asked for now: empty, or stale, and not
   asked for within REDLOCK_CLUSTER_REFRESH_MS. */
static inline int redlock_cluster_refresh_due(const redlock_cluster *c, int64_t now_us);
/* CLUSTER SLOTS is being asked for now (also when it then fails: the
   next try waits the interval out). */
static inline void redlock_cluster_refresh_asked(redlock_cluster *c, int64_t now_us);
/* The map may be out of date (a master's connection failed): the next
   refresh_due() says so, within the interval. */
static inline void redlock_cluster_stale(redlock_cluster *c);
/* Loads a CLUSTER SLOTS reply (as map_load) keeping the masters known so
   far at their indices (their lives too) and naming each range's
   replicas (replica_of). *failovers (may be NULL): how many masters now
   serve slots that the master they were a replica of served before (a
   promotion; redlock_node_failed_over(client, node, 0) when > 0). 0 (the
   map is no longer stale); 1 when the masters had to start over (more
   than REDLOCK_CLUSTER_MAX_MASTERS known: indices and lives are new; a
   transport keyed by index reconnects); -1 when the reply is malformed
   (the map is as it was). */
static inline int redlock_cluster_update(redlock_cluster *c, const redlock_reply *r, const char *asked_host,
                                         int *failovers);
/* What a reply to a command sent to a master (asked_host: its host, for a
   redirection that names none) after `redirects` redirections means:
   REDLOCK_CLUSTER_PASS, RESEND (MOVED: the map updated) or ASKING (ASK);
   *st filled. TRYAGAIN and CLUSTERDOWN pass (a failed vote; CLUSTERDOWN
   makes the map stale), and so does a redirection beyond
   REDLOCK_CLUSTER_MAX_REDIRECTS, or one the map has no room for. */
static inline int redlock_cluster_answer(redlock_cluster *c, const redlock_reply *r, const char *asked_host,
                                         int redirects, redlock_cluster_step *st);
/* A master connection's INFO and CONFIG GET appendfsync (life, as
   redlock_info_life() fills it, durable set): 1 and *ago_ms when the
   core must hear redlock_node_failed_over(client, node, *ago_ms) - its
   run_id changed (0), or it is seen first, started *ago_ms ago and does
   not keep keys across restarts; else 0. The life is kept. */
static inline int redlock_cluster_life(redlock_cluster *c, int master, const redlock_node_life *life, int64_t *ago_ms);
/* The ASKING command that goes before a command an ASK redirected. */
static inline void redlock_cluster_asking_argv(const char *argv[1], size_t len[1]);
/* 1 when a script command (EVAL/EVALSHA) names keys of more than one
   slot (a cluster answers CROSSSLOT): a transport refuses it before
   sending, with words that name the cause (redlock_cluster_lock_fits). */
static inline int redlock_cluster_cross_slot(const redlock_command *cmd);
/* 1 when every key the lock touches lives in its key's slot, as a
   cluster needs: 0 for a fenced lock whose key has no {hash tag} (its
   counter, REDLOCK_FENCE_PREFIX + key, is in another slot). The adapters
   refuse such a lock on a cluster node at lock_init (REDLOCK_ERR_INVALID):
   give the key a tag, e.g. "{orders}:lock". Readers-writer marks and
   reentrant counts live in the key's own hash: always 1 for them. */
static inline int redlock_cluster_lock_fits(const redlock_lock_opts *o);

/* ---- implementation ---- */

static const uint16_t redlock__cluster_crc[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
    0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
    0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
    0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
    0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
    0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
    0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
    0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
    0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
    0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
    0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
    0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
    0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
    0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
    0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

static inline unsigned redlock_cluster_slot(const char *key, size_t len)
{
    size_t i, open = len, close = len;
    uint16_t crc = 0;
    for (i = 0; i < len && open == len; i++)
        if (key[i] == '{') open = i;
    for (i = open + 1; i < len && close == len; i++)
        if (key[i] == '}') close = i;
    if (open < len && close < len && close > open + 1) { /* a hash tag: only it counts */
        key += open + 1;
        len = close - open - 1;
    }
    for (i = 0; i < len; i++) crc = (uint16_t)((crc << 8) ^ redlock__cluster_crc[((crc >> 8) ^ (uint8_t)key[i]) & 0xff]);
    return crc & (REDLOCK_CLUSTER_SLOTS - 1);
}

static inline int redlock__cluster_is(const char *s, size_t len, const char *word)
{
    size_t i, n = strlen(word);
    if (len != n) return 0;
    for (i = 0; i < n; i++)
        if ((s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]) != word[i]) return 0;
    return 1;
}

static inline int redlock_cluster_command_key(const redlock_command *cmd, const char **key, size_t *len)
{
    if (!cmd || cmd->argc < 2) return 0;
    if (redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "EVAL") || redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "EVALSHA")) {
        if (cmd->argc < 4 || cmd->argvlen[2] != 1 || cmd->argv[2][0] < '1' || cmd->argv[2][0] > '9') return 0;
        *key = cmd->argv[3];
        *len = cmd->argvlen[3];
        return 1;
    }
    if (redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "INFO") || redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "SCRIPT") ||
        redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "CONFIG") || redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "CLUSTER") ||
        redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "AUTH") || redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "PUBLISH"))
        return 0;
    *key = cmd->argv[1];
    *len = cmd->argvlen[1];
    return 1;
}

static inline int redlock_cluster_redirection(const char *err, size_t len, redlock_cluster_redirect *r)
{
    size_t i, start, colon, end;
    int kind, slot = 0, port = 0;
    if (!err || !r) return REDLOCK_CLUSTER_NONE;
    if (len > 6 && memcmp(err, "MOVED ", 6) == 0) {
        kind = REDLOCK_CLUSTER_MOVED;
        i = 6;
    } else if (len > 4 && memcmp(err, "ASK ", 4) == 0) {
        kind = REDLOCK_CLUSTER_ASK;
        i = 4;
    } else {
        return REDLOCK_CLUSTER_NONE;
    }
    for (start = i; i < len && err[i] >= '0' && err[i] <= '9' && i - start < 5; i++) slot = slot * 10 + (err[i] - '0');
    if (i == start || i >= len || err[i] != ' ' || slot >= REDLOCK_CLUSTER_SLOTS) return REDLOCK_CLUSTER_NONE;
    /* host:port up to the end or a space; the port follows the last ':'
       (an IPv6 host has more); an empty host: the one asked */
    for (start = ++i, colon = len; i < len && (unsigned char)err[i] > ' ' && err[i] != 127; i++)
        if (err[i] == ':') colon = i;
    end = i;
    if (colon == len || colon - start > REDLOCK_CLUSTER_MAX_HOST || end - colon < 2 || end - colon > 6) return REDLOCK_CLUSTER_NONE;
    if (colon - start == 1 && err[start] == '?') return REDLOCK_CLUSTER_NONE; /* the server does not know where */
    for (i = colon + 1; i < end; i++) {
        if (err[i] < '0' || err[i] > '9') return REDLOCK_CLUSTER_NONE;
        port = port * 10 + (err[i] - '0');
    }
    if (port < 1 || port > 65535) return REDLOCK_CLUSTER_NONE;
    memcpy(r->host, err + start, colon - start);
    r->host[colon - start] = 0;
    r->slot = slot;
    r->port = port;
    return kind;
}

static inline int redlock_cluster_busy(const char *err, size_t len)
{
    return (len >= 8 && memcmp(err, "TRYAGAIN", 8) == 0) || (len >= 11 && memcmp(err, "CLUSTERDOWN", 11) == 0);
}

static inline void redlock_cluster_map_init(redlock_cluster_map *m)
{
    memset(m->owner, 0, sizeof m->owner);
    m->masters = 0;
}

/* The index of host:port among the masters, added if new; -1 when full. */
static inline int redlock__cluster_master(redlock_cluster_map *m, const char *host, size_t hlen, int port)
{
    int k;
    if (hlen > REDLOCK_CLUSTER_MAX_HOST) return -1;
    for (k = 0; k < m->masters; k++)
        if (m->master[k].port == port && strlen(m->master[k].host) == hlen && memcmp(m->master[k].host, host, hlen) == 0) return k;
    if (m->masters >= REDLOCK_CLUSTER_MAX_MASTERS) return -1;
    memset(&m->master[m->masters], 0, sizeof m->master[m->masters]);
    memcpy(m->master[m->masters].host, host, hlen);
    m->master[m->masters].host[hlen] = 0;
    m->master[m->masters].port = port;
    m->master[m->masters].replica_of = -1;
    return m->masters++;
}

static inline int redlock_cluster_map_load(redlock_cluster_map *m, const redlock_reply *r, const char *asked_host)
{
    size_t i;
    redlock_cluster_map_init(m);
    if (!r || r->type != REDLOCK_REPLY_ARRAY) return -1;
    for (i = 0; i < r->elements; i++) {
        const redlock_reply *range = &r->element[i], *node;
        const char *host;
        size_t hlen;
        long long s;
        int k;
        if (range->type != REDLOCK_REPLY_ARRAY || range->elements < 3) goto bad;
        node = &range->element[2];
        if (range->element[0].type != REDLOCK_REPLY_INTEGER || range->element[1].type != REDLOCK_REPLY_INTEGER ||
            range->element[0].integer < 0 || range->element[1].integer >= REDLOCK_CLUSTER_SLOTS ||
            range->element[0].integer > range->element[1].integer)
            goto bad;
        if (node->type != REDLOCK_REPLY_ARRAY || node->elements < 2 || node->element[0].type != REDLOCK_REPLY_STRING ||
            node->element[1].type != REDLOCK_REPLY_INTEGER || node->element[1].integer < 1 || node->element[1].integer > 65535)
            goto bad;
        host = node->element[0].str;
        hlen = node->element[0].len;
        if (hlen == 0 || (hlen == 1 && host[0] == '?')) { /* "the host you asked" */
            if (!asked_host) goto bad;
            host = asked_host;
            hlen = strlen(asked_host);
        }
        if ((k = redlock__cluster_master(m, host, hlen, (int)node->element[1].integer)) < 0) goto bad;
        for (s = range->element[0].integer; s <= range->element[1].integer; s++) m->owner[s] = (uint8_t)(k + 1);
    }
    return 0;
bad:
    redlock_cluster_map_init(m);
    return -1;
}

static inline int redlock_cluster_map_move(redlock_cluster_map *m, int slot, const char *host, int port)
{
    int k;
    if (slot < 0 || slot >= REDLOCK_CLUSTER_SLOTS || !host) return -1;
    if ((k = redlock__cluster_master(m, host, strlen(host), port)) < 0) {
        redlock_cluster_map_init(m);
        return -1;
    }
    m->owner[slot] = (uint8_t)(k + 1);
    return k;
}

static inline int redlock_cluster_owner(const redlock_cluster_map *m, unsigned slot)
{
    return slot < REDLOCK_CLUSTER_SLOTS ? m->owner[slot] - 1 : -1;
}

static inline void redlock_cluster_init(redlock_cluster *c)
{
    redlock_cluster_map_init(&c->map);
    c->asked_us = INT64_MIN;
    c->stale = 0;
}

static inline int redlock_cluster_route(const redlock_cluster *c, const redlock_command *cmd)
{
    const char *key;
    size_t len;
    if (!redlock_cluster_command_key(cmd, &key, &len)) return REDLOCK_CLUSTER_ANY;
    return redlock_cluster_owner(&c->map, redlock_cluster_slot(key, len));
}

static inline int redlock_cluster_refresh_due(const redlock_cluster *c, int64_t now_us)
{
    if (!c->stale && c->map.masters > 0) return 0;
    return c->asked_us == INT64_MIN || now_us - c->asked_us >= (int64_t)REDLOCK_CLUSTER_REFRESH_MS * 1000;
}

static inline void redlock_cluster_refresh_asked(redlock_cluster *c, int64_t now_us) { c->asked_us = now_us; }

static inline void redlock_cluster_stale(redlock_cluster *c) { c->stale = 1; }

/* One node of a CLUSTER SLOTS range ([host, port, id, ...]): its index,
   added if new; -1 when malformed or the table is full (*full set). */
static inline int redlock__cluster_node(redlock_cluster_map *m, const redlock_reply *node, const char *asked_host,
                                        int *full)
{
    const char *host;
    size_t hlen;
    int k;
    if (node->type != REDLOCK_REPLY_ARRAY || node->elements < 2 || node->element[0].type != REDLOCK_REPLY_STRING ||
        node->element[1].type != REDLOCK_REPLY_INTEGER || node->element[1].integer < 1 || node->element[1].integer > 65535)
        return -1;
    host = node->element[0].str;
    hlen = node->element[0].len;
    if (hlen == 0 || (hlen == 1 && host[0] == '?')) { /* "the host you asked" */
        if (!asked_host) return -1;
        host = asked_host;
        hlen = strlen(asked_host);
    }
    if (hlen > REDLOCK_CLUSTER_MAX_HOST) return -1;
    if ((k = redlock__cluster_master(m, host, hlen, (int)node->element[1].integer)) < 0) {
        *full = 1;
        return -1;
    }
    if (node->elements >= 3 && node->element[2].type == REDLOCK_REPLY_STRING && node->element[2].len < sizeof m->master[k].id) {
        memcpy(m->master[k].id, node->element[2].str, node->element[2].len);
        m->master[k].id[node->element[2].len] = 0;
    }
    return k;
}

/* Loads r into m over what it knew (masters kept): 0, -1 malformed, -2
   full. m is changed either way. */
static inline int redlock__cluster_fill(redlock_cluster_map *m, const redlock_reply *r, const char *asked_host)
{
    size_t i, j;
    int k, full = 0;
    memset(m->owner, 0, sizeof m->owner);
    if (!r || r->type != REDLOCK_REPLY_ARRAY) return -1;
    for (i = 0; i < r->elements; i++) {
        const redlock_reply *range = &r->element[i];
        long long s;
        if (range->type != REDLOCK_REPLY_ARRAY || range->elements < 3 || range->element[0].type != REDLOCK_REPLY_INTEGER ||
            range->element[1].type != REDLOCK_REPLY_INTEGER || range->element[0].integer < 0 ||
            range->element[1].integer >= REDLOCK_CLUSTER_SLOTS || range->element[0].integer > range->element[1].integer)
            return -1;
        if ((k = redlock__cluster_node(m, &range->element[2], asked_host, &full)) < 0) return full ? -2 : -1;
        m->master[k].replica_of = -1;
        for (s = range->element[0].integer; s <= range->element[1].integer; s++) m->owner[s] = (uint8_t)(k + 1);
        for (j = 3; j < range->elements; j++) {
            int rk = redlock__cluster_node(m, &range->element[j], asked_host, &full);
            if (rk < 0) return full ? -2 : -1;
            if (rk != k) m->master[rk].replica_of = k;
        }
    }
    return 0;
}

static inline int redlock_cluster_update(redlock_cluster *c, const redlock_reply *r, const char *asked_host,
                                         int *failovers)
{
    /* the map before, to compare and to put back (a malformed reply) */
    static const size_t map_size = sizeof(redlock_cluster_map);
    redlock_cluster_map *before = (redlock_cluster_map *)malloc(map_size);
    int rc, s, k, n = 0, promoted[REDLOCK_CLUSTER_MAX_MASTERS];
    if (failovers) *failovers = 0;
    if (!before) return -1;
    memcpy(before, &c->map, map_size);
    rc = redlock__cluster_fill(&c->map, r, asked_host);
    if (rc == -2) { /* too many to keep the old ones: start over */
        redlock_cluster_map_init(&c->map);
        rc = redlock__cluster_fill(&c->map, r, asked_host) == 0 ? 1 : -1;
    }
    if (rc < 0) {
        memcpy(&c->map, before, map_size);
        free(before);
        return -1;
    }
    memset(promoted, 0, sizeof promoted);
    if (rc == 0) /* a slot whose new master was its old master's replica: a failover */
        for (s = 0; s < REDLOCK_CLUSTER_SLOTS; s++) {
            int was = before->owner[s] - 1, now = c->map.owner[s] - 1;
            if (was >= 0 && now >= 0 && was != now && now < before->masters && before->master[now].replica_of == was)
                promoted[now] = 1;
        }
    for (k = 0; k < REDLOCK_CLUSTER_MAX_MASTERS; k++) n += promoted[k];
    if (failovers) *failovers = n;
    c->stale = 0;
    free(before);
    return rc;
}

static inline int redlock_cluster_answer(redlock_cluster *c, const redlock_reply *r, const char *asked_host,
                                         int redirects, redlock_cluster_step *st)
{
    redlock_cluster_redirect d;
    int kind, was, k;
    st->action = REDLOCK_CLUSTER_PASS;
    st->master = -1;
    st->failover = 0;
    if (!r || r->type != REDLOCK_REPLY_ERROR || !r->str) return REDLOCK_CLUSTER_PASS;
    if (redlock_cluster_busy(r->str, r->len)) {
        if (r->len >= 11 && memcmp(r->str, "CLUSTERDOWN", 11) == 0) c->stale = 1;
        return REDLOCK_CLUSTER_PASS;
    }
    kind = redlock_cluster_redirection(r->str, r->len, &d);
    if (kind == REDLOCK_CLUSTER_NONE) return REDLOCK_CLUSTER_PASS;
    if (kind == REDLOCK_CLUSTER_MOVED) c->stale = 1; /* other slots may have moved with it */
    if (redirects >= REDLOCK_CLUSTER_MAX_REDIRECTS) return REDLOCK_CLUSTER_PASS;
    if (!d.host[0]) { /* "the host you asked" */
        if (!asked_host || strlen(asked_host) > REDLOCK_CLUSTER_MAX_HOST) return REDLOCK_CLUSTER_PASS;
        strcpy(d.host, asked_host);
    }
    if (kind == REDLOCK_CLUSTER_ASK) { /* the slot stays where it is: only this command goes there */
        if ((k = redlock__cluster_master(&c->map, d.host, strlen(d.host), d.port)) < 0) return REDLOCK_CLUSTER_PASS;
        st->action = REDLOCK_CLUSTER_ASKING;
        st->master = k;
        return REDLOCK_CLUSTER_ASKING;
    }
    was = redlock_cluster_owner(&c->map, (unsigned)d.slot);
    if ((k = redlock_cluster_map_move(&c->map, d.slot, d.host, d.port)) < 0) return REDLOCK_CLUSTER_PASS;
    st->failover = was >= 0 && was != k && c->map.master[k].replica_of == was;
    if (st->failover) c->map.master[k].replica_of = -1;
    st->action = REDLOCK_CLUSTER_RESEND;
    st->master = k;
    return REDLOCK_CLUSTER_RESEND;
}

static inline int redlock_cluster_life(redlock_cluster *c, int master, const redlock_node_life *life, int64_t *ago_ms)
{
    redlock_cluster_master *m;
    int told = 0;
    if (master < 0 || master >= c->map.masters || !life) return 0;
    m = &c->map.master[master];
    if (m->life_seen && m->life.run_id[0] && life->run_id[0] && strcmp(m->life.run_id, life->run_id) != 0) {
        *ago_ms = 0; /* restarted since this client saw it */
        told = 1;
    } else if (!m->life_seen && !life->durable && life->uptime_s >= 0) {
        *ago_ms = life->uptime_s * 1000; /* keys kept since it started at most */
        told = 1;
    }
    if (life->run_id[0] || life->uptime_s >= 0) {
        m->life = *life;
        m->life_seen = 1;
    }
    return told;
}

static inline void redlock_cluster_asking_argv(const char *argv[1], size_t len[1])
{
    argv[0] = "ASKING";
    len[0] = 6;
}

static inline int redlock_cluster_lock_fits(const redlock_lock_opts *o)
{
    static const char prefix[] = REDLOCK_FENCE_PREFIX;
    const size_t plen = sizeof prefix - 1;
    size_t len;
    unsigned slot;
    uint16_t crc = 0;
    size_t i, open, close;
    if (!o || !o->key || !o->fence) return 1;
    len = o->key_len ? o->key_len : strlen(o->key);
    slot = redlock_cluster_slot(o->key, len);
    /* the counter's slot: its tag is the key's unless the prefix has one
       (it has no brace), so the key's first {tag} decides */
    for (open = 0; open < len && o->key[open] != '{'; open++) {
    }
    for (close = open + 1; close < len && o->key[close] != '}'; close++) {
    }
    if (open < len && close < len && close > open + 1) return 1; /* a tag: both in its slot */
    for (i = 0; i < plen; i++) crc = (uint16_t)((crc << 8) ^ redlock__cluster_crc[((crc >> 8) ^ (uint8_t)prefix[i]) & 0xff]);
    for (i = 0; i < len; i++) crc = (uint16_t)((crc << 8) ^ redlock__cluster_crc[((crc >> 8) ^ (uint8_t)o->key[i]) & 0xff]);
    return (crc & (REDLOCK_CLUSTER_SLOTS - 1)) == slot; /* untagged: the same slot only by chance */
}

static inline int redlock_cluster_cross_slot(const redlock_command *cmd)
{
    int n, k;
    unsigned slot;
    if (!cmd || cmd->argc < 4) return 0;
    if (!redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "EVAL") && !redlock__cluster_is(cmd->argv[0], cmd->argvlen[0], "EVALSHA"))
        return 0;
    if (cmd->argvlen[2] != 1 || cmd->argv[2][0] < '1' || cmd->argv[2][0] > '9') return 0;
    n = cmd->argv[2][0] - '0';
    if (n + 3 > cmd->argc) return 0;
    slot = redlock_cluster_slot(cmd->argv[3], cmd->argvlen[3]);
    for (k = 1; k < n; k++)
        if (redlock_cluster_slot(cmd->argv[3 + k], cmd->argvlen[3 + k]) != slot) return 1;
    return 0;
}

#endif /* REDLOCK_CLUSTER_H */
