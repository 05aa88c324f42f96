#!/usr/bin/env python3
"""Writes the PyTorch golden cases under tests/golden/.

Needs PyTorch and NumPy (Debian: apt-get install python3-torch). Run on a developer machine,
not in CI; the small files it writes are committed:

    /usr/bin/python3 tools/make_golden.py tests/golden

Each case is nn.MultiheadAttention(d, h, bias, batch_first=True) with seeded random weights
and biases, its state_dict saved in the safetensors layout that safetensors.torch.save_file
writes, the inputs and PyTorch's float32 output as .npy, and an entry in cases.json. Mask cases
add the masks PyTorch was given (bool or float .npy) and, with need_weights, its attention
weights. PyTorch 1.13 has no grouped-query attention or KV cache: those cases use a reference
written here in float64 (separate q/k/v projections named as Llama stores them, key/value
heads shared by groups of query heads, causal), and the C++ test replays the cache case as
decode steps.
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


def save(out_dir, name, suffix, array):
    np.save(os.path.join(out_dir, name + suffix), array)


def make_mask_case(out_dir, name, d, h, batch, lq, lk, cross, seed, causal=False,
                   key_padding=None, attn_mask=None, weights=None, lengths=None):
    """nn.MultiheadAttention with masks. key_padding / attn_mask: callables giving the mask."""
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_(0.0, 0.1)
        mha.out_proj.bias.normal_(0.0, 0.1)
    query = torch.randn(batch, lq, d)
    key = torch.randn(batch, lk, d) if cross else query
    value = torch.randn(batch, lk, d) if cross else query
    kpm = None
    if lengths is not None:
        kpm = torch.arange(lk)[None, :] >= torch.tensor(lengths)[:, None]
    elif key_padding is not None:
        kpm = key_padding(batch, lk)
    mask = attn_mask(batch * h, lq, lk) if attn_mask is not None else None
    if causal:
        mask = torch.triu(torch.full((lq, lk), float("-inf")), diagonal=1)
    with torch.no_grad():
        output, attn = mha(query, key, value, key_padding_mask=kpm, attn_mask=mask,
                           need_weights=weights is not None,
                           average_attn_weights=weights != "per_head")
    assert not torch.isnan(output).any(), name + ": a fully masked row (PyTorch gives NaN)"
    save_safetensors(mha.state_dict(), os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_query.npy", query.numpy())
    if cross:
        save(out_dir, name, "_key.npy", key.numpy())
        save(out_dir, name, "_value.npy", value.numpy())
    if kpm is not None:
        save(out_dir, name, "_key_padding_mask.npy", kpm.numpy())
    if mask is not None and not causal:
        save(out_dir, name, "_attn_mask.npy", mask.numpy())
    if weights is not None:
        save(out_dir, name, "_weights.npy", attn.numpy())
    save(out_dir, name, "_output.npy", output.numpy())
    case = {"name": name, "heads": h, "cross": cross, "causal": causal,
            "key_padding_mask": kpm is not None,
            "attn_mask": mask is not None and not causal}
    if weights is not None:
        case["weights"] = weights
    if lengths is not None:
        case["lengths"] = lengths
    return case


def make_gqa_case(out_dir, name, d, h, kv_heads, batch, length, seed, decode_steps=None):
    """Grouped-query causal self-attention, written out in float64."""
    g = torch.Generator().manual_seed(seed)
    dk = d // h
    kvd = kv_heads * dk

    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * std

    sd = d ** -0.5
    tensors = {"q_proj.weight": randn(d, d, std=sd), "k_proj.weight": randn(kvd, d, std=sd),
               "v_proj.weight": randn(kvd, d, std=sd), "o_proj.weight": randn(d, d, std=sd),
               "q_proj.bias": randn(d, std=0.1), "k_proj.bias": randn(kvd, std=0.1),
               "v_proj.bias": randn(kvd, std=0.1), "o_proj.bias": randn(d, std=0.1)}
    tensors = {k: v.float() for k, v in tensors.items()}
    t = {k: v.double() for k, v in tensors.items()}
    x = randn(batch, length, d).float()
    xd = x.double()
    q = (xd @ t["q_proj.weight"].T + t["q_proj.bias"]).view(batch, length, h, dk).transpose(1, 2)
    k = (xd @ t["k_proj.weight"].T + t["k_proj.bias"]).view(batch, length, kv_heads, dk)
    v = (xd @ t["v_proj.weight"].T + t["v_proj.bias"]).view(batch, length, kv_heads, dk)
    # Query head i uses key/value head i // (h // kv_heads).
    k = k.transpose(1, 2).repeat_interleave(h // kv_heads, dim=1)
    v = v.transpose(1, 2).repeat_interleave(h // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) / dk ** 0.5
    scores = scores + torch.triu(torch.full((length, length), float("-inf"),
                                            dtype=torch.float64), diagonal=1)
    heads = torch.softmax(scores, dim=-1) @ v
    concat = heads.transpose(1, 2).reshape(batch, length, d)
    output = concat @ t["o_proj.weight"].T + t["o_proj.bias"]
    save_safetensors(tensors, os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_query.npy", x.numpy())
    save(out_dir, name, "_output.npy", output.float().numpy())
    case = {"name": name, "heads": h, "cross": False, "causal": True,
            "key_padding_mask": False, "attn_mask": False, "kv_heads": kv_heads}
    if decode_steps is not None:
        assert sum(decode_steps) == length
        case["decode_steps"] = decode_steps
    return case


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden"
    os.makedirs(out_dir, exist_ok=True)
    cases = [
        make_case(out_dir, "self_unbatched", 16, 4, True, 0, 7, 7, False, 1),
        make_case(out_dir, "self_batched", 32, 8, True, 2, 5, 5, False, 2),
        make_case(out_dir, "cross", 24, 3, True, 1, 6, 11, True, 3),
        make_case(out_dir, "no_bias", 8, 2, False, 0, 9, 9, False, 4),
        make_case(out_dir, "wide_head", 64, 1, True, 1, 33, 70, True, 5),
        make_mask_case(out_dir, "causal", 32, 4, 2, 9, 9, False, 6, causal=True),
        make_mask_case(out_dir, "key_padding", 24, 3, 3, 6, 11, True, 7,
                       key_padding=lambda b, lk: (torch.rand(b, lk) < 0.4)
                       & (torch.arange(lk) > 0)),
        make_mask_case(out_dir, "float_mask", 16, 2, 2, 5, 7, True, 8,
                       attn_mask=lambda bh, lq, lk: torch.randn(lq, lk)),
        make_mask_case(out_dir, "bool_mask_per_head", 16, 4, 2, 6, 8, True, 9,
                       attn_mask=lambda bh, lq, lk: (torch.rand(bh, lq, lk) < 0.3)
                       & (torch.arange(lk) > 0)),
        make_mask_case(out_dir, "weights_averaged", 32, 4, 2, 7, 300, True, 10,
                       key_padding=lambda b, lk: torch.arange(lk)[None, :].expand(b, lk) % 3
                       == 1, weights="averaged"),
        make_mask_case(out_dir, "weights_per_head", 16, 2, 1, 6, 6, False, 11, causal=True,
                       weights="per_head"),
        make_mask_case(out_dir, "lengths", 32, 4, 3, 10, 10, False, 12, lengths=[10, 4, 7]),
        make_gqa_case(out_dir, "gqa", 48, 6, 2, 2, 19, 13),
        make_gqa_case(out_dir, "kv_cache", 64, 8, 2, 1, 80, 14, decode_steps=[5, 1, 1, 64, 9]),
    ]
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
