#!/usr/bin/env python3
"""Writes ONNX models of the contract shapes for ONNX Runtime, the peer to beat (PEERS.md).

Needs only NumPy: the ONNX protobuf is encoded here (the onnx package is not a Debian package).
For each shape (self-attention, batch 1, weights ~ N(0, 1/d), biases ~ N(0, 0.02^2),
x ~ N(0, 1)) it writes, into the output directory:

  <shape>_fp32_plain.onnx   MatMul/Add projections, Reshape/Transpose, MatMul, Softmax, MatMul
  <shape>_fp32_fused.onnx   com.microsoft Attention (fused QKV projection and core) + MatMul/Add
  <shape>_fp32_mha.onnx     MatMul QKV projection, Split, com.microsoft MultiHeadAttention (the
                            core with the Q/K/V biases; MLAS flash attention on CPU) + MatMul/Add
  <shape>_int8_dqmm.onnx    com.microsoft DynamicQuantizeMatMul projections (u8 activations per
                            tensor x s8 weights per channel, as onnxruntime's quantize_dynamic
                            makes them), fp32 attention core
  <shape>_int8_dqmm_mha.onnx  the same projections around com.microsoft MultiHeadAttention
  <shape>_int8_qattention.onnx  DynamicQuantizeLinear + com.microsoft QAttention (int8 QKV
                            projection fused with the fp32 core, what quantize_dynamic makes of
                            an Attention node) + DynamicQuantizeMatMul output projection
  <shape>_x.bin             the input, float32 [L, d]
  <shape>_ref.bin           the float64 reference output, float64 [L, d]
  models.json               the shapes and file names

    python3 tools/peers/make_onnx_models.py build/peers
"""
import json
import os
import struct
import sys

import numpy as np

SHAPES = [("tiny", 64, 256, 4), ("minilm", 128, 384, 12), ("bert", 128, 768, 12),
          ("whisper", 1500, 384, 6)]

# ONNX TensorProto data types.
FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7


# --- protobuf encoding (wire types: 0 varint, 2 length-delimited, 5 fixed32) ---
def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def f_int(field, n):
    return varint(field << 3) + varint(n)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def f_float(field, x):
    return varint(field << 3 | 5) + struct.pack("<f", x)


# --- ONNX messages (field numbers from onnx.proto) ---
def tensor(name, array, dtype):
    msg = b"".join(f_int(1, d) for d in array.shape)  # dims
    msg += f_int(2, dtype) + f_bytes(8, name) + f_bytes(9, array.tobytes())
    return msg


def attr_int(name, value):
    return f_bytes(1, name) + f_int(3, value) + f_int(20, 2)


def attr_ints(name, values):
    return f_bytes(1, name) + b"".join(f_int(8, v) for v in values) + f_int(20, 7)


def attr_float(name, value):
    return f_bytes(1, name) + f_float(2, value) + f_int(20, 1)


def node(op, inputs, outputs, attrs=(), domain=""):
    msg = b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs)
    msg += f_bytes(3, outputs[0] + "_node") + f_bytes(4, op)
    msg += b"".join(f_bytes(5, a) for a in attrs)
    if domain:
        msg += f_bytes(7, domain)
    return msg


def value_info(name, dims):
    shape = b"".join(f_bytes(1, f_int(1, d)) for d in dims)
    tensor_type = f_int(1, FLOAT) + f_bytes(2, shape)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


def model(nodes, initializers, l, d):
    graph = b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, "mha")
    graph += b"".join(f_bytes(5, t) for t in initializers)
    graph += f_bytes(11, value_info("x", [1, l, d])) + f_bytes(12, value_info("y", [1, l, d]))
    opsets = f_bytes(8, f_bytes(1, "") + f_int(2, 17))
    opsets += f_bytes(8, f_bytes(1, "com.microsoft") + f_int(2, 1))
    return f_int(1, 8) + opsets + f_bytes(2, "edgeattn peers") + f_bytes(7, graph)


def attention_core(q, k, v, l, d, h, out):
    """Nodes of softmax(Q K^T / sqrt(dk)) V per head, from Q, K, V [1, L, d] to out [1, L, d]."""
    dk = d // h
    return [
        node("Reshape", [q, "heads_shape"], ["q4"]),
        node("Transpose", ["q4"], ["qh"], [attr_ints("perm", [0, 2, 1, 3])]),
        node("Reshape", [k, "heads_shape"], ["k4"]),
        node("Transpose", ["k4"], ["kt"], [attr_ints("perm", [0, 2, 3, 1])]),
        node("Reshape", [v, "heads_shape"], ["v4"]),
        node("Transpose", ["v4"], ["vh"], [attr_ints("perm", [0, 2, 1, 3])]),
        node("MatMul", ["qh", "kt"], ["s"]),
        node("Mul", ["s", "scale"], ["ss"]),
        node("Softmax", ["ss"], ["p"], [attr_int("axis", -1)]),
        node("MatMul", ["p", "vh"], ["o4"]),
        node("Transpose", ["o4"], ["ot"], [attr_ints("perm", [0, 2, 1, 3])]),
        node("Reshape", ["ot", "model_shape"], [out]),
    ], [
        tensor("heads_shape", np.array([1, l, h, dk], np.int64), INT64),
        tensor("model_shape", np.array([1, l, d], np.int64), INT64),
        tensor("scale", np.array(1.0 / np.sqrt(dk), np.float32), FLOAT),
    ]


def quantize_per_channel(w):
    """W [n, k] -> (int8 W^T [k, n], scales [n]), symmetric per output channel."""
    scale = np.abs(w).max(axis=1) / 127.0
    q = np.clip(np.round(w / scale[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(q.T), scale.astype(np.float32)


def write_models(out_dir, name, l, d, h, seed):
    rng = np.random.default_rng(seed)
    sd = 1.0 / np.sqrt(d)
    w_in = rng.normal(0, sd, (3 * d, d)).astype(np.float32)
    b_in = rng.normal(0, 0.02, 3 * d).astype(np.float32)
    w_out = rng.normal(0, sd, (d, d)).astype(np.float32)
    b_out = rng.normal(0, 0.02, d).astype(np.float32)
    x = rng.normal(0, 1, (l, d)).astype(np.float32)

    # float64 reference
    xd = x.astype(np.float64)
    qkv = xd @ w_in.T.astype(np.float64) + b_in
    dk = d // h
    heads = []
    for i in range(h):
        q, k, v = (qkv[:, j * d + i * dk: j * d + (i + 1) * dk] for j in range(3))
        s = q @ k.T / np.sqrt(dk)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        heads.append((p / p.sum(axis=1, keepdims=True)) @ v)
    ref = np.concatenate(heads, axis=1) @ w_out.T.astype(np.float64) + b_out
    x.tofile(os.path.join(out_dir, name + "_x.bin"))
    ref.tofile(os.path.join(out_dir, name + "_ref.bin"))

    def save(variant, nodes, inits):
        with open(os.path.join(out_dir, f"{name}_{variant}.onnx"), "wb") as f:
            f.write(model(nodes, inits, l, d))

    core, core_inits = attention_core("q", "k", "v", l, d, h, "concat")
    out_proj = [node("MatMul", ["concat", "wo"], ["yo"]), node("Add", ["yo", "bo"], ["y"])]
    out_inits = [tensor("wo", np.ascontiguousarray(w_out.T), FLOAT), tensor("bo", b_out, FLOAT)]

    # fp32, plain operators: one [d, 3d] projection split into Q, K, V.
    save("fp32_plain",
         [node("MatMul", ["x", "wqkv"], ["qkv0"]), node("Add", ["qkv0", "bqkv"], ["qkv"]),
          node("Split", ["qkv", "split"], ["q", "k", "v"], [attr_int("axis", -1)])]
         + core + out_proj,
         [tensor("wqkv", np.ascontiguousarray(w_in.T), FLOAT), tensor("bqkv", b_in, FLOAT),
          tensor("split", np.array([d, d, d], np.int64), INT64)] + core_inits + out_inits)

    # fp32, fused com.microsoft Attention (weights [d, 3d], bias [3d]).
    save("fp32_fused",
         [node("Attention", ["x", "wqkv", "bqkv"], ["concat"], [attr_int("num_heads", h)],
               "com.microsoft")] + out_proj,
         [tensor("wqkv", np.ascontiguousarray(w_in.T), FLOAT), tensor("bqkv", b_in, FLOAT)]
         + out_inits)

    # fp32, com.microsoft MultiHeadAttention(query, key, value, bias [3d]) after one projection.
    mha = [node("Split", ["qkv0", "split"], ["q", "k", "v"], [attr_int("axis", -1)]),
           node("MultiHeadAttention", ["q", "k", "v", "bqkv"], ["concat"],
                [attr_int("num_heads", h)], "com.microsoft")]
    save("fp32_mha", [node("MatMul", ["x", "wqkv"], ["qkv0"])] + mha + out_proj,
         [tensor("wqkv", np.ascontiguousarray(w_in.T), FLOAT), tensor("bqkv", b_in, FLOAT),
          tensor("split", np.array([d, d, d], np.int64), INT64)] + out_inits)

    # int8: DynamicQuantizeMatMul(A, B int8 [k, n], b_scale [n], b_zero_point [n], bias [n]).
    wq_in, s_in = quantize_per_channel(w_in)
    wq_out, s_out = quantize_per_channel(w_out)
    qkv_inits = [tensor("wqkv8", wq_in, INT8), tensor("sqkv", s_in, FLOAT),
                 tensor("zqkv", np.zeros(3 * d, np.int8), INT8), tensor("bqkv", b_in, FLOAT),
                 tensor("split", np.array([d, d, d], np.int64), INT64)]
    out_q = [node("DynamicQuantizeMatMul", ["concat", "wo8", "so", "zo", "bo"], ["y"], (),
                  "com.microsoft")]
    out_q_inits = [tensor("wo8", wq_out, INT8), tensor("so", s_out, FLOAT),
                   tensor("zo", np.zeros(d, np.int8), INT8), tensor("bo", b_out, FLOAT)]
    save("int8_dqmm",
         [node("DynamicQuantizeMatMul", ["x", "wqkv8", "sqkv", "zqkv", "bqkv"], ["qkv"], (),
               "com.microsoft"),
          node("Split", ["qkv", "split"], ["q", "k", "v"], [attr_int("axis", -1)])]
         + core + out_q,
         qkv_inits + out_q_inits + core_inits)

    # int8 projections around MultiHeadAttention (its biases come from DynamicQuantizeMatMul).
    save("int8_dqmm_mha",
         [node("DynamicQuantizeMatMul", ["x", "wqkv8", "sqkv", "zqkv", "bqkv"], ["qkv0"], (),
               "com.microsoft"),
          node("Split", ["qkv0", "split"], ["q", "k", "v"], [attr_int("axis", -1)]),
          node("MultiHeadAttention", ["q", "k", "v"], ["concat"], [attr_int("num_heads", h)],
               "com.microsoft")]
         + out_q,
         qkv_inits + out_q_inits)

    # int8 QAttention(input u8, weight s8 [d, 3d], bias, input_scale, weight_scale [3d],
    # mask_index (none), input_zero_point): ORT's CPU kernel takes per-column weight scales.
    save("int8_qattention",
         [node("DynamicQuantizeLinear", ["x"], ["x8", "xs", "xz"]),
          node("QAttention", ["x8", "wqkv8", "bqkv", "xs", "sqkv", "", "xz"], ["concat"],
               [attr_int("num_heads", h)], "com.microsoft")]
         + out_q,
         [tensor("wqkv8", wq_in, INT8), tensor("sqkv", s_in, FLOAT),
          tensor("bqkv", b_in, FLOAT)] + out_q_inits)
    return {"shape": name, "seq": l, "d_model": d, "heads": h,
            "models": {"fp32": [f"{name}_fp32_{v}.onnx" for v in ("plain", "fused", "mha")],
                       "int8": [f"{name}_int8_{v}.onnx" for v in ("dqmm", "dqmm_mha", "qattention")]}}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "build/peers"
    os.makedirs(out_dir, exist_ok=True)
    shapes = [write_models(out_dir, n, l, d, h, 42 + i) for i, (n, l, d, h) in enumerate(SHAPES)]
    with open(os.path.join(out_dir, "models.json"), "w") as f:
        json.dump(shapes, f, indent=1)


if __name__ == "__main__":
    main()
