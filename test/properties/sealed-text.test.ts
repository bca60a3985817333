/**
 * An order list page's sealed codes are opened in one pass over the text the database wrote (lib/sealed-text.ts), and
 * the page is kept sealed whole under the process's own key (processSeal): whatever the entries hold, the page opens to
 * the bytes of the entries, and the kept page holds none of its codes in the clear. Arbitrary entries: names, answers
 * and codes with quotes, brackets, backslashes, commas, non-ASCII text and the codes field's own name.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decrypt, encrypt, processSeal } from '../../src/lib/crypto.js';
import { openSealedArrays } from '../../src/lib/sealed-text.js';

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

describe("an order page's sealed codes", () => {
  it('open to the JSON of the entries, codes in the clear, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), (entries) => {
        expect(openSealedArrays(sealedJson(entries), FIELD, (sealed) => decrypt(key, sealed))).toBe(JSON.stringify(entries));
      }),
    );
  });

  it('are kept in no page in the clear: a page sealed whole opens to the same bytes', () => {
    const kept = processSeal();
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), (entries) => {
        const opened = openSealedArrays(sealedJson(entries), FIELD, (sealed) => decrypt(key, sealed));
        const page = kept.seal(opened);
        for (const e of entries) for (const l of e.order_details) for (const c of l.card_codes) expect(page.includes(c)).toBe(false);
        expect(kept.open(page)).toBe(opened);
      }),
    );
  });

  it('refuse a text whose array of sealed items is not closed', () => {
    expect(() => openSealedArrays('[{"card_codes":["00ff"', FIELD, () => '')).toThrow(/not closed/);
  });

  it('are sealed under a key of each process: a page sealed by another, or altered, does not open', () => {
    const [one, other] = [processSeal(), processSeal()];
    const page = one.seal('[{"card_codes":["CODE-1"]}]');
    expect(() => other.open(page)).toThrow();
    const altered = Buffer.from(page);
    altered[altered.length - 1]! ^= 1;
    expect(() => one.open(altered)).toThrow();
    expect(one.open(page)).toBe('[{"card_codes":["CODE-1"]}]');
  });
});
