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

Checkpoint cases hold a whole small model with the real tensor names of its family, and the
case's "prefix" names the attention layer the output comes from: PyTorch's
nn.TransformerEncoder state_dict (output: that layer's self_attn), and files laid out as
Hugging Face's BERT, Whisper and Qwen2 checkpoints (no download: the tensors are seeded random
values under those names). torch 1.13 has no such classes, so their attention is computed here:
BERT and Whisper by nn.MultiheadAttention with the layer's projections copied in (Whisper's
k_proj has no bias: zeros in in_proj_bias), Qwen2 (grouped-query, q/k/v biases, no o_proj bias)
by the float64 grouped-query reference, without rotary embeddings (tools/make_step_golden.py
has those and the attention step's other features).
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


def gqa_reference(xd, t, o_bias, h, kv_heads):
    """Causal grouped-query self-attention in float64; t holds Llama-style projections."""
    batch, length, d = xd.shape
    dk = d // h
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
    return concat @ t["o_proj.weight"].T + o_bias


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
    output = gqa_reference(x.double(), t, t["o_proj.bias"], h, kv_heads)
    save_safetensors(tensors, os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_query.npy", x.numpy())
    save(out_dir, name, "_output.npy", output.float().numpy())
    case = {"name": name, "heads": h, "cross": False, "causal": True,
            "key_padding_mask": False, "attn_mask": False, "kv_heads": kv_heads}
    if decode_steps is not None:
        assert sum(decode_steps) == length
        case["decode_steps"] = decode_steps
    return case


def randn(g, *shape, std=1.0):
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * std).float()


def mha_with(d, h, q, k, v, o, bq, bk, bv, bo):
    """nn.MultiheadAttention holding separately stored projections."""
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([q, k, v]))
        mha.in_proj_bias.copy_(torch.cat([bq, bk, bv]))
        mha.out_proj.weight.copy_(o)
        mha.out_proj.bias.copy_(bo)
    return mha


def save_checkpoint_case(out_dir, name, tensors, query, output, heads, prefix, key=None,
                         extra=None):
    save_safetensors(tensors, os.path.join(out_dir, name + ".safetensors"))
    save(out_dir, name, "_query.npy", query.numpy())
    if key is not None:
        save(out_dir, name, "_key.npy", key.numpy())
        save(out_dir, name, "_value.npy", key.numpy())
    save(out_dir, name, "_output.npy", output.numpy())
    case = {"name": name, "heads": heads, "cross": key is not None, "prefix": prefix}
    case.update(extra or {})
    return case


def make_encoder_case(out_dir, name, d, h, batch, length, seed):
    """Layer 1 of a 2-layer nn.TransformerEncoder, loaded from the whole model's state_dict."""
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(d, h, dim_feedforward=2 * d, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
    with torch.no_grad():
        for block in model.layers:
            block.self_attn.in_proj_bias.normal_(0.0, 0.1)
            block.self_attn.out_proj.bias.normal_(0.0, 0.1)
    x = torch.randn(batch, length, d)
    with torch.no_grad():
        output, _ = model.layers[1].self_attn(x, x, x, need_weights=False)
    return save_checkpoint_case(out_dir, name, model.state_dict(), x, output, h,
                                "layers.1.self_attn.")


def make_bert_case(out_dir, name, d, h, length, seed):
    """A 2-layer BERT laid out as Hugging Face stores it; attention of layer 1 (without the
    block's residual LayerNorm, which is not part of the attention operation)."""
    g = torch.Generator().manual_seed(seed)
    sd, t = d ** -0.5, {}
    t["bert.embeddings.word_embeddings.weight"] = randn(g, 30, d)
    t["bert.embeddings.position_embeddings.weight"] = randn(g, 16, d)
    t["bert.embeddings.LayerNorm.weight"] = torch.ones(d)
    t["bert.embeddings.LayerNorm.bias"] = torch.zeros(d)
    for i in range(2):
        p = "bert.encoder.layer.%d." % i
        for part in ["attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"]:
            t[p + part + ".weight"] = randn(g, d, d, std=sd)
            t[p + part + ".bias"] = randn(g, d, std=0.1)
        t[p + "attention.output.LayerNorm.weight"] = torch.ones(d)
        t[p + "attention.output.LayerNorm.bias"] = torch.zeros(d)
        t[p + "intermediate.dense.weight"] = randn(g, 4 * d, d, std=sd)
        t[p + "intermediate.dense.bias"] = randn(g, 4 * d, std=0.1)
        t[p + "output.dense.weight"] = randn(g, d, 4 * d, std=sd)
        t[p + "output.dense.bias"] = randn(g, d, std=0.1)
        t[p + "output.LayerNorm.weight"] = torch.ones(d)
        t[p + "output.LayerNorm.bias"] = torch.zeros(d)
    t["bert.pooler.dense.weight"] = randn(g, d, d, std=sd)
    t["bert.pooler.dense.bias"] = randn(g, d, std=0.1)
    p = "bert.encoder.layer.1.attention."
    w = {k: t[p + k] for k in ["self.query.weight", "self.key.weight", "self.value.weight",
                               "output.dense.weight", "self.query.bias", "self.key.bias",
                               "self.value.bias", "output.dense.bias"]}
    mha = mha_with(d, h, w["self.query.weight"], w["self.key.weight"], w["self.value.weight"],
                   w["output.dense.weight"], w["self.query.bias"], w["self.key.bias"],
                   w["self.value.bias"], w["output.dense.bias"])
    x = randn(g, 1, length, d)
    with torch.no_grad():
        output, _ = mha(x, x, x, need_weights=False)
    return save_checkpoint_case(out_dir, name, t, x, output, h, p)


def make_whisper_case(out_dir, name, d, h, lq, lk, seed):
    """Whisper laid out as Hugging Face stores it (one encoder and one decoder layer, k_proj
    without bias); the decoder's cross-attention (encoder_attn) over an encoder output."""
    g = torch.Generator().manual_seed(seed)
    sd, t = d ** -0.5, {}
    t["model.encoder.conv1.weight"] = randn(g, d, 8, 3, std=0.1)
    t["model.encoder.conv1.bias"] = randn(g, d, std=0.1)
    t["model.encoder.embed_positions.weight"] = randn(g, 16, d)
    t["model.decoder.embed_tokens.weight"] = randn(g, 30, d)
    blocks = [("model.encoder.layers.0.", ["self_attn"]),
              ("model.decoder.layers.0.", ["self_attn", "encoder_attn"])]
    for prefix, attns in blocks:
        for attn in attns:
            for proj in ["q_proj", "k_proj", "v_proj", "out_proj"]:
                t[prefix + attn + "." + proj + ".weight"] = randn(g, d, d, std=sd)
                if proj != "k_proj":
                    t[prefix + attn + "." + proj + ".bias"] = randn(g, d, std=0.1)
            t[prefix + attn + "_layer_norm.weight"] = torch.ones(d)
            t[prefix + attn + "_layer_norm.bias"] = torch.zeros(d)
        t[prefix + "fc1.weight"] = randn(g, 4 * d, d, std=sd)
        t[prefix + "fc1.bias"] = randn(g, 4 * d, std=0.1)
        t[prefix + "fc2.weight"] = randn(g, d, 4 * d, std=sd)
        t[prefix + "fc2.bias"] = randn(g, d, std=0.1)
        t[prefix + "final_layer_norm.weight"] = torch.ones(d)
        t[prefix + "final_layer_norm.bias"] = torch.zeros(d)
    p = "model.decoder.layers.0.encoder_attn."
    mha = mha_with(d, h, t[p + "q_proj.weight"], t[p + "k_proj.weight"], t[p + "v_proj.weight"],
                   t[p + "out_proj.weight"], t[p + "q_proj.bias"], torch.zeros(d),
                   t[p + "v_proj.bias"], t[p + "out_proj.bias"])
    query, memory = randn(g, 1, lq, d), randn(g, 1, lk, d)
    with torch.no_grad():
        output, _ = mha(query, memory, memory, need_weights=False)
    return save_checkpoint_case(out_dir, name, t, query, output, h, p, key=memory)


def make_qwen2_case(out_dir, name, d, h, kv_heads, length, seed):
    """Two Qwen2 decoder layers laid out as Hugging Face stores them (q/k/v biases, no o_proj
    bias, grouped-query); causal attention of layer 1 in float64, without rotary embeddings."""
    g = torch.Generator().manual_seed(seed)
    sd, kvd, t = d ** -0.5, kv_heads * (d // h), {}
    t["model.embed_tokens.weight"] = randn(g, 30, d)
    for i in range(2):
        p = "model.layers.%d." % i
        t[p + "self_attn.q_proj.weight"] = randn(g, d, d, std=sd)
        t[p + "self_attn.q_proj.bias"] = randn(g, d, std=0.1)
        for proj in ["k_proj", "v_proj"]:
            t[p + "self_attn." + proj + ".weight"] = randn(g, kvd, d, std=sd)
            t[p + "self_attn." + proj + ".bias"] = randn(g, kvd, std=0.1)
        t[p + "self_attn.o_proj.weight"] = randn(g, d, d, std=sd)
        t[p + "mlp.gate_proj.weight"] = randn(g, 2 * d, d, std=sd)
        t[p + "mlp.up_proj.weight"] = randn(g, 2 * d, d, std=sd)
        t[p + "mlp.down_proj.weight"] = randn(g, d, 2 * d, std=sd)
        t[p + "input_layernorm.weight"] = torch.ones(d)
        t[p + "post_attention_layernorm.weight"] = torch.ones(d)
    t["model.norm.weight"] = torch.ones(d)
    t["lm_head.weight"] = randn(g, 30, d, std=sd)
    p = "model.layers.1.self_attn."
    w = {k: t[p + k].double() for k in ["q_proj.weight", "k_proj.weight", "v_proj.weight",
                                         "o_proj.weight", "q_proj.bias", "k_proj.bias",
                                         "v_proj.bias"]}
    x = randn(g, 1, length, d)
    output = gqa_reference(x.double(), w, torch.zeros(d, dtype=torch.float64), h, kv_heads)
    return save_checkpoint_case(out_dir, name, t, x, output.float(), h, p,
                                extra={"causal": True, "kv_heads": kv_heads})


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
        make_encoder_case(out_dir, "torch_encoder", 16, 4, 2, 5, 15),
        make_bert_case(out_dir, "hf_bert", 24, 3, 6, 16),
        make_whisper_case(out_dir, "hf_whisper_cross", 24, 3, 4, 9, 17),
        make_qwen2_case(out_dir, "hf_qwen2", 32, 4, 2, 7, 18),
    ]
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    import make_decoding_golden  # they import this module: not at the top
    import make_step_golden
    make_decoding_golden.main(out_dir)
    make_step_golden.main(out_dir)


if __name__ == "__main__":
    main()
