/* notify.c - release notifications: releases that publish, wakes that
   retry at once within a budget, the listen callback, and the notify
   adapter's set of listened keys. */

/* Proves: a wake while the acquire waits out its retry delay starts the
   next attempt at once; one during the undo starts it as soon as the undo
   is done; one during an attempt starts the next one early too, after the
   wake rate limit; an attempt a wake started that loses spends no retry
   (EV_RETRY: the retry keeps its time); redlock_lock_waiting() says when
   a wake helps. */
static void test_wake_retries_now(void) {
    int64_t t0, gap = 100000 / REDLOCK_WAKES_PER_DELAY;
    setup_n(3, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    t0 = T.now;
    redlock_acquire(&L);
    CHECK_EQ(redlock_lock_waiting(&L), 0);  /* the attempt runs */
    nil_to(0, "SET"); nil_to(1, "SET");     /* lost: undo on 3..5, retry in 100 ms */
    CHECK_EQ(T.qn, 6);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* during the undo */
    CHECK_EQ(T.qn, 6);
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 0);
    CHECK_EQ(T.qn, 6);                      /* the undo still runs on node 2 */
    T.now = t0 + 1000;
    num_to(2, "EVAL", 0);
    CHECK_EQ(T.qn, 9);                      /* attempt 2 at once, not 100 ms later */
    expect_starts(0, "SET res");
    CHECK_EQ(count_ev(REDLOCK_EV_ATTEMPT), 2);
    /* woken during the attempt: after its failure the next one comes
       early too, once the rate limit allows (a share of the delay after
       attempt 2, which a wake started) */
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    nil_to(0, "SET"); nil_to(1, "SET");
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 99000); /* no retry spent: it keeps its time */
    num_to(0, "EVAL", 0); num_to(1, "EVAL", 0); num_to(2, "EVAL", 0);
    CHECK_EQ(T.qn, 12);                     /* not before the rate limit */
    CHECK_EQ(T.timer, t0 + 1000 + gap);
    advance_to(T.timer);
    CHECK_EQ(T.qn, 15);                     /* attempt 3 */
    ok_to(0, "SET"); ok_to(1, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
    /* waiting out the delay with no undo left: the wake starts it now */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);                   /* undo done */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(T.timer, T.now + 100000);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    expect_starts(0, "SET res");
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* again, during the attempt: nothing sent */
    CHECK_EQ(T.qn, 3);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
}

/* Proves: a genuine release wakes a waiter promptly: a wake well into the
   retry delay starts the attempt at once; one that loses leaves the retry
   at its time; a wake that comes within the rate limit after it is not
   dropped but starts its attempt when the limit ends, and wins there. */
static void test_wake_prompt(void) {
    int64_t t0, gap = 100000 / REDLOCK_WAKES_PER_DELAY;
    setup_n(1, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);                   /* waits: the retry is due in 100 ms */
    t0 = T.now;
    advance_to(t0 + 30000);                 /* nothing due yet */
    CHECK_EQ(T.qn, 2);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* a release: the attempt now */
    CHECK_EQ(T.qn, 3);
    expect_starts(0, "SET res");
    T.now = t0 + 30200;
    nil_to(0, "SET");                       /* another waiter was faster */
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000 - 30200);
    num_to(0, "EVAL", 0);
    CHECK_EQ(T.timer, t0 + 100000);         /* the retry keeps its time */
    T.now = t0 + 31000;
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* the next release, within the rate limit */
    CHECK_EQ(T.qn, 4);
    CHECK_EQ(T.timer, t0 + 30000 + gap);    /* kept for the limit's end */
    advance_to(t0 + 30000 + gap - 1);
    CHECK_EQ(T.qn, 4);
    advance_to(t0 + 30000 + gap);
    CHECK_EQ(T.qn, 5);
    expect_starts(0, "SET res");
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(T.res.r[T.res.n - 1].attempts, 3);
    teardown();
}

/* A node that refuses every SET (another holder keeps the key) and
   answers every undo, inside send. */
static int sync_held(int node, const char *cmd, redlock_reply *r) {
    (void)node;
    if (strncmp(cmd, "SET", 3) == 0) r->type = REDLOCK_REPLY_NIL;
    else { r->type = REDLOCK_REPLY_INTEGER; r->integer = 0; }
    return 1;
}

/* A wake every 100 us (a flood of notifications, forged or not: anyone
   allowed to PUBLISH can send them) until the acquire ends, which it must
   within 10 s; the acquire's attempts. */
static int flood_until_done(int64_t *took) {
    int64_t t0 = T.now;
    T.sync = sync_held;
    redlock_acquire(&L);
    while (last_status(REDLOCK_OP_ACQUIRE) == 1 && T.now < t0 + 10000000) {
        redlock_lock_wake(&L);
        advance_to(T.now + 100);
    }
    T.sync = NULL;
    *took = T.now - t0;
    return T.res.n ? T.res.r[T.res.n - 1].attempts : -1;
}

/* Proves: waiting is a time budget. Under a flood of wakes the acquire
   neither ends before its retries' time (retry_count x retry_delay) nor
   waits longer; its attempts are at most the retries plus
   REDLOCK_WAKES_PER_DELAY per retry delay. With wait_ms and many
   retries, the same: TIMEOUT at the deadline, with as many attempts. */
static void test_wake_flood_keeps_budget(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t took;
    int attempts, k = REDLOCK_WAKES_PER_DELAY;
    setup_n(1, 0, 1000);                    /* 2 retries, 100 ms apart, no jitter */
    attempts = flood_until_done(&took);
    printf("# a flood of wakes: %d attempts, %lld ms (2 retries 100 ms apart)\n", attempts, (long long)took / 1000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK(took >= 200000);                  /* the retries' time */
    CHECK(took <= 200000 + 100);
    CHECK(attempts <= 1 + 2 + 2 * k + 1);
    CHECK(attempts >= 2 * k);               /* the wakes were heard, at the limit's pace */
    CHECK(count_ev(REDLOCK_EV_RETRY) == attempts - 1);
    teardown();
    /* the explicit form: wait_ms 300 with retries to spare */
    base_config(&cfg, 1);
    cfg.retry_count = 1000;
    cfg.wait_ms = 300;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    attempts = flood_until_done(&took);
    printf("# a flood of wakes: %d attempts, %lld ms (wait_ms 300)\n", attempts, (long long)took / 1000);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    CHECK(took >= 300000);
    CHECK(took <= 300000 + 100);
    CHECK(attempts <= 1 + 3 + 3 * k + 1);
    CHECK(attempts >= 3 * k);
    teardown();
}

/* Proves: a wake changes nothing outside an acquire: IDLE, HELD,
   RELEASING, after the acquire gave up; bad handles are refused. A wake
   before the attempt that it would help is consumed by that attempt. */
static void test_wake_elsewhere(void) {
    redlock_lock_opts o;
    redlock_config cfg;
    CHECK_EQ(redlock_lock_wake(NULL), REDLOCK_ERR_INVALID);
    setup_n(1, 0, 1000);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    redlock_acquire(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    redlock_release(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    redlock_lock_deinit(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_ERR_DETACHED);
    redlock_client_deinit(&C);
    /* no retries: the failed acquire ends; a wake then starts nothing */
    base_config(&cfg, 1);
    cfg.retry_count = -1;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK); /* woken during its only attempt */
    nil_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(redlock_lock_waiting(&L), 0);
    CHECK_EQ(redlock_lock_wake(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);                      /* the SET and its undo only */
    teardown();
    /* woken, then an attempt starts by its delay: the wake is used up */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    nil_to(0, "SET");
    redlock_lock_wake(&L);                  /* during the undo */
    num_to(0, "EVAL", 0);                   /* attempt 2 at once */
    nil_to(0, "SET");
    CHECK_EQ(last_ev(REDLOCK_EV_RETRY)->delay_us, 100000); /* the wake was attempt 2's, not 3's */
    teardown();
}

/* Proves: the release script deletes and publishes "released" on
   REDLOCK_CHANNEL_PREFIX + key (text checked; the server side runs in the
   integration tests), and so do the undo and the cleanup (the same script). */
/* redlock_lock_key, and the adapters' notification table: a key is
   subscribed when its first lock comes in and unsubscribed when its last
   goes; a message wakes only that key's waiting locks, each once. */
static void test_notify_table(void) {
    notify_set n;
    redlock_lock other, third;
    redlock_lock_opts o;
    const char *key;
    size_t len;
    int i;
    memset(&n, 0, sizeof n);
    CHECK_STR(redlock_lock_key(NULL, &len), "");
    CHECK_EQ(len, 0);
    setup_n(1, 0, 1000);
    key = redlock_lock_key(&L, &len);
    CHECK_EQ(len, 3);
    CHECK(memcmp(key, "res", 3) == 0);
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&other, &C, &o), REDLOCK_OK); /* the same key */
    o.key = "elsewhere";
    CHECK_EQ(redlock_lock_init(&third, &C, &o), REDLOCK_OK);
    CHECK_EQ(notify_add(&n, &L), 1);               /* a new key: subscribe */
    CHECK_EQ(notify_add(&n, &L), 0);               /* in already */
    CHECK_EQ(notify_add(&n, &other), 0);           /* the key is listened to */
    CHECK_EQ(notify_add(&n, &third), 1);
    CHECK_EQ((int)n.count, 3);
    /* L waits (its attempt failed, undo done); `other` and `third` are idle */
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    notify_message(&n, "elsewhere", 9);            /* another key: nothing */
    CHECK_EQ(T.qn, 2);
    notify_message(&n, "res", 3);                  /* L's next attempt now */
    CHECK_EQ(T.qn, 3);
    expect_starts(0, "SET res");
    notify_message(&n, "res", 3);                  /* a copy from another node: the attempt runs */
    CHECK_EQ(T.qn, 3);
    CHECK_EQ(notify_remove(&n, &other, &key, &len), 0); /* L still listens */
    CHECK_EQ(notify_remove(&n, &L, &key, &len), 1);              /* the key's last */
    CHECK_EQ(len, 3);
    CHECK_EQ(notify_remove(&n, &L, &key, &len), 0);              /* gone already */
    /* the table grows past its first buckets and finds every lock again */
    {
        static redlock_lock many[40];
        static char names[40][8];
        int subscribed = 0;
        for (i = 0; i < 40; i++) {
            snprintf(names[i], sizeof names[i], "k%d", i % 20);
            o.key = names[i];
            CHECK_EQ(redlock_lock_init(&many[i], &C, &o), REDLOCK_OK);
            subscribed += notify_add(&n, &many[i]);
        }
        CHECK_EQ(subscribed, 20);                      /* one per key */
        CHECK_EQ((int)n.count, 41);
        for (i = 0; i < 40; i++) {
            int last = notify_remove(&n, &many[i], &key, &len);
            CHECK_EQ(last, i >= 20);                   /* k0..k19 each twice */
            redlock_lock_deinit(&many[i]);
        }
    }
    CHECK_EQ((int)n.count, 1);
    notify_free(&n);
    CHECK_EQ((int)n.count, 0);
    ok_to(0, "SET");
    redlock_lock_deinit(&other);
    redlock_lock_deinit(&third);
    teardown();
}

/* callbacks.listen: on when a failed attempt will be retried after a delay
   at least as long as the node timeout, off when the acquire ends (won, given up,
   cancelled by release) or the lock goes; the key still reads inside the
   last call. */
static int listen_log[16], listen_n;
static size_t listen_key_len;
static void t_listen(void *user, redlock_lock *lk, int on) {
    (void)user;
    if (listen_n < 16) listen_log[listen_n++] = on;
    redlock_lock_key(lk, &listen_key_len);
}
static void setup_listening_delay(int retries, int64_t delay_ms) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    base_config(&cfg, 1);
    cfg.retry_count = retries;
    cfg.retry_delay_ms = delay_ms;
    base_callbacks(&cb);
    cb.listen = t_listen;
    base_opts(&o, 1000, 0);
    setup_callbacks(&cfg, &o, &cb);
    listen_n = 0;
}
static void setup_listening(int retries) { setup_listening_delay(retries, 100); }
static void test_listen_callback(void) {
    /* won at the second attempt */
    setup_listening(2);
    redlock_acquire(&L);
    CHECK_EQ(listen_n, 0);
    nil_to(0, "SET");                       /* lost: undo, then retry */
    CHECK_EQ(listen_n, 1);
    CHECK_EQ(listen_log[0], 1);
    num_to(0, "EVAL", 0);
    redlock_lock_wake(&L);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[1], 0);
    redlock_release(&L);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(listen_n, 2);                  /* nothing for a release */
    /* cancelled by release while it waits */
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(listen_n, 3);
    redlock_release(&L);
    CHECK_EQ(listen_n, 4);
    CHECK_EQ(listen_log[3], 0);
    teardown();
    CHECK_EQ(listen_n, 4);                  /* already off */
    /* deinitialised while it waits: off, with the key still there */
    setup_listening(2);
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(listen_n, 1);
    listen_key_len = 0;
    redlock_lock_deinit(&L);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[1], 0);
    CHECK_EQ(listen_key_len, 3);
    redlock_client_deinit(&C);
    /* retries used up: off when it gives up, once */
    setup_listening(1);
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    run_until_sent(2);
    nil_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(listen_n, 2);
    CHECK_EQ(listen_log[0], 1);
    CHECK_EQ(listen_log[1], 0);
    teardown();
    CHECK_EQ(listen_n, 2);
    /* a retry delay shorter than the node timeout (50 ms): no listening
       (polling finds a release about as soon); a wake still works */
    setup_listening_delay(2, 49);
    redlock_acquire(&L);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    CHECK_EQ(listen_n, 0);
    CHECK_EQ(redlock_lock_waiting(&L), 1);
    redlock_lock_wake(&L);
    expect_starts(0, "SET res");
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();
    CHECK_EQ(listen_n, 0);
    /* as long: listening */
    setup_listening_delay(2, 50);
    redlock_acquire(&L);
    nil_to(0, "SET");
    CHECK_EQ(listen_n, 1);
    teardown();
    CHECK_EQ(listen_n, 2);
}

static void test_release_publishes(void) {
    const char *scripts[3];
    int i;
    scripts[0] = redlock_release_script();
    scripts[1] = redlock_reentrant_release_script();
    scripts[2] = redlock_rw_release_script();
    for (i = 0; i < 3; i++) { /* PUBLISH, or SPUBLISH on the shard channel (both forms) */
        CHECK(strstr(scripts[i], "pcall(redis.call,'publish','" REDLOCK_CHANNEL_PREFIX "'..k,'released')") != NULL);
        CHECK(strstr(scripts[i], "pcall(redis.call,'spublish','" REDLOCK_CHANNEL_PREFIX "'..k,'released')") != NULL);
        CHECK(strstr(scripts[i], "pcall(redis.call,'spublish','" REDLOCK_CHANNEL_PREFIX "{'..k..'}','released')") != NULL);
    }
    CHECK(strstr(redlock_extend_script(), "publish") == NULL);
}

/* A node told sharded gets the flag "s" in its releases (the scripts then
   SPUBLISH), the others "1"; the undo of a failed attempt none. */
static void test_release_sharded_flag(void) {
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_node_sharded(&C, 1), 0);
    CHECK_EQ(redlock_node_set_sharded(&C, 1, 1), REDLOCK_OK);
    CHECK_EQ(redlock_node_sharded(&C, 1), 1);
    CHECK_EQ(redlock_node_set_sharded(&C, 3, 1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_sharded(&C, -1, 1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_sharded(&C, 3), 0);
    redlock_acquire(&L);
    ok_all(3, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(ends(next_to(0), " 1") && !ends(next_to(0), " s"));
    CHECK(ends(next_to(1), " s"));
    CHECK(ends(next_to(2), " 1"));
    num_all(3, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    CHECK_EQ(redlock_node_set_sharded(&C, 1, 0), REDLOCK_OK); /* told again: PUBLISH from then on */
    redlock_acquire(&L);
    ok_all(3, "SET");
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK(ends(next_to(1), " 1"));
    num_all(3, "EVALSHA", 1);
    teardown();
    CHECK_EQ(redlock_node_set_sharded(NULL, 0, 1), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_sharded(NULL, 0), 0);
}

/* The shard channel: the key's own slot, as the release scripts name it. */
static void test_shard_channel(void) {
    char buf[64];
    CHECK_EQ(redlock_shard_channel("orders", 6, buf, sizeof buf), strlen(REDLOCK_CHANNEL_PREFIX "{orders}"));
    CHECK_EQ(strcmp(buf, REDLOCK_CHANNEL_PREFIX "{orders}"), 0);
    CHECK_EQ(redlock_shard_channel("{o}:lock", 8, buf, sizeof buf), strlen(REDLOCK_CHANNEL_PREFIX "{o}:lock"));
    CHECK_EQ(strcmp(buf, REDLOCK_CHANNEL_PREFIX "{o}:lock"), 0);
    redlock_shard_channel("a{}b", 4, buf, sizeof buf); /* an empty tag is none */
    CHECK_EQ(strcmp(buf, REDLOCK_CHANNEL_PREFIX "{a{}b}"), 0);
    redlock_shard_channel("a{b", 3, buf, sizeof buf); /* no closing brace: none */
    CHECK_EQ(strcmp(buf, REDLOCK_CHANNEL_PREFIX "{a{b}"), 0);
    redlock_shard_channel("x{", 2, buf, sizeof buf);
    CHECK_EQ(strcmp(buf, REDLOCK_CHANNEL_PREFIX "{x{}"), 0);
    CHECK_EQ(redlock_shard_channel("", 0, buf, sizeof buf), strlen(REDLOCK_CHANNEL_PREFIX "{}"));
    /* too small: nothing written, the length said */
    memset(buf, 'z', sizeof buf);
    CHECK_EQ(redlock_shard_channel("orders", 6, buf, strlen(REDLOCK_CHANNEL_PREFIX "{orders}")), strlen(REDLOCK_CHANNEL_PREFIX "{orders}"));
    CHECK_EQ(buf[0], 'z');
    CHECK_EQ(redlock_shard_channel("orders", 6, NULL, 0), strlen(REDLOCK_CHANNEL_PREFIX "{orders}"));
}

static void run_notify(int argc, char **argv) {
    RUN_T(test_wake_retries_now);
    RUN_T(test_wake_prompt);
    RUN_T(test_wake_flood_keeps_budget);
    RUN_T(test_wake_elsewhere);
    RUN_T(test_release_publishes);
    RUN_T(test_release_sharded_flag);
    RUN_T(test_shard_channel);
    RUN_T(test_notify_table);
    RUN_T(test_listen_callback);
}
