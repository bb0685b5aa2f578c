/* value.c - the decoders of a lock's stored value (redlock.h section 13):
   each format the scripts write, read back; and malformed or hostile
   replies (wrong types, truncated values, huge counts, NULL pointers)
   giving OTHER or an error status, with the output left untouched. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include "check.h"

#define TOK "0123456789abcdef0123456789ABCDEF" /* REDLOCK_TOKEN_LEN hex digits */
#define TOK2 "fedcba9876543210fedcba9876543210"

static redlock_reply str(const char *s) {
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STRING;
    r.str = s;
    r.len = strlen(s);
    return r;
}

static redlock_reply typed(redlock_reply_type t, const char *s) {
    redlock_reply r = str(s ? s : "");
    r.type = t;
    if (!s) r.str = NULL;
    return r;
}

/* HGETALL's answer from field, value, field, value ... (NULL ends it) */
static redlock_reply elems[64];
static redlock_reply hash(const char *const *kv) {
    redlock_reply r;
    size_t n = 0;
    while (kv[n] && n < 64) {
        elems[n] = str(kv[n]);
        n++;
    }
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_ARRAY;
    r.element = elems;
    r.elements = n;
    return r;
}

static redlock_value sentinel(void) {
    redlock_value v;
    memset(&v, 0x5a, sizeof v);
    return v;
}
static int untouched(const redlock_value *v) {
    redlock_value s = sentinel();
    return memcmp(v, &s, sizeof s) == 0;
}

/* The kind GET's answer r reads as, given expires (the read's OK checked;
   *v filled). */
static redlock_value_kind get_kind(const redlock_reply *r, int expires, redlock_value *v) {
    CHECK_EQ(redlock_value_from_get(r, expires, v), REDLOCK_OK);
    return v->kind;
}
/* The same for HGETALL's answer r read at now_ms. */
static redlock_value_kind hash_kind(const redlock_reply *r, int64_t now_ms, redlock_value *v) {
    CHECK_EQ(redlock_value_from_hash(r, now_ms, v), REDLOCK_OK);
    return v->kind;
}

/* Each of the n HGETALL answers in cases reads as OTHER. */
static void hashes_are_other(const char *const *const *cases, size_t n) {
    redlock_value v;
    redlock_reply r;
    size_t i;
    for (i = 0; i < n; i++) {
        r = hash(cases[i]);
        CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    }
}

/* Proves: GET's answers: no key, a token with and without a label, a
   foreign 32-byte value, a legacy value (only for a key that does not
   expire), and strings that are no lock. */
static void test_value_get_string(void) {
    redlock_value v;
    redlock_reply r = typed(REDLOCK_REPLY_NIL, NULL);
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_NONE);
    CHECK_EQ(v.token_len, 0);
    CHECK_EQ(v.expiry_ms, -1);

    r = str(TOK);
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_PLAIN);
    CHECK_STR(v.token, TOK);
    CHECK_EQ(v.token_len, REDLOCK_TOKEN_LEN);
    CHECK_EQ(v.label_len, 0);

    r = str("web1:4242:" TOK);
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_PLAIN);
    CHECK_STR(v.token, "web1:4242:" TOK);
    CHECK_EQ(v.label_len, 10);
    CHECK_EQ(v.expiry_ms, -1);

    r = str("a value of 32 bytes, not hex!!!!"); /* another client's token */
    CHECK_EQ(r.len, REDLOCK_TOKEN_LEN);
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_PLAIN);
    CHECK_EQ(v.label_len, 0);

    r = str("1700000000000:web1:" TOK);
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_LEGACY);
    CHECK_EQ(v.expiry_ms, 1700000000000LL);
    CHECK_STR(v.token, "web1:" TOK);
    CHECK_EQ(v.label_len, 5);
    /* the same bytes in a key with a TTL: a label "1700000000000:web1:" */
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_PLAIN);
    CHECK_EQ(v.label_len, 19);
    CHECK_EQ(v.expiry_ms, -1);

    r = str("42:" TOK);
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_LEGACY);
    CHECK_EQ(v.expiry_ms, 42);
    CHECK_STR(v.token, TOK);

    r = str("");
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    r = str("hello");
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_OTHER);
}

/* Proves: truncated and hostile strings are OTHER: a token one digit
   short, a label with a space or too long, a legacy value without its
   token, a long value; a legacy expiry that overflows is no expiry. */
static void test_value_get_hostile(void) {
    static char big[4096];
    char buf[256];
    redlock_value v;
    redlock_reply r = str("web1:0123456789abcdef0123456789abcde"); /* 31 digits after the label */
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_OTHER);
    r = str("web 1:" TOK);
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_OTHER);
    memset(buf, 'L', REDLOCK_MAX_LABEL + 1);
    memcpy(buf + REDLOCK_MAX_LABEL + 1, TOK, REDLOCK_TOKEN_LEN + 1);
    r = str(buf);
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_OTHER);
    buf[0] = '-'; /* one byte shorter: fits */
    r.str = buf + 1;
    r.len--;
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_PLAIN);
    CHECK_EQ(v.token_len, REDLOCK_VALUE_TOKEN_MAX);
    CHECK_EQ(v.label_len, REDLOCK_MAX_LABEL);
    r = str("9999999999999999999:" TOK); /* past INT64_MAX: no time of ours, so a label */
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_PLAIN);
    CHECK_EQ(v.label_len, 20);
    CHECK_EQ(v.expiry_ms, -1);
    r = str("9223372036854775807:" TOK);
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_LEGACY);
    CHECK_EQ(v.expiry_ms, INT64_MAX);
    r = str("17:");
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    memset(big, '7', sizeof big);
    r.str = big;
    r.len = sizeof big;
    CHECK_EQ(get_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    r.len = 1u << 30; /* a length the string does not have: never read past what is needed */
    r.str = "x";
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_OTHER);
}

/* Proves: GET's other answers: WRONGTYPE asks for HGETALL, another error
   is SERVER, another type PROTOCOL, NULLs INVALID; on error the output
   is untouched. */
static void test_value_get_answers(void) {
    redlock_value v;
    redlock_reply r = typed(REDLOCK_REPLY_ERROR, "WRONGTYPE Operation against a key holding the wrong kind of value");
    CHECK_EQ(get_kind(&r, 1, &v), REDLOCK_VALUE_HASH);
    v = sentinel();
    r = typed(REDLOCK_REPLY_ERROR, "NOPERM this user has no permissions to access one of the keys");
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_SERVER);
    CHECK(untouched(&v));
    r = typed(REDLOCK_REPLY_ERROR, NULL);
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_SERVER);
    r = typed(REDLOCK_REPLY_INTEGER, NULL);
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_PROTOCOL);
    r = typed(REDLOCK_REPLY_ARRAY, NULL);
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_PROTOCOL);
    r = typed(REDLOCK_REPLY_STATUS, "OK");
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_PROTOCOL);
    r = typed(REDLOCK_REPLY_OTHER, NULL);
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_PROTOCOL);
    r = str(TOK);
    r.str = NULL; /* a length without bytes */
    CHECK_EQ(redlock_value_from_get(&r, 1, &v), REDLOCK_ERR_PROTOCOL);
    CHECK(untouched(&v));
    CHECK_EQ(redlock_value_from_get(NULL, 1, &v), REDLOCK_ERR_INVALID);
    r = str(TOK);
    CHECK_EQ(redlock_value_from_get(&r, 1, NULL), REDLOCK_ERR_INVALID);
    CHECK(untouched(&v));
}

/* Proves: a reentrant lock's hash: owner, count, the first entry's token
   and its label; a fenced one's fence field; any order of fields. */
static void test_value_reentrant(void) {
    static const char *const two[] = { "svc-a", "2", "svc-a:web1:" TOK, "1", "svc-a:" TOK2, "1", NULL };
    static const char *const fenced[] = { "svc-a:" TOK, "1", REDLOCK_FENCE_FIELD, "17", "svc-a", "1", NULL };
    static const char *const bad_fence[] = { "o", "1", "o:" TOK, "1", " fence", "x", NULL };
    redlock_value v;
    redlock_reply r = hash(two);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_REENTRANT);
    CHECK_STR(v.owner, "svc-a");
    CHECK_EQ(v.owner_len, 5);
    CHECK_EQ(v.entries, 2);
    CHECK_STR(v.token, "web1:" TOK);
    CHECK_EQ(v.label_len, 5);
    CHECK_EQ(v.fence, -1);
    r = hash(fenced);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_REENTRANT);
    CHECK_STR(v.owner, "svc-a");
    CHECK_EQ(v.entries, 1);
    CHECK_EQ(v.fence, 17);
    CHECK_STR(v.token, TOK);
    r = hash(bad_fence); /* a fence field that is no number: no fence, still the lock */
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_REENTRANT);
    CHECK_EQ(v.fence, -1);
}

/* Proves: hashes that are not a reentrant lock's are OTHER: a count that
   disagrees with the entries, is 0, negative, huge or no number; a field
   of another owner or no token; an owner id too long; no entry; an odd
   number of elements; an element that is not a string. */
static void test_value_reentrant_hostile(void) {
    static const char *const wrong_count[] = { "o", "2", "o:" TOK, "1", NULL };
    static const char *const zero[] = { "o", "0", NULL };
    static const char *const negative[] = { "o", "-1", "o:" TOK, "1", NULL };
    static const char *const huge[] = { "o", "99999999999999999999999", "o:" TOK, "1", NULL };
    static const char *const ten_digits[] = { "o", "0000000001", "o:" TOK, "1", NULL };
    static const char *const nan[] = { "o", "1x", "o:" TOK, "1", NULL };
    static const char *const stranger[] = { "o", "2", "o:" TOK, "1", "p:" TOK2, "1", NULL };
    static const char *const short_tok[] = { "o", "1", "o:0123", "1", NULL };
    static const char *const empty_field[] = { "", "1", ":" TOK, "1", NULL };
    static const char *const odd[] = { "o", "1", "o:" TOK, NULL };
    static const char *const *const cases[] = { wrong_count, zero, negative, huge, ten_digits, nan, stranger, short_tok, empty_field, odd };
    char owner[REDLOCK_MAX_OWNER + 2], entry[REDLOCK_MAX_OWNER + 2 + REDLOCK_TOKEN_LEN + 1];
    const char *kv[5];
    redlock_value v;
    redlock_reply r;
    hashes_are_other(cases, sizeof cases / sizeof cases[0]);
    memset(owner, 'o', REDLOCK_MAX_OWNER + 1); /* one byte too long */
    owner[REDLOCK_MAX_OWNER + 1] = 0;
    snprintf(entry, sizeof entry, "%s:%s", owner, TOK);
    kv[0] = owner, kv[1] = "1", kv[2] = entry, kv[3] = "1", kv[4] = NULL;
    r = hash(kv);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    owner[REDLOCK_MAX_OWNER] = 0; /* at the limit: a lock */
    snprintf(entry, sizeof entry, "%s:%s", owner, TOK);
    r = hash(kv);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_REENTRANT);
    CHECK_EQ(v.owner_len, REDLOCK_MAX_OWNER);
    kv[1] = "1", kv[3] = "1";
    r = hash(kv);
    elems[3].type = REDLOCK_REPLY_INTEGER; /* a value of another type does not matter to an entry */
    elems[1].type = REDLOCK_REPLY_INTEGER; /* but the count must be a string */
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    r = hash(kv);
    elems[2].type = REDLOCK_REPLY_NIL; /* a field that is no string */
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
}

/* Proves: a readers-writer hash: live readers, the writer and update
   holders' tokens, waiting writers; entries expired by now_ms left out. */
static void test_value_rw(void) {
    static const char *const kv[] = {
        "r1:" TOK, "s2000", "r2:" TOK2, "s2000", TOK, "s900", /* the last has expired */
        "web1:" TOK2, "x2000", "w:web2:" TOK, "w2000", "w:" TOK2, "w500", "up:" TOK, "u1500", NULL };
    static const char *const only_waiting[] = { "w:" TOK, "w2000", NULL };
    redlock_value v;
    redlock_reply r = hash(kv);
    CHECK_EQ(hash_kind(&r, 1000, &v), REDLOCK_VALUE_RW);
    CHECK_EQ(v.readers, 2);
    CHECK_EQ(v.writers_waiting, 1);
    CHECK_STR(v.writer, "web1:" TOK2);
    CHECK_EQ(v.writer_len, 5 + REDLOCK_TOKEN_LEN);
    CHECK_STR(v.update, "up:" TOK);
    CHECK_EQ(v.token_len, 0);
    CHECK_EQ(redlock_value_from_hash(&r, 2000, &v), REDLOCK_OK); /* all expired */
    CHECK_EQ(v.kind, REDLOCK_VALUE_RW);
    CHECK_EQ(v.readers, 0);
    CHECK_EQ(v.writers_waiting, 0);
    CHECK_EQ(v.writer_len, 0);
    CHECK_STR(v.update, "");
    r = hash(only_waiting);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_RW);
    CHECK_EQ(v.readers, 0);
    CHECK_EQ(v.writers_waiting, 1);
}

/* Proves: readers-writer hashes with one entry not of ours are OTHER:
   an unknown mode letter, no expiry, an expiry that is no number or too
   long, a waiting mark without its prefix, a field that is no token. */
static void test_value_rw_hostile(void) {
    static const char *const letter[] = { TOK, "z2000", NULL };
    static const char *const bare[] = { TOK, "s", NULL };
    static const char *const nan[] = { TOK, "s20x0", NULL };
    static const char *const minus[] = { TOK, "s-2000", NULL };
    static const char *const long_ms[] = { TOK, "s99999999999999999999", NULL };
    static const char *const mark[] = { "v:" TOK, "w2000", NULL };
    static const char *const field[] = { "reader", "s2000", NULL };
    static const char *const nul[] = { TOK, "s2000", TOK2, "", NULL };
    static const char *const *const cases[] = { letter, bare, nan, minus, long_ms, mark, field, nul };
    redlock_value v;
    redlock_reply r;
    hashes_are_other(cases, sizeof cases / sizeof cases[0]);
    r = hash(letter);
    elems[1].len = 1; elems[1].str = "\0"; /* a NUL for a letter */
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
}

/* Proves: HGETALL's other answers: WRONGTYPE is OTHER (neither string nor
   hash), an empty array NONE (the key went), another error SERVER,
   another type PROTOCOL, an array without its elements PROTOCOL, a
   huge element count with an odd number OTHER; NULLs INVALID; on error
   the output is untouched. */
static void test_value_hash_answers(void) {
    redlock_value v;
    redlock_reply r = typed(REDLOCK_REPLY_ERROR, "WRONGTYPE Operation against a key holding the wrong kind of value");
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    r = typed(REDLOCK_REPLY_ARRAY, NULL);
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_NONE);
    v = sentinel();
    r = typed(REDLOCK_REPLY_ERROR, "ERR unknown command 'HGETALL'");
    CHECK_EQ(redlock_value_from_hash(&r, 0, &v), REDLOCK_ERR_SERVER);
    r = str(TOK);
    CHECK_EQ(redlock_value_from_hash(&r, 0, &v), REDLOCK_ERR_PROTOCOL);
    r = typed(REDLOCK_REPLY_INTEGER, NULL);
    CHECK_EQ(redlock_value_from_hash(&r, 0, &v), REDLOCK_ERR_PROTOCOL);
    r = typed(REDLOCK_REPLY_ARRAY, NULL);
    r.elements = 4; /* a count without its elements */
    CHECK_EQ(redlock_value_from_hash(&r, 0, &v), REDLOCK_ERR_PROTOCOL);
    CHECK(untouched(&v));
    r.element = elems;
    r.elements = (size_t)-1; /* odd: decided before any element is read */
    CHECK_EQ(hash_kind(&r, 0, &v), REDLOCK_VALUE_OTHER);
    v = sentinel();
    CHECK_EQ(redlock_value_from_hash(NULL, 0, &v), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_value_from_hash(&r, 0, NULL), REDLOCK_ERR_INVALID);
    CHECK(untouched(&v));
}

/* Proves: the fence counter: a count; none for no key, an error, another
   type, a number with a sign, too many digits or not a number. */
static void test_value_fence(void) {
    redlock_reply r = str("42");
    CHECK_EQ(redlock_value_fence(&r), 42);
    r = str("0");
    CHECK_EQ(redlock_value_fence(&r), 0);
    r = str("9223372036854775807");
    CHECK_EQ(redlock_value_fence(&r), INT64_MAX);
    r = str("9223372036854775808");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = str("12345678901234567890");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = str("-3");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = str("+3");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = str("");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = str("4 2");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = typed(REDLOCK_REPLY_NIL, NULL);
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = typed(REDLOCK_REPLY_ERROR, "NOPERM");
    CHECK_EQ(redlock_value_fence(&r), -1);
    r = typed(REDLOCK_REPLY_INTEGER, NULL);
    r.integer = 5;
    CHECK_EQ(redlock_value_fence(&r), -1);
    CHECK_EQ(redlock_value_fence(NULL), -1);
}

int main(void) {
    RUN(test_value_get_string);
    RUN(test_value_get_hostile);
    RUN(test_value_get_answers);
    RUN(test_value_reentrant);
    RUN(test_value_reentrant_hostile);
    RUN(test_value_rw);
    RUN(test_value_rw_hostile);
    RUN(test_value_hash_answers);
    RUN(test_value_fence);
    return CHECK_EXIT();
}
