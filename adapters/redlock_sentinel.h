/* adapters/redlock_sentinel.h - what a transport needs to find and keep a
   Sentinel-managed group's primary: the question to the sentinels
   (SENTINEL get-master-addr-by-name), their answer, the check that a
   server is a primary (ROLE), and the error replies that mean it is not
   (any more): READONLY, LOADING, MASTERDOWN. Sans-I/O: no socket, no
   clock.

       const char *argv[3]; size_t len[3];
       redlock_sentinel_ask_argv("mymaster", argv, len);    // to a sentinel
       ... its reply r ...
       char host[REDLOCK_SENTINEL_MAX_HOST + 1]; int port;
       if (redlock_sentinel_primary_addr(&r, host, sizeof host, &port) == 0)
           ... connect to host:port, send ROLE first ...
       if (redlock_sentinel_role(&role_reply) != REDLOCK_SENTINEL_PRIMARY)
           ... not the primary (a failover is under way): ask again ...

   A node never votes through a replica: a replica's keys are copies that
   may lag, and it refuses writes. The adapters ask the sentinels on every
   (re)connection, so a failover is followed at the next connection, and
   watch +switch-master on one more connection to a sentinel
   (redlock_sentinel_switch_argv, redlock_sentinel_watch_reply), so it is
   heard as it happens; a new primary is a server that may lack the latest
   keys (redlock.h section 4, Restarts: redlock_node_failed_over).

   THREADS: no state of its own. */
#ifndef REDLOCK_SENTINEL_H
#define REDLOCK_SENTINEL_H

#include "../redlock.h"

#include <string.h>

#define REDLOCK_SENTINEL_MAX_HOST 255

enum { REDLOCK_SENTINEL_OTHER = 0, REDLOCK_SENTINEL_PRIMARY = 1 };

/* SENTINEL get-master-addr-by-name MASTER into argv/len; returns argc (3). */
static inline int redlock_sentinel_ask_argv(const char *master, const char *argv[3], size_t len[3]);
/* A sentinel's answer: 0 and host (NUL-terminated) / *port; 1 when it
   does not know the group (nil); -1 when malformed (or the host does not
   fit cap, or is not a host name). */
static inline int redlock_sentinel_primary_addr(const redlock_reply *r, char *host, size_t cap, int *port);
/* SENTINEL MASTER MASTER into argv/len; returns argc (3). */
static inline int redlock_sentinel_master_argv(const char *master, const char *argv[3], size_t len[3]);
/* A sentinel's SENTINEL MASTER answer (field, value, ...): 1 when the
   group has failed over since the sentinel knows it (config-epoch > 0),
   with *ago_ms the time since the sentinel saw the current primary take
   that role (role-reported-time); 0 when it never failed over; -1 when
   malformed or refused. */
static inline int redlock_sentinel_last_failover(const redlock_reply *r, int64_t *ago_ms);
/* ROLE's answer: REDLOCK_SENTINEL_PRIMARY ("master"), REDLOCK_SENTINEL_OTHER
   (a replica, a sentinel), or -1 (malformed, or an error: ROLE refused). */
static inline int redlock_sentinel_role(const redlock_reply *r);
/* SUBSCRIBE +switch-master into argv/len, for a connection to a
   sentinel: each failover it sees is then told as it happens (below);
   returns argc (2). */
static inline int redlock_sentinel_switch_argv(const char *argv[2], size_t len[2]);
/* A message a sentinel sends on +switch-master (["message",
   "+switch-master", "NAME OLD-HOST OLD-PORT NEW-HOST NEW-PORT"]): 1 when
   it names `master`, with the new primary's host (NUL-terminated, cap
   bytes) and *port; 0 when it is about another group, or is no such
   message (a SUBSCRIBE's confirmation, another channel); -1 when
   malformed. */
static inline int redlock_sentinel_switched(const redlock_reply *r, const char *master, char *host, size_t cap,
                                            int *port);
/* What a reply on a +switch-master watch (a connection that sent
   SUBSCRIBE +switch-master) means for group `master`:
   REDLOCK_SENTINEL_WATCH_CONFIRMED: SUBSCRIBE's confirmation;
   REDLOCK_SENTINEL_WATCH_SWITCHED: the group failed over, the new
   primary in host / *port (as redlock_sentinel_switched); _OTHER: a
   failover of another group (nothing to do); _BAD: anything else (an
   error, a malformed message): the watch cannot be trusted, close it. */
enum { REDLOCK_SENTINEL_WATCH_BAD = -1, REDLOCK_SENTINEL_WATCH_OTHER = 0, REDLOCK_SENTINEL_WATCH_SWITCHED = 1,
       REDLOCK_SENTINEL_WATCH_CONFIRMED = 2 };
static inline int redlock_sentinel_watch_reply(const redlock_reply *r, const char *master, char *host, size_t cap,
                                               int *port);
/* 1 when an error reply says the server is not the primary now:
   READONLY (a replica), LOADING (a restart reading its data), MASTERDOWN
   (a replica that lost its primary); also when a script met one of them
   on a server before 7.0, which wraps it ("ERR Error running script
   (call to f_...): @user_script:1: @user_script: 1: -READONLY ..."). */
static inline int redlock_sentinel_not_primary(const char *err, size_t len);
/* (private, shared with redlock_conn.h, which keeps a server's words) A
   server before 7.0 wraps the error a script's call met: "ERR Error
   running script (call to f_<sha1>): @user_script:1: @user_script: 1:
   -READONLY You can't write ..."; moves *err, *len to the wrapped error
   ("READONLY You can't ..."), if there is one. */
static inline void redlock__script_error_unwrap(const char **err, size_t *len);

/* ---- implementation ---- */

static inline int redlock_sentinel_ask_argv(const char *master, const char *argv[3], size_t len[3])
{
    argv[0] = "SENTINEL";
    len[0] = 8;
    argv[1] = "get-master-addr-by-name";
    len[1] = 23;
    argv[2] = master ? master : "";
    len[2] = strlen(argv[2]);
    return 3;
}

static inline int redlock_sentinel_master_argv(const char *master, const char *argv[3], size_t len[3])
{
    argv[0] = "SENTINEL";
    len[0] = 8;
    argv[1] = "MASTER";
    len[1] = 6;
    argv[2] = master ? master : "";
    len[2] = strlen(argv[2]);
    return 3;
}

/* A decimal field's value (a bulk string of digits, at most 18): 0 and *v, or -1. */
static inline int redlock__sentinel_num(const redlock_reply *r, int64_t *v)
{
    size_t i;
    if (r->type != REDLOCK_REPLY_STRING || r->len == 0 || r->len > 18) return -1;
    for (*v = 0, i = 0; i < r->len; i++) {
        if (r->str[i] < '0' || r->str[i] > '9') return -1;
        *v = *v * 10 + (r->str[i] - '0');
    }
    return 0;
}

static inline int redlock_sentinel_last_failover(const redlock_reply *r, int64_t *ago_ms)
{
    int64_t epoch = -1, ago = -1;
    size_t i;
    if (!r || !ago_ms || r->type != REDLOCK_REPLY_ARRAY || r->elements % 2) return -1;
    for (i = 0; i < r->elements; i += 2) {
        const redlock_reply *k = &r->element[i], *v = &r->element[i + 1];
        if (k->type != REDLOCK_REPLY_STRING) return -1;
        if (k->len == 12 && memcmp(k->str, "config-epoch", 12) == 0 && redlock__sentinel_num(v, &epoch) != 0) return -1;
        if (k->len == 18 && memcmp(k->str, "role-reported-time", 18) == 0 && redlock__sentinel_num(v, &ago) != 0) return -1;
    }
    if (epoch < 0 || ago < 0) return -1;
    *ago_ms = ago;
    return epoch > 0;
}

/* A host as a sentinel names it: no blank, control or URL character. */
static inline int redlock__sentinel_host_ok(const char *h, size_t len)
{
    size_t i;
    if (len == 0 || len > REDLOCK_SENTINEL_MAX_HOST) return 0;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c <= ' ' || c == 127 || c == '@' || c == '/' || c == ',' || c == '[' || c == ']') return 0;
    }
    return 1;
}

/* A port's digits: 1..65535, else -1. */
static inline int redlock__sentinel_port(const char *p, size_t len)
{
    long v = 0;
    size_t i;
    if (len == 0 || len > 5) return -1;
    for (i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v >= 1 && v <= 65535 ? (int)v : -1;
}

static inline int redlock_sentinel_primary_addr(const redlock_reply *r, char *host, size_t cap, int *port)
{
    const redlock_reply *h, *p;
    int at;
    if (!r || !host || !port || cap == 0) return -1;
    host[0] = 0;
    if (r->type == REDLOCK_REPLY_NIL) return 1;
    if (r->type != REDLOCK_REPLY_ARRAY || r->elements != 2) return -1;
    h = &r->element[0];
    p = &r->element[1];
    if (h->type != REDLOCK_REPLY_STRING || p->type != REDLOCK_REPLY_STRING || !redlock__sentinel_host_ok(h->str, h->len) ||
        h->len >= cap || (at = redlock__sentinel_port(p->str, p->len)) < 0)
        return -1;
    memcpy(host, h->str, h->len);
    host[h->len] = 0;
    *port = at;
    return 0;
}

static inline int redlock_sentinel_role(const redlock_reply *r)
{
    const redlock_reply *k;
    if (!r || r->type != REDLOCK_REPLY_ARRAY || r->elements < 1) return -1;
    k = &r->element[0];
    if (k->type != REDLOCK_REPLY_STRING && k->type != REDLOCK_REPLY_STATUS) return -1;
    if (k->len == 6 && memcmp(k->str, "master", 6) == 0) return REDLOCK_SENTINEL_PRIMARY;
    if ((k->len == 5 && memcmp(k->str, "slave", 5) == 0) || (k->len == 7 && memcmp(k->str, "replica", 7) == 0) ||
        (k->len == 8 && memcmp(k->str, "sentinel", 8) == 0))
        return REDLOCK_SENTINEL_OTHER;
    return -1;
}

static inline int redlock_sentinel_switch_argv(const char *argv[2], size_t len[2])
{
    argv[0] = "SUBSCRIBE";
    len[0] = 9;
    argv[1] = "+switch-master";
    len[1] = 14;
    return 2;
}

static inline int redlock_sentinel_switched(const redlock_reply *r, const char *master, char *host, size_t cap,
                                            int *port)
{
    const redlock_reply *w, *ch, *msg;
    const char *f[5];
    size_t fl[5], i = 0;
    int k, at;
    if (!r || !master || !host || !port || cap == 0) return -1;
    host[0] = 0;
    if (r->type != REDLOCK_REPLY_ARRAY || r->elements != 3) return 0;
    w = &r->element[0];
    ch = &r->element[1];
    msg = &r->element[2];
    if (w->type != REDLOCK_REPLY_STRING || w->len != 7 || memcmp(w->str, "message", 7) != 0) return 0;
    if (ch->type != REDLOCK_REPLY_STRING || ch->len != 14 || memcmp(ch->str, "+switch-master", 14) != 0) return 0;
    if (msg->type != REDLOCK_REPLY_STRING) return -1;
    for (k = 0; k < 5; k++) { /* five words, one blank apart */
        f[k] = msg->str + i;
        while (i < msg->len && msg->str[i] != ' ') i++;
        fl[k] = (size_t)(msg->str + i - f[k]);
        if (fl[k] == 0 || (k < 4 && i == msg->len)) return -1;
        if (k < 4) i++;
    }
    if (i != msg->len) return -1;
    if (fl[0] != strlen(master) || memcmp(f[0], master, fl[0]) != 0) return 0;
    if (!redlock__sentinel_host_ok(f[3], fl[3]) || fl[3] >= cap || (at = redlock__sentinel_port(f[4], fl[4])) < 0)
        return -1;
    memcpy(host, f[3], fl[3]);
    host[fl[3]] = 0;
    *port = at;
    return 1;
}

static inline int redlock_sentinel_watch_reply(const redlock_reply *r, const char *master, char *host, size_t cap,
                                               int *port)
{
    int said = redlock_sentinel_switched(r, master, host, cap, port);
    const redlock_reply *w, *ch;
    if (said != 0) return said > 0 ? REDLOCK_SENTINEL_WATCH_SWITCHED : REDLOCK_SENTINEL_WATCH_BAD;
    if (!r || r->type != REDLOCK_REPLY_ARRAY || r->elements != 3) return REDLOCK_SENTINEL_WATCH_BAD;
    w = &r->element[0];
    ch = &r->element[1];
    if (w->type != REDLOCK_REPLY_STRING || ch->type != REDLOCK_REPLY_STRING || ch->len != 14 ||
        memcmp(ch->str, "+switch-master", 14) != 0)
        return REDLOCK_SENTINEL_WATCH_BAD;
    if (w->len == 9 && memcmp(w->str, "subscribe", 9) == 0) return REDLOCK_SENTINEL_WATCH_CONFIRMED;
    if (w->len == 7 && memcmp(w->str, "message", 7) == 0) return REDLOCK_SENTINEL_WATCH_OTHER; /* another group's */
    return REDLOCK_SENTINEL_WATCH_BAD;
}

static inline void redlock__script_error_unwrap(const char **err, size_t *len)
{
    static const char wrap[] = "ERR Error running script";
    size_t i;
    if (!*err || *len < sizeof wrap - 1 || memcmp(*err, wrap, sizeof wrap - 1) != 0) return;
    for (i = sizeof wrap - 1; i + 3 <= *len; i++)
        if (memcmp(*err + i, ": -", 3) == 0) { /* the wrapped error's code follows */
            *err += i + 3;
            *len -= i + 3;
            return;
        }
}

static inline int redlock_sentinel_not_primary(const char *err, size_t len)
{
    redlock__script_error_unwrap(&err, &len);
    return err && ((len >= 8 && memcmp(err, "READONLY", 8) == 0) || (len >= 7 && memcmp(err, "LOADING", 7) == 0) ||
                   (len >= 10 && memcmp(err, "MASTERDOWN", 10) == 0));
}

#endif /* REDLOCK_SENTINEL_H */
