/* Command-line parsing of build/tpgemm (see args.h). */
#include "args.h"

#include "copy_chunks.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tpg_args_defaults(tpg_cli_args *a) {
    memset(a, 0, sizeof *a);
    a->m = 16384;
    a->n = 106496;
    a->k = 16384;
    a->l = 1;
    a->alpha = 1.0f;
    a->beta = 0.0f;
    a->iterations = 100;
    a->warmup = 10;
    a->dtype = TPG_DTYPE_BF16;
    a->scale_a = a->scale_b = 1.0f;
    a->check = 1;
    a->seed = TPG_CLI_DEFAULT_SEED;
}

/* The help text in two literals: ISO C promises literals of 4095 characters only (-Woverlength-strings, which a
 * vendoring project's pedantic CFLAGS turn on). */
static const char usage_options[] =
           "Usage: tpgemm [options]\n"
           "\n"
           "Runs one communication-fused tensor-parallel GEMM  D = alpha*A*B^T + beta*C  (A: MxK, B: NxK,\n"
           "C/D: MxN, L batches) over tp Hopper GPUs, checks it against a reference and times it.\n"
           "\n"
           "Problem:\n"
           "  --m N --n N --k N --l N     global extents (default 16384 x 106496 x 16384, L = 1)\n"
           "  --alpha X --beta X          scalars (default 1, 0)\n"
           "  --scale-a X --scale-b X     fp8 configs: per-tensor scales of A and B, passed to the kernel as\n"
           "                              device scalars (default 1, 1: none passed)\n"
           "Config (see --list):\n"
           "  --config NAME               a generated config, e.g. ag_rota_bf16_tp2\n"
           "  --schedule NAME             or pick by schedule (default AllGather1D_TilingCD_RotatingA),\n"
           "  --tp N                      TP degree (default: the largest generated TP that fits the visible\n"
           "                              GPUs, or the --devices count; with none visible, as if 2 were),\n"
           "  --dtype bf16|fp16|e4m3|e5m2 and operand type (default bf16; fp8 writes bf16)\n"
           "  --devices 0,1               CUDA ordinals of the ranks (default 0..tp-1)\n"
           "  --copy-chunks N             all-gather: cut each shard's copy into N pieces (1..32, whole tiles),\n"
           "                              each with its own flag (default: the config's copy_chunks; with\n"
           "                              --model, the all-gather layers')\n"
           "  --overlap-barriers          TP >= 2: the GEMM starts without waiting for the start barrier, and an\n"
           "                              all-gather's closing barrier waits for the copies only (1x1 kernels)\n"
           "  --gather-copy-engine        a gathered all-gather walk (few rows a stage) gets its shards by\n"
           "                              copy-engine nodes, not pulled by its GEMM's CTAs (the default)\n"
           "  --rs-ring                   a one-hop reduce-scatter walk (few rows a stage) keeps its ring instead\n"
           "                              of one GEMM of all rows and a REDUCE of every rank's partial (the default)\n"
           "  --share-device              let the ranks share a GPU (default: all on device 0): each gets an\n"
           "                              even share of its SMs. Checks the fused schedule on one GPU; the\n"
           "                              times say nothing about a real TP run. Sets CUDA_DEVICE_MAX_CONNECTIONS\n"
           "                              to 32 (copy-engine partials need them there) unless it is set\n"
           "Model presets (schedules.yaml models:, e.g. llama3-8b, llama3-70b, llama3-405b):\n"
           "  --model NAME                run each GEMM of one layer (qkv, attn_out, gate_up, down) with the\n"
           "                              config of the dispatch table, and print a per-layer table\n"
           "  --tokens N                  M of every GEMM (default: the preset's), with --tp and --dtype\n"
           "Run:\n"
           "  --iterations N              timed runs (default 100)\n"
           "  --warmup-iterations N       untimed runs first (default 10)\n"
           "  --check / --no-check        reference check + bitwise determinism over 3 runs (default on), the\n"
           "                              first on the op's fresh receive slots (before the warm-up)\n"
           "  --eps X                     relative error bound (default bf16 2e-2, fp16 4e-3,\n"
           "                              fp8 max(2e-2, 5e-4 sqrt(K)), 2e-2 with fp8_promote; f16 sums\n"
           "                              (acc: f16) max(2e-2, 8e-4 sqrt(K)); reduce-scatter\n"
           "                              with output-type partials: sqrt(e^2 + p r^2), r = the output's, p the\n"
           "                              rounded partials: tp-1 on a ring, tp on a one-hop walk)\n"
           "  --seed N                    seed of the deterministic operand values (default 2024)\n"
           "  --timeout-ms N              bound on every device-side wait (default: the runtime's, 10 s)\n"
           "  --trace FILE.json           after the timed runs, 4 traced calls back to back; the last one is\n"
           "                              written as a Chrome/Perfetto timeline (trace build: ninja trace)\n"
           "  --trace-cap N               records per CTA lane in the trace buffer (1..65536; default: 512,\n"
           "                              and where a lane's walk asked for more, 4 more traced calls with\n"
           "                              room for what it asked, at most 65536; a given cap is kept)\n";
static const char usage_output[] =
           "Output:\n"
           "  --dry-run                   print the plan only (needs no GPU)\n"
           "  --list                      list the generated configs\n"
           "  --json                      one JSON object on stdout\n"
           "  --help                      this text\n"
           "\n"
           "A value goes after a space or '=' (--m 512, --m=512). A flag given twice takes its last value, so a\n"
           "script's defaults can come first and the caller's after them (--check / --no-check: the last one).\n"
           "\n"
           "Exit status: 0 passed (or --no-check), 1 check failed or not bitwise reproducible, 2 usage, config,\n"
           "shape, alignment or argument error, 3 not enough Hopper GPUs / no peer access, 4 a device-side wait\n"
           "timed out, 5 another CUDA or runtime failure.\n";

static char usage_text[sizeof usage_options + sizeof usage_output - 1];
static void join_usage(void) { snprintf(usage_text, sizeof usage_text, "%s%s", usage_options, usage_output); }

const char *tpg_args_usage(void) {
    static pthread_once_t joined = PTHREAD_ONCE_INIT; /* a caller on another thread never sees it half written */
    pthread_once(&joined, join_usage);
    return usage_text;
}

int tpg_args_parse_dtype(const char *s, tpg_dtype *out) {
    static const struct {
        const char *name;
        tpg_dtype t;
    } names[] = {{"bf16", TPG_DTYPE_BF16}, {"fp16", TPG_DTYPE_FP16}, {"e4m3", TPG_DTYPE_E4M3},
                 {"e5m2", TPG_DTYPE_E5M2}}; /* operand types only: fp32 is a partial / output type, never an operand */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].t;
            return 0;
        }
    return -1;
}

static int fail(char *msg, size_t cap, const char *fmt, ...) {
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return 2;
}

/* Strict decimal integer in [lo, hi]; no sign for lo >= 0, no spaces, no trailing junk. */
static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return -1;
    if (lo >= 0 && (*s == '-' || *s == '+')) return -1;
    for (const char *p = (*s == '-' ? s + 1 : s); *p; p++)
        if (*p < '0' || *p > '9') return -1;
    if (*s == '-' && !s[1]) return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end) return -1;
    if (v < lo || v > hi) return -1;
    *out = (int64_t)v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !end || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_f64(const char *s, double *out) {
    if (!s || !*s) return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    /* decimal only: strtod also takes hex floats ("0x10"), "inf" / "nan" and leading white space */
    if (errno || !end || *end || !isfinite(v) || isspace((unsigned char)s[0]) || strpbrk(s, "xX")) return -1;
    *out = v;
    return 0;
}

/* "0,1,3": non-negative ordinals, at most TPG_CLI_MAX_DEVICES (duplicates: checked after parsing, since
 * --share-device allows them). */
static int parse_devices(const char *s, tpg_cli_args *a) {
    int n = 0;
    const char *p = s;
    if (!s || !*s) return -1;
    while (1) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[16];
        int64_t v;
        if (len == 0 || len >= sizeof buf || n >= TPG_CLI_MAX_DEVICES) return -1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (parse_i64(buf, 0, 1023, &v)) return -1;
        a->devices[n++] = (int)v;
        if (!comma) break;
        p = comma + 1;
    }
    a->num_devices = n;
    return 0;
}

typedef enum { F_NONE, F_I64POS, F_I64NONNEG, F_INTPOS, F_F32, F_EPS, F_STR, F_TP, F_DTYPE, F_DEVICES, F_SEED, F_CHUNKS,
               F_TRACE_CAP } kind_t;

typedef struct {
    const char *name;
    kind_t kind;
} flag_t;

static const flag_t flags[] = {
    {"--m", F_I64POS},         {"--n", F_I64POS},         {"--k", F_I64POS},
    {"--l", F_I64POS},         {"--alpha", F_F32},        {"--beta", F_F32},
    {"--scale-a", F_F32},      {"--scale-b", F_F32},
    {"--iterations", F_INTPOS}, {"--warmup-iterations", F_I64NONNEG}, {"--eps", F_EPS},
    {"--config", F_STR},       {"--schedule", F_STR},     {"--tp", F_TP},
    {"--dtype", F_DTYPE},      {"--devices", F_DEVICES},  {"--seed", F_SEED},
    {"--timeout-ms", F_I64POS}, {"--list", F_NONE},       {"--json", F_NONE},
    {"--check", F_NONE},       {"--no-check", F_NONE},    {"--dry-run", F_NONE},
    {"--help", F_NONE},        {"-h", F_NONE},            {"--model", F_STR},
    {"--tokens", F_I64POS},    {"--trace", F_STR},        {"--share-device", F_NONE},
    {"--copy-chunks", F_CHUNKS}, {"--overlap-barriers", F_NONE}, {"--gather-copy-engine", F_NONE},
    {"--rs-ring", F_NONE},     {"--trace-cap", F_TRACE_CAP},
};

static int apply_switch(const char *name, tpg_cli_args *a) {
    if (!strcmp(name, "--list")) a->list = 1;
    else if (!strcmp(name, "--json")) a->json = 1;
    else if (!strcmp(name, "--check")) a->check = 1;
    else if (!strcmp(name, "--no-check")) a->check = 0;
    else if (!strcmp(name, "--dry-run")) a->dry_run = 1;
    else if (!strcmp(name, "--share-device")) a->share_device = 1;
    else if (!strcmp(name, "--overlap-barriers")) a->overlap_barriers = 1;
    else if (!strcmp(name, "--gather-copy-engine")) a->gather_copy_engine = 1;
    else if (!strcmp(name, "--rs-ring")) a->rs_ring = 1;
    else a->help = 1; /* --help, -h */
    return 0;
}

static int apply_value(const flag_t *f, const char *v, tpg_cli_args *a, char *msg, size_t cap) {
    const char *name = f->name;
    int64_t i;
    double d;
    switch (f->kind) {
    case F_I64POS: {
        /* Extents up to 2^40; timeouts up to a day. */
        int64_t hi = !strcmp(name, "--timeout-ms") ? 86400000 : ((int64_t)1 << 40);
        if (parse_i64(v, 1, hi, &i)) {
            if (parse_i64(v, 1, INT64_MAX, &i) == 0 || (strspn(v, "0123456789") == strlen(v) && strlen(v) > 18))
                return fail(msg, cap, "tpgemm: %s expects a positive integer of at most %lld, got '%s'", name,
                            (long long)hi, v);
            return fail(msg, cap, "tpgemm: %s expects a positive integer, got '%s'", name, v);
        }
        if (!strcmp(name, "--m")) a->m = i;
        else if (!strcmp(name, "--n")) a->n = i;
        else if (!strcmp(name, "--k")) a->k = i;
        else if (!strcmp(name, "--l")) a->l = i;
        else if (!strcmp(name, "--tokens")) a->tokens = i;
        else a->timeout_ms = i;
        if (name[2] && !name[3]) a->shape_set |= name[2] == 'm' || name[2] == 'n' || name[2] == 'k';
        return 0;
    }
    case F_INTPOS:
        if (parse_i64(v, 1, 1000000000, &i))
            return fail(msg, cap, "tpgemm: %s expects a positive integer of at most 1000000000, got '%s'", name, v);
        a->iterations = (int)i;
        return 0;
    case F_I64NONNEG:
        if (parse_i64(v, 0, 1000000000, &i))
            return fail(msg, cap, "tpgemm: %s expects a non-negative integer of at most 1000000000, got '%s'", name, v);
        a->warmup = (int)i;
        return 0;
    case F_F32:
        if (parse_f64(v, &d) || fabs(d) > FLT_MAX)
            return fail(msg, cap, "tpgemm: %s expects a finite number (decimal, |x| <= %g: a float), got '%s'", name,
                        (double)FLT_MAX, v);
        if (d != 0.0 && fabs(d) < FLT_MIN)
            return fail(msg, cap, "tpgemm: %s = %s is below a float's smallest normal value (%g): it would run as a "
                        "denormal or 0", name, v, (double)FLT_MIN);
        if (!strcmp(name, "--alpha")) a->alpha = (float)d;
        else if (!strcmp(name, "--beta")) a->beta = (float)d;
        else if (!strcmp(name, "--scale-a")) a->scale_a = (float)d, a->scale_set = 1;
        else a->scale_b = (float)d, a->scale_set = 1;
        return 0;
    case F_EPS:
        if (parse_f64(v, &d) || d < 0.0)
            return fail(msg, cap, "tpgemm: %s expects a non-negative number, got '%s'", name, v);
        a->eps = d;
        a->eps_set = 1;
        return 0;
    case F_STR:
        if (!*v) return fail(msg, cap, "tpgemm: %s expects a name, got ''", name);
        if (!strcmp(name, "--config")) a->config = v;
        else if (!strcmp(name, "--model")) a->model = v;
        else if (!strcmp(name, "--trace")) a->trace = v;
        else a->schedule = v;
        return 0;
    case F_TP:
        if (parse_i64(v, 1, 8, &i))
            return fail(msg, cap, "tpgemm: %s expects an integer in 1..8, got '%s'", name, v);
        a->tp = (int)i;
        return 0;
    case F_DTYPE:
        if (tpg_args_parse_dtype(v, &a->dtype))
            return fail(msg, cap, "tpgemm: %s expects bf16 or fp16 (or e4m3, e5m2), got '%s'", name, v);
        a->dtype_set = 1;
        return 0;
    case F_DEVICES:
        if (parse_devices(v, a))
            return fail(msg, cap,
                        "tpgemm: %s expects a comma-separated list of device ordinals (at most %d), "
                        "got '%s'",
                        name, TPG_CLI_MAX_DEVICES, v);
        return 0;
    case F_CHUNKS:
        if (parse_i64(v, 1, TPG_MAX_COPY_CHUNKS, &i))
            return fail(msg, cap, "tpgemm: %s expects an integer in 1..%d, got '%s'", name, TPG_MAX_COPY_CHUNKS, v);
        a->copy_chunks = (int)i;
        return 0;
    case F_TRACE_CAP:
        if (parse_i64(v, 1, TPG_CLI_MAX_TRACE_CAP, &i))
            return fail(msg, cap, "tpgemm: %s expects an integer in 1..%d, got '%s'", name, TPG_CLI_MAX_TRACE_CAP, v);
        a->trace_cap = (int)i;
        return 0;
    case F_SEED:
        if (parse_u64(v, &a->seed))
            return fail(msg, cap, "tpgemm: %s expects a non-negative integer, got '%s'", name, v);
        return 0;
    default: return 0;
    }
}

int tpg_args_parse(int argc, char **argv, tpg_cli_args *a, char *msg, size_t cap) {
    if (msg && cap) msg[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const flag_t *f = NULL;
        for (size_t j = 0; j < sizeof flags / sizeof flags[0]; j++)
            if (strlen(flags[j].name) == name_len && strncmp(flags[j].name, arg, name_len) == 0) {
                f = &flags[j];
                break;
            }
        if (!f) {
            if (arg[0] != '-')
                return fail(msg, cap, "tpgemm: unexpected argument '%s' (options start with --; see --help)", arg);
            return fail(msg, cap, "tpgemm: unknown option '%.*s' (see --help)", (int)name_len, arg);
        }
        if (f->kind == F_NONE) {
            if (eq) return fail(msg, cap, "tpgemm: %s takes no value, got '%s'", f->name, eq + 1);
            apply_switch(f->name, a);
            continue;
        }
        const char *v;
        if (eq) {
            v = eq + 1;
        } else {
            if (i + 1 >= argc) return fail(msg, cap, "tpgemm: %s expects a value", f->name);
            if (!strncmp(argv[i + 1], "--", 2)) /* the next option, not this one's value (negatives have one -) */
                return fail(msg, cap, "tpgemm: %s expects a value, got the option '%s'", f->name, argv[i + 1]);
            v = argv[++i];
        }
        int rc = apply_value(f, v, a, msg, cap);
        if (rc) return rc;
    }
    if (a->config && (a->schedule || a->dtype_set))
        return fail(msg, cap, "tpgemm: --config %s names the schedule and dtype; drop --schedule/--dtype", a->config);
    if (a->model && (a->config || a->schedule || a->shape_set))
        return fail(msg, cap, "tpgemm: --model %s sets each layer's config, N and K; drop %s (use --tokens for M)",
                    a->model, a->config ? "--config" : a->schedule ? "--schedule" : "--m/--n/--k");
    if (a->model && a->l != 1)
        return fail(msg, cap, "tpgemm: --model %s runs each layer's GEMM once (L = 1); drop --l %lld", a->model,
                    (long long)a->l);
    if (a->tokens && !a->model) return fail(msg, cap, "tpgemm: --tokens needs --model NAME (use --m otherwise)");
    if (a->trace && a->model)
        return fail(msg, cap, "tpgemm: --trace records one GEMM; drop --model %s (run a layer's shape with --m/--n/--k)",
                    a->model);
    if (a->trace_cap && !a->trace)
        return fail(msg, cap, "tpgemm: --trace-cap %d sizes the trace buffer; it needs --trace FILE.json",
                    a->trace_cap);
    if (a->tp && a->num_devices && a->tp != a->num_devices)
        return fail(msg, cap, "tpgemm: --tp %d does not match the %d devices of --devices", a->tp, a->num_devices);
    for (int i = 0; i < a->num_devices && !a->share_device; i++)
        for (int j = 0; j < i; j++)
            if (a->devices[i] == a->devices[j])
                return fail(msg, cap, "tpgemm: --devices names device %d twice; each rank needs its own GPU (add "
                            "--share-device for a correctness run of several ranks on one GPU)", a->devices[i]);
    if (a->share_device && !a->tp && !a->num_devices && !a->config)
        return fail(msg, cap, "tpgemm: --share-device needs the TP degree: --tp N or --devices (or --config NAME for one GEMM)");
    return 0;
}
