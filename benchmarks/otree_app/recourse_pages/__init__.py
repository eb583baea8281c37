"""The demo study's participant pages in oTree, for the capacity benchmark's comparison:
consent, screening, the scenario, a profile form of the car-loan schema's 16 items, the
decision, five plans each on its own page with its rating form (as the study shows them),
and the end page.
The decision and the plans are computed here from the profile by a fixed rule in
microseconds (the study's recourse engine runs in its Celery worker instead), so the
comparison is of serving the pages, not of computing recourse."""

from otree.api import BaseConstants, BaseGroup, BasePlayer, BaseSubsession, Page, models, widgets

doc = __doc__

#: the car-loan profile items and their number of options (recourse_engine.carloan_schema)
ITEMS = {
    "residence_prefecture": 2, "residence_type": 2, "education": 5, "workplace": 2,
    "position": 10, "service_years": 6, "management_career": 7, "working_hours": 7,
    "teleworking_hours": 7, "side_jobs": 6, "job_change": 2, "overseas_work": 2,
    "overseas_study": 2, "toeic": 8, "facebook": 2, "linkedin": 2,
}  # fmt: skip
PLANS = 5


class C(BaseConstants):
    NAME_IN_URL = "recourse"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


def _choice(n, label):
    return models.IntegerField(
        choices=list(range(1, n + 1)), widget=widgets.RadioSelect, label=label
    )


def _rating(label):
    return models.IntegerField(
        choices=list(range(1, 8)), widget=widgets.RadioSelectHorizontal, label=label
    )


class Player(BasePlayer):
    agree = models.IntegerField(choices=[[1, "I agree to take part"]], widget=widgets.RadioSelect)
    age = models.IntegerField(min=18, max=99, label="Your age")
    gender = _choice(3, "Your gender")
    occupation = _choice(11, "Your occupation")
    income = _choice(10, "Your yearly income")
    approved = models.BooleanField()
    locals().update({k: _choice(n, k.replace("_", " ")) for k, n in ITEMS.items()})
    for _i in range(1, PLANS + 1):
        locals()[f"acceptance_{_i}"] = _rating("Would you accept this plan?")
        locals()[f"action_{_i}"] = _rating("Would you act on it?")
        locals()[f"acceptance_why_{_i}"] = models.LongStringField(label="Why?")
        locals()[f"action_why_{_i}"] = models.LongStringField(label="Why?")
    del _i


def _score(player):
    return sum(getattr(player, k) / n for k, n in ITEMS.items()) / len(ITEMS)


def plan(player, index):
    """Plan `index` (1..5): the index-th lowest item (ties by name) and the next one, each
    raised to its top option, as (item, now, after) rows."""
    low = sorted(ITEMS, key=lambda k: (getattr(player, k) / ITEMS[k], k))
    chosen = low[index - 1 : index + 1]
    return [(k.replace("_", " "), getattr(player, k), ITEMS[k]) for k in chosen]


class Consent(Page):
    form_model = "player"
    form_fields = ["agree"]

    @staticmethod
    def vars_for_template(player):
        return dict(page_key="consent")


class Screening(Page):
    form_model = "player"
    form_fields = ["age", "gender", "occupation", "income"]

    @staticmethod
    def vars_for_template(player):
        return dict(page_key="screening")


class Scenario(Page):
    @staticmethod
    def vars_for_template(player):
        return dict(page_key="scenario")


class Profile(Page):
    form_model = "player"
    form_fields = list(ITEMS)

    @staticmethod
    def vars_for_template(player):
        return dict(page_key="profile")

    @staticmethod
    def before_next_page(player, timeout_happened):
        player.approved = _score(player) > 0.8


class Decision(Page):
    @staticmethod
    def vars_for_template(player):
        return dict(page_key="decision")


def _evaluation(index):
    class Evaluation(Page):
        form_model = "player"
        form_fields = [f"{f}_{index}" for f in ("acceptance", "acceptance_why", "action",
                                                  "action_why")]  # fmt: skip
        template_name = "recourse_pages/Evaluation.html"

        @staticmethod
        def vars_for_template(player):
            return dict(page_key=f"evaluation-{index}", rows=plan(player, index), index=index)

    Evaluation.__name__ = f"Evaluation{index}"
    return Evaluation


Evaluation1, Evaluation2, Evaluation3, Evaluation4, Evaluation5 = (
    _evaluation(i) for i in range(1, PLANS + 1)
)


class End(Page):
    pass


page_sequence = [
    Consent, Screening, Scenario, Profile, Decision,
    Evaluation1, Evaluation2, Evaluation3, Evaluation4, Evaluation5, End,
]  # fmt: skip
