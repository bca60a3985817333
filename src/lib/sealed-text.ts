/**
 * Opens the arrays of sealed secrets (hex strings, as the database writes them) that follow `field` (`"name":[`) in a
 * JSON text, in one pass: each item becomes the JSON string of its opened secret. Only a field can match: inside a
 * JSON string every quote is escaped.
 */
export function openSealedArrays(text: string, field: string, open: (sealed: Buffer) => string): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf(field); at !== -1; at = text.indexOf(field, from)) {
    const start = at + field.length;
    const end = text.indexOf(']', start);
    if (end === -1) throw new Error(`an array of sealed items is not closed at ${start}`);
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
