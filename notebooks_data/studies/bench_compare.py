#!/usr/bin/env python3
"""Times the same float64 forward pass in the C++ core (`deberta bench`) and in the project's
PyTorch implementation (deberta_torch.py, Debian's torch with OpenBLAS), in one run, and prints
the table of docs/performance.md.

    /usr/bin/python3 notebooks_data/studies/bench_compare.py [--deberta build/bin/deberta] [--repeat 3]
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

With --transformers DIR (a directory holding the `transformers/` package of v4.27, e.g. extracted
from the mirror with `git --git-dir /work/.mirror/xiaojunjun65+transformers-mlu_4.27.1/repo archive
HEAD src/transformers | tar -x -C /tmp/hf`), Hugging Face's own modeling code is timed too:
`DebertaV2ForMaskedLM` / `DebertaForMaskedLM` (the reference's masked-LM forward: encoder, then
the head at every position) and the bare encoder `DebertaV2Model` / `DebertaModel`, in float64
(default dtype float64, model .double(), eval, no_grad). Its imports that Debian cannot satisfy
(huggingface_hub, the fork's torch_mlu, the dependency version check) are replaced by empty
modules at run time; the modeling files are used as they are.

Threads on the torch side: torch.set_num_threads(T) sets only torch's own (OpenMP) pool; Debian's
OpenBLAS (libopenblas0-pthread) keeps a pool of its own, one thread per core, whatever torch is
told. Left alone, "1 thread" ran every GEMM on all cores, and at 2 threads torch's spinning OpenMP
threads and OpenBLAS's threads took turns on two cores (measured on a 2-core host: the HF masked-LM
forward, xsmall N = 16, 100 ms with torch at 1 thread, 295 ms at 2). So the script sets OpenBLAS's
count to T as well (`openblas_set_num_threads` of the library torch loaded) and, unless the caller
set it, OMP_WAIT_POLICY=PASSIVE for torch's pool (not passed to the C++ benchmark): torch then gets
the best of its two pools on T cores (same host: 98 ms at 2 threads).

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

# Before torch starts its OpenMP pool (see the module docstring); the C++ benchmark runs without it.
_SET_WAIT_POLICY = "OMP_WAIT_POLICY" not in os.environ
if _SET_WAIT_POLICY:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # notebooks_data/
from lib import deberta_torch as dt  # noqa: E402

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


def openblas():
    """The OpenBLAS library torch has loaded (ctypes handle), or None (another BLAS)."""
    import ctypes
    paths = sorted({line.split()[-1] for line in open("/proc/self/maps") if "blas" in line.lower()
                    and line.split()[-1].startswith("/")})
    for path in paths:
        lib = ctypes.CDLL(path)
        if hasattr(lib, "openblas_set_num_threads"):
            return lib
    return None


_OPENBLAS = openblas()


def set_torch_threads(threads):
    """torch's own pool and OpenBLAS's pool to `threads` threads each."""
    torch.set_num_threads(threads)
    if _OPENBLAS is not None:
        _OPENBLAS.openblas_set_num_threads(threads)


def torch_forward_ms(preset, n, threads, repeat):
    set_torch_threads(threads)
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


def import_transformers(src):
    """Imports transformers' DeBERTa modeling code from `src` with empty stand-ins for the imports
    the forward pass never uses (see the module docstring). Returns (v1 module, v2 module)."""
    import importlib
    import types

    class Empty(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (Exception,), {})  # a name imported at load time and never called

    for root, subs in (("huggingface_hub", ("utils", "file_download", "constants")), ("torch_mlu", ())):
        try:
            importlib.import_module(root)
        except ImportError:
            for name in (root,) + tuple(f"{root}.{s}" for s in subs):
                sys.modules[name] = Empty(name)
    sys.modules["transformers.dependency_versions_check"] = types.SimpleNamespace(dep_version_check=lambda *a, **k: None)
    sys.path.insert(0, src)
    from transformers.models.deberta import modeling_deberta as v1
    from transformers.models.deberta_v2 import modeling_deberta_v2 as v2
    return v1, v2


def hf_forward_ms(hf, preset, n, threads, repeat):
    """Median ms of Hugging Face's masked-LM forward and of its bare encoder, float64."""
    v1, v2 = hf
    set_torch_threads(threads)
    torch.set_default_dtype(torch.float64)
    d = dict(PRESETS[preset], relative_attention=True, max_position_embeddings=512, layer_norm_eps=1e-7,
             hidden_act="gelu")
    is_v1 = d.pop("model_type") == "deberta"
    d["pos_att_type"] = ["c2p", "p2c"] if is_v1 else ["p2c", "c2p"]
    mod = v1 if is_v1 else v2
    cfg = mod.DebertaConfig(**d) if is_v1 else mod.DebertaV2Config(**d)
    torch.manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (1, n))
    out = []
    for cls in ((mod.DebertaForMaskedLM, mod.DebertaModel) if is_v1 else (mod.DebertaV2ForMaskedLM, mod.DebertaV2Model)):
        model = cls(cfg).double().eval()
        times = []
        with torch.no_grad():
            for r in range(repeat + 1):
                t0 = time.perf_counter()
                model(input_ids=ids)
                if r:
                    times.append(1e3 * (time.perf_counter() - t0))
        out.append(statistics.median(times))
        del model
    torch.set_default_dtype(torch.float32)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deberta", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin", "deberta"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--presets", default="tiny,xsmall,base")
    ap.add_argument("--seqs", default="16,128,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--transformers", help="directory holding transformers v4.27's `transformers/` package: time "
                                           "Hugging Face's modeling code too")
    args = ap.parse_args()
    hf = import_transformers(args.transformers) if args.transformers else None
    rows = []
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"torch threads: torch.set_num_threads and " +
          ("OpenBLAS's openblas_set_num_threads" if _OPENBLAS is not None else "no OpenBLAS found (its BLAS's own threads)") +
          f", OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}")
    cpp_env = dict(os.environ)
    if _SET_WAIT_POLICY:
        del cpp_env["OMP_WAIT_POLICY"]
    hf_head = " HF MLM ms | HF MLM / C++ | HF encoder ms | HF encoder / C++ |" if hf else ""
    print("| model | N | threads | C++ median ms | C++ GFLOP/s | GEMM GFLOP/s | roofline eff. | peak RSS MB | torch ms | "
          "torch / C++ |" + hf_head)
    print("|---" * (10 + (4 if hf else 0)) + "|")
    for preset in args.presets.split(","):
        for n in map(int, args.seqs.split(",")):
            for t in map(int, args.threads.split(",")):
                out = subprocess.run([args.deberta, "bench", "--preset", preset, "--seq", str(n), "--threads", str(t),
                                      "--repeat", str(args.repeat), "--json"], check=True, capture_output=True, text=True,
                                     env=cpp_env)
                c = json.loads(out.stdout)
                tms = torch_forward_ms(preset, n, t, args.repeat)
                row = dict(c, torch_ms=tms, ratio=tms / c["median_ms"])
                extra = ""
                if hf:
                    row["hf_mlm_ms"], row["hf_encoder_ms"] = hf_forward_ms(hf, preset, n, t, args.repeat)
                    extra = (f" {row['hf_mlm_ms']:.1f} | {row['hf_mlm_ms'] / c['median_ms']:.2f} | "
                             f"{row['hf_encoder_ms']:.1f} | {row['hf_encoder_ms'] / c['median_ms']:.2f} |")
                rows.append(row)
                print(f"| {preset} | {n} | {t} | {c['median_ms']:.1f} | {c['gflops']:.1f} | {c['gemm_gflops']:.1f} | "
                      f"{c['roofline_efficiency']:.2f} | {c['peak_rss_mb']:.0f} | {tms:.1f} | {tms / c['median_ms']:.2f} |"
                      + extra, flush=True)
    print()
    by = {(r["model"], r["seq"], r["threads"]): r for r in rows}
    for preset in args.presets.split(","):
        for n in map(int, args.seqs.split(",")):
            one, two = by.get((preset, n, 1)), by.get((preset, n, 2))
            if one and two:
                hf_text = (f"; HF MLM / C++ {two['hf_mlm_ms'] / two['median_ms']:.2f}x, HF encoder / C++ "
                           f"{two['hf_encoder_ms'] / two['median_ms']:.2f}x" if "hf_mlm_ms" in two else "")
                print(f"{preset} N = {n}: C++ 2 threads vs 1: {one['median_ms'] / two['median_ms']:.2f}x; "
                      f"torch / C++ at 2 threads: {two['ratio']:.2f}x" + hf_text)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        json.dump({"machine": platform.processor() or platform.machine(), "rows": rows}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
