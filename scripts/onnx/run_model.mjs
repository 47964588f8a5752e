// Runs an ONNX model exported by `oppidum export` in onnxruntime-node, a runtime independent of
// oppidum, for the export equality test (tests/onnx_export_test.cpp) and by hand.
//
//   node scripts/onnx/run_model.mjs MODEL.onnx PLANES.f32 C,H,W OUT.f32 [BATCH]
//
// PLANES.f32 holds N positions of C x H x W little-endian float32 planes, one after another.
// The positions go through the model BATCH at a time (default: all at once), and OUT.f32 gets
// all N x A policy logits followed by the N values, as little-endian float32. The output names
// and shapes are checked against what oppidum promises; any mismatch exits with status 1.
import { readFileSync, writeFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

function fail(message) {
  console.error(`run_model: ${message}`);
  process.exit(1);
}

const [modelPath, planesPath, shapeText, outPath, batchText] = process.argv.slice(2);
if (!outPath) fail('usage: run_model.mjs MODEL.onnx PLANES.f32 C,H,W OUT.f32 [BATCH]');
const [c, h, w] = shapeText.split(',').map(Number);
const per = c * h * w;
const bytes = readFileSync(planesPath);
const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
if (!(per > 0) || all.length % per !== 0) fail(`${planesPath}: not a whole number of ${shapeText} positions`);
const n = all.length / per;
const batch = batchText ? Number(batchText) : n;

const session = await ort.InferenceSession.create(modelPath);
if (session.inputNames.join() !== 'planes') fail(`inputs are ${session.inputNames}, expected planes`);
if (session.outputNames.join() !== 'policy_logits,value')
  fail(`outputs are ${session.outputNames}, expected policy_logits,value`);

const logits = [];
const values = [];
for (let start = 0; start < n; start += batch) {
  const m = Math.min(batch, n - start);
  const input = new ort.Tensor('float32', all.slice(start * per, (start + m) * per), [m, c, h, w]);
  const out = await session.run({ planes: input });
  const p = out.policy_logits;
  const v = out.value;
  if (p.dims.length !== 2 || p.dims[0] !== m) fail(`policy_logits has shape [${p.dims}] for ${m} positions`);
  if (v.dims.length !== 2 || v.dims[0] !== m || v.dims[1] !== 1) fail(`value has shape [${v.dims}] for ${m} positions`);
  logits.push(p.data);
  values.push(v.data);
}

const total = logits.reduce((s, a) => s + a.length, 0) + n;
const result = new Float32Array(total);
let at = 0;
for (const a of logits) { result.set(a, at); at += a.length; }
for (const a of values) { result.set(a, at); at += a.length; }
writeFileSync(outPath, Buffer.from(result.buffer));
console.error(`run_model: ${n} positions through ${modelPath} in batches of ${batch}`);
