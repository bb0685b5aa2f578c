/* replies.c - replies the core must not be fooled by: malformed or
   foreign replies, unknown and stale tags, NULL strings, error words, and
   the statuses that send and on_error report; an ACL's denial of a key
   told apart from a denial of the command. */

static void test_malformed_replies(void) {
    static const struct { redlock_reply_type type; long long integer; const char *str; int status; } acq[] = {
        {REDLOCK_REPLY_INTEGER, 1, NULL, REDLOCK_ERR_PROTOCOL},      /* wrong type */
        {REDLOCK_REPLY_STRING, 0, "OK", REDLOCK_ERR_PROTOCOL},       /* bulk, not status */
        {REDLOCK_REPLY_STATUS, 0, "QUEUED", REDLOCK_ERR_PROTOCOL},   /* status, not OK */
        {REDLOCK_REPLY_ARRAY, 0, NULL, REDLOCK_ERR_PROTOCOL},
        {REDLOCK_REPLY_OTHER, 0, NULL, REDLOCK_ERR_PROTOCOL},
        {REDLOCK_REPLY_STATUS, 0, NULL, REDLOCK_ERR_PROTOCOL},       /* NULL string */
        {REDLOCK_REPLY_ERROR, 0, "OOM command not allowed", REDLOCK_ERR_SERVER},
        {REDLOCK_REPLY_ERROR, 0, NULL, REDLOCK_ERR_SERVER},
    };
    static const long long bad_ints[] = {2, -1, 5, 1LL << 40, -(1LL << 62)};
    size_t k;
    for (k = 0; k < sizeof acq / sizeof acq[0]; k++) {
        setup_acquiring(1, 1000);
        reply(0, "SET", acq[k].type, acq[k].integer, acq[k].str);
        CHECK_EQ(vote_status(0), acq[k].status);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING); /* counted as a failed vote, retrying */
        teardown();
    }
    /* release / extend integers out of range */
    for (k = 0; k < sizeof bad_ints / sizeof bad_ints[0]; k++) {
        setup_held(1, 1000);
        redlock_release(&L);
        num_to(0, "EVALSHA", bad_ints[k]);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        teardown();
        setup_held(1, 1000);
        redlock_extend(&L, 0);
        if (bad_ints[k] != -1) {
            num_to(0, "EVALSHA", bad_ints[k]);
            CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
        }
        teardown();
    }
    /* nil where OK expected is a "held elsewhere" vote, not an error */
    setup_acquiring(1, 1000);
    nil_to(0, "SET");
    CHECK_EQ(vote_status(0), 0);
    teardown();
    /* SETNX answered with a string; GET answered with an integer */
    setup_acquiring(1, 1000);
    err_to(0, "SET", "ERR wrong number of arguments for 'set' command");
    str_to(0, "INFO", "redis_version:2.6.11");
    expect_starts(0, "SETNX res ");
    str_to(0, "SETNX", "1");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* a NULL reply pointer */
    setup_acquiring(1, 1000);
    redlock_on_reply(&C, T.q[0].tag, NULL);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    teardown();
    /* transport error */
    setup_acquiring(1, 1000);
    fail_to(0, "SET", REDLOCK_ERR_CONNECT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_CONNECT);
    teardown();
}

static void test_unknown_tags(void) {
    setup_acquiring(3, 1000);
    redlock_on_reply(&C, 0, NULL);
    redlock_on_reply(&C, T.q[0].tag ^ ((redlock_tag)1 << 40), NULL); /* another lock id */
    redlock_on_reply(&C, (T.q[0].tag & ~(redlock_tag)0xFF) | 200, NULL); /* node out of range */
    redlock_on_error(&C, T.q[1].tag + (1 << 8), REDLOCK_ERR_TRANSPORT); /* another sequence */
    redlock_on_reply(NULL, T.q[0].tag, NULL);
    redlock_on_timer(NULL);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 0);
    ok_to(0, "SET");
    ok(0);                                /* twice: the second is stale */
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 1);
    teardown();
}

/* Proves: a transport status the core does not know (below -128, or not
   negative) counts as TRANSPORT, from on_error and from send alike. */
static void test_foreign_status_is_transport(void) {
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", -500);
    fail_to(1, "SET", 7);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    teardown();
}
static int tags_distinct(void) {
    int a, b;
    for (a = 0; a < T.qn; a++)
        for (b = a + 1; b < T.qn; b++)
            if (T.q[a].tag == T.q[b].tag) return 0;
    return 1;
}

/* Proves: a duplicate of the GET's reply (GET's tag) is not taken for the GETSET's; all tags are distinct; re-deliveries change nothing. */
static void test_defect4_tag_per_request(void) {
    const char *expired = legacy_value(1600000000000LL, OTHER_TOKEN);
    char ours[128];
    int res, ev, qn;
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    expect_starts(0, "SETNX res ");
    num_to(0, "SETNX", 0);
    expect_sent(0, "GET res");
    str_to(0, "GET", expired);
    expect_starts(0, "GETSET res ");
    CHECK(tags_distinct());
    res = T.res.n; ev = T.evn; qn = T.qn;
    rep(1, REDLOCK_REPLY_STRING, 0, expired);    /* the GET's reply again: not the GETSET's answer */
    num(0, 0);                                   /* and the SETNX's */
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    str_to(0, "GETSET", expired);                /* the real GETSET answer: we replaced what we read */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    res = T.res.n; ev = T.evn; qn = T.qn;
    num(0, 1); rep(1, REDLOCK_REPLY_STRING, 0, expired); rep(2, REDLOCK_REPLY_NIL, 0, NULL);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    /* release: GET then DEL; the GET's reply again is not the DEL's */
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    redlock_release(&L);
    expect_sent(0, "GET res");
    str_to(0, "GET", ours);
    expect_sent(0, "DEL res");
    CHECK(tags_distinct());
    rep(3, REDLOCK_REPLY_STRING, 0, ours);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_RELEASING);
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    res = T.res.n; ev = T.evn; qn = T.qn;
    rep(3, REDLOCK_REPLY_STRING, 0, ours); num(4, 1);
    CHECK_EQ(T.res.n, res);
    CHECK_EQ(T.evn, ev);
    CHECK_EQ(T.qn, qn);
    teardown();
    /* modern, three nodes, a NOSCRIPT step: still one tag per request */
    setup_held(3, 1000);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOSCRIPT No matching script. Please use EVAL.");
    expect_starts(0, "EVAL if redis.call('get'");
    rep(3, REDLOCK_REPLY_ERROR, 0, "NOSCRIPT No matching script. Please use EVAL.");
    CHECK_EQ(T.qn, 7);                    /* the duplicate did not trigger another EVAL */
    num_to(1, "EVALSHA", 1); num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK(tags_distinct());
    teardown();
}

/* Proves: on the SET step, STATUS / STRING / ERROR with str NULL and len > 0 is a protocol error, not a crash nor a server error. */
static void test_defect7_null_string_set_step(void) {
    static const redlock_reply_type types[] = {REDLOCK_REPLY_STATUS, REDLOCK_REPLY_STRING, REDLOCK_REPLY_ERROR};
    size_t k;
    for (k = 0; k < 3; k++) {
        setup_acquiring(1, 1000);
        raw_to(0, "SET", types[k], NULL, 11);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);  /* a failed vote: retrying */
        CHECK_EQ(count_cmd(0, "INFO"), 0);
        teardown();
    }
}

/* Proves: on the release steps (EVALSHA, and GET on a node without scripts) a NULL string with len > 0 is a protocol error. */
static void test_defect7_null_string_release_step(void) {
    setup_held(1, 1000);
    redlock_release(&L);
    raw_to(0, "EVALSHA", REDLOCK_REPLY_ERROR, NULL, 8);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_held(1, 1000);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM this user has no permissions to run the 'evalsha' command");
    expect_sent(0, "GET res");
    raw_to(0, "GET", REDLOCK_REPLY_STRING, NULL, REDLOCK_TOKEN_LEN); /* the old header read through NULL here */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: on the legacy GET and GETSET steps (and the legacy release GET) a NULL string with len > 0 is a protocol error. */
static void test_defect7_null_string_legacy_steps(void) {
    const char *expired = legacy_value(1600000000000LL, OTHER_TOKEN);
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    raw_to(0, "GET", REDLOCK_REPLY_STRING, NULL, strlen(expired)); /* GET */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1);
    redlock_release(&L);
    expect_sent(0, "GET res");
    raw_to(0, "GET", REDLOCK_REPLY_STRING, NULL, 45);            /* release GET */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
    teardown();
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    str_to(0, "GET", expired);
    expect_starts(0, "GETSET res ");
    raw_to(0, "GETSET", REDLOCK_REPLY_STRING, NULL, strlen(expired)); /* GETSET: the old header read through NULL */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}


/* Proves: send returning a positive value counts as TRANSPORT, a negative status as itself; on_error with 0 or a positive status is TRANSPORT. */
static void test_send_and_error_statuses(void) {
    setup_n(3, 0, 1000);
    T.fail_send_node = 1;
    T.fail_send_rc = 1;
    redlock_acquire(&L);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    teardown();
    setup_n(3, 0, 1000);
    T.fail_send_node = 2;
    T.fail_send_rc = REDLOCK_ERR_CONNECT;
    redlock_acquire(&L);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_CONNECT);
    fail_to(0, "SET", 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    teardown();
    setup_acquiring(1, 1000);
    fail_to(0, "SET", 7);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TRANSPORT);
    teardown();
    setup_acquiring(1, 1000);
    fail_to(0, "SET", REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NODE_TIMEOUT);
    teardown();
}

/* Proves: replies that are exactly "NOSCRIPT" or "NOPERM" (no message after
   the word) are recognised like the longer forms. */
static void test_error_words_alone(void) {
    setup_held(1, 1000);
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOSCRIPT");
    expect_starts(0, "EVAL if redis.call('get'");
    err_to(0, "EVAL", "NOPERM");
    expect_sent(0, "GET res");
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    teardown();
}

/* Proves: no reply at all (NULL) is a malformed answer, PROTOCOL; an
   on_error status that is not negative is a TRANSPORT failure. */
static void test_null_reply_and_error_zero(void) {
    setup_acquiring(5, 1000);
    redlock_on_reply(&C, T.q[0].tag, NULL);
    fail_to(1, "SET", 0);
    fail_to(2, "SET", REDLOCK_ERR_CONNECT);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_CONNECT);
    teardown();
}

/* Proves: an ACL's denial of a key is told apart from a denial of the
   command, in Redis's texts (6 and 7.0, 7.2, a script's own call): a fenced
   acquire refused the counter key fails with NOPERM, not NO_SCRIPTING, at
   once when no quorum is left, with no mode switch; a plain SET refused its
   key says NOPERM (not SERVER); a release refused its key does not turn the
   node to GET + compare (no switch, no GET), while the command's denial
   still does; the status has its own words. */
static void test_acl_key_denied(void) {
    static const char *const denied[] = {
        "NOPERM this user has no permissions to access one of the keys used as arguments",
        "NOPERM No permissions to access a key",
        ("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments "
         "script: 08c7557d4c89b0ab5b53a3a0ef90a225f2be7888, on @user_script:1."),
        "ERR ACL failure in script: User u has no permissions to access the 'redlock:fence:res' key script: x",
    };
    int k;
    for (k = 0; k < 4; k++) {
        setup_fenced(3);
        redlock_acquire(&L);
        err_to(0, "EVALSHA", denied[k]);
        err_to(1, "EVALSHA", denied[(k + 1) % 4]);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
        CHECK_EQ(vote_status(1), REDLOCK_ERR_NOPERM);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NOPERM); /* at once: no retry can win */
        CHECK(T.res.n == 1 && T.res.r[0].attempts == 1);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        teardown();
    }
    /* one node of three and one silent: NOPERM said, retried */
    setup_fenced(3);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", denied[1]);
    num_to(1, "EVALSHA", 1);
    advance_to(T.now + 50000);
    CHECK_EQ(T.res.n, 0);
    CHECK(last_ev(REDLOCK_EV_RETRY) && last_ev(REDLOCK_EV_RETRY)->status == REDLOCK_ERR_NOPERM);
    teardown();
    /* a plain lock's SET */
    setup_no_retry(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", denied[0]);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NOPERM);
    teardown();
    /* a release refused the key: no switch to GET + compare */
    setup_held(1, 1000);
    redlock_release(&L);
    err_to(0, "EVALSHA", denied[1]);
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NOPERM);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NOPERM);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    teardown();
    /* the command refused (7.2's text names the user): still no scripting */
    setup_fenced(1);
    redlock_acquire(&L);
    err_to(0, "EVALSHA", "NOPERM User keyholder has no permissions to run the 'evalsha' command");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NO_SCRIPTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_SCRIPTING);
    teardown();
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_NOPERM), "ACL") != NULL);
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_NOPERM), REDLOCK_FENCE_PREFIX) != NULL);
    CHECK(strstr(redlock_strerror(REDLOCK_ERR_KEY), REDLOCK_FENCE_PREFIX) != NULL);
}

static void run_replies(int argc, char **argv) {
    RUN_T(test_malformed_replies);
    RUN_T(test_unknown_tags);
    RUN_T(test_defect4_tag_per_request);
    RUN_T(test_defect7_null_string_set_step);
    RUN_T(test_defect7_null_string_release_step);
    RUN_T(test_defect7_null_string_legacy_steps);
    RUN_T(test_send_and_error_statuses);
    RUN_T(test_error_words_alone);
    RUN_T(test_null_reply_and_error_zero);
    RUN_T(test_foreign_status_is_transport);
    RUN_T(test_acl_key_denied);
}
