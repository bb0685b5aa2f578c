/* check.h - the few lines of test framework the tests use.
   Each TEST runs under RUN(); a test passes when none of its CHECKs failed.
   Output is TAP-like ("ok name" / "not ok name"), counted by
   scripts/run-tests.sh. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <string.h>

static int check__fails;      /* failed CHECKs in the running test */
static int check__failed_tests;

#define CHECK(cond) do { if (!(cond)) { \
    printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    check__fails++; } } while (0)

#define CHECK_EQ(a, b) do { long long check__a = (long long)(a), check__b = (long long)(b); \
    if (check__a != check__b) { \
        printf("#   %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
               #a, #b, check__a, check__b); \
        check__fails++; } } while (0)

#define CHECK_STR(a, b) do { const char *check__a = (a), *check__b = (b); \
    if (!check__a || !check__b || strcmp(check__a, check__b) != 0) { \
        printf("#   %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
               #a, #b, check__a ? check__a : "(null)", check__b ? check__b : "(null)"); \
        check__fails++; } } while (0)

#define RUN(fn) do { check__fails = 0; fn(); \
    if (check__fails) { check__failed_tests++; printf("not ok %s\n", #fn); } \
    else { printf("ok %s\n", #fn); } \
    fflush(stdout); } while (0)

#define CHECK_EXIT() (check__failed_tests ? 1 : 0)
#endif
