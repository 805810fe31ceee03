"""One factory per model, with study-shaped defaults."""

import factory
from django.contrib.auth import get_user_model

from annotation.models import Membership, Project, Role
from ingest.models import Host, Issue

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"volunteer{n}")
    password = factory.django.Password(PASSWORD)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"LLM challenges {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
    overlap_k = 3
    label_depth = "theme"


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.VOLUNTEER


class IssueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Issue

    host = Host.GITHUB
    owner = "NVIDIA"
    repo = "Megatron-LM"
    number = factory.Sequence(lambda n: str(1000 + n))
    url = factory.LazyAttribute(
        lambda o: f"https://github.com/{o.owner}/{o.repo}/issues/{o.number}"
    )
    title = "Loss spikes with bf16 and pipeline parallelism"
