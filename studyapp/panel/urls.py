"""The console's Prolific page, mounted under /console/ beside the other study pages."""

from __future__ import annotations

from django.urls import path

from studyapp.panel import views

urlpatterns = [
    path("studies/<slug:slug>/prolific/", views.prolific_page, name="console-prolific"),
]
