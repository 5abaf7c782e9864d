/**
 * The zod input schema of every built-in tool, by tool name: what
 * `pnpm gen:tool-schemas` turns into json-schemas.generated.ts, and what
 * test/tool-json-schemas.test.ts checks that file against.
 *
 * Each is wrapped in `z.lazy`, so it is built when a call's arguments are
 * first parsed, not when the module loads: the request sends the generated
 * JSON Schema, and building the tools' zod schemas took some 3 ms of every
 * session's way to its first request.
 */
import type * as z from "zod";
import { skillInput } from "../extensions/skills.ts";
import { bashInput } from "./bash.ts";
import { editFileInput } from "./edit-file.ts";
import { globInput } from "./glob.ts";
import { grepInput } from "./grep.ts";
import { listDirInput } from "./list-dir.ts";
import { readFileInput } from "./read-file.ts";
import { taskInput } from "./task.ts";
import { todoWriteInput } from "./todo-write.ts";
import { webFetchInput } from "./web-fetch.ts";
import { writeFileInput } from "./write-file.ts";

export const TOOL_INPUT_SCHEMAS: Record<string, z.ZodType> = {
  read_file: readFileInput,
  list_dir: listDirInput,
  glob: globInput,
  grep: grepInput,
  write_file: writeFileInput,
  edit_file: editFileInput,
  bash: bashInput,
  web_fetch: webFetchInput,
  todo_write: todoWriteInput,
  task: taskInput,
  skill: skillInput,
};
