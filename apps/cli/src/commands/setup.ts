/**
 * `yoi setup`: choose a provider, type its API key (never shown), check it
 * with one 1-token request to the provider's base URL, and save it in
 * `~/.yoi/credentials.json` (0600). Also offered by interactive `yoi` on a
 * first run without a key. `yoi logout` removes saved keys. A key in the
 * environment still wins over a saved one.
 */
import * as readline from "node:readline";
import { createModelClient, userMessage } from "@yoi/llm-client";
import {
  builtinProvider,
  credentialsFile,
  isCustomServer,
  type ProviderInfo,
  providerOfKind,
  removeCredentials,
  saveCredential,
  withModel,
} from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import type { Command } from "../args.ts";
import { usageError } from "../cli-error.ts";
import { describeFailure } from "../describe-error.ts";
import { EXIT } from "../exit-codes.ts";
import { type CliConfig, loadProjectConfig } from "../session-setup.ts";
import { colorEnabled, createStyle, type Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { wrapWords, writeLines } from "../text-width.ts";

/** The providers `yoi setup` offers, in the order shown. */
export const SETUP_PROVIDERS: readonly ProviderInfo[] = ["anthropic", "openai", "gemini"].map(
  (name) => builtinProvider(name) as ProviderInfo,
);

/** How long the check of a key may take. */
const CHECK_TIMEOUT_MS = 30_000;

export async function setupCommand(command: Extract<Command, { kind: "setup" }>): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw usageError(
      "yoi setup asks for the key without showing it, so it needs a terminal; in a script, set the provider's variable instead (ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY)",
    );
  }
  const provider = command.provider === undefined ? undefined : setupProvider(command.provider);
  const style = createStyle(colorEnabled(process.stdout));
  const cli = await loadProjectConfig(command.flags, { trust: {} });
  return (await runSetup(cli, style, provider)) ? EXIT.ok : EXIT.error;
}

export async function logoutCommand(command: Extract<Command, { kind: "logout" }>): Promise<number> {
  const provider = command.provider === undefined ? undefined : setupProvider(command.provider);
  const cli = await loadProjectConfig(command.flags, { trust: {} }).catch(() => undefined);
  const homeDir = cli?.homeDir ?? (process.env.HOME as string);
  const removed = await removeCredentials(homeDir, provider === undefined ? undefined : [provider.apiKeyEnv]);
  const file = credentialsFile(homeDir);
  if (removed.length === 0) {
    writeLines(
      provider === undefined
        ? `no saved keys (${file} does not exist)`
        : `no saved key for ${provider.name} in ${file}`,
    );
    return EXIT.ok;
  }
  writeLines(`removed the saved key${removed.length === 1 ? "" : "s"} ${removed.join(", ")} from ${file}`);
  return EXIT.ok;
}

/** The row of a provider name `--provider` gave, or a usage error listing the choices. */
export function setupProvider(name: string): ProviderInfo {
  const row = SETUP_PROVIDERS.find((p) => p.name === name);
  if (row === undefined)
    throw usageError(
      `--provider must be one of ${SETUP_PROVIDERS.map((p) => p.name).join(", ")}; got "${name}"`,
    );
  return row;
}

/**
 * The set-up conversation on the terminal: the provider (unless given), the
 * key without echo, the check, the save. Resolves true when a key was saved.
 */
export async function runSetup(cli: CliConfig, style: Style, given?: ProviderInfo): Promise<boolean> {
  const provider = given ?? (await chooseProvider(style));
  if (provider === undefined) {
    writeLines(style.dim("set-up cancelled; nothing saved"));
    return false;
  }
  const key = await readHidden(
    `${style.bold(`${provider.name} API key`)} ${style.dim("(typing is not shown; Enter ends)")}: `,
  );
  if (key === undefined || key.trim() === "") {
    writeLines(
      style.dim(key === undefined ? "set-up cancelled; nothing saved" : "no key typed; nothing saved"),
    );
    return false;
  }
  const base = cli.config.providers[provider.name]?.baseURL;
  writeLines(style.dim(`checking the key with a 1-token request to ${base ?? `${provider.name}'s API`}…`));
  const problem = await checkKey(cli, provider, key.trim());
  if (problem !== undefined) {
    writeLines(
      `${style.red("✗")} ${sanitizeLine(problem)}\n${style.dim("nothing saved; run yoi setup to try again")}`,
    );
    return false;
  }
  await saveCredential(cli.homeDir, provider.apiKeyEnv, key.trim());
  writeLines(
    `${style.green("✓")} ${provider.name} accepted the key; saved to ${credentialsFile(cli.homeDir)} (readable only by you; yoi logout removes it)`,
  );
  if (process.env[provider.apiKeyEnv]?.trim())
    writeLines(
      style.yellow(`! ${provider.apiKeyEnv} is set in your environment: it wins over the saved key`),
    );
  return true;
}

/** Asks which provider; undefined on Ctrl-C, Ctrl-D or an answer that names none. */
async function chooseProvider(style: Style): Promise<ProviderInfo | undefined> {
  writeLines(`${style.bold("Which provider's key do you have?")}`);
  SETUP_PROVIDERS.forEach((p, i) => {
    writeLines(`  ${i + 1}) ${p.name} ${style.dim(`(${p.apiKeyEnv}, default model ${p.defaultModel})`)}`);
  });
  for (;;) {
    const answer = await question(`provider [1-${SETUP_PROVIDERS.length}, default 1] › `);
    if (answer === undefined) return undefined;
    const text = answer.trim().toLowerCase();
    const picked =
      text === ""
        ? SETUP_PROVIDERS[0]
        : (SETUP_PROVIDERS[Number(text) - 1] ?? SETUP_PROVIDERS.find((p) => p.name === text));
    if (picked !== undefined) return picked;
    writeLines(
      style.yellow(
        `"${sanitizeLine(answer)}" is not one of them: type 1 to ${SETUP_PROVIDERS.length} or a name`,
      ),
    );
  }
}

/** One line typed with echo; undefined on Ctrl-C or Ctrl-D. */
function question(prompt: string): Promise<string | undefined> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  return new Promise<string | undefined>((resolve) => {
    let answered = false;
    rl.question(prompt, (answer) => {
      answered = true;
      resolve(answer);
      rl.close();
    });
    rl.once("SIGINT", () => {
      process.stdout.write("\n");
      rl.close();
    });
    rl.once("close", () => {
      if (!answered) resolve(undefined);
    });
  });
}

/**
 * A line typed without echo (a key): nothing of it is drawn. Enter ends;
 * Backspace takes the last character back; a bracketed paste arrives
 * whole; Ctrl-C or Ctrl-D resolve undefined.
 */
function readHidden(prompt: string): Promise<string | undefined> {
  const input = process.stdin;
  // Laid out between words like the rest (the answer is typed after its last row, unseen).
  const columns = process.stdout.columns;
  const rows = columns === undefined ? [prompt.trimEnd()] : wrapWords(prompt.trimEnd(), columns - 1);
  process.stdout.write(`${rows.join("\n")} `);
  return new Promise<string | undefined>((resolve) => {
    let typed = "";
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    const finish = (value: string | undefined) => {
      input.off("data", onData);
      input.setRawMode(wasRaw);
      input.pause();
      process.stdout.write("\n");
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      // Escape sequences (bracketed paste markers, arrows) carry no part of a key.
      const text = chunk.toString("utf8").replace(/\x1b\[[0-9;?]*[~A-Za-z]/g, "");
      for (const ch of text) {
        if (ch === "\r" || ch === "\n") return finish(typed);
        if (ch === "\x03" || ch === "\x04") return finish(undefined);
        if (ch === "\x7f" || ch === "\b") typed = typed.slice(0, -1);
        else if (ch >= " ") typed += ch;
      }
    };
    input.on("data", onData);
  });
}

/**
 * Sends one request of one output token with `key` to the provider's
 * server (its base URL from the config or the environment) on its default
 * model; undefined when it was accepted, else what went wrong (the key
 * never in it).
 */
async function checkKey(cli: CliConfig, provider: ProviderInfo, key: string): Promise<string | undefined> {
  const ref = `${provider.name}/${provider.defaultModel}`;
  const env = { ...process.env, [provider.apiKeyEnv]: key };
  let client: ReturnType<typeof createModelClient>;
  let baseURL: string | undefined;
  try {
    const chosen = withModel(cli, { ref, env });
    baseURL = chosen.config.providers[provider.name]?.baseURL;
    client = createModelClient(chosen.config, { env });
  } catch (error) {
    return errorMessage(error);
  }
  const context = {
    provider: provider.name,
    model: provider.defaultModel,
    ...(baseURL !== undefined ? { baseURL } : {}),
    keyEnv: "the key you typed",
    baseURLEnv: providerOfKind(provider.kind).baseURLEnv,
    customServer: isCustomServer(provider.kind, baseURL),
    secrets: [key],
  };
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    for await (const event of client.stream(
      { items: [userMessage("Reply with OK.")], settings: { maxTokens: 1 } },
      { signal },
    )) {
      if (event.type === "error") {
        return describeFailure(
          {
            code: event.code,
            message: event.message,
            retryable: event.retryable,
            ...(event.status !== undefined ? { status: event.status } : {}),
          },
          context,
        );
      }
      if (event.type === "status" && event.status === "cancelled")
        return `${provider.name} did not answer within ${CHECK_TIMEOUT_MS / 1000} s`;
    }
  } catch (error) {
    return describeFailure({ code: "internal", message: errorMessage(error), retryable: false }, context);
  }
  return undefined;
}
