import { type TLiteral, type TUnion, Type } from "@sinclair/typebox";

/**
 * A TypeBox union of one vocabulary's values (src/store/vocabulary.ts), for request schemas. A union
 * of literals, not Elysia's UnionEnum: that one makes an absent query parameter take its first value.
 */
export function literals<T extends string>(values: readonly [T, ...T[]]): TUnion<TLiteral<T>[]> {
  return Type.Union(values.map((value) => Type.Literal(value)));
}
