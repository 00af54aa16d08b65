/**
 * Reading VS Code's extension host log for configuration access warnings (hostLogCheck.ts). Pure:
 * no `vscode` import, unit-tested in plain node on lines as VS Code 1.100 writes them.
 */

/** A configuration access warning of VS Code's extension host (either direction). */
export const CONFIG_WARNING = /Accessing a (window|resource) scoped configuration/;

/** The configuration warnings of the log lines and which of them are the extension's. */
export interface ConfigWarnings {
  /** Whether the canary's warning is in the log (the log is being written and read). */
  canarySeen: boolean;
  /** The extension's warnings, the canary's one line left out. */
  extension: string[];
  /** The settings those warnings name (`eagle3prep.tokenizerPath`, …). */
  keys: string[];
}

/**
 * Sorts the configuration warnings of `lines`: those logged under `[extensionId]`, less one line
 * naming `canaryKey` (the one read the suite makes on purpose; any other read of it counts).
 */
export function configWarnings(lines: readonly string[], extensionId: string, canaryKey: string): ConfigWarnings {
  const quoted = `'${canaryKey}'`;
  const all = lines.filter((l) => CONFIG_WARNING.test(l));
  const canarySeen = all.some((l) => l.includes(quoted));
  const mine = all.filter((l) => l.includes(`[${extensionId}]`));
  const at = mine.findIndex((l) => l.includes(quoted));
  const extension = at >= 0 ? mine.filter((_, i) => i !== at) : mine;
  return { canarySeen, extension, keys: [...new Set(extension.map((l) => /'([^']+)'/.exec(l)?.[1] ?? l))] };
}
