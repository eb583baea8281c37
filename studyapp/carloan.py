"""Texts of the reference car-loan study (Tominaga et al. 2024, Appendix B), used by the demo.

The schema itself (items, screening, scales) comes from `recourse_engine.carloan_schema()`;
these are the page texts the schema does not carry.
"""

from __future__ import annotations

CONSENT_VERSION = "carloan-2024-1"

TEXTS: dict[str, str] = {
    "welcome": (
        "Thank you for your interest in this study about how people judge the advice an AI "
        "system gives after rejecting a loan application. It takes about 15 minutes."
    ),
    "consent": (
        "This study is run for research on algorithmic recourse. You will answer a few "
        "screening questions, describe your own profile (education, work, skills) and rate "
        "five action plans produced by an AI system. Your answers are stored under a "
        "pseudonymous id and analysed only in aggregate; the panel id you arrived with is kept "
        "apart from your answers. You may stop at any time by closing this page. By ticking the "
        "box you confirm that you understand the purpose and content of this survey and agree "
        "to take part."
    ),
    "scenario": (
        "Please respond to the following questions, imagining the scenario below.\n\n"
        "Currently, you are considering taking out a two-year car loan to purchase a car "
        "equivalent to one-third of your annual income.\n\n"
        "Right now, you are at a financial institution undergoing a loan assessment. In this "
        "assessment, an AI system determines the approval or denial of the loan based on your "
        "profile data.\n\n"
        "To undergo this evaluation, you have decided to submit your own profile data."
    ),
    "profile_intro": "Please select the option that applies to you for each of the following items.",
    "rejection": (
        "You had come for a two-year loan assessment with the intention of purchasing a car "
        "equivalent to one-third of your annual income. But unfortunately, you were declined "
        "in the loan assessment."
    ),
    "waiting": (
        "The AI system used in this assessment can provide a failed applicant with an ideal "
        "profile for her/his current profile, as a plan of action to ensure that her/his next "
        "application will be approved. It is preparing several action plans for you now."
    ),
    "plan_intro": (
        "Here is plan {position} of {total}, created by AI. If you had the profile shown on the "
        "right, your application would have been approved. The AI is proposing action plans "
        "with minimal change costs to reduce the burden on applicants as much as possible."
    ),
    "no_recourse": (
        "We are sorry: the AI system could not find an action plan that fits your profile. "
        "This is not a problem with your answers. The research team has been notified; you "
        "will be credited for your participation with the code below."
    ),
    "completion": "Thank you for taking part. Your completion code is below.",
    "screenout": (
        "Thank you for your interest. Unfortunately you do not meet the conditions of this "
        "study. Please return to the panel with the code below."
    ),
}
