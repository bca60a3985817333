import type { accounts } from '../db/schema.js';
import type { Caller } from '../modules/accounts/service.js';
import type { Services } from '../services.js';

/** Which envelope a failure is rendered in: Interface A (`failed`/`errors`) or B (`error`/`msg`). */
export type Envelope = 'A' | 'B';

export type AppEnv = {
  Variables: {
    services: Services;
    requestId: string;
    envelope: Envelope;
    /** The methods some route answers on a path (empty: no route), for 405 and its `Allow` header. */
    allowedMethods: (path: string) => string[];
    /** The authenticated caller of Interface A. */
    account: Caller;
    /** The owner of the api key of an Interface B request. */
    licenseOwner?: typeof accounts.$inferSelect;
  };
};
