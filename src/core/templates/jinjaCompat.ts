/**
 * The chat-template engine: `@huggingface/jinja`'s lexer and parser, and an evaluator with Python jinja2's
 * semantics, configured as `transformers`' `render_jinja_template` configures jinja2 (3.1): an
 * `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)` with the `loopcontrols` extension,
 * `tojson` as `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`,
 * `raise_exception` and `strftime_now`.
 *
 * Why an evaluator of our own over the library's AST, and not a patch of its runtime: the library evaluates with
 * JavaScript semantics at its core — one string-keyed map for every dict, arrays for lists and tuples alike,
 * `undefined` that swallows attribute access, eager arrays where Python has one-pass generators, no Markup — so
 * the gaps below are not local bugs but one value model; patching them site by site would be a fork of its
 * 2,200-line runtime kept as a diff. Its lexer and parser (the Jinja grammar, `{%-`/`-%}` whitespace control,
 * `trim_blocks`/`lstrip_blocks`) are sound and are used as they are, through its public `tokenize` and `parse`.
 * Since this module reads the library's AST node shapes, `@huggingface/jinja` is pinned to an exact version.
 *
 * The render is exact or it raises: where Python's output would hold a memory address (printing a generator or
 * a bound method) no render can equal it, and the renderer raises instead of guessing.
 *
 * | gap (raw `@huggingface/jinja` 0.5.11) | Python jinja2 (3.1.6, as transformers configures it) | how it is closed | test (jinjaCompat.test.ts; cases in test/fixtures/jinja/cases.json) |
 * | --- | --- | --- | --- |
 * | `strip`/`lstrip`/`rstrip` ignore their argument | `"xxhixx".strip("x")` is `hi`; no argument strips Python's whitespace (U+001C–U+001F and U+0085 yes, U+FEFF and U+200B no); str methods other than `split`/`splitlines`/`expandtabs`/`format` refuse keywords | `pyStrip`, `STR_METHODS` | `strip family takes characters` |
 * | `none\|selectattr(...)` raises | `select`/`reject`/`selectattr`/`rejectattr`/`map` of a false value (None, undefined) yield nothing; `length`/`list`/`join`/`first`/`sort` of None raise `TypeError`, `last` too, `dictsort` raises `AttributeError`; of undefined: 0, `[]`, `""` | lazy generators guarded by truth, `pyIter`/`pyLen` | `none and undefined piped into filters` |
 * | generators are arrays | `\|selectattr`, `\|map`, `\|reverse`, `\|items`, `\|unique`, `\|batch`, `\|slice` are one-pass iterators: always true, no `length`, not reversible, printed as an address | {@link PyIter} (printing raises: unreproducible) | `filter results are one-pass generators` |
 * | `\|safe` strings concatenate as plain strings | `Markup + str` escapes the str (`&lt;`); `%`, `.replace` and other methods escape their arguments; `~` and `\|join` do not | {@link Markup} | `safe strings concatenate as Markup` |
 * | integer dict keys raise | `{0: 'a'}[0]` is `a`; `1`, `1.0`, `True` are one key; `\|dictsort` sorts them as numbers; tojson writes `"0"` | {@link PyDict} | `integer dict keys` |
 * | tuples unpack only from arrays (`TupleValue` fails); `(1,)` and `()` do not parse | `for k, v in d.items()`, `set a, b = 1, 2`, nested `(a, b), c`, strings; a wrong count raises `ValueError`; tuples print as `(1,)` | `assign`, {@link PyTuple}, jinjaSyntax `rewriteTuples` | `tuple unpacking in for and set` |
 * | `undefined\|length` raises; undefined swallows attribute access | `0`; `undefined.x`, `undefined[0]`, `undefined + 1`, `undefined < 1`, `undefined()` raise `UndefinedError` (NVIDIA Nemotron's template relies on `[][-1]['role']` raising); `undefined ~ 'x'` is `x` | {@link Undef} | `undefined values` |
 * | `\|string` and `{{ }}` print JSON | Python `str()`: `{'a': 1}`, `['x']`, `None`, `True`, `(1,)`, `1.0`, `range(0, 3)`, `dict_keys([...])`, `<Namespace {...}>`, `<Macro 'm'>` | `pyStr`/`pyRepr` | `string forms are Python's` |
 * | `fromjson` and other unknown filters | not filters of transformers' environment: a compile error outside `if`/conditional expressions, a run-time error inside them when reached | `checkNames` | `unknown filters fail like jinja2` |
 * | `list.append` and other mutators work | the immutable sandbox raises `SecurityError` (`append`, `extend`, `pop`, `update`, `setdefault`, …; dunder attributes); `get`, `items`, `keys`, `values`, `copy`, `index`, `count` work; only namespaces take `{% set a.b = … %}` | `builtinAttribute` | `sandbox refuses mutation` |
 * | str methods | `startswith`/`endswith` take tuples (a list raises); `split`/`rsplit` maxsplit; `replace` count; `title`, `capitalize`, `count`, `find`, `index` in code points | `STR_METHODS` | `string methods` |
 * | `%` and `.format` | printf and the format mini-language; floats rounded half-even on the exact value | `pyFormat.ts` | `string formatting` |
 * | `in` | substring, dict key, list member; `1 in 'a'` and `x in none` raise | `pyContains` | `membership` |
 * | loops | `loop.previtem`/`nextitem`/`cycle`/`changed`/`depth`; each iteration starts from the enclosing scope (a `set` in iteration 1 is gone in iteration 2 and after the loop); `else`; `break`/`continue` | `forStmt` | `loop semantics and scoping` |
 * | macros | defaults (may use earlier parameters), `varargs`, `kwargs`, `caller`; names resolve where the macro is defined, at call time (the library resolved them where it was called) | `makeMacro` | `macros` |
 * | `tojson` | `indent` (0 breaks lines; a string indents by it), `ensure_ascii`, `separators`, `sort_keys`, key order kept, floats as Python writes them, `TypeError` for undefined, ranges, generators | `pyJsonDumps` | `tojson options` |
 * | `\|items`, `\|dictsort`, `\|unique`, `\|join` on dicts, `\|int`/`\|float` on strings, `\|round`, `\|indent`, `\|title`, `\|groupby`, … | as jinja2 3.1's `filters.py` | `FILTERS` | `filters` |
 * | `is string/mapping/iterable/sequence/number`; tests with an argument do not parse | dicts are sequences; bools are numbers; undefined is iterable; `x is sameas true`, `x is divisibleby 3`, `x is in [..]` | `TESTS`, jinjaSyntax `rewriteTests` | `tests` |
 * | numbers | `3/2` is `1.5`, `4/2` is `2.0`, `//` and `%` floor, `2**-1` is `0.5`, `1 // 0` raises | `pyDiv`, `pyFloorDiv`, … | `arithmetic and number text` |
 * | slicing | negative steps, code points, ranges slice to ranges; `None[1:]` and `{}[1:]` raise `TypeError` (a slice bypasses the sandbox's `getitem`) | `Renderer.slice`, `pySlice` | `slicing` |
 * | `raise_exception`, `strftime_now`, `range`, `dict`, `namespace`, `cycler`, `joiner` | `TemplateError` with the message; C-locale `strftime` (`%-d` too); `range` over 100,000 raises (sandbox) | `makeGlobals` | `globals` |
 * | `~` has the precedence of `+` | `a + b ~ c` is `a + (b ~ c)`: `'a' + 1 ~ 'b'` is `a1b`, `1 + 2 ~ 'a'` raises `TypeError` | jinjaSyntax `rewriteConcat` | `literals and syntax` |
 * | literals | Python string escapes (`\` + newline, `\a`, octal, `\U…`, unknown ones kept); `1e3`, `1_000`, `0x1F`; `007` refused | jinjaSyntax `rewriteLiterals` | `literals and syntax` |
 * | line endings | jinja2 reads `\r\n` and `\r` in the template as `\n` | `CompiledTemplate` | `template line endings` |
 *
 * Known differences left (none silent where it matters: each raises, or cannot occur in a working chat template):
 * - Integers beyond 2^53 raise `OverflowError` instead of computing; complex numbers raise `Unsupported`.
 * - Filters `random`, `urlize`, `wordwrap`, `xmlattr`, `lipsum()`, a `pprint` longer than a line raise `Unsupported`.
 * - `{% raw %}`, `{% for … recursive %}`, `{%+`/`+%}`, `\N{...}` escapes do not compile here.
 * - The library parses `a < b < c` as `(a < b) < c` (jinja2: `a < b and b < c`).
 * - jinja2 folds constant expressions when it compiles, through the sandbox's lenient `getitem`: a literal
 *   slice of a literal that cannot be sliced (`none[1:]`) prints nothing there and raises here.
 * - `tools`, `messages` and other data come from JSON parsed by JS: an integral float (`1.0`) arrives as `1`
 *   and object keys that look like integers come first (JS object order); both are decided before rendering.
 */
import { parse, tokenize } from '@huggingface/jinja';
import { TemplateBudgetError, TemplateRenderError } from './errors';
import {
  builtinAttribute,
  Cycler,
  FILTERS,
  makeGlobals,
  pyAdd,
  pyContains,
  pyDiv,
  pyFloorDiv,
  pyMod,
  pyMul,
  pyPow,
  pySlice,
  pySub,
  sliceIndices,
  TESTS,
  UNSAFE,
  unsafeUndef,
  type Env,
} from './jinjaBuiltins';
import { NOT_TEST_PREFIX, rewriteConcat, rewriteLiterals, rewriteTests, rewriteTuples, TEST_PREFIX, TUPLE_END } from './jinjaSyntax';
import { BudgetMeter, DEFAULT_RENDER_BUDGET, type RenderBudget } from './renderBudget';
import {
  codePoints,
  dictEntries,
  dictGet,
  isDict,
  isIterable,
  isStr,
  makeDict,
  Markup,
  Namespace,
  norm,
  numValue,
  PyCallable,
  PyError,
  PyFloat,
  pyCompare,
  pyEq,
  pyInt,
  PyRange,
  pyStr,
  PyTuple,
  strOf,
  toList,
  truthy,
  typeName,
  Undef,
  undefinedMessage,
} from './pyValues';

// ---------------------------------------------------------------------------------------------------------------
// The library's AST, structurally (its node classes are not exported; `type` names the node).

interface Tok {
  value: string;
}
/* eslint-disable @typescript-eslint/no-explicit-any -- AST nodes are read structurally by their `type` */
type N = { type: string } & Record<string, any>;

// ---------------------------------------------------------------------------------------------------------------
// Scopes and loop state

class Scope {
  readonly vars = new Map<string, unknown>();
  constructor(readonly parent: Scope | null) {}
}

/** jinja2's `LoopContext`: one object per loop, advanced each iteration. */
class LoopCtx {
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
const enum Control {
  None = 0,
  Break = 1,
  Continue = 2,
}

// ---------------------------------------------------------------------------------------------------------------
// Compilation

/** Names that macro argument binding treats specially when the body reads them. */
interface MacroRefs {
  varargs: boolean;
  kwargs: boolean;
  caller: boolean;
}

function findRefs(body: N[]): MacroRefs {
  const refs: MacroRefs = { varargs: false, kwargs: false, caller: false };
  const seen = new Set<unknown>();
  const visit = (x: unknown): void => {
    if (!x || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) return x.forEach(visit);
    if (x instanceof Map) {
      for (const [k, v] of x) {
        visit(k);
        visit(v);
      }
      return;
    }
    const n = x as N;
    if (n.type === 'Identifier' && (n.value === 'varargs' || n.value === 'kwargs' || n.value === 'caller')) refs[n.value as keyof MacroRefs] = true;
    for (const v of Object.values(n)) visit(v);
  };
  visit(body);
  return refs;
}

/**
 * jinja2 resolves filters and tests when it compiles: an unknown one is a compile error, except inside an `if`
 * or a conditional expression (a "soft" frame), where it raises only when reached.
 */
function checkNames(node: unknown, soft: boolean): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) checkNames(x, soft);
    return;
  }
  if (node instanceof Map) {
    for (const [k, v] of node) {
      checkNames(k, soft);
      checkNames(v, soft);
    }
    return;
  }
  const n = node as N;
  switch (n.type) {
    case 'If':
    case 'Ternary':
    case 'SelectExpression':
      for (const v of Object.values(n)) checkNames(v, true);
      return;
    case 'For':
      if (n.iterable.type === 'SelectExpression') {
        checkNames(n.iterable.lhs, soft);
        checkNames(n.iterable.test, false);
      } else checkNames(n.iterable, soft);
      checkNames(n.body, false);
      checkNames(n.defaultBlock, false);
      return;
    case 'Macro':
      checkNames(n.args, false);
      checkNames(n.body, false);
      return;
    case 'CallStatement':
      checkNames(n.call, soft);
      checkNames(n.callerArgs, false);
      checkNames(n.body, false);
      return;
    case 'Set':
      checkNames(n.assignee, soft);
      checkNames(n.value, soft);
      checkNames(n.body, false);
      return;
    case 'FilterStatement':
      checkFilter(n.filter, false);
      checkNames(n.body, false);
      return;
    case 'FilterExpression':
      checkFilter(n.filter, soft);
      checkNames(n.operand, soft);
      return;
    case 'TestExpression':
      if (!soft && !Object.hasOwn(TESTS, n.test.value)) throw new PyError('TemplateAssertionError', `No test named '${n.test.value}'.`);
      checkNames(n.operand, soft);
      return;
  }
  for (const v of Object.values(n)) checkNames(v, soft);
}

function checkFilter(f: N, soft: boolean): void {
  const name: string = f.type === 'Identifier' ? f.value : f.callee.value;
  const test = testOf(name);
  if (test) {
    if (!soft && !Object.hasOwn(TESTS, test.name)) throw new PyError('TemplateAssertionError', `No test named '${test.name}'.`);
  } else if (!soft && !Object.hasOwn(FILTERS, name)) throw new PyError('TemplateAssertionError', `No filter named '${name}'.`);
  if (f.type === 'CallExpression') checkNames(f.args, soft);
}

/** The test a rewritten filter name stands for (jinjaSyntax `rewriteTests`), or null for a real filter. */
function testOf(name: string): { name: string; negate: boolean } | null {
  if (name.startsWith(NOT_TEST_PREFIX)) return { name: name.slice(NOT_TEST_PREFIX.length), negate: true };
  if (name.startsWith(TEST_PREFIX)) return { name: name.slice(TEST_PREFIX.length), negate: false };
  return null;
}

/** Options of one render. */
export interface RenderEnvOptions {
  budget?: Partial<RenderBudget>;
  /** The clock `strftime_now` reads (default: now). */
  now?: () => Date;
}

/** A compiled chat template. */
export class CompiledTemplate {
  private readonly body: N[];
  private readonly macroRefs = new WeakMap<object, MacroRefs>();

  /**
   * Compiles template source as jinja2 would: line endings `\r\n` and `\r` read as `\n` (jinja2's lexer
   * normalizes them), `trim_blocks` and `lstrip_blocks` on, unknown filters and tests outside `if` refused.
   * @throws TemplateRenderError when the template does not compile (the message names the problem)
   */
  constructor(readonly source: string) {
    let program: N;
    try {
      const src = rewriteLiterals(source.replace(/\r\n?/g, '\n'));
      const tokens = rewriteConcat(rewriteTuples(rewriteTests(tokenize(src, { lstrip_blocks: true, trim_blocks: true }))));
      program = parse(tokens as Parameters<typeof parse>[0]) as unknown as N;
      checkNames(program.body, false);
    } catch (e) {
      throw new TemplateRenderError((e as Error).message, e instanceof PyError ? e.pyType : 'TemplateSyntaxError');
    }
    this.body = program.body;
  }

  /**
   * Renders with `vars` as the template's variables (plain JS data: objects are dicts, arrays lists, non-integer
   * numbers floats).
   * @returns the rendered text
   * @throws TemplateBudgetError when the render runs past its budget
   * @throws TemplateRenderError when the template raises; `pythonType` is the Python exception jinja2 raises
   *   (`raise_exception` gives `TemplateError` with the template's message as the whole message)
   */
  render(vars: Record<string, unknown>, opts: RenderEnvOptions = {}): string {
    const budget = { ...DEFAULT_RENDER_BUDGET, ...opts.budget };
    const r = new Renderer(new BudgetMeter(budget), opts.now ?? (() => new Date()), this.macroRefs);
    const root = new Scope(r.globals);
    for (const [k, v] of Object.entries(vars)) if (v !== undefined) root.vars.set(k, v);
    try {
      const out = r.block(this.body, root);
      r.meter.length(out.length);
      return out;
    } catch (e) {
      if (e instanceof TemplateRenderError) throw e;
      if (e instanceof PyError) throw new TemplateRenderError(e.pyType === 'TemplateError' ? e.message : `${e.pyType}: ${e.message}`, e.pyType);
      if (e instanceof RangeError && /call stack/i.test(e.message))
        throw new TemplateBudgetError('callDepth', 'nesting deeper than the JavaScript stack allows');
      throw new TemplateRenderError(`internal renderer error: ${(e as Error).message}`, 'InternalError');
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

class Renderer implements Env {
  control: Control = Control.None;
  readonly globals: Scope;

  constructor(
    readonly meter: BudgetMeter,
    now: () => Date,
    private readonly macroRefs: WeakMap<object, MacroRefs>,
  ) {
    this.globals = new Scope(null);
    for (const [k, v] of makeGlobals(this, now)) this.globals.vars.set(k, v);
  }

  /** Renders statements; stops early when a `break`/`continue` is pending. */
  block(nodes: N[], scope: Scope): string {
    let out = '';
    for (const n of nodes) {
      out += this.stmt(n, scope);
      if (out.length > 65536) this.meter.length(out.length);
      if (this.control !== Control.None) break;
    }
    return out;
  }

  private stmt(n: N, scope: Scope): string {
    switch (n.type) {
      case 'StringLiteral':
        return n.value;
      case 'Comment':
        return '';
      case 'If':
        return this.block(truthy(this.expr(n.test, scope)) ? n.body : n.alternate, scope);
      case 'For':
        return this.forStmt(n, scope);
      case 'Set': {
        const value = n.value ? this.expr(n.value, scope) : this.block(n.body, new Scope(scope));
        this.assign(n.assignee, value, scope, true);
        return '';
      }
      case 'Macro':
        scope.vars.set(n.name.value, this.makeMacro(n.name.value, n.args, n.body, scope));
        return '';
      case 'Break':
        this.control = Control.Break;
        return '';
      case 'Continue':
        this.control = Control.Continue;
        return '';
      case 'CallStatement': {
        const caller = this.makeMacro('caller', n.callerArgs ?? [], n.body, scope);
        const fn = this.expr(n.call.callee, scope);
        const [args, kwargs] = this.args(n.call.args, scope);
        kwargs.set('caller', caller);
        return pyStr(this.call(fn, args, kwargs));
      }
      case 'FilterStatement': {
        const body = this.block(n.body, new Scope(scope));
        return pyStr(this.filterNode(n.filter, body, scope));
      }
      default:
        return pyStr(this.expr(n, scope));
    }
  }

  private forStmt(n: N, scope: Scope): string {
    let iterNode: N = n.iterable;
    let filter: N | null = null;
    if (iterNode.type === 'SelectExpression') {
      filter = iterNode.test;
      iterNode = iterNode.lhs;
    }
    const iterable = this.expr(iterNode, scope);
    let items = toList(iterable);
    if (filter) {
      const f = filter;
      items = items.filter((item) => {
        this.meter.step();
        const s = new Scope(scope);
        this.assign(n.loopvar, item, s, false);
        return truthy(this.expr(f, s));
      });
    }
    if (items.length === 0) return this.block(n.defaultBlock, scope);
    const loop = new LoopCtx(items);
    let out = '';
    for (let i = 0; i < items.length; i++) {
      this.meter.step();
      loop.index0 = i;
      // jinja2: each iteration starts from the enclosing scope; a `set` inside the body is gone next iteration.
      const s = new Scope(scope);
      s.vars.set('loop', loop);
      this.assign(n.loopvar, items[i], s, false);
      out += this.block(n.body, s);
      this.meter.length(out.length);
      if (this.control === Control.Break) {
        this.control = Control.None;
        break;
      }
      this.control = Control.None;
    }
    return out;
  }

  /** `{% set target = value %}` / loop targets: names, tuples (nested), namespace attributes (set only). */
  private assign(target: N, value: unknown, scope: Scope, isSet: boolean): void {
    switch (target.type) {
      case 'Identifier':
        scope.vars.set(target.value, value);
        return;
      case 'TupleLiteral': {
        const targets = tupleItems(target);
        if (!isIterable(value)) throw new PyError('TypeError', `cannot unpack non-iterable ${typeName(value)} object`);
        const items = toList(value);
        if (items.length !== targets.length) {
          throw new PyError(
            'ValueError',
            items.length > targets.length
              ? `too many values to unpack (expected ${targets.length})`
              : `not enough values to unpack (expected ${targets.length}, got ${items.length})`,
          );
        }
        targets.forEach((t, i) => this.assign(t, items[i], scope, isSet));
        return;
      }
      case 'MemberExpression': {
        if (!isSet || target.computed || target.property.type !== 'Identifier') break;
        const obj = this.expr(target.object, scope);
        if (!(obj instanceof Namespace)) throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
        obj.attrs.set(target.property.value, value);
        return;
      }
    }
    throw new PyError('TemplateSyntaxError', `cannot assign to ${target.type}`);
  }

  private makeMacro(name: string, params: N[], body: N[], defScope: Scope): PyCallable {
    let refs = this.macroRefs.get(body);
    if (!refs) {
      refs = findRefs(body);
      this.macroRefs.set(body, refs);
    }
    const r = refs;
    const names = params.map((p) => (p.type === 'Identifier' ? p.value : p.key.value) as string);
    return new PyCallable(name, 'macro', (args, kwargs) => {
      this.meter.enter();
      try {
        const s = new Scope(defScope);
        const kw = new Map(kwargs);
        const given: unknown[] = args.slice(0, names.length);
        let foundCaller = false;
        if (given.length !== names.length) {
          for (const p of names.slice(given.length)) {
            if (kw.has(p)) {
              given.push(kw.get(p));
              kw.delete(p);
            } else given.push(MISSING);
            if (p === 'caller') foundCaller = true;
          }
        }
        if (r.caller && !foundCaller) {
          s.vars.set('caller', kw.has('caller') ? kw.get('caller') : new Undef('No caller defined'));
          kw.delete('caller');
        }
        if (r.kwargs) s.vars.set('kwargs', makeDict(kw));
        else if (kw.size) {
          if (kw.has('caller'))
            throw new PyError('TypeError', `macro '${name}' was invoked with two values for the special caller argument. This is most likely a bug.`);
          throw new PyError('TypeError', `macro '${name}' takes no keyword argument '${kw.keys().next().value}'`);
        }
        if (r.varargs) s.vars.set('varargs', new PyTuple(args.slice(names.length)));
        else if (args.length > names.length) throw new PyError('TypeError', `macro '${name}' takes not more than ${names.length} argument(s)`);
        params.forEach((p, i) => {
          let v = given[i];
          if (v === MISSING) v = p.type === 'KeywordArgumentExpression' ? this.expr(p.value, s) : new Undef(`parameter '${names[i]}' was not provided`);
          s.vars.set(names[i], v);
        });
        const out = this.block(body, s);
        this.control = Control.None;
        return out;
      } finally {
        this.meter.leave();
      }
    });
  }

  private args(nodes: N[], scope: Scope): [unknown[], Map<string, unknown>] {
    const args: unknown[] = [];
    const kwargs = new Map<string, unknown>();
    const addKw = (k: string, v: unknown) => {
      if (kwargs.has(k)) throw new PyError('TypeError', `got multiple values for keyword argument '${k}'`);
      kwargs.set(k, v);
    };
    for (const a of nodes) {
      if (a.type === 'KeywordArgumentExpression') addKw(a.key.value, this.expr(a.value, scope));
      else if (a.type === 'SpreadExpression') args.push(...toList(this.expr(a.argument, scope)));
      else if (a.type === 'KeywordSpreadExpression') {
        const d = this.expr(a.argument, scope);
        if (!isDict(d)) throw new PyError('TypeError', `argument after ** must be a mapping, not ${typeName(d)}`);
        for (const [k, v] of dictEntries(d)) {
          if (!isStr(k)) throw new PyError('TypeError', 'keywords must be strings');
          addKw(strOf(k), v);
        }
      } else args.push(this.expr(a, scope));
    }
    return [args, kwargs];
  }

  expr(n: N, scope: Scope): unknown {
    switch (n.type) {
      case 'StringLiteral':
        return n.value;
      case 'IntegerLiteral':
        return pyInt(n.value);
      case 'FloatLiteral':
        return new PyFloat(n.value);
      case 'Identifier':
        return this.lookup(n.value, scope);
      case 'MemberExpression': {
        const obj = this.expr(n.object, scope);
        if (n.computed) {
          if (n.property.type === 'SliceExpression') return this.slice(obj, n.property, scope);
          return this.getitem(obj, this.expr(n.property, scope));
        }
        if (n.property.type === 'IntegerLiteral') return this.getitem(obj, n.property.value);
        return this.getattr(obj, n.property.value);
      }
      case 'CallExpression': {
        const fn = this.expr(n.callee, scope);
        const [args, kwargs] = this.args(n.args, scope);
        return this.call(fn, args, kwargs);
      }
      case 'FilterExpression':
        return this.filterNode(n.filter, this.expr(n.operand, scope), scope);
      case 'TestExpression': {
        const r = this.callTest(n.test.value, this.expr(n.operand, scope), [], new Map());
        return n.negate ? !r : r;
      }
      case 'BinaryExpression':
        return this.binary((n.operator as Tok).value, n.left, n.right, scope);
      case 'UnaryExpression': {
        const v = norm(this.expr(n.argument, scope));
        const op = (n.operator as Tok).value;
        if (op === 'not') return !truthy(v);
        if (v instanceof Undef) v.fail();
        if (typeof v === 'number' || typeof v === 'boolean') return op === '-' ? pyInt(-numValue(v)) : numValue(v);
        if (v instanceof PyFloat) return op === '-' ? new PyFloat(-v.v) : v;
        throw new PyError('TypeError', `bad operand type for unary ${op}: '${typeName(v)}'`);
      }
      case 'Ternary':
        return truthy(this.expr(n.condition, scope)) ? this.expr(n.trueExpr, scope) : this.expr(n.falseExpr, scope);
      case 'SelectExpression':
        return truthy(this.expr(n.test, scope))
          ? this.expr(n.lhs, scope)
          : new Undef('the inline if-expression evaluated to false and no else section was defined.');
      case 'ArrayLiteral':
        return (n.value as N[]).map((x) => this.expr(x, scope));
      case 'TupleLiteral':
        return new PyTuple(tupleItems(n).map((x) => this.expr(x, scope)));
      case 'ObjectLiteral': {
        const d = makeDict([]);
        for (const [k, v] of n.value as Map<N, N>) d.set(this.expr(k, scope), this.expr(v, scope));
        return d;
      }
    }
    throw new PyError('TemplateSyntaxError', `unexpected ${n.type} in an expression`);
  }

  private lookup(name: string, scope: Scope): unknown {
    switch (name) {
      case 'true':
      case 'True':
        return true;
      case 'false':
      case 'False':
        return false;
      case 'none':
      case 'None':
        return null;
    }
    for (let s: Scope | null = scope; s; s = s.parent) {
      const v = s.vars.get(name);
      if (v !== undefined) return norm(v);
    }
    return new Undef(() => `'${name}' is undefined`);
  }

  private binary(op: string, left: N, right: N, scope: Scope): unknown {
    const l = this.expr(left, scope);
    if (op === 'and') return truthy(l) ? this.expr(right, scope) : l;
    if (op === 'or') return truthy(l) ? l : this.expr(right, scope);
    const r = this.expr(right, scope);
    switch (op) {
      case '==':
        return pyEq(l, r);
      case '!=':
        return !pyEq(l, r);
      case '<':
        return pyCompare(l, r, op) < 0;
      case '<=':
        return pyCompare(l, r, op) <= 0;
      case '>':
        return pyCompare(l, r, op) > 0;
      case '>=':
        return pyCompare(l, r, op) >= 0;
      case 'in':
        return pyContains(r, l);
      case 'not in':
        return !pyContains(r, l);
      case '~': {
        const a = pyStr(l);
        const b = pyStr(r);
        this.meter.length(a.length + b.length);
        return a + b;
      }
      case '+':
        return pyAdd(l, r, this.meter);
      case '-':
        return pySub(l, r);
      case '*':
        return pyMul(l, r, this.meter);
      case '/':
        return pyDiv(l, r);
      case '//':
        return pyFloorDiv(l, r);
      case '%':
        return pyMod(l, r, this.meter);
      case '**':
        return pyPow(l, r);
    }
    throw new PyError('TemplateSyntaxError', `unknown operator ${op}`);
  }

  /**
   * `obj[start:stop:step]`. jinja2 compiles a slice to Python's own subscript (not the sandbox's `getitem`), so
   * its errors propagate: `None[1:]` and `{}[1:]` raise `TypeError`, as does a non-integer bound.
   */
  private slice(obj: unknown, n: N, scope: Scope): unknown {
    obj = norm(obj);
    const bounds = [n.start, n.stop, n.step].map((x: N | undefined) => (x ? norm(this.expr(x, scope)) : null));
    if (obj instanceof Undef) obj.fail();
    if (isDict(obj)) throw new PyError('TypeError', "unhashable type: 'slice'");
    const sliceable = Array.isArray(obj) || obj instanceof PyTuple || isStr(obj) || obj instanceof PyRange;
    if (!sliceable) throw new PyError('TypeError', `'${typeName(obj)}' object is not subscriptable`);
    const [start, stop, step] = bounds.map((v) => {
      if (v === null) return null;
      if (typeof v === 'number' || typeof v === 'boolean') return numValue(v);
      throw new PyError('TypeError', 'slice indices must be integers or None or have an __index__ method');
    });
    if (Array.isArray(obj)) return pySlice(obj.map(norm), start, stop, step);
    if (obj instanceof PyTuple) return new PyTuple(pySlice(obj.items, start, stop, step));
    if (typeof obj === 'string') return pySlice(codePoints(obj), start, stop, step).join('');
    if (obj instanceof Markup) return new Markup(pySlice(codePoints(obj.s), start, stop, step).join(''));
    const r = obj as PyRange;
    const [i, j, k] = sliceIndices(r.length, start, stop, step);
    return new PyRange(r.at(i), r.start + r.step * j, r.step * k);
  }

  // --- Env: the sandbox's attribute and item rules ------------------------------------------------------------

  /** Python attribute lookup (no item fallback). */
  attribute(obj: unknown, name: string): unknown {
    if (obj instanceof Namespace) return obj.attrs.has(name) ? obj.attrs.get(name) : name.startsWith('__') ? UNSAFE : undefined;
    if (obj instanceof LoopCtx) return obj.attr(name);
    if (obj instanceof Cycler) {
      if (name === 'current') return obj.current;
      if (name === 'items') return obj.items;
      if (name === 'next') return new PyCallable('cycler.next', 'method', () => obj.next());
      if (name === 'reset') return new PyCallable('cycler.reset', 'method', () => (obj.reset(), null));
      return undefined;
    }
    return builtinAttribute(this, obj, name);
  }

  /** `obj.name`: attribute first, then item (jinja2 `Environment.getattr`, sandboxed). */
  getattr(obj: unknown, name: string): unknown {
    obj = norm(obj);
    if (obj instanceof Undef) obj.fail();
    const a = this.attribute(obj, name);
    if (a === UNSAFE) return unsafeUndef(obj, name);
    if (a !== undefined) return a;
    const item = this.item(obj, name);
    return item !== undefined ? item : new Undef(() => undefinedMessage(obj, name));
  }

  /** `obj[key]`: item first, then attribute for a string key (jinja2 `Environment.getitem`, sandboxed). */
  getitem(obj: unknown, key: unknown): unknown {
    obj = norm(obj);
    if (obj instanceof Undef) obj.fail();
    const item = this.item(obj, key);
    if (item !== undefined) return item;
    if (isStr(key)) {
      const a = this.attribute(obj, strOf(key));
      if (a === UNSAFE) return unsafeUndef(obj, strOf(key));
      if (a !== undefined) return a;
    }
    return new Undef(() => undefinedMessage(obj, key instanceof Markup ? key.s : key));
  }

  /** `obj[key]` in Python, or undefined where Python raises `LookupError`/`TypeError`. */
  private item(obj: unknown, key: unknown): unknown {
    if (isDict(obj)) {
      try {
        return dictGet(obj, key);
      } catch {
        return undefined; // unhashable key: TypeError
      }
    }
    let seq: unknown[] | null = null;
    if (Array.isArray(obj)) seq = obj;
    else if (obj instanceof PyTuple) seq = obj.items;
    if (typeof key === 'boolean') key = key ? 1 : 0;
    if (typeof key !== 'number') return undefined;
    if (seq) {
      const i = key < 0 ? key + seq.length : key;
      return i >= 0 && i < seq.length ? norm(seq[i]) : undefined;
    }
    if (isStr(obj)) {
      const cps = codePoints(strOf(obj));
      const i = key < 0 ? key + cps.length : key;
      if (i < 0 || i >= cps.length) return undefined;
      return obj instanceof Markup ? new Markup(cps[i]) : cps[i];
    }
    if (obj instanceof PyRange) {
      const i = key < 0 ? key + obj.length : key;
      return i >= 0 && i < obj.length ? obj.at(i) : undefined;
    }
    return undefined;
  }

  call(fn: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown {
    if (fn instanceof PyCallable) return fn.call(args, kwargs);
    if (fn instanceof Undef) fn.fail();
    throw new PyError('TypeError', `'${typeName(fn)}' object is not callable`);
  }

  private filterNode(f: N, value: unknown, scope: Scope): unknown {
    if (f.type === 'Identifier') return this.callFilter(f.value, value, [], new Map());
    const [args, kwargs] = this.args(f.args, scope);
    const test = testOf(f.callee.value);
    if (test) return this.callTest(test.name, value, args, kwargs) !== test.negate;
    return this.callFilter(f.callee.value, value, args, kwargs);
  }

  callFilter(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown {
    if (!Object.hasOwn(FILTERS, name)) throw new PyError('TemplateRuntimeError', `No filter named '${name}' found.`);
    return FILTERS[name](this, norm(value), args, kwargs);
  }

  callTest(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): boolean {
    if (!Object.hasOwn(TESTS, name)) throw new PyError('TemplateRuntimeError', `No test named '${name}' found.`);
    if (kwargs.size) throw new PyError('TypeError', `test '${name}' takes no keyword arguments`);
    return TESTS[name](this, norm(value), args);
  }
}

/** The elements of a tuple literal, without the placeholder of a trailing comma (jinjaSyntax `rewriteTuples`). */
function tupleItems(n: N): N[] {
  return (n.value as N[]).filter((x) => !(x.type === 'Identifier' && x.value === TUPLE_END));
}

/** A parameter not given in a macro call. */
const MISSING = Symbol('missing');
