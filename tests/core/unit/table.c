/* table.c - many locks on one client: the lock table and its growth, the
   deadline heap, renewals spread out, turns (how many rounds run at once),
   lock numbers and tags across wrap-around. */

static void test_many_locks_one_client(void) {
    redlock_lock locks[8];
    redlock_lock_opts o;
    int i;
    setup_n(1, 0, 1000);
    memset(&o, 0, sizeof o);
    o.key = "m"; o.ttl_ms = 1000; o.on_result = t_result;
    for (i = 0; i < 8; i++) { CHECK_EQ(redlock_lock_init(&locks[i], &C, &o), REDLOCK_OK); redlock_acquire(&locks[i]); }
    CHECK_EQ(T.qn, 8);
    for (i = 7; i >= 0; i--) ok(i);
    for (i = 0; i < 8; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_next_deadline(&C), redlock_lock_valid_until(&locks[0]));
    for (i = 0; i < 8; i++) redlock_lock_deinit(&locks[i]);
    teardown();
}

/* Many locks on one client: the lock table and the deadline heap. A
   transport of its own: it keeps every tag sent, in a growable array, and
   the test answers them in any order. */
typedef struct many {
    redlock_tag *tag;
    int *node;
    size_t n, cap;
    int64_t now;
    int64_t timer;
    int max_rounds;         /* the next m_client's (0: no bound that matters) */
} many;
static many M;
static int64_t m_now(void *u) { (void)u; return M.now; }
static void m_timer(void *u, int64_t d) { (void)u; M.timer = d; }
static int m_send(void *u, int node, const redlock_command *cmd, redlock_tag tag) {
    (void)u;
    (void)cmd;
    if (M.n == M.cap) {
        size_t cap = M.cap ? M.cap * 2 : 1024;
        redlock_tag *t = (redlock_tag *)realloc(M.tag, cap * sizeof *t);
        int *nd;
        if (!t) return REDLOCK_ERR_NOMEM;
        M.tag = t;
        nd = (int *)realloc(M.node, cap * sizeof *nd);
        if (!nd) return REDLOCK_ERR_NOMEM;
        M.node = nd;
        M.cap = cap;
    }
    M.tag[M.n] = tag;
    M.node[M.n++] = node;
    return 0;
}
static void m_ok_all(redlock_client *c) {
    redlock_reply r;
    size_t k, n = M.n;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS;
    r.str = "OK";
    r.len = 2;
    M.n = 0;
    /* back to front: the reverse of the sending order */
    for (k = n; k-- > 0;) redlock_on_reply(c, M.tag[k], &r);
}
static void m_client(redlock_client *c, redlock_lock **table, size_t size) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    cfg.lock_table = table;
    cfg.lock_table_size = size;
    cfg.max_rounds = M.max_rounds ? M.max_rounds : -1; /* (0: every round at once; turns: test_turns_*) */
    memset(&cb, 0, sizeof cb);
    cb.send = m_send;
    cb.set_timer = m_timer;
    cb.now_us = m_now;
    cb.wall_ms = t_wall;
    cb.random = t_random;
    M.n = 0; /* the arrays stay for the next client: m_free() */
    M.now = 1000000;
    M.timer = REDLOCK_NO_DEADLINE;
    CHECK_EQ(redlock_client_init(c, &cfg, &cb, NULL), REDLOCK_OK);
}
static void m_free(void) {
    free(M.tag);
    free(M.node);
    memset(&M, 0, sizeof M);
}
/* The earliest deadline of the locks, by looking at each (white box). */
static int64_t m_brute_deadline(redlock_lock *locks, int n) {
    int64_t d = REDLOCK_NO_DEADLINE;
    int i;
    for (i = 0; i < n; i++)
        if (LOCK_MAGIC(locks[i]) && LOCK_DEADLINE(locks[i]) < d) d = LOCK_DEADLINE(locks[i]);
    return d;
}

/* Proves: lock_init copies the key into one block, freed by lock_deinit, by
   initialising the handle again and by client_deinit (once: a later
   lock_deinit frees nothing); a refused allocation is NOMEM, leaves the
   handle detached (also one that was initialised), and a later init works;
   the key used is the one given at init, not the caller's buffer later. */
/* Proves: redlock_client_deinit detaches every lock of the client, in
   every bucket of its table (200 locks: each bucket holds some), freeing
   each key block and the table the locks made grow; each lock then says
   DETACHED. */
static void test_client_deinit_every_lock(void) {
    static redlock_lock many[200];
    redlock_lock_opts o;
    char key[16];
    int i;
    long before = key_blocks;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    base_opts(&o, 1000, 0);
    o.key = key;
    for (i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k:%d", i);
        CHECK_EQ(redlock_lock_init(&many[i], &C, &o), REDLOCK_OK);
    }
    CHECK_EQ(key_blocks, before + 200 + 1); /* and one table: 64 entries grew to 256 */
    CHECK_EQ(CLIENT_TABLE_MASK(C) + 1, 256);
    redlock_client_deinit(&C);
    CHECK_EQ(key_blocks, before);
    for (i = 0; i < 200; i++) CHECK_EQ(redlock_acquire(&many[i]), REDLOCK_ERR_DETACHED);
    for (i = 0; i < 200; i++) redlock_lock_deinit(&many[i]);
    CHECK_EQ(key_blocks, before);
}

/* Answers every queued command with integer 1 (an extend that worked). */
static void m_extended_all(redlock_client *c) {
    redlock_reply r;
    size_t k, n = M.n;
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_INTEGER;
    r.integer = 1;
    M.n = 0;
    for (k = 0; k < n; k++) redlock_on_reply(c, M.tag[k], &r);
}

/* Proves: 256 watchdog locks taken at one instant spread their renewals:
   the client's first lock renews exactly every renew_every, each other the
   first time within the last 1/16 of it (never later), at 200 or more
   different times, and then exactly every renew_every (its phase kept). */
static void test_renewals_spread(void) {
    enum { NL = 256 };
    const int64_t every = 3000000; /* ttl 9 s */
    redlock_client c;
    redlock_lock *locks = (redlock_lock *)calloc(NL, sizeof *locks);
    int64_t first[NL], second[NL], t0;
    redlock_lock_opts o;
    char key[32];
    int i, j, distinct = 0, ticks = 0;
    if (!locks) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 9000;
    o.watchdog = 1;
    for (i = 0; i < NL; i++) {
        snprintf(key, sizeof key, "spread:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
        first[i] = second[i] = -1;
    }
    t0 = M.now;
    m_ok_all(&c);
    for (i = 0; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    while (M.timer != REDLOCK_NO_DEADLINE && M.timer <= t0 + 2 * every && ticks++ < 4 * NL) {
        size_t k;
        M.now = M.timer;
        redlock_on_timer(&c);
        for (k = 0; k < M.n; k++)
            for (i = 0; i < NL; i++)
                if (tag_lock_id(M.tag[k]) == LOCK_ID(locks[i])) {
                    if (first[i] < 0) first[i] = M.now;
                    else if (second[i] < 0) second[i] = M.now;
                }
        m_extended_all(&c);
    }
    CHECK_EQ(first[0], t0 + every);
    CHECK_EQ(second[0], t0 + 2 * every);
    for (i = 0; i < NL; i++) {
        int seen = 0;
        CHECK(first[i] > t0 + every - every / 16 && first[i] <= t0 + every);
        CHECK_EQ(second[i] - first[i], every);
        for (j = 0; j < i; j++) seen |= first[j] == first[i];
        distinct += !seen;
    }
    printf("# %d locks renewed at %d different times\n", NL, distinct);
    CHECK(distinct >= 200);
    for (i = 0; i < NL; i++) redlock_lock_deinit(&locks[i]);
    redlock_client_deinit(&c);
    free(locks);
    m_free();
}

/* Proves: a caller's lock table must be a power of two up to 2^24. */
static void test_lock_table_config(void) {
    static redlock_lock *table[1024];
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    size_t bad[] = {0, 3, 1000, ((size_t)1 << 24) + 1, (size_t)1 << 25};
    size_t i;
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    memset(&cb, 0, sizeof cb);
    cb.send = m_send;
    cfg.lock_table = table;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.lock_table_size = bad[i];
        CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    }
    cfg.lock_table_size = 1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    cfg.lock_table_size = 1024;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    cfg.lock_table = NULL; /* the size is then ignored */
    cfg.lock_table_size = 3;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
}

/* Proves, with the built-in table and with a caller's (larger and smaller
   than the lock count): 3000 watchdog locks with different ttls are all
   acquired from replies in reverse order; the timer is always the earliest
   lock's deadline; each tick renews exactly the locks that are due; tags
   of deinitialised locks (memory reused by new locks, then freed) are
   ignored; re-initialising a live lock keeps one entry. */
static void test_many_locks_table_and_heap(void) {
    static redlock_lock *table[4096];
    size_t sizes[] = {0, 4096, 16};
    size_t z;
    for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        enum { NL = 3000 };
        redlock_client c;
        redlock_lock *locks = (redlock_lock *)calloc(NL, sizeof *locks);
        redlock_lock_opts o;
        redlock_tag *old;
        size_t nold, k;
        int i, tick, held = 0;
        char key[32];
        if (!locks) { CHECK(0); return; }
        m_client(&c, sizes[z] ? table : NULL, sizes[z]);
        memset(&o, 0, sizeof o);
        o.key = key;
        o.watchdog = 1;
        for (i = 0; i < NL; i++) {
            snprintf(key, sizeof key, "many:%d", i);
            o.ttl_ms = 3000 + (i * 7919) % 5000;
            CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
            CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
        }
        CHECK_EQ(M.n, NL);
        CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        m_ok_all(&c);
        for (i = 0; i < NL; i++) held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
        CHECK_EQ(held, NL);
        CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        CHECK_EQ(redlock_next_deadline(&c), M.timer);
        /* ticks: each renews the due locks only */
        for (tick = 0; tick < 40 && M.timer != REDLOCK_NO_DEADLINE; tick++) {
            int due = 0;
            int64_t at = M.timer;
            for (i = 0; i < NL; i++) due += LOCK_DEADLINE(locks[i]) <= at;
            M.now = at;
            redlock_on_timer(&c);
            CHECK_EQ((int)M.n, due);
            m_ok_all(&c);
            CHECK_EQ(M.timer, m_brute_deadline(locks, NL));
        }
        CHECK(tick == 40);
        /* stale tags: renewals of the first half are answered only after
           those locks were deinitialised and their memory re-initialised */
        M.now = M.timer;
        redlock_on_timer(&c);
        old = (redlock_tag *)malloc((M.n + 1) * sizeof *old);
        if (!old) { CHECK(0); return; }
        nold = M.n;
        memcpy(old, M.tag, M.n * sizeof *old);
        M.n = 0;
        for (i = 0; i < NL / 2; i++) {
            redlock_lock_deinit(&locks[i]);
            snprintf(key, sizeof key, "again:%d", i);
            o.ttl_ms = 60000;
            o.watchdog = 0;
            CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        }
        /* re-initialising a live lock: one entry, not two */
        CHECK_EQ(redlock_lock_init(&locks[0], &c, &o), REDLOCK_OK);
        {
            redlock_reply r;
            memset(&r, 0, sizeof r);
            r.type = REDLOCK_REPLY_INTEGER;
            r.integer = 1;
            for (k = 0; k < nold; k++) redlock_on_reply(&c, old[k], &r);
        }
        CHECK_EQ(M.n, 0); /* nothing followed from a stale answer */
        for (i = 0; i < NL / 2; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_IDLE);
        for (i = NL / 2; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
        /* every lock deinitialised: the table and the heap are empty */
        for (i = 0; i < NL; i++) redlock_lock_deinit(&locks[i]);
        CHECK_EQ(redlock_next_deadline(&c), REDLOCK_NO_DEADLINE);
        CHECK_EQ(M.timer, REDLOCK_NO_DEADLINE);
        {
            uint32_t b;
            int left = 0;
            for (b = 0; b <= CLIENT_TABLE_MASK(c); b++) left += CLIENT_TABLE(c)[b] != NULL;
            CHECK_EQ(left, 0);
        }
        redlock_client_deinit(&c);
        free(locks);
        free(old);
    }
    m_free();
}

/* Client C on one node with max_rounds and the node timeout given; lock L
   (ttl 10 s) and locks[0..n) (ttl ttl_ms, user = &locks[i]). */
static void setup_turns(int max_rounds, int64_t node_timeout_ms, redlock_lock *locks, int n, int64_t ttl_ms,
                        int watchdog) {
    redlock_config cfg;
    redlock_lock_opts o;
    int i;
    base_config(&cfg, 1);
    cfg.max_rounds = max_rounds;
    cfg.node_timeout_ms = node_timeout_ms;
    base_opts(&o, 10000, 0);
    setup_with(&cfg, &o);
    base_opts(&o, ttl_ms, watchdog);
    for (i = 0; i < n; i++) {
        o.user = &locks[i];
        CHECK_EQ(redlock_lock_init(&locks[i], &C, &o), REDLOCK_OK);
    }
}
/* Command k is for lock lk. */
static int cmd_of(int k, const redlock_lock *lk) { return k < T.qn && tag_lock_id(T.q[k].tag) == LOCK_ID(*lk); }

/* Proves: a client runs at most max_rounds rounds at once (2): the third
   and fourth acquire send nothing and their rounds' clocks have not
   started; they start, in order, at the redlock_on_timer the client asks
   for at once when a turn is free, and their node timeout counts from
   then: answered 40 ms after that, 60 ms after redlock_acquire (past the
   50 ms node timeout), they win, the validity counted from their start.
   Releases wait in the same line, in order of arrival. */
static void test_turns_wait_in_line(void) {
    redlock_lock lk[4];
    int64_t t0, t1;
    int i;
    setup_turns(2, 50, lk, 4, 10000, 0);
    t0 = T.now;
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_acquire(&lk[i]), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    CHECK(cmd_of(0, &lk[0]) && cmd_of(1, &lk[1]));
    CHECK(redlock_lock_pending(&lk[2]) && redlock_lock_pending(&lk[3]));
    CHECK_EQ(redlock_lock_state(&lk[3]), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(T.timer, t0 + 50000);               /* the running rounds' deadline only */
    T.now = t0 + 20000;
    ok_to(0, "SET");
    CHECK_EQ(T.timer, T.now);                    /* a turn is free: handed on now */
    CHECK_EQ(T.qn, 2);
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 3);
    CHECK(cmd_of(2, &lk[2]));
    ok_to(0, "SET");
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 4);
    CHECK(cmd_of(3, &lk[3]));
    t1 = T.now;
    advance_to(t0 + 60000);                      /* their rounds' deadline has not come */
    ok_to(0, "SET"); ok_to(0, "SET");
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_lock_state(&lk[i]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_valid_until(&lk[3]), t1 + 10000 * 1000 - 100000 - 2000);
    /* releases of 3, 1, 0, 2, in that order */
    CHECK_EQ(redlock_release(&lk[3]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[1]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[0]), REDLOCK_OK);
    CHECK_EQ(redlock_release(&lk[2]), REDLOCK_OK);
    CHECK_EQ(T.qn, 6);
    CHECK(cmd_of(4, &lk[3]) && cmd_of(5, &lk[1]));
    num(5, 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 7 && cmd_of(6, &lk[0]));
    num_to(0, "EVALSHA", 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 8 && cmd_of(7, &lk[2]));
    num_to(0, "EVALSHA", 1); num_to(0, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 8);
    for (i = 0; i < T.res.n; i++) CHECK_EQ(T.res.r[i].status, REDLOCK_OK);
    for (i = 0; i < 4; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: held locks get turns before the others: with the one turn
   taken, a renewal that comes due waits and then goes before an acquire
   that waited longer; a held lock whose renewal still waits when its
   validity runs out is told LOST then (EXPIRED), the timer asked for that
   instant, and its cleanup goes out at once, beyond the turns. */
static void test_turns_held_first(void) {
    redlock_lock lk[3];
    int64_t due, until;
    int k;
    setup_turns(1, 5000, lk, 3, 10000, 0);
    redlock_lock_deinit(&lk[0]);
    {
        redlock_lock_opts o;
        base_opts(&o, 3000, 1);                  /* renewed every second */
        o.key = "renewed";
        o.user = &lk[0];
        CHECK_EQ(redlock_lock_init(&lk[0], &C, &o), REDLOCK_OK);
    }
    redlock_acquire(&lk[0]);
    ok_to(0, "SET");
    due = redlock_next_deadline(&C);             /* its first renewal */
    T.now = due - 100000;
    redlock_acquire(&lk[1]);                     /* takes the turn: command 1 */
    T.now = due - 50000;
    redlock_acquire(&lk[2]);                     /* waits */
    advance_to(due);                             /* the renewal waits too */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.timer, redlock_lock_valid_until(&lk[0])); /* (before lk[1]'s node timeout) */
    T.now = due + 10000;
    ok_to(0, "SET");
    redlock_on_timer(&C);
    CHECK(T.qn == 3 && cmd_of(2, &lk[0]) && starts(2, "EVALSHA")); /* the renewal, not lk[2]'s SET */
    num_to(0, "EVALSHA", 1);
    redlock_on_timer(&C);
    CHECK(T.qn == 4 && cmd_of(3, &lk[2]) && starts(3, "SET"));    /* unanswered: the turn stays taken */
    until = redlock_lock_valid_until(&lk[0]);
    advance_to(redlock_next_deadline(&C));       /* the next renewal: it waits */
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(T.timer, until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_HELD);
    advance_to(until);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_EXPIRED);
    CHECK(T.qn == 5 && cmd_of(4, &lk[0]) && starts(4, "EVAL ")); /* the cleanup */
    CHECK_EQ(redlock_lock_state(&lk[2]), REDLOCK_STATE_ACQUIRING);
    for (k = 0; k < 3; k++) redlock_lock_deinit(&lk[k]);
    teardown();
}

/* Proves: the hold cap holds whatever the turns do: with the one turn
   taken, a watchdog renewal that came due inside max_hold_ms (1.5 s) but
   whose turn comes only past it is dropped: nothing of it is sent, the
   validity stays that of the acquire and the lock is told LOST
   (HOLD_LIMIT) when it ends. A user's extend past the cap is no renewal:
   it waits for its turn as well, then goes out, and its validity counts
   from its round's start (the turn), not from the call. */
static void test_turns_renewal_waits_across_cap(void) {
    redlock_lock lk[2];
    redlock_lock_opts o;
    int64_t t0, due, until, turn;
    setup_turns(1, 5000, lk, 2, 10000, 0);
    redlock_lock_deinit(&lk[0]);
    base_opts(&o, 3000, 1);                      /* renewed every second */
    o.key = "capped";
    o.max_hold_ms = 1500;
    o.user = &lk[0];
    CHECK_EQ(redlock_lock_init(&lk[0], &C, &o), REDLOCK_OK);
    t0 = T.now;
    redlock_acquire(&lk[0]);
    ok_to(0, "SET");
    until = redlock_lock_valid_until(&lk[0]);
    CHECK_EQ(until, t0 + 3000000 - 30000 - 2000);
    due = redlock_next_deadline(&C);             /* its first renewal, inside the cap */
    CHECK(due < t0 + 1500000);
    T.now = due - 1000;
    redlock_acquire(&lk[1]);                     /* takes the turn: command 1 */
    advance_to(due);                             /* the renewal waits */
    CHECK_EQ(T.qn, 2);
    CHECK(redlock_lock_pending(&lk[0]));
    T.now = t0 + 1600000;                        /* past the cap */
    ok_to(0, "SET");
    redlock_on_timer(&C);                        /* the turn comes: the renewal is dropped */
    CHECK_EQ(T.qn, 2);
    CHECK(!redlock_lock_pending(&lk[0]));
    CHECK_EQ(count_ev(REDLOCK_EV_RENEWED), 0);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_next_deadline(&C), until);
    advance_to(until);
    CHECK_EQ(redlock_lock_state(&lk[0]), REDLOCK_STATE_LOST);
    CHECK_EQ(last_status(REDLOCK_OP_LOST), REDLOCK_ERR_HOLD_LIMIT);
    CHECK(T.qn == 3 && cmd_of(2, &lk[0]) && starts(2, "EVAL ")); /* the cleanup */
    num_to(0, "EVAL", 1);
    /* again, held past the cap: the user's extend waits, then goes out */
    t0 = T.now;
    redlock_acquire(&lk[0]);
    ok_to(0, "SET");
    T.now = t0 + 1600000;
    CHECK_EQ(redlock_release(&lk[1]), REDLOCK_OK); /* takes the turn: command 4 */
    CHECK_EQ(redlock_extend(&lk[0], 1000), REDLOCK_OK);
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), T.now + 1000000 - 10000 - 2000); /* cut at the call */
    T.now += 40000;
    num_to(0, "EVALSHA", 1);
    turn = T.now;
    redlock_on_timer(&C);
    CHECK(T.qn == 6 && cmd_of(5, &lk[0]) && starts(5, "EVALSHA"));
    T.now += 1000;
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    CHECK_EQ(redlock_lock_valid_until(&lk[0]), turn + 1000000 - 10000 - 2000);
    redlock_lock_deinit(&lk[0]);
    redlock_lock_deinit(&lk[1]);
    teardown();
}

/* Proves: a release that waits for its turn goes out when the lock is
   deinitialised (as redlock_release() then redlock_lock_deinit() did
   without the wait: the key is not kept); a waiting acquire sends
   nothing; later answers to them are ignored. */
static void test_turns_deinit_sends_waiting_release(void) {
    redlock_lock lk[3];
    char token[REDLOCK_TOKEN_LEN + 1];
    setup_turns(1, 50, lk, 3, 10000, 0);
    redlock_acquire(&lk[0]);
    ok_to(0, "SET");
    memcpy(token, redlock_lock_token(&lk[0]), sizeof token);
    redlock_acquire(&lk[1]);                     /* the turn: command 1 */
    CHECK_EQ(redlock_release(&lk[0]), REDLOCK_OK);
    redlock_acquire(&lk[2]);
    CHECK_EQ(T.qn, 2);
    redlock_lock_deinit(&lk[0]);
    CHECK_EQ(T.qn, 3);
    CHECK(starts(2, "EVALSHA") && strstr(T.q[2].cmd, token) != NULL);
    redlock_lock_deinit(&lk[2]);
    CHECK_EQ(T.qn, 3);
    num_to(0, "EVALSHA", 1);                     /* ignored */
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&lk[1]), REDLOCK_STATE_HELD);
    CHECK_EQ(T.res.n, 2);                        /* lk[0]'s and lk[1]'s acquire */
    redlock_lock_deinit(&lk[1]);
    teardown();
}

/* Proves: while rounds wait, the number of turns adapts: from 16 (at most
   max_rounds, here 64), a round decided within half the node timeout adds
   one and a slower one halves them, at most once per round trip (a round
   that started before the change does not count). */
static void test_turns_window_adapts(void) {
    static redlock_lock lk[60];
    int i;
    setup_turns(64, 50, lk, 60, 10000, 0);
    for (i = 0; i < 60; i++) redlock_acquire(&lk[i]);
    CHECK_EQ(T.qn, 16);
    T.now += 1000;
    for (i = 0; i < 16; i++) ok_to(0, "SET");    /* fast: one more turn */
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 16 + 17);
    T.now += 30000;
    for (i = 16; i < 33; i++) ok_to(0, "SET");   /* 30 ms: more than half of 50: halved */
    redlock_on_timer(&C);
    CHECK_EQ(T.qn, 33 + 8);
    for (i = 0; i < 41; i++) CHECK_EQ(redlock_lock_state(&lk[i]), i < 33 ? REDLOCK_STATE_HELD : REDLOCK_STATE_ACQUIRING);
    for (i = 0; i < 60; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: max_rounds 0 is the default (128, from redlock_config_init too)
   and a negative one sets no bound: 40 acquires go out at once. */
static void test_turns_config(void) {
    redlock_config cfg;
    static redlock_lock lk[40];
    int i;
    redlock_config_init(&cfg);
    CHECK_EQ(cfg.max_rounds, 128);
    setup_turns(0, 50, lk, 40, 10000, 0);
    CHECK_EQ(CLIENT_MAX_ROUNDS(C), 128);
    for (i = 0; i < 40; i++) redlock_lock_deinit(&lk[i]);
    teardown();
    setup_turns(-1, 50, lk, 40, 10000, 0);
    for (i = 0; i < 40; i++) redlock_acquire(&lk[i]);
    CHECK_EQ(T.qn, 40);
    for (i = 0; i < 40; i++) redlock_lock_deinit(&lk[i]);
    teardown();
}

/* Proves: a reply for a lock whose memory was freed after deinit is
   ignored without touching that memory (valgrind and ASan see it). */
static void test_stale_tag_of_freed_lock(void) {
    redlock_client c;
    redlock_lock *lk = (redlock_lock *)malloc(sizeof *lk), keep;
    redlock_lock_opts o;
    redlock_reply r;
    redlock_tag tag;
    if (!lk) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = "freed";
    o.ttl_ms = 1000;
    CHECK_EQ(redlock_lock_init(lk, &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_lock_init(&keep, &c, &o), REDLOCK_OK); /* the same bucket or not: another live lock */
    CHECK_EQ(redlock_acquire(lk), REDLOCK_OK);
    CHECK_EQ(M.n, 1);
    tag = M.tag[0];
    M.n = 0;
    redlock_lock_deinit(lk);
    free(lk);
    memset(&r, 0, sizeof r);
    r.type = REDLOCK_REPLY_STATUS;
    r.str = "OK";
    r.len = 2;
    redlock_on_reply(&c, tag, &r);
    redlock_on_error(&c, tag, REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(M.n, 0);
    CHECK_EQ(redlock_lock_state(&keep), REDLOCK_STATE_IDLE);
    redlock_lock_deinit(&keep);
    redlock_client_deinit(&c);
    m_free();
}

/* The longest chain of the client's table, and whether every lock filed
   there is found from its id (white box). */
static size_t m_longest_chain(redlock_client *c) {
    size_t longest = 0;
    uint32_t b;
    for (b = 0; b <= CLIENT_TABLE_MASK(*c); b++) {
        size_t len = 0;
        redlock_lock *it;
        for (it = CLIENT_TABLE(*c)[b]; it; it = LOCK_BUCKET_NEXT(*it), len++)
            if (table_find(c, LOCK_ID(*it)) != it || !table_filed(c, it)) return (size_t)-1;
        if (len > longest) longest = len;
    }
    return longest;
}

/* Proves: without a caller's table the client's grows with its locks
   (doubling at lock_init, from REDLOCK_LOCK_TABLE entries): 5000 acquires
   in flight while it grows from 64 entries to 8192 all get their replies
   after it grew again (to 16384, for 5000 more locks); the tags of locks
   deinitialised or initialised again before that growth stay stale (no
   command follows, the new lives stay idle); every lock is found from its
   id and the chains stay short; the tables are freed (the last by
   client_deinit). A caller's table never grows and nothing is allocated
   for it. */
static void test_lock_table_grows(void) {
    enum { NL = 5000 };
    static redlock_lock *table[16];
    redlock_client c;
    redlock_lock *locks = (redlock_lock *)calloc(2 * NL, sizeof *locks);
    redlock_lock_opts o;
    redlock_tag *tags;
    size_t ntags, k;
    long before = key_blocks;
    int i, held = 0, idle = 0;
    char key[32];
    if (!locks) { CHECK(0); return; }
    m_client(&c, NULL, 0);
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, REDLOCK_LOCK_TABLE);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    for (i = 0; i < NL; i++) {
        snprintf(key, sizeof key, "grow:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
    }
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, 8192);
    CHECK_EQ(key_blocks, before + NL + 1); /* the keys and one table: the smaller ones were freed */
    CHECK(m_longest_chain(&c) <= 12);
    tags = (redlock_tag *)malloc(M.n * sizeof *tags);
    if (!tags) { CHECK(0); free(locks); return; }
    ntags = M.n;
    memcpy(tags, M.tag, M.n * sizeof *tags);
    M.n = 0;
    /* the first thousand deinitialised, the next thousand initialised again */
    for (i = 0; i < 1000; i++) redlock_lock_deinit(&locks[i]);
    for (i = 1000; i < 2000; i++) {
        snprintf(key, sizeof key, "again:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, 8192);
    for (i = NL; i < 2 * NL; i++) {
        snprintf(key, sizeof key, "more:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, 16384);
    CHECK(m_longest_chain(&c) <= 12);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        for (k = ntags; k-- > 0;) redlock_on_reply(&c, tags[k], &r);
    }
    CHECK_EQ(M.n, 0); /* nothing followed from a stale answer */
    for (i = 0; i < 2 * NL; i++) {
        held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
        idle += redlock_lock_state(&locks[i]) == REDLOCK_STATE_IDLE;
    }
    CHECK_EQ(held, NL - 2000);
    CHECK_EQ(idle, NL + 2000);
    for (i = 2000; i < NL; i++) CHECK_EQ(redlock_lock_state(&locks[i]), REDLOCK_STATE_HELD);
    for (i = 0; i < 2 * NL; i++) redlock_lock_deinit(&locks[i]);
    CHECK_EQ(CLIENT_LOCKS(c), 0);
    CHECK_EQ(key_blocks, before + 1); /* the table stays until client_deinit */
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    /* a caller's table: 16 entries for 3000 locks, nothing allocated but the keys */
    m_client(&c, table, 16);
    for (i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "own:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
    }
    CHECK(CLIENT_TABLE(c) == table);
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, 16);
    CHECK_EQ(key_blocks, before + 3000);
    CHECK(m_longest_chain(&c) != (size_t)-1);
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    free(tags);
    free(locks);
    m_free();
}

/* Proves: when the table cannot grow (its block refused) lock_init says
   NOMEM and nothing changed: the table, the locks in it (all acquired from
   their replies after), the handle not initialised; initialising a lock
   that is already initialised needs no room and works; once memory is
   there again the table grows. */
static void test_lock_table_nomem(void) {
    redlock_client c;
    redlock_lock locks[REDLOCK_LOCK_TABLE + 1], spare;
    redlock_lock_opts o;
    long before = key_blocks;
    int i, rc, held = 0;
    char key[32];
    m_client(&c, NULL, 0);
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    for (i = 0; i < REDLOCK_LOCK_TABLE; i++) {
        snprintf(key, sizeof key, "full:%d", i);
        CHECK_EQ(redlock_lock_init(&locks[i], &c, &o), REDLOCK_OK);
        CHECK_EQ(redlock_acquire(&locks[i]), REDLOCK_OK);
    }
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE); /* the table inside the client: nothing allocated */
    refuse_above = 512;                                /* a table's block, not a key's */
    snprintf(key, sizeof key, "one-more");
    memset(&locks[REDLOCK_LOCK_TABLE], 0x5a, sizeof locks[REDLOCK_LOCK_TABLE]);
    memset(&spare, 0x5a, sizeof spare);
    rc = redlock_lock_init(&locks[REDLOCK_LOCK_TABLE], &c, &o);
    CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
    if (rc == REDLOCK_OK) redlock_lock_deinit(&locks[REDLOCK_LOCK_TABLE]);
    else CHECK(memcmp(&locks[REDLOCK_LOCK_TABLE], &spare, sizeof spare) == 0); /* not written */
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, REDLOCK_LOCK_TABLE);
    CHECK_EQ(CLIENT_LOCKS(c), REDLOCK_LOCK_TABLE);
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE);
    CHECK_EQ(redlock_acquire(&locks[REDLOCK_LOCK_TABLE]), REDLOCK_ERR_DETACHED);
    /* initialising a live lock again takes no room */
    snprintf(key, sizeof key, "full:0:again");
    CHECK_EQ(redlock_lock_init(&locks[0], &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&locks[0]), REDLOCK_OK);
    refuse_above = 0;
    m_ok_all(&c); /* the first life's answer is stale; the others' and the new life's are found */
    for (i = 0; i < REDLOCK_LOCK_TABLE; i++) held += redlock_lock_state(&locks[i]) == REDLOCK_STATE_HELD;
    CHECK_EQ(held, REDLOCK_LOCK_TABLE);
    CHECK_EQ(M.n, 0);
    snprintf(key, sizeof key, "one-more");
    CHECK_EQ(redlock_lock_init(&locks[REDLOCK_LOCK_TABLE], &c, &o), REDLOCK_OK);
    CHECK_EQ(CLIENT_TABLE_MASK(c) + 1, 2 * REDLOCK_LOCK_TABLE);
    CHECK_EQ(key_blocks, before + REDLOCK_LOCK_TABLE + 2);
    CHECK_EQ(m_longest_chain(&c) != (size_t)-1, 1);
    redlock_client_deinit(&c);
    CHECK_EQ(key_blocks, before);
    m_free();
}

/* Proves: lock numbers wrap within the tag's 40 bits (above the address's
   24 hash bits with the built-in table): a lock initialised after 2^16
   others still gets its replies. */
static void test_lock_numbers_wrap(void) {
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_lock_deinit(&L);
    CLIENT_NEXT_ID(C) = (uint64_t)1 << (40 - CLIENT_HASH_BITS(C));
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a lock number that wraps onto a live lock's id (same table
   entry: a caller's table of one) is skipped, as are the next ones that
   live locks have: four live locks, four ids, each acquired from its own
   replies (answered first to last and last to first). */
static void test_live_ids_distinct_across_wrap(void) {
    static redlock_lock *table[1];
    redlock_lock lk[4];
    redlock_lock_opts o;
    redlock_client c;
    int i, held = 0;
    m_client(&c, table, 1);
    memset(&o, 0, sizeof o);
    o.key = "wrap";
    o.ttl_ms = 1000;
    for (i = 0; i < 3; i++) CHECK_EQ(redlock_lock_init(&lk[i], &c, &o), REDLOCK_OK);
    CLIENT_NEXT_ID(c) = (uint64_t)1 << 40; /* the next number wraps to the first lock's */
    CHECK_EQ(redlock_lock_init(&lk[3], &c, &o), REDLOCK_OK);
    for (i = 0; i < 3; i++) CHECK(LOCK_ID(lk[3]) != LOCK_ID(lk[i]));
    for (i = 0; i < 4; i++) CHECK_EQ(redlock_acquire(&lk[i]), REDLOCK_OK);
    CHECK_EQ(M.n, 4);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        redlock_on_reply(&c, M.tag[0], &r);
        redlock_on_reply(&c, M.tag[3], &r);
        redlock_on_reply(&c, M.tag[1], &r);
        redlock_on_reply(&c, M.tag[2], &r);
    }
    for (i = 0; i < 4; i++) held += redlock_lock_state(&lk[i]) == REDLOCK_STATE_HELD;
    CHECK_EQ(held, 4);
    redlock_client_deinit(&c);
    m_free();
}

/* Proves: a handle initialised again exactly one wrap of the lock numbers
   later (65,536 lock_inits on the client: its new id is the old one) does
   not take the old life's late answer for its own: the new life's tags
   differ in their sequence. */
static void test_stale_tag_one_wrap_later(void) {
    redlock_lock_opts o;
    redlock_lock scratch;
    redlock_tag old;
    uint64_t old_id;
    long k;
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    old = T.q[0].tag;
    old_id = LOCK_ID(L);
    T.qn = 0;
    base_opts(&o, 1000, 0);
    for (k = 0; k < 65535; k++) {
        CHECK_EQ(redlock_lock_init(&scratch, &C, &o), REDLOCK_OK);
        redlock_lock_deinit(&scratch);
    }
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(LOCK_ID(L), old_id); /* the case in point */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    {
        redlock_reply r;
        memset(&r, 0, sizeof r);
        r.type = REDLOCK_REPLY_STATUS;
        r.str = "OK";
        r.len = 2;
        redlock_on_reply(&C, old, &r);
    }
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_ACQUIRING);
    CHECK_EQ(T.res.n, 0);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

static void run_table(int argc, char **argv) {
    RUN_T(test_many_locks_one_client);
    RUN_T(test_lock_table_config);
    RUN_T(test_many_locks_table_and_heap);
    RUN_T(test_turns_wait_in_line);
    RUN_T(test_turns_held_first);
    RUN_T(test_turns_renewal_waits_across_cap);
    RUN_T(test_turns_deinit_sends_waiting_release);
    RUN_T(test_turns_window_adapts);
    RUN_T(test_turns_config);
    RUN_T(test_stale_tag_of_freed_lock);
    RUN_T(test_lock_table_grows);
    RUN_T(test_lock_table_nomem);
    RUN_T(test_client_deinit_every_lock);
    RUN_T(test_renewals_spread);
    RUN_T(test_lock_numbers_wrap);
    RUN_T(test_live_ids_distinct_across_wrap);
    RUN_T(test_stale_tag_one_wrap_later);
}
