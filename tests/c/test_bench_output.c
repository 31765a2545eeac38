/* What build/bench/local_gemm publishes (bench/output.c), from records made up here: the JSON record's figures, its
 * problem's TP and check; the closing table's ratios (tpgemm / cuBLAS, joules below 1 better), check cells and the
 * geomeans of what counts (a passed check, a cuBLAS that matched the reference), per dtype. No GPU. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/bench.h"
#include "tpg_test.h"

static const bench_problem P_RS = {"p_rs", "RS", 8192, 4096, 4096, 8192, 4096, 2048};
static const bench_problem P_GEMM = {"p_gemm", "GEMM", 256, 4096, 4096, 256, 4096, 4096};
static const bench_problem P_FAIL = {"p_fail", "RS", 8192, 4096, 4096, 8192, 4096, 2048};
static const bench_problem P_NOCHK = {"p_nochk", "RS", 8192, 4096, 4096, 8192, 4096, 2048};
static const bench_problem P_NOREF = {"p_noref", "RS", 8192, 4096, 4096, 8192, 4096, 2048};
static const bench_problem P_FP8 = {"p_fp8", "RS", 8192, 4096, 4096, 8192, 4096, 2048};

static void var(bench_variant *v, const char *cfg, double burst, double sust, double j, int check) {
    memset(v, 0, sizeof *v);
    snprintf(v->config, sizeof v->config, "%s", cfg);
    snprintf(v->kernel, sizeof v->kernel, "k_%s", cfg);
    v->burst_tflops = burst, v->sustained_tflops = sust, v->joules = j, v->check = check;
    v->max_error = check >= 0 ? 1e-3 : NAN;
    for (int r = 0; r < BENCH_ROUNDS; r++)
        v->round_tflops[r] = v->round_joules[r] = v->round_seconds[r] = v->round_power_w[r] = v->round_watts[r] = NAN;
}

/* record: cuBLAS (burst cb, sustained cbs, joules cbj) vs the published tpgemm variant */
static void rec(bench_record *r, const bench_problem *p, tpg_dtype dt, double tp, double cb, double tps, double cbs,
                double tpj, double cbj, int check, int ref_check) {
    memset(r, 0, sizeof *r);
    r->p = p, r->dtype = dt, r->eps = 0.02, r->cublas_ref_error = NAN, r->cublas_ref_check = ref_check;
    var(&r->var[0], "cublasLt", cb, cbs, cbj, -1);
    var(&r->var[1], "cfg_tp1", tp, tps, tpj, check);
    snprintf(r->pick_kernel, sizeof r->pick_kernel, "k_cfg_tp1");
    r->nvar = 2, r->best = 1;
}

static bench_record R[6];
static bench_args A;
static bench_meta M;

static void make(void) {
    rec(&R[0], &P_RS, TPG_DTYPE_BF16, 400, 500, 300, 600, 0.011, 0.010, 1, 1);     /* 0.8, 0.5, 1.1 */
    rec(&R[1], &P_GEMM, TPG_DTYPE_BF16, 625, 500, 800, 400, 0.009, 0.010, 1, 1);   /* 1.25, 2.0, 0.9 */
    rec(&R[2], &P_FAIL, TPG_DTYPE_BF16, 1000, 500, 1000, 500, 0.01, 0.01, 0, 1);   /* failed: in no geomean */
    rec(&R[3], &P_NOCHK, TPG_DTYPE_BF16, 2000, 500, 2000, 500, 0.01, 0.01, -1, 1); /* never compared: none */
    rec(&R[4], &P_NOREF, TPG_DTYPE_BF16, 1500, 500, 1500, 500, 0.01, 0.01, 1, 0);  /* cuBLAS failed the ref */
    rec(&R[5], &P_FP8, TPG_DTYPE_E4M3, 450, 500, 450, 500, 0.02, 0.02, 1, 1);      /* e4m3: 0.9 */
    R[0].var[1].round_clock_mhz[0] = 1800, R[0].var[1].round_clock_mhz[BENCH_ROUNDS - 1] = 1600;
    bench_variant *lt = &R[0].var[R[0].nvar++];
    var(lt, "cublasLt_best_of_3", 510, 610, 0.010, 1);
    lt->lt_best_of = 3, lt->lt_trial_n = 3;
    lt->lt_trial_us[0] = 10, lt->lt_trial_us[1] = 11, lt->lt_trial_us[2] = 12;
    memset(&A, 0, sizeof A);
    memset(&M, 0, sizeof M);
    M.args = &A;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    static char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* the text of record `name` in the JSON (up to the next record) */
static const char *record_of(const char *json, const char *name, char *out, size_t cap) {
    char key[64];
    snprintf(key, sizeof key, "{\"name\": \"%s\"", name);
    const char *a = strstr(json, key);
    if (!a) return out[0] = '\0', out;
    const char *b = strstr(a + 1, "{\"name\": \"");
    size_t n = b ? (size_t)(b - a) : strlen(a);
    if (n >= cap) n = cap - 1;
    memcpy(out, a, n), out[n] = '\0';
    return out;
}

TPG_TEST(the_json_record_publishes_the_right_fields) {
    make();
    char path[] = "/tmp/bench_output_XXXXXX", msg[256], one[16384];
    int fd = mkstemp(path);
    TPG_ASSERT(fd >= 0);
    TPG_ASSERT_EQ_INT(bench_write_json(path, R, 6, &M, msg, sizeof msg), 0);
    const char *j = slurp(path);
    remove(path);
    record_of(j, "p_rs", one, sizeof one);
    TPG_EXPECT_STR_CONTAINS(one, "\"tpgemm_tflops\": 400, \"cublas_tflops\": 500, \"tpgemm_sustained_tflops\": 300, "
                                 "\"cublas_sustained_tflops\": 600, \"tpgemm_joules\": 0.011, \"cublas_joules\": 0.01");
    TPG_EXPECT_STR_CONTAINS(one, "\"global\": {\"M\": 8192, \"N\": 4096, \"K\": 4096, \"tp\": 2}");
    TPG_EXPECT_STR_CONTAINS(one, "\"published\": \"pick\", \"check\": \"pass\"");
    TPG_EXPECT_STR_CONTAINS(one, "\"tpgemm_sustained_end_mhz\": 1600");
    TPG_EXPECT_STR_CONTAINS(one, "\"lt_trial_us\": [10, 11, 12]");
    record_of(j, "p_gemm", one, sizeof one);
    TPG_EXPECT_STR_CONTAINS(one, "\"tp\": 1}");
    record_of(j, "p_fail", one, sizeof one);
    TPG_EXPECT_STR_CONTAINS(one, "\"published\": \"pick\", \"check\": \"fail\"");
    record_of(j, "p_nochk", one, sizeof one);
    TPG_EXPECT_STR_CONTAINS(one, "\"published\": \"pick\", \"check\": null");
    record_of(j, "p_noref", one, sizeof one);
    TPG_EXPECT_STR_CONTAINS(one, "\"cublas_ref_check\": \"fail\"");
}

/* the line of the table that starts with `first` and names dtype */
static const char *line_of(const char *t, const char *first, const char *dtype, char *out, size_t cap) {
    char key[64];
    snprintf(key, sizeof key, "%-10s %-5s ", first, dtype);
    const char *a = strstr(t, key);
    out[0] = '\0';
    if (!a) return out;
    size_t n = strcspn(a, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(out, a, n), out[n] = '\0';
    return out;
}

TPG_TEST(the_table_gives_ratios_checks_and_geomeans_of_what_counts) {
    make();
    char *t = NULL, l[512];
    size_t len = 0;
    FILE *f = open_memstream(&t, &len);
    bench_print_table(f, R, 6);
    fclose(f);
    line_of(t, "p_rs", "bf16", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "   400.0    500.0    0.800    0.500    1.100  pass");
    line_of(t, "p_fail", "bf16", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "FAIL");
    line_of(t, "p_nochk", "bf16", l, sizeof l);
    TPG_EXPECT(l[0] && !strstr(l, "pass") && !strstr(l, "FAIL"));
    line_of(t, "p_noref", "bf16", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "cuBLAS vs the reference: FAIL");
    /* bf16: p_rs and p_gemm only (burst 0.8 x 1.25, sustained 0.5 x 2, joules 1.1 x 0.9) */
    line_of(t, "geomean", "bf16", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "   1.000    1.000    0.995");
    line_of(t, "p_fp8", "e4m3", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "0.900");
    line_of(t, "geomean", "e4m3", l, sizeof l);
    TPG_EXPECT_STR_CONTAINS(l, "   0.900    0.900    1.000");
    free(t);
}

TPG_TEST_MAIN(TPG_CASE(the_json_record_publishes_the_right_fields),
              TPG_CASE(the_table_gives_ratios_checks_and_geomeans_of_what_counts))
