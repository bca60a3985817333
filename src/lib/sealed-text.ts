/**
 * A JSON text with sealed secrets cut out of it: `parts[0]`, the array `sealed[0]`, `parts[1]`, … `parts[n]`. The text
 * around the secrets is cut once, when it is read; the secrets stay sealed until it is written out (openSealedArrays),
 * so a kept copy never holds them in the clear. `chars`: its size, text characters and sealed bytes.
 */
export type SealedText = { readonly parts: readonly string[]; readonly sealed: ReadonlyArray<readonly Buffer[]>; readonly chars: number };

/**
 * Cuts out the items of each array that follows `field` (`"name":[`, written by the database as hex strings of the
 * sealed bytes). Only a field can match: inside a JSON string every quote is escaped.
 */
export function cutSealedArrays(text: string, field: string): SealedText {
  const parts: string[] = [];
  const sealed: Buffer[][] = [];
  let chars = 0;
  let from = 0;
  for (let at = text.indexOf(field); at !== -1; at = text.indexOf(field, from)) {
    const start = at + field.length;
    const end = text.indexOf(']', start);
    parts.push(text.slice(from, start));
    const items = start === end ? [] : text.slice(start, end).split(',').map((hex) => Buffer.from(hex.slice(1, -1), 'hex'));
    for (const item of items) chars += item.length;
    sealed.push(items);
    from = end;
  }
  parts.push(text.slice(from));
  for (const part of parts) chars += part.length;
  return { parts, sealed, chars };
}

/** The text with each cut array written back, its items opened, as JSON strings. */
export function openSealedArrays(text: SealedText, open: (sealed: Buffer) => string): string {
  const { parts, sealed } = text;
  let out = parts[0]!;
  for (let i = 0; i < sealed.length; i++) {
    const items = sealed[i]!;
    for (let j = 0; j < items.length; j++) out += (j === 0 ? '' : ',') + JSON.stringify(open(items[j]!));
    out += parts[i + 1]!;
  }
  return out;
}
