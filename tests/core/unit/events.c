/* events.c - events: the fields each event carries and the ones it leaves
   zero, elapsed times, and EV_KEY_LEFT exactly when a key is left behind. */

/* Proves: modern and no-script releases, undos and cleanups far from expiry never emit KEY_LEFT. */
static void test_key_left_never_otherwise(void) {
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET"); nil_to(1, "SET");   /* undo */
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 0); num_to(2, "EVAL", 0);
    run_until_sent(6);
    ok_to(0, "SET"); ok_to(1, "SET"); ok(8);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1); num_to(1, "EVALSHA", 1); num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok(17);
    advance_to(redlock_lock_valid_until(&L));   /* expired: cleanup */
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    for (k = 0; k < 3; k++) num_to(k, "EVAL", 0);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    teardown();
    /* legacy, early: GET + DEL, no KEY_LEFT; an undo with nothing clobbered: none either */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1); num_to(1, "SETNX", 1); num_to(2, "SETNX", 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    redlock_release(&L);
    for (k = 0; k < 3; k++) str_to(k, "GET", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    CHECK_EQ(count_cmd(3, "DEL res"), 3);
    for (k = 0; k < 3; k++) num_to(k, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1); num_to(1, "SETNX", 0); num_to(2, "SETNX", 0);
    str_to(1, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    str_to(2, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_cmd(14, "GET res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    teardown();
}

/* Proves: a node whose GETSET lost a takeover race is left alone (KEY_LEFT, that node, once) by the undo and by a release, not by an extend; a new acquire forgets it. */
static void test_key_left_clobbered_node(void) {
    const redlock_event *ev;
    char ours[128], expired[128], winner[128];
    int k, q;
    snprintf(expired, sizeof expired, "%s", legacy_value(1600000000000LL, OTHER_TOKEN));
    snprintf(winner, sizeof winner, "%s", legacy_value(1700000000999LL, "fedcba9876543210fedcba9876543210"));
    /* won with nodes 0 and 2; node 1 clobbered */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num_to(0, "SETNX", 1);
    num_to(1, "SETNX", 0);
    expect_sent(1, "GET res");
    str_to(1, "GET", expired);
    CHECK(starts(4, "GETSET res ") && T.q[4].node == 1);
    str_to(1, "GETSET", winner);               /* someone else took it over first */
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    num_to(2, "SETNX", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    /* extend: node 1 not asked, no KEY_LEFT */
    q = T.qn;
    redlock_extend(&L, 0);
    CHECK_EQ(T.qn, q + 2);
    CHECK(T.q[q].node == 0 && T.q[q + 1].node == 2);
    str_to(0, "GET", ours);
    str_to(2, "GET", ours);
    str_to(0, "GETSET", ours);                   /* GETSET answers */
    str_to(2, "GETSET", ours);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    /* release: node 1 left (one event), 0 and 2 deleted */
    q = T.qn;
    redlock_release(&L);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_RELEASE);
    CHECK_EQ(T.qn, q + 2);
    CHECK(T.q[q].node == 0 && T.q[q + 1].node == 2);
    str_to(0, "GET", ours);
    str_to(2, "GET", ours);
    CHECK_EQ(count_cmd(q, "DEL res"), 2);
    num_to(0, "DEL", 1); num_to(2, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    /* a new acquire forgets the old clobbering: its undo asks node 1 too, nothing is left */
    q = T.qn;
    redlock_acquire(&L);
    num_to(0, "SETNX", 1); num_to(1, "SETNX", 0); num_to(2, "SETNX", 0);
    str_to(1, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    str_to(2, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, q + 8);
    CHECK_EQ(count_cmd(q + 5, "GET res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    for (k = 0; k < 3; k++) nil_to(k, "GET");
    /* and one that wins: node 1 is ours again and released normally */
    q = T.qn;
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num_to(0, "SETNX", 1); num_to(1, "SETNX", 1); num_to(2, "SETNX", 1);
    q = T.qn;
    redlock_release(&L);
    CHECK_EQ(T.qn, q + 3);
    for (k = 0; k < 3; k++) str_to(k, "GET", ours);
    CHECK_EQ(count_cmd(q, "DEL res"), 3);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    teardown();
    /* the undo of a failed attempt: the clobbered node is left (KEY_LEFT, op ACQUIRE), the others get GET */
    setup_legacy(3, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1);
    num_to(1, "SETNX", 0);
    num_to(2, "SETNX", 0);
    str_to(1, "GET", expired);
    str_to(2, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK(starts(5, "GETSET res ") && T.q[5].node == 1);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    str_to(1, "GETSET", winner);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.qn, 8);
    CHECK(T.q[6].node == 0 && T.q[7].node == 2);
    CHECK_EQ(count_cmd(6, "GET res"), 2);
    teardown();
}

/* Proves: within one acquire (same token) a node clobbered in attempt 1 is still left alone by the undo of attempt 2. */
static void test_key_left_clobbered_across_retries(void) {
    char expired[128], winner[128], ours[128];
    const redlock_event *ev;
    int a2;
    snprintf(expired, sizeof expired, "%s", legacy_value(1600000000000LL, OTHER_TOKEN));
    snprintf(winner, sizeof winner, "%s", legacy_value(1700000000999LL, "fedcba9876543210fedcba9876543210"));
    setup_legacy(3, 1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    num_to(0, "SETNX", 1); num_to(1, "SETNX", 0); num_to(2, "SETNX", 0);
    str_to(1, "GET", expired);
    str_to(2, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    str_to(1, "GETSET", winner);                  /* node 1 clobbered; attempt 1 fails */
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    CHECK_EQ(T.qn, 8);                            /* undo: GET on nodes 0 and 2 */
    str_to(0, "GET", ours);
    nil_to(2, "GET");
    CHECK(starts(8, "DEL res") && T.q[8].node == 0);
    num_to(0, "DEL", 1);
    a2 = T.qn;
    run_until_sent(a2 + 2);
    CHECK_EQ(count_cmd(a2, "SETNX res "), 3);
    num_to(0, "SETNX", 0); num_to(1, "SETNX", 0); num_to(2, "SETNX", 0);
    str_to(0, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    str_to(1, "GET", ours);                       /* node 1 shows our value from attempt 1 */
    str_to(2, "GET", legacy_value(1800000000000LL, OTHER_TOKEN));
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 2);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 1 && ev->op == REDLOCK_OP_ACQUIRE && ev->attempt == 2);
    CHECK_EQ(T.qn, a2 + 8);
    CHECK(T.q[a2 + 6].node == 0 && T.q[a2 + 7].node == 2);
    teardown();
}

/* Proves: the undo after a GETSET whose answer never came leaves that node (KEY_LEFT) even though the GET shows our value. */
static void test_key_left_unanswered_getset(void) {
    const redlock_event *ev;
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    str_to(0, "GET", legacy_value(1600000000000LL, OTHER_TOKEN));
    expect_starts(0, "GETSET res ");
    advance_to(T.now + 50000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    CHECK_STR(T.q[3].cmd, "GET res");
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
    str_to(0, "GET", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 1);
    ev = last_ev(REDLOCK_EV_KEY_LEFT);
    CHECK(ev && ev->node == 0 && ev->op == REDLOCK_OP_ACQUIRE);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: EV_ATTEMPT / EV_VOTE / EV_RETRY / EV_MODE_SWITCH carry the documented fields (node, vote, status, rtt, attempt, delay, mode). */
static void test_event_fields(void) {
    const redlock_event *ev;
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 1);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->attempt == 1 && ev->node == -1 && ev->op == REDLOCK_OP_ACQUIRE && ev->lock == &L);
    T.now += 700;
    ok_to(0, "SET");
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->node == 0 && ev->vote == 1 && ev->status == 0 && ev->rtt_us == 700 && ev->elapsed_us == 700 &&
          ev->attempt == 1 && ev->op == REDLOCK_OP_ACQUIRE);
    T.now += 100;
    nil_to(1, "SET");
    ev = last_ev(REDLOCK_EV_VOTE);
    CHECK(ev && ev->node == 1 && ev->vote == 0 && ev->status == 0 && ev->rtt_us == 800);
    fail_to(2, "SET", REDLOCK_ERR_CONNECT);
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 3);
    ev = &T.ev[T.evn - 2];                /* the last vote, then the retry */
    CHECK(ev->type == REDLOCK_EV_VOTE && ev->node == 2 && ev->vote == 0 && ev->status == REDLOCK_ERR_CONNECT);
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev && ev->status == REDLOCK_ERR_LOCKED && ev->votes == 1 && ev->attempt == 1 && ev->delay_us == 100000 &&
          ev->node == -1);
    for (k = 0; k < 3; k++) num_to(k, "EVAL", 0);
    run_until_sent(6);
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 2);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->attempt == 2);
    ok_to(0, "SET"); ok_to(1, "SET");
    ev = last_ev(REDLOCK_EV_ACQUIRED);
    CHECK(ev && ev->attempt == 2 && ev->votes == 2 && ev->node == -1);
    /* a switch to no scripts: mode 0, that node */
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no permissions to run the 'evalsha' command");
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == 0 && ev->op == REDLOCK_OP_RELEASE);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    teardown();
}

/* Proves: EV_RETRY and EV_FAILED report elapsed_us since the failed
   attempt's round started, not since the undo round that follows it. */
static void test_retry_event_elapsed(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    T.now += 800;
    nil_to(0, "SET");
    ev = last_ev(REDLOCK_EV_RETRY);
    CHECK(ev != NULL);
    if (ev) CHECK_EQ(ev->elapsed_us, 800);
    num_to(0, "EVAL", 0);
    run_until_sent(2);
    T.now += 900;
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    run_until_sent(4);
    T.now += 300;
    nil_to(0, "SET");
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev != NULL);
    if (ev) CHECK_EQ(ev->elapsed_us, 300);
    teardown();
}

/* Proves: the FAILED event of an acquire that gives up carries the last
   attempt's votes for, its status and attempt number; its ATTEMPT event
   has no status. */
static void test_failed_event_fields(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    base_config(&cfg, 3);
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    ev = last_ev(REDLOCK_EV_ATTEMPT);
    CHECK(ev && ev->status == 0 && ev->attempt == 1);
    ok_to(0, "SET"); nil_to(1, "SET"); nil_to(2, "SET");
    ev = last_ev(REDLOCK_EV_FAILED);
    CHECK(ev != NULL);
    if (ev) {
        CHECK_EQ(ev->votes, 1);
        CHECK_EQ(ev->status, REDLOCK_ERR_LOCKED);
        CHECK_EQ(ev->attempt, 1);
        CHECK_EQ(ev->node, -1);
        CHECK_EQ(ev->op, REDLOCK_OP_ACQUIRE);
    }
    CHECK_EQ(T.res.r[0].votes, 1);
    teardown();
}

/* Leaves a recognisable pattern on the stack, so that an event field the
   core forgot to clear shows up as garbage rather than as a lucky zero. */
static void dirty_stack(void) {
    volatile unsigned char junk[8192];
    size_t i;
    for (i = 0; i < sizeof junk; i++) junk[i] = 0xA5;
}

/* Fields that do not apply to an event type are 0 (header: "Fields that do
   not apply to a type are 0 (node: -1)"). */
static int event_rest_zero(const redlock_event *ev) {
    switch (ev->type) {
    case REDLOCK_EV_ATTEMPT:
    case REDLOCK_EV_LOST:
        return ev->vote == 0 && ev->votes == 0 && ev->mode == 0 && ev->rtt_us == 0 && ev->elapsed_us == 0 &&
               ev->validity_us == 0 && ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 &&
               ev->node == -1;
    case REDLOCK_EV_RELEASED:
        return ev->vote == 0 && ev->attempt == 0 && ev->mode == 0 && ev->rtt_us == 0 && ev->validity_us == 0 &&
               ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 && ev->node == -1;
    case REDLOCK_EV_MODE_SWITCH:
    case REDLOCK_EV_KEY_LEFT:
        return ev->vote == 0 && ev->votes == 0 && ev->rtt_us == 0 && ev->elapsed_us == 0 && ev->validity_us == 0 &&
               ev->slack_us == 0 && ev->delay_us == 0 && ev->ttl_share_permille == 0 && ev->status == 0;
    default:
        return 1;
    }
}

/* Proves: ATTEMPT, RELEASED, LOST and MODE_SWITCH events carry zeros in the
   fields that do not apply, and MODE_SWITCH names the node that switched. */
static void test_event_unused_fields_zero(void) {
    int i;
    setup_n(3, 0, 1000);
    dirty_stack();
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    dirty_stack();
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    err_to(1, "EVALSHA", "NOPERM no permissions to run the 'evalsha' command"); /* node 1 */
    num_to(2, "EVALSHA", 1);
    CHECK(starts(6, "GET res") && T.q[6].node == 1);
    nil_to(1, "GET");                             /* the no-script node: gone already */
    CHECK(last_ev(REDLOCK_EV_MODE_SWITCH) && last_ev(REDLOCK_EV_MODE_SWITCH)->node == 1);
    CHECK(last_ev(REDLOCK_EV_RELEASED) && last_ev(REDLOCK_EV_RELEASED)->elapsed_us == 0);
    dirty_stack();
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET"); ok_to(2, "SET");
    dirty_stack();
    advance_to(redlock_lock_valid_until(&L));    /* no watchdog: LOST */
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(count_ev(REDLOCK_EV_RELEASED) >= 1 && count_ev(REDLOCK_EV_LOST) == 1);
    for (i = 0; i < T.evn; i++)
        if (!event_rest_zero(&T.ev[i])) {
            printf("#   event %s has a stray field\n", redlock_event_name(T.ev[i].type));
            CHECK(0);
        }
    teardown();
}

/* Proves: MODE_SWITCH says which node switched to what, in which
   operation, and nothing else (no attempt, status or votes): to no
   scripts during a release, to legacy during an acquire. */
static void test_mode_switch_event_fields(void) {
    const redlock_event *ev;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no permissions to run the 'evalsha' command");
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == 0 && ev->op == REDLOCK_OP_RELEASE && ev->attempt == 0 &&
          ev->status == 0 && ev->votes == 0 && ev->lock == &L);
    teardown();
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "ERR syntax error");
    str_to(0, "INFO", "# Server\r\nredis_version:2.4.17\r\n");
    ev = last_ev(REDLOCK_EV_MODE_SWITCH);
    CHECK(ev && ev->node == 0 && ev->mode == REDLOCK_MODE_LEGACY && ev->op == REDLOCK_OP_ACQUIRE && ev->attempt == 0 &&
          ev->status == 0 && ev->votes == 0);
    teardown();
}

static void run_events(int argc, char **argv) {
    RUN_T(test_key_left_never_otherwise);
    RUN_T(test_key_left_clobbered_node);
    RUN_T(test_key_left_clobbered_across_retries);
    RUN_T(test_key_left_unanswered_getset);
    RUN_T(test_event_fields);
    RUN_T(test_retry_event_elapsed);
    RUN_T(test_failed_event_fields);
    RUN_T(test_event_unused_fields_zero);
    RUN_T(test_mode_switch_event_fields);
}
