// Runs every model listed in a test folder's manifest.json (written by export_models.py or make_op_models.py)
// through ONNX Runtime (CPU, npm onnxruntime-node), the oracle of Kiln's model tests: writes each output as
// <name>.<output>.bin (raw little-endian bytes) and adds its name, type and shape to the manifest.
// Usage: node run_ort.js DIR [STAMP]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// Element type name (numpy's) -> typed array holding it, as onnxruntime-node wants it.
const ARRAYS = {
  float32: Float32Array,
  float64: Float64Array,
  float16: Uint16Array,
  int64: BigInt64Array,
  int32: Int32Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

function load(dir, input) {
  const Array = ARRAYS[input.type];
  if (!Array) throw new Error(`input ${input.name}: type ${input.type} is not handled`);
  const raw = fs.readFileSync(path.join(dir, input.file));
  const copy = new Uint8Array(raw.byteLength);
  copy.set(raw);
  return new ort.Tensor(input.type, new Array(copy.buffer), input.shape);
}

async function main() {
  const dir = process.argv[2];
  const manifestPath = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  for (const m of manifest) {
    // No graph rewrites that change rounding: the tests compare closely.
    const session = await ort.InferenceSession.create(path.join(dir, m.model), {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled',
      intraOpNumThreads: 1,
    });
    const feeds = {};
    for (const input of m.inputs) feeds[input.name] = load(dir, input);
    const results = await session.run(feeds);
    m.outputs = [];
    m.ort_version = ort.env.versions.common;
    for (const name of session.outputNames) {
      const t = results[name];
      const file = `${m.name}.${name}.bin`;
      fs.writeFileSync(path.join(dir, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      m.outputs.push({name, file, type: t.type, shape: t.dims.map(Number)});
    }
  }
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1));
  console.log(`onnxruntime ${ort.env.versions.common}: ran ${manifest.length} models in ${dir}`);
  if (process.argv[3]) fs.writeFileSync(process.argv[3], '');
}

main().catch((e) => {
  console.error(`run_ort.js: ${e.stack || e}`);
  process.exit(1);
});
