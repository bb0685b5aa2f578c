/* bench/bench_util.h - the clocks the benchmarks read: wall time on
   CLOCK_MONOTONIC and this process's CPU time (user + system). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <sys/resource.h>
#include <time.h>

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double bench_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

#endif
