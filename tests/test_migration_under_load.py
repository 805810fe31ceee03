"""A deploy that migrates while volunteers label: a column the labeling path reads and writes on
every request changes type (Item.label_count, smallint to integer, as an AlterField migration
does it) under gunicorn + PostgreSQL with volunteers submitting. No answer is a 5xx, no label is
lost, no item passes k (issue #25).

With statements prepared on the server, every kept connection failed after such a change
("cached plan must not change result type") until it was recycled; Concord now sends plain SQL.
"""

import secrets
import threading
import time

import pytest

from tests.load import drive, outcome
from tests.stack import app_on_private_postgres, manage

SLUG = "migrating"

# What a migration's AlterField runs: Django's schema editor, in a process of its own against the
# served database, while the served processes keep their model (and their kept connections).
ALTER_LABEL_COUNT = """
from django.db import connection, models
from annotation.models import Item

old = Item._meta.get_field("label_count")
new = models.PositiveIntegerField(default=0)
new.set_attributes_from_name("label_count")
new.model = Item
with connection.schema_editor() as editor:
    editor.alter_field(Item, old, new)
with connection.cursor() as cursor:
    cursor.execute(
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_name = 'annotation_item' AND column_name = 'label_count'"
    )
    print(cursor.fetchone()[0])
"""


@pytest.fixture(scope="module")
def app():
    with app_on_private_postgres(
        slug=SLUG, volunteers=8, items=400, password=secrets.token_urlsafe(12)
    ) as app:
        yield app


def test_a_column_type_change_while_volunteers_label_gives_no_5xx_and_loses_nothing(app):
    base_url = app.server.base_url
    runs = []
    volunteers = threading.Thread(
        target=lambda: runs.append(drive(base_url, SLUG, app.tokens, app.themes, 10.0, 0.05))
    )
    volunteers.start()
    time.sleep(3)  # every server thread has a kept connection and has run the labeling path
    column_type = manage(app.env, "shell", "-c", ALTER_LABEL_COUNT).split()[-1]
    volunteers.join()
    (tally,) = runs

    assert column_type == "integer"  # the schema did change under the volunteers
    result = outcome(tally, app.figures())
    assert not tally.errors, tally.errors[:5]  # no 500 (nor any other wrong answer)
    assert not tally.retryable, tally.retryable  # not even a retryable 503 or a dropped connection
    assert len(tally.submit_ms) > 50  # labels went in before, during and after the change
    assert result["lost"] == 0
    assert result["unacknowledged"] == 0
    assert result["over_k"] == 0
    assert result["miscounted"] == 0

    after = drive(base_url, SLUG, app.tokens, app.themes, 2.0, 0.05)  # and after it, as before
    assert not after.errors
    assert not after.retryable
    assert after.acknowledged
