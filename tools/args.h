/* tools/args.h - command line of the `redlock` tool: subcommands, options,
   durations and node specs (host:port, unix socket paths, redis:// and
   unix:// URLs). Pure parsing, no I/O: tools/redlock.c does the rest.

   Passwords: a node's password is kept only in tool_node.pass. Messages use
   tool_node.display, where a password is shown as "***". */
#ifndef REDLOCK_TOOL_ARGS_H
#define REDLOCK_TOOL_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "redlock.h"

/* Exit codes (documented in --help and tools/README.md). */
enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_NOT_HELD = 1,     /* release/extend: the token does not hold the lock */
    TOOL_EXIT_USAGE = 64,       /* EX_USAGE: bad command line */
    TOOL_EXIT_UNREACHABLE = 69, /* EX_UNAVAILABLE: too few nodes reachable */
    TOOL_EXIT_INTERNAL = 70,    /* EX_SOFTWARE: fork/pipe/memory failure */
    TOOL_EXIT_BUSY = 75,        /* EX_TEMPFAIL: held by someone else, wait over */
    TOOL_EXIT_PROTOCOL = 76,    /* EX_PROTOCOL: a node is not speaking Redis as expected */
    TOOL_EXIT_LOST = 77,        /* run: the lock was lost while COMMAND ran */
    TOOL_EXIT_AUTH = 78,        /* EX_CONFIG: AUTH or SELECT refused */
    TOOL_EXIT_CANNOT_EXEC = 126,
    TOOL_EXIT_NOT_FOUND = 127
};

enum { TOOL_CMD_NONE, TOOL_CMD_RUN, TOOL_CMD_ACQUIRE, TOOL_CMD_RELEASE, TOOL_CMD_EXTEND,
       TOOL_CMD_INSPECT, TOOL_CMD_HELP, TOOL_CMD_VERSION };

enum { TOOL_ON_LOST_TERM, TOOL_ON_LOST_KILL, TOOL_ON_LOST_IGNORE };

typedef struct tool_node {
    char *display;   /* for messages: password replaced by "***" */
    char *host;      /* TCP host (NULL for unix sockets) */
    int port;
    char *unix_path; /* unix socket path, or NULL */
    char *user;      /* ACL user or NULL */
    char *pass;      /* password or NULL */
    int db;          /* SELECT db (0: none) */
} tool_node;

typedef struct tool_opts {
    int cmd;
    int node_count;
    tool_node nodes[REDLOCK_MAX_NODES];
    int64_t ttl_ms;          /* -t, default 30 s */
    int64_t wait_ms;         /* -w, default 30 s; 0 = --no-wait */
    int64_t retry_delay_ms;  /* --retry-delay, default 200 ms */
    int64_t node_timeout_ms; /* --node-timeout, default 200 ms */
    int64_t kill_after_ms;   /* --kill-after, default 5 s */
    redlock_mode mode;       /* --mode / --legacy */
    int on_lost;             /* --on-lost */
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

/* One node spec. Returns 0, or -1 with a one-line reason in err (which
   never contains a password). */
int tool_parse_node(const char *spec, tool_node *n, char *err, size_t errlen);

/* A comma-separated list of node specs, appended to o->nodes. Rejects
   duplicates and more than REDLOCK_MAX_NODES nodes. */
int tool_parse_nodes(const char *list, tool_opts *o, char *err, size_t errlen);

/* The whole command line. Reads REDLOCK_NODES when -n is absent. Returns 0,
   or TOOL_EXIT_USAGE with a one-line message in err. Passwords given with
   -n are overwritten in argv afterwards (so `ps` does not show them). */
int tool_parse_args(int argc, char **argv, tool_opts *o, char *err, size_t errlen);

/* Frees the node strings (passwords wiped first). */
void tool_opts_free(tool_opts *o);

/* Writes "1.234s" / "250ms" style text. */
void tool_format_ms(char *out, size_t cap, int64_t ms);

#endif
