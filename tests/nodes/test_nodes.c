/* test_nodes.c - the node-list parser every adapter and the tool use
   (adapters/redlock_nodes.h), on its own: no server, no core, no adapter.
   Each form of node, each refusal with its exact words (a password never
   among them, the node at fault named), appending, $REDLOCK_NODES, the
   text of a node for messages and the scrubbing of argv; then hostile
   text: long, deep, full of separators, and random lists built from the
   characters that matter, where every answer must be a clean refusal or
   nodes that say the same when written out and parsed again.
   Usage: test_nodes [RANDOM_LISTS]   (default 20000) */
#define _POSIX_C_SOURCE 200809L
#include "adapters/redlock_nodes.h"
#include "check.h"

#include <stdlib.h>

/* What a configuration holds of its nodes (every adapter's has these). */
typedef struct nodes {
    int node_count;
    redlock_node node[REDLOCK_MAX_NODES];
} nodes;

/* A configuration as config_init leaves it: one node, 127.0.0.1:6379. */
static void fresh(nodes *c)
{
    memset(c, 0, sizeof *c);
    c->node_count = 1;
    c->node[0].host = "127.0.0.1";
    c->node[0].port = 6379;
}

static int parse1(const char *list, nodes *c, void **mem, char *err, size_t errlen)
{
    fresh(c);
    *mem = NULL;
    return redlock_parse_nodes(c->node, &c->node_count, list, mem, err, errlen);
}

static const char *s_or(const char *s) { return s ? s : "(null)"; }

/* list -> "host|port|unix_path|user|pass|db|tls" of node 0 and the formatted text */
static void expect_node(const char *list, const char *fields, const char *shown)
{
    nodes c;
    void *mem;
    char err[256], got[600], fmt[256];
    int rc = parse1(list, &c, &mem, err, sizeof err);
    CHECK_EQ(rc, 0);
    if (rc != 0) {
        printf("#   %s: %s\n", list, err);
        return;
    }
    CHECK_EQ(c.node_count, 1);
    snprintf(got, sizeof got, "%s|%d|%s|%s|%s|%d|%d", s_or(c.node[0].host), c.node[0].port, s_or(c.node[0].unix_path),
             s_or(c.node[0].username), s_or(c.node[0].password), c.node[0].db, c.node[0].tls.enable);
    CHECK_STR(got, fields);
    CHECK_EQ(redlock_format_node(&c.node[0], fmt, sizeof fmt), (long long)strlen(shown));
    CHECK_STR(fmt, shown);
    redlock_free_nodes(mem);
}

/* list -> error status and message; the nodes and mem untouched */
static void expect_bad(const char *list, int status, const char *msg)
{
    nodes c;
    void *mem;
    char err[256];
    int rc = parse1(list, &c, &mem, err, sizeof err);
    CHECK_EQ(rc, status);
    CHECK_STR(err, msg);
    CHECK(mem == NULL);
    CHECK_EQ(c.node_count, 1);
    CHECK_STR(c.node[0].host, "127.0.0.1");
    if (rc == 0) redlock_free_nodes(mem);
}

static void test_node_specs(void)
{
    expect_node("127.0.0.1:7000", "127.0.0.1|7000|(null)|(null)|(null)|0|0", "127.0.0.1:7000");
    expect_node("localhost", "localhost|6379|(null)|(null)|(null)|0|0", "localhost:6379");
    expect_node(REDLOCK_NODES_DEFAULT, "127.0.0.1|6379|(null)|(null)|(null)|0|0", "127.0.0.1:6379");
    expect_node("[::1]:7001", "::1|7001|(null)|(null)|(null)|0|0", "[::1]:7001");
    expect_node("[fe80::1]", "fe80::1|6379|(null)|(null)|(null)|0|0", "[fe80::1]:6379");
    expect_node("[::ffff:10.0.0.1]:1", "::ffff:10.0.0.1|1|(null)|(null)|(null)|0|0", "[::ffff:10.0.0.1]:1");
    expect_node("[fe80::1%eth0]:7", "fe80::1%eth0|7|(null)|(null)|(null)|0|0", "[fe80::1%eth0]:7");
    expect_node("h:00080", "h|80|(null)|(null)|(null)|0|0", "h:80");
    expect_node("/tmp/redis.sock", "(null)|0|/tmp/redis.sock|(null)|(null)|0|0", "/tmp/redis.sock");
    expect_node("./r.sock", "(null)|0|./r.sock|(null)|(null)|0|0", "./r.sock");
    expect_node("redis://h:7002", "h|7002|(null)|(null)|(null)|0|0", "h:7002");
    expect_node("redis://h:7003/", "h|7003|(null)|(null)|(null)|0|0", "h:7003");
    expect_node("redis://h/4", "h|6379|(null)|(null)|(null)|4|0", "redis://h:6379/4");
    expect_node("redis://alice:pw@db.example:7004/3", "db.example|7004|(null)|alice|pw|3|0", "redis://alice:***@db.example:7004/3");
    expect_node("redis://:s3cr3t@[::1]:7005", "::1|7005|(null)|(null)|s3cr3t|0|0", "redis://:***@[::1]:7005");
    /* TLS is a property of the node; whether it is built in, the adapter's init says */
    expect_node("rediss://h", "h|6379|(null)|(null)|(null)|0|1", "rediss://h:6379");
    expect_node("rediss://u:p@h:1/2", "h|1|(null)|u|p|2|1", "rediss://u:***@h:1/2");
    /* %-escapes: ',' and '%' in a password; the last '@' ends it */
    expect_node("redis://:p%2Cw%25d@h", "h|6379|(null)|(null)|p,w%d|0|0", "redis://:***@h:6379");
    expect_node("redis://:p@ss/w0rd@h:1", "h|1|(null)|(null)|p@ss/w0rd|0|0", "redis://:***@h:1");
    expect_node("redis://b%6Fb:x@h", "h|6379|(null)|bob|x|0|0", "redis://bob:***@h:6379");
    expect_node("unix:///var/run/r.sock", "(null)|0|/var/run/r.sock|(null)|(null)|0|0", "/var/run/r.sock");
    expect_node("unix:///var/run/r.sock?db=2", "(null)|0|/var/run/r.sock|(null)|(null)|2|0", "unix:///var/run/r.sock?db=2");
    expect_node("unix://u:p@/r.sock?db=9", "(null)|0|/r.sock|u|p|9|0", "unix://u:***@/r.sock?db=9");
    expect_node("unix://:a@b@/r.sock", "(null)|0|/r.sock|(null)|a@b|0|0", "unix://:***@/r.sock");
    expect_node("unix:///x://y", "(null)|0|/x://y|(null)|(null)|0|0", "unix:///x://y"); /* not a URL once written */
}

static void test_node_errors(void)
{
    char many[512], host[300];
    int i;
    expect_bad("", REDLOCK_ERR_INVALID, "no nodes (an empty list, or REDLOCK_NODES not set)");
    /* an empty node is named by its place */
    expect_bad("h:1,,h:2", REDLOCK_ERR_INVALID, "node 2 of the list is empty");
    expect_bad("h:1,", REDLOCK_ERR_INVALID, "node 2 of the list is empty");
    expect_bad(",h:1", REDLOCK_ERR_INVALID, "node 1 of the list is empty");
    expect_bad(",", REDLOCK_ERR_INVALID, "node 1 of the list is empty");
    expect_bad("h:0", REDLOCK_ERR_INVALID, "bad node 'h:0': port must be 1..65535");
    expect_bad("h:65536", REDLOCK_ERR_INVALID, "bad node 'h:65536': port must be 1..65535");
    expect_bad("h:99999999999999999999", REDLOCK_ERR_INVALID, "bad node 'h:99999999999999999999': port must be 1..65535");
    expect_bad("h:-1", REDLOCK_ERR_INVALID, "bad node 'h:-1': port must be 1..65535");
    expect_bad("h:", REDLOCK_ERR_INVALID, "bad node 'h:': port must be 1..65535");
    expect_bad("h:x1", REDLOCK_ERR_INVALID, "bad node 'h:x1': port must be 1..65535");
    expect_bad("h: 1", REDLOCK_ERR_INVALID, "bad node 'h: 1': port must be 1..65535");
    expect_bad("::1:6379", REDLOCK_ERR_INVALID, "bad node '::1:6379': IPv6 addresses need [brackets]");
    expect_bad("[::1", REDLOCK_ERR_INVALID, "bad node '[::1': missing ']'");
    expect_bad("[::1]x", REDLOCK_ERR_INVALID, "bad node '[::1]x': junk after ']'");
    expect_bad("[]:1", REDLOCK_ERR_INVALID, "bad node '[]:1': missing host");
    expect_bad(":6379", REDLOCK_ERR_INVALID, "bad node ':6379': missing host");
    expect_bad("a b:1", REDLOCK_ERR_INVALID, "bad node 'a b:1': bad host name");
    expect_bad("a\tb", REDLOCK_ERR_INVALID, "bad node 'a\tb': bad host name");
    expect_bad("a\033b", REDLOCK_ERR_INVALID, "bad node 'a\033b': bad host name");
    expect_bad("a\177b", REDLOCK_ERR_INVALID, "bad node 'a\177b': bad host name");
    expect_bad("u@h:1", REDLOCK_ERR_INVALID, "bad node 'u@h:1': bad host name");
    expect_bad("[[]", REDLOCK_ERR_INVALID, "bad node '[[]': bad host name"); /* it could not be written back */
    expect_bad("h]:1", REDLOCK_ERR_INVALID, "bad node 'h]:1': bad host name");
    /* a host of at most REDLOCK_NODES_MAX_HOST characters */
    memset(host, 'h', sizeof host);
    host[REDLOCK_NODES_MAX_HOST] = 0;
    {
        nodes c;
        void *mem;
        char err[256];
        CHECK_EQ(parse1(host, &c, &mem, err, sizeof err), 0);
        CHECK_EQ(strlen(c.node[0].host), REDLOCK_NODES_MAX_HOST);
        redlock_free_nodes(mem);
        host[REDLOCK_NODES_MAX_HOST] = 'h';
        host[REDLOCK_NODES_MAX_HOST + 1] = 0;
        CHECK_EQ(parse1(host, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
        CHECK(strstr(err, "': host name too long") != NULL);
        CHECK(strlen(err) < 200); /* the node quoted in part */
    }
    expect_bad("redis://h/zero", REDLOCK_ERR_INVALID, "bad node 'redis://h/zero': database must be a number");
    expect_bad("redis://h?timeout=1", REDLOCK_ERR_INVALID, "bad node 'redis://h?timeout=1': URL options are not supported");
    expect_bad("http://h", REDLOCK_ERR_INVALID, "bad node 'http://h': unknown URL scheme (use redis://, rediss://, unix://, redis-sentinel:// or redis-cluster://)");
    expect_bad("redis://alice@h", REDLOCK_ERR_INVALID, "bad node 'redis://***@h': give a password as user:pass@ or :pass@");
    expect_bad("redis://:@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': empty password");
    expect_bad("redis://:%zz@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': bad %-escape in the password");
    expect_bad("redis://:a%00b@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': bad %-escape in the password");
    expect_bad("redis://:p%4zw@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': bad %-escape in the password");
    expect_bad("redis://:p%z4w@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': bad %-escape in the password");
    expect_bad("redis://:pw%@h", REDLOCK_ERR_INVALID, "bad node 'redis://:***@h': bad %-escape in the password");
    expect_bad("redis://%g:p@h", REDLOCK_ERR_INVALID, "bad node 'redis://%g:***@h': bad %-escape in the user name");
    expect_bad("unix://r.sock", REDLOCK_ERR_INVALID, "bad node 'unix://r.sock': unix:// needs an absolute path");
    expect_bad("unix:///r.sock?x=1", REDLOCK_ERR_INVALID, "bad node 'unix:///r.sock?x=1': only ?db=N is supported");
    /* passwords never appear in a message */
    expect_bad("redis://bob:Sup3rSecret@127.0.0.1:99999/0", REDLOCK_ERR_INVALID,
               "bad node 'redis://bob:***@127.0.0.1:99999/0': port must be 1..65535");
    expect_bad("h:1,redis://:Sup3r@h:1", REDLOCK_ERR_INVALID, "node 'redis://:***@h:1' is listed twice");
    /* a ',' in a password cuts the URL in two: said as such, no part of
       the password shown (the first piece alone would pass for host:port) */
    expect_bad("redis://bob:12,34@h:1", REDLOCK_ERR_INVALID,
               "bad node 'redis://***@h:1': a ',' in a user name or password must be written %2C"
               " (the node list is split at ',')");
    expect_bad("h:2,rediss://al:x,y,z@127.0.0.1:6379/2", REDLOCK_ERR_INVALID,
               "bad node 'rediss://***@127.0.0.1:6379/2': a ',' in a user name or password must be written %2C"
               " (the node list is split at ',')");
    expect_bad("unix://u:p,q@/r.sock", REDLOCK_ERR_INVALID,
               "bad node 'unix://***@/r.sock': a ',' in a user name or password must be written %2C"
               " (the node list is split at ',')");
    expect_bad("Host.Example:7000,host.example:7000", REDLOCK_ERR_INVALID, "node 'host.example:7000' is listed twice");
    expect_bad("AZ:7000,az:7000", REDLOCK_ERR_INVALID, "node 'az:7000' is listed twice"); /* both ends of A..Z */
    expect_bad("/a.sock,unix:///a.sock", REDLOCK_ERR_INVALID, "node 'unix:///a.sock' is listed twice");
    expect_bad("h,redis://h:6379/0", REDLOCK_ERR_INVALID, "node 'redis://h:6379/0' is listed twice");
    {   /* a socket path fits sun_path, its terminator included */
        char path[REDLOCK__NODES_PATH_MAX + 1];
        nodes c;
        void *mem;
        char err[256];
        memset(path, 'p', sizeof path);
        path[0] = '/';
        path[REDLOCK__NODES_PATH_MAX - 1] = 0;
        CHECK_EQ(parse1(path, &c, &mem, err, sizeof err), 0);
        redlock_free_nodes(mem);
        path[REDLOCK__NODES_PATH_MAX - 1] = 'p';
        path[REDLOCK__NODES_PATH_MAX] = 0;
        CHECK_EQ(parse1(path, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
        CHECK(strstr(err, "unix socket path too long") != NULL);
    }
    many[0] = 0;
    for (i = 0; i < REDLOCK_MAX_NODES + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sh:%d", i ? "," : "", 7000 + i);
    expect_bad(many, REDLOCK_ERR_NODES, "too many nodes (at most 16)");
}

/* list -> "kind|host:port+host:port...|master|user|pass|db|tls|sentinel user|sentinel pass" of
   node 0 and the formatted text */
static void expect_group(const char *list, const char *fields, const char *shown)
{
    nodes c;
    void *mem;
    char err[256], got[600], hosts[300] = "", fmt[256];
    int rc = parse1(list, &c, &mem, err, sizeof err), k;
    CHECK_EQ(rc, 0);
    if (rc != 0) {
        printf("#   %s: %s\n", list, err);
        return;
    }
    for (k = 0; k <= c.node[0].seed_count; k++) {
        const redlock_node_seed *sd = k ? &c.node[0].seed[k - 1] : NULL;
        snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "%s%s:%d", k ? "+" : "",
                 s_or(sd ? sd->host : c.node[0].host), sd ? sd->port : c.node[0].port);
    }
    snprintf(got, sizeof got, "%d|%s|%s|%s|%s|%d|%d|%s|%s", (int)c.node[0].kind, hosts, s_or(c.node[0].master),
             s_or(c.node[0].username), s_or(c.node[0].password), c.node[0].db, c.node[0].tls.enable,
             s_or(c.node[0].sentinel_username), s_or(c.node[0].sentinel_password));
    CHECK_STR(got, fields);
    CHECK_EQ(redlock_format_node(&c.node[0], fmt, sizeof fmt), (long long)strlen(shown));
    CHECK_STR(fmt, shown);
    redlock_free_nodes(mem);
}

/* Sentinel groups and clusters: their hosts joined by '+', the group's
   name, the sentinels' own login, TLS; each refusal in its words, the
   sentinels' password never among them; the same group or a shared
   cluster seed listed twice is refused; the scrubbing hides the
   sentinels' password too. */
static void test_node_kinds(void)
{
    char argv1[128];
    expect_group("redis-sentinel://s1:26379+s2:26380+[::1]:26381/mymaster",
                 "1|s1:26379+s2:26380+::1:26381|mymaster|(null)|(null)|0|0|(null)|(null)",
                 "redis-sentinel://s1:26379+s2:26380+[::1]:26381/mymaster");
    expect_group("rediss-sentinel://u:pw@s1:26379/m%2F1?db=2&sentinel_user=su&sentinel_password=p%40ss",
                 "1|s1:26379|m/1|u|pw|2|1|su|p@ss", "rediss-sentinel://u:***@s1:26379/m/1?db=2");
    expect_group("redis-sentinel://s1/g?sentinel_password=x", "1|s1:6379|g|(null)|(null)|0|0|(null)|x",
                 "redis-sentinel://s1:6379/g");
    expect_group("redis-cluster://c1:7000+c2:7001", "2|c1:7000+c2:7001|(null)|(null)|(null)|0|0|(null)|(null)",
                 "redis-cluster://c1:7000+c2:7001");
    expect_group("rediss-cluster://:p@w@c1:7000", "2|c1:7000|(null)|(null)|p@w|0|1|(null)|(null)",
                 "rediss-cluster://:***@c1:7000");
    expect_group("redis-cluster://a:1+b:2+c:3+d:4+e:5+f:6+g:7+h:8",
                 "2|a:1+b:2+c:3+d:4+e:5+f:6+g:7+h:8|(null)|(null)|(null)|0|0|(null)|(null)",
                 "redis-cluster://a:1+b:2+c:3+d:4+e:5+f:6+g:7+h:8");
    expect_bad("redis-cluster://a:1+b:2+c:3+d:4+e:5+f:6+g:7+h:8+i:9", REDLOCK_ERR_INVALID,
               "bad node 'redis-cluster://a:1+b:2+c:3+d:4+e:5+f:6+g:7+h:8+i:9': too many hosts (at most REDLOCK_NODES_MAX_SEEDS)");
    expect_bad("redis-sentinel://s1:26379", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1:26379': name the group after the hosts: /MASTER");
    expect_bad("redis-sentinel://s1:26379/", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1:26379/': name the group after the hosts: /MASTER");
    expect_bad("redis-sentinel://s1:26379/?db=1", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1:26379/?db=1': name the group after the hosts: /MASTER");
    expect_bad("redis-sentinel://s1+/m", REDLOCK_ERR_INVALID, "bad node 'redis-sentinel://s1+/m': missing host");
    expect_bad("redis-sentinel://s1/m?db=x", REDLOCK_ERR_INVALID, "bad node 'redis-sentinel://s1/m?db=x': database must be a number");
    expect_bad("redis-sentinel://s1/m?dbx=1", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1/m?dbx=1': unknown option (db, sentinel_user, sentinel_password)");
    expect_bad("redis-sentinel://s1/m?db", REDLOCK_ERR_INVALID, "bad node 'redis-sentinel://s1/m?db': an option is name=value");
    expect_bad("redis-sentinel://s1/m?sentinel_user=a", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1/m?sentinel_user=a': sentinel_user needs a sentinel_password");
    expect_bad("redis-sentinel://s1/m?sentinel_password=top%zz", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://s1/m?sentinel_password=***': bad %-escape in sentinel_password");
    expect_bad("redis-sentinel://:pw@s1/m?sentinel_password=topsecret&db=x", REDLOCK_ERR_INVALID,
               "bad node 'redis-sentinel://:***@s1/m?sentinel_password=***&db=x': database must be a number");
    expect_bad("redis-cluster://c1:7000/1", REDLOCK_ERR_INVALID,
               "bad node 'redis-cluster://c1:7000/1': a cluster URL has no database or options (a cluster has db 0 only)");
    expect_bad("redis-clusters://c1", REDLOCK_ERR_INVALID,
               "bad node 'redis-clusters://c1': unknown URL scheme (use redis://, rediss://, unix://, redis-sentinel:// or redis-cluster://)");
    expect_bad("redis-sentinel://s1:1+s2:2/m,redis-sentinel://s2:2/m", REDLOCK_ERR_INVALID,
               "node 'redis-sentinel://s2:2/m' is listed twice");
    expect_bad("redis-cluster://c1:1+c2:2,redis-cluster://C2:2", REDLOCK_ERR_INVALID,
               "node 'redis-cluster://C2:2' is listed twice");
    expect_bad("c2:2,redis-cluster://c1:1+c2:2", REDLOCK_ERR_INVALID, "node 'redis-cluster://c1:1+c2:2' is listed twice");
    {   /* two groups behind the same sentinels, a server and a sentinel at one address: distinct */
        nodes c;
        void *mem;
        char err[256];
        CHECK_EQ(parse1("redis-sentinel://s:1/a,redis-sentinel://s:1/b,s:1", &c, &mem, err, sizeof err), 0);
        CHECK_EQ(c.node_count, 3);
        redlock_free_nodes(mem);
    }
    snprintf(argv1, sizeof argv1, "redis-sentinel://u:pw@s:1/m?sentinel_password=abc&db=1,h:1");
    redlock_scrub_nodes(argv1);
    CHECK_STR(argv1, "redis-sentinel://u:xx@s:1/m?sentinel_password=xxx&db=1,h:1");
}

static void test_node_lists(void)
{
    nodes c;
    void *mem = NULL;
    char err[256], list[] = "redis://bob:secret@h:1,redis://:p@ss@h2,h3,unix://:pw@/s.sock?db=1";
    int i;
    /* several nodes; same host with another db is another node; "h:1/2"
       has a '/': a unix socket path */
    CHECK_EQ(parse1("h:1,redis://h:1/2,h:1/2", &c, &mem, err, sizeof err), 0);
    CHECK_EQ(c.node_count, 3);
    CHECK_STR(c.node[2].unix_path, "h:1/2");
    CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "redis://H:1/2", &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_STR(err, "node 'redis://H:1/2' is listed twice");
    redlock_free_nodes(mem);
    CHECK_EQ(parse1("a:1,[::1]:2,/s.sock", &c, &mem, err, sizeof err), 0);
    CHECK_EQ(c.node_count, 3);
    CHECK_STR(c.node[1].host, "::1");
    CHECK_STR(c.node[2].unix_path, "/s.sock");
    /* appending with the same mem: node_count grows, a duplicate is refused */
    CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "b:1", &mem, err, sizeof err), 0);
    CHECK_EQ(c.node_count, 4);
    CHECK_STR(c.node[3].host, "b");
    CHECK_STR(c.node[0].host, "a"); /* the first block still lives */
    CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "c:1,a:1", &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_STR(err, "node 'a:1' is listed twice");
    CHECK_EQ(c.node_count, 4);
    /* a duplicate within what is appended, with nodes already there */
    CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "d:1,e:1,d:1", &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_STR(err, "node 'd:1' is listed twice");
    CHECK_EQ(c.node_count, 4);
    redlock_free_nodes(mem);
    /* REDLOCK_NODES when the list is NULL */
    setenv("REDLOCK_NODES", "e1:7001,e2:7002", 1);
    CHECK_EQ(parse1(NULL, &c, &mem, err, sizeof err), 0);
    CHECK_EQ(c.node_count, 2);
    CHECK_STR(c.node[1].host, "e2");
    CHECK_EQ(c.node[1].port, 7002);
    redlock_free_nodes(mem);
    setenv("REDLOCK_NODES", "", 1);
    CHECK_EQ(parse1(NULL, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    unsetenv("REDLOCK_NODES");
    CHECK_EQ(parse1(NULL, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_STR(err, "no nodes (an empty list, or REDLOCK_NODES not set)");
    CHECK_EQ(parse1(NULL, &c, &mem, NULL, 0), REDLOCK_ERR_INVALID); /* err may be NULL */
    CHECK_EQ(parse1("h:0", &c, &mem, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_parse_nodes(NULL, &c.node_count, "h", &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_parse_nodes(c.node, NULL, "h", &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "h", NULL, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK_STR(err, "invalid argument");
    redlock_free_nodes(NULL);
    /* exactly REDLOCK_MAX_NODES is fine */
    {
        char many[512] = "";
        for (i = 0; i < REDLOCK_MAX_NODES; i++)
            snprintf(many + strlen(many), sizeof many - strlen(many), "%sh:%d", i ? "," : "", 7000 + i);
        CHECK_EQ(parse1(many, &c, &mem, err, sizeof err), 0);
        CHECK_EQ(c.node_count, REDLOCK_MAX_NODES);
        CHECK_EQ(redlock_parse_nodes(c.node, &c.node_count, "x:1", &mem, err, sizeof err), REDLOCK_ERR_NODES);
        CHECK_STR(err, "too many nodes (at most 16)");
        redlock_free_nodes(mem);
    }
    /* scrub: passwords overwritten in place, where the parser finds them */
    redlock_scrub_nodes(list);
    CHECK_STR(list, "redis://bob:xxxxxx@h:1,redis://:xxxx@h2,h3,unix://:xx@/s.sock?db=1");
    {
        char l2[] = "redis://onlyuser@h";
        redlock_scrub_nodes(l2);
        CHECK_STR(l2, "redis://xxxxxxxx@h");
    }
    {   /* no colon in the userinfo: the port's colon after '@' is not its end */
        char l3[] = "redis://onlyuser@h:6379,redis://u:pw@h2:1";
        redlock_scrub_nodes(l3);
        CHECK_STR(l3, "redis://xxxxxxxx@h:6379,redis://u:xx@h2:1");
    }
    redlock_scrub_nodes(NULL);
    /* format: cut to fit, the needed length returned */
    {
        redlock_node nd;
        char small[8];
        memset(&nd, 0, sizeof nd);
        nd.host = "example.org";
        nd.port = 6380;
        CHECK_EQ(redlock_format_node(&nd, small, sizeof small), 16);
        CHECK_STR(small, "example");
        nd.host = NULL;
        nd.port = 0;
        CHECK_EQ(redlock_format_node(&nd, small, 0), 14); /* "127.0.0.1:6379", nothing written */
        CHECK_EQ(redlock_format_node(NULL, small, sizeof small), 0);
        CHECK_STR(small, "");
    }
}

/* An error message cut to a small buffer is cut, terminated, and its
   length never runs past the buffer. */
static void test_small_error_buffers(void)
{
    nodes c;
    void *mem;
    char err[12];
    size_t cap;
    for (cap = 1; cap <= sizeof err; cap++) {
        memset(err, '#', sizeof err);
        CHECK_EQ(parse1("redis://u:secret@h:0", &c, &mem, err, cap), REDLOCK_ERR_INVALID);
        CHECK_EQ(strlen(err), cap - 1);
        CHECK(cap == sizeof err || err[cap] == '#');
        CHECK(strncmp(err, "bad node 'redis://u:***@h:0': port must be 1..65535", cap - 1) == 0);
    }
}

/* Text no user writes: megabytes of one character, separators only,
   brackets and escapes nested deep. A clean refusal, at once. */
static void test_hostile_text(void)
{
    static const char fill[] = "a:[]@%/,";
    size_t n = 1 << 20, k;
    char *big = (char *)malloc(n + 1);
    nodes c;
    void *mem;
    char err[256];
    if (!big) return;
    for (k = 0; k < sizeof fill - 1; k++) {
        memset(big, fill[k], n);
        big[n] = 0;
        CHECK_EQ(parse1(big, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
        CHECK(err[0] != 0 && strlen(err) < sizeof err);
        CHECK(mem == NULL);
        CHECK_EQ(c.node_count, 1);
    }
    memset(big, 'a', n);
    memcpy(big, "redis://", 8);
    for (k = 8; k + 2 < n; k += 2) memcpy(big + k, "%,", 2); /* a URL cut a million times */
    big[n] = 0;
    CHECK_EQ(parse1(big, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK(strlen(err) < sizeof err);
    memset(big, '[', n);
    big[n - 1] = ']';
    CHECK_EQ(parse1(big, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    /* 16 hosts of 64 KiB each */
    for (k = 0; k < n; k++) big[k] = (k + 1) % 65536 == 0 ? ',' : "abcdefghijklmnopqrstuvwxyz"[k % 26];
    big[n - 1] = 0;
    CHECK_EQ(parse1(big, &c, &mem, err, sizeof err), REDLOCK_ERR_INVALID);
    CHECK(strstr(err, "host name too long") != NULL);
    free(big);
}

/* The fields of a node that its text says (the password shown as ***). */
static void fields(const redlock_node *nd, char *out, size_t cap)
{
    snprintf(out, cap, "%s|%d|%s|%d|%d", s_or(nd->host), nd->port, s_or(nd->unix_path), nd->db, nd->tls.enable);
}

/* Random lists from the characters that matter, with pieces of the forms:
   each parse either refuses (the nodes and mem untouched, one line in
   err) or gives 1..REDLOCK_MAX_NODES nodes, each a host of at most
   REDLOCK_NODES_MAX_HOST characters with a port in 1..65535 or a socket
   path, that parse the same again from their text when they have no
   password (a password is shown as ***). */
static void test_random_lists(long rounds)
{
    static const char *const piece[] = { "redis://", "rediss://", "unix://", "://", "[", "]", ":", "::1", "@", "/",
                                         ",", "%2C", "%", "?db=", "h", "H", "127.0.0.1", "6379", "0", "99999", "u:p",
                                         "a", "\t", " ", "\001", "?", "#", ".sock", "" };
    unsigned long seed = 12345;
    long r, ok = 0, refused = 0;
    for (r = 0; r < rounds; r++) {
        char list[160], err[96], again[256];
        nodes c;
        void *mem;
        int rc, i, k, parts;
        size_t len = 0;
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        parts = 1 + (int)((seed >> 33) % 12);
        list[0] = 0;
        for (k = 0; k < parts; k++) {
            const char *p;
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            p = piece[(seed >> 33) % (sizeof piece / sizeof piece[0])];
            if (len + strlen(p) + 1 >= sizeof list) break;
            memcpy(list + len, p, strlen(p) + 1);
            len += strlen(p);
        }
        memset(err, '#', sizeof err);
        rc = parse1(list, &c, &mem, err, sizeof err);
        if (rc != 0) {
            refused++;
            if (rc != REDLOCK_ERR_INVALID && rc != REDLOCK_ERR_NODES) CHECK_EQ(rc, REDLOCK_ERR_INVALID);
            if (!err[0] || strlen(err) >= sizeof err || mem != NULL || c.node_count != 1) {
                printf("#   '%s': status %d, err '%.95s'\n", list, rc, err);
                CHECK(0);
            }
            continue;
        }
        ok++;
        CHECK(c.node_count >= 1 && c.node_count <= REDLOCK_MAX_NODES);
        for (i = 0; i < c.node_count; i++) {
            const redlock_node *nd = &c.node[i];
            char text[400], a[400], b[400];
            nodes d;
            void *m2;
            if (!nd->unix_path != !!nd->host || (nd->host && (strlen(nd->host) > REDLOCK_NODES_MAX_HOST || nd->port < 1 ||
                                                              nd->port > 65535))) {
                printf("#   '%s': node %d is neither a host:port nor a path\n", list, i);
                CHECK(0);
                continue;
            }
            if (nd->password || nd->username) continue;
            redlock_format_node(nd, text, sizeof text);
            if (parse1(text, &d, &m2, again, sizeof again) != 0) {
                printf("#   '%s': node %d written '%s' does not parse: %s\n", list, i, text, again);
                CHECK(0);
                continue;
            }
            fields(nd, a, sizeof a);
            fields(&d.node[0], b, sizeof b);
            if (strcmp(a, b) != 0) {
                printf("#   '%s': node %d '%s' parses again as '%s'\n", list, i, a, b);
                CHECK(0);
            }
            redlock_free_nodes(m2);
        }
        redlock_free_nodes(mem);
    }
    printf("# %ld random lists: %ld parsed, %ld refused\n", rounds, ok, refused);
    CHECK(ok > rounds / 100 && refused > rounds / 100); /* both ways exercised */
}

static long rounds = 20000;
static void test_random(void) { test_random_lists(rounds); }

int main(int argc, char **argv)
{
    if (argc > 1) rounds = atol(argv[1]);
    RUN(test_node_specs);
    RUN(test_node_errors);
    RUN(test_node_kinds);
    RUN(test_node_lists);
    RUN(test_small_error_buffers);
    RUN(test_hostile_text);
    RUN(test_random);
    return CHECK_EXIT();
}
