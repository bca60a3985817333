export { licenseRoutes } from './routes.js';
export { licenseAdminRoutes } from './admin-routes.js';
