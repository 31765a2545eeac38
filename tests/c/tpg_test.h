/* tpg_test.h: a tiny single-header test harness for the C unit tests (no GPU, no dependencies).
 *
 * Usage:
 *     #include "tpg_test.h"
 *     TPG_TEST(adds) { TPG_EXPECT_EQ_INT(1 + 1, 2); }
 *     TPG_TEST(names) { TPG_EXPECT_STR_CONTAINS(msg, "tp = 3"); }
 *     TPG_TEST_MAIN(TPG_CASE(adds), TPG_CASE(names))
 *
 * Each failed expectation prints "file:line: what" to stderr and marks the current test failed; the
 * test keeps running (use TPG_ASSERT / TPG_ASSERT_* to stop the current test on failure). The runner
 * prints one line per failed test, then "N passed, M failed" on its own line, and returns 1 if any
 * test failed. `./test_x NAME` runs only the test called NAME.
 */
#ifndef TPG_TEST_H
#define TPG_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*tpg_test_fn)(void);
typedef struct tpg_test_case {
    const char *name;
    tpg_test_fn fn;
} tpg_test_case;

/* Number of failed expectations in the current test (reset by the runner). */
static int tpg_test_failures_;

#define TPG_TEST(name) static void tpg_test_##name##_(void)

#define TPG_TEST_FAIL_(...)                                                                          \
    do {                                                                                             \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
        fprintf(stderr, __VA_ARGS__);                                                                \
        fputc('\n', stderr);                                                                         \
        tpg_test_failures_++;                                                                        \
    } while (0)

#define TPG_EXPECT(cond)                                                                             \
    do {                                                                                             \
        if (!(cond)) TPG_TEST_FAIL_("expected %s", #cond);                                           \
    } while (0)

#define TPG_EXPECT_EQ_INT(actual, expected)                                                          \
    do {                                                                                             \
        long long tpg_a_ = (long long)(actual), tpg_e_ = (long long)(expected);                      \
        if (tpg_a_ != tpg_e_)                                                                        \
            TPG_TEST_FAIL_("%s == %lld, expected %s == %lld", #actual, tpg_a_, #expected, tpg_e_);   \
    } while (0)

#define TPG_EXPECT_NE_INT(actual, unexpected)                                                        \
    do {                                                                                             \
        long long tpg_a_ = (long long)(actual), tpg_e_ = (long long)(unexpected);                    \
        if (tpg_a_ == tpg_e_) TPG_TEST_FAIL_("%s == %lld, expected anything else", #actual, tpg_a_); \
    } while (0)

#define TPG_EXPECT_EQ_STR(actual, expected)                                                          \
    do {                                                                                             \
        const char *tpg_a_ = (actual), *tpg_e_ = (expected);                                         \
        if (!tpg_a_ || !tpg_e_ || strcmp(tpg_a_, tpg_e_) != 0)                                       \
            TPG_TEST_FAIL_("%s == \"%s\", expected \"%s\"", #actual, tpg_a_ ? tpg_a_ : "(null)",      \
                           tpg_e_ ? tpg_e_ : "(null)");                                              \
    } while (0)

#define TPG_EXPECT_STR_CONTAINS(haystack, needle)                                                    \
    do {                                                                                             \
        const char *tpg_h_ = (haystack), *tpg_n_ = (needle);                                         \
        if (!tpg_h_ || !tpg_n_ || !strstr(tpg_h_, tpg_n_))                                           \
            TPG_TEST_FAIL_("%s == \"%s\" does not contain \"%s\"", #haystack,                        \
                           tpg_h_ ? tpg_h_ : "(null)", tpg_n_ ? tpg_n_ : "(null)");                  \
    } while (0)

/* Like the EXPECT forms but end the current test on failure. */
#define TPG_ASSERT(cond)                                                                             \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            TPG_TEST_FAIL_("assertion failed: %s", #cond);                                           \
            return;                                                                                  \
        }                                                                                            \
    } while (0)
#define TPG_ASSERT_EQ_INT(actual, expected)                                                          \
    do {                                                                                             \
        int tpg_before_ = tpg_test_failures_;                                                        \
        TPG_EXPECT_EQ_INT(actual, expected);                                                         \
        if (tpg_test_failures_ != tpg_before_) return;                                               \
    } while (0)

static int tpg_test_run_(const tpg_test_case *cases, int n, int argc, char **argv) {
    int passed = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) continue;
        tpg_test_failures_ = 0;
        cases[i].fn();
        if (tpg_test_failures_ == 0) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAILED %s (%d expectation%s)\n", cases[i].name, tpg_test_failures_,
                    tpg_test_failures_ == 1 ? "" : "s");
        }
    }
    fflush(stderr);
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed ? 1 : (passed ? 0 : 1); /* a filter that matched nothing is a failure too */
}

/* One entry of the test list given to TPG_TEST_MAIN. */
#define TPG_CASE(name) {#name, tpg_test_##name##_}

/* TPG_TEST_MAIN(TPG_CASE(t1), TPG_CASE(t2), ...) defines main() running the listed tests in order. */
#define TPG_TEST_MAIN(...)                                                                           \
    int main(int argc, char **argv) {                                                                \
        static const tpg_test_case tpg_cases_[] = {__VA_ARGS__};                                     \
        return tpg_test_run_(tpg_cases_, (int)(sizeof(tpg_cases_) / sizeof(tpg_cases_[0])), argc,   \
                             argv);                                                                  \
    }

#endif /* TPG_TEST_H */
