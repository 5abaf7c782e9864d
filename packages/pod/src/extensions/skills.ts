/**
 * Skills: folders with a `SKILL.md` in `.yoi/skills/` (the project's) and
 * `~/.yoi/skills/` (the user's). Only each skill's name and description go
 * into the system prompt; the model loads the body, and reads the folder's
 * other files, with the `skill` tool when a task calls for it. The tool
 * reads nothing outside the skill's own folder (symlinks included).
 *
 * ```markdown
 * ---
 * name: pdf-forms
 * description: Fill in PDF forms with the scripts in this folder.
 * ---
 * Steps ...
 * ```
 */
import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import * as path from "node:path";
import { defineTool, type Tool, ToolError } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import * as z from "zod";
import type { ExtensionDirs, ExtensionProblem, ExtensionSource } from "./commands.ts";
import { FrontMatterError, parseFrontMatter } from "./front-matter.ts";

export interface Skill {
  name: string;
  description: string;
  source: ExtensionSource;
  /** The skill's folder (real path). */
  dir: string;
}

export const SKILL_TOOL_NAME = "skill";
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_FILE_BYTES = 256 * 1024;
const MAX_LISTED_FILES = 200;

/** Loads both directories; a broken SKILL.md is a problem, the others still load. */
export async function loadSkills(
  dirs: ExtensionDirs,
): Promise<{ skills: Skill[]; problems: ExtensionProblem[] }> {
  const problems: ExtensionProblem[] = [];
  const byName = new Map<string, Skill>();
  for (const [source, base] of [
    ["user", dirs.homeDir],
    ["project", dirs.projectDir],
  ] as const) {
    const root = path.join(base, ".yoi", "skills");
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory()) continue;
      const file = path.join(root, entry.name, "SKILL.md");
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch {
        problems.push({ file, message: "the skill folder has no SKILL.md" });
        continue;
      }
      try {
        const { data } = await parseFrontMatter(text);
        const name = data.name === undefined ? entry.name : String(data.name);
        if (!SKILL_NAME.test(name))
          throw new FrontMatterError(
            `name: expected 1-64 letters, digits, '.', '_' or '-', found ${JSON.stringify(name)}`,
          );
        const description = typeof data.description === "string" ? data.description.trim() : "";
        if (description === "")
          throw new FrontMatterError(
            "description: every skill needs one (it is how the model knows when to use it)",
          );
        byName.set(name, { name, description, source, dir: await realpath(path.join(root, entry.name)) });
      } catch (error) {
        problems.push({ file, message: errorMessage(error) });
      }
    }
  }
  return { skills: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), problems };
}

/** The system prompt's list of skills (names and descriptions only). */
export function skillsPrompt(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  return [
    "",
    `Skills (instructions and files for particular tasks; when one applies, load it with the ${SKILL_TOOL_NAME} tool before you start):`,
    ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ")}`),
  ].join("\n");
}

/** The arguments `skill` takes . */
export const skillInput = z.object({
  name: z.string().describe("The skill's name, as listed in the system prompt."),
  file: z
    .string()
    .optional()
    .describe(
      "A file of the skill's folder, relative to it (as listed when the skill is loaded). Omit for SKILL.md.",
    ),
});

/** The `skill` tool: SKILL.md's body and the folder's file list, or one of its files. */
export function createSkillTool(skills: readonly Skill[]): Tool<typeof skillInput> {
  const byName = new Map(skills.map((s) => [s.name, s]));
  return defineTool({
    name: SKILL_TOOL_NAME,
    description:
      "Load a skill listed in the system prompt: returns its instructions (SKILL.md) and the files of its folder. " +
      "Pass `file` to read one of those files.",
    inputSchema: skillInput,
    async execute({ name, file }) {
      const skill = byName.get(name);
      if (skill === undefined)
        throw new ToolError(
          `No skill named "${name}". Skills: ${[...byName.keys()].join(", ") || "(none)"}.`,
        );
      if (file === undefined || file.trim() === "" || file === "SKILL.md") {
        const { body } = await parseFrontMatter(await readFile(path.join(skill.dir, "SKILL.md"), "utf8"));
        const files = (await listFiles(skill.dir)).filter((f) => f !== "SKILL.md");
        return [
          `[Skill: ${skill.name}] (folder: ${skill.dir})`,
          body.trim(),
          ...(files.length > 0
            ? [
                "",
                `Files of this skill (read with ${SKILL_TOOL_NAME}({"name":"${skill.name}","file":"<path>"})):`,
                ...files.map((f) => `- ${f}`),
              ]
            : []),
        ].join("\n");
      }
      return readSkillFile(skill, file);
    },
  });
}

async function readSkillFile(skill: Skill, file: string): Promise<string> {
  if (path.isAbsolute(file))
    throw new ToolError(`file must be relative to the skill's folder, like "scripts/fill.py"`);
  const target = path.resolve(skill.dir, file);
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    throw new ToolError(
      `The skill "${skill.name}" has no file ${file}. Load the skill without \`file\` to see its files.`,
    );
  }
  if (real !== skill.dir && !real.startsWith(skill.dir + path.sep))
    throw new ToolError(`${file} is outside the skill's folder; only the skill's own files can be read.`);
  const info = await lstat(real);
  if (!info.isFile()) throw new ToolError(`${file} is not a file.`);
  if (info.size > MAX_FILE_BYTES)
    throw new ToolError(
      `${file} is ${info.size} bytes, over the ${MAX_FILE_BYTES}-byte limit for skill files.`,
    );
  const bytes = await readFile(real);
  if (bytes.includes(0)) throw new ToolError(`${file} is a binary file; only text files can be read.`);
  return bytes.toString("utf8");
}

/** Relative paths of the folder's files (a few levels, symlinks not followed). */
async function listFiles(dir: string, rel = "", depth = 0): Promise<string[]> {
  const out: string[] = [];
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (out.length >= MAX_LISTED_FILES) break;
    const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory() && depth < 4 && !entry.name.startsWith("."))
      out.push(...(await listFiles(dir, child, depth + 1)));
    else if (entry.isFile()) out.push(child);
  }
  return out.slice(0, MAX_LISTED_FILES);
}
