"""Index algebra: the simplifications that make layout operators free."""

from kernelwright.tools.lower.index import Ix, linear, unravel


def test_view_round_trip_simplifies_to_the_loop_variables():
    b, c, h = Ix.var("b", 4), Ix.var("c", 3), Ix.var("h", 5)
    flat = linear([b, c, h], (4, 3, 5))
    merged = unravel(flat, (4, 15))
    assert merged[0] == b
    assert merged[1] == c * 5 + h
    back = unravel(linear(merged, (4, 15)), (4, 3, 5))
    assert back == [b, c, h]


def test_division_that_cannot_simplify_becomes_an_atom_with_a_range():
    i = Ix.var("i", 10)
    q = (i + 3) // 4
    assert not q.is_const and q.range() == (0, 3)
    assert ((i + 3) % 4).range() == (0, 3)
    assert (i * 4 + 3) // 4 == i
    assert (i * 4 + 3) % 4 == Ix.c(3)


def test_unknown_ranges_do_not_simplify():
    g = Ix.atom("g", None)
    assert (g // 2).render() == "((g) / 2)"
    assert (Ix.var("i", 7) // 8) == Ix.c(0)


def test_render_and_equality_ignore_term_order():
    a, b = Ix.var("a", 3), Ix.var("b", 3)
    assert a + b == b + a
    assert (a * 2 - 1).render() == "2*a - 1"


def test_divisor_multiple_of_a_coefficient_and_divmod_recombination():
    o, r = Ix.var("o", 18), Ix.var("r", 35)
    e = o * 35 + r  # flat index of (o, r) in an [18, 35] row-major domain
    q = e // 210  # 210 = 35 * 6: the row's group of 6
    assert q == o // 6
    assert (o // 6) * 6 + o % 6 == o  # split and recombined: the loop variable again


def test_a_dim_split_in_three_and_merged_again_is_the_flat_variable():
    # group norm's reduced run: r over (4, 30, 62) = one channel's 1860 elements x 4 channels
    r = Ix.var("r", 7440)
    parts = unravel(r, (4, 30, 62))
    assert linear(parts, (4, 30, 62)) == r  # 62*((r/62)%30) + r%62 -> r%1860, + 1860*(r/1860)
    for order in ([2, 1, 0], [1, 2, 0], [0, 2, 1]):  # the fold does not depend on term order
        total = Ix.c(0)
        strides = (1860, 62, 1)
        for d in order:
            total = total + parts[d] * strides[d]
        assert total == r, order
    g = Ix.atom("g", None)  # an unknown range keeps the outer remainder: r % 210, not r
    assert linear(unravel(g, (5, 7, 3, 2)), (5, 7, 3, 2)).render() == "((g) % 210)"
    swapped = linear([parts[0], parts[2], parts[1]], (4, 62, 30))  # a transpose: no fold
    assert swapped != r and "/" in swapped.render()
