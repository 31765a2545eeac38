/* Problem table, command line and time estimate of build/bench/local_gemm. No CUDA here, so --dry-run and
 * every usage error work (and are tested) on machines without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The eight shapes of measured-anchors.md (global M, N, K at TP = 2), each reduced to the GEMM one GPU runs:
 * AG (column-parallel): the full gathered A times this GPU's N/2 columns; RS (row-parallel): this GPU's K/2
 * slice, a full M x N partial. Then the two square ceilings of the same file. */
#define AG(nm, M, N, K) {nm, "AG", M, N, K, M, (N) / 2, K}
#define RS(nm, M, N, K) {nm, "RS", M, N, K, M, N, (K) / 2}
#define SQ(nm, S) {nm, "GEMM", S, S, S, S, S, S}
static const bench_problem k_problems[] = {
    AG("405B-fc1", 16384, 106496, 16384), AG("70B-fc1", 16384, 57344, 8192), AG("70B-qkv", 16384, 10240, 8192),
    AG("8B-qkv", 8192, 6144, 4096),       RS("405B-fc2", 16384, 16384, 53248), RS("70B-fc2", 16384, 8192, 28672),
    RS("70B-o", 16384, 8192, 8192),       RS("8B-o", 8192, 4096, 4096),       SQ("gemm-8192", 8192),
    SQ("gemm-4096", 4096),
    /* By name only (not in the default run): the 70B layers with few tokens (M = 2048 and 512), where a layer's
     * local GEMM has a few waves of tiles or less than one; at M = 128 one row of tiles. */
    AG("70B-fc1-m2048", 2048, 57344, 8192), AG("70B-qkv-m2048", 2048, 10240, 8192),
    RS("70B-fc2-m2048", 2048, 8192, 28672), RS("70B-o-m2048", 2048, 8192, 8192),
    AG("70B-fc1-m512", 512, 57344, 8192),   AG("70B-qkv-m512", 512, 10240, 8192),
    RS("70B-fc2-m512", 512, 8192, 28672),   RS("70B-o-m512", 512, 8192, 8192),
    AG("70B-fc1-m128", 128, 57344, 8192),   AG("70B-qkv-m128", 128, 10240, 8192),
    RS("70B-fc2-m128", 128, 8192, 28672),   RS("70B-o-m128", 128, 8192, 8192),
    /* Decode (--decode): fewer rows than a tile, so B streams through tiles that fill under one wave */
    AG("70B-fc1-m64", 64, 57344, 8192),     AG("70B-qkv-m64", 64, 10240, 8192),
    RS("70B-fc2-m64", 64, 8192, 28672),     RS("70B-o-m64", 64, 8192, 8192),
    AG("70B-fc1-m16", 16, 57344, 8192),     AG("70B-qkv-m16", 16, 10240, 8192),
    RS("70B-fc2-m16", 16, 8192, 28672),     RS("70B-o-m16", 16, 8192, 8192),
    AG("8B-qkv-m16", 16, 6144, 4096),       RS("8B-o-m16", 16, 4096, 4096),
};
#define NPROBLEMS ((int)(sizeof k_problems / sizeof k_problems[0]))
#define NDEFAULT 10 /* the default run: the first ten */
/* --quick: a small AG, a small RS and the 8192^3 ceiling: every code path in under a minute. */
static const char *const k_quick = "8B-qkv,8B-o,gemm-8192";
/* --decode: the 70B and 8B layers at M = 16 and two 70B ones at M = 64 (BENCHMARKS.md, "Decode"). */
static const char *const k_decode =
    "70B-qkv-m16,70B-fc1-m16,70B-fc2-m16,70B-o-m16,8B-qkv-m16,8B-o-m16,70B-qkv-m64,70B-o-m64";

void bench_args_defaults(bench_args *a) {
    memset(a, 0, sizeof *a);
    a->dtypes = 3;
    a->out = "bench/results/local_gemm.json";
    a->cool_s = 1.0;
    a->burst_ms = 60.0; /* ~20 calls of 8192^3: the anchors' cool-card burst */
    a->sustained_s = 1.0;
    a->budget_s = 480.0; /* a 10-minute device call, less build and report */
    a->seed = 2024;
    a->device = 0;
}

const char *bench_usage(void) {
    return "usage: local_gemm [--quick | --decode | --problems NAME,...] [--configs NAME,...]\n"
           "                  [--dtype bf16|fp16|all|e4m3] [--out PATH]\n"
           "                  [--cool-s S] [--burst-ms MS] [--sustained-s S] [--budget-s S] [--seed N]\n"
           "                  [--device N] [--pdl-ab] [--aa] [--lt-algos N] [--precise-fp8] [--dry-run] [--help]\n"
           "Local GEMM of each problem (TP = 2 shard of measured-anchors.md, plus 8192^3 and 4096^3) on one GPU:\n"
           "every shipped TP = 1 tpgemm kernel through the public API against cuBLASLt, same data, interleaved (a\n"
           "tile for few tokens, a config with a wave_weight, only where it is the problem's default pick).\n"
           "Problems: 405B-fc1 70B-fc1 70B-qkv 8B-qkv 405B-fc2 70B-fc2 70B-o 8B-o gemm-8192 gemm-4096; by name only,\n"
           "the 70B layers at M = 2048, 512, 128, 64 and 16: 70B-{fc1,qkv,fc2,o}-m{2048,512,128,64,16}, and\n"
           "8B-{qkv,o}-m16; or MxNxK, a local GEMM of that shape (N a multiple of 8, K of 16)\n"
           "--quick = --problems 8B-qkv,8B-o,gemm-8192. --decode = the 70B and 8B layers at M = 16 and 70B-qkv / o\n"
           "at M = 64. --configs keeps only the named tpgemm configs (x_* = every\n"
           "config whose name starts with x_): shorter A/B runs. --dry-run prints the plan and estimate, touches no GPU,\n"
           "and writes the JSON (null measurements) only to an --out given, never over the committed results.\n"
           "--pdl-ab adds each config launched with programmatic dependent launch (tpg_op_set_pdl(op, 1)) as an\n"
           "extra variant, never picked as the best; nor is a config whose name starts with x_ (an experiment\n"
           "added to schedules.yaml for a run). --aa adds cuBLASLt a second time, last in the order\n"
           "(cublasLt_control, never best): an A/A control of the method's order bias. --lt-algos N (2..16) adds\n"
           "cublasLt_best_of_N (never best): the fastest of cuBLASLt's first N heuristic algorithms in a short timed\n"
           "trial, timed like the rest; the tables stay against the top algorithm (its D checked against the top\n"
           "one's: a mismatch is printed, not exit 1). --precise-fp8: cuBLASLt e4m3\n"
           "without fast accumulation (f32 promotion), the baseline of fp8_promote kernels (default: fast accumulation).\n"
           "Exit: 0 ok, 1 a check failed, 2 usage, 3 no Hopper GPU, 5 a CUDA / cuBLAS error.\n";
}

static int bad(char *msg, size_t cap, const char *flag, const char *val, const char *want) {
    snprintf(msg, cap, "local_gemm: %s '%s': %s\n%s", flag, val ? val : "(missing)", want, bench_usage());
    return BENCH_USAGE;
}

static int num(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

/* Decimal digits only (no sign, exponent, hex or spaces), at most max. */
static int whole(const char *s, uint64_t max, uint64_t *out) {
    if (!*s) return -1;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9') return -1;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return -1;
    *out = (uint64_t)v;
    return 0;
}

int bench_args_parse(int argc, char **argv, bench_args *a, char *msg, size_t cap) {
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strncmp(f, "--", 2) && strchr(f, '='))
            return bad(msg, cap, f, strchr(f, '=') + 1,
                       "flags take their value as the next argument: --dtype fp16, not --dtype=fp16");
        if (!strcmp(f, "--quick")) a->quick = 1;
        else if (!strcmp(f, "--decode")) a->decode = 1;
        else if (!strcmp(f, "--dry-run")) a->dry_run = 1;
        else if (!strcmp(f, "--pdl-ab")) a->pdl_ab = 1;
        else if (!strcmp(f, "--aa")) a->aa = 1;
        else if (!strcmp(f, "--precise-fp8")) a->precise_fp8 = 1;
        else if (!strcmp(f, "--help") || !strcmp(f, "-h")) a->help = 1;
        else if (!v) return bad(msg, cap, f, NULL, "unknown flag, or a flag that needs a value");
        else if (!strncmp(v, "--", 2)) /* a value starting with -- is the next flag: this one's value is missing */
            return bad(msg, cap, f, v, "unknown flag, or a flag whose value is missing");
        else {
            i++;
            if (!strcmp(f, "--problems")) {
                if (!*v) return bad(msg, cap, f, v, "give a comma-separated list of problem names");
                a->problems = v;
            } else if (!strcmp(f, "--configs")) {
                if (!*v || strlen(v) >= 512) return bad(msg, cap, f, v, "give a comma-separated list of config names (x_* = a prefix)");
                a->configs = v;
            } else if (!strcmp(f, "--dtype")) {
                if (!strcmp(v, "bf16")) a->dtypes = 1;
                else if (!strcmp(v, "fp16")) a->dtypes = 2;
                else if (!strcmp(v, "all")) a->dtypes = 3;
                else if (!strcmp(v, "e4m3")) a->dtypes = 1 << TPG_DTYPE_E4M3;
                else return bad(msg, cap, f, v, "use bf16, fp16, all (both) or e4m3");
            } else if (!strcmp(f, "--out")) {
                if (!*v) return bad(msg, cap, f, v, "give the JSON file to write");
                a->out = v, a->out_given = 1;
            }
            /* The method's floors: a cool-down under 1 s leaves the card throttled, a window under 1 s is
             * no sustained figure (measured-anchors.md, "The power cap"). */
            else if (!strcmp(f, "--cool-s")) { if (num(v, 1.0, 60.0, &a->cool_s)) return bad(msg, cap, f, v, "seconds in [1, 60]"); }
            else if (!strcmp(f, "--burst-ms")) { if (num(v, 1.0, 1000.0, &a->burst_ms)) return bad(msg, cap, f, v, "milliseconds in [1, 1000]"); }
            else if (!strcmp(f, "--sustained-s")) { if (num(v, 1.0, 30.0, &a->sustained_s)) return bad(msg, cap, f, v, "seconds in [1, 30]"); }
            else if (!strcmp(f, "--budget-s")) { if (num(v, 1.0, 36000.0, &a->budget_s)) return bad(msg, cap, f, v, "seconds in [1, 36000]"); }
            else if (!strcmp(f, "--seed")) { if (whole(v, UINT64_MAX, &a->seed)) return bad(msg, cap, f, v, "a non-negative integer (decimal digits)"); }
            else if (!strcmp(f, "--lt-algos")) {
                uint64_t n;
                _Static_assert(LT_MAX_ALGOS == 16, "the usage and this message say 2..16");
                if (whole(v, LT_MAX_ALGOS, &n) || n < 2) return bad(msg, cap, f, v, "a count of algorithms in [2, 16]");
                a->lt_algos = (int)n;
            }
            else if (!strcmp(f, "--device")) { uint64_t d; if (whole(v, 63, &d)) return bad(msg, cap, f, v, "a CUDA device ordinal 0..63"); a->device = (int)d; }
            else return bad(msg, cap, f, v, "unknown flag");
        }
    }
    return 0;
}

/* --problems also takes MxNxK: a local GEMM of that shape (op "GEMM", named by its extents), for a sweep beyond the
 * table. M, N, K in 1..2^20; N a multiple of 8 and K of 16 (16-byte rows for TMA and cuBLASLt at every dtype). */
static bench_problem k_custom[BENCH_MAX_PROBLEMS];
static char k_custom_names[BENCH_MAX_PROBLEMS][32];

static int parse_extent(const char *s, char **end, int64_t *out) {
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    long long v = strtoll(s, end, 10);
    if (errno || v < 1 || v > (1 << 20)) return -1;
    *out = v;
    return 0;
}

/* 1: tok is MxNxK and fills p, named in name[32] "MxNxK" from the values (01x8x16 is 1x8x16); 0: not digits and
 * x only, a table name; -1: digits and x but no valid shape (msg). */
static int custom_problem(const char *tok, char name[32], bench_problem *p, char *msg, size_t cap_msg) {
    if (strspn(tok, "0123456789x") != strlen(tok)) return 0;
    int64_t e[3];
    const char *s = tok;
    for (int i = 0; i < 3; i++) {
        char *end = NULL;
        if (parse_extent(s, &end, &e[i]) || (i < 2 ? *end != 'x' : *end != '\0')) {
            snprintf(msg, cap_msg, "local_gemm: problem '%s': give MxNxK with each extent in 1..%d\n%s", tok, 1 << 20,
                     bench_usage());
            return -1;
        }
        s = end + 1;
    }
    if (e[1] % 8 || e[2] % 16) {
        snprintf(msg, cap_msg, "local_gemm: problem '%s': N must be a multiple of 8 and K of 16 (16-byte rows)\n%s",
                 tok, bench_usage());
        return -1;
    }
    snprintf(name, 32, "%lldx%lldx%lld", (long long)e[0], (long long)e[1], (long long)e[2]);
    *p = (bench_problem){name, "GEMM", e[0], e[1], e[2], e[0], e[1], e[2]};
    return 1;
}

int bench_select(const bench_args *a, const bench_problem **out, int cap, char *msg, size_t cap_msg) {
    if (a->quick + a->decode + !!a->problems > 1) {
        snprintf(msg, cap_msg, "local_gemm: --quick, --decode and --problems each name the problems: give one\n%s",
                 bench_usage());
        return -1;
    }
    const char *list = a->problems ? a->problems : a->quick ? k_quick : a->decode ? k_decode : NULL;
    int n = 0;
    if (!list) {
        for (int i = 0; i < NDEFAULT && n < cap; i++) out[n++] = &k_problems[i];
        return n;
    }
    char buf[512];
    if (strlen(list) >= sizeof buf) {
        snprintf(msg, cap_msg, "local_gemm: --problems is %zu characters; at most %zu\n%s", strlen(list),
                 sizeof buf - 1, bench_usage());
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const bench_problem *found = NULL;
        bench_problem custom;
        char name[32];
        for (int i = 0; i < NPROBLEMS; i++)
            if (!strcmp(tok, k_problems[i].name)) found = &k_problems[i];
        const int c = found ? 0 : custom_problem(tok, name, &custom, msg, cap_msg);
        if (c < 0) return -1;
        if (c > 0) found = &custom;
        if (!found) {
            snprintf(msg, cap_msg, "local_gemm: unknown problem '%s' in --problems\n%s", tok, bench_usage());
            return -1;
        }
        int dup = 0;
        for (int j = 0; j < n; j++) dup |= !strcmp(out[j]->name, found->name);
        if (dup) continue;
        if (n >= cap || n >= BENCH_MAX_PROBLEMS) {
            snprintf(msg, cap_msg, "local_gemm: --problems names more than %d problems\n%s", cap, bench_usage());
            return -1;
        }
        if (c > 0) { /* kept for the run: slot n is this problem's */
            snprintf(k_custom_names[n], sizeof k_custom_names[n], "%s", name);
            k_custom[n] = custom;
            k_custom[n].name = k_custom_names[n];
            found = &k_custom[n];
        }
        out[n++] = found;
    }
    if (!n) snprintf(msg, cap_msg, "local_gemm: --problems selects nothing\n%s", bench_usage());
    return n ? n : -1;
}

int bench_config_selected(const char *list, const char *name) {
    if (!list) return 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const size_t len = strlen(tok);
        if (len && tok[len - 1] == '*' ? !strncmp(tok, name, len - 1) : !strcmp(tok, name)) return 1;
    }
    return 0;
}

int bench_tp1_configs(tpg_dtype dt, const char *list, int precise_fp8, int *configs, int cap) {
    int n = 0;
    for (int i = 0; i < tpg_config_count(); i++) {
        tpg_config_info ci;
        /* f32 accumulation only: the comparison is cuBLASLt's fp32-accumulating GEMM; fp8 with the same
         * numerics as the cuBLASLt side: fast accumulation, or with --precise-fp8 the promoting kernels */
        if (tpg_config_get(i, &ci) != TPG_OK || ci.tp != 1 || ci.dtype != dt || ci.acc != TPG_DTYPE_FP32) continue;
        if (tpg_dtype_size(dt) == 1 && (ci.fp8_promote != 0) != (precise_fp8 != 0)) continue;
        if (!bench_config_selected(list, ci.name)) continue;
        /* Every schedule's TP = 1 config runs the same kernel with no communication: one per kernel. */
        int seen = 0;
        for (int j = 0; j < n; j++) {
            tpg_config_info cj;
            if (tpg_config_get(configs[j], &cj) == TPG_OK && !strcmp(cj.kernel, ci.kernel)) seen = 1;
        }
        if (!seen && n < cap) configs[n++] = i;
    }
    return n;
}

int bench_check_configs(const bench_args *a, char *msg, size_t cap_msg) {
    if (a->precise_fp8 && a->dtypes != 1 << TPG_DTYPE_E4M3) {
        snprintf(msg, cap_msg, "local_gemm: --precise-fp8 compares fp8 kernels; give it with --dtype e4m3\n%s",
                 bench_usage());
        return -1;
    }
    if (!a->configs) return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", a->configs);
    if (strspn(buf, ",") == strlen(buf)) { /* only commas: no token, so the loop below would check nothing */
        snprintf(msg, cap_msg, "local_gemm: --configs '%s' names no config\n%s", a->configs, bench_usage());
        return -1;
    }
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int hit = 0;
        for (int dt = 0; dt <= TPG_DTYPE_E4M3 && !hit; dt++) {
            int cfg[64];
            if (a->dtypes & (1 << dt)) hit = bench_tp1_configs((tpg_dtype)dt, tok, a->precise_fp8, cfg, 64) > 0;
        }
        if (!hit) {
            snprintf(msg, cap_msg, "local_gemm: --configs '%s' selects no TP = 1 config of the chosen dtype with f32 "
                     "accumulation (`build/tpgemm --list` names them; fp8: the fp8_promote configs with --precise-fp8, "
                     "the others without)\n%s", tok, bench_usage());
            return -1;
        }
    }
    return 0;
}

double bench_estimate_s(const bench_args *a, const bench_problem *p, int variants) {
    const double t_call = 2.0 * (double)p->m * (double)p->n * (double)p->k / 700e12;
    double burst = a->burst_ms * 1e-3;
    if (burst < 3 * t_call) burst = 3 * t_call; /* at least 3 calls per burst */
    const double setup = 1.5 + 12 * t_call; /* alloc, fill, graphs, checks, warm-up */
    /* Sustained windows overshoot: calls are sized from the burst speed, the card runs ~15% slower hot. */
    return setup + (BENCH_BURST_REPS * variants + 2) * a->cool_s + BENCH_BURST_REPS * variants * burst +
           (BENCH_HEAT_WINDOWS + BENCH_ROUNDS * variants) * a->sustained_s * 1.15;
}
