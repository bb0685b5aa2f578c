/* stats.c - the client's statistics (section 14) against scripted
   scenarios whose counts are known: acquires by outcome, attempts, losses
   by reason, renewals, extends, releases, locks held and their high-water
   mark across re-acquires, deinit and reset, failed votes by node and
   class, and the latency histograms. Built a second time with
   REDLOCK_NO_STATS (tests/core/stats_off.c), where every count reads 0. */

#ifdef REDLOCK_NO_STATS
#define COUNTED(n) (0 * (n)) /* (n still read: no unused variables) */
#else
#define COUNTED(n) (n)
#endif

static redlock_stats stats_now(void) {
    redlock_stats s;
    memset(&s, 0xAB, sizeof s); /* every field must be written */
    CHECK_EQ(redlock_client_stats(&C, &s), REDLOCK_OK);
    return s;
}

/* Answers every command still waiting (SET by `set`, a release or undo
   script with 0, i.e. nothing of ours there) and fires the timer, until
   L's next result comes. */
static void answer_until_result(void (*set)(int k)) {
    int guard = 200, before = T.res.n, k;
    while (T.res.n == before && guard-- > 0) {
        for (k = 0; k < T.qn && T.res.n == before; k++) {
            if (T.q[k].answered) continue;
            if (starts(k, "SET ")) set(k);
            else if (starts(k, "EVAL")) num(k, 0);
        }
        if (T.res.n == before && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer);
    }
    CHECK(T.res.n > before);
}
/* Every script still waiting is answered 0 (an undo or cleanup ends). */
static void answer_scripts(void) {
    int k;
    for (k = 0; k < T.qn; k++)
        if (!T.q[k].answered && starts(k, "EVAL")) num(k, 0);
}
static void set_nil(int k) { rep(k, REDLOCK_REPLY_NIL, 0, NULL); }
static void set_refused(int k) { fail(k, REDLOCK_ERR_CONNECT); }

static uint64_t failures_of(const redlock_stats *s, int cls) {
    uint64_t n = 0;
    int i;
    for (i = 0; i < REDLOCK_MAX_NODES; i++) n += s->node_failures[i][cls];
    return n;
}

/* Proves: three acquires (won after 1.5 ms; LOCKED after three attempts;
   NO_QUORUM after three attempts of connection failures) and a release
   are counted by outcome, with no on_event callback set; the votes
   against (another holder) are no node failures, the refused
   connections are, by node and class; acquire_us holds the one win. */
static void test_stats_acquire_outcomes(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_callbacks cb;
    redlock_stats s;
    int i;
    base_config(&cfg, 3);
    base_opts(&o, 1000, 0);
    base_callbacks(&cb);
    cb.on_event = NULL;
    setup_callbacks(&cfg, &o, &cb);
    s = stats_now();
    CHECK_EQ(s.acquires, 0);
    CHECK_EQ(s.held, 0);
    CHECK_EQ(s.acquire_us.count, 0);
    redlock_acquire(&L);
    T.now += 1500;
    ok_all(3, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(stats_now().held, COUNTED(1));
    redlock_release(&L);
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_acquire(&L);
    answer_until_result(set_nil);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    redlock_acquire(&L);
    answer_until_result(set_refused);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    s = stats_now();
    CHECK_EQ(s.acquires, COUNTED(3));
    CHECK_EQ(s.attempts, COUNTED(7));
    CHECK_EQ(s.acquired, COUNTED(1));
    CHECK_EQ(s.acquire_busy, COUNTED(1));
    CHECK_EQ(s.acquire_no_quorum, COUNTED(1));
    CHECK_EQ(s.acquire_timeout, 0);
    CHECK_EQ(s.acquire_cancelled, 0);
    CHECK_EQ(s.acquire_other, 0);
    CHECK_EQ(s.releases, COUNTED(1));
    CHECK_EQ(s.release_failed, 0);
    CHECK_EQ(s.held, 0);
    CHECK_EQ(s.held_max, COUNTED(1));
    CHECK_EQ(s.lost, 0);
    /* nodes 0 and 1 failed each attempt; it was decided before node 2's failure */
    for (i = 0; i < 2; i++) CHECK_EQ(s.node_failures[i][REDLOCK_NODE_FAIL_CONNECT], COUNTED(3));
    CHECK_EQ(failures_of(&s, REDLOCK_NODE_FAIL_CONNECT), COUNTED(6));
    CHECK_EQ(failures_of(&s, REDLOCK_NODE_FAIL_TIMEOUT) + failures_of(&s, REDLOCK_NODE_FAIL_SERVER) +
             failures_of(&s, REDLOCK_NODE_FAIL_PROTOCOL) + failures_of(&s, REDLOCK_NODE_FAIL_OTHER), 0);
    CHECK_EQ(s.acquire_us.count, COUNTED(1));
    CHECK_EQ(s.acquire_us.sum_us, COUNTED(1500));
    CHECK_EQ(s.acquire_us.max_us, COUNTED(1500));
    CHECK_EQ(s.acquire_us.bucket[11], COUNTED(1)); /* [1024, 2048) */
    CHECK_EQ(s.renewals + s.extends + s.lost + s.handoff_us.count + s.renewal_us.count, 0);
    teardown();
}

/* Proves: failed votes are classed by their status (a timeout, an error
   reply, a malformed reply), and a cancelled acquire and a timed-out one
   have their own counts. */
static void test_stats_failure_classes(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    redlock_stats s;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "OOM command not allowed when used memory > 'maxmemory'.");
    raw_to(1, "SET", REDLOCK_REPLY_STRING, NULL, 3); /* a length without bytes: PROTOCOL */
    advance_to(T.now + 50000);                 /* node 2: NODE_TIMEOUT */
    redlock_release(&L);                       /* cancels the acquire (waiting for its retry) */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CANCELLED);
    s = stats_now();
    CHECK_EQ(s.node_failures[0][REDLOCK_NODE_FAIL_SERVER], COUNTED(1));
    CHECK_EQ(s.node_failures[1][REDLOCK_NODE_FAIL_PROTOCOL], COUNTED(1));
    CHECK_EQ(s.node_failures[2][REDLOCK_NODE_FAIL_TIMEOUT], COUNTED(1));
    CHECK_EQ(s.acquire_cancelled, COUNTED(1));
    CHECK_EQ(s.acquire_no_quorum + s.acquire_other, 0);
    teardown();
    /* a wait that runs out: TIMEOUT */
    base_config(&cfg, 1);
    cfg.retry_count = 100;
    cfg.wait_ms = 250;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    answer_until_result(set_nil);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    s = stats_now();
    CHECK_EQ(s.acquire_timeout, COUNTED(1));
    CHECK_EQ(s.acquire_busy, 0);
    CHECK_EQ(failures_of(&s, REDLOCK_NODE_FAIL_CONNECT) + failures_of(&s, REDLOCK_NODE_FAIL_OTHER), 0);
    teardown();
}

/* Proves: a loss is counted by its reason, STOLEN (an extend finds
   another token) and EXPIRED (the validity runs out unrenewed), and `held`
   comes down with each; extends by outcome. */
static void test_stats_lost(void) {
    redlock_stats s;
    setup_held(3, 1000);
    redlock_extend(&L, 0);
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    redlock_extend(&L, 0);
    num_to(0, "EVALSHA", -1); num_to(1, "EVALSHA", -1);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    s = stats_now();
    CHECK_EQ(s.held, 0);
    CHECK_EQ(s.lost, COUNTED(1));
    CHECK_EQ(s.lost_stolen, COUNTED(1));
    CHECK_EQ(s.extends, COUNTED(1));
    CHECK_EQ(s.extend_failed, COUNTED(1)); /* the extend answered STOLEN */
    answer_scripts();                          /* the cleanup after LOST */
    redlock_acquire(&L);
    ok_all(3, "SET");
    CHECK_EQ(stats_now().held, COUNTED(1));
    advance_to(redlock_lock_valid_until(&L));
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    s = stats_now();
    CHECK_EQ(s.held, 0);
    CHECK_EQ(s.held_max, COUNTED(1));
    CHECK_EQ(s.lost, COUNTED(2));
    CHECK_EQ(s.lost_stolen, COUNTED(1));
    CHECK_EQ(s.lost_expired, COUNTED(1));
    CHECK_EQ(s.lost_quorum + s.lost_hold_limit + s.lost_other, 0);
    CHECK_EQ(s.acquired, COUNTED(2));
    teardown();
}

/* Proves: the watchdog's rounds are counted as renewals (a success with
   its round time in renewal_us, a failure) and not as extends. */
static void test_stats_renewals(void) {
    redlock_stats s;
    setup_n(1, 1, 900);                        /* watchdog: every 300 ms */
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(T.timer);
    T.now += 300;
    num_to(0, "EVALSHA", 1);
    advance_to(T.timer);
    fail_to(0, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    s = stats_now();
    CHECK_EQ(s.renewals, COUNTED(1));
    CHECK_EQ(s.renewal_failed, COUNTED(1));
    CHECK_EQ(s.renewal_us.count, COUNTED(1));
    CHECK_EQ(s.renewal_us.sum_us, COUNTED(300));
    CHECK_EQ(s.renewal_us.bucket[9], COUNTED(1)); /* [256, 512) */
    CHECK_EQ(s.node_failures[0][REDLOCK_NODE_FAIL_CONNECT], COUNTED(1));
    CHECK_EQ(s.extends + s.extend_failed, 0);
    CHECK_EQ(s.held, COUNTED(1));
    teardown();
}

/* Proves: `held` follows every way into and out of HELD (acquire, adopt,
   release, deinit of a held handle, the client's deinit and init), held_max
   is the high-water mark, and reset zeroes the counters but keeps held
   (held_max restarts from it). */
static void test_stats_held(void) {
    redlock_lock l2, l3;
    redlock_lock_opts o;
    redlock_stats s;
    setup_held(1, 1000);
    base_opts(&o, 1000, 0);
    o.key = "res2";
    CHECK_EQ(redlock_lock_init(&l2, &C, &o), REDLOCK_OK);
    o.key = "res3";
    CHECK_EQ(redlock_lock_init(&l3, &C, &o), REDLOCK_OK);
    redlock_acquire(&l2);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_adopt(&l3, ADOPTED, 1000), REDLOCK_OK);
    s = stats_now();
    CHECK_EQ(s.held, COUNTED(3));
    CHECK_EQ(s.held_max, COUNTED(3));
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(stats_now().held, COUNTED(2));
    redlock_client_stats_reset(&C);
    s = stats_now();
    CHECK_EQ(s.held, COUNTED(2));
    CHECK_EQ(s.held_max, COUNTED(2));
    CHECK_EQ(s.acquires + s.acquired + s.releases + s.attempts + s.acquire_us.count, 0);
    redlock_lock_deinit(&l2);                  /* held: no longer counted */
    CHECK_EQ(stats_now().held, COUNTED(1));
    redlock_acquire(&L);
    ok_to(0, "SET");
    s = stats_now();
    CHECK_EQ(s.held, COUNTED(2));
    CHECK_EQ(s.held_max, COUNTED(2));
    CHECK_EQ(s.acquired, COUNTED(1));
    CHECK_EQ(redlock_lock_init(&l3, &C, &o), REDLOCK_OK); /* again, while held */
    CHECK_EQ(stats_now().held, COUNTED(1));
    redlock_client_deinit(&C);                 /* L detached */
    CHECK_EQ(stats_now().held, 0);
    CHECK_EQ(stats_now().acquired, COUNTED(1)); /* still readable */
    setup_n(1, 0, 1000);                       /* init zeroes */
    s = stats_now();
    CHECK_EQ(s.acquired + s.held_max + s.acquires, 0);
    teardown();
    CHECK_EQ(redlock_client_stats(NULL, &s), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_client_stats(&C, NULL), REDLOCK_ERR_INVALID);
    redlock_client_stats_reset(NULL);
}

/* Proves: a release notification that starts an attempt which wins gives a
   hand-off time from the notification (not from the attempt) to the win;
   a win that no notification started gives none. */
static void test_stats_handoff(void) {
    redlock_stats s;
    int64_t woken;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET");
    woken = T.now;
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* during the undo: the attempt waits for it */
    T.now += 400;
    num_to(0, "EVAL", 0);
    T.now += 600;
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    s = stats_now();
    CHECK_EQ(s.handoff_us.count, COUNTED(1));
    CHECK_EQ(s.handoff_us.sum_us, COUNTED((uint64_t)(T.now - woken)));
    CHECK_EQ(s.acquire_us.count, COUNTED(1));
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    redlock_acquire(&L);                       /* won by its retry: no hand-off */
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    advance_to(T.timer);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    s = stats_now();
    CHECK_EQ(s.handoff_us.count, COUNTED(1));
    CHECK_EQ(s.acquire_us.count, COUNTED(2));
    teardown();
}

#ifndef REDLOCK_NO_STATS
/* Proves: samples land in their bit-length bucket at the edges (0 us,
   1 us, 2^30 - 1, 2^30 and beyond, a negative one as 0), and quantiles
   read the bucket's last value, never above the largest sample: q = 0 the
   smallest sample's bucket, q = 1 the largest sample; -1 when empty or
   q is out of range. */
static void test_stats_histogram(void) {
    redlock_histogram h;
    volatile double zero = 0;
    int i;
    memset(&h, 0, sizeof h);
    CHECK_EQ(redlock_histogram_quantile(&h, 0.5), -1);
    CHECK_EQ(redlock_histogram_quantile(NULL, 0.5), -1);
    redlock__sample(&h, 0);
    redlock__sample(&h, -5);
    redlock__sample(&h, 1);
    redlock__sample(&h, 3);
    redlock__sample(&h, ((int64_t)1 << 30) - 1);
    redlock__sample(&h, (int64_t)1 << 30);
    redlock__sample(&h, (int64_t)1 << 40);
    CHECK_EQ(h.count, 7);
    CHECK_EQ(h.bucket[0], 2);
    CHECK_EQ(h.bucket[1], 1);
    CHECK_EQ(h.bucket[2], 1);
    CHECK_EQ(h.bucket[30], 1);
    CHECK_EQ(h.bucket[31], 2);
    CHECK_EQ(h.max_us, (uint64_t)1 << 40);
    CHECK_EQ(h.sum_us, 4 + ((uint64_t)1 << 30) - 1 + ((uint64_t)1 << 30) + ((uint64_t)1 << 40));
    CHECK_EQ(redlock_histogram_quantile(&h, 0), 0);
    CHECK_EQ(redlock_histogram_quantile(&h, 0.25), 0);       /* rank 2 of 7: still 0 us */
    CHECK_EQ(redlock_histogram_quantile(&h, 0.4), 1);        /* rank 3 */
    CHECK_EQ(redlock_histogram_quantile(&h, 0.5), 3);        /* rank 4: [2, 4) */
    CHECK_EQ(redlock_histogram_quantile(&h, 0.7), ((int64_t)1 << 30) - 1); /* rank 5 */
    CHECK_EQ(redlock_histogram_quantile(&h, 0.8), (int64_t)1 << 40); /* rank 6: the last bucket */
    CHECK_EQ(redlock_histogram_quantile(&h, 0.99), (int64_t)1 << 40);
    CHECK_EQ(redlock_histogram_quantile(&h, 1), (int64_t)1 << 40);
    CHECK_EQ(redlock_histogram_quantile(&h, -0.01), -1);
    CHECK_EQ(redlock_histogram_quantile(&h, 1.01), -1);
    CHECK_EQ(redlock_histogram_quantile(&h, zero / zero), -1); /* NaN */
    /* one sample of 1000 us: every quantile is 1000, not its bucket's 1023 */
    memset(&h, 0, sizeof h);
    redlock__sample(&h, 1000);
    for (i = 0; i <= 4; i++) CHECK_EQ(redlock_histogram_quantile(&h, i / 4.0), 1000);
    /* 99 fast and 1 slow: p99 is fast, p100 is the slow one */
    memset(&h, 0, sizeof h);
    for (i = 0; i < 99; i++) redlock__sample(&h, 100);
    redlock__sample(&h, 5000);
    CHECK_EQ(redlock_histogram_quantile(&h, 0.98), 127);
    CHECK_EQ(redlock_histogram_quantile(&h, 0.995), 5000);
}
#endif

static void run_stats(int argc, char **argv) {
    RUN_T(test_stats_acquire_outcomes);
    RUN_T(test_stats_failure_classes);
    RUN_T(test_stats_lost);
    RUN_T(test_stats_renewals);
    RUN_T(test_stats_held);
    RUN_T(test_stats_handoff);
#ifndef REDLOCK_NO_STATS
    RUN_T(test_stats_histogram);
#endif
}
