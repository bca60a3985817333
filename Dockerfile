# Build: install everything (the postgres.js patch is applied on install), compile to dist/, drop dev packages.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

# Run the compiled JavaScript with node directly (not through npm), so SIGTERM reaches the service (C20).
FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
EXPOSE 3000
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
