#!/usr/bin/env python3
"""Compares int8 KV cache schemes on a numerics model of one decode step.

    /usr/bin/python3 tools/kv_int8_schemes.py

A seeded model (d 768, 12 heads, N(0, 1/d) projections, N(0, 1) inputs, 2048 cached positions;
the outlier case multiplies 6 input channels by 20 and 6 rows of each projection by 8) gives
each scheme's keys and values; the printed figure is the smallest cosine, over the last 6
positions as queries, of the attention output against float64 attention on float keys and
values. The schemes: bf16 and fp16 rounding; int8 with one scale per position and head, the
query quantized per row too (what the int8 kernels computed until keys were rotated); the same
with llama.cpp q8_0-style blocks of 16 channels for queries and keys (four scales per key);
SageAttention's key smoothing (the per-channel mean of the keys subtracted); KIVI-style
per-channel key scales folded into the query (the query then quantized per row); and
Walsh-Hadamard-rotated queries and keys (QuaRot; what KvFormat::kInt8 stores and computes:
HadamardRotateRow in simd/attention_kv.h). docs/precision.md quotes the output.
"""
import numpy as np

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


def int8_rows(x, block=None):
    """Symmetric int8 with one scale per `block` values of each row (max |x| / 127)."""
    blocks = x.reshape(x.shape[0], -1, block or x.shape[1])
    scale = np.abs(blocks).max(-1, keepdims=True) / 127
    scale[scale == 0] = 1
    return (np.round(blocks / scale) * scale).reshape(x.shape)


def hadamard(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(n)


def smoothed(q, k):
    mean = k.mean(0)
    return int8_rows(q), int8_rows(k - mean) + mean


def channel_scaled(q, k):
    """Keys divided by their channel's max |k| (floored at the mean of those), queries times it."""
    s = np.abs(k).max(0)
    s = np.maximum(s, s.mean())
    return int8_rows(q * s) / s, int8_rows(k / s) * s


def rotated(q, k):
    h = hadamard(q.shape[1])
    return int8_rows(q @ h) @ h.T, int8_rows(k @ h) @ h.T


def bf16(x):
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def attention(q, k, v):
    s = k @ q / np.sqrt(q.shape[0])
    p = np.exp(s - s.max())
    return p @ v / p.sum()


def cosine(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def main():
    rng = np.random.default_rng(0)
    qk = {
        "bf16": lambda q, k: (q, bf16(k)),
        "fp16": lambda q, k: (q, k.astype(np.float16).astype(np.float32)),
        "int8 per position, query per row": lambda q, k: (int8_rows(q), int8_rows(k)),
        "int8 blocks of 16 (q and k)": lambda q, k: (int8_rows(q, 16), int8_rows(k, 16)),
        "int8 smoothed keys (mean)": smoothed,
        "int8 keys per channel, in the query": channel_scaled,
        "int8 Hadamard-rotated q and k": rotated,
    }
    for outliers in (False, True):
        q_all, k_all, v_all = model(rng, outliers)
        worst = {}
        for back in range(6):
            end = CACHED - back + 1
            outs = {name: [] for name in qk}
            ref = []
            for h in range(HEADS):
                cols = slice(h * DK, (h + 1) * DK)
                q, k, v = q_all[end - 1:end, cols], k_all[:end, cols], v_all[:end, cols]
                ref.append(attention(q[0].astype(np.float64), k.astype(np.float64),
                                     v.astype(np.float64)))
                for name, f in qk.items():
                    sq, sk = f(q, k)
                    if name == "bf16":
                        sv = bf16(v)
                    elif name == "fp16":
                        sv = v.astype(np.float16).astype(np.float32)
                    else:
                        sv = int8_rows(v)
                    outs[name].append(attention(sq[0], sk, sv))
            for name in qk:
                c = cosine(np.concatenate(outs[name]), np.concatenate(ref))
                worst[name] = min(worst.get(name, 1.0), c)
        print("outliers" if outliers else "normal")
        for name, c in worst.items():
            print(f"  {name:36s} {c:.6f}")


if __name__ == "__main__":
    main()
