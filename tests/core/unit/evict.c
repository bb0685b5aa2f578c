/* evict.c - nodes that may evict keys: what INFO tells, node state, and
   the locks that refuse such nodes. */

/* The latest result (a zeroed one if none came). */
static const redlock_result *last_res(void) {
    static const redlock_result none;
    return T.res.n > 0 ? &T.res.r[T.res.n - 1] : &none;
}

/* Proves: INFO's maxmemory_policy names what a server may evict (allkeys-*
   every key, volatile-* keys with a time to live, noeviction nothing);
   maxmemory 0 evicts nothing whatever the policy; a missing maxmemory line
   counts as a limit; no policy line, or a name not known, is -1 (unknown);
   only whole lines count; the name is copied, cut to fit. */
static void test_evict_info_parse(void) {
    static const char redis7[] = "# Memory\r\nused_memory:1000000\r\nmaxmemory:2097152\r\n"
                                 "maxmemory_human:2.00M\r\nmaxmemory_policy:allkeys-random\r\nallocator_frag_ratio:1.1\r\n";
    static const struct { const char *text; int want; const char *name; } c[] = {
        { "maxmemory:100\r\nmaxmemory_policy:allkeys-lru\r\n", REDLOCK_EVICTS_ALL, "allkeys-lru" },
        { "maxmemory:100\r\nmaxmemory_policy:allkeys-lfu", REDLOCK_EVICTS_ALL, "allkeys-lfu" },
        { "maxmemory:100\nmaxmemory_policy:volatile-ttl\n", REDLOCK_EVICTS_VOLATILE, "volatile-ttl" },
        { "maxmemory_policy:volatile-lru\r\nmaxmemory:5\r\n", REDLOCK_EVICTS_VOLATILE, "volatile-lru" },
        { "maxmemory:100\r\nmaxmemory_policy:noeviction\r\n", REDLOCK_EVICTS_NONE, "noeviction" },
        { "maxmemory:0\r\nmaxmemory_policy:allkeys-random\r\n", REDLOCK_EVICTS_NONE, "allkeys-random" },
        { "maxmemory_policy:volatile-random\r\n", REDLOCK_EVICTS_VOLATILE, "volatile-random" },
        { "maxmemory:100\r\n", -1, "" },
        { "maxmemory:100\r\nmaxmemory_policy:lfu-everything\r\n", -1, "lfu-everything" },
        { "maxmemory:100\r\n#maxmemory_policy:allkeys-lru\r\nxmaxmemory_policy:allkeys-lru\r\n", -1, "" },
        { "maxmemory:100\r\nmaxmemory_policy_x:allkeys-lru\r\n", -1, "" },
        { "", -1, "" }
    };
    char name[32];
    size_t k;
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, name, sizeof name), REDLOCK_EVICTS_ALL);
    CHECK_STR(name, "allkeys-random");
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        int got = redlock_info_evicts(c[k].text, strlen(c[k].text), name, sizeof name);
        if (got != c[k].want || strcmp(name, c[k].name) != 0) printf("#   case %u: %d \"%s\"\n", (unsigned)k, got, name);
        CHECK_EQ(got, c[k].want);
        CHECK_STR(name, c[k].name);
    }
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, name, 5), REDLOCK_EVICTS_ALL);
    CHECK_STR(name, "allk");
    CHECK_EQ(redlock_info_evicts(redis7, sizeof redis7 - 1, NULL, 0), REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_info_evicts(NULL, 10, name, sizeof name), -1);
    CHECK_STR(name, "");
    /* the text ends inside the name: what is there */
    CHECK_EQ(redlock_info_evicts(redis7, strlen("# Memory\r\nused_memory:1000000\r\nmaxmemory:2097152\r\n"
                                                "maxmemory_human:2.00M\r\nmaxmemory_policy:volat"), name, sizeof name), -1);
}

/* Proves: what a transport says a node may evict is kept per node and
   reported once per change (EV_NODE_EVICTS: node, mode, no lock); bad
   arguments change nothing. */
static void test_evict_node_state(void) {
    redlock_client dead;
    setup_n(3, 0, 1000);
    CHECK_EQ(redlock_node_evicts(&C, 1), REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_ALL), REDLOCK_OK);
    CHECK_EQ(redlock_node_evicts(&C, 1), REDLOCK_EVICTS_ALL);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK(last_ev(REDLOCK_EV_NODE_EVICTS)->node == 1 && last_ev(REDLOCK_EV_NODE_EVICTS)->mode == REDLOCK_EVICTS_ALL &&
          last_ev(REDLOCK_EV_NODE_EVICTS)->lock == NULL && last_ev(REDLOCK_EV_NODE_EVICTS)->status == 0 &&
          last_ev(REDLOCK_EV_NODE_EVICTS)->op == 0 && last_ev(REDLOCK_EV_NODE_EVICTS)->attempt == 0);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_ALL), REDLOCK_OK); /* the next connection says it again */
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK_EQ(redlock_node_set_evicts(&C, 1, REDLOCK_EVICTS_NONE), REDLOCK_OK);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 2);
    CHECK_EQ(last_ev(REDLOCK_EV_NODE_EVICTS)->mode, REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_set_evicts(&C, 3, REDLOCK_EVICTS_ALL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, -1, REDLOCK_EVICTS_ALL), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, 0, (redlock_evicts)3), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_set_evicts(&C, 0, (redlock_evicts)-1), REDLOCK_ERR_INVALID);
    CHECK_EQ(redlock_node_evicts(&C, 0), REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_node_evicts(&C, 3), REDLOCK_EVICTS_NONE);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 2);
    memset(&dead, 0, sizeof dead);
    CHECK_EQ(redlock_node_set_evicts(&dead, 0, REDLOCK_EVICTS_ALL), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_set_evicts(NULL, 0, REDLOCK_EVICTS_ALL), REDLOCK_ERR_DETACHED);
    CHECK_EQ(redlock_node_evicts(NULL, 0), REDLOCK_EVICTS_NONE);
    CHECK_STR(redlock_event_name(REDLOCK_EV_NODE_EVICTS), "node-evicts");
    teardown();
}

/* Proves: a fenced lock does not count the grant of a node that may evict
   keys (its vote fails with EVICTING), nor its count: on one such node the
   acquire ends at once with EVICTING (no retry, no fence, the key taken
   back); on three with one such node, the fence comes from the other two
   (not the evicting node's higher count) and is written back to them only;
   with two such nodes of three it ends at once. Eviction of keys with a
   time to live (volatile-*) is refused the same. */
static void test_evict_fenced_refused(void) {
    setup_fenced(1);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK(fsent_is(0, FACQ_SHA, " 1000"));
    num_to(0, "EVALSHA", 31);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_res()->attempts, 1);
    CHECK_EQ(last_res()->fence, 0);
    CHECK_EQ(redlock_lock_fence(&L), 0);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    CHECK_EQ(redlock_lock_state(&L), REDLOCK_STATE_IDLE);
    expect_starts(0, "EVAL if redis.call('get',KEYS[1])==ARGV[1] then redis.call('del',KEYS[1])"); /* the undo */
    CHECK_EQ(T.qn, 2);
    teardown();

    setup_fenced(3);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    CHECK_EQ(T.qn, 3); /* asked all the same: the key is taken back from it by the release */
    num_to(0, "EVALSHA", 100);
    num_to(1, "EVALSHA", 5);
    num_to(2, "EVALSHA", 6);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.qn, 5);
    CHECK(fsent_is(3, FENCE_SHA, " 6"));
    CHECK(fsent_is(4, FENCE_SHA, " 6"));
    CHECK(T.q[3].node == 1 && T.q[4].node == 2);
    num_to(1, "EVALSHA", 1);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 6);
    CHECK_EQ(last_res()->votes, 2);
    CHECK_EQ(redlock_release(&L), REDLOCK_OK);
    CHECK_EQ(T.q[5].node, 0); /* the release goes to every node */
    teardown();

    setup_fenced(3);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 3);
    num_to(1, "EVALSHA", 4);
    num_to(2, "EVALSHA", 5);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_res()->attempts, 1);
    CHECK_EQ(count_ev(REDLOCK_EV_RETRY), 0);
    teardown();
}

/* Proves: other locks count such a node by default (it is still reported:
   EV_NODE_EVICTS), refuse it with refuse_evicting > 0, and a fenced lock
   counts it with refuse_evicting < 0. */
static void test_evict_option(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    setup_n(1, 0, 1000);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(count_ev(REDLOCK_EV_NODE_EVICTS), 1);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    teardown();

    base_config(&cfg, 1);
    base_opts(&o, 1000, 0);
    o.refuse_evicting = 1;
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    ok_to(0, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    teardown();

    o.refuse_evicting = 7; /* any positive value */
    o.reentrant = 1;
    o.owner = "svc";
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_VOLATILE);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_ERR_EVICTING);
    teardown();

    base_opts(&o, 1000, 0);
    o.fence = 1;
    o.refuse_evicting = -1;
    setup_with(&cfg, &o);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 1);
    teardown();
}

/* Proves: what the node says counts for the answers that come after it:
   a node learned to evict while its acquire, write-back or renewal was
   out fails that vote (a late win of a fenced lock gets no write-back);
   one learned to evict nothing any more counts again. */
static void test_evict_learned_midway(void) {
    redlock_config cfg;
    redlock_lock_opts o;
    base_config(&cfg, 3);
    base_opts(&o, 1000, 0);
    o.refuse_evicting = 1;
    setup_with(&cfg, &o);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL); /* e.g. the reply to INFO came first */
    ok_to(0, "SET");
    ok_to(1, "SET");
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.res.n, 0);
    ok_to(2, "SET");
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    CHECK_EQ(T.res.n, 1);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_EVICTING);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_ERR_EVICTING); /* one of three counted */
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_NONE);
    CHECK_EQ(redlock_extend(&L, 0), REDLOCK_OK);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_EXTEND), REDLOCK_OK);
    teardown();

    /* fenced: the write-back of a node learned to evict, and a late win */
    setup_fenced(3);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 5);
    num_to(1, "EVALSHA", 6);
    CHECK(fsent_is(3, FENCE_SHA, " 6"));
    redlock_node_set_evicts(&C, 0, REDLOCK_EVICTS_ALL);
    num_to(0, "EVALSHA", 1);
    CHECK_EQ(vote_status(0), REDLOCK_ERR_EVICTING);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(T.res.n, 0); /* one write-back counted: node 2's acquire may still win */
    num_to(2, "EVALSHA", 7);
    CHECK(fsent_is(5, FENCE_SHA, " 6"));
    num_to(2, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    CHECK_EQ(redlock_lock_fence(&L), 6);
    teardown();

    setup_fenced(3);
    CHECK_EQ(redlock_acquire(&L), REDLOCK_OK);
    num_to(0, "EVALSHA", 5);
    num_to(1, "EVALSHA", 6);
    num_to(0, "EVALSHA", 1);
    num_to(1, "EVALSHA", 1);
    CHECK_EQ(last_status(REDLOCK_OP_ACQUIRE), REDLOCK_OK);
    redlock_node_set_evicts(&C, 2, REDLOCK_EVICTS_ALL);
    num_to(2, "EVALSHA", 9); /* a late win after the lock was reported held */
    CHECK_EQ(T.qn, 5);
    CHECK_EQ(vote_status(2), REDLOCK_ERR_EVICTING);
    teardown();
}

static void run_evict(int argc, char **argv) {
    RUN_T(test_evict_info_parse);
    RUN_T(test_evict_node_state);
    RUN_T(test_evict_fenced_refused);
    RUN_T(test_evict_option);
    RUN_T(test_evict_learned_midway);
}
