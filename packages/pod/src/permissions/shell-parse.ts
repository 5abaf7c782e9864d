/**
 * Reads a bash command line the way bash will, with tree-sitter-bash (run
 * through web-tree-sitter's WebAssembly build, loaded on first use so start-up
 * pays nothing for it). Permission rules need two things from a line: every
 * simple command it runs (in pipelines, lists, subshells, `$(...)`,
 * backticks, process substitution, `eval` and `bash -c '...'`), and every
 * file it writes through a redirection. Anything the grammar cannot read, or
 * whose meaning depends on run-time values (a command name from a variable, a
 * redirection target with an expansion), is reported as not classifiable:
 * the caller asks the user instead of guessing.
 */

import { createRequire } from "node:module";
import { YoiError } from "@yoi/manifest/errors";
import type { Parser, Node as SyntaxNode } from "web-tree-sitter";

/** A file a command line writes through a redirection. */
export interface ShellWrite {
  /** The redirection operator as written: `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&`. */
  operator: string;
  /** The target with quotes removed and `~` left as written; undefined when it holds an expansion. */
  target: string | undefined;
  /** The target as written. */
  raw: string;
}

/** What a command line does, as far as permissions care. */
export type ShellAnalysis =
  | {
      kind: "parsed";
      /** The text of every simple command (redirections left out), outermost first. */
      commands: string[];
      /** Every write through a redirection. */
      writes: ShellWrite[];
    }
  | {
      kind: "unclassifiable";
      /** Why, for the prompt: "the line does not parse", "a command name comes from a variable". */
      reason: string;
      /** The simple commands that could be read (deny rules still apply to them). */
      commands: string[];
    };

/** Deepest nesting of `eval` / `bash -c` strings read before giving up (and asking). */
const MAX_NESTED_SHELLS = 4;
/** Commands that run their string argument as a shell line. */
const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh"]);
/** `find` actions that run a command. */
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** Redirection operators that only read or duplicate descriptors. */
const READ_ONLY_OPERATORS = new Set(["<", "<<", "<<<", "<<-", "<&"]);

let parserPromise: Promise<Parser> | undefined;

/** The shared parser, created on first use. */
async function parser(): Promise<Parser> {
  parserPromise ??= (async () => {
    const { Parser: ParserClass, Language } = await import("web-tree-sitter");
    const require = createRequire(import.meta.url);
    await ParserClass.init();
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const instance = new ParserClass();
    instance.setLanguage(language);
    return instance;
  })();
  // A failed load is retried by the next call rather than cached.
  parserPromise.catch(() => {
    parserPromise = undefined;
  });
  return parserPromise;
}

/** Thrown inside the walk when a line cannot be classified; `analyzeShell` turns it into a result. */
class Unclassifiable extends YoiError<"unclassifiable"> {
  override readonly name = "Unclassifiable";
  static override readonly marker: symbol = Symbol.for("yoi.error.Unclassifiable");

  constructor(reason: string) {
    super("unclassifiable", reason);
  }
}

/** Analyses one command line. Never throws for any input string. */
export async function analyzeShell(line: string): Promise<ShellAnalysis> {
  const p = await parser();
  const commands: string[] = [];
  const writes: ShellWrite[] = [];
  try {
    collect(p, line, commands, writes, 0);
  } catch (error) {
    if (Unclassifiable.isInstance(error)) return { kind: "unclassifiable", reason: error.message, commands };
    throw error;
  }
  return { kind: "parsed", commands, writes };
}

function collect(p: Parser, line: string, commands: string[], writes: ShellWrite[], depth: number): void {
  const tree = p.parse(line);
  if (tree === null) throw new Unclassifiable("the line could not be parsed");
  try {
    const root = tree.rootNode;
    if (root.hasError) throw new Unclassifiable("the line does not parse as bash");
    walk(root, p, commands, writes, depth);
  } finally {
    tree.delete();
  }
}

function walk(node: SyntaxNode, p: Parser, commands: string[], writes: ShellWrite[], depth: number): void {
  switch (node.type) {
    case "command":
      commands.push(commandText(node));
      nested(node, p, commands, writes, depth);
      break;
    case "declaration_command":
    case "unset_command":
      commands.push(node.text.trim());
      break;
    case "file_redirect":
      redirect(node, writes);
      break;
    default:
      break;
  }
  for (const child of node.namedChildren) if (child !== null) walk(child, p, commands, writes, depth);
}

/** The command's own words (assignments, name, arguments), never the redirections around it. */
function commandText(node: SyntaxNode): string {
  const name = node.childForFieldName("name");
  if (name === null) return node.text.trim();
  if (!isLiteral(name)) throw new Unclassifiable(`the command name ${name.text} is only known when it runs`);
  const parts: string[] = [];
  for (const child of node.children) {
    if (child === null || child.type === "file_redirect" || child.type === "herestring_redirect") continue;
    parts.push(child.text);
  }
  return parts.join(" ").trim();
}

/** `eval '...'` and `bash -c '...'` run a string as a shell line: read it too. */
function nested(node: SyntaxNode, p: Parser, commands: string[], writes: ShellWrite[], depth: number): void {
  const name = literalValue(node.childForFieldName("name"));
  if (name === undefined) return;
  const base = name.slice(name.lastIndexOf("/") + 1);
  const args = node.childrenForFieldName("argument").filter((a): a is SyntaxNode => a !== null);
  if (base === "find") {
    findExecCommands(args, commands);
    return;
  }
  let script: SyntaxNode[] = [];
  if (base === "eval") script = args;
  else if (SHELLS.has(base)) {
    const c = args.findIndex((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text));
    if (c < 0) {
      // `bash script.sh` runs a file we cannot see; `bash` alone reads stdin.
      return;
    }
    const body = args[c + 1];
    script = body === undefined ? [] : [body];
  } else return;
  if (depth >= MAX_NESTED_SHELLS) throw new Unclassifiable("shell strings nested too deeply");
  const texts = script.map(literalValue);
  if (texts.some((t) => t === undefined))
    throw new Unclassifiable(`${base} runs a string that is only known when it runs`);
  collect(p, texts.join(" "), commands, writes, depth + 1);
}

/** `find ... -exec cmd args {} ;` runs `cmd args` for each file: it is a command of the line too. */
function findExecCommands(args: readonly SyntaxNode[], commands: string[]): void {
  for (let i = 0; i < args.length; i++) {
    if (!FIND_EXEC.has(args[i]!.text)) continue;
    const words: string[] = [];
    let j = i + 1;
    for (; j < args.length; j++) {
      const text = args[j]!.text;
      if (text === ";" || text === "\\;" || text === "';'" || text === '";"' || text === "+") break;
      words.push(text);
    }
    if (words.length > 0) commands.push(words.join(" "));
    i = j;
  }
}

function redirect(node: SyntaxNode, writes: ShellWrite[]): void {
  const destination = node.childForFieldName("destination");
  let operator = "";
  for (const child of node.children) {
    if (child !== null && !child.isNamed) operator += child.type;
  }
  if (READ_ONLY_OPERATORS.has(operator) || destination === null) return;
  const raw = destination.text;
  // `>&2`, `2>&1`, `>&-`: descriptors, not files.
  if ((operator === ">&" || operator === "&>" || operator === "<&") && /^(\d+-?|-)$/.test(raw)) return;
  if (operator === ">&" && /^\d+$/.test(raw)) return;
  writes.push({ operator, target: literalValue(destination), raw });
}

/** True for a word whose value is fixed when the line is written (quotes allowed, no expansions). */
function isLiteral(node: SyntaxNode): boolean {
  return literalValue(node) !== undefined;
}

/** The value of a word without expansions, quotes removed; undefined when bash would expand something. */
function literalValue(node: SyntaxNode | null): string | undefined {
  if (node === null) return undefined;
  switch (node.type) {
    case "command_name": {
      const inner = node.namedChildren[0];
      return inner === undefined || inner === null ? undefined : literalValue(inner);
    }
    case "word":
    case "number":
      // Globs and brace expansions are values the shell computes.
      if (/[*?[{]/.test(node.text)) return undefined;
      return unescapeWord(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "string": {
      let out = "";
      for (const child of node.namedChildren) {
        if (child === null) continue;
        if (child.type !== "string_content") return undefined;
        out += child.text.replace(/\\([$`"\\\n])/g, "$1");
      }
      return out;
    }
    case "concatenation": {
      let out = "";
      for (const child of node.namedChildren) {
        const part = literalValue(child);
        if (part === undefined) return undefined;
        out += part;
      }
      // `a"b"`: anonymous quote tokens are not named children, but the parts are.
      return out;
    }
    default:
      return undefined;
  }
}

function unescapeWord(text: string): string {
  return text.replace(/\\(.)/g, "$1");
}

/** Loads the parser now (the first analysis otherwise pays for it). */
export async function preloadShellParser(): Promise<void> {
  await parser();
}
