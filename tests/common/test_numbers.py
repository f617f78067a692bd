from common.numbers import signed


def test_a_small_gain_keeps_its_sign_and_digits():
    """Issue 52: the console said +0.0003, report.html and the card +0.000."""
    assert signed(0.0003) == "+0.0003" == signed(0.0003, digits=4)
    assert signed(0.02) == "+0.020" and signed(1.0, digits=4) == "+1.0000"
    assert signed(-0.00004) == "-0.00004"
    assert signed(0.0) == "+0.000"
    assert signed(float("nan")) == "+nan"


def test_a_count_and_its_noun_agree():
    """Issue 60: "1 columns", "1 rank(s)"."""
    from common.numbers import plural

    assert plural(1, "column") == "1 column" and plural(2, "column") == "2 columns"
    assert plural(0, "rank") == "0 ranks" and plural(12345, "row") == "12,345 rows"
    assert plural(1, "copy", "copies") == "1 copy" and plural(3, "copy", "copies") == "3 copies"


def test_a_ratios_error_never_reads_as_zero():
    """Issue 60: a 1.0x model's error of 0.04 read '1.0x (± 0.0)' in make pretrain's line."""
    from common.numbers import ratio_error

    assert ratio_error({"ratio_standard_error": 0.21}) == " (± 0.2)"
    assert ratio_error({"ratio_standard_error": 0.037}) == " (± 0.04)"
    assert ratio_error({}) == ""
