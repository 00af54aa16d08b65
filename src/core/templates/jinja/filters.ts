/**
 * The filters of transformers' jinja2 environment, with the semantics of jinja2 3.1 `filters.py` (behaviour, not code).
 */
import { asIndex, bind, gen, like, optStr, softStr } from './args';
import { Builtin, unsafeUndef } from './env';
import {
  attrGetter,
  ignoreCase,
  indent,
  minMax,
  pformat,
  roundInt,
  selectOrReject,
  sortBy,
  striptags,
  toFloat,
  toInt,
  unsupported,
  urlQuote,
} from './filterHelpers';
import { roundFloat } from './floatFormat';
import { pyJsonDumps } from './json';
import { pyAdd } from './operators';
import { percentFormat } from './printf';
import { isIterable, pyEq, pyIter, pyLen, toList, truthy } from './protocols';
import { markupEscape, pyRepr, pyStr, undefinedMessage } from './repr';
import { GroupTuple, UNSAFE } from './sandbox';
import { formatValue } from './strFormat';
import { justify, pyCapitalize } from './strMethods';
import { codePoints, htmlEscape, pyReplace, pyRsplit, pyStrip, strLen } from './strings';
import {
  dictEntries,
  DictView,
  hashKey,
  isDict,
  isNumberLike,
  isStr,
  makeDict,
  Markup,
  norm,
  numValue,
  PyError,
  PyFloat,
  pyInt,
  PyIter,
  PyRange,
  PyTuple,
  strOf,
  typeName,
  Undef,
} from './values';

/** The filters of transformers' jinja2 environment (jinja2 3.1 builtins, `tojson` replaced by transformers'). */
export const FILTERS: Record<string, Builtin> = {
  abs: (_e, v, a, k) => {
    bind('abs', a, k, []);
    v = norm(v);
    if (typeof v === 'number') return Math.abs(v);
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v instanceof PyFloat) return new PyFloat(Math.abs(v.v));
    if (v instanceof Undef) v.fail();
    throw new PyError('TypeError', `bad operand type for abs(): '${typeName(v)}'`);
  },
  attr: (e, v, a, k) => {
    // jinja2 do_attr: Python attribute lookup only (no item fallback), sandboxed.
    const name = pyStr(bind('attr', a, k, ['name'])[0]);
    if (v instanceof Undef) v.fail();
    const got = e.attribute(v, name);
    if (got === UNSAFE) return unsafeUndef(v, name);
    return got !== undefined ? got : new Undef(() => undefinedMessage(v, name));
  },
  batch: (_e, v, a, k) => {
    const [count, fill] = bind('batch', a, k, ['linecount', 'fill_with'], { fill_with: null });
    const n = asIndex(count, 'linecount');
    return gen('generator', function* () {
      let tmp: unknown[] = [];
      for (const x of pyIter(v)) {
        if (tmp.length === n) {
          yield tmp;
          tmp = [];
        }
        tmp.push(x);
      }
      if (tmp.length) {
        if (fill !== null) while (tmp.length < n) tmp.push(fill);
        yield tmp;
      }
    });
  },
  capitalize: (_e, v, a, k) => {
    bind('capitalize', a, k, []);
    const s = softStr(v);
    return like(s, pyCapitalize(strOf(s)));
  },
  center: (e, v, a, k) => {
    const [w] = bind('center', a, k, ['width'], { width: 80 });
    e.meter.length(asIndex(w, 'width'));
    const s = softStr(v);
    return like(s, justify(strOf(s), asIndex(w, 'width'), ' ', 'c'));
  },
  count: (_e, v, a, k) => (bind('count', a, k, []), pyLen(v)),
  default: (_e, v, a, k) => {
    const [d, boolean] = bind('default', a, k, ['default_value', 'boolean'], { default_value: '', boolean: false });
    return v instanceof Undef || (truthy(boolean) && !truthy(v)) ? d : v;
  },
  dictsort: (_e, v, a, k) => {
    const [cs, by, reverse] = bind('dictsort', a, k, ['case_sensitive', 'by', 'reverse'], { case_sensitive: false, by: 'key', reverse: false });
    const pos = pyStr(by) === 'key' ? 0 : pyStr(by) === 'value' ? 1 : -1;
    if (pos < 0) throw new PyError('FilterArgumentError', 'You can only sort by either "key" or "value"');
    if (v instanceof Undef) v.fail();
    if (!isDict(v)) throw new PyError('AttributeError', `'${typeName(v)}' object has no attribute 'items'`);
    const entries = dictEntries(v).map(([key, val]) => new PyTuple([key, val]));
    return sortBy(entries, (t) => (truthy(cs) ? t.items[pos] : ignoreCase(t.items[pos])), truthy(reverse));
  },
  escape: (_e, v, a, k) => (bind('escape', a, k, []), markupEscape(v instanceof Undef ? '' : v)),
  filesizeformat: (_e, v, a, k) => {
    const [binary] = bind('filesizeformat', a, k, ['binary'], { binary: false });
    const b = toFloat(v);
    if (b === null) throw new PyError('TypeError', `float() argument must be a string or a real number, not '${typeName(v)}'`);
    const base = truthy(binary) ? 1024 : 1000;
    const prefixes = truthy(binary) ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
    if (b === 1) return '1 Byte';
    if (b < base) return `${Math.trunc(b)} Bytes`;
    let unit = base;
    for (let i = 0; i < prefixes.length; i++) {
      unit = base ** (i + 2);
      if (b < unit) return `${formatValue(new PyFloat((base * b) / unit), '.1f')} ${prefixes[i]}`;
    }
    return `${formatValue(new PyFloat((base * b) / unit), '.1f')} ${prefixes[prefixes.length - 1]}`;
  },
  first: (_e, v, a, k) => {
    bind('first', a, k, []);
    for (const x of pyIter(v)) return x;
    return new Undef('No first item, sequence was empty.');
  },
  float: (_e, v, a, k) => {
    const [d] = bind('float', a, k, ['default'], { default: new PyFloat(0) });
    const f = toFloat(v);
    return f === null ? d : new PyFloat(f);
  },
  forceescape: (_e, v, a, k) => (bind('forceescape', a, k, []), new Markup(htmlEscape(pyStr(v instanceof Markup ? v.s : v)))),
  format: (_e, v, a, k) => {
    if (a.length && k.size) throw new PyError('FilterArgumentError', "can't handle positional and keyword arguments at the same time");
    const s = softStr(v);
    const args = k.size ? makeDict([...k]) : new PyTuple(a);
    const out = percentFormat(strOf(s), args, s instanceof Markup);
    return like(s, out);
  },
  groupby: (e, v, a, k) => {
    const [attribute, dflt, cs] = bind('groupby', a, k, ['attribute', 'default', 'case_sensitive'], { default: null, case_sensitive: false });
    const expr = attrGetter(e, attribute, truthy(cs) ? undefined : ignoreCase, dflt);
    const sorted = sortBy(toList(v), expr, false);
    const groups: [unknown, unknown[]][] = [];
    for (const x of sorted) {
      const key = expr(x);
      const last = groups[groups.length - 1];
      if (last && pyEq(last[0], key)) last[1].push(x);
      else groups.push([key, [x]]);
    }
    const out = truthy(cs) ? groups : groups.map(([, vals]) => [attrGetter(e, attribute, undefined, dflt)(vals[0]), vals] as [unknown, unknown[]]);
    return out.map(([key, vals]) => new GroupTuple([key, vals]));
  },
  indent: (_e, v, a, k) => {
    const [w, first, blank] = bind('indent', a, k, ['width', 'first', 'blank'], { width: 4, first: false, blank: false });
    return indent(softStr(v), w, first, blank);
  },
  int: (_e, v, a, k) => {
    const [d, base] = bind('int', a, k, ['default', 'base'], { default: 0, base: 10 });
    const b = asIndex(base, 'base');
    if (isStr(v)) {
      const r = toInt(v, b);
      if (r !== null) return r;
    } else if (!(v instanceof PyFloat) || Number.isFinite(v.v)) {
      const r = toInt(v, 10);
      if (r !== null && !isStr(v)) return r;
    }
    const f = toFloat(v);
    return f === null || !Number.isFinite(f) ? d : pyInt(Math.trunc(f));
  },
  items: (_e, v, a, k) => {
    bind('items', a, k, []);
    return gen('generator', function* () {
      if (v instanceof Undef) return;
      if (!isDict(v)) throw new PyError('TypeError', 'Can only get item pairs from a mapping.');
      for (const [key, val] of dictEntries(v)) yield new PyTuple([key, val]);
    });
  },
  join: (e, v, a, k) => {
    const [d, attribute] = bind('join', a, k, ['d', 'attribute'], { d: '', attribute: null });
    let items = toList(v);
    if (attribute !== null) items = items.map(attrGetter(e, attribute));
    const out = items.map(pyStr).join(pyStr(d));
    e.meter.length(out.length);
    return out;
  },
  last: (_e, v, a, k) => {
    bind('last', a, k, []);
    if (v instanceof PyIter) throw new PyError('TypeError', `'${v.typeName}' object is not reversible`);
    if (v instanceof Undef) v.fail();
    if (v === null || typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat)
      throw new PyError('TypeError', `'${typeName(v)}' object is not reversible`);
    const items = toList(v);
    return items.length ? items[items.length - 1] : new Undef('No last item, sequence was empty.');
  },
  length: (_e, v, a, k) => (bind('length', a, k, []), pyLen(v)),
  list: (_e, v, a, k) => (bind('list', a, k, []), toList(v)),
  lower: (_e, v, a, k) => {
    bind('lower', a, k, []);
    const s = softStr(v);
    return like(s, strOf(s).toLowerCase());
  },
  map: (e, v, a, k) => {
    let func: (x: unknown) => unknown;
    if (a.length === 0 && k.has('attribute')) {
      const kw = new Map(k);
      const attribute = kw.get('attribute');
      kw.delete('attribute');
      const dflt = kw.has('default') ? kw.get('default') : null;
      kw.delete('default');
      if (kw.size) throw new PyError('FilterArgumentError', `Unexpected keyword argument ${pyRepr(kw.keys().next().value)}`);
      func = attrGetter(e, attribute, undefined, dflt);
    } else {
      if (a.length === 0) throw new PyError('FilterArgumentError', 'map requires a filter argument');
      const name = pyStr(a[0]);
      const rest = a.slice(1);
      func = (x) => e.callFilter(name, x, rest, k);
    }
    return gen('generator', function* () {
      if (!truthy(v)) return;
      for (const x of pyIter(v)) {
        e.meter.step();
        yield func(x);
      }
    });
  },
  max: (e, v, a, k) => minMax(e, v, a, k, true),
  min: (e, v, a, k) => minMax(e, v, a, k, false),
  pprint: (_e, v, a, k) => (bind('pprint', a, k, []), pformat(v)),
  random: unsupported('random'),
  reject: (e, v, a, k) => selectOrReject(e, v, a, k, false, false),
  rejectattr: (e, v, a, k) => selectOrReject(e, v, a, k, false, true),
  replace: (e, v, a, k) => {
    const [o, n, c] = bind('replace', a, k, ['old', 'new', 'count'], { count: null });
    const out = pyReplace(pyStr(v), pyStr(o), pyStr(n), c === null ? -1 : asIndex(c, 'count'));
    e.meter.length(out.length);
    return out;
  },
  reverse: (_e, v, a, k) => {
    bind('reverse', a, k, []);
    if (isStr(v)) return like(v, codePoints(strOf(v)).reverse().join(''));
    if (Array.isArray(v) || v instanceof PyTuple || isDict(v) || v instanceof PyRange || v instanceof DictView) {
      const items = toList(v).reverse();
      const tn = Array.isArray(v)
        ? 'list_reverseiterator'
        : v instanceof PyTuple
          ? 'reversed'
          : isDict(v)
            ? 'dict_reversekeyiterator'
            : v instanceof PyRange
              ? 'range_iterator'
              : 'dict_reverseiterator';
      return gen(tn, function* () {
        yield* items;
      });
    }
    if (v instanceof Undef) v.fail();
    try {
      return toList(v).reverse();
    } catch {
      throw new PyError('FilterArgumentError', 'argument must be iterable');
    }
  },
  round: (_e, v, a, k) => {
    const [p, method] = bind('round', a, k, ['precision', 'method'], { precision: 0, method: 'common' });
    const m = pyStr(method);
    if (!['common', 'ceil', 'floor'].includes(m)) throw new PyError('FilterArgumentError', 'method must be common, ceil or floor');
    const prec = asIndex(p, 'precision');
    v = norm(v);
    if (!isNumberLike(v)) {
      if (v instanceof Undef) v.fail();
      throw new PyError('TypeError', `type ${typeName(v)} doesn't define __round__ method`);
    }
    if (m === 'common') {
      if (typeof v === 'number' || typeof v === 'boolean') return roundInt(numValue(v), prec);
      return new PyFloat(roundFloat(v.v, prec));
    }
    const scale = 10 ** prec;
    const f = m === 'floor' ? Math.floor(numValue(v) * scale) : Math.ceil(numValue(v) * scale);
    return new PyFloat(f / scale);
  },
  safe: (_e, v, a, k) => (bind('safe', a, k, []), v instanceof Markup ? v : new Markup(pyStr(v))),
  select: (e, v, a, k) => selectOrReject(e, v, a, k, true, false),
  selectattr: (e, v, a, k) => selectOrReject(e, v, a, k, true, true),
  slice: (_e, v, a, k) => {
    const [slices, fill] = bind('slice', a, k, ['slices', 'fill_with'], { fill_with: null });
    const n = asIndex(slices, 'slices');
    const seq = toList(v);
    return gen('generator', function* () {
      const per = Math.floor(seq.length / n);
      const extra = seq.length % n;
      let offset = 0;
      for (let i = 0; i < n; i++) {
        const start = offset + i * per;
        if (i < extra) offset++;
        const end = offset + (i + 1) * per;
        const tmp = seq.slice(start, end);
        if (fill !== null && i >= extra) tmp.push(fill);
        yield tmp;
      }
    });
  },
  sort: (e, v, a, k) => {
    const [reverse, cs, attribute] = bind('sort', a, k, ['reverse', 'case_sensitive', 'attribute'], { reverse: false, case_sensitive: false, attribute: null });
    const post = truthy(cs) ? undefined : ignoreCase;
    const key = attribute === null ? (x: unknown) => (post ? post(x) : x) : attrGetter(e, attribute, post);
    return sortBy(toList(v), key, truthy(reverse));
  },
  string: (_e, v, a, k) => (bind('string', a, k, []), softStr(v)),
  striptags: (_e, v, a, k) => (bind('striptags', a, k, []), striptags(pyStr(v instanceof Markup ? v.s : v))),
  sum: (e, v, a, k) => {
    const [attribute, start] = bind('sum', a, k, ['attribute', 'start'], { attribute: null, start: 0 });
    let items = toList(v);
    if (attribute !== null) items = items.map(attrGetter(e, attribute));
    let acc = start;
    for (const x of items) acc = pyAdd(acc, x, e.meter);
    return acc;
  },
  title: (_e, v, a, k) => {
    bind('title', a, k, []);
    const s = softStr(v);
    // jinja2 do_title: split before runs of `-`, whitespace and opening brackets; upper the first char of each piece.
    const pieces = strOf(s)
      .split(/([-\s({[<]+)/u)
      .filter((p) => p.length > 0);
    return like(
      s,
      pieces
        .map((p) => {
          const c = codePoints(p);
          return c[0].toUpperCase() + c.slice(1).join('').toLowerCase();
        })
        .join(''),
    );
  },
  tojson: (_e, v, a, k) => {
    // transformers: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    const [ensureAscii, ind, seps, sortKeys] = bind('tojson', a, k, ['ensure_ascii', 'indent', 'separators', 'sort_keys'], {
      ensure_ascii: false,
      indent: null,
      separators: null,
      sort_keys: false,
    });
    let indentOpt: number | string | null = null;
    if (ind !== null) {
      if (isStr(ind)) indentOpt = strOf(ind);
      else if (typeof ind === 'number' || typeof ind === 'boolean') indentOpt = numValue(ind);
      else throw new PyError('TypeError', `can't multiply sequence by non-int of type '${typeName(ind)}'`);
    }
    let separators: [string, string] | null = null;
    if (seps !== null) {
      const parts = toList(seps);
      if (parts.length !== 2 || !parts.every(isStr)) throw new PyError('ValueError', 'separators must be a (item_separator, key_separator) pair of strings');
      separators = [strOf(parts[0] as string), strOf(parts[1] as string)];
    }
    return pyJsonDumps(v, { indent: indentOpt, ensureAscii: truthy(ensureAscii), separators, sortKeys: truthy(sortKeys) });
  },
  trim: (_e, v, a, k) => {
    const [chars] = bind('trim', a, k, ['chars'], { chars: null });
    const s = softStr(v);
    return like(s, pyStrip(strOf(s), optStr(chars, 'strip'), true, true));
  },
  truncate: (_e, v, a, k) => {
    const [len, kill, end, leeway] = bind('truncate', a, k, ['length', 'killwords', 'end', 'leeway'], {
      length: 255,
      killwords: false,
      end: '...',
      leeway: null,
    });
    const s = pyStr(v);
    const n = asIndex(len, 'length');
    const e = pyStr(end);
    const lw = leeway === null ? 5 : asIndex(leeway, 'leeway');
    if (n < strLen(e)) throw new PyError('AssertionError', `expected length >= ${strLen(e)}, got ${n}`);
    if (lw < 0) throw new PyError('AssertionError', `expected leeway >= 0, got ${lw}`);
    const cps = codePoints(s);
    if (cps.length <= n + lw) return s;
    const head = cps.slice(0, n - strLen(e)).join('');
    if (truthy(kill)) return head + e;
    return pyRsplit(head, ' ', 1)[0] + e;
  },
  unique: (e, v, a, k) => {
    const [cs, attribute] = bind('unique', a, k, ['case_sensitive', 'attribute'], { case_sensitive: false, attribute: null });
    const post = truthy(cs) ? undefined : ignoreCase;
    const key = attribute === null ? (x: unknown) => (post ? post(x) : x) : attrGetter(e, attribute, post);
    return gen('generator', function* () {
      const seen = new Set<unknown>();
      for (const x of pyIter(v)) {
        const h = hashKey(key(x));
        if (!seen.has(h)) {
          seen.add(h);
          yield x;
        }
      }
    });
  },
  upper: (_e, v, a, k) => {
    bind('upper', a, k, []);
    const s = softStr(v);
    return like(s, strOf(s).toUpperCase());
  },
  urlencode: (_e, v, a, k) => {
    bind('urlencode', a, k, []);
    if (isStr(v) || !isIterable(v)) return urlQuote(v, false);
    const pairs = isDict(v) ? dictEntries(v) : toList(v).map((p) => toList(p) as [unknown, unknown]);
    return pairs.map(([key, val]) => `${urlQuote(key, true)}=${urlQuote(val, true)}`).join('&');
  },
  urlize: unsupported('urlize'),
  wordcount: (_e, v, a, k) => (bind('wordcount', a, k, []), (pyStr(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  wordwrap: unsupported('wordwrap'),
  xmlattr: unsupported('xmlattr'),
};
FILTERS.d = FILTERS.default;
FILTERS.e = FILTERS.escape;
