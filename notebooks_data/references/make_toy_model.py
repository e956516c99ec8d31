#!/usr/bin/python3
"""Make deberta-toy, a DeBERTa small enough to check with a pencil (issue 42, item 7).

    /usr/bin/python3 notebooks_data/references/make_toy_model.py [--out DIR] [--doc docs/lesson.md]

Writes DIR (default notebooks_data/models/deberta-toy): config.json (Hugging Face DebertaV2 layout),
model.safetensors (F64, Hugging Face state-dict names of the base model, no task head) and
vocab.txt (8 pieces). Every weight is written literally below with one decimal; nothing is random,
so two runs give the same bytes.

The model: H = d = 4, one head, one layer, k = max_relative_positions = 2 without log buckets
(position_buckets -1, so δ(i, j) = clamp(i − j + k, 0, 2k − 1), paper eq. 3), c2p + p2c with
share_att_key (Q_r = R W_q, K_r = R W_k, eqs. 4-5 of the paper), no relative-table LayerNorm, zero
q/k/v biases, layer_norm_eps 1e-12 (so each embedding LayerNorm output is its ±1 pattern to 11
digits). The four word embeddings each have a mean μ and a spread σ that LayerNorm removes by hand:
x = μ + σ·(±1, ±1, ±1, ±1).

With --doc FILE, the script also computes the worked sheet of the one head on [CLS] cat sat [SEP]
(ids 1 6 7 2) in numpy, from the equations (the released code's p2c row δ(i, j), see
docs/paper-vs-code.md) and replaces the text between `<!-- toy-sheet:begin -->` and
`<!-- toy-sheet:end -->` in FILE with it. tests/toy_model_test.py checks every number of that sheet
against `deberta dump`.

numpy only (Debian's python3-numpy); the safetensors file is written by hand: 8-byte
little-endian header length, JSON header padded with spaces to a multiple of 8, then the data.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
REPO = os.path.dirname(HERE)

VOCAB = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "the", "cat", "sat"]
IDS = [1, 6, 7, 2]  # [CLS] cat sat [SEP]
K = 2               # max_relative_positions
D = 4               # hidden size = head size (one head)
EPS = 1e-12

# Word embeddings [V, H]. Each used row is μ + σ·(a ±1 pattern); LayerNorm leaves the pattern.
WORD = [
    [0.0, 0.0, 0.0, 0.0],      # [PAD]
    [0.5, 0.5, -0.5, -0.5],    # [CLS]  μ 0,   σ 0.5 -> ( 1,  1, -1, -1)
    [0.0, 2.0, 2.0, 0.0],      # [SEP]  μ 1,   σ 1   -> (-1,  1,  1, -1)
    [0.1, -0.1, 0.1, -0.1],    # [UNK]
    [-0.1, 0.1, -0.1, 0.1],    # [MASK]
    [0.2, 0.2, -0.2, -0.2],    # the
    [1.2, 0.2, 1.2, 0.2],      # cat    μ 0.7, σ 0.5 -> ( 1, -1,  1, -1)
    [0.3, 0.1, 0.1, 0.3],      # sat    μ 0.2, σ 0.1 -> ( 1, -1, -1,  1)
]
LN_GAMMA = [1.0, 1.0, 1.0, 1.0]
LN_BETA = [0.5, 0.0, 0.0, 0.0]

# Projections in the paper's orientation, [in, out]: Q_c = H W_q. (nn.Linear stores the transpose.)
W_Q = [[0.5, 0.0, 0.0, 0.0],
       [0.0, 1.0, 0.0, 0.5],
       [0.0, 0.0, 1.0, 0.0],
       [-0.5, 0.0, 0.0, 1.0]]
W_K = [[1.0, 0.0, 0.5, 0.0],
       [0.0, 0.5, 0.0, 0.0],
       [0.0, 0.0, 1.0, 0.0],
       [0.0, -0.5, 0.0, 1.0]]
W_V = [[0.5, 0.0, 0.0, 0.0],
       [0.0, 1.0, 0.0, 0.0],
       [0.0, 0.0, 0.5, 0.5],
       [0.0, 0.0, -0.5, 0.5]]
# Relative-position table R [2k, H]: row r is the embedding of δ = r (i − j = r − k, clamped).
REL = [[0.5, 0.0, 0.0, -0.5],
       [0.0, 0.5, 0.0, 0.0],
       [0.0, 0.0, 0.5, 0.0],
       [0.5, 0.0, 0.0, 0.5]]


def pattern(n_out, n_in, a, b):
    """A fixed [n_out, n_in] matrix of one-decimal values in -0.2 ... 0.2 (the rest of the layer)."""
    return [[((a * i + b * j) % 5 - 2) / 10.0 for j in range(n_in)] for i in range(n_out)]


def config():
    return {
        "model_type": "deberta-v2",
        "architectures": ["DebertaV2Model"],
        "vocab_size": len(VOCAB),
        "hidden_size": D,
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "intermediate_size": 4,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": 8,
        "type_vocab_size": 0,
        "initializer_range": 0.02,
        "layer_norm_eps": EPS,
        "relative_attention": True,
        "max_relative_positions": K,
        "position_buckets": -1,
        "pos_att_type": ["c2p", "p2c"],
        "position_biased_input": False,
        "share_att_key": True,
        "norm_rel_ebd": "none",
        "pad_token_id": 0,
        "torch_dtype": "float64",
    }


def weights():
    """The state dict: Hugging Face names -> float64 arrays (nn.Linear weights as [out, in])."""
    z = [0.0] * D
    p = "encoder.layer.0."
    w = {
        "embeddings.word_embeddings.weight": WORD,
        "embeddings.LayerNorm.weight": LN_GAMMA,
        "embeddings.LayerNorm.bias": LN_BETA,
        p + "attention.self.query_proj.weight": np.array(W_Q).T,
        p + "attention.self.query_proj.bias": z,
        p + "attention.self.key_proj.weight": np.array(W_K).T,
        p + "attention.self.key_proj.bias": z,
        p + "attention.self.value_proj.weight": np.array(W_V).T,
        p + "attention.self.value_proj.bias": z,
        p + "attention.output.dense.weight": pattern(D, D, 1, 2),
        p + "attention.output.dense.bias": z,
        p + "attention.output.LayerNorm.weight": [1.0] * D,
        p + "attention.output.LayerNorm.bias": z,
        p + "intermediate.dense.weight": pattern(4, D, 2, 1),
        p + "intermediate.dense.bias": [0.0] * 4,
        p + "output.dense.weight": pattern(D, 4, 3, 1),
        p + "output.dense.bias": z,
        p + "output.LayerNorm.weight": [1.0] * D,
        p + "output.LayerNorm.bias": z,
        "encoder.rel_embeddings.weight": REL,
    }
    return {name: np.ascontiguousarray(np.array(v, dtype="<f8")) for name, v in w.items()}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = tensors[name].tobytes()
        header[name] = {"dtype": "F64", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "source": "notebooks_data/references/make_toy_model.py"}
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def write_model(out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config(), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(out, "model.safetensors"), weights())
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(piece + "\n" for piece in VOCAB))


# ---------------------------------------------------------------------------------------------
# The worked sheet, computed from the equations in numpy.

def sheet_numbers():
    """Every number of the sheet, by name: arrays in float64, computed from the equations."""
    x = np.array(WORD)[IDS]                                           # [N, H] word embeddings
    mu = x.mean(axis=1, keepdims=True)
    sigma = np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + EPS)
    H = (x - mu) / sigma * np.array(LN_GAMMA) + np.array(LN_BETA)     # embedding LayerNorm
    n = len(IDS)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    delta = np.clip(i - j + K, 0, 2 * K - 1)                          # eq. 3, δ(i, j) = row read at (i, j)
    R = np.array(REL)
    Wq, Wk, Wv = np.array(W_Q), np.array(W_K), np.array(W_V)
    Qc, Kc, Vc = H @ Wq, H @ Wk, H @ Wv
    Qr, Kr = R @ Wq, R @ Wk                                           # share_att_key
    c2c = Qc @ Kc.T
    c2p = np.einsum("ie,ije->ij", Qc, Kr[delta])                      # Q_c[i] · K_r[δ(i, j)]
    p2c = np.einsum("je,ije->ij", Kc, Qr[delta])                      # K_c[j] · Q_r[δ(i, j)] (released code)
    At = c2c + c2p + p2c                                              # Ã, eq. 4
    scale = 1.0 / np.sqrt(3 * D)
    score = At * scale
    e = np.exp(score - score.max(axis=1, keepdims=True))
    A = e / e.sum(axis=1, keepdims=True)
    return {"x": x, "mu": mu[:, 0], "sigma": np.sqrt(((x - mu) ** 2).mean(axis=1)), "H": H, "delta": delta, "R": R,
            "W_q": Wq, "W_k": Wk, "W_v": Wv, "Q_c": Qc, "K_c": Kc, "V_c": Vc, "Q_r": Qr, "K_r": Kr,
            "c2c": c2c, "c2p": c2p, "p2c": p2c, "A_tilde": At, "scale": scale, "score": score, "A": A,
            "context": A @ Vc}


# name -> (decimals, row labels, column labels). Each table of the sheet is introduced by
# `<!-- toy: name decimals -->`; tests/toy_model_test.py reads the same marker.
TOKENS = ["[CLS]", "cat", "sat", "[SEP]"]
KEYS = ["j=%d %s" % (j, t) for j, t in enumerate(TOKENS)]
QUERIES = ["i=%d %s" % (i, t) for i, t in enumerate(TOKENS)]
TOKS = ["%d %s" % (i, t) for i, t in enumerate(TOKENS)]
FEATS = ["1", "2", "3", "4"]
ROWS = ["r=0 (i−j ≤ −2)", "r=1 (i−j = −1)", "r=2 (i−j = 0)", "r=3 (i−j ≥ 1)"]


def fmt(v, decimals):
    s = "%.*f" % (decimals, v)
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s.replace("-", "−")


def table(name, m, decimals, rows, cols, corner=""):
    m = np.atleast_2d(m)
    out = ["<!-- toy: %s %d -->" % (name, decimals), "",
           "| " + corner + " | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for label, row in zip(rows, m):
        out.append("| " + label + " | " + " | ".join(fmt(v, decimals) for v in row) + " |")
    return "\n".join(out) + "\n"


def exact(name, m, decimals):
    """The sheet prints these tables exactly: refuse weights that would make them rounded."""
    m = np.asarray(m, dtype=float)
    if np.abs(np.round(m, decimals) - m).max() > 1e-9:
        raise SystemExit("make_toy_model.py: %s is not exact at %d decimals; choose other weights" % (name, decimals))


def sheet_markdown(s):
    for name, decimals in (("x", 1), ("mu", 1), ("sigma", 1), ("H", 1), ("R", 1), ("W_q", 1), ("W_k", 1), ("W_v", 1),
                           ("Q_c", 2), ("K_c", 2), ("V_c", 2), ("Q_r", 2), ("K_r", 2),
                           ("c2c", 3), ("c2p", 3), ("p2c", 3), ("A_tilde", 3)):
        exact(name, s[name], decimals)
    t = {}
    t["x"] = table("x", s["x"], 1, TOKS, FEATS, "x")
    t["musigma"] = table("mu_sigma", np.stack([s["mu"], s["sigma"]], axis=1), 1, TOKS, ["μ", "σ"], "token")
    t["H"] = table("H", s["H"], 1, TOKS, FEATS, "H")
    t["delta"] = table("delta", s["delta"], 0, QUERIES, KEYS, "δ(i, j)")
    t["R"] = table("R", s["R"], 1, ROWS, FEATS, "R")
    t["W"] = (table("W_q", s["W_q"], 1, FEATS, FEATS, "W_q") + "\n" + table("W_k", s["W_k"], 1, FEATS, FEATS, "W_k") +
              "\n" + table("W_v", s["W_v"], 1, FEATS, FEATS, "W_v"))
    t["QKV"] = (table("Q_c", s["Q_c"], 2, TOKS, FEATS, "Q_c") + "\n" + table("K_c", s["K_c"], 2, TOKS, FEATS, "K_c") +
                "\n" + table("V_c", s["V_c"], 2, TOKS, FEATS, "V_c"))
    t["QrKr"] = table("Q_r", s["Q_r"], 2, ROWS, FEATS, "Q_r") + "\n" + table("K_r", s["K_r"], 2, ROWS, FEATS, "K_r")
    t["terms"] = (table("c2c", s["c2c"], 3, QUERIES, KEYS, "c2c") + "\n" + table("c2p", s["c2p"], 3, QUERIES, KEYS, "c2p") +
                  "\n" + table("p2c", s["p2c"], 3, QUERIES, KEYS, "p2c"))
    t["At"] = table("A_tilde", s["A_tilde"], 3, QUERIES, KEYS, "Ã")
    t["scale"] = table("scale", [[s["scale"]]], 6, ["1/√(3·4)"], ["value"], "scale")
    t["score"] = table("score", s["score"], 4, QUERIES, KEYS, "Ã/√12")
    t["A"] = table("A", s["A"], 4, QUERIES, KEYS, "weights")
    t["ctx"] = table("context", s["context"], 4, QUERIES, FEATS, "H_o")
    return SHEET.format(**t)


SHEET = """\
## A model you can check with a pencil

`notebooks_data/models/deberta-toy` is a DeBERTa (v2/v3 layout) small enough to work through by
hand: one layer, one head, H = d = 4, k = 2 without log buckets, c2p + p2c with shared keys,
8 pieces, every weight with one decimal. `notebooks_data/references/make_toy_model.py` writes it (and this
sheet); it has no masked-LM head, so it runs with `deberta dump` and the viewer, not `predict`
(which says "the model has no output head"):

    deberta dump --model notebooks_data/models/deberta-toy --ids 1,6,7,2 --out toy.safetensors
    deberta-viewer --model notebooks_data/models/deberta-toy --ids 1,6,7,2 --panel lesson

The Lesson tab runs on it and its questions can be answered from this sheet: step 2 asks Ã at
i = 2, j = 2, which is 2.125 − 0.500 − 0.125 = 1.500 below (the EMD step has nothing to show: the
model has no decoder). One cell's working, as the CLI prints it:
`deberta explain --model notebooks_data/models/deberta-toy --ids 1,6,7,2 --query 1 --key 0`
(c2c 2.125, c2p 0.375, p2c −0.5, Ã = 2, weight 0.155934).

(`deberta tokenize --model notebooks_data/models/deberta-toy --text "cat sat"` gives these ids
through the model's `vocab.txt`.) The input is
[CLS] cat sat [SEP], ids 1 6 7 2, positions i = 0 … 3. Below is every number of the head, as
`deberta dump` computes it in float64, rounded to the digits shown; `tests/toy_model_test.py`
checks each printed digit against the dump. Up to Ã every number is exact as printed (sums of
products of one-decimal numbers, hence 1, 2 and 3 decimals); the scale, the score, the weights and
the context are rounded to 6 and 4 decimals.

**1. Embeddings and LayerNorm.** Each word embedding x is μ + σ·(±1, ±1, ±1, ±1), so LayerNorm
((x − μ)/σ, ε = 1e-12) gives back the ±1 pattern; its γ is 1 and its β is (0.5, 0, 0, 0), so
H = pattern + β. There are no absolute positions (position_biased_input false).

{x}
{musigma}
{H}
**2. Relative distances (eq. 3).** δ(i, j) = 0 if i − j ≤ −k, 2k − 1 = 3 if i − j ≥ k, else
i − j + k. Both c2p and p2c read row δ(i, j) of R at (i, j) (the released code; the paper's p2c
reads δ(j, i), docs/paper-vs-code.md). R, the relative-position table (no LayerNorm on it):

{delta}
{R}
**3. Projections.** Written as the paper's [in, out] matrices (the checkpoint's nn.Linear weights
are their transposes); the q, k, v biases are 0. Rows of Q_c, K_c, V_c are tokens: the query i
uses Q_c[i], the key j uses K_c[j] and V_c[j]. Q_c = H W_q, K_c = H W_k, V_c = H W_v; with
shared keys the position projections are the same matrices: Q_r = R W_q, K_r = R W_k (rows r of
R).

{W}
{QKV}
{QrKr}
**4. The three terms (eq. 4), unscaled.** c2c(i, j) = Q_c[i] · K_c[j];
c2p(i, j) = Q_c[i] · K_r[δ(i, j)]; p2c(i, j) = K_c[j] · Q_r[δ(i, j)]. Rows are queries i,
columns keys j.

{terms}
**5. Ã, the scale, the weights.** Ã = c2c + c2p + p2c. The score is Ã/√(3d) with d = 4
(eq. 4's scale; three terms, so f = 3), and the weights are the softmax of each row of the score.

{At}
{scale}
{score}
{A}
**6. The context (eq. 4).** H_o = softmax(Ã/√(3d)) V_c, row i = Σ_j A(i, j) V_c[j] (before the output
projection, its LayerNorm and the feed-forward block, which the sheet leaves out).

{ctx}"""

BEGIN, END = "<!-- toy-sheet:begin -->", "<!-- toy-sheet:end -->"


def write_doc(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    sheet = BEGIN + "\n" + sheet_markdown(sheet_numbers()) + END
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + sheet + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + sheet + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-toy"), help="model folder to write")
    ap.add_argument("--doc", help="markdown file whose toy-sheet section is (re)written")
    args = ap.parse_args()
    write_model(args.out)
    print("wrote %s" % args.out)
    if args.doc:
        write_doc(args.doc)
        print("wrote the sheet into %s" % args.doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
