"""Minimal safetensors reader/writer (the `safetensors` package is not installed).

Format: 8-byte little-endian header length N, then N bytes of JSON
{"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
 "__metadata__": {str: str}}, then the data block; offsets are relative to the
start of the data block. We pad the header with spaces so the data block starts
at a multiple of 64 bytes. Tensors follow each other with no gaps (the reference
implementation rejects holes), in sorted name order, so a reader must not assume
a tensor is aligned beyond its position in the data block.
"""

import json
import struct

import numpy as np
import torch

_ALIGN = 64

_TORCH_TO_ST = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}
_ST_TO_TORCH = {v: k for k, v in _TORCH_TO_ST.items()}


def _tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        # numpy has no bfloat16: move the raw 16-bit patterns
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save_file(tensors, path, metadata=None):
    """tensors: name -> torch.Tensor (written in sorted name order)."""
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _TORCH_TO_ST:
            raise TypeError(f"{name}: unsupported dtype {t.dtype}")
        data = _tensor_bytes(t)
        header[name] = {"dtype": _TORCH_TO_ST[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("safetensors metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((-(8 + len(hjson))) % _ALIGN)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def load_file(path):
    """Returns (tensors: name -> torch.Tensor, metadata: dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, info in header.items():
        dtype = _ST_TO_TORCH[info["dtype"]]
        b, e = info["data_offsets"]
        buf = bytearray(raw[base + b:base + e])
        if dtype == torch.bfloat16:
            t = torch.from_numpy(np.frombuffer(buf, dtype=np.int16).copy()).view(torch.bfloat16)
        elif dtype == torch.bool:
            t = torch.from_numpy(np.frombuffer(buf, dtype=np.bool_).copy())
        else:
            npdt = torch.empty(0, dtype=dtype).numpy().dtype
            t = torch.from_numpy(np.frombuffer(buf, dtype=npdt).copy())
        out[name] = t.reshape(info["shape"])
    return out, meta
