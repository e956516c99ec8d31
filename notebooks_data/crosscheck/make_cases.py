#!/usr/bin/env python3
"""Cross-check cases for the C++ core, beyond the 5 golden cases.

Generates small seeded random-weight models (F64) and inputs, computes the expected tensors
of the golden format with an independent float64 torch implementation written from the
reference semantics (Hugging Face transformers v4.27 modeling_deberta.py /
modeling_deberta_v2.py for the encoder, microsoft/DeBERTa MaskedLanguageModel /
EnhancedMaskDecoder / BertLMPredictionHead for the decoder), and compares them with the
output of `deberta dump`.

    make_cases.py gen  OUT_DIR          write OUT_DIR/<case>/{config.json, model.safetensors,
                                        inputs.safetensors, expected.safetensors}
    make_cases.py selftest GOLDEN_DIR   run this implementation on the 5 golden cases
    make_cases.py compare OUT_DIR       compare OUT_DIR/<case>/cpp.safetensors with expected

Only deberta_torch's safetensors reader/writer is imported; the model code here is separate.
"""
import json
import math
import os
import sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lib.deberta_torch import load_safetensors, save_safetensors  # noqa: E402

torch.set_num_threads(1)
DT = torch.float64


# ---------------------------------------------------------------------------------------------
# configuration, resolved the way the reference classes read it
# ---------------------------------------------------------------------------------------------

class Cfg:
    def __init__(self, d):
        self.d = d
        self.v1 = d["model_type"] == "deberta"
        self.H = d["hidden_size"]
        self.L = d["num_hidden_layers"]
        self.heads = d["num_attention_heads"]
        self.I = d["intermediate_size"]
        self.V = d["vocab_size"]
        self.P = d.get("max_position_embeddings", 512)
        self.eps = d.get("layer_norm_eps", 1e-7)
        self.act = d.get("hidden_act", "gelu")
        self.tvs = d.get("type_vocab_size", 0)
        self.pbi = d.get("position_biased_input", True)
        self.rel = d.get("relative_attention", False)
        pat = d.get("pos_att_type")
        if pat is None:
            pat = []
        elif isinstance(pat, str):  # DebertaConfig / DebertaV2Config: lower().split("|"), strip
            pat = [x.strip() for x in pat.lower().split("|")]
        self.pat = pat
        m = d.get("max_relative_positions", -1)
        self.maxrel = m if m >= 1 else self.P
        self.E = d.get("embedding_size", self.H)
        if self.v1:
            self.d_head = self.H // self.heads
            self.buckets = -1
            self.share = False
            self.norm_rel = ["none"]
            self.conv_ks = 0
        else:
            self.d_head = d.get("attention_head_size", self.H // self.heads)
            self.buckets = d.get("position_buckets", -1)
            self.share = d.get("share_att_key", False)
            self.norm_rel = [x.strip() for x in d.get("norm_rel_ebd", "none").lower().split("|")]
            self.conv_ks = d.get("conv_kernel_size", 0)
        self.conv_groups = d.get("conv_groups", 1)
        self.conv_act = d.get("conv_act", "tanh")
        self.A = self.heads * self.d_head
        # v1 encoder: table of 2*max_rel rows; v2: 2*pos_ebd_size
        self.k = self.buckets if (not self.v1 and self.buckets > 0) else self.maxrel


# ---------------------------------------------------------------------------------------------
# elementary pieces
# ---------------------------------------------------------------------------------------------

def act_fn(name):
    """Hugging Face ACT2FN (v4.27) for the names used here."""
    if name in ("gelu", "gelu_python"):
        return lambda x: F.gelu(x)
    if name == "gelu_new":
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    if name == "gelu_fast":
        return lambda x: 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x)))
    if name == "gelu_pytorch_tanh":
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu
    if name == "tanh":
        return torch.tanh
    if name in ("silu", "swish"):
        return F.silu
    raise ValueError(name)


def ln(x, sd, prefix, eps):
    w = sd[prefix + ".weight"]
    return F.layer_norm(x, (w.shape[0],), w, sd[prefix + ".bias"], eps)


def lin(x, sd, prefix, bias=True):
    b = sd.get(prefix + ".bias") if bias else None
    return F.linear(x, sd[prefix + ".weight"], b)


def log_bucket(rel, bucket_size, max_position):
    """make_log_bucket_position of HF v2, in float64."""
    sign = torch.sign(rel)
    mid = bucket_size // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    log_pos = torch.ceil(torch.log(abs_pos.to(DT) / mid) /
                         torch.log(torch.tensor((max_position - 1) / mid, dtype=DT)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.to(DT), log_pos * sign).to(torch.long)


def build_rel(cfg, n_q, n_k):
    q = torch.arange(n_q)
    k = torch.arange(n_k)
    r = q[:, None] - k[None, :]
    if not cfg.v1 and cfg.buckets > 0 and cfg.maxrel > 0:
        if getattr(cfg, "microsoft_rel", False):
            # microsoft/DeBERTa da_utils.make_log_bucket_position: clamp to +-(m - 1) before bucketing
            r = torch.clamp(r, -cfg.maxrel + 1, cfg.maxrel - 1)
        r = log_bucket(r, cfg.buckets, cfg.maxrel)
    return r.to(torch.long)


def heads_split(x, h):  # [N, A] -> [h, N, d]
    N = x.shape[0]
    return x.view(N, h, -1).permute(1, 0, 2)


def xsoftmax(logits, pair_mask):
    rmask = ~pair_mask.bool()
    out = logits.masked_fill(rmask, torch.finfo(logits.dtype).min)
    out = torch.softmax(out, -1)
    return out.masked_fill(rmask, 0)


# ---------------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------------

def attention_v1_hf(cfg, sd, p, hs, mask2, rel, table):
    """HF v1 DisentangledSelfAttention, query_states None (encoder)."""
    h = cfg.heads
    qp = hs @ sd[p + "in_proj.weight"].t()                       # [N, 3A]
    qkv = qp.view(qp.shape[0], h, -1).permute(1, 0, 2)          # [h, N, 3d]
    q, k, v = qkv.chunk(3, dim=-1)
    q = q + heads_split(sd[p + "q_bias"][None, :], h)
    v = v + heads_split(sd[p + "v_bias"][None, :], h)
    sf = 1 + len(cfg.pat)
    scale = math.sqrt(q.shape[-1] * sf)
    q = q / scale
    t = {"c2c": q @ k.transpose(-1, -2)}
    score = torch.zeros_like(t["c2c"])
    if cfg.rel:
        N = hs.shape[0]
        span = min(N, cfg.maxrel)
        tbl = table[cfg.maxrel - span: cfg.maxrel + span]
        if "c2p" in cfg.pat:
            kr = heads_split(tbl @ sd[p + "pos_proj.weight"].t(), h)
            c2p = q @ kr.transpose(-1, -2)
            idx = torch.clamp(rel + span, 0, 2 * span - 1)
            t["c2p"] = torch.gather(c2p, -1, idx.expand(h, N, N))
            score = score + t["c2p"]
        if "p2c" in cfg.pat:
            qr = heads_split(lin(tbl, sd, p + "pos_q_proj"), h)
            qr = qr / scale
            p2c_pos = torch.clamp(-rel + span, 0, 2 * span - 1)
            p2c = k @ qr.transpose(-1, -2)
            t["p2c"] = torch.gather(p2c, -1, p2c_pos.expand(h, N, N)).transpose(-1, -2)
            score = score + t["p2c"]
    t["logits"] = t["c2c"] + score
    t["probs"] = xsoftmax(t["logits"], mask2)
    t["ctx"] = (t["probs"] @ v).permute(1, 0, 2).reshape(hs.shape[0], -1)
    return t


def attention_generic(cfg, sd, p, hs, qs, mask2, rel, table, microsoft):
    """HF v2 DisentangledSelfAttention (microsoft=False), or microsoft/DeBERTa's
    DisentangledSelfAttention (microsoft=True; v1 weights converted by its _pre_load_hook:
    key bias 0, pos_key bias 0)."""
    h = cfg.heads
    if cfg.v1:
        W = sd[p + "in_proj.weight"].view(h, -1, cfg.H)
        wq, wk, wv = (x.reshape(-1, cfg.H) for x in W.chunk(3, dim=1))
        Q = F.linear(qs, wq, sd[p + "q_bias"])
        K = F.linear(hs, wk)
        Vv = F.linear(hs, wv, sd[p + "v_bias"])
        pos_key = lambda x: F.linear(x, sd[p + "pos_proj.weight"])            # noqa: E731
        pos_query = lambda x: lin(x, sd, p + "pos_q_proj")                     # noqa: E731
    else:
        Q = lin(qs, sd, p + "query_proj")
        K = lin(hs, sd, p + "key_proj")
        Vv = lin(hs, sd, p + "value_proj")
        if cfg.share:
            pos_key = lambda x: lin(x, sd, p + "key_proj")                     # noqa: E731
            pos_query = lambda x: lin(x, sd, p + "query_proj")                 # noqa: E731
        else:
            pos_key = lambda x: lin(x, sd, p + "pos_key_proj")                 # noqa: E731
            pos_query = lambda x: lin(x, sd, p + "pos_query_proj")             # noqa: E731
    q, k, v = heads_split(Q, h), heads_split(K, h), heads_split(Vv, h)
    sf = 1 + ("c2p" in cfg.pat) + ("p2c" in cfg.pat) + (microsoft and "p2p" in cfg.pat)
    d = q.shape[-1]
    if microsoft:
        s = 1 / math.sqrt(d * sf)
        t = {"c2c": q @ (k.transpose(-1, -2) * s)}
    else:
        t = {"c2c": (q @ k.transpose(-1, -2)) / math.sqrt(d * sf)}
    score = torch.zeros_like(t["c2c"])
    if cfg.rel:
        Nq, Nk = qs.shape[0], hs.shape[0]
        span = cfg.k
        tbl = table[0: 2 * span]
        if "c2p" in cfg.pat:
            kr = heads_split(pos_key(tbl), h)
            c2p = q @ kr.transpose(-1, -2)
            idx = torch.clamp(rel + span, 0, 2 * span - 1)
            t["c2p"] = torch.gather(c2p, -1, idx.expand(h, Nq, Nk)) / math.sqrt(d * sf)
            score = score + t["c2p"]
        if "p2c" in cfg.pat:
            qr = heads_split(pos_query(tbl), h)
            p2c_pos = torch.clamp(-rel + span, 0, 2 * span - 1)
            p2c = k @ qr.transpose(-1, -2)
            t["p2c"] = torch.gather(p2c, -1, p2c_pos.expand(h, Nk, Nk)).transpose(-1, -2) / math.sqrt(d * sf)
            score = score + t["p2c"]
    t["logits"] = t["c2c"] + score
    t["probs"] = xsoftmax(t["logits"], mask2)
    t["ctx"] = (t["probs"] @ v).permute(1, 0, 2).reshape(qs.shape[0], -1)
    return t


def layer(cfg, sd, l, hs, qs, mask2, rel, table, microsoft=False):
    p = "encoder.layer.%d." % l
    if cfg.v1 and not microsoft and qs is hs:
        t = attention_v1_hf(cfg, sd, p + "attention.self.", hs, mask2, rel, table)
    else:
        t = attention_generic(cfg, sd, p + "attention.self.", hs, qs, mask2, rel, table, microsoft)
    a = ln(lin(t["ctx"], sd, p + "attention.output.dense") + qs, sd, p + "attention.output.LayerNorm", cfg.eps)
    inter = act_fn(cfg.act)(lin(a, sd, p + "intermediate.dense"))
    out = ln(lin(inter, sd, p + "output.dense") + a, sd, p + "output.LayerNorm", cfg.eps)
    t["output"] = out
    return t


# ---------------------------------------------------------------------------------------------
# whole model
# ---------------------------------------------------------------------------------------------

MS_ACT = {"gelu": F.gelu, "relu": F.relu, "swish": lambda x: x * torch.sigmoid(x), "tanh": torch.tanh,
          "linear": lambda x: x, "sigmoid": torch.sigmoid}


def forward(cfg, sd, ids, mask, tt, masked_positions=None):
    N = ids.shape[0]
    out = {}
    maskf = mask.to(DT)
    x = sd["embeddings.word_embeddings.weight"][ids]
    if cfg.pbi:
        x = x + sd["embeddings.position_embeddings.weight"][:N]
    if cfg.tvs > 0:
        x = x + sd["embeddings.token_type_embeddings.weight"][tt]
    if cfg.E != cfg.H:
        x = F.linear(x, sd["embeddings.embed_proj.weight"])
    emb = ln(x, sd, "embeddings.LayerNorm", cfg.eps) * maskf[:, None]
    out["embedding_output"] = emb
    mask2 = (mask[:, None] * mask[None, :]).to(torch.uint8)
    rel = table = None
    if cfg.rel:
        rel = build_rel(cfg, N, N)
        table = sd["encoder.rel_embeddings.weight"]
        if "layer_norm" in cfg.norm_rel:
            table = ln(table, sd, "encoder.LayerNorm", cfg.eps)
        out["rel_embeddings"] = table
        out["rel_pos"] = rel
        row = torch.clamp(rel + cfg.k, 0, 2 * cfg.k - 1)
        out["c2p_row"] = row
        out["p2c_row"] = row
    hs = emb
    layers = []
    for l in range(cfg.L):
        t = layer(cfg, sd, l, hs, hs, mask2, rel, table)
        o = t["output"]
        if l == 0 and cfg.conv_ks > 0:
            out["layer.0.output_pre_conv"] = o
            c = F.conv1d(emb.t()[None], sd["encoder.conv.conv.weight"], sd["encoder.conv.conv.bias"],
                         padding=(cfg.conv_ks - 1) // 2, groups=cfg.conv_groups)[0].t()
            c = c.masked_fill((1 - mask).bool()[:, None], 0)
            c = act_fn(cfg.conv_act)(c)
            o = ln(o + c, sd, "encoder.conv.LayerNorm", cfg.eps) * maskf[:, None]
        pre = "layer.%d." % l
        out[pre + "c2c"] = t["c2c"]
        if "c2p" in t:
            out[pre + "c2p"] = t["c2p"]
        if "p2c" in t:
            out[pre + "p2c"] = t["p2c"]
        out[pre + "attn_logits"] = t["logits"]
        out[pre + "attn_probs"] = t["probs"]
        out[pre + "output"] = o
        layers.append(o)
        hs = o
    if masked_positions is not None:
        # microsoft MaskedLanguageModel -> EnhancedMaskDecoder.emd_context_layer
        if not cfg.pbi:
            Hs = layers[-2]
            P = sd["embeddings.position_embeddings.weight"][:N]
            q = P + Hs
            out["emd.position_embeddings"] = P
            out["emd.kv_states"] = Hs
            out["emd.query_states.0"] = q
            for t_ in range(2):
                t = layer(cfg, sd, cfg.L - 1, Hs, q, mask2, rel, table, microsoft=True)
                q = t["output"]
                out["emd.output.%d" % t_] = q
                out["emd.attn_probs.%d" % t_] = t["probs"]
            ctx = q
        else:
            ctx = layers[-1]   # outputs = [encoder_layers[-1]]: no decoder passes
        hd = MS_ACT[cfg.act](lin(ctx, sd, "lm_predictions.lm_head.dense"))
        hd = ln(hd, sd, "lm_predictions.lm_head.LayerNorm", cfg.eps)
        logits = hd @ sd["embeddings.word_embeddings.weight"].t() + sd["lm_predictions.lm_head.bias"]
        out["mlm.logits"] = logits
        out["mlm.masked_logits"] = logits[masked_positions]
        out["mlm.masked_positions"] = masked_positions
    return out


# ---------------------------------------------------------------------------------------------
# random models
# ---------------------------------------------------------------------------------------------

def make_weights(cfg, seed, lm_head=False, emd_positions=False):
    g = torch.Generator().manual_seed(seed)

    def rn(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=DT) * std

    H, A, E = cfg.H, cfg.A, cfg.E
    sd = {}

    def add_ln(p, n):
        sd[p + ".weight"] = 1.0 + rn(n, std=0.15)
        sd[p + ".bias"] = rn(n, std=0.1)

    def add_lin(p, o, i, bias=True, std=None):
        sd[p + ".weight"] = rn(o, i, std=std if std is not None else 1.2 / math.sqrt(i))
        if bias:
            sd[p + ".bias"] = rn(o, std=0.1)

    sd["embeddings.word_embeddings.weight"] = rn(cfg.V, E, std=0.5)
    if cfg.pbi or emd_positions:
        sd["embeddings.position_embeddings.weight"] = rn(cfg.P, E, std=0.5)
    if cfg.tvs > 0:
        sd["embeddings.token_type_embeddings.weight"] = rn(cfg.tvs, E, std=0.5)
    if E != H:
        add_lin("embeddings.embed_proj", H, E, bias=False)
    add_ln("embeddings.LayerNorm", H)
    for l in range(cfg.L):
        p = "encoder.layer.%d." % l
        if cfg.v1:
            sd[p + "attention.self.in_proj.weight"] = rn(3 * A, H, std=1.2 / math.sqrt(H))
            sd[p + "attention.self.q_bias"] = rn(A, std=0.1)
            sd[p + "attention.self.v_bias"] = rn(A, std=0.1)
            if cfg.rel and "c2p" in cfg.pat:
                add_lin(p + "attention.self.pos_proj", A, H, bias=False)
            if cfg.rel and "p2c" in cfg.pat:
                add_lin(p + "attention.self.pos_q_proj", A, H)
        else:
            for n in ("query_proj", "key_proj", "value_proj"):
                add_lin(p + "attention.self." + n, A, H)
            if cfg.rel and not cfg.share:
                if "c2p" in cfg.pat:
                    add_lin(p + "attention.self.pos_key_proj", A, H)
                if "p2c" in cfg.pat:
                    add_lin(p + "attention.self.pos_query_proj", A, H)
        add_lin(p + "attention.output.dense", H, A)
        add_ln(p + "attention.output.LayerNorm", H)
        add_lin(p + "intermediate.dense", cfg.I, H)
        add_lin(p + "output.dense", H, cfg.I)
        add_ln(p + "output.LayerNorm", H)
    if cfg.rel:
        sd["encoder.rel_embeddings.weight"] = rn(2 * cfg.k, H, std=0.5)
        if "layer_norm" in cfg.norm_rel:
            add_ln("encoder.LayerNorm", H)
    if cfg.conv_ks > 0:
        sd["encoder.conv.conv.weight"] = rn(H, H // cfg.conv_groups, cfg.conv_ks,
                                            std=1.0 / math.sqrt(H // cfg.conv_groups * cfg.conv_ks))
        sd["encoder.conv.conv.bias"] = rn(H, std=0.1)
        add_ln("encoder.conv.LayerNorm", H)
    if lm_head:
        add_lin("lm_predictions.lm_head.dense", E, H)
        add_ln("lm_predictions.lm_head.LayerNorm", E)
        sd["lm_predictions.lm_head.bias"] = rn(cfg.V, std=0.1)
    return sd


def base_cfg(model_type, **kw):
    d = {"model_type": model_type, "vocab_size": 40, "hidden_size": 24, "num_hidden_layers": 2,
         "num_attention_heads": 3, "intermediate_size": 48, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 32,
         "type_vocab_size": 0, "initializer_range": 0.02, "layer_norm_eps": 1e-7, "pad_token_id": 0,
         "torch_dtype": "float64"}
    d.update(kw)
    return d


def mask_from(s):
    return [int(c) for c in s]


# Each case: (name, config, seed, N, mask string or None, token types or None, masked positions or None,
#             description)
CASES = [
    ("v1_pbi_types_pad", base_cfg("deberta", relative_attention=True, position_biased_input=True,
                                  type_vocab_size=2, pos_att_type="c2p|p2c", max_relative_positions=4),
     11, "11111111000", [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0], None,
     "v1, absolute positions in the input, 2 token types (mixed), trailing padding, N=11 > k=4"),
    ("v1_p2c_only", base_cfg("deberta", relative_attention=True, position_biased_input=False,
                             pos_att_type="p2c", max_relative_positions=6, num_attention_heads=4),
     9, "111111100", None, None, "v1, p2c only (scale factor 2), padding"),
    ("v1_emd", base_cfg("deberta", relative_attention=True, position_biased_input=False,
                        pos_att_type="c2p|p2c", max_relative_positions=5, num_hidden_layers=3),
     10, "1111111100", None, [1, 4, 6], "v1 MaskedLanguageModel with EMD (position_biased_input false), padding"),
    ("v1_mlm_pbi", base_cfg("deberta", relative_attention=True, position_biased_input=True,
                            pos_att_type="c2p|p2c", max_relative_positions=5, num_hidden_layers=3),
     10, "1111111100", None, [1, 4, 6],
     "v1 MaskedLanguageModel with position_biased_input true: microsoft emd_context_layer skips the decoder"),
    ("v2_sep_keys", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                             pos_att_type=["c2p", "p2c"], max_relative_positions=6, share_att_key=False,
                             norm_rel_ebd="none", hidden_size=32, num_attention_heads=4),
     10, "1111111110", None, None, "v2, share_att_key false (pos_key_proj/pos_query_proj), no buckets, no rel LN"),
    ("v2_long_buckets", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                                 pos_att_type="p2c|c2p", max_relative_positions=10, position_buckets=8,
                                 share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                                 num_attention_heads=2),
     24, "1" * 22 + "00", None, None, "v2, N=24 = 3*b, m=10 < N: buckets beyond b-1 clamp"),
    ("v2_embed_proj", base_cfg("deberta-v2", relative_attention=True, position_biased_input=True,
                               pos_att_type=["c2p", "p2c"], max_relative_positions=8, position_buckets=4,
                               share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                               num_attention_heads=4, embedding_size=16, type_vocab_size=2),
     9, "111111110", [0, 0, 0, 1, 1, 1, 1, 1, 0], None, "v2, embedding_size 16 != hidden 32 (embed_proj)"),
    ("v2_conv_groups", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                                pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=8,
                                share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                                num_attention_heads=2, conv_kernel_size=3, conv_groups=2, num_hidden_layers=3),
     12, "110111011100", None, None, "v2 nGiE conv, groups 2, conv_act default (tanh), padding in the middle"),
    ("v2_conv_k5", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                            pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=8,
                            share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                            num_attention_heads=2, conv_kernel_size=5, conv_groups=4, conv_act="gelu"),
     11, "11101111100", None, None, "v2 nGiE conv, kernel 5, groups 4, gelu, middle padding"),
    ("v2_pbi_buckets", base_cfg("deberta-v2", relative_attention=True, position_biased_input=True,
                                pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=6,
                                share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=24,
                                num_attention_heads=3),
     14, "1" * 12 + "00", None, None, "v2, absolute positions in input + log buckets (b=6)"),
    ("v1_norel", base_cfg("deberta", relative_attention=False, position_biased_input=True,
                          pos_att_type="c2p|p2c"),
     8, "11111100", None, None, "v1 relative_attention false with pos_att_type c2p|p2c (scale factor?)"),
    ("v2_norel", base_cfg("deberta-v2", relative_attention=False, position_biased_input=True,
                          pos_att_type=["p2c"], hidden_size=32, num_attention_heads=4),
     8, "11111110", None, None, "v2 relative_attention false with pos_att_type [p2c] (scale factor?)"),
    ("v1_maxrel_default", base_cfg("deberta", relative_attention=True, position_biased_input=False,
                                   pos_att_type="c2p|p2c", max_relative_positions=-1,
                                   max_position_embeddings=12),
     10, "1111111110", None, None, "v1 max_relative_positions -1 -> P=12 (att_span = N < k)"),
    ("v2_maxrel_default", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                                   pos_att_type=["c2p", "p2c"], max_relative_positions=0, position_buckets=4,
                                   max_position_embeddings=16, share_att_key=True, norm_rel_ebd="layer_norm",
                                   hidden_size=32, num_attention_heads=2),
     16, None, None, None, "v2 max_relative_positions 0 -> P=16 as bucket max"),
    ("v2_gelu_new", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                             pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=8,
                             share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                             num_attention_heads=2, hidden_act="gelu_new"),
     10, "1111111100", None, None, "v2 hidden_act gelu_new (tanh form)"),
    ("v2_head_size", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                              pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=8,
                              share_att_key=False, norm_rel_ebd="layer_norm", hidden_size=24,
                              num_attention_heads=2, attention_head_size=10),
     9, None, None, None, "v2 explicit attention_head_size 10 (A=20 != H=24)"),
    ("v3_emd_pad", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                            pos_att_type=["p2c", "c2p"], max_relative_positions=16, position_buckets=8,
                            share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                            num_attention_heads=2, num_hidden_layers=3),
     12, "111111111000", None, [0, 3, 8], "v3 EMD with trailing padding"),
    ("v2_mlm_pbi", base_cfg("deberta-v2", relative_attention=True, position_biased_input=True,
                            pos_att_type=["p2c", "c2p"], max_relative_positions=16, position_buckets=8,
                            share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                            num_attention_heads=2, num_hidden_layers=3),
     10, None, None, [2, 5], "v2 MLM with position_biased_input true: no EMD passes in microsoft code"),
    ("v2_mlm_pbi_embproj", base_cfg("deberta-v2", relative_attention=True, position_biased_input=True,
                                    pos_att_type=["p2c", "c2p"], max_relative_positions=16, position_buckets=8,
                                    share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                                    num_attention_heads=2, num_hidden_layers=2, embedding_size=16),
     9, None, None, [1, 6], "MLM, position_biased_input true, embedding_size 16 != hidden 32: LM head dense H->E"),
    ("v2_gelu_fast", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                              pos_att_type=["c2p", "p2c"], max_relative_positions=16, position_buckets=8,
                              share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                              num_attention_heads=2, hidden_act="gelu_fast"),
     10, None, None, None, "v2 hidden_act gelu_fast (HF constant 0.7978845608)"),
    ("v2_bucket_rounding", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                                    pos_att_type=["c2p", "p2c"], max_relative_positions=26, position_buckets=18,
                                    share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                                    num_attention_heads=2),
     17, None, None, None, "v2 b=18, m=26: log(15/9)/log(25/9)*8 is exactly 4 (bucket of r=15)"),
    ("v1_embed_proj", base_cfg("deberta", relative_attention=True, position_biased_input=True,
                               pos_att_type="c2p|p2c", max_relative_positions=4, embedding_size=12,
                               type_vocab_size=2),
     9, "111111100", [0, 0, 0, 0, 1, 1, 1, 0, 0], None, "v1 with embedding_size 12 != hidden 24"),
    ("v1_p2p_listed", base_cfg("deberta", relative_attention=True, position_biased_input=False,
                               pos_att_type="c2p|p2c|p2p", max_relative_positions=4),
     8, None, None, None, "v1 pos_att_type c2p|p2c|p2p: HF v1 scale factor 1+len = 4, no p2p term"),
    ("v2_p2p_listed", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                               pos_att_type=["c2p", "p2c", "p2p"], max_relative_positions=16, position_buckets=8,
                               share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                               num_attention_heads=2),
     8, None, None, None, "v2 pos_att_type with p2p: HF v2 scale factor counts only c2p/p2c"),
    ("v1_single_token", base_cfg("deberta", relative_attention=True, position_biased_input=True,
                                 pos_att_type="c2p|p2c", max_relative_positions=4),
     1, None, None, None, "v1, N = 1"),
    ("v2_emd_conv_midpad", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                                    pos_att_type=["p2c", "c2p"], max_relative_positions=16, position_buckets=8,
                                    share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                                    num_attention_heads=2, num_hidden_layers=2, conv_kernel_size=3),
     11, "11011101110", None, [0, 4, 9], "v2 EMD with nGiE conv, L=2 (kv = conv output), middle padding"),
    # Cases run with microsoft/DeBERTa's relative positions (`--relative-positions microsoft`):
    # names end in _msrel; gen writes run.json {"relative_positions": "microsoft"} beside them.
    ("v2_long_msrel", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                               pos_att_type="p2c|c2p", max_relative_positions=10, position_buckets=8,
                               share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                               num_attention_heads=2),
     24, "1" * 22 + "00", None, None,
     "v2, N=24 > m=10, microsoft relative positions: i-j clamped to +-9 before the log buckets"),
    ("v3_emd_msrel", base_cfg("deberta-v2", relative_attention=True, position_biased_input=False,
                              pos_att_type=["p2c", "c2p"], max_relative_positions=12, position_buckets=6,
                              share_att_key=True, norm_rel_ebd="layer_norm", hidden_size=32,
                              num_attention_heads=2, num_hidden_layers=2),
     20, "1" * 18 + "00", None, [1, 9, 17],
     "v3-style EMD + MLM, N=20 > m=12, microsoft relative positions, trailing padding"),
]


def gen(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for ci, (name, cfgd, N, mstr, tt, mpos, desc) in enumerate(CASES):
        cfg = Cfg(cfgd)
        cfg.microsoft_rel = name.endswith("_msrel")
        seed = 1000 + ci
        lm = mpos is not None
        sd = make_weights(cfg, seed, lm_head=lm, emd_positions=lm)
        g = torch.Generator().manual_seed(seed + 7)
        ids = torch.randint(4, cfg.V, (N,), generator=g)
        mask = torch.tensor(mask_from(mstr) if mstr else [1] * N, dtype=torch.long)
        ids = torch.where(mask.bool(), ids, torch.zeros_like(ids))
        ttt = torch.tensor(tt if tt else [0] * N, dtype=torch.long)
        mp = torch.tensor(mpos, dtype=torch.long) if lm else None
        with torch.no_grad():
            exp = forward(cfg, sd, ids, mask, ttt, mp)
        cdir = os.path.join(out_dir, name)
        os.makedirs(cdir, exist_ok=True)
        with open(os.path.join(cdir, "config.json"), "w") as f:
            json.dump(cfgd, f, indent=2)
        save_safetensors(os.path.join(cdir, "model.safetensors"), {k: v.numpy() for k, v in sd.items()})
        inp = {"input_ids": ids[None].numpy(), "attention_mask": mask[None].numpy(),
               "token_type_ids": ttt[None].numpy()}
        if lm:
            inp["mlm.masked_positions"] = mp.numpy()
        save_safetensors(os.path.join(cdir, "inputs.safetensors"), inp)
        expn = {k: v.detach().numpy() for k, v in exp.items()}
        save_safetensors(os.path.join(cdir, "expected.safetensors"), expn)
        with open(os.path.join(cdir, "description.txt"), "w") as f:
            f.write(desc + "\n")
        if cfg.microsoft_rel:
            with open(os.path.join(cdir, "run.json"), "w") as f:
                json.dump({"relative_positions": "microsoft"}, f)
        print("wrote %-20s N=%2d  %d expected tensors  (%s)" % (name, N, len(expn), desc))


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------

def family(name):
    if name.startswith("layer."):
        parts = name.split(".")
        return "layer." + ".".join(parts[2:])
    if name.startswith("emd.attn_probs") or name.startswith("emd.output"):
        return ".".join(name.split(".")[:2])
    return name


def compare_dicts(exp, got, tol):
    fam = {}
    problems = []
    for name, r in exp.items():
        if name in ("mlm.masked_positions",):
            continue
        f = family(name)
        if name not in got:
            problems.append("missing in C++ output: " + name)
            fam[f] = float("inf")
            continue
        a = got[name]
        if a.shape != r.shape:
            problems.append("%s: shape C++ %s vs expected %s" % (name, a.shape, r.shape))
            fam[f] = float("inf")
            continue
        e = float(np.abs(a.astype(np.float64) - r.astype(np.float64)).max()) if r.size else 0.0
        if r.dtype == np.int64 and e != 0:
            idx = np.argwhere(a != r)[0]
            problems.append("%s: integer mismatch at %s: C++ %d expected %d" % (name, tuple(idx), a[tuple(idx)], r[tuple(idx)]))
        elif e > tol:
            err = np.abs(a - r)
            idx = np.unravel_index(int(np.argmax(err)), err.shape)
            problems.append("%s: max|err| %.3e at %s (C++ %.6g, expected %.6g)" % (name, e, idx, a[idx], r[idx]))
        fam[f] = max(fam.get(f, 0.0), e)
    skip = {"input_ids", "attention_mask", "token_type_ids", "mlm.labels", "mlm.masked_positions"}
    for name in got:
        if name not in exp and name not in skip:
            problems.append("extra in C++ output (no counterpart in the reference run): " + name)
    return fam, problems


def compare(out_dir, tol=1e-10):
    all_ok = True
    for name, *_ in CASES:
        cdir = os.path.join(out_dir, name)
        exp = load_safetensors(os.path.join(cdir, "expected.safetensors"))
        cpp_path = os.path.join(cdir, "cpp.safetensors")
        if not os.path.exists(cpp_path):
            err = open(os.path.join(cdir, "cpp.stderr")).read().strip() if os.path.exists(
                os.path.join(cdir, "cpp.stderr")) else "no output"
            print("%-20s FAIL  C++ dump failed: %s" % (name, err.splitlines()[-1] if err else ""))
            all_ok = False
            continue
        got = load_safetensors(cpp_path)
        fam, problems = compare_dicts(exp, got, tol)
        ok = not problems
        all_ok &= ok
        worst = max(fam.values()) if fam else 0.0
        print("%-20s %s  max abs err %.3e" % (name, "ok  " if ok else "FAIL", worst))
        print("    " + "  ".join("%s=%.1e" % (k, v) for k, v in sorted(fam.items())))
        for p in problems:
            print("    ! " + p)
    print("crosscheck: %s" % ("PASSED" if all_ok else "FAILED"))
    return all_ok


def selftest(golden_dir, tol=1e-12):
    """This implementation against the 5 golden cases (validates the reference code here)."""
    ok_all = True
    for case in sorted(os.listdir(golden_dir)):
        cdir = os.path.join(golden_dir, case)
        if not os.path.isfile(os.path.join(cdir, "config.json")):
            continue
        cfgd = json.load(open(os.path.join(cdir, "config.json")))
        cfg = Cfg(cfgd)
        sd = {k: torch.from_numpy(v).to(DT) for k, v in load_safetensors(os.path.join(cdir, "model.safetensors")).items()}
        g = load_safetensors(os.path.join(cdir, "golden.safetensors"))
        mp = torch.from_numpy(g["mlm.masked_positions"]) if "mlm.masked_positions" in g else None
        with torch.no_grad():
            exp = forward(cfg, sd, torch.from_numpy(g["input_ids"][0]), torch.from_numpy(g["attention_mask"][0]),
                          torch.from_numpy(g["token_type_ids"][0]), mp)
        expn = {k: v.numpy() for k, v in exp.items()}
        gg = {k: v for k, v in g.items() if k not in ("input_ids", "attention_mask", "token_type_ids", "mlm.labels")}
        fam, problems = compare_dicts(gg, expn, tol)   # golden as "expected", ours as "got"
        problems = [p for p in problems if not p.startswith("extra")]
        ok = not problems
        ok_all &= ok
        print("selftest %-12s %s  max abs err %.3e" % (case, "ok  " if ok else "FAIL", max(fam.values())))
        for p in problems:
            print("    ! " + p)
    return ok_all


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen":
        gen(sys.argv[2])
    elif cmd == "compare":
        sys.exit(0 if compare(sys.argv[2]) else 1)
    elif cmd == "selftest":
        sys.exit(0 if selftest(sys.argv[2]) else 1)
    else:
        print(__doc__)
        sys.exit(2)
