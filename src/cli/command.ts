/**
 * What every CLI command shares: options declared once with their help text
 * and default (commander), value parsers that name the option at fault, usage
 * errors (exit 2), and writing to stdout without crashing on a closed pipe.
 *
 * Adding an option to a command is one entry in that command's option table
 * ({@link OptionSpec}): its flags, help, default, parser and where its value goes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { describeError } from '../core/errors';

/** Exit codes of every command (docs/cli.md). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * One command-line option: declared, documented and applied in one place.
 * @typeParam T the object the option's value is applied to (e.g. `PrepareOptions`)
 */
export interface OptionSpec<T = unknown> {
  /** Commander flags: `--max-length <n>`, `--truncate`. */
  flags: string;
  /** What the option does, for `--help` (a sentence or two). */
  help: string;
  /** Help section heading (e.g. `Records:`); default: the command's `Options:`. */
  group?: string;
  /** The value when the option is not given. */
  default?: string | number | boolean | string[];
  /** Shown as `(default: …)` instead of the value, or when the default is not a value (`the embedded Qwen3 tokenizer`). */
  defaultText?: string;
  /** Allowed values; anything else is a usage error naming them. */
  choices?: readonly string[];
  /** Turns the text into the value; throw {@link InvalidArgumentError} (see the parsers below) to reject it. */
  parse?: (value: string, previous: unknown) => unknown;
  /** Puts the option's value (when given or defaulted) where the command reads it. */
  apply?: (target: T, value: never) => void;
  /** Hidden from `--help` (test and debugging switches). */
  hidden?: boolean;
}

/** The commander option key of flags (`--max-length <n>` → `maxLength`, `--no-color` → `color`). */
export function optionKey(flags: string): string {
  const long = /--([a-z0-9-]+)/i.exec(flags)![1].replace(/^no-/, '');
  return long.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Declares the options of a table on a command, with their help, defaults, choices and parsers. */
export function addOptions(cmd: Command, specs: readonly OptionSpec<never>[]): Command {
  for (const s of specs) {
    const o = new Option(s.flags, s.help);
    if (s.choices) o.choices(s.choices);
    if (s.parse) o.argParser(s.parse);
    if (s.default !== undefined) o.default(s.default, s.defaultText ?? String(s.default));
    else if (s.defaultText !== undefined) o.description += ` (default: ${s.defaultText})`;
    if (s.group) o.helpGroup(s.group);
    if (s.hidden) o.hideHelp();
    cmd.addOption(o);
  }
  return cmd;
}

/** Applies every option of a table whose value is set (given or defaulted) to `target`. */
export function applyOptions<T>(target: T, specs: readonly OptionSpec<T>[], values: Record<string, unknown>): T {
  for (const s of specs) {
    const v = values[optionKey(s.flags)];
    if (v !== undefined && s.apply) s.apply(target, v as never);
  }
  return target;
}

/**
 * Ends a command with a usage error: `error: <message>`, the command's usage
 * line and where to find every option, on stderr; exit code 2.
 */
export function usageError(cmd: Command, message: string): never {
  cmd.error(`error: ${message}`, { exitCode: EXIT.usage, code: 'eagle3.usage' });
}

/** After a usage error of `cmd`: its usage line and a pointer to its `--help` (not the whole help). */
export function setUsageHint(cmd: Command): Command {
  const path = commandPath(cmd);
  return cmd.showHelpAfterError(`Usage: ${path} ${cmd.usage()}\nRun "${path} --help" to see every option.`);
}

/** `eagle3-prep prepare` for the prepare command. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

// Value parsers: each names what it expected; commander adds the option and the value given.

/** A whole number ≥ 1. */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('A whole number ≥ 1 is expected.');
  return n;
}

/** A parser of whole numbers from `min` (default 0) to `max` (default none): {@link positiveInt} for 1 and up. */
export function wholeNumberIn(min = 0, max?: number): (v: string) => number {
  if (min === 1 && max === undefined) return positiveInt;
  const expected = max === undefined ? `A whole number ≥ ${min} is expected.` : `A whole number from ${min} to ${max} is expected.`;
  return (v) => {
    const n = Number(v);
    if (!/^\s*-?\d+\s*$/.test(v) || !Number.isInteger(n) || n < min || (max !== undefined && n > max)) throw new InvalidArgumentError(expected);
    return n;
  };
}

/** A parser of numbers from `min` to `max`: {@link fraction} (`0.05` or `5%`) for 0 to 1. */
export function numberIn(min?: number, max?: number): (v: string) => number {
  if (min === 0 && max === 1) return fraction;
  const expected = `A number${min !== undefined ? ` ≥ ${min}` : ''}${max !== undefined ? `${min !== undefined ? ' and' : ''} ≤ ${max}` : ''} is expected.`;
  return (v) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || (min !== undefined && n < min) || (max !== undefined && n > max)) throw new InvalidArgumentError(expected);
    return n;
  };
}

/** `--workers`: a whole number ≥ 1, or `auto` (the run's default: the free cores, `run/inputs/inputs.ts` defaultWorkerCount). */
export function workerCount(v: string): number | 'auto' {
  if (v.trim() === 'auto') return 'auto';
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('A whole number ≥ 1, or auto, is expected.');
  return n;
}

/** A whole number ≥ 0. */
export function nonNegativeInt(v: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(n)) throw new InvalidArgumentError('A whole number ≥ 0 is expected.');
  return n;
}

/** A number ≥ 0. */
export function nonNegativeNumber(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('A number ≥ 0 is expected.');
  return n;
}

/** A number > 0. */
export function positiveNumber(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('A number > 0 is expected.');
  return n;
}

/** A fraction in [0, 1] (`0.05`) or a percentage (`5%`). */
export function fraction(v: string): number {
  const m = /^\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$/.exec(v);
  // A percentage moves the decimal point in the text (`2.24%` → `2.24e-2`, exactly 0.0224), not by a division (2.24 / 100 = 0.022400000000000003).
  const n = m ? Number(m[2] ? `${m[1]}e-2` : m[1]) : NaN;
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('A fraction from 0 to 1 (0.05) or a percentage (5%) is expected.');
  return n;
}

/** A JSON object (`{"enable_thinking": false}`). */
export function jsonObject(v: string): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(v);
  } catch (e) {
    throw new InvalidArgumentError(`It is not valid JSON (${(e as Error).message}).`);
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new InvalidArgumentError('A JSON object is expected, e.g. \'{"enable_thinking": false}\'.');
  return o as Record<string, unknown>;
}

/** `I/N` with 0 ≤ I < N → `{index, count}` (a shard of a job array). */
export function shardSpec(v: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) throw new InvalidArgumentError('I/N with 0 <= I < N is expected, e.g. 0/4.');
  return { index, count };
}

/** Comma-separated values, accumulated over repeats of the option (`--server a,b --server c`). */
export function commaList(v: string, previous: unknown): string[] {
  const prev = Array.isArray(previous) ? (previous as string[]) : [];
  return [
    ...prev,
    ...v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
}

/** This package's version (`package.json` beside `dist/` or `src/`). */
export function packageVersion(): string {
  for (let dir = __dirname, i = 0; i < 4; i++, dir = dirname(dir)) {
    const p = join(dir, 'package.json');
    if (!existsSync(p)) continue;
    try {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'eagle3-prep' && pkg.version) return pkg.version;
    } catch {
      /* another package.json */
    }
  }
  return 'unknown';
}

/**
 * Writes to stdout; a closed pipe (`eagle3-prep … | head`) ends the output
 * quietly instead of crashing with EPIPE.
 */
export function out(text: string): void {
  if (stdoutClosed) return;
  process.stdout.write(text);
}
let stdoutClosed = false;
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') stdoutClosed = true;
  else throw e;
});

/** Writes one line to stderr. */
export function err(line: string): void {
  process.stderr.write(line + '\n');
}

/** The first line of an error's message (no stack trace), for a one-line failure. */
export function oneLine(e: unknown): string {
  // describeError never throws, whatever was thrown: reporting an error must not raise another. A JavaScript
  // runtime error (a bug) is named as one, with where in the code, never printed as its bare message.
  return describeError(e).split('\n')[0];
}

/** A JSON document for stdout: 2-space indented, newline-terminated. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export { Command, InvalidArgumentError };
