# The podsched image: one Python package whose `podsched` command runs every role.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cluster ./cluster
COPY scheduler ./scheduler
COPY store ./store
RUN pip install --no-cache-dir .
ENTRYPOINT ["podsched"]
