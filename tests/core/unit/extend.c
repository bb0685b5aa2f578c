/* extend.c - extending and the watchdog: extend's new validity (shorter
   too), renewals on their cadence, hold caps, the lock lost by its
   validity or by a lost quorum, and the timer that reports it. */

/* Proves: a user's extend that finds the lock gone is answered before the
   LOST result, with why and with no votes (no node extended it). */
static void test_extend_result_when_lost(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 0); /* gone on a majority */
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_QUORUM_LOST);
    CHECK_EQ(T.res.r[1].votes, 0);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].votes, 0);
    teardown();
}

static void test_extend(void) {
    int64_t t0;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    T.now += 400000;
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    expect_starts(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res");
    CHECK(strstr(T.q[3].cmd, " 2000") != NULL);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 2000000 - 22000);
    /* stolen: another token on two nodes */
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", -1); num_to(1, "EVALSHA", -1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);   /* can try again */
    teardown();
    /* key gone on a majority */
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 0); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 0);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    teardown();
    /* inconclusive: still held */
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    redlock_extend(&L, 0);
    advance_to(T.now + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

static void test_watchdog_renews(void) {
    int64_t t0, i;
    setup_n(1, 1, 900);                   /* renew every 300 ms */
    t0 = T.now;
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(T.timer, t0 + 300000);
    for (i = 0; i < 10; i++) {
        advance_to(T.timer);
        expect_starts(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394");
        T.now += 1000;
        num_to(0, "EVALSHA", 1);
    }
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 10);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK(T.now - t0 > 3 * 900000);       /* held for over three TTLs */
    CHECK_EQ(T.res.n, 1);                 /* renewals are silent */
    teardown();
}

static void test_watchdog_loses_quorum(void) {
    int64_t until;
    setup_n(3, 1, 900);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    until = redlock_lock_valid_until(&L);
    /* renewals time out again and again: lost with TRANSPORT, not after validity */
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && T.now < until + 1000000) {
        CHECK(T.timer <= until);
        advance_to(T.timer);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(T.now, until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_TRANSPORT);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 2);
    teardown();
}

static void test_expiry_without_watchdog(void) {
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(redlock_lock_valid_until(&L) - 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(T.now + 1);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    expect_starts(0, "EVAL if redis.call('get'");         /* best-effort cleanup, one command */
    teardown();
}

/* The state by the clock: a held lock past its validity reads LOST (with
   its reason) before any timer call; the next call on it reports the LOST
   first and then acts on a lost lock. */
static void test_state_by_clock(void) {
    int64_t until;
    setup_n(1, 0, 500);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    until = redlock_lock_valid_until(&L);
    T.now = until - 250;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_remaining_us(&L), 250);
    CHECK_EQ(redlock_lock_lost_reason(&L), 0);
    T.now = until; /* no timer call */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    CHECK_EQ(redlock_lock_valid_until(&L), until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), 1); /* not reported yet */
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED); /* reported by the call */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();

    /* acquire on a lock that ran out: LOST first, then a new attempt */
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok_to(0, "SET");
    T.now = redlock_lock_valid_until(&L) + 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    teardown();

    /* release likewise: the lock is already lost */
    setup_n(1, 0, 500);
    redlock_acquire(&L);
    ok_to(0, "SET");
    T.now = redlock_lock_valid_until(&L) + 1;
    CHECK_EQ(redlock_release(&L), REDLOCK_ERR_NOT_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    teardown();
    CHECK_EQ(redlock_lock_remaining_us(NULL), 0);
}

static void test_hold_limit(void) {
    redlock_lock_opts o;
    setup_n(1, 1, 900);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 900;
    o.watchdog = 1;
    o.max_extensions = 2;
    o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(T.timer); num_to(0, "EVALSHA", 1);
    advance_to(T.timer); num_to(0, "EVALSHA", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD) advance_to(T.timer);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
    teardown();
}

/* Proves: an extend script's 0 ("the key is not ours") is a node's no,
   with status 0, not a malformed reply. */
static void test_extend_zero_is_a_no(void) {
    int k;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    for (k = 0; k < 3; k++) ok_to(k, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 0);
    CHECK_EQ(vote_status(4 - 3), 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->vote, 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->held_by_other, 0);
    teardown();
}

/* Proves: extend(1) on a 10 s lock leaves no validity: EXTEND answered EXPIRED, then LOST (EXPIRED), at once. */
static void test_defect1_shortening_extend(void) {
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    T.now += 1000000;
    CHECK_EQ(redlock_extend(&L, 1), REDLOCK_OK);
    CHECK(starts(1, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ") && ends(1, " 1"));
    CHECK_EQ(T.res.n, 3);                 /* before extend() returned */
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_EXTEND);
    CHECK_EQ(T.res.r[1].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    num_to(0, "EVALSHA", 1);              /* the extend's late OK changes nothing */
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();
}

/* Proves: a shortening extend that gets NO_QUORUM still leaves validity <= start + ttl - drift, and the lock is LOST (EXPIRED) then. */
static void test_defect1_shortening_extend_no_quorum(void) {
    int64_t t1, bound;
    setup_n(3, 0, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    T.now += 1000000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    bound = t1 + 2000000 - drift_us(2000, 0);
    num_to(0, "EVALSHA", 1);              /* one node took PEXPIRE 2000; the others never answer */
    advance_to(t1 + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK(redlock_lock_valid_until(&L) <= bound);
    CHECK(redlock_lock_valid_until(&L) > T.now);
    advance_to(T.timer);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(T.now <= bound);
    teardown();
}

/* Proves: a watchdog renewal (ttl 10 s) after a user extend to 60 s cuts validity to renewal start + 10 s - drift, answered or not. */
static void test_defect1_watchdog_renewal_after_long_extend(void) {
    int64_t rs, bound;
    int k, guard = 100000;
    setup_n(1, 1, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    T.now += 1000000;
    CHECK_EQ(redlock_extend(&L, 60000), REDLOCK_OK);
    CHECK(ends(1, " 60000"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + 60000000 - drift_us(60000, 0));
    advance_to(T.timer);                  /* the watchdog's renewal */
    rs = T.now;
    k = T.qn - 1;
    CHECK(starts(k, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res ") && ends(k, " 10000"));
    bound = rs + 10000000 - drift_us(10000, 0);
    CHECK(redlock_lock_valid_until(&L) <= bound);
    /* no renewal is ever answered: lost with TRANSPORT, by the renewal's bound */
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && guard-- > 0) advance_to(T.timer);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_TRANSPORT);
    CHECK(T.now <= bound);
    CHECK(count_ev(REDLOCK_EV_RENEW_FAILED) >= 1);
    teardown();
}

/* Proves: a shortening extend cuts validity as soon as it is sent; a lengthening one only once answered. */
static void test_defect1_inflight_extend_shortens(void) {
    int64_t before, t1, t2;
    setup_n(1, 0, 10000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    before = redlock_lock_valid_until(&L);
    T.now += 1000000;
    t1 = T.now;
    redlock_extend(&L, 20000);
    CHECK_EQ(redlock_lock_valid_until(&L), before);    /* longer: not yet */
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 20000000 - drift_us(20000, 0));
    T.now += 1000000;
    t2 = T.now;
    redlock_extend(&L, 5000);
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(redlock_lock_valid_until(&L), t2 + 5000000 - drift_us(5000, 0)); /* no reply yet */
    CHECK_EQ(T.res.n, 2);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t2 + 5000000 - drift_us(5000, 0));
    teardown();
}

/* Proves: a user extend that fails (NO_QUORUM) on a lock without watchdog ends as EXPIRED, not TRANSPORT. */
static void test_lost_reason_after_failed_user_extend(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    redlock_extend(&L, 0);
    advance_to(T.now + 50000);            /* nobody answers the extend */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Holds L (1 node, watchdog) answering each renewal `lag` µs after it went
   out, until it is no longer held. Returns the renewals sent. */
static int hold_until_lost(int64_t lag, int64_t *lost_at) {
    int renewals = 0, guard = 1000;
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && guard-- > 0) {
        int q = T.qn;
        advance_to(T.timer);
        if (T.qn > q && starts(T.qn - 1, EXTEND_SHA)) {
            renewals++;
            T.now += lag;
            num(T.qn - 1, 1);
        }
    }
    *lost_at = T.now;
    return renewals;
}

/* Proves: max_hold_ms / max_extensions stop renewals after exactly the expected count (boundaries: a multiple of renew_every, held time counted from the acquire's answer); the lock is then LOST with HOLD_LIMIT exactly at its validity end. */
static void test_hold_caps_exact(void) {
    static const struct { int64_t ttl, every, hold; int ext; int64_t acq_lag; int renewals; } c[] = {
        {900, 0, 1000, 0, 0, 3},
        {900, 0, 900, 0, 0, 2},          /* a multiple of renew_every: the cap is reached at that renewal */
        {900, 0, 901, 0, 0, 3},
        {900, 0, 899, 0, 0, 2},
        {900, 0, 300, 0, 0, 0},
        {900, 0, 301, 0, 0, 1},
        {1000, 250, 1000, 0, 0, 3},
        {1000, 250, 1001, 0, 0, 4},
        {900, 0, 890, 0, 10000, 2},      /* answered 10 ms late: held 890 ms at the third renewal */
        {900, 0, 891, 0, 10000, 3},
        {900, 0, 0, 1, 0, 1},
        {900, 0, 0, 3, 0, 3},
        {900, 0, 1000, 2, 0, 2},         /* the extension cap first */
        {900, 0, 600, 5, 0, 1},          /* the hold cap first */
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, lost_at, every = c[k].every ? c[k].every : c[k].ttl / 3, expect;
        int n;
        base_config(&cfg, 1);
        base_opts(&o, c[k].ttl, 1);
        o.renew_every_ms = c[k].every;
        o.max_hold_ms = c[k].hold;
        o.max_extensions = c[k].ext;
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        T.now += c[k].acq_lag;
        ok_to(0, "SET");
        n = hold_until_lost(0, &lost_at);
        if (n != c[k].renewals) printf("#   case %d: %d renewals\n", (int)k, n);
        CHECK_EQ(n, c[k].renewals);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), c[k].renewals);
        expect = t0 + c[k].renewals * every * 1000 + c[k].ttl * 1000 - drift_us(c[k].ttl, 0);
        CHECK_EQ(lost_at, expect);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
        CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_HOLD_LIMIT);
        CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
        ev = last_ev(REDLOCK_EV_LOST);
        CHECK(ev && ev->status == REDLOCK_ERR_HOLD_LIMIT);
        expect_starts(0, "EVAL if redis.call('get'");         /* cleanup */
        teardown();
    }
}

/* Proves: a failed (inconclusive) renewal does not count towards max_extensions; the cap counts successes only. */
static void test_hold_cap_counts_successes(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t lost_at;
    base_config(&cfg, 1);
    base_opts(&o, 900, 1);
    o.max_extensions = 2;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(T.timer);                  /* renewal 1: never answered */
    expect_starts(0, EXTEND_SHA);
    advance_to(T.now + 50000);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 1);
    CHECK_EQ(hold_until_lost(0, &lost_at), 2);   /* still two successful ones */
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_HOLD_LIMIT);
    teardown();
}

/* Proves: the watchdog renews exactly at acquire round start + renew_every (default ttl/3), then renew_every after each successful round's start, whatever the answer's delay; a failed renewal is retried after min(retry_delay, left/3). */
static void test_renewal_cadence_exact(void) {
    int big;
    for (big = 0; big < 2; big++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, r1, r2, r3, until, left;
        base_config(&cfg, 1);
        if (big) cfg.retry_delay_ms = 500;
        base_opts(&o, 1000, 1);           /* renew every 333 ms */
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        T.now += 4000;
        ok_to(0, "SET");
        CHECK_EQ(T.timer, t0 + 333000);
        advance_to(t0 + 332999);
        CHECK_EQ(T.qn, 1);
        advance_to(t0 + 333000);
        CHECK_EQ(T.qn, 2);
        CHECK(starts(1, EXTEND_SHA) && ends(1, " 1000"));
        r1 = T.now;
        T.now += 7000;
        num_to(0, "EVALSHA", 1);
        CHECK_EQ(redlock_lock_valid_until(&L), r1 + 1000000 - drift_us(1000, 0));
        CHECK_EQ(T.timer, r1 + 333000);
        advance_to(r1 + 333000);
        CHECK_EQ(T.qn, 3);
        r2 = T.now;
        until = redlock_lock_valid_until(&L);
        CHECK_EQ(until, r1 + 1000000 - drift_us(1000, 0));   /* same ttl: not cut */
        CHECK_EQ(T.timer, r2 + 50000);
        advance_to(r2 + 50000);           /* renewal 2 times out */
        ev = last_ev(REDLOCK_EV_RENEW_FAILED);
        CHECK(ev && ev->status == REDLOCK_ERR_TRANSPORT && ev->slack_us == until - r2);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        left = until - T.now;
        CHECK_EQ(T.timer, T.now + (big ? left / 3 : 100000));
        advance_to(T.timer);
        CHECK_EQ(T.qn, 4);
        r3 = T.now;
        advance_to(r3 + 50000);           /* and again */
        left = until - T.now;
        CHECK_EQ(T.timer, T.now + (left / 3 < (big ? 500000 : 100000) ? left / 3 : 100000));
        advance_to(T.timer);
        CHECK_EQ(T.qn, 5);
        num(4, 1);                        /* this one gets through */
        CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1000000 - drift_us(1000, 0));
        CHECK_EQ(T.timer, T.now + 333000);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
        CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 2);
        teardown();
    }
    /* a small ttl: renew_every = ttl/3 rounded down, 1 ms for ttl 5 */
    {
        redlock_lock_opts o;
        redlock_config cfg;
        int64_t t0;
        base_config(&cfg, 1);
        base_opts(&o, 5, 1);
        setup_with(&cfg, &o);
        t0 = T.now;
        redlock_acquire(&L);
        ok_to(0, "SET");
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(T.timer, t0 + 1000);
        teardown();
    }
}

/* Proves: a lock that expires after a user's extend succeeded reports
   LOST only: that extend was answered already. */
static void test_expiry_after_user_extend(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_extend(&L, 500), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.n, 2);
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(T.res.n, 3);
    CHECK_EQ(T.res.r[2].op, REDLOCK_OP_LOST);
    CHECK_EQ(T.res.r[2].status, REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Proves: results that leave the lock not held carry validity 0. */
static void test_validity_zero_unless_held(void) {
    int i;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    run_until_sent(4);
    redlock_release(&L);                     /* cancels the acquire */
    for (i = 0; i < T.res.n; i++)
        if (!(T.res.r[i].op == REDLOCK_OP_ACQUIRE && T.res.r[i].status == REDLOCK_OK)) CHECK_EQ(T.res.r[i].validity_us, 0);
    CHECK(T.res.n >= 3);
    teardown();
}

/* Proves: a timer that fires early (one-shot timers may) is armed again
   with the deadline that remains, even though it did not change. */
static void test_early_timer_rearmed(void) {
    int64_t d;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    d = T.timer;
    CHECK(d != REDLOCK_NO_DEADLINE);
    T.timer = 0;
    advance_to(d - 1000);
    CHECK_EQ(T.timer, d);
    T.timer = 0;
    redlock_on_timer(&C);                    /* spurious, at the same time */
    CHECK_EQ(T.timer, d);
    teardown();
}

static void run_extend(int argc, char **argv) {
    RUN_T(test_extend_result_when_lost);
    RUN_T(test_extend);
    RUN_T(test_watchdog_renews);
    RUN_T(test_watchdog_loses_quorum);
    RUN_T(test_expiry_without_watchdog);
    RUN_T(test_state_by_clock);
    RUN_T(test_hold_limit);
    RUN_T(test_defect1_shortening_extend);
    RUN_T(test_defect1_shortening_extend_no_quorum);
    RUN_T(test_defect1_watchdog_renewal_after_long_extend);
    RUN_T(test_defect1_inflight_extend_shortens);
    RUN_T(test_lost_reason_after_failed_user_extend);
    RUN_T(test_hold_caps_exact);
    RUN_T(test_hold_cap_counts_successes);
    RUN_T(test_renewal_cadence_exact);
    RUN_T(test_expiry_after_user_extend);
    RUN_T(test_early_timer_rearmed);
    RUN_T(test_validity_zero_unless_held);
    RUN_T(test_extend_zero_is_a_no);
}
