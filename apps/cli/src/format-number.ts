/**
 * `131072` -> `"131,072"`, as `toLocaleString("en-US")` writes an integer,
 * without it: the first `toLocaleString` or `Intl.NumberFormat` of a
 * process loads ICU's number data (5-15 ms), and a note printed before the
 * first request (a model not in the catalog) paid that on its way.
 */
export function groupDigits(n: number): string {
  const sign = n < 0 ? "-" : "";
  const digits = String(Math.trunc(Math.abs(n)));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
