import type * as z from "zod";
import type { PathSegment } from "./config-path.ts";

/*
 * Reading zod 4 schema definitions (`_zod.def`) to answer two questions the
 * error messages and the env mapping need: which keys an object at a path
 * has, and what kind of value a leaf takes.
 */

type Def = {
  type: string;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
  valueType?: z.core.$ZodType;
  element?: z.core.$ZodType;
  options?: readonly z.core.$ZodType[];
};
const defOf = (schema: z.core.$ZodType): Def => schema._zod.def as unknown as Def;

/** Unwrap default/prefault/optional/nullable/pipe; reports whether null is accepted. */
function unwrap(schema: z.core.$ZodType): { base: z.core.$ZodType; nullable: boolean } {
  let cur = schema;
  let nullable = false;
  for (;;) {
    const def = defOf(cur);
    if (def.type === "nullable") nullable = true;
    const next = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (!next) return { base: cur, nullable };
    cur = next;
  }
}

/** The schema of the field at `path`, or `undefined` when the path does not exist. */
export function schemaAt(root: z.core.$ZodType, path: readonly PathSegment[]): z.core.$ZodType | undefined {
  let cur: z.core.$ZodType | undefined = root;
  for (const [i, seg] of path.entries()) {
    if (!cur) return undefined;
    const def = defOf(unwrap(cur).base);
    if (def.type === "union") {
      // `sandbox` is true, false or an object: the path goes on in whichever option has it.
      for (const option of def.options ?? []) {
        const found = schemaAt(option, path.slice(i));
        if (found) return found;
      }
      return undefined;
    }
    if (def.type === "object") cur = typeof seg === "string" && def.shape ? def.shape[seg] : undefined;
    else if (def.type === "record") cur = def.valueType;
    else if (def.type === "array") cur = typeof seg === "number" ? def.element : undefined;
    else return undefined;
  }
  return cur;
}

/** Keys of the object at `path`, or `[]` when it is not an object with fixed keys. */
export function knownKeysAt(root: z.core.$ZodType, path: readonly PathSegment[]): string[] {
  const schema = schemaAt(root, path);
  if (!schema) return [];
  const def = defOf(unwrap(schema).base);
  return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
}

/** What a leaf takes, for turning an environment string into a value. */
export type LeafKind = "string" | "number" | "boolean" | "enum" | "json";

/** The kind of value at `path` and whether it may be null; `undefined` for an unknown path. */
export function leafKindAt(
  root: z.core.$ZodType,
  path: readonly PathSegment[],
): { kind: LeafKind; nullable: boolean } | undefined {
  const schema = schemaAt(root, path);
  if (!schema) return undefined;
  const { base, nullable } = unwrap(schema);
  const type = defOf(base).type;
  const kind: LeafKind =
    type === "string" || type === "number" || type === "boolean" || type === "enum" ? type : "json";
  return { kind, nullable };
}
