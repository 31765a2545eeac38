/* The NCCL transport's loader and calls (runtime/src/nccl.c) against a stand-in library (tests/c/stubs/nccl_stub.c,
 * built next to this binary): binding and the version floor, the id and the communicator's init (from NCCL 2.17 with
 * a config capping NCCL's CTAs, before 2.17 without), a group's messages in order with skipped peers left out, a
 * failed call inside a group (the group still closed, the error naming the call and NCCL's message), the abort
 * returning at once while NCCL's reclaim blocks (and every later exchange refused), release destroying the
 * communicator (on a thread after a capture), and NCCL's config files read as NCCL reads them. No GPU, no NCCL. */
#define _GNU_SOURCE /* dlopen flags, readlink */
#include <dlfcn.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl.h"
#include "tpg_test.h"

/* build/tests/<name>: the stubs lie next to this binary. */
static const char *stub_path(const char *name) {
    static char path[4096];
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(path, sizeof path, "%s/%s", dirname(self), name);
    return path;
}

/* The stub's call log (it is loaded already, by the runtime). */
static const char *stub_log(const char *name) {
    void *lib = dlopen(stub_path(name), RTLD_NOW | RTLD_NOLOAD);
    const char *(*fn)(void) = lib ? (const char *(*)(void))dlsym(lib, "stub_log") : NULL;
    return fn ? fn() : "";
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static tpg_nccl *load(const char *name, tpg_status *st) {
    setenv("TPG_NCCL_LIBRARY", name[0] == '/' ? name : stub_path(name), 1);
    tpg_nccl *n = NULL;
    *st = tpg_nccl_load(NULL, &n);
    return n;
}

/* A stub that must load. NCCL's user config file is read by the settings check (nccl_env.c): the tests point it at
 * an empty one, so that a ~/.nccl.conf of the machine running them counts for nothing (/etc/nccl.conf still does). */
static tpg_nccl *load_ok(const char *name) {
    setenv("NCCL_CONF_FILE", "/dev/null", 1);
    tpg_status st;
    tpg_nccl *n = load(name, &st);
    TPG_EXPECT(st == TPG_OK && n != NULL);
    return n;
}

TPG_TEST(calls_in_order_and_abort_returns_at_once) {
    tpg_status st;
    tpg_nccl *n = load("libnccl_stub.so", &st);
    TPG_EXPECT(st == TPG_OK && n != NULL);
    if (!n) return;
    char version[32];
    tpg_nccl_version(n, version, sizeof version);
    TPG_EXPECT_STR_CONTAINS(version, "NCCL 2.28.9");
    unsigned char id[TPG_NCCL_ID_BYTES] = {0};
    TPG_EXPECT(tpg_nccl_unique_id(NULL, n, id) == TPG_OK && id[0] == 0x5a && id[127] == 0x5a);
    TPG_EXPECT(tpg_nccl_comm_init(NULL, n, 4, 2, id) == TPG_OK);
    /* from NCCL 2.17 on through a config that caps NCCL's CTAs at the SMs the GEMM leaves free */
    char want[160];
    snprintf(want, sizeof want, "init_config n=4 rank=2 id0=90 size=40 magic=cafebeef version=21700 max_ctas=%d cga=0 "
             "min_ctas_undef=1 rest_undef=1\n", TPG_NCCL_FREE_SMS); /* no clusters (nccl.c says why) */
    TPG_EXPECT_STR_CONTAINS(stub_log("libnccl_stub.so"), want);

    char buf[64];
    const tpg_nccl_msg m[3] = {{buf, 10, 3, 1}, {buf, 20, -1, 0}, {buf + 8, 30, 1, 0}};
    TPG_EXPECT(tpg_nccl_exchange(NULL, n, m, 3, NULL) == TPG_OK);
    TPG_EXPECT_STR_CONTAINS(stub_log("libnccl_stub.so"),
                            "group{\nsend peer=3 bytes=10 type=1\nrecv peer=1 bytes=30 type=1\n}group\n");

    const tpg_nccl_msg bad = {buf, 1, 99, 1}; /* the stub fails a send to rank 99 */
    TPG_EXPECT(tpg_nccl_exchange(NULL, n, &bad, 1, NULL) == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "ncclSend");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "invalid argument (stub)");
    const char *log = stub_log("libnccl_stub.so");
    TPG_EXPECT(strlen(log) >= 8 && strcmp(log + strlen(log) - 7, "}group\n") == 0); /* closed after the failure */

    const double t0 = now_s();
    TPG_EXPECT(tpg_nccl_abort(NULL, n) == TPG_OK);
    TPG_EXPECT(now_s() - t0 < 0.5); /* the stub's abort takes 1.5 s, on the runtime's thread */
    TPG_EXPECT(tpg_nccl_aborted(n));
    TPG_EXPECT(tpg_nccl_exchange(NULL, n, m, 1, NULL) == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "aborted");
    for (int i = 0; i < 40 && !strstr(stub_log("libnccl_stub.so"), "abort ok=1"); i++) usleep(100000);
    TPG_EXPECT_STR_CONTAINS(stub_log("libnccl_stub.so"), "abort ok=1\n"); /* the communicator, on that thread */
    tpg_nccl_release(n);
    TPG_EXPECT(strstr(stub_log("libnccl_stub.so"), "destroy") == NULL); /* aborted: nothing left to destroy */
}

TPG_TEST(release_destroys_the_communicator) {
    tpg_nccl *n = load_ok("libnccl_stub.so");
    if (!n) return;
    unsigned char id[TPG_NCCL_ID_BYTES] = {0};
    TPG_EXPECT(tpg_nccl_comm_init(NULL, n, 2, 0, id) == TPG_OK);
    tpg_nccl_release(n);
    TPG_EXPECT_STR_CONTAINS(stub_log("libnccl_stub.so"), "destroy ok=1\n");
}

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

/* After a call went into a caller's graph, that graph may outlive the context and NCCL's destroy waits for it (the
 * stub's destroy blocks 1.5 s here): release returns at once and the destroy still happens, on a thread. */
TPG_TEST(after_a_capture_release_does_not_wait_for_the_callers_graphs) {
    tpg_nccl *n = load_ok("libnccl_stub.so");
    if (!n) return;
    unsigned char id[TPG_NCCL_ID_BYTES] = {0};
    TPG_EXPECT(tpg_nccl_comm_init(NULL, n, 2, 0, id) == TPG_OK);
    void *lib = dlopen(stub_path("libnccl_stub.so"), RTLD_NOW | RTLD_NOLOAD);
    void (*hold)(int) = lib ? (void (*)(int))dlsym(lib, "stub_hold_destroy") : NULL;
    TPG_EXPECT(hold != NULL);
    if (!hold) return;
    hold(1500);
    const int before = count_of(stub_log("libnccl_stub.so"), "destroy ok=1\n");
    tpg_nccl_note_capture(n);
    const double t0 = now_s();
    tpg_nccl_release(n);
    TPG_EXPECT(now_s() - t0 < 0.5);
    for (int i = 0; i < 40 && count_of(stub_log("libnccl_stub.so"), "destroy ok=1\n") == before; i++) usleep(100000);
    TPG_EXPECT(count_of(stub_log("libnccl_stub.so"), "destroy ok=1\n") == before + 1); /* on that thread */
    hold(0);
}

/* NCCL reads its config files (NCCL_CONF_FILE, else ~/.nccl.conf; then /etc/nccl.conf) into the environment at its
 * first init, never over a variable already set: a rank whose file asks for what the transport refuses is refused
 * before the ranks join, the file named; the environment still wins; '#' lines are skipped, the first line counts. */
TPG_TEST(nccl_config_files_count_as_nccl_reads_them) {
    tpg_nccl *n = load_ok("libnccl_stub.so");
    if (!n) return;
    char path[] = "/tmp/tpg_nccl_conf_XXXXXX";
    const int fd = mkstemp(path);
    TPG_EXPECT(fd >= 0);
    if (fd < 0) return;
    const char text[] = "# NCCL_MAX_CTAS=4\nNCCL_TPG_TEST_ONLY=WARN\nNCCL_MAX_CTAS=16\nNCCL_MAX_CTAS=2\n"
                        "NCCL_TPG_TEST_NO_VALUE\n"; /* names no environment sets, but the one the test sets */
    TPG_EXPECT(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    setenv("NCCL_CONF_FILE", path, 1);
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "NCCL_MAX_CTAS=16 in NCCL's config file /tmp/tpg_nccl_conf_");
    setenv("NCCL_MAX_CTAS", "4", 1); /* the environment's value: NCCL's file does not overwrite it */
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    setenv("NCCL_MAX_CTAS", "", 1); /* set but empty: still not overwritten, and NCCL's default then */
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    unsetenv("NCCL_MAX_CTAS");
    char value[64], where[1100];
    TPG_EXPECT(tpg_nccl_setting("NCCL_TPG_TEST_ONLY", value, sizeof value, where, sizeof where) != NULL &&
               strcmp(value, "WARN") == 0);
    TPG_EXPECT(tpg_nccl_setting("NCCL_TPG_TEST_NO_VALUE", value, sizeof value, where, sizeof where) == NULL);
    setenv("NCCL_CONF_FILE", "/dev/null", 1);
    unlink(path);
    tpg_nccl_release(n);
}

TPG_TEST(a_refused_config_names_the_cap) {
    tpg_nccl *n = load_ok("libnccl_stub.so");
    if (!n) return;
    unsigned char id[TPG_NCCL_ID_BYTES] = {0};
    TPG_EXPECT(tpg_nccl_comm_init(NULL, n, 3, 0, id) == TPG_ERR_NCCL); /* the stub refuses n = 3 */
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "ncclCommInitRankConfig");
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "NCCL_MIN_CTAS");
    tpg_nccl_release(n);
}

TPG_TEST(before_2_17_the_communicator_has_no_config) {
    tpg_nccl *n = load_ok("libnccl_stub_216.so"); /* has ncclCommInitRankConfig, of an older layout */
    if (!n) return;
    unsigned char id[TPG_NCCL_ID_BYTES] = {0};
    TPG_EXPECT(tpg_nccl_comm_init(NULL, n, 2, 1, id) == TPG_OK);
    TPG_EXPECT_STR_CONTAINS(stub_log("libnccl_stub_216.so"), "init n=2 rank=1 id0=0\n");
    TPG_EXPECT(strstr(stub_log("libnccl_stub_216.so"), "init_config") == NULL);
    /* so the environment must cap its channels (and, from 2.16, its clusters) */
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "NCCL_MAX_NCHANNELS=8 and NCCL_CGA_CLUSTER_SIZE=0");
    setenv("NCCL_MAX_NCHANNELS", "8", 1);
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_ERR_NCCL); /* 2.16.3: clusters still unset */
    setenv("NCCL_CGA_CLUSTER_SIZE", "0", 1);
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    setenv("NCCL_MAX_NCHANNELS", "16", 1);
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_ERR_NCCL);
    unsetenv("NCCL_MAX_NCHANNELS");
    setenv("NCCL_MAX_NRINGS", "8", 1); /* the older name of the cap */
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    unsetenv("NCCL_MAX_NRINGS");
    unsetenv("NCCL_CGA_CLUSTER_SIZE");
    tpg_nccl_release(n);
}

TPG_TEST(an_old_foreign_or_missing_library_is_refused) {
    tpg_status st;
    TPG_EXPECT(load("libnccl_stub_old.so", &st) == NULL && st == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "needs 2.9.6 or newer"); /* the stub is 2.9.5 */
    TPG_EXPECT(load("libnccl_stub_nosend.so", &st) == NULL && st == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "has no symbol ncclSend");
    TPG_EXPECT(load("/nonexistent/libnccl.so.2", &st) == NULL && st == TPG_ERR_NCCL);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "TPG_NCCL_LIBRARY");
}

/* What the environment may not set for the transport, each refused with its name and value before the ranks join;
 * the same variables at allowed values pass. */
TPG_TEST(the_environment_may_not_take_the_gemms_sms_or_make_nccl_non_blocking) {
    tpg_nccl *n = load_ok("libnccl_stub.so");
    if (!n) return;
    /* values read as NCCL reads them (strtoll, base 0): "0x10" is 16, "false" is 0, "0x1" is 1 */
    static const char *const refused[][3] = {{"NCCL_MAX_CTAS", "16", "8"},        {"NCCL_MAX_CTAS", "0x10", ""},
                                             {"NCCL_MIN_P2P_NCHANNELS", "9", "4"}, {"NCCL_COMM_BLOCKING", "0", "1"},
                                             {"NCCL_COMM_BLOCKING", "false", "0x1"}, {"NCCL_MIN_CTAS", "9", "2"},
                                             {"NCCL_MIN_NCHANNELS", "16", "8"},    {"NCCL_MIN_NRINGS", "12", "2"},
                                             {"NCCL_CGA_CLUSTER_SIZE", "4", "0"},  {"NCCL_CGA_CLUSTER_SIZE", "2", "1"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        setenv(refused[i][0], refused[i][1], 1);
        TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_ERR_NCCL);
        TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), refused[i][0]);
        setenv(refused[i][0], refused[i][2], 1);
        TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
        unsetenv(refused[i][0]);
    }
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    /* NCCL reads NCCL_MIN_NCHANNELS before its older alias NCCL_MIN_NRINGS: the alias then counts for nothing */
    setenv("NCCL_MIN_NCHANNELS", "4", 1);
    setenv("NCCL_MIN_NRINGS", "16", 1);
    TPG_EXPECT(tpg_nccl_env_check(NULL, n) == TPG_OK);
    unsetenv("NCCL_MIN_NCHANNELS");
    unsetenv("NCCL_MIN_NRINGS");
    tpg_nccl_release(n);
}

TPG_TEST_MAIN(TPG_CASE(calls_in_order_and_abort_returns_at_once), TPG_CASE(release_destroys_the_communicator),
              TPG_CASE(after_a_capture_release_does_not_wait_for_the_callers_graphs),
              TPG_CASE(nccl_config_files_count_as_nccl_reads_them),
              TPG_CASE(a_refused_config_names_the_cap), TPG_CASE(before_2_17_the_communicator_has_no_config),
              TPG_CASE(an_old_foreign_or_missing_library_is_refused),
              TPG_CASE(the_environment_may_not_take_the_gemms_sms_or_make_nccl_non_blocking))
