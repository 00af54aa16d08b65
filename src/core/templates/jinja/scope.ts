/**
 * Scopes, loop contexts and loop-control signals of the evaluator.
 */
import { bornStamp, journaledFieldSet, journaledMapSet, type Born } from './journal';
import { pyEq } from './protocols';
import type { ListView } from './tracedList';
import { norm, PyCallable, PyError, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Scopes and loop state

/** Variables of one block. Only a render's root scope outlives the block that is running (journal.ts): its `born` is 0, every other scope's +Infinity (never journaled). */
export class Scope implements Born {
  readonly vars = new Map<string, unknown>();
  born = Infinity;
  constructor(readonly parent: Scope | null) {}

  /** Sets a variable (journaled for the root scope of a traced render). */
  set(name: string, value: unknown): void {
    journaledMapSet(this, this.vars, name, value);
  }
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
