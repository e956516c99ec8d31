#!/usr/bin/env python3
"""Random differential harness: the C++ core against Hugging Face transformers v4.27.1 in float64.

For N seeded random configurations (model_type deberta and deberta-v2, every config key the two
Hugging Face model classes read, in every form they accept) this script

  1. builds the Hugging Face `DebertaModel` / `DebertaV2Model` from the case's config.json,
     in float64, eval mode, with random weights scaled up (normal, std --std) so that attention
     is far from uniform;
  2. runs it on a random input (length 1..80, padding at the end, in the middle, at the start or
     everywhere, random token types) with output_hidden_states and output_attentions;
  3. writes the case (config.json, model.safetensors under the HF state-dict names,
     inputs.safetensors) and runs `deberta dump` on it;
  4. compares `embedding_output`, every `layer.{l}.output` and `layer.{l}.attn_probs` (and, when
     relative attention is on, `rel_embeddings` and `rel_pos`) with Hugging Face's hidden_states,
     attentions, encoder.get_rel_embedding() and encoder.get_rel_pos(), on the rows of the valid
     (attention_mask = 1) positions. Padding rows are well defined (notebooks_data/golden/README.md)
     but not meaningful; their difference is logged, not judged (except in all-padding inputs,
     where every row is judged).

Outcome of a case:
  agree          every compared tensor within --tol (default 1e-10, max abs)
  agree*         agree after the documented log-bucket rounding rule: the core's rel_pos differs
                 from Hugging Face's float64 arithmetic exactly where the mathematically exact
                 bucket differs from it (docs/bucket-rounding.md); Hugging Face is then rerun with
                 exact buckets and must agree to --tol
  core-refused   the core refused the config/input with a one-line error (printed) where Hugging
                 Face ran it: a feature the core does not implement or a config it rejects.
                 v1 refusals for missing pos_proj / pos_q_proj (p2p) are retried with those
                 unused tensors added, and that outcome is logged too
  hf-refused     Hugging Face raised (or produced non-finite values); the core accepted the config
                 (it ran, or stopped at the weights, which HF could not make) (skipped)
  both-refused   both refused the config
  DISAGREE       anything else: a tensor beyond --tol, a missing tensor, or a core crash (a signal,
                 a timeout, or an error that is not one "deberta: ..." line)
Exit code 1 if any case DISAGREEs.

Reference code: transformers v4.27.1 (the xiaojunjun65/transformers-mlu_4.27.1 snapshot), not
part of the project; extract it and point --transformers at the directory holding `transformers/`:

    git --git-dir /work/.mirror/xiaojunjun65+transformers-mlu_4.27.1/repo archive HEAD src/transformers \\
        | tar -x -C /tmp/hf4271
    OMP_NUM_THREADS=1 nice -n 10 /usr/bin/python3 notebooks_data/crosscheck/hf_random.py \\
        --transformers /tmp/hf4271/src --n 200 --seed 1

What is changed in the reference at run time (nothing is written to its files):
  * imports: `huggingface_hub` (not in Debian 12) and `torch_mlu` (the snapshot's fork imports it)
    are stubbed in sys.modules when missing; `transformers.dependency_versions_check` is replaced
    by an empty module (it insists on filelock/tokenizers versions, irrelevant to the forward pass).
  * float32 islands (see notebooks_data/golden/README.md, "float32 islands"): the v1 LayerNorm's
    `.float()` becomes `.double()` and the scale constants `torch.tensor(..., dtype=torch.float)`
    become float64; torch's default dtype is float64, so the v2 log-bucket arithmetic is float64.
    --keep-float32 runs the reference unchanged (default dtype float32, model .double()) to
    measure what the islands cost.
"""
import argparse
import importlib.util
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import types
from fractions import Fraction

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "notebooks_data"))
from lib.deberta_torch import load_safetensors, save_safetensors  # noqa: E402

torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------
# [SECTION] importing the reference with Debian's packages
# ---------------------------------------------------------------------------------------------

def _stub_module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__harness_stub__ = True
    sys.modules[name] = m
    return m


def install_import_stubs():
    """Stub what transformers v4.27.1 imports at module level but the forward pass never uses.
    Returns the names stubbed (for the log)."""
    stubbed = []

    def unavailable(*_a, **_k):
        raise RuntimeError("huggingface_hub is stubbed by hf_random.py (no downloads)")

    if importlib.util.find_spec("huggingface_hub") is None:
        errors = {n: type(n, (Exception,), {}) for n in
                  ("EntryNotFoundError", "LocalEntryNotFoundError", "RepositoryNotFoundError", "RevisionNotFoundError")}
        hub = _stub_module("huggingface_hub", CommitOperationAdd=object, create_commit=unavailable,
                           create_repo=unavailable, get_hf_file_metadata=unavailable, hf_hub_download=unavailable,
                           hf_hub_url=unavailable, whoami=unavailable, model_info=unavailable)
        hub.utils = _stub_module("huggingface_hub.utils", build_hf_headers=unavailable,
                                 hf_raise_for_status=unavailable, enable_progress_bars=lambda: None,
                                 disable_progress_bars=lambda: None, **errors)
        hub.file_download = _stub_module("huggingface_hub.file_download",
                                         REGEX_COMMIT_HASH=re.compile(r"^[0-9a-f]{40}$"), http_get=unavailable)
        stubbed.append("huggingface_hub")
    if importlib.util.find_spec("torch_mlu") is None:
        _stub_module("torch_mlu")
        stubbed.append("torch_mlu")
    _stub_module("transformers.dependency_versions_check", dep_version_check=lambda *a, **k: None)
    stubbed.append("transformers.dependency_versions_check")
    return stubbed


# (old, new, expected count): the float32 islands of the float64 run, lifted to float64.
FLOAT64_PATCHES = {
    "transformers.models.deberta.modeling_deberta": [
        ("hidden_states = hidden_states.float()", "hidden_states = hidden_states.double()", 1),  # DebertaLayerNorm
        ("dtype=torch.float)", "dtype=torch.float64)", 4),  # q_bias, v_bias, the two scale constants
    ],
    "transformers.models.deberta_v2.modeling_deberta_v2": [
        ("dtype=torch.float)", "dtype=torch.float64)", 3),  # the c2c, c2p, p2c scale constants
    ],
}


def load_patched_module(name, patches):
    """Import module `name` from its source with textual replacements (each must match exactly
    `count` times, so a different transformers version fails loudly instead of running unpatched)."""
    spec = importlib.util.find_spec(name)
    with open(spec.origin, encoding="utf-8") as f:
        src = f.read()
    for old, new, count in patches:
        found = src.count(old)
        if found != count:
            sys.exit(f"{spec.origin}: expected {count} x {old!r}, found {found}; not the transformers v4.27.1 "
                     "source this harness was written for")
        src = src.replace(old, new)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    exec(compile(src, spec.origin, "exec"), mod.__dict__)
    return mod


class Reference:
    """The two Hugging Face model classes and their modules."""

    def __init__(self, transformers_dir, keep_float32):
        if not os.path.isfile(os.path.join(transformers_dir, "transformers", "__init__.py")):
            sys.exit(f"--transformers {transformers_dir}: no transformers/__init__.py there (see the usage above)")
        sys.path.insert(0, transformers_dir)
        self.stubbed = install_import_stubs()
        import transformers
        self.version = transformers.__version__
        if self.version != "4.27.1":
            print(f"warning: transformers {self.version}, the harness was written for 4.27.1", file=sys.stderr)
        names = list(FLOAT64_PATCHES)
        if keep_float32:
            self.m1, self.m2 = (importlib.import_module(n) for n in names)
        else:
            self.m1, self.m2 = (load_patched_module(n, FLOAT64_PATCHES[n]) for n in names)
        from transformers.models.deberta.configuration_deberta import DebertaConfig
        from transformers.models.deberta_v2.configuration_deberta_v2 import DebertaV2Config
        self.classes = {"deberta": (DebertaConfig, self.m1.DebertaModel),
                        "deberta-v2": (DebertaV2Config, self.m2.DebertaV2Model)}
        self.origin = os.path.dirname(transformers.__file__)


# ---------------------------------------------------------------------------------------------
# [SECTION] random configurations and inputs
# ---------------------------------------------------------------------------------------------

# Activation names: Hugging Face v4.27.1's ACT2FN keys, plus names it does not know, which both must
# refuse (gelu_accurate, laplace and relu2 came in later releases; "swiglu" never).
ACTIVATIONS = ["gelu"] * 10 + ["relu"] * 3 + ["tanh"] * 3 + ["gelu_new"] * 3 + ["gelu_fast"] * 3 + [
    "gelu_python", "gelu_pytorch_tanh", "quick_gelu", "relu6", "sigmoid", "silu", "swish", "mish", "linear",
    "gelu_10", "gelu_accurate", "laplace", "relu2", "swiglu"]

# pos_att_type in every form a config may carry: "a|b" strings (lower-cased, split, stripped by
# HF, empty parts kept), lists (taken verbatim), null, absent.
POS_ATT_TYPES = [
    "c2p|p2c", "p2c|c2p", "c2p", "p2c", "C2P|P2C", " c2p | p2c ", "c2p|p2c|", "c2p||p2c", "|c2p", "",
    "c2p|p2c|p2p", "p2p", "c2p|p2p", "p2c|p2p", "c2p|c2p", "none", "c2p,p2c", "c2p|\tp2c",
    ["c2p", "p2c"], ["p2c", "c2p"], ["c2p"], ["p2c"], [], ["C2P", "P2C"], [" c2p", "p2c"], ["c2p", "p2c", "p2p"],
    ["c2p", "c2p"], ["c2p|p2c"], None, "<absent>",
]
NORM_REL_EBD = ["none", "none", "layer_norm", "layer_norm", "layer_norm", "layer_norm|none", " Layer_Norm ",
                "none|layer_norm", "", ["layer_norm"], "batch_norm", "<absent>", "<absent>"]

# (position_buckets, max_relative_positions, |r|) where Hugging Face's float64 ceiling of the log
# bucket is one off the exact one (found by scanning |r| < 80), to exercise agree*.
ROUNDING_SETTINGS = [(18, 13, 16), (18, 101, 30), (20, 81, 20), (20, 81, 40), (21, 271, 30), (32, 129, 32),
                     (32, 129, 64), (36, 25, 32), (38, 153, 76), (44, 177, 44), (50, 65, 40), (54, 37, 48),
                     (56, 225, 56), (62, 249, 62),
                     # max_relative_positions - 1 < position_buckets // 2 (log of a base < 1; not in
                     # docs/bucket-rounding.md, whose scan starts above it)
                     (12, 5, 9), (14, 2, 49), (24, 9, 27), (24, 10, 16), (48, 17, 54), (60, 21, 45)]


def _pick(rng, options, weights=None):
    return rng.choices(options, weights=weights)[0] if weights else rng.choice(options)


# The size defaults of the config class a model_type names (transformers v4.27.1): a config.json
# that omits a key gets these, not the other version's (issue 28, class 18).
CLASS_DEFAULTS = {
    "deberta": {"vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                "intermediate_size": 3072},
    "deberta-v2": {"vocab_size": 128100, "hidden_size": 1536, "num_hidden_layers": 24, "num_attention_heads": 24,
                   "intermediate_size": 6144},
}


def cfg_value(c, key):
    """A size key of a raw config, or its class default when the config omits it."""
    return c[key] if key in c else CLASS_DEFAULTS[c["model_type"]][key]


def draw_config(rng):
    """One random raw config.json (a dict exactly as written to disk) and the least input length
    that reaches the relative positions the config was drawn for."""
    min_len = 1
    v1 = rng.random() < 0.45
    c = {"model_type": "deberta" if v1 else "deberta-v2"}
    defaults = CLASS_DEFAULTS[c["model_type"]]
    omit = set()  # size keys left out of config.json, so that the class default applies
    heads = _pick(rng, [1, 2, 3, 4, 6])
    d_head = _pick(rng, [2, 3, 4, 8, 16])
    r = rng.random()
    if r < 0.05:  # heads omitted: the class default (24 for v2, 12 for v1), small heads
        heads, d_head = defaults["num_attention_heads"], _pick(rng, [1, 2, 3])
        omit.add("num_attention_heads")
    elif r < 0.07:  # hidden_size omitted: 1536 (v2) / 768 (v1), few layers
        d_head = defaults["hidden_size"] // heads
        omit.add("hidden_size")
    H = heads * d_head
    if not omit and not v1 and rng.random() < 0.15:  # v2 reads attention_head_size (HF then needs heads x d = H)
        if rng.random() < 0.6:
            c["attention_head_size"] = d_head
        else:
            c["attention_head_size"] = _pick(rng, [2, 4, 5, 8])
            H = heads * d_head + _pick(rng, [0, 1, 3])
    if rng.random() < 0.03:  # H not a multiple of heads (and no attention_head_size): both must refuse
        H += 1
    c["hidden_size"] = H
    c["num_attention_heads"] = heads
    c["num_hidden_layers"] = rng.randint(1, 3)
    c["intermediate_size"] = _pick(rng, [H, 2 * H, 4 * H, 7, 33])
    c["vocab_size"] = rng.randint(8, 120)
    c["max_position_embeddings"] = _pick(rng, [16, 32, 64, 128, 512], [1, 1, 1, 3, 4])
    c["type_vocab_size"] = _pick(rng, [0, 1, 2, 3], [4, 1, 3, 1])
    c["hidden_act"] = _pick(rng, ACTIVATIONS)
    c["layer_norm_eps"] = _pick(rng, [1e-7, 1e-5, 1e-12, 1e-3], [4, 2, 1, 1])
    c["hidden_dropout_prob"] = 0.1
    c["attention_probs_dropout_prob"] = 0.1
    c["initializer_range"] = 0.02
    c["relative_attention"] = rng.random() < 0.85
    r = rng.random()
    if r < 0.05:
        pass  # absent: -1
    elif r < 0.25:
        c["max_relative_positions"] = -1
    elif r < 0.55:
        c["max_relative_positions"] = rng.randint(1, 8)
    else:
        c["max_relative_positions"] = rng.randint(9, 300)
    pat = _pick(rng, POS_ATT_TYPES)
    if not (isinstance(pat, str) and pat == "<absent>"):
        c["pos_att_type"] = pat
    r = rng.random()
    if r < 0.1:
        pass  # absent: true
    else:
        c["position_biased_input"] = rng.random() < (0.5 if v1 else 0.3)
    if rng.random() < 0.2:
        c["embedding_size"] = _pick(rng, [max(2, H // 2), H + 5, 2 * H, 3])
    if rng.random() < 0.1:
        c["pad_token_id"] = _pick(rng, [1, 3])
    if not v1 or rng.random() < 0.2:  # v2 keys; in v1 configs they must be ignored
        r = rng.random()
        if not v1 and r < 0.08:
            b, m, a = _pick(rng, ROUNDING_SETTINGS)
            c["position_buckets"], c["max_relative_positions"] = b, m
            min_len = a + 1
        elif not v1 and r < 0.12:  # max_relative_positions - 1 = position_buckets // 2: log base 1
            c["position_buckets"] = rng.randint(4, 40)
            c["max_relative_positions"] = c["position_buckets"] // 2 + 1
            min_len = c["position_buckets"] // 2 + 2
        if min_len > 1:
            c["relative_attention"] = True
            c["max_position_embeddings"] = max(c["max_position_embeddings"], 128)
        elif r < 0.25:
            c["position_buckets"] = -1
        elif r < 0.3:
            c["position_buckets"] = 0
        elif r < 0.33:
            c["position_buckets"] = 1
        elif r < 0.95:
            c["position_buckets"] = rng.randint(2, 64)
        c["share_att_key"] = rng.random() < 0.5
        nre = _pick(rng, NORM_REL_EBD)
        if not (isinstance(nre, str) and nre == "<absent>"):
            c["norm_rel_ebd"] = nre
        r = rng.random()
        if r < 0.5:
            c["conv_kernel_size"] = 0
        elif r < 0.85:
            c["conv_kernel_size"] = 3
        elif r < 0.95:
            c["conv_kernel_size"] = _pick(rng, [1, 5])
        else:
            c["conv_kernel_size"] = _pick(rng, [2, 4])
        if c["conv_kernel_size"] or rng.random() < 0.2:
            act = _pick(rng, ["gelu", "tanh", "relu", "sigmoid", "gelu_new", "<absent>"])
            if act != "<absent>":
                c["conv_act"] = act
            divisors = [g for g in (1, 2, 3, 4, H) if H % g == 0]
            r = rng.random()
            if r < 0.6:
                pass
            elif r < 0.95:
                c["conv_groups"] = _pick(rng, divisors)
            else:
                c["conv_groups"] = H + 1  # does not divide H: both must refuse
    if v1 and rng.random() < 0.05:
        c["talking_head"] = True  # HF v1 implements it; the core must refuse
    for key in ("relative_attention", "type_vocab_size", "hidden_act", "layer_norm_eps", "max_position_embeddings"):
        if rng.random() < 0.04 and not (key in ("relative_attention", "max_position_embeddings") and min_len > 1):
            del c[key]  # both read the class default (False, 0, gelu, 1e-7, 512)
    if "hidden_size" in omit:
        c["num_hidden_layers"] = 1
        c["intermediate_size"] = _pick(rng, [7, 33, H])
        c.pop("embedding_size", None)
    for key in ("num_hidden_layers", "intermediate_size", "vocab_size"):
        if rng.random() < 0.04 and "hidden_size" not in omit:
            omit.add(key)  # 24 / 12 layers, 6144 / 3072 wide, 128100 / 50265 tokens: small H keeps it cheap
    for key in omit:
        c.pop(key, None)
    return c, min_len


def draw_inputs(rng, cfg, min_len=1):
    """input_ids, attention_mask, token_type_ids (int64 [1, N]) and a description of the padding."""
    n = rng.randint(1, 10) if rng.random() < 0.3 else rng.randint(1, 80)
    n = max(n, min(min_len, 80))
    mask = np.ones(n, dtype=np.int64)
    kind = _pick(rng, ["none", "end", "middle", "start", "all"], [40, 30, 20, 10, 2]) if n > 1 else "none"
    if kind == "end":
        mask[n - rng.randint(1, n - 1):] = 0
    elif kind == "start":
        mask[:rng.randint(1, n - 1)] = 0
    elif kind == "middle":
        a = rng.randint(0, n - 1)
        b = rng.randint(a + 1, n)
        mask[a:b] = 0
        if mask.sum() == 0:
            mask[rng.randrange(n)] = 1
    elif kind == "all":
        mask[:] = 0  # no valid token: every row is a padding row, and all of them are judged
    V = min(cfg_value(cfg, "vocab_size"), 1000)
    ids = np.array([rng.randrange(1, V) for _ in range(n)], dtype=np.int64)
    ids[mask == 0] = cfg.get("pad_token_id", 0)
    T = cfg.get("type_vocab_size", 0)
    if T > 0:
        tt = np.array([rng.randrange(T) for _ in range(n)], dtype=np.int64)
    elif rng.random() < 0.1:
        tt = np.array([rng.randrange(2) for _ in range(n)], dtype=np.int64)  # ignored by HF when T = 0
    else:
        tt = np.zeros(n, dtype=np.int64)
    return ids[None], mask[None], tt[None], kind


# ---------------------------------------------------------------------------------------------
# [SECTION] the reference run
# ---------------------------------------------------------------------------------------------

class HFRefused(Exception):
    pass


def build_hf_model(ref, case_dir, torch_seed, std):
    ConfigClass, ModelClass = ref.classes[json.load(open(os.path.join(case_dir, "config.json")))["model_type"]]
    config = ConfigClass.from_json_file(os.path.join(case_dir, "config.json"))
    torch.manual_seed(torch_seed)
    model = ModelClass(config).double().eval()
    gen = torch.Generator().manual_seed(torch_seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float64) * std
            p.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    return model


def run_hf(model, ids, mask, tt):
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                    token_type_ids=torch.from_numpy(tt), output_hidden_states=True, output_attentions=True,
                    return_dict=True)
        res = {"embedding_output": out.hidden_states[0][0].numpy()}
        for l, h in enumerate(out.hidden_states[1:]):
            res[f"layer.{l}.output"] = h[0].numpy()
        for l, a in enumerate(out.attentions):
            res[f"layer.{l}.attn_probs"] = a[0].numpy()
        enc = model.encoder
        if enc.relative_attention:
            res["rel_embeddings"] = enc.get_rel_embedding().numpy()
            hs = torch.zeros(1, ids.shape[1], model.config.hidden_size)
            res["rel_pos"] = enc.get_rel_pos(hs).reshape(ids.shape[1], ids.shape[1]).numpy().astype(np.int64)
    for k, v in res.items():
        if v.dtype.kind == "f" and not np.all(np.isfinite(v)):
            raise HFRefused(f"non-finite values in {k}")
    return res


def state_dict_numpy(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items() if k != "embeddings.position_ids"}


def exact_log_bucket(a, mid, M):
    """ceil(log(a / mid) / log(M / mid) * (mid - 1)) for integers a > mid >= 1, M >= 1, M != mid,
    decided exactly: x <= t  <=>  (a/mid)^(mid-1) <= (M/mid)^t  if M > mid  (>= if M < mid, where the
    log of the base is negative). None for M == mid (log base 1: the reference divides by zero)."""
    if M == mid or M < 1:
        return None
    lhs = Fraction(a, mid) ** (mid - 1)

    def x_le(t):
        rhs = Fraction(M, mid) ** t
        return lhs <= rhs if M > mid else lhs >= rhs

    t = math.ceil(math.log(a / mid) / math.log(M / mid) * (mid - 1))
    while not x_le(t):
        t += 1
    while x_le(t - 1):
        t -= 1
    return t


def exact_bucket_table(n, buckets, max_position):
    """rel_pos [n, n] of the v2 log buckets with the mathematically exact ceiling; None where
    that is undefined (max_relative_positions - 1 = position_buckets // 2)."""
    mid, M = buckets // 2, max_position - 1
    r = np.arange(n)[:, None] - np.arange(n)[None, :]
    out = r.copy()
    cache = {}
    for idx in zip(*np.nonzero(np.abs(r) > mid)):
        a = int(abs(r[idx]))
        if a not in cache:
            cache[a] = exact_log_bucket(a, mid, M)
        if cache[a] is None:
            return None
        out[idx] = np.sign(r[idx]) * (cache[a] + mid)
    return out


class ExactBuckets:
    """Within the block, HF's v2 make_log_bucket_position uses the exact ceiling."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        self.saved = self.module.make_log_bucket_position

        def exact(relative_pos, bucket_size, max_position):
            rel = relative_pos.numpy()
            n_q, n_k = rel.shape
            assert n_q == n_k and np.array_equal(rel, np.arange(n_q)[:, None] - np.arange(n_k)[None, :])
            return torch.from_numpy(exact_bucket_table(n_q, bucket_size, max_position))

        self.module.make_log_bucket_position = exact
        return self

    def __exit__(self, *exc):
        self.module.make_log_bucket_position = self.saved


# ---------------------------------------------------------------------------------------------
# [SECTION] the core run and the comparison
# ---------------------------------------------------------------------------------------------

def run_core(deberta, case_dir, timeout):
    cmd = [deberta, "dump", "--model", case_dir, "--inputs", os.path.join(case_dir, "inputs.safetensors"),
           "--out", os.path.join(case_dir, "cpp.safetensors")]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", f"timeout after {timeout} s", None
    if p.returncode == 0:
        return "ok", "", load_safetensors(os.path.join(case_dir, "cpp.safetensors"))
    # Warnings ("deberta: warning: ...", e.g. an ignored norm_rel_ebd entry) are not the refusal.
    lines = [l for l in p.stderr.strip().splitlines() if l.strip() and not l.startswith("deberta: warning: ")]
    msg = lines[-1] if lines else "(no message)"
    if p.returncode < 0 or p.returncode > 2 or len(lines) != 1 or not msg.startswith("deberta: "):
        return "crash", f"exit {p.returncode}: {p.stderr.strip()[-400:]}", None
    return "refused", msg.replace(case_dir, "CASE"), None


def compare(ours, ref, valid):
    """Per reference tensor: max abs diff on the valid rows (and the index, ours, reference there),
    and the max abs diff over all rows. Rows = the sequence axis (axis 0 of [N, H], axis 1 of [h, N, N])."""
    out = {}
    for name, want in sorted(ref.items()):
        if name not in ours:
            out[name] = {"missing": True}
            continue
        got = ours[name]
        if got.shape != want.shape:
            out[name] = {"shape": [list(got.shape), list(want.shape)]}
            continue
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        if name.endswith("attn_probs"):
            d_valid = diff[:, valid, :]
        elif name in ("rel_embeddings", "rel_pos"):
            d_valid = diff
        else:
            d_valid = diff[valid]
        rec = {"max": float(d_valid.max(initial=0.0)), "max_all_rows": float(diff.max(initial=0.0))}
        if d_valid.size and rec["max"] > 0:
            full_idx = np.argwhere(diff == d_valid.max())[0]
            rec["at"] = [int(i) for i in full_idx]
            rec["ours"] = float(got[tuple(full_idx)])
            rec["ref"] = float(want[tuple(full_idx)])
        out[name] = rec
    return out


def worst(diffs):
    bad = [n for n, r in diffs.items() if "max" not in r]
    return (math.inf if bad else max((r["max"] for r in diffs.values()), default=0.0)), bad


def describe(cfg, n, kind):
    v = "v1" if cfg["model_type"] == "deberta" else "v2"
    s = (f"{v} H={cfg_value(cfg, 'hidden_size')} h={cfg_value(cfg, 'num_attention_heads')} "
         f"L={cfg_value(cfg, 'num_hidden_layers')} N={n:<2d} pad={kind:<6s}")
    omitted = [k for k in CLASS_DEFAULTS[cfg["model_type"]] if k not in cfg]
    if omitted:
        s += " omits " + ",".join(omitted)
    if cfg.get("relative_attention"):
        s += f" m={cfg.get('max_relative_positions', '-')}"
        if v == "v2":
            s += f" b={cfg.get('position_buckets', '-')}"
    return s


def judge(ref, args, rec, model, ours, res, ids, mask, tt):
    """Both ran: compare, and sort out the documented log-bucket rounding (outcome agree*)."""
    cfg, n = rec["config"], ids.shape[1]
    valid = mask[0].astype(bool)
    if not valid.any():
        valid[:] = True  # all padding: the padding rows are all there is to compare
    diffs = compare(ours, res, valid)
    w, bad = worst(diffs)
    rec["diffs"] = diffs
    rec["worst"] = w
    rec["outcome"] = "agree" if w <= args.tol else "DISAGREE"
    if rec["outcome"] == "DISAGREE" and cfg["model_type"] == "deberta-v2" and "rel_pos" in ours \
            and model.encoder.position_buckets > 0 and diffs.get("rel_pos", {}).get("max", 0) > 0:
        enc = model.encoder
        exact = exact_bucket_table(n, enc.position_buckets, enc.max_relative_positions)
        if exact is not None and np.array_equal(exact, ours["rel_pos"]):
            # The core follows the exact rule; HF's float64 ceiling is off by one here. Rerun HF
            # with exact buckets: the rest of the model must then agree.
            rec["hf_rel_pos_vs_exact"] = int((exact != res["rel_pos"]).sum())
            with ExactBuckets(ref.m2):
                res2 = run_hf(model, ids, mask, tt)
            diffs2 = compare(ours, res2, valid)
            w2, _ = worst(diffs2)
            rec["diffs_exact_buckets"] = diffs2
            rec["worst_exact_buckets"] = w2
            if w2 <= args.tol:
                rec["outcome"] = "agree*"
                rec["why"] = "HF float64 log-bucket ceiling off by one at %d (i, j); exact rule agrees" % \
                             rec["hf_rel_pos_vs_exact"]
        else:
            rec["why"] = "rel_pos differs from HF and from the exact rule" if exact is not None else \
                "rel_pos differs from HF; exact rule undefined (max_relative_positions - 1 = position_buckets // 2)"
    if rec["outcome"] == "DISAGREE" and "why" not in rec:
        over = sorted((r.get("max", math.inf), k) for k, r in diffs.items() if r.get("max", math.inf) > args.tol)
        rec["why"] = "; ".join(f"{k} {v:.3g}" for v, k in over[:4]) + (f"; missing/misshapen {bad}" if bad else "")
    final = rec.get("diffs_exact_buckets", diffs) if rec["outcome"] == "agree*" else diffs
    rec["padding_rows_max"] = max((r.get("max_all_rows", 0.0) for r in final.values()), default=0.0)


UNUSED_POS_WEIGHT = re.compile(r"encoder\.layer\.\d+\.attention\.self\.pos_(?:q_)?proj\.(?:weight|bias)")


def retry_with_unused_pos_weights(ref, args, rec, model, res, ids, mask, tt):
    """v1 configs naming p2p: the core asks for pos_proj / pos_q_proj (microsoft's layout creates
    them for p2p) where Hugging Face has none. Add random ones (HF would not read them), rerun the
    core and record whether the numbers then agree: rec["retry_unused_pos_weights"]."""
    if rec["config"]["model_type"] != "deberta" or "missing" not in rec["core_message"]:
        return
    listed = rec["core_message"].split("required tensor(s):", 1)
    names = [x.strip() for x in listed[1].split(",")] if len(listed) == 2 else []
    if not names or not all(UNUSED_POS_WEIGHT.fullmatch(x) for x in names):
        return
    case_dir = rec["case_dir"]
    sd = state_dict_numpy(model)
    H = cfg_value(rec["config"], "hidden_size")
    rng = np.random.default_rng(rec["index"])
    for name in names:
        sd[name] = rng.normal(0.0, args.std, (H, H) if name.endswith("weight") else (H,))
    save_safetensors(os.path.join(case_dir, "model.safetensors"), sd)
    status, msg, ours = run_core(args.deberta, case_dir, args.timeout)
    sub = {"index": rec["index"], "config": rec["config"]}
    if status == "ok":
        judge(ref, args, sub, model, ours, res, ids, mask, tt)
        rec["retry_unused_pos_weights"] = {"outcome": sub["outcome"], "worst": sub["worst"],
                                           "added": len(names)}
    else:
        rec["retry_unused_pos_weights"] = {"outcome": status, "message": msg}


def run_case(ref, args, index, work):
    rng = random.Random(f"{args.seed}:{index}")
    torch_seed = rng.randrange(2 ** 31)
    cfg, min_len = draw_config(rng)
    ids, mask, tt, kind = draw_inputs(rng, cfg, min_len)
    n = ids.shape[1]
    case_dir = os.path.join(work, f"case_{index:04d}")
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    save_safetensors(os.path.join(case_dir, "inputs.safetensors"),
                     {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})
    rec = {"index": index, "config": cfg, "n": n, "padding": kind, "attention_mask": mask[0].tolist(),
           "token_type_ids_nonzero": bool(tt.any()), "case_dir": case_dir}

    hf_error, res, model = None, None, None
    try:
        model = build_hf_model(ref, case_dir, torch_seed, args.std)
        res = run_hf(model, ids, mask, tt)
    except Exception as e:  # noqa: BLE001 - every reference failure is a skip, recorded with its message
        hf_error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        rec["hf_traceback"] = traceback.format_exc()[-1500:]
    if model is not None:
        save_safetensors(os.path.join(case_dir, "model.safetensors"), state_dict_numpy(model))
    else:  # the core still gets a config to refuse (no weights: it may refuse on the config first)
        with open(os.path.join(case_dir, "model.safetensors"), "wb") as f:
            f.write(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")

    status, msg, ours = run_core(args.deberta, case_dir, args.timeout)
    rec["hf_error"] = hf_error
    rec["core_message"] = msg
    if status == "crash":
        rec["outcome"] = "DISAGREE"
        rec["why"] = "core crashed: " + msg
    elif hf_error and status == "refused" and "model.safetensors" not in msg:
        rec["outcome"] = "both-refused"
    elif hf_error:
        rec["outcome"] = "hf-refused"
        rec["core_accepts_config"] = True  # it ran, or it got as far as the (absent) weights
    elif status == "refused":
        rec["outcome"] = "core-refused"
        retry_with_unused_pos_weights(ref, args, rec, model, res, ids, mask, tt)
    else:
        judge(ref, args, rec, model, ours, res, ids, mask, tt)
    if rec["outcome"] in ("agree", "agree*", "both-refused", "hf-refused", "core-refused") and not args.keep:
        shutil.rmtree(case_dir, ignore_errors=True)
        rec["case_dir"] = None
    return rec


# ---------------------------------------------------------------------------------------------
# [SECTION] driver
# ---------------------------------------------------------------------------------------------

OUTCOMES = ["agree", "agree*", "core-refused", "hf-refused", "both-refused", "DISAGREE"]


def print_case(rec, tol):
    line = f"#{rec['index']:4d} {describe(rec['config'], rec['n'], rec['padding'])}  {rec['outcome']:<12s}"
    if rec["outcome"] == "agree":
        line += f" {rec['worst']:.2e}"
    elif rec["outcome"] == "agree*":
        line += f" {rec['worst_exact_buckets']:.2e}"
    if rec["outcome"] == "core-refused":
        line += "  " + rec["core_message"][:240]
        if "retry_unused_pos_weights" in rec:
            rr = rec["retry_unused_pos_weights"]
            line += "\n      retried with the %s unused pos_proj/pos_q_proj tensors added: %s %s" % (
                rr.get("added", "?"), rr["outcome"], "%.2e" % rr["worst"] if "worst" in rr else rr.get("message", ""))
    elif rec["outcome"] in ("hf-refused", "both-refused"):
        line += "  HF: " + rec["hf_error"][:120]
        if rec["outcome"] == "both-refused":
            line += " | core: " + rec["core_message"][:120]
    elif rec["outcome"] == "agree*":
        line += "  (" + rec["why"] + ")"
    print(line, flush=True)
    if rec["outcome"] == "DISAGREE":
        print("      why: " + rec.get("why", ""))
        print("      config: " + json.dumps(rec["config"]))
        print("      attention_mask: " + "".join(str(x) for x in rec["attention_mask"]))
        for name, r in rec.get("diffs", {}).items():
            if r.get("max", math.inf) > tol:
                print(f"      {name}: {json.dumps(r)}")
        if rec.get("case_dir"):
            print("      case kept in " + rec["case_dir"])


def coverage(recs):
    """How many of the given cases exercise each feature (to see what the agreement covers)."""
    def rel_span(c):
        m = c.get("max_relative_positions", -1)
        return m if m >= 1 else c.get("max_position_embeddings", 512)

    def count(pred):
        return sum(1 for r in recs if pred(r["config"], r))

    v2 = lambda c: c["model_type"] != "deberta"  # noqa: E731
    rel = lambda c: c.get("relative_attention", False)  # noqa: E731
    buckets = lambda c: v2(c) and rel(c) and c.get("position_buckets", -1) > 0  # noqa: E731
    pat = lambda c: c.get("pos_att_type")  # noqa: E731
    return {
        "v1": count(lambda c, r: not v2(c)), "v2": count(lambda c, r: v2(c)),
        "relative": count(lambda c, r: rel(c)),
        "N>max_rel(no buckets)": count(lambda c, r: rel(c) and not buckets(c) and r["n"] > rel_span(c)),
        "log_buckets": count(lambda c, r: buckets(c)),
        "buckets,m-1<=mid": count(lambda c, r: buckets(c) and rel_span(c) - 1 <= c["position_buckets"] // 2),
        "conv": count(lambda c, r: v2(c) and c.get("conv_kernel_size", 0) > 0),
        "conv_groups>1": count(lambda c, r: v2(c) and c.get("conv_kernel_size", 0) > 0 and c.get("conv_groups", 1) > 1),
        "share_att_key": count(lambda c, r: v2(c) and rel(c) and c.get("share_att_key")),
        "rel_layer_norm": count(lambda c, r: v2(c) and rel(c) and "layer_norm" in str(c.get("norm_rel_ebd", "")).lower()),
        "embed_proj": count(lambda c, r: c.get("embedding_size", cfg_value(c, "hidden_size")) != cfg_value(c, "hidden_size")),
        "abs_positions": count(lambda c, r: c.get("position_biased_input", True)),
        "token_types": count(lambda c, r: c.get("type_vocab_size", 0) > 0),
        "types_ignored(T=0)": count(lambda c, r: c.get("type_vocab_size", 0) == 0 and r["token_type_ids_nonzero"]),
        "pat_str_empty_part": count(lambda c, r: isinstance(pat(c), str) and "" in [x.strip() for x in pat(c).split("|")]),
        "pat_list": count(lambda c, r: isinstance(pat(c), list)),
        "pat_p2p": count(lambda c, r: "p2p" in str(pat(c)).lower()),
        "pad_end": count(lambda c, r: r["padding"] == "end"), "pad_middle": count(lambda c, r: r["padding"] == "middle"),
        "pad_start": count(lambda c, r: r["padding"] == "start"), "pad_all": count(lambda c, r: r["padding"] == "all"),
        "activations": len({c.get("hidden_act", "gelu") for c in (r["config"] for r in recs)}),
    }


def summarize(recs, tol):
    print("\n== summary (tolerance %.0e, max abs over valid rows)" % tol)
    print("%-12s %6s %6s %6s" % ("outcome", "v1", "v2", "all"))
    for o in OUTCOMES:
        v1 = sum(1 for r in recs if r["outcome"] == o and r["config"]["model_type"] == "deberta")
        v2 = sum(1 for r in recs if r["outcome"] == o and r["config"]["model_type"] != "deberta")
        print("%-12s %6d %6d %6d" % (o, v1, v2, v1 + v2))
    print("%-12s %6d %6d %6d" % ("total", sum(1 for r in recs if r["config"]["model_type"] == "deberta"),
                                 sum(1 for r in recs if r["config"]["model_type"] != "deberta"), len(recs)))
    agreeing = [r for r in recs if r["outcome"] in ("agree", "agree*")]
    if agreeing:
        w = max(agreeing, key=lambda r: r.get("worst_exact_buckets", r["worst"]))
        print("worst diff among agreeing cases: %.3e (case #%d)" % (w.get("worst_exact_buckets", w["worst"]), w["index"]))
        by_tensor = {}
        for r in agreeing:
            for k, d in r.get("diffs_exact_buckets", r["diffs"]).items():
                key = re.sub(r"layer\.\d+\.", "layer.*.", k)
                by_tensor[key] = max(by_tensor.get(key, 0.0), d["max"])
        print("  per tensor: " + "  ".join(f"{k}={v:.1e}" for k, v in sorted(by_tensor.items())))
        pad = [r for r in agreeing if r.get("padding_rows_max", 0) > tol]
        print("  cases whose padding rows (not judged) differ by more than the tolerance: %d" % len(pad))
    if agreeing:
        print("  agreeing cases by feature: " + "  ".join(f"{k}={v}" for k, v in coverage(agreeing).items()))
    retried = [r["retry_unused_pos_weights"] for r in recs if "retry_unused_pos_weights" in r]
    if retried:
        ok = [r for r in retried if r["outcome"] == "agree"]
        print("v1 p2p refusals retried with the unused pos_proj/pos_q_proj tensors added: %d, agree %d "
              "(worst %.2e)" % (len(retried), len(ok), max((r["worst"] for r in ok), default=0.0)))
    for label, key, outcome in (("core refusals", "core_message", ("core-refused",)),
                                ("HF refusals where the core accepted the config", "hf_error", ("hf-refused",)),
                                ("refusals by both (HF's message)", "hf_error", ("both-refused",))):
        groups = {}
        for r in recs:
            if r["outcome"] in outcome:
                msg = re.sub(r"CASE/\S+", "CASE/...", r[key])
                msg = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", msg)[:150]
                groups[msg] = groups.get(msg, 0) + 1
        if groups:
            print(f"{label} (numbers replaced by #):")
            for msg, k in sorted(groups.items(), key=lambda x: -x[1]):
                print(f"  {k:4d}  {msg}")


def _finite(x):
    """The log as strict JSON: inf/nan (a missing tensor's 'worst') become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--transformers", required=True,
                    help="directory holding the transformers v4.27.1 package (e.g. /tmp/hf4271/src)")
    ap.add_argument("--deberta", default=os.path.join(ROOT, "build-me", "bin", "deberta"), help="the CLI to test")
    ap.add_argument("--n", type=int, default=200, help="number of random cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case index (case i is the same for every --n)")
    ap.add_argument("--only", type=str, default="", help="run only these case indices, e.g. 17,42")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--std", type=float, default=0.2, help="std of the random weights (LayerNorm gains: 1 + std*N)")
    ap.add_argument("--keep-float32", action="store_true", help="run the reference unchanged (float32 islands kept)")
    ap.add_argument("--work", default="", help="directory for the case dirs (default: a new one under /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep every case dir (default: only DISAGREE ones)")
    ap.add_argument("--log", default="", help="JSON log (default: WORK/hf_random_log.json)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per deberta dump")
    args = ap.parse_args()

    if not os.access(args.deberta, os.X_OK):
        sys.exit(f"--deberta {args.deberta}: not an executable")
    if not args.keep_float32:
        torch.set_default_dtype(torch.float64)
    ref = Reference(os.path.abspath(args.transformers), args.keep_float32)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="hf_random_", dir="/tmp")
    os.makedirs(work, exist_ok=True)
    log_path = args.log or os.path.join(work, "hf_random_log.json")
    print(f"reference: transformers {ref.version} from {ref.origin} (stubbed: {', '.join(ref.stubbed)}; "
          f"float32 islands {'kept' if args.keep_float32 else 'lifted to float64'})")
    print(f"core: {args.deberta}; cases in {work}; seed {args.seed}; tolerance {args.tol:.0e}")

    indices = [int(x) for x in args.only.split(",")] if args.only else range(args.start, args.start + args.n)
    recs = []
    t0 = time.time()
    for i in indices:
        rec = run_case(ref, args, i, work)
        recs.append(rec)
        print_case(rec, args.tol)
    summarize(recs, args.tol)
    print("%d cases in %.0f s; log: %s" % (len(recs), time.time() - t0, log_path))
    with open(log_path, "w") as f:
        json.dump(_finite({"transformers": ref.version, "stubbed": ref.stubbed, "keep_float32": args.keep_float32,
                   "seed": args.seed, "tol": args.tol, "std": args.std, "deberta": args.deberta, "cases": recs}),
                  f, indent=1, default=str)
    return 1 if any(r["outcome"] == "DISAGREE" for r in recs) else 0


if __name__ == "__main__":
    sys.exit(main())
