/* unit.c - the core driven by a scripted transport: every state transition,
   replies delivered later and inside send, AUTO switching, bad input.

   One translation unit on purpose: the tests read a few of the core's
   internals (static functions and fields), so the parts below are included
   here rather than compiled apart. tests/core/unit/harness.h is the scripted
   transport, the helpers that address commands by node and verb, and the one
   place the internals are named; each unit/<behaviour>.c holds the tests of
   one operation or lock kind and ends with its run_<behaviour>() list.

   build/unit [NAME...] runs the tests whose names contain one of the NAMEs
   (all without arguments), printing "ok name" / "not ok name". */
#include "unit/harness.h"

#include "unit/config.c"
#include "unit/handles.c"
#include "unit/acquire.c"
#include "unit/release.c"
#include "unit/extend.c"
#include "unit/events.c"
#include "unit/replies.c"
#include "unit/legacy.c"
#include "unit/noscript.c"
#include "unit/adopt.c"
#include "unit/table.c"
#include "unit/reentrant.c"
#include "unit/fenced.c"
#include "unit/rw.c"
#include "unit/evict.c"
#include "unit/restart.c"
#include "unit/replicas.c"
#include "unit/notify.c"
#include "unit/stats.c"

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    run_config(argc, argv);
    run_handles(argc, argv);
    run_acquire(argc, argv);
    run_release(argc, argv);
    run_extend(argc, argv);
    run_events(argc, argv);
    run_replies(argc, argv);
    run_legacy(argc, argv);
    run_noscript(argc, argv);
    run_adopt(argc, argv);
    run_table(argc, argv);
    run_reentrant(argc, argv);
    run_fenced(argc, argv);
    run_rw(argc, argv);
    run_evict(argc, argv);
    run_restart(argc, argv);
    run_replicas(argc, argv);
    run_notify(argc, argv);
    run_stats(argc, argv);
    return CHECK_EXIT();
}
