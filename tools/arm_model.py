#!/usr/bin/env python3
"""Machine-model report of the ARM kernels' inner loops: a model, not a measurement.

Nothing here runs ARM hardware, so the evidence for the aarch64 kernels' speed is LLVM's
machine-code analyzer (llvm-mca) run on the loops of the real objects of the aarch64 build:
  1. builds the kernels (cmake preset aarch64, target edgeattn_simd) unless --no-build;
  2. disassembles each kernel function from its object and finds its inner loop (the innermost
     backward branch holding the most multiply-adds, among those holding the kernel's marker
     instruction where it has one) and, for the int8 tiles, the block loop
     around it: a block of 64 k-values is that loop repeated until it holds the block's dot
     products, plus the rest of the block loop (the block epilogue);
  3. runs llvm-mca per core model and prints cycles per step, the bottleneck and the fraction of
     the core's peak (the peaks are stated below, per core).
The cycles of a loop are the largest of: llvm-mca's; the loop-carried chains through stack
spills, which llvm-mca does not see (it assumes loads never depend on stores): store, then the
next iteration's load of the slot, from llvm-mca's own latencies with store-to-load forwarding
taken as one load latency; and the work at the stated peak, plus on the A55 one issue cycle per
128-bit load.
Usage: tools/arm_model.py [--no-build] [--build-dir DIR] [--markdown]
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCA = "llvm-mca-19"
OBJDUMP = "llvm-objdump-19"

# Core models and the peak each is judged against, per cycle and core: fp32 FLOP (2 per lane of
# a fused multiply-add) and int8 multiply-accumulates, from the vector pipes of published
# microbenchmarks and optimization guides: A55 one 128-bit FMA or sdot per cycle; A510 two
# 128-bit pipes; A76-class (N1) and A710-class (N2) two; X1-class (V1: four 128-bit or two
# 256-bit SVE), X3/X4-class (V2) and Oryon four 128-bit; A64FX two 512-bit. `sve` is the
# vector length the core implements (None: no SVE) and picks the Highway target it runs.
# `q_loads_alone`: the core issues a 128-bit load in a cycle of its own (A55; LLVM's model pairs
# them, and also issues two 128-bit FMAs per cycle where the A55 issues one). `stand_ins`: forms
# the core's model lacks, modelled as the nearest form it has (LLVM 19's Oryon model has no
# by-element sdot: the vector sdot, which the other models cost the same).
SDOT_BY_ELEMENT = (re.compile(r"^(v\d+\.4s, v\d+\.16b, v\d+)\.4b\[\d\]$"), r"\1.16b")
# `mca`: LLVM 14's Cortex-A55 model (LLVM 19's A55 model issues nothing, not even an integer
# add, beside an sdot); LLVM 19 for the others (in LLVM 14 most of them alias older models).
Core = collections.namedtuple("Core", "mcpu label flop mac sve q_loads_alone stand_ins mca")
CORES = [
    Core("cortex-a55", "A55", 8, 16, None, True, {}, "llvm-mca-14"),
    Core("cortex-a510", "A510", 16, 32, 128, False, {}, "llvm-mca-19"),
    Core("neoverse-n1", "N1 (A76-A78)", 16, 32, None, False, {}, "llvm-mca-19"),
    Core("neoverse-n2", "N2 (A710-A720)", 16, 32, 128, False, {}, "llvm-mca-19"),
    Core("neoverse-v1", "V1 (X1)", 32, 64, 256, False, {}, "llvm-mca-19"),
    Core("neoverse-v2", "V2 (X3, X4)", 32, 64, 128, False, {}, "llvm-mca-19"),
    Core("oryon-1", "Oryon", 32, 64, None, False, {"sdot": SDOT_BY_ELEMENT}, "llvm-mca-19"),
    Core("a64fx", "A64FX", 64, 128, 512, False, {}, "llvm-mca-19"),
]
SVE_TARGET = {128: "N_SVE2_128", 256: "N_SVE_256", 512: "N_SVE"}

# What to model: object, function (demangled, {ns} = Highway target namespace; " | " between
# alternative names), the work
# instruction, how many of them make the step a row reports cycles for (a k-step of the 6 x 4
# fp32 tile, a group of 4 k of the 4 x 4 int8 tile), and for the int8 tiles how many make a block
# of 64 k-values, after which the block epilogue runs (0: the loop alone). `marker`: a mnemonic
# the loop holds, where the function has other loops of the work instruction (the attention
# kernels' softmax), or ((mnemonic, count), ...): the loop holds exactly that many of each; None:
# the loop with the most work instructions.
# `skip`: the cores (mcpu) that lack the instruction (bf16 on the A55 and the N1) or whose model
# does (LLVM 19's Oryon has no bfdot). `loop_work`: the loop holds exactly this many work
# instructions (one instantiation among several in a function; it and the marker must leave one).
Kernel = collections.namedtuple(
    "Kernel", "label isa obj symbol work step_work block_work marker skip loop_work",
    defaults=(None, (), None))
TILE = "edgeattn::simd::{ns}::TileF32<6ul, 4ul, %s, false>("  # without prefetching
# Highway 1.0.3's float16_t is the compiler's __fp16 ("half"), Highway 1.4's its own type.
F16_TILE = " | ".join(TILE % t for t in ("half", "hwy::float16_t"))
I8KV = "edgeattn::simd::{ns}::I8Kv<edgeattn::simd::{ns}::%s, edgeattn::simd::{ns}::I16PairValues>"
KV = "edgeattn::simd::{ns}::RunCompactKvAttention<" + I8KV + ">("
# The int8 cache's P V in int16 products (kv_int8_values-inl.h), as the portable kernel runs it.
KV_VALUES = I8KV % "I8DotI32" + "::AccumulateValues("
# A row's P V step over 4 vectors of one pair row: 4 widenings to int16 and one broadcast of the
# row's pair of probabilities (the other loops of 8 multiply-adds take 2 rows or 2 pairs).
PV_ONE_ROW = ((r"^(sshll2?|sunpklo)$", 4), (r"^(ld1r|ld1rw|dup)$", 1))
KERNELS = [
    Kernel("fp32 NEON 6x4 tile, GEMM (per k-step)", "neon", "gemm_f32.cc.o", TILE % "float",
           "fmla", 24, 0),
    Kernel("fp32 NEON 6x4 tile, attention (per k-step)", "neon", "attention.cc.o",
           TILE % "float", "fmla", 24, 0),
    Kernel("int8 NEON sdot 3x4 tile, 64-value block with epilogue (per group of 4 k)", "neon",
           "gemm_i8.cc.o", "edgeattn::simd::{ns}::DotTileNeon<3ul, true>(", "sdot", 12, 192),
    Kernel("fp32 SVE 6x4 tile (per k-step)", "sve", "gemm_f32.cc.o", TILE % "float", "fmla", 24, 0),
    Kernel("int8 SVE 4x4 tile, 64-value block with epilogue (per group of 4 k)", "sve",
           "gemm_i8.cc.o", "edgeattn::simd::{ns}::DotTileSve<4ul>(", "sdot", 16, 256),
    # bf16 / fp16 weights (f32_bf16w_widen_6x4v, f32_f16w_widen_6x4v) and the bf16 / fp16 KV
    # cache's scores and values (bf16kv_f32_6x4v, f16kv_f32_6x4v): the fp32 tile, B widened.
    Kernel("bf16 weights or KV, NEON 6x4 tile (per k-step)", "neon", "gemm_half.cc.o",
           TILE % "hwy::bfloat16_t", "fmla", 24, 0),
    Kernel("fp16 weights or KV, NEON 6x4 tile (per k-step)", "neon", "gemm_half.cc.o",
           F16_TILE, "fmla", 24, 0),
    Kernel("bf16 weights or KV, SVE 6x4 tile (per k-step)", "sve", "gemm_half.cc.o",
           TILE % "hwy::bfloat16_t", "fmla", 24, 0),
    Kernel("fp16 weights or KV, SVE 6x4 tile (per k-step)", "sve", "gemm_half.cc.o",
           F16_TILE, "fmla", 24, 0),
    # The int8 KV cache: scores of a query row against a panel of 64 keys (i8kv_i8dot_neondot:
    # sdot; i8kv_i8dot_i32: int32 multiply-adds), and the values, widened and accumulated.
    Kernel("int8 KV scores, NEON sdot, 64 keys (per group of 4 k)", "neon", "attention_kv.cc.o",
           "edgeattn::simd::{ns}::I8DotNeon::Panel(", "sdot", 16, 0),
    Kernel("int8 KV scores, NEON int32 mla, a vector of keys (per group of 4 k; % of sdot peak)",
           "neon", "attention_kv.cc.o", KV % "I8DotI32", "mla", 4, 0),
    # P V: per pair of keys, 16 channels (4 vectors of pair rows widened to int16) times each
    # row's int16 pair of probabilities, 8 multiply-adds into int32 per row; a decode step's
    # one row, and the two rows that share each widening.
    Kernel("int8 KV values, NEON smlal on pair rows, 1 row (per pair of keys x 16 channels; % "
           "of sdot peak)", "neon", "attention_kv.cc.o", KV_VALUES, "pv16", 8, 0, PV_ONE_ROW,
           (), 8),
    Kernel("int8 KV values, NEON smlal on pair rows, 2 rows (per pair of keys x 16 channels; % "
           "of sdot peak)", "neon", "attention_kv.cc.o", KV_VALUES, "pv16", 16, 0, None,
           (), 16),
    # i8kv_i8dot_neondot's P V (kv_int8_values_sdot-inl.h): a row at a time, 8 pairs (4 zipped
    # quads) x 16 channels per loop step.
    Kernel("int8 KV values, NEON sdot on zipped pair rows, a row (per pair of keys x 16 "
           "channels; % of sdot peak)", "neon", "attention_kv.cc.o",
           "edgeattn::simd::{ns}::SdotPairValues::RowChannels<2ul>(", "sdotpv", 4, 0, None,
           (), 32),
    Kernel("int8 KV scores, SVE int32 mla, a vector of keys (per group of 4 k; % of sdot peak)",
           "sve", "attention_kv.cc.o", KV % "I8DotI32", "mla", 4, 0),
    Kernel("int8 KV values, SVE pair rows, 1 row (per pair of keys x 4 vectors; % of sdot peak)",
           "sve", "attention_kv.cc.o", KV_VALUES, "pv16", 8, 0, PV_ONE_ROW, (), 8),
    # The 16-bit arithmetic KV kernels (attention_arm_half.h), Q K^T and P V alike: 6 rows x 8
    # lanes. fp16 fmla (8 lanes) and bfdot (4 lanes of pairs) are judged per instruction as one
    # fp32 fmla (% of the FMA pipes' issue rate, where these do twice fp32's work).
    Kernel("fp16 KV f16kv_f16fma_6x8, fp16 fmla, 8-k chunk with fp32 flush (per k-step; "
           "% of fmla issue)", "neon", "attention_arm_half.cc.o",
           "edgeattn::simd::{ns}::F16Fma::Tile<6ul>(", "fmla", 6, 0),
    Kernel("bf16 KV bf16kv_bf16dot_6x8, bfdot on zipped pairs (per 2 k-steps; % of fmla issue)",
           "neon", "attention_arm_half.cc.o", "edgeattn::simd::{ns}::Bfdot::Tile<6ul>(", "bfdot",
           12, 0, None, ("cortex-a55", "neoverse-n1", "oryon-1")),
    # The int8 KV cache's scores on smmla (i8kv_i8mm_smmla): 2 row pairs x 16 keys, 8
    # channels (two 4-channel key words zipped) per step; judged per instruction as one sdot
    # (% of the sdot issue rate; an smmla does 32 multiply-adds, an sdot 16).
    Kernel("int8 KV scores, NEON smmla, 4 rows x 16 keys (per 8 k; % of sdot issue)", "neon",
           "attention_arm_i8mm.cc.o", "edgeattn::simd::{ns}::SmmlaTile<2ul>(", "smmla", 16, 0,
           None, ("cortex-a55", "neoverse-n1")),
]
# The cores without the Armv8.2 dot product (Cortex-A53, and the A72 as LLVM 19 models it; the
# Raspberry Pi 3 and 4), where int8 runs the mlal kernel or the portable one: multiply-adds per
# cycle of each against fp32's, from llvm-mca alone (no stated peak).
NO_DOT_CORES = [Core("cortex-a53", "A53", None, None, None, False, {}, "llvm-mca-19"),
                Core("cortex-a72", "A72", None, None, None, False, {}, "llvm-mca-19")]
NO_DOT_KERNELS = [
    Kernel("fp32 NEON 6x4 tile (fp32 multiply-adds)", "neon", "gemm_f32.cc.o", TILE % "float",
           "fmla", 24, 0),
    Kernel("int8 NEON mlal 2x4 tile, 64-value block with epilogue", "neon", "gemm_i8.cc.o",
           "edgeattn::simd::{ns}::MlalTileNeon<2ul>(", "mull8", 32, 256),
    Kernel("int8 NEON mlal 1x4 tile (a decode step's), 64-value block", "neon", "gemm_i8.cc.o", "edgeattn::simd::{ns}::MlalTileNeon<1ul>(", "mull8", 16, 128),
    Kernel("int8 portable i16 1x1v, 64-value block with epilogue", "neon", "gemm_i8.cc.o",
           "edgeattn::simd::{ns}::PanelI16(", "mlal16", 4, 64),
    Kernel("int8 KV scores, i8kv_i8dot_neonmlal, 32 keys", "neon", "attention_kv.cc.o",
           "edgeattn::simd::{ns}::I8DotNeonMlal::Panel(", "mull8", 32, 0),
    Kernel("int8 KV scores, i8kv_i8dot_i32, a vector of keys", "neon", "attention_kv.cc.o",
           KV % "I8DotI32", "mla", 4, 0),
    Kernel("int8 KV values (P V), smlal on pair rows, 1 row", "neon", "attention_kv.cc.o",
           KV_VALUES, "pv16", 8, 0, PV_ONE_ROW, (), 8),
]
# The work each instruction does per 32-bit lane, and which peak it is judged against: fmla 2
# FLOP, sdot 4 int8 multiply-accumulates, mla one (an int32 one, against the int8 peak: the
# portable kernel's cost in the unit of the dot-product kernels).
WORK = {"fmla": (2, "flop"), "sdot": (4, "mac"), "mla": (1, "mac"), "bfdot": (2, "flop"),
        "smmla": (4, "mac"), "mull8": (2, "mac"), "mlal16": (1, "mac"),
        "pv16": (1, "mac"), "sdotpv": (2, "mac")}
# Issue slots of the peak per unit of work, where an instruction does less useful work than it
# issues (sdotpv: a P V multiply-add takes two of an sdot lane's, the probability's halves).
ISSUE_PER_WORK = {"sdotpv": 2}
# SVE's destructive multiply-adds come in two forms: the result in the addend's register or in
# a multiplicand's.
# mull8: the mlal kernel's byte products (8 per instruction, into int16); mlal16: the portable
# kernel's int16 ones (4 per instruction, into int32); pv16: the int8 cache's P V, int16 products
# into int32 (NEON smlal, SVE2 smlalb / smlalt, SVE's even and odd halves sign-extended into mla);
# sdotpv: the same products in sdot on zipped pair rows, a lane 4 positions of one channel times
# the high or the low 7 bits of their probabilities: two multiply-adds of P V per lane.
WORK_FORMS = {"fmla": ("fmla", "fmad"), "sdot": ("sdot",), "mla": ("mla", "mad"),
              "bfdot": ("bfdot",), "smmla": ("smmla",),
              "mull8": ("smull", "smull2", "smlal", "smlal2"), "mlal16": ("smlal", "smlal2"),
              "pv16": ("smlal", "smlal2", "smlalb", "smlalt", "mla"), "sdotpv": ("sdot",)}


def is_work(mnemonic, work):
    return mnemonic in WORK_FORMS[work]

BRANCH = re.compile(r"^(b|b\.\w+|cbn?z|tbn?z)$")
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def build():
    subprocess.run(["cmake", "--preset", "aarch64"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", "--preset", "aarch64", "--target", "edgeattn_simd"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def functions(path):
    """{demangled name: [(address, mnemonic, operands)]} of an object file."""
    text = run([OBJDUMP, "-d", "-C", "--no-show-raw-insn", path])
    funcs, current = {}, None
    for line in text.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            current = funcs.setdefault(header.group(1), [])
            continue
        m = LINE.match(line)
        if m and current is not None:
            operands = re.sub(r"\s*(//.*|<.*>)$", "", m.group(3))  # comments, symbols
            current.append((int(m.group(1), 16), m.group(2), operands))
    return funcs


def branch_target(mnemonic, operands):
    if not BRANCH.match(mnemonic):
        return None
    m = re.search(r"(?<!#)0x([0-9a-f]+)", operands)  # not tbz's bit number (#0x3)
    return int(m.group(1), 16) if m else None


def loops(insns):
    """(start, end) address ranges of the backward branches, end = the branch's address."""
    found = []
    for addr, mnemonic, operands in insns:
        target = branch_target(mnemonic, operands)
        if target is not None and target <= addr:
            found.append((target, addr))
    return found


def body(insns, lo, hi):
    return [i for i in insns if lo <= i[0] <= hi]


def loop_text(insns, work, block_work, marker=None, loop_work=None):
    """Assembly for llvm-mca: the inner loop (with marker: among the loops holding it; with
    loop_work: the shortest of those holding that many work instructions), or with
    block_work a block: the enclosing loop's body with the inner loop repeated until it holds
    block_work work instructions, and without the other loops nested in it (the remainders of
    blocks that are not whole inner steps)."""
    ranges = loops(insns)
    innermost = [r for r in ranges
                 if not any(o != r and r[0] <= o[0] and o[1] <= r[1] for o in ranges)]
    if not innermost:
        raise RuntimeError("no loop found")
    count = lambda r: sum(1 for i in body(insns, *r) if is_work(i[1], work))
    holds = lambda r, regex: sum(1 for i in body(insns, *r) if re.match(regex, i[1]))
    if marker is None:
        marked = innermost
    elif isinstance(marker, str):
        marked = [r for r in innermost if holds(r, marker)]
    else:
        marked = [r for r in innermost if all(holds(r, m) == n for m, n in marker)]
    if loop_work is not None:
        marked = [r for r in marked if count(r) == loop_work]
        if len(marked) > 1:
            raise RuntimeError(f"{len(marked)} loops hold {loop_work} {work} and {marker}")
    if not marked:
        raise RuntimeError(f"no loop holds {marker}" +
                           (f" and {loop_work} {work}" if loop_work is not None else ""))
    inner = max(marked, key=count)
    if count(inner) == 0:
        raise RuntimeError(f"no {work} in any loop")
    lines = body(insns, *inner)
    if block_work:
        outer = [r for r in ranges if r != inner and r[0] <= inner[0] and inner[1] <= r[1]]
        if not outer:
            raise RuntimeError("no block loop around the inner loop")
        lo, hi = min(outer, key=lambda r: r[1] - r[0])
        others = [r for r in innermost if r != inner and lo <= r[0] and r[1] <= hi]
        rest = lambda a, b: [i for i in body(insns, a, b)
                             if not any(r[0] <= i[0] <= r[1] for r in others)]
        before, after = rest(lo, inner[0] - 1), rest(inner[1] + 1, hi)
        outside = sum(1 for i in before + after if is_work(i[1], work))
        repeats, partial = divmod(block_work - outside, count(inner))
        if partial or repeats < 1:
            raise RuntimeError(f"a block is not whole passes of the inner loop ({work})")
        lines = before + lines * repeats + after
    asm = [".Lmodel:"]
    for addr, mnemonic, operands in lines:
        if branch_target(mnemonic, operands) is not None:
            operands = re.sub(r"(?<!#)0x[0-9a-f]+$", ".Lmodel", operands)
        asm.append(f"  {mnemonic}\t{operands}")
    return "\n".join(asm) + "\n"


# Register dataflow, enough for the latency chains: the first register an instruction names is
# what it writes (two for ldp, the braced list for ld1*), the rest what it reads; stores,
# compares and branches write none; accumulating instructions also read what they write.
ACCUMULATING = re.compile(r"^(fml[as]|ml[as]|[su]dot|usdot|sudot|bfdot|[su]ml[as]l2?|"
                          r"[su]adalp|bsl|bit|bif|ins|movk|fmad|fmsb|mad|msb)$")
NO_WRITE = re.compile(r"^(st\w*|prfm|cmp|cmn|tst|fcmp\w*|ccmp|ccmn|b|b\.\w+|cbn?z|tbn?z|ret|nop)$")
REG = re.compile(r"\b(?:([xw])(\d+)|([qdshbvz])(\d+)|(p)(\d+)|(sp))\b")
SLOT_BYTES = {"q": 16, "d": 8, "x": 8, "s": 4, "w": 4, "h": 2, "b": 1}


def registers(text):
    """[(canonical name, size letter)] in order: x/w -> xN, q/d/s/h/b/v/z -> vN, pN."""
    found = []
    for m in REG.finditer(text):
        if m.group(1):
            found.append((f"x{m.group(2)}", m.group(1)))
        elif m.group(3):
            found.append((f"v{m.group(4)}", m.group(3)))
        elif m.group(5):
            found.append((f"p{m.group(6)}", "p"))
        else:
            found.append(("sp", "x"))
    return found


def dataflow(mnemonic, operands):
    """(writes, reads, stack slots written as [(slot, reg)], stack slots read as [(slot, reg)])."""
    address = re.search(r"\[(sp|x29)(?:,\s*#(-?0x[0-9a-f]+|-?\d+))?\](?!!)", operands)
    data = operands[:address.start()] if address else operands
    regs = registers(data)
    base = registers(operands[address.start():]) if address else []
    if mnemonic.startswith("ld"):
        braced = re.search(r"\{([^}]*)\}", data)
        n = len(registers(braced.group(1))) if braced else (2 if mnemonic.startswith("ldp") else 1)
        writes, reads = regs[:n], regs[n:]
    elif NO_WRITE.match(mnemonic):
        writes, reads = [], regs
    else:
        writes, reads = regs[:1], regs[1:] + (regs[:1] if ACCUMULATING.match(mnemonic) else [])
    slots_in, slots_out = [], []
    if address and re.match(r"^(ld|st)", mnemonic) and not re.search(r"\],\s*#", operands):
        offset = int(address.group(2), 0) if address.group(2) else 0
        for reg, size in (writes if mnemonic.startswith("ld") else regs):
            key = (address.group(1), offset)
            (slots_in if mnemonic.startswith("ld") else slots_out).append((key, reg))
            offset += SLOT_BYTES.get(size, 16)
    return ([r for r, _ in writes], [r for r, _ in reads + base], slots_out, slots_in)


def chain_cycles(insns, latencies, through_memory, iterations=40):
    """Cycles per iteration of the longest loop-carried latency chain (unlimited pipes)."""
    ready = collections.defaultdict(float)
    ends = []
    for _ in range(iterations):
        for (mnemonic, operands), latency in zip(insns, latencies):
            writes, reads, slots_out, slots_in = dataflow(mnemonic, operands)
            start = max([ready[r] for r in reads] +
                        [ready[s] for s, _ in slots_in if through_memory] + [0.0])
            for r in writes:
                ready[r] = start + latency
            for slot, reg in slots_out:
                ready[slot] = ready[reg]  # the next load of the slot forwards the stored value
        ends.append(max(ready.values(), default=0.0))
    half = iterations // 2
    return (ends[-1] - ends[half - 1]) / (iterations - half)


def llvm_mca(core, asm):
    """llvm-mca on asm: (cycles per iteration, [(mnemonic, operands, micro-ops, latency)],
    {unit: busy cycles per iteration}, dispatch width, instructions it has no model for,
    instructions modelled by a stand-in)."""
    # LLVM 19's Oryon model also lacks some integer loads (ldr x/w with an immediate offset):
    # those are left out of the model and counted.
    lines = asm.splitlines()
    for i, line in enumerate(lines):
        mnemonic, _, operands = line.strip().partition("\t")
        if mnemonic in core.stand_ins:
            pattern, replacement = core.stand_ins[mnemonic]
            lines[i] = f"  {mnemonic}\t{pattern.sub(replacement, operands)}"
    stood_in = sum(1 for a, b in zip(asm.splitlines(), lines) if a != b)
    asm = "\n".join(lines) + "\n"
    options = ["-skip-unsupported-instructions=lack-sched"] if core.mca == MCA else []
    out = run([core.mca, "-mtriple=aarch64", f"-mcpu={core.mcpu}", "-iterations=200",
               "-instruction-info", "-resource-pressure", *options, "-"], input=asm)
    total = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    iterations = int(re.search(r"Iterations:\s+(\d+)", out).group(1))
    width = int(re.search(r"Dispatch Width:\s+(\d+)", out).group(1))
    info = out.split("Instructions:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    insns = []
    for line in info:
        uops, latency, mnemonic, operands = re.match(
            r"^\s*(\d+)\s+(\d+)\s+[\d.]+\s+(?:[*U]\s+)*(\S+)\s*(.*)$", line).groups()
        insns.append((mnemonic, operands, int(uops), int(latency)))
    names = dict(re.findall(r"^\[([\d.]+)\]\s+- (\S+)$", out, re.M))
    table = out.split("Resource pressure per iteration:\n", 1)[1].splitlines()
    pressure = {names[h.strip("[]")]: 0.0 if v == "-" else float(v)
                for h, v in zip(table[0].split(), table[1].split())}
    dropped = len(asm.splitlines()) - 1 - len(insns)
    return total / iterations, insns, pressure, width, dropped, stood_in


def loads_128(insns):
    """128-bit vector loads: ldr/ldur/ldp of q registers and ld1 of whole 128-bit registers."""
    count = 0
    for mnemonic, operands, _, _ in insns:
        if mnemonic in ("ldr", "ldur", "ldp", "ldnp"):
            data = operands.split("[", 1)[0]
            count += len(re.findall(r"\bq\d+", data))
        elif mnemonic == "ld1":
            count += len(re.findall(r"v\d+\.(?:16b|8h|4s|2d)", operands))
    return count


def predict(core, kernel, asm):
    """(cycles per iteration of asm, bottleneck): the largest of llvm-mca's cycles, the spill
    chains, and the core's stated peak rate for the work (plus, on cores that cannot pair them,
    one issue cycle per 128-bit load)."""
    cycles, insns, pressure, width, dropped, stood_in = llvm_mca(core, asm)
    dataflow_insns = [(m, o) for m, o, _, _ in insns]
    latencies = [lat for _, _, _, lat in insns]
    registers_only = chain_cycles(dataflow_insns, latencies, through_memory=False)
    # Register chains are llvm-mca's own (with the forwarding its models know); the spill chain
    # counts only where the stack lengthens it.
    chain = chain_cycles(dataflow_insns, latencies, through_memory=True)
    chain = chain if chain > 1.02 * registers_only else 0.0
    per_instruction, peak = work_per_instruction(kernel, core)
    work = sum(1 for m, _, _, _ in insns if is_work(m, kernel.work))
    # The peak's issue rate: sdotpv's sdot issue as 16 multiply-adds, of which it counts 8.
    floor = work * per_instruction * ISSUE_PER_WORK.get(kernel.work, 1) / peak
    floor_loads = loads_128(insns) if core.q_loads_alone else 0
    busiest = max(pressure.values())
    if floor + floor_loads > 1.02 * max(cycles, chain):
        why = f"stated peak: {work} {kernel.work} at {peak // per_instruction} per cycle"
        if floor_loads:
            why += f" + {floor_loads} 128-bit loads, which do not pair"
    elif chain > 1.02 * cycles:
        why = f"stack-spill chain ({chain:.1f} cycles: store, then the next iteration's load)"
    elif busiest >= 0.9 * cycles:
        units = sorted(n for n, p in pressure.items() if p >= 0.98 * busiest)
        why = f"{'+'.join(units)} busy {busiest:.1f}"
    elif sum(u for _, _, u, _ in insns) / width >= 0.9 * cycles:
        why = f"issue width ({sum(u for _, _, u, _ in insns)} micro-ops at {width} per cycle)"
    elif registers_only >= 0.9 * cycles:
        why = f"register dependency chain ({registers_only:.1f})"
    else:
        why = "operand stalls (results not ready at issue)"
    if dropped:
        why += f"; {dropped} instructions without a model left out"
    if stood_in:
        why += f"; {stood_in} modelled as the nearest form the model has"
    return max(cycles, chain, floor + floor_loads), work, why


def work_per_instruction(kernel, core):
    """(work per instruction, peak work per cycle): FLOP for fmla, MAC for sdot and mla."""
    lanes = 4 if kernel.isa == "neon" else core.sve // 32
    per_lane, peak = WORK[kernel.work]
    return per_lane * lanes, core.flop if peak == "flop" else core.mac


def kernel_function(obj_dir, objects, kernel, ns):
    """The kernel's instructions, or None when the build has no code for Highway target ns (a
    clang build with Highway 1.0.3 compiles the baseline target alone) or no such kernel (clang
    builds have no i8kv_i8dot_neondot)."""
    if kernel.obj not in objects:
        objects[kernel.obj] = functions(os.path.join(obj_dir, kernel.obj))
    funcs = objects[kernel.obj]
    if not any(f"::{ns}::" in full for full in funcs):
        return None
    name = kernel.symbol.format(ns=ns)
    # Not where the name is a template argument (&PanelI16 in RunI8<&PanelI16, ...>).
    matches = [f for full, f in funcs.items()
               if any(n in full and "&" + n not in full for n in name.split(" | "))]
    if not matches:
        print(f"({kernel.label}: no {name} in this build)", file=sys.stderr)
        return None
    if len(matches) != 1:
        raise RuntimeError(f"{name} found {len(matches)} times in {kernel.obj}")
    return matches[0]


Row = collections.namedtuple("Row", "kernel core target cycles percent loop_percent why")


def report_without_dot(obj_dir):
    """{kernel label: {core label: multiply-adds per cycle}} on the cores without sdot."""
    objects, rates = {}, {}
    for kernel in NO_DOT_KERNELS:
        insns = kernel_function(obj_dir, objects, kernel, "N_NEON")
        if insns is None:
            continue
        per_lane, _ = WORK[kernel.work]
        per_instruction = 4 * (per_lane // 2 if kernel.work == "fmla" else per_lane)  # FLOP / 2
        asm = loop_text(insns, kernel.work, kernel.block_work, kernel.marker, kernel.loop_work)
        for core in NO_DOT_CORES:
            cycles, found, _, _, _, _ = llvm_mca(core, asm)
            work = sum(1 for m, _, _, _ in found if is_work(m, kernel.work))
            rates.setdefault(kernel.label, {})[core.label] = work * per_instruction / cycles
    return rates


def report(obj_dir):
    objects = {}
    rows = []
    for kernel in KERNELS:
        for core in CORES:
            # SVE on the cores that have it; NEON on all but A64FX (built for SVE alone).
            if (core.sve is None) if kernel.isa == "sve" else (core.mcpu == "a64fx"):
                continue
            if core.mcpu in kernel.skip:
                continue
            ns = "N_NEON" if kernel.isa == "neon" else SVE_TARGET[core.sve]
            insns = kernel_function(obj_dir, objects, kernel, ns)
            if insns is None:
                continue
            per_instruction, peak = work_per_instruction(kernel, core)
            percent = lambda cycles, work: 100.0 * work * per_instruction / (cycles * peak)
            asm = loop_text(insns, kernel.work, kernel.block_work, kernel.marker,
                            kernel.loop_work)
            cycles, work, why = predict(core, kernel, asm)
            loop_percent = None
            if kernel.block_work:
                loop_cycles, loop_work, _ = predict(core, kernel, loop_text(insns, kernel.work, 0))
                loop_percent = percent(loop_cycles, loop_work)
            rows.append(Row(kernel.label, core.label, ns[2:], cycles * kernel.step_work / work,
                            percent(cycles, work), loop_percent, why))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build", "aarch64"),
                        help="aarch64 build tree to read (default: the aarch64 preset's)")
    parser.add_argument("--no-build", action="store_true", help="use the build tree as it is")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    missing = [t for t in sorted({OBJDUMP, *(c.mca for c in CORES + NO_DOT_CORES)})
               if not shutil.which(t)]
    if missing:
        sys.exit(f"arm_model.py: {', '.join(missing)} not found: tools/install_deps.sh --arm")
    if not args.no_build:
        build()
    versions = ", ".join(sorted({re.search(r"LLVM version \S+", run([c.mca, "--version"]))
                                 .group(0) for c in CORES}))
    print(f"Model: llvm-mca ({versions}) on {args.build_dir}: a prediction, not a measurement.")
    print("Peak per cycle and core, fp32 FLOP / int8 MAC: " +
          ", ".join(f"{c.label} {c.flop} / {c.mac}" for c in CORES) + ".")
    print("Cycles: the largest of llvm-mca's, the loop-carried chains through stack spills, and "
          "the stated peak (A55: plus one cycle per 128-bit load). int8: per group of 4 k, "
          "over a 64-value block (16 groups and the block epilogue); 'loop' = without it.")
    obj_dir = os.path.join(args.build_dir, "simd", "CMakeFiles", "edgeattn_simd.dir")
    rows = report(obj_dir)
    if args.markdown:
        print_markdown(rows)
    else:
        print_text(rows)
    print("\nCores without the dot product, multiply-adds per cycle (llvm-mca alone):")
    for label, per_core in report_without_dot(obj_dir).items():
        print(f"  {label:60} " + "  ".join(f"{c} {r:5.2f}" for c, r in per_core.items()))


def print_text(rows):
    last = None
    for r in rows:
        loop = f" (loop {r.loop_percent:.0f}%)" if r.loop_percent is not None else ""
        if r.kernel != last:
            print(f"\n{r.kernel}")
            last = r.kernel
        print(f"  {r.core:17} {r.target:9} {r.cycles:6.2f} cycles {r.percent:4.0f}% of peak"
              f"{loop:12} {r.why}")


def print_markdown(rows):
    """% of peak, a loop per row and a core per column; int8: the loop alone in brackets."""
    cores = [c.label for c in CORES]
    print("\n| loop | " + " | ".join(cores) + " |")
    print("| --- |" + " ---: |" * len(cores))
    for kernel in dict.fromkeys(r.kernel for r in rows):
        cells = {r.core: f"{r.percent:.0f}%" + (f" ({r.loop_percent:.0f}%)"
                                                 if r.loop_percent is not None else "")
                 for r in rows if r.kernel == kernel}
        print(f"| {kernel} | " + " | ".join(cells.get(c, "-") for c in cores) + " |")

if __name__ == "__main__":
    sys.exit(main())
