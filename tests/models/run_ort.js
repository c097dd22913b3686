// Runs every model of an export_models.py folder through ONNX Runtime (CPU, npm onnxruntime-node), the oracle of
// the real-model tests: writes <name>.<output>.bin (float32) and adds each output's name and shape to
// manifest.json. Usage: node run_ort.js DIR [STAMP]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const dir = process.argv[2];
  const manifestPath = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  for (const m of manifest) {
    // Full precision: no graph rewrites that change rounding (the tests compare at 1e-5).
    const session = await ort.InferenceSession.create(path.join(dir, m.model), {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled',
      intraOpNumThreads: 1,
    });
    const raw = fs.readFileSync(path.join(dir, m.input_file));
    const data = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    const feeds = {[m.input]: new ort.Tensor('float32', data, m.input_shape)};
    const results = await session.run(feeds);
    m.outputs = [];
    m.ort_version = ort.env.versions.common;
    for (const name of session.outputNames) {
      const t = results[name];
      if (t.type !== 'float32') throw new Error(`${m.name}: output ${name} is ${t.type}, expected float32`);
      const file = `${m.name}.${name}.bin`;
      fs.writeFileSync(path.join(dir, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      m.outputs.push({name, file, shape: t.dims.map(Number)});
    }
    console.log(`onnxruntime ${ort.env.versions.common}: ${m.name} -> ${m.outputs.map((o) => o.name).join(', ')}`);
  }
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1));
  if (process.argv[3]) fs.writeFileSync(process.argv[3], '');
}

main().catch((e) => {
  console.error(`run_ort.js: ${e.stack || e}`);
  process.exit(1);
});
