/* tools/redlock.c - `redlock`: flock(1) for a cluster of Redis nodes.

       redlock run -n h1:6379,h2:6379,h3:6379 -t 10s nightly-job -- ./backup.sh

   Built on redlock.h (the lock state machine) and adapters/redlock_socket.h
   (raw sockets, RESP2), driven by our own poll() loop so that signals (a
   self-pipe) and the child process are handled next to the nodes' I/O.

   * run / acquire use the core lock (quorum, retries, watchdog renewal).
     Before exiting, linger() lets the core's last round be sent and
     answered (the undo of a failed attempt, a release's stragglers), for
     at most one node timeout, as the hiredis adapter does.
   * release / extend take a TOKEN printed by an earlier `acquire`, in
     another process. The core only releases / extends the token it
     generated itself, so these two use the adapter in raw mode and send the
     core's own compare-and-delete / compare-and-pexpire scripts
     (redlock_release_script() / redlock_extend_script()), counting votes
     the way the core does. Nodes that refuse scripts (auto mode) or
     --legacy fall back to GET + compare + DEL / PEXPIRE / GETSET, as the
     core does.
   * inspect uses raw mode too: GET and PTTL on every node.

   See tools/README.md and `redlock --help` for options and exit codes. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"

#include "tools/args.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- messages ---- */

static int g_verbose; /* -1 quiet, 0 errors, 1 verbose */

static void msg(int level, const char *fmt, ...)
{
    va_list ap;
    if (g_verbose < level) return;
    fputs("redlock: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}
#define ERR(...) msg(0, __VA_ARGS__)
#define INFO(...) msg(1, __VA_ARGS__)

static const char *dur(char *buf, size_t cap, int64_t us)
{
    tool_format_ms(buf, cap, us < 0 ? -1 : (us + 500) / 1000);
    return buf;
}

/* ---- signals: a self-pipe read by the poll loop ---- */

static int g_sig[2] = { -1, -1 };
static const int g_handled[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_HANDLED ((int)(sizeof g_handled / sizeof g_handled[0]))

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    unsigned char b[2];
    int saved = errno;
    ssize_t r;
    (void)ctx;
    b[0] = (unsigned char)sig;
    /* sent with kill() (to us): forward it to COMMAND. A terminal's ^C
       reaches COMMAND by itself (same process group): do not double it. */
    b[1] = (unsigned char)(si && (si->si_code == SI_USER || si->si_code == SI_QUEUE));
    r = write(g_sig[1], b, 2);
    (void)r;
    errno = saved;
}

static int signals_setup(void)
{
    struct sigaction sa;
    int i;
    if (pipe(g_sig) != 0) return -1;
    for (i = 0; i < 2; i++) {
        int fl = fcntl(g_sig[i], F_GETFL, 0);
        (void)fcntl(g_sig[i], F_SETFL, fl | O_NONBLOCK);
        (void)fcntl(g_sig[i], F_SETFD, FD_CLOEXEC);
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < N_HANDLED; i++) sigaction(g_handled[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static void signals_teardown(void)
{
    int i;
    for (i = 0; i < N_HANDLED; i++) signal(g_handled[i], SIG_DFL);
    if (g_sig[0] >= 0) close(g_sig[0]);
    if (g_sig[1] >= 0) close(g_sig[1]);
    g_sig[0] = g_sig[1] = -1;
}

/* ---- the application state ---- */

enum { RN_NONE, RN_YES, RN_MISSING, RN_OTHER, RN_ERR };
enum { T_EVAL = 1, T_GET, T_PTTL, T_ACT };

typedef struct rnode {
    int waiting;      /* replies outstanding */
    int done;
    int outcome;      /* RN_* */
    int status;       /* node error when RN_ERR */
    char errtext[72]; /* server error line (REDLOCK_ERR_SERVER) */
    int val_type;     /* GET reply type, 0: none yet */
    char val[96];
    size_t val_len;
    int val_long;     /* value did not fit: not a lock value */
    int have_pttl;
    long long pttl;
} rnode;

typedef struct app {
    tool_opts *o;
    int n, quorum;
    redlock_socket s;
    int s_up;
    int last_fd[REDLOCK_MAX_NODES];
    unsigned gen[REDLOCK_MAX_NODES];
    /* core lock (run, acquire) */
    redlock_lock lock;
    int lock_up;
    int acq_done, rel_done;
    redlock_result acq, rel;
    int lost, lost_status;
    int voted[REDLOCK_MAX_NODES], vote_err[REDLOCK_MAX_NODES];
    int fail_fast; /* exit code: nodes can never give a quorum this way */
    /* signals */
    int abort_sig; /* a terminating signal before COMMAND started */
    pid_t child;
    /* raw mode (release, extend, inspect) */
    int op;                 /* TOOL_CMD_* */
    rnode rn[REDLOCK_MAX_NODES];
    int64_t round_start;
    char ttl_text[24];
} app;

/* The adapter reports fd changes; a new generation means that the fd
   polled is not the node's connection any more. */
static void on_watch(void *user, int node, int fd, int interest)
{
    app *a = (app *)user;
    (void)interest;
    if (node < 0 || node >= a->n) return;
    if (fd != a->last_fd[node]) {
        a->gen[node]++;
        a->last_fd[node] = fd;
    }
}

static void drain_signals(app *a)
{
    unsigned char b[64];
    ssize_t r;
    while ((r = read(g_sig[0], b, sizeof b)) > 0) {
        ssize_t i;
        for (i = 0; i + 1 < r; i += 2) {
            int sig = b[i], fwd = b[i + 1];
            if (sig == SIGCHLD) continue; /* the loop reaps */
            if (a->child > 0) {
                if (fwd) {
                    INFO("forwarding signal %d to the command (pid %ld)", sig, (long)a->child);
                    kill(a->child, sig);
                }
            } else if (sig != SIGUSR1 && sig != SIGUSR2 && !a->abort_sig) {
                a->abort_sig = sig;
            }
        }
    }
}

/* One round of the loop: poll the nodes and the signal pipe until I/O, a
   signal, the adapter's next deadline or `until` (all monotonic, us). */
static void step(app *a, int64_t until)
{
    struct pollfd pf[REDLOCK_MAX_NODES + 1];
    int node_of[REDLOCK_MAX_NODES + 1];
    unsigned gen_of[REDLOCK_MAX_NODES + 1];
    int n = 1, i, ms;
    int64_t now, d;
    pf[0].fd = g_sig[0];
    pf[0].events = POLLIN;
    pf[0].revents = 0;
    for (i = 0; i < a->n; i++) {
        int fd = redlock_socket_fd(&a->s, i), in = redlock_socket_interest(&a->s, i);
        if (fd < 0 || !in) continue;
        pf[n].fd = fd;
        pf[n].events = (short)(((in & REDLOCK_SOCKET_READ) ? POLLIN : 0) | ((in & REDLOCK_SOCKET_WRITE) ? POLLOUT : 0));
        pf[n].revents = 0;
        node_of[n] = i;
        gen_of[n] = a->gen[i];
        n++;
    }
    d = redlock_socket_next_deadline(&a->s);
    if (until < d) d = until;
    now = redlock_socket_now_us();
    if (d <= now) ms = 0;
    else if (d - now >= 1000000) ms = 1000;
    else ms = (int)((d - now + 999) / 1000);
    if (poll(pf, (nfds_t)n, ms) > 0) {
        if (pf[0].revents) drain_signals(a);
        for (i = 1; i < n; i++) {
            short re = pf[i].revents;
            int nd = node_of[i];
            if (!re) continue;
            if ((re & (POLLOUT | POLLERR)) && a->gen[nd] == gen_of[i]) redlock_socket_on_writable(&a->s, nd);
            if ((re & (POLLIN | POLLHUP | POLLERR)) && a->gen[nd] == gen_of[i]) redlock_socket_on_readable(&a->s, nd);
        }
    }
    if (redlock_socket_next_deadline(&a->s) <= redlock_socket_now_us()) redlock_socket_on_timer(&a->s);
}

/* ---- node errors and exit codes ---- */

static int hard_error(int st)
{
    return st == REDLOCK_ERR_CONNECT || st == REDLOCK_ERR_AUTH || st == REDLOCK_ERR_PROTOCOL ||
           st == REDLOCK_ERR_SERVER;
}

static int code_for(const int *st, int n)
{
    int i, auth = 0, proto = 0;
    for (i = 0; i < n; i++) {
        if (st[i] == REDLOCK_ERR_AUTH) auth = 1;
        if (st[i] == REDLOCK_ERR_PROTOCOL || st[i] == REDLOCK_ERR_SERVER) proto = 1;
    }
    return auth ? TOOL_EXIT_AUTH : proto ? TOOL_EXIT_PROTOCOL : TOOL_EXIT_UNREACHABLE;
}

static const char *node_reason(int st)
{
    switch (st) {
    case REDLOCK_ERR_CONNECT: return "cannot connect";
    case REDLOCK_ERR_AUTH: return "authentication refused";
    case REDLOCK_ERR_NODE_TIMEOUT: return "timed out";
    case REDLOCK_ERR_TRANSPORT: return "connection lost";
    case REDLOCK_ERR_PROTOCOL: return "protocol error (not a Redis server?)";
    case REDLOCK_ERR_SERVER: return "error reply";
    default: return redlock_strerror(st);
    }
}

/* "127.0.0.1:7000 (cannot connect), /tmp/x.sock (timed out)" */
static void list_failed(const app *a, const int *st, const int *failed, char *out, size_t cap)
{
    size_t len = 0;
    int i;
    out[0] = 0;
    for (i = 0; i < a->n && len + 1 < cap; i++) {
        int w;
        if (!failed[i]) continue;
        w = snprintf(out + len, cap - len, "%s%s (%s)", len ? ", " : "", a->o->nodes[i].display, node_reason(st[i]));
        if (w < 0) break;
        len += (size_t)w;
    }
    if (len >= cap) len = cap - 1;
}

/* ---- core callbacks (run, acquire) ---- */

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    app *a = (app *)r->user;
    char b1[24];
    (void)lk;
    switch (r->op) {
    case REDLOCK_OP_ACQUIRE: a->acq = *r; a->acq_done = 1; break;
    case REDLOCK_OP_RELEASE: a->rel = *r; a->rel_done = 1; break;
    case REDLOCK_OP_LOST:
        a->lost = 1;
        a->lost_status = r->status;
        break;
    case REDLOCK_OP_EXTEND:
        if (r->status == REDLOCK_OK) INFO("extended: valid for %s", dur(b1, sizeof b1, r->validity_us));
        break;
    default: break;
    }
}

/* After a failed attempt: can the nodes ever give a quorum? Not if too
   many refuse connections, authentication or the protocol: then stop
   waiting at once (the wait is for the lock, not for the nodes). */
static int attempt_verdict(const app *a, int include_transient)
{
    int i, bad = 0;
    for (i = 0; i < a->n; i++)
        if (a->voted[i] && a->vote_err[i] && (include_transient || hard_error(a->vote_err[i]))) bad++;
    if (a->n - bad >= a->quorum) return 0;
    return code_for(a->vote_err, a->n);
}

static void on_event(void *user, const redlock_event *ev)
{
    app *a = (app *)user;
    char b1[24], b2[24];
    int i;
    switch (ev->type) {
    case REDLOCK_EV_ATTEMPT:
        for (i = 0; i < a->n; i++) a->voted[i] = a->vote_err[i] = 0;
        if (ev->attempt > 1) INFO("attempt %d", ev->attempt);
        break;
    case REDLOCK_EV_VOTE:
        if (ev->node < 0 || ev->node >= a->n) break;
        if (ev->op == REDLOCK_OP_ACQUIRE && !a->voted[ev->node]) {
            a->voted[ev->node] = 1;
            a->vote_err[ev->node] = ev->status;
        }
        if (ev->status) INFO("node %s: %s", a->o->nodes[ev->node].display, node_reason(ev->status));
        break;
    case REDLOCK_EV_ACQUIRED:
        INFO("acquired '%s' (%d of %d nodes agreed, quorum %d) in %s, valid for %s", a->o->name, ev->votes, a->n, a->quorum,
             dur(b1, sizeof b1, ev->elapsed_us), dur(b2, sizeof b2, ev->validity_us));
        break;
    case REDLOCK_EV_RETRY:
        if (!a->fail_fast) a->fail_fast = attempt_verdict(a, 0);
        if (!a->fail_fast)
            INFO("'%s' not acquired (%s, %d/%d votes); retrying in %s", a->o->name, redlock_strerror(ev->status),
                 ev->votes, a->n, dur(b1, sizeof b1, ev->delay_us));
        break;
    case REDLOCK_EV_RENEWED:
        INFO("renewed '%s': valid for %s", a->o->name, dur(b1, sizeof b1, ev->validity_us));
        break;
    case REDLOCK_EV_RENEW_FAILED:
        INFO("renewal of '%s' failed (%s); %s of validity left", a->o->name, redlock_strerror(ev->status),
             dur(b1, sizeof b1, ev->slack_us));
        break;
    case REDLOCK_EV_MODE_SWITCH:
        if (ev->node >= 0 && ev->node < a->n)
            INFO("node %s: %s", a->o->nodes[ev->node].display,
                 ev->mode == REDLOCK_MODE_LEGACY ? "no SET NX PX, using SETNX/GETSET" : "scripts refused, using GET + compare");
        break;
    case REDLOCK_EV_RELEASED:
        INFO("released '%s' (%d of %d nodes confirmed, quorum %d)", a->o->name, ev->votes, a->n, a->quorum);
        break;
    default: break;
    }
}

/* ---- raw mode (release, extend, inspect) ---- */

static void raw_send(app *a, int node, int tag, int argc, const char **argv, const size_t *len);

static int starts(const redlock_reply *r, const char *p)
{
    size_t n = strlen(p);
    return r->str && r->len >= n && memcmp(r->str, p, n) == 0;
}

static int contains(const redlock_reply *r, const char *p)
{
    size_t n = strlen(p), i;
    if (!r->str || r->len < n) return 0;
    for (i = 0; i + n <= r->len; i++)
        if (memcmp(r->str + i, p, n) == 0) return 1;
    return 0;
}

static void rn_done(app *a, int node, int outcome, int status)
{
    rnode *x = &a->rn[node];
    if (x->done) return;
    x->done = 1;
    x->outcome = outcome;
    x->status = status;
}

static void rn_server_error(app *a, int node, const redlock_reply *r)
{
    size_t n = r->len < sizeof a->rn[node].errtext - 1 ? r->len : sizeof a->rn[node].errtext - 1;
    if (r->str) memcpy(a->rn[node].errtext, r->str, n);
    a->rn[node].errtext[n] = 0;
    rn_done(a, node, RN_ERR, REDLOCK_ERR_SERVER);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A lock value: the modern token, or legacy "expiry_ms:token". */
static int parse_value(const char *v, size_t len, const char **tok, int64_t *expiry)
{
    size_t i = 0;
    int64_t e = 0;
    *expiry = -1;
    if (len == REDLOCK_TOKEN_LEN) { *tok = v; return 1; }
    while (i < len && i < 19 && v[i] >= '0' && v[i] <= '9') e = e * 10 + (v[i++] - '0');
    if (i == 0 || i >= len || v[i] != ':' || len - i - 1 != REDLOCK_TOKEN_LEN) return 0;
    *tok = v + i + 1;
    *expiry = e;
    return 1;
}

static void send_get_pttl(app *a, int node)
{
    const char *argv[2];
    size_t len[2];
    argv[1] = a->o->name;
    len[1] = strlen(a->o->name);
    a->rn[node].waiting = 2;
    argv[0] = "GET"; len[0] = 3;
    raw_send(a, node, T_GET, 2, argv, len);
    argv[0] = "PTTL"; len[0] = 4;
    if (!a->rn[node].done) raw_send(a, node, T_PTTL, 2, argv, len);
}

static void send_eval(app *a, int node)
{
    const char *argv[6];
    size_t len[6];
    int argc = 5;
    argv[0] = "EVAL";
    argv[1] = a->op == TOOL_CMD_RELEASE ? redlock_release_script() : redlock_extend_script();
    argv[2] = "1";
    argv[3] = a->o->name;
    argv[4] = a->o->token;
    if (a->op == TOOL_CMD_EXTEND) argv[argc++] = a->ttl_text;
    {
        int i;
        for (i = 0; i < argc; i++) len[i] = strlen(argv[i]);
    }
    a->rn[node].waiting = 1;
    raw_send(a, node, T_EVAL, argc, argv, len);
}

/* GET and PTTL are in: inspect is done; release / extend act on our key
   when it has comfortably longer to live than one more round trip. */
static void after_get(app *a, int node)
{
    rnode *x = &a->rn[node];
    const char *tok;
    int64_t expiry, left;
    const char *argv[3];
    size_t len[3];
    char val[64];
    int64_t margin = a->o->node_timeout_ms + 2;
    if (a->op == TOOL_CMD_INSPECT) { rn_done(a, node, RN_YES, 0); return; }
    if (x->val_type == REDLOCK_REPLY_NIL) { rn_done(a, node, RN_MISSING, 0); return; }
    if (x->val_type != REDLOCK_REPLY_STRING || x->val_long || !parse_value(x->val, x->val_len, &tok, &expiry) ||
        memcmp(tok, a->o->token, REDLOCK_TOKEN_LEN) != 0) {
        rn_done(a, node, RN_OTHER, 0);
        return;
    }
    if (expiry < 0) left = x->have_pttl && x->pttl >= 0 ? x->pttl : (x->pttl == -2 ? 0 : INT64_MAX);
    else left = expiry - wall_ms();
    if (left <= margin) { /* about to expire: let it, rather than race it */
        rn_done(a, node, a->op == TOOL_CMD_RELEASE ? RN_YES : RN_MISSING, 0);
        return;
    }
    argv[1] = a->o->name;
    len[1] = strlen(a->o->name);
    a->rn[node].waiting = 1;
    if (a->op == TOOL_CMD_RELEASE) {
        argv[0] = "DEL"; len[0] = 3;
        raw_send(a, node, T_ACT, 2, argv, len);
    } else if (expiry < 0) {
        argv[0] = "PEXPIRE"; len[0] = 7;
        argv[2] = a->ttl_text; len[2] = strlen(a->ttl_text);
        raw_send(a, node, T_ACT, 3, argv, len);
    } else {
        int w = snprintf(val, sizeof val, "%lld:%s", (long long)(wall_ms() + a->o->ttl_ms + 1), a->o->token);
        argv[0] = "GETSET"; len[0] = 6;
        argv[2] = val; len[2] = (size_t)w;
        raw_send(a, node, T_ACT, 3, argv, len);
    }
}

static void on_raw_reply(void *user, int node, redlock_tag tag, const redlock_reply *r)
{
    app *a = (app *)user;
    rnode *x;
    if (node < 0 || node >= a->n) return;
    x = &a->rn[node];
    if (x->done) return;
    x->waiting--;
    switch ((int)tag) {
    case T_EVAL:
        if (r->type == REDLOCK_REPLY_ERROR) {
            if (a->o->mode == REDLOCK_MODE_AUTO && (starts(r, "NOPERM") || contains(r, "unknown command"))) {
                INFO("node %s: scripts refused, using GET + compare", a->o->nodes[node].display);
                send_get_pttl(a, node);
                return;
            }
            rn_server_error(a, node, r);
            return;
        }
        if (r->type != REDLOCK_REPLY_INTEGER || r->integer < (a->op == TOOL_CMD_EXTEND ? -1 : 0) || r->integer > 1) {
            rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL);
            return;
        }
        rn_done(a, node, r->integer == 1 ? RN_YES : r->integer == 0 ? RN_MISSING : RN_OTHER, 0);
        return;
    case T_GET:
        if (r->type == REDLOCK_REPLY_STRING) {
            x->val_type = REDLOCK_REPLY_STRING;
            if (r->len <= sizeof x->val) {
                if (r->len) memcpy(x->val, r->str, r->len);
                x->val_len = r->len;
            } else {
                x->val_long = 1;
            }
        } else if (r->type == REDLOCK_REPLY_NIL) {
            x->val_type = REDLOCK_REPLY_NIL;
        } else if (r->type == REDLOCK_REPLY_ERROR && starts(r, "WRONGTYPE")) {
            x->val_type = REDLOCK_REPLY_ERROR; /* another kind of key */
        } else if (r->type == REDLOCK_REPLY_ERROR) {
            rn_server_error(a, node, r);
            return;
        } else {
            rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL);
            return;
        }
        break;
    case T_PTTL:
        if (r->type == REDLOCK_REPLY_ERROR) { rn_server_error(a, node, r); return; }
        if (r->type != REDLOCK_REPLY_INTEGER) { rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL); return; }
        x->have_pttl = 1;
        x->pttl = r->integer;
        break;
    case T_ACT:
        if (r->type == REDLOCK_REPLY_ERROR) { rn_server_error(a, node, r); return; }
        if (r->type == REDLOCK_REPLY_INTEGER && (r->integer == 0 || r->integer == 1)) {
            rn_done(a, node, r->integer == 1 ? RN_YES : RN_MISSING, 0);
        } else if (r->type == REDLOCK_REPLY_NIL || r->type == REDLOCK_REPLY_STRING) { /* GETSET */
            const char *tok;
            int64_t e;
            int ours = r->type == REDLOCK_REPLY_NIL ||
                       (parse_value(r->str, r->len, &tok, &e) && memcmp(tok, a->o->token, REDLOCK_TOKEN_LEN) == 0);
            rn_done(a, node, ours ? RN_YES : RN_OTHER, 0);
        } else {
            rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL);
        }
        return;
    default: return;
    }
    if (x->waiting == 0) after_get(a, node);
}

static void on_raw_error(void *user, int node, redlock_tag tag, int status)
{
    app *a = (app *)user;
    (void)tag;
    if (node < 0 || node >= a->n) return;
    rn_done(a, node, RN_ERR, status ? status : REDLOCK_ERR_TRANSPORT);
}

static void raw_send(app *a, int node, int tag, int argc, const char **argv, const size_t *len)
{
    int rc = redlock_socket_send(&a->s, node, argc, argv, len, (redlock_tag)tag);
    if (rc != 0) rn_done(a, node, RN_ERR, rc);
}

/* ---- socket setup ---- */

static int open_socket(app *a, int raw)
{
    redlock_socket_config cfg;
    int i, rc;
    redlock_socket_config_init(&cfg);
    cfg.node_count = a->n;
    for (i = 0; i < a->n; i++) {
        const tool_node *t = &a->o->nodes[i];
        cfg.node[i].host = t->host;
        cfg.node[i].port = t->port;
        cfg.node[i].unix_path = t->unix_path;
        cfg.node[i].username = t->user;
        cfg.node[i].password = t->pass;
        cfg.node[i].db = t->db;
        a->last_fd[i] = -1;
    }
    cfg.connect_timeout_ms = 1000;
    cfg.command_timeout_ms = a->o->node_timeout_ms * 2 > 1000 ? a->o->node_timeout_ms * 2 : 1000;
    cfg.watch = on_watch;
    cfg.user = a;
    if (raw) {
        cfg.on_reply = on_raw_reply;
        cfg.on_error = on_raw_error;
    } else {
        cfg.on_event = on_event;
        cfg.core.node_timeout_ms = a->o->node_timeout_ms;
        for (i = 0; i < a->n; i++) cfg.core.mode[i] = a->o->mode;
        if (a->o->wait_ms == 0) {
            cfg.core.retry_count = -1;
        } else {
            cfg.core.retry_count = INT_MAX;
            cfg.core.wait_ms = a->o->wait_ms;
        }
        cfg.core.retry_delay_ms = a->o->retry_delay_ms;
        cfg.core.retry_jitter_ms = a->o->retry_delay_ms / 2 ? a->o->retry_delay_ms / 2 : -1;
    }
    rc = redlock_socket_init(&a->s, &cfg);
    if (rc != REDLOCK_OK) {
        ERR("cannot set up the nodes: %s", redlock_strerror(rc));
        return rc == REDLOCK_ERR_NOMEM ? TOOL_EXIT_INTERNAL : TOOL_EXIT_USAGE;
    }
    a->s_up = 1;
    return 0;
}

/* ---- acquire (run, acquire) ---- */

/* Before we exit: what the core sent last reaches the nodes and is
   answered, as the hiredis adapter's linger does after a blocking call.
   That is the undo of a failed acquire attempt (an EVAL compare-and-delete
   on every node: without it, a SET that landed on a minority of nodes
   stays there for the whole --ttl and, with split votes, locks every
   contender out), the stragglers of a release (EVALSHA -> NOSCRIPT -> EVAL;
   GET, then DEL on nodes without scripts), the cleanup after a lost lock,
   and commands in flight (a straggler's SET after a successful acquire).
   Runs while the lock has a round running (redlock_lock_pending()) or the
   adapter has commands unanswered, for at most one node timeout: the core
   ends any round by then (its deadline is one node timeout from its start,
   which is already past). */
static void linger(app *a)
{
    int64_t until = redlock_socket_now_us() + (a->o->node_timeout_ms + 50) * 1000;
    while (redlock_socket_now_us() < until) {
        if (!(a->lock_up && redlock_lock_pending(&a->lock)) && redlock_socket_pending(&a->s) == 0) break;
        step(a, until);
    }
}

/* Releases (or cancels) the lock and waits for the nodes, bounded. */
static void release_and_wait(app *a, int warn)
{
    int64_t until = redlock_socket_now_us() + (a->o->node_timeout_ms + 2000) * 1000;
    int rc;
    a->rel_done = 0;
    while ((rc = redlock_release(&a->lock)) == REDLOCK_ERR_BUSY && redlock_socket_now_us() < until)
        step(a, redlock_socket_now_us() + 10000); /* a renewal is running: let it finish */
    if (rc != REDLOCK_OK) return;
    while (!a->rel_done && redlock_socket_now_us() < until) step(a, until);
    linger(a);
    if (warn && a->rel_done && a->rel.status != REDLOCK_OK && a->rel.status != REDLOCK_ERR_EXPIRED) {
        char b[24];
        ERR("warning: release of '%s' incomplete (%s); it expires within %s", a->o->name,
            redlock_strerror(a->rel.status), dur(b, sizeof b, a->o->ttl_ms * 1000));
    }
}

/* Returns 0 when held, else the exit code (messages printed). */
static int acquire_lock(app *a, int watchdog)
{
    redlock_lock_opts lo;
    int64_t start = redlock_socket_now_us(), safety;
    int rc, cancelled = 0;
    char b1[24];
    memset(&lo, 0, sizeof lo);
    lo.key = a->o->name;
    lo.ttl_ms = a->o->ttl_ms;
    lo.watchdog = watchdog;
    lo.on_result = on_result;
    lo.user = a;
    rc = redlock_lock_init(&a->lock, redlock_socket_client(&a->s), &lo);
    if (rc != REDLOCK_OK) {
        ERR("cannot set up the lock: %s", redlock_strerror(rc));
        return TOOL_EXIT_USAGE;
    }
    a->lock_up = 1;
    rc = redlock_acquire(&a->lock);
    if (rc != REDLOCK_OK) {
        ERR("cannot start acquiring: %s", redlock_strerror(rc));
        return TOOL_EXIT_INTERNAL;
    }
    /* the core bounds the wait; this only guards against a stuck loop */
    safety = start + (a->o->wait_ms + 3 * a->o->ttl_ms + 30000) * 1000;
    while (!a->acq_done) {
        step(a, safety);
        if (!cancelled && (a->fail_fast || a->abort_sig)) {
            cancelled = 1;
            release_and_wait(a, 0); /* cancels the attempt, undoes any partial SET */
        }
        if (!a->acq_done && redlock_socket_now_us() >= safety) {
            ERR("internal error: no outcome from the lock");
            return TOOL_EXIT_INTERNAL;
        }
    }
    if (a->acq.status == REDLOCK_OK && !a->abort_sig) return 0;
    if (a->acq.status == REDLOCK_OK) release_and_wait(a, 0);
    else linger(a); /* the failed attempt's undo: on every way out from here */
    if (a->abort_sig) return 128 + a->abort_sig;
    {
        int code = a->fail_fast;
        int st = a->acq.status;
        if (!code && st != REDLOCK_ERR_CANCELLED) code = attempt_verdict(a, 1);
        if (code) {
            char list[1024];
            int failed[REDLOCK_MAX_NODES], i, nf = 0;
            for (i = 0; i < a->n; i++) {
                failed[i] = a->voted[i] && a->vote_err[i];
                nf += failed[i];
            }
            list_failed(a, a->vote_err, failed, list, sizeof list);
            ERR("%s: %d of %d nodes failed, a quorum needs %d: %s",
                code == TOOL_EXIT_AUTH ? "nodes refused authentication" :
                code == TOOL_EXIT_PROTOCOL ? "protocol error" : "nodes unreachable",
                nf, a->n, a->quorum, list);
            return code;
        }
        switch (st) {
        case REDLOCK_ERR_LOCKED:
        case REDLOCK_ERR_TIMEOUT:
        case REDLOCK_ERR_VALIDITY:
        case REDLOCK_ERR_NO_QUORUM:
            if (st == REDLOCK_ERR_VALIDITY)
                ERR("'%s' not acquired: %s (nodes too slow for --ttl?)", a->o->name, redlock_strerror(st));
            else if (a->o->wait_ms == 0)
                ERR("'%s' is locked by someone else", a->o->name);
            else
                ERR("'%s' is locked by someone else: gave up after %s", a->o->name,
                    dur(b1, sizeof b1, redlock_socket_now_us() - start));
            return TOOL_EXIT_BUSY;
        default:
            ERR("acquiring '%s' failed: %s", a->o->name, redlock_strerror(st));
            return TOOL_EXIT_INTERNAL;
        }
    }
}

static void reraise(int sig)
{
    signals_teardown();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- run ---- */

static pid_t spawn(app *a, int *exec_err)
{
    int ep[2], e = 0, i;
    pid_t pid;
    *exec_err = 0;
    if (pipe(ep) != 0) return -1;
    (void)fcntl(ep[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(ep[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        close(ep[0]);
        close(ep[1]);
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        ssize_t w;
        for (i = 0; i < N_HANDLED; i++) signal(g_handled[i], SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        close(ep[0]);
        execvp(a->o->child_argv[0], a->o->child_argv);
        e = errno;
        w = write(ep[1], &e, sizeof e);
        (void)w;
        _exit(e == ENOENT ? TOOL_EXIT_NOT_FOUND : TOOL_EXIT_CANNOT_EXEC);
    }
    close(ep[1]);
    for (;;) {
        ssize_t r = read(ep[0], &e, sizeof e);
        if (r < 0 && errno == EINTR) continue;
        if (r == (ssize_t)sizeof e) *exec_err = e;
        break;
    }
    close(ep[0]);
    return pid;
}

static int cmd_run(app *a)
{
    int rc, exec_err, status = 0, reaped = 0, lost_seen = 0;
    int64_t kill_at = REDLOCK_NO_DEADLINE, give_up_at = REDLOCK_NO_DEADLINE;
    pid_t pid;
    char b1[24];
    rc = acquire_lock(a, 1);
    if (rc) return rc;
    pid = spawn(a, &exec_err);
    if (pid < 0) {
        ERR("cannot start '%s': %s", a->o->child_argv[0], strerror(errno));
        release_and_wait(a, 1);
        return TOOL_EXIT_INTERNAL;
    }
    a->child = pid;
    if (exec_err) {
        ERR("cannot run '%s': %s", a->o->child_argv[0], strerror(exec_err));
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        a->child = 0;
        release_and_wait(a, 1);
        return exec_err == ENOENT ? TOOL_EXIT_NOT_FOUND : TOOL_EXIT_CANNOT_EXEC;
    }
    INFO("running '%s' (pid %ld) while holding '%s'", a->o->child_argv[0], (long)pid, a->o->name);
    while (!reaped) {
        int64_t now, until = kill_at < give_up_at ? kill_at : give_up_at;
        pid_t w;
        step(a, until);
        w = waitpid(pid, &status, WNOHANG);
        if (w == pid) { reaped = 1; break; }
        now = redlock_socket_now_us();
        if (a->lost && !lost_seen) {
            lost_seen = 1;
            if (a->o->on_lost == TOOL_ON_LOST_IGNORE) {
                ERR("lost the lock '%s' (%s); the command keeps running (--on-lost=ignore)", a->o->name,
                    redlock_strerror(a->lost_status));
            } else if (a->o->on_lost == TOOL_ON_LOST_KILL) {
                ERR("lost the lock '%s' (%s); sending SIGKILL to the command", a->o->name, redlock_strerror(a->lost_status));
                kill(pid, SIGKILL);
                give_up_at = now + 5000000;
            } else {
                ERR("lost the lock '%s' (%s); sending SIGTERM to the command", a->o->name, redlock_strerror(a->lost_status));
                kill(pid, SIGTERM);
                kill_at = now + a->o->kill_after_ms * 1000;
            }
        }
        if (now >= kill_at) {
            ERR("the command did not exit %s after SIGTERM; sending SIGKILL", dur(b1, sizeof b1, a->o->kill_after_ms * 1000));
            kill(pid, SIGKILL);
            kill_at = REDLOCK_NO_DEADLINE;
            give_up_at = now + 5000000;
        }
        if (now >= give_up_at) {
            ERR("the command (pid %ld) does not exit even after SIGKILL; giving up on it", (long)pid);
            break;
        }
    }
    a->child = 0;
    if (a->lost) return TOOL_EXIT_LOST;
    if (redlock_lock_state(&a->lock) == REDLOCK_STATE_HELD) release_and_wait(a, 1);
    if (a->lost) return TOOL_EXIT_LOST; /* lost while releasing */
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return TOOL_EXIT_INTERNAL;
}

static int cmd_acquire(app *a)
{
    int rc = acquire_lock(a, 0);
    if (rc) return rc;
    linger(a); /* SETs to nodes that had not answered yet still go out */
    if (printf("%s\n", redlock_lock_token(&a->lock)) < 0 || fflush(stdout) != 0) {
        ERR("cannot write the token: %s; releasing", strerror(errno));
        release_and_wait(a, 1);
        return TOOL_EXIT_INTERNAL;
    }
    return 0;
}

/* ---- release, extend, inspect ---- */

/* Sends the first command to every node and runs until the outcome is
   known (or every node answered, for inspect), bounded. */
static void raw_round(app *a)
{
    int i;
    int64_t now = redlock_socket_now_us();
    int64_t until = now + (1000 + 3 * (a->o->node_timeout_ms * 2 > 1000 ? a->o->node_timeout_ms * 2 : 1000)) * 1000;
    int64_t grace = REDLOCK_NO_DEADLINE;
    a->round_start = now;
    snprintf(a->ttl_text, sizeof a->ttl_text, "%lld", (long long)a->o->ttl_ms);
    for (i = 0; i < a->n; i++) {
        if (a->op == TOOL_CMD_INSPECT || a->o->mode == REDLOCK_MODE_LEGACY) send_get_pttl(a, i);
        else send_eval(a, i);
    }
    for (;;) {
        int done = 0, yes = 0;
        now = redlock_socket_now_us();
        for (i = 0; i < a->n; i++) {
            done += a->rn[i].done;
            yes += a->rn[i].done && a->rn[i].outcome == RN_YES;
        }
        if (done == a->n || now >= until || now >= grace || a->abort_sig) break;
        /* decided: give the others one node timeout to finish too */
        if (a->op != TOOL_CMD_INSPECT && yes >= a->quorum && grace == REDLOCK_NO_DEADLINE)
            grace = now + a->o->node_timeout_ms * 1000;
        step(a, grace < until ? grace : until);
    }
    for (i = 0; i < a->n; i++)
        if (!a->rn[i].done) rn_done(a, i, RN_ERR, REDLOCK_ERR_NODE_TIMEOUT);
}

static int raw_failure(app *a, const char *what)
{
    int st[REDLOCK_MAX_NODES], failed[REDLOCK_MAX_NODES], i, nf = 0, code;
    char list[1024];
    for (i = 0; i < a->n; i++) {
        st[i] = a->rn[i].outcome == RN_ERR ? a->rn[i].status : 0;
        failed[i] = st[i] != 0;
        nf += failed[i];
    }
    if (a->n - nf >= a->quorum) return 0;
    code = code_for(st, a->n);
    list_failed(a, st, failed, list, sizeof list);
    ERR("%s '%s': %d of %d nodes failed, a quorum needs %d: %s", what, a->o->name, nf, a->n, a->quorum, list);
    for (i = 0; i < a->n; i++)
        if (st[i] == REDLOCK_ERR_SERVER && a->rn[i].errtext[0])
            ERR("node %s said: %s", a->o->nodes[i].display, a->rn[i].errtext);
    return code;
}

static int cmd_release_extend(app *a)
{
    int i, yes = 0, other = 0, missing = 0, code;
    const char *what = a->op == TOOL_CMD_RELEASE ? "release" : "extend";
    int64_t validity;
    char b1[24];
    raw_round(a);
    if (a->abort_sig) return 128 + a->abort_sig;
    for (i = 0; i < a->n; i++) {
        const rnode *x = &a->rn[i];
        yes += x->outcome == RN_YES;
        other += x->outcome == RN_OTHER;
        missing += x->outcome == RN_MISSING;
        INFO("node %s: %s", a->o->nodes[i].display,
             x->outcome == RN_YES ? (a->op == TOOL_CMD_RELEASE ? "released" : "extended")
             : x->outcome == RN_MISSING ? "not held by this token"
             : x->outcome == RN_OTHER ? "held by another token"
             : node_reason(x->status));
    }
    validity = a->o->ttl_ms * 1000 - (redlock_socket_now_us() - a->round_start) -
               ((int64_t)((double)a->o->ttl_ms * 10.0) + 2000);
    if (yes >= a->quorum && (a->op == TOOL_CMD_RELEASE || validity > 0)) {
        if (a->op == TOOL_CMD_RELEASE) INFO("released '%s' on %d/%d nodes", a->o->name, yes, a->n);
        else INFO("extended '%s' on %d/%d nodes: valid for %s", a->o->name, yes, a->n, dur(b1, sizeof b1, validity));
        return 0;
    }
    if ((code = raw_failure(a, what)) != 0) return code;
    if (yes >= a->quorum)
        ERR("extend '%s': the nodes answered too late, no validity left", a->o->name);
    else
        ERR("%s '%s': this token does not hold the lock (it does on %d of %d nodes, a quorum needs %d;"
            " %d held by another token, %d expired or released)", what, a->o->name, yes, a->n, a->quorum, other, missing);
    return TOOL_EXIT_NOT_HELD;
}

static int cmd_inspect(app *a)
{
    int i, answered = 0, free_n = 0, best = 0, best_i = -1, code;
    char b1[24];
    int64_t now_wall;
    raw_round(a);
    if (a->abort_sig) return 128 + a->abort_sig;
    now_wall = wall_ms();
    printf("%-32s %-7s %-9s %s\n", "NODE", "STATE", "HOLDER", "TTL");
    for (i = 0; i < a->n; i++) {
        const rnode *x = &a->rn[i];
        const char *tok;
        int64_t expiry;
        if (x->outcome == RN_ERR) {
            printf("%-32s %-7s %-9s %s\n", a->o->nodes[i].display, "error", "-", node_reason(x->status));
            continue;
        }
        answered++;
        if (x->val_type == REDLOCK_REPLY_NIL) {
            printf("%-32s %-7s %-9s %s\n", a->o->nodes[i].display, "free", "-", "-");
            free_n++;
        } else if (x->val_type == REDLOCK_REPLY_STRING && !x->val_long && parse_value(x->val, x->val_len, &tok, &expiry)) {
            int same = 0, j;
            if (expiry >= 0) tool_format_ms(b1, sizeof b1, expiry - now_wall);
            else if (x->have_pttl && x->pttl >= 0) tool_format_ms(b1, sizeof b1, x->pttl);
            else snprintf(b1, sizeof b1, x->pttl == -1 ? "none" : "-");
            printf("%-32s %-7s %.8s  %s%s\n", a->o->nodes[i].display, "held", tok, b1,
                   expiry >= 0 ? " (legacy value, wall clock)" : "");
            for (j = 0; j < a->n; j++) {
                const rnode *y = &a->rn[j];
                const char *t2;
                int64_t e2;
                if (y->outcome != RN_ERR && y->val_type == REDLOCK_REPLY_STRING && !y->val_long &&
                    parse_value(y->val, y->val_len, &t2, &e2) && memcmp(t2, tok, REDLOCK_TOKEN_LEN) == 0)
                    same++;
            }
            if (same > best) { best = same; best_i = i; }
        } else {
            printf("%-32s %-7s %-9s %s\n", a->o->nodes[i].display, "other", "-", "the key is not a lock");
        }
    }
    code = raw_failure(a, "inspect");
    if (best_i >= 0 && best >= a->quorum) {
        const char *tok;
        int64_t e;
        parse_value(a->rn[best_i].val, a->rn[best_i].val_len, &tok, &e);
        printf("'%s' is held by %.8s on %d/%d nodes (quorum %d)\n", a->o->name, tok, best, a->n, a->quorum);
    } else if (free_n == a->n) {
        printf("'%s' is free on all %d nodes\n", a->o->name, a->n);
    } else {
        printf("'%s' is not held by a quorum (%d of %d nodes answered, quorum %d)\n", a->o->name, answered, a->n, a->quorum);
    }
    fflush(stdout);
    return code;
}

/* ---- main ---- */

static void usage(FILE *f)
{
    fputs(
"Usage: redlock run     [options] NAME -- COMMAND [ARGS...]\n"
"       redlock acquire [options] NAME          prints a TOKEN; held for --ttl\n"
"       redlock release [options] NAME TOKEN\n"
"       redlock extend  [options] NAME TOKEN    to --ttl from now\n"
"       redlock inspect [options] NAME          who holds NAME, per node\n"
"\n"
"flock(1) for a cluster: a lock held when a majority of N independent Redis\n"
"nodes hold the key NAME with one random token (Redlock). `run` waits for the\n"
"lock, runs COMMAND, renews the lock every ttl/3 while COMMAND runs and\n"
"releases it when COMMAND exits, passing COMMAND's exit status through.\n"
"\n"
"Options:\n"
"  -n, --nodes LIST      comma-separated nodes (default: $REDLOCK_NODES):\n"
"                        host[:port]  [ipv6]:port  /path/to/redis.sock\n"
"                        redis://[user:pass@]host[:port][/db]\n"
"                        unix://[user:pass@]/path/to/redis.sock[?db=N]\n"
"  -t, --ttl DURATION    lock time to live (default 30s)\n"
"  -w, --wait DURATION   wait up to this long for a busy lock (default 30s)\n"
"      --no-wait         fail at once if the lock is busy (same as -w 0)\n"
"      --retry-delay D   pause between attempts while waiting (default 200ms, +-50%)\n"
"      --node-timeout D  how long one round waits for a node (default 200ms)\n"
"      --mode MODE       auto (default: modern, per-node fallback for old servers),\n"
"                        modern (SET NX PX and scripts) or legacy (SETNX/GETSET)\n"
"      --legacy          same as --mode legacy\n"
"      --on-lost ACTION  run: when the lock is lost, send COMMAND SIGTERM (term,\n"
"                        default), SIGKILL (kill) or nothing (ignore)\n"
"      --kill-after D    run: SIGKILL this long after that SIGTERM (default 5s)\n"
"  -q, --quiet           no messages on stderr (the exit status tells)\n"
"  -v, --verbose         report attempts, node answers and renewals on stderr\n"
"  -h, --help            show this help\n"
"  -V, --version         show the version\n"
"\n"
"DURATION: a number and a unit: 500ms, 10s, 1.5m, 1h (no unit: seconds).\n"
"\n"
"Exit status:\n"
"  0      success (run: COMMAND exited with 0)\n"
"  1      release/extend: TOKEN does not hold the lock (expired, released, taken)\n"
"  64     usage error (bad option, duration, node, missing '--' ...)\n"
"  69     too few nodes reachable for a quorum (refused, unreachable, timed out)\n"
"  70     internal error (fork, pipe, out of memory)\n"
"  75     lock busy: held by someone else when --wait ran out (or --no-wait)\n"
"  76     protocol error: a node answered unexpectedly (not a Redis server?),\n"
"         or with an error reply (e.g. SELECT refused)\n"
"  77     run: the lock was lost while COMMAND ran (COMMAND signalled, --on-lost)\n"
"  78     a node refused AUTH (wrong or missing password)\n"
"  126    run: COMMAND could not be executed\n"
"  127    run: COMMAND not found\n"
"  128+N  run: COMMAND was killed by signal N; also redlock itself when a\n"
"         signal interrupts it before COMMAND starts\n"
"  other  run: COMMAND's own exit status\n"
"\n"
"Passwords are never printed: prefer REDLOCK_NODES to -n for them (redlock\n"
"overwrites them in its argv, but other users may see it before that).\n", f);
}

int main(int argc, char **argv)
{
    tool_opts o;
    app *a;
    char err[512];
    int rc, i;

    rc = tool_parse_args(argc, argv, &o, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "redlock: %s (see redlock --help)\n", err);
        return rc;
    }
    g_verbose = o.verbose;
    if (o.cmd == TOOL_CMD_HELP) {
        usage(stdout);
        tool_opts_free(&o);
        return 0;
    }
    if (o.cmd == TOOL_CMD_VERSION) {
        printf("redlock %s (redlock.h %s)\n", REDLOCK_VERSION, REDLOCK_VERSION);
        tool_opts_free(&o);
        return 0;
    }
    a = (app *)calloc(1, sizeof *a);
    if (!a || signals_setup() != 0) {
        ERR("out of resources");
        free(a);
        tool_opts_free(&o);
        return TOOL_EXIT_INTERNAL;
    }
    a->o = &o;
    a->n = o.node_count;
    a->quorum = a->n / 2 + 1;
    a->op = o.cmd;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) a->last_fd[i] = -1;

    rc = open_socket(a, o.cmd != TOOL_CMD_RUN && o.cmd != TOOL_CMD_ACQUIRE);
    if (rc == 0) {
        switch (o.cmd) {
        case TOOL_CMD_RUN: rc = cmd_run(a); break;
        case TOOL_CMD_ACQUIRE: rc = cmd_acquire(a); break;
        case TOOL_CMD_RELEASE:
        case TOOL_CMD_EXTEND: rc = cmd_release_extend(a); break;
        case TOOL_CMD_INSPECT: rc = cmd_inspect(a); break;
        default: rc = TOOL_EXIT_INTERNAL; break;
        }
    }
    /* deinit drops what the core has not sent yet: let the last round
       (e.g. the cleanup after a lost lock) finish first, bounded */
    if (a->lock_up) {
        linger(a);
        redlock_lock_deinit(&a->lock);
    }
    if (a->s_up) redlock_socket_deinit(&a->s);
    {
        int sig = a->abort_sig;
        free(a);
        tool_opts_free(&o);
        if (sig && rc == 128 + sig) {
            ERR("interrupted by signal %d", sig);
            reraise(sig);
        }
    }
    signals_teardown();
    return rc;
}
