#!/usr/bin/env python3
"""Writes the decoding golden cases under tests/golden/ (index: decoding_cases.json).

Run by tools/make_golden.py, or alone:

    /usr/bin/python3 tools/make_decoding_golden.py tests/golden

Each case is an nn.MultiheadAttention(d, h, batch_first=True) with seeded random weights and
biases (state_dict saved as safetensors), the inputs of a decode and PyTorch's float32 outputs:

- cross_memory: decoder positions of several beams attending to an encoder output through a
  cross-attention memory. PyTorch's maths: the module over the query and the encoder output of
  the item each beam reads (memory_items), keys past the item's key length masked
  (key_padding_mask).
- beams: beam search over a KV cache. Each beam's prompt, then per step a reordering of the
  beams (indices, repeats allowed) and one new token per beam; the expected row is the last row
  of the causal module over the beam's whole history, as the reordering made it.
- ragged: a batch whose sequences append different numbers of positions per step
  (step_lengths); each valid row is the causal module over that sequence's own positions so
  far, rows past a step length are zeros.
"""
import json
import os
import sys

import numpy as np
import torch

from make_golden import save_safetensors


def seeded_mha(d, h, seed):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_(0.0, 0.1)
        mha.out_proj.bias.normal_(0.0, 0.1)
    return mha


def causal(mha, x):
    """The causal module over x [1, L, d]."""
    length = x.shape[1]
    mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
    with torch.no_grad():
        return mha(x, x, x, attn_mask=mask, need_weights=False)[0]


def save(out_dir, name, suffix, array):
    np.save(os.path.join(out_dir, name + suffix), array)


def make_cross_memory_case(out_dir, name, d, h, frames, key_lengths, memory_items, steps,
                           seed):
    mha = seeded_mha(d, h, seed)
    encoder = torch.randn(len(key_lengths), frames, d)
    query = torch.randn(len(memory_items), steps, d)
    keys = encoder[memory_items]
    padding = torch.arange(frames)[None, :] >= torch.tensor(key_lengths)[memory_items][:, None]
    with torch.no_grad():
        output = mha(query, keys, keys, key_padding_mask=padding, need_weights=False)[0]
    save_safetensors(mha.state_dict(), os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_encoder.npy", encoder.numpy())
    save(out_dir, name, "_query.npy", query.numpy())
    save(out_dir, name, "_output.npy", output.numpy())
    return {"name": name, "kind": "cross_memory", "heads": h, "key_lengths": key_lengths,
            "memory_items": memory_items}


def make_beams_case(out_dir, name, d, h, beams, prompt, reorders, seed):
    mha = seeded_mha(d, h, seed)
    prompts = torch.randn(beams, prompt, d)
    tokens = torch.randn(len(reorders), beams, d)
    histories = [prompts[b:b + 1] for b in range(beams)]
    prompt_out = torch.cat([causal(mha, x) for x in histories])
    token_out = []
    for t, indices in enumerate(reorders):
        histories = [torch.cat([histories[i], tokens[t, b].view(1, 1, d)], dim=1)
                     for b, i in enumerate(indices)]
        token_out.append(torch.cat([causal(mha, x)[:, -1] for x in histories]))
    save_safetensors(mha.state_dict(), os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_prompt.npy", prompts.numpy())
    save(out_dir, name, "_prompt_output.npy", prompt_out.numpy())
    save(out_dir, name, "_tokens.npy", tokens.numpy())
    save(out_dir, name, "_tokens_output.npy", torch.stack(token_out).numpy())
    return {"name": name, "kind": "beams", "heads": h, "reorders": reorders}


def make_ragged_case(out_dir, name, d, h, step_lengths, seed):
    mha = seeded_mha(d, h, seed)
    batch = len(step_lengths[0])
    sequences = [torch.zeros(1, 0, d) for _ in range(batch)]
    for s, lengths in enumerate(step_lengths):
        width = max(lengths)
        x = torch.randn(batch, width, d)
        out = torch.zeros(batch, width, d)
        for b, n in enumerate(lengths):
            sequences[b] = torch.cat([sequences[b], x[b:b + 1, :n]], dim=1)
            if n > 0:
                out[b, :n] = causal(mha, sequences[b])[0, -n:]
        save(out_dir, name, "_x%d.npy" % s, x.numpy())
        save(out_dir, name, "_out%d.npy" % s, out.numpy())
    save_safetensors(mha.state_dict(), os.path.join(out_dir, name + ".safetensors"))
    return {"name": name, "kind": "ragged", "heads": h, "step_lengths": step_lengths}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    cases = [
        make_cross_memory_case(out_dir, "cross_memory", 48, 6, 37, [37, 20], [1, 0, 1, 1], 3,
                               31),
        make_beams_case(out_dir, "beams", 32, 4, 3, 4,
                        [[0, 1, 2], [2, 2, 0], [1, 0, 0], [0, 0, 0], [2, 1, 0]], 32),
        make_ragged_case(out_dir, "ragged", 32, 4, [[5, 2, 3], [1, 2, 0], [3, 1, 2], [0, 4, 1]],
                         33),
    ]
    with open(os.path.join(out_dir, "decoding_cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/golden")
