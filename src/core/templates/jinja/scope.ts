/**
 * Scopes, loop contexts and loop-control signals of the evaluator.
 */
import { bornStamp, journaledFieldSet, journaledMapSet, type Born, type WriteSpy } from './journal';
import { pyEq } from './protocols';
import type { ListView } from './tracedList';
import { norm, PyCallable, PyError, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Scopes and loop state

/** Variables of one block. Only a render's root scope outlives the block that is running (journal.ts): its `born` is 0, every other scope's +Infinity (never journaled). */
export class Scope implements Born {
  readonly vars = new Map<string, unknown>();
  born = Infinity;
  /** The watched loop iteration this scope was made in (statements.ts `loopFrom`: its own scope and those inside it), or null. */
  iter: IterationWatch | null;
  /** Names of this scope set, in a watched iteration, from values that read nothing the next iteration may read otherwise. */
  clean: Set<string> | null = null;
  constructor(readonly parent: Scope | null) {
    this.iter = parent !== null ? parent.iter : null;
  }

  /** Sets a variable (journaled for the root scope of a traced render). */
  set(name: string, value: unknown): void {
    journaledMapSet(this, this.vars, name, value);
  }
}

/**
 * One loop iteration of a header replay, watched (statements.ts `loopFrom`): whether it read a value that the next
 * iteration may read otherwise, or changed state outside its own scopes. An iteration that did neither, wrote no
 * output and counted no loop iteration or macro call of its own is done again alike by every later one.
 */
export class IterationWatch implements WriteSpy {
  /** A read of a per-iteration value (the loop variable, `loop`, a name set from one), or a change of outside state. */
  varying = false;

  wrote(owner: Born): void {
    if (!(owner instanceof Scope) || owner.iter !== this) this.varying = true;
  }

  /**
   * Variable `name` was read, found in scope `s`: a per-iteration value unless `s` lies outside the iteration
   * (unchanged while it runs) or the name was set there from values that are not (`s.clean`).
   */
  read(s: Scope, name: string): void {
    if (s.iter === this && !s.clean?.has(name)) this.varying = true;
  }
}

/** The scope holding variable `name` as seen from `scope`, and its raw value (nothing noted), or undefined. */
export function bindingOf(name: string, scope: Scope): [Scope, unknown] | undefined {
  for (let s: Scope | null = scope; s; s = s.parent) {
    const v = s.vars.get(name);
    if (v !== undefined) return [s, v];
  }
  return undefined;
}

/** The items a loop walks: an array, or a traced list's view (tracedList.ts), read with the observations they make. */
interface LoopItems {
  count(): number;
  has(i: number): boolean;
  at(i: number): unknown;
  isLast(i: number): boolean;
}

function arrayItems(items: unknown[]): LoopItems {
  return { count: () => items.length, has: (i) => i < items.length, at: (i) => items[i], isLast: (i) => i === items.length - 1 };
}

function viewItems(view: ListView): LoopItems {
  return { count: () => view.length(), has: (i) => view.has(i), at: (i) => norm(view.at(i)), isLast: (i) => view.isLast(i) };
}

/** jinja2's `LoopContext`: one object per loop, advanced each iteration. */
export class LoopCtx implements Born {
  index0 = 0;
  last: unknown[] | undefined;
  readonly born = bornStamp();
  private readonly items: LoopItems;
  /** @param items the loop's items: an array, or the view of a traced list (read lazily, each read observed) */
  constructor(items: unknown[] | ListView) {
    this.items = Array.isArray(items) ? arrayItems(items) : viewItems(items);
  }

  /** Whether item `i` exists (for a traced list: observed). */
  hasItem(i: number): boolean {
    return this.items.has(i);
  }

  /** Item `i`, known to exist. */
  item(i: number): unknown {
    return this.items.at(i);
  }

  /** How many items follow item `i` (for a traced list: observed as its length is). */
  itemsAfter(i: number): number {
    return Math.max(0, this.items.count() - i - 1);
  }

  attr(name: string): unknown {
    const i = this.index0;
    switch (name) {
      case 'index':
        return i + 1;
      case 'index0':
        return i;
      case 'revindex':
        return this.items.count() - i;
      case 'revindex0':
        return this.items.count() - i - 1;
      case 'first':
        return i === 0;
      case 'last':
        return this.items.isLast(i);
      case 'length':
        return this.items.count();
      case 'depth':
        return 1;
      case 'depth0':
        return 0;
      case 'previtem':
        return i > 0 ? this.items.at(i - 1) : new Undef('there is no previous item');
      case 'nextitem':
        return this.items.has(i + 1) ? this.items.at(i + 1) : new Undef('there is no next item');
      case 'cycle':
        return new PyCallable('loop.cycle', 'method', (args) => {
          if (!args.length) throw new PyError('TypeError', 'no items for cycling given');
          return args[i % args.length];
        });
      case 'changed':
        return new PyCallable('loop.changed', 'method', (args) => {
          const prev = this.last;
          journaledFieldSet(this, 'last', args as unknown[] | undefined);
          return prev === undefined || prev.length !== args.length || prev.some((x, k) => !pyEq(x, args[k]));
        });
    }
    return undefined;
  }

  pyRepr(): string {
    return `<LoopContext ${this.index0 + 1}/${this.items.count()}>`;
  }
}

/** Break/continue signals of the `loopcontrols` extension. */
export const enum Control {
  None = 0,
  Break = 1,
  Continue = 2,
  /** A header replay reached the loop it stops at (TraceHooks.beginLoop): every block of the top-level chain returns. */
  Stop = 3,
}
