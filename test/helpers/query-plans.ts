import type { Sql, TransactionSql } from 'postgres';

/** A node of the plan tree EXPLAIN (FORMAT JSON) gives. */
export type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Actual Loops'?: number; Plans?: PlanNode[] };

/** Visits every node of a plan, the root first. */
export function walkPlan(node: PlanNode, visit: (node: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walkPlan(child, visit);
}

/** How many times the nodes reading `relation` ran, in all, in an analyzed plan (planOf with `analyze`). */
export function timesRead(plan: PlanNode, relation: string): number {
  let loops = 0;
  walkPlan(plan, (node) => {
    if (node['Relation Name'] === relation) loops += node['Actual Loops'] ?? 0;
  });
  return loops;
}

/**
 * The plan PostgreSQL makes for `statement` with `params`, as the service sent them; `analyze`: run, with how many
 * times each node ran (`Actual Loops`).
 */
export async function planOf(sql: Sql | TransactionSql, statement: string, params: readonly unknown[], { analyze = false } = {}): Promise<PlanNode> {
  const options = analyze ? 'analyze, timing off, format json' : 'format json';
  const [row] = await sql.unsafe<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }[]>(`explain (${options}) ${statement}`, params as never[]);
  return row!['QUERY PLAN'][0]!.Plan;
}
