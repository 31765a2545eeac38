/* tpg_tensormap_encode's argument check (runtime/src/tensormap.c): the swizzle spans one box row, so only
 * 128-byte rows and 64-byte rows (`bk: 32` kernels, bench/tma_rate.cu's BK = 32 walks) are accepted, and the
 * refusal comes before the driver is asked for anything. No GPU needed. */
#include <cuda.h>

#include "tensormap.h"
#include "tpg_test.h"

TPG_TEST(rejects_box_rows_other_than_128_or_64_bytes) {
    CUtensorMap map;
    /* 16 bf16 = 32 bytes, 128 bf16 = 256 bytes, 8 fp32 = 32 bytes: refused, with the operand's name */
    TPG_EXPECT_EQ_INT(tpg_tensormap_encode(NULL, &map, (void *)0x1000, TPG_DTYPE_BF16, 4096, 4096, 16, 128, "A"),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "A: a box row of 16 bf16 is 32 bytes (128 or 64)");
    TPG_EXPECT_EQ_INT(tpg_tensormap_encode(NULL, &map, (void *)0x1000, TPG_DTYPE_BF16, 4096, 4096, 128, 128, "B"),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "B: a box row of 128 bf16 is 256 bytes");
    TPG_EXPECT_EQ_INT(tpg_tensormap_encode(NULL, &map, (void *)0x1000, TPG_DTYPE_FP32, 4096, 4096, 8, 128, "A"),
                      TPG_ERR_INVALID_ARGUMENT);
    /* fp8: one byte an element, so BK = 128 is the 128-byte row and BK = 256 is refused */
    TPG_EXPECT_EQ_INT(tpg_tensormap_encode(NULL, &map, (void *)0x1000, TPG_DTYPE_E4M3, 4096, 4096, 256, 128, "A"),
                      TPG_ERR_INVALID_ARGUMENT);
    TPG_EXPECT_STR_CONTAINS(tpg_last_error(NULL), "A: a box row of 256 e4m3 is 256 bytes (128 or 64)");
}

TPG_TEST_MAIN(TPG_CASE(rejects_box_rows_other_than_128_or_64_bytes))
