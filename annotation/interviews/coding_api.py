"""The coding API (issue 27): a transcript as its coder or a lead may see it (blindness), and a
passage coded from a script, as the page codes it."""

from __future__ import annotations

from dataclasses import asdict

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.blindness import coding_revealed, passages_seen_by, sees_all_codes
from annotation.interviews.coding import passage_code, transcript_agreement, transcript_final_codes
from concord.errors import ErrorOut, NotFound
from taxonomy.interviews.models import CodedPassage, Transcript
from taxonomy.interviews.units import transcript_units


def _transcript(request: Request, slug: str, pk: int) -> Transcript:
    project = access_project(request.user, slug)
    transcript = (
        Transcript.objects.filter(project=project, pk=pk)
        .select_related("participant", "project")
        .prefetch_related("coders__coder")
        .first()
    )
    if transcript is None:
        raise NotFound(_("No such transcript in this project."))
    return transcript


def _passage_out(passage: CodedPassage, text: str) -> dict:
    return {
        "id": passage.pk,
        "coder": passage.coder.username,
        "code": passage.node.code,
        "start": passage.start,
        "end": passage.end,
        "text": text[passage.start : passage.end],
        "note": passage.note,
    }


class TranscriptApi(APIView):
    """A transcript: its text and lines (the units of agreement), its coders, the coded
    passages the viewer may see (their own until every coder is done; a lead who does not code
    it, all), and then each pair of coders' agreement and the final codes. Every member."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        transcript = _transcript(request, slug, pk)
        project = transcript.project
        sees_all = sees_all_codes(request.user, transcript, project)
        passages = passages_seen_by(request.user, transcript, project).select_related(
            "coder", "node"
        )
        body = {
            "id": transcript.pk,
            "name": transcript.name,
            "participant": transcript.participant.code if transcript.participant else None,
            "text": transcript.text,
            "lines": [asdict(unit) for unit in transcript_units(transcript.text)],
            "coders": [
                {"username": c.coder.username, "done": c.done_at is not None}
                for c in transcript.coders.all()
            ],
            "sees_all": sees_all,
            "passages": [_passage_out(p, transcript.text) for p in passages],
            "agreement": [asdict(pair) for pair in transcript_agreement(transcript)]
            if sees_all
            else None,
            "final_codes": asdict(transcript_final_codes(transcript))
            if coding_revealed(transcript)
            else None,
        }
        return Response(body)


class PassageIn(serializers.Serializer):
    start = serializers.IntegerField(min_value=0, max_value=10**7, help_text="First character.")
    end = serializers.IntegerField(min_value=1, max_value=10**7, help_text="Just past the last.")
    node = serializers.CharField(max_length=30, help_text="The category's code, e.g. C.4.")
    note = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)


class TranscriptPassagesApi(APIView):
    """Code a passage of a transcript you code (join its coders on its page first), until you
    say your coding is complete. Sending the same passage and category again returns the same
    passage (its note updated). Offsets count characters (code points) of the text."""

    @extend_schema(request=PassageIn, responses={200: OpenApiTypes.OBJECT, 400: ErrorOut})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        transcript = _transcript(request, slug, pk)
        data = validated(PassageIn, request.data)
        passage = passage_code(
            transcript=transcript,
            actor=request.user,
            start=data["start"],
            end=data["end"],
            node_code=data["node"],
            note=data["note"],
        )
        return Response(_passage_out(passage, transcript.text))
