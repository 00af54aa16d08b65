/**
 * Python with PyTorch, for the tests that load the `.pt` files the tool writes with
 * `torch.load(weights_only=True)` (CI installs Debian's python3-torch, `.ci/run`).
 */
import { spawnSync } from 'node:child_process';

let found: string | null | undefined;

/** The first of `$EAGLE3_TORCH_PYTHON`, `python3`, `/usr/bin/python3` that imports torch, or null. */
export function torchPython(): string | null {
  if (found !== undefined) return found;
  const candidates = [process.env.EAGLE3_TORCH_PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => !!c);
  found = null;
  for (const c of candidates) {
    const r = spawnSync(c, ['-c', 'import torch'], { encoding: 'utf8', timeout: 60_000 });
    if (r.status === 0) {
      found = c;
      break;
    }
  }
  return found;
}

/** Why the torch tests are skipped (for `test(name, { skip })`), or false when torch is there. */
export function torchSkip(): string | false {
  return torchPython() ? false : 'no Python with torch (apt-get install python3-torch, or set EAGLE3_TORCH_PYTHON)';
}

/** Runs a Python script with the torch Python; returns its stdout parsed as JSON. Throws with stderr on failure. */
export function runTorch(script: string, args: string[] = []): unknown {
  const py = torchPython();
  if (!py) throw new Error('no Python with torch');
  const r = spawnSync(py, ['-c', script, ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`python exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
