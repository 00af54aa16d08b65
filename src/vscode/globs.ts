/**
 * Glob handling of the Datasets view's `eagle3prep.datasets.include` / `.exclude` settings.
 * VS Code's glob syntax allows one level of `{a,b}` groups and does not nest them, so several
 * patterns that have groups themselves cannot be joined into one `{p1,p2}` pattern as written: their
 * groups are expanded first.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */

/**
 * Expands the brace groups of a glob into plain globs (`a/*.{x,y}` → `a/*.x`, `a/*.y`; several
 * groups multiply). Groups are not nested themselves; a pattern without braces is returned as is.
 */
export function expandBraces(pattern: string): string[] {
  const m = /\{([^{}]*)\}/.exec(pattern);
  if (!m) return [pattern];
  const head = pattern.slice(0, m.index);
  const tail = pattern.slice(m.index + m[0].length);
  return m[1].split(',').flatMap((alt) => expandBraces(head + alt + tail));
}

/**
 * One glob matching any of `patterns` (`{p1,p2,…}` over their brace expansions), for the `exclude`
 * argument of `workspace.findFiles`; null when there is no pattern.
 */
export function joinGlobs(patterns: readonly string[]): string | null {
  const plain = patterns.flatMap(expandBraces);
  return plain.length ? `{${plain.join(',')}}` : null;
}
