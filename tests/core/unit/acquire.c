/* acquire.c - acquiring: SET NX PX on every node, the quorum decided as
   early as the votes allow, validity, retries and their jitter, the wait
   deadline, failures to send, a synchronous transport, sixteen nodes. */

static void test_acquire_single(void) {
    char expect[128];
    int64_t start;
    setup_n(1, 0, 1000);
    start = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    snprintf(expect, sizeof expect, "SET res %s NX PX 1000", redlock_lock_token(&L));
    expect_sent(0, expect);
    CHECK_EQ(strlen(redlock_lock_token(&L)), REDLOCK_TOKEN_LEN);
    CHECK_EQ(T.timer, start + 50000);   /* node timeout armed */
    T.now += 300;
    ok_to(0, "SET");
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_OK);
    CHECK_EQ(T.res.r[0].votes, 1);
    CHECK_EQ(redlock_lock_valid_until(&L), start + 1000000 - (10000 + 2000)); /* ttl - drift */
    CHECK_EQ(T.timer, redlock_lock_valid_until(&L)); /* will report expiry */
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(T.ev[T.evn - 1].ttl_share_permille, 12); /* (0.3 ms + 12 ms) / 1000 ms */
    teardown();
}

static void test_token_unique(void) {
    char first[REDLOCK_TOKEN_LEN + 1];
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    strcpy(first, redlock_lock_token(&L));
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    redlock_acquire(&L);
    CHECK(strcmp(first, redlock_lock_token(&L)) != 0);
    teardown();
}

static void test_quorum_early(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    CHECK_EQ(T.qn, 3);
    ok_to(0, "SET");
    CHECK_EQ(T.res.n, 0);
    ok_to(2, "SET");
    CHECK_EQ(T.res.n, 1);                 /* decided without node 1 */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    ok_to(1, "SET");                      /* the straggler changes nothing */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

static void test_fail_rollback_retry(void) {
    int k;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(T.qn, 3);
    nil_to(1, "SET");                     /* quorum impossible: decided now */
    CHECK_EQ(T.res.n, 0);                 /* retries left: no result yet */
    CHECK_EQ(T.qn, 6);                    /* rollback to all nodes */
    for (k = 3; k < 6; k++) CHECK(starts(k, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1]) if ARGV[2] then local k=KEYS[1] "));
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.timer, T.now + 50000);     /* first the rollback's deadline */
    ok_to(2, "SET");                      /* stale reply of attempt 1: ignored */
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 0); num_to(2, "EVAL", 0); /* rollback done: now the retry delay */
    CHECK_EQ(T.timer, T.now + 100000);    /* retry delay, no jitter */
    advance_to(T.now + 100000);
    CHECK_EQ(T.qn, 9);                    /* attempt 2 */
    expect_starts(0, "SET res");
    nil_to(0, "SET"); nil_to(1, "SET");
    run_until_sent(12);                   /* attempt 3 */
    nil_to(0, "SET"); nil_to(1, "SET");
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.res.r[0].attempts, 3);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 1);
    teardown();
}

static void test_timeouts_no_quorum(void) {
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    advance_to(T.now + 49999);            /* early timer: nothing happens */
    CHECK_EQ(T.qn, 3);
    advance_to(T.now + 1);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_NODE_TIMEOUT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    num_to(1, "SET", 1);                  /* late answer after timeout: ignored */
    CHECK_EQ(count_ev(REDLOCK_EV_VOTE), 3);
    while (T.res.n == 0 && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    CHECK_EQ(T.res.r[0].attempts, 3);
    teardown();
}

/* Proves: a wait deadline is kept. Retries every 100 ms, wait 250 ms, node
   timeout 50: attempts at 0, 100 and 200 ms; the retry due at 300 would end
   too late, so one last attempt starts at 200 (250 - 50, the last moment
   its round can still end in time); when it fails too, TIMEOUT is reported
   at 250 ms, not before. */
static void test_wait_deadline(void) {
    redlock_lock_opts o;
    int64_t t0;
    int k = 0, attempt;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    memset(&o, 0, sizeof o);
    o.key = "res";
    o.ttl_ms = 1000;
    o.retry_count = 100;
    o.wait_ms = 250;
    o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    t0 = T.now;
    redlock_acquire(&L);
    for (attempt = 1; attempt <= 4; attempt++) {
        expect_starts(0, "SET res");
        CHECK_EQ(T.now, t0 + (attempt < 4 ? attempt - 1 : 2) * 100000);
        nil_to(0, "SET");                 /* held elsewhere */
        num_to(0, "EVAL", 0);             /* the undo */
        CHECK_EQ(T.res.n, 0);
        if (attempt < 4) {
            CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, attempt < 3 ? 100000 : 0);
            run_until_sent(k + 2);
        }
        k += 2;
    }
    CHECK_EQ(T.timer, t0 + 250000);       /* nothing more to try: wait for the deadline */
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 0);
    advance_to(t0 + 249999);
    CHECK_EQ(T.res.n, 0);
    advance_to(t0 + 250000);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].attempts, 4);
    CHECK_EQ(T.res.r[0].elapsed_us, 250000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(last_ev(REDLOCK_EV_FAILED)->status, REDLOCK_ERR_TIMEOUT);
    CHECK_EQ(T.qn, 8);
    teardown();
}

/* Proves: a wait shorter than the retry delay still gets its last attempt
   (at wait - node timeout) instead of giving up after the first; a wait
   shorter than one node timeout gives up at the deadline. */
static void test_wait_shorter_than_delay(void) {
    redlock_lock_opts o;
    int64_t t0;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        setup_n(1, 0, 1000);
        redlock_lock_deinit(&L);
        memset(&o, 0, sizeof o);
        o.key = "res";
        o.ttl_ms = 1000;
        o.retry_delay_ms = 500;
        o.wait_ms = pass ? 30 : 200;
        o.on_result = t_result;
        redlock_lock_init(&L, &C, &o);
        t0 = T.now;
        redlock_acquire(&L);
        nil_to(0, "SET");
        num_to(0, "EVAL", 0);
        CHECK_EQ(T.res.n, 0);
        if (!pass) {
            CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 150000);
            run_until_sent(2);
            CHECK_EQ(T.now, t0 + 150000);
            expect_starts(0, "SET res");
            ok_to(0, "SET");              /* won on the last try */
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        } else {
            CHECK_EQ(T.timer, t0 + 30000);
            advance_to(t0 + 30000);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
            CHECK_EQ(T.res.r[0].elapsed_us, 30000);
        }
        teardown();
    }
}

static void test_send_failure(void) {
    setup_n(3, 0, 1000);
    T.fail_send_node = 1;
    redlock_acquire(&L);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_TRANSPORT);
    ok_to(0, "SET"); ok_to(2, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

static void test_validity_exhausted(void) {
    setup_n(1, 0, 10);                    /* ttl 10 ms, drift 2.1 ms */
    redlock_acquire(&L);
    T.now += 8000;                        /* answer after 8 ms: validity gone */
    ok_to(0, "SET");
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.evn > 0 && T.ev[T.evn - 1].status == REDLOCK_ERR_VALIDITY, 1);
    teardown();
}
static void test_sync_transport(void) {
    int n;
    for (n = 1; n <= 5; n += 2) {
        setup_n(n, 0, 1000);
        T.sync = sync_ok;
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        CHECK_EQ(T.res.n, 1);             /* decided before acquire returned */
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        CHECK_EQ(T.qn, n);                /* every node still got its SET */
        CHECK_EQ(redlock_release(&L), REDLOCK_OK);
        CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
        teardown();
    }
}

/* Proves: a transport that refuses a command with QUEUE_FULL costs that
   node's vote only; an operation that then misses its quorum ends
   OVERLOADED (acquire, extend, release), and NO_QUORUM when the missing
   answers were plain node failures. */
static void test_queue_full_overloaded(void) {
    /* acquire on N=3 with node 0's queue full: held by the other two */
    setup_no_retry(3, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_QUEUE_FULL);
    ok_to(1, "SET");
    ok_to(2, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* extend: node 0 full, node 1 fails, node 2 answers: too few */
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    fail_to(1, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_OVERLOADED);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    /* release: the same */
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    fail_to(1, "EVALSHA", REDLOCK_ERR_TRANSPORT);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_OVERLOADED);
    teardown();
    /* a single node whose queue is full: the acquire ends OVERLOADED */
    setup_no_retry(1, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_QUEUE_FULL;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_OVERLOADED);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_OVERLOADED), "unknown status") != 0);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_QUEUE_FULL), "unknown status") != 0);
    teardown();
    /* a node error of the adapters' (TLS) is the vote's status, as given;
       a refusal, it ends the acquire as its own (test_tls_refused) */
    setup_no_retry(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", REDLOCK_ERR_TLS);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TLS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_TLS), "unknown status") != 0);
    teardown();
    /* the control: a plain transport failure is NO_QUORUM */
    setup_no_retry(1, 0, 1000);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_TRANSPORT;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* splitmix64: deterministic, well mixed. */
static uint64_t mix_state;
static int mix_random(void *u, void *buf, size_t len) {
    unsigned char *p = (unsigned char *)buf;
    (void)u;
    if (T.fail_random) return -1;
    while (len) {
        uint64_t z = (mix_state += 0x9E3779B97F4A7C15ull);
        size_t k;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (k = 0; k < 8 && len; k++, len--) { *p++ = (unsigned char)z; z >>= 8; }
    }
    return 0;
}
static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}
typedef struct delay_stats { int n, bad_timer, distinct; int64_t min, max; double mean, var; } delay_stats;

/* n failed attempts of a 1-node lock with the given retry settings (client
   level, or lock level if on_lock): the delays from EV_RETRY, each checked
   against the timer deadline the core asks for. */
static delay_stats retry_delays(int64_t delay_ms, int64_t jitter_ms, int on_lock, int fail_random, int n, int64_t *d) {
    redlock_config cfg;
    redlock_lock_opts o;
    delay_stats s;
    double sum = 0, sq = 0;
    int i;
    memset(&s, 0, sizeof s);
    base_config(&cfg, 1);
    cfg.retry_count = n;
    base_opts(&o, 1000, 0);
    if (on_lock) {
        cfg.retry_delay_ms = 7;
        cfg.retry_jitter_ms = 3;
        o.retry_delay_ms = delay_ms;
        o.retry_jitter_ms = jitter_ms;
    } else {
        cfg.retry_delay_ms = delay_ms;
        cfg.retry_jitter_ms = jitter_ms;
    }
    mix_state = 12345;
    setup_random(&cfg, &o, mix_random);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    T.fail_random = fail_random;
    for (i = 0; i < n; i++) {
        const redlock_event *ev;
        int64_t failed_at = T.now;
        T.evn = 0;
        nil_to(0, "SET");                 /* the attempt fails ... */
        ev = last_ev(REDLOCK_EV_RETRY);
        if (!ev || T.qn != 2) { CHECK(ev != NULL); CHECK_EQ(T.qn, 2); break; }
        d[i] = ev->delay_us;
        num_to(0, "EVAL", 0);             /* ... its undo is done: the retry is due at failed_at + delay */
        if (T.qn == 2) {
            if (T.timer != failed_at + d[i]) s.bad_timer++;
            advance_to(T.timer);
        } else if (d[i] != 0) {
            s.bad_timer++;
        }
        if (T.qn != 3 || !starts(2, "SET res ") || T.now != failed_at + d[i]) { s.bad_timer++; break; }
        T.q[0] = T.q[2];
        T.qn = 1;
    }
    s.n = i;
    teardown();
    if (s.n == 0) return s;
    s.min = s.max = d[0];
    for (i = 0; i < s.n; i++) {
        if (d[i] < s.min) s.min = d[i];
        if (d[i] > s.max) s.max = d[i];
        sum += (double)d[i];
        sq += (double)d[i] * (double)d[i];
    }
    s.mean = sum / s.n;
    s.var = sq / s.n - s.mean * s.mean;
    qsort(d, (size_t)s.n, sizeof *d, cmp_i64);
    for (i = 0; i < s.n; i++) s.distinct += i == 0 || d[i] != d[i - 1];
    return s;
}

/* Proves: retry delay 100 ms +- 50 ms: every delay (EV_RETRY and the timer) in [50, 150] ms, mean ~100 ms, both ends reached, spread uniform-like (sd ~28.9 ms). */
static void test_retry_jitter_statistics(void) {
    static int64_t d[2000];
    const double sd_uniform = 28867.5;   /* 100 ms / sqrt(12), in µs */
    int on_lock;
    for (on_lock = 0; on_lock < 2; on_lock++) {
        delay_stats s = retry_delays(100, 50, on_lock, 0, 2000, d);
        CHECK_EQ(s.n, 2000);
        CHECK_EQ(s.bad_timer, 0);
        CHECK(s.min >= 50000 && s.max <= 150000);
        CHECK(s.min < 53000 && s.max > 147000);
        CHECK(s.mean > 97000 && s.mean < 103000);
        CHECK(s.var > (sd_uniform - 5000) * (sd_uniform - 5000) && s.var < (sd_uniform + 5000) * (sd_uniform + 5000));
        CHECK(s.distinct > 1000);
        if (s.mean <= 97000 || s.mean >= 103000 || s.min < 50000 || s.max > 150000)
            printf("#   min %lld max %lld mean %.0f\n", (long long)s.min, (long long)s.max, s.mean);
    }
}

/* Proves: jitter < 0 means none (exactly the delay, client or lock setting); a failing random source gives exactly the delay; jitter above the delay clamps at 0, never below. */
static void test_retry_jitter_edges(void) {
    static int64_t d[400];
    delay_stats s;
    int i, zeros = 0;
    s = retry_delays(100, -1, 0, 0, 200, d);
    CHECK_EQ(s.n, 200);
    CHECK_EQ(s.bad_timer, 0);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(100, -1, 1, 0, 200, d);   /* lock says none, client says 3 ms */
    CHECK_EQ(s.n, 200);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(100, 50, 0, 1, 200, d);   /* random fails: the base delay */
    CHECK_EQ(s.n, 200);
    CHECK_EQ(s.bad_timer, 0);
    CHECK(s.min == 100000 && s.max == 100000);
    s = retry_delays(10, 50, 0, 0, 400, d);    /* 10 ms +- 50 ms: [-40, 60] clamped at 0 */
    CHECK_EQ(s.n, 400);
    CHECK_EQ(s.bad_timer, 0);
    for (i = 0; i < s.n; i++) zeros += d[i] == 0;
    CHECK_EQ(s.min, 0);
    CHECK(s.max <= 60000 && s.max > 55000);
    CHECK(zeros > 120 && zeros < 200);         /* ~40% */
    CHECK(s.mean > 15000 && s.mean < 21000);   /* E[max(0, U(-40, 60))] = 18 ms */
    s = retry_delays(3, 0, 1, 0, 200, d);      /* lock jitter 0: the client's 3 ms, delay 3 ms */
    CHECK_EQ(s.n, 200);
    CHECK(s.min >= 0 && s.max <= 6000 && s.distinct > 50);
}

/* Proves: the delay is delay - jitter + (r mod (2 * jitter + 1)) exactly: r = 0 gives 50 ms, r = 2 * jitter 150 ms, r = 2 * jitter + 1 wraps to 50 ms. */
static void test_retry_jitter_exact_values(void) {
    static const struct { uint64_t r; int64_t delay; } c[] = {
        {0, 50000}, {1, 50001}, {50000, 100000}, {100000, 150000}, {100001, 50000},
        {100001 * 7 + 3, 50003}, {~(uint64_t)0, 50000 + (int64_t)(~(uint64_t)0 % 100001)},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        base_config(&cfg, 1);
        cfg.retry_delay_ms = 100;
        cfg.retry_jitter_ms = 50;
        base_opts(&o, 1000, 0);
        fixed_r = c[k].r;
        setup_random(&cfg, &o, fixed_random);
        redlock_acquire(&L);
        nil_to(0, "SET");
        ev = last_ev(REDLOCK_EV_RETRY);
        CHECK(ev && ev->delay_us == c[k].delay);
        num_to(0, "EVAL", 0);
        CHECK_EQ(T.timer, T.now + c[k].delay);
        teardown();
    }
}

/* Proves: with 16 nodes the quorum is 9: 8 OKs + 7 NILs wait for the 16th, which decides either way; 8 failures decide at once; the undo goes to all 16; tags name their node. */
static void test_sixteen_nodes_acquire(void) {
    int k, pass;
    for (pass = 0; pass < 2; pass++) {
        setup_no_retry(16, 0, 1000);
        redlock_acquire(&L);
        CHECK_EQ(T.qn, 16);
        for (k = 0; k < 16; k++) {
            CHECK_EQ(T.q[k].node, k);
            CHECK_EQ(redlock_tag_node(T.q[k].tag), k);
        }
        for (k = 0; k < 8; k++) ok_to(k, "SET");
        for (k = 8; k < 15; k++) nil_to(k, "SET");
        CHECK_EQ(T.res.n, 0);
        CHECK_EQ(T.qn, 16);
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
        if (pass == 0) {
            ok_to(15, "SET");
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
            CHECK_EQ(T.res.r[0].votes, 9);
        } else {
            nil_to(15, "SET");
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(T.res.r[0].votes, 8);
            CHECK_EQ(count_cmd(16, "EVAL if redis.call('get'"), 16);
        }
        teardown();
    }
    /* eight failures (7 NILs and an error) decide before the other 8 answer */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 7; k++) nil_to(k, "SET");
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(T.qn, 16);
    fail_to(7, "SET", REDLOCK_ERR_CONNECT);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 32);
    for (k = 16; k < 32; k++) {
        CHECK(starts(k, "EVAL if redis.call('get'"));
        CHECK_EQ(T.q[k].node, k - 16);
        CHECK_EQ(redlock_tag_node(T.q[k].tag), k - 16);
    }
    for (k = 8; k < 16; k++) ok_to(k, "SET"); /* late OKs of the failed attempt: ignored */
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    teardown();
    /* eight errors only: NO_QUORUM */
    setup_no_retry(16, 0, 1000);
    redlock_acquire(&L);
    for (k = 0; k < 8; k++) fail_to(k, "SET", REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: validity = round start + ttl - (ttl * drift_factor + clock_drift) exactly, minus one node timeout once any node is legacy; after an extend to X, round start + X - drift(X); results and events carry the same numbers. */
static void test_validity_formula_exact(void) {
    int legacy;
    for (legacy = 0; legacy < 3; legacy++) {  /* modern; 1 legacy node; 3 nodes, one legacy */
        redlock_config cfg;
        redlock_lock_opts o;
        const redlock_event *ev;
        int64_t t0, t1, d3000, d2000, slack, before, k, nodes = legacy == 2 ? 3 : 1;
        char tok[REDLOCK_TOKEN_LEN + 1];
        base_config(&cfg, (int)nodes);
        cfg.drift_factor = 0.015625;      /* 1/64: exact in binary */
        cfg.clock_drift_ms = 7;
        cfg.node_timeout_ms = 80;
        if (legacy) cfg.mode[nodes - 1] = REDLOCK_MODE_LEGACY;
        base_opts(&o, 3000, 0);
        setup_with(&cfg, &o);
        d3000 = 46875 + 7000 + (legacy ? 80000 : 0);
        d2000 = 31250 + 7000 + (legacy ? 80000 : 0);
        t0 = T.now;
        redlock_acquire(&L);
        strcpy(tok, redlock_lock_token(&L));
        CHECK_EQ(T.timer, t0 + 80000);
        T.now += 5000;
        if (legacy == 1) num_to(0, "SETNX", 1);
        else { ok_to(0, "SET"); if (nodes == 3) num_to(2, "SETNX", 1); }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + 3000000 - d3000);
        CHECK_EQ(T.res.r[0].validity_us, t0 + 3000000 - d3000 - T.now);
        CHECK_EQ(T.res.r[0].elapsed_us, 5000);
        ev = last_ev(REDLOCK_EV_ACQUIRED);
        CHECK(ev != NULL);
        if (ev) {
            CHECK_EQ(ev->validity_us, t0 + 3000000 - d3000 - T.now);
            CHECK_EQ(ev->elapsed_us, 5000);
            CHECK_EQ(ev->votes, nodes == 3 ? 2 : 1);
            CHECK_EQ(ev->ttl_share_permille, (5000 + d3000) * 1000 / 3000000);
        }
        /* extend to 2 s, answered 3 ms after it went out */
        T.now = t0 + 1000000;
        t1 = T.now;
        before = redlock_lock_valid_until(&L);
        k = T.qn;
        CHECK_EQ(redlock_extend(&L, 2000), REDLOCK_OK);
        T.now += 3000;
        if (legacy == 1) {
            expect_sent(0, "GET res");
            str_to(0, "GET", legacy_value(T.wall + 3001, tok));
            expect_starts(0, "GETSET res ");
            str_to(0, "GETSET", legacy_value(T.wall + 3001, tok));
        } else {
            CHECK(starts((int)k, EXTEND_SHA) && ends((int)k, " 2000"));
            num_to(0, "EVALSHA", 1);
            if (nodes == 3) num_to(1, "EVALSHA", 1);
        }
        CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
        CHECK_EQ(redlock_lock_valid_until(&L), t1 + 2000000 - d2000);
        CHECK_EQ(T.res.r[1].validity_us, t1 + 2000000 - d2000 - T.now);
        CHECK_EQ(T.res.r[1].elapsed_us, 3000);
        slack = before - t1;
        ev = last_ev(REDLOCK_EV_RENEWED);
        CHECK(ev && ev->slack_us == slack && ev->elapsed_us == 3000 && ev->validity_us == t1 + 2000000 - d2000 - T.now);
        CHECK_EQ(T.timer, t1 + 2000000 - d2000);
        teardown();
    }
}

/* Proves: a quorum answered exactly at round start + ttl - drift has no validity (VALIDITY); one µs earlier it is held with 1 µs left. */
static void test_acquire_validity_boundary(void) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        int64_t t0;
        setup_no_retry(1, 0, 10);
        t0 = T.now;
        redlock_acquire(&L);
        T.now = t0 + 10000 - drift_us(10, 0) - pass;
        ok_to(0, "SET");
        if (pass == 0) {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_VALIDITY);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
            expect_starts(0, "EVAL if redis.call('get'");
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
            CHECK_EQ(T.res.r[0].validity_us, 1);
            CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1);
            CHECK_EQ(T.timer, T.now + 1);
        }
        teardown();
    }
}

/* Proves: a check-then-act step whose GET answer arrives at (or after) the round's deadline, before the timer fired, is a NODE_TIMEOUT: no DEL; 1 µs earlier the DEL goes out. */
static void test_check_then_act_after_round_deadline(void) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
        int64_t t1;
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        ok_to(0, "SET");
        make_noscript();
        t1 = T.now;
        redlock_release(&L);
        expect_sent(0, "GET res");
        T.now = t1 + 50000 - pass;
        str_to(0, "GET", redlock_lock_token(&L));
        if (pass == 0) {
            CHECK_EQ(T.qn, 5);
            CHECK_EQ(vote_status(0), REDLOCK_ERR_NODE_TIMEOUT);
            CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_NO_QUORUM);
        } else {
            expect_sent(0, "DEL res");
        }
        teardown();
    }
}

/* Proves: ACQUIRED's ttl_share_permille is (elapsed + drift) / ttl in
   thousandths, rounded down, to the microsecond: 88 ms + 12 ms of a 1000 ms
   ttl is 100, 1 µs less is 99 (and the validity what is left). */
static void test_acquired_ttl_share(void) {
    const redlock_event *ev;
    int64_t took;
    for (took = 87999; took <= 88000; took++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        T.now += took;
        ok_to(0, "SET");
        ev = last_ev(REDLOCK_EV_ACQUIRED);
        CHECK(ev != NULL);
        if (ev) {
            CHECK_EQ(ev->ttl_share_permille, took == 88000 ? 100 : 99);
            CHECK_EQ(ev->elapsed_us, took);
            CHECK_EQ(ev->validity_us, 1000000 - 12000 - took);
        }
        teardown();
    }
}

/* Proves: with REDLOCK_MAX_NODES nodes no loop reaches past the last node,
   even when the memory after the lock and client is not zero. */
static void test_max_nodes_no_overrun(void) {
    static union { redlock_lock lk; unsigned char raw[sizeof(redlock_lock) + 512]; } big;
    redlock_lock_opts o;
    int k, before;
    setup_n(REDLOCK_MAX_NODES, 1, 1000);
    memset(&big, 0xFF, sizeof big);
    memset(&o, 0, sizeof o);
    o.key = "big";
    o.ttl_ms = 1000;
    o.watchdog = 1;
    CHECK_EQ(redlock_lock_init(&big.lk, &C, &o), REDLOCK_OK);
    before = T.qn;
    CHECK_EQ(redlock_acquire(&big.lk), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) { CHECK(T.q[k].node == k - before); ok_to(k, "SET"); }
    CHECK_EQ(redlock_lock_state(&big.lk), REDLOCK_STATE_HELD);
    before = T.qn;
    CHECK_EQ(redlock_extend(&big.lk, 0), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    before = T.qn;
    CHECK_EQ(redlock_release(&big.lk), REDLOCK_OK);
    CHECK_EQ(T.qn - before, REDLOCK_MAX_NODES);
    for (k = before; k < T.qn; k++) CHECK(T.q[k].node < REDLOCK_MAX_NODES);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(redlock_lock_state(&big.lk), REDLOCK_STATE_IDLE);
    redlock_lock_deinit(&big.lk);
    teardown();
}

/* Proves: an answer that comes after its round was decided is still
   reported as a VOTE (node, op, rtt), and changes nothing else. */
static void test_vote_after_decision(void) {
    int i, votes2 = 0;
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    T.now += 7000;
    ok_to(2, "SET");
    for (i = 0; i < T.evn; i++)
        if (T.ev[i].type == REDLOCK_EV_VOTE && T.ev[i].node == 2) {
            votes2++;
            CHECK_EQ(T.ev[i].op, REDLOCK_OP_ACQUIRE);
            CHECK_EQ(T.ev[i].vote, 1);
            CHECK_EQ(T.ev[i].rtt_us, 7000);
        }
    CHECK_EQ(votes2, 1);
    CHECK_EQ(T.ev[T.evn - 1].type, REDLOCK_EV_VOTE);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    teardown();
}

/* Proves: at the maximum node count, with clock values whose bits would
   pass for node flags, starting an extend round leaves the validity alone. */
static void test_max_nodes_round_keeps_validity(void) {
    int k;
    int64_t v;
    setup_n(REDLOCK_MAX_NODES, 0, 1000);
    T.now = 0x60000000;                           /* the validity's 4th byte: 0x60 */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) ok_to(k, "SET");
    v = redlock_lock_valid_until(&L);
    CHECK_EQ(v, T.now + 1000000 - drift_us(1000, 0));
    T.now += 1;
    CHECK_EQ(redlock_extend(&L, 1000), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), v);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + 1000000 - drift_us(1000, 0));
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    for (k = 0; k < REDLOCK_MAX_NODES; k++) num_to(k, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    teardown();
}

/* Proves: an acquire's ttl_share_permille is the share of the TTL its
   attempt and the drift allowance took, in thousandths, at a point where
   a coarser or finer scale would read otherwise (488 ms + 12 ms of 1 s:
   exactly 500). */
static void test_acquire_ttl_share(void) {
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    T.now += 488000;
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_ACQUIRED), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_ACQUIRED)->ttl_share_permille, 500);
    teardown();
}

/* Proves: a WRONGTYPE answer (the key holds a reentrant lock's hash, or
   any other kind of value) is another holder, not a node failure: a
   legacy GET votes against (LOCKED), an extend script against (STOLEN), a
   release script "not ours"; also as Redis 6 words a script's error. */
static void test_wrongtype_is_another_holder(void) {
    static const char wt[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
    static const char wt6[] = "ERR Error running script (call to f_x): @user_script:1: WRONGTYPE Operation against a key";
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.mode[0] = REDLOCK_MODE_LEGACY;
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);                  /* SETNX: taken */
    expect_starts(0, "GET res");
    err_to(0, "GET", wt);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(vote_status(0), 0);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    redlock_extend(&L, 0);
    err_to(0, "EVALSHA", wt);
    err_to(1, "EVALSHA", wt6);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_STOLEN);
    teardown();
    setup_n(3, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET"); ok_to(1, "SET");
    redlock_release(&L);
    err_to(0, "EVALSHA", wt);
    err_to(1, "EVALSHA", wt6);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED); /* not ours on a majority */
    CHECK_EQ(vote_status(0), 0);
    teardown();
}

static void run_acquire(int argc, char **argv) {
    RUN_T(test_acquire_ttl_share);
    RUN_T(test_wrongtype_is_another_holder);
    RUN_T(test_acquire_single);
    RUN_T(test_token_unique);
    RUN_T(test_quorum_early);
    RUN_T(test_fail_rollback_retry);
    RUN_T(test_timeouts_no_quorum);
    RUN_T(test_wait_deadline);
    RUN_T(test_send_failure);
    RUN_T(test_validity_exhausted);
    RUN_T(test_sync_transport);
    RUN_T(test_queue_full_overloaded);
    RUN_T(test_retry_jitter_statistics);
    RUN_T(test_retry_jitter_edges);
    RUN_T(test_retry_jitter_exact_values);
    RUN_T(test_sixteen_nodes_acquire);
    RUN_T(test_validity_formula_exact);
    RUN_T(test_acquire_validity_boundary);
    RUN_T(test_check_then_act_after_round_deadline);
    RUN_T(test_acquired_ttl_share);
    RUN_T(test_max_nodes_no_overrun);
    RUN_T(test_vote_after_decision);
    RUN_T(test_wait_shorter_than_delay);
    RUN_T(test_max_nodes_round_keeps_validity);
}
