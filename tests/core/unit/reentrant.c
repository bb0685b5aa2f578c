/* reentrant.c - reentrant locks: the owner hash and its scripts, owners
   by default and given, nesting across handles, and nodes without scripts. */

/* Proves: a fenced reentrant lock with a label keeps its token, owner and
   counter apart in its key block: three holds in a row send the owner and
   the counter's key intact, each token is the label and fresh hex digits
   (the next token, made ahead, is not overwritten by the owner), and the
   owner and key read back unchanged. */
static void test_reentrant_label_layout(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[300], prev[REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN + 1] = "";
    size_t len;
    int k;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "svc-label-owner";
    o.label = "host-with-a-long-name:4242:";
    setup_with(&cfg, &o);
    for (k = 0; k < 3; k++) {
        T.qn = 0;
        redlock_acquire(&L);
        CHECK(labelled(redlock_lock_token(&L), o.label));
        CHECK(strcmp(prev, redlock_lock_token(&L)) != 0);
        snprintf(expect, sizeof expect, "%ssvc-label-owner %s 1000", RFACQ_SHA, redlock_lock_token(&L));
        expect_sent(0, expect);
        num_to(0, "EVALSHA", 3 + k);
        num_to(0, "EVALSHA", 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_fence(&L), 3 + k);
        CHECK_STR(redlock_lock_owner(&L), "svc-label-owner");
        CHECK(memcmp(redlock_lock_key(&L, &len), "res", 3) == 0 && len == 3);
        strcpy(prev, redlock_lock_token(&L));
        redlock_release(&L);
        num_to(0, "EVALSHA", 1);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    }
    teardown();
}

static const char RACQ_SHA[] = "EVALSHA fe1913b107883a8d56dff9985f4ef19d96780450 1 res ";
static const char RREL_SHA[] = "EVALSHA 7283c68fe5834b62f0fa88be7e1310f6391bcf58 1 res ";
static const char REXT_SHA[] = "EVALSHA 8713768fb046a3ec2f3a21545b1de720ccbd516d 1 res ";
/* command k is `prefix` followed by the owner and the lock's token (and `tail`) */
static int sent_is(int k, const char *prefix, const char *owner, const char *tail) {
    char expect[400];
    snprintf(expect, sizeof expect, "%s%s %s%s", prefix, owner, redlock_lock_token(&L), tail);
    if (k < T.qn && strcmp(T.q[k].cmd, expect) == 0) return 1;
    printf("#   command %d: \"%s\", expected \"%s\"\n", k, k < T.qn ? T.q[k].cmd : "(none)", expect);
    return 0;
}

/* Proves: a reentrant acquire is one script per node with the owner, the
   token and the ttl; any count >= 1 is a vote for (the owner's count on
   that node), 0 is another owner; the validity is the plain lock's; the
   release sends the owner and the token; redlock_lock_owner says the id. */
static void test_reentrant_acquire_release(void) {
    int64_t start;
    setup_reentrant(3, "svc-a");
    CHECK_STR(redlock_lock_owner(&L), "svc-a");
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    CHECK(sent_is(0, RACQ_SHA, "svc-a", " 1000"));
    CHECK(sent_is(2, RACQ_SHA, "svc-a", " 1000"));
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 3);              /* the owner holds it twice more there */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - 12000);
    num_to(2, "EVALSHA", 0);              /* another owner there: changes nothing now */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(sent_is(3, RREL_SHA, "svc-a", " 1"));
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    num_to(2, "EVALSHA", 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* Proves: another owner holding the key on a majority is LOCKED, after the
   retries; each failed attempt is undone by the reentrant release script
   (EVAL, with owner and token) on every node; retries keep the token, so a
   retry adds nothing twice where an earlier attempt's entry landed. */
static void test_reentrant_other_owner_refused(void) {
    char token[REDLOCK_TOKEN_LEN + 1];
    int k;
    setup_reentrant(3, "svc-b");
    redlock_acquire(&L);
    strcpy(token, redlock_lock_token(&L));
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(T.qn, 6);
    for (k = 3; k < 6; k++) {
        char expect[64];
        CHECK(starts(k, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'"));
        snprintf(expect, sizeof expect, " 1 res svc-b %s", token);
        CHECK(strstr(T.q[k].cmd, expect) != NULL);
    }
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 0); num_to(2, "EVAL", 0);
    run_until_sent(6);
    CHECK(sent_is(6, RACQ_SHA, "svc-b", " 1000"));
    CHECK_STR(redlock_lock_token(&L), token);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    run_until_sent(12);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
}

/* Proves: NOSCRIPT moves each reentrant script to EVAL of its text. */
static void test_reentrant_noscript(void) {
    setup_reentrant(1, "svc-c");
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(0, "EVAL local k,o=KEYS[1],ARGV[1] local f=o..':'..ARGV[2]");
    CHECK_EQ(redlock_lock_followup(&L), 1);  /* its answer may be NOSCRIPT-free only now */
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_extend(&L, 0);
    CHECK(sent_is(2, REXT_SHA, "svc-c", " 1000"));
    err_to(0, "EVALSHA", "NOSCRIPT No matching script.");
    expect_starts(0, "EVAL local k,o=KEYS[1],ARGV[1] local t=redis.call('type',k).ok if t=='none' then return 0");
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script.");
    expect_starts(0, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'");
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: a node without scripting (an ACL's NOPERM, an old server's
   unknown command) fails with NO_SCRIPTING, and is not switched to the
   legacy commands (no INFO probe, no SETNX); too many such nodes end the
   acquire at once with NO_SCRIPTING, without retries; fewer, and the others
   still decide. lock_init refuses the mode when too few nodes may script
   by configuration (MODE_LEGACY). */
static void test_reentrant_no_scripting(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    err_to(1, "EVALSHA", "ERR unknown command 'EVALSHA'");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK(!starts(3, "INFO") && !starts(3, "SETNX"));
    teardown();
    /* one of three: the other two decide */
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
    /* one of three and one other owner: NO_SCRIPTING said, retried */
    setup_reentrant(3, "svc-d");
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM no scripts");
    num_to(1, "EVALSHA", 1);
    advance_to(T.now + 50000);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_NO_SCRIPTING);
    teardown();
    /* configured legacy on a majority: refused at init; on one node: fine */
    base_config(&cfg, 3);
    cfg.mode[0] = cfg.mode[1] = REDLOCK_MODE_LEGACY;
    reentrant_opts(&o, "svc-d");
    memset(&T, 0, sizeof T);
    {
        redlock_callbacks cb;
        base_callbacks(&cb);
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        cfg.mode[1] = REDLOCK_MODE_AUTO;
        redlock_client_deinit(&C);
        T.fail_send_node = -1;
        T.client = &C;
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        /* nothing goes to the LEGACY node: its vote fails at once */
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 2);
        CHECK_EQ(T.q[0].node, 1);
        CHECK_EQ(T.q[1].node, 2);
        num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        redlock_release(&L);
        CHECK_EQ(T.qn, 4);
        num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
        teardown();
    }
    CHECK_STR(redlock_strerror(REDLOCK_ERR_NO_SCRIPTING), "the node refuses scripts, which reentrant and fenced locks need");
}

/* Proves: extend sends the owner, the token and the ttl; 1 extends, 0
   (our entry gone) counts as missing, -1 (another owner) as stolen; replies
   a script cannot give are PROTOCOL. */
static void test_reentrant_extend(void) {
    int64_t t0;
    setup_reentrant(3, "svc-e");
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 2);
    T.now += 300000;
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    CHECK(sent_is(3, REXT_SHA, "svc-e", " 2000"));
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 2000000 - 22000);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
    setup_reentrant(3, "svc-e");
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", -1); num_to(1, "EVALSHA", -1);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    teardown();
    /* malformed answers */
    setup_reentrant(1, "svc-e");
    redlock_acquire(&L);
    num_to(0, "EVALSHA", -1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    setup_reentrant(1, "svc-e");
    redlock_acquire(&L);
    ok_to(0, "EVALSHA");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
}

/* Proves: two handles of one owner on one key both hold it (each its own
   token, the same owner in every command); releasing one leaves the other
   held; a handle of another owner sends its own id. */
static void test_reentrant_two_handles(void) {
    redlock_lock second, other;
    redlock_lock_opts o;
    char t1[REDLOCK_TOKEN_LEN + 1];
    setup_reentrant(1, "svc-f");
    reentrant_opts(&o, "svc-f");
    CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
    o.owner = "svc-g";
    CHECK_EQ(redlock_lock_init(&other, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    strcpy(t1, redlock_lock_token(&L));
    redlock_acquire(&second);
    CHECK(strstr(T.q[1].cmd, " res svc-f ") != NULL);
    CHECK(strstr(T.q[1].cmd, t1) == NULL);   /* a token of its own */
    num_to(0, "EVALSHA", 2);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_acquire(&other);
    CHECK(strstr(T.q[2].cmd, " res svc-g ") != NULL);
    num_to(0, "EVALSHA", 0);
    CHECK(strstr(T.q[3].cmd, " res svc-g ") != NULL); /* its undo */
    num_to(0, "EVAL", 0);
    redlock_release(&second);
    CHECK(strstr(T.q[4].cmd, " res svc-f ") != NULL);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_lock_deinit(&second);
    redlock_lock_deinit(&other);
    teardown();
}

/* Proves: deinitialising a reentrant lock whose validity ran out with no
   timer call since (it reads LOST, no round pending) sends the cleanup
   after LOST first, as the timer would have: its entry does not stay in a
   hash that the owner's other holds keep alive (there it would keep the
   owner's count up, and the key, past their last release). Nothing is
   reported; the cleanup's answer is ignored, also one inside send. The
   same when lock_init deinitialises the handle; a send that deinitialises
   the lock again ends it there. One still within its validity is
   forgotten without a command (deinit does not release). */
static void test_reentrant_deinit_after_run_out(void) {
    redlock_lock second;
    redlock_lock_opts o;
    char tok[REDLOCK_TOKEN_LEN + 1], tail[REDLOCK_TOKEN_LEN + 32];
    int how; /* 0 deinit, 1 lock_init, 2 deinit answered inside send, 3 deinit inside that send */
    for (how = 0; how < 4; how++) {
        setup_reentrant(1, "svc-h");
        reentrant_opts(&o, "svc-h");
        o.ttl_ms = 5000;
        CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
        redlock_acquire(&L);
        num_to(0, "EVALSHA", 1);
        strcpy(tok, redlock_lock_token(&L));
        redlock_acquire(&second);
        num_to(0, "EVALSHA", 2);
        T.now = redlock_lock_valid_until(&L);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
        CHECK_EQ(redlock_lock_pending(&L), 0);
        if (how == 2) T.sync = sync_ok;
        if (how == 3) {
            T.on_send = free_L_at_eval;
        }
        if (how == 1) CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        else redlock_lock_deinit(&L);
        T.sync = NULL;
        CHECK_EQ(T.qn, 3);
        CHECK(starts(2, "EVAL local k,o=KEYS[1],ARGV[1] if redis.call('type',k).ok~='hash'"));
        snprintf(tail, sizeof tail, " 1 res svc-h %s 1", tok);
        CHECK(strlen(T.q[2].cmd) > strlen(tail) && strcmp(T.q[2].cmd + strlen(T.q[2].cmd) - strlen(tail), tail) == 0);
        num(2, 1);
        CHECK_EQ(T.res.n, 2); /* the two acquires only */
        CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&second));
        redlock_lock_deinit(&second);
        if (how == 3) memset(&L, 0, sizeof L);
        teardown();
        CHECK_EQ(key_blocks, 0);
    }
    setup_reentrant(1, "svc-h");
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    T.now = redlock_lock_valid_until(&L) - 1;
    redlock_lock_deinit(&L);
    CHECK_EQ(T.qn, 1);
    teardown();
}

static void *other_thread_owner(void *arg) {
    redlock_lock *lk = (redlock_lock *)arg;
    redlock_acquire(lk);
    return NULL;
}

/* Proves: with no owner given, the owner is "<client id>:<thread id>", 16
   hex digits each: the same for two handles acquired by one thread on one
   client, another for another client (its own id) and for another thread;
   it is taken at the acquire (an undo running meanwhile keeps the old
   one); a random source that fails refuses the acquire. Owner ids are
   checked at init: 1..REDLOCK_MAX_OWNER printable bytes, no space. */
static void test_reentrant_default_owner(void) {
    redlock_lock second;
    redlock_client c2;
    redlock_lock_opts o;
    redlock_config cfg;
    redlock_callbacks cb;
    char first[REDLOCK_MAX_OWNER + 1], id[17];
    pthread_t th;
    size_t i;
    setup_reentrant(1, NULL);
    CHECK_STR(redlock_lock_owner(&L), "");
    redlock_acquire(&L);
    strcpy(first, redlock_lock_owner(&L));
    CHECK_EQ(strlen(first), 33);
    CHECK(first[16] == ':');
    for (i = 0; i < 33; i++) CHECK(i == 16 || strchr("0123456789abcdef", first[i]) != NULL);
    CHECK(strstr(T.q[0].cmd, first) != NULL);
    num_to(0, "EVALSHA", 1);
    reentrant_opts(&o, NULL);
    CHECK_EQ(redlock_lock_init(&second, &C, &o), REDLOCK_OK);
    redlock_acquire(&second);
    CHECK_STR(redlock_lock_owner(&second), first);
    num_to(0, "EVALSHA", 2);
    redlock_release(&second);
    num_to(0, "EVALSHA", 1);
    /* another thread: the same client part, another thread part */
    CHECK_EQ(pthread_create(&th, NULL, other_thread_owner, &second), 0);
    pthread_join(th, NULL);
    CHECK(strncmp(redlock_lock_owner(&second), first, 17) == 0);
    CHECK(strcmp(redlock_lock_owner(&second) + 17, first + 17) != 0);
    num_to(0, "EVALSHA", 0);
    redlock_lock_deinit(&second);
    /* another client: another client part */
    memcpy(id, first, 16);
    id[16] = 0;
    base_config(&cfg, 1);
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&c2, &cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&second, &c2, &o), REDLOCK_OK);
    redlock_acquire(&second);
    CHECK(strncmp(redlock_lock_owner(&second), id, 16) != 0);
    redlock_lock_deinit(&second);
    redlock_client_deinit(&c2);
    /* the random source fails before the client's id was drawn */
    CHECK_EQ(redlock_client_init(&c2, &cfg, &cb, NULL), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&second, &c2, &o), REDLOCK_OK);
    T.fail_random = 1;
    CHECK_EQ(redlock_acquire(&second), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&second), REDLOCK_STATE_IDLE);
    T.fail_random = 0;
    redlock_lock_deinit(&second);
    redlock_client_deinit(&c2);
    teardown();
}

/* Handles acquired by threads that are all alive at once (a thread id may
   be reused once its thread has ended): each records its id and its owner. */
typedef struct owner_probe {
    redlock_lock lk;
    uint64_t thread;
    int rc;
    char owner[REDLOCK_MAX_OWNER + 1];
} owner_probe;
static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t probe_all_alive;
static void *probe_acquire(void *arg) {
    owner_probe *p = (owner_probe *)arg;
    pthread_mutex_lock(&probe_mu);            /* one thread at a time uses the client */
    p->thread = REDLOCK_THREAD_ID();
    p->rc = redlock_acquire(&p->lk);
    strcpy(p->owner, redlock_lock_owner(&p->lk));
    pthread_mutex_unlock(&probe_mu);
    pthread_barrier_wait(&probe_all_alive);
    return NULL;
}
/* owner is "<client>:<16 hex digits of thread>" */
static int owner_is(const char *owner, const char *client, uint64_t thread) {
    char expect[40];
    snprintf(expect, sizeof expect, "%.16s:%016llx", client, (unsigned long long)thread);
    if (strcmp(owner, expect) == 0) return 1;
    printf("#   owner \"%s\", expected \"%s\"\n", owner, expect);
    return 0;
}
/* A random source that fails only for 8-byte draws (the client's id), not
   for tokens. */
static int t_random_no_ids(void *u, void *buf, size_t len) {
    return len == sizeof(uint64_t) ? -1 : t_random(u, buf, len);
}

/* Proves: the default owner's thread part is exactly the 16 hex digits of
   REDLOCK_THREAD_ID() in the thread that acquires (or adopts): the main
   thread's, and each of four other threads alive at once, all different;
   adopt takes the owner too, and its commands carry it; a fenced
   reentrant lock's counter name is intact beside it; when the client's id
   cannot be drawn, acquire and adopt refuse (RANDOM) and nothing is sent. */
static void test_reentrant_default_owner_bytes(void) {
    owner_probe probe[4];
    pthread_t th[4];
    char client[17], expect[300];
    redlock_lock_opts o;
    redlock_config cfg;
    int i, j;
    setup_reentrant(1, NULL);
    redlock_acquire(&L);
    memcpy(client, redlock_lock_owner(&L), 16);
    client[16] = 0;
    CHECK(owner_is(redlock_lock_owner(&L), client, REDLOCK_THREAD_ID()));
    CHECK(sent_is(0, RACQ_SHA, redlock_lock_owner(&L), " 1000"));
    num_to(0, "EVALSHA", 1);
    reentrant_opts(&o, NULL);
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_lock_init(&probe[i].lk, &C, &o), REDLOCK_OK);
    CHECK_EQ(pthread_barrier_init(&probe_all_alive, NULL, 5), 0);
    for (i = 0; i < 4; i++) CHECK_EQ(pthread_create(&th[i], NULL, probe_acquire, &probe[i]), 0);
    pthread_barrier_wait(&probe_all_alive);
    for (i = 0; i < 4; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&probe_all_alive);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(probe[i].rc, REDLOCK_OK);
        CHECK(owner_is(probe[i].owner, client, probe[i].thread));
        CHECK(probe[i].thread != REDLOCK_THREAD_ID());
        for (j = 0; j < i; j++) CHECK(strcmp(probe[i].owner, probe[j].owner) != 0);
        redlock_lock_deinit(&probe[i].lk);
    }
    CHECK_EQ(T.qn, 5);
    /* adopt: the owner of the adopting thread, in its commands */
    redlock_release(&L);
    num(5, 1);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 500), REDLOCK_OK);
    CHECK(owner_is(redlock_lock_owner(&L), client, REDLOCK_THREAD_ID()));
    redlock_extend(&L, 0);
    snprintf(expect, sizeof expect, "%s%s %s 1000", REXT_SHA, redlock_lock_owner(&L), ADOPTED);
    CHECK_STR(T.q[6].cmd, expect);
    teardown();
    /* fenced too: the counter's name after the owner's room is intact */
    base_config(&cfg, 1);
    reentrant_opts(&o, NULL);
    o.fence = 1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK(owner_is(redlock_lock_owner(&L), redlock_lock_owner(&L), REDLOCK_THREAD_ID()));
    snprintf(expect, sizeof expect, "%s%s %s 1000", RFACQ_SHA, redlock_lock_owner(&L), redlock_lock_token(&L));
    expect_sent(0, expect);
    teardown();
    /* no client id: refused before anything is sent */
    reentrant_opts(&o, NULL);
    setup_random(&cfg, &o, t_random_no_ids);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 500), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_STR(redlock_lock_owner(&L), "");
    CHECK_EQ(T.qn, 0);
    teardown();
}

/* Proves: owner ids are checked at init, and a reentrant lock's block is
   freed like any other. */
static void test_reentrant_init_errors(void) {
    redlock_lock_opts o;
    char longest[REDLOCK_MAX_OWNER + 2];
    long before;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    before = key_blocks;
    reentrant_opts(&o, "");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "has space";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "tab\there";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    o.owner = longest;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner_len = REDLOCK_MAX_OWNER; /* the first 64 bytes */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(strlen(redlock_lock_owner(&L)), REDLOCK_MAX_OWNER);
    CHECK_EQ(key_blocks, before + 1);
    o.owner = "a";
    o.owner_len = 0;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK); /* again: the old block freed */
    CHECK_EQ(key_blocks, before + 1);
    CHECK_STR(redlock_lock_owner(&L), "a");
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
    redlock_client_deinit(&C);
}

/* Proves: an owner id's bytes are the printable ASCII ones, '!' (33) to
   '~' (126), at both ends: space, DEL (127) and bytes above are refused. */
static void test_reentrant_owner_byte_range(void) {
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    reentrant_opts(&o, "!svc~");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_STR(redlock_lock_owner(&L), "!svc~");
    o.owner = "svc\x7f";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "svc\x80";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = " svc";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    redlock_client_deinit(&C);
}

/* Proves: an adopted token on a reentrant lock extends and releases with
   the lock's owner (the entry another process made for that owner). */
static void test_reentrant_adopt(void) {
    static const char tok[] = "00112233445566778899aabbccddeeff";
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    reentrant_opts(&o, "svc-h");
    o.watchdog = 1;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_adopt(&L, tok, 0), REDLOCK_OK);
    expect_starts(0, REXT_SHA);
    CHECK(strstr(T.q[0].cmd, " res svc-h 00112233445566778899aabbccddeeff 1000") != NULL);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_release(&L);
    expect_starts(0, RREL_SHA);
    CHECK(strstr(T.q[1].cmd, " res svc-h 00112233445566778899aabbccddeeff") != NULL);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

static void run_reentrant(int argc, char **argv) {
    RUN_T(test_reentrant_label_layout);
    RUN_T(test_reentrant_acquire_release);
    RUN_T(test_reentrant_other_owner_refused);
    RUN_T(test_reentrant_noscript);
    RUN_T(test_reentrant_no_scripting);
    RUN_T(test_reentrant_extend);
    RUN_T(test_reentrant_two_handles);
    RUN_T(test_reentrant_deinit_after_run_out);
    RUN_T(test_reentrant_default_owner);
    RUN_T(test_reentrant_default_owner_bytes);
    RUN_T(test_reentrant_init_errors);
    RUN_T(test_reentrant_owner_byte_range);
    RUN_T(test_reentrant_adopt);
}
