/**
 * The tests of jinja2 3.1 (`tests.py`) and Python `in`.
 */
import { Env } from './env';
import { FILTERS } from './filters';
import { pyMod } from './operators';
import { isIterable, pyCompare, pyEq, pyIter } from './protocols';
import { pyStr } from './repr';
import { pyIsLower, pyIsUpper } from './strMethods';
import { dictGet, DictView, isDict, isNumberLike, isStr, Markup, norm, PyCallable, PyError, PyFloat, PyRange, PyTuple, strOf, typeName, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Tests

type Test = (env: Env, value: unknown, args: unknown[]) => boolean;

function arg1(args: unknown[], name: string): unknown {
  if (args.length < 1) throw new PyError('TypeError', `${name}() missing 1 required positional argument`);
  return args[0];
}

/** The tests of jinja2 3.1 (`tests.py`). */
export const TESTS: Record<string, Test> = {
  odd: (e, v) => pyEq(pyMod(v, 2, e.meter), 1),
  even: (e, v) => pyEq(pyMod(v, 2, e.meter), 0),
  divisibleby: (e, v, a) => pyEq(pyMod(v, arg1(a, 'divisibleby'), e.meter), 0),
  defined: (_e, v) => !(v instanceof Undef),
  undefined: (_e, v) => v instanceof Undef,
  none: (_e, v) => v === null,
  boolean: (_e, v) => typeof v === 'boolean',
  false: (_e, v) => v === false,
  true: (_e, v) => v === true,
  integer: (_e, v) => typeof v === 'number',
  float: (_e, v) => norm(v) instanceof PyFloat,
  lower: (_e, v) => pyIsLower(pyStr(v)),
  upper: (_e, v) => pyIsUpper(pyStr(v)),
  string: (_e, v) => isStr(v),
  mapping: (_e, v) => isDict(v),
  number: (_e, v) => isNumberLike(norm(v)),
  sequence: (_e, v) => isStr(v) || Array.isArray(v) || v instanceof PyTuple || isDict(v) || v instanceof PyRange || v instanceof Undef,
  iterable: (_e, v) => isIterable(v),
  callable: (_e, v) => v instanceof PyCallable || v instanceof Undef,
  sameas: (_e, v, a) => v === arg1(a, 'sameas'),
  escaped: (_e, v) => v instanceof Markup,
  in: (e, v, a) => pyContains(arg1(a, 'in'), v),
  '==': (_e, v, a) => pyEq(v, arg1(a, 'eq')),
  '!=': (_e, v, a) => !pyEq(v, arg1(a, 'ne')),
  '>': (_e, v, a) => pyCompare(v, arg1(a, 'gt'), '>') > 0,
  '>=': (_e, v, a) => pyCompare(v, arg1(a, 'ge'), '>=') >= 0,
  '<': (_e, v, a) => pyCompare(v, arg1(a, 'lt'), '<') < 0,
  '<=': (_e, v, a) => pyCompare(v, arg1(a, 'le'), '<=') <= 0,
  filter: (_e, v) => isStr(v) && strOf(v) in FILTERS,
  test: (_e, v) => isStr(v) && strOf(v) in TESTS,
};
TESTS.eq = TESTS['=='];
TESTS.equalto = TESTS['=='];
TESTS.ne = TESTS['!='];
TESTS.gt = TESTS['>'];
TESTS.greaterthan = TESTS['>'];
TESTS.ge = TESTS['>='];
TESTS.lt = TESTS['<'];
TESTS.lessthan = TESTS['<'];
TESTS.le = TESTS['<='];

/** Python `item in container`. */
export function pyContains(container: unknown, item: unknown): boolean {
  container = norm(container);
  if (container instanceof Undef) return false;
  if (isStr(container)) {
    if (!isStr(item)) throw new PyError('TypeError', `'in <string>' requires string as left operand, not ${typeName(item)}`);
    return strOf(container).includes(strOf(item));
  }
  if (isDict(container)) return dictGet(container, item) !== undefined;
  if (Array.isArray(container)) {
    for (const x of container) if (pyEq(norm(x), item)) return true;
    return false;
  }
  if (container instanceof DictView && container.kind === 'keys') return dictGet(container.dict, item) !== undefined;
  if (isIterable(container)) {
    for (const x of pyIter(container)) if (pyEq(x, item)) return true;
    return false;
  }
  throw new PyError('TypeError', `argument of type '${typeName(container)}' is not iterable`);
}
