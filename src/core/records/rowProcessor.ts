/**
 * The row processor: one raw row → its fate and its tokenized records
 * (normalize → render → mask → tokenize), the unit of work of `prepare`
 * in the run's own thread or in a pool worker.
 */
import { resolve } from 'node:path';
import { normalizeRow } from '../formats/normalize';
import type { RawRow } from '../read/readers';
import type { RowResult, RowSettings } from '../run/contract';
import { ChatTemplate, pickTemplate, TemplateBudgetError } from '../templates/template';
import { loadTokenizer, tokenizerFilesStamp, type TargetTokenizer } from '../tokenizers/tokenizer';
import type { Conversation, MaskPolicy, TokenizedRecord } from '../types';
import { maskedRecordFate, rowFate, type RecordDrop } from './fate';
import { applyGeneratedIds, generatedTurnsOf, type GeneratedTurnIds } from './generatedIds';
import { buildRecords, maskFromSpans, SpecialTokenFinder, TemplateRenderError } from './mask';

const tokenizerCache = new Map<string, TargetTokenizer>();

/**
 * Loads a tokenizer once per process: runs over several inputs (and the
 * extension's repeated runs) reuse it while its files are unchanged (keyed by
 * folder and the files' modification times).
 */
export function cachedTokenizer(dir: string | undefined): TargetTokenizer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const key = `${folder}|${stamp}`;
  let tok = tokenizerCache.get(key);
  if (!tok) {
    tok = loadTokenizer(dir);
    tokenizerCache.set(key, tok);
  }
  return tok;
}

/**
 * Turns raw rows into {@link RowResult}s: normalize → render → mask → tokenize.
 * Synchronous and self-contained (one per thread); it loads the tokenizer once
 * per process (`cachedTokenizer`). Rows never share state, so any number of
 * processors give the same results for the same rows.
 */
export class RowProcessor {
  readonly tok: TargetTokenizer;
  private readonly specials: SpecialTokenFinder;
  private readonly templates = new Map<string, ChatTemplate>();
  private readonly mask: MaskPolicy;

  /** @throws TokenizerLoadError for an unusable tokenizer folder */
  constructor(readonly settings: RowSettings) {
    this.tok = cachedTokenizer(settings.tokenizerDir);
    this.specials = new SpecialTokenFinder(this.tok.specialTokens);
    this.mask = settings.mask ?? 'assistant';
  }

  private templateFor(hasTools: boolean): ChatTemplate {
    const named = pickTemplate(this.tok.templates, hasTools);
    if (!named) throw new TemplateRenderError(`tokenizer ${this.tok.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
    let t = this.templates.get(named.name);
    if (!t) {
      t = new ChatTemplate(named, this.tok.specialTokenVars, this.settings.templateKwargs ?? {});
      this.templates.set(named.name, t);
    }
    return t;
  }

  /**
   * Processes one row of `file` (`fileBase` = its basename, for default ids).
   * Never throws for bad data: a row that cannot be used is `dropped` or `errored`.
   */
  processRow(row: Pick<RawRow, 'line' | 'element' | 'value' | 'error'>, file: string, fileBase: string): RowResult {
    const res: RowResult = { line: row.line, fate: 'errored', notes: [], records: [], trainableTokens: 0, totalTokens: 0 };
    if (row.error !== undefined) {
      res.message = row.error;
      return res;
    }
    const outcome = normalizeRow(row.value, row.element === undefined ? { file, line: row.line } : { file, line: row.line, element: row.element }, fileBase);
    switch (outcome.kind) {
      case 'conversation':
        res.notes.push(...(outcome.conversation.notes ?? []));
        this.processConversation(res, outcome.conversation, generatedTurnsOf(row.value));
        break;
      case 'prompt': {
        const c = outcome.conversation;
        // Everything the server needs to answer: tool calls and their results keep their ids and names.
        const msgs = c.messages.map((m) => ({
          role: m.role,
          content: m.content ?? '',
          ...(m.reasoning_content ? { reasoning_content: m.reasoning_content } : {}),
          ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
          ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
          ...(m.name ? { name: m.name } : {}),
        }));
        res.prompt = JSON.stringify({ id: c.id, source: c.source, messages: msgs, ...(c.tools?.length ? { tools: c.tools } : {}) }) + '\n';
        res.fate = 'setAside';
        break;
      }
      case 'dropped':
        res.fate = 'dropped';
        res.reason = outcome.reason;
        break;
      case 'errored':
        res.message = outcome.message;
        break;
    }
    return res;
  }

  /** Turns one conversation into tokenized record lines; sets the row's fate. */
  private processConversation(res: RowResult, conv: Conversation, generated?: GeneratedTurnIds[]): void {
    let built;
    let template: ChatTemplate | undefined;
    try {
      template = this.templateFor((conv.tools?.length ?? 0) > 0);
      built = buildRecords(conv, template, this.specials, this.mask);
    } catch (e) {
      if (e instanceof TemplateRenderError) {
        res.fate = 'errored';
        res.message = `chat template error: ${e.message}`;
        if (e instanceof TemplateBudgetError) res.reason = e.code;
        return;
      }
      throw e;
    }
    res.notes.push(...built.notes);
    if (built.records.length > 1) res.notes.push('split_into_records');
    for (const te of built.targetErrors) res.notes.push(te.reason);
    const drops: RecordDrop[] = [];
    for (let r = 0; r < built.records.length; r++) {
      const rec = built.records[r];
      const enc = this.tok.encode(rec.text);
      if (!enc.exactOffsets) res.notes.push('offsets_approximate');
      let ids = enc.ids;
      let mask = maskFromSpans(enc.starts, rec.spans);
      // Rows written by `generate` carry the generated token ids (src/core/records/generatedIds.ts).
      let idsSource: 'generated' | 'retokenized' | undefined;
      if (generated) {
        const g = applyGeneratedIds(rec, enc, mask, generated, (x) => this.tok.decode(x));
        ({ ids, mask } = g);
        idsSource = g.source;
        res.notes.push(g.source === 'generated' ? 'generated_token_ids_used' : `retokenized_${g.reason}`);
      }
      const fate = maskedRecordFate(mask, this.settings);
      if (fate.truncated) res.notes.push('record_truncated');
      if (!fate.written) {
        drops.push(fate.reason);
        res.notes.push(`record_dropped_${fate.reason}`);
        continue;
      }
      if (fate.truncated) {
        ids = ids.slice(0, fate.keep);
        mask = mask.slice(0, fate.keep);
      }
      const nResp = fate.trainable;
      const out: TokenizedRecord = {
        id: built.records.length > 1 ? `${conv.id}#${r}` : conv.id,
        source:
          conv.source.element === undefined
            ? { file: conv.source.file, line: conv.source.line }
            : { file: conv.source.file, line: conv.source.line, element: conv.source.element },
        input_ids: ids,
        loss_mask: mask,
        seq_len: ids.length,
        n_prompt_tokens: ids.length - nResp,
        n_response_tokens: nResp,
        ...(idsSource ? { ids_source: idsSource } : {}),
      };
      res.records.push(JSON.stringify(out) + '\n');
      res.trainableTokens += nResp;
      res.totalTokens += ids.length;
    }
    const row = rowFate({ written: res.records.length, drops, targetErrors: built.targetErrors });
    res.fate = row.fate;
    if (row.fate === 'errored') res.message = `${row.targetError.reason}: ${row.targetError.message}; template "${template.named.name}" of ${this.tok.dir}`;
    else if (row.fate === 'dropped') res.reason = row.reason;
  }
}
