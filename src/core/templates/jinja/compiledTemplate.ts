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
 * | tuples unpack only from arrays (`TupleValue` fails); `(1,)` and `()` do not parse | `for k, v in d.items()`, `set a, b = 1, 2`, nested `(a, b), c`, strings; a wrong count raises `ValueError`; tuples print as `(1,)` | `assign`, {@link PyTuple}, syntax.ts `rewriteTuples` | `tuple unpacking in for and set` |
 * | `undefined\|length` raises; undefined swallows attribute access | `0`; `undefined.x`, `undefined[0]`, `undefined + 1`, `undefined < 1`, `undefined()` raise `UndefinedError` (NVIDIA Nemotron's template relies on `[][-1]['role']` raising); `undefined ~ 'x'` is `x` | {@link Undef} | `undefined values` |
 * | `\|string` and `{{ }}` print JSON | Python `str()`: `{'a': 1}`, `['x']`, `None`, `True`, `(1,)`, `1.0`, `range(0, 3)`, `dict_keys([...])`, `<Namespace {...}>`, `<Macro 'm'>` | `pyStr`/`pyRepr` | `string forms are Python's` |
 * | `fromjson` and other unknown filters | not filters of transformers' environment: a compile error outside `if`/conditional expressions, a run-time error inside them when reached | `checkNames` | `unknown filters fail like jinja2` |
 * | `list.append` and other mutators work | the immutable sandbox raises `SecurityError` (`append`, `extend`, `pop`, `update`, `setdefault`, …; dunder attributes); `get`, `items`, `keys`, `values`, `copy`, `index`, `count` work; only namespaces take `{% set a.b = … %}` | `builtinAttribute` | `sandbox refuses mutation` |
 * | str methods | `startswith`/`endswith` take tuples (a list raises); `split`/`rsplit` maxsplit; `replace` count; `title`, `capitalize`, `count`, `find`, `index` in code points | `STR_METHODS` | `string methods` |
 * | `%` and `.format` | printf and the format mini-language; floats rounded half-even on the exact value | `printf.ts`, `strFormat.ts`, `floatFormat.ts` | `string formatting` |
 * | `in` | substring, dict key, list member; `1 in 'a'` and `x in none` raise | `pyContains` | `membership` |
 * | loops | `loop.previtem`/`nextitem`/`cycle`/`changed`/`depth`; each iteration starts from the enclosing scope (a `set` in iteration 1 is gone in iteration 2 and after the loop); `else`; `break`/`continue` | `forStmt` | `loop semantics and scoping` |
 * | macros | defaults (may use earlier parameters), `varargs`, `kwargs`, `caller`; names resolve where the macro is defined, at call time (the library resolved them where it was called) | `makeMacro` | `macros` |
 * | `tojson` | `indent` (0 breaks lines; a string indents by it), `ensure_ascii`, `separators`, `sort_keys`, key order kept, floats as Python writes them, `TypeError` for undefined, ranges, generators | `pyJsonDumps` | `tojson options` |
 * | `\|items`, `\|dictsort`, `\|unique`, `\|join` on dicts, `\|int`/`\|float` on strings, `\|round`, `\|indent`, `\|title`, `\|groupby`, … | as jinja2 3.1's `filters.py` | `FILTERS` | `filters` |
 * | `is string/mapping/iterable/sequence/number`; tests with an argument do not parse | dicts are sequences; bools are numbers; undefined is iterable; `x is sameas true`, `x is divisibleby 3`, `x is in [..]` | `TESTS`, syntax.ts `rewriteTests` | `tests` |
 * | numbers | `3/2` is `1.5`, `4/2` is `2.0`, `//` and `%` floor, `2**-1` is `0.5`, `1 // 0` raises | `pyDiv`, `pyFloorDiv`, … | `arithmetic and number text` |
 * | slicing | negative steps, code points, ranges slice to ranges; `None[1:]` and `{}[1:]` raise `TypeError` (a slice bypasses the sandbox's `getitem`) | `Renderer.slice`, `pySlice` | `slicing` |
 * | `raise_exception`, `strftime_now`, `range`, `dict`, `namespace`, `cycler`, `joiner` | `TemplateError` with the message; C-locale `strftime` (`%-d` too); `range` over 100,000 raises (sandbox) | `makeGlobals` | `globals` |
 * | `~` has the precedence of `+` | `a + b ~ c` is `a + (b ~ c)`: `'a' + 1 ~ 'b'` is `a1b`, `1 + 2 ~ 'a'` raises `TypeError` | syntax.ts `rewriteConcat` | `literals and syntax` |
 * | literals | Python string escapes (`\` + newline, `\a`, octal, `\U…`, unknown ones kept); `1e3`, `1_000`, `0x1F`; `007` refused | syntax.ts `rewriteLiterals` | `literals and syntax` |
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
import { TemplateBudgetError, TemplateRenderError } from '../errors';
import { BudgetMeter, DEFAULT_RENDER_BUDGET, type RenderBudget } from '../renderBudget';
import { checkNames, MacroRefs, N } from './ast';
import { PrefixTrace } from './prefixTrace';
import { Scope } from './scope';
import { Renderer } from './statements';
import { rewriteConcat, rewriteGenerationTags, rewriteLiterals, rewriteTests, rewriteTuples, type GenerationMarkers } from './syntax';
import { PyError } from './values';

/** Options of one render. */
export interface RenderEnvOptions {
  budget?: Partial<RenderBudget>;
  /** The clock `strftime_now` reads (default: now). */
  now?: () => Date;
  /** {@link tracePrefixes}: serve prefixes cut in the template's header by header replay (prefixTrace.ts; default true). */
  headerReplay?: boolean;
}

/** Merged budgets ({@link DEFAULT_RENDER_BUDGET} with a caller's fields), by the caller's object: merged once, not per render. */
const MERGED_BUDGETS = new WeakMap<Partial<RenderBudget>, Readonly<RenderBudget>>();

/** The budget of a render: the defaults with `budget`'s fields (read-only; the same object for the same `budget`). */
function budgetOf(budget: Partial<RenderBudget> | undefined): Readonly<RenderBudget> {
  if (budget === undefined) return DEFAULT_RENDER_BUDGET;
  let b = MERGED_BUDGETS.get(budget);
  if (!b) MERGED_BUDGETS.set(budget, (b = Object.freeze({ ...DEFAULT_RENDER_BUDGET, ...budget })));
  return b;
}

/** A compiled chat template. */
export class CompiledTemplate {
  private readonly body: N[];
  private readonly macroRefs = new WeakMap<object, MacroRefs>();

  /**
   * Compiles template source as jinja2 would: line endings `\r\n` and `\r` read as `\n` (jinja2's lexer
   * normalizes them), `trim_blocks` and `lstrip_blocks` on, unknown filters and tests outside `if` refused;
   * `{% generation %}` tags render nothing, with jinja2's whitespace control (syntax.ts `rewriteGenerationTags`), or
   * write `options.generationMarkers` where they stand.
   * @throws TemplateRenderError when the template does not compile (the message names the problem)
   */
  constructor(
    readonly source: string,
    options: { generationMarkers?: GenerationMarkers } = {},
  ) {
    let program: N;
    try {
      const src = rewriteLiterals(rewriteGenerationTags(source.replace(/\r\n?/g, '\n'), options.generationMarkers));
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
    const budget = budgetOf(opts.budget);
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

  /**
   * Renders once over the whole list `vars[listName]` (objects, e.g. messages) and serves the renders of its
   * prefixes for both values of the boolean `vars[flagName]` (prefixTrace.ts has the proof): `trace.render(k, flag)`
   * is `render({...vars, [listName]: list.slice(0, k), [flagName]: flag})` or undefined where not proven. The clock
   * is read once. Never throws (a full render that raises serves only the prefixes cut before the error).
   */
  tracePrefixes(vars: Record<string, unknown>, listName: string, flagName: string, opts: RenderEnvOptions = {}): PrefixTrace {
    const budget = budgetOf(opts.budget);
    const t = (opts.now ?? (() => new Date()))();
    return new PrefixTrace(this.body, this.macroRefs, vars, listName, flagName, { budget, now: () => t, headerReplay: opts.headerReplay });
  }
}
