/**
 * An order list page is cut around its sealed codes once, when it is read from the database, and kept that way
 * (lib/sealed-text.ts): whatever the entries hold, opening the kept page gives the bytes the clients got before, and the
 * kept page never holds a code in the clear. Arbitrary entries: names, answers and codes with quotes, brackets,
 * backslashes, commas, non-ASCII text and the codes field's own name.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decrypt, encrypt } from '../../src/lib/crypto.js';
import { cutSealedArrays, openSealedArrays } from '../../src/lib/sealed-text.js';

const FIELD = '"card_codes":[';
const key = randomBytes(32);

const tricky = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('"card_codes":[', '"card_codes":["x"]', '],[', '\\"', ',', ']'));
/** Codes tell themselves apart from any other text, so a kept page can be searched for them. */
const code = fc.tuple(tricky, fc.uuid()).map(([text, id]) => `${text}-CODE-${id}`);
const line = fc.record({ service: tricky, card_codes: fc.array(code, { maxLength: 4 }), stock_short: tricky });
const entry = fc.record({ utr: fc.uuid(), informations: fc.dictionary(tricky, tricky, { maxKeys: 2 }), order_details: fc.array(line, { maxLength: 3 }) });

/** The entries as the database writes them: every code sealed, in hex. */
const sealedJson = (entries: unknown) =>
  JSON.stringify(entries, (name, value) => (name === 'card_codes' && Array.isArray(value) ? (value as string[]).map((c) => encrypt(key, c).toString('hex')) : value));

describe('a page cut around its sealed codes', () => {
  it('opens to the JSON of the entries, codes in the clear, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), (entries) => {
        const kept = cutSealedArrays(sealedJson(entries), FIELD);
        expect(openSealedArrays(kept, (sealed) => decrypt(key, sealed))).toBe(JSON.stringify(entries));
      }),
    );
  });

  it('keeps no code in the clear: only the text the database wrote, its codes sealed', () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), (entries) => {
        const text = sealedJson(entries);
        const kept = cutSealedArrays(text, FIELD);
        expect(kept.text).toBe(text);
        for (const e of entries) for (const l of e.order_details) for (const c of l.card_codes) expect(kept.text).not.toContain(c);
        // One array found per card line.
        expect(kept.arrays.length / 2).toBe(entries.flatMap((e) => e.order_details).length);
      }),
    );
  });

  it('refuses a text whose array of sealed items is not closed', () => {
    expect(() => cutSealedArrays('[{"card_codes":["00ff"', FIELD)).toThrow(/not closed/);
  });
});
