/* restart.c - nodes that may have lost keys at a restart or failover: what
   INFO tells, node state, and which grants count (section 4, Restarts). */

static const char RUN_A[] = "5e0ee1c1e1f2a6c3f1b4b8d0a6e8d7c2b1a09f8e";
static const char RUN_B[] = "0b1a09f8e5e0ee1c1e1f2a6c3f1b4b8d0a6e8d7c";

/* A node's life as its INFO would say it. */
static redlock_node_life life_of(const char *run_id, int64_t uptime_s, int durable) {
    redlock_node_life l;
    memset(&l, 0, sizeof l);
    snprintf(l.run_id, sizeof l.run_id, "%s", run_id);
    l.uptime_s = uptime_s;
    l.durable = durable;
    return l;
}
static void tell_life(int node, const char *run_id, int64_t uptime_s, int durable) {
    redlock_node_life l = life_of(run_id, uptime_s, durable);
    CHECK_EQ(redlock_node_set_life(&C, node, &l), REDLOCK_OK);
}

/* Proves: INFO's run_id and uptime_in_seconds are read (CRLF or LF, any
   section order); a run_id that is too long or has a space, or an uptime
   that is not a number, is not taken; a text with neither gives -1;
   durable is never set from INFO. */
static void test_restart_info_parse(void) {
    static const char info[] = "# Server\r\nredis_version:7.0.15\r\nrun_id:5e0ee1c1e1f2a6c3f1b4b8d0a6e8d7c2b1a09f8e\r\n"
                               "tcp_port:6379\r\nuptime_in_seconds:1234\r\nuptime_in_days:0\r\n\r\n# Persistence\r\n"
                               "aof_enabled:1\r\n";
    redlock_node_life l;
    CHECK_EQ(redlock_info_life(info, sizeof info - 1, &l), 0);
    CHECK_STR(l.run_id, RUN_A);
    CHECK_EQ(l.uptime_s, 1234);
    CHECK_EQ(l.durable, 0);
    CHECK_EQ(l.aof, 1);
    CHECK_EQ(redlock_info_life("uptime_in_seconds:7\nrun_id:abc\n", 30, &l), 0);
    CHECK_STR(l.run_id, "abc");
    CHECK_EQ(l.uptime_s, 7);
    CHECK_EQ(l.aof, 0);
    CHECK_EQ(redlock_info_life("aof_enabled:0\r\nuptime_in_seconds:1\r\n", 36, &l), 0);
    CHECK_EQ(l.aof, 0);
    CHECK_EQ(redlock_info_life("aof_enabled:10\r\nuptime_in_seconds:1\r\n", 37, &l), 0);
    CHECK_EQ(l.aof, 0);
    CHECK_EQ(redlock_info_life("run_id:a b\r\nuptime_in_seconds:x1\r\n", 34, &l), -1);
    CHECK_STR(l.run_id, "");
    CHECK_EQ(l.uptime_s, -1);
    CHECK_EQ(redlock_info_life("run_id:5e0ee1c1e1f2a6c3f1b4b8d0a6e8d7c2b1a09f8e00\r\nuptime_in_seconds:3\r\n", 73, &l), 0);
    CHECK_STR(l.run_id, ""); /* 42 characters: not a run_id */
    CHECK_EQ(l.uptime_s, 3);
    CHECK_EQ(redlock_info_life("# Memory\r\nmaxmemory:0\r\n", 23, &l), -1);
    CHECK_EQ(redlock_info_life(NULL, 10, &l), -1);
    CHECK_EQ(redlock_info_life(info, sizeof info - 1, NULL), -1);
    /* the text's length bounds the search */
    CHECK_EQ(redlock_info_life(info, 20, &l), -1);
}

/* Proves: a first sight of a node that does not keep keys across restarts
   dates its possible loss at its start (now - uptime, reported once with
   elapsed_us = the uptime); the same run_id again changes nothing; a new
   run_id dates it now (RUN_ID), whatever the persistence; a durable node's
   first sight dates nothing; a failover dates it now and the new
   primary's first INFO is a first sight again; bad arguments change
   nothing. */
static void test_restart_node_state(void) {
    redlock_client dead;
    redlock_restart why;
    redlock_node_life any;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_node_restarted_at(&C, 0, &why), INT64_MIN);
    CHECK_EQ(why, REDLOCK_RESTART_NONE);
    tell_life(0, RUN_A, 100, 0); /* up 99 to 100 s: uptime_in_seconds may count one more */
    CHECK_EQ(redlock_node_restarted_at(&C, 0, &why), T.now - 99 * 1000000LL);
    CHECK_EQ(why, REDLOCK_RESTART_UPTIME);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 1);
    CHECK(last_ev(REDLOCK_EV_NODE_RESTARTED)->node == 0 && last_ev(REDLOCK_EV_NODE_RESTARTED)->lock == NULL &&
          last_ev(REDLOCK_EV_NODE_RESTARTED)->mode == REDLOCK_RESTART_UPTIME &&
          last_ev(REDLOCK_EV_NODE_RESTARTED)->status == REDLOCK_ERR_RESTARTED &&
          last_ev(REDLOCK_EV_NODE_RESTARTED)->elapsed_us == 99 * 1000000LL);
    T.now += 5000000;
    tell_life(0, RUN_A, 105, 0); /* the next connection to the same process */
    CHECK_EQ(redlock_node_restarted_at(&C, 0, NULL), T.now - 104 * 1000000LL);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 1);
    tell_life(0, RUN_B, 3600, 1); /* another process, however long up and durable */
    CHECK_EQ(redlock_node_restarted_at(&C, 0, &why), T.now);
    CHECK_EQ(why, REDLOCK_RESTART_RUN_ID);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 2);
    CHECK_EQ(last_ev(REDLOCK_EV_NODE_RESTARTED)->elapsed_us, 0);

    tell_life(1, RUN_A, 2, 1); /* durable: its keys outlived the start */
    CHECK_EQ(redlock_node_restarted_at(&C, 1, NULL), INT64_MIN);
    tell_life(2, "", 3, 0); /* no run_id: each connection dates it by uptime */
    CHECK_EQ(redlock_node_restarted_at(&C, 2, NULL), T.now - 2000000);
    T.now += 1000000;
    CHECK_EQ(redlock_node_failed_over(&C, 1, 0), REDLOCK_OK);
    CHECK_EQ(redlock_node_restarted_at(&C, 1, &why), T.now);
    CHECK_EQ(redlock_node_failed_over(&C, 1, 500), REDLOCK_OK); /* an older failover changes nothing */
    CHECK_EQ(redlock_node_restarted_at(&C, 1, NULL), T.now);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 4);
    CHECK_EQ(why, REDLOCK_RESTART_FAILOVER);
    T.now += 1000000;
    tell_life(1, RUN_A, 2, 0); /* the new primary, first seen: its start is older than the failover */
    CHECK_EQ(redlock_node_restarted_at(&C, 1, NULL), T.now - 1000000);
    tell_life(2, "", 0, 0); /* 0 s: now */
    CHECK_EQ(redlock_node_restarted_at(&C, 2, NULL), T.now);

    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 5);
    any = life_of("", 0, 0);
    CHECK_EQ(redlock_node_set_life(&C, 3, &any), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_life(&C, -1, &any), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_life(&C, 0, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_failed_over(&C, 3, 0), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_failed_over(&C, 0, -1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_restarted_at(&C, 3, &why), INT64_MIN);
    CHECK_EQ(why, REDLOCK_RESTART_NONE);
    memset(&dead, 0, sizeof dead);
    CHECK_EQ(redlock_node_set_life(&dead, 0, &any), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_failed_over(NULL, 0, 0), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_restarted_at(NULL, 0, NULL), INT64_MIN);
    CHECK_STR(redlock_event_name(REDLOCK_EV_NODE_RESTARTED), "node-restarted");
    teardown();
}

/* Proves: on one node started less than a ttl (plus the drift allowance)
   ago, an acquire's grant does not count (RESTARTED, the key taken back);
   from the bound on it does. */
static void test_restart_lone_node(void) {
    int64_t bound = 1000 * 1000 + drift_us(1000, 0);
    setup_no_retry(1, 0, 1000);
    tell_life(0, RUN_A, 0, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    num_to(0, "EVAL", 1); /* the undo */
    T.now += bound - 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    num_to(0, "EVAL", 1);
    T.now += 1;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: of three nodes, a restarted one's grant does not count but the
   others make the quorum (2 votes); its refusal still counts against; a
   quorum of restarted nodes fails with RESTARTED; the key stays set there
   (no undo) and a release goes to it; renewals do not count it until the
   bound, then do. */
static void test_restart_quorum(void) {
    int k;
    setup_n(3, 0, 1000);
    tell_life(0, RUN_A, 0, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_all(3, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(last_res()->votes, 2);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(T.qn, 3); /* nothing taken back */
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    k = T.qn;
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_RESTARTED);
    T.now += 600000;
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_RESTARTED); /* 600 ms after the start */
    T.now += 1000 * 1000 + drift_us(1000, 0) - 600000;
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(vote_status(0), REDLOCK_OK); /* the bound has passed */
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(find_cmd(k, 0, "EVALSHA") >= 0);
    teardown();

    setup_n(3, 0, 1000);
    tell_life(0, RUN_A, 0, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil_to(0, "SET"); /* a refusal of a restarted node counts as one */
    CHECK_EQ(vote_status(0), REDLOCK_OK);
    CHECK(last_ev(REDLOCK_EV_VOTE)->held_by_other);
    ok_to(1, "SET");
    ok_to(2, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(last_res()->votes, 2);
    teardown();

    setup_no_retry(3, 0, 1000);
    tell_life(0, RUN_A, 0, 0);
    tell_life(1, RUN_A, 0, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_all(3, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    teardown();
}

/* Proves: cfg.max_ttl_ms lengthens the bound past the lock's ttl; below
   the lock's ttl it changes nothing; < 0 counts grants at once (the event
   is still reported). */
static void test_restart_max_ttl(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.retry_count = -1;
    cfg.max_ttl_ms = 5000;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_restart_bound_us(&L), 5000000 + drift_us(5000, 0));
    CHECK_EQ(redlock_lock_restart_bound_us(NULL), 0);
    tell_life(0, RUN_A, 0, 0);
    T.now += 2000000;
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    T.now += 3000000 + drift_us(5000, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();

    cfg.max_ttl_ms = 10;
    o.ttl_ms = 3000;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_lock_restart_bound_us(&L), 3000000 + drift_us(3000, 0));
    tell_life(0, RUN_A, 3, 0); /* up 2 to 3 s: the 3 s ttl is not past */
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    teardown();

    cfg.max_ttl_ms = -1;
    setup_with(&cfg, &o);
    tell_life(0, RUN_A, 0, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_RESTARTED), 1);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();

    base_config(&cfg, 1);
    cfg.max_ttl_ms = ((int64_t)1 << 40) + 1;
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
}

/* Proves: a fenced lock takes no count from a restarted node (its counter
   may have been reset; here it is higher, and still not taken) and writes
   the fence back to the counted nodes only; a node whose run_id changes
   while the lock is held fails its next renewal vote. */
static void test_restart_fenced(void) {
    setup_fenced(3);
    tell_life(0, RUN_A, 0, 0);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 100);
    num_to(1, "EVALSHA", 5);
    num_to(2, "EVALSHA", 6);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_RESTARTED);
    CHECK(fsent_is(3, FENCE_SHA, " 6"));
    CHECK(fsent_is(4, FENCE_SHA, " 6"));
    CHECK(T.q[3].node == 1 && T.q[4].node == 2);
    num_to(1, "EVALSHA", 1);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 6);
    teardown();

    setup_held(3, 1000);
    tell_life(1, RUN_A, 500, 0);
    tell_life(1, RUN_B, 0, 0); /* restarted while held */
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(last_res()->votes, 2);
    teardown();
}

/* Proves: an acquire with a wait that lost to a restarted node retries
   when that node counts again (not every retry delay), and wins then;
   without a wait it retries as usual and ends with RESTARTED. */
static void test_restart_wait(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t start, bound = 1000 * 1000 + drift_us(1000, 0);
    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.wait_ms = 5000;
    setup_with(&cfg, &o);
    tell_life(0, RUN_A, 0, 0);
    start = T.now;
    T.now += 100000;
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->status, REDLOCK_ERR_RESTARTED);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, start + bound - T.now);
    num_to(0, "EVAL", 1);
    advance_to(start + bound - 1);
    CHECK(waiting(0, "SET") < 0);
    advance_to(start + bound);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(last_res()->attempts, 2);
    teardown();

    setup_n(1, 0, 1000); /* 2 retries 100 ms apart */
    tell_life(0, RUN_A, 0, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000);
    num_to(0, "EVAL", 1);
    advance_to(T.now + 100000);
    ok_to(0, "SET");
    num_to(0, "EVAL", 1);
    advance_to(T.now + 100000);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_RESTARTED);
    CHECK_EQ(last_res()->attempts, 3);
    teardown();
}

static void run_restart(int argc, char **argv) {
    RUN_T(test_restart_info_parse);
    RUN_T(test_restart_node_state);
    RUN_T(test_restart_lone_node);
    RUN_T(test_restart_quorum);
    RUN_T(test_restart_max_ttl);
    RUN_T(test_restart_fenced);
    RUN_T(test_restart_wait);
}
