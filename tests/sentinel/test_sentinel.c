/* test_sentinel.c - adapters/redlock_sentinel.h on its own: the question
   to the sentinels, their answers (an address, "unknown group", hostile
   ones), ROLE's answer and the errors that mean "not the primary". */
#include "adapters/redlock_sentinel.h"
#include "check.h"

static redlock_reply bulk(const char *s)
{
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STRING;
    r.str = s;
    r.len = strlen(s);
    return r;
}

static redlock_reply array(redlock_reply *e, size_t n)
{
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_ARRAY;
    r.element = e;
    r.elements = n;
    return r;
}

static int addr_of(const char *h, const char *p, char *host, size_t cap, int *port)
{
    redlock_reply e[2], r;
    e[0] = bulk(h);
    e[1] = bulk(p);
    r = array(e, 2);
    return redlock_sentinel_primary_addr(&r, host, cap, port);
}

/* Proves: the question names the group; an answer gives host and port,
   nil says the group is unknown; anything else (wrong shape, a port out
   of range or not a number, a host that is no host name or does not fit)
   is malformed and leaves the host empty. */
static void test_primary_addr(void)
{
    const char *argv[3];
    size_t len[3];
    char host[64];
    int port = 0;
    redlock_reply nil, one[1], r;
    CHECK_EQ(redlock_sentinel_ask_argv("my master", argv, len), 3);
    CHECK(len[0] == 8 && memcmp(argv[0], "SENTINEL", 8) == 0);
    CHECK(len[1] == 23 && memcmp(argv[1], "get-master-addr-by-name", 23) == 0);
    CHECK(len[2] == 9 && memcmp(argv[2], "my master", 9) == 0);
    CHECK_EQ(addr_of("127.0.0.1", "6380", host, sizeof host, &port), 0);
    CHECK_STR(host, "127.0.0.1");
    CHECK_EQ(port, 6380);
    CHECK_EQ(addr_of("::1", "1", host, sizeof host, &port), 0);
    CHECK_STR(host, "::1");
    CHECK_EQ(addr_of("h", "0", host, sizeof host, &port), -1);
    CHECK_STR(host, "");
    CHECK_EQ(addr_of("h", "65536", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("h", "6x", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("h", "", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("", "1", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("a b", "1", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("a/b", "1", host, sizeof host, &port), -1);
    CHECK_EQ(addr_of("0123456789", "1", host, 10, &port), -1); /* does not fit with its NUL */
    CHECK_EQ(addr_of("012345678", "1", host, 10, &port), 0);
    memset(&nil, 0, sizeof nil);
    nil.type = REDLOCK_REPLY_NIL;
    CHECK_EQ(redlock_sentinel_primary_addr(&nil, host, sizeof host, &port), 1);
    one[0] = bulk("h");
    r = array(one, 1);
    CHECK_EQ(redlock_sentinel_primary_addr(&r, host, sizeof host, &port), -1);
    r = bulk("h:1");
    CHECK_EQ(redlock_sentinel_primary_addr(&r, host, sizeof host, &port), -1);
    r.type = REDLOCK_REPLY_ERROR; /* e.g. -NOAUTH, or a server that is no sentinel */
    CHECK_EQ(redlock_sentinel_primary_addr(&r, host, sizeof host, &port), -1);
    CHECK_EQ(redlock_sentinel_primary_addr(NULL, host, sizeof host, &port), -1);
    CHECK_EQ(redlock_sentinel_primary_addr(&nil, host, 0, &port), -1);
}

/* Proves: ROLE says primary only for "master"; a replica (old and new
   words) or a sentinel is another role; errors and odd shapes are -1;
   READONLY, LOADING and MASTERDOWN mean "not the primary now". */
static void test_role(void)
{
    redlock_reply e[3], r;
    e[0] = bulk("master");
    memset(&e[1], 0, sizeof e[1]);
    e[1].type = REDLOCK_REPLY_INTEGER;
    r = array(e, 3);
    CHECK_EQ(redlock_sentinel_role(&r), REDLOCK_SENTINEL_PRIMARY);
    e[0] = bulk("slave");
    CHECK_EQ(redlock_sentinel_role(&r), REDLOCK_SENTINEL_OTHER);
    e[0] = bulk("replica");
    CHECK_EQ(redlock_sentinel_role(&r), REDLOCK_SENTINEL_OTHER);
    e[0] = bulk("sentinel");
    CHECK_EQ(redlock_sentinel_role(&r), REDLOCK_SENTINEL_OTHER);
    e[0] = bulk("masterx");
    CHECK_EQ(redlock_sentinel_role(&r), -1);
    r = array(e, 0);
    CHECK_EQ(redlock_sentinel_role(&r), -1);
    r = bulk("master");
    CHECK_EQ(redlock_sentinel_role(&r), -1);
    CHECK_EQ(redlock_sentinel_role(NULL), -1);
    CHECK(redlock_sentinel_not_primary("READONLY You can't write against a read only replica.", 54));
    CHECK(redlock_sentinel_not_primary("LOADING Redis is loading the dataset in memory", 46));
    CHECK(redlock_sentinel_not_primary("MASTERDOWN Link with MASTER is down", 35));
    CHECK(!redlock_sentinel_not_primary("ERR READONLY", 12));
    CHECK(!redlock_sentinel_not_primary("READ", 4));
    CHECK(!redlock_sentinel_not_primary(NULL, 8));
    { /* Redis 6's words for a script's write on a replica, and other wrapped errors */
        static const char ro[] = "ERR Error running script (call to f_ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6): "
                                 "@user_script:1: @user_script: 1: -READONLY You can't write against a read only replica. ";
        static const char wt[] = "ERR Error running script (call to f_ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6): "
                                 "@user_script:1: @user_script: 1: -WRONGTYPE Operation against a key holding the wrong kind of value ";
        static const char bare[] = "ERR Error running script (call to f_1): READONLY";
        CHECK(redlock_sentinel_not_primary(ro, sizeof ro - 1));
        CHECK(!redlock_sentinel_not_primary(ro, sizeof ro - 1 - 70)); /* cut before the code: no */
        CHECK(!redlock_sentinel_not_primary(wt, sizeof wt - 1));
        CHECK(!redlock_sentinel_not_primary(bare, sizeof bare - 1));
        { /* the words the adapters keep (redlock_conn.h): the wrapped error's */
            static const char want[] = "READONLY You can't write against a read only replica. ";
            const char *w = ro, *b = bare;
            size_t wl = sizeof ro - 1, bl = sizeof bare - 1;
            redlock__script_error_unwrap(&w, &wl);
            CHECK(wl == sizeof want - 1 && memcmp(w, want, wl) == 0);
            redlock__script_error_unwrap(&b, &bl);
            CHECK(b == bare && bl == sizeof bare - 1);
        }
    }
}

/* SENTINEL MASTER's answer with these config-epoch and role-reported-time. */
static int failover_of(const char *epoch, const char *rrt, int64_t *ago)
{
    redlock_reply e[8], r;
    e[0] = bulk("name"), e[1] = bulk("g");
    e[2] = bulk("role-reported-time"), e[3] = bulk(rrt);
    e[4] = bulk("config-epoch"), e[5] = bulk(epoch);
    e[6] = bulk("flags"), e[7] = bulk("master");
    r = array(e, 8);
    return redlock_sentinel_last_failover(&r, ago);
}

/* Proves: SENTINEL MASTER tells whether and how long ago the group failed
   over (config-epoch > 0: role-reported-time); a group never failed over
   is 0; missing or odd fields are -1. */
static void test_last_failover(void)
{
    const char *argv[3];
    size_t len[3];
    int64_t ago = -5;
    redlock_reply e[2], r;
    CHECK_EQ(redlock_sentinel_master_argv("g", argv, len), 3);
    CHECK(len[1] == 6 && memcmp(argv[1], "MASTER", 6) == 0);
    CHECK_EQ(failover_of("2", "1119", &ago), 1);
    CHECK_EQ(ago, 1119);
    CHECK_EQ(failover_of("0", "6", &ago), 0);
    CHECK_EQ(failover_of("x", "6", &ago), -1);
    CHECK_EQ(failover_of("1", "", &ago), -1);
    CHECK_EQ(failover_of("1", "1234567890123456789", &ago), -1);
    e[0] = bulk("config-epoch"), e[1] = bulk("1");
    r = array(e, 2);
    CHECK_EQ(redlock_sentinel_last_failover(&r, &ago), -1); /* no role-reported-time */
    r = array(e, 1);
    CHECK_EQ(redlock_sentinel_last_failover(&r, &ago), -1);
    r = bulk("ERR No such master with that name");
    r.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(redlock_sentinel_last_failover(&r, &ago), -1);
    CHECK_EQ(redlock_sentinel_last_failover(NULL, &ago), -1);
}

static int switched(const char *word, const char *channel, const char *payload, char *host, size_t cap, int *port)
{
    redlock_reply e[3], r;
    e[0] = bulk(word);
    e[1] = bulk(channel);
    e[2] = bulk(payload);
    r = array(e, 3);
    return redlock_sentinel_switched(&r, "rl", host, cap, port);
}

/* Proves: +switch-master is subscribed by its name; a message for our
   group gives the new primary, one for another group or another channel
   (or a SUBSCRIBE's confirmation) is not ours, a malformed one (missing
   words, a blank too many, a bad port or host, a host too long for the
   caller) is said so and leaves the host empty. */
static void test_switched(void)
{
    const char *argv[2];
    size_t len[2];
    char host[64], tiny[4];
    int port = 0;
    redlock_reply e[3], r;
    CHECK_EQ(redlock_sentinel_switch_argv(argv, len), 2);
    CHECK(len[0] == 9 && memcmp(argv[0], "SUBSCRIBE", 9) == 0 && len[1] == 14 && memcmp(argv[1], "+switch-master", 14) == 0);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port), 1);
    CHECK_EQ(strcmp(host, "10.0.0.2"), 0);
    CHECK_EQ(port, 6381);
    CHECK_EQ(switched("message", "+switch-master", "other 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port), 0);
    CHECK_EQ(switched("message", "+switch-master", "rl2 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port), 0);
    CHECK_EQ(switched("message", "+sdown", "rl 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port), 0);
    CHECK_EQ(switched("subscribe", "+switch-master", "1", host, sizeof host, &port), 0);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2", host, sizeof host, &port), -1);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 6381 x", host, sizeof host, &port), -1);
    CHECK_EQ(switched("message", "+switch-master", "rl  127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port), -1);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 70000", host, sizeof host, &port), -1);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 a/b 6381", host, sizeof host, &port), -1);
    CHECK_EQ(host[0], 0);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 6381 ", host, sizeof host, &port), -1);
    CHECK_EQ(switched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 6381", tiny, sizeof tiny, &port), -1);
    e[0] = bulk("message"), e[1] = bulk("+switch-master"), e[2] = bulk("x");
    e[2].type = REDLOCK_REPLY_INTEGER;
    r = array(e, 3);
    CHECK_EQ(redlock_sentinel_switched(&r, "rl", host, sizeof host, &port), -1);
    CHECK_EQ(redlock_sentinel_switched(NULL, "rl", host, sizeof host, &port), -1);
}

static int watched(const char *word, const char *channel, const char *payload, char *host, size_t cap, int *port)
{
    redlock_reply e[3], r;
    e[0] = bulk(word);
    e[1] = bulk(channel);
    e[2] = bulk(payload);
    r = array(e, 3);
    return redlock_sentinel_watch_reply(&r, "rl", host, cap, port);
}

/* Proves: on a +switch-master watch, SUBSCRIBE's confirmation, our
   group's failover and another group's are told apart, and anything
   else (another channel, an error, a malformed message, a bare string)
   is BAD: the watch closes rather than guess. */
static void test_watch_reply(void)
{
    char host[64];
    int port = 0;
    redlock_reply e[3], r;
    e[0] = bulk("subscribe"), e[1] = bulk("+switch-master"), e[2] = bulk("1");
    e[2].type = REDLOCK_REPLY_INTEGER;
    e[2].integer = 1;
    r = array(e, 3);
    CHECK_EQ(redlock_sentinel_watch_reply(&r, "rl", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_CONFIRMED);
    CHECK_EQ(watched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port),
             REDLOCK_SENTINEL_WATCH_SWITCHED);
    CHECK(strcmp(host, "10.0.0.2") == 0 && port == 6381);
    CHECK_EQ(watched("message", "+switch-master", "other 127.0.0.1 6380 10.0.0.2 6381", host, sizeof host, &port),
             REDLOCK_SENTINEL_WATCH_OTHER);
    CHECK_EQ(watched("message", "+sdown", "rl 127.0.0.1 6380", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_BAD);
    CHECK_EQ(watched("subscribe", "other", "1", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_BAD);
    CHECK_EQ(watched("unsubscribe", "+switch-master", "0", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_BAD);
    CHECK_EQ(watched("message", "+switch-master", "rl 127.0.0.1 6380 10.0.0.2", host, sizeof host, &port),
             REDLOCK_SENTINEL_WATCH_BAD);
    r = bulk("NOAUTH Authentication required.");
    r.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(redlock_sentinel_watch_reply(&r, "rl", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_BAD);
    r = bulk("OK");
    CHECK_EQ(redlock_sentinel_watch_reply(&r, "rl", host, sizeof host, &port), REDLOCK_SENTINEL_WATCH_BAD);
}

int main(void)
{
    RUN(test_primary_addr);
    RUN(test_last_failover);
    RUN(test_role);
    RUN(test_switched);
    RUN(test_watch_reply);
    return CHECK_EXIT();
}
