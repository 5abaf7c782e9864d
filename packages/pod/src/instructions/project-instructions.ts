/**
 * Project instructions: the AGENTS.md (or CLAUDE.md) files of the scope and
 * the user's `~/.yoi/AGENTS.md`, read at session start and again before
 * each run, so an edit between turns reaches the next request. They are
 * sent as part of the system prompt, each under its path. Project files are
 * read through the session's ScopedFs, so a symlink out of the scope is
 * refused like an `@path`; each body is capped with the `@path` truncation note.
 */
import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import * as path from "node:path";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { ScopedFs } from "../fs/scoped-fs.ts";
import { FileRefError, readTextBody } from "../input/file-ref.ts";
import { directoryChain, INSTRUCTION_FILE_NAMES } from "./instruction-files.ts";

/** Options of project instructions (`PodOptions.instructions`). */
export interface InstructionsOptions {
  /**
   * The user's yoi directory, whose `AGENTS.md` applies to every project.
   * Default `~/.yoi`; `false` reads no user file.
   */
  userDir?: string | false;
  /** Cap of one file's body in UTF-8 bytes (the rest is cut with a note). Default `TOOL_OUTPUT_MAX_BYTES` (16 KiB). */
  maxBytesPerFile?: number;
}

/** One instruction file as it is sent. */
export interface InstructionFile {
  /** The path shown to the model: relative to the project root, or `~/.yoi/AGENTS.md`. */
  display: string;
  /** Where it comes from: the user's directory or the project. */
  origin: "user" | "project";
  body: string;
  truncated: boolean;
  totalBytes: number;
}

/** A file that exists but could not be used (out of scope, binary, unreadable). */
export interface InstructionProblem {
  display: string;
  reason: string;
}

export interface InstructionsSnapshot {
  files: InstructionFile[];
  problems: InstructionProblem[];
}

/** The heading of the instructions section of the system prompt. */
export const INSTRUCTIONS_HEADING = "# Instructions from AGENTS.md files";

export class ProjectInstructions {
  readonly #fs: ScopedFs;
  readonly #dirs: string[];
  readonly #userDir: string | undefined;
  readonly #userLabel: string;
  readonly #maxBytes: number;
  #userFs: ScopedFs | undefined;
  #current: InstructionsSnapshot = { files: [], problems: [] };

  /**
   * `root` is the project (scope) root, `cwd` the user's working directory
   * (files are looked for from `root` down to it), `fs` the session's
   * ScopedFs.
   */
  constructor(fs: ScopedFs, root: string, cwd: string, options: InstructionsOptions = {}) {
    const max = options.maxBytesPerFile ?? TOOL_OUTPUT_MAX_BYTES;
    if (!(Number.isInteger(max) && max > 0)) {
      throw new RangeError(`instructions.maxBytesPerFile must be a positive integer, got ${max}`);
    }
    this.#fs = fs;
    this.#dirs = directoryChain(root, cwd);
    this.#maxBytes = max;
    const defaultDir = path.join(homedir(), ".yoi");
    this.#userDir = options.userDir === false ? undefined : path.resolve(options.userDir ?? defaultDir);
    this.#userLabel =
      this.#userDir === defaultDir ? "~/.yoi/AGENTS.md" : path.join(this.#userDir ?? "", "AGENTS.md");
  }

  /** What the last `refresh` found. */
  get current(): InstructionsSnapshot {
    return this.#current;
  }

  /**
   * Reads the files again. Resolves with whether what the model will see
   * changed since the last refresh (a file added, removed or edited).
   */
  async refresh(): Promise<boolean> {
    const files: InstructionFile[] = [];
    const problems: InstructionProblem[] = [];
    const user = await this.#readUser(problems);
    if (user) files.push(user);
    for (const dir of this.#dirs) {
      for (const name of INSTRUCTION_FILE_NAMES) {
        const display = path.relative(this.#fs.cwd, path.join(dir, name)) || name;
        const found = await this.#read(this.#fs, display, display, "project", problems);
        if (found === "absent") continue;
        if (found !== "refused") files.push(found);
        break; // AGENTS.md wins; CLAUDE.md only where there is no AGENTS.md
      }
    }
    const before = render(this.#current.files);
    this.#current = { files, problems };
    return render(files) !== before;
  }

  /** The section appended to the system prompt; empty when there are no files. */
  render(): string {
    return render(this.#current.files);
  }

  async #readUser(problems: InstructionProblem[]): Promise<InstructionFile | undefined> {
    if (this.#userDir === undefined) return undefined;
    if (this.#userFs === undefined) {
      const exists = await stat(this.#userDir).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!exists) return undefined;
      this.#userFs = await ScopedFs.create({ readRoots: [this.#userDir] });
    }
    const found = await this.#read(this.#userFs, "AGENTS.md", this.#userLabel, "user", problems);
    return typeof found === "string" ? undefined : found;
  }

  async #read(
    fs: ScopedFs,
    input: string,
    display: string,
    origin: InstructionFile["origin"],
    problems: InstructionProblem[],
  ): Promise<InstructionFile | "absent" | "refused"> {
    try {
      const read = await readTextBody(fs, input, this.#maxBytes);
      return { display, origin, body: read.body, truncated: read.truncated, totalBytes: read.totalBytes };
    } catch (error) {
      if (FileRefError.isInstance(error) && (error.code === "not_found" || error.code === "directory"))
        return "absent";
      const reason = errorMessage(error);
      problems.push({ display, reason });
      return "refused";
    }
  }
}

/** The system prompt section: a short preamble, then each file under its path. */
export function render(files: readonly InstructionFile[]): string {
  if (files.length === 0) return "";
  const parts = [
    INSTRUCTIONS_HEADING,
    "Instructions the user and the project keep for you. Follow them. Where they disagree, a file deeper in the project takes precedence over its parent directories, and project files over the user's own.",
  ];
  for (const file of files) {
    const label = file.origin === "user" ? `${file.display} (the user's, for every project)` : file.display;
    parts.push(`## ${label}\n${file.body.trimEnd()}`);
  }
  return parts.join("\n\n");
}
