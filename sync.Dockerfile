# ome-selector-sync: keeps ome-selector's cache equal to the cluster (client/go/cmd/ome-selector-sync),
# for an unmodified OME manager or deploy/standalone. Build from the repository root:
#   docker build -f sync.Dockerfile --build-arg VERSION="$(python3 scripts/version.py)" \
#     -t <registry>/ome-selector-sync:"$(python3 scripts/version.py)" .
# Stage 1 builds a static binary with the Go module proxy; stage 2 is distroless, non-root.

# Bases pinned by digest (multi-platform indexes). To move one:
#   docker buildx imagetools inspect golang:1.26   /   gcr.io/distroless/static:nonroot
ARG GO_IMAGE=golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647
ARG BASE_IMAGE=gcr.io/distroless/static:nonroot@sha256:e2e927ec666bae08560abb3c55d0659eceabb657f56b6782ab500a9fc7f555e3

FROM ${GO_IMAGE} AS build
WORKDIR /src/client/go
COPY client/go/go.mod client/go/go.sum ./
RUN go mod download
COPY client/go ./
RUN CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o /out/ome-selector-sync ./cmd/ome-selector-sync

FROM ${BASE_IMAGE}
ARG VERSION
LABEL org.opencontainers.image.title="ome-selector-sync" \
      org.opencontainers.image.description="Keeps ome-selector's cache equal to the cluster (controller-runtime)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/ome-selector/ome-selector"
COPY --from=build /out/ome-selector-sync /ome-selector-sync
USER 65532:65532
EXPOSE 8091 8092
ENTRYPOINT ["/ome-selector-sync"]
