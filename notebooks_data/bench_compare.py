#!/usr/bin/env python3
"""Times the same float64 forward pass in the C++ core (`deberta bench`) and in the project's
PyTorch implementation (deberta_torch.py, Debian's torch with OpenBLAS), in one run, and prints
the table of docs/performance.md.

    /usr/bin/python3 notebooks_data/bench_compare.py [--deberta build/bin/deberta] [--repeat 3]
        [--presets tiny,xsmall,base] [--seqs 16,128,512] [--threads 1,2] [--markdown]

The forward pass is the same in both: embeddings, every encoder layer, the Enhanced Mask Decoder
(two passes of the last layer) and the MLM head at every 7th position (~15%), with random weights
of the preset's shapes. torch runs in float64 under torch.no_grad() with the same thread count.

The peer is the project's PyTorch twin (deberta_torch.py), not Hugging Face's modeling code:
transformers v4.27 does not import with Debian's packages alone (it needs huggingface_hub and
tokenizers, which Debian 12 does not ship), and the snapshot available to the project is a fork
that imports torch_mlu. The twin is written from the same equations (checked against the golden
files with `deberta_torch.py --check-golden`), batched over heads as the reference code is, and
like ours runs the MLM head at the masked positions only; Hugging Face's DebertaV2ForMaskedLM
decodes every position (more work than either).

After the table it prints, from the same run, the two ratios issue 17 sets floors on: C++ at
2 threads vs 1 thread, and torch / C++ at 2 threads.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deberta_torch as dt  # noqa: E402

PRESETS = {
    "tiny": dict(model_type="deberta-v2", hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                 intermediate_size=512, vocab_size=8000, position_buckets=32, max_relative_positions=128,
                 share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False),
    "xsmall": dict(model_type="deberta-v2", hidden_size=384, num_hidden_layers=12, num_attention_heads=6,
                   intermediate_size=1536, vocab_size=128100, position_buckets=256, max_relative_positions=512,
                   share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False),
    "base": dict(model_type="deberta", hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, vocab_size=50265, max_relative_positions=512, position_biased_input=True),
}


def torch_forward_ms(preset, n, threads, repeat):
    torch.set_num_threads(threads)
    cfg = dt.DebertaConfig.from_dict(dict(PRESETS[preset], relative_attention=True, pos_att_type=["p2c", "c2p"],
                                          max_position_embeddings=512, layer_norm_eps=1e-7, hidden_act="gelu"))
    torch.manual_seed(1)
    model = dt.DebertaV2(cfg).double().eval()
    ids = torch.randint(0, cfg.vocab_size, (1, n))
    positions = (torch.zeros(len(range(0, n, 7)), dtype=torch.long), torch.arange(0, n, 7))
    times = []
    with torch.no_grad():
        for r in range(repeat + 1):
            t0 = time.perf_counter()
            model(ids, lm_positions=positions)
            if r:
                times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deberta", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "deberta"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--presets", default="tiny,xsmall,base")
    ap.add_argument("--seqs", default="16,128,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()
    rows = []
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| model | N | threads | C++ median ms | C++ GFLOP/s | GEMM GFLOP/s | roofline eff. | peak RSS MB | torch ms | torch / C++ |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for preset in args.presets.split(","):
        for n in map(int, args.seqs.split(",")):
            for t in map(int, args.threads.split(",")):
                out = subprocess.run([args.deberta, "bench", "--preset", preset, "--seq", str(n), "--threads", str(t),
                                      "--repeat", str(args.repeat), "--json"], check=True, capture_output=True, text=True)
                c = json.loads(out.stdout)
                tms = torch_forward_ms(preset, n, t, args.repeat)
                row = dict(c, torch_ms=tms, ratio=tms / c["median_ms"])
                rows.append(row)
                print(f"| {preset} | {n} | {t} | {c['median_ms']:.1f} | {c['gflops']:.1f} | {c['gemm_gflops']:.1f} | "
                      f"{c['roofline_efficiency']:.2f} | {c['peak_rss_mb']:.0f} | {tms:.1f} | {tms / c['median_ms']:.2f} |",
                      flush=True)
    print()
    by = {(r["model"], r["seq"], r["threads"]): r for r in rows}
    for preset in args.presets.split(","):
        for n in map(int, args.seqs.split(",")):
            one, two = by.get((preset, n, 1)), by.get((preset, n, 2))
            if one and two:
                print(f"{preset} N = {n}: C++ 2 threads vs 1: {one['median_ms'] / two['median_ms']:.2f}x; "
                      f"torch / C++ at 2 threads: {two['ratio']:.2f}x")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        json.dump({"machine": platform.processor() or platform.machine(), "rows": rows}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
