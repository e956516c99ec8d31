#!/usr/bin/env python3
"""Where the log buckets of DeBERTa-v2/v3 depend on floating-point rounding.

The bucket of a relative position r with |r| > mid = position_buckets // 2 is

    sign(r) * (ceil(x) + mid),   x = log(|r| / mid) / log((m - 1) / mid) * (mid - 1)

(m = max_relative_positions). When x is mathematically an integer, the ceiling sits exactly on a
step and the last bit of the floating-point log decides the bucket. This script finds every such
(position_buckets, max_relative_positions, r) in a range and compares four rules:

  exact      the mathematical ceiling, decided in integer arithmetic:
             x <= t  <=>  |r|^(mid-1) * mid^t <= (m-1)^t * mid^(mid-1)
  core       the C++ core's rule (deberta::log_bucket_position): float64, and a value within
             1e-12 (relative) of an integer is taken as that integer
  hf32       Hugging Face transformers: the expression evaluated in float32 (torch's default dtype;
             `abs_pos / mid` of an int64 tensor is float32)
  hf64       the same expression in float64 (torch.set_default_dtype(torch.float64))
  ms32       microsoft/DeBERTa's bucket table: float32 log of |r|/mid divided by a float64
             math.log((m-1)/mid) that torch rounds to float32

Usage: bucket_rounding.py [--max-buckets 64] [--max-m 256] [--max-r 512] [--markdown]
Needs Debian's python3-torch (for the float32 / float64 tensor arithmetic the references use).
"""
import argparse
import math

import numpy as np
import torch


def exact_ceil(a: int, mid: int, M: int) -> int:
    """ceil(log(a/mid) / log(M/mid) * (mid-1)) for integers a > mid, M > mid, exactly."""
    x = math.log(a / mid) / math.log(M / mid) * (mid - 1)
    t = math.ceil(x) + 1
    lhs = a ** (mid - 1)
    # smallest t with lhs * mid^t <= M^t * mid^(mid-1)
    while t - 1 >= 0 and lhs * mid ** (t - 1) <= M ** (t - 1) * mid ** (mid - 1):
        t -= 1
    while not lhs * mid ** t <= M ** t * mid ** (mid - 1):
        t += 1
    return t


def core_ceil(a: np.ndarray, mid: int, M: int) -> np.ndarray:
    x = np.log(a.astype(np.float64) / mid) / np.log(M / mid) * (mid - 1)
    snap = np.abs(x - np.round(x)) <= 1e-12 * np.maximum(1.0, np.abs(x))
    return np.ceil(np.where(snap, np.round(x), x)).astype(np.int64)


def hf_ceil(a: np.ndarray, mid: int, M: int, dtype) -> np.ndarray:
    abs_pos = torch.tensor(a, dtype=torch.int64)
    x = torch.log(abs_pos.to(dtype) / mid) / torch.log(torch.tensor(M / mid, dtype=dtype)) * (mid - 1)
    return torch.ceil(x).to(torch.int64).numpy()


def ms_ceil(a: np.ndarray, mid: int, M: int) -> np.ndarray:
    abs_pos = torch.tensor(a, dtype=torch.int64)
    x = torch.log(abs_pos / mid) / math.log(M / mid) * (mid - 1)
    return torch.ceil(x).to(torch.int64).numpy()


def scan(settings, max_r):
    rows = []
    for b, m in settings:
        mid, M = b // 2, m - 1
        if M <= mid or mid < 2:
            continue
        a = np.arange(mid + 1, max_r + 1, dtype=np.int64)
        core = core_ceil(a, mid, M)
        hf32 = hf_ceil(a, mid, M, torch.float32)
        hf64 = hf_ceil(a, mid, M, torch.float64)
        ms32 = ms_ceil(a, mid, M)
        x = np.log(a / mid) / np.log(M / mid) * (mid - 1)
        near = np.abs(x - np.round(x)) < 1e-6  # only here can any rule be off by one
        suspect = near | (core != hf32) | (core != hf64) | (core != ms32)
        for idx in np.nonzero(suspect)[0]:
            r = int(a[idx])
            ex = exact_ceil(r, mid, M)
            vals = {"exact": ex, "core": int(core[idx]), "hf32": int(hf32[idx]), "hf64": int(hf64[idx]),
                    "ms32": int(ms32[idx])}
            if len(set(vals.values())) > 1:
                rows.append((b, m, r, {k: v + mid for k, v in vals.items()}))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-buckets", type=int, default=64)
    ap.add_argument("--max-m", type=int, default=256)
    ap.add_argument("--max-r", type=int, default=512)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    grid = [(b, m) for b in range(4, args.max_buckets + 1, 2) for m in range(3, args.max_m + 1)]
    rows = scan(grid, args.max_r)
    published = scan([(256, 512), (32, 128)], 8192)
    print("scanned position_buckets 4..%d (even), max_relative_positions 3..%d, |r| <= %d: %d (b, m) settings"
          % (args.max_buckets, args.max_m, args.max_r, len(grid)))
    print("published settings (256, 512) and the bundled model's (32, 128), |r| <= 8192: %d differing r" % len(published))
    for name, rs in (("grid", rows), ("published", published)):
        counts = {k: sum(1 for *_, v in rs if v[k] != v["exact"]) for k in ("core", "hf32", "hf64", "ms32")}
        print("%s: %d (b, m, |r|) where the rules disagree; differing from exact: %s" % (name, len(rs), counts))
    if args.markdown:
        print("\n| position_buckets | max_relative_positions | abs(r) | exact | core | HF float32 | HF float64 | microsoft float32 |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for b, m, r, v in rows + published:
            print("| %d | %d | %d | %d | %d | %d | %d | %d |" % (b, m, r, v["exact"], v["core"], v["hf32"], v["hf64"], v["ms32"]))


if __name__ == "__main__":
    main()
