/* config.c - configuration: what client_init and lock_init refuse and
   accept, the defaults, the ranges of millisecond settings, the built-in
   callbacks and clocks, the script hashes, error strings, the size of a
   handle and of its key block. */

static void test_client_init_errors(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_client c;
    memset(&cb, 0, sizeof cb);
    redlock_config_init(&cfg);
    CHECK_EQ(redlock_client_init(NULL, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID); /* no send */
    cb.send = t_send;
    CHECK_EQ(redlock_client_init(&c, NULL, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.node_count = 0;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_NODES);
    cfg.node_count = REDLOCK_MAX_NODES + 1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_NODES);
    cfg.node_count = 3;
    cfg.node_timeout_ms = -1;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.node_timeout_ms = 0;
    cfg.drift_factor = 0.0 / 0.0;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.drift_factor = -0.01;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.drift_factor = 0.5;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.drift_factor = 0;
    cfg.mode[1] = (redlock_mode)9;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
    cfg.mode[1] = REDLOCK_MODE_AUTO;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    redlock_client_deinit(&c);
    {   /* `= {0}` plus node count and send is a valid config */
        redlock_config z;
        memset(&z, 0, sizeof z);
        z.node_count = 1;
        CHECK_EQ(redlock_client_init(&c, &z, &cb, NULL), REDLOCK_OK);
        redlock_client_deinit(&c);
    }
}

static void test_lock_init_errors(void) {
    redlock_lock_opts o;
    redlock_lock lk;
    char longkey[REDLOCK_MAX_KEY + 2];
    redlock_client dead;
    setup_n(1, 0, 1000);
    memset(&o, 0, sizeof o);
    o.ttl_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &C, NULL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(NULL, &C, &o), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY);           /* NULL key */
    o.key = "";
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY);           /* empty */
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    o.key = longkey;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_KEY_TOO_LONG);
    o.key_len = REDLOCK_MAX_KEY;                                          /* exactly the limit */
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_OK);
    redlock_lock_deinit(&lk);
    o.key = "k";
    o.key_len = 0;
    o.ttl_ms = 0;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = -5;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = (int64_t)1 << 50;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_TTL);
    o.ttl_ms = 100;
    o.watchdog = 1;
    o.renew_every_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &C, &o), REDLOCK_ERR_INVALID);
    memset(&dead, 0, sizeof dead);
    o.renew_every_ms = 0;
    CHECK_EQ(redlock_lock_init(&lk, &dead, &o), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_lock_init(&lk, NULL, &o), REDLOCK_ERR_DETACHED);
    teardown();
}
/* Proves: lock_init checks the options before what the nodes can do: on
   a client whose nodes are all configured LEGACY (no scripts), a lock kind
   that needs scripts with an option it refuses (a bad owner id with
   reentrant + fence, access with reentrant or fence, an access value not
   one of the four, a bad label) is INVALID; the same kinds with valid
   options are NO_SCRIPTING. */
static void test_lock_init_options_before_nodes(void) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    char longowner[REDLOCK_MAX_OWNER + 2];
    int k;
    base_config(&cfg, 3);
    for (k = 0; k < 3; k++) cfg.mode[k] = REDLOCK_MODE_LEGACY;
    base_callbacks(&cb);
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.reentrant = 1;
    o.owner = "svc a";                    /* a space: not a hash field's word */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    memset(longowner, 'o', sizeof longowner - 1);
    longowner[sizeof longowner - 1] = 0;
    o.owner = longowner;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "svc-a";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    o.reentrant = 0;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    o.label = "web 1";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.label = NULL;
    o.access = REDLOCK_ACCESS_SHARED;     /* with fence */
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.fence = 0;
    o.reentrant = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.reentrant = 0;
    o.access = (redlock_access)7;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.access = REDLOCK_ACCESS_EXCLUSIVE;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    o.access = REDLOCK_ACCESS_DEFAULT;
    o.reentrant = 1;
    o.owner = "svc a";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_INVALID);
    o.owner = "svc-a";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NO_SCRIPTING);
    redlock_client_deinit(&C);
}

/* Nodes that refuse the client's AUTH or SELECT: once too few others are
   left for a quorum, the acquire ends at once with CONFIG (no retry, no
   waiting for wait_ms); the undo still goes out to every node. */
static void test_config_refused(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int k;
    base_config(&cfg, 3);
    cfg.retry_count = 5;
    base_opts(&o, 1000, 0);
    o.wait_ms = 10000;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3);
    fail_to(0, "SET", REDLOCK_ERR_AUTH);
    CHECK_EQ(T.res.n, 0); /* one refusal of three: a quorum is still possible */
    fail_to(1, "SET", REDLOCK_ERR_SELECT);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].op, REDLOCK_OP_ACQUIRE);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_CONFIG);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(count_ev(REDLOCK_EV_FAILED), 1);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    for (k = 0; k < 3; k++) CHECK(starts(3 + k, "EVAL")); /* undo on all three */
    CHECK_EQ(vote_status(0), REDLOCK_ERR_AUTH);
    CHECK_EQ(vote_status(1), REDLOCK_ERR_SELECT);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_CONFIG), "unknown status") != 0);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_SELECT), "unknown status") != 0);
    teardown();

    /* refused by send itself (a synchronous transport), and by a NOAUTH reply */
    setup_with(&cfg, &o);
    T.fail_send_node = 0;
    T.fail_send_rc = REDLOCK_ERR_AUTH;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 2);
    err_to(1, "SET", "NOAUTH Authentication required.");
    CHECK_EQ(vote_status(1), REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CONFIG);
    teardown();

    /* one node of three refusing: held by the other two */
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", REDLOCK_ERR_AUTH);
    ok_to(1, "SET");
    ok_to(2, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    teardown();

    /* other errors are not configuration: NO_QUORUM and retries as before */
    failures_retried(&cfg, &o, 0, REDLOCK_ERR_SERVER, 1, REDLOCK_ERR_CONNECT);
}

/* Nodes that refuse the client's TLS (a certificate refused, an alert, an
   answer that is not TLS: the adapters say TLS only for those) are
   refusals like AUTH's: with too few others left the acquire ends at
   once, with TLS, whatever wait_ms and retry_count say; beside an AUTH
   refusal still TLS (that node's AUTH was never tried). A node that
   answers again counts again. */
static void test_tls_refused(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t t0;
    base_config(&cfg, 3);
    cfg.retry_count = 1000;
    base_opts(&o, 1000, 0);
    o.wait_ms = 30000;
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.n, 0); /* one of three: a quorum is still possible */
    fail_to(2, "SET", REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(T.res.r[0].status, REDLOCK_ERR_TLS);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.now, t0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_TLS);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_TLS);
    teardown();

    /* TLS beside AUTH: TLS; refused by send itself too */
    setup_with(&cfg, &o);
    T.fail_send_node = 1;
    T.fail_send_rc = REDLOCK_ERR_TLS;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    teardown();

    /* the control: resets and timeouts over TLS are the network's: retried */
    failures_retried(&cfg, &o, 0, REDLOCK_ERR_TRANSPORT, 2, REDLOCK_ERR_CONNECT);

    /* the next acquire tries again; a node that answers counts again */
    base_config(&cfg, 1);
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    fail_to(0, "SET", REDLOCK_ERR_TLS);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TLS);
    while (redlock_lock_pending(&L) && T.timer != REDLOCK_NO_DEADLINE) advance_to(T.timer); /* the undo */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK(strcmp(redlock_strerror(REDLOCK_ERR_NO_TLS), "unknown status") != 0);
    teardown();
}

/* The decision came before the second refusal (another holder answered
   first): the refusal of the undo ends the acquire at once, not after the
   retry delay. */
static void test_config_refused_after_decision(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    int64_t t0;
    base_config(&cfg, 3);
    cfg.retry_count = 5;
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    t0 = T.now;
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil_to(0, "SET");                                  /* held by another */
    fail_to(1, "SET", REDLOCK_ERR_AUTH); /* decided: LOCKED so far */
    CHECK_EQ(T.res.n, 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 1);
    CHECK_EQ(T.qn, 6);                                 /* the undo on all three */
    fail_to(2, "SET", REDLOCK_ERR_AUTH); /* the SET's answer: a stale tag */
    fail_to(2, "EVAL", REDLOCK_ERR_AUTH); /* the undo's: counted */
    num_to(0, "EVAL", 0);
    fail_to(1, "EVAL", REDLOCK_ERR_AUTH);
    CHECK_EQ(T.res.n, 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_CONFIG);
    CHECK_EQ(T.res.r[0].attempts, 1);
    CHECK_EQ(T.now, t0);
    CHECK_EQ(T.qn, 6); /* no second attempt */
    /* the next acquire still tries (someone may have fixed the node) and a
       good answer clears the node's refusal */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 9);
    ok_to(0, "SET");
    ok_to(1, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    fail_to(2, "EVALSHA", REDLOCK_ERR_AUTH);
    CHECK_EQ(last_status(REDLOCK_OP_RELEASE), REDLOCK_OK);
    /* node 2 still refuses; 0 and 1 answered: one refusal, a quorum is possible */
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    nil_to(0, "SET");
    fail_to(1, "SET", REDLOCK_ERR_TRANSPORT);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 2);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK); /* nothing new yet */
    teardown();
}

static void test_sha_constants(void) {
    /* the hard-coded SHA1s must be those of the script texts */
    char cmd[2048], out[64];
    const char *scripts[13];
    const char *shas[13] = {"d7e00109fcea7097a6337cb32a8802b6d9d91443", "e9a2f3813b737b2b7c48ab77e3b5b9a159cff394",
                           "fe1913b107883a8d56dff9985f4ef19d96780450", "7283c68fe5834b62f0fa88be7e1310f6391bcf58",
                           "8713768fb046a3ec2f3a21545b1de720ccbd516d", "08c7557d4c89b0ab5b53a3a0ef90a225f2be7888",
                           "48e95165afb854dba74eb9d2c02d43ed7c87f94a", "65d74805f790707d154a364cfbd39c5a901e9c59",
                           "9e90d98820f6fd7cf2d8944664d249d42ea91993", "9aed5e9a15c9204fc81f0a524e790f2b5de165d1",
                           "c3f8e3c9872b4599c1c04f44f8ed6c6cf3b1c9ef", "f7bf6351927f135b8da4a9c42452806dc2a47757",
                           "4fa1c0304cf0189b45ec8ec2c59d15e46e862158"};
    int k;
    scripts[0] = redlock_release_script();
    scripts[1] = redlock_extend_script();
    scripts[2] = redlock_reentrant_acquire_script();
    scripts[3] = redlock_reentrant_release_script();
    scripts[4] = redlock_reentrant_extend_script();
    scripts[5] = redlock_fence_acquire_script();
    scripts[6] = redlock_fence_write_back_script();
    scripts[7] = redlock_fenced_set_script();
    scripts[8] = redlock_reentrant_fence_acquire_script();
    scripts[9] = redlock_reentrant_fence_write_back_script();
    scripts[10] = redlock_rw_acquire_script();
    scripts[11] = redlock_rw_release_script();
    scripts[12] = redlock_rw_extend_script();
    for (k = 0; k < 13; k++) {
        FILE *f;
        snprintf(cmd, sizeof cmd, "printf '%%s' \"%s\" | sha1sum", scripts[k]);
        f = popen(cmd, "r");
        CHECK(f != NULL);
        if (!f) continue;
        CHECK(fgets(out, sizeof out, f) != NULL);
        pclose(f);
        CHECK(strncmp(out, shas[k], 40) == 0);
    }
}

static void test_strerror(void) {
    int s;
    for (s = 0; s >= -54; s--) {
        const char *m = redlock_strerror(s);
        CHECK(m != NULL);
        if ((s <= -13 && s >= -19) || (s <= -31 && s >= -39) || s == -54) CHECK_STR(m, "unknown status");
        else CHECK(strcmp(m, "unknown status") != 0);
    }
    CHECK_STR(redlock_strerror(12345), "unknown status");
    CHECK_STR(redlock_state_name(REDLOCK_STATE_HELD), "held");
    CHECK_STR(redlock_event_name(REDLOCK_EV_RENEWED), "renewed");
}

static void test_builtin_callbacks(void) {
    /* the built-in clock and OS random source */
    redlock_client c;
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock lk;
    redlock_lock_opts o;
    char a[REDLOCK_TOKEN_LEN + 1];
    redlock_config_init(&cfg);
    memset(&cb, 0, sizeof cb);
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    cb.send = t_send;
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    memset(&o, 0, sizeof o);
    o.key = "k"; o.ttl_ms = 100;
    CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_OK);
    CHECK_EQ(redlock_acquire(&lk), REDLOCK_OK);
    strcpy(a, redlock_lock_token(&lk));
    CHECK(redlock_next_deadline(&c) > 0 && redlock_next_deadline(&c) != REDLOCK_NO_DEADLINE);
    redlock_release(&lk);
    redlock_lock_deinit(&lk);
    redlock_lock_init(&lk, &c, &o);
    redlock_acquire(&lk);
    CHECK(strcmp(a, redlock_lock_token(&lk)) != 0);
    redlock_client_deinit(&c);
    CHECK_EQ(redlock_lock_state(&lk), REDLOCK_STATE_IDLE);   /* detached */
    CHECK_EQ(redlock_release(&lk), REDLOCK_ERR_DETACHED);
}

/* Proves: at the default limits a lock handle is at most 512 bytes (16
   bytes per node). */
static void test_handle_size(void) {
    printf("# sizeof(redlock_lock) %u, sizeof(redlock_client) %u, per node %u\n", (unsigned)sizeof(redlock_lock),
           (unsigned)sizeof(redlock_client), (unsigned)sizeof(node_state));
#if REDLOCK_MAX_NODES == 16 && REDLOCK_MAX_KEY == 512
    CHECK(sizeof(redlock_lock) <= 512);
#endif
    CHECK(sizeof(node_state) <= 16);
}

static void test_key_block(void) {
    redlock_lock extra[3];
    redlock_lock_opts o;
    char key[16];
    int i;
    long before = key_blocks;
    setup_n(1, 0, 1000);
    CHECK_EQ(key_blocks, before + 1);
    base_opts(&o, 1000, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK); /* again: the old block goes */
    CHECK_EQ(key_blocks, before + 1);
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
    redlock_lock_deinit(&L);                        /* twice: nothing more */
    CHECK_EQ(key_blocks, before);
    /* the caller's buffer changes after init: the lock keeps its key */
    snprintf(key, sizeof key, "k:%d", 1);
    o.key = key;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    snprintf(key, sizeof key, "x:%d", 2);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(strncmp(T.q[T.qn - 1].cmd, "SET k:1 ", 8), 0);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    /* refused: NOMEM, and the handle that was initialised is detached */
    refuse_malloc = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_ERR_NOMEM);
    refuse_malloc = 0;
    CHECK_EQ(key_blocks, before);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_ERR_DETACHED);
    CHECK_STR(redlock_lock_token(&L), "");
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    for (i = 0; i < 3; i++) CHECK_EQ(redlock_lock_init(&extra[i], &C, &o), REDLOCK_OK);
    CHECK_EQ(key_blocks, before + 4);
    redlock_client_deinit(&C);                      /* frees every block */
    CHECK_EQ(key_blocks, before);
    for (i = 0; i < 3; i++) redlock_lock_deinit(&extra[i]);
    redlock_lock_deinit(&L);
    CHECK_EQ(key_blocks, before);
}

/* Proves: the block lock_init allocates has the size section 5 gives:
   REDLOCK_KEY_BLOCK_SIZE(key length), a reentrant lock REDLOCK_MAX_OWNER +
   9 more, a fenced lock REDLOCK_FENCE_PREFIX and the key more (both: both),
   a readers-writer lock nothing more. */
static void test_key_block_sizes(void) {
    static const size_t prefix = sizeof REDLOCK_FENCE_PREFIX - 1;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    base_opts(&o, 1000, 0);
    o.key = "abcde";
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5));
    o.reentrant = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + REDLOCK_MAX_OWNER + 9);
    o.fence = 1;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + REDLOCK_MAX_OWNER + 9 + prefix + 5);
    o.reentrant = 0;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5) + prefix + 5);
    o.fence = 0;
    o.access = REDLOCK_ACCESS_SHARED;
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
    CHECK_EQ(last_block, REDLOCK_KEY_BLOCK_SIZE(5));
    teardown();
}

/* Proves: every *_ms setting must be 0..2^40 (INT64_MAX and 2^40+1 refused, 2^40 accepted); extend ttl > 2^40 is ERR_TTL. */
static void test_defect6_ms_settings_range(void) {
    const int64_t max = (int64_t)1 << 40;
    const int64_t bad[] = {INT64_MAX, ((int64_t)1 << 40) + 1};
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    redlock_client c;
    redlock_lock lk;
    int f;
    size_t b;
    base_callbacks(&cb);
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    T.client = &C;
    for (f = 0; f < 5; f++) {
        int64_t *field;
        base_config(&cfg, 1);
        field = f == 0 ? &cfg.node_timeout_ms : f == 1 ? &cfg.clock_drift_ms : f == 2 ? &cfg.retry_delay_ms
              : f == 3 ? &cfg.wait_ms : &cfg.retry_jitter_ms;
        for (b = 0; b < 2; b++) {
            *field = bad[b];
            if (redlock_client_init(&c, &cfg, &cb, NULL) != REDLOCK_ERR_INVALID) printf("#   config field %d accepted\n", f);
            CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_ERR_INVALID);
        }
        *field = max;
        CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
        redlock_client_deinit(&c);
    }
    base_config(&cfg, 1);
    cfg.retry_jitter_ms = -1;             /* negative jitter: none */
    CHECK_EQ(redlock_client_init(&c, &cfg, &cb, NULL), REDLOCK_OK);
    for (f = 0; f < 5; f++) {
        int64_t *field;
        base_opts(&o, 1000, 0);
        field = f == 0 ? &o.renew_every_ms : f == 1 ? &o.max_hold_ms : f == 2 ? &o.retry_delay_ms
              : f == 3 ? &o.wait_ms : &o.retry_jitter_ms;
        for (b = 0; b < 2; b++) {
            *field = bad[b];
            if (redlock_lock_init(&lk, &c, &o) != REDLOCK_ERR_INVALID) printf("#   lock option %d accepted\n", f);
            CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_ERR_INVALID);
        }
        *field = max;
        CHECK_EQ(redlock_lock_init(&lk, &c, &o), REDLOCK_OK);
        redlock_lock_deinit(&lk);
    }
    redlock_client_deinit(&c);
    /* extend's ttl: the same range */
    setup_held(1, 1000);
    CHECK_EQ(redlock_extend(&L, INT64_MAX), REDLOCK_ERR_TTL);
    CHECK_EQ(redlock_extend(&L, max + 1), REDLOCK_ERR_TTL);
    CHECK_EQ(T.qn, 1);
    CHECK_EQ(redlock_extend(&L, max), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();
    /* settings at their maximum: the microsecond arithmetic does not overflow */
    base_config(&cfg, 1);
    cfg.node_timeout_ms = cfg.retry_delay_ms = cfg.retry_jitter_ms = max;
    base_opts(&o, max, 1);
    o.renew_every_ms = max - 1;
    o.max_hold_ms = max;
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    CHECK_EQ(T.timer, T.now + max * 1000);   /* node timeout */
    nil_to(0, "SET");                     /* retry, after the undo */
    num_to(0, "EVAL", 0);
    CHECK(T.timer >= T.now && T.timer <= T.now + 2 * max * 1000);
    run_until_sent(2);
    ok_to(0, "SET");
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
    CHECK_EQ(redlock_lock_valid_until(&L), T.now + max * 1000 - drift_us(max, 0));
    teardown();
    base_config(&cfg, 1);
    cfg.wait_ms = cfg.retry_delay_ms = max;  /* the retry would end after wait_ms */
    base_opts(&o, 1000, 0);
    setup_with(&cfg, &o);
    redlock_acquire(&L);
    T.now += 1;
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    CHECK_EQ(T.res.n, 0);                    /* the last try, as late as can still end in time */
    CHECK_EQ(T.timer, T.now - 1 + max * 1000 - 50000);
    advance_to(T.timer);
    nil_to(0, "SET");
    num_to(0, "EVAL", 0);
    CHECK_EQ(T.timer, T.now + 50000);        /* then the deadline */
    advance_to(T.timer);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_TIMEOUT);
    teardown();
}

static int64_t sys_mono_us(void) {
    struct timespec ts;
#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
static int64_t sys_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/* Client C (now_us and wall_ms NULL: built in) and lock L, 1 node. */
static void setup_builtin_clocks(redlock_mode mode, int64_t ttl) {
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_lock_opts o;
    memset(&T, 0, sizeof T);
    T.fail_send_node = -1;
    T.client = &C;
    base_config(&cfg, 1);
    cfg.mode[0] = mode;
    base_callbacks(&cb);
    cb.now_us = NULL;
    cb.wall_ms = NULL;
    CHECK_EQ(redlock_client_init(&C, &cfg, &cb, NULL), REDLOCK_OK);
    base_opts(&o, ttl, 0);
    CHECK_EQ(redlock_lock_init(&L, &C, &o), REDLOCK_OK);
}

/* Proves: with now_us / wall_ms NULL, deadlines and validity follow CLOCK_BOOTTIME (else MONOTONIC) in µs, and a legacy SETNX value's expiry is CLOCK_REALTIME ms + ttl + 1 (within 2 ms). */
static void test_builtin_clocks_match_system(void) {
    const int64_t slack = 2000;
    int64_t before, after, wb, wa, expiry;
    int legacy;
    for (legacy = 0; legacy < 2; legacy++) {
        setup_builtin_clocks(legacy ? REDLOCK_MODE_LEGACY : REDLOCK_MODE_AUTO, 5000);
        before = sys_mono_us();
        wb = sys_wall_ms();
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        wa = sys_wall_ms();
        after = sys_mono_us();
        CHECK(redlock_next_deadline(&C) >= before + 50000 - slack);
        CHECK(redlock_next_deadline(&C) <= after + 50000 + slack);
        CHECK_EQ(T.timer, redlock_next_deadline(&C));
        if (legacy) {
            char *colon = strchr(T.q[0].cmd, ':');
            CHECK(starts(0, "SETNX res ") && colon != NULL);
            expiry = strtoll(T.q[0].cmd + 10, NULL, 10);
            CHECK(expiry >= wb + 5001 - 2 && expiry <= wa + 5001 + 2);
            if (!(expiry >= wb + 5001 - 2 && expiry <= wa + 5001 + 2))
                printf("#   expiry %lld, wall %lld\n", (long long)expiry, (long long)wb);
            num_to(0, "SETNX", 1);
        } else {
            ok_to(0, "SET");
        }
        CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_HELD);
        CHECK(redlock_lock_valid_until(&L) >= before + 5000000 - drift_us(5000, legacy) - slack);
        CHECK(redlock_lock_valid_until(&L) <= after + 5000000 - drift_us(5000, legacy) + slack);
        CHECK_EQ(T.res.n, 1);
        CHECK(T.res.r[0].validity_us > 5000000 - drift_us(5000, legacy) - 100000);
        CHECK(T.res.r[0].validity_us <= 5000000 - drift_us(5000, legacy));
        CHECK(T.res.r[0].elapsed_us >= 0 && T.res.r[0].elapsed_us < 100000);
        teardown();
    }
}

/* Proves: redlock_config_init writes the documented defaults, and a zero config gets them: node timeout 50 ms, drift 1% + 2 ms, 3 retries, 200 ms +- 100 ms. */
static void test_default_config_values(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    const redlock_event *ev;
    int i, pass;
    memset(&cfg, 0x5a, sizeof cfg);
    redlock_config_init(&cfg);
    CHECK_EQ(cfg.node_count, 1);
    CHECK_EQ(cfg.node_timeout_ms, 50);
    CHECK(cfg.drift_factor == 0.01);
    CHECK_EQ(cfg.clock_drift_ms, 2);
    CHECK_EQ(cfg.retry_count, 3);
    CHECK_EQ(cfg.retry_delay_ms, 200);
    CHECK_EQ(cfg.retry_jitter_ms, 100);
    CHECK_EQ(cfg.wait_ms, 0);
    for (i = 0; i < REDLOCK_MAX_NODES; i++) CHECK_EQ(cfg.mode[i], REDLOCK_MODE_AUTO);
    for (pass = 0; pass < 2; pass++) {
        int64_t t0;
        memset(&cfg, 0, sizeof cfg);
        cfg.node_count = 1;
        base_opts(&o, 1000, 0);
        fixed_r = pass ? 200000 : 0;      /* the two ends of +- 100 ms */
        setup_random(&cfg, &o, fixed_random);
        t0 = T.now;
        redlock_acquire(&L);
        CHECK_EQ(T.timer, t0 + 50000);
        for (i = 0; i < 4; i++) {
            expect_starts(0, "SET res ");
            nil_to(0, "SET");
            if (i < 3) {
                ev = last_ev(REDLOCK_EV_RETRY);
                CHECK(ev && ev->delay_us == (pass ? 300000 : 100000));
                num_to(0, "EVAL", 0);
                CHECK_EQ(T.timer, T.now + (pass ? 300000 : 100000));
                advance_to(T.timer);
            }
        }
        CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_LOCKED);
        CHECK_EQ(T.res.r[0].attempts, 4);
        num_to(0, "EVAL", 0);
        t0 = T.now;
        redlock_acquire(&L);
        ok_to(0, "SET");
        CHECK_EQ(redlock_lock_valid_until(&L), t0 + 1000000 - 12000);
        teardown();
    }
}

/* Proves: the built-in monotonic clock reads exactly the system's, in µs
   (each reading lies between two of clock_gettime's, truncated alike). */
static void test_builtin_mono_exact(void) {
    int k;
    for (k = 0; k < 200; k++) {
        int64_t before, d, after;
        setup_builtin_clocks(REDLOCK_MODE_AUTO, 5000);
        before = sys_mono_us();
        CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
        after = sys_mono_us();
        d = redlock_next_deadline(&C) - 50000;   /* the round's deadline: the node timeout after now */
        teardown();
        if (d < before || d > after) {
            printf("#   reading %d: clock %lld outside [%lld, %lld]\n", k, (long long)d, (long long)before, (long long)after);
            CHECK(0);
            break;
        }
    }
}

static void run_config(int argc, char **argv) {
    RUN_T(test_client_init_errors);
    RUN_T(test_lock_init_errors);
    RUN_T(test_lock_init_options_before_nodes);
    RUN_T(test_config_refused);
    RUN_T(test_config_refused_after_decision);
    RUN_T(test_tls_refused);
    RUN_T(test_sha_constants);
    RUN_T(test_strerror);
    RUN_T(test_builtin_callbacks);
    RUN_T(test_defect6_ms_settings_range);
    RUN_T(test_builtin_clocks_match_system);
    RUN_T(test_default_config_values);
    RUN_T(test_handle_size);
    RUN_T(test_key_block);
    RUN_T(test_key_block_sizes);
    RUN_T(test_builtin_mono_exact);
}
