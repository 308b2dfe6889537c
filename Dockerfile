# The podsched image: one Python package whose `podsched` command runs every role (apiserver, scheduler,
# load, chaos, healthcheck, ...); docker-compose.yml picks the role with the command.
FROM python:3.11-slim

# No .pyc files written at run time (the image is read-only in spirit); logs unbuffered, so `docker logs`
# shows each line as it is printed.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# What `pip install .` reads: the project metadata (README.md is its long description) and the three
# packages. Generated protobuf code is committed, so no protoc runs here.
COPY pyproject.toml README.md ./
COPY cluster ./cluster
COPY scheduler ./scheduler
COPY store ./store
RUN pip install . && rm -rf /src

# Nothing runs as root by default. The home directory holds the embedded store's default data directory
# (~/.local/share/podsched) when an API server runs without --etcd.
RUN useradd --create-home --uid 10001 --user-group podsched
# Where docker-compose.yml's pki volume is mounted: a new named volume takes the ownership of the
# image's directory, so the certs service (as podsched) can write there and the others read.
RUN mkdir /pki && chown podsched:podsched /pki && chmod 0700 /pki
USER podsched
WORKDIR /home/podsched

ENTRYPOINT ["podsched"]
CMD ["--help"]
