/* Trace buffers (templates/kernels/trace_format.h) -> Chrome / Perfetto trace-event JSON. Pure C, no
 * CUDA: build/trace/tpgemm --trace FILE.json calls it with the buffers it copied from each device, and
 * tests/c/test_trace.c with synthetic ones. Every read is bounds-checked against the buffer size.
 *
 * Output: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}, "tpgemm": {...}}
 *   pid = rank + 1 (process "rank r (cuda d)"), tid = TPG_TRACE_TID_STRIDE * pid + track, where track 0 is the
 *   barriers, 1 the copies (timed by CUDA events where the device has nodes, args.measured "cuda_events", with its
 *   flag copies and REDUCE; else inferred from the flag waits), 10 + s the stage-s flag waits of all CTAs (one span per stage), 100 +
 *   4 * cta + l one CTA lane (l 0 producer flag waits, 1 + w consumer warpgroup w's tiles with nested "epilogue"
 *   and "partial wait"). Perfetto gives pid 0 the kernel's idle task's handling and has merged tid 0 with tid 1,
 *   so no id is 0, and no tid repeats across processes; tpgemm.version 2 and later mark these ids (bench/timeline.py
 *   reads version 1's pid = rank, tid = track too); version 3 writes time_zero_ns as a string and labels stream-K;
 *   version 4 writes the nodes beside the GEMM that CUDA events timed (track 1, args.measured "cuda_events"), the
 *   copy-engine partials' bands among them since 2026-12-05; version 5 marks the waits and barriers of a timed-out
 *   call that gave up (names "... (gave up)", args.gave_up on every wait and barrier).
 *   Tile slices are named "stage S" (viewers colour by name), a stream-K contribution "stage S stream-K part" (args
 *   stream_k "contribution", stored false: its finisher, stream_k "finisher", stores the tile); ts/dur in
 *   microseconds relative to the earliest timestamp of any device on the aligned axis, whose %globaltimer value is
 *   tpgemm.time_zero_ns, a string of digits (it passes 2^53, where a JSON reader's doubles round). Times print
 *   with 3 decimals (ns); each device's tpgemm.devices[].timer_step_ns is the step its %globaltimer advanced by
 *   (the GCD of its times' differences: 32 ns to 1 us by GPU and driver), below which the decimals are noise.
 * Clocks: %globaltimer is per GPU, and the GPUs' timers disagree by up to hundreds of microseconds. The
 * start barriers of all ranks exit together by construction (each waits for every other's arrival), so
 * the writer takes each GPU's times back by its first rank's start-exit minus rank 0's (tpgemm.aligned =
 * "start_barrier"; the raw offsets in tpgemm.start_exit_offset_us, which also hold the barrier's polling
 * latency, <= ~1 us back-off; what each rank's times were taken back by in tpgemm.shift_us). Ranks that share a GPU
 * share its timer and its shift (rank 0's GPU: none). A rank without barrier times is left on its own clock, and
 * ranks all on one GPU are not shifted at all ("aligned": "none (one GPU, one timer)"), nor is any rank of a call
 * whose start barrier gave up somewhere: it left at its timeout, not with the others ("aligned": "none (a start
 * barrier gave up: ...)").
 */
#ifndef TPG_CLI_TRACE_JSON_H
#define TPG_CLI_TRACE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

#define TPG_TRACE_MAX_DEVICES 8
#define TPG_TRACE_TID_STRIDE 100000 /* above any track: 100 + 4 * 4096 CTAs */

typedef struct tpg_trace_device {
    int rank, device;    /* rank and CUDA ordinal */
    const void *buf;     /* host copy of the device's trace buffer */
    size_t bytes;
    /* the graph's nodes beside the GEMM timed by CUDA events (runtime/src/trace_events.c), or NULL / 0: written as
     * measured spans on track 1 instead of the copies inferred from the flag waits; nodes_skipped were not timed;
     * nodes_gemm_end_ns: the GEMM's completion on the nodes' clock (-1: unknown), a second anchor */
    const tpg_trace_node_time *nodes;
    int num_nodes, nodes_skipped;
    double nodes_gemm_end_ns;
} tpg_trace_device;

typedef struct tpg_trace_meta {
    const char *config, *schedule, *kernel; /* may be NULL */
    int tp;
    int64_t m, n, k, l;
} tpg_trace_meta;

typedef struct tpg_trace_summary {
    int devices;
    long long records;      /* records converted */
    long long dropped;      /* records past a lane's cap (not recorded) */
    long long incomplete;   /* records without their end time (a wait that never returned) */
    long long gave_up;      /* waits and barriers that gave up (TPG_TRACE_F_GAVE_UP, barrier_gave_up): timed out */
    long long ctas_dropped; /* CTAs beyond the buffer's CTA blocks */
    int silent_kernels;     /* devices whose GEMM wrote no launch description (kernel built without TPG_TRACE?) */
    double span_us;         /* earliest to latest timestamp, all devices */
    /* start barrier exit of rank r minus rank 0's, in us; has_offset[r] = 0 when a barrier time is missing */
    double start_exit_offset_us[TPG_TRACE_MAX_DEVICES];
    int has_offset[TPG_TRACE_MAX_DEVICES];
    /* what was taken back from rank r's times, in us: its GPU's first rank's offset (0 on rank 0's GPU, and for
     * every rank where a start barrier gave up) */
    double shift_us[TPG_TRACE_MAX_DEVICES];
} tpg_trace_summary;

/* 0 if buf holds a well-formed trace buffer of `bytes` bytes; else -1 and a message. */
int tpg_trace_check(const void *buf, size_t bytes, char *msg, size_t msg_bytes);

/* The most records any lane of a well-formed buffer asked for (its count, which keeps counting past the cap): the cap
 * that would have held the whole walk. 0 for a malformed buffer or one no CTA wrote. */
uint32_t tpg_trace_lane_peak(const void *buf, size_t bytes);

/* The cap for a second trace of a call whose n buffers were written with `cap` records a lane: 0 when no lane asked
 * for more (or cap is max_cap already); else the largest lane peak plus an eighth and 64, rounded up to 64, at most
 * max_cap. The units a lane
 * walks are the same every call, its flag waits are not (one record a run of copy pieces seen together: timing). */
uint32_t tpg_trace_cap_for(const tpg_trace_device *devs, int n, uint32_t cap, uint32_t max_cap);

/* Writes the JSON of n devices (1..TPG_TRACE_MAX_DEVICES) to f and fills *sum (may be NULL). Returns 0,
 * or -1 with a message (nothing useful written) when a buffer is malformed. */
int tpg_trace_write_json(FILE *f, const tpg_trace_meta *meta, const tpg_trace_device *devs, int n,
                         tpg_trace_summary *sum, char *msg, size_t msg_bytes);

#endif /* TPG_CLI_TRACE_JSON_H */
