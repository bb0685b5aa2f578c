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
   * inspect uses raw mode too: GET and PTTL on every node (and GET of the fence counter, INFO
     for the node's maxmemory-policy and its process, CONFIG GET appendfsync for whether it keeps
     keys across restarts); exit 0 held, 1 free, 69/76/78 unknown; --json.
   * run: COMMAND in a process group of its own, led by a watcher that
     kills the group when redlock dies however it dies (see "run" below).
   * messages: a node's failure in its own words (why_node()): a refused
     AUTH or SELECT and an error reply to the lock command in the
     server's words, a failed connect in the adapter's ("connection
     refused", "name does not resolve ..."), both kept by the adapter's
     node status (take_words()). A TLS node that timed out and a plain
     node whose connection was lost have their port asked in the other
     protocol by the library (redlock_socket_probe(), port_mismatch(): to
     the adapter a port of the other kind looks like a failing network);
     such ports, like refusals, end an acquire at once when they
     leave too few nodes for a quorum (attempt_mismatched()). While run holds the lock, a node that stops or
     starts holding it again is reported once per change (hold_changes()).
   * --log-format json: msg() and the log_*() functions write one JSON
     object per line instead (the events of tools/redlock.1, JSON LOG);
     --stats: the adapter's statistics at exit (print_stats()).
   * tokens carry a label (redlock_lock_opts.label, "host:pid:" by
     default) that inspect shows as the holder.
   Node lists are parsed by the adapters' parser (redlock_parse_nodes(), in
   tools/args.c).

   See tools/README.md, `redlock --help` and tools/redlock.1. */
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
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* ---- messages ---- */

/* JSON string: escapes " \ and control characters; valid UTF-8 passes,
   any other byte becomes U+FFFD (inspect) or, with bytes, \u00XX (the
   log: the byte's value stays readable), so the output is always valid
   JSON. */
static void json_esc(FILE *f, const char *s, size_t n, int bytes)
{
    size_t i = 0;
    fputc('"', f);
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        size_t k;
        if (c == '"' || c == '\\') { fputc('\\', f); fputc(c, f); i++; continue; }
        if (c < 0x20 || c == 0x7f) { fprintf(f, "\\u%04x", c); i++; continue; }
        if (len == 1) { fputc(c, f); i++; continue; }
        for (k = 1; len && k < len; k++)
            if (i + k >= n || ((unsigned char)s[i + k] & 0xc0) != 0x80) len = 0;
        /* no overlong forms, surrogates or code points past U+10FFFF */
        if (len == 2 && c < 0xc2) len = 0;
        if (len == 3 && ((c == 0xe0 && (unsigned char)s[i + 1] < 0xa0) || (c == 0xed && (unsigned char)s[i + 1] >= 0xa0))) len = 0;
        if (len == 4 && (c > 0xf4 || (c == 0xf0 && (unsigned char)s[i + 1] < 0x90) || (c == 0xf4 && (unsigned char)s[i + 1] >= 0x90))) len = 0;
        if (!len) {
            if (bytes) fprintf(f, "\\u%04x", c);
            else fputs("\\ufffd", f);
            i++;
            continue;
        }
        fwrite(s + i, 1, len, f);
        i += len;
    }
    fputc('"', f);
}

static void json_str(FILE *f, const char *s, size_t n)
{
    json_esc(f, s, n, 0);
}

static void json_cstr(FILE *f, const char *s)
{
    if (s) json_str(f, s, strlen(s));
    else fputs("null", f);
}

static int g_verbose; /* -1 quiet, 0 errors, 1 verbose */

/* --log-format json: every line on stderr is one JSON object (tools/redlock.1,
   JSON LOG). stderr is then fully buffered and flushed after each line,
   so that a line goes out in one write, whole, next to COMMAND's own. */
static int g_json;
static const char *g_name;  /* the lock's name, in every line */
static char g_errbuf[16384];
/* not_acquired carries the text message's words: the first line said
   while capturing is kept, the node lines after it come as "nodes" */
static int g_capture;
static char g_captured[2048];

static void log_begin(const char *event)
{
    struct timespec ts;
    struct tm tm;
    char t[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "{\"v\":1,\"ts\":\"%s.%03dZ\",\"event\":\"%s\",\"name\":", t, (int)(ts.tv_nsec / 1000000), event);
    if (g_name) json_esc(stderr, g_name, strlen(g_name), 1);
    else fputs("null", stderr);
    fprintf(stderr, ",\"pid\":%ld", (long)getpid());
}

static void log_str(const char *key, const char *val)
{
    fprintf(stderr, ",\"%s\":", key);
    json_esc(stderr, val, strlen(val), 1);
}

static void log_int(const char *key, long long val)
{
    fprintf(stderr, ",\"%s\":%lld", key, val);
}

/* a duration in ms, to the microsecond */
static void log_ms(const char *key, int64_t us)
{
    fprintf(stderr, ",\"%s\":%lld.%03d", key, (long long)(us / 1000), (int)(us % 1000));
}

static void log_end(void)
{
    fputs("}\n", stderr);
    fflush(stderr);
}

/* A status as a word of the schema: the name of its REDLOCK_ERR_*
   constant, in lower case ("expired", "node_timeout"). */
static const char *status_word(int st)
{
    static const struct { int st; const char *w; } t[] = {
        { REDLOCK_OK, "ok" }, { REDLOCK_ERR_INVALID, "invalid" }, { REDLOCK_ERR_KEY, "key" },
        { REDLOCK_ERR_KEY_TOO_LONG, "key_too_long" }, { REDLOCK_ERR_TTL, "ttl" }, { REDLOCK_ERR_NODES, "nodes" },
        { REDLOCK_ERR_BUSY, "busy" }, { REDLOCK_ERR_NOT_HELD, "not_held" }, { REDLOCK_ERR_ALREADY_HELD, "already_held" },
        { REDLOCK_ERR_RANDOM, "random" }, { REDLOCK_ERR_NOMEM, "nomem" }, { REDLOCK_ERR_DETACHED, "detached" },
        { REDLOCK_ERR_NO_TLS, "no_tls" }, { REDLOCK_ERR_LOCKED, "locked" }, { REDLOCK_ERR_TIMEOUT, "timeout" },
        { REDLOCK_ERR_NO_QUORUM, "no_quorum" }, { REDLOCK_ERR_VALIDITY, "validity" }, { REDLOCK_ERR_EXPIRED, "expired" },
        { REDLOCK_ERR_STOLEN, "stolen" }, { REDLOCK_ERR_QUORUM_LOST, "quorum_lost" }, { REDLOCK_ERR_HOLD_LIMIT, "hold_limit" },
        { REDLOCK_ERR_CANCELLED, "cancelled" }, { REDLOCK_ERR_CONFIG, "config" }, { REDLOCK_ERR_OVERLOADED, "overloaded" },
        { REDLOCK_ERR_TRANSPORT, "transport" }, { REDLOCK_ERR_NODE_TIMEOUT, "node_timeout" },
        { REDLOCK_ERR_PROTOCOL, "protocol" }, { REDLOCK_ERR_SERVER, "server" }, { REDLOCK_ERR_AUTH, "auth" },
        { REDLOCK_ERR_CONNECT, "connect" }, { REDLOCK_ERR_SELECT, "select" }, { REDLOCK_ERR_QUEUE_FULL, "queue_full" },
        { REDLOCK_ERR_TLS, "tls" }, { REDLOCK_ERR_NO_SCRIPTING, "no_scripting" }, { REDLOCK_ERR_NOPERM, "noperm" },
        { REDLOCK_ERR_EVICTING, "evicting" }, { REDLOCK_ERR_RESTARTED, "restarted" }, { REDLOCK_ERR_REPLICAS, "replicas" },
    };
    size_t i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].st == st) return t[i].w;
    return "unknown";
}

/* A human message: "redlock: ..." on stderr, or in the JSON log a
   "message" line (level error, warning or info) unless captured. */
static void msg(int level, const char *fmt, ...)
{
    va_list ap;
    char text[2048];
    if (g_verbose < level) return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (g_json && g_capture) {
        if (level == 0 && !g_captured[0]) snprintf(g_captured, sizeof g_captured, "%s", text);
        return;
    }
    if (g_json) {
        int warn = strncmp(text, "warning: ", 9) == 0;
        log_begin("message");
        log_str("level", level > 0 ? "info" : warn ? "warning" : "error");
        log_str("text", warn ? text + 9 : text);
        log_end();
        return;
    }
    fprintf(stderr, "redlock: %s\n", text);
    fflush(stderr);
}
#define ERR(...) msg(0, __VA_ARGS__)
#define INFO(...) msg(1, __VA_ARGS__)

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGKILL: return "SIGKILL";
    case SIGTSTP: return "SIGTSTP";
    case SIGTTIN: return "SIGTTIN";
    case SIGTTOU: return "SIGTTOU";
    case SIGSTOP: return "SIGSTOP";
    default: return "a signal";
    }
}

static const char *dur(char *buf, size_t cap, int64_t us)
{
    if (us >= 0 && us < 10000) snprintf(buf, cap, "%d.%dms", (int)(us / 1000), (int)(us % 1000 / 100));
    else tool_format_ms(buf, cap, us < 0 ? -1 : (us + 500) / 1000);
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
    /* sent with kill() (to us), not by the terminal: with --foreground a
       terminal's ^C reaches COMMAND by itself (same process group) and is
       not sent twice */
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
    sa.sa_flags = SA_SIGINFO; /* SIGCHLD on stops too: see cmd_run */
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

enum { RN_NONE, RN_YES, RN_ERR };
enum { HOLD_UNKNOWN, HOLD_YES, HOLD_FAIL, HOLD_NOT, HOLD_OTHER };
enum { T_GET = 1, T_PTTL, T_HGETALL, T_FENCE, T_INFO, T_CONFIG };

typedef struct rnode {
    int waiting;      /* replies outstanding */
    int done;
    int outcome;      /* RN_YES: both answered, RN_ERR: the node failed */
    int status;       /* node error when RN_ERR */
    /* the key's value (redlock.h section 13): GET's answer (a string is
       read once PTTL says whether the key expires), or HGETALL's */
    redlock_value v;
    char val[24 + REDLOCK_VALUE_TOKEN_MAX]; /* GET's string; a legacy value "expiry:token" fits */
    size_t val_len;
    int val_long;     /* value did not fit: not a lock value */
    int have_pttl;
    long long pttl;
    int have_fence;   /* a fenced lock's counter (REDLOCK_FENCE_PREFIX + NAME) is there */
    long long fence;
    int evicts;       /* INFO: redlock_evicts, -1 unknown (refused, no policy named) */
    char policy[24];  /* its maxmemory_policy, "" unknown */
    /* the server's process (redlock.h section 4, Restarts): INFO's run_id
       and uptime, and whether it keeps keys across restarts (INFO's
       aof_enabled:1 and CONFIG GET appendfsync "always"; a refused CONFIG:
       not durable) */
    redlock_node_life life;
    int life_known, aof, fsync_always;
    int64_t restart_at; /* when it may have lost keys (the core's word: redlock_node_restarted_at), INT64_MIN never */
    int restart_why;    /* redlock_restart */
} rnode;

/* A node's failure, for messages: the status, what the tool saw (a
   command's error reply, a connect that took the whole connect timeout)
   and, once asked for (why_node()), the words and their kind. */
enum { WHY_OTHER, WHY_TIMEOUT, WHY_RESOLVE, WHY_REFUSED, WHY_CONNECT, WHY_AUTH, WHY_SELECT, WHY_PROTOCOL, WHY_REPLY,
       WHY_TLS, WHY_ACL, WHY_SCRIPTS, WHY_EVICTING, WHY_RESTARTED, WHY_REPLICAS };

typedef struct nfail {
    int status;        /* 0: none; REDLOCK_ERR_* */
    int conn_timeout;  /* CONNECT after the whole connect timeout */
    char reply[128];   /* a command's error reply (status SERVER), cleaned */
    int kind;          /* WHY_*, valid once why[0] */
    char why[256];
} nfail;

#define TOOL_CONNECT_TIMEOUT_MS 1000

typedef struct app {
    tool_opts *o;
    int n, quorum;
    redlock_socket s;
    int s_up;
    int last_fd[REDLOCK_SOCKET_MAX_FDS];
    /* core lock (run, acquire) */
    redlock_lock lock;
    int lock_up;
    int acq_done, rel_done, ext_done;
    redlock_result acq, rel, ext;
    redlock_op vote_op; /* the operation whose votes are recorded below */
    int lost, lost_status;
    int voted[REDLOCK_MAX_NODES], vote_yes[REDLOCK_MAX_NODES], vote_other[REDLOCK_MAX_NODES];
    /* extend by token: a node that had not answered when the extend failed
       answers the cleanup round that follows (its status: 0, it is up) */
    int after[REDLOCK_MAX_NODES], after_status[REDLOCK_MAX_NODES];
    int fail_fast; /* the failed nodes leave too few for a quorum: stop waiting */
    /* a failed attempt's node statuses, for port_mismatch() outside the
       core's callbacks; and its verdicts (1 mismatch, -1 none), once a run */
    int retry_pending, retry_status[REDLOCK_MAX_NODES], mismatch[REDLOCK_MAX_NODES];
    int acquired, late, summary_done; /* the acquire round after its quorum */
    int64_t acquired_at;
    redlock_event acq_ev;
    /* node failures of the last round, and the words for them */
    nfail nf[REDLOCK_MAX_NODES];
    char words[REDLOCK_MAX_NODES][128]; /* the server's, with the node's last failed vote (take_words()) */
    int64_t conn_start[REDLOCK_MAX_NODES]; /* when the node's current socket was opened */
    int64_t words_timeout_ms; /* "no answer within" this */
    int64_t cmd_timeout_ms;   /* the adapter drops a node whose answer is this late */
    int64_t probe_until;      /* diagnosis probes end by then (monotonic us) */
    /* run: each node's part in the hold (HOLD_*), as last reported (from
       the acquire on) and as the renewals say now, for one line per change */
    int hold[REDLOCK_MAX_NODES], hold_now[REDLOCK_MAX_NODES], hold_status[REDLOCK_MAX_NODES];
    int64_t answered_at[REDLOCK_MAX_NODES]; /* the node's last answer to a renewal */
    int64_t await_until[REDLOCK_MAX_NODES]; /* a renewal was decided without it: its answer is due by then (0: none) */
    /* signals */
    int abort_sig; /* a terminating signal before COMMAND started */
    /* run: COMMAND, its process group and the watcher (see cmd_run) */
    pid_t child;
    pid_t pgrp;          /* COMMAND's process group (the watcher leads it), 0: --foreground */
    pid_t watcher;       /* 0: none */
    int watch_fd;        /* the watcher's pipe; redlock is its only writer */
    int cmd_reaped, cmd_status; /* COMMAND ended: its waitpid status (the JSON log's exit) */
    int64_t stop_sent;   /* a forwarded SIGTERM / SIGINT went out at this time (0: none) */
    /* raw mode (inspect) */
    rnode rn[REDLOCK_MAX_NODES];
    int evict_warned[REDLOCK_MAX_NODES]; /* the warning about a node that may evict keys is out */
    int notify_warned[REDLOCK_MAX_NODES]; /* the warning about refused release notifications is out */
} app;

/* The adapter reports fd changes: a new socket means a connect starts
   (for telling a connect timeout from a refusal). */
static void on_watch(void *user, int node, int fd, int interest)
{
    app *a = (app *)user;
    (void)interest;
    if (node < 0 || node >= a->n) return;
    if (fd != a->last_fd[node]) {
        a->last_fd[node] = fd;
        if (fd >= 0) a->conn_start[node] = redlock_socket_now_us(); /* a new socket: a connect starts */
    }
}

/* A CONNECT failure that came the whole connect timeout after its
   connect started: a timeout, not a refusal (no need to probe). */
static int connect_timed_out(const app *a, int node, int status)
{
    return status == REDLOCK_ERR_CONNECT && a->conn_start[node] &&
           redlock_socket_now_us() - a->conn_start[node] >= (TOOL_CONNECT_TIMEOUT_MS - 20) * 1000;
}

/* COMMAND gets sig: its whole process group, or with --foreground its
   process. A terminating signal is followed by SIGCONT, so that a stopped
   process acts on it (as timeout(1) does). */
static void signal_command(app *a, int sig)
{
    pid_t to = a->pgrp > 0 ? -a->pgrp : a->child;
    if (a->child <= 0) return;
    kill(to, sig);
    if (sig != SIGUSR1 && sig != SIGUSR2 && sig != SIGTSTP && sig != SIGCONT) kill(to, SIGCONT);
}

/* ^Z (SIGTSTP) while COMMAND runs in its own process group: the terminal
   sent it to redlock's group only. COMMAND's group is stopped, then
   redlock stops itself, so that the shell sees the job stopped; once
   redlock is continued (fg, bg), so is COMMAND's group. A stopped redlock
   cannot renew the lock: stopped for longer than the lock's validity, the
   lock is lost, and --on-lost acts when redlock runs again. */
static void suspend(app *a)
{
    INFO("suspending the command's process group and redlock");
    kill(-a->pgrp, SIGTSTP);
    kill(getpid(), SIGSTOP);
    kill(-a->pgrp, SIGCONT);
    INFO("continued");
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
                if (sig == SIGTSTP) {
                    if (a->pgrp > 0) suspend(a);
                    continue;
                }
                /* in a group of its own, COMMAND did not get the
                   terminal's signals: forward those too */
                if (fwd || a->pgrp > 0) {
                    INFO("forwarding %s to the command (%s %ld)", sig_name(sig), a->pgrp > 0 ? "process group" : "pid",
                         (long)(a->pgrp > 0 ? a->pgrp : a->child));
                    signal_command(a, sig);
                    if ((sig == SIGTERM || sig == SIGINT) && !a->stop_sent) a->stop_sent = redlock_socket_now_us();
                }
            } else if (sig != SIGUSR1 && sig != SIGUSR2 && sig != SIGTSTP && !a->abort_sig) {
                a->abort_sig = sig;
            }
        }
    }
}

/* One round of the loop: poll the nodes and the signal pipe until I/O, a
   signal, the adapter's next deadline or `until` (all monotonic, us). */
/* A node that refused the subscriber of release notifications (an ACL
   without the channel, a renamed SUBSCRIBE), once per node: waiting then
   retries at the retry delay there; the adapter asks again after a
   backoff. */
static void warn_notify(app *a)
{
    char why[160];
    int i;
    for (i = 0; i < a->n && g_verbose >= 0; i++) {
        /* (a refused login is the node's own failure, reported as such) */
        if (a->notify_warned[i] || redlock_socket_notify_status(&a->s, i, why, sizeof why) != REDLOCK_ERR_SERVER) continue;
        a->notify_warned[i] = 1;
        ERR("warning: node %s refuses release notifications (%s): a wait there polls at the retry delay "
            "(the ACL needs &" REDLOCK_CHANNEL_PREFIX "*)", a->o->shown[i], why);
    }
}

static void step(app *a, int64_t until)
{
    struct pollfd pf[REDLOCK_SOCKET_MAX_FDS + 1];
    int n;
    pf[0].fd = g_sig[0];
    pf[0].events = POLLIN;
    pf[0].revents = 0;
    n = redlock_socket_pollfds(&a->s, pf + 1);
    if (poll(pf, (nfds_t)n + 1, redlock_socket_poll_ms(&a->s, until)) <= 0) n = 0;
    else if (pf[0].revents) drain_signals(a);
    redlock_socket_dispatch(&a->s, pf + 1, n);
    warn_notify(a);
}

/* ---- node errors: words and exit codes ---- */

/* Errors that retrying within --wait will not cure: with too few other
   nodes for a quorum, `acquire` and `run` stop at once. */
static int hard_error(int st)
{
    return st == REDLOCK_ERR_CONNECT || st == REDLOCK_ERR_AUTH || st == REDLOCK_ERR_SELECT ||
           st == REDLOCK_ERR_TLS || st == REDLOCK_ERR_PROTOCOL || st == REDLOCK_ERR_SERVER ||
           st == REDLOCK_ERR_NOPERM || st == REDLOCK_ERR_EVICTING;
}

/* Coarse words from a status alone (verbose lines, before any probe). */
static const char *node_reason(int st)
{
    switch (st) {
    case REDLOCK_ERR_CONNECT: return "cannot connect";
    case REDLOCK_ERR_AUTH: return "authentication refused";
    case REDLOCK_ERR_SELECT: return "SELECT refused";
    case REDLOCK_ERR_NODE_TIMEOUT: return "timed out";
    case REDLOCK_ERR_TRANSPORT: return "connection lost";
    case REDLOCK_ERR_PROTOCOL: return "protocol error (not a Redis server?)";
    case REDLOCK_ERR_SERVER: return "error reply";
    case REDLOCK_ERR_EVICTING: return "may evict keys (maxmemory-policy): not counted";
    case REDLOCK_ERR_RESTARTED: return "restarted recently, may have lost keys: not counted yet";
    case REDLOCK_ERR_REPLICAS: return "too few replicas acknowledged (WAIT): not counted";
    default: return redlock_strerror(st);
    }
}

static void set_why(nfail *f, int kind, const char *fmt, ...)
{
    va_list ap;
    f->kind = kind;
    va_start(ap, fmt);
    vsnprintf(f->why, sizeof f->why, fmt, ap);
    va_end(ap);
}

/* A server's error line, fit for a message: printable ASCII only, at most
   120 characters, trailing blanks trimmed, and the node's password
   replaced by "***" wherever it appears (no server echoes it; this makes
   sure). */
static void clean_text(const redlock_node *t, const char *s, size_t n, char *out, size_t cap)
{
    size_t i, o = 0, pl = t->password ? strlen(t->password) : 0;
    /* matched on the whole text, then cut: no password prefix at the cut */
    for (i = 0; i < n && o < 120 && o + 4 < cap; i++) {
        if (pl && i + pl <= n && memcmp(s + i, t->password, pl) == 0) {
            memcpy(out + o, "***", 3);
            o += 3;
            i += pl - 1;
        } else {
            out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
        }
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
}

/* The words for a failure that has them (the server's for a refused AUTH
   or SELECT and an error reply; the adapter's for a connect that failed:
   "connection refused", "no such socket", "name does not resolve (...)"),
   from the adapter's node status while they are fresh: inside the event
   or callback that reports the failure (a later reconnect replaces them). */
static void take_words(app *a, int node, int status)
{
    char text[160];
    int st;
    if (!a->s_up || (status != REDLOCK_ERR_AUTH && status != REDLOCK_ERR_SELECT && status != REDLOCK_ERR_SERVER &&
                     status != REDLOCK_ERR_CONNECT))
        return;
    st = redlock_socket_node_status(&a->s, node, text, sizeof text);
    if (st && strcmp(text, redlock_strerror(st)) == 0) text[0] = 0; /* no words: the status's description only */
    clean_text(&a->o->net.node[node], text, strlen(text), a->words[node], sizeof a->words[node]);
}

static int has_text(const char *s, const char *what)
{
    return strstr(s, what) != NULL;
}

static int tls_node(const app *a, int i)
{
    return a->o->net.node[i].tls.enable || a->o->net.tls.enable;
}

/* The kind of a connect failure, from the library's words for it
   (redlock_socket_node_status(), redlock_socket_probe()). */
static int connect_kind(const char *words)
{
    if (strncmp(words, "name does not resolve", 21) == 0) return WHY_RESOLVE;
    if (strcmp(words, "connection refused") == 0 || strcmp(words, "no such socket") == 0) return WHY_REFUSED;
    if (strncmp(words, "connect timed out", 17) == 0) return WHY_TIMEOUT;
    return WHY_CONNECT;
}

/* For a message only: what node i's port speaks and why it cannot be
   reached, asked by the library on connections of its own
   (redlock_socket_probe(): a plain-text PING, and a TLS hello to a plain
   node's port that closes it without a word), within a->probe_until.
   Never touches a key. */
static int probe(app *a, int i, redlock_socket_probe_result *p)
{
    int64_t left = a->probe_until - redlock_socket_now_us();
    return redlock_socket_probe(&a->o->net.node[i], tls_node(a, i), left > 0 ? (left + 999) / 1000 : 0, p);
}

/* What to change for a TLS failure, from OpenSSL's words. */
static const char *tls_hint(const char *text)
{
    if (has_text(text, "hostname mismatch") || has_text(text, "IP address mismatch"))
        return " (the certificate is for another name: --tls-server-name NAME)";
    if (has_text(text, "certificate refused") &&
        (has_text(text, "issuer") || has_text(text, "self-signed") || has_text(text, "self signed") ||
         has_text(text, "unable to verify") || has_text(text, "chain")))
        return " (trust the CA that signed it: --tls-ca FILE)";
    if (has_text(text, "certificate required") || has_text(text, "alert handshake failure"))
        return " (the server asks for a client certificate: --tls-cert FILE --tls-key FILE)";
    if (has_text(text, "wrong version number") || has_text(text, "packet length too long") ||
        has_text(text, "record layer failure"))
        return " (is this port TLS? a plain-text port is a redis:// node)";
    return "";
}

/* The probes' budget: one connect timeout from the first probe of a
   message (or of a failed attempt's check). */
static void probe_budget(app *a)
{
    if (a->probe_until < redlock_socket_now_us())
        a->probe_until = redlock_socket_now_us() + TOOL_CONNECT_TIMEOUT_MS * 1000;
}

/* Does node i's port speak the other protocol than the one asked of it:
   TLS asked of a plain-text port (which answers a handshake with
   silence) or plain text sent to a TLS port (which resets it)? To the
   adapter both look like a network failing (adapters/redlock_tls.h); a
   probe of the port tells, once a run, for a failure that looks so (st:
   a TLS node that timed out or could not connect, a plain node whose
   connection was lost). Only the port's own answer counts: RESP to a
   plain-text PING, a TLS record to a hello. */
static int port_mismatch(app *a, int i, int st)
{
    redlock_socket_probe_result p;
    if (a->mismatch[i]) return a->mismatch[i] > 0;
    if (tls_node(a, i) ? st != REDLOCK_ERR_NODE_TIMEOUT && st != REDLOCK_ERR_CONNECT : st != REDLOCK_ERR_TRANSPORT)
        return 0;
    probe_budget(a);
    a->mismatch[i] = probe(a, i, &p) == REDLOCK_OK && p.other ? 1 : -1;
    return a->mismatch[i] > 0;
}

#define WORDS_PLAIN_PORT "the port answers in plain text, not TLS: is this port TLS? (a plain-text port is a " \
                         "redis:// node: no rediss://, no --tls)"
#define WORDS_TLS_PORT "the port speaks TLS, not plain text: is this port TLS? (then rediss:// or --tls)"

/* Node i's lost connection: a TLS port spoken to in plain text, or,
   asked again, a refusal or a name that no longer resolves. */
static void why_transport(app *a, int i, nfail *f)
{
    set_why(f, WHY_CONNECT, "connection lost (closed or reset)");
    if (port_mismatch(a, i, f->status)) {
        set_why(f, WHY_TLS, "connection lost: " WORDS_TLS_PORT);
    } else if (!tls_node(a, i)) { /* gone since? a refusal, a name that no longer resolves */
        redlock_socket_probe_result p;
        int rc = probe(a, i, &p);
#ifndef REDLOCK_SOCKET_TLS /* no TLS to ask the port in: its silence is the hint */
        if (rc == REDLOCK_OK && p.silent)
            set_why(f, WHY_TLS, "connection lost: the node closes the connection without an answer: is this port "
                                "TLS? (then rediss:// or --tls, in a build with TLS)");
        else
#endif
        if (rc == REDLOCK_ERR_CONNECT && (connect_kind(p.words) == WHY_RESOLVE || connect_kind(p.words) == WHY_REFUSED))
            set_why(f, connect_kind(p.words), "%s", p.words);
    }
}

/* Node i's failed connect: a handshake a plain-text port leaves
   unanswered, the adapter's TLS words, a connect timeout, or the
   adapter's words for the failure. */
static void why_connect(app *a, int i, nfail *f)
{
    char b[24];
    if (tls_node(a, i) && port_mismatch(a, i, f->status)) {
        set_why(f, WHY_TLS, "TLS handshake unanswered: " WORDS_PLAIN_PORT);
        return;
    }
    if (tls_node(a, i) && a->s_up) { /* the adapter's words: "TLS handshake: no answer ..." */
        char text[160];
        redlock_socket_node_status(&a->s, i, text, sizeof text);
        if (has_text(text, "TLS handshake")) {
            set_why(f, WHY_TIMEOUT, "%s", text);
            return;
        }
    }
    if (f->conn_timeout) {
        set_why(f, WHY_TIMEOUT, "connect timed out after %s", dur(b, sizeof b, TOOL_CONNECT_TIMEOUT_MS * 1000));
        return;
    }
    if (a->words[i][0]) set_why(f, connect_kind(a->words[i]), "%s", a->words[i]); /* the adapter's */
    else set_why(f, WHY_CONNECT, "cannot connect");
}

/* How long after a node may have lost keys its grants count again
   (redlock.h section 4, Restarts): the lock's ttl, or --max-ttl if
   longer (the core adds its clock drift allowance to it). */
static int64_t restart_bound_ms(const app *a)
{
    return a->o->max_ttl_ms > a->o->ttl_ms ? a->o->max_ttl_ms : a->o->ttl_ms;
}

/* A node that may have lost keys `ago` us ago (why: redlock_restart), in
   words: what happened, how long ago, and when its grants count again,
   e.g. "restarted 200ms ago (a new run_id: another server process) and
   may have lost keys then: its grants count 3.000s (the lock's ttl)
   after that, in about 2.800s". refused: for a grant that did not count
   (which may have been just before the bound passed). */
static void restart_words(const app *a, int why, int64_t ago, int refused, char *out, size_t cap)
{
    char b1[24], b2[24], b3[24];
    /* the core's bound has its clock drift allowance too */
    int64_t bound = restart_bound_ms(a), left = (a->lock_up ? redlock_lock_restart_bound_us(&a->lock) : bound * 1000) - ago;
    size_t len;
    if (why == REDLOCK_RESTART_RUN_ID)
        snprintf(out, cap, "restarted %s ago (a new run_id: another server process)", dur(b1, sizeof b1, ago));
    else if (why == REDLOCK_RESTART_FAILOVER)
        snprintf(out, cap, "failed over to another server %s ago", dur(b1, sizeof b1, ago));
    else if (ago < 1000000) /* INFO's uptime counts whole seconds */
        snprintf(out, cap, "up less than 1s, without keeping keys across restarts (no appendonly with appendfsync always)");
    else
        snprintf(out, cap, "up %llds%s, without keeping keys across restarts (no appendonly with appendfsync always)",
                 (long long)(ago / 1000000), left > 0 ? " only" : "");
    len = strlen(out);
    if (left <= 0) {
        snprintf(out + len, cap - len, "%s", refused ? ": its grant did not count yet when it answered; they count now"
                                                     : ": long enough ago, its grants count");
        return;
    }
    snprintf(out + len, cap - len, " and may have lost keys then: its grants count %s (%s) after that, in about %s",
             dur(b2, sizeof b2, bound * 1000), a->o->max_ttl_ms > a->o->ttl_ms ? "--max-ttl" : "the lock's ttl",
             dur(b3, sizeof b3, left));
}

/* Node i's grant that did not count: when and why it may have lost keys,
   as the core knows it (redlock_node_restarted_at()). */
static void why_restarted(app *a, int i, nfail *f)
{
    redlock_restart why = REDLOCK_RESTART_NONE;
    int64_t at = a->s_up && redlock_socket_client(&a->s) ? redlock_node_restarted_at(redlock_socket_client(&a->s), i, &why)
                                                          : INT64_MIN;
    char words[200];
    if (at == INT64_MIN) {
        set_why(f, WHY_RESTARTED, "restarted recently and may have lost keys: its grants do not count yet");
        return;
    }
    restart_words(a, (int)why, redlock_socket_now_us() - at, 1, words, sizeof words);
    set_why(f, WHY_RESTARTED, "%s", words);
}

/* The words for node i's failure (probing it at most once), e.g.
   "authentication refused: WRONGPASS invalid username-password pair ...". */
static const char *why_node(app *a, int i)
{
    nfail *f = &a->nf[i];
    char b[24];
    if (f->why[0]) return f->why;
    probe_budget(a); /* one budget for all the nodes of a message */
    switch (f->status) {
    case REDLOCK_ERR_NODE_TIMEOUT: /* a TLS handshake with a plain-text port waits for nothing */
        if (port_mismatch(a, i, f->status)) set_why(f, WHY_TLS, "timed out: " WORDS_PLAIN_PORT);
        else set_why(f, WHY_TIMEOUT, "timed out (no answer within %s)", dur(b, sizeof b, a->words_timeout_ms * 1000));
        break;
    case REDLOCK_ERR_TRANSPORT: /* plain text to a TLS port: reset without a word */
        why_transport(a, i, f);
        break;
    case REDLOCK_ERR_PROTOCOL: set_why(f, WHY_PROTOCOL, "protocol error: the answer is not Redis (RESP)"); break;
    case REDLOCK_ERR_CONNECT: why_connect(a, i, f); break;
    case REDLOCK_ERR_TLS: { /* the adapter's words: what OpenSSL said */
        char text[160];
        if (a->s_up) redlock_socket_node_status(&a->s, i, text, sizeof text);
        else snprintf(text, sizeof text, "%s", redlock_strerror(f->status));
        set_why(f, WHY_TLS, "%s%s", text, tls_hint(text));
        break;
    }
    case REDLOCK_ERR_AUTH: /* the server's words, if it said any */
        if (strncmp(a->words[i], "NOAUTH", 6) == 0) set_why(f, WHY_AUTH, "a password is required: %s", a->words[i]);
        else set_why(f, WHY_AUTH, "authentication refused%s%s", a->words[i][0] ? ": " : "", a->words[i]);
        break;
    case REDLOCK_ERR_SELECT:
        if (a->words[i][0]) set_why(f, WHY_SELECT, "SELECT %d refused: %s", a->o->net.node[i].db, a->words[i]);
        else set_why(f, WHY_SELECT, "SELECT refused");
        break;
    case REDLOCK_ERR_NOPERM: /* which of the two keys, the server does not say */
        if (a->o->fence)
            set_why(f, WHY_ACL, "the ACL denies this user the key '%.60s' or its fence counter '%s%.60s'",
                    a->o->name, REDLOCK_FENCE_PREFIX, a->o->name);
        else
            set_why(f, WHY_ACL, "the ACL denies this user the key '%.60s'", a->o->name);
        break;
    case REDLOCK_ERR_NO_SCRIPTING: /* the configuration's: an ACL without scripting, or no EVAL */
        set_why(f, WHY_SCRIPTS, "refuses scripts (EVAL, EVALSHA), which %s needs (an ACL without +@scripting?)",
                a->o->access ? "a readers-writer lock (-s, -x)" : a->o->reentrant ? "a reentrant lock (--reentrant)"
                : a->o->fence ? "a fenced lock (--fence)" : "this lock");
        break;
    case REDLOCK_ERR_SERVER:
        if (f->reply[0]) { /* an ACL's refusal is the configuration's */
            set_why(f, strncmp(f->reply, "NOPERM", 6) == 0 ? WHY_ACL : WHY_REPLY, "error reply: %s", f->reply);
            break;
        }
        set_why(f, strncmp(a->words[i], "NOPERM", 6) == 0 ? WHY_ACL : WHY_REPLY, "error reply to the lock command%s%s",
                a->words[i][0] ? ": " : "", a->words[i]);
        break;
    case REDLOCK_ERR_EVICTING: {
        char policy[24];
        if (!a->s_up || redlock_socket_node_policy(&a->s, i, policy, sizeof policy) < 0 || !policy[0])
            snprintf(policy, sizeof policy, "?");
        set_why(f, WHY_EVICTING, "may evict keys (maxmemory-policy %s): not counted for this lock%s", policy,
                a->o->refuse_evicting > 0 ? "" : " (--evicting count to count it)");
        break;
    }
    case REDLOCK_ERR_RESTARTED: why_restarted(a, i, f); break;
    case REDLOCK_ERR_REPLICAS:
        set_why(f, WHY_REPLICAS, "fewer than %d replica%s acknowledged the write within %lldms (WAIT), or WAIT was "
                "refused: not counted (--wait-replicas)", a->o->wait_replicas, a->o->wait_replicas == 1 ? "" : "s",
                (long long)(a->o->wait_replicas_ms ? a->o->wait_replicas_ms : a->o->node_timeout_ms));
        break;
    default: set_why(f, WHY_OTHER, "%s", redlock_strerror(f->status)); break;
    }
    return f->why;
}

/* Exit code for a set of failed nodes: 75 if the nodes that restarted
   recently (their grants count later) are what leaves too few, else 78
   if one refuses the configuration (AUTH, a password required, SELECT,
   TLS, an ACL that denies a key or a command, no scripting for a lock
   that needs it) or is refused for it (a node that may evict keys), else
   76 for protocol errors and error replies, else 69. */
static int code_for(app *a, const int *failed)
{
    int i, conf = 0, proto = 0, restarted = 0, others = 0;
    for (i = 0; i < a->n; i++) {
        if (!failed[i]) continue;
        why_node(a, i);
        if (a->nf[i].kind == WHY_AUTH || a->nf[i].kind == WHY_SELECT || a->nf[i].kind == WHY_TLS || a->nf[i].kind == WHY_ACL ||
            a->nf[i].kind == WHY_SCRIPTS || a->nf[i].kind == WHY_EVICTING)
            conf = 1;
        if (a->nf[i].kind == WHY_PROTOCOL || a->nf[i].kind == WHY_REPLY) proto = 1;
        if (a->nf[i].kind == WHY_RESTARTED) restarted++;
        else others++;
    }
    if (restarted && a->n - others >= a->quorum) return TOOL_EXIT_BUSY;
    return conf ? TOOL_EXIT_AUTH : proto ? TOOL_EXIT_PROTOCOL : TOOL_EXIT_UNREACHABLE;
}

/* "WHAT: 2 of 3 nodes failed, a quorum needs 2", then "node X: why" per
   failed node. Returns the exit code. */
static int report_failed(app *a, const int *failed, const char *what)
{
    int i, nf = 0, code = code_for(a, failed);
    for (i = 0; i < a->n; i++) nf += failed[i] != 0;
    ERR("%s: %d of %d nodes failed, a quorum needs %d", what, nf, a->n, a->quorum);
    for (i = 0; i < a->n; i++)
        if (failed[i]) ERR("node %s: %s", a->o->shown[i], why_node(a, i));
    return code;
}

/* The JSON log's node_degraded / node_recovered: the node as shown
   (password ***), the nodes holding the lock now, and why. */
static void log_node(app *a, const char *event, int i, int holding, int status, const char *why)
{
    log_begin(event);
    log_str("node", a->o->shown[i]);
    log_int("holding", holding);
    log_int("node_count", a->n);
    if (status) log_str("status", status_word(status));
    if (why) log_str("reason", why);
    log_end();
}

/* Degraded but working: one line, e.g.
   "warning: 'job' held on 2 of 3 nodes; node 10.0.0.3:6379: connection refused" */
static void warn_degraded(app *a, const char *what, int on, const int *failed)
{
    char line[1024];
    size_t len;
    int i;
    if (g_json) {
        for (i = 0; i < a->n; i++)
            if (failed[i]) log_node(a, "node_degraded", i, on, a->nf[i].status, why_node(a, i));
        return;
    }
    if (g_verbose < 0) return; /* -q: no probes either */
    len = (size_t)snprintf(line, sizeof line, "warning: %s on %d of %d nodes", what, on, a->n);
    for (i = 0; i < a->n && len < sizeof line; i++)
        if (failed[i])
            len += (size_t)snprintf(line + len, sizeof line - len, "; node %s: %s", a->o->shown[i], why_node(a, i));
    ERR("%s", line);
}

/* A node that may evict keys (redlock.h section 4, Eviction), once per
   node: "warning: node 10.0.0.3:6379 may evict any key (maxmemory-policy
   allkeys-lru): a lock there can vanish before its TTL, and so can fence
   counters; ...". lock: what it means for the lock of run / acquire (1
   refused, 0 counted), -1 none (inspect). */
static void warn_evicting(app *a, int i, int evicts, const char *policy, int lock)
{
    if (g_verbose < 0 || i < 0 || i >= a->n || evicts <= REDLOCK_EVICTS_NONE || a->evict_warned[i]) return;
    a->evict_warned[i] = 1;
    ERR("warning: node %s may evict %s (maxmemory-policy %s): a lock there can vanish before its TTL%s%s", a->o->shown[i],
        evicts == REDLOCK_EVICTS_ALL ? "any key" : "keys with a TTL", policy[0] ? policy : "?",
        evicts == REDLOCK_EVICTS_ALL ? ", and so can fence counters" : "",
        lock > 0 ? "; not counted for this lock" : lock == 0 ? "; counted for this lock (--evicting refuse: not)" : "");
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
        a->ext = *r;
        a->ext_done = 1;
        if (r->status == REDLOCK_OK && a->vote_op != REDLOCK_OP_EXTEND)
            INFO("extended: valid for %s", dur(b1, sizeof b1, r->validity_us));
        break;
    default: break;
    }
}

/* After a failed attempt: can the nodes ever give a quorum? Not if too
   many refuse connections, authentication, SELECT or the protocol: then
   stop waiting at once (the wait is for the lock, not for the nodes).
   Returns 0, or 1 when the attempt's failed nodes leave too few for a
   quorum. */
/* After a failed attempt (its nodes' statuses in a->retry_status, taken
   in the core's callback, probed here outside it): do the nodes that
   failed for good, with those whose port speaks the other protocol
   (port_mismatch: TLS asked of a plain-text port, plain text of a TLS
   one), leave too few for a quorum? Probes only when that can decide. */
static int attempt_mismatched(app *a)
{
    int i, bad = 0, suspect = 0;
    for (i = 0; i < a->n; i++) {
        int st = a->retry_status[i];
        if (st && hard_error(st)) bad++;
        else if (st && a->mismatch[i] >= 0) suspect++;
    }
    if (a->n - bad - suspect >= a->quorum) return 0;
    for (i = 0; i < a->n; i++)
        if (a->retry_status[i] && !hard_error(a->retry_status[i]) && port_mismatch(a, i, a->retry_status[i])) bad++;
    return a->n - bad < a->quorum;
}

/* Do the nodes that failed this attempt leave too few for a quorum?
   (include_transient: counting those a retry may cure; a node that
   restarted recently is not one of them: its grants count later.) */
static int attempt_hopeless(const app *a, int include_transient)
{
    int i, bad = 0;
    for (i = 0; i < a->n; i++)
        if (a->voted[i] && a->nf[i].status && a->nf[i].status != REDLOCK_ERR_RESTARTED &&
            (include_transient || hard_error(a->nf[i].status)))
            bad++;
    return a->n - bad < a->quorum;
}

/* The acquire round is complete (every node answered, or one node
   timeout after the quorum): the verbose summary, and the one warning
   line when the lock is held without some nodes. */
static void acquire_summary(app *a)
{
    int i, failed[REDLOCK_MAX_NODES], nfailed = 0, hold = 0;
    char b1[24], b2[24], late[32] = "";
    a->summary_done = 1;
    for (i = 0; i < a->n; i++) {
        if (!a->voted[i]) a->nf[i].status = REDLOCK_ERR_NODE_TIMEOUT;
        failed[i] = a->nf[i].status != 0;
        nfailed += failed[i];
        hold += a->vote_yes[i];
        a->hold[i] = a->vote_yes[i] ? HOLD_YES : failed[i] ? HOLD_FAIL : a->vote_other[i] ? HOLD_OTHER : HOLD_NOT;
    }
    if (a->late) snprintf(late, sizeof late, ", %d of them late", a->late);
    if (g_json) {
        log_begin("acquired");
        log_int("votes", hold);
        log_int("quorum", a->quorum);
        log_int("node_count", a->n);
        log_ms("latency_ms", a->acq_ev.elapsed_us);
        log_int("validity_ms", a->acq_ev.validity_us / 1000);
        log_int("attempts", a->acq_ev.attempt);
        if (a->o->fence) log_int("fence", redlock_lock_fence(&a->lock));
        log_end();
    }
    if (!g_json) INFO("acquired '%s': quorum %d/%d reached in %s; %d/%d nodes hold it%s; valid for %s", a->o->name, a->quorum, a->n,
         dur(b1, sizeof b1, a->acq_ev.elapsed_us), hold, a->n, late, dur(b2, sizeof b2, a->acq_ev.validity_us));
    if (nfailed) {
        char what[64];
        snprintf(what, sizeof what, "'%.40s' held", a->o->name);
        warn_degraded(a, what, hold, failed);
    }
}

/* When acquire_summary() is due (monotonic us): every node voted, or one
   node timeout after the quorum. REDLOCK_NO_DEADLINE: not yet acquired,
   or done. */
static int64_t summary_at(const app *a)
{
    int i, all = 1;
    if (!a->acquired || a->summary_done) return REDLOCK_NO_DEADLINE;
    for (i = 0; i < a->n; i++) all &= a->voted[i];
    return all ? a->acquired_at : a->acquired_at + (a->o->node_timeout_ms + 50) * 1000;
}

/* Probes while the lock is held must not eat into its validity. */
static void summary_now(app *a)
{
    int64_t budget = a->o->ttl_ms / 10 < TOOL_CONNECT_TIMEOUT_MS ? a->o->ttl_ms / 10 : TOOL_CONNECT_TIMEOUT_MS;
    a->probe_until = redlock_socket_now_us() + budget * 1000;
    acquire_summary(a);
}

/* A renewal round was decided (a quorum renewed it, or could not): a node
   that has not answered since the round started is waited for until the
   adapter would drop it; then it counts as failed (hold_changes()). */
static void renewal_decided(app *a, const redlock_event *ev, int64_t now)
{
    int64_t started = now - ev->elapsed_us;
    int i;
    if (a->vote_op != REDLOCK_OP_ACQUIRE) return;
    for (i = 0; i < a->n; i++)
        if (a->answered_at[i] < started && !a->await_until[i]) a->await_until[i] = started + a->cmd_timeout_ms * 1000;
}

/* run: a node that stops holding the lock, or holds it again, is reported
   once per change (not only with -v), e.g.
   "warning: 'job' held on 2 of 3 nodes; node 10.0.0.3:6379: timed out (no answer within 200ms)"
   "'job' held on 3 of 3 nodes; node 10.0.0.3:6379 holds it again".
   From the acquire's summary on, while the lock is held. */
static void hold_changes(app *a)
{
    int64_t now = redlock_socket_now_us();
    int i;
    for (i = 0; i < a->n; i++)
        if (a->await_until[i] && now >= a->await_until[i]) {
            a->await_until[i] = 0;
            a->hold_now[i] = HOLD_FAIL;
            a->hold_status[i] = REDLOCK_ERR_NODE_TIMEOUT;
        }
    if (!a->summary_done || a->lost || (g_verbose < 0 && !g_json)) return;
    for (i = 0; i < a->n; i++) {
        int was = a->hold[i], is = a->hold_now[i], j, held = 0;
        const char *why;
        if (is == HOLD_UNKNOWN || is == was || (is == HOLD_OTHER && was == HOLD_NOT) || (is == HOLD_NOT && was == HOLD_OTHER))
            continue;
        a->hold[i] = is;
        for (j = 0; j < a->n; j++) held += a->hold[j] == HOLD_YES;
        if (is == HOLD_YES && g_json) {
            log_node(a, "node_recovered", i, held, 0, NULL);
            continue;
        }
        if (is == HOLD_YES) {
            ERR("'%s' held on %d of %d nodes; node %s holds it again", a->o->name, held, a->n, a->o->shown[i]);
            continue;
        }
        if (is == HOLD_FAIL) {
            int64_t budget = a->o->ttl_ms / 10 < TOOL_CONNECT_TIMEOUT_MS ? a->o->ttl_ms / 10 : TOOL_CONNECT_TIMEOUT_MS;
            memset(&a->nf[i], 0, sizeof a->nf[i]);
            a->nf[i].status = a->hold_status[i];
            a->nf[i].conn_timeout = connect_timed_out(a, i, a->hold_status[i]);
            a->probe_until = now + budget * 1000; /* probes must not eat into the validity */
        }
        why = is == HOLD_FAIL ? why_node(a, i) : is == HOLD_OTHER ? "answers, but holds another token"
                                              : "answers, but no longer holds it (its key expired or was deleted there)";
        if (g_json) log_node(a, "node_degraded", i, held, is == HOLD_FAIL ? a->hold_status[i] : 0, why);
        else ERR("warning: '%s' held on %d of %d nodes; node %s: %s", a->o->name, held, a->n, a->o->shown[i], why);
    }
}

/* When hold_changes() is due for a node that has not answered (monotonic
   us), or REDLOCK_NO_DEADLINE. */
static int64_t hold_due(const app *a)
{
    int64_t t = REDLOCK_NO_DEADLINE;
    int i;
    for (i = 0; i < a->n; i++)
        if (a->await_until[i] && a->await_until[i] < t) t = a->await_until[i];
    return t;
}

static void on_event(void *user, const redlock_event *ev)
{
    app *a = (app *)user;
    char b1[24];
    int64_t now = redlock_socket_now_us();
    switch (ev->type) {
    case REDLOCK_EV_ATTEMPT:
        memset(a->voted, 0, sizeof a->voted);
        memset(a->vote_yes, 0, sizeof a->vote_yes);
        memset(a->nf, 0, sizeof a->nf);
        if (ev->attempt > 1) INFO("attempt %d", ev->attempt);
        break;
    case REDLOCK_EV_VOTE:
        if (ev->node < 0 || ev->node >= a->n) break;
        if (ev->op == a->vote_op && !a->voted[ev->node]) {
            a->voted[ev->node] = 1;
            a->vote_yes[ev->node] = ev->vote;
            a->vote_other[ev->node] = ev->held_by_other;
            a->nf[ev->node].status = ev->status;
            a->nf[ev->node].conn_timeout = connect_timed_out(a, ev->node, ev->status);
            take_words(a, ev->node, ev->status);
            if (a->acquired && ev->vote) a->late++;
        } else if (a->vote_op == REDLOCK_OP_EXTEND && ev->op == REDLOCK_OP_LOST && !a->voted[ev->node] &&
                   !a->after[ev->node]) {
            a->after[ev->node] = 1;
            a->after_status[ev->node] = ev->status;
        }
        if (ev->op == REDLOCK_OP_EXTEND && a->vote_op == REDLOCK_OP_ACQUIRE) { /* a renewal of run's lock */
            a->hold_now[ev->node] = ev->vote ? HOLD_YES : ev->status ? HOLD_FAIL : ev->held_by_other ? HOLD_OTHER : HOLD_NOT;
            a->hold_status[ev->node] = ev->status;
            if (ev->status) take_words(a, ev->node, ev->status);
            a->answered_at[ev->node] = now;
            a->await_until[ev->node] = 0;
        }
        if (ev->status) INFO("node %s: %s", a->o->shown[ev->node], node_reason(ev->status));
        break;
    case REDLOCK_EV_ACQUIRED:
        a->acquired = 1;
        a->acquired_at = now;
        a->acq_ev = *ev;
        break;
    case REDLOCK_EV_RETRY: {
        int i;
        if (!a->fail_fast) a->fail_fast = attempt_hopeless(a, 0);
        for (i = 0; i < a->n; i++) a->retry_status[i] = a->voted[i] ? a->nf[i].status : 0;
        a->retry_pending = 1; /* acquire_lock() looks for ports of the other protocol */
        if (!a->fail_fast)
            INFO("'%s' not acquired (%s, %d/%d votes); retrying in %s", a->o->name, redlock_strerror(ev->status),
                 ev->votes, a->n, dur(b1, sizeof b1, ev->delay_us));
        break;
    }
    case REDLOCK_EV_RENEWED:
        if (g_json && a->vote_op != REDLOCK_OP_EXTEND) {
            log_begin("renewed");
            log_int("votes", ev->votes);
            log_ms("latency_ms", ev->elapsed_us);
            log_int("validity_ms", ev->validity_us / 1000);
            log_end();
        } else if (a->vote_op != REDLOCK_OP_EXTEND) INFO("renewed '%s': valid for %s", a->o->name, dur(b1, sizeof b1, ev->validity_us));
        renewal_decided(a, ev, now);
        break;
    case REDLOCK_EV_RENEW_FAILED:
        renewal_decided(a, ev, now);
        if (g_json) {
            log_begin("renew_failed");
            log_str("reason", status_word(ev->status));
            log_int("votes", ev->votes);
            log_int("slack_ms", ev->slack_us / 1000);
            log_end();
        } else INFO("renewal of '%s' failed (%s); %s of validity left", a->o->name, redlock_strerror(ev->status),
             dur(b1, sizeof b1, ev->slack_us));
        break;
    case REDLOCK_EV_MODE_SWITCH:
        if (ev->node >= 0 && ev->node < a->n)
            INFO("node %s: %s", a->o->shown[ev->node],
                 ev->mode == REDLOCK_MODE_LEGACY ? "no SET NX PX, using SETNX/GETSET" : "scripts refused, using GET + compare");
        break;
    case REDLOCK_EV_RELEASED:
        if (a->vote_op != REDLOCK_OP_RELEASE && !g_json) INFO("released '%s': quorum %d/%d confirmed", a->o->name, a->quorum, a->n);
        break;
    case REDLOCK_EV_NODE_RESTARTED: /* the node's INFO and CONFIG, on a new connection */
        if (ev->node >= 0 && ev->node < a->n && g_verbose > 0) {
            char words[200];
            restart_words(a, ev->mode, ev->elapsed_us, 0, words, sizeof words);
            INFO("node %s: %s", a->o->shown[ev->node], words);
        }
        break;
    case REDLOCK_EV_NODE_EVICTS: { /* the node's INFO, on a new connection */
        char policy[24];
        redlock_socket_node_policy(&a->s, ev->node, policy, sizeof policy);
        warn_evicting(a, ev->node, ev->mode, policy,
                      a->o->cmd != TOOL_CMD_RUN && a->o->cmd != TOOL_CMD_ACQUIRE ? -1
                      : a->o->refuse_evicting > 0 || (a->o->refuse_evicting == 0 && a->o->fence));
        break;
    }
    default: break;
    }
}

/* ---- raw mode (inspect: GET and PTTL on every node) ---- */

static void rn_done(app *a, int node, int outcome, int status)
{
    rnode *x = &a->rn[node];
    if (x->done) return;
    x->done = 1;
    x->outcome = outcome;
    x->status = status;
    if (outcome == RN_ERR) a->nf[node].status = status;
}

static void rn_server_error(app *a, int node, const redlock_reply *r)
{
    if (a->rn[node].done) return;
    clean_text(&a->o->net.node[node], r->str ? r->str : "", r->str ? r->len : 0, a->nf[node].reply, sizeof a->nf[node].reply);
    rn_done(a, node, RN_ERR, REDLOCK_ERR_SERVER);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A token's label, for people: without the one ':' that ends the tool's
   own ("web1:4242:" reads "web1:4242"). */
static void label_of(const char *tok, size_t label_len, char *out, size_t cap)
{
    size_t n = label_len;
    if (n && tok[n - 1] == ':') n--;
    if (n >= cap) n = cap - 1;
    memcpy(out, tok, n);
    out[n] = 0;
}

/* A token for people: its first 8 hex digits, "" for none. */
static const char *short_id(const char *tok, size_t len, char out[9])
{
    out[0] = 0;
    if (len >= REDLOCK_TOKEN_LEN) {
        memcpy(out, tok + len - REDLOCK_TOKEN_LEN, 8);
        out[8] = 0;
    }
    return out;
}

/* A readers-writer lock's writer and update holder, for people: their
   short ids and labels ("" for none). */
static void rw_holders(const redlock_value *v, char w[9], char *wl, char u[9], char *ul)
{
    short_id(v->writer, v->writer_len, w);
    short_id(v->update, v->update_len, u);
    label_of(v->writer, v->writer_len > REDLOCK_TOKEN_LEN ? v->writer_len - REDLOCK_TOKEN_LEN : 0, wl, REDLOCK_MAX_LABEL + 1);
    label_of(v->update, v->update_len > REDLOCK_TOKEN_LEN ? v->update_len - REDLOCK_TOKEN_LEN : 0, ul, REDLOCK_MAX_LABEL + 1);
}

/* CMD NAME; T_FENCE: GET of NAME's fence counter; T_INFO: INFO (its
   default sections: memory for the eviction policy, server and
   persistence for the process); T_CONFIG: CONFIG GET appendfsync. */
static void raw_send(app *a, int node, int tag, const char *cmd)
{
    const char *argv[3];
    size_t len[3];
    char counter[sizeof REDLOCK_FENCE_PREFIX + REDLOCK_MAX_KEY];
    int rc, argc = 2;
    argv[0] = cmd;
    len[0] = strlen(cmd);
    argv[1] = a->o->name;
    len[1] = strlen(a->o->name);
    if (tag == T_INFO) argc = 1;
    if (tag == T_CONFIG) {
        argv[1] = "GET";
        argv[2] = "appendfsync";
        len[1] = 3;
        len[2] = 11;
        argc = 3;
    }
    if (tag == T_FENCE) {
        len[1] = (size_t)snprintf(counter, sizeof counter, "%s%s", REDLOCK_FENCE_PREFIX, a->o->name);
        argv[1] = counter;
    }
    rc = redlock_socket_send(&a->s, node, argc, argv, len, (redlock_tag)tag);
    if (rc != 0 && !a->rn[node].done) take_words(a, node, rc); /* a connect that failed at once: its words */
    if (rc != 0) rn_done(a, node, RN_ERR, rc);
}

static void on_raw_reply(void *user, int node, redlock_tag tag, const redlock_reply *r)
{
    app *a = (app *)user;
    rnode *x;
    if (node < 0 || node >= a->n) return;
    x = &a->rn[node];
    if (x->done) return;
    x->waiting--;
    if (tag == T_GET || tag == T_HGETALL) {
        /* a readers-writer entry's expiry is judged by this machine's
           clock: for showing only */
        int rc = tag == T_GET ? redlock_value_from_get(r, 0, &x->v) : redlock_value_from_hash(r, wall_ms(), &x->v);
        if (rc == REDLOCK_ERR_SERVER) {
            rn_server_error(a, node, r);
            return;
        }
        if (rc != REDLOCK_OK) {
            rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL);
            return;
        }
        if (tag == T_GET && r->type == REDLOCK_REPLY_STRING) { /* read again once PTTL has answered */
            if (r->len <= sizeof x->val) {
                if (r->len) memcpy(x->val, r->str, r->len);
                x->val_len = r->len;
            } else {
                x->val_long = 1;
            }
        } else if (x->v.kind == REDLOCK_VALUE_HASH) { /* a reentrant or readers-writer lock's hash? */
            x->waiting++;
            raw_send(a, node, T_HGETALL, "HGETALL");
            if (x->done) return;
        }
    } else if (tag == T_FENCE) {
        /* a number, or nothing to show (no counter, a refusal, another value) */
        x->fence = redlock_value_fence(r);
        x->have_fence = x->fence >= 0;
    } else if (tag == T_INFO) {
        /* the policy and the process, or unknown (INFO refused by an ACL, nothing named) */
        if (r->type == REDLOCK_REPLY_STRING) {
            x->evicts = redlock_info_evicts(r->str, r->len, x->policy, sizeof x->policy);
            x->life_known = redlock_info_life(r->str, r->len, &x->life) == 0;
            x->aof = x->life.aof;
        }
    } else if (tag == T_CONFIG) {
        /* ["appendfsync", value]; anything else (refused): not "always" */
        x->fsync_always = r->type == REDLOCK_REPLY_ARRAY && r->elements == 2 &&
                          r->element[1].type == REDLOCK_REPLY_STRING && r->element[1].len == 6 &&
                          memcmp(r->element[1].str, "always", 6) == 0;
    } else if (tag == T_PTTL) {
        if (r->type == REDLOCK_REPLY_ERROR) { rn_server_error(a, node, r); return; }
        if (r->type != REDLOCK_REPLY_INTEGER) { rn_done(a, node, RN_ERR, REDLOCK_ERR_PROTOCOL); return; }
        x->have_pttl = 1;
        x->pttl = r->integer;
    }
    if (x->waiting == 0) rn_done(a, node, RN_YES, 0);
}

static void on_raw_error(void *user, int node, redlock_tag tag, int status)
{
    app *a = (app *)user;
    (void)tag;
    if (node < 0 || node >= a->n) return;
    if (!a->rn[node].done) {
        a->nf[node].conn_timeout = connect_timed_out(a, node, status);
        take_words(a, node, status);
    }
    rn_done(a, node, RN_ERR, status ? status : REDLOCK_ERR_TRANSPORT);
}

/* ---- socket setup ---- */

static int open_socket(app *a, int raw)
{
    redlock_socket_config cfg;
    int i, rc;
    redlock_socket_config_init(&cfg);
    cfg.node_count = a->n;
    for (i = 0; i < a->n; i++) {
        cfg.node[i] = a->o->net.node[i]; /* parsed by redlock_parse_nodes() */
        a->last_fd[i] = -1;
    }
    cfg.tls = a->o->net.tls; /* --tls-*: every TLS node's defaults */
    cfg.connect_timeout_ms = TOOL_CONNECT_TIMEOUT_MS;
    cfg.command_timeout_ms = a->o->node_timeout_ms * 2 > 1000 ? a->o->node_timeout_ms * 2 : 1000;
    if (cfg.command_timeout_ms < 2 * (a->o->node_timeout_ms + a->o->wait_replicas_ms)) /* a WAIT is no late node */
        cfg.command_timeout_ms = 2 * (a->o->node_timeout_ms + a->o->wait_replicas_ms);
    a->words_timeout_ms = raw ? cfg.command_timeout_ms : a->o->node_timeout_ms;
    a->cmd_timeout_ms = cfg.command_timeout_ms;
    cfg.watch = on_watch;
    cfg.user = a;
    if (raw) {
        cfg.on_reply = on_raw_reply;
        cfg.on_error = on_raw_error;
    } else {
        cfg.on_event = on_event;
        cfg.core.node_timeout_ms = a->o->node_timeout_ms;
        cfg.core.max_ttl_ms = a->o->max_ttl_ms;
        cfg.core.wait_replicas = a->o->wait_replicas;
        cfg.core.wait_timeout_ms = a->o->wait_replicas_ms;
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
    if (rc == REDLOCK_ERR_NO_TLS) {
        ERR("this build has no TLS: rediss:// and --tls need redlock built with REDLOCK_SOCKET_TLS and OpenSSL "
            "(make build/redlock)");
        return TOOL_EXIT_AUTH;
    }
    if (rc == REDLOCK_ERR_TLS) {
        ERR("cannot load the TLS files: a CA (--tls-ca), certificate (--tls-cert) or key (--tls-key) "
            "is not valid PEM, or the key does not match the certificate");
        return TOOL_EXIT_AUTH;
    }
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
   which is already past). A node whose port speaks the other protocol
   (port_mismatch()) will answer nothing: its commands are not waited for. */
static int owed(const app *a)
{
    int i, n = 0;
    for (i = 0; i < a->n; i++)
        if (a->mismatch[i] <= 0) n += redlock_socket_node_pending(&a->s, i);
    return n;
}

static void linger(app *a)
{
    int64_t until = redlock_socket_now_us() + (a->o->node_timeout_ms + 50) * 1000;
    while (redlock_socket_now_us() < until) {
        if (!(a->lock_up && redlock_lock_pending(&a->lock)) && owed(a) == 0) break;
        step(a, until);
    }
}

/* Releases (or cancels) the lock and waits for the nodes, bounded. */
static void release_and_wait(app *a, int warn)
{
    int64_t until = redlock_socket_now_us() + (a->o->node_timeout_ms + 2000) * 1000;
    int rc;
    /* a command that ended at once: the acquire round's last votes (one
       node timeout at most) and its summary come first */
    while (summary_at(a) != REDLOCK_NO_DEADLINE && redlock_socket_now_us() < summary_at(a)) step(a, summary_at(a));
    if (summary_at(a) != REDLOCK_NO_DEADLINE) summary_now(a);
    a->rel_done = 0;
    while ((rc = redlock_release(&a->lock)) == REDLOCK_ERR_BUSY && redlock_socket_now_us() < until)
        step(a, redlock_socket_now_us() + 10000); /* a renewal is running: let it finish */
    if (rc != REDLOCK_OK) return;
    while (!a->rel_done && redlock_socket_now_us() < until) step(a, until);
    linger(a);
    if (g_json && warn && a->rel_done && a->rel.status == REDLOCK_OK) {
        log_begin("released");
        log_int("votes", a->rel.votes);
        log_end();
    }
    if (warn && a->rel_done && a->rel.status != REDLOCK_OK && a->rel.status != REDLOCK_ERR_EXPIRED) {
        char b[24];
        ERR("warning: release of '%s' incomplete (%s); it expires within %s", a->o->name,
            redlock_strerror(a->rel.status), dur(b, sizeof b, a->o->ttl_ms * 1000));
    }
}

/* The tokens' label (redlock_lock_opts.label), which `inspect` shows:
   --label and ':', by default this host's name and redlock's pid,
   "web1:4242:"; none with --no-label. */
static void make_label(const tool_opts *o, char *out, size_t cap)
{
    char host[256];
    size_t i;
    out[0] = 0;
    if (o->no_label) return;
    if (o->label) {
        snprintf(out, cap, "%s:", o->label);
        return;
    }
    if (gethostname(host, sizeof host) != 0 || !host[0]) snprintf(host, sizeof host, "unknown-host");
    host[40] = 0; /* room for the pid */
    for (i = 0; host[i]; i++) /* printable, no space */
        if ((unsigned char)host[i] <= ' ' || (unsigned char)host[i] >= 127) host[i] = '_';
    snprintf(out, cap, "%.40s:%ld:", host, (long)getpid());
}

/* An acquire that failed because nodes that may have lost keys at a
   restart do not count yet (REDLOCK_ERR_RESTARTED): how many, then each
   failed node in words (which restarted, how long ago, when its grants
   count again), e.g.
   "'job' not acquired: 2 of 3 nodes restarted recently and may have lost
   keys, their grants do not count yet (a quorum needs 2)". */
static void restarted_refusal(app *a, const int *failed, int64_t start)
{
    char b1[24], gave[48] = "", other[48] = "";
    int i, n = 0, held = 0;
    for (i = 0; i < a->n; i++) {
        n += failed[i] && a->nf[i].status == REDLOCK_ERR_RESTARTED;
        held += a->voted[i] && !failed[i] && a->vote_other[i];
    }
    if (held) snprintf(other, sizeof other, "; %d held by another token", held);
    if (a->o->wait_ms > 0)
        snprintf(gave, sizeof gave, "; gave up after %s", dur(b1, sizeof b1, redlock_socket_now_us() - start));
    ERR("'%s' not acquired: %d of %d nodes restarted recently and may have lost keys, their grants do not count "
        "yet%s (a quorum needs %d)%s", a->o->name, n, a->n, other, a->quorum, gave);
    for (i = 0; i < a->n; i++)
        if (failed[i]) ERR("node %s: %s", a->o->shown[i], why_node(a, i));
}

static int not_acquired(app *a, int64_t start);

/* Returns 0 when held, else the exit code (messages printed). */
static int acquire_lock(app *a, int watchdog)
{
    redlock_lock_opts lo;
    char label[REDLOCK_MAX_LABEL + 1];
    int64_t start = redlock_socket_now_us(), safety;
    int rc, cancelled = 0;
    memset(&lo, 0, sizeof lo);
    lo.key = a->o->name;
    lo.ttl_ms = a->o->ttl_ms;
    lo.watchdog = watchdog;
    lo.on_result = on_result;
    lo.user = a;
    lo.reentrant = a->o->reentrant;
    lo.owner = a->o->owner;
    lo.fence = a->o->fence;
    lo.access = a->o->access;
    lo.refuse_evicting = a->o->refuse_evicting;
    make_label(a->o, label, sizeof label);
    lo.label = label;
    if (!redlock_cluster_lock_fits(&lo)) {
        int i;
        for (i = 0; i < a->n; i++)
            if (a->o->net.node[i].kind == REDLOCK_NODE_CLUSTER) {
                ERR("a fenced lock on a cluster node needs a {hash tag} in its NAME (e.g. '{%s}'): its fence counter "
                    "(%s + NAME) must live in the same slot",
                    a->o->name, REDLOCK_FENCE_PREFIX);
                return TOOL_EXIT_USAGE;
            }
    }
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
        if (a->retry_pending && !a->acq_done) { /* a failed attempt: a port of the other protocol? */
            a->retry_pending = 0;
            if (!a->fail_fast) a->fail_fast = attempt_mismatched(a);
        }
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
    g_capture = g_json;
    g_captured[0] = 0;
    rc = not_acquired(a, start);
    g_capture = 0;
    if (g_json) {
        int i, first = 1;
        log_begin("not_acquired");
        log_str("reason", g_captured);
        log_str("status", status_word(a->acq.status));
        log_int("attempts", a->acq.attempts);
        log_int("code", rc);
        fputs(",\"nodes\":[", stderr);
        for (i = 0; i < a->n; i++)
            if (a->voted[i] && a->nf[i].status) {
                fputs(first ? "{\"node\":" : ",{\"node\":", stderr);
                json_esc(stderr, a->o->shown[i], strlen(a->o->shown[i]), 1);
                fprintf(stderr, ",\"status\":\"%s\",\"reason\":", status_word(a->nf[i].status));
                json_esc(stderr, why_node(a, i), strlen(why_node(a, i)), 1);
                fputc('}', stderr);
                first = 0;
            }
        fputc(']', stderr);
        log_end();
    }
    return rc;
}

/* The acquire failed: the messages, and the exit code. */
static int not_acquired(app *a, int64_t start)
{
    char b1[24];
    {
        int st = a->acq.status, failed[REDLOCK_MAX_NODES], i;
        char what[80];
        for (i = 0; i < a->n; i++) failed[i] = a->voted[i] && a->nf[i].status;
        snprintf(what, sizeof what, "'%.40s' not acquired", a->o->name);
        if (a->fail_fast || st == REDLOCK_ERR_CONFIG || st == REDLOCK_ERR_TLS ||
            (st != REDLOCK_ERR_CANCELLED && attempt_hopeless(a, 1)))
            return report_failed(a, failed, what);
        for (i = 0; i < a->n; i++) /* the last attempt's: waiting longer cures them */
            if (failed[i] && a->nf[i].status == REDLOCK_ERR_RESTARTED &&
                (st == REDLOCK_ERR_RESTARTED || st == REDLOCK_ERR_LOCKED || st == REDLOCK_ERR_TIMEOUT ||
                 st == REDLOCK_ERR_NO_QUORUM)) {
                restarted_refusal(a, failed, start);
                return TOOL_EXIT_BUSY;
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
            /* nodes that failed on the way may be why there was no quorum */
            for (i = 0; i < a->n; i++)
                if (failed[i]) ERR("node %s: %s", a->o->shown[i], why_node(a, i));
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

/* How `run` keeps its promise that COMMAND never outlives the lock, even
   when redlock itself dies without warning (kill -9, the OOM killer):

   * COMMAND runs in a process group of its own, so that a lost lock
     (--on-lost term|kill), --kill-after and the signals redlock forwards
     reach everything COMMAND started that stayed in its group (a shell
     script's children too), as timeout(1) does. redlock itself stays in
     the caller's process group.
   * The group is led by a watcher: a small forked process that only waits
     on a pipe whose one writer is redlock. However redlock ends, the
     kernel closes that pipe; the watcher then reads EOF and SIGKILLs the
     whole group. When COMMAND exits normally, redlock writes one byte
     ("stand down") and the watcher exits without killing anything. A
     watcher that dies while COMMAND runs is replaced.
   * On Linux COMMAND also gets PR_SET_PDEATHSIG = SIGKILL, set before exec
     and followed by a getppid() check, so that a redlock that died before
     the prctl cannot leave COMMAND behind.
   * With --foreground, COMMAND stays in redlock's process group and may
     use the terminal (read it, get ^C and ^Z from it), as timeout(1)
     --foreground; then only COMMAND's own process is signalled, and only
     PR_SET_PDEATHSIG (Linux) stops it when redlock dies.
   Not covered: processes that leave the group (setsid, a daemon that
   detaches) and what COMMAND leaves behind after it exits normally (the
   lock is released when COMMAND exits; nothing waits for its group). */

static void child_signals_default(void)
{
    sigset_t none;
    int i;
    for (i = 0; i < N_HANDLED; i++) signal(g_handled[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTSTP, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Starts a watcher in process group `group`, or (0) as the leader of a new
   group, which becomes a->pgrp. Returns its pid, or -1. */
static pid_t start_watcher(app *a, pid_t group)
{
    int dp[2], i;
    pid_t w;
    if (pipe(dp) != 0) return -1;
    (void)fcntl(dp[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(dp[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    w = fork();
    if (w < 0) {
        close(dp[0]);
        close(dp[1]);
        return -1;
    }
    if (w == 0) {
        static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                       SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE };
        sigset_t none;
        pid_t g;
        char c;
        int nul;
        for (i = 0; i < (int)(sizeof ignored / sizeof ignored[0]); i++) signal(ignored[i], SIG_IGN);
        signal(SIGCHLD, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* only redlock may hold the write end, or EOF never comes */
        close(dp[1]);
        close(g_sig[0]);
        close(g_sig[1]);
        for (i = 0; i < redlock_socket_fd_count(&a->s); i++)
            if (redlock_socket_fd(&a->s, i) >= 0) close(redlock_socket_fd(&a->s, i));
        nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
            dup2(nul, 2);
            if (nul > 2) close(nul);
        }
        g = group ? group : getpid();
        /* never kill a group we are not sure is COMMAND's */
        if (setpgid(0, g) != 0 || getpgrp() != g) _exit(1);
        for (;;) {
            ssize_t r = read(dp[0], &c, 1);
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) kill(-g, SIGKILL); /* redlock is gone: so is COMMAND's group, this watcher too */
            _exit(0);
        }
    }
    close(dp[0]);
    (void)setpgid(w, group ? group : w); /* also here: no race with the fork of COMMAND */
    if (!group) a->pgrp = w;
    a->watcher = w;
    a->watch_fd = dp[1];
    return w;
}

/* COMMAND is done: the watcher stands down (or, with sweep, whatever is
   left in COMMAND's group is killed first) and is reaped, bounded. */
static void stop_watcher(app *a, int sweep)
{
    int i;
    if (a->watcher > 0 && sweep) kill(-a->pgrp, SIGKILL); /* the watcher, alive, keeps the group's id ours */
    if (a->watch_fd >= 0) {
        ssize_t w = write(a->watch_fd, "", 1);
        (void)w;
        close(a->watch_fd);
        a->watch_fd = -1;
    }
    for (i = 0; a->watcher > 0 && i < 400; i++) {
        pid_t w = waitpid(a->watcher, NULL, WNOHANG);
        if (w == a->watcher || (w < 0 && errno != EINTR)) {
            a->watcher = 0;
        } else {
            struct timespec ts = { 0, 5000000 };
            nanosleep(&ts, NULL);
        }
    }
    if (a->watcher > 0) {
        kill(a->watcher, SIGKILL);
        while (waitpid(a->watcher, NULL, 0) < 0 && errno == EINTR) {}
        a->watcher = 0;
    }
}

/* A watcher that died while COMMAND runs (someone killed it) is replaced. */
static void check_watcher(app *a)
{
    if (a->watcher <= 0 || waitpid(a->watcher, NULL, WNOHANG) != a->watcher) return;
    a->watcher = 0;
    close(a->watch_fd);
    a->watch_fd = -1;
    if (start_watcher(a, a->pgrp) > 0)
        ERR("warning: the watcher of the command's process group died; started another");
    else
        ERR("warning: the watcher of the command's process group died and cannot be replaced (%s):"
            " if redlock dies now, the command's children may outlive the lock", strerror(errno));
}

static void on_tstp(int install)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (install) {
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO;
    } else {
        sa.sa_handler = SIG_DFL;
    }
    sigaction(SIGTSTP, &sa, NULL);
}

/* Starts COMMAND (a->child). Returns 0, or the exit code after a message. */
/* COMMAND's environment from the lock: a reentrant run's scope and
   owner (a nested `redlock run` of this NAME on these nodes re-enters),
   a fenced run's fence. 0, or the exit status. */
static int child_environment(app *a)
{
    /* only such a run re-enters: the scope names the lock with the owner */
    if (a->o->reentrant) {
        const char *owner = redlock_lock_owner(&a->lock);
        char *scope = tool_owner_scope(a->o, owner); /* reads REDLOCK_OWNER: before it changes */
        int bad = !scope || setenv("REDLOCK_OWNER_SCOPE", scope, 1) != 0 || setenv("REDLOCK_OWNER", owner, 1) != 0;
        free(scope);
        if (bad) {
            ERR("cannot start '%s': %s", a->o->child_argv[0], strerror(errno));
            return TOOL_EXIT_INTERNAL;
        }
    }
    if (a->o->fence) { /* for COMMAND's writes to a storage that checks it */
        char f[24];
        snprintf(f, sizeof f, "%lld", (long long)redlock_lock_fence(&a->lock));
        if (setenv("REDLOCK_FENCE", f, 1) != 0) {
            ERR("cannot start '%s': %s", a->o->child_argv[0], strerror(errno));
            return TOOL_EXIT_INTERNAL;
        }
    }
    return 0;
}

/* In the child: joins the run's process group, dies with redlock, and
   becomes COMMAND; what failed goes up the pipe ep (cm: 0 exec, 1 setup;
   errno). Never returns. */
static void child_exec(app *a, int ep[2], pid_t parent)
{
    int cm[2] = { 0, 0 };
    ssize_t w;
    close(ep[0]);
    if (a->watch_fd >= 0) close(a->watch_fd);
    if (a->pgrp > 0 && setpgid(0, a->pgrp) != 0) {
        cm[0] = 1;
        cm[1] = errno;
    }
#ifdef __linux__
    /* dies with redlock; a redlock that died before this line is seen
       by getppid() below */
    if (!cm[1] && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        cm[0] = 1;
        cm[1] = errno;
    }
#endif
    if (getppid() != parent) _exit(TOOL_EXIT_INTERNAL); /* redlock is gone: never run unprotected */
    if (!cm[1]) {
        child_signals_default();
        execvp(a->o->child_argv[0], a->o->child_argv);
        cm[1] = errno;
    }
    w = write(ep[1], cm, sizeof cm);
    (void)w;
    _exit(cm[0] ? TOOL_EXIT_INTERNAL : cm[1] == ENOENT ? TOOL_EXIT_NOT_FOUND : TOOL_EXIT_CANNOT_EXEC);
}

static int start_command(app *a)
{
    int ep[2], cm[2] = { 0, 0 }, rc; /* what failed in the child: 0 exec, 1 setup; errno */
    pid_t pid, parent = getpid();
    a->pgrp = 0;
    if ((rc = child_environment(a)) != 0) return rc;
    if (!a->o->foreground && start_watcher(a, 0) < 0) {
        ERR("cannot start '%s': no watcher process: %s", a->o->child_argv[0], strerror(errno));
        return TOOL_EXIT_INTERNAL;
    }
    if (pipe(ep) != 0) {
        ERR("cannot start '%s': %s", a->o->child_argv[0], strerror(errno));
        stop_watcher(a, 0);
        return TOOL_EXIT_INTERNAL;
    }
    (void)fcntl(ep[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(ep[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    /* ^Z is ours from before COMMAND runs: one that came between its start
       and a later handler would stop redlock alone (or, with no terminal,
       be discarded), leaving COMMAND running */
    if (a->pgrp > 0) on_tstp(1);
    pid = fork();
    if (pid < 0) {
        ERR("cannot start '%s': %s", a->o->child_argv[0], strerror(errno));
        close(ep[0]);
        close(ep[1]);
        stop_watcher(a, 0);
        return TOOL_EXIT_INTERNAL;
    }
    if (pid == 0) child_exec(a, ep, parent);
    if (a->pgrp > 0) (void)setpgid(pid, a->pgrp);
    close(ep[1]);
    for (;;) {
        ssize_t r = read(ep[0], cm, sizeof cm);
        if (r < 0 && errno == EINTR) continue;
        if (r != (ssize_t)sizeof cm) cm[1] = 0;
        break;
    }
    close(ep[0]);
    if (cm[1]) {
        if (cm[0]) ERR("cannot start '%s' in its own process group: %s", a->o->child_argv[0], strerror(cm[1]));
        else ERR("cannot run '%s': %s", a->o->child_argv[0], strerror(cm[1]));
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        stop_watcher(a, 0);
        return cm[0] ? TOOL_EXIT_INTERNAL : cm[1] == ENOENT ? TOOL_EXIT_NOT_FOUND : TOOL_EXIT_CANNOT_EXEC;
    }
    a->child = pid;
    return 0;
}

/* The JSON log's lost: why, and what was done to COMMAND (--on-lost;
   none: it had ended) */
static void log_lost(app *a, const char *action)
{
    log_begin("lost");
    log_str("reason", status_word(a->lost_status));
    log_str("message", redlock_strerror(a->lost_status));
    log_str("action", action);
    log_end();
}

static int cmd_run(app *a)
{
    int rc, status = 0, reaped = 0, lost_seen = 0, hinted = 0;
    int64_t kill_at = REDLOCK_NO_DEADLINE, give_up_at = REDLOCK_NO_DEADLINE;
    pid_t pid;
    char b1[24];
    const char *whom;
    rc = acquire_lock(a, 1);
    if (rc) return rc;
    rc = start_command(a);
    if (rc) {
        release_and_wait(a, 1);
        return rc;
    }
    pid = a->child;
    whom = a->pgrp > 0 ? "the command's process group" : "the command";
    INFO("running '%s' (pid %ld%s) while holding '%s'", a->o->child_argv[0], (long)pid,
         a->pgrp > 0 ? ", in its own process group" : "", a->o->name);
    while (!reaped) {
        int64_t now, until = kill_at < give_up_at ? kill_at : give_up_at;
        pid_t w;
        if (summary_at(a) < until) until = summary_at(a);
        if (hold_due(a) < until) until = hold_due(a);
        step(a, until);
        if (summary_at(a) <= redlock_socket_now_us()) summary_now(a);
        hold_changes(a);
        w = waitpid(pid, &status, WNOHANG | WUNTRACED);
        if (w == pid && !WIFSTOPPED(status)) { reaped = 1; break; }
        if (w == pid && a->pgrp > 0 && !hinted && (WSTOPSIG(status) == SIGTTIN || WSTOPSIG(status) == SIGTTOU)) {
            hinted = 1;
            ERR("the command is stopped (%s): it used the terminal, but it runs in a process group of its own"
                " (use --foreground for a command that reads the terminal); the lock stays held", sig_name(WSTOPSIG(status)));
        }
        check_watcher(a);
        now = redlock_socket_now_us();
        if (a->stop_sent && kill_at == REDLOCK_NO_DEADLINE && give_up_at == REDLOCK_NO_DEADLINE)
            kill_at = a->stop_sent + a->o->kill_after_ms * 1000;
        if (a->lost && !lost_seen) {
            int act = a->o->on_lost;
            lost_seen = 1;
            if (g_json) log_lost(a, act == TOOL_ON_LOST_IGNORE ? "ignore" : act == TOOL_ON_LOST_KILL ? "kill" : "term");
            else if (act == TOOL_ON_LOST_IGNORE)
                ERR("lost the lock '%s' (%s); the command keeps running (--on-lost=ignore)", a->o->name,
                    redlock_strerror(a->lost_status));
            else
                ERR("lost the lock '%s' (%s); sending %s to %s", a->o->name, redlock_strerror(a->lost_status),
                    act == TOOL_ON_LOST_KILL ? "SIGKILL" : "SIGTERM", whom);
            if (act == TOOL_ON_LOST_KILL) {
                signal_command(a, SIGKILL);
                kill_at = REDLOCK_NO_DEADLINE;
                give_up_at = now + 5000000;
            } else if (act == TOOL_ON_LOST_TERM) {
                signal_command(a, SIGTERM);
                if (kill_at == REDLOCK_NO_DEADLINE) kill_at = now + a->o->kill_after_ms * 1000;
            }
        }
        if (now >= kill_at) {
            ERR("the command did not exit %s after %s; sending SIGKILL to %s", dur(b1, sizeof b1, a->o->kill_after_ms * 1000),
                lost_seen ? "SIGTERM" : "the forwarded signal", whom);
            signal_command(a, SIGKILL);
            kill_at = REDLOCK_NO_DEADLINE;
            give_up_at = now + 5000000;
        }
        if (now >= give_up_at) {
            ERR("the command (pid %ld) does not exit even after SIGKILL; giving up on it", (long)pid);
            break;
        }
    }
    if (a->pgrp > 0) on_tstp(0);
    /* after a loss, nothing of COMMAND's group may run on unprotected */
    stop_watcher(a, a->lost && a->o->on_lost != TOOL_ON_LOST_IGNORE);
    a->child = 0;
    a->cmd_reaped = reaped;
    a->cmd_status = status;
    if (a->lost) return TOOL_EXIT_LOST;
    if (redlock_lock_state(&a->lock) == REDLOCK_STATE_HELD) release_and_wait(a, 1);
    if (a->lost) { /* lost while releasing */
        if (g_json) log_lost(a, "none");
        return TOOL_EXIT_LOST;
    }
    if (!reaped) return TOOL_EXIT_INTERNAL;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return TOOL_EXIT_INTERNAL;
}

static int cmd_acquire(app *a)
{
    int rc = acquire_lock(a, 0);
    if (rc) return rc;
    linger(a); /* SETs to nodes that had not answered yet still go out */
    summary_now(a);
    if (printf("%s\n", redlock_lock_token(&a->lock)) < 0 || fflush(stdout) != 0) {
        ERR("cannot write the token: %s; releasing", strerror(errno));
        release_and_wait(a, 1);
        return TOOL_EXIT_INTERNAL;
    }
    return 0;
}

/* ---- release, extend (by token, through the core) ---- */

/* Node i's part in the release or extend, for the verbose lines. */
static const char *vote_words(const app *a, int i, const char *yes)
{
    if (!a->voted[i]) return a->after[i] && !a->after_status[i] ? "answered after the outcome" : "no answer";
    if (a->vote_yes[i]) return yes;
    if (a->nf[i].status) return node_reason(a->nf[i].status);
    return a->vote_other[i] ? "held by another token" : "not held by this token";
}

/* The lock, with the token from the command line, is released or extended
   by the core (scripts; GET, compare and act where scripts are refused;
   legacy values), as if this process had acquired it. */
static int cmd_release_extend(app *a, int release)
{
    redlock_lock_opts lo;
    const char *what = release ? "release" : "extend", *done_word = release ? "released" : "extended";
    const redlock_result *res = release ? &a->rel : &a->ext;
    int rc, i, yes = 0, other = 0, failed[REDLOCK_MAX_NODES], nf = 0, unknown = 0;
    int64_t until;
    char b1[24], w[80], label[REDLOCK_MAX_LABEL + 1];
    size_t label_len = 0;
    memset(&lo, 0, sizeof lo);
    lo.key = a->o->name;
    lo.ttl_ms = a->o->ttl_ms;
    lo.on_result = on_result;
    lo.user = a;
    /* the token's own label, so that the lock adopts it (args.c checked it) */
    (void)tool_token_split(a->o->token, strlen(a->o->token), &label_len);
    memcpy(label, a->o->token, label_len);
    label[label_len] = 0;
    lo.label = label;
    a->vote_op = release ? REDLOCK_OP_RELEASE : REDLOCK_OP_EXTEND;
    rc = redlock_lock_init(&a->lock, redlock_socket_client(&a->s), &lo);
    if (rc == REDLOCK_OK) {
        a->lock_up = 1;
        rc = redlock_lock_adopt(&a->lock, a->o->token, 0);
    }
    if (rc == REDLOCK_OK) rc = release ? redlock_release(&a->lock) : redlock_extend(&a->lock, a->o->ttl_ms);
    if (rc != REDLOCK_OK) {
        ERR("cannot start the %s: %s", what, redlock_strerror(rc));
        return TOOL_EXIT_INTERNAL;
    }
    /* the core ends the round within one node timeout; this bounds the loop */
    until = redlock_socket_now_us() + (a->o->node_timeout_ms + 2000) * 1000;
    while (!(release ? a->rel_done : a->ext_done) && !a->abort_sig && redlock_socket_now_us() < until) step(a, until);
    if (a->abort_sig) return 128 + a->abort_sig;
    linger(a); /* the votes after the decision, for the lines below */
    if (!(release ? a->rel_done : a->ext_done)) {
        ERR("internal error: no outcome from the lock");
        return TOOL_EXIT_INTERNAL;
    }
    for (i = 0; i < a->n; i++) {
        /* a failed extend ends its round once a quorum is out of reach: a
           node that had not answered yet is not late, its answer was not
           needed (the cleanup round after it shows whether it is up) */
        if (!a->voted[i] && a->after[i]) a->nf[i].status = a->after_status[i];
        else if (!a->voted[i]) a->nf[i].status = REDLOCK_ERR_NODE_TIMEOUT;
        failed[i] = a->nf[i].status != 0;
        unknown += !a->voted[i] && !failed[i];
        nf += failed[i];
        yes += a->voted[i] && a->vote_yes[i];
        other += a->voted[i] && a->vote_other[i];
        INFO("node %s: %s", a->o->shown[i], vote_words(a, i, done_word));
    }
    if (res->status == REDLOCK_OK) {
        if (g_json) {
            log_begin(done_word);
            log_int("votes", yes);
            if (!release) log_int("validity_ms", res->validity_us / 1000);
            log_end();
        } else if (release) INFO("released '%s' on %d/%d nodes", a->o->name, yes, a->n);
        else INFO("extended '%s' on %d/%d nodes: valid for %s", a->o->name, yes, a->n, dur(b1, sizeof b1, res->validity_us));
        if (nf) {
            snprintf(w, sizeof w, "'%.40s' %s", a->o->name, done_word);
            warn_degraded(a, w, yes, failed);
        }
        return 0;
    }
    if (a->n - nf < a->quorum) {
        snprintf(w, sizeof w, "%s '%.40s'", what, a->o->name);
        return report_failed(a, failed, w);
    }
    if (!release && res->status == REDLOCK_ERR_EXPIRED && yes >= a->quorum)
        ERR("extend '%s': the nodes answered too late, no validity left", a->o->name);
    else
        ERR("%s '%s': this token does not hold the lock (it does on %d of %d nodes, a quorum needs %d;"
            " %d held by another token, %d expired or released%s)", what, a->o->name, yes, a->n, a->quorum, other,
            a->n - nf - yes - other - unknown, unknown == 1 ? ", 1 answered after the outcome" : unknown ? ", some answered after the outcome" : "");
    for (i = 0; i < a->n; i++)
        if (failed[i]) ERR("node %s: %s", a->o->shown[i], why_node(a, i));
    return TOOL_EXIT_NOT_HELD;
}

/* ---- inspect ---- */

/* GET, PTTL, GET of the fence counter, INFO and CONFIG GET appendfsync to every node,
   until all answered (bounded). */
static void raw_round(app *a)
{
    int i;
    int64_t until = redlock_socket_now_us() +
                    (1000 + 3 * (a->o->node_timeout_ms * 2 > 1000 ? a->o->node_timeout_ms * 2 : 1000)) * 1000;
    for (i = 0; i < a->n; i++) {
        a->rn[i].waiting = 5;
        a->rn[i].evicts = -1;
        raw_send(a, i, T_GET, "GET");
        if (!a->rn[i].done) raw_send(a, i, T_PTTL, "PTTL");
        if (!a->rn[i].done) raw_send(a, i, T_FENCE, "GET");
        if (!a->rn[i].done) raw_send(a, i, T_INFO, "INFO");
        if (!a->rn[i].done) raw_send(a, i, T_CONFIG, "CONFIG");
    }
    for (;;) {
        int done = 0;
        for (i = 0; i < a->n; i++) done += a->rn[i].done;
        if (done == a->n || redlock_socket_now_us() >= until || a->abort_sig) break;
        step(a, until);
    }
    for (i = 0; i < a->n; i++)
        if (!a->rn[i].done) rn_done(a, i, RN_ERR, REDLOCK_ERR_NODE_TIMEOUT);
}

static int no_send(void *user, int node, const redlock_command *cmd, redlock_tag tag)
{
    (void)user, (void)node, (void)cmd, (void)tag;
    return REDLOCK_OK;
}
static int64_t clock_now_us(void *user)
{
    (void)user;
    return redlock_socket_now_us();
}
static int64_t clock_wall_ms(void *user)
{
    (void)user;
    return wall_ms();
}

/* When each node may have lost keys, in the core's words: what INFO and
   CONFIG said is told to a client of the core's own (raw mode has none,
   and sends nothing through this one), which applies its rule
   (redlock_node_set_life(), redlock_node_restarted_at()). For a client
   that never saw the node before, that is its start when it does not keep
   keys across restarts. */
static void inspect_restarts(app *a)
{
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    int i, ok;
    redlock_config_init(&cfg);
    cfg.node_count = a->n;
    memset(&cb, 0, sizeof cb);
    cb.send = no_send;
    cb.now_us = clock_now_us;
    cb.wall_ms = clock_wall_ms;
    ok = redlock_client_init(&c, &cfg, &cb, NULL) == REDLOCK_OK;
    for (i = 0; i < a->n; i++) {
        rnode *x = &a->rn[i];
        redlock_restart why = REDLOCK_RESTART_NONE;
        x->restart_at = INT64_MIN;
        x->restart_why = REDLOCK_RESTART_NONE;
        if (!ok || x->outcome == RN_ERR || !x->life_known) continue;
        x->life.durable = x->aof && x->fsync_always;
        redlock_node_set_life(&c, i, &x->life);
        x->restart_at = redlock_node_restarted_at(&c, i, &why);
        x->restart_why = (int)why;
    }
    if (ok) redlock_client_deinit(&c);
}

static int raw_failed_count(const app *a, int *failed)
{
    int i, nf = 0;
    for (i = 0; i < a->n; i++) {
        failed[i] = a->rn[i].outcome == RN_ERR;
        nf += failed[i];
    }
    return nf;
}

/* inspect --json: what a node may evict (redlock_evicts) */
static const char *evicts_word(int evicts)
{
    return evicts == REDLOCK_EVICTS_ALL ? "all" : evicts == REDLOCK_EVICTS_VOLATILE ? "volatile" : "none";
}

/* What inspect read from the nodes: each node's state and holder, and the
   holder found on the most nodes. */
enum { S_ERROR, S_FREE, S_HELD, S_OTHER };
typedef struct inspection {
    int st[REDLOCK_MAX_NODES];
    int64_t ttl[REDLOCK_MAX_NODES]; /* ms; -1: no expiry; -2: none to show */
    const char *tok[REDLOCK_MAX_NODES];
    size_t toklen[REDLOCK_MAX_NODES];
    char label[REDLOCK_MAX_NODES][REDLOCK_MAX_LABEL + 1]; /* the holder's label ("" none) */
    const char *own[REDLOCK_MAX_NODES]; /* a reentrant lock's owner */
    int rwn[REDLOCK_MAX_NODES];         /* a readers-writer lock's holders there */
    int legacy[REDLOCK_MAX_NODES];
    int failed[REDLOCK_MAX_NODES], nf;
    int answered, free_n, best, best_i, fenced;
    long long fence;
    char holder[REDLOCK_TOKEN_LEN + 1], hlabel[REDLOCK_MAX_LABEL + 1]; /* the quorum's token, shortened */
} inspection;

/* Node i's answers: its value decoded, and what it says of the lock. */
static void inspect_node(app *a, int i, int64_t now_wall, inspection *in)
{
    rnode *x = &a->rn[i];
    in->tok[i] = in->own[i] = NULL;
    in->toklen[i] = 0;
    in->label[i][0] = 0;
    in->rwn[i] = 0;
    in->ttl[i] = -2;
    in->legacy[i] = 0;
    if (x->outcome == RN_ERR) { in->st[i] = S_ERROR; return; }
    in->answered++;
    if (x->val_long) {
        x->v.kind = REDLOCK_VALUE_OTHER;
    } else if (x->val_len) { /* GET's string: a legacy value only where the key does not expire */
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STRING;
        r.str = x->val;
        r.len = x->val_len;
        (void)redlock_value_from_get(&r, x->have_pttl && x->pttl >= 0, &x->v);
    }
    if (x->v.kind == REDLOCK_VALUE_NONE) {
        in->st[i] = S_FREE;
        in->free_n++;
    } else if (x->v.kind == REDLOCK_VALUE_PLAIN || x->v.kind == REDLOCK_VALUE_LEGACY) {
        in->st[i] = S_HELD;
        in->tok[i] = x->v.token;
        in->toklen[i] = x->v.token_len;
        label_of(in->tok[i], x->v.label_len, in->label[i], sizeof in->label[i]);
        in->legacy[i] = x->v.kind == REDLOCK_VALUE_LEGACY;
        if (in->legacy[i]) in->ttl[i] = x->v.expiry_ms - now_wall < 0 ? 0 : x->v.expiry_ms - now_wall;
        else if (x->have_pttl && x->pttl >= -1) in->ttl[i] = x->pttl;
    } else if (x->v.kind == REDLOCK_VALUE_REENTRANT) {
        in->st[i] = S_HELD;
        in->own[i] = x->v.owner;
        label_of(x->v.token, x->v.label_len, in->label[i], sizeof in->label[i]); /* who took the first entry */
        if (x->have_pttl && x->pttl >= -1) in->ttl[i] = x->pttl;
    } else if (x->v.kind == REDLOCK_VALUE_RW) {
        in->rwn[i] = (int)x->v.readers + (x->v.writer_len != 0) + (x->v.update_len != 0);
        if (in->rwn[i]) {
            in->st[i] = S_HELD;
            if (x->have_pttl && x->pttl >= -1) in->ttl[i] = x->pttl;
        } else { /* only writers waiting, or entries past their time */
            in->st[i] = S_FREE;
            in->free_n++;
        }
    } else {
        in->st[i] = S_OTHER;
    }
}

/* The holder on the most nodes, the highest fence counter, the nodes that
   failed. */
static void inspect_tally(app *a, inspection *in)
{
    int i;
    for (i = 0; i < a->n; i++) { /* the token held on the most nodes */
        int j, same = 0;
        if (in->st[i] != S_HELD) continue;
        for (j = 0; j < a->n; j++) /* the same token, owner, or readers-writer holders */
            same += in->st[j] == S_HELD &&
                    (in->tok[i]   ? in->tok[j] && in->toklen[j] == in->toklen[i] &&
                                        memcmp(in->tok[j], in->tok[i], in->toklen[i]) == 0
                     : in->own[i] ? in->own[j] && strcmp(in->own[j], in->own[i]) == 0
                                  : in->rwn[j] > 0);
        if (same > in->best) { in->best = same; in->best_i = i; }
    }
    for (i = 0; i < a->n; i++) /* a fenced lock's counter: the highest is the last holder's fence */
        if (in->st[i] != S_ERROR && a->rn[i].have_fence) {
            in->fenced++;
            if (a->rn[i].fence > in->fence) in->fence = a->rn[i].fence;
        }
    in->nf = raw_failed_count(a, in->failed);
    if (in->best_i >= 0 && in->tok[in->best_i]) {
        memcpy(in->holder, in->tok[in->best_i] + in->toklen[in->best_i] - REDLOCK_TOKEN_LEN, 8), in->holder[8] = 0;
        memcpy(in->hlabel, in->label[in->best_i], sizeof in->hlabel);
    }
}

/* inspect --json: a readers-writer lock's entries on one node. */
static void inspect_json_rw(FILE *f, const redlock_value *v)
{
    char w[9], u[9], wl[REDLOCK_MAX_LABEL + 1], ul[REDLOCK_MAX_LABEL + 1];
    rw_holders(v, w, wl, u, ul);
    fprintf(f, "{\"readers\":%lld,\"writer\":", v->readers);
    json_cstr(f, w[0] ? w : NULL);
    fputs(",\"writer_label\":", f);
    json_cstr(f, wl[0] ? wl : NULL);
    fputs(",\"update\":", f);
    json_cstr(f, u[0] ? u : NULL);
    fputs(",\"update_label\":", f);
    json_cstr(f, ul[0] ? ul : NULL);
    fprintf(f, ",\"writers_waiting\":%lld}", v->writers_waiting);
}

/* A redlock_restart for JSON and the table. */
static const char *restart_word(int why)
{
    return why == REDLOCK_RESTART_RUN_ID ? "run_id" : why == REDLOCK_RESTART_FAILOVER ? "failover" : "uptime";
}

/* inspect --json: what a node's INFO and CONFIG say of its server's
   process, and when it may have lost keys (all null: not known). */
static void inspect_json_life(FILE *f, const rnode *x, int known)
{
    int life = known && x->life_known;
    fputs(",\"run_id\":", f);
    json_cstr(f, life && x->life.run_id[0] ? x->life.run_id : NULL);
    fputs(",\"uptime_s\":", f);
    if (life && x->life.uptime_s >= 0) fprintf(f, "%lld", (long long)x->life.uptime_s);
    else fputs("null", f);
    fprintf(f, ",\"durable\":%s,\"restart\":", !life ? "null" : x->life.durable ? "true" : "false");
    if (life && x->restart_at != INT64_MIN)
        fprintf(f, "{\"why\":\"%s\",\"ago_ms\":%lld}", restart_word(x->restart_why),
                (long long)((redlock_socket_now_us() - x->restart_at) / 1000));
    else fputs("null", f);
}

/* inspect --json: node i's object. */
static void inspect_json_node(FILE *f, app *a, const inspection *in, int i)
{
    static const char *const names[] = { "error", "free", "held", "other" };
    int known = in->st[i] != S_ERROR;
    fputs(i ? ",{\"node\":" : "{\"node\":", f);
    json_cstr(f, a->o->shown[i]);
    fprintf(f, ",\"state\":\"%s\",\"holder\":", names[in->st[i]]);
    if (in->tok[i]) json_str(f, in->tok[i] + in->toklen[i] - REDLOCK_TOKEN_LEN, 8);
    else fputs("null", f);
    fputs(",\"label\":", f);
    json_cstr(f, in->label[i][0] ? in->label[i] : NULL);
    fputs(",\"ttl_ms\":", f);
    if (in->ttl[i] >= -1) fprintf(f, "%lld", (long long)in->ttl[i]);
    else fputs("null", f);
    fputs(",\"owner\":", f);
    json_cstr(f, in->own[i]);
    fputs(",\"count\":", f);
    if (in->own[i]) fprintf(f, "%lld", a->rn[i].v.entries);
    else fputs("null", f);
    fputs(",\"fence\":", f);
    if (known && a->rn[i].have_fence) fprintf(f, "%lld", a->rn[i].fence);
    else fputs("null", f);
    fputs(",\"rw\":", f);
    if (known && a->rn[i].v.kind == REDLOCK_VALUE_RW) inspect_json_rw(f, &a->rn[i].v);
    else fputs("null", f);
    fprintf(f, ",\"legacy\":%s,\"error\":", in->legacy[i] ? "true" : "false");
    json_cstr(f, known ? NULL : a->nf[i].why);
    fputs(",\"maxmemory_policy\":", f); /* null: not known (no answer, INFO refused) */
    json_cstr(f, known && a->rn[i].policy[0] ? a->rn[i].policy : NULL);
    fputs(",\"evicts\":", f);
    if (known && a->rn[i].evicts >= 0) fprintf(f, "\"%s\"", evicts_word(a->rn[i].evicts));
    else fputs("null", f);
    inspect_json_life(f, &a->rn[i], known);
    fputc('}', f);
}

/* inspect --json: one object, the lock's state and one entry a node. */
static void inspect_json(app *a, const inspection *in, const char *state)
{
    FILE *f = stdout;
    int i, held = in->best >= a->quorum, b = in->best_i;
    fputs("{\"key\":", f);
    json_cstr(f, a->o->name);
    fprintf(f, ",\"state\":\"%s\",\"holder\":", state);
    if (held && in->tok[b]) json_cstr(f, in->holder);
    else fputs("null", f);
    fputs(",\"label\":", f);
    json_cstr(f, held && (in->tok[b] || in->own[b]) && in->label[b][0] ? in->label[b] : NULL);
    fputs(",\"owner\":", f);
    json_cstr(f, held ? in->own[b] : NULL);
    fprintf(f, ",\"held_on\":%d,\"quorum\":%d,\"node_count\":%d,\"answered\":%d,\"fence\":", in->best, a->quorum, a->n,
            in->answered);
    if (in->fenced) fprintf(f, "%lld", in->fence);
    else fputs("null", f);
    fputs(",\"nodes\":[", f);
    for (i = 0; i < a->n; i++) inspect_json_node(f, a, in, i);
    fputs("]}\n", f);
    fflush(f);
}

/* inspect's table: node i's row. */
static void inspect_row(app *a, const inspection *in, int i)
{
    const char *d = a->o->shown[i];
    char b1[24];
    if (in->st[i] == S_ERROR) {
        printf("%-32s %-7s %-9s %s\n", d, "error", "-", a->nf[i].why);
    } else if (in->st[i] == S_FREE) {
        printf("%-32s %-7s %-9s %s\n", d, "free", "-", "-");
    } else if (in->st[i] == S_HELD) {
        const redlock_value *v = &a->rn[i].v;
        const char *label = in->label[i];
        char w[9], u[9], wl[REDLOCK_MAX_LABEL + 1], ul[REDLOCK_MAX_LABEL + 1];
        rw_holders(v, w, wl, u, ul);
        if (in->ttl[i] >= 0) tool_format_ms(b1, sizeof b1, in->ttl[i]);
        else snprintf(b1, sizeof b1, in->ttl[i] == -1 ? "none" : "-");
        if (in->own[i])
            printf("%-32s %-7s %-9s %s (reentrant: owner %s, %lld entries%s%s)\n", d, "held", "-", b1, in->own[i],
                   v->entries, label[0] ? ", by " : "", label);
        else if (in->rwn[i])
            printf("%-32s %-7s %-9s %s (%lld readers, writer %s%s%s, update %s%s%s, %lld writers waiting)\n", d, "held",
                   "-", b1, v->readers, w[0] ? w : "-", wl[0] ? " by " : "", wl, u[0] ? u : "-", ul[0] ? " by " : "", ul,
                   v->writers_waiting);
        else
            printf("%-32s %-7s %.8s  %s%s%s%s\n", d, "held", in->tok[i] + in->toklen[i] - REDLOCK_TOKEN_LEN, b1,
                   label[0] ? "  by " : "", label, in->legacy[i] ? " (legacy value, wall clock)" : "");
    } else {
        printf("%-32s %-7s %-9s %s\n", d, "other", "-", "the key is not a lock");
    }
}

/* inspect's table: the line that says who holds the lock, if anyone. */
static void inspect_verdict(app *a, const inspection *in, int code)
{
    const char *name = a->o->name;
    int held = in->best >= a->quorum, b = in->best_i;
    if (held && in->rwn[b])
        printf("'%s' is held (readers-writer) on %d/%d nodes (quorum %d)\n", name, in->best, a->n, a->quorum);
    else if (held && in->own[b])
        printf("'%s' is held by owner %s (reentrant%s%s) on %d/%d nodes (quorum %d)\n", name, in->own[b],
               in->label[b][0] ? ", by " : "", in->label[b], in->best, a->n, a->quorum);
    else if (held)
        printf("'%s' is held by %s%s%s%s on %d/%d nodes (quorum %d)\n", name, in->holder, in->hlabel[0] ? " (" : "",
               in->hlabel, in->hlabel[0] ? ")" : "", in->best, a->n, a->quorum);
    else if (in->free_n == a->n)
        printf("'%s' is free on all %d nodes\n", name, a->n);
    else if (code == TOOL_EXIT_NOT_HELD)
        printf("'%s' is free: not held by a quorum (%d of %d nodes answered, quorum %d)\n", name, in->answered, a->n,
               a->quorum);
    else
        printf("'%s' is unknown: too few nodes answered (%d of %d, quorum %d)\n", name, in->answered, a->n, a->quorum);
}

/* inspect's table: whether each node's server keeps keys across
   restarts, how long it has been up, and whether it may have lost keys at
   its start ("-": not known), e.g.
   "restarts per node: durable (up 86400s); not durable (up 4s, may have lost keys at its start); -". */
static void inspect_table_life(app *a, const inspection *in)
{
    int i;
    char b[24] = "";
    printf("restarts per node:");
    for (i = 0; i < a->n; i++) {
        const rnode *x = &a->rn[i];
        const char *sep = i ? ";" : "";
        if (in->st[i] == S_ERROR || !x->life_known) {
            printf("%s -", sep);
            continue;
        }
        if (x->life.uptime_s > 0) snprintf(b, sizeof b, "%llds", (long long)x->life.uptime_s);
        else snprintf(b, sizeof b, "%s", x->life.uptime_s == 0 ? "less than 1s" : "?");
        printf("%s %s (up %s%s)", sep, x->life.durable ? "durable" : "not durable", b,
               x->restart_at == INT64_MIN ? "" : ", may have lost keys at its start");
    }
    printf("\n");
}

/* inspect's table: a row a node, the verdict, the fence counters, the
   nodes' eviction policies and restarts. */
static void inspect_table(app *a, const inspection *in, int code)
{
    int i;
    printf("%-32s %-7s %-9s %s\n", "NODE", "STATE", "HOLDER", "TTL");
    for (i = 0; i < a->n; i++) inspect_row(a, in, i);
    inspect_verdict(a, in, code);
    if (in->fenced) {
        printf("fence counter: %lld (the highest; per node:", in->fence);
        for (i = 0; i < a->n; i++) {
            if (in->st[i] != S_ERROR && a->rn[i].have_fence) printf(" %lld", a->rn[i].fence);
            else printf(" -");
        }
        printf(")\n");
    }
    printf("maxmemory-policy per node:"); /* "-": not known (no answer, INFO refused) */
    for (i = 0; i < a->n; i++) {
        const rnode *x = &a->rn[i];
        const char *sep = i ? "," : "";
        if (in->st[i] == S_ERROR || !x->policy[0]) printf("%s -", sep);
        else if (x->evicts == REDLOCK_EVICTS_NONE && strcmp(x->policy, "noeviction") != 0)
            printf("%s %s (no maxmemory: evicts nothing)", sep, x->policy);
        else printf("%s %s%s", sep, x->policy, x->evicts > REDLOCK_EVICTS_NONE ? " (may evict keys)" : "");
    }
    printf("\n");
    inspect_table_life(a, in);
    fflush(stdout);
}

/* Exit codes: 0 held by a quorum; 1 free (fewer than a quorum could hold
   it, counting every node that did not answer as a holder); 69/76/78
   when too few nodes answered to tell. */
static int cmd_inspect(app *a)
{
    inspection in;
    const char *state;
    int i, code = 0;
    int64_t now_wall;
    raw_round(a);
    if (a->abort_sig) return 128 + a->abort_sig;
    inspect_restarts(a);
    memset(&in, 0, sizeof in);
    in.best_i = -1;
    now_wall = wall_ms();
    for (i = 0; i < a->n; i++) inspect_node(a, i, now_wall, &in);
    inspect_tally(a, &in);
    if (in.best >= a->quorum) {
        state = "held";
    } else if (in.best + in.nf < a->quorum) {
        state = "free";
        code = TOOL_EXIT_NOT_HELD;
    } else {
        char w[80];
        state = "unknown"; /* the nodes that did not answer could make it held */
        snprintf(w, sizeof w, "inspect '%.40s'", a->o->name);
        code = report_failed(a, in.failed, w);
    }
    for (i = 0; i < a->n; i++) /* the words before the output, which names them */
        if (in.failed[i]) why_node(a, i);
    for (i = 0; i < a->n; i++)
        if (in.st[i] != S_ERROR) warn_evicting(a, i, a->rn[i].evicts, a->rn[i].policy, -1);
    if (a->o->json) inspect_json(a, &in, state);
    else inspect_table(a, &in, code);
    return code;
}

/* ---- main ---- */

/* Help: one table of lines, each for the subcommands it applies to, so
   that `redlock --help` and `redlock COMMAND --help` never disagree. */
#define H_RUN (1u << TOOL_CMD_RUN)
#define H_ACQ (1u << TOOL_CMD_ACQUIRE)
#define H_REL (1u << TOOL_CMD_RELEASE)
#define H_EXT (1u << TOOL_CMD_EXTEND)
#define H_INS (1u << TOOL_CMD_INSPECT)
#define H_ALL (H_RUN | H_ACQ | H_REL | H_EXT | H_INS)
#define H_TOP (1u << TOOL_CMD_NONE) /* redlock --help only */

typedef struct help_line {
    unsigned cmds;
    const char *text;
} help_line;

static const help_line help_usage[] = {
    { H_RUN, "redlock run     [options] NAME -- COMMAND [ARGS...]\n" },
    { H_ACQ, "redlock acquire [options] NAME          prints a TOKEN; held for --ttl\n" },
    { H_REL, "redlock release [options] NAME TOKEN\n" },
    { H_EXT, "redlock extend  [options] NAME TOKEN    to --ttl from now\n" },
    { H_INS, "redlock inspect [options] NAME          who holds NAME, per node\n" },
};

static const help_line help_about[] = {
    { H_TOP, "flock(1) for a cluster: a lock held when a majority of N independent Redis\n"
             "nodes hold the key NAME with one random token (Redlock). `run` waits for the\n"
             "lock, runs COMMAND, renews the lock every ttl/3 while COMMAND runs and\n"
             "releases it when COMMAND exits, passing COMMAND's exit status through.\n"
             "Run 'redlock COMMAND --help' for one command; see also redlock(1).\n" },
    { H_RUN, "Waits for the lock NAME, runs COMMAND while holding it (renewed every\n"
             "ttl/3), releases it when COMMAND exits and exits with COMMAND's status.\n"
             "COMMAND runs in a process group of its own: a lost lock (--on-lost), the\n"
             "signals redlock forwards (TERM INT HUP QUIT USR1 USR2, ^Z) and --kill-after\n"
             "reach its whole group; if redlock dies, even by kill -9, the group is\n"
             "killed. Use --foreground for a COMMAND that reads the terminal.\n" },
    { H_ACQ, "Takes the lock NAME, prints its TOKEN on stdout and exits: the lock stays\n"
             "held for --ttl, not renewed. Give the TOKEN to release or extend.\n" },
    { H_REL, "Releases the lock NAME held by TOKEN (from 'redlock acquire').\n" },
    { H_EXT, "Sets the remaining time of the lock NAME held by TOKEN to --ttl.\n" },
    { H_INS, "Shows, per node, whether NAME is held, the first 8 hex digits of the\n"
             "holder's token, the remaining TTL and who holds it (the token's label,\n"
             "by default host:pid), then a summary line, each node's maxmemory-policy,\n"
             "with a warning for a node that may evict keys, and whether each node's\n"
             "server keeps keys across restarts and how long it has been up (--json:\n"
             "one JSON object instead).\n" },
};

static const help_line help_opts[] = {
    { H_ALL | H_TOP, "  -n, --nodes LIST      comma-separated nodes (default: $REDLOCK_NODES):\n"
             "                        host[:port]  [ipv6]:port  /path/to/redis.sock\n"
             "                        redis://[user:pass@]host[:port][/db]\n"
             "                        rediss://[user:pass@]host[:port][/db]   (TLS)\n"
             "                        unix://[user:pass@]/path/to/redis.sock[?db=N]\n"
             "      --tls             TLS on every node (as if each were rediss://)\n"
             "      --tls-ca FILE|DIR CA certificates to trust (default: the system's)\n"
             "      --tls-cert FILE   client certificate (PEM), with --tls-key FILE\n"
             "      --tls-server-name NAME  the name the certificates must hold\n"
             "                        (default: each node's host)\n"
             "      --tls-insecure-skip-verify  accept any certificate (testing only)\n" },
    { H_RUN | H_ACQ, "  -t, --ttl DURATION    lock time to live (default 30s)\n" },
    { H_EXT, "  -t, --ttl DURATION    the lock's new time to live, from now (default 30s)\n" },
    { H_TOP, "  -t, --ttl DURATION    lock time to live (default 30s); extend: the new one\n" },
    { H_RUN | H_ACQ | H_TOP, "  -w, --wait DURATION   wait up to this long for a busy lock (default 30s)\n"
                     "      --no-wait         fail at once if the lock is busy (same as -w 0)\n"
                     "      --retry-delay D   pause between attempts while waiting\n"
                     "                        (default 200ms, +-50%)\n"
                     "      --evicting HOW    a node whose maxmemory-policy may evict keys (a cache):\n"
                     "                        refuse (its grant does not count; the default with\n"
                     "                        --fence) or count (the default otherwise); either\n"
                     "                        way a warning names it\n" },
    { H_RUN | H_ACQ | H_EXT | H_TOP,
      "      --max-ttl D       the longest ttl any client of these nodes uses (default:\n"
      "                        the lock's ttl): a node that may have lost keys (it\n"
      "                        restarted without them) counts no grant until the\n"
      "                        longer of the two has passed since then\n"
      "      --wait-replicas N[/T]\n"
      "                        after each grant, WAIT until N replicas of that node\n"
      "                        have the write (up to T, default the node timeout);\n"
      "                        fewer: that node's grant does not count\n" },
    { H_ALL | H_TOP, "      --node-timeout D  how long one round waits for a node (default 200ms)\n"
             "      --mode MODE       auto (default: modern, per-node fallback for old ones),\n"
             "                        modern (SET NX PX and scripts) or legacy (SETNX/GETSET)\n"
             "      --legacy          same as --mode legacy\n" },
    { H_RUN, "      --on-lost ACTION  when the lock is lost, send COMMAND's process group\n"
             "                        SIGTERM (term, default), SIGKILL (kill) or nothing (ignore)\n"
             "      --kill-after D    SIGKILL this long after a SIGTERM (the one of a lost lock,\n"
             "                        or a SIGTERM / SIGINT forwarded) if COMMAND still runs\n"
             "                        (default 5s)\n"
             "      --foreground      COMMAND stays in redlock's process group and may use the\n"
             "                        terminal; then only COMMAND itself is signalled, and only\n"
             "                        on Linux does it die with redlock\n"
             "      --reentrant       a reentrant lock: COMMAND gets its owner id in\n"
             "                        $REDLOCK_OWNER, and a `redlock run NAME` on the same\n"
             "                        nodes inside COMMAND (reentrant by itself there) enters\n"
             "                        at once instead of waiting; runs of other NAMEs inside\n"
             "                        do not share the owner (needs scripting on the nodes)\n"
             "      --owner ID        the owner id (default: $REDLOCK_OWNER when not handed\n"
             "                        down by an enclosing run, else a new one; 1-64\n"
             "                        printable characters, no space)\n"
             "      --fence           a fenced lock: COMMAND gets its fencing token in\n"
             "                        $REDLOCK_FENCE, higher than any earlier holder's, for a\n"
             "                        storage that refuses older ones (needs scripting; one\n"
             "                        more round trip; a counter key that never expires;\n"
             "                        with --reentrant, nested fenced runs get the same)\n"
             "  -s, --shared          a readers-writer lock, shared: runs with -s hold NAME\n"
             "                        together (like flock -s); -x and plain runs wait\n"
             "  -x, --exclusive       a readers-writer lock, exclusive: alone, and a waiting\n"
             "                        writer keeps new readers out (needs scripting)\n" },
    { H_RUN | H_ACQ, "      --label TEXT      the label of the lock's tokens, which inspect shows as\n"
                     "                        the holder: TEXT and ':' (default: host:pid:)\n"
                     "      --no-label        tokens of 32 hex digits only\n" },
    { H_TOP, "      --label TEXT      run, acquire: the tokens' label, TEXT and ':' (default:\n"
             "                        host:pid:, which inspect shows); --no-label: none\n" },
    { H_TOP, "      --on-lost ACTION  run: when the lock is lost, SIGTERM (term, default),\n"
             "                        SIGKILL (kill) or nothing (ignore) to COMMAND's group\n"
             "      --kill-after D    run: SIGKILL this long after a SIGTERM to COMMAND (5s)\n"
             "      --foreground      run: COMMAND stays in redlock's process group (terminal)\n"
             "      --reentrant       run: the owner ($REDLOCK_OWNER inside COMMAND) may run\n"
             "                        NAME (only NAME) again inside COMMAND without waiting\n"
             "      --owner ID        run --reentrant: the owner id (default: $REDLOCK_OWNER)\n"
             "      --fence           run: COMMAND gets a fencing token in $REDLOCK_FENCE\n"
             "  -s, --shared          run: readers hold NAME together; -x, --exclusive: a writer\n" },
    { H_INS, "      --json            one JSON object on stdout instead of the table\n" },
    { H_TOP, "      --json            inspect: one JSON object on stdout instead of the table\n" },
    { H_ALL | H_TOP, "      --log-format FMT  text (default) or json: stderr is one JSON object per\n"
                     "                        line, per event (acquired, renewed, lost, released,\n"
                     "                        exit ...; see the man page, JSON LOG)\n" },
    { H_RUN | H_ACQ | H_REL | H_EXT | H_TOP,
      "      --stats[=FMT]     at exit, the client's statistics on stderr: text or json\n"
      "                        (default: as the log; in the JSON log, an event \"stats\")\n" },
    { H_ALL | H_TOP, "  -q, --quiet           no messages on stderr, not even warnings\n"
                     "  -v, --verbose         report attempts, node answers and renewals on stderr\n"
                     "  -h, --help            show this help\n" },
    { H_TOP, "  -V, --version         show the version\n" },
    { H_ALL | H_TOP, "\nDURATION: a number and a unit: 500ms, 10s, 1.5m, 1h (no unit: seconds).\n" },
};

static const help_line help_exit[] = {
    { H_ALL | H_TOP, "  0      success" },
    { H_RUN | H_TOP, " (run: COMMAND exited with 0)" },
    { H_INS, ": NAME is held by a quorum of nodes" },
    { H_TOP, "; inspect: NAME is held" },
    { H_ALL | H_TOP, "\n" },
    { H_REL | H_EXT | H_TOP, "  1      release/extend: TOKEN does not hold the lock (expired, released, taken)\n" },
    { H_INS | H_TOP, "  1      inspect: NAME is free (fewer than a quorum of nodes can hold it)\n" },
    { H_ALL | H_TOP, "  64     usage error (bad option, duration, node, missing '--' ...)\n"
                     "  69     too few nodes usable for a quorum: connection refused, name not\n"
                     "         resolved, no such socket, timed out (inspect: too few answered)\n"
                     "  70     internal error (fork, pipe, out of memory)\n" },
    { H_RUN | H_ACQ | H_TOP, "  75     lock busy: held by someone else when --wait ran out (or --no-wait),\n"
                             "         or nodes that restarted recently (they may have lost keys) do\n"
                             "         not count yet: a later try can succeed\n" },
    { H_EXT, "  75     nodes that restarted recently (they may have lost keys) do not count\n"
             "         yet: a later extend can succeed\n" },
    { H_ALL | H_TOP, "  76     protocol error: a node answered unexpectedly (not a Redis server?),\n"
                     "         or with an error reply\n" },
    { H_RUN | H_TOP, "  77     run: the lock was lost while COMMAND ran (COMMAND signalled, --on-lost)\n" },
    { H_ALL | H_TOP, "  78     a node refused the configuration: AUTH (wrong or missing password,\n"
                     "         unknown ACL user), SELECT (no such database), TLS (certificate\n"
                     "         refused, name mismatch, client certificate required, a port of\n"
                     "         the other kind, no TLS in this build), an ACL that denies the\n"
                     "         user NAME (or redlock:fence:NAME with --fence) or the lock\n"
                     "         command, or scripts refused where the lock needs them\n" },
    { H_RUN | H_ACQ | H_TOP, "         run/acquire: or too many nodes may evict keys for a lock that\n"
                             "         refuses them (--fence, --evicting refuse)\n" },
    { H_RUN | H_TOP, "  126    run: COMMAND could not be executed\n"
                     "  127    run: COMMAND not found\n"
                     "  128+N  run: COMMAND was killed by signal N; also redlock itself when a\n"
                     "         signal interrupts it before COMMAND starts\n"
                     "  other  run: COMMAND's own exit status\n" },
};

static void help_print(FILE *f, const help_line *t, size_t n, unsigned mask)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (t[i].cmds & mask) fputs(t[i].text, f);
}

#define HELP(f, t, m) help_print(f, t, sizeof t / sizeof t[0], m)

static void usage(FILE *f, int cmd)
{
    unsigned m = 1u << cmd; /* TOOL_CMD_NONE: the whole tool */
    size_t i;
    int first = 1;
    for (i = 0; i < sizeof help_usage / sizeof help_usage[0]; i++)
        if (cmd == TOOL_CMD_NONE || (help_usage[i].cmds & m)) {
            fputs(first ? "Usage: " : "       ", f);
            fputs(help_usage[i].text, f);
            first = 0;
        }
    fputc('\n', f);
    HELP(f, help_about, m);
    fputs("\nOptions:\n", f);
    HELP(f, help_opts, m);
    fputs("\nExit status:\n", f);
    HELP(f, help_exit, m);
    if (cmd == TOOL_CMD_NONE || cmd == TOOL_CMD_RUN)
        fputs("\nPasswords are never printed: prefer REDLOCK_NODES to -n for them (redlock\n"
              "overwrites them in its argv, but other users may see it before that).\n", f);
}

/* ---- --stats: the client's statistics at exit (redlock.h section 14) ---- */

static const char *const fail_words[REDLOCK_NODE_FAIL_CLASSES] = { "connect", "timeout", "server", "protocol", "other" };

/* A latency histogram: samples, p50 and p99 (the upper bound of their
   bucket), the largest; in ms. */
static void stats_hist_json(const char *key, const redlock_histogram *h)
{
    fprintf(stderr, ",\"%s\":{\"count\":%llu", key, (unsigned long long)h->count);
    if (h->count) {
        log_ms("p50", redlock_histogram_quantile(h, 0.5));
        log_ms("p99", redlock_histogram_quantile(h, 0.99));
        log_ms("max", (int64_t)h->max_us);
    }
    fputc('}', stderr);
}

static void stats_hist_text(const char *what, const redlock_histogram *h)
{
    char b1[24], b2[24], b3[24];
    if (!h->count) {
        ERR("stats: %-13s no samples", what);
        return;
    }
    ERR("stats: %-13s p50 %s, p99 %s, max %s (%llu samples)", what, dur(b1, sizeof b1, redlock_histogram_quantile(h, 0.5)),
        dur(b2, sizeof b2, redlock_histogram_quantile(h, 0.99)), dur(b3, sizeof b3, (int64_t)h->max_us),
        (unsigned long long)h->count);
}

#define U_(x) ((unsigned long long)(x))

/* The adapter's statistics (redlock_socket_stats(): the core's counters
   and each node's connections'). */
static void print_stats(app *a)
{
    redlock_adapter_stats as;
    const redlock_stats *st = &as.core;
    int i, k;
    if (redlock_socket_stats(&a->s, &as) != REDLOCK_OK) return;
    if (g_json || a->o->stats == TOOL_STATS_JSON) { /* text would break the JSON log */
        log_begin("stats");
        fprintf(stderr, ",\"acquires\":{\"started\":%llu,\"attempts\":%llu,\"acquired\":%llu,\"busy\":%llu,"
                "\"timeout\":%llu,\"no_quorum\":%llu,\"cancelled\":%llu,\"other\":%llu}",
                U_(st->acquires), U_(st->attempts), U_(st->acquired), U_(st->acquire_busy), U_(st->acquire_timeout),
                U_(st->acquire_no_quorum), U_(st->acquire_cancelled), U_(st->acquire_other));
        fprintf(stderr, ",\"renewals\":%llu,\"renewal_failed\":%llu,\"extends\":%llu,\"extend_failed\":%llu,"
                "\"releases\":%llu,\"release_failed\":%llu",
                U_(st->renewals), U_(st->renewal_failed), U_(st->extends), U_(st->extend_failed), U_(st->releases),
                U_(st->release_failed));
        fprintf(stderr, ",\"lost\":{\"total\":%llu,\"expired\":%llu,\"stolen\":%llu,\"quorum_lost\":%llu,"
                "\"hold_limit\":%llu,\"other\":%llu}",
                U_(st->lost), U_(st->lost_expired), U_(st->lost_stolen), U_(st->lost_quorum), U_(st->lost_hold_limit),
                U_(st->lost_other));
        log_int("held", st->held);
        log_int("held_max", st->held_max);
        stats_hist_json("acquire_ms", &st->acquire_us);
        stats_hist_json("renewal_ms", &st->renewal_us);
        stats_hist_json("handoff_ms", &st->handoff_us);
        fputs(",\"nodes\":[", stderr);
        for (i = 0; i < a->n; i++) {
            const redlock_node_io_stats *io = &as.node[i];
            fputs(i ? ",{\"node\":" : "{\"node\":", stderr);
            json_esc(stderr, a->o->shown[i], strlen(a->o->shown[i]), 1);
            fputs(",\"failures\":{", stderr);
            for (k = 0; k < REDLOCK_NODE_FAIL_CLASSES; k++)
                fprintf(stderr, "%s\"%s\":%llu", k ? "," : "", fail_words[k], U_(st->node_failures[i][k]));
            fprintf(stderr, "},\"connects\":%llu,\"drops\":%llu,\"commands\":%llu,\"bytes_out\":%llu,\"bytes_in\":%llu,"
                    "\"queue_max\":%u}", U_(io->connects), U_(io->drops), U_(io->commands), U_(io->bytes_out),
                    U_(io->bytes_in), (unsigned)io->queue_max);
        }
        fputc(']', stderr);
        log_end();
        return;
    }
    /* text: shown with -q too, it was asked for */
    k = g_verbose;
    g_verbose = 0;
    ERR("stats: acquires      %llu: acquired %llu, busy %llu, timed out %llu, no quorum %llu, cancelled %llu, other %llu"
        " (%llu attempts)", U_(st->acquires), U_(st->acquired), U_(st->acquire_busy), U_(st->acquire_timeout),
        U_(st->acquire_no_quorum), U_(st->acquire_cancelled), U_(st->acquire_other), U_(st->attempts));
    ERR("stats: renewals      %llu (%llu failed); extends %llu (%llu failed); releases %llu (%llu failed)",
        U_(st->renewals), U_(st->renewal_failed), U_(st->extends), U_(st->extend_failed), U_(st->releases),
        U_(st->release_failed));
    ERR("stats: lost          %llu: expired %llu, stolen %llu, quorum lost %llu, hold limit %llu, other %llu", U_(st->lost),
        U_(st->lost_expired), U_(st->lost_stolen), U_(st->lost_quorum), U_(st->lost_hold_limit), U_(st->lost_other));
    ERR("stats: held          %u now, %u at most", (unsigned)st->held, (unsigned)st->held_max);
    stats_hist_text("acquire", &st->acquire_us);
    stats_hist_text("renewal", &st->renewal_us);
    stats_hist_text("handoff", &st->handoff_us);
    for (i = 0; i < a->n; i++) {
        const redlock_node_io_stats *io = &as.node[i];
        uint64_t sum = 0;
        char fails[160] = "";
        int j;
        for (j = 0; j < REDLOCK_NODE_FAIL_CLASSES; j++) sum += st->node_failures[i][j];
        if (sum)
            snprintf(fails, sizeof fails, "; %llu failed votes: connect %llu, timeout %llu, server %llu, protocol %llu, other %llu",
                     U_(sum), U_(st->node_failures[i][0]), U_(st->node_failures[i][1]), U_(st->node_failures[i][2]),
                     U_(st->node_failures[i][3]), U_(st->node_failures[i][4]));
        ERR("stats: node %s: %llu connects, %llu drops, %llu commands, %llu bytes out, %llu in%s", a->o->shown[i],
            U_(io->connects), U_(io->drops), U_(io->commands), U_(io->bytes_out), U_(io->bytes_in), fails);
    }
    g_verbose = k;
}

/* The JSON log's last line: redlock's exit code (or the signal that
   interrupted it, raised again), and for run how COMMAND ended. */
static void log_exit(const app *a, int code, int sig)
{
    log_begin("exit");
    log_int("code", code);
    if (sig) log_int("signal", sig);
    if (a->cmd_reaped && WIFEXITED(a->cmd_status)) log_int("status", WEXITSTATUS(a->cmd_status));
    if (a->cmd_reaped && WIFSIGNALED(a->cmd_status)) {
        log_int("status", 128 + WTERMSIG(a->cmd_status));
        log_int("command_signal", WTERMSIG(a->cmd_status));
    }
    log_end();
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
    g_json = o.log_json;
    g_name = o.name;
    if (g_json) setvbuf(stderr, g_errbuf, _IOFBF, sizeof g_errbuf);
    if (o.cmd == TOOL_CMD_HELP) {
        usage(stdout, o.help_for);
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
    a->vote_op = REDLOCK_OP_ACQUIRE;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) a->last_fd[i] = -1;
    a->watch_fd = -1;

    rc = open_socket(a, o.cmd == TOOL_CMD_INSPECT);
    if (rc == 0) {
        switch (o.cmd) {
        case TOOL_CMD_RUN: rc = cmd_run(a); break;
        case TOOL_CMD_ACQUIRE: rc = cmd_acquire(a); break;
        case TOOL_CMD_RELEASE: rc = cmd_release_extend(a, 1); break;
        case TOOL_CMD_EXTEND: rc = cmd_release_extend(a, 0); break;
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
    if (a->s_up && o.stats) print_stats(a);
    if (a->s_up) redlock_socket_deinit(&a->s);
    {
        int sig = a->abort_sig;
        if (sig && rc == 128 + sig) ERR("interrupted by signal %d", sig);
        else sig = 0;
        if (g_json) log_exit(a, rc, sig);
        free(a);
        tool_opts_free(&o);
        if (sig) reraise(sig);
    }
    signals_teardown();
    return rc;
}
