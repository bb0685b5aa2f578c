/* tools/args.c - command line of the `redlock` tool (see args.h). Node
   lists are parsed by the adapters' parser (redlock_parse_nodes). */
#define _POSIX_C_SOURCE 200809L

#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void tool_opts_free(tool_opts *o)
{
    redlock_free_nodes(o->node_mem); /* wipes the passwords */
    o->node_mem = NULL;
    o->node_count = 0;
}

/* ---- durations ---- */

int tool_parse_duration(const char *s, int64_t *ms)
{
    double whole = 0, frac = 0, scale = 1, unit, v;
    int digits = 0;
    const char *p = s;
    if (!s) return -1;
    while (*p >= '0' && *p <= '9') {
        whole = whole * 10 + (*p++ - '0');
        digits++;
        if (whole > 1e15) return -1;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            scale /= 10;
            frac += (*p++ - '0') * scale;
            digits++;
        }
    }
    if (!digits) return -1;
    if (strcmp(p, "ms") == 0) unit = 1;
    else if (strcmp(p, "s") == 0 || *p == 0) unit = 1000;
    else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0) unit = 60000;
    else if (strcmp(p, "h") == 0) unit = 3600000;
    else return -1;
    v = (whole + frac) * unit + 0.5;
    if (v >= (double)TOOL_MAX_DURATION_MS) return -1;
    *ms = (int64_t)v;
    return 0;
}

void tool_format_ms(char *out, size_t cap, int64_t ms)
{
    if (ms < 0) snprintf(out, cap, "-");
    else if (ms < 1000) snprintf(out, cap, "%lldms", (long long)ms);
    else snprintf(out, cap, "%lld.%03llds", (long long)(ms / 1000), (long long)(ms % 1000));
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Nodes (-n, or REDLOCK_NODES): the adapters' parser (redlock_nodes.h);
   each -n appends. */
static int add_nodes(tool_opts *o, const char *list, char *err, size_t errlen)
{
    int i;
    if (redlock_parse_nodes(o->net.node, &o->net.node_count, list, &o->node_mem, err, errlen) != 0) return -1;
    for (i = 0; i < o->net.node_count; i++) redlock_format_node(&o->net.node[i], o->shown[i], sizeof o->shown[i]);
    o->node_count = o->net.node_count;
    return 0;
}

/* ---- the command line ---- */

/* An owner id as redlock_lock_init takes it: 1..REDLOCK_MAX_OWNER
   printable characters, no space. */
static int tool_owner_ok(const char *s)
{
    size_t i, n = strlen(s);
    if (n == 0 || n > REDLOCK_MAX_OWNER) return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127) return 0;
    return 1;
}

/* ---- inherited owners (args.h: REDLOCK_OWNER_SCOPE) ---- */

#define SCOPE_VAR "REDLOCK_OWNER_SCOPE"

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    while (n--) {
        h ^= *b++;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* The node list's identity: each node's address (host and port, or socket
   path) and database hashed, the hashes sorted (the order of the list does
   not matter) and hashed again. Users, passwords and TLS do not count: the
   keys are the same. */
static void nodes_id(tool_opts *o)
{
    uint64_t h[REDLOCK_MAX_NODES], all = 0xcbf29ce484222325ULL, t;
    int i, j;
    for (i = 0; i < o->node_count; i++) {
        const redlock_node *n = &o->net.node[i];
        const char *where = n->unix_path ? n->unix_path : n->host && n->host[0] ? n->host : "127.0.0.1";
        char rest[48];
        snprintf(rest, sizeof rest, "\n%d\n%d", n->unix_path ? -1 : n->port ? n->port : 6379, n->db > 0 ? n->db : o->net.db);
        h[i] = fnv1a(fnv1a(0xcbf29ce484222325ULL, where, strlen(where)), rest, strlen(rest));
    }
    for (i = 1; i < o->node_count; i++)
        for (j = i; j > 0 && h[j - 1] > h[j]; j--) {
            t = h[j];
            h[j] = h[j - 1];
            h[j - 1] = t;
        }
    for (i = 0; i < o->node_count; i++) {
        unsigned char b[8];
        for (j = 0; j < 8; j++) b[j] = (unsigned char)(h[i] >> (56 - 8 * j));
        all = fnv1a(all, b, sizeof b);
    }
    snprintf(o->nodes_id, sizeof o->nodes_id, "%016llx", (unsigned long long)all);
}

/* NAME as an entry holds it (out: 3 * strlen(s) + 1 bytes). */
static size_t scope_name(const char *s, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c >= 127 || c == '%') {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = 0;
    return n;
}

typedef struct scope_entry {
    const char *id, *name, *owner;
    size_t idlen, namelen, ownerlen;
} scope_entry;

static size_t scope_word(const char **p, const char **start)
{
    while (**p == ' ') (*p)++;
    *start = *p;
    while (**p && **p != ' ') (*p)++;
    return (size_t)(*p - *start);
}

/* The next entry at *p: 1, 0 at the end, -1 when malformed. */
static int scope_next(const char **p, scope_entry *e)
{
    size_t i;
    e->idlen = scope_word(p, &e->id);
    if (!e->idlen) return 0;
    e->namelen = scope_word(p, &e->name);
    e->ownerlen = scope_word(p, &e->owner);
    if (e->idlen != 16 || !e->namelen || e->namelen > 3 * (size_t)REDLOCK_MAX_KEY || !e->ownerlen ||
        e->ownerlen > REDLOCK_MAX_OWNER)
        return -1;
    for (i = 0; i < e->idlen; i++)
        if (hexval((unsigned char)e->id[i]) < 0) return -1;
    for (i = 0; i < e->ownerlen; i++)
        if ((unsigned char)e->owner[i] <= ' ' || (unsigned char)e->owner[i] >= 127) return -1;
    return 1;
}

/* The last entry of `scope` for NAME (encoded) on o's nodes: 1 (in *hit),
   0 none, -1 when the value is malformed. */
static int scope_find(const tool_opts *o, const char *scope, const char *name, size_t nlen, scope_entry *hit)
{
    scope_entry e;
    int r, found = 0;
    while (scope && (r = scope_next(&scope, &e)) != 0) {
        if (r < 0) return -1;
        if (memcmp(e.id, o->nodes_id, 16) == 0 && e.namelen == nlen && memcmp(e.name, name, nlen) == 0) {
            *hit = e;
            found = 1;
        }
    }
    return found;
}

/* A run (not readers-writer, not legacy, no --owner): re-enters NAME when
   an enclosing reentrant run holds it on these nodes, as its owner. Else a
   --reentrant run takes REDLOCK_OWNER as its owner only when it is the
   caller's own, not an owner some enclosing run handed down (that one
   stays with its lock: siblings below must not share other locks). */
static int inherit_owner(tool_opts *o, char *err, size_t errlen)
{
    const char *env = getenv("REDLOCK_OWNER"), *scope = getenv(SCOPE_VAR), *p;
    char name[3 * REDLOCK_MAX_KEY + 1];
    size_t nlen, envlen;
    scope_entry e;
    int r;
    if (!env || !env[0]) return 0; /* unset: nothing is inherited */
    if (!tool_owner_ok(env)) {
        say(err, errlen, "bad REDLOCK_OWNER '%.40s' (1 to %d printable characters, no space)", env, REDLOCK_MAX_OWNER);
        return -1;
    }
    nlen = scope_name(o->name, name);
    r = scope_find(o, scope, name, nlen, &e);
    if (r < 0) {
        say(err, errlen, "bad " SCOPE_VAR " '%.40s' (entries: NODES NAME OWNER)", scope);
        return -1;
    }
    if (r > 0) {
        memcpy(o->owner_mem, e.owner, e.ownerlen);
        o->owner_mem[e.ownerlen] = 0;
        o->owner = o->owner_mem;
        o->reentrant = 1;
        return 0;
    }
    if (!o->reentrant) return 0;
    envlen = strlen(env);
    for (p = scope; p && scope_next(&p, &e) == 1;)
        if (e.ownerlen == envlen && memcmp(e.owner, env, envlen) == 0) return 0; /* handed down: a new owner */
    o->owner = env;
    return 0;
}

char *tool_owner_scope(const tool_opts *o, const char *owner)
{
    const char *env = getenv("REDLOCK_OWNER"), *old = getenv(SCOPE_VAR);
    char name[3 * REDLOCK_MAX_KEY + 1];
    size_t nlen = scope_name(o->name, name), olen = strlen(owner), keep, cap;
    scope_entry e;
    char *out;
    int r = 0, there;
    /* REDLOCK_OWNER unset (env -u): the enclosing runs' locks are left
       behind; a malformed value is not ours to mend: begun anew */
    if (!env || !env[0] || (r = scope_find(o, old, name, nlen, &e)) < 0) old = NULL, r = 0;
    keep = old ? strlen(old) : 0;
    there = r > 0 && e.ownerlen == olen && memcmp(e.owner, owner, olen) == 0; /* re-entered */
    cap = keep + 1 + sizeof o->nodes_id + nlen + 1 + olen + 1;
    out = (char *)malloc(cap);
    if (!out) return NULL;
    if (there) snprintf(out, cap, "%s", old);
    else snprintf(out, cap, "%s%s%s %s %s", keep ? old : "", keep ? " " : "", o->nodes_id, name, owner);
    return out;
}

/* getopt_long in REQUIRE_ORDER mode ("+"): it stops at each positional
   argument, which is taken and skipped, and at "--", so that NAME,
   TOKEN and COMMAND are seen where they are (no permutation). Combined
   short flags (-vq), -t10s, --ttl=10s and unambiguous abbreviations of
   long options work as getopt_long users expect. opterr is 0: messages
   are ours, one line. */

enum { O_NO_WAIT = 256, O_RETRY, O_NODE_TIMEOUT, O_LEGACY, O_MODE, O_ON_LOST, O_KILL_AFTER, O_FOREGROUND, O_JSON,
       O_TLS, O_TLS_CA, O_TLS_CERT, O_TLS_KEY, O_TLS_SERVER_NAME, O_TLS_INSECURE, O_REENTRANT, O_OWNER,
       O_FENCE, O_EVICTING, O_LABEL, O_NO_LABEL, O_MAX_TTL, O_WAIT_REPLICAS, O_LOG_FORMAT, O_STATS };

static const struct option long_opts[] = {
    { "nodes", required_argument, NULL, 'n' },
    { "ttl", required_argument, NULL, 't' },
    { "wait", required_argument, NULL, 'w' },
    { "no-wait", no_argument, NULL, O_NO_WAIT },
    { "retry-delay", required_argument, NULL, O_RETRY },
    { "node-timeout", required_argument, NULL, O_NODE_TIMEOUT },
    { "legacy", no_argument, NULL, O_LEGACY },
    { "mode", required_argument, NULL, O_MODE },
    { "on-lost", required_argument, NULL, O_ON_LOST },
    { "kill-after", required_argument, NULL, O_KILL_AFTER },
    { "foreground", no_argument, NULL, O_FOREGROUND },
    { "reentrant", no_argument, NULL, O_REENTRANT },
    { "owner", required_argument, NULL, O_OWNER },
    { "fence", no_argument, NULL, O_FENCE },
    { "evicting", required_argument, NULL, O_EVICTING },
    { "max-ttl", required_argument, NULL, O_MAX_TTL },
    { "wait-replicas", required_argument, NULL, O_WAIT_REPLICAS },
    { "label", required_argument, NULL, O_LABEL },
    { "no-label", no_argument, NULL, O_NO_LABEL },
    { "shared", no_argument, NULL, 's' },
    { "exclusive", no_argument, NULL, 'x' },
    { "json", no_argument, NULL, O_JSON },
    { "log-format", required_argument, NULL, O_LOG_FORMAT },
    { "stats", optional_argument, NULL, O_STATS },
    { "tls", no_argument, NULL, O_TLS },
    { "tls-ca", required_argument, NULL, O_TLS_CA },
    { "tls-cert", required_argument, NULL, O_TLS_CERT },
    { "tls-key", required_argument, NULL, O_TLS_KEY },
    { "tls-server-name", required_argument, NULL, O_TLS_SERVER_NAME },
    { "tls-insecure-skip-verify", no_argument, NULL, O_TLS_INSECURE },
    { "quiet", no_argument, NULL, 'q' },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
};
static const char short_opts[] = "+:n:t:w:sxqvhV";

#define C_(c) (1u << (c))
#define C_ALL (C_(TOOL_CMD_RUN) | C_(TOOL_CMD_ACQUIRE) | C_(TOOL_CMD_RELEASE) | C_(TOOL_CMD_EXTEND) | C_(TOOL_CMD_INSPECT))

/* Which subcommands an option applies to; any other use is an error. */
static unsigned applies_to(int id)
{
    switch (id) {
    case 't': case O_MAX_TTL: case O_WAIT_REPLICAS: return C_(TOOL_CMD_RUN) | C_(TOOL_CMD_ACQUIRE) | C_(TOOL_CMD_EXTEND);
    case 'w': case O_NO_WAIT: case O_RETRY: case O_EVICTING: return C_(TOOL_CMD_RUN) | C_(TOOL_CMD_ACQUIRE);
    case O_ON_LOST: case O_KILL_AFTER: case O_FOREGROUND: case O_REENTRANT: case O_OWNER: case O_FENCE: case 's': case 'x':
        return C_(TOOL_CMD_RUN);
    case O_LABEL: case O_NO_LABEL: return C_(TOOL_CMD_RUN) | C_(TOOL_CMD_ACQUIRE);
    case O_JSON: return C_(TOOL_CMD_INSPECT);
    case O_STATS: return C_(TOOL_CMD_RUN) | C_(TOOL_CMD_ACQUIRE) | C_(TOOL_CMD_RELEASE) | C_(TOOL_CMD_EXTEND);
    default: return C_ALL;
    }
}

static const char *opt_name(int id, char *buf, size_t cap)
{
    const struct option *lo;
    for (lo = long_opts; lo->name; lo++)
        if (lo->val == id) {
            snprintf(buf, cap, "--%s", lo->name);
            return buf;
        }
    snprintf(buf, cap, "-%c", id);
    return buf;
}

int tool_token_split(const char *s, size_t len, size_t *label_len)
{
    redlock_reply r;
    redlock_value v;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STRING;
    r.str = s;
    r.len = len;
    /* read as a key with a time to live: a label such as "42:" is no
       legacy expiry */
    if (redlock_value_from_get(&r, 1, &v) != REDLOCK_OK || v.kind != REDLOCK_VALUE_PLAIN || v.token_len != len)
        return 0;
    /* a foreign value of exactly REDLOCK_TOKEN_LEN bytes also reads as a
       token; ours is hex */
    if (len == REDLOCK_TOKEN_LEN && strspn(s, "0123456789abcdefABCDEF") < len) return 0;
    if (label_len) *label_len = v.label_len;
    return 1;
}

static int duration_arg(const char *name, const char *v, int64_t min_ms, int64_t *out, char *err, size_t errlen)
{
    if (tool_parse_duration(v, out) != 0) {
        say(err, errlen, "bad duration '%.40s' for --%s (e.g. 500ms, 10s, 2m)", v, name);
        return -1;
    }
    if (*out < min_ms) {
        say(err, errlen, "--%s must be at least %lldms", name, (long long)min_ms);
        return -1;
    }
    return 0;
}

/* --wait-replicas N[/TIMEOUT]: N 0..1000 replicas, TIMEOUT a duration of
   at least 1 ms (WAIT's 0 would block forever); 0, or -1 (err says). */
static int wait_replicas_arg(const char *v, tool_opts *o, char *err, size_t errlen)
{
    char n[8];
    size_t len = strcspn(v, "/"), i;
    long count = 0;
    if (len == 0 || len >= sizeof n) goto bad;
    for (i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') goto bad;
        count = count * 10 + (v[i] - '0');
    }
    if (count > 1000) goto bad;
    o->wait_replicas = (int)count;
    o->wait_replicas_ms = 0;
    if (v[len] == '/') return duration_arg("wait-replicas' timeout", v + len + 1, 1, &o->wait_replicas_ms, err, errlen);
    return 0;
bad:
    say(err, errlen, "bad --wait-replicas '%.40s' (N replicas, 0 to 1000, optionally /TIMEOUT: e.g. 1 or 1/100ms)", v);
    return -1;
}

/* The message for getopt's '?': an unknown short option, or a long one
   that is unknown, ambiguous, or given a value it does not take. */
static void bad_option(const char *arg, int optopt_, char *err, size_t errlen)
{
    const struct option *lo;
    size_t ln;
    int matches = 0;
    if (!arg || strncmp(arg, "--", 2) != 0) {
        if (optopt_ > 0 && optopt_ < 256) say(err, errlen, "unknown option '-%c'", optopt_);
        else say(err, errlen, "unknown option");
        return;
    }
    ln = strcspn(arg + 2, "=");
    for (lo = long_opts; lo->name; lo++) {
        if (strlen(lo->name) == ln && strncmp(lo->name, arg + 2, ln) == 0) {
            say(err, errlen, "option '--%s' takes no value", lo->name);
            return;
        }
        if (strncmp(lo->name, arg + 2, ln) == 0) matches++;
    }
    say(err, errlen, "%s option '--%.*s'", matches > 1 ? "ambiguous" : "unknown", (int)(ln > 40 ? 40 : ln), arg + 2);
}

/* The TLS options against the nodes: they need a TLS node (rediss:// or
   --tls), a certificate goes with its key, the files must be readable,
   and TLS is for TCP nodes. */
static int check_tls(const tool_opts *o, char *err, size_t errlen)
{
    const redlock_tls *t = &o->net.tls;
    const char *const files[3] = { t->ca, t->cert, t->key };
    const char *const names[3] = { "--tls-ca", "--tls-cert", "--tls-key" };
    int i, any = t->enable;
    for (i = 0; i < o->node_count; i++) {
        const redlock_node *n = &o->net.node[i];
        if (!n->tls.enable && !t->enable) continue;
        any = 1;
        if (n->unix_path) {
            say(err, errlen, "TLS is for TCP nodes, not the unix socket '%s'", o->shown[i]);
            return -1;
        }
    }
    if (!any && (t->ca || t->cert || t->key || t->server_name || t->insecure_skip_verify)) {
        say(err, errlen, "TLS options given, but no node uses TLS (use rediss:// URLs or --tls)");
        return -1;
    }
    if (!t->cert != !t->key) {
        say(err, errlen, "--tls-cert and --tls-key go together");
        return -1;
    }
    for (i = 0; i < 3; i++)
        if (files[i] && access(files[i], R_OK) != 0) {
            say(err, errlen, "cannot read %s '%.100s': %s", names[i], files[i], strerror(errno));
            return -1;
        }
    return 0;
}

static int command_of(const char *w)
{
    if (strcmp(w, "run") == 0) return TOOL_CMD_RUN;
    if (strcmp(w, "acquire") == 0) return TOOL_CMD_ACQUIRE;
    if (strcmp(w, "release") == 0) return TOOL_CMD_RELEASE;
    if (strcmp(w, "extend") == 0) return TOOL_CMD_EXTEND;
    if (strcmp(w, "inspect") == 0) return TOOL_CMD_INSPECT;
    if (strcmp(w, "help") == 0) return TOOL_CMD_HELP;
    if (strcmp(w, "version") == 0) return TOOL_CMD_VERSION;
    return TOOL_CMD_NONE;
}

/* What the command line gave besides the options' values: the positionals,
   where "--" stood, which options were given. */
typedef struct parse_state {
    const char *pos[4];
    int npos, dashdash, have_nodes, want_help, want_version, shared, exclusive;
    char *nodes_arg[8]; /* -n values, scrubbed of passwords once parsed */
    int nnodes_arg, given[40], ngiven;
} parse_state;

static void opts_defaults(tool_opts *o)
{
    memset(o, 0, sizeof *o);
    redlock_socket_config_init(&o->net);
    o->ttl_ms = TOOL_DEFAULT_TTL_MS;
    o->wait_ms = TOOL_DEFAULT_WAIT_MS;
    o->retry_delay_ms = TOOL_DEFAULT_RETRY_DELAY_MS;
    o->node_timeout_ms = TOOL_DEFAULT_NODE_TIMEOUT_MS;
    o->kill_after_ms = TOOL_DEFAULT_KILL_AFTER_MS;
    o->mode = REDLOCK_MODE_AUTO;
    o->on_lost = TOOL_ON_LOST_TERM;
}

/* The options whose value is a word or a name: 1 taken, 0 not one of
   them, -1 a bad value (err says). */
static int word_option(int c, const char *val, tool_opts *o, char *err, size_t errlen)
{
    switch (c) {
    case O_MODE:
        if (strcmp(val, "auto") == 0) o->mode = REDLOCK_MODE_AUTO;
        else if (strcmp(val, "modern") == 0) o->mode = REDLOCK_MODE_MODERN;
        else if (strcmp(val, "legacy") == 0) o->mode = REDLOCK_MODE_LEGACY;
        else { say(err, errlen, "bad --mode '%.40s' (auto, modern or legacy)", val); return -1; }
        return 1;
    case O_ON_LOST:
        if (strcmp(val, "term") == 0) o->on_lost = TOOL_ON_LOST_TERM;
        else if (strcmp(val, "kill") == 0) o->on_lost = TOOL_ON_LOST_KILL;
        else if (strcmp(val, "ignore") == 0) o->on_lost = TOOL_ON_LOST_IGNORE;
        else { say(err, errlen, "bad --on-lost '%.40s' (term, kill or ignore)", val); return -1; }
        return 1;
    case O_EVICTING:
        if (strcmp(val, "refuse") == 0) o->refuse_evicting = 1;
        else if (strcmp(val, "count") == 0) o->refuse_evicting = -1;
        else { say(err, errlen, "bad --evicting '%.40s' (refuse or count)", val); return -1; }
        return 1;
    case O_LOG_FORMAT:
        if (strcmp(val, "text") == 0) o->log_json = 0;
        else if (strcmp(val, "json") == 0) o->log_json = 1;
        else { say(err, errlen, "bad --log-format '%.40s' (text or json)", val); return -1; }
        return 1;
    case O_STATS: /* --stats alone: in the log's format */
        if (!val) o->stats = TOOL_STATS_LOG;
        else if (strcmp(val, "text") == 0) o->stats = TOOL_STATS_TEXT;
        else if (strcmp(val, "json") == 0) o->stats = TOOL_STATS_JSON;
        else { say(err, errlen, "bad --stats '%.40s' (text or json)", val); return -1; }
        return 1;
    case O_LABEL:
        /* the token's label is this and ':' */
        if (!tool_owner_ok(val) || strlen(val) > REDLOCK_MAX_LABEL - 1) {
            say(err, errlen, "bad --label '%.40s' (1 to %d printable characters, no space)", val, REDLOCK_MAX_LABEL - 1);
            return -1;
        }
        o->label = val;
        return 1;
    case O_OWNER:
        if (!tool_owner_ok(val)) {
            say(err, errlen, "bad --owner '%.40s' (1 to %d printable characters, no space)", val, REDLOCK_MAX_OWNER);
            return -1;
        }
        o->owner = val;
        return 1;
    default: return 0;
    }
}

/* One option c with its value: 0, or -1 (err says). */
static int take_option(int c, const char *val, tool_opts *o, parse_state *ps, char *err, size_t errlen)
{
    int w = word_option(c, val, o, err, errlen);
    if (w) return w < 0 ? -1 : 0;
    switch (c) {
    case 'n':
        if (add_nodes(o, val, err, errlen) != 0) return -1;
        if (ps->nnodes_arg < 8) ps->nodes_arg[ps->nnodes_arg++] = (char *)val;
        ps->have_nodes = 1;
        return 0;
    case 't': return duration_arg("ttl", val, TOOL_MIN_TTL_MS, &o->ttl_ms, err, errlen);
    case 'w': return duration_arg("wait", val, 0, &o->wait_ms, err, errlen);
    case O_NO_WAIT: o->wait_ms = 0; return 0;
    case O_RETRY: return duration_arg("retry-delay", val, 1, &o->retry_delay_ms, err, errlen);
    case O_NODE_TIMEOUT: return duration_arg("node-timeout", val, 1, &o->node_timeout_ms, err, errlen);
    case O_KILL_AFTER: return duration_arg("kill-after", val, 0, &o->kill_after_ms, err, errlen);
    case O_MAX_TTL: return duration_arg("max-ttl", val, 0, &o->max_ttl_ms, err, errlen);
    case O_WAIT_REPLICAS: return wait_replicas_arg(val, o, err, errlen);
    case O_LEGACY: o->mode = REDLOCK_MODE_LEGACY; return 0;
    case O_FOREGROUND: o->foreground = 1; return 0;
    case O_REENTRANT: o->reentrant = 1; return 0;
    case O_FENCE: o->fence = 1; return 0;
    case O_NO_LABEL: o->no_label = 1; return 0;
    case 's': o->access = REDLOCK_ACCESS_SHARED; ps->shared = 1; return 0;
    case 'x': o->access = REDLOCK_ACCESS_EXCLUSIVE; ps->exclusive = 1; return 0;
    case O_JSON: o->json = 1; return 0;
    case O_TLS: o->net.tls.enable = 1; return 0;
    case O_TLS_CA: o->net.tls.ca = val; return 0;
    case O_TLS_CERT: o->net.tls.cert = val; return 0;
    case O_TLS_KEY: o->net.tls.key = val; return 0;
    case O_TLS_SERVER_NAME: o->net.tls.server_name = val; return 0;
    case O_TLS_INSECURE: o->net.tls.insecure_skip_verify = 1; return 0;
    case 'q': o->verbose = -1; return 0;
    case 'v': o->verbose = 1; return 0;
    case 'h': ps->want_help = 1; return 0;
    case 'V': ps->want_version = 1; return 0;
    default: say(err, errlen, "unknown option"); return -1;
    }
}

/* The options, and the positionals among them, up to "--": 0 or -1. */
static int read_options(int argc, char **argv, tool_opts *o, parse_state *ps, char *err, size_t errlen)
{
    opterr = 0;
    optind = 1;
    while (optind < argc) {
        int before = optind, c;
        c = getopt_long(argc, argv, short_opts, long_opts, NULL);
        if (c == -1) {
            if (optind == before + 1 && strcmp(argv[before], "--") == 0) { ps->dashdash = before; break; }
            if (optind >= argc) break;
            /* a positional argument ("-" alone too): take it, go on */
            if (ps->npos == 4) { say(err, errlen, "too many arguments ('%.40s')", argv[optind]); return -1; }
            ps->pos[ps->npos++] = argv[optind++];
            continue;
        }
        if (c == '?') { bad_option(argv[optind - 1], optopt, err, errlen); return -1; }
        if (c == ':') {
            const char *a = argv[optind - 1];
            if (a && strncmp(a, "--", 2) == 0) say(err, errlen, "option '%.40s' needs a value", a);
            else say(err, errlen, "option '-%c' needs a value", optopt);
            return -1;
        }
        if (ps->ngiven < (int)(sizeof ps->given / sizeof ps->given[0])) ps->given[ps->ngiven++] = c;
        if (take_option(c, optarg, o, ps, err, errlen) != 0) return -1;
    }
    return 0;
}

/* The subcommand: 1 when it is help or version (o says which), 0 for a
   lock's command whose options all apply to it, -1 (err says). */
static int read_command(tool_opts *o, const parse_state *ps, char *err, size_t errlen)
{
    int i;
    char nb[32];
    o->cmd = ps->npos ? command_of(ps->pos[0]) : TOOL_CMD_NONE;
    if (ps->npos && o->cmd == TOOL_CMD_NONE) { say(err, errlen, "unknown command '%.40s'", ps->pos[0]); return -1; }
    if (o->cmd == TOOL_CMD_HELP) { /* redlock help [COMMAND] */
        o->help_for = ps->npos > 1 ? command_of(ps->pos[1]) : TOOL_CMD_NONE;
        if (ps->npos > 1 && (o->help_for == TOOL_CMD_NONE || o->help_for >= TOOL_CMD_HELP)) {
            say(err, errlen, "help: unknown command '%.40s'", ps->pos[1]);
            return -1;
        }
        return 1;
    }
    if (ps->want_help) { /* redlock [COMMAND] --help */
        o->help_for = o->cmd == TOOL_CMD_VERSION ? TOOL_CMD_NONE : o->cmd;
        o->cmd = TOOL_CMD_HELP;
        return 1;
    }
    if (ps->want_version || o->cmd == TOOL_CMD_VERSION) { o->cmd = TOOL_CMD_VERSION; return 1; }
    if (ps->npos == 0) { say(err, errlen, "missing command (run, acquire, release, extend or inspect)"); return -1; }
    for (i = 0; i < ps->ngiven; i++)
        if (!(applies_to(ps->given[i]) & C_(o->cmd))) {
            say(err, errlen, "option '%s' does not apply to '%s'", opt_name(ps->given[i], nb, sizeof nb), ps->pos[0]);
            return -1;
        }
    return 0;
}

/* The command's arguments: run's NAME and COMMAND, the others' NAME (and
   TOKEN); 0 or -1. */
static int read_arguments(int argc, char **argv, tool_opts *o, parse_state *ps, char *err, size_t errlen)
{
    int i;
    const char *cmd = ps->pos[0];
    if (o->cmd == TOOL_CMD_RUN) {
        if (ps->npos < 2) { say(err, errlen, "run: missing lock NAME"); return -1; }
        if (ps->npos > 2 || ps->dashdash < 0) { say(err, errlen, "run: put '--' between NAME and COMMAND"); return -1; }
        if (ps->dashdash + 1 >= argc) { say(err, errlen, "run: missing COMMAND after '--'"); return -1; }
        o->child_argv = argv + ps->dashdash + 1;
    } else {
        /* after "--" only positionals (a NAME may start with '-') */
        if (ps->dashdash >= 0)
            for (i = ps->dashdash + 1; i < argc; i++) {
                if (ps->npos == 4) { say(err, errlen, "too many arguments"); return -1; }
                ps->pos[ps->npos++] = argv[i];
            }
        if (ps->npos < 2) { say(err, errlen, "%s: missing lock NAME", cmd); return -1; }
        if (o->cmd == TOOL_CMD_RELEASE || o->cmd == TOOL_CMD_EXTEND) {
            if (ps->npos < 3) { say(err, errlen, "%s: missing TOKEN (printed by 'redlock acquire')", cmd); return -1; }
            if (ps->npos > 3) { say(err, errlen, "%s: too many arguments", cmd); return -1; }
            if (!tool_token_split(ps->pos[2], strlen(ps->pos[2]), NULL)) {
                say(err, errlen, "%s: bad TOKEN (expected what 'redlock acquire' printed: a label and %d hex digits)",
                    cmd, REDLOCK_TOKEN_LEN);
                return -1;
            }
            o->token = ps->pos[2];
        } else if (ps->npos > 2) {
            say(err, errlen, "%s: too many arguments ('%.40s')", cmd, ps->pos[2]);
            return -1;
        }
    }
    o->name = ps->pos[1];
    if (!o->name[0]) { say(err, errlen, "the lock NAME is empty"); return -1; }
    if (strlen(o->name) > REDLOCK_MAX_KEY) { say(err, errlen, "the lock NAME is longer than %d bytes", REDLOCK_MAX_KEY); return -1; }
    /* the fence counters' keys are no locks (the core refuses them too);
       inspect may still read one */
    if (o->cmd != TOOL_CMD_INSPECT && strncmp(o->name, REDLOCK_FENCE_PREFIX, strlen(REDLOCK_FENCE_PREFIX)) == 0) {
        say(err, errlen, "the lock NAME may not start with '%s': that prefix holds the fence counters", REDLOCK_FENCE_PREFIX);
        return -1;
    }
    return 0;
}

/* The nodes (REDLOCK_NODES when no -n) and the options that do not go
   together: 0 or -1. */
static int check_options(tool_opts *o, const parse_state *ps, char *err, size_t errlen)
{
    if (!ps->have_nodes) {
        const char *env = getenv("REDLOCK_NODES");
        if (!env || !env[0]) { say(err, errlen, "no nodes: use -n host:port,... or set REDLOCK_NODES"); return -1; }
        if (add_nodes(o, NULL, err, errlen) != 0) return -1; /* NULL: REDLOCK_NODES */
    }
    if (check_tls(o, err, errlen) != 0) return -1;
    if (o->cmd == TOOL_CMD_RUN && o->ttl_ms < 3 * TOOL_MIN_TTL_MS) {
        say(err, errlen, "run: --ttl must be at least %dms (it is renewed every ttl/3)", 3 * TOOL_MIN_TTL_MS);
        return -1;
    }
    if (o->owner && !o->reentrant) { say(err, errlen, "run: --owner needs --reentrant"); return -1; }
    if (o->reentrant && o->mode == REDLOCK_MODE_LEGACY) {
        say(err, errlen, "run: --reentrant needs scripting, not --legacy or --mode legacy");
        return -1;
    }
    if (o->label && o->no_label) { say(err, errlen, "'--label' and '--no-label' do not go together"); return -1; }
    if (ps->shared && ps->exclusive) { /* one lock, one mode: not the last one given */
        say(err, errlen, "run: '--shared' and '--exclusive' do not go together (-s: readers, -x: a writer)");
        return -1;
    }
    if (o->access && (o->reentrant || o->fence || o->mode == REDLOCK_MODE_LEGACY)) {
        say(err, errlen, "run: --shared / --exclusive do not go with --reentrant, --fence or --legacy");
        return -1;
    }
    if (o->fence && o->mode == REDLOCK_MODE_LEGACY) {
        say(err, errlen, "run: --fence needs scripting, not --legacy or --mode legacy");
        return -1;
    }
    if (o->wait_replicas > 0) {
        int i;
        for (i = 0; i < o->net.node_count; i++)
            if (o->net.node[i].kind == REDLOCK_NODE_CLUSTER) {
                say(err, errlen, "--wait-replicas does not go with a cluster node ('%s'): WAIT names no key, so no master to ask",
                    o->shown[i]);
                return -1;
            }
    }
    return 0;
}

int tool_parse_args(int argc, char **argv, tool_opts *o, char *err, size_t errlen)
{
    parse_state ps;
    int i, rc;
    memset(&ps, 0, sizeof ps);
    ps.dashdash = -1;
    opts_defaults(o);
    if (read_options(argc, argv, o, &ps, err, errlen) != 0) goto usage;
    for (i = 0; i < ps.nnodes_arg; i++) redlock_scrub_nodes(ps.nodes_arg[i]);
    rc = read_command(o, &ps, err, errlen);
    if (rc > 0) return 0;
    if (rc < 0 || read_arguments(argc, argv, o, &ps, err, errlen) != 0 || check_options(o, &ps, err, errlen) != 0)
        goto usage;
    nodes_id(o);
    /* inside an outer `redlock run --reentrant NAME`: a run of that NAME
       (a script calling another that takes the same lock) enters, unless
       it asks for legacy values */
    if (o->cmd == TOOL_CMD_RUN && !o->owner && !o->access && o->mode != REDLOCK_MODE_LEGACY &&
        inherit_owner(o, err, errlen) != 0)
        goto usage;
    return 0;
usage:
    for (i = 0; i < ps.nnodes_arg; i++) redlock_scrub_nodes(ps.nodes_arg[i]);
    tool_opts_free(o);
    return TOOL_EXIT_USAGE;
}
