# ome-selector: the runtime selection service, as the OME controller's sidecar.
# Build: docker build -t ome-selector:0.1.0 .   (needs a Docker engine; none runs on the dev machines)
#
# Stage 1 builds the wheel; stage 2 installs only that wheel (and its dependencies) into a
# slim Python, and runs as a non-root user. Every setting is an OME_SELECTOR_* environment
# variable (README "Deploy on Kubernetes"), so a Deployment overrides them without replacing
# the command. tests/test_sidecar_image.py runs this image's ENTRYPOINT with these ENV values
# outside a container.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY client/python ./client/python
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="ome-selector" \
      org.opencontainers.image.description="gRPC service that selects the serving runtime for OME InferenceServices" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/ome-selector/ome-selector"
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile --no-index --find-links /wheels ome-selector && rm -rf /wheels \
    && useradd --uid 65532 --user-group --no-create-home --shell /usr/sbin/nologin selector \
    && mkdir -p /run/ome-selector && chown 65532:65532 /run/ome-selector
USER 65532:65532
# The API on a unix socket (share /run/ome-selector with the controller's container, an
# emptyDir in Kubernetes); probes on every interface, port 8081, so kubelet (which connects
# to the pod IP) reaches them; metrics apart, on port 9090. Nothing is served from the example catalog:
# the cache stays empty and not ready until the controller's first ApplySnapshot.
ENV PYTHONUNBUFFERED=1 \
    OME_SELECTOR_LISTEN=unix:/run/ome-selector/api.sock \
    OME_SELECTOR_HTTP_LISTEN=0.0.0.0:8081 \
    OME_SELECTOR_METRICS_LISTEN=0.0.0.0:9090 \
    OME_SELECTOR_LOG_FORMAT=json \
    OME_SELECTOR_WAIT_FOR_SYNC=true \
    OME_SELECTOR_DRAIN_DELAY=5 \
    OME_SELECTOR_GRACE=10
EXPOSE 8081 9090
STOPSIGNAL SIGTERM
ENTRYPOINT ["ome-selector", "serve"]
