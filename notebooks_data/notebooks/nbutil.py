"""Shared helpers of the teaching notebooks: files, the `deberta` CLI, and checks.

What this is: plumbing only. Every equation of the paper is written out in the notebooks
themselves, in NumPy, so that a student reads the mathematics where it is used. This module
only finds files, reads safetensors, runs the C++ core's command-line tool, and compares arrays.

What this is not: a second implementation of DeBERTa, nor a dependency on the project's Python
module (`deberta_explorer`). NumPy and matplotlib only; no torch.

The core's numbers come from `deberta dump` (tensor names of notebooks_data/golden/README.md).
The CLI is found through the environment variable DEBERTA_CLI, else `build/bin/deberta` under
the repository root.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

#: The repository root (this file lives in notebooks_data/notebooks/).
REPO = Path(__file__).resolve().parents[2]
#: notebooks_data/ (models, golden cases, corpus).
DATA = REPO / "notebooks_data"
#: The bundled model: deberta-v2 layout, 4 layers, H = 192, 4 heads, position_buckets 32.
TINY = DATA / "models" / "deberta-tiny"
#: The same architecture and relative settings (position_buckets 32, max_relative_positions 128) with
#: 512 positions: inputs longer than deberta-tiny's 128 (every command refuses an input longer than
#: max_position_embeddings: one length rule, issue 44).
TINY_512 = DATA / "models" / "deberta-tiny-512"
#: Golden reference cases (random-weight models with PyTorch reference tensors).
GOLDEN = DATA / "golden"
#: The trained-ablation zoo of the mini Table 4 (docs/table4.md).
ZOO = DATA / "models" / "zoo"


def cli_path() -> Path:
    """Path of the `deberta` executable: $DEBERTA_CLI, else <repo>/build/bin/deberta.

    Raises FileNotFoundError (with how to build it) when the file does not exist.
    """
    env = os.environ.get("DEBERTA_CLI")
    path = Path(env) if env else REPO / "build" / "bin" / "deberta"
    if not path.is_file():
        raise FileNotFoundError(
            f"deberta CLI not found at {path}: build it (cmake --build build --target deberta) "
            "or set DEBERTA_CLI to the executable")
    return path


def repo_relative(path: Path | str) -> str:
    """`path` relative to the repository root when it lies inside it (for printing), else as is."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def load_config(model_dir: Path | str) -> dict:
    """config.json of a model directory, as a dict (Hugging Face keys)."""
    return json.loads((Path(model_dir) / "config.json").read_text())


# ---------------------------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------------------------

# safetensors dtype name -> NumPy little-endian dtype. BF16 is handled separately below.
_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?",
}


def read_safetensors(path: Path | str) -> tuple[dict[str, np.ndarray], dict]:
    """Read every tensor of a .safetensors file.

    Format: 8-byte little-endian header length n, n bytes of JSON
    `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the
    data; offsets count from the end of the header.

    Returns (tensors, metadata): tensors maps name -> NumPy array of the stored dtype and shape
    (BF16 is widened to float32 exactly); metadata is the `__metadata__` dict ({} if absent).
    Raises ValueError for a malformed file (header past the end, unknown dtype, data range out of
    bounds or not matching the shape).
    """
    raw = Path(path).read_bytes()
    if len(raw) < 8:
        raise ValueError(f"{path}: {len(raw)} bytes, too short for a safetensors header")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"{path}: header of {n} bytes runs past the end of the file")
    header = json.loads(raw[8:8 + n])
    data = memoryview(raw)[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        dtype, shape = info["dtype"], tuple(info["shape"])
        begin, end = info["data_offsets"]
        if not 0 <= begin <= end <= len(data):
            raise ValueError(f"{path}: tensor {name}: data_offsets {begin, end} outside the data")
        count = int(np.prod(shape, dtype=np.int64))
        if dtype == "BF16":
            if end - begin != 2 * count:
                raise ValueError(f"{path}: tensor {name}: {end - begin} bytes for {count} BF16 values")
            bits = np.frombuffer(data[begin:end], dtype="<u2").astype(np.uint32) << 16
            tensors[name] = bits.view(np.float32).reshape(shape)
            continue
        if dtype not in _DTYPES:
            raise ValueError(f"{path}: tensor {name}: unsupported dtype {dtype}")
        np_dtype = np.dtype(_DTYPES[dtype])
        if end - begin != np_dtype.itemsize * count:
            raise ValueError(f"{path}: tensor {name}: {end - begin} bytes for shape {list(shape)} of {dtype}")
        tensors[name] = np.frombuffer(data[begin:end], dtype=np_dtype).reshape(shape).copy()
    return tensors, meta


def load_weights(model_dir: Path | str) -> dict[str, np.ndarray]:
    """model.safetensors of a model directory, every floating-point tensor widened to float64.

    Widening float32 -> float64 is exact, and the C++ core computes in float64 from the same
    values, so NumPy float64 arithmetic on these weights can be compared to the core at 1e-10.
    """
    tensors, _ = read_safetensors(Path(model_dir) / "model.safetensors")
    return {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in tensors.items()}


# ---------------------------------------------------------------------------------------------
# The deberta CLI
# ---------------------------------------------------------------------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="deberta-nb-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_dump_count = 0


def run_cli(*args: str) -> str:
    """Run `deberta <args>` on one thread (OMP_NUM_THREADS=1) and return its stdout.

    Raises RuntimeError with the command line and stderr when the exit status is not 0.
    """
    cmd = [str(cli_path()), *map(str, args)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def tokenize(text: str, model: Path | str = TINY) -> tuple[list[str], list[int]]:
    """`deberta tokenize --json`: the tokens and ids the model sees, [CLS] ... [SEP].

    The literal "[MASK]" in `text` becomes the mask token. Returns (tokens, ids), both of length N.
    """
    out = json.loads(run_cli("tokenize", "--json", "--model", model, "--text", text))
    return out["tokens"], out["ids"]


def dump(model: Path | str = TINY, ids: list[int] | None = None, inputs: Path | str | None = None,
         mlm: list[int] | None = None, flags: list[str] = ()) -> dict[str, np.ndarray]:
    """Run the C++ core (`deberta dump`) and return every tensor it wrote.

    Give either `ids` (token ids, e.g. from `tokenize`) or `inputs` (a safetensors file with
    input_ids / attention_mask / token_type_ids, e.g. a golden case's golden.safetensors).
    `mlm`: positions decoded by the masked-LM head (adds emd.* and mlm.* tensors).
    `flags`: ablation switches passed through, e.g. ["--terms", "c2c,c2p,p2c,p2p"].

    Returns name -> array with the golden names: `rel_pos`, `c2p_row`, `p2c_row` [N, N] (int64),
    `rel_embeddings` [2k, H], `layer.{l}.c2c|c2p|p2c|p2p|attn_logits|attn_probs` [h, N, N],
    `layer.{l}.output` [N, H], ... (float64). Raises RuntimeError if the CLI fails.
    """
    global _dump_count
    _dump_count += 1
    out = _TMP / f"dump{_dump_count}.safetensors"
    args = ["dump", "--model", model, "--out", out]
    if ids is not None:
        args += ["--ids", ",".join(map(str, ids))]
    if inputs is not None:
        args += ["--inputs", inputs]
    if mlm is not None:
        args += ["--mlm", ",".join(map(str, mlm))]
    run_cli(*args, *flags)
    tensors, _ = read_safetensors(out)
    out.unlink()
    return tensors


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

def assert_close(name: str, ours: np.ndarray, core: np.ndarray, tol: float = 1e-10) -> float:
    """Assert max |ours - core| <= tol (absolute, float64) and print the comparison.

    Prints the name, the shape, the max abs error and where it occurs. On failure the
    AssertionError names the worst index with both values. Shapes must be equal; a NaN in either
    array fails. Returns the max abs error.
    """
    ours, core = np.asarray(ours), np.asarray(core)
    if ours.shape != core.shape:
        raise AssertionError(f"{name}: shape {ours.shape} (ours) vs {core.shape} (core)")
    if ours.size == 0:
        raise AssertionError(f"{name}: empty array, nothing compared")
    err = np.abs(ours.astype(np.float64) - core.astype(np.float64))
    if np.isnan(err).any():
        raise AssertionError(f"{name}: NaN at {np.argwhere(np.isnan(err))[0].tolist()}")
    worst = np.unravel_index(np.argmax(err), err.shape)
    max_err = float(err[worst])
    where = list(map(int, worst))
    if max_err > tol:
        raise AssertionError(f"{name}: max |ours - core| = {max_err:.3e} > {tol:.0e} at {where}: "
                             f"ours {ours[worst]!r}, core {core[worst]!r}")
    print(f"{name:<34} {str(list(core.shape)):<14} max |ours - core| = {max_err:.1e}  (at {where})")
    return max_err


def assert_equal(name: str, ours: np.ndarray, core: np.ndarray) -> None:
    """Assert two integer arrays (indices, rows) are identical; print how many entries agree.

    On failure the AssertionError gives the first differing index and both values.
    """
    ours, core = np.asarray(ours), np.asarray(core)
    if ours.shape != core.shape:
        raise AssertionError(f"{name}: shape {ours.shape} (ours) vs {core.shape} (core)")
    diff = np.argwhere(ours != core)
    if len(diff):
        at = tuple(diff[0])
        raise AssertionError(f"{name}: {len(diff)} entries differ, first at {list(map(int, at))}: "
                             f"ours {ours[at]}, core {core[at]}")
    print(f"{name:<34} {str(list(core.shape)):<14} all {ours.size} entries equal")


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def setup_figures(dpi: int = 64) -> None:
    """Small inline PNG figures (low dpi keeps a committed notebook under a few hundred KB)."""
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": dpi, "savefig.dpi": dpi, "font.size": 9,
                         "axes.titlesize": 10, "image.interpolation": "nearest"})


def token_axes(ax, tokens: list[str], every: int = 1) -> None:
    """Label both axes of a [N, N] map with tokens (rows = query i, columns = key j)."""
    ticks = list(range(0, len(tokens), every))
    labels = [tokens[t].strip() or "▁" for t in ticks]
    ax.set_xticks(ticks, labels, rotation=90, fontsize=7)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
