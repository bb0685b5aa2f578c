/* handles.c - a handle's life: misuse of the API, detached, NULL and
   zeroed handles, and callbacks that call back in (release, acquire,
   re-initialise or deinitialise, even free, from inside on_result or send),
   including locks without on_result. */

static void test_api_misuse(void) {
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_acquire(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_release(NULL), REDLOCK_ERR_INVALID);
    T.fail_random = 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_RANDOM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(T.qn, 0);
    T.fail_random = 0;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_ALREADY_HELD);
    CHECK_EQ(redlock_extend(&L, -1), REDLOCK_ERR_TTL);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_BUSY);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_BUSY);
    num(T.qn - 1, 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    teardown();
    /* after deinit the handle is detached */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
}

/* Reactions of the tests below, inside on_result or inside send. */
static void release_when_acquired(redlock_lock *lk, const redlock_result *r) {
    if (r->op == REDLOCK_OP_ACQUIRE && r->status == REDLOCK_OK) redlock_release(lk);
}
static void deinit_in_result(redlock_lock *lk, const redlock_result *r) {
    (void)r;
    redlock_lock_deinit(lk);
}
static void deinit_when_lost(redlock_lock *lk, const redlock_result *r) {
    if (r->op == REDLOCK_OP_LOST) redlock_lock_deinit(lk);
}
/* ... and its memory overwritten, as if freed and reused */
static void free_when_lost(redlock_lock *lk, const redlock_result *r) {
    if (r->op != REDLOCK_OP_LOST) return;
    redlock_lock_deinit(lk);
    memset(lk, 0xAA, sizeof *lk);
}
static void deinit_at_extend(redlock_lock *lk, const redlock_result *r) {
    if (r->op == REDLOCK_OP_EXTEND) redlock_lock_deinit(lk);
}
static void acquire_after_failure(redlock_lock *lk, const redlock_result *r) {
    if (r->op != REDLOCK_OP_ACQUIRE || r->status == REDLOCK_OK) return;
    T.on_result = NULL;
    T.rc = redlock_acquire(lk);
}
static void acquire_after_failed_extend(redlock_lock *lk, const redlock_result *r) {
    if (r->op != REDLOCK_OP_EXTEND || r->status == REDLOCK_OK) return;
    T.on_result = NULL;
    T.rc = redlock_acquire(lk);
}
static void acquire_when_lost(redlock_lock *lk, const redlock_result *r) {
    if (r->op != REDLOCK_OP_LOST) return;
    T.on_result = NULL;
    T.rc = redlock_acquire(lk);
}
/* The lock initialised again (a 1 s lock on "res") by its first acquire's result. */
static void reinit_when_acquired(redlock_lock *lk, const redlock_result *r) {
    redlock_lock_opts o;
    if (r->op != REDLOCK_OP_ACQUIRE) return;
    T.on_result = NULL;
    base_opts(&o, 1000, 0);
    T.rc = redlock_lock_init(lk, T.client, &o);
}
/* The first EVALSHA or EVAL sent deinitialises L. */
static void deinit_L_at_eval_any(const char *cmd) {
    if (first_sent(cmd, "EVAL")) redlock_lock_deinit(&L);
}
static void deinit_L_at_eval(const char *cmd) {
    if (first_sent(cmd, "EVAL ")) redlock_lock_deinit(&L);
}
static void deinit_L_at_set(const char *cmd) {
    if (first_sent(cmd, "SET ")) redlock_lock_deinit(&L);
}

static void test_callbacks_reenter(void) {
    /* release from inside on_result, with a synchronous transport */
    setup_n(3, 0, 1000);
    T.sync = sync_ok;
    T.on_result = release_when_acquired;
    redlock_acquire(&L);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_RELEASE);
    CHECK_EQ(T.res.r[1].status, REDLOCK_OK);
    teardown();
    /* deinit from inside on_result: no further callbacks, no crash */
    setup_n(3, 0, 1000);
    T.on_result = deinit_in_result;
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    CHECK_EQ(T.res.n, 1);
    ok_to(2, "SET");
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}
/* The one-command undo of a failed attempt: the release script itself, not
   EVALSHA; no flag, nothing published. */
static const char *release_eval(const char *token) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "EVAL %s 1 res %s", redlock_release_script(), token);
    return buf;
}

/* Proves: a failed final attempt's undo (one EVAL per node, the old token) is sent even if on_result deinitialises the lock. */
static void test_defect3_rollback_sent_before_on_result_deinit(void) {
    char tok[REDLOCK_TOKEN_LEN + 1];
    int k;
    setup_no_retry(3, 0, 1000);
    T.on_result = deinit_in_result;
    redlock_acquire(&L);
    strcpy(tok, redlock_lock_token(&L));
    nil_to(0, "SET");
    nil_to(1, "SET");                     /* LOCKED, no retries: undo, then on_result deinits */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_LOCKED);
    CHECK(T.res.pending[0] != 0);         /* the undo round runs while on_result is called */
    CHECK_EQ(T.qn, 6);
    for (k = 3; k < 6; k++) {
        CHECK_STR(T.q[k].cmd, release_eval(tok));
        CHECK_EQ(T.q[k].node, k - 3);
    }
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    num_to(0, "EVAL", 1);                 /* answers to a deinitialised lock: ignored */
    CHECK_EQ(T.res.n, 1);
    teardown();
    /* without deinit: pending while the undo runs, then not */
    setup_no_retry(1, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK(redlock_lock_pending(&L) != 0);
    num_to(0, "EVAL", 0);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: acquire() inside on_result after a failed final attempt sends the old token's undo first; the new SET waits for it. */
static void test_defect3_reacquire_waits_for_rollback(void) {
    char old[REDLOCK_TOKEN_LEN + 1], set[128];
    int k, pass;
    for (pass = 0; pass < 2; pass++) {    /* the undo ends by answers, then by node timeout */
        setup_no_retry(3, 0, 1000);
        T.on_result = acquire_after_failure;
        redlock_acquire(&L);
        strcpy(old, redlock_lock_token(&L));
        nil_to(0, "SET");
        nil_to(1, "SET");
        CHECK_EQ(T.res.n, 1);
        CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_LOCKED);
        CHECK_EQ(T.rc, REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
        CHECK(redlock_lock_pending(&L) != 0);
        CHECK_EQ(T.qn, 6);                /* the undo with the old token, no SET yet */
        for (k = 3; k < 6; k++) CHECK_STR(T.q[k].cmd, release_eval(old));
        num_to(0, "EVAL", 0);
        num_to(1, "EVAL", 0);
        CHECK_EQ(T.qn, 6);                /* node 2 still out: still waiting */
        if (pass == 0) {
            num_to(2, "EVAL", 1);
        } else {
            CHECK_EQ(T.timer, T.now + 50000);
            advance_to(T.now + 49999);
            CHECK_EQ(T.qn, 6);
            advance_to(T.now + 1);        /* node 2's undo times out */
        }
        CHECK_EQ(T.qn, 9);                /* now the new attempt, with a new token */
        CHECK(strcmp(redlock_lock_token(&L), old) != 0);
        snprintf(set, sizeof set, "SET res %s NX PX 1000", redlock_lock_token(&L));
        for (k = 6; k < 9; k++) CHECK_STR(T.q[k].cmd, set);
        ok_to(0, "SET"); ok_to(1, "SET");
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        teardown();
    }
}

/* Proves: the cleanup after LOST (validity ran out, no watchdog) is sent even if on_result deinitialises the lock. */
static void test_defect3_cleanup_sent_before_lost_deinit(void) {
    char tok[REDLOCK_TOKEN_LEN + 1];
    setup_n(1, 0, 1000);
    T.on_result = deinit_when_lost;
    redlock_acquire(&L);
    ok_to(0, "SET");
    strcpy(tok, redlock_lock_token(&L));
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK(T.res.pending[1] != 0);         /* the cleanup round runs while on_result is called */
    CHECK_EQ(T.qn, 2);
    expect_sent(0, release_eval_publish(tok));
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: a call on a lock whose validity ran out reports LOST first; when
   on_result then deinitialises the lock and its memory is reused (here:
   overwritten), the call returns DETACHED and reads nothing of it. */
static void test_call_after_lost_freed(void) {
    int call;
    for (call = 0; call < 4; call++) {
        int rc = 0;
        setup_n(1, 0, 1000);
        T.on_result = free_when_lost;
        redlock_acquire(&L);
        ok_to(0, "SET");
        T.now = redlock_lock_valid_until(&L); /* no timer call: the next call settles it */
        switch (call) {
        case 0: rc = redlock_acquire(&L); break;
        case 1: rc = redlock_release(&L); break;
        case 2: rc = redlock_extend(&L, 0); break;
        default: rc = redlock_lock_adopt(&L, "0123456789abcdef0123456789abcdef", 0); break;
        }
        CHECK_EQ(rc, REDLOCK_ERR_DETACHED);
        CHECK_EQ(T.res.n, 2);
        CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
        CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
        T.on_result = NULL;
        end_with_L_freed();
    }
}

/* Proves: init twice without deinit forgets the first (its replies ignored); the client's locks stay a sane list. */
static void test_defect8_lock_init_twice(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    int64_t until2;
    setup_n(1, 0, 1000);
    base_opts(&o, 1000, 0);
    redlock_acquire(&L);                  /* q0: the first incarnation's SET */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    o.key = "other";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);    /* terminates: no cycle */
    redlock_on_timer(&C);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ok_to(0, "SET");                      /* reply to the forgotten incarnation */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 0);
    /* both locks work */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L2), REDLOCK_OK);
    CHECK(starts(1, "SET res ") && starts(2, "SET other "));
    ok_to(0, "SET"); ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    until2 = redlock_lock_valid_until(&L2);
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&L));
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_next_deadline(&C), until2);
    advance_to(until2);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_LOST);
    redlock_lock_deinit(&L2);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: re-initialising the lock inside its own on_result leaves a fresh idle lock; the old round's replies are ignored. */
static void test_defect8_reinit_in_on_result(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    setup_n(3, 0, 1000);
    T.on_result = reinit_when_acquired;
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");     /* acquired: on_result re-initialises L */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.rc, REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    redlock_on_timer(&C);
    ok_to(2, "SET");                      /* the straggler of the old incarnation */
    CHECK_EQ(T.res.n, 1);
    base_opts(&o, 1000, 0);
    o.key = "other";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L2), REDLOCK_OK);
    CHECK_EQ(T.qn, 9);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(0, "SET"); ok_to(1, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    redlock_lock_deinit(&L2);
    teardown();
}

/* Proves: with on_result NULL and the watchdog on, renewals go out every ttl/3, the lock stays HELD, and when they fail it is LOST (TRANSPORT) by its validity, seen through state, lost_reason and EV_LOST; it can be acquired again. */
static void test_no_callback_lock_renews(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int64_t t0, until;
    int i, k, q;
    base_config(&cfg, 3);
    base_opts(&o, 900, 1);
    o.on_result = NULL;
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(redlock_next_deadline(&C), t0 + 50000);
    ok_to(0, "SET");
    ok_to(1, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 900000 - drift_us(900, 0));
    CHECK_EQ(T.timer, t0 + 300000);
    CHECK_EQ(redlock_next_deadline(&C), t0 + 300000);
    ok_to(2, "SET");                      /* straggler: nothing changes */
    for (i = 1; i <= 4; i++) {
        advance_to(T.timer);
        CHECK_EQ(T.now, t0 + i * 300000);
        CHECK_EQ(T.qn, 3 + 3 * i);
        k = T.qn - 3;
        CHECK(starts(k, EXTEND_SHA) && ends(k, " 900"));
        CHECK_EQ(redlock_lock_pending(&L), 1);
        num_to(0, "EVALSHA", 1);
        num_to(1, "EVALSHA", 1);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), i);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_lock_valid_until(&L), T.now + 900000 - drift_us(900, 0));
        CHECK_EQ(T.timer, T.now + 300000);
        CHECK_EQ(redlock_next_deadline(&C), T.now + 300000);
        num_to(2, "EVALSHA", 1);
    }
    /* from now on no renewal is answered */
    until = redlock_lock_valid_until(&L);
    for (i = 0; i < 100 && redlock_lock_state(&L) == REDLOCK_STATE_HELD; i++) {
        CHECK(T.timer <= until);
        advance_to(T.timer);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(T.now, until);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(redlock_lock_valid_until(&L), 0);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 2);
    ev = last_ev(REDLOCK_EV_LOST);
    CHECK(ev && ev->status == REDLOCK_ERR_TRANSPORT && ev->op == REDLOCK_OP_LOST);
    CHECK_EQ(count_cmd(T.qn - 3, "EVAL if redis.call('get'"), 3);   /* cleanup on every node */
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    q = T.qn;
    advance_to(T.now + 50000);            /* the cleanup times out */
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, q + 3);
    CHECK(starts(q, "SET res "));
    ok_to(0, "SET"); ok_to(1, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_lost_reason(&L), 0);
    CHECK_EQ(T.res.n, 0);
    teardown();
}

/* Proves: with on_result NULL and no watchdog, extend / release / a failing acquire / expiry all move the state and the timer as with a callback. */
static void test_no_callback_lock_ops(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int64_t t0, t1;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.on_result = NULL;
    setup_with(&cfg, &o);
    t0 = T.now;
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(T.timer, t0 + 1000000 - drift_us(1000, 0));   /* expiry, no renewal */
    T.now += 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 3000), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 3000), REDLOCK_ERR_BUSY);
    CHECK(starts(1, EXTEND_SHA) && ends(1, " 3000"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 3000000 - drift_us(3000, 0));
    CHECK_EQ(T.timer, t1 + 3000000 - drift_us(3000, 0));
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 1);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_RELEASING);
    expect_starts(0, RELEASE_SHA);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ev = last_ev(REDLOCK_EV_RELEASED);
    CHECK(ev && ev->status == REDLOCK_OK && ev->votes == 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    /* a failing acquire: 3 attempts, then IDLE */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    num_to(0, "EVAL", 0);
    CHECK_EQ(T.timer, T.now + 100000);
    run_until_sent(5);
    nil_to(0, "SET"); num_to(0, "EVAL", 0);
    run_until_sent(7);
    nil_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev && ev->status == REDLOCK_ERR_LOCKED && ev->attempt == 3);
    num_to(0, "EVAL", 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    /* held, then expires */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    t0 = T.now;
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(t0 + 1000000 - drift_us(1000, 0) - 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    ev = last_ev(REDLOCK_EV_LOST);
    CHECK(ev && ev->status == REDLOCK_ERR_EXPIRED);
    expect_starts(0, "EVAL if redis.call('get'");
    num_to(0, "EVAL", 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);  /* lost, cleaned up: can start again */
    expect_starts(0, "SET res ");
    CHECK_EQ(T.res.n, 0);
    teardown();
}

/* Proves: after redlock_client_deinit the timer is cancelled, every lock call answers DETACHED or a safe default, and transport input to the dead client does nothing. */
static void test_detached_after_client_deinit(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_reply r;
    int qn, evn;
    base_config(&cfg, 3);
    cfg.mode[1] = REDLOCK_MODE_LEGACY;
    base_opts(&o, 1000, 1);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(1, "SETNX", 1);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_LEGACY);
    CHECK(T.timer != REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    qn = T.qn;
    evn = T.evn;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 500), REDLOCK_ERR_DETACHED);
    reads_detached(&L);
    redlock_lock_deinit(&L);
    redlock_lock_deinit(&L);
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS; r.str = "OK"; r.len = 2;
    redlock_on_reply(&C, T.q[2].tag, &r);
    fail_to(2, "SET", REDLOCK_ERR_TRANSPORT);
    T.now += 10000000;
    redlock_on_timer(&C);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(T.qn, qn);
    CHECK_EQ(T.evn, evn);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    redlock_client_deinit(&C);            /* twice: harmless */
    /* the same memory initialised again works */
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

/* Proves: lock_deinit detaches just that lock: DETACHED / defaults, its replies ignored, the client's other locks and timer unaffected. */
static void test_detached_after_lock_deinit(void) {
    redlock_lock_opts o;
    redlock_lock L2;
    setup_n(1, 0, 1000);
    base_opts(&o, 2000, 0);
    o.key = "two";
    CHECK_EQ(redlock_lock_init(&L2, &C, &o), REDLOCK_OK);
    redlock_acquire(&L);
    redlock_acquire(&L2);
    ok_to(0, "SET");
    ok_to(0, "SET");
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&L));
    redlock_release(&L);
    redlock_lock_deinit(&L);
    CHECK_EQ(T.timer, redlock_lock_valid_until(&L2));
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    CHECK_STR(redlock_lock_token(&L), "");
    num_to(0, "EVALSHA", 1);              /* the release's answer: ignored */
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(redlock_lock_state(&L2), REDLOCK_STATE_HELD);
    redlock_lock_deinit(&L2);
    CHECK_EQ(T.timer, REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: a zero-filled lock that was never initialised is DETACHED everywhere and never touched; NULL pointers give INVALID or safe defaults. */
static void test_null_and_zeroed_handles(void) {
    redlock_lock z;
    redlock_client zc;
    redlock_lock_opts o;
    memset(&z, 0, sizeof z);
    memset(&zc, 0, sizeof zc);
    CHECK_EQ(redlock_acquire(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_release(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_extend(&z, 0), REDLOCK_ERR_DETACHED);
    reads_detached(&z);
    redlock_lock_deinit(&z);
    /* a zero-filled client */
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&z, &zc, &o), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_next_deadline(&zc), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(&zc, 0), REDLOCK_MODE_AUTO);
    redlock_on_timer(&zc);
    redlock_on_reply(&zc, 1 << 8, NULL);
    redlock_on_error(&zc, 1 << 8, REDLOCK_ERR_TRANSPORT);
    redlock_client_deinit(&zc);
    /* NULL everywhere */
    CHECK_EQ(redlock_acquire(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_release(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_extend(NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(NULL, NULL, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_state(NULL), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_lock_valid_until(NULL), 0);
    CHECK_EQ(redlock_lock_lost_reason(NULL), 0);
    CHECK_EQ(redlock_lock_pending(NULL), 0);
    CHECK_STR(redlock_lock_token(NULL), "");
    CHECK_EQ(redlock_next_deadline(NULL), REDLOCK_NO_DEADLINE);
    CHECK_EQ(redlock_node_mode(NULL, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(redlock_client_init(NULL, NULL, NULL, NULL), REDLOCK_ERR_INVALID);
    redlock_lock_deinit(NULL);
    redlock_client_deinit(NULL);
    redlock_config_init(NULL);
    redlock_on_timer(NULL);
    redlock_on_reply(NULL, 0, NULL);
    redlock_on_error(NULL, 0, 0);
    /* node_mode out of range, and as configured */
    {
        redlock_config cfg;
        redlock_lock_opts lo;
        volatile int far_node = 200;      /* volatile: gcc cannot see the range check */
        base_config(&cfg, 3);
        cfg.mode[0] = REDLOCK_MODE_MODERN;
        cfg.mode[2] = REDLOCK_MODE_LEGACY;
        cfg.mode[3] = REDLOCK_MODE_LEGACY;   /* beyond node_count: not a node */
        base_opts(&lo, 1000, 0);
        setup_with(&cfg, &lo);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_MODERN);
        CHECK_EQ(redlock_node_mode(&C, 1), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, 2), REDLOCK_MODE_LEGACY);
        CHECK_EQ(redlock_node_mode(&C, 3), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, -1), REDLOCK_MODE_AUTO);
        CHECK_EQ(redlock_node_mode(&C, far_node), REDLOCK_MODE_AUTO);
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 3);                /* node 3 gets nothing */
        expect_starts(2, "SETNX res ");
        CHECK(starts(0, "SET res ") && starts(1, "SET res "));
        teardown();
    }
}


/* Proves: redlock_tag_node reads the low byte, whatever the other bits. */
static void test_tag_node_odd_tags(void) {
    CHECK_EQ(redlock_tag_node(0), 0);
    CHECK_EQ(redlock_tag_node(1), 1);
    CHECK_EQ(redlock_tag_node(0xFF), 255);
    CHECK_EQ(redlock_tag_node(0x100), 0);
    CHECK_EQ(redlock_tag_node(~(redlock_tag)0), 255);
    CHECK_EQ(redlock_tag_node(((redlock_tag)1 << 63) | 7), 7);
    CHECK_EQ(redlock_tag_node(((redlock_tag)0xFFFFFFFF << 32) | ((redlock_tag)0xFFFFFF << 8) | 15), 15);
}

/* Proves: a lock deinitialised inside send (the undo, or the cleanup after LOST) gets no further on_result. */
static void test_deinit_inside_send_no_more_results(void) {
    setup_no_retry(1, 0, 1000);
    T.on_send = deinit_L_at_eval_any;
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(T.qn, 2);                    /* the undo went out ... */
    CHECK_EQ(T.res.n, 0);                 /* ... and nothing was reported after deinit */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
    setup_held(1, 1000);
    T.on_send = deinit_L_at_eval_any;
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.res.n, 1);                 /* no LOST after deinit */
    CHECK_EQ(count_ev(REDLOCK_EV_LOST), 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
    /* deinit in the EXTEND answer of a lock that ran out: no LOST after it */
    setup_held(1, 1000);
    T.now = redlock_lock_valid_until(&L) - 10;
    T.on_result = deinit_at_extend;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    teardown();
}

/* Proves: acquire() called in the EXTEND answer of a lock that ran out starts a new attempt once the cleanup is done. */
static void test_acquire_in_failed_extend_result(void) {
    int q;
    setup_held(1, 1000);
    T.now = redlock_lock_valid_until(&L) - 10;
    T.on_result = acquire_after_failed_extend;
    redlock_extend(&L, 0);
    advance_to(T.now + 10);
    CHECK_EQ(T.rc, REDLOCK_OK);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    q = T.qn;
    CHECK(starts(q - 1, "EVAL if redis.call('get'"));   /* the cleanup, old token */
    num_to(0, "EVAL", 0);
    CHECK_EQ(T.qn, q + 1);
    CHECK(starts(q, "SET res "));
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a lock deinitialised (and its memory reused) inside the CANCELLED
   result of its acquire is never touched again. */
static void scribble_on_cancel(redlock_lock *lk, const redlock_result *r) {
    t_result(lk, r);
    if (r->status == REDLOCK_ERR_CANCELLED) {
        redlock_lock_deinit(lk);
        memset(lk, 0xAA, sizeof *lk);
    }
}
static void test_deinit_in_cancelled_result(void) {
    int sent;
    setup_n(3, 0, 1000);
    reinit_L(0, scribble_on_cancel);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CANCELLED);
    sent = T.qn;
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1); /* the release's answers: ignored now */
    advance_to(T.now + 1000000);
    CHECK_EQ(T.qn, sent);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
    end_with_L_freed();
}

/* Proves: a lock deinitialised (and its memory scribbled over) inside a
   result callback is never written again: after a failed acquire, after
   a LOST, and after the EXTEND answer that comes before a LOST. */
static redlock_op scribble_op;
static void scribble_on_op(redlock_lock *lk, const redlock_result *r) {
    t_result(lk, r);
    if (r->op == scribble_op) {
        redlock_lock_deinit(lk);
        memset(lk, 0xAA, sizeof *lk);
    }
}
static int all_bytes(const void *p, size_t n, unsigned char v) {
    const unsigned char *b = (const unsigned char *)p;
    while (n--) if (*b++ != v) return 0;
    return 1;
}
static void test_deinit_in_result_never_written_again(void) {
    int pass;
    for (pass = 0; pass < 3; pass++) {
        setup_n(1, 0, 1000);
        reinit_L(-1, scribble_on_op);
        scribble_op = pass == 0 ? REDLOCK_OP_ACQUIRE : pass == 1 ? REDLOCK_OP_LOST : REDLOCK_OP_EXTEND;
        redlock_acquire(&L);
        if (pass == 0) {
            nil_to(0, "SET");                /* held elsewhere: the acquire fails */
        } else {
            ok_to(0, "SET");
            if (pass == 1) advance_to(redlock_lock_valid_until(&L));
            else { redlock_extend(&L, 0); num_to(0, "EVALSHA", 0); } /* the key is gone: EXTEND, then LOST */
        }
        CHECK_EQ(T.res.n, 1 + (pass > 0));
        CHECK(all_bytes(&L, sizeof L, 0xAA));
        nothing_more_sent(2000000);
        CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE);
        end_with_L_freed();
    }
}

/* Proves: a lock deinitialised inside send while its LOST cleanup goes out
   is never written again, and its LOST result is not reported. */
static void test_deinit_in_cleanup_send(void) {
    setup_held(1, 1000);
    T.on_send = free_L_at_eval;
    advance_to(redlock_lock_valid_until(&L));
    CHECK(all_bytes(&L, sizeof L, 0xAA));
    CHECK_EQ(T.res.n, 1);
    nothing_more_sent(2000000);
    end_with_L_freed();
}

/* Proves: the same when the lock is deinitialised inside the send of the
   undo of a failed acquire: no result, nothing written, nothing sent. */
static void test_deinit_in_undo_send(void) {
    setup_n(1, 0, 1000);
    reinit_L(-1, t_result);
    redlock_acquire(&L);
    T.on_send = free_L_at_eval;
    nil_to(0, "SET");
    CHECK(all_bytes(&L, sizeof L, 0xAA));
    CHECK_EQ(T.res.n, 0);
    nothing_more_sent(2000000);
    end_with_L_freed();
}

/* Proves: a lock whose validity ran out unnoticed is reported LOST when the
   next call comes, after its leftover keys are deleted; if the transport
   deinitialises the lock while sending that clean-up, the call returns
   DETACHED, reports nothing and sends nothing more. */
static void test_settle_deinit_in_cleanup_send(void) {
    int q0;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    q0 = T.qn;
    T.now = redlock_lock_valid_until(&L) + 1;
    T.on_send = deinit_L_at_eval;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(T.qn, q0 + 1);                       /* the first clean-up command only */
    expect_starts(0, "EVAL ");
    CHECK_EQ(T.res.n, 1);                         /* deinitialised: no LOST after that */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    redlock_client_deinit(&C);
    /* the same with a synchronous transport: the clean-up is over before
       LOST is reported, LOST's callback acquires again, and the send of
       that acquire's SET deinitialises the lock */
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    q0 = T.qn;
    T.now = redlock_lock_valid_until(&L) + 1;
    T.sync = sync_ok;
    T.on_result = acquire_when_lost;
    T.on_send = deinit_L_at_set;
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(T.rc, REDLOCK_OK);
    CHECK_EQ(T.qn, q0 + 2);                       /* the clean-up, then the SET */
    CHECK(starts(q0, "EVAL ") && starts(q0 + 1, "SET "));
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.n, 2);
    redlock_client_deinit(&C);
}

/* Proves: the queries and calls of the newer features on NULL and on a
   handle not initialised (zero-filled, or deinitialised) answer as the
   older ones do: INVALID for NULL, DETACHED for a handle, and the empty
   value of each query (DEFAULT access, "" owner and key, fence 0). */
static void test_null_handles_newer_calls(void) {
    redlock_lock z;
    size_t len = 99;
    memset(&z, 0, sizeof z);
    CHECK_EQ(redlock_lock_access(NULL), REDLOCK_ACCESS_DEFAULT);
    CHECK_STR(redlock_lock_owner(NULL), "");
    CHECK_STR(redlock_lock_key(NULL, &len), "");
    CHECK_EQ(len, 0);
    CHECK_STR(redlock_lock_key(NULL, NULL), "");
    CHECK_EQ(redlock_lock_fence(NULL), 0);
    CHECK_EQ(redlock_lock_remaining_us(NULL), 0);
    CHECK_EQ(redlock_lock_followup(NULL), 0);
    CHECK_EQ(redlock_lock_waiting(NULL), 0);
    CHECK_EQ(redlock_lock_wake(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(NULL, ADOPTED, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_upgrade(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_downgrade(NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_access(&z), REDLOCK_ACCESS_DEFAULT);
    CHECK_STR(redlock_lock_owner(&z), "");
    CHECK_EQ(redlock_lock_wake(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_upgrade(&z), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_downgrade(&z), REDLOCK_ERR_DETACHED);
    /* deinitialised: what the handle's memory still says does not count */
    setup_rw(1, REDLOCK_ACCESS_SHARED);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_SHARED);
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_DEFAULT);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_downgrade(&L), REDLOCK_ERR_DETACHED);
    redlock_client_deinit(&C);
    setup_reentrant(1, "svc-z");
    CHECK_STR(redlock_lock_owner(&L), "svc-z");
    redlock_lock_deinit(&L);
    CHECK_STR(redlock_lock_owner(&L), "");
    redlock_client_deinit(&C);
}

static void run_handles(int argc, char **argv) {
    RUN_T(test_api_misuse);
    RUN_T(test_callbacks_reenter);
    RUN_T(test_call_after_lost_freed);
    RUN_T(test_defect3_rollback_sent_before_on_result_deinit);
    RUN_T(test_defect3_reacquire_waits_for_rollback);
    RUN_T(test_defect3_cleanup_sent_before_lost_deinit);
    RUN_T(test_defect8_lock_init_twice);
    RUN_T(test_defect8_reinit_in_on_result);
    RUN_T(test_no_callback_lock_renews);
    RUN_T(test_no_callback_lock_ops);
    RUN_T(test_detached_after_client_deinit);
    RUN_T(test_detached_after_lock_deinit);
    RUN_T(test_null_and_zeroed_handles);
    RUN_T(test_null_handles_newer_calls);
    RUN_T(test_tag_node_odd_tags);
    RUN_T(test_deinit_inside_send_no_more_results);
    RUN_T(test_acquire_in_failed_extend_result);
    RUN_T(test_deinit_in_cancelled_result);
    RUN_T(test_deinit_in_result_never_written_again);
    RUN_T(test_deinit_in_cleanup_send);
    RUN_T(test_deinit_in_undo_send);
    RUN_T(test_settle_deinit_in_cleanup_send);
}
