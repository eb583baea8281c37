"""The researcher console's own pages beside the Django admin (monitor, export download)."""
