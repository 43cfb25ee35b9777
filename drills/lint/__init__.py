"""Every content rule a drill must pass, as pure functions from a validated drill to findings.

The rules live in families (structure, values, figures, options, paths, drawn, simulations, conditions,
limits, retakes); each registers itself in drills.lint.registry with the minimal drill that breaks it. drills.loader places each finding in
its file (line and key path); drills.check runs the same rules with more seeded draws.
"""
from __future__ import annotations

from drills.draws import LOAD_DRAWS
from drills.lint import conditions, drawn, figures, limits, options, paths, retakes, simulations, structure, values
from drills.lint.conditions import rule_comparisons, rule_conditions, rule_number_formats
from drills.lint.drawn import MIN_DRAW_SPACE, rule_draw_space, rule_variants
from drills.lint.limits import rule_limits
from drills.lint.figures import LEAK_DRAWS, rule_no_leaks, rule_varied_figures, typed_figures
from drills.lint.numbers import AS_WRITTEN, Draw, compute_values, drawn_variants, values_for, variant_values
from drills.lint.options import (RANK_MAX_OVER_CHANCE, RIGHT_OPTION_LONGEST_SHARE, RIGHT_OPTION_MAX_RATIO,
                                 OptionLengths, length_findings, length_giveaways, option_lengths, rank_findings,
                                 rule_option_lengths)
from drills.lint.paths import rule_paths_answerable
from drills.lint.retakes import MAX_FIXED_SHARE, rule_fixed_truths, rule_typed_truths
from drills.lint.registry import RULES, Rule, Subject, run_rules
from drills.lint.simulations import rule_simulations
from drills.lint.structure import rule_file_name, rule_pacing, rule_presets, rule_references, rule_skills
from drills.lint.values import rule_answerable, rule_placeholders
from drills.lint.walk import (LABELS, NAMES, NO_LABELS, SCENARIO_KINDS, SIM_PLACEHOLDER, Finding, Loc, Text,
                              literal_figures, questions, strip, texts)
from drills.schema import Drill

FAMILIES = (structure, values, figures, options, paths, drawn, simulations, conditions, limits, retakes)

__all__ = [
    "AS_WRITTEN", "Draw", "FAMILIES", "Finding", "LABELS", "LEAK_DRAWS", "Loc", "MIN_DRAW_SPACE", "NAMES",
    "NO_LABELS", "OptionLengths", "RANK_MAX_OVER_CHANCE", "RIGHT_OPTION_LONGEST_SHARE", "RIGHT_OPTION_MAX_RATIO",
    "RULES", "Rule", "SCENARIO_KINDS", "SIM_PLACEHOLDER", "Subject", "Text", "compute_values", "drill_findings",
    "drawn_variants", "length_findings", "length_giveaways", "literal_figures", "option_lengths", "questions",
    "rank_findings", "rule_answerable", "rule_comparisons", "rule_conditions", "rule_fixed_truths", "rule_limits", "rule_typed_truths", "MAX_FIXED_SHARE", "rule_number_formats", "rule_draw_space", "rule_file_name", "rule_no_leaks", "rule_option_lengths",
    "rule_pacing", "rule_paths_answerable", "rule_placeholders", "rule_presets", "rule_references",
    "rule_simulations", "rule_skills", "rule_variants", "rule_varied_figures", "run_rules", "strip", "texts",
    "typed_figures", "values_for", "variant_values",
]


def drill_findings(drill: Drill, file_stem: str | None = None,
                   draws: int = LOAD_DRAWS) -> tuple[dict[str, float], list[Finding]]:
    """Every registered rule over a drill whose fields are valid; returns the values its formulas give and the
    findings."""
    subject = Subject(drill, file_stem, draws)
    findings = run_rules(subject)
    return subject.values, findings
