from django.contrib import admin
from django.urls import include, path

from studyapp.metrics import views as metrics_views
from studyapp.participation import views

urlpatterns = [
    path("", views.index, name="index"),
    path("s/<slug:slug>/", views.start, name="start"),
    path("p/<str:code>/", views.participant_page, name="participant"),
    path("p/<str:code>/status", views.participant_status, name="participant_status"),
    path("p/<str:code>/withdraw", views.participant_withdraw, name="participant_withdraw"),
    path("admin/", admin.site.urls),
    path("console/", include("studyapp.console.urls")),
    path("api/", include("studyapp.api.urls")),
    path("metrics", metrics_views.metrics, name="metrics"),  # docs/operations.md
]
