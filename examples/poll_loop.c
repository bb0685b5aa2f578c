/* poll_loop.c - drive the redlock core from a hand-written poll() loop,
   using only the RESP2 encoder and parser (adapters/redlock_resp.h) and
   the node-list parser (adapters/redlock_nodes.h), both sans-I/O.
   This is what an adapter does, in about 200 lines: one blocking-connected,
   then non-blocking socket per node; the core's send callback encodes the
   command into that node's output buffer and remembers the tag; replies
   come back in order, so each one answers the oldest tag. No timeouts or
   reconnects here (the core's own node timeout still bounds every round),
   and no AUTH, SELECT or TLS: a node list that asks for them is refused.

   Build:  make examples-socket   (or: cc -std=c99 -I. examples/poll_loop.c)
   Run:    build/example_poll_loop 127.0.0.1:6379,127.0.0.1:6380,/tmp/r.sock
   Nodes as in every example: the argument, else $REDLOCK_NODES, else
   127.0.0.1:6379 (redlock_parse_nodes()); --help prints the usage.
*/
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_RESP_IMPLEMENTATION
#include "adapters/redlock_resp.h"
#include "adapters/redlock_nodes.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef struct node {
    int fd;
    char out[8192];            /* encoded commands not yet written */
    size_t out_len;
    redlock_tag tags[64];      /* commands in flight, oldest first */
    int ntags;
    redlock_resp_parser parser;
} node;

static node nodes[REDLOCK_MAX_NODES];
static int nnodes;
static redlock_client client;
static int done;
static int exit_code = 1; /* 0 once the lock was acquired and released */

/* The core wants a command sent: encode it, remember its tag. */
static int my_send(void *user, int i, const redlock_command *cmd, redlock_tag tag)
{
    node *n = &nodes[i];
    size_t need = redlock_resp_encode_command(n->out + n->out_len, sizeof n->out - n->out_len, cmd);
    (void)user;
    if (n->fd < 0 || need == 0 || need > sizeof n->out - n->out_len || n->ntags == 64)
        return REDLOCK_ERR_TRANSPORT; /* counts as this node's failed vote */
    n->out_len += need;
    n->tags[n->ntags++] = tag;
    return 0;
}

/* The node is gone: every command in flight fails, the socket is closed. */
static void node_down(node *n)
{
    int k, cnt = n->ntags;
    redlock_tag tags[64];
    memcpy(tags, n->tags, sizeof tags);
    close(n->fd);
    n->fd = -1;
    n->ntags = 0;
    n->out_len = 0;
    for (k = 0; k < cnt; k++) redlock_on_error(&client, tags[k], REDLOCK_ERR_TRANSPORT);
}

static void on_readable(node *n)
{
    char buf[4096];
    const redlock_reply *r;
    ssize_t got = recv(n->fd, buf, sizeof buf, 0);
    if (got <= 0) {
        if (got < 0 && errno == EAGAIN) return;
        node_down(n);
        return;
    }
    if (redlock_resp_feed(&n->parser, buf, (size_t)got) != 0) {
        node_down(n);
        return;
    }
    while (n->fd >= 0 && redlock_resp_next(&n->parser, &r) == 1) {
        redlock_tag tag;
        if (n->ntags == 0) { node_down(n); return; } /* a reply nobody asked for */
        tag = n->tags[0];
        memmove(n->tags, n->tags + 1, (size_t)--n->ntags * sizeof tag);
        redlock_on_reply(&client, tag, r); /* may call my_send again: fine */
    }
    if (n->fd >= 0 && redlock_resp_error(&n->parser)) node_down(n);
}

static void on_writable(node *n)
{
    ssize_t w = send(n->fd, n->out, n->out_len, MSG_NOSIGNAL);
    if (w < 0) {
        if (errno != EAGAIN) node_down(n);
        return;
    }
    memmove(n->out, n->out + w, n->out_len - (size_t)w);
    n->out_len -= (size_t)w;
}

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    printf("%s: %s (votes %d)\n", r->op == REDLOCK_OP_ACQUIRE ? "acquire" : r->op == REDLOCK_OP_RELEASE ? "release" : "other",
           redlock_strerror(r->status), r->votes);
    if (r->op == REDLOCK_OP_ACQUIRE && r->status == REDLOCK_OK) {
        redlock_release(lk); /* work done */
        return;
    }
    if (r->op == REDLOCK_OP_RELEASE && r->status == REDLOCK_OK) exit_code = 0;
    done = 1;
}

/* A plain blocking connect to a parsed node (TCP or Unix socket); -1 if
   it is down. */
static int dial(const redlock_node *nd)
{
    int fd = -1;
    if (nd->unix_path) {
        struct sockaddr_un su;
        memset(&su, 0, sizeof su);
        su.sun_family = AF_UNIX;
        memcpy(su.sun_path, nd->unix_path, strlen(nd->unix_path) + 1); /* length checked by the parser */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&su, sizeof su) != 0) { close(fd); fd = -1; }
    } else {
        struct addrinfo hints, *res = NULL, *ai;
        char port[16];
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        snprintf(port, sizeof port, "%d", nd->port);
        if (getaddrinfo(nd->host, port, &hints, &res) != 0) return -1;
        for (ai = res; ai && fd < 0; ai = ai->ai_next) {
            fd = socket(ai->ai_family, SOCK_STREAM, 0);
            if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) { close(fd); fd = -1; }
        }
        freeaddrinfo(res);
    }
    return fd;
}

/* The core's own clock (now_us = NULL): deadlines are on it. */
static int64_t now_us(void) { return redlock_clock_us(); }

static int usage(FILE *to, const char *me, int status)
{
    fprintf(to, "usage: %s [NODES]\n"
                "Takes and releases the lock example:poll_loop from a poll() loop of its own.\n"
                "NODES: comma-separated " REDLOCK_NODES_SYNTAX "\n"
                "       (no password, db or TLS here; default: $REDLOCK_NODES, else " REDLOCK_NODES_DEFAULT ")\n",
            me);
    return status;
}

int main(int argc, char **argv)
{
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock lock;
    redlock_lock_opts o;
    int i, count = 0;
    redlock_node list[REDLOCK_MAX_NODES];
    const char *text = argc > 1 ? argv[1] : getenv("REDLOCK_NODES");
    void *mem = NULL;
    char err[256];
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, argv[0], 0);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) return usage(stderr, argv[0], 64);
    if (redlock_parse_nodes(list, &count, text ? text : REDLOCK_NODES_DEFAULT, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 64;
    }
    for (i = 0; i < count; i++)
        if (list[i].password || list[i].db || list[i].tls.enable) {
            fprintf(stderr, "%s: node %d: this example speaks neither AUTH, SELECT nor TLS\n", argv[0], i + 1);
            redlock_free_nodes(mem);
            return 64;
        }
    for (i = 0; i < count; i++) { /* connect: plain blocking connect, then non-blocking */
        node *n = &nodes[nnodes++];
        n->fd = dial(&list[i]);
        if (n->fd >= 0) fcntl(n->fd, F_SETFL, fcntl(n->fd, F_GETFL, 0) | O_NONBLOCK);
        redlock_resp_parser_init(&n->parser);
    }
    redlock_free_nodes(mem);

    redlock_config_init(&cfg);
    cfg.node_count = nnodes;
    memset(&cb, 0, sizeof cb);
    cb.send = my_send; /* no set_timer: we poll redlock_next_deadline() */
    redlock_client_init(&client, &cfg, &cb, NULL);
    memset(&o, 0, sizeof o);
    o.key = "example:poll_loop";
    o.ttl_ms = 5000;
    o.on_result = on_result;
    redlock_lock_init(&lock, &client, &o);
    redlock_acquire(&lock);

    while (!done) { /* the loop: sockets plus the core's one timer */
        struct pollfd pf[REDLOCK_MAX_NODES];
        int64_t deadline = redlock_next_deadline(&client), now = now_us();
        int ms = deadline == REDLOCK_NO_DEADLINE ? 1000 : deadline <= now ? 0 : (int)((deadline - now) / 1000 + 1);
        for (i = 0; i < nnodes; i++) {
            pf[i].fd = nodes[i].fd; /* -1: ignored by poll */
            pf[i].events = (short)(POLLIN | (nodes[i].out_len ? POLLOUT : 0));
            pf[i].revents = 0;
        }
        poll(pf, (nfds_t)nnodes, ms);
        for (i = 0; i < nnodes; i++) {
            if (nodes[i].fd >= 0 && (pf[i].revents & POLLOUT)) on_writable(&nodes[i]);
            if (nodes[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) on_readable(&nodes[i]);
        }
        if (now_us() >= redlock_next_deadline(&client)) redlock_on_timer(&client);
    }
    redlock_lock_deinit(&lock);
    redlock_client_deinit(&client);
    for (i = 0; i < nnodes; i++) {
        if (nodes[i].fd >= 0) close(nodes[i].fd);
        redlock_resp_parser_free(&nodes[i].parser);
    }
    return exit_code;
}
