FROM python:3.11-slim
# VAR_DIR (uploads, exports) is docker-compose.yml's concord-var volume; the static files are
# collected at build into the image, outside it (a volume hides what the image has at its path).
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    CONCORD_VAR_DIR=/var/lib/concord CONCORD_STATIC_ROOT=/app/staticfiles
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
    && SECRET_KEY=build-only python manage.py collectstatic --noinput \
    && chown nobody:nogroup /var/lib/concord
# A new named volume takes the owner of the image's folder at its mount point: nobody may write.
USER nobody
