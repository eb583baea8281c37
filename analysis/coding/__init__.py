"""Qualitative analysis of the participants' "why" answers: a codebook, the coders' codes,
their agreement (Cohen's kappa per pair, Krippendorff's alpha for any number of coders), and
exemplar quotes for a paper. The console's coding pages store codes; this package reads
them (or a coding sheet) as plain tables, so an analyst can do the same outside the
platform."""

from analysis.coding.agreement import Agreement, CodingError, agreement, coding_matrix
from analysis.coding.codebook import Code, Codebook
from analysis.coding.quotes import quotes_table, write_quotes
from analysis.coding.suggest import suggest_groups

__all__ = [
    "Agreement",
    "Code",
    "Codebook",
    "CodingError",
    "agreement",
    "coding_matrix",
    "quotes_table",
    "suggest_groups",
    "write_quotes",
]
