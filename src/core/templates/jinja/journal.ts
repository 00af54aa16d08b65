/**
 * The undo/redo journal of the evaluator's mutable state, for renders resumed from a checkpoint (prefixTrace.ts).
 *
 * A template can change state in a few places only, and every one of them goes through this module while a journal
 * is active: the variables of the render's root scope (`{% set %}` at top level, macro definitions), namespace
 * attributes (`{% set ns.x = … %}`), cyclers, joiners, `loop.changed`'s memory, and one-pass iterators (consumed by
 * `next()`). Lists and dicts are immutable under the sandbox; every other scope lives only while its block runs.
 *
 * Positions: the state at position `p` is the state after the first `p` entries. An object's `born` is the journal
 * length when it was made; a checkpoint at position `p` pushes a mark, so an object made after it has `born > p`.
 * A change is recorded only when its object existed at the latest checkpoint (`born <= lastMark`): the state of a
 * newer object at any later checkpoint is then its JS state after its unrecorded changes plus the recorded ones.
 * Iterator consumption cannot be undone; it is recorded (as a `consume` entry) and makes checkpoints at which the
 * iterator existed unusable (prefixTrace.ts).
 */

/** Something whose creation position the journal knows. */
export interface Born {
  born: number;
}

const enum Kind {
  Map = 0,
  Field = 1,
  Consume = 2,
  Mark = 3,
}

/** One recorded change: `container` is the Map (Kind.Map) or the object (Kind.Field) changed; `owner` the object it belongs to. */
export interface Entry {
  kind: Kind;
  owner: Born;
  container: Map<unknown, unknown> | Record<string, unknown> | null;
  key: unknown;
  /** Whether the key was present before (Kind.Map). */
  had: boolean;
  old: unknown;
  neu: unknown;
}

/**
 * Told of changes and whole reads of journaled objects (prefixTrace.ts: where a prefix render whose state differs
 * from the full render's must stop following it).
 */
export interface JournalWatcher {
  /** `owner`'s `key` (a root variable, a namespace attribute, a field) is being set. */
  wrote(owner: Born, key: unknown): void;
  /** Every attribute of `owner` (a namespace) is read at once (its `repr`). */
  readAll(owner: Born): void;
}

/** A journal: the main one of a traced render (append-only, then moved with undo/redo), or a tail's (undone when the tail ends). */
export class Journal {
  readonly entries: Entry[] = [];
  /** The state position (entries applied). */
  pos = 0;
  /** Told of every recorded change and whole read (the main journal of a traced render only). */
  watcher: JournalWatcher | null = null;
  /**
   * @param tail true for a tail run: its objects are born at +Infinity (never live at a checkpoint)
   * @param lastMark position of the latest checkpoint: changes of objects born at or before it are recorded
   * @param onDirty tail runs: called with an iterator's `born` when the tail consumes an iterator that existed at its checkpoint
   */
  constructor(
    readonly tail: boolean,
    public lastMark = -1,
    private readonly onDirty?: (born: number) => void,
  ) {}

  /** The `born` stamp of an object made now. */
  stamp(): number {
    return this.tail ? Infinity : this.entries.length;
  }

  /** Takes a checkpoint here: @returns its position */
  mark(): number {
    const p = this.entries.length;
    this.push({ kind: Kind.Mark, owner: NO_OWNER, container: null, key: null, had: false, old: undefined, neu: undefined });
    this.lastMark = p;
    return p;
  }

  private push(e: Entry): void {
    this.entries.push(e);
    this.pos = this.entries.length;
  }

  recordMap(owner: Born, map: Map<unknown, unknown>, key: unknown, value: unknown): void {
    if (owner.born > this.lastMark) return;
    this.watcher?.wrote(owner, key);
    const had = map.has(key);
    this.push({ kind: Kind.Map, owner, container: map, key, had, old: had ? map.get(key) : undefined, neu: value });
  }

  recordField(owner: Born, obj: Record<string, unknown>, key: string, value: unknown): void {
    if (owner.born > this.lastMark) return;
    this.watcher?.wrote(owner, key);
    this.push({ kind: Kind.Field, owner, container: obj, key, had: true, old: obj[key], neu: value });
  }

  recordConsume(owner: Born): void {
    if (owner.born > this.lastMark) return;
    if (this.tail) this.onDirty?.(owner.born);
    else this.push({ kind: Kind.Consume, owner, container: null, key: null, had: false, old: undefined, neu: undefined });
  }

  /** Moves the state to position `target` (undo backwards, redo forwards). */
  moveTo(target: number): void {
    while (this.pos > target) undo(this.entries[--this.pos]);
    while (this.pos < target) redo(this.entries[this.pos++]);
  }
}

const NO_OWNER: Born = { born: -1 };

function undo(e: Entry): void {
  if (e.kind === Kind.Map) {
    const m = e.container as Map<unknown, unknown>;
    if (e.had) m.set(e.key, e.old);
    else m.delete(e.key);
  } else if (e.kind === Kind.Field) (e.container as Record<string, unknown>)[e.key as string] = e.old;
}

function redo(e: Entry): void {
  if (e.kind === Kind.Map) (e.container as Map<unknown, unknown>).set(e.key, e.neu);
  else if (e.kind === Kind.Field) (e.container as Record<string, unknown>)[e.key as string] = e.neu;
}

/** Whether an entry is a state change (not a mark or a consumption). */
export function isChange(e: Entry): boolean {
  return e.kind === Kind.Map || e.kind === Kind.Field;
}

/** Whether an entry records an iterator's consumption. */
export function isConsume(e: Entry): boolean {
  return e.kind === Kind.Consume;
}

let active: Journal | null = null;

/**
 * Told of every change of state made through this module, journal or not (statements.ts: a loop iteration of a header
 * replay is watched for changes outside its own scopes, scope.ts `IterationWatch`).
 */
export interface WriteSpy {
  wrote(owner: Born): void;
}

let spy: WriteSpy | null = null;

/** Makes `s` the one {@link WriteSpy} (null: none), returning the previous one. */
export function spyWrites(s: WriteSpy | null): WriteSpy | null {
  const prev = spy;
  spy = s;
  return prev;
}

/** Makes `j` the journal every change is recorded in (null: none), returning the previous one. */
export function activateJournal(j: Journal | null): Journal | null {
  const prev = active;
  active = j;
  return prev;
}

/** The `born` stamp for an object made now (0 when no journal is active). */
export function bornStamp(): number {
  return active ? active.stamp() : 0;
}

/** `map.set(key, value)`, recorded when a journal is active and `owner` existed at its latest checkpoint. */
export function journaledMapSet<K, V>(owner: Born, map: Map<K, V>, key: K, value: V): void {
  if (spy !== null) spy.wrote(owner);
  if (active) active.recordMap(owner, map as Map<unknown, unknown>, key, value);
  map.set(key, value);
}

/** `obj[key] = value`, recorded likewise. */
export function journaledFieldSet<T extends Born, K extends keyof T & string>(obj: T, key: K, value: T[K]): void {
  if (spy !== null) spy.wrote(obj);
  if (active) active.recordField(obj, obj as unknown as Record<string, unknown>, key, value);
  obj[key] = value;
}

/** Notes that an iterator advanced (cannot be undone). */
export function journalConsume(owner: Born): void {
  if (spy !== null) spy.wrote(owner);
  if (active) active.recordConsume(owner);
}

/** Notes that every attribute of `owner` is read at once (a namespace's `repr`), for the active journal's watcher. */
export function journalReadAll(owner: Born): void {
  active?.watcher?.readAll(owner);
}
