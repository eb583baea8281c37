"""The export's column contract, stated once for the side that writes it and the sides that
read it.

The platform writes a study's export (`studyapp.export`) and serves the same facts through
its API (`studyapp.api`); analyses read the files back (`analysis.export`). Each used to keep
its own column lists, types, descriptions and outcome names, free to drift apart without a
test noticing. The contract lives in `analysis` because analysis may not import the platform
(Django) while the platform may import analysis, and it needs nothing but the standard
library, so reading an export never pulls in the web app.

Descriptions and allowed values are templates: `{slug}`, `{design}`, ... stand for facts of
one study that the codebook fills in; left unfilled, `GENERIC_FACTS` words them for any
study (the API's field descriptions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

#: how every CSV the platform writes keeps text from running as a spreadsheet formula
#: (`analysis.csv_safety`); the codebook states it for the free-text columns
NOTE = (
    "in CSV files a text cell that starts with = + - @, a tab or a carriage return is written "
    "with a leading apostrophe (spreadsheet formula injection), and a lone carriage return as "
    "a line feed; Parquet keeps the raw text"
)


#: the files of an export folder (the two tables also come as `.parquet`)
EVALUATIONS = "evaluations"
PARTICIPANTS = "participants"
PAGE_VISITS = "page_visits"
CODEBOOK = "codebook.csv"
SCHEMA = "schema.json"
CODEBOOK_COLUMNS = ("file", "column", "type", "allowed", "description")

#: codebook types; Parquet stores integer as int64, float as float64, the others as text
TYPES = ("string", "integer", "float", "datetime")
#: the acceptance and action ratings' scale, both ends included
RATING_SCALE = (1, 7)
#: proximities are ranked rounded to this many decimals (the engine's
#: `recourse_engine.distances.RANK_DECIMALS`; a test keeps the two equal)
RANK_DECIMALS = 9
ISO_UTC = "ISO 8601 UTC"


class Entry(NamedTuple):
    """A column's codebook row, less the file and column name."""

    type: str
    allowed: str
    description: str


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str
    allowed: str = ""
    #: a list written as one ';'-joined string (the API sends it as a list)
    joined: bool = False
    #: an integer that may be missing: written as a nullable integer so 2 stays 2, not 2.0
    optional: bool = False

    def describe(self, facts: Mapping[str, str] | None = None, *, in_file: bool = True) -> str:
        """The description, with a study's facts (or generic wording) filled in; `in_file`
        adds how a list is written into a CSV cell."""
        text = self.description.format_map({**GENERIC_FACTS, **(facts or {})})
        return text + (", ';'-joined" if self.joined and in_file else "")

    def entry(self, facts: Mapping[str, str] | None = None) -> Entry:
        allowed = self.allowed.format_map({**GENERIC_FACTS, **(facts or {})})
        return Entry(self.type, allowed, self.describe(facts))


#: what the templates say when no study's facts are given
GENERIC_FACTS: dict[str, str] = {
    "slug": "",
    "design": "the study's design",
    "keys": "",
    "scale": f"{RATING_SCALE[0]}..{RATING_SCALE[1]}",
    "acceptance_question": "acceptance rating",
    "action_question": "action rating",
    "states": "",
    "consent_version": "",
    "generations": "",
    "attention_max_failures": "attention_max_failures",
    "rank_decimals": str(RANK_DECIMALS),
    "languages": "",
}

# --- outcomes -----------------------------------------------------------------------------
#: a participant's end state -> the outcome the participation ended with (`outcome` column)
STATE_OUTCOME: dict[str, str] = {
    "completed": "completed",
    "screened_out": "screened_out",
    "no_recourse": "no_recourse",
    "quota_full": "quota_full",
    "failed_attention": "failed_attention",
    "withdrawn": "withdrew",
    "declined": "declined_consent",
    "expired": "expired",
    "approved": "approved",
}
#: the outcome of every state not in STATE_OUTCOME: still on the way
UNFINISHED = "incomplete"
OUTCOMES = (*STATE_OUTCOME.values(), UNFINISHED)
#: outcomes that get another outcome's completion code and return link: a participant with
#: no admissible recourse took part, and no plan was their bad luck
CREDITED_AS = {"no_recourse": "completed"}
#: a participant's end state -> the outcome whose code and return link they get
CODE_OUTCOME: dict[str, str] = {s: CREDITED_AS.get(o, o) for s, o in STATE_OUTCOME.items()}


def outcome(state: str) -> str:
    return STATE_OUTCOME.get(state, UNFINISHED)


# --- fixed columns ------------------------------------------------------------------------
_ALL = (
    Column("study", "string", "study id (slug)", "{slug}"),
    Column("participant", "integer", "pseudonymous participant id (never the panel id)"),
    Column("condition", "string", "experimental condition (empty: single condition)"),
    Column("gender", "string", "gender answered at screening (label)"),
    Column("age", "integer", "age answered at screening (years)", optional=True),
    Column(
        "income",
        "float",
        "annual income in JPY: midpoint of the screening band (see docs/studyapp.md)",
    ),
    Column("income_band", "string", "income band answered at screening"),
    Column("recourse", "integer", "recourse id"),
    Column(
        "strategy",
        "string",
        "design strategy that chose the recourse ({design}); sparsest, proximate and "
        "lowest_cost@d recourses are minimal under their distance among the admissible pool "
        "candidates, except where one profile was the only minimal one for two of them: the "
        "earlier part has it and the later part the next best (see sparsity_rank and "
        "proximity_rank; the recourse with both ranks 1 is the sparsest and the most "
        "proximate at once)",
    ),
    Column(
        "origin",
        "string",
        "where the counterfactual comes from: a profile of the study's pool, or generated by "
        "a recourse method",
        "pool; generated",
    ),
    Column(
        "method",
        "string",
        "how the recourse was produced (pool_search: chosen from the pool by the strategy; "
        "otherwise the recourse method of a generating design part, e.g. wachter)",
    ),
    Column(
        "method_params",
        "string",
        "every parameter the generating method ran with (empty object for pool strategies)",
        "JSON object",
    ),
    Column(
        "fit_version",
        "string",
        "the stored fit of the method that generated the recourse: its format and a hash of "
        "its content (empty for pool strategies)",
    ),
    Column(
        "fallback",
        "string",
        "why a generating part's own counterfactual is not shown (the method found none, was "
        "not usable, or proposed an earlier plan's profile) and what is shown instead; empty "
        "when the method's counterfactual is shown, and for pool strategies",
    ),
    Column("position", "integer", "display order of the recourse (randomised)", "1..k"),
    Column("sparsity", "integer", "number of changed items (L0)", "0..d"),
    Column(
        "proximity",
        "float",
        "sum of |x'-x|/M over ordinal items + 1 per changed categorical",
        ">=0",
    ),
    Column(
        "sparsity_rank",
        "integer",
        "rank of the recourse's sparsity among the participant's admissible pool candidates: "
        "1 + the number of candidates that change fewer items (1 = sparsest); empty for "
        "recourses stored before ranks were recorded",
        ">=1",
        optional=True,
    ),
    Column(
        "proximity_rank",
        "integer",
        "rank of the recourse's proximity among the participant's admissible pool "
        "candidates: 1 + the number of candidates with a smaller proximity, compared at "
        "{rank_decimals} decimals (1 = most proximate); sparsity_rank 1 and proximity_rank 1: "
        "the recourse is both the sparsest and the most proximate; empty for recourses "
        "stored before ranks were recorded",
        ">=1",
        optional=True,
    ),
    Column("changed", "string", "changed item keys", "{keys}", joined=True),
    Column(
        "impossible",
        "string",
        "changed items the participant marked impossible",
        "{keys}",
        joined=True,
    ),
    Column("any_impossible", "integer", "any changed item marked impossible", "0=no; 1=yes"),
    Column("acceptance", "integer", "{acceptance_question}", "{scale}"),
    Column("action", "integer", "{action_question}", "{scale}"),
    Column("acceptance_why", "string", f"free-text reason for the acceptance rating; {NOTE}"),
    Column("action_why", "string", f"free-text reason for the action rating; {NOTE}"),
    Column("seconds_on_page", "float", "seconds from first view of the plan page to submit", ">=0"),
    Column("submitted_at", "datetime", "time the evaluation was stored", ISO_UTC),
    Column("state", "string", "participant's state at export", "{states}"),
    Column("outcome", "string", "how the participation ended", "; ".join(OUTCOMES)),
    Column("consent_version", "string", "version of the consent text agreed", "{consent_version}"),
    Column("consented_at", "datetime", "time of consent", ISO_UTC),
    Column(
        "decision",
        "string",
        "decision model's verdict on the profile (hypothetical: approved, and the study went on "
        "as if it had declined, saying so)",
        "rejected; approved; hypothetical",
    ),
    Column("generation", "string", "status of recourse generation", "{generations}"),
    Column("recourses_seconds", "float", "seconds from profile submit to recourses stored", ">=0"),
    Column("n_evaluations", "integer", "evaluations stored", ">=0"),
    Column("flagged", "integer", "case flagged for the researcher", "0; 1"),
    Column("recruitment_id", "string", "panel id the participant arrived with (PROLIFIC_PID...)"),
    Column("panel", "string", "other panel parameters (STUDY_ID, SESSION_ID, ...)", "JSON object"),
    Column("attention_failures", "integer", "attention checks answered wrongly", ">=0"),
    Column(
        "attention_excluded",
        "integer",
        "1 when attention failures exceed the study's limit ({attention_max_failures})",
        "0; 1",
    ),
    Column("flag_reason", "string", "why the case was flagged"),
    Column("started_at", "datetime", "time the participant opened the study link", ISO_UTC),
    Column("finished_at", "datetime", "time the participation ended", ISO_UTC),
    Column("released_at", "datetime", "delayed release: plans released (else empty)", ISO_UTC),
    Column(
        "returned_at", "datetime", "delayed release: second session began (else empty)", ISO_UTC
    ),
    Column(
        "device_class",
        "string",
        "the device the participant arrived on, as the welcome page's script judged it: a "
        "touch screen under 600 px on its short side a phone, a larger one a tablet, a mouse "
        "or trackpad a desktop (empty: the browser ran no script)",
        "phone; tablet; desktop; empty",
    ),
    Column(
        "viewport_width",
        "integer",
        "width of the browser window at arrival in CSS px (empty: not recorded)",
        "1..20000",
        optional=True,
    ),
    Column(
        "viewport_height",
        "integer",
        "height of the browser window at arrival in CSS px (empty: not recorded)",
        "1..20000",
        optional=True,
    ),
    Column(
        "assignment",
        "string",
        "how the condition was assigned: least_filled, or block_random:<block number>",
    ),
    Column(
        "language",
        "string",
        "the language the participant took the study in (link ?lang=, browser language or "
        "the welcome page's switch), a language code; every page, e-mail and end page they "
        "read was in it",
        "{languages}",
    ),
    Column(
        "is_test",
        "integer",
        "a preview or bot participant (exported only when test participants are asked for)",
        "0; 1",
    ),
    Column(
        "wait_timeouts",
        "integer",
        "times the waiting page timed out for the participant (each re-queued the task)",
        ">=0",
    ),
    Column(
        "items_order",
        "string",
        "researcher-defined items of the evaluation page in the order shown",
        joined=True,
    ),
    Column(
        "items_order_pre",
        "string",
        "items of the questionnaire before the scenario in the order shown",
        joined=True,
    ),
    Column(
        "items_order_post",
        "string",
        "items of the questionnaire after the evaluations in the order shown",
        joined=True,
    ),
    Column(
        "questions_shown",
        "string",
        "the study's own items shown to the participant: the questionnaire before the "
        "scenario, the plan pages, the questionnaire after them (items_order_pre, the plan "
        "pages' items in their defined order, items_order_post); an item not listed was "
        "hidden by its display logic (its codebook entry says when it is shown) or its page "
        "was not reached (see outcome), and its q_ column is empty",
        joined=True,
    ),
    Column("page", "string", "page of the study (evaluation-N: plan N)"),
    Column("entered_at", "datetime", "first time the participant was shown the page", ISO_UTC),
    Column("exited_at", "datetime", "time the page was submitted (empty: never)", ISO_UTC),
    Column("seconds", "float", "seconds from entered_at to exited_at", ">=0"),
    Column("views", "integer", "times the page was shown (reloads included)", ">=1"),
    Column("timeout", "integer", "the page submitted itself when its time-out expired", "0; 1"),
)


def _by_name(columns: Iterable[Column]) -> dict[str, Column]:
    """Columns by name, each declared once: a second declaration would silently replace the
    first in a name-keyed dict (and give one file's column another file's description)."""
    out: dict[str, Column] = {}
    for col in columns:
        if col.name in out:
            raise ValueError(f"column {col.name!r} is declared twice; give the file's own in OWN")
        out[col.name] = col
    return out


#: every fixed column by name, as it is in each file that has it unless OWN says otherwise
COLUMNS: dict[str, Column] = _by_name(_ALL)
#: a file's own column where one name means another thing there (file stem -> name -> column)
OWN: dict[str, dict[str, Column]] = {
    "participants": {
        "submitted_at": Column(
            "submitted_at", "datetime", "delayed release: profile submitted (else empty)", ISO_UTC
        ),
    },
}


def column(file: str, name: str) -> Column:
    """The column `name` of `file` (`participants`, or `participants.csv`): the file's own
    where it has one, else the shared one. KeyError when the contract has no such column."""
    own = OWN.get(file.removesuffix(".csv").removesuffix(".parquet"), {})
    return own[name] if name in own else COLUMNS[name]


#: free text and panel ids leave only when asked for
TEXT_COLUMNS = ("acceptance_why", "action_why")
PANEL_COLUMNS = ("recruitment_id", "panel")
RATING_COLUMNS = ("acceptance", "action")
DISTANCE_COLUMNS = ("sparsity", "proximity")
RANK_COLUMNS = ("sparsity_rank", "proximity_rank")
#: one evaluation per participant and recourse
EVALUATION_KEY = ("participant", "recourse")
#: ids: labels, not quantities, so analyses read them as text
IDENTIFIERS = ("participant", "recourse")
#: the columns analyses rely on: a table without one of them is refused
REQUIRED = {
    EVALUATIONS: (
        "participant",
        "recourse",
        "strategy",
        *DISTANCE_COLUMNS,
        "any_impossible",
        *RATING_COLUMNS,
    ),
    PARTICIPANTS: ("participant",),
}

#: the fixed columns of evaluations.csv in order; the item families follow them, then
#: RECOURSE_COLUMNS
EVALUATION_COLUMNS = (
    "study",
    "participant",
    "condition",
    "gender",
    "age",
    "income",
    "recourse",
    "strategy",
    "position",
    "sparsity",
    "proximity",
    "changed",
    "impossible",
    "any_impossible",
    *RATING_COLUMNS,
    *TEXT_COLUMNS,
    "seconds_on_page",
    "submitted_at",
)
#: how each recourse was made and how it ranks: after the item families, as docs/export.md
#: orders them (so the columns before keep their places)
RECOURSE_COLUMNS = ("origin", "method", *RANK_COLUMNS, "method_params", "fit_version", "fallback")
#: the fixed columns of participants.csv in order; `screen_<key>` columns come after
#: `outcome`, the profile's `x_<item>` at the end
PARTICIPANT_COLUMNS = (
    "study",
    "participant",
    *PANEL_COLUMNS,
    "condition",
    "state",
    "outcome",
    "gender",
    "age",
    "income_band",
    "income",
    "consent_version",
    "consented_at",
    "decision",
    "generation",
    "recourses_seconds",
    "n_evaluations",
    "attention_failures",
    "attention_excluded",
    "flagged",
    "flag_reason",
    "started_at",
    "finished_at",
    "assignment",
    "language",
    "is_test",
    "wait_timeouts",
    "submitted_at",
    "released_at",
    "returned_at",
    "device_class",
    "viewport_width",
    "viewport_height",
)
#: page_visits.csv: one row per page a participant was shown (paradata)
PAGE_VISIT_COLUMNS = (
    "study",
    "participant",
    "page",
    "entered_at",
    "exited_at",
    "seconds",
    "views",
    "timeout",
)


# --- column families: one column per schema item, screening question, ... -----------------
PROFILE_PREFIX = "x_"
COUNTERFACTUAL_PREFIX = "cf_"
SCREENING_PREFIX = "screen_"
#: researcher-defined items (one column each: evaluations.csv for the evaluation page's items,
#: participants.csv for the questionnaires'); qualitative codes are named by docs/export.md
#: but no writer produces them yet, so the codebook refuses them until one does
QUESTION_PREFIX = "q_"
CODE_PREFIX = "code_"
ITEM_PREFIXES = (PROFILE_PREFIX, COUNTERFACTUAL_PREFIX)
_WHOSE = {
    PROFILE_PREFIX: "participant's profile",
    COUNTERFACTUAL_PREFIX: "counterfactual (ideal profile)",
}


class Item(Protocol):
    """What the codebook needs of a schema item (`recourse_engine.schema.Item` has it)."""

    @property
    def label(self) -> str: ...
    @property
    def constraint(self) -> str: ...
    @property
    def options(self) -> Sequence[str]: ...
    @property
    def is_numeric(self) -> bool: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...


def labels(options: Iterable[str]) -> str:
    """Option codes with their labels: `1=High school; 2=Junior college; ...`."""
    return "; ".join(f"{i}={o}" for i, o in enumerate(options, start=1))


def item_entry(prefix: str, item: Item) -> Entry:
    """An `x_<item>` or `cf_<item>` column: an option code, or the value of a numeric item."""
    if item.is_numeric:
        typ, allowed = "float", f"{item.low:g}..{item.high:g}"
    else:
        typ, allowed = "integer", labels(item.options)
    return Entry(typ, allowed, f"{item.label}: {_WHOSE[prefix]}, option code ({item.constraint})")


def screening_entry(question: Mapping[str, Any]) -> Entry:
    """A `screen_<key>` column: the answer's code (codes ';'-joined for a multiple choice)."""
    multi = question["type"] == "multi"
    if question["type"] == "integer":
        allowed = f"{question.get('min')}..{question.get('max')}"
    else:
        allowed = labels(question.get("options", []))
    description = f"screening answer: {question.get('label', question['key'])}"
    return Entry(
        "string" if multi else "integer",
        allowed,
        description + (" (codes ';'-joined)" if multi else ""),
    )


def question_entry(
    kind: str, allowed: str, label: str, *, page: str, item_type: str, required: bool
) -> Entry:
    """A `q_<key>` column: the answer to a researcher-defined item."""
    need = "required" if required else "optional (empty: not answered)"
    return Entry(kind, allowed, f"{label} ({item_type} item on the {page} page, {need})")


def evaluation_columns(
    items: Sequence[str], *, with_text: bool = False, questions: Sequence[str] = ()
) -> list[str]:
    """evaluations.csv's columns for a schema's item keys (and the evaluation page's
    researcher-defined item keys, when it has any)."""
    fixed = [c for c in EVALUATION_COLUMNS if with_text or c not in TEXT_COLUMNS]
    extra = [*(QUESTION_PREFIX + k for k in questions), "items_order"] if questions else []
    return [
        *fixed,
        *(PROFILE_PREFIX + k for k in items),
        *(COUNTERFACTUAL_PREFIX + k for k in items),
        *RECOURSE_COLUMNS,
        *extra,
    ]


def participant_columns(
    items: Sequence[str],
    screening: Sequence[str],
    *,
    with_panel_ids: bool = False,
    questions: Mapping[str, Sequence[str]] | None = None,
    shown: bool = False,
) -> list[str]:
    """participants.csv's columns for a schema's item keys and screening question keys;
    `questions`: the questionnaire pages' researcher-defined item keys ({"pre": [...],
    "post": [...]}), each page's answers followed by the order it showed them in; `shown`:
    the study has items of its own, and the row ends with the ones shown (questions_shown)."""
    fixed = [c for c in PARTICIPANT_COLUMNS if with_panel_ids or c not in PANEL_COLUMNS]
    cut = fixed.index("outcome") + 1
    extra: list[str] = []
    for page, keys in (questions or {}).items():
        if keys:
            extra += [*(QUESTION_PREFIX + k for k in keys), f"items_order_{page}"]
    extra += ["questions_shown"] if shown else []
    return [
        *fixed[:cut],
        *(SCREENING_PREFIX + k for k in screening),
        *fixed[cut:],
        *(PROFILE_PREFIX + k for k in items),
        *extra,
    ]
