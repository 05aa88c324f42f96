// Times ONNX Runtime (onnxruntime-node, the same native library as the Python wheel) on the
// models of make_onnx_models.py: for each model and thread count, a session with that many
// intra-op threads, two warm-up runs, then runs until --min-time seconds and --min-calls calls.
// Prints one JSON object per line with the keys of `edgeattn bench --json` (peer, shape, seq,
// d_model, heads, mode, threads, median_ms, p90_ms, p99_ms, stddev_ms, calls, and max_abs_err and
// cosine against the float64 reference), peer naming the ONNX Runtime version and the variant.
//
//   node tools/peers/time_onnxruntime.js DIR SHAPE THREADS [MIN_TIME] [MIN_CALLS]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function readFloats(file, Type) {
  const b = fs.readFileSync(file);
  return new Type(b.buffer, b.byteOffset, b.length / Type.BYTES_PER_ELEMENT);
}

function compare(out, ref) {
  let maxAbs = 0, ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < ref.length; ++i) {
    maxAbs = Math.max(maxAbs, Math.abs(out[i] - ref[i]));
    ab += out[i] * ref[i];
    aa += out[i] * out[i];
    bb += ref[i] * ref[i];
  }
  return {max_abs_err: maxAbs, cosine: ab / Math.sqrt(aa * bb)};
}

async function main() {
  const [dir, shapeName, threadList, minTime = '1', minCalls = '30'] = process.argv.slice(2);
  const shapes = JSON.parse(fs.readFileSync(path.join(dir, 'models.json')));
  const shape = shapes.find((s) => s.shape === shapeName);
  if (!shape) throw new Error(`shape: expected one of models.json, got '${shapeName}'`);
  const x = readFloats(path.join(dir, `${shape.shape}_x.bin`), Float32Array);
  const ref = readFloats(path.join(dir, `${shape.shape}_ref.bin`), Float64Array);
  const input = new ort.Tensor('float32', x, [1, shape.seq, shape.d_model]);
  for (const mode of ['fp32', 'int8']) {
    for (const model of shape.models[mode]) {
      for (const threads of threadList.split(',').map(Number)) {
        const session = await ort.InferenceSession.create(path.join(dir, model), {
          intraOpNumThreads: threads,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
        });
        let out;
        for (let i = 0; i < 2; ++i) out = (await session.run({x: input})).y.data;
        const ms = [];
        const start = process.hrtime.bigint();
        for (;;) {
          const t0 = process.hrtime.bigint();
          out = (await session.run({x: input})).y.data;
          const t1 = process.hrtime.bigint();
          ms.push(Number(t1 - t0) / 1e6);
          if (Number(t1 - start) / 1e9 >= Number(minTime) && ms.length >= Number(minCalls)) break;
        }
        ms.sort((a, b) => a - b);
        // Percentiles interpolate between the sorted times, as edgeattn bench does.
        const at = (q) => {
          const pos = q * (ms.length - 1);
          const below = Math.floor(pos);
          const above = Math.min(below + 1, ms.length - 1);
          return ms[below] + (pos - below) * (ms[above] - ms[below]);
        };
        const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
        const variance = ms.reduce((a, b) => a + (b - mean) * (b - mean), 0) /
                         Math.max(1, ms.length - 1);
        const variant = model.replace(`${shape.shape}_`, '').replace('.onnx', '');
        console.log(JSON.stringify({
          peer: `onnxruntime-${ort.env.versions.common}/${variant}`, shape: shape.shape,
          seq: shape.seq, d_model: shape.d_model, heads: shape.heads, mode, threads,
          median_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), stddev_ms: Math.sqrt(variance),
          calls: ms.length, ...compare(out, ref),
        }));
        await session.release();
      }
    }
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
