/**
 * The checkout explains itself: every relative link of the README and docs/ leads to a file (and
 * heading) that exists, every `npm run` script and repository script they name exists, and the
 * code cites the mask rules by sections of docs/loss-mask-rules.md, never a file outside the
 * repository.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'test/host/README.md',
  'scripts/vscode-host/README.md',
];
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
/** Markdown without its fenced code blocks (their text is not links). */
const prose = (md: string) => md.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, formatting and punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}
const anchorsOf = (md: string) => new Set([...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));

test('docs: the README is a front page that links every page of docs/', () => {
  const readme = read('README.md');
  const lines = readme.split('\n').length;
  assert.ok(lines < 300, `README.md has ${lines} lines: move details into docs/`);
  assert.ok(readme.indexOf('npm ci') < readme.indexOf('## '), 'the install command comes first');
  for (const page of pages.filter((p) => p.startsWith('docs/') && p !== 'docs/vsix-README.md')) {
    assert.ok(readme.includes(`](${page})`), `README.md does not link ${page}`);
  }
});

test('docs: relative links lead to existing files and headings', () => {
  let checked = 0;
  for (const page of pages) {
    for (const m of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
      const [file, anchor] = target.split('#');
      const path = file ? resolve(ROOT, dirname(page), file) : join(ROOT, page);
      assert.ok(existsSync(path), `${page}: link ${target} → ${relative(ROOT, path)} does not exist`);
      if (anchor && path.endsWith('.md')) {
        assert.ok(anchorsOf(readFileSync(path, 'utf8')).has(anchor), `${page}: link ${target}: no heading #${anchor}`);
      }
      checked++;
    }
  }
  assert.ok(checked >= 30, `only ${checked} links checked`);
});

/** Paths of other projects that the docs name as sources (speculators' scripts). */
const FOREIGN_PATHS = new Set(['scripts/build_vocab_mapping.py', 'scripts/train.py', 'scripts/prepare_data.py']);

test('docs: the npm scripts and repository scripts they name exist', () => {
  const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
  for (const page of pages) {
    const text = read(page);
    for (const m of text.matchAll(/npm run ([\w:-]+)/g)) assert.ok(m[1] in scripts, `${page}: npm run ${m[1]} is not a script of package.json`);
    for (const m of text.matchAll(/(?<![\w./-])((?:scripts|test|\.ci)\/[\w./-]*\w)/g)) {
      if (m[1].includes('*') || FOREIGN_PATHS.has(m[1])) continue;
      assert.ok(existsSync(join(ROOT, m[1])), `${page}: ${m[1]} is not in the repository`);
    }
  }
});

test('sources cite the mask rules by sections of docs/loss-mask-rules.md, and nothing outside the repository', () => {
  const sections = new Set([...read('docs/loss-mask-rules.md').matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1].replace(/\s*\*\*\(v1\.4, pending\)\*\*$/, '')));
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'fixtures') walk(p);
      } else if (/\.(ts|mjs)$/.test(e.name) && !['test/unit/docs.test.ts', 'test/unit/layering.test.ts'].includes(p)) files.push(p); // these spell the patterns (layering: imports made up to check the check)
    }
  };
  for (const d of ['src', 'test', 'scripts', 'webview']) walk(d);
  let cited = 0;
  for (const f of [...files, 'package.json', '.ci/run']) {
    // An import of the repository's own src/shared/ (the webview's protocol room) is inside it; anything else named ../shared/ is not.
    const text = read(f).replace(/(from |import\()'(\.\.?\/[^']*)'/g, (m, _k: string, spec: string) =>
      existsSync(join(ROOT, dirname(f), `${spec}.ts`)) ? '' : m,
    );
    assert.doesNotMatch(text, /shared\/spec|spec\/loss-mask|\.\.\/shared\//, `${f} points outside the repository`);
    assert.doesNotMatch(text, /\bspec loss-mask\.md\b|(?<!rules)\.md "Content that is|\bspec (v1\.\d )?"[A-Z]/, `${f} cites the old spec`);
    for (const m of text.matchAll(/docs\/loss-mask-rules\.md"?,? "([^"]+)"(?: and "([^"]+)")?/g)) {
      for (const name of [m[1], m[2]].filter(Boolean)) {
        const flat = name.replace(/\s*\n\s*\*?\s*/g, ' ');
        assert.ok(
          [...sections].some((s) => s === flat || s.startsWith(flat)),
          `${f} cites docs/loss-mask-rules.md "${flat}", which has no such section`,
        );
        cited++;
      }
    }
  }
  assert.ok(cited >= 20, `only ${cited} citations found`);
});

test('CHANGELOG.md has no relative links: vsce packages it and refuses relative links without a repository URL', () => {
  const links = [...prose(read('CHANGELOG.md')).matchAll(/\]\((?!https?:|#)([^)]+)\)/g)].map((m) => m[1]);
  assert.deepEqual(links, [], 'write the path as code (`docs/x.md`) instead of a link');
});
