# The service image: Node 24 (pinned through the npm `node` package as well), Debian Chromium for the
# gateway-link monitors. One image, three roles: serve (default), api, worker.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends chromium tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production CHROMIUM_PATH=/usr/bin/chromium PORT=4000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY src/dashboard/public ./src/dashboard/public
COPY src/checkout/public ./src/checkout/public
USER node
EXPOSE 4000
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/src/main.js"]
CMD ["serve"]
