/**
 * Prompt history that outlives the process: `~/.yoi/history`, one JSON
 * line per prompt (`{"project", "text", "at"}`), shared by every project and
 * read back per project, so Up and Ctrl-R in one repository offer what was
 * typed there. The file is private to the user (0600) and trimmed to the
 * newest entries when it grows past a bound.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { redactSecrets } from "@yoi/llm-client";
import * as z from "zod";

/** Entries kept per project in memory. */
const PER_PROJECT = 1000;
/** Lines in the file before it is trimmed, and how many a trim keeps. */
const FILE_MAX_LINES = 20_000;
const FILE_KEEP_LINES = 10_000;

const Entry = z.object({ project: z.string(), text: z.string(), at: z.string().optional() });

export class PromptHistory {
  readonly #file: string;
  readonly #project: string;
  /** Oldest first. */
  readonly #entries: string[];
  #lines: number;
  /** The file ends without a newline (a write torn by a crash): the next line starts on a fresh one. */
  #torn: boolean;
  #writing: Promise<unknown> = Promise.resolve();

  private constructor(file: string, project: string, entries: string[], lines: number, torn: boolean) {
    this.#file = file;
    this.#project = project;
    this.#entries = entries;
    this.#lines = lines;
    this.#torn = torn;
  }

  /** Loads the history of `project` from `file` (a missing or unreadable file is an empty history). */
  static async load(file: string, project: string): Promise<PromptHistory> {
    const raw = await readFile(file, "utf8").catch(() => "");
    const lines = raw.split("\n").filter((l) => l.trim() !== "");
    const entries: string[] = [];
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a torn last line after a crash: skip it
      }
      const entry = Entry.safeParse(parsed);
      if (entry.success && entry.data.project === project) entries.push(entry.data.text);
    }
    const torn = raw !== "" && !raw.endsWith("\n");
    return new PromptHistory(file, project, entries.slice(-PER_PROJECT), lines.length, torn);
  }

  /** This project's prompts, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /** Records a prompt (not a repeat of the last one) and appends it to the file, secrets masked. */
  add(text: string): void {
    if (text.trim() === "" || this.#entries.at(-1) === text) return;
    this.#entries.push(text);
    if (this.#entries.length > PER_PROJECT) this.#entries.shift();
    // Kept as typed for this session's recall; written with what reads like a key masked, as session logs are.
    const line = `${JSON.stringify({ project: this.#project, text: redactSecrets(text), at: new Date().toISOString() })}\n`;
    this.#writing = this.#writing
      .then(() => this.#append(line))
      .catch(() => {
        // History is a convenience: a read-only home must not break the session.
      });
  }

  /** Waits for pending writes (before exit). */
  flush(): Promise<unknown> {
    return this.#writing;
  }

  async #append(line: string): Promise<void> {
    await mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    await appendFile(this.#file, this.#torn ? `\n${line}` : line, { mode: 0o600 });
    this.#torn = false;
    this.#lines += 1;
    if (this.#lines > FILE_MAX_LINES) {
      const all = (await readFile(this.#file, "utf8")).split("\n").filter((l) => l.trim() !== "");
      const kept = all.slice(-FILE_KEEP_LINES);
      const temp = `${this.#file}.${process.pid}.tmp`;
      await writeFile(temp, `${kept.join("\n")}\n`, { mode: 0o600 });
      await rename(temp, this.#file);
      this.#lines = kept.length;
    }
  }
}
