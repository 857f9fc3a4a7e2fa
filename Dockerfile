# ome-selector: the runtime selection service, as the OME controller's sidecar or on its own.
# Build (needs a Docker engine; none runs on the dev machines), the version from pyproject.toml:
#   docker build --build-arg VERSION="$(python3 scripts/version.py)" -t <registry>/ome-selector:"$(python3 scripts/version.py)" .
#
# Stage 1 builds the wheel; stage 2 installs only that wheel (and its dependencies) into a
# slim Python, and runs as a non-root user. Every setting is an OME_SELECTOR_* environment
# variable (README "Deploy on Kubernetes"), so a Deployment overrides them without replacing
# the command. tests/test_sidecar_image.py runs this image's ENTRYPOINT with these ENV values
# outside a container.

# The base, pinned by digest (the multi-platform index of python:3.11-slim). To move it:
#   docker buildx imagetools inspect python:3.11-slim   (the Digest line), or --build-arg PYTHON_IMAGE=...
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY client/python ./client/python
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
# The version label, which must be the wheel's version (the build stops otherwise).
ARG VERSION
LABEL org.opencontainers.image.title="ome-selector" \
      org.opencontainers.image.description="gRPC service that selects the serving runtime for OME InferenceServices" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/ome-selector/ome-selector"
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile --no-index --find-links /wheels ome-selector && rm -rf /wheels \
    && installed="$(python -c 'from importlib.metadata import version; print(version("ome-selector"))')" \
    && { [ "$installed" = "$VERSION" ] || { echo "VERSION=$VERSION but the wheel is $installed: pass --build-arg VERSION=\"\$(python3 scripts/version.py)\"" >&2; exit 1; }; } \
    && useradd --uid 65532 --user-group --no-create-home --shell /usr/sbin/nologin selector \
    && mkdir -p /run/ome-selector && chown 65532:65532 /run/ome-selector
USER 65532:65532
# The API on a unix socket (share /run/ome-selector with the controller's container, an
# emptyDir in Kubernetes); probes on every interface, port 8090 (not one of the
# OME manager's 8080, 8081, 9443), so kubelet (which connects to the pod IP) reaches them; metrics apart, on port 9090.
# Nothing is served from the example catalog: the cache stays empty and not ready until the
# first ApplySnapshot.
ENV PYTHONUNBUFFERED=1 \
    OME_SELECTOR_LISTEN=unix:/run/ome-selector/api.sock \
    OME_SELECTOR_HTTP_LISTEN=0.0.0.0:8090 \
    OME_SELECTOR_METRICS_LISTEN=0.0.0.0:9090 \
    OME_SELECTOR_LOG_FORMAT=json \
    OME_SELECTOR_WAIT_FOR_SYNC=true \
    OME_SELECTOR_DRAIN_DELAY=5 \
    OME_SELECTOR_GRACE=10
EXPOSE 8090 9090
STOPSIGNAL SIGTERM
ENTRYPOINT ["ome-selector", "serve"]
