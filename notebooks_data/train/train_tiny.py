#!/usr/bin/env python3
"""Train the bundled tiny DeBERTa v3-style masked-language model (deberta-tiny).

Masked LM (15 % of the non-special tokens; of those 80 % -> [MASK], 10 % -> a random piece,
10 % unchanged), predicted through the Enhanced Mask Decoder and the tied-embedding LM head of
deberta_torch.py. float32, one CPU thread, seeded. Training stops at --max-steps or when the
--time-budget (seconds) is used up, whichever comes first; the learning-rate schedule
(linear warm-up, then linear decay to 0) follows the larger of step / --max-steps and
elapsed / --time-budget, so the decay completes either way; with --time-budget 0 the run is
reproducible step for step (one thread, fixed seeds).

    nice -n 10 python3 notebooks_data/train/train_tiny.py --out notebooks_data/models/deberta-tiny

Writes config.json, model.safetensors (F32, Hugging Face names), spm.model, tokenizer files and
training_log.json into --out.
"""
import argparse
import hashlib
import json
import math
import os
# One thread everywhere (the machine is shared): OpenBLAS / OpenMP read these at load time,
# before torch.set_num_threads(1) can take effect.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import random
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from lib import deberta_torch as dt  # noqa: E402

SPECIAL = {"pad": ("[PAD]", 0), "cls": ("[CLS]", 1), "sep": ("[SEP]", 2), "unk": ("[UNK]", 3),
           "mask": ("[MASK]", 4)}
N_SPECIAL = 5   # ids 0..4 are special; random replacements are drawn from 5..V-1



def openblas_core():
    """The kernels Debian's OpenBLAS (torch's BLAS here) runs, e.g. "SkylakeX"; None without it.
    They decide the float32 rounding of every product, so a run reproduces bit for bit only on the
    same kernels (make_zoo.py chooses them from the CPU's features: blas_env)."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return None

def model_config(vocab_size, args):
    """The Hugging Face config.json of the model (DebertaV2Config keys). "architectures" names
    the base model: the state dict has the base-model names (no "deberta." prefix) plus the
    EMD / LM head under the microsoft/DeBERTa names lm_predictions.lm_head.*."""
    return {
        "model_type": "deberta-v2",
        "architectures": ["DebertaV2Model"],
        "vocab_size": vocab_size,
        "hidden_size": args.hidden,
        "embedding_size": args.hidden,
        "num_hidden_layers": args.layers,
        "num_attention_heads": args.heads,
        "intermediate_size": args.intermediate,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": args.max_len,
        "type_vocab_size": 0,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-07,
        "relative_attention": True,
        "max_relative_positions": args.max_relative_positions,
        "position_buckets": args.position_buckets,
        "pos_att_type": ["p2c", "c2p"],
        "position_biased_input": False,
        "share_att_key": True,
        "norm_rel_ebd": "layer_norm",
        "pad_token_id": 0,
        "pooler_hidden_size": args.hidden,
        "pooler_dropout": 0,
        "pooler_hidden_act": "gelu",
        "torch_dtype": "float32",
    }


# The trained ablations of the mini Table 4 (docs/table4.md): each changes one component of the
# baseline recipe. "config" entries overwrite Hugging Face keys; "project" goes under the project
# key "deberta_explorer" (behaviour Hugging Face's config cannot express); "no_position_table"
# drops the absolute position table, so the LM head reads the last layer (no EMD).
VARIANTS = {
    "baseline": {},
    "no-c2p": {"config": {"pos_att_type": ["p2c"]}},
    "no-p2c": {"config": {"pos_att_type": ["c2p"]}},
    "no-emd": {"no_position_table": True},
    "p2p": {"project": {"p2p": True}},
    "p2c-paper": {"project": {"p2c_index": "paper"}},
    "c2c-abs": {"config": {"relative_attention": False, "pos_att_type": [],
                           "position_biased_input": True, "norm_rel_ebd": "none",
                           "position_buckets": -1, "max_relative_positions": -1}},
    # The two controls of -EMD (issue 27): absolute positions added at the input as BERT does
    # (position_biased_input; the LM head reads the last layer), and the same number of layer
    # applications as the baseline without any absolute position (the EMD's two applications of
    # the last layer with I_0 = H instead of H + P; no position table).
    "no-emd-abs": {"config": {"position_biased_input": True}},
    "no-emd-depth": {"no_position_table": True, "project": {"emd_position": False}},
    # Both at once (issue 42): absolute positions at the input as BERT does, and the EMD's two
    # applications of the last layer with I_0 = H, so the baseline's depth: where the absolute
    # positions enter, with the number of layer applications held equal.
    "no-emd-abs-depth": {"config": {"position_biased_input": True}, "project": {"emd_position": False}},
}


def apply_variant(cfg_dict, variant):
    """The config.json of a variant: the baseline's with the variant's changes."""
    v = VARIANTS[variant]
    cfg_dict = dict(cfg_dict)
    cfg_dict.update(v.get("config", {}))
    if v.get("project"):
        cfg_dict["deberta_explorer"] = dict(v["project"])
    return cfg_dict


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------

def encode_file(sp, path, max_len):
    """[CLS] pieces [SEP] per line, truncated to max_len tokens (the [SEP] is kept)."""
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    out = []
    for ids in sp.encode(lines):
        ids = [SPECIAL["cls"][1]] + ids[: max_len - 2] + [SPECIAL["sep"][1]]
        out.append(np.array(ids, dtype=np.int64))
    return lines, out


def make_batches(seqs, tokens_per_batch, rng):
    """Group sentences of similar length (sort within random pools of 100 batches), shuffle."""
    order = list(range(len(seqs)))
    rng.shuffle(order)
    batches = []
    pool = 100 * max(1, tokens_per_batch // 24)
    for p in range(0, len(order), pool):
        chunk = sorted(order[p:p + pool], key=lambda i: len(seqs[i]))
        cur, cur_max = [], 0
        for i in chunk:
            L = len(seqs[i])
            if cur and max(cur_max, L) * (len(cur) + 1) > tokens_per_batch:
                batches.append(cur)
                cur, cur_max = [], 0
            cur.append(i)
            cur_max = max(cur_max, L)
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


def pad(seqs):
    n = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), n), dtype=np.int64)
    am = np.zeros((len(seqs), n), dtype=np.int64)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = s
        am[b, :len(s)] = 1
    return ids, am


def mask_tokens(ids, am, vocab_size, rng: np.random.Generator, p=0.15):
    """BERT masking on the non-special tokens: choose 15 % (at least one per sentence);
    80 % -> [MASK], 10 % -> random piece, 10 % unchanged. Returns (inputs, labels) with
    labels = -100 where not chosen."""
    special = ids < N_SPECIAL
    cand = (~special) & (am == 1)
    u = rng.random(ids.shape)
    u[~cand] = 2.0
    chosen = u < p
    # at least one masked token per sentence that has a candidate
    for b in range(ids.shape[0]):
        if not chosen[b].any() and cand[b].any():
            chosen[b, int(np.argmin(u[b]))] = True
    labels = np.where(chosen, ids, -100)
    inputs = ids.copy()
    r = rng.random(ids.shape)
    to_mask = chosen & (r < 0.8)
    to_rand = chosen & (r >= 0.8) & (r < 0.9)
    inputs[to_mask] = SPECIAL["mask"][1]
    inputs[to_rand] = rng.integers(N_SPECIAL, vocab_size, size=int(to_rand.sum()))
    return inputs, labels


def length_groups(seqs, batch_tokens=4096):
    """The sentence indices of each held-out batch: sorted by length, a batch closed when the next
    sentence would take it past BATCH_TOKENS (padded tokens)."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out, cur = [], []
    for i in order:
        if cur and len(seqs[i]) * (len(cur) + 1) > batch_tokens:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def heldout_batches(seqs, vocab_size, seed, batch_tokens=4096):
    """Deterministic masking of the held-out sentences (fixed seed, 15 %, 80/10/10)."""
    rng = np.random.default_rng(seed)
    out = length_groups(seqs, batch_tokens)
    res = []
    for b in out:
        ids, am = pad([seqs[i] for i in b])
        inp, lab = mask_tokens(ids, am, vocab_size, rng)
        res.append((inp, am, lab))
    return res


def evaluate(model, batches, ablation=None, use_emd=None, topk=5):
    """Mean cross-entropy, top-1 and top-k accuracy over the masked tokens."""
    model.eval()
    tot, nll, c1, ck = 0, 0.0, 0, 0
    dtype = model.embeddings.word_embeddings.weight.dtype
    with torch.no_grad():
        for inp, am, lab in batches:
            lab_t = torch.from_numpy(lab)
            pos = torch.nonzero(lab_t >= 0, as_tuple=True)
            res = model(torch.from_numpy(inp), torch.from_numpy(am), ablation=ablation,
                        use_emd=use_emd, lm_positions=pos)
            logits = res["logits"].to(torch.float64)
            y = lab_t[pos]
            nll += float(F.cross_entropy(logits, y, reduction="sum"))
            top = logits.topk(topk, dim=-1).indices
            c1 += int((top[:, 0] == y).sum())
            ck += int((top == y[:, None]).any(-1).sum())
            tot += int(y.numel())
    model.train()
    return {"masked_tokens": tot, "cross_entropy": nll / tot, "top1": c1 / tot, "top5": ck / tot}


def evaluate_saved_float64(model, batches, wdtype):
    """evaluate() of the weights as saved (rounded to wdtype), computed in float64."""
    import copy
    m = copy.deepcopy(model)
    m._row_cache = {}
    m = m.to(torch.float64)
    tdt = torch.float16 if wdtype == np.float16 else torch.float32
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.to(tdt).to(torch.float64))
    return evaluate(m, batches)


# --------------------------------------------------------------------------------------------
# model init and files
# --------------------------------------------------------------------------------------------

def init_weights(model, std=0.02):
    for name, p in model.named_parameters():
        if "LayerNorm.weight" in name:
            torch.nn.init.ones_(p)
        elif name.endswith("bias"):
            torch.nn.init.zeros_(p)
        else:
            torch.nn.init.normal_(p, 0.0, std)


def build_model(cfg_dict, variant):
    """The float32 DebertaV2 (with EMD / LM head) of a variant's config.json, not initialised."""
    model = dt.DebertaV2(dt.DebertaConfig.from_dict(cfg_dict, with_lm_head=True))
    if VARIANTS[variant].get("no_position_table"):
        del model.embeddings.position_embeddings
    return model


def baseline_initial_state(base_cfg_dict, seed):
    """The baseline's initial tensors of seed `seed`: torch.manual_seed(seed), then init_weights
    over the baseline model's parameters in their order. {name: tensor}."""
    torch.manual_seed(seed)
    full = build_model(base_cfg_dict, "baseline")
    init_weights(full)
    return {n: p.detach().clone() for n, p in full.named_parameters()}


def init_shared(model, base_state, seed, std=0.02):
    """One initialisation per seed (issue 27): every parameter the variant shares with the baseline
    (same name and shape) starts from the baseline's initial tensor of this seed; a parameter the
    baseline lacks is drawn from a generator of its own, seeded by (seed, name), so it does not move
    any other tensor's draw. Returns the names of the parameters not taken from the baseline."""
    own = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            src = base_state.get(name)
            if src is not None and src.shape == p.shape:
                p.copy_(src)
                continue
            own.append(name)
            if "LayerNorm.weight" in name:
                p.fill_(1.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                g = torch.Generator().manual_seed(
                    int.from_bytes(hashlib.sha256(("%d:%s" % (seed, name)).encode()).digest()[:8], "little"))
                p.copy_(torch.randn(p.shape, generator=g) * std)
    return own


def common_parameter_names(base_cfg_dict):
    """The parameter names every variant of VARIANTS has (sorted): the tensors init_sha256 covers."""
    names = None
    for v in VARIANTS:
        m = build_model(apply_variant(base_cfg_dict, v), v)
        cur = {n for n, _ in m.named_parameters()}
        names = cur if names is None else names & cur
    return sorted(names)


def init_sha256(model, names):
    """sha256 over the initial tensors `names` of `model`, in that order: name, shape and the
    float32 little-endian bytes of each."""
    h = hashlib.sha256()
    params = dict(model.named_parameters())
    for n in names:
        t = params[n].detach().to(torch.float32).contiguous().numpy()
        h.update(n.encode() + b"\0" + repr(tuple(t.shape)).encode() + b"\0")
        h.update(t.astype("<f4").tobytes())
    return h.hexdigest()


def write_tokenizer_files(out, max_len):
    specials = {k: v[0] for k, v in SPECIAL.items()}
    tok_cfg = {
        "tokenizer_class": "DebertaV2Tokenizer",
        "vocab_type": "spm",
        "do_lower_case": False,
        "split_by_punct": False,
        "model_max_length": max_len,
        "bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "[UNK]", "sep_token": "[SEP]",
        "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]",
        "sp_model_kwargs": {}, "add_prefix_space": True,
        # The ids of the special pieces (all of them are pieces of spm.model, none is added
        # on top of it). [MASK] strips the space on its left: the lone "▁" that SentencePiece
        # emits before a user-defined piece is dropped (see notebooks_data/README.md).
        "added_tokens_decoder": {
            str(i): {"content": t, "lstrip": t == "[MASK]", "normalized": False, "rstrip": False,
                     "single_word": False, "special": True}
            for t, i in sorted(SPECIAL.values(), key=lambda x: x[1])
        },
    }
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok_cfg, f, indent=2)
    stm = {"bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "[UNK]", "sep_token": "[SEP]",
           "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump(stm, f, indent=2)
    return specials


def init_from_model(model, init_dir, sp):
    """Warm start (issue 54, the multilingual model's second vocabulary): every parameter of the
    model in `init_dir` (config.json, model.safetensors, spm.model) whose name and shape match is
    copied; the word embeddings and the LM head's bias are copied row by row for every piece both
    vocabularies hold (matched by the piece's text), the new pieces keep their fresh initialisation.
    Returns {"copied": n tensors, "pieces_shared": n, "pieces_new": n}."""
    import sentencepiece as spm_mod
    old_sp = spm_mod.SentencePieceProcessor(model_file=os.path.join(init_dir, "spm.model"))
    old_ids = {old_sp.id_to_piece(i): i for i in range(old_sp.get_piece_size())}
    state = dt.load_safetensors(os.path.join(init_dir, "model.safetensors"))
    rows = {"embeddings.word_embeddings.weight": 0, "lm_predictions.lm_head.bias": 0}
    pairs = [(i, old_ids[sp.id_to_piece(i)]) for i in range(sp.get_piece_size()) if sp.id_to_piece(i) in old_ids]
    copied = 0
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name not in state:
                continue
            src = torch.from_numpy(np.asarray(state[name], dtype=np.float32))
            if name in rows:
                new_idx = torch.tensor([a for a, _ in pairs])
                old_idx = torch.tensor([b for _, b in pairs])
                p[new_idx] = src[old_idx]
                copied += 1
            elif src.shape == p.shape:
                p.copy_(src)
                copied += 1
    return {"copied": copied, "pieces_shared": len(pairs), "pieces_new": sp.get_piece_size() - len(pairs)}


def save_model(model, out, cfg_dict, dtype=np.float32):
    sd = dt.state_dict_numpy(model, dtype)
    dt.save_safetensors(os.path.join(out, "model.safetensors"), sd, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg_dict, f, indent=2)


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def resume_args(args):
    """The arguments a resumed run must share with the run that wrote the checkpoint."""
    skip = {"resumable", "exit_after_checkpoint", "test", "stop_after"}
    return {k: v for k, v in sorted(vars(args).items()) if k not in skip}


def main():
    ap = argparse.ArgumentParser(description="train deberta-tiny")
    ap.add_argument("--train", default=os.path.join(HERE, "corpus", "train.txt"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "corpus", "heldout.txt"))
    ap.add_argument("--spm", default=os.path.join(HERE, "vocab", "spm.model"))
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--hidden", type=int, default=192)
    ap.add_argument("--intermediate", type=int, default=768)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--position-buckets", type=int, default=32)
    ap.add_argument("--max-relative-positions", type=int, default=128)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--time-budget", type=float, default=3300.0,
                    help="seconds of training (0: none; then the run is step-for-step reproducible)")
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--eval-sentences", type=int, default=2000)
    ap.add_argument("--bench", type=int, default=0, help="time this many steps and exit")
    ap.add_argument("--variant", default="baseline", choices=sorted(VARIANTS),
                    help="the component switched for the trained ablations (docs/table4.md)")
    ap.add_argument("--weights-dtype", default="f32", choices=["f32", "f16"],
                    help="dtype of model.safetensors (f16 keeps a zoo model under 8 MB)")
    ap.add_argument("--shared-init", action="store_true",
                    help="start from the baseline's initial tensors of --seed for every shared tensor "
                         "(the zoo's one initialisation per seed, issue 27)")
    ap.add_argument("--eval-seed", type=int, default=-1,
                    help="seed of the held-out masks (-1: --seed + 1); fixed across runs for paired comparisons")
    ap.add_argument("--resumable", action="store_true",
                    help="at every evaluation write OUT/resume.pt (weights, optimizer, step, data order, random "
                         "states), and continue from it when it exists: a long run can span several sessions and "
                         "ends with the bits of an uninterrupted one; removed when the run finishes")
    ap.add_argument("--init-from", default="",
                    help="warm start from this model directory (config.json, model.safetensors, spm.model): "
                         "matching tensors copied, embedding rows matched by piece (init_from_model)")
    ap.add_argument("--exit-after-checkpoint", type=int, default=0,
                    help="(testing the resume) exit right after writing the checkpoint of this step")
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop after this many steps (logged and evaluated as usual), keeping the schedule of "
                         "--max-steps: the first steps of a run exactly (rerun_zoo_start.py). With --resumable "
                         "the run pauses there instead: the checkpoint of that step is kept (a multiple of "
                         "--eval-every, so it is one of the run's own checkpoints) and the next start continues "
                         "it; no test evaluation until the run reaches --max-steps")
    ap.add_argument("--test", action="store_true",
                    help="after training, evaluate the saved weights in float64 on the held-out sentences "
                         "after the first --eval-sentences (the test split; the curves use the first ones)")
    args = ap.parse_args()
    if args.stop_after < 0:
        ap.error("--stop-after must be at least 0, got %d" % args.stop_after)
    if args.resumable and args.stop_after > 0 and args.stop_after % args.eval_every != 0:
        # A pause anywhere else would add an evaluation to the curve that a run straight through lacks.
        ap.error("--stop-after %d with --resumable must be a multiple of --eval-every (%d): the run pauses at one "
                 "of its checkpoints" % (args.stop_after, args.eval_every))
    # --resumable --stop-after N: pause at step N (checkpoint kept), not stop (stop_after of rerun_zoo_start).
    pause_at = args.stop_after if args.resumable and 0 < args.stop_after < args.max_steps else 0
    stop_after = 0 if args.resumable else args.stop_after

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np_rng = np.random.default_rng(args.seed)
    py_rng = random.Random(args.seed)
    t_start = time.time()

    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=args.spm)
    for key, (piece, i) in SPECIAL.items():
        assert sp.piece_to_id(piece) == i, (piece, sp.piece_to_id(piece), i)
    V = sp.get_piece_size()
    _, train = encode_file(sp, args.train, args.max_len)
    held_lines, held = encode_file(sp, args.heldout, args.max_len)
    print("train %d sentences, %d tokens; held-out %d sentences" %
          (len(train), sum(len(s) for s in train), len(held)), flush=True)
    eval_seed = args.eval_seed if args.eval_seed >= 0 else args.seed + 1
    held_eval = heldout_batches(held[:args.eval_sentences], V, seed=eval_seed)

    base_cfg = model_config(V, args)
    cfg_dict = apply_variant(base_cfg, args.variant)
    model = build_model(cfg_dict, args.variant)
    own_init = []
    if args.shared_init:
        own_init = init_shared(model, baseline_initial_state(base_cfg, args.seed), args.seed)
    else:
        init_weights(model)
    warm = None
    if args.init_from:
        warm = init_from_model(model, args.init_from, sp)
        print("warm start from %s: %s" % (args.init_from, warm), flush=True)
    common = common_parameter_names(base_cfg)
    init_hash = init_sha256(model, common)
    print("init_sha256 %s over %d shared tensors; own init: %s" % (init_hash, len(common), own_init or "none"),
          flush=True)
    wdtype = np.float16 if args.weights_dtype == "f16" else np.float32
    if args.weights_dtype == "f16":
        cfg_dict["torch_dtype"] = "float16"   # what model.safetensors holds (training is float32)
    print("variant %s: runs the EMD: %s" % (args.variant, model.runs_emd()), flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    print("parameters: %d (%.2f MB as F32)" % (n_params, n_params * 4 / 1e6), flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-6)

    def progress(step, elapsed):
        """Fraction of the run done: by steps, or by the time budget if that runs out first."""
        p = step / args.max_steps
        if args.time_budget > 0:
            p = max(p, elapsed / args.time_budget)
        return min(1.0, p)

    def lr_at(step, elapsed):
        """Linear warm-up over --warmup steps, then linear decay to 0 at progress 1."""
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p0 = args.warmup / args.max_steps
        return args.lr * max(0.0, (1.0 - progress(step, elapsed)) / (1.0 - p0))

    log = {"config": cfg_dict, "args": vars(args), "variant": args.variant, "seed": args.seed,
           "parameters": n_params, "init_sha256": init_hash, "init_sha256_tensors": len(common),
           "init_own_tensors": own_init, "eval_seed": eval_seed, "warm_start": warm,
           "train_sentences": len(train), "train_tokens": int(sum(len(s) for s in train)),
           "heldout_sentences_eval": len(held[:args.eval_sentences]),
           "loss_curve": [], "heldout_curve": [], "openblas_core": openblas_core(),
           "torch_version": torch.__version__}
    os.makedirs(args.out, exist_ok=True)

    step, epoch, t_train0 = 0, 0, time.time()
    run_loss, run_n = 0.0, 0
    done = False
    resume_path = os.path.join(args.out, "resume.pt")
    batches, next_batch = None, 0
    if args.resumable and os.path.exists(resume_path):
        r = torch.load(resume_path)
        if r["init_sha256"] != init_hash or r["args"] != resume_args(args):
            sys.exit("%s: written by another run (other arguments or initialisation); remove it to start over" % resume_path)
        if r["log"].get("openblas_core") != log["openblas_core"]:
            sys.exit("%s: written on OpenBLAS kernels %s, this process runs %s: the rest of the run would not be the "
                     "bits of a run straight through (set OPENBLAS_CORETYPE=%s, or remove it to start over)"
                     % (resume_path, r["log"].get("openblas_core"), log["openblas_core"], r["log"].get("openblas_core")))
        model.load_state_dict(r["model"])
        opt.load_state_dict(r["optimizer"])
        step, epoch, run_loss, run_n = r["step"], r["epoch"], r["run_loss"], r["run_n"]
        batches, next_batch = r["batches"], r["next_batch"]
        py_rng.setstate(r["py_rng"])
        np_rng.bit_generator.state = r["np_rng"]
        torch.set_rng_state(r["torch_rng"])
        log = r["log"]
        t_train0 = time.time() - r["train_seconds"]
        print("resumed from %s at step %d (epoch %d, batch %d)" % (resume_path, step, epoch, next_batch), flush=True)
        if pause_at and step >= pause_at:
            print("paused: the checkpoint is at step %d, at or past --stop-after %d (of %d steps); run again with a "
                  "later --stop-after, or none, to continue" % (step, pause_at, args.max_steps), flush=True)
            return
    model.train()
    while not done:
        if batches is None:
            batches, next_batch = make_batches(train, args.batch_tokens, py_rng), 0
        for bi in range(next_batch, len(batches)):
            b = batches[bi]
            ids, am = pad([train[i] for i in b])
            inp, lab = mask_tokens(ids, am, V, np_rng)
            lab_t = torch.from_numpy(lab)
            pos = torch.nonzero(lab_t >= 0, as_tuple=True)
            lr = lr_at(step, time.time() - t_train0)
            for g in opt.param_groups:
                g["lr"] = lr
            res = model(torch.from_numpy(inp), torch.from_numpy(am), lm_positions=pos)
            loss = F.cross_entropy(res["logits"], lab_t[pos])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            run_loss += float(loss)
            run_n += 1
            elapsed = time.time() - t_train0
            if args.bench and step == args.bench:
                print("bench: %d steps in %.1f s -> %.3f s/step" % (step, elapsed, elapsed / step))
                return
            if step % 100 == 0:
                log["loss_curve"].append({"step": step, "epoch": epoch, "seconds": round(elapsed, 1),
                                          "lr": lr, "train_loss": run_loss / run_n})
                print("step %6d ep %d  %.0fs  lr %.2e  loss %.4f" %
                      (step, epoch, elapsed, lr, run_loss / run_n), flush=True)
                run_loss, run_n = 0.0, 0
            stop = step >= args.max_steps or (args.time_budget > 0 and elapsed >= args.time_budget) or \
                (stop_after > 0 and step >= stop_after)
            if step % args.eval_every == 0 or stop:
                ev = evaluate(model, held_eval)
                ev.update({"step": step, "seconds": round(elapsed, 1)})
                log["heldout_curve"].append(ev)
                print("  held-out: ce %.4f top1 %.4f top5 %.4f" % (ev["cross_entropy"], ev["top1"], ev["top5"]),
                      flush=True)
                log.update({"steps": step, "epochs_completed": epoch,
                            "train_seconds": round(elapsed, 1),
                            "wall_seconds_total": round(time.time() - t_start, 1)})
                save_model(model, args.out, cfg_dict, wdtype)
                with open(os.path.join(args.out, "training_log.json"), "w") as f:
                    json.dump(log, f, indent=1)
                if args.resumable and not stop:
                    # Everything the next step reads: the rest of this epoch's batches, the random
                    # states after this step, the optimizer's moments (written atomically).
                    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
                                "epoch": epoch, "run_loss": run_loss, "run_n": run_n, "batches": batches,
                                "next_batch": bi + 1, "py_rng": py_rng.getstate(),
                                "np_rng": np_rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                                "log": log, "train_seconds": elapsed, "init_sha256": init_hash,
                                "args": resume_args(args)}, resume_path + ".tmp")
                    os.replace(resume_path + ".tmp", resume_path)
                    if args.exit_after_checkpoint == step:
                        print("exit after the checkpoint of step %d (--exit-after-checkpoint)" % step, flush=True)
                        return
                    if pause_at == step:
                        print("paused at step %d of %d (--stop-after): %s kept; start the same command again to "
                              "continue" % (step, args.max_steps, resume_path), flush=True)
                        return
            if stop:
                log["stopped_by"] = ("max_steps" if step >= args.max_steps else
                                     "stop_after" if stop_after > 0 and step >= stop_after else "time_budget")
                done = True
                break
        else:
            epoch += 1
        batches = None

    log.update({"steps": step, "epochs_completed": epoch, "train_seconds": round(time.time() - t_train0, 1),
                "wall_seconds_total": round(time.time() - t_start, 1),
                "final_train_loss": log["loss_curve"][-1]["train_loss"] if log["loss_curve"] else None,
                "final_heldout": log["heldout_curve"][-1]})
    save_model(model, args.out, cfg_dict, wdtype)
    if args.test:
        test_seqs = held[args.eval_sentences:]
        t0 = time.time()
        ev = evaluate_saved_float64(model, heldout_batches(test_seqs, V, seed=eval_seed + 1), wdtype)
        ev.update({"sentences": len(test_seqs), "mask_seed": eval_seed + 1, "seconds": round(time.time() - t0, 1),
                   "precision": "float64 of the saved %s weights" % args.weights_dtype})
        log["test"] = ev
        print("test (float64, %d sentences): ce %.6f top1 %.4f top5 %.4f" %
              (len(test_seqs), ev["cross_entropy"], ev["top1"], ev["top5"]), flush=True)
    shutil.copyfile(args.spm, os.path.join(args.out, "spm.model"))
    write_tokenizer_files(args.out, args.max_len)
    with open(os.path.join(args.out, "training_log.json"), "w") as f:
        json.dump(log, f, indent=1)
    if os.path.exists(resume_path):
        os.remove(resume_path)  # finished: the saved weights and the log are the run
    print("done: %d steps, %.0f s" % (step, log["train_seconds"]), flush=True)


if __name__ == "__main__":
    main()
