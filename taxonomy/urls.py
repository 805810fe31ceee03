from django.urls import path

from taxonomy import views

urlpatterns = [
    path("", views.taxonomy_list, name="taxonomy-list"),
    path("<int:pk>/", views.taxonomy_detail, name="taxonomy-detail"),
]
