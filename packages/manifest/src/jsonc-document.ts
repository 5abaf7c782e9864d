import * as jsonc from "jsonc-parser";
import { configLimitProblem } from "./config-limits.ts";
import type { PathSegment } from "./config-path.ts";

/** A syntax or structure problem at a position in a JSONC text. */
export interface JsoncProblem {
  kind: "syntax_error" | "duplicate_key" | "empty_file" | "too_large" | "too_deep";
  line: number;
  column: number;
  /** Human description, e.g. `expected a comma or "}", found "maxTurns"`. */
  detail: string;
}

/** A parsed JSONC file: its value, its problems, and positions of fields for messages. */
export interface JsoncDocument {
  value: unknown;
  problems: JsoncProblem[];
  /**
   * Position of the field at `path` (1-based): of its key when `at` is "key",
   * else of its value; the nearest existing parent when the field is absent.
   */
  locate(path: readonly PathSegment[], at?: "key" | "value"): { line: number; column: number } | undefined;
}

const SYNTAX_TEXT: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: 'expected ":" after the property name',
  CommaExpected: "expected a comma",
  CloseBraceExpected: 'expected "}"',
  CloseBracketExpected: 'expected "]"',
  EndOfFileExpected: "expected the end of the file after the top-level value",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated /* comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape character in string",
  InvalidCharacter: "invalid character in string (control characters must be escaped)",
};

/**
 * Parse JSON with comments and trailing commas (the VS Code settings dialect,
 * through `jsonc-parser`). Every syntax error is reported with its line and
 * column; duplicate keys are reported too, since JSON would silently keep the
 * last one.
 */
export function parseJsoncDocument(text: string): JsoncDocument {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const position = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo]! + 1 };
  };

  const limit = configLimitProblem(source);
  if (limit !== undefined) return { value: undefined, problems: [limit], locate: () => undefined };

  const errors: jsonc.ParseError[] = [];
  const tree = jsonc.parseTree(source, errors, { allowTrailingComma: true, disallowComments: false });
  const problems: JsoncProblem[] = [];
  // Only the first syntax error: the parser's recovery turns one mistake into a cascade of noise.
  const empty = jsonc.stripComments(source).trim() === "";
  const first = empty ? undefined : errors[0];
  if (first)
    problems.push({
      kind: "syntax_error",
      ...position(first.offset),
      detail: describeSyntaxError(source, first),
    });
  else if (empty) {
    const blank = source.trim() === "";
    problems.push({
      kind: "empty_file",
      line: 1,
      column: 1,
      detail: `the file is ${blank ? "empty" : "only comments"}; expected a JSON object such as {} (or delete the file)`,
    });
  }
  if (tree && !first) {
    collectDuplicates(tree, (node, key) =>
      problems.push({
        kind: "duplicate_key",
        ...position(node.offset),
        detail: `duplicate key "${key}" (JSON would silently keep only the last one); keep one`,
      }),
    );
  }

  const locate: JsoncDocument["locate"] = (path, at = "value") => {
    if (!tree) return undefined;
    for (let n = path.length; n >= 0; n--) {
      const node = jsonc.findNodeAtLocation(tree, path.slice(0, n) as jsonc.JSONPath);
      if (!node) continue;
      const keyNode = node.parent?.type === "property" ? node.parent.children?.[0] : undefined;
      // An absent field points at the key of the object that lacks it.
      const target = (at === "key" || n < path.length) && keyNode ? keyNode : node;
      return position(target.offset);
    }
    return undefined;
  };
  return { value: tree ? jsonc.getNodeValue(tree) : undefined, problems, locate };
}

function collectDuplicates(node: jsonc.Node, report: (keyNode: jsonc.Node, key: string) => void): void {
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const prop of node.children ?? []) {
      const keyNode = prop.children?.[0];
      if (!keyNode) continue;
      const key = String(keyNode.value);
      if (seen.has(key)) report(keyNode, key);
      seen.add(key);
    }
  }
  for (const child of node.children ?? []) collectDuplicates(child, report);
}

function describeSyntaxError(source: string, e: jsonc.ParseError): string {
  const name = jsonc.printParseErrorCode(e.error);
  const word = /^[A-Za-z_$][\w$.-]*/.exec(source.slice(e.offset))?.[0];
  if (name === "InvalidSymbol" && word) {
    return `unquoted text ${JSON.stringify(word)}; property names and strings need double quotes`;
  }
  const detail = SYNTAX_TEXT[name] ?? name;
  if (name === "UnexpectedEndOfString" || name === "UnexpectedEndOfComment") return detail;
  if (e.offset >= source.length) return `${detail}, found the end of the file`;
  const token = (source.slice(e.offset, e.offset + Math.max(e.length, 1)).split("\n")[0] ?? "").trim();
  if (!token) return detail;
  const cut = token.length > 40 ? `${token.slice(0, 37)}...` : token;
  return `${detail}, found ${cut.startsWith('"') ? cut : JSON.stringify(cut)}`;
}
