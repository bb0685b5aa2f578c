/* tools/args.h - command line of the `redlock` tool: subcommands, options
   and durations; node lists (host:port, unix socket paths, redis:// and
   unix:// URLs, REDLOCK_NODES) through the adapters' redlock_parse_nodes()
   (adapters/redlock_nodes.h). Pure parsing, no I/O: tools/redlock.c does
   the rest.

   Passwords: a node's password is kept only in net.node[i].password (in
   node_mem, wiped when freed). Messages use shown[i], where a password is
   "***" (redlock_format_node()). */
#ifndef REDLOCK_TOOL_ARGS_H
#define REDLOCK_TOOL_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "adapters/redlock_socket.h"

/* Exit codes (documented in --help and tools/README.md). */
enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_NOT_HELD = 1,     /* release/extend: the token does not hold the lock; inspect: free */
    TOOL_EXIT_USAGE = 64,       /* EX_USAGE: bad command line */
    TOOL_EXIT_UNREACHABLE = 69, /* EX_UNAVAILABLE: too few nodes usable (inspect: answered) */
    TOOL_EXIT_INTERNAL = 70,    /* EX_SOFTWARE: fork/pipe/memory failure */
    TOOL_EXIT_BUSY = 75,        /* EX_TEMPFAIL: held by someone else, or nodes that restarted
                                   recently do not count yet; wait over */
    TOOL_EXIT_PROTOCOL = 76,    /* EX_PROTOCOL: not Redis as expected, or an error reply */
    TOOL_EXIT_LOST = 77,        /* run: the lock was lost while COMMAND ran */
    TOOL_EXIT_AUTH = 78,        /* EX_CONFIG: AUTH (or a password required) or SELECT refused, or
                                   too many nodes may evict keys for a lock that refuses them */
    TOOL_EXIT_CANNOT_EXEC = 126,
    TOOL_EXIT_NOT_FOUND = 127
};

enum { TOOL_CMD_NONE, TOOL_CMD_RUN, TOOL_CMD_ACQUIRE, TOOL_CMD_RELEASE, TOOL_CMD_EXTEND,
       TOOL_CMD_INSPECT, TOOL_CMD_HELP, TOOL_CMD_VERSION };

enum { TOOL_ON_LOST_TERM, TOOL_ON_LOST_KILL, TOOL_ON_LOST_IGNORE };

enum { TOOL_STATS_NONE, TOOL_STATS_LOG, TOOL_STATS_TEXT, TOOL_STATS_JSON };

typedef struct tool_opts {
    int cmd;
    int node_count;
    redlock_socket_config net; /* net.node[0..node_count): the nodes */
    char shown[REDLOCK_MAX_NODES][256]; /* each node for messages, password "***" */
    void *node_mem;            /* the nodes' strings (redlock_free_nodes) */
    int64_t ttl_ms;          /* -t, default 30 s */
    int64_t wait_ms;         /* -w, default 30 s; 0 = --no-wait */
    int64_t retry_delay_ms;  /* --retry-delay, default 200 ms */
    int64_t node_timeout_ms; /* --node-timeout, default 200 ms */
    int64_t kill_after_ms;   /* --kill-after, default 5 s */
    int64_t max_ttl_ms;      /* --max-ttl, default 0: the lock's own ttl (redlock_config.max_ttl_ms) */
    int wait_replicas;       /* --wait-replicas N[/TIMEOUT], default 0: no WAIT (redlock_config.wait_replicas) */
    int64_t wait_replicas_ms; /* its TIMEOUT, default 0: the node timeout (redlock_config.wait_timeout_ms) */
    redlock_mode mode;       /* --mode / --legacy */
    int on_lost;             /* --on-lost */
    int foreground;          /* run --foreground: COMMAND stays in redlock's process group */
    int reentrant;           /* run --reentrant: the owner may hold NAME again inside COMMAND */
    const char *owner;       /* run: --owner, else inherited (REDLOCK_OWNER_SCOPE, REDLOCK_OWNER); NULL: the lock's default */
    char owner_mem[REDLOCK_MAX_OWNER + 1]; /* an owner taken from REDLOCK_OWNER_SCOPE */
    char nodes_id[17];       /* the node list's identity in REDLOCK_OWNER_SCOPE (16 hex digits) */
    int fence;               /* run --fence: a fenced lock, COMMAND gets $REDLOCK_FENCE */
    redlock_access access;   /* run -s / -x: a readers-writer lock (shared / exclusive) */
    int refuse_evicting;     /* run, acquire --evicting: 1 refuse, -1 count, 0 the lock's default
                                (refused for --fence); redlock_lock_opts.refuse_evicting */
    const char *label;       /* run, acquire: --label (the token's label is it and ':'); NULL: host:pid */
    int no_label;            /* --no-label: tokens of 32 hex digits only */
    int json;                /* inspect --json */
    int log_json;            /* --log-format json: stderr is one JSON object per event */
    int stats;               /* --stats[=text|json] (TOOL_STATS_*; LOG: as the log) */
    int help_for;            /* TOOL_CMD_HELP: the subcommand whose help (TOOL_CMD_NONE: all) */
    int verbose;             /* -1 quiet (-q), 0 default, 1 verbose (-v) */
    const char *name;        /* the lock's key */
    const char *token;       /* release / extend */
    char **child_argv;       /* run: COMMAND ARGS..., NULL-terminated (points into argv) */
} tool_opts;

#define TOOL_DEFAULT_TTL_MS 30000
#define TOOL_DEFAULT_WAIT_MS 30000
#define TOOL_DEFAULT_RETRY_DELAY_MS 200
#define TOOL_DEFAULT_NODE_TIMEOUT_MS 200
#define TOOL_DEFAULT_KILL_AFTER_MS 5000
#define TOOL_MIN_TTL_MS 10
#define TOOL_MAX_DURATION_MS ((int64_t)1 << 40)

/* "1500ms", "10s", "2m", "1h", "1.5s"; a bare number is seconds. Returns 0
   and sets *ms (rounded to the nearest millisecond), or -1. */
int tool_parse_duration(const char *s, int64_t *ms);

/* The whole command line (getopt_long; options before or after the
   subcommand, combined short flags, --opt=value). Reads REDLOCK_NODES when
   -n is absent. An option that does not apply to the subcommand is an
   error. `--help` / `help` give TOOL_CMD_HELP with help_for set. Returns 0,
   or TOOL_EXIT_USAGE with a one-line message in err. Passwords given with
   -n are overwritten in argv afterwards (so `ps` does not show them). */
int tool_parse_args(int argc, char **argv, tool_opts *o, char *err, size_t errlen);

/* Inherited owners: a `run --reentrant` hands COMMAND its owner id in
   REDLOCK_OWNER and, in REDLOCK_OWNER_SCOPE, which lock that owner holds:
   entries "NODES NAME OWNER" separated by spaces (NODES: nodes_id; NAME
   with '%', spaces and bytes outside printable ASCII written %XX). A run
   below re-enters a lock only when an entry names it on the same nodes
   (and REDLOCK_OWNER is set); tool_parse_args() does that. This returns
   the value for COMMAND of a reentrant run of o->name held by `owner`:
   the enclosing runs' entries (none when REDLOCK_OWNER is unset) and its
   own. malloc'd; NULL when out of memory. */
char *tool_owner_scope(const tool_opts *o, const char *owner);

/* A token as redlock.h makes it: a label (0..REDLOCK_MAX_LABEL printable
   bytes, no space) and REDLOCK_TOKEN_LEN hex digits, read by the library's
   decoder (redlock_value_from_get). 1 (and the label's length in
   *label_len, if given) or 0. */
int tool_token_split(const char *s, size_t len, size_t *label_len);

/* Frees the node strings (passwords wiped first). */
void tool_opts_free(tool_opts *o);

/* Writes "1.234s" / "250ms" style text. */
void tool_format_ms(char *out, size_t cap, int64_t ms);

#endif
