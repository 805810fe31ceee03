from django.apps import AppConfig


class InterviewsConfig(AppConfig):
    name = "taxonomy.interviews"
    label = "interviews"
