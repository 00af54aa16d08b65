/**
 * Record lines that came as bytes from a pool worker (records/rowResult.ts `packRecordLines`: one buffer per batch,
 * the lines one after another), written in their order with as few writes as they allow.
 */
import type { Sink } from './runOutputs';

/**
 * Record lines given as bytes, written to `sink` in order, adjacent views of one buffer as one write: a batch's lines
 * whose rows are all written go out in one write rather than one per line. A line that does not follow the span (a row
 * left out between them, another buffer) writes the span first.
 */
export class RecordSpan {
  private span: Uint8Array | null = null;

  constructor(private readonly sink: Sink) {}

  /** Adds the next line's bytes. */
  async add(line: Uint8Array): Promise<void> {
    const s = this.span;
    if (s && s.buffer === line.buffer && s.byteOffset + s.byteLength === line.byteOffset) {
      this.span = new Uint8Array(s.buffer, s.byteOffset, s.byteLength + line.byteLength);
      return;
    }
    await this.flush();
    this.span = line;
  }

  /** Writes what is held (call before any other record write, and at the end). */
  async flush(): Promise<void> {
    const s = this.span;
    this.span = null;
    if (s && s.byteLength) await this.sink.write(s);
  }
}
