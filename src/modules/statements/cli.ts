import { optionsInput, pageOptions } from '../../cli/input.js';
import type { CliCommand } from '../../cli/types.js';
import { pageRequest } from '../../lib/paging.js';
import { existingAccount } from '../accounts/service.js';
import { StatementQuery } from './schemas.js';
import { statementBatches, statementCsv, statementPage } from './service.js';

/** C24 for operators: any account's statement, as the admin API shows it. */
export const statementCommands: Record<string, CliCommand> = {
  'accounts:statement': {
    description: "An account's statement, newest first; with --csv every entry of the range as CSV",
    args: [{ name: 'accountId', description: 'id of the account', kind: 'id' }],
    options: [
      { name: 'from', value: '<date>', description: 'entries from this day (UTC) or instant (2026-11-01T12:00:00Z) on' },
      { name: 'to', value: '<date>', description: 'entries up to this day (UTC, included) or instant' },
      ...pageOptions('entries', 20),
      { name: 'csv', description: 'every entry of the range as CSV on stdout, no paging' },
    ],
    run: async ({ db, sql }, [id], { csv, ...options }, io) => {
      const accountId = await existingAccount(db, Number(id));
      const query = optionsInput(StatementQuery, options);
      const range = { from: query.from, to: query.to };
      if (csv) {
        for await (const chunk of statementCsv(statementBatches(sql, accountId, range))) await io.write(chunk);
        return undefined;
      }
      const page = pageRequest(query, 20);
      const { entries, total } = await statementPage(sql, accountId, range, page);
      return { current_page: page.page, per_page: page.perPage, total, data: entries };
    },
  },
};
