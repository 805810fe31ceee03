"""A project's members, managed by its admins: invitation links (one-time, expiring, the role
chosen by the inviter, only the token's hash stored), bulk adding from a list of usernames or
e-mail addresses (it creates new accounts only, each with an initial password shown once; an
existing account joins only by accepting an invitation), role changes, removal (their labels
stay, attributed to them) and mapping a member to a study file's LabelJ column. Each change is one
audit row."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.access import ROLE_RANK
from annotation.audit import audit_record
from annotation.gate import OPERATOR, Write, WriteForbidden, gate, write_refusal
from annotation.models import Action, Annotation, Invitation, Membership, Project, Role
from annotation.projects.importers import ImportFailed, is_placeholder
from concord.errors import ConcordError, Conflict, NotFound, RowError
from concord.usernames import username_looks_taken

INVITATION_DAYS = 7
INVITATION_MAX_DAYS = 90
BULK_MAX_LINES = 500
USERNAME_MAX = 150  # django.contrib.auth's User.username


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@transaction.atomic
def invitation_create(
    *, project: Project, inviter, role: str = Role.VOLUNTEER, days: int = INVITATION_DAYS
) -> tuple[Invitation, str]:
    """A new invitation and its token (for the link; it is not stored and cannot be shown
    again)."""
    gate(inviter, project, Write.MEMBERS)
    if not 1 <= days <= INVITATION_MAX_DAYS:
        message = _("An invitation lasts 1 to %(most)s days, not %(days)s.")
        raise ConcordError(message % {"most": INVITATION_MAX_DAYS, "days": days})
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        project=project,
        role=Role(role),
        token_hash=token_hash(token),
        created_by=inviter,
        expires_at=timezone.now() + timedelta(days=days),
    )
    audit_record(
        project=project,
        action=Action.MEMBERS,
        actor=inviter,
        after={"invited_as": invitation.role, "invitation": invitation.pk, "days": days},
    )
    return invitation, token


class InvitationUnusable(ConcordError):
    """The link is unknown, used or expired."""


def invitation_valid(token: str) -> Invitation:
    """The invitation behind `token` if it can still be used, else InvitationUnusable."""
    invitation = (
        Invitation.objects.select_related("project", "created_by")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if invitation is None:
        raise InvitationUnusable(_("This invitation link is not valid; ask for a new one."))
    if invitation.used_at is not None:
        raise InvitationUnusable(
            _("This invitation link has been used already; ask for a new one.")
        )
    if invitation.expires_at <= timezone.now():
        raise InvitationUnusable(_("This invitation link has expired; ask for a new one."))
    _inviter_check(invitation)
    return invitation


def _inviter_check(invitation: Invitation) -> None:
    """The link carries its inviter's authority, asked of the gate when it is used: it joins
    nobody into an archived project, nor once its inviter may no longer manage members."""
    refusal = write_refusal(invitation.created_by or OPERATOR, invitation.project, Write.MEMBERS)
    if isinstance(refusal, WriteForbidden):
        raise InvitationUnusable(
            _(
                "Whoever made this invitation link no longer manages the project's members; "
                "ask for a new one."
            )
        )
    if refusal is not None:
        message = _("%(refusal)s Ask for a new invitation once it is restored.")
        raise InvitationUnusable(message % {"refusal": refusal.message})


@transaction.atomic
def invitation_accept(*, token: str, user) -> Membership:
    """Make `user` a member with the invitation's role and use the link up. Locked, so two
    people opening the same link at once cannot both join. A member already in the project
    keeps the higher of their role and the invited one."""
    found = invitation_valid(token)
    invitation = Invitation.objects.select_for_update().get(pk=found.pk)
    if invitation.used_at is not None:
        raise InvitationUnusable(
            _("This invitation link has been used already; ask for a new one.")
        )
    membership, created = Membership.objects.get_or_create(
        project=found.project, user=user, defaults={"role": invitation.role}
    )
    if not created and _rank(invitation.role) > _rank(membership.role):
        membership.role = invitation.role
        membership.save(update_fields=["role"])
    invitation.used_at = timezone.now()
    invitation.used_by = user
    invitation.save(update_fields=["used_at", "used_by"])
    audit_record(
        project=found.project,
        action=Action.MEMBERS,
        actor=user,
        after={"joined": user.username, "role": membership.role, "invitation": invitation.pk},
    )
    return membership


def _rank(role: str) -> int:
    return ROLE_RANK[Role(role)]


class Outcome(StrEnum):
    CREATED = "created"
    ALREADY_MEMBER = "already_member"
    NOT_CREATED = "not_created"  # the name is taken by an account outside the project


@dataclass(frozen=True)
class Added:
    """What became of one listed name. It holds the list's own words and, for a new account, its
    initial password: nothing about an account outside the project (not its e-mail, its role, or
    anything else that could tell two such accounts apart)."""

    username: str  # as listed
    email: str  # the new account's e-mail as listed; "" when nothing was created
    password: str | None  # the initial password of a new account, else None
    outcome: Outcome

    @property
    def already_member(self) -> bool:
        return self.outcome == Outcome.ALREADY_MEMBER


def parse_member_list(text: str, name: str) -> list[tuple[str, str]]:
    """(username, e-mail) per non-blank line of a pasted or uploaded list: a line is a username
    or an e-mail address (then also the username, so two people never share one by accident).
    Lines starting with # are comments. Bad lines are RowErrors naming the line; all at once."""
    entries: list[tuple[str, str]] = []
    errors: list[RowError] = []
    seen: set[str] = set()
    lines = text.splitlines()
    if len(lines) > BULK_MAX_LINES:
        message = _("%(name)s: %(lines)s lines; add at most %(most)s at once.")
        raise ConcordError(message % {"name": name, "lines": len(lines), "most": BULK_MAX_LINES})
    user_model = get_user_model()
    username_field = user_model._meta.get_field("username")
    for number, raw in enumerate(lines, start=1):
        line = raw.strip().strip(",;")
        if not line or line.startswith("#"):
            continue
        email = ""
        username = line
        if "@" in line:
            try:
                validate_email(line)
            except ValidationError:
                message = _("not an e-mail address: %(line)s") % {"line": repr(line)}
                errors.append(RowError(name, number, None, message))
                continue
            email = line
        try:
            username_field.run_validators(username)
        except ValidationError as exc:
            errors.append(RowError(name, number, None, f"{line!r}: {' '.join(exc.messages)}"))
            continue
        if len(username) > USERNAME_MAX:
            message = _("longer than %(most)s characters") % {"most": USERNAME_MAX}
            errors.append(RowError(name, number, None, message))
            continue
        if username.lower() in seen:
            message = _("%(line)s is listed twice") % {"line": repr(line)}
            errors.append(RowError(name, number, None, message))
            continue
        seen.add(username.lower())
        entries.append((username, email))
    if errors:
        raise ImportFailed(errors)
    return entries


@transaction.atomic
def members_bulk_add(
    *, project: Project, actor, entries: list[tuple[str, str]], role: str = Role.VOLUNTEER
) -> list[Added]:
    """Create an account for each listed (username, e-mail) whose name is free, with a random
    initial password (returned here, never stored in clear), and make it a member with `role`.
    A taken name adds nobody: an account joins a project only by accepting an invitation, so an
    admin cannot enrol, or learn about, accounts outside the project. Existing members keep their
    role. Site staff get the same rule."""
    gate(actor, project, Write.MEMBERS)
    added = [_bulk_one(project, username, email, role) for username, email in entries]
    audit_record(
        project=project,
        action=Action.MEMBERS,
        actor=actor,
        after={
            "added": [a.username for a in added if a.outcome == Outcome.CREATED],
            "not_created": [a.username for a in added if a.outcome == Outcome.NOT_CREATED],
            "role": role,
        },
    )
    return added


def _bulk_one(project: Project, username: str, email: str, role: str) -> Added:
    users = get_user_model().objects
    # Case-insensitive, as the sign-up form checks: "Wang" next to "wang" would be a second
    # account for what is likely the same person. And as the name is stored (NFKC, see
    # AbstractBaseUser.normalize_username): "wang1" typed in full-width letters and digits (as
    # a Chinese input method may) is "wang1", a taken name, not a new account.
    stored_as = get_user_model().normalize_username(username)
    taken = users.filter(username__iexact=stored_as).first()
    if taken is not None:
        member = project.memberships.filter(user=taken).exists()
        return Added(username, "", None, Outcome.ALREADY_MEMBER if member else Outcome.NOT_CREATED)
    if username_looks_taken(stored_as):  # as the sign-up form: nobody passes for somebody else
        return Added(username, "", None, Outcome.NOT_CREATED)
    if email and users.filter(email__iexact=email).exists():
        # Someone's address: an account named and mailed as them, with a password the admin
        # knows, would pass for them. They join through an invitation, like any existing
        # account (and the answer is the one a taken name gets).
        return Added(username, "", None, Outcome.NOT_CREATED)
    password = secrets.token_urlsafe(9)
    user = users.create_user(username=username, email=email, password=password)
    Membership.objects.create(project=project, user=user, role=Role(role))
    return Added(username, email, password, Outcome.CREATED)


def _locked_membership(project: Project, membership_id: int) -> Membership:
    membership = (
        Membership.objects.select_for_update()
        .select_related("user")
        .filter(project=project, pk=membership_id)
        .first()
    )
    if membership is None:
        raise NotFound(_("No such member in this project."))
    return membership


def _refuse_losing_last_admin(project: Project, membership: Membership) -> None:
    if membership.role != Role.ADMIN:
        return
    admins = project.memberships.select_for_update().filter(role=Role.ADMIN).count()
    if admins <= 1:
        message = _("%(member)s is the project's only admin; make someone else admin first.")
        raise Conflict(message % {"member": membership.user})


@transaction.atomic
def member_role_set(*, project: Project, actor, membership_id: int, role: str) -> Membership:
    gate(actor, project, Write.MEMBERS)
    membership = _locked_membership(project, membership_id)
    if membership.role == role:
        return membership
    if role != Role.ADMIN:
        _refuse_losing_last_admin(project, membership)
    before = membership.role
    membership.role = Role(role)
    membership.save(update_fields=["role"])
    audit_record(
        project=project,
        action=Action.MEMBERS,
        actor=actor,
        before={"member": membership.user.username, "role": before},
        after={"member": membership.user.username, "role": membership.role},
    )
    return membership


@transaction.atomic
def member_remove(*, project: Project, actor, membership_id: int) -> None:
    """End a membership. Their labels, votes and posts stay, attributed to them."""
    gate(actor, project, Write.MEMBERS)
    membership = _locked_membership(project, membership_id)
    _refuse_losing_last_admin(project, membership)
    membership.delete()
    audit_record(
        project=project,
        action=Action.MEMBERS,
        actor=actor,
        before={"member": membership.user.username, "role": membership.role},
        after={"removed": membership.user.username},
    )


@transaction.atomic
def member_column_set(
    *, project: Project, actor, membership_id: int, column: int | None
) -> Membership:
    """Map a member to a study file's LabelJ column (None: no column). If J belonged to the
    placeholder account an import created for it (importers.is_placeholder), that account's
    labels in this project pass to the member, so a re-import of the same file finds them there
    and adds nothing; refused when the member labeled one of the same items."""
    gate(actor, project, Write.MEMBERS)
    membership = _locked_membership(project, membership_id)
    if membership.column == column:
        return membership
    if column is not None and not 1 <= column <= 999:
        raise ConcordError(
            _("Column must be between 1 and 999, not %(column)s.") % {"column": column}
        )
    moved = 0
    holder = None
    if column is not None:
        holder = (
            project.memberships.select_for_update()
            .select_related("user")
            .filter(column=column)
            .exclude(pk=membership.pk)
            .first()
        )
    if column is not None and holder is not None:
        if not is_placeholder(holder.user, project, column):
            message = _("%(column)s is mapped to %(member)s already.")
            raise Conflict(message % {"column": f"Label{column}", "member": holder.user})
        moved = _labels_pass_on(project, holder.user_id, membership.user_id)
        holder.column = None
        holder.save(update_fields=["column"])
    before = membership.column
    membership.column = column
    membership.save(update_fields=["column"])
    audit_record(
        project=project,
        action=Action.MEMBERS,
        actor=actor,
        before={"member": membership.user.username, "column": before},
        after={"member": membership.user.username, "column": column, "labels_moved": moved},
    )
    return membership


def _labels_pass_on(project: Project, from_user: int, to_user: int) -> int:
    labels = Annotation.objects.filter(item__project=project, volunteer_id=from_user)
    clash = labels.filter(
        item__in=Annotation.objects.filter(volunteer_id=to_user).values("item")
    ).count()
    if clash:
        message = _(
            "The member labeled %(clash)s of the items this column labeled; "
            "they cannot take over its labels."
        )
        raise Conflict(message % {"clash": clash})
    return labels.update(volunteer_id=to_user)
