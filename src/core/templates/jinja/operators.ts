/**
 * Python arithmetic operators over template values, shared by the evaluator and the builtins.
 */
import { BudgetMeter } from '../renderBudget';
import { like } from './args';
import { percentFormat } from './printf';
import { markupEscape } from './repr';
import { isNumberLike, isStr, Markup, norm, numValue, PyError, PyFloat, pyInt, PyTuple, strOf, typeName, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Arithmetic shared with the evaluator

function numPair(a: unknown, b: unknown): [number, number, boolean] | null {
  if (!isNumberLike(a) || !isNumberLike(b)) return null;
  return [numValue(a), numValue(b), a instanceof PyFloat || b instanceof PyFloat];
}

/** Two ints (integral JS numbers, which `norm` keeps as they are). */
function bothInts(a: unknown, b: unknown): a is number {
  return typeof a === 'number' && typeof b === 'number' && Number.isInteger(a) && Number.isInteger(b);
}

function opError(op: string, a: unknown, b: unknown): never {
  throw new PyError('TypeError', `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python `a + b`. */
export function pyAdd(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  // The two commonest cases first, as the general path below answers them: two strs, two ints.
  if (typeof a === 'string' && typeof b === 'string') {
    meter.length(a.length + b.length);
    return a + b;
  }
  if (bothInts(a, b)) return pyInt(a + (b as number));
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] + n[1]) : pyInt(n[0] + n[1]);
  if (isStr(a) && isStr(b)) {
    meter.length(strOf(a).length + strOf(b).length);
    if (a instanceof Markup || b instanceof Markup) return new Markup(markupEscape(a).s + markupEscape(b).s);
    return (a as string) + (b as string);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    meter.length(a.length + b.length);
    return [...a.map(norm), ...b.map(norm)];
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  if (isStr(a)) throw new PyError('TypeError', `can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a)) throw new PyError('TypeError', `can only concatenate list (not "${typeName(b)}") to list`);
  if (a instanceof PyTuple) throw new PyError('TypeError', `can only concatenate tuple (not "${typeName(b)}") to tuple`);
  opError('+', a, b);
}

/** Python `a - b`. */
export function pySub(a: unknown, b: unknown): unknown {
  if (bothInts(a, b)) return pyInt(a - (b as number)); // as numPair below answers two ints
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] - n[1]) : pyInt(n[0] - n[1]);
  opError('-', a, b);
}

/** Python `a * b` (sequence repetition checked against the budget before it is built). */
export function pyMul(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] * n[1]) : pyInt(n[0] * n[1]);
  const isSeq = (x: unknown) => isStr(x) || Array.isArray(x) || x instanceof PyTuple;
  const [seq, times] = isSeq(a) ? [a, b] : [b, a];
  if (isSeq(seq)) {
    if (typeof times !== 'number' && typeof times !== 'boolean') {
      if (times instanceof PyFloat) throw new PyError('TypeError', "can't multiply sequence by non-int of type 'float'");
      throw new PyError('TypeError', `can't multiply sequence by non-int of type '${typeName(times)}'`);
    }
    const k = Math.max(0, numValue(times));
    if (isStr(seq)) {
      const s = strOf(seq);
      meter.length(s.length * k);
      return like(seq, s.repeat(k));
    }
    const items = Array.isArray(seq) ? seq.map(norm) : (seq as PyTuple).items;
    meter.length(items.length * k);
    const out: unknown[] = [];
    for (let i = 0; i < k; i++) out.push(...items);
    return Array.isArray(seq) ? out : new PyTuple(out);
  }
  opError('*', a, b);
}

/** Python `a / b`. */
export function pyDiv(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('/', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float division by zero' : 'division by zero');
  return new PyFloat(n[0] / n[1]);
}

/** Python float floor division and modulo (CPython's `float_divmod`). */
function floatDivmod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  } else mod = wx < 0 ? -0 : 0;
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else floordiv = vx / wx < 0 ? -0 : 0;
  return [floordiv, mod];
}

/** Python `a // b`. */
export function pyFloorDiv(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('//', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float floor division by zero' : 'integer division or modulo by zero');
  if (n[2]) return new PyFloat(floatDivmod(n[0], n[1])[0]);
  const q = BigInt(n[0]) / BigInt(n[1]);
  const r = BigInt(n[0]) % BigInt(n[1]);
  return pyInt(Number(r !== 0n && r < 0n !== BigInt(n[1]) < 0n ? q - 1n : q));
}

/** Python `a % b` (string formatting for a str left operand). */
export function pyMod(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (isStr(a)) {
    const out = percentFormat(strOf(a), b, a instanceof Markup);
    meter.length(out.length);
    return like(a, out);
  }
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('%', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float modulo' : 'integer modulo by zero');
  if (n[2]) return new PyFloat(floatDivmod(n[0], n[1])[1]);
  let r = n[0] % n[1];
  if (r !== 0 && r < 0 !== n[1] < 0) r += n[1];
  return pyInt(r);
}

/** Python `a ** b`. */
export function pyPow(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('** or pow()', a, b);
  const [x, y, isFloat] = n;
  if (!isFloat && y >= 0) {
    if (Math.abs(x) > 1 && y * Math.log2(Math.abs(x)) > 60)
      throw new PyError('OverflowError', `integer ${x} ** ${y} is beyond 2**53, which the renderer cannot represent exactly`);
    return pyInt(Number(BigInt(x) ** BigInt(y)));
  }
  if (x === 0 && y < 0) throw new PyError('ZeroDivisionError', isFloat ? '0.0 cannot be raised to a negative power' : 'zero to a negative power');
  if (x < 0 && !Number.isInteger(y))
    throw new PyError('Unsupported', 'a negative number to a fractional power is a complex number in Python; the renderer does not support complex numbers');
  const r = x ** y;
  if (!Number.isFinite(r)) throw new PyError('OverflowError', "(34, 'Numerical result out of range')");
  return new PyFloat(r);
}
