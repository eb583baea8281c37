"""Random feature schemas for the property tests (hypothesis): every item type, each with a
constraint its type allows (a categorical item has no order to move up or down)."""

from __future__ import annotations

from hypothesis import strategies as st

TYPES = ("categorical", "ordinal", "binary", "numeric")


@st.composite
def profile_items(
    draw: st.DrawFn, max_items: int, numeric_range: st.SearchStrategy[tuple[float, float]]
) -> list[dict]:
    """1..`max_items` profile items (keys i0, i1, ...; options o0, o1, ...), a numeric item's
    (min, max) drawn from `numeric_range`."""
    items = []
    for j in range(draw(st.integers(1, max_items))):
        typ = draw(st.sampled_from(TYPES))
        allowed = ("any", "fixed") if typ == "categorical" else ("any", "up", "down", "fixed")
        item = {"key": f"i{j}", "type": typ, "constraint": draw(st.sampled_from(allowed))}
        if typ == "numeric":
            lo, hi = draw(numeric_range)
            item.update(min=lo, max=hi)
        else:
            n = 2 if typ == "binary" else draw(st.integers(2, 5))
            item["options"] = [f"o{k}" for k in range(n)]
        items.append(item)
    return items
