# ome-selector as an in-cluster sidecar of the OME controller.
# Build: docker build -t ome-selector .   (needs a Docker engine; none runs on the dev machines)
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
COPY client/python ./client/python
RUN pip install --no-cache-dir . && useradd --uid 65532 --no-create-home selector
USER 65532
EXPOSE 50051
# A sidecar shares the pod's network namespace, so loopback is enough; the controller then
# syncs the cache with CacheService/ApplySnapshot. --wait-for-sync keeps the selection service
# NOT_SERVING until that first snapshot instead of serving the embedded example catalog.
ENTRYPOINT ["ome-selector", "serve", "--listen", "127.0.0.1:50051", "--log-format", "json", "--wait-for-sync"]
