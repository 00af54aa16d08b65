/** Types of scripts/bench-data.mjs (the benchmark's dataset generator). */
export type Shape = 'chat' | 'reasoning' | 'agent' | 'mixed';
export function generateRows(shape: Shape, count: number, seed?: number): Generator<Record<string, unknown>>;
export function writeDataset(file: string, shape: Shape, opts?: { rows?: number; maxBytes?: number; seed?: number }): Promise<{ rows: number; bytes: number }>;
export function parseBytes(v: string | number): number;
