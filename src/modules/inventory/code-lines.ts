import { validationError } from '../../core/errors.js';

/** The longest card code, as the `codes` field of the API allows. */
export const MAX_CODE_CHARS = 500;

/** A line this long cannot hold a code even with surrounding blanks: refused before it is buffered further. */
const MAX_LINE_CHARS = 64 * 1024;

/** The failure of one code of an import, naming its line (its position, for a list). */
export const badCode = (line: number, problem: string) => validationError([`The code on line ${line} ${problem}`]);

export const tooLong = (line: number) => badCode(line, `must not be greater than ${MAX_CODE_CHARS} characters.`);

/**
 * The lines of a UTF-8 byte stream (`\n` or `\r\n` endings; the caller trims), split across chunk boundaries
 * and pulled only as they are consumed: a file or an upload of any size is never held whole.
 */
export async function* codeLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Uint8Array) => {
    try {
      return decoder.decode(chunk, { stream: chunk !== undefined });
    } catch {
      throw validationError(['The codes field must be UTF-8 text.']);
    }
  };
  let rest = '';
  let line = 0;
  for await (const chunk of chunks) {
    const lines = (rest + decode(chunk)).split('\n');
    rest = lines.pop()!;
    line += lines.length;
    yield* lines;
    if (rest.length > MAX_LINE_CHARS) throw tooLong(line + 1);
  }
  rest += decode();
  if (rest !== '') yield rest;
}
