/* noscript.c - nodes without scripting (NOPERM, NOSCRIPT denied): the
   GET-then-act fallback and the per-node bounds it acts within. */

static void test_auto_noscript(void) {
    char tok[64];
    setup_held(1, 1000);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM User u has no permissions to run the 'evalsha' command");
    expect_sent(0, "GET res");
    strcpy(tok, redlock_lock_token(&L));
    str_to(0, "GET", tok);
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO); /* SET NX PX still used */
    /* extend without scripts: GET, PEXPIRE */
    redlock_acquire(&L);
    expect_starts(0, "SET res");
    ok_to(0, "SET");
    strcpy(tok, redlock_lock_token(&L));
    redlock_extend(&L, 0);
    expect_sent(0, "GET res");
    str_to(0, "GET", tok);
    expect_sent(0, "PEXPIRE res 1000");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
}

/* Proves: on a node without scripts, a longer extend moves the node's bound: a release after the old validity but before the new one still DELetes (GET, DEL). */
static void test_noscript_release_after_lengthening_extend(void) {
    int64_t t0, t1;
    setup_held(1, 1000);
    t0 = T.now;
    T.now = t0 + 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    err_to(0, "EVALSHA", "ERR unknown command 'evalsha'");
    expect_sent(0, "GET res");
    str_to(0, "GET", redlock_lock_token(&L));
    expect_sent(0, "PEXPIRE res 5000");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 5000000 - drift_us(5000, 0));
    CHECK_EQ(release_at(t0 + 2000000, 0), 1);
    teardown();
    /* the same with the node known to have no scripts before the extend */
    setup_noscript_held(1000);
    t0 = T.now;
    T.now = t0 + 100000;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    expect_sent(0, "GET res");
    str_to(0, "GET", redlock_lock_token(&L));
    expect_sent(0, "PEXPIRE res 5000");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(release_at(t0 + 4000000, 0), 1);
    teardown();
}

/* Proves: on a node without scripts, a shortening extend cuts the node's bound when its PEXPIRE goes out (answered or not): a release within node_timeout + drift of the new end leaves the key (KEY_LEFT, no DEL); one microsecond earlier it DELetes. */
static void test_noscript_release_after_shortening_extend(void) {
    int pass;
    for (pass = 0; pass < 4; pass++) {   /* PEXPIRE answered / unanswered; at the limit / 1 µs before */
        int64_t t1, bound, limit = 50000 + drift_us(10000, 0);
        setup_noscript_held(10000);
        T.now += 100000;
        t1 = T.now;
        CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
        bound = t1 + 1000000 - drift_us(1000, 0);
        CHECK_EQ(redlock_lock_valid_until(&L), bound);      /* cut at once */
        expect_sent(0, "GET res");
        str_to(0, "GET", redlock_lock_token(&L));
        expect_sent(0, "PEXPIRE res 1000");
        if (pass < 2) {
            num_to(0, "PEXPIRE", 1);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        } else {
            advance_to(t1 + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
        }
        CHECK_EQ(redlock_lock_valid_until(&L), bound);
        CHECK_EQ(release_at(bound - limit - (pass % 2), 0), pass % 2);
        teardown();
    }
}

/* Proves: on a node without scripts an extend's GET is judged by the node's bound before the extend: an unanswered longer extend does not move it (release near the old end leaves the key), and a very short extend (100 ms) still goes through (GET, PEXPIRE 100). */
static void test_noscript_bound_before_pexpire(void) {
    int64_t t0, t1;
    const redlock_event *ev;
    setup_noscript_held(1000);
    t0 = T.now;
    T.now = t0 + 100000;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    expect_sent(0, "GET res");
    advance_to(t0 + 150000);              /* never answered */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 1000000 - drift_us(1000, 0));
    CHECK_EQ(release_at(t0 + 1000000 - drift_us(1000, 0) - 50000 - drift_us(1000, 0), 0), 0);
    teardown();
    setup_noscript_held(10000);
    T.now += 100000;
    t1 = T.now;
    CHECK_EQ(redlock_extend(&L, 100), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t1 + 100000 - drift_us(100, 0));
    str_to(0, "GET", redlock_lock_token(&L));
    expect_sent(0, "PEXPIRE res 100");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->validity_us == t1 + 100000 - drift_us(100, 0) - T.now);
    teardown();
}

/* Proves: on a node without scripts (modern values) a GET showing another 32-character token is not ours: no DEL, and extend sees it as STOLEN. */
static void test_noscript_other_token_not_ours(void) {
    setup_noscript_held(1000);
    redlock_release(&L);
    str_to(0, "GET", OTHER_TOKEN);
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
    setup_noscript_held(1000);
    redlock_extend(&L, 0);
    str_to(0, "GET", OTHER_TOKEN);
    CHECK_EQ(count_cmd(0, "PEXPIRE"), 1);       /* only make_noscript's */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
    teardown();
}

/* Answers node 0's EVALSHA with NOPERM: that node turns to GET-then-act,
   and sends the GET, whose index is returned. */
static int noscript_get(void) {
    err_to(0, "EVALSHA", "NOPERM no permissions to run the 'evalsha' command");
    expect_starts(0, "GET res");
    return T.qn - 1;
}

/* Proves: on a node without scripts, an extend's PEXPIRE answering 0 (the
   key expired between GET and PEXPIRE) is a plain no, like the script's 0,
   not a malformed reply. */
static void test_noscript_pexpire_zero(void) {
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
    noscript_get();
    str_to(0, "GET", redlock_lock_token(&L));
    CHECK(starts(T.qn - 1, "PEXPIRE res 2000") && T.q[T.qn - 1].node == 0);
    num_to(0, "PEXPIRE", 0);
    CHECK_EQ(vote_status(0), 0);
    CHECK_EQ(last_ev(REDLOCK_EV_VOTE)->vote, 0);
    num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
}

/* Proves: a key whose life is more than half an hour (kept in ms) is still
   known to last that long: the release's check-then-act deletes it. */
static void test_noscript_long_ttl_release(void) {
    setup_n(1, 0, 7200000);                       /* two hours */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    T.now += 600000000;                           /* ten minutes later */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    noscript_get();
    str_to(0, "GET", redlock_lock_token(&L));
    expect_starts(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: a node whose key died more than half an hour ago (an hour here:
   its extends failed while the others renewed) stays dead: when its GET
   later shows our token (a stale reading), nothing is acted on there. */
static void test_noscript_long_dead_node(void) {
    const int64_t ttl = 3600000, minute = 60000000;
    int64_t t0;
    int round, k;
    setup_n(3, 0, ttl);                           /* one hour */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    t0 = T.now;
    for (round = 1; round <= 5; round++) {
        int first = T.qn;
        T.now = t0 + 20 * (round < 5 ? round : 6) * minute;
        CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
        for (k = first; k < first + 3; k++) {
            if (T.q[k].node != 0) { num(k, 1); continue; }
            if (round == 1) noscript_get();
            else expect_starts(0, "GET res");
            if (round < 5) { err_to(0, "GET", "ERR busy"); continue; }
            str_to(0, "GET", redlock_lock_token(&L));
            CHECK(!starts(T.qn - 1, "PEXPIRE"));
        }
        CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    }
    teardown();
}

/* Proves: the bound an acquire leaves on a node is ttl less the drift: a
   no-script release coming within node timeout + drift of it does not act
   on that node (its key may be gone and another client's there). */
static void test_noscript_acquire_bound(void) {
    int g;
    int64_t t0;
    setup_n(1, 0, 1000);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    T.now = t0 + 1000000 - 50000 - drift_us(1000, 0); /* the bound less the node timeout: too close */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    g = noscript_get();
    str_to(0, "GET", redlock_lock_token(&L));
    CHECK_EQ(T.qn, g + 1);                        /* no DEL */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
    setup_n(1, 0, 1000);                          /* earlier than the bound less timeout and drift: it deletes */
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    T.now = t0 + 1000000 - 50000 - 2 * drift_us(1000, 0) - 1;
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    noscript_get();
    str_to(0, "GET", redlock_lock_token(&L));
    expect_starts(0, "DEL res");
    teardown();
}

static void run_noscript(int argc, char **argv) {
    RUN_T(test_auto_noscript);
    RUN_T(test_noscript_release_after_lengthening_extend);
    RUN_T(test_noscript_release_after_shortening_extend);
    RUN_T(test_noscript_bound_before_pexpire);
    RUN_T(test_noscript_other_token_not_ours);
    RUN_T(test_noscript_pexpire_zero);
    RUN_T(test_noscript_long_ttl_release);
    RUN_T(test_noscript_long_dead_node);
    RUN_T(test_noscript_acquire_bound);
}
