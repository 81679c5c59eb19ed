/** The series a PromQL expression reads, by Prometheus' own grammar (@prometheus-io/lezer-promql). */
import { parser } from '@prometheus-io/lezer-promql';

/** Metric names of the vector selectors in `expr`; throws when the expression does not parse. */
export function seriesOf(expr: string): string[] {
  const names: string[] = [];
  const cursor = parser.parse(expr).cursor();
  do {
    if (cursor.type.isError) throw new Error(`not valid PromQL at ${cursor.from}: ${expr}`);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') names.push(expr.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return names;
}

/** The sample names in a Prometheus text exposition (histograms give their _bucket, _sum and _count). */
export function exposedSeries(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (m) out.add(m[1]);
  }
  return out;
}
