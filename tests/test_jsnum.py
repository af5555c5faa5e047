"""JSON numbers as JavaScript writes them (``String(number)``), for the costs pi_trio
computes; the table was produced by Node's ``String()``."""

from __future__ import annotations

import pytest

from pi_trio.ai._json._jsnum import js_number, js_number_text, needs_js_spelling

NODE_SPELLINGS = [
    (3e-06, "0.000003"),
    (1e-06, "0.000001"),
    (9.99e-06, "0.00000999"),
    (1e-05, "0.00001"),
    (1e-07, "1e-7"),
    (1.5e-07, "1.5e-7"),
    (0.1, "0.1"),
    (123.456, "123.456"),
    (1000000000000000.0, "1000000000000000"),
    (1.0000000000000002e16, "10000000000000002"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.5e21, "1.5e+21"),
    (1.2345678901234568e20, "123456789012345680000"),
    (1e300, "1e+300"),
    (-3e-06, "-0.000003"),
    (-1.2e-05, "-0.000012"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (9007199254740992.0, "9007199254740992"),
    (0.30000000000000004, "0.30000000000000004"),
    (0.3333333333333333, "0.3333333333333333"),
    (2.5e-05, "0.000025"),
    (4.35e-06, "0.00000435"),
    (-5.240707458162173e-06, "-0.000005240707458162173"),
    (8.845845059190367e-07, "8.845845059190367e-7"),
    (-2.600896669038415e-06, "-0.000002600896669038415"),
    (2.07840077192389e-06, "0.00000207840077192389"),
    (2.51440608216108e-06, "0.00000251440608216108"),
    (-8.689422815203738e-06, "-0.000008689422815203738"),
    (2.719842284384216e-08, "2.719842284384216e-8"),
    (4.329918373098836e19, "43299183730988360000"),
    (3.6197824727881764, "3.6197824727881764"),
    (0.5406568559343408, "0.5406568559343408"),
    (7.182565114649034e24, "7.182565114649034e+24"),
    (33013817.65649968, "33013817.65649968"),
    (4.010771239683228e19, "40107712396832280000"),
    (52439179.41323279, "52439179.41323279"),
    (12281421536549.795, "12281421536549.795"),
    (0.0009339894976326008, "0.0009339894976326008"),
]


@pytest.mark.parametrize(("value", "spelling"), NODE_SPELLINGS)
def test_floats_are_spelled_as_node_spells_them(value: float, spelling: str) -> None:
    assert js_number_text(value) == spelling
    assert float(spelling) == value


def test_only_two_ranges_need_their_own_spelling() -> None:
    assert needs_js_spelling(3e-6)
    assert needs_js_spelling(-9.99e-6)
    assert needs_js_spelling(1e21)
    assert not needs_js_spelling(1e-5)
    assert not needs_js_spelling(1e-7)
    assert not needs_js_spelling(0.5)
    assert not needs_js_spelling(1e20)


def test_whole_amounts_are_stored_as_integers() -> None:
    assert js_number(0.0) == 0
    assert type(js_number(0.0)) is int
    assert type(js_number(3.0)) is int
    assert type(js_number(1e21)) is float
    assert js_number(0.25) == 0.25
