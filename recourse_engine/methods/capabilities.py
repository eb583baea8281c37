"""What a recourse method needs of a study, declared on its class (`RecourseMethod.capabilities`).

`recourse_engine.generated` reads these to check a study's settings, shape the pool a method
is fitted on and say why a decision model will not do; it never looks at a method's name.
So a new method states its needs here, on its own class, and no list of names elsewhere
has to learn it. Which constructor parameters a study may set is read from the method's
dataclass fields (`RecourseMethod.study_params`); that a method is fitted on the study's
pool at all is true of every method (`generated.fit_on_pool`), and a pool strategy's own
fit is its row's `PoolFit` in `recourse_engine.strategies`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    """A method's needs; the defaults need nothing beyond a decision model that judges a
    profile by its items.

    * `group_column`: fitted on the two groups of a protected attribute (EBR, IBR). The
      study names it with the setting `group` (a pool column or profile item, default
      gender); the pool rows in neither of its two most frequent values are left out of
      the fit, and an item used as the group is not conditioned on.
    * `group_param`: the constructor parameter `group` names the protected attribute(s)
      the method reads from the pool itself (fair_rl: one column or item, or two joined by
      a comma); each must exist; unset, the study's default group.
    * `scm`: a linear structural causal model, the study's setting `scm` (child item ->
      parent item -> weight), built into the constructor's `scm` (causal recourse).
    * `gradient`: follows the decision model's gradient, so the model must be
      differentiable (Wachter).
    * `item_params`: constructor parameters whose values list profile items, checked
      against the study's schema (causal recourse's `intervenable`).
    """

    group_column: bool = False
    group_param: bool = False
    scm: bool = False
    gradient: bool = False
    item_params: tuple[str, ...] = ()

    @property
    def settings(self) -> tuple[str, ...]:
        """The method's study settings that are not constructor parameters."""
        return ("group",) * self.group_column + ("scm",) * self.scm
