import pytest

from recourse_engine import DesignError, parse_design


def test_reference_design_and_round_trip():
    d = parse_design("sparsest:1, proximate:1, random:3")
    assert d.total == 5
    assert [p.label for p in d.parts] == ["sparsest", "proximate", "random"]
    assert str(parse_design(str(d))) == str(d)
    w = parse_design("lowest_cost@weighted[1,0.5,0,0]:2,diverse:3")
    assert w.parts[0].label == "lowest_cost@weighted[1,0.5,0,0]"
    assert w.parts[1].label == "diverse@proximity"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "design is empty"),
        ("sparsest:1,,random:3", "empty part"),
        ("sparsest", "expected strategy:k"),
        ("sparsest:0", "k must be a positive integer"),
        ("random:-2", "k must be a positive integer"),
        ("random:two", "k must be a positive integer"),
        ("fancy:1", "unknown strategy 'fancy'"),
        ("random@l2:1", "takes no @distance"),
        ("lowest_cost@l7:1", "unknown distance 'l7'"),
        ("lowest_cost@weighted[1,x,0,0]:1", "weights must be numbers"),
        ("random:51", "more than 50"),
        (",".join(["random:50"] * 3), "at most 100"),
    ],
)
def test_bad_designs_name_the_problem(text, needle):
    with pytest.raises(DesignError, match=None) as err:
        parse_design(text)
    assert needle in str(err.value)


def test_balanced_strategies_are_known_to_designs():
    d = parse_design("sparsest:1,ebr:1,ibr:1,random:2")
    assert [p.label for p in d.parts] == ["sparsest", "ebr", "ibr", "random"]


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("sparsest:1,proxmate:1", 1),
        ("lowest_cost@weighted[1,0.5,0,0]:1,random:0,sparsest:1", 1),
        ("random:1,sparsest:1,diverse@nope:2", 2),
        (",random:1", 0),
        ("", None),
        ("random:50,sparsest:50,proximate:1", None),
    ],
)
def test_design_error_points_at_the_failing_part(text: str, index: int | None) -> None:
    with pytest.raises(DesignError) as info:
        parse_design(text)
    assert info.value.index == index
