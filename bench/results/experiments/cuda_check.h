/* The experiments' one-file CUDA benchmarks (launch_cost.cu, tma_hol.cu): CK(call) prints the failing call with its
 * place and returns 1 from main. */
#ifndef TPG_EXPERIMENTS_CUDA_CHECK_H
#define TPG_EXPERIMENTS_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                         \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

#endif
