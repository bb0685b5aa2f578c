/* adapters/redlock_resp.h - RESP2 for redlock.h: a command encoder and a
   bounded, incremental reply parser. Sans-I/O, no dependencies but redlock.h.

   Do this:
       #define REDLOCK_RESP_IMPLEMENTATION
   before you include this file in *one* C or C++ file. The raw-socket
   adapter (redlock_socket.h) includes it, and emits its implementation
   with REDLOCK_SOCKET_IMPLEMENTATION.

   redlock_resp_encode() writes a command as a RESP2 array of bulk strings.
   redlock_resp_parser takes bytes in chunks of any size (whole replies,
   byte by byte, several replies at once) through redlock_resp_feed() and
   hands out complete replies as redlock_reply trees through
   redlock_resp_next(). Memory is bounded: a bulk string longer than
   REDLOCK_RESP_MAX_BULK, an array longer than REDLOCK_RESP_MAX_ELEMENTS,
   arrays nested deeper than REDLOCK_RESP_MAX_DEPTH, more than
   REDLOCK_RESP_MAX_VALUES values in one reply, a line longer than
   REDLOCK_RESP_MAX_LINE or more than REDLOCK_RESP_MAX_BUFFER unparsed bytes
   is a protocol error (REDLOCK_ERR_PROTOCOL; redlock_resp_error() says
   which). RESP3 frame types (% ~ _ , # ( = | > !) are rejected: this
   library never sends HELLO 3. A parser error is sticky: drop the
   connection. A reply from redlock_resp_next() stays valid until the next
   call to feed / next / reset / free on that parser.

   OPTIONS (define before including)
       REDLOCK_RESP_IMPLEMENTATION    emit the implementation here
       REDLOCK_RESP_STATIC            make every function static (set by
                                      REDLOCK_SOCKET_STATIC)
       REDLOCK_RESP_MAX_BULK          default 1 MiB
       REDLOCK_RESP_MAX_ELEMENTS      elements of one array, default 1024
       REDLOCK_RESP_MAX_VALUES        values in one reply, default 4096
       REDLOCK_RESP_MAX_DEPTH         array nesting, default 8
       REDLOCK_RESP_MAX_LINE          simple string / error / number line, default 64 KiB
       REDLOCK_RESP_MAX_BUFFER        unparsed bytes, default 4 MiB
*/
#ifndef REDLOCK_RESP_H
#define REDLOCK_RESP_H

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */

#ifndef REDLOCK_RESP_API
#ifdef REDLOCK_RESP_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_RESP_API static __attribute__((unused))
#else
#define REDLOCK_RESP_API static
#endif
#else
#define REDLOCK_RESP_API extern
#endif
#endif

#ifndef REDLOCK_RESP_MAX_BULK
#define REDLOCK_RESP_MAX_BULK (1024L * 1024L)
#endif
#ifndef REDLOCK_RESP_MAX_ELEMENTS
#define REDLOCK_RESP_MAX_ELEMENTS 1024L
#endif
#ifndef REDLOCK_RESP_MAX_VALUES
#define REDLOCK_RESP_MAX_VALUES 4096L
#endif
#ifndef REDLOCK_RESP_MAX_DEPTH
#define REDLOCK_RESP_MAX_DEPTH 8
#endif
#ifndef REDLOCK_RESP_MAX_LINE
#define REDLOCK_RESP_MAX_LINE (64L * 1024L)
#endif
#ifndef REDLOCK_RESP_MAX_BUFFER
#define REDLOCK_RESP_MAX_BUFFER (4L * 1024L * 1024L)
#endif
#if REDLOCK_RESP_MAX_DEPTH < 1 || REDLOCK_RESP_MAX_DEPTH > 64
#error "REDLOCK_RESP_MAX_DEPTH must be in 1..64"
#endif
#if REDLOCK_RESP_MAX_BUFFER < REDLOCK_RESP_MAX_BULK + REDLOCK_RESP_MAX_LINE
#error "REDLOCK_RESP_MAX_BUFFER must hold a bulk string and a line"
#endif
#if REDLOCK_RESP_MAX_VALUES < REDLOCK_RESP_MAX_ELEMENTS + 1
#error "REDLOCK_RESP_MAX_VALUES must exceed REDLOCK_RESP_MAX_ELEMENTS"
#endif

#ifdef __cplusplus
extern "C" {
#endif


/* Why a parser stopped (redlock_resp_error()); every one of them maps to
   REDLOCK_ERR_PROTOCOL, except NOMEM (REDLOCK_ERR_NOMEM). */
typedef enum redlock_resp_errcode {
    REDLOCK_RESP_E_NONE = 0,
    REDLOCK_RESP_E_TYPE,      /* unknown type byte */
    REDLOCK_RESP_E_RESP3,     /* a RESP3 type: % ~ _ , # ( = | > ! */
    REDLOCK_RESP_E_INTEGER,   /* malformed or out-of-range number */
    REDLOCK_RESP_E_BULK_LEN,  /* bulk length < -1 or > REDLOCK_RESP_MAX_BULK */
    REDLOCK_RESP_E_ARRAY_LEN, /* array length < -1 or > REDLOCK_RESP_MAX_ELEMENTS */
    REDLOCK_RESP_E_DEPTH,     /* arrays nested deeper than REDLOCK_RESP_MAX_DEPTH */
    REDLOCK_RESP_E_VALUES,    /* more than REDLOCK_RESP_MAX_VALUES values in a reply */
    REDLOCK_RESP_E_LINE,      /* line longer than REDLOCK_RESP_MAX_LINE */
    REDLOCK_RESP_E_CRLF,      /* missing / stray CR or LF */
    REDLOCK_RESP_E_BUFFER,    /* more than REDLOCK_RESP_MAX_BUFFER bytes unparsed */
    REDLOCK_RESP_E_NOMEM      /* malloc failed */
} redlock_resp_errcode;

typedef struct redlock__resp_val {
    int type;
    long long integer;
    size_t off, len, count;
} redlock__resp_val;

typedef struct redlock__resp_frame {
    size_t val, left;
} redlock__resp_frame;

/* Caller-owned; zero it or call redlock_resp_parser_init(). */
typedef struct redlock_resp_parser {
    char *_buf;
    size_t _len, _cap;
    size_t _pos, _scan, _consumed; /* _consumed: dead bytes at the front */
    int _returned;                 /* a reply was handed out; its values are live */
    int _err;
    int _bulk;
    size_t _bulk_len, _bulk_val;
    int _sp;
    redlock__resp_frame _stack[REDLOCK_RESP_MAX_DEPTH];
    redlock__resp_val *_vals;
    size_t _nvals, _vals_cap;
    redlock_reply *_out;
    size_t _out_cap;
} redlock_resp_parser;

/* Encodes argv as a RESP2 command into buf. argvlen NULL: strlen. Returns
   the bytes needed; writes only when that fits in cap. 0: bad arguments
   (argc < 1, argc > 1024, argv or an element NULL). */
REDLOCK_RESP_API size_t redlock_resp_encode(char *buf, size_t cap, int argc,
                                              const char *const *argv, const size_t *argvlen);
REDLOCK_RESP_API size_t redlock_resp_encode_command(char *buf, size_t cap, const redlock_command *cmd);

REDLOCK_RESP_API void redlock_resp_parser_init(redlock_resp_parser *p);
REDLOCK_RESP_API void redlock_resp_parser_free(redlock_resp_parser *p);
/* Drops buffered bytes and any error, keeps allocations. */
REDLOCK_RESP_API void redlock_resp_parser_reset(redlock_resp_parser *p);
/* Appends bytes. 0, or REDLOCK_ERR_PROTOCOL (buffer cap, or an earlier
   error), REDLOCK_ERR_NOMEM, REDLOCK_ERR_INVALID. */
REDLOCK_RESP_API int redlock_resp_feed(redlock_resp_parser *p, const void *data, size_t len);
/* 1: *reply is the next complete reply; 0: more bytes needed;
   REDLOCK_ERR_PROTOCOL / REDLOCK_ERR_NOMEM: broken (sticky). */
REDLOCK_RESP_API int redlock_resp_next(redlock_resp_parser *p, const redlock_reply **reply);
REDLOCK_RESP_API int redlock_resp_error(const redlock_resp_parser *p);
REDLOCK_RESP_API const char *redlock_resp_strerror(int resp_error);
/* Bytes fed and not yet handed out as replies. */
REDLOCK_RESP_API size_t redlock_resp_buffered(const redlock_resp_parser *p);
/* Heap bytes the parser holds. */
REDLOCK_RESP_API size_t redlock_resp_memory(const redlock_resp_parser *p);

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_RESP_H */

/* ======================================================================= */
/*                              IMPLEMENTATION                              */
/* ======================================================================= */
#if defined(REDLOCK_RESP_IMPLEMENTATION) && !defined(REDLOCK_RESP__IMPLEMENTED)
#define REDLOCK_RESP__IMPLEMENTED

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- RESP2 encoder ---- */

static size_t redlock__resp_num(char *out, unsigned long long v)
{
    char t[24];
    size_t n = 0, i;
    do {
        t[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++) out[i] = t[n - 1 - i];
    return n;
}

REDLOCK_RESP_API size_t redlock_resp_encode(char *buf, size_t cap, int argc,
                                              const char *const *argv, const size_t *argvlen)
{
    char num[24];
    size_t need, i, o;
    if (argc < 1 || argc > 1024 || !argv) return 0;
    need = 1 + redlock__resp_num(num, (unsigned long long)argc) + 2;
    for (i = 0; i < (size_t)argc; i++) {
        size_t l;
        if (!argv[i]) return 0;
        l = argvlen ? argvlen[i] : strlen(argv[i]);
        need += 1 + redlock__resp_num(num, l) + 2 + l + 2;
    }
    if (!buf || need > cap) return need;
    o = 0;
    buf[o++] = '*';
    o += redlock__resp_num(buf + o, (unsigned long long)argc);
    buf[o++] = '\r';
    buf[o++] = '\n';
    for (i = 0; i < (size_t)argc; i++) {
        size_t l = argvlen ? argvlen[i] : strlen(argv[i]);
        buf[o++] = '$';
        o += redlock__resp_num(buf + o, l);
        buf[o++] = '\r';
        buf[o++] = '\n';
        if (l) memcpy(buf + o, argv[i], l);
        o += l;
        buf[o++] = '\r';
        buf[o++] = '\n';
    }
    return o;
}

REDLOCK_RESP_API size_t redlock_resp_encode_command(char *buf, size_t cap, const redlock_command *cmd)
{
    if (!cmd || cmd->argc < 1 || cmd->argc > REDLOCK_MAX_ARGS) return 0;
    return redlock_resp_encode(buf, cap, cmd->argc, cmd->argv, cmd->argvlen);
}

/* ---- RESP2 parser ---- */

REDLOCK_RESP_API void redlock_resp_parser_init(redlock_resp_parser *p)
{
    if (p) memset(p, 0, sizeof *p);
}

REDLOCK_RESP_API void redlock_resp_parser_free(redlock_resp_parser *p)
{
    if (!p) return;
    free(p->_buf);
    free(p->_vals);
    free(p->_out);
    memset(p, 0, sizeof *p);
}

REDLOCK_RESP_API void redlock_resp_parser_reset(redlock_resp_parser *p)
{
    if (!p) return;
    p->_len = p->_pos = p->_scan = p->_consumed = 0;
    p->_returned = 0;
    p->_err = 0;
    p->_bulk = 0; /* _bulk_len and _bulk_val are read only while it is set */
    p->_sp = 0;
    p->_nvals = 0;
    if (p->_cap > 65536) { /* give back what a big reply took */
        free(p->_buf);
        p->_buf = NULL;
        p->_cap = 0;
    }
}

static int redlock__resp_status(int e)
{
    return e == REDLOCK_RESP_E_NOMEM ? REDLOCK_ERR_NOMEM : REDLOCK_ERR_PROTOCOL;
}

static int redlock__resp_fail(redlock_resp_parser *p, int e)
{
    p->_err = e;
    return redlock__resp_status(e);
}

/* Forgets the values of the reply handed out last. */
static void redlock__resp_forget(redlock_resp_parser *p)
{
    if (!p->_returned) return;
    p->_returned = 0;
    p->_nvals = 0;
    if (p->_consumed == p->_len) /* nothing left: restart at 0, no copy */
        p->_len = p->_pos = p->_scan = p->_consumed = 0;
}

/* Moves the unparsed bytes to the front (only when feeding, so a run of
   pipelined replies costs one move per chunk, not one per reply). */
static void redlock__resp_compact(redlock_resp_parser *p)
{
    size_t c, i;
    redlock__resp_forget(p);
    c = p->_consumed;
    if (c) {
        if (p->_len > c) memmove(p->_buf, p->_buf + c, p->_len - c);
        p->_len -= c;
        p->_pos -= c;
        p->_scan -= c;
        p->_consumed = 0;
        for (i = 0; i < p->_nvals; i++) /* values of the reply in progress */
            if (p->_vals[i].off >= c) p->_vals[i].off -= c;
    }
    if (p->_len == 0 && p->_cap > 65536) {
        free(p->_buf);
        p->_buf = NULL;
        p->_cap = 0;
    }
}

REDLOCK_RESP_API int redlock_resp_feed(redlock_resp_parser *p, const void *data, size_t len)
{
    if (!p || (!data && len)) return REDLOCK_ERR_INVALID;
    if (p->_err) return redlock__resp_status(p->_err);
    if (!len) return 0;
    redlock__resp_compact(p);
    if (len > (size_t)REDLOCK_RESP_MAX_BUFFER - p->_len) return redlock__resp_fail(p, REDLOCK_RESP_E_BUFFER);
    if (p->_len + len > p->_cap) {
        size_t cap = p->_cap ? p->_cap : 4096;
        char *nb;
        while (cap < p->_len + len) cap *= 2;
        if (cap > (size_t)REDLOCK_RESP_MAX_BUFFER) cap = (size_t)REDLOCK_RESP_MAX_BUFFER;
        nb = (char *)realloc(p->_buf, cap);
        if (!nb) return redlock__resp_fail(p, REDLOCK_RESP_E_NOMEM);
        p->_buf = nb;
        p->_cap = cap;
    }
    memcpy(p->_buf + p->_len, data, len);
    p->_len += len;
    return 0;
}

/* Strict decimal: [-]digits, no sign for positive, fits long long. */
static int redlock__resp_int(const char *s, size_t n, long long *out)
{
    unsigned long long v = 0, lim;
    size_t i = 0;
    int neg = 0;
    if (n && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == n || n - i > 19) return -1;
    lim = neg ? (unsigned long long)LLONG_MAX + 1ULL : (unsigned long long)LLONG_MAX;
    for (; i < n; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9') return -1;
        d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (neg) *out = v == (unsigned long long)LLONG_MAX + 1ULL ? LLONG_MIN : -(long long)v;
    else *out = (long long)v;
    return 0;
}

static redlock__resp_val *redlock__resp_new(redlock_resp_parser *p, int type)
{
    redlock__resp_val *v;
    if (p->_nvals >= (size_t)REDLOCK_RESP_MAX_VALUES) {
        redlock__resp_fail(p, REDLOCK_RESP_E_VALUES);
        return NULL;
    }
    if (p->_nvals == p->_vals_cap) {
        size_t cap = p->_vals_cap ? p->_vals_cap * 2 : 16;
        redlock__resp_val *nv;
        if (cap > (size_t)REDLOCK_RESP_MAX_VALUES) cap = (size_t)REDLOCK_RESP_MAX_VALUES;
        nv = (redlock__resp_val *)realloc(p->_vals, cap * sizeof *nv);
        if (!nv) {
            redlock__resp_fail(p, REDLOCK_RESP_E_NOMEM);
            return NULL;
        }
        p->_vals = nv;
        p->_vals_cap = cap;
    }
    v = &p->_vals[p->_nvals++];
    memset(v, 0, sizeof *v);
    v->type = type;
    return v;
}

/* A value is complete: count it in its array. 1 when the reply is done. */
static int redlock__resp_done(redlock_resp_parser *p)
{
    while (p->_sp > 0) {
        redlock__resp_frame *f = &p->_stack[p->_sp - 1];
        if (--f->left > 0) return 0;
        p->_sp--;
    }
    return 1;
}

/* Lays the pre-order values out as a tree whose arrays have contiguous
   children (what redlock_reply.element needs). Depth is bounded. */
static void redlock__resp_build(redlock_resp_parser *p, size_t *in, size_t slot, size_t *next)
{
    const redlock__resp_val *v = &p->_vals[(*in)++];
    redlock_reply *r = &p->_out[slot];
    memset(r, 0, sizeof *r);
    r->type = (redlock_reply_type)v->type;
    r->integer = v->integer;
    if (v->type == REDLOCK_REPLY_STATUS || v->type == REDLOCK_REPLY_ERROR || v->type == REDLOCK_REPLY_STRING) {
        r->str = p->_buf + v->off;
        r->len = v->len;
    } else if (v->type == REDLOCK_REPLY_ARRAY) {
        size_t first = *next, i;
        *next += v->count;
        r->elements = v->count;
        r->element = v->count ? &p->_out[first] : NULL;
        for (i = 0; i < v->count; i++) redlock__resp_build(p, in, first + i, next);
    }
}

static int redlock__resp_finish(redlock_resp_parser *p, const redlock_reply **reply)
{
    size_t in = 0, next = 1;
    if (p->_out_cap < p->_nvals) {
        size_t cap = p->_out_cap ? p->_out_cap : 16;
        redlock_reply *no;
        while (cap < p->_nvals) cap *= 2;
        no = (redlock_reply *)realloc(p->_out, cap * sizeof *no);
        if (!no) return redlock__resp_fail(p, REDLOCK_RESP_E_NOMEM);
        p->_out = no;
        p->_out_cap = cap;
    }
    redlock__resp_build(p, &in, 0, &next);
    p->_consumed = p->_pos;
    p->_returned = 1;
    *reply = &p->_out[0];
    return 1;
}

/* What one step of the parser did: needs more bytes (0), completed a
   value (VALUE), or read a header whose value is still to come (OPEN: a
   bulk string's body, an array's elements); < 0 the input is broken. */
enum { REDLOCK__RESP_VALUE = 1, REDLOCK__RESP_OPEN = 2 };

/* A bulk string's body and its CRLF. */
static int redlock__resp_bulk_body(redlock_resp_parser *p)
{
    redlock__resp_val *v;
    if (p->_len - p->_pos < p->_bulk_len + 2) return 0;
    if (p->_buf[p->_pos + p->_bulk_len] != '\r' || p->_buf[p->_pos + p->_bulk_len + 1] != '\n')
        return redlock__resp_fail(p, REDLOCK_RESP_E_CRLF);
    v = &p->_vals[p->_bulk_val];
    v->off = p->_pos;
    v->len = p->_bulk_len;
    p->_pos += p->_bulk_len + 2;
    p->_scan = p->_pos;
    p->_bulk = 0;
    return REDLOCK__RESP_VALUE;
}

/* The header line at _pos: its type byte is known (RESP2), it ends in
   CRLF within REDLOCK_RESP_MAX_LINE, with no CR inside. 1 with the line's
   content (*line, *clen) and the '\n' at *end; 0 needs more bytes. */
static int redlock__resp_line(redlock_resp_parser *p, const char **line, size_t *clen, size_t *end)
{
    const char *nl;
    size_t j;
    char c = p->_buf[p->_pos];
    if (c != '+' && c != '-' && c != ':' && c != '$' && c != '*') {
        if (c && strchr("%~_,#(=|>!", c)) return redlock__resp_fail(p, REDLOCK_RESP_E_RESP3);
        return redlock__resp_fail(p, REDLOCK_RESP_E_TYPE);
    }
    if (p->_scan < p->_pos + 1) p->_scan = p->_pos + 1;
    nl = p->_scan < p->_len ? (const char *)memchr(p->_buf + p->_scan, '\n', p->_len - p->_scan) : NULL;
    if (!nl) {
        p->_scan = p->_len;
        if (p->_len - p->_pos - 1 > (size_t)REDLOCK_RESP_MAX_LINE + 1) return redlock__resp_fail(p, REDLOCK_RESP_E_LINE);
        return 0;
    }
    j = (size_t)(nl - p->_buf);
    if (j - p->_pos - 1 > (size_t)REDLOCK_RESP_MAX_LINE + 1) return redlock__resp_fail(p, REDLOCK_RESP_E_LINE);
    if (p->_buf[j - 1] != '\r' || j - 1 == p->_pos) return redlock__resp_fail(p, REDLOCK_RESP_E_CRLF);
    *line = p->_buf + p->_pos + 1;
    *clen = j - 1 - (p->_pos + 1);
    *end = j;
    if (*clen > (size_t)REDLOCK_RESP_MAX_LINE) return redlock__resp_fail(p, REDLOCK_RESP_E_LINE);
    if (*clen && memchr(*line, '\r', *clen)) return redlock__resp_fail(p, REDLOCK_RESP_E_CRLF);
    return 1;
}

/* A '$' or '*' header of length n (not -1): the body, or the elements,
   come next; an empty array is a value already. */
static int redlock__resp_open(redlock_resp_parser *p, char c, long long n)
{
    redlock__resp_val *v;
    if (c == '$') {
        if (n < -1 || n > REDLOCK_RESP_MAX_BULK) return redlock__resp_fail(p, REDLOCK_RESP_E_BULK_LEN);
        if (!(v = redlock__resp_new(p, REDLOCK_REPLY_STRING))) return redlock__resp_status(p->_err);
        p->_bulk = 1;
        p->_bulk_len = (size_t)n;
        p->_bulk_val = p->_nvals - 1;
        return REDLOCK__RESP_OPEN;
    }
    if (n < -1 || n > REDLOCK_RESP_MAX_ELEMENTS) return redlock__resp_fail(p, REDLOCK_RESP_E_ARRAY_LEN);
    if (n > 0 && p->_sp >= REDLOCK_RESP_MAX_DEPTH) return redlock__resp_fail(p, REDLOCK_RESP_E_DEPTH);
    if (!(v = redlock__resp_new(p, REDLOCK_REPLY_ARRAY))) return redlock__resp_status(p->_err);
    v->count = (size_t)n;
    if (n == 0) return REDLOCK__RESP_VALUE;
    p->_stack[p->_sp].val = p->_nvals - 1;
    p->_stack[p->_sp].left = (size_t)n;
    p->_sp++;
    return REDLOCK__RESP_OPEN;
}

/* One value's header line (and, for the simple types, the value). */
static int redlock__resp_header(redlock_resp_parser *p)
{
    const char *line = NULL;
    size_t clen = 0, j = 0;
    long long n;
    char c = p->_buf[p->_pos];
    redlock__resp_val *v;
    int rc = redlock__resp_line(p, &line, &clen, &j);
    if (rc <= 0) return rc;
    if (c == '+' || c == '-') {
        if (!(v = redlock__resp_new(p, c == '+' ? REDLOCK_REPLY_STATUS : REDLOCK_REPLY_ERROR)))
            return redlock__resp_status(p->_err);
        v->off = p->_pos + 1;
        v->len = clen;
        rc = REDLOCK__RESP_VALUE;
    } else if (redlock__resp_int(line, clen, &n) != 0) {
        return redlock__resp_fail(p, REDLOCK_RESP_E_INTEGER);
    } else if (c == ':') {
        if (!(v = redlock__resp_new(p, REDLOCK_REPLY_INTEGER))) return redlock__resp_status(p->_err);
        v->integer = n;
        rc = REDLOCK__RESP_VALUE;
    } else if (n == -1) {
        if (!redlock__resp_new(p, REDLOCK_REPLY_NIL)) return redlock__resp_status(p->_err);
        rc = REDLOCK__RESP_VALUE;
    } else if ((rc = redlock__resp_open(p, c, n)) < 0) {
        return rc;
    }
    p->_pos = j + 1;
    p->_scan = p->_pos;
    return rc;
}

REDLOCK_RESP_API int redlock_resp_next(redlock_resp_parser *p, const redlock_reply **reply)
{
    if (!p || !reply) return REDLOCK_ERR_INVALID;
    *reply = NULL;
    if (p->_err) return redlock__resp_status(p->_err);
    redlock__resp_forget(p);
    for (;;) {
        int rc;
        if (p->_bulk) rc = redlock__resp_bulk_body(p);
        else if (p->_pos == p->_len) rc = 0;
        else rc = redlock__resp_header(p);
        if (rc <= 0) return rc; /* more bytes needed, or broken */
        if (rc == REDLOCK__RESP_VALUE && redlock__resp_done(p)) return redlock__resp_finish(p, reply);
    }
}

REDLOCK_RESP_API int redlock_resp_error(const redlock_resp_parser *p)
{
    return p ? p->_err : REDLOCK_RESP_E_NONE;
}

REDLOCK_RESP_API const char *redlock_resp_strerror(int e)
{
    switch (e) {
    case REDLOCK_RESP_E_NONE: return "no error";
    case REDLOCK_RESP_E_TYPE: return "unknown RESP type byte";
    case REDLOCK_RESP_E_RESP3: return "unexpected RESP3 frame";
    case REDLOCK_RESP_E_INTEGER: return "malformed number";
    case REDLOCK_RESP_E_BULK_LEN: return "bulk length out of range";
    case REDLOCK_RESP_E_ARRAY_LEN: return "array length out of range";
    case REDLOCK_RESP_E_DEPTH: return "arrays nested too deep";
    case REDLOCK_RESP_E_VALUES: return "too many values in one reply";
    case REDLOCK_RESP_E_LINE: return "line too long";
    case REDLOCK_RESP_E_CRLF: return "bad line ending";
    case REDLOCK_RESP_E_BUFFER: return "too many unparsed bytes";
    case REDLOCK_RESP_E_NOMEM: return "out of memory";
    default: return "unknown parser error";
    }
}

REDLOCK_RESP_API size_t redlock_resp_buffered(const redlock_resp_parser *p)
{
    return p ? p->_len - p->_consumed : 0;
}

REDLOCK_RESP_API size_t redlock_resp_memory(const redlock_resp_parser *p)
{
    if (!p) return 0;
    return p->_cap + p->_vals_cap * sizeof(redlock__resp_val) + p->_out_cap * sizeof(redlock_reply);
}

#ifdef __cplusplus
}
#endif

#endif /* REDLOCK_RESP_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License - see the end of redlock.h. Copyright (c) 2026 The redlock.h authors
------------------------------------------------------------------------------
*/
