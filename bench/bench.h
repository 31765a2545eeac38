/* bench/: the local-GEMM benchmark (build/bench/local_gemm), tpgemm at TP = 1 against cuBLASLt on one GPU.
 * Benchmark only: this is the one place in the repository that links cuBLASLt; the product never does.
 *
 * Pieces (each file says why it is separate):
 *   args.c      problem table, command line, run-time estimate (pure C, no CUDA: testable without a GPU)
 *   output.c    JSON records and the closing table (pure C)
 *   lt.c        cuBLASLt: one D = A.B^T plan with the heuristic's top algorithm, or (--lt-algos) the fastest of
 *               its first N in a timed trial
 *   nvml.c      NVML through dlopen (energy, SM clock, power), so nothing links libnvidia-ml
 *   energy.c    power fitted from the energy counter, sampled by a thread while a window runs
 *   compare.cu  max |d - ref| / max(|ref|, rms(ref)) on the device (outputs are GiB; no host copy), and the
 *               device-side delay that starts a short window
 *   local_gemm.c  the measurement: check, interleaved burst and sustained windows
 *   verdict.c   a variant's check from the comparison's numbers, the variant published, the exit status (pure C:
 *               testable without a GPU)
 *   main.c      records, GPU checks (exit 3 without a Hopper GPU), budget, JSON, table
 */
#ifndef TPG_BENCH_H
#define TPG_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tpgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { BENCH_OK = 0, BENCH_CHECK_FAILED = 1, BENCH_USAGE = 2, BENCH_NO_GPU = 3, BENCH_RUNTIME = 5 };

#define BENCH_MAX_VARIANTS 16    /* tpgemm kernels of one dtype, maybe twice (--pdl-ab), + cuBLASLt (twice: --aa) */
#define BENCH_BURST_REPS 3
/* Measured sustained rounds, after one heat window. Round r runs the variants forward when r is even and in
 * reverse when r is odd (A B C, C B A): the card keeps heating through the back-to-back windows, so a fixed
 * order would give the first variant the coolest silicon (less leakage, a higher clock at the cap); with
 * the two orders every variant's mean position is the same and a linear drift cancels. */
#define BENCH_ROUNDS 2
/* The unmeasured heat window before them, in sustained windows: with one, the first measured window (cuBLAS,
 * in round 0) still started 2 C cooler than every later one and read 1.7% faster than the same cuBLAS plan
 * run last (the --aa control, 2026-12-01), while positions 7 and 13 agreed within 0.6%. */
#define BENCH_HEAT_WINDOWS 2.5
#define BENCH_CHUNKS 10          /* events per sustained window; the median is over chunks */
#define BENCH_MAX_PROBLEMS 24
#define LT_MAX_ALGOS 16          /* --lt-algos: the most cuBLASLt heuristic algorithms a trial times */

/* One local problem: the per-GPU GEMM of a global TP = 2 layer (op "AG": M x N/2 x K, "RS": M x N x K/2)
 * or a plain square GEMM (op "GEMM"). */
typedef struct bench_problem {
    const char *name, *op;
    int64_t gm, gn, gk; /* the global shape (measured-anchors.md) */
    int64_t m, n, k;    /* the local GEMM that is timed */
} bench_problem;

typedef struct bench_args {
    int quick, decode, dry_run, help;
    int pdl_ab;               /* --pdl-ab: every tpgemm config also with programmatic dependent launch */
    int aa;                   /* --aa: cuBLASLt a second time, last in the order (an A/A control) */
    int lt_algos;             /* --lt-algos N (2..LT_MAX_ALGOS): cuBLASLt_best_of_N beside the top one; 0 off */
    int precise_fp8;          /* --precise-fp8: cuBLASLt e4m3 without fast accumulation (against fp8_promote kernels) */
    int dtypes;               /* bit tpg_dtype: 1 bf16, 2 fp16, 4 e4m3 ("all" = the 16-bit two) */
    const char *problems;     /* --problems a,b or NULL */
    const char *configs;      /* --configs a,x_* or NULL: only these tpgemm configs (a trailing * is a prefix) */
    const char *out;          /* JSON path; a dry run writes it only when --out names one (out_given) */
    int out_given;            /* --out was on the command line */
    double cool_s;            /* idle before each burst window (>= 1 s; 3x before a problem's first) */
    double burst_ms;          /* target length of one burst window (calls clamped to 3..20) */
    double sustained_s;       /* length of one sustained window (>= 1 s) */
    double budget_s;          /* past this, remaining problems are recorded as not run */
    uint64_t seed;
    int device;
} bench_args;

void bench_args_defaults(bench_args *a);
/* 0, or BENCH_USAGE with the offending flag and value in msg. */
int bench_args_parse(int argc, char **argv, bench_args *a, char *msg, size_t cap);
const char *bench_usage(void);
/* The selected problems in table order; -1 (message in msg) for an unknown name. */
int bench_select(const bench_args *a, const bench_problem **out, int cap, char *msg, size_t cap_msg);
/* Does config `name` pass the --configs list (NULL passes everything)? Tokens are exact names, or prefixes
 * when they end in '*'. */
int bench_config_selected(const char *list, const char *name);
/* Distinct TP = 1 kernels of dtype among the configs `list` selects: configs[i] = a config index for each
 * (the first selected config naming it). */
int bench_tp1_configs(tpg_dtype dt, const char *list, int precise_fp8, int *configs, int cap);
/* 0, or -1 with a message when a --configs token selects no TP = 1 config of the chosen dtypes (a typo would
 * otherwise silently benchmark nothing but cuBLAS). */
int bench_check_configs(const bench_args *a, char *msg, size_t cap_msg);
/* Seconds one (problem, dtype) run should take, from the method's constants and a 700 TFLOP/s guess. */
double bench_estimate_s(const bench_args *a, const bench_problem *p, int variants);

/* One timed variant: a tpgemm config or cuBLASLt. NAN = not measured (null in JSON). */
typedef struct bench_variant {
    char config[96], kernel[256];
    int pdl;             /* --pdl-ab twin: launched with programmatic dependent launch; never "best" */
    int control;         /* --aa: cuBLASLt again, last in the order; its ratio to var[0] shows the order's bias */
    int lt_best_of;      /* --lt-algos N: cuBLASLt's fastest of N heuristic algorithms (a trial); 0 = not this */
    int lt_trial_n;      /* its trial's candidates (the heuristic may return fewer than N) and their us a call */
    double lt_trial_us[LT_MAX_ALGOS];
    double burst_tflops, sustained_tflops, joules; /* burst: median of reps; sustained: later rounds */
    unsigned burst_clock_mhz[BENCH_BURST_REPS];   /* read while each burst window runs; 0 = unknown */
    double round_tflops[BENCH_ROUNDS], round_joules[BENCH_ROUNDS], round_seconds[BENCH_ROUNDS];
    double round_watts[BENCH_ROUNDS];             /* average power fitted over the busy window (NAN: none) */
    int round_calls[BENCH_ROUNDS];
    unsigned round_clock_mhz[BENCH_ROUNDS]; /* SM clock near the end of each sustained window; 0 = unknown */
    double round_power_w[BENCH_ROUNDS];   /* NVML's own (~1 s averaged) power reading near the window's end */
    unsigned round_temp_c[BENCH_ROUNDS][2]; /* GPU temperature at the window's start and end; 0 = unknown */
    int check;           /* 1 pass, 0 fail, -1 not checked (cuBLAS itself, or an error) */
    double max_error;    /* max |d - ref| / max(|ref|, rms(ref)) against cuBLAS's output (bench_compare), after the
                            first call and again after the sustained rounds: the larger */
    char check_note[160]; /* why the check failed ("" when it did not): non-finite outputs or the error above eps */
    char error[256];      /* why the variant was dropped (a launch or sync failure): a runtime error, not a check's */
} bench_variant;

typedef struct bench_record {
    const bench_problem *p;
    tpg_dtype dtype;
    uint64_t seed;
    int best;            /* index into var of the config published: the runtime's pick, else the best (bench_publish) */
    char pick_kernel[128]; /* the kernel of the problem's default config at TP = 1 (tpg_config_pick), "" if none */
    int nvar;            /* var[0] is cuBLASLt, var[1..] tpgemm configs */
    bench_variant var[BENCH_MAX_VARIANTS];
    double eps;
    double cublas_ref_error; /* cuBLAS vs the fp32 reference of runtime/src/reference.h (sampled) */
    int cublas_ref_check;
    char cublas_algo[192];
    int burst_calls;
    int late_windows;    /* short windows whose device-side delay ended before their calls were queued: their first
                            event then holds host launch latency (WINDOW_DELAY_US too short on this host) */
    char error[256];     /* why the run stopped, "" if it did not */
} bench_record;

typedef struct bench_meta {
    char gpu[128], driver[64], cuda[64], date[40], command[1024], energy_note[200];
    const bench_args *args;
} bench_meta;

/* The measurement (local_gemm.c): a stream, events and the TP = 1 context, then one call per record. */
typedef struct bench_env bench_env;
bench_env *bench_env_new(const bench_args *a, tpg_ctx *tpg, char *err, size_t cap);
void bench_env_free(bench_env *E);
void bench_run_one(bench_env *E, bench_record *r); /* fills r (numbers, checks, error) */
/* A comparison of variant V's D with cuBLAS's (bench_compare: err, rms, bad non-finite elements) against eps, merged
 * into V: the first one (first != 0) sets V->check and V->max_error, a later one can only fail a passed check and
 * raise the error (a NAN or INFINITY sticks); a failed check says why in V->check_note (`when` names the comparison),
 * the first failure's note kept. */
void bench_merge_check(bench_variant *V, double err, double rms, unsigned long long bad, double eps, int first,
                       const char *when);
/* Sets r->best, the config published: the runtime's pick where a variant runs it, else the best (local_gemm.c). */
void bench_publish(bench_record *r);
/* What a record that ran adds to the exit status: *fails the failed checks (a tpgemm variant's against cuBLAS - the
 * cuBLASLt trial against itself is printed, not counted - and cuBLAS's against the fp32 reference), *errors one where
 * the run stopped or the published variant was dropped. */
void bench_tally(const bench_record *r, int *fails, int *errors);
/* local_gemm's exit status: a runtime error (5) outranks a failed check (1). */
int bench_exit_status(int errors, int fails);

int bench_write_json(const char *path, const bench_record *r, int n, const bench_meta *m, char *msg, size_t cap);
void bench_print_table(FILE *f, const bench_record *r, int n);

/* ---- cuBLASLt (lt.c) ---- */
typedef struct lt_gemm lt_gemm;
/* Plans row-major D (m x n) = A (m x k, row-major) . B^T (B: n x k, row-major) in dt with fp32 compute;
 * e4m3 with fast accumulation unless precise_fp8 (lt.c says why). */
int lt_create(tpg_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *d, int precise_fp8,
              lt_gemm **out, char *msg, size_t cap);
int lt_run(lt_gemm *g, void *stream); /* 0 or the cublasStatus_t */
/* --lt-algos N: the fastest of the heuristic's first N algorithms (at most LT_MAX_ALGOS) in a short timed trial on
 * `stream` (lt.c says how), not its top one alone; its description names the winner and both trial times. */
int lt_create_best_of(tpg_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *d,
                      int precise_fp8, int algos, void *stream, lt_gemm **out, char *msg, size_t cap);
const char *lt_describe(const lt_gemm *g); /* the chosen algorithm, for the record */
/* The trial's pure parts (bench/lt_trial.c). lt_shuffled: order[0..n) a permutation of 0..n-1 drawn from *seed (each
 * round's order). lt_trial_winner: of n candidates with median us[i] and fastest window fastest[i] (INFINITY: out),
 * the fastest median - but #0, the heuristic's top algorithm, unless that median beats #0's fastest window: the
 * lowest of n noisy medians is another than #0 even where #0 is as fast. */
void lt_shuffled(int *order, int n, uint32_t *seed);
int lt_trial_winner(const double *us, const double *fastest, int n);
/* lt_create_best_of's trial: each candidate's microseconds a call into us[0..n), n returned (0 for lt_create). */
int lt_trial_times(const lt_gemm *g, double *us, int cap);
void lt_destroy(lt_gemm *g);
void lt_shutdown(void);

/* ---- NVML through dlopen (nvml.c); every getter returns 0 on success ---- */
int nvml_open(const char *pci_bus_id, int index); /* 1 if usable; else nvml_note() says why */
const char *nvml_note(void);
int nvml_energy_mj(unsigned long long *mj);
int nvml_sm_clock_mhz(unsigned *mhz);
int nvml_power_w(double *w);
int nvml_temperature_c(unsigned *c); /* the GPU die sensor, degrees C */
int nvml_driver(char *buf, unsigned cap);
void nvml_close(void);

/* ---- energy (energy.c) ---- */
#define BENCH_ENERGY_STEPS 4096 /* counter steps kept per window (tens per second) */
#define BENCH_MIN_FIT_S 0.1     /* the shortest span of steps a power is fitted over */
typedef struct bench_energy_step {
    double t;              /* host time (bench_now_s) the step was seen */
    unsigned long long mj; /* the counter's value from then on */
} bench_energy_step;
double bench_now_s(void); /* CLOCK_MONOTONIC seconds */
/* Average power (W) between the first and the last step inside [t_from, t_to]; -1 if fewer than two
 * steps span BENCH_MIN_FIT_S there. Pure. */
double bench_fit_power(const bench_energy_step *s, int n, double t_from, double t_to);
int bench_energy_start(void);                          /* 0, or -1 (already running, no thread) */
int bench_energy_stop(const bench_energy_step **steps); /* the steps seen since start, until the next start */

/* ---- device compare (compare.cu) ---- */
/* The largest |d - ref| / max(|ref|, rms_ref) over the finite pairs of n elements of dt (the CLI's reference metric,
 * runtime/src/reference.h), rms_ref (0 when every finite ref is 0: then max_error is 0 too), and the count of
 * non-finite d or ref elements. Synchronizes stream. 0 on success, else a CUDA error code with msg. */
int bench_compare(tpg_dtype dt, const void *d, const void *ref, size_t n, void *stream, double *max_error,
                  double *rms_ref, unsigned long long *nonfinite, char *msg, size_t cap);
/* Queues a one-thread kernel that spins for `us` microseconds on stream; 0, or a CUDA error code. */
int bench_device_delay(void *stream, double us);

#ifdef __cplusplus
}
#endif

#endif /* TPG_BENCH_H */
