#!/usr/bin/env python3
"""Compares int8 KV cache scale granularities on a numerics model of one decode step.

    /usr/bin/python3 tools/kv_int8_schemes.py

A seeded model (d 768, 12 heads, N(0, 1/d) projections, N(0, 1) inputs, 2048 cached positions;
the outlier case multiplies 6 input channels by 20 and 6 rows of each projection by 8) gives
each scheme's keys and values; the printed figure is the smallest cosine, over the last 6
positions as queries, of the attention output against float64 attention on float keys and
values. The schemes: bf16 and fp16 rounding; int8 with one scale per position and head (what
KvFormat::kInt8 stores), with llama.cpp q8_0-style blocks of 32 channels, with KIVI's keys per
channel over groups of 64 positions (values per position), and per position and head with the
query quantized per row too (what the int8 kernels compute). docs/decoding.md quotes the output.
"""
import numpy as np
import torch

D, HEADS, CACHED = 768, 12, 2048
DK = D // HEADS


def model(rng, outliers):
    w = [rng.standard_normal((D, D)).astype(np.float32) / np.sqrt(D) for _ in range(3)]
    x = rng.standard_normal((CACHED + 1, D)).astype(np.float32)
    if outliers:
        x[:, rng.choice(D, 6, replace=False)] *= 20
        for m in w:
            m[rng.choice(D, 6, replace=False), :] *= 8
    return x @ w[0].T, x @ w[1].T, x @ w[2].T


def int8_rows(x, block):
    """Symmetric int8 with one scale per `block` values of each row (max |x| / 127)."""
    blocks = x.reshape(x.shape[0], -1, block)
    scale = np.abs(blocks).max(-1, keepdims=True) / 127
    scale[scale == 0] = 1
    return (np.round(blocks / scale) * scale).reshape(x.shape)


def int8_channels(x, group=64):
    """KIVI's keys: one scale per channel over each group of positions."""
    out = np.empty_like(x)
    for t in range(0, x.shape[0], group):
        g = x[t:t + group]
        scale = np.abs(g).max(0, keepdims=True) / 127
        scale[scale == 0] = 1
        out[t:t + group] = np.round(g / scale) * scale
    return out


def per_head(f, x):
    return np.concatenate([f(x[:, h * DK:(h + 1) * DK]) for h in range(HEADS)], 1)


def attention(q, k, v):
    out = []
    for h in range(HEADS):
        cols = slice(h * DK, (h + 1) * DK)
        s = k[:, cols] @ q[cols] / np.sqrt(DK)
        p = np.exp(s - s.max())
        out.append(p @ v[:, cols] / p.sum())
    return np.concatenate(out)


def cosine(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def half(x, dtype):
    return torch.tensor(x).to(dtype).float().numpy()


def main():
    rng = np.random.default_rng(0)
    row = lambda x: per_head(lambda h: int8_rows(h, DK), x)
    for outliers in (False, True):
        q_all, k_all, v_all = model(rng, outliers)
        worst = {}
        for back in range(6):
            q, k, v = q_all[CACHED - back], k_all[:CACHED - back + 1], v_all[:CACHED - back + 1]
            ref = attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
            schemes = {
                "bf16": (q, half(k, torch.bfloat16), half(v, torch.bfloat16)),
                "fp16": (q, half(k, torch.float16), half(v, torch.float16)),
                "int8 per position and head": (q, row(k), row(v)),
                "int8 blocks of 32": (q, per_head(lambda h: int8_rows(h, 32), k),
                                      per_head(lambda h: int8_rows(h, 32), v)),
                "int8 KIVI keys per channel": (q, per_head(int8_channels, k), row(v)),
                "int8 per position, query per row": (row(q[None])[0], row(k), row(v)),
            }
            for name, (sq, sk, sv) in schemes.items():
                c = cosine(attention(sq, sk, sv), ref)
                worst[name] = min(worst.get(name, 1.0), c)
        print("outliers" if outliers else "normal")
        for name, c in worst.items():
            print(f"  {name:34s} {c:.5f}")


if __name__ == "__main__":
    main()
