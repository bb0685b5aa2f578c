/* adapters/redlock_nodes.h - the node description every adapter takes, and
   the parser of the node lists users write. Sans-I/O: no socket, no name
   lookup, no clock; one heap block per parsed list (see MEMORY).

   Every adapter includes it: redlock_socket_node, redlock_hiredis_node and
   redlock_libev_node are redlock_node, and every configuration holds
   node[REDLOCK_MAX_NODES] and node_count, so one call fills any of them:

       redlock_hiredis_config cfg;            // or redlock_socket_config ...
       void *mem = NULL;
       char err[256];
       const char *list = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
       redlock_hiredis_config_init(&cfg);
       if (redlock_parse_nodes(cfg.node, &cfg.node_count, list ? list : REDLOCK_NODES_DEFAULT,
                               &mem, err, sizeof err) != 0) {
           fprintf(stderr, "%s\n", err);      // never holds a password
           return 64;
       }
       rc = redlock_hiredis_init(&c, &cfg);   // init copies the strings ...
       redlock_free_nodes(mem);               // ... so they may go now

   A transport of your own may include this header alone (it needs
   ../redlock.h and redlock_tls.h beside it). Its functions are static
   inline: nothing to define, nothing to link.

   SYNTAX: a comma-separated list of
       host[:port]                      port 6379 by default
       [ipv6]:port                      brackets required for IPv6
       /path/to/redis.sock              anything with a '/' and no "://"
       redis://[user:pass@]host[:port][/db]
       rediss://[user:pass@]host[:port][/db]   the same over TLS (tls.enable)
       unix://[user:pass@]/path/to/redis.sock[?db=N]
       redis-sentinel://[user:pass@]host:port[+host:port...]/MASTER[?OPTIONS]
                                        a primary and its replicas behind
                                        Sentinel: the sentinels, the name
                                        they know the group by (MASTER);
                                        user:pass logs in to the primary
       redis-cluster://[user:pass@]host:port[+host:port...]
                                        a Redis Cluster, by some of its
                                        nodes (seeds; every master is found
                                        from them)
       rediss-sentinel://, rediss-cluster://   the same over TLS
   OPTIONS are name=value joined by '&': db=N, and for the sentinels
   sentinel_user=NAME and sentinel_password=PASS (they may have their own
   login; none by default), with %XX escapes ('@' as %40, '&' as %26). At most REDLOCK_NODES_MAX_SEEDS hosts a node.
   A sentinel group or a cluster is ONE node of the lock's quorum, as a
   single server is (independent groups or clusters make a Redlock quorum).
   with %XX escapes in user and password (%2C for ',', %25 for '%'; a
   password may hold '@' and '/': the last '@' ends it). A host is at most
   REDLOCK_NODES_MAX_HOST characters, none of them a space, a control
   character, '@', '/', ',', '[' or ']'; a port is 1..65535; a socket
   path fits the system's sun_path. A node listed twice (same host,
   case-insensitive, port and db, or same path and db) is refused: it
   would vote twice.
   Whether TLS is built in is the adapter's business: its init refuses a
   rediss:// node it cannot serve (REDLOCK_ERR_NO_TLS), and a kind of node
   it does not serve (REDLOCK_ERR_INVALID; see its doc block).

   DEFAULTS: redlock_parse_nodes(.., NULL, ..) reads $REDLOCK_NODES; a
   program that wants a node when neither its argument nor $REDLOCK_NODES
   names one passes REDLOCK_NODES_DEFAULT ("127.0.0.1:6379"), as the
   examples do. The `redlock` tool does not: a lock taken on whatever runs
   on localhost, by a job whose configuration was lost, excludes nobody.

   MEMORY: the nodes' strings (decoded passwords included) live in one heap
   block per successful call, chained through *mem; redlock_free_nodes()
   wipes and frees them. Nothing else allocates; the adapters' init copies
   what it keeps, so the block may go right after init.

   ERRORS: REDLOCK_ERR_INVALID (a bad node, one listed twice, an empty
   list, a NULL argument), REDLOCK_ERR_NODES (more than REDLOCK_MAX_NODES
   in all), REDLOCK_ERR_NOMEM; then err holds one line naming the node at
   fault, quoted with its password as "***" (an empty one by its place:
   "node 2 of the list is empty"), and node[], *node_count and *mem are
   unchanged. Any text is safe to parse: hostile input ends in one of
   these errors, never past a buffer.

   THREADS: no state of its own; getenv() is the only shared thing read. */
#ifndef REDLOCK_NODES_H
#define REDLOCK_NODES_H

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */
#include "redlock_tls.h"

#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/un.h>
#endif

/* The node when neither a program's argument nor $REDLOCK_NODES names one. */
#define REDLOCK_NODES_DEFAULT "127.0.0.1:6379"
/* The forms, for a program's usage text (two lines, the second indented). */
#define REDLOCK_NODES_SYNTAX                                                                   \
    "host[:port], [ipv6]:port, /path/to/redis.sock, redis://[user:pass@]host[:port][/db],\n" \
    "       rediss://... (TLS), unix://[user:pass@]/path/to/redis.sock[?db=N],\n"            \
    "       redis-sentinel://[user:pass@]host:port[+host:port...]/MASTER[?db=N],\n"          \
    "       redis-cluster://[user:pass@]host:port[+host:port...], rediss-sentinel://, rediss-cluster://"
/* The longest host name a list may hold (a DNS name has at most 253). */
#define REDLOCK_NODES_MAX_HOST 255
/* The most hosts (sentinels, or a cluster's seeds) one node may name. */
#define REDLOCK_NODES_MAX_SEEDS 8

/* What a node is: one server, a Sentinel-managed group, or a cluster. */
typedef enum redlock_node_kind {
    REDLOCK_NODE_SERVER = 0, /* host/port (or unix_path) is the server */
    REDLOCK_NODE_SENTINEL,   /* host/port and seed[] are sentinels; master names the group */
    REDLOCK_NODE_CLUSTER     /* host/port and seed[] are nodes of one cluster */
} redlock_node_kind;

/* A further host of a node (a sentinel, a cluster's seed). */
typedef struct redlock_node_seed {
    const char *host;
    int port; /* 1..65535; 0: 6379 (a sentinel's usual port is 26379: give it) */
} redlock_node_seed;

/* A node: where it is and how to log in. A zero field takes the
   configuration's value (cfg.username, cfg.password, cfg.db, cfg.tls),
   or the default given here. */
typedef struct redlock_node {
    const char *host;      /* name or address; NULL or "": "127.0.0.1" */
    int port;              /* 1..65535; 0: 6379 */
    const char *unix_path; /* set: this Unix socket instead (so is a host that starts with '/') */
    const char *username;  /* ACL user, with a password; NULL: the configuration's */
    const char *password;  /* NULL: the configuration's; "" or both NULL: no AUTH */
    int db;                /* > 0: SELECT db; 0: the configuration's */
    redlock_tls tls;       /* TLS (redlock_tls.h): enable set: on, NULL fields the configuration's */
    redlock_node_kind kind;  /* SERVER (0), SENTINEL or CLUSTER */
    const char *master;      /* SENTINEL: the name the sentinels know the group by */
    int seed_count;          /* further sentinels or seeds, in seed[] */
    redlock_node_seed seed[REDLOCK_NODES_MAX_SEEDS - 1];
    const char *sentinel_username, *sentinel_password; /* SENTINEL: the sentinels' login; NULL: none */
} redlock_node;

/* Parses `list` (NULL: getenv("REDLOCK_NODES")) into node[] (room for
   REDLOCK_MAX_NODES) and *node_count. With *mem NULL the list replaces
   the nodes; with *mem from an earlier call it is appended after
   *node_count of them (a node already there is refused as listed twice).
   Pass &a `void *` that is NULL at first; free it with redlock_free_nodes()
   once node[] is no longer read. 0, or an error (see ERRORS above) with
   its line in err (err may be NULL). */
static inline int redlock_parse_nodes(redlock_node *node, int *node_count, const char *list, void **mem, char *err,
                                      size_t errlen);
/* Frees every block of a *mem chain, passwords wiped first. NULL: nothing. */
static inline void redlock_free_nodes(void *mem);
/* A node as text for messages, its password as "***": "host:port",
   "[::1]:port", "/path.sock", "redis://user:***@host:port/db",
   "unix://:***@/path.sock?db=3". Returns the length it needs (like
   snprintf; the text is cut to fit cap, always terminated when cap > 0). */
static inline int redlock_format_node(const redlock_node *n, char *out, size_t cap);
/* Overwrites, in place, the password of every URL in a node list with 'x'
   (the user name too when there is no ':'), finding them as the parser
   does: e.g. in argv, so that ps does not show them. NULL: nothing. */
static inline void redlock_scrub_nodes(char *list);

/* ---- implementation ---- */

#ifdef _WIN32
#define REDLOCK__NODES_PATH_MAX 108
#else
#define REDLOCK__NODES_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
#endif
#define REDLOCK__NODES_SHOWN 160 /* a bad node is quoted up to this length */
/* The parser proper stays one function: inlined into a caller that passes
   a string literal, gcc follows the literal into branches it cannot take
   and warns (-Warray-bounds) about reads they would make. */
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK__NODES_OUTLINE static __attribute__((noinline, unused))
#else
#define REDLOCK__NODES_OUTLINE static inline
#endif

/* One block per parsed list; blocks of appended lists are chained. */
typedef struct redlock__nodes_mem {
    struct redlock__nodes_mem *prev;
    size_t size, used;
} redlock__nodes_mem;

/* A message built piece by piece into err[0..cap), cut to fit. */
typedef struct redlock__nodes_msg {
    char *out;
    size_t cap, len;
} redlock__nodes_msg;

static inline void redlock__nodes_put_text(redlock__nodes_msg *m, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n && s[i]; i++, m->len++)
        if (m->out && m->len + 1 < m->cap) m->out[m->len] = s[i];
    if (m->out && m->cap) m->out[m->len < m->cap ? m->len : m->cap - 1] = 0;
}

static inline void redlock__nodes_put(redlock__nodes_msg *m, const char *s) { redlock__nodes_put_text(m, s, (size_t)-1); }

static inline void redlock__nodes_put_num(redlock__nodes_msg *m, long v)
{
    char num[24];
    int i = (int)sizeof num - 1;
    num[i] = 0;
    do num[--i] = (char)('0' + v % 10); while ((v /= 10) > 0 && i > 0);
    redlock__nodes_put(m, num + i);
}

static inline int redlock__nodes_hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static inline int redlock__nodes_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Where "://" starts in s[0..len), or len. */
static inline size_t redlock__nodes_scheme(const char *s, size_t len)
{
    size_t r;
    for (r = 0; r + 3 <= len; r++)
        if (memcmp(s + r, "://", 3) == 0) return r;
    return len;
}

/* Where the userinfo of one spec s[0..len) is: 1 and [*ui, *at) (the '@'
   at *at) if there is one. redis://: up to the last '@' (passwords may
   hold '@' or '/'); unix://: up to the first "@/". Parsing, redaction and
   scrubbing all use this, so they agree. */
static inline int redlock__nodes_userinfo(const char *s, size_t len, size_t *ui, size_t *at)
{
    size_t i, r = redlock__nodes_scheme(s, len);
    if (r == len) return 0;
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

/* Where a sentinel_password's value is in the spec s[0..len) (after the
   userinfo's '@', from): 1 and [*from, *to), or 0. */
static inline int redlock__nodes_option_secret(const char *s, size_t len, size_t after, size_t *from, size_t *to)
{
    static const char name[] = "sentinel_password=";
    size_t i, n = sizeof name - 1;
    for (i = after; i + n <= len; i++)
        if ((s[i - 1] == '?' || s[i - 1] == '&') && memcmp(s + i, name, n) == 0) {
            *from = i + n;
            for (*to = *from; *to < len && s[*to] != '&'; ++*to) {}
            return 1;
        }
    return 0;
}

/* The spec s[0..len) for a message: the password (the whole userinfo when
   it has no ':') and a sentinel_password as "***", cut to
   REDLOCK__NODES_SHOWN characters. */
static inline void redlock__nodes_redact(redlock__nodes_msg *m, const char *s, size_t len)
{
    size_t ui, at, hide[2][2], shown = len < REDLOCK__NODES_SHOWN ? len : REDLOCK__NODES_SHOWN, pos = 0, after = 1;
    int n = 0, k;
    if (redlock__nodes_userinfo(s, len, &ui, &at)) {
        const char *colon = (const char *)memchr(s + ui, ':', at - ui);
        hide[n][0] = colon ? (size_t)(colon - s) + 1 : ui;
        hide[n++][1] = at;
        after = at + 1;
    }
    if (redlock__nodes_option_secret(s, len, after, &hide[n][0], &hide[n][1])) n++;
    for (k = 0; k < n && hide[k][0] < shown; k++) {
        redlock__nodes_put_text(m, s + pos, hide[k][0] - pos);
        redlock__nodes_put(m, "***");
        pos = hide[k][1];
    }
    if (pos < shown) redlock__nodes_put_text(m, s + pos, shown - pos);
}

/* Appends s[0..n), percent-decoded if asked, to the block; NULL on a bad
   escape or %00. The block holds every piece of the list (see the size
   at its allocation). */
static inline char *redlock__nodes_keep(redlock__nodes_mem *m, const char *s, size_t n, int decode)
{
    char *d = (char *)(m + 1) + m->used, *o = d;
    size_t i;
    for (i = 0; i < n; i++) {
        if (decode && s[i] == '%') {
            int h, l;
            if (i + 2 >= n) return NULL;
            h = redlock__nodes_hexval((unsigned char)s[i + 1]);
            l = redlock__nodes_hexval((unsigned char)s[i + 2]);
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
static inline int redlock__nodes_int(const char *s, size_t n, long lo, long hi, int *out)
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
static inline const char *redlock__nodes_hostport(redlock__nodes_mem *m, const char *s, size_t n, redlock_node *nd)
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
    if (hl > REDLOCK_NODES_MAX_HOST) return "host name too long";
    for (i = 0; i < hl; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c <= ' ' || c == 127 || c == '@' || c == '/' || c == ',' || c == '[' || c == ']') return "bad host name";
    }
    if (colon && redlock__nodes_int(colon + 1, (size_t)(s + n - colon - 1), 1, 65535, &nd->port) != 0)
        return "port must be 1..65535";
    nd->host = redlock__nodes_keep(m, h, hl, 0);
    return NULL;
}

/* userinfo "user:pass" or ":pass" from s[0..n). */
static inline const char *redlock__nodes_login(redlock__nodes_mem *m, const char *s, size_t n, redlock_node *nd)
{
    const char *colon = (const char *)memchr(s, ':', n);
    if (!colon) return "give a password as user:pass@ or :pass@";
    if (colon > s && !(nd->username = redlock__nodes_keep(m, s, (size_t)(colon - s), 1)))
        return "bad %-escape in the user name";
    if (!(nd->password = redlock__nodes_keep(m, colon + 1, (size_t)(s + n - colon - 1), 1)))
        return "bad %-escape in the password";
    if (!nd->password[0]) return "empty password";
    return NULL;
}

/* The hosts of a sentinel or cluster URL, s[0..n): host:port joined by '+'. */
static inline const char *redlock__nodes_seeds(redlock__nodes_mem *m, const char *s, size_t n, redlock_node *nd)
{
    const char *end = s + n, *why;
    for (;;) {
        const char *plus = (const char *)memchr(s, '+', (size_t)(end - s)), *stop = plus ? plus : end;
        redlock_node one;
        memset(&one, 0, sizeof one);
        if ((why = redlock__nodes_hostport(m, s, (size_t)(stop - s), nd->host ? &one : nd))) return why;
        if (nd->host && nd->seed_count >= REDLOCK_NODES_MAX_SEEDS - 1) return "too many hosts (at most REDLOCK_NODES_MAX_SEEDS)";
        if (one.host) {
            nd->seed[nd->seed_count].host = one.host;
            nd->seed[nd->seed_count++].port = one.port;
        }
        if (!plus) return NULL;
        s = plus + 1;
    }
}

/* A sentinel URL's options s[0..n) (after '?'): db=, sentinel_user=,
   sentinel_password=, joined by '&'. */
static inline const char *redlock__nodes_options(redlock__nodes_mem *m, const char *s, size_t n, redlock_node *nd)
{
    const char *end = s + n;
    while (s < end) {
        const char *amp = (const char *)memchr(s, '&', (size_t)(end - s)), *stop = amp ? amp : end;
        const char *eq = (const char *)memchr(s, '=', (size_t)(stop - s));
        size_t nl = eq ? (size_t)(eq - s) : 0, vl = eq ? (size_t)(stop - eq - 1) : 0;
        if (!eq || vl == 0) return "an option is name=value";
        if (nl == 2 && memcmp(s, "db", 2) == 0) {
            if (redlock__nodes_int(eq + 1, vl, 0, 1000000, &nd->db) != 0) return "database must be a number";
        } else if (nl == 13 && memcmp(s, "sentinel_user", 13) == 0) {
            if (!(nd->sentinel_username = redlock__nodes_keep(m, eq + 1, vl, 1))) return "bad %-escape in sentinel_user";
        } else if (nl == 17 && memcmp(s, "sentinel_password", 17) == 0) {
            if (!(nd->sentinel_password = redlock__nodes_keep(m, eq + 1, vl, 1))) return "bad %-escape in sentinel_password";
        } else {
            return "unknown option (db, sentinel_user, sentinel_password)";
        }
        s = stop + (amp != NULL);
    }
    if (nd->sentinel_username && !nd->sentinel_password) return "sentinel_user needs a sentinel_password";
    return NULL;
}

/* redis[s]://, redis[s]-sentinel:// or redis[s]-cluster:// (hp: after the
   scheme; nd->kind set) to end. */
static inline const char *redlock__nodes_url(redlock__nodes_mem *m, const char *s, size_t len, const char *hp,
                                             redlock_node *nd)
{
    const char *end = s + len, *p, *q, *why;
    size_t ui, at;
    if (redlock__nodes_userinfo(s, len, &ui, &at)) {
        if ((why = redlock__nodes_login(m, s + ui, at - ui, nd))) return why;
        hp = s + at + 1;
    }
    for (p = hp; p < end && *p != '/' && *p != '?' && *p != '#'; p++) {}
    if (nd->kind == REDLOCK_NODE_SERVER) {
        if ((why = redlock__nodes_hostport(m, hp, (size_t)(p - hp), nd))) return why;
        if (p < end && (*p == '?' || *p == '#')) return "URL options are not supported";
        if (p < end && p + 1 < end && redlock__nodes_int(p + 1, (size_t)(end - p - 1), 0, 1000000, &nd->db) != 0)
            return "database must be a number";
        return NULL;
    }
    if ((why = redlock__nodes_seeds(m, hp, (size_t)(p - hp), nd))) return why;
    if (p < end && *p == '#') return "a URL fragment ('#') is not supported";
    if (nd->kind == REDLOCK_NODE_CLUSTER) return p < end ? "a cluster URL has no database or options (a cluster has db 0 only)" : NULL;
    if (p == end || *p != '/' || p + 1 == end || p[1] == '?') return "name the group after the hosts: /MASTER";
    for (q = p + 1; q < end && *q != '?'; q++) {}
    if (!(nd->master = redlock__nodes_keep(m, p + 1, (size_t)(q - p - 1), 1)) || !nd->master[0])
        return "bad %-escape in the group's name";
    return q < end ? redlock__nodes_options(m, q + 1, (size_t)(end - q - 1), nd) : NULL;
}

/* unix://[userinfo@]/path[?db=N] to end. */
static inline const char *redlock__nodes_unix_url(redlock__nodes_mem *m, const char *s, size_t len, redlock_node *nd)
{
    const char *path = s + 7, *end = s + len, *q, *why;
    size_t ui, at;
    if (redlock__nodes_userinfo(s, len, &ui, &at)) {
        if ((why = redlock__nodes_login(m, s + ui, at - ui, nd))) return why;
        path = s + at + 1;
    }
    if (path >= end || *path != '/') return "unix:// needs an absolute path";
    q = (const char *)memchr(path, '?', (size_t)(end - path));
    if (q && (end - q < 4 || memcmp(q, "?db=", 4) != 0 ||
              redlock__nodes_int(q + 4, (size_t)(end - q - 4), 0, 1000000, &nd->db) != 0))
        return "only ?db=N is supported";
    nd->unix_path = redlock__nodes_keep(m, path, (size_t)((q ? q : end) - path), 0);
    return NULL;
}

/* One spec s[0..len) into nd. A reason, or NULL. */
static inline const char *redlock__nodes_one(redlock__nodes_mem *m, const char *s, size_t len, redlock_node *nd)
{
    size_t sep = redlock__nodes_scheme(s, len);
    const char *why = NULL;
    memset(nd, 0, sizeof *nd);
    if (sep == len && memchr(s, '/', len)) nd->unix_path = redlock__nodes_keep(m, s, len, 0); /* a socket path */
    else if (sep == len) why = redlock__nodes_hostport(m, s, len, nd);
    else if (sep == 4 && memcmp(s, "unix", 4) == 0) {
        why = redlock__nodes_unix_url(m, s, len, nd);
    } else {
        size_t base = sep >= 6 && memcmp(s, "rediss", 6) == 0 ? 6 : 5;
        if (sep < 5 || memcmp(s, "redis", 5) != 0) base = 0;
        else if (sep == base) nd->kind = REDLOCK_NODE_SERVER;
        else if (sep == base + 9 && memcmp(s + base, "-sentinel", 9) == 0) nd->kind = REDLOCK_NODE_SENTINEL;
        else if (sep == base + 8 && memcmp(s + base, "-cluster", 8) == 0) nd->kind = REDLOCK_NODE_CLUSTER;
        else base = 0;
        if (base) {
            nd->tls.enable = base == 6;
            why = redlock__nodes_url(m, s, len, s + sep + 3, nd);
        } else {
            why = "unknown URL scheme (use redis://, rediss://, unix://, redis-sentinel:// or redis-cluster://)";
        }
    }
    if (!why && nd->unix_path && strlen(nd->unix_path) >= REDLOCK__NODES_PATH_MAX) why = "unix socket path too long";
    return why;
}

/* A ',' in a URL's user name or password cuts the URL in two: a URL
   without '@' (s[0..len)) followed by pieces up to one with an '@' that is
   neither a URL nor a socket path (no valid node has one). Where that is
   the case, says so (without the password) and returns 1. */
static inline int redlock__nodes_comma(redlock__nodes_msg *msg, const char *s, size_t len)
{
    size_t sep = redlock__nodes_scheme(s, len);
    const char *q = s + len;
    if (sep == len || memchr(s, '@', len)) return 0;
    while (*q == ',') {
        size_t n = strcspn(++q, ",");
        const char *at = NULL, *r;
        if (*q == '/' || redlock__nodes_scheme(q, n) < n) return 0;
        for (r = q; r < q + n; r++) /* the host follows the last '@' */
            if (*r == '@') at = r;
        if (at) {
            redlock__nodes_put(msg, "bad node '");
            redlock__nodes_put_text(msg, s, sep > 10 ? 10 : sep);
            redlock__nodes_put(msg, "://***@");
            redlock__nodes_put_text(msg, at + 1, (size_t)(q + n - at - 1) > 100 ? 100 : (size_t)(q + n - at - 1));
            redlock__nodes_put(msg, "': a ',' in a user name or password must be written %2C"
                                    " (the node list is split at ',')");
            return 1;
        }
        q += n;
    }
    return 0;
}

/* The k-th host of a node (0: host/port, then seed[]). */
static inline void redlock__nodes_host_at(const redlock_node *n, int k, const char **host, int *port)
{
    *host = k ? n->seed[k - 1].host : n->host;
    *port = k ? n->seed[k - 1].port : n->port;
}

/* The same node twice would vote twice: the same server (host, case-
   insensitive, and port; or path) and db, also as one of a cluster's
   seeds; the same group (name) through a sentinel of both lists. */
static inline int redlock__nodes_same(const redlock_node *a, const redlock_node *b)
{
    int i, j;
    if (a->db != b->db || (a->kind == REDLOCK_NODE_SENTINEL) != (b->kind == REDLOCK_NODE_SENTINEL)) return 0;
    if (a->kind == REDLOCK_NODE_SENTINEL && strcmp(a->master, b->master) != 0) return 0;
    if (a->unix_path || b->unix_path) return a->unix_path && b->unix_path && strcmp(a->unix_path, b->unix_path) == 0;
    for (i = 0; i <= a->seed_count; i++)
        for (j = 0; j <= b->seed_count; j++) {
            const char *x, *y;
            int px, py;
            redlock__nodes_host_at(a, i, &x, &px);
            redlock__nodes_host_at(b, j, &y, &py);
            if (px != py || !x || !y) continue;
            for (; *x && *y && redlock__nodes_lower((unsigned char)*x) == redlock__nodes_lower((unsigned char)*y); x++, y++) {}
            if (*x == 0 && *y == 0) return 1;
        }
    return 0;
}

static inline void redlock_free_nodes(void *mem)
{
    redlock__nodes_mem *m = (redlock__nodes_mem *)mem;
    while (m) {
        redlock__nodes_mem *prev = m->prev;
        volatile char *v = (volatile char *)(m + 1);
        size_t i;
        for (i = 0; i < m->size; i++) v[i] = 0; /* passwords */
        free(m);
        m = prev;
    }
}

/* Parses the specs of list into tmp[0..*n) (have nodes already in node[],
   only read: not const, or gcc takes a caller's fresh array for one read
   uninitialised). 0, or an error with its message. */
REDLOCK__NODES_OUTLINE int redlock__nodes_specs(redlock__nodes_mem *m, redlock_node *node, int have, const char *list,
                                       redlock_node *tmp, int *n, redlock__nodes_msg *msg)
{
    size_t off = 0;
    int i;
    for (*n = 0;; off++) {
        size_t one = strcspn(list + off, ",");
        const char *why;
        if (have + *n >= REDLOCK_MAX_NODES) {
            redlock__nodes_put(msg, "too many nodes (at most ");
            redlock__nodes_put_num(msg, REDLOCK_MAX_NODES);
            redlock__nodes_put(msg, ")");
            return REDLOCK_ERR_NODES;
        }
        if (one == 0) {
            redlock__nodes_put(msg, "node ");
            redlock__nodes_put_num(msg, *n + 1);
            redlock__nodes_put(msg, " of the list is empty");
            return REDLOCK_ERR_INVALID;
        }
        if (redlock__nodes_comma(msg, list + off, one)) return REDLOCK_ERR_INVALID;
        if ((why = redlock__nodes_one(m, list + off, one, &tmp[*n]))) {
            redlock__nodes_put(msg, "bad node '");
            redlock__nodes_redact(msg, list + off, one);
            redlock__nodes_put(msg, "': ");
            redlock__nodes_put(msg, why);
            return REDLOCK_ERR_INVALID;
        }
        for (i = 0; i < have + *n; i++)
            if (redlock__nodes_same(i < have ? &node[i] : &tmp[i - have], &tmp[*n])) {
                redlock__nodes_put(msg, "node '");
                redlock__nodes_redact(msg, list + off, one);
                redlock__nodes_put(msg, "' is listed twice");
                return REDLOCK_ERR_INVALID;
            }
        ++*n;
        off += one;
        if (!list[off]) return 0;
    }
}

static inline int redlock_parse_nodes(redlock_node *node, int *node_count, const char *list, void **mem, char *err,
                                      size_t errlen)
{
    redlock_node tmp[REDLOCK_MAX_NODES];
    redlock__nodes_mem *m;
    redlock__nodes_msg msg;
    size_t len, size;
    int have, n, i, rc;
    msg.out = err;
    msg.cap = errlen;
    msg.len = 0;
    redlock__nodes_put(&msg, "");
    if (!node || !node_count || !mem) {
        redlock__nodes_put(&msg, "invalid argument");
        return REDLOCK_ERR_INVALID;
    }
    if (!list) list = getenv("REDLOCK_NODES");
    if (!list || !list[0]) {
        redlock__nodes_put(&msg, "no nodes (an empty list, or REDLOCK_NODES not set)");
        return REDLOCK_ERR_INVALID;
    }
    have = *mem ? *node_count : 0;
    if (have < 0 || have > REDLOCK_MAX_NODES) have = REDLOCK_MAX_NODES;
    len = strlen(list);
    /* the pieces kept of a spec are disjoint parts of it, each plus a
       terminator (at most 3 a spec): the list's length and 4 bytes a node
       always suffice; the rest is a margin */
    size = 2 * len + 4 * REDLOCK_MAX_NODES + 16;
    if (len > ((size_t)-1 - sizeof *m - 4 * REDLOCK_MAX_NODES - 16) / 2 || !(m = (redlock__nodes_mem *)malloc(sizeof *m + size))) {
        redlock__nodes_put(&msg, "out of memory");
        return REDLOCK_ERR_NOMEM;
    }
    m->prev = NULL;
    m->size = size;
    m->used = 0;
    if ((rc = redlock__nodes_specs(m, node, have, list, tmp, &n, &msg)) != 0) {
        redlock_free_nodes(m);
        return rc;
    }
    for (i = 0; i < n; i++) node[have + i] = tmp[i];
    *node_count = have + n;
    m->prev = (redlock__nodes_mem *)*mem;
    *mem = m;
    return 0;
}

static inline int redlock_format_node(const redlock_node *n, char *out, size_t cap)
{
    redlock__nodes_msg m;
    const char *host = n && n->host && n->host[0] ? n->host : "127.0.0.1";
    m.out = out;
    m.cap = cap;
    m.len = 0;
    redlock__nodes_put(&m, "");
    if (!n) return 0;
    if (n->kind == REDLOCK_NODE_SENTINEL || n->kind == REDLOCK_NODE_CLUSTER) {
        int k;
        redlock__nodes_put(&m, n->tls.enable ? "rediss" : "redis");
        redlock__nodes_put(&m, n->kind == REDLOCK_NODE_SENTINEL ? "-sentinel://" : "-cluster://");
        if (n->password || n->username) {
            if (n->username) redlock__nodes_put(&m, n->username);
            redlock__nodes_put(&m, ":***@");
        }
        for (k = 0; k <= n->seed_count && k < REDLOCK_NODES_MAX_SEEDS; k++) {
            const char *h;
            int port;
            redlock__nodes_host_at(n, k, &h, &port);
            if (k) redlock__nodes_put(&m, "+");
            if (h && strchr(h, ':')) redlock__nodes_put(&m, "[");
            redlock__nodes_put(&m, h && h[0] ? h : "127.0.0.1");
            redlock__nodes_put(&m, h && strchr(h, ':') ? "]:" : ":");
            redlock__nodes_put_num(&m, port > 0 ? port : 6379);
        }
        if (n->kind == REDLOCK_NODE_SENTINEL) {
            redlock__nodes_put(&m, "/");
            redlock__nodes_put(&m, n->master ? n->master : "");
            if (n->db > 0) redlock__nodes_put(&m, "?db=");
            if (n->db > 0) redlock__nodes_put_num(&m, n->db);
        }
        return (int)m.len;
    }
    if (n->password || n->username) { /* a URL: the password shown as *** */
        redlock__nodes_put(&m, n->unix_path ? "unix://" : n->tls.enable ? "rediss://" : "redis://");
        if (n->username) redlock__nodes_put(&m, n->username);
        redlock__nodes_put(&m, ":***@");
    } else if ((n->db > 0 || n->tls.enable) && !n->unix_path) {
        redlock__nodes_put(&m, n->tls.enable ? "rediss://" : "redis://");
    } else if (n->unix_path && (n->db > 0 || strstr(n->unix_path, "://"))) { /* as a plain path it would read as a URL */
        redlock__nodes_put(&m, "unix://");
    }
    if (n->unix_path) {
        redlock__nodes_put(&m, n->unix_path);
        if (n->db > 0) redlock__nodes_put(&m, "?db=");
    } else {
        int v6 = strchr(host, ':') != NULL;
        if (v6) redlock__nodes_put(&m, "[");
        redlock__nodes_put(&m, host);
        redlock__nodes_put(&m, v6 ? "]:" : ":");
        redlock__nodes_put_num(&m, n->port > 0 ? n->port : 6379);
        if (n->db > 0) redlock__nodes_put(&m, "/");
    }
    if (n->db > 0) redlock__nodes_put_num(&m, n->db);
    return (int)m.len;
}

static inline void redlock_scrub_nodes(char *s)
{
    if (!s) return;
    for (;;) {
        size_t n = strcspn(s, ","), ui, at, i;
        size_t from, to, after = 1;
        if (redlock__nodes_userinfo(s, n, &ui, &at)) {
            const char *colon = (const char *)memchr(s + ui, ':', at - ui);
            for (i = colon ? (size_t)(colon - s) + 1 : ui; i < at; i++) s[i] = 'x';
            after = at + 1;
        }
        if (redlock__nodes_option_secret(s, n, after, &from, &to))
            for (i = from; i < to; i++) s[i] = 'x';
        if (!s[n]) break;
        s += n + 1;
    }
}

#endif /* REDLOCK_NODES_H */
