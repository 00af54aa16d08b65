/**
 * What the builtins (filters, tests, methods, globals) need from the evaluator, and the sandbox's refused-attribute undefined.
 */
import { BudgetMeter } from '../renderBudget';
import { typeName, Undef } from './values';

/** The sandbox's undefined for a refused attribute: prints as nothing, raises `SecurityError` when used. */
export function unsafeUndef(obj: unknown, name: string): Undef {
  return new Undef(() => `access to attribute '${name}' of '${typeName(obj)}' object is unsafe.`, 'SecurityError');
}

/** What builtins need from the renderer. */
export interface Env {
  /** `obj.name` (jinja2 `Getattr`: attribute first, then item; sandboxed). */
  getattr(obj: unknown, name: string): unknown;
  /** `obj[key]` (jinja2 `Getitem`: item first, then attribute). */
  getitem(obj: unknown, key: unknown): unknown;
  callFilter(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown;
  callTest(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): boolean;
  call(fn: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown;
  /** Python attribute lookup only (`getattr(obj, name)`, no item fallback): the value, {@link UNSAFE}, or undefined when absent. */
  attribute(obj: unknown, name: string): unknown;
  readonly meter: BudgetMeter;
}

export type Builtin = (env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>) => unknown;
