"""A request body that is a CSV file as is (`Content-Type: text/csv`), for pool uploads from
curl or a script without building a multipart form."""

from __future__ import annotations

from typing import Any

from rest_framework.parsers import BaseParser


class CSVBodyParser(BaseParser):
    """Hands the raw bytes on; `studies.pool.pool_preview` decodes and checks them."""

    media_type = "text/csv"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return stream.read() if stream is not None else b""
