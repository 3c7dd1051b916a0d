"""formulate-v1 in PyTorch: the exact twin of docs/model.md.

The C engine (engine/fe-model.c) implements the same network; the tensor names of
this module's state_dict() are the names in docs/model.md, so a state_dict saved
from here loads in the engine unchanged.

Runs on torch 1.13 (Debian's python3-torch, CPU) and torch 2.x (CUDA). Only uses
plain nn.Linear / nn.Conv2d / nn.LayerNorm / nn.BatchNorm2d so the math is the
documented one, with no fused attention whose numerics could drift from the engine.
"""

import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ARCH = "formulate-v1"

DEFAULT_CONFIG = {
    "arch": ARCH,
    "format_version": 1,
    "in_channels": 1,
    "cnn_channels": [32, 64, 128, 256, 256],
    "cnn_pool": [[2, 2], [2, 2], [2, 2], [2, 1], [1, 1]],
    "d_model": 256,
    "n_heads": 8,
    "d_ff": 1024,
    "enc_layers": 2,
    "dec_layers": 4,
    "vocab_size": 600,
    "max_tokens": 256,
    "tie_embeddings": True,
    "em_px": 20,
    "cc_median_em": 0.55,
    "max_height": 256,
    "max_width": 1536,
    "ln_eps": 1e-5,
    "bn_eps": 1e-5,
    "pad_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "unk_id": 3,
}

SPECIAL_TOKENS = ["<pad>", "<bos>", "<eos>", "<unk>"]


def make_config(**overrides):
    """A full config: the v1 defaults with overrides, checked."""
    cfg = dict(DEFAULT_CONFIG)
    for key, value in overrides.items():
        if key not in DEFAULT_CONFIG:
            raise KeyError(f"unknown formulate-v1 config key {key!r}")
        cfg[key] = value
    check_config(cfg)
    return cfg


def strides(cfg):
    """(height_stride, width_stride): products of the pool sizes."""
    hs = 1
    ws = 1
    for ph, pw in cfg["cnn_pool"]:
        hs *= ph
        ws *= pw
    return hs, ws


def check_config(cfg):
    if cfg["arch"] != ARCH:
        raise ValueError(f"arch must be {ARCH!r}")
    if cfg["format_version"] != 1 or cfg["in_channels"] != 1:
        raise ValueError("format_version and in_channels must be 1")
    if len(cfg["cnn_channels"]) != len(cfg["cnn_pool"]) or not cfg["cnn_channels"]:
        raise ValueError("cnn_channels and cnn_pool must have the same non-zero length")
    hs, ws = strides(cfg)
    if hs != 16 or ws not in (8, 16):
        raise ValueError(f"pool product must be 16 x (8|16), got {hs} x {ws}")
    if cfg["d_model"] % cfg["n_heads"]:
        raise ValueError("n_heads must divide d_model")
    if cfg["d_model"] % 4:
        # 2-D sinusoidal positions need sin/cos pairs in each half
        raise ValueError("d_model must be a multiple of 4")


def sinusoid_1d(positions, n):
    """pe_n(p): [len(positions), n]; pe[2j] = sin(p w_j), pe[2j+1] = cos(p w_j),
    w_j = 10000^(-2j/n). Computed in float64 then rounded, so both sides of the
    engine contract can reproduce it to the last bit or so."""
    p = positions.to(torch.float64)[:, None]
    j = torch.arange(n // 2, dtype=torch.float64)
    w = torch.pow(torch.tensor(10000.0, dtype=torch.float64), -2.0 * j / n)
    angles = p * w[None, :]
    pe = torch.empty(len(positions), n, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.to(torch.float32)


def sinusoid_2d(h, w, d_model):
    """[h*w, d_model], row-major (index = y*w + x): concat(pe_n(y), pe_n(x))."""
    n = d_model // 2
    pe_y = sinusoid_1d(torch.arange(h), n)
    pe_x = sinusoid_1d(torch.arange(w), n)
    pe = torch.cat([pe_y[:, None, :].expand(h, w, n), pe_x[None, :, :].expand(h, w, n)], dim=2)
    return pe.reshape(h * w, d_model)


class LayerNorm(nn.LayerNorm):
    """nn.LayerNorm computed in float32 whatever the input dtype: under CPU
    autocast (torch 1.13) plain layer_norm refuses bf16 input with fp32 weights,
    and a float32 result keeps the residual stream in float32."""

    def forward(self, x):
        return F.layer_norm(x.float(), self.normalized_shape, self.weight.float(),
                            self.bias.float(), self.eps)


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, pool, bn_eps, conv_bias=False):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=conv_bias)
        self.bn = nn.BatchNorm2d(c_out, eps=bn_eps)
        self.pool = tuple(pool)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        if self.pool != (1, 1):
            x = F.max_pool2d(x, kernel_size=self.pool, stride=self.pool)
        return x


class Attention(nn.Module):
    """Multi-head attention with separate q/k/v/o Linear layers (docs/model.md)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.dh = d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.dh).transpose(1, 2)  # [b, h, t, dh]

    def project_kv(self, mem):
        return self.split(self.k(mem)), self.split(self.v(mem))

    def attend(self, q, k, v, mask):
        """q [b,h,tq,dh], k/v [b,h,tk,dh]; mask broadcastable to [b,1,tq,tk],
        True = may attend. Softmax in float32 even under autocast."""
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.dh))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores.float(), dim=-1).to(v.dtype)
        out = torch.matmul(probs, v)  # [b, h, tq, dh]
        b, h, tq, dh = out.shape
        return self.o(out.transpose(1, 2).reshape(b, tq, h * dh))

    def forward(self, x, mem=None, mask=None):
        kv_src = x if mem is None else mem
        k, v = self.project_kv(kv_src)
        return self.attend(self.split(self.q(x)), k, v, mask)


class MLP(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # exact erf GELU (approximate='none')


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, eps = cfg["d_model"], cfg["ln_eps"]
        self.ln1 = LayerNorm(d, eps=eps)
        self.attn = Attention(d, cfg["n_heads"])
        self.ln2 = LayerNorm(d, eps=eps)
        self.mlp = MLP(d, cfg["d_ff"])

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask=mask)
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.proj = nn.Linear(cfg["cnn_channels"][-1], cfg["d_model"])
        self.layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg["enc_layers"])])
        self.norm = LayerNorm(cfg["d_model"], eps=cfg["ln_eps"])


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, eps, h = cfg["d_model"], cfg["ln_eps"], cfg["n_heads"]
        self.ln1 = LayerNorm(d, eps=eps)
        self.self_attn = Attention(d, h)
        self.ln2 = LayerNorm(d, eps=eps)
        self.cross_attn = Attention(d, h)
        self.ln3 = LayerNorm(d, eps=eps)
        self.mlp = MLP(d, cfg["d_ff"])


class OutputHead(nn.Module):
    """dec.out: bias always, weight only when the embeddings are not tied."""

    def __init__(self, cfg):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(cfg["vocab_size"]))
        if cfg["tie_embeddings"]:
            self.weight = None
        else:
            self.weight = nn.Parameter(torch.empty(cfg["vocab_size"], cfg["d_model"]))
            nn.init.normal_(self.weight, std=cfg["d_model"] ** -0.5)


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
        self.pos_emb = nn.Embedding(cfg["max_tokens"], cfg["d_model"])
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg["dec_layers"])])
        self.norm = LayerNorm(cfg["d_model"], eps=cfg["ln_eps"])
        self.out = OutputHead(cfg)


class FormulateModel(nn.Module):
    def __init__(self, cfg, conv_bias=False):
        """conv_bias: give the convolutions a bias (docs/model.md allows an
        optional cnn.{i}.conv.bias; the engine sees it from the tensors, so it is
        not a config key)."""
        super().__init__()
        check_config(cfg)
        self.cfg = dict(cfg)
        self.height_stride, self.width_stride = strides(cfg)
        chans = [cfg["in_channels"]] + list(cfg["cnn_channels"])
        self.cnn = nn.ModuleList(
            [ConvBlock(chans[i], chans[i + 1], cfg["cnn_pool"][i], cfg["bn_eps"], conv_bias)
             for i in range(len(cfg["cnn_channels"]))])
        self.enc = Encoder(cfg)
        self.dec = Decoder(cfg)
        self._pe_cache = {}
        self.reset_parameters()

    def reset_parameters(self):
        d = self.cfg["d_model"]
        nn.init.normal_(self.dec.tok_emb.weight, std=d ** -0.5)
        nn.init.normal_(self.dec.pos_emb.weight, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    # ------------------------------------------------------------------ encoder

    def enc_positions(self, h, w, device, dtype):
        key = (h, w)
        pe = self._pe_cache.get(key)
        if pe is None:
            pe = sinusoid_2d(h, w, self.cfg["d_model"])
            self._pe_cache[key] = pe
        return pe.to(device=device, dtype=dtype)

    def encode(self, pixels, valid_hw=None):
        """pixels [B,1,H,W] (ink = 1). valid_hw: optional [B,2] int tensor with
        each image's own (H, W) before batch padding; padded feature positions are
        then masked as keys, so every image's result equals running it alone.
        Returns (memory [B, L, d_model], key mask [B, L] bool or None)."""
        x = pixels
        ph, pw = 1, 1
        for block in self.cnn:
            x = block(x)
            if valid_hw is not None:
                # Alone, an image's conv padding reads zeros past its edge; in a
                # padded batch the activations there are not zero (conv spill-over,
                # BN shift), so zero them after every block to keep each image's
                # result equal to running it by itself (as the engine does).
                ph *= block.pool[0]
                pw *= block.pool[1]
                vh = (valid_hw[:, 0] // ph).to(x.device)
                vw = (valid_hw[:, 1] // pw).to(x.device)
                keep = ((torch.arange(x.shape[2], device=x.device)[None, :, None] < vh[:, None, None])
                        & (torch.arange(x.shape[3], device=x.device)[None, None, :] < vw[:, None, None]))
                x = x * keep[:, None].to(x.dtype)
        b, c, h, w = x.shape
        x = x.flatten(2).transpose(1, 2)  # [B, L, C], index = y*w + x
        x = self.enc.proj(x).float()  # the residual stream stays float32 under autocast
        x = x + self.enc_positions(h, w, x.device, x.dtype)[None]
        mask = None
        if valid_hw is not None:
            fh = (valid_hw[:, 0] // self.height_stride).to(x.device)
            fw = (valid_hw[:, 1] // self.width_stride).to(x.device)
            ys = torch.arange(h, device=x.device)
            xs = torch.arange(w, device=x.device)
            mask = (ys[None, :, None] < fh[:, None, None]) & (xs[None, None, :] < fw[:, None, None])
            mask = mask.reshape(b, h * w)
            if bool(mask.all()):
                mask = None
        attn_mask = None if mask is None else mask[:, None, None, :]
        for layer in self.enc.layers:
            x = layer(x, attn_mask)
        return self.enc.norm(x), mask

    # ------------------------------------------------------------------ decoder

    def out_weight(self):
        return self.dec.tok_emb.weight if self.cfg["tie_embeddings"] else self.dec.out.weight

    def logits(self, x):
        x = self.dec.norm(x)
        return F.linear(x, self.out_weight(), self.dec.out.bias)

    def decode(self, tokens, memory, mem_mask=None):
        """Teacher-forced decoder: tokens [B,T] (BOS first) -> logits [B,T,V]."""
        t = tokens.shape[1]
        pos = torch.arange(t, device=tokens.device)
        x = self.dec.tok_emb(tokens) + self.dec.pos_emb(pos)[None]
        causal = torch.ones(t, t, dtype=torch.bool, device=tokens.device).tril()[None, None]
        cross_mask = None if mem_mask is None else mem_mask[:, None, None, :]
        for layer in self.dec.layers:
            x = x + layer.self_attn(layer.ln1(x), mask=causal)
            x = x + layer.cross_attn(layer.ln2(x), mem=memory, mask=cross_mask)
            x = x + layer.mlp(layer.ln3(x))
        return self.logits(x)

    def forward(self, pixels, tokens, valid_hw=None):
        memory, mask = self.encode(pixels, valid_hw)
        return self.decode(tokens, memory, mask)

    # ------------------------------------------------------- incremental decode

    def init_cache(self, memory):
        """Cross-attention K/V of every decoder layer (computed once per image)
        and empty self-attention caches."""
        cache = []
        for layer in self.dec.layers:
            ck, cv = layer.cross_attn.project_kv(memory)
            cache.append({"ck": ck, "cv": cv, "sk": None, "sv": None})
        return cache

    def step(self, token_ids, t, cache, mem_mask=None):
        """One decoder step for a batch: token_ids [B] at position t. Updates the
        self-attention K/V cache in place; returns logits [B, V]."""
        x = self.dec.tok_emb(token_ids)[:, None, :] + self.dec.pos_emb.weight[t][None, None, :]
        cross_mask = None if mem_mask is None else mem_mask[:, None, None, :]
        for layer, c in zip(self.dec.layers, cache):
            a = layer.self_attn
            hx = layer.ln1(x)
            k, v = a.project_kv(hx)
            c["sk"] = k if c["sk"] is None else torch.cat([c["sk"], k], dim=2)
            c["sv"] = v if c["sv"] is None else torch.cat([c["sv"], v], dim=2)
            x = x + a.attend(a.split(a.q(hx)), c["sk"], c["sv"], None)
            ca = layer.cross_attn
            x = x + ca.attend(ca.split(ca.q(layer.ln2(x))), c["ck"], c["cv"], cross_mask)
            x = x + layer.mlp(layer.ln3(x))
        return self.logits(x)[:, 0, :]

    @torch.no_grad()
    def greedy_decode(self, memory, mem_mask=None, max_steps=None, return_first_logits=False):
        """Greedy decoding with a KV cache. Runs at most max_steps (default
        max_tokens) decoder steps at positions 0..max_steps-1, each emitting one
        token; stops a sequence at EOS. Returns a list of token-id lists without
        BOS/EOS (and the first step's logits [B, V] when asked)."""
        cfg = self.cfg
        steps = cfg["max_tokens"] if max_steps is None else min(max_steps, cfg["max_tokens"])
        b = memory.shape[0]
        cache = self.init_cache(memory)
        cur = torch.full((b,), cfg["bos_id"], dtype=torch.long, device=memory.device)
        done = torch.zeros(b, dtype=torch.bool, device=memory.device)
        out = [[] for _ in range(b)]
        first = None
        for t in range(steps):
            logits = self.step(cur, t, cache, mem_mask)
            if t == 0:
                first = logits.float().clone()
            nxt = logits.argmax(dim=-1)
            for i, tok in enumerate(nxt.tolist()):
                if not done[i]:
                    if tok == cfg["eos_id"]:
                        done[i] = True
                    else:
                        out[i].append(tok)
            if bool(done.all()):
                break
            cur = nxt
        return (out, first) if return_first_logits else out

    @torch.no_grad()
    def recognize(self, pixels, valid_hw=None, max_steps=None):
        memory, mask = self.encode(pixels, valid_hw)
        return self.greedy_decode(memory, mask, max_steps)


# ---------------------------------------------------------------------- files

def detokenize(vocab, ids):
    """docs/model.md: tokens joined without spaces, except one space between a
    control word (backslash + letters only) and a next token starting with a letter."""
    parts = []
    prev_is_word = False
    for i in ids:
        tok = vocab[i] if 0 <= i < len(vocab) else "<unk>"
        if prev_is_word and tok[:1].isascii() and tok[:1].isalpha():
            parts.append(" ")
        parts.append(tok)
        prev_is_word = len(tok) > 1 and tok[0] == "\\" and tok[1:].isascii() and tok[1:].isalpha()
    return "".join(parts)


def save_pt(model, vocab, path):
    """A .pt holding only state_dict(), plus the sidecar JSON the engine reads."""
    torch.save(model.state_dict(), path)
    sidecar = path[:-3] + ".json" if path.endswith(".pt") else path + ".json"
    with open(sidecar, "w") as f:
        json.dump({"config": model.cfg, "vocab": list(vocab)}, f, indent=1)
    return sidecar


def load_pt(path, map_location="cpu"):
    sidecar = path[:-3] + ".json" if path.endswith(".pt") else path + ".json"
    with open(sidecar) as f:
        side = json.load(f)
    return model_from_state_dict(side["config"], torch.load(path, map_location=map_location)), side["vocab"]


def model_from_state_dict(cfg, state):
    """A model for cfg with state's tensors (any float dtype, made float32)."""
    model = FormulateModel(cfg, conv_bias="cnn.0.conv.bias" in state)
    own = model.state_dict()
    fixed = {}
    for name, t in state.items():
        fixed[name] = t.to(own[name].dtype) if name in own and own[name].is_floating_point() else t
    missing = [k for k in own if k not in fixed and not k.endswith("num_batches_tracked")]
    if missing:
        raise KeyError(f"missing tensors: {missing[:5]}")
    model.load_state_dict(fixed, strict=False)
    return model


def load_safetensors(path):
    """(model, vocab, metadata) from an engine .safetensors file."""
    from safetensors_io import load_file
    tensors, meta = load_file(path)
    if meta.get("format") != "formulate":
        raise ValueError(f"{path}: not a formulate model (metadata format={meta.get('format')!r})")
    cfg = json.loads(meta["formulate.config"])
    vocab = json.loads(meta["formulate.vocab"])
    return model_from_state_dict(cfg, tensors), vocab, meta
