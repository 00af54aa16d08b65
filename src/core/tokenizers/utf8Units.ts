/**
 * A string's UTF-8 bytes with, for each byte, the UTF-16 index of the character it belongs to: what the byte-level
 * BPE merges (our own encode's misses, pieceMiss.ts) and tiktoken's merges (tiktoken/encoder.ts) run on, the index
 * giving each merged token's start in the text.
 */

/**
 * Writes the UTF-8 bytes of `s` (RFC 3629; a lone surrogate as its 3-byte form, as `codePointAt` returns it) into
 * `bytes` from index 0 and, beside each byte, the UTF-16 index in `s` of its character into `unitOf`.
 * @param bytes receives the bytes; at least `s.length * 3` entries (a UTF-16 unit never takes more than 3 bytes).
 * @param unitOf receives each byte's UTF-16 index; at least as long as `bytes` needs.
 * @returns the number of bytes written.
 */
export function utf8WithUnits(s: string, bytes: Uint8Array, unitOf: Int32Array): number {
  let nb = 0;
  for (let u = 0; u < s.length;) {
    const cp = s.codePointAt(u)!;
    if (cp < 0x80) {
      unitOf[nb] = u;
      bytes[nb++] = cp;
    } else if (cp < 0x800) {
      unitOf[nb] = unitOf[nb + 1] = u;
      bytes[nb++] = 0xc0 | (cp >> 6);
      bytes[nb++] = 0x80 | (cp & 63);
    } else if (cp < 0x10000) {
      unitOf[nb] = unitOf[nb + 1] = unitOf[nb + 2] = u;
      bytes[nb++] = 0xe0 | (cp >> 12);
      bytes[nb++] = 0x80 | ((cp >> 6) & 63);
      bytes[nb++] = 0x80 | (cp & 63);
    } else {
      unitOf[nb] = unitOf[nb + 1] = unitOf[nb + 2] = unitOf[nb + 3] = u;
      bytes[nb++] = 0xf0 | (cp >> 18);
      bytes[nb++] = 0x80 | ((cp >> 12) & 63);
      bytes[nb++] = 0x80 | ((cp >> 6) & 63);
      bytes[nb++] = 0x80 | (cp & 63);
    }
    u += cp >= 0x10000 ? 2 : 1;
  }
  return nb;
}
