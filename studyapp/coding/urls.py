"""Routes of the coding pages, mounted under /console/ (beside the monitor)."""

from __future__ import annotations

from django.urls import path

from studyapp.coding import views, views_results

urlpatterns = [
    path("studies/<slug:slug>/coding/", views.overview, name="coding-overview"),
    path("studies/<slug:slug>/coding/answers/", views.answers, name="coding-answers"),
    path("studies/<slug:slug>/coding/agreement/", views_results.agreement, name="coding-agreement"),
    path("studies/<slug:slug>/coding/resolve/", views_results.resolve, name="coding-resolve"),
    path("studies/<slug:slug>/coding/quotes/", views_results.quotes, name="coding-quotes"),
    path("studies/<slug:slug>/coding/suggest/", views_results.suggest, name="coding-suggest"),
]
