#!/usr/bin/python3
"""Writes the weights layer's test models: tiny random formulate-v1 models in
every accepted format (tests/weights/fixtures/) and a corpus of broken ones
(tests/bad/), each broken in exactly one way.

    /usr/bin/python3 tools/make-bad-models.py          # from the source root

Deterministic (fixed seeds, fixed zip timestamps), so re-running it leaves
git clean. Needs Debian's python3-torch (writes .pt with torch.save).
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "weights", "fixtures")
BAD = os.path.join(ROOT, "tests", "bad")

# Small enough to commit, but every kind of block is there.
TINY_CONFIG = {
    "arch": "formulate-v1", "format_version": 1, "in_channels": 1,
    "cnn_channels": [4, 8], "cnn_pool": [[4, 4], [4, 2]],
    "d_model": 16, "n_heads": 2, "d_ff": 32, "enc_layers": 1, "dec_layers": 1,
    "vocab_size": 12, "max_tokens": 16, "tie_embeddings": True,
    "em_px": 20, "cc_median_em": 0.55, "max_height": 64, "max_width": 128,
    "ln_eps": 1e-5, "bn_eps": 1e-5, "pad_id": 0, "bos_id": 1, "eos_id": 2, "unk_id": 3,
}
TINY_VOCAB = ["<pad>", "<bos>", "<eos>", "<unk>", "x", "2", "+", "^", "{", "}",
              "\\frac", "\\alpha"]

# The bad corpus uses an even smaller model: one conv block, no encoder layer.
MICRO_CONFIG = dict(TINY_CONFIG, cnn_channels=[2], cnn_pool=[[16, 8]], d_model=8, d_ff=8,
                    enc_layers=0, vocab_size=6, max_tokens=4, max_height=32, max_width=64)
MICRO_VOCAB = ["<pad>", "<bos>", "<eos>", "<unk>", "x", "y"]

ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int64: "I64", torch.int32: "I32"}


def expected_shapes(cfg):
    """Name -> shape, in docs/model.md order (mirrors fe_model_expected_tensors)."""
    d, ff, v = cfg["d_model"], cfg["d_ff"], cfg["vocab_size"]
    out = collections.OrderedDict()

    def linear(p, o, i):
        out[p + ".weight"] = [o, i]
        out[p + ".bias"] = [o]

    def norm(p):
        out[p + ".weight"] = [d]
        out[p + ".bias"] = [d]

    def attn(p):
        for part in "qkvo":
            linear(f"{p}.{part}", d, d)

    def mlp(p):
        linear(p + ".fc1", ff, d)
        linear(p + ".fc2", d, ff)

    c_in = cfg["in_channels"]
    for i, c in enumerate(cfg["cnn_channels"]):
        out[f"cnn.{i}.conv.weight"] = [c, c_in, 3, 3]
        if i == 0:
            out[f"cnn.{i}.conv.bias"] = [c]          # optional; present for block 0 only
        for n in ("weight", "bias", "running_mean", "running_var"):
            out[f"cnn.{i}.bn.{n}"] = [c]
        out[f"cnn.{i}.bn.num_batches_tracked"] = []
        c_in = c
    linear("enc.proj", d, c_in)
    for l in range(cfg["enc_layers"]):
        norm(f"enc.layers.{l}.ln1")
        attn(f"enc.layers.{l}.attn")
        norm(f"enc.layers.{l}.ln2")
        mlp(f"enc.layers.{l}.mlp")
    norm("enc.norm")
    out["dec.tok_emb.weight"] = [v, d]
    out["dec.pos_emb.weight"] = [cfg["max_tokens"], d]
    for l in range(cfg["dec_layers"]):
        norm(f"dec.layers.{l}.ln1")
        attn(f"dec.layers.{l}.self_attn")
        norm(f"dec.layers.{l}.ln2")
        attn(f"dec.layers.{l}.cross_attn")
        norm(f"dec.layers.{l}.ln3")
        mlp(f"dec.layers.{l}.mlp")
    norm("dec.norm")
    out["dec.out.bias"] = [v]
    return out


def random_state(cfg, seed):
    torch.manual_seed(seed)
    sd = collections.OrderedDict()
    for name, shape in expected_shapes(cfg).items():
        if name.endswith("num_batches_tracked"):
            sd[name] = torch.tensor(7, dtype=torch.int64)
        elif name.endswith("running_var"):
            sd[name] = torch.rand(shape) + 0.5
        else:
            sd[name] = torch.randn(shape) * 0.5
    return sd


def metadata(cfg, vocab):
    return {"format": "formulate", "formulate.format_version": "1",
            "formulate.config": json.dumps(cfg), "formulate.vocab": json.dumps(vocab)}


def safetensors_bytes(items, meta, header_items=None, pad=True):
    """items: list of (name, dtype string, shape, raw bytes). header_items, when
    given, replaces the header's (key, value) list so a test can break it."""
    data = b""
    entries = []
    for name, dtype, shape, raw in items:
        entries.append((name, {"dtype": dtype, "shape": list(shape),
                               "data_offsets": [len(data), len(data) + len(raw)]}))
        data += raw
    if header_items is None:
        header_items = ([("__metadata__", meta)] if meta is not None else []) + entries
    header = "{" + ",".join(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"))
                            for k, v in header_items) + "}"
    header = header.encode()
    if pad:  # like the reference writer: the data section starts 8-byte aligned
        header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + data, entries


def st_items(sd, dtype=None):
    items = []
    for name, t in sd.items():
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        t = t.contiguous()
        raw = t.numpy().tobytes() if t.dtype != torch.bfloat16 else \
            t.view(torch.int16).numpy().tobytes()
        items.append((name, ST_DTYPES[t.dtype], list(t.shape), raw))
    return items


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_json(path, obj):
    write(path, (json.dumps(obj, indent=1) + "\n").encode())


def torch_save_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def rezip(data, transform):
    """Rewrites a torch.save archive entry by entry: transform(name, bytes) ->
    (name, bytes, compress_type) or None to drop the entry."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            r = transform(info.filename, src.read(info.filename))
            if r is None:
                continue
            name, raw, method = r
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = method
            dst.writestr(zi, raw)
    return out.getvalue()


def zip64_bytes(data):
    """The same archive written with zip64 records everywhere (what torch's
    writer does for archives past 4 GiB), every entry stored."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out, central = b"", b""
    for info in src.infolist():
        raw, name = src.read(info.filename), info.filename.encode()
        crc = zipfile.crc32(raw)
        offset = len(out)
        extra = struct.pack("<HHQQ", 1, 16, len(raw), len(raw))
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0x21, crc,
                           0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra)) + name + extra + raw
        cextra = struct.pack("<HHQQQ", 1, 24, len(raw), len(raw), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(name), len(cextra), 0, 0, 0, 0,
                               0xFFFFFFFF) + name + cextra
    cd_offset, n = len(out), len(src.infolist())
    out += central
    eocd64 = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064b50, 0, eocd64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    assert zipfile.ZipFile(io.BytesIO(out)).read(src.infolist()[0].filename)
    return out


class _StorageRef:
    def __init__(self, key, tensor):
        self.key, self.tensor = key, tensor


class _OldTensor:
    """Pickles as the pre-1.? torch._utils._rebuild_tensor(storage, offset, size, stride)."""
    def __init__(self, ref):
        self.ref = ref

    def __reduce__(self):
        t = self.ref.tensor
        return (torch._utils._rebuild_tensor, (self.ref, 0, tuple(t.shape), tuple(t.stride())))


class _StoragePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            storage_type = {torch.float32: torch.FloatStorage, torch.int64: torch.LongStorage}
            return ("storage", storage_type[obj.tensor.dtype], obj.key, "cpu", obj.tensor.numel())
        return None


def old_rebuild_pt(sd):
    """A .pt written the way torch.save does, but naming _rebuild_tensor."""
    refs = collections.OrderedDict()
    for i, (name, t) in enumerate(sd.items()):
        refs[name] = _OldTensor(_StorageRef(str(i), t.contiguous()))
    pkl = io.BytesIO()
    _StoragePickler(pkl, protocol=2).dump(refs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        def put(name, raw):
            z.writestr(zipfile.ZipInfo("archive/" + name, date_time=(2020, 1, 1, 0, 0, 0)), raw)
        put("data.pkl", pkl.getvalue())
        for name, ref in refs.items():
            put("data/" + ref.ref.key, ref.ref.tensor.numpy().tobytes())
        put("version", b"3\n")
    return out.getvalue()


class _CraftedTensor:
    """Pickles as _rebuild_tensor_v2(storage, offset, shape, stride, ...) with
    whatever shape and stride it is given: what a hostile .pt can claim."""
    def __init__(self, ref, offset, shape, stride):
        self.ref, self.offset, self.shape, self.stride = ref, offset, shape, stride

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2,
                (self.ref, self.offset, tuple(self.shape), tuple(self.stride), False,
                 collections.OrderedDict()))


def crafted_pt(tensors, shared=False):
    """A torch.save()-shaped archive whose state dict holds name -> (storage
    elements, offset, shape, stride), each over its own zero-filled f32
    storage, or all over the first one's when shared."""
    refs = collections.OrderedDict()
    for i, (name, (numel, offset, shape, stride)) in enumerate(tensors.items()):
        ref = next(iter(refs.values())).ref if shared and refs else \
            _StorageRef(str(i), torch.zeros(numel))
        refs[name] = _CraftedTensor(ref, offset, shape, stride)
    pkl = io.BytesIO()
    _StoragePickler(pkl, protocol=2).dump(refs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        def put(name, raw):
            z.writestr(zipfile.ZipInfo("archive/" + name, date_time=(2020, 1, 1, 0, 0, 0)), raw)
        put("data.pkl", pkl.getvalue())
        for key, ref in {t.ref.key: t.ref for t in refs.values()}.items():
            put("data/" + key, ref.tensor.numpy().tobytes())
        put("version", b"3\n")
    return out.getvalue()


def pt_state(sd, cfg):
    """The state dict as model.state_dict() would hold it: tied output weight
    sharing the embedding's storage, a transposed (non-contiguous) weight, a
    tensor at a storage offset, and the _metadata attribute."""
    sd = collections.OrderedDict((k, v.clone()) for k, v in sd.items())
    if "enc.proj.weight" in sd:
        sd["enc.proj.weight"] = sd["enc.proj.weight"].t().contiguous().t()
        assert not sd["enc.proj.weight"].is_contiguous()
    big = torch.zeros(max(100, cfg["d_model"] + 20))
    big[10:10 + cfg["d_model"]] = sd["dec.norm.weight"]
    sd["dec.norm.weight"] = big[10:10 + cfg["d_model"]]
    if cfg["tie_embeddings"]:
        sd["dec.out.weight"] = sd["dec.tok_emb.weight"]
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return sd


def make_fixtures():
    sd = random_state(TINY_CONFIG, seed=1)
    meta = metadata(TINY_CONFIG, TINY_VOCAB)
    for suffix, dtype in (("f32", None), ("f16", torch.float16), ("bf16", torch.bfloat16)):
        data, _ = safetensors_bytes(st_items(sd, dtype), meta)
        write(os.path.join(FIXTURES, f"tiny-{suffix}.safetensors"), data)
    write(os.path.join(FIXTURES, "tiny.pt"), torch_save_bytes(pt_state(sd, TINY_CONFIG)))
    write_json(os.path.join(FIXTURES, "tiny.json"),
               {"config": TINY_CONFIG, "vocab": TINY_VOCAB, "git_commit": "fixture"})

    # The micro model three ways: as torch.save wrote it, rewritten with zip64
    # records, and as saved from a GPU (storage location "cuda:0").
    micro = torch_save_bytes(pt_state(random_state(MICRO_CONFIG, seed=2), MICRO_CONFIG))
    cuda = rezip(micro, lambda n, b: (n, b.replace(b"X\x03\x00\x00\x00cpu",
                                                   b"X\x06\x00\x00\x00cuda:0")
                                      if n.endswith("/data.pkl") else b, zipfile.ZIP_STORED))
    assert b"cuda:0" in zipfile.ZipFile(io.BytesIO(cuda)).read("archive/data.pkl")
    # And as saved by other habits: nn.Parameter values (_rebuild_parameter),
    # and pickle protocol 4 (STACK_GLOBAL, MEMOIZE, FRAME, SHORT_BINUNICODE).
    params = pt_state(random_state(MICRO_CONFIG, seed=2), MICRO_CONFIG)
    for k, v in params.items():
        if v.is_floating_point():
            params[k] = torch.nn.Parameter(v, requires_grad=False)
    proto4 = io.BytesIO()
    torch.save(pt_state(random_state(MICRO_CONFIG, seed=2), MICRO_CONFIG), proto4,
               pickle_protocol=4)
    assert b"\x93" in zipfile.ZipFile(io.BytesIO(proto4.getvalue())).read("archive/data.pkl")
    for name, data in (("micro", micro), ("micro-zip64", zip64_bytes(micro)),
                       ("micro-cuda", cuda), ("micro-params", torch_save_bytes(params)),
                       ("micro-proto4", proto4.getvalue()),
                       ("micro-v1", old_rebuild_pt(pt_state(random_state(MICRO_CONFIG, seed=2), MICRO_CONFIG)))):
        write(os.path.join(FIXTURES, name + ".pt"), data)
        write_json(os.path.join(FIXTURES, name + ".json"),
                   {"config": MICRO_CONFIG, "vocab": MICRO_VOCAB})


class SystemCall:
    """Pickles as posix.system('...'): what a malicious checkpoint does."""
    def __reduce__(self):
        return (os.system, ("echo formulate-test-should-never-run",))


def make_bad():
    cfg, vocab = MICRO_CONFIG, MICRO_VOCAB
    sd = random_state(cfg, seed=2)
    meta = metadata(cfg, vocab)
    items = st_items(sd, torch.float16)
    good, entries = safetensors_bytes(items, meta)
    st = lambda name, data: write(os.path.join(BAD, name + ".safetensors"), data)

    st("truncated", good[: len(good) - 40])
    st("truncated-header", good[: 8 + 20])
    st("too-short", good[:7])
    st("header-past-eof", struct.pack("<Q", 1 << 40) + good[8:])
    st("empty", b"")

    def with_header(mutate):
        hi = [("__metadata__", dict(meta))] + [(n, dict(v)) for n, v in entries]
        mutate(hi)
        return safetensors_bytes(items, meta, header_items=hi)[0]

    def find(hi, name):
        return next(v for n, v in hi if n == name)

    def overlap(hi):
        find(hi, "dec.norm.bias")["data_offsets"] = list(find(hi, "dec.norm.weight")["data_offsets"])
    st("overlap", with_header(overlap))
    st("unknown-dtype", with_header(lambda hi: find(hi, "enc.norm.weight").update(dtype="F8_E4M3")))

    def shape_bytes(hi):
        find(hi, "dec.tok_emb.weight")["shape"] = [6, 9]
    st("shape-bytes", with_header(shape_bytes))

    def outside(hi):
        find(hi, "dec.out.bias")["data_offsets"] = [1 << 20, (1 << 20) + 12]
    st("offsets-outside", with_header(outside))
    st("duplicate-name", with_header(lambda hi: hi.append(("enc.norm.bias", find(hi, "enc.norm.bias")))))
    st("bad-json", good[:8] + good[8:].replace(b'"__metadata__"', b"'__metadata__'", 1))
    st("not-object", safetensors_bytes([], None, header_items=[])[0].replace(b"{}", b"[]") )
    st("no-metadata", safetensors_bytes(items, None)[0])

    def config_change(**changes):
        return safetensors_bytes(items, metadata(dict(cfg, **changes), vocab))[0]
    st("bad-arch", config_change(arch="formulate-v2"))
    st("heads-not-dividing", config_change(n_heads=3))
    st("bad-pools", config_change(cnn_pool=[[8, 8]]))
    st("bad-pool-width", config_change(cnn_pool=[[16, 4]]))
    st("pool-count", config_change(cnn_pool=[[4, 8], [4, 1]]))
    st("unknown-config-key", config_change(dropout=0.1))
    # Each value in range, together 7.9 GB at the first image (issue 18).
    st("huge-input", config_change(max_height=65536, max_width=65536))
    st("vocab-mismatch", safetensors_bytes(items, metadata(cfg, vocab[:5]))[0])
    st("bad-format-version", safetensors_bytes(items, dict(meta, **{"formulate.format_version": "2"}))[0])

    missing = [it for it in items if it[0] != "dec.norm.weight"]
    st("missing-tensor", safetensors_bytes(missing, meta)[0])
    wrong = [(n, d, [7] if n == "enc.norm.weight" else s, r[:14] if n == "enc.norm.weight" else r)
             for n, d, s, r in items]
    st("wrong-shape", safetensors_bytes(wrong, meta)[0])
    extra = items + [("enc.extra.weight", "F16", [2], b"\0\0\0\0")]
    st("unexpected-tensor", safetensors_bytes(extra, meta)[0])
    ints = [(n, "I16" if n == "dec.out.bias" else d, s, r) for n, d, s, r in items]
    st("int-weights", safetensors_bytes(ints, meta)[0])

    torch.manual_seed(3)
    write(os.path.join(BAD, "garbage.bin"), bytes(torch.randint(0, 256, (300,), dtype=torch.uint8).tolist()))

    # --- PyTorch ---
    sidecar = {"config": cfg, "vocab": vocab}
    pt_good = torch_save_bytes(pt_state(sd, cfg))

    def pt(name, data, side=sidecar):
        write(os.path.join(BAD, name + ".pt"), data)
        if side is not None:
            write_json(os.path.join(BAD, name + ".json"), side)

    # The payload the reference unpickler would run: pickle.dumps picks
    # "posix system" for os.system on Linux.
    evil = pickle.dumps(SystemCall(), protocol=2)
    assert b"posix\nsystem" in evil
    pt("os-system", rezip(pt_good, lambda n, b: (n, evil if n.endswith("/data.pkl") else b,
                                                 zipfile.ZIP_STORED)))
    pt("compressed", rezip(pt_good, lambda n, b: (n, b, zipfile.ZIP_DEFLATED)))
    pt("truncated", pt_good[: len(pt_good) // 2])
    pt("missing-storage", rezip(pt_good, lambda n, b: None if n.endswith("/data/0") else
                                (n, b, zipfile.ZIP_STORED)))
    pt("short-storage", rezip(pt_good, lambda n, b: (n, b[:6] if n.endswith("/data/0") else b,
                                                     zipfile.ZIP_STORED)))
    pt("not-a-dict", torch_save_bytes([sd["enc.norm.weight"]]))
    pt("bad-sidecar", pt_good, dict(sidecar, config=dict(cfg, n_heads=3)))
    pt("sidecar-vocab", pt_good, dict(sidecar, vocab=vocab + ["z"]))
    pt("no-sidecar", pt_good, side=None)
    # The start of a pre-1.6 torch.save file: magic number, protocol version.
    # (A whole one would name storages by memory address, so not reproducible.)
    pt("legacy", pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2))
    # Shapes and strides that expand a small storage (issue 18): stride 0 over
    # one element, where (2^31, 2^31) wrapped numel * 4 to 0 and overflowed the
    # heap, and (2^14, 2^14) took 1 GB; overlapping strides that address 1024
    # elements 2^56 times; a huge storage offset.
    pt("stride0-wrap", crafted_pt({"dec.norm.weight": (1, 0, [1 << 31, 1 << 31], [0, 0])}))
    pt("stride0-expand", crafted_pt({"dec.norm.weight": (1, 0, [1 << 14, 1 << 14], [0, 0])}))
    pt("overlap-strides", crafted_pt({"dec.norm.weight": (1024, 0, [128] * 8, [1] * 8)}))
    pt("offset-past-storage", crafted_pt({"dec.norm.weight": (8, (1 << 63) - 8, [8], [1])}))
    # Many transposed views of one storage: each is legal, their copies together
    # would be 64 times the file.
    views = collections.OrderedDict()
    for i in range(64):
        views[f"view.{i}"] = (64 * 64, 0, [64, 64], [1, 64])
    pt("many-views", crafted_pt(views, shared=True))
    missing_sd = pt_state(sd, cfg)
    del missing_sd["dec.pos_emb.weight"]
    pt("missing-tensor", torch_save_bytes(missing_sd))


def main():
    make_fixtures()
    make_bad()
    total = sum(os.path.getsize(os.path.join(d, f)) for d in (FIXTURES, BAD)
                for f in os.listdir(d))
    print(f"wrote {FIXTURES} and {BAD}: {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
