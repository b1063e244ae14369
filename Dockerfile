# Builds the same single executable as `bun run build`, then ships it alone on a slim base.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Bun itself comes from the npm registry (package "bun"), like everything else.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx bun run build

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin switchboard \
 && mkdir -p /data && chown switchboard /data
COPY --from=build /src/dist/switchboard /usr/local/bin/switchboard
USER switchboard
WORKDIR /data
VOLUME ["/data"]
ENV DATABASE_URL=file:/data/switchboard.db \
    HOST=0.0.0.0 \
    PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD ["switchboard", "healthcheck"]
ENTRYPOINT ["switchboard"]
CMD ["serve"]
