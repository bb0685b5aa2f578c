/* replicas.c - cfg.wait_replicas: WAIT after every grant (acquire, write-
   back, renewal, extend, upgrade), the grant counted only once enough
   replicas acknowledged (section 4, Deployments). */

/* setup_n's settings with wait_replicas = n (and WAIT's timeout, 0: the
   default) and the lock's ttl 1000 ms; fenced, legacy or readers-writer
   as asked. */
enum { WR_PLAIN, WR_FENCED, WR_LEGACY, WR_RW };
static void setup_wait(int nodes, int n, int64_t timeout_ms, int kind, int watchdog, int retry_count) {
    redlock_config cfg;
    redlock_lock_opts o;
    int i;
    base_config(&cfg, nodes);
    cfg.wait_replicas = n;
    cfg.wait_timeout_ms = timeout_ms;
    if (retry_count) cfg.retry_count = retry_count;
    if (kind == WR_LEGACY)
        for (i = 0; i < nodes; i++) cfg.mode[i] = REDLOCK_MODE_LEGACY;
    base_opts(&o, 1000, watchdog);
    o.fence = kind == WR_FENCED;
    if (kind == WR_RW) o.access = REDLOCK_ACCESS_UPDATE;
    setup_with(&cfg, &o);
}
static const redlock_result *wr_last(void) {
    static const redlock_result none;
    return T.res.n > 0 ? &T.res.r[T.res.n - 1] : &none;
}
/* The status of the latest event of type t; 1 if none came. */
static int ev_status(redlock_event_type t) {
    const redlock_event *ev = last_ev(t);
    return ev ? ev->status : 1;
}
static const char UNDO_PREFIX[] = "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])";

/* Proves: with the default config (wait_replicas 0) no WAIT is ever sent:
   an acquire, an extend, a renewal and a release go as before. */
static void test_replicas_off_by_default(void) {
    redlock_config cfg;
    redlock_config_init(&cfg);
    CHECK_EQ(cfg.wait_replicas, 0);
    setup_n(1, 1, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    run_until_sent(T.qn); /* the watchdog's renewal */
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 2);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(count_cmd(0, "WAIT"), 0);
    teardown();
}

/* Proves: the WAIT's arguments (n, and the node timeout by default or
   the timeout given); a negative count or an absurd timeout is refused. */
static void test_replicas_config(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_client c;
    setup_wait(1, 2, 0, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    expect_sent(0, "WAIT 2 50");
    teardown();
    setup_wait(1, 1, 300, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    expect_sent(0, "WAIT 1 300");
    teardown();
    base_callbacks(&cb);
    base_config(&cfg, 1);
    cfg.wait_replicas = -1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.wait_replicas = 1;
    cfg.wait_timeout_ms = -1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.wait_timeout_ms = (int64_t)1 << 41;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
}

/* Proves: a grant counts only once WAIT says enough replicas have it (n
   or more): until then the lock is not held; the validity still counts
   from the attempt's start (the WAIT's time is spent from it). */
static void test_replicas_grant_counts(void) {
    int64_t t0;
    setup_wait(1, 1, 0, WR_PLAIN, 0, 0);
    t0 = T.now;
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    T.now += 30000;
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), t0 + 1000000 - drift_us(1000, 0));
    CHECK_EQ(wr_last()->validity_us, 1000000 - drift_us(1000, 0) - 30000);
    CHECK_EQ(vote_status(0), 0);
    teardown();
    /* more replicas than asked for: counts too */
    setup_wait(3, 1, 0, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_all(3, "SET");
    num_to(0, "WAIT", 2);
    CHECK_EQ(T.res.n, 0); /* one vote of two */
    num_to(1, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(wr_last()->votes, 2);
    CHECK_EQ(redlock_lock_followup(&L), 0); /* node 2's WAIT still out: nothing follows it */
    teardown();
}

/* Proves: fewer replicas than asked fails the node's vote with REPLICAS;
   a lone node's acquire then fails with REPLICAS and its key is taken
   back (the undo, at once); with three nodes the other two still win, and
   the short node's key goes with the release. */
static void test_replicas_short(void) {
    setup_wait(1, 2, 0, WR_PLAIN, 0, -1);
    redlock_acquire(&L);
    ok_to(0, "SET");
    num_to(0, "WAIT", 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_REPLICAS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_REPLICAS);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    expect_starts(0, UNDO_PREFIX);
    CHECK_STR(redlock_strerror(REDLOCK_ERR_REPLICAS),
              "too few replicas acknowledged the write in time (WAIT), or WAIT refused");
    teardown();

    setup_wait(3, 1, 0, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_all(3, "SET");
    num_to(2, "WAIT", 0);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_REPLICAS);
    num_to(0, "WAIT", 1);
    num_to(1, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(wr_last()->votes, 2);
    redlock_release(&L);
    CHECK(waiting(2, "EVALSHA") >= 0);
    teardown();

    /* retried like any failed attempt; the retry's grant counts */
    setup_wait(1, 1, 0, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    num_to(0, "WAIT", 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(ev_status(REDLOCK_EV_RETRY), REDLOCK_ERR_REPLICAS);
    num_to(0, "EVAL", 1);
    advance_to(T.now + 100000);
    ok_to(0, "SET");
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(wr_last()->attempts, 2);
    teardown();
}

/* Proves: WAIT refused (an error reply: an old server, an ACL) fails the
   vote with REPLICAS too, as does a reply that is not a count (PROTOCOL);
   no switch of the node's mode. */
static void test_replicas_wait_refused(void) {
    setup_wait(1, 1, 0, WR_PLAIN, 0, -1);
    redlock_acquire(&L);
    ok_to(0, "SET");
    err_to(0, "WAIT", "NOPERM this user has no permissions to run the 'wait' command");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_REPLICAS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_REPLICAS);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    expect_starts(0, UNDO_PREFIX);
    teardown();
    setup_wait(1, 1, 0, WR_PLAIN, 0, -1);
    redlock_acquire(&L);
    ok_to(0, "SET");
    ok_to(0, "WAIT");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_PROTOCOL);
    num_to(0, "EVAL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: a round that waits for replicas lasts the node timeout plus
   WAIT's timeout: a WAIT unanswered past the node timeout is still
   waited for, and times out (NODE_TIMEOUT) only at their sum. */
static void test_replicas_round_deadline(void) {
    int64_t t0;
    setup_wait(1, 1, 200, WR_PLAIN, 0, -1);
    t0 = T.now;
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(t0 + 60000);
    CHECK_EQ(T.res.n, 0);
    advance_to(t0 + 249000);
    CHECK_EQ(T.res.n, 0);
    advance_to(t0 + 250000);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: a reply inside send (a synchronous transport) goes through the
   WAIT as well. */
static int sync_set_wait(int node, const char *cmd, redlock_reply *r) {
    (void)node;
    if (strncmp(cmd, "SET ", 4) == 0) {
        r->type = REDLOCK_REPLY_STATUS;
        r->str = "OK";
        r->len = 2;
        return 1;
    }
    if (strncmp(cmd, "WAIT ", 5) == 0) {
        r->type = REDLOCK_REPLY_INTEGER;
        r->integer = 1;
        return 1;
    }
    return 0;
}
static void test_replicas_sync(void) {
    setup_wait(3, 1, 0, WR_PLAIN, 0, 0);
    T.sync = sync_set_wait;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(count_cmd(0, "WAIT 1 50"), 3); /* every SET answered before the first WAIT went out */
    T.sync = NULL;
    teardown();
}

/* Proves: a renewal's and an extend's grants wait for replicas too: the
   renewal counts once WAIT says so; one that falls short fails
   (RENEW_FAILED with REPLICAS) and the lock, never renewed again, is
   lost with REPLICAS as its reason; a user's extend falls short with
   REPLICAS. A release waits for nothing. */
static void test_replicas_renewal(void) {
    setup_wait(1, 1, 0, WR_PLAIN, 1, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    run_until_sent(T.qn);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 0);
    expect_sent(0, "WAIT 1 50");
    num_to(0, "WAIT", 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 1);
    run_until_sent(T.qn);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RENEW_FAILED), 1);
    CHECK_EQ(ev_status(REDLOCK_EV_RENEW_FAILED), REDLOCK_ERR_REPLICAS);
    while (redlock_lock_state(&L) == REDLOCK_STATE_HELD && T.timer != REDLOCK_NO_DEADLINE) {
        advance_to(T.timer);
        T.now += 20000; /* each round takes its time */
        if (waiting(0, "EVALSHA") >= 0) num_to(0, "EVALSHA", 1);
        if (waiting(0, "WAIT") >= 0) num_to(0, "WAIT", 0);
    }
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_REPLICAS);
    teardown();

    setup_wait(1, 1, 0, WR_PLAIN, 0, 0);
    redlock_acquire(&L);
    ok_to(0, "SET");
    num_to(0, "WAIT", 1);
    redlock_extend(&L, 2000);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 0);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_REPLICAS);
    redlock_extend(&L, 2000);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(waiting(0, "WAIT"), -1);
    teardown();
}

/* Proves: every kind waits after each write that grants: a fenced lock
   after its acquire script and after its write-back (the fence counts
   once the write-back is on enough replicas); a legacy node after SETNX;
   a readers-writer lock after its acquire and its upgrade. */
static void test_replicas_kinds(void) {
    setup_wait(1, 1, 0, WR_FENCED, 0, -1);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 7);
    expect_sent(0, "WAIT 1 50");
    num_to(0, "WAIT", 1);
    CHECK(fsent_is(2, FENCE_SHA, " 7"));
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 0);
    num_to(0, "WAIT", 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_REPLICAS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_REPLICAS);
    teardown();
    setup_wait(1, 1, 0, WR_FENCED, 0, -1);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 7);
    num_to(0, "WAIT", 1);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 7);
    teardown();

    setup_wait(1, 1, 0, WR_LEGACY, 0, -1);
    redlock_acquire(&L);
    num_to(0, "SETNX", 1);
    CHECK_EQ(T.res.n, 0);
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();

    setup_wait(1, 1, 0, WR_RW, 0, -1);
    redlock_acquire(&L);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_upgrade(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(waiting(0, "WAIT") >= 0, 1);
    num_to(0, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_UPGRADE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_access(&L), REDLOCK_ACCESS_EXCLUSIVE);
    teardown();
}

/* Proves: a fenced acquire decided while a third node's WAIT is still
   out: that node's WAIT, answered during the write-back, does not count
   as a write-back (it has none yet); it gets its own write-back, which
   waits for replicas in turn. */
static void test_replicas_fenced_late(void) {
    setup_wait(3, 1, 0, WR_FENCED, 0, -1);
    redlock_acquire(&L);
    num_all(3, "EVALSHA", 5);
    num_to(0, "WAIT", 1);
    num_to(1, "WAIT", 1);          /* a quorum: the write-back goes to nodes 0 and 1 */
    CHECK(waiting(0, "EVALSHA") >= 0 && waiting(1, "EVALSHA") >= 0);
    CHECK_EQ(waiting(2, "EVALSHA"), -1);
    num_to(2, "WAIT", 1);          /* node 2's acquire counts now: its write-back follows */
    CHECK(waiting(2, "EVALSHA") >= 0);
    num_to(0, "EVALSHA", 1);
    num_to(0, "WAIT", 1);
    CHECK_EQ(T.res.n, 0);          /* one write-back of two: node 2's WAIT was no write-back */
    num_to(2, "EVALSHA", 1);
    num_to(2, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 5);
    teardown();
    /* the same node's WAIT answered once the lock is held: the write-back follows */
    setup_wait(3, 1, 0, WR_FENCED, 0, -1);
    redlock_acquire(&L);
    num_all(3, "EVALSHA", 5);
    num_to(0, "WAIT", 1);
    num_to(1, "WAIT", 1);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    num_to(0, "WAIT", 1);
    num_to(1, "WAIT", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_followup(&L), 1);
    num_to(2, "WAIT", 1);
    CHECK(waiting(2, "EVALSHA") >= 0);
    teardown();
}

static void run_replicas(int argc, char **argv) {
    RUN_T(test_replicas_off_by_default);
    RUN_T(test_replicas_config);
    RUN_T(test_replicas_grant_counts);
    RUN_T(test_replicas_short);
    RUN_T(test_replicas_wait_refused);
    RUN_T(test_replicas_round_deadline);
    RUN_T(test_replicas_sync);
    RUN_T(test_replicas_renewal);
    RUN_T(test_replicas_kinds);
    RUN_T(test_replicas_fenced_late);
}
