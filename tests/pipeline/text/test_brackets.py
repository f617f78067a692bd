"""Balanced brackets and quotes: one definition for the filter's line rule and the quality measure."""
from __future__ import annotations

import pytest

from pipeline.text.brackets import repair_brackets, unbalanced


@pytest.mark.parametrize("line,bad", [
    ("Він (народився у Києві) поет.", False),
    ("„Кобзар“ і «Гайдамаки» — твори.", False),
    ('He said "yes" and “no”.', False),
    ("Він (народився у Києві поет.", True),
    ("「はい。", True),
    ('He said "yes and left.', True),
    ("Він написав „Кобзар у 1840 році.", True),
    # list labels inside running text close no bracket
    ("Є два випадки: а) перший; б) другий (рідкісний).", False),
    ("Periods: 1) 1873—1876; 2) 1877—1880; iv) later.", False),
    ("Vua (năm 1013) và 12) quân.", False),
    # ... but a ")" after a word, or one that a label leaves unmatched, still counts
    ("Зупинився у маєтку Тарновського).", True),
    ("Séc 811 km), Áo (815 km).", True),
    ("(період пологів (2-20 год.)", True),
])
def test_unbalanced(line, bad):
    assert unbalanced(line) is bad


@pytest.mark.parametrize("text,expected", [
    ("Séc 811 km), Áo (815 km).", "Séc 811 km, Áo (815 km)."),
    ("Vĩnh Điện (khoảng Bắc Mê và huyện Để Định (Bảo Lạc).", "Vĩnh Điện khoảng Bắc Mê và huyện Để Định (Bảo Lạc)."),
    ("(MIT /) LCS) với sự hỗ trợ.", "(MIT /) LCS với sự hỗ trợ."),
    # kept: balanced text, list labels, Danish »…«, same-character quotes
    ("Він (народився у Києві) поет.", "Він (народився у Києві) поет."),
    ("Є два випадки: а) перший; б) другий (рідкісний).", "Є два випадки: а) перший; б) другий (рідкісний)."),
    ("Han sagde »ja« og gik.", "Han sagde »ja« og gik."),
    ('He said "yes and left.', 'He said "yes and left.'),
    ("「はい。」と言った」。", "「はい。」と言った。"),
])
def test_brackets_that_match_nothing_are_repaired(text, expected):
    assert repair_brackets(text) == expected
    assert not unbalanced(expected) or '"' in expected
