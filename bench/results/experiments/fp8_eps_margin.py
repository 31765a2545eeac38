#!/usr/bin/env python3
"""How close cuBLASLt's own e4m3 error comes to the local-GEMM check's eps, by K, over every committed local_gemm
record under the 2026-12-05 method (the per-element metric: max |d - ref| / max(|ref|, rms(ref)) against the fp32
reference): fast accumulation (eps max(2e-2, 5e-4 sqrt(K))) and --precise-fp8 (eps 2e-2) apart. A ratio near 1 would
fail a kernel with cuBLASLt's own numerics; far below 1, a wrong kernel could pass.

    python3 bench/results/experiments/fp8_eps_margin.py
"""
import glob
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def records():
    for path in sorted(glob.glob(os.path.join(ROOT, "*.json")) + glob.glob(os.path.join(ROOT, "experiments", "*", "*.json"))):
        try:
            with open(path) as f:
                rs = json.load(f)
        except (OSError, ValueError):
            continue
        for r in rs if isinstance(rs, list) else []:
            if (isinstance(r, dict) and r.get("dtype") == "e4m3" and "check" in (r.get("method") or {})
                    and isinstance(r.get("cublas_ref_error"), (int, float)) and r.get("eps")):
                yield r


def main():
    by_k = {}
    for r in records():
        precise = "--precise-fp8" in (r.get("command") or "").split()
        by_k.setdefault((precise, r["K"]), []).append(r["cublas_ref_error"] / r["eps"])
    print("accumulation  K      records  cuBLASLt error / eps (min .. max)")
    for (precise, k), v in sorted(by_k.items()):
        print(f"{'promoted' if precise else 'fast':12}  {k:<6} {len(v):>7}  {min(v):.2f} .. {max(v):.2f}")


if __name__ == "__main__":
    main()
