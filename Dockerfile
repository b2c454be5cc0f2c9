# syntax=docker/dockerfile:1
# hub's container image: the wheel is built in one stage and installed, with nothing
# else from the repository, in a slim runtime stage that runs as an unprivileged user.
#   docker build -t hub .
#   docker run --rm -e HUB_DATABASE_URL=postgresql://… hub db upgrade
#   docker run -p 8000:8000 -e HUB_DATABASE_URL=postgresql://… -e HUB_SECRET_KEY=… hub
# compose.yaml runs it on PostgreSQL; README.md, "Run it for a team", explains.
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
WORKDIR /src
# What the wheel is made of (pyproject.toml maps migrations/, web/ and graphql/ into it).
COPY pyproject.toml README.md ./
COPY src ./src
COPY migrations ./migrations
COPY web ./web
COPY graphql ./graphql
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM python:${PYTHON_VERSION}-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HUB_ENVIRONMENT=production \
    HUB_VAR_DIR=/var/lib/hub/var \
    HUB_ARTIFACT_DIR=/var/lib/hub/artifacts
COPY --from=build /dist /tmp/dist
RUN python -m pip install --no-cache-dir /tmp/dist/*.whl \
    && rm -rf /tmp/dist \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/hub hub \
    && mkdir -p /var/lib/hub/var /var/lib/hub/artifacts \
    && chown -R hub:hub /var/lib/hub
USER hub
WORKDIR /var/lib/hub
EXPOSE 8000
# Ready means the database answers and its schema is current (`hub db upgrade` ran).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status != 200)"]
# `hub serve` by default; `docker run IMAGE db upgrade` runs another hub command.
ENTRYPOINT ["hub"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
