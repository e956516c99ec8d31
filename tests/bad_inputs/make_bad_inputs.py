#!/usr/bin/env python3
"""Writes the malformed-input catalogue: tests/bad_inputs/cases/<name>/ and manifest.json.

Each case is a broken model directory, weights file, inputs file or text, plus the `deberta`
command that must refuse it: exit code 1 and one line naming the file and the problem (or, for
NaN weights, a warning and exit 0). tests/test_bad_inputs.cpp runs every entry of manifest.json.
Plain python3 only (no numpy/torch). Re-run after changing a case:

    python3 tests/bad_inputs/make_bad_inputs.py
"""
import json
import os
import shutil
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "notebooks_data", "golden", "v1_c2p_only")
OUT = os.path.join(HERE, "cases")


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def pack(header, blob, length=None):
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text) if length is None else length) + text + blob


HEADER, BLOB = read_safetensors(os.path.join(SOURCE, "model.safetensors"))
CONFIG = json.load(open(os.path.join(SOURCE, "config.json")))
cases = []


def model_dir(name, config=CONFIG, weights=None, weights_name="model.safetensors"):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    if config is not None:
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config, indent=1))
    if weights is not None:
        with open(os.path.join(d, weights_name), "wb") as f:
            f.write(weights)
    return d


def case(name, args, expect, exit_code=1, what=""):
    cases.append({"name": name, "args": args, "expect": expect, "exit": exit_code, "what": what})


def dump_cmd(name):
    return "dump --model {cases}/" + name + " --ids 1,2,3 --out {tmp}/out.safetensors"


def modified(fn):
    h = json.loads(json.dumps(HEADER))
    blob = bytearray(BLOB)
    fn(h, blob)
    return pack(h, bytes(blob))


FIRST = sorted(k for k in HEADER if k != "__metadata__")[0]
WORD = "embeddings.word_embeddings.weight"

# ---- safetensors --------------------------------------------------------------------------------
model_dir("st_empty", weights=b"")
case("st_empty", dump_cmd("st_empty"), "shorter than the 8-byte header", what="empty weights file")
model_dir("st_truncated", weights=pack(HEADER, BLOB)[: len(BLOB) // 2])
case("st_truncated", dump_cmd("st_truncated"), "run past the end", what="file cut in half")
model_dir("st_header_longer_than_file", weights=struct.pack("<Q", 10**6) + b"{}")
case("st_header_longer_than_file", dump_cmd("st_header_longer_than_file"), "larger than the file")
model_dir("st_header_over_limit", weights=struct.pack("<Q", 2**40) + b"{}      ")
case("st_header_over_limit", dump_cmd("st_header_over_limit"), "exceeds the 100 MB limit")
model_dir("st_header_not_json", weights=struct.pack("<Q", 16) + b"this is not json")
case("st_header_not_json", dump_cmd("st_header_not_json"), "header is not JSON")
model_dir("st_header_not_object", weights=struct.pack("<Q", 8) + b"[1,2,3] ")
case("st_header_not_object", dump_cmd("st_header_not_object"), "not a JSON object")
model_dir("st_offsets_out_of_bounds", weights=modified(lambda h, b: h[FIRST].update(data_offsets=[len(BLOB) - 4, len(BLOB) + 4])))
case("st_offsets_out_of_bounds", dump_cmd("st_offsets_out_of_bounds"), "run past the end of the data")
def overlap(h, b):
    names = sorted((v["data_offsets"][0], k) for k, v in h.items() if k != "__metadata__")
    a, c = names[0][1], names[1][1]
    size = h[c]["data_offsets"][1] - h[c]["data_offsets"][0]
    h[c]["data_offsets"] = [h[a]["data_offsets"][0], h[a]["data_offsets"][0] + size]
model_dir("st_offsets_overlap", weights=modified(overlap))
case("st_offsets_overlap", dump_cmd("st_offsets_overlap"), "overlap")
model_dir("st_length_mismatch", weights=modified(lambda h, b: h[WORD].update(shape=[h[WORD]["shape"][0] + 1, h[WORD]["shape"][1]])))
case("st_length_mismatch", dump_cmd("st_length_mismatch"), "needs")
# Issue 44, class 4: lying headers. JSON leaves repeated keys open, so a header that gives a key
# twice is refused; a shape is a flat list of non-negative integers.
def raw_header(edit):
    """pack() over json.dumps(HEADER) with one textual edit (duplicate keys cannot be a dict)."""
    text = json.dumps(HEADER)
    entry = json.dumps({WORD: HEADER[WORD]})[1:-1]
    assert entry in text
    text = text.replace(entry, edit(entry)).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + BLOB
shape_text = '"shape": %s' % json.dumps(HEADER[WORD]["shape"])
model_dir("st_duplicate_shape_key", weights=raw_header(lambda e: e.replace(
    shape_text, '"shape": [%d], "shape": [%d]' % tuple(HEADER[WORD]["shape"]))))
case("st_duplicate_shape_key", dump_cmd("st_duplicate_shape_key"), "key 'shape' appears twice",
     what="\"shape\": [48], \"shape\": [32] was read as [48, 32]")
offsets_text = '"data_offsets": %s' % json.dumps(HEADER[WORD]["data_offsets"])
model_dir("st_duplicate_offsets_key", weights=raw_header(lambda e: e.replace(offsets_text, offsets_text + ", " + offsets_text)))
case("st_duplicate_offsets_key", dump_cmd("st_duplicate_offsets_key"), "key 'data_offsets' appears twice",
     what="was reported as missing")
model_dir("st_nested_shape", weights=modified(lambda h, b: h[WORD].update(shape=[[d] for d in h[WORD]["shape"]])))
case("st_nested_shape", dump_cmd("st_nested_shape"), "flat list", what="[[6]] was read as a scalar")
model_dir("st_object_in_shape", weights=modified(lambda h, b: h[WORD].update(shape=[{"n": d} for d in h[WORD]["shape"]])))
case("st_object_in_shape", dump_cmd("st_object_in_shape"), "flat list", what="[{\"n\": 6}] was read as a scalar")
def duplicate_metadata():
    text = json.dumps(HEADER).replace('"__metadata__": {', '"__metadata__": {"format": "np", ', 1).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + BLOB
model_dir("st_duplicate_metadata_key", weights=duplicate_metadata())
case("st_duplicate_metadata_key", dump_cmd("st_duplicate_metadata_key"), "appears twice")
model_dir("st_shape_overflow", weights=modified(lambda h, b: h[WORD].update(shape=[2**62, 2**62])))
case("st_shape_overflow", dump_cmd("st_shape_overflow"), "overflows 64 bits")
model_dir("st_unknown_dtype", weights=modified(lambda h, b: h[WORD].update(dtype="F128")))
case("st_unknown_dtype", dump_cmd("st_unknown_dtype"), "unknown dtype 'F128'")
model_dir("st_negative_dim", weights=modified(lambda h, b: h[WORD].update(shape=[-1, 32])))
case("st_negative_dim", dump_cmd("st_negative_dim"), "non-negative")
def nan_weights(h, b):
    begin = h[WORD]["data_offsets"][0]
    b[begin:begin + 8] = struct.pack("<d", float("nan"))
    b[begin + 8:begin + 16] = struct.pack("<d", float("inf"))
model_dir("st_nan_weights", weights=modified(nan_weights))
case("st_nan_weights", dump_cmd("st_nan_weights"), "warning: ", exit_code=0, what="NaN/Inf: a warning naming the tensor")
cases[-1]["expect_also"] = WORD
def drop(name):
    def fn(h, b):
        del h[name]
    return fn
MISSING = "encoder.layer.1.attention.self.pos_proj.weight"
model_dir("w_missing_tensor", weights=modified(drop(MISSING)))
case("w_missing_tensor", dump_cmd("w_missing_tensor"), "missing 1 required tensor(s): " + MISSING)
def wrong_shape(h, b):
    v = h["embeddings.LayerNorm.weight"]
    n = v["shape"][0]
    v["shape"] = [n // 2, 2]
model_dir("w_wrong_shape", weights=modified(wrong_shape))
case("w_wrong_shape", dump_cmd("w_wrong_shape"), "'embeddings.LayerNorm.weight' has shape [16, 2], expected [32]")
model_dir("w_integer_dtype", weights=modified(lambda h, b: h["embeddings.LayerNorm.bias"].update(dtype="I64")))
case("w_integer_dtype", dump_cmd("w_integer_dtype"), "integer dtype I64")

# Issue 28, class 7: a 2 GB tensor the model does not use (a hole in a sparse file) was read whole
# (3.8 GB RSS); only the tensors the model uses are read now. The committed part holds the header and
# the real tensors; the setup appends the 2 GB hole.
def hole_header():
    h = json.loads(json.dumps(HEADER))
    h["unused.junk"] = {"dtype": "F32", "shape": [536870912], "data_offsets": [len(BLOB), len(BLOB) + 2147483648]}
    return pack(h, BLOB)
d = model_dir("w_unused_2gb_hole", weights=hole_header(), weights_name="model.safetensors.part")
case("w_unused_2gb_hole", "dump --model {tmp}/deberta_hole --ids 1,2,3 --out {tmp}/out.safetensors", "wrote", exit_code=0,
     what="an unused 2 GB tensor was read (3.8 GB)")
cases[-1]["setup"] = ("rm -rf {tmp}/deberta_hole && mkdir {tmp}/deberta_hole && cp {cases}/w_unused_2gb_hole/config.json "
                      "{tmp}/deberta_hole/ && cp {cases}/w_unused_2gb_hole/model.safetensors.part "
                      "{tmp}/deberta_hole/model.safetensors && truncate -s +2G {tmp}/deberta_hole/model.safetensors")

# ---- config.json --------------------------------------------------------------------------------
good = pack(HEADER, BLOB)
def cfg(**kw):
    c = dict(CONFIG)
    c.update(kw)
    return c
# Issue 28, class 5: the config is checked against the weights before anything per layer is built,
# and a message lists the count and the first names only.
model_dir("cfg_layers_million", config=cfg(num_hidden_layers=1000000), weights=good)
case("cfg_layers_million", dump_cmd("cfg_layers_million"), "asks for num_hidden_layers = 1000000",
     what="a 1 KB config built a 796 MB list of missing tensors")
def far_layer(h, b):
    h["encoder.layer.999999.output.dense.bias"] = {"dtype": "F64", "shape": [1], "data_offsets": [len(b), len(b) + 8]}
    b.extend(struct.pack("<d", 0.0))
model_dir("w_far_layer", config=cfg(num_hidden_layers=1000000), weights=modified(far_layer))
case("w_far_layer", dump_cmd("w_far_layer"), "holds no tensor of encoder layer 2",
     what="one tensor of layer 999999 made a million layers be built")
def drop_layer_but_one(h, b):
    for k in [k for k in h if k.startswith("encoder.layer.1.") and k != "encoder.layer.1.output.dense.bias"]:
        del h[k]
model_dir("w_many_missing", weights=modified(drop_layer_but_one))
case("w_many_missing", dump_cmd("w_many_missing"), " more", what="the missing-tensor list had no cap")
model_dir("cfg_heads_not_divisor", config=cfg(num_attention_heads=5), weights=good)
case("cfg_heads_not_divisor", dump_cmd("cfg_heads_not_divisor"), "not divisible by num_attention_heads 5")
# Unknown pos_att_type entries are ignored, as Hugging Face ignores them; talking_head is refused.
model_dir("cfg_talking_head", config=cfg(pos_att_type="c2p|p2c", talking_head=True), weights=good)
case("cfg_talking_head", dump_cmd("cfg_talking_head"), "talking_head = true")
model_dir("cfg_negative_size", config=cfg(intermediate_size=-64), weights=good)
case("cfg_negative_size", dump_cmd("cfg_negative_size"), "intermediate_size must be positive")
model_dir("cfg_wrong_type", config=cfg(hidden_size="32"), weights=good)
case("cfg_wrong_type", dump_cmd("cfg_wrong_type"), "'hidden_size' must be an integer")
model_dir("cfg_not_json", config='{"model_type": "deberta", ', weights=good)
case("cfg_not_json", dump_cmd("cfg_not_json"), "not valid JSON")
model_dir("cfg_unknown_model_type", config=cfg(model_type="roberta"), weights=good)
case("cfg_unknown_model_type", dump_cmd("cfg_unknown_model_type"), "unknown model_type 'roberta'")
model_dir("cfg_unknown_activation", config=cfg(hidden_act="gelu_fancy"), weights=good)
case("cfg_unknown_activation", dump_cmd("cfg_unknown_activation"), "unknown activation 'gelu_fancy'")
model_dir("dir_no_config", config=None, weights=good)
case("dir_no_config", dump_cmd("dir_no_config"), "has no config.json")
model_dir("dir_no_weights")
case("dir_no_weights", dump_cmd("dir_no_weights"), "has no weights")

# ---- PyTorch checkpoints (pytorch_model.bin) ------------------------------------------------------
def pt_zip(name, pickle_bytes, extra=None):
    buf = os.path.join(OUT, name + ".tmp")
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle_bytes)
        z.writestr("archive/version", "3\n")
        for k, v in (extra or {}).items():
            z.writestr(k, v)
    data = open(buf, "rb").read()
    os.remove(buf)
    return data

def zip_other():
    buf = os.path.join(OUT, "zip.tmp")
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "not a checkpoint")
    data = open(buf, "rb").read()
    os.remove(buf)
    return data
model_dir("pt_zip_not_pytorch", weights=zip_other(), weights_name="pytorch_model.bin")
case("pt_zip_not_pytorch", dump_cmd("pt_zip_not_pytorch"), "pytorch_model.bin")
# Protocol-2 pickle calling os.system('echo pwned'): GLOBAL 'os system', a string, TUPLE1, REDUCE.
# It is only ever parsed, never executed.
evil = b"\x80\x02cos\nsystem\nq\x00X\x0b\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03."
model_dir("pt_global_os_system", weights=pt_zip("evil", evil), weights_name="pytorch_model.bin")
case("pt_global_os_system", dump_cmd("pt_global_os_system"), "os.system")
evil2 = b"\x80\x02cbuiltins\neval\nq\x00X\x04\x00\x00\x001+1q\x01\x85q\x02Rq\x03."
model_dir("pt_global_builtins_eval", weights=pt_zip("evil2", evil2), weights_name="pytorch_model.bin")
case("pt_global_builtins_eval", dump_cmd("pt_global_builtins_eval"), "builtins.eval")
model_dir("pt_unknown_opcode", weights=pt_zip("op", b"\x80\x02\xff."), weights_name="pytorch_model.bin")
case("pt_unknown_opcode", dump_cmd("pt_unknown_opcode"), "opcode")
model_dir("pt_truncated_pickle", weights=pt_zip("trunc", b"\x80\x02}q\x00(X\x05\x00\x00"), weights_name="pytorch_model.bin")
case("pt_truncated_pickle", dump_cmd("pt_truncated_pickle"), "pytorch_model.bin")
model_dir("pt_random_bytes", weights=bytes(range(256)) * 4, weights_name="pytorch_model.bin")
case("pt_random_bytes", dump_cmd("pt_random_bytes"), "pytorch_model.bin")

# Issue 28, class 10: pickles that cost gigabytes from a few MB. They are written at test time by
# tests/bad_inputs/pt_big.py (git need not hold 5 MB of them):
#   pt_memo_key: a 1 MB storage key memoised once and named by 3,000 persistent ids (3.0 GB before);
#   pt_many_none: a list of 4 M None (1.1 GB before).
d = os.path.join(OUT, "pt_big")
os.makedirs(d, exist_ok=True)
shutil.copyfile(os.path.join(SOURCE, "config.json"), os.path.join(d, "config.json"))
case("pt_memo_key", "dump --model {tmp}/deberta_pt_memo_key --ids 1,2,3 --out {tmp}/out.safetensors",
     "storage key longer than 256 bytes", what="a 1 MB key memoised and referenced 3,000 times took 3.0 GB")
cases[-1]["setup"] = "/usr/bin/python3 {cases}/../pt_big.py {cases}/pt_big/config.json {tmp}"
case("pt_many_none", "dump --model {tmp}/deberta_pt_many_none --ids 1,2,3 --out {tmp}/out.safetensors",
     "not a state dict", what="a list of 4 M None took 1.1 GB")
cases[-1]["setup"] = "/usr/bin/python3 {cases}/../pt_big.py {cases}/pt_big/config.json {tmp}"

# ---- inputs files -------------------------------------------------------------------------------
def inputs_file(name, tensors):
    header, blob = {}, b""
    for key, (dtype, shape, raw) in tensors.items():
        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "inputs.safetensors"), "wb") as f:
        f.write(pack(header, blob))
inputs_file("in_float_ids", {"input_ids": ("F64", [1, 3], struct.pack("<3d", 1, 2, 3))})
case("in_float_ids", "dump --model {golden}/v1_c2p_only --inputs {cases}/in_float_ids/inputs.safetensors --out {tmp}/o.safetensors",
     "must be an integer tensor")
inputs_file("in_batch_of_two", {"input_ids": ("I64", [2, 2], struct.pack("<4q", 1, 2, 3, 4))})
case("in_batch_of_two", "dump --model {golden}/v1_c2p_only --inputs {cases}/in_batch_of_two/inputs.safetensors --out {tmp}/o.safetensors",
     "batch of one")
inputs_file("in_mask_length", {"input_ids": ("I64", [1, 3], struct.pack("<3q", 1, 2, 3)),
                               "attention_mask": ("I64", [1, 2], struct.pack("<2q", 1, 1))})
case("in_mask_length", "dump --model {golden}/v1_c2p_only --inputs {cases}/in_mask_length/inputs.safetensors --out {tmp}/o.safetensors",
     "has 2 entries, input_ids 3")
inputs_file("in_no_input_ids", {"attention_mask": ("I64", [1, 2], struct.pack("<2q", 1, 1))})
case("in_no_input_ids", "dump --model {golden}/v1_c2p_only --inputs {cases}/in_no_input_ids/inputs.safetensors --out {tmp}/o.safetensors",
     "no 'input_ids' tensor")
case("in_ids_outside_vocab", "dump --model {golden}/v1_c2p_only --ids 1,64000 --out {tmp}/o.safetensors", "outside the vocabulary")
case("in_empty_ids", "dump --model {golden}/v1_c2p_only --ids , --out {tmp}/o.safetensors", "not an integer")

# ---- text and tokenizers (bundled model) -----------------------------------------------------------
os.makedirs(os.path.join(OUT, "tok_bad_spm"), exist_ok=True)
for f in ("config.json", "model.safetensors"):
    shutil.copy(os.path.join(ROOT, "notebooks_data", "golden", "v3_emd", f), os.path.join(OUT, "tok_bad_spm", f))
with open(os.path.join(OUT, "tok_bad_spm", "spm.model"), "wb") as f:
    f.write(b"this is not a sentencepiece model\x00\x01\x02")
case("tok_spm_not_sentencepiece", "tokenize --model {cases}/tok_bad_spm --text hello", "spm.model")
case("text_invalid_utf8", "tokenize --text \"$(printf 'caf\\351 [MASK]')\"", "UTF-8")
case("text_too_long", "predict --text \"$(printf 'word %.0s' $(seq 1 3000)) [MASK]\"", "max_position_embeddings")
case("predict_without_mask", "predict --text \"A sentence without a mask.\"", "no [MASK]")
case("explain_cell_outside", "explain --text \"Hello there.\" --query 99 --key 0", "outside the")

# ---- issue 12: hostile files and extreme inputs -------------------------------------------------
V3 = os.path.join(ROOT, "notebooks_data", "golden", "v3_emd")
BUNDLED = os.path.join(ROOT, "notebooks_data", "models", "deberta-tiny")
# Tokenizer ids beyond the model's vocabulary: the bundled 8,000-piece spm.model beside a 48-row model.
d = os.path.join(OUT, "tok_vocab_mismatch")
os.makedirs(d, exist_ok=True)
for f in ("config.json", "model.safetensors"):
    shutil.copy(os.path.join(V3, f), os.path.join(d, f))
for f in ("spm.model", "special_tokens_map.json", "tokenizer_config.json"):
    shutil.copy(os.path.join(BUNDLED, f), os.path.join(d, f))
with open(os.path.join(d, "text.txt"), "w") as f:
    f.write("In the beginning God created the heaven and the earth.\n")
case("tok_vocab_mismatch_predict", "predict --model {cases}/tok_vocab_mismatch --text \"the [MASK] is here\"",
     "but the model's vocab_size is 48", what="tokenizer ids >= vocab_size (was an out-of-bounds read)")
case("tok_vocab_mismatch_eval", "eval-mlm --model {cases}/tok_vocab_mismatch --text-file {cases}/tok_vocab_mismatch/text.txt",
     "but the model's vocab_size is 48", what="eval-mlm read past its counts / log-probabilities")
# JSON nested 100,000 deep: config.json, tokenizer.json, the safetensors header.
DEEP = "[" * 100000 + "]" * 100000
model_dir("cfg_deep_json", config=DEEP, weights=good)
case("cfg_deep_json", dump_cmd("cfg_deep_json"), "JSON nests deeper than 128 levels", what="was a stack overflow")
d = model_dir("tok_json_deep", config=None)
with open(os.path.join(d, "tokenizer.json"), "w") as f:
    f.write('{"model": ' + "[" * 100000 + "]" * 100000 + "}")
case("tok_json_deep", "tokenize --model {cases}/tok_json_deep --text hello", "JSON nests deeper than 128 levels")
model_dir("st_header_deep", weights=pack(json.loads("{}"), b"")[:0] + struct.pack("<Q", 8 + 200000) + b" " * 8 +
          ("[" * 100000 + "]" * 100000).encode())
case("st_header_deep", dump_cmd("st_header_deep"), "JSON nests deeper than 128 levels")
# 20,000 tokens on a relative-attention model that allows them: the N x N maps cannot fit.
model_dir("in_too_many_tokens", config=cfg(max_position_embeddings=1000000), weights=good)
case("in_too_many_tokens", "dump --model {cases}/in_too_many_tokens --ids \"$(printf '1,%.0s' $(seq 1 19999))1\" "
     "--out {tmp}/o.safetensors", "20000 tokens need", what="was std::terminate from inside an OpenMP region")
# A config asking for a 16,000,000-row embedding (4 GB of doubles) over weights that lack it:
# reported missing, not allocated as zeros first.
def drop_word(h, b):
    del h[WORD]
model_dir("w_missing_huge_config", config=cfg(vocab_size=16000000), weights=modified(drop_word))
case("w_missing_huge_config", dump_cmd("w_missing_huge_config"), "missing 1 required tensor(s): " + WORD,
     what="placeholders were allocated before the error")
# Both `x` and `deberta.x`: refuse, naming both.
def both(h, b):
    begin, end = h[WORD]["data_offsets"]
    h["deberta." + WORD] = dict(h[WORD], data_offsets=[len(b), len(b) + end - begin])
    b += b[begin:end]
model_dir("w_prefixed_twice", weights=modified(both))
case("w_prefixed_twice", dump_cmd("w_prefixed_twice"), "holds both '" + WORD + "' and 'deberta." + WORD + "'")
# A zero-length tensor whose offsets point inside another tensor holds no bytes: not an overlap.
def empty_inside(h, b):
    begin = h[WORD]["data_offsets"][0] + 8
    h["extra.empty"] = {"dtype": "F64", "shape": [0, 4], "data_offsets": [begin, begin]}
model_dir("st_zero_length_inside", weights=modified(empty_inside))
case("st_zero_length_inside", "dump --model {cases}/st_zero_length_inside --ids 1,2,3 --out {tmp}/out.safetensors",
     "wrote", exit_code=0, what="a valid zero-length tensor was reported as an overlap")
# Special files: a FIFO named config.json (made at test time: git cannot hold one) and /dev/zero.
case("cfg_fifo", "dump --model {tmp}/deberta_fifo_dir --ids 1,2,3 --out {tmp}/o.safetensors", "not a regular file",
     what="opening the FIFO waited forever")
cases[-1]["setup"] = ("rm -rf {tmp}/deberta_fifo_dir && mkdir -p {tmp}/deberta_fifo_dir && mkfifo {tmp}/deberta_fifo_dir/config.json"
                      " && cp {cases}/dir_no_config/model.safetensors {tmp}/deberta_fifo_dir/")
# Issue 59, class 1: an spm.model whose one piece is 150,000 bytes overflowed the stack inside
# libsentencepiece's trie builder (a signal in deberta, the viewer and Python). A piece appended to
# the bundled 8,000-piece model (ModelProto field 1: a SentencePiece whose field 1 is the piece).
def pb_len(field, payload):
    key, n, out = bytes([(field << 3) | 2]), len(payload), b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            break
    return key + out + payload


d = os.path.join(OUT, "tok_spm_huge_piece")
os.makedirs(d, exist_ok=True)
for f in ("config.json", "model.safetensors"):
    shutil.copy(os.path.join(V3, f), os.path.join(d, f))
with open(os.path.join(d, "spm.model"), "wb") as f:
    f.write(open(os.path.join(BUNDLED, "spm.model"), "rb").read() + pb_len(1, pb_len(1, b"a" * 150000)))
case("tok_spm_huge_piece", "tokenize --model {cases}/tok_spm_huge_piece --text hello",
     "spm.model: piece 8000 is 150000 bytes long, more than the limit of 4096 bytes a piece",
     what="issue 59 class 1: stack overflow in libsentencepiece's trie builder")
# A Unigram tokenizer.json without unk_id and a character no piece covers: the library refuses the
# text, and so does `deberta` (issue 59 class 4: the vocabulary's [UNK] was used, exit 0).
d = model_dir("tok_json_no_unk", config=None)
with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
    json.dump({"version": "1.0", "added_tokens": [], "normalizer": None, "decoder": None,
               "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
               "model": {"type": "Unigram", "vocab": [["[UNK]", 0.0], ["[CLS]", 0.0], ["[SEP]", 0.0], ["[MASK]", 0.0],
                                                      ["\u2581", -2.0], ["a", -1.0], ["\u2581a", -1.5]]}}, f, ensure_ascii=False)
case("tok_json_no_unk", "tokenize --model {cases}/tok_json_no_unk --text \"a z\"",
     "model Unigram has no \"unk_id\", and no piece covers the character \"z\" (U+007A)",
     what="issue 59 class 4: ids from the vocabulary's [UNK] where the library refuses the text")
case("tok_spm_dev_zero", "tokenize --model {tmp}/deberta_devzero --text hello", "not a regular file", what="read /dev/zero whole")
cases[-1]["setup"] = ("rm -rf {tmp}/deberta_devzero && mkdir -p {tmp}/deberta_devzero && cp {cases}/tok_bad_spm/config.json "
                      "{cases}/tok_bad_spm/model.safetensors {tmp}/deberta_devzero/ && ln -s /dev/zero {tmp}/deberta_devzero/spm.model")
# PyTorch checkpoints: the byteorder record of torch.save >= 2.1 (must load), and the memory bombs
# of notebooks_data/fixtures/checkpoints/bad (each a few hundred bytes).
FIXTURES = os.path.join(ROOT, "notebooks_data", "fixtures", "checkpoints")
def with_byteorder(src, order):
    buf = os.path.join(OUT, "byteorder.tmp")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            info = zin.getinfo(name)
            info.date_time = (2024, 1, 1, 0, 0, 0)
            zout.writestr(info, zin.read(name))
            if name.endswith("/data.pkl"):
                zout.writestr(zipfile.ZipInfo(name[:-len("data.pkl")] + "byteorder", date_time=(2024, 1, 1, 0, 0, 0)), order)
    data = open(buf, "rb").read()
    os.remove(buf)
    return data
V1_BASIC_CONFIG = open(os.path.join(FIXTURES, "v1_basic_fp32", "config.json")).read()
model_dir("pt_byteorder_little", config=V1_BASIC_CONFIG, weights_name="pytorch_model.bin",
          weights=with_byteorder(os.path.join(FIXTURES, "v1_basic_fp32", "pytorch_model.bin"), "little"))
case("pt_byteorder_little", "dump --model {cases}/pt_byteorder_little --ids 1,2,3 --out {tmp}/out.safetensors", "wrote",
     exit_code=0, what="was refused as a 'truncated pickle' (the byteorder entry's size was used for data.pkl)")
for name, expect in (("expanded_bomb", "stride-0 views or many keys sharing one storage"),
                     ("shared_storage_bomb", "stride-0 views or many keys sharing one storage"),
                     ("zip_size_lies", "the archive declares 2147483632 bytes but holds at most"),
                     ("byteorder_unknown", "unknown byte order 'middle'")):
    model_dir("pt_" + name, config=V1_BASIC_CONFIG, weights_name="pytorch_model.bin",
              weights=open(os.path.join(FIXTURES, "bad", name + ".bin"), "rb").read())
    case("pt_" + name, dump_cmd("pt_" + name), expect)
# Weights that make the probabilities NaN: exit 0, but a warning naming the position.
v3_header, v3_blob = read_safetensors(os.path.join(V3, "model.safetensors"))
def nan_bias(h, b):
    begin = h["lm_predictions.lm_head.bias"]["data_offsets"][0]
    b[begin:begin + 8] = struct.pack("<d", float("nan"))
blob = bytearray(v3_blob)
nan_bias(v3_header, blob)
model_dir("nan_predictions", config=json.load(open(os.path.join(V3, "config.json"))), weights=pack(v3_header, bytes(blob)))
case("nan_predictions", "predict --model {cases}/nan_predictions --ids 1,5,6,7,2 --positions 2", "log-probabilities NaN or infinite",
     exit_code=0, what="NaN probabilities were printed with exit 0 and no warning")
case("opt_scale_factor_suffix", "predict --text \"the [MASK] is here\" --scale-factor 3abc", "'3abc' is neither 'auto' nor a number")

# --- issue 28: non-regular text inputs, unbounded lines, NaN options, invalid UTF-8 in data ----------
WORDNET = "{cases}/../../../notebooks_data/models/deberta-tiny-wordnet-match"
case("evalmlm_text_fifo", "eval-mlm --text-file {tmp}/deberta_text_fifo", "not a regular file",
     what="eval-mlm opened a FIFO and waited for a writer forever")
cases[-1]["setup"] = "rm -f {tmp}/deberta_text_fifo && mkfifo {tmp}/deberta_text_fifo"
case("eval_data_fifo", "eval --model " + WORDNET + " --data {tmp}/deberta_data_fifo", "not a regular file",
     what="eval --data opened a FIFO and waited forever")
cases[-1]["setup"] = "rm -f {tmp}/deberta_data_fifo && mkfifo {tmp}/deberta_data_fifo"
case("evalmlm_text_dev_zero", "eval-mlm --text-file /dev/zero", "not a regular file",
     what="read /dev/zero line by line without end")
case("eval_data_too_big", "eval --model " + WORDNET + " --data {tmp}/deberta_sparse_data.txt", "more than the 256 MB",
     what="a 300 MB data file was read whole")
cases[-1]["setup"] = "rm -f {tmp}/deberta_sparse_data.txt && truncate -s 300M {tmp}/deberta_sparse_data.txt"
d = os.path.join(OUT, "evalmlm_invalid_utf8")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "text.txt"), "wb").write(b"the cat sat on the mat\n\nin the beginning \xff\xfe was\n")
case("evalmlm_invalid_utf8", "eval-mlm --text-file {cases}/evalmlm_invalid_utf8/text.txt", "text.txt:3:",
     what="invalid UTF-8 in the data was reported without the file and line")
case("evalmlm_10mb_line", "eval-mlm --text-file {tmp}/deberta_long_line.txt --json", "\"sentences\"", exit_code=0,
     what="a 10 MB line was tokenized whole before being truncated to 128 tokens")
cases[-1]["setup"] = ("/usr/bin/python3 -c \"open('{tmp}/deberta_long_line.txt','w').write('the cat sat on the mat. ' * "
                      "420000 + chr(10))\"")
case("eval_10mb_line", "eval --model " + WORDNET + " --data {tmp}/deberta_long_pair.txt --json", "skipped_too_long",
     exit_code=0, what="a 10 MB example was tokenized whole before being skipped as too long")
cases[-1]["setup"] = ("/usr/bin/python3 -c \"open('{tmp}/deberta_long_pair.txt','w').write('a short line' + chr(10) + "
                      "'word ' * 2000000 + chr(10))\"")
case("opt_diff_tol_nan", "diff {golden}/v1_c2p_only/golden.safetensors {golden}/v1_c2p_only/golden.safetensors --tol nan",
     "--tol: 'nan' is not a finite number", exit_code=105, what="a NaN tolerance was accepted")
case("opt_mask_rate_nan", "eval-mlm --text-file {cases}/evalmlm_invalid_utf8/text.txt --mask-rate nan",
     "--mask-rate: 'nan' is not a finite number", exit_code=105, what="a NaN mask rate was accepted")
case("opt_mask_rate_inf", "eval-mlm --text-file {cases}/evalmlm_invalid_utf8/text.txt --mask-rate inf",
     "not a finite number", exit_code=105, what="an infinite mask rate was accepted")
case("opt_positions_repeated", "predict --text \"the [MASK] sat on the mat\" --positions " + ",".join(["2"] * 30000),
     "position 2 is given more than once", what="60,000 copies of one position took 7.5 GB")
case("opt_positions_option_twice", "predict --text \"the [MASK] sat\" --positions 2 --positions 2", "--positions",
     exit_code=114, what="a repeated option")
# Issue 28, class 9: an 80 MB header (1.2 M entries) took 1.1 GB as a JSON tree in `diff`; it is
# now read event by event and refused past 100,000 tensors.
case("diff_header_many_tensors", "diff {tmp}/deberta_many_tensors.safetensors {tmp}/deberta_many_tensors.safetensors",
     "lists more than 100000 tensors", what="an 80 MB header cost 1.1 GB")
cases[-1]["setup"] = ("/usr/bin/python3 -c \"import json,struct; h=json.dumps({'t%d'%i: {'dtype':'F32','shape':[0],"
                      "'data_offsets':[0,0]} for i in range(1200000)}).encode(); h+=b' '*(-len(h)%8); "
                      "open('{tmp}/deberta_many_tensors.safetensors','wb').write(struct.pack('<Q',len(h))+h)\"")
case("opt_bench_threads_huge", "bench --preset tiny --seq 4 --threads 100000", "--threads", exit_code=105,
     what="100000 threads were started")

# Issue 44, class 3: one length rule. `dump --ids` took 129 ids on a 128-position model (predict
# refused them); one position given 40,000 times cost 2.5 GB; bench --seq 100000 made a model first.
# Issue 59, class 8: refused only where a position past the table is read — here the embeddings'
# absolute positions (position_biased_input, 32 positions); v1_c2p_only reads none and computes.
case("len_dump_ids_over_positions", "dump --model {golden}/../golden_extra/v1_mlm_pbi --ids \"$(printf '1,%.0s' $(seq 1 32))1\" "
     "--out {tmp}/o.safetensors", "33 tokens, more than max_position_embeddings = 32",
     what="dump --ids ran past max_position_embeddings")
case("len_dump_ids_relative_only", "dump --model {golden}/v1_c2p_only --ids \"$(printf '1,%.0s' $(seq 1 64))1\" "
     "--out {tmp}/o.safetensors", "wrote", exit_code=0,
     what="refused in round 4 though nothing reads a position past the table (Hugging Face computes it)")
case("len_dump_mlm_repeated", "dump --model {golden}/v1_c2p_only --ids 1,5,6,2 --mlm \"$(printf '2,%.0s' $(seq 1 39999))2\" "
     "--out {tmp}/o.safetensors", "masked position 2 is given more than once", what="40,000 copies took 2.5 GB")
case("len_bench_seq_huge", "bench --preset tiny --seq 100000 --repeat 1", "100000 tokens, more than max_position_embeddings = 512",
     what="a model was made before the length was refused")
# Issue 44, class 5: one input resolver, one rule.
case("in_text_and_ids", "predict --text \"the [MASK] sat\" --ids 1,4,2", "not both", what="the ids were dropped silently")
case("in_mask_id_negative", "predict --model {golden}/v3_emd --ids 1,5,6,2 --mask-id -5",
     "mask id -5 is outside the vocabulary [0, 48)", what="was silently ignored")
case("in_mask_id_outside_vocab", "predict --model {golden}/v3_emd --ids 1,5,6,2 --mask-id 48",
     "mask id 48 is outside the vocabulary", what="got only 'no [MASK] token'")
case("opt_backend_twice", "predict --backend fast --backend reference --text \"the [MASK] sat\"", "--backend: given more than once",
     exit_code=114, what="a repeated option")
# Issue 44, class 8: messages. A symlink loop was "no such file"; --model-b "" gave "deberta: : no such file".
case("path_symlink_loop", "predict --model {tmp}/deberta_loop_a --text \"the [MASK] sat\"", "Too many levels of symbolic links",
     what="reported as 'no such file'")
cases[-1]["setup"] = "rm -f {tmp}/deberta_loop_a {tmp}/deberta_loop_b && ln -s {tmp}/deberta_loop_b {tmp}/deberta_loop_a && ln -s {tmp}/deberta_loop_a {tmp}/deberta_loop_b"
case("path_weights_symlink_loop", "predict --model {tmp}/deberta_loop_dir --ids 1,5,6,2 --positions 2", "Too many levels of symbolic links",
     what="reported as 'has no weights'")
cases[-1]["setup"] = ("rm -rf {tmp}/deberta_loop_dir && mkdir {tmp}/deberta_loop_dir && cp {cases}/../../../notebooks_data/golden/v1_c2p_only/config.json "
                      "{tmp}/deberta_loop_dir/ && ln -s model.safetensors {tmp}/deberta_loop_dir/model.safetensors")
case("path_config_symlink_loop", "predict --model {tmp}/deberta_loop_cfg --ids 1,5,6,2 --positions 2", "Too many levels of symbolic links",
     what="reported as 'has no config.json'")
cases[-1]["setup"] = ("rm -rf {tmp}/deberta_loop_cfg && mkdir {tmp}/deberta_loop_cfg && cp {cases}/../../../notebooks_data/golden/v1_c2p_only/model.safetensors "
                      "{tmp}/deberta_loop_cfg/ && ln -s config.json {tmp}/deberta_loop_cfg/config.json")
case("path_model_b_empty", "compare --model-b \"\" --text \"the [MASK] sat\"", "--model-b: empty path", what="'deberta: : no such file'")

json.dump(cases, open(os.path.join(HERE, "manifest.json"), "w"), indent=1)
print(f"wrote {len(cases)} cases to {OUT}")
