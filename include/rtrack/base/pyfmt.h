/* pyfmt.h - numbers as the Python reference prints them in its CSV.
 *
 * Python's csv module writes floats with repr(): the shortest decimal string that reads back as
 * the same double, always with a '.' or an exponent; positional while the decimal exponent of
 * the first digit is in [-4, 16), scientific otherwise ("1e-05", "1.5e+16"). Rounding is
 * Python's round(x, n): correctly rounded from the exact binary value, ties to even. */
#ifndef RTRACK_PYFMT_H
#define RTRACK_PYFMT_H

#include <stddef.h>

/* Room for any double's repr (sign, 17 digits, '.', exponent) and the NUL. */
#define RT_PYFLOAT_MAX 32

/* repr(x) into buf; returns its length. */
size_t rt_py_repr(double x, char buf[RT_PYFLOAT_MAX]);
/* round(x, ndigits) for ndigits >= 0. */
double rt_py_round(double x, int ndigits);
/* repr(round(x, ndigits)) into buf, in one formatting pass in the common case; returns the
 * sign of the rounded value (-1, 0, 1). */
int rt_py_round_repr(double x, int ndigits, char buf[RT_PYFLOAT_MAX], size_t *len);

#endif
