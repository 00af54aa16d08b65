/** Types of scripts/vsix-targets.mjs (the VSIX packages' target table and rules). */
export interface VsixTarget {
  /** VS Code's target (`vsce package --target`), null for the universal package. */
  target: string | null;
  /** process.platform, process.arch and the C library of a machine of that target (null when any). */
  platform: NodeJS.Platform | null;
  arch: NodeJS.Architecture | null;
  libc: 'glibc' | 'musl' | null;
  /** The tokenizers binding's binary the package ships, null for the universal package. */
  binary: string | null;
}
export const REPO: string;
export const VSIX_TARGETS: VsixTarget[];
export const VSIX_MAX_MB: number;
export const TOKENIZERS_DIR: string;
export const TOKENIZERS_FILES: string[];
export const REQUIRED_FILES: string[];
export const JUNK: [string, RegExp][];
export const RUNTIME_EXTERNALS: string[];
export function foreignRequires(code: string): string[];
export function targetLabel(t: VsixTarget): string;
export function vsixFileName(pkg: { name: string; version: string }, t: VsixTarget): string;
export function isMusl(): boolean;
export function hostTarget(): VsixTarget | undefined;
export function tokenizersSource(): string;
export function stageTokenizers(dest: string, t: VsixTarget, source?: string): string[];
export function installedBinaries(source?: string): string[];
export function checkVsixEntries(entries: string[], t: VsixTarget, sizeBytes: number, manifestXml: string): string[];
