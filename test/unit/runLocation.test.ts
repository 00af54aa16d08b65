// Where a file's outputs are (src/core/run/editor/runLocation.ts): its own run, or the run of a folder
// that holds it; the newest run that lists the file wins. The Datasets view, the dashboard,
// Problems and the hover all read a file's state through readOutputState, which uses it.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { defaultOutDir } from '../../src/core/run/inputs/inputs';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { locateOutDir, outDirCandidates } from '../../src/core/run/editor/runLocation';
import { tempDir, writeJsonl } from '../helpers';

const chat = (q: string, a: string) => ({
  messages: [
    { role: 'user', content: q },
    { role: 'assistant', content: a },
  ],
});

test("outDirCandidates: the file's own folder, then each enclosing folder's run, and the same names in a configured output directory", () => {
  assert.deepEqual(outDirCandidates('/data/agent/runs/a.jsonl').slice(0, 4), [
    '/data/agent/runs/a.eagle3',
    '/data/agent/runs.eagle3',
    '/data/agent.eagle3',
    '/data.eagle3',
  ]);
  assert.deepEqual(outDirCandidates('/data/agent/a.jsonl', '/out/a.eagle3').slice(0, 5), [
    '/out/a.eagle3',
    '/data/agent.eagle3',
    '/out/agent.eagle3',
    '/data.eagle3',
    '/out/data.eagle3',
  ]);
});

test("a folder run is found for each of its files, with that file's figures; a newer run of the file alone wins", async () => {
  const root = tempDir('e3p-loc-');
  const folder = join(root, 'agent');
  mkdirSync(folder);
  const a = writeJsonl([chat('One?', 'One.'), chat('Two?', 'Two.')], 'a.jsonl', folder);
  const b = writeJsonl([chat('Three?', 'Three.')], 'b.jsonl', folder);
  // Before any run: the file's own folder, state none.
  assert.equal(locateOutDir(a), defaultOutDir(a));
  assert.equal(readOutputState(a).state, 'none');

  const folderRun = await prepare({ inputs: [a, b], outDir: defaultOutDir(folder) });
  assert.ok(folderRun.ok);
  const sa = readOutputState(a);
  const sb = readOutputState(b);
  assert.equal(sa.outDir, join(root, 'agent.eagle3'));
  assert.equal(sb.outDir, join(root, 'agent.eagle3'));
  assert.equal(sa.state, 'prepared', sa.staleBecause.join('; '));
  assert.deepEqual([sa.fileReport?.rowsRead, sb.fileReport?.rowsRead, sa.records, sb.records], [2, 1, 2, 1]);

  // The file prepared alone afterwards: its own, newer run is the one shown.
  const own = await prepare({ inputs: [a], outDir: defaultOutDir(a) });
  assert.ok(own.ok);
  assert.equal(readOutputState(a).outDir, defaultOutDir(a));
  // Its own run made older than the folder's: the folder run is the newest that lists it.
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(join(defaultOutDir(a), 'report.json'), old, old);
  assert.equal(locateOutDir(a), join(root, 'agent.eagle3'));
});
