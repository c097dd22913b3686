// Times one ONNX model on ONNX Runtime's CPU execution provider (npm onnxruntime-node, installed in tests/models by
// `npm ci`), the peer of Kiln's CPU benchmark (benchmarks/cpu/run.py): prints one line of JSON with the median ms.
// Usage: node ort_bench.js --model=M.onnx --shape=input:1x3x224x224 [--threads=2] [--warmup=5] [--iters=20]
//        [--modules=DIR (folder holding node_modules/onnxruntime-node; default tests/models)]
//        [--spinning=1 (ORT's default: idle intra-op threads spin; 0 sets session.intra_op.allow_spinning=0)]
'use strict';
const path = require('path');

function parseArgs(argv) {
  const a = {threads: 2, warmup: 5, iters: 20, spinning: 1, modules: path.join(__dirname, '..', '..', 'tests', 'models')};
  for (const arg of argv) {
    const m = /^--([A-Za-z]+)=(.*)$/.exec(arg);
    if (!m) throw new Error(`bad argument '${arg}' (want --name=value)`);
    a[m[1]] = m[2];
  }
  if (!a.model || !a.shape) throw new Error('--model and --shape are needed');
  for (const k of ['threads', 'warmup', 'iters', 'spinning']) {
    a[k] = Number(a[k]);
    if (!Number.isInteger(a[k]) || a[k] < 0) throw new Error(`--${k} must be a whole number`);
  }
  if (a.iters < 1) throw new Error('--iters must be at least 1');
  if (a.spinning > 1) throw new Error('--spinning must be 0 or 1');
  return a;
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = require(require.resolve('onnxruntime-node', {paths: [a.modules]}));
  const [name, dimText] = a.shape.split(':');
  const dims = dimText.split('x').map(Number);
  const count = dims.reduce((p, d) => p * d, 1);
  // Same kind of input as kilnexec's default: uniform random floats (values do not change the time of these
  // models); fixed LCG so runs are repeatable.
  const data = new Float32Array(count);
  let s = 12345;
  for (let i = 0; i < count; ++i) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    data[i] = (s / 4294967296) * 2 - 1;
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    ...(a.spinning ? {} : {extra: {session: {intra_op: {allow_spinning: '0'}}}}),
  });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};
  for (let i = 0; i < a.warmup; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < a.iters; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  console.log(JSON.stringify({
    median_ms: median(times),
    min_ms: Math.min(...times),
    runs: times.length,
    warmup: a.warmup,
    load_ms: loadMs,
    threads: a.threads,
    spinning: a.spinning,
    ort_version: ort.env.versions.common,
  }));
}

main().catch((e) => {
  console.error(`ort_bench.js: ${e.stack || e}`);
  process.exit(1);
});
