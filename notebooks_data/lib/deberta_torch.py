#!/usr/bin/env python3
"""A small, readable PyTorch DeBERTa (v2/v3 style) written from the equations.

What this is
    The Python twin of the C++ core: the DeBERTa encoder with disentangled attention
    (He et al., "DeBERTa: Decoding-enhanced BERT with Disentangled Attention", ICLR 2021),
    the v2 additions (log-bucket relative positions, shared attention keys, LayerNorm on the
    relative table, nGiE convolution) and the Enhanced Mask Decoder (EMD) with the masked-LM
    head. It is used to train the bundled tiny model (train_tiny.py), to make the golden files
    the C++ side is tested against, and to run the inference-time ablations of the model card.
    The semantics are those written down in notebooks_data/golden/README.md.

What it is not
    Not a copy of any released implementation, and not fast. model_type "deberta-v2" is the
    main target; the v1 layout (model_type "deberta": interleaved in_proj, q_bias / v_bias,
    pos_proj / pos_q_proj, no buckets) is supported for the encoder as well.

Parameter names are the Hugging Face state-dict names of the base model (no "deberta." prefix)
plus the microsoft/DeBERTa names of the EMD / LM head (v2 layout shown):
    embeddings.word_embeddings.weight            [V, H]
    embeddings.position_embeddings.weight        [P, H]   (absolute; used by the EMD only
                                                           when position_biased_input is false)
    embeddings.LayerNorm.{weight,bias}           [H]
    encoder.layer.{l}.attention.self.{query,key,value}_proj.{weight,bias}
    encoder.layer.{l}.attention.output.dense.*, .LayerNorm.*
    encoder.layer.{l}.intermediate.dense.*, encoder.layer.{l}.output.dense.*, .LayerNorm.*
    encoder.rel_embeddings.weight                [2k, H]
    encoder.LayerNorm.{weight,bias}              (norm_rel_ebd = layer_norm)
    encoder.conv.conv.{weight [H,H,ks],bias}, encoder.conv.LayerNorm.*  (conv_kernel_size > 0)
    lm_predictions.lm_head.{dense.*, LayerNorm.*, bias}
Task heads (load_model reads task checkpoints, whose encoder is under "deberta."):
    mask_predictions.{dense,LayerNorm,classifier}.*   RTD (v3 discriminator)  -> rtd.logits
    pooler.dense.*, classifier.*                      sequence classification -> cls.pooled, cls.logits

Notation: N = sequence length, H = hidden size, h = heads, d = H / h, k = half the number of
rows of the relative table. Query axis i, key axis j. Shapes in comments omit the batch axis B
where it is obvious.

Usage
    python3 deberta_torch.py --check-golden DIR      # compare with every golden case (v1 and v2)
"""
import argparse
import json
import math
import os
# One thread everywhere (the machine is shared): OpenBLAS / OpenMP read these at load time,
# before torch.set_num_threads(1) can take effect.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import struct
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# --------------------------------------------------------------------------------------------
# [SECTION] safetensors reader / writer (numpy only)
# --------------------------------------------------------------------------------------------

_ST_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
    "BOOL": np.bool_,
}
_NP_TO_ST = {np.dtype(v).str: k for k, v in _ST_DTYPES.items()}


def load_safetensors(path: str) -> Dict[str, np.ndarray]:
    """Read a .safetensors file: u64 little-endian header size, JSON header, raw LE data."""
    with open(path, "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = np.dtype(_ST_DTYPES[info["dtype"]]).newbyteorder("<")
        b, e = info["data_offsets"]
        arr = np.frombuffer(blob, dtype=dt, count=(e - b) // dt.itemsize, offset=base + b)
        out[name] = arr.reshape(info["shape"]).astype(dt.newbyteorder("="), copy=True)
    return out


def save_safetensors(path: str, tensors: Dict[str, np.ndarray],
                     metadata: Optional[Dict[str, str]] = None) -> None:
    """Write tensors (sorted by name) with a space-padded header (multiple of 8 bytes)."""
    header = {}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        key = np.dtype(arr.dtype).newbyteorder("<").str
        data = le.tobytes()
        header[name] = {"dtype": _NP_TO_ST[key], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * ((8 - len(hbytes) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hbytes)))
        f.write(hbytes)
        for c in chunks:
            f.write(c)


# --------------------------------------------------------------------------------------------
# [SECTION] configuration
# --------------------------------------------------------------------------------------------

@dataclass
class DebertaConfig:
    """The subset of the Hugging Face Deberta(V2)Config that the equations need. Defaults are
    what the reference code assumes when a key is absent from config.json."""
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 512
    layer_norm_eps: float = 1e-7
    hidden_act: str = "gelu"
    relative_attention: bool = False
    max_relative_positions: int = -1
    position_buckets: int = -1
    pos_att_type: List[str] = field(default_factory=list)
    position_biased_input: bool = True
    share_att_key: bool = False
    norm_rel_ebd: str = "none"
    conv_kernel_size: int = 0
    conv_act: str = "gelu"
    type_vocab_size: int = 0
    pad_token_id: int = 0
    model_type: str = "deberta-v2"
    # Not a Hugging Face key: whether the model carries the EMD + LM head weights.
    with_lm_head: bool = True
    # Project keys (config.json "deberta_explorer": {...}) for behaviour Hugging Face's config
    # cannot express: a model trained with the p2p term, or with the paper's p2c index.
    p2p: bool = False
    p2c_index: str = "code"
    # EMD query I_0 = H + P (the paper, section 3.2) or, with emd_position false, I_0 = H: the
    # decoder's two extra layer applications without any absolute position (the zoo's
    # depth-matched -EMD control; such a model has no position table).
    emd_position: bool = True
    # Task heads (not Hugging Face keys; set by load_model from the tensors present):
    # "mask_predictions.*" (RTD), "pooler.dense.*" + "classifier.*" (sequence classification).
    with_rtd_head: bool = False
    num_labels: int = 0
    pooler_hidden_size: int = 0
    pooler_hidden_act: str = "gelu"

    @staticmethod
    def from_dict(d: dict, with_lm_head: bool = True) -> "DebertaConfig":
        mt = d.get("model_type", "deberta-v2")
        if mt not in ("deberta", "deberta-v2"):
            raise ValueError("model_type must be deberta or deberta-v2, got %r" % mt)
        pat = d.get("pos_att_type") or []
        if isinstance(pat, str):
            pat = [p for p in pat.lower().split("|") if p]
        kw = {k: d[k] for k in DebertaConfig.__dataclass_fields__ if k in d}
        kw["pos_att_type"] = [p.lower() for p in pat]
        kw["model_type"] = mt
        if mt == "deberta":   # v1 has none of the v2 features, whatever the file says
            kw.update(position_buckets=-1, share_att_key=False, norm_rel_ebd="none",
                      conv_kernel_size=0)
        kw["with_lm_head"] = with_lm_head
        proj = d.get("deberta_explorer") or {}
        kw["p2p"] = bool(proj.get("p2p", False))
        kw["p2c_index"] = str(proj.get("p2c_index", "code"))
        kw["emd_position"] = bool(proj.get("emd_position", True))
        if kw["p2c_index"] not in ("code", "paper"):
            raise ValueError("deberta_explorer.p2c_index must be code or paper, got %r" % kw["p2c_index"])
        return DebertaConfig(**kw)

    # Derived quantities -----------------------------------------------------------------
    @property
    def d_head(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def max_rel(self) -> int:
        """m: max_relative_positions, where < 1 means max_position_embeddings."""
        return self.max_relative_positions if self.max_relative_positions >= 1 \
            else self.max_position_embeddings

    @property
    def k(self) -> int:
        """Half the number of rows of the relative table (2k rows)."""
        return self.position_buckets if self.position_buckets > 0 else self.max_rel

    @property
    def is_v1(self) -> bool:
        return self.model_type == "deberta"

    @property
    def scale_factor(self) -> int:
        """s = 1 / sqrt(d * scale_factor). v1: 1 + number of pos_att_type entries;
        v2: 1 + [c2p used] + [p2c used]."""
        if self.is_v1:
            return 1 + len(self.pos_att_type)
        return 1 + int("c2p" in self.pos_att_type) + int("p2c" in self.pos_att_type)


# --------------------------------------------------------------------------------------------
# [SECTION] relative positions (eq. 3 and the v2 log buckets)
# --------------------------------------------------------------------------------------------

def log_bucket(r: np.ndarray, buckets: int, max_position: int) -> np.ndarray:
    """v2 log buckets of a signed relative distance r (int array), computed in float64.

    bucket(r) = r                                                     if |r| <= mid
              = sign(r) * (ceil(log(|r|/mid) / log((m-1)/mid) * (mid-1)) + mid)   otherwise
    with mid = buckets // 2 and m = max_position. No clamp to m before bucketing.
    """
    mid = buckets // 2
    a = np.abs(r).astype(np.float64)
    safe = np.where(a <= mid, float(mid), a)              # avoid log(0); those use r itself
    logp = np.ceil(np.log(safe / mid) / np.log((max_position - 1) / mid) * (mid - 1)) + mid
    return np.where(a <= mid, r, (np.sign(r) * logp)).astype(np.int64)


def relative_distance(n_q: int, n_k: int, cfg: DebertaConfig) -> np.ndarray:
    """Eq. 3 (before clipping): rel_pos[i, j] = i - j, log-bucketed when position_buckets > 0.
    Returns int64 [n_q, n_k]."""
    r = np.arange(n_q)[:, None] - np.arange(n_k)[None, :]
    if cfg.position_buckets > 0:
        r = log_bucket(r, cfg.position_buckets, cfg.max_rel)
    return r.astype(np.int64)


def relative_row(rel_pos: np.ndarray, k: int) -> np.ndarray:
    """delta(i, j) of eq. 3 as a row of the [2k, H] table: clamp(rel_pos + k, 0, 2k - 1).
    The same row is used by c2p and p2c (released code; the paper's p2c would use delta(j, i))."""
    return np.clip(rel_pos + k, 0, 2 * k - 1).astype(np.int64)


# --------------------------------------------------------------------------------------------
# [SECTION] modules (names follow the Hugging Face state dict)
# --------------------------------------------------------------------------------------------

def gelu(x: torch.Tensor) -> torch.Tensor:
    """Exact (erf) GELU: x * Phi(x)."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def activation(name: str):
    if name == "gelu":
        return gelu
    if name == "relu":
        return F.relu
    if name == "tanh":
        return torch.tanh
    raise ValueError("unsupported activation " + name)


class Embeddings(nn.Module):
    """Token embeddings -> LayerNorm -> times the mask.  Out: [B, N, H]."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.cfg = cfg
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        if cfg.position_biased_input or cfg.with_lm_head:
            self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        if cfg.type_vocab_size > 0:
            self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, input_ids, mask, token_type_ids=None):
        x = self.word_embeddings(input_ids)
        n = input_ids.shape[1]
        if self.cfg.position_biased_input:
            x = x + self.position_embeddings.weight[:n].unsqueeze(0)
        if self.cfg.type_vocab_size > 0:
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = x + self.token_type_embeddings(token_type_ids)
        x = self.LayerNorm(x)
        return x * mask.unsqueeze(-1).to(x.dtype)


class SelfAttentionProj(nn.Module):
    """Holds the projections; named "attention.self" in the state dict.

    v2: query_proj / key_proj / value_proj (with biases); relative side: the same key / query
        projections when share_att_key, else pos_key_proj (c2p) / pos_query_proj (p2c).
    v1: in_proj [3H, H] without bias, viewed as [h, 3, d, H] (0 = query, 1 = key, 2 = value of
        each head), q_bias and v_bias [H] (no key bias); pos_proj (c2p, no bias) and pos_q_proj
        (p2c, with bias) for the relative side."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.cfg = cfg
        H = cfg.hidden_size
        if cfg.is_v1:
            self.in_proj = nn.Linear(H, 3 * H, bias=False)
            self.q_bias = nn.Parameter(torch.zeros(H))
            self.v_bias = nn.Parameter(torch.zeros(H))
            if cfg.relative_attention and "c2p" in cfg.pos_att_type:
                self.pos_proj = nn.Linear(H, H, bias=False)
            if cfg.relative_attention and "p2c" in cfg.pos_att_type:
                self.pos_q_proj = nn.Linear(H, H)
            return
        self.query_proj = nn.Linear(H, H)
        self.key_proj = nn.Linear(H, H)
        self.value_proj = nn.Linear(H, H)
        if cfg.relative_attention and not cfg.share_att_key:
            if "c2p" in cfg.pos_att_type:
                self.pos_key_proj = nn.Linear(H, H)
            if "p2c" in cfg.pos_att_type:
                self.pos_query_proj = nn.Linear(H, H)

    def content(self, x_q, x_kv):
        """Q_c, K_c, V_c [B, N, H] (eq. 2: H W_q, H W_k, H W_v)."""
        if self.cfg.is_v1:
            H = self.cfg.hidden_size
            W = self.in_proj.weight.view(self.cfg.num_attention_heads, 3, -1, H)
            Wq, Wk, Wv = (W[:, c].reshape(H, H) for c in range(3))
            return (F.linear(x_q, Wq) + self.q_bias, F.linear(x_kv, Wk),
                    F.linear(x_kv, Wv) + self.v_bias)
        return self.query_proj(x_q), self.key_proj(x_kv), self.value_proj(x_kv)

    def relative(self, table):
        """K_r (c2p side) and Q_r (p2c side), [2k, H] each, or None where not used."""
        if self.cfg.is_v1:
            kp, qp = getattr(self, "pos_proj", None), getattr(self, "pos_q_proj", None)
        elif self.cfg.share_att_key:
            kp, qp = self.key_proj, self.query_proj
        else:
            kp, qp = getattr(self, "pos_key_proj", None), getattr(self, "pos_query_proj", None)
        return (kp(table) if kp is not None else None, qp(table) if qp is not None else None)


class DenseLN(nn.Module):
    """dense + LayerNorm (attention.output and output in the state dict)."""

    def __init__(self, n_in, n_out, eps):
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)
        self.LayerNorm = nn.LayerNorm(n_out, eps=eps)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = SelfAttentionProj(cfg)
        self.output = DenseLN(cfg.hidden_size, cfg.hidden_size, cfg.layer_norm_eps)


class Intermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.intermediate_size)


@dataclass
class Ablation:
    """Inference-time switches. The scale s stays 1/sqrt(d * scale_factor of the config).
    p2p and p2c_index None: as the model was trained (config.json "deberta_explorer")."""
    c2p: bool = True
    p2c: bool = True
    p2p: Optional[bool] = None
    p2c_index: Optional[str] = None


def split_heads(x: torch.Tensor, h: int) -> torch.Tensor:
    """[B, N, H] -> [B, h, N, d]."""
    B, N, H = x.shape
    return x.view(B, N, h, H // h).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """[B, h, N, d] -> [B, N, H]."""
    B, h, N, d = x.shape
    return x.transpose(1, 2).reshape(B, N, h * d)


def gather_rows(scores_vs_table: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
    """scores_vs_table [B, h, N, 2k] (axis 2 = the token whose vector was dotted with the
    table), row [N, N] -> out[b, h, i, j] = scores_vs_table[b, h, i, row[i, j]]."""
    B, h, N, _ = scores_vs_table.shape
    idx = row.unsqueeze(0).unsqueeze(0).expand(B, h, N, row.shape[1])
    return torch.gather(scores_vs_table, -1, idx)


def content_to_content(Qc, Kc, s):
    """Eq. 4, first term: c2c[h, i, j] = s * Qc_i . Kc_j.   [B, h, N, N]"""
    return s * torch.matmul(Qc, Kc.transpose(-1, -2))


def content_to_position(Qc, Kr, row, s):
    """Eq. 4, c2p term: c2p[h, i, j] = s * Qc_i . Kr[row(i, j)].   Kr [h, 2k, d] -> [B, h, N, N]"""
    return s * gather_rows(torch.matmul(Qc, Kr.transpose(-1, -2)), row)


def position_to_content(Kc, Qr, row, s, paper=False):
    """Eq. 4, p2c term: p2c[h, i, j] = s * Kc_j . Qr[row(i, j)] (released code), or with
    paper=True s * Kc_j . Qr[row(j, i)] (eq. 4's delta(j, i)).   -> [B, h, N(i), N(j)]"""
    t = torch.matmul(Kc, Qr.transpose(-1, -2))              # [B, h, N(j), 2k]
    return s * gather_rows(t, row if paper else row.transpose(0, 1)).transpose(-1, -2)


def position_to_position(Qr, Kr, row, s):
    """p2p (paper's dropped term, for ablations): p2p[h, i, j] = s * Qr[row] . Kr[row]."""
    diag = (Qr * Kr).sum(-1)                                 # [h, 2k]
    return s * diag[:, row].unsqueeze(0)                     # [1, h, N, N]


def masked_softmax(logits, mask):
    """Softmax over keys j with pair mask m_i * m_j; rows of padding queries are all zero.
    logits [B, h, N, N], mask [B, N] -> probs [B, h, N, N]."""
    pm = (mask.unsqueeze(2) * mask.unsqueeze(1)).unsqueeze(1).bool()     # [B, 1, N, N]
    x = logits.masked_fill(~pm, torch.finfo(logits.dtype).min)
    return torch.softmax(x, dim=-1) * pm.to(logits.dtype)


class Layer(nn.Module):
    """One post-LN transformer layer with disentangled attention (eqs. 2-4).

        a   = LN(ctx W_o + b_o + x_q)
        out = LN(gelu(a W_i + b_i) W_2 + b_2 + a)
    """

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.cfg = cfg
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(cfg)
        self.output = DenseLN(cfg.intermediate_size, cfg.hidden_size, cfg.layer_norm_eps)
        self.act = activation(cfg.hidden_act)

    def forward(self, x_q, x_kv, mask, rel_table, row, ablation: Ablation, trace=None, prefix=""):
        """x_q, x_kv [B, N, H]; rel_table [2k, H]; row [N, N] int64; mask [B, N]."""
        cfg = self.cfg
        h = cfg.num_attention_heads
        sa = self.attention.self
        s = 1.0 / math.sqrt(cfg.d_head * cfg.scale_factor)
        Qc, Kc, Vc = (split_heads(t, h) for t in sa.content(x_q, x_kv))
        logits = content_to_content(Qc, Kc, s)
        if trace is not None:
            trace[prefix + "c2c"] = logits
        use_c2p = "c2p" in cfg.pos_att_type and ablation.c2p
        use_p2c = "p2c" in cfg.pos_att_type and ablation.p2c
        use_p2p = cfg.p2p if ablation.p2p is None else ablation.p2p
        paper = (ablation.p2c_index or cfg.p2c_index) == "paper"
        if cfg.relative_attention and (use_c2p or use_p2c or use_p2p):
            Kr, Qr = (split_heads(t.unsqueeze(0), h)[0] if t is not None else None
                      for t in sa.relative(rel_table))
            if use_c2p:
                c2p = content_to_position(Qc, Kr, row, s)
                logits = logits + c2p
                if trace is not None:
                    trace[prefix + "c2p"] = c2p
            if use_p2c:
                p2c = position_to_content(Kc, Qr, row, s, paper)
                logits = logits + p2c
                if trace is not None:
                    trace[prefix + "p2c"] = p2c
            if use_p2p:
                p2p = position_to_position(Qr, Kr, row, s)
                logits = logits + p2p
                if trace is not None:
                    trace[prefix + "p2p"] = p2p
        probs = masked_softmax(logits, mask)
        ctx = merge_heads(torch.matmul(probs, Vc))
        if trace is not None:
            trace[prefix + "attn_logits"] = logits
            trace[prefix + "attn_probs"] = probs
        ao = self.attention.output
        a = ao.LayerNorm(ao.dense(ctx) + x_q)
        out = self.output.LayerNorm(self.output.dense(self.act(self.intermediate.dense(a))) + a)
        return out


class ConvLayer(nn.Module):
    """nGiE (v2): out = LN_conv(layer0_out + act(conv1d(emb) with padding rows 0)) * mask."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        ks = cfg.conv_kernel_size
        self.conv = nn.Conv1d(cfg.hidden_size, cfg.hidden_size, ks, padding=(ks - 1) // 2)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.act = activation(cfg.conv_act)

    def forward(self, emb, layer0_out, mask):
        m = mask.unsqueeze(-1).to(emb.dtype)
        c = self.conv(emb.transpose(1, 2)).transpose(1, 2) * m
        return self.LayerNorm(layer0_out + self.act(c)) * m


class Encoder(nn.Module):
    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.cfg = cfg
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_hidden_layers)])
        if cfg.relative_attention:
            self.rel_embeddings = nn.Embedding(2 * cfg.k, cfg.hidden_size)
            if "layer_norm" in cfg.norm_rel_ebd:
                self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        if cfg.conv_kernel_size > 0:
            self.conv = ConvLayer(cfg)

    def relative_table(self):
        """The [2k, H] table as used: after encoder.LayerNorm when norm_rel_ebd = layer_norm."""
        t = self.rel_embeddings.weight
        if "layer_norm" in self.cfg.norm_rel_ebd:
            t = self.LayerNorm(t)
        return t


class LMHead(nn.Module):
    """logits = LN(gelu(x W_d + b_d)) E^T + bias (E = tied word embeddings)."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.act = activation(cfg.hidden_act)

    def forward(self, x, word_embeddings):
        return self.LayerNorm(self.act(self.dense(x))) @ word_embeddings.t() + self.bias


class LMPredictions(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.lm_head = LMHead(cfg)


class MaskPredictionHead(nn.Module):
    """Replaced-token detection head of the DeBERTa-v3 discriminator (microsoft/DeBERTa
    LMMaskPredictionHead, state-dict prefix "mask_predictions."), written from its formula:

        rtd.logits[i] = classifier(act(dense(LN_mp(h[0] + h[i]))))     one logit per token

    h [B, N, H] is the last encoder layer, h[0] its token-0 row, act = hidden_act.
    sigmoid(logit) is the probability that token i was replaced. Out: [B, N]."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.classifier = nn.Linear(cfg.hidden_size, 1)
        self.act = activation(cfg.hidden_act)

    def forward(self, h):
        s = self.LayerNorm(h[:, :1] + h)
        return self.classifier(self.act(self.dense(s))).squeeze(-1)


class ContextPooler(nn.Module):
    """Hugging Face ContextPooler ("pooler.dense"): pooled = act(h[0] W_p^T + b_p), act =
    pooler_hidden_act. h [B, N, H] -> [B, P]."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.pooler_hidden_size or cfg.hidden_size)
        self.act = activation(cfg.pooler_hidden_act)

    def forward(self, h):
        return self.act(self.dense(h[:, 0]))


class DebertaV2(nn.Module):
    """Encoder + (optionally) Enhanced Mask Decoder and MLM head."""

    def __init__(self, cfg: DebertaConfig):
        super().__init__()
        self.cfg = cfg
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        if cfg.with_lm_head:
            self.lm_predictions = LMPredictions(cfg)
        if cfg.with_rtd_head:
            self.mask_predictions = MaskPredictionHead(cfg)
        if cfg.num_labels > 0:
            self.pooler = ContextPooler(cfg)
            self.classifier = nn.Linear(cfg.pooler_hidden_size or cfg.hidden_size, cfg.num_labels)
        self._row_cache = {}

    def rel_rows(self, n: int, device):
        if n not in self._row_cache:
            rp = relative_distance(n, n, self.cfg)
            self._row_cache[n] = (rp, torch.from_numpy(relative_row(rp, self.cfg.k)).to(device))
        return self._row_cache[n]

    def forward(self, input_ids, attention_mask=None, token_type_ids=None,
                ablation: Optional[Ablation] = None, use_emd: Optional[bool] = None,
                trace: Optional[dict] = None, lm_positions=None, run_lm_head: bool = True):
        """input_ids [B, N]. Returns a dict with 'hidden' (last encoder layer) [B, N, H] and,
        with the LM head, 'logits' [B, N, V] (or [M, V] at lm_positions = (b_idx, n_idx)).

        use_emd=False decodes from the last encoder layer output (the -EMD ablation); None:
        what the model runs (runs_emd).
        trace (a dict) receives every named intermediate, with the golden-file names.
        Task heads the model carries add 'rtd_logits' [B, N] (MaskPredictionHead) and
        'cls_pooled' [B, P], 'cls_logits' [B, C] (ContextPooler + classifier), all read from
        the last encoder layer. run_lm_head=False skips the EMD and the MLM head."""
        cfg = self.cfg
        ablation = ablation or Ablation()
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = attention_mask.to(self.embeddings.word_embeddings.weight.dtype)
        B, N = input_ids.shape
        emb = self.embeddings(input_ids, mask, token_type_ids)
        rel_pos, row = self.rel_rows(N, input_ids.device)
        table = self.encoder.relative_table() if cfg.relative_attention else None
        if trace is not None:
            trace["embedding_output"] = emb
            if table is not None:   # relative geometry exists only with relative attention
                trace["rel_pos"] = torch.from_numpy(rel_pos)
                trace["c2p_row"] = row
                # p2c reads row(i, j) in the released code, row(j, i) with the paper's index
                trace["p2c_row"] = row.transpose(0, 1).contiguous() if cfg.p2c_index == "paper" else row
                trace["rel_embeddings"] = table
        x = emb
        outs = []
        for l, layer in enumerate(self.encoder.layer):
            x = layer(x, x, mask, table, row, ablation, trace, "layer.%d." % l)
            if l == 0 and cfg.conv_kernel_size > 0:
                if trace is not None:
                    trace["layer.0.output_pre_conv"] = x
                x = self.encoder.conv(emb, x, mask)
            if trace is not None:
                trace["layer.%d.output" % l] = x
            outs.append(x)
        result = {"hidden": x}
        if cfg.with_rtd_head:
            result["rtd_logits"] = self.mask_predictions(x)
        if cfg.num_labels > 0:
            result["cls_pooled"] = self.pooler(x)
            result["cls_logits"] = self.classifier(result["cls_pooled"])
        if not cfg.with_lm_head or not run_lm_head:
            return result
        if use_emd is None:
            use_emd = self.runs_emd()
        if use_emd:
            dec = self.enhanced_mask_decoder(outs[-2], mask, table, row, ablation, trace)
        else:
            dec = x
        result["decoder_output"] = dec
        E = self.embeddings.word_embeddings.weight
        if lm_positions is not None:
            result["logits"] = self.lm_predictions.lm_head(dec[lm_positions], E)
        else:
            result["logits"] = self.lm_predictions.lm_head(dec, E)
        return result

    def runs_emd(self) -> bool:
        """microsoft's emd_context_layer: the EMD runs when the model has an LM head, an absolute
        position table and no absolute positions at the input; otherwise the LM head reads the
        last encoder layer."""
        if not self.cfg.emd_position:   # the depth-matched controls: EMD layers, I_0 = H, with or
            return self.cfg.with_lm_head  # without absolute positions at the input
        return (self.cfg.with_lm_head and not self.cfg.position_biased_input
                and hasattr(self.embeddings, "position_embeddings"))

    def enhanced_mask_decoder(self, H, mask, table, row, ablation, trace=None):
        """EMD: I_0 = H + P[0:N]; I_{t+1} = layer_{L-1}(query = I_t, key/value = H), t = 0, 1.
        H [B, N, H] is the output of encoder layer L-2."""
        N = H.shape[1]
        if self.cfg.emd_position:
            P = self.embeddings.position_embeddings.weight[:N].unsqueeze(0)
        else:   # deberta_explorer.emd_position false: no absolute position, I_0 = H
            P = torch.zeros_like(H[:1])
        I = H + P
        last = self.encoder.layer[-1]
        if trace is not None:
            trace["emd.position_embeddings"] = P[0]
            trace["emd.kv_states"] = H
            trace["emd.query_states.0"] = I
        for t in range(2):
            sub = {} if trace is not None else None
            I = last(I, H, mask, table, row, ablation, sub, "")
            if trace is not None:
                trace["emd.output.%d" % t] = I
                trace["emd.attn_probs.%d" % t] = sub["attn_probs"]
        return I


# --------------------------------------------------------------------------------------------
# [SECTION] loading and saving in Hugging Face layout
# --------------------------------------------------------------------------------------------

def load_model(model_dir: str, dtype=torch.float64, weights="model.safetensors") -> DebertaV2:
    """Build a model from config.json + model.safetensors (exact HF names, strict)."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg_d = json.load(f)
    sd = from_task_checkpoint_names(load_safetensors(os.path.join(model_dir, weights)))
    with_lm = any(n.startswith("lm_predictions.") for n in sd)
    cfg = DebertaConfig.from_dict(cfg_d, with_lm_head=with_lm)
    cfg.with_rtd_head = any(n.startswith("mask_predictions.") for n in sd)
    cfg.num_labels = 0   # the heads follow from the tensors present, not from config keys
    if "pooler.dense.weight" in sd and "classifier.weight" in sd:
        cfg.num_labels = int(sd["classifier.weight"].shape[0])
        cfg.pooler_hidden_size = int(sd["pooler.dense.weight"].shape[0])
        cfg.pooler_hidden_act = cfg_d.get("pooler_hidden_act", "gelu")
    model = DebertaV2(cfg).to(dtype)
    # No position table and none at the input: no EMD (a base model, or one trained without it).
    if "embeddings.position_embeddings.weight" not in sd and \
            hasattr(model.embeddings, "position_embeddings") and not cfg.position_biased_input:
        del model.embeddings.position_embeddings
    tsd = {k: torch.from_numpy(v).to(dtype) for k, v in sd.items()}
    missing, unexpected = model.load_state_dict(tsd, strict=False)
    if missing or unexpected:
        raise ValueError("state dict mismatch: missing %s, unexpected %s" % (missing, unexpected))
    model.eval()
    return model


_ENCODER_PREFIXES = ("embeddings.", "encoder.")


def from_task_checkpoint_names(sd: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Task checkpoints (Hugging Face *ForSequenceClassification, microsoft's v3 discriminator)
    keep the encoder under "deberta."; this model names it without the prefix. Head names
    (lm_predictions.*, mask_predictions.*, pooler.*, classifier.*) are unchanged."""
    out = {}
    for k, v in sd.items():
        name = k[len("deberta."):] if k.startswith("deberta.") and k[len("deberta."):].startswith(_ENCODER_PREFIXES) else k
        if name in out:
            raise ValueError("tensor %s appears with and without the deberta. prefix" % name)
        out[name] = v
    return out


def to_task_checkpoint_names(sd: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The inverse of from_task_checkpoint_names: encoder tensors get the "deberta." prefix
    (the layout of a released v3 discriminator / a Hugging Face task checkpoint)."""
    return {("deberta." + k if k.startswith(_ENCODER_PREFIXES) else k): v for k, v in sd.items()}


def state_dict_numpy(model: nn.Module, dtype=np.float32) -> Dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(dtype) for k, v in model.state_dict().items()}


# --------------------------------------------------------------------------------------------
# [SECTION] golden check
# --------------------------------------------------------------------------------------------

def run_traced(model: DebertaV2, g: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Run one golden input through the model; return every traced tensor (batch dropped)."""
    ids = torch.from_numpy(g["input_ids"])
    am = torch.from_numpy(g["attention_mask"])
    tt = torch.from_numpy(g["token_type_ids"]) if "token_type_ids" in g else None
    trace = {}
    with torch.no_grad():
        res = model(ids, am, tt, trace=trace)
    if "rtd_logits" in res:
        trace["rtd.logits"] = res["rtd_logits"]
    if "cls_logits" in res:
        trace["cls.pooled"] = res["cls_pooled"]
        trace["cls.logits"] = res["cls_logits"]
    if "logits" in res:
        trace["mlm.logits"] = res["logits"]
        if "mlm.masked_positions" in g:
            pos = torch.from_numpy(g["mlm.masked_positions"])
            trace["mlm.masked_logits"] = res["logits"][0, pos]
    out = {}
    for k, v in trace.items():
        a = v.detach().numpy()
        if k in ("rel_pos", "c2p_row", "p2c_row", "rel_embeddings", "emd.position_embeddings",
                 "mlm.masked_logits"):
            out[k] = a
        else:
            out[k] = a[0] if a.ndim >= 3 or (a.ndim == 2 and k in ("mlm.logits", "rtd.logits", "cls.pooled",
                                                                    "cls.logits")) else a
    return out


def check_golden(root: str, tol: float = 1e-10) -> bool:
    cases = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "config.json")))
    all_ok = True
    overall = 0.0
    for case in cases:
        cdir = os.path.join(root, case)
        model = load_model(cdir)
        g = load_safetensors(os.path.join(cdir, "golden.safetensors"))
        ours = run_traced(model, g)
        compared, worst, ok = 0, 0.0, True
        for name in sorted(g):
            if name in ("input_ids", "attention_mask", "token_type_ids", "mlm.labels",
                        "mlm.masked_positions"):
                continue
            if name not in ours:
                print("  %s: %s not produced" % (case, name))
                ok = False
                continue
            a, r = ours[name], g[name]
            if a.shape != r.shape:
                print("  %s: %s shape %s vs reference %s" % (case, name, a.shape, r.shape))
                ok = False
                continue
            err = np.abs(a.astype(np.float64) - r.astype(np.float64))
            e = float(err.max()) if err.size else 0.0
            if r.dtype == np.int64 and e != 0:
                e = float("inf")
            compared += 1
            worst = max(worst, e)
            if not e <= tol:
                idx = np.unravel_index(int(np.argmax(err)), err.shape)
                print("  %s: %s FAIL max|err| %.3e at %s: ours %r ref %r" %
                      (case, name, e, idx, a[idx], r[idx]))
                ok = False
        print("%-14s %s  %d tensors  max abs err %.3e" % (case, "ok  " if ok else "FAIL", compared, worst))
        all_ok &= ok
        overall = max(overall, worst)
    print("golden check: %s, max abs err over all cases %.3e (tolerance %.0e)" %
          ("PASSED" if all_ok else "FAILED", overall, tol))
    return all_ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-golden", metavar="DIR", help="directory of golden cases")
    ap.add_argument("--tol", type=float, default=1e-10)
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.check_golden:
        sys.exit(0 if check_golden(args.check_golden, args.tol) else 1)
    ap.print_help()


if __name__ == "__main__":
    main()
