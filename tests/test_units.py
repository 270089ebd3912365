"""schemas.units: each factor declared once, named X_TO_Y (value in X times it is in Y)."""

from __future__ import annotations

from schemas import units


def test_sizes():
    assert (units.KIB_TO_BYTES, units.MIB_TO_BYTES, units.GIB_TO_BYTES) == (1024, 2**20, 2**30)
    assert (units.TIB_TO_BYTES, units.PIB_TO_BYTES) == (2**40, 2**50)
    assert all(type(f) is int for f in (units.KIB_TO_BYTES, units.MIB_TO_BYTES,
                                        units.GIB_TO_BYTES, units.TIB_TO_BYTES))
    assert (units.KB_TO_BYTES, units.MB_TO_BYTES, units.GB_TO_BYTES, units.TB_TO_BYTES) == (
        1e3, 1e6, 1e9, 1e12)
    assert units.BYTES_TO_MB == 1e-6
    assert (units.BINARY_PREFIX_BASE, units.DECIMAL_PREFIX_BASE, units.BYTE_TO_BITS) == (
        1024, 1000, 8)


def test_times():
    assert (units.S_TO_MS, units.S_TO_US, units.MS_TO_US, units.MS_TO_NS, units.US_TO_NS) == (
        1000.0, 1e6, 1000.0, 1e6, 1000.0)
    assert (units.MS_TO_S, units.US_TO_S, units.US_TO_MS, units.NS_TO_US, units.NS_TO_MS) == (
        1e-3, 1e-6, 1e-3, 1e-3, 1e-6)
    assert (units.MIN_TO_S, units.H_TO_S, units.D_TO_S) == (60.0, 3600.0, 86400.0)


def test_counts():
    assert units.FRACTION_TO_PCT == 100.0
    assert (units.THOUSANDS, units.MILLIONS, units.BILLIONS, units.TRILLIONS,
            units.QUADRILLIONS) == (1e3, 1e6, 1e9, 1e12, 1e15)


def test_division_keeps_exact_values_where_multiplication_would_not():
    """Why parsers divide by S_TO_MS (ms -> s) rather than multiply by MS_TO_S."""
    assert 120002 / units.S_TO_MS == 120.002
    assert 120002 * units.MS_TO_S != 120.002


def test_every_factor_is_declared_once():
    names = [n for n in vars(units) if n.isupper()]
    assert len(names) == len(set(names))
    source = open(units.__file__).read()
    assert all(source.count(f"\n{n} = ") == 1 for n in names)
