/**
 * The `web_search` tool: the provider's own web search (Anthropic's web
 * search tool, OpenAI Responses `web_search`, Gemini Google Search
 * grounding), offered as a server tool of the request where the model's
 * provider has one. It runs at the provider while the response streams, so
 * there is no call of ours to stop and ask about: the permission is decided
 * before each request, and only an allow (a rule, the config's default, or
 * bypassPermissions) offers it. Where the answer would be "ask" it is not
 * offered (docs/design/web-search.md#permissions-decided-before-the-request).
 */
import type { BeforeRequestInfo, Interceptor, RequestAction } from "@yoi/llm-worker";
import { WEB_SEARCH_TOOL_NAME } from "@yoi/manifest";
import type { PermissionPolicy } from "../permissions/policy.ts";

export { WEB_SEARCH_TOOL_NAME };

export interface WebSearchOfferOptions {
  /** The server tool for the model in use, or undefined where it has none (read per request). */
  serverTool: () => Record<string, unknown> | undefined;
  permissions: PermissionPolicy;
}

/**
 * An interceptor that adds the web search server tool to each request the
 * permissions allow it on: evaluated per request, so a mode switch or a
 * `/model` switch takes effect on the next one.
 */
export function webSearchOffer(options: WebSearchOfferOptions): Interceptor {
  return {
    name: WEB_SEARCH_TOOL_NAME,
    async beforeRequest(info: BeforeRequestInfo): Promise<RequestAction | undefined> {
      const tool = options.serverTool();
      if (tool === undefined) return undefined;
      const decision = await options.permissions.evaluate(WEB_SEARCH_TOOL_NAME, {});
      if (decision.action !== "allow") return undefined;
      return {
        action: "continue",
        request: { ...info.request, serverTools: [...(info.request.serverTools ?? []), tool] },
      };
    },
  };
}
