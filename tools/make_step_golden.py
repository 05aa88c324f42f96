#!/usr/bin/env python3
"""Writes the attention-step golden cases under tests/golden/ (index: step_cases.json).

Run by tools/make_golden.py, or alone:

    /usr/bin/python3 tools/make_step_golden.py tests/golden

PyTorch 1.13's nn.MultiheadAttention has none of these features, so each case writes the maths
out in torch float32, as the models that use them do: grouped-query self-attention with
separate q/k/v projections (Llama's names), then per head an RMS norm of Q and K with learned
weights (Qwen3), rotary position embeddings (Llama/NeoX halves, GPT-J interleaved pairs, partial
rotary dims as Phi, the inverse frequencies and linear scaling as Hugging Face computes them),
scores times a custom scale, Gemma 2's soft-capping, a sliding window (Mistral), causal masking,
and gpt-oss's attention sinks (a per-head logit joining the softmax, its column then dropped).
The safetensors file holds the projections and the learned 'sinks', 'q_norm.weight' and
'k_norm.weight'; the case's "math" holds edgeattn's AttentionMath fields. Cases with
"positions" give the rotary positions of the rows (_positions.npy); "decode_steps" replays the
case as KV-cache decode steps.
"""
import json
import os
import sys

import numpy as np
import torch

from make_golden import save_safetensors


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate(x, positions, math):
    """Rotary embedding of x [B, heads, L, dk] at positions [L], in float32."""
    dk = x.shape[-1]
    dims = math.get("rotary_dim", 0) or dk
    base, scaling = math.get("rotary_base", 10000.0), math.get("rotary_scaling", 1.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, dims, 2).float() / dims))
    freqs = torch.outer(positions.float() / scaling, inv_freq)  # [L, dims / 2]
    rot, rest = x[..., :dims], x[..., dims:]
    if math["rotary"] == "halves":
        cos, sin = torch.cat((freqs, freqs), -1).cos(), torch.cat((freqs, freqs), -1).sin()
        half = dims // 2
        rotated_half = torch.cat((-rot[..., half:], rot[..., :half]), -1)
    else:
        cos = freqs.cos().repeat_interleave(2, -1)
        sin = freqs.sin().repeat_interleave(2, -1)
        rotated_half = torch.stack((-rot[..., 1::2], rot[..., ::2]), -1).flatten(-2)
    return torch.cat((rot * cos + rotated_half * sin, rest), -1)


def attention_step(x, t, h, kv_heads, math, causal, positions):
    """The operation edgeattn computes for x [B, L, d], in float32."""
    batch, length, d = x.shape
    dk = d // h
    q = (x @ t["q_proj.weight"].T + t["q_proj.bias"]).view(batch, length, h, dk).transpose(1, 2)
    k = (x @ t["k_proj.weight"].T + t["k_proj.bias"]).view(batch, length, kv_heads, dk)
    v = (x @ t["v_proj.weight"].T + t["v_proj.bias"]).view(batch, length, kv_heads, dk)
    k, v = k.transpose(1, 2), v.transpose(1, 2)
    if math.get("qk_norm"):
        eps = math.get("qk_norm_eps", 1e-6)
        q = rms_norm(q, t["q_norm.weight"], eps)
        k = rms_norm(k, t["k_norm.weight"], eps)
    if math.get("rotary"):
        q, k = rotate(q, positions, math), rotate(k, positions, math)
    k = k.repeat_interleave(h // kv_heads, dim=1)
    v = v.repeat_interleave(h // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) * (math.get("score_scale", 0.0) or dk ** -0.5)
    if math.get("softcap"):
        scores = math["softcap"] * torch.tanh(scores / math["softcap"])
    i = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    hidden = torch.zeros(length, length, dtype=torch.bool)
    if causal:
        hidden |= j > i
    if math.get("window"):
        hidden |= (i - j).abs() >= math["window"]
    scores = scores.masked_fill(hidden, float("-inf"))
    if "sinks" in t:
        sinks = t["sinks"].view(1, h, 1, 1).expand(batch, h, length, 1)
        p = torch.softmax(torch.cat((scores, sinks), -1), -1)[..., :-1]
    else:
        p = torch.softmax(scores, -1)
    concat = (p @ v).transpose(1, 2).reshape(batch, length, d)
    return concat @ t["o_proj.weight"].T + t["o_proj.bias"]


def make_case(out_dir, name, math, sinks=False, causal=True, positions=False,
              decode_steps=None, d=32, h=4, kv_heads=2, batch=2, length=40, seed=0):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=g) * std

    dk, kvd, sd = d // h, kv_heads * d // h, d ** -0.5
    t = {"q_proj.weight": randn(d, d, std=sd), "k_proj.weight": randn(kvd, d, std=sd),
         "v_proj.weight": randn(kvd, d, std=sd), "o_proj.weight": randn(d, d, std=sd),
         "q_proj.bias": randn(d, std=0.1), "k_proj.bias": randn(kvd, std=0.1),
         "v_proj.bias": randn(kvd, std=0.1), "o_proj.bias": randn(d, std=0.1)}
    if sinks:
        t["sinks"] = randn(h, std=2.0)
    if math.get("qk_norm"):
        t["q_norm.weight"] = 1.0 + randn(dk, std=0.3)
        t["k_norm.weight"] = 1.0 + randn(dk, std=0.3)
    x = randn(batch, length, d)
    pos = torch.arange(length) * 3 + 7 if positions else torch.arange(length)
    with torch.no_grad():
        output = attention_step(x, t, h, kv_heads, math, causal, pos)
    save_safetensors(t, os.path.join(out_dir, name + ".safetensors"))
    np.save(os.path.join(out_dir, name + "_query.npy"), x.numpy())
    np.save(os.path.join(out_dir, name + "_output.npy"), output.numpy())
    case = {"name": name, "heads": h, "kv_heads": kv_heads, "math": math, "causal": causal}
    if positions:
        # float32 (the .npy dtypes edgeattn reads); the positions are small whole numbers.
        np.save(os.path.join(out_dir, name + "_positions.npy"), pos.numpy().astype(np.float32))
        case["positions"] = True
    if decode_steps is not None:
        assert sum(decode_steps) == length and causal and not positions
        case["decode_steps"] = decode_steps
    return case


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    steps = [1, 5, 20, 1, 13]
    cases = [
        make_case(out_dir, "step_score_scale", {"score_scale": 0.25}, causal=False, seed=41),
        make_case(out_dir, "step_softcap", {"softcap": 1.5}, decode_steps=steps, seed=42),
        make_case(out_dir, "step_sinks", {}, sinks=True, decode_steps=steps, seed=43),
        make_case(out_dir, "step_qk_norm", {"qk_norm": True, "qk_norm_eps": 1e-5},
                  causal=False, seed=44),
        make_case(out_dir, "step_rotary_halves",
                  {"rotary": "halves", "rotary_base": 500.0, "rotary_scaling": 2.0},
                  positions=True, seed=45),
        make_case(out_dir, "step_rotary_interleaved", {"rotary": "interleaved"},
                  decode_steps=steps, seed=46),
        make_case(out_dir, "step_rotary_partial", {"rotary": "halves", "rotary_dim": 4},
                  causal=False, positions=True, seed=47),
        make_case(out_dir, "step_window", {"window": 9}, decode_steps=steps, seed=48),
        make_case(out_dir, "step_combined",
                  {"score_scale": 0.3, "softcap": 3.0, "window": 12, "qk_norm": True,
                   "rotary": "halves", "rotary_dim": 6, "rotary_base": 1000.0},
                  sinks=True, decode_steps=[3, 1, 17, 1, 2, 16], seed=49),
    ]
    with open(os.path.join(out_dir, "step_cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/golden")
