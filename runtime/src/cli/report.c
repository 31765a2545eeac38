/* Output of build/tpgemm (see report.h). */
#include "report.h"

#include "json.h"
#include "../tables.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

void tpg_report_init(tpg_cli_result *r) {
    memset(r, 0, sizeof *r);
    r->deterministic = -1;
    r->scale_a = r->scale_b = 1.0f;
    r->max_error = NAN;
    r->rms_ref = NAN;
    r->avg_ms = NAN;
    r->host_launch_ms = NAN;
    r->tflops_per_gpu = NAN;
}

/* A JSON number, or null when not finite (JSON has no NaN / Infinity). */
static void json_num(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

/* Appends ", " (unless first) and the formatted text to buf[0..cap), keeping it terminated; *n: its length. */
static void append_item(char *buf, size_t cap, size_t *n, const char *fmt, ...) {
    va_list ap;
    if (*n) *n += (size_t)snprintf(buf + *n, *n < cap ? cap - *n : 0, ", ");
    va_start(ap, fmt);
    if (*n < cap) *n += (size_t)vsnprintf(buf + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (*n >= cap) *n = cap - 1;
}

/* Everything a config differs in from the default (f32 sums, partials in the output type and pushed, no stream-K
 * walk at TP >= 2: untimed across GPUs, not marked by_name), joined by ", "; "-" if nothing. A config with any of
 * these is never a default pick (tpg__config_pickable), unless it only moves its partials another way (pulled, by
 * copy engine) and is not by_name: they run by name, or as a tuned choice (tpg_dispatch_find). */
static const char *numerics(int i, char *buf, size_t cap) {
    const tpg_config_desc *c = &tpg_configs[i];
    const tpg_kernel_desc *k = c->kernel;
    size_t n = 0;
    buf[0] = '\0';
    if (c->tuned) append_item(buf, cap, &n, "a tuned choice's"); /* first: a long list is cut at its end */
    if (k->dtype_acc != TPG_DTYPE_FP32) append_item(buf, cap, &n, "%s sums", tpg_dtype_name(k->dtype_acc));
    if (k->fp8_promote) append_item(buf, cap, &n, "fp8 promoted every %d", k->fp8_promote);
    if (k->dtype_partial != k->dtype_cd) append_item(buf, cap, &n, "%s partials", tpg_dtype_name(k->dtype_partial));
    if (c->pull_partials) append_item(buf, cap, &n, "pulled partials");
    if (c->copy_engine_partials) append_item(buf, cap, &n, "copy-engine partials");
    if (k->stream_k && c->schedule->tp > 1) append_item(buf, cap, &n, "stream-K at TP >= 2");
    if (c->by_name) append_item(buf, cap, &n, "by name");
    if (!n) snprintf(buf, cap, "-");
    return buf;
}

void tpg_report_list(FILE *f, int json) {
    int n = tpg_config_count();
    if (json) {
        fputs("{\"configs\": [", f);
        for (int i = 0; i < n; i++) {
            tpg_config_info c;
            if (tpg_config_get(i, &c) != TPG_OK) continue;
            fprintf(f, "%s{\"name\": ", i ? ", " : "");
            tpg__json_string(f, c.name);
            fputs(", \"schedule\": ", f);
            tpg__json_string(f, c.schedule);
            fputs(", \"kernel\": ", f);
            tpg__json_string(f, c.kernel);
            fprintf(f, ", \"tp\": %d, \"dtype\": \"%s\", \"bm\": %d, \"bn\": %d, \"bk\": %d, \"stages\": %d", c.tp,
                    tpg_dtype_name(c.dtype), c.bm, c.bn, c.bk, c.stages);
            fprintf(f, ", \"acc\": \"%s\", \"fp8_promote\": %d, \"partials\": \"%s\", \"pull_partials\": %d, "
                       "\"copy_engine_partials\": %d, \"wave_weight\": %d, \"stream_k\": %d, \"by_name\": %d, "
                       "\"tuned\": %d, \"default_pick\": %s}",
                    tpg_dtype_name(c.acc), c.fp8_promote, tpg_dtype_name(c.partials), c.pull_partials,
                    c.copy_engine_partials, c.wave_weight, c.stream_k, c.by_name, tpg_configs[i].tuned,
                    tpg__config_pickable(&tpg_configs[i]) ? "true" : "false");
        }
        fputs("]}\n", f);
        return;
    }
    int width = 26; /* the config column: as wide as the longest name (a tuned shape's runs past 26) */
    for (int i = 0; i < n; i++)
        if ((int)strlen(tpg_configs[i].name) > width) width = (int)strlen(tpg_configs[i].name);
    fprintf(f, "%-*s %-36s %-3s %-5s %-12s %-6s %-48s %s\n", width, "config", "schedule", "tp", "dtype", "tile",
            "stages", "kernel", "differs (by name or tuned choice only)");
    for (int i = 0; i < n; i++) {
        tpg_config_info c;
        char tile[32], num[160]; /* every item of numerics() at once: ~130 */
        if (tpg_config_get(i, &c) != TPG_OK) continue;
        snprintf(tile, sizeof tile, "%dx%dx%d", c.bm, c.bn, c.bk);
        fprintf(f, "%-*s %-36s %-3d %-5s %-12s %-6d %-48s %s\n", width, c.name, c.schedule, c.tp,
                tpg_dtype_name(c.dtype), tile, c.stages, c.kernel, numerics(i, num, sizeof num));
    }
    fprintf(f, "%d configs. Run one with --config NAME, or pick with --schedule NAME --tp N --dtype bf16|fp16|e4m3|e5m2.\n", n);
}

static const char *check_name(tpg_check_state s) {
    return s == TPG_CHECK_PASSED ? "passed" : s == TPG_CHECK_FAILED ? "failed" : s == TPG_CHECK_NOT_RUN ? "not_run"
                                                                                                       : "skipped";
}

static void write_json(FILE *f, const tpg_cli_result *r) {
    fputs("{\"config\": ", f);
    tpg__json_string(f, r->config);
    fputs(", \"schedule\": ", f);
    tpg__json_string(f, r->schedule);
    fputs(", \"kernel\": ", f);
    tpg__json_string(f, r->kernel);
    fprintf(f, ", \"dtype\": \"%s\", \"tp\": %d, \"devices\": [", tpg_dtype_name(r->dtype), r->tp);
    for (int i = 0; i < r->num_devices; i++) fprintf(f, "%s%d", i ? ", " : "", r->devices[i]);
    fprintf(f, "], \"shared_device\": %s", r->shared_device ? "true" : "false");
    fprintf(f, ", \"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 ", \"l\": %" PRId64, r->m, r->n, r->k, r->l);
    fputs(", \"alpha\": ", f);
    json_num(f, r->alpha);
    fputs(", \"beta\": ", f);
    json_num(f, r->beta);
    fputs(", \"scale_a\": ", f);
    json_num(f, r->scale_a);
    fputs(", \"scale_b\": ", f);
    json_num(f, r->scale_b);
    fprintf(f, ", \"local_gemm\": [%" PRId64 ", %" PRId64 ", %" PRId64 "]", r->stage_m, r->stage_n, r->stage_k);
    fprintf(f, ", \"copy_chunks\": %d, \"overlap_barriers\": %d, \"gemm_pulls\": %d, \"one_hop\": %d",
            r->copy_chunks, r->overlap_barriers, r->gemm_pulls, r->one_hop);
    fprintf(f, ", \"seed\": %" PRIu64 ", \"check\": \"%s\", \"max_error\": ", r->seed, check_name(r->check));
    json_num(f, r->max_error);
    fputs(", \"eps\": ", f);
    json_num(f, r->eps);
    fputs(", \"rms_ref\": ", f);
    json_num(f, r->rms_ref);
    fprintf(f, ", \"checked_elements\": %" PRId64 ", \"nonfinite\": %" PRId64 ", \"full_check\": %s", r->checked_elements,
            r->nonfinite, r->full_check ? "true" : "false");
    fprintf(f, ", \"deterministic\": %s", r->deterministic < 0 ? "null" : r->deterministic ? "true" : "false");
    fputs(", \"avg_ms\": ", f);
    json_num(f, r->timed ? r->avg_ms : NAN);
    fputs(", \"tflops_per_gpu\": ", f);
    json_num(f, r->timed ? r->tflops_per_gpu : NAN);
    fputs(", \"host_launch_ms\": ", f);
    json_num(f, r->timed ? r->host_launch_ms : NAN);
    fprintf(f, ", \"iterations\": %d, \"warmup_iterations\": %d, \"exit_code\": %d, \"error\": ", r->iterations,
            r->warmup, r->exit_code);
    tpg__json_string(f, r->error);
    fputs("}\n", f);
}

void tpg_report_result(FILE *f, const tpg_cli_result *r, int json) {
    if (json) {
        write_json(f, r);
        return;
    }
    fprintf(f, "Config: %s (%s, tp %d, %s, kernel %s)\n", r->config ? r->config : "?", r->schedule ? r->schedule : "?",
            r->tp, tpg_dtype_name(r->dtype), r->kernel ? r->kernel : "?");
    fprintf(f, "Problem: %" PRId64 " x %" PRId64 " x %" PRId64 ", L = %" PRId64 ", alpha = %g, beta = %g", r->m, r->n,
            r->k, r->l, r->alpha, r->beta);
    if (r->scale_a != 1.0f || r->scale_b != 1.0f) fprintf(f, ", scale_a = %g, scale_b = %g", r->scale_a, r->scale_b);
    fputc('\n', f);
    fprintf(f, "Local GEMM Problem Size (per stage): %" PRId64 " x %" PRId64 " x %" PRId64 "\n", r->stage_m,
            r->stage_n, r->stage_k);
    if (r->copy_chunks > 1) fprintf(f, "Copies: %d pieces per shard, each with its own flag\n", r->copy_chunks);
    if (r->overlap_barriers) fprintf(f, "Barriers: beside the GEMM (--overlap-barriers)\n");
    if (r->gemm_pulls)
        fprintf(f, "Copies: every shard pulled by the GEMM's CTAs (gathered walk; --gather-copy-engine: copy nodes)\n");
    if (r->one_hop)
        fprintf(f, "Reduce-scatter: one-hop (one GEMM of all rows, then a REDUCE of every rank's partial; --rs-ring: "
                   "the ring)\n");
    if (r->check == TPG_CHECK_NOT_RUN) {
        fprintf(f, "Disposition: not checked (the run stopped before its check ended: see Error)\n");
    } else if (r->check != TPG_CHECK_SKIPPED) {
        fprintf(f, "Disposition: %s (max error %.3e, bound %.3e, %" PRId64 " elements checked%s, %" PRId64
                   " non-finite)\n",
                r->check == TPG_CHECK_PASSED ? "Passed" : "Failed", r->max_error, r->eps, r->checked_elements,
                r->full_check ? ", all" : ", sampled", r->nonfinite);
        if (r->deterministic >= 0)
            fprintf(f, "bitwise identical over 3 runs: %s\n", r->deterministic ? "yes" : "no");
    } else {
        fprintf(f, "Disposition: skipped (--no-check)\n");
    }
    if (r->timed) {
        fprintf(f, "Avg runtime: %.4f ms (host launches %.4f ms a call%s)\n", r->avg_ms, r->host_launch_ms,
                r->host_launch_ms >= 0.9 * r->avg_ms ? ": launch-bound" : "");
        fprintf(f, "TFLOP/s per GPU: %.1f%s\n", r->tflops_per_gpu,
                r->shared_device ? " (ranks shared a GPU: not a TP figure)" : "");
    }
    if (r->error) fprintf(f, "Error: %s\n", r->error);
}
