"""The vocabulary of rule options: the error every bad option raises (:class:`OptionError`), the domains of allowed
values (:class:`Choice`, :class:`PositiveNumber`, :class:`OptionalPositiveNumber`, :class:`NonNegativeInteger`),
the field helper that records a domain and meaning on a dataclass field, :class:`OptionInfo`, and the validating
base of every options dataclass.  The options classes themselves are in :mod:`mjenv.rules.option_classes`; the
public door to all of it is :mod:`mjenv.rules.options`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

class OptionError(ValueError):
    """A bad option name or value, or a bad ruleset / preset / variant; the message names it and the alternatives."""

    def __init__(self, message: str, *, option: str | None = None, value: Any = None, allowed: tuple = ()):
        super().__init__(message)
        self.option = option
        self.value = value
        self.allowed = allowed


# --------------------------------------------------------------------------------------------------
# Value domains: what an option may hold, how it is spelled on a command line / in TOML.
# --------------------------------------------------------------------------------------------------


def _format_value(v: Any) -> str:
    """The rule book's spelling of a value: ``None`` is ``none``, numbers as written."""
    if v is None:
        return "none"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass(frozen=True)
class Choice:
    """A closed list of values, each a ``str``, an ``int`` or ``None`` (spelled ``none``)."""

    values: tuple

    @staticmethod
    def _same_kind(a: Any, value: Any) -> bool:
        # bool is an int subclass and 8.0 == 8, but neither spells an allowed value of the rule book
        if a is None:
            return value is None
        if isinstance(a, str):
            return isinstance(value, str)
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)

    def accepts(self, value: Any) -> bool:
        """True when ``value`` is one of the values with a matching type (``True`` is not 1, ``8.0`` is not 8)."""
        return any(self._same_kind(a, value) and value == a for a in self.values)

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int or None)"`` when no value has the type of ``value``, else ``""``."""
        if any(self._same_kind(a, value) for a in self.values):
            return ""
        kinds = {"None" if a is None else type(a).__name__ for a in self.values}
        expected = " or ".join(sorted(kinds, key=lambda k: (k == "None", k)))
        return f" (a {type(value).__name__}; expected {expected})"

    def normalize(self, value: Any) -> Any:
        """Canonical Python value (numpy integers become ``int``)."""
        return value if value is None or isinstance(value, str) else int(value)

    def parse(self, text: str) -> Any:
        """The value whose spelling is ``text``; raises ``ValueError`` when none matches."""
        text = text.strip()
        for a in self.values:
            if _format_value(a) == text:
                return a
        raise ValueError(text)

    @property
    def text_only(self) -> bool:
        """True when every value is a string (then strings are values, never parsed)."""
        return all(isinstance(a, str) for a in self.values)

    def describe(self) -> str:
        """``8, 16, none``."""
        return ", ".join(_format_value(a) for a in self.values)


MAX_AMOUNT = 1_000_000
"""The largest ``base`` stake or ``bankroll``: every amount is a hand value times them, so ``base = 1e308`` made money
inf and NaN; under this bound a hand's money (a value times at most 10**6, times the balances' 10**6 b) stays many
orders of magnitude inside float64's range."""


@dataclass(frozen=True)
class PositiveNumber:
    """A number > 0 and at most :data:`MAX_AMOUNT` (int or float, not bool), stored as ``float``."""

    def accepts(self, value: Any) -> bool:
        """True for a real number with ``0 < value <= MAX_AMOUNT``."""
        return (
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and 0 < value <= MAX_AMOUNT
        )

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int or float)"`` when ``value`` is not a real number, else ``""``."""
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return ""
        return f" (a {type(value).__name__}; expected int or float)"

    def normalize(self, value: Any) -> float:
        """``float(value)``, so that ``base=1`` and ``base=1.0`` are the same options."""
        return float(value)

    def parse(self, text: str) -> float:
        """``"2.5" -> 2.5``; raises ``ValueError`` on anything that is not a number in ``(0, MAX_AMOUNT]``."""
        v = float(text.strip())
        if not self.accepts(v):
            raise ValueError(text)
        return v

    @property
    def text_only(self) -> bool:
        """Numbers are never strings."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return f"a number > 0, up to {MAX_AMOUNT}"


@dataclass(frozen=True)
class OptionalPositiveNumber:
    """``None`` (spelled ``none``) or a number in ``(0, MAX_AMOUNT]`` stored as ``float`` (e.g. the 园子 ``bankroll``)."""

    def accepts(self, value: Any) -> bool:
        """True for ``None`` or a real number in ``(0, MAX_AMOUNT]`` (not bool)."""
        return value is None or PositiveNumber().accepts(value)

    def type_problem(self, value: Any) -> str:
        """``" (a str; expected int, float or None)"`` when ``value`` is neither None nor a number, else ``""``."""
        if value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
            return ""
        return f" (a {type(value).__name__}; expected int, float or None)"

    def normalize(self, value: Any) -> float | None:
        """``None`` stays ``None``; numbers become ``float``."""
        return None if value is None else float(value)

    def parse(self, text: str) -> float | None:
        """``"none" -> None``, ``"50" -> 50.0``; raises ``ValueError`` on anything else."""
        return None if text.strip() == "none" else PositiveNumber().parse(text)

    @property
    def text_only(self) -> bool:
        """``none`` is a spelling, not a value: strings are always parsed."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return f"none or a number > 0, up to {MAX_AMOUNT}"


@dataclass(frozen=True)
class NonNegativeInteger:
    """An integer >= 0 (not bool), stored as ``int`` (e.g. the Yangzhou threshold ``min_fan``)."""

    def accepts(self, value: Any) -> bool:
        """True for an integral value >= 0; ``15.0`` and ``True`` are not integers of the rule book."""
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0

    def type_problem(self, value: Any) -> str:
        """``" (a float; expected int)"`` when ``value`` is not an integer, else ``""``."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return ""
        return f" (a {type(value).__name__}; expected int)"

    def normalize(self, value: Any) -> int:
        """``int(value)`` (numpy integers become ``int``)."""
        return int(value)

    def parse(self, text: str) -> int:
        """``"15" -> 15``; raises ``ValueError`` on anything that is not a decimal integer >= 0."""
        text = text.strip()
        if not re.fullmatch(r"\+?\d+", text):
            raise ValueError(text)
        return int(text)

    @property
    def text_only(self) -> bool:
        """Integers are never strings."""
        return False

    def describe(self) -> str:
        """Human wording of the domain."""
        return "an integer >= 0"


Domain = Choice | PositiveNumber | OptionalPositiveNumber | NonNegativeInteger


def _opt(default: Any, domain: Domain, meaning: str) -> Any:
    """A dataclass field that records its domain and one-line meaning (read back by :func:`option_info`)."""
    return field(default=default, metadata={"domain": domain, "meaning": meaning})


def _choice(default: Any, values: tuple, meaning: str) -> Any:
    return _opt(default, Choice(values), meaning)


_ON_OFF = ("on", "off")
_OFF_ON = ("off", "on")


@dataclass(frozen=True)
class OptionInfo:
    """One option of an options class, as listed by the CLI and the docs."""

    name: str
    domain: Domain
    default: Any
    meaning: str

    @property
    def allowed_text(self) -> str:
        """The allowed values as the rule book writes them."""
        return self.domain.describe()


class _ValidatedOptions:
    """Mixin giving every options dataclass the same ``__post_init__`` validation and normalization."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            domain: Domain = f.metadata["domain"]
            value = getattr(self, f.name)
            if not domain.accepts(value):
                raise _bad_value(f.name, value, domain)
            norm = domain.normalize(value)
            if norm is not value:
                # frozen: the normalized value goes in through object.__setattr__
                object.__setattr__(self, f.name, norm)


def _bad_value(name: str, value: Any, domain: Domain, *, from_text: bool = False) -> OptionError:
    """The one error message for a value outside an option's domain (with the type when that is what is wrong)."""
    # parsed text has no type problem of its own: only its spelling can be wrong
    wrong_type = "" if from_text else domain.type_problem(value)
    allowed = domain.values if isinstance(domain, Choice) else ()
    return OptionError(
        f"option {name!r}: {value!r} is not allowed{wrong_type}; allowed values: {domain.describe()}",
        option=name,
        value=value,
        allowed=allowed,
    )


def _did_you_mean(name: Any, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(name), list(candidates), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
