/* adopt.c - adopting a token acquired elsewhere (redlock_lock_adopt), and
   token labels. */

/* Proves: adopt refuses what it must, and changes nothing then. */
static void test_adopt_errors(void) {
    redlock_lock spare;
    memset(&spare, 0, sizeof spare);
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_lock_adopt(NULL, ADOPTED, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&spare, ADOPTED, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_adopt(&L, NULL, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "0011", 0), REDLOCK_ERR_INVALID);                      /* short */
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeeff0", 0), REDLOCK_ERR_INVALID); /* long */
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeefg", 0), REDLOCK_ERR_INVALID); /* not hex */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, -1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, ((int64_t)1 << 40) + 1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_EQ(T.qn, 0);
    redlock_acquire(&L);                                 /* acquiring: BUSY */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");   /* held: ALREADY_HELD */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_ALREADY_HELD);
    redlock_release(&L);                                 /* releasing: BUSY */
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);    /* released, node 2 still out: BUSY */
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK(redlock_lock_pending(&L));
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_ERR_BUSY);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899AABBCCDDEEFF", 0), REDLOCK_OK); /* either case */
    CHECK_STR(redlock_lock_token(&L), "00112233445566778899AABBCCDDEEFF");
    teardown();
}

/* Proves: opts.label is written before each token's random part, in SET,
   in the scripts and in a legacy value, and a value with it is ours (and
   another label's is not); a second acquire keeps the label with new
   digits; lock_init refuses a bad label; adopt takes a token whose label
   fits (none, or one no longer than the lock's own), and the next acquire
   has the lock's own label again. */
static void test_token_label(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_lock spare;
    char expect[512], first[REDLOCK_MAX_LABEL + REDLOCK_TOKEN_LEN + 1], other[128];
    static const char *const bad[] = {"a b", "tab\t", "caf\xc3\xa9",
                                      "0123456789012345678901234567890123456789012345678901234567890123x"};
    size_t k;
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.label = "web1:42:";
    setup_with(&cfg, &o);
    CHECK_STR(redlock_lock_token(&L), "");                  /* no token before the first acquire */
    redlock_acquire(&L);
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    snprintf(expect, sizeof expect, "SET res %s NX PX 1000", redlock_lock_token(&L));
    expect_sent(0, expect);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    strcpy(first, redlock_lock_token(&L));
    redlock_release(&L);
    CHECK(strstr(T.q[1].cmd, first) != NULL && starts(1, "EVALSHA "));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);                                     /* new digits, the same label */
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    CHECK(strcmp(first, redlock_lock_token(&L)) != 0);
    nil_to(0, "SET");
    /* adopt: no label, or a label that fits; a longer one does not */
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, "web1:4242:00112233445566778899aabbccddeeff", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "a b:00112233445566778899aabbccddeeff", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "web1:42:00112233445566778899aabbccddeef", 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_adopt(&L, "db7:9:00112233445566778899aabbccddeeff", 0), REDLOCK_OK);
    CHECK_STR(redlock_lock_token(&L), "db7:9:00112233445566778899aabbccddeeff");
    T.qn = 0;
    redlock_extend(&L, 2000);
    expect_sent(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res db7:9:00112233445566778899aabbccddeeff 2000");
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    redlock_acquire(&L);                                     /* the lock's own label again */
    CHECK(labelled(redlock_lock_token(&L), "web1:42:"));
    nil_to(0, "SET");
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, "00112233445566778899aabbccddeeff", 0), REDLOCK_OK); /* no label: fits */
    CHECK_STR(redlock_lock_token(&L), "00112233445566778899aabbccddeeff");
    /* refused labels; "" is none */
    memset(&spare, 0, sizeof spare);
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        o.label = bad[k];
        CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_ERR_INVALID);
    }
    o.label = "0123456789012345678901234567890123456789012345678901234567890123"; /* REDLOCK_MAX_LABEL */
    CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_OK);
    T.qn = 0;
    redlock_acquire(&spare);
    CHECK(labelled(redlock_lock_token(&spare), o.label));
    nil_to(0, "SET");
    redlock_lock_deinit(&spare);
    o.label = "";
    CHECK_EQ(redlock_lock_init(&spare, &C, &o), REDLOCK_OK);
    T.qn = 0;
    redlock_acquire(&spare);
    CHECK(labelled(redlock_lock_token(&spare), ""));
    nil_to(0, "SET");
    redlock_lock_deinit(&spare);
    teardown();
    /* legacy: "expiry:label+digits"; the same digits under another label are not ours */
    cfg.mode[0] = REDLOCK_MODE_LEGACY;
    o.label = "web1:42:";
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    snprintf(expect, sizeof expect, "SETNX res %s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    expect_sent(0, expect);
    num_to(0, "SETNX", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    snprintf(other, sizeof other, "%lld:web2:42:%s", (long long)T.wall + 1001, redlock_lock_token(&L) + 8);
    redlock_release(&L);
    expect_sent(0, "GET res");
    exact_to(0, "GET", REDLOCK_REPLY_STRING, other, strlen(other));
    CHECK_EQ(count_cmd(0, "DEL"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1);
    snprintf(other, sizeof other, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    redlock_release(&L);
    expect_sent(0, "GET res");
    exact_to(0, "GET", REDLOCK_REPLY_STRING, other, strlen(other));
    expect_starts(0, "DEL res");
    teardown();
}

/* Proves: an adopted token without a validity is HELD with nothing left to
   act on; release deletes it by that token; extend gives it a validity. */
static void test_adopt_unknown_validity(void) {
    int64_t t0;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    CHECK_EQ(T.qn, 0);                       /* nothing sent, no result */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_STR(redlock_lock_token(&L), ADOPTED);
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    CHECK_EQ(redlock_lock_valid_until(&L), 0);
    CHECK_EQ(redlock_next_deadline(&C), REDLOCK_NO_DEADLINE); /* no validity to run out */
    T.now += 3600 * 1000000LL;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_ALREADY_HELD);
    /* extend: the validity is the new ttl's, from the round's start */
    t0 = T.now;
    CHECK_EQ(redlock_extend(&L, 5000), REDLOCK_OK);
    expect_sent(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res 00112233445566778899aabbccddeeff 5000");
    T.now += 1000;
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", -1);                /* held by another there */
    CHECK_EQ(redlock_lock_remaining_us(&L), 0);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(T.res.r[0].validity_us, t0 + 5000000 - drift_us(5000, 0) - T.now);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 5000000 - drift_us(5000, 0));
    CHECK_EQ(redlock_lock_remaining_us(&L), t0 + 5000000 - drift_us(5000, 0) - T.now);
    {   /* the vote against says the node holds another token */
        int i, other = -1;
        for (i = 0; i < T.evn; i++)
            if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 1) other = T.ev[i].held_by_other;
        CHECK_EQ(other, 1);
        for (i = 0; i < T.evn; i++)
            if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 0) CHECK_EQ(T.ev[i].held_by_other, 0);
    }
    /* release by the adopted token */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    expect_sent(0, "EVALSHA d7e00109fcea7097a6337cb32a8802b6d9d91443 1 res 00112233445566778899aabbccddeeff 1");
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: the RENEWED event of an adopted token's extend says how much
   validity was left when the round started: none while it is unknown
   (adopted without one), the rest of the given one otherwise. */
static void test_adopt_renewed_slack(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 1);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->slack_us == 0);
    CHECK(ev && ev->node == -1 && ev->op == REDLOCK_OP_EXTEND && ev->votes == 1);
    teardown();
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 500);
    T.now += 100000;
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 1);
    ev = last_ev(REDLOCK_EV_RENEWED);
    CHECK(ev && ev->slack_us == 400000);
    teardown();
}

/* Proves: an adopted token whose extend reaches a quorum too late for the
   new ttl has no validity: EXPIRED, then LOST. And an inconclusive
   renewal of such a token retries after the retry delay, not at once. */
static void test_adopt_extend_late_and_retry(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 10);
    T.now += 9000;                           /* 10 ms - drift (2.1 ms) passed */
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 2);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_EXPIRED);
    CHECK_EQ(T.res.r[1].op, REDLOCK_OP_LOST);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    teardown();
    base_config(&cfg, 1);
    base_opts(&o, 1000, 1);
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);                       /* the watchdog renews at once */
    expect_starts(0, "EVALSHA e9a2f3813b737b2b7c48ab77e3b5b9a159cff394 1 res 00112233445566778899aabbccddeeff 1000");
    advance_to(T.now + 50000);               /* unanswered: node timeout */
    CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(T.timer, T.now + 100000);       /* again after the retry delay */
    advance_to(T.timer);
    CHECK_EQ(T.qn, 2);
    num(1, 1);
    CHECK_EQ(redlock_lock_remaining_us(&L), 1000000 - drift_us(1000, 0));
    teardown();
}

/* Proves: a validity given to adopt counts from the call: the lock reads
   LOST (EXPIRED) when it runs out, and the timer reports it. */
static void test_adopt_given_validity(void) {
    int64_t t0;
    setup_n(1, 0, 1000);
    t0 = T.now;
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 300), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 300000);
    CHECK_EQ(redlock_lock_remaining_us(&L), 300000);
    CHECK_EQ(T.timer, t0 + 300000);
    T.now = t0 + 300000;
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_LOST);
    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_EXPIRED);
    advance_to(T.now);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    /* LOST: adopt again is allowed once the cleanup is done */
    CHECK(redlock_lock_pending(&L));
    CHECK_EQ(redlock_lock_adopt(&L, OTHER_TOKEN, 0), REDLOCK_ERR_BUSY);
    num_to(0, "EVAL", 0);
    CHECK_EQ(redlock_lock_adopt(&L, OTHER_TOKEN, 0), REDLOCK_OK);
    CHECK_STR(redlock_lock_token(&L), OTHER_TOKEN);
    teardown();
}

/* Proves: on a node without scripts, an adopted token's modern value is
   acted on only after PTTL says it lives long enough; PTTL -2 is MISSING,
   a short PTTL leaves the key to expire, a malformed one is PROTOCOL. */
static void test_adopt_noscript_pttl(void) {
    static const char noperm[] = "NOPERM this user has no permissions to run the 'evalsha' command";
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    err_to(0, "EVALSHA", noperm);
    expect_sent(0, "PTTL res");
    num_to(0, "PTTL", 20000);
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* the node is known to refuse scripts now: PTTL comes first */
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    expect_sent(0, "PTTL res");
    num_to(0, "PTTL", 30);                   /* < node timeout + drift: let it expire */
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 6);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num_to(0, "PTTL", -2);                   /* no such key */
    CHECK_EQ(T.qn, 7);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    str_to(0, "PTTL", "12");                 /* not an integer */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num_to(0, "PTTL", -3);                   /* out of range */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    /* extend: PTTL, GET, PEXPIRE; -1 (no expiry) lives long enough */
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    expect_sent(0, "PTTL res");
    num_to(0, "PTTL", -1);
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    expect_sent(0, "PEXPIRE res 1000");
    num_to(0, "PEXPIRE", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    /* known from now on: the next release acts after GET alone */
    redlock_release(&L);
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    expect_sent(0, "DEL res");
    teardown();
}

/* Proves: a PTTL measured from when it was sent (the key lived that long
   from then), so a slow answer leaves less to act on. */
static void test_adopt_pttl_counts_from_send(void) {
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no scripts for you");
    T.now += 40000;                          /* PTTL answered 40 ms after it went out */
    num_to(0, "PTTL", 100);                  /* 100 - 40 - drift(1 ms + 2 ms) = 57 ms left > 50 + 3 */
    T.now += 5000;                           /* GET answered 5 ms later: 52 ms left, < 53 */
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 3);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
}

/* Proves: a legacy node needs no PTTL: the value's expiry says how long
   the adopted token's key lives; GETSET extends it, a near expiry is left. */
static void test_adopt_legacy(void) {
    setup_legacy(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    expect_sent(0, "GET res");
    str_to(0, "GET", legacy_value(T.wall + 5000, ADOPTED));
    expect_starts(0, "GETSET res ");
    CHECK(ends(1, ADOPTED));
    str_to(0, "GETSET", legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);                     /* known after the GETSET: not a takeover, acts */
    str_to(0, "GET", legacy_value(T.wall + 1000, ADOPTED));
    teardown();
    setup_legacy(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    expect_sent(0, "GET res");
    str_to(0, "GET", legacy_value(T.wall + 5000, ADOPTED));
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    str_to(0, "GET", legacy_value(T.wall + 100, ADOPTED)); /* 100 ms < 50 + drift 62 */
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    str_to(0, "GET", legacy_value(T.wall + 5000, OTHER_TOKEN));
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Proves: an adopted token in a legacy value on an AUTO node (a client that
   found the server too old acquired it) switches the node to legacy and
   is acted on by the value's expiry; a PTTL the server refuses leaves a
   modern value's life unknown, and such a key is left to expire. */
static void test_adopt_auto_legacy_value(void) {
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    err_to(0, "EVALSHA", "ERR unknown command 'EVALSHA'");
    expect_sent(0, "PTTL res");
    err_to(0, "PTTL", "ERR unknown command 'PTTL'");               /* 2.4 has no PTTL */
    expect_sent(0, "GET res");
    str_to(0, "GET", legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
    expect_starts(0, "GETSET res ");
    str_to(0, "GETSET", legacy_value(T.wall + 5000, ADOPTED));
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no scripts");
    err_to(0, "PTTL", "NOPERM no PTTL either");
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 3);                       /* life unknown: no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    /* MODERN: a legacy value is somebody else's */
    teardown();
    {
        redlock_config cfg;
        redlock_lock_opts o;
        base_config(&cfg, 1);
        cfg.mode[0] = REDLOCK_MODE_MODERN;
        base_opts(&o, 1000, 0);
        setup_with(&cfg, &o);
    }
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", -1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
    teardown();
}

/* Proves: an adopted token's life on a node without scripts is counted in
   the right units, to the microsecond, from when the PTTL was sent: a PTTL
   of 100 ms (less the drift of 100 ms: 97 ms) acts when the GET comes back
   less than 35 ms after the PTTL went out (more than a node timeout and
   the lock's drift, 62 ms, left) and leaves the key alone at 35 ms, and
   at PTTL 0; once the GET showed the token its life is known (no PTTL
   again); a legacy value's expiry (ms on the wall clock, less the lock's
   drift) likewise, at the millisecond where it tips, for two ttls (two
   drifts). */
static void test_adopt_life_units(void) {
    static const char noperm[] = "NOPERM this user has no permissions to run the 'evalsha' command";
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    T.now += 10000;           /* the PTTL goes out 10 ms into the round */
    err_to(0, "EVALSHA", noperm);
    expect_sent(0, "PTTL res");
    num_to(0, "PTTL", 100);
    expect_sent(0, "GET res");
    T.now += 34999;           /* 62.001 ms left: acts */
    str_to(0, "GET", ADOPTED);
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);      /* a node known without scripts: PTTL at once */
    expect_sent(0, "PTTL res");
    num_to(0, "PTTL", 100);
    T.now += 35000;           /* 62 ms left: not more than 50 ms + 12 ms */
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 6);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_release(&L);
    num_to(0, "PTTL", 0);     /* expiring now: nothing left to act on */
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 8);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 2);
    teardown();
    /* once a GET showed the token, its life is known: after an extend
       that found too little of it (lost), the cleanup reads GET alone */
    setup_n(1, 0, 1000);
    redlock_lock_adopt(&L, ADOPTED, 0);
    redlock_extend(&L, 0);
    err_to(0, "EVALSHA", noperm);
    num_to(0, "PTTL", 30);
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_QUORUM_LOST);
    expect_sent(0, "GET res");
    teardown();
    /* legacy, ttl 1000: drift 10 + 2 + 50 ms; acts when more than
       50 + 62 ms remain after the drift: 174 ms is not enough, 175 is */
    adopted_legacy_tips(0, 1000, 174);
    /* ttl 45: drift 0.45 + 2 + 50 ms, threshold 102.45 ms after it:
       154 ms is not enough, 155 is */
    adopted_legacy_tips(2, 45, 154);
}

/* Proves: adopt forgets what the handle knew of its previous token's key:
   after a hold of its own (whose key lived long enough on the node), an
   adopted token whose life the node will not say (PTTL refused) is left
   to expire, not deleted on the strength of the old hold. */
static void test_adopt_forgets_old_life(void) {
    setup_held(1, 1000);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_adopt(&L, ADOPTED, 0), REDLOCK_OK);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no scripts");
    expect_sent(0, "PTTL res");
    err_to(0, "PTTL", "NOPERM no PTTL either");
    expect_sent(0, "GET res");
    str_to(0, "GET", ADOPTED);
    CHECK_EQ(T.qn, 5);                       /* no DEL */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
}

static void run_adopt(int argc, char **argv) {
    RUN_T(test_adopt_errors);
    RUN_T(test_token_label);
    RUN_T(test_adopt_unknown_validity);
    RUN_T(test_adopt_renewed_slack);
    RUN_T(test_adopt_extend_late_and_retry);
    RUN_T(test_adopt_given_validity);
    RUN_T(test_adopt_noscript_pttl);
    RUN_T(test_adopt_pttl_counts_from_send);
    RUN_T(test_adopt_legacy);
    RUN_T(test_adopt_auto_legacy_value);
    RUN_T(test_adopt_life_units);
    RUN_T(test_adopt_forgets_old_life);
}
