"""A hand-made coding of the first ten answers by two coders, and its agreement computed by
hand (the figures below are worked out in the comments, not copied from a run).

Unit i (0..9), codes of coder_a / coder_b:
  0: cost,effort / cost,effort    1: cost,effort / cost    2: cost / cost,effort
  3: cost / cost                  4: cost / -              5: - / cost
  6-9: - / -

cost:   both 4 (0-3), a only 1 (4), b only 1 (5), neither 4. p_o = 8/10; both coders give it
        5 times in 10, p_e = .5*.5 + .5*.5 = .5; kappa = (.8 - .5) / .5 = 0.6.
        alpha (nominal, 2 coders, no missing value): n = 20 values, 10 'yes' and 10 'no';
        disagreeing pairs in the coincidence matrix o_yn + o_ny = 2 + 2 = 4;
        alpha = 1 - (n - 1) * 4 / (n^2 - sum n_c^2) = 1 - 19 * 4 / (400 - 200) = 0.62.
effort: both 1, a only 1, b only 1, neither 7. p_o = .8; p_e = .2*.2 + .8*.8 = .68;
        kappa = .12 / .32 = 0.375. alpha: n_yes = 4, n_no = 16, disagreements 4;
        alpha = 1 - 19 * 4 / (400 - 16 - 256) = 1 - 76/128 = 0.40625.
overall (the set of codes as one label: ce, c, -): agreements at 0, 3, 6-9: p_o = .6;
        each coder: ce 2, c 3, - 5; p_e = (4 + 9 + 25) / 100 = .38;
        kappa = .22 / .62 = 11/31. alpha: n_ce = 4, n_c = 6, n_- = 10; disagreeing pairs
        (units 1, 2, 4, 5) 2 * 4 = 8; alpha = 1 - 19 * 8 / (400 - 16 - 36 - 100) = 96/248.
"""

from __future__ import annotations

A = [["cost", "effort"], ["cost", "effort"], ["cost"], ["cost"], ["cost"], [], [], [], [], []]
B = [["cost", "effort"], ["cost"], ["cost", "effort"], ["cost"], [], ["cost"], [], [], [], []]
KAPPA = {"cost": 0.6, "effort": 0.375, "(all codes)": 11 / 31}
ALPHA = {"cost": 0.62, "effort": 0.40625, "(all codes)": 96 / 248}
N_UNITS = 10
