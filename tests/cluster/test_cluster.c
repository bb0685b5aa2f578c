/* test_cluster.c - adapters/redlock_cluster.h on its own: key slots (and
   against a real cluster-mode redis-server's CLUSTER KEYSLOT, for keys
   full of braces), the key of each command the core sends, MOVED / ASK /
   TRYAGAIN / CLUSTERDOWN, and the slot map loaded from CLUSTER SLOTS and
   kept by MOVED, with hostile replies; the routing of a transport's
   cluster node: where a command goes, what a reply means (resend, ASKING,
   pass), the bounded refresh, failovers and the masters' lives.
   Usage: test_cluster [RANDOM_KEYS]   (default 3000) */
#define _POSIX_C_SOURCE 200809L
#include "adapters/redlock_cluster.h"
#include "check.h"
#include "redis_nodes.h"

#include <stdlib.h>

static long random_keys = 3000;

static unsigned slot_of(const char *key) { return redlock_cluster_slot(key, strlen(key)); }

/* Proves: the slot is CRC16 of the key, or of its first non-empty {tag}. */
static void test_slots(void)
{
    CHECK_EQ(slot_of("123456789"), 12739); /* CRC16/XMODEM's check value 0x31C3 */
    CHECK_EQ(slot_of("foo"), 12182);
    CHECK_EQ(slot_of("bar"), 5061);
    CHECK_EQ(slot_of("{user1000}.following"), slot_of("user1000"));
    CHECK_EQ(slot_of("{user1000}.followers"), slot_of("user1000"));
    CHECK_EQ(slot_of("foo{}{bar}"), 8363);     /* an empty first tag: the whole key */
    CHECK_EQ(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    CHECK_EQ(slot_of("foo{bar}{zap}"), slot_of("bar"));
    CHECK_EQ(slot_of("foo{bar"), redlock_cluster_slot("foo{bar", 7));
    CHECK_EQ(slot_of(""), 0);
    CHECK_EQ(redlock_cluster_slot("a\0b", 3) == redlock_cluster_slot("a", 1), 0); /* binary keys count every byte */
    /* a fenced lock's counter shares a tagged key's slot */
    CHECK_EQ(slot_of(REDLOCK_FENCE_PREFIX "{orders}:lock"), slot_of("{orders}:lock"));
    CHECK(slot_of(REDLOCK_FENCE_PREFIX "orders") != slot_of("orders"));
}

/* Proves: the key of the commands the core sends; none for the others. */
static void test_command_key(void)
{
    redlock_command c;
    const char *key = NULL;
    size_t len = 0;
    memset(&c, 0, sizeof c);
    c.argc = 6;
    c.argv[0] = "SET", c.argv[1] = "res", c.argv[2] = "tok", c.argv[3] = "NX", c.argv[4] = "PX", c.argv[5] = "100";
    c.argvlen[0] = 3, c.argvlen[1] = 3;
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 1);
    CHECK(len == 3 && memcmp(key, "res", 3) == 0);
    c.argc = 5;
    c.argv[0] = "evalsha", c.argv[1] = "0123", c.argv[2] = "2", c.argv[3] = "{k}", c.argv[4] = "redlock:fence:{k}";
    c.argvlen[0] = 7, c.argvlen[1] = 4, c.argvlen[2] = 1, c.argvlen[3] = 3;
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 1);
    CHECK(len == 3 && memcmp(key, "{k}", 3) == 0);
    c.argv[2] = "0";
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 0);
    c.argc = 3;
    c.argv[0] = "EVAL", c.argvlen[0] = 4, c.argv[2] = "1";
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 0); /* no key given */
    c.argc = 2;
    c.argv[0] = "INFO", c.argvlen[0] = 4;
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 0);
    c.argc = 1;
    c.argv[0] = "GET", c.argvlen[0] = 3;
    CHECK_EQ(redlock_cluster_command_key(&c, &key, &len), 0);
    CHECK_EQ(redlock_cluster_command_key(NULL, &key, &len), 0);
}

static void expect_redirect(const char *err, int kind, int slot, const char *host, int port)
{
    redlock_cluster_redirect r;
    memset(&r, 0x55, sizeof r);
    CHECK_EQ(redlock_cluster_redirection(err, strlen(err), &r), kind);
    if (kind == REDLOCK_CLUSTER_NONE) return;
    CHECK_EQ(r.slot, slot);
    CHECK_STR(r.host, host);
    CHECK_EQ(r.port, port);
}

/* Proves: MOVED and ASK are read (IPv6 hosts, an empty host, a trailing
   line end); anything malformed is an error like any other. */
static void test_redirections(void)
{
    char longhost[400];
    expect_redirect("MOVED 3999 127.0.0.1:6381", REDLOCK_CLUSTER_MOVED, 3999, "127.0.0.1", 6381);
    expect_redirect("ASK 0 ::1:7000", REDLOCK_CLUSTER_ASK, 0, "::1", 7000);
    expect_redirect("MOVED 16383 :6380", REDLOCK_CLUSTER_MOVED, 16383, "", 6380);
    expect_redirect("MOVED 12 redis-2.internal:7001\r\n", REDLOCK_CLUSTER_MOVED, 12, "redis-2.internal", 7001);
    expect_redirect("MOVED 16384 h:1", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 123456 h:1", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED x h:1", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 h", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 h:", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 h:0", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 h:65536", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 h:6x", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1 ?:7000", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED 1", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("MOVED", REDLOCK_CLUSTER_NONE, 0, "", 0);
    expect_redirect("ERR unknown command", REDLOCK_CLUSTER_NONE, 0, "", 0);
    memset(longhost, 'h', sizeof longhost);
    memcpy(longhost, "MOVED 1 ", 8);
    memcpy(longhost + 380, ":7000", 6);
    expect_redirect(longhost, REDLOCK_CLUSTER_NONE, 0, "", 0);
    CHECK_EQ(redlock_cluster_redirection(NULL, 5, NULL), REDLOCK_CLUSTER_NONE);
    CHECK(redlock_cluster_busy("TRYAGAIN Multiple keys request during rehashing of slot", 54));
    CHECK(redlock_cluster_busy("CLUSTERDOWN The cluster is down", 31));
    CHECK(!redlock_cluster_busy("ERR CLUSTERDOWN", 15));
    CHECK(!redlock_cluster_busy("TRY", 3));
}

/* A CLUSTER SLOTS reply in the tests' memory. */
typedef struct slots_reply {
    redlock_reply top, range[8], field[8][3], node[8][3];
} slots_reply;

static void slots_range(slots_reply *s, int k, long long from, long long to, const char *host, long long port)
{
    redlock_reply *f = s->field[k], *n = s->node[k];
    memset(&s->range[k], 0, sizeof s->range[k]);
    s->range[k].type = REDLOCK_REPLY_ARRAY;
    s->range[k].element = f;
    s->range[k].elements = 3;
    f[0].type = f[1].type = REDLOCK_REPLY_INTEGER;
    f[0].integer = from;
    f[1].integer = to;
    f[2].type = REDLOCK_REPLY_ARRAY;
    f[2].element = n;
    f[2].elements = 3;
    n[0].type = REDLOCK_REPLY_STRING;
    n[0].str = host;
    n[0].len = strlen(host);
    n[1].type = REDLOCK_REPLY_INTEGER;
    n[1].integer = port;
    n[2].type = REDLOCK_REPLY_STRING;
    n[2].str = "07c37dfeb235213a872192d90877d0cd55635b91";
    n[2].len = 40;
    s->top.elements = (size_t)k + 1;
}

static void slots_init(slots_reply *s)
{
    memset(s, 0, sizeof *s);
    s->top.type = REDLOCK_REPLY_ARRAY;
    s->top.element = s->range;
}

/* Proves: CLUSTER SLOTS fills the map (masters named once, an empty host
   is the one asked); MOVED moves one slot; a malformed reply or too many
   masters leave the map empty, never half-loaded. */
static void test_map(void)
{
    static redlock_cluster_map m;
    static slots_reply s;
    int k;
    redlock_cluster_map_init(&m);
    CHECK_EQ(redlock_cluster_owner(&m, 5), -1);
    slots_init(&s);
    slots_range(&s, 0, 0, 5460, "10.0.0.1", 7000);
    slots_range(&s, 1, 5461, 10922, "", 7001);
    slots_range(&s, 2, 10923, 16383, "10.0.0.1", 7000);
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, "10.0.0.9"), 0);
    CHECK_EQ(m.masters, 2);
    CHECK_EQ(redlock_cluster_owner(&m, 0), 0);
    CHECK_EQ(redlock_cluster_owner(&m, 5461), 1);
    CHECK_STR(m.master[1].host, "10.0.0.9");
    CHECK_EQ(redlock_cluster_owner(&m, 16383), 0);
    CHECK_EQ(redlock_cluster_owner(&m, 16384), -1);
    CHECK_EQ(redlock_cluster_map_move(&m, 100, "10.0.0.3", 7002), 2);
    CHECK_EQ(redlock_cluster_owner(&m, 100), 2);
    CHECK_EQ(redlock_cluster_owner(&m, 101), 0);
    CHECK_EQ(redlock_cluster_map_move(&m, 101, "10.0.0.3", 7002), 2);
    CHECK_EQ(m.masters, 3);
    CHECK_EQ(redlock_cluster_map_move(&m, 16384, "h", 1), -1);
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1); /* an empty host, none asked */
    CHECK_EQ(m.masters, 0);
    CHECK_EQ(redlock_cluster_owner(&m, 0), -1);
    slots_range(&s, 1, 5461, 10922, "10.0.0.2", 7001);
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), 0);
    slots_range(&s, 1, 10922, 5461, "10.0.0.2", 7001); /* reversed */
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    CHECK_EQ(redlock_cluster_owner(&m, 0), -1);
    slots_range(&s, 1, 5461, 16384, "10.0.0.2", 7001);
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    slots_range(&s, 1, 5461, 10922, "10.0.0.2", 0);
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    slots_range(&s, 1, 5461, 10922, "10.0.0.2", 7001);
    s.node[1][0].type = REDLOCK_REPLY_INTEGER;
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    s.node[1][0].type = REDLOCK_REPLY_STRING;
    s.field[1][2].elements = 1;
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    s.field[1][2].elements = 3;
    s.range[1].elements = 2;
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    s.top.type = REDLOCK_REPLY_ERROR;
    CHECK_EQ(redlock_cluster_map_load(&m, &s.top, NULL), -1);
    CHECK_EQ(redlock_cluster_map_load(&m, NULL, NULL), -1);
    /* a full map: a new master empties it, to be loaded again */
    redlock_cluster_map_init(&m);
    for (k = 0; k < REDLOCK_CLUSTER_MAX_MASTERS; k++) CHECK_EQ(redlock_cluster_map_move(&m, k, "10.1.1.1", 1000 + k), k);
    CHECK_EQ(redlock_cluster_map_move(&m, 9999, "10.1.1.1", 999), -1);
    CHECK_EQ(m.masters, 0);
    CHECK_EQ(redlock_cluster_owner(&m, 0), -1);
}

/* A CLUSTER SLOTS reply whose ranges have one master and one replica. */
typedef struct shards_reply {
    redlock_reply top, range[4], field[4][4], node[4][2][3];
} shards_reply;

static void shard_node(redlock_reply *f, redlock_reply *n, const char *host, long long port, const char *id)
{
    f->type = REDLOCK_REPLY_ARRAY;
    f->element = n;
    f->elements = 3;
    n[0].type = REDLOCK_REPLY_STRING, n[0].str = host, n[0].len = strlen(host);
    n[1].type = REDLOCK_REPLY_INTEGER, n[1].integer = port;
    n[2].type = REDLOCK_REPLY_STRING, n[2].str = id, n[2].len = strlen(id);
}

static void shards_range(shards_reply *s, int k, long long from, long long to, int master_port, int replica_port)
{
    static const char *ids[] = { "id7000", "id7001", "id7002", "id7003", "id7004", "id7005" };
    redlock_reply *f = s->field[k];
    s->top.type = REDLOCK_REPLY_ARRAY;
    s->top.element = s->range;
    s->top.elements = (size_t)k + 1;
    s->range[k].type = REDLOCK_REPLY_ARRAY;
    s->range[k].element = f;
    s->range[k].elements = replica_port ? 4 : 3;
    f[0].type = f[1].type = REDLOCK_REPLY_INTEGER;
    f[0].integer = from;
    f[1].integer = to;
    shard_node(&f[2], s->node[k][0], "10.0.0.1", master_port, ids[master_port - 7000]);
    if (replica_port) shard_node(&f[3], s->node[k][1], "10.0.0.1", replica_port, ids[replica_port - 7000]);
}

static redlock_reply error_reply(const char *text)
{
    redlock_reply r;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_ERROR;
    r.str = text;
    r.len = strlen(text);
    return r;
}

static redlock_command set_command(const char *key)
{
    redlock_command c;
    memset(&c, 0, sizeof c);
    c.argc = 3;
    c.argv[0] = "SET", c.argv[1] = key, c.argv[2] = "v";
    c.argvlen[0] = 3, c.argvlen[1] = strlen(key), c.argvlen[2] = 1;
    return c;
}

/* Proves: routing by slot, "load the map first", keyless commands; the
   refresh is due only for an empty or stale map and at most once per
   interval; update keeps master indices across reloads and names
   replicas; a promoted replica is a failover, a planned move is not; a
   malformed reply leaves the map as it was. */
static void test_routing(void)
{
    static redlock_cluster c;
    static shards_reply s;
    redlock_command foo = set_command("foo"), bar = set_command("{bar}x"), info;
    int n = -1;
    redlock_cluster_init(&c);
    memset(&info, 0, sizeof info);
    info.argc = 1, info.argv[0] = "INFO", info.argvlen[0] = 4;
    CHECK_EQ(redlock_cluster_route(&c, &foo), REDLOCK_CLUSTER_UNKNOWN);
    CHECK_EQ(redlock_cluster_route(&c, &info), REDLOCK_CLUSTER_ANY);
    CHECK_EQ(redlock_cluster_refresh_due(&c, 0), 1);
    redlock_cluster_refresh_asked(&c, 1000000);
    CHECK_EQ(redlock_cluster_refresh_due(&c, 1000000 + REDLOCK_CLUSTER_REFRESH_MS * 1000 - 1), 0); /* empty, but just asked */
    CHECK_EQ(redlock_cluster_refresh_due(&c, 1000000 + REDLOCK_CLUSTER_REFRESH_MS * 1000), 1);
    memset(&s, 0, sizeof s);
    shards_range(&s, 0, 0, 5460, 7000, 7003);
    shards_range(&s, 1, 5461, 10922, 7001, 7004);
    shards_range(&s, 2, 10923, 16383, 7002, 7005);
    CHECK_EQ(redlock_cluster_update(&c, &s.top, NULL, &n), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(c.map.masters, 6); /* masters and replicas, named once */
    CHECK_EQ(redlock_cluster_route(&c, &foo), 4); /* 12182: the third range's master, 7002, added after 7000, 7003, 7001, 7004 */
    CHECK_EQ(c.map.master[4].port, 7002);
    CHECK_STR(c.map.master[4].id, "id7002");
    CHECK_EQ(c.map.master[5].replica_of, 4);
    CHECK_EQ(c.map.master[1].replica_of, 0);
    CHECK_EQ(c.map.master[0].replica_of, -1);
    CHECK_EQ(redlock_cluster_route(&c, &bar), redlock_cluster_owner(&c.map, redlock_cluster_slot("bar", 3)));
    CHECK_EQ(redlock_cluster_refresh_due(&c, 5000000), 0); /* loaded, not stale */
    /* a planned move of the third range to 7000: no failover; indices kept */
    shards_range(&s, 2, 10923, 16383, 7000, 7003);
    CHECK_EQ(redlock_cluster_update(&c, &s.top, NULL, &n), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(redlock_cluster_route(&c, &foo), 0);
    CHECK_EQ(c.map.masters, 6);
    /* 7003 (a replica of 7000) takes over both of 7000's ranges: one failover */
    shards_range(&s, 0, 0, 5460, 7003, 0);
    shards_range(&s, 2, 10923, 16383, 7003, 0);
    CHECK_EQ(redlock_cluster_update(&c, &s.top, NULL, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(redlock_cluster_route(&c, &foo), 1);
    CHECK_EQ(c.map.master[1].replica_of, -1);
    /* malformed: the map is as it was */
    s.node[1][0][1].integer = 0;
    CHECK_EQ(redlock_cluster_update(&c, &s.top, NULL, &n), -1);
    CHECK_EQ(redlock_cluster_route(&c, &foo), 1);
    CHECK_EQ(redlock_cluster_update(&c, NULL, NULL, NULL), -1);
    CHECK_EQ(c.map.masters, 6);
}

/* Proves: what a reply means - a plain reply and TRYAGAIN pass; MOVED
   updates the map, makes it stale and resends once (the second
   redirection passes); ASK asks once without touching the map; a MOVED
   to the old master's replica is a failover; an empty host is the one
   asked. */
static void test_answers(void)
{
    static redlock_cluster c;
    static shards_reply s;
    redlock_cluster_step st;
    redlock_reply ok, e;
    const char *av[1];
    size_t al[1];
    unsigned slot = redlock_cluster_slot("foo", 3); /* 12182 */
    char text[96];
    redlock_cluster_init(&c);
    memset(&s, 0, sizeof s);
    shards_range(&s, 0, 0, 8191, 7000, 7003);
    shards_range(&s, 1, 8192, 16383, 7001, 7004);
    CHECK_EQ(redlock_cluster_update(&c, &s.top, NULL, NULL), 0); /* 7000 0, 7003 1, 7001 2, 7004 3 */
    memset(&ok, 0, sizeof ok);
    ok.type = REDLOCK_REPLY_STATUS, ok.str = "OK", ok.len = 2;
    CHECK_EQ(redlock_cluster_answer(&c, &ok, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_PASS);
    CHECK_EQ(st.master, -1);
    e = error_reply("TRYAGAIN Multiple keys request during rehashing of slot");
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_PASS);
    CHECK_EQ(c.stale, 0);
    e = error_reply("CLUSTERDOWN The cluster is down");
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_PASS);
    CHECK_EQ(c.stale, 1);
    c.stale = 0;
    e = error_reply("NOSCRIPT No matching script");
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_PASS);
    /* ASK: once, the map unchanged */
    snprintf(text, sizeof text, "ASK %u 10.0.0.1:7000", slot);
    e = error_reply(text);
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_ASKING);
    CHECK_EQ(st.master, 0);
    CHECK_EQ(redlock_cluster_owner(&c.map, slot), 2);
    CHECK_EQ(c.stale, 0);
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 1, &st), REDLOCK_CLUSTER_PASS); /* a second redirection */
    /* MOVED to a master not a replica of the old one: no failover */
    snprintf(text, sizeof text, "MOVED %u 10.0.0.1:7000", slot);
    e = error_reply(text);
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_RESEND);
    CHECK_EQ(st.master, 0);
    CHECK_EQ(st.failover, 0);
    CHECK_EQ(redlock_cluster_owner(&c.map, slot), 0);
    CHECK_EQ(c.stale, 1);
    CHECK_EQ(redlock_cluster_refresh_due(&c, 0), 1);
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 1, &st), REDLOCK_CLUSTER_PASS);
    /* MOVED to the old master's replica: a failover */
    snprintf(text, sizeof text, "MOVED %u :7003", slot);
    e = error_reply(text);
    CHECK_EQ(redlock_cluster_answer(&c, &e, "10.0.0.1", 0, &st), REDLOCK_CLUSTER_RESEND);
    CHECK_EQ(st.master, 1);
    CHECK_EQ(st.failover, 1);
    /* a new master on a MOVED is added */
    snprintf(text, sizeof text, "MOVED %u 10.0.0.7:7010", slot);
    e = error_reply(text);
    CHECK_EQ(redlock_cluster_answer(&c, &e, NULL, 0, &st), REDLOCK_CLUSTER_RESEND);
    CHECK_EQ(st.master, 4);
    CHECK_EQ(c.map.masters, 5);
    snprintf(text, sizeof text, "MOVED %u :7010", slot); /* no host, none asked */
    e = error_reply(text);
    CHECK_EQ(redlock_cluster_answer(&c, &e, NULL, 0, &st), REDLOCK_CLUSTER_PASS);
    redlock_cluster_asking_argv(av, al);
    CHECK(al[0] == 6 && memcmp(av[0], "ASKING", 6) == 0);
}

/* Proves: a fenced lock fits one slot only with a {hash tag}; other
   locks always fit. */
static void test_lock_fits(void)
{
    redlock_lock_opts o;
    memset(&o, 0, sizeof o);
    o.key = "orders";
    CHECK_EQ(redlock_cluster_lock_fits(&o), 1); /* not fenced */
    o.fence = 1;
    CHECK_EQ(redlock_cluster_lock_fits(&o), 0);
    o.key = "{orders}:lock";
    CHECK_EQ(redlock_cluster_lock_fits(&o), 1);
    o.key = "a{}b{c}"; /* an empty first tag: the whole key counts */
    CHECK_EQ(redlock_cluster_lock_fits(&o), 0);
    o.key = "x{orders}";
    o.key_len = 2; /* "x{": no tag within the length */
    CHECK_EQ(redlock_cluster_lock_fits(&o), 0);
    o.key_len = 0;
    CHECK_EQ(redlock_cluster_lock_fits(&o), 1);
    CHECK_EQ(redlock_cluster_lock_fits(NULL), 1);
}

/* Proves: a script's keys in two slots are seen; in one slot, or one
   key, or not a script: not. */
static void test_cross_slot(void)
{
    redlock_command c;
    memset(&c, 0, sizeof c);
    c.argc = 5;
    c.argv[0] = "EVALSHA", c.argv[1] = "0123", c.argv[2] = "2", c.argv[3] = "orders", c.argv[4] = "redlock:fence:orders";
    c.argvlen[0] = 7, c.argvlen[1] = 4, c.argvlen[2] = 1, c.argvlen[3] = 6, c.argvlen[4] = 20;
    CHECK_EQ(redlock_cluster_cross_slot(&c), 1);
    c.argv[3] = "{o}x", c.argvlen[3] = 4, c.argv[4] = "redlock:fence:{o}x", c.argvlen[4] = 18;
    CHECK_EQ(redlock_cluster_cross_slot(&c), 0);
    c.argv[2] = "1", c.argv[3] = "orders", c.argvlen[3] = 6;
    CHECK_EQ(redlock_cluster_cross_slot(&c), 0);
    c.argv[2] = "3"; /* more keys than arguments: not read */
    CHECK_EQ(redlock_cluster_cross_slot(&c), 0);
    c.argv[0] = "MGET", c.argvlen[0] = 4, c.argv[2] = "2";
    CHECK_EQ(redlock_cluster_cross_slot(&c), 0);
    CHECK_EQ(redlock_cluster_cross_slot(NULL), 0);
}

static redlock_node_life life_of(const char *run_id, int64_t uptime_s, int durable)
{
    redlock_node_life l;
    memset(&l, 0, sizeof l);
    snprintf(l.run_id, sizeof l.run_id, "%s", run_id);
    l.uptime_s = uptime_s;
    l.durable = durable;
    l.aof = durable;
    return l;
}

/* Proves: per-master lives - first seen durable: nothing; first seen not
   durable: its uptime; the same run_id again: nothing; a new run_id: now;
   masters apart. */
static void test_lives(void)
{
    static redlock_cluster c;
    redlock_node_life l;
    int64_t ago = -1;
    redlock_cluster_init(&c);
    CHECK_EQ(redlock_cluster_map_move(&c.map, 1, "10.0.0.1", 7000), 0);
    CHECK_EQ(redlock_cluster_map_move(&c.map, 2, "10.0.0.1", 7001), 1);
    l = life_of("aaaa", 5, 1);
    CHECK_EQ(redlock_cluster_life(&c, 0, &l, &ago), 0);
    l = life_of("bbbb", 7, 0);
    CHECK_EQ(redlock_cluster_life(&c, 1, &l, &ago), 1);
    CHECK_EQ(ago, 7000);
    l = life_of("aaaa", 9, 1);
    CHECK_EQ(redlock_cluster_life(&c, 0, &l, &ago), 0);
    l = life_of("bbbb", 9, 0);
    CHECK_EQ(redlock_cluster_life(&c, 1, &l, &ago), 0);
    l = life_of("cccc", 1, 1);
    CHECK_EQ(redlock_cluster_life(&c, 0, &l, &ago), 1);
    CHECK_EQ(ago, 0);
    CHECK_EQ(redlock_cluster_life(&c, 7, &l, &ago), 0); /* no such master */
    CHECK_EQ(redlock_cluster_life(&c, -1, &l, &ago), 0);
}

/* Proves: for random keys of bytes that matter ('{', '}', letters, NUL,
   high bytes), the slot is the one a real cluster-mode redis-server's
   CLUSTER KEYSLOT gives. */
static void test_against_server(void)
{
    redis_nodes rn;
    const char *extra[] = { "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", NULL };
    static const char alphabet[] = "{}{}ab:x\xff";
    long k;
    unsigned seed = 7;
    if (redis_nodes_start(&rn, 1, extra, NULL) != 0) {
        CHECK(!"a cluster-mode redis-server started");
        return;
    }
    for (k = 0; k < random_keys; k++) {
        char key[24], out[64], want[16];
        const char *argv[4];
        size_t n, i;
        seed = seed * 1103515245u + 12345u;
        n = 1 + (seed >> 16) % 12;
        for (i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            key[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        key[n] = 0;
        argv[0] = "CLUSTER", argv[1] = "KEYSLOT", argv[2] = key, argv[3] = NULL;
        if (redis_nodes_queryv(redis_nodes_port(&rn, 0), NULL, NULL, 2000, argv, out, sizeof out) != 0) {
            CHECK(!"CLUSTER KEYSLOT answered");
            break;
        }
        snprintf(want, sizeof want, ":%u", redlock_cluster_slot(key, n));
        if (strcmp(out, want) != 0) {
            printf("#   key '%s': server %s, ours %s\n", key, out, want);
            CHECK(0);
            break;
        }
    }
    printf("# %ld random keys: the server's slot each time\n", k);
    redis_nodes_stop(&rn);
}

int main(int argc, char **argv)
{
    if (argc > 1) random_keys = atol(argv[1]);
    redis_nodes_deadline(120);
    RUN(test_slots);
    RUN(test_command_key);
    RUN(test_redirections);
    RUN(test_map);
    RUN(test_routing);
    RUN(test_answers);
    RUN(test_lives);
    RUN(test_lock_fits);
    RUN(test_cross_slot);
    RUN(test_against_server);
    return CHECK_EXIT();
}
