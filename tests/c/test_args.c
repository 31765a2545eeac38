/* Command-line parsing of build/tpgemm (runtime/src/cli/args.c). Pure C, no GPU. */
#include "cli/args.h"
#include "tpg_test.h"

static char g_msg[512];

/* Parses a NULL-terminated argument list (argv[0] is added). */
static int parse(tpg_cli_args *a, const char **args) {
    char *argv[32] = {"tpgemm"};
    int argc = 1;
    while (args[argc - 1] && argc < 31) {
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    tpg_args_defaults(a);
    return tpg_args_parse(argc, argv, a, g_msg, sizeof g_msg);
}
#define PARSE(a, ...) parse((a), (const char *[]){__VA_ARGS__, NULL})

TPG_TEST(defaults_reproduce_the_seed) {
    tpg_cli_args a;
    TPG_ASSERT_EQ_INT(parse(&a, (const char *[]){NULL}), 0);
    TPG_EXPECT_EQ_INT(a.m, 16384);
    TPG_EXPECT_EQ_INT(a.n, 106496);
    TPG_EXPECT_EQ_INT(a.k, 16384);
    TPG_EXPECT_EQ_INT(a.l, 1);
    TPG_EXPECT(a.alpha == 1.0f && a.beta == 0.0f);
    TPG_EXPECT(a.scale_a == 1.0f && a.scale_b == 1.0f && a.scale_set == 0);
    TPG_EXPECT_EQ_INT(a.iterations, 100);
    TPG_EXPECT_EQ_INT(a.warmup, 10);
    TPG_EXPECT_EQ_INT(a.eps_set, 0);
    TPG_EXPECT_EQ_INT(a.check, 1);
    TPG_EXPECT_EQ_INT(a.dtype, TPG_DTYPE_BF16);
    TPG_EXPECT_EQ_INT(a.tp, 0);
    TPG_EXPECT(a.config == NULL && a.schedule == NULL);
}

/* documented in --help: scripts put their defaults first and the caller's flags after them */
TPG_TEST(a_flag_given_twice_takes_its_last_value) {
    tpg_cli_args a;
    TPG_ASSERT_EQ_INT(PARSE(&a, "--timeout-ms", "120000", "--m=512", "--timeout-ms=60000", "--m", "256", "--no-check",
                            "--check", "--config", "x", "--config", "ag_rota_bf16_tp2"), 0);
    TPG_EXPECT_EQ_INT(a.timeout_ms, 60000);
    TPG_EXPECT_EQ_INT(a.m, 256);
    TPG_EXPECT_EQ_INT(a.check, 1);
    TPG_EXPECT(!strcmp(a.config, "ag_rota_bf16_tp2"));
    TPG_ASSERT_EQ_INT(PARSE(&a, "--check", "--no-check"), 0);
    TPG_EXPECT_EQ_INT(a.check, 0);
}

TPG_TEST(both_value_forms) {
    tpg_cli_args a;
    TPG_ASSERT_EQ_INT(PARSE(&a, "--m=512", "--n", "1024", "--k=256", "--l", "2", "--alpha=0.5", "--beta", "1"), 0);
    TPG_EXPECT_EQ_INT(a.m, 512);
    TPG_EXPECT_EQ_INT(a.n, 1024);
    TPG_EXPECT_EQ_INT(a.k, 256);
    TPG_EXPECT_EQ_INT(a.l, 2);
    TPG_EXPECT(a.alpha == 0.5f && a.beta == 1.0f);
    TPG_ASSERT_EQ_INT(PARSE(&a, "--alpha", "-0.75", "--beta=-2"), 0); /* signs kept (the op and reference share them) */
    TPG_EXPECT(a.alpha == -0.75f && a.beta == -2.0f);
    TPG_ASSERT_EQ_INT(PARSE(&a, "--scale-b=4"), 0);
    TPG_EXPECT(a.scale_a == 1.0f && a.scale_b == 4.0f && a.scale_set == 1);
    TPG_ASSERT_EQ_INT(PARSE(&a, "--scale-a", "0.5"), 0);
    TPG_EXPECT(a.scale_a == 0.5f && a.scale_b == 1.0f && a.scale_set == 1);
}

TPG_TEST(all_options) {
    tpg_cli_args a;
    TPG_ASSERT_EQ_INT(PARSE(&a, "--schedule", "ReduceScatter1D_TilingB_RotatingC", "--tp", "4", "--dtype=fp16",
                            "--devices", "0,1,2,3", "--iterations", "5", "--warmup-iterations=0", "--eps", "1e-3",
                            "--seed", "18446744073709551615", "--timeout-ms", "2500", "--json", "--no-check",
                            "--dry-run", "--list", "--help"),
                      0);
    TPG_EXPECT_EQ_STR(a.schedule, "ReduceScatter1D_TilingB_RotatingC");
    TPG_EXPECT_EQ_INT(a.tp, 4);
    TPG_EXPECT_EQ_INT(a.dtype, TPG_DTYPE_FP16);
    TPG_EXPECT_EQ_INT(a.num_devices, 4);
    TPG_EXPECT_EQ_INT(a.devices[3], 3);
    TPG_EXPECT_EQ_INT(a.iterations, 5);
    TPG_EXPECT_EQ_INT(a.warmup, 0);
    TPG_EXPECT(a.eps_set && a.eps == 1e-3);
    TPG_EXPECT(a.seed == 18446744073709551615ull);
    TPG_EXPECT_EQ_INT(a.timeout_ms, 2500);
    TPG_EXPECT(a.json && !a.check && a.dry_run && a.list && a.help);
    TPG_ASSERT_EQ_INT(PARSE(&a, "--no-check", "--check", "--config", "rs_tila_bf16_tp2"), 0);
    TPG_EXPECT_EQ_INT(a.check, 1);
    TPG_EXPECT_EQ_STR(a.config, "rs_tila_bf16_tp2");
}

TPG_TEST(non_numeric_value_names_flag_and_value) {
    tpg_cli_args a;
    TPG_EXPECT_EQ_INT(PARSE(&a, "--m=abc"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --m expects a positive integer, got 'abc'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--k", "12x"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --k expects a positive integer, got '12x'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--n", "0"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--n expects a positive integer, got '0'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--l", "-3"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "got '-3'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--m", " 5"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--m", ""), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--alpha", "x"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --alpha expects a finite number (decimal, |x| <= 3.40282e+38: a float), got 'x'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--beta", "nan"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--eps", "-1"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--eps");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--eps", "0"), 0); /* non-negative: 0 asks for an exact match */
    TPG_EXPECT(a.eps_set && a.eps == 0.0);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--iterations", "0"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--warmup-iterations", "-1"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--seed", "-1"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--timeout-ms", "soon"), 2);
}

TPG_TEST(out_of_range) {
    tpg_cli_args a;
    TPG_EXPECT_EQ_INT(PARSE(&a, "--m", "99999999999999999999"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--m expects a positive integer of at most");
    TPG_EXPECT_STR_CONTAINS(g_msg, "'99999999999999999999'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--tp", "9"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --tp expects an integer in 1..8, got '9'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--tp", "0"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--alpha", "1e39"), 2);
}

TPG_TEST(dtype_and_devices) {
    tpg_cli_args a;
    TPG_EXPECT_EQ_INT(PARSE(&a, "--dtype", "fp8"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--dtype expects bf16 or fp16");
    TPG_EXPECT_STR_CONTAINS(g_msg, "'fp8'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--devices", "0,0"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--devices");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--devices", "0,,1"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--devices", "a"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--devices", "0,1,2,3,4,5,6,7,8"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--devices", "1,0"), 0);
    TPG_EXPECT_EQ_INT(a.num_devices, 2);
    TPG_EXPECT_EQ_INT(a.devices[0], 1);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--tp", "4", "--devices", "0,1"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--tp 4");
}

TPG_TEST(unknown_and_malformed_flags) {
    tpg_cli_args a;
    TPG_EXPECT_EQ_INT(PARSE(&a, "--frobnicate"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "unknown option '--frobnicate'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--mm=3"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "unknown option '--mm'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "stray"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "'stray'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--m"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --m expects a value");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--json=yes"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--json takes no value");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--config", "x", "--schedule", "y"), 2);
    TPG_EXPECT_STR_CONTAINS(g_msg, "--config");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--config", "ag_rota_bf16_tp2", "--dtype", "fp16"), 2); /* else --dtype did nothing */
    TPG_EXPECT_STR_CONTAINS(g_msg, "drop --schedule/--dtype");
}

/* --trace-cap sizes the trace buffer: 1..TPG_CLI_MAX_TRACE_CAP records a lane, only beside --trace. */
TPG_TEST(trace_cap_needs_trace_and_a_range) {
    tpg_cli_args a;
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace", "t.json"), 0);
    TPG_EXPECT_EQ_INT(a.trace_cap, 0); /* default: sized from a first traced call */
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace", "t.json", "--trace-cap", "2048"), 0);
    TPG_EXPECT_EQ_INT(a.trace_cap, 2048);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace-cap=65536", "--trace", "t.json"), 0);
    TPG_EXPECT_EQ_INT(a.trace_cap, TPG_CLI_MAX_TRACE_CAP);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace", "t.json", "--trace-cap", "65537"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --trace-cap expects an integer in 1..65536, got '65537'");
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace", "t.json", "--trace-cap", "0"), 2);
    TPG_EXPECT_EQ_INT(PARSE(&a, "--trace-cap", "64"), 2);
    TPG_EXPECT_EQ_STR(g_msg, "tpgemm: --trace-cap 64 sizes the trace buffer; it needs --trace FILE.json");
}

TPG_TEST(usage_lists_every_flag) {
    const char *u = tpg_args_usage();
    const char *flags[] = {"--m", "--n", "--k", "--l", "--alpha", "--beta", "--iterations", "--warmup-iterations",
                           "--eps", "--config", "--schedule", "--tp", "--dtype", "--devices", "--list", "--json",
                           "--check", "--no-check", "--dry-run", "--seed", "--timeout-ms", "--help", "--scale-a",
                           "--scale-b", "--trace", "--trace-cap"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) TPG_EXPECT_STR_CONTAINS(u, flags[i]);
    /* both of its literals, whole (a literal past ISO C's 4095 characters broke pedantic builds) */
    TPG_EXPECT(strncmp(u, "Usage: tpgemm [options]\n", 24) == 0);
    TPG_EXPECT_STR_CONTAINS(u, "(1..65536; default: 512,");
    const char *tail = "timed out, 5 another CUDA or runtime failure.\n";
    TPG_EXPECT(strlen(u) > strlen(tail) && strcmp(u + strlen(u) - strlen(tail), tail) == 0);
}

TPG_TEST_MAIN(TPG_CASE(defaults_reproduce_the_seed), TPG_CASE(both_value_forms),
              TPG_CASE(a_flag_given_twice_takes_its_last_value), TPG_CASE(all_options),
              TPG_CASE(non_numeric_value_names_flag_and_value), TPG_CASE(out_of_range), TPG_CASE(dtype_and_devices),
              TPG_CASE(unknown_and_malformed_flags), TPG_CASE(usage_lists_every_flag),
              TPG_CASE(trace_cap_needs_trace_and_a_range))
