#!/usr/bin/env python3
"""Model folders for the browser test's checkpoint checks (issue 41, items 5 and 6), written into a
folder the caller names (a temporary one: never committed).

    /usr/bin/python3 notebooks_data/references/make_web_test_models.py microsoft OUT_DIR
        config.json + pytorch_model.bin + spm.model (+ tokenizer_config.json, special_tokens_map.json),
        no tokenizer.json: the layout a microsoft/deberta-v3-* checkpoint comes as. The weights are
        deberta-tiny-512's (a trained model, so its predictions mean something), saved with
        torch.save under the same names, float32 as in its model.safetensors.
    /usr/bin/python3 notebooks_data/references/make_web_test_models.py base OUT_DIR [--dtype fp16|fp32] [--bin]
        a deberta-v3-base-shaped model with random weights: hidden 768, 12 layers, 12 heads,
        intermediate 3072, vocab 128100, position_buckets 256, relative attention (c2p + p2c),
        the masked-LM head: 184.6 M parameters, as model.safetensors (fp16 by default: 369 MB;
        fp32: 738 MB) or with --bin as pytorch_model.bin (torch.save, in the same dtype). Its tokenizer is
        deberta-tiny-512's spm.model widened to all 128100 ids (copy_tokenizer). Weights ~ N(0, 0.02), layer
        norms 1 and 0, seeded: the same bytes on every run.
    /usr/bin/python3 notebooks_data/references/make_web_test_models.py large OUT_DIR [--dtype fp16|fp32] [--bin]
        the same with deberta-v3-large's shape: hidden 1024, 24 layers, 16 heads, intermediate 4096
        (435.2 M parameters; fp16: 870 MB). The memory table of docs/performance.md and the page's
        large-model check (issue 60).
    /usr/bin/python3 notebooks_data/references/make_web_test_models.py mdeberta OUT_DIR [--dtype fp16|fp32] [--bin]
        the same with mdeberta-v3-base's shape: deberta-v3-base with vocab_size 251000 (as its
        config.json) and a 250,002-piece spm.model (as its tokenizer): 279.1 M parameters, fp16 558 MB.
        The 998 ids past the pieces are the checkpoint's unused rows: their MLM bias is -100 here, so
        random weights never predict an id without a piece.

Needs Debian's python3-numpy, and python3-torch for pytorch_model.bin.
"""
import json
import os
import shutil
import struct
import sys
from collections import OrderedDict

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
TINY = os.path.join(HERE, "models", "deberta-tiny-512")
TOKENIZER_FILES = ("spm.model", "tokenizer_config.json", "special_tokens_map.json")

ST_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = OrderedDict()
    for name in sorted(k for k in header if k != "__metadata__"):
        e = header[name]
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=ST_DTYPES[e["dtype"]]).reshape(e["shape"]).copy()
    return out


def copy_tokenizer(out, pieces=None):
    """deberta-tiny-512's tokenizer files into `out`. When `out`'s config.json (written first) has a
    larger vocab_size than the 8,000 pieces of the tiny model's spm.model, the copy is widened with
    pieces "▁x08000" … up to it (widen_spm), so every id random weights can predict has a piece
    (issue 55: with the 8,000 pieces alone, the base model's predictions showed as "<id N>"); or to
    `pieces` when given (mdeberta's tokenizer has fewer pieces than its config's vocab_size)."""
    for name in TOKENIZER_FILES:
        shutil.copy(os.path.join(TINY, name), os.path.join(out, name))
    config = os.path.join(out, "config.json")
    if os.path.exists(config):
        with open(config) as f:
            widen_spm(os.path.join(out, "spm.model"), pieces or json.load(f)["vocab_size"])


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def spm_piece_count(data):
    """The pieces (ModelProto field 1, length-delimited) in a serialized sentencepiece model."""
    count, at = 0, 0
    while at < len(data):
        key, at = read_varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, at = read_varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == 2:
            n, at = read_varint(data, at)
            at += n
            count += field == 1
        else:
            raise ValueError("spm.model: wire type %d at byte %d" % (wire, at))
    return count


def read_varint(data, at):
    n, shift = 0, 0
    while True:
        b = data[at]
        at += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, at


def widen_spm(path, vocab_size):
    """Appends NORMAL pieces "▁xNNNNN" (score −100: never chosen for ordinary text) to the spm.model
    at `path` until it has `vocab_size` pieces (none when it has as many already): a ModelProto's repeated `pieces` field (1) may be continued anywhere in the
    message, so the tiny model's pieces keep their ids 0 … 7999 and the new ones take the rest."""
    with open(path, "rb") as f:
        data = f.read()
    have = spm_piece_count(data)
    extra = bytearray()
    for i in range(have, vocab_size):
        piece = ("\u2581x%05d" % i).encode()
        body = b"\x0a" + varint(len(piece)) + piece + b"\x15" + struct.pack("<f", -100.0)
        extra += b"\x0a" + varint(len(body)) + body
    with open(path, "wb") as f:
        f.write(data + bytes(extra))
    if spm_piece_count(data + bytes(extra)) != vocab_size:
        raise RuntimeError("%s: %d pieces after widening, want %d" % (path, spm_piece_count(data + bytes(extra)), vocab_size))


def save_bin(path, arrays):
    import torch  # Debian's python3-torch
    torch.save(OrderedDict((k, torch.from_numpy(np.ascontiguousarray(v))) for k, v in arrays.items()), path)


def make_microsoft(out):
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(TINY, "config.json"), os.path.join(out, "config.json"))
    save_bin(os.path.join(out, "pytorch_model.bin"), read_safetensors(os.path.join(TINY, "model.safetensors")))
    copy_tokenizer(out)


BASE_CONFIG = {
    "model_type": "deberta-v2", "architectures": ["DebertaV2ForMaskedLM"], "vocab_size": 128100,
    "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 0, "initializer_range": 0.02, "layer_norm_eps": 1e-7,
    "relative_attention": True, "max_relative_positions": -1, "position_buckets": 256,
    "pos_att_type": ["p2c", "c2p"], "position_biased_input": False, "share_att_key": True,
    "norm_rel_ebd": "layer_norm", "pad_token_id": 0,
}


LARGE_CONFIG = dict(BASE_CONFIG, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
MDEBERTA_CONFIG = dict(BASE_CONFIG, vocab_size=251000)
MDEBERTA_PIECES = 250002


def base_shapes(c):
    """The tensors of a deberta-v3-base masked LM, in the order they are written."""
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    shapes = [("embeddings.word_embeddings.weight", (v, h)), ("embeddings.LayerNorm.weight", (h,)),
              ("embeddings.LayerNorm.bias", (h,))]
    for layer in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        for proj in ("query_proj", "key_proj", "value_proj"):
            shapes += [(p + f"attention.self.{proj}.weight", (h, h)), (p + f"attention.self.{proj}.bias", (h,))]
        shapes += [(p + "attention.output.dense.weight", (h, h)), (p + "attention.output.dense.bias", (h,)),
                   (p + "attention.output.LayerNorm.weight", (h,)), (p + "attention.output.LayerNorm.bias", (h,)),
                   (p + "intermediate.dense.weight", (i, h)), (p + "intermediate.dense.bias", (i,)),
                   (p + "output.dense.weight", (h, i)), (p + "output.dense.bias", (h,)),
                   (p + "output.LayerNorm.weight", (h,)), (p + "output.LayerNorm.bias", (h,))]
    shapes += [("encoder.rel_embeddings.weight", (2 * c["position_buckets"], h)),
               ("encoder.LayerNorm.weight", (h,)), ("encoder.LayerNorm.bias", (h,)),
               ("lm_predictions.lm_head.dense.weight", (h, h)), ("lm_predictions.lm_head.dense.bias", (h,)),
               ("lm_predictions.lm_head.LayerNorm.weight", (h,)), ("lm_predictions.lm_head.LayerNorm.bias", (h,)),
               ("lm_predictions.lm_head.bias", (v,))]
    return shapes


def base_values(name, shape, rng, dtype, pieces=None):
    if "LayerNorm.weight" in name:
        return np.ones(shape, dtype=dtype)
    if "LayerNorm.bias" in name:
        return np.zeros(shape, dtype=dtype)
    values = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)
    if pieces is not None and name == "lm_predictions.lm_head.bias":
        values[pieces:] = -100  # ids without a piece (mdeberta's unused rows): never predicted
    return values


def make_base(out, dtype_name="fp16", as_bin=False, config=BASE_CONFIG, pieces=None):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    copy_tokenizer(out, pieces)
    rng = np.random.default_rng(41)
    dtype = np.float32 if dtype_name == "fp32" else np.float16
    shapes = base_shapes(config)
    if as_bin:
        save_bin(os.path.join(out, "pytorch_model.bin"),
                 OrderedDict((n, base_values(n, s, rng, dtype, pieces)) for n, s in shapes))
    else:
        # The header first, then each tensor as it is made (never all of them in memory at once).
        code = {np.float16: "F16", np.float32: "F32"}[dtype]
        size = np.dtype(dtype).itemsize
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        for name, shape in shapes:
            n = int(np.prod(shape)) * size
            header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + n]}
            offset += n
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(os.path.join(out, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for name, shape in shapes:
                f.write(base_values(name, shape, rng, dtype, pieces).tobytes())
    params = sum(int(np.prod(s)) for _, s in shapes)
    print(f"{out}: {params} parameters ({params / 1e6:.1f} M)")


def main(argv):
    if len(argv) < 3 or argv[1] not in ("microsoft", "base", "large", "mdeberta"):
        sys.exit(__doc__)
    if argv[1] == "microsoft":
        make_microsoft(argv[2])
    else:
        dtype = argv[argv.index("--dtype") + 1] if "--dtype" in argv else "fp16"
        if dtype not in ("fp16", "fp32"):
            sys.exit("make_web_test_models.py: --dtype is fp16 or fp32, not " + dtype)
        config = {"base": BASE_CONFIG, "large": LARGE_CONFIG, "mdeberta": MDEBERTA_CONFIG}[argv[1]]
        make_base(argv[2], dtype, "--bin" in argv, config, MDEBERTA_PIECES if argv[1] == "mdeberta" else None)


if __name__ == "__main__":
    main(sys.argv)
