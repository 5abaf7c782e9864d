/**
 * Session ids are UUID v7: time-ordered, so ids of one week share their
 * first characters. The list shows each id cut to the shortest prefix that
 * still tells it apart from every other id (at least `min` characters),
 * which is also what `--resume` accepts.
 */
export function shortIds(ids: readonly string[], min = 8): Map<string, string> {
  const sorted = [...new Set(ids)].sort();
  const out = new Map<string, string>();
  const common = (a: string | undefined, b: string | undefined): number => {
    if (a === undefined || b === undefined) return 0;
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return i;
  };
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i] as string;
    const shared = Math.max(common(id, sorted[i - 1]), common(id, sorted[i + 1]));
    out.set(id, id.slice(0, Math.min(id.length, Math.max(min, shared + 1))));
  }
  return out;
}
