"""Older imports named each LabelJ placeholder `<slug>-labelJ`, a name anyone could also sign up
with. Rename the true placeholders (no usable password, a member of that project mapped to column
J, exactly that name) to `label:<project id>:<J>`, which no person can hold
(importers.placeholder_username). An account that can sign in is a person's and stays as it is;
so does one whose new name is taken. The names are spelled out here rather than imported: a
migration must keep doing what it did when the code moves on."""

from django.conf import settings
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.db import migrations


def old_name(slug: str, project_id: int, column: int) -> str:
    return f"{slug}-label{column}"


def new_name(slug: str, project_id: int, column: int) -> str:
    return f"label:{project_id}:{column}"


def placeholders_rename(apps, schema_editor, *, source=old_name, target=new_name) -> int:
    """Rename each placeholder from `source` to `target` naming; returns how many."""
    membership_model = apps.get_model("annotation", "Membership")
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    renamed = 0
    memberships = membership_model.objects.filter(column__isnull=False).select_related(
        "user", "project"
    )
    for membership in memberships:
        user, project, column = membership.user, membership.project, membership.column
        if user.username != source(project.slug, project.pk, column):
            continue
        if not user.password.startswith(UNUSABLE_PASSWORD_PREFIX):  # a person can sign in
            continue
        name = target(project.slug, project.pk, column)
        if user_model.objects.filter(username=name).exists():
            continue
        user.username = name
        user.save(update_fields=["username"])
        renamed += 1
    return renamed


def placeholders_rename_back(apps, schema_editor) -> int:
    return placeholders_rename(apps, schema_editor, source=new_name, target=old_name)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_audit_actions_and_job_heartbeat"),
    ]

    operations = [
        migrations.RunPython(placeholders_rename, placeholders_rename_back),
    ]
