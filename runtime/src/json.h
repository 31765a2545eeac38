/* The one JSON string writer of the runtime, the CLI and the benchmarks (plan.c, cli/report.c,
 * cli/trace_json.c, bench/output.c). Internal: not part of tpgemm.h. */
#ifndef TPG_JSON_H
#define TPG_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* s as a JSON string literal ("null" for NULL): quotes and backslashes escaped, \n as \n, other
 * control characters as \u00XX; bytes >= 0x80 pass through (the inputs are UTF-8 or ASCII). */
void tpg__json_string(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif

#endif /* TPG_JSON_H */
