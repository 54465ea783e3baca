"""Integer index expressions with range-aware simplification.

An index is an affine sum ``c0 + sum_i c_i * a_i`` over *atoms* ``a_i``: loop variables or
opaque C sub-expressions, each with a known range ``[lo, hi]`` when one is known. Layout
operators (view, permute, expand, slice, cat, flip ...) compose index maps instead of moving
data, so the compiler must undo ``flatten -> unflatten`` round trips. The rules that do it:

    (q*d*x + r) // d = q*x      and      (q*d*x + r) % d = r      when 0 <= r < d for all values,

where ``r`` is the part of the sum whose coefficients are not multiples of ``d``. Anything that
does not simplify becomes a new atom whose range is derived from its operand's range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Range = tuple[int, int] | None


@dataclass(frozen=True)
class Ix:
    """``const + sum(coef * atom)``; atoms are C expressions (strings) with optional ranges."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0
    ranges: tuple[tuple[str, Range], ...] = field(default=(), compare=False)
    # atom -> ("div" | "mod", operand, divisor) for atoms made by // and %, so that
    # d*(e // d) + (e % d) folds back to e
    origins: tuple[tuple[str, tuple], ...] = field(default=(), compare=False)

    # -- construction --------------------------------------------------------------------

    @staticmethod
    def var(name: str, size: int | None) -> Ix:
        """A loop variable ranging over ``[0, size)`` (unknown range when ``size`` is None)."""
        rng = None if size is None else (0, max(0, size - 1))
        return Ix(((name, 1),), 0, ((name, rng),))

    @staticmethod
    def c(value: int) -> Ix:
        return Ix((), int(value))

    @staticmethod
    def atom(expr: str, rng: Range) -> Ix:
        return Ix(((expr, 1),), 0, ((expr, rng),))

    # -- queries -------------------------------------------------------------------------

    @property
    def is_const(self) -> bool:
        return not self.terms

    def variables_of(self, atom: str) -> set[str]:
        """The variables ``atom`` is made of: itself, or for an atom made by ``//`` or ``%``
        the variables of the expression it divides."""
        origin = dict(self.origins).get(atom)
        if origin is None:
            return {atom}
        inner = origin[1]
        return set().union(*(inner.variables_of(a) for a, _ in inner.terms))

    def range(self) -> Range:
        """Inclusive value range, or None when some atom's range is unknown."""
        known = dict(self.ranges)
        lo = hi = self.const
        for name, coef in self.terms:
            rng = known.get(name)
            if rng is None:
                return None
            a, b = coef * rng[0], coef * rng[1]
            lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    # -- arithmetic ----------------------------------------------------------------------

    def __add__(self, other: Ix | int) -> Ix:
        other = other if isinstance(other, Ix) else Ix.c(other)
        coefs = dict(self.terms)
        for name, coef in other.terms:
            coefs[name] = coefs.get(name, 0) + coef
        terms = tuple(sorted((n, c) for n, c in coefs.items() if c != 0))
        out = Ix(terms, self.const + other.const, _merge(self.ranges, other.ranges, terms),
                 _merge(self.origins, other.origins, terms))
        return _fold_divmod(out)

    def __sub__(self, other: Ix | int) -> Ix:
        return self + (other if isinstance(other, Ix) else Ix.c(other)) * -1

    def __mul__(self, k: int) -> Ix:
        if k == 0:
            return Ix.c(0)
        return Ix(tuple((n, c * k) for n, c in self.terms), self.const * k, self.ranges,
                  self.origins)

    def __floordiv__(self, d: int) -> Ix:
        if d == 1:
            return self
        exact, rest = self._split(d)
        rng = rest.range()
        if rng is not None and rng[0] >= 0 and rng[1] < d:
            return _scaled(exact, d)
        if exact.terms and rng is not None and rng[0] >= 0:  # (q*d + r) // d = q + r // d
            return _scaled(exact, d) + rest // d
        whole = self.range()
        if whole is not None and whole[0] >= 0 and whole[1] < d:
            return Ix.c(0)
        if self.is_const:
            return Ix.c(self.const // d)
        for _, g in self.terms:  # (g*q + r) // (g*m) = q // m when 0 <= r < g
            if 1 < g < d and d % g == 0:
                big, small = self._split(g)
                rng = small.range()
                if rng is not None and rng[0] >= 0 and rng[1] < g:
                    return _scaled(big, g) // (d // g)
        new = None if whole is None else (whole[0] // d, whole[1] // d)
        return _divmod_atom("div", self, d, f"(({self.render()}) / {d})", new)

    def __mod__(self, d: int) -> Ix:
        if d == 1:
            return Ix.c(0)
        _, rest = self._split(d)
        rng = rest.range()
        if rng is not None and rng[0] >= 0 and rng[1] < d:
            return rest
        if rest.is_const:
            return Ix.c(rest.const % d)
        return _divmod_atom("mod", rest, d, f"(({rest.render()}) % {d})", (0, d - 1))

    def _split(self, d: int) -> tuple[Ix, Ix]:
        """(terms with coefficients divisible by ``d``, everything else)."""
        ex = tuple((n, c) for n, c in self.terms if c % d == 0)
        re = tuple((n, c) for n, c in self.terms if c % d != 0)
        ec, rc = (self.const, 0) if self.const % d == 0 else (0, self.const)
        return Ix(ex, ec, self.ranges, self.origins), Ix(re, rc, self.ranges, self.origins)

    # -- rendering -----------------------------------------------------------------------

    def render(self) -> str:
        parts = [n if c == 1 else f"{c}*{n}" for n, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def __str__(self) -> str:
        return self.render()


def _divmod_atom(kind: str, operand: Ix, d: int, text: str, rng: Range) -> Ix:
    return Ix(((text, 1),), 0, ((text, rng),), ((text, (kind, operand, d)),))


def _fold_divmod(e: Ix) -> Ix:
    """Replace ``c*d*(x // d) + c*(x % d)`` by ``c*x``, and ``c*d*((x // d) % m) + c*(x % d)``
    by ``c*(x % (d*m))``, wherever both atoms occur. The second rule undoes a reshape that
    splits one dim into several (``r`` over (4, 30, 62) back to ``r``): it leaves ``x % 1860``
    beside ``1860*(x // 1860)``, which the first rule then folds."""
    info = dict(e.origins)
    for name, c in e.terms:
        if info.get(name, ("",))[0] != "mod":
            continue
        _, x, d = info[name]
        for partner, cc in e.terms:
            if cc != c * d or partner == name:
                continue
            kind, y, m = info.get(partner, ("", None, 0))
            if kind == "div" and y == x and m == d:
                folded = x * c
            elif kind == "mod" and _is_div_of(y, x, d):
                folded = (x % (d * m)) * c
            else:
                continue
            rest = Ix(tuple((n, k) for n, k in e.terms if n not in (name, partner)), e.const,
                      e.ranges, e.origins)
            return rest + folded
    return e


def _is_div_of(y: Ix, x: Ix, d: int) -> bool:
    """Whether ``y`` is exactly the atom ``x // d``."""
    if y.const or len(y.terms) != 1 or y.terms[0][1] != 1:
        return False
    kind, operand, divisor = dict(y.origins).get(y.terms[0][0], ("", None, 0))
    return kind == "div" and operand == x and divisor == d


def _scaled(exact: Ix, d: int) -> Ix:
    return Ix(tuple((n, c // d) for n, c in exact.terms), exact.const // d, exact.ranges,
              exact.origins)


def _merge(a, b, terms) -> tuple[tuple[str, Range], ...]:
    names = {n for n, _ in terms}
    table = dict(a)
    table.update(b)
    return tuple((n, r) for n, r in table.items() if n in names)


def linear(idx: list[Ix], shape: tuple[int, ...]) -> Ix:
    """Row-major flat offset of ``idx`` in a contiguous tensor of ``shape``."""
    out, stride = Ix.c(0), 1
    for i, size in zip(reversed(idx), reversed(shape), strict=True):
        if size != 1:
            out = out + i * stride
        stride *= size
    return out


def unravel(flat: Ix, shape: tuple[int, ...]) -> list[Ix]:
    """The row-major multi-index of flat offset ``flat`` in ``shape``."""
    out, stride = [], 1
    strides = []
    for size in reversed(shape):
        strides.append(stride)
        stride *= size
    for size, st in zip(shape, reversed(strides), strict=True):
        out.append(Ix.c(0) if size == 1 else (flat // st) % size)
    return out


def same_index(a: list[Ix], b: list[Ix]) -> bool:
    """Whether two multi-indices are the same expressions, counting an atom whose range is
    ``[0, 0]`` (a unit's coordinate along a size-1 dim) as the constant 0 it always is."""
    return len(a) == len(b) and all(_pinned(x) == _pinned(y) for x, y in zip(a, b, strict=True))


def _pinned(e: Ix) -> tuple[tuple[tuple[str, int], ...], int]:
    zero = {name for name, rng in e.ranges if rng == (0, 0)}
    return tuple(t for t in e.terms if t[0] not in zero), e.const
