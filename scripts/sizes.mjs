// Lists every function over the line limit and every file over the file limit in src/ and webview/, exemptions
// included (issue 23, "functions a reader can hold"): `npm run sizes`. The limits and their options are read from
// eslint.config.mjs (the block that makes `max-lines-per-function` and `max-lines` errors), so this list and
// `npm run lint` count lines the same way. Output: one line per offender, `kind  lines  file:line  name`, longest first.
import { ESLint } from 'eslint';
import config from '../eslint.config.mjs';

const guard = config.find((b) => b.rules?.['max-lines-per-function']?.[0] === 'error' && b.rules?.['max-lines']?.[0] === 'error');
if (!guard) throw new Error('eslint.config.mjs has no block making max-lines-per-function and max-lines errors');
const [, fnOptions] = guard.rules['max-lines-per-function'];
const [, fileOptions] = guard.rules['max-lines'];
// Applied over the whole config: the exemptions and the PENDING block do not hide an offender here.
const eslint = new ESLint({ overrideConfig: { rules: { 'max-lines-per-function': ['warn', fnOptions], 'max-lines': ['warn', fileOptions] } } });
const targets = process.argv.slice(2);
const results = await eslint.lintFiles(targets.length ? targets : ['src', 'webview']);
const rows = [];
for (const r of results)
  for (const m of r.messages) {
    if (m.ruleId !== 'max-lines-per-function' && m.ruleId !== 'max-lines') continue;
    const lines = Number(/\((\d+)\)/.exec(m.message)?.[1]);
    const file = r.filePath.slice(process.cwd().length + 1);
    const kind = m.ruleId === 'max-lines' ? 'file' : 'function';
    rows.push({ kind, lines, where: `${file}:${m.line}`, name: kind === 'function' ? m.message.replace(/ has too many lines.*/, '') : '' });
  }
rows.sort((a, b) => a.kind.localeCompare(b.kind) || b.lines - a.lines);
console.log(`functions over ${fnOptions.max} lines, files over ${fileOptions.max} lines (exemptions included):`);
for (const r of rows) console.log(`${r.kind.padEnd(8)} ${String(r.lines).padStart(5)}  ${r.where}  ${r.name}`);
console.log(`${rows.filter((r) => r.kind === 'function').length} functions, ${rows.filter((r) => r.kind === 'file').length} files`);
