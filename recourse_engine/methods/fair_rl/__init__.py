"""Fair recourse for all (arXiv 2601.20449): the method (`fair_rl`), its recourse MDP
(`fair_rl_env`), its rewards (`fair_rl_rewards`) and its Soft Actor-Critic (`fair_rl_sac`)."""

from .fair_rl import FairRL

__all__ = ["FairRL"]
