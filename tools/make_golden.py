#!/usr/bin/env python3
"""Writes the PyTorch golden cases under tests/golden/.

Needs PyTorch and NumPy (Debian: apt-get install python3-torch). Run on a developer machine,
not in CI; the small files it writes are committed:

    /usr/bin/python3 tools/make_golden.py tests/golden

Each case is nn.MultiheadAttention(d, h, bias, batch_first=True) with seeded random weights
and biases, its state_dict saved in the safetensors layout that safetensors.torch.save_file
writes, the inputs and PyTorch's float32 output as .npy, and an entry in cases.json.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

DTYPES = {torch.float32: "F32"}


def save_safetensors(tensors, path):
    """The safetensors format: u64 header length, JSON header, raw little-endian data."""
    # safetensors.torch.save_file orders by alignment, then name; all ours are F32.
    names = sorted(tensors)
    header, offset, blobs = {}, 0, []
    for name in names:
        t = tensors[name].detach().contiguous()
        data = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def make_case(out_dir, name, d, h, bias, batch, lq, lk, cross, seed):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d, h, bias=bias, batch_first=True).eval()
    if bias:
        with torch.no_grad():
            mha.in_proj_bias.normal_(0.0, 0.1)
            mha.out_proj.bias.normal_(0.0, 0.1)
    shape_q = (lq, d) if batch == 0 else (batch, lq, d)
    shape_k = (lk, d) if batch == 0 else (batch, lk, d)
    query = torch.randn(*shape_q)
    key = torch.randn(*shape_k) if cross else query
    value = torch.randn(*shape_k) if cross else query
    with torch.no_grad():
        output, _ = mha(query, key, value, need_weights=False)
    save_safetensors(mha.state_dict(), os.path.join(out_dir, name + ".safetensors"))
    np.save(os.path.join(out_dir, name + "_query.npy"), query.numpy())
    if cross:
        np.save(os.path.join(out_dir, name + "_key.npy"), key.numpy())
        np.save(os.path.join(out_dir, name + "_value.npy"), value.numpy())
    np.save(os.path.join(out_dir, name + "_output.npy"), output.numpy())
    return {"name": name, "heads": h, "cross": cross}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden"
    os.makedirs(out_dir, exist_ok=True)
    cases = [
        make_case(out_dir, "self_unbatched", 16, 4, True, 0, 7, 7, False, 1),
        make_case(out_dir, "self_batched", 32, 8, True, 2, 5, 5, False, 2),
        make_case(out_dir, "cross", 24, 3, True, 1, 6, 11, True, 3),
        make_case(out_dir, "no_bias", 8, 2, False, 0, 9, 9, False, 4),
        make_case(out_dir, "wide_head", 64, 1, True, 1, 33, 70, True, 5),
    ]
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
