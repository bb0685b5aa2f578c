/* redlock_hiredis_common.h - what redlock_hiredis.h and redlock_libev.h
   share: translating hiredis's redisReply into the core's redlock_reply,
   spotting authentication errors, the monotonic clock. Internal: include
   one of those two adapters instead. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <hiredis/hiredis.h>
#include "redlock.h"

#ifndef REDLOCK__HIREDIS_REPLY_DEFINED
#define REDLOCK__HIREDIS_REPLY_DEFINED
#define REDLOCK__HIREDIS_MAX_ELEMS 16
/* A translated reply: top level plus one level of array elements (deeper
   arrays, and arrays longer than REDLOCK__HIREDIS_MAX_ELEMS, are OTHER:
   the core never needs them). Points into the redisReply. */
typedef struct redlock__hiredis_reply {
    redlock_reply top;
    redlock_reply elem[REDLOCK__HIREDIS_MAX_ELEMS];
} redlock__hiredis_reply;

static inline void redlock__hiredis_one(const redisReply *r, redlock_reply *out)
{
    memset(out, 0, sizeof *out);
    out->type = REDLOCK_REPLY_OTHER;
    if (!r) return;
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

static inline const redlock_reply *redlock__hiredis_translate(const redisReply *r,
                                                              redlock__hiredis_reply *buf)
{
    redlock__hiredis_one(r, &buf->top);
    if (buf->top.type == REDLOCK_REPLY_ARRAY) {
        size_t i;
        if (r->elements > REDLOCK__HIREDIS_MAX_ELEMS) {
            buf->top.type = REDLOCK_REPLY_OTHER;
        } else {
            for (i = 0; i < r->elements; i++) {
                redlock__hiredis_one(r->element[i], &buf->elem[i]);
                if (buf->elem[i].type == REDLOCK_REPLY_ARRAY) buf->elem[i].type = REDLOCK_REPLY_OTHER;
            }
            buf->top.element = buf->elem;
            buf->top.elements = r->elements;
        }
    }
    return &buf->top;
}

/* A node's error text: msg cut to fit, terminated, replacing what was there. */
static inline void redlock__hiredis_set_text(char *dst, size_t cap, const char *msg)
{
    size_t l = msg ? strlen(msg) : 0;
    if (l >= cap) l = cap - 1;
    if (l) memcpy(dst, msg, l);
    dst[l] = 0;
}

/* -NOAUTH / -WRONGPASS: the node wants (other) credentials. */
static inline int redlock__hiredis_auth_error(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && r->str &&
           (strncmp(r->str, "NOAUTH", 6) == 0 || strncmp(r->str, "WRONGPASS", 9) == 0);
}

#include <time.h>
#ifndef CLOCK_MONOTONIC
#error "clock_gettime() is not declared: include the redlock adapter before any system header, or build with -D_POSIX_C_SOURCE=200809L"
#endif

static inline int64_t redlock__hiredis_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
/* An idle connection (no reply owed) that is readable was closed by the
   node (a restart) or got bytes nobody asked for: either way it is done. */
static inline int redlock__hiredis_idle_broken(int fd)
{
    struct pollfd pf;
    pf.fd = fd;
    pf.events = POLLIN;
    pf.revents = 0;
    return poll(&pf, 1, 0) > 0;
}

/* strdup is POSIX, not C99 */
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
#endif /* REDLOCK__HIREDIS_REPLY_DEFINED */
