/* What the start barrier and one GEMM CTA take of an SM together (runtime/src/overlap.c: tpg__barrier_beside), the
 * sum tpg_op_set_overlap_barriers compares with the device's limits: registers are granted per warp in 256-register
 * units, so a kernel a few registers short of the SM's 65536 in raw count may still not leave the barrier room. No
 * GPU. */
#include "op_internal.h"
#include "tpg_test.h"

TPG_TEST(registers_are_counted_in_whole_warps_of_256_register_units) {
    /* 168 registers x 32 threads = 5376 = 21 units: exact; 12 warps; the barrier's one warp at 16 = 512 */
    tpg_sm_share n = tpg__barrier_beside(168, 384, 0, 16, 0, 0);
    TPG_EXPECT_EQ_INT(n.regs, 12 * 5376 + 512);
    /* 169 x 32 = 5408 rounds up to 5632 a warp: 67584 + 512, past an SM's 65536 (unrounded, 169 x 384 + 512 = 65408
     * would fit) */
    n = tpg__barrier_beside(169, 384, 0, 16, 0, 0);
    TPG_EXPECT_EQ_INT(n.regs, 12 * 5632 + 512);
    /* the barrier's 10 registers x 32 = 320 round up to 512 */
    n = tpg__barrier_beside(168, 384, 0, 10, 0, 0);
    TPG_EXPECT_EQ_INT(n.regs, 12 * 5376 + 512);
    /* a CTA of 100 threads is 4 warps */
    n = tpg__barrier_beside(64, 100, 0, 8, 0, 0);
    TPG_EXPECT_EQ_INT(n.regs, 4 * 2048 + 256);
}

TPG_TEST(shared_memory_adds_both_ctas_in_128_byte_units_and_the_drivers_reserve_for_each) {
    tpg_sm_share n = tpg__barrier_beside(168, 384, 200000, 16, 48, 1024);
    TPG_EXPECT_EQ_INT(n.smem, 200064 + 128 + 2 * 1024);
    /* as measured on H200 (kernel_selftest --coresident): the 231424 B kernels and a barrier of no shared memory take
     * exactly an SM's 233472 B */
    n = tpg__barrier_beside(168, 384, 231424, 16, 0, 1024);
    TPG_EXPECT_EQ_INT(n.smem, 233472);
}

TPG_TEST(threads_are_the_gemms_warps_and_the_barriers_one) {
    TPG_EXPECT_EQ_INT(tpg__barrier_beside(168, 384, 0, 16, 0, 0).threads, 384 + 32);
    TPG_EXPECT_EQ_INT(tpg__barrier_beside(64, 100, 0, 16, 0, 0).threads, 128 + 32);
}

TPG_TEST_MAIN(TPG_CASE(registers_are_counted_in_whole_warps_of_256_register_units),
              TPG_CASE(shared_memory_adds_both_ctas_in_128_byte_units_and_the_drivers_reserve_for_each),
              TPG_CASE(threads_are_the_gemms_warps_and_the_barriers_one))
