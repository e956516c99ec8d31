#!/usr/bin/python3
"""The pencil model's worked sheet (docs/lesson.md) is what `deberta dump` computes (issue 42, item 7).

    toy_model_test.py DEBERTA_CLI REPO_DIR

1. notebooks_data/references/make_toy_model.py, run again into a temporary folder, writes the committed
   notebooks_data/models/deberta-toy byte for byte, and the sheet between the toy-sheet markers of
   docs/lesson.md unchanged (the doc is the script's output).
2. `deberta dump --model notebooks_data/models/deberta-toy --ids 1,6,7,2` is run, and every number
   of every table of the sheet (each introduced by `<!-- toy: NAME DECIMALS -->`) must equal the
   dump's value printed with the table's decimals, character for character. The tensors the dump
   does not write (Q_c, K_c, V_c, Q_r, K_r, the context) are computed from the dump's H and R and the
   checkpoint's projections; they must first give back the dump's c2c, c2p, p2c and logits within
   1e-12, so they are the numbers the C++ core used.

numpy only; the safetensors files are read by hand.
"""
import filecmp
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

IDS = [1, 6, 7, 2]
BEGIN, END = "<!-- toy-sheet:begin -->", "<!-- toy-sheet:end -->"


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F64": "<f8", "I64": "<i8"}[v["dtype"]]
        a, b = v["data_offsets"]
        out[name] = np.frombuffer(blob[8 + n + a:8 + n + b], dtype=dtype).reshape(v["shape"])
    return out


def parse_sheet(text):
    """{name: (decimals, [[cell strings]])} for every `<!-- toy: NAME DECIMALS -->` table of the sheet."""
    if BEGIN not in text or END not in text:
        raise SystemExit("FAIL: docs/lesson.md has no toy sheet (%s ... %s)" % (BEGIN, END))
    lines = text[text.index(BEGIN):text.index(END)].split("\n")
    tables = {}
    for k, line in enumerate(lines):
        if not line.startswith("<!-- toy: "):
            continue
        name, decimals = line[len("<!-- toy: "):].replace("-->", "").split()
        rows = []
        m = k + 1
        while m < len(lines) and not lines[m].startswith("|"):
            m += 1
        m += 2  # header and |---| lines
        while m < len(lines) and lines[m].startswith("|"):
            rows.append([c.strip() for c in lines[m].strip().strip("|").split("|")][1:])
            m += 1
        if name in tables:
            raise SystemExit("FAIL: the sheet has two tables named %s" % name)
        tables[name] = (int(decimals), rows)
    return tables


def fmt(v, decimals):
    s = "%.*f" % (decimals, v)
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s


def close(name, ours, ref, failures, tol=1e-12):
    err = np.abs(np.asarray(ours) - np.asarray(ref))
    bound = tol * np.maximum(1.0, np.abs(np.asarray(ref)))
    if (err > bound).any():
        idx = np.unravel_index(np.argmax(err - bound), err.shape)
        failures.append("%s: recomputed from the dump's inputs at %s: %.17g, dump %.17g (error %.3g)" %
                        (name, idx, np.asarray(ours)[idx], np.asarray(ref)[idx], err[idx]))


def main():
    cli, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    model_dir = os.path.join(repo, "notebooks_data", "models", "deberta-toy")
    lesson = os.path.join(repo, "docs", "lesson.md")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        # 1. The committed model and sheet are the generator's output.
        fresh = os.path.join(tmp, "deberta-toy")
        doc_copy = os.path.join(tmp, "lesson.md")
        shutil.copy(lesson, doc_copy)
        subprocess.run(["/usr/bin/python3", os.path.join(repo, "notebooks_data", "references", "make_toy_model.py"),
                        "--out", fresh, "--doc", doc_copy], check=True, stdout=subprocess.DEVNULL)
        for f in ("config.json", "model.safetensors", "vocab.txt"):
            if not filecmp.cmp(os.path.join(fresh, f), os.path.join(model_dir, f), shallow=False):
                failures.append("%s differs from what make_toy_model.py writes" % f)
        with open(lesson, encoding="utf-8") as f:
            text = f.read()
        with open(doc_copy, encoding="utf-8") as f:
            if f.read() != text:
                failures.append("docs/lesson.md's toy sheet differs from what make_toy_model.py --doc writes")

        # 2. The dump.
        out = os.path.join(tmp, "dump.safetensors")
        run = subprocess.run([cli, "dump", "--model", model_dir, "--ids", ",".join(map(str, IDS)), "--out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            print("FAIL: deberta dump exited %d: %s" % (run.returncode, run.stderr.strip()))
            return 1
        if run.stderr.strip():
            failures.append("deberta dump printed on stderr: %s" % run.stderr.strip())
        d = read_safetensors(out)
    w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)

    p = "encoder.layer.0.attention.self."
    ids = d["input_ids"][0]
    if list(ids) != IDS:
        failures.append("dump input_ids %s, expected %s" % (list(ids), IDS))
    x = w["embeddings.word_embeddings.weight"][ids]
    H = d["embedding_output"]
    R = d["rel_embeddings"]
    lin = {c: (w[p + c + "_proj.weight"], w[p + c + "_proj.bias"]) for c in ("query", "key", "value")}
    Qc, Kc, Vc = (H @ lin[c][0].T + lin[c][1] for c in ("query", "key", "value"))
    Qr, Kr = (R @ lin[c][0].T + lin[c][1] for c in ("query", "key"))  # share_att_key
    d_head = cfg["hidden_size"] // cfg["num_attention_heads"]
    scale = 1.0 / np.sqrt(d_head * (1 + len(cfg["pos_att_type"])))
    c2p_row, p2c_row = d["c2p_row"], d["p2c_row"]
    if not (c2p_row == p2c_row).all():
        failures.append("p2c_row differs from c2p_row: the sheet says both read δ(i, j)")
    n = len(IDS)
    c2c = Qc @ Kc.T
    c2p = np.array([[Qc[i] @ Kr[c2p_row[i, j]] for j in range(n)] for i in range(n)])
    p2c = np.array([[Kc[j] @ Qr[p2c_row[i, j]] for j in range(n)] for i in range(n)])
    # The recomputed terms are the dump's: Q_c, K_c, K_r, Q_r and the scale are the core's.
    close("c2c", c2c * scale, d["layer.0.c2c"][0], failures)
    close("c2p", c2p * scale, d["layer.0.c2p"][0], failures)
    close("p2c", p2c * scale, d["layer.0.p2c"][0], failures)
    close("attn_logits", (c2c + c2p + p2c) * scale, d["layer.0.attn_logits"][0], failures)
    probs = d["layer.0.attn_probs"][0]

    expected = {
        "x": x,
        "mu_sigma": np.stack([x.mean(axis=1), x.std(axis=1)], axis=1),
        "H": H,
        "delta": c2p_row,
        "R": R,
        "W_q": lin["query"][0].T, "W_k": lin["key"][0].T, "W_v": lin["value"][0].T,
        "Q_c": Qc, "K_c": Kc, "V_c": Vc, "Q_r": Qr, "K_r": Kr,
        "c2c": d["layer.0.c2c"][0] / scale,
        "c2p": d["layer.0.c2p"][0] / scale,
        "p2c": d["layer.0.p2c"][0] / scale,
        "A_tilde": d["layer.0.attn_logits"][0] / scale,
        "scale": np.array([[scale]]),
        "score": d["layer.0.attn_logits"][0],
        "A": probs,
        "context": probs @ Vc,
    }
    tables = parse_sheet(text)
    missing = sorted(set(expected) - set(tables))
    extra = sorted(set(tables) - set(expected))
    if missing or extra:
        failures.append("sheet tables: missing %s, unknown %s" % (missing, extra))
    checked = 0
    for name in sorted(set(expected) & set(tables)):
        decimals, rows = tables[name]
        ref = np.atleast_2d(expected[name])
        if (len(rows), len(rows[0]) if rows else 0) != ref.shape:
            failures.append("%s: the sheet has %d x %d numbers, the dump %s" %
                            (name, len(rows), len(rows[0]) if rows else 0, ref.shape))
            continue
        for i, row in enumerate(rows):
            for j, cell in enumerate(row):
                want = fmt(ref[i, j], decimals)
                if cell.replace("−", "-") != want:
                    failures.append("%s[%d, %d]: the sheet prints %s, the dump gives %s (%.17g)" %
                                    (name, i, j, cell, want, ref[i, j]))
                checked += 1
    for f in failures:
        print("FAIL " + f)
    print("%d numbers of %d tables checked against the dump; %d failures" % (checked, len(tables), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
