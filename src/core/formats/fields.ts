/**
 * Which fields of a row were read: the general rule of issue 12 — a field on a
 * turn (or on the row) that is neither read by the shape handler nor known
 * metadata is reported (`unread_fields`), never dropped in silence.
 *
 * The handlers mark what they read ({@link FieldTracker.use}); the row and every
 * turn object they convert are registered ({@link FieldTracker.track}); what is
 * left over, minus {@link isMetadataField} and empty values, is the row's list of
 * unread field paths (`generated_patch`, `messages[].mask`).
 *
 * The metadata list is the one place that says which keys never carry the
 * model's words (ids, timestamps, model names, provenance, ratings). Keep it
 * short and obvious: a key that may hold text belongs in a handler, not here.
 */

/** Keys that are metadata whatever their value: ids, timestamps, model names, provenance, ratings, moderation, bookkeeping. */
const METADATA_KEYS: ReadonlySet<string> = new Set([
  // ids (formats/base.ts ID_KEYS and their relatives)
  'id',
  '_id',
  'idx',
  'uid',
  'uuid',
  'key',
  'hash',
  'conversation_hash',
  'instance_id',
  'conversation_id',
  'sample_id',
  'example_id',
  'task_id',
  'trajectory_id',
  'session_id',
  'question_id',
  'answer_id',
  'prompt_id',
  'custom_id',
  'message_id',
  'parent_id',
  'message_tree_id',
  'user_id',
  'turn_id',
  'turn_identifier',
  'step_id',
  'run_id',
  'index',
  // timestamps
  'created',
  'created_at',
  'created_date',
  'updated_at',
  'timestamp',
  'tstamp',
  'time',
  'date',
  'datetime',
  'cutoff_date',
  // models and generation bookkeeping
  'model',
  'model_name',
  'model_id',
  'generator',
  'engine',
  'system_fingerprint',
  'finish_reason',
  'usage',
  'object',
  'logprobs',
  // provenance
  'source',
  'dataset',
  'data_source',
  '_dataset_name',
  'split',
  'subset',
  'origin',
  'url',
  'method',
  'license',
  'lang',
  'language',
  'locale',
  'country',
  'state',
  'hashed_ip',
  'header',
  'extra_info',
  'metadata',
  'meta',
  // classification, ratings, moderation
  'category',
  'categories',
  'tags',
  'topic',
  'domain',
  'difficulty',
  'score',
  'scores',
  'rating',
  'ratings',
  'quality',
  'reward',
  'toxic',
  'redacted',
  'openai_moderation',
  'detoxify',
  'emojis',
  'labels',
  'review_count',
  'review_result',
  'deleted',
  'synthetic',
  'tree_state',
  'num_turns',
  'turn',
  'length',
  'token_count',
  'metrics',
  'execution_time',
  // reference answers kept for grading, not what a model wrote in the conversation (OpenMathInstruct "expected_answer")
  'expected_answer',
  // agent-run bookkeeping (SWE-agent / SWE-bench style runs: outcome and evaluation, not what the model wrote in the turns)
  'exit_status',
  'eval_logs',
  'generated_patch',
  'model_patch',
  'resolved',
  'is_demo',
  'is_classification',
  'cache_control',
  'annotations',
]);

/** Keys that are metadata only when their value is not text (a boolean, a number, or one short word): `label: true`, `target: false`, `type: "message"`. */
const NON_TEXT_METADATA_KEYS: ReadonlySet<string> = new Set([
  'label',
  'target',
  'type',
  'kind',
  'status',
  'rank',
  'name',
  'role',
  'agent',
  'message_type',
  'weight',
  'version',
  // Nemotron post-training rows: "reasoning": "on" | "off" (a switch; a reasoning text is read by the handlers or reported)
  'reasoning',
  'used_in_training',
]);

/**
 * Name endings of metadata fields (`chosen_rating`, `chosen-model`, `instruction_id`, `created_at`, `prompt_tokens`):
 * metadata unless the value holds words.
 */
const METADATA_SUFFIX_RE =
  /(^|[_-])(id|ids|uuid|hash|at|date|time|timestamp|rating|ratings|score|scores|model|models|lang|language|source|url|count|length|tokens|license)$/i;

/** A value that may hold what someone wrote: a string with a space longer than 40 characters, or a list / object holding one (two levels). */
function holdsWords(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.length > 40 && /\s/.test(v);
  if (depth >= 2 || v === null || typeof v !== 'object') return false;
  return (Array.isArray(v) ? v : Object.values(v)).some((x) => holdsWords(x, depth + 1));
}

/**
 * Whether `key` (with this value) is known metadata: never carries the model's words, so it is not reported when
 * no handler reads it. Three rules: a name of {@link METADATA_KEYS} (any value); a name of
 * {@link NON_TEXT_METADATA_KEYS} whose value is not text (a boolean, a number, one short word); a name ending like
 * metadata (`_id`, `_at`, `_rating`, `-model`, …) whose value holds no words.
 */
export function isMetadataField(key: string, value: unknown): boolean {
  if (METADATA_KEYS.has(key)) return true;
  if (NON_TEXT_METADATA_KEYS.has(key)) {
    return value === null || typeof value === 'boolean' || typeof value === 'number' || (typeof value === 'string' && value.length <= 40 && !/\s/.test(value));
  }
  return METADATA_SUFFIX_RE.test(key) && !holdsWords(value);
}

/** A value that holds nothing (null, `""`, `[]`, `{}`): not reported even when unread. */
function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

/**
 * Records, for one row, the objects whose fields must be accounted for (the
 * row, its turns, sub-objects such as OpenAI preference `input`) and the fields
 * the handler read.
 */
export class FieldTracker {
  private readonly tracked: { obj: Record<string, unknown>; label: string }[] = [];
  // Strong collections: a tracker lives for one row, whose objects are alive while it does. (Weak ones cost more to
  // create and fill, and every garbage collection walks them; one of each was made per row of prepare.)
  private readonly seen = new Set<object>();
  private readonly used = new Map<object, Set<string>>();
  private readonly whole = new Set<object>();
  /** Field paths reported by the handler itself (a mapping's unmapped fields, an OpenAssistant message's). */
  private readonly extra: string[] = [];

  /** Registers an object whose own fields must be read or be metadata; `label` prefixes its field paths (`""` for the row, `messages[].`). */
  track(obj: Record<string, unknown>, label: string): void {
    if (this.seen.has(obj)) return;
    this.seen.add(obj);
    this.tracked.push({ obj, label });
  }

  /** Marks fields of `obj` as read. */
  use(obj: Record<string, unknown>, ...keys: string[]): void {
    let s = this.used.get(obj);
    if (!s) this.used.set(obj, (s = new Set()));
    for (const k of keys) s.add(k);
  }

  /** The fields of `obj` marked read so far (undefined when none). */
  usedKeys(obj: Record<string, unknown>): ReadonlySet<string> | undefined {
    return this.used.get(obj);
  }

  /** Marks every field of `obj` as read (an object whose fields were all interpreted, e.g. a row rewritten by a field mapping). */
  useAll(obj: Record<string, unknown>): void {
    this.whole.add(obj);
  }

  /** Adds field paths found unread elsewhere (already filtered of metadata). */
  report(paths: readonly string[]): void {
    for (const p of paths) if (!this.extra.includes(p)) this.extra.push(p);
  }

  /**
   * The values of the unread fields of the tracked objects, by field path (a path of a turn list, such as
   * `messages[].critique`, gathers the values of every turn that has it). Paths reported by the handler itself
   * ({@link FieldTracker.report}) have no values here.
   */
  unreadValues(): Map<string, unknown[]> {
    const out = new Map<string, unknown[]>();
    for (const { obj, label } of this.tracked) {
      if (this.whole.has(obj)) continue;
      const used = this.used.get(obj);
      for (const k of Object.keys(obj)) {
        const v = obj[k];
        if (used?.has(k) || k.startsWith('$') || isEmptyValue(v) || isMetadataField(k, v)) continue;
        const path = `${label}${k}`;
        const list = out.get(path);
        if (list) list.push(v);
        else out.set(path, [v]);
      }
    }
    return out;
  }

  /** The unread field paths, in order of first appearance, each once. */
  unread(): string[] {
    const out = new Set(this.extra);
    for (const { obj, label } of this.tracked) {
      if (this.whole.has(obj)) continue;
      const used = this.used.get(obj);
      // Keys, not entries: no [key, value] pair made per field of every turn of every row.
      for (const k of Object.keys(obj)) {
        const v = obj[k];
        if (used?.has(k) || k.startsWith('$') || isEmptyValue(v) || isMetadataField(k, v)) continue;
        out.add(`${label}${k}`);
      }
    }
    return [...out];
  }
}

/** The unread, non-metadata, non-empty keys of an object (for callers that rewrite rows before the handlers see them). */
export function unreadKeys(obj: Record<string, unknown>, read: Iterable<string>, label = ''): string[] {
  const r = new Set(read);
  return Object.entries(obj)
    .filter(([k, v]) => !r.has(k) && !k.startsWith('$') && !isEmptyValue(v) && !isMetadataField(k, v))
    .map(([k]) => `${label}${k}`);
}
