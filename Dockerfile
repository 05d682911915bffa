# triad's production image: a static binary on a distroless base, run as a non-root user.
# Build: docker build --build-arg REVISION=$(git rev-parse HEAD) --build-arg VERSION=$(git describe --tags --always) -t triad .
# (the two name the build in /metrics' triad_build_info; the context has no .git to read them from)   Run: docker run -e DATABASE_URL=... -e AUTH_SECRET=... triad
# The image never manages its own PostgreSQL: prod mode needs DATABASE_URL (see docs/deploy.md).

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a code change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=unknown
ARG REVISION=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -X github.com/triadhq/triad/impl/kit/metrics.Version=${VERSION} -X github.com/triadhq/triad/impl/kit/metrics.Revision=${REVISION}" -o /out/server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/server /server
# 65532 is distroless's "nonroot"; numeric so a runtime can check runAsNonRoot without /etc/passwd.
USER 65532:65532
ENV MODE=prod ADDR=:8080 DATA_DIR=/tmp/triad
EXPOSE 8080
ENTRYPOINT ["/server"]
