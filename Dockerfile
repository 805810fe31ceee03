FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# msgfmt compiles the translations (locale/*/LC_MESSAGES/django.po) at build time.
RUN apt-get update && apt-get install -y --no-install-recommends gettext \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml ./
COPY concord concord
COPY annotation annotation
COPY taxonomy taxonomy
COPY ingest ingest
RUN pip install --no-cache-dir .
COPY . .
RUN SECRET_KEY=build-only python manage.py compilemessages --ignore='.venv/*' --ignore='var/*' \
    && SECRET_KEY=build-only python manage.py collectstatic --noinput
USER nobody
