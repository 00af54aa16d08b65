/**
 * `draft-vocab`'s files for each trainer (run/jobs/draftVocab.ts): the target vocabulary size rules (the model's
 * `config.json` `vocab_size`, never the tokenizer's length), and — with a Python with torch — each file read
 * the way its trainer reads it: SpecForge `load_vocab_mapping` (torch.load, copy_ into bool [V] / int64 [K]
 * buffers), EAGLE `cache.pt` (torch.load, `d2t` / `t2d`), Model-Optimizer `load_draft_vocab_cache`
 * (weights_only, shape and dtype equal to an int64 [K] buffer), speculators (`np.load` of d2t.npy / t2d.npy,
 * `torch.load(weights_only=True)` of token_freq.pt rebuilt into the same mapping by speculators' rule).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { buildDraftVocab, DRAFT_VOCAB_FILES, resolveTargetVocabSize, writeDraftVocab } from '../../src/core/run/jobs/draftVocab';
import { tempDir } from '../helpers';
import { runTorch, torchSkip } from '../torch';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('target vocabulary size: config.json vocab_size; the tokenizer length is refused with the right number', () => {
  const qwen = { modelVocabSize: 151936, tokenizerSize: 151669 };
  assert.equal(resolveTargetVocabSize([qwen], undefined), 151936);
  assert.equal(resolveTargetVocabSize([qwen], 151936), 151936);
  assert.throws(
    () => resolveTargetVocabSize([qwen], 151669),
    new Error(
      `--target-vocab-size 151669 is the tokenizer's length (len(tokenizer)), not the model's embedding size: t2d must have config.json "vocab_size" = 151936 entries (use --target-vocab-size 151936, or leave it out)`,
    ),
  );
  assert.throws(() => resolveTargetVocabSize([qwen], 152000), /152000 differs from the model's vocabulary size: .* = 151936 entries/);
  // No config.json: the size must be given, and may not be below the tokenizer's ids.
  const bare = { modelVocabSize: null, tokenizerSize: 1000 };
  assert.throws(() => resolveTargetVocabSize([bare], undefined), /--target-vocab-size is needed: .*often more than the tokenizer's 1000 ids/);
  assert.equal(resolveTargetVocabSize([bare], 1024), 1024);
  assert.throws(() => resolveTargetVocabSize([bare], 999), /999 is below the tokenizer's 1000 ids/);
  // Older counts files have no tokenizerSize.
  assert.equal(resolveTargetVocabSize([{ modelVocabSize: null }], 50), 50);
  assert.throws(
    () => resolveTargetVocabSize([qwen, { modelVocabSize: 128256, tokenizerSize: 128256 }], undefined),
    /different model vocabulary sizes \(151936, 128256\)/,
  );
});

test('each trainer reads its vocabulary file as its own loader does', { skip: torchSkip() }, async () => {
  const out = tempDir('eagle3-dv-');
  dirs.push(out);
  // Trainable counts over a 40-id vocabulary: ids 30, 3, 17, 9 (counts 9, 7, 7, 2), K = 6 → two ids filled (0, 1).
  const counts = new Map([
    [30, 9],
    [3, 7],
    [17, 7],
    [9, 2],
  ]);
  const v = buildDraftVocab(counts, 6, 40);
  assert.deepEqual(v.ids, [0, 1, 3, 9, 17, 30]);
  const written = await writeDraftVocab(v, out, { tokenizer: { name: 't', hash: 'h' }, countFiles: ['token_counts.json'] }, counts);
  assert.deepEqual(readdirSync(out).sort(), Object.values(DRAFT_VOCAB_FILES).sort());
  assert.equal(written.length, 7);
  const got = runTorch(
    `
import json, os, sys
import numpy as np, torch
d, K, V = sys.argv[1], 6, 40
# SpecForge: draft model buffers, torch.load, copy_ (shapes must match exactly for copy_ of 1-D tensors).
t2d_buf, d2t_buf = torch.ones(V, dtype=torch.bool), torch.zeros(K, dtype=torch.int64)
m = torch.load(os.path.join(d, "vocab_mapping.pt"), weights_only=True)
t2d_buf.copy_(m["t2d"]); d2t_buf.copy_(m["d2t"])
spec = {"keys": sorted(m), "d2t": [str(m["d2t"].dtype), list(m["d2t"].shape)], "t2d": [str(m["t2d"].dtype), list(m["t2d"].shape)],
        "targets": (torch.arange(K) + d2t_buf).tolist(), "t2d_true": t2d_buf.nonzero().flatten().tolist()}
# EAGLE traineagle3: torch.load("cache.pt") in the working folder.
os.chdir(d)
c = torch.load("cache.pt")
eagle = {"same": bool(torch.equal(c["d2t"], m["d2t"]) and torch.equal(c["t2d"], m["t2d"]))}
# Model-Optimizer: shape and dtype equal to the int64 [K] buffer.
mo = torch.load("d2t.pt", weights_only=True)
modelopt = {"ok": mo.shape == d2t_buf.shape and mo.dtype == d2t_buf.dtype, "targets": (torch.arange(K) + mo).tolist()}
# speculators: np.load of the .npy files; token_freq.pt rebuilt by build_vocab_mappings_from_distribution's rule.
d2t, t2d = torch.from_numpy(np.load("d2t.npy")), torch.from_numpy(np.load("t2d.npy"))
freq = torch.load("token_freq.pt", weights_only=True)
order = sorted(freq, key=lambda t: (-freq[t], t))[:K]
for t in range(K):
    if len(order) >= K: break
    if t not in order: order.append(t)
order.sort()
spec_d2t = torch.tensor(order, dtype=torch.long) - torch.arange(K, dtype=torch.long)
spec_t2d = torch.zeros(V, dtype=torch.bool); spec_t2d[order] = True
speculators = {"dtypes": [str(d2t.dtype), str(t2d.dtype)], "freq": sorted(freq.items()),
               "same": bool(torch.equal(d2t, spec_d2t) and torch.equal(t2d, spec_t2d))}
print(json.dumps({"spec": spec, "eagle": eagle, "modelopt": modelopt, "speculators": speculators}))
`,
    [out],
  );
  assert.deepEqual(got, {
    spec: { keys: ['d2t', 't2d'], d2t: ['torch.int64', [6]], t2d: ['torch.bool', [40]], targets: [0, 1, 3, 9, 17, 30], t2d_true: [0, 1, 3, 9, 17, 30] },
    eagle: { same: true },
    modelopt: { ok: true, targets: [0, 1, 3, 9, 17, 30] },
    speculators: {
      dtypes: ['torch.int64', 'torch.bool'],
      freq: [
        [3, 7],
        [9, 2],
        [17, 7],
        [30, 9],
      ],
      same: true,
    },
  });
});
