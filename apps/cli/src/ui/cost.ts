/**
 * Costs as the CLI shows them. The arithmetic is the manifest's `costOf`
 * (the pod's cost metric uses it too), re-exported for the UI.
 */
export { costOf } from "@yoi/manifest";

/** `$0.0042`, `$0.12`, `$3.40`; `$?` when unknown. */
export function formatCost(dollars: number | undefined): string {
  if (dollars === undefined) return "$?";
  if (dollars === 0) return "$0";
  if (dollars < 0.01) return `$${dollars.toFixed(4)}`;
  if (dollars < 1) return `$${dollars.toFixed(3)}`;
  return `$${dollars.toFixed(2)}`;
}
