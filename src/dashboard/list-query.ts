import { AppError } from "../errors/catalog.ts";

/** A list page's filter as its address gives it: each named field, an empty one as absent. */
export function filterOf<const K extends string>(
  query: Record<string, string | undefined>,
  names: readonly K[],
): { [N in K]?: string } {
  const filter: { [N in K]?: string } = {};
  for (const name of names) filter[name] = query[name] || undefined;
  return filter;
}

/**
 * A page of a list, or `none` when the filter is refused: what the page's own fields send is always
 * valid, so a hand-made filter that is not (a time no date holds…) lists nothing rather than failing.
 */
export async function listOrNone<T>(list: () => Promise<T>, none: T): Promise<T> {
  try {
    return await list();
  } catch (error) {
    if (!(error instanceof AppError) || error.errorName !== "invalid_request") throw error;
    return none;
  }
}
