/** Providers as the workers see them: the provider row of TOPUP_PROVIDER, brought in line with the environment at start. */
export { syncEnvironmentProvider } from './service.js';
