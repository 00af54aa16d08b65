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
  /** The parsed JSON value; absent when `error` is set. */
  value?: unknown;
  /** Why the row could not be parsed, in words that never quote the input, e.g. `invalid JSON: a "," was expected at character 14 of 40`. */
  error?: string;
  /** Bytes of the file consumed so far (through the end of this row), for progress. */
  bytes: number;
}

/** Options of {@link readRows}. */
export interface ReadOptions {
  /** Stops reading: the generator throws the signal's reason at the next row. */
  signal?: AbortSignal;
}
