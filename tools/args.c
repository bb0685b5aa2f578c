/* tools/args.c - command line of the `redlock` tool (see args.h). */
#define _POSIX_C_SOURCE 200809L

#include "args.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = (char *)malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static void wipe_free(char *s)
{
    if (!s) return;
    {
        volatile char *v = s;
        while (*v) *v++ = 0;
    }
    free(s);
}

static void node_free(tool_node *n)
{
    free(n->display);
    free(n->host);
    free(n->unix_path);
    wipe_free(n->user);
    wipe_free(n->pass);
    memset(n, 0, sizeof *n);
}

void tool_opts_free(tool_opts *o)
{
    int i;
    for (i = 0; i < o->node_count; i++) node_free(&o->nodes[i]);
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

/* ---- node specs ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a new string; NULL on a bad escape or %00. */
static char *pct_decode(const char *s, size_t n)
{
    char *d = (char *)malloc(n + 1);
    size_t i, o = 0;
    if (!d) return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '%') {
            int h, l;
            if (i + 2 >= n) { wipe_free(d); return NULL; }
            h = hexval((unsigned char)s[i + 1]);
            l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0)) { wipe_free(d); return NULL; }
            d[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    d[o] = 0;
    return d;
}

/* Parses decimal [lo, hi] from s[0..n). */
static int parse_int(const char *s, size_t n, long lo, long hi, int *out)
{
    long v = 0;
    size_t i;
    if (n == 0 || n > 10) return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* host, host:port, [v6], [v6]:port from s[0..n). */
static int parse_hostport(const char *s, size_t n, tool_node *nd, const char *shown, char *err, size_t errlen)
{
    const char *colon = NULL;
    size_t hl;
    const char *h = s;
    nd->port = 6379;
    if (n && s[0] == '[') {
        const char *close = (const char *)memchr(s, ']', n);
        if (!close) { say(err, errlen, "bad node '%s': missing ']'", shown); return -1; }
        h = s + 1;
        hl = (size_t)(close - s) - 1;
        if (close + 1 < s + n) {
            if (close[1] != ':') { say(err, errlen, "bad node '%s': junk after ']'", shown); return -1; }
            colon = close + 1;
        }
    } else {
        size_t i;
        for (i = 0; i < n; i++)
            if (s[i] == ':') {
                if (colon) { say(err, errlen, "bad node '%s': IPv6 addresses need [brackets]", shown); return -1; }
                colon = s + i;
            }
        hl = colon ? (size_t)(colon - s) : n;
    }
    if (hl == 0) { say(err, errlen, "bad node '%s': missing host", shown); return -1; }
    {
        size_t i;
        for (i = 0; i < hl; i++)
            if (isspace((unsigned char)h[i]) || h[i] == '@' || h[i] == '/' || h[i] == ',') {
                say(err, errlen, "bad node '%s': bad host name", shown);
                return -1;
            }
    }
    if (colon && parse_int(colon + 1, (size_t)(s + n - colon - 1), 1, 65535, &nd->port) != 0) {
        say(err, errlen, "bad node '%s': port must be 1..65535", shown);
        return -1;
    }
    nd->host = dup_n(h, hl);
    return nd->host ? 0 : -1;
}

/* Where the userinfo of a URL spec s[0..len) is: returns 1 and sets
   [*ui, *at) (the '@' at *at) if there is one. redis://: up to the last '@'
   (passwords may hold '@' or '/'); unix://: up to the first "@/". Parsing,
   redaction and argv scrubbing all use this, so they agree. */
static int find_userinfo(const char *s, size_t len, size_t *ui, size_t *at)
{
    size_t i, r;
    for (r = 0; r + 3 <= len; r++)
        if (memcmp(s + r, "://", 3) == 0) break;
    if (r + 3 > len) return 0;
    *ui = r + 3;
    if (r == 4 && memcmp(s, "unix", 4) == 0) {
        if (*ui < len && s[*ui] == '/') return 0;
        for (i = *ui; i + 1 < len; i++)
            if (s[i] == '@' && s[i + 1] == '/') { *at = i; return 1; }
        return 0;
    }
    for (i = len; i > *ui; i--)
        if (s[i - 1] == '@') { *at = i - 1; return 1; }
    return 0;
}

/* The spec with the password replaced by "***" (the whole userinfo when it
   has no ':'). */
static char *redact(const char *spec)
{
    size_t len = strlen(spec), ui, at, n;
    const char *colon;
    char *out;
    if (!find_userinfo(spec, len, &ui, &at)) return dup_n(spec, len);
    colon = (const char *)memchr(spec + ui, ':', at - ui);
    n = len + 8;
    out = (char *)malloc(n);
    if (!out) return NULL;
    if (colon) snprintf(out, n, "%.*s:***%s", (int)(colon - spec), spec, spec + at);
    else snprintf(out, n, "%.*s***%s", (int)ui, spec, spec + at);
    return out;
}

/* userinfo "user:pass" or ":pass" from s[0..n). */
static int parse_userinfo(const char *s, size_t n, tool_node *nd, const char *shown, char *err, size_t errlen)
{
    const char *colon = (const char *)memchr(s, ':', n);
    if (!colon) {
        say(err, errlen, "bad node '%s': give a password as user:pass@ or :pass@", shown);
        return -1;
    }
    if (colon > s) {
        nd->user = pct_decode(s, (size_t)(colon - s));
        if (!nd->user) { say(err, errlen, "bad node '%s': bad %%-escape in user name", shown); return -1; }
    }
    nd->pass = pct_decode(colon + 1, (size_t)(s + n - colon - 1));
    if (!nd->pass) { say(err, errlen, "bad node '%s': bad %%-escape in password", shown); return -1; }
    if (!nd->pass[0]) { say(err, errlen, "bad node '%s': empty password", shown); return -1; }
    return 0;
}

static int parse_node_inner(const char *spec, tool_node *nd, const char *shown, char *err, size_t errlen)
{
    const char *sep = strstr(spec, "://");
    if (!spec[0]) { say(err, errlen, "empty node in the node list"); return -1; }
    if (sep) {
        size_t sl = (size_t)(sep - spec);
        const char *rest = sep + 3;
        if ((sl == 5 && strncmp(spec, "redis", 5) == 0)) {
            const char *hp, *hp_end, *path;
            size_t ui, at;
            hp = rest;
            if (find_userinfo(spec, strlen(spec), &ui, &at)) {
                if (parse_userinfo(spec + ui, at - ui, nd, shown, err, errlen) != 0) return -1;
                hp = spec + at + 1;
            }
            hp_end = hp + strcspn(hp, "/?#");
            if (parse_hostport(hp, (size_t)(hp_end - hp), nd, shown, err, errlen) != 0) return -1;
            path = hp_end;
            if (*path == '?' || *path == '#') {
                say(err, errlen, "bad node '%s': URL options are not supported", shown);
                return -1;
            }
            if (*path == '/') {
                path++;
                if (*path && parse_int(path, strlen(path), 0, 1000000, &nd->db) != 0) {
                    say(err, errlen, "bad node '%s': database must be a number", shown);
                    return -1;
                }
            }
            return 0;
        }
        if (sl == 4 && strncmp(spec, "unix", 4) == 0) {
            /* unix://[user:pass@]/path/to.sock[?db=N] */
            const char *path = rest, *q;
            size_t ui, at;
            if (find_userinfo(spec, strlen(spec), &ui, &at)) {
                if (parse_userinfo(spec + ui, at - ui, nd, shown, err, errlen) != 0) return -1;
                path = spec + at + 1;
            }
            if (*path != '/') { say(err, errlen, "bad node '%s': unix:// needs an absolute path", shown); return -1; }
            q = strchr(path, '?');
            if (q) {
                if (strncmp(q, "?db=", 4) != 0 || parse_int(q + 4, strlen(q + 4), 0, 1000000, &nd->db) != 0) {
                    say(err, errlen, "bad node '%s': only ?db=N is supported", shown);
                    return -1;
                }
            }
            nd->unix_path = dup_n(path, q ? (size_t)(q - path) : strlen(path));
            return nd->unix_path ? 0 : -1;
        }
        if (sl == 6 && strncmp(spec, "rediss", 6) == 0) {
            say(err, errlen, "bad node '%s': TLS (rediss://) is not supported", shown);
            return -1;
        }
        say(err, errlen, "bad node '%s': unknown URL scheme (use redis:// or unix://)", shown);
        return -1;
    }
    if (strchr(spec, '/')) { /* a unix socket path */
        nd->unix_path = dup_n(spec, strlen(spec));
        return nd->unix_path ? 0 : -1;
    }
    return parse_hostport(spec, strlen(spec), nd, shown, err, errlen);
}

int tool_parse_node(const char *spec, tool_node *n, char *err, size_t errlen)
{
    char *shown = redact(spec);
    int rc;
    memset(n, 0, sizeof *n);
    if (!shown) { say(err, errlen, "out of memory"); return -1; }
    rc = parse_node_inner(spec, n, shown, err, errlen);
    if (rc == 0 && n->unix_path && strlen(n->unix_path) >= 100) {
        say(err, errlen, "bad node '%s': unix socket path too long", shown);
        rc = -1;
    }
    if (rc != 0) {
        free(shown);
        node_free(n);
        return -1;
    }
    n->display = shown;
    return 0;
}

/* Same node twice would count its vote twice. */
static int same_node(const tool_node *a, const tool_node *b)
{
    if (a->db != b->db) return 0;
    if (a->unix_path || b->unix_path)
        return a->unix_path && b->unix_path && strcmp(a->unix_path, b->unix_path) == 0;
    if (a->port != b->port) return 0;
    {
        const char *x = a->host, *y = b->host;
        while (*x && *y && tolower((unsigned char)*x) == tolower((unsigned char)*y)) x++, y++;
        return *x == 0 && *y == 0;
    }
}

int tool_parse_nodes(const char *list, tool_opts *o, char *err, size_t errlen)
{
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        char *one;
        tool_node nd;
        int i;
        if (o->node_count >= REDLOCK_MAX_NODES) {
            say(err, errlen, "too many nodes (at most %d)", REDLOCK_MAX_NODES);
            return -1;
        }
        one = dup_n(p, n);
        if (!one) { say(err, errlen, "out of memory"); return -1; }
        if (tool_parse_node(one, &nd, err, errlen) != 0) {
            wipe_free(one);
            return -1;
        }
        wipe_free(one);
        for (i = 0; i < o->node_count; i++)
            if (same_node(&o->nodes[i], &nd)) {
                say(err, errlen, "node '%s' is listed twice", nd.display);
                node_free(&nd);
                return -1;
            }
        o->nodes[o->node_count++] = nd;
        if (!p[n]) break;
        p += n + 1;
    }
    return 0;
}

/* Overwrites the password of each URL in a -n argument with 'x'. */
static void scrub(char *s)
{
    for (;;) {
        size_t n = strcspn(s, ","), ui, at, i;
        if (find_userinfo(s, n, &ui, &at)) {
            const char *colon = (const char *)memchr(s + ui, ':', at - ui);
            for (i = colon ? (size_t)(colon - s) + 1 : ui; i < at; i++) s[i] = 'x';
        }
        if (!s[n]) break;
        s += n + 1;
    }
}

/* ---- the command line ---- */

typedef struct opt_def {
    const char *lng;
    char shrt;
    int has_arg;
    int id;
} opt_def;

enum { O_NODES = 1, O_TTL, O_WAIT, O_NO_WAIT, O_RETRY, O_NODE_TIMEOUT, O_LEGACY, O_MODE,
       O_ON_LOST, O_KILL_AFTER, O_QUIET, O_VERBOSE, O_HELP, O_VERSION };

static const opt_def opts_table[] = {
    { "nodes", 'n', 1, O_NODES },          { "ttl", 't', 1, O_TTL },
    { "wait", 'w', 1, O_WAIT },            { "no-wait", 0, 0, O_NO_WAIT },
    { "retry-delay", 0, 1, O_RETRY },      { "node-timeout", 0, 1, O_NODE_TIMEOUT },
    { "legacy", 0, 0, O_LEGACY },          { "mode", 0, 1, O_MODE },
    { "on-lost", 0, 1, O_ON_LOST },        { "kill-after", 0, 1, O_KILL_AFTER },
    { "quiet", 'q', 0, O_QUIET },          { "verbose", 'v', 0, O_VERBOSE },
    { "help", 'h', 0, O_HELP },            { "version", 'V', 0, O_VERSION },
    { NULL, 0, 0, 0 }
};

static int is_hex_token(const char *t)
{
    size_t i;
    for (i = 0; t[i]; i++)
        if (hexval((unsigned char)t[i]) < 0) return 0;
    return i == REDLOCK_TOKEN_LEN;
}

static int duration_arg(const char *name, const char *v, int64_t min_ms, int64_t *out, char *err, size_t errlen)
{
    if (tool_parse_duration(v, out) != 0) {
        say(err, errlen, "bad duration '%s' for --%s (e.g. 500ms, 10s, 2m)", v, name);
        return -1;
    }
    if (*out < min_ms) {
        say(err, errlen, "--%s must be at least %lldms", name, (long long)min_ms);
        return -1;
    }
    return 0;
}

int tool_parse_args(int argc, char **argv, tool_opts *o, char *err, size_t errlen)
{
    const char *pos[4];
    int npos = 0, i, dashdash = -1, have_nodes = 0, want_help = 0, want_version = 0;
    char *nodes_arg[8];
    int nnodes_arg = 0;

    memset(o, 0, sizeof *o);
    o->ttl_ms = TOOL_DEFAULT_TTL_MS;
    o->wait_ms = TOOL_DEFAULT_WAIT_MS;
    o->retry_delay_ms = TOOL_DEFAULT_RETRY_DELAY_MS;
    o->node_timeout_ms = TOOL_DEFAULT_NODE_TIMEOUT_MS;
    o->kill_after_ms = TOOL_DEFAULT_KILL_AFTER_MS;
    o->mode = REDLOCK_MODE_AUTO;
    o->on_lost = TOOL_ON_LOST_TERM;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const opt_def *d = NULL;
        char shown[64];
        if (strcmp(a, "--") == 0) { dashdash = i; break; }
        if (a[0] != '-' || a[1] == 0) { /* positional ("-" alone too) */
            if (npos == 4) { say(err, errlen, "too many arguments ('%s')", a); goto usage; }
            pos[npos++] = a;
            continue;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t ln = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            for (d = opts_table; d->lng; d++)
                if (strlen(d->lng) == ln && strncmp(d->lng, a + 2, ln) == 0) break;
            snprintf(shown, sizeof shown, "--%.*s", (int)(ln > 40 ? 40 : ln), a + 2);
            if (!d->lng) { say(err, errlen, "unknown option '%s'", shown); goto usage; }
            if (eq && !d->has_arg) { say(err, errlen, "option '%s' takes no value", shown); goto usage; }
            if (eq) val = eq + 1;
        } else {
            for (d = opts_table; d->lng; d++)
                if (d->shrt && d->shrt == a[1]) break;
            snprintf(shown, sizeof shown, "-%c", a[1]);
            if (!d->lng) { say(err, errlen, "unknown option '%s'", shown); goto usage; }
            if (a[2]) {
                if (!d->has_arg) { say(err, errlen, "unknown option '%s' (give flags separately)", a); goto usage; }
                val = a + 2;
            }
        }
        if (d->has_arg && !val) {
            if (i + 1 >= argc || strcmp(argv[i + 1], "--") == 0) {
                say(err, errlen, "option '%s' needs a value", shown);
                goto usage;
            }
            val = argv[++i];
        }
        switch (d->id) {
        case O_NODES:
            if (tool_parse_nodes(val, o, err, errlen) != 0) goto usage;
            if (nnodes_arg < 8) nodes_arg[nnodes_arg++] = (char *)val;
            have_nodes = 1;
            break;
        case O_TTL:
            if (duration_arg("ttl", val, TOOL_MIN_TTL_MS, &o->ttl_ms, err, errlen)) goto usage;
            break;
        case O_WAIT:
            if (duration_arg("wait", val, 0, &o->wait_ms, err, errlen)) goto usage;
            break;
        case O_NO_WAIT: o->wait_ms = 0; break;
        case O_RETRY:
            if (duration_arg("retry-delay", val, 1, &o->retry_delay_ms, err, errlen)) goto usage;
            break;
        case O_NODE_TIMEOUT:
            if (duration_arg("node-timeout", val, 1, &o->node_timeout_ms, err, errlen)) goto usage;
            break;
        case O_KILL_AFTER:
            if (duration_arg("kill-after", val, 0, &o->kill_after_ms, err, errlen)) goto usage;
            break;
        case O_LEGACY: o->mode = REDLOCK_MODE_LEGACY; break;
        case O_MODE:
            if (strcmp(val, "auto") == 0) o->mode = REDLOCK_MODE_AUTO;
            else if (strcmp(val, "modern") == 0) o->mode = REDLOCK_MODE_MODERN;
            else if (strcmp(val, "legacy") == 0) o->mode = REDLOCK_MODE_LEGACY;
            else { say(err, errlen, "bad --mode '%.40s' (auto, modern or legacy)", val); goto usage; }
            break;
        case O_ON_LOST:
            if (strcmp(val, "term") == 0) o->on_lost = TOOL_ON_LOST_TERM;
            else if (strcmp(val, "kill") == 0) o->on_lost = TOOL_ON_LOST_KILL;
            else if (strcmp(val, "ignore") == 0) o->on_lost = TOOL_ON_LOST_IGNORE;
            else { say(err, errlen, "bad --on-lost '%.40s' (term, kill or ignore)", val); goto usage; }
            break;
        case O_QUIET: o->verbose = -1; break;
        case O_VERBOSE: o->verbose = 1; break;
        case O_HELP: want_help = 1; break;
        case O_VERSION: want_version = 1; break;
        default: break;
        }
    }
    for (i = 0; i < nnodes_arg; i++) scrub(nodes_arg[i]);

    if (want_help) { o->cmd = TOOL_CMD_HELP; return 0; }
    if (want_version) { o->cmd = TOOL_CMD_VERSION; return 0; }
    if (npos == 0) { say(err, errlen, "missing command (run, acquire, release, extend or inspect)"); goto usage; }
    if (strcmp(pos[0], "run") == 0) o->cmd = TOOL_CMD_RUN;
    else if (strcmp(pos[0], "acquire") == 0) o->cmd = TOOL_CMD_ACQUIRE;
    else if (strcmp(pos[0], "release") == 0) o->cmd = TOOL_CMD_RELEASE;
    else if (strcmp(pos[0], "extend") == 0) o->cmd = TOOL_CMD_EXTEND;
    else if (strcmp(pos[0], "inspect") == 0) o->cmd = TOOL_CMD_INSPECT;
    else if (strcmp(pos[0], "help") == 0) { o->cmd = TOOL_CMD_HELP; return 0; }
    else if (strcmp(pos[0], "version") == 0) { o->cmd = TOOL_CMD_VERSION; return 0; }
    else { say(err, errlen, "unknown command '%.40s'", pos[0]); goto usage; }

    if (o->cmd == TOOL_CMD_RUN) {
        if (npos < 2) { say(err, errlen, "run: missing lock NAME"); goto usage; }
        if (npos > 2 || dashdash < 0) { say(err, errlen, "run: put '--' between NAME and COMMAND"); goto usage; }
        if (dashdash + 1 >= argc) { say(err, errlen, "run: missing COMMAND after '--'"); goto usage; }
        o->child_argv = argv + dashdash + 1;
    } else {
        /* after "--" only positionals (a NAME may start with '-') */
        if (dashdash >= 0)
            for (i = dashdash + 1; i < argc; i++) {
                if (npos == 4) { say(err, errlen, "too many arguments"); goto usage; }
                pos[npos++] = argv[i];
            }
        if (npos < 2) { say(err, errlen, "%s: missing lock NAME", pos[0]); goto usage; }
        if (o->cmd == TOOL_CMD_RELEASE || o->cmd == TOOL_CMD_EXTEND) {
            if (npos < 3) { say(err, errlen, "%s: missing TOKEN (printed by 'redlock acquire')", pos[0]); goto usage; }
            if (npos > 3) { say(err, errlen, "%s: too many arguments", pos[0]); goto usage; }
            if (!is_hex_token(pos[2])) {
                say(err, errlen, "%s: bad TOKEN (expected %d hex digits from 'redlock acquire')", pos[0], REDLOCK_TOKEN_LEN);
                goto usage;
            }
            o->token = pos[2];
        } else if (npos > 2) {
            say(err, errlen, "%s: too many arguments ('%.40s')", pos[0], pos[2]);
            goto usage;
        }
    }
    o->name = pos[1];
    if (!o->name[0]) { say(err, errlen, "the lock NAME is empty"); goto usage; }
    if (strlen(o->name) > REDLOCK_MAX_KEY) { say(err, errlen, "the lock NAME is longer than %d bytes", REDLOCK_MAX_KEY); goto usage; }

    if (!have_nodes) {
        const char *env = getenv("REDLOCK_NODES");
        if (!env || !env[0]) { say(err, errlen, "no nodes: use -n host:port,... or set REDLOCK_NODES"); goto usage; }
        if (tool_parse_nodes(env, o, err, errlen) != 0) goto usage;
    }
    if (o->cmd == TOOL_CMD_RUN && o->ttl_ms < 3 * TOOL_MIN_TTL_MS) {
        say(err, errlen, "run: --ttl must be at least %dms (it is renewed every ttl/3)", 3 * TOOL_MIN_TTL_MS);
        goto usage;
    }
    return 0;
usage:
    for (i = 0; i < nnodes_arg; i++) scrub(nodes_arg[i]);
    tool_opts_free(o);
    return TOOL_EXIT_USAGE;
}
