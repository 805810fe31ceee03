"""Input and output shapes of the labeling API. Item payloads are blind: another volunteer's label
or summary appears only in `others`, which stays empty until the item is revealed."""

from rest_framework import serializers

from annotation.labeling.eligibility import is_editable


class CommentOut(serializers.Serializer):
    author = serializers.CharField()
    created_at = serializers.DateTimeField(allow_null=True)
    body_html = serializers.CharField(source="html", help_text="Sanitized HTML, keywords marked.")


class IssueOut(serializers.Serializer):
    url = serializers.URLField()
    host = serializers.CharField()
    repository = serializers.CharField()
    number = serializers.CharField()
    title = serializers.CharField()
    author = serializers.CharField()
    state = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField(), help_text="Tracker labels.")
    created_at = serializers.DateTimeField(allow_null=True)
    body = serializers.CharField(help_text="The tracker's Markdown, untrusted.")


class LabelOut(serializers.Serializer):
    node = serializers.CharField(source="node.code", help_text="Node code, e.g. C.1.iii.")
    node_name = serializers.CharField(source="node.name")
    summary = serializers.CharField()
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class OtherLabelOut(serializers.Serializer):
    volunteer = serializers.CharField(source="volunteer.get_username")
    node = serializers.CharField(source="node.code")
    node_name = serializers.CharField(source="node.name")
    summary = serializers.CharField()


class ItemOut(serializers.Serializer):
    id = serializers.IntegerField(source="item.pk")
    stage = serializers.CharField(
        help_text="The item's stage once it is revealed (all k labels given); 'blind' before, "
        "so that nothing here depends on other volunteers' work."
    )
    issue = IssueOut(source="item.issue")
    title_html = serializers.CharField(help_text="Escaped title, keywords marked.")
    body_html = serializers.CharField(help_text="Sanitized HTML of the body, keywords marked.")
    keywords = serializers.ListField(child=serializers.CharField())
    comments = CommentOut(many=True)
    mine = LabelOut(allow_null=True, help_text="Your label, if you gave one.")
    revealed = serializers.BooleanField(
        help_text="True once the item reached cross-check and the project shows all labels."
    )
    others = OtherLabelOut(
        many=True, help_text="The other volunteers' labels; empty until revealed."
    )
    reserved_until = serializers.DateTimeField(allow_null=True)


class AnnotationIn(serializers.Serializer):
    node = serializers.CharField(help_text="Code of a node at the project's label depth.")
    summary = serializers.CharField(
        max_length=500,
        allow_blank=True,
        default="",
        help_text="One line; required (not blank) when the project's summary_required is on.",
    )
    version = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="The version you are editing; needed to change an existing label.",
    )


class AnnotationOut(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    issue_url = serializers.URLField(source="item.issue.url")
    node = serializers.CharField(source="node.code")
    node_name = serializers.CharField(source="node.name")
    summary = serializers.CharField()
    version = serializers.IntegerField()
    is_pilot = serializers.BooleanField()
    seconds_spent = serializers.IntegerField(allow_null=True)
    editable = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_editable(self, annotation) -> bool:
        return is_editable(annotation.item)


class NextItemIn(serializers.Serializer):
    exclude = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        max_length=20,
        required=False,
        default=list,
        help_text="Ids of items you already have in hand (the one on screen, labels on their way): "
        "hand me another. The labeling page sends them to hold the next item ready.",
    )


class SkipUndoOut(serializers.Serializer):
    item = serializers.IntegerField(source="item.pk")
    reserved_until = serializers.DateTimeField(source="expires_at")


class SkipIn(serializers.Serializer):
    reason = serializers.CharField(max_length=300, allow_blank=True, default="")


class SkipOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()


class ScreeningVoteIn(serializers.Serializer):
    relevant = serializers.BooleanField()
    reason = serializers.CharField(max_length=300, allow_blank=True, default="")


class ScreeningVoteOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    relevant = serializers.BooleanField()
    reason = serializers.CharField()
    stage = serializers.CharField(
        help_text="The item's stage after the vote for leads and admins; 'blind' for volunteers "
        "(it would tell them how the others voted)."
    )


class ScreeningDecisionIn(serializers.Serializer):
    relevant = serializers.BooleanField(help_text="true: open for labeling; false: excluded.")
    reason = serializers.CharField(max_length=300, allow_blank=True, default="")


class ScreeningDecisionOut(serializers.Serializer):
    item = serializers.IntegerField(source="pk")
    stage = serializers.CharField()
