/* adapters/redlock_tls.h - what the adapters share for TLS. Internal:
   include an adapter (redlock_socket.h, redlock_hiredis.h, redlock_libev.h)
   instead.

   The first part is the settings, a plain struct every adapter's
   configuration holds whether or not TLS is built in. The second part,
   for adapters built with TLS (they define REDLOCK__TLS_OPENSSL first),
   makes OpenSSL objects from those settings, tells a refusal from the
   network's failure and puts a failure into words. OpenSSL 1.1.1 or 3.x.

   What the adapters report: REDLOCK_ERR_TLS only for a refusal, which no
   retry cures and which ends an acquire at once when too few other nodes
   are left (redlock.h section 4): the certificate refused here, an alert
   the server sent (it refused us: no client certificate, no protocol in
   common), or an answer to the handshake that is not TLS. A connection
   closed or reset during the handshake is TRANSPORT, a handshake without
   an answer within the connect timeout CONNECT: the network's, or a
   paused server's, and retried. (A plain-text Redis answers a handshake
   with nothing, and a TLS port resets plain text: to an adapter both look
   like a network failing; redlock_socket_probe() asks the port to tell,
   with the hello made here.) */
#ifndef REDLOCK_TLS_H
#define REDLOCK_TLS_H

/* TLS for a node. In a configuration, `tls` applies to every node; a
   node's own `tls` (enable set, e.g. from a rediss:// URL) overrides it,
   its NULL fields taken from the configuration's. */
typedef struct redlock_tls {
    int enable;               /* 1: TLS */
    const char *ca;           /* CA file or hashed directory (PEM); NULL: the system's store */
    const char *cert, *key;   /* client certificate and its key, PEM files; both or neither */
    const char *server_name;  /* SNI and the name the certificate must hold; NULL: the host */
    int insecure_skip_verify; /* 1: accept any certificate for any name: testing only */
} redlock_tls;

/* A node's TLS settings: its own over the defaults d (see above), in *t;
   NULL when the node speaks plain text. */
static inline const redlock_tls *redlock__tls_settings(const redlock_tls *node, const redlock_tls *d, redlock_tls *t)
{
    if (!node->enable && !d->enable) return NULL;
    *t = node->enable ? *node : *d;
    if (!t->ca) t->ca = d->ca;
    if (!t->cert && !t->key) {
        t->cert = d->cert;
        t->key = d->key;
    }
    if (!t->server_name) t->server_name = d->server_name;
    t->insecure_skip_verify |= d->insecure_skip_verify;
    return t;
}

#endif /* REDLOCK_TLS_H */

#if defined(REDLOCK__TLS_OPENSSL) && !defined(REDLOCK__TLS_OPENSSL_DONE)
#define REDLOCK__TLS_OPENSSL_DONE
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/stat.h>
#include "redlock_conn.h"

/* The client context of settings t: what to trust (verification on unless
   t says otherwise), what to present. 0, REDLOCK_ERR_NOMEM, or
   REDLOCK_ERR_TLS when a CA, certificate or key cannot be loaded; *out
   is set (to be freed with SSL_CTX_free) whenever it was made. */
static inline int redlock__tls_context(const redlock_tls *t, SSL_CTX **out)
{
    SSL_CTX *ctx;
    struct stat st;
    ERR_clear_error();
    *out = ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) return REDLOCK_ERR_NOMEM;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* a write that could not finish is retried from a buffer that may
       have moved and grown meanwhile */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF); /* a close is a close, as over plain TCP */
#endif
    if (!t->insecure_skip_verify) {
        int ok;
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (!t->ca) ok = SSL_CTX_set_default_verify_paths(ctx);
        else if (stat(t->ca, &st) == 0 && S_ISDIR(st.st_mode)) ok = SSL_CTX_load_verify_locations(ctx, NULL, t->ca);
        else ok = SSL_CTX_load_verify_locations(ctx, t->ca, NULL);
        if (ok != 1) return REDLOCK_ERR_TLS;
    }
    if (t->cert && (SSL_CTX_use_certificate_chain_file(ctx, t->cert) != 1 ||
                    SSL_CTX_use_PrivateKey_file(ctx, t->key, SSL_FILETYPE_PEM) != 1 ||
                    SSL_CTX_check_private_key(ctx) != 1))
        return REDLOCK_ERR_TLS;
    ERR_clear_error();
    return 0;
}

/* A session for one connection to `name`: checked against the
   certificate when verify is set (as an address when it is one) and sent
   as SNI (unless an address: SNI carries names only). NULL: out of memory. */
static inline SSL *redlock__tls_session(SSL_CTX *ctx, const char *name, int verify)
{
    unsigned char bin[16];
    int is_addr = inet_pton(AF_INET, name, bin) == 1 || inet_pton(AF_INET6, name, bin) == 1;
    SSL *ssl;
    ERR_clear_error();
    ssl = SSL_new(ctx);
    if (ssl && ((!is_addr && SSL_set_tlsext_host_name(ssl, name) != 1) ||
                (verify && (is_addr ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
                                    : SSL_set1_host(ssl, name)) != 1))) {
        SSL_free(ssl);
        ssl = NULL;
    }
    return ssl;
}

/* Is a TLS failure a refusal (see the top of this file) rather than the
   network's? e: SSL_get_error()'s answer, or 0 when the call was someone
   else's (hiredis's: then OpenSSL's error queue, cleared before the call,
   tells); handshake: the handshake had not finished. An alert counts at
   any time (TLS 1.3 servers judge a client certificate after the
   client's handshake is done), other protocol errors only during the
   handshake: once TLS worked, a broken record is the network's. */
static inline int redlock__tls_refused(const SSL *ssl, int verify, int e, int handshake)
{
    unsigned long q;
    if (ssl && verify && SSL_get_verify_result(ssl) != X509_V_OK) return 1;
    if (e != 0 && e != SSL_ERROR_SSL) return 0; /* closed, reset */
    q = ERR_peek_last_error();
    if (!q || ERR_GET_LIB(q) != ERR_LIB_SSL) return 0;
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
    if (ERR_GET_REASON(q) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return 0; /* closed mid-record */
#endif
    return handshake || ERR_GET_REASON(q) >= SSL_AD_REASON_OFFSET;
}

/* The words of a TLS failure during `during` ("handshake", "read" ...),
   e: SSL_get_error()'s answer (0 if none): a refused certificate and why,
   else OpenSSL's reason, else what the socket did. */
static inline void redlock__tls_words(const SSL *ssl, int verify, int e, const char *during, char *out, size_t cap)
{
    long v = ssl && verify ? SSL_get_verify_result(ssl) : X509_V_OK;
    unsigned long q = ERR_peek_last_error();
    const char *w = NULL;
    if (v != X509_V_OK) {
        snprintf(out, cap, "TLS %s: certificate refused: %s", during, X509_verify_cert_error_string(v));
        return;
    }
    if (q) w = ERR_reason_error_string(q);
    if (!w) w = e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN ? "the server closed the connection" : "failed";
    snprintf(out, cap, "TLS %s: %s", during, w);
}

/* A TLS client's hello, the first flight of a handshake, into out[0..cap),
   for asking a port whether it speaks TLS (redlock_socket_probe()): no
   name, no certificate, no session; only the answer's first byte will
   count. Made through memory BIOs, so the caller sends it as it sends
   anything (no SIGPIPE). Its length, or 0 (no memory, or cap too small). */
static inline size_t redlock__tls_hello(unsigned char *out, size_t cap)
{
    SSL_CTX *ctx;
    SSL *ssl = NULL;
    BIO *rb = NULL, *wb = NULL;
    size_t n = 0;
    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx) ssl = SSL_new(ctx);
    if (ssl && (rb = BIO_new(BIO_s_mem())) != NULL && (wb = BIO_new(BIO_s_mem())) != NULL) {
        int len, got;
        SSL_set_bio(ssl, rb, wb); /* the session owns both now */
        rb = wb = NULL;
        SSL_set_connect_state(ssl);
        (void)SSL_do_handshake(ssl); /* writes the hello, then wants the answer */
        len = (int)BIO_pending(SSL_get_wbio(ssl));
        if (len > 0 && (size_t)len <= cap && (got = BIO_read(SSL_get_wbio(ssl), out, len)) > 0) n = (size_t)got;
    }
    if (rb) BIO_free(rb);
    if (wb) BIO_free(wb);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return n;
}

/* The idle probe's look through a TLS session (redlock_conn.h): a byte of
   application data is unasked; records for TLS itself (session tickets)
   are none. */
static inline int redlock__tls_idle(void *ssl)
{
    char c;
    int r;
    ERR_clear_error();
    r = SSL_peek((SSL *)ssl, &c, 1);
    if (r > 0) return REDLOCK__CONN_IDLE_UNASKED;
    return SSL_get_error((SSL *)ssl, r) == SSL_ERROR_WANT_READ ? REDLOCK__CONN_IDLE_OK : REDLOCK__CONN_IDLE_CLOSED;
}
#endif
