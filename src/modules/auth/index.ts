export { authRoutes } from './routes.js';
export { requireToken } from './middleware.js';
