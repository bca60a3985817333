/**
 * A JSON text holding arrays of sealed secrets (hex strings), with where each array's items sit found once, when it is
 * read: `arrays` holds each array's start and end (its items, between `[` and `]`) in `text`. The secrets stay
 * sealed in the text until it is written out (openSealedArrays), so a kept copy never holds them in the clear, and
 * writing it out does not search the text again. It is kept as one string: the size a cache counts is `text.length`.
 */
export type SealedText = { readonly text: string; readonly arrays: Uint32Array };

/**
 * Finds the items of each array that follows `field` (`"name":[`, written by the database as hex strings of the
 * sealed bytes). Only a field can match: inside a JSON string every quote is escaped.
 */
export function cutSealedArrays(text: string, field: string): SealedText {
  const bounds: number[] = [];
  for (let at = text.indexOf(field); at !== -1; ) {
    const start = at + field.length;
    const end = text.indexOf(']', start);
    if (end === -1) throw new Error(`an array of sealed items is not closed at ${start}`);
    bounds.push(start, end);
    at = text.indexOf(field, end);
  }
  return { text, arrays: Uint32Array.from(bounds) };
}

/** The text with each array's items opened, as JSON strings. */
export function openSealedArrays({ text, arrays }: SealedText, open: (sealed: Buffer) => string): string {
  let out = '';
  let from = 0;
  for (let a = 0; a < arrays.length; a += 2) {
    const [start, end] = [arrays[a]!, arrays[a + 1]!];
    out += text.slice(from, start);
    // Items `"<hex>"` separated by commas, none inside an item.
    for (let item = start; item < end; ) {
      const comma = text.indexOf(',', item);
      const stop = comma === -1 || comma > end ? end : comma;
      out += (item === start ? '' : ',') + JSON.stringify(open(Buffer.from(text.slice(item + 1, stop - 1), 'hex')));
      item = stop + 1;
    }
    from = end;
  }
  return out + text.slice(from);
}
