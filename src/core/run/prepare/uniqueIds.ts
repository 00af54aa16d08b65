/**
 * Record and prompt ids unique within a run's outputs: a conversation whose id
 * (the source's own `id` field, README "Outputs") was already used earlier in
 * the run gets `<id>~2`, `<id>~3`, … in its records (`<id>~2#0`, …) and prompt
 * lines, and the row the note `duplicate_id_renamed`.
 */
import { recordLineTexts, type RowResult } from '../../records/rowResult';

export class UniqueIds {
  /** Ids used so far → the last suffix given to a duplicate of it (1: used once). */
  private readonly used = new Map<string, number>();

  /**
   * Renames the duplicate conversation ids of one row's records and prompt lines (in place)
   * and notes the row; returns the ids it took, for {@link forget}.
   */
  apply(res: RowResult): string[] {
    const convIds = [...new Set([...(res.recordConvIds ?? []), ...(res.promptIds ?? []), ...(res.conversations ?? []).map((c) => c.id)])];
    const renamed = new Map<string, string>();
    const taken: string[] = [];
    for (const id of convIds) {
      let k = this.used.get(id);
      if (k === undefined) {
        this.used.set(id, 1);
        taken.push(id);
        continue;
      }
      let alt: string;
      do alt = `${id}~${++k}`;
      while (this.used.has(alt));
      this.used.set(id, k);
      this.used.set(alt, 1);
      taken.push(alt);
      renamed.set(id, alt);
    }
    if (!renamed.size) return taken;
    res.notes.push('duplicate_id_renamed');
    const rename = (line: string, conv: string | undefined): string => {
      const to = conv === undefined ? undefined : renamed.get(conv);
      if (to === undefined || line === '') return line; // '': a record line not made (--format messages)
      const v = JSON.parse(line) as { id: string };
      v.id = to + v.id.slice(conv!.length);
      return JSON.stringify(v) + '\n';
    };
    res.records = recordLineTexts(res).map((l, i) => rename(l, res.recordConvIds?.[i]));
    delete res.recordBytes;
    res.conversations = res.conversations?.map((c) => ({
      id: renamed.get(c.id) ?? c.id,
      messages: rename(c.messages, c.id),
      ...(c.sharegpt !== undefined ? { sharegpt: rename(c.sharegpt, c.id) } : {}),
    }));
    if (res.prompt && res.promptIds) {
      const lines = res.prompt.split('\n').slice(0, -1);
      res.prompt = lines.map((l, i) => rename(l + '\n', res.promptIds![i])).join('');
    }
    return taken;
  }

  /** Forgets ids taken by rows taken back out of the outputs (`--skip-failed-files`). */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.used.delete(id);
  }
}
