/**
 * `/init`: the request that asks the model to write the project's
 * AGENTS.md, the file the pod then reads into every session's system prompt
 * (codex, opencode and pi read the same file; Claude Code's `/init` writes
 * CLAUDE.md, which yoi reads where there is no AGENTS.md).
 */

/**
 * The message sent for `/init`. `focus` is whatever the user typed after the
 * command (e.g. `/init mention the release process`).
 */
export function initPrompt(focus = ""): string {
  const lines = [
    "Write an AGENTS.md file at the project root: the instructions every future session on this project will start with.",
    "",
    "First look around: list the top-level files, read the README, the package manifests and build files, the CI configuration and a few representative source and test files. If AGENTS.md or CLAUDE.md already exists, read it and improve it instead of starting over, keeping what is still true.",
    "",
    "Then write AGENTS.md with write_file. Keep it short (well under 200 lines) and specific to this project:",
    "- what the project is, in two or three sentences, and how the code is laid out (the main directories and what lives where);",
    "- the exact commands to install, build, run, lint and test, including how to run a single test;",
    "- the conventions a newcomer would get wrong: code style, naming, error handling, how tests are written, dependency rules;",
    "- anything to be careful about (generated files, secrets, slow or flaky steps).",
    "Only state what you saw in the repository; do not invent commands or rules. No generic advice that fits every project.",
  ];
  const extra = focus.trim();
  if (extra !== "") lines.push("", `The user also asked: ${extra}`);
  lines.push("", "When it is written, say in one or two sentences what you put in it.");
  return lines.join("\n");
}
