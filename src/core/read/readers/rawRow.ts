/**
 * The rows the readers yield and the options they take (types only, shared by
 * the container, JSON Lines, JSON document and Parquet readers).
 */

/** One row read from a file. */
export interface RawRow {
  /** 1-based line number of the row (for a JSON document: the line the element starts on). */
  line: number;
  /**
   * 0-based index of the row among the rows that start on the same line, set only
   * when several do (a one-line JSON array, a JSONL line holding a list): it keeps
   * their default ids and output order distinct (`data.json:1[3]`).
   */
  element?: number;
  /** The parsed JSON value; absent when `error` or `raw` is set. */
  value?: unknown;
  /** Why the row could not be parsed, in words that never quote the input, e.g. `invalid JSON: a "," was expected at character 14 of 40`. */
  error?: string;
  /**
   * The row's line as UTF-8 bytes (its trailing CR left out), not parsed: set, instead of `value` or `error`, only
   * when the reader was asked for it ({@link ReadOptions.objectLines}) and the line starts with `{` (one row, never a
   * list of rows). `jsonl.ts` parseLineBytes parses it into the row the reader would have yielded.
   */
  raw?: Uint8Array;
  /** With `raw`: the file's last line, without a newline at its end (a parse error says the file looks truncated). */
  truncated?: true;
  /** Bytes of the file consumed so far (through the end of this row), for progress. */
  bytes: number;
}

/** Options of {@link readRows}. */
export interface ReadOptions {
  /** Stops reading: the generator throws the signal's reason at the next row. */
  signal?: AbortSignal;
  /**
   * While `raw` is true, a JSON Lines line whose first character past spaces and tabs is `{` is yielded unparsed
   * (`RawRow.raw`), for a run that has its rows parsed by the threads that process them (`prepare` with a worker
   * pool, after the rows that detect the file's format). The caller may switch it between rows. JSON documents,
   * Parquet and every other line are read as without it.
   */
  objectLines?: { raw: boolean };
}
