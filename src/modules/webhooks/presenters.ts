import { isoMicros } from '../../lib/time.js';
import type { Endpoint } from './endpoints.js';

export const presentEndpoint = ({ failingSince, disabledAt, createdAt, ...rest }: Endpoint) => ({
  ...rest,
  failing_since: isoMicros(failingSince),
  disabled_at: isoMicros(disabledAt),
  created_at: isoMicros(createdAt),
});
