/**
 * Extension-host check of issue 24 item 5 ("work that cannot kill other work") with the real
 * service workers (`dist/worker.js` threads): a "Check chat template" is running when a render of a
 * long row runs past its budget; the render is stopped and named (which line of which file, after how
 * long), the template check is answered, and the template worker was never restarted. The client is
 * the suite's own (a `ServiceClient` over the extension's `dist/worker.js`), so the extension's
 * workers are not disturbed. The lane rules themselves are unit-tested (test/unit/serviceLanes.test.ts).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ServiceBudgetError, ServiceClient } from '../../src/vscode/serviceClient';

/** Runs the check in `ws`; throws on failure. */
export async function runWorkerLanesCheck(ext: vscode.Extension<unknown>, ws: string): Promise<void> {
  // A long agent row: 40 turns of some 2,000 characters each.
  const turns = Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `Step ${i}: ${'inspect the repository, run the tests, read the failure and patch the module again; '.repeat(25)}`,
  }));
  const file = path.join(ws, 'long-agent-row.jsonl');
  const text = JSON.stringify({ messages: turns });
  fs.writeFileSync(file, text + '\n');
  const client = new ServiceClient(ext.extensionUri);
  try {
    const t0 = Date.now();
    const checking = client.call({ op: 'checkTemplate', templateKwargs: {} }, 60_000);
    // Loads the tokenizer in the render worker first (not counted in a budget), then a render that cannot fit in 1 ms.
    await client.call(
      {
        op: 'view',
        row: { text: '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}', file, line: 1 },
        options: { mask: 'assistant', templateKwargs: {} },
      },
      30_000,
    );
    const render = client.call({ op: 'view', row: { text, file, line: 1 }, options: { mask: 'assistant', templateKwargs: {} } }, 1);
    await assert.rejects(render, (e: unknown) => {
      assert.ok(e instanceof ServiceBudgetError, `the render failed with something else: ${(e as Error).message}`);
      assert.equal(e.message, 'rendering line 1 of long-agent-row.jsonl took longer than 0.0 s and was stopped');
      return true;
    });
    const check = await checking;
    assert.equal(check.prefixStable, false, 'the template check of the embedded Qwen3 is answered (it rewrites history)');
    assert.deepEqual(check.endOfTurnTrained, ['<|im_end|>']);
    assert.equal(client.starts().template, 1, 'the template worker was never restarted');
    // The render lane serves the next call (a new worker if the overrun ended the old one).
    const again = await client.call({ op: 'view', row: { text, file, line: 1 }, options: { mask: 'assistant', templateKwargs: {} } }, 120_000);
    assert.ok(again.totals.trainableTokens > 0, 'the long row renders with a real budget');
    console.log(
      `[host-suite] ok: a render past its 1 ms budget was stopped and named while a template check ran; the check was answered (${check.tokenizer.name}), template worker starts ${client.starts().template}, render ${client.starts().render} (${Date.now() - t0} ms)`,
    );
  } finally {
    client.dispose();
    fs.rmSync(file, { force: true });
  }
}
