/**
 * A repository's `.yoi/config.jsonc` is written by whoever wrote the
 * repository. Settings there that widen what yoi may do — permission rules
 * that allow, a looser default or mode, turning the bash sandbox off or its
 * network on, providers (a base URL would receive your API key), scope
 * roots, the session directory, MCP servers and hooks (both run commands)
 * — apply only once you trust the project
 * (rules that deny or ask apply always: they only take power away):
 * interactive `yoi` asks once per content of those settings; print mode
 * ignores them (said on stderr) unless YOI_TRUST_PROJECT=1.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { loadConfig, sandboxSettings } from "@yoi/manifest";
import { PERMISSION_DEFAULTS } from "@yoi/pod";
import type { CliConfig } from "./session-setup.ts";

/** What an untrusted project file sets that widens yoi's reach. */
export interface ProjectSettings {
  /** The project config file. */
  file: string;
  /** Project directory the trust is recorded for. */
  root: string;
  /** Hash of those settings: trust is per content, so a change asks again. */
  hash: string;
  /** One line per setting, for the question. */
  lines: string[];
}

const SENSITIVE = ["providers", "scope", "session", "mcpServers", "hooks"] as const;

/** The sensitive settings the project file sets, or undefined when it sets none. */
export function sensitiveProjectSettings(cli: CliConfig): ProjectSettings | undefined {
  const file = cli.loaded.files.find((f) => path.dirname(path.dirname(f)) === cli.cwd);
  if (file === undefined) return undefined;
  const fromProject = Object.entries(cli.sources)
    .filter(([, source]) => source === file)
    .map(([key]) => key);
  const lines: string[] = [];
  const value = (key: string) => lookup(cli.config, key);
  for (const key of fromProject) {
    if (SENSITIVE.some((s) => key === s || key.startsWith(`${s}.`) || key.startsWith(`${s}[`))) {
      const v =
        key.endsWith(".headers") || key.includes(".headers.")
          ? "<headers>"
          : key.startsWith("mcpServers.") && (key.endsWith(".env") || key.includes(".env."))
            ? "<env>"
            : JSON.stringify(value(key));
      lines.push(`${key} = ${v}`);
    }
  }
  cli.config.permissions.rules.forEach((rule, i) => {
    if (rule.action === "allow" && fromProject.includes(`permissions.rules[${i}]`))
      lines.push(`permissions: allow ${rule.tool}${rule.match ? ` "${rule.match}"` : ""}`);
  });
  const mode = cli.config.permissions.mode;
  if (fromProject.includes("permissions.mode") && mode !== "default" && mode !== "plan")
    lines.push(`permissions: start in ${mode} mode`);
  const sandbox = sandboxSettings(cli.config.sandbox);
  if (fromProject.some((k) => k === "sandbox" || k.startsWith("sandbox."))) {
    if (!sandbox.enabled) lines.push("sandbox: off (bash runs unconfined)");
    else if (sandbox.network) lines.push("sandbox: network allowed");
  }
  for (const [tool, action] of Object.entries(cli.config.permissions.default)) {
    const key = fromProject.find((k) => k.startsWith("permissions.default") && k.endsWith(formatKey(tool)));
    if (key !== undefined && action === "allow" && PERMISSION_DEFAULTS[tool] !== "allow") {
      lines.push(`permissions: ${tool} allowed by default`);
    }
  }
  if (lines.length === 0) return undefined;
  const hash = createHash("sha256").update(lines.join("\n")).digest("hex");
  return { file, root: cli.cwd, hash, lines };
}

function formatKey(tool: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(tool) ? `.${tool}` : `[${JSON.stringify(tool)}]`;
}

function lookup(config: unknown, key: string): unknown {
  const parts = key.match(/[^.[\]"]+/g) ?? [];
  let at: unknown = config;
  for (const p of parts) at = at && typeof at === "object" ? (at as Record<string, unknown>)[p] : undefined;
  return at;
}

/** In the user's own `~/.yoi`: never a directory the project's config could choose. */
function trustFile(homeDir: string): string {
  return path.join(homeDir, ".yoi", "trusted-projects.json");
}

async function readTrust(homeDir: string): Promise<Record<string, string>> {
  try {
    const parsed = JSON.parse(await readFile(trustFile(homeDir), "utf8")) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export async function isTrusted(homeDir: string, settings: ProjectSettings): Promise<boolean> {
  return (await readTrust(homeDir))[settings.root] === settings.hash;
}

export async function rememberTrust(homeDir: string, settings: ProjectSettings): Promise<void> {
  const all = await readTrust(homeDir);
  all[settings.root] = settings.hash;
  const file = trustFile(homeDir);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

/**
 * The config with the project file's sensitive settings replaced by what the
 * user's own file, the environment and the flags say (the project's other
 * settings stay).
 */
export async function withoutProjectSettings(
  cli: CliConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CliConfig> {
  // The same sources minus the project file: home as the project directory reads only ~/.yoi.
  const base = await loadConfig({ cwd: cli.homeDir, homeDir: cli.homeDir, env });
  const config = structuredClone(cli.config);
  const sources = { ...cli.sources };
  const projectFile = sensitiveFile(cli);
  config.permissions = structuredClone(base.config.permissions);
  config.sandbox = structuredClone(base.config.sandbox);
  config.session = { ...base.config.session };
  config.scope = {};
  config.mcpServers = structuredClone(base.config.mcpServers);
  config.hooks = structuredClone(base.config.hooks);
  for (const key of Object.keys(sources))
    if (key.startsWith("permissions.rules") || key === "sandbox" || key.startsWith("sandbox."))
      delete sources[key];
  for (const [key, source] of Object.entries(base.sources))
    if (key.startsWith("permissions.rules") || key === "sandbox" || key.startsWith("sandbox."))
      sources[key] = source;
  // The project's deny and ask rules stay: they only take power away.
  cli.config.permissions.rules.forEach((rule, i) => {
    const source = cli.sources[`permissions.rules[${i}]`];
    if (source === undefined || source !== projectFile || rule.action === "allow") return;
    if (config.permissions.rules.length === 0) delete sources["permissions.rules"];
    sources[`permissions.rules[${config.permissions.rules.length}]`] = source;
    config.permissions.rules.push(rule);
  });
  // So do its per-tool defaults that are stricter than the user's.
  const kept = new Set<string>();
  const strictness = { allow: 0, ask: 1, deny: 2 } as const;
  for (const [tool, action] of Object.entries(cli.config.permissions.default)) {
    const key = `permissions.default${formatKey(tool)}`;
    if (cli.sources[key] !== projectFile) continue;
    const userAction = config.permissions.default[tool] ?? config.permissions.default["*"] ?? "ask";
    if (strictness[action] <= strictness[userAction]) continue;
    config.permissions.default[tool] = action;
    kept.add(key);
  }
  const providers: typeof config.providers = {};
  for (const [name, provider] of Object.entries(cli.config.providers)) {
    const keys = Object.keys(cli.sources).filter(
      (k) => k.startsWith(`providers.${name}.`) || k.startsWith(`providers[${JSON.stringify(name)}]`),
    );
    if (!keys.some((k) => cli.sources[k] === projectFile)) {
      providers[name] = provider;
      continue;
    }
    const kept = base.config.providers[name];
    // Fields the user set on the command line or in the environment stay.
    const userSet = keys.filter((k) => /^(flag:|env:)/.test(cli.sources[k] ?? ""));
    if (kept === undefined && userSet.length === 0) continue;
    const merged: Record<string, unknown> = { ...structuredClone(kept ?? { kind: provider.kind }) };
    for (const k of userSet) {
      const field = k.slice(k.lastIndexOf(".") + 1);
      merged[field] = (provider as Record<string, unknown>)[field];
    }
    providers[name] = merged as (typeof config.providers)[string];
  }
  config.providers = providers;
  for (const key of Object.keys(sources)) {
    if (key.startsWith("permissions.rules[") || kept.has(key)) continue; // kept above: they only tighten
    if (
      sources[key] === projectFile &&
      /^(permissions|providers|scope|session|sandbox|mcpServers|hooks)\b/.test(key)
    ) {
      sources[key] = base.sources[key] ?? "default (project setting ignored)";
    }
  }
  const dataDir = config.session.dir ?? path.join(cli.homeDir, ".yoi");
  return { ...cli, config, sources, dataDir };
}

function sensitiveFile(cli: CliConfig): string | undefined {
  return cli.loaded.files.find((f) => path.dirname(path.dirname(f)) === cli.cwd);
}
