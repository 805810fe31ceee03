"""Input and output shapes of the lead API."""

from rest_framework import serializers

from annotation.models import Method, PilotStatus, ProposalStatus, Stage
from annotation.review.proposals import reason_seen


class QueueQuery(serializers.Serializer):
    type = serializers.CharField(required=False, default="", help_text="A type code, e.g. C.")
    theme = serializers.CharField(required=False, default="", help_text="A theme code, e.g. C.1.")
    repository = serializers.CharField(
        required=False, default="", help_text="owner/repo, e.g. ascend/MindSpeed."
    )


class VoteOut(serializers.Serializer):
    node_id = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    n = serializers.IntegerField()


class ReviewIssueOut(serializers.Serializer):
    url = serializers.URLField()
    owner = serializers.CharField()
    repo = serializers.CharField()
    number = serializers.CharField()
    title = serializers.CharField()


class QueueItemOut(serializers.Serializer):
    # Serializes a row of the disputed queue (annotation.review.selectors.QueueRow): the item and
    # its votes.
    id = serializers.IntegerField(source="item.pk")
    stage = serializers.ChoiceField(choices=Stage.choices, source="item.stage")
    agreement = serializers.FloatField(allow_null=True, source="item.agreement")
    issue = ReviewIssueOut(source="item.issue")
    votes = VoteOut(many=True, help_text="Labels and how often, most common first.")


class ReviewNodeOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    code = serializers.CharField()
    name = serializers.CharField()
    level = serializers.CharField()


class ReviewLabelOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    volunteer = serializers.CharField(source="volunteer.username")
    node = ReviewNodeOut()
    summary = serializers.CharField()
    seconds_spent = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()


class PostOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    author = serializers.CharField(source="author.username")
    text = serializers.CharField(help_text="Markdown as written.")
    html = serializers.SerializerMethodField(help_text="The text rendered and sanitized.")
    created_at = serializers.DateTimeField()

    def get_html(self, post) -> str:
        from annotation.rendering import markdown_to_html

        return markdown_to_html(post.text)


class PostIn(serializers.Serializer):
    text = serializers.CharField(max_length=10_000)


class AuditOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    action = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()


class ResolutionOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    node = ReviewNodeOut()
    method = serializers.ChoiceField(choices=Method.choices)
    resolver = serializers.CharField(source="resolver.username", allow_null=True, default=None)
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()


class ReviewOut(serializers.Serializer):
    id = serializers.IntegerField(source="item.pk")
    stage = serializers.ChoiceField(choices=Stage.choices, source="item.stage")
    agreement = serializers.FloatField(source="item.agreement", allow_null=True)
    version = serializers.IntegerField(help_text="Send back as expected_version when resolving.")
    issue = ReviewIssueOut(source="item.issue")
    labels = ReviewLabelOut(many=True)
    distribution = VoteOut(many=True)
    suggestion = VoteOut(allow_null=True, help_text="The strict majority label; null on a tie.")
    resolution = ResolutionOut(allow_null=True)
    posts = PostOut(many=True)
    audit = AuditOut(many=True)


class ResolveIn(serializers.Serializer):
    node = serializers.CharField(help_text="Code of the final label, e.g. C.1.")
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    expected_stage = serializers.CharField(
        required=False, help_text="The stage the item had when you looked (from review)."
    )
    expected_version = serializers.IntegerField(required=False)


class ReopenIn(serializers.Serializer):
    reason = serializers.CharField()


class ItemStateOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    stage = serializers.ChoiceField(choices=Stage.choices)
    agreement = serializers.FloatField(allow_null=True)


class PilotIn(serializers.Serializer):
    action = serializers.ChoiceField(choices=["start", "close"])
    n = serializers.IntegerField(required=False, min_value=1, help_text="Sample size to start.")


class PilotOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=PilotStatus.choices)
    items = serializers.IntegerField(help_text="Items in the pilot sample.")


class ProposalIn(serializers.Serializer):
    # DRF's metaclass takes declared fields off the class; the stubs see `Field.parent` clash.
    parent = serializers.CharField(  # type: ignore[assignment]
        required=False, allow_blank=True, default="", help_text="Code of a type or theme."
    )
    name = serializers.CharField(max_length=200)
    definition = serializers.CharField(required=False, allow_blank=True, default="")
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    item = serializers.IntegerField(required=False, help_text="The item no category fitted.")


class ProposalOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    parent = serializers.CharField(  # type: ignore[assignment]  # as in ProposalIn
        source="parent.code", allow_null=True, default=None
    )
    name = serializers.CharField()
    definition = serializers.CharField()
    reason = serializers.SerializerMethodField(
        help_text="Empty while the proposal is about items you may not see yet."
    )
    proposer = serializers.CharField(source="proposer.username")
    status = serializers.ChoiceField(choices=ProposalStatus.choices)
    node = serializers.CharField(source="node.code", allow_null=True, default=None)
    approvals = serializers.IntegerField()
    rejections = serializers.IntegerField()
    items = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_reason(self, proposal) -> str:
        return reason_seen(proposal, self.context["viewer"])

    def get_items(self, proposal) -> list[int]:
        return [item.pk for item in proposal.items.all()]


class VoteIn(serializers.Serializer):
    approve = serializers.BooleanField()


class SendBackOut(serializers.Serializer):
    items = serializers.IntegerField(help_text="Items sent back for relabeling.")


class VolunteerStatsOut(serializers.Serializer):
    user_id = serializers.IntegerField()
    name = serializers.CharField()
    items_done = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True)
    on_final = serializers.IntegerField()
    agree_final = serializers.IntegerField()
    agreement_with_final = serializers.FloatField(allow_null=True)


class KappaOut(serializers.Serializer):
    volunteers = serializers.ListField(child=serializers.IntegerField())
    kappa = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True))
    )
    shared = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))


class StatsOut(serializers.Serializer):
    volunteers = VolunteerStatsOut(many=True)
    kappa = KappaOut(allow_null=True, help_text="Leads and admins only; null for a volunteer.")
