/**
 * A named agent: a Markdown file in `.yoi/agents/` whose YAML front matter
 * says what it is for (`description`), which tools it may use (`tools`) and
 * on which model it runs (`model`); the body is its system prompt.
 */
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import * as z from "zod";

/** A subagent the `task` tool can run by name. */
export interface AgentDefinition {
  /** The file name without `.md`: what `task`'s `agent` argument names. */
  name: string;
  /** When to use it, for the model choosing one. */
  description: string;
  /** Tool names it may use (a subset of the session's). Default: every tool a subagent gets. */
  tools?: string[];
  /** A model ref (`provider/model`). Default: the session's model. */
  model?: string;
  /** Its system prompt (the file's body). */
  prompt: string;
  /** The file it came from. */
  path: string;
}

export type AgentDefinitionErrorCode = "invalid_name" | "no_front_matter" | "invalid_front_matter" | "io";

/** A file in an agents directory that could not be read as an agent. */
export class AgentDefinitionError extends YoiError<AgentDefinitionErrorCode> {
  override readonly name = "AgentDefinitionError";
  static override readonly marker: symbol = Symbol.for("yoi.error.AgentDefinitionError");
  readonly path: string;
  constructor(
    code: AgentDefinitionErrorCode,
    path: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.path = path;
  }
}

/** What an agent file's name may be (it becomes a tool argument). */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const toolList = () =>
  z.union([
    z.array(z.string().min(1)),
    // `tools: read_file, grep` as Claude Code's agent files write it.
    z
      .string()
      .min(1)
      .transform((s) =>
        s
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== ""),
      ),
  ]);

// Built on first parse: most sessions have no agent files.
const FrontMatter = z.lazy(() =>
  z.strictObject({
    description: z.string().trim().min(1, "description must not be empty"),
    tools: toolList().optional(),
    model: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\/\S+$/, 'model must be "<provider>/<model>" or "inherit"')
      .or(z.literal("inherit"))
      .optional(),
    // Other tools' agent files carry these; accepted and ignored.
    name: z.string().optional(),
    color: z.string().optional(),
  }),
);

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * Parses an agent file. `parseYaml` is the `yaml` package's `parse`
 * (passed in so the parser is loaded only when there are agent files).
 * Throws `AgentDefinitionError` saying what to fix.
 */
export function parseAgentFile(
  text: string,
  file: { name: string; path: string },
  parseYaml: (source: string) => unknown,
): AgentDefinition {
  const { name, path } = file;
  if (!AGENT_NAME_PATTERN.test(name)) {
    throw new AgentDefinitionError(
      "invalid_name",
      path,
      `${path}: the agent name "${name}" must be 1-64 letters, digits, "_" or "-" (rename the file)`,
    );
  }
  const fence = FENCE.exec(text.replace(/^\uFEFF/, ""));
  if (fence === null) {
    throw new AgentDefinitionError(
      "no_front_matter",
      path,
      `${path}: no front matter; start the file with ---, a "description:" line, and --- (optional: tools, model)`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(fence[1] ?? "") ?? {};
  } catch (error) {
    const why = errorMessage(error).split("\n")[0];
    throw new AgentDefinitionError(
      "invalid_front_matter",
      path,
      `${path}: front matter is not valid YAML: ${why}`,
    );
  }
  const parsed = FrontMatter.safeParse(data);
  if (!parsed.success) {
    const why = parsed.error.issues
      .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
      .join("; ");
    throw new AgentDefinitionError("invalid_front_matter", path, `${path}: ${why}`);
  }
  const prompt = text.slice(text.indexOf(fence[0]) + fence[0].length).trim();
  const fm = parsed.data;
  return {
    name,
    description: fm.description,
    ...(fm.tools !== undefined ? { tools: fm.tools } : {}),
    ...(fm.model !== undefined && fm.model !== "inherit" ? { model: fm.model } : {}),
    prompt,
    path,
  };
}
