/**
 * Session access for the file store: one JSON document beside the session
 * logs (`<dir>/sessions/access.json`), replaced atomically on each change.
 * Changes are serialised in this process; a data directory has one host.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { errorMessage } from "@yoi/manifest/errors";
import { fsyncDir } from "./durable-fs.ts";
import { SessionLogError } from "./session-error.ts";
import { sessionsDir } from "./session-store.ts";
import type { SessionAccess, SessionAccessStore } from "./session-store-port.ts";

type AccessTable = Record<string, { owner?: string; members?: string[] }>;

export class FileSessionAccess implements SessionAccessStore {
  readonly #file: string;
  #queue: Promise<unknown> = Promise.resolve();

  /** `dir`: the data directory of the sessions. */
  constructor(options: { dir: string }) {
    this.#file = path.join(sessionsDir(options.dir), "access.json");
  }

  async get(id: string): Promise<SessionAccess> {
    const entry = (await this.#read())[id];
    return { owner: entry?.owner, members: [...(entry?.members ?? [])] };
  }

  setOwner(id: string, owner: string): Promise<void> {
    return this.#change((table) => {
      table[id] = { ...table[id], owner };
    });
  }

  grant(id: string, member: string): Promise<void> {
    return this.#change((table) => {
      const entry = table[id] ?? {};
      const members = entry.members ?? [];
      if (!members.includes(member)) table[id] = { ...entry, members: [...members, member] };
    });
  }

  async visibleTo(user: string): Promise<Set<string>> {
    const table = await this.#read();
    return new Set(
      Object.entries(table)
        .filter(([, entry]) => entry.owner === user || entry.members?.includes(user))
        .map(([id]) => id),
    );
  }

  async #read(): Promise<AccessTable> {
    let text: string;
    try {
      text = await readFile(this.#file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw new SessionLogError("io", `cannot read ${this.#file}: ${errorMessage(error)}`, {
        path: this.#file,
        cause: error,
      });
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
        return parsed as AccessTable;
    } catch {}
    throw new SessionLogError(
      "io",
      `${this.#file} is not a JSON object; restore it from a backup or remove it (every session then has no owner)`,
      { path: this.#file },
    );
  }

  #change(edit: (table: AccessTable) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const table = await this.#read();
      edit(table);
      const dir = path.dirname(this.#file);
      await mkdir(dir, { recursive: true });
      const temp = `${this.#file}.${process.pid}.tmp`;
      await writeFile(temp, `${JSON.stringify(table)}\n`, { mode: 0o600 });
      await rename(temp, this.#file);
      await fsyncDir(dir);
    });
    this.#queue = next.catch(() => {});
    return next;
  }
}
