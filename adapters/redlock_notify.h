/* redlock_notify.h - the adapters' table of release notifications
   (redlock.h section 10): which keys a client listens to, and which of
   its locks a message on a key's channel wakes. No I/O and no API of its
   own: an adapter keeps one subscriber connection per node while the
   table is not empty, SUBSCRIBEs each key the table starts listening to,
   UNSUBSCRIBEs each it stops listening to, and passes every message it
   receives to redlock__notify_message().

   A lock is in the table between the core's listen(on) (its first failed
   attempt with a retry to come, when the retry delay is at least the node
   timeout) and listen(off) (its acquire ended, or the lock is being
   deinitialised): for the rest of that acquire the subscription is
   already there when the key is freed. A message wakes only locks that
   are waiting (redlock_lock_waiting): over N nodes one release arrives N
   times, and the copies that come while the woken attempt runs would only
   start another attempt that loses too. (The core spends no retry on an
   attempt a wake started and rate-limits wakes per lock: a flood of
   forged messages cannot end a wait early.) */
#ifndef REDLOCK_NOTIFY_H
#define REDLOCK_NOTIFY_H

#include "../redlock.h" /* every adapter: beside adapters/ (or include/redlock/), no -I needed */

#include <stdlib.h>
#include <string.h>

typedef struct redlock__notify_entry {
    struct redlock__notify_entry *next; /* in its bucket */
    redlock_lock *lock;
    const char *key;  /* the lock's own copy (redlock_lock_key) */
    size_t key_len;
    uint64_t hash;
    unsigned woken;   /* the message serial that last woke it */
} redlock__notify_entry;

typedef struct redlock__notify {
    redlock__notify_entry **bucket;
    size_t nbucket;   /* a power of two, or 0 */
    size_t count;     /* locks in the table */
    unsigned serial;  /* messages seen */
} redlock__notify;

static inline uint64_t redlock__notify_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static inline int redlock__notify_same(const redlock__notify_entry *e, uint64_t h, const char *key, size_t len)
{
    return e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0;
}

/* Another entry of the bucket with the same key, or NULL. */
static inline redlock__notify_entry *redlock__notify_other(const redlock__notify *n, const redlock__notify_entry *self)
{
    redlock__notify_entry *e = n->bucket[self->hash & (n->nbucket - 1)];
    for (; e; e = e->next)
        if (e != self && redlock__notify_same(e, self->hash, self->key, self->key_len)) return e;
    return NULL;
}

static inline int redlock__notify_grow(redlock__notify *n)
{
    size_t nb = n->nbucket ? n->nbucket * 2 : 16, i;
    redlock__notify_entry **b = (redlock__notify_entry **)calloc(nb, sizeof *b);
    if (!b) return -1;
    for (i = 0; i < n->nbucket; i++) {
        redlock__notify_entry *e = n->bucket[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(n->bucket);
    n->bucket = b;
    n->nbucket = nb;
    return 0;
}

static inline redlock__notify_entry **redlock__notify_slot(const redlock__notify *n, const redlock_lock *lk)
{
    size_t len;
    const char *key;
    redlock__notify_entry **p;
    if (!n->count) return NULL;
    key = redlock_lock_key(lk, &len);
    p = &n->bucket[redlock__notify_hash(key, len) & (n->nbucket - 1)];
    for (; *p; p = &(*p)->next)
        if ((*p)->lock == lk) return p;
    return NULL;
}

/* Listens for lk's key. Returns 1 if the table did not listen to that key
   yet (the adapter SUBSCRIBEs it on every node), 0 if it did (or lk is in
   already), -1 out of memory (lk then simply waits out its delays). */
static inline int redlock__notify_add(redlock__notify *n, redlock_lock *lk)
{
    redlock__notify_entry *e;
    size_t len;
    const char *key = redlock_lock_key(lk, &len);
    if (redlock__notify_slot(n, lk)) return 0;
    if (n->count >= n->nbucket && redlock__notify_grow(n) != 0) return -1;
    e = (redlock__notify_entry *)malloc(sizeof *e);
    if (!e) return -1;
    e->lock = lk;
    e->key = key;
    e->key_len = len;
    e->hash = redlock__notify_hash(key, len);
    e->woken = n->serial;
    e->next = n->bucket[e->hash & (n->nbucket - 1)];
    n->bucket[e->hash & (n->nbucket - 1)] = e;
    n->count++;
    return redlock__notify_other(n, e) ? 0 : 1;
}

/* Stops listening for lk (its acquire ended, or it goes away). Returns 1
   if no other lock listens to its key (the adapter UNSUBSCRIBEs it; key
   and *len then say which), else 0. */
static inline int redlock__notify_remove(redlock__notify *n, const redlock_lock *lk, const char **key, size_t *len)
{
    redlock__notify_entry **p = redlock__notify_slot(n, lk), *e;
    int last;
    if (!p) return 0;
    e = *p;
    last = redlock__notify_other(n, e) == NULL;
    *key = e->key;
    *len = e->key_len;
    *p = e->next;
    n->count--;
    free(e);
    return last;
}

/* A message on channel REDLOCK_CHANNEL_PREFIX + key: wakes the table's
   waiting locks of that key, each once. A wake may run callbacks that
   change the table, so the bucket is searched again after each one. */
static inline void redlock__notify_message(redlock__notify *n, const char *key, size_t len)
{
    uint64_t h;
    unsigned serial = ++n->serial;
    if (!n->count) return;
    h = redlock__notify_hash(key, len);
    for (;;) {
        redlock__notify_entry *e = n->bucket[h & (n->nbucket - 1)];
        for (; e; e = e->next)
            if (e->woken != serial && redlock__notify_same(e, h, key, len)) break;
        if (!e) return;
        e->woken = serial;
        if (redlock_lock_waiting(e->lock)) redlock_lock_wake(e->lock);
    }
}

/* Calls fn once for each key the table listens to (a new subscriber
   connection subscribes them all). */
static inline void redlock__notify_each_key(const redlock__notify *n, void (*fn)(void *ctx, const char *key, size_t len),
                                            void *ctx)
{
    size_t i;
    for (i = 0; i < n->nbucket && n->count; i++) {
        const redlock__notify_entry *e = n->bucket[i], *f;
        for (; e; e = e->next) {
            for (f = n->bucket[i]; f != e && !redlock__notify_same(f, e->hash, e->key, e->key_len); f = f->next) {}
            if (f == e) fn(ctx, e->key, e->key_len); /* the key's first entry */
        }
    }
}

static inline void redlock__notify_free(redlock__notify *n)
{
    size_t i;
    for (i = 0; i < n->nbucket; i++) {
        redlock__notify_entry *e = n->bucket[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(n->bucket);
    memset(n, 0, sizeof *n);
}

/* A subscriber's command `verb` (SUBSCRIBE, UNSUBSCRIBE; SSUBSCRIBE,
   SUNSUBSCRIBE) of key's channel as argv[2] / argl[2]: the channel
   (REDLOCK_CHANNEL_PREFIX + key, or with `sharded` the key's shard
   channel, redlock_shard_channel) is built in buf (cap bytes), or when
   longer in a block the caller frees (the return value, when not buf).
   NULL: out of memory. */
static inline char *redlock__notify_command(const char *verb, const char *key, size_t len, int sharded, char *buf,
                                            size_t cap, const char *argv[2], size_t argl[2])
{
    const size_t plen = sizeof REDLOCK_CHANNEL_PREFIX - 1;
    size_t n = sharded ? redlock_shard_channel(key, len, NULL, 0) : plen + len;
    char *ch = n + 1 > cap ? (char *)malloc(n + 1) : buf;
    if (!ch) return NULL;
    if (sharded) {
        redlock_shard_channel(key, len, ch, n + 1);
    } else {
        memcpy(ch, REDLOCK_CHANNEL_PREFIX, plen);
        memcpy(ch + plen, key, len);
    }
    argv[0] = verb;
    argl[0] = strlen(verb);
    argv[1] = ch;
    argl[1] = n;
    return ch;
}

/* A node that refuses a subscriber's command (an ACL that denies the
   channel, as Redis 7's default for new users does, or SUBSCRIBE; a
   renamed command) refuses it again at once: its subscriber is reopened
   only after a backoff, 1 s after the first refusal, doubled after each
   one in a row up to a minute, and the node's releases are meanwhile not
   heard (its waiters sleep out their retry delays). */
#define REDLOCK__NOTIFY_BACKOFF_MIN_MS 1000
#define REDLOCK__NOTIFY_BACKOFF_MAX_MS 60000

/* The backoff after a refusal, given the one before (0: none). */
static inline int64_t redlock__notify_backoff(int64_t prev_ms)
{
    if (prev_ms <= 0) return REDLOCK__NOTIFY_BACKOFF_MIN_MS;
    return prev_ms >= REDLOCK__NOTIFY_BACKOFF_MAX_MS / 2 ? REDLOCK__NOTIFY_BACKOFF_MAX_MS : prev_ms * 2;
}

/* A channel name from a message, as the key: NULL if it is not one of ours. */
static inline const char *redlock__notify_key_of(const char *channel, size_t len, size_t *key_len)
{
    size_t plen = sizeof REDLOCK_CHANNEL_PREFIX - 1;
    if (len < plen || memcmp(channel, REDLOCK_CHANNEL_PREFIX, plen) != 0) return NULL;
    *key_len = len - plen;
    return channel + plen;
}

/* The keys a shard channel may name: redlock_shard_channel() gives
   "{a}" and "a" the same channel (in the same slot), so a message on
   REDLOCK_CHANNEL_PREFIX "{X}" may be for key "{X}" or key "X" (waking
   both costs at most a spurious attempt). Up to two, in key[] / klen[];
   returns how many (0: not one of ours). */
static inline int redlock__notify_shard_keys(const char *channel, size_t len, const char *key[2], size_t klen[2])
{
    int n = 0;
    if (!(key[0] = redlock__notify_key_of(channel, len, &klen[0]))) return 0;
    n = 1;
    if (klen[0] >= 2 && key[0][0] == '{' && key[0][klen[0] - 1] == '}') {
        key[1] = key[0] + 1;
        klen[1] = klen[0] - 2;
        n = 2;
    }
    return n;
}

#endif /* REDLOCK_NOTIFY_H */
