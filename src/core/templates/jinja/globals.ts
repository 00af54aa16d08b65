/**
 * The template globals: jinja2's defaults (`range`, `dict`, `namespace`, `cycler`, `joiner`, `lipsum`) plus transformers'
 * `raise_exception` and `strftime_now`.
 */
import { asIndex, bind } from './args';
import { Env } from './env';
import { bornStamp, journaledFieldSet, type Born } from './journal';
import { isIterable, toList } from './protocols';
import { pyStr } from './repr';
import { dictEntries, isDict, isStr, makeDict, Namespace, norm, PyCallable, PyError, PyFloat, PyRange, strOf, typeName } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Globals

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** What a `strftime` directive reads: the date, the directive's flag, and helpers that write as the flag asks. */
interface StrftimeField {
  d: Date;
  /** glibc's flag: `-` no padding, `_` space padding, `0` zero padding, `^` upper case, `#` (read, ignored). */
  flag: string;
  /** 1-based day of the year. */
  dayOfYear: number;
  /** Minutes east of UTC. */
  tz: number;
  /** A number padded to `w` digits as the flag asks. */
  num(n: number, w: number): string;
  /** A name, upper-cased under `^`. */
  up(s: string): string;
  /** Week of the year, weeks starting on `firstDay` (0 Sunday, 1 Monday); days before the first such day are week 0. */
  weekNo(firstDay: number): number;
}

const p2 = (n: number) => String(n).padStart(2, '0');

/** Each `strftime` directive as glibc writes it in the C locale (a directive not listed is written as it stands). */
const STRFTIME: Record<string, (f: StrftimeField) => string> = {
  a: ({ d, up }) => up(DAYS[d.getDay()].slice(0, 3)),
  A: ({ d, up }) => up(DAYS[d.getDay()]),
  b: ({ d, up }) => up(MONTHS[d.getMonth()].slice(0, 3)),
  h: ({ d, up }) => up(MONTHS[d.getMonth()].slice(0, 3)),
  B: ({ d, up }) => up(MONTHS[d.getMonth()]),
  d: ({ d, num }) => num(d.getDate(), 2),
  e: ({ d, flag }) => (flag === '-' ? String(d.getDate()) : String(d.getDate()).padStart(2, ' ')),
  H: ({ d, num }) => num(d.getHours(), 2),
  I: ({ d, num }) => num(d.getHours() % 12 || 12, 2),
  j: ({ dayOfYear, num }) => num(dayOfYear, 3),
  m: ({ d, num }) => num(d.getMonth() + 1, 2),
  M: ({ d, num }) => num(d.getMinutes(), 2),
  p: ({ d }) => (d.getHours() < 12 ? 'AM' : 'PM'),
  S: ({ d, num }) => num(d.getSeconds(), 2),
  f: ({ d }) => String(d.getMilliseconds() * 1000).padStart(6, '0'),
  y: ({ d, num }) => num(d.getFullYear() % 100, 2),
  Y: ({ d }) => String(d.getFullYear()),
  w: ({ d }) => String(d.getDay()),
  u: ({ d }) => String(d.getDay() || 7),
  U: ({ num, weekNo }) => num(weekNo(0), 2),
  W: ({ num, weekNo }) => num(weekNo(1), 2),
  z: ({ tz }) => `${tz < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(tz) / 60))}${p2(Math.abs(tz) % 60)}`,
  Z: () => '',
  D: ({ d }) => `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${p2(d.getFullYear() % 100)}`,
  F: ({ d }) => `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`,
  T: ({ d }) => `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`,
  R: ({ d }) => `${p2(d.getHours())}:${p2(d.getMinutes())}`,
  c: ({ d }) =>
    `${DAYS[d.getDay()].slice(0, 3)} ${MONTHS[d.getMonth()].slice(0, 3)} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`,
  x: ({ d }) => `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${p2(d.getFullYear() % 100)}`,
  X: ({ d }) => `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`,
  n: () => '\n',
  t: () => '\t',
  '%': () => '%',
};

/**
 * C-locale `strftime` as Python's `datetime.strftime` writes it on Linux (glibc), local time: the directives of
 * `STRFTIME` and glibc's `-` (no padding) flag.
 */
export function pyStrftime(d: Date, fmt: string): string {
  const dayOfYear = Math.round((Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) - Date.UTC(d.getFullYear(), 0, 1)) / 86400000) + 1;
  const weekNo = (firstDay: number) => {
    const wdJan1 = new Date(d.getFullYear(), 0, 1).getDay();
    const offset = (7 + firstDay - wdJan1) % 7; // days until the first `firstDay`
    return dayOfYear - 1 < offset ? 0 : Math.floor((dayOfYear - 1 - offset) / 7) + 1;
  };
  const tz = -d.getTimezoneOffset();
  return fmt.replace(/%([-_0^#]?)([a-zA-Z%])/g, (m, flag: string, c: string) => {
    const num = (n: number, w: number) => (flag === '-' ? String(n) : flag === '_' ? String(n).padStart(w, ' ') : String(n).padStart(w, '0'));
    const up = (s: string) => (flag === '^' ? s.toUpperCase() : s);
    const write = Object.hasOwn(STRFTIME, c) ? STRFTIME[c] : undefined;
    return write ? write({ d, flag, dayOfYear, tz, num, up, weekNo }) : m;
  });
}

/** Builds the `dict(...)` / `namespace(...)` contents: a mapping or iterable of pairs, then keywords. */
function dictArgs(fname: string, args: unknown[], kwargs: Map<string, unknown>): [unknown, unknown][] {
  if (args.length > 1) throw new PyError('TypeError', `${fname} expected at most 1 argument, got ${args.length}`);
  const out: [unknown, unknown][] = [];
  if (args.length === 1) {
    const src = norm(args[0]);
    if (isDict(src)) out.push(...dictEntries(src));
    else {
      toList(src).forEach((pair, i) => {
        const kv = isIterable(pair) ? toList(pair) : null;
        if (!kv) throw new PyError('TypeError', `cannot convert dictionary update sequence element #${i} to a sequence`);
        if (kv.length !== 2) throw new PyError('ValueError', `dictionary update sequence element #${i} has length ${kv.length}; 2 is required`);
        out.push([kv[0], kv[1]]);
      });
    }
  }
  out.push(...kwargs);
  return out;
}

/** jinja2's `cycler`. */
export class Cycler implements Born {
  pos = 0;
  readonly born = bornStamp();
  constructor(readonly items: unknown[]) {
    if (!items.length) throw new PyError('RuntimeError', 'at least one item has to be provided');
  }
  get current(): unknown {
    return this.items[this.pos];
  }
  next(): unknown {
    const v = this.current;
    journaledFieldSet(this, 'pos', (this.pos + 1) % this.items.length);
    return v;
  }
  reset(): void {
    journaledFieldSet(this, 'pos', 0);
  }
}

/** The template globals: jinja2's defaults plus transformers' `raise_exception` and `strftime_now`. */
export function makeGlobals(env: Env, now: () => Date): Map<string, unknown> {
  const g = new Map<string, unknown>();
  g.set(
    'range',
    new PyCallable('range', 'builtin', (args, kwargs) => {
      if (kwargs.size) throw new PyError('TypeError', 'range() takes no keyword arguments');
      if (args.length < 1 || args.length > 3) throw new PyError('TypeError', `range expected at least 1 argument, got ${args.length}`);
      const n = args.map((x) => {
        x = norm(x);
        if (x instanceof PyFloat) throw new PyError('TypeError', "'float' object cannot be interpreted as an integer");
        return asIndex(x, '');
      });
      const [start, stop, step] = n.length === 1 ? [0, n[0], 1] : [n[0], n[1], n[2] ?? 1];
      if (step === 0) throw new PyError('ValueError', 'range() arg 3 must not be zero');
      const r = new PyRange(start, stop, step);
      env.meter.range(r.length);
      if (r.length > 100_000) throw new PyError('OverflowError', 'Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).');
      return r;
    }),
  );
  g.set('dict', new PyCallable('dict', 'builtin', (args, kwargs) => makeDict(dictArgs('dict', args, kwargs))));
  g.set(
    'namespace',
    new PyCallable('namespace', 'builtin', (args, kwargs) => new Namespace(new Map(dictArgs('namespace', args, kwargs).map(([k, v]) => [pyStr(k), v])))),
  );
  g.set('cycler', new PyCallable('cycler', 'builtin', (args) => new Cycler(args)));
  g.set(
    'joiner',
    new PyCallable('joiner', 'builtin', (args, kwargs) => {
      const [sep] = bind('joiner', args, kwargs, ['sep'], { sep: ', ' });
      const state = { used: false, born: bornStamp() };
      return new PyCallable('joiner', 'builtin', () => {
        if (!state.used) {
          journaledFieldSet(state, 'used', true);
          return '';
        }
        return sep;
      });
    }),
  );
  g.set(
    'lipsum',
    new PyCallable('lipsum', 'builtin', () => {
      throw new PyError('Unsupported', 'lipsum() is random; the renderer cannot reproduce it');
    }),
  );
  g.set(
    'raise_exception',
    new PyCallable('raise_exception', 'builtin', (args, kwargs) => {
      const [message] = bind('raise_exception', args, kwargs, ['message']);
      throw new PyError('TemplateError', pyStr(message));
    }),
  );
  g.set(
    'strftime_now',
    new PyCallable('strftime_now', 'builtin', (args, kwargs) => {
      const [f] = bind('strftime_now', args, kwargs, ['format']);
      if (!isStr(f)) throw new PyError('TypeError', `strftime() argument 1 must be str, not ${typeName(f)}`);
      return pyStrftime(now(), strOf(f));
    }),
  );
  return g;
}
