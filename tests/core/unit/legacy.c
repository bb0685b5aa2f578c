/* legacy.c - servers without SET NX PX: AUTO switching (confirmed by INFO
   server), the SETNX / GET / GETSET algorithm, its value parsing, and the
   per-node bounds that decide whether a legacy key is still ours. */

static void test_auto_legacy(void) {
    char val[128];
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "ERR syntax error");
    expect_sent(0, "INFO server");         /* confirm: is the server that old? */
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    str_to(0, "INFO", "# Server\r\nredis_version:2.4.17\r\nredis_git_sha1:0\r\n");
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
    snprintf(val, sizeof val, "SETNX res %lld:%s", (long long)(T.wall + 1001), redlock_lock_token(&L));
    expect_sent(0, val);
    num_to(0, "SETNX", 0);                /* held: look at the holder's expiry */
    expect_sent(0, "GET res");
    str_to(0, "GET", "1600000000000:0123456789abcdef0123456789abcdef"); /* expired */
    expect_starts(0, "GETSET res ");
    str_to(0, "GETSET", "1600000000000:0123456789abcdef0123456789abcdef");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* release: GET, ours, DEL (no scripts on a legacy node) */
    redlock_release(&L);
    expect_sent(0, "GET res");
    snprintf(val, sizeof val, "%lld:%s", (long long)(T.wall + 1001), redlock_lock_token(&L));
    str_to(0, "GET", val);
    expect_sent(0, "DEL res");
    num_to(0, "DEL", 1);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* the next acquire goes straight to SETNX */
    redlock_acquire(&L);
    expect_starts(0, "SETNX res ");
    teardown();
}

static void test_legacy_not_expired_and_race(void) {
    redlock_config cfg;
    setup_n(1, 0, 1000);
    teardown();
    /* explicit LEGACY mode */
    redlock_config_init(&cfg);
    {
        redlock_callbacks cb;
        redlock_lock_opts o;
        memset(&cb, 0, sizeof cb);
        cb.send = t_send; cb.set_timer = t_timer; cb.now_us = t_now; cb.wall_ms = t_wall;
        cb.random = t_random; cb.on_event = t_event;
        cfg.node_count = 1;
        cfg.mode[0] = REDLOCK_MODE_LEGACY;
        cfg.retry_count = -1;
        CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
        memset(&o, 0, sizeof o);
        o.key = "res"; o.ttl_ms = 1000; o.on_result = t_result;
        redlock_lock_init(&L, &C, &o);
    }
    redlock_acquire(&L);
    expect_starts(0, "SETNX");
    num_to(0, "SETNX", 0);
    str_to(0, "GET", "1800000000000:0123456789abcdef0123456789abcdef"); /* live holder */
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 3);                    /* rollback GET */
    nil_to(0, "GET");
    /* expired, but another client's GETSET got there first */
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    str_to(0, "GET", "1600000000000:0123456789abcdef0123456789abcdef");
    str_to(0, "GETSET", "1700000000999:fedcba9876543210fedcba9876543210");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    CHECK_EQ(T.qn, 6);                    /* the clobbered node is not rolled back */
    /* garbage value: never taken over */
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    str_to(0, "GET", "not-a-lock-value");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    teardown();
}

static void test_modern_mode_no_switch(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    teardown();
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    cfg.mode[0] = REDLOCK_MODE_MODERN;
    cfg.retry_count = -1;
    memset(&cb, 0, sizeof cb);
    cb.send = t_send; cb.now_us = t_now; cb.random = t_random; cb.on_event = t_event;
    redlock_client_init(&C, &cfg, &cb, NULL);
    memset(&o, 0, sizeof o);
    o.key = "res"; o.ttl_ms = 1000; o.on_result = t_result;
    redlock_lock_init(&L, &C, &o);
    redlock_acquire(&L);
    err_to(0, "SET", "ERR syntax error");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_MODERN);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_NO_QUORUM);
    teardown();
}

/* Proves: the undo of attempt 2 does not DEL a node whose GETSET is unanswered, though attempt 1 had won it. */
static void test_defect2_legacy_rollback_stale_until(void) {
    char live[128], ours[128];
    int k, a2, g0, g1, g2, undo;
    snprintf(live, sizeof live, "%s", legacy_value(1800000000000LL, OTHER_TOKEN)); /* another holder, not expired */
    setup_legacy(3, 1, 1000);
    redlock_acquire(&L);
    snprintf(ours, sizeof ours, "%s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
    /* attempt 1: node 0 wins, nodes 1 and 2 are held by a live holder */
    CHECK(starts(0, "SETNX res ") && starts(1, "SETNX res ") && starts(2, "SETNX res "));
    num_to(0, "SETNX", 1);
    num_to(1, "SETNX", 0);
    num_to(2, "SETNX", 0);
    g1 = find_cmd(3, 1, "GET res");
    g2 = find_cmd(3, 2, "GET res");
    CHECK(g1 > 0 && g2 > 0);
    str_to(1, "GET", live);
    str_to(2, "GET", live);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    undo = T.qn - 3;                      /* the undo: GET on every node */
    for (k = 0; k < 3; k++) CHECK(find_cmd(undo, k, "GET res") >= 0);
    str_to(0, "GET", ours);
    str_to(1, "GET", live);
    str_to(2, "GET", live);
    k = find_cmd(undo, 0, "DEL res");     /* attempt 1's win on node 0 is undone: right */
    CHECK(k > 0);
    if (k > 0) num_to(0, "DEL", 1);
    /* attempt 2 */
    a2 = T.qn;
    run_until_sent(a2 + 2);
    CHECK(find_cmd(a2, 0, "SETNX res ") == a2);
    num_to(0, "SETNX", 0);                /* node 0: held ... */
    g0 = find_cmd(a2, 0, "GET res");
    str_to(0, "GET", legacy_value(1600000000000LL, OTHER_TOKEN)); /* ... by an expired value */
    CHECK(find_cmd(g0, 0, "GETSET res ") > g0);   /* sent, never answered */
    num_to(1, "SETNX", 0);
    num_to(2, "SETNX", 0);
    g1 = find_cmd(a2, 1, "GET res");
    g2 = find_cmd(a2, 2, "GET res");
    str_to(1, "GET", live);
    str_to(2, "GET", live);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    /* the undo of attempt 2: exactly one GET per node ... */
    undo = T.qn - 3;
    CHECK_STR(T.q[undo].cmd, "GET res");
    expect_sent(1, "GET res");
    expect_sent(2, "GET res");
    CHECK(T.q[undo].node == 0 && T.q[undo + 1].node == 1 && T.q[undo + 2].node == 2);
    /* ... and node 0 shows our value (our GETSET landed, maybe over a winner's): no DEL */
    str_to(0, "GET", ours);
    str_to(1, "GET", live);
    str_to(2, "GET", live);
    CHECK_EQ(count_cmd(undo, "DEL"), 0);
    CHECK_EQ(T.qn, undo + 3);
    CHECK_EQ(redlock_lock_pending(&L), 0);
    teardown();
}

/* Proves: expiries beyond INT64_MAX (19/20 digits) and digit-only values are never taken over; INT64_MAX is live; an expired one is. */
static void test_defect5_legacy_expiry_overflow(void) {
    static const struct { const char *expiry; int taken; } cases[] = {
        {"9999999999999999999", 0},       /* 19 digits, > INT64_MAX */
        {"9223372036854775808", 0},       /* INT64_MAX + 1 */
        {"18446744073709551616", 0},      /* 20 digits */
        {"99999999999999999999", 0},      /* 20 digits */
        {"9223372036854775807", 0},       /* INT64_MAX: far future, not expired */
        {"1600000000000", 1},             /* expired */
        {"1", 1},                         /* expired */
    };
    char val[128];
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num_to(0, "SETNX", 0);
        snprintf(val, sizeof val, "%s:%s", cases[k].expiry, OTHER_TOKEN);
        str_to(0, "GET", val);
        if (cases[k].taken) {
            expect_starts(0, "GETSET res ");
            CHECK_EQ(T.res.n, 0);
        } else {
            if (count_cmd(0, "GETSET") != 0) printf("#   taken over: %s\n", val);
            CHECK_EQ(count_cmd(0, "GETSET"), 0);
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(vote_status(0), 0);  /* someone else's value, not a protocol error */
        }
        teardown();
    }
    /* all digits, no ':' : not a legacy value at all */
    setup_legacy(1, -1, 1000);
    redlock_acquire(&L);
    num_to(0, "SETNX", 0);
    str_to(0, "GET", "1600000000000");
    CHECK_EQ(count_cmd(0, "GETSET"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
    teardown();
}

/* Proves: a SET syntax error makes the core ask INFO server; an old version (< 2.6.12) switches the node to legacy, SETNX follows. */
static void test_auto_switch_confirmed_by_info(void) {
    static const char *old_versions[] = {"2.4.17", "2.6.11"};
    const redlock_event *sw;
    char info[128];
    int k;
    for (k = 0; k < 2; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        err_to(0, "SET", "ERR syntax error");
        CHECK_EQ(T.qn, 2);
        expect_sent(0, "INFO server");
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        snprintf(info, sizeof info, "# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\n", old_versions[k]);
        str_to(0, "INFO", info);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 1);
        sw = last_ev(REDLOCK_EV_MODE_SWITCH);
        CHECK(sw && sw->node == 0 && sw->mode == REDLOCK_MODE_LEGACY);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_LEGACY);
        expect_starts(0, "SETNX res ");
        num_to(0, "SETNX", 1);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        teardown();
    }
}

/* Proves: INFO showing a modern server (>= 2.6.12) means no switch: the vote is SERVER, and later SET errors are not probed again. */
static void test_auto_no_switch_modern_server(void) {
    static const char *new_versions[] = {"7.0.15", "2.6.12"};
    int k, q;
    for (k = 0; k < 2; k++) {
        char info[128];
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        err_to(0, "SET", "ERR syntax error");
        expect_sent(0, "INFO server");
        snprintf(info, sizeof info, "# Server\r\nredis_version:%s\r\n", new_versions[k]);
        str_to(0, "INFO", info);
        CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
        CHECK_EQ(count_cmd(0, "SETNX"), 0);
        num_to(0, "EVAL", 0);             /* the undo */
        q = T.qn;
        run_until_sent(q);                /* the retry: SET again, same error */
        expect_starts(0, "SET res ");
        err_to(0, "SET", "ERR syntax error");
        CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        CHECK_EQ(count_cmd(0, "INFO"), 1);   /* no second probe */
        CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
        teardown();
    }
}

/* Proves: INFO answered with an error means no switch and no further probes. */
static void test_auto_no_switch_info_error(void) {
    int q;
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "ERR wrong number of arguments for 'set' command");
    expect_sent(0, "INFO server");
    err_to(0, "INFO", "NOPERM this user has no permissions to run the 'info' command");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(redlock_node_mode(&C, 0), REDLOCK_MODE_AUTO);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(count_cmd(0, "SETNX"), 0);
    num_to(0, "EVAL", 0);
    q = T.qn;
    run_until_sent(q);
    expect_starts(0, "SET res ");
    err_to(0, "SET", "ERR syntax error");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    CHECK_EQ(count_cmd(0, "INFO"), 1);
    teardown();
}

/* Proves: on the acquire path (SETNX 0, GET) exactly the well-formed, expired values of at most 64 bytes are taken over (GETSET sent); everything else is another holder's (LOCKED, a "no" vote), never read past its end. */
static void test_legacy_parse_bounds(void) {
    static const struct { const char *v; int taken; } cases[] = {
        {"", 0}, {":", 0}, {":tok", 0}, {"12", 0}, {"12:", 1}, {"12:tok", 1},
        {"abc:tok", 0}, {"-5:tok", 0}, {"+5:tok", 0}, {"1 2:tok", 0}, {" 12:tok", 0}, {"12 :tok", 0},
        {"1699999999999:tok", 1},          /* wall - 1: expired */
        {"1700000000000:tok", 0},          /* == wall: not yet */
        {"1700000000001:tok", 0},
        {"000000000000000012:tok", 1},     /* 18 digits */
        {"0000000000000000012:tok", 1},    /* 19 */
        {"00000000000000000012:tok", 1},   /* 20, small value */
        {"999999999999999999:tok", 0},     /* 18 digits, far future */
        {"922337203685477580:tok", 0},
        {"9223372036854775807:tok", 0},    /* INT64_MAX */
        {"9223372036854775808:tok", 0},    /* one more */
        {"99999999999999999999:tok", 0},
        {"12:a:b", 1},
    };
    char v[REDLOCK__VALUE_MAX + 16], want[256];
    size_t k, n, max = REDLOCK__VALUE_MAX; /* the longest legacy value: a label's and 20 digits */
    for (k = 0; k < sizeof cases / sizeof cases[0] + 6; k++) {
        int taken;
        if (k < sizeof cases / sizeof cases[0]) {
            n = strlen(cases[k].v);
            memcpy(v, cases[k].v, n);
            taken = cases[k].taken;
        } else {
            switch (k - sizeof cases / sizeof cases[0]) {
            case 0: n = max; memset(v, 'a', n); memcpy(v, "12:", 3); taken = 1; break;  /* exactly the bound */
            case 1: n = max + 1; memset(v, 'a', n); memcpy(v, "12:", 3); taken = 0; break;  /* one more */
            case 2: n = max; memset(v, '0', n); v[n - 1] = ':'; v[n - 2] = '1'; taken = 1; break; /* digits, ':' last */
            case 3: n = max + 1; memset(v, '0', n); v[n - 1] = ':'; v[n - 2] = '1'; taken = 0; break;
            case 4: n = max; memset(v, '0', n); v[n - 1] = '5'; taken = 0; break;   /* all digits, no ':' */
            default: n = 1; v[0] = '7'; taken = 0; break;
            }
        }
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num_to(0, "SETNX", 0);
        expect_sent(0, "GET res");
        exact_to(0, "GET", REDLOCK_REPLY_STRING, v, n);
        if (count_cmd(0, "GETSET") != taken) printf("#   value %.*s: taken %d\n", (int)n, v, !taken);
        CHECK_EQ(count_cmd(0, "GETSET"), taken);
        if (taken) {
            snprintf(want, sizeof want, "GETSET res %s", legacy_value(T.wall + 1001, redlock_lock_token(&L)));
            expect_sent(0, want);
            CHECK_EQ(T.res.n, 0);
            exact_to(0, "GETSET", REDLOCK_REPLY_STRING, v, n); /* GETSET returns what we read: ours */
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
        } else {
            CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
            CHECK_EQ(vote_status(0), 0);
        }
        teardown();
    }
}

/* Proves: a GETSET answer that differs from the value read (one byte, or one byte longer / shorter) is a lost race, not ours. */
static void test_legacy_getset_compares_exactly(void) {
    char seen[64], other[65];
    int k;
    memset(seen, 'a', 64);
    memcpy(seen, "12:", 3);
    for (k = 0; k < 4; k++) {
        size_t n = k == 2 ? 63 : k == 3 ? 65 : 64;
        setup_legacy(1, -1, 1000);
        redlock_acquire(&L);
        num_to(0, "SETNX", 0);
        exact_to(0, "GET", REDLOCK_REPLY_STRING, seen, 64);
        expect_starts(0, "GETSET res ");
        memcpy(other, seen, 64);
        other[64] = 'a';
        if (k == 0) other[63] = 'b';
        if (k == 1) other[3] = 'b';
        exact_to(0, "GETSET", REDLOCK_REPLY_STRING, other, n);
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
        teardown();
    }
}

/* Proves: on a legacy node a release / extend GET counts as ours only for "digits:token" with exactly our 32-char token; anything else is not ours (release: EXPIRED, no DEL; extend: STOLEN, no GETSET). */
static void test_legacy_release_extend_malformed_not_ours(void) {
    static const char *fmt[] = {"", ":", "%s", ":%s", "abc:%s", "-5:%s", "1 2:%s", "12:%sx", "12:x%s",
                                "12;%s", "9223372036854775808:%s", "12:%.31s", "12:0123456789abcdef0123456789abcdef"};
    static const char *good[] = {"12:%s", "9223372036854775807:%s", "0000000000000000000000012:%s"};
    char v[128], tok[REDLOCK_TOKEN_LEN + 1];
    size_t k;
    int ext;
    for (ext = 0; ext < 2; ext++) {
        for (k = 0; k < sizeof fmt / sizeof fmt[0] + sizeof good / sizeof good[0]; k++) {
            int is_good = k >= sizeof fmt / sizeof fmt[0];
            setup_legacy(1, -1, 1000);
            redlock_acquire(&L);
            num_to(0, "SETNX", 1);
            CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
            strcpy(tok, redlock_lock_token(&L));
            snprintf(v, sizeof v, is_good ? good[k - sizeof fmt / sizeof fmt[0]] : fmt[k], tok);
            if (ext) redlock_extend(&L, 0);
            else redlock_release(&L);
            expect_sent(0, "GET res");
            exact_to(0, "GET", REDLOCK_REPLY_STRING, v, strlen(v));
            if (is_good) {
                expect_starts(0, ext ? "GETSET res " : "DEL res");
            } else {
                if (T.qn != 2 + ext) printf("#   \"%s\" taken as ours\n", v);
                CHECK_EQ(T.qn, 2 + (ext ? 1 : 0));  /* extend: the LOST cleanup GET only */
                CHECK_EQ(count_cmd(0, "DEL"), 0);
                CHECK_EQ(count_cmd(0, "GETSET"), 0);
                if (ext) {
                    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_STOLEN);
                    CHECK_EQ(redlock_lock_lost_reason(&L), REDLOCK_ERR_STOLEN);
                } else {
                    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
                }
            }
            CHECK_EQ(count_ev(REDLOCK_EV_KEY_LEFT), 0);
            teardown();
        }
    }
    /* on a node without scripts (modern values) "12:token" is not ours either */
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    ok_to(0, "SET");
    strcpy(tok, redlock_lock_token(&L));
    redlock_release(&L);
    err_to(0, "EVALSHA", "NOPERM no permissions to run the 'evalsha' command");
    expect_sent(0, "GET res");
    snprintf(v, sizeof v, "12:%s", tok);
    str_to(0, "GET", v);
    CHECK_EQ(count_cmd(0, "DEL"), 0);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_ERR_EXPIRED);
    teardown();
}

/* Proves: on a legacy node the bound follows the extend's GETSET: longer, a release after the old validity DELetes; shorter, a release within node_timeout + drift of the new end leaves the key (1 µs earlier: DEL); GETSET unanswered, the key is left. */
static void test_legacy_release_bound_follows_extend(void) {
    int pass;
    for (pass = 0; pass < 4; pass++) {   /* longer; shorter at the limit; 1 µs before; GETSET unanswered */
        int64_t t0, t1, ttl = pass == 0 ? 1000 : 10000, ext = pass == 0 ? 5000 : 1000;
        int64_t bound, limit = 50000 + drift_us(ttl, 1);
        char want[256];
        setup_legacy(1, -1, ttl);
        t0 = T.now;
        redlock_acquire(&L);
        num_to(0, "SETNX", 1);
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + ttl * 1000 - drift_us(ttl, 1));
        T.now = t0 + 100000;
        t1 = T.now;
        CHECK_EQ(redlock_extend(&L, ext), REDLOCK_OK);
        bound = t1 + ext * 1000 - drift_us(ext, 1);
        expect_sent(0, "GET res");
        str_to(0, "GET", legacy_value(T.wall + ttl + 1, redlock_lock_token(&L)));
        snprintf(want, sizeof want, "GETSET res %s", legacy_value(T.wall + ext + 1, redlock_lock_token(&L)));
        expect_sent(0, want);
        if (pass == 3) {
            advance_to(t1 + 50000);
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_NO_QUORUM);
            CHECK_EQ(release_at(t1 + 60000, 1), 0);
        } else {
            str_to(0, "GETSET", legacy_value(T.wall + ttl + 1, redlock_lock_token(&L)));
            CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
            CHECK_EQ(redlock_lock_valid_until(&L), bound);
            if (pass == 0) CHECK_EQ(release_at(t0 + 2000000, 1), 1);
            else CHECK_EQ(release_at(bound - limit - (pass - 1), 1), pass - 1);
        }
        teardown();
    }
}

/* Proves: INFO without a usable redis_version never switches a node to legacy; versions compare by part (2.6.100 is modern, 2.5.9999 old). */
static void test_info_version_parsing(void) {
    static const struct { const char *info; int legacy; } c[] = {
        {"# Server\r\nredis_mode:standalone\r\n", 0},
        {"# Server\r\nredis_version:\r\n", 0},
        {"# Server\r\nredis_version:abc\r\n", 0},
        {"redis_version", 0},
        {"", 0},
        {"redis_version:2.6.100\r\n", 0},
        {"redis_version:3\r\n", 0},
        {"redis_version:2.5.9999\r\n", 1},
        {"redis_version:2\r\n", 1},
        {"redis_version:2.6.11", 1},
        {"redis_version:2.6.12", 0},
        {"x:1\r\nredis_version:1.2.6\r\n", 1},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        setup_n(1, 0, 1000);
        redlock_acquire(&L);
        err_to(0, "SET", "ERR syntax error");
        expect_sent(0, "INFO server");
        str_to(0, "INFO", c[k].info);
        if (redlock_node_mode(&C, 0) != (c[k].legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO))
            printf("#   INFO \"%s\": legacy %d\n", c[k].info, !c[k].legacy);
        CHECK_EQ(redlock_node_mode(&C, 0), c[k].legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO);
        CHECK_EQ(count_cmd(0, "SETNX"), c[k].legacy);
        CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), c[k].legacy);
        if (!c[k].legacy) CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
        teardown();
    }
}

/* Proves: an old server's error text is recognised when it is the whole
   reply, not only inside a longer one. */
static void test_old_set_error_alone(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "syntax error");
    expect_sent(0, "INFO server");
    teardown();
}

/* Proves: an INFO answer that is not a string says nothing about the
   version: no switch to legacy. */
static void test_info_not_a_string(void) {
    setup_n(1, 0, 1000);
    redlock_acquire(&L);
    err_to(0, "SET", "ERR syntax error");
    expect_sent(0, "INFO server");
    num_to(0, "INFO", 20417);
    CHECK_EQ(count_ev(REDLOCK_EV_MODE_SWITCH), 0);
    CHECK_EQ(count_cmd(0, "SETNX"), 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_SERVER);
    teardown();
}

static void run_legacy(int argc, char **argv) {
    RUN_T(test_auto_legacy);
    RUN_T(test_legacy_not_expired_and_race);
    RUN_T(test_modern_mode_no_switch);
    RUN_T(test_defect2_legacy_rollback_stale_until);
    RUN_T(test_defect5_legacy_expiry_overflow);
    RUN_T(test_auto_switch_confirmed_by_info);
    RUN_T(test_auto_no_switch_modern_server);
    RUN_T(test_auto_no_switch_info_error);
    RUN_T(test_legacy_parse_bounds);
    RUN_T(test_legacy_getset_compares_exactly);
    RUN_T(test_legacy_release_extend_malformed_not_ours);
    RUN_T(test_legacy_release_bound_follows_extend);
    RUN_T(test_info_version_parsing);
    RUN_T(test_old_set_error_alone);
    RUN_T(test_info_not_a_string);
}
