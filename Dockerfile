FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY concord concord
COPY annotation annotation
COPY taxonomy taxonomy
COPY ingest ingest
RUN pip install --no-cache-dir .
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
USER nobody
