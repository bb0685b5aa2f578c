/* fuzz_resp.c - fuzzing the RESP2 parser of adapters/redlock_resp.h.

   Default build (make check-resp-fuzz): a deterministic loop of N rounds
   (argv[1], default 3000) over random valid replies, mutated replies and
   RESP-flavoured noise. Every input is parsed whole, byte by byte and in
   random chunks; the three runs must agree exactly (replies, status,
   parser error), valid inputs must round-trip, and the parser's memory
   must stay under its caps. Run under valgrind by make test.

   -DFUZZ_LIBFUZZER (make fuzz-resp, clang): the same differential check
   as a libFuzzer target: build/fuzz_resp_lf -max_total_time=60 */
#define REDLOCK_RESP_IMPLEMENTATION
#include "adapters/redlock_resp.h"

#include <stdio.h>
#include <stdlib.h>

#define MEM_BOUND ((size_t)REDLOCK_RESP_MAX_BUFFER + (size_t)REDLOCK_RESP_MAX_VALUES * \
                   (sizeof(redlock__resp_val) + sizeof(redlock_reply)) * 2)

typedef struct out { char *s; size_t len, cap; } out;

static void put(out *o, const char *p, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n + 1) cap *= 2;
        o->s = (char *)realloc(o->s, cap);
        if (!o->s) abort();
        o->cap = cap;
    }
    memcpy(o->s + o->len, p, n);
    o->len += n;
    o->s[o->len] = 0;
}

static void putf(out *o, const char *fmt, long long v)
{
    char b[64];
    int n = snprintf(b, sizeof b, fmt, v);
    put(o, b, (size_t)n);
}

static void dump(out *o, const redlock_reply *r)
{
    size_t i;
    switch (r->type) {
    case REDLOCK_REPLY_STATUS: put(o, "+", 1); put(o, r->str, r->len); put(o, " ", 1); break;
    case REDLOCK_REPLY_ERROR: put(o, "-", 1); put(o, r->str, r->len); put(o, " ", 1); break;
    case REDLOCK_REPLY_INTEGER: putf(o, ":%lld ", r->integer); break;
    case REDLOCK_REPLY_STRING: putf(o, "$%lld:", (long long)r->len); put(o, r->str, r->len); put(o, " ", 1); break;
    case REDLOCK_REPLY_NIL: put(o, "nil ", 4); break;
    case REDLOCK_REPLY_ARRAY:
        putf(o, "[%lld ", (long long)r->elements);
        for (i = 0; i < r->elements; i++) dump(o, &r->element[i]);
        put(o, "] ", 2);
        break;
    default: put(o, "? ", 2); break;
    }
}

/* Parses in chunks: chunk 0 = whole, 1 = bytes, -1 = random sizes.
   Returns status; o gets the replies followed by the parser error. */
static int run(const unsigned char *in, size_t len, int chunk, unsigned long long *rng, out *o, size_t *maxmem)
{
    redlock_resp_parser p;
    size_t off = 0;
    int rc = 0;
    redlock_resp_parser_init(&p);
    while (off < len && rc >= 0) {
        size_t n;
        const redlock_reply *r;
        if (chunk == 0) n = len;
        else if (chunk == 1) n = 1;
        else {
            *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
            n = 1 + (size_t)(*rng % 64);
        }
        if (n > len - off) n = len - off;
        rc = redlock_resp_feed(&p, in + off, n);
        off += n;
        if (rc < 0) break;
        while ((rc = redlock_resp_next(&p, &r)) == 1) dump(o, r);
        if (redlock_resp_memory(&p) > *maxmem) *maxmem = redlock_resp_memory(&p);
    }
    putf(o, "| rc=%lld", rc);
    putf(o, " err=%lld", redlock_resp_error(&p));
    putf(o, " left=%lld", rc < 0 ? 0 : (long long)redlock_resp_buffered(&p));
    redlock_resp_parser_free(&p);
    return rc;
}

static int check_input(const unsigned char *in, size_t len, unsigned long long seed)
{
    out a = {0, 0, 0}, b = {0, 0, 0}, c = {0, 0, 0};
    size_t mem = 0;
    int ok;
    run(in, len, 0, &seed, &a, &mem);
    run(in, len, 1, &seed, &b, &mem);
    run(in, len, -1, &seed, &c, &mem);
    ok = a.len == b.len && a.len == c.len && !memcmp(a.s, b.s, a.len) && !memcmp(a.s, c.s, a.len) &&
         mem <= MEM_BOUND;
    if (!ok) {
        fprintf(stderr, "mismatch or memory %zu:\n whole: %s\n bytes: %s\n chunks: %s\n", mem, a.s, b.s, c.s);
    }
    free(a.s);
    free(b.s);
    free(c.s);
    return ok;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!check_input(data, size, 88172645463325252ULL)) abort();
    return 0;
}
#else

static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;
static unsigned long long rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* A random valid reply: bytes in `in`, expected dump in `want`. */
static void gen(out *in, out *want, int depth)
{
    static const char alpha[] = "abcXYZ019 _-:$*+\r\n\0";
    int k = (int)below(depth < REDLOCK_RESP_MAX_DEPTH ? 7 : 5);
    size_t i, n;
    char s[64];
    switch (k) {
    case 0:
    case 1: {
        n = below(12);
        for (i = 0; i < n; i++) s[i] = "abc OK ERR x-9"[below(14)];
        put(in, k ? "-" : "+", 1); put(in, s, n); put(in, "\r\n", 2);
        put(want, k ? "-" : "+", 1); put(want, s, n); put(want, " ", 1);
        break;
    }
    case 2: {
        long long v = (long long)(rnd() >> below(64));
        if (rnd() & 1) v = -v;
        putf(in, ":%lld\r\n", v);
        putf(want, ":%lld ", v);
        break;
    }
    case 3: {
        n = below(40);
        for (i = 0; i < n; i++) s[i] = alpha[below(sizeof alpha)];
        putf(in, "$%lld\r\n", (long long)n); put(in, s, n); put(in, "\r\n", 2);
        putf(want, "$%lld:", (long long)n); put(want, s, n); put(want, " ", 1);
        break;
    }
    case 4:
        put(in, rnd() & 1 ? "$-1\r\n" : "*-1\r\n", 5);
        put(want, "nil ", 4);
        break;
    default:
        n = below(5);
        putf(in, "*%lld\r\n", (long long)n);
        putf(want, "[%lld ", (long long)n);
        for (i = 0; i < n; i++) gen(in, want, depth + 1);
        put(want, "] ", 2);
        break;
    }
}

static void mutate(out *in)
{
    static const char bytes[] = "+-:$*\r\n0123456789-%~_,#(=|>!aZ";
    int m = (int)below(6), times = 1 + (int)below(3), t;
    for (t = 0; t < times && in->len; t++) {
        size_t at = below(in->len);
        switch (m) {
        case 0: in->s[at] = bytes[below(sizeof bytes - 1)]; break;
        case 1: in->s[at] ^= (char)(1 << below(8)); break;
        case 2: in->len = at; break; /* truncate */
        case 3: { /* insert a digit run: absurd lengths */
            char tail[4096];
            size_t k = in->len - at, d = 1 + below(14), j;
            if (k > sizeof tail) k = sizeof tail;
            memcpy(tail, in->s + at, k);
            in->len = at;
            for (j = 0; j < d; j++) put(in, &"0123456789"[below(10)], 1);
            put(in, tail, k);
            break;
        }
        case 4: { /* duplicate a slice */
            size_t k = below(in->len - at) + 1;
            char tmp[4096];
            if (k > sizeof tmp) k = sizeof tmp;
            memcpy(tmp, in->s + at, k);
            put(in, tmp, k);
            break;
        }
        default: in->s[at] = (char)rnd(); break;
        }
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 3000, r;
    long bad = 0, valid_ok = 0, mutated = 0, noise = 0;
    for (r = 0; r < rounds; r++) {
        out in = {0, 0, 0}, want = {0, 0, 0}, got = {0, 0, 0};
        int kind = (int)below(4), k, nrep = 1 + (int)below(3);
        size_t mem = 0;
        unsigned long long seed = rnd() | 1;
        put(&in, "", 0);
        put(&want, "", 0);
        if (kind == 3) { /* RESP-flavoured noise */
            size_t n = below(200), i;
            for (i = 0; i < n; i++) {
                char ch = "+-:$*\r\n0123456789abc%_>"[below(24)];
                put(&in, &ch, 1);
            }
            noise++;
        } else {
            for (k = 0; k < nrep; k++) gen(&in, &want, 1);
        }
        if (kind == 1 || kind == 2) {
            mutate(&in);
            mutated++;
        }
        if (!check_input((const unsigned char *)in.s, in.len, seed)) {
            fprintf(stderr, "round %ld: inconsistent\n", r);
            bad++;
        }
        if (kind == 0) { /* valid: exact round trip */
            run((const unsigned char *)in.s, in.len, -1, &seed, &got, &mem);
            put(&want, "| rc=0 err=0 left=0", 19);
            if (got.len != want.len || memcmp(got.s, want.s, got.len) != 0) {
                fprintf(stderr, "round %ld: want %s\n got %s\n", r, want.s, got.s);
                bad++;
            } else {
                valid_ok++;
            }
        }
        free(in.s);
        free(want.s);
        free(got.s);
    }
    printf("# %ld rounds: %ld valid round-trips, %ld mutated, %ld noise, %ld failures\n", rounds, valid_ok,
           mutated, noise, bad);
    printf("%s fuzz_resp_differential\n", bad ? "not ok" : "ok");
    return bad ? 1 : 0;
}
#endif
