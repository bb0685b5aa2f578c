/* stats_off.c - the statistics tests (unit/stats.c) built with
   REDLOCK_NO_STATS: nothing is counted, every count reads 0, and the
   client's layout is the same as with them. */
#define REDLOCK_NO_STATS
#include "unit/harness.h"
#include "unit/stats.c"

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    run_stats(argc, argv);
    return CHECK_EXIT();
}
