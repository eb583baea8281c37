"""The researchers' REST API (Django REST Framework, OpenAPI schema by drf-spectacular)."""
