/** Types of scripts/real-data-strings.mjs (see its doc comments). */
export declare const REAL_DATA_DIR: string;
export declare function forEachJsonString(dirs: string[], onString: (s: string) => void): void;
