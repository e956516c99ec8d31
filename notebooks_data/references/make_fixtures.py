#!/usr/bin/env python3
"""Make the checkpoint and tokenizer test fixtures of the C++ readers (issue 4).

    /usr/bin/python3 notebooks_data/references/make_fixtures.py            # writes notebooks_data/fixtures/

Needs Debian's python3-torch, python3-numpy, python3-sentencepiece. The outputs are committed, so
CI never runs this script; it is deterministic (fixed seeds, single thread), re-running it should
reproduce the same bytes except for the three legacy-format files, whose storage keys are
memory addresses.

What it writes under fixtures/:

  checkpoints/<case>_<kind>/         config.json + pytorch_model.bin of golden case <case>
      (v1_basic, v3_emd) whose float64 model.safetensors is converted, names unchanged, to
      kind = fp32 (zip), fp16 (zip), legacy (fp32, _use_new_zipfile_serialization=False),
      bf16 (zip, v3_emd only), task (fp32 zip, v3_emd only: `deberta.` prefix + extra heads).
      fp16/bf16 folders also hold reference.safetensors: the same weights rounded to that dtype
      and widened back to F64, which must give exactly the outputs of the .bin.
  checkpoints/views.bin, views_legacy.bin   tensors that are views: transposed, sliced with a
      storage offset, sharing one storage, expanded (stride 0), plus F16/BF16/F64/I64 storages;
      views_expected.safetensors holds their values contiguous in F64/I64.
  checkpoints/views_byteorder.bin   views.bin (written by torch 1.13, which writes no byteorder
      record) with the `archive/byteorder` = "little" entry that torch.save of PyTorch >= 2.1
      writes, inserted right after data.pkl as torch does; every other entry byte for byte.
  checkpoints/duplicate_keys.bin   a hand-made state dict that sets "w" twice: torch.load keeps
      the last value ([6..11]), and so must we.
  checkpoints/bad/*.bin, *.zip       inputs the reader must refuse, each made by hand, never
      executed: os.system / builtins.eval globals, an unknown opcode, a truncated pickle, a
      tensor larger than its storage, a storage entry shorter than declared, a zip that is not
      a PyTorch archive, an empty file, a text file. bad/README.txt lists the expected messages.

  spm/spm.model (+ tokenizer_config.json, special_tokens_map.json, added_tokens.json)
      A 1,000-piece SentencePiece unigram model trained on public-domain text (the King James
      Bible and WordNet sentences of notebooks_data/corpus/train.txt, first 4,000 lines, plus the
      accented / CJK / emoji lines of EXTRA_TRAINING_TEXT below, written for this project), with
      DeBERTa-v3's piece layout: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3, and [MASK] as an added token
      just past the vocabulary (real v3 has it at 128000).
  spm/expected.json   for each of >= 50 sentences, the ids and pieces the Python sentencepiece
      library gives (no [CLS]/[SEP]; the C++ test adds them).
  spm_bad/spm.model  bytes that are not a SentencePiece model.
  bpe/vocab.json, bpe/merges.txt   a tiny GPT-2 style byte-level BPE (256 byte symbols, merges
      learnt here from the corpus, DeBERTa v1's special tokens), and bpe/expected.json with the
      tokenisations of an independent Python implementation (pre-tokeniser written with
      unicodedata, not a regex engine).
  tokenizer_json_unigram/tokenizer.json   the spm model above as a Hugging Face Unigram
      tokenizer.json (pieces, scores, Metaspace), with expected.json: the spm ids of the fixture
      sentences that need no normalisation (ASCII-like, single spaces).
  tokenizer_json_bpe/tokenizer.json   the BPE above as a ByteLevel BPE tokenizer.json; its
      expected ids are bpe/expected.json.
"""
import io
import json
import lzma
import os
import struct
import sys
import unicodedata
import zipfile
from collections import OrderedDict

import numpy as np
import torch
import sentencepiece as spm

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
OUT = os.path.join(HERE, "fixtures")
GOLDEN = os.path.join(HERE, "golden")


# ---------------------------------------------------------------------------------------------
# safetensors (tiny reader/writer; the python3-safetensors package is not in Debian 12)

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = OrderedDict()
    for name in sorted(k for k in header if k != "__metadata__"):
        e = header[name]
        b, end = e["data_offsets"]
        arr = np.frombuffer(data[b:end], dtype=ST_DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        dtype = {torch.float64: "F64", torch.int64: "I64"}[t.dtype]
        raw = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------------------------------------
# checkpoints

def golden_state(case):
    return read_safetensors(os.path.join(GOLDEN, case, "model.safetensors"))


def save_case(case, kind, state, legacy=False, reference=None):
    folder = os.path.join(OUT, "checkpoints", f"{case}_{kind}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(GOLDEN, case, "config.json")) as f:
        config = f.read()
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(config)
    torch.save(OrderedDict(state), os.path.join(folder, "pytorch_model.bin"),
               _use_new_zipfile_serialization=not legacy)
    if reference is not None:
        write_safetensors(os.path.join(folder, "reference.safetensors"), reference)


def make_golden_checkpoints():
    for case in ("v1_basic", "v3_emd"):
        state = golden_state(case)
        save_case(case, "fp32", {k: v.float() for k, v in state.items()})
        save_case(case, "legacy", {k: v.float() for k, v in state.items()}, legacy=True)
        save_case(case, "fp16", {k: v.half() for k, v in state.items()},
                  reference={k: v.half().double() for k, v in state.items()})
    state = golden_state("v3_emd")
    save_case("v3_emd", "bf16", {k: v.bfloat16() for k, v in state.items()},
              reference={k: v.bfloat16().double() for k, v in state.items()})
    # A task model: encoder names under `deberta.`, the MLM head as is, and heads we do not use.
    task = OrderedDict()
    for k, v in state.items():
        task[k if k.startswith("lm_predictions.") else "deberta." + k] = v.float()
    g = torch.Generator().manual_seed(7)
    task["pooler.dense.weight"] = torch.randn(32, 32, generator=g)
    task["classifier.weight"] = torch.randn(3, 32, generator=g)
    task["deberta.embeddings.position_ids"] = torch.arange(32).unsqueeze(0)
    save_case("v3_emd", "task", task)


def make_view_checkpoints():
    big = torch.arange(30, dtype=torch.float32).reshape(5, 6) / 8
    state = OrderedDict()
    state["big"] = big
    state["slice"] = big[1:3, 2:5]                   # storage offset 8, stride (6, 1)
    state["transposed"] = (torch.arange(12, dtype=torch.float32).reshape(3, 4) - 5.5).t()
    state["column"] = big[:, 4]                      # stride (6,)
    state["every_other"] = big[::2, ::3]             # stride (12, 3)
    state["expanded"] = torch.tensor([1.5, -2.0, 3.25]).expand(2, 3)  # stride (0, 1)
    state["half"] = (torch.arange(8, dtype=torch.float32) / 3).half().reshape(2, 4).t()
    state["bfloat"] = (torch.arange(6, dtype=torch.float32) * 1.1).bfloat16()
    state["double"] = torch.tensor([[1 / 3, 2 / 3]], dtype=torch.float64)
    state["ids"] = torch.tensor([-1, 0, 5, 2**40], dtype=torch.int64)
    state["scalar"] = torch.tensor(0.125)
    state["empty"] = torch.zeros(0, 4)
    folder = os.path.join(OUT, "checkpoints")
    torch.save(state, os.path.join(folder, "views.bin"))
    torch.save(state, os.path.join(folder, "views_legacy.bin"), _use_new_zipfile_serialization=False)
    expected = OrderedDict()
    for k, v in state.items():
        expected[k] = v.contiguous().long() if v.dtype == torch.int64 else v.contiguous().double()
    write_safetensors(os.path.join(folder, "views_expected.safetensors"), expected)


# Hand-made pickles. Nothing here is ever unpickled by Python.

def make_byteorder_checkpoint():
    """views.bin plus the <prefix>/byteorder record of current torch.save (see the docstring)."""
    folder = os.path.join(OUT, "checkpoints")
    src = os.path.join(folder, "views.bin")
    dst = os.path.join(folder, "views_byteorder.bin")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        names = zin.namelist()
        assert not any(n.endswith("/byteorder") for n in names), "torch already wrote a byteorder record"
        for name in names:
            info = zin.getinfo(name)
            info.date_time = (2024, 1, 1, 0, 0, 0)
            zout.writestr(info, zin.read(name))
            if name.endswith("/data.pkl"):
                order = zipfile.ZipInfo(name[: -len("data.pkl")] + "byteorder", date_time=(2024, 1, 1, 0, 0, 0))
                zout.writestr(order, sys.byteorder)
    reloaded = torch.load(dst)  # torch 1.13 ignores the record; the values must be unchanged
    original = torch.load(src)
    assert all(torch.equal(reloaded[k], original[k]) for k in original)


def p_str(s):
    b = s.encode()
    return (b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b


def p_int(i):
    return b"J" + struct.pack("<i", i)


def p_tuple(*parts):
    return b"(" + b"".join(parts) + b"t"


def p_tensor(key, storage_type, numel, offset, size, stride):
    """_rebuild_tensor_v2(persistent storage, offset, size, stride, False, OrderedDict())."""
    pid = p_tuple(p_str("storage"), b"ctorch\n" + storage_type.encode() + b"\n", p_str(key), p_str("cpu"), p_int(numel))
    return (b"ctorch._utils\n_rebuild_tensor_v2\n" +
            p_tuple(pid + b"Q", p_int(offset), p_tuple(*map(p_int, size)), p_tuple(*map(p_int, stride)),
                    b"\x89", b"ccollections\nOrderedDict\n)R") + b"R")


def p_state_dict(entries):
    body = b"".join(p_str(name) + tensor for name, tensor in entries)
    return b"\x80\x02ccollections\nOrderedDict\n)R(" + body + b"u."


def write_zip(path, files):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            z.writestr(info, data)


def make_bad_checkpoints():
    folder = os.path.join(OUT, "checkpoints", "bad")
    os.makedirs(folder, exist_ok=True)
    floats = struct.pack("<6f", *range(6))
    good_pkl = p_state_dict([("w", p_tensor("0", "FloatStorage", 6, 0, [2, 3], [3, 1]))])
    # Duplicate keys: "w" from storage 0, then "w" again from storage 1; torch.load keeps the last.
    dup = os.path.join(OUT, "checkpoints", "duplicate_keys.bin")
    write_zip(dup, {"archive/data.pkl": p_state_dict([("w", p_tensor("0", "FloatStorage", 6, 0, [6], [1])),
                                                      ("v", p_tensor("0", "FloatStorage", 6, 0, [2], [1])),
                                                      ("w", p_tensor("1", "FloatStorage", 6, 0, [6], [1]))]),
                    "archive/version": b"3\n", "archive/data/0": floats,
                    "archive/data/1": struct.pack("<6f", *range(6, 12))})
    assert torch.load(dup)["w"].tolist() == [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    assert list(torch.load(dup)) == ["w", "v"]
    cases = OrderedDict()
    # The classic: a pickle that would run a shell command when loaded by pickle.load.
    cases["os_system.bin"] = ({"archive/data.pkl": b"\x80\x02cos\nsystem\n" + p_tuple(p_str("echo pwned")) + b"R."},
                              "pickle global os.system is not allowed")
    cases["builtins_eval.bin"] = ({"archive/data.pkl": b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93" +
                                   p_tuple(p_str("1+1")) + b"R."}, "pickle global builtins.eval is not allowed")
    # os.system hidden inside an otherwise valid state dict, after a tensor.
    cases["os_system_nested.bin"] = ({"archive/data.pkl": good_pkl[:-2] + p_str("x") + b"cos\nsystem\n" +
                                      p_tuple(p_str("true")) + b"Ru.", "archive/data/0": floats},
                                     "pickle global os.system is not allowed")
    cases["unknown_opcode.bin"] = ({"archive/data.pkl": b"\x80\x02ccollections\nOrderedDict\n)R\xff."},
                                   "pickle opcode 0xff is unknown or not allowed")
    cases["inst_opcode.bin"] = ({"archive/data.pkl": b"\x80\x02(ios\nsystem\n."},
                                "pickle opcode 0x69 ('i') is unknown or not allowed")
    cases["truncated_pickle.bin"] = ({"archive/data.pkl": good_pkl[: len(good_pkl) // 2], "archive/data/0": floats},
                                     "truncated pickle")
    cases["storage_too_short.bin"] = ({"archive/data.pkl": p_state_dict(
        [("w", p_tensor("0", "FloatStorage", 6, 2, [2, 3], [3, 1]))]), "archive/data/0": floats},
        "storage shorter than the tensor needs")
    cases["storage_data_short.bin"] = ({"archive/data.pkl": p_state_dict(
        [("w", p_tensor("0", "FloatStorage", 8, 0, [2, 4], [4, 1]))]), "archive/data/0": floats},
        "holds 24 bytes but the pickle declares 8 F32 elements")
    cases["storage_missing.bin"] = ({"archive/data.pkl": good_pkl}, "storage entry archive/data/0 is missing")
    cases["bad_memo.bin"] = ({"archive/data.pkl": b"\x80\x02h\x07."}, "pickle memo index 7 was never stored")
    cases["not_a_dict.bin"] = ({"archive/data.pkl": b"\x80\x02K\x05."}, "not a state dict")
    cases["big_endian.bin"] = ({"archive/data.pkl": good_pkl, "archive/byteorder": b"big", "archive/data/0": floats},
                               "big-endian checkpoints are not supported")
    cases["byteorder_unknown.bin"] = ({"archive/data.pkl": good_pkl, "archive/byteorder": b"middle",
                                       "archive/data/0": floats}, "unknown byte order 'middle'")
    # Memory bombs: a few hundred bytes that would widen to gigabytes.
    cases["expanded_bomb.bin"] = ({"archive/data.pkl": p_state_dict(
        [("w", p_tensor("0", "FloatStorage", 6, 0, [1 << 24], [0]))]), "archive/data/0": floats},
        "stride-0 views or many keys sharing one storage")
    cases["shared_storage_bomb.bin"] = ({"archive/data.pkl": p_state_dict(
        [(f"w{k}", p_tensor("0", "FloatStorage", 6, 0, [40000, 6], [0, 1])) for k in range(200)]),
        "archive/data/0": floats}, "stride-0 views or many keys sharing one storage")
    cases["storage_declared_huge.bin"] = ({"archive/data.pkl": p_state_dict(
        [("w", p_tensor("0", "FloatStorage", 1 << 30, 0, [6], [1]))]), "archive/data/0": floats},
        "holds 24 bytes but the pickle declares 1073741824 F32 elements")
    cases["not_pytorch.zip"] = ({"hello.txt": b"just a zip file\n"}, "zip archive is not a PyTorch checkpoint")
    expected = []
    for name, (files, message) in cases.items():
        write_zip(os.path.join(folder, name), files)
        expected.append((name, message))
    with open(os.path.join(folder, "empty.bin"), "wb"):
        pass
    expected.append(("empty.bin", "empty file"))
    with open(os.path.join(folder, "text.bin"), "wb") as f:
        f.write(b"this is not a checkpoint\n")
    expected.append(("text.bin", "not a PyTorch checkpoint"))
    # A zip whose directory says data.pkl holds 2 GB (its 28 real bytes are stored, not deflated).
    lying = os.path.join(folder, "zip_size_lies.bin")
    write_zip(lying, {"archive/data.pkl": good_pkl, "archive/data/0": floats})
    raw = bytearray(open(lying, "rb").read())
    for sig, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = raw.find(sig)  # the first local header and the first directory entry are data.pkl's
        raw[at + size_at: at + size_at + 4] = struct.pack("<I", 0x7FFFFFF0)
    open(lying, "wb").write(bytes(raw))
    expected.append(("zip_size_lies.bin", "archive/data.pkl: the archive declares 2147483632 bytes but holds at most"))
    with open(os.path.join(folder, "README.txt"), "w") as f:
        f.write("# file<TAB>text the reader's error message must contain (tests/test_checkpoint.cpp)\n")
        for name, message in expected:
            f.write(f"{name}\t{message}\n")


# ---------------------------------------------------------------------------------------------
# SentencePiece

def corpus_lines(n):
    """The first n lines of corpus/train.txt (or of the committed corpus/train.txt.xz)."""
    path = os.path.join(HERE, "corpus", "train.txt")
    if os.path.exists(path):
        f = open(path, encoding="utf-8")
    else:
        f = lzma.open(path + ".xz", "rt", encoding="utf-8")
    with f:
        return [next(f).rstrip("\n") for _ in range(n)]


# Text written for this project (public domain), so the fixture model has pieces for accented,
# CJK and emoji characters as well as the English of the corpus.
EXTRA_TRAINING_TEXT = [
    "Le café de la gare ouvre à six heures ; l'été, on déjeune dehors.",
    "Élève, garçon, cœur, façade, naïve, Noël, hôtel, forêt, très, déjà.",
    "Der Bär läuft über die Straße, und die Bäume blühen schön früh.",
    "El niño comió piña y jalapeños en la montaña, señor.",
    "São Paulo, ação, coração, não, irmã.",
    "東京は日本の首都です。今日は天気がいいです。",
    "我们在学习自然语言处理。中文文本也需要分词。",
    "한국어 문장도 조금 있습니다.",
    "Emoji appear in text too: 😀 🎉 👍 ❤️ 🚀 and 🐍.",
    "Numbers like 3.14159, 2024, 1,000,000 and 42 are common.",
] * 20

SPM_SENTENCES = [
    "In the beginning God created the heaven and the earth.",
    "And the earth was without form, and void.",
    "The quick brown fox jumps over the lazy dog.",
    "a small domesticated carnivorous mammal with soft fur",
    "Hello, world!",
    "He said: \"Don't go there.\"",
    "It's 5 o'clock; we're late, aren't we?",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000 3.14",
    "UPPER CASE AND lower case And Mixed Case",
    "tabs\tand\nnewlines are whitespace",
    "   leading and trailing spaces   ",
    "multiple     spaces     inside",
    "",
    " ",
    "     ",
    "\t\n",
    "Le café est très bon.",
    "Élève naïve à l'hôtel près de la forêt.",
    "Der Bär läuft über die Straße.",
    "El niño comió piña.",
    "São Paulo e coração.",
    "Crème brûlée, façade, cœur, Noël.",
    "Zoë and Chloë visited Åland and Tromsø.",
    "ﬁne ligatures and ｆｕｌｌｗｉｄｔｈ letters",
    "東京は日本の首都です。",
    "我们在学习自然语言处理。",
    "한국어 문장",
    "日本語とEnglishの混在テキスト",
    "Emoji: 😀 🎉 👍",
    "I ❤️ NLP 🚀🐍",
    "🧬🦀 unseen emoji",
    "Greek: αβγ δέλτα Ωμέγα",
    "Cyrillic: Привет, мир!",
    "Arabic: مرحبا بالعالم",
    "Hebrew: שלום עולם",
    "Hindi: नमस्ते दुनिया",
    "Thai: สวัสดีชาวโลก",
    "math symbols ∑ ∫ √ ∞ ≠ ≤ ≥ ± × ÷",
    "punctuation !!! ??? ... --- ,,, ;;; :::",
    "brackets (round) [square] {curly} <angle>",
    "email someone@example.com and url https://example.org/path?q=1",
    "a",
    "I",
    ".",
    "the the the the the",
    "supercalifragilisticexpialidocious",
    "antidisestablishmentarianism",
    "And God said, Let there be light: and there was light.",
    "a word that means the same as another word",
    "To be, or not to be, that is the question.",
    "Mixed: café 東京 😀 done.",
    "ALL CAPS SENTENCE WITH NUMBERS 123 AND SYMBOLS #@!",
    "quotes ‘single’ “double” «guillemets»",
    "dashes – and — and ‐",
    "non-breaking\u00a0space and thin\u2009space",
    "zero\u200bwidth space",
    "combining e\u0301 versus precomposed é",
]


def long_sentence():
    words = ("the light shineth in darkness and the darkness comprehended it not "
             "café 東京 😀 ").split()
    out, k = [], 0
    while len(" ".join(out)) < 2000:
        out.append(words[k % len(words)])
        k += 1
    return " ".join(out)[:2000]


def make_spm():
    folder = os.path.join(OUT, "spm")
    os.makedirs(folder, exist_ok=True)
    lines = corpus_lines(4000)
    lines += EXTRA_TRAINING_TEXT
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=os.path.join(folder, "spm"), model_type="unigram",
        vocab_size=1000, character_coverage=0.9995, normalization_rule_name="nmt_nfkc",
        pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]",
        unk_piece="[UNK]", num_threads=1, minloglevel=2)
    os.remove(os.path.join(folder, "spm.vocab"))
    sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "spm.model"))
    size = sp.get_piece_size()
    with open(os.path.join(folder, "added_tokens.json"), "w") as f:
        json.dump({"[MASK]": size}, f)
    with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump({"bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "[UNK]", "sep_token": "[SEP]",
                   "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}, f, indent=2)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "vocab_type": "spm", "split_by_punct": False,
                   "model_max_length": 512, "tokenizer_class": "DebertaV2Tokenizer"}, f, indent=2)
    sentences = SPM_SENTENCES + [long_sentence()]
    cases = [{"text": s, "ids": sp.encode(s), "pieces": sp.encode(s, out_type=str)} for s in sentences]
    with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab_size": size, "mask_id": size, "sentences": cases}, f, ensure_ascii=False, indent=1)
    bad = os.path.join(OUT, "spm_bad")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(bad, "spm.model"), "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0fthis is not a SentencePiece model\n")


# ---------------------------------------------------------------------------------------------
# GPT-2 byte-level BPE, written independently of the C++ (no regex engine)

def bytes_to_unicode():
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def is_space(ch):
    return ch in "\t\n\x0b\x0c\r " or unicodedata.category(ch).startswith("Z")


def is_letter(ch):
    return unicodedata.category(ch).startswith("L")


def is_number(ch):
    return unicodedata.category(ch).startswith("N")


def pretokenize(text):
    """The GPT-2 pattern 's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
    as a hand-written scanner."""
    out, i, n = [], 0, len(text)
    while i < n:
        matched = None
        for c in ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d"):
            if text.startswith(c, i):
                matched = c
                break
        if matched is None:
            j = i + 1 if text[i] == " " and i + 1 < n else i
            for cls in (is_letter, is_number, lambda ch: not (is_space(ch) or is_letter(ch) or is_number(ch))):
                k = j
                while k < n and cls(text[k]):
                    k += 1
                if k > j:
                    matched = text[i:k]
                    break
        if matched is None:
            k = i
            while k < n and is_space(text[k]):
                k += 1
            if k == n or k - 1 > i:
                matched = text[i:k] if k == n else text[i:k - 1]
            else:
                matched = text[i:k]
        out.append(matched)
        i += len(matched)
    return out


def bpe(word, ranks):
    symbols = list(word)
    while len(symbols) > 1:
        best = None
        for a, b in zip(symbols, symbols[1:]):
            r = ranks.get((a, b))
            if r is not None and (best is None or r < best[0]):
                best = (r, a, b)
        if best is None:
            break
        _, a, b = best
        merged, k = [], 0
        while k < len(symbols):
            if k + 1 < len(symbols) and symbols[k] == a and symbols[k + 1] == b:
                merged.append(a + b)
                k += 2
            else:
                merged.append(symbols[k])
                k += 1
        symbols = merged
    return symbols


def learn_merges(words, count):
    vocab = {}
    for w in words:
        vocab[tuple(w)] = vocab.get(tuple(w), 0) + 1
    merges = []
    for _ in range(count):
        pairs = {}
        for w, c in vocab.items():
            for p in zip(w, w[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        new_vocab = {}
        for w, c in vocab.items():
            out, k = [], 0
            while k < len(w):
                if k + 1 < len(w) and (w[k], w[k + 1]) == best:
                    out.append(w[k] + w[k + 1])
                    k += 2
                else:
                    out.append(w[k])
                    k += 1
            new_vocab[tuple(out)] = new_vocab.get(tuple(out), 0) + c
        vocab = new_vocab
    return merges


BPE_SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "In the beginning God created the heaven and the earth.",
    "Hello, world!",
    "It's 5 o'clock; we're late, aren't we? I'd say they'll've gone.",
    "Don't SHOUT: 'quoted' words",
    "Numbers 12345 and 3.14 and 1,000",
    "   leading spaces",
    "trailing spaces   ",
    "multiple   spaces\tand\ttabs\nand\n\nnewlines",
    "",
    " ",
    "Le café est très bon.",
    "Der Bär läuft über die Straße.",
    "東京は日本の首都です。",
    "Emoji: 😀 🎉 👍",
    "Greek αβγ and Cyrillic Привет",
    "math ∑ √ ∞ ≠",
    "punctuation!!! ??? ...",
    "a",
    "supercalifragilisticexpialidocious",
    "non-breaking\u00a0space",
    "x²³ and ½ are numbers",
    "the the the the",
    "And God said, Let there be light: and there was light.",
    "mixed 東京 café 😀 end",
]


def make_bpe():
    folder = os.path.join(OUT, "bpe")
    os.makedirs(folder, exist_ok=True)
    b2u = bytes_to_unicode()
    lines = corpus_lines(3000)
    lines += EXTRA_TRAINING_TEXT[:10]
    words = ["".join(b2u[b] for b in piece.encode("utf-8")) for line in lines for piece in pretokenize(line)]
    merges = learn_merges(words, 300)
    vocab = OrderedDict()
    for special in ("[PAD]", "[CLS]", "[SEP]", "[UNK]"):
        vocab[special] = len(vocab)
    for b in range(256):
        vocab[b2u[b]] = len(vocab)
    for a, b in merges:
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    vocab["[MASK]"] = len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    ranks = {m: k for k, m in enumerate(merges)}
    cases = []
    for s in BPE_SENTENCES:
        tokens = []
        for piece in pretokenize(s):
            tokens += bpe("".join(b2u[b] for b in piece.encode("utf-8")), ranks)
        cases.append({"text": s, "tokens": tokens, "ids": [vocab.get(t, vocab["[UNK]"]) for t in tokens]})
    with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"sentences": cases}, f, ensure_ascii=False, indent=1)


def added_tokens_json(vocab_ids):
    return [{"id": i, "content": t, "single_word": False, "lstrip": t == "[MASK]", "rstrip": False,
             "normalized": False, "special": True} for t, i in vocab_ids]


def make_tokenizer_json():
    sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, "spm", "spm.model"))
    size = sp.get_piece_size()
    specials = [("[PAD]", 0), ("[CLS]", 1), ("[SEP]", 2), ("[UNK]", 3), ("[MASK]", size)]
    unigram = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added_tokens_json(specials),
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        # "first" and a right-only Strip: text glued to [MASK] gets no "▁", as spm.model gives it
        # (make_web_tokenizer.py, issue 59 class 4).
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
        "post_processor": None, "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
        "model": {"type": "Unigram", "unk_id": 3,
                  "vocab": [[sp.id_to_piece(i), sp.get_score(i)] for i in range(size)]},
    }
    folder = os.path.join(OUT, "tokenizer_json_unigram")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(unigram, f, ensure_ascii=False)
    # Sentences SentencePiece's nmt_nfkc normaliser leaves alone (tokenizer.json's "Precompiled"
    # charsmap is not applied by the C++ reader).
    simple = [s for s in SPM_SENTENCES if s and s == unicodedata.normalize("NFKC", s) and s == " ".join(s.split())
              and all(unicodedata.category(c) not in ("Cc", "Cf") for c in s)]
    with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"mask_id": size, "sentences": [{"text": s, "ids": sp.encode(s)} for s in simple]}, f,
                  ensure_ascii=False, indent=1)

    with open(os.path.join(OUT, "bpe", "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(OUT, "bpe", "merges.txt"), encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if not line.startswith("#version")]
    bpe_json = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": added_tokens_json([(t, vocab[t]) for t in ("[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]")]),
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "vocab": vocab, "merges": merges},
    }
    folder = os.path.join(OUT, "tokenizer_json_bpe")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(bpe_json, f, ensure_ascii=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    make_golden_checkpoints()
    make_view_checkpoints()
    make_byteorder_checkpoint()
    make_bad_checkpoints()
    make_spm()
    make_bpe()
    make_tokenizer_json()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    sys.exit(main())
