/**
 * Scopes, loop contexts and loop-control signals of the evaluator.
 */
import { pyEq } from './protocols';
import { PyCallable, PyError, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Scopes and loop state

export class Scope {
  readonly vars = new Map<string, unknown>();
  constructor(readonly parent: Scope | null) {}
}

/** jinja2's `LoopContext`: one object per loop, advanced each iteration. */
export class LoopCtx {
  index0 = 0;
  private last: unknown[] | undefined;
  constructor(readonly items: unknown[]) {}

  attr(name: string): unknown {
    const i = this.index0;
    const n = this.items.length;
    switch (name) {
      case 'index':
        return i + 1;
      case 'index0':
        return i;
      case 'revindex':
        return n - i;
      case 'revindex0':
        return n - i - 1;
      case 'first':
        return i === 0;
      case 'last':
        return i === n - 1;
      case 'length':
        return n;
      case 'depth':
        return 1;
      case 'depth0':
        return 0;
      case 'previtem':
        return i > 0 ? this.items[i - 1] : new Undef('there is no previous item');
      case 'nextitem':
        return i < n - 1 ? this.items[i + 1] : new Undef('there is no next item');
      case 'cycle':
        return new PyCallable('loop.cycle', 'method', (args) => {
          if (!args.length) throw new PyError('TypeError', 'no items for cycling given');
          return args[i % args.length];
        });
      case 'changed':
        return new PyCallable('loop.changed', 'method', (args) => {
          const prev = this.last;
          this.last = args;
          return prev === undefined || prev.length !== args.length || prev.some((x, k) => !pyEq(x, args[k]));
        });
    }
    return undefined;
  }

  pyRepr(): string {
    return `<LoopContext ${this.index0 + 1}/${this.items.length}>`;
  }
}

/** Break/continue signals of the `loopcontrols` extension. */
export const enum Control {
  None = 0,
  Break = 1,
  Continue = 2,
}
