/**
 * What a model can take, applied to a request before any adapter sees it:
 * a setting the model cannot take is dropped with an `unsupported_setting`
 * warning instead of being sent to fail with a 400. Pure: the capabilities
 * come from the manifest catalog (`findModel`), looked up by the caller.
 * The client applies this once per `stream` call, for every provider, so an
 * adapter can rely on a request that fits its model.
 */
import type { ModelCapabilities } from "@yoi/manifest";
import type { ContentPart, Item, ProviderName } from "./item.ts";
import type { ClientWarning, Request, RequestSettings } from "./request.ts";

export interface CapabilityResult {
  /** The request to send (the input object itself when nothing was dropped). */
  request: Request;
  warnings: ClientWarning[];
}

/**
 * Drops what `model` cannot take. `capabilities` undefined (a model missing
 * from the catalog, e.g. on an OpenAI-compatible server) sends the settings
 * as given. Provider-wide rules (a parameter an API does not take at all)
 * live in that provider's adapter.
 */
export function applyCapabilities(
  provider: ProviderName,
  model: string,
  capabilities: ModelCapabilities | undefined,
  request: Request,
): CapabilityResult {
  const warnings: ClientWarning[] = [];
  const warn = (setting: string, message: string) =>
    warnings.push({ code: "unsupported_setting", message, detail: { provider, model, setting } });
  const settings: RequestSettings = { ...(request.settings ?? {}) };
  let tools = request.tools;
  let items = request.items;

  if (capabilities) {
    const reasoning = settings.reasoning;
    if (reasoning && (reasoning.effort !== undefined || reasoning.budgetTokens !== undefined)) {
      if (capabilities.reasoning === "none") {
        delete settings.reasoning;
        warn("reasoning", `${model} does not reason; settings.reasoning was not sent`);
      } else if (capabilities.reasoning === "effort" && reasoning.budgetTokens !== undefined) {
        settings.reasoning = { ...reasoning };
        delete settings.reasoning.budgetTokens;
        warn(
          "reasoning.budgetTokens",
          `${model} takes a reasoning effort, not a token budget; budgetTokens was not sent (use reasoning.effort)`,
        );
      } else if (capabilities.reasoning === "budget" && reasoning.effort !== undefined) {
        settings.reasoning = { ...reasoning };
        delete settings.reasoning.effort;
        warn(
          "reasoning.effort",
          `${model} takes a reasoning token budget, not an effort; effort was not sent (use reasoning.budgetTokens)`,
        );
      }
    }
    if (settings.parallelToolCalls !== undefined && !capabilities.parallelTools) {
      if (settings.parallelToolCalls) {
        warn("parallelToolCalls", `${model} cannot call tools in parallel; parallelToolCalls was not sent`);
      }
      delete settings.parallelToolCalls;
    }
    if (tools && tools.length > 0 && !capabilities.tools) {
      warn("tools", `${model} cannot call tools; ${tools.length} tool definition(s) were not sent`);
      tools = undefined;
    }
    if (!capabilities.vision) {
      const stripped = withoutImages(items, model);
      if (stripped.count > 0) {
        items = stripped.items;
        warn("image", `${model} does not accept images; ${stripped.count} image(s) were replaced by a note`);
      }
    }
    const openAIReasoning =
      (provider === "openai-chat" || provider === "openai-responses") && capabilities.reasoning === "effort";
    if (openAIReasoning) {
      for (const key of ["temperature", "topP"] as const) {
        if (settings[key] !== undefined) {
          delete settings[key];
          warn(key, `${model} is a reasoning model and rejects ${key}; it was not sent`);
        }
      }
    }
  }

  if (warnings.length === 0) return { request, warnings };
  const next: Request = { ...request, items, settings };
  if (tools === undefined) delete next.tools;
  else next.tools = tools;
  return { request: next, warnings };
}

function withoutImages(items: Item[], model: string): { items: Item[]; count: number } {
  let count = 0;
  const out = items.map((item) => {
    if (item.type === "tool_result" && item.images?.length) {
      count += item.images.length;
      const { images, ...rest } = item;
      return {
        ...rest,
        output: `${item.output}\n[${images.length} image(s) omitted: ${model} does not accept images]`,
      };
    }
    if (item.type !== "message" || !item.content.some((p) => p.type === "image")) return item;
    const content: ContentPart[] = item.content.map((part) => {
      if (part.type !== "image") return part;
      count++;
      return { type: "text", text: `[image omitted: ${model} does not accept images]` };
    });
    return { ...item, content };
  });
  return { items: out, count };
}
