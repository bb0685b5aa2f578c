/* release.c - releasing: the compare-and-delete script (EVALSHA, EVAL on
   NOSCRIPT), its quorum, a release that cancels an acquire or an extend,
   and what is still owed after a round is decided. */

static void test_release_cancels_acquire(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CANCELLED);
    ok_to(1, "SET");                      /* stale */
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 0); num_to(2, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

static void test_release_cancels_extend(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    redlock_extend(&L, 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_CANCELLED);
    num_to(0, "EVALSHA", 1);              /* the extend's reply: stale */
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.n, 3);
    teardown();
    /* validity runs out while a user extend waits: EXTEND answered, then LOST */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    T.now = redlock_lock_valid_until(&L) - 10;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    teardown();
}

/* Proves: a result that cancels an operation before any node voted says
   so with no votes, no validity and no fence: an acquire and a user
   extend overtaken by release. */
static void test_cancelled_result_fields(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CANCELLED);
    CHECK_EQ(T.res.r[0].votes, 0);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.res.r[0].validity_us, 0);
    CHECK_EQ(T.res.r[0].fence, 0);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    redlock_extend(&L, 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_CANCELLED);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[1].validity_us, 0);
    teardown();
}

static void test_release_noscript_fallback(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(0, "EVAL if redis.call('get',KEYS[1])==ARGV[1]");
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

static void test_release_quorum(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    redlock_release(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 0);
    CHECK_EQ(T.res.n, 1);                 /* 1 yes, 1 pending: not yet */
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    redlock_release(&L);
    advance_to(T.now + 50000);            /* nobody answers */
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* Proves: with 16 nodes release needs 9 deletions (8 + 8 gone: EXPIRED; 8 + silence: NO_QUORUM); extend needs 9, and 8 other tokens mean STOLEN; a NOSCRIPT step keeps its node's tag. */
static void test_sixteen_nodes_release_extend(void) {
    int k, pass;
    for (pass = 0; pass < 3; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        for (k = 0; k < 16; k++) ok_to(k, "SET");
        redlock_release(&L);
        CHECK_EQ(count_cmd(16, RELEASE_SHA), 16);
        for (k = 0; k < 8; k++) num_to(k, "EVALSHA", 1);
        CHECK_EQ(T.res.n, 1);
        if (pass == 0) {
            err_to(15, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
            expect_starts(15, "EVAL if redis.call('get'");
            CHECK_EQ(T.q[32].node, 15);
            CHECK_EQ(redlock_tag_node(T.q[32].tag), 15);
            CHECK_EQ(T.res.n, 1);
            num_to(15, "EVAL", 1);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
            CHECK_EQ(T.res.r[1].votes, 9);
        } else if (pass == 1) {
            for (k = 8; k < 15; k++) num_to(k, "EVALSHA", 0);
            CHECK_EQ(T.res.n, 1);         /* 8 yes + 1 pending could still make 9 */
            num_to(15, "EVALSHA", 0);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
            CHECK_EQ(T.res.r[1].votes, 8);
        } else {
            advance_to(T.now + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
        teardown();
    }
    for (pass = 0; pass < 2; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        for (k = 0; k < 16; k++) ok_to(k, "SET");
        redlock_extend(&L, 0);
        CHECK_EQ(count_cmd(16, EXTEND_SHA), 16);
        for (k = 0; k < 7; k++) num_to(k, "EVALSHA", -1);   /* 7 other tokens */
        for (k = 7; k < 15; k++) num_to(k, "EVALSHA", 1);   /* 8 ours */
        CHECK_EQ(T.res.n, 1);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        num_to(15, "EVALSHA", pass == 0 ? 1 : -1);
        if (pass == 0) {
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
            CHECK_EQ(T.res.r[1].votes, 9);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
            CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
        }
        teardown();
    }
    /* 8 keys gone (0): a majority lost as soon as the 8th says so */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 16; k++) ok_to(k, "SET");
    redlock_extend(&L, 0);
    for (k = 0; k < 7; k++) num_to(k, "EVALSHA", 0);
    CHECK_EQ(T.res.n, 1);
    num_to(7, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
}

/* Proves: a release's EVALSHA answered NOSCRIPT after the round's node
   timeout still gets its EVAL (compare-and-delete is idempotent; without
   it the key stays until its ttl), whether the NOSCRIPT comes after the
   timer ended the round or after the deadline but before the timer came;
   the release was decided meanwhile (NO_QUORUM) and the EVAL's answer
   changes nothing. redlock_lock_followup() says such an answer is owed. */
static void test_release_late_noscript_after_timeout(void) {
    const char *noscript = "NOSCRIPT No matching script. Please use EVAL.";
    int k;
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    expect_starts(0, "EVALSHA");
    advance_to(T.now + 50000);                   /* the node timeout: unanswered */
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.qn, 2);
    CHECK(redlock_lock_followup(&L));
    err_to(0, "EVALSHA", noscript);               /* late */
    CHECK_EQ(T.qn, 3);
    expect_sent(0, release_eval_publish(redlock_lock_token(&L)));
    CHECK(!redlock_lock_followup(&L));
    num_to(0, "EVAL", 1);
    CHECK_EQ(T.res.n, 2);                         /* acquire, release: nothing more */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(T.qn, 3);
    teardown();
    /* three nodes: node 1's NOSCRIPT after the deadline, before the timer;
       node 2's after the timer */
    setup_n(3, 0, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    redlock_release(&L);                          /* 3, 4, 5: EVALSHA */
    num_to(0, "EVALSHA", 1);
    T.now += 60000;
    err_to(1, "EVALSHA", noscript);
    k = find_cmd(6, 1, "EVAL ");
    CHECK(k >= 0);
    if (k >= 0) expect_sent(1, release_eval_publish(redlock_lock_token(&L)));
    redlock_on_timer(&C);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    err_to(2, "EVALSHA", noscript);
    k = find_cmd(6, 2, "EVAL ");
    CHECK(k >= 0);
    if (k >= 0) expect_sent(2, release_eval_publish(redlock_lock_token(&L)));
    CHECK_EQ(count_cmd(6, "EVAL "), 2);
    CHECK_EQ(T.res.n, 2);
    teardown();
}

/* Proves: a release is decided as soon as the answers rule a quorum out:
   two "not there" answers of three end it (EXPIRED) without waiting for the
   third node, whose late answer changes nothing. */
static void test_release_decides_without_straggler(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
}

/* Proves: redlock_lock_followup() says whether an answer still owed will be
   followed by another command: a node's first SET (AUTO) and first script,
   NOSCRIPT, a chain of a node without scripts, the legacy chain; and not
   for a command the node has understood before, nor with MODERN set. */
static void test_followup(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int k;
    CHECK_EQ(redlock_lock_followup(NULL), 0);
    setup_no_retry(3, 0, 10000);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* nothing running */
    redlock_acquire(&L);
    ok_to(0, "SET");
    ok_to(1, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_pending(&L), 0);             /* a won acquire leaves no round running ... */
    CHECK(redlock_lock_followup(&L) != 0);             /* ... but node 2's late SET may tell a GET + DEL release its bound */
    ok_to(2, "SET");
    CHECK_EQ(redlock_lock_followup(&L), 0);
    redlock_release(&L);                               /* EVALSHA 3, 4, 5 */
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* node 2's first script: NOSCRIPT means EVAL next */
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    redlock_acquire(&L);                               /* SET 6, 7, 8 */
    ok_to(0, "SET");
    ok_to(1, "SET");
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* the release script ran on node 2 */
    ok_to(2, "SET");
    redlock_release(&L);                               /* EVALSHA 9, 10, 11 */
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK(redlock_lock_pending(&L) != 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* node 2 ran a script before */
    err_to(2, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(2, "EVAL ");
    CHECK(redlock_lock_followup(&L) != 0);             /* its scripts are gone: not known again until answered */
    num_to(2, "EVAL", 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    /* a chain on a node without scripts: GET owed, then DEL owed */
    redlock_acquire(&L);                               /* SET 13, 14, 15 */
    ok_to(0, "SET");
    ok_to(1, "SET");
    ok_to(2, "SET");
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);       /* EVALSHA 16, 17, 18: node 0 has no scripts */
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    expect_sent(0, "GET res");
    str_to(0, "GET", redlock_lock_token(&L));
    expect_starts(0, "PEXPIRE res ");
    num_to(0, "PEXPIRE", 1);
    num_to(1, "EVALSHA", 1);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);                               /* GET 21, EVALSHA 22, 23 */
    expect_sent(0, "GET res");
    num_to(1, "EVALSHA", 1);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* GET: DEL follows */
    str_to(0, "GET", redlock_lock_token(&L));
    expect_sent(0, "DEL res");
    CHECK(redlock_lock_pending(&L) != 0);
    CHECK_EQ(redlock_lock_followup(&L), 0);            /* DEL ends the chain */
    num_to(0, "DEL", 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
    /* MODERN configured: a first script still may be answered NOSCRIPT,
       and the extend script having run says nothing of the release's */
    base_config(&cfg, 3);
    cfg.retry_count = -1;
    for (k = 0; k < 3; k++) cfg.mode[k] = REDLOCK_MODE_MODERN;
    base_opts(&o, 10000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ok_to(0, "SET");
    ok_to(1, "SET");
    ok_to(2, "SET");
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);       /* 3, 4, 5 */
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    num_to(2, "EVALSHA", 1);
    redlock_release(&L);                               /* 6, 7, 8 */
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK(redlock_lock_followup(&L) != 0);
    num_to(2, "EVALSHA", 1);
    teardown();
    /* legacy: a release is GET, then DEL */
    setup_legacy(3, -1, 10000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1);
    num_to(1, "SETNX", 1);
    num_to(2, "SETNX", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_release(&L);                               /* GET 3, 4, 5 */
    for (k = 0; k < 2; k++) str_to(k, "GET", T.q[0].cmd + strlen("SETNX res "));
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    num_to(1, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);             /* node 2's GET */
    teardown();
}

static void run_release(int argc, char **argv) {
    RUN_T(test_followup);
    RUN_T(test_release_cancels_acquire);
    RUN_T(test_release_cancels_extend);
    RUN_T(test_cancelled_result_fields);
    RUN_T(test_release_noscript_fallback);
    RUN_T(test_release_late_noscript_after_timeout);
    RUN_T(test_release_quorum);
    RUN_T(test_sixteen_nodes_release_extend);
    RUN_T(test_release_decides_without_straggler);
}
