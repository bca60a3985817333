import type { accounts } from '../db/schema.js';
import type { Caller } from '../core/caller.js';
import type { Services } from '../runtime/services.js';

/** Which envelope a failure is rendered in: Interface A (`failed`/`errors`) or B (`error`/`msg`). */
export type Envelope = 'A' | 'B';

/**
 * Read with `c.get(name)`, never `c.var.name`: Hono builds `c.var` as a new object holding every variable on each
 * access, which the profile of a cached read showed as a cost of its own.
 */
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
