/* fenced.c - fenced locks: the fence number's write-back to a quorum,
   its scripts, refusals, and fences with reentrant and adopted locks. */

/* Proves: a fenced acquire is one script per node (SET NX PX, then INCR of
   the key's counter) with the token and the ttl; once a quorum won, the
   highest count of those nodes goes back to them (the write-back, with the
   token; a node whose win comes later gets the same fence, not its own
   count), and only a quorum of write-backs makes the lock held,
   with that fence and the validity counted from the acquire's start; extend
   and release keep the fence; a new acquire shows none until it wins. */
static void test_fence_acquire_write_back(void) {
    int64_t start;
    setup_fenced(3);
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    CHECK(fsent_is(0, FACQ_SHA, " 1000"));
    CHECK(fsent_is(2, FACQ_SHA, " 1000"));
    T.now += 3000;
    num_to(0, "EVALSHA", 5);
    num_to(2, "EVALSHA", 9);
    CHECK_EQ(T.qn, 5);                    /* the write-back, to nodes 0 and 2 only */
    CHECK(fsent_is(3, FENCE_SHA, " 9"));
    CHECK(fsent_is(4, FENCE_SHA, " 9"));
    CHECK_EQ(T.q[3].node, 0);
    CHECK_EQ(T.q[4].node, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    CHECK_EQ(T.res.n, 0);
    num_to(1, "EVALSHA", 12);             /* a late win: written back the same fence */
    CHECK(fsent_is(5, FENCE_SHA, " 9"));
    CHECK_EQ(T.q[5].node, 1);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 0);                 /* one write-back is not a quorum */
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 9);
    CHECK_EQ(redlock_lock_fence(&L), 9);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - 12000);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    expect_starts(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ");
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 0); /* only an acquire's result carries it */
    CHECK_EQ(redlock_lock_fence(&L), 9);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 9);  /* still readable after the hold */
    num(11, 1);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    num_to(0, "EVALSHA", 10); num_to(1, "EVALSHA", 0); num(14, 11);
    CHECK(fsent_is(15, FENCE_SHA, " 11"));
    CHECK(fsent_is(16, FENCE_SHA, " 11"));
    CHECK_EQ(T.qn, 17);
    num_to(0, "EVALSHA", 1); num(16, 1);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 11);
    CHECK_EQ(redlock_lock_fence(&L), 11);
    teardown();
}

/* Proves: a write-back that finds the key gone (0) on too many nodes fails
   the attempt (VALIDITY: the key ran out), which is undone everywhere and
   retried without a fence to show; a write-back that cannot reach a quorum
   in time (node timeout) fails it as NO_QUORUM; the validity is checked
   again when the write-backs are in. */
static void test_fence_write_back_fails(void) {
    setup_fenced(3);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 3); num_to(1, "EVALSHA", 4);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0); /* node 2's acquire may still win */
    num_to(2, "EVALSHA", 0);
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_VALIDITY);
    CHECK_EQ(T.qn, 8);                    /* the undo, on every node */
    expect_starts(0, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])");
    expect_starts(2, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])");
    CHECK_EQ(redlock_lock_fence(&L), 0);
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 1); num_to(2, "EVAL", 0);
    run_until_sent(8);
    CHECK(fsent_is(8, FACQ_SHA, " 1000"));
    num_to(0, "EVALSHA", 5); num_to(1, "EVALSHA", 6);
    advance_to(T.now + 50000);            /* no write-back answers: node timeout */
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 2);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_NO_QUORUM);
    teardown();
    /* the write-backs come back after the validity ran out */
    setup_fenced(1);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    T.now += 990000;
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_VALIDITY);
    teardown();
}

/* Proves: NOSCRIPT moves the fenced acquire and the write-back to EVAL of
   their texts (with both keys); scripts refused (NOPERM, an old server)
   end the acquire with NO_SCRIPTING, never a legacy fallback; a fenced
   lock is refused at init when too few nodes may script by configuration
   (also a reentrant one); no lock may take a counter's name; a
   counter that is not a number is the server's error. */
static void test_fence_scripts_and_refusals(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_fenced(1);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(0, "EVAL if redis.call('set',KEYS[1],ARGV[1],'nx','px',ARGV[2]) then return redis.call('incr',KEYS[2]) end return 0 2 res " REDLOCK_FENCE_PREFIX "res ");
    num_to(0, "EVAL", 2);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(0, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then local c=tonumber(redis.call('get',KEYS[2]))");
    CHECK(strstr(T.q[3].cmd, " 2 res " REDLOCK_FENCE_PREFIX "res ") != NULL);
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 2);
    teardown();
    setup_fenced(3);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    err_to(1, "EVALSHA", "ERR unknown command 'EVALSHA'");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    teardown();
    setup_fenced(1);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "WRONGTYPE Operation against a key holding the wrong kind of value");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    teardown();
    base_config(&cfg, 3);
    cfg.mode[0] = cfg.mode[2] = REDLOCK_MODE_LEGACY;
    {
        redlock_callbacks cb;
        base_callbacks(&cb);
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        base_opts(&o, 1000, 0);
        o.fence = 1;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        o.fence = 0;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&L);
        o.fence = 1;
        o.reentrant = 1;
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
        o.reentrant = 0;
        o.fence = 0;
        o.key = REDLOCK_FENCE_PREFIX "res";
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_KEY);
        o.key = "redlock:fenc";
        CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&L);
        redlock_client_deinit(&C);
    }
    CHECK_EQ(redlock_lock_fence(NULL), 0);
}

static const char RFENCE_SHA[] = "EVALSHA 9aed5e9a15c9204fc81f0a524e790f2b5de165d1 2 res " REDLOCK_FENCE_PREFIX "res ";

/* Proves: a fenced reentrant lock sends the reentrant fenced scripts with
   both keys, the owner and the token; the count it gets back (a new hash:
   the counter; an entry of the owner: the hold's fence kept in the hash)
   is written back with the owner and token; release and extend are the
   reentrant lock's. */
static void test_fence_reentrant(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    char expect[200];
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "svc-f";
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "%ssvc-f %s 1000", RFACQ_SHA, redlock_lock_token(&L));
    expect_sent(0, expect);
    num_to(0, "EVALSHA", 7);
    snprintf(expect, sizeof expect, "%ssvc-f %s 7", RFENCE_SHA, redlock_lock_token(&L));
    expect_sent(0, expect);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 7);
    redlock_release(&L);
    expect_starts(0, "EVALSHA 7283c68fe5834b62f0fa88be7e1310f6391bcf58 1 res svc-f ");
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    /* an entry of the owner on three nodes: the highest reply, kept (5) or
       new (9: an old entry that missed its write-back); a node that wins
       after the lock was reported held gets the write-back too */
    base_config(&cfg, 3);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 9);
    num_to(1, "EVALSHA", 5);
    snprintf(expect, sizeof expect, "%ssvc-f %s 9", RFENCE_SHA, redlock_lock_token(&L));
    expect_sent(0, expect);
    expect_sent(1, expect);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(T.res.r[T.res.n - 1].fence, 9);
    num_to(2, "EVALSHA", 11);
    CHECK_EQ(T.qn, 6);
    expect_sent(2, expect);
    CHECK_EQ(T.q[5].node, 2);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_fence(&L), 9);
    teardown();
    setup_fenced(1);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", -3);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    CHECK(strstr(redlock_reentrant_fence_acquire_script(), "hget',k,' fence'") != NULL);
    CHECK(strstr(redlock_reentrant_acquire_script(), "hexists',k,' fence'") != NULL);
    CHECK(strstr(redlock_reentrant_release_script(), "redis.call('del',k)") != NULL);
}

/* Proves: the write-back goes only to nodes that may run its script: a
   node whose acquire won but that was found to refuse scripts before the
   write-back started (another lock's extend refused there: NOPERM) gets
   nothing and counts as no write-back, as a reentrant fenced lock's does;
   the other nodes' write-backs still make the lock held. */
static void test_fence_write_back_skips_noscript(void) {
    static const char B_EXTEND[] = "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 other";
    redlock_lock B;
    redlock_lock_opts o;
    char expect[200];
    setup_fenced(3);
    base_opts(&o, 1000, 0);
    o.key = "other";
    CHECK_EQ(redlock_lock_init(&B, &C, &o), REDLOCK_OK);
    redlock_acquire(&B);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    CHECK_EQ(redlock_lock_state(&B), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, FACQ_SHA, 5);                /* node 0's acquire won */
    CHECK_EQ(redlock_extend(&B, 0), REDLOCK_OK);
    err_to(0, B_EXTEND, "NOPERM this user has no permissions to run the 'evalsha' command");
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    str_to(0, "GET", redlock_lock_token(&B));
    num_to(0, "PEXPIRE", 1);
    num_to(1, B_EXTEND, 1); num_to(2, B_EXTEND, 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    num_to(1, FACQ_SHA, 7);                /* a quorum won: the write-back */
    CHECK_EQ(next_to(0), -1);              /* none to node 0 */
    snprintf(expect, sizeof expect, "%s%s 7", FENCE_SHA, redlock_lock_token(&L));
    expect_sent(1, expect);
    num_to(1, FENCE_SHA, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING); /* one write-back is not a quorum */
    num_to(2, FACQ_SHA, 6);                /* a late win: the same fence */
    expect_sent(2, expect);
    num_to(2, FENCE_SHA, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 7);
    CHECK_EQ(next_to(0), -1);
    redlock_lock_deinit(&B);
    teardown();
}

/* Proves: an adopted token shows no fence. */
static void test_fence_adopted(void) {
    setup_fenced(1);
    CHECK_EQ(redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 500), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    teardown();
}

static void run_fenced(int argc, char **argv) {
    RUN_T(test_fence_acquire_write_back);
    RUN_T(test_fence_write_back_fails);
    RUN_T(test_fence_scripts_and_refusals);
    RUN_T(test_fence_write_back_skips_noscript);
    RUN_T(test_fence_adopted);
    RUN_T(test_fence_reentrant);
}
