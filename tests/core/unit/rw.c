/* rw.c - readers-writer locks: shared, exclusive and update access, upgrade
   and downgrade, their marks, endings, refusals and BUSY answers. */

/* Proves: a readers-writer lock sends one script per node and operation:
   the acquire with the token, the ttl, its mode and how long a refused
   writer's mark lives (retry delay + jitter + 2 node timeouts); 1 is a
   vote for, 0 against (held in a mode that excludes it, or a writer
   waits); the release carries the flag that drops the writer's mark, the
   undo of a failed attempt does not (the mark keeps new readers out until
   the next attempt); extend: 1, 0 (gone), -1 (another kind of lock). */
static void test_rw_commands(void) {
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("s"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_extend(&L, 500);
    expect_sent(0, with_token(RW_EXTEND_SHA, " 500 s"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    expect_sent(0, with_token(RW_RELEASE_SHA, " 1"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
    /* a writer refused: the undo keeps its mark (no flag), the retry is
       the same command */
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("x"));
    num_to(0, "EVALSHA", 0);
    expect_sent(0, script_sent(redlock_rw_release_script(), ""));
    num_to(0, "EVAL", 0);
    run_until_sent(2);
    expect_sent(0, rw_acquire_sent("x"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", -1);             /* a plain lock's string there */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    teardown();
    /* malformed answers: a node error each */
    setup_rw(3, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 2);
    str_to(1, "EVALSHA", "1");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_PROTOCOL);
    teardown();
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    redlock_upgrade(&L);
    num_to(0, "EVALSHA", 2);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* NOSCRIPT: EVAL of the text */
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script.");
    expect_starts(0, "EVAL if redis.replicate_commands then redis.replicate_commands() end local k,tok,m=KEYS[1]");
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: an update lock asks for "u"; redlock_upgrade runs the upgrade
   script (token, the lock's ttl, the writer's mark's life) on every node:
   0 (readers still there: renewed) on a quorum retries after the delay,
   1 on a quorum makes the lock exclusive (OP_UPGRADE, OK); downgrade makes
   it shared at the call and sends set-mode "s"; an upgrade that runs out of
   retries is LOCKED, settles the nodes back to "u" and the lock stays held
   as update; the calls' refusals. */
static void test_rw_upgrade_downgrade(void) {
    char expect[1200];
    int k;
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_NOT_HELD);
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("u"));
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
    setup_rw_held(3, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    snprintf(expect, sizeof expect, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 1 res %s 1000 200", redlock_lock_token(&L));
    expect_sent(0, expect);
    expect_sent(2, expect);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);  /* node 5 may still upgrade */
    num_to(2, "EVALSHA", 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    run_until_sent(6);
    expect_sent(0, expect);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);   /* exclusive already */
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    expect_sent(0, with_token(RW_SET_MODE_SHA, " s"));
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_INVALID); /* shared already */
    teardown();
    /* retries used up: LOCKED, the nodes settle back to update */
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    for (k = 1; k <= 3; k++) {
        run_until_sent(k);
        num_to(0, "EVALSHA", 0);
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    expect_sent(0, script_sent(redlock_rw_set_mode_script(), " u"));
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    num_to(0, "EVAL", 1);
    /* the entry gone: lost, the upgrade told first */
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", -1);
    CHECK_EQ(T.res.r[T.res.n - 2].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[T.res.n - 2].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(T.res.r[T.res.n - 1].op, REDLOCK_OP_LOST);
    teardown();
    /* release cancels a waiting upgrade */
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    redlock_upgrade(&L);
    num_to(0, "EVALSHA", 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_CANCELLED);
    teardown();
}

/* Proves: the writer's mark follows the writer: the undo of an attempt
   that will be retried keeps it (no flag), the undo of the last attempt
   drops it (flag 2, no PUBLISH), a release that cancels a waiting acquire
   drops it too (flag 1); a downgrade a quorum did not confirm says
   NO_QUORUM and the lock is shared anyway; an upgrade that runs into
   wait_ms ends TIMEOUT. */
static void test_rw_marks_and_endings(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_EXCLUSIVE, 0);
    o.retry_count = -1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    expect_sent(0, script_sent(redlock_rw_release_script(), " 2"));
    teardown();
    setup_rw(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 0);
    num_to(0, "EVAL", 0);                  /* the undo (kept the mark) */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CANCELLED);
    expect_sent(0, with_token(RW_RELEASE_SHA, " 1"));
    teardown();
    setup_rw_held(3, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 0);
    o.retry_count = 100;
    o.wait_ms = 250;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    redlock_upgrade(&L);
    num_to(0, "EVALSHA", 0);
    run_until_sent(2);
    num_to(0, "EVALSHA", 0);
    run_until_sent(3);
    num_to(0, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
}

/* Proves: a downgrade or an upgrade changes the hold, not the handle: the
   next acquire asks for the mode of the options again (an exclusive lock
   that was downgraded asks "x", an update lock that was upgraded "u" and
   may upgrade again); redlock_lock_access says the hold's mode while held,
   the options' otherwise. */
static void test_rw_mode_per_hold(void) {
    setup_rw_held(1, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("x"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    teardown();
    /* a hold that ends LOST after a downgrade: the same */
    setup_rw_held(1, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_downgrade(&L);
    num_to(0, "EVALSHA", 1);
    advance_to(T.now + 2000000);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    num_to(0, "EVAL", 0);                  /* the cleanup's answer */
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("x"));
    teardown();
    /* update: upgraded once, an update lock again at the next acquire */
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    expect_sent(0, rw_acquire_sent("u"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    teardown();
    /* adopted: the options' mode too */
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    redlock_upgrade(&L);
    num_to(0, "EVALSHA", 1);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 500), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    teardown();
}

/* Answers every command sent since *done: 0 to an upgrade attempt
   (readers still there: renewed, not upgraded), 1 to anything else. */
static void answer_upgrade_refused(int *done) {
    for (; *done < T.qn; (*done)++)
        num(*done, starts(*done, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251") ? 0 : 1);
}

/* Proves: an upgrade's attempts renew the hold within max_hold_ms and
   max_extensions as the watchdog does: with readers that never leave, the
   upgrade ends HOLD_LIMIT once the cap is reached and the lock runs out
   (LOST, HOLD_LIMIT) within a ttl of the cap; attempts that renewed count
   as extensions; an upgrade called past the cap ends at once. */
static void test_rw_upgrade_hold_cap(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t start;
    int done = 0, cap;
    for (cap = 0; cap < 2; cap++) {
        rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 1);
        o.retry_count = 1000;
        if (cap == 0) o.max_hold_ms = 1500;
        else o.max_extensions = 4;
        setup_with(&cfg, &o);
        done = 0;
        start = T.now;
        redlock_acquire(&L);
        answer_upgrade_refused(&done);
        CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
        answer_upgrade_refused(&done);
        while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && T.now < start + 6000000 && T.timer != REDLOCK_NO_DEADLINE) {
            advance_to(T.timer);
            answer_upgrade_refused(&done);
        }
        CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_HOLD_LIMIT);
        CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
        if (cap == 0) CHECK(T.now <= start + 2500000);
        else CHECK(LOCK_EXTENSIONS(L) == 4);
        teardown();
    }
    /* the cap reached before the call (an extend of the user's counts):
       ends at once, nothing sent */
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 0);
    o.max_extensions = 1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_HOLD_LIMIT);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_UPDATE);
    teardown();
}

/* Proves: an upgrade called while a watchdog renewal runs makes its first
   attempt as soon as the renewal's answer is in (its timer is due then,
   not a renew interval later), and its wait_ms counts from the call. */
static void test_rw_upgrade_during_renewal(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t called;
    int k;
    base_config(&cfg, 1);
    base_opts(&o, 3000, 1);
    o.access = REDLOCK_ACCESS_UPDATE;
    o.retry_count = 100;
    o.wait_ms = 200;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    advance_to(T.timer);                   /* the watchdog's renewal goes out */
    CHECK_EQ(T.qn, 2);
    expect_starts(0, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158");
    called = T.now + 10000;
    T.now = called;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);                     /* after the renewal */
    T.now += 5000;
    num_to(0, "EVALSHA", 1);
    CHECK(T.timer <= T.now);               /* due at once */
    advance_to(T.now);
    CHECK_EQ(T.qn, 3);
    expect_starts(0, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251");
    for (k = 2; k < 20 && last_status(REDLOCK_OP_UPGRADE) == 1; k++) {
        if (k < T.qn) num_to(0, "EVALSHA", 0);
        if (last_status(REDLOCK_OP_UPGRADE) == 1) run_until_sent(k + 1);
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_TIMEOUT);
    CHECK(T.now <= called + 200000);
    teardown();
}

/* Proves: a release while a downgrade's round runs answers the downgrade
   (CANCELLED), then the release. */
static void test_rw_release_cancels_downgrade(void) {
    setup_rw_held(3, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_ERR_CANCELLED);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); /* the downgrade's answers: stale */
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.n, 3);
    teardown();
}

/* Proves: a downgrade decided at a quorum still makes the slowest node's
   entry shared: its NOSCRIPT is followed by the set-mode script's text
   with "s". */
static void test_rw_downgrade_straggler_noscript(void) {
    char expect[1200];
    setup_rw_held(3, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    err_to(2, "EVALSHA", "NOSCRIPT No matching script.");
    snprintf(expect, sizeof expect, "EVAL %s 1 res %s s", redlock_rw_set_mode_script(), redlock_lock_token(&L));
    CHECK_EQ(T.qn, 7);
    expect_sent(2, expect);
    num_to(2, "EVAL", 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: the options a readers-writer lock refuses (INVALID): another
   mode number, reentrant, fence; a node without scripting votes
   NO_SCRIPTING; too few nodes that may script by configuration: refused
   at init. */
static void test_rw_refusals(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    base_config(&cfg, 3);
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    base_opts(&o, 1000, 0);
    o.access = (redlock_access)7;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.access = REDLOCK_ACCESS_SHARED;
    o.reentrant = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.reentrant = 0;
    o.fence = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    redlock_client_deinit(&C);
    cfg.mode[0] = cfg.mode[1] = REDLOCK_MODE_LEGACY;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    o.fence = 0;
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    redlock_client_deinit(&C);
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    err_to(1, "EVALSHA", "ERR unknown command 'EVALSHA'");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    teardown();
}

/* Proves: an upgrade's events and result name it and count from its call:
   each attempt's votes carry op UPGRADE and its attempt number; an attempt
   that failed and will be retried emits RETRY (op UPGRADE, node -1) with
   why: LOCKED while a node still has other holders, OVERLOADED when the
   transport's queue refused a command, NO_QUORUM when too few nodes
   answered; the result after the last attempt says why too, with the
   upgrade's attempts and the time since redlock_upgrade was called. */
static void test_rw_upgrade_events(void) {
    const redlock_event *ev;
    int64_t called;
    int i, k;
    setup_rw_held(3, REDLOCK_ACCESS_UPDATE);
    T.now += 7000;
    called = T.now;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    num_to(0, "EVALSHA", 0);                        /* readers still there */
    fail_to(1, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    T.evn = 0;
    fail_to(2, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->node == 2 && ev->attempt == 1);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->status == REDLOCK_ERR_LOCKED && ev->attempt == 1 &&
          ev->node == -1);
    CHECK_EQ(T.res.n, 1);                           /* the acquire's only */
    /* attempt 2: node 0's command refused by the transport's full queue */
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    T.evn = 0;
    run_until_sent(7);
    CHECK_EQ(T.qn, 8);                              /* nodes 1 and 2 */
    T.fail_send_node = -1;
    fail_to(1, "EVALSHA", REDLOCK_ERR_NODE_TIMEOUT);
    fail_to(2, "EVALSHA", REDLOCK_ERR_NODE_TIMEOUT);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->op == REDLOCK_OP_UPGRADE && ev->status == REDLOCK_ERR_OVERLOADED && ev->attempt == 2);
    for (i = 0; i < T.evn; i++)
        if (T.ev[i].type == REDLOCK_EV_VOTE) CHECK(T.ev[i].op == REDLOCK_OP_UPGRADE && T.ev[i].attempt == 2);
    /* attempt 3, the last: no answer at all */
    run_until_sent(8);
    CHECK_EQ(T.qn, 11);
    T.now += 4000;
    for (k = 0; k < 3; k++) fail_to(k, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.res.r[1].attempts, 3);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[1].elapsed_us, T.now - called);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
    /* one node, one attempt: the upgrade's OK result, from its call */
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    T.now += 9000;
    called = T.now;
    redlock_upgrade(&L);
    T.now += 1500;
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK_EQ(T.res.r[T.res.n - 1].votes, 1);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 1);
    teardown();
}

/* Proves: an upgrade attempt is a renewal from its start: its call never
   lengthens the validity before a quorum confirms (an attempt that nobody
   answers leaves the acquire's), and cuts a longer one (after a long
   extend) to the lock's ttl from the attempt's start at once. */
static void test_rw_upgrade_validity_at_start(void) {
    int64_t until, t1;
    int k;
    setup_rw_held(3, REDLOCK_ACCESS_UPDATE);
    until = redlock_lock_valid_until(&L);
    T.now += 300000;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), until);
    for (k = 0; k < 3; k++) fail_to(k, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(redlock_lock_valid_until(&L), until);  /* no quorum: nothing renewed */
    teardown();
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    redlock_extend(&L, 5000);
    num_to(0, "EVALSHA", 1);
    T.now += 1000;
    t1 = T.now;
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 1000000 - 12000);
    teardown();
}

/* Result reaction: the lock deinitialised and its memory overwritten, as
   if freed and reused. */
static void free_in_result(redlock_lock *lk, const redlock_result *r) {
    (void)r;
    redlock_lock_deinit(lk);
    memset(lk, 0xAA, sizeof *lk);
}

/* Proves: a lock deinitialised while its upgrade ends is not touched again
   (no result, nothing scheduled, its memory free for reuse at once): when
   the deinit comes from the send of the failed upgrade's settle (set-mode
   back to update), and when the UPGRADE result of a lost lock
   deinitialises it (no LOST after it). */
static void test_rw_upgrade_result_after_deinit(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 0);
    o.retry_count = -1;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    T.on_send = free_L_at_eval;                     /* the settle: EVAL of set-mode */
    num_to(0, "EVALSHA", 0);                        /* refused, no retry left */
    CHECK(T.on_send == NULL);                       /* the settle went out */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    T.on_result = free_in_result;
    num_to(0, "EVALSHA", -1);                                     /* the entry is gone: lost */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_UPGRADE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
}

/* Proves: an upgrade's script text sent after NOSCRIPT is answered as the
   upgrade it is: 0 (readers still there) waits and retries, 1 upgrades;
   after an upgrade the watchdog renews as usual from then, not at once. */
static void test_rw_upgrade_after_noscript(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t done;
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 1);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    redlock_upgrade(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script.");
    expect_sent(0, script_sent(redlock_rw_upgrade_script(), " 1000 200"));
    num_to(0, "EVAL", 0);
    CHECK(last_ev(REDLOCK_EV_RETRY) && last_ev(REDLOCK_EV_RETRY)->status == REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    run_until_sent(3);
    expect_starts(0, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 ");
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    done = T.now;
    CHECK_EQ(T.qn, 4);
    advance_to(done + 150000);                      /* half a renew_every (333 ms) later */
    CHECK_EQ(T.qn, 4);
    run_until_sent(4);
    CHECK(T.now <= done + 333000);
    expect_starts(0, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 ");
    teardown();
}

/* Proves: a downgrade's and a release's results count their elapsed time
   from their own call, not from the acquire (and the RELEASED event its
   round's); the calls' refusals: not held (NOT_HELD), a mode that has
   nothing to change (INVALID). */
static void test_rw_downgrade_release_elapsed(void) {
    int64_t called;
    setup_rw(3, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_NOT_HELD);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    T.now += 300000;
    called = T.now;
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    T.now += 2000;
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK_EQ(T.res.r[T.res.n - 1].votes, 2);
    CHECK_EQ(redlock_lock_pending(&L), 1);          /* node 2's answer still out */
    num_to(2, "EVALSHA", 1);                        /* comes quietly: no second result */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    T.now += 100000;
    called = T.now;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    T.now += 3000;
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].elapsed_us, T.now - called);
    CHECK(last_ev(REDLOCK_EV_RELEASED) != NULL);
    if (last_ev(REDLOCK_EV_RELEASED)) {             /* the round's time, its votes */
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->elapsed_us, T.now - called);
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->votes, 2);
        CHECK_EQ(last_ev(REDLOCK_EV_RELEASED)->status, REDLOCK_OK);
    }
    teardown();
    setup_n(1, 0, 1000);                            /* a plain lock has no mode to change */
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_INVALID);
    teardown();
}

/* Proves: what makes upgrade and downgrade BUSY and what does not: a
   downgrade waits for no extend of any kind (BUSY during the user's extend,
   OK after it) and for no upgrade (BUSY while one waits for readers, as an
   extend is); an upgrade is BUSY during the user's extend but not after
   one, and not during a watchdog renewal: its first attempt follows the
   renewal. An upgrade cancelled by release is over: the next hold of the
   handle extends freely and sends no upgrade. */
static void test_rw_calls_busy(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_rw_held(1, REDLOCK_ACCESS_EXCLUSIVE);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_BUSY);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    teardown();
    setup_rw_held(1, REDLOCK_ACCESS_UPDATE);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);     /* the extend is over */
    num_to(0, "EVALSHA", 0);                        /* readers: waits for the retry */
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_ERR_CANCELLED);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 200000);                     /* past the cancelled upgrade's retry */
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    teardown();
    /* a watchdog renewal running: the upgrade is taken, and goes out after it */
    rw_settings(&cfg, &o, 1, REDLOCK_ACCESS_UPDATE, 1);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    run_until_sent(1);
    expect_starts(0, "EVALSHA 4fa1c0304cf0189b45ec8ec2c59d15e46e862158 ");
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    num_to(0, "EVALSHA", 1);
    run_until_sent(2);
    expect_starts(0, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 ");
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    teardown();
}

/* Proves: how long a refused writer's mark lives, as sent with a
   readers-writer acquire and an upgrade: until the next attempt is due at
   the latest (retry delay + the whole jitter) and two node timeouts more:
   100 + 30 + 2 * 50 ms. */
static void test_rw_mark_life_with_jitter(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.retry_jitter_ms = 30;
    base_opts(&o, 1000, 0);
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    expect_sent(0, with_token(RW_ACQUIRE_SHA, " 1000 x 230"));
    teardown();
    o.access = REDLOCK_ACCESS_UPDATE;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    redlock_upgrade(&L);
    expect_sent(0, with_token(RW_UPGRADE_SHA, " 1000 230"));
    teardown();
}

/* Proves: a readers-writer lock on REDLOCK_MAX_NODES nodes acquires,
   upgrades (one attempt waiting for readers, one done), downgrades and
   releases with one command per node, each to its own node (an index past
   the last node traps). */
static void test_rw_max_nodes(void) {
    int k, before, pass;
    setup_rw(REDLOCK_MAX_NODES, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    for (k = 0; k < T.qn; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    for (pass = 0; pass < 2; pass++) {
        if (pass) run_until_sent(T.qn);             /* the retry */
        before = T.qn - REDLOCK_MAX_NODES;
        CHECK(before >= 0 && starts(before, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 "));
        for (k = before; k < T.qn; k++) CHECK_EQ(T.q[k].node, k - before);
        for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", pass);
    }
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 2);
    before = T.qn;
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) CHECK_EQ(T.q[k].node, k - before);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    before = T.qn;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: redlock_lock_followup() counts an upgrade's and a downgrade's
   script as any other script: a node's answer still owed after the
   round was decided is a follow-up while that script has not run there
   yet (its NOSCRIPT brings the EVAL), and is none once it has. */
static void test_rw_followup(void) {
    setup_rw(3, REDLOCK_ACCESS_UPDATE);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);  /* node 2's first upgrade */
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    CHECK(redlock_lock_followup(&L) != 0);  /* node 2's first set-mode */
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_followup(&L), 0);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* both scripts have run on node 2: its late answers change nothing */
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    expect_starts(2, "EVALSHA 4d94de4c4c2d54aa9a81ab17767096537623e251 ");
    CHECK_EQ(redlock_lock_followup(&L), 0);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_DOWNGRADE), REDLOCK_OK);
    expect_starts(2, "EVALSHA b06ef25325497e7d384d8265d29a5597c574e502 ");
    CHECK_EQ(redlock_lock_followup(&L), 0);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

static void run_rw(int argc, char **argv) {
    RUN_T(test_rw_commands);
    RUN_T(test_rw_refusals);
    RUN_T(test_rw_upgrade_downgrade);
    RUN_T(test_rw_marks_and_endings);
    RUN_T(test_rw_mode_per_hold);
    RUN_T(test_rw_upgrade_hold_cap);
    RUN_T(test_rw_upgrade_during_renewal);
    RUN_T(test_rw_release_cancels_downgrade);
    RUN_T(test_rw_upgrade_events);
    RUN_T(test_rw_upgrade_validity_at_start);
    RUN_T(test_rw_upgrade_result_after_deinit);
    RUN_T(test_rw_upgrade_after_noscript);
    RUN_T(test_rw_downgrade_release_elapsed);
    RUN_T(test_rw_downgrade_straggler_noscript);
    RUN_T(test_rw_followup);
    RUN_T(test_rw_calls_busy);
    RUN_T(test_rw_mark_life_with_jitter);
    RUN_T(test_rw_max_nodes);
}
