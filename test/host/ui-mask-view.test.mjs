// What a person does, in the real VS Code workbench driven by Playwright: open a sample dataset,
// hover a turn (token counts shown), run "EAGLE-3 Prep: Open mask view" from the Command Palette
// (trainable tokens highlighted), go to the next row and switch the mask policy inside the webview,
// then switch to a light and a high-contrast theme. Screenshots are kept for a look:
// $EAGLE3_SCREENSHOT_DIR (npm test: .cache/screenshots), else <tmp>/eagle3-ui-*/ (the paths are printed).
//
// Needs the VS Code host (test/host/README.md) and dist/ built (npm test builds it); skipped
// without the host unless CI / EAGLE3_REQUIRE_VSCODE_HOST is set.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { launchChromium, openWorkbench, startServer, webviewFrameWith } from '../../scripts/vscode-host/host.mjs';

const repo = resolve(import.meta.dirname, '..', '..');
const server = process.env.EAGLE3_VSCODE_SERVER || join(repo, '.cache', 'vscode-host', 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
const required = !!(process.env.CI || process.env.EAGLE3_REQUIRE_VSCODE_HOST);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The frame of the mask view's page. */
const maskFrame = (page, timeoutMs = 60000) => webviewFrameWith(page, '#app .toolbar', timeoutMs);

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title, { delay: 10 });
  await sleep(800);
  await page.keyboard.press('Enter');
}

test('UI: hover a row, open the mask view, navigate and switch the policy (screenshots)', { timeout: 8 * 60_000 }, async (t) => {
  if (!existsSync(server)) {
    if (required) assert.fail(`VS Code host not installed at ${server}`);
    t.skip('VS Code host not installed (see test/host/README.md)');
    return;
  }
  assert.ok(existsSync(join(repo, 'dist', 'extension.js')) && existsSync(join(repo, 'dist', 'webview.js')), 'dist/ is not built (npm run build)');
  const tmp = mkdtempSync(join(tmpdir(), 'eagle3-ui-'));
  const shots = process.env.EAGLE3_SCREENSHOT_DIR ? resolve(process.env.EAGLE3_SCREENSHOT_DIR) : tmp;
  mkdirSync(shots, { recursive: true });
  const ws = join(tmp, 'ws');
  mkdirSync(ws);
  for (const f of ['chat-sharegpt-human-gpt.jsonl', 'agentic-trajectories.jsonl']) copyFileSync(join(repo, 'samples', f), join(ws, f));

  let srv;
  let browser;
  let page;
  const saved = [];
  const shot = async (page, name) => {
    const p = join(shots, name);
    await page.screenshot({ path: p });
    saved.push(p);
  };
  try {
    srv = await startServer(server, { dataPrefix: 'vscode-ui-' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    const cspErrors = [];
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    // The workspace trust dialog declined: the extension runs in Restricted Mode (it declares limited support).
    await openWorkbench(page, srv, { extension: repo, folder: ws });
    await sleep(3000);

    // Open the chat sample (Quick Open), wrap lines so the whole row is visible, hide the side bar.
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
    await page.keyboard.type('chat-sharegpt-human-gpt.jsonl', { delay: 10 });
    await sleep(1000);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.monaco-editor .view-line', { timeout: 60000 });
    await page.keyboard.press('Control+B');
    await page.keyboard.press('Alt+Z');
    await sleep(1500);

    // Hover the first assistant turn's text.
    const water = page.locator('.monaco-editor .view-line span[class^="mtk"]', { hasText: 'Water only' }).first();
    await water.waitFor({ timeout: 30000 });
    const box = await water.boundingBox();
    let hoverText = '';
    for (let attempt = 0; attempt < 4 && !hoverText.includes('trainable'); attempt++) {
      await page.mouse.move(box.x + 5, box.y + box.height / 2);
      await sleep(300);
      await page.mouse.move(box.x + 12, box.y + box.height / 2);
      try {
        await page.waitForSelector('.monaco-hover:has-text("EAGLE-3")', { timeout: 30000 });
        hoverText = await page.locator('.monaco-hover:has-text("EAGLE-3")').first().innerText();
      } catch {
        /* retry: the first hover loads the tokenizer */
      }
    }
    assert.match(hoverText, /114 tokens/, `hover text: ${hoverText}`);
    assert.match(hoverText, /30 trainable/);
    assert.match(hoverText, /turn 3 · assistant/);
    await shot(page, 'hover.png');
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 880);

    // Open the mask view from the Command Palette (cursor on line 1).
    await page.locator('.monaco-editor .view-line').first().click();
    await page.keyboard.press('Control+Home');
    await runCommand(page, 'EAGLE-3 Prep: Open mask view');
    let frame = await maskFrame(page);
    await frame.waitForSelector('.tokens .tok', { timeout: 60000 });
    const trainable = await frame.locator('.tokens .tok.trainable').count();
    const special = await frame.locator('.tokens .tok.special').count();
    assert.equal(trainable, 16, 'record chat-0#0 has 16 trainable tokens highlighted');
    assert.equal(special, 6, 'record chat-0#0 shows 6 special tokens');
    // Hover a token: the status line gives its id and position.
    await frame.locator('.tokens .tok.special').first().hover();
    await sleep(300);
    const status = await frame.locator('.status').innerText();
    assert.match(status, /token 0 of 46 · id 151644/, status);
    await shot(page, 'mask-view.png');

    // The second record of the row, then the next row, then the last-assistant policy.
    await frame.locator('#record').click();
    await sleep(300);
    await frame.locator('#record').press('ArrowDown');
    await frame.locator('#record').press('Enter');
    await frame.waitForFunction(() => document.querySelectorAll('.tokens .tok').length === 68, null, { timeout: 30000 });
    await frame.locator('vscode-button', { hasText: 'Row ▶' }).click();
    await frame.waitForFunction(() => document.querySelector('.where')?.textContent?.includes('line 2 of'), null, { timeout: 30000 });
    await frame.locator('#mask').click();
    await sleep(300);
    await frame.locator('#mask').press('ArrowDown');
    await frame.locator('#mask').press('Enter');
    await frame.waitForFunction(
      () => document.querySelectorAll('#record vscode-option').length === 1 && document.querySelectorAll('.tokens .tok.trainable').length === 14,
      null,
      { timeout: 30000 },
    );
    await shot(page, 'mask-view-last-assistant.png');

    // Dark and high-contrast themes (the workbench starts in a light theme).
    for (const [theme, file] of [
      ['Dark Modern', 'mask-view-dark.png'],
      ['Dark High Contrast', 'mask-view-hc.png'],
    ]) {
      await page.mouse.click(300, 600); // focus the editor (Ctrl+K Ctrl+T = the color theme picker)
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+T');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
      await sleep(800);
      await page.keyboard.type(theme, { delay: 10 });
      await sleep(800);
      await page.keyboard.press('Enter');
      await sleep(2500);
      frame = await maskFrame(page);
      await shot(page, file);
    }
    assert.deepEqual(cspErrors, [], 'the webview violated its Content-Security-Policy');
    console.log(`UI screenshots:\n${saved.join('\n')}`);
  } catch (e) {
    if (page) await shot(page, 'failure.png').catch(() => {});
    console.log(`UI screenshots (failed run):\n${saved.join('\n')}`);
    throw e;
  } finally {
    await browser?.close().catch(() => {});
    await srv?.stop();
    // The screenshots stay (in their own folder when one is given); the workspace copy goes unless kept.
    if (!process.env.EAGLE3_KEEP_HOST_WS) rmSync(shots === tmp ? ws : tmp, { recursive: true, force: true });
  }
});
