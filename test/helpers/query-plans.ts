import type { Sql, TransactionSql } from 'postgres';

/** A node of the plan tree EXPLAIN (FORMAT JSON) gives. */
export type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };

/** Visits every node of a plan, the root first. */
export function walkPlan(node: PlanNode, visit: (node: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walkPlan(child, visit);
}

/** The plan PostgreSQL makes for `statement` with `params`, as the service sent them. */
export async function planOf(sql: Sql | TransactionSql, statement: string, params: readonly unknown[]): Promise<PlanNode> {
  const [row] = await sql.unsafe<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }[]>(`explain (format json) ${statement}`, params as never[]);
  return row!['QUERY PLAN'][0]!.Plan;
}
