export { orderRoutes } from './routes.js';
