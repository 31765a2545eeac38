/* JSON records and the closing table of build/bench/local_gemm. Pure C so the dry run exercises it without
 * a GPU. The required field names (name, M, N, K, dtype, config, tpgemm_tflops, cublas_tflops,
 * tpgemm_sustained_tflops, cublas_sustained_tflops, tpgemm_joules, cublas_joules) are read by
 * bench/report.py and tests/test_bench_report.py: keep them exact. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "bench.h"
#include "json.h"

/* NaN and infinities are not JSON: they become null ("not measured"). */
static void jnum(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static void jcheck(FILE *f, int c) { fputs(c == 1 ? "\"pass\"" : c == 0 ? "\"fail\"" : "null", f); }

static void jvariant(FILE *f, const bench_variant *v) {
    fputs("{\"config\": ", f), tpg__json_string(f, v->config);
    fputs(", \"kernel\": ", f), tpg__json_string(f, v->kernel);
    if (v->pdl) fputs(", \"pdl\": true", f);
    if (v->control) fputs(", \"control\": true", f);
    if (v->lt_best_of) fprintf(f, ", \"lt_best_of\": %d", v->lt_best_of);
    if (v->lt_trial_n > 0) { /* the trial's times, the heuristic's order; null: did not run */
        fputs(", \"lt_trial_us\": [", f);
        for (int i = 0; i < v->lt_trial_n; i++) fputs(i ? ", " : "", f), jnum(f, v->lt_trial_us[i]);
        fputs("]", f);
    }
    fputs(", \"burst_tflops\": ", f), jnum(f, v->burst_tflops);
    fputs(", \"sustained_tflops\": ", f), jnum(f, v->sustained_tflops);
    fputs(", \"joules\": ", f), jnum(f, v->joules);
    fputs(", \"burst_mhz\": [", f);
    for (int i = 0; i < BENCH_BURST_REPS; i++)
        fputs(i ? ", " : "", f), jnum(f, v->burst_clock_mhz[i] ? v->burst_clock_mhz[i] : NAN);
    fputs("], \"rounds\": [", f);
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        fprintf(f, "%s{\"calls\": %d, \"seconds\": ", r ? ", " : "", v->round_calls[r]);
        jnum(f, v->round_seconds[r]);
        fputs(", \"tflops\": ", f), jnum(f, v->round_tflops[r]);
        fputs(", \"joules\": ", f), jnum(f, v->round_joules[r]);
        fputs(", \"sm_clock_mhz_end\": ", f), jnum(f, v->round_clock_mhz[r] ? v->round_clock_mhz[r] : NAN);
        fputs(", \"power_w_end\": ", f), jnum(f, v->round_power_w[r]);
        fputs(", \"watts\": ", f), jnum(f, v->round_watts[r]);
        for (int e = 0; e < 2; e++)
            fputs(e ? ", \"temp_c_end\": " : ", \"temp_c_start\": ", f),
                jnum(f, v->round_temp_c[r][e] ? v->round_temp_c[r][e] : NAN);
        fputs("}", f);
    }
    fputs("], \"check\": ", f), jcheck(f, v->check);
    fputs(", \"max_error\": ", f), jnum(f, v->max_error);
    fputs(", \"check_note\": ", f);
    if (v->check_note[0]) tpg__json_string(f, v->check_note);
    else fputs("null", f);
    fputs(", \"error\": ", f);
    if (v->error[0]) tpg__json_string(f, v->error);
    else fputs("null", f);
    fputs("}", f);
}

static void jrecord(FILE *f, const bench_record *r, const bench_meta *m) {
    const bench_variant *cb = &r->var[0], *tp = r->best >= 0 ? &r->var[r->best] : NULL;
    const bench_problem *p = r->p;
    fputs("  {\"name\": ", f), tpg__json_string(f, p->name);
    fprintf(f, ", \"M\": %lld, \"N\": %lld, \"K\": %lld, \"dtype\": ", (long long)p->m, (long long)p->n,
            (long long)p->k);
    tpg__json_string(f, tpg_dtype_name(r->dtype));
    fputs(", \"config\": ", f);
    if (tp) tpg__json_string(f, tp->config);
    else fputs("null", f);
    fputs(",\n   \"tpgemm_tflops\": ", f), jnum(f, tp ? tp->burst_tflops : NAN);
    fputs(", \"cublas_tflops\": ", f), jnum(f, cb->burst_tflops);
    fputs(", \"tpgemm_sustained_tflops\": ", f), jnum(f, tp ? tp->sustained_tflops : NAN);
    fputs(", \"cublas_sustained_tflops\": ", f), jnum(f, cb->sustained_tflops);
    fputs(", \"tpgemm_joules\": ", f), jnum(f, tp ? tp->joules : NAN);
    fputs(", \"cublas_joules\": ", f), jnum(f, cb->joules);
    fputs(",\n   \"op\": ", f), tpg__json_string(f, p->op);
    fprintf(f, ", \"global\": {\"M\": %lld, \"N\": %lld, \"K\": %lld, \"tp\": %d}", (long long)p->gm,
            (long long)p->gn, (long long)p->gk, strcmp(p->op, "GEMM") ? 2 : 1);
    fputs(", \"kernel\": ", f);
    if (tp) tpg__json_string(f, tp->kernel);
    else fputs("null", f);
    /* "pick": the runtime's own pick for the problem; "best": none of the variants runs it (--configs) */
    fprintf(f, ", \"published\": \"%s\"", tp && r->pick_kernel[0] && !strcmp(tp->kernel, r->pick_kernel) ? "pick"
                                                                                                   : "best");
    fputs(", \"check\": ", f), jcheck(f, tp ? tp->check : -1);
    fputs(", \"max_error\": ", f), jnum(f, tp ? tp->max_error : NAN);
    fputs(", \"eps\": ", f), jnum(f, r->eps);
    fputs(", \"cublas_ref_error\": ", f), jnum(f, r->cublas_ref_error);
    fputs(", \"cublas_ref_check\": ", f), jcheck(f, r->cublas_ref_check);
    fputs(", \"cublas_algo\": ", f), tpg__json_string(f, r->cublas_algo);
    fprintf(f, ",\n   \"burst_calls\": %d, \"late_windows\": %d, \"clocks\": {\"tpgemm_burst_mhz\": [", r->burst_calls,
            r->late_windows);
    for (int i = 0; i < BENCH_BURST_REPS; i++)
        fputs(i ? ", " : "", f), jnum(f, tp && tp->burst_clock_mhz[i] ? tp->burst_clock_mhz[i] : NAN);
    fputs("], \"cublas_burst_mhz\": [", f);
    for (int i = 0; i < BENCH_BURST_REPS; i++)
        fputs(i ? ", " : "", f), jnum(f, cb->burst_clock_mhz[i] ? cb->burst_clock_mhz[i] : NAN);
    fputs("], \"tpgemm_sustained_end_mhz\": ", f);
    jnum(f, tp && tp->round_clock_mhz[BENCH_ROUNDS - 1] ? tp->round_clock_mhz[BENCH_ROUNDS - 1] : NAN);
    fputs(", \"cublas_sustained_end_mhz\": ", f);
    jnum(f, cb->round_clock_mhz[BENCH_ROUNDS - 1] ? cb->round_clock_mhz[BENCH_ROUNDS - 1] : NAN);
    fputs("},\n   \"variants\": [", f);
    for (int i = 0; i < r->nvar; i++) {
        fputs(i ? ",\n     " : "\n     ", f);
        jvariant(f, &r->var[i]);
    }
    fprintf(f, "],\n   \"seed\": %llu, \"error\": ", (unsigned long long)r->seed);
    if (r->error[0]) tpg__json_string(f, r->error);
    else fputs("null", f);
    fputs(",\n   \"gpu\": ", f), tpg__json_string(f, m->gpu);
    fputs(", \"driver\": ", f), tpg__json_string(f, m->driver);
    fputs(", \"cuda\": ", f), tpg__json_string(f, m->cuda);
    fputs(", \"date\": ", f), tpg__json_string(f, m->date);
    fputs(", \"energy_note\": ", f);
    if (m->energy_note[0]) tpg__json_string(f, m->energy_note);
    else fputs("null", f);
    fprintf(f, ", \"method\": {\"cool_s\": %g, \"burst_ms\": %g, \"burst_reps\": %d, \"sustained_s\": %g, "
               "\"rounds\": %d, \"heat_windows\": %g, \"chunks\": %d, "
               "\"burst\": \"an unmeasured window after a longer idle, then idle before every window; a window's "
               "first event behind a device-side delay while the host queues its calls\", "
               "\"sustained_order\": \"forward in even rounds, reversed in odd ones\", "
               "\"joules\": \"fitted busy power x seconds per call\", "
               "\"best\": \"the runtime's pick (tpg_config_pick at TP = 1), else max burst x sustained\", "
               "\"check\": \"max |d - ref| / max(|ref|, rms(ref)) against cuBLAS, after the first call and after the "
               "sustained rounds\"}",
            m->args->cool_s, m->args->burst_ms, BENCH_BURST_REPS, m->args->sustained_s, BENCH_ROUNDS, BENCH_HEAT_WINDOWS,
            BENCH_CHUNKS);
    fputs(",\n   \"command\": ", f), tpg__json_string(f, m->command);
    fputs("}", f);
}

int bench_write_json(const char *path, const bench_record *r, int n, const bench_meta *m, char *msg, size_t cap) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, cap, "local_gemm: cannot write %s (does its folder exist?)", path);
        return BENCH_RUNTIME;
    }
    fputs("[\n", f);
    for (int i = 0; i < n; i++) {
        jrecord(f, &r[i], m);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("]\n", f);
    if (fclose(f)) {
        snprintf(msg, cap, "local_gemm: writing %s failed", path);
        return BENCH_RUNTIME;
    }
    return 0;
}

static double ratio(double a, double b) { return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN; }

static void cell(FILE *f, double v, const char *fmt) {
    if (isfinite(v)) fprintf(f, fmt, v);
    else fprintf(f, "%8s", "-");
}

/* Ratios are tpgemm / cuBLAS (J ratio: tpgemm's joules per GEMM over cuBLAS's: below 1 is better). */
void bench_print_table(FILE *f, const bench_record *r, int n) {
    fprintf(f, "\n%-10s %-5s %8s %8s %8s %8s %8s  %s\n", "name", "dtype", "tpgemm", "cublas", "burst", "sustain",
            "J ratio", "check (TFLOP/s burst; ratios tpgemm/cublas)");
    for (int dt = 0; dt <= TPG_DTYPE_E4M3; dt++) {
        double lsum[3] = {0, 0, 0};
        int cnt[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            if ((int)r[i].dtype != dt) continue;
            const bench_variant *cb = &r[i].var[0], *tp = r[i].best >= 0 ? &r[i].var[r[i].best] : NULL;
            double q[3] = {ratio(tp ? tp->burst_tflops : NAN, cb->burst_tflops),
                           ratio(tp ? tp->sustained_tflops : NAN, cb->sustained_tflops),
                           ratio(tp ? tp->joules : NAN, cb->joules)};
            fprintf(f, "%-10s %-5s ", r[i].p->name, tpg_dtype_name(r[i].dtype));
            cell(f, tp ? tp->burst_tflops : NAN, "%8.1f"), fputc(' ', f);
            cell(f, cb->burst_tflops, "%8.1f");
            /* the geomeans count a GEMM that passed its check, ran every window and whose cuBLAS matched the
             * reference (report.py's rule) */
            const int counts = tp && tp->check == 1 && !tp->error[0] && r[i].cublas_ref_check != 0 && !r[i].error[0];
            for (int j = 0; j < 3; j++) {
                fputc(' ', f), cell(f, q[j], "%8.3f");
                if (counts && isfinite(q[j]) && q[j] > 0) lsum[j] += log(q[j]), cnt[j]++;
            }
            fprintf(f, "  %s%s%s%s%s%s\n", !tp ? "-" : tp->check == 1 ? "pass" : tp->check == 0 ? "FAIL" : "-",
                    r[i].cublas_ref_check == 0 ? "  cuBLAS vs the reference: FAIL" : "", r[i].error[0] ? "  " : "",
                    r[i].error, tp && tp->error[0] ? "  tpgemm: " : "", tp && tp->error[0] ? tp->error : "");
        }
        if (cnt[0] + cnt[1] + cnt[2] == 0) continue;
        fprintf(f, "%-10s %-5s %8s %8s", "geomean", tpg_dtype_name((tpg_dtype)dt), "", "");
        for (int j = 0; j < 3; j++) fputc(' ', f), cell(f, cnt[j] ? exp(lsum[j] / cnt[j]) : NAN, "%8.3f");
        fputc('\n', f);
    }
}
