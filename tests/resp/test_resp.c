/* test_resp.c - RESP2 encoder and incremental parser of adapters/redlock_resp.h
   (through adapters/redlock_socket.h, which includes it).
   No server, no core: every input is fed whole, byte by byte and in chunks
   of 3, and must give the same replies; every malformed input gives an
   exact parser error. (The node-list parser: tests/nodes/test_nodes.c.) */
#define REDLOCK_SOCKET_NO_CORE
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "check.h"

#include <stdlib.h>

/* A reply as text: +s -s :n $len:bytes nil [n a b ...] */
static void dump(const redlock_reply *r, char *out, size_t cap)
{
    size_t n = strlen(out);
    size_t i;
    if (n + 64 >= cap) return;
    switch (r->type) {
    case REDLOCK_REPLY_STATUS: snprintf(out + n, cap - n, "+%.*s ", (int)r->len, r->str); break;
    case REDLOCK_REPLY_ERROR: snprintf(out + n, cap - n, "-%.*s ", (int)r->len, r->str); break;
    case REDLOCK_REPLY_INTEGER: snprintf(out + n, cap - n, ":%lld ", r->integer); break;
    case REDLOCK_REPLY_STRING:
        snprintf(out + n, cap - n, "$%zu:", r->len);
        n = strlen(out);
        for (i = 0; i < r->len && n + 4 < cap; i++) {
            unsigned char c = (unsigned char)r->str[i];
            if (c >= 0x20 && c < 0x7f) out[n++] = (char)c;
            else { snprintf(out + n, cap - n, "\\%02x", c); n += 3; }
        }
        out[n++] = ' ';
        out[n] = 0;
        break;
    case REDLOCK_REPLY_NIL: snprintf(out + n, cap - n, "nil "); break;
    case REDLOCK_REPLY_ARRAY:
        snprintf(out + n, cap - n, "[%zu ", r->elements);
        for (i = 0; i < r->elements; i++) dump(&r->element[i], out, cap);
        n = strlen(out);
        snprintf(out + n, cap - n, "] ");
        break;
    default: snprintf(out + n, cap - n, "? "); break;
    }
}

/* Feeds `in` in chunks of `chunk` bytes (0: all at once); returns the last
   status of next() (0 = all consumed, <0 = error) and the replies' dump. */
static int parse(const char *in, size_t len, size_t chunk, char *out, size_t cap, int *perr)
{
    redlock_resp_parser p;
    size_t off = 0;
    int rc = 0;
    redlock_resp_parser_init(&p);
    out[0] = 0;
    if (!chunk) chunk = len ? len : 1;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        const redlock_reply *r;
        rc = redlock_resp_feed(&p, in + off, n);
        off += n;
        if (rc < 0) break;
        while ((rc = redlock_resp_next(&p, &r)) == 1) dump(r, out, cap);
        if (rc < 0) break;
    }
    if (rc == 0 && redlock_resp_buffered(&p)) rc = 1; /* incomplete */
    if (perr) *perr = redlock_resp_error(&p);
    redlock_resp_parser_free(&p);
    return rc;
}

/* Same result fed whole, byte by byte and by 3. */
static void expect(const char *in, size_t len, const char *want)
{
    static const size_t chunks[] = {0, 1, 3, 7};
    size_t k;
    for (k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        char got[8192];
        int rc = parse(in, len, chunks[k], got, sizeof got, NULL);
        CHECK_EQ(rc, 0);
        CHECK_STR(got, want);
        if (rc != 0 || strcmp(got, want) != 0) printf("#   input chunk %zu\n", chunks[k]);
    }
}
#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

static void expect_err(const char *in, size_t len, int err)
{
    static const size_t chunks[] = {0, 1, 2};
    size_t k;
    for (k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        char got[256];
        int e = -1;
        int rc = parse(in, len, chunks[k], got, sizeof got, &e);
        CHECK_EQ(rc, REDLOCK_ERR_PROTOCOL);
        CHECK_EQ(e, err);
        if (rc != REDLOCK_ERR_PROTOCOL || e != err) printf("#   input %.*s chunk %zu\n", (int)(len > 40 ? 40 : len), in, chunks[k]);
    }
}
#define EXPECT_ERR(lit, err) expect_err(lit, sizeof(lit) - 1, err)

static void test_simple_types(void)
{
    EXPECT("+OK\r\n", "+OK ");
    EXPECT("+\r\n", "+ ");
    EXPECT("-ERR unknown command 'X'\r\n", "-ERR unknown command 'X' ");
    EXPECT("-NOSCRIPT No matching script\r\n", "-NOSCRIPT No matching script ");
    EXPECT(":0\r\n", ":0 ");
    EXPECT(":1\r\n", ":1 ");
    EXPECT(":-1\r\n", ":-1 ");
    EXPECT(":9223372036854775807\r\n", ":9223372036854775807 ");
    EXPECT(":-9223372036854775808\r\n", ":-9223372036854775808 ");
}

static void test_bulk(void)
{
    EXPECT("$3\r\nfoo\r\n", "$3:foo ");
    EXPECT("$0\r\n\r\n", "$0: ");
    EXPECT("$-1\r\n", "nil ");
    EXPECT("$4\r\na\r\nb\r\n", "$4:a\\0d\\0ab ");
    EXPECT("$3\r\n\0\1\2\r\n", "$3:\\00\\01\\02 ");
}

static void test_arrays(void)
{
    EXPECT("*0\r\n", "[0 ] ");
    EXPECT("*-1\r\n", "nil ");
    EXPECT("*2\r\n$1\r\na\r\n:2\r\n", "[2 $1:a :2 ] ");
    EXPECT("*3\r\n*2\r\n:1\r\n:2\r\n*0\r\n*1\r\n*1\r\n+x\r\n", "[3 [2 :1 :2 ] [0 ] [1 [1 +x ] ] ] ");
    EXPECT("*4\r\n$-1\r\n*-1\r\n-E\r\n$0\r\n\r\n", "[4 nil nil -E $0: ] ");
    /* message of a subscribed connection (RESP2 push is an array) */
    EXPECT("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\nbye\r\n", "[3 $7:message $2:ch $3:bye ] ");
}

static void test_tree_layout(void)
{
    static const char in[] = "*3\r\n*2\r\n:1\r\n$2\r\nhi\r\n:7\r\n*1\r\n*1\r\n+deep\r\n";
    redlock_resp_parser p;
    const redlock_reply *r = NULL;
    redlock_resp_parser_init(&p);
    CHECK_EQ(redlock_resp_feed(&p, in, sizeof in - 1), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK(r != NULL);
    if (r) {
        CHECK_EQ(r->type, REDLOCK_REPLY_ARRAY);
        CHECK_EQ(r->elements, 3);
        CHECK_EQ(r->element[0].type, REDLOCK_REPLY_ARRAY);
        CHECK_EQ(r->element[0].elements, 2);
        CHECK_EQ(r->element[0].element[0].integer, 1);
        CHECK_EQ(r->element[0].element[1].len, 2);
        CHECK(memcmp(r->element[0].element[1].str, "hi", 2) == 0);
        CHECK_EQ(r->element[1].type, REDLOCK_REPLY_INTEGER);
        CHECK_EQ(r->element[1].integer, 7);
        CHECK_EQ(r->element[2].element[0].element[0].type, REDLOCK_REPLY_STATUS);
        CHECK(memcmp(r->element[2].element[0].element[0].str, "deep", 4) == 0);
    }
    CHECK_EQ(redlock_resp_next(&p, &r), 0);
    CHECK(r == NULL);
    CHECK_EQ(redlock_resp_buffered(&p), 0);
    redlock_resp_parser_free(&p);
}

static void test_pipeline(void)
{
    EXPECT("+OK\r\n:1\r\n$-1\r\n*1\r\n:2\r\n-ERR x\r\n", "+OK :1 nil [1 :2 ] -ERR x ");
}

static void test_incomplete(void)
{
    redlock_resp_parser p;
    const redlock_reply *r;
    redlock_resp_parser_init(&p);
    CHECK_EQ(redlock_resp_feed(&p, "$5\r\nhel", 7), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 0);
    CHECK_EQ(redlock_resp_buffered(&p), 7);
    CHECK_EQ(redlock_resp_feed(&p, "lo\r", 3), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 0);
    CHECK_EQ(redlock_resp_feed(&p, "\n*2\r\n:1\r\n", 9), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK(r && r->type == REDLOCK_REPLY_STRING);
    CHECK(r && r->len == 5 && memcmp(r->str, "hello", 5) == 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 0);
    CHECK_EQ(redlock_resp_buffered(&p), 8);
    CHECK_EQ(redlock_resp_feed(&p, ":2\r\n", 4), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK(r && r->elements == 2 && r->element[1].integer == 2);
    CHECK_EQ(redlock_resp_buffered(&p), 0);
    redlock_resp_parser_free(&p);
}

static void test_malformed(void)
{
    EXPECT_ERR("?x\r\n", REDLOCK_RESP_E_TYPE);
    EXPECT_ERR("\r\n", REDLOCK_RESP_E_TYPE);
    EXPECT_ERR("\0\r\n", REDLOCK_RESP_E_TYPE);
    EXPECT_ERR("OK\r\n", REDLOCK_RESP_E_TYPE);
    EXPECT_ERR("+OK\r\n\n", REDLOCK_RESP_E_TYPE);
    EXPECT_ERR(":\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":abc\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":+1\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":1 \r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":-\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":9223372036854775808\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":-9223372036854775809\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR(":99999999999999999999999\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR("$abc\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR("$\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR("$-2\r\n", REDLOCK_RESP_E_BULK_LEN);
    EXPECT_ERR("$999999999999\r\n", REDLOCK_RESP_E_BULK_LEN);
    EXPECT_ERR("$1048577\r\n", REDLOCK_RESP_E_BULK_LEN);
    EXPECT_ERR("$3\r\nfooX\r\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("$3\r\nfoo\n\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("$3\r\nfo\r\n\r\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("*4294967295\r\n", REDLOCK_RESP_E_ARRAY_LEN);
    EXPECT_ERR("*-2\r\n", REDLOCK_RESP_E_ARRAY_LEN);
    EXPECT_ERR("*1025\r\n", REDLOCK_RESP_E_ARRAY_LEN);
    EXPECT_ERR("*x\r\n", REDLOCK_RESP_E_INTEGER);
    EXPECT_ERR("+OK\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("+O\rK\r\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("+\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("-\n", REDLOCK_RESP_E_CRLF);
    EXPECT_ERR("*2\r\n:1\r\n?\r\n", REDLOCK_RESP_E_TYPE);
}

static void test_resp3_rejected(void)
{
    EXPECT_ERR("%1\r\n+a\r\n+b\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("~1\r\n:1\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("_\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR(",1.5\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("#t\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("(123\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("=7\r\ntxt:abc\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("|1\r\n+k\r\n+v\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR(">2\r\n+a\r\n+b\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("!3\r\nERR\r\n", REDLOCK_RESP_E_RESP3);
    EXPECT_ERR("*2\r\n:1\r\n_\r\n", REDLOCK_RESP_E_RESP3);
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail, size_t *len)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), i;
    char *b = (char *)malloc(hl + ul * times + tl + 1);
    memcpy(b, head, hl);
    for (i = 0; i < times; i++) memcpy(b + hl + i * ul, unit, ul);
    memcpy(b + hl + ul * times, tail, tl + 1);
    *len = hl + ul * times + tl;
    return b;
}

static void test_caps(void)
{
    char head[64], got[256];
    size_t len;
    char *b;
    int e, rc;
    /* bulk of exactly the cap is fine, one more byte is not */
    snprintf(head, sizeof head, "$%ld\r\n", (long)REDLOCK_RESP_MAX_BULK);
    b = repeat(head, "x", (size_t)REDLOCK_RESP_MAX_BULK, "\r\n", &len);
    rc = parse(b, len, 65536, got, sizeof got, &e);
    CHECK_EQ(rc, 0);
    free(b);
    snprintf(head, sizeof head, "$%ld\r\n", (long)REDLOCK_RESP_MAX_BULK + 1);
    expect_err(head, strlen(head), REDLOCK_RESP_E_BULK_LEN);
    /* elements */
    snprintf(head, sizeof head, "*%ld\r\n", (long)REDLOCK_RESP_MAX_ELEMENTS);
    b = repeat(head, ":1\r\n", (size_t)REDLOCK_RESP_MAX_ELEMENTS, "", &len);
    CHECK_EQ(parse(b, len, 0, got, sizeof got, &e), 0);
    CHECK_EQ(parse(b, len, 1, got, sizeof got, &e), 0);
    free(b);
    /* depth: 8 levels fine, 9 not */
    b = repeat("", "*1\r\n", REDLOCK_RESP_MAX_DEPTH, ":1\r\n", &len);
    expect(b, len, "[1 [1 [1 [1 [1 [1 [1 [1 :1 ] ] ] ] ] ] ] ] ");
    free(b);
    b = repeat("", "*1\r\n", REDLOCK_RESP_MAX_DEPTH + 1, ":1\r\n", &len);
    expect_err(b, len, REDLOCK_RESP_E_DEPTH);
    free(b);
    /* values in one reply: 1024 arrays of 4 is 5121 values */
    b = repeat("*1024\r\n", "*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n", 1024, "", &len);
    expect_err(b, len, REDLOCK_RESP_E_VALUES);
    free(b);
    /* a line without end, and a long line with one */
    b = repeat("+", "a", (size_t)REDLOCK_RESP_MAX_LINE + 2, "", &len);
    rc = parse(b, len, 4096, got, sizeof got, &e);
    CHECK_EQ(rc, REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(e, REDLOCK_RESP_E_LINE);
    free(b);
    b = repeat("-", "a", (size_t)REDLOCK_RESP_MAX_LINE + 1, "\r\n", &len);
    rc = parse(b, len, 0, got, sizeof got, &e);
    CHECK_EQ(rc, REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(e, REDLOCK_RESP_E_LINE);
    free(b);
    b = repeat(":", "1", (size_t)REDLOCK_RESP_MAX_LINE + 10, "", &len);
    rc = parse(b, len, 1000, got, sizeof got, &e);
    CHECK_EQ(rc, REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(e, REDLOCK_RESP_E_LINE);
    free(b);
    b = repeat("+", "a", (size_t)REDLOCK_RESP_MAX_LINE, "\r\n", &len);
    CHECK_EQ(parse(b, len, 0, got, sizeof got, &e), 0);
    free(b);
}

static void test_buffer_cap(void)
{
    /* many small complete replies fed without reading them */
    redlock_resp_parser p;
    static char chunk[65536];
    size_t fed = 0, i;
    int rc = 0;
    for (i = 0; i + 4 <= sizeof chunk; i += 4) memcpy(chunk + i, ":1\r\n", 4);
    redlock_resp_parser_init(&p);
    while (fed < (size_t)REDLOCK_RESP_MAX_BUFFER * 2 && (rc = redlock_resp_feed(&p, chunk, sizeof chunk)) == 0)
        fed += sizeof chunk;
    CHECK_EQ(rc, REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(redlock_resp_error(&p), REDLOCK_RESP_E_BUFFER);
    CHECK_EQ(fed, (size_t)REDLOCK_RESP_MAX_BUFFER);
    CHECK(redlock_resp_memory(&p) <= (size_t)REDLOCK_RESP_MAX_BUFFER + 4096 * 100);
    redlock_resp_parser_free(&p);
    /* read as they come: never more than a chunk buffered */
    redlock_resp_parser_init(&p);
    for (i = 0; i < 200; i++) {
        const redlock_reply *r;
        CHECK_EQ(redlock_resp_feed(&p, chunk, sizeof chunk), 0);
        while ((rc = redlock_resp_next(&p, &r)) == 1) {}
        CHECK_EQ(rc, 0);
    }
    CHECK(redlock_resp_memory(&p) <= sizeof chunk * 2 + 4096);
    redlock_resp_parser_free(&p);
}

static void test_sticky_error_and_reset(void)
{
    redlock_resp_parser p;
    const redlock_reply *r;
    redlock_resp_parser_init(&p);
    CHECK_EQ(redlock_resp_feed(&p, "+OK\r\n>1\r\n+OK\r\n", 14), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK_EQ(redlock_resp_next(&p, &r), REDLOCK_ERR_PROTOCOL);
    CHECK(r == NULL);
    CHECK_EQ(redlock_resp_next(&p, &r), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(redlock_resp_feed(&p, "+OK\r\n", 5), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(redlock_resp_error(&p), REDLOCK_RESP_E_RESP3);
    CHECK(strcmp(redlock_resp_strerror(redlock_resp_error(&p)), "unexpected RESP3 frame") == 0);
    redlock_resp_parser_reset(&p);
    CHECK_EQ(redlock_resp_error(&p), 0);
    CHECK_EQ(redlock_resp_feed(&p, "+OK\r\n", 5), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK_EQ(r->type, REDLOCK_REPLY_STATUS);
    CHECK_EQ(redlock_resp_feed(NULL, "x", 1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_resp_next(&p, NULL), REDLOCK_ERR_INVALID);
    redlock_resp_parser_free(&p);
    /* a zeroed parser works without init */
    {
        redlock_resp_parser z;
        memset(&z, 0, sizeof z);
        CHECK_EQ(redlock_resp_feed(&z, ":5\r\n", 4), 0);
        CHECK_EQ(redlock_resp_next(&z, &r), 1);
        CHECK_EQ(r->integer, 5);
        redlock_resp_parser_free(&z);
    }
}

static void test_encode(void)
{
    char buf[256];
    const char *argv[] = {"SET", "k", "tok", "NX", "PX", "30000"};
    size_t lens[] = {3, 1, 3, 2, 2, 5};
    static const char want[] = "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n";
    size_t n = redlock_resp_encode(buf, sizeof buf, 6, argv, lens);
    CHECK_EQ(n, sizeof want - 1);
    CHECK(memcmp(buf, want, n) == 0);
    CHECK_EQ(redlock_resp_encode(buf, sizeof buf, 6, argv, NULL), n);
    CHECK(memcmp(buf, want, n) == 0);
    /* too small: size reported, nothing written */
    memset(buf, 'Z', sizeof buf);
    CHECK_EQ(redlock_resp_encode(buf, 10, 6, argv, NULL), n);
    CHECK_EQ(buf[0], 'Z');
    CHECK_EQ(redlock_resp_encode(NULL, 0, 6, argv, NULL), n);
    /* binary-safe, empty argument */
    {
        const char *a2[] = {"GET", "a\r\n\0b", ""};
        size_t l2[] = {3, 5, 0};
        static const char w2[] = "*3\r\n$3\r\nGET\r\n$5\r\na\r\n\0b\r\n$0\r\n\r\n";
        n = redlock_resp_encode(buf, sizeof buf, 3, a2, l2);
        CHECK_EQ(n, sizeof w2 - 1);
        CHECK(memcmp(buf, w2, n) == 0);
    }
    /* bad arguments */
    CHECK_EQ(redlock_resp_encode(buf, sizeof buf, 0, argv, NULL), 0);
    CHECK_EQ(redlock_resp_encode(buf, sizeof buf, -1, argv, NULL), 0);
    CHECK_EQ(redlock_resp_encode(buf, sizeof buf, 1, NULL, NULL), 0);
    {
        const char *a3[] = {"GET", NULL};
        CHECK_EQ(redlock_resp_encode(buf, sizeof buf, 2, a3, NULL), 0);
    }
    /* a redlock_command; and the encoder's output parses back */
    {
        redlock_command cmd;
        redlock_resp_parser p;
        const redlock_reply *r;
        memset(&cmd, 0, sizeof cmd);
        cmd.argc = 3;
        cmd.argv[0] = "EVALSHA"; cmd.argvlen[0] = 7;
        cmd.argv[1] = "0123456789"; cmd.argvlen[1] = 10;
        cmd.argv[2] = "1"; cmd.argvlen[2] = 1;
        n = redlock_resp_encode_command(buf, sizeof buf, &cmd);
        CHECK_EQ(n, 4 + 13 + 17 + 7);
        redlock_resp_parser_init(&p);
        CHECK_EQ(redlock_resp_feed(&p, buf, n), 0);
        CHECK_EQ(redlock_resp_next(&p, &r), 1);
        CHECK_EQ(r->elements, 3);
        CHECK(r->element[1].len == 10 && memcmp(r->element[1].str, "0123456789", 10) == 0);
        redlock_resp_parser_free(&p);
        cmd.argc = 0;
        CHECK_EQ(redlock_resp_encode_command(buf, sizeof buf, &cmd), 0);
        cmd.argc = REDLOCK_MAX_ARGS + 1;
        CHECK_EQ(redlock_resp_encode_command(buf, sizeof buf, &cmd), 0);
        CHECK_EQ(redlock_resp_encode_command(buf, sizeof buf, NULL), 0);
    }
}

/* reset keeps a buffer of up to 64 KiB for the next replies and gives a
   bigger one back; so does a parser that has handed out everything */
static void test_reset_buffer_reuse(void)
{
    static char chunk[70000];
    redlock_resp_parser p;
    const char *hdr = "$1000000\r\n";
    CHECK_EQ(redlock_resp_memory(NULL), 0);
    redlock_resp_parser_init(&p);
    memset(chunk, 'x', sizeof chunk);
    CHECK_EQ(redlock_resp_feed(&p, hdr, strlen(hdr)), 0);
    CHECK_EQ(redlock_resp_feed(&p, chunk, 40000), 0); /* buffer grows to 64 KiB */
    CHECK(redlock_resp_memory(&p) >= 65536);
    redlock_resp_parser_reset(&p);
    CHECK(redlock_resp_memory(&p) >= 65536); /* kept */
    CHECK_EQ(redlock_resp_buffered(&p), 0);
    CHECK_EQ(redlock_resp_feed(&p, hdr, strlen(hdr)), 0);
    CHECK_EQ(redlock_resp_feed(&p, chunk, sizeof chunk), 0); /* 128 KiB */
    CHECK(redlock_resp_memory(&p) >= 131072);
    redlock_resp_parser_reset(&p);
    CHECK(redlock_resp_memory(&p) < 65536); /* given back */
    /* a reply bigger than 64 KiB arriving in pieces: the buffer holding
       its start is kept until the reply is whole, then handed out intact */
    {
        static char big[100000 + 32];
        const redlock_reply *r = NULL;
        int n = snprintf(big, 32, "$100000\r\n"), k;
        memset(big + n, 'y', 100000);
        memcpy(big + n + 100000, "\r\n", 2);
        CHECK_EQ(redlock_resp_feed(&p, big, 70000), 0);
        CHECK_EQ(redlock_resp_next(&p, &r), 0);
        CHECK_EQ(redlock_resp_feed(&p, big + 70000, (size_t)n + 100002 - 70000), 0);
        CHECK_EQ(redlock_resp_next(&p, &r), 1);
        CHECK(r && r->type == REDLOCK_REPLY_STRING && r->len == 100000);
        for (k = 0; r && k < 100000 && r->str[k] == 'y'; k++) {}
        CHECK_EQ(k, 100000);
    }
    redlock_resp_parser_free(&p);
}

/* redlock_resp_memory counts what the parser holds: after a 1000-element
   array, at least a parsed value and a reply per element */
static void test_memory_counts_values(void)
{
    static char in[8 + 4 * 1000];
    redlock_resp_parser p;
    const redlock_reply *r = NULL;
    size_t n = (size_t)snprintf(in, sizeof in, "*1000\r\n"), i;
    for (i = 0; i < 1000; i++) memcpy(in + n + 4 * i, ":1\r\n", 4);
    redlock_resp_parser_init(&p);
    CHECK_EQ(redlock_resp_feed(&p, in, n + 4000), 0);
    CHECK_EQ(redlock_resp_next(&p, &r), 1);
    CHECK(r && r->type == REDLOCK_REPLY_ARRAY && r->elements == 1000);
    CHECK(redlock_resp_memory(&p) >= 1000 * (sizeof(redlock__resp_val) + sizeof(redlock_reply)));
    redlock_resp_parser_free(&p);
    CHECK_EQ(redlock_resp_memory(&p), 0);
}

int main(void)
{
    RUN(test_simple_types);
    RUN(test_bulk);
    RUN(test_arrays);
    RUN(test_tree_layout);
    RUN(test_pipeline);
    RUN(test_incomplete);
    RUN(test_malformed);
    RUN(test_resp3_rejected);
    RUN(test_caps);
    RUN(test_buffer_cap);
    RUN(test_sticky_error_and_reset);
    RUN(test_reset_buffer_reuse);
    RUN(test_memory_counts_values);
    RUN(test_encode);
    return CHECK_EXIT();
}
